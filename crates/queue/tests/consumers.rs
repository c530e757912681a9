//! Consumers left behind by processes that are gone (consumer names carry the process id, so
//! every restart leaves one) are deleted from their group once idle
//! [`queue::QueueConfig::idle_consumer_after`] while holding nothing; a consumer that holds a
//! lease stays, however long it has been since it read.

use std::time::{Duration, Instant};

use queue::contract::contract_config;
use queue::{Queue, QueueConfig, RedisQueue, TaskMessage};

/// The consumers of the kind's group: (name, pending).
async fn consumers(conn: &mut redis::aio::MultiplexedConnection, kind: &str) -> Vec<(String, i64)> {
    let v: Vec<redis::Value> = redis::cmd("XINFO").arg("CONSUMERS").arg(format!("prover:q:{kind}")).arg("workers").query_async(conn).await.unwrap();
    v.into_iter()
        .map(|c| {
            let fields: std::collections::HashMap<String, redis::Value> = redis::from_redis_value(c).unwrap();
            (redis::from_redis_value(fields["name"].clone()).unwrap(), redis::from_redis_value(fields["pending"].clone()).unwrap())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_consumers_holding_nothing_are_deleted() {
    let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
        eprintln!("skipping: PROVER_TEST_REDIS_URL not set");
        return;
    };
    let kind = format!("t.reap.{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    // A second kind, served by the same claims: one maintenance call reaps both groups.
    let kind2 = format!("{kind}.b");
    // Leases of a minute (the held one never expires here), and consumers idle 2 s holding
    // nothing go.
    let limit = Duration::from_secs(2);
    let q = RedisQueue::connect(&url, QueueConfig { visibility_timeout: Duration::from_secs(60), idle_consumer_after: limit, ..contract_config() })
        .await
        .unwrap();
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();

    // A process that worked once and went away, and one that holds a lease.
    let before_ghost = Instant::now();
    q.enqueue(&kind, TaskMessage::new("j", "t1", "{}")).await.unwrap();
    let done = q.claim(&kind, "ghost-41", Duration::from_secs(5)).await.unwrap().expect("delivered");
    q.complete(&done).await.unwrap();
    q.enqueue(&kind2, TaskMessage::new("j", "t1b", "{}")).await.unwrap();
    let done = q.claim(&kind2, "ghost-41", Duration::from_secs(5)).await.unwrap().expect("delivered");
    q.complete(&done).await.unwrap();
    q.enqueue(&kind, TaskMessage::new("j", "t2", "{}")).await.unwrap();
    let held = q.claim(&kind, "holder-42", Duration::from_secs(5)).await.unwrap().expect("delivered");
    let names = |c: &[(String, i64)]| c.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert!(names(&consumers(&mut admin, &kind).await).contains(&"ghost-41".to_string()));

    // A live consumer's claims run the maintenance; the holder reads nothing more.
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        assert!(q.claim_any(&[&kind, &kind2], "live-43", Duration::from_millis(100)).await.unwrap().is_none());
        let now = consumers(&mut admin, &kind).await;
        let now2 = consumers(&mut admin, &kind2).await;
        if !names(&now).contains(&"ghost-41".to_string()) {
            assert!(!names(&now2).contains(&"ghost-41".to_string()), "reaped in one group, not the other: {now2:?}");
            // Deleted only once idle the limit: its last read came after `before_ghost`.
            assert!(before_ghost.elapsed() >= limit, "deleted after {:?}", before_ghost.elapsed());
            assert!(now.contains(&("holder-42".to_string(), 1)), "the consumer holding a lease was deleted: {now:?}");
            // (live-43 never read an entry: Redis 7.0 makes no consumer for an empty read.)
            break;
        }
        assert!(Instant::now() < deadline, "the idle consumer was never deleted: {now:?}");
    }
    // The holder's lease still completes, and a deleted consumer that comes back reads again.
    q.complete(&held).await.expect("the held lease completes");
    q.enqueue(&kind, TaskMessage::new("j", "t3", "{}")).await.unwrap();
    let again = q.claim(&kind, "ghost-41", Duration::from_secs(5)).await.unwrap().expect("delivered to a deleted consumer's name");
    q.complete(&again).await.unwrap();
}

/// One consumer at a time reaps a kind's expired leases and promotes its retries: the
/// maintenance lease (field `lease:{kind}` of `prover:autoclaim`) names the consumer that took
/// it and until when. Another consumer's claims leave the kind alone until the holder's lease
/// runs out (the holder here stops claiming, as a crashed process does); then it takes the
/// lease over, and the task the holder left is still redelivered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_consumer_at_a_time_reaps_a_kind() {
    let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
        return;
    };
    let kind = format!("t.lead.{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    // Leases of 2 s: maintenance every 500 ms, its lease 1.5 s.
    let q = RedisQueue::connect(&url, QueueConfig { visibility_timeout: Duration::from_secs(2), ..contract_config() }).await.unwrap();
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let holder = |v: Option<String>| -> (String, u64) {
        let v = v.expect("a maintenance lease");
        let (who, until) = v.rsplit_once(' ').unwrap();
        (who.to_string(), until.parse().unwrap())
    };
    let field = format!("lease:{kind}");

    q.enqueue(&kind, TaskMessage::new("j", "t1", "{}")).await.unwrap();
    let first = q.claim(&kind, "gone-1", Duration::from_secs(5)).await.unwrap().expect("delivered");
    let (who, gone_until) = holder(redis::cmd("HGET").arg("prover:autoclaim").arg(&field).query_async(&mut admin).await.unwrap());
    assert_eq!(who, "gone-1", "the first claim took the kind's maintenance lease");

    // gone-1 never claims or completes again.
    let deadline = Instant::now() + Duration::from_secs(120);
    // After each of live-2's claims, who holds the lease: the first time it is live-2, it was
    // taken 1.5 s before its end, which must be past gone-1's end.
    let mut taken_at = None;
    let again = loop {
        let got = q.claim(&kind, "live-2", Duration::from_millis(200)).await.unwrap();
        let (who, until) = holder(redis::cmd("HGET").arg("prover:autoclaim").arg(&field).query_async(&mut admin).await.unwrap());
        if who == "live-2" && taken_at.is_none() {
            taken_at = Some(until - 1500);
        }
        if let Some(l) = got {
            break l;
        }
        assert!(Instant::now() < deadline, "the abandoned task was never redelivered");
    };
    assert_eq!((again.task.task_id.as_str(), again.consumer.as_str()), ("t1", "live-2"));
    assert!(again.token > first.token, "a redelivery gets a newer fencing token");
    let taken_at = taken_at.expect("live-2 took the lease over");
    assert!(taken_at >= gone_until, "taken over at {taken_at} ms, while gone-1 held it until {gone_until}");
    q.complete(&again).await.unwrap();
}

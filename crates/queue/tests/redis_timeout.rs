//! Redis reply timeouts: a server pause longer than redis-rs's own default (500 ms) is waited
//! out by a queue with the default settings (heartbeats, completions and enqueues do not fail
//! for it), while a queue given a shorter timeout fails, which shows the pause was real. Its own
//! test binary: the pause holds every client of the server.

use std::time::Duration;

use queue::contract::contract_config;
use queue::{Queue, RedisQueue, TaskMessage};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_pause_is_waited_out_with_the_default_timeout() {
    let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
        eprintln!("skipping: PROVER_TEST_REDIS_URL not set");
        return;
    };
    assert!(queue::DEFAULT_REDIS_TIMEOUT_SECS >= 5, "the default is several seconds");
    let kind = format!("t.pause.{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let q = RedisQueue::connect(&url, contract_config()).await.unwrap();
    let short = RedisQueue::connect_opts(&url, contract_config(), false, Duration::from_millis(200)).await.unwrap();
    q.enqueue(&kind, TaskMessage::new("j", "t1", "{}")).await.unwrap();
    let lease = q.claim(&kind, "w", Duration::from_secs(5)).await.unwrap().expect("delivered");
    short.stats(&kind).await.expect("both queues answer before the pause");
    // Every client's commands wait 1.5 s from here (the command itself answers at once).
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("CLIENT").arg("PAUSE").arg(1500).query_async(&mut admin).await.unwrap();
    let (heartbeat, enqueued, cut) =
        tokio::join!(q.extend(&lease), q.enqueue(&kind, TaskMessage::new("j", "t2", "{}")), short.stats(&kind));
    heartbeat.expect("the heartbeat waits the pause out");
    enqueued.expect("the enqueue waits the pause out");
    assert!(cut.is_err(), "a 200 ms timeout does not wait out a 1.5 s pause");
    q.complete(&lease).await.unwrap();
    let next = q.claim(&kind, "w", Duration::from_secs(5)).await.unwrap().expect("the enqueue went in");
    assert_eq!(next.task.task_id, "t2");
    q.complete(&next).await.unwrap();
}

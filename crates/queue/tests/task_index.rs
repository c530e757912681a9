//! The Redis queue's per-job task index (`prover:tasks:{job}`) against what the queue holds:
//! a message deleted behind the scripts' back is not believed (its member is checked and
//! dropped), and a purge reads the job's index, never the queue (a message the index does not
//! list, as one enqueued by a version before it, is left where it is; the walk in
//! `Queue::outstanding` still sees it, which is what the reconciler confirms with).

use queue::contract::contract_config;
use queue::{FailOutcome, Queue, RedisQueue, TaskMessage};

async fn setup() -> Option<(RedisQueue, redis::aio::MultiplexedConnection, String)> {
    let url = match std::env::var("PROVER_TEST_REDIS_URL") {
        Ok(u) => u,
        Err(_) => {
            assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
            return None;
        }
    };
    let q = RedisQueue::connect(&url, contract_config()).await.expect("connect");
    let admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let id = uuid::Uuid::new_v4().simple().to_string();
    Some((q, admin, format!("t.index.{}", &id[..12])))
}

async fn members(admin: &mut redis::aio::MultiplexedConnection, job: &str) -> Vec<String> {
    let mut m: Vec<String> = redis::cmd("SMEMBERS").arg(format!("prover:tasks:{job}")).query_async(admin).await.unwrap();
    m.sort();
    m
}

/// An entry `XDEL`ed and a retry `ZREM`ed by hand: the index still names them, but
/// `job_has_tasks` and `job_tasks` check each member, say nothing is left, and drop both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn messages_deleted_behind_the_scripts_are_not_believed() {
    let Some((q, mut admin, kind)) = setup().await else { return };
    let job = format!("stale-{kind}");
    q.enqueue(&kind, TaskMessage::new(&job, "a", "{}")).await.unwrap();
    q.enqueue(&kind, TaskMessage::new(&job, "b", "{}")).await.unwrap();
    let l = q.claim(&kind, "w", std::time::Duration::from_millis(50)).await.unwrap().expect("a");
    assert!(matches!(q.fail(&l, "boom").await.unwrap(), FailOutcome::Retried { .. }));
    let m = members(&mut admin, &job).await;
    assert_eq!(m.len(), 2, "one waiting entry, one retry: {m:?}");
    let entry = m.iter().find_map(|m| m.strip_prefix(&format!("{kind} ")).filter(|r| !r.starts_with('{'))).expect("the entry").to_string();
    let retry = m.iter().find_map(|m| m.strip_prefix(&format!("{kind} ")).filter(|r| r.starts_with('{'))).expect("the retry").to_string();
    assert!(q.job_has_tasks(&job).await.unwrap());
    let n: u64 = redis::cmd("XDEL").arg(format!("prover:q:{kind}")).arg(&entry).query_async(&mut admin).await.unwrap();
    assert_eq!(n, 1);
    assert!(q.job_has_tasks(&job).await.unwrap(), "the retry is still there");
    assert_eq!(q.job_tasks(&kind, &job).await.unwrap(), 1);
    assert_eq!(members(&mut admin, &job).await.len(), 1, "the deleted entry's member dropped");
    let n: u64 = redis::cmd("ZREM").arg(format!("prover:delayed:{kind}")).arg(&retry).query_async(&mut admin).await.unwrap();
    assert_eq!(n, 1);
    assert!(!q.job_has_tasks(&job).await.unwrap(), "both deleted");
    let exists: u64 = redis::cmd("EXISTS").arg(format!("prover:tasks:{job}")).query_async(&mut admin).await.unwrap();
    assert_eq!(exists, 0, "the emptied index is gone");
}

/// 3,000 messages of other jobs and one of this job that the index does not list (a raw
/// `XADD`): `purge_all` removes the job's two indexed messages (one waiting, one delayed) and
/// leaves the unlisted one, which only a walk of the queue finds. Before the index, a purge
/// walked the queue and took all three.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_purge_reads_the_jobs_index_not_the_queue() {
    let Some((q, mut admin, kind)) = setup().await else { return };
    let job = format!("purge-{kind}");
    q.enqueue(&kind, TaskMessage::new(&job, "delayed", "{}")).await.unwrap();
    let l = q.claim(&kind, "w", std::time::Duration::from_millis(50)).await.unwrap().expect("the first message");
    assert!(matches!(q.fail(&l, "boom").await.unwrap(), FailOutcome::Retried { .. }));
    let others: Vec<TaskMessage> = (0..3_000).map(|i| TaskMessage::new(format!("other-{}-{kind}", i % 7), format!("o{i}"), "{}")).collect();
    assert_eq!(q.enqueue_once_many(&kind, others).await.unwrap(), 3_000);
    q.enqueue(&kind, TaskMessage::new(&job, "indexed", "{}")).await.unwrap();
    let unlisted = serde_json::to_string(&TaskMessage::new(&job, "unlisted", "{}")).unwrap();
    let _: String = redis::cmd("XADD").arg(format!("prover:q:{kind}")).arg("*").arg("m").arg(&unlisted).query_async(&mut admin).await.unwrap();
    assert_eq!(q.outstanding(&kind).await.unwrap()[&job], 3, "the walk sees all three");
    assert_eq!(q.job_tasks(&kind, &job).await.unwrap(), 2, "the index lists two");
    assert_eq!(q.purge_all(&job).await.unwrap(), 2);
    assert!(!q.job_has_tasks(&job).await.unwrap());
    assert_eq!(q.outstanding(&kind).await.unwrap()[&job], 1, "the unlisted message is left");
    let s = q.stats(&kind).await.unwrap();
    assert_eq!((s.pending, s.delayed), (3_001, 0), "{s:?}");
    for i in 0..7 {
        assert!(q.job_has_tasks(&format!("other-{i}-{kind}")).await.unwrap());
        q.purge_all(&format!("other-{i}-{kind}")).await.unwrap();
    }
    assert_eq!(q.stats(&kind).await.unwrap().pending, 1, "only the unlisted one");
    let _: u64 = redis::cmd("DEL").arg(format!("prover:q:{kind}")).query_async(&mut admin).await.unwrap();
}

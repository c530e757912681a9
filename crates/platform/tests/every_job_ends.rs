//! Every job ends, and nothing is done twice: faults cut into planning, the last lease of a task
//! expires, a read hangs, a heartbeat is lost. In-process backends wrapped by fault injectors
//! (`common::faults`).

use std::sync::Arc;
use std::time::Duration;

mod common;

use common::faults::{FirstRead, FlakyQueue, SlowStore};
use platform::{JobOutcome, JobRequest, Leaves, Platform};
use queue::{Queue, QueueConfig};
use tokio::sync::watch;

fn start(p: &Arc<Platform>, workers: usize) -> watch::Sender<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("executor".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("aggregator".into(), rx.clone()));
    for i in 0..workers {
        tokio::spawn(p.clone().run_worker(format!("worker-{i}"), rx.clone()));
    }
    tx
}

/// A safety net, not a timing assertion: a job that never ends fails the test instead of
/// hanging it.
async fn outcome(p: &Platform, job: &str) -> JobOutcome {
    tokio::time::timeout(Duration::from_secs(120), p.wait(job, |_| {})).await.expect("the job never ended")
}

fn reckle_request() -> JobRequest {
    let values: Vec<u64> = (0..16).map(|i| i * 1000 + 7).collect();
    JobRequest::ReckleBatch { log_n: 4, log_bucket: 2, batch: vec![1, 6, 13], leaves: Leaves::Inline(values) }
}

/// The enqueue of the second bucket task fails once: the submission still succeeds and the job
/// completes with exactly one copy of every task.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn planning_cut_half_way_completes_with_one_copy_of_each_task() {
    let (q, blobs, store, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let flaky = Arc::new(FlakyQueue::new(q, "reckle.leaf", 2, false));
    let p = Platform::new(flaky.clone(), blobs, store);
    let (job, created) = p.submit(reckle_request(), None).await.expect("the submission is recorded");
    assert!(created);
    let stop = start(&p, 2);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
    let leaves = flaky.copies("reckle.leaf");
    assert_eq!(leaves.len(), 3, "one task per bucket: {leaves:?}");
    assert!(leaves.values().all(|n| *n == 1), "a bucket task was enqueued twice: {leaves:?}");
    assert!(flaky.copies("reckle.node").values().all(|n| *n == 1));
}

/// A worker claims the only task of a job and vanishes; the lease expires on the last attempt,
/// the task is dead-lettered, and the job fails with the reason instead of staying running.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_lettered_lease_fails_its_job() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_millis(300), max_attempts: 1, ..QueueConfig::default() };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let p = Platform::new(q.clone(), blobs, store);
    let (job, _) = p.submit(JobRequest::Noop { tasks: 1 }, None).await.unwrap();
    let stop = start(&p, 1);
    // The doomed worker: claims and never completes (it may have to wait for planning).
    let lease = loop {
        if let Some(l) = q.claim("noop", "doomed-worker", Duration::from_millis(100)).await.unwrap() {
            break l;
        }
    };
    assert_eq!(lease.task.job_id, job);
    match outcome(&p, &job).await {
        JobOutcome::Failed(reason) => assert!(reason.contains("lease expired"), "{reason}"),
        other => panic!("expected a failed job, got {other:?}"),
    }
    let _ = stop.send(true);
}

/// The first read of the job's leaves never returns (an S3 read with no timeout): the task is
/// abandoned at its deadline and retried, and the job completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hung_read_is_abandoned_at_the_task_deadline() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(2), backoff_base: Duration::from_millis(50), ..QueueConfig::default() };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let slow: Arc<dyn blobstore::BlobStore> = Arc::new(SlowStore::new(blobs, "inputs/leaves.bin", FirstRead::Hang));
    let p = Platform::new(q, slow, store);
    let (job, _) = p.submit(reckle_request(), None).await.unwrap();
    let stop = start(&p, 2);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
}

/// The first heartbeat finds the lease gone (another worker now holds the task): the first
/// holder stops working on it, so the task's report is sent once, by the new holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_heartbeat_fails_stops_working() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_millis(600), ..QueueConfig::default() };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let flaky = Arc::new(FlakyQueue::new(q, "", 0, true));
    let slow: Arc<dyn blobstore::BlobStore> =
        Arc::new(SlowStore::new(blobs, "inputs/leaves.bin", FirstRead::Stall(Duration::from_millis(1500))));
    let p = Platform::new(flaky.clone() as Arc<dyn Queue>, slow, store);
    let (job, _) = p.submit(reckle_request(), None).await.unwrap();
    let stop = start(&p, 1);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
    let reports = flaky.copies("reckle.done");
    assert_eq!(reports.len(), 6, "{reports:?}");
    assert!(reports.values().all(|n| *n == 1), "a task was reported twice: {reports:?}");
}

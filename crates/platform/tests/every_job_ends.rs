//! Every job ends, and nothing is done twice: faults cut into planning, the last lease of a task
//! expires, a read hangs, a heartbeat is lost. In-process backends wrapped by fault injectors
//! (`common::faults`).

use std::sync::Arc;
use std::time::Duration;

mod common;

use common::faults::{FirstRead, FlakyQueue, Outage, SlowStore};
use platform::kinds::reckle::{LEAF, NODE, TREE};
use platform::{JobOutcome, Submission, Leaves, Platform, PlatformConfig};
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

fn reckle_request() -> Submission {
    let values: Vec<u64> = (0..16).map(|i| i * 1000 + 7).collect();
    platform::kinds::reckle::batch_request(4, 2, vec![1, 6, 13], Leaves::Inline(values), false)
}

/// The enqueue of the second bucket task fails once: the submission still succeeds and the job
/// completes with exactly one copy of every task.
async fn planning_cut_half_way(real: bool) {
    let Some((q, blobs, store, _dir)) = common::backends(real, QueueConfig::default()).await else { return };
    let flaky = Arc::new(FlakyQueue::new(q, "reckle.leaf", 2, None));
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
    p.blobs().delete_prefix(&format!("jobs/{job}/")).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_planning_cut_half_way_completes_with_one_copy_of_each_task() {
    planning_cut_half_way(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_planning_cut_half_way_completes_with_one_copy_of_each_task() {
    planning_cut_half_way(true).await;
}

/// A worker claims the only task of a job and vanishes; the lease expires on the last attempt,
/// the task is dead-lettered, and the job fails with the reason instead of staying running.
async fn dead_lettered_lease(real: bool) {
    let cfg = QueueConfig { visibility_timeout: Duration::from_millis(300), max_attempts: 1, ..QueueConfig::default() };
    // Its own Redis database: this queue would reclaim and bury the other tests' leases.
    let Some((q, blobs, store, _dir)) = common::backends_in_db(real, cfg, 1).await else { return };
    let p = Platform::new(q.clone(), blobs, store);
    let (job, _) = p.submit(platform::kinds::noop::request(1), None).await.unwrap();
    let stop = start(&p, 0);
    // The doomed worker: claims and never completes (it may have to wait for planning).
    let lease = loop {
        match q.claim("noop.task", "doomed-worker", Duration::from_millis(100)).await.unwrap() {
            Some(l) if l.task.job_id == job => break l,
            Some(other) => q.complete(&other).await.unwrap(), // a leftover of an earlier run
            None => {}
        }
    };
    assert_eq!(lease.task.job_id, job);
    tokio::spawn(p.clone().run_worker("worker".into(), stop.subscribe()));
    match outcome(&p, &job).await {
        JobOutcome::Failed(reason) => assert!(reason.contains("lease expired"), "{reason}"),
        other => panic!("expected a failed job, got {other:?}"),
    }
    let _ = stop.send(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_a_dead_lettered_lease_fails_its_job() {
    dead_lettered_lease(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_a_dead_lettered_lease_fails_its_job() {
    dead_lettered_lease(true).await;
}

/// The first read of the job's leaves never returns (an S3 read with no timeout): the task is
/// abandoned at its deadline and retried, and the job completes.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_hung_read_is_abandoned_at_the_task_deadline() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(2), backoff_base: Duration::from_millis(50), ..QueueConfig::default() };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let slow: Arc<dyn blobstore::BlobStore> = Arc::new(SlowStore::new(blobs, "inputs/leaves.bin", FirstRead::Hang));
    let mut config = PlatformConfig::default();
    for k in [TREE, LEAF, NODE] {
        config.deadlines.insert(k.name.to_string(), Duration::from_secs(20));
    }
    let p = Platform::with_config(q, slow, store, config);
    // Circuits first, so that the deadline bounds a task's I/O and proving, not the one-off build.
    p.circuits(reckle::Params::new(4, 2).unwrap()).await.unwrap();
    let (job, _) = p.submit(reckle_request(), None).await.unwrap();
    let stop = start(&p, 2);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
}

/// The object store is unreachable for 3 s from the first read of the job's leaves, with two
/// attempts per task and retries 50 ms apart: a task that meets the outage waits until the
/// store answers again before it spends its next attempt, so the job completes. (Failing at
/// once, every task the outage meets would be dead-lettered within ~100 ms.)
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_object_store_outage_is_waited_out() {
    let cfg = QueueConfig {
        visibility_timeout: Duration::from_secs(2),
        max_attempts: 2,
        backoff_base: Duration::from_millis(50),
        backoff_max: Duration::from_millis(50),
        ..QueueConfig::default()
    };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let outage = Arc::new(Outage::new(blobs, "inputs/leaves.bin", Duration::from_secs(3)));
    let p = Platform::new(q, outage.clone() as Arc<dyn blobstore::BlobStore>, store);
    p.circuits(reckle::Params::new(4, 2).unwrap()).await.unwrap();
    let (job, _) = p.submit(reckle_request(), None).await.unwrap();
    let stop = start(&p, 2);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
    assert!(outage.refused.load(std::sync::atomic::Ordering::SeqCst) > 0, "the outage happened");
}

/// The first heartbeat finds the lease gone (another worker now holds the task): the first
/// holder stops working on it, so the task's report is sent once, by the new holder.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_worker_whose_heartbeat_fails_stops_working() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_millis(600), ..QueueConfig::default() };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let flaky = Arc::new(FlakyQueue::new(q, "", 0, Some("reckle.tree")));
    let slow: Arc<dyn blobstore::BlobStore> =
        Arc::new(SlowStore::new(blobs, "inputs/leaves.bin", FirstRead::Stall(Duration::from_millis(1500))));
    let p = Platform::new(flaky.clone() as Arc<dyn Queue>, slow, store);
    let (job, _) = p.submit(reckle_request(), None).await.unwrap();
    let stop = start(&p, 1);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
    let reports = flaky.copies("reckle.done");
    // One report per task: the tree, the bands, 3 buckets, 3 nodes and the finish.
    assert_eq!(reports.len(), 9, "{reports:?}");
    assert!(reports.values().all(|n| *n == 1), "a task was reported twice: {reports:?}");
}

fn quick_reconciler() -> PlatformConfig {
    PlatformConfig {
        reconcile_every: Duration::from_millis(100),
        reconcile_grace: Duration::from_millis(300),
        // Long enough that a finished job's record outlives a loaded test's next look at it
        // (`Platform::wait` reads a vanished record as a failure).
        retention: Duration::from_secs(5),
        ..PlatformConfig::default()
    }
}

/// The plan task's enqueue is lost after the job was recorded (a cut SubmitJob): the reconciler
/// finds the queued job with nothing to run and enqueues its plan task again.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_lost_plan_task_is_enqueued_again() {
    let (q, blobs, store, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let flaky = Arc::new(FlakyQueue::new(q, "plan", 1, None));
    let p = Platform::with_config(flaky.clone(), blobs, store, quick_reconciler());
    let (job, _) = p.submit(platform::kinds::noop::request(3), None).await.unwrap();
    assert!(flaky.copies("plan").is_empty(), "the plan task was lost");
    let stop = start(&p, 1);
    assert_eq!(outcome(&p, &job).await, JobOutcome::Done);
    let _ = stop.send(true);
    assert_eq!(flaky.copies("plan").len(), 1);
    assert!(flaky.copies("noop.task").values().all(|n| *n == 1));
}

/// A running job's waiting tasks vanish (a Redis restart without AOF): nothing is queued,
/// running or delayed, so the reconciler fails the job with the reason instead of leaving it
/// running forever.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_job_whose_tasks_were_lost_fails_with_the_reason() {
    let (q, blobs, store, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let p = Platform::with_config(q.clone(), blobs, store.clone(), quick_reconciler());
    let (job, _) = p.submit(platform::kinds::noop::request(2), None).await.unwrap();
    let stop = start(&p, 0); // an executor plans it; no worker takes the tasks
    while q.job_tasks("noop.task", &job).await.unwrap() < 2 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(q.purge_job("noop.task", &job).await.unwrap(), 2);
    match outcome(&p, &job).await {
        JobOutcome::Failed(reason) => assert!(reason.starts_with("stalled"), "{reason}"),
        other => panic!("expected a failed job, got {other:?}"),
    }
    let _ = stop.send(true);
    // Retention: the finished job's record expires (waited for, bounded).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while store.get(&job).await.unwrap().is_some() {
        assert!(std::time::Instant::now() < deadline, "the finished job's record never expired");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A corrupt task payload is fatal: the job fails at once with the reason, on the first attempt
/// (not after `max_attempts` retries).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_corrupt_task_fails_its_job_at_once() {
    let (q, blobs, store, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let p = Platform::new(q.clone(), blobs, store);
    let (job, _) = p.submit(reckle_request(), None).await.unwrap();
    let bogus = queue::TaskMessage::new(job.clone(), "x", "not json");
    q.enqueue(NODE.name, bogus).await.unwrap();
    let stop = start(&p, 1);
    match outcome(&p, &job).await {
        JobOutcome::Failed(reason) => assert!(reason.contains("corrupt"), "{reason}"),
        other => panic!("expected a failed job, got {other:?}"),
    }
    let _ = stop.send(true);
    let s = q.stats(NODE.name).await.unwrap();
    assert_eq!((s.delayed, s.dead), (0, 0), "not retried: {s:?}");
}

/// A prove task that outlives its deadline on every attempt (a list of 1,024 Pari proofs, a
/// deadline of 300 ms): the worker abandons each attempt, and its prover stops at the next proof
/// instead of running on beside the retry. The worker (a process of its own: one loop) never
/// runs more than one prover at once, and once the job has failed (dead-lettered) no prover of
/// it runs any more. Before, each deadline left one more prover running: a worker's memory grew
/// with every deadline until the OOM killer came.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_abandoned_prover_stops_and_the_worker_runs_no_more_than_its_loops() {
    let cfg = QueueConfig { backoff_base: Duration::from_millis(10), backoff_max: Duration::from_millis(50), ..QueueConfig::default() };
    let (q, blobs, store, _dir) = common::backends(false, cfg).await.unwrap();
    let mut config = PlatformConfig::default();
    config.deadlines.insert(platform::kinds::pari::PROVE.name.to_string(), Duration::from_millis(300));
    // The planner, executor and aggregator in one process, the worker in another (sharing the
    // backends, as processes share Redis and S3).
    let p = Platform::with_config(q.clone(), blobs.clone(), store.clone(), config.clone());
    let w = Platform::with_config(q, blobs, store, config);
    // A small circuit, so that reading its key takes well under the deadline and every attempt
    // reaches its prover; many proofs, so that the list takes well over it.
    let request = platform::kinds::pari::request(pari::circuits::CircuitFamily::Chain { steps: 256 }, 1, 1024, 1024, 1024);
    let (job, _) = p.submit(request, None).await.unwrap();
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("executor".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("aggregator".into(), rx.clone()));
    tokio::spawn(w.clone().run_worker("worker".into(), rx.clone()));
    match outcome(&p, &job).await {
        JobOutcome::Failed(reason) => assert!(reason.contains("deadline"), "{reason}"),
        other => panic!("expected the job to fail at its deadlines, got {other:?}"),
    }
    let _ = stop.send(true);
    assert_eq!(w.work().peak(), 1, "provers that ran at once in a one-loop worker");
    // The last attempt's prover, abandoned too, stops at its next check.
    let mut abandoned = w.work().abandoned_changes();
    let _ = tokio::time::timeout(Duration::from_secs(120), abandoned.wait_for(|n| *n == 0)).await.expect("an abandoned prover never stopped");
    assert_eq!(w.work().running(), 0);
}

//! Endings that complete, and no destructive step on an ambiguous reply: a clean-up cut after
//! the terminal transition is finished by a later call or by the reconciler (waiting tasks
//! purged, inputs deleted, the retention taken with the transition); a create whose reply is
//! lost keeps the job's inputs; a dead-lettered task still fails its job with 10,099 dead
//! letters in the queue. Real backends (Redis, MinIO) and the in-process ones, wrapped by the
//! fault injectors of `common::faults`.

use std::sync::Arc;
use std::time::Duration;

mod common;

use bytes::Bytes;
use common::faults::{FlakyQueue, LostCreateReply};
use jobs::{JobState, JobStore};
use platform::kinds::noop;
use platform::{layout, Submission, Leaves, Platform, PlatformConfig, ReconcileState};
use queue::{Queue, QueueConfig, TaskMessage};
use tokio::sync::watch;

/// A safety net on a wait for an event, not a timing assertion.
const BOUND: Duration = Duration::from_secs(120);

async fn until<F: std::future::Future<Output = bool>>(what: &str, mut check: impl FnMut() -> F) {
    let deadline = std::time::Instant::now() + BOUND;
    while !check().await {
        assert!(std::time::Instant::now() < deadline, "{what} never happened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn executor(p: &Arc<Platform>) -> watch::Sender<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("executor".into(), rx));
    tx
}

/// A no-op job of two tasks, planned (its tasks wait: no worker runs), with a secret input such
/// as Pari, circom and Hekaton jobs have. Returns the job and its secret's key.
async fn planned_job_with_a_secret(p: &Arc<Platform>, q: &Arc<dyn Queue>) -> (String, String) {
    let (job, _) = p.submit(noop::request(2), None).await.unwrap();
    let secret = layout::input(&job, "secret.bin");
    p.blobs().put(&secret, Bytes::from_static(b"per-job randomness seed")).await.unwrap();
    let stop = executor(p);
    until("planning", || async { q.job_tasks(noop::TASK.name, &job).await.unwrap() == 2 }).await;
    let _ = stop.send(true);
    (job, secret)
}

/// The clean-up after a cancel fails (the purge of waiting tasks errors: a Redis blip, a reply
/// timeout). The job is cancelled, and stays listed as not cleaned; the user's retried
/// CancelJob finishes the clean-up: waiting tasks purged, inputs deleted. The retention was
/// taken with the transition itself, so the record expires although the first clean-up failed.
async fn a_cut_clean_up_is_finished_by_the_next_call(real: bool, db: u8) {
    let Some((q, blobs, store, _dir)) = common::backends_in_db(real, QueueConfig::default(), db).await else { return };
    let flaky: Arc<dyn Queue> = Arc::new(FlakyQueue::new(q.clone(), "", 0, None).with_failing_purges(1));
    let config = PlatformConfig { retention: Duration::from_secs(3), ..PlatformConfig::default() };
    let p = Platform::with_config(flaky, blobs, store.clone(), config);
    let (job, secret) = planned_job_with_a_secret(&p, &q).await;

    let first = p.cancel(&job).await;
    assert!(first.is_err(), "the injected purge failure: {first:?}");
    assert_eq!(store.get(&job).await.unwrap().unwrap().state, JobState::Cancelled);
    assert!(store.is_unclean(&job).await.unwrap(), "listed as ended and not cleaned");

    let rec = p.cancel(&job).await.expect("the retried cancel");
    assert_eq!(rec.state, JobState::Cancelled);
    assert!(!store.is_unclean(&job).await.unwrap(), "the clean-up was finished");
    assert_eq!(q.job_tasks(noop::TASK.name, &job).await.unwrap(), 0, "waiting tasks purged");
    assert!(!p.blobs().exists(&secret).await.unwrap(), "the job's inputs deleted");
    until("the record's expiry", || async { store.get(&job).await.unwrap().is_none() }).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_a_cut_clean_up_is_finished_by_the_next_call() {
    a_cut_clean_up_is_finished_by_the_next_call(false, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_a_cut_clean_up_is_finished_by_the_next_call() {
    a_cut_clean_up_is_finished_by_the_next_call(true, 12).await;
}

/// The process that ended a job dies before any clean-up (the transition is all that
/// happened). The reconciler finds the job ended and not cleaned, and finishes the clean-up.
async fn a_crash_after_the_ending_is_cleaned_up_by_the_reconciler(real: bool, db: u8) {
    let Some((q, blobs, store, _dir)) = common::backends_in_db(real, QueueConfig::default(), db).await else { return };
    let config = PlatformConfig {
        reconcile_every: Duration::from_millis(100),
        reconcile_grace: Duration::from_millis(300),
        retention: Duration::from_secs(3600),
        ..PlatformConfig::default()
    };
    let p = Platform::with_config(q.clone(), blobs, store.clone(), config);
    let (job, secret) = planned_job_with_a_secret(&p, &q).await;
    // The transition, and then the crash.
    assert!(store.end(&job, JobState::Failed, "task 0 failed", Duration::from_secs(3600)).await.unwrap());
    assert_eq!(q.job_tasks(noop::TASK.name, &job).await.unwrap(), 2, "nothing cleaned yet");
    let stop = executor(&p);
    until("the reconciler's clean-up", || async { !store.is_unclean(&job).await.unwrap() }).await;
    let _ = stop.send(true);
    assert_eq!(q.job_tasks(noop::TASK.name, &job).await.unwrap(), 0, "waiting tasks purged");
    assert!(!p.blobs().exists(&secret).await.unwrap(), "the job's inputs deleted");
    let rec = store.get(&job).await.unwrap().unwrap();
    assert_eq!((rec.state, rec.message.as_str()), (JobState::Failed, "task 0 failed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_a_crash_after_the_ending_is_cleaned_up_by_the_reconciler() {
    a_crash_after_the_ending_is_cleaned_up_by_the_reconciler(false, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_a_crash_after_the_ending_is_cleaned_up_by_the_reconciler() {
    a_crash_after_the_ending_is_cleaned_up_by_the_reconciler(true, 13).await;
}

fn reckle_request() -> Submission {
    let values: Vec<u64> = (0..16).map(|i| i * 1000 + 7).collect();
    platform::kinds::reckle::batch_request(4, 2, vec![1, 6, 13], Leaves::Inline(values), false)
}

/// The create script runs but its reply is lost. The planner reads the record back instead of
/// deleting the inputs of a job that exists: the job keeps its inputs, and the client's retry
/// with its idempotency key is handed that live job.
async fn an_ambiguous_create_keeps_the_inputs(real: bool, db: u8) {
    let Some((q, blobs, store, _dir)) = common::backends_in_db(real, QueueConfig::default(), db).await else { return };
    let lossy: Arc<dyn JobStore> = Arc::new(LostCreateReply::new(store.clone()));
    let p = Platform::new(q, blobs, lossy);
    let key = format!("ambiguous-{}", uuid::Uuid::new_v4().simple());
    let first = p.submit(reckle_request(), Some(&key)).await;
    let (job, created) = p.submit(reckle_request(), Some(&key)).await.expect("the retry");
    assert!(!created, "the retry names the job the first submission recorded");
    if let Ok((id, _)) = &first {
        assert_eq!(id, &job, "the first submission answered with the recorded job");
    }
    let rec = store.get(&job).await.unwrap().expect("recorded");
    assert!(!rec.state.is_terminal(), "a live job: {:?} {}", rec.state, rec.message);
    assert!(p.blobs().exists(&layout::reckle_leaves(&job)).await.unwrap(), "its inputs survive");
    p.cancel(&job).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_an_ambiguous_create_keeps_the_inputs() {
    an_ambiguous_create_keeps_the_inputs(false, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_an_ambiguous_create_keeps_the_inputs() {
    an_ambiguous_create_keeps_the_inputs(true, 14).await;
}

/// 10,099 dead letters fill the plan kind's dead-letter queue past its cap, and the reconciler
/// has read them. Then a plan task's lease expires on its last attempt and is buried: its
/// `XADD … MAXLEN ~ 10000` trims a whole stream node (100 entries; measured: 10,050 entries
/// are not trimmed at all, 10,099 + 1 leave 10,000), so the queue is shorter than before with
/// the new entry at its end. The reconciler's next round still fails the job, with the reason.
/// Before, it skipped a count of entries (10,099) from the start of the stream, which now held
/// the new one.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_letter_past_the_cap_still_fails_its_job() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_millis(300), max_attempts: 1, ..QueueConfig::default() };
    // Its own database: this queue reclaims and buries leases within 300 ms.
    let Some((q, blobs, store, _dir)) = common::backends_in_db(true, cfg, 11).await else { return };
    let p = Platform::new(q.clone(), blobs, store.clone());
    // Stream nodes of exactly 100 entries, whatever the entries' size: the server's default also
    // closes a node at 4096 bytes, which makes where `MAXLEN ~` trims depend on how long the
    // entries are (a fresh-clone run trimmed the fillers to 10,025 already). The stream is made
    // anew below, so its nodes follow this setting.
    let url = std::env::var("PROVER_TEST_REDIS_URL").unwrap();
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let node = |bytes: u64| redis::cmd("CONFIG").arg("SET").arg("stream-node-max-bytes").arg(bytes).arg("stream-node-max-entries").arg(100).clone();
    let () = node(0).query_async(&mut admin).await.unwrap();
    // Out of attempts before their first delivery: one claim buries them all.
    q.clear_dead_letters("plan").await.unwrap(); // an earlier run's
    for i in 0..10_099 {
        q.enqueue("plan", TaskMessage { failures: 1, ..TaskMessage::new(format!("gone-{i}"), "plan", "") }).await.unwrap();
    }
    assert!(q.claim("plan", "filler", Duration::ZERO).await.unwrap().is_none());
    let buried = q.stats("plan").await.unwrap();
    assert_eq!(buried.dead, 10_099, "not trimmed yet: {buried:?}");
    let mut st = ReconcileState::default();
    assert!(p.reconcile_once(&mut st).await.unwrap().failed.is_empty(), "their jobs are long gone");

    let (job, _) = p.submit(noop::request(1), None).await.unwrap();
    // An executor claims the plan task and dies.
    loop {
        match q.claim("plan", "doomed", Duration::from_millis(100)).await.unwrap() {
            Some(l) if l.task.job_id == job => break,
            Some(other) => q.complete(&other).await.unwrap(), // a leftover of an earlier run
            None => {}
        }
    }
    // Its lease expires on the last attempt: the next claim of the kind buries it.
    until("the bury", || async {
        if let Some(l) = q.claim("plan", "other", Duration::from_millis(100)).await.unwrap() {
            q.complete(&l).await.unwrap();
        }
        q.stats("plan").await.unwrap().dead_lettered > buried.dead_lettered
    })
    .await;
    let trimmed = q.stats("plan").await.unwrap().dead;
    assert!(trimmed < 10_099, "the bury trimmed the queue below what the reconciler saw: {trimmed}");
    let r = p.reconcile_once(&mut st).await.unwrap();
    assert_eq!(r.failed, vec![job.clone()]);
    let rec = store.get(&job).await.unwrap().unwrap();
    assert_eq!(rec.state, JobState::Failed);
    assert!(rec.message.contains("lease expired"), "{}", rec.message);
    let () = node(4096).query_async(&mut admin).await.unwrap(); // the server's default again
}

/// 1,100 jobs have not ended, more than the reconciler reads per page (1,000). Every job but
/// the newest has its plan task queued; the newest's was deleted (a lost task). The reconciler
/// pages through all of them and walks the plan queue once: two rounds later the newest is
/// re-driven, and no other job is touched. Before, it listed only the oldest 1,000 jobs (and
/// read the whole queue once per job), so the newest was never looked at.
async fn a_lost_job_beyond_the_first_page_is_found(real: bool, db: u8) {
    let Some((q, blobs, store, _dir)) = common::backends_in_db(real, QueueConfig::default(), db).await else { return };
    if real {
        // Its own database, emptied: the count of active jobs is the test's.
        let url = std::env::var("PROVER_TEST_REDIS_URL").unwrap();
        let url = format!("{}/{db}", url.trim_end_matches('/').trim_end_matches("/0"));
        let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
        let () = redis::cmd("FLUSHDB").query_async(&mut admin).await.unwrap();
    }
    let config = PlatformConfig { reconcile_grace: Duration::ZERO, ..PlatformConfig::default() };
    assert_eq!(config.reconcile_batch, 1000, "the page this test reaches past");
    let p = Platform::with_config(q.clone(), blobs, store.clone(), config);
    let mut jobs = Vec::new();
    for _ in 0..1_100 {
        jobs.push(p.submit(noop::request(1), None).await.unwrap().0);
    }
    let lost = jobs.last().unwrap().clone();
    assert_eq!(q.purge_job("plan", &lost).await.unwrap(), 1, "its plan task deleted");
    let mut st = ReconcileState::default();
    let first = p.reconcile_once(&mut st).await.unwrap();
    assert_eq!(first, Default::default(), "nothing acted on after one look");
    let second = p.reconcile_once(&mut st).await.unwrap();
    assert_eq!((second.redriven, second.failed), (vec![lost.clone()], vec![]));
    assert_eq!(q.job_tasks("plan", &lost).await.unwrap(), 1, "its plan task enqueued again");
    let third = p.reconcile_once(&mut st).await.unwrap();
    assert_eq!(third, Default::default(), "every job has its plan task again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_a_lost_job_beyond_the_first_page_is_found() {
    a_lost_job_beyond_the_first_page_is_found(false, 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_a_lost_job_beyond_the_first_page_is_found() {
    a_lost_job_beyond_the_first_page_is_found(true, 15).await;
}

/// The one member of `job`'s task index, its plan task (`plan {entry id}`): the entry id.
async fn plan_entry(admin: &mut redis::aio::MultiplexedConnection, job: &str) -> String {
    let members: Vec<String> = redis::cmd("SMEMBERS").arg(format!("prover:tasks:{job}")).query_async(admin).await.unwrap();
    assert_eq!(members.len(), 1, "{members:?}");
    members[0].strip_prefix("plan ").expect("a plan task").to_string()
}

/// The reconciler reads the queue's per-job task index, and does not trust it blindly. Job A's
/// plan task is deleted behind the queue's back (a raw `XDEL`, as a Redis that lost the entry
/// would): its index still lists it, and the reconciler must see through that (the member is
/// checked and dropped) and re-drive A on its second round. Job B's plan task is taken out of
/// the index and put back by a raw `XADD` (as a version before the index enqueued it): the index
/// says B has nothing, and the walk that confirms every job before it is acted on must keep B
/// alive, on every round.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_reconciler_checks_the_task_index_against_the_queue() {
    const DB: u8 = 8;
    let Some((q, blobs, store, _dir)) = common::backends_in_db(true, QueueConfig::default(), DB).await else { return };
    let url = std::env::var("PROVER_TEST_REDIS_URL").unwrap();
    let url = format!("{}/{DB}", url.trim_end_matches('/').trim_end_matches("/0"));
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let () = redis::cmd("FLUSHDB").query_async(&mut admin).await.unwrap();
    let config = PlatformConfig { reconcile_grace: Duration::ZERO, ..PlatformConfig::default() };
    let p = Platform::with_config(q.clone(), blobs, store.clone(), config);
    let (a, _) = p.submit(noop::request(1), None).await.unwrap();
    let (b, _) = p.submit(noop::request(1), None).await.unwrap();
    let id_a = plan_entry(&mut admin, &a).await;
    let deleted: u64 = redis::cmd("XDEL").arg("prover:q:plan").arg(&id_a).query_async(&mut admin).await.unwrap();
    assert_eq!(deleted, 1);
    let id_b = plan_entry(&mut admin, &b).await;
    let entry: Vec<(String, Vec<(String, String)>)> = redis::cmd("XRANGE").arg("prover:q:plan").arg(&id_b).arg(&id_b).query_async(&mut admin).await.unwrap();
    let m = entry[0].1.iter().find(|(f, _)| f == "m").expect("field m").1.clone();
    assert_eq!(q.purge_job("plan", &b).await.unwrap(), 1);
    let _: String = redis::cmd("XADD").arg("prover:q:plan").arg("*").arg("m").arg(&m).query_async(&mut admin).await.unwrap();
    assert!(!q.job_has_tasks(&a).await.unwrap(), "a deleted entry still counted");
    assert!(!q.job_has_tasks(&b).await.unwrap(), "B's raw entry is not indexed");
    let mut st = ReconcileState::default();
    assert_eq!(p.reconcile_once(&mut st).await.unwrap(), Default::default(), "nothing acted on after one look");
    let second = p.reconcile_once(&mut st).await.unwrap();
    assert_eq!((second.redriven, second.failed), (vec![a.clone()], vec![]), "A re-driven, B kept");
    assert!(q.job_has_tasks(&a).await.unwrap(), "A's new plan task is indexed");
    for round in 3..=5 {
        assert_eq!(p.reconcile_once(&mut st).await.unwrap(), Default::default(), "round {round}");
    }
    assert_eq!(store.get(&b).await.unwrap().unwrap().state, JobState::Queued);
}

/// A done job keeps its record for the retention; a failed or a cancelled one for the shorter
/// failed-job retention (a submit-and-cancel loop keeps a day of records, not a week). Read as
/// the TTL Redis holds on each record.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn failed_and_cancelled_jobs_are_kept_for_the_shorter_retention() {
    let Some((q, blobs, store, _dir)) = common::backends_in_db(true, QueueConfig::default(), 4).await else { return };
    let config = PlatformConfig { retention: Duration::from_secs(7 * 24 * 3600), failed_retention: Duration::from_secs(3600), ..PlatformConfig::default() };
    let p = Platform::with_config(q, blobs, store, config);
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(p.submit(noop::request(1), None).await.unwrap().0);
    }
    assert!(p.end(&ids[0], platform::Ending::Done).await.unwrap());
    assert!(p.end(&ids[1], platform::Ending::Failed("task 0 failed")).await.unwrap());
    p.cancel(&ids[2]).await.unwrap();
    let url = std::env::var("PROVER_TEST_REDIS_URL").unwrap();
    let url = format!("{}/4", url.trim_end_matches('/').trim_end_matches("/0"));
    let mut c = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let mut ttl = Vec::new();
    for id in &ids {
        let ms: i64 = redis::cmd("PTTL").arg(format!("prover:job:{id}")).query_async(&mut c).await.unwrap();
        ttl.push(ms);
    }
    assert!(ttl[0] > 3_600_000 && ttl[0] <= 7 * 24 * 3_600_000, "done: {ttl:?}");
    assert!(ttl[1] > 0 && ttl[1] <= 3_600_000, "failed: {ttl:?}");
    assert!(ttl[2] > 0 && ttl[2] <= 3_600_000, "cancelled: {ttl:?}");
}

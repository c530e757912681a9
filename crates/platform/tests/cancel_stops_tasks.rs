//! N2 of the platform review: cancelling a job stops its running tasks. The heartbeat only
//! extended a task's lease, so a cancelled job's tasks held their workers to the end (up to
//! their deadline: two hours for a Testudo compression), outside the tenant's active-job quota
//! and window: submit, wait until running, cancel, repeat, and one tenant held the fleet. Now
//! the heartbeat also reads the job's state and stops the task of a job that has ended.
//!
//! A test kind whose one task never ends on its own shows it: one worker loop runs the first
//! job's task while the second job's waits; the first job is cancelled; the worker must let go
//! of it and take the second's (before, it held the first until the task's deadline, an hour).

mod common;

use std::sync::Arc;
use std::time::Duration;

use api::v1 as pb;
use async_trait::async_trait;
use platform::kinds::contract::{self, Effect, Job, Kind, Planned, Progress, Report, Typed};
use platform::kinds::Pins;
use platform::{Platform, PlatformConfig, PlatformError, Registry, Served, TaskKind};
use queue::{Lease, Queue, QueueConfig};
use tokio::sync::watch;

const TASK: TaskKind = TaskKind::new("sleeper.task", Served::Worker, 3600);
const DONE: TaskKind = TaskKind::new("sleeper.done", Served::Executor, 60);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Step {
    Task,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Task];
    fn task(self) -> TaskKind {
        TASK
    }
}

/// A job of one task that waits for an event nothing sends (or, with `"quick": true` in its
/// spec, ends at once).
struct Sleeper;

/// The jobs whose waiting task has stopped (its work dropped by the worker).
static STOPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

/// Notes its job in [`STOPPED`] when the work holding it is dropped.
struct Stopped(String);

impl Drop for Stopped {
    fn drop(&mut self) {
        STOPPED.lock().unwrap().push(std::mem::take(&mut self.0));
    }
}

#[async_trait]
impl Kind for Sleeper {
    const NAME: &'static str = "sleeper";
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = serde_json::Value;

    fn from_pb(_params: &pb::submit_job_request::Params) -> Option<Result<serde_json::Value, PlatformError>> {
        None
    }
    async fn validate(&self, _p: &Platform, _tenant: &str, _spec: &mut serde_json::Value) -> Result<Planned<Step>, PlatformError> {
        Ok(Planned::tasks(vec![(Step::Task, 1)]))
    }
    fn plan(_spec: &serde_json::Value) -> Vec<Effect<Step>> {
        vec![Effect::Dispatch(Step::Task, 0..1)]
    }
    async fn work(&self, _p: &Platform, job: &Job<Self>, _step: Step, _index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        if job.spec.get("quick") == Some(&serde_json::Value::Bool(true)) {
            return Ok(String::new());
        }
        let _noted = Stopped(job.id().to_string());
        Ok(std::future::pending::<String>().await)
    }
    fn on_done(_spec: &serde_json::Value, _progress: &Progress<Step>, _report: &Report<Step>) -> Vec<Effect<Step>> {
        vec![Effect::Done]
    }
    async fn verify_outputs(&self, _p: &Platform, _job: &Job<Self>, _pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Err(PlatformError::Precondition("a sleeper job publishes no proof".into()))
    }
}

/// Polls `check` until it holds (the events here have no notification of their own).
async fn until<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..3000 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("{what}: not within a minute");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn cancelling_a_job_stops_its_running_task() {
    // A short visibility timeout: heartbeats every third of it.
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(1), ..QueueConfig::default() };
    let Some((q, blobs, jobs, _dir)) = common::backends(false, cfg).await else { return };
    let registry = Registry::builtin().with(Arc::new(Typed::new(Sleeper)));
    let p = Platform::with_config(q.clone(), blobs, jobs, PlatformConfig { registry, ..Default::default() });
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    // One task loop: while a task holds it, it takes no other.
    tokio::spawn(p.clone().run_worker_for("w".into(), &[TASK.name], rx.clone()));
    let request = || contract::spec_request::<Sleeper>(&serde_json::json!({}));
    let stats = |q: Arc<dyn Queue>| async move { q.stats(TASK.name).await.unwrap() };

    let (first, _) = p.submit(request(), None).await.unwrap();
    until("the worker runs the first job's task", || async { stats(q.clone()).await.running == 1 }).await;
    let (second, _) = p.submit(request(), None).await.unwrap();
    until("the second job's task waits", || async { q.job_tasks(TASK.name, &second).await.unwrap() == 1 }).await;
    assert_eq!(stats(q.clone()).await.pending, 1, "the second task waits while the first runs");

    p.cancel(&first).await.unwrap();
    until("the worker lets go of the cancelled job's task and runs the second's", || async {
        let s = stats(q.clone()).await;
        q.job_tasks(TASK.name, &first).await.unwrap() == 0 && s.running == 1 && s.pending == 0
    })
    .await;
    p.cancel(&second).await.unwrap();
    until("the second job's task stops too", || async { stats(q.clone()).await.running == 0 }).await;
    let _ = stop.send(true);
}

async fn state(p: &Platform, job: &str) -> jobs::JobState {
    p.job_store().get(job).await.unwrap().expect("the job is recorded").state
}

/// Issue 58, scenario (b): tenant a takes the fleet (two worker loops) with tasks that never end,
/// then loops cancel → submit while tenant b's six short jobs wait. Each cancelled task stops
/// (its work is dropped), so b's jobs are taken as the workers free up, and between b's first
/// and last claim a is claimed no more than b (counted in the queue's claim order, as the
/// fairness tests in `pari_jobs` do). Before N2's fix the cancelled tasks held both workers to
/// their deadline (an hour) and b's jobs never ran.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_cancel_loop_does_not_take_the_fleet() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(1), ..QueueConfig::default() };
    let Some((q, blobs, jobs, _dir)) = common::backends(false, cfg).await else { return };
    let log = Arc::new(common::claims::ClaimLog::new(q.clone()));
    let registry = Registry::builtin().with(Arc::new(Typed::new(Sleeper)));
    let p = Platform::with_config(log.clone(), blobs, jobs, PlatformConfig { registry, ..Default::default() });
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    for w in ["w1", "w2"] {
        tokio::spawn(p.clone().run_worker_for(w.into(), &[TASK.name], rx.clone()));
    }
    let sleeper = || contract::spec_request::<Sleeper>(&serde_json::json!({}));
    let quick = || contract::spec_request::<Sleeper>(&serde_json::json!({"quick": true}));
    let running = |q: Arc<dyn Queue>| async move { q.stats(TASK.name).await.unwrap().running };

    // a takes both workers.
    let mut a_jobs = Vec::new();
    for _ in 0..2 {
        a_jobs.push(p.submit_as("cancel-a", sleeper(), None).await.unwrap().0);
    }
    until("a's tasks hold both workers", || async { running(q.clone()).await == 2 }).await;
    let mut b_jobs = Vec::new();
    for _ in 0..6 {
        b_jobs.push(p.submit_as("cancel-b", quick(), None).await.unwrap().0);
    }
    // a loops: cancel its oldest running job, submit another, until b's jobs have all ended.
    let b_done = |p: Arc<Platform>, jobs: Vec<String>| async move {
        for j in &jobs {
            if !state(&p, j).await.is_terminal() {
                return false;
            }
        }
        true
    };
    let mut cycles = 0;
    while !b_done(p.clone(), b_jobs.clone()).await {
        let claimed = log.jobs_claimed(TASK.name);
        let oldest = a_jobs.iter().find(|j| claimed.contains(j) && !STOPPED.lock().unwrap().contains(j)).cloned();
        match oldest {
            Some(job) if !state(&p, &job).await.is_terminal() => {
                p.cancel(&job).await.unwrap();
                a_jobs.push(p.submit_as("cancel-a", sleeper(), None).await.unwrap().0);
                cycles += 1;
                assert!(cycles <= 200, "b's jobs did not end while a cycled");
            }
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
    for j in &b_jobs {
        assert_eq!(state(&p, j).await, jobs::JobState::Done, "b's job {j}");
    }
    // Every task of a's that a worker took and a cancelled is seen to stop.
    for j in &a_jobs {
        if state(&p, j).await.is_terminal() && log.jobs_claimed(TASK.name).contains(j) {
            until("a cancelled job's task stops", || async { STOPPED.lock().unwrap().contains(j) }).await;
        }
    }
    let order = log.jobs_claimed(TASK.name);
    let first = order.iter().position(|j| b_jobs.contains(j)).expect("b's tasks were claimed");
    let last = order.iter().rposition(|j| b_jobs.contains(j)).unwrap();
    let a_between = order[first..=last].iter().filter(|j| a_jobs.contains(j)).count();
    assert!(a_between <= b_jobs.len(), "a was claimed {a_between} times while b's {} jobs were: {order:?}", b_jobs.len());
    for j in a_jobs.iter().filter(|j| !STOPPED.lock().unwrap().contains(j)) {
        let _ = p.cancel(j).await;
    }
    until("no task runs", || async { running(q.clone()).await == 0 }).await;
    let _ = stop.send(true);
}

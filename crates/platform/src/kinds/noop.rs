//! No-op jobs (`noop`): `tasks` tasks that do nothing, to measure the orchestration itself (and
//! to smoke-test a deployment: `prover submit noop --tasks N` exercises every role without
//! proving anything). A task's payload is its enqueue time (µs), which its report carries back,
//! so the executor sees each task's dispatch-to-report latency (`prover_noop_latency_seconds`,
//! and [`take_latencies`] for benchmarks).
//!
//! This kind is the example of the typed contract ([`super::contract`]): this file and the
//! `NoopParams` proto message are all of it, besides its line in [`super::Registry::builtin`].

use std::sync::Mutex;

use api::v1 as pb;
use async_trait::async_trait;
use queue::Lease;

use super::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use super::{Submission, Pins, Served, TaskKind};
use crate::error::invalid;
use crate::{Platform, PlatformError};

pub const JOB: &str = "noop";
/// A task that does nothing.
pub const TASK: TaskKind = TaskKind::new("noop.task", Served::Worker, 60);
/// Its report, on an executor.
pub const DONE: TaskKind = TaskKind::new("noop.done", Served::Executor, 60);
/// Most tasks in one job.
pub const MAX_TASKS: u64 = 1_000_000;

/// The steps of a no-op job: one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Task,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Task];
    fn task(self) -> TaskKind {
        match self {
            Step::Task => TASK,
        }
    }
}

/// A no-op job as recorded.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct NoopSpec {
    pub tasks: u64,
}

/// The in-process request for `tasks` no-op tasks.
pub fn request(tasks: u64) -> Submission {
    contract::spec_request::<Noop>(&NoopSpec { tasks })
}

impl crate::Platform {
    /// `(enqueued, reported)` times in µs of the no-op tasks this process's executors have seen
    /// since the last call (orchestration benchmarks).
    pub fn take_noop_latencies() -> Vec<(u64, u64)> {
        take_latencies()
    }
}

static LATENCIES: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

fn now_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

/// `(enqueued, reported)` times in µs of the no-op tasks this process's executors have seen
/// since the last call.
pub fn take_latencies() -> Vec<(u64, u64)> {
    std::mem::take(&mut *LATENCIES.lock().expect("mutex"))
}

/// `noop`.
pub struct Noop;

#[async_trait]
impl Kind for Noop {
    const NAME: &'static str = JOB;
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = NoopSpec;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<NoopSpec, PlatformError>> {
        match params {
            pb::submit_job_request::Params::Noop(n) => Some(Ok(NoopSpec { tasks: n.tasks })),
            _ => None,
        }
    }

    fn check(spec: &NoopSpec) -> Result<(), PlatformError> {
        if spec.tasks == 0 || spec.tasks > MAX_TASKS {
            return Err(invalid("tasks", format!("must be in 1..={MAX_TASKS}, got {}", spec.tasks)));
        }
        Ok(())
    }

    async fn validate(&self, _p: &Platform, _tenant: &str, spec: &mut NoopSpec) -> Result<Planned<Step>, PlatformError> {
        Ok(Planned::tasks(vec![(Step::Task, spec.tasks)]))
    }

    fn plan(spec: &NoopSpec) -> Vec<Effect<Step>> {
        vec![Effect::Dispatch(Step::Task, 0..spec.tasks)]
    }

    /// The enqueue time, stamped when the task is sent.
    fn payload(_spec: &NoopSpec, _step: Step, _index: u64, _cause: Option<&Report<Step>>) -> String {
        now_us().to_string()
    }

    async fn work(&self, _p: &Platform, _job: &Job<Self>, _step: Step, _index: u64, lease: &Lease) -> Result<String, PlatformError> {
        Ok(lease.task.payload.clone())
    }

    fn observe(report: &Report<Step>) {
        if let Ok(t0) = report.payload.parse::<u64>() {
            let now = now_us();
            ::metrics::histogram!("prover_noop_latency_seconds").record(now.saturating_sub(t0) as f64 / 1e6);
            LATENCIES.lock().expect("mutex").push((t0, now));
        }
    }

    fn on_done(_spec: &NoopSpec, progress: &Progress<Step>, _report: &Report<Step>) -> Vec<Effect<Step>> {
        if progress.complete(Step::Task) {
            vec![Effect::Done]
        } else {
            Vec::new()
        }
    }

    async fn verify_outputs(&self, _p: &Platform, _job: &Job<Self>, _pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Err(super::no_proof(JOB))
    }

    fn expected_secs() -> u64 {
        60
    }

    fn limits() -> Vec<crate::limit::Limit> {
        vec![crate::limit::Limit::new(JOB, "tasks", MAX_TASKS, "count", "tasks of the job")]
    }
}

#[cfg(test)]
mod tests {
    //! The state machine without Redis: the pure functions of the contract.

    use std::collections::BTreeMap;

    use super::*;

    fn progress(done: u64, total: u64) -> Progress<Step> {
        Progress::new(BTreeMap::from([(TASK.name.to_string(), jobs::TaskCounts { total, done })]))
    }

    fn report(index: u64) -> Report<Step> {
        Report { step: Step::Task, index, payload: String::new() }
    }

    #[test]
    fn the_plan_dispatches_every_task() {
        assert_eq!(Noop::plan(&NoopSpec { tasks: 3 }), vec![Effect::Dispatch(Step::Task, 0..3)]);
    }

    #[test]
    fn the_job_is_done_with_its_last_report_and_not_before() {
        let spec = NoopSpec { tasks: 3 };
        assert_eq!(Noop::on_done(&spec, &progress(1, 3), &report(0)), vec![]);
        assert_eq!(Noop::on_done(&spec, &progress(2, 3), &report(2)), vec![]);
        assert_eq!(Noop::on_done(&spec, &progress(3, 3), &report(1)), vec![Effect::Done]);
        // The last report delivered again says the same: ending is idempotent.
        assert_eq!(Noop::on_done(&spec, &progress(3, 3), &report(1)), vec![Effect::Done]);
    }

    #[test]
    fn steps_are_found_by_their_task_kind_and_names_do_not_collide() {
        use contract::Step as _;
        assert_eq!(Step::of("noop.task"), Some(Step::Task));
        assert_eq!(Step::of(JOB), None);
        assert!(Noop::task_kinds().iter().all(|t| t.name != JOB));
    }
}

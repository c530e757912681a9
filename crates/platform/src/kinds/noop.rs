//! No-op jobs (`noop`): `tasks` tasks that do nothing, to measure the orchestration itself. A
//! task's payload is its enqueue time (µs), so the executor sees each task's dispatch-to-report
//! latency (`prover_noop_latency_seconds`, and [`take_latencies`] for benchmarks).

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;
use jobs::JobRecord;
use queue::Lease;

use super::{JobKind, JobRequest, Served, TaskKind, Validated};
use crate::error::invalid;
use crate::{Platform, PlatformError};

pub const JOB: &str = "noop";
pub const NOOP: TaskKind = TaskKind::new("noop", Served::Worker, 60);
pub const DONE: TaskKind = TaskKind::new("noop.done", Served::Executor, 60);
const TASKS: &[TaskKind] = &[NOOP, DONE];
/// Tasks the plan dispatches per call.
const PLAN_CHUNK: u64 = 500;
/// Most tasks in one job.
pub const MAX_TASKS: u64 = 1_000_000;

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

#[derive(serde::Serialize, serde::Deserialize)]
struct Spec {
    tasks: u64,
}

/// `noop`.
pub struct Noop;

#[async_trait]
impl JobKind for Noop {
    fn name(&self) -> &'static str {
        JOB
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        TASKS
    }

    async fn validate(&self, _p: &Platform, request: JobRequest) -> Result<Validated, PlatformError> {
        let JobRequest::Noop { tasks } = request else {
            return Err(PlatformError::Config("noop: not a no-op request".into()));
        };
        if tasks == 0 || tasks > MAX_TASKS {
            return Err(invalid("tasks", format!("must be in 1..={MAX_TASKS}, got {tasks}")));
        }
        Ok(Validated {
            spec: serde_json::to_string(&Spec { tasks }).map_err(crate::error::corrupt)?,
            inputs: Vec::new(),
            tasks: BTreeMap::from([(NOOP.name, tasks)]),
            secrets: Vec::new(),
        })
    }

    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        let spec: Spec = serde_json::from_str(&job.spec).map_err(|e| PlatformError::Corrupt(format!("job {} spec: {e}", job.id)))?;
        // In chunks, each stamped when it is sent (the payload is the enqueue time).
        let mut next = 0;
        while next < spec.tasks {
            let end = (next + PLAN_CHUNK).min(spec.tasks);
            let t0 = now_us().to_string();
            p.dispatch_many(&job.id, NOOP, (next..end).map(|i| (i.to_string(), t0.clone()))).await?;
            next = end;
        }
        Ok(())
    }

    async fn work(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        p.report(lease, DONE).await
    }

    async fn on_done(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        if let Ok(t0) = lease.task.payload.parse::<u64>() {
            let now = now_us();
            ::metrics::histogram!("prover_noop_latency_seconds").record(now.saturating_sub(t0) as f64 / 1e6);
            LATENCIES.lock().expect("mutex").push((t0, now));
        }
        if p.job_store().task_done(job, NOOP.name, &lease.task.task_id).await? {
            let rec = p.record(job).await?;
            let c = rec.tasks.get(NOOP.name).copied().unwrap_or_default();
            if c.done == c.total {
                p.job_done(job).await?;
            }
        }
        Ok(())
    }

    async fn verify_outputs(&self, _p: &Platform, _job: &JobRecord, _pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Err(super::no_proof(self.name()))
    }
    fn scratch_prefixes(&self, _job: &str) -> Vec<String> {
        Vec::new()
    }
    fn expected_secs(&self) -> u64 {
        60
    }
}

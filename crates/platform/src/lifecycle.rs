//! How a job ends: [`Platform::end`] is the one place a job reaches `done`, `failed` or
//! `cancelled`. The move itself is the job store's ([`jobs::JobState::can_move`] is the table
//! both stores apply, so a terminal state is final and of two callers ending the same job only
//! one moves it). The caller that moved it then does what ending means:
//!
//! | ending | waiting tasks | enqueue-once record | intermediate objects | retention |
//! |---|---|---|---|---|
//! | [`Ending::Done`] | none are left (its last task published) | forgotten | kept by the kind | started |
//! | [`Ending::Failed`] | purged | forgotten | left to `prover admin gc` | started |
//! | [`Ending::Cancelled`] | purged | forgotten | deleted ([`crate::kinds::JobKind::scratch_prefixes`]) | started |
//!
//! and counts it (`prover_jobs_total{outcome}`, `prover_job_duration_seconds` for done jobs).
//! Each clean-up step is idempotent, and a call cut half-way leaves a job that has ended with
//! some of its waiting tasks: their claims find the job ended and do nothing.

use jobs::{JobError, JobState};

use crate::{Platform, PlatformError};

/// How a job ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ending<'a> {
    /// Its outputs are published.
    Done,
    /// With the reason (a task's fatal error, a dead letter, a stall).
    Failed(&'a str),
    /// By its owner, with the reason recorded.
    Cancelled(&'a str),
}

impl Ending<'_> {
    fn state(self) -> (JobState, &'static str) {
        match self {
            Ending::Done => (JobState::Done, "done"),
            Ending::Failed(_) => (JobState::Failed, "failed"),
            Ending::Cancelled(_) => (JobState::Cancelled, "cancelled"),
        }
    }

    fn message(&self) -> &str {
        match self {
            Ending::Done => "",
            Ending::Failed(m) | Ending::Cancelled(m) => m,
        }
    }
}

impl Platform {
    /// Ends `job` (see the module doc). True if this call ended it; false if it had ended
    /// before. A job that does not exist is an error, except for [`Ending::Failed`]: a failure
    /// found for a job whose record has expired (a late dead letter) has nothing left to end.
    pub async fn end(&self, job: &str, how: Ending<'_>) -> Result<bool, PlatformError> {
        let (state, outcome) = how.state();
        match self.job_store().transition(job, state, how.message()).await {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(JobError::NotFound(_)) if matches!(how, Ending::Failed(_)) => return Ok(false),
            Err(e) => return Err(e.into()),
        }
        self.count_end(job, outcome).await;
        match how {
            Ending::Done => tracing::info!(job, "job done"),
            Ending::Failed(reason) => tracing::warn!(job, reason, "job failed"),
            Ending::Cancelled(reason) => tracing::info!(job, reason, "job cancelled"),
        }
        if !matches!(how, Ending::Done) {
            for k in self.registry().task_kinds() {
                self.queue().purge_job(k.name, job).await?;
            }
        }
        self.queue().forget_job(job).await?;
        if matches!(how, Ending::Cancelled(_)) {
            let rec = self.record(job).await?;
            self.delete_scratch(&rec.kind, job).await?;
        }
        self.job_store().expire(job, self.config.retention).await?;
        Ok(true)
    }

    /// `end(job, Ending::Failed(reason))`, for callers that only fail jobs.
    pub async fn fail_job(&self, job: &str, reason: &str) -> Result<(), PlatformError> {
        self.end(job, Ending::Failed(reason)).await.map(|_| ())
    }

    /// Counts a job that reached a final state.
    async fn count_end(&self, job: &str, outcome: &'static str) {
        let rec = self.job_store().get(job).await.ok().flatten();
        let kind = rec.as_ref().map(|r| r.kind.clone()).unwrap_or_else(|| "unknown".into());
        ::metrics::counter!("prover_jobs_total", "kind" => kind.clone(), "outcome" => outcome).increment(1);
        if outcome == "done" {
            if let Some(r) = rec {
                let secs = jobs::now_ms().saturating_sub(r.created_ms) as f64 / 1e3;
                ::metrics::histogram!("prover_job_duration_seconds", "kind" => kind).record(secs);
            }
        }
    }
}

impl Platform {
    /// Deletes the intermediate objects of `job`, of job kind `kind`
    /// ([`crate::kinds::JobKind::scratch_prefixes`]): when it is cancelled, and again whenever a
    /// task or report of the cancelled job turns up (a worker may have written an object after
    /// the first clean-up).
    pub(crate) async fn delete_scratch(&self, kind: &str, job: &str) -> Result<(), PlatformError> {
        if let Some(kind) = self.registry().job_kind(kind).cloned() {
            for prefix in kind.scratch_prefixes(job) {
                self.blobs().delete_prefix(&prefix).await?;
            }
        }
        Ok(())
    }
}

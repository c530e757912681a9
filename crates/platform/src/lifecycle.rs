//! How a job ends: [`Platform::end`] is the one place a job reaches `done`, `failed` or
//! `cancelled`. The move itself is the job store's ([`jobs::JobState::can_move`] is the table
//! both stores apply, so a terminal state is final and of two callers ending the same job only
//! one moves it), and in the same atomic step ([`jobs::JobStore::end`]) the job's record, task
//! state and idempotency key get their retention and the job is listed as **ended, not
//! cleaned** ([`jobs::JobStore::unclean`]). Then comes the clean-up ([`Platform::clean_up`]):
//!
//! | ending | waiting tasks | enqueue-once record | intermediate objects and inputs | retention |
//! |---|---|---|---|---|
//! | [`Ending::Done`] | none are left (its last task published) | forgotten | deleted, but what later jobs read ([`crate::kinds::JobKind::kept_when_done`]) | taken with the move |
//! | [`Ending::Failed`] | purged | forgotten | deleted ([`crate::kinds::JobKind::scratch_prefixes`] and `inputs/`) | taken with the move |
//! | [`Ending::Cancelled`] | purged | forgotten | deleted ([`crate::kinds::JobKind::scratch_prefixes`] and `inputs/`) | taken with the move |
//!
//! Inputs hold per-job secrets (the randomness seeds of Pari, circom and Hekaton jobs) and
//! witnesses: none stays in the bucket after its job, whatever the ending. The one exception is
//! what a later job legitimately reads of a done job:
//!
//! | job kind | kept after `done` | why |
//! |---|---|---|
//! | `reckle.batch`, `reckle.update` | `inputs/leaves.bin`, `nodes/`, `tree/` | a `reckle.update` on this job reads its leaves (applying the changes to them), copies the node proofs it keeps and the tree pieces no change touches (`kinds::reckle`, `plan_update`); Reckle jobs have no secret input |
//! | every other kind | nothing | its published outputs (`proof/`, registered circuits, Hekaton keys) are written outside the deleted prefixes |
//!
//! The clean-up starts only once the ending is durable ([`jobs::JobStore::make_durable`],
//! `--redis-durability`): a job is never left `running` in Redis with its scratch deleted.
//! The clean-up is keyed on "ended and not cleaned", not on who won the move: each step is
//! idempotent and the job leaves the unclean list only when all of them succeeded. A clean-up
//! cut by an error, a reply timeout or a crash is finished by the next `end` of the job (a
//! retried report or CancelJob) or by the reconciler, which sweeps jobs ended for longer than
//! `reconcile_grace` and still unclean ([`crate::reconcile`]). A worker that writes an object
//! of an ended job after its clean-up (a copy of a task that ran on) has it deleted again when
//! its report arrives ([`Platform::live`]).
//!
//! Each ending is counted (`prover_jobs_total{outcome}`, `prover_job_duration_seconds` for done
//! jobs) by the call that moved the job.

use jobs::{JobError, JobRecord, JobState};

use crate::{layout, Platform, PlatformError};

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
    /// before (a clean-up left unfinished then is finished now). A job that does not exist is
    /// an error, except for [`Ending::Failed`]: a failure found for a job whose record has
    /// expired (a late dead letter) has nothing left to end.
    pub async fn end(&self, job: &str, how: Ending<'_>) -> Result<bool, PlatformError> {
        let (state, outcome) = how.state();
        let retention = match how {
            Ending::Done => self.config.retention,
            Ending::Failed(_) | Ending::Cancelled(_) => self.config.failed_retention.min(self.config.retention),
        };
        let moved = match self.job_store().end(job, state, how.message(), retention).await {
            Ok(moved) => moved,
            Err(JobError::NotFound(_)) if matches!(how, Ending::Failed(_)) => return Ok(false),
            Err(e) => return Err(e.into()),
        };
        if moved {
            self.count_end(job, outcome).await;
            match how {
                Ending::Done => tracing::info!(job, "job done"),
                Ending::Failed(reason) => tracing::warn!(job, reason, "job failed"),
                Ending::Cancelled(reason) => tracing::info!(job, reason, "job cancelled"),
            }
        } else if !self.job_store().is_unclean(job).await? {
            return Ok(false);
        }
        self.clean_up(job).await?;
        Ok(moved)
    }

    /// `end(job, Ending::Failed(reason))`, for callers that only fail jobs.
    pub async fn fail_job(&self, job: &str, reason: &str) -> Result<(), PlatformError> {
        self.end(job, Ending::Failed(reason)).await.map(|_| ())
    }

    /// The clean-up after `job` ended (see the module doc): its waiting tasks purged (unless
    /// it is done: none are left), its enqueue-once record forgotten, its intermediate objects
    /// and inputs deleted; then it is marked cleaned. Every step is idempotent, so a call cut
    /// half-way is finished by the next. A job that has not ended is left alone.
    pub async fn clean_up(&self, job: &str) -> Result<(), PlatformError> {
        let Some(rec) = self.job_store().get(job).await? else {
            // Expired meanwhile: nothing says what it was; its objects are gc's.
            return Ok(self.job_store().mark_cleaned(job).await?);
        };
        if !rec.state.is_terminal() {
            return Ok(());
        }
        // The ending is made durable before anything of the job is deleted (S1 of the platform
        // review): were Redis to lose its last second after the deletes, a done job would come
        // back `running`, its redelivered last task would find its proofs gone, and the job
        // would end `failed` with its proof published. Not confirmed: an error, the job stays
        // unclean and the next `end` or the reconciler's sweep finishes the clean-up.
        self.job_store()
            .make_durable()
            .await
            .map_err(|e| PlatformError::Jobs(JobError::Backend(format!("job {job} ended, but that is not confirmed durable ({e}): its clean-up waits for a retry"))))?;
        if rec.state != JobState::Done {
            // O(the job's messages): the queue's per-job task index, not a walk of each kind.
            self.queue().purge_all(job).await?;
        }
        self.queue().forget_job(job).await?;
        self.delete_ended_objects(&rec).await?;
        self.job_store().mark_cleaned(job).await?;
        tracing::debug!(job, "clean-up after the ending done");
        Ok(())
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
    /// Deletes the intermediate objects and the inputs of `rec`, a job that has ended
    /// ([`crate::kinds::JobKind::scratch_prefixes`] and `inputs/`), except, for a done job, what
    /// its kind keeps for later jobs ([`crate::kinds::JobKind::kept_when_done`]). Run by the
    /// clean-up, and again whenever a task or report of the ended job turns up (a worker may
    /// have written an object after the clean-up).
    pub(crate) async fn delete_ended_objects(&self, rec: &JobRecord) -> Result<(), PlatformError> {
        if !rec.state.is_terminal() {
            return Ok(());
        }
        let Some(kind) = self.registry().job_kind(&rec.kind).cloned() else { return Ok(()) };
        let keep = if rec.state == JobState::Done { kind.kept_when_done(&rec.id) } else { Vec::new() };
        let mut prefixes = kind.scratch_prefixes(&rec.id);
        let inputs = layout::inputs_prefix(&rec.id);
        if !prefixes.contains(&inputs) {
            prefixes.push(inputs);
        }
        // A kept entry ending in '/' is a prefix, any other one a key.
        let kept = |key: &str| keep.iter().any(|k| if k.ends_with('/') { key.starts_with(k.as_str()) } else { key == k });
        for prefix in prefixes {
            if keep.iter().any(|k| k.ends_with('/') && prefix.starts_with(k.as_str())) {
                continue; // all of it is kept
            }
            if !keep.iter().any(|k| k.starts_with(&prefix)) {
                self.blobs().delete_prefix(&prefix).await?;
                continue;
            }
            for key in self.blobs().list(&prefix).await? {
                if !kept(&key) {
                    self.blobs().delete(&key).await?;
                }
            }
        }
        Ok(())
    }
}

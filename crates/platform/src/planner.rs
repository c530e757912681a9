//! The planner: one submit skeleton for every job kind, and the durable `plan` task.
//!
//! [`Platform::submit`] validates the request with its kind ([`crate::kinds::JobKind::validate`];
//! nothing is written for a refused request), stores the inputs under `jobs/<id>/inputs/`,
//! records the job (state `queued`, with its planned task counts and the idempotency key) and
//! enqueues one `plan` task, then returns. Each step is safe to cut: inputs without a record
//! are unreferenced objects (`prover admin gc` collects them); a record whose plan task was never
//! enqueued is found by the reconciler ([`crate::reconcile`]) and its plan task enqueued again.
//! Inputs are deleted only after a definite refusal of the record (a limit, an idempotency
//! conflict): a backend error on the create is ambiguous (the record may exist, its reply lost),
//! so the record is read back: if it exists the submission goes on as recorded, otherwise the
//! inputs are left to gc.
//!
//! The `plan` task runs on an executor: it calls the kind's [`crate::kinds::JobKind::plan`],
//! which dispatches the first tasks with [`Platform::dispatch`] (the queue's enqueue-once, keyed
//! by job, task kind and task id), then moves the job to `running`. A plan task that is cut half
//! way and delivered again dispatches only what the first run did not.

use std::time::Duration;

use bytes::Bytes;
use jobs::{Created, JobRecord, JobState, TaskCounts};
use queue::{Lease, TaskMessage};

use crate::kinds::{Submission, TaskKind, PLAN};
use crate::{layout, Platform, PlatformError};

/// A job as [`Platform::wait`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    Running { done: u64, total: u64 },
    Done,
    Failed(String),
    Cancelled(String),
}

impl JobOutcome {
    pub fn of(rec: &JobRecord) -> Self {
        match rec.state {
            JobState::Done => JobOutcome::Done,
            JobState::Failed => JobOutcome::Failed(rec.message.clone()),
            JobState::Cancelled => JobOutcome::Cancelled(rec.message.clone()),
            _ => {
                let p = rec.progress();
                JobOutcome::Running { done: p.done, total: p.total }
            }
        }
    }
}

/// The plan task's message.
pub(crate) fn plan_message(job: &str) -> TaskMessage {
    TaskMessage { trace: crate::telemetry::current(), ..TaskMessage::new(job, "plan", "") }
}

impl Platform {
    /// Validates, stores the inputs, records the job and enqueues its plan task. Returns the job
    /// id and whether it was created (false: the idempotency key named an earlier job).
    pub async fn submit(&self, request: Submission, idempotency_key: Option<&str>) -> Result<(String, bool), PlatformError> {
        self.submit_as("", request, idempotency_key).await
    }

    /// [`Platform::submit`] for `tenant` (who then owns the job; idempotency keys are per
    /// tenant). `""`: no tenant (an API without authentication).
    pub async fn submit_as(&self, tenant: &str, request: Submission, idempotency_key: Option<&str>) -> Result<(String, bool), PlatformError> {
        if let Some(key) = idempotency_key {
            jobs::check_idempotency_key(key)?;
        }
        let quotas = if tenant.is_empty() { crate::Quotas::NONE } else { self.config().quotas };
        let headroom = self.headroom(tenant, &quotas, idempotency_key).await?;
        let kind_name = request.kind();
        let kind = self
            .registry()
            .job_kind(kind_name)
            .cloned()
            .ok_or_else(|| PlatformError::Config(format!("job kind {kind_name} is not served here")))?;
        let v = match kind.validate(self, tenant, request).await {
            Ok(v) => v,
            Err(e) => {
                if matches!(e, PlatformError::InvalidJob { .. } | PlatformError::Precondition(_)) {
                    ::metrics::counter!("prover_jobs_total", "kind" => kind_name, "outcome" => "rejected").increment(1);
                }
                return Err(e);
            }
        };
        let planned: u64 = v.tasks.values().sum();
        if let Some(max) = quotas.max_job_tasks.filter(|m| planned > *m) {
            return Err(PlatformError::Quota(format!(
                "tenant limit reached: tasks per job (this job plans {planned}, at most {max}): split it into smaller jobs"
            )));
        }
        // A tenant's job id carries the tenant, whose prefix holds the job's objects.
        let job = layout::job_id(tenant, &uuid::Uuid::new_v4().to_string());
        let fingerprint = fingerprint(&v.spec, &v.inputs, &v.copies);
        let mut rec = JobRecord::new(&job, kind_name, v.spec).with_tenant(tenant);
        rec.tasks = v.tasks.iter().map(|(k, n)| (k.to_string(), TaskCounts { total: *n, done: 0 })).collect();
        // The job's record against what the quotas left, still before a byte is stored.
        headroom.admits(&rec)?;
        for (name, bytes) in v.inputs.iter().chain(&v.secrets) {
            self.blobs().put(&layout::input(&job, name), bytes.clone()).await?;
        }
        for crate::kinds::InputCopy { name, from, size, field } in &v.copies {
            let to = layout::input(&job, name);
            let copied = match self.blobs().copy(from, &to).await {
                Ok(()) => self.blobs().size(&to).await,
                Err(e) => Err(e),
            };
            let refused = match copied {
                Ok(n) if n == *size => None,
                Ok(n) => Some(crate::error::invalid(field, format!("{from:?} changed while the job was submitted: {n} bytes, validated {size}"))),
                Err(blobstore::BlobError::NotFound(_)) => Some(crate::error::invalid(field, format!("{from:?} was deleted while the job was submitted"))),
                Err(e) => Some(e.into()),
            };
            if let Some(e) = refused {
                let _ = self.blobs().delete_prefix(&layout::job_prefix(&job)).await;
                return Err(e);
            }
        }
        let limits = jobs::Limits { max_active: quotas.max_active_jobs, max_tasks_per_hour: quotas.max_tasks_per_hour, max_record_bytes: quotas.max_record_bytes };
        let created = match self.job_store().create_limited(&rec, idempotency_key.map(|k| (k, fingerprint.as_str())), limits).await {
            Ok(c) => c,
            // A backend error is ambiguous: the record may have been written and only the
            // reply lost. Read it back before deleting anything.
            Err(e @ jobs::JobError::Backend(_)) => match self.job_store().get(&job).await {
                // Recorded after all: the job is the platform's, inputs and all.
                Ok(Some(_)) => {
                    tracing::warn!(job = %job, error = %e, "job recorded although its create answered with an error");
                    Created::New
                }
                // Not recorded, or no answer either: the inputs are left to `prover admin gc`
                // (orphans past its grace period), never deleted on a guess.
                Ok(None) | Err(_) => {
                    tracing::warn!(job = %job, error = %e, "job not recorded; its inputs are left to gc");
                    return Err(e.into());
                }
            },
            // A definite refusal (a limit, a conflict, an invalid record): nothing was written.
            Err(e) => {
                let _ = self.blobs().delete_prefix(&layout::job_prefix(&job)).await;
                return Err(e.into());
            }
        };
        // Acknowledged only once on disk (`--redis-durability`): a job the user was told of
        // survives a Redis crash. If that cannot be confirmed the call fails, the job stays
        // recorded, and a retry with the same idempotency key returns it.
        let durable = self.job_store().make_durable().await.map_err(|e| {
            let id = match &created {
                Created::Existing(id) => id.as_str(),
                Created::New => job.as_str(),
            };
            PlatformError::Jobs(jobs::JobError::Backend(format!("job {id} was recorded, but {e}; submit it again with the same idempotency key")))
        });
        if let Created::Existing(id) = created {
            // A retried submission: the inputs just stored belong to no job.
            let _ = self.blobs().delete_prefix(&layout::job_prefix(&job)).await;
            durable?;
            return Ok((id, false));
        }
        // Recorded: from here on the job is the platform's. If this enqueue is lost, the
        // reconciler enqueues the plan task again.
        // The job's trace starts here: its plan task, and everything after, are children.
        let span = tracing::info_span!(parent: None, "job", otel.name = "job", job = %job, kind = kind_name, tenant = tenant, trace_id = tracing::field::Empty);
        crate::telemetry::record_trace_id(&span);
        let plan = span.in_scope(|| plan_message(&job));
        if let Err(e) = self.queue().enqueue_once(PLAN.name, plan).await {
            tracing::warn!(parent: &span, job = %job, error = %e, "plan task not enqueued; the reconciler will");
        }
        ::metrics::counter!("prover_jobs_submitted_total", "kind" => kind_name).increment(1);
        durable?;
        tracing::info!(parent: &span, job = %job, kind = kind_name, tasks = rec.progress().total, "job submitted");
        Ok((job, true))
    }

    /// Executor: the plan task of a job.
    pub(crate) async fn run_plan(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(rec) = self.job_store().get(job).await? else { return Ok(()) };
        if rec.state.is_terminal() {
            return Ok(());
        }
        let kind = self
            .registry()
            .job_kind(&rec.kind)
            .cloned()
            .ok_or_else(|| PlatformError::Corrupt(format!("job {job}: unknown kind {:?}", rec.kind)))?;
        kind.plan(self, &rec).await?;
        if rec.state == JobState::Queued {
            self.job_store().transition(job, JobState::Running, "").await?;
        }
        tracing::info!(job = %job, kind = %rec.kind, "job planned");
        Ok(())
    }

    /// Dispatches task `task_id` of `kind` for `job`, at most once (a rerun of the same step
    /// does not duplicate it). True if it was enqueued now.
    pub async fn dispatch(&self, job: &str, kind: TaskKind, task_id: &str, payload: String) -> Result<bool, PlatformError> {
        let m = TaskMessage { trace: crate::telemetry::current(), ..TaskMessage::new(job, task_id, payload) };
        Ok(self.queue().enqueue_once(kind.name, m).await?)
    }

    /// Sends the report of the task of `lease` to `kind` (a worker's "done"; a redelivered
    /// task reports again, and the executor counts it once).
    /// Like [`Platform::report`], with another payload (what the task found out, for the executor).
    pub async fn report_with(&self, lease: &Lease, kind: TaskKind, payload: String) -> Result<(), PlatformError> {
        let t = &lease.task;
        let m = TaskMessage { trace: crate::telemetry::current(), ..TaskMessage::new(t.job_id.clone(), t.task_id.clone(), payload) };
        // Inside a role loop the report waits in the task's outbox and is enqueued by the
        // same atomic step that completes the task (`Queue::complete_with`).
        match crate::roles::OUTBOX.try_with(|o| o.lock().expect("outbox").push((kind.name, m.clone()))) {
            Ok(()) => Ok(()),
            Err(_) => Ok(self.queue().enqueue(kind.name, m).await?),
        }
    }

    pub async fn report(&self, lease: &Lease, kind: TaskKind) -> Result<(), PlatformError> {
        self.report_with(lease, kind, lease.task.payload.clone()).await
    }

    /// [`Platform::dispatch`] for many tasks of one kind and job, in few round trips. Returns
    /// how many were enqueued now.
    pub async fn dispatch_many(&self, job: &str, kind: TaskKind, tasks: impl IntoIterator<Item = (String, String)>) -> Result<u64, PlatformError> {
        let trace = crate::telemetry::current();
        let m = tasks.into_iter().map(|(task_id, payload)| TaskMessage { trace: trace.clone(), ..TaskMessage::new(job, task_id, payload) }).collect();
        Ok(self.queue().enqueue_once_many(kind.name, m).await?)
    }

    /// Cancels a job: final state first, then its waiting tasks and intermediate objects go.
    /// Returns the record; a job that had already ended is returned unchanged.
    pub async fn cancel(&self, job: &str) -> Result<JobRecord, PlatformError> {
        // The clean-up in `end` waits for the ending to be durable; the wait below covers a
        // cancel of a job that had ended before. Acknowledged only once on disk
        // (`--redis-durability`); a retried cancel is harmless.
        self.end(job, crate::lifecycle::Ending::Cancelled("cancelled by the user")).await?;
        self.job_store()
            .make_durable()
            .await
            .map_err(|e| PlatformError::Jobs(jobs::JobError::Backend(format!("job {job} was cancelled, but {e}; cancel it again to be sure"))))?;
        self.record(job).await
    }

    /// Follows a job until it ends, calling `on_progress` on every change.
    pub async fn wait(&self, job: &str, mut on_progress: impl FnMut(&JobOutcome)) -> JobOutcome {
        let mut last = None;
        loop {
            let outcome = match self.job_store().get(job).await {
                Ok(Some(rec)) => JobOutcome::of(&rec),
                Ok(None) => return JobOutcome::Failed(format!("no job {job}")),
                Err(e) => {
                    // A backend blip: keep following.
                    tracing::warn!(job, error = %e, "job store");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                    continue;
                }
            };
            if last.as_ref() != Some(&outcome) {
                on_progress(&outcome);
                last = Some(outcome.clone());
            }
            if !matches!(outcome, JobOutcome::Running { .. }) {
                return outcome;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// Identifies a request for idempotency: BLAKE2b-256 of the spec and the inputs.
fn fingerprint(spec_json: &str, inputs: &[(String, Bytes)], copies: &[crate::kinds::InputCopy]) -> String {
    use blake2::Digest;
    let mut h = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    h.update((spec_json.len() as u64).to_le_bytes());
    h.update(spec_json.as_bytes());
    for (name, bytes) in inputs {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    for crate::kinds::InputCopy { name, from, size, .. } in copies {
        for part in [name, from] {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        }
        h.update(size.to_le_bytes());
    }
    hex::encode(h.finalize())
}

/// What a tenant's quotas leave it, read before its request is validated (which reads its
/// inputs: a HEAD and a ranged GET per witness of a pari.circom job) and before anything is
/// stored (N3 of the platform review). The record's creation checks each quota again,
/// atomically; these reads only spare the work of a submission that would be refused.
struct Headroom {
    /// Tasks planned this hour and the hourly budget.
    hour: Option<(u64, u64)>,
    /// Record bytes held and the record quota.
    records: Option<(u64, u64)>,
}

impl Headroom {
    /// Whether `rec` (the job's record, its tasks counted) fits what is left.
    fn admits(&self, rec: &JobRecord) -> Result<(), PlatformError> {
        if let Some((spent, max)) = self.hour.filter(|(spent, max)| spent.saturating_add(rec.progress().total) > *max) {
            tracing::debug!(tenant = %rec.tenant, spent, "refused for the hourly work budget before storing");
            return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_HOURLY_TASKS, max }.into());
        }
        if let Some((held, max)) = self.records {
            let (record, tasks) = jobs::record_charge(rec);
            if held.saturating_add(record).saturating_add(tasks) > max {
                return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_RECORD_BYTES, max }.into());
            }
        }
        Ok(())
    }
}

impl Platform {
    /// `tenant`'s [`Headroom`]: refused at once when it is at its active-job quota, has spent
    /// its hourly work budget or holds its record quota (a record costs at least
    /// [`jobs::RECORD_BYTES`]). A retry of a job it submitted (its idempotency key names one)
    /// is answered with that job whatever the quotas, so it is checked against none.
    async fn headroom(&self, tenant: &str, quotas: &crate::Quotas, idempotency_key: Option<&str>) -> Result<Headroom, PlatformError> {
        let none = Headroom { hour: None, records: None };
        let limited = quotas.max_active_jobs.is_some() || quotas.max_tasks_per_hour.is_some() || quotas.max_record_bytes.is_some();
        if !limited {
            return Ok(none);
        }
        if let Some(key) = idempotency_key {
            if self.job_store().idempotent(tenant, key).await?.is_some() {
                return Ok(none);
            }
        }
        if let Some(max) = quotas.max_active_jobs {
            if self.job_store().tenant_active(tenant).await? >= max {
                return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_ACTIVE, max }.into());
            }
        }
        let mut headroom = none;
        if let Some(max) = quotas.max_tasks_per_hour {
            let spent = self.job_store().tenant_hour_tasks(tenant).await?;
            if spent >= max {
                return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_HOURLY_TASKS, max }.into());
            }
            headroom.hour = Some((spent, max));
        }
        if let Some(max) = quotas.max_record_bytes {
            let held = self.job_store().usage(tenant, jobs::Usage::Records).await?;
            if held.saturating_add(jobs::RECORD_BYTES) > max {
                return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_RECORD_BYTES, max }.into());
            }
            headroom.records = Some((held, max));
        }
        Ok(headroom)
    }
}

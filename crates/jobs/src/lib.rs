//! Job records and the per-job task state every planner, executor, worker and aggregator
//! shares: one [`JobStore`] trait, with a Redis implementation ([`RedisJobStore`]) for the
//! distributed platform and an in-process one ([`MemoryJobStore`]) for embedded mode. Both pass
//! the same [`contract`] suite.
//!
//! A job is a [`JobRecord`]: its kind, a small JSON spec, a [`JobState`], a message (the failure
//! reason), and per task kind the number of tasks planned and done. Alongside it the store keeps
//! the job's DAG state, which is what lets several executors run at once:
//!
//! * the **done set**: [`JobStore::task_done`] adds a task id and bumps its kind's done counter
//!   in one atomic step, and says whether this call was the first (a redelivered report is a
//!   no-op);
//! * the **released set**: [`JobStore::mark_released`] records that a task was dispatched, so a
//!   later report does not dispatch it again;
//! * **release marks**: for a step whose tasks are released in index order through a sliding
//!   window, how many have been dispatched ([`JobStore::release_mark`], only ever raised).
//!
//! States move `Queued → Running → {Done, Failed, Cancelled}`; a terminal state is final
//! ([`JobStore::transition`] refuses to leave it), so a late worker cannot resurrect a cancelled
//! job or a cancelled job turn into a done one.
//!
//! Idempotency: [`JobStore::create`] takes an optional client key and a fingerprint of the
//! request. The same key with the same fingerprint returns the existing job; the same key with
//! another fingerprint is [`JobError::IdempotencyConflict`].
//!
//! Retention: [`JobStore::end`] moves a job to a terminal state and gives its record and
//! idempotency key their time to live, and its task state at most [`TASK_STATE_RETENTION`], in
//! the same atomic step ([`JobStore::expire`] sets it apart); listings skip (and forget) jobs
//! that have expired.
//!
//! Storage quotas: the store counts each tenant's bytes per [`Usage`] (job records, uploads,
//! registered circuits) as charges per item with optional expiries ([`JobStore::charge`]). A
//! job's record and task state are charged when it is recorded ([`record_charge`], refused past
//! [`Limits::max_record_bytes`] in the same atomic step) and given back as they expire.
//!
//! Endings that complete: every move to a terminal state also records the job in the
//! **ended, not cleaned** list ([`JobStore::unclean`]), in the same atomic step, until
//! [`JobStore::mark_cleaned`]. The platform's clean-up after an ending (purging waiting tasks,
//! deleting objects) is keyed on it, so a clean-up cut by an error or a crash is finished by a
//! later call or the reconciler instead of never.
//!
//! Jobs that have not ended are listed by [`JobStore::list_active`] (oldest first): the
//! reconciler's work list, kept in step with the state by the same atomic steps.
//!
//! Redis layout: `prover:job:{id}` (hash: the record, `total:{kind}`, `done:{kind}`,
//! `mark:{step}`),
//! `prover:job:{id}:done` and `prover:job:{id}:released` (sets of task ids), `prover:jobs`
//! (sorted set of ids by creation time, for listing), `prover:jobs:active` (the same for jobs
//! not in a terminal state), `prover:jobs:tenant:{tenant}` (the same for one tenant's jobs),
//! `prover:jobs:tenant-active:{tenant}` (one tenant's jobs not in a terminal state: its quota),
//! `prover:idem:{key}` or, for a tenant's job, `prover:idem:{tenant} {key}` (`{id} {fingerprint}`),
//! `prover:jobs:unclean` (sorted set of ended jobs not yet cleaned up, by the time they ended),
//! `prover:jobs:usage:{tenant}:{usage}` (hash: bytes charged per item, the total under `:total`)
//! and `prover:jobs:usage:{tenant}:{usage}:expiry` (sorted set: the items' expiries, ms).

use std::collections::BTreeMap;
use std::time::{SystemTime, UNIX_EPOCH};

use async_trait::async_trait;

pub mod contract;
mod memory;
mod redis_store;

pub use memory::MemoryJobStore;
pub use redis_store::{RedisJobStore, DEFAULT_REDIS_TIMEOUT_SECS};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    pub const ALL: [JobState; 5] = [JobState::Queued, JobState::Running, JobState::Done, JobState::Failed, JobState::Cancelled];

    pub fn is_terminal(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed | JobState::Cancelled)
    }

    /// The one transition table, which both stores apply (the Redis store's script is
    /// generated from it): a job is planned (`queued` → `running`), ends from either of those
    /// (`done`, `failed`, `cancelled`), and a terminal state is final.
    pub fn can_move(self, to: JobState) -> bool {
        match (self, to) {
            (JobState::Queued, JobState::Running) => true,
            (JobState::Queued | JobState::Running, to) => to.is_terminal(),
            _ => false,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "queued" => JobState::Queued,
            "running" => JobState::Running,
            "done" => JobState::Done,
            "failed" => JobState::Failed,
            "cancelled" => JobState::Cancelled,
            _ => return None,
        })
    }
}

/// Planned and finished tasks of one kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TaskCounts {
    pub total: u64,
    pub done: u64,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JobRecord {
    pub id: String,
    /// Job kind, e.g. `reckle.batch`.
    pub kind: String,
    /// The validated job specification (JSON, a few KiB at most; bulk inputs live in the blob
    /// store).
    pub spec: String,
    pub state: JobState,
    /// Why the job failed or was cancelled; empty otherwise.
    pub message: String,
    pub created_ms: u64,
    pub updated_ms: u64,
    /// Per task kind.
    pub tasks: BTreeMap<String, TaskCounts>,
    /// The tenant that submitted the job (see the `auth` crate); empty on a platform that runs
    /// without authentication. Idempotency keys and [`JobStore::list_tenant`] are per tenant.
    pub tenant: String,
    /// The idempotency key the job was submitted with, as its client gave it (not qualified by
    /// the tenant); empty without one. Set by [`JobStore::create`] from its argument, fixed for
    /// the job's life: a client that holds only a job id (say, an operator reading an editable
    /// status) checks it against the key it derives itself before acting on the job.
    pub idempotency_key: String,
}

/// A job that has not ended, as [`JobStore::active_page`] lists it: its record without the
/// spec, the message and the task counts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActiveJob {
    pub id: String,
    pub kind: String,
    pub state: JobState,
    pub created_ms: u64,
    pub updated_ms: u64,
}

impl From<&JobRecord> for ActiveJob {
    fn from(r: &JobRecord) -> Self {
        Self { id: r.id.clone(), kind: r.kind.clone(), state: r.state, created_ms: r.created_ms, updated_ms: r.updated_ms }
    }
}

impl JobRecord {
    pub fn new(id: impl Into<String>, kind: impl Into<String>, spec: impl Into<String>) -> Self {
        let now = now_ms();
        Self {
            id: id.into(),
            kind: kind.into(),
            spec: spec.into(),
            state: JobState::Queued,
            message: String::new(),
            created_ms: now,
            updated_ms: now,
            tasks: BTreeMap::new(),
            tenant: String::new(),
            idempotency_key: String::new(),
        }
    }

    /// The same record, owned by `tenant`.
    pub fn with_tenant(mut self, tenant: impl Into<String>) -> Self {
        self.tenant = tenant.into();
        self
    }

    /// Sum over kinds.
    pub fn progress(&self) -> TaskCounts {
        self.tasks.values().fold(TaskCounts::default(), |a, c| TaskCounts { total: a.total + c.total, done: a.done + c.done })
    }
}

/// What [`JobStore::create`] did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Created {
    New,
    /// The idempotency key was used before with the same request: that job.
    Existing(String),
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JobError {
    #[error("job {0} already exists")]
    AlreadyExists(String),
    #[error("idempotency key {key:?} was used for job {job} with a different request")]
    IdempotencyConflict { key: String, job: String },
    #[error("no job {0}")]
    NotFound(String),
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("tenant limit reached: {limit} (at most {max})")]
    LimitReached { limit: &'static str, max: u64 },
    #[error("job store backend: {0}")]
    Backend(String),
}

/// Largest spec accepted (bulk data belongs in the blob store). Sized for the largest request
/// the job kinds accept: a Reckle update of a 4,096-index batch at ℓ = 24 by 1,024 changes
/// records both batches and the changes, about 140 KB of JSON (checked by the kinds' tests).
pub const MAX_SPEC_BYTES: usize = 256 * 1024;

pub(crate) fn check_record(rec: &JobRecord) -> Result<(), JobError> {
    check_id(&rec.id)?;
    // A tenant in the id (its object prefix) is the record's tenant, and only then.
    let named = rec.id.split_once('.').map_or("", |(t, _)| t);
    if named != rec.tenant && !named.is_empty() {
        return Err(JobError::Invalid { field: "job_id", reason: format!("{:?} names another tenant than the job's {:?}", rec.id, rec.tenant) });
    }
    if rec.kind.is_empty() || rec.kind.len() > 64 || !rec.kind.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_') {
        return Err(JobError::Invalid { field: "kind", reason: format!("{:?}: use letters, digits, '.' and '_'", rec.kind) });
    }
    if rec.spec.len() > MAX_SPEC_BYTES {
        return Err(JobError::Invalid { field: "spec", reason: format!("{} bytes, at most {MAX_SPEC_BYTES}", rec.spec.len()) });
    }
    for k in rec.tasks.keys() {
        if k.is_empty() || k.contains(':') {
            return Err(JobError::Invalid { field: "tasks", reason: format!("task kind {k:?}") });
        }
    }
    Ok(())
}

/// Job ids: 1–64 letters, digits and '-', optionally after a tenant and a '.' (a tenant's
/// jobs are `<tenant>.<uuid>`: the tenant's object prefix follows from the id).
pub fn check_id(id: &str) -> Result<(), JobError> {
    let part_ok = |p: &str, max: usize| !p.is_empty() && p.len() <= max && p.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-');
    let ok = match id.split_once('.') {
        Some((tenant, rest)) => part_ok(tenant, 63) && part_ok(rest, 64),
        None => part_ok(id, 64),
    };
    if !ok {
        return Err(JobError::Invalid {
            field: "job_id",
            reason: format!("{id:?}: 1–64 letters, digits or '-', optionally after a tenant and '.'"),
        });
    }
    Ok(())
}

/// The key an idempotency key is stored under: per tenant (a space cannot occur in a key, so
/// the namespaces cannot overlap).
pub fn tenant_idempotency_key(tenant: &str, key: &str) -> String {
    if tenant.is_empty() {
        key.to_string()
    } else {
        format!("{tenant} {key}")
    }
}

/// Idempotency keys: 1–128 printable characters without spaces.
pub fn check_idempotency_key(key: &str) -> Result<(), JobError> {
    if key.is_empty() || key.len() > 128 || key.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
        return Err(JobError::Invalid { field: "idempotency_key", reason: "1–128 printable characters without spaces".into() });
    }
    Ok(())
}

/// [`JobStore::charge`]'s arguments: not [`Usage::Records`], a tenant without ':', an item of
/// 1–256 bytes not starting with ':' (the total's field).
pub(crate) fn check_charge(tenant: &str, usage: Usage, item: &str) -> Result<(), JobError> {
    if usage == Usage::Records {
        return Err(JobError::Invalid { field: "usage", reason: "records are charged with their job, by create".into() });
    }
    if tenant.contains(':') {
        return Err(JobError::Invalid { field: "tenant", reason: format!("{tenant:?} contains ':'") });
    }
    if item.is_empty() || item.len() > 256 || item.starts_with(':') {
        return Err(JobError::Invalid { field: "item", reason: format!("{item:?}: 1–256 bytes, not starting with ':'") });
    }
    Ok(())
}

/// [`JobStore::end`] takes only a terminal state.
pub(crate) fn check_ending(to: JobState) -> Result<(), JobError> {
    if !to.is_terminal() {
        return Err(JobError::Invalid { field: "state", reason: format!("{:?} is not an ending (done, failed or cancelled)", to.as_str()) });
    }
    Ok(())
}

pub fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Per-tenant admission limits, checked and recorded with the job in one atomic step
/// ([`JobStore::create_limited`]). Jobs without a tenant are never limited.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Limits {
    /// Jobs of the tenant that have not ended.
    pub max_active: Option<u64>,
    /// Tasks the tenant's jobs may plan per clock hour (UTC): a work budget. A job's planned
    /// tasks are charged when it is recorded and are not given back when it ends.
    pub max_tasks_per_hour: Option<u64>,
    /// Bytes the tenant's job records and task state may hold in the store, all together
    /// ([`Usage::Records`], [`record_charge`]): given back as each part expires after its job
    /// ends, or when the job is deleted.
    pub max_record_bytes: Option<u64>,
}

impl Limits {
    /// Only the active-jobs limit.
    pub fn active(max: u64) -> Self {
        Self { max_active: Some(max), ..Self::default() }
    }
}

/// What a tenant's stored bytes are counted for, each against its own quota. The store keeps,
/// per tenant and usage, a charge per item (a job, an upload's name, a circuit id) and their
/// total; a charge may carry an expiry, after which it is dropped by the next write of that
/// usage ([`JobStore::charge`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Usage {
    /// Job records and their task state: charged with the record ([`record_charge`]) by
    /// [`JobStore::create_limited`], expiring with the retention an ending gives them.
    Records,
    /// Objects under the tenant's upload prefix.
    Uploads,
    /// Registered circuits: their `.r1cs` and key pairs.
    Circuits,
}

impl Usage {
    pub const ALL: [Usage; 3] = [Usage::Records, Usage::Uploads, Usage::Circuits];

    pub fn as_str(self) -> &'static str {
        match self {
            Usage::Records => "records",
            Usage::Uploads => "uploads",
            Usage::Circuits => "circuits",
        }
    }

    /// The limit named in [`JobError::LimitReached`] when this usage's quota would be passed.
    pub fn limit(self) -> &'static str {
        match self {
            Usage::Records => LIMIT_RECORD_BYTES,
            Usage::Uploads => LIMIT_UPLOAD_BYTES,
            Usage::Circuits => LIMIT_CIRCUIT_BYTES,
        }
    }
}

/// A job record's fixed share of [`Usage::Records`], besides its spec: the hash's other fields,
/// a failure message, its places in the indexes and its idempotency key.
pub const RECORD_BYTES: u64 = 4096;
/// Bytes of task state charged per planned task: its id in the done and in the released set.
/// Measured with `MEMORY USAGE` by `tests/contract.rs` (`task_state_charge_covers_redis`),
/// which fails if Redis holds more: 119 bytes per task for 5,000 tasks named `prove-<i>`.
pub const TASK_STATE_BYTES: u64 = 160;
/// How long a job's task state (its done and released sets) is kept after the job ends, when
/// the ending gives a retention (at most that retention): nothing reads it once the job has
/// ended but a late report, which arrives within a lease or two.
pub const TASK_STATE_RETENTION: std::time::Duration = std::time::Duration::from_secs(3600);

/// The [`Usage::Records`] charges of a job: `(its record, its task state)`. The record's part
/// is kept for the retention its ending gives it, the task state's for at most
/// [`TASK_STATE_RETENTION`].
pub fn record_charge(rec: &JobRecord) -> (u64, u64) {
    (RECORD_BYTES + rec.spec.len() as u64 + rec.kind.len() as u64, TASK_STATE_BYTES.saturating_mul(rec.progress().total))
}

/// The item a job's task state is charged under in [`Usage::Records`] (the record's is its id).
pub(crate) fn task_state_item(id: &str) -> String {
    format!("{id}/tasks")
}

/// The clock hour (UTC, hours since the epoch) a work budget is charged to.
pub fn budget_hour(now_ms: u64) -> u64 {
    now_ms / 3_600_000
}

/// Names of the limits in [`JobError::LimitReached`].
pub const LIMIT_ACTIVE: &str = "active jobs per tenant";
pub const LIMIT_HOURLY_TASKS: &str = "tasks per tenant per hour";
pub const LIMIT_RECORD_BYTES: &str = "bytes of job records per tenant";
pub const LIMIT_UPLOAD_BYTES: &str = "bytes of uploads per tenant";
pub const LIMIT_CIRCUIT_BYTES: &str = "bytes of registered circuits per tenant";

#[async_trait]
pub trait JobStore: Send + Sync {
    /// Records a new job (state `Queued`, with its planned task counts). With an idempotency key
    /// `(key, fingerprint)`: a key seen before with the same fingerprint returns
    /// [`Created::Existing`] and writes nothing; with another fingerprint,
    /// [`JobError::IdempotencyConflict`].
    async fn create(&self, rec: &JobRecord, idempotency: Option<(&str, &str)>) -> Result<Created, JobError> {
        self.create_limited(rec, idempotency, Limits::default()).await
    }
    /// [`JobStore::create`], refused with [`JobError::LimitReached`] when the record's tenant
    /// already has `limits.max_active` jobs that have not ended, or when the tasks its jobs
    /// planned this hour plus this job's would exceed `limits.max_tasks_per_hour` (checked and
    /// recorded in one atomic step, so concurrent submissions cannot overshoot). A repeated
    /// submission that names an earlier job is answered as by `create`, whatever the counts, and
    /// charges nothing. Jobs without a tenant are never limited.
    async fn create_limited(&self, rec: &JobRecord, idempotency: Option<(&str, &str)>, limits: Limits) -> Result<Created, JobError>;
    async fn get(&self, id: &str) -> Result<Option<JobRecord>, JobError>;
    /// Newest first: `(records, next offset if more)`.
    async fn list(&self, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError>;
    /// Like [`JobStore::list`], only the jobs of `tenant`.
    async fn list_tenant(&self, tenant: &str, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError>;
    /// [`JobStore::list`] (`tenant` `None`) or [`JobStore::list_tenant`], each record without
    /// its spec (left empty): what a listing shows (ListJobs sends no spec), without reading the
    /// specs, up to [`MAX_SPEC_BYTES`] each, of a page of up to a thousand jobs (Redis drops
    /// them on the server's side).
    async fn list_brief(&self, tenant: Option<&str>, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        let (mut recs, next) = match tenant {
            Some(t) => self.list_tenant(t, offset, limit).await?,
            None => self.list(offset, limit).await?,
        };
        for r in &mut recs {
            r.spec = String::new();
        }
        Ok((recs, next))
    }
    /// Moves a job to `to` with `message`. Returns false (and changes nothing) if the job is
    /// already in a terminal state.
    /// A move to a terminal state also lists the job as ended and not cleaned
    /// ([`JobStore::unclean`]), in the same atomic step.
    async fn transition(&self, id: &str, to: JobState, message: &str) -> Result<bool, JobError>;
    /// Ends a job: [`JobStore::transition`] to the terminal state `to`, and, in the same atomic
    /// step, the retention `ttl` of its record, task state and idempotency key (as
    /// [`JobStore::expire`]). Returns false (and changes nothing) if the job had already ended.
    /// [`JobError::Invalid`] (field `state`) for a `to` that is not terminal.
    async fn end(&self, id: &str, to: JobState, message: &str, ttl: std::time::Duration) -> Result<bool, JobError>;
    /// Up to `limit` jobs that have ended and whose clean-up is not yet marked done
    /// ([`JobStore::mark_cleaned`]), as `(id, ended ms)`, longest ended first. A listed job whose
    /// record has expired or was deleted is dropped from the list on the way (nothing is left
    /// to say which kind it was; its objects are `gc`'s).
    async fn unclean(&self, limit: u64) -> Result<Vec<(String, u64)>, JobError>;
    /// Whether `id` has ended and its clean-up is not yet marked done.
    async fn is_unclean(&self, id: &str) -> Result<bool, JobError>;
    /// Marks the clean-up after `id`'s ending done: it leaves [`JobStore::unclean`].
    async fn mark_cleaned(&self, id: &str) -> Result<(), JobError>;
    /// Marks `task` of `kind` done; true if this call did it.
    async fn task_done(&self, id: &str, kind: &str, task: &str) -> Result<bool, JobError>;
    async fn is_done(&self, id: &str, task: &str) -> Result<bool, JobError>;
    /// Records that `task` was dispatched; true if this call did it.
    async fn mark_released(&self, id: &str, task: &str) -> Result<bool, JobError>;
    async fn is_released(&self, id: &str, task: &str) -> Result<bool, JobError>;
    /// The release mark of a job's windowed step `step`: how many of its tasks, in index order,
    /// have been dispatched (0 before any). Errors with [`JobError::NotFound`] for an unknown job.
    async fn release_mark(&self, id: &str, step: &str) -> Result<u64, JobError>;
    /// Raises the release mark of `step` to `to` (a lower `to` changes nothing). Called after
    /// the tasks below `to` were dispatched, so a caller cut short between the two dispatches
    /// them again (at most once each, by task id) rather than never.
    async fn raise_release_mark(&self, id: &str, step: &str, to: u64) -> Result<(), JobError>;
    /// How many jobs of `tenant` have not ended (0 for the empty tenant, whose jobs are never
    /// counted): the divisor of a tenant's fair share.
    async fn tenant_active(&self, tenant: &str) -> Result<u64, JobError>;
    /// The tasks `tenant`'s jobs planned in this clock hour (UTC): what its hourly work budget
    /// ([`Limits::max_tasks_per_hour`]) has spent (0 for the empty tenant). A cheap read that
    /// lets a submission be refused before its inputs are read or stored; the record's
    /// creation checks the budget again, atomically.
    async fn tenant_hour_tasks(&self, tenant: &str) -> Result<u64, JobError>;
    /// The job `tenant`'s idempotency key `key` names, while the key is kept: a cheap read that
    /// lets a submission be refused for a quota before its work, while a retry of a job already
    /// recorded is still answered with that job.
    async fn idempotent(&self, tenant: &str, key: &str) -> Result<Option<String>, JobError>;
    /// Up to `limit` jobs not in a terminal state, oldest first.
    async fn list_active(&self, limit: u64) -> Result<Vec<JobRecord>, JobError>;
    /// A page of the jobs not in a terminal state, oldest first, from `offset`: `(jobs, next
    /// offset if more)`, each without its spec or task counts (a reconciler pages through
    /// every active job each round; Redis answers a page in one round trip). A job that ends
    /// meanwhile shifts the offsets, so a walk may miss one job until its next walk.
    async fn active_page(&self, offset: u64, limit: u64) -> Result<(Vec<ActiveJob>, Option<u64>), JobError>;
    /// Lets the job's record, task state and idempotency key expire after `ttl` (retention of
    /// a job that has ended); until then everything reads as before.
    async fn expire(&self, id: &str, ttl: std::time::Duration) -> Result<(), JobError>;
    /// Removes the job, its task state and its idempotency key, and its place in every list.
    async fn delete(&self, id: &str) -> Result<(), JobError>;
    /// Charges `bytes` to `tenant`'s `usage` for `item`, replacing the item's earlier charge,
    /// and returns that earlier charge (`None`: there was none). Refused with
    /// [`JobError::LimitReached`] (naming [`Usage::limit`]), changing nothing, when the new
    /// charge is larger than the old and the tenant's total would pass `max`. With `expires_ms`
    /// (ms since the epoch) the charge is dropped after then (a charge for bytes still being
    /// written: a crash cannot leave it behind); without, it stays until replaced or
    /// [`JobStore::uncharge`]d. Charges that expired are dropped first (some at each call).
    /// [`Usage::Records`] is charged only with the record ([`JobStore::create_limited`]):
    /// [`JobError::Invalid`] (field `usage`). The empty tenant is never charged: `Ok(None)`.
    async fn charge(&self, tenant: &str, usage: Usage, item: &str, bytes: u64, max: Option<u64>, expires_ms: Option<u64>) -> Result<Option<u64>, JobError>;
    /// Drops `item`'s charge (none: nothing happens).
    async fn uncharge(&self, tenant: &str, usage: Usage, item: &str) -> Result<(), JobError>;
    /// The bytes charged to `tenant`'s `usage` (expired charges not counted).
    async fn usage(&self, tenant: &str, usage: Usage) -> Result<u64, JobError>;
    /// Returns once every write this store answered before the call survives the store's
    /// death, as far as the store was set up to make sure of it (Redis: `WAITAOF`, see
    /// [`queue::durable`]); `Err` if that could not be confirmed, so the write must not be
    /// acknowledged to a user. Called before acknowledging a submit or a cancel, and before an
    /// ended job's clean-up deletes anything (the platform's `lifecycle`). The in-memory
    /// store has nothing to wait for.
    async fn make_durable(&self) -> Result<(), JobError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn job_ids_may_name_their_tenant() {
        for ok in ["0f3e-11", "acme.0f3e-11", "a.b", &"x".repeat(64), &format!("{}.{}", "t".repeat(63), "x".repeat(64))] {
            assert!(check_id(ok).is_ok(), "{ok}");
        }
        for bad in ["", ".x", "x.", "a.b.c", "a/b", "../x", "a b", &"x".repeat(65), &format!("{}.x", "t".repeat(64))] {
            assert!(matches!(check_id(bad), Err(JobError::Invalid { field: "job_id", .. })), "{bad}");
        }
        // The tenant in an id is the record's.
        assert!(check_record(&JobRecord::new("acme.1", "noop", "{}").with_tenant("acme")).is_ok());
        assert!(check_record(&JobRecord::new("acme.1", "noop", "{}").with_tenant("other")).is_err());
        assert!(check_record(&JobRecord::new("acme.1", "noop", "{}")).is_err(), "an id naming a tenant on a job without one");
        assert!(check_record(&JobRecord::new("plain-1", "noop", "{}").with_tenant("acme")).is_ok(), "older ids without a tenant");
    }
}

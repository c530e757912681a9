//! Job kinds, a file or a folder each, and the registry the roles dispatch through.
//!
//! Every kind implements the typed contract ([`contract::Kind`]: a `Step` enum, a pure
//! `on_done`, see `contract.rs`); the adaptor [`contract::Typed`] turns it into the role-facing
//! [`JobKind`] the registry holds, which no kind implements itself. A job kind says what a job
//! of its kind is: its task kinds ([`TaskKind`]: a queue name and the role that serves it), how
//! a request is validated into a recorded spec and inputs (in SubmitJob), how the durable
//! `plan` task dispatches the first tasks (on an executor), what a worker does for each of its
//! task kinds, what the executor does with a report, what the aggregator does to finish, and
//! which object prefixes hold its intermediate data (deleted with its inputs when the job
//! ends, see [`crate::lifecycle`]).
//!
//! Adding a kind: a folder here implementing [`contract::Kind`], one line in
//! [`Registry::builtin`], and its proto message (see `docs/job-kinds.md`).

pub mod circom;
pub mod contract;
pub mod hekaton;
pub mod noop;
pub mod pari;
pub mod reckle;
pub mod testudo;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use queue::Lease;

use crate::{Platform, PlatformError};

/// Which role claims a task kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Served {
    Worker,
    Executor,
    Aggregator,
}

impl Served {
    pub fn as_str(self) -> &'static str {
        match self {
            Served::Worker => "worker",
            Served::Executor => "executor",
            Served::Aggregator => "aggregator",
        }
    }
}

/// A task kind: its queue name, the role that serves it, and how long one task may run
/// before it is abandoned and retried (overridable per kind in [`crate::PlatformConfig`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TaskKind {
    pub name: &'static str,
    pub served_by: Served,
    pub deadline: Duration,
    /// Served only by workers that opt in (`--reckle-wrap-worker`): its task holds a key of
    /// GBs resident, which other workers are not sized for ([`TaskKind::opt_in`]).
    pub opt_in: bool,
}

impl TaskKind {
    pub const fn new(name: &'static str, served_by: Served, deadline_secs: u64) -> Self {
        Self { name, served_by, deadline: Duration::from_secs(deadline_secs), opt_in: false }
    }

    /// The kind, served only by workers started to serve it (see [`TaskKind::opt_in`]).
    pub const fn opt_in(self) -> Self {
        Self { opt_in: true, ..self }
    }
}

/// The durable planning step of every job, served by executors (see [`crate::planner`]).
pub const PLAN: TaskKind = TaskKind::new("plan", Served::Executor, 600);

/// A job as submitted: its kind and its spec, as JSON (in-process, each kind's `request`
/// function builds it with [`contract::spec_request`]; over gRPC, the kind's
/// [`contract::Kind::from_pb`] parses its proto message into it).
#[derive(Clone, Debug)]
pub struct Submission {
    pub kind: &'static str,
    pub json: String,
}

impl Submission {
    /// The job kind that serves this request.
    pub fn kind(&self) -> &'static str {
        self.kind
    }
}

/// A validated request, ready to be recorded.
pub struct Validated {
    /// The spec to record (JSON, at most `jobs::MAX_SPEC_BYTES`).
    pub spec: String,
    /// Objects to store under `jobs/<id>/inputs/` before the job is recorded: `(name, bytes)`.
    pub inputs: Vec<(String, Bytes)>,
    /// Tasks planned, per task kind (the job's progress counters).
    pub tasks: BTreeMap<&'static str, u64>,
    /// Objects stored beside the inputs but left out of the idempotency fingerprint: secrets
    /// drawn fresh for each job (e.g. the seed a setup derives its randomness from, so that a
    /// redelivered setup makes the same keys).
    pub secrets: Vec<(String, Bytes)>,
    /// Inputs too large to pass through the planner, copied by the object store into
    /// `jobs/<id>/inputs/` before the job is recorded: `(name, source key, size)`. The copy
    /// must have `size` bytes (the source may change between validation and the copy); the
    /// idempotency fingerprint covers the source key and size, not the bytes.
    pub copies: Vec<InputCopy>,
}

/// An input the object store copies into `jobs/<id>/inputs/<name>` ([`Validated::copies`]).
#[derive(Clone, Debug)]
pub struct InputCopy {
    pub name: String,
    pub from: String,
    pub size: u64,
    /// The request field that named `from` (for the error if it changed).
    pub field: &'static str,
}

/// Fair share, across jobs and across tenants. A step's `n` tasks (Pari prove tasks, a Reckle
/// job's first tasks, Hekaton commit or prove tasks) are released in index order, and at most
/// the job's **share** of them are queued or running at once. The share is the job's window
/// (`--job-window`, recorded in its spec; none: every task at once), or, for a job of a tenant
/// when `--tenant-window` is set, the tenant window divided among that tenant's jobs that have
/// not ended (at least 1, at most the job's window). So a large job holds only a window of
/// places in the queue and a small job submitted after it is not starved, and a tenant with ten
/// jobs holds about as many places as a tenant with one: workers take tasks in queue order, so
/// tenants with work are served about equally.
///
/// State: the step's release mark in the job store (how many tasks are dispatched) and the job's
/// done counters. On each report the executor releases tasks `mark..min(n, done + share)`, then
/// raises the mark. Dispatch is at most once per task id, so a report that arrives twice or an
/// executor cut short between the two releases nothing twice; and no task is left behind: after
/// any report at least one released task is not done, or the mark reaches `n`, so another
/// report comes. A share that changes (a job of the tenant starts or ends) applies from the
/// next report on.
pub(crate) struct Window<'a> {
    /// The step's name (its release mark).
    pub step: &'a str,
    /// The step's tasks.
    pub n: u64,
    /// The job's window (`None`: every task at once).
    pub cap: Option<u64>,
}

impl Window<'_> {
    /// How many of the step's tasks `rec`'s job may have queued or running now.
    pub(crate) async fn share(&self, p: &Platform, rec: &jobs::JobRecord) -> Result<u64, PlatformError> {
        let Some(cap) = self.cap else { return Ok(u64::MAX) };
        let cap = cap.max(1);
        let tenant_window = p.config().tenant_window;
        if tenant_window == 0 || rec.tenant.is_empty() {
            return Ok(cap);
        }
        let active = p.job_store().tenant_active(&rec.tenant).await?.max(1);
        Ok((tenant_window / active).clamp(1, cap))
    }

    /// The tasks to release now that `done` of the step's tasks are done; dispatch them, then
    /// call [`Window::released`] with the range's end.
    pub(crate) async fn due(&self, p: &Platform, rec: &jobs::JobRecord, done: u64) -> Result<std::ops::Range<u64>, PlatformError> {
        let mark = p.job_store().release_mark(&rec.id, self.step).await?;
        if mark >= self.n {
            // Every task released: the reports that remain need not count the tenant's jobs.
            return Ok(self.n..self.n);
        }
        let to = self.n.min(done.saturating_add(self.share(p, rec).await?));
        Ok(mark.min(to)..to)
    }

    /// Records that the tasks below `to` are dispatched.
    pub(crate) async fn released(&self, p: &Platform, job: &str, to: u64) -> Result<(), PlatformError> {
        Ok(p.job_store().raise_release_mark(job, self.step, to).await?)
    }
}

/// What a `VerifyProof` caller pins for a job's outputs: the Reckle root C it expects, or the
/// hex digest of the verifying key a Pari, circom or Hekaton job must have been proved under
/// (each kind parses the digest it knows and names `expected_vk_digest` when it does not).
#[derive(Clone, Copy, Debug, Default)]
pub struct Pins<'a> {
    pub root: Option<&'a ::reckle::Digest>,
    pub vk_digest: Option<&'a str>,
}

/// The error of a kind that publishes no proof, for `VerifyProof`.
pub(crate) fn no_proof(kind: &str) -> PlatformError {
    PlatformError::Precondition(format!("a {kind} job publishes no proof to verify"))
}

/// One job kind (see the module doc).
#[async_trait]
pub trait JobKind: Send + Sync + 'static {
    /// The job kind as recorded, e.g. `reckle.batch`.
    fn name(&self) -> &'static str;
    /// Its task kinds (not counting the shared [`PLAN`]).
    fn task_kinds(&self) -> &'static [TaskKind];
    /// The request of a `SubmitJob` whose params are this kind's proto message (`None`: another
    /// kind's, or a kind whose message `grpc.rs` converts).
    fn from_pb(&self, params: &api::v1::submit_job_request::Params) -> Option<Result<Submission, PlatformError>> {
        let _ = params;
        None
    }
    /// Validates `tenant`'s request (SubmitJob): nothing is written for a request refused here.
    async fn validate(&self, p: &Platform, tenant: &str, request: Submission) -> Result<Validated, PlatformError>;
    /// The `plan` task: dispatches the tasks that are ready from the start. May run more than
    /// once for a job (a redelivered plan task), so it dispatches with [`Platform::dispatch`]
    /// (at most once per task id) and writes only fixed keys.
    async fn plan(&self, p: &Platform, job: &jobs::JobRecord) -> Result<(), PlatformError>;
    /// A worker's task of kind `task`.
    async fn work(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError>;
    /// The executor, on a report of kind `task`: record it and dispatch what it unblocks.
    async fn on_done(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError>;
    /// The aggregator's task of kind `task`: verify and publish the outputs.
    async fn finish(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let _ = (p, lease);
        Err(PlatformError::Config(format!("job kind {} has no aggregator task {}", self.name(), task.name)))
    }
    /// Run by a worker that serves this kind before it claims anything, with the kind's jobs
    /// that have not ended: prepares what their tasks need and takes long to make (Reckle's
    /// circuits), so that a freshly started worker does not hold a lease while it builds them.
    async fn warm_up(&self, p: &Platform, active: &[jobs::JobRecord]) -> Result<(), PlatformError> {
        let _ = (p, active);
        Ok(())
    }
    /// Object prefixes of a job's intermediate data: deleted when the job ends, with its
    /// `inputs/` (see [`crate::lifecycle`]).
    fn scratch_prefixes(&self, job: &str) -> Vec<String>;
    /// What a done job keeps of its intermediate data and inputs because later jobs read it
    /// (object keys, or prefixes ending in '/'): the rest goes when the job ends. Default:
    /// nothing. Each kind that keeps something says why in [`crate::lifecycle`]'s table.
    fn kept_when_done(&self, job: &str) -> Vec<String> {
        let _ = job;
        Vec::new()
    }
    /// `VerifyProof` on a done job of this kind: checks the job's published outputs against
    /// what the caller pins (nothing found beside a proof decides on its own whether it
    /// verifies). `Ok(Ok(what it checked against))` when they verify, `Ok(Err(why not))` when
    /// they do not; `Err` for a pin that does not parse (naming the field), a kind that
    /// publishes no proof, or a backend that did not answer. Required: every kind says how its
    /// outputs are verified.
    async fn verify_outputs(&self, p: &Platform, job: &jobs::JobRecord, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError>;
    /// How long a job of this kind is expected to take at most, submit to end (seconds): the
    /// `ProverJobOverdue` alert fires for a job older than this
    /// (`prover_job_expected_seconds{kind}`; `--job-expected KIND=SECONDS` overrides it).
    fn expected_secs(&self) -> u64 {
        3600
    }
    /// The bounds a request of this kind can meet, each naming the request field its
    /// validation names when the bound is crossed ([`crate::limits`]; `GetLimits`).
    fn limits(&self) -> Vec<crate::limit::Limit> {
        Vec::new()
    }
}

/// The job kinds a platform serves, by name, and their task kinds.
#[derive(Clone)]
pub struct Registry {
    kinds: Vec<Arc<dyn JobKind>>,
}

impl Registry {
    /// Reckle batch and update, Pari batch, circom registration and Pari circom, Hekaton, no-op,
    /// Testudo.
    pub fn builtin() -> Self {
        Self::new(vec![
            Arc::new(contract::Typed::new(reckle::ReckleBatch::default())),
            Arc::new(contract::Typed::new(reckle::ReckleUpdate::default())),
            Arc::new(contract::Typed::new(pari::PariBatch)),
            Arc::new(contract::Typed::new(circom::CircuitRegister)),
            Arc::new(contract::Typed::new(circom::PariCircom)),
            Arc::new(contract::Typed::new(hekaton::Hekaton)),
            Arc::new(contract::Typed::new(noop::Noop)),
            Arc::new(contract::Typed::new(testudo::Testudo)),
        ])
    }

    pub fn new(kinds: Vec<Arc<dyn JobKind>>) -> Self {
        Self { kinds }
    }

    /// Adds a kind (a later one of the same name replaces it).
    pub fn with(mut self, kind: Arc<dyn JobKind>) -> Self {
        self.kinds.retain(|k| k.name() != kind.name());
        self.kinds.push(kind);
        self
    }

    /// The request of a `SubmitJob` whose params a kind on the typed contract parses itself.
    pub fn from_pb(&self, params: &api::v1::submit_job_request::Params) -> Option<Result<Submission, PlatformError>> {
        self.kinds.iter().find_map(|k| k.from_pb(params))
    }

    /// Every job kind, in registration order.
    pub fn kinds(&self) -> impl Iterator<Item = &Arc<dyn JobKind>> {
        self.kinds.iter()
    }

    pub fn job_kind(&self, name: &str) -> Option<&Arc<dyn JobKind>> {
        self.kinds.iter().find(|k| k.name() == name)
    }

    /// The task kind named `name` and the first job kind that owns it (task kinds shared by
    /// several job kinds, like Reckle's, behave the same for each).
    pub fn task(&self, name: &str) -> Option<(TaskKind, &Arc<dyn JobKind>)> {
        self.kinds.iter().find_map(|k| k.task_kinds().iter().find(|t| t.name == name).map(|t| (*t, k)))
    }

    /// Every task kind once, [`PLAN`] first.
    pub fn task_kinds(&self) -> Vec<TaskKind> {
        let mut out = vec![PLAN];
        for k in &self.kinds {
            for t in k.task_kinds() {
                if !out.iter().any(|o| o.name == t.name) {
                    out.push(*t);
                }
            }
        }
        out
    }

    /// The registry as data (`prover kinds`): each job kind with its task kinds, and each task
    /// kind with the role that serves it and its deadline. The lists the chart schema and the
    /// service contract hold are checked against it (`crates/platform/tests/registry_lists.rs`).
    pub fn describe(&self) -> serde_json::Value {
        let task = |t: &TaskKind| serde_json::json!({ "name": t.name, "role": t.served_by.as_str(), "deadline_secs": t.deadline.as_secs() });
        serde_json::json!({
            "job_kinds": self.kinds.iter().map(|k| serde_json::json!({
                "name": k.name(),
                "task_kinds": k.task_kinds().iter().map(|t| t.name).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
            "task_kinds": self.task_kinds().iter().map(task).collect::<Vec<_>>(),
        })
    }

    /// [`Registry::describe`] as the text table `prover kinds` prints, which
    /// `docs/service-contract.md` holds verbatim (checked by a test).
    pub fn table(&self) -> String {
        let mut out = format!("{:<20} {:<11} {:>9}  job kinds\n", "task kind", "role", "deadline");
        for t in self.task_kinds() {
            let owners: Vec<&str> = self.kinds.iter().filter(|k| k.task_kinds().iter().any(|o| o.name == t.name)).map(|k| k.name()).collect();
            let owners = if owners.is_empty() { "every job (its plan)".to_string() } else { owners.join(", ") };
            out += &format!("{:<20} {:<11} {:>8}s  {owners}\n", t.name, t.served_by.as_str(), t.deadline.as_secs());
        }
        out
    }

    /// The task kinds one role serves.
    pub fn served_by(&self, role: Served) -> Vec<TaskKind> {
        self.task_kinds().into_iter().filter(|t| t.served_by == role).collect()
    }

    /// The job kinds served.
    pub fn job_kinds(&self) -> &[Arc<dyn JobKind>] {
        &self.kinds
    }

    /// The task kinds of job kind `name` (with [`PLAN`]), for purges and the reconciler.
    pub fn task_kinds_of(&self, name: &str) -> Vec<TaskKind> {
        let mut out = vec![PLAN];
        if let Some(k) = self.job_kind(name) {
            out.extend_from_slice(k.task_kinds());
        }
        out
    }
}

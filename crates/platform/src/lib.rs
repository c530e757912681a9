//! The platform's job pipeline, written against three traits only — [`Queue`] (tasks with
//! leases), [`BlobStore`] (inputs, intermediate proofs, outputs) and [`JobStore`] (job records and
//! DAG state) — so that the same code runs embedded (in-process queue and job store, filesystem
//! blobs) and distributed (Redis and S3), with any number of processes per role.
//!
//! Roles (each a loop that can run in its own process or task):
//!
//! * **planner** ([`Platform::submit`]): validates a job, records it, stores its inputs under
//!   `jobs/<id>/inputs/`, and dispatches the tasks that are ready from the start. For a Reckle
//!   batch job the DAG is one task per node of `T'_I` (buckets first); for a Reckle update job it
//!   is only the affected paths (`reckle::plan_update`), and the nodes it keeps are copied from
//!   the base job's outputs. An invalid job is refused before anything is written; a job whose
//!   planning fails half-way is removed again.
//! * **worker** ([`Platform::run_worker`]): claims `reckle.leaf` / `reckle.node` tasks, proves the
//!   node (a pure function of the job inputs and the children's proofs), writes it to
//!   `jobs/<id>/nodes/<level>-<index>.bin` (a fixed key, so a redelivered task overwrites the
//!   same object), reports `reckle.done`, and completes its lease. Tasks of a job that has ended
//!   (cancelled, failed) are dropped unproved.
//! * **executor** ([`Platform::run_executor`]): consumes `reckle.done` reports, marks the node done
//!   in the job store (atomically, once), and dispatches a parent the moment its last child in
//!   the plan is done — the work closest to the root is released first; the root releases
//!   `reckle.finish`. All state lives in the job store, so several executors may run and a
//!   restarted one resumes where the others are.
//! * **aggregator** ([`Platform::run_aggregator`]): claims `reckle.finish`, assembles the
//!   statement and `Λ_I`, **verifies** the root proof, writes `jobs/<id>/proof/` (the files of
//!   `reckle::files`) and only then marks the job done.
//!
//! Cancellation ([`Platform::cancel`]) moves the job to its final state first (so no role
//! dispatches for it any more), then purges its waiting tasks and deletes its inputs and
//! intermediate proofs; a proof a worker was still writing is deleted by the executor when its
//! report arrives.

pub mod grpc;
pub mod metrics;
pub mod pari_jobs;
pub mod service;

pub use pari_jobs::{PariJobSpec, JOB_PARI_BATCH, KIND_PARI_BUNDLE, KIND_PARI_DONE, KIND_PARI_PROVE, KIND_PARI_SETUP};

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use blobstore::{BlobError, BlobStore};
use bytes::Bytes;
use jobs::{Created, JobError, JobRecord, JobState, JobStore, TaskCounts};
use queue::{Lease, Queue, QueueError, TaskMessage};
use reckle::{files, BatchProof, Change, Child, Circuits, NodeId, NodeProof, Params, Statement, Tree};
use tokio::sync::watch;
use tracing::Instrument;

pub const KIND_LEAF: &str = "reckle.leaf";
pub const KIND_NODE: &str = "reckle.node";
pub const KIND_DONE: &str = "reckle.done";
pub const KIND_FINISH: &str = "reckle.finish";
/// Every task kind, for purges and queue metrics.
pub const TASK_KINDS: [&str; 10] = [
    KIND_LEAF,
    KIND_NODE,
    KIND_DONE,
    KIND_FINISH,
    KIND_PARI_SETUP,
    KIND_PARI_PROVE,
    KIND_PARI_DONE,
    KIND_PARI_BUNDLE,
    KIND_NOOP,
    KIND_NOOP_DONE,
];

pub const KIND_NOOP: &str = "noop";
pub const KIND_NOOP_DONE: &str = "noop.done";
pub const JOB_NOOP: &str = "noop";
pub const JOB_RECKLE_BATCH: &str = "reckle.batch";
pub const JOB_RECKLE_UPDATE: &str = "reckle.update";

/// Largest tree a job may ask for (2^24 leaves, 128 MiB of values).
pub const MAX_LOG_N: u32 = 24;
/// Largest batch (the job spec is kept in the job store, not the blob store).
pub const MAX_BATCH: usize = 4096;
/// Most changes in one update job.
pub const MAX_CHANGES: usize = 1024;

#[derive(Debug, thiserror::Error)]
pub enum PlatformError {
    /// Bad input; the message names the field.
    #[error("invalid {field}: {reason}")]
    InvalidJob { field: &'static str, reason: String },
    /// A valid request that cannot be served in the current state (idempotency key reuse, a
    /// base job that is not done).
    #[error("{0}")]
    Precondition(String),
    #[error("no job {0}")]
    NotFound(String),
    #[error(transparent)]
    Queue(#[from] QueueError),
    #[error(transparent)]
    Blob(#[from] BlobError),
    #[error(transparent)]
    Jobs(JobError),
    #[error("proof system: {0}")]
    Proof(#[from] reckle::Error),
    #[error("corrupt job data: {0}")]
    Corrupt(String),
}

impl From<JobError> for PlatformError {
    fn from(e: JobError) -> Self {
        match e {
            JobError::Invalid { field, reason } => PlatformError::InvalidJob { field, reason },
            JobError::IdempotencyConflict { .. } => PlatformError::Precondition(e.to_string()),
            JobError::NotFound(id) => PlatformError::NotFound(id),
            e => PlatformError::Jobs(e),
        }
    }
}

pub(crate) fn invalid(field: &'static str, reason: impl Into<String>) -> PlatformError {
    PlatformError::InvalidJob { field, reason: reason.into() }
}

/// Where a job's leaf values come from.
#[derive(Clone, Debug)]
pub enum Leaves {
    Inline(Vec<u64>),
    /// An object in the platform's blob store (`leaves.bin` format).
    Object(String),
}

/// A job as submitted.
#[derive(Clone, Debug)]
pub enum JobRequest {
    ReckleBatch { log_n: u32, log_bucket: u32, batch: Vec<u64>, leaves: Leaves },
    ReckleUpdate { base_job: String, changes: Vec<Change> },
    /// `count` proofs of a built-in circuit family, instances from seeds `seed_start..`, in
    /// bundles of `bundle_size` (rounded up to whole prove tasks of `per_task` proofs).
    PariBatch { circuit: pari::circuits::CircuitFamily, seed_start: u64, count: u64, per_task: u64, bundle_size: u64 },
    /// `tasks` tasks that do nothing: measures the orchestration itself (not offered over gRPC).
    Noop { tasks: u64 },
}

/// What a Reckle job proves, as recorded in the job store.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReckleJobSpec {
    pub log_n: u32,
    pub log_bucket: u32,
    /// The batch proved (after the update, for an update job).
    pub batch: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateSpec>,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpdateSpec {
    pub base_job: String,
    pub base_batch: Vec<u64>,
    pub changes: Vec<Change>,
}

impl ReckleJobSpec {
    pub fn params(&self) -> Result<Params, PlatformError> {
        Params::new(self.log_n, self.log_bucket).map_err(|e| invalid("log_n", e.to_string()))
    }

    /// Nodes of `T'_I` (the whole proof structure).
    pub fn plan(&self) -> Result<BTreeSet<NodeId>, PlatformError> {
        Ok(reckle::plan_batch(self.params()?, &self.batch)?.into_iter().collect())
    }

    /// Nodes this job proves: all of `T'_I` for a batch job, the affected paths for an update.
    pub fn todo(&self) -> Result<BTreeSet<NodeId>, PlatformError> {
        match &self.update {
            None => self.plan(),
            Some(u) => Ok(reckle::plan_update(self.params()?, &u.base_batch, &u.changes)?.reprove.into_iter().collect()),
        }
    }
}

/// A job as [`Platform::wait`] reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JobOutcome {
    Running { done: u64, total: u64 },
    Done,
    Failed(String),
    Cancelled(String),
}

impl JobOutcome {
    fn of(rec: &JobRecord) -> Self {
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

pub fn node_key(job: &str, id: NodeId) -> String {
    format!("jobs/{job}/nodes/{}-{}.bin", id.level, id.index)
}

pub fn proof_prefix(job: &str) -> String {
    format!("jobs/{job}/proof/")
}

fn leaves_key(job: &str) -> String {
    format!("jobs/{job}/inputs/leaves.bin")
}

fn task_kind(params: Params, id: NodeId) -> &'static str {
    if id.level == params.log_bucket {
        KIND_LEAF
    } else {
        KIND_NODE
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct NodeTask {
    level: u32,
    index: u64,
}

/// A job loaded once per process: spec, tree and plan.
struct LoadedJob {
    spec: ReckleJobSpec,
    params: Params,
    tree: Tree,
    plan: BTreeSet<NodeId>,
    todo: BTreeSet<NodeId>,
}

/// Shared state of one process running any of the roles.
pub struct Platform {
    queue: Arc<dyn Queue>,
    blobs: Arc<dyn BlobStore>,
    jobs: Arc<dyn JobStore>,
    circuits: Mutex<HashMap<Params, Arc<Circuits>>>,
    building: tokio::sync::Mutex<()>,
    loaded: Mutex<HashMap<String, Arc<LoadedJob>>>,
    drain_timeout: Mutex<Duration>,
}

fn now_us() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_micros() as u64).unwrap_or(0)
}

static NOOP_LATENCIES: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());

/// Tasks running in this process (all roles), for the busy/in-flight gauges.
static IN_FLIGHT: std::sync::atomic::AtomicI64 = std::sync::atomic::AtomicI64::new(0);

impl Platform {
    pub fn new(queue: Arc<dyn Queue>, blobs: Arc<dyn BlobStore>, jobs: Arc<dyn JobStore>) -> Arc<Self> {
        Arc::new(Self {
            queue,
            blobs,
            jobs,
            circuits: Mutex::new(HashMap::new()),
            building: tokio::sync::Mutex::new(()),
            loaded: Mutex::new(HashMap::new()),
            drain_timeout: Mutex::new(Duration::from_secs(300)),
        })
    }

    /// How long a stopping worker may spend finishing its task before it releases the lease
    /// (default 300 s).
    pub fn set_drain_timeout(&self, d: Duration) {
        *self.drain_timeout.lock().expect("mutex") = d;
    }

    pub fn queue(&self) -> &Arc<dyn Queue> {
        &self.queue
    }
    pub fn blobs(&self) -> &Arc<dyn BlobStore> {
        &self.blobs
    }
    pub fn job_store(&self) -> &Arc<dyn JobStore> {
        &self.jobs
    }

    /// Circuit data per `(ℓ, q)`, built once per process.
    pub async fn circuits(&self, params: Params) -> Result<Arc<Circuits>, PlatformError> {
        if let Some(c) = self.circuits.lock().expect("mutex").get(&params) {
            return Ok(c.clone());
        }
        // One build at a time: concurrent tasks wait for the first instead of building again.
        let _building = self.building.lock().await;
        if let Some(c) = self.circuits.lock().expect("mutex").get(&params) {
            return Ok(c.clone());
        }
        let built = tokio::task::spawn_blocking(move || Circuits::build(params))
            .await
            .map_err(|e| PlatformError::Corrupt(e.to_string()))??;
        let built = Arc::new(built);
        self.circuits.lock().expect("mutex").entry(params).or_insert(built.clone());
        Ok(built)
    }

    pub(crate) async fn record(&self, job: &str) -> Result<JobRecord, PlatformError> {
        self.jobs.get(job).await?.ok_or_else(|| PlatformError::NotFound(job.into()))
    }

    async fn load(&self, job: &str) -> Result<Arc<LoadedJob>, PlatformError> {
        if let Some(j) = self.loaded.lock().expect("mutex").get(job) {
            return Ok(j.clone());
        }
        let rec = self.record(job).await?;
        let spec: ReckleJobSpec =
            serde_json::from_str(&rec.spec).map_err(|e| PlatformError::Corrupt(format!("job {job} spec: {e}")))?;
        let values = reckle::decode_values(&self.blobs.get(&leaves_key(job)).await?)?;
        let params = spec.params()?;
        let tree = tokio::task::spawn_blocking(move || Tree::build(params, values))
            .await
            .map_err(|e| PlatformError::Corrupt(e.to_string()))??;
        let j = Arc::new(LoadedJob { plan: spec.plan()?, todo: spec.todo()?, params, spec, tree });
        self.loaded.lock().expect("mutex").insert(job.to_string(), j.clone());
        Ok(j)
    }

    /// Planner: validates, records, stores inputs and dispatches the first tasks. Returns the job
    /// id and whether it was created (false: the idempotency key named an earlier job).
    pub async fn submit(&self, request: JobRequest, idempotency_key: Option<&str>) -> Result<(String, bool), PlatformError> {
        if let Some(key) = idempotency_key {
            jobs::check_idempotency_key(key)?;
        }
        let job_kind = match &request {
            JobRequest::ReckleBatch { .. } => JOB_RECKLE_BATCH,
            JobRequest::ReckleUpdate { .. } => JOB_RECKLE_UPDATE,
            JobRequest::PariBatch { .. } => JOB_PARI_BATCH,
            JobRequest::Noop { .. } => JOB_NOOP,
        };
        if let JobRequest::Noop { tasks } = request {
            return self.submit_noop(tasks).await;
        }
        if let JobRequest::PariBatch { circuit, seed_start, count, per_task, bundle_size } = request {
            let spec = match PariJobSpec::new(circuit, seed_start, count, per_task, bundle_size) {
                Ok(s) => s,
                Err(e) => {
                    ::metrics::counter!("prover_jobs_total", "kind" => job_kind, "outcome" => "rejected").increment(1);
                    return Err(e);
                }
            };
            return self.submit_pari(spec, idempotency_key).await;
        }
        let (kind, spec, values, copy_from) = match self.plan_request(request).await {
            Ok(planned) => planned,
            Err(e) => {
                if matches!(e, PlatformError::InvalidJob { .. } | PlatformError::Precondition(_)) {
                    ::metrics::counter!("prover_jobs_total", "kind" => job_kind, "outcome" => "rejected").increment(1);
                }
                return Err(e);
            }
        };
        let todo = spec.todo()?;
        let params = spec.params()?;
        let mut tasks: BTreeMap<String, TaskCounts> = BTreeMap::new();
        for id in &todo {
            tasks.entry(task_kind(params, *id).to_string()).or_default().total += 1;
        }
        let job = uuid::Uuid::new_v4().to_string();
        let spec_json = serde_json::to_string(&spec).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        let fingerprint = fingerprint(&spec_json, &values);
        let mut rec = JobRecord::new(&job, kind, spec_json);
        rec.tasks = tasks;
        match self.jobs.create(&rec, idempotency_key.map(|k| (k, fingerprint.as_str()))).await? {
            Created::Existing(id) => return Ok((id, false)),
            Created::New => {}
        }
        match self.start(&job, &spec, params, &todo, values, copy_from.as_deref()).await {
            Ok(()) => {
                ::metrics::counter!("prover_jobs_submitted_total", "kind" => kind).increment(1);
                tracing::info!(job = %job, kind, tasks = todo.len(), "job planned");
                Ok((job, true))
            }
            Err(e) => {
                // Nothing half-written: remove what was stored and dispatched.
                tracing::warn!(job = %job, error = %e, "planning failed; removing the job");
                for k in TASK_KINDS {
                    let _ = self.queue.purge_job(k, &job).await;
                }
                let _ = self.blobs.delete_prefix(&format!("jobs/{job}/")).await;
                let _ = self.jobs.delete(&job).await;
                Err(e)
            }
        }
    }

    async fn submit_pari(&self, spec: PariJobSpec, idempotency_key: Option<&str>) -> Result<(String, bool), PlatformError> {
        let job = uuid::Uuid::new_v4().to_string();
        let spec_json = serde_json::to_string(&spec).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        let mut rec = JobRecord::new(&job, JOB_PARI_BATCH, spec_json.clone());
        rec.tasks = BTreeMap::from([
            (KIND_PARI_SETUP.to_string(), TaskCounts { total: 1, done: 0 }),
            (KIND_PARI_PROVE.to_string(), TaskCounts { total: spec.prove_tasks(), done: 0 }),
            (KIND_PARI_BUNDLE.to_string(), TaskCounts { total: spec.bundles(), done: 0 }),
        ]);
        let fp = fingerprint(&spec_json, &[]);
        if let Created::Existing(id) = self.jobs.create(&rec, idempotency_key.map(|k| (k, fp.as_str()))).await? {
            return Ok((id, false));
        }
        let started = async {
            self.jobs.mark_released(&job, "setup-0").await?;
            self.enqueue_pari(&job, KIND_PARI_SETUP, "setup", 0).await?;
            self.jobs.transition(&job, JobState::Running, "").await?;
            Ok::<(), PlatformError>(())
        };
        if let Err(e) = started.await {
            for k in TASK_KINDS {
                let _ = self.queue.purge_job(k, &job).await;
            }
            let _ = self.jobs.delete(&job).await;
            return Err(e);
        }
        ::metrics::counter!("prover_jobs_submitted_total", "kind" => JOB_PARI_BATCH).increment(1);
        tracing::info!(job = %job, kind = JOB_PARI_BATCH, proofs = spec.count, "job planned");
        Ok((job, true))
    }

    async fn submit_noop(&self, tasks: u64) -> Result<(String, bool), PlatformError> {
        if tasks == 0 || tasks > 1_000_000 {
            return Err(invalid("tasks", format!("must be in 1..=1000000, got {tasks}")));
        }
        let job = uuid::Uuid::new_v4().to_string();
        let mut rec = JobRecord::new(&job, JOB_NOOP, "{}");
        rec.tasks = BTreeMap::from([(KIND_NOOP.to_string(), TaskCounts { total: tasks, done: 0 })]);
        self.jobs.create(&rec, None).await?;
        self.jobs.transition(&job, JobState::Running, "").await?;
        for i in 0..tasks {
            let payload = now_us().to_string();
            self.queue.enqueue(KIND_NOOP, TaskMessage { job_id: job.clone(), task_id: i.to_string(), payload, failures: 0 }).await?;
        }
        Ok((job, true))
    }

    /// Executor: a no-op task came back; its payload is the enqueue time (µs), so the time
    /// from dispatch to this point is one task's orchestration latency.
    async fn noop_done(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        if let Ok(t0) = lease.task.payload.parse::<u64>() {
            let now = now_us();
            ::metrics::histogram!("prover_noop_latency_seconds").record(now.saturating_sub(t0) as f64 / 1e6);
            NOOP_LATENCIES.lock().expect("mutex").push((t0, now));
        }
        if self.jobs.task_done(job, KIND_NOOP, &lease.task.task_id).await? {
            let rec = self.record(job).await?;
            let c = rec.tasks.get(KIND_NOOP).copied().unwrap_or_default();
            if c.done == c.total && self.jobs.transition(job, JobState::Done, "").await? {
                self.count_end(job, "done").await;
            }
        }
        Ok(())
    }

    /// `(enqueued, reported)` times in µs of the no-op tasks this process's executors have seen
    /// since the last call (orchestration benchmarks).
    pub fn take_noop_latencies() -> Vec<(u64, u64)> {
        std::mem::take(&mut *NOOP_LATENCIES.lock().expect("mutex"))
    }

    /// Validates a request into (job kind, spec, leaf values, base job to copy kept nodes from).
    async fn plan_request(
        &self,
        request: JobRequest,
    ) -> Result<(&'static str, ReckleJobSpec, Vec<u64>, Option<String>), PlatformError> {
        match request {
            JobRequest::ReckleBatch { log_n, log_bucket, batch, leaves } => {
                if log_n > MAX_LOG_N {
                    return Err(invalid("log_n", format!("{log_n} is above the platform's limit of {MAX_LOG_N}")));
                }
                let params = Params::new(log_n, log_bucket).map_err(|e| invalid("log_bucket", e.to_string()))?;
                if batch.len() > MAX_BATCH {
                    return Err(invalid("batch", format!("{} indices, at most {MAX_BATCH}", batch.len())));
                }
                let values = match leaves {
                    Leaves::Inline(v) => v,
                    Leaves::Object(key) => {
                        blobstore::check_key(&key).map_err(|e| invalid("leaves.object_key", e.to_string()))?;
                        let bytes = match self.blobs.get(&key).await {
                            Err(BlobError::NotFound(_)) => return Err(invalid("leaves.object_key", format!("no object {key:?}"))),
                            r => r?,
                        };
                        reckle::decode_values(&bytes).map_err(|e| invalid("leaves.object_key", e.to_string()))?
                    }
                };
                if values.len() as u64 != params.num_leaves() {
                    return Err(invalid(
                        "leaves",
                        format!("expected {} values for log_n = {log_n}, got {}", params.num_leaves(), values.len()),
                    ));
                }
                reckle::plan_batch(params, &batch).map_err(|e| invalid("batch", e.to_string()))?;
                Ok((JOB_RECKLE_BATCH, ReckleJobSpec { log_n, log_bucket, batch, update: None }, values, None))
            }
            JobRequest::ReckleUpdate { base_job, changes } => {
                if changes.len() > MAX_CHANGES {
                    return Err(invalid("changes", format!("{} changes, at most {MAX_CHANGES}", changes.len())));
                }
                jobs::check_id(&base_job).map_err(|_| invalid("base_job_id", format!("{base_job:?} is not a job id")))?;
                let base = self.jobs.get(&base_job).await?.ok_or_else(|| invalid("base_job_id", format!("no job {base_job}")))?;
                if base.state != JobState::Done {
                    return Err(PlatformError::Precondition(format!(
                        "base job {base_job} is {}, not done",
                        base.state.as_str()
                    )));
                }
                let base_spec: ReckleJobSpec =
                    serde_json::from_str(&base.spec).map_err(|e| PlatformError::Corrupt(format!("base job spec: {e}")))?;
                let params = base_spec.params()?;
                let plan = reckle::plan_update(params, &base_spec.batch, &changes).map_err(|e| invalid("changes", e.to_string()))?;
                let mut values = reckle::decode_values(&self.blobs.get(&leaves_key(&base_job)).await?)?;
                for c in &changes {
                    if let Change::Set { index, value } = *c {
                        values[index as usize] = value;
                    }
                }
                let spec = ReckleJobSpec {
                    log_n: base_spec.log_n,
                    log_bucket: base_spec.log_bucket,
                    batch: plan.batch,
                    update: Some(UpdateSpec { base_job: base_job.clone(), base_batch: base_spec.batch, changes }),
                };
                Ok((JOB_RECKLE_UPDATE, spec, values, Some(base_job)))
            }
            JobRequest::PariBatch { .. } | JobRequest::Noop { .. } => unreachable!("planned by submit_pari / submit_noop"),
        }
    }

    async fn start(
        &self,
        job: &str,
        spec: &ReckleJobSpec,
        params: Params,
        todo: &BTreeSet<NodeId>,
        values: Vec<u64>,
        copy_from: Option<&str>,
    ) -> Result<(), PlatformError> {
        self.blobs.put(&leaves_key(job), Bytes::from(reckle::encode_values(&values))).await?;
        let plan = spec.plan()?;
        if let Some(base) = copy_from {
            // Nodes the update keeps: their subtrees did not change, so the base job's proofs
            // stand.
            for id in plan.difference(todo) {
                let bytes = self.blobs.get(&node_key(base, *id)).await?;
                self.blobs.put(&node_key(job, *id), bytes).await?;
            }
        }
        for id in todo {
            let waits_for_child = id.level > params.log_bucket && id.children().iter().any(|c| todo.contains(c));
            if !waits_for_child {
                self.jobs.mark_released(job, &id.to_string()).await?;
                self.enqueue_node(job, *id, task_kind(params, *id)).await?;
            }
        }
        self.jobs.transition(job, JobState::Running, "").await?;
        Ok(())
    }

    async fn enqueue_node(&self, job: &str, id: NodeId, kind: &str) -> Result<(), PlatformError> {
        let payload = serde_json::to_string(&NodeTask { level: id.level, index: id.index }).expect("serialize");
        self.queue
            .enqueue(kind, TaskMessage { job_id: job.into(), task_id: id.to_string(), payload, failures: 0 })
            .await?;
        Ok(())
    }

    fn task_node(lease: &Lease) -> Result<NodeId, PlatformError> {
        let t: NodeTask = serde_json::from_str(&lease.task.payload).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        Ok(NodeId::new(t.level, t.index))
    }

    /// True if the job has ended (cancelled, failed, done) or no longer exists.
    async fn ended(&self, job: &str) -> Result<bool, PlatformError> {
        Ok(self.jobs.get(job).await?.is_none_or(|r| r.state.is_terminal()))
    }

    /// Worker: one claimed task.
    async fn prove_task(&self, lease: &Lease) -> Result<(), PlatformError> {
        if lease.kind == KIND_NOOP {
            let t = &lease.task;
            let done = TaskMessage { job_id: t.job_id.clone(), task_id: t.task_id.clone(), payload: t.payload.clone(), failures: 0 };
            return Ok(self.queue.enqueue(KIND_NOOP_DONE, done).await?);
        }
        if lease.kind.starts_with("pari.") {
            return self.pari_work(lease).await;
        }
        let job = &lease.task.job_id;
        if self.ended(job).await? {
            tracing::info!("job has ended; task dropped");
            return Ok(());
        }
        let id = Self::task_node(lease)?;
        let j = self.load(job).await?;
        let circuits = self.circuits(j.params).await?;
        let proof = if id.level == j.params.log_bucket {
            let selected = reckle::selected_in_bucket(j.params, &j.spec.batch, id.index);
            let (c, j2) = (circuits.clone(), j.clone());
            tokio::task::spawn_blocking(move || reckle::prove_bucket(&c, id.index, j2.tree.bucket_values(id.index)?, &selected))
                .await
                .map_err(|e| PlatformError::Corrupt(e.to_string()))??
        } else {
            let mut children = Vec::with_capacity(2);
            for child in id.children() {
                if j.plan.contains(&child) {
                    let bytes = self.blobs.get(&node_key(job, child)).await?;
                    children.push(Child::Proven(NodeProof::from_bytes(&circuits, &bytes)?));
                } else {
                    children.push(Child::Hash(j.tree.hash(child.level, child.index)?));
                }
            }
            let c = circuits.clone();
            tokio::task::spawn_blocking(move || reckle::prove_node(&c, id, &children[0], &children[1]))
                .await
                .map_err(|e| PlatformError::Corrupt(e.to_string()))??
        };
        self.blobs.put(&node_key(job, id), Bytes::from(proof.to_bytes())).await?;
        self.enqueue_node(job, id, KIND_DONE).await
    }

    /// Claims the first available task of `kinds`, or waits a little.
    async fn claim_any(&self, kinds: &[&str], name: &str, stop: &mut watch::Receiver<bool>) -> Result<Option<Lease>, PlatformError> {
        for kind in kinds {
            if let Some(l) = self.queue.claim(kind, name, Duration::ZERO).await? {
                if l.attempt > 1 {
                    ::metrics::counter!("prover_task_redeliveries_total", "kind" => kind.to_string()).increment(1);
                }
                return Ok(Some(l));
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_millis(20)) => {}
            _ = stop.changed() => {}
        }
        Ok(None)
    }

    /// Runs `work` for a lease, then completes or fails it; on a dead-lettered task the job
    /// fails with the reason. When `stop` is set and the task has not finished within the drain
    /// timeout, the lease is released so another worker takes the task at once.
    async fn run_task<F>(&self, lease: Lease, work: F, stop: &watch::Receiver<bool>) -> Result<(), PlatformError>
    where
        F: std::future::Future<Output = Result<(), PlatformError>>,
    {
        let kind = lease.kind.clone();
        let span = tracing::info_span!("task", job = %lease.task.job_id, task = %lease.task.task_id, kind = %kind, attempt = lease.attempt);
        let started = Instant::now();
        // Heartbeat: keep the lease while the task runs, however long it takes; a dead process
        // stops beating and its task is redelivered after one visibility timeout.
        let heartbeat = {
            let (queue, lease) = (self.queue.clone(), lease.clone());
            let every = (queue.visibility_timeout() / 3).max(Duration::from_millis(50));
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(every).await;
                    if let Err(e) = queue.extend(&lease).await {
                        tracing::warn!(job = %lease.task.job_id, task = %lease.task.task_id, error = %e, "lease lost");
                        return;
                    }
                }
            })
        };
        let in_flight = IN_FLIGHT.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
        ::metrics::gauge!("prover_worker_tasks_in_flight").set(in_flight as f64);
        ::metrics::gauge!("prover_worker_busy").set(1.0);
        let drain = *self.drain_timeout.lock().expect("mutex");
        let mut stop = stop.clone();
        let drained = async move {
            let _ = stop.wait_for(|s| *s).await;
            tokio::time::sleep(drain).await;
        };
        let result = tokio::select! {
            r = work.instrument(span.clone()) => Some(r),
            _ = drained => None,
        };
        heartbeat.abort();
        let in_flight = IN_FLIGHT.fetch_sub(1, std::sync::atomic::Ordering::SeqCst) - 1;
        ::metrics::gauge!("prover_worker_tasks_in_flight").set(in_flight as f64);
        ::metrics::gauge!("prover_worker_busy").set(if in_flight > 0 { 1.0 } else { 0.0 });
        let _g = span.enter();
        let Some(result) = result else {
            tracing::warn!("drain timeout: releasing the lease");
            match self.queue.release(&lease).await {
                Ok(()) | Err(QueueError::StaleLease) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        };
        let took = started.elapsed();
        ::metrics::histogram!("prover_task_duration_seconds", "kind" => kind.clone()).record(took.as_secs_f64());
        match result {
            Ok(()) => match self.queue.complete(&lease).await {
                Ok(()) => {
                    ::metrics::counter!("prover_tasks_total", "kind" => kind.clone(), "outcome" => "ok").increment(1);
                    self.queue.record_throughput(&kind, took).await?;
                }
                Err(QueueError::StaleLease) => tracing::warn!("lease lost before completion; the redelivered task wins"),
                Err(e) => return Err(e.into()),
            },
            Err(e) => {
                tracing::warn!(error = %e, "task failed");
                match self.queue.fail(&lease, &e.to_string()).await {
                    Ok(queue::FailOutcome::DeadLettered) => {
                        ::metrics::counter!("prover_tasks_total", "kind" => kind, "outcome" => "dead_lettered").increment(1);
                        self.fail_job(&lease.task.job_id, &format!("task {} failed: {e}", lease.task.task_id)).await?;
                    }
                    Ok(_) => ::metrics::counter!("prover_tasks_total", "kind" => kind, "outcome" => "retried").increment(1),
                    Err(QueueError::StaleLease) => {}
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Ok(())
    }

    /// Counts a job that reached a final state.
    pub(crate) async fn count_end(&self, job: &str, outcome: &'static str) {
        let kind = match self.jobs.get(job).await {
            Ok(Some(r)) => r.kind,
            _ => "unknown".into(),
        };
        ::metrics::counter!("prover_jobs_total", "kind" => kind.clone(), "outcome" => outcome).increment(1);
        if outcome == "done" {
            ::metrics::counter!("prover_proofs_total", "kind" => kind).increment(1);
        }
    }

    pub(crate) async fn fail_job(&self, job: &str, reason: &str) -> Result<(), PlatformError> {
        if self.jobs.transition(job, JobState::Failed, reason).await? {
            self.count_end(job, "failed").await;
            tracing::warn!(job, reason, "job failed");
            for k in TASK_KINDS {
                self.queue.purge_job(k, job).await?;
            }
        }
        Ok(())
    }

    /// Task kinds a worker serves, root-side first.
    pub const WORKER_KINDS: [&'static str; 5] = [KIND_NODE, KIND_LEAF, KIND_PARI_PROVE, KIND_PARI_SETUP, KIND_NOOP];

    /// Worker loop for `reckle.leaf` and `reckle.node` (or the subset `kinds`), until `stop` is
    /// set; the task in hand is finished (or released after the drain timeout).
    pub async fn run_worker(self: Arc<Self>, name: String, stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        self.run_worker_for(name, &Self::WORKER_KINDS, stop).await
    }

    pub async fn run_worker_for(self: Arc<Self>, name: String, kinds: &[&str], mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        while !*stop.borrow() {
            if let Some(lease) = self.claim_any(kinds, &name, &mut stop).await? {
                self.run_task(lease.clone(), self.prove_task(&lease), &stop).await?;
            }
        }
        Ok(())
    }

    /// Executor: records a proven node and dispatches its parent if that was the last child.
    async fn handle_done(&self, lease: &Lease) -> Result<(), PlatformError> {
        if lease.kind == KIND_NOOP_DONE {
            return self.noop_done(lease).await;
        }
        if lease.kind == KIND_PARI_DONE {
            return self.pari_done(lease).await;
        }
        let job = &lease.task.job_id;
        let id = Self::task_node(lease)?;
        let Some(rec) = self.jobs.get(job).await? else { return Ok(()) };
        if rec.state == JobState::Cancelled {
            // A worker finished after the cancellation's clean-up: remove what it wrote.
            self.blobs.delete(&node_key(job, id)).await?;
            return Ok(());
        }
        if rec.state.is_terminal() {
            return Ok(());
        }
        let j = self.load(job).await?;
        self.jobs.task_done(job, task_kind(j.params, id), &id.to_string()).await?;
        // A report delivered again means an executor may have died between recording the
        // release and dispatching: dispatch again (a duplicate task rewrites the same object).
        let again = lease.attempt > 1;
        if id.level == j.params.log_n {
            if self.jobs.mark_released(job, "finish").await? || again {
                self.enqueue_node(job, id, KIND_FINISH).await?;
            }
            return Ok(());
        }
        let parent = id.parent();
        for c in parent.children() {
            if j.todo.contains(&c) && !self.jobs.is_done(job, &c.to_string()).await? {
                return Ok(());
            }
        }
        if self.jobs.mark_released(job, &parent.to_string()).await? || again {
            self.enqueue_node(job, parent, KIND_NODE).await?;
        }
        Ok(())
    }

    /// Executor loop, until `stop` is set.
    pub async fn run_executor(self: Arc<Self>, name: String, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        while !*stop.borrow() {
            if let Some(lease) = self.claim_any(&[KIND_DONE, KIND_PARI_DONE, KIND_NOOP_DONE], &name, &mut stop).await? {
                self.run_task(lease.clone(), self.handle_done(&lease), &stop).await?;
            }
        }
        Ok(())
    }

    /// Aggregator: verifies the root proof against the statement and publishes the proof
    /// directory; the job is done only after that.
    async fn finish(&self, lease: &Lease) -> Result<(), PlatformError> {
        if lease.kind == KIND_PARI_BUNDLE {
            return self.pari_bundle(lease).await;
        }
        let job = &lease.task.job_id;
        if self.ended(job).await? {
            return Ok(());
        }
        let j = self.load(job).await?;
        let circuits = self.circuits(j.params).await?;
        let root = NodeProof::from_bytes(&circuits, &self.blobs.get(&node_key(job, NodeId::new(j.params.log_n, 0))).await?)?;
        let pairs: Vec<(u64, u64)> = j.spec.batch.iter().map(|&i| Ok((i, j.tree.value(i)?))).collect::<Result<_, reckle::Error>>()?;
        let statement = Statement::new(&circuits, j.tree.root(), &pairs)?;
        if let Err(e) = statement.verify(&circuits, &root) {
            // Not retried: a root proof that does not verify will not verify next time either.
            self.fail_job(job, &format!("final verification failed: {e}")).await?;
            return Ok(());
        }
        let mut lambda_nodes = Vec::new();
        for id in &j.plan {
            lambda_nodes.push(NodeProof::from_bytes(&circuits, &self.blobs.get(&node_key(job, *id)).await?)?);
        }
        let lambda = BatchProof::from_node_proofs(&circuits, &j.tree, &j.spec.batch, lambda_nodes)?;
        let dir = proof_prefix(job);
        self.blobs.put(&format!("{dir}{}", files::LAMBDA), Bytes::from(lambda.to_bytes())).await?;
        self.blobs.put(&format!("{dir}{}", files::LEAVES), Bytes::from(reckle::encode_values(j.tree.values()))).await?;
        self.blobs.put(&format!("{dir}{}", files::PROOF), Bytes::from(root.to_bytes())).await?;
        let st = serde_json::to_vec_pretty(&statement).map_err(|e| PlatformError::Corrupt(e.to_string()))?;
        self.blobs.put(&format!("{dir}{}", files::STATEMENT), Bytes::from(st)).await?;
        if self.jobs.transition(job, JobState::Done, "").await? {
            self.count_end(job, "done").await;
            tracing::info!(job = %job, "job done");
        }
        Ok(())
    }

    /// Aggregator loop, until `stop` is set.
    pub async fn run_aggregator(self: Arc<Self>, name: String, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        while !*stop.borrow() {
            if let Some(lease) = self.claim_any(&[KIND_FINISH, KIND_PARI_BUNDLE], &name, &mut stop).await? {
                self.run_task(lease.clone(), self.finish(&lease), &stop).await?;
            }
        }
        Ok(())
    }

    /// Cancels a job: final state first, then its waiting tasks and intermediate objects go.
    /// Returns the record; a job that had already ended is returned unchanged.
    pub async fn cancel(&self, job: &str) -> Result<JobRecord, PlatformError> {
        if self.jobs.transition(job, JobState::Cancelled, "cancelled by the user").await? {
            self.count_end(job, "cancelled").await;
            for k in TASK_KINDS {
                self.queue.purge_job(k, job).await?;
            }
            self.blobs.delete_prefix(&format!("jobs/{job}/nodes/")).await?;
            self.blobs.delete_prefix(&format!("jobs/{job}/inputs/")).await?;
            self.blobs.delete_prefix(&format!("jobs/{job}/pari/")).await?;
            tracing::info!(job, "job cancelled");
        }
        self.record(job).await
    }

    /// Follows a job until it ends, calling `on_progress` on every change.
    pub async fn wait(&self, job: &str, mut on_progress: impl FnMut(&JobOutcome)) -> JobOutcome {
        let mut last = None;
        loop {
            let outcome = match self.jobs.get(job).await {
                Ok(Some(rec)) => JobOutcome::of(&rec),
                Ok(None) => return JobOutcome::Failed(format!("no job {job}")),
                Err(e) => return JobOutcome::Failed(format!("job store: {e}")),
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

/// Identifies a request for idempotency: BLAKE2b-256 of the spec and the leaf values.
fn fingerprint(spec_json: &str, values: &[u64]) -> String {
    use blake2::Digest;
    let mut h = blake2::Blake2b::<blake2::digest::consts::U32>::new();
    h.update((spec_json.len() as u64).to_le_bytes());
    h.update(spec_json.as_bytes());
    for v in values {
        h.update(v.to_le_bytes());
    }
    hex::encode(h.finalize())
}

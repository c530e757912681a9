//! Reckle jobs: a batch proof over a vector commitment (`reckle.batch`), and an update of a
//! finished batch job that re-proves only the affected paths (`reckle.update`).
//!
//! DAG: one task per node of `T'_I` (the union of the batch's root paths, cut at the bucket
//! level `q`): `reckle.leaf` for a bucket, `reckle.node` for an inner node; a parent is
//! dispatched the moment its last child in the plan is done, so the work closest to the root is
//! released first; the root releases `reckle.finish` on the aggregator, which assembles the
//! statement and `Λ_I`, **verifies** the root proof, and publishes the files of
//! `reckle::files`. An update job proves only `reckle::plan_update`'s nodes; its plan task
//! copies the nodes it keeps from the base job.
//!
//! Every output is deterministic in its key (`layout::reckle_node`): a redelivered task
//! overwrites the same object.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use async_trait::async_trait;
use blobstore::BlobError;
use bytes::Bytes;
use jobs::{JobRecord, JobState};
use queue::Lease;
use reckle::{files, BatchProof, Change, Child, Circuits, NodeId, NodeProof, Params, Statement, Tree};

use super::{JobKind, JobRequest, Leaves, Served, TaskKind, Validated};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const JOB_BATCH: &str = "reckle.batch";
pub const JOB_UPDATE: &str = "reckle.update";

pub const LEAF: TaskKind = TaskKind::new("reckle.leaf", Served::Worker, 1800);
pub const NODE: TaskKind = TaskKind::new("reckle.node", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("reckle.done", Served::Executor, 300);
pub const FINISH: TaskKind = TaskKind::new("reckle.finish", Served::Aggregator, 1800);
/// Root side first when a worker's turn asks for nodes (role loops rotate which kind they ask
/// first, so neither kind starves the other).
const TASKS: &[TaskKind] = &[NODE, LEAF, DONE, FINISH, super::reckle_final::WRAP];

/// Largest tree a job may ask for (2^24 leaves, 128 MiB of values).
pub const MAX_LOG_N: u32 = 24;
/// Largest batch (the job spec is kept in the job store, not the blob store).
pub const MAX_BATCH: usize = 4096;
/// Most changes in one update job.
pub const MAX_CHANGES: usize = 1024;

/// What a Reckle job proves, as recorded in the job store.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReckleJobSpec {
    pub log_n: u32,
    pub log_bucket: u32,
    /// The batch proved (after the update, for an update job).
    pub batch: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateSpec>,
    /// Fair share (`--job-window`): of the tasks ready at the start (buckets, and nodes none of
    /// whose children this job proves), at most this many are queued or running at once (fewer
    /// when the tenant's window is shared; see [`super::Window`]). Recorded with the job, so
    /// every executor slides the same window; `None` (specs recorded before windows) releases
    /// them all at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
    /// The final proof (issue 29, [`super::reckle_final`]): the digest of the wrap verifying key
    /// it is made and checked with, pinned by the platform when the job was submitted; `None`:
    /// no final proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap_vk_digest: Option<String>,
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

    fn of(rec: &JobRecord) -> Result<Self, PlatformError> {
        serde_json::from_str(&rec.spec).map_err(|e| PlatformError::Corrupt(format!("job {} spec: {e}", rec.id)))
    }
}

/// The nodes of `todo` ([`ReckleJobSpec::todo`]) that wait for no child, in order: what the
/// plan task releases, a window of them at a time.
fn initial(params: Params, todo: &BTreeSet<NodeId>) -> Vec<NodeId> {
    todo.iter().filter(|id| !(id.level > params.log_bucket && id.children().iter().any(|c| todo.contains(c)))).copied().collect()
}

/// The circuit data a process has built, per `(ℓ, q)`, with each set's size
/// ([`Circuits::heap_bytes`]) and when it was last used, and the lock that makes concurrent
/// tasks wait for one build instead of building again.
#[derive(Default)]
pub(crate) struct CircuitSets {
    built: Arc<std::sync::Mutex<BuiltSets>>,
    building: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Default)]
pub(crate) struct BuiltSets {
    sets: std::collections::HashMap<Params, (Arc<Circuits>, u64, u64)>,
    tick: u64,
}

impl BuiltSets {
    fn get(&mut self, params: &Params) -> Option<Arc<Circuits>> {
        self.tick += 1;
        let tick = self.tick;
        self.sets.get_mut(params).map(|(c, _, used)| {
            *used = tick;
            c.clone()
        })
    }

    fn bytes(&self) -> u64 {
        self.sets.values().map(|(_, b, _)| b).sum()
    }

    /// Keeps `c` (`bytes`), dropping the least recently used other sets until all fit in
    /// `budget`; a set over the whole budget is kept alone (its tasks need it anyway, and the
    /// next set needed replaces it).
    fn put(&mut self, params: Params, c: Arc<Circuits>, bytes: u64, budget: u64) {
        while !self.sets.is_empty() && self.bytes() + bytes > budget {
            let lru = *self.sets.iter().min_by_key(|(_, (_, _, used))| *used).map(|(p, _)| p).expect("not empty");
            self.sets.remove(&lru);
            tracing::info!(log_n = lru.log_n, log_bucket = lru.log_bucket, "circuit set dropped to stay within --circuit-bytes");
        }
        self.tick += 1;
        self.sets.insert(params, (c, bytes, self.tick));
        ::metrics::gauge!("prover_circuit_bytes").set(self.bytes() as f64);
    }
}

impl Platform {
    /// The Reckle circuit sets `(ℓ, q)` this process has built.
    pub fn circuits_built(&self) -> Vec<Params> {
        self.circuits.built.lock().expect("mutex").sets.keys().copied().collect()
    }

    /// Bytes of the circuit sets this process keeps ([`Circuits::heap_bytes`]), within
    /// [`crate::PlatformConfig::circuit_bytes`] unless one set alone is larger.
    pub fn circuit_bytes(&self) -> u64 {
        self.circuits.built.lock().expect("mutex").bytes()
    }

    /// Circuit data per `(ℓ, q)`, built once per process and kept within
    /// [`crate::PlatformConfig::circuit_bytes`], least recently used sets dropped first. The
    /// build runs detached: a task abandoned while it waits (deadline, lost lease) does not
    /// waste it.
    pub async fn circuits(&self, params: Params) -> Result<Arc<Circuits>, PlatformError> {
        if let Some(c) = self.circuits.built.lock().expect("mutex").get(&params) {
            return Ok(c);
        }
        let (cache, building) = (self.circuits.built.clone(), self.circuits.building.clone());
        // The wrap proving key, where this process holds one, is counted in the same budget.
        let budget = self.config().circuit_bytes.saturating_sub(self.wrap_resident_bytes());
        tokio::spawn(async move {
            let _building = building.lock_owned().await;
            if let Some(c) = cache.lock().expect("mutex").get(&params) {
                return Ok(c);
            }
            let started = std::time::Instant::now();
            let built = Arc::new(tokio::task::spawn_blocking(move || Circuits::build(params)).await.map_err(corrupt)??);
            let bytes = built.heap_bytes();
            tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, bytes, took = ?started.elapsed(), "circuit set built");
            cache.lock().expect("mutex").put(params, built.clone(), bytes, budget);
            Ok(built)
        })
        .await
        .map_err(corrupt)?
    }
}

/// Stores the root key of `circuits` ([`layout::reckle_root_key`]) unless it is there already,
/// for verifiers that build nothing ([`Platform::root_key`]). Every done job's finish step does
/// it before publishing, so a done job's shape always has its key stored (an error here is
/// retried with the task).
async fn publish_root_key(p: &Platform, circuits: &Circuits) -> Result<(), PlatformError> {
    let params = circuits.params();
    if reckle::pinned_root_key(params).is_none() {
        return Ok(());
    }
    let key = layout::reckle_root_key(params);
    if !p.blobs().exists(&key).await? {
        p.blobs().put(&key, Bytes::from(circuits.root_key().to_bytes())).await?;
    }
    Ok(())
}

/// What every task of a job needs, derived from its spec alone (node ids: kilobytes to a few
/// megabytes), cached per process. Executors need no more than this.
pub(crate) struct JobPlan {
    spec: ReckleJobSpec,
    params: Params,
    plan: BTreeSet<NodeId>,
    todo: BTreeSet<NodeId>,
    /// [`initial`], sorted.
    initial: Vec<NodeId>,
}

/// What workers and the aggregator also need: the whole tree (about 72 bytes a leaf: the
/// values and every level's digests). Cached within the process's byte budget.
pub(crate) struct LoadedJob {
    job: Arc<JobPlan>,
    tree: Tree,
}

impl std::ops::Deref for LoadedJob {
    type Target = JobPlan;
    fn deref(&self) -> &JobPlan {
        &self.job
    }
}

/// Estimated heap of a tree of `2^ℓ` leaves: a `u64` value and two 32-byte digests a leaf.
fn tree_bytes(params: Params) -> u64 {
    params.num_leaves().saturating_mul(8 + 2 * 32)
}

fn task_kind(params: Params, id: NodeId) -> TaskKind {
    if id.level == params.log_bucket {
        LEAF
    } else {
        NODE
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct NodeTask {
    level: u32,
    index: u64,
}

fn node_of(lease: &Lease) -> Result<NodeId, PlatformError> {
    let t: NodeTask = serde_json::from_str(&lease.task.payload).map_err(|e| corrupt(format!("task payload: {e}")))?;
    Ok(NodeId::new(t.level, t.index))
}

fn node_payload(id: NodeId) -> Result<String, PlatformError> {
    serde_json::to_string(&NodeTask { level: id.level, index: id.index }).map_err(corrupt)
}

async fn dispatch_node(p: &Platform, job: &str, id: NodeId, kind: TaskKind) -> Result<bool, PlatformError> {
    p.dispatch(job, kind, &id.to_string(), node_payload(id)?).await
}

async fn report_node(p: &Platform, lease: &Lease) -> Result<(), PlatformError> {
    p.report(lease, DONE).await
}

fn counts(spec: &ReckleJobSpec) -> Result<BTreeMap<&'static str, u64>, PlatformError> {
    let params = spec.params()?;
    let mut tasks = BTreeMap::new();
    for id in spec.todo()? {
        *tasks.entry(task_kind(params, id).name).or_default() += 1;
    }
    if spec.wrap_vk_digest.is_some() {
        tasks.insert(super::reckle_final::WRAP.name, 1);
    }
    Ok(tasks)
}

/// `reckle.batch`.
pub struct ReckleBatch;
/// `reckle.update`.
pub struct ReckleUpdate;

/// A done Reckle job's published statement and root proof, checked as [`verify_statement`].
async fn verify_published(p: &Platform, job: &str, expected_root: Option<&reckle::Digest>) -> Result<Result<String, String>, PlatformError> {
    let statement = p.blobs().get(&layout::proof_file(job, files::STATEMENT)).await?;
    let proof = p.blobs().get(&layout::proof_file(job, files::PROOF)).await?;
    verify_statement(p, &statement, &proof, expected_root).await
}

/// Checks a Reckle statement and root proof against `expected_root` (or, without one, the
/// statement's own C) and returns what it checked against; `Err(reason)` when the statement
/// or proof is malformed or does not verify. Cheap checks (the claims, the expected C, the
/// pinned circuit digest, the proof's header and size) run before the root key is loaded; no
/// circuit is built ([`Platform::root_key`]).
pub(crate) async fn verify_statement(
    p: &Platform,
    statement: &[u8],
    proof: &[u8],
    expected_root: Option<&reckle::Digest>,
) -> Result<Result<String, String>, PlatformError> {
    let (st, params, c, against) = match precheck(statement, proof, expected_root) {
        Ok(checked) => checked,
        Err(reason) => return Ok(Err(reason)),
    };
    // A key that cannot be had (not pinned, not stored yet) is no verdict on the proof.
    let key = p.root_key(params).await?;
    Ok(match NodeProof::root_from_bytes(&key, proof) {
        Err(e) => Err(format!("proof: {e}")),
        Ok(proof) => st.verify_for(&c, &key, &proof).map(|()| against).map_err(|e| e.to_string()),
    })
}

/// The cheap checks of [`verify_statement`]: the statement, its parameters and the C it is
/// checked against (with a description of it).
fn precheck(statement: &[u8], proof: &[u8], expected_root: Option<&reckle::Digest>) -> Result<(Statement, Params, reckle::Digest, String), String> {
    let st: Statement = serde_json::from_slice(statement).map_err(|e| format!("statement: {e}"))?;
    let params = st.precheck(expected_root, proof).map_err(|e| format!("statement: {e}"))?;
    if params.log_n > crate::MAX_LOG_N {
        return Err(format!("statement: log_n {} above the platform's limit", params.log_n));
    }
    let (c, against) = match expected_root {
        Some(c) => (*c, format!("C = {c} (expected_root)")),
        None => {
            let c = reckle::Digest::from_hex(&st.root).map_err(|e| format!("statement: {e}"))?;
            (c, format!("the statement's own C = {c} only (not pinned: pass expected_root)"))
        }
    };
    Ok((st, params, c, against))
}

impl Platform {
    /// The root verifying key of `params`, without building circuits (the planner's memory
    /// limit holds no circuit set): from the circuits this process has built, else from this
    /// process's cache, else the stored key ([`layout::reckle_root_key`], written by the finish
    /// step of every done job of that shape), accepted only if its bytes hash to the digest pinned in the
    /// reckle crate, so no writer of the bucket can substitute a key.
    pub async fn root_key(&self, params: Params) -> Result<Arc<reckle::RootKey>, PlatformError> {
        if let Some(c) = self.circuits.built.lock().expect("mutex").get(&params) {
            return Ok(Arc::new(c.root_key().clone()));
        }
        let name = format!("reckle/root-key/{}-{}", params.log_n, params.log_bucket);
        if let Some(k) = self.cache().get::<reckle::RootKey>(&name) {
            return Ok(k);
        }
        if reckle::pinned_root_key(params).is_none() {
            return Err(PlatformError::Precondition(format!(
                "no pinned root key for (log_n, log_bucket) = ({}, {}): this build cannot verify such proofs",
                params.log_n, params.log_bucket
            )));
        }
        let path = layout::reckle_root_key(params);
        let bytes = match self.blobs().get(&path).await {
            Ok(b) => b,
            Err(blobstore::BlobError::NotFound(_)) => {
                return Err(PlatformError::Precondition(format!(
                    "the root key of (log_n, log_bucket) = ({}, {}) is not stored yet: no job of that shape has run here",
                    params.log_n, params.log_bucket
                )))
            }
            Err(e) => return Err(e.into()),
        };
        let size = bytes.len() as u64;
        let key = crate::work::blocking(move |_| reckle::RootKey::from_bytes(&bytes)).await?;
        let key = match key {
            Ok(k) if k.params() == params => Arc::new(k),
            Ok(k) => return Err(PlatformError::Corrupt(format!("stored root key {path}: it is the key of {:?}", k.params()))),
            Err(e) => return Err(PlatformError::Corrupt(format!("stored root key {path}: {e}"))),
        };
        self.cache().put(&name, key.clone(), size);
        Ok(key)
    }
}

#[async_trait]
impl JobKind for ReckleBatch {
    fn name(&self) -> &'static str {
        JOB_BATCH
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        TASKS
    }
    async fn validate(&self, p: &Platform, _tenant: &str, request: JobRequest) -> Result<Validated, PlatformError> {
        let JobRequest::ReckleBatch { log_n, log_bucket, batch, leaves, final_proof } = request else {
            return Err(PlatformError::Config("reckle.batch: not a batch request".into()));
        };
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
                let bytes = match p.blobs().get(&key).await {
                    Err(BlobError::NotFound(_)) => return Err(invalid("leaves.object_key", format!("no object {key:?}"))),
                    r => r?,
                };
                reckle::decode_values(&bytes).map_err(|e| invalid("leaves.object_key", e.to_string()))?
            }
        };
        if values.len() as u64 != params.num_leaves() {
            return Err(invalid("leaves", format!("expected {} values for log_n = {log_n}, got {}", params.num_leaves(), values.len())));
        }
        reckle::plan_batch(params, &batch).map_err(|e| invalid("batch", e.to_string()))?;
        let wrap_vk_digest = super::reckle_final::wrap_request(p, final_proof).await?;
        let spec = ReckleJobSpec { log_n, log_bucket, batch, update: None, window: Some(p.config().job_window.max(1)), wrap_vk_digest };
        validated(spec, &values)
    }
    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        plan(p, job).await
    }
    async fn work(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        work(p, task, lease).await
    }
    async fn on_done(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        on_done(p, lease).await
    }
    async fn finish(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        finish(p, lease).await
    }
    async fn warm_up(&self, p: &Platform, active: &[JobRecord]) -> Result<(), PlatformError> {
        warm_up(p, active).await
    }
    async fn verify_outputs(&self, p: &Platform, job: &JobRecord, pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        verify_published(p, &job.id, pins.root).await
    }
    fn scratch_prefixes(&self, job: &str) -> Vec<String> {
        vec![layout::reckle_nodes_prefix(job), layout::inputs_prefix(job)]
    }
}

#[async_trait]
impl JobKind for ReckleUpdate {
    fn name(&self) -> &'static str {
        JOB_UPDATE
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        TASKS
    }
    async fn validate(&self, p: &Platform, _tenant: &str, request: JobRequest) -> Result<Validated, PlatformError> {
        let JobRequest::ReckleUpdate { base_job, changes, final_proof } = request else {
            return Err(PlatformError::Config("reckle.update: not an update request".into()));
        };
        if changes.len() > MAX_CHANGES {
            return Err(invalid("changes", format!("{} changes, at most {MAX_CHANGES}", changes.len())));
        }
        jobs::check_id(&base_job).map_err(|_| invalid("base_job_id", format!("{base_job:?} is not a job id")))?;
        let base = p.job_store().get(&base_job).await?.ok_or_else(|| invalid("base_job_id", format!("no job {base_job}")))?;
        if base.state != JobState::Done {
            return Err(PlatformError::Precondition(format!("base job {base_job} is {}, not done", base.state.as_str())));
        }
        let base_spec = ReckleJobSpec::of(&base)?;
        let params = base_spec.params()?;
        let plan = reckle::plan_update(params, &base_spec.batch, &changes).map_err(|e| invalid("changes", e.to_string()))?;
        let mut values = reckle::decode_values(&p.blobs().get(&layout::reckle_leaves(&base_job)).await?)?;
        for c in &changes {
            if let Change::Set { index, value } = *c {
                let slot = values.get_mut(index as usize).ok_or_else(|| invalid("changes", format!("index {index} out of range")))?;
                *slot = value;
            }
        }
        let spec = ReckleJobSpec {
            log_n: base_spec.log_n,
            log_bucket: base_spec.log_bucket,
            batch: plan.batch,
            update: Some(UpdateSpec { base_job, base_batch: base_spec.batch, changes }),
            window: Some(p.config().job_window.max(1)),
            wrap_vk_digest: super::reckle_final::wrap_request(p, final_proof).await?,
        };
        validated(spec, &values)
    }
    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        plan(p, job).await
    }
    async fn work(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        work(p, task, lease).await
    }
    async fn on_done(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        on_done(p, lease).await
    }
    async fn finish(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        finish(p, lease).await
    }
    async fn warm_up(&self, p: &Platform, active: &[JobRecord]) -> Result<(), PlatformError> {
        warm_up(p, active).await
    }
    async fn verify_outputs(&self, p: &Platform, job: &JobRecord, pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        verify_published(p, &job.id, pins.root).await
    }
    fn scratch_prefixes(&self, job: &str) -> Vec<String> {
        vec![layout::reckle_nodes_prefix(job), layout::inputs_prefix(job)]
    }
}

fn validated(spec: ReckleJobSpec, values: &[u64]) -> Result<Validated, PlatformError> {
    Ok(Validated {
        tasks: counts(&spec)?,
        secrets: Vec::new(),
        spec: serde_json::to_string(&spec).map_err(corrupt)?,
        inputs: vec![("leaves.bin".into(), Bytes::from(reckle::encode_values(values)))],
    })
}

/// Object copies an update's plan task keeps in flight.
const COPIES_AT_ONCE: usize = 32;

/// Copies the nodes an update keeps from its base job, then dispatches the first window of the
/// nodes of the plan none of whose children it proves.
async fn plan(p: &Platform, rec: &JobRecord) -> Result<(), PlatformError> {
    let job = &rec.id;
    let spec = ReckleJobSpec::of(rec)?;
    let (params, plan, todo) = (spec.params()?, spec.plan()?, spec.todo()?);
    let ready = initial(params, &todo);
    if let Some(u) = &spec.update {
        // Nodes the update keeps: their subtrees did not change, so the base job's proofs stand.
        // Copied by the object store itself, COPIES_AT_ONCE at a time: one by one through the
        // executor, an update of an ℓ = 24 job with a batch of 4,096 (~90k kept nodes) did not
        // plan within the plan task's deadline.
        let mut copies = tokio::task::JoinSet::new();
        for id in plan.difference(&todo) {
            if copies.len() >= COPIES_AT_ONCE {
                copies.join_next().await.expect("copies running").map_err(corrupt)??;
            }
            let (blobs, from, to) = (p.blobs().clone(), layout::reckle_node(&u.base_job, *id), layout::reckle_node(job, *id));
            copies.spawn(async move { blobs.copy(&from, &to).await });
        }
        while let Some(copied) = copies.join_next().await {
            copied.map_err(corrupt)??;
        }
    }
    release(p, rec, &spec, params, &ready).await
}

/// Releases the job's first tasks (`ready`, in order) that its share allows (see
/// [`super::Window`]). Their done count is the done counters of their kinds: exact for a batch
/// job (its first tasks are its buckets), an overcount for an update whose first tasks include
/// nodes (so its window can only be wider, never stuck).
async fn release(p: &Platform, rec: &JobRecord, spec: &ReckleJobSpec, params: Params, ready: &[NodeId]) -> Result<(), PlatformError> {
    let window = super::Window { step: "first", n: ready.len() as u64, cap: spec.window };
    let kinds: BTreeSet<&'static str> = ready.iter().map(|id| task_kind(params, *id).name).collect();
    let done = kinds.iter().map(|k| rec.tasks.get(*k).map_or(0, |c| c.done)).sum();
    let due = window.due(p, rec, done).await?;
    if due.is_empty() {
        return Ok(());
    }
    let mut by_kind: BTreeMap<&'static str, (TaskKind, Vec<(String, String)>)> = BTreeMap::new();
    for id in &ready[due.start as usize..due.end as usize] {
        let kind = task_kind(params, *id);
        by_kind.entry(kind.name).or_insert((kind, Vec::new())).1.push((id.to_string(), node_payload(*id)?));
    }
    for (_, (kind, tasks)) in by_kind {
        p.dispatch_many(&rec.id, kind, tasks).await?;
    }
    window.released(p, &rec.id, due.end).await
}

/// A worker about to serve: builds the circuit sets of the active jobs (distinct ones, oldest
/// jobs first) before it holds any lease, as long as the next set is expected to fit in
/// `--circuit-bytes` beside those built (expected: the bytes per level of the sets built so
/// far, times the next set's levels). Before, it built four sets whatever their size, so a
/// worker killed for memory there was killed again on every restart and never claimed a task.
async fn warm_up(p: &Platform, active: &[JobRecord]) -> Result<(), PlatformError> {
    let mut sets = Vec::new();
    for rec in active {
        let Ok(params) = ReckleJobSpec::of(rec).and_then(|s| s.params()) else { continue };
        if !sets.contains(&params) {
            sets.push(params);
        }
    }
    let levels = |params: Params| u64::from(params.log_n - params.log_bucket + 1);
    let (mut bytes, mut built_levels) = (0u64, 0u64);
    for params in sets {
        if built_levels > 0 && bytes + bytes / built_levels * levels(params) > p.config().circuit_bytes {
            tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, "warm-up stops: the next set would not fit in --circuit-bytes");
            break;
        }
        let started = std::time::Instant::now();
        bytes += p.circuits(params).await?.heap_bytes();
        built_levels += levels(params);
        tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, took = ?started.elapsed(), "circuits built before claiming");
    }
    Ok(())
}

/// The job's plan, from its spec (no leaves read, no tree built).
async fn job_plan(p: &Platform, job: &str) -> Result<Arc<JobPlan>, PlatformError> {
    let key = format!("reckle/plan/{job}");
    if let Some(j) = p.cache().get::<JobPlan>(&key) {
        return Ok(j);
    }
    let spec = ReckleJobSpec::of(&p.record(job).await?)?;
    let (params, todo) = (spec.params()?, spec.todo()?);
    let j = Arc::new(JobPlan { params, plan: spec.plan()?, initial: initial(params, &todo), todo, spec });
    // A BTreeSet entry is about 16 bytes of key plus its share of a node.
    let bytes = 48 * (j.plan.len() + j.todo.len()) as u64 + 16 * (j.spec.batch.len() + j.initial.len()) as u64 + 1024;
    p.cache().put(&key, j.clone(), bytes);
    Ok(j)
}

/// The job's plan and tree: the tree is built from the job's leaves, and kept only while the
/// process's cache budget allows.
async fn load(p: &Platform, job: &str) -> Result<Arc<LoadedJob>, PlatformError> {
    let key = format!("reckle/tree/{job}");
    if let Some(j) = p.cache().get::<LoadedJob>(&key) {
        return Ok(j);
    }
    let plan = job_plan(p, job).await?;
    let values = reckle::decode_values(&p.blobs().get(&layout::reckle_leaves(job)).await?)?;
    let params = plan.params;
    let tree = crate::work::blocking(move |_| Tree::build(params, values)).await??;
    let j = Arc::new(LoadedJob { job: plan, tree });
    p.cache().put(&key, j.clone(), tree_bytes(params));
    Ok(j)
}

/// Worker: proves one node (a pure function of the job inputs and the children's proofs).
async fn work(p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
    if task == super::reckle_final::WRAP {
        return super::reckle_final::wrap(p, lease).await;
    }
    let job = &lease.task.job_id;
    if p.ended(job).await? {
        tracing::info!("job has ended; task dropped");
        return Ok(());
    }
    let id = node_of(lease)?;
    let j = load(p, job).await?;
    let circuits = p.circuits(j.params).await?;
    let proof = if id.level == j.params.log_bucket {
        let selected = reckle::selected_in_bucket(j.params, &j.spec.batch, id.index);
        let (c, j2) = (circuits.clone(), j.clone());
        crate::work::blocking(move |_| reckle::prove_bucket(&c, id.index, j2.tree.bucket_values(id.index)?, &selected)).await??
    } else {
        let mut children = Vec::with_capacity(2);
        for child in id.children() {
            if j.plan.contains(&child) {
                let bytes = p.blobs().get(&layout::reckle_node(job, child)).await?;
                children.push(Child::Proven(NodeProof::from_bytes(&circuits, &bytes)?));
            } else {
                children.push(Child::Hash(j.tree.hash(child.level, child.index)?));
            }
        }
        let c = circuits.clone();
        crate::work::blocking(move |_| reckle::prove_node(&c, id, &children[0], &children[1])).await??
    };
    p.blobs().put(&layout::reckle_node(job, id), Bytes::from(proof.to_bytes())).await?;
    report_node(p, lease).await
}

/// Executor: records a proven node and dispatches its parent if that was the last child. It
/// works from the job's plan only: an executor's memory does not grow with the tree.
async fn on_done(p: &Platform, lease: &Lease) -> Result<(), PlatformError> {
    let job = &lease.task.job_id;
    let id = node_of(lease)?;
    if !p.live(job).await? {
        return Ok(());
    }
    if lease.task.task_id == super::reckle_final::WRAP_TASK_ID {
        // The wrap's report (its payload names the root): the finish step follows.
        p.job_store().task_done(job, super::reckle_final::WRAP.name, super::reckle_final::WRAP_TASK_ID).await?;
        dispatch_node(p, job, id, FINISH).await?;
        return Ok(());
    }
    let j = job_plan(p, job).await?;
    p.job_store().task_done(job, task_kind(j.params, id).name, &id.to_string()).await?;
    // One of the first tasks done: the window slides (each task at most once, however often
    // this report arrives).
    if j.initial.binary_search(&id).is_ok() {
        release(p, &p.record(job).await?, &j.spec, j.params, &j.initial).await?;
    }
    if id.level == j.params.log_n {
        if j.spec.wrap_vk_digest.is_some() {
            p.dispatch(job, super::reckle_final::WRAP, super::reckle_final::WRAP_TASK_ID, node_payload(id)?).await?;
        } else {
            dispatch_node(p, job, id, FINISH).await?;
        }
        return Ok(());
    }
    let parent = id.parent();
    for c in parent.children() {
        if j.todo.contains(&c) && !p.job_store().is_done(job, &c.to_string()).await? {
            return Ok(());
        }
    }
    dispatch_node(p, job, parent, NODE).await?;
    Ok(())
}

/// Aggregator: verifies the root proof against the statement and publishes the proof
/// directory; the job is done only after that.
async fn finish(p: &Platform, lease: &Lease) -> Result<(), PlatformError> {
    let job = &lease.task.job_id;
    if p.ended(job).await? {
        return Ok(());
    }
    let j = load(p, job).await?;
    let circuits = p.circuits(j.params).await?;
    let root = NodeProof::from_bytes(&circuits, &p.blobs().get(&layout::reckle_node(job, NodeId::new(j.params.log_n, 0))).await?)?;
    let pairs: Vec<(u64, u64)> = j.spec.batch.iter().map(|&i| Ok((i, j.tree.value(i)?))).collect::<Result<_, reckle::Error>>()?;
    let statement = Statement::new(&circuits, j.tree.root(), &pairs)?;
    if let Err(e) = statement.verify_for(&j.tree.root(), circuits.root_key(), &root) {
        // Not retried: a root proof that does not verify will not verify next time either.
        return p.fail_job(job, &format!("final verification failed: {e}")).await;
    }
    let wrapped = match &j.spec.wrap_vk_digest {
        None => None,
        Some(d) => match super::reckle_final::check_final(p, job, d, circuits.root_key(), &j.tree.root(), &statement).await? {
            Ok(files) => Some((d.clone(), files)),
            // Not retried either: the bytes the wrap task wrote are what they are.
            Err(e) => return p.fail_job(job, &format!("final proof verification failed: {e}")).await,
        },
    };
    publish_root_key(p, &circuits).await?;
    let mut lambda_nodes = Vec::new();
    for id in &j.plan {
        lambda_nodes.push(NodeProof::from_bytes(&circuits, &p.blobs().get(&layout::reckle_node(job, *id)).await?)?);
    }
    let lambda = BatchProof::from_node_proofs(&circuits, &j.tree, &j.spec.batch, lambda_nodes)?;
    let put = |name: &str, bytes: Vec<u8>| {
        let key = layout::proof_file(job, name);
        async move { p.blobs().put(&key, Bytes::from(bytes)).await }
    };
    put(files::LAMBDA, lambda.to_bytes()).await?;
    put(files::LEAVES, reckle::encode_values(j.tree.values())).await?;
    put(files::PROOF, root.to_bytes()).await?;
    put(files::STATEMENT, serde_json::to_vec_pretty(&statement).map_err(corrupt)?).await?;
    let root_hex = serde_json::to_value(&statement).map_err(corrupt)?.get("root").and_then(|r| r.as_str()).map(str::to_string);
    let mut verify: Vec<String> = root_hex.iter().map(|c| format!("prover reckle verify {} --root {c}", crate::manifest::DIR)).collect();
    let mut pins: BTreeMap<String, String> = root_hex.clone().map(|c| ("root".to_string(), c)).into_iter().collect();
    if let Some((d, (final_bytes, vk_bytes))) = wrapped {
        put(super::reckle_final::WRAP_VK_FILE, vk_bytes.to_vec()).await?;
        put(super::reckle_final::FINAL_FILE, final_bytes.to_vec()).await?;
        verify.extend(root_hex.iter().map(|c| format!("prover reckle verify-final {} --root {c} --wrap-vk-digest {d}", crate::manifest::DIR)));
        pins.insert("wrap_vk_digest".into(), d);
    }
    let rec = p.record(job).await?;
    crate::manifest::Manifest::publish(p, job, &rec.kind, pins, verify).await?;
    ::metrics::counter!("prover_proofs_total", "kind" => "reckle.root").increment(1);
    p.end(job, crate::Ending::Done).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The job store's spec limit admits the largest request the limits here accept (a
    /// 4,096-index batch at ℓ = 24 was once refused as an oversized spec).
    #[test]
    fn the_largest_specs_fit_the_job_store() {
        let top = (1u64 << MAX_LOG_N) - 1;
        let batch: Vec<u64> = (0..MAX_BATCH as u64).map(|i| top - i).collect();
        let spec = ReckleJobSpec { log_n: MAX_LOG_N, log_bucket: 3, batch: batch.clone(), update: None, window: Some(u64::MAX), wrap_vk_digest: None };
        let len = serde_json::to_string(&spec).unwrap().len();
        assert!(len <= jobs::MAX_SPEC_BYTES, "batch spec of {len} bytes");
        let changes: Vec<Change> = (0..MAX_CHANGES as u64).map(|i| Change::Set { index: top - i, value: u64::MAX }).collect();
        let mut after = batch.clone();
        after.extend((0..MAX_CHANGES as u64).map(|i| top - MAX_BATCH as u64 - i));
        let update = ReckleJobSpec {
            log_n: MAX_LOG_N,
            log_bucket: 3,
            batch: after,
            update: Some(UpdateSpec { base_job: "f".repeat(64), base_batch: batch, changes }),
            window: Some(u64::MAX),
            wrap_vk_digest: None,
        };
        let len = serde_json::to_string(&update).unwrap().len();
        assert!(len <= jobs::MAX_SPEC_BYTES, "update spec of {len} bytes");
    }
}

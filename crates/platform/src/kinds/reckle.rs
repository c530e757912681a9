//! Reckle jobs: a batch proof over a vector commitment (`reckle.batch`), and an update of a
//! finished batch job that re-proves only the affected paths (`reckle.update`).
//!
//! DAG: first the tree: `reckle.tree` tasks hash the leaves, 2^20 values each, into the
//! stored pieces of the Merkle tree above the buckets (`reckle::stored`; an update re-hashes
//! only the ranges holding a changed leaf and copies the rest), and the executor hashes the
//! upper bands from their roots. Then one task per node of `T'_I` (the union of the batch's
//! root paths, cut at the bucket level `q`): `reckle.leaf` for a bucket, `reckle.node` for an
//! inner node; a task reads its bucket's values (a ranged read of the leaves) or its
//! children's proofs and hashes (one piece each), never the whole tree. A parent is
//! dispatched the moment its last child in the plan is done, so the work closest to the root is
//! released first; the root releases `reckle.finish` on the aggregator, which assembles the
//! statement and `Λ_I`, **verifies** the root proof, and publishes the files of
//! `reckle::files`. An update job proves only `reckle::plan_update`'s nodes; its plan task
//! copies the nodes it keeps from the base job, and writes its leaves as the base job's with the
//! changed chunks patched and the rest copied on the object store's side.
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
use reckle::stored::{Layout, Piece, PieceId};
use reckle::{files, Change, Child, Circuits, Digest, NodeId, NodeProof, Params, Statement};

use super::{JobKind, JobRequest, Leaves, Served, TaskKind, Validated};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const JOB_BATCH: &str = "reckle.batch";
pub const JOB_UPDATE: &str = "reckle.update";

pub const TREE: TaskKind = TaskKind::new("reckle.tree", Served::Worker, 1800);
pub const LEAF: TaskKind = TaskKind::new("reckle.leaf", Served::Worker, 1800);
pub const NODE: TaskKind = TaskKind::new("reckle.node", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("reckle.done", Served::Executor, 300);
pub const FINISH: TaskKind = TaskKind::new("reckle.finish", Served::Aggregator, 1800);
/// Root side first when a worker's turn asks for nodes (role loops rotate which kind they ask
/// first, so neither kind starves the other).
const TASKS: &[TaskKind] = &[NODE, LEAF, TREE, DONE, FINISH, super::reckle_final::WRAP];

/// Largest tree a job may ask for (2^27 leaves, 1 GiB of values: the Reckle paper's `n`).
pub const MAX_LOG_N: u32 = reckle::MAX_LOG_N;

/// Leaf values one `reckle.tree` task hashes (8 MiB of values; at least one band-0 piece).
const TREE_TASK_LEAVES: u64 = 1 << 20;
/// Largest batch (the job spec is kept in the job store, not the blob store).
pub const MAX_BATCH: usize = 4096;
/// Most changes in one update job.
pub const MAX_CHANGES: usize = 1024;

/// Bytes of the `(log_n, log_bucket)` circuit set as [`Circuits::heap_bytes`] counts them,
/// without building it: about 95.5 MiB per level circuit and 0.34 MiB per leaf of the bucket
/// circuit, fitted to the sets built by `examples/circuit_memory` ((8, 2): 568 MiB; (16, 4):
/// 1,143; (20, 4): 1,525; (24, 4): 1,907; (24, 12): 2,536; all within 2% of the fit).
pub fn circuit_set_estimate(log_n: u32, log_bucket: u32) -> u64 {
    const LEVEL: u64 = 100_139_008; // 95.5 MiB
    const LEAF: u64 = 356_516; // 0.34 MiB
    u64::from(log_n.saturating_sub(log_bucket)) * LEVEL + (1u64 << log_bucket) * LEAF
}

/// The largest circuit set a job within the platform's limits can need, and its `(ℓ, q)`.
pub fn largest_circuit_set() -> (u64, (u32, u32)) {
    (0..=reckle::MAX_LOG_BUCKET.min(MAX_LOG_N)).map(|q| (circuit_set_estimate(MAX_LOG_N, q), (MAX_LOG_N, q))).max().expect("q = 0 is allowed")
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

    /// The job's `reckle.tree` tasks, as ranges of band-0 pieces `(first, count)`: all of
    /// them for a batch job, those holding a changed leaf for an update (the others' pieces
    /// are copied from the base job).
    pub fn tree_todo(&self) -> Result<Vec<(u64, u64)>, PlatformError> {
        let params = self.params()?;
        let all = tree_chunks(params);
        let Some(u) = &self.update else { return Ok(all) };
        let per = all[0].1;
        let leaves = Layout::new(params).leaves_per_bottom_piece();
        let changed: BTreeSet<u64> =
            u.changes.iter().filter_map(|c| if let Change::Set { index, .. } = *c { Some(index / leaves / per * per) } else { None }).collect();
        Ok(all.into_iter().filter(|(first, _)| changed.contains(first)).collect())
    }

    fn of(rec: &JobRecord) -> Result<Self, PlatformError> {
        serde_json::from_str(&rec.spec).map_err(|e| PlatformError::Corrupt(format!("job {} spec: {e}", rec.id)))
    }
}

/// Every tree task of a tree of shape `params`: ranges of band-0 pieces `(first, count)`,
/// each about [`TREE_TASK_LEAVES`] leaves.
fn tree_chunks(params: Params) -> Vec<(u64, u64)> {
    let layout = Layout::new(params);
    let per = (TREE_TASK_LEAVES / layout.leaves_per_bottom_piece()).max(1);
    let n = layout.pieces(0);
    (0..n).step_by(per as usize).map(|first| (first, per.min(n - first))).collect()
}

/// The nodes of `todo` ([`ReckleJobSpec::todo`]) that wait for no child, in order: what the
/// plan task releases, a window of them at a time.
fn initial(params: Params, todo: &BTreeSet<NodeId>) -> Vec<NodeId> {
    todo.iter().filter(|id| !(id.level > params.log_bucket && id.children().iter().any(|c| todo.contains(c)))).copied().collect()
}

/// The circuit data a process has built, one chain per bucket height `q` (the circuits of one
/// `q` are the same whatever `ℓ`: [`Circuits::for_log_n`]), with each chain's size
/// ([`Circuits::heap_bytes`]) and when it was last used, and the lock that makes concurrent
/// tasks wait for one build instead of building again.
#[derive(Default)]
pub(crate) struct CircuitSets {
    built: Arc<std::sync::Mutex<BuiltSets>>,
    building: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Default)]
pub(crate) struct BuiltSets {
    chains: std::collections::HashMap<u32, Chain>,
    tick: u64,
}

/// The longest set built for one `q`, and the sets of smaller `ℓ` handed out from it (its
/// prefixes: they hold no circuit of their own).
struct Chain {
    set: Arc<Circuits>,
    bytes: u64,
    used: u64,
    prefixes: std::collections::HashMap<u32, Arc<Circuits>>,
}

impl BuiltSets {
    /// The set of `params`, if the chain of its `q` reaches its `ℓ`.
    fn get(&mut self, params: &Params) -> Option<Arc<Circuits>> {
        self.tick += 1;
        let tick = self.tick;
        let chain = self.chains.get_mut(&params.log_bucket)?;
        if chain.set.params().log_n < params.log_n {
            return None;
        }
        chain.used = tick;
        if chain.set.params() == *params {
            return Some(chain.set.clone());
        }
        if let Some(c) = chain.prefixes.get(&params.log_n) {
            return Some(c.clone());
        }
        let prefix = Arc::new(chain.set.for_log_n(params.log_n).ok()?);
        chain.prefixes.insert(params.log_n, prefix.clone());
        Some(prefix)
    }

    /// The chain of `q`, whatever its length.
    fn chain(&self, q: u32) -> Option<Arc<Circuits>> {
        self.chains.get(&q).map(|c| c.set.clone())
    }

    fn bytes(&self) -> u64 {
        self.chains.values().map(|c| c.bytes).sum()
    }

    /// Keeps `c` (`bytes`) as its `q`'s chain (replacing a shorter one, whose circuits it
    /// shares), dropping the least recently used other chains until all fit in `budget`; a
    /// chain over the whole budget is kept alone (its tasks need it anyway, and the next set
    /// needed replaces it).
    fn put(&mut self, c: Arc<Circuits>, bytes: u64, budget: u64) {
        let q = c.params().log_bucket;
        self.chains.remove(&q);
        while !self.chains.is_empty() && self.bytes() + bytes > budget {
            let lru = *self.chains.iter().min_by_key(|(_, c)| c.used).map(|(q, _)| q).expect("not empty");
            let dropped = self.chains.remove(&lru).expect("present");
            let p = dropped.set.params();
            tracing::info!(log_n = p.log_n, log_bucket = p.log_bucket, "circuit set dropped to stay within --circuit-bytes");
        }
        self.tick += 1;
        self.chains.insert(q, Chain { set: c, bytes, used: self.tick, prefixes: Default::default() });
        ::metrics::gauge!("prover_circuit_bytes").set(self.bytes() as f64);
    }
}

impl Platform {
    /// The Reckle circuit sets this process holds: per `q`, the longest `(ℓ, q)` built (the
    /// sets of smaller `ℓ` are its prefixes).
    pub fn circuits_built(&self) -> Vec<Params> {
        self.circuits.built.lock().expect("mutex").chains.values().map(|c| c.set.params()).collect()
    }

    /// Bytes of the circuit sets this process keeps ([`Circuits::heap_bytes`]), within
    /// [`crate::PlatformConfig::circuit_bytes`] unless one set alone is larger.
    pub fn circuit_bytes(&self) -> u64 {
        self.circuits.built.lock().expect("mutex").bytes()
    }

    /// Circuit data per `(ℓ, q)`, built once per process and kept within
    /// [`crate::PlatformConfig::circuit_bytes`], least recently used sets dropped first. The
    /// sets of one `q` share one chain of circuits: a set of smaller `ℓ` than one built is its
    /// prefix (nothing built, no bytes added), and one of larger `ℓ` builds only the levels
    /// above. The build runs detached: a task abandoned while it waits (deadline, lost lease)
    /// does not waste it.
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
            let shorter = cache.lock().expect("mutex").chain(params.log_bucket);
            let from = shorter.as_ref().map_or(0, |c| c.params().log_n);
            let built = Arc::new(
                tokio::task::spawn_blocking(move || match shorter {
                    Some(c) => c.for_log_n(params.log_n),
                    None => Circuits::build(params),
                })
                .await
                .map_err(corrupt)??,
            );
            let bytes = built.heap_bytes();
            tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, from_log_n = from, bytes, took = ?started.elapsed(), "circuit set built");
            cache.lock().expect("mutex").put(built.clone(), bytes, budget);
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

/// A `reckle.tree` task: band-0 pieces `first..first + count`.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct TreeTask {
    first: u64,
    count: u64,
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
#[serde(untagged)]
enum Payload {
    Node(NodeTask),
    Tree(TreeTask),
}

fn payload_of(lease: &Lease) -> Result<Payload, PlatformError> {
    serde_json::from_str(&lease.task.payload).map_err(|e| corrupt(format!("task payload: {e}")))
}

fn node_of(lease: &Lease) -> Result<NodeId, PlatformError> {
    match payload_of(lease)? {
        Payload::Node(t) => Ok(NodeId::new(t.level, t.index)),
        Payload::Tree(_) => Err(corrupt("task payload: a tree task where a node was expected")),
    }
}

fn tree_task_id(first: u64) -> String {
    format!("tree-{first}")
}

fn tree_payload(first: u64, count: u64) -> Result<String, PlatformError> {
    serde_json::to_string(&TreeTask { first, count }).map_err(corrupt)
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
    let trees = spec.tree_todo()?.len() as u64;
    if trees > 0 {
        tasks.insert(TREE.name, trees);
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
    fn limits(&self) -> Vec<crate::limits::Limit> {
        use crate::limits::Limit;
        vec![
            Limit::new(JOB_BATCH, "log_n", MAX_LOG_N as u64, "log2", "leaves of the tree: 2^log_n"),
            Limit::new(JOB_BATCH, "log_bucket", reckle::MAX_LOG_BUCKET as u64, "log2", "leaves of a bucket: 2^log_bucket"),
            Limit::new(JOB_BATCH, "batch", MAX_BATCH as u64, "count", "indices of the batch"),
        ]
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        TASKS
    }
    async fn validate(&self, p: &Platform, tenant: &str, request: JobRequest) -> Result<Validated, PlatformError> {
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
        reckle::plan_batch(params, &batch).map_err(|e| invalid("batch", e.to_string()))?;
        let wrap_vk_digest = super::reckle_final::wrap_request(p, final_proof).await?;
        let spec = ReckleJobSpec { log_n, log_bucket, batch, update: None, window: Some(p.config().job_window.max(1)), wrap_vk_digest };
        let expected = 8 * params.num_leaves();
        match leaves {
            Leaves::Inline(values) => {
                if values.len() as u64 != params.num_leaves() {
                    return Err(invalid("leaves", format!("expected {} values for log_n = {log_n}, got {}", params.num_leaves(), values.len())));
                }
                validated(spec, vec![(LEAVES_INPUT.into(), Bytes::from(reckle::encode_values(&values)))], Vec::new())
            }
            // Up to 1 GiB: checked by its size and copied by the object store, never read here.
            Leaves::Object(key) => {
                blobstore::check_key(&key).map_err(|e| invalid("leaves.object_key", e.to_string()))?;
                // Only uploads, whether or not the API has tenants: an object key anywhere else
                // would copy another job's inputs (say, a stored secret) into this job's
                // published `leaves.bin`.
                let root = layout::uploads_root(tenant);
                if !key.starts_with(&root) || key.contains("..") {
                    return Err(invalid("leaves.object_key", format!("{key:?} is not under your upload prefix {root} (upload it with UploadInput / prover upload)")));
                }
                let size = match p.blobs().size(&key).await {
                    Err(BlobError::NotFound(_)) => return Err(invalid("leaves.object_key", format!("no object {key:?}"))),
                    r => r?,
                };
                if size != expected {
                    return Err(invalid(
                        "leaves.object_key",
                        format!("{key:?} has {size} bytes; log_n = {log_n} needs {} values of 8 bytes ({expected} bytes)", params.num_leaves()),
                    ));
                }
                let copy = super::InputCopy { name: LEAVES_INPUT.into(), from: key, size, field: "leaves.object_key" };
                validated(spec, Vec::new(), vec![copy])
            }
        }
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
        vec![layout::reckle_nodes_prefix(job), layout::reckle_tree_prefix(job), layout::inputs_prefix(job)]
    }
    fn kept_when_done(&self, job: &str) -> Vec<String> {
        kept_for_updates(job)
    }
}

#[async_trait]
impl JobKind for ReckleUpdate {
    fn name(&self) -> &'static str {
        JOB_UPDATE
    }
    fn limits(&self) -> Vec<crate::limits::Limit> {
        vec![crate::limits::Limit::new(JOB_UPDATE, "changes", MAX_CHANGES as u64, "count", "changed leaves of the update")]
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
        // Jobs proved before the tree was stored in pieces (circuit version 2) cannot be the
        // base of an update: their node proofs are of other circuits.
        if !p.blobs().exists(&layout::reckle_piece_roots(&base_job, 0)).await? {
            return Err(PlatformError::Precondition(format!(
                "base job {base_job} was proved by an earlier version of the platform (no stored tree): submit a new batch job"
            )));
        }
        // Indices are checked here; the new leaves are written by the plan task, streamed from
        // the base job's (up to 1 GiB, never whole in the planner).
        let plan = reckle::plan_update(params, &base_spec.batch, &changes).map_err(|e| invalid("changes", e.to_string()))?;
        let spec = ReckleJobSpec {
            log_n: base_spec.log_n,
            log_bucket: base_spec.log_bucket,
            batch: plan.batch,
            update: Some(UpdateSpec { base_job, base_batch: base_spec.batch, changes }),
            window: Some(p.config().job_window.max(1)),
            wrap_vk_digest: super::reckle_final::wrap_request(p, final_proof).await?,
        };
        validated(spec, Vec::new(), Vec::new())
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
        vec![layout::reckle_nodes_prefix(job), layout::reckle_tree_prefix(job), layout::inputs_prefix(job)]
    }
    fn kept_when_done(&self, job: &str) -> Vec<String> {
        kept_for_updates(job)
    }
}

/// What a done Reckle job keeps for updates based on it ([`JobKind::kept_when_done`]): an
/// update reads the base job's leaves and copies its kept node proofs and untouched tree pieces
/// (`reckle::plan_update`).
fn kept_for_updates(job: &str) -> Vec<String> {
    vec![layout::reckle_leaves(job), layout::reckle_nodes_prefix(job), layout::reckle_tree_prefix(job)]
}

/// The name of the job's leaves under its inputs ([`layout::reckle_leaves`]).
const LEAVES_INPUT: &str = "leaves.bin";

fn validated(spec: ReckleJobSpec, inputs: Vec<(String, Bytes)>, copies: Vec<super::InputCopy>) -> Result<Validated, PlatformError> {
    Ok(Validated { tasks: counts(&spec)?, secrets: Vec::new(), copies, spec: serde_json::to_string(&spec).map_err(corrupt)?, inputs })
}

/// Object copies an update's plan task keeps in flight.
const COPIES_AT_ONCE: usize = 32;

/// Copies `keys` (`(from, to)`) on the object store's side, [`COPIES_AT_ONCE`] at a time.
async fn copy_all(p: &Platform, keys: Vec<(String, String)>) -> Result<(), PlatformError> {
    let mut copies = tokio::task::JoinSet::new();
    for (from, to) in keys {
        if copies.len() >= COPIES_AT_ONCE {
            copies.join_next().await.expect("copies running").map_err(corrupt)??;
        }
        let blobs = p.blobs().clone();
        copies.spawn(async move { blobs.copy(&from, &to).await });
    }
    while let Some(copied) = copies.join_next().await {
        copied.map_err(corrupt)??;
    }
    Ok(())
}

/// Plans the tree, then the proofs. A batch job dispatches its tree tasks. An update first
/// writes its leaves (the base job's, streamed, with the changes applied), copies the nodes it
/// keeps and the tree pieces no change touches from the base job, and dispatches the tree
/// tasks of the changed ranges; with none, it hashes the upper bands and releases the proofs
/// at once.
async fn plan(p: &Platform, rec: &JobRecord) -> Result<(), PlatformError> {
    let job = &rec.id;
    let spec = ReckleJobSpec::of(rec)?;
    let (params, plan, todo) = (spec.params()?, spec.plan()?, spec.todo()?);
    let trees = spec.tree_todo()?;
    if let Some(u) = &spec.update {
        write_update_leaves(p.blobs().as_ref(), job, &u.base_job, &u.changes, params).await?;
        // Nodes the update keeps: their subtrees did not change, so the base job's proofs stand.
        // Copied by the object store itself: one by one through the executor, an update of an
        // ℓ = 24 job with a batch of 4,096 (~90k kept nodes) did not plan within its deadline.
        let mut keys: Vec<(String, String)> =
            plan.difference(&todo).map(|id| (layout::reckle_node(&u.base_job, *id), layout::reckle_node(job, *id))).collect();
        let rebuilt: BTreeSet<u64> = trees.iter().map(|(first, _)| *first).collect();
        for (first, count) in tree_chunks(params).into_iter().filter(|(first, _)| !rebuilt.contains(first)) {
            keys.push((layout::reckle_piece_roots(&u.base_job, first), layout::reckle_piece_roots(job, first)));
            for index in first..first + count {
                let piece = PieceId { band: 0, index };
                keys.push((layout::reckle_piece(&u.base_job, piece), layout::reckle_piece(job, piece)));
            }
        }
        copy_all(p, keys).await?;
    }
    if trees.is_empty() {
        upper_bands(p, job, params).await?;
        let ready = initial(params, &todo);
        return release(p, rec, &spec, params, &ready).await;
    }
    let tasks = trees.iter().map(|&(first, count)| Ok((tree_task_id(first), tree_payload(first, count)?))).collect::<Result<Vec<_>, PlatformError>>()?;
    p.dispatch_many(job, TREE, tasks).await?;
    Ok(())
}

/// Bytes of leaf values an update reads, patches and writes per changed chunk (a whole part of
/// the multipart upload, so the copies between stay whole parts too).
const STREAM_BYTES: u64 = 8 << 20;
/// Most bytes of unchanged leaves one [`blobstore::Upload::append_copy`] call covers (each call
/// runs under the store's request timeout).
const COPY_BYTES: u64 = 256 << 20;

/// Writes an update's leaves: the base job's, with the `Set` changes applied (the last one of
/// an index wins). Only the [`STREAM_BYTES`] chunks holding a change are read and written by
/// this process; the ranges between are appended as copies of the base job's leaves, which the
/// S3 store makes on the server (`UploadPartCopy`). Streaming all 1 GiB of an ℓ = 27 job's
/// leaves through the executor for one change was most of that update's plan time.
async fn write_update_leaves(blobs: &dyn blobstore::BlobStore, job: &str, base_job: &str, changes: &[Change], params: Params) -> Result<(), PlatformError> {
    let sets: BTreeMap<u64, u64> = changes.iter().filter_map(|c| if let Change::Set { index, value } = *c { Some((index, value)) } else { None }).collect();
    let (from, total) = (layout::reckle_leaves(base_job), 8 * params.num_leaves());
    let mut up = blobs.upload(&layout::reckle_leaves(job)).await?;
    let mut start = 0;
    while start < total {
        // The chunk of the next change at or after `start` (chunks are aligned to STREAM_BYTES).
        let next = sets.range(start / 8..).next().map_or(total, |(&index, _)| (8 * index / STREAM_BYTES * STREAM_BYTES).min(total));
        if next > start {
            let end = next.min(start + COPY_BYTES);
            up.append_copy(&from, start, end - start).await?;
            start = end;
            continue;
        }
        let len = STREAM_BYTES.min(total - start);
        let mut chunk = blobs.get_range(&from, start, len).await?.to_vec();
        for (&index, &value) in sets.range(start / 8..(start + len) / 8) {
            let at = (8 * index - start) as usize;
            chunk[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        up.write(Bytes::from(chunk)).await?;
        start += len;
    }
    up.finish().await?;
    Ok(())
}

/// Executor: hashes the bands above band 0 from the band-0 roots the tree tasks stored (at
/// most `2^(ℓ − q − 11)` digests) and stores their pieces.
async fn upper_bands(p: &Platform, job: &str, params: Params) -> Result<(), PlatformError> {
    let layout = Layout::new(params);
    let mut below: Vec<Digest> = Vec::with_capacity(layout.pieces(0) as usize);
    for (first, count) in tree_chunks(params) {
        let bytes = p.blobs().get(&layout::reckle_piece_roots(job, first)).await?;
        let roots = decode_digests(&bytes).map_err(|e| corrupt(format!("tree roots {first}: {e}")))?;
        if roots.len() as u64 != count {
            return Err(corrupt(format!("tree roots {first}: {} digests, expected {count}", roots.len())));
        }
        below.extend(roots);
    }
    for band in 1..layout.bands() {
        let per = layout.piece_len(band).div_ceil(2) * 2;
        let mut roots = Vec::new();
        for (index, chunk) in below.chunks(per).enumerate() {
            let piece = reckle::stored::upper_piece(&layout, band, index as u64, chunk)?;
            p.blobs().put(&layout::reckle_piece(job, piece.id), Bytes::from(piece.to_bytes())).await?;
            roots.push(piece.root());
        }
        below = roots;
    }
    Ok(())
}

fn decode_digests(bytes: &[u8]) -> Result<Vec<Digest>, reckle::Error> {
    if !bytes.len().is_multiple_of(reckle::stored::DIGEST_BYTES) {
        return Err(reckle::Error::Malformed(format!("{} bytes is not a whole number of digests", bytes.len())));
    }
    bytes
        .chunks_exact(reckle::stored::DIGEST_BYTES)
        .map(|c| Digest::from_elements(std::array::from_fn(|i| u64::from_le_bytes(c[8 * i..8 * i + 8].try_into().expect("8 bytes")))))
        .collect()
}

fn encode_digests(digests: &[Digest]) -> Vec<u8> {
    digests.iter().flat_map(|d| d.0.iter().flat_map(|e| e.to_le_bytes())).collect()
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
    // One set per q, the largest ℓ waiting (its chain serves the smaller ones), in the order
    // of each q's oldest job.
    let mut sets: Vec<Params> = Vec::new();
    for rec in active {
        let Ok(params) = ReckleJobSpec::of(rec).and_then(|s| s.params()) else { continue };
        match sets.iter_mut().find(|s| s.log_bucket == params.log_bucket) {
            Some(s) => s.log_n = s.log_n.max(params.log_n),
            None => sets.push(params),
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

/// A stored piece of the job's tree, cached within the process's byte budget.
async fn piece(p: &Platform, job: &str, layout: &Layout, id: PieceId) -> Result<Arc<Piece>, PlatformError> {
    let key = layout::reckle_piece(job, id);
    if let Some(piece) = p.cache().get::<Piece>(&key) {
        return Ok(piece);
    }
    let bytes = p.blobs().get(&key).await?;
    let piece = Arc::new(Piece::from_bytes(layout, id, &bytes).map_err(|e| corrupt(format!("{key}: {e}")))?);
    p.cache().put(&key, piece.clone(), bytes.len() as u64);
    Ok(piece)
}

/// `C_v` of node `id` (at a level `≥ q`): one piece read.
async fn node_hash(p: &Platform, job: &str, layout: &Layout, id: NodeId) -> Result<Digest, PlatformError> {
    Ok(piece(p, job, layout, layout.piece_of(id)?).await?.hash(layout, id)?)
}

/// The hashes of `ids`, reading each piece they lie in once.
async fn node_hashes(p: &Platform, job: &str, layout: &Layout, ids: &BTreeSet<NodeId>) -> Result<BTreeMap<NodeId, Digest>, PlatformError> {
    let mut by_piece: BTreeMap<PieceId, Vec<NodeId>> = BTreeMap::new();
    for id in ids {
        by_piece.entry(layout.piece_of(*id)?).or_default().push(*id);
    }
    let mut out = BTreeMap::new();
    for (pid, ids) in by_piece {
        let piece = piece(p, job, layout, pid).await?;
        for id in ids {
            out.insert(id, piece.hash(layout, id)?);
        }
    }
    Ok(out)
}

/// The values of bucket `bucket` (`2^q` of them): one ranged read of the job's leaves.
async fn bucket_values(p: &Platform, job: &str, params: Params, bucket: u64) -> Result<Vec<u64>, PlatformError> {
    let size = params.bucket_size();
    let bytes = p.blobs().get_range(&layout::reckle_leaves(job), 8 * bucket * size, 8 * size).await?;
    Ok(reckle::decode_values(&bytes)?)
}

/// Worker: a tree task hashes its range of the leaves (one ranged read per band-0 piece) into
/// band-0 pieces, then stores their roots for the executor's upper bands.
async fn tree(p: &Platform, lease: &Lease) -> Result<(), PlatformError> {
    let job = &lease.task.job_id;
    if p.ended(job).await? {
        tracing::info!("job has ended; task dropped");
        return Ok(());
    }
    let Payload::Tree(TreeTask { first, count }) = payload_of(lease)? else {
        return Err(corrupt("task payload: a node where a tree task was expected"));
    };
    let layout = Layout::new(job_plan(p, job).await?.params);
    if count == 0 || first.checked_add(count).is_none_or(|end| end > layout.pieces(0)) {
        return Err(corrupt(format!("tree task: pieces {first}+{count} of {}", layout.pieces(0))));
    }
    let per = layout.leaves_per_bottom_piece();
    let mut roots = Vec::with_capacity(count as usize);
    for index in first..first + count {
        let values = reckle::decode_values(&p.blobs().get_range(&layout::reckle_leaves(job), 8 * index * per, 8 * per).await?)?;
        let piece = crate::work::blocking(move |cancel| {
            cancel.check()?;
            Ok::<_, PlatformError>(reckle::stored::bottom_piece(&layout, index, &values)?)
        })
        .await??;
        p.blobs().put(&layout::reckle_piece(job, piece.id), Bytes::from(piece.to_bytes())).await?;
        roots.push(piece.root());
    }
    p.blobs().put(&layout::reckle_piece_roots(job, first), Bytes::from(encode_digests(&roots))).await?;
    report_node(p, lease).await
}

/// Worker: proves one node (a pure function of the job inputs and the children's proofs), or
/// runs a tree task.
async fn work(p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
    if task == TREE {
        return tree(p, lease).await;
    }
    if task == super::reckle_final::WRAP {
        return super::reckle_final::wrap(p, lease).await;
    }
    let job = &lease.task.job_id;
    if p.ended(job).await? {
        tracing::info!("job has ended; task dropped");
        return Ok(());
    }
    let id = node_of(lease)?;
    let j = job_plan(p, job).await?;
    let layout = Layout::new(j.params);
    let circuits = p.circuits(j.params).await?;
    let proof = if id.level == j.params.log_bucket {
        let selected = reckle::selected_in_bucket(j.params, &j.spec.batch, id.index);
        let values = bucket_values(p, job, j.params, id.index).await?;
        let c = circuits.clone();
        crate::work::blocking(move |_| reckle::prove_bucket(&c, id.index, &values, &selected)).await??
    } else {
        let mut children = Vec::with_capacity(2);
        for child in id.children() {
            if j.plan.contains(&child) {
                let bytes = p.blobs().get(&layout::reckle_node(job, child)).await?;
                children.push(Child::Proven(NodeProof::from_bytes(&circuits, &bytes)?));
            } else {
                children.push(Child::Hash(node_hash(p, job, &layout, child).await?));
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
    let id = match payload_of(lease)? {
        Payload::Node(t) => NodeId::new(t.level, t.index),
        Payload::Tree(t) => return tree_done(p, job, t.first).await,
    };
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

/// Executor: records a tree task; after the last one, hashes the upper bands and releases
/// the job's first proofs. Two executors that both see the last report both do this: the
/// pieces are the same bytes and dispatch is at most once per task.
async fn tree_done(p: &Platform, job: &str, first: u64) -> Result<(), PlatformError> {
    if !p.live(job).await? {
        return Ok(());
    }
    p.job_store().task_done(job, TREE.name, &tree_task_id(first)).await?;
    let rec = p.record(job).await?;
    if rec.tasks.get(TREE.name).is_some_and(|c| c.done < c.total) {
        return Ok(());
    }
    let j = job_plan(p, job).await?;
    upper_bands(p, job, j.params).await?;
    release(p, &rec, &j.spec, j.params, &j.initial).await
}

/// Aggregator: verifies the root proof against the statement and publishes the proof
/// directory; the job is done only after that.
async fn finish(p: &Platform, lease: &Lease) -> Result<(), PlatformError> {
    let job = &lease.task.job_id;
    if p.ended(job).await? {
        return Ok(());
    }
    let j = job_plan(p, job).await?;
    let layout = Layout::new(j.params);
    let circuits = p.circuits(j.params).await?;
    let root = NodeProof::from_bytes(&circuits, &p.blobs().get(&layout::reckle_node(job, NodeId::new(j.params.log_n, 0))).await?)?;
    // The tree's hashes this step needs (T'_I and its siblings), and the batch's values (one
    // ranged read per bucket): never the whole tree or all the leaves.
    let hashes = node_hashes(p, job, &layout, &reckle::hashes_needed(j.params, &j.spec.batch)?).await?;
    let c = reckle::NodeHashes::node_hash(&hashes, NodeId::new(j.params.log_n, 0))?;
    let mut pairs = Vec::with_capacity(j.spec.batch.len());
    let mut bucket: Option<(u64, Vec<u64>)> = None;
    for &i in &j.spec.batch {
        let b = i >> j.params.log_bucket;
        if bucket.as_ref().is_none_or(|(at, _)| *at != b) {
            bucket = Some((b, bucket_values(p, job, j.params, b).await?));
        }
        let values = &bucket.as_ref().expect("just read").1;
        pairs.push((i, values[(i - (b << j.params.log_bucket)) as usize]));
    }
    let statement = Statement::new(&circuits, c, &pairs)?;
    if let Err(e) = statement.verify_for(&c, circuits.root_key(), &root) {
        // Not retried: a root proof that does not verify will not verify next time either.
        return p.fail_job(job, &format!("final verification failed: {e}")).await;
    }
    let wrapped = match &j.spec.wrap_vk_digest {
        None => None,
        Some(d) => match super::reckle_final::check_final(p, job, d, circuits.root_key(), &c, &statement).await? {
            Ok(files) => Some((d.clone(), files)),
            // Not retried either: the bytes the wrap task wrote are what they are.
            Err(e) => return p.fail_job(job, &format!("final proof verification failed: {e}")).await,
        },
    };
    publish_root_key(p, &circuits).await?;
    // Λ_I streamed into the object store one node proof at a time (each checked as it goes):
    // the aggregator's memory does not grow with |I| (a batch of 1,024 at ℓ = 27 is ~14k node
    // proofs, ~1.8 GB, which it used to hold twice).
    let (mut lambda, head) = reckle::LambdaStream::new(j.params, &j.spec.batch)?;
    let mut up = p.blobs().upload(&layout::proof_file(job, files::LAMBDA)).await?;
    up.write(Bytes::from(head)).await?;
    for id in lambda.nodes().to_vec() {
        let proof = NodeProof::from_bytes(&circuits, &p.blobs().get(&layout::reckle_node(job, id)).await?)?;
        up.write(Bytes::from(lambda.push(&circuits, &hashes, &proof)?)).await?;
    }
    up.write(Bytes::from(lambda.finish(&hashes)?)).await?;
    up.finish().await?;
    let put = |name: &str, bytes: Vec<u8>| {
        let key = layout::proof_file(job, name);
        async move { p.blobs().put(&key, Bytes::from(bytes)).await }
    };
    p.blobs().copy(&layout::reckle_leaves(job), &layout::proof_file(job, files::LEAVES)).await?;
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
    #[test]
    fn the_circuit_set_estimate_fits_the_measured_sets() {
        for (l, q, mib) in [(8, 2, 568u64), (16, 4, 1143), (20, 4, 1525), (24, 4, 1907), (24, 12, 2536)] {
            let est = super::circuit_set_estimate(l, q) as f64 / (1u64 << 20) as f64;
            assert!((est / mib as f64 - 1.0).abs() < 0.02, "({l}, {q}): estimate {est:.0} MiB, measured {mib}");
        }
        let (bytes, at) = super::largest_circuit_set();
        assert_eq!(at, (super::MAX_LOG_N, reckle::MAX_LOG_BUCKET));
        assert_eq!(bytes, super::circuit_set_estimate(super::MAX_LOG_N, reckle::MAX_LOG_BUCKET));
    }

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

    /// A filesystem store that counts the bytes this process reads from it (`get`,
    /// `get_range`); the ranges an upload appends by [`blobstore::Upload::append_copy`] are the
    /// store's own (on S3, the server's).
    struct Counted {
        inner: blobstore::FsStore,
        read: std::sync::atomic::AtomicU64,
    }

    impl Counted {
        fn read(&self) -> u64 {
            self.read.swap(0, std::sync::atomic::Ordering::Relaxed)
        }
    }

    #[async_trait]
    impl blobstore::BlobStore for Counted {
        async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
            self.inner.put(key, data).await
        }
        async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
            let got = self.inner.get(key).await?;
            self.read.fetch_add(got.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(got)
        }
        async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
            let got = self.inner.get_range(key, start, len).await?;
            self.read.fetch_add(got.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(got)
        }
        async fn size(&self, key: &str) -> Result<u64, BlobError> {
            self.inner.size(key).await
        }
        async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn blobstore::Upload + 'a>, BlobError> {
            self.inner.upload(key).await
        }
        async fn exists(&self, key: &str) -> Result<bool, BlobError> {
            self.inner.exists(key).await
        }
        async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
            self.inner.list(prefix).await
        }
        async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, BlobError> {
            self.inner.list_objects(prefix).await
        }
        async fn delete(&self, key: &str) -> Result<(), BlobError> {
            self.inner.delete(key).await
        }
    }

    /// Issue 31 ("large updates never plan"): an update's plan wrote its leaves by streaming
    /// every byte of the base job's through the executor (1 GiB at ℓ = 27 for one change). Now
    /// it reads only the chunks holding a change and appends the rest as copies; the leaves come
    /// out the same. Seen failing before: 16 MiB read for a change in one of two chunks.
    #[tokio::test]
    async fn an_update_reads_only_the_leaf_chunks_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Counted { inner: blobstore::FsStore::new(dir.path()).unwrap(), read: Default::default() };
        let params = Params::new(21, 3).unwrap();
        let n = params.num_leaves();
        assert_eq!(8 * n, 2 * STREAM_BYTES, "two chunks of leaves");
        let base: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let bytes = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        blobstore::BlobStore::put(&store, &layout::reckle_leaves("base"), Bytes::from(bytes(&base))).await.unwrap();
        store.read();
        let cases: [(&[Change], u64); 4] = [
            // Two sets in the second chunk (the later of one index wins) and an add: one chunk read.
            (&[Change::Set { index: n - 1, value: 5 }, Change::Set { index: n / 2 + 3, value: 6 }, Change::Add(4), Change::Set { index: n - 1, value: 7 }], STREAM_BYTES),
            // The first leaf and the last: both chunks.
            (&[Change::Set { index: 0, value: 1 }, Change::Set { index: n - 1, value: 2 }], 2 * STREAM_BYTES),
            // The last leaf of the first chunk: that chunk only.
            (&[Change::Set { index: n / 2 - 1, value: 9 }], STREAM_BYTES),
            // No leaf set (a batch change only): nothing read.
            (&[Change::Remove(4)], 0),
        ];
        for (i, (changes, read)) in cases.into_iter().enumerate() {
            let job = format!("upd{i}");
            write_update_leaves(&store, &job, "base", changes, params).await.unwrap();
            assert_eq!(store.read(), read, "case {i}: bytes of the base job's leaves read by this process");
            let mut want = base.clone();
            for c in changes {
                if let Change::Set { index, value } = *c {
                    want[index as usize] = value;
                }
            }
            let got = blobstore::BlobStore::get(&store.inner, &layout::reckle_leaves(&job)).await.unwrap();
            assert!(got == bytes(&want), "case {i}: the update's leaves differ from the base with its changes");
        }
    }
}

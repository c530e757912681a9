//! Reckle jobs: a batch proof over a vector commitment (`reckle.batch`), and an update of a
//! finished batch job that re-proves only the affected paths (`reckle.update`).
//!
//! Paper notation (Reckle trees, §3–4): a tree of `2^ℓ` leaves (`log_n`) cut at the bucket
//! level `q` (`log_bucket`: buckets of `2^q` leaves); `I` the batch of indices; `T'_I` the
//! union of the batch's root paths cut at level `q` (the nodes that carry a proof); `C` the
//! root commitment and `Λ_I` the batch proof the aggregator assembles.
//!
//! On the typed contract ([`super::contract`]); a task's id is its index within its step:
//!
//! ```text
//! (update) reckle.prepare ─▶ reckle.tree × t ─▶ reckle.bands ─▶ reckle.leaf × b (in the job's window)
//!     ─▶ reckle.node (each once its children in the plan are done) ─▶ … root
//!     ─▶ (final) reckle.wrap ─▶ reckle.finish
//! ```
//!
//! 1. `reckle.prepare` (worker, update jobs only, [`prepare`]): writes the update's leaves (the
//!    base job's with the changes patched, the rest copied on the object store's side), and
//!    copies the node proofs it keeps and the tree pieces no change touches from the base job.
//! 2. `reckle.tree` × t (worker, [`tree`]): task `i` hashes the `i`-th range of leaves,
//!    2^20 values, into the stored pieces of the Merkle tree above the buckets
//!    (`reckle::stored`; an update re-hashes only the ranges holding a changed leaf).
//! 3. `reckle.bands` (worker, [`tree`]): the upper bands of the tree from the ranges' roots.
//! 4. `reckle.leaf` × b (worker, [`prove`]): task `i` proves the `i`-th bucket of the plan in
//!    index order, a job window at a time ([`Effect::Release`]).
//! 5. `reckle.node` (worker, [`prove`]): an inner node of `T'_I`, its task index the node packed
//!    as `level << 32 | index` ([`node_index`]); dispatched the moment its last child in the plan
//!    is done ([`Effect::Join`]), so the work closest to the root is released first. An
//!    update's nodes none of whose children it proves (a removed index's path) go when the
//!    bands are done.
//! 6. `reckle.wrap` (worker, `final_proof` jobs only, [`wrap`]): the root proof wrapped into one
//!    Pari proof on BN254, on workers started with `--reckle-wrap-worker`.
//! 7. `reckle.finish` (aggregator, [`publish`]): assembles the statement and `Λ_I`, **verifies**
//!    the root proof (and the final proof), and publishes the files of `reckle::files`.
//!
//! Reports go to `reckle.done`; [`Reckle::on_done`] (pure) says what each releases. What every
//! task needs beyond its index is derived from the spec once per process ([`Derived`]: the plan's
//! node sets, the buckets in order, the tree ranges), never read from the tree. Every output is
//! deterministic in its key (`layout::reckle_node`): a redelivered task overwrites the same object.

use std::collections::BTreeSet;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use api::v1 as pb;
use async_trait::async_trait;
use queue::Lease;
use reckle::stored::Layout;
use reckle::{Change, NodeId, Params};

use super::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use super::{Submission, Pins, Served, TaskKind};
use crate::error::invalid;
use crate::{layout, Platform, PlatformError};

mod circuits;
mod prepare;
mod prove;
mod publish;
mod tree;
mod validate;
pub mod wrap;

pub(crate) use circuits::CircuitSets;
pub use circuits::{circuit_set_estimate, largest_circuit_set};
pub use publish::verify_statement;
pub use wrap::WRAP;

pub const JOB_BATCH: &str = "reckle.batch";
pub const JOB_UPDATE: &str = "reckle.update";

pub const PREPARE: TaskKind = TaskKind::new("reckle.prepare", Served::Worker, 1800);
pub const TREE: TaskKind = TaskKind::new("reckle.tree", Served::Worker, 1800);
pub const BANDS: TaskKind = TaskKind::new("reckle.bands", Served::Worker, 1800);
pub const LEAF: TaskKind = TaskKind::new("reckle.leaf", Served::Worker, 1800);
pub const NODE: TaskKind = TaskKind::new("reckle.node", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("reckle.done", Served::Executor, 300);
pub const FINISH: TaskKind = TaskKind::new("reckle.finish", Served::Aggregator, 1800);

/// Largest tree a job may ask for (2^27 leaves, 1 GiB of values: the Reckle paper's `n`).
pub const MAX_LOG_N: u32 = reckle::MAX_LOG_N;
/// Leaf values one `reckle.tree` task hashes (8 MiB of values; at least one band-0 piece).
const TREE_TASK_LEAVES: u64 = 1 << 20;
/// Largest batch (the job spec is kept in the job store, not the blob store).
pub const MAX_BATCH: usize = 4096;
/// Most changes in one update job.
pub const MAX_CHANGES: usize = 1024;

/// The steps of a Reckle job, in order (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Prepare,
    Tree,
    Bands,
    Leaf,
    Node,
    Wrap,
    Finish,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Prepare, Step::Tree, Step::Bands, Step::Leaf, Step::Node, Step::Wrap, Step::Finish];
    fn task(self) -> TaskKind {
        match self {
            Step::Prepare => PREPARE,
            Step::Tree => TREE,
            Step::Bands => BANDS,
            Step::Leaf => LEAF,
            Step::Node => NODE,
            Step::Wrap => WRAP,
            Step::Finish => FINISH,
        }
    }
}

/// Where a batch job's leaf values come from (request only: the values become the job's input
/// `leaves.bin`, the object is copied there).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Leaves {
    Inline(Vec<u64>),
    /// An object in the platform's blob store (`leaves.bin` format), under the caller's uploads.
    Object(String),
}

/// What a Reckle job proves, as recorded in the job store. A request names less: a batch
/// request its `leaves` (moved into the job's inputs by validation, never recorded), an update
/// request only `update.base_job` and `update.changes` (validation completes the rest from the
/// base job). [`Reckle::check`] derives the plan from it ([`Derived`]) and keeps it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReckleJobSpec {
    #[serde(default)]
    pub log_n: u32,
    #[serde(default)]
    pub log_bucket: u32,
    /// The batch proved (after the update, for an update job).
    #[serde(default)]
    pub batch: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<UpdateSpec>,
    /// The final proof ([`wrap`]): the digest of the wrap verifying key it is made and checked
    /// with, pinned by the platform when the job was submitted; `None`: no final proof.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wrap_vk_digest: Option<String>,
    /// Request only: also make the final proof (validation pins `wrap_vk_digest`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub final_proof: bool,
    /// Request only (batch jobs): the leaf values.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves: Option<Leaves>,
    #[serde(skip)]
    derived: Lazy,
}

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct UpdateSpec {
    pub base_job: String,
    /// The base job's batch (completed by validation).
    #[serde(default)]
    pub base_batch: Vec<u64>,
    pub changes: Vec<Change>,
}

/// The derived plan, kept in the spec once [`Reckle::check`] made it (not part of the spec's
/// value: two specs that say the same are equal whether or not either derived it).
#[derive(Clone, Default)]
struct Lazy(OnceLock<Arc<Derived>>);

impl PartialEq for Lazy {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Lazy {}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.get().is_some() { "derived" } else { "not derived" })
    }
}

/// What every task of a job needs, derived from its spec alone (node ids: kilobytes to a few
/// megabytes): no leaves read, no tree built. Executors need no more than this.
#[derive(Debug)]
pub struct Derived {
    pub params: Params,
    /// `T'_I`: every node that carries a proof.
    pub plan: BTreeSet<NodeId>,
    /// The nodes this job proves: all of `T'_I` for a batch job, the affected paths for an update.
    pub todo: BTreeSet<NodeId>,
    /// The buckets this job proves, ascending: `reckle.leaf` task `i` proves `buckets[i]`.
    pub buckets: Vec<u64>,
    /// The inner nodes this job proves that wait for no child it proves (an update's only).
    pub first_nodes: Vec<NodeId>,
    /// The `reckle.tree` tasks, as ranges of band-0 pieces `(first, count)`: all of them for
    /// a batch job, those holding a changed leaf for an update (the others are copied).
    pub trees: Vec<(u64, u64)>,
}

impl Derived {
    fn of(spec: &ReckleJobSpec) -> Result<Self, PlatformError> {
        let params = Params::new(spec.log_n, spec.log_bucket).map_err(|e| invalid("log_bucket", e.to_string()))?;
        let plan: BTreeSet<NodeId> = reckle::plan_batch(params, &spec.batch).map_err(|e| invalid("batch", e.to_string()))?.into_iter().collect();
        let todo: BTreeSet<NodeId> = match &spec.update {
            None => plan.clone(),
            Some(u) => reckle::plan_update(params, &u.base_batch, &u.changes).map_err(|e| invalid("changes", e.to_string()))?.reprove.into_iter().collect(),
        };
        let q = params.log_bucket;
        let buckets = todo.iter().filter(|id| id.level == q).map(|id| id.index).collect();
        let first_nodes = todo.iter().filter(|id| id.level > q && !id.children().iter().any(|c| todo.contains(c))).copied().collect();
        let trees = tree_todo(params, spec.update.as_ref());
        Ok(Self { params, plan, todo, buckets, first_nodes, trees })
    }

    /// About the bytes it holds (a `BTreeSet` entry: its 12-byte key and its share of a node).
    fn bytes(&self) -> u64 {
        48 * (self.plan.len() + self.todo.len()) as u64 + 16 * (self.buckets.len() + self.first_nodes.len() + self.trees.len()) as u64
    }

    /// The bucket of `reckle.leaf` task `index`.
    fn bucket(&self, index: u64) -> Option<NodeId> {
        self.buckets.get(usize::try_from(index).ok()?).map(|&b| NodeId::new(self.params.log_bucket, b))
    }

    /// The `reckle.leaf` task of bucket `b`, if this job proves it.
    fn leaf_task(&self, b: u64) -> Option<u64> {
        self.buckets.binary_search(&b).ok().map(|i| i as u64)
    }

    /// The tasks of `parent`'s children this job proves, as one step's index range (siblings
    /// are adjacent in both numberings).
    fn children_tasks(&self, parent: NodeId) -> Option<(Step, std::ops::Range<u64>)> {
        let kids: Vec<NodeId> = parent.children().into_iter().filter(|c| self.todo.contains(c)).collect();
        let (first, last) = (*kids.first()?, *kids.last()?);
        if first.level == self.params.log_bucket {
            Some((Step::Leaf, self.leaf_task(first.index)?..self.leaf_task(last.index)? + 1))
        } else {
            Some((Step::Node, node_index(first)..node_index(last) + 1))
        }
    }
}

impl ReckleJobSpec {
    /// The plan derived from the spec (made once, by [`Reckle::check`] or here).
    pub fn derived(&self) -> Result<Arc<Derived>, PlatformError> {
        if let Some(d) = self.derived.0.get() {
            return Ok(d.clone());
        }
        let d = Arc::new(Derived::of(self)?);
        Ok(self.derived.0.get_or_init(|| d).clone())
    }

    pub fn params(&self) -> Result<Params, PlatformError> {
        Params::new(self.log_n, self.log_bucket).map_err(|e| invalid("log_n", e.to_string()))
    }
}

/// The task index of inner node `id` (`reckle.node`): `level << 32 | index` (an index is below
/// `2^27`), so a node's children are two adjacent indices.
pub fn node_index(id: NodeId) -> u64 {
    (u64::from(id.level) << 32) | id.index
}

/// The node of `reckle.node` task `index` ([`node_index`]).
pub fn node_of_index(index: u64) -> NodeId {
    NodeId::new((index >> 32) as u32, index & 0xffff_ffff)
}

/// Every tree task of a tree of shape `params`: ranges of band-0 pieces `(first, count)`,
/// each about [`TREE_TASK_LEAVES`] leaves.
fn tree_chunks(params: Params) -> Vec<(u64, u64)> {
    let layout = Layout::new(params);
    let per = (TREE_TASK_LEAVES / layout.leaves_per_bottom_piece()).max(1);
    let n = layout.pieces(0);
    (0..n).step_by(per as usize).map(|first| (first, per.min(n - first))).collect()
}

/// The job's tree ranges ([`Derived::trees`]).
fn tree_todo(params: Params, update: Option<&UpdateSpec>) -> Vec<(u64, u64)> {
    let all = tree_chunks(params);
    let Some(u) = update else { return all };
    let per = all[0].1;
    let leaves = Layout::new(params).leaves_per_bottom_piece();
    let changed: BTreeSet<u64> =
        u.changes.iter().filter_map(|c| if let Change::Set { index, .. } = *c { Some(index / leaves / per * per) } else { None }).collect();
    all.into_iter().filter(|(first, _)| changed.contains(first)).collect()
}

/// A batch request's spec (validation moves the leaves into the job's inputs).
fn batch_spec(log_n: u32, log_bucket: u32, batch: Vec<u64>, leaves: Leaves, final_proof: bool) -> ReckleJobSpec {
    ReckleJobSpec { log_n, log_bucket, batch, update: None, wrap_vk_digest: None, final_proof, leaves: Some(leaves), derived: Lazy::default() }
}

/// An update request's spec (validation completes it from the base job).
fn update_spec(base_job: String, changes: Vec<Change>, final_proof: bool) -> ReckleJobSpec {
    let update = Some(UpdateSpec { base_job, base_batch: Vec::new(), changes });
    ReckleJobSpec { log_n: 0, log_bucket: 0, batch: Vec::new(), update, wrap_vk_digest: None, final_proof, leaves: None, derived: Lazy::default() }
}

/// An in-process request for a batch job (what the `reckle_batch` message gives over gRPC).
pub fn batch_request(log_n: u32, log_bucket: u32, batch: Vec<u64>, leaves: Leaves, final_proof: bool) -> Submission {
    contract::spec_request::<ReckleBatch>(&batch_spec(log_n, log_bucket, batch, leaves, final_proof))
}

/// An in-process request for an update of the done job `base_job` (the `reckle_update` message).
pub fn update_request(base_job: String, changes: Vec<Change>, final_proof: bool) -> Submission {
    contract::spec_request::<ReckleUpdate>(&update_spec(base_job, changes, final_proof))
}

/// What tells a batch job from an update: its name, its message and its validation.
#[async_trait]
pub trait Mode: Send + Sync + Default + 'static {
    const NAME: &'static str;
    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<ReckleJobSpec, PlatformError>>;
    async fn validate(p: &Platform, tenant: &str, spec: &mut ReckleJobSpec) -> Result<Vec<super::InputCopy>, PlatformError>;
    fn limits() -> Vec<crate::limit::Limit>;
}

/// A Reckle job kind: [`ReckleBatch`] or [`ReckleUpdate`]. Both share their steps and task
/// kinds; the task kinds' first owner, the batch kind, runs the tasks of both.
#[derive(Default)]
pub struct Reckle<M>(PhantomData<M>);

/// `reckle.batch`.
pub type ReckleBatch = Reckle<validate::Batch>;
/// `reckle.update`.
pub type ReckleUpdate = Reckle<validate::Update>;

#[async_trait]
impl<M: Mode> Kind for Reckle<M> {
    const NAME: &'static str = M::NAME;
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = ReckleJobSpec;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<ReckleJobSpec, PlatformError>> {
        M::from_pb(params)
    }

    async fn validate(&self, p: &Platform, tenant: &str, spec: &mut ReckleJobSpec) -> Result<Planned<Step>, PlatformError> {
        let copies = M::validate(p, tenant, spec).await?;
        let inputs = match spec.leaves.take() {
            Some(Leaves::Inline(values)) => vec![(validate::LEAVES_INPUT.to_string(), bytes::Bytes::from(reckle::encode_values(&values)))],
            _ => Vec::new(),
        };
        let d = spec.derived()?;
        let inner = d.todo.len() - d.buckets.len();
        let mut tasks = vec![(Step::Tree, d.trees.len() as u64), (Step::Bands, 1), (Step::Leaf, d.buckets.len() as u64), (Step::Node, inner as u64), (Step::Finish, 1)];
        if spec.update.is_some() {
            tasks.push((Step::Prepare, 1));
        }
        if spec.wrap_vk_digest.is_some() {
            tasks.push((Step::Wrap, 1));
        }
        let mut planned = Planned::tasks(tasks.into_iter().filter(|&(_, n)| n > 0).collect());
        planned.inputs = inputs;
        planned.copies = copies;
        Ok(planned)
    }

    /// The tree's shape, the batch and (an update) the changes, as [`Derived`] plans them;
    /// derives the plan and keeps it in the spec.
    fn check(spec: &ReckleJobSpec) -> Result<(), PlatformError> {
        if spec.log_n > MAX_LOG_N {
            return Err(invalid("log_n", format!("{} is above the platform's limit of {MAX_LOG_N}", spec.log_n)));
        }
        if spec.batch.len() > MAX_BATCH {
            return Err(invalid("batch", format!("{} indices, at most {MAX_BATCH}", spec.batch.len())));
        }
        if spec.update.as_ref().is_some_and(|u| u.changes.len() > MAX_CHANGES) {
            return Err(invalid("changes", format!("at most {MAX_CHANGES} changes")));
        }
        spec.derived().map(drop)
    }

    fn resident_bytes(spec: &ReckleJobSpec) -> u64 {
        spec.derived.0.get().map_or(0, |d| d.bytes())
    }

    fn plan(spec: &ReckleJobSpec) -> Vec<Effect<Step>> {
        match spec.derived() {
            Err(e) => vec![Effect::Fail(e.to_string())],
            Ok(_) if spec.update.is_some() => vec![Effect::Dispatch(Step::Prepare, 0..1)],
            Ok(d) => trees_or_bands(&d),
        }
    }

    async fn work(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        let d = job.spec.derived()?;
        match step {
            Step::Prepare => prepare::prepare(p, job.id(), &job.spec, &d).await?,
            Step::Tree => tree::tree(p, job.id(), &d, index).await?,
            Step::Bands => tree::upper_bands(p, job.id(), d.params).await?,
            Step::Leaf => prove::leaf(p, job.id(), &job.spec, &d, index).await?,
            Step::Node => prove::node(p, job.id(), &d, index).await?,
            Step::Wrap => wrap::wrap(p, job.id(), &job.spec).await?,
            Step::Finish => return Err(PlatformError::Config(format!("reckle: {} is not a worker task", FINISH.name))),
        }
        Ok(String::new())
    }

    fn on_done(spec: &ReckleJobSpec, progress: &Progress<Step>, report: &Report<Step>) -> Vec<Effect<Step>> {
        let d = match spec.derived() {
            Ok(d) => d,
            Err(e) => return vec![Effect::Fail(e.to_string())],
        };
        let leaves = Effect::Release { step: Step::Leaf, n: d.buckets.len() as u64, freed: progress.done(Step::Leaf) };
        match report.step {
            Step::Prepare => trees_or_bands(&d),
            Step::Tree if progress.complete(Step::Tree) => vec![Effect::Dispatch(Step::Bands, 0..1)],
            Step::Tree => Vec::new(),
            Step::Bands => {
                let mut out = vec![leaves];
                out.extend(d.first_nodes.iter().map(|&id| Effect::Dispatch(Step::Node, node_index(id)..node_index(id) + 1)));
                out
            }
            Step::Leaf => match d.bucket(report.index) {
                Some(id) => std::iter::once(leaves).chain(after(spec, &d, id)).collect(),
                None => vec![Effect::Fail(format!("reckle.leaf task {} is not one of the job's", report.index))],
            },
            Step::Node => after(spec, &d, node_of_index(report.index)).into_iter().collect(),
            Step::Wrap => vec![Effect::Dispatch(Step::Finish, 0..1)],
            Step::Finish => vec![Effect::Done],
        }
    }

    async fn finish(&self, p: &Platform, job: &Job<Self>, step: Step, _index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        if step != Step::Finish {
            return Err(PlatformError::Config(format!("reckle: {} is not an aggregator task", contract::Step::task(step).name)));
        }
        let d = job.spec.derived()?;
        publish::finish(p, job.id(), &job.record.kind, &job.spec, &d).await?;
        Ok(String::new())
    }

    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        publish::verify_published(p, job.id(), pins.root).await
    }

    async fn warm_up(&self, p: &Platform, active: &[Job<Self>]) -> Result<(), PlatformError> {
        let params: Vec<Params> = active.iter().filter_map(|j| j.spec.params().ok()).collect();
        circuits::warm_up(p, &params).await
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![layout::reckle_nodes_prefix(job), layout::reckle_tree_prefix(job), layout::inputs_prefix(job)]
    }

    /// What a done Reckle job keeps for updates based on it: an update reads the base job's
    /// leaves and copies its kept node proofs and untouched tree pieces (`reckle::plan_update`).
    fn kept_when_done(job: &str) -> Vec<String> {
        vec![layout::reckle_leaves(job), layout::reckle_nodes_prefix(job), layout::reckle_tree_prefix(job)]
    }

    fn limits() -> Vec<crate::limit::Limit> {
        M::limits()
    }
}

/// After the prepare step (or at once, a batch job): the tree tasks, or straight to the bands
/// when no range changed (an update of the batch only).
fn trees_or_bands(d: &Derived) -> Vec<Effect<Step>> {
    if d.trees.is_empty() {
        vec![Effect::Dispatch(Step::Bands, 0..1)]
    } else {
        vec![Effect::Dispatch(Step::Tree, 0..d.trees.len() as u64)]
    }
}

/// What follows node `id` proved: its parent once its children in the plan are done, or after
/// the root the wrap (a `final_proof` job) or the finish.
fn after(spec: &ReckleJobSpec, d: &Derived, id: NodeId) -> Option<Effect<Step>> {
    if id.level >= d.params.log_n {
        let next = if spec.wrap_vk_digest.is_some() { Step::Wrap } else { Step::Finish };
        return Some(Effect::Dispatch(next, 0..1));
    }
    let parent = id.parent();
    let (of, after) = d.children_tasks(parent)?;
    Some(Effect::Join { step: Step::Node, index: node_index(parent), of, after })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(log_n: u32, log_bucket: u32, batch: Vec<u64>) -> ReckleJobSpec {
        ReckleJobSpec { log_n, log_bucket, batch, update: None, wrap_vk_digest: None, final_proof: false, leaves: None, derived: Lazy::default() }
    }

    fn report(step: Step, index: u64) -> Report<Step> {
        Report { step, index, payload: String::new() }
    }

    /// ℓ = 4, q = 2 (four buckets), batch {1, 6, 13}: buckets 0, 1 and 3 are proved, then the
    /// nodes (3, 0) after buckets 0 and 1, (3, 1) after bucket 3 alone, the root after both.
    #[test]
    fn each_step_releases_the_next() {
        let s = spec(4, 2, vec![1, 6, 13]);
        Reckle::<validate::Batch>::check(&s).unwrap();
        let d = s.derived().unwrap();
        assert_eq!(d.buckets, vec![0, 1, 3]);
        assert_eq!(d.trees.len(), 1);
        assert_eq!(ReckleBatch::plan(&s), vec![Effect::Dispatch(Step::Tree, 0..1)]);
        let at = |counts: &[(Step, u64, u64)], step, index| ReckleBatch::on_done(&s, &Progress::of(counts), &report(step, index));
        let leaves = |freed| Effect::Release { step: Step::Leaf, n: 3, freed };
        assert_eq!(at(&[(Step::Tree, 1, 1)], Step::Tree, 0), vec![Effect::Dispatch(Step::Bands, 0..1)]);
        assert_eq!(at(&[(Step::Bands, 1, 1)], Step::Bands, 0), vec![leaves(0)]);
        let (n30, n31, root) = (node_index(NodeId::new(3, 0)), node_index(NodeId::new(3, 1)), node_index(NodeId::new(4, 0)));
        // Buckets 0 and 1 are tasks 0 and 1: their parent joins both; bucket 3 (task 2) alone.
        assert_eq!(at(&[(Step::Leaf, 1, 3)], Step::Leaf, 1), vec![leaves(1), Effect::Join { step: Step::Node, index: n30, of: Step::Leaf, after: 0..2 }]);
        assert_eq!(at(&[(Step::Leaf, 3, 3)], Step::Leaf, 2), vec![leaves(3), Effect::Join { step: Step::Node, index: n31, of: Step::Leaf, after: 2..3 }]);
        assert_eq!(at(&[(Step::Node, 1, 3)], Step::Node, n31), vec![Effect::Join { step: Step::Node, index: root, of: Step::Node, after: n30..n31 + 1 }]);
        assert_eq!(at(&[(Step::Node, 3, 3)], Step::Node, root), vec![Effect::Dispatch(Step::Finish, 0..1)]);
        assert_eq!(at(&[(Step::Finish, 1, 1)], Step::Finish, 0), vec![Effect::Done]);
        // A final proof: the root releases the wrap, the wrap the finish.
        let wrapped = ReckleJobSpec { wrap_vk_digest: Some("ab".into()), ..s.clone() };
        assert_eq!(ReckleBatch::on_done(&wrapped, &Progress::of(&[]), &report(Step::Node, root)), vec![Effect::Dispatch(Step::Wrap, 0..1)]);
        assert_eq!(ReckleBatch::on_done(&wrapped, &Progress::of(&[]), &report(Step::Wrap, 0)), vec![Effect::Dispatch(Step::Finish, 0..1)]);
        // A tree task that is not the last releases nothing.
        let big = spec(22, 2, vec![1]);
        assert_eq!(big.derived().unwrap().trees.len(), 4);
        assert_eq!(ReckleBatch::on_done(&big, &Progress::of(&[(Step::Tree, 3, 4)]), &report(Step::Tree, 0)), vec![]);
    }

    /// An update prepares first; with no leaf set it goes straight to the bands; a node none of
    /// whose children it proves (the path of a removed index) goes with the bands.
    #[test]
    fn an_update_prepares_then_proves_its_paths() {
        let base = vec![1, 6, 13];
        // Index 6 leaves: bucket 1 leaves the plan, and (3, 0) is re-proved over bucket 0's kept
        // proof and bucket 1's hash.
        let changes = vec![Change::Remove(6)];
        let plan = reckle::plan_update(Params::new(4, 2).unwrap(), &base, &changes).unwrap();
        let s = ReckleJobSpec { update: Some(UpdateSpec { base_job: "b".into(), base_batch: base, changes }), ..spec(4, 2, plan.batch) };
        ReckleUpdate::check(&s).unwrap();
        assert_eq!(ReckleUpdate::plan(&s), vec![Effect::Dispatch(Step::Prepare, 0..1)]);
        let d = s.derived().unwrap();
        assert!(d.trees.is_empty(), "no leaf value changed");
        assert_eq!(ReckleUpdate::on_done(&s, &Progress::of(&[]), &report(Step::Prepare, 0)), vec![Effect::Dispatch(Step::Bands, 0..1)]);
        assert_eq!(d.first_nodes, vec![NodeId::new(3, 0)]);
        let n30 = node_index(NodeId::new(3, 0));
        let bands = ReckleUpdate::on_done(&s, &Progress::of(&[]), &report(Step::Bands, 0));
        assert_eq!(bands, vec![Effect::Release { step: Step::Leaf, n: 0, freed: 0 }, Effect::Dispatch(Step::Node, n30..n30 + 1)]);
        let root = node_index(NodeId::new(4, 0));
        assert_eq!(ReckleUpdate::on_done(&s, &Progress::of(&[]), &report(Step::Node, n30)), vec![Effect::Join { step: Step::Node, index: root, of: Step::Node, after: n30..n30 + 1 }]);
    }

    /// A stored spec is input too: one whose batch the tree does not hold is refused when it is
    /// decoded, naming the field.
    #[test]
    fn stored_specs_are_checked_when_decoded() {
        assert!(matches!(ReckleBatch::check(&spec(4, 2, vec![16])), Err(PlatformError::InvalidJob { field: "batch", .. })));
        assert!(matches!(ReckleBatch::check(&spec(40, 2, vec![1])), Err(PlatformError::InvalidJob { field: "log_n", .. })));
        let index = node_index(NodeId::new(27, (1 << 27) - 1));
        assert_eq!(node_of_index(index), NodeId::new(27, (1 << 27) - 1));
    }

    /// The job store's spec limit admits the largest request the limits here accept (a
    /// 4,096-index batch at ℓ = 24 was once refused as an oversized spec).
    #[test]
    fn the_largest_specs_fit_the_job_store() {
        let top = (1u64 << MAX_LOG_N) - 1;
        let batch: Vec<u64> = (0..MAX_BATCH as u64).map(|i| top - i).collect();
        let s = spec(MAX_LOG_N, 3, batch.clone());
        let len = serde_json::to_string(&s).unwrap().len();
        assert!(len <= jobs::MAX_SPEC_BYTES, "batch spec of {len} bytes");
        let changes: Vec<Change> = (0..MAX_CHANGES as u64).map(|i| Change::Set { index: top - i, value: u64::MAX }).collect();
        let mut after = batch.clone();
        after.extend((0..MAX_CHANGES as u64).map(|i| top - MAX_BATCH as u64 - i));
        let update = ReckleJobSpec { update: Some(UpdateSpec { base_job: "f".repeat(64), base_batch: batch, changes }), wrap_vk_digest: Some("f".repeat(64)), ..spec(MAX_LOG_N, 3, after) };
        let len = serde_json::to_string(&update).unwrap().len();
        assert!(len <= jobs::MAX_SPEC_BYTES, "update spec of {len} bytes");
    }
}

//! The custom resources (group `prover.dev`, version `v1alpha1`), derived from these types.
//! `operator crds` prints their CustomResourceDefinitions; the committed copies under
//! `deploy/crds/` and `helm/prover/crds/` are checked against them by a test.

use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub const GROUP: &str = "prover.dev";

/// A proving job submitted to the platform's JobService (`SubmitJob`) and followed until it ends.
///
/// Exactly one of `reckleBatch`, `reckleUpdate`, `pariBatch`, `pariCircom`, `hekaton`, `noop`
/// and `testudo` must be given: the one `kind` names. The job is submitted once; later changes to the spec are not applied to it.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "prover.dev",
    version = "v1alpha1",
    kind = "ProofJob",
    plural = "proofjobs",
    doc = "A proving job: submitted to the platform's JobService once, its progress mirrored into status.",
    shortname = "pj",
    namespaced,
    status = "ProofJobStatus",
    printcolumn = r#"{"name":"Kind","type":"string","jsonPath":".spec.kind"}"#,
    printcolumn = r#"{"name":"Phase","type":"string","jsonPath":".status.phase"}"#,
    printcolumn = r#"{"name":"Job","type":"string","jsonPath":".status.jobId"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ProofJobSpec {
    /// Which job: reckle-batch, reckle-update, pari-batch, pari-circom, hekaton, noop or testudo.
    pub kind: JobKind,
    /// Idempotency key of the submission (default: the resource's UID), so that a retried
    /// submission returns the job already created instead of a second one. The operator
    /// submits it as `<namespace>/<key>`: the same key in two namespaces gives two jobs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// Parameters of a reckle-batch job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reckle_batch: Option<ReckleBatch>,
    /// Parameters of a reckle-update job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reckle_update: Option<ReckleUpdate>,
    /// Parameters of a pari-batch job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pari_batch: Option<PariBatch>,
    /// Parameters of a pari-circom job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pari_circom: Option<PariCircom>,
    /// Parameters of a hekaton job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hekaton: Option<Hekaton>,
    /// Parameters of a noop job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noop: Option<Noop>,
    /// Parameters of a testudo job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub testudo: Option<Testudo>,
}

/// Tasks that do nothing (`NoopParams`): measures the orchestration, or smoke-tests a
/// deployment (every role takes part, nothing is proved).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Noop {
    /// How many tasks: at least 1, at most 1,000,000.
    pub tasks: u64,
}

/// Testudo proofs of a registered BLS12-381 circom circuit, one per uploaded witness
/// (`TestudoParams`), under the platform's universal key; with `compress`, each also
/// compressed into one Pari proof on BW6-767.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Testudo {
    /// The circuit id `prover circuit register` printed (64 hex digits).
    pub circuit_id: String,
    /// Object keys of uploaded `.wtns` files (`prover upload`), under the tenant's upload prefix.
    pub witness_object_keys: Vec<String>,
    /// Also compress each proof into one constant-size Pari proof on BW6-767.
    #[serde(default)]
    pub compress: bool,
}

/// Pari proofs of a registered circom circuit (`prover circuit register`), one per uploaded
/// witness (`PariCircomParams`), published in batch-verified bundles with their public signals.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PariCircom {
    /// The circuit id `prover circuit register` printed (64 hex digits).
    pub circuit_id: String,
    /// Object keys of uploaded `.wtns` files (`prover upload`), under the tenant's upload prefix.
    pub witness_object_keys: Vec<String>,
    /// Proofs per prove task (default 4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs_per_task: Option<u64>,
    /// Proofs per bundle, rounded up to whole prove tasks (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_size: Option<u64>,
}

/// A Hekaton proof of one large circuit, its subcircuits proved by separate workers
/// (`HekatonParams`). synthetic: subcircuits, steps, wires; merkle-update: depth, updates, parts.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Hekaton {
    /// "synthetic" or "merkle-update".
    pub circuit: String,
    #[serde(default)]
    pub subcircuits: u32,
    #[serde(default)]
    pub steps: u32,
    #[serde(default)]
    pub wires: u32,
    #[serde(default)]
    pub depth: u32,
    #[serde(default)]
    pub updates: u32,
    #[serde(default)]
    pub parts: u32,
    /// Seed of the circuit's inputs.
    #[serde(default)]
    pub seed: u64,
    /// Also publish final.bin: one Pari proof on BW6-767 of the whole Hekaton proof (made by a
    /// hekaton.wrap worker), checked with `prover hekaton verify-final DIR --key-digest HEX`.
    #[serde(default)]
    pub final_proof: bool,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum JobKind {
    #[default]
    #[serde(rename = "reckle-batch")]
    ReckleBatch,
    #[serde(rename = "reckle-update")]
    ReckleUpdate,
    #[serde(rename = "pari-batch")]
    PariBatch,
    #[serde(rename = "pari-circom")]
    PariCircom,
    #[serde(rename = "hekaton")]
    Hekaton,
    #[serde(rename = "noop")]
    Noop,
    #[serde(rename = "testudo")]
    Testudo,
}

impl JobKind {
    /// Every kind (one per `SubmitJobRequest.params` field of the proto: checked by a test).
    pub const ALL: &'static [JobKind] =
        &[JobKind::ReckleBatch, JobKind::ReckleUpdate, JobKind::PariBatch, JobKind::PariCircom, JobKind::Hekaton, JobKind::Noop, JobKind::Testudo];

    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::ReckleBatch => "reckle-batch",
            JobKind::ReckleUpdate => "reckle-update",
            JobKind::PariBatch => "pari-batch",
            JobKind::PariCircom => "pari-circom",
            JobKind::Hekaton => "hekaton",
            JobKind::Noop => "noop",
            JobKind::Testudo => "testudo",
        }
    }
}

/// A Reckle batch proof over a tree of 2^logN leaves (`ReckleBatchParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReckleBatch {
    pub log_n: u32,
    /// Leaves per bucket proof: 2^logBucket.
    pub log_bucket: u32,
    /// Indices of the leaves proved.
    pub batch: Vec<u64>,
    /// All 2^logN leaf values, inline: at most 4096 (trees up to logN = 12), so that a
    /// ProofJob stays small in etcd and in the operator's cache. Larger trees: upload the
    /// leaves (`prover upload`) and give leavesObjectKey.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(length(max = 4096))]
    pub leaves: Option<Vec<u64>>,
    /// Object key in the platform's blob store holding the leaf values (8-byte little-endian each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub leaves_object_key: Option<String>,
    /// Also publish final.bin: one Pari proof on BN254 of the root proof, checked with
    /// `prover reckle verify-final DIR --root HEX --wrap-vk-digest HEX`.
    #[serde(default)]
    pub final_proof: bool,
}

/// Re-proves a done reckle-batch job after changes (`ReckleUpdateParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReckleUpdate {
    /// Job id of the earlier, done, batch job.
    pub base_job_id: String,
    pub changes: Vec<ReckleChange>,
    /// Also publish the updated job's final.bin (see reckleBatch.finalProof).
    #[serde(default)]
    pub final_proof: bool,
}

/// One change: exactly one of set, add, remove.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReckleChange {
    /// Set the leaf at `index` to `value`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub set: Option<SetLeaf>,
    /// Add this leaf index to the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub add: Option<u64>,
    /// Remove this leaf index from the batch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remove: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SetLeaf {
    pub index: u64,
    pub value: u64,
}

/// Many Pari proofs of one built-in circuit, published in bundles (`PariBatchParams`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PariBatch {
    /// "chain" (size = steps of v <- v^2 + i) or "poseidon" (size = inputs hashed).
    pub circuit: String,
    pub size: u64,
    /// Instances are derived from seeds seedStart .. seedStart + count.
    #[serde(default)]
    pub seed_start: u64,
    pub count: u64,
    /// Proofs per prove task (default 16).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proofs_per_task: Option<u64>,
    /// Proofs per bundle, rounded up to whole prove tasks (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bundle_size: Option<u64>,
}

/// Where the job stands, mirrored from the JobService (`GetJob`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProofJobStatus {
    /// Pending (not submitted yet), Queued, Running, Done, Failed or Cancelled.
    pub phase: Phase,
    /// The platform's job id, once submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Idempotency key the job was submitted with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotency_key: Option<String>,
    /// Task progress per task kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tasks: Vec<TaskProgress>,
    /// Object-key prefix of the proof directory once done.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proof_prefix: Option<String>,
    /// Why the job failed or was cancelled, or why it could not be submitted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// The metadata.generation this status was written for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Phase {
    // Pending: not submitted yet (no doc comment on a variant: schemars would move it out of
    // the enum's order).
    #[default]
    Pending,
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl Phase {
    /// Done, Failed and Cancelled: nothing more will happen to the job.
    pub fn is_terminal(self) -> bool {
        matches!(self, Phase::Done | Phase::Failed | Phase::Cancelled)
    }
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TaskProgress {
    pub kind: String,
    pub done: u64,
    pub total: u64,
}

/// A pool of workers (one Deployment) scaled by the work waiting in the queues of its task kinds.
///
/// desired = ceil(Σ_kind (pending + running + delayed) × secondsPerTask(kind) / targetBacklogSeconds),
/// clamped to [minReplicas, maxReplicas], and never below the workers busy with a task.
#[derive(CustomResource, Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[kube(
    group = "prover.dev",
    version = "v1alpha1",
    kind = "ProverPool",
    plural = "proverpools",
    doc = "A worker Deployment scaled by the work waiting in the queues of its task kinds.",
    shortname = "pp",
    namespaced,
    status = "ProverPoolStatus",
    printcolumn = r#"{"name":"Deployment","type":"string","jsonPath":".spec.deployment"}"#,
    printcolumn = r#"{"name":"Desired","type":"integer","jsonPath":".status.desiredReplicas"}"#,
    printcolumn = r#"{"name":"Busy","type":"integer","jsonPath":".status.busyWorkers"}"#,
    printcolumn = r#"{"name":"Pending","type":"integer","jsonPath":".status.pending"}"#,
    printcolumn = r#"{"name":"Age","type":"date","jsonPath":".metadata.creationTimestamp"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct ProverPoolSpec {
    /// Task kinds the pool's workers serve (their queues drive the scaling), e.g. ["pari.prove"].
    pub task_kinds: Vec<String>,
    /// Name of the worker Deployment (same namespace) whose replicas the operator sets.
    pub deployment: String,
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub min_replicas: i32,
    #[schemars(range(min = 0))]
    pub max_replicas: i32,
    /// Seconds of queued work one worker should have at most: the backlog in seconds divided
    /// by this is the number of workers wanted (default 60).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1))]
    pub target_backlog_seconds: Option<f64>,
    /// Seconds per task assumed while a kind has no throughput statistics yet (default 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_seconds_per_task: Option<f64>,
    /// After a scaling change, the pool is not scaled down again for this long (default 60),
    /// so a burst that ends does not make it flap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scale_down_delay_seconds: Option<u64>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProverPoolStatus {
    /// Replicas the operator last decided on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub desired_replicas: Option<i32>,
    /// The Deployment's spec.replicas as last read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current_replicas: Option<i32>,
    /// Workers holding a task (the pool's running tasks): never scaled below.
    pub busy_workers: u64,
    /// Tasks waiting for a worker, over the pool's kinds.
    pub pending: u64,
    /// Tasks being worked on, over the pool's kinds.
    pub running: u64,
    /// Tasks waiting for a retry backoff, over the pool's kinds.
    pub delayed: u64,
    /// Measured seconds per task over the pool's kinds (busy time / completed), or the default.
    pub seconds_per_task: f64,
    /// When the operator last changed the Deployment's replicas (RFC 3339).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_scale_time: Option<String>,
    /// Why the last decision was made, or what went wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
}

/// The CustomResourceDefinitions, one YAML document each: (file name, YAML).
pub fn crd_files() -> Vec<(String, String)> {
    [ProofJob::crd(), ProverPool::crd()]
        .into_iter()
        .map(|crd| {
            let name = crd.metadata.name.clone().unwrap_or_default();
            let yaml = serde_saphyr::to_string(&crd).expect("a CRD serializes to YAML");
            (format!("{name}.yaml"), format!("# Generated by `operator crds` from services/operator/src/crd.rs: do not edit.\n{yaml}"))
        })
        .collect()
}

/// All CRDs as one multi-document YAML stream.
pub fn crds_yaml() -> String {
    crd_files().into_iter().map(|(_, y)| format!("---\n{y}")).collect()
}

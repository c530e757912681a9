//! Where a job's objects live in the blob store: the one place the `jobs/<id>/…` layout is
//! written (the roles, the gRPC service and `prover dev` all read it from here).
//!
//! ```text
//! jobs/<id>/inputs/…        what the submission stored (Reckle: leaves.bin)
//! jobs/<id>/nodes/<l>-<i>.bin  Reckle node proofs (intermediate)
//! jobs/<id>/pari/…          Pari keys and proof lists (intermediate)
//! jobs/<id>/hekaton/…       Hekaton shares, commitments, messages, subcircuit proofs (intermediate)
//! hekaton/keys/<spec>/…     Hekaton keys, per circuit structure, shared by jobs
//! jobs/<id>/proof/…         the published outputs
//! ```

use reckle::NodeId;

/// Everything of a job.
pub fn job_prefix(job: &str) -> String {
    format!("jobs/{job}/")
}

/// A job's inputs, stored by the submission.
pub fn inputs_prefix(job: &str) -> String {
    format!("jobs/{job}/inputs/")
}

pub fn input(job: &str, name: &str) -> String {
    format!("jobs/{job}/inputs/{name}")
}

/// The published outputs (only complete once the job is done).
pub fn proof_prefix(job: &str) -> String {
    format!("jobs/{job}/proof/")
}

pub fn proof_file(job: &str, name: &str) -> String {
    format!("jobs/{job}/proof/{name}")
}

/// Reckle: the leaf values (`leaves.bin` format).
pub fn reckle_leaves(job: &str) -> String {
    input(job, "leaves.bin")
}

pub fn reckle_nodes_prefix(job: &str) -> String {
    format!("jobs/{job}/nodes/")
}

/// Reckle: the proof of node `id` (a fixed key: a redelivered task overwrites the same object).
pub fn reckle_node(job: &str, id: NodeId) -> String {
    format!("jobs/{job}/nodes/{}-{}.bin", id.level, id.index)
}

pub fn pari_prefix(job: &str) -> String {
    format!("jobs/{job}/pari/")
}

/// Pari: `pk.bin`, `vk.bin`.
pub fn pari_key(job: &str, name: &str) -> String {
    format!("jobs/{job}/pari/{name}")
}

/// Pari: the proof list of prove task `i`.
pub fn pari_proofs(job: &str, i: u64) -> String {
    format!("jobs/{job}/pari/proofs/{i}.bin")
}

/// Pari: the name of bundle `k` under the proof prefix.
pub fn pari_bundle_name(k: u64) -> String {
    format!("bundle-{k}.bin")
}

pub fn hekaton_prefix(job: &str) -> String {
    format!("jobs/{job}/hekaton/")
}

/// Hekaton: `<what>-<i>.bin` of subcircuit `i` (share, commit, message, proof).
pub fn hekaton_file(job: &str, what: &str, i: u64) -> String {
    format!("jobs/{job}/hekaton/{what}-{i}.bin")
}

/// Hekaton: the challenge round (tree and messages) of a job.
pub fn hekaton_round(job: &str) -> String {
    format!("jobs/{job}/hekaton/round.bin")
}

/// Hekaton: a key file of the structure with spec digest `spec`, verifying-key digest `vk`.
pub fn hekaton_key(spec: &str, vk: &str, name: &str) -> String {
    format!("hekaton/keys/{spec}/{vk}/{name}")
}

/// Hekaton: the verifying-key digest later jobs of structure `spec` reuse.
pub fn hekaton_current_key(spec: &str) -> String {
    format!("hekaton/keys/{spec}/current")
}

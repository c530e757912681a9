//! Where a job's objects live in the blob store: the one place the `jobs/<id>/…` layout is
//! written (the roles, the gRPC service and `prover dev` all read it from here).
//!
//! ```text
//! jobs/<id>/inputs/…        what the submission stored (Reckle: leaves.bin)
//! jobs/<id>/nodes/<l>-<i>.bin  Reckle node proofs (intermediate)
//! jobs/<id>/pari/…          Pari keys and proof lists (intermediate)
//! jobs/<id>/hekaton/…       Hekaton shares, commitments, messages, subcircuit proofs (intermediate)
//! hekaton/keys/<spec>/…     Hekaton keys, per circuit structure, shared by jobs
//! [tenants/<t>/]circuits/<id>/…  a registered circom circuit: circuit.json (written last),
//!                           circuit.r1cs, keys/<vk digest>/{pk,vk}.bin
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

/// A registered circom circuit's objects: under the tenant's prefix, or `circuits/` on an open
/// API (tenant `""`).
pub fn circuit_prefix(tenant: &str, id: &str) -> String {
    if tenant.is_empty() {
        format!("circuits/{id}/")
    } else {
        format!("tenants/{tenant}/circuits/{id}/")
    }
}

/// Where a tenant's circuits are listed from.
pub fn circuits_root(tenant: &str) -> String {
    if tenant.is_empty() {
        "circuits/".into()
    } else {
        format!("tenants/{tenant}/circuits/")
    }
}

/// `circuit.json` or `circuit.r1cs` of a registered circuit.
pub fn circuit_file(tenant: &str, id: &str, name: &str) -> String {
    format!("{}{name}", circuit_prefix(tenant, id))
}

/// `pk.bin` or `vk.bin` of a registered circuit's key pair with digest `vk`.
pub fn circuit_key(tenant: &str, id: &str, vk: &str, name: &str) -> String {
    format!("{}keys/{vk}/{name}", circuit_prefix(tenant, id))
}

/// Where `UploadInput` stores a tenant's uploads (`uploads/` on an open API).
pub fn uploads_root(tenant: &str) -> String {
    if tenant.is_empty() {
        "uploads/".into()
    } else {
        format!("tenants/{tenant}/uploads/")
    }
}

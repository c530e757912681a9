//! Where a job's objects live in the blob store: the one place the layout is written (the
//! roles, the gRPC service and `prover dev` all read it from here).
//!
//! A tenant's job has an id `<tenant>.<uuid>` (see [`job_id`]), and its objects live under
//! the tenant's prefix, `tenants/<tenant>/jobs/<id>/`, beside its uploads and circuits: one
//! prefix per tenant for lifecycle rules, storage accounting, IAM conditions or deleting a
//! tenant. A job on an API without authentication (no tenant) lives under `jobs/<id>/`. Below,
//! `<job>/` is either.
//!
//! ```text
//! <job>/inputs/…            what the submission stored (Reckle: leaves.bin)
//! <job>/nodes/<l>-<i>.bin   Reckle node proofs (intermediate)
//! <job>/pari/…              Pari keys and proof lists (intermediate)
//! <job>/hekaton/…           Hekaton shares, commitments, messages, subcircuit proofs (intermediate)
//! <job>/proof/…             the published outputs
//! hekaton/keys/v2/<spec>/…  Hekaton keys, per circuit structure, shared by jobs (v2: made
//!                           from the OS's randomness; unversioned ones came from job secrets)
//! reckle/keys/v<version>/root-<ℓ>-<q>.bin   Reckle root verifying keys (checked against the
//!                           digests pinned in the reckle crate when read)
//! [tenants/<t>/]circuits/<id>/…  a registered circom circuit: circuit.json (written last),
//!                           circuit.r1cs, keys/<vk digest>/{pk,vk}.bin
//! [tenants/<t>/]uploads/…   UploadInput's objects
//! ```

use reckle::NodeId;

/// A new job id: a fresh UUID, prefixed with `<tenant>.` for a tenant's job (tenant names
/// have no '.', so the tenant is recovered from the id: [`job_tenant`]).
pub fn job_id(tenant: &str, uuid: &str) -> String {
    if tenant.is_empty() {
        uuid.to_string()
    } else {
        format!("{tenant}.{uuid}")
    }
}

/// The tenant a job id names (`""` for an id without one).
pub fn job_tenant(job: &str) -> &str {
    job.split_once('.').map_or("", |(t, _)| t)
}

/// Everything of a job.
pub fn job_prefix(job: &str) -> String {
    match job_tenant(job) {
        "" => format!("jobs/{job}/"),
        t => format!("tenants/{t}/jobs/{job}/"),
    }
}

/// A job's inputs, stored by the submission.
pub fn inputs_prefix(job: &str) -> String {
    format!("{}inputs/", job_prefix(job))
}

pub fn input(job: &str, name: &str) -> String {
    format!("{}inputs/{name}", job_prefix(job))
}

/// The published outputs (only complete once the job is done).
pub fn proof_prefix(job: &str) -> String {
    format!("{}proof/", job_prefix(job))
}

pub fn proof_file(job: &str, name: &str) -> String {
    format!("{}proof/{name}", job_prefix(job))
}

/// Reckle: the leaf values (`leaves.bin` format).
pub fn reckle_leaves(job: &str) -> String {
    input(job, "leaves.bin")
}

/// The job's Merkle tree above the buckets, in pieces (`reckle::stored`), and the band-0
/// roots each tree task made (`roots-<first piece>.bin`).
pub fn reckle_tree_prefix(job: &str) -> String {
    format!("{}tree/", job_prefix(job))
}

pub fn reckle_piece(job: &str, piece: reckle::stored::PieceId) -> String {
    format!("{}tree/{}-{}.bin", job_prefix(job), piece.band, piece.index)
}

pub fn reckle_piece_roots(job: &str, first: u64) -> String {
    format!("{}tree/roots-{first}.bin", job_prefix(job))
}

pub fn reckle_nodes_prefix(job: &str) -> String {
    format!("{}nodes/", job_prefix(job))
}

/// Reckle: the proof of node `id` (a fixed key: a redelivered task overwrites the same object).
pub fn reckle_node(job: &str, id: NodeId) -> String {
    format!("{}nodes/{}-{}.bin", job_prefix(job), id.level, id.index)
}

pub fn pari_prefix(job: &str) -> String {
    format!("{}pari/", job_prefix(job))
}

/// Pari: `pk.bin`, `vk.bin` of the key pair with verifying-key digest `digest` (hex), made by
/// one delivery of the job's setup task.
pub fn pari_key_at(job: &str, digest: &str, name: &str) -> String {
    format!("{}pari/keys/{digest}/{name}", job_prefix(job))
}

/// Pari: the proof list of prove task `i`.
pub fn pari_proofs(job: &str, i: u64) -> String {
    format!("{}pari/proofs/{i}.bin", job_prefix(job))
}

/// Pari: the name of bundle `k` under the proof prefix.
pub fn pari_bundle_name(k: u64) -> String {
    format!("bundle-{k}.bin")
}

pub fn hekaton_prefix(job: &str) -> String {
    format!("{}hekaton/", job_prefix(job))
}

/// Hekaton: `<what>-<i>.bin` of subcircuit `i` (share, commit, message, proof).
pub fn hekaton_file(job: &str, what: &str, i: u64) -> String {
    format!("{}hekaton/{what}-{i}.bin", job_prefix(job))
}

/// Hekaton: the challenge round (tree and messages) of a job.
pub fn hekaton_round(job: &str) -> String {
    format!("{}hekaton/round.bin", job_prefix(job))
}

/// Reckle: the root verifying key of `params` ([`reckle::RootKey::to_bytes`]), stored by the
/// finish step of the first done job of that shape, so that a verifier (the planner's `VerifyProof`)
/// loads it instead of building circuits. Whoever wrote it, it is accepted only if its bytes
/// hash to the digest pinned for `params` ([`reckle::RootKey::from_bytes`]).
pub fn reckle_root_key(params: reckle::Params) -> String {
    format!("reckle/keys/v{}/root-{}-{}.bin", reckle::CIRCUIT_VERSION, params.log_n, params.log_bucket)
}

/// The layout version of Hekaton keys: 2 since every setup draws from the operating system
/// (issue 32); the keys of version 1 (`hekaton/keys/<spec>/`) were made from job secrets left
/// in the store and are never read again.
pub const HEKATON_KEYS_VERSION: u32 = 2;

/// Hekaton: a key file of the structure with spec digest `spec`, verifying-key digest `vk`.
pub fn hekaton_key(spec: &str, vk: &str, name: &str) -> String {
    format!("hekaton/keys/v{HEKATON_KEYS_VERSION}/{spec}/{vk}/{name}")
}

/// Hekaton: the verifying-key digest later jobs of structure `spec` reuse.
pub fn hekaton_current_key(spec: &str) -> String {
    format!("hekaton/keys/v{HEKATON_KEYS_VERSION}/{spec}/current")
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

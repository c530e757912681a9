//! Bring your own circuit: circom circuits registered once, then proved with Pari per witness.
//!
//! * `circuit.register`: a user's `.r1cs` (uploaded) becomes a **registered circuit**. Its id is
//!   the file's digest ([`circom::digest`]); its prime names the curve (BN254 for circom's
//!   default `--prime bn128`, or BLS12-381). One `circuit.setup` task (a worker) runs the Pari
//!   setup, with randomness from the operating system that is kept nowhere (no stored object
//!   rebuilds the key or its trapdoor; proofs' randomness is drawn the same way), and stores `[tenants/<t>/]circuits/<id>/{circuit.r1cs, keys/<vk digest>/{pk,vk}.bin}`, then
//!   `circuit.json` last: a circuit exists once `circuit.json` does, and it names the key pair.
//!   Keys live under their own digest, so two registrations racing (each with its own setup)
//!   both leave valid key pairs and jobs keep the one they were submitted against.
//! * `pari.circom`: one Pari proof per uploaded `.wtns`, under the circuit's keys. The witnesses
//!   are copied into the job's inputs at submission (format and wire count checked there); a
//!   prove task (`circom.prove`) checks each of its witnesses against every constraint and fails
//!   the job naming the witness and the first constraint it breaks. Then, as for built-in
//!   families ([`super::pari`]), `circom.bundle` tasks batch-verify the proofs and
//!   publish `jobs/<id>/proof/{circuit.json, vk.bin, bundle-<k>.bin, public-<k>.json}`:
//!   `public-<k>.json` lists each proof's public signals (decimal, circom's order: outputs, then
//!   public inputs), the bundle itself carries them as the proofs' instances; `circom.publish`
//!   writes the manifest once every bundle is published.
//!
//! Both on the typed contract ([`super::contract`]). Files: [`register`] the registration job,
//! [`registry`] the registered circuits as the API sees them, [`prove`] the `pari.circom` job,
//! [`bundle`] cross-job bundles.
//!
//! Trust: the job's spec records the verifying key's digest at submission and the aggregator
//! refuses a `vk.bin` with another digest, so a key file replaced in the store cannot put a job's
//! bundles under another key; `prover pari verify-bundles --vk-digest` pins it offline.
//! Circuits are per tenant (the prefix), like jobs: another tenant's circuit id is unknown.

use ark_ff::PrimeField;

use super::{Served, TaskKind};
use crate::error::invalid;
use crate::{layout, Platform, PlatformError};

pub const REGISTER_JOB: &str = "circuit.register";
pub const JOB: &str = "pari.circom";
pub const SETUP: TaskKind = TaskKind::new("circuit.setup", Served::Worker, 3600);
pub const SETUP_DONE: TaskKind = TaskKind::new("circuit.done", Served::Executor, 300);
pub const PROVE: TaskKind = TaskKind::new("circom.prove", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("circom.done", Served::Executor, 300);
pub const BUNDLE: TaskKind = TaskKind::new("circom.bundle", Served::Aggregator, 1800);
/// The manifest, once every bundle is published.
pub const PUBLISH: TaskKind = TaskKind::new("circom.publish", Served::Aggregator, 300);

/// Most witnesses (proofs) in one job.
pub const MAX_WITNESSES: u64 = 1024;
/// Largest circuit the platform sets up (constraints): keys and setup time grow linearly.
pub const MAX_CONSTRAINTS: usize = 1 << 22;
/// Default proofs per prove task.
pub const DEFAULT_PER_TASK: u64 = 4;

pub(crate) const R1CS: &str = "circuit.r1cs";
pub(crate) const CIRCUIT_JSON: &str = "circuit.json";

/// The curve whose scalar field is a circuit's prime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Curve {
    #[serde(rename = "bn254")]
    Bn254,
    #[serde(rename = "bls12-381")]
    Bls12_381,
}

impl Curve {
    pub fn as_str(self) -> &'static str {
        match self {
            Curve::Bn254 => "bn254",
            Curve::Bls12_381 => "bls12-381",
        }
    }
}

/// Runs `$body` with `$E` bound to the pairing of `$curve` (defined before the modules that
/// use it).
macro_rules! on_curve {
    ($curve:expr, $E:ident => $body:expr) => {
        match $curve {
            Curve::Bn254 => {
                type $E = ark_bn254::Bn254;
                $body
            }
            Curve::Bls12_381 => {
                type $E = ark_bls12_381::Bls12_381;
                $body
            }
        }
    };
}

/// A registered circuit, as `circuit.json` records it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CircuitInfo {
    pub circuit_id: String,
    pub curve: Curve,
    /// The digest of the verifying key (128 hex) its proofs are under.
    pub vk_digest: String,
    pub constraints: u64,
    pub wires: u64,
    pub public_outputs: u32,
    pub public_inputs: u32,
    /// The registration job.
    pub job_id: String,
}

/// Sizes of a decoded `.r1cs`.
struct Shape {
    constraints: usize,
    wires: u32,
    public_outputs: u32,
    public_inputs: u32,
}

fn shape_of<F: PrimeField>(r: &circom::R1cs<F>) -> Shape {
    Shape { constraints: r.constraints.len(), wires: r.num_wires, public_outputs: r.num_pub_out, public_inputs: r.num_pub_in }
}

/// The header of upload `key` (`file_len` bytes) over whichever of the two curves its prime
/// names, from a few ranged reads ([`circom::r1cs_head`]; the outer error is the store's).
async fn r1cs_head(p: &Platform, key: &str, file_len: u64) -> Result<Result<(Curve, circom::R1csHead), circom::Error>, PlatformError> {
    let (blobs, key, rt) = (p.blobs().clone(), key.to_string(), tokio::runtime::Handle::current());
    tokio::task::spawn_blocking(move || -> Result<_, PlatformError> {
        let mut read = |at: u64, len: u64| rt.block_on(blobs.get_range(&key, at, len)).map(|b| b.to_vec());
        Ok(match circom::r1cs_head::<ark_bn254::Fr, _>(file_len, &mut read)? {
            Err(circom::Error::Prime { .. }) => circom::r1cs_head::<ark_bls12_381::Fr, _>(file_len, &mut read)?.map(|h| (Curve::Bls12_381, h)),
            r => r.map(|h| (Curve::Bn254, h)),
        })
    })
    .await
    .map_err(crate::error::corrupt)?
}

/// Bytes of an upload read at once while it is hashed.
const READ_BYTES: u64 = 8 << 20;

/// The size of upload `key` and its digest ([`circom::digest`]), read [`READ_BYTES`] at a time:
/// a registration never holds the file.
async fn upload_digest(p: &Platform, field: &'static str, key: &str) -> Result<(u64, String), PlatformError> {
    let size = match p.blobs().size(key).await {
        Err(blobstore::BlobError::NotFound(_)) => return Err(invalid(field, format!("{key:?}: no such upload"))),
        r => r?,
    };
    let mut digest = circom::FileDigest::new();
    let mut at = 0;
    while at < size {
        let len = READ_BYTES.min(size - at);
        digest.update(&p.blobs().get_range(key, at, len).await?);
        at += len;
    }
    Ok((size, digest.finish()))
}

/// A circuit id: 64 lowercase hex digits.
pub(crate) fn check_circuit_id(id: &str) -> Result<(), PlatformError> {
    if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(invalid("circuit_id", format!("{id:?} is not a circuit id (64 lowercase hex digits)")));
    }
    Ok(())
}

/// An uploaded object the tenant may name: under its upload prefix, no `..`.
pub(crate) fn check_upload(field: &'static str, tenant: &str, key: &str) -> Result<(), PlatformError> {
    let root = layout::uploads_root(tenant);
    if !key.starts_with(&root) || key.contains("..") {
        return Err(invalid(field, format!("{key:?} is not under your upload prefix {root} (upload it with UploadInput / prover upload)")));
    }
    Ok(())
}

pub mod bundle;
pub mod prove;
pub mod register;
pub mod registry;

pub use bundle::{CircuitBundle, MAX_BUNDLE_JOBS, MAX_BUNDLE_PROOFS};
pub use prove::{request, CircomJobSpec, CircuitKey, PariCircom, Step};
pub use register::CircuitRegister;

//! Final proofs of Reckle jobs (issue 29): the root proof wrapped into one Pari proof on BN254
//! (`plonky2_r1cs::wrap`), made by a worker, verified by the aggregator before it publishes
//! `final.bin` beside `proof.bin`.
//!
//! A job submitted with `final_proof` records the digest of the **wrap key** the platform pins
//! (`--reckle-wrap-vk-digest`) in its spec. Its DAG is the batch or update DAG with one more
//! task between the root and `reckle.finish`:
//!
//! ```text
//! … reckle.node (root) ──▶ reckle.wrap (worker) ──▶ reckle.finish (aggregator)
//! ```
//!
//! * `reckle.wrap` ([`wrap`]) runs only on workers started with `--reckle-wrap-worker` (the key
//!   is ~GBs resident; other workers never claim the kind). It loads the wrap proving key once
//!   per process ([`WrapState`]), normalizes and shrinks the root proof (plonky2), proves the
//!   wrap circuit with Pari, and writes `wrap-final.bin` among the job's node objects (scratch).
//!   The blocking work checks the task's cancel flag between its steps, and the Pari prove
//!   reads it between its own ([`crate::work::Cancel::with_interrupt`]).
//! * `reckle.finish` ([`check_final`], called from [`super::publish`]) verifies the root proof as
//!   before, then the final proof: its public values against the tree it built itself (`C`,
//!   and `d`, sum, count of the statement), its circuit id against the normalize circuit it
//!   derives from the root key, and the Pari proof under the pinned wrap key, through the
//!   process's [`crate::batcher::VerifyBatcher`] (final proofs of jobs that finish together
//!   share one batch check). Only the bytes it verified are published, as `final.bin`, with the
//!   wrap verifying key as `wrap-vk.bin` and `wrap_vk_digest` in the manifest's pins.
//!
//! Keys live under `reckle/keys/wrap/v<WRAP_VERSION>/<vk digest>/`: `pk.bin` (the proving key,
//! uncompressed, ~GBs; a wrap worker validates every point when it loads it, and requires its
//! verifying key to hash to the pinned digest: no digest stored beside the key is trusted), `vk.bin`
//! (written last: its presence means the key is complete). They are made offline
//! (`prover reckle wrap-setup`) and imported (`prover reckle wrap-key import`); the platform never
//! makes or chooses a wrap key itself: the one it uses is the one its operator pins (see
//! `docs/trust-model.md`). The key of the public seed `WRAP_KEY_SEED` is refused.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use ark_bn254::Bn254;
use blobstore::BlobError;
use bytes::Bytes;
use plonky2_r1cs::shrink::{NormalizeCircuit, ShrinkCircuit};
use plonky2_r1cs::wrap::{self, FinalProof, WRAP_VERSION};
use reckle::{Digest, NodeId, NodeProof, Params, RootKey, Statement};

use super::ReckleJobSpec;
use crate::kinds::{Served, TaskKind};
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// The wrap of a job's root proof: the heaviest task of a Reckle job, on wrap workers only.
/// Served only by workers started with `--reckle-wrap-worker` ([`TaskKind::opt_in`]).
pub const WRAP: TaskKind = TaskKind::new("reckle.wrap", Served::Worker, 3600).opt_in();
/// The published final proof (`FinalProof::to_bytes`: the Pari proof and its public values).
pub const FINAL_FILE: &str = "final.bin";
/// The published wrap verifying key (its digest is the manifest's `wrap_vk_digest`).
pub const WRAP_VK_FILE: &str = "wrap-vk.bin";

/// Object `name` of the wrap key with verifying key digest `digest`.
pub fn wrap_key_file(digest: &str, name: &str) -> String {
    format!("reckle/keys/wrap/v{WRAP_VERSION}/{digest}/{name}")
}

/// Where a job's wrap task leaves its final proof for the aggregator (with the node proofs, so
/// it goes with the job's scratch data).
pub fn final_scratch(job: &str) -> String {
    format!("{}wrap-final.bin", layout::reckle_nodes_prefix(job))
}

/// A wrap verifying key digest from a flag or a spec: 128 hex digits, not the public seed's.
pub fn parse_wrap_digest(s: &str) -> Result<pari::KeyDigest, String> {
    let d: pari::KeyDigest = s.parse().map_err(|e: pari::Error| e.to_string())?;
    if d.to_string() == wrap::PINNED_WRAP_VK_DIGEST {
        return Err(format!(
            "{d} is the wrap key of the public seed WRAP_KEY_SEED: anyone can forge final proofs under it (tests only)"
        ));
    }
    Ok(d)
}

/// A worker's loaded wrap prover: the proving key and the plonky2 circuits, kept for the
/// process's life (loaded on the first wrap task).
pub(crate) struct WrapProver {
    digest: String,
    pk: pari::ProvingKey<Bn254>,
    shrink: ShrinkCircuit,
    normalize: Mutex<HashMap<Params, Arc<NormalizeCircuit>>>,
}

/// The process's wrap state: the prover (wrap workers), and what verifiers derive once
/// (verifying keys by digest, normalize circuit ids by `(ℓ, q)`).
#[derive(Default)]
pub(crate) struct WrapState {
    prover: tokio::sync::Mutex<Option<Arc<WrapProver>>>,
    /// Resident bytes of the loaded proving key (measured where `/proc` tells, else estimated).
    resident: AtomicU64,
    vks: Mutex<HashMap<String, Arc<pari::VerifyingKey<Bn254>>>>,
    ids: Mutex<HashMap<Params, Digest>>,
}

impl Platform {
    /// Bytes the wrap proving key holds resident in this process (0 until a wrap task loaded
    /// it); counted against `--circuit-bytes`.
    pub fn wrap_resident_bytes(&self) -> u64 {
        self.wrap.resident.load(Ordering::Relaxed)
    }
}

/// The process's resident set (`VmRSS`), where `/proc` tells.
fn rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: u64 = s.lines().find(|l| l.starts_with("VmRSS:"))?.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn wrap_err(e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Corrupt(format!("wrap: {e}"))
}

async fn get_key_object(p: &Platform, digest: &str, name: &str) -> Result<Bytes, PlatformError> {
    let key = wrap_key_file(digest, name);
    match p.blobs().get(&key).await {
        Err(BlobError::NotFound(_)) => Err(PlatformError::Precondition(format!(
            "the wrap key {digest} is not stored ({key} is missing): import it with `prover reckle wrap-key import`"
        ))),
        r => Ok(r?),
    }
}

/// The verifying key with digest `digest`, read from the store and checked against it.
async fn verifying_key(p: &Platform, digest: &str) -> Result<(Arc<pari::VerifyingKey<Bn254>>, Bytes), PlatformError> {
    let bytes = get_key_object(p, digest, "vk.bin").await?;
    if let Some(vk) = p.wrap.vks.lock().expect("mutex").get(digest) {
        return Ok((vk.clone(), bytes));
    }
    let expected = parse_wrap_digest(digest).map_err(|e| corrupt(format!("wrap key digest: {e}")))?;
    let vk = pari::VerifyingKey::<Bn254>::from_bytes_pinned(&bytes, &expected)
        .map_err(|e| corrupt(format!("{}: {e}", wrap_key_file(digest, "vk.bin"))))?;
    if vk.num_public_inputs() != wrap::NUM_PUBLIC_INPUTS {
        return Err(PlatformError::Precondition(format!(
            "the key {digest} is not a wrap key: {} public inputs, the wrap circuit has {}",
            vk.num_public_inputs(),
            wrap::NUM_PUBLIC_INPUTS
        )));
    }
    let vk = Arc::new(vk);
    p.wrap.vks.lock().expect("mutex").insert(digest.to_string(), vk.clone());
    Ok((vk, bytes))
}

/// What SubmitJob records for a request's `final_proof`: `None` when not asked; the pinned
/// wrap key's digest when it is and the key is stored; `FAILED_PRECONDITION` naming
/// `final_proof` when this platform has no wrap key.
pub(crate) async fn wrap_request(p: &Platform, final_proof: bool) -> Result<Option<String>, PlatformError> {
    if !final_proof {
        return Ok(None);
    }
    let Some(digest) = p.config().reckle_wrap_vk_digest.clone() else {
        return Err(PlatformError::Precondition(
            "final_proof: this platform makes no Reckle final proofs: its operator has pinned no wrap key \
             (--reckle-wrap-vk-digest, after `prover reckle wrap-key import`)"
                .into(),
        ));
    };
    match verifying_key(p, &digest).await {
        Ok(_) => Ok(Some(digest)),
        Err(PlatformError::Precondition(m)) => Err(PlatformError::Precondition(format!("final_proof: {m}"))),
        Err(e) => Err(e),
    }
}

/// The wrap prover for key `digest`, loaded once per process (a task that finds another key
/// loaded drops it first: one key resident at a time).
async fn prover(p: &Platform, digest: &str) -> Result<Arc<WrapProver>, PlatformError> {
    let mut slot = p.wrap.prover.lock().await;
    if let Some(w) = slot.as_ref() {
        if w.digest == digest {
            return Ok(w.clone());
        }
    }
    *slot = None;
    p.wrap.resident.store(0, Ordering::Relaxed);
    // `digest` is the pinned --reckle-wrap-vk-digest the job recorded at submission. The
    // proving key is checked against it from its own loaded bytes (its verifying key must hash
    // to it), and every point is validated: nothing stored beside the key (a `pk.digest` an
    // older import wrote) is trusted, since whoever can write the bucket can write both.
    let expected = parse_wrap_digest(digest).map_err(|e| corrupt(format!("wrap key digest: {e}")))?;
    let bytes = get_key_object(p, digest, "pk.bin").await?;
    let stored = bytes.len() as u64;
    let started = std::time::Instant::now();
    let name = wrap_key_file(digest, "pk.bin");
    let (pk, shrink, resident) = crate::work::blocking(move |cancel| -> Result<(pari::ProvingKey<Bn254>, ShrinkCircuit, u64), PlatformError> {
        let before = rss_bytes();
        let pk = pari::ProvingKey::<Bn254>::from_bytes_checked(&bytes).map_err(|e| corrupt(format!("{name}: {e}")))?;
        drop(bytes);
        let after = rss_bytes();
        if pk.vk.digest() != expected {
            return Err(corrupt(format!("{name}: not the proving key of the wrap verifying key {expected}")));
        }
        cancel.check()?;
        let shrink = ShrinkCircuit::build_default().map_err(wrap_err)?;
        // The decoded key's share of the resident set: the first reading counts the stored
        // bytes, which are dropped before the second, so the key is the difference plus them
        // (measured on the bench: 2.75 GB stored, 4.1 GB decoded). Where /proc does not tell,
        // the stored size times 1.5.
        let resident = match (before, after) {
            (Some(b), Some(a)) => (a + stored).saturating_sub(b),
            _ => stored + stored / 2,
        };
        Ok((pk, shrink, resident))
    })
    .await??;
    tracing::info!(digest, stored_bytes = stored, resident_bytes = resident, took = ?started.elapsed(), "wrap proving key loaded");
    p.wrap.resident.store(resident, Ordering::Relaxed);
    ::metrics::gauge!("prover_wrap_key_bytes").set(resident as f64);
    let w = Arc::new(WrapProver { digest: digest.to_string(), pk, shrink, normalize: Mutex::default() });
    *slot = Some(w.clone());
    Ok(w)
}

/// The root key of `params`: stored or pinned ([`Platform::root_key`]), else from the circuits.
async fn root_key(p: &Platform, params: Params) -> Result<Arc<RootKey>, PlatformError> {
    match p.root_key(params).await {
        Ok(k) => Ok(k),
        Err(PlatformError::Precondition(_)) => Ok(Arc::new(p.circuits(params).await?.root_key().clone())),
        Err(e) => Err(e),
    }
}

/// The normalize circuit `N_{ℓ,q}` of the wrap prover, built once per process.
async fn normalize(w: &Arc<WrapProver>, key: Arc<RootKey>) -> Result<Arc<NormalizeCircuit>, PlatformError> {
    let params = key.params();
    if let Some(n) = w.normalize.lock().expect("mutex").get(&params) {
        return Ok(n.clone());
    }
    let n = Arc::new(crate::work::blocking(move |_| NormalizeCircuit::build(&key)).await?.map_err(wrap_err)?);
    w.shrink.accepts(&n).map_err(wrap_err)?;
    w.normalize.lock().expect("mutex").insert(params, n.clone());
    Ok(n)
}

/// The circuit id of `N_{ℓ,q}` (what a final proof of that shape must carry), derived from the
/// root key and kept per process.
async fn circuit_id(p: &Platform, key: &RootKey) -> Result<Digest, PlatformError> {
    let params = key.params();
    if let Some(id) = p.wrap.ids.lock().expect("mutex").get(&params) {
        return Ok(*id);
    }
    let key = key.clone();
    let n = crate::work::blocking(move |_| NormalizeCircuit::build(&key)).await?.map_err(wrap_err)?;
    let id = Digest::from_hash(n.circuit_id());
    p.wrap.ids.lock().expect("mutex").insert(params, id);
    Ok(id)
}

/// Worker: the final proof of the job's root proof (see the module doc).
pub(crate) async fn wrap(p: &Platform, job: &str, spec: &ReckleJobSpec) -> Result<(), PlatformError> {
    let digest = spec.wrap_vk_digest.clone().ok_or_else(|| corrupt(format!("job {job} asked for no final proof")))?;
    let params = spec.params()?;
    let w = prover(p, &digest).await?;
    let key = root_key(p, params).await?;
    let n = normalize(&w, key.clone()).await?;
    let root_bytes = p.blobs().get(&layout::reckle_node(job, NodeId::new(params.log_n, 0))).await?;
    let started = std::time::Instant::now();
    let w2 = w.clone();
    let final_proof = crate::work::blocking(move |cancel| -> Result<FinalProof, PlatformError> {
        let root = NodeProof::root_from_bytes(&key, &root_bytes)?;
        cancel.check()?;
        let normalized = n.prove(&root).map_err(wrap_err)?;
        cancel.check()?;
        let shrunk = w2.shrink.prove(&n, &normalized).map_err(wrap_err)?;
        // The Pari prove (minutes) reads the flag between its steps.
        cancel
            .with_interrupt(|stop| wrap::prove_shrunk_interruptible(&w2.pk, &w2.shrink, params, &shrunk, &mut rand::rngs::OsRng, stop))
            .map_err(|e| match e {
                wrap::WrapError::Pari(::pari::Error::Interrupted) => PlatformError::Abandoned,
                e => wrap_err(e),
            })
    })
    .await??;
    ::metrics::histogram!("prover_reckle_wrap_seconds").record(started.elapsed().as_secs_f64());
    tracing::info!(job, took = ?started.elapsed(), "final proof made");
    p.blobs().put(&final_scratch(job), Bytes::from(final_proof.to_bytes())).await?;
    Ok(())
}

/// The final proof of a finishing job, checked (see the module doc): `Ok(Ok((final.bin,
/// wrap-vk.bin)))` to publish, `Ok(Err(reason))` when it does not verify (the job fails),
/// `Err` for a backend or a missing key (retried).
pub(crate) async fn check_final(
    p: &Platform,
    job: &str,
    digest: &str,
    key: &RootKey,
    root: &Digest,
    statement: &Statement,
) -> Result<Result<(Bytes, Bytes), String>, PlatformError> {
    let bytes = p.blobs().get(&final_scratch(job)).await?;
    let fp = match FinalProof::from_bytes(&bytes) {
        Ok(fp) => fp,
        Err(e) => return Ok(Err(e.to_string())),
    };
    let (vk, vk_bytes) = verifying_key(p, digest).await?;
    let id = circuit_id(p, key).await?;
    if let Err(reason) = check_public(&fp, key.params(), root, &id, statement) {
        return Ok(Err(reason));
    }
    let x = fp.public.to_field_elements();
    let bad = p.batcher().verify((*vk).clone(), vec![(x, fp.proof)]).await?;
    if !bad.is_empty() {
        return Ok(Err(format!("the Pari proof does not verify under the wrap key {digest}")));
    }
    ::metrics::counter!("prover_proofs_total", "kind" => "reckle.final").increment(1);
    Ok(Ok((bytes, vk_bytes)))
}

/// A final proof's header and public values against what the verifier knows: the wrap
/// version, `(ℓ, q)`, the commitment `C` it expects, the circuit id of `N_{ℓ,q}`, and the
/// statement's `d`, sum and count (which the statement recomputes from its leaves).
pub fn check_public(fp: &FinalProof, params: Params, root: &Digest, id: &Digest, statement: &Statement) -> Result<(), String> {
    if fp.version != WRAP_VERSION {
        return Err(format!("final proof of wrap version {}, this build verifies {WRAP_VERSION}", fp.version));
    }
    if fp.params != params {
        return Err(format!("final proof is for (log_n, log_bucket) = ({}, {}), not ({}, {})", fp.params.log_n, fp.params.log_bucket, params.log_n, params.log_bucket));
    }
    if fp.public.c != *root {
        return Err(format!("final proof is about C = {}, not the expected C = {root}", fp.public.c));
    }
    if fp.public.circuit_id != *id {
        return Err("final proof is for another circuit than the normalize circuit of the pinned root key".into());
    }
    let d = Digest::from_hex(&statement.digest).map_err(|e| format!("statement: digest: {e}"))?;
    let sum: u128 = statement.sum.parse().map_err(|e| format!("statement: sum: {e}"))?;
    if fp.public.d != d || fp.public.sum != sum || fp.public.count != statement.count {
        return Err("final proof is about another batch than the statement (d, sum or count differ)".into());
    }
    Ok(())
}

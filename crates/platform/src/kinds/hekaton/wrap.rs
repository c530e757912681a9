//! Final proofs of Hekaton jobs (issue 35): the depth-1 wrap ([`hekaton::wrap`]: one Pari proof
//! on BW6-767 of the whole k-proof Hekaton proof), made by a worker, checked by the aggregator
//! before it publishes `final.bin` beside `proof.bin`. The same split as Reckle's
//! ([`crate::kinds::reckle::wrap`]): the heavy proof on a worker, the check where the proof is
//! published.
//!
//! A `--final` job's DAG is the Hekaton DAG with one more task between the subcircuit proofs and
//! the assembly:
//!
//! ```text
//! hekaton.setup ─▶ commit × k ─▶ challenge ─▶ subproof × k ─▶ hekaton.wrap ─▶ hekaton.assemble
//! ```
//!
//! * **Keys.** The wrap keys of a Hekaton key (the wrap circuit has that key's constants built
//!   in, so one wrap key serves every job of that key, i.e. of that circuit structure and `k`)
//!   are made by the job's **setup** task ([`super::wrap_keys::wrap_setup`]), never by the wrap task that proves
//!   under them: the worker that makes a key knows its trapdoor. Their randomness comes from
//!   the operating system (`OsRng`), nothing stored. They live under
//!   `hekaton/keys/v2/<spec digest>/<vk digest>/wrap/v<WRAP_KEYS_VERSION>/<final key digest>/`:
//!   `pk.bin` (uncompressed), `pk.digest` (its BLAKE2b-512, checked on load) and
//!   `final-key.bin`, written **last** (a directory without it is a setup that crashed, and is
//!   never used). A later setup reuses the complete key with the smallest digest (no pointer
//!   object: nothing to overwrite), so keys are made once per Hekaton key in the usual case and
//!   two first jobs racing make two valid keys, each job using its own.
//! * **Which key.** The setup records the final key's digest with the job's other key digests
//!   (`<job>/hekaton/keys.json`) and in every task payload (`wrap`); the wrap task proves under
//!   that key, and the aggregator checks the final proof under that key after comparing its
//!   payload with the record.
//! * **`hekaton.wrap`** ([`wrap`], `Served::Worker`, deadline 7200 s): assembles the k-proof
//!   Hekaton proof, verifies it, proves the wrap circuit with Pari (fresh `OsRng` randomness)
//!   and writes `<job>/hekaton/final.bin` (scratch). Its memory is the wrap proving key's (GBs
//!   from k ≈ 4 on, `scripts/bench-hekaton.sh`): run it on a pool of its own
//!   (`workerPools[].kinds: [hekaton.wrap]` in the chart).
//! * **`hekaton.assemble`** ([`check_final`], from [`super::publish`]): verifies the assembled
//!   Hekaton proof as before, then the final proof under the recorded final key against the
//!   job's own statement (its circuit and seed give `x`): the leaf-0 path of `x` in `rt` and
//!   the Pari proof. Only the bytes it verified are published, as `final.bin`, with the key as
//!   `final-key.bin` and `final_key_digest` in the manifest's pins. A wrap worker that lies (a
//!   proof of another job, a moved root, garbage, nothing) fails the job.
//!
//! **Which `k`.** The wrap circuit of `k` subcircuits has at most
//! [`hekaton::wrap::rows_bound`] SR1CS rows; a `--final` request is accepted when that bound,
//! with one key shape per subcircuit, fits BW6-767's largest Pari domain
//! ([`hekaton::wrap::largest_domain`], about 2.18·10⁹ points), which holds for every circuit
//! the platform accepts (`k ≤ 1024`); [`check_fits`] refuses the rest naming `final_proof`.

use std::sync::OnceLock;

use ark_bls12_381::{Config, Fr};
use ark_bw6_767::BW6_767;
use blobstore::BlobError;
use bytes::Bytes;
use hekaton::workflow::{self, ChallengeRound, VkDigest};
use hekaton::wrap::{FinalKey, FinalProof};
use hekaton::mirage::{Commitment, Proof};

use super::keys::{self, Keys};
use super::wrap_keys::{final_key, wrap_keys};
pub use super::wrap_keys::{wrap_key_file, FINAL_KEY_FILE, WRAP_KEYS_VERSION};
use super::objects::{blocking, blocking_with, get};
use super::{Hekaton, HekatonJobSpec};
use crate::error::{corrupt, invalid};
use crate::kinds::contract::Job;
use crate::kinds::{Served, TaskKind};
use crate::{layout, Platform, PlatformError};

/// The wrap of a job's subcircuit proofs into one final proof: the heaviest task of a `--final`
/// Hekaton job.
pub const WRAP: TaskKind = TaskKind::new("hekaton.wrap", Served::Worker, 7200);
/// The published final proof ([`FinalProof::to_bytes`]).
pub const FINAL_FILE: &str = "final.bin";
/// Where a job's wrap task leaves its final proof for the aggregator (scratch).
pub fn final_scratch(job: &str) -> String {
    format!("{}final.bin", layout::hekaton_prefix(job))
}

/// The most SR1CS rows a wrap key may have: BW6-767's largest Pari domain, computed once.
fn largest_domain() -> usize {
    static LARGEST: OnceLock<usize> = OnceLock::new();
    *LARGEST.get_or_init(hekaton::wrap::largest_domain::<BW6_767>)
}

/// Whether the wrap of a `k`-subcircuit circuit with `num_public_inputs` public inputs fits a
/// domain of `max_rows` points (see the module doc); the error names `final_proof`.
pub fn check_fits_domain(k: usize, num_public_inputs: usize, max_rows: usize) -> Result<(), PlatformError> {
    let most = hekaton::wrap::max_wrapped_subcircuits(num_public_inputs, max_rows);
    if k > most {
        return Err(invalid(
            "final_proof",
            format!(
                "the wrap of {k} subcircuits (field subcircuits) needs up to {} SR1CS rows, more than BW6-767's largest \
                 evaluation domain ({max_rows} points): at most {most} subcircuits can be wrapped",
                hekaton::wrap::rows_bound(k, k, num_public_inputs)
            ),
        ));
    }
    Ok(())
}

/// [`check_fits_domain`] against BW6-767's largest domain.
pub fn check_fits(k: usize, num_public_inputs: usize) -> Result<(), PlatformError> {
    check_fits_domain(k, num_public_inputs, largest_domain())
}

/// The k commitments and proofs of a job, and its challenge round.
pub(super) async fn subproofs(
    p: &Platform,
    job: &str,
    k: u64,
) -> Result<(ChallengeRound<Fr>, Vec<Commitment<ark_bls12_381::Bls12_381>>, Vec<Proof<ark_bls12_381::Bls12_381>>), PlatformError> {
    let round: ChallengeRound<Fr> = get(p, &layout::hekaton_round(job)).await?;
    let (mut commitments, mut proofs) = (Vec::new(), Vec::new());
    for i in 0..k {
        commitments.push(get(p, &layout::hekaton_file(job, "commit", i)).await?);
        proofs.push(get(p, &layout::hekaton_file(job, "proof", i)).await?);
    }
    Ok((round, commitments, proofs))
}

/// Worker: the final proof of the job's subcircuit proofs (see the module doc). A Hekaton proof
/// that does not verify is not wrapped: the task reports without a final proof, and the
/// aggregator, which checks the assembled proof first, fails the job with the verifier's reason.
pub(super) async fn wrap(p: &Platform, job: &Job<Hekaton>, keys: &Keys) -> Result<(), PlatformError> {
    let (spec, job) = (&job.spec, job.id());
    let vd = keys.digest()?;
    let fd = keys.wrap.clone();
    if fd.is_empty() || !spec.final_proof {
        return Err(corrupt(format!("job {job}: a wrap task without a final key")));
    }
    let sd = spec.circuit.digest();
    let vk = keys::verifying_key(p, spec, &vd).await?;
    let (pk, _) = wrap_keys(p, &sd, &vd, &fd).await?;
    let (round, commitments, proofs) = subproofs(p, job, spec.circuit.num_subcircuits() as u64).await?;
    let (circuit, seed) = (spec.circuit, spec.seed);
    let started = std::time::Instant::now();
    let fin = blocking_with("wrap", move |cancel| {
        let proof = workflow::coordinator_assemble(&round, commitments, proofs)?;
        let x = circuit.build::<Fr>(seed)?.public_inputs;
        if workflow::verify(&vk, &x, &proof, &mut rand::rngs::OsRng).is_err() {
            return Ok(None);
        }
        // Minutes of Pari on BW6-767: stopped part-way if the task is abandoned.
        let fin = cancel.with_interrupt(|stop| hekaton::wrap::prove_interruptible::<Config, BW6_767, _>(&pk, &vk, &x, &proof, &mut rand::rngs::OsRng, stop))?;
        Ok(Some(fin.to_bytes()?))
    })
    .await?;
    match fin {
        Some(bytes) => {
            ::metrics::histogram!("prover_hekaton_wrap_seconds").record(started.elapsed().as_secs_f64());
            tracing::info!(job, final_key = %fd, took = ?started.elapsed(), "final proof made");
            p.blobs().put(&final_scratch(job), Bytes::from(bytes)).await?;
        }
        None => tracing::warn!(job, "the assembled Hekaton proof does not verify; not wrapped"),
    }
    Ok(())
}

/// The final proof a job's wrap task left, checked under the final key `fd` of the Hekaton key
/// `vd` against the job's public input `x`: `Ok(Ok((final.bin, final-key.bin)))` to publish,
/// `Ok(Err(reason))` when there is none or it does not verify (the job fails), `Err` for a
/// backend or a missing key (retried).
pub(super) async fn check_final(
    p: &Platform,
    job: &str,
    spec: &HekatonJobSpec,
    vd: &VkDigest,
    fd: &str,
    x: Vec<Fr>,
) -> Result<Result<(Bytes, Bytes), String>, PlatformError> {
    let bytes = match p.blobs().get(&final_scratch(job)).await {
        Ok(b) => b,
        Err(BlobError::NotFound(_)) => return Ok(Err("the wrap task left no final proof".into())),
        Err(e) => return Err(e.into()),
    };
    let (key, key_bytes) = final_key(p, &spec.circuit.digest(), vd, fd).await?;
    let b = bytes.clone();
    let verdict = blocking("verify final", move || {
        let checked = (|| {
            let fin = FinalProof::<Fr, BW6_767>::from_bytes(&b).map_err(|e| e.to_string())?;
            let pvk = key.wrap_vk.prepare().map_err(|e| e.to_string())?;
            hekaton::wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &fin).map_err(|e| format!("{e} under the final key {}", key.digest()))
        })();
        Ok(checked)
    })
    .await?;
    if let Err(reason) = verdict {
        return Ok(Err(reason));
    }
    ::metrics::counter!("prover_proofs_total", "kind" => "hekaton.final").increment(1);
    Ok(Ok((bytes, key_bytes)))
}

/// The published `final.bin` of a job, checked under the published `final-key.bin`, which must
/// be a wrap key this platform stored for the published Hekaton key and have the pinned digest
/// if one is given: `Ok(description)` or `Err(reason)`.
pub(super) async fn verify_published(p: &Platform, job: &str, spec: &HekatonJobSpec, vd: &VkDigest, x: Vec<Fr>) -> Result<Result<String, String>, PlatformError> {
    let key_bytes = p.blobs().get(&layout::proof_file(job, FINAL_KEY_FILE)).await?;
    let fd = match FinalKey::<BW6_767>::from_bytes(&key_bytes) {
        Ok(k) => k.digest().to_string(),
        Err(e) => return Ok(Err(format!("{FINAL_KEY_FILE}: {e}"))),
    };
    let stored = match final_key(p, &spec.circuit.digest(), vd, &fd).await {
        Ok((_, b)) => b,
        Err(PlatformError::Blob(BlobError::NotFound(_))) => {
            return Ok(Err(format!("{FINAL_KEY_FILE} (digest {fd}) is not a wrap key this platform made for verifying key {vd}")))
        }
        Err(e) => return Err(e),
    };
    if stored != key_bytes {
        return Ok(Err(format!("{FINAL_KEY_FILE} is not the wrap key {fd} this platform stored")));
    }
    let fin = p.blobs().get(&layout::proof_file(job, FINAL_FILE)).await?;
    let key = FinalKey::<BW6_767>::from_bytes(&key_bytes).map_err(|e| corrupt(e.to_string()))?;
    blocking("verify final", move || {
        Ok((|| {
            let fin = FinalProof::<Fr, BW6_767>::from_bytes(&fin).map_err(|e| format!("{FINAL_FILE}: {e}"))?;
            let pvk = key.wrap_vk.prepare().map_err(|e| e.to_string())?;
            hekaton::wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &fin).map_err(|e| format!("{FINAL_FILE}: {e}"))?;
            Ok(format!("final key digest {fd} (the platform's wrap key of that key)"))
        })())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every circuit the platform accepts can be wrapped (the bound is BW6-767's largest domain,
    /// not a fixed k); past the domain the request is refused naming the field.
    #[test]
    fn every_accepted_k_fits_and_the_rest_is_refused_naming_the_field() {
        let max = largest_domain();
        assert!(max > 2_000_000_000, "BW6-767's largest domain: {max}");
        for inputs in [1, 2] {
            check_fits(hekaton::spec::MAX_SUBCIRCUITS, inputs).unwrap();
        }
        let small = hekaton::wrap::rows_bound(3, 3, 1);
        check_fits_domain(3, 1, small).unwrap();
        let e = check_fits_domain(4, 1, small).unwrap_err();
        assert!(matches!(e, PlatformError::InvalidJob { field: "final_proof", .. }), "{e}");
        assert!(e.to_string().contains("subcircuits") && e.to_string().contains("at most 3"), "{e}");
    }
}

//! The aggregator's step of a Hekaton job and `VerifyProof` on what it published.
//!
//! `hekaton.assemble` aggregates the `k` proofs (Agg.P: GIPA's `log k` rounds one after the
//! other, each round's multi-exponentiations and pairings parallel) into one
//! [`AggregatedProof`] of `O(log k)` group elements, **verifies it** under the job's keys, and
//! only then publishes `proof/{circuit.json, vk.bin, agg-vk.bin, proof.bin, public.json}` and the
//! manifest: the directory `prover hekaton verify DIR --vk-digest HEX --agg-vk-digest HEX`
//! checks offline. A `--final` job publishes the `k` proofs as `proof.bin` instead (the form the
//! wrap circuit verifies), verified, and beside it the wrap task's `final.bin` once **it**
//! verifies under the job's final key against the job's statement ([`wrap::check_final`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use ark_bls12_381::{Bls12_381, Fr};
use bytes::Bytes;
use hekaton::aggregate::AggVerifyingKey;
use hekaton::aggregated::{self, AggregatedProof};
use hekaton::mirage;
use hekaton::workflow::{self, VerifyingKey, VkDigest};
use rand::SeedableRng;

use super::keys::{self, agg_file, Keys};
use super::objects::{blocking, decode, hek, put};
use super::{wrap, Hekaton, JOB};
use crate::error::{corrupt, invalid};
use crate::kinds::contract::{reject, Job};
use crate::kinds::Pins;
use crate::manifest::{Manifest, DIR};
use crate::{layout, Platform, PlatformError};

/// `hekaton.assemble` (see the module doc): a proof that does not verify, or a payload naming
/// other keys than the job's setup recorded, rejects the job and publishes nothing.
pub(super) async fn assemble(p: &Platform, job: &Job<Hekaton>, keys: &Keys) -> Result<(), PlatformError> {
    let (id, spec) = (job.id(), &job.spec);
    let recorded = keys::recorded(p, id).await?;
    if &recorded != keys {
        return Err(reject(format!("the assemble task names other keys ({keys:?}) than the job's setup recorded ({recorded:?})")));
    }
    let digest = keys.digest()?;
    let vk_key = layout::hekaton_key(&spec.circuit.digest(), &digest.to_string(), "vk.bin");
    let vk_bytes = p.blobs().get(&vk_key).await?;
    let vk: Arc<VerifyingKey<Bls12_381>> = Arc::new(decode(&vk_key, vk_bytes.clone()).await?);
    vk.check_digest(&digest).map_err(hek)?;
    let (round, commitments, proofs) = wrap::subproofs(p, id, spec.k()).await?;
    let (circuit, seed) = (spec.circuit, spec.seed);
    let out = |name: &str| layout::proof_file(id, name);
    // The directory `prover hekaton verify DIR --vk-digest HEX [--agg-vk-digest HEX]` reads
    // (and, wrapped, `prover hekaton verify-final DIR --key-digest HEX`).
    let mut circuit_json = serde_json::json!({
        "curve": "bls12-381",
        "circuit": spec.circuit,
        "seed": spec.seed,
        "vk_digest": digest.to_string(),
    });
    let mut pins = BTreeMap::from([("vk_digest".to_string(), digest.to_string())]);
    let mut verify = Vec::new();
    let x = if let Some(agg) = keys.agg_digest()? {
        // Agg.P: cm_D (as the challenge step computed it), then the aggregate proof.
        let apk = keys::agg_proving_key(p, spec, &digest, &agg).await?;
        let key = apk.clone();
        let proof = blocking("aggregate", move || {
            let cm_d = aggregated::coordinator_commit(&key, &commitments)?;
            aggregated::coordinator_assemble(&key, &round, &cm_d, &commitments, &proofs)
        })
        .await?;
        let (key, checked) = (vk.clone(), proof.clone());
        let (x, verdict) = blocking("verify", move || {
            let x = circuit.build::<Fr>(seed)?.public_inputs;
            let verdict = aggregated::verify(&key, &apk.vk, &x, &checked);
            Ok((x, verdict.map(|_| apk)))
        })
        .await?;
        let apk = verdict.map_err(|e| reject(format!("the aggregated Hekaton proof does not verify: {e}")))?;
        circuit_json["proof"] = "aggregated".into();
        circuit_json["agg_vk_digest"] = agg.to_string().into();
        put(p, &out("agg-vk.bin"), &apk.vk).await?;
        put(p, &out("proof.bin"), &proof).await?;
        ::metrics::counter!("prover_proofs_total", "kind" => "hekaton.aggregate").increment(1);
        tracing::info!(job = id, k = spec.k(), bytes = proof.size(), "aggregated the subcircuit proofs");
        verify.push(format!("prover hekaton verify {DIR} --vk-digest {digest} --agg-vk-digest {agg}"));
        pins.insert("agg_vk_digest".to_string(), agg.to_string());
        x
    } else {
        let key = vk.clone();
        let (proof, x, verdict) = blocking("verify", move || {
            let proof = workflow::coordinator_assemble(&round, commitments, proofs)?;
            let x = circuit.build::<Fr>(seed)?.public_inputs;
            let verdict = workflow::verify(&key, &x, &proof, &mut rand_chacha::ChaCha20Rng::from_entropy());
            Ok((proof, x, verdict))
        })
        .await?;
        verdict.map_err(|e| reject(format!("the assembled Hekaton proof does not verify: {e}")))?;
        circuit_json["proof"] = "subcircuit-proofs".into();
        verify.push(format!("prover hekaton verify {DIR} --vk-digest {digest}"));
        // The final proof (if asked for) first, so that circuit.json can name the final key:
        // the one the wrap task made, checked here before anything is published.
        if spec.final_proof {
            let (fin, key) = wrap::check_final(p, id, spec, &digest, &keys.wrap, x.clone()).await?.map_err(|reason| reject(format!("the final proof does not verify: {reason}")))?;
            circuit_json["final_key_digest"] = serde_json::Value::String(keys.wrap.clone());
            p.blobs().put(&out(wrap::FINAL_KEY_FILE), key).await?;
            p.blobs().put(&out(wrap::FINAL_FILE), fin).await?;
            verify.push(format!("prover hekaton verify-final {DIR} --key-digest {}", keys.wrap));
            pins.insert("final_key_digest".to_string(), keys.wrap.clone());
        }
        put(p, &out("proof.bin"), &proof).await?;
        x
    };
    let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
    p.blobs().put(&out("vk.bin"), vk_bytes).await?;
    p.blobs().put(&out("public.json"), Bytes::from(serde_json::to_vec_pretty(&public).map_err(corrupt)?)).await?;
    p.blobs().put(&out("circuit.json"), Bytes::from(serde_json::to_vec_pretty(&circuit_json).map_err(corrupt)?)).await?;
    Manifest::publish(p, id, JOB, pins, verify).await
}

/// The published `proof.bin` against the job's own statement (its circuit and seed give the
/// public inputs) under the published `vk.bin`, which must have the pinned digest. An
/// aggregated proof is checked under the published `agg-vk.bin`, which must name that key
/// and be the aggregation key this platform made for it (the one its stored keys hold: the
/// API has no second pin).
pub(super) async fn verify_outputs(p: &Platform, job: &Job<Hekaton>, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
    let pinned = pins.vk_digest.map(|hex| hex.parse::<VkDigest>().map_err(|e| invalid("expected_vk_digest", e.to_string()))).transpose()?;
    let spec = job.spec.clone();
    let vk_bytes = p.blobs().get(&layout::proof_file(job.id(), "vk.bin")).await?;
    let proof_bytes = p.blobs().get(&layout::proof_file(job.id(), "proof.bin")).await?;
    let agg_bytes = match p.blobs().get(&layout::proof_file(job.id(), "agg-vk.bin")).await {
        Ok(b) => Some(b),
        Err(blobstore::BlobError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    // The aggregate key as this platform stored it, under the digests the published keys have.
    let stored_agg = match &agg_bytes {
        Some(b) => {
            let digests = (|| {
                let vk: VerifyingKey<Bls12_381> = mirage::from_bytes(&vk_bytes).map_err(|e| format!("vk.bin: {e}"))?;
                let avk: AggVerifyingKey<Bls12_381> = mirage::from_bytes(b).map_err(|e| format!("agg-vk.bin: {e}"))?;
                let vd = vk.digest().map_err(|e| format!("vk.bin: {e}"))?;
                Ok::<_, String>((vd, VkDigest(avk.digest().map_err(|e| format!("agg-vk.bin: {e}"))?)))
            })();
            let (vd, ad) = match digests {
                Ok(ds) => ds,
                Err(e) => return Ok(Err(e)),
            };
            match p.blobs().get(&agg_file(&spec, &vd, &ad.to_string(), "vk.bin")).await {
                Ok(stored) => Some((ad, stored)),
                Err(blobstore::BlobError::NotFound(_)) => {
                    return Ok(Err(format!("agg-vk.bin (digest {ad}) is not an aggregation key this platform made for verifying key {vd}")))
                }
                Err(e) => return Err(e.into()),
            }
        }
        None => None,
    };
    let (vk_bytes2, spec2) = (vk_bytes.clone(), spec.clone());
    let checked = blocking("verify", move || {
        let checked = (|| {
            let vk: VerifyingKey<Bls12_381> = mirage::from_bytes(&vk_bytes).map_err(|e| format!("vk.bin: {e}"))?;
            let mut against = match &pinned {
                Some(d) => {
                    vk.check_digest(d).map_err(|e| format!("vk.bin: {e}"))?;
                    format!("vk digest {d} (expected_vk_digest)")
                }
                None => format!("the published vk.bin, vk digest {} (not pinned: pass expected_vk_digest)", vk.digest().map_err(|e| format!("vk.bin: {e}"))?),
            };
            let x = spec.circuit.build::<Fr>(spec.seed).map_err(|e| format!("the job's circuit: {e}"))?.public_inputs;
            match (&agg_bytes, &stored_agg) {
                (Some(published), Some((ad, stored))) => {
                    if published != stored {
                        return Err(format!("agg-vk.bin is not the aggregation key {ad} this platform stored"));
                    }
                    let avk: AggVerifyingKey<Bls12_381> = mirage::from_bytes(published).map_err(|e| format!("agg-vk.bin: {e}"))?;
                    let proof: AggregatedProof<Bls12_381> = mirage::from_bytes(&proof_bytes).map_err(|e| format!("proof.bin: {e}"))?;
                    aggregated::verify(&vk, &avk, &x, &proof).map_err(|e| format!("proof.bin: {e}"))?;
                    against.push_str(&format!(", aggregate vk digest {ad} (the platform's aggregation key of that key)"));
                }
                _ => {
                    let proof: hekaton::workflow::HekatonProof<Bls12_381> = mirage::from_bytes(&proof_bytes).map_err(|e| format!("proof.bin: {e}"))?;
                    workflow::verify(&vk, &x, &proof, &mut rand_chacha::ChaCha20Rng::from_entropy()).map_err(|e| format!("proof.bin: {e}"))?;
                }
            }
            Ok::<_, String>(against)
        })();
        Ok(checked)
    })
    .await?;
    // A `--final` job's final proof too, under the wrap key this platform stored for the
    // published verifying key.
    let against = match checked {
        Ok(a) => a,
        Err(e) => return Ok(Err(e)),
    };
    if !spec2.final_proof {
        return Ok(Ok(against));
    }
    let vd = match mirage::from_bytes::<VerifyingKey<Bls12_381>>(&vk_bytes2).map_err(|e| e.to_string()).and_then(|vk| vk.digest().map_err(|e| e.to_string())) {
        Ok(d) => d,
        Err(e) => return Ok(Err(format!("vk.bin: {e}"))),
    };
    let x = spec2.circuit.build::<Fr>(spec2.seed).map_err(hek)?.public_inputs;
    Ok(wrap::verify_published(p, job.id(), &spec2, &vd, x).await?.map(|f| format!("{against}, {f}")))
}
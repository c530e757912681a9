//! The workers' steps of a Hekaton job (paper §6.2): the setup (keys, then the coordinator's
//! traces cut into one share per subcircuit), each subcircuit's commitment `D_i`, the
//! challenge round, and each subcircuit's Mirage proof. Each writes its objects under
//! `jobs/<id>/hekaton/` and returns; the adaptor reports it.

use std::sync::Arc;

use ark_bls12_381::{Bls12_381, Fr};
use hekaton::aggregated;
use hekaton::mirage::{self, Commitment};
use hekaton::workflow::{self, ProveMessage, WitnessShare};
use rand::SeedableRng;

use super::keys::{self, Keys};
use super::objects::{blocking, derive_seed, get, put};
use super::{HekatonJobSpec, SECRET};
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// Step 1: the keys the job uses ([`keys::choose`]), then the traces, cut into one share per
/// subcircuit. Returns the digests of the keys, to travel in every later payload.
pub(super) async fn setup(p: &Platform, job: &str, spec: &HekatonJobSpec) -> Result<Keys, PlatformError> {
    let keys = keys::choose(p, job, spec).await?;
    let vk = keys::verifying_key(p, spec, &keys.digest()?).await?;
    let (circuit, seed) = (spec.circuit, spec.seed);
    // The leaf salts, from the job's secret: a redelivered setup writes the same shares.
    let salt_seed = derive_seed(&p.blobs().get(&layout::input(job, SECRET)).await?, "salt", 0)?;
    let shares = blocking("traces", move || {
        let c = circuit.build::<Fr>(seed)?;
        workflow::check_circuit(&vk, &c)?;
        Ok(workflow::coordinator_traces(&vk.layout, &c, &mut rand_chacha::ChaCha20Rng::from_seed(salt_seed))?.1)
    })
    .await?;
    for s in &shares {
        put(p, &layout::hekaton_file(job, "share", s.index), s).await?;
    }
    Ok(keys)
}

/// Subcircuit `i`'s share, checked to be its own.
async fn share(p: &Platform, job: &str, i: u64) -> Result<WitnessShare<Fr>, PlatformError> {
    let share: WitnessShare<Fr> = get(p, &layout::hekaton_file(job, "share", i)).await?;
    if share.index != i {
        return Err(corrupt(format!("share-{i}.bin holds subcircuit {}'s share", share.index)));
    }
    Ok(share)
}

/// The commitment of a share and its randomness, from the job's secret (a redelivered task
/// makes the same `D_i`).
async fn commitment(
    p: &Platform,
    job: &str,
    key: &Arc<mirage::ProvingKey<Bls12_381>>,
    share: &WitnessShare<Fr>,
) -> Result<(Commitment<Bls12_381>, mirage::CommitmentRandomness<Bls12_381>), PlatformError> {
    let seed = derive_seed(&p.blobs().get(&layout::input(job, SECRET)).await?, "commit", share.index)?;
    let (key, share) = (key.clone(), share.clone());
    blocking("commit", move || workflow::worker_commit(&key, &share, &mut rand_chacha::ChaCha20Rng::from_seed(seed))).await
}

/// Step 2, worker `i`: `D_i`, the commitment to its share.
pub(super) async fn commit(p: &Platform, job: &str, spec: &HekatonJobSpec, keys: &Keys, i: u64) -> Result<(), PlatformError> {
    let digest = keys.digest()?;
    let vk = keys::verifying_key(p, spec, &digest).await?;
    let key = keys::shape_key(p, spec, &digest, &vk, i).await?;
    let share = share(p, job, i).await?;
    let (d, _) = commitment(p, job, &key, &share).await?;
    put(p, &layout::hekaton_file(job, "commit", i), &d).await
}

/// Step 3: the challenge `(α, β)` once every `D_i` is in, the Merkle tree and one message per
/// subcircuit. An aggregating job draws `(α, β)` from `cm_D = CM1(D)`, which the aggregate
/// proof carries; a wrapped one from the list of `D_i` (the wrap recomputes it in its circuit).
pub(super) async fn challenge(p: &Platform, job: &str, spec: &HekatonJobSpec, keys: &Keys) -> Result<(), PlatformError> {
    let digest = keys.digest()?;
    let vk = keys::verifying_key(p, spec, &digest).await?;
    let apk = match keys.agg_digest()? {
        Some(agg) => Some(keys::agg_proving_key(p, spec, &digest, &agg).await?),
        None => None,
    };
    let (mut shares, mut commitments) = (Vec::new(), Vec::new());
    for i in 0..spec.k() {
        shares.push(get::<WitnessShare<Fr>>(p, &layout::hekaton_file(job, "share", i)).await?);
        commitments.push(get::<Commitment<Bls12_381>>(p, &layout::hekaton_file(job, "commit", i)).await?);
    }
    let (circuit, seed) = (spec.circuit, spec.seed);
    let round = blocking("challenge", move || {
        let x = circuit.build::<Fr>(seed)?.public_inputs;
        match apk {
            Some(apk) => {
                let cm_d = aggregated::coordinator_commit(&apk, &commitments)?;
                aggregated::coordinator_challenge(&vk, &apk.vk, &x, &shares, &cm_d)
            }
            None => workflow::coordinator_challenge(&vk, &x, &shares, &commitments),
        }
    })
    .await?;
    for (i, m) in round.messages.iter().enumerate() {
        put(p, &layout::hekaton_file(job, "message", i as u64), m).await?;
    }
    put(p, &layout::hekaton_round(job), &round).await
}

/// Step 4, worker `i`: the Mirage proof of subcircuit `i`, from the spec (the circuit is
/// rebuilt, never shipped), its share, its message and the keys.
pub(super) async fn subproof(p: &Platform, job: &str, spec: &HekatonJobSpec, keys: &Keys, i: u64) -> Result<(), PlatformError> {
    let digest = keys.digest()?;
    let vk = keys::verifying_key(p, spec, &digest).await?;
    let key = keys::shape_key(p, spec, &digest, &vk, i).await?;
    let share = share(p, job, i).await?;
    let message: ProveMessage<Fr> = get(p, &layout::hekaton_file(job, "message", i)).await?;
    let (d, r) = commitment(p, job, &key, &share).await?;
    let stored: Commitment<Bls12_381> = get(p, &layout::hekaton_file(job, "commit", i)).await?;
    if stored != d {
        return Err(corrupt(format!("subcircuit {i}: the stored commitment is not the one the job's secret gives")));
    }
    let (circuit, seed, at) = (spec.circuit, spec.seed, i as usize);
    // Randomness from the job's secret: a rerun of this task writes the same proof.
    let rseed = derive_seed(&p.blobs().get(&layout::input(job, SECRET)).await?, "prove", i)?;
    let proof = blocking("prove", move || {
        let c = circuit.build::<Fr>(seed)?;
        let sub = c.subcircuits.get(at).ok_or(hekaton::Error::ShapeMismatch { what: "subcircuit index", expected: c.subcircuits.len(), got: at })?;
        workflow::worker_prove_with_key(&vk, &key, sub, &c.public_inputs, &share, &d, &r, &message, &mut rand_chacha::ChaCha20Rng::from_seed(rseed))
    })
    .await?;
    ::metrics::counter!("prover_proofs_total", "kind" => "hekaton.subcircuit").increment(1);
    put(p, &layout::hekaton_file(job, "proof", i), &proof).await
}

//! Hekaton decoders: the verifying key, the proving key, the proof, and the messages that pass
//! between coordinator and workers (witness shares, the challenge round, prove messages). Seeds
//! come from one honest three-subcircuit setup and proof. A decoded key or proof is also run
//! through the verifier against the honest counterpart, so a decoder that lets something
//! inconsistent through shows up as a panic there.
//!
//! The wrap's final key and final proof ([`hekaton::wrap`]) are seeded from a small stand-in
//! (a Pari key and proof on BW6-767 of a four-input circuit, not a wrap proof, whose setup
//! takes a minute): the decoders only check encodings; a decoded proof also goes through
//! `verify_final` against the seed key, which must refuse it without panicking.

use ark_bls12_381::{Bls12_381, Fr};
use hekaton::circuits::bench_circuit;
use hekaton::mirage::{from_bytes, to_bytes};
use hekaton::workflow::{
    coordinator_challenge, coordinator_traces, prove, setup, verify, worker_commit, ChallengeRound, HekatonProof, ProveMessage,
    ProvingKey, VerifyingKey, WitnessShare,
};
use ark_bw6_767::BW6_767;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use hekaton::workflow::VkDigest;
use hekaton::wrap::{verify_final, FinalKey, FinalProof};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;

use crate::engine::Target;

/// `x_0·x_1 = x_2 + x_3` over BW6-767's scalar field: four public inputs, like a wrap
/// statement with one `x` (digest limbs, `x`, `rt`).
struct FourInputs(Option<[ark_bls12_381::Fq; 4]>);

impl ConstraintSynthesizer<ark_bls12_381::Fq> for FourInputs {
    fn generate_constraints(self, cs: ConstraintSystemRef<ark_bls12_381::Fq>) -> Result<(), SynthesisError> {
        let v: Vec<FpVar<ark_bls12_381::Fq>> = (0..4)
            .map(|j| FpVar::new_input(cs.clone(), || self.0.map(|a| a[j]).ok_or(SynthesisError::AssignmentMissing)))
            .collect::<Result<_, _>>()?;
        (&v[0] * &v[1]).enforce_equal(&(&v[2] + &v[3]))
    }
}

/// Seeds for `hekaton.final_key` / `hekaton.final_proof`.
fn final_seeds() -> (Vec<u8>, Vec<u8>) {
    use ark_bls12_381::Fq;
    let (pk, wrap_vk) = pari::setup::<BW6_767, _, _>(FourInputs(None), &mut rng(5)).expect("setup");
    let key = FinalKey { wrap_vk, hekaton_vk_digest: VkDigest([7; 32]), tree_depth: 1, num_public_inputs: 1 };
    let inputs = [Fq::from(3u64), Fq::from(5u64), Fq::from(7u64), Fq::from(8u64)];
    let pari = pari::prove(&pk, FourInputs(Some(inputs)), &mut rng(6)).expect("prove");
    let proof = FinalProof::<Fr, BW6_767> { pari, root: Fr::from(9u64), input_path: vec![Fr::from(10u64)] };
    (key.to_bytes(), proof.to_bytes().expect("encode"))
}

type E = Bls12_381;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// The Hekaton targets, with seeds from one honest run.
pub fn targets() -> Vec<Target> {
    let circuit = bench_circuit(3, 4, 1, Fr::from(5u64));
    let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng(1)).expect("honest setup");
    let proof = prove(&pk, &circuit, &mut rng(2)).expect("honest proof");
    let (_, shares) = coordinator_traces(&vk.layout, &circuit, &mut rng(5)).expect("traces");
    let commitments: Vec<_> = shares
        .iter()
        .map(|s| worker_commit(&pk.pks[vk.shape_of[s.index as usize] as usize], s, &mut rng(4)).expect("commit").0)
        .collect();
    let round = coordinator_challenge(&vk, &circuit.public_inputs, &shares, &commitments).expect("challenge");

    let x = Arc::new(circuit.public_inputs.clone());
    let vk = Arc::new(vk);
    let proof = Arc::new(proof);

    let mut out = Vec::new();
    {
        let (x, proof) = (x.clone(), proof.clone());
        out.push(Target {
            name: "hekaton.vk",
            seeds: vec![to_bytes(&*vk).expect("encode")],
            run: Box::new(move |b| match from_bytes::<VerifyingKey<E>>(b) {
                Ok(k) => verify(&k, &x, &proof, &mut rng(3)).is_ok(),
                Err(_) => false,
            }),
            short_run: None,
        });
    }
    {
        let (x, vk) = (x.clone(), vk.clone());
        out.push(Target {
            name: "hekaton.proof",
            seeds: vec![to_bytes(&*proof).expect("encode")],
            run: Box::new(move |b| match from_bytes::<HekatonProof<E>>(b) {
                Ok(p) => verify(&vk, &x, &p, &mut rng(3)).is_ok(),
                Err(_) => false,
            }),
            short_run: None,
        });
    }
    out.push(Target {
        name: "hekaton.pk",
        seeds: vec![to_bytes(&pk).expect("encode")],
        run: Box::new(|b| from_bytes::<ProvingKey<E>>(b).is_ok_and(|k| k.check().is_ok())),
        // Thousands of points, each checked for the subgroup: about 0.7 s per decode.
        short_run: Some(12),
    });
    let (key_bytes, final_bytes) = final_seeds();
    let key = Arc::new(FinalKey::<BW6_767>::from_bytes(&key_bytes).expect("seed key"));
    let pvk = Arc::new(key.wrap_vk.prepare().expect("prepare"));
    out.push(Target {
        name: "hekaton.final_key",
        seeds: vec![key_bytes],
        run: Box::new(|b| FinalKey::<BW6_767>::from_bytes(b).is_ok_and(|k| k.wrap_vk.prepare().is_ok())),
        short_run: None,
    });
    out.push(Target {
        name: "hekaton.final_proof",
        seeds: vec![final_bytes],
        run: Box::new(move |b| match FinalProof::<Fr, BW6_767>::from_bytes(b) {
            Ok(p) => {
                // The stand-in seed is no wrap proof, so this fails; it must fail, not panic.
                let _ = verify_final::<ark_bls12_381::Config, BW6_767>(&key, &pvk, &[Fr::from(1u64)], &p);
                true
            }
            Err(_) => false,
        }),
        short_run: None,
    });
    out.push(Target {
        name: "hekaton.share",
        seeds: shares.iter().map(|s| to_bytes(s).expect("encode")).collect(),
        run: Box::new(|b| from_bytes::<WitnessShare<Fr>>(b).is_ok()),
        short_run: None,
    });
    out.push(Target {
        name: "hekaton.challenge",
        seeds: vec![to_bytes(&round).expect("encode")],
        run: Box::new(|b| from_bytes::<ChallengeRound<Fr>>(b).is_ok()),
        short_run: None,
    });
    // The aggregated proof (paper §5.3) and the aggregate verifying key, from one honest
    // aggregated run of the same circuit.
    let srs = hekaton::aggregate::srs::Srs::<E>::setup(4, &mut rng(6));
    let (apk, avk) = hekaton::aggregated::setup(&vk, &srs).expect("aggregate setup");
    let agg = hekaton::aggregated::prove(&pk, &apk, &circuit, &mut rng(7)).expect("aggregated proof");
    let avk = Arc::new(avk);
    let agg = Arc::new(agg);
    {
        let (x, vk, avk) = (x.clone(), vk.clone(), avk.clone());
        out.push(Target {
            name: "hekaton.aggregated_proof",
            seeds: vec![to_bytes(&*agg).expect("encode")],
            run: Box::new(move |b| match from_bytes::<hekaton::aggregated::AggregatedProof<E>>(b) {
                Ok(p) => hekaton::aggregated::verify(&vk, &avk, &x, &p).is_ok(),
                Err(_) => false,
            }),
            // About 50 G_T elements, each checked for the subgroup on decoding.
            short_run: Some(40),
        });
    }
    {
        let (x, vk, agg) = (x.clone(), vk.clone(), agg.clone());
        out.push(Target {
            name: "hekaton.aggregate_vk",
            seeds: vec![to_bytes(&*avk).expect("encode")],
            run: Box::new(move |b| match from_bytes::<hekaton::aggregate::AggVerifyingKey<E>>(b) {
                Ok(k) => hekaton::aggregated::verify(&vk, &k, &x, &agg).is_ok(),
                Err(_) => false,
            }),
            short_run: Some(40),
        });
    }
    out.push(Target {
        name: "hekaton.prove_message",
        seeds: round.messages.iter().map(|m| to_bytes(m).expect("encode")).collect(),
        run: Box::new(|b| from_bytes::<ProveMessage<Fr>>(b).is_ok()),
        short_run: None,
    });
    out
}

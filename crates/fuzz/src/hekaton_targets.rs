//! Hekaton decoders: the verifying key, the proving key, the proof, and the messages that pass
//! between coordinator and workers (witness shares, the challenge round, prove messages). Seeds
//! come from one honest three-subcircuit setup and proof. A decoded key or proof is also run
//! through the verifier against the honest counterpart, so a decoder that lets something
//! inconsistent through shows up as a panic there.

use ark_bls12_381::{Bls12_381, Fr};
use hekaton::circuits::bench_circuit;
use hekaton::mirage::{from_bytes, to_bytes};
use hekaton::workflow::{
    coordinator_challenge, coordinator_traces, prove, setup, verify, worker_commit, ChallengeRound, HekatonProof, ProveMessage,
    ProvingKey, VerifyingKey, WitnessShare,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use std::sync::Arc;

use crate::engine::Target;

type E = Bls12_381;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// The Hekaton targets, with seeds from one honest run.
pub fn targets() -> Vec<Target> {
    let circuit = bench_circuit(3, 4, 1, Fr::from(5u64));
    let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng(1)).expect("honest setup");
    let proof = prove(&pk, &circuit, &mut rng(2)).expect("honest proof");
    let (_, shares) = coordinator_traces(&vk.layout, &circuit).expect("traces");
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
    out.push(Target {
        name: "hekaton.prove_message",
        seeds: round.messages.iter().map(|m| to_bytes(m).expect("encode")).collect(),
        run: Box::new(|b| from_bytes::<ProveMessage<Fr>>(b).is_ok()),
        short_run: None,
    });
    out
}

//! Pari decoders: the proof, the verifying key, the proving key, a bundle (strict decoding and
//! the per-entry report over its bytes) and a prover task's proof list. Seeds come from one
//! honest setup and four proofs of a small built-in circuit on BLS12-381. A decoded proof, key
//! or bundle is also run through the verifier.

use std::sync::Arc;

use ark_bls12_381::{Bls12_381, Fr};
use pari::bundle::{Bundle, ProofList};
use pari::circuits::CircuitFamily;
use pari::{prove, setup, verify, PreparedVerifyingKey, Proof, ProvingKey, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::engine::Target;

type E = Bls12_381;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// The Pari targets, with seeds from one honest run.
pub fn targets() -> Vec<Target> {
    let family = CircuitFamily::Chain { steps: 8 };
    let (pk, vk) = setup::<E, _, _>(family.blank::<Fr>(), &mut rng(1)).expect("setup");
    let items: Vec<(Vec<Fr>, Proof<E>)> = (0..4)
        .map(|seed| {
            let (circuit, x) = family.instance::<Fr>(seed);
            (x, prove(&pk, circuit, &mut rng(seed + 10)).expect("prove"))
        })
        .collect();
    let pvk: Arc<PreparedVerifyingKey<E>> = Arc::new(vk.prepare().expect("prepare"));
    let x0 = Arc::new(items[0].0.clone());
    let bundle = Bundle::new(&vk, items.clone()).to_bytes();
    let list = ProofList { items: items.clone() }.to_bytes();

    let mut out = Vec::new();
    {
        let (pvk, x0) = (pvk.clone(), x0.clone());
        out.push(Target {
            name: "pari.proof",
            seeds: items.iter().take(1).map(|(_, p)| p.to_bytes()).collect(),
            run: Box::new(move |b| Proof::<E>::from_bytes(b).is_ok_and(|p| verify(&pvk, &x0, &p).is_ok())),
            short_run: None,
        });
    }
    {
        let (x0, p0) = (x0.clone(), items[0].1.clone());
        out.push(Target {
            name: "pari.vk",
            seeds: vec![vk.to_bytes()],
            run: Box::new(move |b| {
                VerifyingKey::<E>::from_bytes(b)
                    .and_then(|k| k.prepare())
                    .is_ok_and(|k| verify(&k, &x0, &p0).is_ok())
            }),
            short_run: None,
        });
    }
    out.push(Target {
        name: "pari.pk",
        // Both versions: the compact SR1CS (version 2) and the rows (version 1) still read.
        seeds: vec![pk.to_bytes(), pk.to_bytes_v1(true)],
        run: Box::new(|b| ProvingKey::<E>::from_bytes(b).is_ok()),
        short_run: None,
    });
    {
        let pvk = pvk.clone();
        out.push(Target {
            name: "pari.bundle",
            seeds: vec![bundle.clone()],
            run: Box::new(move |b| Bundle::<E>::from_bytes(b).is_ok_and(|bd| bd.verify(&pvk, &mut rng(3)).is_ok())),
            short_run: None,
        });
    }
    {
        let pvk = pvk.clone();
        out.push(Target {
            name: "pari.bundle_report",
            seeds: vec![bundle],
            run: Box::new(move |b| Bundle::<E>::verify_bytes_report(b, &pvk, &mut rng(3)).is_ok_and(|r| r.bad.is_empty())),
            short_run: None,
        });
    }
    out.push(Target {
        name: "pari.proof_list",
        seeds: vec![list],
        run: Box::new(|b| ProofList::<E>::from_bytes(b).is_ok()),
        short_run: None,
    });
    out
}

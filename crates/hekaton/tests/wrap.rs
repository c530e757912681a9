//! The depth-1 wrap (issue 15): the wrap circuit over BLS12-381's `F_q` is satisfied by a
//! valid Hekaton proof and by nothing else the prover could lie with (a tampered subcircuit
//! proof, another `x`, another job's `rt`, swapped proofs); and one full Pari proof of the
//! wrap on BW6-767 at k = 1, verified against a pinned final key, with the lies a final
//! proof could tell refused.

use ark_bls12_381::{Bls12_381, Config, Fr};
use ark_bw6_767::BW6_767;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::One;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem};
use hekaton::spec::CircuitSpec;
use hekaton::workflow::{self, HekatonProof, VerifyingKey};
use hekaton::wrap::{self, FinalKey, FinalProof, WrapCircuit};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type Fq = ark_bls12_381::Fq;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// A Hekaton proof of a small synthetic circuit with `k` subcircuits.
fn hekaton_proof(k: usize, seed: u64) -> (VerifyingKey<Bls12_381>, Vec<Fr>, HekatonProof<Bls12_381>) {
    let spec = CircuitSpec::Synthetic { subcircuits: k, steps: 4, wires: 2 };
    let circuit = spec.build::<Fr>(seed).unwrap();
    let (pk, vk) = workflow::setup::<Bls12_381, _, _>(&circuit, &mut rng(1)).unwrap();
    let proof = workflow::prove(&pk, &circuit, &mut rng(2)).unwrap();
    workflow::verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).unwrap();
    (vk, circuit.public_inputs.clone(), proof)
}

/// Whether the wrap circuit with this assignment is satisfied (and its size).
fn satisfied(vk: &VerifyingKey<Bls12_381>, x: &[Fr], proof: &HekatonProof<Bls12_381>) -> (bool, usize) {
    let cs = ConstraintSystem::<Fq>::new_ref();
    WrapCircuit::<Config>::new(vk, x, proof)
        .unwrap()
        .generate_constraints(cs.clone())
        .unwrap();
    (cs.is_satisfied().unwrap(), cs.num_constraints())
}

#[test]
fn wrap_circuit_accepts_valid_proofs_and_nothing_else() {
    let (vk, x, proof) = hekaton_proof(2, 5);
    let (ok, n) = satisfied(&vk, &x, &proof);
    eprintln!("wrap circuit, k = 2: {n} constraints");
    assert!(ok, "a valid Hekaton proof must satisfy the wrap circuit");

    // Another x: the challenge (α, β) changes, so no subcircuit proof verifies.
    let mut other_x = x.clone();
    other_x[0] += Fr::one();
    assert!(!satisfied(&vk, &other_x, &proof).0, "another x");

    // Another job's rt (same circuit structure, another witness): a real root, not this one.
    let (_, _, other) = hekaton_proof(2, 6);
    assert_ne!(other.root, proof.root);
    let mut moved = proof.clone();
    moved.root = other.root;
    assert!(!satisfied(&vk, &x, &moved).0, "another job's rt");

    // A tampered subcircuit proof: A doubled, then C shifted by the generator.
    let mut t = proof.clone();
    t.proofs[1].a = (t.proofs[1].a + t.proofs[1].a).into_affine();
    assert!(!satisfied(&vk, &x, &t).0, "tampered A");
    let mut t = proof.clone();
    t.proofs[0].c = (t.proofs[0].c + ark_bls12_381::G1Affine::generator()).into_affine();
    assert!(!satisfied(&vk, &x, &t).0, "tampered C");
    // Another job's proof of subcircuit 1 put in this one.
    let mut t = proof.clone();
    t.proofs[1] = other.proofs[1];
    assert!(!satisfied(&vk, &x, &t).0, "another job's subcircuit proof");
    // Another commitment: the challenge changes, and the commitment no longer matches.
    let mut t = proof.clone();
    t.commitments[0] = other.commitments[0];
    assert!(!satisfied(&vk, &x, &t).0, "another commitment");

    // The native verifier agrees on every one of these.
    assert!(workflow::verify(&vk, &other_x, &proof, &mut rng(9)).is_err());
    assert!(workflow::verify(&vk, &x, &moved, &mut rng(9)).is_err());
}

#[test]
fn wrap_prove_and_verify_on_bw6_767_at_k1() {
    let (vk, x, proof) = hekaton_proof(1, 11);
    let (pk, key) = wrap::setup::<Config, BW6_767, _>(&vk, &mut rng(20)).unwrap();
    // The final key travels as bytes and is pinned by its digest.
    let key = FinalKey::<BW6_767>::from_bytes(&key.to_bytes()).unwrap();
    let pinned = key.digest();
    key.check_digest(&pinned).unwrap();
    let pvk = key.wrap_vk.prepare().unwrap();

    let fin = wrap::prove::<Config, BW6_767, _>(&pk, &vk, &x, &proof, &mut rng(21)).unwrap();
    let bytes = fin.to_bytes().unwrap();
    eprintln!(
        "final proof: {} bytes (Pari proof {} B, path of {} nodes)",
        bytes.len(),
        fin.pari.compressed_size(),
        fin.input_path.len()
    );
    let fin = FinalProof::<Fr, BW6_767>::from_bytes(&bytes).unwrap();
    wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &fin).unwrap();

    // Lies a final proof could tell.
    let mut other_x = x.clone();
    other_x[0] += Fr::one();
    assert!(wrap::verify_final::<Config, BW6_767>(&key, &pvk, &other_x, &fin).is_err(), "another x");
    let mut moved = fin.clone();
    moved.root += Fr::one();
    assert!(wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &moved).is_err(), "another rt");
    let mut bad = fin.clone();
    bad.pari.v_a += <BW6_767 as ark_ec::pairing::Pairing>::ScalarField::one();
    assert!(wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &bad).is_err(), "tampered Pari proof");
    // A key for another Hekaton key (another digest) is not the pinned one.
    let mut other_key = key.clone();
    other_key.hekaton_vk_digest.0[0] ^= 1;
    assert!(other_key.check_digest(&pinned).is_err());
    assert!(wrap::verify_final::<Config, BW6_767>(&other_key, &pvk, &x, &fin).is_err(), "another Hekaton key");

    // A caller that gives up stops the wrap part-way: raised before it starts, or at its
    // tenth read of the flag (inside the first MSM's windows, after synthesis and the FFTs).
    for k in [1, 10] {
        let reads = std::sync::atomic::AtomicUsize::new(0);
        let raised = || reads.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1 >= k;
        let r = wrap::prove_interruptible::<Config, BW6_767, _>(&pk, &vk, &x, &proof, &mut rng(24), pari::Interrupt::new(&raised));
        assert!(matches!(r, Err(hekaton::Error::Interrupted)), "raised at read {k}: {:?}", r.err());
    }

    // Refusing to wrap an invalid Hekaton proof.
    let mut t = proof.clone();
    t.proofs[0].a = (t.proofs[0].a + t.proofs[0].a).into_affine();
    assert!(wrap::prove::<Config, BW6_767, _>(&pk, &vk, &x, &t, &mut rng(22)).is_err());

    // The batch check over several final proofs names the bad one.
    let items = vec![(x.clone(), fin.clone()), (x.clone(), bad), (x.clone(), fin)];
    let bad_ones = wrap::batch_verify_final::<Config, BW6_767, _>(&key, &pvk, &items, &mut rng(23)).unwrap();
    assert_eq!(bad_ones, vec![1]);
}

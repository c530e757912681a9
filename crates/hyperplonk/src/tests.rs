//! End-to-end tests: completeness from 2^4 to 2^10 gates, the byte formats, and one test per
//! way a prover can lie, each rejected by the check named in its assertion.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{One, Zero};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::prover::{prove_with, Cheat};
use crate::*;

type E = Bls12_381;

struct Fixture {
    pk: ProvingKey<E>,
    vk: VerifyingKey<E>,
    circuit: Circuit<Fr>,
    public: Vec<Fr>,
    witness: Witness<Fr>,
}

fn fixture(mu: usize, num_public: usize, seed: u64) -> Fixture {
    let srs = setup_insecure_from_seed::<E>(mu, 1).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (circuit, public, witness) = random::satisfiable(mu, num_public, &mut rng).unwrap();
    circuit.check(&public, &witness).unwrap();
    let (pk, vk) = preprocess(&srs, &circuit).unwrap();
    Fixture {
        pk,
        vk,
        circuit,
        public,
        witness,
    }
}

#[test]
fn complete_from_2_4_to_2_10_gates_under_one_setup() {
    let srs = setup_insecure_from_seed::<E>(10, 7).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    for (mu, num_public) in [(4, 1), (5, 0), (6, 3), (7, 8), (8, 5), (9, 2), (10, 17)] {
        let (circuit, public, witness) =
            random::satisfiable::<Fr, _>(mu, num_public, &mut rng).unwrap();
        let (pk, vk) = preprocess(&srs, &circuit).unwrap();
        let proof = prove(&pk, &public, &witness).unwrap();
        verify(&vk, &public, &proof).unwrap_or_else(|e| panic!("μ = {mu}: {e}"));
    }
}

#[test]
fn tiny_circuits_are_complete_too() {
    // μ = 1 is the edge of the shifted points (ρ' is empty) and of the product tree.
    let srs = setup_insecure_from_seed::<E>(3, 9).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    for (mu, num_public) in [(1, 1), (1, 2), (2, 0), (3, 4)] {
        let (circuit, public, witness) =
            random::satisfiable::<Fr, _>(mu, num_public, &mut rng).unwrap();
        let (pk, vk) = preprocess(&srs, &circuit).unwrap();
        let proof = prove(&pk, &public, &witness).unwrap();
        verify(&vk, &public, &proof).unwrap_or_else(|e| panic!("μ = {mu}: {e}"));
    }
}

#[test]
fn srs_keys_and_proofs_round_trip_and_damage_is_refused() {
    let f = fixture(5, 2, 3);
    let proof = prove(&f.pk, &f.public, &f.witness).unwrap();
    let pb = files::proof_to_bytes(&proof);
    let vkb = files::vk_to_bytes(&f.vk);
    let back = files::proof_from_bytes::<E>(&pb).unwrap();
    assert_eq!(back, proof);
    let vk = files::vk_from_bytes::<E>(&vkb).unwrap();
    verify(&vk, &f.public, &back).unwrap();
    let srs = setup_insecure_from_seed::<E>(3, 2).unwrap();
    assert_eq!(
        files::srs_from_bytes::<E>(&files::srs_to_bytes(&srs)).unwrap(),
        srs
    );

    assert!(matches!(
        files::vk_from_bytes::<E>(&pb),
        Err(Error::Malformed { .. })
    ));
    let mut long = pb.clone();
    long.push(0);
    assert!(files::proof_from_bytes::<E>(&long).is_err());
    assert!(files::proof_from_bytes::<E>(&pb[..pb.len() - 1]).is_err());
    // The last quotient's bytes: off the curve or off the subgroup.
    let mut flipped = pb.clone();
    let at = flipped.len() - 5;
    flipped[at] ^= 1;
    assert!(files::proof_from_bytes::<E>(&flipped).is_err());
    // A decodable proof of the wrong shape is refused before any algebra.
    let mut short = proof.clone();
    short.evals_s.pop();
    assert!(matches!(
        verify(&f.vk, &f.public, &short),
        Err(Error::Malformed { .. })
    ));
}

/// A gate whose output nobody copies (so only the gate breaks).
fn uncopied_output_gate(c: &Circuit<Fr>) -> usize {
    let n = c.num_gates();
    (c.num_public()..n)
        .find(|&i| !c.selectors().q_o[i].is_zero() && c.sigma()[2 * n + i] == (2 * n + i) as u64)
        .expect("some gate's output is not copied")
}

#[test]
fn an_unsatisfied_gate_is_rejected_by_zerocheck() {
    let f = fixture(5, 2, 11);
    let mut w = f.witness.clone();
    let g = uncopied_output_gate(&f.circuit);
    w.columns[2][g] += Fr::one();
    assert_eq!(
        prove(&f.pk, &f.public, &w).unwrap_err(),
        Error::GateUnsatisfied { gate: g }
    );
    let proof = prove_with(&f.pk, &f.public, &w, Cheat::SkipWitnessCheck)
        .unwrap()
        .0;
    assert_eq!(
        verify(&f.vk, &f.public, &proof),
        Err(Error::SumcheckRound {
            sumcheck: "ZeroCheck",
            round: 0
        })
    );
}

#[test]
fn a_broken_copy_constraint_is_rejected_by_the_grand_product() {
    // Gate 0 exposes x_0 and leaves w_2[0], w_3[0] free and uncopied; wiring them together
    // (σ swapped on the two positions) asks for two different random values to be equal.
    let f = fixture(5, 2, 12);
    let n = f.circuit.num_gates();
    let (a, b) = (n, 2 * n);
    let mut sigma = f.circuit.sigma().to_vec();
    assert_eq!((sigma[a], sigma[b]), (a as u64, b as u64));
    sigma.swap(a, b);
    let circuit = Circuit::from_sigma(5, 2, f.circuit.selectors().clone(), sigma).unwrap();
    let srs = setup_insecure_from_seed::<E>(5, 1).unwrap();
    let (pk, vk) = preprocess(&srs, &circuit).unwrap();
    assert!(matches!(
        prove(&pk, &f.public, &f.witness),
        Err(Error::CopyUnsatisfied { .. })
    ));
    let proof = prove_with(&pk, &f.public, &f.witness, Cheat::SkipWitnessCheck)
        .unwrap()
        .0;
    assert_eq!(verify(&vk, &f.public, &proof), Err(Error::ProductNotOne));
}

#[test]
fn tampered_round_polynomials_are_rejected() {
    let f = fixture(5, 1, 13);
    let proof = prove(&f.pk, &f.public, &f.witness).unwrap();
    let mut bad = proof.clone();
    bad.zerocheck.rounds[2][0] += Fr::one();
    assert_eq!(
        verify(&f.vk, &f.public, &bad),
        Err(Error::SumcheckRound {
            sumcheck: "ZeroCheck",
            round: 2
        })
    );
    // The last round's value at 2: the round still sums, the final claim moves.
    let mut bad = proof.clone();
    bad.zerocheck.rounds[4][2] += Fr::one();
    assert_eq!(verify(&f.vk, &f.public, &bad), Err(Error::ZeroCheckFinal));
    let mut bad = proof.clone();
    bad.opencheck.rounds[1][1] += Fr::one();
    assert_eq!(
        verify(&f.vk, &f.public, &bad),
        Err(Error::SumcheckRound {
            sumcheck: "OpenCheck",
            round: 1
        })
    );
    let mut bad = proof;
    bad.opencheck.rounds[4][2] += Fr::one();
    assert_eq!(verify(&f.vk, &f.public, &bad), Err(Error::OpenCheckFinal));
}

#[test]
fn tampered_evaluations_are_rejected() {
    let f = fixture(5, 1, 14);
    // The prover claims w_1(ρ) + 1 and carries on honestly from there.
    let proof = prove_with(&f.pk, &f.public, &f.witness, Cheat::Evaluation)
        .unwrap()
        .0;
    assert_eq!(verify(&f.vk, &f.public, &proof), Err(Error::ZeroCheckFinal));
    let proof = prove(&f.pk, &f.public, &f.witness).unwrap();
    let mut bad = proof.clone();
    bad.evals_shifted[3] += Fr::one();
    assert_eq!(verify(&f.vk, &f.public, &bad), Err(Error::ZeroCheckFinal));
    let mut bad = proof;
    bad.evals_s[polys_w1()] += Fr::one();
    assert_eq!(verify(&f.vk, &f.public, &bad), Err(Error::OpenCheckFinal));
}

fn polys_w1() -> usize {
    proof::polys::W[0]
}

#[test]
fn tampered_commitments_are_rejected() {
    let f = fixture(5, 1, 15);
    // A commitment to w_1 + "1 at the secret", with every later message computed honestly:
    // only the opening can notice.
    let proof = prove_with(&f.pk, &f.public, &f.witness, Cheat::Commitment)
        .unwrap()
        .0;
    assert_eq!(verify(&f.vk, &f.public, &proof), Err(Error::Opening));
    // Changed after the fact: the transcript moves and the rounds no longer fit.
    let mut bad = prove(&f.pk, &f.public, &f.witness).unwrap();
    bad.pi_comm.0 = (bad.pi_comm.0.into_group() + f.vk.pst.g).into_affine();
    assert!(verify(&f.vk, &f.public, &bad).is_err());
}

#[test]
fn a_tampered_opening_is_rejected() {
    let f = fixture(5, 1, 16);
    let mut bad = prove(&f.pk, &f.public, &f.witness).unwrap();
    bad.opening.quotients[1] = (bad.opening.quotients[1].into_group() + f.vk.pst.g).into_affine();
    assert_eq!(verify(&f.vk, &f.public, &bad), Err(Error::Opening));
}

#[test]
fn another_public_input_is_rejected() {
    let f = fixture(5, 3, 17);
    let proof = prove(&f.pk, &f.public, &f.witness).unwrap();
    let mut other = f.public.clone();
    other[1] += Fr::one();
    // The transcript absorbs x: every challenge moves, and round 1's claim with them.
    assert_eq!(
        verify(&f.vk, &other, &proof),
        Err(Error::SumcheckRound {
            sumcheck: "ZeroCheck",
            round: 1
        })
    );
    assert!(matches!(
        verify(&f.vk, &f.public[..2], &proof),
        Err(Error::Length { .. })
    ));
    // A prover that claims another public input for the same witness.
    assert_eq!(
        prove(&f.pk, &other, &f.witness).unwrap_err(),
        Error::GateUnsatisfied { gate: 1 }
    );
    let lie = prove_with(&f.pk, &other, &f.witness, Cheat::SkipWitnessCheck)
        .unwrap()
        .0;
    assert_eq!(
        verify(&f.vk, &other, &lie),
        Err(Error::SumcheckRound {
            sumcheck: "ZeroCheck",
            round: 0
        })
    );
}

#[test]
fn another_circuits_key_is_rejected() {
    let f = fixture(5, 1, 18);
    let g = fixture(5, 1, 19);
    let proof = prove(&f.pk, &f.public, &f.witness).unwrap();
    verify(&f.vk, &f.public, &proof).unwrap();
    assert_ne!(f.vk.circuit_digest, g.vk.circuit_digest);
    // The transcript absorbs the key's digest: every challenge moves.
    let moved = Err(Error::SumcheckRound {
        sumcheck: "ZeroCheck",
        round: 1,
    });
    assert_eq!(verify(&g.vk, &f.public, &proof), moved);
    // The same circuit's key with one index commitment swapped for the other circuit's.
    let mut mixed = f.vk.clone();
    mixed.preprocessed[polys_sigma0()] = g.vk.preprocessed[polys_sigma0()];
    assert_eq!(verify(&mixed, &f.public, &proof), moved);
    // A key for another size.
    let h = fixture(4, 1, 20);
    assert!(matches!(
        verify(&h.vk, &f.public, &proof),
        Err(Error::Malformed { .. })
    ));
}

fn polys_sigma0() -> usize {
    proof::polys::SIGMA[0]
}

#[test]
fn the_setup_must_cover_the_circuit() {
    let srs = setup_insecure_from_seed::<E>(3, 1).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let (c, _, _) = random::satisfiable::<Fr, _>(4, 1, &mut rng).unwrap();
    assert_eq!(
        preprocess(&srs, &c).unwrap_err(),
        Error::SetupTooSmall {
            supported: 3,
            needed: 4
        }
    );
}

#[test]
fn sparse_witnesses_are_mostly_0_or_1_and_prove() {
    let srs = setup_insecure_from_seed::<E>(8, 11).unwrap();
    let mut rng = ChaCha20Rng::seed_from_u64(12);
    let (circuit, public, witness) =
        random::sparse_satisfiable::<Fr, _>(8, 4, 0.1, &mut rng).unwrap();
    let all = witness.columns.iter().flatten();
    let sparse = all.clone().filter(|v| v.is_zero() || v.is_one()).count();
    let frac = sparse as f64 / all.count() as f64;
    assert!((0.85..0.95).contains(&frac), "{frac}");
    let (pk, vk) = preprocess(&srs, &circuit).unwrap();
    let (dense, _) = prove_timed_with(&pk, &public, &witness, WitnessMsm::Dense).unwrap();
    let proof = prove(&pk, &public, &witness).unwrap();
    assert_eq!(proof, dense);
    verify(&vk, &public, &proof).unwrap();
    assert!(random::sparse_satisfiable::<Fr, _>(3, 0, 1.5, &mut rng).is_err());
}

//! Zero knowledge of the published proof against offline guessing of shared-wire values
//! (soundness review F1, issue 30 item 3).
//!
//! The circuit: `k = 2`, subcircuit 0 computes a secret bit `b` and sets it as shared wire 0,
//! subcircuit 1 reads it. Leaf 1 of the Merkle tree is then `(a, v, T_0, A_0) = (0, b, α−b,
//! α−b)`, and the proof publishes the sibling of leaf 0, which is `H(leaf 1)`. Anyone holding
//! the proof recomputes `(α, β)` from the public transcript and compares `H(0, b, α−b, α−b)`
//! with `input_path[0]` for `b ∈ {0, 1}`. On unsalted leaves exactly one guess matched (this
//! test asserted so before the fix, commit 905c371); with every leaf `i ≥ 1` salted
//! ([`hekaton::augment`]) neither does.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::{One, Zero};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use hekaton::merkle::{hash_leaf, poseidon_config};
use hekaton::partition::{Partitioned, Portals, Subcircuit};
use hekaton::workflow::{
    coordinator_assemble, coordinator_challenge, coordinator_traces, derive_challenge, setup,
    verify, worker_commit, worker_prove, HekatonProof, ProvingKey, VerifyingKey,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

/// Subcircuit 0 holds the secret bit `b` (a witness it allocates itself) and sets it as the
/// shared wire `b`; subcircuit 1 reads it. Both check that it is a bit.
struct SecretBit {
    reader: bool,
    b: Fr,
}

impl Subcircuit<Fr> for SecretBit {
    fn shape(&self) -> String {
        if self.reader { "reader" } else { "writer" }.into()
    }

    fn generate_constraints(
        &self,
        cs: ConstraintSystemRef<Fr>,
        _public_inputs: &[FpVar<Fr>],
        portals: &mut Portals<Fr>,
    ) -> Result<(), SynthesisError> {
        let b = if self.reader {
            portals.get("b")?
        } else {
            let b = FpVar::new_witness(cs, || Ok(self.b))?;
            portals.set("b", &b)?;
            b
        };
        b.mul_equals(&(&b - FpVar::one()), &FpVar::zero())
    }
}

fn circuit(b: bool) -> Partitioned<Fr, SecretBit> {
    let b = if b { Fr::one() } else { Fr::zero() };
    Partitioned {
        public_inputs: vec![Fr::from(42u64)],
        subcircuits: vec![
            SecretBit { reader: false, b },
            SecretBit { reader: true, b },
        ],
    }
}

/// The guesses of `b` whose leaf 1, `H(0, b, α−b, α−b)` followed by `salt` when one is
/// given, is the published sibling of leaf 0; everything but the salt is computed from the
/// public key, statement and proof.
fn guesses_that_match(
    vk: &VerifyingKey<E>,
    x: &[Fr],
    proof: &HekatonProof<E>,
    salt: Option<Fr>,
) -> Vec<bool> {
    let cfg = poseidon_config::<Fr>();
    let ch = derive_challenge(vk, x, &proof.commitments).unwrap();
    [false, true]
        .into_iter()
        .filter(|&guess| {
            let b = if guess { Fr::one() } else { Fr::zero() };
            let t = ch.alpha - b;
            let mut leaf = vec![Fr::zero(), b, t, t];
            leaf.extend(salt);
            hash_leaf(&cfg, &leaf) == proof.input_path[0]
        })
        .collect()
}

/// Steps 1–5 by hand, so that the test also holds the coordinator's private state: the proof
/// and the salt of leaf 1.
fn prove_keeping_salt(pk: &ProvingKey<E>, c: &Partitioned<Fr, SecretBit>, seed: u64) -> (HekatonProof<E>, Fr) {
    let mut r = ChaCha20Rng::seed_from_u64(seed);
    let (_, shares) = coordinator_traces(&pk.vk.layout, c, &mut r).unwrap();
    let (ds, rs): (Vec<_>, Vec<_>) = shares
        .iter()
        .map(|s| worker_commit(pk.subcircuit_key(s.index as usize).unwrap(), s, &mut r).unwrap())
        .unzip();
    let round = coordinator_challenge(&pk.vk, &c.public_inputs, &shares, &ds).unwrap();
    let proofs = (0..2)
        .map(|i| {
            let (sub, s) = (&c.subcircuits[i], &shares[i]);
            let msg = &round.messages[i];
            worker_prove(pk, sub, &c.public_inputs, s, &ds[i], &rs[i], msg, &mut r).unwrap()
        })
        .collect();
    let salt = round.leaves[0].salt;
    assert_eq!(salt, shares[0].salt);
    (coordinator_assemble(&round, ds, proofs).unwrap(), salt)
}

#[test]
fn published_leaf_hash_does_not_reveal_a_secret_shared_bit() {
    let (pk, vk) = setup::<E, _, _>(&circuit(false), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    for secret in [false, true] {
        let c = circuit(secret);
        let (proof, salt) = prove_keeping_salt(&pk, &c, 2);
        verify(&vk, &c.public_inputs, &proof, &mut ChaCha20Rng::seed_from_u64(3)).unwrap();
        // The attack as it worked on unsalted leaves: neither guess matches any more, nor does
        // a guess with a guessed salt.
        assert_eq!(guesses_that_match(&vk, &c.public_inputs, &proof, None), Vec::<bool>::new());
        assert_eq!(guesses_that_match(&vk, &c.public_inputs, &proof, Some(Fr::zero())), Vec::<bool>::new());
        // It is the salt alone that stops it: whoever holds the salt (the coordinator, the
        // two workers that share leaf 1) recovers `b` exactly as before.
        assert_eq!(guesses_that_match(&vk, &c.public_inputs, &proof, Some(salt)), vec![secret]);
    }
}

#[test]
fn salts_are_fresh_per_proof() {
    // Two proofs of the same witness: different salts, so different leaf-1 hashes and roots.
    let c = circuit(true);
    let (pk, vk) = setup::<E, _, _>(&c, &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    let (p1, s1) = prove_keeping_salt(&pk, &c, 2);
    let (p2, s2) = prove_keeping_salt(&pk, &c, 4);
    assert_ne!(s1, s2);
    assert_ne!(p1.input_path[0], p2.input_path[0]);
    assert_ne!(p1.root, p2.root);
    for p in [&p1, &p2] {
        verify(&vk, &c.public_inputs, p, &mut ChaCha20Rng::seed_from_u64(3)).unwrap();
    }
}

//! Zero knowledge of the published proof against offline guessing of shared-wire values
//! (soundness review F1, issue 30 item 3).
//!
//! The circuit: `k = 2`, subcircuit 0 computes a secret bit `b` and sets it as shared wire 0,
//! subcircuit 1 reads it. Leaf 1 of the Merkle tree is then `(a, v, T_0, A_0) = (0, b, α−b,
//! α−b)`, and the proof publishes the sibling of leaf 0, which is `H(leaf 1)`. Anyone holding
//! the proof recomputes `(α, β)` from the public transcript and compares `H(0, b, α−b, α−b)`
//! with `input_path[0]` for `b ∈ {0, 1}`.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::{One, Zero};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use hekaton::merkle::{hash_leaf, poseidon_config};
use hekaton::partition::{Partitioned, Portals, Subcircuit};
use hekaton::workflow::{derive_challenge, prove, setup, verify, HekatonProof, VerifyingKey};
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

/// The guesses of `b` whose unsalted leaf 1 `H(0, b, α−b, α−b)` is the published sibling of
/// leaf 0, computed from the public key, statement and proof only.
fn guesses_that_match(vk: &VerifyingKey<E>, x: &[Fr], proof: &HekatonProof<E>) -> Vec<bool> {
    let cfg = poseidon_config::<Fr>();
    let ch = derive_challenge(vk, x, &proof.commitments).unwrap();
    [false, true]
        .into_iter()
        .filter(|&guess| {
            let b = if guess { Fr::one() } else { Fr::zero() };
            let t = ch.alpha - b;
            hash_leaf(&cfg, &[Fr::zero(), b, t, t]) == proof.input_path[0]
        })
        .collect()
}

#[test]
fn published_leaf_hash_reveals_a_secret_shared_bit() {
    let (pk, vk) = setup::<E, _, _>(&circuit(false), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    for secret in [false, true] {
        let c = circuit(secret);
        let proof = prove(&pk, &c, &mut ChaCha20Rng::seed_from_u64(2)).unwrap();
        verify(&vk, &c.public_inputs, &proof, &mut ChaCha20Rng::seed_from_u64(3)).unwrap();
        // Today the attack works: exactly one guess matches, and it is the secret.
        assert_eq!(guesses_that_match(&vk, &c.public_inputs, &proof), vec![secret]);
    }
}

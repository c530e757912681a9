//! Fiat–Shamir: the challenge `r = H("pari-v1" ‖ digest(vk) ‖ |x| ‖ x ‖ T)` with BLAKE2b-512,
//! reduced into the scalar field (512 bits reduced mod p: negligible bias).
//!
//! Batch weights: `ρ_1, …, ρ_N` are the output of ChaCha20 keyed by
//! `H("pari-batch-v1" ‖ digest(vk) ‖ s ‖ N ‖ (|x_k| ‖ x_k ‖ π_k)_k)`, where `s` is 32 bytes from
//! the caller's RNG. The weights are a random function of every proof in the batch: a forger who
//! knows (or sets) the caller's RNG still cannot choose proofs that cancel under weights fixed in
//! advance; a good RNG keeps them unpredictable as before.

use ark_ec::pairing::Pairing;
use ark_ff::PrimeField;
use ark_serialize::CanonicalSerialize;
use blake2::{Blake2b512, Digest};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;

use crate::data_structures::Proof;

const DOMAIN: &[u8] = b"pari-v1";

/// A transcript already holding the domain separator and the key digest; cloned per proof.
#[derive(Clone)]
pub struct Transcript(Blake2b512);

impl Transcript {
    pub fn new(vk_digest: &[u8; 64]) -> Self {
        let mut h = Blake2b512::new();
        h.update(DOMAIN);
        h.update(vk_digest);
        Transcript(h)
    }

    /// `r` for public input `x` and commitment `T`.
    pub fn challenge<E: Pairing>(&self, x: &[E::ScalarField], t: &E::G1Affine) -> E::ScalarField {
        let mut h = self.0.clone();
        h.update((x.len() as u64).to_le_bytes());
        let mut buf = Vec::with_capacity(32 * (x.len() + 2));
        for xi in x {
            xi.serialize_compressed(&mut buf).expect("serialize to Vec");
        }
        t.serialize_compressed(&mut buf).expect("serialize to Vec");
        h.update(&buf);
        E::ScalarField::from_le_bytes_mod_order(&h.finalize())
    }
}

/// The 128-bit batch weights of `items` (see the module doc), mixing `rng` with a hash of the
/// key digest and every `(x_k, π_k)`.
pub fn batch_weights<E: Pairing, R: RngCore>(
    vk_digest: &[u8; 64],
    items: &[(&[E::ScalarField], &Proof<E>)],
    rng: &mut R,
) -> Vec<u128> {
    let mut seed = [0u8; 32];
    rng.fill_bytes(&mut seed);
    let mut h = Blake2b512::new();
    h.update(b"pari-batch-v1");
    h.update(vk_digest);
    h.update(seed);
    h.update((items.len() as u64).to_le_bytes());
    let mut buf = Vec::with_capacity(256);
    for (x, proof) in items {
        buf.clear();
        buf.extend_from_slice(&(x.len() as u64).to_le_bytes());
        for xi in x.iter() {
            xi.serialize_compressed(&mut buf).expect("serialize to Vec");
        }
        proof.serialize_compressed(&mut buf).expect("serialize to Vec");
        h.update(&buf);
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(&h.finalize()[..32]);
    let mut stream = ChaCha20Rng::from_seed(key);
    (0..items.len()).map(|_| stream.gen()).collect()
}

/// BLAKE2b-512 of a canonical serialization.
pub fn digest_of(bytes: &[u8]) -> [u8; 64] {
    let mut out = [0u8; 64];
    out.copy_from_slice(&Blake2b512::digest(bytes));
    out
}

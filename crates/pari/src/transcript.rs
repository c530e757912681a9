//! Fiat–Shamir: the challenge `r = H("pari-v1" ‖ digest(vk) ‖ |x| ‖ x ‖ T)` with BLAKE2b-512,
//! reduced into the scalar field (512 bits reduced mod p: negligible bias).

use ark_ec::pairing::Pairing;
use ark_ff::PrimeField;
use ark_serialize::CanonicalSerialize;
use blake2::{Blake2b512, Digest};

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

/// BLAKE2b-512 of a canonical serialization.
pub fn digest_of(bytes: &[u8]) -> [u8; 64] {
    let mut out = [0u8; 64];
    out.copy_from_slice(&Blake2b512::digest(bytes));
    out
}

//! The Fiat–Shamir transcript: a Poseidon sponge over the **scalar field** `F` that the
//! sumchecks run in, so that the later compression step (a circuit over `F`) can recompute
//! every challenge natively.
//!
//! Parameters ([`poseidon_config`]): width 3 (rate 2, capacity 1), S-box `x^5`, 8 full and 57
//! partial rounds, round constants and MDS matrix from arkworks' Grain-LFSR derivation
//! (`find_poseidon_ark_and_mds` with no skipped matrices). This is the derivation the
//! workspace's Hekaton transcript uses; the round numbers are the standard ones for a 255-bit
//! field at width 3 (BLS12-381's and BN254's scalar fields).
//!
//! What [`crate::spartan`] absorbs, in order (the full layout is documented there):
//! the domain tag, the R1CS digest, the public input, the witness commitment, then every
//! prover message in the order it is sent, squeezing each challenge right after the message
//! it answers.
//!
//! Byte strings (the tag, the digest, a serialized commitment) are absorbed as their length
//! followed by little-endian chunks of `⌊(|F| − 1)/8⌋` bytes, each chunk one field element
//! (every chunk is below the modulus, so the packing is injective).

use ark_crypto_primitives::sponge::poseidon::{
    find_poseidon_ark_and_mds, PoseidonConfig, PoseidonSponge,
};
use ark_crypto_primitives::sponge::{Absorb, CryptographicSponge};
use ark_ff::PrimeField;
use ark_serialize::CanonicalSerialize;

/// Full rounds of the permutation.
pub const FULL_ROUNDS: usize = 8;
/// Partial rounds of the permutation.
pub const PARTIAL_ROUNDS: usize = 57;
/// The S-box exponent.
pub const ALPHA: u64 = 5;
/// Field elements absorbed per permutation.
pub const RATE: usize = 2;

/// The Poseidon parameters over `F` (see the module doc). Deterministic: every prover and
/// verifier derives the same constants.
pub fn poseidon_config<F: PrimeField>() -> PoseidonConfig<F> {
    let (ark, mds) = find_poseidon_ark_and_mds::<F>(
        F::MODULUS_BIT_SIZE as u64,
        RATE,
        FULL_ROUNDS as u64,
        PARTIAL_ROUNDS as u64,
        0,
    );
    PoseidonConfig::new(FULL_ROUNDS, PARTIAL_ROUNDS, ALPHA, mds, ark, RATE, 1)
}

/// A Fiat–Shamir transcript over `F`.
#[derive(Clone)]
pub struct Transcript<F: PrimeField + Absorb> {
    sponge: PoseidonSponge<F>,
}

impl<F: PrimeField + Absorb> Transcript<F> {
    /// A fresh transcript that has absorbed `domain_tag`.
    pub fn new(domain_tag: &[u8]) -> Self {
        let mut t = Self {
            sponge: PoseidonSponge::new(&poseidon_config::<F>()),
        };
        t.absorb_bytes(domain_tag);
        t
    }

    /// Absorbs one field element.
    pub fn absorb(&mut self, x: &F) {
        self.sponge.absorb(x);
    }

    /// Absorbs field elements one after another (the count is not absorbed: every caller
    /// absorbs a number fixed by what was absorbed before).
    pub fn absorb_slice(&mut self, xs: &[F]) {
        for x in xs {
            self.sponge.absorb(x);
        }
    }

    /// Absorbs a byte string: its length, then its bytes packed into field elements.
    pub fn absorb_bytes(&mut self, bytes: &[u8]) {
        self.absorb(&F::from(bytes.len() as u64));
        let chunk = ((F::MODULUS_BIT_SIZE - 1) / 8) as usize;
        for c in bytes.chunks(chunk) {
            self.absorb(&F::from_le_bytes_mod_order(c));
        }
    }

    /// Absorbs the compressed canonical serialization of `value` as a byte string.
    pub fn absorb_serialized<T: CanonicalSerialize>(&mut self, value: &T) {
        let mut bytes = Vec::with_capacity(value.compressed_size());
        value
            .serialize_compressed(&mut bytes)
            .expect("serializing into a Vec cannot fail");
        self.absorb_bytes(&bytes);
    }

    /// Squeezes one challenge.
    pub fn challenge(&mut self) -> F {
        self.sponge.squeeze_field_elements::<F>(1)[0]
    }

    /// Squeezes `n` challenges.
    pub fn challenges(&mut self, n: usize) -> Vec<F> {
        if n == 0 {
            return Vec::new();
        }
        self.sponge.squeeze_field_elements::<F>(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;

    #[test]
    fn same_messages_same_challenges_and_any_change_differs() {
        let run = |tag: &[u8], x: u64| {
            let mut t = Transcript::<Fr>::new(tag);
            t.absorb(&Fr::from(x));
            t.challenges(2)
        };
        assert_eq!(run(b"a", 1), run(b"a", 1));
        assert_ne!(run(b"a", 1), run(b"a", 2));
        assert_ne!(run(b"a", 1), run(b"b", 1));
        let c = run(b"a", 1);
        assert_ne!(c[0], c[1]);
    }

    #[test]
    fn byte_strings_are_length_prefixed() {
        let mut a = Transcript::<Fr>::new(b"t");
        a.absorb_bytes(&[1, 2]);
        a.absorb_bytes(&[]);
        let mut b = Transcript::<Fr>::new(b"t");
        b.absorb_bytes(&[1]);
        b.absorb_bytes(&[2]);
        assert_ne!(a.challenge(), b.challenge());
    }
}

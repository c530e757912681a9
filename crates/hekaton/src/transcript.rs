//! The Fiat–Shamir transcript of a Hekaton proof, a Poseidon sponge over the **base field**
//! `F_q` of the pairing's G1 (not the scalar field `F_r` the subcircuits are written in).
//!
//! Why the base field: the commitments `D_i` and the proofs `(A_i, B_i, C_i)` are points whose
//! coordinates live in `F_q` (`F_{q²}` for `B_i`), and the depth-1 wrap ([`crate::wrap`]) is a
//! circuit over `F_q` (the scalar field of BW6-767 for BLS12-381). Hashing the points as `F_q`
//! elements makes every absorb native there, and the wrap circuit recomputes the very same
//! transcript with [`crate::wrap`]'s in-circuit twin.
//!
//! Absorbed, in order:
//! 1. the verifying key's [`VkDigest`] as two 128-bit limbs (little-endian halves);
//! 2. the public input `x`, each `x_j ∈ F_r` as the integer it is (`r < q`);
//! 3. every commitment `D_i` as its affine `(x, y)` (the identity as `(0, 0)`).
//!
//! The challenge `(α, β)` is the first `2·254` squeezed bits: `α` from bits `0..254`, `β`
//! from `254..508`, each an integer below `2^254 < r`, so no reduction is needed and the
//! circuit takes the bits as they come.
//!
//! The wrap continues the same sponge with `rt` and the proofs and squeezes its batching
//! weights ([`Transcript::weights`]), so the weights bind everything the batched check reads.

use ark_crypto_primitives::sponge::poseidon::PoseidonSponge;
use ark_crypto_primitives::sponge::{Absorb, CryptographicSponge};
use ark_ec::pairing::Pairing;
use ark_ec::AffineRepr;
use ark_ff::{AdditiveGroup, BigInteger, Field, PrimeField};

use crate::merkle::poseidon_config;
use crate::workflow::{Challenge, VkDigest};

/// Bits of each challenge element: every 254-bit integer is below BLS12-381's `r`
/// (and BN254's, BLS12-377's): the scalar field of every curve this crate is used with has
/// more than 254 bits.
pub const CHALLENGE_BITS: usize = 254;

/// Bits of each batching weight below its fixed top bit: the wrap uses
/// `ρ_i = 2^128 + s_i` with `s_i` a 128-bit squeeze, so no weight is zero.
pub const WEIGHT_BITS: usize = 128;

/// An `F_r` element as the `F_q` integer it is (`r < q` for the curves used here).
pub fn scalar_to_base<Fr: PrimeField, Fq: PrimeField>(x: &Fr) -> Fq {
    Fq::from_le_bytes_mod_order(&x.into_bigint().to_bytes_le())
}

/// An integer given by little-endian bits as an `F` element (reduced if it does not fit).
pub fn from_bits_le<F: PrimeField>(bits: &[bool]) -> F {
    let mut acc = F::zero();
    for &b in bits.iter().rev() {
        acc.double_in_place();
        if b {
            acc += F::one();
        }
    }
    acc
}

/// The digest's two 128-bit limbs, as field elements.
pub fn digest_limbs<F: PrimeField>(d: &VkDigest) -> [F; 2] {
    [
        F::from_le_bytes_mod_order(&d.0[..16]),
        F::from_le_bytes_mod_order(&d.0[16..]),
    ]
}

/// The affine coordinates of a G1 point (the identity as `(0, 0)`).
pub fn g1_coordinates<G: AffineRepr>(p: &G) -> [G::BaseField; 2]
where
    G::BaseField: Field,
{
    match p.xy() {
        Some((x, y)) => [x, y],
        None => [G::BaseField::ZERO; 2],
    }
}

/// The transcript sponge over `E::BaseField`.
pub struct Transcript<E: Pairing>
where
    E::BaseField: Absorb,
{
    sponge: PoseidonSponge<E::BaseField>,
}

impl<E: Pairing> Transcript<E>
where
    E::BaseField: Absorb,
{
    /// Absorbs the key digest, `x` and every `D_i`.
    pub fn new(vk_digest: &VkDigest, public_inputs: &[E::ScalarField], commitments: &[E::G1Affine]) -> Self {
        let cfg = poseidon_config::<E::BaseField>();
        let mut sponge = PoseidonSponge::new(&cfg);
        for limb in digest_limbs::<E::BaseField>(vk_digest) {
            sponge.absorb(&limb);
        }
        for x in public_inputs {
            sponge.absorb(&scalar_to_base::<_, E::BaseField>(x));
        }
        for d in commitments {
            for c in g1_coordinates(d) {
                sponge.absorb(&c);
            }
        }
        Transcript { sponge }
    }

    /// `(α, β)`: [`CHALLENGE_BITS`] bits each.
    pub fn challenge(&mut self) -> Challenge<E::ScalarField> {
        let bits = self.sponge.squeeze_bits(2 * CHALLENGE_BITS);
        Challenge {
            alpha: from_bits_le(&bits[..CHALLENGE_BITS]),
            beta: from_bits_le(&bits[CHALLENGE_BITS..]),
        }
    }

    /// Absorbs field elements of the base field (the wrap's statement and proofs).
    pub fn absorb(&mut self, items: &[E::BaseField]) {
        for x in items {
            self.sponge.absorb(x);
        }
    }

    /// The wrap's `k` batching weights `ρ_i = 2^128 + s_i`, as bits (little-endian, 129 each).
    pub fn weights(&mut self, k: usize) -> Vec<Vec<bool>> {
        let bits = self.sponge.squeeze_bits(WEIGHT_BITS * k);
        bits.chunks(WEIGHT_BITS)
            .map(|c| {
                let mut w = c.to_vec();
                w.push(true);
                w
            })
            .collect()
    }
}

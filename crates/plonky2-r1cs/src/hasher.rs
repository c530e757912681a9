//! A plonky2 [`Hasher`] and [`GenericConfig`] with Poseidon over BN254 `Fr`, for the last shrink
//! layer: its Merkle caps are single `Fr` elements and its Fiat–Shamir challenger runs the BN254
//! permutation, so the R1CS verifier over `Fr` hashes natively (240–264 constraints per
//! permutation) instead of emulating Goldilocks Poseidon.
//!
//! ## Packing Goldilocks into `Fr`
//!
//! [`pack`] maps up to **3** canonical Goldilocks elements `g_0, g_1, g_2` (each `< p < 2^64`) to
//! the integer `g_0 + g_1·2^64 + g_2·2^128 < 2^192 < r`. It is injective on sequences of one fixed
//! length: the integer is below `r`, so no two of them are the same element of `Fr`, and the
//! base-`2^64` digits of an integer are unique. Four would not fit (`2^256 > r`).
//!
//! ## The hash `H` (Merkle leaves, circuit digest)
//!
//! [`PoseidonBn254Hash::hash_no_pad`] is a sponge over the width-4 instance (capacity 1, rate 3
//! elements of `Fr`, i.e. 9 Goldilocks elements per permutation): the state starts as
//! `(n·2^64, 0, 0, 0)` where `n` is the input length in Goldilocks elements (the Poseidon paper's
//! domain separation for fixed-length hashing, §4.2, which also makes inputs of different lengths
//! hash independently, so no padding is needed); each chunk of 9 elements is packed into 3
//! elements and added to the rate part, then the state is permuted; the output is the state's
//! element 1. At least one permutation is run. `hash_or_noop` returns [`pack`] of inputs of at most 3
//! elements (no hashing, as plonky2 does for at most 4) and `hash_no_pad` otherwise. `two_to_one`
//! is circomlib's `Poseidon(2)` ([`poseidon2`]).
//!
//! ## The hash as Goldilocks elements
//!
//! The challenger observes a hash through [`GenericHashOut::to_vec`], which must give Goldilocks
//! elements: the canonical integer of the `Fr` element (`< 2^254`) cut into five little-endian
//! limbs of 63, 63, 63, 63 and 2 bits. Every limb is below `2^63 < p`, so it is already
//! canonical and the map is injective: the transcript binds each cap exactly.
//!
//! ## The challenger's permutation
//!
//! plonky2's `Challenger` works on a [`PlonkyPermutation`] over Goldilocks elements.
//! [`PoseidonBn254Permutation`] is a duplex sponge over the width-4 instance whose **rate** is
//! shown to plonky2 as 9 Goldilocks elements (`RATE = WIDTH = 9`) and whose **capacity** (one full
//! `Fr` element, 254 bits) stays hidden. `permute` packs the 9 rate elements into the 3 rate
//! elements of `Fr` (overwriting them, as plonky2's challenger overwrites its rate), runs the
//! permutation, and shows each output rate element `y` as its three low 64-bit limbs, each
//! reduced mod `p` (`y mod 2^192` is within statistical distance `2^192/r < 2^-61` of uniform, and
//! a 64-bit limb reduced mod `p` is uniform on `F_p` up to a `2^-32` bias on `2^32` values), so
//! challenges are near-uniform in `F_p` and the proof-of-work check keeps its meaning. Only the
//! capacity carries state from one permutation to the next beyond what is shown; keeping it
//! whole gives the sponge its full 254-bit capacity, and in-circuit it costs nothing: only the
//! outputs that are read (challenges, or rate elements kept across a partial absorb) need a
//! range-checked decomposition.

use ark_bn254::Fr;
use ark_ff::{BigInt, PrimeField, Zero};
use plonky2::field::extension::quadratic::QuadraticExtension;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::{Field, PrimeField64};
use plonky2::hash::hashing::PlonkyPermutation;
use plonky2::hash::poseidon::PoseidonHash;
use plonky2::plonk::config::{GenericConfig, GenericHashOut, Hasher};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::poseidon::{params_t4, poseidon2};

type GL = GoldilocksField;

/// Goldilocks elements packed into one `Fr` element.
pub const GL_PER_FR: usize = 3;
/// `Fr` elements in the rate of the width-4 sponge.
pub const FR_RATE: usize = 3;
/// Goldilocks elements absorbed per permutation: the challenger's `RATE`.
pub const GL_RATE: usize = GL_PER_FR * FR_RATE;
/// Goldilocks elements in [`GenericHashOut::to_vec`] of a hash.
pub const HASH_GL_LIMBS: usize = 5;
/// Bits per limb of [`GenericHashOut::to_vec`] (the last limb has the remaining 2).
pub const HASH_LIMB_BITS: usize = 63;

/// `Σ g_i·2^{64 i}` over the canonical values of at most 3 Goldilocks elements.
pub fn pack(gs: &[GL]) -> Fr {
    assert!(gs.len() <= GL_PER_FR, "at most {GL_PER_FR} Goldilocks elements fit in one Fr element");
    let mut limbs = [0u64; 4];
    for (l, g) in limbs.iter_mut().zip(gs) {
        *l = g.to_canonical_u64();
    }
    Fr::from_bigint(BigInt::new(limbs)).expect("below 2^192 < r")
}

/// The three low 64-bit limbs of `y`'s canonical integer, each reduced mod `p`: how the
/// challenger shows an output rate element.
pub fn unpack_rate(y: Fr) -> [GL; GL_PER_FR] {
    let limbs = y.into_bigint().0;
    [0, 1, 2].map(|i| GL::from_noncanonical_u64(limbs[i]))
}

/// Bits `start .. start + len` (`len ≤ 64`) of a little-endian 256-bit integer.
fn bit_range(limbs: &[u64; 4], start: usize, len: usize) -> u64 {
    let mut out = 0u64;
    for i in 0..len {
        let b = start + i;
        out |= ((limbs[b / 64] >> (b % 64)) & 1) << i;
    }
    out
}

/// A hash as five canonical Goldilocks limbs of 63, 63, 63, 63 and 2 bits (injective).
pub fn hash_to_goldilocks(h: Fr) -> [GL; HASH_GL_LIMBS] {
    let limbs = h.into_bigint().0;
    let mut out = [GL::ZERO; HASH_GL_LIMBS];
    for (i, o) in out.iter_mut().enumerate() {
        let start = i * HASH_LIMB_BITS;
        let len = HASH_LIMB_BITS.min(Fr::MODULUS_BIT_SIZE as usize - start);
        *o = GL::from_canonical_u64(bit_range(&limbs, start, len));
    }
    out
}

/// A Poseidon-BN254 hash: one element of `Fr`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PoseidonBn254HashOut(pub Fr);

impl PoseidonBn254HashOut {
    /// 32 little-endian bytes of the canonical integer.
    pub fn to_le_bytes(&self) -> [u8; 32] {
        let mut out = [0u8; 32];
        for (chunk, limb) in out.chunks_mut(8).zip(self.0.into_bigint().0) {
            chunk.copy_from_slice(&limb.to_le_bytes());
        }
        out
    }

    /// The inverse of [`Self::to_le_bytes`]; `None` unless the integer is below `r`.
    pub fn from_le_bytes_canonical(bytes: &[u8; 32]) -> Option<Self> {
        let mut limbs = [0u64; 4];
        for (limb, chunk) in limbs.iter_mut().zip(bytes.chunks(8)) {
            *limb = u64::from_le_bytes(chunk.try_into().expect("8 bytes"));
        }
        Fr::from_bigint(BigInt::new(limbs)).map(Self)
    }
}

impl Serialize for PoseidonBn254HashOut {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_le_bytes().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for PoseidonBn254HashOut {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let bytes = <[u8; 32]>::deserialize(deserializer)?;
        Self::from_le_bytes_canonical(&bytes)
            .ok_or_else(|| serde::de::Error::custom("hash is not a canonical element of BN254 Fr"))
    }
}

impl GenericHashOut<GL> for PoseidonBn254HashOut {
    fn to_bytes(&self) -> Vec<u8> {
        self.to_le_bytes().to_vec()
    }

    /// plonky2's proof reader calls this on `HASH_SIZE` bytes and has no error path: bytes of an
    /// integer `≥ r` are reduced mod `r` (so a tampered encoding decodes to some element and the
    /// proof fails to verify; it never panics).
    fn from_bytes(bytes: &[u8]) -> Self {
        Self(Fr::from_le_bytes_mod_order(bytes))
    }

    fn to_vec(&self) -> Vec<GL> {
        hash_to_goldilocks(self.0).to_vec()
    }
}

/// The challenger's duplex sponge: 9 Goldilocks rate elements shown, one `Fr` capacity element
/// hidden (see the module documentation).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct PoseidonBn254Permutation {
    rate: [GL; GL_RATE],
    capacity: Fr,
}

impl PoseidonBn254Permutation {
    /// The hidden capacity element.
    pub fn capacity(&self) -> Fr {
        self.capacity
    }
}

impl AsRef<[GL]> for PoseidonBn254Permutation {
    fn as_ref(&self) -> &[GL] {
        &self.rate
    }
}

impl PlonkyPermutation<GL> for PoseidonBn254Permutation {
    const RATE: usize = GL_RATE;
    const WIDTH: usize = GL_RATE;

    fn new<I: IntoIterator<Item = GL>>(elts: I) -> Self {
        let mut perm = Self::default();
        perm.set_from_iter(elts, 0);
        perm
    }

    fn set_elt(&mut self, elt: GL, idx: usize) {
        self.rate[idx] = elt;
    }

    fn set_from_slice(&mut self, elts: &[GL], start_idx: usize) {
        let end = start_idx + elts.len();
        self.rate[start_idx..end].copy_from_slice(elts);
    }

    fn set_from_iter<I: IntoIterator<Item = GL>>(&mut self, elts: I, start_idx: usize) {
        for (s, e) in self.rate[start_idx..].iter_mut().zip(elts) {
            *s = e;
        }
    }

    fn permute(&mut self) {
        let mut state = [self.capacity, Fr::zero(), Fr::zero(), Fr::zero()];
        for (s, chunk) in state[1..].iter_mut().zip(self.rate.chunks(GL_PER_FR)) {
            *s = pack(chunk);
        }
        params_t4().permute(&mut state);
        self.capacity = state[0];
        for (out, y) in self.rate.chunks_mut(GL_PER_FR).zip(&state[1..]) {
            out.copy_from_slice(&unpack_rate(*y));
        }
    }

    fn squeeze(&self) -> &[GL] {
        &self.rate
    }
}

/// Poseidon over BN254 `Fr` as a plonky2 hasher for Goldilocks (see the module documentation).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct PoseidonBn254Hash;

/// The sponge of `hash_no_pad` on `Fr` elements already packed, for `n` Goldilocks inputs.
pub fn sponge_hash_packed(packed: &[Fr], n: usize) -> Fr {
    let mut state = [Fr::from(BigInt::new([0, n as u64, 0, 0])), Fr::zero(), Fr::zero(), Fr::zero()];
    let params = params_t4();
    if packed.is_empty() {
        params.permute(&mut state);
    }
    for chunk in packed.chunks(FR_RATE) {
        for (s, x) in state[1..].iter_mut().zip(chunk) {
            *s += x;
        }
        params.permute(&mut state);
    }
    state[1]
}

impl Hasher<GL> for PoseidonBn254Hash {
    const HASH_SIZE: usize = 32;
    type Hash = PoseidonBn254HashOut;
    type Permutation = PoseidonBn254Permutation;

    fn hash_no_pad(input: &[GL]) -> Self::Hash {
        let packed: Vec<Fr> = input.chunks(GL_PER_FR).map(pack).collect();
        PoseidonBn254HashOut(sponge_hash_packed(&packed, input.len()))
    }

    fn hash_or_noop(inputs: &[GL]) -> Self::Hash {
        if inputs.len() <= GL_PER_FR {
            PoseidonBn254HashOut(pack(inputs))
        } else {
            Self::hash_no_pad(inputs)
        }
    }

    fn two_to_one(left: Self::Hash, right: Self::Hash) -> Self::Hash {
        PoseidonBn254HashOut(poseidon2(left.0, right.0))
    }
}

/// plonky2 over Goldilocks (`D = 2`) with Poseidon-BN254 for Merkle trees and Fiat–Shamir. The
/// inner hasher (the public-input hash, computed inside the circuit) stays Goldilocks Poseidon.
#[derive(Debug, Copy, Clone, Default, Eq, PartialEq, Serialize)]
pub struct PoseidonBn254GoldilocksConfig;

impl GenericConfig<2> for PoseidonBn254GoldilocksConfig {
    type F = GL;
    type FE = QuadraticExtension<GL>;
    type Hasher = PoseidonBn254Hash;
    type InnerHasher = PoseidonHash;
}

#[cfg(test)]
mod tests {
    use super::*;
    use plonky2::field::types::Sample;
    use plonky2::hash::merkle_proofs::verify_merkle_proof_to_cap;
    use plonky2::hash::merkle_tree::MerkleTree;
    use plonky2::iop::challenger::Challenger;
    use plonky2::iop::witness::{PartialWitness, WitnessWrite};
    use plonky2::plonk::circuit_builder::CircuitBuilder;
    use plonky2::plonk::circuit_data::CircuitConfig;

    type C = PoseidonBn254GoldilocksConfig;
    const D: usize = 2;

    #[test]
    fn packing_is_injective_and_limbs_round_trip() {
        let max = GL::NEG_ONE;
        let x = pack(&[max, max, max]);
        let limbs = x.into_bigint().0;
        assert_eq!(limbs, [max.0, max.0, max.0, 0]);
        // Hash limbs recompose to the element.
        let h = -Fr::from(12345u64);
        let ls = hash_to_goldilocks(h);
        let mut acc = Fr::zero();
        for l in ls.iter().rev() {
            acc = acc * Fr::from(1u128 << HASH_LIMB_BITS) + Fr::from(l.to_canonical_u64());
        }
        assert_eq!(acc, h);
        assert!(ls[HASH_GL_LIMBS - 1].to_canonical_u64() < 4);
        let bytes = PoseidonBn254HashOut(h).to_le_bytes();
        assert_eq!(PoseidonBn254HashOut::from_le_bytes_canonical(&bytes), Some(PoseidonBn254HashOut(h)));
        assert_eq!(PoseidonBn254HashOut::from_bytes(&bytes), PoseidonBn254HashOut(h));
        assert_eq!(PoseidonBn254HashOut::from_le_bytes_canonical(&[0xff; 32]), None);
    }

    #[test]
    fn hash_separates_lengths_and_inputs() {
        let xs: Vec<GL> = (0..20).map(GL::from_canonical_u64).collect();
        let h = |s: &[GL]| PoseidonBn254Hash::hash_no_pad(s);
        assert_ne!(h(&xs[..10]), h(&xs[..11]));
        let mut ys = xs.clone();
        ys[19] = GL::ONE;
        assert_ne!(h(&xs), h(&ys));
        // `0` appended to a chunk packs to the same Fr element: only the length tells them apart.
        let mut zs = xs[..10].to_vec();
        zs.push(GL::ZERO);
        assert_ne!(h(&xs[..10]), h(&zs));
    }

    #[test]
    fn merkle_tree_with_bn254_caps() {
        let leaves: Vec<Vec<GL>> = (0..16).map(|_| GL::rand_vec(7)).collect();
        let tree = MerkleTree::<GL, PoseidonBn254Hash>::new(leaves.clone(), 1);
        for (i, leaf) in leaves.iter().enumerate() {
            let proof = tree.prove(i);
            verify_merkle_proof_to_cap(leaf.clone(), i, &tree.cap, &proof).unwrap();
        }
        let mut bad = leaves[3].clone();
        bad[0] += GL::ONE;
        assert!(verify_merkle_proof_to_cap(bad, 3, &tree.cap, &tree.prove(3)).is_err());
    }

    /// A small circuit proved and verified natively with the Poseidon-BN254 config; a proof with
    /// a changed public input or opening is rejected.
    #[test]
    fn prove_and_verify_small_circuit() {
        // The standard configuration with 4 instead of 16 proof-of-work bits: grinding costs one
        // BN254 permutation per try, and the test should stay fast.
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.proof_of_work_bits = 4;
        config.security_bits = 88;
        let mut builder = CircuitBuilder::<GL, D>::new(config);
        // x^(2^10) by repeated squaring, plus a Poseidon (Goldilocks) hash gate for good measure.
        let x = builder.add_virtual_target();
        builder.register_public_input(x);
        let mut y = x;
        for _ in 0..10 {
            y = builder.mul(y, y);
        }
        builder.register_public_input(y);
        let h = builder.hash_n_to_hash_no_pad::<PoseidonHash>(vec![x, y]);
        builder.register_public_inputs(&h.elements);
        let data = builder.build::<C>();

        let mut pw = PartialWitness::new();
        pw.set_target(x, GL::from_canonical_u64(3)).unwrap();
        let proof = data.prove(pw).unwrap();
        assert_eq!(proof.public_inputs[1], GL::from_canonical_u64(3).exp_u64(1 << 10));
        data.verify(proof.clone()).unwrap();

        let mut bad = proof.clone();
        bad.public_inputs[0] = GL::from_canonical_u64(4);
        assert!(data.verify(bad).is_err());
        let mut bad = proof.clone();
        bad.proof.openings.wires[0] += QuadraticExtension::<GL>::ONE;
        assert!(data.verify(bad).is_err());

        // Serialization round trip through plonky2's byte format (hashes as 32 bytes).
        let bytes = proof.to_bytes();
        let back = plonky2::plonk::proof::ProofWithPublicInputs::<GL, C, D>::from_bytes(bytes, &data.common).unwrap();
        assert_eq!(back, proof);
    }

    /// The challenger squeezes different challenges after different observations, and the
    /// capacity carries the transcript across permutations.
    #[test]
    fn challenger_binds_transcript() {
        let mut a = Challenger::<GL, PoseidonBn254Hash>::new();
        let mut b = Challenger::<GL, PoseidonBn254Hash>::new();
        let xs: Vec<GL> = (0..20).map(GL::from_canonical_u64).collect();
        a.observe_elements(&xs);
        let mut ys = xs.clone();
        ys[0] = GL::ONE + ys[0];
        b.observe_elements(&ys);
        // Element 0 went in the first permutation; only the capacity carries it to the third.
        assert_ne!(a.get_n_challenges(4), b.get_n_challenges(4));
    }
}

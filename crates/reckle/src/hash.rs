//! Native hashing: leaf hashes, node hashes and the canonical-hash rule of §3.1.
//!
//! These are the functions a verifier runs; the circuits in [`crate::circuits`] compute
//! exactly the same values in-circuit.

use plonky2::field::types::{Field, Field64, PrimeField64};
use plonky2::hash::hash_types::HashOut;
use plonky2::hash::poseidon::PoseidonHash;
use plonky2::plonk::config::Hasher;

use crate::{Error, F};

/// Domain tag hashed into every leaf ("leaf" in ASCII), separating leaves from internal nodes.
pub const LEAF_TAG: u64 = 0x6c65_6166;

/// A 4-element Poseidon digest (Merkle hash `C_v` or canonical hash `d_v`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Digest(pub [u64; 4]);

impl Digest {
    /// The all-zero digest: the canonical hash of a node with no batch leaf below it.
    pub const ZERO: Digest = Digest([0; 4]);

    pub fn is_zero(&self) -> bool {
        self.0 == [0; 4]
    }

    pub fn from_hash(h: HashOut<F>) -> Self {
        Digest(h.elements.map(|e| e.to_canonical_u64()))
    }

    pub fn to_hash(self) -> HashOut<F> {
        HashOut { elements: self.0.map(F::from_canonical_u64) }
    }

    /// Parses four canonical field elements; rejects values `≥ p`.
    pub fn from_elements(e: [u64; 4]) -> Result<Self, Error> {
        if e.iter().any(|&x| x >= F::ORDER) {
            return Err(Error::Malformed("digest element is not a canonical Goldilocks element".into()));
        }
        Ok(Digest(e))
    }

    /// 64 hex digits (four big-endian 16-digit words).
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|w| format!("{w:016x}")).collect()
    }

    pub fn from_hex(s: &str) -> Result<Self, Error> {
        let s = s.strip_prefix("0x").unwrap_or(s);
        if s.len() != 64 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(Error::Malformed(format!("digest must be 64 hex digits, got {s:?}")));
        }
        let mut e = [0u64; 4];
        for (i, w) in e.iter_mut().enumerate() {
            *w = u64::from_str_radix(&s[16 * i..16 * i + 16], 16)
                .map_err(|err| Error::Malformed(format!("digest: {err}")))?;
        }
        Self::from_elements(e)
    }
}

/// Digests serialize as their 64-digit hex form, so JSON task inputs stay readable.
impl serde::Serialize for Digest {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_hex())
    }
}

impl<'de> serde::Deserialize<'de> for Digest {
    fn deserialize<De: serde::Deserializer<'de>>(d: De) -> Result<Self, De::Error> {
        let s = <String as serde::Deserialize>::deserialize(d)?;
        Digest::from_hex(&s).map_err(serde::de::Error::custom)
    }
}

impl std::fmt::Display for Digest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// Splits a value into its 32-bit limbs `(lo, hi)`.
pub fn limbs(value: u64) -> (u64, u64) {
    (value & 0xffff_ffff, value >> 32)
}

/// `C_leaf = H(TAG ‖ index ‖ lo ‖ hi)`.
pub fn leaf_hash(index: u64, value: u64) -> Digest {
    let (lo, hi) = limbs(value);
    let input = [LEAF_TAG, index, lo, hi].map(F::from_canonical_u64);
    Digest::from_hash(PoseidonHash::hash_no_pad(&input))
}

/// `H(x ‖ y)` on two digests (Merkle hash of a node, or canonical hash of a node whose two
/// children both have batch leaves).
pub fn hash_pair(x: &Digest, y: &Digest) -> Digest {
    let mut input = [F::ZERO; 8];
    for i in 0..4 {
        input[i] = F::from_canonical_u64(x.0[i]);
        input[4 + i] = F::from_canonical_u64(y.0[i]);
    }
    Digest::from_hash(PoseidonHash::hash_no_pad(&input))
}

/// The canonical-hash rule of §3.1 for an internal node: `H(d_L ‖ d_R)` if both are non-zero,
/// otherwise `d_L + d_R` (element-wise in the field; one of them is zero).
pub fn canonical_combine(d_l: &Digest, d_r: &Digest) -> Digest {
    if !d_l.is_zero() && !d_r.is_zero() {
        hash_pair(d_l, d_r)
    } else {
        let mut e = [0u64; 4];
        for i in 0..4 {
            e[i] = (F::from_canonical_u64(d_l.0[i]) + F::from_canonical_u64(d_r.0[i])).to_canonical_u64();
        }
        Digest(e)
    }
}

/// Canonical digest `d = d(root, I)` of a batch, computed from its `(index, value)` pairs
/// in `O(|I| · ℓ)` hashes. Indices must be distinct and `< 2^log_n` (checked).
pub fn canonical_digest(log_n: u32, batch: &[(u64, u64)]) -> Result<Digest, Error> {
    let mut level: Vec<(u64, Digest)> = Vec::with_capacity(batch.len());
    let n = 1u64.checked_shl(log_n).unwrap_or(0);
    for &(i, v) in batch {
        if log_n < 64 && i >= n {
            return Err(Error::input(format!("batch index {i} is outside the tree of {n} leaves")));
        }
        level.push((i, leaf_hash(i, v)));
    }
    level.sort_by_key(|(i, _)| *i);
    if level.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(Error::input("batch indices must be distinct"));
    }
    if level.is_empty() {
        return Ok(Digest::ZERO);
    }
    for _ in 0..log_n {
        let mut next: Vec<(u64, Digest)> = Vec::with_capacity(level.len());
        let mut k = 0;
        while k < level.len() {
            let (i, d) = level[k];
            let parent = i >> 1;
            if i & 1 == 0 && k + 1 < level.len() && level[k + 1].0 == i + 1 {
                next.push((parent, canonical_combine(&d, &level[k + 1].1)));
                k += 2;
            } else if i & 1 == 0 {
                next.push((parent, canonical_combine(&d, &Digest::ZERO)));
                k += 1;
            } else {
                next.push((parent, canonical_combine(&Digest::ZERO, &d)));
                k += 1;
            }
        }
        level = next;
    }
    Ok(level[0].1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_leaf_digest_is_its_leaf_hash() {
        // With one batch leaf every ancestor adds zero: d = C_leaf.
        assert_eq!(canonical_digest(4, &[(5, 9)]).unwrap(), leaf_hash(5, 9));
    }

    #[test]
    fn digest_depends_on_values_and_indices() {
        let a = canonical_digest(4, &[(1, 7), (2, 8)]).unwrap();
        assert_ne!(a, canonical_digest(4, &[(1, 7), (2, 9)]).unwrap());
        assert_ne!(a, canonical_digest(4, &[(1, 7), (3, 8)]).unwrap());
        // Order of the input list does not matter.
        assert_eq!(a, canonical_digest(4, &[(2, 8), (1, 7)]).unwrap());
    }

    #[test]
    fn digest_rejects_bad_batches() {
        assert!(canonical_digest(3, &[(8, 1)]).is_err());
        assert!(canonical_digest(3, &[(1, 1), (1, 2)]).is_err());
    }

    #[test]
    fn hex_round_trip() {
        let d = leaf_hash(1, 2);
        assert_eq!(Digest::from_hex(&d.to_hex()).unwrap(), d);
        let json = serde_json::to_string(&d).unwrap();
        assert_eq!(serde_json::from_str::<Digest>(&json).unwrap(), d);
        assert!(serde_json::from_str::<Digest>("\"00\"").is_err());
        assert!(Digest::from_hex("zz").is_err());
        assert!(Digest::from_hex(&"f".repeat(64)).is_err()); // not canonical
    }
}

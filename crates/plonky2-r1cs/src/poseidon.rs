//! Poseidon over BN254's scalar field `Fr`, native.
//!
//! The parameter sets are the standard ones for a 254-bit prime at 128-bit security, the same as
//! circomlib's `Poseidon(n)` and the Poseidon authors' reference instances
//! `poseidonperm_x5_254_3` / `poseidonperm_x5_254_4` (Grassi, Khovratovich, Rechberger, Roy,
//! Schofnegger, *Poseidon: A New Hash Function for Zero-Knowledge Proof Systems*, USENIX Security
//! 2021, §4 and Table 2):
//!
//! | width `t` | S-box | `R_F` | `R_P` | used for |
//! |---|---|---|---|---|
//! | 3 | `x^5` | 8 | 57 | two-to-one compression (Merkle nodes), [`poseidon2`] |
//! | 4 | `x^5` | 8 | 56 | the sponge of [`crate::hasher`] (rate 3, capacity 1) |
//!
//! Round constants and the MDS matrix are not copied from anywhere: they are generated when first
//! used by the paper's Grain LFSR procedure (the reference script `generate_parameters_grain.sage`
//! with field = 1, S-box = 0, `n = 254`, `t`, `R_F`, `R_P`), which `ark-crypto-primitives`
//! implements as [`find_poseidon_ark_and_mds`]; the first Cauchy matrix drawn is the one used (no
//! matrix is skipped), as in the reference output for BN254. The known-answer tests below check
//! the whole permutation against the reference test vectors (`test_vectors.txt` of the reference
//! implementation for `t = 3`; circomlib's output for `t = 4`).
//!
//! A round is `ARK` (add the round's constants), `S-box` (`x^5` on every element in a full round,
//! on element 0 only in a partial round), `MDS` (multiply by the matrix); `R_F/2` full rounds, then
//! `R_P` partial rounds, then `R_F/2` full rounds.

use std::sync::OnceLock;

use ark_bn254::Fr;
use ark_crypto_primitives::sponge::poseidon::find_poseidon_ark_and_mds;
use ark_ff::{Field, PrimeField, Zero};

/// The S-box exponent `α` (`x^α`); 5 is the smallest `α` with `gcd(α, r − 1) = 1` for BN254.
pub const ALPHA: u64 = 5;
/// Number of full rounds `R_F` (half before, half after the partial rounds).
pub const FULL_ROUNDS: usize = 8;

/// One Poseidon instance over BN254 `Fr`: width `t`, `R_F` full and `R_P` partial rounds.
#[derive(Clone, Debug)]
pub struct PoseidonParams {
    /// State width `t`.
    pub t: usize,
    /// `R_F`.
    pub full_rounds: usize,
    /// `R_P`.
    pub partial_rounds: usize,
    /// Round constants, `ark[round][i]` for `round < R_F + R_P`, `i < t`.
    pub ark: Vec<Vec<Fr>>,
    /// The `t × t` MDS matrix; the linear layer maps `s` to `M·s`.
    pub mds: Vec<Vec<Fr>>,
}

impl PoseidonParams {
    /// Generates the instance with the Grain LFSR (see the module documentation).
    pub fn generate(t: usize, full_rounds: usize, partial_rounds: usize) -> Self {
        let (ark, mds) = find_poseidon_ark_and_mds::<Fr>(
            Fr::MODULUS_BIT_SIZE as u64,
            t - 1,
            full_rounds as u64,
            partial_rounds as u64,
            0,
        );
        Self { t, full_rounds, partial_rounds, ark, mds }
    }

    /// Total number of rounds `R_F + R_P`.
    pub fn rounds(&self) -> usize {
        self.full_rounds + self.partial_rounds
    }

    /// Whether round `round` is a full round.
    pub fn is_full_round(&self, round: usize) -> bool {
        let half = self.full_rounds / 2;
        round < half || round >= half + self.partial_rounds
    }

    /// The Poseidon permutation, in place. `state.len()` must be `t`.
    pub fn permute(&self, state: &mut [Fr]) {
        assert_eq!(state.len(), self.t, "Poseidon state of the wrong width");
        match self.t {
            3 => self.permute_fixed::<3>(state.try_into().expect("width 3")),
            4 => self.permute_fixed::<4>(state.try_into().expect("width 4")),
            5 => self.permute_fixed::<5>(state.try_into().expect("width 5")),
            _ => self.permute_generic(state),
        }
    }

    /// The permutation for a width known at compile time: the state and the matrix rows are
    /// arrays, and each row times the state is one `sum_of_products` (Montgomery products summed
    /// before a single reduction).
    fn permute_fixed<const T: usize>(&self, state: &mut [Fr; T]) {
        let mds: [[Fr; T]; T] = core::array::from_fn(|i| core::array::from_fn(|j| self.mds[i][j]));
        for round in 0..self.rounds() {
            for (s, c) in state.iter_mut().zip(&self.ark[round]) {
                *s += c;
            }
            if self.is_full_round(round) {
                state.iter_mut().for_each(|s| *s = sbox(*s));
            } else {
                state[0] = sbox(state[0]);
            }
            *state = core::array::from_fn(|i| Fr::sum_of_products(&mds[i], state));
        }
    }

    /// The textbook permutation for any width (the reference the fixed-width path is tested against).
    pub fn permute_generic(&self, state: &mut [Fr]) {
        let mut next = vec![Fr::zero(); self.t];
        for round in 0..self.rounds() {
            for (s, c) in state.iter_mut().zip(&self.ark[round]) {
                *s += c;
            }
            if self.is_full_round(round) {
                state.iter_mut().for_each(|s| *s = sbox(*s));
            } else {
                state[0] = sbox(state[0]);
            }
            for (row, out) in self.mds.iter().zip(next.iter_mut()) {
                *out = row.iter().zip(state.iter()).map(|(m, s)| *m * s).sum();
            }
            state.copy_from_slice(&next);
        }
    }
}

/// `x^5`.
#[inline]
pub fn sbox(x: Fr) -> Fr {
    let x2 = x.square();
    x2.square() * x
}

/// The width-3 instance (`R_P = 57`).
pub fn params_t3() -> &'static PoseidonParams {
    static P: OnceLock<PoseidonParams> = OnceLock::new();
    P.get_or_init(|| PoseidonParams::generate(3, FULL_ROUNDS, 57))
}

/// The width-4 instance (`R_P = 56`).
pub fn params_t4() -> &'static PoseidonParams {
    static P: OnceLock<PoseidonParams> = OnceLock::new();
    P.get_or_init(|| PoseidonParams::generate(4, FULL_ROUNDS, 56))
}

/// circomlib's `Poseidon(2)`: element 0 of the width-3 permutation of `(0, a, b)`. This is the
/// two-to-one compression of the plonky2 hasher ([`crate::hasher`]), so a Merkle node equals
/// circomlib's hash of its two children.
pub fn poseidon2(a: Fr, b: Fr) -> Fr {
    let mut s = [Fr::zero(), a, b];
    params_t3().permute(&mut s);
    s[0]
}

/// Field element from a big-endian hex string (`0x…`); for tests and constants.
pub fn fr_from_hex(hex: &str) -> Fr {
    let hex = hex.trim_start_matches("0x");
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit"))
        .collect();
    Fr::from_be_bytes_mod_order(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_crypto_primitives::sponge::poseidon::{PoseidonConfig, PoseidonSponge};
    use ark_crypto_primitives::sponge::{CryptographicSponge, FieldBasedCryptographicSponge};
    use ark_std::UniformRand;

    fn state(xs: &[u64]) -> Vec<Fr> {
        xs.iter().map(|&x| Fr::from(x)).collect()
    }

    /// `poseidonperm_x5_254_3` from the reference implementation's `test_vectors.txt`.
    #[test]
    fn known_answer_t3() {
        let mut s = state(&[0, 1, 2]);
        params_t3().permute(&mut s);
        assert_eq!(
            s,
            vec![
                fr_from_hex("0x115cc0f5e7d690413df64c6b9662e9cf2a3617f2743245519e19607a4417189a"),
                fr_from_hex("0x0fca49b798923ab0239de1c9e7a4a9a2210312b6a2f616d18b5a87f9b628ae29"),
                fr_from_hex("0x0e7ae82e40091e63cbd4f16a6d16310b3729d4b6e138fcf54110e2867045a30c"),
            ]
        );
        // circomlib: Poseidon([1, 2]).
        assert_eq!(
            poseidon2(Fr::from(1u64), Fr::from(2u64)),
            fr_from_hex("0x115cc0f5e7d690413df64c6b9662e9cf2a3617f2743245519e19607a4417189a")
        );
    }

    /// circomlib's width-4 instance on `(0, 1, 2, 3)` (its `Poseidon([1, 2, 3])` is element 0).
    #[test]
    fn known_answer_t4() {
        let mut s = state(&[0, 1, 2, 3]);
        params_t4().permute(&mut s);
        assert_eq!(
            s,
            vec![
                fr_from_hex("0x0e7732d89e6939c0ff03d5e58dab6302f3230e269dc5b968f725df34ab36d732"),
                fr_from_hex("0x07b0b86b41ec7fdfe6c17ee6ccdddce4e47e748e493e542f9a435b0dde022a0d"),
                fr_from_hex("0x04362e50fcc8be421898d47ace20eab18b0a6efab0e12ade49f2df609fec4209"),
                fr_from_hex("0x1a779bd9781d3a8354eae5ed74e7fa44fa0e458e45a1407524bddf3b9f2bf2d7"),
            ]
        );
    }

    /// The array-based permutation equals the textbook one.
    #[test]
    fn fixed_width_equals_generic() {
        let mut rng = ark_std::test_rng();
        for p in [params_t3(), params_t4()] {
            let x: Vec<Fr> = (0..p.t).map(|_| Fr::rand(&mut rng)).collect();
            let (mut a, mut b) = (x.clone(), x);
            p.permute(&mut a);
            p.permute_generic(&mut b);
            assert_eq!(a, b);
        }
    }

    /// The permutation agrees with ark-crypto-primitives' `PoseidonSponge` (whose permutation is
    /// private: one absorb of a full rate, then a squeeze, runs exactly one permutation on
    /// `(capacity = 0, inputs)` and returns the rate part).
    #[test]
    fn agrees_with_ark_sponge() {
        let mut rng = ark_std::test_rng();
        for p in [params_t3(), params_t4()] {
            let cfg = PoseidonConfig::new(
                p.full_rounds,
                p.partial_rounds,
                ALPHA,
                p.mds.clone(),
                p.ark.clone(),
                p.t - 1,
                1,
            );
            let inputs: Vec<Fr> = (0..p.t - 1).map(|_| Fr::rand(&mut rng)).collect();
            let mut sponge = PoseidonSponge::new(&cfg);
            sponge.absorb(&inputs);
            let out = sponge.squeeze_native_field_elements(p.t - 1);
            let mut s = vec![Fr::zero()];
            s.extend_from_slice(&inputs);
            p.permute(&mut s);
            assert_eq!(out, s[1..].to_vec());
        }
    }
}

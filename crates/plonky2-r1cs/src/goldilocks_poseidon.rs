//! plonky2's Goldilocks Poseidon (width 12, `x^7`, 8 full and 22 partial rounds) emulated in
//! R1CS over BN254 `Fr`, for the one Goldilocks hash the wrap must recompute: the hash of the
//! last proof's public inputs (`GenericConfig::InnerHasher`), which the challenger observes.
//!
//! The constants are plonky2's own ([`ALL_ROUND_CONSTANTS`], the MDS matrix `circ + diag` of the
//! [`Poseidon`] trait); the rounds are plonky2's `poseidon_naive` (which plonky2 tests equal to its
//! fast form). With lazy reduction ([`crate::goldilocks`]) the linear layers are free (the MDS
//! entries are below 2^6) and each S-box is 4 products and 3 reductions: the input, `x²` and `x⁴`
//! are reduced, `x³ = x²·x` and `x⁷ = x³·x⁴` are not (`x⁷ < 2^192`). State elements that only pass
//! through linear layers (the partial rounds) are reduced when their bound passes `2^236`.

use ark_relations::gr1cs::SynthesisError;
use num_bigint::BigUint;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::Field;
use plonky2::hash::poseidon::{
    Poseidon, ALL_ROUND_CONSTANTS, HALF_N_FULL_ROUNDS, N_PARTIAL_ROUNDS, SPONGE_RATE, SPONGE_WIDTH,
};

use crate::goldilocks::GlVar;

type GL = GoldilocksField;

/// Bound above which a state element is reduced before the next round.
const REDUCE_ABOVE_BITS: u64 = 236;

fn sbox7(x: &GlVar) -> Result<GlVar, SynthesisError> {
    let x = if x.bound.bits() > 64 { x.reduce()? } else { x.clone() };
    let x2 = x.mul(&x)?.reduce()?;
    let x3 = x2.mul(&x)?;
    let x4 = x2.mul(&x2)?.reduce()?;
    x3.mul(&x4)
}

fn mds(state: &[GlVar; SPONGE_WIDTH]) -> Result<[GlVar; SPONGE_WIDTH], SynthesisError> {
    let circ = <GL as Poseidon>::MDS_MATRIX_CIRC;
    let diag = <GL as Poseidon>::MDS_MATRIX_DIAG;
    let mut out = Vec::with_capacity(SPONGE_WIDTH);
    for r in 0..SPONGE_WIDTH {
        let mut acc = state[r].mul_const(GL::from_canonical_u64(diag[r]))?;
        for (i, c) in circ.iter().enumerate() {
            acc = acc.add(&state[(i + r) % SPONGE_WIDTH].mul_const(GL::from_canonical_u64(*c))?)?;
        }
        out.push(acc);
    }
    Ok(out.try_into().expect("width 12"))
}

/// plonky2's Poseidon permutation on emulated Goldilocks values; the outputs are unreduced.
pub fn poseidon_permute_var(input: &[GlVar; SPONGE_WIDTH]) -> Result<[GlVar; SPONGE_WIDTH], SynthesisError> {
    let mut state = input.clone();
    let limit = BigUint::from(1u8) << REDUCE_ABOVE_BITS;
    let n_rounds = 2 * HALF_N_FULL_ROUNDS + N_PARTIAL_ROUNDS;
    for round in 0..n_rounds {
        for (i, s) in state.iter_mut().enumerate() {
            if s.bound >= limit {
                *s = s.reduce()?;
            }
            *s = s.add(&GlVar::constant(GL::from_canonical_u64(ALL_ROUND_CONSTANTS[i + SPONGE_WIDTH * round])))?;
        }
        let full = !(HALF_N_FULL_ROUNDS..HALF_N_FULL_ROUNDS + N_PARTIAL_ROUNDS).contains(&round);
        if full {
            for s in state.iter_mut() {
                *s = sbox7(s)?;
            }
        } else {
            state[0] = sbox7(&state[0])?;
        }
        state = mds(&state)?;
    }
    Ok(state)
}

/// plonky2's `PoseidonHash::hash_no_pad` (overwrite-mode sponge, rate 8, 4 outputs), outputs
/// reduced to canonical form (as the challenger observes them).
pub fn poseidon_hash_no_pad_var(inputs: &[GlVar]) -> Result<[GlVar; 4], SynthesisError> {
    let mut state: [GlVar; SPONGE_WIDTH] = core::array::from_fn(|_| GlVar::zero());
    for chunk in inputs.chunks(SPONGE_RATE) {
        for (s, x) in state.iter_mut().zip(chunk) {
            *s = x.clone();
        }
        state = poseidon_permute_var(&state)?;
    }
    if inputs.is_empty() {
        // plonky2 squeezes the all-zero state without permuting.
        return Ok(core::array::from_fn(|_| GlVar::zero()));
    }
    let out: Vec<GlVar> = state[..4].iter().map(|s| s.reduce_canonical()).collect::<Result<_, _>>()?;
    Ok(out.try_into().expect("4 outputs"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bn254::Fr;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::field::types::Sample;
    use plonky2::hash::poseidon::PoseidonHash;
    use plonky2::plonk::config::Hasher;

    #[test]
    fn permutation_matches_plonky2() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let x: [GL; SPONGE_WIDTH] = GL::rand_array();
        let vars: [GlVar; SPONGE_WIDTH] = x.map(|v| GlVar::new_witness(cs.clone(), Some(v)).unwrap());
        let before = cs.num_constraints();
        let out = poseidon_permute_var(&vars).unwrap();
        let cost = cs.num_constraints() - before;
        let expect = <GL as Poseidon>::poseidon(x);
        for (o, e) in out.iter().zip(expect) {
            assert_eq!(o.value().unwrap(), e);
        }
        assert!(cs.is_satisfied().unwrap());
        println!("Goldilocks Poseidon permutation (width 12) emulated in BN254: {cost} constraints");
    }

    #[test]
    fn hash_no_pad_matches_plonky2() {
        for n in [0usize, 3, 8, 11, 17] {
            let cs = ConstraintSystem::<Fr>::new_ref();
            let x = GL::rand_vec(n);
            let vars: Vec<GlVar> = x.iter().map(|v| GlVar::new_witness(cs.clone(), Some(*v)).unwrap()).collect();
            let out = poseidon_hash_no_pad_var(&vars).unwrap();
            let expect = PoseidonHash::hash_no_pad(&x);
            for (o, e) in out.iter().zip(expect.elements) {
                assert!(o.is_canonical());
                assert_eq!(o.value().unwrap(), e);
            }
            assert!(cs.is_satisfied().unwrap());
        }
    }
}

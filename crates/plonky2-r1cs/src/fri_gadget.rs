//! First pieces of plonky2's FRI verifier in R1CS (Goldilocks emulated, see [`crate::goldilocks`]).
//!
//! * [`subgroup_x_var`]: the query point `x = g·ω^{rev(i)}` of query index `i` in the LDE domain
//!   of size `n = 2^{log_n}` (`g` the multiplicative generator, `ω` a primitive `n`-th root of
//!   unity, `rev` the `log_n`-bit reversal), as plonky2's `fri_verifier_query_round` computes it.
//!   Each index bit `b` selects a constant factor `1 + b·(c − 1)` (linear, free); products of
//!   three factors are reduced once.
//! * [`eval_poly_at_base_var`]: `Σ c_k·x^k` for extension coefficients and a base-field `x` (the
//!   final-polynomial check): powers of `x` reduced one by one, the sum accumulated unreduced.

use ark_bn254::Fr;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::SynthesisError;
use num_bigint::BigUint;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::{Field, PrimeField64};

use crate::goldilocks::{GlExtVar, GlVar};

type GL = GoldilocksField;

/// `1 + b·(c − 1)` for a nonzero constant `c`: `c` if `b`, else 1; linear in `b`.
fn select_const(b: &Boolean<Fr>, c: GL) -> GlVar {
    let c = c.to_canonical_u64();
    assert!(c != 0);
    let value = FpVar::from(b.clone()) * Fr::from(c - 1) + Fr::from(1u64);
    GlVar::from_fpvar_unchecked(value, BigUint::from(c))
}

/// `g·ω^{rev(i)}` for the query index `i` given by its `log_n` little-endian bits.
pub fn subgroup_x_var(index_bits: &[Boolean<Fr>], log_n: usize) -> Result<GlVar, SynthesisError> {
    assert_eq!(index_bits.len(), log_n);
    let omega = GL::primitive_root_of_unity(log_n);
    // Bit i of the index is bit (log_n − 1 − i) of rev(i): it selects ω^{2^{log_n − 1 − i}}.
    let mut acc = GlVar::constant(GL::MULTIPLICATIVE_GROUP_GENERATOR);
    for (k, chunk) in index_bits.chunks(3).enumerate() {
        for (j, b) in chunk.iter().enumerate() {
            let i = 3 * k + j;
            acc = acc.mul(&select_const(b, omega.exp_power_of_2(log_n - 1 - i)))?;
        }
        acc = acc.reduce()?;
    }
    Ok(acc)
}

/// `Σ_k c_k·x^k` for extension coefficients `c_k` and a base-field point `x`.
pub fn eval_poly_at_base_var(coeffs: &[GlExtVar], x: &GlVar) -> Result<GlExtVar, SynthesisError> {
    let mut acc = GlExtVar::zero();
    let mut power = GlVar::constant(GL::ONE);
    for (k, c) in coeffs.iter().enumerate() {
        if k > 0 {
            power = power.mul(x)?.reduce()?;
        }
        acc = acc.add(&c.scalar_mul(&power)?)?;
    }
    acc.reduce()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::goldilocks::GLExt;
    use ark_r1cs_std::alloc::AllocVar;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::field::polynomial::PolynomialCoeffs;
    use plonky2::field::types::Sample;

    fn reverse(i: usize, bits: usize) -> usize {
        (0..bits).fold(0, |acc, b| acc | (((i >> b) & 1) << (bits - 1 - b)))
    }

    #[test]
    fn subgroup_x_matches_native() {
        let log_n = 15;
        for index in [0usize, 1, 12345, (1 << log_n) - 1] {
            let cs = ConstraintSystem::<Fr>::new_ref();
            let bits: Vec<Boolean<Fr>> =
                (0..log_n).map(|i| Boolean::new_witness(cs.clone(), || Ok((index >> i) & 1 == 1)).unwrap()).collect();
            let before = cs.num_constraints();
            let x = subgroup_x_var(&bits, log_n).unwrap();
            let cost = cs.num_constraints() - before;
            let expect = GL::MULTIPLICATIVE_GROUP_GENERATOR
                * GL::primitive_root_of_unity(log_n).exp_u64(reverse(index, log_n) as u64);
            assert_eq!(x.value().unwrap(), expect);
            assert!(cs.is_satisfied().unwrap());
            if index == 12345 {
                println!("subgroup x from {log_n} index bits: {cost} constraints");
            }
        }
    }

    #[test]
    fn final_poly_eval_matches_native() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let coeffs: Vec<GLExt> = (0..16).map(|_| GLExt::rand()).collect();
        let x = GL::rand();
        let cv: Vec<GlExtVar> = coeffs.iter().map(|c| GlExtVar::new_witness(cs.clone(), Some(*c)).unwrap()).collect();
        let xv = GlVar::new_witness(cs.clone(), Some(x)).unwrap();
        let before = cs.num_constraints();
        let y = eval_poly_at_base_var(&cv, &xv).unwrap();
        println!("final polynomial of 16 coefficients at a base point: {} constraints", cs.num_constraints() - before);
        assert_eq!(y.value().unwrap(), PolynomialCoeffs::new(coeffs).eval(x.into()));
        assert!(cs.is_satisfied().unwrap());
    }
}

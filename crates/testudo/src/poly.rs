//! Dense multilinear polynomials, given by their evaluations on the boolean hypercube.
//!
//! **Variable order.** A polynomial in `ν` variables `(x_0, …, x_{ν−1})` is stored as the
//! `2^ν` values `f(b)`, `b ∈ {0,1}^ν`, at index `i = Σ_k b_k·2^{ν−1−k}`: `x_0` is the most
//! significant bit of the index (big-endian, as in Spartan). Fixing `x_0 = r` therefore folds
//! the upper half onto the lower half, which is how the sumcheck provers and the PST opening
//! walk the table. (ark-poly's `DenseMultilinearExtension` uses the opposite order, which is
//! why this crate has its own small type.)

use ark_ff::Field;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::Error;

/// A multilinear polynomial `f̃` in `num_vars` variables, by its hypercube evaluations.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct MultilinearPoly<F: Field> {
    num_vars: usize,
    evals: Vec<F>,
}

impl<F: Field> MultilinearPoly<F> {
    /// The polynomial with these hypercube evaluations; `evals.len()` must be `2^num_vars`.
    pub fn new(num_vars: usize, evals: Vec<F>) -> Result<Self, Error> {
        let expected = checked_pow2(num_vars, "num_vars")?;
        if evals.len() != expected {
            return Err(Error::Length {
                field: "multilinear evaluations",
                expected,
                got: evals.len(),
            });
        }
        Ok(Self { num_vars, evals })
    }

    /// The multilinear extension of `values` padded with zeros to the next power of two
    /// (at least one variable's worth is not required: a single value is a constant).
    pub fn from_padded(mut values: Vec<F>) -> Self {
        let len = values.len().max(1).next_power_of_two();
        values.resize(len, F::zero());
        Self {
            num_vars: len.trailing_zeros() as usize,
            evals: values,
        }
    }

    pub fn num_vars(&self) -> usize {
        self.num_vars
    }

    pub fn evals(&self) -> &[F] {
        &self.evals
    }

    /// `f̃(point)` in `O(2^ν)` by folding one variable at a time.
    pub fn evaluate(&self, point: &[F]) -> Result<F, Error> {
        if point.len() != self.num_vars {
            return Err(Error::Length {
                field: "evaluation point",
                expected: self.num_vars,
                got: point.len(),
            });
        }
        let mut table = self.evals.clone();
        for &r in point {
            fold_first(&mut table, r);
        }
        Ok(table[0])
    }
}

/// `2^n`, or an error naming `field` when it does not fit a `usize`.
pub(crate) fn checked_pow2(n: usize, field: &'static str) -> Result<usize, Error> {
    if n < usize::BITS as usize - 1 {
        Ok(1usize << n)
    } else {
        Err(Error::TooLarge { field, value: n })
    }
}

/// Fixes the first (most significant) variable of a table to `r`, halving it in place:
/// `t'[i] = t[i] + r·(t[i + h] − t[i])` with `h = len/2`.
pub(crate) fn fold_first<F: Field>(table: &mut Vec<F>, r: F) {
    let half = table.len() / 2;
    let (lo, hi) = table.split_at_mut(half);
    for (l, h) in lo.iter_mut().zip(hi.iter()) {
        *l += r * (*h - *l);
    }
    table.truncate(half);
}

/// The table of `eq(r, b) = Π_k (r_k·b_k + (1 − r_k)(1 − b_k))` over `b ∈ {0,1}^{|r|}`, in
/// this crate's big-endian order: entry `i` is `χ_i(r)`, the `i`-th Lagrange basis
/// polynomial at `r`.
pub fn eq_table<F: Field>(r: &[F]) -> Vec<F> {
    let mut table = Vec::with_capacity(1 << r.len());
    table.push(F::one());
    for &rk in r {
        // Appending the next (less significant) bit: each entry e splits into
        // (e·(1 − r_k), e·r_k) at positions (2i, 2i + 1).
        let old = std::mem::take(&mut table);
        table.reserve(old.len() * 2);
        for e in old {
            let hi = e * rk;
            table.push(e - hi);
            table.push(hi);
        }
    }
    table
}

/// `eq(a, b)` for two points of the same length.
pub fn eq_eval<F: Field>(a: &[F], b: &[F]) -> F {
    debug_assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(&x, &y)| x * y + (F::one() - x) * (F::one() - y))
        .product()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;
    use ark_ff::UniformRand;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn evaluate_on_the_hypercube_reads_the_table() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let evals: Vec<Fr> = (0..8).map(|_| Fr::rand(&mut rng)).collect();
        let f = MultilinearPoly::new(3, evals.clone()).unwrap();
        for (i, e) in evals.iter().enumerate() {
            let bits: Vec<Fr> = (0..3)
                .map(|k| Fr::from(((i >> (2 - k)) & 1) as u64))
                .collect();
            assert_eq!(f.evaluate(&bits).unwrap(), *e);
        }
    }

    #[test]
    fn evaluate_is_the_eq_weighted_sum() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let evals: Vec<Fr> = (0..16).map(|_| Fr::rand(&mut rng)).collect();
        let f = MultilinearPoly::new(4, evals.clone()).unwrap();
        let r: Vec<Fr> = (0..4).map(|_| Fr::rand(&mut rng)).collect();
        let eq = eq_table(&r);
        let direct: Fr = eq.iter().zip(&evals).map(|(a, b)| *a * b).sum();
        assert_eq!(f.evaluate(&r).unwrap(), direct);
        // eq_eval agrees with the table on boolean points.
        let b: Vec<Fr> = [1u64, 0, 1, 1].iter().map(|&x| Fr::from(x)).collect();
        assert_eq!(eq_eval(&r, &b), eq[0b1011]);
    }

    #[test]
    fn bad_lengths_are_errors() {
        assert!(matches!(
            MultilinearPoly::new(2, vec![Fr::from(1u64); 3]),
            Err(Error::Length { .. })
        ));
        let f = MultilinearPoly::new(1, vec![Fr::from(1u64); 2]).unwrap();
        assert!(matches!(f.evaluate(&[]), Err(Error::Length { .. })));
        assert!(matches!(
            MultilinearPoly::<Fr>::new(200, vec![]),
            Err(Error::TooLarge { .. })
        ));
    }
}

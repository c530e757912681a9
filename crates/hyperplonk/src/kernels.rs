//! The prover's hot kernels behind one boundary, so that an accelerator backend (zkSpeed's
//! MSM, SumCheck, MLE-update and FracMLE units; a GPU) can replace them one by one: every
//! prover step outside this module calls these functions and nothing else that is heavy.
//!
//! - [`msm`] / [`commit`]: a multi-scalar multiplication, and a PST commitment (one MSM
//!   against the key's Lagrange level for the polynomial's size).
//! - [`msm_sparse`] / [`commit_sparse`]: the same for a table whose scalars are mostly 0 or 1
//!   (the witness columns; zkSpeed §3.3.1, "Sparse MSMs"): zeros are skipped, the bases of
//!   ones are summed with plain point additions, and only the remaining scalars go to the
//!   bucket (Pippenger) MSM.
//! - [`sumcheck_round`]: one round's message `p(t) = Σ_i G(f(t, i))`, `t = 0 … d`.
//! - [`fix_first_variable`]: the MLE update `t'[i] = t[i] + r·(t[i + h] − t[i])` after a round.
//! - [`batch_invert`]: Montgomery's batched inversion (the fraction MLE's `1/D`).
//! - [`eq_table`]: the `eq(·, r)` table (the "build MLE" tree).
//! - [`evaluate_many`]: several MLEs at one point (the batch evaluations: one `eq` table,
//!   then one inner product per MLE).
//!
//! (The PST opening's quotient MSMs stay inside [`testudo::pst`].)

use ark_ec::pairing::Pairing;
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_ff::{Field, PrimeField, Zero};
use testudo::pst::{PstCommitment, PstCommitterKey};

use crate::Error;

#[cfg(feature = "parallel")]
use rayon::prelude::*;

/// `Σ_i s_i·B_i` in G1. `bases` and `scalars` have the same length.
pub fn msm<E: Pairing>(bases: &[E::G1Affine], scalars: &[E::ScalarField]) -> E::G1 {
    debug_assert_eq!(bases.len(), scalars.len());
    E::G1::msm_unchecked(bases, scalars)
}

/// [`msm`] for scalars that are mostly 0 or 1: `Σ_{s_i = 1} B_i + MSM((B_i, s_i))_{s_i ∉ {0,1}}`.
/// One pass classifies the scalars; the bases of the ones are summed by `msm_u1` (plain
/// additions into one bucket per thread, no scalar decomposition), and the bucket MSM sees
/// only the other scalars, gathered with their bases.
///
/// (arkworks 0.6's [`VariableBaseMSM::msm_unchecked`] already sorts its scalars by size and
/// adds the 0/±1 ones directly, so against [`msm`] this kernel saves only that sorting and the
/// conversion of every scalar out of Montgomery form: the `sparse_msm` example measures it.)
pub fn msm_sparse<E: Pairing>(bases: &[E::G1Affine], scalars: &[E::ScalarField]) -> E::G1 {
    debug_assert_eq!(bases.len(), scalars.len());
    let len = bases.len().min(scalars.len());
    let one = E::ScalarField::ONE;
    let is_one: Vec<bool> = scalars[..len].iter().map(|s| *s == one).collect();
    let (dense_bases, dense_scalars): (Vec<E::G1Affine>, Vec<E::ScalarField>) = bases[..len]
        .iter()
        .zip(&scalars[..len])
        .filter(|(_, s)| !s.is_zero() && **s != one)
        .map(|(b, s)| (*b, *s))
        .unzip();
    E::G1::msm_u1(&bases[..len], &is_one) + msm::<E>(&dense_bases, &dense_scalars)
}

/// The PST commitment `g^{f(t)}` of the table `evals` (`2^μ` values, `μ ≤ ck.num_vars`).
pub fn commit<E: Pairing>(
    ck: &PstCommitterKey<E>,
    evals: &[E::ScalarField],
) -> Result<PstCommitment<E>, Error> {
    let level = level_for(ck, evals.len())?;
    Ok(PstCommitment(msm::<E>(level, evals).into_affine()))
}

/// [`commit`] with [`msm_sparse`]: the same commitment, faster when most of `evals` are 0 or 1.
pub fn commit_sparse<E: Pairing>(
    ck: &PstCommitterKey<E>,
    evals: &[E::ScalarField],
) -> Result<PstCommitment<E>, Error> {
    let level = level_for(ck, evals.len())?;
    Ok(PstCommitment(msm_sparse::<E>(level, evals).into_affine()))
}

/// The key's Lagrange level for tables of `len` values.
fn level_for<E: Pairing>(ck: &PstCommitterKey<E>, len: usize) -> Result<&[E::G1Affine], Error> {
    ck.levels
        .iter()
        .find(|l| l.len() == len)
        .map(Vec::as_slice)
        .ok_or(Error::SetupTooSmall {
            supported: ck.num_vars,
            needed: len.trailing_zeros() as usize,
        })
}

/// The sumcheck round message for `Σ_{i<h} G(f_1(X, i), …, f_k(X, i))` at `X = 0 … degree`,
/// where `f_j(X, i) = f_j[i] + X·(f_j[i + h] − f_j[i])` and `h` is half the tables' length.
pub fn sumcheck_round<F, G>(tables: &[Vec<F>], degree: usize, combine: &G) -> Vec<F>
where
    F: PrimeField,
    G: Fn(&[F]) -> F + Sync,
{
    let half = tables[0].len() / 2;
    let k = tables.len();
    let chunk = |range: std::ops::Range<usize>| {
        let (mut vals, mut diffs) = (vec![F::zero(); k], vec![F::zero(); k]);
        let mut acc = vec![F::zero(); degree + 1];
        for i in range {
            for (j, t) in tables.iter().enumerate() {
                vals[j] = t[i];
                diffs[j] = t[i + half] - t[i];
            }
            acc[0] += combine(&vals);
            for a in acc.iter_mut().skip(1) {
                for (v, d) in vals.iter_mut().zip(&diffs) {
                    *v += d;
                }
                *a += combine(&vals);
            }
        }
        acc
    };
    let add = |mut a: Vec<F>, b: Vec<F>| {
        for (x, y) in a.iter_mut().zip(b) {
            *x += y;
        }
        a
    };
    #[cfg(feature = "parallel")]
    {
        let step = (half / (4 * rayon::current_num_threads())).max(64);
        (0..half.div_ceil(step))
            .into_par_iter()
            .map(|c| chunk(c * step..((c + 1) * step).min(half)))
            .reduce(|| vec![F::zero(); degree + 1], add)
    }
    #[cfg(not(feature = "parallel"))]
    {
        add(vec![F::zero(); degree + 1], chunk(0..half))
    }
}

/// Fixes the first (most significant) variable of `table` to `r`, halving it.
pub fn fix_first_variable<F: Field>(table: &mut Vec<F>, r: F) {
    let half = table.len() / 2;
    let (lo, hi) = table.split_at_mut(half);
    #[cfg(feature = "parallel")]
    lo.par_iter_mut()
        .zip(hi.par_iter())
        .for_each(|(l, h)| *l += r * (*h - *l));
    #[cfg(not(feature = "parallel"))]
    lo.iter_mut()
        .zip(hi.iter())
        .for_each(|(l, h)| *l += r * (*h - *l));
    table.truncate(half);
}

/// Inverts every element of `values` in place with one field inversion (Montgomery's trick);
/// a zero entry is an error naming its index, and `values` is left unchanged.
pub fn batch_invert<F: Field>(values: &mut [F]) -> Result<(), usize> {
    if let Some(i) = values.iter().position(|v| v.is_zero()) {
        return Err(i);
    }
    ark_ff::batch_inversion(values);
    Ok(())
}

/// The table of `eq(r, b)` over `b ∈ {0,1}^{|r|}`, big-endian order.
pub fn eq_table<F: Field>(r: &[F]) -> Vec<F> {
    testudo::poly::eq_table(r)
}

/// `f_k(z)` for every table `f_k` (each of length `2^|z|`): `Σ_b eq(z, b)·f_k(b)`.
pub fn evaluate_many<F: Field>(tables: &[&[F]], z: &[F]) -> Vec<F> {
    let eq = eq_table(z);
    let dot = |t: &&[F]| -> F {
        debug_assert_eq!(t.len(), eq.len());
        #[cfg(feature = "parallel")]
        {
            t.par_iter().zip(eq.par_iter()).map(|(a, b)| *a * b).sum()
        }
        #[cfg(not(feature = "parallel"))]
        {
            t.iter().zip(&eq).map(|(a, b)| *a * b).sum()
        }
    };
    tables.iter().map(dot).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;
    use ark_ff::UniformRand;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn round_sums_to_the_total_and_fix_matches_evaluation() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let t: Vec<Vec<Fr>> = (0..2)
            .map(|_| (0..1 << 9).map(|_| Fr::rand(&mut rng)).collect())
            .collect();
        let g = |v: &[Fr]| v[0] * v[1];
        let msg = sumcheck_round(&t, 2, &g);
        let total: Fr = (0..1 << 9).map(|i| t[0][i] * t[1][i]).sum();
        assert_eq!(msg[0] + msg[1], total);
        let r = Fr::rand(&mut rng);
        let mut a = t[0].clone();
        fix_first_variable(&mut a, r);
        let poly = testudo::MultilinearPoly::new(9, t[0].clone()).unwrap();
        let rest: Vec<Fr> = (0..8).map(|_| Fr::rand(&mut rng)).collect();
        let mut point = vec![r];
        point.extend(&rest);
        let folded = testudo::MultilinearPoly::new(8, a).unwrap();
        assert_eq!(
            folded.evaluate(&rest).unwrap(),
            poly.evaluate(&point).unwrap()
        );
        assert_eq!(
            evaluate_many(&[t[0].as_slice()], &point),
            vec![poly.evaluate(&point).unwrap()]
        );
        let mut v = vec![Fr::from(2u64), Fr::from(0u64)];
        assert_eq!(batch_invert(&mut v), Err(1));
    }

    #[test]
    fn sparse_msm_equals_the_dense_msm() {
        use ark_bls12_381::{Bls12_381, G1Projective};
        use ark_ec::PrimeGroup;
        use rand::Rng;
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        // Random bases from random multiples of the generator (normalized in one batch).
        let n = 3000;
        let g = G1Projective::generator();
        let bases = G1Projective::normalize_batch(
            &(0..n).map(|_| g * Fr::rand(&mut rng)).collect::<Vec<_>>(),
        );
        let (zero, one) = (Fr::from(0u64), Fr::from(1u64));
        let mixes: Vec<(&str, Vec<Fr>)> = vec![
            ("all zero", vec![zero; n]),
            ("all one", vec![one; n]),
            ("random", (0..n).map(|_| Fr::rand(&mut rng)).collect()),
            (
                "90% in {0, 1}",
                (0..n)
                    .map(|_| match rng.gen_range(0..20) {
                        0..=8 => zero,
                        9..=17 => one,
                        _ => Fr::rand(&mut rng),
                    })
                    .collect(),
            ),
            ("empty", Vec::new()),
        ];
        for (name, scalars) in mixes {
            let b = &bases[..scalars.len()];
            assert_eq!(
                msm_sparse::<Bls12_381>(b, &scalars),
                msm::<Bls12_381>(b, &scalars),
                "{name}"
            );
        }
        // Short tables (one chunk) too.
        let s = [one, zero, Fr::from(5u64)];
        assert_eq!(
            msm_sparse::<Bls12_381>(&bases[..3], &s),
            msm::<Bls12_381>(&bases[..3], &s)
        );
    }
}

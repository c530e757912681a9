//! The sumcheck protocol (§2.4, Fig. 2 of the paper) for sums of the form
//! `Σ_{b ∈ {0,1}^ν} G(f_1(b), …, f_k(b))`, where the `f_i` are multilinear and `G` is a
//! polynomial of total degree `d` (Spartan needs `d = 3` for `eq·(Az·Bz − Cz)` and `d = 2`
//! for `M·z`).
//!
//! Round `j` (`j = 0 … ν−1`): the prover sends the univariate round polynomial
//! `p_j(X) = Σ_{b} G(f(r_0, …, r_{j−1}, X, b))` as its `d + 1` values `p_j(0), …, p_j(d)`;
//! the transcript absorbs them (as integers, [`crate::transcript`]) and squeezes `r_j`.
//! The verifier checks
//! `p_j(0) + p_j(1) = c_j` (with `c_0` the claimed sum) and sets `c_{j+1} = p_j(r_j)`. After
//! the last round the verifier is left to check `c_ν = G(f(r))` itself, by other means (for
//! Spartan: the claimed evaluations and the polynomial commitment).
//!
//! Variables are bound most significant first (see [`crate::poly`]), so `r = (r_0, …, r_{ν−1})`
//! is a point in the same order as every other point in this crate.

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::poly::fold_first;
use crate::transcript::Transcript;
use crate::Error;

#[cfg(feature = "r1cs")]
pub mod constraints;

/// The prover's messages: round `j`'s polynomial as its values at `0, 1, …, d`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct SumcheckProof<F: PrimeField> {
    pub rounds: Vec<Vec<F>>,
}

/// What the prover is left with: the challenges and each `f_i(r)`.
pub struct ProverOutput<F: PrimeField> {
    pub proof: SumcheckProof<F>,
    pub point: Vec<F>,
    pub final_evals: Vec<F>,
}

/// Proves `Σ_b G(f_1(b), …, f_k(b))`. Every table in `polys` must have the same power-of-two
/// length `2^ν`; `degree` bounds `G`'s total degree. `combine` is `G`.
pub fn prove<F, Q, G>(
    polys: Vec<Vec<F>>,
    degree: usize,
    combine: G,
    transcript: &mut Transcript<F, Q>,
) -> ProverOutput<F>
where
    F: PrimeField,
    Q: PrimeField + Absorb,
    G: Fn(&[F]) -> F + Sync,
{
    let mut polys = polys;
    let len = polys.first().map_or(1, Vec::len);
    debug_assert!(len.is_power_of_two() && polys.iter().all(|p| p.len() == len));
    let num_rounds = len.trailing_zeros() as usize;
    let mut rounds = Vec::with_capacity(num_rounds);
    let mut point = Vec::with_capacity(num_rounds);
    for _ in 0..num_rounds {
        let evals = round_evals(&polys, degree, &combine);
        transcript.absorb_slice(&evals);
        let r = transcript.challenge();
        rounds.push(evals);
        point.push(r);
        for p in polys.iter_mut() {
            fold_first(p, r);
        }
    }
    let final_evals = polys.iter().map(|p| p[0]).collect();
    ProverOutput {
        proof: SumcheckProof { rounds },
        point,
        final_evals,
    }
}

/// `p(t) = Σ_{i < h} G(f(t, i))` for `t = 0 … degree`, where `f(t, i) = f[i] + t·(f[i+h] − f[i])`.
fn round_evals<F, G>(polys: &[Vec<F>], degree: usize, combine: &G) -> Vec<F>
where
    F: PrimeField,
    G: Fn(&[F]) -> F + Sync,
{
    let half = polys[0].len() / 2;
    let k = polys.len();
    // One term: the values of G along the line through (0, i) and (1, i), at t = 0..=degree.
    let term = |i: usize, vals: &mut [F], diffs: &mut [F], acc: &mut [F]| {
        for (j, p) in polys.iter().enumerate() {
            vals[j] = p[i];
            diffs[j] = p[i + half] - p[i];
        }
        acc[0] += combine(vals);
        for a in acc.iter_mut().skip(1) {
            for (v, d) in vals.iter_mut().zip(diffs.iter()) {
                *v += d;
            }
            *a += combine(vals);
        }
    };
    let zero = || {
        (
            vec![F::zero(); k],
            vec![F::zero(); k],
            vec![F::zero(); degree + 1],
        )
    };

    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        (0..half)
            .into_par_iter()
            .fold(zero, |(mut v, mut d, mut acc), i| {
                term(i, &mut v, &mut d, &mut acc);
                (v, d, acc)
            })
            .map(|(_, _, acc)| acc)
            .reduce(
                || vec![F::zero(); degree + 1],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x += y;
                    }
                    a
                },
            )
    }
    #[cfg(not(feature = "parallel"))]
    {
        let (mut v, mut d, mut acc) = zero();
        for i in 0..half {
            term(i, &mut v, &mut d, &mut acc);
        }
        acc
    }
}

/// Checks a sumcheck proof of `claim` over `num_rounds` variables with round polynomials of
/// degree `degree`, absorbing the rounds into `transcript` as the prover did. Returns the
/// final claim `c_ν` (which the caller must check against `G(f(r))`) and the point `r`.
/// `sumcheck` names the sumcheck in errors.
pub fn verify<F: PrimeField, Q: PrimeField + Absorb>(
    sumcheck: &'static str,
    claim: F,
    num_rounds: usize,
    degree: usize,
    proof: &SumcheckProof<F>,
    transcript: &mut Transcript<F, Q>,
) -> Result<(F, Vec<F>), Error> {
    if proof.rounds.len() != num_rounds {
        return Err(Error::Malformed {
            field: sumcheck,
            reason: format!("{} rounds, expected {num_rounds}", proof.rounds.len()),
        });
    }
    let mut claim = claim;
    let mut point = Vec::with_capacity(num_rounds);
    for (round, evals) in proof.rounds.iter().enumerate() {
        if evals.len() != degree + 1 {
            return Err(Error::Malformed {
                field: sumcheck,
                reason: format!(
                    "round {round} has {} values, expected {}",
                    evals.len(),
                    degree + 1
                ),
            });
        }
        if evals[0] + evals[1] != claim {
            return Err(Error::SumcheckRound { sumcheck, round });
        }
        transcript.absorb_slice(evals);
        let r = transcript.challenge();
        claim = interpolate(evals, r);
        point.push(r);
    }
    Ok((claim, point))
}

/// The polynomial of degree `< evals.len()` with `p(t) = evals[t]` for `t = 0, 1, …`,
/// evaluated at `x` (Lagrange's formula over the nodes `0, 1, …, d`).
pub fn interpolate<F: PrimeField>(evals: &[F], x: F) -> F {
    let n = evals.len();
    let mut acc = F::zero();
    for (i, y) in evals.iter().enumerate() {
        let mut num = F::one();
        let mut den = F::one();
        for j in 0..n {
            if j != i {
                num *= x - F::from(j as u64);
                den *= F::from(i as u64) - F::from(j as u64);
            }
        }
        // The nodes are distinct small integers, so `den` is nonzero.
        acc += *y * num * den.inverse().expect("distinct interpolation nodes");
    }
    acc
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Fq, Fr};
    use ark_ff::UniformRand;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    use crate::poly::MultilinearPoly;

    fn random_tables(k: usize, nu: usize, seed: u64) -> Vec<Vec<Fr>> {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        (0..k)
            .map(|_| (0..1 << nu).map(|_| Fr::rand(&mut rng)).collect())
            .collect()
    }

    fn triple(v: &[Fr]) -> Fr {
        v[0] * (v[1] * v[2] - v[3])
    }

    #[test]
    fn interpolation_recovers_a_cubic() {
        let p = |x: Fr| x * x * x * Fr::from(3u64) - x + Fr::from(7u64);
        let evals: Vec<Fr> = (0..4u64).map(|t| p(Fr::from(t))).collect();
        let x = Fr::from(123456u64);
        assert_eq!(interpolate(&evals, x), p(x));
    }

    #[test]
    fn cubic_sumcheck_is_complete_and_ends_at_the_evaluations() {
        let tables = random_tables(4, 5, 3);
        let claim: Fr = (0..32)
            .map(|i| triple(&[tables[0][i], tables[1][i], tables[2][i], tables[3][i]]))
            .sum();
        let mut tp = Transcript::<Fr, Fq>::new(b"sumcheck test").unwrap();
        let out = prove(tables.clone(), 3, triple, &mut tp);
        let mut tv = Transcript::<Fr, Fq>::new(b"sumcheck test").unwrap();
        let (last, point) = verify("test", claim, 5, 3, &out.proof, &mut tv).unwrap();
        assert_eq!(point, out.point);
        for (t, e) in tables.iter().zip(&out.final_evals) {
            let f = MultilinearPoly::new(5, t.clone()).unwrap();
            assert_eq!(f.evaluate(&point).unwrap(), *e);
        }
        assert_eq!(last, triple(&out.final_evals));
    }

    #[test]
    fn a_wrong_claim_or_a_changed_round_is_rejected() {
        let tables = random_tables(2, 4, 4);
        let prod = |v: &[Fr]| v[0] * v[1];
        let claim: Fr = (0..16).map(|i| tables[0][i] * tables[1][i]).sum();
        let mut tp = Transcript::<Fr, Fq>::new(b"t").unwrap();
        let out = prove(tables, 2, prod, &mut tp);

        let mut tv = Transcript::<Fr, Fq>::new(b"t").unwrap();
        assert_eq!(
            verify("test", claim + Fr::from(1u64), 4, 2, &out.proof, &mut tv),
            Err(Error::SumcheckRound {
                sumcheck: "test",
                round: 0
            })
        );
        // Round 2 changed so that it still sums to its claim: round 3 no longer does.
        let mut bad = out.proof.clone();
        bad.rounds[2][0] += Fr::from(1u64);
        bad.rounds[2][1] -= Fr::from(1u64);
        let mut tv = Transcript::<Fr, Fq>::new(b"t").unwrap();
        assert_eq!(
            verify("test", claim, 4, 2, &bad, &mut tv),
            Err(Error::SumcheckRound {
                sumcheck: "test",
                round: 3
            })
        );
        let mut short = out.proof.clone();
        short.rounds[1].pop();
        let mut tv = Transcript::<Fr, Fq>::new(b"t").unwrap();
        assert!(matches!(
            verify("test", claim, 4, 2, &short, &mut tv),
            Err(Error::Malformed { .. })
        ));
    }
}

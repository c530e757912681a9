//! The sumcheck verifier in a circuit over `Q = F_q` (feature `r1cs`): the twin of
//! [`super::verify`], replaying the transcript with [`TranscriptVar`] so that every round's
//! challenge is derived in the circuit from the round polynomials it absorbed.
//!
//! **The arithmetic** (the round check and the interpolation) is generic over the field
//! variable ([`ScalarFieldVar`]): `EmulatedFpVar<F_r, F_q>` in the compression circuit,
//! `FpVar<F_r>` natively (what the tests cross-check it with). **The verifier**
//! ([`verify`]) is over emulated `F_r`, because the transcript is over `F_q`.
//!
//! **Scaled claims.** With `d` the degree and nodes `0, 1, …, d`, the circuit carries
//! `d!·c_j` instead of the running claim `c_j`: Newton's form
//! `d!·p(x) = Σ_{k ≤ d} (d!/k!)·Δ^k p(0)·x(x − 1)…(x − k + 1)` has integer coefficients
//! (`Δ^k p(0) = Σ_i (−1)^{k−i}·C(k, i)·p(i)`: additions, no multiplications), so a round
//! costs `d − 1` products for the falling factorials and one shared reduction for the sum
//! ([`interpolate_scaled`]); the round check becomes `d!·(p(0) + p(1)) = d!·c_j` (additions on
//! the left). One multiplication by the constant `1/d!` at the end gives `c_ν`.
//!
//! **Shapes** are fixed when the circuit is built (a circuit's key fixes its size): a proof
//! with another number of rounds or another degree is refused by [`SumcheckProofVar::new_witness`]
//! and by [`verify`] with [`Error::Malformed`], not turned into an unsatisfiable system.

use ark_ff::PrimeField;
use ark_r1cs_std::fields::emulated_fp::{EmulatedFpVar, MulResultVar};
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};

use super::SumcheckProof;
use crate::transcript::constraints::{ChallengeVar, ScalarVar, TranscriptVar};
use crate::Error;

/// The largest round degree the gadget takes (`d!` must fit the small-integer arithmetic;
/// Spartan uses 2 and 3).
pub const MAX_DEGREE: usize = 8;

/// Field variables for the verifier's `F` arithmetic, with a sum of products that an
/// implementation may reduce once (emulated fields) instead of once per product.
pub trait ScalarFieldVar<F: PrimeField, CF: PrimeField>: FieldVar<F, CF> {
    /// `Σ a_i·b_i`.
    fn sum_of_products(terms: &[(Self, Self)]) -> Result<Self, SynthesisError> {
        let mut acc = Self::zero();
        for (a, b) in terms {
            acc += a.clone() * b;
        }
        Ok(acc)
    }
}

/// Native variables: products are one constraint each, nothing to share.
impl<F: PrimeField> ScalarFieldVar<F, F> for FpVar<F> {}

/// Products kept unreduced (`mul_without_reduce`), summed, and reduced once per
/// [`SUM_CHUNK`] terms.
impl<F: PrimeField, Q: PrimeField> ScalarFieldVar<F, Q> for EmulatedFpVar<F, Q> {
    fn sum_of_products(terms: &[(Self, Self)]) -> Result<Self, SynthesisError> {
        let mut acc: Option<Self> = None;
        for chunk in terms.chunks(SUM_CHUNK) {
            let mut sum = MulResultVar::zero();
            for (a, b) in chunk {
                sum += &a.mul_without_reduce(b)?;
            }
            let part = sum.reduce()?;
            acc = Some(match acc {
                Some(a) => a + part,
                None => part,
            });
        }
        Ok(acc.unwrap_or_else(Self::zero))
    }
}

/// Unreduced products summed before one reduction. ark-r1cs-std tracks the growth of an
/// unreduced sum and sizes the reduction's witness by it; the cap keeps that growth small.
/// The sums here have at most `ℓ + 1` terms (`ũ`), usually 2 to 4.
pub const SUM_CHUNK: usize = 64;

/// `n·v` for a small integer `n`, by doubling and adding (no multiplication, and no
/// constant terms: an emulated sum stays as close to normal form as it can).
pub fn small_multiple<F: PrimeField, CF: PrimeField, V: FieldVar<F, CF>>(v: &V, n: u64) -> V {
    if n == 0 {
        return V::zero();
    }
    let top = u64::BITS - 1 - n.leading_zeros();
    let mut acc = v.clone();
    for i in (0..top).rev() {
        acc = acc.clone() + &acc;
        if (n >> i) & 1 == 1 {
            acc += v;
        }
    }
    acc
}

/// `Σ terms`, starting from the first term rather than from a constant zero.
fn sum<F: PrimeField, CF: PrimeField, V: FieldVar<F, CF>>(terms: Vec<V>) -> Option<V> {
    terms.into_iter().reduce(|a, b| a + b)
}

fn factorial(d: usize) -> u64 {
    (1..=d as u64).product()
}

fn binomial(n: usize, k: usize) -> u64 {
    (0..k as u64).fold(1, |acc, i| acc * (n as u64 - i) / (i + 1))
}

/// `d!·p(x)` for the polynomial `p` of degree `≤ d = evals.len() − 1` with `p(t) = evals[t]`
/// (module doc: Newton's form with integer coefficients). Refuses an empty list or a degree
/// above [`MAX_DEGREE`].
pub fn interpolate_scaled<F, CF, V>(evals: &[V], x: &V) -> Result<V, SynthesisError>
where
    F: PrimeField,
    CF: PrimeField,
    V: ScalarFieldVar<F, CF>,
{
    if evals.is_empty() || evals.len() > MAX_DEGREE + 1 {
        return Err(SynthesisError::Unsatisfiable);
    }
    let d = evals.len() - 1;
    // (d!/k!)·Δ^k p(0), as the positive and negative parts of an integer combination.
    let coefficient = |k: usize| {
        let scale = factorial(d) / factorial(k);
        let (mut pos, mut neg) = (Vec::new(), Vec::new());
        for (i, e) in evals.iter().enumerate().take(k + 1) {
            let term = small_multiple(e, scale * binomial(k, i));
            if (k - i).is_multiple_of(2) {
                pos.push(term);
            } else {
                neg.push(term);
            }
        }
        // The term i = k is positive, so `pos` is never empty.
        match (sum(pos), sum(neg)) {
            (Some(p), Some(n)) => p - n,
            (Some(p), None) => p,
            (None, Some(n)) => n.negate().unwrap_or_else(|_| V::zero()),
            (None, None) => V::zero(),
        }
    };
    let mut terms = Vec::with_capacity(d);
    let mut falling = x.clone();
    for k in 1..=d {
        if k > 1 {
            falling *= x.clone() - F::from((k - 1) as u64);
        }
        terms.push((coefficient(k), falling.clone()));
    }
    Ok(coefficient(0) + V::sum_of_products(&terms)?)
}

/// One round on scaled claims: enforces `d!·(p(0) + p(1)) = scaled_claim` and returns
/// `d!·p(r)`, the next scaled claim. `evals` are `p(0), …, p(d)`.
pub fn round<F, CF, V>(evals: &[V], scaled_claim: &V, r: &V) -> Result<V, SynthesisError>
where
    F: PrimeField,
    CF: PrimeField,
    V: ScalarFieldVar<F, CF>,
{
    if evals.len() < 2 || evals.len() > MAX_DEGREE + 1 {
        return Err(SynthesisError::Unsatisfiable);
    }
    let d = evals.len() - 1;
    small_multiple(&(evals[0].clone() + &evals[1]), factorial(d)).enforce_equal(scaled_claim)?;
    interpolate_scaled(evals, r)
}

/// `d!·claim`, the scaled claim a sumcheck of degree `d` starts from.
pub fn scale_claim<F, CF, V>(claim: &V, degree: usize) -> V
where
    F: PrimeField,
    CF: PrimeField,
    V: FieldVar<F, CF>,
{
    small_multiple(claim, factorial(degree))
}

/// `c_ν` from `d!·c_ν`.
pub fn unscale_claim<F, CF, V>(scaled: &V, degree: usize) -> Result<V, SynthesisError>
where
    F: PrimeField,
    CF: PrimeField,
    V: FieldVar<F, CF>,
{
    let inv = F::from(factorial(degree))
        .inverse()
        .ok_or(SynthesisError::Unsatisfiable)?;
    Ok(scaled.clone() * inv)
}

/// The round polynomials of one sumcheck as circuit values (each with its canonical integer,
/// which is what the transcript absorbs).
#[derive(Clone)]
pub struct SumcheckProofVar<F: PrimeField, Q: PrimeField> {
    /// Round `j`'s values `p_j(0), …, p_j(d)`.
    pub rounds: Vec<Vec<ScalarVar<F, Q>>>,
}

/// What the sumcheck leaves the caller: the final claim `c_ν` (to be checked against
/// `G(f(r))`) and the point `r`, as challenges (bits, emulated value, integer).
#[derive(Clone)]
pub struct SumcheckOutputVar<F: PrimeField, Q: PrimeField> {
    pub claim: EmulatedFpVar<F, Q>,
    pub point: Vec<ChallengeVar<F, Q>>,
}

fn check_shape(
    sumcheck: &'static str,
    num_rounds: usize,
    degree: usize,
    rounds: usize,
    round_len: impl Fn(usize) -> usize,
) -> Result<(), Error> {
    let malformed = |reason: String| {
        Err(Error::Malformed {
            field: sumcheck,
            reason,
        })
    };
    if degree == 0 || degree > MAX_DEGREE {
        return malformed(format!(
            "degree {degree}: the gadget takes degrees 1 to {MAX_DEGREE}"
        ));
    }
    if rounds != num_rounds {
        return malformed(format!("{rounds} rounds, expected {num_rounds}"));
    }
    for round in 0..rounds {
        if round_len(round) != degree + 1 {
            return malformed(format!(
                "round {round} has {} values, expected {}",
                round_len(round),
                degree + 1
            ));
        }
    }
    Ok(())
}

impl<F: PrimeField, Q: PrimeField> SumcheckProofVar<F, Q> {
    /// Allocates the round values of a sumcheck of `num_rounds` rounds of degree `degree` as
    /// witnesses ([`ScalarVar::new_witness`]). `proof` is `None` when the circuit is built
    /// without values (key generation); a proof of another shape is refused.
    pub fn new_witness(
        cs: ConstraintSystemRef<Q>,
        sumcheck: &'static str,
        num_rounds: usize,
        degree: usize,
        proof: Option<&SumcheckProof<F>>,
    ) -> Result<Self, Error> {
        if let Some(p) = proof {
            check_shape(sumcheck, num_rounds, degree, p.rounds.len(), |j| {
                p.rounds[j].len()
            })?;
        } else {
            check_shape(sumcheck, num_rounds, degree, num_rounds, |_| degree + 1)?;
        }
        let rounds = (0..num_rounds)
            .map(|j| {
                (0..=degree)
                    .map(|t| {
                        ScalarVar::new_witness(cs.clone(), || {
                            proof
                                .map(|p| p.rounds[j][t])
                                .ok_or(SynthesisError::AssignmentMissing)
                        })
                    })
                    .collect::<Result<Vec<_>, _>>()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { rounds })
    }
}

/// Verifies a sumcheck of `claim` over `num_rounds` variables with round polynomials of
/// degree `degree`, absorbing each round into `transcript` as the native verifier does
/// ([`super::verify`]) and squeezing its challenge. Returns the final claim and the point.
/// A proof of another shape is refused with [`Error::Malformed`] naming `sumcheck`.
pub fn verify<F: PrimeField, Q: PrimeField>(
    sumcheck: &'static str,
    claim: &EmulatedFpVar<F, Q>,
    num_rounds: usize,
    degree: usize,
    proof: &SumcheckProofVar<F, Q>,
    transcript: &mut TranscriptVar<F, Q>,
) -> Result<SumcheckOutputVar<F, Q>, Error> {
    check_shape(sumcheck, num_rounds, degree, proof.rounds.len(), |j| {
        proof.rounds[j].len()
    })?;
    let mut scaled = scale_claim(claim, degree);
    let mut point = Vec::with_capacity(num_rounds);
    for evals in &proof.rounds {
        transcript.absorb_canonicals(evals)?;
        let r = transcript.challenge()?;
        let values: Vec<EmulatedFpVar<F, Q>> = evals.iter().map(|e| e.value.clone()).collect();
        scaled = round(&values, &scaled, &r.value)?;
        point.push(r);
    }
    Ok(SumcheckOutputVar {
        claim: unscale_claim(&scaled, degree)?,
        point,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sumcheck::{self, interpolate};
    use crate::transcript::Transcript;
    use ark_bls12_381::{Fq, Fr};
    use ark_ff::{One, UniformRand};
    use ark_r1cs_std::alloc::AllocVar;
    use ark_r1cs_std::eq::EqGadget;
    use ark_r1cs_std::GR1CSVar;
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    type Em = EmulatedFpVar<Fr, Fq>;

    fn new_cs<CF: PrimeField>() -> ConstraintSystemRef<CF> {
        let cs = ConstraintSystem::<CF>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs
    }

    #[test]
    fn scaled_interpolation_matches_the_native_one_for_native_and_emulated_variables() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        for d in 1..=4usize {
            let evals: Vec<Fr> = (0..=d).map(|_| Fr::rand(&mut rng)).collect();
            let x = Fr::rand(&mut rng);
            let want = interpolate(&evals, x) * Fr::from(factorial(d));
            // Native F_r variables.
            let cs = new_cs::<Fr>();
            let ev: Vec<FpVar<Fr>> = evals
                .iter()
                .map(|e| FpVar::new_witness(cs.clone(), || Ok(*e)).unwrap())
                .collect();
            let xv = FpVar::new_witness(cs.clone(), || Ok(x)).unwrap();
            assert_eq!(interpolate_scaled(&ev, &xv).unwrap().value().unwrap(), want);
            assert!(cs.is_satisfied().unwrap());
            // Emulated F_r over F_q.
            let cs = new_cs::<Fq>();
            let ev: Vec<Em> = evals
                .iter()
                .map(|e| Em::new_witness(cs.clone(), || Ok(*e)).unwrap())
                .collect();
            let xv = Em::new_witness(cs.clone(), || Ok(x)).unwrap();
            let got = interpolate_scaled(&ev, &xv).unwrap();
            got.enforce_equal(&Em::Constant(want)).unwrap();
            assert!(cs.is_satisfied().unwrap());
        }
        assert_eq!(
            small_multiple::<Fr, Fr, FpVar<Fr>>(&FpVar::one(), 0)
                .value()
                .unwrap(),
            Fr::from(0u64)
        );
        assert_eq!(
            small_multiple::<Fr, Fr, FpVar<Fr>>(&FpVar::one(), 13)
                .value()
                .unwrap(),
            Fr::from(13u64)
        );
    }

    /// A product of `k` random multilinear tables in `nu` variables, proved natively.
    struct Proved {
        claim: Fr,
        proof: SumcheckProof<Fr>,
        nu: usize,
        degree: usize,
    }

    fn proved(k: usize, nu: usize, seed: u64) -> Proved {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let tables: Vec<Vec<Fr>> = (0..k)
            .map(|_| (0..1 << nu).map(|_| Fr::rand(&mut rng)).collect())
            .collect();
        let prod = |v: &[Fr]| v.iter().product::<Fr>();
        let claim: Fr = (0..1 << nu)
            .map(|i| tables.iter().map(|t| t[i]).product::<Fr>())
            .sum();
        let mut t = Transcript::<Fr, Fq>::new(b"sumcheck gadget test").unwrap();
        let out = sumcheck::prove(tables, k, prod, &mut t);
        Proved {
            claim,
            proof: out.proof,
            nu,
            degree: k,
        }
    }

    /// The gadget on `proof` with `claim` as a public input: `Ok((satisfied, final claim,
    /// point))`, or the construction error.
    fn in_circuit(
        p: &Proved,
        claim: Fr,
        proof: &SumcheckProof<Fr>,
    ) -> Result<(bool, Fr, Vec<Fr>, usize), Error> {
        let cs = new_cs::<Fq>();
        let claim_var = ScalarVar::<Fr, Fq>::new_input(cs.clone(), || Ok(claim))?;
        let proof_var =
            SumcheckProofVar::new_witness(cs.clone(), "test", p.nu, p.degree, Some(proof))?;
        let mut t = TranscriptVar::<Fr, Fq>::new(cs.clone(), b"sumcheck gadget test")?;
        let out = verify("test", &claim_var.value, p.nu, p.degree, &proof_var, &mut t)?;
        let point = out
            .point
            .iter()
            .map(|r| r.value.value())
            .collect::<Result<Vec<_>, _>>()?;
        Ok((
            cs.is_satisfied()?,
            out.claim.value()?,
            point,
            cs.num_constraints(),
        ))
    }

    #[test]
    fn an_honest_proof_satisfies_the_gadget_and_its_outputs_are_the_native_verifiers() {
        for (k, nu, seed) in [(2, 3, 1), (3, 4, 2)] {
            let p = proved(k, nu, seed);
            let mut t = Transcript::<Fr, Fq>::new(b"sumcheck gadget test").unwrap();
            let (want_claim, want_point) =
                sumcheck::verify("test", p.claim, nu, k, &p.proof, &mut t).unwrap();
            let (ok, claim, point, n) = in_circuit(&p, p.claim, &p.proof).unwrap();
            assert!(ok);
            assert_eq!(claim, want_claim);
            assert_eq!(point, want_point);
            println!("sumcheck gadget, degree {k}, {nu} rounds: {n} constraints");
        }
    }

    #[test]
    fn a_tampered_round_or_a_wrong_claim_leaves_the_gadget_unsatisfied() {
        let p = proved(3, 4, 3);
        let one = Fr::one();
        // The claimed sum off by one: round 0's check fails.
        assert!(!in_circuit(&p, p.claim + one, &p.proof).unwrap().0);
        // A middle round moved so that it still sums to its claim: the next round's check
        // fails (its claim is the changed polynomial at the challenge).
        let mut bad = p.proof.clone();
        bad.rounds[1][0] += one;
        bad.rounds[1][1] -= one;
        assert!(!in_circuit(&p, p.claim, &bad).unwrap().0);
        // A value the round check does not read (p(2)): only the next round catches it.
        let mut bad = p.proof.clone();
        bad.rounds[2][2] += one;
        assert!(!in_circuit(&p, p.claim, &bad).unwrap().0);
        // The last round: nothing in the sumcheck catches it, but the final claim moves
        // (the caller's final check is what fails).
        let mut bad = p.proof.clone();
        bad.rounds[3][3] += one;
        let (ok, claim, _, _) = in_circuit(&p, p.claim, &bad).unwrap();
        assert!(ok);
        let (_, honest_claim, _, _) = in_circuit(&p, p.claim, &p.proof).unwrap();
        assert_ne!(claim, honest_claim);
    }

    #[test]
    fn a_round_of_the_wrong_degree_or_the_wrong_number_of_rounds_is_refused() {
        let p = proved(2, 3, 4);
        let malformed = |r: Result<(bool, Fr, Vec<Fr>, usize), Error>| {
            matches!(r, Err(Error::Malformed { field: "test", .. }))
        };
        let mut bad = p.proof.clone();
        bad.rounds[1].push(Fr::one());
        assert!(malformed(in_circuit(&p, p.claim, &bad)));
        let mut bad = p.proof.clone();
        bad.rounds[0].pop();
        assert!(malformed(in_circuit(&p, p.claim, &bad)));
        let mut bad = p.proof.clone();
        bad.rounds.pop();
        assert!(malformed(in_circuit(&p, p.claim, &bad)));
        let mut bad = p.proof.clone();
        bad.rounds.push(p.proof.rounds[0].clone());
        assert!(malformed(in_circuit(&p, p.claim, &bad)));
        // verify itself refuses a hand-built variable of the wrong shape, and degree 0.
        let cs = new_cs::<Fq>();
        let mut var =
            SumcheckProofVar::<Fr, Fq>::new_witness(cs.clone(), "test", 3, 2, Some(&p.proof))
                .unwrap();
        var.rounds[2].pop();
        let mut t = TranscriptVar::<Fr, Fq>::new(cs.clone(), b"t").unwrap();
        assert!(matches!(
            verify("test", &Em::one(), 3, 2, &var, &mut t),
            Err(Error::Malformed { field: "test", .. })
        ));
        assert!(matches!(
            SumcheckProofVar::<Fr, Fq>::new_witness(cs, "test", 3, 0, None),
            Err(Error::Malformed { field: "test", .. })
        ));
    }

    #[test]
    fn without_values_the_gadget_builds_the_same_system() {
        // Key generation: no proof, the same number of constraints.
        let p = proved(2, 3, 5);
        let (_, _, _, with_values) = in_circuit(&p, p.claim, &p.proof).unwrap();
        let cs = new_cs::<Fq>();
        cs.set_mode(ark_relations::gr1cs::SynthesisMode::Setup);
        let claim =
            ScalarVar::<Fr, Fq>::new_input(cs.clone(), || Err(SynthesisError::AssignmentMissing))
                .unwrap();
        let proof =
            SumcheckProofVar::<Fr, Fq>::new_witness(cs.clone(), "test", 3, 2, None).unwrap();
        let mut t = TranscriptVar::<Fr, Fq>::new(cs.clone(), b"sumcheck gadget test").unwrap();
        verify("test", &claim.value, 3, 2, &proof, &mut t).unwrap();
        assert_eq!(cs.num_constraints(), with_values);
    }
}

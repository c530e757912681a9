//! The Spartan verifier in a circuit over `Q = F_q` (feature `r1cs`), up to the polynomial
//! commitment's opening: the twin of [`super::verify`] with `M(r_x, r_y)` replaced by the
//! public `v_M` (`docs/design/testudo-compression.md`, Decision 3, step 1).
//!
//! What the circuit does, in the order of [`super`]'s transcript layout: it absorbs the
//! domain tag (a constant), the R1CS digest and `io` (public inputs), the commitment's `F_q`
//! elements (supplied by the caller, who binds them to the commitment the opening is checked
//! against: step 6 of the design note), squeezes `τ`, runs the outer sumcheck
//! ([`crate::sumcheck::constraints::verify`], degree 3, claim 0) and checks its final claim
//! against `eq(τ, r_x)·(v_A·v_B − v_C)`; absorbs `v_A, v_B, v_C`, squeezes `ρ`, runs the inner
//! sumcheck (degree 2, claim `Σ ρ_M·v_M`) and checks its final claim against
//! `v_M·z̃(r_y)` with `z̃(r_y) = (1 − r_y[0])·v_w + r_y[0]·ũ(r_y')`, `ũ` evaluated from the
//! public `io`; absorbs `v_w`; and enforces that the public `r_x, ρ, r_y` are the challenges it
//! squeezed. It leaves the caller ([`SpartanOutputVar`]) the opening's point `r_y'`, its
//! claimed value `v_w` and the transcript, which the opening continues.
//!
//! What it does not do: the opening itself (the circuit is unsound without it: `v_w` is
//! only a claim) and `v_M` (the final verifier checks it natively,
//! [`PublicValues::check_matrices`]).
//!
//! **Public inputs** ([`PublicValuesVar::new_input`], in the order of
//! [`PublicValues::to_field_elements`]): the digest's chunk, `io`, `r_x`, `ρ`, `r_y`, `v_M`,
//! each `F_r` value as its canonical integer in `F_q` (`io` and `v_M` are range-checked below
//! `r`; the challenges are equal to integers below `2^254` the circuit computed).
//!
//! **Shapes** ([`SpartanShape`]: `s_x`, `s_y`, `ℓ`) are fixed when the circuit is built; a
//! proof or public values of another shape are refused with an error.

use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::emulated_fp::EmulatedFpVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use super::{PublicValues, SpartanProof, DOMAIN_TAG};
use crate::r1cs::R1cs;
use crate::sumcheck::constraints::{self as sumcheck, ScalarFieldVar, SumcheckProofVar};
use crate::transcript::constraints::{ChallengeVar, ScalarVar, TranscriptVar};
use crate::transcript::{bytes_per_chunk, bytes_to_elements};
use crate::Error;

/// The R1CS digest's length in bytes (BLAKE2b-256).
const DIGEST_BYTES: usize = 32;

/// The sizes a verifier circuit is built for: `s_x`, `s_y` and `ℓ = |io|`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpartanShape {
    pub log_rows: usize,
    pub log_cols: usize,
    pub num_io: usize,
}

impl SpartanShape {
    /// The shape of `r1cs`'s proofs.
    pub fn of<F: PrimeField>(r1cs: &R1cs<F>) -> Self {
        Self {
            log_rows: r1cs.log_rows(),
            log_cols: r1cs.log_cols(),
            num_io: r1cs.num_io(),
        }
    }
}

/// `eq(a, b) = Π_k (a_k·b_k + (1 − a_k)(1 − b_k))`: one shared-reduction sum per factor and
/// one product.
pub fn eq_eval<F, CF, V>(a: &[V], b: &[V]) -> Result<V, SynthesisError>
where
    F: PrimeField,
    CF: PrimeField,
    V: ScalarFieldVar<F, CF>,
{
    if a.len() != b.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    // Starting from the first factor, not from the constant 1 (an emulated product with a
    // constant costs a full reduction).
    let mut acc: Option<V> = None;
    for (x, y) in a.iter().zip(b) {
        let factor = V::sum_of_products(&[(x.clone(), y.clone()), (V::one() - x, V::one() - y)])?;
        acc = Some(match acc {
            Some(acc) => acc * factor,
            None => factor,
        });
    }
    Ok(acc.unwrap_or_else(V::one))
}

/// `ũ(r)` for `u = (io, 1, 0…0)` of length `2^{|r|}` (variables most significant first).
/// Only the first `ℓ + 1` entries are nonzero, so with `b = ⌈log₂(ℓ + 1)⌉` it is
/// `Π_{k < |r|−b} (1 − r_k) · Σ_{j ≤ ℓ} u_j·eq_b(j, r_{|r|−b..})`: `|r| − b` products, an
/// `eq` table of `2^b` entries, and one shared-reduction sum.
pub fn public_eval<F, CF, V>(io: &[V], r: &[V]) -> Result<V, SynthesisError>
where
    F: PrimeField,
    CF: PrimeField,
    V: ScalarFieldVar<F, CF>,
{
    let entries = io.len() + 1;
    let b = entries.next_power_of_two().trailing_zeros() as usize;
    if b > r.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let (high, low) = r.split_at(r.len() - b);
    // eq(j, low) for j < 2^b, the first variable most significant; the first variable's
    // entries are 1 − x and x themselves (no product with the constant 1).
    let mut table = match low.first() {
        Some(x) => vec![V::one() - x, x.clone()],
        None => vec![V::one()],
    };
    for x in low.iter().skip(1) {
        let mut next = Vec::with_capacity(2 * table.len());
        for t in &table {
            let tx = t.clone() * x;
            next.push(t.clone() - &tx);
            next.push(tx);
        }
        table = next;
    }
    let terms: Vec<(V, V)> = io
        .iter()
        .zip(&table)
        .map(|(u, t)| (u.clone(), t.clone()))
        .collect();
    let mut low_sum = V::sum_of_products(&terms)?;
    low_sum += &table[io.len()];
    let mut acc = low_sum;
    for x in high {
        acc *= V::one() - x;
    }
    Ok(acc)
}

/// The circuit's public inputs (module doc).
#[derive(Clone)]
pub struct PublicValuesVar<F: PrimeField, Q: PrimeField> {
    /// The digest as the transcript packs it (its chunks, without the length).
    pub digest: Vec<FpVar<Q>>,
    pub io: Vec<ScalarVar<F, Q>>,
    /// `r_x`, `ρ`, `r_y` as integers (equal to the challenges' integers, enforced by
    /// [`verify`]).
    pub r_x: Vec<FpVar<Q>>,
    pub rho: [FpVar<Q>; 3],
    pub r_y: Vec<FpVar<Q>>,
    pub v_m: ScalarVar<F, Q>,
}

impl<F: PrimeField, Q: PrimeField> PublicValuesVar<F, Q> {
    /// Allocates the public inputs for `shape`, in the order of
    /// [`PublicValues::to_field_elements`]; `values` is `None` when building without values.
    /// Values of another shape are refused.
    pub fn new_input(
        cs: ConstraintSystemRef<Q>,
        shape: SpartanShape,
        values: Option<&PublicValues<F>>,
    ) -> Result<Self, Error> {
        if let Some(v) = values {
            for (field, got, expected) in [
                ("public input (io)", v.io.len(), shape.num_io),
                ("r_x", v.r_x.len(), shape.log_rows),
                ("r_y", v.r_y.len(), shape.log_cols),
            ] {
                if got != expected {
                    return Err(Error::Length {
                        field,
                        expected,
                        got,
                    });
                }
            }
        }
        let missing = || SynthesisError::AssignmentMissing;
        let chunks = DIGEST_BYTES.div_ceil(bytes_per_chunk::<Q>());
        let digest_elems = values.map(|v| bytes_to_elements::<Q>(&v.digest.0));
        let digest = (0..chunks)
            .map(|i| {
                FpVar::new_input(cs.clone(), || {
                    digest_elems.as_ref().map(|d| d[1 + i]).ok_or_else(missing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let scalar = |f: Option<F>| ScalarVar::new_input(cs.clone(), || f.ok_or_else(missing));
        let integer = |f: Option<F>| {
            FpVar::new_input(cs.clone(), || {
                f.map(|x| crate::transcript::scalar_to_base::<F, Q>(&x))
                    .ok_or_else(missing)
            })
        };
        let io = (0..shape.num_io)
            .map(|i| scalar(values.map(|v| v.io[i])))
            .collect::<Result<Vec<_>, _>>()?;
        let r_x = (0..shape.log_rows)
            .map(|i| integer(values.map(|v| v.r_x[i])))
            .collect::<Result<Vec<_>, _>>()?;
        let rho = [
            integer(values.map(|v| v.rho[0]))?,
            integer(values.map(|v| v.rho[1]))?,
            integer(values.map(|v| v.rho[2]))?,
        ];
        let r_y = (0..shape.log_cols)
            .map(|i| integer(values.map(|v| v.r_y[i])))
            .collect::<Result<Vec<_>, _>>()?;
        let v_m = scalar(values.map(|v| v.v_m))?;
        Ok(Self {
            digest,
            io,
            r_x,
            rho,
            r_y,
            v_m,
        })
    }
}

/// Spartan's messages up to the opening, as circuit values (each `F_r` value with its
/// canonical integer, [`ScalarVar`]). The commitment and the opening are the PCS gadget's.
#[derive(Clone)]
pub struct SpartanProofVar<F: PrimeField, Q: PrimeField> {
    pub outer: SumcheckProofVar<F, Q>,
    pub v_a: ScalarVar<F, Q>,
    pub v_b: ScalarVar<F, Q>,
    pub v_c: ScalarVar<F, Q>,
    pub inner: SumcheckProofVar<F, Q>,
    pub v_w: ScalarVar<F, Q>,
}

impl<F: PrimeField, Q: PrimeField> SpartanProofVar<F, Q> {
    /// Allocates a proof's messages for `shape` as witnesses; `proof` is `None` when
    /// building without values. A proof of another shape is refused with
    /// [`Error::Malformed`].
    pub fn new_witness<C, O>(
        cs: ConstraintSystemRef<Q>,
        shape: SpartanShape,
        proof: Option<&SpartanProof<F, C, O>>,
    ) -> Result<Self, Error>
    where
        C: CanonicalSerialize + CanonicalDeserialize,
        O: CanonicalSerialize + CanonicalDeserialize,
    {
        let scalar = |f: Option<F>| {
            ScalarVar::new_witness(cs.clone(), || f.ok_or(SynthesisError::AssignmentMissing))
        };
        Ok(Self {
            outer: SumcheckProofVar::new_witness(
                cs.clone(),
                "outer",
                shape.log_rows,
                3,
                proof.map(|p| &p.outer),
            )?,
            v_a: scalar(proof.map(|p| p.v_a))?,
            v_b: scalar(proof.map(|p| p.v_b))?,
            v_c: scalar(proof.map(|p| p.v_c))?,
            inner: SumcheckProofVar::new_witness(
                cs.clone(),
                "inner",
                shape.log_cols,
                2,
                proof.map(|p| &p.inner),
            )?,
            v_w: scalar(proof.map(|p| p.v_w))?,
        })
    }
}

/// What the Spartan gadget leaves the PCS gadget.
#[derive(Clone)]
pub struct SpartanOutputVar<F: PrimeField, Q: PrimeField> {
    pub tau: Vec<ChallengeVar<F, Q>>,
    pub r_x: Vec<ChallengeVar<F, Q>>,
    pub rho: Vec<ChallengeVar<F, Q>>,
    pub r_y: Vec<ChallengeVar<F, Q>>,
    /// The value the opening must establish: `w̃(r_y') = v_w`.
    pub v_w: ScalarVar<F, Q>,
    /// The transcript after `v_w`: where the opening's absorbs and challenges continue.
    pub transcript: TranscriptVar<F, Q>,
}

impl<F: PrimeField, Q: PrimeField> SpartanOutputVar<F, Q> {
    /// `r_y' = r_y[1..]`, the point the witness commitment is opened at.
    pub fn opening_point(&self) -> &[ChallengeVar<F, Q>] {
        &self.r_y[1..]
    }
}

/// Verifies a Spartan proof for an R1CS of `shape` up to the opening (module doc):
/// `public` are the circuit's public inputs, `commitment` the `F_q` elements the PCS absorbs
/// for the witness commitment (PST: a G1 point's 3, Testudo-Comm: `T`'s 12). Errors on
/// shapes; every check on values is a constraint.
pub fn verify<F: PrimeField, Q: PrimeField>(
    cs: ConstraintSystemRef<Q>,
    shape: SpartanShape,
    public: &PublicValuesVar<F, Q>,
    commitment: &[FpVar<Q>],
    proof: &SpartanProofVar<F, Q>,
) -> Result<SpartanOutputVar<F, Q>, Error> {
    for (field, got, expected) in [
        ("public input (io)", public.io.len(), shape.num_io),
        ("r_x", public.r_x.len(), shape.log_rows),
        ("r_y", public.r_y.len(), shape.log_cols),
    ] {
        if got != expected {
            return Err(Error::Length {
                field,
                expected,
                got,
            });
        }
    }
    if shape.log_cols == 0 || (1usize << (shape.log_cols - 1)) < shape.num_io + 1 {
        return Err(Error::Malformed {
            field: "shape",
            reason: format!(
                "s_y = {} leaves no room for {} public inputs and the constant",
                shape.log_cols, shape.num_io
            ),
        });
    }
    let mut t = TranscriptVar::<F, Q>::new(cs, DOMAIN_TAG)?;
    t.absorb_byte_chunks(DIGEST_BYTES, &public.digest)?;
    t.absorb_canonicals(&public.io)?;
    t.absorb_base_slice(commitment)?;

    // Outer sumcheck: 0 = Σ_x eq(τ, x)·(Az·Bz − Cz)(x), ending at eq(τ, r_x)·(v_A·v_B − v_C).
    let tau = t.challenges(shape.log_rows)?;
    let outer = sumcheck::verify(
        "outer",
        &EmulatedFpVar::zero(),
        shape.log_rows,
        3,
        &proof.outer,
        &mut t,
    )?;
    let values = |xs: &[ChallengeVar<F, Q>]| -> Vec<EmulatedFpVar<F, Q>> {
        xs.iter().map(|c| c.value.clone()).collect()
    };
    let eq = eq_eval(&values(&tau), &values(&outer.point))?;
    let (v_a, v_b, v_c) = (&proof.v_a.value, &proof.v_b.value, &proof.v_c.value);
    let ab = v_a.clone() * v_b;
    outer.claim.enforce_equal(&(eq * (ab - v_c)))?;
    t.absorb_canonicals(&[proof.v_a.clone(), proof.v_b.clone(), proof.v_c.clone()])?;

    // Inner sumcheck: Σ ρ_M·v_M = Σ_y M(y)·z̃(y), ending at v_M·z̃(r_y).
    let rho = t.challenges(3)?;
    let claim = EmulatedFpVar::sum_of_products(&[
        (rho[0].value.clone(), v_a.clone()),
        (rho[1].value.clone(), v_b.clone()),
        (rho[2].value.clone(), v_c.clone()),
    ])?;
    let inner = sumcheck::verify("inner", &claim, shape.log_cols, 2, &proof.inner, &mut t)?;
    let r_y = values(&inner.point);
    let io: Vec<EmulatedFpVar<F, Q>> = public.io.iter().map(|x| x.value.clone()).collect();
    let u_eval = public_eval(&io, &r_y[1..])?;
    let z_eval = EmulatedFpVar::sum_of_products(&[
        (EmulatedFpVar::one() - &r_y[0], proof.v_w.value.clone()),
        (r_y[0].clone(), u_eval),
    ])?;
    inner
        .claim
        .enforce_equal(&(public.v_m.value.clone() * z_eval))?;
    t.absorb_canonical(&proof.v_w)?;

    // The public r_x, ρ, r_y are the challenges squeezed here.
    for (public, squeezed) in public
        .r_x
        .iter()
        .zip(&outer.point)
        .chain(public.rho.iter().zip(&rho))
        .chain(public.r_y.iter().zip(&inner.point))
    {
        public.enforce_equal(&squeezed.integer)?;
    }
    Ok(SpartanOutputVar {
        tau,
        r_x: outer.point,
        rho,
        r_y: inner.point,
        v_w: proof.v_w.clone(),
        transcript: t,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poly::MultilinearPoly;
    use crate::r1cs::tests::{chain_matrices, squaring_chain};
    use crate::spartan::{prove, prove_unchecked, ProofFor};
    use crate::testudo_comm::{self, TestudoComm};
    use crate::transcript::constraints::ScalarVar;
    use ark_bls12_381::{Bls12_381, Fq, Fr};
    use ark_ff::{Field, One, UniformRand};
    use ark_r1cs_std::GR1CSVar;
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal, SynthesisMode};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    type T = TestudoComm<Bls12_381>;
    type Proof = ProofFor<Fr, T>;

    fn new_cs() -> ConstraintSystemRef<Fq> {
        let cs = ConstraintSystem::<Fq>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs
    }

    fn commitment_elements(proof: &Proof) -> Vec<Fq> {
        proof
            .commitment
            .0
             .0
            .to_base_prime_field_elements()
            .collect()
    }

    /// The circuit for `proof` with `public` as its public inputs: whether it is satisfied,
    /// the outputs' values (r_x, ρ, r_y, the opening point, v_w), and the constraint count.
    struct Run {
        satisfied: bool,
        r_x: Vec<Fr>,
        rho: Vec<Fr>,
        r_y: Vec<Fr>,
        point: Vec<Fr>,
        v_w: Fr,
        constraints: usize,
        public_inputs: Vec<Fq>,
    }

    fn run(shape: SpartanShape, public: &PublicValues<Fr>, proof: &Proof) -> Result<Run, Error> {
        let cs = new_cs();
        let p = PublicValuesVar::new_input(cs.clone(), shape, Some(public))?;
        let c = commitment_elements(proof)
            .into_iter()
            .map(|x| FpVar::new_witness(cs.clone(), || Ok(x)))
            .collect::<Result<Vec<_>, _>>()?;
        let pv = SpartanProofVar::new_witness(cs.clone(), shape, Some(proof))?;
        let out = verify(cs.clone(), shape, &p, &c, &pv)?;
        let vals = |xs: &[ChallengeVar<Fr, Fq>]| {
            xs.iter()
                .map(|x| x.value.value())
                .collect::<Result<Vec<_>, _>>()
        };
        let public_inputs = cs.instance_assignment()?[1..].to_vec();
        Ok(Run {
            satisfied: cs.is_satisfied()?,
            r_x: vals(&out.r_x)?,
            rho: vals(&out.rho)?,
            r_y: vals(&out.r_y)?,
            point: vals(out.opening_point())?,
            v_w: out.v_w.value()?,
            constraints: cs.num_constraints(),
            public_inputs,
        })
    }

    struct Honest {
        ck: testudo_comm::TcCommitterKey<Bls12_381>,
        vk: testudo_comm::TcVerifierKey<Bls12_381>,
        r1cs: R1cs<Fr>,
        io: Vec<Fr>,
        w: Vec<Fr>,
        proof: Proof,
        public: PublicValues<Fr>,
        shape: SpartanShape,
    }

    fn honest() -> Honest {
        let (ck, vk) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(4, 21).unwrap();
        let (r1cs, io, w) = squaring_chain(16, 3);
        let proof = prove::<Fr, T>(&ck, &r1cs, &io, &w).unwrap();
        crate::spartan::verify::<Fr, T>(&vk, &r1cs, &io, &proof).unwrap();
        let public = PublicValues::for_proof::<T>(&r1cs, &io, &proof).unwrap();
        public.check_matrices(&r1cs).unwrap();
        let shape = SpartanShape::of(&r1cs);
        Honest {
            ck,
            vk,
            r1cs,
            io,
            w,
            proof,
            public,
            shape,
        }
    }

    #[test]
    fn an_honest_proof_satisfies_the_gadget_and_its_outputs_are_the_native_ones() {
        let h = honest();
        let got = run(h.shape, &h.public, &h.proof).unwrap();
        assert!(got.satisfied);
        assert_eq!(got.r_x, h.public.r_x);
        assert_eq!(got.rho, h.public.rho);
        assert_eq!(got.r_y, h.public.r_y);
        assert_eq!(got.point, h.public.r_y[1..]);
        assert_eq!(got.v_w, h.proof.v_w);
        // The opening the PCS gadget must check is the native one: w̃(r_y') = v_w.
        let z = h.r1cs.z_vector(&h.io, &h.w).unwrap();
        let w_poly =
            MultilinearPoly::new(h.r1cs.witness_vars(), z[..z.len() / 2].to_vec()).unwrap();
        assert_eq!(w_poly.evaluate(&got.point).unwrap(), got.v_w);
        // The public inputs are the native ones, in the documented order.
        assert_eq!(got.public_inputs, h.public.to_field_elements::<Fq>());
        println!(
            "Spartan verifier gadget, 2^4 constraints (s_x = {}, s_y = {}): {} constraints",
            h.shape.log_rows, h.shape.log_cols, got.constraints
        );
    }

    #[test]
    fn tampered_claims_leave_the_gadget_unsatisfied() {
        let h = honest();
        let one = Fr::one();
        // v_A, v_B, v_C: the outer final check.
        for i in 0..3 {
            let mut bad = h.proof.clone();
            *[&mut bad.v_a, &mut bad.v_b, &mut bad.v_c][i] += one;
            assert!(crate::spartan::verify::<Fr, T>(&h.vk, &h.r1cs, &h.io, &bad).is_err());
            let public = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &bad).unwrap();
            assert!(!run(h.shape, &public, &bad).unwrap().satisfied, "v_{i}");
        }
        // v_w: the inner final check (before the opening is even looked at).
        let mut bad = h.proof.clone();
        bad.v_w += one;
        let public = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &bad).unwrap();
        assert!(!run(h.shape, &public, &bad).unwrap().satisfied);
        // A round of each sumcheck.
        for outer in [true, false] {
            let mut bad = h.proof.clone();
            let rounds = if outer {
                &mut bad.outer
            } else {
                &mut bad.inner
            };
            rounds.rounds[1][0] += one;
            rounds.rounds[1][1] -= one;
            let public = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &bad).unwrap();
            assert!(!run(h.shape, &public, &bad).unwrap().satisfied);
        }
    }

    /// The honest prover, except that the outer sumcheck's last round is `p + δ·(1 − 2X)`
    /// restricted to the nodes (`p(0) + δ`, `p(1) − δ`, `p(2) − 3δ`, `p(3) − 5δ`): it still
    /// sums to its claim, and every later message is computed honestly from the challenges
    /// it leads to (`v_A, v_B, v_C` are the true evaluations at that `r_x`). Only the outer
    /// final check can catch it.
    fn forge_last_outer_round(h: &Honest, delta: Fr) -> Proof {
        use crate::pcs::MultilinearPcs;
        use crate::poly::eq_table;
        let z = h.r1cs.z_vector(&h.io, &h.w).unwrap();
        let half = z.len() / 2;
        let w_poly = MultilinearPoly::new(h.r1cs.witness_vars(), z[..half].to_vec()).unwrap();
        let (commitment, hint) = T::commit(&h.ck, &w_poly).unwrap();
        let mut t = super::super::statement_transcript::<Fr, T>(
            DOMAIN_TAG,
            h.r1cs.digest(),
            &h.io,
            &commitment,
        )
        .unwrap();
        let _tau = t.challenges(h.r1cs.log_rows());
        let mut outer = h.proof.outer.clone();
        let last = outer.rounds.len() - 1;
        for (node, e) in outer.rounds[last].iter_mut().enumerate() {
            *e += delta * (Fr::one() - Fr::from(2 * node as u64));
        }
        let mut r_x = Vec::new();
        for evals in &outer.rounds {
            t.absorb_slice(evals);
            r_x.push(t.challenge());
        }
        let [az, bz, cz] = h.r1cs.products(&z);
        let at = |table: Vec<Fr>| {
            MultilinearPoly::new(h.r1cs.log_rows(), table)
                .unwrap()
                .evaluate(&r_x)
                .unwrap()
        };
        let (v_a, v_b, v_c) = (at(az), at(bz), at(cz));
        t.absorb_slice(&[v_a, v_b, v_c]);
        let rho = [t.challenge(), t.challenge(), t.challenge()];
        let m = h.r1cs.bind_rows(&eq_table(&r_x), rho);
        let inner = crate::sumcheck::prove(vec![m, z], 2, |v: &[Fr]| v[0] * v[1], &mut t);
        let v_w = w_poly.evaluate(&inner.point[1..]).unwrap();
        t.absorb(&v_w);
        let opening = T::open(&h.ck, &w_poly, &hint, &inner.point[1..], &mut t).unwrap();
        SpartanProof {
            commitment,
            outer,
            v_a,
            v_b,
            v_c,
            inner: inner.proof,
            v_w,
            opening,
        }
    }

    #[test]
    fn a_forged_outer_sumcheck_with_true_evaluations_is_caught_by_the_outer_final_check() {
        let h = honest();
        // δ = 0 is the honest proof (the forger is faithful otherwise).
        assert_eq!(forge_last_outer_round(&h, Fr::from(0u64)), h.proof);
        let forged = forge_last_outer_round(&h, Fr::from(5u64));
        assert_eq!(
            crate::spartan::verify::<Fr, T>(&h.vk, &h.r1cs, &h.io, &forged),
            Err(Error::OuterFinal)
        );
        let public = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &forged).unwrap();
        assert!(!run(h.shape, &public, &forged).unwrap().satisfied);
    }

    #[test]
    fn public_values_that_are_not_the_circuits_leave_it_unsatisfied() {
        let h = honest();
        let one = Fr::one();
        // v_M off by one: the inner final check fails.
        let mut p = h.public.clone();
        p.v_m += one;
        assert!(!run(h.shape, &p, &h.proof).unwrap().satisfied);
        // A public r_x, ρ or r_y other than the challenges squeezed in the circuit.
        for which in 0..3 {
            let mut p = h.public.clone();
            match which {
                0 => p.r_x[0] += one,
                1 => p.rho[2] += one,
                _ => p.r_y[4] += one,
            }
            assert!(!run(h.shape, &p, &h.proof).unwrap().satisfied);
        }
        // Another digest: every challenge changes.
        let mut p = h.public.clone();
        p.digest.0[0] ^= 1;
        assert!(!run(h.shape, &p, &h.proof).unwrap().satisfied);
    }

    #[test]
    fn a_proof_for_one_public_input_does_not_satisfy_the_gadget_for_another() {
        let h = honest();
        let mut io2 = h.io.clone();
        io2[1] += Fr::one();
        // The honest proof with io2 as the public input: the transcript differs.
        let mut p = h.public.clone();
        p.io = io2.clone();
        assert!(!run(h.shape, &p, &h.proof).unwrap().satisfied);
        // The real attack: the transcript says io2 (so the challenges are the circuit's), the
        // prover's z holds io. Only ũ(r_y') from the public io2 differs.
        let z = h.r1cs.z_vector(&h.io, &h.w).unwrap();
        let forged =
            prove_unchecked::<Fr, T>(&h.ck, &h.r1cs, DOMAIN_TAG, h.r1cs.digest(), &io2, z).unwrap();
        let p = PublicValues::for_proof::<T>(&h.r1cs, &io2, &forged).unwrap();
        assert!(!run(h.shape, &p, &forged).unwrap().satisfied);
        // The same forgery run with io as the witness-side z and io as the public input would
        // be honest; with io2 it is only ũ that catches it (checked: the public values are
        // the circuit's own, and v_M is the true M̃).
        p.check_matrices(&h.r1cs).unwrap();
    }

    #[test]
    fn a_v_m_the_registered_matrices_disagree_with_is_caught_by_the_final_check() {
        let h = honest();
        // The transcript carries another instance's digest, the prover computes with the
        // instance its witness satisfies and exposes v_M for it. The circuit (which never
        // reads matrices) is satisfied; the final verifier's M̃ for the registered instance is
        // not v_M.
        let other = {
            let [mut a, b, c] = chain_matrices(16);
            a[3].2 = Fr::from(2u64);
            R1cs::new(16, 2, 15, a, b, c).unwrap()
        };
        let z = h.r1cs.z_vector(&h.io, &h.w).unwrap();
        let forged =
            prove_unchecked::<Fr, T>(&h.ck, &h.r1cs, DOMAIN_TAG, other.digest(), &h.io, z).unwrap();
        let mut p = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &forged).unwrap();
        p.digest = other.digest();
        // for_proof replayed with r1cs's digest; replay with other's for the true challenges.
        let q = PublicValues::for_proof::<T>(&other, &h.io, &forged).unwrap();
        p.r_x = q.r_x.clone();
        p.rho = q.rho;
        p.r_y = q.r_y.clone();
        p.v_m = h.r1cs.eval_combined(
            &crate::poly::eq_table(&p.r_x),
            &crate::poly::eq_table(&p.r_y),
            p.rho,
        );
        assert!(run(h.shape, &p, &forged).unwrap().satisfied);
        assert_eq!(p.check_matrices(&other), Err(Error::MatrixEvaluation));
        // With the registered instance's own v_M the circuit is unsatisfied instead.
        assert!(!run(h.shape, &q, &forged).unwrap().satisfied);
        assert!(q.check_matrices(&other).is_ok());
        // And the final verifier refuses values for another instance outright.
        assert!(matches!(
            h.public.check_matrices(&other),
            Err(Error::Malformed {
                field: "digest",
                ..
            })
        ));
    }

    #[test]
    fn shapes_that_do_not_match_are_errors_and_setup_builds_the_same_system() {
        let h = honest();
        // A proof for a bigger instance.
        let (ck, _) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(5, 22).unwrap();
        let (big, io_big, w_big) = squaring_chain(32, 3);
        let big_proof = prove::<Fr, T>(&ck, &big, &io_big, &w_big).unwrap();
        assert!(matches!(
            run(h.shape, &h.public, &big_proof),
            Err(Error::Malformed { field: "outer", .. })
        ));
        let big_public = PublicValues::for_proof::<T>(&big, &io_big, &big_proof).unwrap();
        assert!(matches!(
            run(h.shape, &big_public, &h.proof),
            Err(Error::Length { field: "r_x", .. })
        ));
        let mut p = h.public.clone();
        p.io.pop();
        assert!(matches!(
            run(h.shape, &p, &h.proof),
            Err(Error::Length { .. })
        ));
        // Key generation: no values, the same system.
        let honest_count = run(h.shape, &h.public, &h.proof).unwrap().constraints;
        let cs = new_cs();
        cs.set_mode(SynthesisMode::Setup);
        let p = PublicValuesVar::<Fr, Fq>::new_input(cs.clone(), h.shape, None).unwrap();
        let c = (0..12)
            .map(|_| {
                FpVar::new_witness(cs.clone(), || {
                    Err::<Fq, _>(SynthesisError::AssignmentMissing)
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .unwrap();
        let pv = SpartanProofVar::new_witness::<(), ()>(cs.clone(), h.shape, None).unwrap();
        verify(cs.clone(), h.shape, &p, &c, &pv).unwrap();
        assert_eq!(cs.num_constraints(), honest_count);
        assert_eq!(
            cs.num_instance_variables(),
            1 + h.public.to_field_elements::<Fq>().len()
        );
    }

    #[test]
    fn the_public_input_evaluation_matches_the_native_one() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        for (num_io, vars) in [(0usize, 0usize), (1, 1), (2, 3), (3, 2), (5, 4)] {
            let io: Vec<Fr> = (0..num_io).map(|_| Fr::rand(&mut rng)).collect();
            let r: Vec<Fr> = (0..vars).map(|_| Fr::rand(&mut rng)).collect();
            let mut u = io.clone();
            u.push(Fr::one());
            u.resize(1 << vars, Fr::from(0u64));
            let want = MultilinearPoly::new(vars, u).unwrap().evaluate(&r).unwrap();
            let cs = ConstraintSystem::<Fr>::new_ref();
            let w = |x: &Fr| FpVar::new_witness(cs.clone(), || Ok(*x)).unwrap();
            let io_v: Vec<_> = io.iter().map(w).collect();
            let r_v: Vec<_> = r.iter().map(w).collect();
            assert_eq!(public_eval(&io_v, &r_v).unwrap().value().unwrap(), want);
            let _ = ScalarVar::<Fr, Fq>::constant(want);
        }
    }
}

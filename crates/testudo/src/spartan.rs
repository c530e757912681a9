//! Spartan without zero knowledge (§2.5 of the paper), over R1CS, with the witness committed
//! by any [`MultilinearPcs`] and the matrices evaluated by the verifier itself.
//!
//! Notation (once): the instance has `2^{s_x}` rows (padded) and `ẑ` has `2^{s_y}` entries
//! in the layout of [`crate::r1cs`]; `Ã, B̃, C̃` are the matrices' extensions in
//! `s_x + s_y` variables and `z̃` is `ẑ`'s extension, so that
//! `(Ãz̃)(x) = Σ_y Ã(x, y)·z̃(y)`. `eq(a, b) = Π_k (a_k b_k + (1 − a_k)(1 − b_k))`.
//!
//! **Protocol** (every challenge squeezed from the transcript):
//! 1. The prover commits to `w̃` (the witness half of `ẑ`, `s_y − 1` variables): `C_w`.
//! 2. `τ ∈ F^{s_x}`. Outer sumcheck (degree 3) of
//!    `0 = Σ_x eq(τ, x)·((Ãz̃)(x)·(B̃z̃)(x) − (C̃z̃)(x))`, ending at `r_x`. The prover sends
//!    `v_A = (Ãz̃)(r_x)`, `v_B`, `v_C`; the verifier checks the final claim equals
//!    `eq(τ, r_x)·(v_A·v_B − v_C)`. (If some constraint fails, the sum over the hypercube of
//!    `eq(τ, x)·F(x)` is a nonzero polynomial in `τ`, so a random `τ` catches it w.h.p.)
//! 3. `ρ_A, ρ_B, ρ_C`. Inner sumcheck (degree 2) of
//!    `ρ_A·v_A + ρ_B·v_B + ρ_C·v_C = Σ_y M(y)·z̃(y)` with
//!    `M(y) = ρ_A·Ã(r_x, y) + ρ_B·B̃(r_x, y) + ρ_C·C̃(r_x, y)`, ending at `r_y = (r_y[0], r_y')`.
//! 4. The prover sends `v_w = w̃(r_y')` and a PCS opening of `C_w` at `r_y'`. The verifier
//!    computes `ũ(r_y')` from the public input itself, `z̃(r_y) = (1 − r_y[0])·v_w +
//!    r_y[0]·ũ(r_y')`, computes `M(r_y)` from the matrices, and checks the final claim equals
//!    `M(r_y)·z̃(r_y)`, then the opening.
//!
//! **What the verifier trusts and reads.** The R1CS itself: in this variant (the paper's
//! "the verifier can evaluate Ã, B̃, C̃ on its own") the verifier reads the matrices and
//! spends time linear in their nonzeros on `M(r_x, r_y)`. Spartan's SPARK computation
//! commitments, which would make that sublinear, are not built. It also trusts the PCS key
//! (a trusted setup for PST) and the soundness of Fiat–Shamir over Poseidon.
//!
//! **Transcript layout** ([`Transcript`], a Poseidon sponge over the pairing's base field
//! `F_q`; every `F` value absorbed as its integer, points as coordinates: the encodings are
//! in [`crate::transcript`]), absorbed in order:
//! 1. the domain tag [`DOMAIN_TAG`] (as bytes);
//! 2. the R1CS digest (32 bytes, as bytes: its length and one `F_q` element);
//! 3. the public input `io` (`ℓ` values; `ℓ` is fixed by the digest);
//! 4. the commitment `C_w` (as the PCS absorbs it: PST a G1 point, Testudo-Comm `T`'s 12
//!    `F_q` components); then `τ` is squeezed (`s_x` challenges);
//! 5. each outer round's `d + 1 = 4` values, squeezing `r_x[j]` after each;
//! 6. `v_A, v_B, v_C`, then `ρ_A, ρ_B, ρ_C` are squeezed;
//! 7. each inner round's 3 values, squeezing `r_y[j]` after each;
//! 8. `v_w`, then whatever the PCS opening absorbs (PST: the quotients; Testudo-Comm: `U`,
//!    each MIPP round before its challenge, `(Â, ĥ)` before `ρ`, the G2 quotients, then its
//!    PST opening).
//!
//! Every challenge is the low 254 bits of one squeezed `F_q` element.
//!
//! Not zero knowledge: the proof reveals evaluations of `w̃`. Testudo hides them by proving
//! this verifier inside a SNARK (`crate::compress`, feature `r1cs`: the final proof still
//! reveals the challenges and `v_M`).

use ark_ff::PrimeField;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::pcs::{MultilinearPcs, PcsTranscript};
use crate::poly::{eq_eval, eq_table, MultilinearPoly};
use crate::r1cs::{R1cs, R1csDigest};
use crate::sumcheck::{self, SumcheckProof};
use crate::transcript::Transcript;
use crate::Error;

#[cfg(feature = "r1cs")]
pub mod constraints;

/// The transcript's domain tag: changes whenever the transcript layout does.
/// `v2`: the sponge moved from `F_r` to `F_q` (points as coordinates, values as integers,
/// 254-bit challenges); `v1` was Poseidon over `F_r` with points absorbed as their compressed
/// encodings.
pub const DOMAIN_TAG: &[u8] = b"testudo/spartan/v2";

/// A Spartan proof with a commitment of type `C` and an opening proof of type `O`
/// (see [`ProofFor`]).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct SpartanProof<F, C, O>
where
    F: PrimeField,
    C: CanonicalSerialize + CanonicalDeserialize,
    O: CanonicalSerialize + CanonicalDeserialize,
{
    /// `C_w`, the commitment to `w̃`.
    pub commitment: C,
    /// The outer sumcheck (degree 3, `s_x` rounds).
    pub outer: SumcheckProof<F>,
    /// `v_A = (Ãz̃)(r_x)`.
    pub v_a: F,
    /// `v_B = (B̃z̃)(r_x)`.
    pub v_b: F,
    /// `v_C = (C̃z̃)(r_x)`.
    pub v_c: F,
    /// The inner sumcheck (degree 2, `s_y` rounds).
    pub inner: SumcheckProof<F>,
    /// `v_w = w̃(r_y')`.
    pub v_w: F,
    /// The PCS opening of `C_w` at `r_y'` to `v_w`.
    pub opening: O,
}

/// The proof type for a given PCS.
pub type ProofFor<F, P> =
    SpartanProof<F, <P as MultilinearPcs<F>>::Commitment, <P as MultilinearPcs<F>>::Proof>;

/// Proves that `witness` satisfies `r1cs` with public input `io`. Refuses (with
/// [`Error::Unsatisfied`]) a witness that does not.
pub fn prove<F, P>(
    ck: &P::CommitterKey,
    r1cs: &R1cs<F>,
    io: &[F],
    witness: &[F],
) -> Result<ProofFor<F, P>, Error>
where
    F: PrimeField,
    P: MultilinearPcs<F>,
{
    let z = r1cs.z_vector(io, witness)?;
    if let Some(constraint) = r1cs.first_unsatisfied(&z) {
        return Err(Error::Unsatisfied { constraint });
    }
    prove_unchecked::<F, P>(ck, r1cs, DOMAIN_TAG, r1cs.digest(), io, z)
}

/// The prover's algorithm run on whatever it is given, with `tag`, `digest` and `io` absorbed
/// as the statement and `z` (in Spartan's layout) as the vector it proves about. Honest use
/// passes [`DOMAIN_TAG`], `r1cs.digest()`, the `io` inside `z` and a satisfying `z`; the
/// attack tests pass something else, to check that the verifier notices.
pub(crate) fn prove_unchecked<F, P>(
    ck: &P::CommitterKey,
    r1cs: &R1cs<F>,
    tag: &[u8],
    digest: R1csDigest,
    io: &[F],
    z: Vec<F>,
) -> Result<ProofFor<F, P>, Error>
where
    F: PrimeField,
    P: MultilinearPcs<F>,
{
    let half = z.len() / 2;
    let w_poly = MultilinearPoly::new(r1cs.witness_vars(), z[..half].to_vec())?;
    let (commitment, hint) = P::commit(ck, &w_poly)?;
    let mut transcript = statement_transcript::<F, P>(tag, digest, io, &commitment)?;

    // Outer sumcheck.
    let tau = transcript.challenges(r1cs.log_rows());
    let [az, bz, cz] = r1cs.products(&z);
    let outer = sumcheck::prove(
        vec![eq_table(&tau), az, bz, cz],
        3,
        |v: &[F]| v[0] * (v[1] * v[2] - v[3]),
        &mut transcript,
    );
    let r_x = outer.point;
    let [_, v_a, v_b, v_c] = outer.final_evals[..] else {
        unreachable!("four polynomials in, four evaluations out")
    };
    transcript.absorb_slice(&[v_a, v_b, v_c]);

    // Inner sumcheck.
    let rho: [F; 3] = [
        transcript.challenge(),
        transcript.challenge(),
        transcript.challenge(),
    ];
    let m = r1cs.bind_rows(&eq_table(&r_x), rho);
    let inner = sumcheck::prove(vec![m, z], 2, |v: &[F]| v[0] * v[1], &mut transcript);
    let r_y = inner.point;

    // The witness evaluation and its opening.
    let v_w = w_poly.evaluate(&r_y[1..])?;
    transcript.absorb(&v_w);
    let opening = P::open(ck, &w_poly, &hint, &r_y[1..], &mut transcript)?;

    Ok(SpartanProof {
        commitment,
        outer: outer.proof,
        v_a,
        v_b,
        v_c,
        inner: inner.proof,
        v_w,
        opening,
    })
}

/// Accepts (`Ok`) iff `proof` shows that some witness satisfies `r1cs` with public input `io`.
pub fn verify<F, P>(
    vk: &P::VerifierKey,
    r1cs: &R1cs<F>,
    io: &[F],
    proof: &ProofFor<F, P>,
) -> Result<(), Error>
where
    F: PrimeField,
    P: MultilinearPcs<F>,
{
    let u = r1cs.public_vector(io)?;
    let mut transcript =
        statement_transcript::<F, P>(DOMAIN_TAG, r1cs.digest(), io, &proof.commitment)?;

    // Outer sumcheck: ends at `eq(τ, r_x)·(v_A·v_B − v_C)`.
    let tau = transcript.challenges(r1cs.log_rows());
    let (outer_claim, r_x) = sumcheck::verify(
        "outer",
        F::zero(),
        r1cs.log_rows(),
        3,
        &proof.outer,
        &mut transcript,
    )?;
    if outer_claim != eq_eval(&tau, &r_x) * (proof.v_a * proof.v_b - proof.v_c) {
        return Err(Error::OuterFinal);
    }
    transcript.absorb_slice(&[proof.v_a, proof.v_b, proof.v_c]);

    // Inner sumcheck: ends at `M(r_y)·z̃(r_y)`.
    let rho: [F; 3] = [
        transcript.challenge(),
        transcript.challenge(),
        transcript.challenge(),
    ];
    let claim = rho[0] * proof.v_a + rho[1] * proof.v_b + rho[2] * proof.v_c;
    let (inner_claim, r_y) = sumcheck::verify(
        "inner",
        claim,
        r1cs.log_cols(),
        2,
        &proof.inner,
        &mut transcript,
    )?;
    let (r_y0, r_y_rest) = (r_y[0], &r_y[1..]);
    let u_eval = MultilinearPoly::new(r1cs.witness_vars(), u)?.evaluate(r_y_rest)?;
    let z_eval = (F::one() - r_y0) * proof.v_w + r_y0 * u_eval;
    let m_eval = r1cs.eval_combined(&eq_table(&r_x), &eq_table(&r_y), rho);
    if inner_claim != m_eval * z_eval {
        return Err(Error::InnerFinal);
    }

    // `v_w` is `w̃(r_y')` for the committed `w̃`.
    transcript.absorb(&proof.v_w);
    P::verify(
        vk,
        &proof.commitment,
        r_y_rest,
        proof.v_w,
        &proof.opening,
        &mut transcript,
    )
}

/// The values a circuit verifying a Spartan proof exposes (`docs/design/testudo-compression.md`,
/// Decision 3, step 1): the statement (`digest`, `io`), the points the sumchecks end at and the
/// combining challenges (`r_x`, `ρ`, `r_y`, all squeezed in the circuit), and `v_M`, which the
/// circuit uses in place of `M(r_x, r_y) = Σ ρ_M·M̃(r_x, r_y)` in the inner final check. The
/// final verifier checks `v_M` against the registered matrices itself
/// ([`Self::check_matrices`]); the circuit is what checks everything else
/// ([`constraints`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PublicValues<F: PrimeField> {
    pub digest: R1csDigest,
    pub io: Vec<F>,
    /// `r_x` (`s_x` values).
    pub r_x: Vec<F>,
    /// `ρ_A, ρ_B, ρ_C`.
    pub rho: [F; 3],
    /// `r_y` (`s_y` values).
    pub r_y: Vec<F>,
    /// The claimed `Σ ρ_M·M̃(r_x, r_y)`.
    pub v_m: F,
}

impl<F: PrimeField> PublicValues<F> {
    /// What an honest prover of the circuit exposes for `proof`: the challenges the verifier's
    /// transcript gives (replayed without checking the proof: run [`verify`] for that) and
    /// `v_M` from `r1cs`. Refuses a proof of the wrong shape or an `io` of the wrong length.
    pub fn for_proof<P: MultilinearPcs<F>>(
        r1cs: &R1cs<F>,
        io: &[F],
        proof: &ProofFor<F, P>,
    ) -> Result<Self, Error> {
        r1cs.public_vector(io)?;
        let mut t = statement_transcript::<F, P>(DOMAIN_TAG, r1cs.digest(), io, &proof.commitment)?;
        let _tau = t.challenges(r1cs.log_rows());
        let r_x = replay_rounds(&mut t, "outer", r1cs.log_rows(), 3, &proof.outer)?;
        t.absorb_slice(&[proof.v_a, proof.v_b, proof.v_c]);
        let rho = [t.challenge(), t.challenge(), t.challenge()];
        let r_y = replay_rounds(&mut t, "inner", r1cs.log_cols(), 2, &proof.inner)?;
        let v_m = r1cs.eval_combined(&eq_table(&r_x), &eq_table(&r_y), rho);
        Ok(Self {
            digest: r1cs.digest(),
            io: io.to_vec(),
            r_x,
            rho,
            r_y,
            v_m,
        })
    }

    /// The final verifier's part: these values are for `r1cs` (its digest, its shape) and
    /// `v_M = Σ ρ_M·M̃(r_x, r_y)` for its matrices (`O(nnz)`).
    pub fn check_matrices(&self, r1cs: &R1cs<F>) -> Result<(), Error> {
        if self.digest != r1cs.digest() {
            return Err(Error::Malformed {
                field: "digest",
                reason: "the public values are for another R1CS".into(),
            });
        }
        r1cs.public_vector(&self.io)?;
        for (field, got, expected) in [
            ("r_x", self.r_x.len(), r1cs.log_rows()),
            ("r_y", self.r_y.len(), r1cs.log_cols()),
        ] {
            if got != expected {
                return Err(Error::Length {
                    field,
                    expected,
                    got,
                });
            }
        }
        let m = r1cs.eval_combined(&eq_table(&self.r_x), &eq_table(&self.r_y), self.rho);
        if m != self.v_m {
            return Err(Error::MatrixEvaluation);
        }
        Ok(())
    }

    /// The circuit's public inputs, in the order [`constraints::PublicValuesVar::new_input`]
    /// allocates them: the digest's chunk(s) as [`crate::transcript::bytes_to_elements`] packs
    /// them (without the length), then `io`, `r_x`, `ρ`, `r_y`, `v_M` as canonical integers.
    pub fn to_field_elements<Q: PrimeField>(&self) -> Vec<Q> {
        use crate::transcript::{bytes_to_elements, scalar_to_base};
        let mut out: Vec<Q> = bytes_to_elements::<Q>(&self.digest.0)[1..].to_vec();
        out.extend(
            self.io
                .iter()
                .chain(&self.r_x)
                .chain(&self.rho)
                .chain(&self.r_y)
                .chain(std::iter::once(&self.v_m))
                .map(scalar_to_base::<F, Q>),
        );
        out
    }
}

/// A sumcheck's challenges as its verifier squeezes them (each round absorbed, then its
/// challenge), without its checks; a proof of another shape is refused.
fn replay_rounds<F: PrimeField, Q: PrimeField + ark_crypto_primitives::sponge::Absorb>(
    t: &mut Transcript<F, Q>,
    name: &'static str,
    rounds: usize,
    degree: usize,
    proof: &SumcheckProof<F>,
) -> Result<Vec<F>, Error> {
    if proof.rounds.len() != rounds || proof.rounds.iter().any(|e| e.len() != degree + 1) {
        return Err(Error::Malformed {
            field: name,
            reason: format!("expected {rounds} rounds of {} values", degree + 1),
        });
    }
    Ok(proof
        .rounds
        .iter()
        .map(|evals| {
            t.absorb_slice(evals);
            t.challenge()
        })
        .collect())
}

/// Steps 1–4 of the transcript layout (module doc).
fn statement_transcript<F, P>(
    tag: &[u8],
    digest: R1csDigest,
    io: &[F],
    commitment: &P::Commitment,
) -> Result<PcsTranscript<F, P>, Error>
where
    F: PrimeField,
    P: MultilinearPcs<F>,
{
    let mut t = Transcript::new(tag)?;
    t.absorb_bytes(&digest.0);
    t.absorb_slice(io);
    P::absorb_commitment(commitment, &mut t);
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Bls12_381, Fr};
    use ark_ec::CurveGroup;
    use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

    use crate::pst::{self, Pst, PstCommitterKey, PstVerifierKey};
    use crate::r1cs::test_instances::random_satisfiable;
    use crate::r1cs::tests::{chain_matrices, squaring_chain};

    type P = Pst<Bls12_381>;
    type Proof = ProofFor<Fr, P>;

    fn keys(nu: usize) -> (PstCommitterKey<Bls12_381>, PstVerifierKey<Bls12_381>) {
        pst::setup_insecure_from_seed::<Bls12_381>(nu, 7).unwrap()
    }

    /// An honest, accepted proof for the squaring chain of 16 constraints (15 witness
    /// values: `w̃` has 4 variables), with everything that made it.
    struct Honest {
        ck: PstCommitterKey<Bls12_381>,
        vk: PstVerifierKey<Bls12_381>,
        r1cs: R1cs<Fr>,
        io: Vec<Fr>,
        w: Vec<Fr>,
        proof: Proof,
    }

    fn honest() -> Honest {
        let (ck, vk) = keys(5);
        let (r1cs, io, w) = squaring_chain(16, 3);
        let proof = prove::<Fr, P>(&ck, &r1cs, &io, &w).unwrap();
        verify::<Fr, P>(&vk, &r1cs, &io, &proof).unwrap();
        Honest {
            ck,
            vk,
            r1cs,
            io,
            w,
            proof,
        }
    }

    #[test]
    fn complete_on_random_instances_from_2_to_the_4_to_2_to_the_10() {
        let (ck, vk) = keys(10);
        for log_m in 4..=10 {
            let m = 1usize << log_m;
            // Odd sizes on purpose: padding of rows, witness and io all exercised.
            for (num_io, num_witness) in [(3, m - 3), (1, m / 2 + 1)] {
                let (r1cs, io, w) = random_satisfiable(m, num_io, num_witness, log_m as u64);
                let proof = prove::<Fr, P>(&ck, &r1cs, &io, &w).unwrap();
                assert_eq!(proof.outer.rounds.len(), log_m);
                verify::<Fr, P>(&vk, &r1cs, &io, &proof).unwrap();
            }
        }
    }

    #[test]
    fn complete_on_squaring_chains() {
        let (ck, vk) = keys(10);
        for log_m in 4..=10 {
            let (r1cs, io, w) = squaring_chain(1 << log_m, 5);
            let proof = prove::<Fr, P>(&ck, &r1cs, &io, &w).unwrap();
            verify::<Fr, P>(&vk, &r1cs, &io, &proof).unwrap();
        }
        // Tiny shapes: one constraint, no witness; zero witness variables to commit to.
        let (r1cs, io, w) = squaring_chain(1, 5);
        let proof = prove::<Fr, P>(&ck, &r1cs, &io, &w).unwrap();
        verify::<Fr, P>(&vk, &r1cs, &io, &proof).unwrap();
    }

    #[test]
    fn proof_round_trips_through_serialization() {
        let Honest {
            vk,
            r1cs,
            io,
            proof,
            ..
        } = honest();
        let mut bytes = Vec::new();
        proof.serialize_compressed(&mut bytes).unwrap();
        let back = Proof::deserialize_compressed(&bytes[..]).unwrap();
        assert_eq!(back, proof);
        verify::<Fr, P>(&vk, &r1cs, &io, &back).unwrap();
    }

    #[test]
    fn wrong_witness_is_refused_and_a_forged_proof_is_rejected() {
        let (ck, vk) = keys(5);
        let (r1cs, io, mut w) = squaring_chain(16, 3);
        w[6] += Fr::from(1u64);
        assert_eq!(
            prove::<Fr, P>(&ck, &r1cs, &io, &w).unwrap_err(),
            Error::Unsatisfied { constraint: 6 }
        );
        // The prover's algorithm run anyway: every message is computed honestly from the
        // unsatisfying z, so the outer sum is not 0 and the first round says so.
        let z = r1cs.z_vector(&io, &w).unwrap();
        let forged =
            prove_unchecked::<Fr, P>(&ck, &r1cs, DOMAIN_TAG, r1cs.digest(), &io, z).unwrap();
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &forged),
            Err(Error::SumcheckRound {
                sumcheck: "outer",
                round: 0
            })
        );
        // Claiming the sum is 0 in round 0 (moving the difference between p(0) and p(1))
        // passes round 0 and is caught by the next.
        let mut forged2 = forged.clone();
        let excess = forged2.outer.rounds[0][0] + forged2.outer.rounds[0][1];
        forged2.outer.rounds[0][1] -= excess;
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &forged2),
            Err(Error::SumcheckRound {
                sumcheck: "outer",
                round: 1
            })
        );
    }

    #[test]
    fn tampered_round_polynomials_are_rejected() {
        let Honest {
            vk,
            r1cs,
            io,
            proof,
            ..
        } = honest();
        let one = Fr::from(1u64);
        // A middle round changed but still summing to its claim: the next round catches it.
        let mut bad = proof.clone();
        bad.outer.rounds[1][0] += one;
        bad.outer.rounds[1][1] -= one;
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::SumcheckRound {
                sumcheck: "outer",
                round: 2
            })
        );
        // The last round of each sumcheck: the final checks catch it.
        let mut bad = proof.clone();
        let last = bad.outer.rounds.len() - 1;
        bad.outer.rounds[last][2] += one;
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::OuterFinal)
        );
        let mut bad = proof.clone();
        let last = bad.inner.rounds.len() - 1;
        bad.inner.rounds[last][0] += one;
        bad.inner.rounds[last][1] -= one;
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::InnerFinal)
        );
        // A round of the wrong degree is malformed, not a panic.
        let mut bad = proof.clone();
        bad.inner.rounds[0].push(one);
        assert!(matches!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::Malformed { field: "inner", .. })
        ));
        let mut bad = proof;
        bad.outer.rounds.pop();
        assert!(matches!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::Malformed { field: "outer", .. })
        ));
    }

    #[test]
    fn tampered_final_evaluation_claims_are_rejected() {
        let Honest {
            vk,
            r1cs,
            io,
            proof,
            ..
        } = honest();
        let one = Fr::from(1u64);
        for i in 0..3 {
            let mut bad = proof.clone();
            *[&mut bad.v_a, &mut bad.v_b, &mut bad.v_c][i] += one;
            assert_eq!(
                verify::<Fr, P>(&vk, &r1cs, &io, &bad),
                Err(Error::OuterFinal)
            );
        }
        let mut bad = proof;
        bad.v_w += one;
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::InnerFinal)
        );
    }

    #[test]
    fn tampered_or_foreign_openings_are_rejected() {
        let Honest {
            ck,
            vk,
            r1cs,
            io,
            w,
            proof,
        } = honest();
        let mut bad = proof.clone();
        bad.opening.quotients[0] = (bad.opening.quotients[0] + vk.g).into_affine();
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &bad),
            Err(Error::Opening("PST pairing check failed"))
        );
        // The prover commits to another witness polynomial (here w̃ + 1 at one entry) but
        // runs both sumchecks with the true z and opens the commitment honestly: the value it
        // would have to open to is v_w, which the other polynomial does not take at r_y'.
        let z = r1cs.z_vector(&io, &w).unwrap();
        let half = z.len() / 2;
        let mut other = z[..half].to_vec();
        other[0] += Fr::from(1u64);
        let other = MultilinearPoly::new(r1cs.witness_vars(), other).unwrap();
        let (c_other, ()) = P::commit(&ck, &other).unwrap();
        // Swapping the commitment alone changes every challenge: the sumchecks fail.
        let mut bad = proof.clone();
        bad.commitment = c_other;
        assert!(verify::<Fr, P>(&vk, &r1cs, &io, &bad).is_err());
        // A careful forger reruns everything with the true z under the new commitment: only
        // the opening can catch it.
        let forged = forge_with_commitment(&ck, &r1cs, &io, z, &other, c_other);
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io, &forged),
            Err(Error::Opening("PST pairing check failed"))
        );
    }

    /// The honest prover's steps with `z` for the sumchecks but `committed` (with commitment
    /// `c`) for the commitment and the opening; `v_w` from `z` (so the inner check passes).
    fn forge_with_commitment(
        ck: &PstCommitterKey<Bls12_381>,
        r1cs: &R1cs<Fr>,
        io: &[Fr],
        z: Vec<Fr>,
        committed: &MultilinearPoly<Fr>,
        c: <P as MultilinearPcs<Fr>>::Commitment,
    ) -> Proof {
        let mut t = statement_transcript::<Fr, P>(DOMAIN_TAG, r1cs.digest(), io, &c).unwrap();
        let tau = t.challenges(r1cs.log_rows());
        let [az, bz, cz] = r1cs.products(&z);
        let outer = sumcheck::prove(
            vec![eq_table(&tau), az, bz, cz],
            3,
            |v: &[Fr]| v[0] * (v[1] * v[2] - v[3]),
            &mut t,
        );
        let [_, v_a, v_b, v_c] = outer.final_evals[..] else {
            unreachable!()
        };
        t.absorb_slice(&[v_a, v_b, v_c]);
        let rho = [t.challenge(), t.challenge(), t.challenge()];
        let half = z.len() / 2;
        let w_true = MultilinearPoly::new(r1cs.witness_vars(), z[..half].to_vec()).unwrap();
        let m = r1cs.bind_rows(&eq_table(&outer.point), rho);
        let inner = sumcheck::prove(vec![m, z], 2, |v: &[Fr]| v[0] * v[1], &mut t);
        let v_w = w_true.evaluate(&inner.point[1..]).unwrap();
        t.absorb(&v_w);
        let opening = P::open(ck, committed, &(), &inner.point[1..], &mut t).unwrap();
        SpartanProof {
            commitment: c,
            outer: outer.proof,
            v_a,
            v_b,
            v_c,
            inner: inner.proof,
            v_w,
            opening,
        }
    }

    #[test]
    fn a_proof_for_one_public_input_does_not_verify_another() {
        let Honest {
            ck,
            vk,
            r1cs,
            io,
            w,
            proof,
        } = honest();
        let mut io2 = io.clone();
        io2[1] += Fr::from(1u64);
        assert!(verify::<Fr, P>(&vk, &r1cs, &io2, &proof).is_err());
        // The real attack: the transcript says io2 (so every challenge is the verifier's),
        // but the prover's z holds the io that the witness satisfies. Everything the prover
        // sends is consistent; only the verifier's own ũ(r_y') from io2 differs.
        let z = r1cs.z_vector(&io, &w).unwrap();
        let forged =
            prove_unchecked::<Fr, P>(&ck, &r1cs, DOMAIN_TAG, r1cs.digest(), &io2, z).unwrap();
        assert_eq!(
            verify::<Fr, P>(&vk, &r1cs, &io2, &forged),
            Err(Error::InnerFinal)
        );
        // A public input of the wrong length is an error naming it.
        assert!(matches!(
            verify::<Fr, P>(&vk, &r1cs, &io[..1], &proof),
            Err(Error::Length {
                field: "public input (io)",
                ..
            })
        ));
    }

    #[test]
    fn a_proof_for_one_r1cs_does_not_verify_another() {
        let Honest {
            ck,
            vk,
            r1cs,
            io,
            w,
            proof,
        } = honest();
        // Same shape, one coefficient changed: constraint 3 now reads 2·v_3·v_3 = v_4.
        let (r1cs2, _, _) = squaring_chain(16, 3);
        let other = {
            let one = Fr::from(1u64);
            let [mut a, b, c] = chain_matrices(16);
            a[3].2 = one + one;
            R1cs::new(16, 2, 15, a, b, c).unwrap()
        };
        assert_eq!(r1cs2.digest(), r1cs.digest());
        assert_ne!(other.digest(), r1cs.digest());
        assert!(verify::<Fr, P>(&vk, &other, &io, &proof).is_err());
        // The real attack: the transcript carries the other instance's digest, the prover
        // computes with the instance its witness satisfies. Only the verifier's own M(r_x, r_y)
        // differs.
        let z = r1cs.z_vector(&io, &w).unwrap();
        let forged =
            prove_unchecked::<Fr, P>(&ck, &r1cs, DOMAIN_TAG, other.digest(), &io, z).unwrap();
        assert_eq!(
            verify::<Fr, P>(&vk, &other, &io, &forged),
            Err(Error::InnerFinal)
        );
        // An instance of another shape: the proof has the wrong number of rounds, which is
        // an error, not a panic.
        let (bigger, io_big, _) = squaring_chain(32, 3);
        assert!(matches!(
            verify::<Fr, P>(&vk, &bigger, &io_big, &proof),
            Err(Error::Malformed { field: "outer", .. })
        ));
    }

    #[test]
    fn a_proof_whose_challenges_come_from_another_transcript_is_rejected() {
        let (ck, vk) = keys(5);
        let (r1cs, io, w) = squaring_chain(16, 3);
        let z = r1cs.z_vector(&io, &w).unwrap();
        // An honest prover with a satisfying witness, every message computed correctly, but
        // the challenges squeezed from a transcript with another domain tag (the retired v1
        // tag among them). The outer sum is 0 whatever τ is, so round 0 passes; round 1's
        // claim is round 0's polynomial at the verifier's r_x[0], not the prover's.
        for tag in [&b"testudo/spartan/v1"[..], b"testudo/spartan/v3", b""] {
            let other =
                prove_unchecked::<Fr, P>(&ck, &r1cs, tag, r1cs.digest(), &io, z.clone()).unwrap();
            assert_eq!(
                verify::<Fr, P>(&vk, &r1cs, &io, &other),
                Err(Error::SumcheckRound {
                    sumcheck: "outer",
                    round: 1
                })
            );
        }
        // The same call with the real tag is the honest proof.
        let same = prove_unchecked::<Fr, P>(&ck, &r1cs, DOMAIN_TAG, r1cs.digest(), &io, z).unwrap();
        verify::<Fr, P>(&vk, &r1cs, &io, &same).unwrap();
    }

    #[test]
    fn key_too_small_is_an_error() {
        let (ck, _) = keys(3);
        let (r1cs, io, w) = squaring_chain(16, 3);
        assert_eq!(
            prove::<Fr, P>(&ck, &r1cs, &io, &w).unwrap_err(),
            Error::KeyTooSmall {
                supported: 3,
                needed: 4
            }
        );
    }

    mod with_testudo_comm {
        use super::*;
        use crate::testudo_comm::{self, TestudoComm};

        type T = TestudoComm<Bls12_381>;

        #[test]
        fn complete_on_random_instances_from_2_to_the_4_to_2_to_the_10() {
            let (ck, vk) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(10, 11).unwrap();
            for log_m in 4..=10 {
                let m = 1usize << log_m;
                let (r1cs, io, w) = random_satisfiable(m, 2, m - 2, 100 + log_m as u64);
                let proof = prove::<Fr, T>(&ck, &r1cs, &io, &w).unwrap();
                verify::<Fr, T>(&vk, &r1cs, &io, &proof).unwrap();
            }
        }

        #[test]
        fn wrong_witness_io_or_opening_is_rejected() {
            let (ck, vk) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(5, 12).unwrap();
            let (r1cs, io, w) = squaring_chain(16, 3);
            let proof = prove::<Fr, T>(&ck, &r1cs, &io, &w).unwrap();
            verify::<Fr, T>(&vk, &r1cs, &io, &proof).unwrap();

            let mut bad_w = w.clone();
            bad_w[0] += Fr::from(1u64);
            let z = r1cs.z_vector(&io, &bad_w).unwrap();
            let forged =
                prove_unchecked::<Fr, T>(&ck, &r1cs, DOMAIN_TAG, r1cs.digest(), &io, z).unwrap();
            assert!(matches!(
                verify::<Fr, T>(&vk, &r1cs, &io, &forged),
                Err(Error::SumcheckRound { .. })
            ));

            let mut io2 = io.clone();
            io2[0] += Fr::from(1u64);
            let z = r1cs.z_vector(&io, &w).unwrap();
            let forged =
                prove_unchecked::<Fr, T>(&ck, &r1cs, DOMAIN_TAG, r1cs.digest(), &io2, z).unwrap();
            assert_eq!(
                verify::<Fr, T>(&vk, &r1cs, &io2, &forged),
                Err(Error::InnerFinal)
            );

            let other = prove_unchecked::<Fr, T>(
                &ck,
                &r1cs,
                b"testudo/spartan/v1",
                r1cs.digest(),
                &io,
                r1cs.z_vector(&io, &w).unwrap(),
            )
            .unwrap();
            assert_eq!(
                verify::<Fr, T>(&vk, &r1cs, &io, &other),
                Err(Error::SumcheckRound {
                    sumcheck: "outer",
                    round: 1
                })
            );

            let mut bad = proof;
            bad.opening.a_hat = (bad.opening.a_hat + vk.pst.g).into_affine();
            assert!(matches!(
                verify::<Fr, T>(&vk, &r1cs, &io, &bad),
                Err(Error::Opening(_))
            ));
        }
    }
}

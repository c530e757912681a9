//! The sumcheck prover over the [`crate::kernels`] boundary, with the message format and
//! transcript use of [`testudo::sumcheck`] (whose verifier this crate uses): round `j` sends
//! `p_j(0), …, p_j(d)`, the transcript absorbs them and squeezes `r_j`; variables are bound
//! most significant first, so the final point is in [`testudo::poly`]'s order.

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use testudo::sumcheck::SumcheckProof;
use testudo::transcript::Transcript;

use crate::kernels;
use crate::Error;

/// What the prover is left with: the proof, the point `r` and every table's value at `r`.
pub struct ProverOutput<F: PrimeField> {
    pub proof: SumcheckProof<F>,
    pub point: Vec<F>,
    pub final_evals: Vec<F>,
}

/// Proves `Σ_b G(f_1(b), …, f_k(b))` for tables of one power-of-two length; `degree`
/// bounds `G`'s total degree.
pub fn prove<F, Q, G>(
    mut tables: Vec<Vec<F>>,
    degree: usize,
    combine: G,
    transcript: &mut Transcript<F, Q>,
) -> ProverOutput<F>
where
    F: PrimeField,
    Q: PrimeField + Absorb,
    G: Fn(&[F]) -> F + Sync,
{
    let rounds_n = tables[0].len().trailing_zeros() as usize;
    let mut rounds = Vec::with_capacity(rounds_n);
    let mut point = Vec::with_capacity(rounds_n);
    for _ in 0..rounds_n {
        let msg = kernels::sumcheck_round(&tables, degree, &combine);
        transcript.absorb_slice(&msg);
        let r = transcript.challenge();
        rounds.push(msg);
        point.push(r);
        for t in tables.iter_mut() {
            kernels::fix_first_variable(t, r);
        }
    }
    ProverOutput {
        proof: SumcheckProof { rounds },
        point,
        final_evals: tables.iter().map(|t| t[0]).collect(),
    }
}

/// Checks a sumcheck proof of `claim` ([`testudo::sumcheck::verify`]) and returns the final
/// claim and the point; a round that does not sum to its claim is
/// [`Error::SumcheckRound`], a wrong shape [`Error::Malformed`].
pub fn verify<F, Q>(
    name: &'static str,
    claim: F,
    num_rounds: usize,
    degree: usize,
    proof: &SumcheckProof<F>,
    transcript: &mut Transcript<F, Q>,
) -> Result<(F, Vec<F>), Error>
where
    F: PrimeField,
    Q: PrimeField + Absorb,
{
    testudo::sumcheck::verify(name, claim, num_rounds, degree, proof, transcript).map_err(|e| {
        match e {
            testudo::Error::SumcheckRound { sumcheck, round } => {
                Error::SumcheckRound { sumcheck, round }
            }
            testudo::Error::Malformed { field, reason } => Error::Malformed { field, reason },
            other => Error::Component(other),
        }
    })
}

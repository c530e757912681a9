//! The HyperPlonk prover. The transcript (Poseidon over `F_q`, [`testudo::transcript`])
//! absorbs and squeezes, in this order (the verifier replays it exactly):
//!
//! 1. the domain tag `"hyperplonk v1"`, the verifying key's digest (which covers the circuit
//!    digest, `μ`, `ℓ`, the eight index commitments and the PST key), the public input `x`;
//! 2. the commitments to `w_1, w_2, w_3`; squeeze `β, γ`;
//! 3. the commitments to `φ, π` ([`crate::permcheck`]); squeeze `α` and `r ∈ F^μ`;
//! 4. ZeroCheck's rounds ([`crate::zerocheck`]; each round absorbs its message and squeezes
//!    `ρ_j`);
//! 5. the thirteen evaluations at `ρ`, the four shifted ones and the grand product; squeeze
//!    `η`;
//! 6. OpenCheck's rounds ([`crate::opencheck`]), ending at `s`;
//! 7. the thirteen evaluations at `s`; squeeze `λ`;
//! 8. the PST opening's quotients ([`testudo::pst`]).

use std::time::{Duration, Instant};

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{Field, PrimeField};
use testudo::pst::Pst;
use testudo::transcript::Transcript;
use testudo::{MultilinearPcs, MultilinearPoly};

use crate::circuit::Witness;
use crate::index::ProvingKey;
use crate::proof::{polys, Proof};
use crate::{kernels, opencheck, permcheck, sumcheck, zerocheck, Error};

/// The transcript's domain tag.
pub const DOMAIN_TAG: &[u8] = b"hyperplonk v1";

/// The transcript both sides start from (step 1 of the module doc).
pub(crate) fn start_transcript<E: Pairing>(
    vk_digest: &[u8; 32],
    public: &[E::ScalarField],
) -> Result<Transcript<E::ScalarField, E::BaseField>, Error>
where
    E::BaseField: Absorb,
{
    let mut t = Transcript::new(DOMAIN_TAG)?;
    t.absorb_bytes(vk_digest);
    t.absorb_slice(public);
    Ok(t)
}

/// What a test prover may do wrong on purpose (the soundness tests); [`prove`] is `Honest`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cheat {
    Honest,
    /// Prove without checking the witness (an unsatisfied gate or a broken copy constraint).
    SkipWitnessCheck,
    /// Send a commitment to `w_1` shifted by `g`, then continue honestly.
    Commitment,
    /// Send `w_1(ρ) + 1`, then continue honestly from the transcript that absorbed it.
    Evaluation,
}

/// Proves that `witness` satisfies the circuit of `pk` with public input `public`. Refuses
/// (with the failing gate or wire) a witness that does not.
pub fn prove<E: Pairing>(
    pk: &ProvingKey<E>,
    public: &[E::ScalarField],
    witness: &Witness<E::ScalarField>,
) -> Result<Proof<E>, Error>
where
    E::BaseField: Absorb,
{
    prove_with(pk, public, witness, Cheat::Honest).map(|(proof, _)| proof)
}

/// Wall-clock time of each prover step (zkSpeed's Fig. 8 steps), for benchmarks.
#[derive(Clone, Debug, Default)]
pub struct ProverTimings {
    /// Checking the witness against the circuit.
    pub witness_check: Duration,
    /// Three MSMs (sparse ones unless [`WitnessMsm::Dense`]): the commitments to `w_1, w_2, w_3`.
    pub witness_commit: Duration,
    /// `N, D`, the fraction MLE (batched inversion) and the product tree.
    pub perm_tables: Duration,
    /// Two MSMs: the commitments to `φ, π`.
    pub perm_commit: Duration,
    /// The ZeroCheck sumcheck (with the `eq` table and the MLE updates).
    pub zerocheck: Duration,
    /// The evaluations at `ρ`, the shifted points and the root.
    pub batch_evals: Duration,
    /// OpenCheck (the `g_t` combinations and the sumcheck) and the evaluations at `s`.
    pub opencheck: Duration,
    /// The combined MLE and its PST opening (`μ` MSMs of halving sizes).
    pub opening: Duration,
}

/// [`prove`], also returning how long each step took.
pub fn prove_timed<E: Pairing>(
    pk: &ProvingKey<E>,
    public: &[E::ScalarField],
    witness: &Witness<E::ScalarField>,
) -> Result<(Proof<E>, ProverTimings), Error>
where
    E::BaseField: Absorb,
{
    prove_with(pk, public, witness, Cheat::Honest)
}

/// Which MSM kernel commits to the witness columns. The proof is the same either way;
/// [`prove`] uses `Sparse`, `Dense` is there to measure what the sparse kernel saves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WitnessMsm {
    /// [`kernels::commit`]: one bucket MSM over every scalar.
    Dense,
    /// [`kernels::commit_sparse`]: zeros skipped, ones added, the rest bucketed.
    Sparse,
}

/// [`prove_timed`] with the witness commitments' kernel chosen (benchmarks).
pub fn prove_timed_with<E: Pairing>(
    pk: &ProvingKey<E>,
    public: &[E::ScalarField],
    witness: &Witness<E::ScalarField>,
    msm: WitnessMsm,
) -> Result<(Proof<E>, ProverTimings), Error>
where
    E::BaseField: Absorb,
{
    prove_inner(pk, public, witness, Cheat::Honest, msm)
}

pub(crate) fn prove_with<E: Pairing>(
    pk: &ProvingKey<E>,
    public: &[E::ScalarField],
    witness: &Witness<E::ScalarField>,
    cheat: Cheat,
) -> Result<(Proof<E>, ProverTimings), Error>
where
    E::BaseField: Absorb,
{
    prove_inner(pk, public, witness, cheat, WitnessMsm::Sparse)
}

fn prove_inner<E: Pairing>(
    pk: &ProvingKey<E>,
    public: &[E::ScalarField],
    witness: &Witness<E::ScalarField>,
    cheat: Cheat,
    msm: WitnessMsm,
) -> Result<(Proof<E>, ProverTimings), Error>
where
    E::BaseField: Absorb,
{
    let mut timings = ProverTimings::default();
    let mut clock = Instant::now();
    let mut lap = |slot: &mut Duration| {
        *slot = clock.elapsed();
        clock = Instant::now();
    };
    let circuit = &pk.circuit;
    if cheat == Cheat::SkipWitnessCheck {
        circuit.public_column(public)?;
    } else {
        circuit.check(public, witness)?;
    }
    lap(&mut timings.witness_check);
    let mu = circuit.num_vars();
    let mut t = start_transcript::<E>(&pk.vk.digest(), public)?;

    // 2. Witness commitments (mostly 0/1 scalars: the sparse kernel), β, γ.
    let w = &witness.columns;
    let mut witness_comms = w
        .iter()
        .map(|c| match msm {
            WitnessMsm::Dense => kernels::commit::<E>(&pk.ck, c),
            WitnessMsm::Sparse => kernels::commit_sparse::<E>(&pk.ck, c),
        })
        .collect::<Result<Vec<_>, _>>()?;
    if cheat == Cheat::Commitment {
        witness_comms[0].0 = (witness_comms[0].0.into_group() + pk.vk.pst.g).into_affine();
    }
    lap(&mut timings.witness_commit);
    for c in &witness_comms {
        t.absorb_point(&c.0);
    }
    let (beta, gamma) = (t.challenge(), t.challenge());

    // 3. PermCheck's tables, their commitments, α, r.
    let sigma = circuit.sigma_columns();
    let id = circuit.identity_columns();
    let (n, d) = permcheck::numerators_denominators(w, &id, &sigma, beta, gamma);
    let phi = permcheck::fraction(&n, &d)?;
    let pi = permcheck::product_tree(&phi);
    let (p1, p2) = permcheck::shifted(&phi, &pi);
    lap(&mut timings.perm_tables);
    let phi_comm = kernels::commit::<E>(&pk.ck, &phi)?;
    let pi_comm = kernels::commit::<E>(&pk.ck, &pi)?;
    lap(&mut timings.perm_commit);
    t.absorb_point(&phi_comm.0);
    t.absorb_point(&pi_comm.0);
    let alpha = t.challenge();
    let r = t.challenges(mu);

    // 4. ZeroCheck.
    let s = circuit.selectors();
    let mut tables = Vec::with_capacity(zerocheck::NUM_TABLES);
    tables.push(kernels::eq_table(&r));
    tables.extend(s.columns().into_iter().cloned());
    tables.extend(w.iter().cloned());
    tables.push(circuit.public_column(public)?);
    tables.extend(n);
    tables.extend(d);
    tables.extend([phi.clone(), pi.clone(), p1, p2]);
    let zc = sumcheck::prove(
        tables,
        zerocheck::DEGREE,
        |row: &[E::ScalarField]| zerocheck::combine(row, alpha),
        &mut t,
    );
    let rho = zc.point;

    lap(&mut timings.zerocheck);
    // 5. Evaluations at ρ, the shifted points and the root.
    let refs: Vec<&[E::ScalarField]> = s
        .columns()
        .into_iter()
        .map(Vec::as_slice)
        .chain(sigma.iter().map(Vec::as_slice))
        .chain(w.iter().map(Vec::as_slice))
        .chain([phi.as_slice(), pi.as_slice()])
        .collect();
    let mut evals_rho = kernels::evaluate_many(&refs, &rho);
    if cheat == Cheat::Evaluation {
        evals_rho[polys::W[0]] += E::ScalarField::ONE;
    }
    let points = opencheck::points(&rho);
    let phi_pi = [refs[polys::PHI], refs[polys::PI]];
    let at_0 = kernels::evaluate_many(&phi_pi, &points[1]);
    let at_1 = kernels::evaluate_many(&phi_pi, &points[2]);
    let evals_shifted = vec![at_0[0], at_1[0], at_0[1], at_1[1]];
    let product = refs[polys::PI][(1 << mu) - 2];
    lap(&mut timings.batch_evals);
    t.absorb_slice(&evals_rho);
    t.absorb_slice(&evals_shifted);
    t.absorb(&product);
    let eta = t.challenge();

    // 6. OpenCheck.
    let weights = opencheck::weights(eta);
    let mut tables: Vec<Vec<E::ScalarField>> =
        points.iter().map(|z| kernels::eq_table(z)).collect();
    for wt in &weights {
        tables.push(linear_combination(&refs, wt));
    }
    let oc = sumcheck::prove(tables, opencheck::DEGREE, opencheck::combine, &mut t);
    let s_point = oc.point;

    // 7. Evaluations at s, λ.
    let evals_s = kernels::evaluate_many(&refs, &s_point);
    lap(&mut timings.opencheck);
    t.absorb_slice(&evals_s);
    let lambda = t.challenge();

    // 8. One PST opening of Σ λ^i f_i at s.
    let lambdas = opencheck::powers(lambda, polys::COUNT);
    let combined = MultilinearPoly::new(mu, linear_combination(&refs, &lambdas))?;
    let opening = Pst::<E>::open(&pk.ck, &combined, &(), &s_point, &mut t)?;

    lap(&mut timings.opening);
    let proof = Proof {
        witness_comms,
        phi_comm,
        pi_comm,
        zerocheck: zc.proof,
        evals_rho,
        evals_shifted,
        product,
        opencheck: oc.proof,
        evals_s,
        opening,
    };
    Ok((proof, timings))
}

/// `Σ_i c_i·f_i` over tables of one length.
fn linear_combination<F: PrimeField>(tables: &[&[F]], coeffs: &[F]) -> Vec<F> {
    let mut out = vec![F::zero(); tables[0].len()];
    for (t, c) in tables.iter().zip(coeffs) {
        if c.is_zero() {
            continue;
        }
        for (o, v) in out.iter_mut().zip(t.iter()) {
            *o += *c * v;
        }
    }
    out
}

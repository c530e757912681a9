//! The HyperPlonk verifier: replays the transcript of [`crate::prover`] and checks, in
//! order, the proof's shape, ZeroCheck's rounds and final claim, the grand product,
//! OpenCheck's rounds and final claim, and the one PST opening. Its work is `O(μ)` group and
//! field operations plus `O(ℓ)` for the public input and one multi-pairing of `μ + 1` pairs.

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_ec::CurveGroup;
use ark_ff::{Field, PrimeField, Zero};
use testudo::poly::eq_eval;
use testudo::pst::{Pst, PstCommitment};
use testudo::MultilinearPcs;

use crate::circuit::{identity_eval, public_eval};
use crate::index::VerifyingKey;
use crate::proof::{polys, Proof};
use crate::prover::start_transcript;
use crate::zerocheck::Values;
use crate::{kernels, opencheck, permcheck, sumcheck, zerocheck, Error};

/// Accepts (`Ok`) iff `proof` shows that the circuit of `vk` is satisfiable with public
/// input `public`.
pub fn verify<E: Pairing>(
    vk: &VerifyingKey<E>,
    public: &[E::ScalarField],
    proof: &Proof<E>,
) -> Result<(), Error>
where
    E::BaseField: Absorb,
{
    vk.check_shape()?;
    check_shape(vk, public, proof)?;
    let mu = vk.num_vars;
    let mut t = start_transcript::<E>(&vk.digest(), public)?;

    for c in &proof.witness_comms {
        t.absorb_point(&c.0);
    }
    let (beta, gamma) = (t.challenge(), t.challenge());
    t.absorb_point(&proof.phi_comm.0);
    t.absorb_point(&proof.pi_comm.0);
    let alpha = t.challenge();
    let r = t.challenges(mu);

    // ZeroCheck.
    let (zc_final, rho) = sumcheck::verify(
        "ZeroCheck",
        E::ScalarField::zero(),
        mu,
        zerocheck::DEGREE,
        &proof.zerocheck,
        &mut t,
    )?;
    let e = &proof.evals_rho;
    t.absorb_slice(e);
    t.absorb_slice(&proof.evals_shifted);
    t.absorb(&proof.product);
    let [phi_0, phi_1, pi_0, pi_1] = [0, 1, 2, 3].map(|k| proof.evals_shifted[k]);
    let w: [E::ScalarField; 3] = std::array::from_fn(|j| e[polys::W[j]]);
    let values = Values {
        q: [
            e[polys::Q_L],
            e[polys::Q_R],
            e[polys::Q_M],
            e[polys::Q_O],
            e[polys::Q_C],
        ],
        w,
        public: public_eval(public, &rho),
        n: std::array::from_fn(|j| w[j] + beta * identity_eval(j, &rho) + gamma),
        d: std::array::from_fn(|j| w[j] + beta * e[polys::SIGMA[j]] + gamma),
        phi: e[polys::PHI],
        pi: e[polys::PI],
        p1: permcheck::shifted_eval(rho[0], phi_0, pi_0),
        p2: permcheck::shifted_eval(rho[0], phi_1, pi_1),
    };
    if zc_final != eq_eval(&rho, &r) * zerocheck::h(&values, alpha) {
        return Err(Error::ZeroCheckFinal);
    }
    if proof.product != E::ScalarField::ONE {
        return Err(Error::ProductNotOne);
    }

    // OpenCheck.
    let eta = t.challenge();
    let claimed: Vec<E::ScalarField> = e
        .iter()
        .chain(&proof.evals_shifted)
        .chain(std::iter::once(&proof.product))
        .copied()
        .collect();
    let claim: E::ScalarField = opencheck::powers(eta, claimed.len())
        .iter()
        .zip(&claimed)
        .map(|(a, b)| *a * b)
        .sum();
    let (oc_final, s) = sumcheck::verify(
        "OpenCheck",
        claim,
        mu,
        opencheck::DEGREE,
        &proof.opencheck,
        &mut t,
    )?;
    t.absorb_slice(&proof.evals_s);
    let points = opencheck::points(&rho);
    let expected: E::ScalarField = opencheck::weights(eta)
        .iter()
        .zip(&points)
        .map(|(wt, z)| eq_eval(&s, z) * dot(wt, &proof.evals_s))
        .sum();
    if oc_final != expected {
        return Err(Error::OpenCheckFinal);
    }

    // One PST opening of Σ λ^i f_i at s.
    let lambda = t.challenge();
    let lambdas = opencheck::powers(lambda, polys::COUNT);
    let comms: Vec<E::G1Affine> = vk
        .preprocessed
        .iter()
        .chain(&proof.witness_comms)
        .chain([&proof.phi_comm, &proof.pi_comm])
        .map(|c| c.0)
        .collect();
    let combined = PstCommitment(kernels::msm::<E>(&comms, &lambdas).into_affine());
    let value = dot(&lambdas, &proof.evals_s);
    Pst::<E>::verify(&vk.pst, &combined, &s, value, &proof.opening, &mut t).map_err(|e| match e {
        testudo::Error::Opening(_) => Error::Opening,
        other => Error::Component(other),
    })
}

fn dot<F: PrimeField>(a: &[F], b: &[F]) -> F {
    a.iter().zip(b).map(|(x, y)| *x * y).sum()
}

/// The proof's shape for this key and public input (before any algebra). Group elements are
/// checked on the curve and in their subgroup when a proof is decoded ([`crate::files`]).
fn check_shape<E: Pairing>(
    vk: &VerifyingKey<E>,
    public: &[E::ScalarField],
    proof: &Proof<E>,
) -> Result<(), Error> {
    let bad = |field: &'static str, reason: String| Error::Malformed { field, reason };
    if public.len() != vk.num_public {
        return Err(Error::Length {
            field: "public input",
            expected: vk.num_public,
            got: public.len(),
        });
    }
    let lens = [
        ("witness commitments", proof.witness_comms.len(), 3),
        ("evaluations at ρ", proof.evals_rho.len(), polys::COUNT),
        ("shifted evaluations", proof.evals_shifted.len(), 4),
        ("evaluations at s", proof.evals_s.len(), polys::COUNT),
        ("PST opening", proof.opening.quotients.len(), vk.num_vars),
    ];
    for (field, got, expected) in lens {
        if got != expected {
            return Err(bad(field, format!("{got} entries, expected {expected}")));
        }
    }
    Ok(())
}

//! Setup (circuit specific): samples the trapdoor `(τ, α, β, δ)` and the generators, and
//! computes the proving and verifying keys (see the crate doc for their contents).

use ark_ec::pairing::Pairing;
use ark_ec::scalar_mul::BatchMulPreprocessing;
use ark_ec::PrimeGroup;
use ark_ff::{Field, Zero};
use ark_relations::gr1cs::ConstraintSynthesizer;
use rand::{CryptoRng, RngCore};

use crate::domain::Domain;
use crate::data_structures::{ProvingKey, VerifyingKey};
use crate::r1cs::{synthesize_setup, Sr1cs};
use crate::Error;

fn nonzero<F: Field, R: RngCore>(rng: &mut R) -> F {
    loop {
        let x = F::rand(rng);
        if !x.is_zero() {
            return x;
        }
    }
}

/// Generates `(pk, vk)` for `circuit` (its assignment is not used).
pub fn setup<E: Pairing, C: ConstraintSynthesizer<E::ScalarField>, R: RngCore + CryptoRng>(
    circuit: C,
    rng: &mut R,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error> {
    setup_sr1cs(synthesize_setup::<E::ScalarField, C>(circuit)?, rng)
}

/// [`setup`] from a synthesized SR1CS (for instance from
/// [`crate::r1cs::synthesize_setup_with_witness`]).
pub fn setup_sr1cs<E: Pairing, R: RngCore + CryptoRng>(
    sr1cs: Sr1cs<E::ScalarField>,
    rng: &mut R,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error> {
    let domain = Domain::<E::ScalarField>::new(sr1cs.num_rows()).ok_or(Error::DomainTooLarge)?;
    setup_sr1cs_on(sr1cs, domain, rng)
}

/// [`setup_sr1cs`] on the domain of order `n` (at least the SR1CS's rows, and an order that
/// [`Domain::new`] keeps): for benchmarks that compare domains for one circuit.
pub fn setup_sr1cs_with_domain_size<E: Pairing, R: RngCore + CryptoRng>(
    sr1cs: Sr1cs<E::ScalarField>,
    n: usize,
    rng: &mut R,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error> {
    let domain = Domain::<E::ScalarField>::new(n).ok_or(Error::DomainTooLarge)?;
    if domain.size() != n || n < sr1cs.num_rows() {
        return Err(Error::KeyMismatch(format!("{n} is not a domain order for {} rows", sr1cs.num_rows())));
    }
    setup_sr1cs_on(sr1cs, domain, rng)
}

fn setup_sr1cs_on<E: Pairing, R: RngCore + CryptoRng>(
    sr1cs: Sr1cs<E::ScalarField>,
    domain: Domain<E::ScalarField>,
    rng: &mut R,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error> {
    let n = domain.size();

    let (tau, v_k_tau) = loop {
        let tau: E::ScalarField = nonzero(rng);
        let v = domain.evaluate_vanishing_polynomial(tau);
        if !v.is_zero() {
            break (tau, v);
        }
    };
    let alpha: E::ScalarField = nonzero(rng);
    let beta: E::ScalarField = nonzero(rng);
    let delta: E::ScalarField = nonzero(rng);
    let delta_inv = delta.inverse().expect("δ ≠ 0");
    let g = E::G1::generator() * nonzero::<E::ScalarField, R>(rng);
    let h = E::G2::generator() * nonzero::<E::ScalarField, R>(rng);

    // a_i(τ), b_i(τ) for every variable, from the Lagrange coefficients at τ.
    let lagrange = domain.evaluate_all_lagrange_coefficients(tau);
    let num_vars = sr1cs.num_variables();
    let mut a_tau = vec![E::ScalarField::zero(); num_vars];
    let mut b_tau = vec![E::ScalarField::zero(); num_vars];
    for (j, (ra, rb)) in sr1cs.a.rows().zip(sr1cs.b.rows()).enumerate() {
        for (c, i) in ra {
            a_tau[i] += c * lagrange[j];
        }
        for (c, i) in rb {
            b_tau[i] += c * lagrange[j];
        }
    }
    let l = sr1cs.num_instance as usize;
    let sigma_scalars: Vec<E::ScalarField> =
        (l..num_vars).map(|i| (alpha * a_tau[i] + beta * b_tau[i]) * delta_inv).collect();

    let mut powers = Vec::with_capacity(n + 1);
    let mut p = E::ScalarField::ONE;
    for _ in 0..=n {
        powers.push(p);
        p *= tau;
    }
    let scaled = |s: E::ScalarField| powers.iter().map(|x| *x * s).collect::<Vec<_>>();

    let table = BatchMulPreprocessing::new(g, sigma_scalars.len() + 4 * (n + 1) + 3);
    let sigma = table.batch_mul(&sigma_scalars);
    let sigma_q = table.batch_mul(&scaled(delta_inv));
    let sigma_a = table.batch_mul(&scaled(alpha));
    let sigma_b = table.batch_mul(&scaled(beta));
    let sigma_1 = table.batch_mul(&powers);
    let zk = table.batch_mul(&[
        alpha * v_k_tau * delta_inv,
        beta * v_k_tau * delta_inv,
        beta * tau * v_k_tau * delta_inv,
    ]);

    let vk = VerifyingKey {
        g: g.into(),
        alpha_g: (g * alpha).into(),
        beta_g: (g * beta).into(),
        h: h.into(),
        delta_h: (h * delta).into(),
        tau_h: (h * tau).into(),
        domain_size: n as u64,
        num_instance: l as u64,
        instance_row_start: sr1cs.instance_row_start() as u64,
    };
    let pk = ProvingKey {
        vk: vk.clone(),
        sr1cs,
        sigma,
        sigma_q,
        sigma_a,
        sigma_b,
        sigma_1,
        zk_a: zk[0],
        zk_b: zk[1],
        zk_b_tau: zk[2],
    };
    Ok((pk, vk))
}

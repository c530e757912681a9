//! Verification of one proof and of many proofs under one key (random linear combination,
//! one multi-pairing), with bisection to locate the bad proofs of a failing batch.
//!
//! These functions are the whole verifier: they take a prepared key, public inputs and proofs,
//! and return `Ok(())` or an error; they never panic on any input.

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{batch_inversion, Field, One, Zero};
use rand::{CryptoRng, RngCore};

use crate::data_structures::{PreparedVerifyingKey, Proof};
use crate::msm::{msm, msm_u128};
use crate::transcript::{batch_weights, Transcript};
use crate::Error;

/// The per-proof scalars of the check: challenge `r` and `v_q`.
struct Opened<F> {
    r: F,
    v_q: F,
}

/// Computes `r`, `x_A(r)` and `v_q` for every proof, with one batch inversion for all of them.
/// Returns `None` for a proof whose public input has the wrong length or whose `r ∈ K`.
fn open_all<E: Pairing>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
) -> Vec<Option<Opened<E::ScalarField>>> {
    let vk = &pvk.vk;
    let l = vk.num_instance as usize;
    let n_inv = pvk.domain.size_inv();
    let omega_start = pvk.domain.element(vk.instance_row_start as usize);
    let omega = pvk.domain.group_gen();
    let base = Transcript::new(&pvk.digest);

    // Per proof: r, v_K(r), and the L denominators (r − ω^{start+j}) plus v_K(r) itself.
    let mut rs = Vec::with_capacity(items.len());
    let mut denominators = Vec::with_capacity(items.len() * (l + 1));
    for (x, proof) in items {
        if x.len() + 1 != l {
            rs.push(None);
            continue;
        }
        let r = base.challenge::<E>(x, &proof.t);
        let v_k = pvk.domain.evaluate_vanishing_polynomial(r);
        if v_k.is_zero() {
            rs.push(None);
            continue;
        }
        let mut w = omega_start;
        for _ in 0..l {
            denominators.push(r - w);
            w *= omega;
        }
        denominators.push(v_k);
        rs.push(Some((r, v_k)));
    }
    // r ∉ K, so no denominator is zero.
    batch_inversion(&mut denominators);
    let mut out = Vec::with_capacity(items.len());
    let mut d = denominators.chunks(l + 1);
    for ((x, proof), r) in items.iter().zip(rs) {
        let Some((r, v_k)) = r else {
            out.push(None);
            continue;
        };
        let inv = d.next().expect("one chunk per opened proof");
        // x_A(r) = Σ_j z_j L_{start+j}(r), L_i(r) = ω^i v_K(r) / (n (r − ω^i)).
        let mut x_a = E::ScalarField::zero();
        let mut w = omega_start;
        for j in 0..l {
            let z_j = if j == 0 { E::ScalarField::one() } else { x[j - 1] };
            x_a += z_j * w * inv[j];
            w *= omega;
        }
        x_a *= v_k * n_inv;
        let v_q = ((x_a + proof.v_a).square() - proof.v_b) * inv[l];
        out.push(Some(Opened { r, v_q }));
    }
    out
}

/// Verifies one proof for public input `x`:
/// `e(T, δH) · e(U, τH) · e(v_a αG + v_b βG + v_q G − r U, H) = 1`.
pub fn verify<E: Pairing>(pvk: &PreparedVerifyingKey<E>, x: &[E::ScalarField], proof: &Proof<E>) -> Result<(), Error> {
    if x.len() != pvk.vk.num_public_inputs() {
        return Err(Error::PublicInput(format!(
            "expected {} public inputs, got {}",
            pvk.vk.num_public_inputs(),
            x.len()
        )));
    }
    let opened = open_all(pvk, &[(x, proof)]).pop().flatten().ok_or(Error::Verification)?;
    let vk = &pvk.vk;
    let p = msm::<E::G1>(
        &[vk.alpha_g, vk.beta_g, vk.g, proof.u],
        &[proof.v_a, proof.v_b, opened.v_q, -opened.r],
    );
    check(pvk, proof.t.into_group(), proof.u.into_group(), p)
}

fn check<E: Pairing>(pvk: &PreparedVerifyingKey<E>, t: E::G1, u: E::G1, p: E::G1) -> Result<(), Error> {
    let lhs = E::multi_pairing(
        [t.into_affine(), u.into_affine(), p.into_affine()],
        [pvk.delta_h_prep.clone(), pvk.tau_h_prep.clone(), pvk.h_prep.clone()],
    );
    if lhs.is_zero() {
        Ok(())
    } else {
        Err(Error::Verification)
    }
}

/// Verifies all `items` (public input, proof) under one key with one multi-pairing:
/// 128-bit weights `ρ_k` from [`batch_weights`] (the caller's RNG mixed with a hash of the key
/// digest and every `(x_k, π_k)`), `T̃ = Σρ_k T_k`, `Ũ = Σρ_k U_k`, `Ṽ = Σρ_k r_k U_k` and the
/// combined scalars. A batch with a bad proof fails except with probability about `2^−128`.
pub fn batch_verify<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
    rng: &mut R,
) -> Result<(), Error> {
    if items.is_empty() {
        return Ok(());
    }
    let opened = open_all(pvk, items);
    let rho = batch_weights(&pvk.digest, items, rng);
    let mut rho_f = Vec::with_capacity(items.len());
    let mut rho_r = Vec::with_capacity(items.len());
    let (mut va, mut vb, mut vq) = (E::ScalarField::zero(), E::ScalarField::zero(), E::ScalarField::zero());
    for (((_, proof), o), &r) in items.iter().zip(&opened).zip(&rho) {
        let o = o.as_ref().ok_or(Error::Verification)?;
        let rf = E::ScalarField::from(r);
        rho_f.push(rf);
        rho_r.push(rf * o.r);
        va += rf * proof.v_a;
        vb += rf * proof.v_b;
        vq += rf * o.v_q;
    }
    let ts: Vec<E::G1Affine> = items.iter().map(|(_, p)| p.t).collect();
    let us: Vec<E::G1Affine> = items.iter().map(|(_, p)| p.u).collect();
    let t = msm_u128::<E::G1>(&ts, &rho);
    let u = msm_u128::<E::G1>(&us, &rho);
    let v = msm::<E::G1>(&us, &rho_r);
    let vk = &pvk.vk;
    let p = msm::<E::G1>(&[vk.alpha_g, vk.beta_g, vk.g], &[va, vb, vq]) - v;
    check(pvk, t, u, p)
}

/// Like [`batch_verify`], but on failure returns the indices of the invalid proofs, found by
/// bisection (each half re-checked with fresh randomness; single proofs checked directly).
pub fn batch_verify_locate<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
    rng: &mut R,
) -> Result<(), Vec<usize>> {
    let mut bad = Vec::new();
    locate(pvk, items, 0, rng, &mut bad, true);
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad)
    }
}

fn locate<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
    offset: usize,
    rng: &mut R,
    bad: &mut Vec<usize>,
    check_whole: bool,
) {
    if items.is_empty() {
        return;
    }
    if items.len() == 1 {
        if verify(pvk, items[0].0, items[0].1).is_err() {
            bad.push(offset);
        }
        return;
    }
    if check_whole && batch_verify(pvk, items, rng).is_ok() {
        return;
    }
    let mid = items.len() / 2;
    let (left, right) = items.split_at(mid);
    let left_ok = batch_verify(pvk, left, rng).is_ok();
    if !left_ok {
        locate(pvk, left, offset, rng, bad, false);
    }
    // If the left half is fine, the failure is in the right half: skip re-checking it whole.
    locate(pvk, right, offset + mid, rng, bad, !left_ok);
}

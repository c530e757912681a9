//! Verification of one proof and of many proofs under one key (random linear combination,
//! one multi-pairing), with bisection to locate the bad proofs of a failing batch.
//!
//! These functions are the whole verifier: they take a prepared key, public inputs and proofs,
//! and return `Ok(())` or an error; they never panic on any input.
//!
//! [`baseline`] keeps the verifier as it was before it was tuned, for same-run comparisons in
//! the bench and for tests that check both give the same verdicts.

use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{batch_inversion, Field, One, Zero};
use rand::{CryptoRng, RngCore};

use crate::data_structures::{PreparedVerifyingKey, Proof};
use crate::msm::{Accumulation, Pippenger};
use crate::transcript::{batch_weights, Transcript};
use crate::Error;

/// The per-proof scalars of the check: challenge `r` and `v_q`.
#[derive(Clone, Copy)]
struct Opened<F> {
    r: F,
    v_q: F,
}

/// [`open_chunk`] over chunks of at least 512 proofs, one chunk per thread when the rayon pool
/// has several (one batch inversion per chunk).
fn open_all<E: Pairing>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
) -> Vec<Option<Opened<E::ScalarField>>> {
    #[cfg(feature = "parallel")]
    {
        use rayon::prelude::*;
        let threads = rayon::current_num_threads();
        if threads > 1 && items.len() >= 1024 {
            let chunk = items.len().div_ceil(threads).max(512);
            return items.par_chunks(chunk).flat_map_iter(|c| open_chunk(pvk, c)).collect();
        }
    }
    open_chunk(pvk, items)
}

/// Computes `r`, `x_A(r)` and `v_q` for every proof, with one batch inversion for all of them.
/// Returns `None` for a proof whose public input has the wrong length or whose `r ∈ K`.
fn open_chunk<E: Pairing>(
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
///
/// Tuned for one proof: `v_a αG + v_b βG + v_q G` from the key's precomputed fixed-base table
/// ([`PreparedVerifyingKey::g1_table`]), `r·U` by arkworks' scalar multiplication (GLV on
/// BLS12-381 and BN254), G2 elements prepared once in the key, one 3-pair multi-pairing.
pub fn verify<E: Pairing>(pvk: &PreparedVerifyingKey<E>, x: &[E::ScalarField], proof: &Proof<E>) -> Result<(), Error> {
    if x.len() != pvk.vk.num_public_inputs() {
        return Err(Error::PublicInput(format!(
            "expected {} public inputs, got {}",
            pvk.vk.num_public_inputs(),
            x.len()
        )));
    }
    let opened = open_chunk(pvk, &[(x, proof)]).pop().flatten().ok_or(Error::Verification)?;
    verify_opened(pvk, proof, &opened)
}

/// The single check once `r` and `v_q` are known.
fn verify_opened<E: Pairing>(pvk: &PreparedVerifyingKey<E>, proof: &Proof<E>, o: &Opened<E::ScalarField>) -> Result<(), Error> {
    let p = pvk.g1_table.mul(&[proof.v_a, proof.v_b, o.v_q]) - proof.u * o.r;
    check(pvk, proof.t, proof.u, p.into_affine())
}

/// `e(t, δH) · e(u, τH) · e(p, H) = 1`.
fn check<E: Pairing>(pvk: &PreparedVerifyingKey<E>, t: E::G1Affine, u: E::G1Affine, p: E::G1Affine) -> Result<(), Error> {
    let ml = E::multi_miller_loop(
        [t, u, p],
        [pvk.delta_h_prep.clone(), pvk.tau_h_prep.clone(), pvk.h_prep.clone()],
    );
    match E::final_exponentiation(ml) {
        Some(out) if out.is_zero() => Ok(()),
        _ => Err(Error::Verification),
    }
}

/// The combined check for `items` whose openings are known, with weights `rho`:
/// `T̃ = Σρ_k T_k`, `Ũ = Σρ_k U_k` (128-bit scalars, one recoding for both),
/// `Ṽ = Σ(ρ_k r_k) U_k`, then one 3-pair multi-pairing.
fn check_combined<E: Pairing>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
    opened: &[Opened<E::ScalarField>],
    rho: &[u128],
) -> Result<(), Error> {
    let mut rho_r = Vec::with_capacity(items.len());
    let (mut va, mut vb, mut vq) = (E::ScalarField::zero(), E::ScalarField::zero(), E::ScalarField::zero());
    for (((_, proof), o), &r) in items.iter().zip(opened).zip(rho) {
        let rf = E::ScalarField::from(r);
        rho_r.push(rf * o.r);
        va += rf * proof.v_a;
        vb += rf * proof.v_b;
        vq += rf * o.v_q;
    }
    let ts: Vec<E::G1Affine> = items.iter().map(|(_, p)| p.t).collect();
    let us: Vec<E::G1Affine> = items.iter().map(|(_, p)| p.u).collect();
    let acc = Accumulation::BatchAffine;
    let weights = Pippenger::from_u128(rho, acc);
    let (t, u) = ark_std::cfg_join!(|| weights.run::<E::G1>(&ts), || weights.run::<E::G1>(&us));
    let v = Pippenger::from_field(&rho_r, acc).run::<E::G1>(&us);
    let p = pvk.g1_table.mul(&[va, vb, vq]) - v;
    let n = E::G1::normalize_batch(&[t, u, p]);
    check(pvk, n[0], n[1], n[2])
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
    let opened: Vec<Opened<E::ScalarField>> =
        open_all(pvk, items).into_iter().collect::<Option<_>>().ok_or(Error::Verification)?;
    let rho = batch_weights(&pvk.digest, items, rng);
    check_combined(pvk, items, &opened, &rho)
}

/// Like [`batch_verify`], but on failure returns the indices of the invalid proofs, found by
/// bisection (each half re-checked with fresh weights; single proofs checked directly). The
/// per-proof work (challenge, Lagrange evaluation, `v_q`) is done once for the whole batch and
/// reused by every sub-check.
pub fn batch_verify_locate<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
    rng: &mut R,
) -> Result<(), Vec<usize>> {
    let mut bad = Vec::new();
    let mut index = Vec::with_capacity(items.len());
    let mut good = Vec::with_capacity(items.len());
    let mut opened = Vec::with_capacity(items.len());
    for (k, (item, o)) in items.iter().zip(open_all(pvk, items)).enumerate() {
        match o {
            // Wrong public-input length or r ∈ K: the single check refuses it too.
            None => bad.push(k),
            Some(o) => {
                index.push(k);
                good.push(*item);
                opened.push(o);
            }
        }
    }
    let mut failing = Vec::new();
    locate(pvk, &good, &opened, 0, rng, &mut failing, true);
    bad.extend(failing.into_iter().map(|i| index[i]));
    bad.sort_unstable();
    if bad.is_empty() {
        Ok(())
    } else {
        Err(bad)
    }
}

fn locate<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    items: &[(&[E::ScalarField], &Proof<E>)],
    opened: &[Opened<E::ScalarField>],
    offset: usize,
    rng: &mut R,
    bad: &mut Vec<usize>,
    check_whole: bool,
) {
    if items.is_empty() {
        return;
    }
    if items.len() == 1 {
        if verify_opened(pvk, items[0].1, &opened[0]).is_err() {
            bad.push(offset);
        }
        return;
    }
    let sub_check = |items: &[(&[E::ScalarField], &Proof<E>)], opened: &[Opened<E::ScalarField>], rng: &mut R| {
        let rho = batch_weights(&pvk.digest, items, rng);
        check_combined(pvk, items, opened, &rho).is_ok()
    };
    if check_whole && sub_check(items, opened, rng) {
        return;
    }
    let mid = items.len() / 2;
    let (left, right) = items.split_at(mid);
    let (left_o, right_o) = opened.split_at(mid);
    let left_ok = sub_check(left, left_o, rng);
    if !left_ok {
        locate(pvk, left, left_o, offset, rng, bad, false);
    }
    // If the left half is fine, the failure is in the right half: skip re-checking it whole.
    locate(pvk, right, right_o, offset + mid, rng, bad, !left_ok);
}

/// The verifier as it was before the tuning (issue 14 item 4), kept so that the bench can
/// measure old against new in the same run, and tests can check that both give the same
/// verdicts: arkworks MSMs (including the 4-term one of the single check), serial opening,
/// bisection that recomputes every sub-batch from scratch.
#[doc(hidden)]
pub mod baseline {
    use super::*;
    use crate::msm::{msm, msm_u128};

    pub fn verify<E: Pairing>(pvk: &PreparedVerifyingKey<E>, x: &[E::ScalarField], proof: &Proof<E>) -> Result<(), Error> {
        if x.len() != pvk.vk.num_public_inputs() {
            return Err(Error::PublicInput(format!(
                "expected {} public inputs, got {}",
                pvk.vk.num_public_inputs(),
                x.len()
            )));
        }
        let opened = open_chunk(pvk, &[(x, proof)]).pop().flatten().ok_or(Error::Verification)?;
        let vk = &pvk.vk;
        let p = msm::<E::G1>(
            &[vk.alpha_g, vk.beta_g, vk.g, proof.u],
            &[proof.v_a, proof.v_b, opened.v_q, -opened.r],
        );
        check_projective(pvk, proof.t.into_group(), proof.u.into_group(), p)
    }

    fn check_projective<E: Pairing>(pvk: &PreparedVerifyingKey<E>, t: E::G1, u: E::G1, p: E::G1) -> Result<(), Error> {
        check(pvk, t.into_affine(), u.into_affine(), p.into_affine())
    }

    pub fn batch_verify<E: Pairing, R: RngCore + CryptoRng>(
        pvk: &PreparedVerifyingKey<E>,
        items: &[(&[E::ScalarField], &Proof<E>)],
        rng: &mut R,
    ) -> Result<(), Error> {
        if items.is_empty() {
            return Ok(());
        }
        let opened = open_chunk(pvk, items);
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
        check_projective(pvk, t, u, p)
    }

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
        locate(pvk, right, offset + mid, rng, bad, !left_ok);
    }
}

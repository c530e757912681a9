//! TIPP (paper §5.1, after \[BMMTV21\] and SnarkPack \[GMN22\]): a proof that
//! `Z = Π_{i<m} e(r^i·A_i, B_i)` for vectors `A ∈ G1^m`, `B ∈ G2^m` committed as
//! `CMD(A, B)` ([`super::afgho`]) and a public scalar `r`.
//!
//! # The argument
//!
//! Write `A'_i = r^i·A_i` and `v'_i = r^{−i}·v_i`: then `CMD(A, B)` under `(v, w)` equals
//! `CMD(A', B)` under `(v', w)`, and `Z = A' ∗ B`. GIPA proves the latter in `log m` rounds:
//! split every vector into halves `L, R`, send the cross terms
//! `Z_L = A'_R ∗ B_L`, `Z_R = A'_L ∗ B_R` and the cross commitments
//! `C_L = CMD(A'_R, B_L)` under `(v'_L, w_R)`, `C_R = CMD(A'_L, B_R)` under `(v'_R, w_L)`, draw
//! `x` from the transcript and fold
//!
//! `A' ← A'_L + x·A'_R`, `B ← B_L + x⁻¹·B_R`, `v' ← v'_L + x⁻¹·v'_R`, `w ← w_L + x·w_R`,
//! `Z ← x·Z_L + Z + x⁻¹·Z_R`, `C ← x·C_L + C + x⁻¹·C_R` (`G_T` written additively).
//!
//! After the last round the prover sends the single `A', B` and the folded keys `v'_1, v'_2`
//! (in G2) and `w_1, w_2` (in G1); the verifier checks `Z = e(A', B)` and
//! `C = (e(A', v'_1)·e(w_1, B), e(A', v'_2)·e(w_2, B))`. It never folds the keys itself: the
//! folded keys are evaluations of known polynomials at the SRS secrets,
//!
//! * `v'_1 = [f_v(a/r)]₂` with `f_v(Y) = Π_j (1 + x_j⁻¹·Y^{2^{ℓ−1−j}})`,
//! * `w_1 = [a^n·f_w(a)]₁` with `f_w(X) = Π_j (1 + x_j·X^{2^{ℓ−1−j}})` (`ℓ = log m`; the
//!   same with `b` for `v'_2, w_2`),
//!
//! so the prover adds a KZG opening of each at a transcript point `z` (quotients by `X − z`
//! committed with the SRS powers), and the verifier evaluates `f_v, f_w` at `z` in `O(log m)`
//! and checks the four openings and the final equations with one multi-pairing each.
//! Verification is `O(log m)` `G_T` operations and 11 pairings.

use ark_ec::pairing::{Pairing, PairingOutput};
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup, VariableBaseMSM};
use ark_ff::{Field, One, Zero};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use super::afgho::{gt_msm, mp, PairCommitment};
use super::srs::{Srs, VerifierSrs};
use super::transcript::Transcript;
use crate::Error;

/// One GIPA round: the cross products and the cross commitments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct GipaRound<E: Pairing> {
    pub z_l: PairingOutput<E>,
    pub z_r: PairingOutput<E>,
    pub c_l: PairCommitment<E>,
    pub c_r: PairCommitment<E>,
}

/// A TIPP proof: `log m` rounds, the folded vectors and keys, and the KZG openings (quotient
/// commitments) of the four folded keys.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct TippProof<E: Pairing> {
    pub rounds: Vec<GipaRound<E>>,
    pub a: E::G1Affine,
    pub b: E::G2Affine,
    pub v1: E::G2Affine,
    pub v2: E::G2Affine,
    pub w1: E::G1Affine,
    pub w2: E::G1Affine,
    pub open_v1: E::G2Affine,
    pub open_v2: E::G2Affine,
    pub open_w1: E::G1Affine,
    pub open_w2: E::G1Affine,
}

fn powers<F: Field>(x: F, len: usize) -> Vec<F> {
    std::iter::successors(Some(F::one()), |p| Some(*p * x))
        .take(len)
        .collect()
}

/// The coefficient of `X^i` in `Π_j (1 + c_j·X^{2^{ℓ−1−j}})`, for `i < 2^ℓ`.
fn fold_weights<F: Field>(c: &[F]) -> Vec<F> {
    let l = c.len();
    let mut w = vec![F::one(); 1 << l];
    for (j, cj) in c.iter().enumerate() {
        let bit = l - 1 - j;
        for (i, wi) in w.iter_mut().enumerate() {
            if (i >> bit) & 1 == 1 {
                *wi *= cj;
            }
        }
    }
    w
}

/// `Π_j (1 + c_j·y^{2^{ℓ−1−j}})` in `O(ℓ)`.
fn eval_folded<F: Field>(c: &[F], y: F) -> F {
    let l = c.len();
    let mut acc = F::one();
    let mut y_pow = y; // y^{2^{ℓ−1−j}}, from j = ℓ−1 down
    for j in (0..l).rev() {
        acc *= F::one() + c[j] * y_pow;
        y_pow.square_in_place();
    }
    acc
}

/// `(p(X) − p(z)) / (X − z)` for `p` given by its coefficients.
fn divide_by_linear<F: Field>(coeffs: &[F], z: F) -> Vec<F> {
    if coeffs.len() < 2 {
        return Vec::new();
    }
    let mut q = vec![F::zero(); coeffs.len() - 1];
    let mut acc = F::zero();
    for i in (1..coeffs.len()).rev() {
        acc = coeffs[i] + z * acc;
        q[i - 1] = acc;
    }
    q
}

fn shape_error(what: &'static str, expected: usize, got: usize) -> Error {
    Error::ShapeMismatch {
        what,
        expected,
        got,
    }
}

/// The padded length `m` (a power of two) for `len` pairs, checked against an SRS of `n`.
fn padded_len(n: usize, len: usize) -> Result<usize, Error> {
    if len == 0 {
        return Err(Error::EmptyBatch);
    }
    let m = len.checked_next_power_of_two().unwrap_or(usize::MAX);
    if m > n {
        return Err(shape_error("TIPP length for the SRS", n, m));
    }
    Ok(m)
}

fn split<T>(v: &[T]) -> (&[T], &[T]) {
    v.split_at(v.len() / 2)
}

fn fold<G: CurveGroup>(v: &[G::Affine], x: G::ScalarField) -> Vec<G> {
    let (l, r) = split(v);
    l.iter()
        .zip(r)
        .map(|(a, b)| a.into_group() + *b * x)
        .collect()
}

/// Proves `Z = Π e(r^i·A_i, B_i)`; returns `Z` and the proof. The caller has absorbed into
/// `transcript` whatever the statement is about (at least the commitment `CMD(A, B)` and `r`).
pub fn prove<E: Pairing>(
    srs: &Srs<E>,
    transcript: &mut Transcript,
    a: &[E::G1Affine],
    b: &[E::G2Affine],
    r: E::ScalarField,
) -> Result<(PairingOutput<E>, TippProof<E>), Error> {
    if a.len() != b.len() {
        return Err(shape_error("TIPP right-hand vector", a.len(), b.len()));
    }
    srs.check()?;
    let m = padded_len(srs.max_len(), a.len())?;
    let n = srs.max_len();
    let ck = srs.commitment_key(m)?;
    let r_inv = r.inverse().ok_or(Error::VerificationFailed)?;
    let (rp, rip) = (powers(r, m), powers(r_inv, m));

    let mut av: Vec<E::G1> = (0..m)
        .map(|i| a.get(i).map_or(E::G1::zero(), |p| *p * rp[i]))
        .collect();
    let mut bv: Vec<E::G2> = (0..m)
        .map(|i| b.get(i).map_or(E::G2::zero(), |p| p.into_group()))
        .collect();
    let mut v1: Vec<E::G2> = ck.v1.iter().zip(&rip).map(|(p, s)| *p * s).collect();
    let mut v2: Vec<E::G2> = ck.v2.iter().zip(&rip).map(|(p, s)| *p * s).collect();
    let mut w1: Vec<E::G1> = ck.w1.iter().map(|p| p.into_group()).collect();
    let mut w2: Vec<E::G1> = ck.w2.iter().map(|p| p.into_group()).collect();

    let z = E::multi_pairing(E::G1::normalize_batch(&av), E::G2::normalize_batch(&bv));
    transcript.append(&(m as u64))?;
    transcript.append(&z)?;

    let mut rounds = Vec::new();
    let mut xs = Vec::new();
    while av.len() > 1 {
        let (aa, ba) = (E::G1::normalize_batch(&av), E::G2::normalize_batch(&bv));
        let (v1a, v2a) = (E::G2::normalize_batch(&v1), E::G2::normalize_batch(&v2));
        let (w1a, w2a) = (E::G1::normalize_batch(&w1), E::G1::normalize_batch(&w2));
        let ((al, ar), (bl, br)) = (split(&aa), split(&ba));
        let ((v1l, v1r), (v2l, v2r)) = (split(&v1a), split(&v2a));
        let ((w1l, w1r), (w2l, w2r)) = (split(&w1a), split(&w2a));
        let round = GipaRound {
            z_l: mp::<E>(ar, bl),
            z_r: mp::<E>(al, br),
            c_l: PairCommitment {
                t: mp::<E>(ar, v1l) + mp::<E>(w1r, bl),
                u: mp::<E>(ar, v2l) + mp::<E>(w2r, bl),
            },
            c_r: PairCommitment {
                t: mp::<E>(al, v1r) + mp::<E>(w1l, br),
                u: mp::<E>(al, v2r) + mp::<E>(w2l, br),
            },
        };
        transcript.append(&round)?;
        let x: E::ScalarField = transcript.challenge();
        let xi = x.inverse().expect("challenges are nonzero");
        av = fold::<E::G1>(&aa, x);
        bv = fold::<E::G2>(&ba, xi);
        v1 = fold::<E::G2>(&v1a, xi);
        v2 = fold::<E::G2>(&v2a, xi);
        w1 = fold::<E::G1>(&w1a, x);
        w2 = fold::<E::G1>(&w2a, x);
        rounds.push(round);
        xs.push(x);
    }
    let (a_f, b_f) = (av[0].into_affine(), bv[0].into_affine());
    let (v1_f, v2_f) = (v1[0].into_affine(), v2[0].into_affine());
    let (w1_f, w2_f) = (w1[0].into_affine(), w2[0].into_affine());
    for p in [&a_f, &w1_f, &w2_f] {
        transcript.append(p)?;
    }
    for p in [&b_f, &v1_f, &v2_f] {
        transcript.append(p)?;
    }
    let zk: E::ScalarField = transcript.challenge();

    // g_v(X) = f_v(X/r): coefficients weight_i·r^{−i}; h_w(X) = X^n·f_w(X).
    let xis: Vec<E::ScalarField> = xs.iter().map(|x| x.inverse().expect("nonzero")).collect();
    let gv: Vec<E::ScalarField> = fold_weights(&xis)
        .iter()
        .zip(&rip)
        .map(|(w, s)| *w * s)
        .collect();
    let mut hw = vec![E::ScalarField::zero(); n];
    hw.extend(fold_weights(&xs));
    let qv = divide_by_linear(&gv, zk);
    let qw = divide_by_linear(&hw, zk);
    let open = |g2: &[E::G2Affine]| E::G2::msm_unchecked(&g2[..qv.len()], &qv);
    let open1 = |g1: &[E::G1Affine]| E::G1::msm_unchecked(&g1[..qw.len()], &qw);
    let proof = TippProof {
        rounds,
        a: a_f,
        b: b_f,
        v1: v1_f,
        v2: v2_f,
        w1: w1_f,
        w2: w2_f,
        open_v1: open(&srs.h_a).into_affine(),
        open_v2: open(&srs.h_b).into_affine(),
        open_w1: open1(&srs.g_a).into_affine(),
        open_w2: open1(&srs.g_b).into_affine(),
    };
    Ok((z, proof))
}

/// Checks a TIPP proof that `z = Π_{i<len} e(r^i·A_i, B_i)` for the `(A, B)` committed in
/// `cm = CMD(A, B)` (under [`Srs::commitment_key`] of any length `≥ len`: padding does not
/// change it). `transcript` must have absorbed what the prover's had.
pub fn verify<E: Pairing>(
    srs: &VerifierSrs<E>,
    transcript: &mut Transcript,
    cm: &PairCommitment<E>,
    z: &PairingOutput<E>,
    r: E::ScalarField,
    len: usize,
    proof: &TippProof<E>,
) -> Result<(), Error> {
    srs.check()?;
    let m = padded_len(srs.max_len(), len)?;
    let n = srs.max_len();
    let l = m.trailing_zeros() as usize;
    if proof.rounds.len() != l {
        return Err(Error::VerificationFailed);
    }
    let r_inv = r.inverse().ok_or(Error::VerificationFailed)?;
    transcript.append(&(m as u64))?;
    transcript.append(z)?;
    let mut xs = Vec::with_capacity(l);
    for round in &proof.rounds {
        transcript.append(round)?;
        xs.push(transcript.challenge::<E::ScalarField>());
    }
    let xis: Vec<E::ScalarField> = xs.iter().map(|x| x.inverse().expect("nonzero")).collect();
    // Folding is linear: the final Z is Z · Π_j Z_{L,j}^{x_j} · Z_{R,j}^{1/x_j}, and the same
    // for the commitment, one multi-exponentiation each.
    let mut scalars = vec![E::ScalarField::one()];
    scalars.extend_from_slice(&xs);
    scalars.extend_from_slice(&xis);
    let fold_all = |first: PairingOutput<E>, l: &[PairingOutput<E>], r: &[PairingOutput<E>]| {
        let mut v = vec![first];
        v.extend_from_slice(l);
        v.extend_from_slice(r);
        gt_msm(&v, &scalars)
    };
    let pick = |f: fn(&GipaRound<E>) -> PairingOutput<E>| -> Vec<PairingOutput<E>> {
        proof.rounds.iter().map(f).collect()
    };
    let zz = fold_all(*z, &pick(|r| r.z_l), &pick(|r| r.z_r));
    let c = PairCommitment {
        t: fold_all(cm.t, &pick(|r| r.c_l.t), &pick(|r| r.c_r.t)),
        u: fold_all(cm.u, &pick(|r| r.c_l.u), &pick(|r| r.c_r.u)),
    };
    for p in [&proof.a, &proof.w1, &proof.w2] {
        transcript.append(p)?;
    }
    for p in [&proof.b, &proof.v1, &proof.v2] {
        transcript.append(p)?;
    }
    let zk: E::ScalarField = transcript.challenge();

    // The folded equations.
    let (a, b) = (proof.a, proof.b);
    if E::pairing(a, b) != zz
        || E::multi_pairing([a, proof.w1], [proof.v1, b]) != c.t
        || E::multi_pairing([a, proof.w2], [proof.v2, b]) != c.u
    {
        return Err(Error::VerificationFailed);
    }

    // The folded keys are the committed polynomials: four KZG openings at zk, combined with
    // powers of a transcript challenge into one multi-pairing.
    let gv_z = eval_folded(&xis, zk * r_inv);
    let hw_z = zk.pow([n as u64]) * eval_folded(&xs, zk);
    transcript.append(&proof.open_v1)?;
    transcript.append(&proof.open_v2)?;
    transcript.append(&proof.open_w1)?;
    transcript.append(&proof.open_w2)?;
    let c1: E::ScalarField = transcript.challenge();
    let (c2, c3) = (c1 * c1, c1 * c1 * c1);
    let (g, h) = (E::G1::generator(), E::G2::generator());
    // e(g, v1 − gv_z·h) = e([a − z]₁, π_v1), the same with b, and
    // e(w1 − hw_z·g, h) = e(π_w1, [a − z]₂), the same with b.
    let a1 = srs.g_a1.into_group() - g * zk;
    let b1 = srs.g_b1.into_group() - g * zk;
    let a2 = srs.h_a1.into_group() - h * zk;
    let b2 = srs.h_b1.into_group() - h * zk;
    let left_g2 = (proof.v1.into_group() - h * gv_z) + (proof.v2.into_group() - h * gv_z) * c1;
    let left_g1 = (proof.w1.into_group() - g * hw_z) * c2 + (proof.w2.into_group() - g * hw_z) * c3;
    let g1s = [
        g,
        -a1,
        -(b1 * c1),
        left_g1,
        -(proof.open_w1 * c2),
        -(proof.open_w2 * c3),
    ];
    let g2s = [
        left_g2,
        proof.open_v1.into_group(),
        proof.open_v2.into_group(),
        h,
        a2,
        b2,
    ];
    if !E::multi_pairing(E::G1::normalize_batch(&g1s), E::G2::normalize_batch(&g2s)).is_zero() {
        return Err(Error::VerificationFailed);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::afgho::commit;
    use ark_bls12_381::{Bls12_381 as E, Fr, G1Projective, G2Projective};
    use ark_ff::{One, UniformRand};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    type G1A = <E as Pairing>::G1Affine;
    type G2A = <E as Pairing>::G2Affine;

    fn vectors(len: usize, rng: &mut ChaCha20Rng) -> (Vec<G1A>, Vec<G2A>) {
        let a = (0..len)
            .map(|_| G1Projective::rand(rng).into_affine())
            .collect();
        let b = (0..len)
            .map(|_| G2Projective::rand(rng).into_affine())
            .collect();
        (a, b)
    }

    fn statement(srs: &Srs<E>, a: &[G1A], b: &[G2A], r: Fr) -> (PairCommitment<E>, Transcript) {
        let cm = commit(&srs.commitment_key(a.len()).unwrap(), a, b).unwrap();
        let mut t = Transcript::new(b"tipp test");
        t.append(&cm).unwrap();
        t.append(&r).unwrap();
        (cm, t)
    }

    #[test]
    fn helpers_agree() {
        let mut rng = ChaCha20Rng::seed_from_u64(1);
        let c: Vec<Fr> = (0..3).map(|_| Fr::rand(&mut rng)).collect();
        let y = Fr::rand(&mut rng);
        let w = fold_weights(&c);
        let direct: Fr = w.iter().zip(powers(y, 8)).map(|(a, b)| *a * b).sum();
        assert_eq!(direct, eval_folded(&c, y));
        let z = Fr::rand(&mut rng);
        let q = divide_by_linear(&w, z);
        let p_z = eval_folded(&c, z);
        let q_y: Fr = q.iter().zip(powers(y, 7)).map(|(a, b)| *a * b).sum();
        assert_eq!(q_y * (y - z), direct - p_z);
    }

    #[test]
    fn tipp_completeness_and_soundness_checks() {
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        let srs = Srs::<E>::setup(8, &mut rng);
        for len in [1, 2, 3, 8] {
            let (a, b) = vectors(len, &mut rng);
            let r = Fr::rand(&mut rng);
            let (cm, mut tp) = statement(&srs, &a, &b, r);
            let (z, proof) = prove(&srs, &mut tp, &a, &b, r).unwrap();
            let rp = powers(r, len);
            let want = E::multi_pairing(a.iter().zip(&rp).map(|(p, s)| (*p * s).into_affine()), &b);
            assert_eq!(z, want);
            let (_, mut tv) = statement(&srs, &a, &b, r);
            verify(
                &srs.verifier_srs().unwrap(),
                &mut tv,
                &cm,
                &z,
                r,
                len,
                &proof,
            )
            .unwrap();

            let check = |cm: &PairCommitment<E>, z: &PairingOutput<E>, r: Fr, p: &TippProof<E>| {
                let mut t = Transcript::new(b"tipp test");
                t.append(cm).unwrap();
                t.append(&r).unwrap();
                verify(&srs.verifier_srs().unwrap(), &mut t, cm, z, r, len, p)
            };
            // Another claimed product, another r, another commitment.
            assert!(check(&cm, &(z + z), r, &proof).is_err());
            assert!(check(&cm, &z, r + Fr::one(), &proof).is_err());
            let cm2 = PairCommitment {
                t: cm.t + cm.u,
                u: cm.u,
            };
            assert!(check(&cm2, &z, r, &proof).is_err());
            // Tampered final values and keys.
            let g1 = G1Projective::generator();
            let mut bad = proof.clone();
            bad.a = (bad.a + g1).into_affine();
            assert!(check(&cm, &z, r, &bad).is_err());
            let mut bad = proof.clone();
            bad.w1 = (bad.w1 + g1).into_affine();
            assert!(check(&cm, &z, r, &bad).is_err());
            let mut bad = proof.clone();
            bad.v2 = (bad.v2 + G2Projective::generator()).into_affine();
            assert!(check(&cm, &z, r, &bad).is_err());
            let mut bad = proof.clone();
            bad.open_v1 = (bad.open_v1 + G2Projective::generator()).into_affine();
            assert!(check(&cm, &z, r, &bad).is_err());
            let mut bad = proof.clone();
            bad.open_w2 = (bad.open_w2 + g1).into_affine();
            assert!(check(&cm, &z, r, &bad).is_err());
            // A prover that commits and folds consistently under another SRS's keys (so every
            // GIPA equation holds) is caught by the KZG openings against this SRS.
            let other = Srs::<E>::setup(8, &mut rng);
            let cm_o = commit(&other.commitment_key(len).unwrap(), &a, &b).unwrap();
            let mut t = Transcript::new(b"tipp test");
            t.append(&cm_o).unwrap();
            t.append(&r).unwrap();
            let (z_o, p_o) = prove(&other, &mut t, &a, &b, r).unwrap();
            assert!(check(&cm_o, &z_o, r, &p_o).is_err());
            if len > 1 {
                let mut bad = proof.clone();
                bad.rounds[0].z_l += z;
                assert!(check(&cm, &z, r, &bad).is_err());
                let mut bad = proof.clone();
                bad.rounds.pop();
                assert!(check(&cm, &z, r, &bad).is_err());
                // A proof for the vectors in another order, against the honest commitment.
                let (mut a2, mut b2) = (a.clone(), b.clone());
                a2.swap(0, 1);
                b2.swap(0, 1);
                let (_, mut t) = statement(&srs, &a, &b, r);
                let (z2, p2) = prove(&srs, &mut t, &a2, &b2, r).unwrap();
                assert!(check(&cm, &z2, r, &p2).is_err());
            }
        }
        // Too long for the SRS.
        let (a, b) = vectors(9, &mut rng);
        let mut t = Transcript::new(b"tipp test");
        assert!(prove(&srs, &mut t, &a, &b, Fr::one()).is_err());
    }
}

//! Testudo-Comm (§3–4, Fig. 3–4 of the paper): a multilinear commitment with a √N-size
//! trusted setup, built from PST on the rows of the evaluation table and the generalized MIPP
//! that combines the row commitments.
//!
//! **Split.** A polynomial `p` in `n` variables is a `2^r × 2^c` table with `r = ⌊n/2⌋` row
//! variables (the first `r`, the most significant index bits: [`crate::poly`]) and
//! `c = n − r` column variables. Row `i` is the `c`-variable polynomial `p_i`, and
//! `p(b, a) = Σ_i χ_i(b)·p_i(a)` for a point `(b, a)`, `b ∈ F^r`, `a ∈ F^c`.
//!
//! **Setup (trusted), for up to `ν` variables.** A PST key for `⌈ν/2⌉` variables (secret
//! `t`, [`crate::pst`]), and for the MIPP a second secret `s ∈ F^{⌊ν/2⌋}` with the G2
//! Lagrange levels `h^{χ_i(s_k, …)}` (every suffix `k`, so the MIPP's `ĥ` can be opened like
//! a PST commitment in G2) and `g^{s_k}` for the verifier. Both halves are `O(√N)` points.
//! [`setup_insecure_from_seed`] is for tests only: the seed gives away both secrets.
//!
//! **Commit.** `A_i = g^{p_i(t)}` (PST per row, kept by the prover as the opening hint) and
//! `T = Π_i e(A_i, h_i)` with `h_i = h^{χ_i(s)}`: one target-group element.
//!
//! **Open at `(b, a)` to `v`.** With `y_i = χ_i(b)` and `q = Σ_i y_i·p_i` (so `q(a) = v`):
//! 1. `U = Π_i A_i^{y_i}` (the PST commitment to `q`).
//! 2. The generalized MIPP (Fig. 3) that `U = ⟨A, y⟩` for the `A` inside `T`: per round,
//!    `U_L = ⟨A_L, y_R⟩`, `U_R = ⟨A_R, y_L⟩`, `T_L = Π e(A_L, h_R)`, `T_R = Π e(A_R, h_L)`,
//!    a challenge `x`, and the folds `A' = A_L·A_R^x`, `y' = y_L + x^{−1}·y_R`,
//!    `h' = h_L·h_R^{x^{−1}}`; the verifier folds `T' = T·T_L^{x^{−1}}·T_R^x` and
//!    `U' = U·U_L^{x^{−1}}·U_R^x`. At the end the prover sends `Â` and `ĥ`; the verifier
//!    computes `ŷ = Π_k ((1 − b_k) + x_k^{−1}·b_k)` itself and checks `T' = e(Â, ĥ)` and
//!    `U' = Â^ŷ`.
//! 3. `ĥ` is the G2 PST commitment (under the `h_i`) of `f(X) = Π_k ((1 − X_k) + x_k^{−1}X_k)`:
//!    the verifier draws `ρ`, computes `f(ρ)`, and checks a G2 PST opening of `ĥ` at `ρ`
//!    against `g^{s_k}`.
//! 4. A PST opening of `U` at `a` to `v` (the row key).
//!
//! **Transcript** (over the base field `F_q`, [`crate::transcript`]). The commitment is
//! absorbed as `T`'s 12 `F_q` components. The opening absorbs, in order: `U` (a point); per
//! MIPP round `U_L`, `U_R` (points), `T_L`, `T_R` (12 components each), then squeezes that
//! round's `x`; `Â` (a G1 point) and `ĥ` (a G2 point), then squeezes `ρ` (`r` challenges);
//! the G2 quotients of `ĥ`'s opening (points, in order); then whatever the PST opening of `U`
//! absorbs ([`crate::pst`]). Every prover message is absorbed before the challenge that
//! follows it.

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::{Pairing, PairingOutput};
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup, ScalarMul, VariableBaseMSM};
use ark_ff::{Field, UniformRand};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use ark_std::Zero;
use rand::{CryptoRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::marker::PhantomData;

use crate::pcs::MultilinearPcs;
use crate::poly::{eq_table, MultilinearPoly};
use crate::pst::{
    self, lagrange_levels, open_quotients, Pst, PstCommitment, PstCommitterKey, PstProof,
    PstVerifierKey,
};
use crate::transcript::Transcript;
use crate::Error;

#[cfg(feature = "r1cs")]
pub mod constraints;

/// The Testudo-Comm scheme over the pairing `E`.
pub struct TestudoComm<E: Pairing>(PhantomData<E>);

/// The committer key for up to `num_vars` variables.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct TcCommitterKey<E: Pairing> {
    pub num_vars: usize,
    /// PST for the rows: `⌈ν/2⌉` variables.
    pub pst: PstCommitterKey<E>,
    /// `h_levels[k][i] = h^{χ_i(s_k, …)}`, `⌊ν/2⌋ + 1` levels.
    pub h_levels: Vec<Vec<E::G2Affine>>,
}

/// The verifier key.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct TcVerifierKey<E: Pairing> {
    pub num_vars: usize,
    /// PST's verifier key for the rows (holds `g` and `h`).
    pub pst: PstVerifierKey<E>,
    /// `g^{s_k}`, to check the G2 opening of `ĥ`.
    pub g_s: Vec<E::G1Affine>,
}

/// `T = Π_i e(A_i, h_i)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct TcCommitment<E: Pairing>(pub PairingOutput<E>);

/// One round of the generalized MIPP.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct MippRound<E: Pairing> {
    pub u_l: E::G1Affine,
    pub u_r: E::G1Affine,
    pub t_l: PairingOutput<E>,
    pub t_r: PairingOutput<E>,
}

impl<E: Pairing> MippRound<E>
where
    E::BaseField: Absorb,
    E::TargetField: Field<BasePrimeField = E::BaseField>,
{
    /// `U_L`, `U_R`, `T_L`, `T_R`, in that order.
    fn absorb_into(&self, transcript: &mut Transcript<E::ScalarField, E::BaseField>) {
        transcript.absorb_point(&self.u_l);
        transcript.absorb_point(&self.u_r);
        transcript.absorb_target(&self.t_l.0);
        transcript.absorb_target(&self.t_r.0);
    }
}

/// An opening: `U`, the MIPP rounds, `Â`, `ĥ`, the G2 opening of `ĥ`, the PST opening of `U`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct TcProof<E: Pairing> {
    pub u: E::G1Affine,
    pub rounds: Vec<MippRound<E>>,
    pub a_hat: E::G1Affine,
    pub h_hat: E::G2Affine,
    /// PST quotients (in G2) of `f` at `ρ`.
    pub h_hat_opening: Vec<E::G2Affine>,
    /// PST opening of `U` at `a`.
    pub q_opening: PstProof<E>,
}

/// `(r, c)`: row and column variables of an `n`-variable polynomial.
fn split(n: usize) -> (usize, usize) {
    (n / 2, n - n / 2)
}

/// The trusted setup for up to `num_vars` variables; whoever can replay `rng` can forge.
pub fn setup<E: Pairing, R: RngCore + CryptoRng>(
    num_vars: usize,
    rng: &mut R,
) -> Result<(TcCommitterKey<E>, TcVerifierKey<E>), Error> {
    let (r, c) = split(num_vars);
    let (pst_ck, pst_vk) = pst::setup::<E, R>(c, rng)?;
    let s: Vec<E::ScalarField> = (0..r).map(|_| E::ScalarField::rand(rng)).collect();
    let h_levels = lagrange_levels(E::G2::generator(), &s);
    let g_s = E::G1::generator().batch_mul(&s);
    Ok((
        TcCommitterKey {
            num_vars,
            pst: pst_ck,
            h_levels,
        },
        TcVerifierKey {
            num_vars,
            pst: pst_vk,
            g_s,
        },
    ))
}

/// **Insecure, for tests and benchmarks only**: [`setup`] with both secrets derived from
/// `seed`.
pub fn setup_insecure_from_seed<E: Pairing>(
    num_vars: usize,
    seed: u64,
) -> Result<(TcCommitterKey<E>, TcVerifierKey<E>), Error> {
    setup(num_vars, &mut ChaCha20Rng::seed_from_u64(seed))
}

/// The table of `f(X) = Π_k ((1 − X_k) + c_k·X_k)` on the hypercube: entry `i` is the
/// product of `c_k` over the bits `k` set in `i` (most significant first).
fn product_table<F: Field>(c: &[F]) -> Vec<F> {
    let mut table = vec![F::one()];
    for &ck in c {
        table = table.into_iter().flat_map(|e| [e, e * ck]).collect();
    }
    table
}

/// `Π_k ((1 − p_k) + c_k·p_k)`.
fn product_eval<F: Field>(c: &[F], p: &[F]) -> F {
    c.iter()
        .zip(p)
        .map(|(&ck, &pk)| F::one() - pk + ck * pk)
        .product()
}

fn too_big(supported: usize, needed: usize) -> Error {
    Error::KeyTooSmall { supported, needed }
}

impl<E> MultilinearPcs<E::ScalarField> for TestudoComm<E>
where
    E: Pairing,
    E::BaseField: Absorb,
    E::TargetField: Field<BasePrimeField = E::BaseField>,
{
    type TranscriptField = E::BaseField;
    type CommitterKey = TcCommitterKey<E>;
    type VerifierKey = TcVerifierKey<E>;
    type Commitment = TcCommitment<E>;
    /// The row commitments `A_i`.
    type OpeningHint = Vec<E::G1Affine>;
    type Proof = TcProof<E>;

    fn max_vars(ck: &Self::CommitterKey) -> usize {
        ck.num_vars
    }

    fn absorb_commitment(
        commitment: &Self::Commitment,
        transcript: &mut Transcript<E::ScalarField, E::BaseField>,
    ) {
        transcript.absorb_target(&commitment.0 .0);
    }

    fn commit(
        ck: &Self::CommitterKey,
        poly: &MultilinearPoly<E::ScalarField>,
    ) -> Result<(Self::Commitment, Self::OpeningHint), Error> {
        let n = poly.num_vars();
        if n > ck.num_vars {
            return Err(too_big(ck.num_vars, n));
        }
        let (r, c) = split(n);
        let row_level = &ck.pst.levels[ck.pst.num_vars - c];
        let rows: Vec<E::G1> = poly
            .evals()
            .chunks(1 << c)
            .map(|row| E::G1::msm_unchecked(row_level, row))
            .collect();
        let rows = E::G1::normalize_batch(&rows);
        let h = &ck.h_levels[ck.h_levels.len() - 1 - r];
        let t = E::multi_pairing(rows.iter().copied(), h.iter().copied());
        Ok((TcCommitment(t), rows))
    }

    fn open(
        ck: &Self::CommitterKey,
        poly: &MultilinearPoly<E::ScalarField>,
        rows: &Self::OpeningHint,
        point: &[E::ScalarField],
        transcript: &mut Transcript<E::ScalarField, E::BaseField>,
    ) -> Result<Self::Proof, Error> {
        let n = poly.num_vars();
        if point.len() != n {
            return Err(Error::Length {
                field: "Testudo-Comm opening point",
                expected: n,
                got: point.len(),
            });
        }
        if n > ck.num_vars {
            return Err(too_big(ck.num_vars, n));
        }
        let (r, c) = split(n);
        if rows.len() != 1 << r {
            return Err(Error::Length {
                field: "Testudo-Comm row commitments",
                expected: 1 << r,
                got: rows.len(),
            });
        }
        let (b, a) = point.split_at(r);
        let y = eq_table(b);

        // 1. q = Σ_i y_i·p_i and U = ⟨A, y⟩.
        let mut q = vec![E::ScalarField::zero(); 1 << c];
        for (yi, row) in y.iter().zip(poly.evals().chunks(1 << c)) {
            for (qj, pj) in q.iter_mut().zip(row) {
                *qj += *yi * pj;
            }
        }
        let u = E::G1::msm_unchecked(rows, &y).into_affine();
        let q = MultilinearPoly::new(c, q)?;
        open_parts(ck, rows, y, u, &q, a, transcript)
    }

    fn verify(
        vk: &Self::VerifierKey,
        commitment: &Self::Commitment,
        point: &[E::ScalarField],
        value: E::ScalarField,
        proof: &Self::Proof,
        transcript: &mut Transcript<E::ScalarField, E::BaseField>,
    ) -> Result<(), Error> {
        let n = point.len();
        if n > vk.num_vars {
            return Err(too_big(vk.num_vars, n));
        }
        let (r, _) = split(n);
        for (field, len) in [
            ("Testudo-Comm MIPP rounds", proof.rounds.len()),
            ("Testudo-Comm G2 opening", proof.h_hat_opening.len()),
        ] {
            if len != r {
                return Err(Error::Malformed {
                    field,
                    reason: format!("{len} entries for {r} row variables"),
                });
            }
        }
        let (b, a) = point.split_at(r);
        transcript.absorb_point(&proof.u);

        // 2. Fold T and U with the round challenges.
        let mut t = commitment.0;
        let mut u = proof.u.into_group();
        let mut x_invs = Vec::with_capacity(r);
        for round in &proof.rounds {
            round.absorb_into(transcript);
            let x = transcript.challenge();
            let x_inv = x.inverse().ok_or(Error::Opening("zero MIPP challenge"))?;
            t = t + round.t_l * x_inv + round.t_r * x;
            u += round.u_l * x_inv + round.u_r * x;
            x_invs.push(x_inv);
        }
        if E::pairing(proof.a_hat, proof.h_hat) != t {
            return Err(Error::Opening("MIPP: folded T differs from e(Â, ĥ)"));
        }
        if proof.a_hat * product_eval(&x_invs, b) != u {
            return Err(Error::Opening("MIPP: folded U differs from Â^ŷ"));
        }
        transcript.absorb_point(&proof.a_hat);
        transcript.absorb_point(&proof.h_hat);

        // 3. ĥ = h^{f(s)}: e(g, ĥ·h^{−f(ρ)}·Π W_k^{ρ_k}) · Π e(g^{−s_k}, W_k) = 1.
        let rho = transcript.challenges(r);
        let f_rho = product_eval(&x_invs, &rho);
        let lhs = proof.h_hat.into_group() - vk.pst.h * f_rho
            + E::G2::msm_unchecked(&proof.h_hat_opening, &rho);
        let k0 = vk.g_s.len() - r;
        let g1 = std::iter::once(vk.pst.g)
            .chain(vk.g_s[k0..].iter().map(|p| (-p.into_group()).into_affine()));
        let g2 = std::iter::once(lhs.into_affine()).chain(proof.h_hat_opening.iter().copied());
        if !E::multi_pairing(g1, g2).is_zero() {
            return Err(Error::Opening("MIPP: ĥ's G2 opening failed"));
        }
        transcript.absorb_points(&proof.h_hat_opening);

        // 4. U opens to the value at a.
        Pst::<E>::verify(
            &vk.pst,
            &PstCommitment(proof.u),
            a,
            value,
            &proof.q_opening,
            transcript,
        )
    }
}

/// Steps 1–4 of the opening once `U` and `q` are chosen (honestly: `U = ⟨A, y⟩` and
/// `q = Σ_i y_i·p_i`; the tests pass other ones to check that the verifier notices).
fn open_parts<E>(
    ck: &TcCommitterKey<E>,
    rows: &[E::G1Affine],
    y: Vec<E::ScalarField>,
    u: E::G1Affine,
    q: &MultilinearPoly<E::ScalarField>,
    a: &[E::ScalarField],
    transcript: &mut Transcript<E::ScalarField, E::BaseField>,
) -> Result<TcProof<E>, Error>
where
    E: Pairing,
    E::BaseField: Absorb,
    E::TargetField: Field<BasePrimeField = E::BaseField>,
{
    let r = y.len().trailing_zeros() as usize;
    transcript.absorb_point(&u);

    // 2. The MIPP rounds.
    let mut av: Vec<E::G1Affine> = rows.to_vec();
    let mut yv = y;
    let mut hv: Vec<E::G2Affine> = ck.h_levels[ck.h_levels.len() - 1 - r].clone();
    let mut x_invs = Vec::with_capacity(r);
    let mut rounds = Vec::with_capacity(r);
    while av.len() > 1 {
        let m = av.len() / 2;
        let (a_l, a_r) = av.split_at(m);
        let (y_l, y_r) = yv.split_at(m);
        let (h_l, h_r) = hv.split_at(m);
        let round = MippRound {
            u_l: E::G1::msm_unchecked(a_l, y_r).into_affine(),
            u_r: E::G1::msm_unchecked(a_r, y_l).into_affine(),
            t_l: E::multi_pairing(a_l.iter().copied(), h_r.iter().copied()),
            t_r: E::multi_pairing(a_r.iter().copied(), h_l.iter().copied()),
        };
        round.absorb_into(transcript);
        let x = transcript.challenge();
        let x_inv = x.inverse().ok_or(Error::Opening("zero MIPP challenge"))?;
        let a_next: Vec<E::G1> = a_l.iter().zip(a_r).map(|(l, r)| *r * x + l).collect();
        let h_next: Vec<E::G2> = h_l.iter().zip(h_r).map(|(l, r)| *r * x_inv + l).collect();
        yv = y_l.iter().zip(y_r).map(|(l, r)| *l + x_inv * r).collect();
        av = E::G1::normalize_batch(&a_next);
        hv = E::G2::normalize_batch(&h_next);
        x_invs.push(x_inv);
        rounds.push(round);
    }
    let (a_hat, h_hat) = (av[0], hv[0]);
    transcript.absorb_point(&a_hat);
    transcript.absorb_point(&h_hat);

    // 3. ĥ opened as a G2 PST commitment of f at ρ.
    let rho = transcript.challenges(r);
    let h_k0 = ck.h_levels.len() - 1 - r;
    let h_hat_opening = open_quotients::<E::G2>(&ck.h_levels, h_k0, &product_table(&x_invs), &rho);
    transcript.absorb_points(&h_hat_opening);

    // 4. U opened at a.
    let q_opening = Pst::<E>::open(&ck.pst, q, &(), a, transcript)?;
    Ok(TcProof {
        u,
        rounds,
        a_hat,
        h_hat,
        h_hat_opening,
        q_opening,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Bls12_381, Fr};
    use ark_ff::UniformRand;

    type T = TestudoComm<Bls12_381>;

    fn random_poly(n: usize, rng: &mut ChaCha20Rng) -> MultilinearPoly<Fr> {
        MultilinearPoly::new(n, (0..1 << n).map(|_| Fr::rand(rng)).collect()).unwrap()
    }

    fn open_and_verify(
        ck: &TcCommitterKey<Bls12_381>,
        vk: &TcVerifierKey<Bls12_381>,
        n: usize,
        rng: &mut ChaCha20Rng,
    ) -> (TcCommitment<Bls12_381>, Vec<Fr>, Fr, TcProof<Bls12_381>) {
        let f = random_poly(n, rng);
        let point: Vec<Fr> = (0..n).map(|_| Fr::rand(rng)).collect();
        let v = f.evaluate(&point).unwrap();
        let (c, hint) = T::commit(ck, &f).unwrap();
        let proof = T::open(ck, &f, &hint, &point, &mut Transcript::new(b"tc").unwrap()).unwrap();
        T::verify(
            vk,
            &c,
            &point,
            v,
            &proof,
            &mut Transcript::new(b"tc").unwrap(),
        )
        .unwrap();
        (c, point, v, proof)
    }

    #[test]
    fn open_verify_for_every_size_up_to_the_key() {
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(7, 1).unwrap();
        // √N-size key: PST for 4 column variables (2^5 − 1 G1 points) and G2 levels for 3
        // row variables (2^4 − 1 points).
        assert_eq!(ck.pst.num_vars, 4);
        assert_eq!(ck.h_levels.len(), 4);
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for n in 0..=7 {
            let (c, point, v, proof) = open_and_verify(&ck, &vk, n, &mut rng);
            assert_eq!(
                T::verify(
                    &vk,
                    &c,
                    &point,
                    v + Fr::from(1u64),
                    &proof,
                    &mut Transcript::new(b"tc").unwrap()
                ),
                Err(Error::Opening("PST pairing check failed"))
            );
        }
    }

    #[test]
    fn keys_and_proofs_round_trip_through_serialization() {
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(5, 9).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(10);
        let (c, point, v, proof) = open_and_verify(&ck, &vk, 5, &mut rng);
        fn round_trip<
            X: CanonicalSerialize + CanonicalDeserialize + PartialEq + std::fmt::Debug,
        >(
            x: &X,
        ) -> X {
            let mut bytes = Vec::new();
            x.serialize_compressed(&mut bytes).unwrap();
            let back = X::deserialize_compressed(&bytes[..]).unwrap();
            assert_eq!(&back, x);
            back
        }
        round_trip(&ck);
        let vk2 = round_trip(&vk);
        let c2 = round_trip(&c);
        let proof2 = round_trip(&proof);
        T::verify(
            &vk2,
            &c2,
            &point,
            v,
            &proof2,
            &mut Transcript::new(b"tc").unwrap(),
        )
        .unwrap();
    }

    #[test]
    fn every_tampered_part_of_an_opening_is_rejected() {
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(6, 3).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let (c, point, v, proof) = open_and_verify(&ck, &vk, 6, &mut rng);
        let g1 = vk.pst.g;
        let g2 = vk.pst.h;
        let check = |p: &TcProof<Bls12_381>| {
            T::verify(&vk, &c, &point, v, p, &mut Transcript::new(b"tc").unwrap())
        };
        let bump1 = |p: &mut <Bls12_381 as Pairing>::G1Affine| *p = (*p + g1).into_affine();
        let bump2 = |p: &mut <Bls12_381 as Pairing>::G2Affine| *p = (*p + g2).into_affine();

        let mut bad = proof.clone();
        bump1(&mut bad.u);
        assert!(check(&bad).is_err());
        let mut bad = proof.clone();
        bump1(&mut bad.rounds[1].u_l);
        assert!(check(&bad).is_err());
        let mut bad = proof.clone();
        bad.rounds[0].t_r = bad.rounds[0].t_r + bad.rounds[0].t_r;
        assert!(check(&bad).is_err());
        let mut bad = proof.clone();
        bump1(&mut bad.a_hat);
        assert!(check(&bad).is_err());
        let mut bad = proof.clone();
        bump2(&mut bad.h_hat);
        assert!(check(&bad).is_err());
        let mut bad = proof.clone();
        bump2(&mut bad.h_hat_opening[0]);
        assert_eq!(
            check(&bad),
            Err(Error::Opening("MIPP: ĥ's G2 opening failed"))
        );
        let mut bad = proof.clone();
        bump1(&mut bad.q_opening.quotients[0]);
        assert_eq!(check(&bad), Err(Error::Opening("PST pairing check failed")));
        let mut bad = proof;
        bad.rounds.pop();
        assert!(matches!(check(&bad), Err(Error::Malformed { .. })));
    }

    #[test]
    fn a_commitment_to_another_polynomial_does_not_open() {
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(6, 5).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        let f = random_poly(6, &mut rng);
        let mut g_evals = f.evals().to_vec();
        g_evals[37] += Fr::from(1u64);
        let g = MultilinearPoly::new(6, g_evals).unwrap();
        let point: Vec<Fr> = (0..6).map(|_| Fr::rand(&mut rng)).collect();
        let (cf, _) = T::commit(&ck, &f).unwrap();
        let (_, hint_g) = T::commit(&ck, &g).unwrap();
        // Open g (with g's rows) against f's commitment, at g's value.
        let v = g.evaluate(&point).unwrap();
        let proof = T::open(
            &ck,
            &g,
            &hint_g,
            &point,
            &mut Transcript::new(b"tc").unwrap(),
        )
        .unwrap();
        assert_eq!(
            T::verify(
                &vk,
                &cf,
                &point,
                v,
                &proof,
                &mut Transcript::new(b"tc").unwrap()
            ),
            Err(Error::Opening("MIPP: folded T differs from e(Â, ĥ)"))
        );
    }

    #[test]
    fn a_u_for_another_q_is_caught_by_the_folded_u() {
        // The forger keeps the true rows (so every T-side check holds) but claims U is the
        // commitment to q' = q + e_0 and opens q' at a to its value: only U' = Â^ŷ catches it.
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(6, 7).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(8);
        let f = random_poly(6, &mut rng);
        let point: Vec<Fr> = (0..6).map(|_| Fr::rand(&mut rng)).collect();
        let (c, rows) = T::commit(&ck, &f).unwrap();
        let (b, a) = point.split_at(3);
        let y = eq_table(b);
        let mut q = vec![Fr::zero(); 8];
        for (yi, row) in y.iter().zip(f.evals().chunks(8)) {
            for (qj, pj) in q.iter_mut().zip(row) {
                *qj += *yi * pj;
            }
        }
        q[0] += Fr::from(1u64);
        let q = MultilinearPoly::new(3, q).unwrap();
        let (u, ()) = Pst::<Bls12_381>::commit(&ck.pst, &q).unwrap();
        let v = q.evaluate(a).unwrap();
        assert_ne!(v, f.evaluate(&point).unwrap());
        let proof = open_parts(
            &ck,
            &rows,
            y,
            u.0,
            &q,
            a,
            &mut Transcript::new(b"tc").unwrap(),
        )
        .unwrap();
        assert_eq!(
            T::verify(
                &vk,
                &c,
                &point,
                v,
                &proof,
                &mut Transcript::new(b"tc").unwrap()
            ),
            Err(Error::Opening("MIPP: folded U differs from Â^ŷ"))
        );
    }
}

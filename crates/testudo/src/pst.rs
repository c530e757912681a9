//! PST: the multilinear KZG commitment of Papamanthou–Shi–Tamassia in the Lagrange basis
//! (the paper's Fig. 1), generic over a pairing.
//!
//! **Setup (trusted).** For secret `t = (t_0, …, t_{ν−1})`, the committer key holds, for
//! every suffix `k = 0 … ν`, the `2^{ν−k}` points `g^{χ_b(t_k, …, t_{ν−1})}`
//! (`b ∈ {0,1}^{ν−k}`, `χ_b` the Lagrange basis, [`crate::poly::eq_table`] order): level `0`
//! commits to `ν`-variable polynomials, level `k` to the quotients that no longer depend on
//! `x_0 … x_{k−1}`. Size `2^{ν+1} − 1` G1 points (linear in `N`; Testudo-Comm is what brings
//! this to `√N`). The verifier key holds `g`, `h` and `h^{t_k}`. Whoever knows `t` can forge
//! openings: [`setup`] must run in a ceremony (or with an RNG nobody keeps the state of), and
//! [`setup_insecure_from_seed`] is for tests only.
//!
//! A polynomial with `μ < ν` variables is committed with level `ν − μ` (the last `μ`
//! secrets), so one key serves every size up to `ν`.
//!
//! **Commit.** `C = g^{f(t)} = Π_b (g^{χ_b(t)})^{f(b)}`, one MSM.
//!
//! **Open at `a`.** Write `f = f_0 + x_0·(f_1 − f_0)` with `f_0, f_1` the lower and upper
//! halves of the table; then `f = f(a_0, ·) + (x_0 − a_0)·q_0` with `q_0 = f_1 − f_0`, and
//! the same step repeats on `f(a_0, ·)`. After `μ` steps
//! `f(x) − f(a) = Σ_j (x_j − a_j)·q_j(x_{j+1}, …)`, and the proof is `w_j = g^{q_j(t)}`.
//!
//! **Verify** `e(C·g^{−y}, h) = Π_j e(w_j, h^{t_j − a_j})`, rearranged so that the G2 side is
//! fixed key material: `e(C·g^{−y}·Π_j w_j^{a_j}, h) · Π_j e(w_j^{−1}, h^{t_j}) = 1`, one
//! multi-pairing of `μ + 1` pairs.
//!
//! **Transcript** (over the base field `F_q`, [`crate::transcript`]): the commitment is
//! absorbed as the point `C`; the opening absorbs the quotients `w_0, …, w_{μ−1}` (points, in
//! order) and squeezes nothing.

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_ec::{AffineRepr, CurveGroup, PrimeGroup, ScalarMul, VariableBaseMSM};
use ark_ff::UniformRand;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use ark_std::Zero;
use rand::{CryptoRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use std::marker::PhantomData;

use crate::pcs::MultilinearPcs;
use crate::poly::{checked_pow2, eq_table, MultilinearPoly};
use crate::transcript::Transcript;
use crate::Error;

/// The PST scheme over the pairing `E`.
pub struct Pst<E: Pairing>(PhantomData<E>);

/// The committer key for up to `num_vars` variables (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct PstCommitterKey<E: Pairing> {
    pub num_vars: usize,
    /// `levels[k][b] = g^{χ_b(t_k, …, t_{ν−1})}`.
    pub levels: Vec<Vec<E::G1Affine>>,
}

/// The verifier key: `g`, `h`, and `h^{t_k}` for `k = 0 … ν−1`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct PstVerifierKey<E: Pairing> {
    pub num_vars: usize,
    pub g: E::G1Affine,
    pub h: E::G2Affine,
    pub h_t: Vec<E::G2Affine>,
}

/// `C = g^{f(t)}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct PstCommitment<E: Pairing>(pub E::G1Affine);

/// `w_j = g^{q_j(t)}`, one per variable.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct PstProof<E: Pairing> {
    pub quotients: Vec<E::G1Affine>,
}

/// The trusted setup for polynomials of up to `num_vars` variables, with the secret drawn
/// from `rng` and dropped before returning. Whoever can replay `rng` can forge openings.
pub fn setup<E: Pairing, R: RngCore + CryptoRng>(
    num_vars: usize,
    rng: &mut R,
) -> Result<(PstCommitterKey<E>, PstVerifierKey<E>), Error> {
    checked_pow2(num_vars + 1, "PST num_vars")?;
    let t: Vec<E::ScalarField> = (0..num_vars).map(|_| E::ScalarField::rand(rng)).collect();
    let g = E::G1::generator();
    let h = E::G2::generator();
    let levels = lagrange_levels(g, &t);
    let h_t = h.batch_mul(&t);
    Ok((
        PstCommitterKey { num_vars, levels },
        PstVerifierKey {
            num_vars,
            g: g.into_affine(),
            h: h.into_affine(),
            h_t,
        },
    ))
}

/// The Lagrange levels of a PST key in any group: `levels[k][b] = gen^{χ_b(t_k, …)}` for
/// `k = 0 … |t|`, made in one batch multiplication (one table of multiples of `gen`).
pub(crate) fn lagrange_levels<G: CurveGroup>(gen: G, t: &[G::ScalarField]) -> Vec<Vec<G::Affine>> {
    let tables: Vec<Vec<G::ScalarField>> = (0..=t.len()).map(|k| eq_table(&t[k..])).collect();
    let flat: Vec<G::ScalarField> = tables.iter().flatten().copied().collect();
    let mut points = gen.batch_mul(&flat).into_iter();
    tables
        .iter()
        .map(|tab| points.by_ref().take(tab.len()).collect())
        .collect()
}

/// The PST quotient commitments `w_j = gen^{q_j(t)}` of the table `evals` (`μ` variables)
/// at `point`, with the key's levels starting at `k0` (`levels[k0]` has `2^μ` points).
/// Each step writes `f = f_lo + x_j·(f_hi − f_lo)`: the quotient is `f_hi − f_lo` and the
/// remainder `f(a_j, ·) = f_lo + a_j·(f_hi − f_lo)`.
pub(crate) fn open_quotients<G: CurveGroup>(
    levels: &[Vec<G::Affine>],
    k0: usize,
    evals: &[G::ScalarField],
    point: &[G::ScalarField],
) -> Vec<G::Affine> {
    let mut f = evals.to_vec();
    let mut quotients = Vec::with_capacity(point.len());
    for (j, &a) in point.iter().enumerate() {
        let half = f.len() / 2;
        let (lo, hi) = f.split_at(half);
        let q: Vec<G::ScalarField> = lo.iter().zip(hi).map(|(l, h)| *h - l).collect();
        let base = &levels[k0 + j + 1];
        debug_assert_eq!(base.len(), q.len());
        quotients.push(G::msm_unchecked(base, &q));
        for (l, d) in f[..half].iter_mut().zip(&q) {
            *l += a * d;
        }
        f.truncate(half);
    }
    G::normalize_batch(&quotients)
}

/// **Insecure, for tests and benchmarks only**: [`setup`] with the secret derived from
/// `seed`, so anyone who knows the seed can forge openings.
pub fn setup_insecure_from_seed<E: Pairing>(
    num_vars: usize,
    seed: u64,
) -> Result<(PstCommitterKey<E>, PstVerifierKey<E>), Error> {
    setup(num_vars, &mut ChaCha20Rng::seed_from_u64(seed))
}

impl<E: Pairing> PstCommitterKey<E> {
    /// The level that commits to `vars`-variable polynomials: `ν − vars`.
    fn level(&self, vars: usize) -> Result<usize, Error> {
        self.num_vars.checked_sub(vars).ok_or(Error::KeyTooSmall {
            supported: self.num_vars,
            needed: vars,
        })
    }
}

fn msm<E: Pairing>(bases: &[E::G1Affine], scalars: &[E::ScalarField]) -> E::G1 {
    // Callers pass tables of equal length (a level and a polynomial of that size).
    debug_assert_eq!(bases.len(), scalars.len());
    E::G1::msm_unchecked(bases, scalars)
}

impl<E> MultilinearPcs<E::ScalarField> for Pst<E>
where
    E: Pairing,
    E::BaseField: Absorb,
{
    type TranscriptField = E::BaseField;
    type CommitterKey = PstCommitterKey<E>;
    type VerifierKey = PstVerifierKey<E>;
    type Commitment = PstCommitment<E>;
    type OpeningHint = ();
    type Proof = PstProof<E>;

    fn max_vars(ck: &Self::CommitterKey) -> usize {
        ck.num_vars
    }

    fn absorb_commitment(
        commitment: &Self::Commitment,
        transcript: &mut Transcript<E::ScalarField, E::BaseField>,
    ) {
        transcript.absorb_point(&commitment.0);
    }

    fn commit(
        ck: &Self::CommitterKey,
        poly: &MultilinearPoly<E::ScalarField>,
    ) -> Result<(Self::Commitment, ()), Error> {
        let k = ck.level(poly.num_vars())?;
        Ok((
            PstCommitment(msm::<E>(&ck.levels[k], poly.evals()).into_affine()),
            (),
        ))
    }

    fn open(
        ck: &Self::CommitterKey,
        poly: &MultilinearPoly<E::ScalarField>,
        _hint: &(),
        point: &[E::ScalarField],
        transcript: &mut Transcript<E::ScalarField, E::BaseField>,
    ) -> Result<Self::Proof, Error> {
        let mu = poly.num_vars();
        if point.len() != mu {
            return Err(Error::Length {
                field: "PST opening point",
                expected: mu,
                got: point.len(),
            });
        }
        let k0 = ck.level(mu)?;
        let quotients = open_quotients::<E::G1>(&ck.levels, k0, poly.evals(), point);
        transcript.absorb_points(&quotients);
        let proof = PstProof { quotients };
        Ok(proof)
    }

    fn verify(
        vk: &Self::VerifierKey,
        commitment: &Self::Commitment,
        point: &[E::ScalarField],
        value: E::ScalarField,
        proof: &Self::Proof,
        transcript: &mut Transcript<E::ScalarField, E::BaseField>,
    ) -> Result<(), Error> {
        let mu = point.len();
        let k0 = vk.num_vars.checked_sub(mu).ok_or(Error::KeyTooSmall {
            supported: vk.num_vars,
            needed: mu,
        })?;
        if proof.quotients.len() != mu {
            return Err(Error::Malformed {
                field: "PST proof",
                reason: format!("{} quotients for {mu} variables", proof.quotients.len()),
            });
        }
        transcript.absorb_points(&proof.quotients);
        // C·g^{−y}·Π_j w_j^{a_j}
        let lhs = commitment.0.into_group() - vk.g * value
            + E::G1::msm_unchecked(&proof.quotients, point);
        let g1 = std::iter::once(lhs.into_affine()).chain(
            proof
                .quotients
                .iter()
                .map(|w| (-w.into_group()).into_affine()),
        );
        let g2 = std::iter::once(vk.h).chain(vk.h_t[k0..].iter().copied());
        if E::multi_pairing(g1, g2).is_zero() {
            Ok(())
        } else {
            Err(Error::Opening("PST pairing check failed"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::{Bls12_381, Fr, G1Projective};
    use ark_ff::UniformRand;

    type P = Pst<Bls12_381>;

    fn random_poly(nu: usize, rng: &mut ChaCha20Rng) -> MultilinearPoly<Fr> {
        MultilinearPoly::new(nu, (0..1 << nu).map(|_| Fr::rand(rng)).collect()).unwrap()
    }

    #[test]
    fn commitment_is_g_to_the_evaluation_at_the_secret() {
        // Same seed as the setup: rebuild t to check C = g^{f(t)} directly.
        let (ck, _) = setup_insecure_from_seed::<Bls12_381>(3, 9).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        let t: Vec<Fr> = (0..3).map(|_| Fr::rand(&mut rng)).collect();
        let mut rng = ChaCha20Rng::seed_from_u64(10);
        let f = random_poly(3, &mut rng);
        let (c, ()) = P::commit(&ck, &f).unwrap();
        assert_eq!(
            c.0,
            (G1Projective::generator() * f.evaluate(&t).unwrap()).into_affine()
        );
    }

    #[test]
    fn open_verify_for_every_size_up_to_the_key() {
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(5, 1).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(2);
        for mu in 0..=5 {
            let f = random_poly(mu, &mut rng);
            let a: Vec<Fr> = (0..mu).map(|_| Fr::rand(&mut rng)).collect();
            let y = f.evaluate(&a).unwrap();
            let (c, hint) = P::commit(&ck, &f).unwrap();
            let proof = P::open(&ck, &f, &hint, &a, &mut Transcript::new(b"pst").unwrap()).unwrap();
            P::verify(
                &vk,
                &c,
                &a,
                y,
                &proof,
                &mut Transcript::new(b"pst").unwrap(),
            )
            .unwrap();
            // A wrong value is rejected.
            assert_eq!(
                P::verify(
                    &vk,
                    &c,
                    &a,
                    y + Fr::from(1u64),
                    &proof,
                    &mut Transcript::new(b"pst").unwrap()
                ),
                Err(Error::Opening("PST pairing check failed"))
            );
        }
    }

    #[test]
    fn tampered_quotient_wrong_point_or_short_proof_is_rejected() {
        let (ck, vk) = setup_insecure_from_seed::<Bls12_381>(4, 3).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(4);
        let f = random_poly(4, &mut rng);
        let a: Vec<Fr> = (0..4).map(|_| Fr::rand(&mut rng)).collect();
        let y = f.evaluate(&a).unwrap();
        let (c, hint) = P::commit(&ck, &f).unwrap();
        let proof = P::open(&ck, &f, &hint, &a, &mut Transcript::new(b"pst").unwrap()).unwrap();

        let mut bad = proof.clone();
        bad.quotients[2] = (bad.quotients[2] + vk.g).into_affine();
        assert!(P::verify(&vk, &c, &a, y, &bad, &mut Transcript::new(b"pst").unwrap()).is_err());

        let mut b = a.clone();
        b[0] += Fr::from(1u64);
        assert!(P::verify(
            &vk,
            &c,
            &b,
            y,
            &proof,
            &mut Transcript::new(b"pst").unwrap()
        )
        .is_err());

        let mut short = proof.clone();
        short.quotients.pop();
        assert!(matches!(
            P::verify(
                &vk,
                &c,
                &a,
                y,
                &short,
                &mut Transcript::new(b"pst").unwrap()
            ),
            Err(Error::Malformed { .. })
        ));

        // A key for fewer variables refuses to commit.
        let (small, _) = setup_insecure_from_seed::<Bls12_381>(3, 3).unwrap();
        assert_eq!(
            P::commit(&small, &f).unwrap_err(),
            Error::KeyTooSmall {
                supported: 3,
                needed: 4
            }
        );
    }
}

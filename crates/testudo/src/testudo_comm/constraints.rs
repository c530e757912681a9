//! The Testudo-Comm verifier in a circuit over `F_q` (feature `r1cs`; build step 6 of
//! `docs/design/testudo-compression.md`): the twin of [`TestudoComm::verify`](super::TestudoComm)
//! for a BLS12 curve, with ark-r1cs-std's BLS12 gadgets (`G1Var`, `G2Var`, `Fp12Var` for
//! `G_T`, `PairingVar`) and the transcript gadget ([`TranscriptVar`]).
//!
//! What the circuit does, in the native verifier's order:
//!
//! 1. absorbs `U`; per MIPP round absorbs `U_L`, `U_R`, `T_L`, `T_R`, squeezes `x`, takes
//!    `x⁻¹` as a canonical witness with `x·x⁻¹ = 1` enforced (emulated), and folds
//!    `T' = T·T_L^{x⁻¹}·T_R^{x}` (one square-and-multiply over both exponents with cyclotomic
//!    squarings) and `U' = U·U_L^{x⁻¹}·U_R^{x}`;
//! 2. checks `e(Â, ĥ) = T'` (one Miller loop and final exponentiation; `Â` may be the
//!    identity, for the zero polynomial, and then the pairing is 1) and `Â^ŷ = U'` with
//!    `ŷ = Π_k ((1 − b_k) + x_k⁻¹·b_k)`;
//! 3. absorbs `Â`, `ĥ`, squeezes `ρ`, and checks `ĥ`'s G2 PST opening
//!    `e(g, ĥ·h^{−f(ρ)}·Π W_k^{ρ_k}) · Π e(g^{−s_k}, W_k) = 1` (one multi-Miller loop over
//!    `r + 1` pairs with constant G1 sides, one final exponentiation); absorbs the `W_k`;
//! 4. checks the PST opening of `U` at `a` to `v`:
//!    `e(U·g^{−v}·Π w_j^{a_j}, h) · Π e(w_j^{−1}, h^{t_j}) = 1` (one multi-Miller loop over
//!    `c + 1` pairs with constant G2 sides, one final exponentiation); absorbs the `w_j`.
//!
//! The three pairing equations are not merged into one final exponentiation: merging needs a
//! random combination, i.e. a `G_T` exponentiation of a Miller-loop output (≈ 26k
//! constraints) or scalar multiplications of every pair's variable side (≈ 2.3k / 5.7k
//! each), more than the final exponentiation (≈ 7.8k) it saves at every size.
//!
//! **Group elements are checked as the native deserialization checks them**, by the
//! allocations of [`bls12_gadgets`] (build step 5, shared with `hekaton::wrap`): G1 points as
//! `(1 − u)·P'` for an affine witness `P'` on the curve, or the identity by a boolean flag
//! ([`alloc_g1_or_identity`]: `1 − u` is BLS12's effective G1 cofactor; honest quotients and
//! `Â` may be the identity), G2 points on the twist and with `ψ(P) = [u]P` ([`alloc_g2`],
//! Scott's test; the identity is refused, and every G2 element enters a Miller loop, which
//! needs it finite), `G_T` elements with [`bls12_gadgets::enforce_gt_membership`]: non-zero,
//! in the cyclotomic subgroup (`f^{q⁴}·f = f^{q²}`; required by the cyclotomic squarings of
//! the fold) and of order `r` (`f^q = f^u`, which characterises `G_T` inside the cyclotomic
//! subgroup: `gcd(q − u, Φ₁₂(q)) = r` for BLS12 curves, argued and checked in
//! `bls12_gadgets`).
//!
//! **Pairing inputs.** ark-r1cs-std's Miller loop reads the affine coordinates of its G1
//! inputs and runs affine line steps on its G2 inputs, so neither may be the identity (its
//! coordinates carry no meaning there). Every point entering a Miller loop is enforced to be
//! non-identity; where the honest value may be the identity (`Â` for the zero polynomial,
//! PST quotients of a polynomial that does not depend on a variable, the opening's left side)
//! the circuit pairs a shifted point instead: `P + g` against a constant G2 side `Q`, with
//! `e(g, Q)` divided out as a constant (`e(P + g, Q) = e(P, Q)·e(g, Q)`), or, for `e(Â, ĥ)`,
//! `Â` replaced by `g` and the result by 1. The honest prover meets a shifted identity only
//! when a value derived from the secret setup or the challenges hits one point: with
//! negligible probability.
//!
//! **Shapes.** The number of variables (hence `r = ⌊n/2⌋` rounds and `c = n − r` column
//! variables) is fixed when the circuit is built; a proof of another shape is refused with
//! [`Error::Malformed`], as the native verifier refuses it.

use ark_ec::bls12::{Bls12, Bls12Config, G2Prepared};
use ark_ec::pairing::Pairing;
use ark_ec::AffineRepr;
use ark_ff::{Field, PrimeField};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::convert::ToConstraintFieldGadget;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::emulated_fp::EmulatedFpVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::groups::bls12::{G1Var, G2PreparedVar, G2Var};
use ark_r1cs_std::groups::CurveVar;
use ark_r1cs_std::pairing::bls12::PairingVar;
use ark_r1cs_std::pairing::PairingVar as _;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use bls12_gadgets::{alloc_g1_or_identity, alloc_g2, alloc_gt, gt_two_exponent, Fq12, G1A, G2A};

use super::{split, TcCommitment, TcProof, TcVerifierKey};
use crate::transcript::constraints::{emulated_to_integer, ChallengeVar, ScalarVar, TranscriptVar};
use crate::Error;

/// The base field `F_q` of a BLS12 curve (the circuit's field), `F_r`, and a `G_T` element in
/// the circuit (checked by [`alloc_gt`] wherever this module allocates one).
pub use bls12_gadgets::{Fq, Fr, GtVar};

/// The commitment `T` in the circuit (a checked `G_T` witness).
#[derive(Clone)]
pub struct TcCommitmentVar<P: Bls12Config> {
    pub t: GtVar<P>,
}

impl<P: Bls12Config> TcCommitmentVar<P> {
    /// Allocates `T` as a witness (membership enforced); `None` builds without values.
    pub fn new_witness(
        cs: ConstraintSystemRef<Fq<P>>,
        commitment: Option<&TcCommitment<Bls12<P>>>,
    ) -> Result<Self, Error> {
        Ok(Self {
            t: alloc_gt::<P>(&cs, commitment.map(|c| c.0 .0))?,
        })
    }

    /// The `F_q` elements the transcript absorbs for `T` (its 12 components, in the native
    /// order): what `spartan::constraints::verify` takes as the commitment, so that the
    /// absorbed commitment is the one whose opening [`verify`] checks.
    pub fn absorbed_elements(&self) -> Result<Vec<FpVar<Fq<P>>>, Error> {
        Ok(self.t.to_constraint_field()?)
    }
}

/// One MIPP round in the circuit.
#[derive(Clone)]
pub struct MippRoundVar<P: Bls12Config> {
    pub u_l: G1Var<P>,
    pub u_r: G1Var<P>,
    pub t_l: GtVar<P>,
    pub t_r: GtVar<P>,
}

/// A Testudo-Comm opening in the circuit, every element a checked witness.
#[derive(Clone)]
pub struct TcProofVar<P: Bls12Config> {
    pub u: G1Var<P>,
    pub rounds: Vec<MippRoundVar<P>>,
    pub a_hat: G1Var<P>,
    pub h_hat: G2Var<P>,
    pub h_hat_opening: Vec<G2Var<P>>,
    pub q_opening: Vec<G1Var<P>>,
}

fn check_len(field: &'static str, got: usize, expected: usize) -> Result<(), Error> {
    if got == expected {
        Ok(())
    } else {
        Err(Error::Malformed {
            field,
            reason: format!("{got} entries, {expected} expected"),
        })
    }
}

impl<P: Bls12Config> TcProofVar<P> {
    /// Allocates an opening of a `num_vars`-variable polynomial as witnesses; `proof` is
    /// `None` when building without values. A proof of another shape (a dropped or an extra
    /// round, quotient) is refused with [`Error::Malformed`].
    pub fn new_witness(
        cs: ConstraintSystemRef<Fq<P>>,
        num_vars: usize,
        proof: Option<&TcProof<Bls12<P>>>,
    ) -> Result<Self, Error> {
        let (r, c) = split(num_vars);
        if let Some(p) = proof {
            check_len("Testudo-Comm MIPP rounds", p.rounds.len(), r)?;
            check_len("Testudo-Comm G2 opening", p.h_hat_opening.len(), r)?;
            check_len("PST proof", p.q_opening.quotients.len(), c)?;
        }
        let g1 = |v: Option<G1A<P>>| alloc_g1_or_identity::<P>(&cs, v);
        let g2 = |v: Option<G2A<P>>| alloc_g2::<P>(&cs, v);
        let gt = |v: Option<Fq12<P>>| alloc_gt::<P>(&cs, v);
        let rounds = (0..r)
            .map(|i| {
                let round = proof.map(|p| &p.rounds[i]);
                Ok(MippRoundVar {
                    u_l: g1(round.map(|x| x.u_l))?,
                    u_r: g1(round.map(|x| x.u_r))?,
                    t_l: gt(round.map(|x| x.t_l.0))?,
                    t_r: gt(round.map(|x| x.t_r.0))?,
                })
            })
            .collect::<Result<Vec<_>, SynthesisError>>()?;
        Ok(Self {
            u: g1(proof.map(|p| p.u))?,
            rounds,
            a_hat: g1(proof.map(|p| p.a_hat))?,
            h_hat: g2(proof.map(|p| p.h_hat))?,
            h_hat_opening: (0..r)
                .map(|k| g2(proof.map(|p| p.h_hat_opening[k])))
                .collect::<Result<_, _>>()?,
            q_opening: (0..c)
                .map(|j| g1(proof.map(|p| p.q_opening.quotients[j])))
                .collect::<Result<_, _>>()?,
        })
    }
}

fn absorb_g1<P: Bls12Config>(
    t: &mut TranscriptVar<Fr<P>, Fq<P>>,
    p: &G1Var<P>,
) -> Result<(), SynthesisError> {
    let a = p.to_affine()?;
    t.absorb_point(&a.x, &a.y, &a.infinity)
}

fn absorb_g2<P: Bls12Config>(
    t: &mut TranscriptVar<Fr<P>, Fq<P>>,
    p: &G2Var<P>,
) -> Result<(), SynthesisError> {
    let a = p.to_affine()?;
    t.absorb_point(&a.x, &a.y, &a.infinity)
}

/// `Π_k ((1 − p_k) + c_k·p_k)`, emulated.
fn product_eval<F: PrimeField, Q: PrimeField>(
    c: &[EmulatedFpVar<F, Q>],
    p: &[EmulatedFpVar<F, Q>],
) -> EmulatedFpVar<F, Q> {
    let mut acc: Option<EmulatedFpVar<F, Q>> = None;
    for (ck, pk) in c.iter().zip(p) {
        let factor = ck.clone() * pk + (EmulatedFpVar::one() - pk);
        acc = Some(match acc {
            Some(a) => a * factor,
            None => factor,
        });
    }
    acc.unwrap_or_else(EmulatedFpVar::one)
}

fn nonzero<C, V>(p: &V) -> Result<(), SynthesisError>
where
    C: ark_ec::CurveGroup,
    V: CurveVar<C, <C::BaseField as Field>::BasePrimeField>,
{
    p.is_zero()?.enforce_equal(&Boolean::FALSE)
}

/// Verifies a Testudo-Comm opening of `commitment` at `point` to `value` (module doc),
/// continuing `transcript` as the native verifier does. The point's coordinates are
/// challenges (Spartan's `r_y'`: their bits drive the PST opening's multiplications). Errors
/// on shapes and a key too small; every check on values is a constraint.
pub fn verify<P: Bls12Config>(
    vk: &TcVerifierKey<Bls12<P>>,
    commitment: &TcCommitmentVar<P>,
    point: &[ChallengeVar<Fr<P>, Fq<P>>],
    value: &ScalarVar<Fr<P>, Fq<P>>,
    proof: &TcProofVar<P>,
    transcript: &mut TranscriptVar<Fr<P>, Fq<P>>,
) -> Result<(), Error> {
    let n = point.len();
    if n > vk.num_vars {
        return Err(Error::KeyTooSmall {
            supported: vk.num_vars,
            needed: n,
        });
    }
    let (r, c) = split(n);
    check_len("Testudo-Comm MIPP rounds", proof.rounds.len(), r)?;
    check_len("Testudo-Comm G2 opening", proof.h_hat_opening.len(), r)?;
    check_len("PST proof", proof.q_opening.len(), c)?;
    let too_small = Error::KeyTooSmall {
        supported: vk.num_vars,
        needed: n,
    };
    let k0_s = vk.g_s.len().checked_sub(r).ok_or(too_small.clone())?;
    let k0_t = vk.pst.h_t.len().checked_sub(c).ok_or(too_small)?;
    let cs = commitment.t.cs().or(proof.u.cs());
    let (b, a) = point.split_at(r);
    absorb_g1::<P>(transcript, &proof.u)?;

    // 1. The MIPP folds.
    let mut t = commitment.t.clone();
    let mut u = proof.u.clone();
    let mut x_invs = Vec::with_capacity(r);
    for round in &proof.rounds {
        absorb_g1::<P>(transcript, &round.u_l)?;
        absorb_g1::<P>(transcript, &round.u_r)?;
        transcript.absorb_target(&round.t_l)?;
        transcript.absorb_target(&round.t_r)?;
        let x = transcript.challenge()?;
        let (x_inv, x_inv_bits) = ScalarVar::new_witness_with_bits(cs.clone(), || {
            x.value
                .value()?
                .inverse()
                .ok_or(SynthesisError::Unsatisfiable)
        })?;
        (x.value.clone() * &x_inv.value).enforce_equal(&EmulatedFpVar::one())?;
        t *= gt_two_exponent::<P>(&round.t_l, &x_inv_bits, &round.t_r, &x.bits)?;
        u +=
            round.u_l.scalar_mul_le(x_inv_bits.iter())? + round.u_r.scalar_mul_le(x.bits.iter())?;
        x_invs.push(x_inv.value);
    }

    // 2. e(Â, ĥ) = T' (1 when Â is the identity) and Â^ŷ = U'.
    let g = G1Var::<P>::constant(vk.pst.g.into_group());
    let a_is_zero = proof.a_hat.is_zero()?;
    nonzero(&proof.h_hat)?;
    let a_safe = a_is_zero.select(&g, &proof.a_hat)?;
    let e = PairingVar::<P>::pairing(
        PairingVar::<P>::prepare_g1(&a_safe)?,
        PairingVar::<P>::prepare_g2(&proof.h_hat)?,
    )?;
    a_is_zero
        .select(&GtVar::<P>::one(), &e)?
        .enforce_equal(&t)?;
    let b_vals: Vec<_> = b.iter().map(|x| x.value.clone()).collect();
    let y_hat = product_eval(&x_invs, &b_vals);
    let (_, y_hat_bits) = emulated_to_integer(&y_hat)?;
    proof
        .a_hat
        .scalar_mul_le(y_hat_bits.iter())?
        .enforce_equal(&u)?;
    absorb_g1::<P>(transcript, &proof.a_hat)?;
    absorb_g2::<P>(transcript, &proof.h_hat)?;

    // 3. ĥ's G2 opening: e(g, ĥ·h^{−f(ρ)}·Π W_k^{ρ_k}) · Π e(g^{−s_k}, W_k) = 1.
    let rho = transcript.challenges(r)?;
    let rho_vals: Vec<_> = rho.iter().map(|x| x.value.clone()).collect();
    let (_, f_rho_bits) = emulated_to_integer(&product_eval(&x_invs, &rho_vals))?;
    let h = G2Var::<P>::constant(vk.pst.h.into_group());
    let mut lhs = proof.h_hat.clone() - h.scalar_mul_le(f_rho_bits.iter())?;
    for (w, rk) in proof.h_hat_opening.iter().zip(&rho) {
        lhs += w.scalar_mul_le(rk.bits.iter())?;
    }
    let mut g1s = vec![PairingVar::<P>::prepare_g1(&g)?];
    let mut g2s = vec![PairingVar::<P>::prepare_g2(&lhs)?];
    nonzero(&lhs)?;
    for (w, s) in proof.h_hat_opening.iter().zip(&vk.g_s[k0_s..]) {
        nonzero(w)?;
        g1s.push(PairingVar::<P>::prepare_g1(&G1Var::<P>::constant(
            -s.into_group(),
        ))?);
        g2s.push(PairingVar::<P>::prepare_g2(w)?);
    }
    PairingVar::<P>::final_exponentiation(&PairingVar::<P>::miller_loop(&g1s, &g2s)?)?
        .enforce_equal(&GtVar::<P>::one())?;
    for w in &proof.h_hat_opening {
        absorb_g2::<P>(transcript, w)?;
    }

    // 4. U opens to `value` at a: e(U·g^{−v}·Π w_j^{a_j}, h) · Π e(w_j^{−1}, h^{t_j}) = 1,
    // every G1 side shifted by g and Π e(g, ·) divided out as a constant.
    let (_, v_bits) = emulated_to_integer(&value.value)?;
    let mut lhs = proof.u.clone() - g.scalar_mul_le(v_bits.iter())?;
    for (w, aj) in proof.q_opening.iter().zip(a) {
        lhs += w.scalar_mul_le(aj.bits.iter())?;
    }
    let g2_consts: Vec<G2A<P>> = std::iter::once(vk.pst.h)
        .chain(vk.pst.h_t[k0_t..].iter().copied())
        .collect();
    let g1_vars: Vec<G1Var<P>> = std::iter::once(Ok(lhs))
        .chain(proof.q_opening.iter().map(|w| w.negate()))
        .collect::<Result<_, _>>()?;
    let mut g1s = Vec::with_capacity(g1_vars.len());
    let mut g2s = Vec::with_capacity(g1_vars.len());
    for (p, q) in g1_vars.iter().zip(&g2_consts) {
        let shifted = p.clone() + &g;
        nonzero(&shifted)?;
        g1s.push(PairingVar::<P>::prepare_g1(&shifted)?);
        g2s.push(G2PreparedVar::<P>::new_constant(
            cs.clone(),
            G2Prepared::<P>::from(*q),
        )?);
    }
    let shift: Fq12<P> = Bls12::<P>::multi_pairing(
        std::iter::repeat_n(vk.pst.g, g2_consts.len()),
        g2_consts.iter().copied(),
    )
    .0;
    PairingVar::<P>::final_exponentiation(&PairingVar::<P>::miller_loop(&g1s, &g2s)?)?
        .enforce_equal(&GtVar::<P>::constant(shift))?;
    for w in &proof.q_opening {
        absorb_g1::<P>(transcript, w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{setup_insecure_from_seed, TcCommitterKey, TestudoComm};
    use super::*;
    use crate::pcs::MultilinearPcs;
    use crate::poly::MultilinearPoly;
    use crate::transcript::constraints::emulated_from_bits;
    use crate::transcript::{Transcript, CHALLENGE_BITS};
    use ark_bls12_381::{Bls12_381, Config, Fq as Fq381, Fq12 as Fq12_381, Fr as Fr381};
    use ark_ec::CurveGroup;
    use ark_ff::{BigInteger, UniformRand};
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use std::time::Instant;

    type E = Bls12_381;
    type T = TestudoComm<E>;
    type Cs = ConstraintSystemRef<Fq381>;

    fn new_cs() -> Cs {
        let cs = ConstraintSystem::<Fq381>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs
    }

    /// A point whose coordinates fit a challenge's 254 bits (what Spartan opens at).
    fn random_point(n: usize, rng: &mut ChaCha20Rng) -> Vec<Fr381> {
        (0..n)
            .map(|_| {
                let bits = Fr381::rand(rng).into_bigint().to_bits_le();
                Fr381::from_bigint(BigInteger::from_bits_le(&bits[..CHALLENGE_BITS])).unwrap()
            })
            .collect()
    }

    fn point_var(cs: &Cs, point: &[Fr381]) -> Vec<ChallengeVar<Fr381, Fq381>> {
        point
            .iter()
            .map(|x| {
                let bits: Vec<Boolean<Fq381>> = x.into_bigint().to_bits_le()[..CHALLENGE_BITS]
                    .iter()
                    .map(|&b| Boolean::new_witness(cs.clone(), || Ok(b)).unwrap())
                    .collect();
                ChallengeVar {
                    value: emulated_from_bits(cs, &bits).unwrap(),
                    integer: Boolean::le_bits_to_fp(&bits).unwrap(),
                    bits,
                }
            })
            .collect()
    }

    struct Opening {
        vk: TcVerifierKey<E>,
        commitment: TcCommitment<E>,
        point: Vec<Fr381>,
        value: Fr381,
        proof: TcProof<E>,
    }

    fn honest(n: usize, seed: u64) -> (TcCommitterKey<E>, Opening) {
        let (ck, vk) = setup_insecure_from_seed::<E>(n, seed).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(seed + 100);
        let f =
            MultilinearPoly::new(n, (0..1 << n).map(|_| Fr381::rand(&mut rng)).collect()).unwrap();
        let point = random_point(n, &mut rng);
        let value = f.evaluate(&point).unwrap();
        let (commitment, hint) = T::commit(&ck, &f).unwrap();
        let proof = T::open(&ck, &f, &hint, &point, &mut Transcript::new(b"tc").unwrap()).unwrap();
        let o = Opening {
            vk,
            commitment,
            point,
            value,
            proof,
        };
        assert_eq!(native(&o), Ok(()));
        (ck, o)
    }

    fn native(o: &Opening) -> Result<(), Error> {
        T::verify(
            &o.vk,
            &o.commitment,
            &o.point,
            o.value,
            &o.proof,
            &mut Transcript::new(b"tc").unwrap(),
        )
    }

    /// The circuit for `o`: whether it is satisfied, its constraint count, and the challenge
    /// its transcript squeezes after the opening (to compare with the native transcript's).
    fn circuit(o: &Opening) -> Result<(bool, usize, Fr381), Error> {
        let cs = new_cs();
        let c = TcCommitmentVar::<Config>::new_witness(cs.clone(), Some(&o.commitment))?;
        let p = TcProofVar::<Config>::new_witness(cs.clone(), o.point.len(), Some(&o.proof))?;
        let point = point_var(&cs, &o.point);
        let v = ScalarVar::new_witness(cs.clone(), || Ok(o.value))?;
        let mut t = TranscriptVar::new(cs.clone(), b"tc")?;
        verify::<Config>(&o.vk, &c, &point, &v, &p, &mut t)?;
        let next = t.challenge()?.value.value()?;
        Ok((cs.is_satisfied()?, cs.num_constraints(), next))
    }

    fn satisfied(o: &Opening) -> bool {
        circuit(o).unwrap().0
    }

    #[test]
    fn an_honest_opening_satisfies_the_circuit_and_leaves_the_native_transcript() {
        let (_, o) = honest(4, 1);
        let start = Instant::now();
        let (ok, constraints, next) = circuit(&o).unwrap();
        assert!(ok);
        let mut tr = Transcript::<Fr381, Fq381>::new(b"tc").unwrap();
        T::verify(&o.vk, &o.commitment, &o.point, o.value, &o.proof, &mut tr).unwrap();
        assert_eq!(next, tr.challenge());
        println!(
            "Testudo-Comm gadget, 4 variables (2 rounds, 2 columns): {constraints} constraints, {:?}",
            start.elapsed()
        );
    }

    #[test]
    fn every_tampered_part_of_an_opening_leaves_the_circuit_unsatisfied() {
        let (_, o) = honest(4, 3);
        let g1 = o.vk.pst.g;
        let g2 = o.vk.pst.h;
        let bump1 = |p: &mut G1A<Config>| *p = (*p + g1).into_affine();
        let bump2 = |p: &mut G2A<Config>| *p = (*p + g2).into_affine();
        let with = |f: &dyn Fn(&mut Opening)| {
            let mut bad = Opening {
                vk: o.vk.clone(),
                commitment: o.commitment,
                point: o.point.clone(),
                value: o.value,
                proof: o.proof.clone(),
            };
            f(&mut bad);
            assert!(
                native(&bad).is_err(),
                "the native verifier accepts the tamper"
            );
            bad
        };
        let cases: Vec<(&str, Opening)> = vec![
            ("U", with(&|b| bump1(&mut b.proof.u))),
            (
                "round 1's U_L",
                with(&|b| bump1(&mut b.proof.rounds[1].u_l)),
            ),
            (
                "round 0's U_R",
                with(&|b| bump1(&mut b.proof.rounds[0].u_r)),
            ),
            (
                "round 0's T_R",
                with(&|b| b.proof.rounds[0].t_r = b.proof.rounds[0].t_r + b.proof.rounds[0].t_r),
            ),
            (
                "round 1's T_L",
                with(&|b| b.proof.rounds[1].t_l = b.proof.rounds[1].t_l + b.proof.rounds[0].t_r),
            ),
            ("Â", with(&|b| bump1(&mut b.proof.a_hat))),
            ("ĥ", with(&|b| bump2(&mut b.proof.h_hat))),
            (
                "a G2 quotient",
                with(&|b| bump2(&mut b.proof.h_hat_opening[1])),
            ),
            (
                "a PST quotient",
                with(&|b| bump1(&mut b.proof.q_opening.quotients[0])),
            ),
            ("the value", with(&|b| b.value += Fr381::from(1u64))),
            (
                "round 0 replaced by the identities (a dropped round, padded)",
                with(&|b| {
                    b.proof.rounds[0] = super::super::MippRound {
                        u_l: G1A::<Config>::zero(),
                        u_r: G1A::<Config>::zero(),
                        t_l: Default::default(),
                        t_r: Default::default(),
                    }
                }),
            ),
        ];
        for (what, bad) in &cases {
            assert!(!satisfied(bad), "tampered {what}: the circuit is satisfied");
        }
        // A dropped round changes the shape the circuit was built for: refused, as natively.
        let mut bad = o.proof.clone();
        bad.rounds.pop();
        assert!(matches!(
            TcProofVar::<Config>::new_witness(new_cs(), 4, Some(&bad)),
            Err(Error::Malformed { .. })
        ));
    }

    #[test]
    fn a_commitment_to_another_polynomial_does_not_open_in_the_circuit() {
        let (ck, vk) = setup_insecure_from_seed::<E>(4, 5).unwrap();
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        let f = MultilinearPoly::new(4, (0..16).map(|_| Fr381::rand(&mut rng)).collect()).unwrap();
        let mut g_evals = f.evals().to_vec();
        g_evals[9] += Fr381::from(1u64);
        let g = MultilinearPoly::new(4, g_evals).unwrap();
        let point = random_point(4, &mut rng);
        let (cf, _) = T::commit(&ck, &f).unwrap();
        let (_, hint_g) = T::commit(&ck, &g).unwrap();
        let value = g.evaluate(&point).unwrap();
        let proof = T::open(
            &ck,
            &g,
            &hint_g,
            &point,
            &mut Transcript::new(b"tc").unwrap(),
        )
        .unwrap();
        let o = Opening {
            vk,
            commitment: cf,
            point,
            value,
            proof,
        };
        assert!(native(&o).is_err());
        assert!(!satisfied(&o));
    }

    /// The opening's allocations are the checked ones of `bls12_gadgets`: each `G_T` element
    /// outside `G_T` (zero, outside the cyclotomic subgroup, cyclotomic but of another order)
    /// and each G2 element outside G2 leaves the allocation alone (before [`verify`] adds the
    /// equations that would also catch most of them) unsatisfied; a G1 element outside G1
    /// is allocated as another point, in G1, and the identity as the identity. Checked to
    /// fail with ark-r1cs-std's unchecked `G_T` and G2 allocations in their place.
    #[test]
    fn the_openings_allocations_refuse_elements_outside_their_groups() {
        use ark_ec::pairing::PairingOutput;
        let mut rng = ChaCha20Rng::seed_from_u64(7);
        let (_, o) = honest(4, 9);
        // A random F_q¹² element (not cyclotomic) and f^{(q⁶ − 1)(q² + 1)} (cyclotomic, of
        // order r·h_T in general, not r).
        let random = Fq12_381::rand(&mut rng);
        let mut c = random;
        c.conjugate_in_place();
        let c = c * random.inverse().unwrap();
        let mut c2 = c;
        c2.frobenius_map_in_place(2);
        let cyclotomic = c * c2;
        assert_ne!(
            cyclotomic.pow(<Fr381 as PrimeField>::MODULUS),
            Fq12_381::ONE
        );
        let off_g2 = loop {
            let x = ark_bls12_381::Fq2::rand(&mut rng);
            if let Some(p) = G2A::<Config>::get_point_from_x_unchecked(x, false) {
                if !p.is_in_correct_subgroup_assuming_on_curve() {
                    break p;
                }
            }
        };
        let off_g1 = loop {
            let x = Fq381::rand(&mut rng);
            if let Some(p) = G1A::<Config>::get_point_from_x_unchecked(x, false) {
                if !p.is_in_correct_subgroup_assuming_on_curve() {
                    break p;
                }
            }
        };
        // The commitment.
        for (what, t) in [
            ("zero", Fq12_381::from(0u64)),
            ("random", random),
            ("cyclotomic", cyclotomic),
        ] {
            let cs = new_cs();
            let _ = TcCommitmentVar::<Config>::new_witness(
                cs.clone(),
                Some(&TcCommitment(PairingOutput(t))),
            )
            .unwrap();
            assert!(!cs.is_satisfied().unwrap(), "a {what} commitment");
        }
        let allocates = |f: &dyn Fn(&mut TcProof<E>)| {
            let mut bad = o.proof.clone();
            f(&mut bad);
            let cs = new_cs();
            let v = TcProofVar::<Config>::new_witness(cs.clone(), 4, Some(&bad)).unwrap();
            (cs.is_satisfied().unwrap(), v)
        };
        type Tamper = Box<dyn Fn(&mut TcProof<E>)>;
        let refused: Vec<(&str, Tamper)> = vec![
            (
                "round 0's T_L zero",
                Box::new(|p| p.rounds[0].t_l = PairingOutput(Fq12_381::from(0u64))),
            ),
            (
                "round 0's T_R random",
                Box::new(move |p| p.rounds[0].t_r = PairingOutput(random)),
            ),
            (
                "round 1's T_L cyclotomic",
                Box::new(move |p| p.rounds[1].t_l = PairingOutput(cyclotomic)),
            ),
            ("ĥ off G2", Box::new(move |p| p.h_hat = off_g2)),
            (
                "a G2 quotient off G2",
                Box::new(move |p| p.h_hat_opening[1] = off_g2),
            ),
        ];
        for (what, f) in &refused {
            assert!(!allocates(f.as_ref()).0, "{what}: allocated");
        }
        // G1: the allocated point is in G1 (not the one asked for), or the identity.
        let (ok, v) = allocates(&|p| p.u = off_g1);
        let got = v.u.value().unwrap().into_affine();
        assert!(ok && got != off_g1 && got.is_in_correct_subgroup_assuming_on_curve());
        let (ok, v) = allocates(&|p| p.q_opening.quotients[0] = G1A::<Config>::zero());
        assert!(ok && v.q_opening[0].value().unwrap().into_affine().is_zero());
    }

    /// Constraint counts of the gadget's parts (printed with `--nocapture`; quoted in the
    /// design note).
    #[test]
    fn constraint_counts() {
        let mut rng = ChaCha20Rng::seed_from_u64(11);
        let count = |f: &dyn Fn(&Cs)| {
            let cs = new_cs();
            f(&cs);
            assert!(cs.is_satisfied().unwrap());
            cs.num_constraints()
        };
        let g1v = (G1A::<Config>::generator() * Fr381::rand(&mut rng)).into_affine();
        let g2v = (G2A::<Config>::generator() * Fr381::rand(&mut rng)).into_affine();
        let gtv = E::pairing(g1v, g2v).0;
        let g1 = count(&|cs| {
            let _ = alloc_g1_or_identity::<Config>(cs, Some(g1v)).unwrap();
        });
        let g2 = count(&|cs| {
            let _ = alloc_g2::<Config>(cs, Some(g2v)).unwrap();
        });
        let gt = count(&|cs| {
            let _ = alloc_gt::<Config>(cs, Some(gtv)).unwrap();
        });
        let (xa, xb) = (Fr381::rand(&mut rng), Fr381::rand(&mut rng));
        let bits = |cs: &Cs, x: Fr381| -> Vec<Boolean<Fq381>> {
            x.into_bigint().to_bits_le()[..255]
                .iter()
                .map(|&b| Boolean::new_witness(cs.clone(), || Ok(b)).unwrap())
                .collect()
        };
        let fold_gt = count(&|cs| {
            let (l, r) = (
                GtVar::<Config>::new_witness(cs.clone(), || Ok(gtv)).unwrap(),
                GtVar::<Config>::new_witness(cs.clone(), || Ok(gtv.square())).unwrap(),
            );
            let (a, b) = (bits(cs, xa), bits(cs, xb));
            let before = cs.num_constraints();
            let _ = gt_two_exponent::<Config>(&l, &a, &r, &b).unwrap();
            println!(
                "  G_T two-exponent step:      {}",
                cs.num_constraints() - before
            );
        });
        let _ = fold_gt;
        let mut totals = Vec::new();
        for n in [2, 3, 4] {
            let (_, o) = honest(n, 20 + n as u64);
            let (ok, c, _) = circuit(&o).unwrap();
            assert!(ok);
            totals.push((n, c));
        }
        println!("Testudo-Comm gadget over F_q (BLS12-381), constraints:");
        println!("  G1 witness ((1 − u) clearing, or the identity): {g1}");
        println!("  G2 witness (on the twist + ψ check): {g2}");
        println!("  G_T witness (membership):        {gt}");
        for (n, c) in &totals {
            println!("  whole opening, {n} variables:     {c}");
        }
    }
}

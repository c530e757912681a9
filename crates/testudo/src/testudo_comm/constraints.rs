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
//! **Group elements are checked as the native deserialization checks them.** G1 points are
//! allocated as `(1 − u)·P'` for a witness `P'` on the curve ([`alloc_g1`]: `1 − u` is
//! BLS12's effective G1 cofactor), G2 points on the curve and with `ψ(P) = [u]P`
//! ([`alloc_g2`], Scott's test), `G_T` elements with [`enforce_gt_membership`]: non-zero, in
//! the cyclotomic subgroup (`f^{q⁴}·f = f^{q²}`; required by the cyclotomic squarings of the
//! fold) and of order `r` (`f^q = f^u`, which for BLS12-381 characterises `G_T` inside the
//! cyclotomic subgroup: `gcd(q − u, Φ₁₂(q)) = r`, checked by this module's tests). These are
//! local versions of what build step 5 shares with `hekaton::wrap` (still to do).
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
use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveConfig, CurveGroup};
use ark_ff::fields::models::fp12_2over3over2::{Fp12, Fp12Config};
use ark_ff::fields::models::fp2::Fp2;
use ark_ff::fields::models::fp6_3over2::Fp6Config;
use ark_ff::{Field, PrimeField};
use ark_r1cs_std::alloc::{AllocVar, AllocationMode};
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::convert::ToConstraintFieldGadget;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::emulated_fp::EmulatedFpVar;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::fp12::Fp12Var;
use ark_r1cs_std::fields::fp2::Fp2Var;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::groups::bls12::{G1Var, G2PreparedVar, G2Var};
use ark_r1cs_std::groups::CurveVar;
use ark_r1cs_std::pairing::bls12::PairingVar;
use ark_r1cs_std::pairing::PairingVar as _;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};

use super::{split, TcCommitment, TcProof, TcVerifierKey};
use crate::transcript::constraints::{emulated_to_integer, ChallengeVar, ScalarVar, TranscriptVar};
use crate::Error;

/// The base field `F_q` of a BLS12 curve (the circuit's field).
pub type Fq<P> = <P as Bls12Config>::Fp;
/// The scalar field `F_r`.
pub type Fr<P> = <<P as Bls12Config>::G1Config as CurveConfig>::ScalarField;
/// A `G_T` element in the circuit.
pub type GtVar<P> = Fp12Var<<P as Bls12Config>::Fp12Config>;
type G1A<P> = Affine<<P as Bls12Config>::G1Config>;
type G2A<P> = Affine<<P as Bls12Config>::G2Config>;
type Fq2<P> = Fp2<<P as Bls12Config>::Fp2Config>;
type Fq12<P> = Fp12<<P as Bls12Config>::Fp12Config>;
type Fq2Var<P> = Fp2Var<<P as Bls12Config>::Fp2Config>;

fn missing() -> SynthesisError {
    SynthesisError::AssignmentMissing
}

/// `(|1 − u|, 1 − u < 0)` for the BLS parameter `u` (one 64-bit limb for BLS12 curves).
fn g1_clearing_scalar<P: Bls12Config>() -> Result<(u128, bool), SynthesisError> {
    let [u] = P::X else {
        return Err(SynthesisError::Unsatisfiable);
    };
    let u = *u as u128;
    Ok(if P::X_IS_NEGATIVE {
        (u + 1, false)
    } else {
        (u - 1, true)
    })
}

/// `k·p` for a constant `k`, by double-and-add with ark-r1cs-std's complete projective
/// formulas (no exceptional cases for any input point).
fn mul_by_constant<C, V>(p: &V, k: u128) -> Result<V, SynthesisError>
where
    C: ark_ec::CurveGroup,
    V: CurveVar<C, <C::BaseField as Field>::BasePrimeField>,
{
    let mut acc = V::zero();
    for i in (0..128 - k.leading_zeros()).rev() {
        acc.double_in_place()?;
        if (k >> i) & 1 == 1 {
            acc += p;
        }
    }
    Ok(acc)
}

/// Allocates a G1 witness `P` as `(1 − u)·P'`, the prover supplying `P' = (1 − u)⁻¹·P` (the
/// inverse mod `r`): `P'` is only checked to be on the curve, and multiplying any point of
/// `E(F_q)` by `1 − u` lands in G1 (BLS12's effective cofactor), so the result is in G1
/// whatever the prover supplies. Complete formulas throughout (64 doublings and 6 additions
/// on BLS12-381); cheaper than ark-r1cs-std's witness allocation (the 126-bit cofactor).
pub fn alloc_g1<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<G1A<P>>,
) -> Result<G1Var<P>, SynthesisError> {
    let (s, negate) = g1_clearing_scalar::<P>()?;
    let mut k = Fr::<P>::from(s);
    if negate {
        k = -k;
    }
    let k_inv = k.inverse().ok_or(SynthesisError::Unsatisfiable)?;
    let pre = G1Var::<P>::new_variable_omit_prime_order_check(
        cs.clone(),
        || value.map(|v| v * k_inv).ok_or_else(missing),
        AllocationMode::Witness,
    )?;
    let p = mul_by_constant::<Projective<P::G1Config>, _>(&pre, s)?;
    if negate {
        p.negate()
    } else {
        Ok(p)
    }
}

/// `ψ(x, y) = (conj(x)·c_x, conj(y)·c_y)`, the untwist–Frobenius–twist endomorphism of the
/// G2 twist: the constants are `ξ^{(q−1)/3}` and `ξ^{(q−1)/2}` (from the `F_{q⁶}` and
/// `F_{q¹²}` Frobenius coefficients) or their inverses, depending on the twist's type; the
/// pair is the one under which the generator satisfies `ψ(G) = [u]G`.
fn psi_constants<P: Bls12Config>() -> Result<(Fq2<P>, Fq2<P>), SynthesisError> {
    let a: Fq2<P> = <P::Fp12Config as Fp12Config>::Fp6Config::FROBENIUS_COEFF_FP6_C1[1];
    let b6: Fq2<P> = <P::Fp12Config as Fp12Config>::FROBENIUS_COEFF_FP12_C1[1];
    let b = b6 * b6 * b6;
    let g = P::G2Config::GENERATOR;
    let mut ug = g.into_group() * Fr::<P>::from(P::X[0]);
    if P::X_IS_NEGATIVE {
        ug = -ug;
    }
    let ug = ug.into_affine();
    let conj = |mut v: Fq2<P>| {
        v.frobenius_map_in_place(1);
        v
    };
    for (cx, cy) in [(a, b), (a.inverse().unwrap_or(a), b.inverse().unwrap_or(b))] {
        let (gx, gy) = (g.x, g.y);
        if Affine::<P::G2Config>::new_unchecked(conj(gx) * cx, conj(gy) * cy) == ug {
            return Ok((cx, cy));
        }
    }
    Err(SynthesisError::Unsatisfiable)
}

/// Enforces `p ∈ G2` for a point known to be on the twist: `ψ(p) = [u]p` (Scott, ePrint
/// 2021/1130), `[u]p` by double-and-add over the constant `|u|` with complete formulas.
pub fn enforce_g2_membership<P: Bls12Config>(p: &G2Var<P>) -> Result<(), SynthesisError> {
    let (cx, cy) = psi_constants::<P>()?;
    let conj = |v: &Fq2Var<P>| -> Result<Fq2Var<P>, SynthesisError> {
        Ok(Fp2Var::new(v.c0.clone(), v.c1.negate()?))
    };
    // ψ in projective coordinates: (conj(X)·c_x : conj(Y)·c_y : conj(Z)).
    let psi = G2Var::<P>::new(conj(&p.x)? * cx, conj(&p.y)? * cy, conj(&p.z)?);
    let [u] = P::X else {
        return Err(SynthesisError::Unsatisfiable);
    };
    let mut up = mul_by_constant::<Projective<P::G2Config>, _>(p, *u as u128)?;
    if P::X_IS_NEGATIVE {
        up = up.negate()?;
    }
    psi.enforce_equal(&up)
}

/// Allocates a G2 witness: on the curve (ark-r1cs-std's allocation without its prime-order
/// step, which for BLS12-381 computes `[r − 1]P` and then checks nothing) and in G2
/// ([`enforce_g2_membership`]).
pub fn alloc_g2<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<G2A<P>>,
) -> Result<G2Var<P>, SynthesisError> {
    let p = G2Var::<P>::new_variable_omit_prime_order_check(
        cs.clone(),
        || value.map(|v| v.into_group()).ok_or_else(missing),
        AllocationMode::Witness,
    )?;
    enforce_g2_membership::<P>(&p)?;
    Ok(p)
}

/// Enforces that `f` is in `G_T`, the order-`r` subgroup of `F_{q¹²}^*`: `f ≠ 0` (an inverse
/// witness), `f^{q⁴}·f = f^{q²}` (the cyclotomic subgroup, order `Φ₁₂(q)`; Frobenius maps are
/// constant multiplications), and `f^q = f^u` (`f^u` with cyclotomic squarings, `f^{−1}` as
/// the conjugate): the order of `f` then divides `gcd(q − u, Φ₁₂(q))`, which is `r` for
/// BLS12-381 (the tests check it; `q ≡ u (mod r)` for every BLS12 curve, so `G_T` passes).
pub fn enforce_gt_membership<P: Bls12Config>(f: &GtVar<P>) -> Result<(), SynthesisError> {
    let cs = f.cs();
    let inv = if cs.is_none() || f.is_constant() {
        GtVar::<P>::constant(f.value()?.inverse().ok_or(SynthesisError::Unsatisfiable)?)
    } else {
        GtVar::<P>::new_witness(cs, || {
            f.value()?.inverse().ok_or(SynthesisError::Unsatisfiable)
        })?
    };
    (f * &inv).enforce_equal(&GtVar::<P>::one())?;
    (f.frobenius_map(4)? * f).enforce_equal(&f.frobenius_map(2)?)?;
    let fu = f.optimized_cyclotomic_exp(P::X)?;
    let fq = f.frobenius_map(1)?;
    if P::X_IS_NEGATIVE {
        (fq * fu).enforce_equal(&GtVar::<P>::one())
    } else {
        fq.enforce_equal(&fu)
    }
}

/// Allocates a `G_T` witness and enforces its membership ([`enforce_gt_membership`]).
pub fn alloc_gt<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<Fq12<P>>,
) -> Result<GtVar<P>, SynthesisError> {
    let f = GtVar::<P>::new_witness(cs.clone(), || value.ok_or_else(missing))?;
    enforce_gt_membership::<P>(&f)?;
    Ok(f)
}

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
        let g1 = |v: Option<G1A<P>>| alloc_g1::<P>(&cs, v);
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

/// `T_L^{a}·T_R^{b}` for little-endian exponent bits: one square-and-multiply over both,
/// with cyclotomic squarings (both bases are checked `G_T` elements) and the table
/// `{1, T_L, T_R, T_L·T_R}`.
pub fn two_exponent<P: Bls12Config>(
    t_l: &GtVar<P>,
    a: &[Boolean<Fq<P>>],
    t_r: &GtVar<P>,
    b: &[Boolean<Fq<P>>],
) -> Result<GtVar<P>, SynthesisError> {
    let n = a.len().max(b.len());
    let bit = |v: &[Boolean<Fq<P>>], i: usize| v.get(i).cloned().unwrap_or(Boolean::FALSE);
    let both = t_l * t_r;
    let one = GtVar::<P>::one();
    let mut acc = GtVar::<P>::one();
    for i in (0..n).rev() {
        if i + 1 < n {
            acc = acc.cyclotomic_square()?;
        }
        let (ba, bb) = (bit(a, i), bit(b, i));
        let with_a = bb.select(&both, t_l)?;
        let without_a = bb.select(t_r, &one)?;
        acc *= ba.select(&with_a, &without_a)?;
    }
    Ok(acc)
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
            x.value.value()?.inverse().ok_or(SynthesisError::Unsatisfiable)
        })?;
        (x.value.clone() * &x_inv.value).enforce_equal(&EmulatedFpVar::one())?;
        t *= two_exponent::<P>(&round.t_l, &x_inv_bits, &round.t_r, &x.bits)?;
        u += round.u_l.scalar_mul_le(x_inv_bits.iter())? + round.u_r.scalar_mul_le(x.bits.iter())?;
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
    proof.a_hat.scalar_mul_le(y_hat_bits.iter())?.enforce_equal(&u)?;
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
        std::iter::repeat(vk.pst.g).take(g2_consts.len()),
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

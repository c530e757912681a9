//! G1 witnesses with the cofactor cleared by the effective cofactor `1 − u`.
//!
//! The prover supplies `P' = (1 − u)⁻¹·P` (the inverse mod `r`), any point of `E(F_q)` (only
//! the curve equation is enforced), and the circuit computes `(1 − u)·P'`, which is in G1
//! whatever `P'`: multiplication by `1 − u` maps all of `E(F_q)` onto G1 for BLS12 curves (the
//! effective cofactor `h_eff` of RFC 9380 §8.8.1; for BLS12-381 `1 − u = 0xd201000000010001`).
//! The tests check it on points outside G1 of BLS12-381 and BLS12-377. `|1 − u|` has 64 bits
//! and weight 7 on BLS12-381, where ark-r1cs-std's witness allocation multiplies by the 126-bit
//! cofactor of weight 48 with complete projective formulas (and accepts `(0 : 0 : 0)`, see the
//! crate doc).

use ark_ec::bls12::Bls12Config;
use ark_ec::short_weierstrass::SWCurveConfig;
use ark_ec::{AffineRepr, CurveConfig, CurveGroup};
use ark_ff::{Field, Zero};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::groups::bls12::{G1PreparedVar, G1Var};
use ark_r1cs_std::groups::curves::short_weierstrass::non_zero_affine::NonZeroAffineVar;
use ark_r1cs_std::groups::CurveVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};

use crate::{Fq, Fr, G1A};

/// `(|1 − u|, 1 − u < 0)` for the BLS parameter `u`, when it fits one limb (every BLS12
/// curve arkworks ships).
fn g1_clearing_scalar<P: Bls12Config>() -> Option<(u128, bool)> {
    let [u] = P::X else { return None };
    let u = *u as u128;
    Some(if P::X_IS_NEGATIVE {
        (u + 1, false)
    } else {
        (u.checked_sub(1)?, true)
    })
}

/// `(|1 − u|, 1 − u < 0, h)` with `h` the G1 cofactor; `Unsatisfiable` for a curve whose `u`
/// or `h` does not fit (none in arkworks: no allocation falls back to an unchecked path).
pub(crate) fn clearing_constants<P: Bls12Config>() -> Result<(u128, bool, u128), SynthesisError> {
    let h = match <P::G1Config as CurveConfig>::COFACTOR {
        [lo] => Some(*lo as u128),
        [lo, hi] => Some(*lo as u128 | (*hi as u128) << 64),
        _ => None,
    };
    match (h, g1_clearing_scalar::<P>()) {
        (Some(h), Some((s, negate))) => Ok((s, negate, h)),
        _ => Err(SynthesisError::Unsatisfiable),
    }
}

fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Whether the incomplete addition of `P'` to `c·P'` could be a cheating prover's way out,
/// for some point `P'` of `E(F_q)` (order dividing `h·r`) it may supply: the slope of that
/// addition is unconstrained only when `c·P' = P'`, i.e. `(c − 1)·P' = 0`, possible iff
/// `gcd(c − 1, h) ≠ 1` (`0 < c − 1 < r` is prime to `r`). On BLS12-381 this happens at two of
/// the six additions of `|1 − u|` (3 divides both `c − 1` and `h`), which [`alloc_g1`] does
/// with complete formulas instead. The other exceptional cases only make the constraints
/// unsatisfiable: `c·P' = −P'` (a vertical line), and in `(cP' + P') + cP'` the second
/// addition's `(2c + 1)·P' = 0`; no honest `P' ∈ G1` meets any (every multiple is below `r`).
/// Doublings give the prover nothing: a point with `y = 0` (BLS12-377's `E(F_q)` has
/// 2-torsion) makes `λ·2y = 3x²` unsatisfiable, since `x ≠ 0` there. The check is
/// conservative: on BLS12-381 the only such orders are 3, and a `P'` of order 3 already
/// fails at `c = 3` (`3P' = 0`, a vertical line), so the complete steps there are defence
/// in depth (about 35 constraints).
fn incomplete_add_is_safe(c: u128, h: u128) -> bool {
    gcd(c - 1, h) == 1
}

/// The preimage `(1 − u)⁻¹·P` of a G1 value as affine coordinates; `(0, 0)`, which is on no
/// BLS12 curve (`b ≠ 0`), for the identity, so that the curve equation refuses it.
fn preimage<P: Bls12Config>(value: G1A<P>, (s, negate): (u128, bool)) -> (Fq<P>, Fq<P>) {
    let mut k = Fr::<P>::from(s);
    if negate {
        k = -k;
    }
    // 1 − u is not 0 mod r: r = u⁴ − u² + 1 is prime and larger than |1 − u|.
    let k_inv = k.inverse().unwrap_or_default();
    (value * k_inv)
        .into_affine()
        .xy()
        .unwrap_or((Fq::<P>::zero(), Fq::<P>::zero()))
}

/// Allocates a G1 witness `P` as `(1 − u)·P'` (module doc), the prover supplying
/// `P' = (1 − u)⁻¹·P`.
///
/// **Enforces**: `P'` is an affine point of `E(F_q)` (`y² = x³ + b`), and the result is
/// `(1 − u)·P'` and not the identity. Hence the result is in G1 and finite, whatever `P'`
/// the prover supplies; a `P'` whose multiple is the identity (one in the `h`-torsion)
/// leaves the system unsatisfied. `value` the identity: unsatisfied (no preimage is tried).
///
/// The multiplication is a double-and-add in affine coordinates, with incomplete formulas
/// where [`incomplete_add_is_safe`] and complete ones (then back to affine, the identity
/// refused) where not: 303 constraints on BLS12-381, the affine form included. Returns the
/// point (`Z` the constant 1) and its affine form for the Miller loop and the transcript.
pub fn alloc_g1<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<G1A<P>>,
) -> Result<(G1Var<P>, G1PreparedVar<P>), SynthesisError> {
    let point = alloc_g1_point::<P>(cs, value)?;
    let prepared = prepare_g1_finite::<P>(&point)?;
    Ok((point, prepared))
}

/// Allocates a G1 witness that may be the identity.
///
/// **Enforces**: the result is in G1: either the identity (a boolean witness flag selects the
/// canonical `(0 : 1 : 0)`) or `(1 − u)·P'` for an affine point `P'` of `E(F_q)`, finite, as in
/// [`alloc_g1`] (for the identity the prover supplies the generator's preimage, whose multiple
/// is discarded). `Z` is `1 − flag`, so the result never has the shape `(0 : 0 : 0)`.
///
/// For verifiers whose honest group elements may be the identity (Testudo-Comm's quotients,
/// `Â` of the zero polynomial); [`alloc_g1`] plus 3 constraints, without its affine form.
pub fn alloc_g1_or_identity<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<G1A<P>>,
) -> Result<G1Var<P>, SynthesisError> {
    let is_identity = Boolean::new_witness(cs.clone(), || {
        value
            .map(|v| v.is_zero())
            .ok_or(SynthesisError::AssignmentMissing)
    })?;
    let stand_in = value.map(|v| {
        if v.is_zero() {
            G1A::<P>::generator()
        } else {
            v
        }
    });
    let point = alloc_g1_point::<P>(cs, stand_in)?;
    is_identity.select(&G1Var::<P>::zero(), &point)
}

/// [`alloc_g1`]'s point without its affine form.
fn alloc_g1_point<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<G1A<P>>,
) -> Result<G1Var<P>, SynthesisError> {
    let (s, negate, h) = clearing_constants::<P>()?;
    let pre = value.map(|v| preimage::<P>(v, (s, negate)));
    clear_g1_cofactor::<P>(cs, pre, (s, negate, h))
}

/// `(1 − u)·P'` for a witness `P' = (x, y)` with `y² = x³ + b` enforced (see [`alloc_g1`]).
/// The coordinates are raw so that the tests can supply points off the curve.
pub(crate) fn clear_g1_cofactor<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    preimage: Option<(Fq<P>, Fq<P>)>,
    (s, negate, h): (u128, bool, u128),
) -> Result<G1Var<P>, SynthesisError> {
    let coord = |y: bool| {
        FpVar::new_witness(cs.clone(), || {
            let (x, yv) = preimage.ok_or(SynthesisError::AssignmentMissing)?;
            Ok(if y { yv } else { x })
        })
    };
    let (x, y) = (coord(false)?, coord(true)?);
    // y² = x³ + b.
    let b = <P::G1Config as SWCurveConfig>::COEFF_B;
    y.square()?
        .enforce_equal(&(x.square()? * &x + FpVar::constant(b)))?;
    let base = NonZeroAffineVar::<P::G1Config, FpVar<Fq<P>>>::new(x, y);
    let mut acc = base.clone();
    let mut c: u128 = 1;
    for i in (0..(127 - s.leading_zeros())).rev() {
        if (s >> i) & 1 == 0 {
            acc.double_in_place()?;
            c *= 2;
            continue;
        }
        acc = if c == 1 {
            // 2P' + P': P' ≠ 0, so never exceptional.
            acc.double()?.add_unchecked(&base)?
        } else if incomplete_add_is_safe(c, h) {
            acc.double_and_add_unchecked(&base)?
        } else {
            let sum = acc.double()?.into_projective() + base.into_projective();
            let aff = sum.to_affine()?;
            aff.infinity.enforce_equal(&Boolean::FALSE)?;
            NonZeroAffineVar::new(aff.x, aff.y)
        };
        c = 2 * c + 1;
    }
    debug_assert_eq!(c, s);
    let (px, py) = (acc.x, if negate { acc.y.negate()? } else { acc.y });
    Ok(G1Var::<P>::new(px, py, FpVar::one()))
}

/// The affine form of `p` for the Miller loop (ark-r1cs-std's reads the affine coordinates
/// and has no case for the identity), with `p` enforced not to be the identity. 3
/// constraints when `Z` is the constant 1 (its infinity flag is then the constant false).
pub fn prepare_g1_finite<P: Bls12Config>(p: &G1Var<P>) -> Result<G1PreparedVar<P>, SynthesisError> {
    let prepared = G1PreparedVar::<P>::from_group_var(p)?;
    prepared.0.infinity.enforce_equal(&Boolean::FALSE)?;
    Ok(prepared)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::short_weierstrass::Affine;
    use ark_ff::{One, PrimeField, UniformRand};
    use ark_r1cs_std::GR1CSVar;
    use ark_relations::gr1cs::ConstraintSystem;
    use ark_std::rand::rngs::StdRng;
    use ark_std::rand::{Rng, SeedableRng};

    /// A point of `E(F_q)` outside G1, of order dividing `h` times `order`.
    fn outside_g1<P: Bls12Config>(rng: &mut impl Rng, cofactor_part: &[u64]) -> G1A<P> {
        loop {
            let x = Fq::<P>::rand(rng);
            if let Some(p) = Affine::<P::G1Config>::get_point_from_x_unchecked(x, rng.gen()) {
                let q = p.mul_bigint(cofactor_part).into_affine();
                if !q.is_zero() && !q.is_in_correct_subgroup_assuming_on_curve() {
                    return q;
                }
            }
        }
    }

    /// The point a variable with `Z = 1` holds, read without ark-r1cs-std's `value()` (which
    /// asserts the subgroup and would panic before the test's own assertion).
    fn affine_value<P: Bls12Config>(v: &G1Var<P>) -> G1A<P> {
        assert!(v.z.value().unwrap().is_one());
        G1A::<P>::new_unchecked(v.x.value().unwrap(), v.y.value().unwrap())
    }

    fn random_g1<P: Bls12Config>(rng: &mut impl Rng) -> G1A<P> {
        (G1A::<P>::generator() * Fr::<P>::rand(rng)).into_affine()
    }

    /// `alloc_g1` and `alloc_g1_or_identity` give back the native point, and the affine form
    /// its coordinates, on random G1 points; the identity through `alloc_g1_or_identity`.
    fn matches_native<P: Bls12Config>() {
        let mut rng = StdRng::seed_from_u64(1);
        for _ in 0..4 {
            let g = random_g1::<P>(&mut rng);
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let (v, prepared) = alloc_g1::<P>(&cs, Some(g)).unwrap();
            assert!(cs.is_satisfied().unwrap());
            assert_eq!(affine_value::<P>(&v), g);
            assert_eq!(
                (prepared.0.x.value().unwrap(), prepared.0.y.value().unwrap()),
                g.xy().unwrap()
            );
            eprintln!("alloc_g1: {} constraints", cs.num_constraints());
            for p in [g, G1A::<P>::zero()] {
                let cs = ConstraintSystem::<Fq<P>>::new_ref();
                let v = alloc_g1_or_identity::<P>(&cs, Some(p)).unwrap();
                assert!(cs.is_satisfied().unwrap());
                assert_eq!(v.value().unwrap().into_affine(), p);
                eprintln!("alloc_g1_or_identity: {} constraints", cs.num_constraints());
            }
        }
    }

    #[test]
    fn g1_allocation_matches_native_bls12_381() {
        matches_native::<ark_bls12_381::Config>();
    }

    #[test]
    fn g1_allocation_matches_native_bls12_377() {
        matches_native::<ark_bls12_377::Config>();
    }

    /// Whatever point of `E(F_q)` the prover supplies as `P'`, the allocated point is
    /// `(1 − u)·P'` and in G1, or there is no satisfying assignment (when `(1 − u)·P'` is the
    /// identity, e.g. `P'` in the `h`-torsion). Attack test: fails if the multiplication by
    /// `1 − u` is weakened (a `P'` outside G1 then comes out outside G1).
    fn clearing_maps_the_curve_into_g1<P: Bls12Config>() {
        let mut rng = StdRng::seed_from_u64(8);
        let (s, negate, h) = clearing_constants::<P>().unwrap();
        let times_s = |p: G1A<P>| {
            let m = p.mul_bigint([s as u64, (s >> 64) as u64]);
            if negate {
                -m
            } else {
                m
            }
        };
        for _ in 0..4 {
            // A random point of E(F_q): a G1 part and an h-torsion part.
            let p = outside_g1::<P>(&mut rng, &[1]);
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let v = clear_g1_cofactor::<P>(&cs, p.xy(), (s, negate, h)).unwrap();
            assert!(cs.is_satisfied().unwrap());
            let got = affine_value::<P>(&v);
            assert!(
                got.is_on_curve() && got.is_in_correct_subgroup_assuming_on_curve(),
                "(1 − u)·P' is in G1"
            );
            assert_eq!(got, times_s(p));
            // Only the h-torsion part: (1 − u) kills it, and the identity is no witness.
            let t = outside_g1::<P>(&mut rng, Fr::<P>::MODULUS.as_ref());
            assert!(times_s(t).into_affine().is_zero());
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let _ = clear_g1_cofactor::<P>(&cs, t.xy(), (s, negate, h)).unwrap();
            assert!(
                !cs.is_satisfied().unwrap(),
                "a point (1 − u) maps to the identity"
            );
        }
    }

    #[test]
    fn g1_clearing_maps_the_curve_into_g1_bls12_381() {
        clearing_maps_the_curve_into_g1::<ark_bls12_381::Config>();
    }

    #[test]
    fn g1_clearing_maps_the_curve_into_g1_bls12_377() {
        clearing_maps_the_curve_into_g1::<ark_bls12_377::Config>();
    }

    /// A prover that asks for `P ∉ G1` as the allocated point: the preimage it would need
    /// does not exist, and the one computed (`(1 − u)⁻¹·P` with the inverse mod `r`) leaves
    /// the system unsatisfied or allocates another point, in G1.
    #[test]
    fn g1_point_outside_g1_is_not_allocated() {
        let mut rng = StdRng::seed_from_u64(9);
        for _ in 0..4 {
            let bad = outside_g1::<ark_bls12_381::Config>(&mut rng, &[1]);
            let cs = ConstraintSystem::<ark_bls12_381::Fq>::new_ref();
            let (v, _) = alloc_g1::<ark_bls12_381::Config>(&cs, Some(bad)).unwrap();
            let got = affine_value::<ark_bls12_381::Config>(&v);
            assert!(
                !cs.is_satisfied().unwrap()
                    || (got != bad && got.is_in_correct_subgroup_assuming_on_curve())
            );
        }
    }

    /// A preimage off the curve, and the identity (allocated as `(0, 0)`), leave the system
    /// unsatisfied. Attack test: fails without the curve equation (the formulas then map any
    /// pair of coordinates to some pair of coordinates).
    #[test]
    fn a_preimage_off_the_curve_and_the_identity_are_refused() {
        type P = ark_bls12_381::Config;
        let mut rng = StdRng::seed_from_u64(10);
        let consts = clearing_constants::<P>().unwrap();
        for _ in 0..4 {
            let (x, y) = (Fq::<P>::rand(&mut rng), Fq::<P>::rand(&mut rng));
            assert!(!Affine::<<P as Bls12Config>::G1Config>::new_unchecked(x, y).is_on_curve());
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let _ = clear_g1_cofactor::<P>(&cs, Some((x, y)), consts).unwrap();
            assert!(!cs.is_satisfied().unwrap(), "a preimage off the curve");
        }
        let cs = ConstraintSystem::<Fq<P>>::new_ref();
        let _ = alloc_g1::<P>(&cs, Some(G1A::<P>::zero())).unwrap();
        assert!(!cs.is_satisfied().unwrap(), "alloc_g1 of the identity");
    }

    /// Setup mode (no values) builds the same system as proving.
    #[test]
    fn setup_mode_builds_the_same_system() {
        type P = ark_bls12_381::Config;
        let mut rng = StdRng::seed_from_u64(11);
        let g = random_g1::<P>(&mut rng);
        let count = |value: Option<G1A<P>>| {
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            if value.is_none() {
                cs.set_mode(ark_relations::gr1cs::SynthesisMode::Setup);
            }
            let _ = alloc_g1::<P>(&cs, value).unwrap();
            let _ = alloc_g1_or_identity::<P>(&cs, value).unwrap();
            cs.num_constraints()
        };
        assert_eq!(count(None), count(Some(g)));
    }
}

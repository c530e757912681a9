//! G2 witnesses: on the twist and in G2 by Scott's test `ψ(P) = [u]P` (ePrint 2021/1130,
//! §4), where `ψ` is the untwist–Frobenius–twist endomorphism and `u` the BLS parameter. This
//! is the test arkworks' native G2 subgroup check runs for BLS12-381.
//!
//! ark-r1cs-std's own G2 witness allocation does **not** enforce the subgroup for BLS12-381:
//! the cofactor has more weight than `r − 1`, so it takes its `r`-check branch, which
//! computes `[r − 1]P` and ends in `ge.enforce_equal(&ge)` (see the crate doc).

use ark_ec::bls12::Bls12Config;
use ark_ec::short_weierstrass::{Affine, SWCurveConfig};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::fields::models::fp12_2over3over2::Fp12Config;
use ark_ff::fields::models::fp6_3over2::Fp6Config;
use ark_ff::{BitIteratorBE, Field, Zero};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp2::Fp2Var;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::groups::bls12::G2Var;
use ark_r1cs_std::groups::CurveVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};

use crate::{Fq, Fq2, Fr, G2A};

/// `ψ(x, y) = (conj(x)·c_x, conj(y)·c_y)` on the twist (Frobenius on `F_{q²}` is
/// conjugation): the constants are `ξ^{(q−1)/3}` and `ξ^{(q−1)/2}` (from the `F_{q⁶}` and
/// `F_{q¹²}` Frobenius coefficients) or their inverses, depending on the twist's type; the
/// pair is the one under which the generator satisfies `ψ(G) = [u]G`.
fn psi_coefficients<P: Bls12Config>() -> Result<(Fq2<P>, Fq2<P>), SynthesisError> {
    let a: Fq2<P> = <P::Fp12Config as Fp12Config>::Fp6Config::FROBENIUS_COEFF_FP6_C1[1];
    let b6: Fq2<P> = <P::Fp12Config as Fp12Config>::FROBENIUS_COEFF_FP12_C1[1];
    let b = b6 * b6 * b6;
    let g = P::G2Config::GENERATOR;
    let [u] = P::X else {
        return Err(SynthesisError::Unsatisfiable);
    };
    let mut ug = g * Fr::<P>::from(*u);
    if P::X_IS_NEGATIVE {
        ug = -ug;
    }
    let ug = ug.into_affine();
    for (cx, cy) in [(Some(a), Some(b)), (a.inverse(), b.inverse())] {
        let (Some(cx), Some(cy)) = (cx, cy) else {
            continue;
        };
        if Affine::<P::G2Config>::new_unchecked(conj::<P>(g.x) * cx, conj::<P>(g.y) * cy) == ug {
            return Ok((cx, cy));
        }
    }
    Err(SynthesisError::Unsatisfiable)
}

fn conj<P: Bls12Config>(mut v: Fq2<P>) -> Fq2<P> {
    v.frobenius_map_in_place(1);
    v
}

/// Enforces `B ∈ G2` for the affine point `B = (x, y)` of the twist and returns `B` as a group
/// variable (`Z` the constant 1).
///
/// **Enforces**: `y² = x³ + b'` (on the twist, hence never the identity) and `ψ(B) = [u]B`,
/// `[u]B` by double-and-add over the constant `|u|` with complete projective formulas, `ψ(B)`
/// in affine form against it (`X = ψ_x·Z`, `Y = ψ_y·Z`; `Z ≠ 0` follows, since the identity
/// is `(0 : 1 : 0)`). 2,066 constraints on BLS12-381.
pub fn enforce_g2_subgroup<P: Bls12Config>(
    x: &Fp2Var<P::Fp2Config>,
    y: &Fp2Var<P::Fp2Config>,
) -> Result<G2Var<P>, SynthesisError> {
    let b = P::G2Config::COEFF_B;
    let rhs = x.square()? * x + Fp2Var::constant(b);
    y.square()?.enforce_equal(&rhs)?;
    let point = G2Var::<P>::new(x.clone(), y.clone(), Fp2Var::one());
    let (cx, cy) = psi_coefficients::<P>()?;
    let mut acc = point.clone();
    for bit in BitIteratorBE::without_leading_zeros(P::X).skip(1) {
        acc.double_in_place()?;
        if bit {
            acc += &point;
        }
    }
    if P::X_IS_NEGATIVE {
        acc = acc.negate()?;
    }
    let conj_var = |v: &Fp2Var<P::Fp2Config>| -> Result<Fp2Var<P::Fp2Config>, SynthesisError> {
        Ok(Fp2Var::new(v.c0.clone(), v.c1.negate()?))
    };
    let psi_x = conj_var(x)? * cx;
    let psi_y = conj_var(y)? * cy;
    acc.x.enforce_equal(&(psi_x * &acc.z))?;
    acc.y.enforce_equal(&(psi_y * &acc.z))?;
    Ok(point)
}

/// Allocates a G2 witness by its affine coordinates and checks it with
/// [`enforce_g2_subgroup`].
///
/// **Enforces**: on the twist and in G2, finite. `value` the identity: allocated as `(0, 0)`,
/// on no twist (`b' ≠ 0`), so the system is unsatisfied.
pub fn alloc_g2<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<G2A<P>>,
) -> Result<G2Var<P>, SynthesisError> {
    let coord = |y: bool| {
        Fp2Var::<P::Fp2Config>::new_witness(cs.clone(), || {
            let v = value.ok_or(SynthesisError::AssignmentMissing)?;
            let (vx, vy) = v.xy().unwrap_or((Fq2::<P>::zero(), Fq2::<P>::zero()));
            Ok(if y { vy } else { vx })
        })
    };
    let (x, y) = (coord(false)?, coord(true)?);
    enforce_g2_subgroup::<P>(&x, &y)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::UniformRand;
    use ark_r1cs_std::GR1CSVar;
    use ark_relations::gr1cs::ConstraintSystem;
    use ark_std::rand::rngs::StdRng;
    use ark_std::rand::SeedableRng;

    fn off_g2<P: Bls12Config>(rng: &mut StdRng) -> G2A<P> {
        loop {
            let x = Fq2::<P>::rand(rng);
            if let Some(p) = G2A::<P>::get_point_from_x_unchecked(x, true) {
                assert!(p.is_on_curve());
                if !p.is_in_correct_subgroup_assuming_on_curve() {
                    return p;
                }
            }
        }
    }

    /// The ψ-test in the circuit agrees with arkworks' native subgroup test, on random
    /// points of G2 (given back unchanged) and on random points of the twist outside G2.
    /// Attack test: fails without `ψ(B) = [u]B`.
    fn matches_native<P: Bls12Config>() {
        let mut rng = StdRng::seed_from_u64(7);
        let inside = [
            G2A::<P>::generator(),
            (G2A::<P>::generator() * Fr::<P>::rand(&mut rng)).into_affine(),
            (G2A::<P>::generator() * Fr::<P>::rand(&mut rng)).into_affine(),
        ];
        let outside = [
            off_g2::<P>(&mut rng),
            off_g2::<P>(&mut rng),
            off_g2::<P>(&mut rng),
        ];
        for (p, want) in inside
            .iter()
            .map(|p| (p, true))
            .chain(outside.iter().map(|p| (p, false)))
        {
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let v = alloc_g2::<P>(&cs, Some(*p)).unwrap();
            assert_eq!(cs.is_satisfied().unwrap(), want, "{p:?}");
            // (ark-r1cs-std's `value()` asserts the subgroup, so only for members.)
            if want {
                assert_eq!(v.value().unwrap().into_affine(), *p);
                eprintln!("alloc_g2: {} constraints", cs.num_constraints());
            }
        }
    }

    #[test]
    fn g2_subgroup_check_matches_native_bls12_381() {
        matches_native::<ark_bls12_381::Config>();
    }

    #[test]
    fn g2_subgroup_check_matches_native_bls12_377() {
        matches_native::<ark_bls12_377::Config>();
    }

    /// The identity and coordinates off the twist are refused; and the hole this closes:
    /// ark-r1cs-std's own G2 witness allocation lets a point outside G2 through on
    /// BLS12-381.
    #[test]
    fn the_identity_and_points_off_the_twist_are_refused() {
        type P = ark_bls12_381::Config;
        let mut rng = StdRng::seed_from_u64(8);
        let cs = ConstraintSystem::<Fq<P>>::new_ref();
        let _ = alloc_g2::<P>(&cs, Some(G2A::<P>::zero())).unwrap();
        assert!(!cs.is_satisfied().unwrap(), "the identity");
        for _ in 0..2 {
            let (x, y) = (Fq2::<P>::rand(&mut rng), Fq2::<P>::rand(&mut rng));
            assert!(!G2A::<P>::new_unchecked(x, y).is_on_curve());
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let xv = Fp2Var::new_witness(cs.clone(), || Ok(x)).unwrap();
            let yv = Fp2Var::new_witness(cs.clone(), || Ok(y)).unwrap();
            let _ = enforce_g2_subgroup::<P>(&xv, &yv).unwrap();
            assert!(!cs.is_satisfied().unwrap(), "a point off the twist");
        }
        let cs = ConstraintSystem::<Fq<P>>::new_ref();
        let outside = off_g2::<P>(&mut rng);
        let _ = G2Var::<P>::new_witness(cs.clone(), || Ok(outside)).unwrap();
        assert!(
            cs.is_satisfied().unwrap(),
            "ark-r1cs-std's G2 allocation checks the subgroup now: revisit the crate doc"
        );
    }
}

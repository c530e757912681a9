//! `G_T` elements: membership in the order-`r` subgroup of `F_{q¹²}^*`, not only in the
//! cyclotomic subgroup, and the two-exponent step `T_L^a·T_R^b` with cyclotomic squarings.
//!
//! Why `f ≠ 0`, `f^{q⁴}·f = f^{q²}` and `f^q = f^u` give `f ∈ G_T`: the second says that the
//! order of `f` divides `Φ₁₂(q) = q⁴ − q² + 1` (the cyclotomic subgroup), the third that it
//! divides `q − u`. Since `q ≡ u (mod q − u)`, `Φ₁₂(q) ≡ Φ₁₂(u) (mod q − u)`, so
//! `gcd(Φ₁₂(q), q − u) = gcd(Φ₁₂(u), q − u)`; for a BLS12 curve `r = Φ₁₂(u) = u⁴ − u² + 1`
//! and `r | q − u` (`q − u = (u − 1)²·r/3`), so the gcd is `r`. The tests check both facts with
//! exact integers for BLS12-381 and BLS12-377. `G_T` itself passes (`q ≡ u (mod r)`).

use ark_ec::bls12::Bls12Config;
use ark_ff::Field;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};

use crate::{Fq, Fq12, GtVar};

/// Enforces `f ≠ 0` by an inverse witness. For `f = 0` the witness is 0 and the product check
/// fails: an unsatisfied system, not an error.
fn enforce_nonzero<P: Bls12Config>(f: &GtVar<P>) -> Result<(), SynthesisError> {
    let cs = f.cs();
    let inverse = || Ok(f.value()?.inverse().unwrap_or_default());
    let inv = if cs.is_none() || f.is_constant() {
        GtVar::<P>::constant(inverse()?)
    } else {
        GtVar::<P>::new_witness(cs, inverse)?
    };
    (f * &inv).enforce_equal(&GtVar::<P>::one())
}

/// Enforces `f^{q⁴}·f = f^{q²}`: `f` is in the cyclotomic subgroup, of order `Φ₁₂(q)` (for
/// `f ≠ 0`). Frobenius maps are constant multiplications: 54 constraints for the product.
fn enforce_cyclotomic<P: Bls12Config>(f: &GtVar<P>) -> Result<(), SynthesisError> {
    (f.frobenius_map(4)? * f).enforce_equal(&f.frobenius_map(2)?)
}

/// Enforces `f^q = f^u`, `f^u` with cyclotomic squarings and `f^{−1}` as the conjugate: both
/// are right only inside the cyclotomic subgroup, so this is meaningful only together with
/// [`enforce_cyclotomic`] (module doc).
fn enforce_q_power_is_u_power<P: Bls12Config>(f: &GtVar<P>) -> Result<(), SynthesisError> {
    let fu = f.optimized_cyclotomic_exp(P::X)?;
    let fq = f.frobenius_map(1)?;
    if P::X_IS_NEGATIVE {
        (fq * fu).enforce_equal(&GtVar::<P>::one())
    } else {
        fq.enforce_equal(&fu)
    }
}

/// Enforces that `f` is in `G_T`, the order-`r` subgroup of `F_{q¹²}^*`.
///
/// **Enforces**: `f ≠ 0` (an inverse witness), `f^{q⁴}·f = f^{q²}` (the cyclotomic subgroup)
/// and `f^q = f^u`: together, order dividing `r` (module doc). 1,620 constraints on
/// BLS12-381. Zero, an element outside the cyclotomic subgroup and a cyclotomic one of order
/// other than `r` leave the system unsatisfied.
pub fn enforce_gt_membership<P: Bls12Config>(f: &GtVar<P>) -> Result<(), SynthesisError> {
    enforce_nonzero::<P>(f)?;
    enforce_cyclotomic::<P>(f)?;
    enforce_q_power_is_u_power::<P>(f)
}

/// Allocates a `G_T` witness (its 12 `F_q` components; ark-r1cs-std's `Fp12Var::new_witness`
/// alone is any element of `F_{q¹²}`, zero included).
///
/// **Enforces**: membership in `G_T` ([`enforce_gt_membership`]).
pub fn alloc_gt<P: Bls12Config>(
    cs: &ConstraintSystemRef<Fq<P>>,
    value: Option<Fq12<P>>,
) -> Result<GtVar<P>, SynthesisError> {
    let f = GtVar::<P>::new_witness(cs.clone(), || {
        value.ok_or(SynthesisError::AssignmentMissing)
    })?;
    enforce_gt_membership::<P>(&f)?;
    Ok(f)
}

/// `T_L^{a}·T_R^{b}` for little-endian exponent bits (of any lengths): one square-and-multiply
/// over both, with cyclotomic squarings and the table `{1, T_L, T_R, T_L·T_R}`. 27,522
/// constraints for two 255-bit exponents on BLS12-381 (against 2 × 25,956 for two `pow_le`).
///
/// **Requires** both bases in the cyclotomic subgroup (e.g. allocated by [`alloc_gt`]): the
/// cyclotomic squarings compute squares only there. Enforces nothing about its inputs.
pub fn gt_two_exponent<P: Bls12Config>(
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Fr;
    use ark_ec::bls12::Bls12;
    use ark_ec::pairing::Pairing;
    use ark_ec::{AffineRepr, CurveGroup};
    use ark_ff::{BigInt, BigInteger, PrimeField, UniformRand};
    use ark_relations::gr1cs::ConstraintSystem;
    use ark_std::rand::rngs::StdRng;
    use ark_std::rand::{Rng, SeedableRng};

    fn random_gt<P: Bls12Config>(rng: &mut impl Rng) -> Fq12<P> {
        let g1 = <Bls12<P> as Pairing>::G1Affine::generator() * Fr::<P>::rand(rng);
        let g2 = <Bls12<P> as Pairing>::G2Affine::generator() * Fr::<P>::rand(rng);
        Bls12::<P>::pairing(g1.into_affine(), g2.into_affine()).0
    }

    /// `f^{(q⁶ − 1)(q² + 1)}` for a random `f`: in the cyclotomic subgroup, of order `r·h_T`
    /// in general, not `r` (checked).
    fn cyclotomic_not_gt<P: Bls12Config>(rng: &mut impl Rng) -> Fq12<P> {
        let f = Fq12::<P>::rand(rng);
        let mut c = f;
        c.conjugate_in_place();
        let c = c * f.inverse().unwrap();
        let mut c2 = c;
        c2.frobenius_map_in_place(2);
        let c = c * c2;
        let frob = |k: usize| {
            let mut x = c;
            x.frobenius_map_in_place(k);
            x
        };
        assert_eq!(frob(4) * c, frob(2), "cyclotomic");
        assert_ne!(c.pow(Fr::<P>::MODULUS), Fq12::<P>::ONE, "not in G_T");
        c
    }

    fn satisfied<P: Bls12Config>(
        check: fn(&GtVar<P>) -> Result<(), SynthesisError>,
        x: Fq12<P>,
    ) -> bool {
        let cs = ConstraintSystem::<Fq<P>>::new_ref();
        let f = GtVar::<P>::new_witness(cs.clone(), || Ok(x)).unwrap();
        check(&f).unwrap();
        cs.is_satisfied().unwrap()
    }

    /// Pairing values allocate, unchanged; zero, a random element of `F_{q¹²}` (outside the
    /// cyclotomic subgroup) and a cyclotomic element outside `G_T` are refused. Attack test:
    /// fails without `f^q = f^u` (the cyclotomic non-member passes) and, on BLS12-377 (`u >
    /// 0`, where `0^q = 0^u`), without `f ≠ 0`.
    fn membership<P: Bls12Config>() {
        let mut rng = StdRng::seed_from_u64(12);
        for _ in 0..3 {
            let t = random_gt::<P>(&mut rng);
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let v = alloc_gt::<P>(&cs, Some(t)).unwrap();
            assert!(cs.is_satisfied().unwrap());
            assert_eq!(v.value().unwrap(), t);
            eprintln!("alloc_gt: {} constraints", cs.num_constraints());
        }
        let refused = |x: Fq12<P>| {
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let _ = alloc_gt::<P>(&cs, Some(x)).unwrap();
            !cs.is_satisfied().unwrap()
        };
        assert!(refused(Fq12::<P>::default()), "zero");
        for _ in 0..2 {
            let random = Fq12::<P>::rand(&mut rng);
            assert!(random.pow(Fr::<P>::MODULUS) != Fq12::<P>::ONE);
            assert!(refused(random), "a random element of F_q¹²");
            assert!(
                refused(cyclotomic_not_gt::<P>(&mut rng)),
                "a cyclotomic element outside G_T"
            );
        }
    }

    #[test]
    fn gt_membership_bls12_381() {
        membership::<ark_bls12_381::Config>();
    }

    #[test]
    fn gt_membership_bls12_377() {
        membership::<ark_bls12_377::Config>();
    }

    /// The cyclotomic check alone: accepts pairing values and cyclotomic non-members, refuses
    /// random elements. Attack test: fails without the check (in the full membership test a
    /// random element is also refused by `f^q = f^u`, whose in-circuit value is meaningless
    /// outside the cyclotomic subgroup, so the check is tested here on its own).
    #[test]
    fn the_cyclotomic_check_refuses_elements_outside_the_cyclotomic_subgroup() {
        type P = ark_bls12_381::Config;
        let mut rng = StdRng::seed_from_u64(13);
        for _ in 0..2 {
            assert!(satisfied::<P>(
                enforce_cyclotomic::<P>,
                random_gt::<P>(&mut rng)
            ));
            assert!(satisfied::<P>(
                enforce_cyclotomic::<P>,
                cyclotomic_not_gt::<P>(&mut rng)
            ));
            assert!(!satisfied::<P>(
                enforce_cyclotomic::<P>,
                Fq12::<P>::rand(&mut rng)
            ));
        }
    }

    /// `r = u⁴ − u² + 1` and `r | q − u` as exact integers: what makes
    /// [`enforce_gt_membership`] a `G_T` test (module doc).
    fn the_membership_argument_holds<P: Bls12Config>() {
        let [u] = P::X else { panic!("u is one limb") };
        let u2 = BigInt::<12>::from(*u).mul_low(&BigInt::from(*u));
        let mut phi = u2.mul_low(&u2);
        assert!(!phi.sub_with_borrow(&u2));
        assert!(!phi.add_with_carry(&BigInt::from(1u64)));
        let mut r = BigInt::<12>::new([0; 12]);
        r.0[..4].copy_from_slice(Fr::<P>::MODULUS.as_ref());
        assert_eq!(phi, r, "r = Φ₁₂(u)");
        // q mod r against u mod r (with u's sign).
        let q_mod_r = Fr::<P>::from_le_bytes_mod_order(&Fq::<P>::MODULUS.to_bytes_le());
        let u_mod_r = if P::X_IS_NEGATIVE {
            -Fr::<P>::from(*u)
        } else {
            Fr::<P>::from(*u)
        };
        assert_eq!(q_mod_r, u_mod_r, "r | q − u");
    }

    #[test]
    fn the_membership_argument_holds_bls12_381() {
        the_membership_argument_holds::<ark_bls12_381::Config>();
    }

    #[test]
    fn the_membership_argument_holds_bls12_377() {
        the_membership_argument_holds::<ark_bls12_377::Config>();
    }

    /// `T_L^a·T_R^b` in the circuit equals the native value for random `G_T` bases and random
    /// exponents, of equal and of different lengths (one of them empty).
    #[test]
    fn the_two_exponent_step_matches_native() {
        type P = ark_bls12_381::Config;
        let mut rng = StdRng::seed_from_u64(14);
        for (la, lb) in [(255, 255), (254, 64), (0, 130)] {
            let (t_l, t_r) = (random_gt::<P>(&mut rng), random_gt::<P>(&mut rng));
            let a: Vec<bool> = (0..la).map(|_| rng.gen()).collect();
            let b: Vec<bool> = (0..lb).map(|_| rng.gen()).collect();
            let cs = ConstraintSystem::<Fq<P>>::new_ref();
            let bits = |v: &[bool]| -> Vec<Boolean<Fq<P>>> {
                v.iter()
                    .map(|&x| Boolean::new_witness(cs.clone(), || Ok(x)).unwrap())
                    .collect()
            };
            let (av, bv) = (bits(&a), bits(&b));
            let lv = alloc_gt::<P>(&cs, Some(t_l)).unwrap();
            let rv = alloc_gt::<P>(&cs, Some(t_r)).unwrap();
            let before = cs.num_constraints();
            let got = gt_two_exponent::<P>(&lv, &av, &rv, &bv).unwrap();
            let steps = cs.num_constraints() - before;
            assert!(cs.is_satisfied().unwrap());
            let pow =
                |t: Fq12<P>, e: &[bool]| t.pow(<Fr<P> as PrimeField>::BigInt::from_bits_le(e));
            let want = pow(t_l, &a) * pow(t_r, &b);
            assert_eq!(got.value().unwrap(), want, "({la}, {lb}) bits");
            eprintln!("gt_two_exponent, ({la}, {lb}) bits: {steps} constraints");
        }
    }
}

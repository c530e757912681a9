//! Goldilocks `F_p` and its quadratic extension `F_{p^2}` emulated in BN254 `Fr`, with lazy
//! reduction.
//!
//! ## Representation
//!
//! A [`GlVar`] holds an element `x ∈ F_p` as one `Fr` value `v`, an integer with
//! `0 ≤ v ≤ bound` and `v ≡ x (mod p)`; the `bound` is tracked exactly (a [`BigUint`]) while the
//! circuit is built. Because `bound < 2^252 < r/2`, the `Fr` value *is* the integer: nothing
//! wraps around `r`. Additions and multiplications work on `v` directly and only grow the bound:
//!
//! * `a + b`: no constraint, `bound = bound_a + bound_b`;
//! * `a − b`: `a + k·p − b` with `k·p ≥ bound_b`, no constraint;
//! * `a · b`: one constraint (none by a constant), `bound = bound_a · bound_b`.
//!
//! So a sum of products (an inner product, an extension multiplication, a gate's constraint
//! polynomial) is accumulated **unreduced** and reduced **once**.
//!
//! ## Reduction
//!
//! [`GlVar::reduce`] proves `v = q·p + s` for a witness quotient `q` and remainder `s`, with `q`
//! range-checked to `⌈log2(bound/p + 1)⌉` bits and `s` to 64 bits (one boolean constraint per
//! bit; the weighted sums of the bits are linear and free), plus one constraint for the equation.
//! Both sides are below `r` (`q·p + s < 2^{bits(q)}·p + 2^64 ≤ 2·bound + p + 2^64 < r`), so the
//! equation holds over the integers and `s ≡ v (mod p)`. [`GlVar::reduce_canonical`] also proves
//! `s < p`: writing `s = h·2^32 + l` (both from the bits), `s ≥ p` iff `h = 2^32 − 1` and `l ≠ 0`,
//! so one constraint `l = (2^32 − 1 − h)·w` with a witness `w` rules it out (if `h = 2^32 − 1`
//! it forces `l = 0`). Canonical values are needed wherever a value is hashed or compared
//! bit-wise with the native verifier (packing for the challenger, query indices).
//! [`GlVar::enforce_equal`] proves `a ≡ b` with one quotient: `a − b + k·p = q·p`.
//!
//! A reduction costs `bits(q) + 64 + 1` constraints (+1 canonical): 129 after one product of
//! reduced values (`bound < 2^128`), 136 after a sum of 100 such products.
//!
//! ## The extension
//!
//! [`GlExtVar`] is `c_0 + c_1·X` with `X² = W = 7` (plonky2's `QuadraticExtension`). A product is
//! Karatsuba's three multiplications, `c_0 = a_0 b_0 + 7 a_1 b_1`,
//! `c_1 = (a_0 + a_1)(b_0 + b_1) − a_0 b_0 − a_1 b_1`, left unreduced.

use ark_bn254::Fr;
use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use num_bigint::BigUint;
use plonky2::field::extension::quadratic::QuadraticExtension;
use plonky2::field::extension::FieldExtension;
use plonky2::field::goldilocks_field::GoldilocksField;
use ark_ff::Field as _;
use plonky2::field::types::{Field, Field64, PrimeField64};

type GL = GoldilocksField;
/// `F_{p^2}` as plonky2 has it.
pub type GLExt = QuadraticExtension<GL>;

/// The Goldilocks prime `p = 2^64 − 2^32 + 1`.
pub const P: u64 = GoldilocksField::ORDER;
/// `W` with `X² = W` in `F_{p^2}`.
pub const W: u64 = 7;
/// Values are reduced before their bound would reach `2^MAX_BOUND_BITS` (`< r/2`).
pub const MAX_BOUND_BITS: u64 = 252;

fn p_big() -> BigUint {
    BigUint::from(P)
}

fn max_bound() -> BigUint {
    BigUint::from(1u8) << MAX_BOUND_BITS
}

fn to_big(x: Fr) -> BigUint {
    x.into_bigint().into()
}

fn to_fr(x: &BigUint) -> Fr {
    Fr::from_le_bytes_mod_order(&x.to_bytes_le())
}

/// Number of bits of `x` (`0` for `0`).
fn bits(x: &BigUint) -> usize {
    x.bits() as usize
}

/// Allocates `nbits` boolean witnesses for the low bits of `value` (1 constraint each) and
/// returns them with their weighted sum (free).
fn alloc_bits(
    cs: &ConstraintSystemRef<Fr>,
    value: Option<&BigUint>,
    nbits: usize,
) -> Result<(Vec<Boolean<Fr>>, FpVar<Fr>), SynthesisError> {
    let bits: Vec<Boolean<Fr>> = (0..nbits)
        .map(|i| {
            Boolean::new_witness(cs.clone(), || {
                value.map(|v| v.bit(i as u64)).ok_or(SynthesisError::AssignmentMissing)
            })
        })
        .collect::<Result<_, _>>()?;
    let sum = if bits.is_empty() { FpVar::zero() } else { Boolean::le_bits_to_fp(&bits)? };
    Ok((bits, sum))
}

/// An element of `F_p` as an unreduced integer in one `Fr` variable (see the module docs).
#[derive(Clone, Debug)]
pub struct GlVar {
    /// The integer `v` (`≡ x mod p`), as an `Fr` value.
    pub value: FpVar<Fr>,
    /// An upper bound on `v`, known while the circuit is built.
    pub bound: BigUint,
}

/// The witness a reduction claims: quotient `q` and remainder `s` with `v = q·p + s`.
#[derive(Clone, Debug)]
pub struct ReductionHint {
    /// The quotient `q`.
    pub quotient: BigUint,
    /// The remainder `s`.
    pub remainder: BigUint,
}

impl GlVar {
    /// The constant `x`.
    pub fn constant(x: GL) -> Self {
        let v = x.to_canonical_u64();
        Self { value: FpVar::constant(Fr::from(v)), bound: BigUint::from(v) }
    }

    /// `0`.
    pub fn zero() -> Self {
        Self::constant(GL::ZERO)
    }

    /// A witness, range-checked to be canonical (`< p`): 65 constraints.
    pub fn new_witness(cs: ConstraintSystemRef<Fr>, x: Option<GL>) -> Result<Self, SynthesisError> {
        let v = x.map(|x| BigUint::from(x.to_canonical_u64()));
        let (bits, value) = alloc_bits(&cs, v.as_ref(), 64)?;
        enforce_canonical_bits(&cs, &bits)?;
        Ok(Self { value, bound: BigUint::from(P - 1) })
    }

    /// A value the caller has already constrained to lie in `[0, bound]` (no constraint).
    pub fn from_fpvar_unchecked(value: FpVar<Fr>, bound: BigUint) -> Self {
        assert!(bound < max_bound(), "bound too large for lazy reduction");
        Self { value, bound }
    }

    /// The element of `F_p` this represents, when the witness is known.
    pub fn value(&self) -> Result<GL, SynthesisError> {
        let v = to_big(self.value.value()?) % p_big();
        Ok(GL::from_canonical_u64(v.to_u64_digits().first().copied().unwrap_or(0)))
    }

    fn cs(&self) -> ConstraintSystemRef<Fr> {
        self.value.cs()
    }

    /// `self + other`, unreduced.
    pub fn add(&self, other: &Self) -> Result<Self, SynthesisError> {
        let (a, b) = fit_sum(self, other)?;
        Ok(Self { value: &a.value + &b.value, bound: &a.bound + &b.bound })
    }

    /// `self + k·p − other` with the least `k` that keeps it nonnegative, unreduced.
    pub fn sub(&self, other: &Self) -> Result<Self, SynthesisError> {
        let k = (&other.bound + p_big() - 1u8) / p_big();
        let kp = k * p_big();
        let mut a = self.clone();
        if &a.bound + &kp >= max_bound() {
            a = a.reduce()?;
        }
        Ok(Self { value: &a.value + to_fr(&kp) - &other.value, bound: &a.bound + kp })
    }

    /// `−self`, unreduced.
    pub fn neg(&self) -> Result<Self, SynthesisError> {
        Self::zero().sub(self)
    }

    /// `self · other`: one constraint (none if either is a constant), unreduced. An operand is
    /// reduced first if the product's bound would reach `2^252`.
    pub fn mul(&self, other: &Self) -> Result<Self, SynthesisError> {
        let (mut a, mut b) = (self.clone(), other.clone());
        while &a.bound * &b.bound >= max_bound() {
            if a.bound >= b.bound {
                a = a.reduce()?;
            } else {
                b = b.reduce()?;
            }
        }
        Ok(Self { value: &a.value * &b.value, bound: &a.bound * &b.bound })
    }

    /// `self · c` for a constant `c`: no constraint.
    pub fn mul_const(&self, c: GL) -> Result<Self, SynthesisError> {
        self.mul(&Self::constant(c))
    }

    /// `Σ a_i · b_i`, accumulated unreduced.
    pub fn inner_product(a: &[Self], b: &[Self]) -> Result<Self, SynthesisError> {
        assert_eq!(a.len(), b.len());
        let mut acc = Self::zero();
        for (x, y) in a.iter().zip(b) {
            acc = acc.add(&x.mul(y)?)?;
        }
        Ok(acc)
    }

    /// A congruent value below `2^64` (not necessarily `< p`): `bits(bound/p) + 65` constraints,
    /// none if the bound is already below `2^64`.
    pub fn reduce(&self) -> Result<Self, SynthesisError> {
        if self.bound.bits() <= 64 {
            return Ok(self.clone());
        }
        self.reduce_with(None, false)
    }

    /// The canonical value (`< p`): one constraint more than [`Self::reduce`], none if the value
    /// is already known to be canonical.
    pub fn reduce_canonical(&self) -> Result<Self, SynthesisError> {
        if self.is_canonical() {
            return Ok(self.clone());
        }
        self.reduce_with(None, true)
    }

    /// [`Self::reduce`] / [`Self::reduce_canonical`] with the prover's claimed quotient and
    /// remainder given explicitly (`None`: the honest ones). Only tests pass a hint, to check that
    /// a wrong claim leaves the system unsatisfied.
    pub fn reduce_with(&self, hint: Option<ReductionHint>, canonical: bool) -> Result<Self, SynthesisError> {
        Ok(self.reduce_to_bits(hint, canonical)?.0)
    }

    /// The canonical value's 64 little-endian bits (from [`Self::reduce_canonical`], so no
    /// constraint beyond it): for query indices and the proof-of-work check.
    pub fn to_canonical_bits(&self) -> Result<Vec<Boolean<Fr>>, SynthesisError> {
        Ok(self.reduce_to_bits(None, true)?.1)
    }

    fn reduce_to_bits(
        &self,
        hint: Option<ReductionHint>,
        canonical: bool,
    ) -> Result<(Self, Vec<Boolean<Fr>>), SynthesisError> {
        if self.value.is_constant() {
            let v = to_big(self.value.value()?) % p_big();
            let bits = (0..64).map(|i| Boolean::constant(v.bit(i))).collect();
            return Ok((Self { value: FpVar::constant(to_fr(&v)), bound: v }, bits));
        }
        let cs = self.cs();
        let q_max = &self.bound / p_big();
        let hint = match hint {
            Some(h) => Some(h),
            None => self.value.value().ok().map(|v| {
                let v = to_big(v);
                ReductionHint { quotient: &v / p_big(), remainder: &v % p_big() }
            }),
        };
        let (_, q) = alloc_bits(&cs, hint.as_ref().map(|h| &h.quotient), bits(&q_max))?;
        let (s_bits, s) = alloc_bits(&cs, hint.as_ref().map(|h| &h.remainder), 64)?;
        (q * Fr::from(P) + &s).enforce_equal(&self.value)?;
        let bound = if canonical {
            enforce_canonical_bits(&cs, &s_bits)?;
            BigUint::from(P - 1)
        } else {
            (BigUint::from(1u8) << 64u32) - 1u8
        };
        Ok((Self { value: s, bound }, s_bits))
    }

    /// Whether the value is known to be canonical (`bound < p`).
    pub fn is_canonical(&self) -> bool {
        self.bound < p_big()
    }

    /// `self / other`: a canonical witness `q` with `q·other ≡ self` (65 constraints for `q`, one
    /// product, one congruence). If `other ≡ 0` no `q` exists and the system is unsatisfiable.
    pub fn div(&self, other: &Self) -> Result<Self, SynthesisError> {
        let cs = self.cs().or(other.cs());
        let q_val = match (self.value(), other.value()) {
            (Ok(a), Ok(b)) => Some(b.try_inverse().map(|inv| a * inv).unwrap_or(GL::ZERO)),
            _ => None,
        };
        let q = Self::new_witness(cs, q_val)?;
        q.mul(other)?.enforce_equal(self)?;
        Ok(q)
    }

    /// `if_true` if `bit`, else `if_false`: one constraint.
    pub fn conditionally_select(bit: &Boolean<Fr>, if_true: &Self, if_false: &Self) -> Result<Self, SynthesisError> {
        use ark_r1cs_std::select::CondSelectGadget;
        Ok(Self {
            value: FpVar::conditionally_select(bit, &if_true.value, &if_false.value)?,
            bound: if_true.bound.clone().max(if_false.bound.clone()),
        })
    }

    /// Enforces `self ≡ other (mod p)`: `bits((bound_a + k·p)/p) + 1` constraints.
    pub fn enforce_equal(&self, other: &Self) -> Result<(), SynthesisError> {
        self.sub(other)?.enforce_zero()
    }

    /// Enforces `self ≡ 0 (mod p)`: `v = q·p` with `q` range-checked.
    pub fn enforce_zero(&self) -> Result<(), SynthesisError> {
        if self.value.is_constant() {
            let v = to_big(self.value.value()?);
            return if (v % p_big()) == BigUint::from(0u8) {
                Ok(())
            } else {
                Err(SynthesisError::Unsatisfiable)
            };
        }
        let cs = self.cs();
        let q_max = &self.bound / p_big();
        let q_val = self.value.value().ok().map(|v| to_big(v) / p_big());
        let (_, q) = alloc_bits(&cs, q_val.as_ref(), bits(&q_max))?;
        (q * Fr::from(P)).enforce_equal(&self.value)
    }
}

/// Reduces the larger operand while `a + b` would reach the bound limit.
fn fit_sum(a: &GlVar, b: &GlVar) -> Result<(GlVar, GlVar), SynthesisError> {
    let (mut a, mut b) = (a.clone(), b.clone());
    while &a.bound + &b.bound >= max_bound() {
        if a.bound >= b.bound {
            a = a.reduce()?;
        } else {
            b = b.reduce()?;
        }
    }
    Ok((a, b))
}

/// Given the 64 little-endian bits of `s`, enforces `s < p` with one constraint:
/// `l = (2^32 − 1 − h)·w` where `s = h·2^32 + l`.
fn enforce_canonical_bits(cs: &ConstraintSystemRef<Fr>, bits: &[Boolean<Fr>]) -> Result<(), SynthesisError> {
    assert_eq!(bits.len(), 64);
    let lo = Boolean::le_bits_to_fp(&bits[..32])?;
    let hi = Boolean::le_bits_to_fp(&bits[32..])?;
    let gap = FpVar::constant(Fr::from(u32::MAX as u64)) - &hi;
    let w = FpVar::new_witness(cs.clone(), || {
        let g = gap.value()?;
        let l = lo.value()?;
        Ok(if g == Fr::from(0u64) { Fr::from(0u64) } else { l * g.inverse().expect("nonzero") })
    })?;
    gap.mul_equals(&w, &lo)
}

/// An element `c_0 + c_1·X` of `F_{p^2}` (`X² = 7`), coordinates as [`GlVar`]s.
#[derive(Clone, Debug)]
pub struct GlExtVar {
    /// `c_0`.
    pub c0: GlVar,
    /// `c_1`.
    pub c1: GlVar,
}

impl GlExtVar {
    /// The constant `x`.
    pub fn constant(x: GLExt) -> Self {
        let [a, b] = x.to_basefield_array();
        Self { c0: GlVar::constant(a), c1: GlVar::constant(b) }
    }

    /// `0`.
    pub fn zero() -> Self {
        Self::constant(GLExt::ZERO)
    }

    /// A witness, both coordinates canonical: 130 constraints.
    pub fn new_witness(cs: ConstraintSystemRef<Fr>, x: Option<GLExt>) -> Result<Self, SynthesisError> {
        let arr: Option<[GL; 2]> = x.map(|x| x.to_basefield_array());
        Ok(Self {
            c0: GlVar::new_witness(cs.clone(), arr.map(|a| a[0]))?,
            c1: GlVar::new_witness(cs, arr.map(|a| a[1]))?,
        })
    }

    /// The base-field element `x` embedded.
    pub fn from_base(x: GlVar) -> Self {
        Self { c0: x, c1: GlVar::zero() }
    }

    /// The value, when the witness is known.
    pub fn value(&self) -> Result<GLExt, SynthesisError> {
        Ok(GLExt::from_basefield_array([self.c0.value()?, self.c1.value()?]))
    }

    /// `self + other`, unreduced.
    pub fn add(&self, other: &Self) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.add(&other.c0)?, c1: self.c1.add(&other.c1)? })
    }

    /// `self − other`, unreduced.
    pub fn sub(&self, other: &Self) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.sub(&other.c0)?, c1: self.c1.sub(&other.c1)? })
    }

    /// `self · other` (Karatsuba, 3 constraints), unreduced.
    pub fn mul(&self, other: &Self) -> Result<Self, SynthesisError> {
        let a0b0 = self.c0.mul(&other.c0)?;
        let a1b1 = self.c1.mul(&other.c1)?;
        let cross = self.c0.add(&self.c1)?.mul(&other.c0.add(&other.c1)?)?;
        Ok(Self {
            c0: a0b0.add(&a1b1.mul_const(GL::from_canonical_u64(W))?)?,
            c1: cross.sub(&a0b0)?.sub(&a1b1)?,
        })
    }

    /// `self · x` for a base-field `x`: 2 constraints, unreduced.
    pub fn scalar_mul(&self, x: &GlVar) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.mul(x)?, c1: self.c1.mul(x)? })
    }

    /// `Σ a_i · b_i`, accumulated unreduced (reduce once at the end).
    pub fn inner_product(a: &[Self], b: &[Self]) -> Result<Self, SynthesisError> {
        assert_eq!(a.len(), b.len());
        let mut acc = Self::zero();
        for (x, y) in a.iter().zip(b) {
            acc = acc.add(&x.mul(y)?)?;
        }
        Ok(acc)
    }

    /// `self / other`: a canonical witness `q` with `q·other = self` (130 constraints for `q`,
    /// 3 products, two congruences). If `other = 0` the system is unsatisfiable.
    pub fn div(&self, other: &Self) -> Result<Self, SynthesisError> {
        let cs = self.c0.cs().or(self.c1.cs()).or(other.c0.cs()).or(other.c1.cs());
        let q_val = match (self.value(), other.value()) {
            (Ok(a), Ok(b)) => Some(b.try_inverse().map(|inv| a * inv).unwrap_or(GLExt::ZERO)),
            _ => None,
        };
        let q = Self::new_witness(cs, q_val)?;
        q.mul(other)?.enforce_equal(self)?;
        Ok(q)
    }

    /// `self · x` for a constant `x ∈ F_p`: free.
    pub fn mul_base_const(&self, x: GL) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.mul_const(x)?, c1: self.c1.mul_const(x)? })
    }

    /// `if_true` if `bit`, else `if_false`: two constraints.
    pub fn conditionally_select(bit: &Boolean<Fr>, if_true: &Self, if_false: &Self) -> Result<Self, SynthesisError> {
        Ok(Self {
            c0: GlVar::conditionally_select(bit, &if_true.c0, &if_false.c0)?,
            c1: GlVar::conditionally_select(bit, &if_true.c1, &if_false.c1)?,
        })
    }

    /// `items[i]` for `i` given by little-endian bits (`items.len() = 2^bits.len()`).
    pub fn select_by_bits(items: &[Self], bits: &[Boolean<Fr>]) -> Result<Self, SynthesisError> {
        assert_eq!(items.len(), 1 << bits.len());
        let mut layer = items.to_vec();
        for bit in bits {
            layer = layer
                .chunks(2)
                .map(|pair| Self::conditionally_select(bit, &pair[1], &pair[0]))
                .collect::<Result<_, _>>()?;
        }
        Ok(layer.pop().expect("one element left"))
    }

    /// `self − x` for a base-field `x`, unreduced.
    pub fn sub_base(&self, x: &GlVar) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.sub(x)?, c1: self.c1.clone() })
    }

    /// Both coordinates below `2^64`.
    pub fn reduce(&self) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.reduce()?, c1: self.c1.reduce()? })
    }

    /// Both coordinates canonical.
    pub fn reduce_canonical(&self) -> Result<Self, SynthesisError> {
        Ok(Self { c0: self.c0.reduce_canonical()?, c1: self.c1.reduce_canonical()? })
    }

    /// Enforces `self = other` in `F_{p^2}`.
    pub fn enforce_equal(&self, other: &Self) -> Result<(), SynthesisError> {
        self.c0.enforce_equal(&other.c0)?;
        self.c1.enforce_equal(&other.c1)
    }
}

/// `x` as a `u64` when it is below `2^64`.
pub fn fr_to_u64(x: Fr) -> Option<u64> {
    let limbs = x.into_bigint().0;
    limbs[1..].iter().all(|&l| l == 0).then_some(limbs[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::field::types::Sample;

    fn new_cs() -> ConstraintSystemRef<Fr> {
        ConstraintSystem::<Fr>::new_ref()
    }

    fn canonical_u64(v: &GlVar) -> u64 {
        fr_to_u64(v.value.value().unwrap()).expect("below 2^64")
    }

    /// Random products, sums and differences agree with plonky2's field, after lazy accumulation
    /// and one canonical reduction; constraint counts printed.
    #[test]
    fn base_field_random() {
        let cs = new_cs();
        for _ in 0..20 {
            let (x, y, z) = (GL::rand(), GL::rand(), GL::rand());
            let (a, b, c) = (
                GlVar::new_witness(cs.clone(), Some(x)).unwrap(),
                GlVar::new_witness(cs.clone(), Some(y)).unwrap(),
                GlVar::new_witness(cs.clone(), Some(z)).unwrap(),
            );
            // x·y − z·x + 5·y − z
            let e = a
                .mul(&b)
                .unwrap()
                .sub(&c.mul(&a).unwrap())
                .unwrap()
                .add(&b.mul_const(GL::from_canonical_u64(5)).unwrap())
                .unwrap()
                .sub(&c)
                .unwrap();
            let r = e.reduce_canonical().unwrap();
            let expect = x * y - z * x + GL::from_canonical_u64(5) * y - z;
            assert_eq!(canonical_u64(&r), expect.to_canonical_u64());
            assert_eq!(r.value().unwrap(), expect);
            r.enforce_equal(&GlVar::constant(expect)).unwrap();
        }
        assert!(cs.is_satisfied().unwrap());
    }

    #[test]
    fn extension_random() {
        let cs = new_cs();
        let n = 16;
        let xs: Vec<GLExt> = (0..n).map(|_| GLExt::rand()).collect();
        let ys: Vec<GLExt> = (0..n).map(|_| GLExt::rand()).collect();
        let a: Vec<GlExtVar> = xs.iter().map(|x| GlExtVar::new_witness(cs.clone(), Some(*x)).unwrap()).collect();
        let b: Vec<GlExtVar> = ys.iter().map(|y| GlExtVar::new_witness(cs.clone(), Some(*y)).unwrap()).collect();
        let before = cs.num_constraints();
        let prod = a[0].mul(&b[0]).unwrap().reduce_canonical().unwrap();
        let one_mul = cs.num_constraints() - before;
        assert_eq!(prod.value().unwrap(), xs[0] * ys[0]);

        let before = cs.num_constraints();
        let ip = GlExtVar::inner_product(&a, &b).unwrap().reduce_canonical().unwrap();
        let lazy = cs.num_constraints() - before;
        let expect: GLExt = xs.iter().zip(&ys).map(|(x, y)| *x * *y).sum();
        assert_eq!(ip.value().unwrap(), expect);

        let before = cs.num_constraints();
        let mut eager = GlExtVar::zero();
        for (x, y) in a.iter().zip(&b) {
            eager = eager.add(&x.mul(y).unwrap().reduce_canonical().unwrap()).unwrap();
        }
        let eager = eager.reduce_canonical().unwrap();
        let eager_count = cs.num_constraints() - before;
        assert_eq!(eager.value().unwrap(), expect);
        assert!(cs.is_satisfied().unwrap());
        println!("F_p^2 mul + canonical reduce: {one_mul} constraints");
        println!("F_p^2 inner product of {n}: lazy {lazy} constraints, reducing every product {eager_count}");
        assert!(lazy < eager_count / 4);
    }

    /// A long chain of products without explicit reductions stays correct (automatic reductions
    /// keep every bound below 2^252).
    #[test]
    fn long_chain_auto_reduces() {
        let cs = new_cs();
        let x = GL::rand();
        let a = GlVar::new_witness(cs.clone(), Some(x)).unwrap();
        let mut acc = a.clone();
        for _ in 0..10 {
            acc = acc.mul(&a).unwrap();
            assert!(acc.bound < max_bound());
        }
        assert_eq!(acc.value().unwrap(), x.exp_u64(11));
        let r = acc.reduce_canonical().unwrap();
        assert_eq!(canonical_u64(&r), x.exp_u64(11).to_canonical_u64());
        assert!(cs.is_satisfied().unwrap());
    }

    /// A value with a small remainder mod p: `v = q·p + s` with `s < 2^32 − 1`, so `s + p` also
    /// fits in 64 bits.
    fn small_remainder_product(cs: &ConstraintSystemRef<Fr>) -> (GlVar, BigUint, BigUint) {
        // (p − 1)² = p² − 2p + 1 ≡ 1; take a·b with a = b = p − 1 (both canonical).
        let a = GlVar::new_witness(cs.clone(), Some(GL::NEG_ONE)).unwrap();
        let v = a.mul(&a).unwrap();
        let big = to_big(v.value.value().unwrap());
        (v, &big / p_big(), &big % p_big())
    }

    #[test]
    fn honest_reduction_is_satisfied() {
        let cs = new_cs();
        let (v, q, s) = small_remainder_product(&cs);
        assert_eq!(s, BigUint::from(1u8));
        v.reduce_with(Some(ReductionHint { quotient: q, remainder: s }), true).unwrap();
        assert!(cs.is_satisfied().unwrap());
    }

    #[test]
    fn wrong_remainder_is_unsatisfied() {
        let cs = new_cs();
        let (v, q, s) = small_remainder_product(&cs);
        v.reduce_with(Some(ReductionHint { quotient: q, remainder: s + 1u8 }), false).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }

    #[test]
    fn wrong_quotient_is_unsatisfied() {
        let cs = new_cs();
        let (v, q, s) = small_remainder_product(&cs);
        v.reduce_with(Some(ReductionHint { quotient: q + 1u8, remainder: s }), false).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }

    /// `s + p` (with `q − 1`) is a congruent value below 2^64: the loose reduction accepts it (it
    /// is a valid representative), the canonical one does not.
    #[test]
    fn non_canonical_remainder_fails_canonical_reduction() {
        let (q, s) = {
            let cs = new_cs();
            let (_, q, s) = small_remainder_product(&cs);
            (q, s)
        };
        let alt = ReductionHint { quotient: &q - 1u8, remainder: &s + p_big() };
        assert!(alt.remainder < BigUint::from(1u8) << 64u32);

        let cs1 = new_cs();
        let (v, _, _) = small_remainder_product(&cs1);
        v.reduce_with(Some(alt.clone()), false).unwrap();
        assert!(cs1.is_satisfied().unwrap());

        let cs2 = new_cs();
        let (v, _, _) = small_remainder_product(&cs2);
        v.reduce_with(Some(alt), true).unwrap();
        assert!(!cs2.is_satisfied().unwrap());
    }

    /// A "remainder" that wraps around r (s' = s − p·t mod r with q' = q + t) does not fit the
    /// 64-bit range check, so the decomposition cannot match it.
    #[test]
    fn wrapped_claim_is_unsatisfied() {
        let cs = new_cs();
        let (v, q, s) = small_remainder_product(&cs);
        let r_big: BigUint = Fr::MODULUS.into();
        let t = BigUint::from(1u8) << 60u32;
        let wrapped = (&r_big + &s - (&t * p_big()) % &r_big) % &r_big;
        v.reduce_with(Some(ReductionHint { quotient: q + t, remainder: wrapped }), false).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }

    #[test]
    fn non_canonical_witness_is_unsatisfied() {
        // A witness allocated as p + 5 (fits in 64 bits, ≥ p) fails the canonical check.
        let cs = new_cs();
        let v = BigUint::from(P) + 5u8;
        let (bits, _) = alloc_bits(&cs, Some(&v), 64).unwrap();
        enforce_canonical_bits(&cs, &bits).unwrap();
        assert!(!cs.is_satisfied().unwrap());
        let cs2 = new_cs();
        let (bits, _) = alloc_bits(&cs2, Some(&BigUint::from(P - 1)), 64).unwrap();
        enforce_canonical_bits(&cs2, &bits).unwrap();
        assert!(cs2.is_satisfied().unwrap());
    }

    #[test]
    fn enforce_equal_congruent_and_not() {
        let cs = new_cs();
        let x = GL::rand();
        let a = GlVar::new_witness(cs.clone(), Some(x)).unwrap();
        // a + p (same residue, different integer) equals a; a + 1 does not.
        let a_plus_p = GlVar { value: &a.value + Fr::from(P), bound: &a.bound + p_big() };
        a.enforce_equal(&a_plus_p).unwrap();
        assert!(cs.is_satisfied().unwrap());
        let a_plus_1 = a.add(&GlVar::constant(GL::ONE)).unwrap();
        a.enforce_equal(&a_plus_1).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }

    #[test]
    fn division() {
        let cs = new_cs();
        let (x, y) = (GLExt::rand(), GLExt::rand());
        let a = GlExtVar::new_witness(cs.clone(), Some(x)).unwrap();
        let b = GlExtVar::new_witness(cs.clone(), Some(y)).unwrap();
        let before = cs.num_constraints();
        let q = a.div(&b).unwrap();
        println!("F_p^2 division: {} constraints", cs.num_constraints() - before);
        assert_eq!(q.value().unwrap(), x / y);
        let (u, v) = (GL::rand(), GL::rand());
        let c = GlVar::new_witness(cs.clone(), Some(u)).unwrap();
        let d = GlVar::new_witness(cs.clone(), Some(v)).unwrap();
        assert_eq!(c.div(&d).unwrap().value().unwrap(), u / v);
        assert!(cs.is_satisfied().unwrap());
        // Division by zero has no witness.
        let zero = GlExtVar::new_witness(cs.clone(), Some(GLExt::ZERO)).unwrap();
        a.div(&zero).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }

    /// The costs quoted in the module docs; printed with `--nocapture`.
    #[test]
    fn constraint_counts() {
        let cs = new_cs();
        let count = |f: &mut dyn FnMut()| {
            let before = cs.num_constraints();
            f();
            cs.num_constraints() - before
        };
        let mut a = GlVar::zero();
        let alloc = count(&mut || {
            a = GlVar::new_witness(cs.clone(), Some(GL::rand())).unwrap();
        });
        let b = GlVar::new_witness(cs.clone(), Some(GL::rand())).unwrap();
        let mut prod = GlVar::zero();
        let mul = count(&mut || prod = a.mul(&b).unwrap());
        let mut reduced = GlVar::zero();
        let red = count(&mut || reduced = prod.reduce().unwrap());
        let red_c = count(&mut || {
            prod.reduce_canonical().unwrap();
        });
        let eq = count(&mut || prod.enforce_equal(&reduced).unwrap());
        let xs: Vec<GlVar> = (0..100).map(|_| GlVar::new_witness(cs.clone(), Some(GL::rand())).unwrap()).collect();
        let mut ip = GlVar::zero();
        let ip_mul = count(&mut || ip = GlVar::inner_product(&xs, &xs).unwrap());
        let ip_red = count(&mut || {
            ip.reduce().unwrap();
        });
        let ea = GlExtVar::new_witness(cs.clone(), Some(GLExt::rand())).unwrap();
        let eb = GlExtVar::new_witness(cs.clone(), Some(GLExt::rand())).unwrap();
        let mut ep = GlExtVar::zero();
        let emul = count(&mut || ep = ea.mul(&eb).unwrap());
        let ered = count(&mut || {
            ep.reduce().unwrap();
        });
        println!("| Goldilocks in BN254 Fr | constraints |");
        println!("|---|---|");
        println!("| alloc (canonical) | {alloc} |");
        println!("| mul (unreduced) | {mul} |");
        println!("| reduce after 1 product (< 2^64) | {red} |");
        println!("| reduce after 1 product (canonical) | {red_c} |");
        println!("| enforce_equal (product vs reduced) | {eq} |");
        println!("| 100 products summed, unreduced | {ip_mul} |");
        println!("| reduce the sum of 100 products | {ip_red} |");
        println!("| F_p^2 mul (Karatsuba, unreduced) | {emul} |");
        println!("| F_p^2 reduce after 1 product | {ered} |");
        assert_eq!(alloc, 65);
        assert_eq!(mul, 1);
        assert_eq!(red, 129);
        assert_eq!(red_c, 130);
        assert_eq!(ip_mul, 100);
        assert_eq!(emul, 3);
        assert!(cs.is_satisfied().unwrap());
    }
}

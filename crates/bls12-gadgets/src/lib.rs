//! BLS12 group elements in a circuit over `F_q`, the curve's base field (the scalar field of
//! the outer curve: BW6-767 for BLS12-381): the checked allocations and the `G_T` step that
//! both wraps need, in one place: `hekaton::wrap` (a Hekaton proof's `A, C, D` in G1, `B` in
//! G2) and `testudo::testudo_comm::constraints` (Testudo-Comm's openings: G1, G2 and `G_T`
//! elements, the MIPP fold). Build step 5 of `docs/design/testudo-compression.md`. Generic
//! over `Bls12Config`; the tests run on BLS12-381 and BLS12-377.
//!
//! # Why not ark-r1cs-std's allocations
//!
//! ark-r1cs-std's allocations of group elements check less than a verifier needs:
//!
//! - its G2 witness allocation (`G2Var::new_witness`) does **not** enforce the subgroup on
//!   BLS12-381: the cofactor has more weight than `r − 1`, so it takes its `r`-check branch,
//!   which computes `[r − 1]P` and ends in `ge.enforce_equal(&ge)`, a tautology (the tests
//!   show a point outside G2 satisfying it); `new_input` and
//!   `new_variable_omit_prime_order_check` check the curve equation only;
//! - its projective allocations accept `(0 : 0 : 0)`, which satisfies the projective curve
//!   equation `Y²Z = X³ + bZ³`; `is_zero` reads it as the identity, but the complete addition
//!   formulas absorb it (`P + (0 : 0 : 0) = (0 : 0 : 0)`) and `enforce_equal` equates it with
//!   every point;
//! - `Fp12Var::new_witness` is any element of `F_{q¹²}`, zero included.
//!
//! # What each function enforces
//!
//! Every allocation here takes affine coordinates (or 12 components) as witnesses and says in
//! its doc what it enforces; a value that cannot be allocated (the identity for [`alloc_g1`]
//! and [`alloc_g2`], zero or a non-member for [`alloc_gt`]) gives an unsatisfied system, not
//! an error. Constraint counts on BLS12-381:
//!
//! | function | enforces | the identity | constraints |
//! |---|---|---|---|
//! | [`alloc_g1`] | `(1 − u)·P'` for an affine `P'` on the curve: in G1 | refused | 303 (with the affine form) |
//! | [`alloc_g1_or_identity`] | the same, or the identity by a boolean flag | allowed | 303 |
//! | [`alloc_g2`], [`enforce_g2_subgroup`] | on the twist, `ψ(P) = [u]P`: in G2 | refused | 2,066 |
//! | [`alloc_gt`], [`enforce_gt_membership`] | `f ≠ 0`, cyclotomic, `f^q = f^u`: in `G_T` | (zero refused) | 1,620 |
//!
//! [`gt_two_exponent`] computes `T_L^a·T_R^b` for checked `G_T` bases (27,522 constraints for
//! two 255-bit exponents); [`prepare_g1_finite`] gives a G1 point's affine form for the Miller
//! loop with the identity refused.

mod g1;
mod g2;
mod gt;

use ark_ec::bls12::Bls12Config;
use ark_ec::short_weierstrass::Affine;
use ark_ec::CurveConfig;
use ark_ff::fields::models::fp12_2over3over2::Fp12;
use ark_ff::fields::models::fp2::Fp2;
use ark_r1cs_std::fields::fp12::Fp12Var;

pub use g1::{alloc_g1, alloc_g1_or_identity, prepare_g1_finite};
pub use g2::{alloc_g2, enforce_g2_subgroup};
pub use gt::{alloc_gt, enforce_gt_membership, gt_two_exponent};

/// The base field `F_q` of a BLS12 curve (the circuit's field).
pub type Fq<P> = <P as Bls12Config>::Fp;
/// The scalar field `F_r`.
pub type Fr<P> = <<P as Bls12Config>::G1Config as CurveConfig>::ScalarField;
/// `F_{q²}`, G2's coordinate field.
pub type Fq2<P> = Fp2<<P as Bls12Config>::Fp2Config>;
/// `F_{q¹²}`, where `G_T` lives.
pub type Fq12<P> = Fp12<<P as Bls12Config>::Fp12Config>;
/// A G1 point, affine.
pub type G1A<P> = Affine<<P as Bls12Config>::G1Config>;
/// A G2 point, affine.
pub type G2A<P> = Affine<<P as Bls12Config>::G2Config>;
/// A `G_T` element (an `F_{q¹²}` element) in the circuit.
pub type GtVar<P> = Fp12Var<<P as Bls12Config>::Fp12Config>;

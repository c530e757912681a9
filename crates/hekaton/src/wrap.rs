//! The depth-1 wrap: one circuit over `F_q`, the base field of a BLS12 curve, that verifies a
//! whole Hekaton proof, so that a Pari proof on the curve whose scalar field is `F_q` (BW6-767
//! for BLS12-381) replaces the `k` Mirage proofs and commitments by 2 G1 + 2 field elements.
//!
//! # What the circuit proves
//!
//! Public inputs (all in `F_q`): the Hekaton key's [`VkDigest`] as two 128-bit limbs, the
//! public input `x` (each `x_j ∈ F_r` as the integer it is), and the Merkle root `rt`. The
//! Hekaton verifying key itself is built into the circuit as constants (the wrap key is made
//! once per Hekaton key); the digest input is checked against the constant, so the wrap key
//! names the key it was made for. Witnesses: every `D_i`, `A_i`, `B_i`, `C_i`.
//!
//! The circuit enforces what [`crate::workflow::verify`] checks, except the leaf-0 path of
//! `x` in `rt` (a Poseidon path over `F_r`, non-native here, and cheap for the final verifier,
//! which checks it natively; see [`verify_final`]):
//!
//! 1. every point is a point of the right group, by the shared gadgets of [`bls12_gadgets`]:
//!    `A_i, C_i, D_i` are allocated with the cofactor cleared by the effective cofactor
//!    `1 − u` ([`bls12_gadgets::alloc_g1`]: the prover supplies `P' = (1 − u)⁻¹·P`, any point
//!    of `E(F_q)`, and the circuit computes `(1 − u)·P'`, which is in G1 whatever `P'`, and not
//!    the identity; 64 bits of weight 7 in affine coordinates where arkworks' allocation
//!    multiplies by the 126-bit cofactor `h` in projective ones), and `B_i` is on the twist
//!    and passes Scott's test `ψ(B) = [u]B` ([`bls12_gadgets::alloc_g2`]), where `ψ` is the
//!    untwist–Frobenius–twist endomorphism and `u` the BLS parameter (ePrint 2021/1130 §4).
//!    ark-r1cs-std's own G2 witness allocation does **not** enforce the subgroup for
//!    BLS12-381 (its `r − 1` branch ends in `ge.enforce_equal(&ge)`), which is why `B_i` is
//!    allocated by its affine coordinates. No G2 or `G_T` element is a witness of
//!    ark-r1cs-std's allocations: the key's G2 points are constants, and the only `G_T` value
//!    is the final exponentiation's output, compared with the constant 1;
//! 2. `(α, β)` is recomputed from the digest, `x` and the `D_i` by the in-circuit twin of
//!    [`crate::transcript::Transcript`] (Poseidon over `F_q`): the same bits as natively;
//! 3. the sponge then absorbs `rt` and every `(A_i, B_i, C_i)` and squeezes weights
//!    `ρ_i = 2^128 + s_i` (never zero);
//! 4. one batched Mirage check over all subcircuits (paper §5.1.1 equation, raised to `ρ_i`),
//!    grouped by key shape `s` with `R_s = Σ_{i∈s} ρ_i`:
//!    `Π_i e(ρ_i·A_i, B_i) · Π_s e(−R_s·α_s, β_s)·e(−Σρ_i·IC_i, γ_s)·e(−Σρ_i·C_i, δ_s)·e(−Σρ_i·D_i, η_s) = 1`,
//!    with `IC_i = ic0_i + rt·P_rt + α·P_α + β·P_β` (`ic0_i` is subcircuit `i`'s key with its
//!    index and addresses folded in, paper §6.3), computed as
//!    `Σ_{i∈s} ρ_i·ic0_i + R_s·(rt·P_rt + α·P_α + β·P_β)`. One multi-Miller loop and one
//!    final exponentiation for the whole proof.
//!
//! Every G1 point that enters the Miller loop is constrained to be finite (the gadget's line
//! functions do not handle the identity); an honest proof meets one with negligible
//! probability.
//!
//! # Native side
//!
//! [`setup`] runs Pari's setup on the wrap circuit; [`prove`] verifies the Hekaton proof
//! natively first (a wrap of an invalid proof is refused with the verifier's error, not an
//! unsatisfiable circuit), then proves; [`FinalKey`] is what a verifier pins (the Pari
//! verifying key, the Hekaton key digest, the tree depth and `|x|`, under one
//! [`FinalKey::digest`]); [`verify_final`] checks the leaf-0 path and the Pari proof;
//! [`batch_verify_final`] checks many final proofs under one key with one Pari batch check.

use std::collections::BTreeMap;

use ark_crypto_primitives::sponge::constraints::CryptographicSpongeVar;
use ark_crypto_primitives::sponge::poseidon::constraints::PoseidonSpongeVar;
use ark_crypto_primitives::sponge::Absorb;
use ark_ec::bls12::{Bls12, Bls12Config, G2Prepared};
use ark_ec::pairing::Pairing;
use ark_ec::AffineRepr;
use ark_ff::{BigInteger, PrimeField};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::fp12::Fp12Var;
use ark_r1cs_std::fields::FieldVar;
use ark_r1cs_std::groups::bls12::{G1PreparedVar, G1Var, G2PreparedVar};
use ark_r1cs_std::groups::CurveVar;
use ark_r1cs_std::pairing::bls12::PairingVar;
use ark_r1cs_std::pairing::PairingVar as _;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use bls12_gadgets::{alloc_g1, alloc_g2, prepare_g1_finite};
use rand::{CryptoRng, RngCore};

use crate::merkle::{hash_leaf, poseidon_config, verify_path};
use crate::transcript::{digest_limbs, scalar_to_base, CHALLENGE_BITS, WEIGHT_BITS};
use crate::workflow::{HekatonProof, VerifyingKey, VkDigest};
use crate::{Check, Error};

type Fq<P> = <P as Bls12Config>::Fp;
type Fr<P> = <Bls12<P> as Pairing>::ScalarField;
type G1A<P> = <Bls12<P> as Pairing>::G1Affine;
type G2A<P> = <Bls12<P> as Pairing>::G2Affine;

/// The constants the circuit takes from the Hekaton verifying key.
#[derive(Clone)]
struct Shape<P: Bls12Config> {
    alpha: G1A<P>,
    beta: G2A<P>,
    gamma: G2A<P>,
    delta: G2A<P>,
    eta: G2A<P>,
    /// `P_rt, P_α, P_β`: the key's bases for the inputs `(rt, α, β)`.
    bases: [G1A<P>; 3],
    /// The subcircuits of this shape, with their folded constant term `ic0_i`.
    members: Vec<(usize, G1A<P>)>,
}

/// The wrap circuit for one Hekaton verifying key. Build it with [`WrapCircuit::blank`] for
/// setup and [`WrapCircuit::new`] to prove.
#[derive(Clone)]
pub struct WrapCircuit<P: Bls12Config> {
    digest: VkDigest,
    num_public_inputs: usize,
    k: usize,
    shapes: Vec<Shape<P>>,
    statement: Option<(Vec<Fr<P>>, HekatonProof<Bls12<P>>)>,
}

impl<P: Bls12Config> WrapCircuit<P> {
    /// The circuit without an assignment (for setup). Fails on a malformed key.
    pub fn blank(vk: &VerifyingKey<Bls12<P>>) -> Result<Self, Error> {
        vk.check()?;
        let k = vk.num_subcircuits();
        let mut shapes: Vec<Shape<P>> = Vec::with_capacity(vk.vks.len());
        for svk in &vk.vks {
            if svk.ic_query.len() < 4 {
                return Err(Error::malformed("verifying key", "a shape key without (rt, α, β) inputs"));
            }
            shapes.push(Shape {
                alpha: svk.alpha_g1,
                beta: svk.beta_g2,
                gamma: svk.gamma_g2,
                delta: svk.delta_g2,
                eta: svk.eta_g2,
                bases: [svk.ic_query[1], svk.ic_query[2], svk.ic_query[3]],
                members: Vec::new(),
            });
        }
        for i in 0..k {
            let folded = vk.subcircuit_key(i)?;
            shapes[vk.shape_of[i] as usize]
                .members
                .push((i, folded.ic_query[0]));
        }
        Ok(WrapCircuit {
            digest: vk.digest()?,
            num_public_inputs: vk.layout.num_public_inputs as usize,
            k,
            shapes,
            statement: None,
        })
    }

    /// The circuit with the statement `x` and the Hekaton proof as its assignment. The proof is
    /// not checked here (see [`prove`]); only its counts.
    pub fn new(
        vk: &VerifyingKey<Bls12<P>>,
        public_inputs: &[Fr<P>],
        proof: &HekatonProof<Bls12<P>>,
    ) -> Result<Self, Error> {
        let mut c = Self::blank(vk)?;
        if public_inputs.len() != c.num_public_inputs {
            return Err(Error::PublicInputLength {
                expected: c.num_public_inputs,
                got: public_inputs.len(),
            });
        }
        proof.check()?;
        if proof.proofs.len() != c.k {
            return Err(Error::ShapeMismatch {
                what: "subcircuit proofs",
                expected: c.k,
                got: proof.proofs.len(),
            });
        }
        c.statement = Some((public_inputs.to_vec(), proof.clone()));
        Ok(c)
    }
}

/// The Pari public input of a wrap proof: digest limbs, `x`, `rt`, all in `F_q`.
pub fn public_inputs<P: Bls12Config>(digest: &VkDigest, x: &[Fr<P>], root: &Fr<P>) -> Vec<Fq<P>> {
    let mut v = digest_limbs::<Fq<P>>(digest).to_vec();
    v.extend(x.iter().map(scalar_to_base::<_, Fq<P>>));
    v.push(scalar_to_base(root));
    v
}

/// `n` bits of `v` (little-endian), enforced to add up to `v`; sound for `n < |F| − 1` bits.
fn bits_of<F: PrimeField>(
    cs: &ConstraintSystemRef<F>,
    v: &FpVar<F>,
    n: usize,
) -> Result<Vec<Boolean<F>>, SynthesisError> {
    let value = v.value().ok();
    let bits = (0..n)
        .map(|j| {
            Boolean::new_witness(cs.clone(), || {
                let v = value.ok_or(SynthesisError::AssignmentMissing)?;
                Ok(v.into_bigint().get_bit(j))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    Boolean::le_bits_to_fp(&bits)?.enforce_equal(v)?;
    Ok(bits)
}

impl<P: Bls12Config> ConstraintSynthesizer<Fq<P>> for WrapCircuit<P>
where
    Fq<P>: Absorb,
{
    fn generate_constraints(self, cs: ConstraintSystemRef<Fq<P>>) -> Result<(), SynthesisError> {
        let missing = SynthesisError::AssignmentMissing;
        let st = self.statement.as_ref();

        // Public inputs: digest limbs (checked against the built-in key), x, rt.
        let limbs = digest_limbs::<Fq<P>>(&self.digest);
        let digest_vars = limbs
            .iter()
            .map(|l| FpVar::new_input(cs.clone(), || Ok(*l)))
            .collect::<Result<Vec<_>, _>>()?;
        for (var, l) in digest_vars.iter().zip(limbs) {
            var.enforce_equal(&FpVar::constant(l))?;
        }
        let x_vars = (0..self.num_public_inputs)
            .map(|j| {
                FpVar::new_input(cs.clone(), || {
                    st.map(|(x, _)| scalar_to_base::<_, Fq<P>>(&x[j])).ok_or(missing)
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let rt = FpVar::new_input(cs.clone(), || {
            st.map(|(_, p)| scalar_to_base::<_, Fq<P>>(&p.root)).ok_or(missing)
        })?;

        // Witness points: A, C, D as (1 − u)·P' ([`alloc_g1`]); B checked by ψ ([`alloc_g2`]).
        let g1 = |f: &dyn Fn(&HekatonProof<Bls12<P>>) -> G1A<P>| alloc_g1::<P>(&cs, st.map(|(_, p)| f(p)));
        let mut d = Vec::with_capacity(self.k);
        let mut a = Vec::with_capacity(self.k);
        let mut b = Vec::with_capacity(self.k);
        let mut c = Vec::with_capacity(self.k);
        let mut b_xy = Vec::with_capacity(self.k);
        let (mut d_aff, mut a_aff, mut c_aff) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..self.k {
            for (f, var, aff) in [
                (&(|p: &HekatonProof<Bls12<P>>| p.commitments[i].d) as &dyn Fn(&HekatonProof<Bls12<P>>) -> G1A<P>, &mut d, &mut d_aff),
                (&|p: &HekatonProof<Bls12<P>>| p.proofs[i].a, &mut a, &mut a_aff),
                (&|p: &HekatonProof<Bls12<P>>| p.proofs[i].c, &mut c, &mut c_aff),
            ] {
                let (point, prepared) = g1(f)?;
                var.push(point);
                aff.push(prepared);
            }
            // B's affine coordinates (Z is the constant 1) for the transcript.
            let bi = alloc_g2::<P>(&cs, st.map(|(_, p)| p.proofs[i].b))?;
            b_xy.push((bi.x.clone(), bi.y.clone()));
            b.push(bi);
        }

        // The transcript: (α, β) from the digest, x and the D_i; then ρ_i.
        let cfg = poseidon_config::<Fq<P>>();
        let mut sponge = PoseidonSpongeVar::new(cs.clone(), &cfg);
        sponge.absorb(&digest_vars)?;
        sponge.absorb(&x_vars)?;
        for p in &d_aff {
            sponge.absorb(&vec![p.0.x.clone(), p.0.y.clone()])?;
        }
        let ab = sponge.squeeze_bits(2 * CHALLENGE_BITS)?;
        let (alpha_bits, beta_bits) = ab.split_at(CHALLENGE_BITS);
        sponge.absorb(&rt)?;
        for i in 0..self.k {
            let (bx, by) = &b_xy[i];
            sponge.absorb(&vec![
                a_aff[i].0.x.clone(),
                a_aff[i].0.y.clone(),
                bx.c0.clone(),
                bx.c1.clone(),
                by.c0.clone(),
                by.c1.clone(),
                c_aff[i].0.x.clone(),
                c_aff[i].0.y.clone(),
            ])?;
        }
        let s = sponge.squeeze_bits(WEIGHT_BITS * self.k)?;
        let rho: Vec<Vec<Boolean<Fq<P>>>> = s
            .chunks(WEIGHT_BITS)
            .map(|chunk| {
                let mut w = chunk.to_vec();
                w.push(Boolean::TRUE);
                w
            })
            .collect();
        let rt_bits = bits_of(&cs, &rt, Fr::<P>::MODULUS_BIT_SIZE as usize)?;

        // The batched check.
        let mut g1s: Vec<G1PreparedVar<P>> = Vec::new();
        let mut g2s: Vec<G2PreparedVar<P>> = Vec::new();
        for i in 0..self.k {
            g1s.push(prepare_g1_finite(&a[i].scalar_mul_le(rho[i].iter())?)?);
            g2s.push(PairingVar::<P>::prepare_g2(&b[i])?);
        }
        let sum_bits = WEIGHT_BITS + 2 + usize::BITS as usize - self.k.leading_zeros() as usize;
        for shape in &self.shapes {
            let constant = |p: &G1A<P>| G1Var::<P>::constant(p.into_group());
            let mut r_sum = FpVar::zero();
            let mut ic = G1Var::<P>::zero();
            let mut c_sum = G1Var::<P>::zero();
            let mut d_sum = G1Var::<P>::zero();
            for &(i, ic0) in &shape.members {
                r_sum += Boolean::le_bits_to_fp(&rho[i])?;
                ic += constant(&ic0).scalar_mul_le(rho[i].iter())?;
                c_sum += c[i].scalar_mul_le(rho[i].iter())?;
                d_sum += d[i].scalar_mul_le(rho[i].iter())?;
            }
            let r_bits = bits_of(&cs, &r_sum, sum_bits)?;
            let q = constant(&shape.bases[0]).scalar_mul_le(rt_bits.iter())?
                + constant(&shape.bases[1]).scalar_mul_le(alpha_bits.iter())?
                + constant(&shape.bases[2]).scalar_mul_le(beta_bits.iter())?;
            ic += q.scalar_mul_le(r_bits.iter())?;
            let alpha_r = constant(&shape.alpha).scalar_mul_le(r_bits.iter())?;
            for (p, h) in [
                (alpha_r, shape.beta),
                (ic, shape.gamma),
                (c_sum, shape.delta),
                (d_sum, shape.eta),
            ] {
                g1s.push(prepare_g1_finite(&p.negate()?)?);
                g2s.push(G2PreparedVar::new_constant(
                    cs.clone(),
                    G2Prepared::<P>::from(h),
                )?);
            }
        }
        let f = PairingVar::<P>::miller_loop(&g1s, &g2s)?;
        let gt = PairingVar::<P>::final_exponentiation(&f)?;
        gt.enforce_equal(&Fp12Var::one())?;
        Ok(())
    }
}

/// What a verifier of final proofs pins: the Pari key of the wrap circuit and the Hekaton
/// statement's shape (key digest, Merkle depth, `|x|`), under one [`FinalKey::digest`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalKey<E2: Pairing> {
    pub wrap_vk: pari::VerifyingKey<E2>,
    pub hekaton_vk_digest: VkDigest,
    pub tree_depth: u32,
    pub num_public_inputs: u32,
}

/// Version 2: the wrap circuit allocates G1 points with [`alloc_g1`] (another circuit, so
/// another key than version 1's; a version-1 key is refused, never reused).
const FINAL_KEY_MAGIC: &[u8; 5] = b"HKFK\x02";
const FINAL_PROOF_MAGIC: &[u8; 5] = b"HKFP\x01";

impl<E2: Pairing> FinalKey<E2> {
    /// `"HKFK" ‖ 2 ‖ digest ‖ depth ‖ |x| ‖ Pari vk bytes`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = FINAL_KEY_MAGIC.to_vec();
        out.extend_from_slice(&self.hekaton_vk_digest.0);
        out.extend_from_slice(&self.tree_depth.to_le_bytes());
        out.extend_from_slice(&self.num_public_inputs.to_le_bytes());
        out.extend_from_slice(&self.wrap_vk.to_bytes());
        out
    }

    /// Parses and validates (every point of the Pari key).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bad = |r: &str| Error::malformed("final key", r.to_string());
        let body = bytes
            .strip_prefix(FINAL_KEY_MAGIC.as_slice())
            .ok_or_else(|| bad("wrong magic or version"))?;
        if body.len() < 40 {
            return Err(bad("truncated"));
        }
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&body[..32]);
        let word = |j: usize| u32::from_le_bytes([body[j], body[j + 1], body[j + 2], body[j + 3]]);
        let (tree_depth, num_public_inputs) = (word(32), word(36));
        if tree_depth as usize > crate::merkle::MAX_DEPTH {
            return Err(bad("Merkle depth out of range"));
        }
        let wrap_vk = pari::VerifyingKey::<E2>::from_bytes(&body[40..])
            .map_err(|e| Error::malformed("final key", e.to_string()))?;
        if wrap_vk.num_public_inputs() != 3 + num_public_inputs as usize {
            return Err(bad("the Pari key does not take (digest, x, rt)"));
        }
        Ok(FinalKey {
            wrap_vk,
            hekaton_vk_digest: VkDigest(digest),
            tree_depth,
            num_public_inputs,
        })
    }

    /// BLAKE2b-256 of `"hekaton/final-key/v3"` and [`Self::to_bytes`]: what a verifier pins.
    pub fn digest(&self) -> VkDigest {
        let mut h = Blake2b::<U32>::new();
        h.update(b"hekaton/final-key/v3");
        h.update(self.to_bytes());
        VkDigest(h.finalize().into())
    }

    /// Fails unless the digest is `expected`.
    pub fn check_digest(&self, expected: &VkDigest) -> Result<(), Error> {
        let got = self.digest();
        if got != *expected {
            return Err(Error::DigestMismatch {
                expected: expected.to_string(),
                got: got.to_string(),
            });
        }
        Ok(())
    }
}

/// A final proof: the Pari proof of the wrap circuit, the root `rt` and the path of leaf 0
/// (`x`) in it. `rt` and the path are the Hekaton proof's: over salted leaves, they reveal
/// nothing about the witness (see the crate doc, "Zero knowledge"); the rest of the Hekaton
/// proof is the wrap's witness, hidden by Pari's zero knowledge.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct FinalProof<F: PrimeField, E2: Pairing> {
    pub pari: pari::Proof<E2>,
    pub root: F,
    pub input_path: Vec<F>,
}

impl<F: PrimeField, E2: Pairing> FinalProof<F, E2> {
    /// `"HKFP" ‖ 1 ‖` compressed encoding.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = FINAL_PROOF_MAGIC.to_vec();
        self.serialize_with_mode(&mut out, Compress::Yes)?;
        Ok(out)
    }

    /// Parses with full validation; the path is at most [`crate::merkle::MAX_DEPTH`] long.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut body = bytes
            .strip_prefix(FINAL_PROOF_MAGIC.as_slice())
            .ok_or_else(|| Error::malformed("final proof", "wrong magic or version"))?;
        let v = Self::deserialize_with_mode(&mut body, Compress::Yes, ark_serialize::Validate::Yes)?;
        if !body.is_empty() {
            return Err(Error::TrailingBytes(body.len()));
        }
        if v.input_path.len() > crate::merkle::MAX_DEPTH {
            return Err(Error::malformed("final proof", "Merkle path too long"));
        }
        Ok(v)
    }
}

fn pari_err(e: pari::Error) -> Error {
    match e {
        pari::Error::Interrupted => Error::Interrupted,
        e => Error::malformed("wrap proof", e.to_string()),
    }
}

/// SR1CS rows of the wrap circuit, at most, per subcircuit (its `A, B, C, D` allocated and
/// checked, its share of the transcript and of the batched pairing check).
pub const ROWS_PER_SUBCIRCUIT: usize = 40_000;
/// SR1CS rows at most per key shape (its constants' pairings in the multi-Miller loop, its
/// `R_s`-scaled bases).
pub const ROWS_PER_SHAPE: usize = 20_000;
/// SR1CS rows at most per public input of the Hekaton circuit (absorbed as an integer).
pub const ROWS_PER_INPUT: usize = 2_000;
/// SR1CS rows at most whatever the key: the final exponentiation, the digest check, the
/// sponge's set-up and the outlined instance rows.
pub const ROWS_BASE: usize = 60_000;

/// An upper bound on the SR1CS rows of the wrap circuit of a Hekaton key with `k` subcircuits,
/// `shapes` key shapes and `num_public_inputs` public inputs, known before any key exists (the
/// platform checks a `--final` request against it at submission). `examples/wrap_rows.rs`
/// prints the bound beside the synthesised circuit's rows and fails where it is not a bound;
/// the test `the_row_bound_bounds_the_wrap` checks it at small `k`.
pub fn rows_bound(k: usize, shapes: usize, num_public_inputs: usize) -> usize {
    k.saturating_mul(ROWS_PER_SUBCIRCUIT)
        .saturating_add(shapes.min(k).saturating_mul(ROWS_PER_SHAPE))
        .saturating_add(num_public_inputs.saturating_mul(ROWS_PER_INPUT))
        .saturating_add(ROWS_BASE)
}

/// The most subcircuits whose wrap (bounded by [`rows_bound`] with one shape per subcircuit,
/// the worst case) fits a domain of `max_rows` points: the largest `k` with
/// `rows_bound(k, k, num_public_inputs) ≤ max_rows`.
pub fn max_wrapped_subcircuits(num_public_inputs: usize, max_rows: usize) -> usize {
    let fixed = num_public_inputs.saturating_mul(ROWS_PER_INPUT).saturating_add(ROWS_BASE);
    max_rows.saturating_sub(fixed) / (ROWS_PER_SUBCIRCUIT + ROWS_PER_SHAPE)
}

/// The largest Pari domain the outer curve `E2` has (its scalar field's largest smooth
/// subgroup, [`pari::domain::Domain`]): the most SR1CS rows any wrap key can have. Found by
/// bisection over [`pari::domain::Domain::new`], which answers `None` past it.
pub fn largest_domain<E2: Pairing>() -> usize {
    let fits = |n: usize| pari::domain::Domain::<E2::ScalarField>::new(n).is_some();
    let (mut lo, mut hi) = (1usize, 1usize << 40);
    if fits(hi) {
        return hi;
    }
    // fits(lo) && !fits(hi)
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        if fits(mid) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Pari setup of the wrap circuit for `vk`: the final key (to publish and pin) and the Pari
/// proving key. Whoever runs it knows the wrap trapdoor, as with every setup.
pub fn setup<P, E2, R>(
    vk: &VerifyingKey<Bls12<P>>,
    rng: &mut R,
) -> Result<(pari::ProvingKey<E2>, FinalKey<E2>), Error>
where
    P: Bls12Config,
    Fq<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    let circuit = WrapCircuit::blank(vk)?;
    let (pk, wrap_vk) = pari::setup::<E2, _, _>(circuit, rng).map_err(pari_err)?;
    Ok((
        pk,
        FinalKey {
            wrap_vk,
            hekaton_vk_digest: vk.digest()?,
            tree_depth: vk.layout.tree_depth() as u32,
            num_public_inputs: u32::try_from(vk.layout.num_public_inputs)
                .map_err(|_| Error::malformed("layout", "too many public inputs"))?,
        },
    ))
}

/// Verifies the Hekaton proof natively (refusing an invalid one with the verifier's error),
/// then proves the wrap circuit for it.
pub fn prove<P, E2, R>(
    pk: &pari::ProvingKey<E2>,
    vk: &VerifyingKey<Bls12<P>>,
    public_inputs: &[Fr<P>],
    proof: &HekatonProof<Bls12<P>>,
    rng: &mut R,
) -> Result<FinalProof<Fr<P>, E2>, Error>
where
    P: Bls12Config,
    Fq<P>: Absorb,
    Fr<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    prove_interruptible(pk, vk, public_inputs, proof, rng, pari::Interrupt::NEVER)
}

/// [`prove`], stopped with [`Error::Interrupted`] at the first of the Pari prover's steps
/// after `stop` is raised (see [`pari::interrupt`]): the wrap's Pari prove takes minutes.
pub fn prove_interruptible<P, E2, R>(
    pk: &pari::ProvingKey<E2>,
    vk: &VerifyingKey<Bls12<P>>,
    public_inputs: &[Fr<P>],
    proof: &HekatonProof<Bls12<P>>,
    rng: &mut R,
    stop: pari::Interrupt<'_>,
) -> Result<FinalProof<Fr<P>, E2>, Error>
where
    P: Bls12Config,
    Fq<P>: Absorb,
    Fr<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    crate::workflow::verify(vk, public_inputs, proof, rng)?;
    stop.check().map_err(pari_err)?;
    let circuit = WrapCircuit::new(vk, public_inputs, proof)?;
    let pari = pari::prove_interruptible(pk, circuit, rng, stop).map_err(pari_err)?;
    Ok(FinalProof {
        pari,
        root: proof.root,
        input_path: proof.input_path.clone(),
    })
}

/// The native half of a final proof's check: the path of leaf 0 (`x`) in `rt`, at the key's
/// depth. Returns the Pari public input.
fn statement<P: Bls12Config, E2: Pairing<ScalarField = Fq<P>>>(
    key: &FinalKey<E2>,
    public_inputs: &[Fr<P>],
    proof: &FinalProof<Fr<P>, E2>,
) -> Result<Vec<Fq<P>>, Error>
where
    Fr<P>: Absorb,
{
    if public_inputs.len() != key.num_public_inputs as usize {
        return Err(Error::PublicInputLength {
            expected: key.num_public_inputs as usize,
            got: public_inputs.len(),
        });
    }
    if proof.input_path.len() != key.tree_depth as usize {
        return Err(Error::VerificationFailed);
    }
    let cfg = poseidon_config::<Fr<P>>();
    if !verify_path(&cfg, proof.root, 0, hash_leaf(&cfg, public_inputs), &proof.input_path) {
        return Err(Error::VerificationFailed);
    }
    Ok(self::public_inputs::<P>(&key.hekaton_vk_digest, public_inputs, &proof.root))
}

/// Accepts iff `x`'s leaf is leaf 0 of `rt` and the Pari proof verifies for `(digest, x, rt)`
/// under the key's wrap key. The caller pins `key` by [`FinalKey::check_digest`].
pub fn verify_final<P, E2>(
    key: &FinalKey<E2>,
    pvk: &pari::PreparedVerifyingKey<E2>,
    public_inputs: &[Fr<P>],
    proof: &FinalProof<Fr<P>, E2>,
) -> Result<(), Error>
where
    P: Bls12Config,
    Fr<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
{
    let inputs = statement::<P, E2>(key, public_inputs, proof)?;
    pari::verify(pvk, &inputs, &proof.pari).map_err(|_| Error::VerificationFailed)
}

/// Many final proofs under one key: every leaf-0 path natively, then one Pari batch check.
/// Returns the indices of the bad ones (empty when all verify).
pub fn batch_verify_final<P, E2, R>(
    key: &FinalKey<E2>,
    pvk: &pari::PreparedVerifyingKey<E2>,
    items: &[(Vec<Fr<P>>, FinalProof<Fr<P>, E2>)],
    rng: &mut R,
) -> Result<Vec<usize>, Error>
where
    P: Bls12Config,
    Fr<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    if items.is_empty() {
        return Err(Error::EmptyBatch);
    }
    let mut bad = BTreeMap::new();
    let mut good = Vec::with_capacity(items.len());
    for (j, (x, p)) in items.iter().enumerate() {
        match statement::<P, E2>(key, x, p) {
            Ok(inputs) => good.push((j, inputs)),
            Err(_) => {
                bad.insert(j, ());
            }
        }
    }
    if !good.is_empty() {
        let batch: Vec<(&[Fq<P>], &pari::Proof<E2>)> = good
            .iter()
            .map(|(j, inputs)| (inputs.as_slice(), &items[*j].1.pari))
            .collect();
        if let Err(failed) = pari::batch_verify_locate(pvk, &batch, rng) {
            for f in failed {
                bad.insert(good[f].0, ());
            }
        }
    }
    Ok(bad.into_keys().collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Config;
    use rand::SeedableRng;

    /// [`rows_bound`] bounds the synthesised wrap circuit's SR1CS rows (what sizes its Pari
    /// domain) for both circuit families, and [`max_wrapped_subcircuits`] inverts it.
    #[test]
    fn the_row_bound_bounds_the_wrap() {
        use crate::spec::CircuitSpec;
        use ark_bls12_381::{Bls12_381, Fq};
        for spec in [
            CircuitSpec::Synthetic { subcircuits: 1, steps: 4, wires: 2 },
            CircuitSpec::Synthetic { subcircuits: 3, steps: 4, wires: 2 },
            CircuitSpec::MerkleUpdate { depth: 4, updates: 1, parts: 2 },
        ] {
            let circuit = spec.build::<Fr<Config>>(1).unwrap();
            let (_, vk) = crate::workflow::setup::<Bls12_381, _, _>(&circuit, &mut rand_chacha::ChaCha20Rng::seed_from_u64(1)).unwrap();
            let rows = pari::r1cs::synthesize_setup::<Fq, _>(WrapCircuit::<Config>::blank(&vk).unwrap()).unwrap().num_rows();
            let bound = rows_bound(spec.num_subcircuits(), vk.vks.len(), spec.num_public_inputs());
            eprintln!("{spec:?}: {rows} rows, bound {bound}");
            assert!(rows <= bound, "{spec:?}: {rows} rows > bound {bound}");
        }
        for inputs in [1, 2] {
            let m = max_wrapped_subcircuits(inputs, 2_000_000_000);
            assert!(rows_bound(m, m, inputs) <= 2_000_000_000 && rows_bound(m + 1, m + 1, inputs) > 2_000_000_000);
        }
        assert_eq!(max_wrapped_subcircuits(1, 1000), 0);
    }

    /// BW6-767's largest Pari domain: `2·3²·11·23·47·10177` (see `pari::domain`).
    #[test]
    fn the_largest_domain_is_bw6_767s() {
        assert_eq!(largest_domain::<ark_bw6_767::BW6_767>(), 2 * 9 * 11 * 23 * 47 * 10177);
    }
}

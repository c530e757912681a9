//! plonky2's Fiat–Shamir challenger over [`crate::hasher::PoseidonBn254Hash`], replayed in R1CS.
//!
//! [`ChallengerVar`] mirrors `plonky2::iop::challenger::Challenger<GoldilocksField,
//! PoseidonBn254Hash>` step for step (input buffer, overwrite-mode duplexing, output buffer
//! popped from the end), over the permutation of [`crate::hasher::PoseidonBn254Permutation`]:
//! the hidden capacity is an [`FpVar`], the 9 Goldilocks rate slots are [`GlVar`]s, and the
//! width-4 Poseidon runs natively in `Fr` ([`permute_var`], 264 constraints).
//!
//! **Lazy unpacking.** After a permutation the rate slots are the limbs of three `Fr` outputs
//! `y_j`. Showing `y_j` as Goldilocks limbs needs its canonical bit decomposition (254 booleans
//! and a comparison with `r`; without the comparison a prover could decompose `y_j + r` and
//! change the limbs); it is done only when a slot of `y_j` is read: popped as a challenge, or
//! packed again because a partial absorb left it in place. Most permutations absorb a full rate
//! and are never decomposed. A decomposed limb is below `2^64` but may be `≥ p`; it is a valid
//! representative for arithmetic and is reduced to canonical form only when packed again.
//!
//! Everything observed before the first witness (the FRI parameters, the circuit digest) is a
//! constant, and so are the permutations over it: they cost no constraints.
//!
//! [`proof_challenges`] replays plonky2's `get_challenges` on a proof's transcript.

use std::cell::RefCell;
use std::rc::Rc;

use ark_bn254::Fr;
use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use num_bigint::BigUint;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::Field;
use plonky2::fri::FriParams;
use plonky2::hash::hash_types::HashOut;
use plonky2::plonk::proof::ProofWithPublicInputs;

use crate::goldilocks::{GlExtVar, GlVar};
use crate::hasher::{PoseidonBn254GoldilocksConfig, GL_PER_FR, GL_RATE, HASH_GL_LIMBS, HASH_LIMB_BITS};
use crate::poseidon::params_t4;
use crate::poseidon_gadget::permute_var;

type GL = GoldilocksField;
type C = PoseidonBn254GoldilocksConfig;
const D: usize = 2;

/// One output `y` of the permutation's rate, decomposed on first use.
#[derive(Debug)]
struct LazyOutput {
    y: FpVar<Fr>,
    limbs: RefCell<Option<[GlVar; GL_PER_FR]>>,
}

impl LazyOutput {
    fn limb(&self, i: usize) -> Result<GlVar, SynthesisError> {
        if self.limbs.borrow().is_none() {
            let bits = fr_to_bits_canonical(&self.y)?;
            let limbs = [0, 1, 2].map(|k| (k, &bits[64 * k..64 * (k + 1)]));
            let mut out = Vec::with_capacity(GL_PER_FR);
            for (_, b) in limbs {
                let v = Boolean::le_bits_to_fp(b)?;
                out.push(GlVar::from_fpvar_unchecked(v, (BigUint::from(1u8) << 64u32) - 1u8));
            }
            *self.limbs.borrow_mut() = Some(out.try_into().expect("3 limbs"));
        }
        Ok(self.limbs.borrow().as_ref().expect("set")[i].clone())
    }
}

/// A rate slot: a value put there, or limb `i` of a permutation output.
#[derive(Clone, Debug)]
enum Slot {
    Value(GlVar),
    Output(Rc<LazyOutput>, usize),
}

impl Slot {
    fn read(&self) -> Result<GlVar, SynthesisError> {
        match self {
            Slot::Value(v) => Ok(v.clone()),
            Slot::Output(o, i) => o.limb(*i),
        }
    }
}

/// The in-circuit challenger (see the module documentation).
#[derive(Clone, Debug)]
pub struct ChallengerVar {
    capacity: FpVar<Fr>,
    rate: Vec<Slot>,
    input_buffer: Vec<GlVar>,
    output_buffer: Vec<Slot>,
}

impl Default for ChallengerVar {
    fn default() -> Self {
        Self::new()
    }
}

/// The canonical bits of a Poseidon-BN254 hash, as the five Goldilocks limbs of
/// `GenericHashOut::to_vec` (63, 63, 63, 63, 2 bits; canonical by size).
pub fn hash_limbs_var(h: &FpVar<Fr>) -> Result<[GlVar; HASH_GL_LIMBS], SynthesisError> {
    let bits = fr_to_bits_canonical(h)?;
    let mut out = Vec::with_capacity(HASH_GL_LIMBS);
    for i in 0..HASH_GL_LIMBS {
        let start = i * HASH_LIMB_BITS;
        let end = (start + HASH_LIMB_BITS).min(Fr::MODULUS_BIT_SIZE as usize);
        let v = Boolean::le_bits_to_fp(&bits[start..end])?;
        out.push(GlVar::from_fpvar_unchecked(v, (BigUint::from(1u8) << (end - start)) - 1u8));
    }
    Ok(out.try_into().expect("5 limbs"))
}

/// Bits `192..254` of `r`: `H_r = ⌊r / 2^192⌋`.
fn r_top() -> u64 {
    Fr::MODULUS.0[3]
}

/// The 254 little-endian bits of `y`'s canonical integer, in 318 constraints (arkworks'
/// `to_bits_le` takes 640).
///
/// `y = L + 2^192·H` with the 254 bits allocated as booleans (254 constraints) and their weighted
/// sum equal to `y` (1). The sum is below `2^254 < 2r`, so it is `y` or `y + r`; it is `y` iff
/// it is below `r`. Instead of comparing with `r` bit by bit, the circuit proves `H ≤ H_r − 1`
/// where `H_r = ⌊r/2^192⌋`, by range-checking `H_r − 1 − H` to 62 bits (63): then the sum is
/// below `H_r·2^192 ≤ r`, so **soundness is exact**. The price is completeness on the inputs
/// with `H = H_r`, that is `y ≥ H_r·2^192`: a fraction `(r mod 2^192)/r < 2^-61` of `Fr`, hit by
/// Poseidon outputs with that probability (an honest wrap with 100 decompositions fails with
/// probability below `2^-54`).
pub fn fr_to_bits_canonical(y: &FpVar<Fr>) -> Result<Vec<Boolean<Fr>>, SynthesisError> {
    use ark_r1cs_std::eq::EqGadget;
    use ark_r1cs_std::GR1CSVar;
    let n = Fr::MODULUS_BIT_SIZE as usize;
    if y.is_constant() {
        let v: BigUint = y.value()?.into_bigint().into();
        return Ok((0..n).map(|i| Boolean::constant(v.bit(i as u64))).collect());
    }
    let cs = y.cs();
    let value: Option<BigUint> = y.value().ok().map(|v| v.into_bigint().into());
    let bits: Vec<Boolean<Fr>> = (0..n)
        .map(|i| {
            Boolean::new_witness(cs.clone(), || {
                value.as_ref().map(|v| v.bit(i as u64)).ok_or(SynthesisError::AssignmentMissing)
            })
        })
        .collect::<Result<_, _>>()?;
    // The weighted sum of 254 bits can exceed r, so le_bits_to_fp would add its own comparison:
    // build the two halves (each below r) and combine them.
    let lo = Boolean::le_bits_to_fp(&bits[..192])?;
    let hi = Boolean::le_bits_to_fp(&bits[192..])?;
    (&lo + &hi * Fr::from(BigUint::from(1u8) << 192u32)).enforce_equal(y)?;
    // For `H = H_r` (the excluded inputs) no slack exists; 0 leaves the system unsatisfied.
    let slack_value = value.map(|v| {
        let (top, h) = (BigUint::from(r_top() - 1), v >> 192u32);
        if h <= top { top - h } else { BigUint::from(0u8) }
    });
    let slack_bits: Vec<Boolean<Fr>> = (0..n - 192)
        .map(|i| {
            Boolean::new_witness(cs.clone(), || {
                slack_value.as_ref().map(|v| v.bit(i as u64)).ok_or(SynthesisError::AssignmentMissing)
            })
        })
        .collect::<Result<_, _>>()?;
    let slack = Boolean::le_bits_to_fp(&slack_bits)?;
    (slack + &hi).enforce_equal(&FpVar::constant(Fr::from(r_top() - 1)))?;
    Ok(bits)
}

impl ChallengerVar {
    /// The empty transcript (all-zero state), as `Challenger::new`.
    pub fn new() -> Self {
        Self {
            capacity: FpVar::zero(),
            rate: vec![Slot::Value(GlVar::zero()); GL_RATE],
            input_buffer: Vec::new(),
            output_buffer: Vec::new(),
        }
    }

    /// Packs the rate (reducing output limbs to canonical form), permutes, and leaves the new
    /// outputs undecomposed.
    fn permute(&mut self) -> Result<(), SynthesisError> {
        let mut state = vec![self.capacity.clone()];
        for chunk in self.rate.chunks(GL_PER_FR) {
            let mut packed = FpVar::zero();
            for (k, slot) in chunk.iter().enumerate() {
                let mut v = slot.read()?;
                if !v.is_canonical() {
                    v = v.reduce_canonical()?;
                }
                packed += v.value * Fr::from(BigUint::from(1u8) << (64 * k));
            }
            state.push(packed);
        }
        permute_var(params_t4(), &mut state)?;
        self.capacity = state[0].clone();
        self.rate = state[1..]
            .iter()
            .flat_map(|y| {
                let out = Rc::new(LazyOutput { y: y.clone(), limbs: RefCell::new(None) });
                (0..GL_PER_FR).map(move |i| Slot::Output(out.clone(), i))
            })
            .collect();
        Ok(())
    }

    fn duplexing(&mut self) -> Result<(), SynthesisError> {
        assert!(self.input_buffer.len() <= GL_RATE);
        for (slot, x) in self.rate.iter_mut().zip(self.input_buffer.drain(..)) {
            *slot = Slot::Value(x);
        }
        self.permute()?;
        self.output_buffer = self.rate.clone();
        Ok(())
    }

    /// Observes one element; it must be canonical (a range-checked witness or a constant), as
    /// the native challenger packs canonical values.
    pub fn observe_element(&mut self, x: &GlVar) -> Result<(), SynthesisError> {
        assert!(x.is_canonical(), "the challenger observes canonical values only");
        self.output_buffer.clear();
        self.input_buffer.push(x.clone());
        if self.input_buffer.len() == GL_RATE {
            self.duplexing()?;
        }
        Ok(())
    }

    /// Observes several elements.
    pub fn observe_elements(&mut self, xs: &[GlVar]) -> Result<(), SynthesisError> {
        xs.iter().try_for_each(|x| self.observe_element(x))
    }

    /// Observes an extension element (`c_0`, then `c_1`).
    pub fn observe_ext(&mut self, x: &GlExtVar) -> Result<(), SynthesisError> {
        self.observe_element(&x.c0)?;
        self.observe_element(&x.c1)
    }

    /// Observes a Poseidon-BN254 hash through its five limbs.
    pub fn observe_hash(&mut self, h: &FpVar<Fr>) -> Result<(), SynthesisError> {
        self.observe_elements(&hash_limbs_var(h)?)
    }

    /// Observes a Merkle cap.
    pub fn observe_cap(&mut self, cap: &[FpVar<Fr>]) -> Result<(), SynthesisError> {
        cap.iter().try_for_each(|h| self.observe_hash(h))
    }

    /// One challenge: a value below `2^64` congruent to the native challenge (reduce it to
    /// canonical form where bits are needed).
    pub fn get_challenge(&mut self) -> Result<GlVar, SynthesisError> {
        if !self.input_buffer.is_empty() || self.output_buffer.is_empty() {
            self.duplexing()?;
        }
        self.output_buffer.pop().expect("output buffer is non-empty").read()
    }

    /// `n` challenges.
    pub fn get_n_challenges(&mut self, n: usize) -> Result<Vec<GlVar>, SynthesisError> {
        (0..n).map(|_| self.get_challenge()).collect()
    }

    /// An extension challenge (two base challenges, `c_0` first).
    pub fn get_extension_challenge(&mut self) -> Result<GlExtVar, SynthesisError> {
        let c0 = self.get_challenge()?;
        let c1 = self.get_challenge()?;
        Ok(GlExtVar { c0, c1 })
    }

    /// Observes the FRI parameters as `FriParams::observe` does (constants: free).
    pub fn observe_fri_params(&mut self, params: &FriParams) -> Result<(), SynthesisError> {
        let c = |x: u64| GlVar::constant(GL::from_canonical_u64(x));
        let cfg = &params.config;
        self.observe_element(&c(cfg.rate_bits as u64))?;
        self.observe_element(&c(cfg.cap_height as u64))?;
        self.observe_element(&c(cfg.proof_of_work_bits as u64))?;
        for x in cfg.reduction_strategy.serialize::<GL>() {
            self.observe_element(&GlVar::constant(x))?;
        }
        self.observe_element(&c(cfg.num_query_rounds as u64))?;
        self.observe_element(&c(params.hiding as u64))?;
        self.observe_element(&c(params.degree_bits as u64))?;
        for &a in &params.reduction_arity_bits {
            self.observe_element(&c(a as u64))?;
        }
        Ok(())
    }
}

/// The parts of a proof the challenger reads, as circuit variables.
#[derive(Clone, Debug)]
pub struct TranscriptVar {
    /// The Goldilocks-Poseidon hash of the public inputs (4 elements).
    pub public_inputs_hash: Vec<GlVar>,
    /// Wires cap.
    pub wires_cap: Vec<FpVar<Fr>>,
    /// `Z` and partial-products cap.
    pub zs_cap: Vec<FpVar<Fr>>,
    /// Quotient cap.
    pub quotient_cap: Vec<FpVar<Fr>>,
    /// The openings in FRI order: the `ζ` batch, then the `gζ` batch.
    pub openings: Vec<GlExtVar>,
    /// FRI commit-phase caps.
    pub commit_phase_caps: Vec<Vec<FpVar<Fr>>>,
    /// FRI final polynomial coefficients.
    pub final_poly: Vec<GlExtVar>,
    /// FRI proof-of-work witness.
    pub pow_witness: GlVar,
}

impl TranscriptVar {
    /// Allocates the transcript of `proof` as witnesses (every Goldilocks value range-checked
    /// canonical, every hash an `Fr` witness). Lookups are not supported yet.
    pub fn new_witness(
        cs: ConstraintSystemRef<Fr>,
        proof: &ProofWithPublicInputs<GL, C, D>,
    ) -> Result<Self, SynthesisError> {
        let pih: HashOut<GL> = proof.get_public_inputs_hash();
        let public_inputs_hash =
            pih.elements.iter().map(|x| GlVar::new_witness(cs.clone(), Some(*x))).collect::<Result<_, _>>()?;
        Self::new_witness_with_public_inputs_hash(cs, proof, public_inputs_hash)
    }

    /// As [`TranscriptVar::new_witness`], with the public-inputs hash given (computed in-circuit
    /// from the public inputs, as the wrap does; 4 canonical elements).
    pub fn new_witness_with_public_inputs_hash(
        cs: ConstraintSystemRef<Fr>,
        proof: &ProofWithPublicInputs<GL, C, D>,
        public_inputs_hash: Vec<GlVar>,
    ) -> Result<Self, SynthesisError> {
        assert_eq!(public_inputs_hash.len(), 4, "a public-inputs hash has 4 elements");
        assert!(public_inputs_hash.iter().all(GlVar::is_canonical), "the challenger observes canonical values only");
        let p = &proof.proof;
        assert!(p.openings.lookup_zs.is_empty(), "lookups are not supported");
        let cap = |c: &plonky2::hash::merkle_tree::MerkleCap<GL, crate::hasher::PoseidonBn254Hash>| {
            c.0.iter().map(|h| FpVar::new_witness(cs.clone(), || Ok(h.0))).collect::<Result<Vec<_>, _>>()
        };
        let ext = |xs: &[plonky2::field::extension::quadratic::QuadraticExtension<GL>]| {
            xs.iter().map(|x| GlExtVar::new_witness(cs.clone(), Some(*x))).collect::<Result<Vec<_>, _>>()
        };
        let o = &p.openings;
        let zeta_batch = [
            o.constants.as_slice(),
            o.plonk_sigmas.as_slice(),
            o.wires.as_slice(),
            o.plonk_zs.as_slice(),
            o.partial_products.as_slice(),
            o.quotient_polys.as_slice(),
        ]
        .concat();
        let mut openings = ext(&zeta_batch)?;
        openings.extend(ext(&o.plonk_zs_next)?);
        Ok(Self {
            public_inputs_hash,
            wires_cap: cap(&p.wires_cap)?,
            zs_cap: cap(&p.plonk_zs_partial_products_cap)?,
            quotient_cap: cap(&p.quotient_polys_cap)?,
            openings,
            commit_phase_caps: p.opening_proof.commit_phase_merkle_caps.iter().map(cap).collect::<Result<_, _>>()?,
            final_poly: ext(&p.opening_proof.final_poly.coeffs)?,
            pow_witness: GlVar::new_witness(cs.clone(), Some(p.opening_proof.pow_witness))?,
        })
    }
}

/// The challenges of a proof, in-circuit (plonky2's `ProofChallenges`).
#[derive(Clone, Debug)]
pub struct ChallengesVar {
    /// `β`s of the permutation argument.
    pub plonk_betas: Vec<GlVar>,
    /// `γ`s of the permutation argument.
    pub plonk_gammas: Vec<GlVar>,
    /// `α`s combining the constraints.
    pub plonk_alphas: Vec<GlVar>,
    /// The opening point `ζ`.
    pub plonk_zeta: GlExtVar,
    /// FRI's batching challenge.
    pub fri_alpha: GlExtVar,
    /// FRI's folding challenges, one per commit-phase layer.
    pub fri_betas: Vec<GlExtVar>,
    /// The proof-of-work response, as canonical bits (the verifier checks its top bits are 0).
    pub fri_pow_response_bits: Vec<Boolean<Fr>>,
    /// Each query index as its `degree_bits + rate_bits` low bits of the canonical challenge.
    pub fri_query_index_bits: Vec<Vec<Boolean<Fr>>>,
}

/// plonky2's `get_challenges` for a proof of a circuit with `common` data and `circuit_digest`
/// (a constant of the wrap circuit), replayed in-circuit.
pub fn proof_challenges(
    t: &TranscriptVar,
    circuit_digest: Fr,
    common: &plonky2::plonk::circuit_data::CommonCircuitData<GL, D>,
) -> Result<ChallengesVar, SynthesisError> {
    let num_challenges = common.config.num_challenges;
    let fri = &common.fri_params;
    let mut ch = ChallengerVar::new();
    ch.observe_fri_params(fri)?;
    ch.observe_hash(&FpVar::constant(circuit_digest))?;
    ch.observe_elements(&t.public_inputs_hash)?;
    ch.observe_cap(&t.wires_cap)?;
    let plonk_betas = ch.get_n_challenges(num_challenges)?;
    let plonk_gammas = ch.get_n_challenges(num_challenges)?;
    ch.observe_cap(&t.zs_cap)?;
    let plonk_alphas = ch.get_n_challenges(num_challenges)?;
    ch.observe_cap(&t.quotient_cap)?;
    let plonk_zeta = ch.get_extension_challenge()?;
    for x in &t.openings {
        ch.observe_ext(x)?;
    }
    let fri_alpha = ch.get_extension_challenge()?;
    let mut fri_betas = Vec::with_capacity(t.commit_phase_caps.len());
    for cap in &t.commit_phase_caps {
        ch.observe_cap(cap)?;
        fri_betas.push(ch.get_extension_challenge()?);
    }
    for x in &t.final_poly {
        ch.observe_ext(x)?;
    }
    ch.observe_element(&t.pow_witness)?;
    let fri_pow_response_bits = ch.get_challenge()?.to_canonical_bits()?;
    let lde_bits = common.degree_bits() + fri.config.rate_bits;
    let fri_query_index_bits = (0..fri.config.num_query_rounds)
        .map(|_| Ok(ch.get_challenge()?.to_canonical_bits()?[..lde_bits].to_vec()))
        .collect::<Result<_, SynthesisError>>()?;
    Ok(ChallengesVar {
        plonk_betas,
        plonk_gammas,
        plonk_alphas,
        plonk_zeta,
        fri_alpha,
        fri_betas,
        fri_pow_response_bits,
        fri_query_index_bits,
    })
}

/// Value of little-endian bits, for tests.
pub fn bits_value(bits: &[Boolean<Fr>]) -> Result<u64, SynthesisError> {
    use ark_r1cs_std::GR1CSVar;
    let mut v = 0u64;
    for (i, b) in bits.iter().enumerate() {
        v |= (b.value()? as u64) << i;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::field::types::{PrimeField64, Sample};
    use plonky2::iop::challenger::Challenger;
    use plonky2::iop::witness::{PartialWitness, WitnessWrite};
    use plonky2::plonk::circuit_builder::CircuitBuilder;
    use plonky2::plonk::circuit_data::CircuitConfig;
    use plonky2::plonk::config::Hasher;

    use crate::hasher::PoseidonBn254Hash;

    /// Random interleavings of observations and squeezes agree with the native challenger,
    /// including partial absorbs that repack earlier outputs.
    #[test]
    fn matches_native_challenger_on_random_transcript() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let mut native = Challenger::<GL, PoseidonBn254Hash>::new();
        let mut var = ChallengerVar::new();
        let mut rng_state = 7u64;
        let mut next = || {
            rng_state = rng_state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (rng_state >> 33) as usize
        };
        for _ in 0..12 {
            for _ in 0..next() % 14 {
                let x = GL::rand();
                native.observe_element(x);
                var.observe_element(&GlVar::new_witness(cs.clone(), Some(x)).unwrap()).unwrap();
            }
            if next() % 3 == 0 {
                let h = PoseidonBn254Hash::hash_no_pad(&GL::rand_vec(5));
                native.observe_hash::<PoseidonBn254Hash>(h);
                var.observe_hash(&FpVar::new_witness(cs.clone(), || Ok(h.0)).unwrap()).unwrap();
            }
            for _ in 0..next() % 11 {
                let a = native.get_challenge();
                let b = var.get_challenge().unwrap();
                assert_eq!(b.value().unwrap(), a);
            }
        }
        assert!(cs.is_satisfied().unwrap());
    }

    /// The in-circuit replay of `get_challenges` on a real proof gives plonky2's challenges.
    #[test]
    fn replays_challenges_of_a_real_proof() {
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.proof_of_work_bits = 4;
        config.security_bits = 88;
        let mut builder = CircuitBuilder::<GL, D>::new(config);
        let x = builder.add_virtual_target();
        builder.register_public_input(x);
        let mut y = x;
        for _ in 0..10 {
            y = builder.mul(y, y);
        }
        builder.register_public_input(y);
        let data = builder.build::<C>();
        let mut pw = PartialWitness::new();
        pw.set_target(x, GL::from_canonical_u64(3)).unwrap();
        let proof = data.prove(pw).unwrap();
        data.verify(proof.clone()).unwrap();

        let native = proof
            .get_challenges(proof.get_public_inputs_hash(), &data.verifier_only.circuit_digest, &data.common)
            .unwrap();

        let cs = ConstraintSystem::<Fr>::new_ref();
        let t = TranscriptVar::new_witness(cs.clone(), &proof).unwrap();
        let alloc = cs.num_constraints();
        let ch = proof_challenges(&t, data.verifier_only.circuit_digest.0, &data.common).unwrap();
        let replay = cs.num_constraints() - alloc;
        assert!(cs.is_satisfied().unwrap());

        let vals = |v: &[GlVar]| v.iter().map(|x| x.value().unwrap()).collect::<Vec<_>>();
        assert_eq!(vals(&ch.plonk_betas), native.plonk_betas);
        assert_eq!(vals(&ch.plonk_gammas), native.plonk_gammas);
        assert_eq!(vals(&ch.plonk_alphas), native.plonk_alphas);
        assert_eq!(ch.plonk_zeta.value().unwrap(), native.plonk_zeta);
        let f = &native.fri_challenges;
        assert_eq!(ch.fri_alpha.value().unwrap(), f.fri_alpha);
        assert_eq!(ch.fri_betas.iter().map(|b| b.value().unwrap()).collect::<Vec<_>>(), f.fri_betas);
        assert_eq!(bits_value(&ch.fri_pow_response_bits).unwrap(), f.fri_pow_response.to_canonical_u64());
        let idx: Vec<usize> = ch.fri_query_index_bits.iter().map(|b| bits_value(b).unwrap() as usize).collect();
        assert_eq!(idx, f.fri_query_indices);
        println!(
            "challenger replay of a degree-2^{} proof ({} openings, {} FRI layers, {} queries): \
             {} constraints to allocate the transcript, {} to replay it",
            data.common.degree_bits(),
            t.openings.len(),
            t.commit_phase_caps.len(),
            idx.len(),
            alloc,
            replay
        );
    }

    /// The canonical decomposition gives the bits of `y`, costs 318 constraints, and rejects the
    /// decomposition of `y + r`.
    #[test]
    fn canonical_decomposition() {
        use ark_r1cs_std::GR1CSVar;
        let cs = ConstraintSystem::<Fr>::new_ref();
        // The largest accepted value: H = H_r − 1, all 192 low bits set.
        let y = Fr::from(r_top() - 1) * Fr::from(BigUint::from(1u8) << 192u32)
            + Fr::from((BigUint::from(1u8) << 192u32) - 1u8);
        let yv = FpVar::new_witness(cs.clone(), || Ok(y)).unwrap();
        let before = cs.num_constraints();
        let bits = fr_to_bits_canonical(&yv).unwrap();
        let cost = cs.num_constraints() - before;
        println!("canonical 254-bit decomposition of an Fr variable: {cost} constraints");
        assert_eq!(cost, 318);
        let v: BigUint = y.into_bigint().into();
        for (i, b) in bits.iter().enumerate() {
            assert_eq!(b.value().unwrap(), v.bit(i as u64));
        }
        assert!(cs.is_satisfied().unwrap());

        // A small y has a second 254-bit decomposition, y + r: the slack check rejects it.
        let small = Fr::from(7u64);
        let r_big: BigUint = Fr::MODULUS.into();
        let fake = BigUint::from(7u8) + &r_big;
        assert!(fake.bits() <= 254);
        let cs = ConstraintSystem::<Fr>::new_ref();
        let yv = FpVar::new_witness(cs.clone(), || Ok(small)).unwrap();
        let bits: Vec<Boolean<Fr>> =
            (0..254).map(|i| Boolean::new_witness(cs.clone(), || Ok(fake.bit(i))).unwrap()).collect();
        let lo = Boolean::le_bits_to_fp(&bits[..192]).unwrap();
        let hi = Boolean::le_bits_to_fp(&bits[192..]).unwrap();
        use ark_r1cs_std::eq::EqGadget;
        (&lo + &hi * Fr::from(BigUint::from(1u8) << 192u32)).enforce_equal(&yv).unwrap();
        assert!(cs.is_satisfied().unwrap(), "y + r is a valid 254-bit decomposition of y");
        let fake_hi: u64 = (&fake >> 192u32).to_u64_digits()[0];
        assert!(fake_hi > r_top() - 1, "so the slack H_r − 1 − H would be negative");
        // No 62-bit slack exists: the field element H_r − 1 − H is ≥ 2^62.
        let slack = Fr::from(r_top() - 1) - Fr::from(fake_hi);
        let slack_big: BigUint = slack.into_bigint().into();
        assert!(slack_big.bits() > 62);
    }

    /// The excluded inputs (`y ≥ H_r·2^192`, e.g. `r − 1`) leave the system unsatisfied.
    #[test]
    fn canonical_decomposition_excludes_top() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let yv = FpVar::new_witness(cs.clone(), || Ok(-Fr::from(1u64))).unwrap();
        fr_to_bits_canonical(&yv).unwrap();
        assert!(!cs.is_satisfied().unwrap());
    }

    /// A changed transcript value gives different challenges.
    #[test]
    fn tampered_cap_changes_challenges() {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let mut a = ChallengerVar::new();
        let mut b = ChallengerVar::new();
        a.observe_hash(&FpVar::new_witness(cs.clone(), || Ok(Fr::from(5u64))).unwrap()).unwrap();
        b.observe_hash(&FpVar::new_witness(cs.clone(), || Ok(Fr::from(6u64))).unwrap()).unwrap();
        let (x, y) = (a.get_challenge().unwrap(), b.get_challenge().unwrap());
        assert_ne!(x.value().unwrap(), y.value().unwrap());
    }
}


//! The wrap: a Reckle root proof becomes one Pari proof on BN254 (issue 29).
//!
//! (Past 700 lines with its tests: about 220 of them, which share one fixture of a real shrink
//! proof and exercise the circuit above; the code itself is one concept.)
//!
//! ```text
//! root proof (ℓ, q) ──N_{ℓ,q}──▶ normalize proof ──S──▶ shrink proof (Poseidon-BN254)
//!                                                        │  WrapCircuit: R1CS over Fr
//!                                                        ▼
//!                                             Pari proof on BN254 (FinalProof)
//! ```
//!
//! [`crate::shrink`] makes the shrink proof; [`WrapCircuit`] verifies it in R1CS over BN254's
//! `Fr` with the gadgets of this crate (`S`'s verifier data are constants), and Pari proves that
//! circuit. Every `(ℓ, q)` goes through the same `S`, so **one** [`WrapKeys`] serves every
//! Reckle job.
//!
//! ## Public inputs (8 elements of `Fr`)
//!
//! The shrink proof's 15 public inputs, canonical Goldilocks elements `C_0..C_3`, `d_0..d_3`,
//! `Σlo`, `Σhi`, `count`, `id_0..id_3`, are packed in-circuit into
//!
//! | | value |
//! |---|---|
//! | `x_0`, `x_1` | `C_0 + C_1·2^64`, `C_2 + C_3·2^64` |
//! | `x_2`, `x_3` | `d_0 + d_1·2^64`, `d_2 + d_3·2^64` |
//! | `x_4` | `sum = Σlo + Σhi·2^32` (the exact sum of the batch values, `< 2^97`) |
//! | `x_5` | `count` |
//! | `x_6`, `x_7` | `id_0 + id_1·2^64`, `id_2 + id_3·2^64` |
//!
//! Two canonical limbs below `2^64` make an integer below `2^128 < r`, so `(x_0, x_1)` pin `C`
//! exactly, and likewise `d` and `id`. The 15 elements are hashed in-circuit with plonky2's
//! Goldilocks Poseidon into the public-inputs hash the shrink proof's transcript starts from, so
//! they are the shrink proof's public inputs and nothing else.
//!
//! ## What a verifier checks ([`verify`], [`batch_verify`])
//!
//! The Pari proof against the pinned wrap key, with `C` = the commitment it expects and `id` =
//! the circuit id of `N_{ℓ,q}` for the job's `(ℓ, q)` ([`crate::shrink::NormalizeCircuit::circuit_id`],
//! derived from the pinned Reckle root key): without the `id` check a proof of some other
//! circuit of `N`'s shape would pass. `d`, `sum` and `count` are in [`FinalProof::public`],
//! to compare with the statement (`reckle::Statement` recomputes them from the batch leaves).

//! ## Costs (measured: `cargo run --release -p plonky2-r1cs --example wrap_bench`, 2 shared cores)
//!
//! | wrap circuit component | constraints |
//! |---|---|
//! | public inputs: 15 canonical Goldilocks values packed into 8 `Fr` | 983 |
//! | public-inputs hash (Goldilocks Poseidon, emulated, 2 permutations) | 124,416 |
//! | allocate openings and caps (range checks) | 35,685 |
//! | allocate FRI query values and paths (range checks) | 416,000 |
//! | challenger replay (Poseidon-BN254 duplex) | 66,387 |
//! | gate constraints at `ζ` | 300,942 |
//! | permutation argument + quotient check | 204,416 |
//! | FRI (proof of work, Merkle paths, combination, folds, final polynomial) | 997,598 |
//! | **total** | **2,146,427** |
//!
//! That is 3,938,160 SR1CS rows (domain `2^22`). Three runs on the shared machine: Pari setup
//! 143–249 s, prove 66–102 s (synthesis included), 10.2–10.6 GB peak RSS for the whole bench
//! (setup included); final proof 128 B of Pari proof plus 136 B of public values and header;
//! single verification 0.78–0.81 ms; 64 proofs batch-verified in 43 µs per proof (96 in a run
//! that overlapped a build), 9.5×, 19.1× and 28.6× faster than one by one in the same run.
//! Before them, the normalize proof (`2^13`, Goldilocks) takes 6–9 s and the shrink proof
//! (`2^12`, Poseidon-BN254, with `2^20` grinding) 32–83 s.

use ark_bn254::{Bn254, Fr};
use ark_ff::{BigInt, PrimeField};
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Read, SerializationError, Valid, Validate, Write};
use num_bigint::BigUint;
use plonky2::field::goldilocks_field::GoldilocksField as GL;
use plonky2::field::types::{Field64, PrimeField64};
use plonky2::plonk::circuit_data::{CommonCircuitData, VerifierOnlyCircuitData};
use plonky2::plonk::proof::ProofWithPublicInputs;
use rand::{CryptoRng, RngCore, SeedableRng};
use rand_chacha::ChaCha20Rng;
use reckle::Digest;

use crate::challenger_gadget::{proof_challenges, TranscriptVar};
use crate::fri_gadget::{verify_fri_var, FriQueriesVar};
use crate::gates_gadget::evaluate_gate_constraints_var;
use crate::goldilocks::GlVar;
use crate::goldilocks_poseidon::poseidon_hash_no_pad_var;
use crate::shrink::{NormalizeCircuit, ShrinkCircuit, ShrinkConfig, ShrinkError, NUM_SHRINK_INPUTS};
use crate::vanishing_gadget::{check_vanishing_var, OpeningsVar};

const D: usize = 2;

/// Version of the wrap circuit (of `N`'s shape, `S` and [`WrapCircuit`]) and of the
/// [`FinalProof`] encoding: bump it whenever any of them changes, since the wrap key changes with
/// them.
pub const WRAP_VERSION: u32 = 1;

/// The fixed seed of the reproducible wrap key ([`WrapKeys::setup`]; see its warning).
pub const WRAP_KEY_SEED: [u8; 32] = *b"reckle-wrap-v1 reproducible seed";

/// [`WrapKeys::vk_digest`] of `WrapKeys::setup(&ShrinkCircuit::build_default()?, WRAP_KEY_SEED)`
/// for this [`WRAP_VERSION`], as printed by `cargo run --release -p plonky2-r1cs --example
/// print_wrap_key` (the setup takes minutes and several GB, so no unit test reruns it).
pub const PINNED_WRAP_VK_DIGEST: &str =
    "c9f35e741481aeda247e0d89b0516625d3664f4f3f16a3316d6c6f9b9c89838805128007a6d5108b8c9d0c5ba36c61086de33babdb0f7fe1f1c4a599e01469c3";

/// Number of public inputs of the wrap circuit (see the module doc).
pub const NUM_PUBLIC_INPUTS: usize = 8;

/// A shrink proof: the plonky2 proof the wrap circuit verifies.
pub type ShrinkProof = ProofWithPublicInputs<GL, ShrinkConfig, D>;

/// Errors of the wrap.
#[derive(Debug, thiserror::Error)]
pub enum WrapError {
    #[error(transparent)]
    Shrink(#[from] ShrinkError),
    #[error("pari: {0}")]
    Pari(#[from] pari::Error),
    #[error("malformed final proof: {0}")]
    Malformed(String),
    #[error("verification failed: {0}")]
    Verification(String),
}

/// The statement a final proof attests, as public values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WrapPublic {
    /// The commitment `C`.
    pub c: Digest,
    /// The canonical digest `d` of the batch.
    pub d: Digest,
    /// `Σlo + Σhi·2^32`: the exact sum of the batch values.
    pub sum: u128,
    /// `|I|`.
    pub count: u64,
    /// The circuit id of the normalize circuit, which identifies `(ℓ, q)` (see [`crate::shrink`]).
    pub circuit_id: Digest,
}

/// `lo + hi·2^64` as an element of `Fr` (`< 2^128 < r`).
fn two_limbs(lo: u64, hi: u64) -> Fr {
    Fr::from_bigint(BigInt::new([lo, hi, 0, 0])).expect("below 2^128 < r")
}

impl WrapPublic {
    /// Reads the shrink proof's 15 public inputs.
    pub fn from_shrink_inputs(pis: &[GL]) -> Result<Self, WrapError> {
        if pis.len() != NUM_SHRINK_INPUTS {
            return Err(WrapError::Malformed(format!("{} shrink public inputs, expected {NUM_SHRINK_INPUTS}", pis.len())));
        }
        let e: Vec<u64> = pis.iter().map(|x| x.to_canonical_u64()).collect();
        Ok(Self {
            c: Digest([e[0], e[1], e[2], e[3]]),
            d: Digest([e[4], e[5], e[6], e[7]]),
            sum: e[8] as u128 + ((e[9] as u128) << 32),
            count: e[10],
            circuit_id: Digest([e[11], e[12], e[13], e[14]]),
        })
    }

    /// The wrap circuit's public inputs `x` (see the module doc).
    pub fn to_field_elements(&self) -> Vec<Fr> {
        let two = |d: &Digest| [two_limbs(d.0[0], d.0[1]), two_limbs(d.0[2], d.0[3])];
        let mut x = Vec::with_capacity(NUM_PUBLIC_INPUTS);
        x.extend(two(&self.c));
        x.extend(two(&self.d));
        x.push(two_limbs(self.sum as u64, (self.sum >> 64) as u64));
        x.push(Fr::from(self.count));
        x.extend(two(&self.circuit_id));
        x
    }
}

/// Constraint counts of the wrap circuit by component, in synthesis order.
pub type CostReport = Vec<(&'static str, usize)>;

/// The R1CS circuit over BN254's `Fr` verifying a shrink proof (see the module doc). `S`'s
/// verifier data are constants; the proof is the witness.
#[derive(Clone, Copy)]
pub struct WrapCircuit<'a> {
    pub common: &'a CommonCircuitData<GL, D>,
    pub verifier_only: &'a VerifierOnlyCircuitData<ShrinkConfig, D>,
    pub proof: &'a ShrinkProof,
    /// The public values the prover claims; `None`: those of `proof` (what an honest prover
    /// does). Tests set it to play a prover who lies about them.
    claimed: Option<WrapPublic>,
}

impl<'a> WrapCircuit<'a> {
    pub fn new(shrink: &'a ShrinkCircuit, proof: &'a ShrinkProof) -> Self {
        Self { common: shrink.common(), verifier_only: shrink.verifier_only(), proof, claimed: None }
    }

    /// The circuit with the instance set to `public` whatever the proof says: what a lying
    /// prover would do (for soundness tests).
    pub fn claiming(mut self, public: WrapPublic) -> Self {
        self.claimed = Some(public);
        self
    }

    /// Lays out the constraints and returns their count per component.
    pub fn synthesize(self, cs: ConstraintSystemRef<Fr>) -> Result<CostReport, SynthesisError> {
        let mut report = Vec::new();
        let mut last = cs.num_constraints();
        let mut mark = |name: &'static str, cs: &ConstraintSystemRef<Fr>| {
            report.push((name, cs.num_constraints() - last));
            last = cs.num_constraints();
        };
        if self.proof.public_inputs.len() != NUM_SHRINK_INPUTS {
            return Err(SynthesisError::Unsatisfiable);
        }
        // Public inputs: canonical Goldilocks witnesses, packed into the Fr instance.
        let pis: Vec<GlVar> = self
            .proof
            .public_inputs
            .iter()
            .map(|x| GlVar::new_witness(cs.clone(), Some(*x)))
            .collect::<Result<_, _>>()?;
        let public = match self.claimed {
            Some(p) => p,
            None => WrapPublic::from_shrink_inputs(&self.proof.public_inputs).map_err(|_| SynthesisError::Unsatisfiable)?,
        };
        let x = public.to_field_elements();
        let shift = |k: u32| FpVar::Constant(Fr::from(BigUint::from(1u8) << k));
        let packed = [
            &pis[0].value + &pis[1].value * shift(64),
            &pis[2].value + &pis[3].value * shift(64),
            &pis[4].value + &pis[5].value * shift(64),
            &pis[6].value + &pis[7].value * shift(64),
            &pis[8].value + &pis[9].value * shift(32),
            pis[10].value.clone(),
            &pis[11].value + &pis[12].value * shift(64),
            &pis[13].value + &pis[14].value * shift(64),
        ];
        for (v, p) in x.iter().zip(&packed) {
            FpVar::new_input(cs.clone(), || Ok(*v))?.enforce_equal(p)?;
        }
        mark("public inputs: 15 canonical Goldilocks values packed into 8 Fr", &cs);
        let pih = poseidon_hash_no_pad_var(&pis)?;
        mark("public-inputs hash (Goldilocks Poseidon, emulated)", &cs);
        let t = TranscriptVar::new_witness_with_public_inputs_hash(cs.clone(), self.proof, pih.to_vec())?;
        mark("allocate openings and caps (range checks)", &cs);
        let q = FriQueriesVar::new_witness(cs.clone(), &self.proof.proof.opening_proof)?;
        mark("allocate FRI query values and paths (range checks)", &cs);
        let ch = proof_challenges(&t, self.verifier_only.circuit_digest.0, self.common)?;
        mark("challenger replay (Poseidon-BN254 duplex)", &cs);
        let o = OpeningsVar::from_transcript(&t, self.common);
        let terms = evaluate_gate_constraints_var(self.common, &o.constants, &o.wires, &t.public_inputs_hash)?;
        mark("gate constraints at zeta", &cs);
        check_vanishing_var(self.common, &o, &ch, &terms)?;
        mark("permutation argument + quotient check", &cs);
        let consts: Vec<FpVar<Fr>> =
            self.verifier_only.constants_sigmas_cap.0.iter().map(|h| FpVar::Constant(h.0)).collect();
        let caps = [consts, t.wires_cap.clone(), t.zs_cap.clone(), t.quotient_cap.clone()];
        verify_fri_var(self.common, &caps, &t, &ch, &q)?;
        mark("FRI (proof of work, Merkle paths, combination, folds, final polynomial)", &cs);
        Ok(report)
    }
}

impl ConstraintSynthesizer<Fr> for WrapCircuit<'_> {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        self.synthesize(cs).map(|_| ())
    }
}

/// The wrap's Pari keys on BN254, made once per [`WRAP_VERSION`].
pub struct WrapKeys {
    pub pk: pari::ProvingKey<Bn254>,
    pub vk: pari::VerifyingKey<Bn254>,
}

impl WrapKeys {
    /// Pari setup of the wrap circuit with the trapdoor drawn from ChaCha20 seeded with `seed`
    /// (deterministic: the same seed gives the same keys, see [`WrapKeys::vk_digest`] and
    /// [`PINNED_WRAP_VK_DIGEST`]). The gadgets need witness values to lay out their constraints,
    /// so this first makes [`ShrinkCircuit::sample_proof`]; the layout does not depend on it.
    ///
    /// Whoever knows `seed` knows the trapdoor and can forge proofs: a fixed seed is for tests
    /// and reproducible keys; a production key comes from [`WrapKeys::setup_with_rng`] with an
    /// RNG whose output is then discarded (or from a ceremony).
    pub fn setup(shrink: &ShrinkCircuit, seed: [u8; 32]) -> Result<Self, WrapError> {
        Self::setup_with_rng(shrink, &mut ChaCha20Rng::from_seed(seed))
    }

    /// [`WrapKeys::setup`] with the trapdoor from `rng`.
    pub fn setup_with_rng<R: RngCore + CryptoRng>(shrink: &ShrinkCircuit, rng: &mut R) -> Result<Self, WrapError> {
        let sample = shrink.sample_proof()?;
        Self::setup_with_sample(shrink, &sample, rng)
    }

    /// [`WrapKeys::setup_with_rng`] laying out the constraints with `sample`, any valid shrink
    /// proof (the keys do not depend on which).
    pub fn setup_with_sample<R: RngCore + CryptoRng>(
        shrink: &ShrinkCircuit,
        sample: &ShrinkProof,
        rng: &mut R,
    ) -> Result<Self, WrapError> {
        shrink.verify(sample)?;
        let sr1cs = pari::r1cs::synthesize_setup_with_witness(WrapCircuit::new(shrink, sample))?;
        let (pk, vk) = pari::generator::setup_sr1cs::<Bn254, _>(sr1cs, rng)?;
        Ok(Self { pk, vk })
    }

    /// The digest a verifier pins (Pari's [`pari::KeyDigest`] of the verifying key).
    pub fn vk_digest(&self) -> pari::KeyDigest {
        self.vk.digest()
    }
}

/// The final proof of a Reckle job: the Pari proof and the public values it is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalProof {
    /// [`WRAP_VERSION`] of the circuit it was made with.
    pub version: u32,
    /// `(ℓ, q)` of the job (informative: what binds them is `public.circuit_id`).
    pub params: reckle::Params,
    pub public: WrapPublic,
    pub proof: pari::Proof<Bn254>,
}

/// Makes the final proof of a root proof of `(ℓ, q)`: normalize (`n`, built for that `(ℓ, q)`),
/// shrink, then Pari on the wrap circuit.
pub fn prove<R: RngCore + CryptoRng>(
    pk: &pari::ProvingKey<Bn254>,
    shrink: &ShrinkCircuit,
    n: &NormalizeCircuit,
    root: &reckle::NodeProof,
    rng: &mut R,
) -> Result<FinalProof, WrapError> {
    let shrink_proof = shrink_root(shrink, n, root)?;
    prove_shrunk(pk, shrink, n.params(), &shrink_proof, rng)
}

/// The plonky2 part of [`prove`]: the shrink proof of a root proof.
pub fn shrink_root(shrink: &ShrinkCircuit, n: &NormalizeCircuit, root: &reckle::NodeProof) -> Result<ShrinkProof, WrapError> {
    shrink.accepts(n)?;
    let normalized = n.prove(root)?;
    Ok(shrink.prove(n, &normalized)?)
}

/// The Pari part of [`prove`], from a shrink proof.
pub fn prove_shrunk<R: RngCore + CryptoRng>(
    pk: &pari::ProvingKey<Bn254>,
    shrink: &ShrinkCircuit,
    params: reckle::Params,
    shrink_proof: &ShrinkProof,
    rng: &mut R,
) -> Result<FinalProof, WrapError> {
    prove_shrunk_interruptible(pk, shrink, params, shrink_proof, rng, pari::Interrupt::NEVER)
}

/// [`prove_shrunk`], stopped with `WrapError::Pari(pari::Error::Interrupted)` at the first of
/// the Pari prover's steps after `stop` is raised (see [`pari::interrupt`]): the wrap's Pari
/// prove takes minutes.
pub fn prove_shrunk_interruptible<R: RngCore + CryptoRng>(
    pk: &pari::ProvingKey<Bn254>,
    shrink: &ShrinkCircuit,
    params: reckle::Params,
    shrink_proof: &ShrinkProof,
    rng: &mut R,
    stop: pari::Interrupt<'_>,
) -> Result<FinalProof, WrapError> {
    let public = WrapPublic::from_shrink_inputs(&shrink_proof.public_inputs)?;
    let proof = pari::prove_interruptible(pk, WrapCircuit::new(shrink, shrink_proof), rng, stop)?;
    Ok(FinalProof { version: WRAP_VERSION, params, public, proof })
}

/// What a verifier expects of a final proof: the commitment and the circuit id of its `(ℓ, q)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expected {
    pub c: Digest,
    pub circuit_id: Digest,
}

fn check_expected(expected: &Expected, proof: &FinalProof) -> Result<Vec<Fr>, WrapError> {
    if proof.version != WRAP_VERSION {
        return Err(WrapError::Verification(format!("final proof of wrap version {}, this is {WRAP_VERSION}", proof.version)));
    }
    if proof.public.c != expected.c {
        return Err(WrapError::Verification("final proof is about another commitment C".into()));
    }
    if proof.public.circuit_id != expected.circuit_id {
        return Err(WrapError::Verification("final proof is for another circuit (tree shape)".into()));
    }
    Ok(proof.public.to_field_elements())
}

/// Verifies one final proof under the (pinned) wrap key.
pub fn verify(pvk: &pari::PreparedVerifyingKey<Bn254>, expected: &Expected, proof: &FinalProof) -> Result<(), WrapError> {
    let x = check_expected(expected, proof)?;
    pari::verify(pvk, &x, &proof.proof).map_err(|e| WrapError::Verification(e.to_string()))
}

/// Verifies many final proofs under one wrap key with Pari's batch check (one 3-pair
/// multi-pairing for the whole batch). On failure, the indices of the bad proofs.
pub fn batch_verify<R: RngCore + CryptoRng>(
    pvk: &pari::PreparedVerifyingKey<Bn254>,
    items: &[(Expected, &FinalProof)],
    rng: &mut R,
) -> Result<(), Vec<usize>> {
    let mut bad = Vec::new();
    let mut xs = Vec::with_capacity(items.len());
    let mut index = Vec::with_capacity(items.len());
    for (k, (e, p)) in items.iter().enumerate() {
        match check_expected(e, p) {
            Ok(x) => {
                xs.push(x);
                index.push(k);
            }
            Err(_) => bad.push(k),
        }
    }
    let batch: Vec<(&[Fr], &pari::Proof<Bn254>)> =
        xs.iter().zip(&index).map(|(x, &k)| (x.as_slice(), &items[k].1.proof)).collect();
    if let Err(failed) = pari::batch_verify_locate(pvk, &batch, rng) {
        bad.extend(failed.into_iter().map(|i| index[i]));
    }
    if bad.is_empty() {
        Ok(())
    } else {
        bad.sort_unstable();
        Err(bad)
    }
}

const FINAL_MAGIC: &[u8; 4] = b"RKWF";

impl FinalProof {
    /// `"RKWF" ‖ canonical encoding` (compressed points).
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = FINAL_MAGIC.to_vec();
        self.serialize_compressed(&mut out).expect("serialize to Vec");
        out
    }

    /// Parses and validates (points on the curve and in the subgroup, canonical limbs).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, WrapError> {
        let body = bytes
            .strip_prefix(FINAL_MAGIC.as_slice())
            .ok_or_else(|| WrapError::Malformed("wrong magic".into()))?;
        let mut reader = body;
        let p = Self::deserialize_compressed(&mut reader).map_err(|e| WrapError::Malformed(e.to_string()))?;
        if !reader.is_empty() {
            return Err(WrapError::Malformed("trailing bytes".into()));
        }
        Ok(p)
    }
}

impl CanonicalSerialize for FinalProof {
    fn serialize_with_mode<W: Write>(&self, mut w: W, compress: Compress) -> Result<(), SerializationError> {
        self.version.serialize_with_mode(&mut w, compress)?;
        self.params.log_n.serialize_with_mode(&mut w, compress)?;
        self.params.log_bucket.serialize_with_mode(&mut w, compress)?;
        for limb in self.public.c.0.iter().chain(&self.public.d.0) {
            limb.serialize_with_mode(&mut w, compress)?;
        }
        (self.public.sum as u64).serialize_with_mode(&mut w, compress)?;
        ((self.public.sum >> 64) as u64).serialize_with_mode(&mut w, compress)?;
        self.public.count.serialize_with_mode(&mut w, compress)?;
        for limb in &self.public.circuit_id.0 {
            limb.serialize_with_mode(&mut w, compress)?;
        }
        self.proof.serialize_with_mode(&mut w, compress)
    }

    fn serialized_size(&self, compress: Compress) -> usize {
        3 * 4 + 15 * 8 + self.proof.serialized_size(compress)
    }
}

impl Valid for FinalProof {
    fn check(&self) -> Result<(), SerializationError> {
        let limbs = self.public.c.0.iter().chain(&self.public.d.0).chain(&self.public.circuit_id.0);
        for &l in limbs {
            if l >= GL::ORDER {
                return Err(SerializationError::InvalidData);
            }
        }
        self.proof.check()
    }
}

impl CanonicalDeserialize for FinalProof {
    fn deserialize_with_mode<R: Read>(mut r: R, compress: Compress, validate: Validate) -> Result<Self, SerializationError> {
        let u32_ = |r: &mut R| u32::deserialize_with_mode(r, compress, validate);
        let version = u32_(&mut r)?;
        let log_n = u32_(&mut r)?;
        let log_bucket = u32_(&mut r)?;
        let params = reckle::Params::new(log_n, log_bucket).map_err(|_| SerializationError::InvalidData)?;
        let mut limbs = [0u64; 15];
        for l in limbs.iter_mut() {
            *l = u64::deserialize_with_mode(&mut r, compress, validate)?;
        }
        let proof = pari::Proof::<Bn254>::deserialize_with_mode(&mut r, compress, validate)?;
        let public = WrapPublic {
            c: Digest([limbs[0], limbs[1], limbs[2], limbs[3]]),
            d: Digest([limbs[4], limbs[5], limbs[6], limbs[7]]),
            sum: limbs[8] as u128 + ((limbs[9] as u128) << 64),
            count: limbs[10],
            circuit_id: Digest([limbs[11], limbs[12], limbs[13], limbs[14]]),
        };
        let p = Self { version, params, public, proof };
        if validate == Validate::Yes {
            p.check()?;
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ec::AffineRepr;
    use ark_ff::One;
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal};
    use plonky2::field::extension::quadratic::QuadraticExtension;
    use plonky2::field::types::Field;
    use std::sync::OnceLock;

    use crate::hasher::PoseidonBn254HashOut;

    type GLExt = QuadraticExtension<GL>;

    /// The fixed shrink circuit and a shrink proof of a real Reckle job `(ℓ, q) = (2, 1)`, with
    /// that job's normalize circuit; made once for every test (about a minute).
    struct Fixture {
        shrink: ShrinkCircuit,
        normalize: NormalizeCircuit,
        proof: ShrinkProof,
        /// `C` of another tree (another job).
        other_c: Digest,
    }

    fn fixture() -> &'static Fixture {
        static F: OnceLock<Fixture> = OnceLock::new();
        F.get_or_init(|| {
            let shrink = ShrinkCircuit::build_default().expect("shrink circuit");
            let params = reckle::Params::new(2, 1).expect("params");
            let circuits = reckle::Circuits::build(params).expect("circuits");
            let tree = reckle::Tree::build(params, vec![11, 22, 33, 44]).expect("tree");
            let other = reckle::Tree::build(params, vec![11, 22, 33, 45]).expect("tree");
            let batch = reckle::BatchProof::aggregate(&circuits, &tree, &[1, 2]).expect("aggregate");
            let normalize = NormalizeCircuit::build(circuits.root_key()).expect("normalize circuit");
            let proof = shrink_root(&shrink, &normalize, batch.root_proof()).expect("shrink");
            Fixture { shrink, normalize, proof, other_c: other.root() }
        })
    }

    /// Synthesizes the wrap circuit and reports whether it is satisfied.
    fn satisfied(circuit: WrapCircuit) -> bool {
        let cs = ConstraintSystem::<Fr>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        match circuit.synthesize(cs.clone()) {
            Ok(_) => cs.is_satisfied().expect("assignment present"),
            // A gadget refusing the witness outright (e.g. a division by zero) is a rejection too.
            Err(_) => false,
        }
    }

    #[test]
    fn honest_shrink_proof_satisfies_the_wrap_and_exports_the_statement() {
        let f = fixture();
        assert!(satisfied(WrapCircuit::new(&f.shrink, &f.proof)));
        let public = WrapPublic::from_shrink_inputs(&f.proof.public_inputs).expect("public");
        assert_eq!(public.count, 2);
        assert_eq!(public.sum, 22 + 33);
        assert_eq!(public.circuit_id, Digest::from_hash(f.normalize.circuit_id()));
        assert_eq!(public.d, reckle::hash::canonical_digest(2, &[(1, 22), (2, 33)]).expect("digest"));
        let x = public.to_field_elements();
        assert_eq!(x.len(), NUM_PUBLIC_INPUTS);
        assert_eq!(x[4], Fr::from(55u64));
    }

    type Tamper = Box<dyn Fn(&mut ShrinkProof)>;

    /// Each tampered copy of the fixture's proof leaves the wrap circuit unsatisfied.
    fn assert_tampers_rejected(cases: Vec<(&str, Tamper)>) {
        let f = fixture();
        for (name, tamper) in &cases {
            let mut p = f.proof.clone();
            tamper(&mut p);
            assert_ne!(p, f.proof, "{name}: the tamper changed nothing");
            assert!(!satisfied(WrapCircuit::new(&f.shrink, &p)), "{name}: the wrap accepted a tampered proof");
        }
    }

    // Each lie of a prover leaves the wrap circuit unsatisfied. Every case synthesizes the whole
    // 2.1M-constraint circuit, so the cases are spread over four tests, which the test harness
    // runs on parallel threads.

    #[test]
    fn tampered_fri_queries_and_merkle_paths_leave_the_wrap_unsatisfied() {
        assert_tampers_rejected(vec![
            ("FRI query value (initial tree leaf)", Box::new(|p: &mut ShrinkProof| {
                let e = &mut p.proof.opening_proof.query_round_proofs[3].initial_trees_proof.evals_proofs[1].0[7];
                *e += GL::ONE;
            })),
            ("Merkle path sibling (initial tree)", Box::new(|p: &mut ShrinkProof| {
                let s = &mut p.proof.opening_proof.query_round_proofs[0].initial_trees_proof.evals_proofs[2].1.siblings[1];
                *s = PoseidonBn254HashOut(s.0 + Fr::one());
            })),
            ("Merkle path sibling (FRI commit phase)", Box::new(|p: &mut ShrinkProof| {
                let s = &mut p.proof.opening_proof.query_round_proofs[5].steps[0].merkle_proof.siblings[0];
                *s = PoseidonBn254HashOut(s.0 + Fr::one());
            })),
            ("FRI folded value (commit phase)", Box::new(|p: &mut ShrinkProof| {
                p.proof.opening_proof.query_round_proofs[2].steps[0].evals[3] += GLExt::ONE;
            })),
        ]);
    }

    #[test]
    fn tampered_openings_and_final_polynomial_leave_the_wrap_unsatisfied() {
        assert_tampers_rejected(vec![
            ("opening of a wire at zeta", Box::new(|p: &mut ShrinkProof| p.proof.openings.wires[5] += GLExt::ONE)),
            ("opening of Z at g·zeta", Box::new(|p: &mut ShrinkProof| p.proof.openings.plonk_zs_next[0] += GLExt::ONE)),
            ("quotient chunk at zeta", Box::new(|p: &mut ShrinkProof| p.proof.openings.quotient_polys[1] += GLExt::ONE)),
            ("final polynomial coefficient", Box::new(|p: &mut ShrinkProof| p.proof.opening_proof.final_poly.coeffs[0] += GLExt::ONE)),
            ("proof-of-work witness", Box::new(|p: &mut ShrinkProof| p.proof.opening_proof.pow_witness += GL::ONE)),
        ]);
    }

    #[test]
    fn tampered_public_inputs_and_relabelled_proofs_leave_the_wrap_unsatisfied() {
        assert_tampers_rejected(vec![
            ("public input: count", Box::new(|p: &mut ShrinkProof| p.public_inputs[10] += GL::ONE)),
            ("public input: circuit id", Box::new(|p: &mut ShrinkProof| p.public_inputs[12] += GL::ONE)),
        ]);
        // A proof of job A with job B's C in its own public inputs (consistent instance).
        let f = fixture();
        let mut p = f.proof.clone();
        for (k, limb) in f.other_c.0.iter().enumerate() {
            p.public_inputs[k] = GL::from_canonical_u64(*limb);
        }
        let claim = WrapPublic::from_shrink_inputs(&p.public_inputs).expect("public");
        assert!(!satisfied(WrapCircuit::new(&f.shrink, &p).claiming(claim)), "a proof re-labelled with another job's C");
    }

    /// The proof says one thing, the instance another.
    #[test]
    fn false_claims_about_an_honest_proof_leave_the_wrap_unsatisfied() {
        let f = fixture();
        let honest = WrapPublic::from_shrink_inputs(&f.proof.public_inputs).expect("public");
        let mut claims: Vec<(&str, WrapPublic)> = Vec::new();
        claims.push(("another job's C", WrapPublic { c: f.other_c, ..honest }));
        let mut d = honest.d;
        d.0[3] ^= 1;
        claims.push(("another d", WrapPublic { d, ..honest }));
        claims.push(("a larger sum", WrapPublic { sum: honest.sum + 1, ..honest }));
        claims.push(("sum shifted between the limbs", WrapPublic { sum: honest.sum + (1 << 32), ..honest }));
        claims.push(("a smaller count", WrapPublic { count: honest.count - 1, ..honest }));
        let mut id = honest.circuit_id;
        id.0[0] ^= 1;
        claims.push(("another circuit id", WrapPublic { circuit_id: id, ..honest }));
        for (name, claim) in claims {
            assert!(!satisfied(WrapCircuit::new(&f.shrink, &f.proof).claiming(claim)), "{name}: the wrap accepted a false claim");
        }
    }

    #[test]
    fn every_tested_tree_shape_normalizes_to_the_shared_shape() {
        let f = fixture();
        for (l, q) in [(1, 1), (3, 3), (3, 0)] {
            let circuits = reckle::Circuits::build(reckle::Params::new(l, q).expect("params")).expect("circuits");
            let n = NormalizeCircuit::build(circuits.root_key()).expect("normalize");
            f.shrink.accepts(&n).unwrap_or_else(|e| panic!("({l}, {q}): {e}"));
            assert_ne!(n.circuit_id(), f.normalize.circuit_id(), "({l}, {q}) has its own circuit id");
        }
    }

    /// The Pari setup from the fixed seed reproduces the pinned digest. Several minutes and
    /// about 10 GB, so only on request: `cargo test --release -p plonky2-r1cs -- --ignored`.
    #[test]
    #[ignore]
    fn setup_from_the_fixed_seed_reproduces_the_pinned_digest() {
        let f = fixture();
        // Laid out with the fixture's (2, 1) proof: the keys do not depend on which proof.
        let keys = WrapKeys::setup_with_sample(&f.shrink, &f.proof, &mut ChaCha20Rng::from_seed(WRAP_KEY_SEED))
            .expect("setup");
        assert_eq!(keys.vk_digest().to_string(), PINNED_WRAP_VK_DIGEST);
    }

    #[test]
    fn final_proof_round_trips_and_checks_the_expected_values() {
        let g = ark_bn254::G1Affine::generator();
        let public = WrapPublic {
            c: Digest([1, 2, 3, GL::ORDER - 1]),
            d: Digest([5, 6, 7, 8]),
            sum: (1u128 << 96) + 9,
            count: 3,
            circuit_id: Digest([10, 11, 12, 13]),
        };
        let fp = FinalProof {
            version: WRAP_VERSION,
            params: reckle::Params::new(2, 1).expect("params"),
            public,
            proof: pari::Proof { t: g, u: (g + g).into(), v_a: Fr::from(4u64), v_b: Fr::from(5u64) },
        };
        let bytes = fp.to_bytes();
        assert_eq!(bytes.len(), 4 + 12 + 15 * 8 + 128);
        assert_eq!(FinalProof::from_bytes(&bytes).expect("parse"), fp);
        assert!(FinalProof::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let mut extra = bytes.clone();
        extra.push(0);
        assert!(FinalProof::from_bytes(&extra).is_err());
        // A non-canonical Goldilocks limb is refused (C_0 = p).
        let mut bad = bytes.clone();
        bad[16..24].copy_from_slice(&GL::ORDER.to_le_bytes());
        assert!(FinalProof::from_bytes(&bad).is_err());

        let expected = Expected { c: public.c, circuit_id: public.circuit_id };
        assert!(check_expected(&expected, &fp).is_ok());
        let other_c = Expected { c: public.d, ..expected };
        assert!(check_expected(&other_c, &fp).is_err());
        let other_id = Expected { circuit_id: public.d, ..expected };
        assert!(check_expected(&other_id, &fp).is_err());
        let old = FinalProof { version: WRAP_VERSION + 1, ..fp.clone() };
        assert!(check_expected(&expected, &old).is_err());
        // The packing: two limbs per digest, the sum as one integer.
        let x = public.to_field_elements();
        assert_eq!(x[0], Fr::from(1u64) + Fr::from(2u64) * Fr::from(BigUint::from(1u8) << 64));
        assert_eq!(x[4], Fr::from(BigUint::from((1u128 << 96) + 9)));
    }
}

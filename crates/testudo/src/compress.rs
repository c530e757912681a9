//! The compression (feature `r1cs`; build step 7 of `docs/design/testudo-compression.md`): one
//! circuit over `F_q`, BLS12's base field, that runs Spartan's verifier gadget and then the
//! Testudo-Comm opening's verifier gadget on the transcript it hands over, proved with Pari on
//! the curve whose scalar field is `F_q` (BW6-767 for BLS12-381), so that a Testudo proof of
//! 14–18 KiB, whose verification reads the matrices and runs pairings, ends as a Pari proof
//! (2 G1 + 2 field elements) and a few `F_r` values.
//!
//! # What the circuit proves
//!
//! For a fixed shape ([`SpartanShape`]: `s_x`, `s_y`, `ℓ`) and a fixed Testudo-Comm verifier
//! key (built in as constants), the circuit ([`CompressionCircuit`]) has the public inputs of
//! [`spartan::PublicValues`] (in the order of [`PublicValues::to_field_elements`]): the R1CS
//! digest's chunk, `io`, `r_x`, `ρ`, `r_y`, `v_M`, each `F_r` value as its canonical integer
//! in `F_q`. Its witnesses are the inner proof: the commitment `T` (a checked `G_T` element),
//! Spartan's messages and the Testudo-Comm opening. It enforces
//!
//! 1. [`spartan::constraints::verify`]: the transcript from the domain tag, the digest, `io`
//!    and `T`'s 12 components ([`TcCommitmentVar::absorbed_elements`] of the very variable the
//!    opening is checked against), both sumchecks, the outer final check, the inner final
//!    check with `v_M` in place of `M(r_x, r_y)`, `ũ(r_y')` from `io`, and the public `r_x`,
//!    `ρ`, `r_y` equal to the challenges it squeezed;
//! 2. [`testudo_comm::constraints::verify`]: `T` opens at `r_y'` (Spartan's point, as
//!    challenge bits) to `v_w` (Spartan's claimed value), continuing the same transcript.
//!
//! So everything the native verifier ([`crate::spartan::verify`]) checks is a constraint,
//! except `v_M = Σ ρ_M·M̃(r_x, r_y)`: the final verifier checks that natively from the
//! registered matrices ([`PublicValues::check_matrices`], `O(nnz)` field operations; the
//! design note's Decision 3, step 1: SPARK, build steps 9–10, is what will remove it).
//!
//! # Native side
//!
//! - [`setup`]: Pari's setup of the circuit for a shape and a Testudo-Comm verifier key; the
//!   Pari proving key and the [`FinalKey`] (to publish and pin). Whoever runs it knows the
//!   Pari trapdoor, as with every setup. One key serves every registered R1CS of that shape
//!   (the digest is a public input), under that Testudo-Comm key.
//! - [`prove`]: refuses a key of another shape or Testudo-Comm key, verifies the inner proof
//!   natively and refuses one the verifier rejects (with the verifier's error, before any
//!   synthesis), then proves the circuit. The [`FinalProof`] is the Pari proof and
//!   `(r_x, ρ, r_y, v_M)`.
//! - [`verify_final`]: given the registered R1CS and `io`, rebuilds the public inputs (the
//!   digest and `io` are the verifier's own, the rest the proof's), checks `v_M` against the
//!   matrices, and checks the Pari proof. [`batch_verify_final`] does the Pari checks of many
//!   final proofs under one key in one batch.
//!
//! **The digest rule** (what a [`FinalKey`] version pins): the Pari public input is
//! [`PublicValues::to_field_elements`] of `(digest(R1CS), io, r_x, ρ, r_y, v_M)`.
//!
//! # Zero knowledge
//!
//! The Pari proof is zero knowledge; the final proof reveals `r_x, ρ, r_y, v_M`, which depend
//! on the witness only through the transcript (the commitment `T` and the prover's messages
//! are witnesses). Whether that leaks anything is an open point of the design note; SPARK
//! makes them witnesses.

use std::collections::BTreeMap;
use std::fmt;

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::bls12::{Bls12, Bls12Config};
use ark_ec::pairing::Pairing;
use ark_ff::PrimeField;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use rand::{CryptoRng, RngCore};

use crate::r1cs::R1cs;
use crate::spartan::constraints::{PublicValuesVar, SpartanProofVar, SpartanShape};
use crate::spartan::{self, PublicValues, SpartanProof};
use crate::testudo_comm::constraints::{Fq, Fr, TcCommitmentVar, TcProofVar};
use crate::testudo_comm::{self, TcCommitment, TcProof, TcVerifierKey, TestudoComm};
use crate::transcript::bytes_per_chunk;
use crate::Error;

/// The inner proof the circuit verifies: Spartan with Testudo-Comm on `Bls12<P>` (the
/// [`ProofFor`](crate::spartan::ProofFor) of [`TestudoComm`], spelled out so that the type needs no bound on `P`).
pub type InnerProof<P> = SpartanProof<Fr<P>, TcCommitment<Bls12<P>>, TcProof<Bls12<P>>>;

/// The R1CS digest's length in bytes (BLAKE2b-256), as the transcript absorbs it.
const R1CS_DIGEST_BYTES: usize = 32;

/// The largest `s_x` or `s_y` a final key may name, and the most `r_x` or `r_y` values a
/// final proof may carry (a shape past it could not be allocated anyway).
pub const MAX_LOG_SIZE: u32 = 40;

/// The number of Pari public inputs for `shape` over `Q`: the digest's chunks, `io`, `r_x`,
/// `ρ`, `r_y`, `v_M`.
pub fn num_public_inputs<Q: PrimeField>(shape: SpartanShape) -> usize {
    R1CS_DIGEST_BYTES.div_ceil(bytes_per_chunk::<Q>())
        + shape.num_io
        + shape.log_rows
        + 3
        + shape.log_cols
        + 1
}

/// Refuses a shape the gadgets cannot be built for with `vk`: no room for `io` and the
/// constant in `ẑ`'s public half, or a witness polynomial of more variables than the key.
fn check_shape<E: Pairing>(shape: SpartanShape, vk: &TcVerifierKey<E>) -> Result<(), Error> {
    if shape.log_cols == 0
        || shape.log_cols > MAX_LOG_SIZE as usize
        || shape.log_rows > MAX_LOG_SIZE as usize
        || (1usize << (shape.log_cols - 1)) < shape.num_io + 1
    {
        return Err(Error::Malformed {
            field: "shape",
            reason: format!(
                "s_x = {}, s_y = {}, ℓ = {} is not the shape of an R1CS",
                shape.log_rows, shape.log_cols, shape.num_io
            ),
        });
    }
    if shape.log_cols - 1 > vk.num_vars {
        return Err(Error::KeyTooSmall {
            supported: vk.num_vars,
            needed: shape.log_cols - 1,
        });
    }
    Ok(())
}

/// A 32-byte BLAKE2b digest (of a Testudo-Comm verifier key, or of a [`FinalKey`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct KeyDigest(pub [u8; 32]);

impl fmt::Display for KeyDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in self.0 {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

/// BLAKE2b-256 of `"testudo/tc-vk/v1"` and the key's compressed encoding: what a
/// [`FinalKey`] names as the Testudo-Comm key built into its circuit.
pub fn tc_vk_digest<E: Pairing>(vk: &TcVerifierKey<E>) -> KeyDigest {
    let mut bytes = Vec::new();
    vk.serialize_compressed(&mut bytes)
        .expect("serializing into a Vec does not fail");
    let mut h = Blake2b::<U32>::new();
    h.update(b"testudo/tc-vk/v1");
    h.update(&bytes);
    KeyDigest(h.finalize().into())
}

/// The compression circuit (module doc) for one shape and one Testudo-Comm verifier key. Build
/// it with [`CompressionCircuit::blank`] for setup and [`CompressionCircuit::new`] to prove.
#[derive(Clone)]
pub struct CompressionCircuit<P: Bls12Config> {
    shape: SpartanShape,
    tc_vk: TcVerifierKey<Bls12<P>>,
    assignment: Option<(PublicValues<Fr<P>>, InnerProof<P>)>,
}

impl<P: Bls12Config> CompressionCircuit<P>
where
    Fq<P>: Absorb,
{
    /// The circuit without an assignment (for setup). Refuses a shape the key cannot serve.
    pub fn blank(tc_vk: &TcVerifierKey<Bls12<P>>, shape: SpartanShape) -> Result<Self, Error> {
        check_shape(shape, tc_vk)?;
        Ok(Self {
            shape,
            tc_vk: tc_vk.clone(),
            assignment: None,
        })
    }

    /// The circuit for an inner proof of `r1cs` with public input `io`, after checking it with
    /// the native verifier: a proof it rejects is refused with its error (a circuit for it
    /// would be unsatisfied, and Pari's prover would fail later and less clearly).
    pub fn new(
        tc_vk: &TcVerifierKey<Bls12<P>>,
        r1cs: &R1cs<Fr<P>>,
        io: &[Fr<P>],
        proof: &InnerProof<P>,
    ) -> Result<Self, Error> {
        let mut c = Self::blank(tc_vk, SpartanShape::of(r1cs))?;
        spartan::verify::<Fr<P>, TestudoComm<Bls12<P>>>(tc_vk, r1cs, io, proof)?;
        let values = PublicValues::for_proof::<TestudoComm<Bls12<P>>>(r1cs, io, proof)?;
        c.assignment = Some((values, proof.clone()));
        Ok(c)
    }

    /// The public values of the assignment (what [`FinalProof`] carries with the digest and
    /// `io`), if any.
    pub fn public_values(&self) -> Option<&PublicValues<Fr<P>>> {
        self.assignment.as_ref().map(|(v, _)| v)
    }

    fn synthesize(self, cs: ConstraintSystemRef<Fq<P>>) -> Result<(), Error> {
        let shape = self.shape;
        let (values, proof) = match &self.assignment {
            Some((v, p)) => (Some(v), Some(p)),
            None => (None, None),
        };
        let public = PublicValuesVar::<Fr<P>, Fq<P>>::new_input(cs.clone(), shape, values)?;
        let commitment =
            TcCommitmentVar::<P>::new_witness(cs.clone(), proof.map(|p| &p.commitment))?;
        let messages = SpartanProofVar::new_witness(cs.clone(), shape, proof)?;
        let opening = TcProofVar::<P>::new_witness(
            cs.clone(),
            shape.log_cols - 1,
            proof.map(|p| &p.opening),
        )?;
        // Spartan absorbs the components of the same `T` variable the opening is checked
        // against: the commitment the challenges depend on is the one that is opened.
        let absorbed = commitment.absorbed_elements()?;
        let mut out = spartan::constraints::verify(cs, shape, &public, &absorbed, &messages)?;
        testudo_comm::constraints::verify::<P>(
            &self.tc_vk,
            &commitment,
            &out.r_y[1..],
            &out.v_w,
            &opening,
            &mut out.transcript,
        )
    }
}

/// The [`SynthesisError`] an [`Error`] from the gadgets stands for. Shapes are checked when
/// the circuit is built, so only synthesis errors reach here; anything else is reported as
/// an unsatisfiable system.
fn synthesis_error(e: Error) -> SynthesisError {
    const KNOWN: [SynthesisError; 7] = [
        SynthesisError::MissingCS,
        SynthesisError::AssignmentMissing,
        SynthesisError::DivisionByZero,
        SynthesisError::Unsatisfiable,
        SynthesisError::PolynomialDegreeTooLarge,
        SynthesisError::PredicateNotFound,
        SynthesisError::ArityMismatch,
    ];
    match e {
        Error::Synthesis(msg) => KNOWN
            .into_iter()
            .find(|k| k.to_string() == msg)
            .unwrap_or(SynthesisError::Unsatisfiable),
        _ => SynthesisError::Unsatisfiable,
    }
}

impl<P: Bls12Config> ConstraintSynthesizer<Fq<P>> for CompressionCircuit<P>
where
    Fq<P>: Absorb,
{
    fn generate_constraints(self, cs: ConstraintSystemRef<Fq<P>>) -> Result<(), SynthesisError> {
        self.synthesize(cs).map_err(synthesis_error)
    }
}

/// What a verifier of final proofs pins: the Pari verifying key of the compression circuit,
/// the shape it was made for and the digest of the Testudo-Comm verifier key built into it,
/// under one [`FinalKey::digest`]. The public-input rule is this version's (module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FinalKey<E2: Pairing> {
    pub pari_vk: pari::VerifyingKey<E2>,
    pub shape: SpartanShape,
    pub tc_vk_digest: KeyDigest,
}

const FINAL_KEY_MAGIC: &[u8; 5] = b"TSFK\x01";
const FINAL_PROOF_MAGIC: &[u8; 5] = b"TSFP\x01";
const FINAL_KEY_DOMAIN: &[u8] = b"testudo/final-key/v1";

fn malformed(field: &'static str, reason: impl Into<String>) -> Error {
    Error::Malformed {
        field,
        reason: reason.into(),
    }
}

fn u32_of(field: &'static str, x: usize) -> Result<u32, Error> {
    u32::try_from(x).map_err(|_| Error::TooLarge { field, value: x })
}

impl<E2: Pairing> FinalKey<E2> {
    /// `"TSFK" ‖ 1 ‖ Testudo-Comm key digest ‖ s_x ‖ s_y ‖ ℓ (u32 LE each) ‖ Pari vk bytes`.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = FINAL_KEY_MAGIC.to_vec();
        out.extend_from_slice(&self.tc_vk_digest.0);
        for (field, x) in [
            ("s_x", self.shape.log_rows),
            ("s_y", self.shape.log_cols),
            ("ℓ", self.shape.num_io),
        ] {
            out.extend_from_slice(&u32_of(field, x)?.to_le_bytes());
        }
        out.extend_from_slice(&self.pari_vk.to_bytes());
        Ok(out)
    }

    /// Parses and validates: every point of the Pari key, a shape within bounds, and a Pari
    /// key taking exactly the public inputs of that shape.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let bad = |r: &str| malformed("final key", r);
        let body = bytes
            .strip_prefix(FINAL_KEY_MAGIC.as_slice())
            .ok_or_else(|| bad("wrong magic or version"))?;
        if body.len() < 44 {
            return Err(bad("truncated"));
        }
        let mut digest = [0u8; 32];
        digest.copy_from_slice(&body[..32]);
        let word = |j: usize| u32::from_le_bytes([body[j], body[j + 1], body[j + 2], body[j + 3]]);
        let (log_rows, log_cols, num_io) = (word(32), word(36), word(40));
        if log_rows > MAX_LOG_SIZE
            || log_cols == 0
            || log_cols > MAX_LOG_SIZE
            || u64::from(num_io) + 1 > 1u64 << (log_cols - 1)
        {
            return Err(bad("shape out of range"));
        }
        let shape = SpartanShape {
            log_rows: log_rows as usize,
            log_cols: log_cols as usize,
            num_io: num_io as usize,
        };
        let pari_vk = pari::VerifyingKey::<E2>::from_bytes(&body[44..])
            .map_err(|e| malformed("final key", e.to_string()))?;
        if pari_vk.num_public_inputs() != num_public_inputs::<E2::ScalarField>(shape) {
            return Err(bad(
                "the Pari key does not take (digest, io, r_x, ρ, r_y, v_M) for this shape",
            ));
        }
        Ok(Self {
            pari_vk,
            shape,
            tc_vk_digest: KeyDigest(digest),
        })
    }

    /// BLAKE2b-256 of `"testudo/final-key/v1"` and [`Self::to_bytes`]: what a verifier pins.
    pub fn digest(&self) -> Result<KeyDigest, Error> {
        let mut h = Blake2b::<U32>::new();
        h.update(FINAL_KEY_DOMAIN);
        h.update(self.to_bytes()?);
        Ok(KeyDigest(h.finalize().into()))
    }

    /// Fails unless the digest is `expected`.
    pub fn check_digest(&self, expected: &KeyDigest) -> Result<(), Error> {
        let got = self.digest()?;
        if got != *expected {
            return Err(Error::KeyMismatch(format!(
                "the final key's digest is {got}, {expected} expected"
            )));
        }
        Ok(())
    }

    /// Fails unless `r1cs` has the key's shape.
    fn check_instance<F: PrimeField>(&self, r1cs: &R1cs<F>) -> Result<(), Error> {
        let shape = SpartanShape::of(r1cs);
        if shape != self.shape {
            return Err(Error::KeyMismatch(format!(
                "the R1CS has shape {shape:?}, the key is for {:?}",
                self.shape
            )));
        }
        Ok(())
    }
}

/// A final proof: the Pari proof of the compression circuit and the public values the final
/// verifier cannot compute itself (`r_x`, `ρ`, `r_y`: the inner transcript's challenges,
/// `v_M`: checked against the matrices). The digest and `io` are the verifier's own.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct FinalProof<F: PrimeField, E2: Pairing> {
    pub pari: pari::Proof<E2>,
    pub r_x: Vec<F>,
    pub rho: [F; 3],
    pub r_y: Vec<F>,
    pub v_m: F,
}

impl<F: PrimeField, E2: Pairing> FinalProof<F, E2> {
    /// `"TSFP" ‖ 1 ‖` compressed encoding.
    pub fn to_bytes(&self) -> Result<Vec<u8>, Error> {
        let mut out = FINAL_PROOF_MAGIC.to_vec();
        self.serialize_with_mode(&mut out, Compress::Yes)
            .map_err(|e| malformed("final proof", e.to_string()))?;
        Ok(out)
    }

    /// Parses with full validation (the Pari proof's points in their subgroup, canonical field
    /// elements, no trailing bytes); `r_x` and `r_y` at most [`MAX_LOG_SIZE`] long.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let mut body = bytes
            .strip_prefix(FINAL_PROOF_MAGIC.as_slice())
            .ok_or_else(|| malformed("final proof", "wrong magic or version"))?;
        let v = Self::deserialize_with_mode(&mut body, Compress::Yes, Validate::Yes)
            .map_err(|e| malformed("final proof", e.to_string()))?;
        if !body.is_empty() {
            return Err(malformed(
                "final proof",
                format!("{} trailing bytes", body.len()),
            ));
        }
        if v.r_x.len() > MAX_LOG_SIZE as usize || v.r_y.len() > MAX_LOG_SIZE as usize {
            return Err(malformed("final proof", "r_x or r_y too long"));
        }
        Ok(v)
    }

    /// The circuit's public values for `r1cs` and `io` with this proof's `r_x, ρ, r_y, v_M`.
    pub fn public_values(&self, r1cs: &R1cs<F>, io: &[F]) -> PublicValues<F> {
        PublicValues {
            digest: r1cs.digest(),
            io: io.to_vec(),
            r_x: self.r_x.clone(),
            rho: self.rho,
            r_y: self.r_y.clone(),
            v_m: self.v_m,
        }
    }
}

fn pari_err(e: pari::Error) -> Error {
    match e {
        pari::Error::Interrupted => Error::Interrupted,
        e => Error::Pari(e.to_string()),
    }
}

/// Pari setup of the compression circuit for `shape` under the Testudo-Comm verifier key
/// `tc_vk`: the Pari proving key and the final key (to publish and pin). Whoever runs it
/// knows the Pari trapdoor.
pub fn setup<P, E2, R>(
    tc_vk: &TcVerifierKey<Bls12<P>>,
    shape: SpartanShape,
    rng: &mut R,
) -> Result<(pari::ProvingKey<E2>, FinalKey<E2>), Error>
where
    P: Bls12Config,
    Fq<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    let circuit = CompressionCircuit::<P>::blank(tc_vk, shape)?;
    let (pk, pari_vk) = pari::setup::<E2, _, _>(circuit, rng).map_err(pari_err)?;
    Ok((
        pk,
        FinalKey {
            pari_vk,
            shape,
            tc_vk_digest: tc_vk_digest(tc_vk),
        },
    ))
}

/// Compresses an inner proof of `r1cs` with public input `io`: refuses a key made for another
/// shape or Testudo-Comm key ([`Error::KeyMismatch`]) and an inner proof the native verifier
/// rejects (its error), then proves the circuit with Pari.
pub fn prove<P, E2, R>(
    pk: &pari::ProvingKey<E2>,
    key: &FinalKey<E2>,
    tc_vk: &TcVerifierKey<Bls12<P>>,
    r1cs: &R1cs<Fr<P>>,
    io: &[Fr<P>],
    proof: &InnerProof<P>,
    rng: &mut R,
) -> Result<FinalProof<Fr<P>, E2>, Error>
where
    P: Bls12Config,
    Fq<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    prove_interruptible(pk, key, tc_vk, r1cs, io, proof, rng, pari::Interrupt::NEVER)
}

/// [`prove`], stopped part-way with [`Error::Interrupted`] when `stop` is
/// raised (read by the Pari prover: after synthesis, between its FFTs, before each MSM window).
#[allow(clippy::too_many_arguments)]
pub fn prove_interruptible<P, E2, R>(
    pk: &pari::ProvingKey<E2>,
    key: &FinalKey<E2>,
    tc_vk: &TcVerifierKey<Bls12<P>>,
    r1cs: &R1cs<Fr<P>>,
    io: &[Fr<P>],
    proof: &InnerProof<P>,
    rng: &mut R,
    stop: pari::Interrupt<'_>,
) -> Result<FinalProof<Fr<P>, E2>, Error>
where
    P: Bls12Config,
    Fq<P>: Absorb,
    E2: Pairing<ScalarField = Fq<P>>,
    R: RngCore + CryptoRng,
{
    if tc_vk_digest(tc_vk) != key.tc_vk_digest {
        return Err(Error::KeyMismatch(
            "the final key was made for another Testudo-Comm key".into(),
        ));
    }
    if pk.vk != key.pari_vk {
        return Err(Error::KeyMismatch(
            "the Pari proving key is not the final key's".into(),
        ));
    }
    key.check_instance(r1cs)?;
    let circuit = CompressionCircuit::<P>::new(tc_vk, r1cs, io, proof)?;
    let values = circuit
        .public_values()
        .cloned()
        .ok_or(SynthesisError::AssignmentMissing)?;
    let pari = pari::prove_interruptible(pk, circuit, rng, stop).map_err(pari_err)?;
    Ok(FinalProof {
        pari,
        r_x: values.r_x,
        rho: values.rho,
        r_y: values.r_y,
        v_m: values.v_m,
    })
}

/// The native half of a final proof's check: `r1cs` has the key's shape, `v_M` is
/// `Σ ρ_M·M̃(r_x, r_y)` for its matrices, the lengths match. Returns the Pari public input: the
/// proof is valid iff `proof.pari` verifies for it under `key.pari_vk` (a caller batching Pari
/// proofs of many sources, as the platform's aggregator does across jobs, checks that part).
pub fn final_statement<F, E2>(
    key: &FinalKey<E2>,
    r1cs: &R1cs<F>,
    io: &[F],
    proof: &FinalProof<F, E2>,
) -> Result<Vec<E2::ScalarField>, Error>
where
    F: PrimeField,
    E2: Pairing,
{
    key.check_instance(r1cs)?;
    let public = proof.public_values(r1cs, io);
    public.check_matrices(r1cs)?;
    Ok(public.to_field_elements::<E2::ScalarField>())
}

fn check_prepared<E2: Pairing>(
    key: &FinalKey<E2>,
    pvk: &pari::PreparedVerifyingKey<E2>,
) -> Result<(), Error> {
    if pvk.key_digest() != key.pari_vk.digest() {
        return Err(Error::KeyMismatch(
            "the prepared Pari key is not the final key's".into(),
        ));
    }
    Ok(())
}

/// Accepts iff `proof` shows that some witness satisfies `r1cs` (the registered instance) with
/// public input `io`: `v_M` checked against the matrices, then the Pari proof for
/// `(digest, io, r_x, ρ, r_y, v_M)` under the key's Pari key (`pvk` is it, prepared). The
/// caller pins `key` by [`FinalKey::check_digest`].
pub fn verify_final<F, E2>(
    key: &FinalKey<E2>,
    pvk: &pari::PreparedVerifyingKey<E2>,
    r1cs: &R1cs<F>,
    io: &[F],
    proof: &FinalProof<F, E2>,
) -> Result<(), Error>
where
    F: PrimeField,
    E2: Pairing,
{
    check_prepared(key, pvk)?;
    let inputs = final_statement(key, r1cs, io, proof)?;
    pari::verify(pvk, &inputs, &proof.pari).map_err(|_| Error::FinalProofRejected)
}

/// One entry of [`batch_verify_final`]: the registered R1CS, `io`, the final proof.
pub type BatchItem<'a, F, E2> = (&'a R1cs<F>, &'a [F], &'a FinalProof<F, E2>);

/// Many final proofs under one key: every native check, then one Pari batch check. Returns
/// the indices of the bad ones (empty when all verify).
pub fn batch_verify_final<F, E2, R>(
    key: &FinalKey<E2>,
    pvk: &pari::PreparedVerifyingKey<E2>,
    items: &[BatchItem<'_, F, E2>],
    rng: &mut R,
) -> Result<Vec<usize>, Error>
where
    F: PrimeField,
    E2: Pairing,
    R: RngCore + CryptoRng,
{
    check_prepared(key, pvk)?;
    let mut bad = BTreeMap::new();
    let mut good = Vec::with_capacity(items.len());
    for (j, (r1cs, io, proof)) in items.iter().enumerate() {
        match final_statement(key, r1cs, io, proof) {
            Ok(inputs) => good.push((j, inputs)),
            Err(_) => {
                bad.insert(j, ());
            }
        }
    }
    if !good.is_empty() {
        let batch: Vec<(&[E2::ScalarField], &pari::Proof<E2>)> = good
            .iter()
            .map(|(j, inputs)| (inputs.as_slice(), &items[*j].2.pari))
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
    use crate::pcs::MultilinearPcs;
    use crate::poly::MultilinearPoly;
    use crate::r1cs::tests::{chain_matrices, squaring_chain};
    use crate::spartan::DOMAIN_TAG;
    use crate::sumcheck::SumcheckProof;
    use crate::testudo_comm::constraints::{self as tc_gadget, TcCommitmentVar, TcProofVar};
    use crate::testudo_comm::{setup_insecure_from_seed, TcCommitterKey};
    use crate::transcript::Transcript;
    use ark_bls12_381::{Bls12_381, Config, Fq, Fr};
    use ark_bw6_767::BW6_767;
    use ark_ff::{Field, One, UniformRand, Zero};
    use ark_r1cs_std::alloc::AllocVar;
    use ark_r1cs_std::eq::EqGadget;
    use ark_r1cs_std::fields::fp::FpVar;
    use ark_r1cs_std::fields::FieldVar;
    use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal, SynthesisMode};
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use std::time::Instant;

    type E = Bls12_381;
    type T = TestudoComm<E>;
    type Inner = InnerProof<Config>;

    fn rng(seed: u64) -> ChaCha20Rng {
        ChaCha20Rng::seed_from_u64(seed)
    }

    struct Instance {
        ck: TcCommitterKey<E>,
        vk: TcVerifierKey<E>,
        r1cs: R1cs<Fr>,
        io: Vec<Fr>,
        w: Vec<Fr>,
        proof: Inner,
    }

    /// A squaring chain of `n` constraints, proved with Testudo-Comm under a key of exactly
    /// the witness polynomial's variables.
    fn instance(n: usize, seed: u64) -> Instance {
        let (r1cs, io, w) = squaring_chain(n, 3);
        let (ck, vk) = setup_insecure_from_seed::<E>(r1cs.witness_vars(), seed).unwrap();
        let proof = crate::spartan::prove::<Fr, T>(&ck, &r1cs, &io, &w).unwrap();
        crate::spartan::verify::<Fr, T>(&vk, &r1cs, &io, &proof).unwrap();
        Instance {
            ck,
            vk,
            r1cs,
            io,
            w,
            proof,
        }
    }

    /// The smallest chain the gadgets take with one MIPP round: 4 constraints, `s_x = 2`,
    /// `s_y = 3`, a 2-variable witness polynomial (`r = c = 1`).
    fn small() -> Instance {
        instance(4, 7)
    }

    /// Another instance of the same shape: the chain with one coefficient of `A` changed.
    fn other_r1cs(n: usize) -> R1cs<Fr> {
        let [mut a, b, c] = chain_matrices(n);
        a[1].2 = Fr::from(2u64);
        R1cs::new(n, 2, n - 1, a, b, c).unwrap()
    }

    fn new_cs(mode: SynthesisMode) -> ConstraintSystemRef<Fq> {
        let cs = ConstraintSystem::<Fq>::new_ref();
        cs.set_optimization_goal(OptimizationGoal::Constraints);
        cs.set_mode(mode);
        cs
    }

    const PROVE: SynthesisMode = SynthesisMode::Prove {
        construct_matrices: true,
        generate_lc_assignments: true,
    };

    /// A Pari circuit on BW6-767 whose public inputs must equal `pinned`: a stand-in for the
    /// compression circuit where only the public-input plumbing is under test (a few rows,
    /// so its setup and proof take milliseconds). Its proof verifies for `pinned` and for
    /// nothing else.
    struct Pinned(Vec<Fq>);

    impl ConstraintSynthesizer<Fq> for Pinned {
        fn generate_constraints(self, cs: ConstraintSystemRef<Fq>) -> Result<(), SynthesisError> {
            for x in self.0 {
                FpVar::new_input(cs.clone(), || Ok(x))?.enforce_equal(&FpVar::Constant(x))?;
            }
            let w = FpVar::new_witness(cs.clone(), || Ok(Fq::one()))?;
            w.square()?.enforce_equal(&w)?;
            Ok(())
        }
    }

    /// A final key of `shape` whose "Pari key" is [`Pinned`]'s for `inputs` (its setup's
    /// randomness from `seed`), its proving key, and a proof of it.
    fn pinned_key_from(
        seed: u64,
        shape: SpartanShape,
        vk: &TcVerifierKey<E>,
        inputs: Vec<Fq>,
    ) -> (
        pari::ProvingKey<BW6_767>,
        FinalKey<BW6_767>,
        pari::Proof<BW6_767>,
    ) {
        let (pk, pari_vk) =
            pari::setup::<BW6_767, _, _>(Pinned(inputs.clone()), &mut rng(seed)).unwrap();
        let proof = pari::prove(&pk, Pinned(inputs), &mut rng(31)).unwrap();
        let key = FinalKey {
            pari_vk,
            shape,
            tc_vk_digest: tc_vk_digest(vk),
        };
        (pk, key, proof)
    }

    fn pinned_key(
        shape: SpartanShape,
        vk: &TcVerifierKey<E>,
        inputs: Vec<Fq>,
    ) -> (
        pari::ProvingKey<BW6_767>,
        FinalKey<BW6_767>,
        pari::Proof<BW6_767>,
    ) {
        pinned_key_from(30, shape, vk, inputs)
    }

    fn final_proof(pari: pari::Proof<BW6_767>, v: &PublicValues<Fr>) -> FinalProof<Fr, BW6_767> {
        FinalProof {
            pari,
            r_x: v.r_x.clone(),
            rho: v.rho,
            r_y: v.r_y.clone(),
            v_m: v.v_m,
        }
    }

    #[test]
    fn an_honest_inner_proof_satisfies_the_circuit_and_setup_builds_the_same_matrices() {
        let h = small();
        let start = Instant::now();
        let circuit = CompressionCircuit::<Config>::new(&h.vk, &h.r1cs, &h.io, &h.proof).unwrap();
        let values = circuit.public_values().unwrap().clone();
        let cs = new_cs(PROVE);
        circuit.generate_constraints(cs.clone()).unwrap();
        assert!(cs.is_satisfied().unwrap());
        let constraints = cs.num_constraints();
        // The circuit's public inputs are what the final verifier rebuilds from the R1CS, io
        // and the final proof's values.
        let (_, key, pari_proof) =
            pinned_key(SpartanShape::of(&h.r1cs), &h.vk, values.to_field_elements());
        let fin = final_proof(pari_proof, &values);
        let inputs = final_statement(&key, &h.r1cs, &h.io, &fin).unwrap();
        assert_eq!(cs.instance_assignment().unwrap()[1..], inputs[..]);
        assert_eq!(inputs.len(), num_public_inputs::<Fq>(key.shape));
        cs.finalize();
        let proving = cs.to_matrices().unwrap();
        // Setup (no values) lays out exactly the same system: Pari's prover evaluates the
        // key's matrices on the proving assignment.
        let cs = new_cs(SynthesisMode::Setup);
        CompressionCircuit::<Config>::blank(&h.vk, key.shape)
            .unwrap()
            .generate_constraints(cs.clone())
            .unwrap();
        cs.finalize();
        assert_eq!(cs.num_instance_variables(), 1 + inputs.len());
        assert_eq!(cs.to_matrices().unwrap(), proving);
        println!(
            "compression circuit, 2^2 constraints (s_x = 2, s_y = 3): {constraints} constraints, {:?}",
            start.elapsed()
        );
    }

    /// The forgery the coupling of the two gadgets stops: a prover with no witness absorbs
    /// some commitment `C`, answers both sumchecks with zero polynomials (every round sums to
    /// its claim, the outer final check reads `v_A = v_B = v_C = 0`, the inner claim is 0),
    /// picks `v_w` with `(1 − r_y[0])·v_w + r_y[0]·ũ(r_y') = 0` once `r_y` is known, and only
    /// then commits to `C'`, the constant polynomial `v_w`, and opens it at `r_y'`. Returns the
    /// proof (commitment `C`) and `C'`.
    fn forge_with_a_late_commitment(h: &Instance) -> (Inner, TcCommitment<E>) {
        let n = h.r1cs.witness_vars();
        let mut r = rng(40);
        let garbage =
            MultilinearPoly::new(n, (0..1 << n).map(|_| Fr::rand(&mut r)).collect()).unwrap();
        let (absorbed, _) = T::commit(&h.ck, &garbage).unwrap();
        let mut t = Transcript::<Fr, Fq>::new(DOMAIN_TAG).unwrap();
        t.absorb_bytes(&h.r1cs.digest().0);
        t.absorb_slice(&h.io);
        T::absorb_commitment(&absorbed, &mut t);
        let _tau = t.challenges(h.r1cs.log_rows());
        let outer = SumcheckProof {
            rounds: vec![vec![Fr::zero(); 4]; h.r1cs.log_rows()],
        };
        for round in &outer.rounds {
            t.absorb_slice(round);
            t.challenge();
        }
        t.absorb_slice(&[Fr::zero(); 3]);
        let _rho = t.challenges(3);
        let inner = SumcheckProof {
            rounds: vec![vec![Fr::zero(); 3]; h.r1cs.log_cols()],
        };
        let mut r_y = Vec::new();
        for round in &inner.rounds {
            t.absorb_slice(round);
            r_y.push(t.challenge());
        }
        let u = MultilinearPoly::new(n, h.r1cs.public_vector(&h.io).unwrap()).unwrap();
        let u_eval = u.evaluate(&r_y[1..]).unwrap();
        let v_w = -r_y[0] * u_eval * (Fr::one() - r_y[0]).inverse().unwrap();
        t.absorb(&v_w);
        let late = MultilinearPoly::new(n, vec![v_w; 1 << n]).unwrap();
        let (opened, hint) = T::commit(&h.ck, &late).unwrap();
        let opening = T::open(&h.ck, &late, &hint, &r_y[1..], &mut t).unwrap();
        let proof = SpartanProof {
            commitment: absorbed,
            outer,
            v_a: Fr::zero(),
            v_b: Fr::zero(),
            v_c: Fr::zero(),
            inner,
            v_w,
            opening,
        };
        (proof, opened)
    }

    #[test]
    fn a_commitment_made_after_the_challenges_does_not_open_in_the_circuit() {
        let h = small();
        let shape = SpartanShape::of(&h.r1cs);
        let (forged, opened) = forge_with_a_late_commitment(&h);
        // Natively: every sumcheck check passes, the opening of the absorbed C does not.
        assert!(matches!(
            crate::spartan::verify::<Fr, T>(&h.vk, &h.r1cs, &h.io, &forged),
            Err(Error::Opening(_))
        ));
        // `prove` refuses it, and so does the circuit built around it.
        assert!(matches!(
            CompressionCircuit::<Config>::new(&h.vk, &h.r1cs, &h.io, &forged),
            Err(Error::Opening(_))
        ));
        let values = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &forged).unwrap();
        let circuit = CompressionCircuit::<Config> {
            shape,
            tc_vk: h.vk.clone(),
            assignment: Some((values.clone(), forged.clone())),
        };
        let cs = new_cs(PROVE);
        circuit.generate_constraints(cs.clone()).unwrap();
        assert!(!cs.is_satisfied().unwrap());

        // The same two gadgets with the opened commitment a witness of its own, not the
        // variable Spartan absorbed: the forgery satisfies them. What stops it above is that
        // the opening is checked against the commitment the challenges were squeezed after.
        let cs = new_cs(PROVE);
        let public =
            PublicValuesVar::<Fr, Fq>::new_input(cs.clone(), shape, Some(&values)).unwrap();
        let absorbed = TcCommitmentVar::<Config>::new_witness(cs.clone(), Some(&forged.commitment))
            .unwrap()
            .absorbed_elements()
            .unwrap();
        let separate = TcCommitmentVar::<Config>::new_witness(cs.clone(), Some(&opened)).unwrap();
        let messages = SpartanProofVar::new_witness(cs.clone(), shape, Some(&forged)).unwrap();
        let opening = TcProofVar::<Config>::new_witness(
            cs.clone(),
            shape.log_cols - 1,
            Some(&forged.opening),
        )
        .unwrap();
        let mut out =
            spartan::constraints::verify(cs.clone(), shape, &public, &absorbed, &messages).unwrap();
        tc_gadget::verify::<Config>(
            &h.vk,
            &separate,
            &out.r_y[1..],
            &out.v_w,
            &opening,
            &mut out.transcript,
        )
        .unwrap();
        assert!(cs.is_satisfied().unwrap());
    }

    #[test]
    fn prove_refuses_what_the_native_verifier_rejects_and_keys_made_for_something_else() {
        let h = small();
        let shape = SpartanShape::of(&h.r1cs);
        let values = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &h.proof).unwrap();
        let (pk, key, _) = pinned_key(shape, &h.vk, values.to_field_elements());
        let prove = |key: &FinalKey<BW6_767>,
                     vk: &TcVerifierKey<E>,
                     r1cs: &R1cs<Fr>,
                     io: &[Fr],
                     proof: &Inner| {
            super::prove::<Config, BW6_767, _>(&pk, key, vk, r1cs, io, proof, &mut rng(32))
        };
        // A tampered inner proof: the native verifier's error, before any synthesis.
        let mut bad = h.proof.clone();
        bad.v_a += Fr::one();
        assert_eq!(
            prove(&key, &h.vk, &h.r1cs, &h.io, &bad).unwrap_err(),
            Error::OuterFinal
        );
        let mut bad = h.proof.clone();
        bad.v_w += Fr::one();
        assert_eq!(
            prove(&key, &h.vk, &h.r1cs, &h.io, &bad).unwrap_err(),
            Error::InnerFinal
        );
        // The honest proof for another io, and for another instance of the same shape.
        let mut io2 = h.io.clone();
        io2[1] += Fr::one();
        assert!(prove(&key, &h.vk, &h.r1cs, &io2, &h.proof).is_err());
        assert!(prove(&key, &h.vk, &other_r1cs(4), &h.io, &h.proof).is_err());
        // An instance of another shape; another Testudo-Comm key; a Pari key that is not the
        // final key's.
        let big = instance(8, 8);
        assert!(matches!(
            prove(&key, &big.vk, &big.r1cs, &big.io, &big.proof),
            Err(Error::KeyMismatch(_))
        ));
        let mut k = key.clone();
        k.tc_vk_digest = tc_vk_digest(&big.vk);
        assert!(matches!(
            prove(&k, &h.vk, &h.r1cs, &h.io, &h.proof),
            Err(Error::KeyMismatch(_))
        ));
        let mut k = key.clone();
        k.pari_vk.tau_h = k.pari_vk.h;
        assert!(matches!(
            prove(&k, &h.vk, &h.r1cs, &h.io, &h.proof),
            Err(Error::KeyMismatch(_))
        ));
        // The honest proof gets past every check and reaches Pari, which refuses a proving
        // key for another circuit.
        assert!(matches!(
            prove(&key, &h.vk, &h.r1cs, &h.io, &h.proof),
            Err(Error::Pari(_))
        ));
        let _ = &h.w;
    }

    /// `verify_final`'s plumbing, with [`Pinned`] in place of the compression circuit (whose
    /// public inputs are the same vector: the first test): the honest values verify; another
    /// `io`, another instance's digest (with a `v_M` its matrices agree with), a challenge
    /// moved (with `v_M` recomputed there) each change the Pari input and are rejected by
    /// Pari; a `v_M` the matrices disagree with is rejected before any pairing.
    #[test]
    fn verify_final_rebuilds_the_public_inputs_and_checks_v_m_against_the_matrices() {
        let h = small();
        let shape = SpartanShape::of(&h.r1cs);
        let values = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &h.proof).unwrap();
        let (_, key, pari_proof) = pinned_key(shape, &h.vk, values.to_field_elements());
        let pvk = key.pari_vk.prepare().unwrap();
        let fin = final_proof(pari_proof, &values);
        let verify = |r1cs: &R1cs<Fr>, io: &[Fr], p: &FinalProof<Fr, BW6_767>| {
            verify_final(&key, &pvk, r1cs, io, p)
        };
        verify(&h.r1cs, &h.io, &fin).unwrap();

        let mut io2 = h.io.clone();
        io2[0] += Fr::one();
        assert_eq!(verify(&h.r1cs, &io2, &fin), Err(Error::FinalProofRejected));

        let other = other_r1cs(4);
        assert_eq!(verify(&other, &h.io, &fin), Err(Error::MatrixEvaluation));
        let mut moved = fin.clone();
        moved.v_m = other.eval_combined(
            &crate::poly::eq_table(&fin.r_x),
            &crate::poly::eq_table(&fin.r_y),
            fin.rho,
        );
        assert_ne!(moved.v_m, fin.v_m);
        assert_eq!(
            verify(&other, &h.io, &moved),
            Err(Error::FinalProofRejected)
        );

        let mut wrong = fin.clone();
        wrong.v_m += Fr::one();
        assert_eq!(verify(&h.r1cs, &h.io, &wrong), Err(Error::MatrixEvaluation));

        let mut moved = fin.clone();
        moved.r_x[0] += Fr::one();
        moved.v_m = h.r1cs.eval_combined(
            &crate::poly::eq_table(&moved.r_x),
            &crate::poly::eq_table(&moved.r_y),
            moved.rho,
        );
        assert_eq!(
            verify(&h.r1cs, &h.io, &moved),
            Err(Error::FinalProofRejected)
        );

        let mut short = fin.clone();
        short.r_y.pop();
        assert!(matches!(
            verify(&h.r1cs, &h.io, &short),
            Err(Error::Length { field: "r_y", .. })
        ));
        assert!(matches!(
            verify(&h.r1cs, &h.io[..1], &fin),
            Err(Error::Length { .. })
        ));
        let big = instance(8, 8);
        assert!(matches!(
            verify(&big.r1cs, &big.io, &fin),
            Err(Error::KeyMismatch(_))
        ));
        // A prepared key that is not the final key's (another setup of the same circuit).
        let (_, other_key, _) = pinned_key_from(34, shape, &h.vk, values.to_field_elements());
        assert!(matches!(
            verify_final(
                &key,
                &other_key.pari_vk.prepare().unwrap(),
                &h.r1cs,
                &h.io,
                &fin
            ),
            Err(Error::KeyMismatch(_))
        ));
        // The batch: the bad ones named.
        let items: Vec<BatchItem<'_, Fr, BW6_767>> = vec![
            (&h.r1cs, &h.io, &fin),
            (&h.r1cs, &io2, &fin),
            (&h.r1cs, &h.io, &wrong),
            (&h.r1cs, &h.io, &fin),
        ];
        assert_eq!(
            batch_verify_final(&key, &pvk, &items, &mut rng(33)).unwrap(),
            vec![1, 2]
        );
    }

    #[test]
    fn final_keys_and_proofs_travel_as_bytes_and_the_digest_pins_every_field() {
        let h = small();
        let shape = SpartanShape::of(&h.r1cs);
        let values = PublicValues::for_proof::<T>(&h.r1cs, &h.io, &h.proof).unwrap();
        let (_, key, pari_proof) = pinned_key(shape, &h.vk, values.to_field_elements());
        let bytes = key.to_bytes().unwrap();
        let back = FinalKey::<BW6_767>::from_bytes(&bytes).unwrap();
        assert_eq!(back, key);
        let pinned = key.digest().unwrap();
        back.check_digest(&pinned).unwrap();
        // Every field moves the digest.
        let mut k = key.clone();
        k.tc_vk_digest.0[0] ^= 1;
        assert!(matches!(
            k.check_digest(&pinned),
            Err(Error::KeyMismatch(_))
        ));
        let mut k = key.clone();
        k.shape.log_rows += 1;
        assert!(k.check_digest(&pinned).is_err());
        let mut k = key.clone();
        k.pari_vk.alpha_g = k.pari_vk.beta_g;
        assert!(k.check_digest(&pinned).is_err());
        // Refused bytes: another magic, truncation, a shape the Pari key does not take, a
        // shape with no room for io.
        let mut b = bytes.clone();
        b[4] = 2;
        assert!(FinalKey::<BW6_767>::from_bytes(&b).is_err());
        assert!(FinalKey::<BW6_767>::from_bytes(&bytes[..40]).is_err());
        assert!(FinalKey::<BW6_767>::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        let mut b = bytes.clone();
        b[5 + 32] += 1; // s_x
        assert!(FinalKey::<BW6_767>::from_bytes(&b).is_err());
        let mut b = bytes.clone();
        b[5 + 40] = 4; // ℓ = 4 does not fit s_y = 3's public half (4 entries with the 1)
        assert!(FinalKey::<BW6_767>::from_bytes(&b).is_err());

        let fin = final_proof(pari_proof, &values);
        let bytes = fin.to_bytes().unwrap();
        assert_eq!(FinalProof::<Fr, BW6_767>::from_bytes(&bytes).unwrap(), fin);
        let mut b = bytes.clone();
        b.push(0);
        assert!(FinalProof::<Fr, BW6_767>::from_bytes(&b).is_err());
        assert!(FinalProof::<Fr, BW6_767>::from_bytes(&bytes[..bytes.len() - 1]).is_err());
        assert!(FinalProof::<Fr, BW6_767>::from_bytes(&bytes[1..]).is_err());
    }

    /// Setup, prove and verify of a real 2^10-constraint instance (`s_x = 10`, `s_y = 11`, a
    /// 10-variable witness polynomial: 5 MIPP rounds, 5 columns) on BW6-767, and every lie a
    /// final proof could tell refused by `verify_final`.
    #[test]
    #[ignore = "about half a million constraints proved with Pari on BW6-767: tens of minutes on 2 cores: run with --ignored --release"]
    fn compress_prove_and_verify_on_bw6_767_at_2_10() {
        let h = instance(1 << 10, 9);
        let shape = SpartanShape::of(&h.r1cs);
        assert_eq!((shape.log_rows, shape.log_cols, shape.num_io), (10, 11, 2));

        let start = Instant::now();
        let cs = new_cs(SynthesisMode::Setup);
        CompressionCircuit::<Config>::blank(&h.vk, shape)
            .unwrap()
            .generate_constraints(cs.clone())
            .unwrap();
        let constraints = cs.num_constraints();
        drop(cs);
        println!(
            "compression circuit at 2^10: {constraints} constraints (synthesised in {:?})",
            start.elapsed()
        );

        let start = Instant::now();
        let (pk, key) = setup::<Config, BW6_767, _>(&h.vk, shape, &mut rng(20)).unwrap();
        let setup_time = start.elapsed();
        let key_bytes = key.to_bytes().unwrap();
        println!(
            "setup: {setup_time:?}; {} SR1CS rows, domain {}; final key {} B, Pari proving key {} MiB in memory",
            pk.sr1cs.num_rows(),
            key.pari_vk.domain_size,
            key_bytes.len(),
            pk.heap_size() >> 20
        );
        // The final key travels as bytes and is pinned by its digest.
        let key = FinalKey::<BW6_767>::from_bytes(&key_bytes).unwrap();
        let pinned = key.digest().unwrap();
        key.check_digest(&pinned).unwrap();
        let pvk = key.pari_vk.prepare().unwrap();

        let start = Instant::now();
        let fin =
            prove::<Config, BW6_767, _>(&pk, &key, &h.vk, &h.r1cs, &h.io, &h.proof, &mut rng(21))
                .unwrap();
        let prove_time = start.elapsed();
        let bytes = fin.to_bytes().unwrap();
        let fin = FinalProof::<Fr, BW6_767>::from_bytes(&bytes).unwrap();
        let start = Instant::now();
        verify_final(&key, &pvk, &h.r1cs, &h.io, &fin).unwrap();
        let verify_time = start.elapsed();
        println!(
            "prove: {prove_time:?}; final proof {} B (Pari proof {} B); verify_final: {verify_time:?}",
            bytes.len(),
            fin.pari.compressed_size()
        );

        // A tampered Pari proof.
        let mut bad = fin.clone();
        bad.pari.v_a += Fq::one();
        assert_eq!(
            verify_final(&key, &pvk, &h.r1cs, &h.io, &bad),
            Err(Error::FinalProofRejected)
        );
        // Another circuit's digest: the proof presented for another instance of the shape,
        // with the v_M its matrices give at the proof's point (so that only Pari can refuse).
        let other = other_r1cs(1 << 10);
        let mut moved = fin.clone();
        moved.v_m = other.eval_combined(
            &crate::poly::eq_table(&fin.r_x),
            &crate::poly::eq_table(&fin.r_y),
            fin.rho,
        );
        assert_eq!(
            verify_final(&key, &pvk, &other, &h.io, &moved),
            Err(Error::FinalProofRejected)
        );
        // Another io.
        let mut io2 = h.io.clone();
        io2[1] += Fr::one();
        assert_eq!(
            verify_final(&key, &pvk, &h.r1cs, &io2, &fin),
            Err(Error::FinalProofRejected)
        );
        // A wrong v_M.
        let mut wrong = fin.clone();
        wrong.v_m += Fr::one();
        assert_eq!(
            verify_final(&key, &pvk, &h.r1cs, &h.io, &wrong),
            Err(Error::MatrixEvaluation)
        );
        // A key for another Testudo-Comm key is not the pinned one.
        let mut other_key = key.clone();
        other_key.tc_vk_digest.0[0] ^= 1;
        assert!(other_key.check_digest(&pinned).is_err());
        // Refusing to compress an inner proof the native verifier rejects.
        let mut t = h.proof.clone();
        t.v_b += Fr::one();
        assert_eq!(
            prove::<Config, BW6_767, _>(&pk, &key, &h.vk, &h.r1cs, &h.io, &t, &mut rng(22))
                .unwrap_err(),
            Error::OuterFinal
        );
        // The batch check names the bad ones.
        let items: Vec<BatchItem<'_, Fr, BW6_767>> = vec![
            (&h.r1cs, &h.io, &fin),
            (&h.r1cs, &h.io, &bad),
            (&h.r1cs, &h.io, &fin),
        ];
        assert_eq!(
            batch_verify_final(&key, &pvk, &items, &mut rng(23)).unwrap(),
            vec![1]
        );
        let _ = &h.w;
    }
}

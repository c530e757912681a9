//! # Pari: a zkSNARK with 160-byte proofs and batch verification
//!
//! Implementation of Pari (Dellepere, Mishra, Shirzad, ePrint 2024/1245, Fig. 6) following the
//! algorithm summary in `papers/pari-notes.md` and the batch-verification blog post, generic over
//! any arkworks [`Pairing`](ark_ec::pairing::Pairing), tested on BLS12-381, BN254 and BW6-767 (the
//! outer curve of the Hekaton wrap, whose scalar field has no large power-of-two subgroup: see
//! [`domain`]).
//!
//! ## Notation
//!
//! * **SR1CS** ("square R1CS"): `(A·z) ∘ (A·z) = B·z` over `m` rows, `z = (1, x, w)`. Any R1CS
//!   circuit is converted by [`r1cs`]: a constraint `⟨a,z⟩·⟨b,z⟩ = ⟨c,z⟩` that is linear (a
//!   constant or empty factor) or a square (`a = λb`) becomes one row; any other becomes two rows
//!   `(a−b)² = s` and `(a+b)² = 4c + s` with one new witness `s`. **Instance outlining**: every
//!   use of an instance variable `z_j` (including the constant 1) is replaced by a witness copy
//!   `x'_j`, and row `m_0 + j` enforces `(z_j − x'_j)² = 0`; so the instance touches only `A`, in
//!   `|x| + 1` known rows, and the verifier's work is `O(|x|)`.
//! * `K` is the evaluation domain of size `n ≥ m` (radix-2, or of smooth order: [`domain`]), `L_j` its Lagrange basis, `v_K = X^n − 1`.
//!   `w_A, w_B` interpolate `A·(0,w)`, `B·(0,w)` on `K`; `x_A` interpolates the instance part of
//!   `A·z` (`B` has none); `z_A = x_A + w_A`, `z_B = w_B`; `q = (z_A² − z_B)/v_K`.
//! * Trapdoor `(τ, α, β, δ)`, generators `G ∈ G1`, `H ∈ G2`. Proving key: `σ_i = [(α·a_i(τ) +
//!   β·b_i(τ))/δ]G` for witness columns `i`, `[τ^k/δ]G`, `[α τ^k]G`, `[β τ^k]G`, `[τ^k]G`;
//!   verifying key `G, αG, βG, H, δH, τH` (the paper's `δ₂ = δ`, `δ₁ = 1`).
//! * **Proof** `π = (T, U, v_a, v_b) ∈ G1² × F²`: `T = −[(α w_A(τ) + β w_B(τ) + q(τ))/δ]G`,
//!   challenge `r = H(vk, x, T)`, `v_a = w_A(r)`, `v_b = w_B(r)`, and `U` opens all three at `r`.
//! * **Check**: `v_q = ((x_A(r) + v_a)² − v_b)/v_K(r)` and
//!   `e(T, δH) · e(U, τH) · e(v_a·αG + v_b·βG + v_q·G − r·U, H) = 1`.
//! * **Zero knowledge** (the reference prototype has none): the prover samples `η_a, η_b, η_b'`
//!   and proves for `w_A + η_a·v_K` and `w_B + (η_b + η_b'·X)·v_K`, which agree with `w_A, w_B` on
//!   `K`; the proving key carries `[α v_K(τ)/δ]G`, `[β v_K(τ)/δ]G`, `[β τ v_K(τ)/δ]G` for the
//!   blinding terms, and the quotient and opening keys go up to degree `n`. Then `v_a` is uniform
//!   (through `η_a`), `T` is uniform (through `η_b + η_b'·τ`), and `v_b` is uniform and independent
//!   of both (through `η_b + η_b'·r`, since `r ≠ τ`), while `U` is fixed by the check: a simulator
//!   with the trapdoor produces the same distribution. See [`prover`].
//! * **Batch verification** ([`verifier::batch_verify`]): with 128-bit `ρ_k` drawn from ChaCha20
//!   keyed by a hash of the caller's RNG output, the key digest and every `(x_k, π_k)`
//!   ([`transcript::batch_weights`], so a predictable caller RNG does not let a forger pick
//!   proofs that cancel),
//!   `T̃ = Σρ_k T_k`, `Ũ = Σρ_k U_k`, `Ṽ = Σρ_k r_k U_k`, `ṽ_{a,b,q} = Σρ_k v_{a,b,q}^k`, and one
//!   check `e(T̃, δH)·e(Ũ, τH)·e(ṽ_a αG + ṽ_b βG + ṽ_q G − Ṽ, H) = 1`; every G2 element is fixed by
//!   the key, which is what makes this possible. A failing batch is bisected to find the bad
//!   proofs; the per-proof work (`r_k`, `x_A(r_k)`, `v_q^k`) is done once and reused by every
//!   sub-check.
//! * **Verifier cost.** [`VerifyingKey::prepare`] computes what depends only on the key once:
//!   the prepared G2 elements and a fixed-base table of `αG, βG, G`
//!   ([`msm::FixedBaseTable`]). A single check is then one 3-pair multi-pairing, one GLV scalar
//!   multiplication `r·U` and a few table additions. The batch check's MSMs (`T̃`, `Ũ` with
//!   128-bit weights, `Ṽ` full width) use [`msm::Pippenger`], with batch-affine buckets on
//!   BLS12-381 and BN254. Parsing a proof with validation (two G1 decompressions; on
//!   BLS12-381 also two subgroup checks) is part of every verifier's cost and is the floor of
//!   the batch cost per proof; `examples/pari_bench.rs` measures bytes → verdict on both sides.
//!
//! ## What a verifier must pin
//!
//! A Pari verifying key carries nothing circuit-specific but `n` and `L`: a key for a trivial
//! circuit of the same size "verifies" any statement, and whoever ran the setup can keep the
//! trapdoor. So a verifier must know which key it expects: every key has a
//! [`VerifyingKey::digest`] (BLAKE2b-512 of its encoding, see [`KeyDigest`]; it also seeds the
//! Fiat–Shamir transcript), and [`VerifyingKey::from_bytes_pinned`] refuses any other key with
//! [`Error::UnexpectedKey`]. [`VerifyingKey::from_bytes`] alone proves only that *some* key of
//! that shape accepts.
//!
//! ## Decoding never panics
//!
//! Keys validate on read (arkworks `Valid::check`, run by validated deserialization and by
//! `from_bytes`): points on the curve and in the subgroup, and the shape — for a proving key the
//! row counts, the outlined rows, no instance column elsewhere in `A` or anywhere in `B`, indices
//! in range, vector lengths, with checked arithmetic ([`ProvingKey::check_shape`]).
//! [`VerifyingKey::prepare`] returns an error for a badly shaped key.
//! [`ProvingKey::from_bytes_with_digest`] loads bytes whose digest was recorded when they were
//! first checked without re-validating every point. [`batch`] reports every bad entry of a
//! batch (unparsable, wrong public-input count, or failing the check, found by bisection).
//!
//! One algorithm per file: [`generator`] (setup), [`prover`], [`verifier`] (single and batch),
//! [`data_structures`] (keys, proof, serialization), [`r1cs`] (front end), [`domain`] (the evaluation domain), [`msm`] (the one
//! place multi-scalar multiplication happens), [`transcript`] (Fiat–Shamir), [`circuits`]
//! (built-in circuit families), [`interrupt`] (stopping a proof part-way), [`profile`] (where a proof's time goes).

pub mod batch;
pub mod bundle;
pub mod circuits;
pub mod data_structures;
pub mod domain;
pub mod generator;
pub mod interrupt;
pub mod msm;
pub mod profile;
pub mod prover;
pub mod r1cs;
pub mod snarkjs;
pub mod transcript;
pub mod verifier;

pub use data_structures::{KeyDigest, PreparedVerifyingKey, Proof, ProvingKey, VerifyingKey};
pub use generator::setup;
pub use interrupt::Interrupt;
pub use profile::Profile;
pub use prover::{prove, prove_interruptible, prove_with_profile};
pub use verifier::{batch_verify, batch_verify_locate, verify};

/// Errors of setup, proving, verification and deserialization.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("circuit synthesis failed: {0}")]
    Synthesis(String),
    #[error("the witness does not satisfy the circuit (first failing constraint row {0})")]
    Unsatisfied(usize),
    #[error("circuit does not match the proving key: {0}")]
    KeyMismatch(String),
    #[error("invalid public input: {0}")]
    PublicInput(String),
    #[error("malformed bytes: {0}")]
    Malformed(String),
    #[error("unexpected key: its digest is {found}, expected {expected}")]
    UnexpectedKey { expected: KeyDigest, found: KeyDigest },
    #[error("verification failed")]
    Verification,
    #[error("the circuit is too large for the field's FFT domain")]
    DomainTooLarge,
    /// The caller's [`Interrupt`] was raised: the proof was stopped part-way and nothing of it
    /// is returned.
    #[error("the proof was interrupted by its caller")]
    Interrupted,
}

impl From<ark_relations::gr1cs::SynthesisError> for Error {
    fn from(e: ark_relations::gr1cs::SynthesisError) -> Self {
        Error::Synthesis(e.to_string())
    }
}

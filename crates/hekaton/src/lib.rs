//! Hekaton (Rosenberg, Mopuri, Hafezi, Miers, Mishra) without the aggregation layer:
//!
//! * [`mirage`]: the commit-carrying Groth16 used as the inner zkSNARK (paper §5.1.1);
//! * [`partition`]: partitioned circuits, portals (shared wires) over a read-only memory, and
//!   the traces `T` and `A` cut by subcircuit (§2.1.2, §2.4, §4.2, Fig. 3);
//! * [`augment`]: the memory-checking augmentation of each subcircuit (§4.3, Fig. 4);
//! * [`merkle`]: the Poseidon Merkle tree over `(x, (t_i, a_i, T_i, A_i)_i)` (§2.4);
//! * [`workflow`]: the distributed prover of §6.2, one function per step, and the verifier;
//! * [`circuits`]: the §8.1 benchmark circuit and a Poseidon Merkle batch-update circuit.
//!
//! # Notation (paper §5.1.1)
//!
//! A circuit is an R1CS whose variables split into three contiguous blocks, turned into a QAP
//! with polynomials `a_j, b_j, c_j` and vanishing polynomial `t` evaluated at a secret point
//! `s`; `p_j(s) = β·a_j(s) + α·b_j(s) + c_j(s)`:
//!
//! * the **instance** `x` (`ℓ` variables, `x_0 = 1` then the public inputs);
//! * the **committed witness** `w_C` (`m` variables): here, the first `num_committed` witness
//!   variables the circuit allocates;
//! * the rest of the witness (`n` variables).
//!
//! The trapdoor is `α, β, γ, δ, η`. The **commitment key** is `([δ]₁, {[p_j(s)/η]₁}_{j ∈ w_C})`:
//! committed variables are divided by `η` where ordinary witness variables are divided by `δ`
//! and instance variables by `γ`.
//!
//! * `D = [V₁(s)/η]₁ + κ_D·[δ]₁`, with `V₁ = Σ_{j ∈ w_C} w_j·p_j`, is the commitment to the
//!   committed witness; `κ_D` is its hiding randomness.
//! * `IC = Σ_{j<ℓ} x_j·[p_j(s)/γ]₁` is the verifier's combination of the public inputs.
//! * A proof is `(A, B, C)` with `A = [α + Σ w_j a_j(s) + κ_A δ]₁`,
//!   `B = [β + Σ w_j b_j(s) + κ_B δ]₂` and
//!   `C = [h(s)t(s)/δ]₁ + [V₂(s)/δ]₁ + κ_B·A + κ_A·[B]₁ − κ_Aκ_B[δ]₁ − κ_D[η]₁`, where
//!   `V₂` sums `w_j p_j` over the uncommitted witness.
//! * The verifier accepts iff `e(A, B) = e(α, β)·e(IC, γ)·e(C, δ)·e(D, η)`.
//!
//! The `−κ_D[η]₁` term in `C` cancels the `κ_D·δ·η` that the hiding term of `D` contributes to
//! `e(D, η)`, which is why the prover needs `[η]₁` in its key although the paper's listing of
//! the proving key leaves it implicit.
//!
//! See [`mirage`] for the API: [`mirage::setup`], [`mirage::commit`], [`mirage::prove`],
//! [`mirage::verify`], [`mirage::batch_verify`] and, for subcircuits that share one setup
//! (paper §6.3), [`mirage::VerifyingKey::fix_trailing_inputs`].

pub mod augment;
pub mod circuits;
pub mod merkle;
pub mod mirage;
pub mod partition;
pub mod workflow;

use ark_relations::gr1cs::SynthesisError;
use ark_serialize::SerializationError;

/// Everything that can go wrong in this crate. Nothing here panics on bad input.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("constraint synthesis failed: {0}")]
    Synthesis(#[from] SynthesisError),
    #[error("unsupported circuit: {0}")]
    UnsupportedCircuit(String),
    #[error("malformed proving key: {0}")]
    MalformedKey(&'static str),
    #[error("{requested} committed variables requested but the circuit has only {available} witness variables")]
    TooManyCommitted { requested: usize, available: usize },
    #[error("committed witness variable {0} appears in no constraint, so a commitment would not bind it")]
    UnconstrainedCommittedVariable(usize),
    #[error("the circuit's shape ({what}: {got}) differs from the proving key's ({expected})")]
    ShapeMismatch {
        what: &'static str,
        expected: usize,
        got: usize,
    },
    #[error("the witness does not satisfy the constraints (first failure: {0})")]
    Unsatisfied(String),
    #[error("{expected} committed values expected, {got} given")]
    CommittedLength { expected: usize, got: usize },
    #[error("the commitment does not open to the circuit's committed witness under the given randomness")]
    CommitmentMismatch,
    #[error("{expected} public inputs expected, {got} given")]
    PublicInputLength { expected: usize, got: usize },
    #[error("the proof does not verify")]
    VerificationFailed,
    #[error("the batch of proofs does not verify")]
    BatchVerificationFailed,
    #[error("serialization: {0}")]
    Serialization(#[from] SerializationError),
    #[error("{0} trailing bytes after the encoded value")]
    TrailingBytes(usize),
}

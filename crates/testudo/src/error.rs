//! The crate's one error type: bad input (shapes that do not match), a prover asked to prove
//! something false, and every way a proof can be rejected, each naming what failed.

use thiserror::Error;

/// Everything that can go wrong in this crate. Verification failures are errors too: a
/// verifier returns `Ok(())` only for a proof it accepts.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// A length does not match what the instance or key says it must be.
    #[error("{field}: expected length {expected}, got {got}")]
    Length {
        field: &'static str,
        expected: usize,
        got: usize,
    },

    /// A sparse matrix entry points outside the matrix.
    #[error("matrix {matrix}, entry {entry}: ({row}, {col}) is outside {rows} × {cols}")]
    EntryOutOfRange {
        matrix: &'static str,
        entry: usize,
        row: usize,
        col: usize,
        rows: usize,
        cols: usize,
    },

    /// An instance too large for this crate (a size whose power of two overflows).
    #[error("{field}: {value} is too large")]
    TooLarge { field: &'static str, value: usize },

    /// The prover was given a witness that does not satisfy the R1CS.
    #[error("the witness does not satisfy the R1CS: constraint {constraint} fails (Az·Bz ≠ Cz)")]
    Unsatisfied { constraint: usize },

    /// A polynomial commitment key is too small for the polynomial.
    #[error("the commitment key supports {supported} variables, the polynomial has {needed}")]
    KeyTooSmall { supported: usize, needed: usize },

    /// A proof does not have the shape the verifier expects (before any algebra).
    #[error("malformed proof: {field}: {reason}")]
    Malformed { field: &'static str, reason: String },

    /// A sumcheck round polynomial does not sum to the running claim: `p_j(0) + p_j(1) ≠ c_{j−1}`.
    #[error("{sumcheck} sumcheck, round {round}: p(0) + p(1) differs from the claim")]
    SumcheckRound {
        sumcheck: &'static str,
        round: usize,
    },

    /// The outer sumcheck's final claim differs from `eq(τ, r_x)·(v_A·v_B − v_C)`.
    #[error("outer sumcheck: the final claim differs from eq(τ, r_x)·(v_A·v_B − v_C)")]
    OuterFinal,

    /// The inner sumcheck's final claim differs from `M̃(r_x, r_y)·z̃(r_y)`.
    #[error("inner sumcheck: the final claim differs from M(r_x, r_y)·z(r_y)")]
    InnerFinal,

    /// The compression circuit's public `v_M` differs from `ρ_A·Ã(r_x, r_y) + ρ_B·B̃(r_x, r_y) +
    /// ρ_C·C̃(r_x, r_y)` for the registered instance (the final verifier's check,
    /// [`crate::spartan::PublicValues::check_matrices`]).
    #[error("v_M differs from ρ_A·Ã(r_x, r_y) + ρ_B·B̃(r_x, r_y) + ρ_C·C̃(r_x, r_y)")]
    MatrixEvaluation,

    /// The polynomial commitment's opening proof is rejected.
    #[error("polynomial commitment opening rejected: {0}")]
    Opening(&'static str),

    /// The Fiat–Shamir transcript cannot carry this pair of fields
    /// ([`crate::transcript::check_fields`]).
    #[error("transcript fields: {0}")]
    TranscriptFields(String),

    /// Constraint synthesis failed (the in-circuit transcript, feature `r1cs`).
    #[error("constraint synthesis: {0}")]
    Synthesis(String),

    /// A compression key is used with what it was not made for: another shape, another
    /// Testudo-Comm key, another Pari key, or a digest other than the pinned one
    /// (`compress`, feature `r1cs`).
    #[error("compression key mismatch: {0}")]
    KeyMismatch(String),

    /// Pari's setup or prover failed on the compression circuit (`compress`).
    #[error("Pari: {0}")]
    Pari(String),

    /// The caller's interrupt was raised: the compression was stopped part-way
    /// (`compress::prove_interruptible`).
    #[error("interrupted: the caller asked the proof to stop")]
    Interrupted,

    /// A final proof's Pari proof does not verify for the public inputs the final verifier
    /// computed (`compress::verify_final`).
    #[error("final proof rejected: the Pari proof does not verify for these public inputs")]
    FinalProofRejected,
}

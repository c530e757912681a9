//! The crate's one error type: input of the wrong shape, a prover asked to prove something
//! false, and every way a proof or a key can be rejected, each naming what failed.

use thiserror::Error;

/// Everything that can go wrong in this crate. Verification failures are errors too: the
/// verifier returns `Ok(())` only for a proof it accepts.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// A length does not match what the circuit or key says it must be.
    #[error("{field}: expected length {expected}, got {got}")]
    Length {
        field: &'static str,
        expected: usize,
        got: usize,
    },

    /// A circuit that is not well formed (σ not a permutation, a wire out of range, …).
    #[error("invalid circuit: {0}")]
    InvalidCircuit(String),

    /// The universal setup is too small for the circuit.
    #[error("the setup supports 2^{supported} gates, the circuit has 2^{needed}")]
    SetupTooSmall { supported: usize, needed: usize },

    /// The witness does not satisfy gate `gate`'s identity (the prover refuses).
    #[error("the witness does not satisfy gate {gate}")]
    GateUnsatisfied { gate: usize },

    /// The witness breaks a copy constraint: the values at `position` and `σ(position)` differ.
    #[error("the witness breaks the copy constraint at wire position {position}")]
    CopyUnsatisfied { position: usize },

    /// The fraction `N/D` is undefined: a denominator `w_j + β·σ_j + γ` is zero (probability
    /// about `3·2^μ / |F|` for an honest prover).
    #[error("a permutation denominator is zero at wire position {position}")]
    ZeroDenominator { position: usize },

    /// A proof or key does not have the shape the verifier expects (before any algebra).
    #[error("malformed {field}: {reason}")]
    Malformed { field: &'static str, reason: String },

    /// A sumcheck round polynomial does not sum to the running claim.
    #[error("{sumcheck}, round {round}: p(0) + p(1) differs from the claim")]
    SumcheckRound {
        sumcheck: &'static str,
        round: usize,
    },

    /// ZeroCheck's final claim differs from `eq(ρ, r)·h(ρ)` computed from the claimed
    /// evaluations (gate identity and the prod-check identity).
    #[error("ZeroCheck: the final claim differs from eq(ρ, r)·h(ρ)")]
    ZeroCheckFinal,

    /// The product tree's root `π(1, …, 1, 0)` is not 1: the wiring is not a permutation
    /// of the values (a copy constraint is broken).
    #[error("PermCheck: the grand product π(1, …, 1, 0) is not 1")]
    ProductNotOne,

    /// OpenCheck's final claim differs from `Σ_t eq(s, z_t)·g_t(s)`.
    #[error("OpenCheck: the final claim differs from Σ_t eq(s, z_t)·g_t(s)")]
    OpenCheckFinal,

    /// The batched multilinear KZG opening is rejected.
    #[error("the batched PST opening is rejected")]
    Opening,

    /// A circom file or witness that cannot be read or used ([`crate::r1cs`]).
    #[error("circom: {0}")]
    Circom(String),

    /// An error from the `testudo` components this crate is built on (PST, the transcript).
    #[error("testudo: {0}")]
    Component(#[from] testudo::Error),
}

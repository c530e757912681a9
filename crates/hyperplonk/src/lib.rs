//! HyperPlonk: Plonk over the boolean hypercube, proved with sumchecks and a multilinear
//! polynomial commitment (Chen, Bünz, Boneh, Zhang, "HyperPlonk: Plonk with Linear-Time
//! Prover and High-Degree Custom Gates", Eurocrypt 2023), the protocol that zkSpeed
//! (`shared/papers/zkspeed.txt`) accelerates. This crate proves **vanilla Plonk gates**
//! (no custom gates, no lookups), is **not zero-knowledge** (neither is zkSpeed's target), and
//! is a pure proof library: no I/O, no global state.
//!
//! # Notation (as used throughout)
//!
//! - `F`: the pairing's scalar field (BLS12-381's `F_r` in the tests); `F_q` its G1 base
//!   field, over which the Fiat–Shamir sponge runs ([`testudo::transcript`]).
//! - `μ`: the number of variables; the circuit has `n = 2^μ` gates, gate `i` being the
//!   hypercube point with big-endian bits `i` (the first variable is the most significant
//!   bit, [`testudo::poly`]). `ℓ`: the number of public inputs, `x` the public input.
//! - `q_L, q_R, q_M, q_O, q_C`: the selectors; `w_1, w_2, w_3`: the witness columns; `p`:
//!   the public-input column (`x`, then zeros). Gate identity:
//!   `q_L w_1 + q_R w_2 + q_M w_1 w_2 − q_O w_3 + q_C − p = 0` ([`circuit`]).
//! - `σ`: the wiring, a permutation of the `3n` wire positions `j·n + i`; `σ_j` and `id_j`
//!   its columns and the identity's. A tilde is dropped: every column is also its MLE.
//! - `eq(x, y) = Π_k (x_k y_k + (1 − x_k)(1 − y_k))`.
//! - PermCheck ([`permcheck`]): challenges `β, γ`; `N_j = w_j + β·id_j + γ`,
//!   `D_j = w_j + β·σ_j + γ`; the fraction MLE `φ = ΠN/ΠD`; the product MLE `π` and the
//!   shifted `p_1, p_2` with `π = p_1·p_2` on the hypercube and root `π(1, …, 1, 0)`.
//! - ZeroCheck ([`zerocheck`]): `α` batches the gate and prod-check identities into `h`;
//!   `r ∈ F^μ` is the random point of `eq(x, r)`; the sumcheck ends at `ρ`,
//!   `ρ' = (ρ_1, …, ρ_{μ−1})`.
//! - OpenCheck ([`opencheck`]): `η` batches the 18 claimed evaluations at 4 points
//!   `z_0 … z_3`; the sumcheck ends at `s`; `λ` combines the 13 MLEs into one PST opening.
//!
//! # The protocol
//!
//! Universal [`mod@setup`] (PST keys for up to `2^μ_max` gates) → per-circuit [`index`]
//! (commitments to the selectors and `σ_j`) → [`mod@prover`] / [`mod@verifier`], the transcript's
//! layout in [`mod@prover`]'s doc. One ZeroCheck of degree 5 (gate and PermCheck identities
//! together), one OpenCheck of degree 2, **one** PST opening. The proof ([`proof`]) is 5 G1
//! commitments, `6μ + 3μ` sumcheck values, `13 + 4 + 1 + 13` evaluations and `μ` G1
//! quotients.
//!
//! # Where this differs from HyperPlonk as published
//!
//! - The gate identity's ZeroCheck and PermCheck's prod-check ZeroCheck are **one** sumcheck
//!   (batched by `α`, degree 5) instead of two; batching adds `2/|F|` to the soundness error
//!   (`h` is a polynomial of degree 2 in `α`).
//! - `φ` and `π` are two `μ`-variable MLEs with two commitments (as zkSpeed describes), not
//!   one `μ + 1`-variable table; `p_1, p_2` are read from them at `(ρ', 0)` and `(ρ', 1)`.
//! - Not zero-knowledge: no masking of the witness or of the sumcheck messages.
//! - The setup is a plain trusted PST setup ([`testudo::pst::setup`]), and the transcript is
//!   `testudo`'s Poseidon sponge over `F_q`, not a hash over bytes.
//!
//! # What the verifier trusts
//!
//! The verifying key (made by [`index::preprocess`] from a circuit it can recompute the
//! digest of), the SRS's secret having been destroyed, and Fiat–Shamir over Poseidon.
//!
//! # Built on `testudo`
//!
//! PST ([`testudo::pst`]), the sumcheck verifier and proof type, dense MLEs and `eq`, and the
//! Poseidon transcript are `testudo`'s. This crate's prover-side kernels (MSM, sumcheck
//! round, MLE update, batched inversion; a sparse-scalar MSM for the witness) are behind one
//! boundary, [`kernels`].
//!
//! # Modules
//!
//! - [`circuit`]: circuits, witnesses, the copy constraints' `σ`, the digest.
//! - [`mod@setup`], [`index`]: the universal SRS and the per-circuit keys.
//! - [`permcheck`], [`zerocheck`], [`opencheck`], [`sumcheck`]: the PIOP's parts.
//! - [`mod@prover`], [`mod@verifier`], [`proof`]; [`files`]: byte formats with magic and version.
//! - [`r1cs`]: circom's `.r1cs` and `.wtns` as a circuit, a witness and a public input.
//! - [`random`]: random satisfiable circuits (tests and benchmarks).

pub mod circuit;
pub mod error;
pub mod files;
pub mod index;
pub mod kernels;
pub mod opencheck;
pub mod permcheck;
pub mod proof;
pub mod prover;
pub mod r1cs;
pub mod random;
pub mod setup;
pub mod sumcheck;
pub mod verifier;
pub mod zerocheck;

#[cfg(test)]
mod tests;

pub use circuit::{Circuit, CircuitDigest, Selectors, Wire, Witness};
pub use error::Error;
pub use index::{preprocess, ProvingKey, VerifyingKey};
pub use proof::Proof;
pub use prover::{prove, prove_timed, prove_timed_with, ProverTimings, WitnessMsm};
pub use r1cs::R1csCircuit;
pub use setup::{setup, setup_insecure_from_seed, Srs};
pub use verifier::verify;

//! # plonky2 → R1CS over BN254: the building blocks of the Reckle wrap
//!
//! A Reckle job ends in a plonky2 proof over the Goldilocks field; the final proof is a Pari
//! proof on BN254. Between the two (issue 29, `ARCHITECTURE.md` "Final proofs"): the root proof
//! is shrunk in plonky2 to one fixed circuit whose last layer hashes with Poseidon over BN254's
//! scalar field, and an R1CS circuit over that field verifies the last proof. This crate holds
//! the pieces that circuit is built from.
//!
//! ## Notation
//!
//! * `p = 2^64 − 2^32 + 1`, the **Goldilocks** prime; `F_p` is plonky2's base field.
//! * `F_{p^2} = F_p[X]/(X² − 7)`, its quadratic extension (plonky2's `D = 2`); an element is
//!   `a_0 + a_1·X`.
//! * `r` is the order of BN254's groups, `Fr = F_r` its scalar field (`r ≈ 2^253.6`); R1CS
//!   constraints and Pari proofs live over `Fr`.
//! * **Poseidon-BN254** ([`poseidon`]): the standard `x^5` Poseidon instances over `Fr`
//!   (width 3 with `R_P = 57`, width 4 with `R_P = 56`, `R_F = 8`; circomlib's constants).

pub mod poseidon;
pub mod poseidon_gadget;
pub mod hasher;
pub mod goldilocks;
pub mod challenger_gadget;

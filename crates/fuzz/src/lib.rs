//! # Fuzzing the decoders that take bytes from outside
//!
//! Every byte string a verifier, worker or service decodes may come from an attacker: a proof
//! file, a key in a cache, a message between coordinator and workers, a job spec in the store.
//! A decoder must answer such bytes with an error, never a panic. This crate holds one
//! **target** per decoder ([`engine::Target`]: valid seed encodings made in-process by the real
//! provers, and a function that decodes and, where cheap, verifies) and a small mutation engine
//! ([`engine::run`]) that feeds each target its seeds and damaged copies of them under
//! `catch_unwind`, counting inputs, acceptances and panics.
//!
//! * `cargo run --release -p fuzz --bin fuzz -- --seconds 600` runs every target for a time
//!   budget and prints a table (the benchmark: inputs run, accepted, panics).
//! * `cargo test -p fuzz` runs every target for a fixed number of inputs and fails on any panic
//!   (the short form the test command runs).
//!
//! The engine is not coverage-guided; the seeds are structurally valid encodings, so most
//! mutations reach deep into each decoder (past magic bytes and length fields), and a decoded
//! value is handed to the verifier so that a decoder letting an inconsistent value through is
//! caught where it would do harm.

pub mod circom_targets;
pub mod engine;
pub mod hekaton_targets;
pub mod pari_targets;
pub mod platform_targets;
pub mod reckle_targets;

use engine::Target;

/// Every target, in report order. Building the seeds proves a few small statements (a few
/// seconds in a release build).
pub fn all_targets() -> Vec<Target> {
    let mut t = reckle_targets::targets();
    t.extend(pari_targets::targets());
    t.extend(hekaton_targets::targets());
    t.extend(platform_targets::targets());
    t.extend(circom_targets::targets());
    t
}

//! Commit-carrying aggregation of Mirage proofs (paper §2.3, §5), built bottom-up, one
//! protocol a file. **Work in progress**: what is here is the inner-pairing-product layer
//! that the paper's aggregation (Agg.C, Agg.P, Agg.V of Fig. 6) runs on; the Mirage layer on
//! top of it (MPP of Fig. 5 and the multi-circuit right-hand side) is not written yet, and
//! [`crate::workflow`] still verifies the `k` proofs themselves.
//!
//! * [`srs`]: the structured reference string, powers of two secrets `a, b` in both groups,
//!   sized to the largest number of proofs `n` (a power of two);
//! * [`afgho`]: the structure-preserving pairing commitments `CM1`, `CM2`, `CMD` of
//!   [AFGHO16] as the paper uses them (§5.1, after [GMN22]), commitment keys cut from the SRS;
//! * [`tipp`]: TIPP (§5.1, [BMMTV21]): for committed `A ∈ G1^m`, `B ∈ G2^m` and a scalar
//!   `r`, that `Z = Π e(r^i·A_i, B_i)`; GIPA with `log m` rounds and KZG openings of the two
//!   folded commitment keys, so the verifier does `O(log m)` work;
//! * [`transcript`]: the Fiat–Shamir transcript of the aggregation (BLAKE2b-512; nothing here
//!   is recomputed in a circuit).
//!
//! What is left (issue 30 item 1): MPP (one TIPP for the five pairing products of the
//! batched Mirage check, `(A, B)`, `(α_s, β_s)`, `(S, γ)`, `(C, δ)`, `(D, η)`, combined with
//! challenges `s, t` and the 20 cross products, Fig. 5); Agg.P/Agg.V (commitments to the
//! per-subcircuit `α, β, γ, δ, η` and the public-input bases `S_1..S_4` computed at setup
//! and kept in the verifying key, the challenge `r` from the commitments to `A, B, C, D`,
//! homogenised public input `(1, rt, α, β)`, Fig. 6); the API `aggregate` /
//! `verify_aggregate`; the platform wiring; the size/time bench.

pub mod afgho;
pub mod srs;
pub mod tipp;
pub mod transcript;

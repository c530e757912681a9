//! Commit-carrying aggregation of Mirage proofs (paper §2.3, §5), built bottom-up, one
//! protocol a file:
//!
//! * [`srs`]: the structured reference string, powers of two secrets `a, b` in both groups,
//!   sized to the largest number of proofs `n` (a power of two; `k` is padded up to one), and
//!   the verifier's `O(1)` part of it;
//! * [`afgho`]: the structure-preserving pairing commitments `CM1`, `CM2`, `CMD` of
//!   \[AFGHO16\] as the paper uses them (§5.1, after \[GMN22\]), commitment keys cut from the SRS;
//! * [`tipp`]: TIPP (§5.1, \[BMMTV21\]): for committed `A ∈ G1^m`, `B ∈ G2^m` and a scalar
//!   `r`, that `Z = Π e(r^i·A_i, B_i)`; GIPA with `log m` rounds and KZG openings of the two
//!   folded commitment keys, so the verifier does `O(log m)` work;
//! * [`mpp`]: MPP (§5.2, Fig. 5): several such products at once, combined with challenges
//!   `s, t` and the cross products, with one TIPP;
//! * [`scheme`]: Agg.G, Agg.C, Agg.P, Agg.V (§5.3, Fig. 6), re-exported here as [`setup`],
//!   [`commit`], [`prove`], [`verify`];
//! * [`transcript`]: the Fiat–Shamir transcript of the aggregation (BLAKE2b-512; nothing here
//!   is recomputed in a circuit).
//!
//! [`crate::aggregated`] runs Hekaton's workflow with this layer in place of the `k` proofs.
//!
//! # What is proven
//!
//! For `k` Mirage verifying keys fixed at setup (subcircuit `i`'s own key, with everything
//! particular to subcircuit `i` folded in, paper §6.3), a public input `x = (x_1, …, x_u)`
//! (in Hekaton `(rt, α, β)`) and an aggregate commitment `cm_D = CM1(D_0, …, D_{k−1})`: the
//! prover knows Mirage proofs `π_i = (A_i, B_i, C_i)` such that `Mirage.Verify(vk_i, x, D_i,
//! π_i)` accepts for every `i`, with `D` the vector `cm_D` opens to. In order: the `i`-th
//! proof is checked under the `i`-th key, so no proof can be moved, dropped, duplicated or
//! taken from another statement, and a verifier holding another circuit's aggregate key
//! checks against that circuit's keys. Under the SRS's assumptions (binding of `CM1, CM2,
//! CMD` and soundness of TIPP's KZG openings in the algebraic group model with a trusted
//! SRS, \[GMN22\]) and Fiat–Shamir with BLAKE2b as a random oracle.
//!
//! # Size and cost
//!
//! A proof is `cm_AB, cm_C` (2 `G_T` each), five products, 20 cross products, `6·log₂ m`
//! `G_T` of GIPA rounds, 5 `G1` and 5 `G2` points (the folded vectors and keys, the KZG
//! openings), `m = k` rounded up to a power of two: `29 + 6·log₂ m` elements of `G_T`, which
//! arkworks encodes in 576 bytes each on BLS12-381 (27,812 bytes for `k = 8`, 52,004 for
//! `k = 1024`; the aggregated Hekaton proof adds `cm_D`, 1,152 bytes). Verification:
//! `O(log m)` `G_T` exponentiations (as multi-exponentiations), 3 pairings and two
//! multi-pairings of 3 and 6. Proving: `O(k)` pairings (the commitments to `A, B, C, D`, the
//! products of the vectors that are not per-key constants, GIPA). The paper's smaller proof
//! (32 kB at `k = 2^18`) has one `e(α, β)` for all subcircuits, hence 12 cross products and
//! no `cm_α, cm_β`. `examples/aggregate_bench.rs` measures all of this against verifying the
//! `k` proofs.

//! # Zero knowledge
//!
//! Aggregation does not hide, and need not (paper §5: Agg.C takes no randomness): an
//! aggregate proof is a deterministic function of the `k` Mirage proofs and commitments, the
//! keys and `x`. Those proofs and commitments are perfectly zero knowledge and perfectly
//! hiding (see the crate documentation), so a simulator that simulates them from the
//! statement and then runs Agg.C and Agg.P simulates the aggregate: the aggregate reveals
//! nothing that the `k` proofs would not, which is nothing about the witness.

pub mod afgho;
pub mod mpp;
pub mod scheme;
pub mod srs;
pub mod tipp;
pub mod transcript;

pub use scheme::{
    commit, prove, setup, verify, AggCommitment, AggregateProof, ProvingKey as AggProvingKey,
    VerifyingKey as AggVerifyingKey,
};

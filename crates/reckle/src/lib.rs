//! # Reckle trees: updatable batch proofs for Merkle-committed vectors
//!
//! Implementation of *Reckle Trees: Updatable Merkle Batch Proofs with Applications*
//! (Papamanthou, Srinivasan, Gailly, Hishon-Rezaizadeh, Salumets, Golemac; CCS 2024), from the
//! paper alone, on plonky2 recursion with Poseidon over the Goldilocks field.
//!
//! ## Notation (paper's words, used throughout the crate)
//!
//! * `n = 2^ℓ` leaves `a_0 … a_{n−1}`; `ℓ` is [`Params::log_n`]. A leaf stores
//!   *index ‖ value*; its Merkle hash is `C_leaf = H(TAG ‖ index ‖ lo ‖ hi)` where the value is
//!   a `u64` split into two 32-bit limbs `lo`, `hi` (see [`hash::leaf_hash`]).
//! * `C_v` is the Merkle hash of node `v`, `C = C_root` the commitment.
//!   `H` is plonky2's Poseidon (`hash_no_pad`) on 4-element digests; internal nodes hash
//!   `C_v = H(C_L ‖ C_R)`.
//! * `I` is the batch (a set of indices). `d(v, I)`, written `d_v`, is the **canonical hash**
//!   of §3.1: for a leaf, `C_leaf` if its index is in `I`, else `0`; for an internal node
//!   `H(d_L ‖ d_R)` if `d_L · d_R ≠ 0`, otherwise `d_L + d_R`. The canonical digest of the
//!   batch is `d = d_root`. "0" is the all-zero digest.
//! * Levels are heights above the leaves: leaves are level 0, the root is level `ℓ`.
//! * **Digest translation** (§5): `K_v` is node `v`'s hash in a Merkle tree built with
//!   Ethereum's Keccak-256, `K_v = Keccak-256(K_L ‖ K_R)` over the two 32-byte children; the
//!   application proves that a Keccak root `C_K` and a Poseidon root `C_P` are over the same
//!   leaves. The Keccak gadget and its node circuit are in [`keccak`] (the translation circuits
//!   themselves are not built yet).
//! * **Bucketing** (§3.7): one monolithic circuit, `B_0` here, covers a bucket of `2^q` leaves
//!   (`q` = [`Params::log_bucket`]) and proves the bucket root's `(C_v, d_v)` without
//!   recursion. Buckets are the nodes of level `q`.
//! * **Per-level circuits** (Fig. 4): for every level `i` in `q+1 ..= ℓ` a circuit `B_i` proves a
//!   node `v` of that level from its children `(C_L, d_L, π_L)`, `(C_R, d_R, π_R)`: it checks
//!   `C_v = H(C_L ‖ C_R)`, the canonical-hash rule for `d_v`, and verifies `π_L` (resp. `π_R`)
//!   against the level-`(i−1)` key, which is a *constant* of `B_i`, whenever `d_L ≠ 0`
//!   (resp. `d_R ≠ 0`). A child with `d = 0` contributes only its Merkle hash: in its place
//!   the prover supplies a fixed proof of a padding circuit with the same shape, verified against
//!   that circuit's (also constant) key, so every `B_i` has one fixed shape.
//! * **Reckle+ map/reduce** (Fig. 6): every node also carries `out_v`, the result of
//!   `Reduce` over `Map(leaf)` for the batch leaves below `v`. Here `Map(leaf) =
//!   (lo, hi, 1)` and `Reduce` is addition, so the root's `out = (Σ lo, Σ hi, |I|)` gives the
//!   exact 96-bit **sum** `Σ hi·2^32 + Σ lo` of the batch values and their **count**. A child
//!   with `d = 0` contributes `out = 0` (the circuit multiplies by the `d ≠ 0` flag; Fig. 6 as
//!   printed leaves `out_L` unconstrained in that case, which would let a prover add anything).
//!   Limb sums cannot wrap the field for `ℓ ≤ 30` (`2^32 · 2^30 < p`).
//! * **`T'_I`** are the nodes on the paths from the batch leaves to the root; only those get
//!   proofs. **`Λ_I`**, the batch structure (Fig. 1 and §3.4), keeps for each node of `T'_I` at
//!   level `≥ q` its public values and proof, plus the Merkle hash of every sibling; see
//!   [`BatchProof`]. Updates (§3.4) re-prove only the bucket and the `ℓ − q` ancestors of each
//!   changed leaf.
//!
//! ## Position binding (not in the paper's circuits)
//!
//! Def. 2.4 lets the adversary pick `C`, so it may build a tree in which the subtree at
//! bucket position `P′` holds leaves hashed with the indices of bucket `P`. Fig. 4 never
//! compares a leaf's index with its position: `B_0` hashes `index ‖ value` and `B_i` only
//! recurses on `(C, d)`, so the proof for `{(k, v)}` through position `P′` and the proof for
//! `{(k, v′)}` through position `P` (holding the honest leaf) both verify under the same `C`,
//! with `v ≠ v′`. The gap is in the paper as printed, not only in an implementation; version 1
//! of these circuits had it too (`tests/position_binding.rs` is that attack).
//!
//! Here every node proof also exports its **index** `idx_v` at its level as a public input:
//! `B_0` exports its bucket index (from which it derives its leaves' indices
//! `idx · 2^q + j`), and `B_i` asserts `nz_L · (idx_L − 2·idx) = 0` and
//! `nz_R · (idx_R − 2·idx − 1) = 0` for the `idx_L`, `idx_R` of the child proofs it verifies
//! (`nz` = "`d ≠ 0`", so padding children are exempt); the verifier requires `idx = 0` at the
//! root. By induction from the root, every proven node's `idx` is its real position, so every
//! batch leaf's hashed index is its real position and `C` opens each index to one value only.
//! Since the chain of constraints fixes the bucket index, `B_0` range-checks it to
//! `MAX_LOG_N − q` bits independent of `ℓ`; the circuits of one `q` then form a single chain
//! `B_0, B_{q+1}, B_{q+2}, …` and the root key of `(ℓ, q)` is that chain's level-`ℓ` key.
//!
//! ## Public statement and what a verifier trusts
//!
//! Each node proof has the public inputs `C_v (4) ‖ d_v (4) ‖ Σlo ‖ Σhi ‖ count ‖ idx_v` (12
//! Goldilocks elements). A batch proof is the root node's proof; the verifier recomputes `d`
//! and `out` from `(index, value)` of the batch ([`Statement`]) and checks the root proof
//! against the level-`ℓ` key.
//!
//! * **Which `C`.** [`Statement::verify_for`] takes the commitment the verifier expects;
//!   [`Statement::verify`] uses the statement's own `C`, which only shows that *some* tree
//!   with that root holds the leaves (anyone can commit to anything).
//! * **Which key.** The verifier derives the root key itself by building the circuits from
//!   `(ℓ, q)` ([`Circuits::build`]), or loads a stored key with [`RootKey::from_bytes`], which
//!   accepts only bytes that hash to the digest pinned in this crate for that `(ℓ, q)`
//!   ([`pinned_root_key`], the generated table `src/pinned.rs`, rebuilt with
//!   `cargo run --release -p reckle --example pin_digests` and checked by a test). The pin is
//!   a hash of the whole serialized key, because plonky2's circuit digest does not cover the
//!   common circuit data (gates, FRI parameters). Every supported `(ℓ, q)` is pinned.
//! * **What it costs.** Parameters are capped at what the platform accepts (`ℓ ≤`
//!   [`MAX_LOG_N`] `= 27`, `q ≤` [`MAX_LOG_BUCKET`] `= 12`), and [`Statement::precheck`] checks
//!   the statement's claims, the expected `C`, the pinned circuit digest and the proof's header
//!   and size before any circuit is built or key is loaded.
//!
//! ## What is where
//!
//! * [`hash`]: native hashing (leaf, node, canonical rule) — what verifiers run.
//! * [`tree`]: the full Merkle tree over `n` leaves ([`Tree`]), native.
//! * [`circuits`]: `B_0` (bucket) and `B_i` (levels), built once per [`Params`] ([`Circuits`]).
//! * [`node`]: proving one node as a pure function ([`prove_bucket`], [`prove_node`]) and
//!   [`NodeProof`] with its stable serialization.
//! * [`batch`]: `Λ_I` — aggregate, verify, update; the planning helper [`plan_batch`].
//! * [`keccak`]: Keccak-f\[1600\], Keccak-256 and the Keccak node hash as plonky2 gadgets
//!   (a custom gate on bits), and [`keccak::KeccakNodeCircuit`].
//!
//! The crate does no I/O and keeps no global state: every step takes serializable inputs and
//! returns serializable outputs, so a worker anywhere can run any node.

pub mod batch;
pub mod circuits;
mod codec;
pub mod hash;
pub mod keccak;
pub mod node;
mod pinned;
pub mod stored;
pub mod tree;

pub use batch::{
    decode_values, encode_values, files, hashes_needed, plan_batch, plan_update, selected_in_bucket, BatchLeaf, BatchProof, Change, LambdaStream, NodeHashes, Statement, UpdatePlan,
    UpdateReport,
};
pub use circuits::{pinned_root_key, Circuits, PinnedKey, RootKey};
pub use hash::Digest;
pub use node::{prove_bucket, prove_node, prove_node_unchecked, Child, NodeId, NodeProof, PublicValues};
pub use tree::Tree;

use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::plonk::config::PoseidonGoldilocksConfig;

/// The base field (Goldilocks, `p = 2^64 − 2^32 + 1`).
pub type F = GoldilocksField;
/// The plonky2 configuration: Poseidon for Merkle caps and Fiat–Shamir.
pub type C = PoseidonGoldilocksConfig;
/// Extension degree used by plonky2's FRI.
pub const D: usize = 2;

/// Version of the circuit definitions; bump it whenever a circuit changes, so that stored
/// root keys of the old circuits are not mistaken for the new ones.
/// Version 2: every node proof exports its position `idx` (position binding). Version 3: the
/// bucket index is range-checked to `27 − q` bits ([`MAX_LOG_N`] raised from 24 to 27).
pub const CIRCUIT_VERSION: u32 = 3;

/// Largest supported tree height `ℓ`: the platform's cap (2^27 leaves, the Reckle paper's
/// `n`). Limb sums could go to `ℓ = 30` without wrapping the field; the cap bounds what a
/// verifier may be asked to build. Raised from 24 with circuit version 3 (the bucket index's
/// range check is `MAX_LOG_N − q` bits, so the circuits and every root key changed).
pub const MAX_LOG_N: u32 = 27;

/// Largest supported bucket height `q` (a bucket circuit of `2^12` leaves).
pub const MAX_LOG_BUCKET: u32 = 12;

/// Shape of a Reckle tree: `n = 2^log_n` leaves, buckets of `2^log_bucket` leaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Params {
    /// `ℓ`: the tree has `2^ℓ` leaves.
    pub log_n: u32,
    /// `q`: a bucket (the base circuit `B_0`) covers `2^q` leaves; `q ≤ ℓ`.
    pub log_bucket: u32,
}

impl Params {
    /// Checks the ranges and returns the parameters.
    pub fn new(log_n: u32, log_bucket: u32) -> Result<Self, Error> {
        if log_n == 0 || log_n > MAX_LOG_N {
            return Err(Error::InvalidParams(format!(
                "log_n must be in 1..={MAX_LOG_N}, got {log_n}"
            )));
        }
        if log_bucket > log_n {
            return Err(Error::InvalidParams(format!(
                "log_bucket must be at most log_n ({log_n}), got {log_bucket}"
            )));
        }
        if log_bucket > MAX_LOG_BUCKET {
            return Err(Error::InvalidParams(format!(
                "log_bucket must be at most {MAX_LOG_BUCKET} (a bucket circuit of 2^q leaves), got {log_bucket}"
            )));
        }
        Ok(Self { log_n, log_bucket })
    }

    /// Number of leaves `n`.
    pub fn num_leaves(&self) -> u64 {
        1u64 << self.log_n
    }

    /// Leaves per bucket, `2^q`.
    pub fn bucket_size(&self) -> u64 {
        1u64 << self.log_bucket
    }

    /// Number of buckets, `2^(ℓ−q)`.
    pub fn num_buckets(&self) -> u64 {
        1u64 << (self.log_n - self.log_bucket)
    }

    /// Number of nodes at `level` (`2^(ℓ − level)`).
    pub fn nodes_at(&self, level: u32) -> u64 {
        1u64 << (self.log_n - level)
    }

    pub(crate) fn check(&self) -> Result<(), Error> {
        Self::new(self.log_n, self.log_bucket).map(|_| ())
    }
}

/// Everything that can go wrong, with the offending field named.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("invalid parameters: {0}")]
    InvalidParams(String),
    #[error("invalid input: {0}")]
    InvalidInput(String),
    #[error("malformed bytes: {0}")]
    Malformed(String),
    #[error("verification failed: {0}")]
    Verification(String),
    #[error("proving failed: {0}")]
    Proving(String),
}

impl Error {
    pub(crate) fn input(msg: impl Into<String>) -> Self {
        Error::InvalidInput(msg.into())
    }
}

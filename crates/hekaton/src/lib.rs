//! Hekaton (Rosenberg, Mopuri, Hafezi, Miers, Mishra): a circuit cut into `k` subcircuits,
//! each proved with a commit-carrying zkSNARK, the proofs tied together by memory checking
//! and aggregated.
//!
//! * [`mirage`]: the commit-carrying Groth16 used as the inner zkSNARK (paper §5.1.1);
//! * [`partition`]: partitioned circuits, portals (shared wires) over a read-only memory, and
//!   the traces `T` and `A` cut by subcircuit (§2.1.2, §2.4, §4.2, Fig. 3);
//! * [`augment`]: the memory-checking augmentation of each subcircuit (§4.3, Fig. 4);
//! * [`merkle`]: the Poseidon Merkle tree over `(x, (a_i, v_i, T_i, A_i, σ_i)_i)`, salted leaves (§2.4);
//! * [`workflow`]: the distributed prover of §6.2, one function per step, and the verifier;
//!   its [`workflow::HekatonProof`] carries the `k` commitments and proofs (linear in `k`);
//! * [`aggregate`]: the aggregation scheme for Mirage (§5: TIPP, MPP of Fig. 5, Agg of
//!   Fig. 6) and [`aggregated`], the same workflow whose proof carries one aggregate of
//!   `O(log k)` group elements in place of the `k` proofs, verified with `O(log k)` work and
//!   a constant number of pairings;
//! * [`circuits`]: the §8.1 benchmark circuit and a Poseidon Merkle batch-update circuit;
//! * [`spec`]: those circuits described by parameters, rebuilt wherever they are needed;
//! * [`transcript`]: the Fiat–Shamir transcript (Poseidon over the base field `F_q`);
//! * [`wrap`]: the depth-1 wrap, one circuit over `F_q` that verifies a whole (unaggregated)
//!   Hekaton proof, proved with Pari on BW6-767 (whose scalar field is BLS12-381's `F_q`): a
//!   final proof of 2 BW6-767 G1 + 2 field elements, whatever `k` (paper §1, "depth-1
//!   recursive composition"). Its G1 and G2 allocations are the `bls12-gadgets` crate's,
//!   shared with testudo's compression circuit.
//!
//! # The outer curve of the wrap (issue 35)
//!
//! A wrap of `k` Mirage proofs is ~18.6k constraints per subcircuit plus ~13k per key shape
//! (`examples/wrap_profile.rs` breaks it down), about 2 SR1CS rows per constraint: past
//! `k = 3` it needs Pari domains above 214,038 points, the largest product of the small
//! primes of `q − 1` for BLS12-381's `F_q` (BW6-767's scalar field, two-adicity 1). Two routes
//! were measured on the same k = 16 wrap (`examples/wrap_chains.rs`, `pari/examples/domain_bench.rs`,
//! 2-core machine shared with other builds; ratios from one run):
//!
//! | | BLS12-381 → BW6-767 (Rader) | BLS12-377 → BW6-761 (radix-2) |
//! |---|---|---|
//! | wrap R1CS constraints, k = 16 | 298,029 | 304,127 |
//! | SR1CS rows | 544,837 | 556,217 |
//! | Pari domain `n` | 671,682 = 10177·66 (1.23× rows) | 1,048,576 = 2²⁰ (1.89× rows) |
//! | coset FFT per point (same run) | 92 µs at 671,682 (33× radix-2) | 2.75 µs at 2²⁰ |
//! | G1 MSM per point (NOTES.md, 2¹⁶, one thread) | 8.93 s / 65,536 | 9.15 s / 65,536 |
//!
//! **Choice: keep BLS12-381 and wrap on BW6-767 with Rader domains** ([`pari::domain`]).
//! A Pari proof is MSMs over `≈ 4n + |w|` G1 points (the same cost per point on both BW6
//! curves) and 6 transforms of size `n`: `n` is 1.56× smaller on BW6-767 at k = 16 because
//! its smooth orders are dense (10177-multiples a few percent to 1.5× apart from 214k to
//! 4.2M) where powers of two double, so the key is smaller and the MSMs shorter, while the
//! Rader stage makes each transform ~33× dearer per point than radix-2. The proving key
//! scales with `n` too (`wrap_chains` prints both keys' sizes and both prove times). The move to
//! BLS12-377 has costs of its own that the table does not show: `x ↦ x^5` is not a
//! permutation of BLS12-377's `F_r` (5 divides `r − 1`), so every Poseidon instance of
//! Hekaton (leaves, tree, transcript inside each subcircuit) would need a new S-box (`x^11`
//! at the least, more constraints per round in every subcircuit) and new parameters, every
//! Mirage, aggregation and wrap key would be remade, and the platform's Hekaton kind (typed
//! on `Bls12_381`/`BW6_767` throughout) would change with them. Above 4.2M rows (k ≳ 120
//! linear) BW6-767 has only coarser 10177-multiples up to 2.18·10⁹; the aggregate's wrap
//! (`O(log k)`, not built yet) is meant to stay below that.
//!
//! Keys: the wrap circuit changed with [`bls12_gadgets::alloc_g1`], so final keys are version 2
//! (`HKFK\x02`, digest tag `hekaton/final-key/v3`); a version-1 key is refused on read.
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
//! For aggregation (§5) the subcircuits are indexed `i = 0..k`, and a bold letter is the
//! vector over them: `A = (A_i)`, `D = (D_i)`, `γ = ([γ_i]₂)`, `S_j = ([p_{i,j}(s)/γ_i]₁)_i`
//! the `j`-th public-input base of every subcircuit's key (after folding in what is fixed at
//! setup, §6.3), so that with the homogenised public input `(1, rt, α, β)` subcircuit `i`'s
//! `IC` is `S_i = S_{0,i} + rt·S_{1,i} + α·S_{2,i} + β·S_{3,i}` (here `α, β` are the
//! permutation-check challenge, not the trapdoor). `X' = (r^i·X_i)_i` for a challenge `r`,
//! and `X' ∗ Y = Π_i e(X'_i, Y_i)`. `CM1, CM2, CMD` commit to vectors in `G1`, `G2` and
//! pairs ([`aggregate::afgho`]).
//!
//! The `−κ_D[η]₁` term in `C` cancels the `κ_D·δ·η` that the hiding term of `D` contributes to
//! `e(D, η)`, which is why the prover needs `[η]₁` in its key although the paper's listing of
//! the proving key leaves it implicit.
//!
//! # What the verifier trusts
//!
//! [`workflow::setup`] samples the trapdoor of every Mirage key: whoever runs it can prove
//! anything under the keys it outputs. So a verifier trusts exactly one thing, **the party
//! that ran the setup**, and it must hold that party's verifying key by a channel the prover
//! does not control: pinned by its [`workflow::VerifyingKey::digest`] (BLAKE2b-256 of the
//! key's canonical bytes, printed as hex) or read from a file the setup party published. A
//! key that came with the proof proves nothing about the proof. The aggregation SRS
//! ([`aggregate::srs::Srs::setup`]) and the aggregate keys ([`aggregated::setup`]) are part
//! of the same trusted setup: whoever knows the SRS secrets `a, b` can open the commitments
//! to other vectors, and the aggregate verifying key is pinned the same way, by
//! [`aggregate::AggVerifyingKey::digest`] (it names the verifying key it belongs to by its
//! digest, and [`aggregated::verify`] checks that).
//!
//! Given the right key, [`workflow::verify`] checks every subcircuit: it first runs
//! [`workflow::VerifyingKey::check`] (at least one subcircuit, one in-range key per
//! subcircuit and no unused key, input counts that match each subcircuit's accesses, first
//! and last subcircuits on keys of their own), so a malformed key is an error, never a
//! vacuous success; an empty Mirage batch is an error too. The key also records, per shape,
//! the digest of the augmented subcircuit's constraint matrices
//! ([`mirage::constraint_digest`]): setup refuses to let subcircuits that declare one shape
//! share a key unless their constraints are identical ([`Error::SharedShapeMismatch`]), and
//! [`workflow::check_circuit`] lets a prover, or anyone holding the circuit, confirm that a
//! key was made for it.
//!
//! Every type that travels between machines implements [`Check`], its structural invariants;
//! [`mirage::from_bytes`] runs the curve and subgroup checks and then [`Check`], so no value
//! decoded from outside makes a function of this crate panic (functions that take such values
//! in memory re-check what they index: a malformed value is an [`Error`]).
//!
//! # Zero knowledge: what a proof hides, from whom, under which assumptions
//!
//! **What is public.** The statement: the verifying key (so the layout: `k`, every
//! subcircuit's shape and the addresses of its portal accesses) and the public input `x`.
//!
//! **What is hidden.** Everything else the prover knows: every subcircuit's own wires, the
//! values of the shared wires (the traces `T` and `A`), the running products and the other
//! leaf contents. A [`workflow::HekatonProof`] (`D_i`, `π_i`, `rt`, the path of leaf 0) and a
//! [`wrap::FinalProof`] (a Pari proof, the same `rt` and path) can be simulated from the
//! statement alone, so whoever holds a proof (the verifier or any third party) learns
//! nothing more about the witness than that it exists.
//!
//! **From whom it is not hidden.** The prover's own parties: the coordinator holds the whole
//! witness and every salt; worker `i` holds its share (its slices of `T` and `A` and the salt
//! of leaf `i + 1`) and its prove message (leaf `i`, salt included, and the Merkle paths), so
//! it can read leaves `i` and `i + 1` in the published tree. Nor from whoever knows the
//! randomness the prover drew (`κ_A, κ_B, κ_D`, the salts; on the platform, the job's secret).
//!
//! **Under which assumptions.**
//! * Mirage keys made honestly by [`workflow::setup`]: then `D_i = [V₁(s)/η]₁ + κ_D·[δ]₁`
//!   with uniform `κ_D` is a uniformly random group element (perfectly hiding), and
//!   `(A_i, B_i, C_i)` with uniform `κ_A, κ_B` is distributed as a simulated proof given `D_i`
//!   and the public input (Groth16's perfect zero knowledge, which Mirage inherits). The
//!   challenge `(α, β)` is a hash of `D_i`, so it is simulatable too.
//! * Poseidon modelled as a random oracle, and salts uniform in `F` and secret: every leaf
//!   `i ≥ 1` ends in its own salt `σ_i` ([`augment`], "Salted leaves"), so `H(leaf_i)` is
//!   uniform and independent of the leaf's contents except with probability `q/|F|` for a
//!   verifier making `q` hash queries. The root and the path of leaf 0 are then a tree over
//!   `H(x)`, `k` independent uniform values and the zero padding: the hiding Merkle tree of
//!   the paper's zero-knowledge proof (App. C.3). Unsalted leaves (before key and spec
//!   digest v2/v3) let anyone test guesses of shared-wire values against `H(leaf 1)` and
//!   `rt`; `tests/zk.rs` runs that attack and checks that it now fails.
//! * For a final proof, Pari's zero knowledge on BW6-767 (see the `pari` crate): the wrap's
//!   witness (every `D_i`, `A_i`, `B_i`, `C_i`) stays inside the Pari proof.
//!
//! * For an [`aggregated::AggregatedProof`] (`cm_D`, the aggregate, `rt`, the path of leaf
//!   0): the aggregate is not randomised (§5), but it is a deterministic function of the
//!   `D_i`, `π_i`, the keys and `(rt, α, β)`, all of which are simulatable as above, so it is
//!   simulatable too: it reveals nothing the `k` proofs would not. `(α, β)` there is a
//!   BLAKE2b hash of `cm_D`, itself a function of the uniformly random `D_i`.
//!
//! The guarantee is zero knowledge for one proof; nothing links two proofs of the same
//! witness (fresh `κ`s and salts give fresh `D_i`, `π_i`, leaf hashes and roots).
//!
//! See [`mirage`] for the API: [`mirage::setup`], [`mirage::commit`], [`mirage::prove`],
//! [`mirage::verify`], [`mirage::batch_verify`] and, for subcircuits that share one setup
//! (paper §6.3), [`mirage::VerifyingKey::fix_trailing_inputs`].

pub mod aggregate;
pub mod aggregated;
pub mod augment;
pub mod circuits;
pub mod merkle;
pub mod mirage;
pub mod partition;
pub mod spec;
pub mod transcript;
pub mod workflow;
pub mod wrap;

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
    #[error("malformed {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
    #[error("subcircuits {first} and {other} declare the same shape {shape:?} but have different constraints, so they cannot share a key")]
    SharedShapeMismatch {
        shape: String,
        first: usize,
        other: usize,
    },
    #[error("the key was made for another circuit: {0}")]
    CircuitMismatch(String),
    #[error("an empty batch proves nothing")]
    EmptyBatch,
    #[error("the verifying key's digest is {got}, not the expected {expected}")]
    DigestMismatch { expected: String, got: String },
    #[error("a verifying key digest is 64 hex digits, got {0:?}")]
    BadDigest(String),
    /// The caller raised the [`pari::Interrupt`] it gave ([`wrap::prove_interruptible`]): the
    /// proof was stopped part-way.
    #[error("the proof was interrupted by its caller")]
    Interrupted,
}

impl Error {
    pub(crate) fn malformed(what: &'static str, reason: impl Into<String>) -> Self {
        Error::Malformed {
            what,
            reason: reason.into(),
        }
    }
}

/// The structural invariants of a value that may come from outside (a file, a message): the
/// lengths and indices its methods rely on. [`mirage::from_bytes`] calls it on every value it
/// decodes, so a decoded value never makes a function of this crate panic; values built in
/// memory by hand should be checked the same way before use.
pub trait Check {
    fn check(&self) -> Result<(), Error>;
}

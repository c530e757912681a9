//! Testudo's inner proof system: Spartan over R1CS with a multilinear polynomial commitment.
//!
//! Testudo (Campanelli, Gailly, Gennaro, Jovanovic, Mihali, Thaler; `shared/papers/testudo.txt`)
//! proves R1CS satisfiability with Spartan, a sumcheck-based argument (no FFTs), whose one
//! polynomial opening uses Testudo-Comm, a multilinear commitment with a universal √N-size
//! setup, and then compresses the Spartan verifier into a constant-size SNARK. This crate
//! holds the inner part and (feature `r1cs`) the compression into a Pari proof on the outer
//! curve (`compress`). It is a pure proof library: no I/O, no global state.
//!
//! # Notation (the paper's, §2.5, as used throughout)
//!
//! - `F_r`: the field the R1CS, the sumchecks and the polynomials live in (the pairing's scalar
//!   field; generic code calls it `F`). `F_q`: the base field of the pairing's G1, where point
//!   coordinates live (G2's are in `F_{q²}`, `G_T` is in `F_{q¹²}`; generic code calls it
//!   `Q`). For BLS12-381, `r < 2^255 < q < 2^381`, and `F_q` is BW6-767's scalar field: the
//!   Fiat–Shamir transcript runs over `F_q` ([`transcript`]) so that a circuit over `F_q` can
//!   replay it natively.
//! - An R1CS instance: matrices `A, B, C` with `m` rows, public input `io` of length `ℓ`,
//!   witness `w`, and `z = (io, 1, w)` (the caller's column layout). Satisfied iff
//!   `(A·z) ∘ (B·z) = C·z`.
//! - `s_x = ⌈log₂ m⌉` (rows padded with zero constraints) and `s_y = 1 + log₂ h`, where
//!   `h` is the least power of two `≥ |w|` and `≥ ℓ + 1`.
//! - Spartan's vector is `ẑ = (w, 0…0 | io, 1, 0…0)` (two halves of length `h`), so
//!   `z̃(r_y) = (1 − r_y[0])·w̃(r_y[1..]) + r_y[0]·ũ(r_y[1..])` with `u = (io, 1, 0…0)`:
//!   the prover commits to `w̃` only and the verifier evaluates `ũ` itself from `io`, which is
//!   what binds the public input ([`r1cs`] re-indexes the matrices to this layout).
//! - `Ã, B̃, C̃`: the matrices' multilinear extensions in `s_x + s_y` variables; `eq(a, b) =
//!   Π_k (a_k b_k + (1 − a_k)(1 − b_k))`; multilinear tables are stored with the first
//!   variable as the most significant index bit ([`poly`]).
//! - `τ ∈ F^{s_x}`: the outer sumcheck's random point; `r_x ∈ F^{s_x}`: where the outer
//!   sumcheck ends; `r_y ∈ F^{s_y}`: where the inner sumcheck ends.
//! - `ρ = (ρ_A, ρ_B, ρ_C)`: the challenges combining the three matrices for the inner
//!   sumcheck; `M(r_x, r_y) = Σ_M ρ_M·M̃(r_x, r_y)` (`M ∈ {A, B, C}`); `r_y' = r_y[1..]`, the
//!   point `w̃` is opened at, `v_w = w̃(r_y')`; `v_A, v_B, v_C = (Ãz̃)(r_x), …`.
//! - `v_M`: a claimed value of `M(r_x, r_y)`. The in-circuit verifier uses it in place of
//!   reading the matrices and exposes it as a public value; the final verifier checks it
//!   against the registered matrices ([`spartan::PublicValues`]).
//!
//! In the circuits (feature `r1cs`, over `F_q`, `F_r` emulated):
//!
//! - the **canonical integer** of an `F_r` value is its representative in `[0, r)`, read as
//!   an `F_q` element; it is what the transcript absorbs and what a public input carries
//!   (`transcript::constraints::ScalarVar` holds a value with it);
//! - a sumcheck of degree `d` carries **scaled claims** `d!·c_j` instead of `c_j` (its round
//!   polynomials in Newton's form have integer coefficients: `sumcheck::constraints`).
//!
//! The protocol, its transcript layout and what the verifier checks are in [`spartan`].
//!
//! # What the verifier trusts
//!
//! The R1CS instance (it reads the matrices: this is the paper's non-ZK variant in which the
//! verifier evaluates `Ã, B̃, C̃` at `(r_x, r_y)` itself, in time linear in the nonzeros;
//! Spartan's SPARK computation commitments are out of scope), the commitment key (a trusted
//! setup for both [`pst`] and [`testudo_comm`]) and Fiat–Shamir over a Poseidon sponge on
//! `F_q` ([`transcript`]).
//!
//! # Built
//!
//! - [`poly`]: dense multilinear polynomials, `eq` tables.
//! - [`sumcheck`]: prover and verifier for products of multilinear polynomials (degrees 2
//!   and 3 are what Spartan uses).
//! - [`r1cs`]: checked instances, their digest, Spartan's layout.
//! - [`spartan`]: the non-ZK Spartan prover and verifier, generic over the field and the PCS.
//! - [`pcs`]: the [`MultilinearPcs`] trait, with two implementations generic over a pairing:
//!   [`pst`] (PST, multilinear KZG, linear-size setup) and [`testudo_comm`] (Testudo-Comm,
//!   §3–4, Fig. 3–4: `2^{⌊ν/2⌋}` PST-committed rows under a √N-size key, combined by the
//!   generalized MIPP, whose final `ĥ` is checked by a PST opening in G2).
//! - [`transcript`]: Fiat–Shamir over a Poseidon sponge on `F_q` (points as coordinates,
//!   `F_r` values as integers, 254-bit challenges).
//! - [`files`]: the byte formats of the Testudo-Comm keys and the inner proof (magic, version,
//!   compressed and checked encodings), shared by the platform and `prover testudo`.
//! - In-circuit verifiers over `F_q` (feature `r1cs`, on by default; the compression's build
//!   steps 2–4 in `docs/design/testudo-compression.md`): the transcript
//!   (`transcript::constraints`), the sumcheck verifier (`sumcheck::constraints`) and
//!   Spartan's verifier up to the opening, with `v_M` and the challenges as public values
//!   (`spartan::constraints`) and the Testudo-Comm opening's verifier for BLS12 curves (MIPP
//!   folds, the pairing checks, both PST openings, every group element checked in its
//!   subgroup: `testudo_comm::constraints`, build step 6), its G1, G2 and `G_T` allocations
//!   and the MIPP's two-exponent `G_T` step those of the `bls12-gadgets` crate, shared with
//!   `hekaton::wrap` (build step 5).
//! - `compress` (feature `r1cs`, build step 7): both gadgets in one circuit over `F_q`, the
//!   opening checked against the commitment Spartan's transcript absorbed, proved with Pari on
//!   the outer curve (BW6-767 for BLS12-381): `setup`, `prove` (refuses an inner proof the
//!   native verifier rejects), `verify_final` (checks `v_M` against the registered matrices,
//!   then the Pari proof), a `FinalKey` pinned by its digest.
//!
//! # Not built yet
//!
//! - Zero knowledge of the whole: the final proof reveals `r_x, ρ, r_y, v_M` (see
//!   `compress`); whether that leaks is not argued yet.
//! - Spartan's SPARK computation commitments (the verifier, and the final verifier after the
//!   compression, read the R1CS instead).
//! - Target-group compression of Testudo-Comm's proof (the paper's Remark 2).
//! - A platform job kind (planner/worker tasks) for Testudo.

#[cfg(feature = "r1cs")]
pub mod compress;
pub mod error;
pub mod files;
pub mod pcs;
pub mod poly;
pub mod pst;
pub mod r1cs;
pub mod spartan;
pub mod sumcheck;
pub mod testudo_comm;
pub mod transcript;

pub use error::Error;
pub use pcs::MultilinearPcs;
pub use poly::MultilinearPoly;
pub use pst::Pst;
pub use r1cs::{R1cs, R1csDigest};
pub use spartan::{prove, verify, ProofFor, SpartanProof};
pub use testudo_comm::TestudoComm;

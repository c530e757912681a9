//! # plonky2 → R1CS over BN254: the building blocks of the Reckle wrap
//!
//! A Reckle job ends in a plonky2 proof over the Goldilocks field; its final proof is a Pari
//! proof on BN254 (issue 29, `ARCHITECTURE.md` "Final proofs"). Between the two, the root proof
//! is shrunk in plonky2 ([`shrink`]) to one fixed circuit whose **last layer hashes with Poseidon
//! over BN254's scalar field**, and an R1CS circuit over that field ([`wrap::WrapCircuit`])
//! verifies the last proof; Pari proves it ([`wrap`]). This crate holds that pipeline and the
//! pieces the R1CS verifier is built from: the hash and its plonky2 configuration, emulated
//! Goldilocks arithmetic, the in-circuit challenger, Merkle proofs, the FRI verifier, the
//! permutation argument with the quotient check at `ζ`, the gate constraints of every gate of a
//! standard recursive verifier circuit, and plonky2's Goldilocks Poseidon for the public-inputs
//! hash.
//!
//! For the platform: build one [`shrink::ShrinkCircuit`] and one [`wrap::WrapKeys`] (Pari setup,
//! once per [`wrap::WRAP_VERSION`]); per `(ℓ, q)` a [`shrink::NormalizeCircuit`] from the Reckle
//! root key; per job [`wrap::prove`] (or [`wrap::shrink_root`] then [`wrap::prove_shrunk`]); a
//! verifier calls [`wrap::verify`] / [`wrap::batch_verify`] with the expected `C` and the
//! normalize circuit's id for the job's `(ℓ, q)`.
//!
//! On a real Reckle job the wrap circuit is satisfied with **2,146,427 constraints**
//! (`cargo run --release -p plonky2-r1cs --example wrap_bench`; the table of components is in
//! [`wrap`]).

//! ## Notation
//!
//! * `p = 2^64 − 2^32 + 1`, the **Goldilocks** prime; `F_p` is plonky2's base field.
//! * `F_{p^2} = F_p[X]/(X² − 7)`, its quadratic extension (plonky2's `D = 2`); an element is
//!   `c_0 + c_1·X`.
//! * `r ≈ 2^253.6` is the order of BN254's groups and `Fr = F_r` its scalar field; R1CS
//!   constraints and Pari proofs live over `Fr`.
//! * **Poseidon-BN254** ([`poseidon`]): the standard `x^5` Poseidon instances over `Fr` with
//!   `R_F = 8` full rounds, width `t = 3` with `R_P = 57` partial rounds and `t = 4` with
//!   `R_P = 56` (circomlib's instances; constants from the paper's Grain LFSR, checked against
//!   the reference test vectors). In R1CS ([`poseidon_gadget`]) a permutation costs
//!   `3·(t·R_F + R_P)` constraints: 243 (`t = 3`), 264 (`t = 4`).
//! * **Packing** ([`hasher::pack`]): up to 3 canonical Goldilocks elements `g_0, g_1, g_2` become
//!   the one `Fr` element `g_0 + g_1·2^64 + g_2·2^128 < 2^192 < r`: injective for a fixed count
//!   (base-`2^64` digits, no reduction mod `r`); 4 would not fit (`2^256 > r`).
//! * **The last layer's hash `H`** ([`hasher::PoseidonBn254Hash`]): a Merkle cap or node is one
//!   `Fr` element; a node is circomlib's `Poseidon(2)` of its children (width 3); a leaf of `n`
//!   Goldilocks elements is a width-4 sponge (rate 3, capacity 1, initial capacity `n·2^64`)
//!   over their packing, 9 Goldilocks elements per permutation. The challenger shows a hash as
//!   five canonical 63-, 63-, 63-, 63- and 2-bit limbs (injective).
//! * **The challenger** ([`hasher::PoseidonBn254Permutation`], [`challenger_gadget`]): plonky2's
//!   duplex challenger over the width-4 permutation; the 9 Goldilocks rate slots are what
//!   plonky2 sees, the capacity (one whole `Fr` element) stays hidden; an output rate element is
//!   shown as its three low 64-bit limbs reduced mod `p`.
//! * **Lazy reduction** ([`goldilocks`]): an emulated `x ∈ F_p` is one `Fr` value `v ≡ x (mod p)`
//!   with a bound `0 ≤ v ≤ B` known at circuit-building time; sums and products are taken on `v`
//!   (one constraint per product) and only grow `B`, so a sum of products is reduced once:
//!   `v = q·p + s` with `q` and `s` range-checked (`s < 2^64`, or `< p` with one constraint
//!   more), valid because every bound stays below `2^252 < r/2`.
//!
//! ## Costs (R1CS constraints over `Fr`; the tests print them with `--nocapture`, and
//! `cargo run --release -p plonky2-r1cs --example costs` prints the table)
//!
//! | operation | constraints |
//! |---|---|
//! | Poseidon-BN254 permutation, `t = 3` / `t = 4` | 243 / 264 |
//! | Merkle node (`Poseidon(2)`, first element constant 0) | 240 |
//! | canonical 254-bit decomposition of an `Fr` value | 318 |
//! | Goldilocks witness (canonical) | 65 |
//! | Goldilocks product, unreduced | 1 |
//! | reduction after one product (`< 2^64` / canonical) | 129 / 130 |
//! | reduction of a sum of 100 products | 136 |
//! | `F_{p^2}` product (Karatsuba), unreduced | 3 |
//! | `F_{p^2}` division (witness quotient) | 269 |
//! | plonky2's Goldilocks Poseidon permutation, emulated | 62,128 |
//! | FRI fold of arity 8 | 4,538 |
//! | query point `g·ω^{rev(i)}` from 15 index bits | 1,036 |
//! | `PoseidonGate` (+ Constant, PublicInput) constraints at `ζ` | 140,141 |
//! | permutation argument + quotient check, 80 routed wires, 2 challenges | 169,041 |
//! | complete verifier, degree 2^8, 2 (toy) queries, 4 simple gates | 430,842 |
//! | complete verifier of a recursive proof, degree 2^12, 28 queries (standard config) | 2,516,125 |
//! | the wrap: complete verifier of the shrink proof (degree 2^12, rate 1/16, 20 queries) with the public-inputs hash and packing | 2,146,427 |
//!
//! ## Modules
//!
//! * [`poseidon`], [`poseidon_gadget`]: Poseidon-BN254, native and in R1CS.
//! * [`hasher`]: the plonky2 `Hasher` / `GenericConfig` of the last shrink layer.
//! * [`goldilocks`]: `F_p`, `F_{p^2}` emulated with lazy reduction.
//! * [`goldilocks_poseidon`]: plonky2's Goldilocks Poseidon emulated (the public-inputs hash).
//! * [`challenger_gadget`]: plonky2's challenger replayed in-circuit; `get_challenges`.
//! * [`merkle_gadget`]: leaf hashing and Merkle proofs to a cap.
//! * [`fri_gadget`]: plonky2's FRI verifier.
//! * [`gates_gadget`]: the gate constraints at `ζ` (selector filters; every gate of a standard
//!   recursive verifier circuit).
//! * [`vanishing_gadget`]: the permutation argument and the quotient identity at `ζ`.
//! * [`shrink`]: the plonky2 layers from a Reckle root proof to the fixed Poseidon-BN254 proof.
//! * [`wrap`]: the R1CS circuit verifying it, the Pari keys, final proofs, verification.

pub mod challenger_gadget;
pub mod fri_gadget;
pub mod gates_gadget;
pub mod goldilocks;
pub mod goldilocks_poseidon;
pub mod hasher;
pub mod merkle_gadget;
pub mod poseidon;
pub mod poseidon_gadget;
pub mod shrink;
pub mod vanishing_gadget;
pub mod wrap;

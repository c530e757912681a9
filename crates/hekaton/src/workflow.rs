//! Hekaton's distributed prover (paper §6.2) as one pure function per step. Every message
//! between the coordinator and the workers is an ark-serialize type (use
//! [`crate::mirage::to_bytes`] / [`crate::mirage::from_bytes`]).
//!
//! | step | who | function | input → output |
//! |---|---|---|---|
//! | 0 | trusted setup | [`setup`] | circuit → [`ProvingKey`], [`VerifyingKey`] |
//! | 1 | coordinator | [`coordinator_traces`] | circuit → [`Traces`], one [`WitnessShare`] per subcircuit |
//! | 2 | worker `i` | [`worker_commit`] | share → `D_i` and its randomness (kept) |
//! | 3 | coordinator | [`coordinator_challenge`] | all `D_i` → [`ChallengeRound`]: `(α, β)`, the Merkle tree, one [`ProveMessage`] per worker |
//! | 4 | worker `i` | [`worker_prove`] | share, randomness, message → Mirage proof `π_i` |
//! | 5 | coordinator | [`coordinator_assemble`] | round, all `D_i`, `π_i` → [`HekatonProof`] |
//! | 6 | verifier | [`verify`] | key, public input, proof → accept/reject |
//!
//! Step 0 is run by the party the verifier trusts (it knows the trapdoor); the verifier pins
//! the verifying key by [`VerifyingKey::digest`] and never takes it from the prover. Steps
//! 1–5 take keys from outside: a prover that did not run the setup checks them with
//! [`check_circuit`].
//!
//! The challenge is a Poseidon transcript ([`crate::transcript`], over the base field so that
//! the depth-1 wrap recomputes it natively) of the verifying key's digest, the public input and
//! every commitment `D_i` (which bind the trace slices), so the traces are fixed before
//! `(α, β)` is known. This proof keeps the `k` commitments and proofs and the verifier
//! batch-verifies them, one randomised multi-pairing per distinct subcircuit shape (linear in
//! `k`; it is the form the depth-1 wrap verifies). [`crate::aggregated`] runs the same steps
//! with the paper's aggregation (Agg.C, Agg.P, §5) and gives a proof of `O(log k)` size and
//! verification.

use std::cell::Cell;
use std::collections::HashMap;

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_ff::PrimeField;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use rand::Rng;

use crate::augment::{
    committed_len, fixed_inputs_for, public_inputs_for, Augmented, Breakdown, Leaf,
};
use crate::merkle::{hash_leaf, poseidon_config, verify_path, MerkleTree};
use crate::mirage::{self, BatchItem, Commitment, CommitmentRandomness, Proof};
use crate::partition::{record, Entry, Layout, Partitioned, Subcircuit, Traces};
use crate::{Check, Error};

/// The verifying key: the layout and one Mirage verifying key per distinct shape.
///
/// A verifier must get this key from whoever ran [`setup`] (and pin it by [`Self::digest`]),
/// never from the prover: whoever made the key knows its trapdoor and can prove anything.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifyingKey<E: Pairing> {
    pub layout: Layout,
    /// Shape (index into `vks`) of each subcircuit.
    pub shape_of: Vec<u32>,
    /// One per distinct `(shape, accesses, first?, last?)`; public input `(rt, α, β, i, addrs…)`.
    pub vks: Vec<mirage::VerifyingKey<E>>,
    /// For each of `vks`, the [`mirage::constraint_digest`] of the augmented subcircuit it was
    /// made for: every subcircuit of that shape has exactly these constraints.
    pub constraint_digests: Vec<[u8; 32]>,
}

/// The proving key: the verifying key and one Mirage proving key per distinct shape.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProvingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub pks: Vec<mirage::ProvingKey<E>>,
}

/// The digest of a verifying key: BLAKE2b-256 of `"hekaton/vk/v2"` (v2: salted leaves) and the key's canonical
/// (compressed) encoding. Printed and parsed as 64 lowercase hex digits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VkDigest(pub [u8; 32]);

impl std::fmt::Display for VkDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::str::FromStr for VkDigest {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || Error::BadDigest(s.chars().take(80).collect());
        let t = s.trim();
        if t.len() != 64 || !t.is_ascii() {
            return Err(bad());
        }
        let mut out = [0u8; 32];
        for (o, pair) in out.iter_mut().zip(t.as_bytes().chunks(2)) {
            let pair = std::str::from_utf8(pair).map_err(|_| bad())?;
            *o = u8::from_str_radix(pair, 16).map_err(|_| bad())?;
        }
        Ok(VkDigest(out))
    }
}

impl<E: Pairing> ProvingKey<E> {
    /// The Mirage proving key of subcircuit `i` (shared with every subcircuit of its shape).
    pub fn subcircuit_key(&self, i: usize) -> Result<&mirage::ProvingKey<E>, Error> {
        self.vk
            .shape_of
            .get(i)
            .and_then(|&s| self.pks.get(s as usize))
            .ok_or(Error::ShapeMismatch {
                what: "subcircuit index",
                expected: self.vk.shape_of.len().min(self.vk.num_subcircuits()),
                got: i,
            })
    }

    /// [`VerifyingKey::check`], and one consistent Mirage proving key per shape: its embedded
    /// verifying key is the shape's, and it commits to `4·s_i` values for every subcircuit
    /// of the shape.
    pub fn check(&self) -> Result<(), Error> {
        self.vk.check()?;
        if self.pks.len() != self.vk.vks.len() {
            return Err(Error::malformed(
                "proving key",
                format!(
                    "{} Mirage proving keys for {} shapes",
                    self.pks.len(),
                    self.vk.vks.len()
                ),
            ));
        }
        for (j, (pk, vk)) in self.pks.iter().zip(&self.vk.vks).enumerate() {
            pk.check()?;
            if pk.vk != *vk {
                return Err(Error::malformed(
                    "proving key",
                    format!("the Mirage key of shape {j} is not the verifying key's"),
                ));
            }
        }
        for (i, sub) in self.vk.layout.subcircuits.iter().enumerate() {
            let pk = &self.pks[self.vk.shape_of[i] as usize];
            if pk.num_committed() != committed_len(sub.addresses.len()) {
                return Err(Error::malformed(
                    "proving key",
                    format!(
                        "subcircuit {i} commits {} values under its key, {} expected",
                        pk.num_committed(),
                        committed_len(sub.addresses.len())
                    ),
                ));
            }
        }
        Ok(())
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }
}

impl<E: Pairing> VerifyingKey<E> {
    pub fn num_subcircuits(&self) -> usize {
        self.layout.num_subcircuits()
    }

    /// Checks that the key is one [`setup`] could have made, so that [`verify`] checks every
    /// subcircuit: at least one subcircuit; every subcircuit has a key (`shape_of` has one
    /// in-range index per subcircuit) and every key serves a subcircuit; each key takes the
    /// public input `(rt, α, β, i, addr_0..addr_{s_i})` of each of its subcircuits, which
    /// share one layout shape; the first and the last subcircuit (which alone enforce the
    /// public-input leaf and the permutation check) have keys of their own; one constraint
    /// digest per key. A key that passes may still be the wrong one: pin it by [`Self::digest`].
    pub fn check(&self) -> Result<(), Error> {
        let bad = |reason: String| Err(Error::malformed("verifying key", reason));
        self.layout.check()?;
        let k = self.num_subcircuits();
        if self.shape_of.len() != k {
            return bad(format!(
                "{} shape indices for {k} subcircuits",
                self.shape_of.len()
            ));
        }
        if self.constraint_digests.len() != self.vks.len() {
            return bad(format!(
                "{} constraint digests for {} keys",
                self.constraint_digests.len(),
                self.vks.len()
            ));
        }
        let mut first_of: Vec<Option<usize>> = vec![None; self.vks.len()];
        for (i, (&shape, sub)) in self
            .shape_of
            .iter()
            .zip(&self.layout.subcircuits)
            .enumerate()
        {
            let Some(svk) = self.vks.get(shape as usize) else {
                return bad(format!(
                    "subcircuit {i} has key {shape}, there are {}",
                    self.vks.len()
                ));
            };
            svk.check()?;
            let inputs = 4 + sub.addresses.len();
            if svk.num_public_inputs() != inputs {
                return bad(format!(
                    "subcircuit {i} has {inputs} public inputs, its key takes {}",
                    svk.num_public_inputs()
                ));
            }
            match first_of[shape as usize] {
                None => first_of[shape as usize] = Some(i),
                Some(f) => {
                    if self.layout.subcircuits[f].shape != sub.shape {
                        return bad(format!(
                            "subcircuits {f} and {i} share a key but not a shape"
                        ));
                    }
                    if i + 1 == k || f == 0 {
                        return bad(format!(
                            "subcircuits {f} and {i} share a key, but the first and the last need their own"
                        ));
                    }
                }
            }
        }
        if let Some(j) = first_of.iter().position(Option::is_none) {
            return bad(format!("key {j} serves no subcircuit"));
        }
        Ok(())
    }

    /// The digest by which a verifier pins this key ([`VkDigest`]).
    pub fn digest(&self) -> Result<VkDigest, Error> {
        let mut h = Blake2b::<U32>::new();
        h.update(b"hekaton/vk/v2");
        h.update(mirage::to_bytes(self)?);
        let mut out = [0u8; 32];
        out.copy_from_slice(&h.finalize());
        Ok(VkDigest(out))
    }

    /// Fails unless this key's digest is `expected`.
    pub fn check_digest(&self, expected: &VkDigest) -> Result<(), Error> {
        let got = self.digest()?;
        if got != *expected {
            return Err(Error::DigestMismatch {
                expected: expected.to_string(),
                got: got.to_string(),
            });
        }
        Ok(())
    }

    /// Subcircuit `i`'s own Mirage verifying key: its shape's key with `(i, addrs…)` folded
    /// in (paper §6.3); it takes the public input `(rt, α, β)`.
    pub fn subcircuit_key(&self, i: usize) -> Result<mirage::VerifyingKey<E>, Error> {
        let k = self.num_subcircuits();
        let svk = self
            .shape_of
            .get(i)
            .filter(|_| i < k)
            .and_then(|&s| self.vks.get(s as usize))
            .ok_or(Error::ShapeMismatch {
                what: "subcircuit index",
                expected: k,
                got: i,
            })?;
        svk.fix_trailing_inputs(&fixed_inputs_for(&self.layout, i))
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }
}

impl<E: Pairing> Check for VerifyingKey<E> {
    fn check(&self) -> Result<(), Error> {
        VerifyingKey::check(self)
    }
}

impl<E: Pairing> Check for ProvingKey<E> {
    fn check(&self) -> Result<(), Error> {
        ProvingKey::check(self)
    }
}

/// What worker `i` receives in step 1: its trace slices and the salt of the leaf it writes
/// (the committed part of its witness). The subcircuit's own witness travels with the
/// subcircuit itself. A share is as secret as the witness: it never leaves the prover.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct WitnessShare<F: PrimeField> {
    pub index: u64,
    /// Values of `T_i` (their addresses are in the layout).
    pub t_values: Vec<F>,
    /// `A_i`.
    pub a_slice: Vec<Entry<F>>,
    /// `σ_{i+1}`, the uniformly random salt of leaf `i + 1` (see [`crate::augment`]).
    pub salt: F,
}

impl<F: PrimeField> WitnessShare<F> {
    /// The committed witness in allocation order: `T_i` values, `A_i` entries, the salt.
    pub fn committed_values(&self) -> Vec<F> {
        let mut v = self.t_values.clone();
        v.extend(self.a_slice.iter().flat_map(|e| e.to_fields()));
        v.push(self.salt);
        v
    }

    /// Checks the share against the layout: its subcircuit exists and both slices have that
    /// subcircuit's `s_i` entries.
    pub fn check_against(&self, layout: &Layout) -> Result<(), Error> {
        let k = layout.num_subcircuits();
        let sub = usize::try_from(self.index)
            .ok()
            .and_then(|i| layout.subcircuits.get(i))
            .ok_or(Error::ShapeMismatch {
                what: "witness share index",
                expected: k,
                got: usize::try_from(self.index).unwrap_or(usize::MAX),
            })?;
        let s = sub.addresses.len();
        for (what, got) in [
            ("witness share T_i length", self.t_values.len()),
            ("witness share A_i length", self.a_slice.len()),
        ] {
            if got != s {
                return Err(Error::ShapeMismatch {
                    what,
                    expected: s,
                    got,
                });
            }
        }
        Ok(())
    }

    fn t_slice(&self, layout: &Layout) -> Result<Vec<Entry<F>>, Error> {
        self.check_against(layout)?;
        Ok(layout.subcircuits[self.index as usize]
            .addresses
            .iter()
            .zip(&self.t_values)
            .map(|(&a, &v)| Entry {
                address: F::from(a),
                value: v,
            })
            .collect())
    }
}

impl<F: PrimeField> Check for WitnessShare<F> {
    /// `T_i` and `A_i` have the same length (the layout checks the rest, see
    /// [`WitnessShare::check_against`]).
    fn check(&self) -> Result<(), Error> {
        if self.t_values.len() != self.a_slice.len() {
            return Err(Error::malformed(
                "witness share",
                format!(
                    "{} values of T_i, {} entries of A_i",
                    self.t_values.len(),
                    self.a_slice.len()
                ),
            ));
        }
        Ok(())
    }
}

/// The challenge `(α, β)` of the permutation check.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Challenge<F: PrimeField> {
    pub alpha: F,
    pub beta: F,
}

/// What worker `i` receives in step 3.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProveMessage<F: PrimeField> {
    pub challenge: Challenge<F>,
    pub root: F,
    /// Leaf `i` (unused by subcircuit 0).
    pub prev_leaf: Leaf<F>,
    pub prev_path: Vec<F>,
    pub own_path: Vec<F>,
}

impl<F: PrimeField> Check for Challenge<F> {
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
}

impl<F: PrimeField> Check for ProveMessage<F> {
    /// Both paths have the same length, at most [`crate::merkle::MAX_DEPTH`].
    fn check(&self) -> Result<(), Error> {
        if self.prev_path.len() != self.own_path.len()
            || self.own_path.len() > crate::merkle::MAX_DEPTH
        {
            return Err(Error::malformed(
                "prove message",
                format!(
                    "Merkle paths of {} and {} nodes",
                    self.prev_path.len(),
                    self.own_path.len()
                ),
            ));
        }
        Ok(())
    }
}

/// The coordinator's state after step 3.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ChallengeRound<F: PrimeField> {
    pub challenge: Challenge<F>,
    /// Leaves `1..=k` (leaf 0 is the public input).
    pub leaves: Vec<Leaf<F>>,
    pub tree: MerkleTree<F>,
    pub messages: Vec<ProveMessage<F>>,
}

impl<F: PrimeField> Check for ChallengeRound<F> {
    /// A well-formed tree with a leaf for the public input and each subcircuit, one message
    /// per subcircuit.
    fn check(&self) -> Result<(), Error> {
        self.tree.check()?;
        let k = self.leaves.len();
        if self.messages.len() != k || k == 0 || k >= 1usize << self.tree.depth() {
            return Err(Error::malformed(
                "challenge round",
                format!(
                    "{k} leaves, {} messages, a tree of depth {}",
                    self.messages.len(),
                    self.tree.depth()
                ),
            ));
        }
        self.messages.iter().try_for_each(Check::check)
    }
}

/// The final proof (without aggregation): commitments and proofs of every subcircuit, the
/// root and the path of leaf 0. The permutation check `T = A` is enforced inside the last
/// subcircuit, so no other leaf is opened.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct HekatonProof<E: Pairing> {
    pub commitments: Vec<Commitment<E>>,
    pub proofs: Vec<Proof<E>>,
    pub root: E::ScalarField,
    pub input_path: Vec<E::ScalarField>,
}

impl<E: Pairing> Check for HekatonProof<E> {
    /// One commitment per proof, at least one of each, and a path of at most
    /// [`crate::merkle::MAX_DEPTH`] nodes; [`verify`] checks the counts against the key.
    fn check(&self) -> Result<(), Error> {
        if self.commitments.len() != self.proofs.len()
            || self.proofs.is_empty()
            || self.input_path.len() > crate::merkle::MAX_DEPTH
        {
            return Err(Error::malformed(
                "Hekaton proof",
                format!(
                    "{} commitments, {} proofs, a path of {} nodes",
                    self.commitments.len(),
                    self.proofs.len(),
                    self.input_path.len()
                ),
            ));
        }
        Ok(())
    }
}

impl<E: Pairing> HekatonProof<E> {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }
}

fn blank_leaf<F: PrimeField>() -> Leaf<F> {
    Leaf {
        a_last: Entry {
            address: F::zero(),
            value: F::zero(),
        },
        t_product: F::zero(),
        a_product: F::zero(),
        salt: F::zero(),
    }
}

/// Synthesises `C'_i` for a layout with all-zero values (setup mode; also for counting).
fn blank_augmented<'a, F: PrimeField, S>(
    cfg: &'a ark_crypto_primitives::sponge::poseidon::PoseidonConfig<F>,
    layout: &'a Layout,
    i: usize,
    sub: &'a S,
    zeros: &'a [F],
    entries: &'a [Entry<F>],
    breakdown: Option<&'a Cell<Breakdown>>,
) -> Augmented<'a, F, S> {
    let s = layout.subcircuits[i].addresses.len();
    let depth = layout.tree_depth();
    Augmented {
        cfg,
        layout,
        index: i,
        subcircuit: sub,
        public_inputs: &zeros[..layout.num_public_inputs as usize],
        t_values: &zeros[..s],
        a_slice: &entries[..s],
        salt: F::zero(),
        alpha: F::zero(),
        beta: F::zero(),
        root: F::zero(),
        prev_leaf: blank_leaf(),
        prev_path: &zeros[..depth],
        own_path: &zeros[..depth],
        breakdown,
    }
}

fn blanks<F: PrimeField>(layout: &Layout) -> (Vec<F>, Vec<Entry<F>>) {
    let s_max = layout
        .subcircuits
        .iter()
        .map(|s| s.addresses.len())
        .max()
        .unwrap_or(0);
    let n = s_max
        .max(layout.num_public_inputs as usize)
        .max(layout.tree_depth());
    (vec![F::zero(); n], vec![blank_leaf::<F>().a_last; s_max])
}

/// The constraint breakdown of each augmented subcircuit (synthesised in setup mode).
pub fn constraint_breakdown<F: PrimeField + Absorb, S: Subcircuit<F>>(
    circuit: &Partitioned<F, S>,
) -> Result<(Layout, Vec<Breakdown>), Error> {
    let (layout, _) = record(circuit, false)?;
    let cfg = poseidon_config::<F>();
    let (zeros, entries) = blanks::<F>(&layout);
    let mut out = Vec::with_capacity(layout.num_subcircuits());
    for (i, sub) in circuit.subcircuits.iter().enumerate() {
        let cell = Cell::new(Breakdown::default());
        let cs = ark_relations::gr1cs::ConstraintSystem::<F>::new_ref();
        cs.set_optimization_goal(ark_relations::gr1cs::OptimizationGoal::Constraints);
        cs.set_mode(ark_relations::gr1cs::SynthesisMode::Setup);
        ark_relations::gr1cs::ConstraintSynthesizer::generate_constraints(
            blank_augmented(&cfg, &layout, i, sub, &zeros, &entries, Some(&cell)),
            cs,
        )?;
        out.push(cell.get());
    }
    Ok((layout, out))
}

/// The [`mirage::constraint_digest`] of each augmented subcircuit `C'_i`.
fn subcircuit_digests<F, S>(
    layout: &Layout,
    circuit: &Partitioned<F, S>,
) -> Result<Vec<[u8; 32]>, Error>
where
    F: PrimeField + Absorb,
    S: Subcircuit<F>,
{
    let cfg = poseidon_config::<F>();
    let (zeros, entries) = blanks::<F>(layout);
    circuit
        .subcircuits
        .iter()
        .enumerate()
        .map(|(i, sub)| {
            let aug = blank_augmented(&cfg, layout, i, sub, &zeros, &entries, None);
            mirage::constraint_digest(aug, committed_len(layout.subcircuits[i].addresses.len()))
        })
        .collect()
}

/// Step 0: derives the layout and runs one Mirage setup per distinct
/// `(shape, number of accesses, first?, last?)`, committing the trace slice of each subcircuit.
///
/// Subcircuits that declare one shape share a key only if their augmented circuits have the
/// same constraints: every subcircuit's constraint matrices are hashed
/// ([`mirage::constraint_digest`]), and a subcircuit whose digest differs from the first of
/// its shape is refused with [`Error::SharedShapeMismatch`] (otherwise the key would attest to
/// the first one's constraints in its place). Whoever runs this knows the trapdoor: the
/// verifier must trust them, and pin the verifying key by its [`VerifyingKey::digest`].
pub fn setup<E, S, R>(
    circuit: &Partitioned<E::ScalarField, S>,
    rng: &mut R,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    S: Subcircuit<E::ScalarField>,
    R: Rng,
{
    let (layout, _) = record(circuit, false)?;
    let digests = subcircuit_digests(&layout, circuit)?;
    let cfg = poseidon_config::<E::ScalarField>();
    let (zeros, entries) = blanks::<E::ScalarField>(&layout);
    let k = layout.num_subcircuits();
    let mut shapes: HashMap<(String, usize, bool, bool), (u32, usize)> = HashMap::new();
    let mut shape_of = Vec::with_capacity(layout.num_subcircuits());
    let mut pks = Vec::new();
    let mut vks = Vec::new();
    let mut constraint_digests = Vec::new();
    for (i, sub) in circuit.subcircuits.iter().enumerate() {
        let sl = &layout.subcircuits[i];
        let key = (sl.shape.clone(), sl.addresses.len(), i == 0, i + 1 == k);
        if let Some(&(j, first)) = shapes.get(&key) {
            if digests[i] != constraint_digests[j as usize] {
                return Err(Error::SharedShapeMismatch {
                    shape: sl.shape.clone(),
                    first,
                    other: i,
                });
            }
            shape_of.push(j);
            continue;
        }
        let j = pks.len() as u32;
        let aug = blank_augmented(&cfg, &layout, i, sub, &zeros, &entries, None);
        let (pk, vk) = mirage::setup::<E, _, _>(aug, committed_len(sl.addresses.len()), rng)?;
        pks.push(pk);
        vks.push(vk);
        constraint_digests.push(digests[i]);
        shapes.insert(key, (j, i));
        shape_of.push(j);
    }
    let vk = VerifyingKey {
        layout,
        shape_of,
        vks,
        constraint_digests,
    };
    vk.check()?;
    Ok((
        ProvingKey {
            vk: vk.clone(),
            pks,
        },
        vk,
    ))
}

/// Checks that `vk` was made for `circuit`: the same portal layout, and every subcircuit's
/// augmented constraints hash to its key's constraint digest. A prover runs this before
/// using keys it did not make; anyone holding the circuit can run it on a pinned key.
pub fn check_circuit<E, S>(
    vk: &VerifyingKey<E>,
    circuit: &Partitioned<E::ScalarField, S>,
) -> Result<(), Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    S: Subcircuit<E::ScalarField>,
{
    vk.check()?;
    let (layout, _) = record(circuit, false)?;
    if layout != vk.layout {
        return Err(Error::CircuitMismatch(
            "the circuit's portal layout (shapes, shared wires, accesses) differs from the key's"
                .into(),
        ));
    }
    for (i, d) in subcircuit_digests(&layout, circuit)?.iter().enumerate() {
        if *d != vk.constraint_digests[vk.shape_of[i] as usize] {
            return Err(Error::CircuitMismatch(format!(
                "subcircuit {i} has other constraints than its key"
            )));
        }
    }
    Ok(())
}

/// Step 1 (coordinator): runs the subcircuits to fill the memory, builds `T` and `A`, cuts
/// them into one share per worker, and samples each share's leaf salt from `rng` (which must
/// be secret and unpredictable to the verifier: the salts are what hides the published Merkle
/// root and path, see [`crate::augment`]). Fails if the circuit's layout is not the key's.
pub fn coordinator_traces<F: PrimeField, S: Subcircuit<F>, R: Rng>(
    layout: &Layout,
    circuit: &Partitioned<F, S>,
    rng: &mut R,
) -> Result<(Traces<F>, Vec<WitnessShare<F>>), Error> {
    let (got, values) = record(circuit, true)?;
    if got != *layout {
        return Err(Error::UnsupportedCircuit(
            "the circuit's portal layout differs from the key's".into(),
        ));
    }
    let values = values.ok_or(Error::Unsatisfied("no trace values recorded".into()))?;
    let traces = Traces::build(layout, &values)?;
    let shares = traces
        .slices()?
        .into_iter()
        .enumerate()
        .map(|(i, (t, a))| WitnessShare {
            index: i as u64,
            t_values: t.iter().map(|e| e.value).collect(),
            a_slice: a,
            salt: F::rand(rng),
        })
        .collect();
    Ok((traces, shares))
}

/// Step 2 (worker `i`): commits to its trace slices with its shape's commitment key. The
/// randomness stays with the worker until step 4.
pub fn worker_commit<E: Pairing, R: Rng>(
    pk: &mirage::ProvingKey<E>,
    share: &WitnessShare<E::ScalarField>,
    rng: &mut R,
) -> Result<(Commitment<E>, CommitmentRandomness<E>), Error> {
    mirage::commit(pk, &share.committed_values(), rng)
}

/// The challenge `(α, β)`: the [`crate::transcript::Transcript`] (Poseidon over the base field)
/// of the key's digest, the public input and every commitment `D_i`.
pub fn derive_challenge<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    commitments: &[Commitment<E>],
) -> Result<Challenge<E::ScalarField>, Error>
where
    E::BaseField: Absorb,
{
    let ds: Vec<E::G1Affine> = commitments.iter().map(|c| c.d).collect();
    Ok(crate::transcript::Transcript::<E>::new(&vk.digest()?, public_inputs, &ds).challenge())
}

/// Step 3 (coordinator): derives `(α, β)`, computes every leaf `(a_i, v_i, T_i, A_i, σ_i)` and the
/// Merkle tree whose leaf 0 is the public input, and prepares each worker's message.
pub fn coordinator_challenge<E>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    shares: &[WitnessShare<E::ScalarField>],
    commitments: &[Commitment<E>],
) -> Result<ChallengeRound<E::ScalarField>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    E::BaseField: Absorb,
{
    vk.check()?;
    let k = vk.num_subcircuits();
    for (what, got) in [
        ("witness shares", shares.len()),
        ("commitments", commitments.len()),
    ] {
        if got != k {
            return Err(Error::ShapeMismatch {
                what,
                expected: k,
                got,
            });
        }
    }
    let challenge = derive_challenge(vk, public_inputs, commitments)?;
    challenge_round(vk, challenge, public_inputs, shares)
}

/// The rest of step 3 once `(α, β)` is known: the leaves, the tree and the messages. Shared
/// with the aggregated flow ([`crate::aggregated`]), which derives `(α, β)` otherwise.
pub(crate) fn challenge_round<E>(
    vk: &VerifyingKey<E>,
    challenge: Challenge<E::ScalarField>,
    public_inputs: &[E::ScalarField],
    shares: &[WitnessShare<E::ScalarField>],
) -> Result<ChallengeRound<E::ScalarField>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
{
    let k = vk.num_subcircuits();
    if shares.len() != k {
        return Err(Error::ShapeMismatch {
            what: "witness shares",
            expected: k,
            got: shares.len(),
        });
    }
    let cfg = poseidon_config::<E::ScalarField>();
    let mut leaves = Vec::with_capacity(k);
    let mut state = Leaf::initial();
    for (i, share) in shares.iter().enumerate() {
        if share.index != i as u64 {
            return Err(Error::ShapeMismatch {
                what: "witness share index",
                expected: i,
                got: usize::try_from(share.index).unwrap_or(usize::MAX),
            });
        }
        state = state.next(
            &share.t_slice(&vk.layout)?,
            &share.a_slice,
            challenge.alpha,
            challenge.beta,
            share.salt,
        );
        leaves.push(state);
    }
    let mut hashes = vec![hash_leaf(&cfg, public_inputs)];
    hashes.extend(leaves.iter().map(|l| l.hash(&cfg)));
    let tree = MerkleTree::new(&cfg, vk.layout.tree_depth(), &hashes).ok_or_else(|| {
        Error::malformed(
            "layout",
            format!("{k} subcircuits do not fit a Merkle tree"),
        )
    })?;
    let root = tree.root()?;
    let messages = (0..k)
        .map(|i| {
            Ok(ProveMessage {
                challenge,
                root,
                prev_leaf: if i == 0 {
                    Leaf::initial()
                } else {
                    leaves[i - 1]
                },
                prev_path: tree.path(i)?,
                own_path: tree.path(i + 1)?,
            })
        })
        .collect::<Result<_, Error>>()?;
    Ok(ChallengeRound {
        challenge,
        leaves,
        tree,
        messages,
    })
}

/// Step 4 (worker `i`): proves `C'_i` with the committed slices, consistently with `D_i`.
/// `public_inputs` (the whole circuit's) is only read by subcircuit 0.
#[allow(clippy::too_many_arguments)]
pub fn worker_prove<E, S, R>(
    pk: &ProvingKey<E>,
    subcircuit: &S,
    public_inputs: &[E::ScalarField],
    share: &WitnessShare<E::ScalarField>,
    commitment: &Commitment<E>,
    randomness: &CommitmentRandomness<E>,
    message: &ProveMessage<E::ScalarField>,
    rng: &mut R,
) -> Result<Proof<E>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    S: Subcircuit<E::ScalarField>,
    R: Rng,
{
    let key = pk.subcircuit_key(share.index as usize)?;
    worker_prove_with_key(
        &pk.vk,
        key,
        subcircuit,
        public_inputs,
        share,
        commitment,
        randomness,
        message,
        rng,
    )
}

/// [`worker_prove`] for a worker that holds only the verifying key and its own shape's Mirage
/// proving key (a distributed worker need not fetch the keys of every shape). The shape key
/// must be the one the verifying key names for subcircuit `share.index`.
#[allow(clippy::too_many_arguments)]
pub fn worker_prove_with_key<E, S, R>(
    vk: &VerifyingKey<E>,
    key: &mirage::ProvingKey<E>,
    subcircuit: &S,
    public_inputs: &[E::ScalarField],
    share: &WitnessShare<E::ScalarField>,
    commitment: &Commitment<E>,
    randomness: &CommitmentRandomness<E>,
    message: &ProveMessage<E::ScalarField>,
    rng: &mut R,
) -> Result<Proof<E>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    S: Subcircuit<E::ScalarField>,
    R: Rng,
{
    let i = share.index as usize;
    let layout = &vk.layout;
    if i >= layout.num_subcircuits() {
        return Err(Error::ShapeMismatch {
            what: "subcircuit index",
            expected: layout.num_subcircuits(),
            got: i,
        });
    }
    let shape = vk.shape_of.get(i).and_then(|&j| vk.vks.get(j as usize));
    if shape != Some(&key.vk) {
        return Err(Error::malformed(
            "proving key",
            format!("the shape key given is not subcircuit {i}'s"),
        ));
    }
    let cfg = poseidon_config::<E::ScalarField>();
    let empty: [E::ScalarField; 0] = [];
    let aug = Augmented {
        cfg: &cfg,
        layout,
        index: i,
        subcircuit,
        public_inputs: if i == 0 { public_inputs } else { &empty },
        t_values: &share.t_values,
        a_slice: &share.a_slice,
        salt: share.salt,
        alpha: message.challenge.alpha,
        beta: message.challenge.beta,
        root: message.root,
        prev_leaf: message.prev_leaf,
        prev_path: &message.prev_path,
        own_path: &message.own_path,
        breakdown: None,
    };
    mirage::prove(key, aug, commitment, randomness, rng)
}

/// Step 5 (coordinator): collects the proof. Fails on a malformed round, or unless there is
/// one commitment and one proof per subcircuit.
pub fn coordinator_assemble<E: Pairing>(
    round: &ChallengeRound<E::ScalarField>,
    commitments: Vec<Commitment<E>>,
    proofs: Vec<Proof<E>>,
) -> Result<HekatonProof<E>, Error> {
    round.check()?;
    let k = round.leaves.len();
    for (what, got) in [
        ("commitments", commitments.len()),
        ("subcircuit proofs", proofs.len()),
    ] {
        if got != k {
            return Err(Error::ShapeMismatch {
                what,
                expected: k,
                got,
            });
        }
    }
    Ok(HekatonProof {
        commitments,
        proofs,
        root: round.tree.root()?,
        input_path: round.tree.path(0)?,
    })
}

/// Step 6: accepts iff leaf 0 of the tree with root `rt` is the public input and every
/// subcircuit's Mirage proof verifies under its own key with public input `(rt, α, β)`, where
/// `(α, β)` is recomputed as the transcript hash of the commitments (batched per shape with
/// 128-bit weights bound to the batch, [`mirage::batch_weights`]). The last subcircuit's proof covers the permutation check
/// `T_{k−1}(α, β) = A_{k−1}(α, β)`; each subcircuit's covers its leaves and local checks.
///
/// The key is [`VerifyingKey::check`]ed first, so every subcircuit is verified; the caller
/// must make sure it is the right key (see [`VerifyingKey::check_digest`]): this function
/// trusts it.
pub fn verify<E, R>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    proof: &HekatonProof<E>,
    rng: &mut R,
) -> Result<(), Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    E::BaseField: Absorb,
    R: Rng,
{
    vk.check()?;
    let k = vk.num_subcircuits();
    if public_inputs.len() != vk.layout.num_public_inputs as usize {
        return Err(Error::PublicInputLength {
            expected: vk.layout.num_public_inputs as usize,
            got: public_inputs.len(),
        });
    }
    for (what, got) in [
        ("commitments", proof.commitments.len()),
        ("subcircuit proofs", proof.proofs.len()),
    ] {
        if got != k {
            return Err(Error::ShapeMismatch {
                what,
                expected: k,
                got,
            });
        }
    }
    let challenge = derive_challenge(vk, public_inputs, &proof.commitments)?;
    let cfg = poseidon_config::<E::ScalarField>();
    let depth = vk.layout.tree_depth();
    if proof.input_path.len() != depth {
        return Err(Error::VerificationFailed);
    }
    let input_leaf = hash_leaf(&cfg, public_inputs);
    if !verify_path(&cfg, proof.root, 0, input_leaf, &proof.input_path) {
        return Err(Error::VerificationFailed);
    }
    let inputs: Vec<Vec<E::ScalarField>> = (0..k)
        .map(|i| public_inputs_for(&vk.layout, i, challenge.alpha, challenge.beta, proof.root))
        .collect();
    // One batch per key; `check` made every subcircuit's key index valid and every key used.
    let mut batches: Vec<Vec<BatchItem<'_, E>>> = vec![Vec::new(); vk.vks.len()];
    for (i, &shape) in vk.shape_of.iter().enumerate() {
        batches[shape as usize].push(BatchItem {
            public_inputs: &inputs[i],
            commitment: &proof.commitments[i],
            proof: &proof.proofs[i],
        });
    }
    let checked: usize = batches.iter().map(Vec::len).sum();
    if checked != k {
        return Err(Error::ShapeMismatch {
            what: "subcircuits verified",
            expected: k,
            got: checked,
        });
    }
    for (svk, items) in vk.vks.iter().zip(&batches) {
        mirage::batch_verify(svk, items, rng)?;
    }
    Ok(())
}

/// Runs steps 1–5 on one machine (for tests and benchmarks; the steps are independent
/// functions so that a scheduler can run them on different machines).
pub fn prove<E, S, R>(
    pk: &ProvingKey<E>,
    circuit: &Partitioned<E::ScalarField, S>,
    rng: &mut R,
) -> Result<HekatonProof<E>, Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    E::BaseField: Absorb,
    S: Subcircuit<E::ScalarField>,
    R: Rng,
{
    pk.check()?;
    let (_, shares) = coordinator_traces(&pk.vk.layout, circuit, rng)?;
    let (commitments, randomness): (Vec<_>, Vec<_>) = shares
        .iter()
        .map(|s| worker_commit(pk.subcircuit_key(s.index as usize)?, s, rng))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .unzip();
    let round = coordinator_challenge(&pk.vk, &circuit.public_inputs, &shares, &commitments)?;
    let proofs = shares
        .iter()
        .enumerate()
        .map(|(i, s)| {
            worker_prove(
                pk,
                &circuit.subcircuits[i],
                &circuit.public_inputs,
                s,
                &commitments[i],
                &randomness[i],
                &round.messages[i],
                rng,
            )
        })
        .collect::<Result<Vec<_>, _>>()?;
    coordinator_assemble(&round, commitments, proofs)
}

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
//! The challenge is a BLAKE2b-512 transcript hash of the verifying key, the public input and
//! every commitment `D_i` (which bind the trace slices), so the traces are fixed before
//! `(α, β)` is known. In place of the paper's aggregation (Agg.C, Agg.P, §5), the proof keeps
//! the `k` commitments and proofs and the verifier batch-verifies them, one randomised
//! multi-pairing per distinct subcircuit shape.

use std::cell::Cell;
use std::collections::HashMap;

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_ff::PrimeField;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress};
use blake2::{Blake2b512, Digest};
use rand::Rng;

use crate::augment::{fixed_inputs_for, public_inputs_for, Augmented, Breakdown, Leaf};
use crate::merkle::{hash_leaf, poseidon_config, verify_path, MerkleTree, LEAF_INPUT};
use crate::mirage::{self, BatchItem, Commitment, CommitmentRandomness, Proof};
use crate::partition::{record, Entry, Layout, Partitioned, Subcircuit, Traces};
use crate::Error;

/// The verifying key: the layout and one Mirage verifying key per distinct shape.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifyingKey<E: Pairing> {
    pub layout: Layout,
    /// Shape (index into `vks`) of each subcircuit.
    pub shape_of: Vec<u32>,
    /// One per distinct `(shape, accesses, first?, last?)`; public input `(rt, α, β, i, addrs…)`.
    pub vks: Vec<mirage::VerifyingKey<E>>,
}

/// The proving key: the verifying key and one Mirage proving key per distinct shape.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProvingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub pks: Vec<mirage::ProvingKey<E>>,
}

impl<E: Pairing> ProvingKey<E> {
    /// The Mirage proving key of subcircuit `i` (shared with every subcircuit of its shape).
    pub fn subcircuit_key(&self, i: usize) -> &mirage::ProvingKey<E> {
        &self.pks[self.vk.shape_of[i] as usize]
    }
}

impl<E: Pairing> VerifyingKey<E> {
    pub fn num_subcircuits(&self) -> usize {
        self.layout.num_subcircuits()
    }

    /// Subcircuit `i`'s own Mirage verifying key: its shape's key with `(i, addrs…)` folded
    /// in (paper §6.3); it takes the public input `(rt, α, β)`.
    pub fn subcircuit_key(&self, i: usize) -> Result<mirage::VerifyingKey<E>, Error> {
        self.vks[self.shape_of[i] as usize].fix_trailing_inputs(&fixed_inputs_for(&self.layout, i))
    }
}

/// What worker `i` receives in step 1: its trace slices (the committed part of its witness).
/// The subcircuit's own witness travels with the subcircuit itself.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct WitnessShare<F: PrimeField> {
    pub index: u64,
    /// Values of `T_i` (their subcircuit index and addresses are in the layout).
    pub t_values: Vec<F>,
    /// `A_i`.
    pub a_slice: Vec<Entry<F>>,
}

impl<F: PrimeField> WitnessShare<F> {
    /// The committed witness in allocation order: `T_i` values, then `A_i` entries.
    pub fn committed_values(&self) -> Vec<F> {
        let mut v = self.t_values.clone();
        v.extend(self.a_slice.iter().flat_map(|e| e.to_fields()));
        v
    }

    fn t_slice(&self, layout: &Layout) -> Vec<Entry<F>> {
        let i = F::from(self.index);
        layout.subcircuits[self.index as usize]
            .addresses
            .iter()
            .zip(&self.t_values)
            .map(|(&a, &v)| Entry {
                subcircuit: i,
                address: F::from(a),
                value: v,
            })
            .collect()
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

/// The coordinator's state after step 3.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ChallengeRound<F: PrimeField> {
    pub challenge: Challenge<F>,
    /// Leaves `1..=k` (leaf 0 is the public input).
    pub leaves: Vec<Leaf<F>>,
    pub tree: MerkleTree<F>,
    pub messages: Vec<ProveMessage<F>>,
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

fn blank_leaf<F: PrimeField>() -> Leaf<F> {
    Leaf {
        t_last: Entry {
            subcircuit: F::zero(),
            address: F::zero(),
            value: F::zero(),
        },
        a_last: Entry {
            subcircuit: F::zero(),
            address: F::zero(),
            value: F::zero(),
        },
        t_product: F::zero(),
        a_product: F::zero(),
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
    (vec![F::zero(); n], vec![blank_leaf::<F>().t_last; s_max])
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

/// Step 0: derives the layout and runs one Mirage setup per distinct
/// `(shape, number of accesses, first?, last?)`, committing the trace slice of each subcircuit.
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
    let cfg = poseidon_config::<E::ScalarField>();
    let (zeros, entries) = blanks::<E::ScalarField>(&layout);
    let k = layout.num_subcircuits();
    let mut shapes: HashMap<(String, usize, bool, bool), u32> = HashMap::new();
    let mut shape_of = Vec::with_capacity(layout.num_subcircuits());
    let mut pks = Vec::new();
    let mut vks = Vec::new();
    for (i, sub) in circuit.subcircuits.iter().enumerate() {
        let sl = &layout.subcircuits[i];
        let key = (sl.shape.clone(), sl.addresses.len(), i == 0, i + 1 == k);
        if let Some(&k) = shapes.get(&key) {
            shape_of.push(k);
            continue;
        }
        let k = pks.len() as u32;
        let aug = blank_augmented(&cfg, &layout, i, sub, &zeros, &entries, None);
        let (pk, vk) = mirage::setup::<E, _, _>(aug, 4 * sl.addresses.len(), rng)?;
        pks.push(pk);
        vks.push(vk);
        shapes.insert(key, k);
        shape_of.push(k);
    }
    let vk = VerifyingKey {
        layout,
        shape_of,
        vks,
    };
    Ok((
        ProvingKey {
            vk: vk.clone(),
            pks,
        },
        vk,
    ))
}

/// Step 1 (coordinator): runs the subcircuits to fill the memory, builds `T` and `A`, and
/// cuts them into one share per worker. Fails if the circuit's layout is not the key's.
pub fn coordinator_traces<F: PrimeField, S: Subcircuit<F>>(
    layout: &Layout,
    circuit: &Partitioned<F, S>,
) -> Result<(Traces<F>, Vec<WitnessShare<F>>), Error> {
    let (got, values) = record(circuit, true)?;
    if got != *layout {
        return Err(Error::UnsupportedCircuit(
            "the circuit's portal layout differs from the key's".into(),
        ));
    }
    let traces = Traces::build(layout, &values.expect("recorded with values"))?;
    let shares = traces
        .slices()
        .into_iter()
        .enumerate()
        .map(|(i, (t, a))| WitnessShare {
            index: i as u64,
            t_values: t.iter().map(|e| e.value).collect(),
            a_slice: a,
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

/// The transcript hash `(α, β) = BLAKE2b(vk, x, D_0, …, D_{k−1})`.
pub fn derive_challenge<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    commitments: &[Commitment<E>],
) -> Result<Challenge<E::ScalarField>, Error> {
    let mut h = Blake2b512::new();
    h.update(b"hekaton/challenge/v1");
    let mut buf = Vec::new();
    vk.serialize_with_mode(&mut buf, Compress::Yes)?;
    public_inputs
        .to_vec()
        .serialize_with_mode(&mut buf, Compress::Yes)?;
    commitments
        .to_vec()
        .serialize_with_mode(&mut buf, Compress::Yes)?;
    h.update(&buf);
    let seed = h.finalize();
    let squeeze = |tag: u8| {
        let mut g = Blake2b512::new();
        g.update(seed);
        g.update([tag]);
        E::ScalarField::from_le_bytes_mod_order(&g.finalize())
    };
    Ok(Challenge {
        alpha: squeeze(0),
        beta: squeeze(1),
    })
}

/// Step 3 (coordinator): derives `(α, β)`, computes every leaf `(t_i, a_i, T_i, A_i)` and the
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
{
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
    let cfg = poseidon_config::<E::ScalarField>();
    let mut leaves = Vec::with_capacity(k);
    let mut state = Leaf::initial();
    for share in shares {
        state = state.next(
            &share.t_slice(&vk.layout),
            &share.a_slice,
            challenge.alpha,
            challenge.beta,
        );
        leaves.push(state);
    }
    let mut hashes = vec![hash_leaf(&cfg, LEAF_INPUT, public_inputs)];
    hashes.extend(leaves.iter().map(|l| l.hash(&cfg)));
    let tree =
        MerkleTree::new(&cfg, vk.layout.tree_depth(), &hashes).expect("depth fits k + 1 leaves");
    let messages = (0..k)
        .map(|i| ProveMessage {
            challenge,
            root: tree.root(),
            prev_leaf: if i == 0 {
                Leaf::initial()
            } else {
                leaves[i - 1]
            },
            prev_path: tree.path(i),
            own_path: tree.path(i + 1),
        })
        .collect();
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
    let i = share.index as usize;
    let layout = &pk.vk.layout;
    if i >= layout.num_subcircuits() {
        return Err(Error::ShapeMismatch {
            what: "subcircuit index",
            expected: layout.num_subcircuits(),
            got: i,
        });
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
        alpha: message.challenge.alpha,
        beta: message.challenge.beta,
        root: message.root,
        prev_leaf: message.prev_leaf,
        prev_path: &message.prev_path,
        own_path: &message.own_path,
        breakdown: None,
    };
    mirage::prove(pk.subcircuit_key(i), aug, commitment, randomness, rng)
}

/// Step 5 (coordinator): collects the proof.
pub fn coordinator_assemble<E: Pairing>(
    round: &ChallengeRound<E::ScalarField>,
    commitments: Vec<Commitment<E>>,
    proofs: Vec<Proof<E>>,
) -> HekatonProof<E> {
    HekatonProof {
        commitments,
        proofs,
        root: round.tree.root(),
        input_path: round.tree.path(0),
    }
}

/// Step 6: accepts iff leaf 0 of the tree with root `rt` is the public input and every
/// subcircuit's Mirage proof verifies under its own key with public input `(rt, α, β)`, where
/// `(α, β)` is recomputed as the transcript hash of the commitments (batched per shape with
/// random 128-bit scalars). The last subcircuit's proof covers the permutation check
/// `T_{k−1}(α, β) = A_{k−1}(α, β)`; each subcircuit's covers its leaves and local checks.
pub fn verify<E, R>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    proof: &HekatonProof<E>,
    rng: &mut R,
) -> Result<(), Error>
where
    E: Pairing,
    E::ScalarField: Absorb,
    R: Rng,
{
    let k = vk.num_subcircuits();
    if public_inputs.len() != vk.layout.num_public_inputs as usize {
        return Err(Error::PublicInputLength {
            expected: vk.layout.num_public_inputs as usize,
            got: public_inputs.len(),
        });
    }
    if proof.commitments.len() != k || proof.proofs.len() != k {
        return Err(Error::VerificationFailed);
    }
    let challenge = derive_challenge(vk, public_inputs, &proof.commitments)?;
    let cfg = poseidon_config::<E::ScalarField>();
    let depth = vk.layout.tree_depth();
    if proof.input_path.len() != depth {
        return Err(Error::VerificationFailed);
    }
    let input_leaf = hash_leaf(&cfg, LEAF_INPUT, public_inputs);
    if !verify_path(&cfg, proof.root, 0, input_leaf, &proof.input_path) {
        return Err(Error::VerificationFailed);
    }
    let inputs: Vec<Vec<E::ScalarField>> = (0..k)
        .map(|i| public_inputs_for(&vk.layout, i, challenge.alpha, challenge.beta, proof.root))
        .collect();
    for (shape, svk) in vk.vks.iter().enumerate() {
        let items: Vec<BatchItem<'_, E>> = (0..k)
            .filter(|&i| vk.shape_of[i] as usize == shape)
            .map(|i| BatchItem {
                public_inputs: &inputs[i],
                commitment: &proof.commitments[i],
                proof: &proof.proofs[i],
            })
            .collect();
        mirage::batch_verify(svk, &items, rng)?;
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
    S: Subcircuit<E::ScalarField>,
    R: Rng,
{
    let (_, shares) = coordinator_traces(&pk.vk.layout, circuit)?;
    let (commitments, randomness): (Vec<_>, Vec<_>) = shares
        .iter()
        .map(|s| worker_commit(pk.subcircuit_key(s.index as usize), s, rng))
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
    Ok(coordinator_assemble(&round, commitments, proofs))
}

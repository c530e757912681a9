//! Proving one node as a pure function of its inputs, so that any worker can prove any node.
//!
//! * [`prove_bucket`]: a bucket (level `q`) from its `2^q` leaf values and which of them are in
//!   the batch.
//! * [`prove_node`]: a node at level `i > q` from its two children, each either a proven child
//!   ([`Child::Proven`]) or, for a subtree with no batch leaf, its Merkle hash ([`Child::Hash`]).

use plonky2::field::types::{Field, PrimeField64};
use plonky2::iop::witness::{PartialWitness, WitnessWrite};
use plonky2::plonk::proof::ProofWithPublicInputs;

use crate::circuits::{Circuits, RootKey, NUM_PUBLIC_INPUTS};
use crate::hash::{limbs, Digest};
use crate::{Error, Params, C, D, F};

/// A node of the tree: `level` above the leaves, `index` from the left (`< 2^(ℓ−level)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize)]
pub struct NodeId {
    pub level: u32,
    pub index: u64,
}

impl NodeId {
    pub fn new(level: u32, index: u64) -> Self {
        Self { level, index }
    }

    pub fn parent(&self) -> NodeId {
        NodeId { level: self.level + 1, index: self.index >> 1 }
    }

    pub fn sibling(&self) -> NodeId {
        NodeId { level: self.level, index: self.index ^ 1 }
    }

    pub fn children(&self) -> [NodeId; 2] {
        let l = NodeId { level: self.level - 1, index: self.index << 1 };
        [l, l.sibling()]
    }

    /// Checks that the node exists in a tree of `params` and carries a proof (level ≥ q).
    pub fn check(&self, params: &Params) -> Result<(), Error> {
        if self.level < params.log_bucket || self.level > params.log_n {
            return Err(Error::input(format!(
                "node level {} is outside the proof levels {}..={}",
                self.level, params.log_bucket, params.log_n
            )));
        }
        if self.index >= params.nodes_at(self.level) {
            return Err(Error::input(format!(
                "node index {} is outside level {} ({} nodes)",
                self.index,
                self.level,
                params.nodes_at(self.level)
            )));
        }
        Ok(())
    }
}

impl std::fmt::Display for NodeId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}/{}", self.level, self.index)
    }
}

/// The public values a node proof attests: `(C_v, d_v, out_v, idx_v)` with
/// `out_v = (Σlo, Σhi, count)` and `idx_v` the node's index within its level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PublicValues {
    pub c: Digest,
    pub d: Digest,
    pub sum_lo: u64,
    pub sum_hi: u64,
    pub count: u64,
    /// The node's position at its level, bound by the circuits (see the crate doc).
    pub index: u64,
}

impl PublicValues {
    /// The exact sum of the batch values below the node.
    pub fn sum(&self) -> u128 {
        ((self.sum_hi as u128) << 32) + self.sum_lo as u128
    }

    pub(crate) fn from_public_inputs(pis: &[F]) -> Result<Self, Error> {
        if pis.len() != NUM_PUBLIC_INPUTS {
            return Err(Error::Malformed(format!(
                "node proof has {} public inputs, expected {NUM_PUBLIC_INPUTS}",
                pis.len()
            )));
        }
        let e: Vec<u64> = pis.iter().map(|x| x.to_canonical_u64()).collect();
        Ok(Self {
            c: Digest([e[0], e[1], e[2], e[3]]),
            d: Digest([e[4], e[5], e[6], e[7]]),
            sum_lo: e[8],
            sum_hi: e[9],
            count: e[10],
            index: e[11],
        })
    }
}

/// A proof for one node of `T'_I`, with the node it is for.
#[derive(Clone, Debug)]
pub struct NodeProof {
    pub id: NodeId,
    pub(crate) proof: ProofWithPublicInputs<F, C, D>,
}

impl NodeProof {
    pub fn public_values(&self) -> PublicValues {
        PublicValues::from_public_inputs(&self.proof.public_inputs)
            .expect("proofs are only constructed with the right number of public inputs")
    }

    /// The plonky2 proof with its public inputs (`C ‖ d ‖ Σlo ‖ Σhi ‖ count ‖ idx`), for a
    /// circuit that verifies it recursively (the wrap's shrink layer).
    pub fn plonky2_proof(&self) -> &ProofWithPublicInputs<F, C, D> {
        &self.proof
    }

    /// Size of the plonky2 proof with its public inputs, in bytes.
    pub fn proof_size(&self) -> usize {
        self.proof.to_bytes().len()
    }

    /// Verifies the proof against the key of its level in `circuits`, and that the position it
    /// proves (`idx`) is the node it claims to be.
    pub fn verify(&self, circuits: &Circuits) -> Result<(), Error> {
        self.id.check(&circuits.params)?;
        let index = self.public_values().index;
        if index != self.id.index {
            return Err(Error::Verification(format!(
                "proof of node {} is a proof for index {index} of that level",
                self.id
            )));
        }
        circuits
            .data(self.id.level)?
            .verify(self.proof.clone())
            .map_err(|e| Error::Verification(format!("proof of node {} does not verify: {e}", self.id)))
    }

    /// Stable encoding: see [`crate::codec`].
    pub fn to_bytes(&self) -> Vec<u8> {
        crate::codec::encode_node_proof(self)
    }

    /// Decodes and checks the shape against `circuits` (the proof itself is verified by
    /// [`NodeProof::verify`]).
    pub fn from_bytes(circuits: &Circuits, bytes: &[u8]) -> Result<Self, Error> {
        crate::codec::decode_node_proof(circuits, bytes)
    }

    /// Decodes a root proof with only the root key (what an offline verifier holds).
    pub fn root_from_bytes(key: &RootKey, bytes: &[u8]) -> Result<Self, Error> {
        let root = key.params.log_n;
        crate::codec::decode_node_proof_with(key.params, bytes, |level| {
            if level == root {
                Ok(key.common())
            } else {
                Err(Error::input(format!("expected a root proof (level {root}), got level {level}")))
            }
        })
    }
}

/// One input of [`prove_node`].
#[derive(Clone, Debug)]
pub enum Child {
    /// A child with batch leaves below it, with its proof.
    Proven(NodeProof),
    /// A child with no batch leaf below it: only its Merkle hash `C` (its `d` is 0).
    Hash(Digest),
}

/// Proves bucket `bucket` (node `(q, bucket)`): `values` are its `2^q` leaf values, `selected`
/// the positions *within the bucket* that are in the batch.
pub fn prove_bucket(
    circuits: &Circuits,
    bucket: u64,
    values: &[u64],
    selected: &[u64],
) -> Result<NodeProof, Error> {
    let params = circuits.params;
    let id = NodeId::new(params.log_bucket, bucket);
    id.check(&params)?;
    let size = params.bucket_size() as usize;
    if values.len() != size {
        return Err(Error::input(format!(
            "bucket values: expected {size} values, got {}",
            values.len()
        )));
    }
    let mut mask = vec![false; size];
    for &s in selected {
        let slot = mask.get_mut(s as usize).ok_or_else(|| {
            Error::input(format!("selected position {s} is outside a bucket of {size} leaves"))
        })?;
        *slot = true;
    }
    let circuit = &circuits.bucket;
    let mut pw = PartialWitness::new();
    let set = |pw: &mut PartialWitness<F>, t, v: u64| {
        pw.set_target(t, F::from_canonical_u64(v)).map_err(|e| Error::Proving(e.to_string()))
    };
    set(&mut pw, circuit.bucket_index, bucket)?;
    for (j, &v) in values.iter().enumerate() {
        let (lo, hi) = limbs(v);
        set(&mut pw, circuit.values[j].0, lo)?;
        set(&mut pw, circuit.values[j].1, hi)?;
        pw.set_bool_target(circuit.selected[j], mask[j]).map_err(|e| Error::Proving(e.to_string()))?;
    }
    let proof = circuit
        .data
        .prove(pw)
        .map_err(|e| Error::Proving(format!("bucket {bucket}: {e}")))?;
    Ok(NodeProof { id, proof })
}

/// Proves node `id` (level `> q`) from its left and right children.
///
/// A proven child must be the node's actual child (same level − 1 and index) and must verify;
/// this is checked natively first so that a bad input gets a clear error rather than an
/// unsatisfiable circuit.
pub fn prove_node(circuits: &Circuits, id: NodeId, left: &Child, right: &Child) -> Result<NodeProof, Error> {
    id.check(&circuits.params)?;
    for (child, want) in [left, right].into_iter().zip(id.children()) {
        if let Child::Proven(p) = child {
            if p.id != want {
                return Err(Error::input(format!(
                    "child of node {id} must be node {want}, got a proof of node {}",
                    p.id
                )));
            }
            p.verify(circuits)?;
            if p.public_values().d.is_zero() {
                return Err(Error::input(format!(
                    "child {want} has no batch leaf (d = 0): pass its Merkle hash instead"
                )));
            }
        }
    }
    prove_node_unchecked(circuits, id, left, right)
}

/// [`prove_node`] without the native checks of the children, so that the circuit alone decides
/// what can be proved. Honest callers want [`prove_node`]; this exists for tests that play an
/// adversary (who would skip any native check) against the circuits.
pub fn prove_node_unchecked(circuits: &Circuits, id: NodeId, left: &Child, right: &Child) -> Result<NodeProof, Error> {
    id.check(&circuits.params)?;
    let circuit = circuits.level(id.level)?;
    let mut pw = PartialWitness::new();
    let err = |e: anyhow::Error| Error::Proving(e.to_string());
    pw.set_target(circuit.index, F::from_canonical_u64(id.index)).map_err(err)?;
    for (slot, child) in circuit.children.iter().zip([left, right]) {
        let (proof, values) = match child {
            Child::Proven(p) => {
                check_shape(circuits, p, id.level - 1)?;
                (&p.proof, p.public_values())
            }
            Child::Hash(c) => (
                &circuit.padding.proof,
                PublicValues { c: *c, d: Digest::ZERO, sum_lo: 0, sum_hi: 0, count: 0, index: 0 },
            ),
        };
        pw.set_proof_with_pis_target(&slot.proof, proof).map_err(err)?;
        pw.set_hash_target(slot.node.c, values.c.to_hash()).map_err(err)?;
        pw.set_hash_target(slot.node.d, values.d.to_hash()).map_err(err)?;
        for (t, v) in slot.node.out.iter().zip([values.sum_lo, values.sum_hi, values.count]) {
            pw.set_target(*t, F::from_canonical_u64(v)).map_err(err)?;
        }
    }
    let proof = circuit.data.prove(pw).map_err(|e| Error::Proving(format!("node {id}: {e}")))?;
    Ok(NodeProof { id, proof })
}

/// Checks that `p`'s plonky2 proof has the shape of a level-`level` proof of `circuits` (a
/// witness of another shape would make plonky2 panic), by re-reading its bytes with that
/// level's common data.
fn check_shape(circuits: &Circuits, p: &NodeProof, level: u32) -> Result<(), Error> {
    let common = &circuits.data(level)?.common;
    let bytes = p.proof.to_bytes();
    let reread = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        ProofWithPublicInputs::<F, C, D>::from_bytes(bytes.clone(), common)
    }));
    match reread {
        Ok(Ok(q)) if q.public_inputs.len() == NUM_PUBLIC_INPUTS && q.to_bytes() == bytes => Ok(()),
        _ => Err(Error::input(format!("child proof of node {} does not have the shape of a level-{level} proof", p.id))),
    }
}

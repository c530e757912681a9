//! Position binding (Def. 2.4): an adversary who builds the tree itself must not be able to
//! open one index to two different values under one commitment `C`.
//!
//! The attack: take a tree of 4 buckets of 2 leaves (ℓ = 3, q = 1). At bucket position 0 put
//! the honest leaves `(0, v′), (1, w)`; at bucket position 1, where leaves 2 and 3 belong, put
//! leaves *hashed with bucket 0's indices*, `(0, v), (1, w)`. Then prove the one-leaf batches
//! `{(0, v)}` (through bucket position 1) and `{(0, v′)}` (through bucket position 0) with the
//! crate's own proving functions. Both proofs are for the same root `C`, and a single leaf's
//! canonical digest is its leaf hash wherever it sits, so nothing but the position of the bucket
//! proof tells the two apart.

use reckle::hash::{hash_pair, leaf_hash};
use reckle::{prove_bucket, prove_node, prove_node_unchecked, Child, Circuits, Digest, Error, NodeId, NodeProof, Params, Statement};

/// How the adversary proves a node: through the crate's checked prover, or straight into the
/// circuit (skipping every native check, as an adversary with its own prover would).
type ProveNode = fn(&Circuits, NodeId, &Child, &Child) -> Result<NodeProof, Error>;

const V: u64 = 1111;
const V_PRIME: u64 = 2222;
const W: u64 = 7;

/// The adversary's tree: its commitment, bucket 0's and the forged bucket position 1's
/// Merkle hashes, and the right half's hash.
struct Forged {
    root: Digest,
    bucket0: Digest,
    bucket1_forged: Digest,
    right: Digest,
}

fn forged_tree() -> Forged {
    let bucket0 = hash_pair(&leaf_hash(0, V_PRIME), &leaf_hash(1, W));
    let bucket1_forged = hash_pair(&leaf_hash(0, V), &leaf_hash(1, W)); // indices of bucket 0
    let bucket2 = hash_pair(&leaf_hash(4, 0), &leaf_hash(5, 0));
    let bucket3 = hash_pair(&leaf_hash(6, 0), &leaf_hash(7, 0));
    let left = hash_pair(&bucket0, &bucket1_forged);
    let right = hash_pair(&bucket2, &bucket3);
    Forged { root: hash_pair(&left, &right), bucket0, bucket1_forged, right }
}

/// Opening {(0, v)}: a bucket proof made for bucket 0 (so it hashes indices 0 and 1), placed
/// at bucket position 1.
fn forged_opening(c: &Circuits, t: &Forged, prove_node: ProveNode) -> Result<NodeProof, Error> {
    let q = c.params().log_bucket;
    let mut forged = prove_bucket(c, 0, &[V, W], &[0])?;
    forged.id = NodeId::new(q, 1);
    let n20 = prove_node(c, NodeId::new(q + 1, 0), &Child::Hash(t.bucket0), &Child::Proven(forged))?;
    prove_node(c, NodeId::new(q + 2, 0), &Child::Proven(n20), &Child::Hash(t.right))
}

/// Opening {(0, v′)}: the honest bucket 0 of the same tree.
fn honest_opening(c: &Circuits, t: &Forged) -> Result<NodeProof, Error> {
    let q = c.params().log_bucket;
    let honest = prove_bucket(c, 0, &[V_PRIME, W], &[0])?;
    let n20 = prove_node(c, NodeId::new(q + 1, 0), &Child::Proven(honest), &Child::Hash(t.bucket1_forged))?;
    prove_node(c, NodeId::new(q + 2, 0), &Child::Proven(n20), &Child::Hash(t.right))
}

#[test]
fn one_index_cannot_be_opened_to_two_values() {
    let c = Circuits::build(Params::new(3, 1).unwrap()).unwrap();
    let t = forged_tree();
    // The honest opening of index 0 in the adversary's tree verifies under its C ...
    let honest = honest_opening(&c, &t).unwrap();
    Statement::new(&c, t.root, &[(0, V_PRIME)]).unwrap().verify_for(&t.root, c.root_key(), &honest).unwrap();
    // ... so the forged opening of index 0 to another value must not.
    let st = Statement::new(&c, t.root, &[(0, V)]).unwrap();
    for (how, prove) in [("prove_node", prove_node as ProveNode), ("prove_node_unchecked", prove_node_unchecked as ProveNode)] {
        match forged_opening(&c, &t, prove) {
            Err(e) => eprintln!("{how}: the adversary could not prove its forged opening: {e}"),
            Ok(forged) => {
                let outcome = st.verify_for(&t.root, c.root_key(), &forged);
                eprintln!("{how}: the forged opening {{(0, {V})}} verifies: {outcome:?}");
                assert!(
                    outcome.is_err(),
                    "position binding broken: index 0 opened to {V} and to {V_PRIME} under the same C = {}",
                    t.root
                );
            }
        }
    }
}

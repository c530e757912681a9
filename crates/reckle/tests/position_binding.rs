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
use reckle::{prove_bucket, prove_node, Child, Circuits, Digest, Error, NodeId, NodeProof, Params, Statement};

const V: u64 = 1111;
const V_PRIME: u64 = 2222;
const W: u64 = 7;

/// The commitment and the two root proofs the adversary makes (or the first error it meets).
fn attack(c: &Circuits) -> Result<(Digest, NodeProof, NodeProof), Error> {
    let q = c.params().log_bucket;
    // Merkle hashes of the adversary's tree.
    let bucket0 = hash_pair(&leaf_hash(0, V_PRIME), &leaf_hash(1, W));
    let bucket1_forged = hash_pair(&leaf_hash(0, V), &leaf_hash(1, W)); // indices of bucket 0
    let bucket2 = hash_pair(&leaf_hash(4, 0), &leaf_hash(5, 0));
    let bucket3 = hash_pair(&leaf_hash(6, 0), &leaf_hash(7, 0));
    let left = hash_pair(&bucket0, &bucket1_forged);
    let right = hash_pair(&bucket2, &bucket3);
    let root = hash_pair(&left, &right);

    // Opening {(0, v)}: a bucket proof made for bucket 0 (so it hashes indices 0 and 1), placed
    // at bucket position 1.
    let mut forged = prove_bucket(c, 0, &[V, W], &[0])?;
    forged.id = NodeId::new(q, 1);
    let n20 = prove_node(c, NodeId::new(q + 1, 0), &Child::Hash(bucket0), &Child::Proven(forged))?;
    let root_a = prove_node(c, NodeId::new(q + 2, 0), &Child::Proven(n20), &Child::Hash(right))?;

    // Opening {(0, v′)}: the honest bucket 0.
    let honest = prove_bucket(c, 0, &[V_PRIME, W], &[0])?;
    let n20 = prove_node(c, NodeId::new(q + 1, 0), &Child::Proven(honest), &Child::Hash(bucket1_forged))?;
    let root_b = prove_node(c, NodeId::new(q + 2, 0), &Child::Proven(n20), &Child::Hash(right))?;
    Ok((root, root_a, root_b))
}

#[test]
fn one_index_cannot_be_opened_to_two_values() {
    let c = Circuits::build(Params::new(3, 1).unwrap()).unwrap();
    match attack(&c) {
        Err(e) => eprintln!("the adversary could not prove its tree: {e}"),
        Ok((root, a, b)) => {
            let st_a = Statement::new(&c, root, &[(0, V)]).unwrap();
            let st_b = Statement::new(&c, root, &[(0, V_PRIME)]).unwrap();
            let ok_a = st_a.verify(&c, &a);
            let ok_b = st_b.verify(&c, &b);
            eprintln!("{{(0, v)}}: {ok_a:?}; {{(0, v')}}: {ok_b:?}");
            assert!(
                ok_a.is_err() || ok_b.is_err(),
                "position binding broken: index 0 opened to {V} and to {V_PRIME} under the same C = {root}"
            );
        }
    }
}

//! Completeness, soundness and update tests for Reckle batch proofs on small trees.

use std::sync::OnceLock;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reckle::{BatchProof, Change, Circuits, LambdaStream, NodeId, NodeProof, Params, Statement, Tree};

fn circuits(log_n: u32, log_bucket: u32) -> &'static Circuits {
    static C42: OnceLock<Circuits> = OnceLock::new();
    static C31: OnceLock<Circuits> = OnceLock::new();
    static C22: OnceLock<Circuits> = OnceLock::new();
    let cell = match (log_n, log_bucket) {
        (4, 2) => &C42,
        (3, 1) => &C31,
        (2, 2) => &C22,
        _ => unreachable!("add a cell for new parameters"),
    };
    cell.get_or_init(|| Circuits::build(Params::new(log_n, log_bucket).unwrap()).unwrap())
}

fn random_tree(params: Params, seed: u64) -> Tree {
    let mut rng = StdRng::seed_from_u64(seed);
    let values = (0..params.num_leaves()).map(|_| rng.gen::<u64>()).collect();
    Tree::build(params, values).unwrap()
}

fn prove(c: &Circuits, tree: &Tree, batch: &[u64]) -> (BatchProof, Statement) {
    let lambda = BatchProof::aggregate(c, tree, batch).unwrap();
    let st = lambda.statement(c, tree).unwrap();
    (lambda, st)
}

#[test]
fn completeness_for_several_shapes_and_batches() {
    for (log_n, log_bucket, batch) in [
        (4u32, 2u32, vec![6u64]),                      // one leaf
        (4, 2, (0..16).collect::<Vec<u64>>()),         // every leaf
        (4, 2, vec![2, 4, 5, 15]),                     // the paper's Fig. 1 batch
        (3, 1, vec![0, 7]),
        (2, 2, vec![1, 2]),                            // the bucket is the root
    ] {
        let c = circuits(log_n, log_bucket);
        let tree = random_tree(c.params(), 7);
        let (lambda, st) = prove(c, &tree, &batch);
        st.verify(c, lambda.root_proof())
            .unwrap_or_else(|e| panic!("ℓ={log_n} q={log_bucket} I={batch:?}: {e}"));
        let sum: u128 = batch.iter().map(|&i| tree.values()[i as usize] as u128).sum();
        assert_eq!(st.sum, sum.to_string());
        assert_eq!(st.count, batch.len() as u64);
        assert_eq!(st.root, tree.root().to_hex());
    }
}

#[test]
fn soundness_wrong_inputs_are_rejected() {
    let c = circuits(4, 2);
    let tree = random_tree(c.params(), 1);
    let (lambda, st) = prove(c, &tree, &[3, 9, 10]);
    let proof = lambda.root_proof();
    st.verify(c, proof).unwrap();

    // Wrong leaf value.
    let mut bad = st.clone();
    bad.batch[1].value ^= 1;
    assert!(bad.verify(c, proof).is_err(), "wrong leaf value accepted");
    // Wrong leaf value with the digest, sum and count recomputed to match it.
    let pairs: Vec<(u64, u64)> = bad.batch.iter().map(|l| (l.index, l.value)).collect();
    let forged = Statement::new(c, tree.root(), &pairs).unwrap();
    assert!(forged.verify(c, proof).is_err(), "consistent statement with a wrong value accepted");

    // Index outside the tree.
    let mut bad = st.clone();
    bad.batch[2].index = 16;
    assert!(bad.verify(c, proof).is_err(), "index outside the tree accepted");

    // Canonical digest computed for another I (same leaves claimed).
    let other = Statement::new(c, tree.root(), &[(3, tree.values()[3]), (9, tree.values()[9])]).unwrap();
    let mut bad = st.clone();
    bad.digest = other.digest.clone();
    assert!(bad.verify(c, proof).is_err(), "digest of another batch accepted");
    // ... and the whole statement for another I.
    assert!(other.verify(c, proof).is_err(), "proof accepted for another batch");

    // Wrong sum or count.
    let mut bad = st.clone();
    bad.sum = "1".into();
    assert!(bad.verify(c, proof).is_err());
    let mut bad = st.clone();
    bad.count += 1;
    assert!(bad.verify(c, proof).is_err());

    // Proof from another tree, same batch.
    let tree2 = random_tree(c.params(), 2);
    let (lambda2, st2) = prove(c, &tree2, &[3, 9, 10]);
    assert!(st.verify(c, lambda2.root_proof()).is_err(), "proof from another tree accepted");
    // ... and a statement that claims the first tree's root with the second tree's values.
    let mut bad = st2.clone();
    bad.root = st.root.clone();
    assert!(bad.verify(c, lambda2.root_proof()).is_err());

    // The stored root key verifies alone; a damaged key does not accept the proof.
    let key = reckle::RootKey::from_bytes(&c.root_key().to_bytes()).unwrap();
    let root = NodeProof::root_from_bytes(&key, &proof.to_bytes()).unwrap();
    st.verify_with_key(&key, &root).unwrap();
    let mut kb = c.root_key().to_bytes();
    let at = kb.len() - 40;
    kb[at] ^= 1;
    assert!(reckle::RootKey::from_bytes(&kb).is_err(), "a key that is not the pinned one was loaded");
    assert!(reckle::RootKey::from_bytes(&kb[..100]).is_err());
    // A root key for other parameters.
    assert!(st.verify_with_key(circuits(3, 1).root_key(), &root).is_err());

    // A node proof that is not the root.
    let inner = BatchProof::aggregate(c, &tree, &[3]).unwrap();
    let bucket_only = NodeProof::from_bytes(c, &inner.root_proof().to_bytes()).unwrap();
    assert_eq!(bucket_only.id, NodeId::new(4, 0));
}

#[test]
fn soundness_flipped_proof_bytes_are_rejected() {
    let c = circuits(4, 2);
    let tree = random_tree(c.params(), 3);
    let (lambda, st) = prove(c, &tree, &[0, 5]);
    let bytes = lambda.root_proof().to_bytes();
    let good = NodeProof::from_bytes(c, &bytes).unwrap();
    st.verify(c, &good).unwrap();
    // Every header byte, then a spread of positions across the plonky2 proof.
    let positions: Vec<usize> = (0..21).chain((21..bytes.len()).step_by(409)).chain([bytes.len() - 1]).collect();
    let mut rejected = 0;
    for &pos in &positions {
        for mask in [0x01u8, 0x80] {
            let mut b = bytes.clone();
            b[pos] ^= mask;
            let outcome = NodeProof::from_bytes(c, &b).and_then(|p| st.verify(c, &p));
            assert!(outcome.is_err(), "flipping bit {mask:#x} of byte {pos} was accepted");
            rejected += 1;
        }
    }
    assert!(rejected > 100);
    // Truncated and extended encodings.
    assert!(NodeProof::from_bytes(c, &bytes[..bytes.len() - 1]).is_err());
    let mut longer = bytes.clone();
    longer.push(0);
    assert!(NodeProof::from_bytes(c, &longer).is_err());
    assert!(NodeProof::from_bytes(c, b"").is_err());
}

#[test]
fn bad_inputs_get_errors_not_panics() {
    let c = circuits(4, 2);
    let tree = random_tree(c.params(), 4);
    assert!(BatchProof::aggregate(c, &tree, &[]).is_err(), "empty batch");
    assert!(BatchProof::aggregate(c, &tree, &[16]).is_err(), "index ≥ n");
    assert!(BatchProof::aggregate(c, &tree, &[1, 1]).is_err(), "repeated index");
    assert!(Params::new(0, 0).is_err());
    assert!(Params::new(4, 5).is_err());
    assert!(Tree::build(c.params(), vec![0; 15]).is_err());
    assert!(BatchProof::from_bytes(c, b"RKLI\x01garbage").is_err());
    assert!(reckle::prove_bucket(c, 4, &[0; 4], &[]).is_err(), "bucket index out of range");
    assert!(reckle::prove_bucket(c, 0, &[0; 3], &[]).is_err(), "wrong bucket size");
    assert!(reckle::prove_bucket(c, 0, &[0; 4], &[4]).is_err(), "selected outside bucket");
}

/// Applies `changes` through `update` and checks the result against a from-scratch
/// recomputation of C and d (and, for the first case, a from-scratch aggregation).
#[test]
fn updates_match_from_scratch_recomputation() {
    let c = circuits(4, 2);
    let params = c.params();
    let mut tree = random_tree(params, 5);
    let mut lambda = BatchProof::aggregate(c, &tree, &[1, 6, 13]).unwrap();
    // Round-trip the structure through its encoding first, as a stored Λ_I would be.
    lambda = BatchProof::from_bytes(c, &lambda.to_bytes()).unwrap();
    lambda.check_against(c, &tree).unwrap();
    let ell_minus_q_plus_1 = (params.log_n - params.log_bucket + 1) as usize;

    let cases: Vec<(&str, Vec<Change>)> = vec![
        ("leaf inside I", vec![Change::Set { index: 6, value: 42 }]),
        ("leaf outside I", vec![Change::Set { index: 10, value: u64::MAX }]),
        ("leaf outside I, bucket in T'_I", vec![Change::Set { index: 12, value: 7 }]),
        ("add index", vec![Change::Add(9)]),
        ("remove index", vec![Change::Remove(1)]),
    ];
    for (name, changes) in cases {
        let report = lambda.update(c, &mut tree, &changes).unwrap();
        assert!(report.reproved.len() <= ell_minus_q_plus_1 * changes.len(), "{name}: re-proved {:?}", report.reproved);
        // From scratch: rebuild the tree from the values and recompute the statement natively.
        let fresh_tree = Tree::build(params, tree.values().to_vec()).unwrap();
        let st = lambda.statement(c, &fresh_tree).unwrap();
        let pv = lambda.root_proof().public_values();
        assert_eq!(pv.c.to_hex(), st.root, "{name}: C differs");
        assert_eq!(pv.d.to_hex(), st.digest, "{name}: d differs");
        st.verify(c, lambda.root_proof()).unwrap_or_else(|e| panic!("{name}: {e}"));
        lambda.check_against(c, &fresh_tree).unwrap();
    }
    // The updated structure holds exactly the nodes a from-scratch aggregation would prove.
    assert_eq!(reckle::plan_batch(params, &lambda.batch()).unwrap().len(), lambda.num_nodes());
    lambda = BatchProof::from_bytes(c, &lambda.to_bytes()).unwrap();

    // Invalid updates leave everything untouched.
    let before = (tree.root(), lambda.batch());
    assert!(lambda.update(c, &mut tree, &[Change::Set { index: 3, value: 1 }, Change::Add(99)]).is_err());
    assert!(lambda.update(c, &mut tree, &[Change::Remove(0)]).is_err());
    assert!(lambda.update(c, &mut tree, &[Change::Add(6)]).is_err());
    let all: Vec<Change> = lambda.batch().into_iter().map(Change::Remove).collect();
    assert!(lambda.update(c, &mut tree, &all).is_err(), "emptying the batch");
    assert_eq!(before, (tree.root(), lambda.batch()));
}

/// The pinned table (`src/pinned.rs`) matches the circuits this build makes, for the cheap
/// parameters the tests build anyway (`(4, 2)` also gives `(2, 2)` and `(3, 2)` from its chain).
#[test]
fn pinned_root_keys_match_the_circuits() {
    let mut checked = 0;
    for c in [circuits(4, 2), circuits(3, 1), circuits(2, 2)] {
        for key in c.chain_root_keys() {
            let p = key.params();
            let pin = reckle::pinned_root_key(p)
                .unwrap_or_else(|| panic!("no pinned key for ℓ = {}, q = {}: regenerate src/pinned.rs", p.log_n, p.log_bucket));
            assert_eq!(key.circuit_digest(), pin.circuit_digest, "ℓ = {}, q = {}: circuit digest", p.log_n, p.log_bucket);
            assert_eq!(key.key_digest(), pin.key_digest, "ℓ = {}, q = {}: key digest", p.log_n, p.log_bucket);
            // A stored key comes back only because it is the pinned one.
            let back = reckle::RootKey::from_bytes(&key.to_bytes()).unwrap();
            assert_eq!(back.key_digest(), pin.key_digest);
            checked += 1;
        }
    }
    assert!(checked >= 5);
    // A key of one (ℓ, q) relabelled as another is refused.
    let mut kb = circuits(3, 1).root_key().to_bytes();
    kb[9..13].copy_from_slice(&4u32.to_le_bytes()); // ℓ = 4
    assert!(reckle::RootKey::from_bytes(&kb).is_err());
    // Every supported (ℓ, q) is pinned.
    for log_n in 1..=reckle::MAX_LOG_N {
        for q in 0..=log_n.min(reckle::MAX_LOG_BUCKET) {
            assert!(reckle::pinned_root_key(Params::new(log_n, q).unwrap()).is_some(), "ℓ = {log_n}, q = {q} not pinned");
        }
    }
    assert!(Params::new(reckle::MAX_LOG_N + 1, 3).is_err());
    assert!(Params::new(20, reckle::MAX_LOG_BUCKET + 1).is_err());
}

/// The sets of one `q` share their circuits (issue 31 item 2): a shorter set made from a longer
/// one is its prefix, a longer one reuses it and builds only the levels above, and each has
/// exactly the root key that building it from nothing gives (the pinned table's digests). A
/// proof made with a prefix verifies under its pinned key.
#[test]
fn sets_of_one_bucket_height_share_one_chain() {
    let c42 = circuits(4, 2);
    let pinned = |c: &Circuits| {
        let p = c.params();
        let pin = reckle::pinned_root_key(p).unwrap();
        assert_eq!((c.root_key().circuit_digest(), c.root_key().key_digest()), (pin.circuit_digest.to_string(), pin.key_digest.to_string()), "ℓ = {}", p.log_n);
    };
    let c32 = c42.for_log_n(3).unwrap();
    assert_eq!(c32.params(), Params::new(3, 2).unwrap());
    assert!(c32.shares_circuits_with(c42));
    assert!(c32.heap_bytes() < c42.heap_bytes());
    pinned(&c32);
    let c22 = c42.for_log_n(2).unwrap();
    assert!(c22.shares_circuits_with(c42));
    pinned(&c22);
    let c52 = c42.for_log_n(5).unwrap();
    assert!(c52.shares_circuits_with(c42) && c52.shares_circuits_with(&c32), "the longer set rebuilt the shared levels");
    pinned(&c52);
    assert_eq!(c52.for_log_n(4).unwrap().root_key().key_digest(), c42.root_key().key_digest());
    assert!(c42.for_log_n(1).is_err(), "below q");
    assert!(c42.for_log_n(reckle::MAX_LOG_N + 1).is_err());
    // A set shares nothing with one built separately.
    assert!(!circuits(2, 2).shares_circuits_with(c42));
    // A proof made with the prefix verifies under the pinned key of (3, 2).
    let tree = random_tree(c32.params(), 7);
    let (lambda, st) = prove(&c32, &tree, &[5]);
    let key = reckle::RootKey::from_bytes(&c32.root_key().to_bytes()).unwrap();
    st.verify_with_key(&key, lambda.root_proof()).unwrap();
}

/// Bytes from outside (node proof, Λ_I, root key, statement JSON), damaged at random: every
/// decoder and verifier returns an error, never panics, and never accepts.
#[test]
fn decoders_reject_damaged_bytes_without_panicking() {
    let c = circuits(3, 1);
    let tree = random_tree(c.params(), 11);
    let (lambda, st) = prove(c, &tree, &[0, 5]);
    let root = tree.root();
    let proof = lambda.root_proof().to_bytes();
    let lambda_bytes = lambda.to_bytes();
    let key = c.root_key().to_bytes();
    let json = serde_json::to_vec(&st).unwrap();
    let mut rng = StdRng::seed_from_u64(99);

    fn damage(rng: &mut StdRng, bytes: &[u8]) -> Vec<u8> {
        let mut b = bytes.to_vec();
        match rng.gen_range(0..5) {
            0 => b.truncate(rng.gen_range(0..b.len())),
            1 => b.extend((0..rng.gen_range(1..9)).map(|_| rng.gen::<u8>())),
            2 => {
                // A length or count field set to something huge.
                let at = rng.gen_range(0..b.len().clamp(1, 64));
                for x in b.iter_mut().skip(at).take(4) {
                    *x = 0xff;
                }
            }
            _ => {
                for _ in 0..rng.gen_range(1..4) {
                    let at = rng.gen_range(0..b.len());
                    b[at] ^= 1 << rng.gen_range(0..8);
                }
            }
        }
        b
    }

    let mut runs = 0;
    for _ in 0..150 {
        let b = damage(&mut rng, &proof);
        if b != proof {
            let verdict = NodeProof::from_bytes(c, &b).and_then(|p| st.verify_for(&root, c.root_key(), &p));
            assert!(verdict.is_err(), "damaged proof accepted");
            let verdict = NodeProof::root_from_bytes(c.root_key(), &b).and_then(|p| st.verify_for(&root, c.root_key(), &p));
            assert!(verdict.is_err(), "damaged proof accepted");
            assert!(st.precheck(Some(&root), &b).is_err() || b.len() == proof.len(), "precheck passed a proof of another length");
            runs += 1;
        }
    }
    for _ in 0..30 {
        let b = damage(&mut rng, &lambda_bytes);
        if b != lambda_bytes {
            if let Ok(l) = BatchProof::from_bytes(c, &b) {
                // Only the proofs' bodies can have changed; then they must not check out.
                assert!(l.check_against(c, &tree).is_err(), "damaged Λ_I accepted");
            }
            runs += 1;
        }
    }
    for _ in 0..100 {
        let b = damage(&mut rng, &key);
        if b != key {
            assert!(reckle::RootKey::from_bytes(&b).is_err(), "damaged root key loaded");
            runs += 1;
        }
    }
    for _ in 0..300 {
        let b = damage(&mut rng, &json);
        if let Ok(bad) = serde_json::from_slice::<Statement>(&b) {
            if bad != st {
                let _ = bad.precheck(None, &proof);
                let p = NodeProof::root_from_bytes(c.root_key(), &proof).unwrap();
                assert!(bad.verify_for(&root, c.root_key(), &p).is_err(), "damaged statement accepted: {bad:?}");
            }
        }
        runs += 1;
    }
    // Statements with impossible fields.
    let p = NodeProof::root_from_bytes(c.root_key(), &proof).unwrap();
    let edits: Vec<Box<dyn Fn(&mut Statement)>> = vec![
        Box::new(|s| s.log_n = 99),
        Box::new(|s| s.log_n = 0),
        Box::new(|s| s.log_bucket = 40),
        Box::new(|s| s.batch.clear()),
        Box::new(|s| s.batch[0].index = u64::MAX),
        Box::new(|s| s.batch = vec![s.batch[0]; 20]),
        Box::new(|s| s.digest = "zz".into()),
        Box::new(|s| s.root = "f".repeat(64)),
        Box::new(|s| s.sum = "-1".into()),
        Box::new(|s| s.version = 7),
    ];
    for edit in &edits {
        let mut bad = st.clone();
        edit(&mut bad);
        assert!(bad.precheck(None, &proof).is_err());
        assert!(bad.verify(c, &p).is_err());
        runs += 1;
    }
    eprintln!("{runs} damaged inputs rejected");
}

/// `Λ_I` written node by node is byte for byte the structure's encoding, and the stream
/// refuses what `from_node_proofs` refuses: a node out of order, a node of another tree (its
/// `C_v` is not the tree's), too few nodes.
#[test]
fn lambda_streamed_node_by_node_is_the_same_bytes() {
    let c = circuits(4, 2);
    let tree = random_tree(c.params(), 41);
    let batch = [1u64, 6, 13];
    let (lambda, _) = prove(c, &tree, &batch);
    let (mut stream, mut bytes) = LambdaStream::new(c.params(), &batch).unwrap();
    let ids = stream.nodes().to_vec();
    assert_eq!(ids.len(), lambda.num_nodes());
    for id in &ids {
        bytes.extend(stream.push(c, &tree, lambda.node(*id).unwrap()).unwrap());
    }
    bytes.extend(stream.finish(&tree).unwrap());
    assert_eq!(bytes, lambda.to_bytes());

    let (mut stream, _) = LambdaStream::new(c.params(), &batch).unwrap();
    assert!(stream.push(c, &tree, lambda.node(ids[1]).unwrap()).is_err(), "out of order");
    let other = random_tree(c.params(), 42);
    assert!(stream.push(c, &other, lambda.node(ids[0]).unwrap()).is_err(), "a node of another tree");
    stream.push(c, &tree, lambda.node(ids[0]).unwrap()).unwrap();
    assert!(stream.finish(&tree).is_err(), "too few nodes");
}

//! Reckle decoders: the statement (JSON), the root proof, a node proof, `Λ_I` and a stored root
//! key. Seeds come from one honest batch proof on a tree of 2^3 leaves with buckets of 2. A
//! statement or proof that decodes is also verified against the honest commitment, so a decoder
//! that lets something inconsistent through shows up as a panic in the verifier.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reckle::{BatchProof, Circuits, NodeProof, Params, RootKey, Statement, Tree};

use crate::engine::Target;

/// The Reckle targets, with seeds from one honest run.
pub fn targets() -> Vec<Target> {
    let c = Arc::new(Circuits::build(Params::new(3, 1).expect("params")).expect("circuits"));
    let mut rng = StdRng::seed_from_u64(7);
    let tree = Arc::new(Tree::build(c.params(), (0..8).map(|_| rng.gen::<u64>()).collect()).expect("tree"));
    let lambda = BatchProof::aggregate(&c, &tree, &[0, 5]).expect("aggregate");
    let st = Arc::new(lambda.statement(&c, &tree).expect("statement"));
    let root = tree.root();
    let root_proof = lambda.root_proof().to_bytes();
    let honest = Arc::new(NodeProof::root_from_bytes(c.root_key(), &root_proof).expect("root proof"));

    let mut out = Vec::new();
    {
        let (c, honest) = (c.clone(), honest.clone());
        out.push(Target {
            name: "reckle.statement",
            seeds: vec![serde_json::to_vec(&*st).expect("json")],
            run: Box::new(move |b| match serde_json::from_slice::<Statement>(b) {
                Ok(s) => s.precheck(Some(&root), &honest.to_bytes()).is_ok() && s.verify_for(&root, c.root_key(), &honest).is_ok(),
                Err(_) => false,
            }),
            short_run: None,
        });
    }
    {
        let (c, st) = (c.clone(), st.clone());
        out.push(Target {
            name: "reckle.root_proof",
            seeds: vec![root_proof.clone()],
            run: Box::new(move |b| {
                st.precheck(Some(&root), b).is_ok()
                    && NodeProof::root_from_bytes(c.root_key(), b).is_ok_and(|p| st.verify_for(&root, c.root_key(), &p).is_ok())
            }),
            short_run: None,
        });
    }
    {
        let c = c.clone();
        out.push(Target {
            name: "reckle.node_proof",
            seeds: vec![root_proof],
            run: Box::new(move |b| NodeProof::from_bytes(&c, b).is_ok()),
            short_run: None,
        });
    }
    {
        let (c, tree) = (c.clone(), tree.clone());
        out.push(Target {
            name: "reckle.lambda",
            seeds: vec![lambda.to_bytes()],
            run: Box::new(move |b| BatchProof::from_bytes(&c, b).is_ok_and(|l| l.check_against(&c, &*tree).is_ok())),
            short_run: None,
        });
    }
    out.push(Target {
        name: "reckle.root_key",
        seeds: vec![c.root_key().to_bytes()],
        run: Box::new(|b| RootKey::from_bytes(b).is_ok()),
        short_run: None,
    });
    out
}

//! The Reckle wrap end to end, timed (issue 29 item 5): constraints per component of the wrap
//! circuit, shrink time, wrap synthesis time, Pari setup and prove time, final proof size, single
//! verification, batch verification against one by one.
//!
//! ```text
//! cargo run --release -p plonky2-r1cs --example wrap_bench -- [--synth-only] [--batch 64] [--log-n 2 --log-bucket 1]
//! ```
//!
//! `--synth-only` stops after the constraint table (no Pari). The setup uses the fixed seed
//! [`WRAP_KEY_SEED`](plonky2_r1cs::wrap::WRAP_KEY_SEED), so the printed digest is
//! `PINNED_WRAP_VK_DIGEST` (also `--example print_wrap_key`). Measure peak memory with
//! `/usr/bin/time -v`.

use std::time::Instant;

use ark_bn254::Fr;
use ark_relations::gr1cs::{ConstraintSystem, OptimizationGoal};
use plonky2_r1cs::shrink::{NormalizeCircuit, ShrinkCircuit};
use plonky2_r1cs::wrap::{self, Expected, FinalProof, WrapCircuit, WrapKeys, WRAP_KEY_SEED};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn flag(name: &str) -> bool {
    std::env::args().any(|a| a == name)
}

/// A Reckle tree of `(ℓ, q)` with a batch of three leaves, and its root proof.
fn reckle_job(log_n: u32, log_bucket: u32) -> (reckle::Circuits, reckle::BatchProof, reckle::Tree) {
    let params = reckle::Params::new(log_n, log_bucket).expect("params");
    let t = Instant::now();
    let circuits = reckle::Circuits::build(params).expect("circuits");
    let values: Vec<u64> = (0..params.num_leaves()).map(|i| 1_000 + 7 * i).collect();
    let tree = reckle::Tree::build(params, values).expect("tree");
    let n = params.num_leaves();
    let mut batch = vec![0, n - 1];
    if n > 2 {
        batch.push(n / 2);
    }
    let proof = reckle::BatchProof::aggregate(&circuits, &tree, &batch).expect("aggregate");
    eprintln!("reckle (ℓ, q) = ({log_n}, {log_bucket}): circuits + batch proof {:.1} s", t.elapsed().as_secs_f64());
    (circuits, proof, tree)
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).expect("no NaN"));
    xs[xs.len() / 2]
}

fn main() {
    let log_n: u32 = arg("--log-n").and_then(|s| s.parse().ok()).unwrap_or(2);
    let log_bucket: u32 = arg("--log-bucket").and_then(|s| s.parse().ok()).unwrap_or(1);
    let batch_n: usize = arg("--batch").and_then(|s| s.parse().ok()).unwrap_or(64);

    let t = Instant::now();
    let shrink = ShrinkCircuit::build_default().expect("shrink circuit");
    let build_s = t.elapsed().as_secs_f64();
    eprintln!(
        "S built in {build_s:.1} s: degree 2^{}, normalize degree 2^{}",
        shrink.common().degree_bits(),
        shrink.normalize_common().degree_bits()
    );

    let (circuits, batch_proof, _tree) = reckle_job(log_n, log_bucket);
    let t = Instant::now();
    let n = NormalizeCircuit::build(circuits.root_key()).expect("normalize circuit");
    let build_n = t.elapsed().as_secs_f64();
    let root = batch_proof.root_proof();
    let t = Instant::now();
    let normalized = n.prove(root).expect("normalize proof");
    let prove_n = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let shrunk = shrink.prove(&n, &normalized).expect("shrink proof");
    let prove_s = t.elapsed().as_secs_f64();
    shrink.verify(&shrunk).expect("shrink proof verifies");
    let shrink_bytes = shrunk.to_bytes().len();

    let cs = ConstraintSystem::<Fr>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    let t = Instant::now();
    let report = WrapCircuit::new(&shrink, &shrunk).synthesize(cs.clone()).expect("synthesis");
    let synth_s = t.elapsed().as_secs_f64();
    let satisfied = cs.is_satisfied().expect("check");
    let total = cs.num_constraints();
    let (num_instance, num_witness) = (cs.num_instance_variables(), cs.num_witness_variables());
    drop(cs);

    println!("## Reckle wrap, (ℓ, q) = ({log_n}, {log_bucket})\n");
    println!("| wrap circuit component | constraints |\n|---|---|");
    for (name, k) in &report {
        println!("| {name} | {k} |");
    }
    println!("| **total** | **{total}** |");
    println!("\ninstance variables {num_instance}, witness variables {num_witness}, satisfied: {satisfied}\n");
    println!("| step | figure |\n|---|---|");
    println!("| build S (incl. reckle (1, 0) circuits and N_{{1,0}}) | {build_s:.1} s |");
    println!("| build N_{{ℓ,q}} | {build_n:.1} s |");
    println!("| prove N (normalize, Goldilocks, 2^{}) | {prove_n:.1} s |", n.common().degree_bits());
    println!("| prove S (shrink, Poseidon-BN254, 2^{}) | {prove_s:.1} s |", shrink.common().degree_bits());
    println!("| shrink proof size | {shrink_bytes} B |");
    println!("| wrap synthesis (witness + constraints, no matrices) | {synth_s:.1} s |");
    assert!(satisfied, "the wrap circuit must be satisfied by an honest shrink proof");
    if flag("--synth-only") {
        return;
    }

    // The setup lays out the constraints with another job's shrink proof than the one proved
    // ((ℓ, q) = (1, 0), `ShrinkCircuit::sample_proof`): the layout does not depend on it.
    let sample = shrink.sample_proof().expect("sample proof");
    let t = Instant::now();
    let keys = WrapKeys::setup_with_sample(&shrink, &sample, &mut ChaCha20Rng::from_seed(WRAP_KEY_SEED)).expect("setup");
    let setup_s = t.elapsed().as_secs_f64();
    drop(sample);
    println!("| Pari setup (BN254, SR1CS {} rows, domain 2^{}) | {setup_s:.1} s |", keys.pk.sr1cs.num_rows(), keys.vk.domain_size.trailing_zeros());
    let digest = keys.vk_digest().to_string();
    println!("| wrap vk digest (seed `WRAP_KEY_SEED`) | {}…, pinned: {} |", &digest[..16], digest == wrap::PINNED_WRAP_VK_DIGEST);
    let mut rng = ChaCha20Rng::from_seed([7; 32]);
    let t = Instant::now();
    let fp = wrap::prove_shrunk(&keys.pk, &shrink, circuits.params(), &shrunk, &mut rng).expect("prove");
    let pari_prove_s = t.elapsed().as_secs_f64();
    println!("| Pari prove (synthesis included) | {pari_prove_s:.1} s |");
    let bytes = fp.to_bytes();
    println!(
        "| final proof size | {} B: Pari proof {} B + public values and header {} B |",
        bytes.len(),
        fp.proof.compressed_size(),
        bytes.len() - fp.proof.compressed_size()
    );
    assert_eq!(FinalProof::from_bytes(&bytes).expect("parse"), fp);
    let pvk = keys.vk.prepare().expect("prepare");
    let expected = Expected { c: fp.public.c, circuit_id: reckle::Digest::from_hash(n.circuit_id()) };
    let mut single = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        wrap::verify(&pvk, &expected, &fp).expect("verify");
        single.push(t.elapsed().as_secs_f64());
    }
    let single_ms = median(single) * 1e3;
    println!("| single verify (median of 200) | {single_ms:.2} ms |");

    // Batch of `batch_n` final proofs (the same proof repeated; Pari's batch check weights each
    // with its own random ρ, so this costs what distinct proofs cost) against one by one.
    const RUNS: usize = 15;
    let items: Vec<(Expected, &FinalProof)> = (0..batch_n).map(|_| (expected, &fp)).collect();
    let mut one_by_one = Vec::new();
    let mut batched = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        for (e, p) in &items {
            wrap::verify(&pvk, e, p).expect("verify");
        }
        one_by_one.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        wrap::batch_verify(&pvk, &items, &mut rng).expect("batch verify");
        batched.push(t.elapsed().as_secs_f64());
    }
    let (a, b) = (median(one_by_one), median(batched));
    println!(
        "| verify {batch_n} proofs: one by one / batch (median of {RUNS}, interleaved) | {:.1} ms / {:.1} ms = {:.1}× ({:.0} µs per proof batched) |",
        a * 1e3,
        b * 1e3,
        a / b,
        b * 1e6 / batch_n as f64
    );
}

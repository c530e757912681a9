//! The wrap circuit's size against [`hekaton::wrap::rows_bound`], the bound the platform checks
//! a `--final` job against at submission: for each spec, the key shapes, the wrap's R1CS
//! constraints, its SR1CS rows (what sizes the Pari domain), the bound, and the BW6-767 domain.
//!
//! `cargo run --release -p hekaton --example wrap_rows -- [--k 1,2,3,4,6]`

use ark_bls12_381::{Bls12_381, Config, Fq, Fr};
use hekaton::spec::CircuitSpec;
use hekaton::workflow;
use hekaton::wrap::{self, WrapCircuit};
use rand::SeedableRng;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let ks: Vec<usize> = args
        .iter()
        .position(|a| a == "--k")
        .and_then(|i| args.get(i + 1))
        .map_or("1,2,3,4,6".into(), |s| s.clone())
        .split(',')
        .map(|s| s.parse().expect("--k takes numbers"))
        .collect();
    let mut specs: Vec<CircuitSpec> = ks.iter().map(|&k| CircuitSpec::Synthetic { subcircuits: k, steps: 4, wires: 2 }).collect();
    specs.push(CircuitSpec::MerkleUpdate { depth: 4, updates: 1, parts: 2 });
    specs.push(CircuitSpec::MerkleUpdate { depth: 4, updates: 2, parts: 2 });
    println!("| spec | k | key shapes | |x| | SR1CS rows | rows_bound | BW6-767 domain |");
    println!("|---|---|---|---|---|---|---|");
    for spec in specs {
        let circuit = spec.build::<Fr>(1).unwrap();
        let (_, vk) = workflow::setup::<Bls12_381, _, _>(&circuit, &mut rand_chacha::ChaCha20Rng::seed_from_u64(1)).unwrap();
        let sr1cs = pari::r1cs::synthesize_setup::<Fq, _>(WrapCircuit::<Config>::blank(&vk).unwrap()).unwrap();
        let k = spec.num_subcircuits();
        let bound = wrap::rows_bound(k, vk.vks.len(), vk.layout.num_public_inputs as usize);
        let domain = pari::domain::Domain::<Fq>::new(sr1cs.num_rows()).map(|d| d.size());
        println!(
            "| {} | {k} | {} | {} | {} | {bound} | {domain:?} |",
            serde_json::to_string(&spec).unwrap(),
            vk.vks.len(),
            vk.layout.num_public_inputs,
            sr1cs.num_rows(),
        );
        assert!(sr1cs.num_rows() <= bound, "rows_bound is not a bound for {spec:?}");
    }
}

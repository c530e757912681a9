//! Prove and verify times and proof sizes of random satisfiable circuits, on BLS12-381:
//!
//! `cargo run --release -p hyperplonk --example bench -- [MIN_MU] [MAX_MU]` (default 10 16)
//!
//! One insecure setup for `2^MAX_MU` gates serves every size; each row is one circuit with
//! 16 public inputs, one proof, one verification (wall-clock, all threads), then the
//! prover's time by step ([`hyperplonk::ProverTimings`]).

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Fr};
use hyperplonk::{files, preprocess, prove_timed, random, setup_insecure_from_seed, verify};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers of variables"))
        .collect();
    let (lo, hi) = (
        args.first().copied().unwrap_or(10),
        args.get(1).copied().unwrap_or(16),
    );
    let t = Instant::now();
    let srs = setup_insecure_from_seed::<Bls12_381>(hi, 1).expect("setup");
    println!("setup for 2^{hi} gates: {:.2} s", t.elapsed().as_secs_f64());
    println!("| gates | preprocess (s) | prove (s) | verify (ms) | proof (bytes) |");
    println!("|---|---|---|---|---|");
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    let mut steps = Vec::new();
    for mu in lo..=hi {
        let (circuit, public, witness) =
            random::satisfiable::<Fr, _>(mu, 16, &mut rng).expect("circuit");
        let t = Instant::now();
        let (pk, vk) = preprocess(&srs, &circuit).expect("index");
        let t_index = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let (proof, timings) = prove_timed(&pk, &public, &witness).expect("prove");
        steps.push((mu, timings));
        let t_prove = t.elapsed().as_secs_f64();
        let t = Instant::now();
        verify(&vk, &public, &proof).expect("verify");
        let t_verify = t.elapsed().as_secs_f64() * 1e3;
        let size = files::proof_to_bytes(&proof).len();
        println!("| 2^{mu} | {t_index:.2} | {t_prove:.2} | {t_verify:.1} | {size} |");
    }
    println!();
    println!("prover steps (s):");
    println!("| gates | witness check | witness MSMs | N, D, φ, π | φ, π MSMs | ZeroCheck | batch evals | OpenCheck | opening |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (mu, t) in steps {
        let cols = [
            t.witness_check,
            t.witness_commit,
            t.perm_tables,
            t.perm_commit,
            t.zerocheck,
            t.batch_evals,
            t.opencheck,
            t.opening,
        ];
        let cells: Vec<String> = cols
            .iter()
            .map(|d| format!("{:.3}", d.as_secs_f64()))
            .collect();
        println!("| 2^{mu} | {} |", cells.join(" | "));
    }
}

//! What cross-job batch verification saves the aggregator (issue 14): `J` jobs' bundles of `m`
//! proofs each under one key, verified one batch per bundle (a batch window of 0, as before)
//! against all of them in shared batches (the bundles arrive together; a 5 ms window). Same
//! proofs, same process, both sides timed from the first call to the last verdict, median of 5.
//!
//! `cargo run --release -p platform --example batcher_bench -- [--jobs 10,100] [--per-job 1,4,32]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use ark_bn254::{Bn254, Fr};
use pari::circuits::CircuitFamily;
use platform::batcher::VerifyBatcher;
use rand::SeedableRng;

fn list(name: &str, default: &str) -> Vec<usize> {
    let v: Vec<String> = std::env::args().collect();
    let s = v.iter().position(|a| a == name).and_then(|i| v.get(i + 1).cloned()).unwrap_or_else(|| default.to_string());
    s.split(',').map(|x| x.trim().parse().unwrap_or_else(|_| panic!("{name}: {x:?} is not a number"))).collect()
}

type Items = Vec<(Vec<Fr>, pari::Proof<Bn254>)>;

async fn time(window: Duration, vk: &pari::VerifyingKey<Bn254>, bundles: &[Items]) -> Duration {
    let b = Arc::new(VerifyBatcher::new(window));
    let start = Instant::now();
    let mut calls = Vec::new();
    for items in bundles {
        let (b, vk, items) = (b.clone(), vk.clone(), items.clone());
        calls.push(tokio::spawn(async move { b.verify(vk, items).await.unwrap() }));
    }
    for c in calls {
        assert!(c.await.unwrap().is_empty(), "a good proof failed");
    }
    start.elapsed()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let family = CircuitFamily::Chain { steps: 64 };
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let (pk, vk) = pari::setup::<Bn254, _, _>(family.blank::<Fr>(), &mut rng).unwrap();
    let (jobs, per_job) = (list("--jobs", "10,100"), list("--per-job", "1,4,32"));
    let most = jobs.iter().max().unwrap() * per_job.iter().max().unwrap();
    let proofs: Items = (0..most as u64)
        .map(|s| {
            let (c, x) = family.instance::<Fr>(s);
            (x, pari::prove(&pk, c, &mut rng).unwrap())
        })
        .collect();
    println!("| jobs | proofs/job | one batch per bundle | shared batches (5 ms window) | ratio |");
    println!("|---:|---:|---:|---:|---:|");
    for &j in &jobs {
        for &m in &per_job {
            let bundles: Vec<Items> = (0..j).map(|i| proofs[i * m..(i + 1) * m].to_vec()).collect();
            let (mut alone, mut shared) = (Vec::new(), Vec::new());
            for _ in 0..5 {
                alone.push(time(Duration::ZERO, &vk, &bundles).await);
                shared.push(time(Duration::from_millis(5), &vk, &bundles).await);
            }
            let (a, s) = (median(alone), median(shared));
            println!("| {j} | {m} | {:.1} ms | {:.1} ms | {:.1}× |", a.as_secs_f64() * 1e3, s.as_secs_f64() * 1e3, a.as_secs_f64() / s.as_secs_f64());
        }
    }
}

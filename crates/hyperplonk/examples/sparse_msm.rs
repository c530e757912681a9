//! What the sparse-scalar MSM (zeros skipped, ones added, the rest bucketed; zkSpeed §3.3.1)
//! saves over the dense one, on BLS12-381, measured in one run:
//!
//! `cargo run --release -p hyperplonk --example sparse_msm -- [PROVE_MU] [MSM_MU…]`
//! (default `16 16 18`)
//!
//! 1. One witness-like column of `2^μ` scalars for each `MSM_MU` (10% full-width, 45% zeros,
//!    45% ones), committed with [`kernels::commit`] and [`kernels::commit_sparse`] (best of
//!    three each; the two commitments are checked equal).
//! 2. One proof of a `2^PROVE_MU`-gate circuit whose witness has that distribution
//!    ([`random::sparse_satisfiable`]), with the dense and then the sparse witness MSMs
//!    ([`WitnessMsm`]), best of two each.

use std::time::{Duration, Instant};

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::UniformRand;
use hyperplonk::{kernels, preprocess, prove_timed_with, random, setup_insecure_from_seed, verify};
use hyperplonk::{ProverTimings, WitnessMsm};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const DENSE: f64 = 0.1;

fn best<T>(reps: usize, mut f: impl FnMut() -> T) -> (T, Duration) {
    let mut out = None;
    let mut fastest = Duration::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        let v = f();
        fastest = fastest.min(t.elapsed());
        out = Some(v);
    }
    (out.expect("reps > 0"), fastest)
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers of variables"))
        .collect();
    let prove_mu = args.first().copied().unwrap_or(16);
    let msm_mus: Vec<usize> = if args.len() > 1 { args[1..].to_vec() } else { vec![16, 18] };
    let max = msm_mus.iter().copied().chain([prove_mu]).max().unwrap_or(prove_mu);
    let t = Instant::now();
    let srs = setup_insecure_from_seed::<Bls12_381>(max, 1).expect("setup");
    println!("setup for 2^{max}: {:.1} s, {} threads", t.elapsed().as_secs_f64(), rayon_threads());
    let mut rng = ChaCha20Rng::seed_from_u64(3);

    println!();
    println!("commitment to one column, {:.0}% full-width scalars (best of 3):", DENSE * 100.0);
    println!("| column | dense MSM (ms) | sparse MSM (ms) | dense / sparse |");
    println!("|---|---|---|---|");
    for &mu in &msm_mus {
        let column: Vec<Fr> = (0..1usize << mu)
            .map(|_| {
                if rng.gen_bool(DENSE) {
                    Fr::rand(&mut rng)
                } else {
                    Fr::from(rng.gen_bool(0.5) as u64)
                }
            })
            .collect();
        let (d, t_dense) = best(3, || kernels::commit(&srs.ck, &column).expect("commit"));
        let (s, t_sparse) = best(3, || kernels::commit_sparse(&srs.ck, &column).expect("commit"));
        assert_eq!(d, s, "the sparse commitment differs");
        println!(
            "| 2^{mu} | {:.1} | {:.1} | {:.2} |",
            ms(t_dense),
            ms(t_sparse),
            t_dense.as_secs_f64() / t_sparse.as_secs_f64()
        );
    }

    println!();
    let (circuit, public, witness) =
        random::sparse_satisfiable::<Fr, _>(prove_mu, 16, DENSE, &mut rng).expect("circuit");
    let (pk, vk) = preprocess(&srs, &circuit).expect("index");
    let run = |msm| {
        best(2, || {
            prove_timed_with(&pk, &public, &witness, msm).expect("prove")
        })
    };
    let ((proof_d, steps_d), t_d): ((_, ProverTimings), _) = run(WitnessMsm::Dense);
    let ((proof_s, steps_s), t_s) = run(WitnessMsm::Sparse);
    assert_eq!(proof_d, proof_s, "the two provers' proofs differ");
    verify(&vk, &public, &proof_s).expect("verify");
    println!(
        "whole proof, 2^{prove_mu} gates, {:.0}% full-width witness values (best of 2):",
        DENSE * 100.0
    );
    println!("| witness MSMs | witness MSMs (ms) | prove (s) |");
    println!("|---|---|---|");
    println!("| dense | {:.1} | {:.2} |", ms(steps_d.witness_commit), t_d.as_secs_f64());
    println!("| sparse | {:.1} | {:.2} |", ms(steps_s.witness_commit), t_s.as_secs_f64());
    println!(
        "| dense / sparse | {:.2} | {:.3} |",
        steps_d.witness_commit.as_secs_f64() / steps_s.witness_commit.as_secs_f64(),
        t_d.as_secs_f64() / t_s.as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

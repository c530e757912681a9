//! What the sparse-scalar MSM (zeros skipped, ones added, the rest bucketed; zkSpeed §3.3.1)
//! saves over the dense one, on BLS12-381, measured in one run:
//!
//! `cargo run --release -p hyperplonk --example sparse_msm -- [PROVE_MU] [MSM_MU…]`
//! (default `16 16 18`)
//!
//! 1. One witness-like column of `2^μ` scalars for each `MSM_MU` (10% full-width, 45% zeros,
//!    45% ones), committed with [`kernels::commit`] and [`kernels::commit_sparse`]
//!    (alternately, best of five each; the two commitments are checked equal).
//! 2. One proof of a `2^PROVE_MU`-gate circuit whose witness has that distribution
//!    ([`random::sparse_satisfiable`]), with the dense and then the sparse witness MSMs
//!    ([`WitnessMsm`]), alternately, best of three each.

use std::time::{Duration, Instant};

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::UniformRand;
use hyperplonk::{kernels, preprocess, prove_timed_with, random, setup_insecure_from_seed, verify};
use hyperplonk::{ProverTimings, WitnessMsm};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

const DENSE: f64 = 0.1;

/// Runs `a` and `b` alternately `reps` times each (so that a busy machine slows both alike);
/// their last results and best times.
fn best_of_both<A, B>(
    reps: usize,
    mut a: impl FnMut() -> A,
    mut b: impl FnMut() -> B,
) -> ((A, Duration), (B, Duration)) {
    let (mut out_a, mut out_b) = (None, None);
    let (mut t_a, mut t_b) = (Duration::MAX, Duration::MAX);
    for _ in 0..reps.max(1) {
        let t = Instant::now();
        out_a = Some(a());
        t_a = t_a.min(t.elapsed());
        let t = Instant::now();
        out_b = Some(b());
        t_b = t_b.min(t.elapsed());
    }
    match (out_a, out_b) {
        (Some(x), Some(y)) => ((x, t_a), (y, t_b)),
        _ => unreachable!("at least one repetition ran"),
    }
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers of variables"))
        .collect();
    let prove_mu = args.first().copied().unwrap_or(16);
    let msm_mus: Vec<usize> = if args.len() > 1 {
        args[1..].to_vec()
    } else {
        vec![16, 18]
    };
    let max = msm_mus
        .iter()
        .copied()
        .chain([prove_mu])
        .max()
        .unwrap_or(prove_mu);
    let t = Instant::now();
    let srs = setup_insecure_from_seed::<Bls12_381>(max, 1).expect("setup");
    println!(
        "setup for 2^{max}: {:.1} s, {} threads",
        t.elapsed().as_secs_f64(),
        rayon_threads()
    );
    let mut rng = ChaCha20Rng::seed_from_u64(3);

    println!();
    println!(
        "commitment to one column, {:.0}% full-width scalars (best of 5, alternating):",
        DENSE * 100.0
    );
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
        let ((d, t_dense), (s, t_sparse)) = best_of_both(
            5,
            || kernels::commit(&srs.ck, &column).expect("commit"),
            || kernels::commit_sparse(&srs.ck, &column).expect("commit"),
        );
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
    // Alternately, best of three: the whole prove and (separately) its witness-MSM step.
    let mut best = [(Duration::MAX, Duration::MAX); 2];
    let mut proofs = Vec::new();
    for _ in 0..3 {
        for (k, msm) in [WitnessMsm::Dense, WitnessMsm::Sparse]
            .into_iter()
            .enumerate()
        {
            let t = Instant::now();
            let (proof, steps): (_, ProverTimings) =
                prove_timed_with(&pk, &public, &witness, msm).expect("prove");
            best[k] = (
                best[k].0.min(t.elapsed()),
                best[k].1.min(steps.witness_commit),
            );
            proofs.push(proof);
        }
    }
    assert!(
        proofs.windows(2).all(|p| p[0] == p[1]),
        "the two provers' proofs differ"
    );
    verify(&vk, &public, &proofs[0]).expect("verify");
    let [(t_d, msm_d), (t_s, msm_s)] = best;
    println!(
        "whole proof, 2^{prove_mu} gates, {:.0}% full-width witness values (best of 3 each, alternating):",
        DENSE * 100.0
    );
    println!("| witness MSMs | witness MSMs (ms) | prove (s) |");
    println!("|---|---|---|");
    println!("| dense | {:.1} | {:.2} |", ms(msm_d), t_d.as_secs_f64());
    println!("| sparse | {:.1} | {:.2} |", ms(msm_s), t_s.as_secs_f64());
    println!(
        "| dense / sparse | {:.2} | {:.3} |",
        msm_d.as_secs_f64() / msm_s.as_secs_f64(),
        t_d.as_secs_f64() / t_s.as_secs_f64()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn rayon_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

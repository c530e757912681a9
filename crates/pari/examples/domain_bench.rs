//! FFT cost per point on the two outer curves of a BLS12 2-chain: BW6-767's scalar field
//! (BLS12-381's `F_q`, two-adicity 1: smooth domains, with the Rader radix 10177 above
//! 214,038 points) against BW6-761's (BLS12-377's `F_q`, two-adicity 46: arkworks' radix-2).
//!
//! `cargo run --release -p pari --example domain_bench -- [--max N] [--reps R] [--sizes 65000,214038]`
//!
//! For each domain: its order, radices, and the median time of a coset FFT (the prover's
//! transform; an inverse costs the same) per point, with the ratio to the radix-2 domain of
//! the nearest size in the same run; for the smooth domains also the same transform by the
//! butterflies as they were before issue 60 ([`Domain::baseline`]).

use std::time::Instant;

use pari::domain::Domain;
use rand::SeedableRng;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn per_point<F: ark_ff::PrimeField>(d: &Domain<F>, reps: usize) -> f64 {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let coeffs: Vec<F> = (0..d.size()).map(|_| F::rand(&mut rng)).collect();
    // One untimed run builds the plan (the Rader kernels) once per domain.
    let _ = d.coset_fft(F::GENERATOR, &coeffs);
    let mut t: Vec<f64> = (0..reps)
        .map(|_| {
            let s = Instant::now();
            std::hint::black_box(d.coset_fft(F::GENERATOR, &coeffs));
            s.elapsed().as_secs_f64()
        })
        .collect();
    t.sort_by(|a, b| a.partial_cmp(b).unwrap());
    t[t.len() / 2] / d.size() as f64
}

fn main() {
    let max: usize = arg("--max").map_or(4_300_000, |s| s.parse().expect("--max"));
    let reps: usize = arg("--reps").map_or(3, |s| s.parse().expect("--reps"));
    type Fq381 = ark_bls12_381::Fq;
    type Fr761 = ark_bw6_761::Fr;
    let mut radix2: Vec<(usize, f64)> = Vec::new();
    println!("| field | n | radices | coset FFT per point | vs radix-2 of nearest size | before issue 60 | speed-up |");
    println!("|---|---|---|---|---|---|---|");
    for log in [16usize, 18, 20, 22] {
        let n = 1 << log;
        if n > max {
            break;
        }
        let d = Domain::<Fr761>::new(n).unwrap();
        let t = per_point(&d, reps);
        radix2.push((n, t));
        println!("| BW6-761 Fr | {n} (2^{log}) | 2 | {:.2} µs | 1 | | |", t * 1e6);
    }
    let sizes: Vec<usize> = arg("--sizes").map_or(vec![65_000, 214_038, 335_841, 671_682, 2_574_781, 4_213_278], |s| {
        s.split(',').map(|x| x.parse().expect("--sizes")).collect()
    });
    for n in sizes {
        if n > max {
            break;
        }
        let d = Domain::<Fq381>::new(n).unwrap();
        let radices = match &d {
            Domain::Smooth(s) => format!("{:?}", s.radices()),
            Domain::Radix2(_) => "2".into(),
        };
        let t = per_point(&d, reps);
        let before = per_point(&d.clone().baseline(), reps);
        let near = radix2
            .iter()
            .min_by(|a, b| {
                let da = (a.0 as f64 / d.size() as f64).ln().abs();
                let db = (b.0 as f64 / d.size() as f64).ln().abs();
                da.partial_cmp(&db).unwrap()
            })
            .copied();
        let ratio = near.map_or("–".into(), |(m, r)| format!("{:.1}× (2^{})", t / r, m.trailing_zeros()));
        println!(
            "| BW6-767 Fr = BLS12-381 Fq | {} | {radices} | {:.2} µs | {ratio} | {:.2} µs | {:.2}× |",
            d.size(),
            t * 1e6,
            before * 1e6,
            before / t
        );
    }
}

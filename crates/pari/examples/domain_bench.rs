//! FFT cost per point on the two outer curves of a BLS12 2-chain: BW6-767's scalar field
//! (BLS12-381's `F_q`, two-adicity 1: smooth domains, with the Rader radix 10177 above
//! 214,038 points) against BW6-761's (BLS12-377's `F_q`, two-adicity 46: arkworks' radix-2).
//!
//! `cargo run --release -p pari --example domain_bench -- [--max N] [--reps R] [--sizes 65000,214038]`
//!
//! For each domain: its order, radices, and the median time of a coset FFT (the prover's
//! transform; an inverse costs the same) per point, with the ratio to the radix-2 domain of
//! the nearest size in the same run; for the smooth domains also the same transform by the
//! butterflies as they were before issue 60 ([`Domain::baseline`]). A listed size that is an
//! order of the field is measured as it is (`Domain::of_order`, e.g. 183,186 = 10177·18, which
//! `Domain::new` does not pick), any other as `Domain::new` rounds it up.

use std::time::Instant;

use pari::domain::Domain;
use rand::SeedableRng;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// Median seconds per point of a coset FFT (the prover's transform; an inverse costs the same)
/// on each domain, the domains' repetitions interleaved so that a change of the machine's load
/// falls on all of them alike. One untimed run first builds each plan (the Rader kernels).
fn per_point<F: ark_ff::PrimeField>(domains: &[Domain<F>], reps: usize) -> Vec<f64> {
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
    let coeffs: Vec<Vec<F>> = domains.iter().map(|d| (0..d.size()).map(|_| F::rand(&mut rng)).collect()).collect();
    for (d, c) in domains.iter().zip(&coeffs) {
        let _ = d.coset_fft(F::GENERATOR, c);
    }
    let mut t = vec![Vec::new(); domains.len()];
    for _ in 0..reps {
        for (i, (d, c)) in domains.iter().zip(&coeffs).enumerate() {
            let s = Instant::now();
            std::hint::black_box(d.coset_fft(F::GENERATOR, c));
            t[i].push(s.elapsed().as_secs_f64() / d.size() as f64);
        }
    }
    t.into_iter()
        .map(|mut v| {
            v.sort_by(|a, b| a.partial_cmp(b).unwrap());
            v[v.len() / 2]
        })
        .collect()
}

fn main() {
    let max: usize = arg("--max").map_or(4_300_000, |s| s.parse().expect("--max"));
    let reps: usize = arg("--reps").map_or(3, |s| s.parse().expect("--reps"));
    type Fq381 = ark_bls12_381::Fq;
    type Fr761 = ark_bw6_761::Fr;
    println!("| field | n | radices | coset FFT per point | vs radix-2 of nearest size | before issue 60 | speed-up |");
    println!("|---|---|---|---|---|---|---|");
    let r2: Vec<Domain<Fr761>> = [16usize, 18, 20, 22].iter().map(|l| 1usize << l).filter(|&n| n <= max).map(|n| Domain::new(n).unwrap()).collect();
    let radix2: Vec<(usize, f64)> = r2.iter().map(|d| d.size()).zip(per_point(&r2, reps)).collect();
    for (n, t) in &radix2 {
        println!("| BW6-761 Fr | {n} (2^{}) | 2 | {:.2} µs | 1 | | |", n.trailing_zeros(), t * 1e6);
    }
    let sizes: Vec<usize> = arg("--sizes").map_or(vec![65_000, 214_038, 335_841, 671_682, 2_574_781, 4_213_278], |s| {
        s.split(',').map(|x| x.parse().expect("--sizes")).collect()
    });
    // A listed order is taken as it is (`Domain::of_order`), any other size as `Domain::new` rounds it.
    let smooth: Vec<Domain<Fq381>> = sizes
        .into_iter()
        .filter(|&n| n <= max)
        .map(|n| Domain::<Fq381>::of_order(n).or_else(|| Domain::new(n)).unwrap())
        .collect();
    let before: Vec<Domain<Fq381>> = smooth.iter().map(|d| d.clone().baseline()).collect();
    let all: Vec<Domain<Fq381>> = smooth.iter().chain(&before).cloned().collect();
    let times = per_point(&all, reps);
    for (i, d) in smooth.iter().enumerate() {
        let radices = match d {
            Domain::Smooth(s) => format!("{:?}", s.radices()),
            Domain::Radix2(_) => "2".into(),
        };
        let (t, before) = (times[i], times[smooth.len() + i]);
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

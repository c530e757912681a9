//! Proving-key load time: fully checked (`ProvingKey::from_bytes`: every point on the curve and
//! in the subgroup, plus shape) vs by recorded digest (`ProvingKey::from_bytes_with_digest`:
//! hash, compare, deserialize without point checks, shape checks).
//!
//! `cargo run --release -p pari --example pk_load -- [log2 rows, default 14] [repeats, default 5]`

use std::time::Instant;

use ark_std::rand::SeedableRng;
use pari::circuits::CircuitFamily;
use pari::{KeyDigest, ProvingKey};
use rand_chacha::ChaCha20Rng;

type E = ark_bls12_381::Bls12_381;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mut args = std::env::args().skip(1);
    let log_rows: u32 = args.next().map(|s| s.parse().expect("log2 rows")).unwrap_or(14);
    let repeats: usize = args.next().map(|s| s.parse().expect("repeats")).unwrap_or(5);
    // Chain of s steps: M = s + 1 R1CS constraints, 2M + 2 SR1CS rows.
    let steps = (1usize << (log_rows - 1)) - 2;
    let family = CircuitFamily::Chain { steps };
    let (pk, vk) = pari::setup::<E, _, _>(family.blank(), &mut ChaCha20Rng::seed_from_u64(1)).expect("setup");
    let bytes = pk.to_bytes();
    println!(
        "BLS12-381, chain {steps} steps: {} SR1CS rows, n = {}, pk {:.1} MiB, {} threads",
        pk.sr1cs.num_rows(),
        vk.domain_size,
        bytes.len() as f64 / (1 << 20) as f64,
        rayon::current_num_threads()
    );
    let digest = KeyDigest::of_bytes(&bytes);
    let raw = pk.to_bytes_uncompressed();
    let raw_digest = KeyDigest::of_bytes(&raw);
    let (mut checked, mut by_digest, mut by_digest_raw) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..repeats {
        let t = Instant::now();
        let a = ProvingKey::<E>::from_bytes(&bytes).expect("checked load");
        checked.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let b = ProvingKey::<E>::from_bytes_with_digest(&bytes, &digest).expect("load by digest");
        by_digest.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let c = ProvingKey::<E>::from_bytes_with_digest(&raw, &raw_digest).expect("load uncompressed by digest");
        by_digest_raw.push(t.elapsed().as_secs_f64());
        assert!(a == b && b == c);
    }
    let (c, d, r) = (median(checked), median(by_digest), median(by_digest_raw));
    println!("checked load, compressed        (median of {repeats}): {:8.1} ms", c * 1e3);
    println!("by digest, compressed           (median of {repeats}): {:8.1} ms ({:.1}x faster)", d * 1e3, c / d);
    println!(
        "by digest, uncompressed ({:.1} MiB) (median of {repeats}): {:8.1} ms ({:.1}x faster)",
        raw.len() as f64 / (1 << 20) as f64,
        r * 1e3,
        c / r
    );
}

//! Pari benchmark: prints markdown tables.
//!
//! ```text
//! cargo run --release -p pari --example pari_bench -- [--batch-sizes 2,32,512,4096,65536]
//!     [--individual-cap 4096] [--prove-logs 12,14,16] [--curves bls12-381,bn254]
//! ```
//!
//! * Individual vs batch verification under one key, 1 thread and all threads, with the
//!   speed-up. Proofs (of a 1-step chain circuit) are generated once and cached under
//!   `$CARGO_TARGET_DIR/pari-bench/`. Individual verification is linear in N, so for N above
//!   `--individual-cap` it is timed on the first `cap` proofs and scaled (marked `*`).
//! * Prove time of Pari vs ark-groth16 on the same R1CS (chain circuit, 2^k constraints).
//! * Proof sizes.

use std::path::PathBuf;
use std::time::Instant;

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_serialize::CanonicalSerialize;
use ark_snark::SNARK;
use pari::circuits::CircuitFamily;
use pari::{batch_verify, prove, setup, verify, Proof, ProvingKey, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use rayon::prelude::*;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn list(name: &str, default: &str) -> Vec<String> {
    arg(name).unwrap_or_else(|| default.into()).split(',').filter(|s| !s.is_empty()).map(String::from).collect()
}

fn fmt(t: f64) -> String {
    if t < 1e-3 {
        format!("{:.1} µs", t * 1e6)
    } else if t < 1.0 {
        format!("{:.2} ms", t * 1e3)
    } else {
        format!("{t:.2} s")
    }
}

fn cache_dir() -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("target"));
    target.join("pari-bench")
}

/// `max_n` proofs of distinct chain instances under one key, cached on disk.
fn proofs<E: Pairing>(name: &str, max_n: usize) -> (VerifyingKey<E>, Vec<(Vec<E::ScalarField>, Proof<E>)>)
where
    E::ScalarField: Absorb,
{
    let family = CircuitFamily::Chain { steps: 1 };
    let dir = cache_dir();
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{name}-{max_n}.bin"));
    if let Ok(bytes) = std::fs::read(&path) {
        if let Some(parsed) = parse_cache::<E>(&bytes, max_n) {
            return parsed;
        }
    }
    let t = Instant::now();
    let (pk, vk): (ProvingKey<E>, VerifyingKey<E>) =
        setup(family.blank::<E::ScalarField>(), &mut ChaCha20Rng::seed_from_u64(1)).unwrap();
    // One plain OS thread per core, each proving its share in order. (A rayon `par_iter` over
    // the proofs lets workers steal whole proofs while waiting inside arkworks' own parallel
    // loops, nesting stacks until one overflows.)
    let workers = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1);
    let pk = &pk;
    let items: Vec<(Vec<E::ScalarField>, Proof<E>)> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                scope.spawn(move || {
                    (w as u64..max_n as u64)
                        .step_by(workers)
                        .map(|seed| {
                            let (c, x) = family.instance::<E::ScalarField>(seed);
                            (seed, x, prove(pk, c, &mut ChaCha20Rng::seed_from_u64(seed ^ 0xabcdef)).unwrap())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        let mut all: Vec<_> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
        all.sort_by_key(|(seed, _, _)| *seed);
        all.into_iter().map(|(_, x, p)| (x, p)).collect()
    });
    eprintln!("generated {max_n} {name} proofs in {}", fmt(t.elapsed().as_secs_f64()));
    let mut out = vk.to_bytes();
    let vk_len = out.len() as u64;
    out.splice(0..0, vk_len.to_le_bytes());
    for (x, p) in &items {
        x[0].serialize_compressed(&mut out).unwrap();
        out.extend_from_slice(&p.to_bytes());
    }
    let _ = std::fs::write(&path, out);
    (vk, items)
}

fn parse_cache<E: Pairing>(bytes: &[u8], n: usize) -> Option<(VerifyingKey<E>, Vec<(Vec<E::ScalarField>, Proof<E>)>)> {
    use ark_serialize::CanonicalDeserialize;
    let vk_len = u64::from_le_bytes(bytes.get(..8)?.try_into().ok()?) as usize;
    let vk = VerifyingKey::<E>::from_bytes(bytes.get(8..8 + vk_len)?).ok()?;
    let mut rest = &bytes[8 + vk_len..];
    let proof_len = Proof::<E>::to_bytes(&Proof { t: Default::default(), u: Default::default(), v_a: Default::default(), v_b: Default::default() }).len();
    let mut items = Vec::with_capacity(n);
    for _ in 0..n {
        let x = E::ScalarField::deserialize_compressed(&mut rest).ok()?;
        let p = Proof::<E>::from_bytes(rest.get(..proof_len)?).ok()?;
        rest = &rest[proof_len..];
        items.push((vec![x], p));
    }
    Some((vk, items))
}

fn in_pool<T: Send>(threads: usize, f: impl FnOnce() -> T + Send) -> T {
    rayon::ThreadPoolBuilder::new().num_threads(threads).stack_size(64 << 20).build().unwrap().install(f)
}

fn verification_table<E: Pairing>(name: &str, sizes: &[usize], cap: usize)
where
    E::ScalarField: Absorb,
{
    let max_n = *sizes.iter().max().unwrap();
    let (vk, items) = proofs::<E>(name, max_n);
    let pvk = vk.prepare().unwrap();
    let all = rayon::current_num_threads();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    println!("\n### {name}: verification of N proofs under one key\n");
    println!("| N | threads | individual (total) | batch (total) | batch per proof | speed-up |");
    println!("|---|---|---|---|---|---|");
    for &n in sizes {
        for threads in [1, all] {
            let refs: Vec<(&[E::ScalarField], &Proof<E>)> = items[..n].iter().map(|(x, p)| (x.as_slice(), p)).collect();
            let measured = n.min(cap);
            let (indiv, scaled) = in_pool(threads, || {
                let t = Instant::now();
                // One contiguous chunk per thread: a par_iter over single proofs would let a
                // worker waiting inside arkworks' parallel pairing steal more proofs, nesting
                // stacks thousands deep.
                let chunk = measured.div_ceil(threads);
                refs[..measured].par_chunks(chunk).for_each(|c| {
                    for (x, p) in c {
                        verify(&pvk, x, p).unwrap();
                    }
                });
                (t.elapsed().as_secs_f64() * n as f64 / measured as f64, measured < n)
            });
            let batch = in_pool(threads, || {
                // Best of 3 for small batches, 1 run for large ones.
                let runs = if n <= 4096 { 3 } else { 1 };
                (0..runs)
                    .map(|_| {
                        let t = Instant::now();
                        batch_verify(&pvk, &refs, &mut rng).unwrap();
                        t.elapsed().as_secs_f64()
                    })
                    .fold(f64::INFINITY, f64::min)
            });
            println!(
                "| {n} | {threads} | {}{} | {} | {} | {:.1}× |",
                fmt(indiv),
                if scaled { "*" } else { "" },
                fmt(batch),
                fmt(batch / n as f64),
                indiv / batch
            );
        }
    }
}

fn prove_table<E: Pairing>(name: &str, logs: &[u32])
where
    E::ScalarField: Absorb,
{
    println!("\n### {name}: prove time, Pari vs ark-groth16 on the same R1CS (chain circuit)\n");
    println!("| R1CS constraints (2^k − 2) | SR1CS rows | Pari setup | Pari prove | Groth16 setup | Groth16 prove | Pari / Groth16 prove |");
    println!("|---|---|---|---|---|---|---|");
    for &k in logs {
        // steps + 1 = 2^k − 2 R1CS constraints, so that neither prover pads to the next power of
        // two because of its few extra rows (Groth16: + instance; Pari: + outlined rows).
        let family = CircuitFamily::Chain { steps: (1usize << k) - 3 };
        let mut rng = ChaCha20Rng::seed_from_u64(k as u64);
        let t = Instant::now();
        let (pk, vk): (ProvingKey<E>, VerifyingKey<E>) = setup(family.blank::<E::ScalarField>(), &mut rng).unwrap();
        let pari_setup = t.elapsed().as_secs_f64();
        let (c, x) = family.instance::<E::ScalarField>(1);
        let t = Instant::now();
        let proof = prove(&pk, c.clone(), &mut rng).unwrap();
        let pari_prove = t.elapsed().as_secs_f64();
        verify(&vk.prepare().unwrap(), &x, &proof).unwrap();
        let t = Instant::now();
        let (gpk, gvk) = ark_groth16::Groth16::<E>::circuit_specific_setup(family.blank::<E::ScalarField>(), &mut rng).unwrap();
        let g_setup = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let gproof = ark_groth16::Groth16::<E>::prove(&gpk, c, &mut rng).unwrap();
        let g_prove = t.elapsed().as_secs_f64();
        assert!(ark_groth16::Groth16::<E>::verify(&gvk, &x, &gproof).unwrap());
        println!(
            "| 2^{k} | {} | {} | {} | {} | {} | {:.2}× |",
            pk.sr1cs.num_rows(),
            fmt(pari_setup),
            fmt(pari_prove),
            fmt(g_setup),
            fmt(g_prove),
            pari_prove / g_prove
        );
    }
}

fn sizes<E: Pairing>(name: &str)
where
    E::ScalarField: Absorb,
{
    let family = CircuitFamily::Chain { steps: 3 };
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (pk, _) = setup::<E, _, _>(family.blank::<E::ScalarField>(), &mut rng).unwrap();
    let (c, _) = family.instance::<E::ScalarField>(1);
    let p = prove(&pk, c.clone(), &mut rng).unwrap();
    let (gpk, _) = ark_groth16::Groth16::<E>::circuit_specific_setup(family.blank::<E::ScalarField>(), &mut rng).unwrap();
    let gp = ark_groth16::Groth16::<E>::prove(&gpk, c, &mut rng).unwrap();
    println!(
        "| {name} | {} B | {} B | {} B |",
        p.compressed_size(),
        p.to_bytes().len(),
        gp.compressed_size()
    );
}

fn main() {
    let curves = list("--curves", "bls12-381,bn254");
    let batch_sizes: Vec<usize> = list("--batch-sizes", "2,32,512,4096,65536").iter().map(|s| s.parse().unwrap()).collect();
    let cap: usize = arg("--individual-cap").map(|s| s.parse().unwrap()).unwrap_or(4096);
    let logs: Vec<u32> = list("--prove-logs", "12,14,16").iter().map(|s| s.parse().unwrap()).collect();
    println!("threads available: {}", rayon::current_num_threads());
    println!("\n### Proof sizes (compressed)\n");
    println!("| curve | Pari proof | Pari on the wire (with 5-byte tag) | Groth16 proof |");
    println!("|---|---|---|---|");
    for c in &curves {
        match c.as_str() {
            "bls12-381" => sizes::<ark_bls12_381::Bls12_381>("BLS12-381"),
            "bn254" => sizes::<ark_bn254::Bn254>("BN254"),
            other => panic!("unknown curve {other}"),
        }
    }
    for c in &curves {
        if batch_sizes.is_empty() {
            break;
        }
        match c.as_str() {
            "bls12-381" => verification_table::<ark_bls12_381::Bls12_381>("BLS12-381", &batch_sizes, cap),
            _ => verification_table::<ark_bn254::Bn254>("BN254", &batch_sizes, cap),
        }
    }
    for c in &curves {
        if logs.is_empty() {
            break;
        }
        match c.as_str() {
            "bls12-381" => prove_table::<ark_bls12_381::Bls12_381>("BLS12-381", &logs),
            _ => prove_table::<ark_bn254::Bn254>("BN254", &logs),
        }
    }
}

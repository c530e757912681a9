//! Pari benchmark: prints markdown tables.
//!
//! ```text
//! cargo run --release -p pari --example pari_bench -- [--batch-sizes 32,512,4096] [--large]
//!     [--runs 5] [--threads 1] [--single-cap 4096] [--curves bls12-381,bn254] [--breakdown]
//!     [--prove-logs 12,14,16]
//! ```
//!
//! * **Verification, bytes → verdict, both sides.** Every proof and public input is handed over
//!   as bytes (`Proof::to_bytes`, `batch::public_inputs_to_bytes`), as a verifier receives them.
//!   Single: each entry is parsed with full validation (`batch::parse_entry`: points on the
//!   curve and in the subgroup, canonical field elements) and verified by `verify`. Batch:
//!   `batch::verify_bytes` (parse with the same validation, batch check, bisection on failure)
//!   and its report must say every entry verified. Each side runs `--runs` times (default 5;
//!   the four measurements of one repetition are interleaved), the median is reported, per proof;
//!   every run covers at least 512 proofs on each side (a batch smaller than that is checked
//!   several times per run, single verification takes the first 512 proofs).
//!   The rayon pool has `--threads` threads (default 1). Single verification costs the same per
//!   proof at any N, so it is timed on the first `--single-cap` proofs (marked `*` when that is
//!   fewer than N). N = 65,536 is added by `--large` (proofs are generated once, in parallel,
//!   and cached under `$CARGO_TARGET_DIR/pari-bench/`).
//! * The same run also measures the code before the tuning (`verifier::baseline`,
//!   `batch::verify_bytes_baseline`: arkworks MSMs, untuned single check, serial parsing) so
//!   every ratio is between numbers measured together.
//! * `--breakdown`: per-proof cost of parsing, and the batch MSMs by strategy.
//! * `--prove-logs`: prove time of Pari vs ark-groth16 on the same R1CS (none by default).

use std::path::PathBuf;
use std::time::Instant;

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_serialize::CanonicalSerialize;
use ark_snark::SNARK;
use pari::batch::{parse_entry, public_inputs_to_bytes, verify_bytes, verify_bytes_baseline};
use pari::circuits::CircuitFamily;
use pari::msm::{msm, msm_u128, Accumulation, Pippenger};
use pari::verifier::baseline;
use pari::{prove, setup, verify, PreparedVerifyingKey, Proof, ProvingKey, VerifyingKey};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;

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

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time(f: impl FnOnce()) -> f64 {
    let t = Instant::now();
    f();
    t.elapsed().as_secs_f64()
}

/// Bytes → verdict for each entry on its own.
fn single_side<E: Pairing>(pvk: &PreparedVerifyingKey<E>, entries: &[(&[u8], &[u8])], tuned: bool) {
    for (p, x) in entries {
        let (x, proof) = parse_entry::<E>(p, x).expect("valid entry");
        let ok = if tuned { verify(pvk, &x, &proof) } else { baseline::verify(pvk, &x, &proof) };
        ok.expect("valid proof");
    }
}

/// Bytes → verdict for the whole batch.
fn batch_side<E: Pairing>(pvk: &PreparedVerifyingKey<E>, entries: &[(&[u8], &[u8])], tuned: bool, seed: u64) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let report =
        if tuned { verify_bytes(pvk, entries, &mut rng) } else { verify_bytes_baseline(pvk, entries, &mut rng) };
    assert!(report.all_verified() && report.total == entries.len(), "batch refused: {:?}", report.bad);
}

fn us(t: f64) -> String {
    if t < 1e-3 {
        format!("{:.1}", t * 1e6)
    } else {
        format!("{:.0}", t * 1e6)
    }
}

struct Opts {
    sizes: Vec<usize>,
    runs: usize,
    threads: Vec<usize>,
    single_cap: usize,
    breakdown: bool,
}

fn verification_table<E: Pairing>(name: &str, o: &Opts)
where
    E::ScalarField: Absorb,
{
    let max_n = *o.sizes.iter().max().unwrap();
    let (vk, items) = proofs::<E>(name, max_n);
    let pvk = vk.prepare().unwrap();
    let raw: Vec<(Vec<u8>, Vec<u8>)> = items.iter().map(|(x, p)| (p.to_bytes(), public_inputs_to_bytes::<E>(x))).collect();
    let entries: Vec<(&[u8], &[u8])> = raw.iter().map(|(p, x)| (p.as_slice(), x.as_slice())).collect();
    println!("\n### {name}: verification of N proofs under one key, bytes → verdict, median of {} runs\n", o.runs);
    println!("Per proof, in µs. Single: parse with validation + `verify`. Batch: `batch::verify_bytes`. Before: the untuned code (`verifier::baseline`, `batch::verify_bytes_baseline`), measured in the same run.\n");
    println!("| N | threads | single, tuned | batch | **batch vs tuned single** | single, before | batch, before | before: batch vs single | single speed-up | batch speed-up |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for &n in &o.sizes {
        for &threads in &o.threads {
            let m = n.min(o.single_cap);
            // A small batch is checked several times per run, so that each run covers at least
            // 512 proofs on both sides (a run of 32 batched proofs lasts a few milliseconds).
            let inner = 512usize.div_ceil(n).max(1);
            let m = if m < 512 { entries.len().min(512).max(m) } else { m };
            let (mut s_new, mut s_old, mut b_new, mut b_old) = (vec![], vec![], vec![], vec![]);
            in_pool(threads, || {
                for rep in 0..o.runs {
                    s_new.push(time(|| single_side(&pvk, &entries[..m], true)) / m as f64);
                    s_old.push(time(|| single_side(&pvk, &entries[..m], false)) / m as f64);
                    let batch = |tuned: bool| {
                        time(|| (0..inner).for_each(|i| batch_side(&pvk, &entries[..n], tuned, (rep * inner + i) as u64)))
                            / (inner * n) as f64
                    };
                    b_new.push(batch(true));
                    b_old.push(batch(false));
                }
            });
            let (s_new, s_old, b_new, b_old) = (median(s_new), median(s_old), median(b_new), median(b_old));
            let star = if m < n { "*" } else { "" };
            println!(
                "| {n} | {threads} | {}{star} | {} | **{:.1}×** | {}{star} | {} | {:.1}× | {:.2}× | {:.2}× |",
                us(s_new),
                us(b_new),
                s_new / b_new,
                us(s_old),
                us(b_old),
                s_old / b_old,
                s_old / s_new,
                b_old / b_new,
            );
        }
    }
    if o.sizes.iter().any(|&n| n > o.single_cap) {
        println!("\n`*`: single verification timed on the first {} proofs (its cost per proof does not depend on N).", o.single_cap);
    }
    if o.breakdown {
        breakdown::<E>(name, &pvk, &items, &entries, o);
    }
}

/// Where the per-proof time goes: parsing, single check, and the batch MSMs by strategy.
fn breakdown<E: Pairing>(
    name: &str,
    pvk: &PreparedVerifyingKey<E>,
    items: &[(Vec<E::ScalarField>, Proof<E>)],
    entries: &[(&[u8], &[u8])],
    o: &Opts,
) {
    println!("\n#### {name}: breakdown, µs per proof, 1 thread, median of {} runs\n", o.runs);
    let m = entries.len().min(o.single_cap).min(1024);
    let (mut parse, mut single, mut single_old, mut pairing) = (vec![], vec![], vec![], vec![]);
    in_pool(1, || {
        for _ in 0..o.runs {
            pairing.push(time(|| {
                for (_, p) in &items[..m] {
                    let out = E::multi_pairing([p.t, p.u, p.t], [pvk.delta_h_prep.clone(), pvk.tau_h_prep.clone(), pvk.h_prep.clone()]);
                    let _ = std::hint::black_box(out);
                }
            }) / m as f64);
            parse.push(time(|| {
                for (p, x) in &entries[..m] {
                    parse_entry::<E>(p, x).expect("valid");
                }
            }) / m as f64);
            single.push(time(|| {
                for (x, p) in &items[..m] {
                    verify(pvk, x, p).expect("valid");
                }
            }) / m as f64);
            single_old.push(time(|| {
                for (x, p) in &items[..m] {
                    baseline::verify(pvk, x, p).expect("valid");
                }
            }) / m as f64);
        }
    });
    println!("| parse with validation | single check, tuned (parsed) | single check, before (parsed) | its 3-pair multi-pairing alone |");
    println!("|---|---|---|---|");
    println!("| {} | {} | {} | {} |\n", us(median(parse)), us(median(single)), us(median(single_old)), us(median(pairing)));
    println!("| N | batch check of parsed proofs, tuned | before |");
    println!("|---|---|---|");
    for &n in &o.sizes {
        let refs: Vec<(&[E::ScalarField], &Proof<E>)> = items[..n].iter().map(|(x, p)| (x.as_slice(), p)).collect();
        let (mut new, mut old) = (vec![], vec![]);
        in_pool(1, || {
            for rep in 0..o.runs {
                let mut rng = ChaCha20Rng::seed_from_u64(rep as u64);
                new.push(time(|| pari::batch_verify(pvk, &refs, &mut rng).expect("valid")) / n as f64);
                old.push(time(|| baseline::batch_verify(pvk, &refs, &mut rng).expect("valid")) / n as f64);
            }
        });
        println!("| {n} | {} | {} |", us(median(new)), us(median(old)));
    }
    println!();
    println!("Batch MSMs, µs per point (batch-affine falls back to projective below {} points):\n", Pippenger::BATCH_AFFINE_MIN);
    println!("| N | MSM | arkworks (before) | Pippenger, projective buckets | Pippenger, batch-affine buckets |");
    println!("|---|---|---|---|---|");
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    for &n in &o.sizes {
        let bases: Vec<E::G1Affine> = items[..n].iter().map(|(_, p)| p.u).collect();
        let small: Vec<u128> = (0..n).map(|_| rng.gen()).collect();
        let full: Vec<E::ScalarField> = (0..n).map(|_| E::ScalarField::from(rng.gen::<u128>()) * E::ScalarField::from(rng.gen::<u128>()) + E::ScalarField::from(rng.gen::<u64>())).collect();
        let (mut a, mut p, mut b, mut fa, mut fp, mut fb) = (vec![], vec![], vec![], vec![], vec![], vec![]);
        in_pool(1, || {
            for _ in 0..o.runs {
                a.push(time(|| { std::hint::black_box(msm_u128::<E::G1>(&bases, &small)); }) / n as f64);
                p.push(time(|| { std::hint::black_box(Pippenger::from_u128(&small, Accumulation::Projective).run::<E::G1>(&bases)); }) / n as f64);
                b.push(time(|| { std::hint::black_box(Pippenger::from_u128(&small, Accumulation::BatchAffine).run::<E::G1>(&bases)); }) / n as f64);
                fa.push(time(|| { std::hint::black_box(msm::<E::G1>(&bases, &full)); }) / n as f64);
                fp.push(time(|| { std::hint::black_box(Pippenger::from_field(&full, Accumulation::Projective).run::<E::G1>(&bases)); }) / n as f64);
                fb.push(time(|| { std::hint::black_box(Pippenger::from_field(&full, Accumulation::BatchAffine).run::<E::G1>(&bases)); }) / n as f64);
            }
        });
        println!("| {n} | 128-bit | {} | {} | {} |", us(median(a)), us(median(p)), us(median(b)));
        println!("| {n} | full width | {} | {} | {} |", us(median(fa)), us(median(fp)), us(median(fb)));
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
    let mut batch_sizes: Vec<usize> = list("--batch-sizes", "32,512,4096").iter().map(|s| s.parse().unwrap()).collect();
    if std::env::args().any(|a| a == "--large") && !batch_sizes.contains(&65536) {
        batch_sizes.push(65536);
    }
    let opts = Opts {
        sizes: batch_sizes,
        runs: arg("--runs").map(|s| s.parse().unwrap()).unwrap_or(5),
        threads: list("--threads", "1").iter().map(|s| s.parse().unwrap()).collect(),
        single_cap: arg("--single-cap").map(|s| s.parse().unwrap()).unwrap_or(4096),
        breakdown: std::env::args().any(|a| a == "--breakdown"),
    };
    let logs: Vec<u32> = list("--prove-logs", "").iter().map(|s| s.parse().unwrap()).collect();
    println!("threads available: {}", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
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
        if opts.sizes.is_empty() {
            break;
        }
        match c.as_str() {
            "bls12-381" => verification_table::<ark_bls12_381::Bls12_381>("BLS12-381", &opts),
            _ => verification_table::<ark_bn254::Bn254>("BN254", &opts),
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

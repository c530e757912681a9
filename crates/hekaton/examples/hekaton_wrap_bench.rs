//! The depth-1 wrap: its size and cost for k subcircuits, and the batch verification of final
//! proofs against verifying them one by one.
//!
//! `cargo run --release -p hekaton --example hekaton_wrap_bench -- [--k 1,2,8] [--prove-max K] [--batch 64]`
//!
//! For each k: a Hekaton proof of the synthetic circuit (k subcircuits of 4 steps, 2 wires),
//! the number of distinct key shapes, the wrap circuit's R1CS constraints and the marginal
//! constraints per subcircuit against the previous row, its SR1CS rows and the BW6-767 evaluation domain they need (if one fits); for k ≤ `--prove-max`
//! (default 1) also the Pari setup, prove and verify times on BW6-767 and the final proof's
//! size. Then, with `--batch N` (default 64), N final proofs under one key verified one by one
//! and in one batch (every leaf-0 path natively plus one Pari batch check), median of 5 runs
//! each, bytes → verdict on both sides (parsing included). The N proofs are the one wrap proof
//! made above, proved N times if `--batch-distinct` is given, else N copies (the Pari batch
//! check's cost does not depend on whether proofs repeat).

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Config, Fr};
use ark_bw6_767::BW6_767;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem, SynthesisMode};
use hekaton::spec::CircuitSpec;
use hekaton::workflow;
use hekaton::wrap::{self, FinalKey, FinalProof, WrapCircuit};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type Fq = ark_bls12_381::Fq;

/// The first proved k's wrap proving key in each encoding: its size, and the time to load it by
/// digest (hash, decode, shape checks: a worker's path) with the memory that load takes beyond
/// what the process held before it (the bytes, then the decoded key beside them).
fn key_encodings(pk: &pari::ProvingKey<BW6_767>) {
    println!();
    println!("| wrap proving key | bytes | load by digest | peak RSS of the load, above the process before it |");
    println!("|---|---|---|---|");
    type Encode = fn(&pari::ProvingKey<BW6_767>) -> Vec<u8>;
    // Uncompressed: the form a worker caches and loads (compressed points cost a square root
    // each to load, minutes on BW6-767; their sizes are printed below the table).
    let encodings: [(&str, Encode); 2] = [
        ("version 1 (SR1CS rows), uncompressed", |pk| pk.to_bytes_v1(false)),
        ("version 2 (SR1CS compact), uncompressed", |pk| pk.to_bytes_uncompressed()),
    ];
    for (name, encode) in encodings {
        let _ = peak_mib_since_last();
        let before = peak_mib_since_last();
        let bytes = encode(pk);
        let digest = pari::KeyDigest::of_bytes(&bytes);
        let t = Instant::now();
        let back = pari::ProvingKey::<BW6_767>::from_bytes_with_digest(&bytes, &digest).unwrap();
        let load = t.elapsed().as_secs_f64();
        let peak = peak_mib_since_last();
        assert!(back == *pk);
        let size = bytes.len() as f64 / (1 << 20) as f64;
        drop((back, bytes));
        let above = before.zip(peak).map(|(b, p)| p.saturating_sub(b));
        println!("| {name} | {size:.1} MiB | {load:.1} s | {} |", mib(above));
    }
    let (v1, v2) = (pk.to_bytes_v1(true).len(), pk.to_bytes().len());
    println!("compressed: version 1 {:.1} MiB, version 2 {:.1} MiB", v1 as f64 / (1 << 20) as f64, v2 as f64 / (1 << 20) as f64);
}

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

/// This process's peak resident memory since the last call, in MiB (Linux: `VmHWM`, then reset
/// through `clear_refs`); `None` where `/proc` does not say.
fn peak_mib_since_last() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let kib: u64 = status.lines().find(|l| l.starts_with("VmHWM:"))?.split_whitespace().nth(1)?.parse().ok()?;
    std::fs::write("/proc/self/clear_refs", "5").ok()?;
    Some(kib / 1024)
}

fn mib(v: Option<u64>) -> String {
    v.map_or("–".into(), |m| format!("{m} MiB"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let ks: Vec<usize> = arg("--k")
        .unwrap_or_else(|| "1,2,8".into())
        .split(',')
        .map(|s| s.parse().expect("--k takes numbers"))
        .collect();
    let prove_max: usize = arg("--prove-max").map_or(1, |s| s.parse().expect("--prove-max"));
    let batch: usize = arg("--batch").map_or(64, |s| s.parse().expect("--batch"));
    let distinct = std::env::args().any(|a| a == "--batch-distinct");
    let mut rng = ChaCha20Rng::seed_from_u64(1);

    println!("| k | key shapes | wrap R1CS constraints | per subcircuit | SR1CS rows | BW6-767 domain | setup | prove | verify | final proof | peak RSS setup / prove |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut kept = None;
    let mut per_k: Vec<(usize, usize)> = Vec::new();
    for &k in &ks {
        let spec = CircuitSpec::Synthetic { subcircuits: k, steps: 4, wires: 2 };
        let circuit = spec.build::<Fr>(k as u64).unwrap();
        let (hpk, hvk) = workflow::setup::<Bls12_381, _, _>(&circuit, &mut rng).unwrap();
        let proof = workflow::prove(&hpk, &circuit, &mut rng).unwrap();
        let x = circuit.public_inputs.clone();

        let cs = ConstraintSystem::<Fq>::new_ref();
        cs.set_mode(SynthesisMode::Setup);
        WrapCircuit::<Config>::blank(&hvk).unwrap().generate_constraints(cs.clone()).unwrap();
        let n = cs.num_constraints();
        per_k.push((k, n));
        // Marginal constraints per subcircuit against the previous row (new key shapes add
        // their own fixed cost; the "key shapes" column says when they do).
        let per = match per_k.iter().rev().nth(1) {
            Some(&(k0, n0)) if k0 < k => format!("{:.0}", (n - n0) as f64 / (k - k0) as f64),
            _ => "–".into(),
        };
        let rows = pari::r1cs::synthesize_setup(WrapCircuit::<Config>::blank(&hvk).unwrap()).unwrap().num_rows();
        let domain = pari::domain::Domain::<Fq>::new(rows).map_or("does not fit".to_string(), |d| d.size().to_string());
        if k > prove_max {
            println!("| {k} | {} | {n} | {per} | {rows} | {domain} | – | – | – | – | – |", hvk.vks.len());
            continue;
        }
        // Peaks of the setup (synthesis, SR1CS, key) and of the prover with the key held.
        let _ = peak_mib_since_last();
        let t = Instant::now();
        let (pk, key) = wrap::setup::<Config, BW6_767, _>(&hvk, &mut rng).unwrap();
        let setup = t.elapsed().as_secs_f64();
        let setup_peak = peak_mib_since_last();
        let t = Instant::now();
        let fin = wrap::prove::<Config, BW6_767, _>(&pk, &hvk, &x, &proof, &mut rng).unwrap();
        let prove = t.elapsed().as_secs_f64();
        let prove_peak = peak_mib_since_last();
        let pvk = key.wrap_vk.prepare().unwrap();
        let t = Instant::now();
        wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &fin).unwrap();
        let verify = t.elapsed().as_secs_f64();
        let size = fin.to_bytes().unwrap().len();
        println!(
            "| {k} | {} | {n} | {per} | {rows} | {domain} | {setup:.1} s | {prove:.1} s | {:.2} ms | {size} B (Pari {} B) | {} / {} |",
            hvk.vks.len(),
            verify * 1e3,
            fin.pari.compressed_size(),
            mib(setup_peak),
            mib(prove_peak)
        );
        if kept.is_none() {
            kept = Some((pk, key, hvk, x, proof, fin));
        }
    }

    let Some((pk, key, hvk, x, proof, fin)) = kept else { return };
    key_encodings(&pk);
    if batch == 0 {
        return;
    }
    let key_bytes = key.to_bytes();
    let mut proofs = vec![fin.to_bytes().unwrap()];
    while proofs.len() < batch {
        if distinct {
            let f = wrap::prove::<Config, BW6_767, _>(&pk, &hvk, &x, &proof, &mut rng).unwrap();
            proofs.push(f.to_bytes().unwrap());
        } else {
            proofs.push(proofs[0].clone());
        }
    }
    let pinned = key.digest();
    let load_key = || {
        let key = FinalKey::<BW6_767>::from_bytes(&key_bytes).unwrap();
        key.check_digest(&pinned).unwrap();
        let pvk = key.wrap_vk.prepare().unwrap();
        (key, pvk)
    };
    let mut single = Vec::new();
    let mut batched = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let (key, pvk) = load_key();
        for b in &proofs {
            let f = FinalProof::<Fr, BW6_767>::from_bytes(b).unwrap();
            wrap::verify_final::<Config, BW6_767>(&key, &pvk, &x, &f).unwrap();
        }
        single.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        let (key, pvk) = load_key();
        let items: Vec<_> = proofs
            .iter()
            .map(|b| (x.clone(), FinalProof::<Fr, BW6_767>::from_bytes(b).unwrap()))
            .collect();
        assert!(wrap::batch_verify_final::<Config, BW6_767, _>(&key, &pvk, &items, &mut rng).unwrap().is_empty());
        batched.push(t.elapsed().as_secs_f64());
    }
    let (s, b) = (median(single), median(batched));
    println!();
    println!("| final proofs | one by one | per proof | batch | per proof | ratio |");
    println!("|---|---|---|---|---|---|");
    println!(
        "| {batch}{} | {:.1} ms | {:.2} ms | {:.1} ms | {:.3} ms | {:.1}× |",
        if distinct { "" } else { " (copies)" },
        s * 1e3,
        s * 1e3 / batch as f64,
        b * 1e3,
        b * 1e3 / batch as f64,
        s / b
    );
}

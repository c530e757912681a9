//! Prove and verify times and proof sizes of Spartan with PST and with Testudo-Comm on
//! BLS12-381, for random
//! satisfiable R1CS of `2^k` constraints (`2^k − 1` witness values, one public input, three
//! nonzeros per row of A and B). Prints one table row per size.
//!
//! `cargo run --release -p testudo --example spartan_bench -- 10 16` (sizes `2^10 … 2^16`).

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Fr};
use ark_serialize::CanonicalSerialize;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use testudo::pst::{self, Pst};
use testudo::testudo_comm::{self, TestudoComm};
use testudo::{prove, verify, MultilinearPcs, R1cs};

mod common;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes are integers (log2 of constraints)"))
        .collect();
    let (lo, hi) = match args[..] {
        [lo, hi] => (lo, hi),
        [k] => (k, k),
        _ => (10, 14),
    };
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let t = Instant::now();
    let (pst_ck, pst_vk) = pst::setup_insecure_from_seed::<Bls12_381>(hi, 1).expect("setup");
    println!("PST setup for 2^{hi}: {:.2} s", t.elapsed().as_secs_f64());
    let t = Instant::now();
    let (tc_ck, tc_vk) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(hi, 1).expect("setup");
    println!(
        "Testudo-Comm setup for 2^{hi}: {:.2} s",
        t.elapsed().as_secs_f64()
    );
    println!("| log2 constraints | PCS | prove (s) | verify (s) | proof (bytes) |");
    println!("|---|---|---|---|---|");
    for k in lo..=hi {
        let common::Instance { r1cs, io, w, .. } = common::Instance::random(1 << k, &mut rng);
        row::<Pst<Bls12_381>>(k, "PST", &pst_ck, &pst_vk, &r1cs, &io, &w);
        row::<TestudoComm<Bls12_381>>(k, "Testudo-Comm", &tc_ck, &tc_vk, &r1cs, &io, &w);
    }
}

fn row<P: MultilinearPcs<Fr>>(
    k: usize,
    name: &str,
    ck: &P::CommitterKey,
    vk: &P::VerifierKey,
    r1cs: &R1cs<Fr>,
    io: &[Fr],
    w: &[Fr],
) {
    let t = Instant::now();
    let proof = prove::<Fr, P>(ck, r1cs, io, w).expect("prove");
    let prove_s = t.elapsed().as_secs_f64();
    let t = Instant::now();
    verify::<Fr, P>(vk, r1cs, io, &proof).expect("verify");
    let verify_s = t.elapsed().as_secs_f64();
    println!(
        "| {k} | {name} | {prove_s:.3} | {verify_s:.3} | {} |",
        proof.compressed_size()
    );
}

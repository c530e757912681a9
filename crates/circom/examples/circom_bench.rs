//! Proving a circom circuit (BN254): Pari against ark-groth16 on the same constraint system, and
//! against `snarkjs groth16 prove` on the same `.r1cs`/`.wtns` when a zkey is given.
//!
//! `cargo run --release -p circom --example circom_bench -- CIRCUIT.r1cs WITNESS.wtns
//!  [--zkey CIRCUIT.zkey] [--reps 3]`
//!
//! Each prover runs `--reps` times after its setup; the table gives the median wall time. Both
//! arkworks provers use every core (rayon); snarkjs uses its own worker threads. The snarkjs
//! time includes starting node and reading the zkey, as a user running it pays them; its
//! `groth16 prove` is run through `npx` from the directory holding the zkey.

use std::path::PathBuf;
use std::time::Instant;

use ark_snark::SNARK;
use circom::{read_wtns, CircomCircuit, R1cs};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = ark_bn254::Bn254;
type F = ark_bn254::Fr;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn time<T>(reps: usize, mut f: impl FnMut() -> T) -> f64 {
    median(
        (0..reps)
            .map(|_| {
                let t = Instant::now();
                std::hint::black_box(f());
                t.elapsed().as_secs_f64()
            })
            .collect(),
    )
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let positional: Vec<&String> = {
        let mut skip = false;
        args.iter()
            .filter(|a| {
                if skip {
                    skip = false;
                    return false;
                }
                if a.starts_with("--") {
                    skip = true;
                    return false;
                }
                true
            })
            .collect()
    };
    let (r1cs_path, wtns_path) = match positional.as_slice() {
        [r, w] => (PathBuf::from(r), PathBuf::from(w)),
        _ => {
            eprintln!("usage: circom_bench CIRCUIT.r1cs WITNESS.wtns [--zkey FILE] [--reps N]");
            std::process::exit(2);
        }
    };
    let reps: usize = flag("--reps").map(|r| r.parse().expect("--reps N")).unwrap_or(3);
    let r = R1cs::<F>::from_bytes(&std::fs::read(&r1cs_path).expect("read .r1cs")).expect(".r1cs");
    let w = read_wtns::<F>(&std::fs::read(&wtns_path).expect("read .wtns")).expect(".wtns");
    r.check_witness(&w).expect("the witness satisfies the circuit");
    let x = r.public_signals(&w).to_vec();
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    println!(
        "circuit: {} ({} constraints, {} wires, {} public signals), BN254, {} cores, median of {reps}\n",
        r1cs_path.display(),
        r.constraints.len(),
        r.num_wires,
        x.len(),
        std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1)
    );

    let t = Instant::now();
    let (pk, vk) = pari::setup::<E, _, _>(CircomCircuit { r1cs: &r, witness: None }, &mut rng).expect("Pari setup");
    let pari_setup = t.elapsed().as_secs_f64();
    let pvk = vk.prepare().expect("prepare");
    let pari_prove = time(reps, || pari::prove(&pk, CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut rng).expect("Pari prove"));
    let proof = pari::prove(&pk, CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut rng).unwrap();
    pari::verify(&pvk, &x, &proof).expect("Pari verifies");
    let pari_verify = time(reps, || pari::verify(&pvk, &x, &proof).is_ok());

    type G = ark_groth16::Groth16<E>;
    let t = Instant::now();
    let (gpk, gvk) = G::circuit_specific_setup(CircomCircuit { r1cs: &r, witness: None }, &mut rng).expect("Groth16 setup");
    let g_setup = t.elapsed().as_secs_f64();
    let g_prove = time(reps, || G::prove(&gpk, CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut rng).expect("Groth16 prove"));
    let gproof = G::prove(&gpk, CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut rng).unwrap();
    assert!(G::verify(&gvk, &x, &gproof).unwrap());

    println!("| prover | setup | prove (median) | prove vs Pari |");
    println!("|---|---|---|---|");
    println!(
        "| Pari ({} SR1CS rows, domain 2^{}) | {pari_setup:.2} s | {:.3} s | 1.00× |",
        pk.sr1cs.num_rows(),
        vk.domain_size.trailing_zeros(),
        pari_prove
    );
    println!("| ark-groth16 | {g_setup:.2} s | {g_prove:.3} s | {:.2}× |", g_prove / pari_prove);
    if let Some(zkey) = flag("--zkey") {
        let zkey = PathBuf::from(zkey).canonicalize().expect("--zkey");
        let dir = zkey.parent().expect("zkey directory").to_path_buf();
        let wtns = wtns_path.canonicalize().expect("wtns");
        let out = std::env::temp_dir().join(format!("circom-bench-{}", std::process::id()));
        std::fs::create_dir_all(&out).unwrap();
        let snark = time(reps, || {
            let status = std::process::Command::new("npx")
                .current_dir(&dir)
                .args(["snarkjs", "groth16", "prove"])
                .arg(&zkey)
                .arg(&wtns)
                .arg(out.join("proof.json"))
                .arg(out.join("public.json"))
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .status()
                .expect("run npx snarkjs");
            assert!(status.success(), "snarkjs groth16 prove failed");
        });
        println!("| snarkjs groth16 prove | (zkey given) | {snark:.3} s | {:.2}× |", snark / pari_prove);
        println!("\nPari / snarkjs: {:.3}× (issue 14 target ≤ 0.1×)", pari_prove / snark);
    }
    println!("Pari / ark-groth16: {:.2}× (issue 14 target ≤ 0.6×)", pari_prove / g_prove);
    println!("Pari verify (one proof, prepared key): {:.2} ms", pari_verify * 1e3);
}

//! Hekaton's distributed path against a monolithic Groth16 proof of the same circuit.
//!
//! `cargo run -p hekaton --release --example hekaton_bench -- [subcircuits] [steps] [wires]`
//! `cargo run -p hekaton --release --example hekaton_bench -- [subcircuits] --fit LOG2`
//!
//! Builds the §8.1 benchmark circuit (`subcircuits` subcircuits of `steps` body constraints
//! and `wires` shared wires each; by default the wires are chosen so that memory checking is
//! about 10% of a subcircuit), runs every workflow step on a one-thread pool (one core per
//! worker, as in the paper), and proves the unpartitioned circuit with ark-groth16 on one
//! thread. Prints per-subcircuit times and bytes exchanged per phase, then a summary.
//!
//! With `--fit LOG2` the steps are chosen so that the largest augmented subcircuit (with its
//! instance variables) sits just below `2^LOG2`, the size of its FFT domain: a proof system
//! pays for the domain, not the constraints, so a circuit just above a power of two would
//! cost either side nearly twice as much. The monolithic baseline is then a circuit of its own
//! (the same family, more steps) sized just below `k·2^LOG2`, so both sides fill their domains;
//! the comparison is of throughput, statement constraints per core-second.

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Fr};
use ark_groth16::Groth16;
use ark_ff::One;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem};
use hekaton::circuits::bench_circuit;
use hekaton::mirage::to_bytes;
use hekaton::partition::Monolithic;
use hekaton::workflow::{
    constraint_breakdown, coordinator_assemble, coordinator_challenge, coordinator_traces, setup,
    verify, worker_commit, worker_prove,
};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

fn secs(t: Instant) -> f64 {
    t.elapsed().as_secs_f64()
}

fn main() {
    let mut args: Vec<usize> = Vec::new();
    let mut fit_log = None;
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        if a == "--fit" {
            fit_log = Some(it.next().and_then(|v| v.parse().ok()).expect("--fit LOG2"));
        } else {
            args.push(a.parse().expect("numeric argument"));
        }
    }
    let k = args.first().copied().unwrap_or(8);
    // 13 memory-checking constraints per shared wire (one set and one get): 10% of the body.
    let wires_for = |steps: usize| (steps / 10 / 13).max(1);
    let (steps, wires) = match fit_log {
        Some(log) => fit(k, log, wires_for),
        None => {
            let steps = args.get(1).copied().unwrap_or(1 << 15);
            (steps, args.get(2).copied().unwrap_or(wires_for(steps)))
        }
    };
    let circuit = bench_circuit(k, steps, wires, Fr::from(42u64));
    let mono_circuit = match fit_log {
        Some(log) => bench_circuit(k, fit_monolithic(k, log + k.next_power_of_two().trailing_zeros(), wires), wires, Fr::from(42u64)),
        None => circuit.clone(),
    };
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let one = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();

    let (layout, breakdown) = constraint_breakdown(&circuit).unwrap();
    let (statement, _) = monolithic_size(&circuit);
    let (mono_constraints, mono_domain) = monolithic_size(&mono_circuit);
    let sub_domain = (0..k)
        .map(|i| {
            // Instance: 1, rt, α, β, i, then one address per access.
            (breakdown[i].total() + 5 + layout.subcircuits[i].addresses.len()).next_power_of_two()
        })
        .max()
        .unwrap_or(0);

    let t = Instant::now();
    let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng).unwrap();
    let setup_s = secs(t);

    // Step 1.
    let t = Instant::now();
    let (_, shares) = one
        .install(|| coordinator_traces(&pk.vk.layout, &circuit, &mut rng))
        .unwrap();
    let traces_s = secs(t);
    // Step 2.
    let mut commit_s = Vec::new();
    let mut cd = Vec::new();
    for share in &shares {
        let t = Instant::now();
        cd.push(
            one.install(|| {
                worker_commit(pk.subcircuit_key(share.index as usize)?, share, &mut rng)
            })
            .unwrap(),
        );
        commit_s.push(secs(t));
    }
    let commitments: Vec<_> = cd.iter().map(|c| c.0).collect();
    // Step 3.
    let t = Instant::now();
    let round = one
        .install(|| coordinator_challenge(&pk.vk, &circuit.public_inputs, &shares, &commitments))
        .unwrap();
    let challenge_s = secs(t);
    // Step 4.
    let mut prove_s = Vec::new();
    let mut proofs = Vec::new();
    for (i, share) in shares.iter().enumerate() {
        let t = Instant::now();
        proofs.push(
            one.install(|| {
                worker_prove(
                    &pk,
                    &circuit.subcircuits[i],
                    &circuit.public_inputs,
                    share,
                    &cd[i].0,
                    &cd[i].1,
                    &round.messages[i],
                    &mut rng,
                )
            })
            .unwrap(),
        );
        prove_s.push(secs(t));
    }
    // Step 5 and 6.
    let t = Instant::now();
    let proof = coordinator_assemble(&round, commitments, proofs).unwrap();
    let assemble_s = secs(t);
    let t = Instant::now();
    one.install(|| verify(&vk, &circuit.public_inputs, &proof, &mut rng))
        .unwrap();
    let verify_s = secs(t);

    // Monolithic Groth16, one thread.
    let t = Instant::now();
    let g16_pk =
        Groth16::<E>::generate_random_parameters_with_reduction(Monolithic(&mono_circuit), &mut rng)
            .unwrap();
    let g16_setup_s = secs(t);
    let t = Instant::now();
    let _ = one
        .install(|| {
            Groth16::<E>::create_random_proof_with_reduction(
                Monolithic(&mono_circuit),
                &g16_pk,
                &mut rng,
            )
        })
        .unwrap();
    let g16_prove_s = secs(t);

    println!("Hekaton bench: §8.1 circuit, {k} subcircuits x {steps} body steps, {wires} shared wires written per subcircuit, BLS12-381, one core per worker\n");
    println!(
        "| i | shape | constraints (body/mem/merkle) | accesses | commit ms | prove ms | share B | D B | msg B | proof B |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for i in 0..k {
        let b = breakdown[i];
        println!(
            "| {i} | {} | {} ({}/{}/{}) | {} | {:.1} | {:.1} | {} | {} | {} | {} |",
            pk.vk.shape_of[i],
            b.total(),
            b.body,
            b.memory,
            b.merkle,
            layout.subcircuits[i].addresses.len(),
            commit_s[i] * 1e3,
            prove_s[i] * 1e3,
            to_bytes(&shares[i]).unwrap().len(),
            to_bytes(&cd[i].0).unwrap().len(),
            to_bytes(&round.messages[i]).unwrap().len(),
            to_bytes(&proof.proofs[i]).unwrap().len(),
        );
    }
    let total: usize = breakdown.iter().map(|b| b.total()).sum();
    let memory: usize = breakdown.iter().map(|b| b.memory).sum();
    let merkle: usize = breakdown.iter().map(|b| b.merkle).sum();
    let worker_s: f64 = commit_s.iter().sum::<f64>() + prove_s.iter().sum::<f64>();
    let coord_s = traces_s + challenge_s + assemble_s;
    let shared = layout.names.len();
    println!();
    println!("| metric | value |");
    println!("|---|---|");
    println!("| Hekaton's statement (its circuit without memory checking) | {statement} constraints |");
    println!(
        "| Groth16 baseline's statement | {mono_constraints} constraints (domain 2^{}) |",
        mono_domain.trailing_zeros()
    );
    println!(
        "| largest subcircuit, augmented | {} (domain 2^{}) |",
        breakdown.iter().map(|b| b.total()).max().unwrap_or(0),
        sub_domain.trailing_zeros()
    );
    println!(
        "| augmented constraints, all subcircuits | {total} (memory {memory}, merkle {merkle}) |"
    );
    println!(
        "| shared wires / trace accesses | {shared} / {} |",
        layout.num_accesses()
    );
    println!(
        "| memory-checking constraints per shared wire | {:.2} ({:.2} per access) |",
        memory as f64 / shared as f64,
        memory as f64 / layout.num_accesses() as f64
    );
    println!(
        "| setup (all shapes, {} Mirage setups, all cores) | {setup_s:.2} s |",
        pk.pks.len()
    );
    println!(
        "| coordinator: traces / challenge+tree / assemble | {:.3} / {:.3} / {:.3} s |",
        traces_s, challenge_s, assemble_s
    );
    println!(
        "| workers: commit + prove, summed | {worker_s:.2} core-s (max per worker {:.2} s) |",
        (0..k).map(|i| commit_s[i] + prove_s[i]).fold(0.0, f64::max)
    );
    println!("| verify (batched per shape) | {:.1} ms |", verify_s * 1e3);
    println!(
        "| Hekaton throughput, statement constraints per core-second (workers + coordinator) | {:.0} |",
        statement as f64 / (worker_s + coord_s)
    );
    println!(
        "| Hekaton latency with {k} cores (max worker + coordinator) | {:.2} s |",
        (0..k).map(|i| commit_s[i] + prove_s[i]).fold(0.0, f64::max) + coord_s
    );
    println!(
        "| Groth16 monolithic prove, 1 thread | {g16_prove_s:.2} s (setup {g16_setup_s:.2} s) |"
    );
    println!(
        "| Groth16 throughput, constraints per core-second | {:.0} |",
        mono_constraints as f64 / g16_prove_s
    );
    println!(
        "| Hekaton / Groth16 throughput (target ≥ 0.90) | {:.2}× |",
        (statement as f64 / (worker_s + coord_s)) / (mono_constraints as f64 / g16_prove_s)
    );
    println!(
        "| the same counting every augmented constraint (memory checking and Merkle included) | {:.2}× |",
        (total as f64 / (worker_s + coord_s)) / (mono_constraints as f64 / g16_prove_s)
    );
    println!(
        "| final proof size (k commitments and proofs, root, leaf-0 path) | {} B |",
        to_bytes(&proof).unwrap().len()
    );
}

/// Steps (and wires) that put the largest augmented subcircuit, with its instance, just below
/// `2^log`.
fn fit(k: usize, log: u32, wires_for: impl Fn(usize) -> usize) -> (usize, usize) {
    let target = 1usize << log;
    let steps = fit_steps(log, target - target / 16, 1, |steps| {
        let (layout, b) =
            constraint_breakdown(&bench_circuit::<Fr>(k, steps, wires_for(steps), Fr::one()))
                .expect("breakdown");
        (0..k)
            .map(|i| b[i].total() + 5 + layout.subcircuits[i].addresses.len())
            .max()
            .unwrap_or(0)
    });
    (steps, wires_for(steps))
}

/// A few rounds of counting in setup mode, moving the steps by the slack (divided by the
/// constraints one step adds) each time, until `size(steps)` sits just below `2^log`.
fn fit_steps(log: u32, start: usize, per_step: usize, size: impl Fn(usize) -> usize) -> usize {
    let target = 1i64 << log;
    let margin = 64;
    let mut steps = start;
    for _ in 0..8 {
        let slack = target - size(steps) as i64;
        if (0..=2 * margin).contains(&slack) {
            return steps;
        }
        steps = (steps as i64 + (slack - margin) / per_step as i64).max(1) as usize;
    }
    panic!("no step count puts the circuit just below 2^{log}");
}

/// Constraints and instance variables of the unpartitioned circuit.
fn monolithic_counts(c: &hekaton::partition::Partitioned<Fr, hekaton::circuits::BenchSubcircuit>) -> (usize, usize) {
    let cs = ConstraintSystem::<Fr>::new_ref();
    cs.set_mode(ark_relations::gr1cs::SynthesisMode::Setup);
    Monolithic(c).generate_constraints(cs.clone()).unwrap();
    (cs.num_constraints(), cs.num_instance_variables())
}

/// Constraints of the unpartitioned circuit and its FFT domain (constraints + instance).
fn monolithic_size(c: &hekaton::partition::Partitioned<Fr, hekaton::circuits::BenchSubcircuit>) -> (usize, usize) {
    let (n, inst) = monolithic_counts(c);
    (n, (n + inst).next_power_of_two())
}

/// Steps that put the monolithic circuit (with its instance) just below `2^log`.
fn fit_monolithic(k: usize, log: u32, wires: usize) -> usize {
    let target = 1usize << log;
    fit_steps(log, (target - target / 16) / k, k, |steps| {
        let (n, inst) = monolithic_counts(&bench_circuit::<Fr>(k, steps, wires, Fr::one()));
        n + inst
    })
}

//! Testudo's inner prover against Pari and ark-groth16 on the same R1CS (BLS12-381).
//!
//! `cargo run --release -p testudo --example vs_pari -- 14 16 [18] [--runs 3]` (the sizes
//! `k`, default 14 and 16).
//!
//! For each size `k` the example draws one random satisfiable R1CS instance of `2^k − 2`
//! constraints (one public input, `2^k − 3` witness values; each row of `A` and `B` has three
//! random nonzeros and row `i` of `C` is `(A·z)_i·(B·z)_i` on the constant column, as in
//! `spartan_bench`). `2^k − 2` so that nobody pads past `2^k`: Spartan pads rows to `2^k` and
//! `ẑ` to `2^{k+1}`, Groth16's domain holds the constraints plus the 2 instance rows, Pari's
//! square R1CS holds two rows per (non-square) constraint plus 2 outlined instance rows, so
//! `2^{k+1} − 2` rows. Every prover gets that one instance:
//!
//! * **Testudo (inner)**: `testudo::prove` with [`TestudoComm`]: Spartan's two sumchecks, the
//!   witness commitment `T = Π e(A_i, h_i)` and its opening.
//! * **Spartan+PST**: the same with [`Pst`] (linear-size key).
//! * **Pari**: `pari::prover::prove_with_assignment` on the assignment of a
//!   [`ConstraintSynthesizer`] that replays the instance's rows ([`Replay`]).
//! * **Groth16**: ark-groth16's `create_proof_with_reduction_and_matrices`, with the
//!   instance's matrices in arkworks' column order.
//!
//! Every prove time is from a ready instance and assignment: key generation and circuit
//! synthesis are outside the timer (setup is timed on its own), and the ratios are between
//! times measured in this run. Every proof is verified; a rejected one aborts the run.
//! Each time is the median of `--runs` runs (default 1). The keys are the insecure
//! seeded ones, for benchmarks only.

use std::time::Instant;

use ark_bls12_381::{Bls12_381, Fr, G1Affine};
use ark_ec::AffineRepr;
use ark_ff::{One, UniformRand, Zero};
use ark_groth16::Groth16;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, Matrix, SynthesisError, Variable,
};
use ark_serialize::CanonicalSerialize;
use ark_snark::SNARK;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use testudo::pst::{self, Pst};
use testudo::testudo_comm::{self, TestudoComm};
use testudo::transcript::Transcript;
use testudo::{MultilinearPcs, MultilinearPoly};

mod common;

use common::{Instance, Row};

impl Instance {
    /// arkworks' column of the caller's column `j`: `(1, io, w)` instead of `(io, 1, w)`.
    fn ark_column(&self, j: usize) -> usize {
        match j {
            j if j < self.num_io => j + 1,
            j if j == self.num_io => 0,
            j => j,
        }
    }

    /// `A, B, C` as arkworks matrices (for Groth16's prover).
    fn ark_matrices(&self) -> Vec<Matrix<Fr>> {
        self.rows
            .iter()
            .map(|mat| {
                mat.iter()
                    .map(|r| r.iter().map(|&(j, v)| (v, self.ark_column(j))).collect())
                    .collect()
            })
            .collect()
    }

    /// `(1, io, w)`.
    fn ark_assignment(&self) -> Vec<Fr> {
        std::iter::once(Fr::one())
            .chain(self.io.iter().copied())
            .chain(self.w.iter().copied())
            .collect()
    }

    /// `w̃`: the witness padded to `2^{s_y − 1}`, the polynomial Spartan commits to.
    fn witness_poly(&self) -> MultilinearPoly<Fr> {
        let vars = self.r1cs.witness_vars();
        let mut evals = self.w.clone();
        evals.resize(1 << vars, Fr::zero());
        MultilinearPoly::new(vars, evals).expect("2^vars evaluations")
    }
}

/// A circuit that allocates `io` as instance variables and `w` as witness variables and
/// enforces the instance's rows one by one, so Pari and Groth16 see the same constraints.
struct Replay<'a>(&'a Instance);

impl ConstraintSynthesizer<Fr> for Replay<'_> {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        let inst = self.0;
        let mut vars = Vec::with_capacity(inst.num_io + 1 + inst.w.len());
        for &x in &inst.io {
            vars.push(cs.new_input_variable(|| Ok(x))?);
        }
        vars.push(Variable::One);
        for &x in &inst.w {
            vars.push(cs.new_witness_variable(|| Ok(x))?);
        }
        let lc = |r: &Row| LinearCombination(r.iter().map(|&(j, v)| (v, vars[j])).collect());
        for ((a, b), c) in inst.rows[0].iter().zip(&inst.rows[1]).zip(&inst.rows[2]) {
            cs.enforce_r1cs_constraint(|| lc(a), || lc(b), || lc(c))?;
        }
        Ok(())
    }
}

fn fmt(t: f64) -> String {
    if t < 1e-3 {
        format!("{:.0} µs", t * 1e6)
    } else if t < 1.0 {
        format!("{:.1} ms", t * 1e3)
    } else {
        format!("{t:.2} s")
    }
}

fn bytes(n: usize) -> String {
    if n < 1 << 10 {
        format!("{n} B")
    } else if n < 1 << 20 {
        format!("{:.1} KiB", n as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", n as f64 / (1024.0 * 1024.0))
    }
}

/// Runs `f` `runs` times; the median time and the last result.
fn timed<T>(runs: usize, mut f: impl FnMut() -> T) -> (f64, T) {
    let mut times = Vec::with_capacity(runs);
    let mut out = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        out = Some(f());
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(|a, b| a.total_cmp(b));
    (times[times.len() / 2], out.expect("at least one run"))
}

/// Setup of one scheme: time and key sizes.
#[derive(Default)]
struct Setup {
    time: f64,
    pk: usize,
    vk: usize,
    /// The part of the prover key that is group elements, where it holds more (Pari's holds
    /// the square R1CS too).
    pk_points: Option<usize>,
}

/// Prove and verify of one scheme.
#[derive(Default)]
struct Run {
    prove: f64,
    verify: f64,
    proof: usize,
}

/// The PCS alone on `w̃`: commit, open, verify.
#[derive(Default)]
struct PcsRun {
    commit: f64,
    open: f64,
    verify: f64,
    proof: usize,
}

#[derive(Default)]
struct Measured {
    k: usize,
    constraints: usize,
    sr1cs_rows: usize,
    setup: [Setup; 4],
    run: [Run; 4],
    pcs: [PcsRun; 2],
}

const NAMES: [&str; 4] = [
    "Testudo (Spartan+Testudo-Comm)",
    "Spartan+PST",
    "Pari",
    "Groth16",
];

fn spartan<P: MultilinearPcs<Fr>>(
    ck: &P::CommitterKey,
    vk: &P::VerifierKey,
    inst: &Instance,
    runs: usize,
) -> (Run, PcsRun) {
    let (prove, proof) = timed(runs, || {
        testudo::prove::<Fr, P>(ck, &inst.r1cs, &inst.io, &inst.w).expect("prove")
    });
    let (verify, ()) = timed(runs, || {
        testudo::verify::<Fr, P>(vk, &inst.r1cs, &inst.io, &proof)
            .expect("an honest proof verifies")
    });
    let run = Run {
        prove,
        verify,
        proof: proof.compressed_size(),
    };

    let poly = inst.witness_poly();
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let point: Vec<Fr> = (0..poly.num_vars()).map(|_| Fr::rand(&mut rng)).collect();
    let value = poly.evaluate(&point).expect("a point of the right length");
    let (commit, (c, hint)) = timed(runs, || P::commit(ck, &poly).expect("commit"));
    let (open, opening) = timed(runs, || {
        P::open(
            ck,
            &poly,
            &hint,
            &point,
            &mut Transcript::new(b"vs_pari").expect("BLS12-381's fields fit the transcript"),
        )
        .expect("open")
    });
    let (verify, ()) = timed(runs, || {
        P::verify(
            vk,
            &c,
            &point,
            value,
            &opening,
            &mut Transcript::new(b"vs_pari").expect("BLS12-381's fields fit the transcript"),
        )
        .expect("an honest opening verifies")
    });
    (
        run,
        PcsRun {
            commit,
            open,
            verify,
            proof: opening.compressed_size(),
        },
    )
}

fn measure(k: usize, runs: usize, rng: &mut ChaCha20Rng) -> Measured {
    let m = (1 << k) - 2;
    let inst = Instance::random(m, rng);
    let vars = inst.r1cs.witness_vars();
    let mut out = Measured {
        k,
        constraints: m,
        ..Default::default()
    };

    // Testudo-Comm and PST, keyed for exactly w̃'s variables.
    let t = Instant::now();
    let (tc_ck, tc_vk) =
        testudo_comm::setup_insecure_from_seed::<Bls12_381>(vars, 1).expect("setup");
    out.setup[0] = Setup {
        time: t.elapsed().as_secs_f64(),
        pk: tc_ck.compressed_size(),
        vk: tc_vk.compressed_size(),
        pk_points: None,
    };
    let t = Instant::now();
    let (pst_ck, pst_vk) = pst::setup_insecure_from_seed::<Bls12_381>(vars, 1).expect("setup");
    out.setup[1] = Setup {
        time: t.elapsed().as_secs_f64(),
        pk: pst_ck.compressed_size(),
        vk: pst_vk.compressed_size(),
        pk_points: None,
    };
    (out.run[0], out.pcs[0]) = spartan::<TestudoComm<Bls12_381>>(&tc_ck, &tc_vk, &inst, runs);
    drop((tc_ck, tc_vk));
    (out.run[1], out.pcs[1]) = spartan::<Pst<Bls12_381>>(&pst_ck, &pst_vk, &inst, runs);
    drop((pst_ck, pst_vk));

    // Pari.
    let mut rng = ChaCha20Rng::seed_from_u64(k as u64);
    let t = Instant::now();
    let (pk, vk) = pari::setup::<Bls12_381, _, _>(Replay(&inst), &mut rng).expect("Pari setup");
    let time = t.elapsed().as_secs_f64();
    let points = pk.sigma.len()
        + pk.sigma_q.len()
        + pk.sigma_a.len()
        + pk.sigma_b.len()
        + pk.sigma_1.len()
        + 3;
    out.sr1cs_rows = pk.sr1cs.num_rows();
    out.setup[2] = Setup {
        time,
        pk: pk.to_bytes().len(),
        vk: vk.to_bytes().len(),
        pk_points: Some(points * G1Affine::zero().compressed_size()),
    };
    let (instance, witness) =
        pari::r1cs::synthesize_assignment::<Fr, _>(Replay(&inst)).expect("synthesis");
    let (prove, proof) = timed(runs, || {
        pari::prover::prove_with_assignment(&pk, &instance, &witness, &mut rng).expect("Pari prove")
    });
    let pvk = vk.prepare().expect("a well-formed key");
    let (verify, ()) = timed(runs, || {
        pari::verify(&pvk, &inst.io, &proof).expect("an honest proof verifies")
    });
    out.run[2] = Run {
        prove,
        verify,
        proof: proof.compressed_size(),
    };
    drop((pk, vk, pvk, instance, witness));

    // Groth16.
    let t = Instant::now();
    let (gpk, gvk) =
        Groth16::<Bls12_381>::circuit_specific_setup(Replay(&inst), &mut rng).expect("setup");
    out.setup[3] = Setup {
        time: t.elapsed().as_secs_f64(),
        pk: gpk.compressed_size(),
        vk: gvk.compressed_size(),
        pk_points: None,
    };
    let (matrices, full) = (inst.ark_matrices(), inst.ark_assignment());
    let (prove, proof) = timed(runs, || {
        let (r, s) = (Fr::rand(&mut rng), Fr::rand(&mut rng));
        Groth16::<Bls12_381>::create_proof_with_reduction_and_matrices(
            &gpk,
            r,
            s,
            &matrices,
            inst.num_io + 1,
            m,
            &full,
        )
        .expect("Groth16 prove")
    });
    let pvk = Groth16::<Bls12_381>::process_vk(&gvk).expect("process vk");
    let (verify, ok) = timed(runs, || {
        Groth16::<Bls12_381>::verify_with_processed_vk(&pvk, &inst.io, &proof).expect("verify")
    });
    assert!(ok, "an honest Groth16 proof verifies");
    out.run[3] = Run {
        prove,
        verify,
        proof: proof.compressed_size(),
    };
    out
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let runs = args
        .iter()
        .position(|a| a == "--runs")
        .map(|i| {
            args.get(i + 1)
                .and_then(|r| r.parse().ok())
                .expect("--runs N")
        })
        .unwrap_or(1);
    let ks: Vec<usize> = args
        .iter()
        .enumerate()
        .filter(|(i, a)| !a.starts_with("--") && (*i == 0 || args[i - 1] != "--runs"))
        .map(|(_, a)| a.parse().expect("sizes are integers (log2 of constraints)"))
        .collect();
    let ks = if ks.is_empty() { vec![14, 16] } else { ks };
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1);
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let results: Vec<Measured> = ks
        .iter()
        .map(|&k| {
            let r = measure(k, runs, &mut rng);
            eprintln!("2^{k} done");
            r
        })
        .collect();
    print_tables(&results, runs, threads);
}

fn print_tables(results: &[Measured], runs: usize, threads: usize) {
    println!(
        "BLS12-381, {threads} threads available, median of {runs} run(s); one random \
         satisfiable R1CS per size, proved by all four.\n"
    );
    println!("#### Prove time (setup and synthesis excluded)\n");
    println!(
        "| 2^k | R1CS constraints | Pari SR1CS rows | {} | {} | {} | {} | Pari / Testudo | Groth16 / Testudo |",
        NAMES[0], NAMES[1], NAMES[2], NAMES[3]
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    for r in results {
        println!(
            "| 2^{} | {} | {} | {} | {} | {} | {} | **{:.2}×** | **{:.2}×** |",
            r.k,
            r.constraints,
            r.sr1cs_rows,
            fmt(r.run[0].prove),
            fmt(r.run[1].prove),
            fmt(r.run[2].prove),
            fmt(r.run[3].prove),
            r.run[2].prove / r.run[0].prove,
            r.run[3].prove / r.run[0].prove,
        );
    }

    println!("\n#### The witness commitment alone: w̃ (k variables), Testudo-Comm vs PST\n");
    println!(
        "| 2^k | commit: Testudo-Comm | commit: PST | open: Testudo-Comm | open: PST | open: PST / Testudo-Comm | verify: Testudo-Comm | verify: PST | opening proof: Testudo-Comm | opening proof: PST |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for r in results {
        let [tc, pst] = &r.pcs;
        println!(
            "| 2^{} | {} | {} | {} | {} | **{:.1}×** | {} | {} | {} | {} |",
            r.k,
            fmt(tc.commit),
            fmt(pst.commit),
            fmt(tc.open),
            fmt(pst.open),
            pst.open / tc.open,
            fmt(tc.verify),
            fmt(pst.verify),
            bytes(tc.proof),
            bytes(pst.proof),
        );
    }

    println!("\n#### Setup: time and key sizes (compressed)\n");
    println!("| 2^k | scheme | setup time | prover key | of which group elements | verifier key | universal |");
    println!("|---|---|---|---|---|---|---|");
    let key_names = [
        "Testudo-Comm (√N key)",
        "PST",
        "Pari (pk holds the SR1CS)",
        "Groth16",
    ];
    let universal = ["yes, up to 2^k", "yes, up to 2^k", "no", "no"];
    for r in results {
        for (i, s) in r.setup.iter().enumerate() {
            println!(
                "| 2^{} | {} | {} | {} | {} | {} | {} |",
                r.k,
                key_names[i],
                fmt(s.time),
                bytes(s.pk),
                bytes(s.pk_points.unwrap_or(s.pk)),
                bytes(s.vk),
                universal[i]
            );
        }
    }

    println!("\n#### Proof size and verify time\n");
    println!("| 2^k | scheme | proof | verify |");
    println!("|---|---|---|---|");
    for r in results {
        for (i, run) in r.run.iter().enumerate() {
            println!(
                "| 2^{} | {} | {} | {} |",
                r.k,
                NAMES[i],
                bytes(run.proof),
                fmt(run.verify)
            );
        }
    }
    println!(
        "\nSpartan's verifier (both PCS) reads A, B, C: its time is linear in the nonzeros; the \
         compression circuit is what makes the final proof constant size."
    );
}

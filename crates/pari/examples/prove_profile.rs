//! Where the BW6-767 Pari prover's time goes, phase by phase, and how each phase grows with the
//! circuit (issue 60: the prover scaled super-linearly).
//!
//! ```text
//! RAYON_NUM_THREADS=2 cargo run --release -p pari --example prove_profile -- [--logs 12,14,16,17] [--runs 1]
//!     [--paths before,after] [--rows 110000]
//! ```
//!
//! For each `k`: the chain circuit with `2^k − 2` R1CS constraints (`2^k` SR1CS rows with the two
//! outlined rows, as `pari_bench --prove-logs`; `--rows` adds sizes given by their row count), a setup on the domain each path's rule picks
//! (`Domain::new`, and `Domain::new_direct_first` for the code before issue 60; one setup where
//! they agree), then `--runs` proofs by each prover path, interleaved, each verified; the median
//! time of each phase ([`pari::prover::prove_with_profile`]). Printed as markdown:
//!
//! * per path, a table of phase × size with the growth ratio of each phase between consecutive
//!   sizes, beside the growth of the rows `m` and of the domain `n` (a phase linear in the
//!   domain grows as `n`);
//! * before against after (`pari::prover::baseline`, the prover as it was before issue 60, and
//!   the current prover, measured in the same run): totals per size, and per phase at the
//!   largest size.

use std::time::{Duration, Instant};

use ark_ec::pairing::Pairing;
use pari::circuits::CircuitFamily;
use pari::domain::Domain;
use pari::generator::setup_sr1cs_with_domain_size;
use pari::r1cs::synthesize_setup;
use pari::prover::{baseline, prove_with_profile};
use pari::{verify, Profile, ProvingKey, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = ark_bw6_767::BW6_767;
type F = <E as Pairing>::ScalarField;

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
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

/// A prover path: its label, its entry point, and whether its keys take the domain rule before
/// issue 60.
type Path = (&'static str, fn(&ProvingKey<E>, pari::circuits::FamilyCircuit<F>, &mut ChaCha20Rng) -> (pari::Proof<E>, Profile), bool);

const PATHS: [Path; 2] = [
    ("before (`prover::baseline`, `Domain::new_direct_first`)", |pk, c, rng| baseline::prove_with_profile(pk, c, rng).unwrap(), true),
    ("after (`prove_with_profile`, `Domain::new`)", |pk, c, rng| prove_with_profile(pk, c, rng).unwrap(), false),
];

/// The paths to run: `--paths before,after` (the default), or one of them.
fn paths() -> Vec<Path> {
    let chosen = arg("--paths").unwrap_or_else(|| "before,after".into());
    let want: Vec<&str> = chosen.split(',').collect();
    PATHS.iter().filter(|(label, _, _)| want.iter().any(|w| label.starts_with(w))).copied().collect()
}

/// One size's measurements: rows, and per path its domain, its key's setup time, the median
/// of each phase and of the total.
struct Size {
    /// `2^k`, or the row count.
    label: String,
    rows: usize,
    paths: Vec<PathResult>,
}

/// One path at one size: `(n, setup seconds, [(phase, median seconds)] in the order they ran,
/// median total)`.
type PathResult = (usize, f64, Vec<(&'static str, f64)>, f64);

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn measure(target_rows: usize, runs: usize, paths: &[Path]) -> Size {
    let k = if target_rows.is_power_of_two() { format!("2^{}", target_rows.trailing_zeros()) } else { target_rows.to_string() };
    let family = CircuitFamily::Chain { steps: target_rows - 3 };
    let mut rng = ChaCha20Rng::seed_from_u64(target_rows as u64);
    let sr1cs = synthesize_setup::<F, _>(family.blank::<F>()).unwrap();
    let rows = sr1cs.num_rows();
    // One key per domain the paths' rules pick.
    let mut keys: Vec<(usize, f64, ProvingKey<E>, VerifyingKey<E>)> = Vec::new();
    let mut key_of = Vec::new();
    for (_, _, before) in paths {
        let n = if *before { Domain::<F>::new_direct_first(rows) } else { Domain::<F>::new(rows) }.unwrap().size();
        if let Some(i) = keys.iter().position(|(m, ..)| *m == n) {
            key_of.push(i);
            continue;
        }
        let t = Instant::now();
        let (pk, vk) = setup_sr1cs_with_domain_size::<E, _>(sr1cs.clone(), n, &mut rng).unwrap();
        keys.push((n, t.elapsed().as_secs_f64(), pk, vk));
        key_of.push(keys.len() - 1);
    }
    let pvks: Vec<_> = keys.iter().map(|(_, _, _, vk)| vk.prepare().unwrap()).collect();
    let mut profiles: Vec<Vec<Profile>> = vec![Vec::new(); paths.len()];
    for run in 0..runs {
        for (p, (label, prove, _)) in paths.iter().enumerate() {
            let (c, x) = family.instance::<F>(run as u64);
            let (proof, profile) = prove(&keys[key_of[p]].2, c, &mut rng);
            verify(&pvks[key_of[p]], &x, &proof).unwrap_or_else(|e| panic!("{label} at {k}: {e}"));
            eprintln!("{k} {label} run {run}: {}", fmt(profile.total().as_secs_f64()));
            profiles[p].push(profile);
        }
    }
    let paths = profiles
        .iter()
        .enumerate()
        .map(|(p, ps)| {
            let phases = ps[0]
                .phases()
                .iter()
                .map(|(name, _)| (*name, median(ps.iter().map(|p| p.get(name).unwrap_or(Duration::ZERO).as_secs_f64()).collect())))
                .collect();
            let (n, setup, ..) = keys[key_of[p]];
            (n, setup, phases, median(ps.iter().map(|p| p.total().as_secs_f64()).collect()))
        })
        .collect();
    Size { label: k, rows, paths }
}

fn ratio(a: f64, b: f64) -> String {
    if a > 0.0 {
        format!("{:.2}×", b / a)
    } else {
        "–".into()
    }
}

fn growth_table(sizes: &[Size], label: &str, p: usize) {
    println!("\n#### {label}: time per phase, median of the runs, and its growth between sizes\n");
    let mut head = String::from("| phase |");
    let mut rule = String::from("|---|");
    for s in sizes {
        head += &format!(" {} |", s.label);
        rule += "---|";
    }
    for w in sizes.windows(2) {
        head += &format!(" {}→{} |", w[0].label, w[1].label);
        rule += "---|";
    }
    println!("{head}\n{rule}");
    let row = |name: &str, cells: Vec<String>, growth: Vec<String>| {
        println!("| {name} | {} | {} |", cells.join(" | "), growth.join(" | "));
    };
    let grow = |v: &dyn Fn(&Size) -> f64| sizes.windows(2).map(|w| ratio(v(&w[0]), v(&w[1]))).collect::<Vec<_>>();
    row("SR1CS rows m", sizes.iter().map(|s| s.rows.to_string()).collect(), grow(&|s| s.rows as f64));
    row("domain n", sizes.iter().map(|s| s.paths[p].0.to_string()).collect(), grow(&|s| s.paths[p].0 as f64));
    let mut names: Vec<&'static str> = Vec::new();
    for s in sizes {
        for (name, _) in &s.paths[p].2 {
            if !names.contains(name) {
                names.push(name);
            }
        }
    }
    for name in names {
        let t = |s: &Size| s.paths[p].2.iter().find(|(n, _)| *n == name).map_or(0.0, |(_, t)| *t);
        row(name, sizes.iter().map(|s| fmt(t(s))).collect(), grow(&t));
    }
    row("**total**", sizes.iter().map(|s| format!("**{}**", fmt(s.paths[p].3))).collect(), grow(&|s| s.paths[p].3));
}

fn main() {
    let logs: Vec<u32> = arg("--logs").unwrap_or_else(|| "12,14,16,17".into()).split(',').filter(|s| !s.is_empty()).map(|s| s.parse().expect("--logs")).collect();
    let mut targets: Vec<usize> = logs.iter().map(|&k| 1usize << k).collect();
    targets.extend(arg("--rows").unwrap_or_default().split(',').filter(|s| !s.is_empty()).map(|s| s.parse::<usize>().expect("--rows")));
    let runs: usize = arg("--runs").map_or(1, |s| s.parse().expect("--runs"));
    let threads = rayon::current_num_threads();
    let paths = paths();
    let sizes: Vec<Size> = targets.iter().map(|&rows| measure(rows, runs, &paths)).collect();
    println!("### BW6-767 Pari prove by phase (chain circuit, {threads} threads, median of {runs} runs)");
    for (p, (label, _, _)) in paths.iter().enumerate() {
        growth_table(&sizes, label, p);
    }
    if paths.len() != 2 {
        return;
    }
    println!("\n#### Before against after, same run\n");
    println!("| size | SR1CS rows | domain n before | after | setup before | after | prove before | prove after | speed-up |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for s in &sizes {
        let (b, a) = (&s.paths[0], &s.paths[1]);
        let setup = |x: &PathResult| if b.0 == a.0 && std::ptr::eq(x, a) { "(same key)".to_string() } else { fmt(x.1) };
        println!(
            "| {} | {} | {} | {} | {} | {} | {} | {} | {:.2}× |",
            s.label,
            s.rows,
            b.0,
            a.0,
            setup(b),
            setup(a),
            fmt(b.3),
            fmt(a.3),
            b.3 / a.3
        );
    }
    // Per phase: at the largest size, and wherever the two rules picked different domains.
    let largest = sizes.iter().map(|s| s.rows).max().unwrap_or(0);
    for s in sizes.iter().filter(|s| s.rows == largest || s.paths[0].0 != s.paths[1].0) {
        println!("\n#### Per phase at {}, before (n = {}) against after (n = {})\n", s.label, s.paths[0].0, s.paths[1].0);
        println!("| phase | before | after | speed-up |");
        println!("|---|---|---|---|");
        let mut names: Vec<&'static str> = s.paths[0].2.iter().map(|(n, _)| *n).collect();
        for (n, _) in &s.paths[1].2 {
            if !names.contains(n) {
                names.push(n);
            }
        }
        for name in names {
            let t = |p: usize| s.paths[p].2.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
            let cell = |t: Option<f64>| t.map_or("–".into(), fmt);
            let up = match (t(0), t(1)) {
                (Some(b), Some(a)) if a > 0.0 => format!("{:.2}×", b / a),
                _ => "–".into(),
            };
            println!("| {name} | {} | {} | {up} |", cell(t(0)), cell(t(1)));
        }
    }
}

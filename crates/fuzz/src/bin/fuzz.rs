//! Runs every fuzz target for a time budget (or an input count) and prints a markdown table.
//!
//! `cargo run --release -p fuzz --bin fuzz -- --seconds 600 [--only NAME] [--seed N]`

use std::time::Duration;

use clap::Parser;
use fuzz::engine::{self, Budget};

#[derive(Parser)]
#[command(about = "Mutation fuzzing of every decoder that takes bytes from outside")]
struct Args {
    /// Seconds per target.
    #[arg(long, default_value_t = 10)]
    seconds: u64,
    /// Inputs per target instead of a time budget.
    #[arg(long)]
    inputs: Option<u64>,
    /// Only targets whose name contains this.
    #[arg(long)]
    only: Option<String>,
    /// Seed of the mutation stream.
    #[arg(long, default_value_t = 1)]
    seed: u64,
}

fn main() {
    let args = Args::parse();
    let budget = match args.inputs {
        Some(n) => Budget::Inputs(n),
        None => Budget::Time(Duration::from_secs(args.seconds)),
    };
    eprintln!("building seeds (proving a few small statements)...");
    let targets = fuzz::all_targets();
    println!("| target | inputs | accepted | panics | seconds | inputs/s |");
    println!("|---|---:|---:|---:|---:|---:|");
    let mut total_panics = 0;
    let mut examples = Vec::new();
    for t in targets.iter().filter(|t| args.only.as_deref().is_none_or(|o| t.name.contains(o))) {
        let quiet = engine::quiet_panics();
        let r = engine::run(t, budget, args.seed);
        drop(quiet);
        let secs = r.elapsed.as_secs_f64();
        println!("| {} | {} | {} | {} | {:.1} | {:.0} |", r.name, r.inputs, r.accepted, r.panics, secs, r.inputs as f64 / secs.max(1e-9));
        total_panics += r.panics;
        examples.extend(r.examples.into_iter().map(|e| (r.name, e)));
    }
    for (name, (msg, input)) in &examples {
        println!("\npanic in {name}: {msg}\n  input (first 96 bytes): {input}");
    }
    if total_panics > 0 {
        std::process::exit(1);
    }
}

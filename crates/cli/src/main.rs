//! `prover`: the command-line entry point of the proving platform.
//!
//! Each family of subcommands lives in its own module; this file only wires them together.

use clap::{Parser, Subcommand};

mod dev;
mod pari;
mod reckle;
mod util;

#[derive(Parser)]
#[command(name = "prover", version, about = "Kubernetes-native proving platform: Reckle, Hekaton and Pari proofs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Embedded demo: build a tree, prove a batch, update a leaf, verify both.
    Dev(dev::DevArgs),
    /// Reckle-tree batch proofs: prove, update, verify.
    #[command(subcommand)]
    Reckle(reckle::ReckleCommand),
    /// Pari proofs: setup, prove, verify, batch-verify.
    #[command(subcommand)]
    Pari(pari::PariCommand),
}

fn main() -> std::process::ExitCode {
    match run(Cli::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The error chain on one line (no backtrace): these are user-facing messages.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Dev(args) => dev::run(args),
        Command::Reckle(cmd) => reckle::run(cmd),
        Command::Pari(cmd) => pari::run(cmd),
    }
}

//! `prover hekaton prove | verify`: Hekaton proofs of partitioned circuits on this machine
//! (the distributed steps run in one process). A proof directory holds `circuit.json` (the
//! circuit and its parameters), `vk.bin` (the verifying key, made by this `prove`), `proof.bin`
//! (the subcircuit commitments and Mirage proofs, the Merkle root and leaf-0 path) and
//! `public.json` (public inputs, decimal).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, ensure, Context};
use ark_bls12_381::{Bls12_381, Fr};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};
use clap::{Args, Subcommand, ValueEnum};
use hekaton::workflow::{self, HekatonProof, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::util::{secs, timed, write_dir_atomically};

#[derive(Subcommand)]
pub enum HekatonCommand {
    /// Split a circuit into subcircuits, prove each with Mirage, and write a proof directory.
    Prove(ProveArgs),
    /// Verify a proof directory: prints `verified`, or fails with the reason.
    Verify { dir: PathBuf },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Circuit {
    /// The paper's §8.1 benchmark circuit: five subcircuit shapes chained through shared wires.
    Synthetic,
    /// A batch of Poseidon Merkle-path updates, each path split across subcircuits.
    MerkleUpdate,
}

#[derive(Args, Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProveArgs {
    #[arg(long, value_enum)]
    pub circuit: Circuit,
    /// synthetic: number of subcircuits.
    #[arg(long, default_value_t = 4)]
    pub subcircuits: usize,
    /// synthetic: constraints per subcircuit.
    #[arg(long, default_value_t = 256)]
    pub steps: usize,
    /// synthetic: shared wires per subcircuit.
    #[arg(long, default_value_t = 8)]
    pub wires: usize,
    /// merkle-update: tree depth.
    #[arg(long, default_value_t = 8)]
    pub depth: usize,
    /// merkle-update: number of leaf updates.
    #[arg(long, default_value_t = 2)]
    pub updates: usize,
    /// merkle-update: subcircuits per path (must divide --depth).
    #[arg(long, default_value_t = 2)]
    pub parts: usize,
    /// Seed of the circuit's inputs (the setup and proofs use OS randomness).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    #[arg(long)]
    #[serde(skip)]
    pub out: PathBuf,
}

pub fn run(cmd: HekatonCommand) -> anyhow::Result<()> {
    match cmd {
        HekatonCommand::Prove(a) => prove(a),
        HekatonCommand::Verify { dir } => {
            let (n, t) = timed(|| verify(&dir));
            let n = n?;
            println!("{n} subcircuit proofs checked in {}", secs(t));
            println!("verified");
            Ok(())
        }
    }
}

fn check(a: &ProveArgs) -> anyhow::Result<()> {
    match a.circuit {
        Circuit::Synthetic => {
            ensure!((1..=1024).contains(&a.subcircuits), "--subcircuits must be in 1..=1024");
            ensure!((1..=1 << 22).contains(&a.steps), "--steps must be in 1..=4194304");
            ensure!((1..=4096).contains(&a.wires), "--wires must be in 1..=4096");
        }
        Circuit::MerkleUpdate => {
            ensure!((1..=32).contains(&a.depth), "--depth must be in 1..=32");
            ensure!((1..=1024).contains(&a.updates), "--updates must be in 1..=1024");
            ensure!(a.parts >= 1 && a.depth.is_multiple_of(a.parts), "--parts must divide --depth ({})", a.depth);
        }
    }
    Ok(())
}

fn prove(a: ProveArgs) -> anyhow::Result<()> {
    check(&a)?;
    let mut rng = ChaCha20Rng::from_entropy();
    let (vk, proof, x, t) = match a.circuit {
        Circuit::Synthetic => {
            let c = hekaton::circuits::bench_circuit::<Fr>(a.subcircuits, a.steps, a.wires, Fr::from(a.seed));
            let (pk, vk) = workflow::setup::<Bls12_381, _, _>(&c, &mut rng).context("setup")?;
            let (p, t) = timed(|| workflow::prove(&pk, &c, &mut rng));
            (vk, p.context("prove")?, c.public_inputs.clone(), t)
        }
        Circuit::MerkleUpdate => {
            let mut crng = ChaCha20Rng::seed_from_u64(a.seed);
            let c = hekaton::circuits::merkle_update_circuit::<Fr, _>(a.depth, a.updates, a.parts, &mut crng);
            let (pk, vk) = workflow::setup::<Bls12_381, _, _>(&c, &mut rng).context("setup")?;
            let (p, t) = timed(|| workflow::prove(&pk, &c, &mut rng));
            (vk, p.context("prove")?, c.public_inputs.clone(), t)
        }
    };
    eprintln!("proved {} subcircuits in {}", vk.num_subcircuits(), secs(t));
    let mut vk_bytes = Vec::new();
    vk.serialize_compressed(&mut vk_bytes)?;
    let mut proof_bytes = Vec::new();
    proof.serialize_compressed(&mut proof_bytes)?;
    let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
    write_dir_atomically(&a.out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&a)?)?;
        std::fs::write(dir.join("vk.bin"), &vk_bytes)?;
        std::fs::write(dir.join("proof.bin"), &proof_bytes)?;
        std::fs::write(dir.join("public.json"), serde_json::to_vec_pretty(&public)?)?;
        Ok(())
    })?;
    println!("wrote {} (proof {} bytes, verifying key {} bytes)", a.out.display(), proof_bytes.len(), vk_bytes.len());
    Ok(())
}

fn read<T: CanonicalDeserialize>(dir: &Path, name: &str) -> anyhow::Result<T> {
    let bytes = std::fs::read(dir.join(name)).with_context(|| format!("{}: cannot read {name}", dir.display()))?;
    let mut slice = bytes.as_slice();
    let v = T::deserialize_with_mode(&mut slice, Compress::Yes, Validate::Yes).with_context(|| format!("{}: {name}", dir.display()))?;
    if !slice.is_empty() {
        bail!("{}: {name} has {} trailing bytes", dir.display(), slice.len());
    }
    Ok(v)
}

fn verify(dir: &Path) -> anyhow::Result<usize> {
    let vk: VerifyingKey<Bls12_381> = read(dir, "vk.bin")?;
    let proof: HekatonProof<Bls12_381> = read(dir, "proof.bin")?;
    let public: Vec<String> = serde_json::from_slice(
        &std::fs::read(dir.join("public.json")).with_context(|| format!("{}: cannot read public.json", dir.display()))?,
    )
    .with_context(|| format!("{}: public.json", dir.display()))?;
    let x = public
        .iter()
        .enumerate()
        .map(|(i, s)| Fr::from_str(s).map_err(|_| anyhow::anyhow!("public.json entry {i} is not a field element")))
        .collect::<anyhow::Result<Vec<_>>>()?;
    workflow::verify(&vk, &x, &proof, &mut ChaCha20Rng::from_entropy()).context("the proof does not verify")?;
    Ok(vk.num_subcircuits())
}

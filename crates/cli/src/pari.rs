//! `prover pari setup | prove | verify | batch-verify` for the built-in circuit families.
//!
//! A key directory holds `circuit.json` (curve and circuit family), `pk.bin` and `vk.bin`.
//! A proof directory holds `proof.bin` and `public.json` (public inputs, decimal).

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, Context};
use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use clap::{Args, Subcommand, ValueEnum};
use pari::circuits::CircuitFamily;
use pari::{Proof, ProvingKey, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::util::{secs, timed, write_dir_atomically};

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Curve {
    #[value(name = "bls12-381")]
    Bls12_381,
    #[value(name = "bn254")]
    Bn254,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Family {
    Chain,
    Poseidon,
}

#[derive(Subcommand)]
pub enum PariCommand {
    /// Circuit-specific setup: writes pk.bin, vk.bin and circuit.json into --out.
    Setup(SetupArgs),
    /// Prove an instance of the keyed circuit (witness derived from --witness-seed).
    Prove {
        #[arg(long)]
        keys: PathBuf,
        #[arg(long, default_value_t = 1)]
        witness_seed: u64,
        #[arg(long)]
        out: PathBuf,
    },
    /// Verify one proof directory: prints `verified` or exits non-zero.
    Verify {
        #[arg(long)]
        keys: PathBuf,
        proof: PathBuf,
    },
    /// Verify many proof directories under one key together; on failure, names the bad ones.
    BatchVerify {
        #[arg(long)]
        keys: PathBuf,
        #[arg(required = true)]
        proofs: Vec<PathBuf>,
    },
    /// Verify the bundles of a Pari job fetched from the platform (`vk.bin`, `bundle-*.bin`),
    /// one batch verification per bundle.
    VerifyBundles { dir: PathBuf },
}

#[derive(Args)]
pub struct SetupArgs {
    #[arg(long, value_enum, default_value = "bls12-381")]
    pub curve: Curve,
    #[arg(long, value_enum, default_value = "chain")]
    pub circuit: Family,
    /// Chain steps, or Poseidon preimage length.
    #[arg(long, default_value_t = 1024)]
    pub size: usize,
    /// Seed of the setup randomness (omit for OS randomness; a fixed seed is for tests only).
    #[arg(long)]
    pub seed: Option<u64>,
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct CircuitFile {
    curve: Curve,
    circuit: CircuitFamily,
}

pub fn run(cmd: PariCommand) -> anyhow::Result<()> {
    match cmd {
        PariCommand::Setup(a) => {
            let circuit = match a.circuit {
                Family::Chain => CircuitFamily::Chain { steps: a.size },
                Family::Poseidon => CircuitFamily::Poseidon { inputs: a.size },
            };
            circuit.validate().map_err(anyhow::Error::msg).context("--size")?;
            let mut rng = match a.seed {
                Some(s) => ChaCha20Rng::seed_from_u64(s),
                None => ChaCha20Rng::from_entropy(),
            };
            match a.curve {
                Curve::Bls12_381 => setup::<ark_bls12_381::Bls12_381>(a.curve, circuit, &a.out, &mut rng),
                Curve::Bn254 => setup::<ark_bn254::Bn254>(a.curve, circuit, &a.out, &mut rng),
            }
        }
        PariCommand::Prove { keys, witness_seed, out } => match read_circuit(&keys)?.curve {
            Curve::Bls12_381 => prove::<ark_bls12_381::Bls12_381>(&keys, witness_seed, &out),
            Curve::Bn254 => prove::<ark_bn254::Bn254>(&keys, witness_seed, &out),
        },
        PariCommand::Verify { keys, proof } => {
            match read_circuit(&keys)?.curve {
                Curve::Bls12_381 => verify_many::<ark_bls12_381::Bls12_381>(&keys, &[proof])?,
                Curve::Bn254 => verify_many::<ark_bn254::Bn254>(&keys, &[proof])?,
            }
            println!("verified");
            Ok(())
        }
        PariCommand::VerifyBundles { dir } => verify_bundles(&dir),
        PariCommand::BatchVerify { keys, proofs } => {
            match read_circuit(&keys)?.curve {
                Curve::Bls12_381 => verify_many::<ark_bls12_381::Bls12_381>(&keys, &proofs)?,
                Curve::Bn254 => verify_many::<ark_bn254::Bn254>(&keys, &proofs)?,
            }
            println!("verified {} proofs", proofs.len());
            Ok(())
        }
    }
}

fn read_circuit(keys: &Path) -> anyhow::Result<CircuitFile> {
    let p = keys.join("circuit.json");
    let bytes = std::fs::read(&p).with_context(|| format!("--keys {}: cannot read circuit.json", keys.display()))?;
    let c: CircuitFile = serde_json::from_slice(&bytes).with_context(|| format!("{}: invalid", p.display()))?;
    c.circuit.validate().map_err(anyhow::Error::msg).with_context(|| format!("{}", p.display()))?;
    Ok(c)
}

fn setup<E: Pairing>(curve: Curve, circuit: CircuitFamily, out: &Path, rng: &mut ChaCha20Rng) -> anyhow::Result<()>
where
    E::ScalarField: Absorb,
{
    let (res, t) = timed(|| pari::setup::<E, _, _>(circuit.blank::<E::ScalarField>(), rng));
    let (pk, vk) = res?;
    eprintln!("setup: {} SR1CS rows, domain {}, in {}", pk.sr1cs.num_rows(), vk.domain_size, secs(t));
    write_dir_atomically(out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&CircuitFile { curve, circuit })?)?;
        std::fs::write(dir.join("pk.bin"), pk.to_bytes())?;
        std::fs::write(dir.join("vk.bin"), vk.to_bytes())?;
        Ok(())
    })?;
    println!("wrote {}", out.display());
    Ok(())
}

fn prove<E: Pairing>(keys: &Path, seed: u64, out: &Path) -> anyhow::Result<()>
where
    E::ScalarField: Absorb,
{
    let c = read_circuit(keys)?;
    let pk_bytes = std::fs::read(keys.join("pk.bin")).with_context(|| format!("{}: cannot read pk.bin", keys.display()))?;
    let pk = ProvingKey::<E>::from_bytes(&pk_bytes).with_context(|| format!("{}: pk.bin", keys.display()))?;
    let (circuit, x) = c.circuit.instance::<E::ScalarField>(seed);
    let (proof, t) = timed(|| pari::prove(&pk, circuit, &mut ChaCha20Rng::from_entropy()));
    let proof = proof?;
    eprintln!("proved in {}", secs(t));
    let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
    write_dir_atomically(out, |dir| {
        std::fs::write(dir.join("proof.bin"), proof.to_bytes())?;
        std::fs::write(dir.join("public.json"), serde_json::to_vec_pretty(&public)?)?;
        Ok(())
    })?;
    println!("wrote {} ({} bytes)", out.display(), proof.to_bytes().len());
    Ok(())
}

fn read_proof<E: Pairing>(dir: &Path) -> anyhow::Result<(Vec<E::ScalarField>, Proof<E>)> {
    let bytes = std::fs::read(dir.join("proof.bin")).with_context(|| format!("{}: cannot read proof.bin", dir.display()))?;
    let proof = Proof::<E>::from_bytes(&bytes).with_context(|| format!("{}: proof.bin", dir.display()))?;
    let public_bytes =
        std::fs::read(dir.join("public.json")).with_context(|| format!("{}: cannot read public.json", dir.display()))?;
    let public: Vec<String> =
        serde_json::from_slice(&public_bytes).with_context(|| format!("{}: public.json", dir.display()))?;
    let x = public
        .iter()
        .enumerate()
        .map(|(i, s)| {
            E::ScalarField::from_str(s)
                .map_err(|_| anyhow::anyhow!("{}: public.json entry {i} is not a field element", dir.display()))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    Ok((x, proof))
}

fn verify_many<E: Pairing>(keys: &Path, dirs: &[PathBuf]) -> anyhow::Result<()> {
    let vk_bytes = std::fs::read(keys.join("vk.bin")).with_context(|| format!("{}: cannot read vk.bin", keys.display()))?;
    let pvk = VerifyingKey::<E>::from_bytes(&vk_bytes).with_context(|| format!("{}: vk.bin", keys.display()))?.prepare();
    let loaded = dirs.iter().map(|d| read_proof::<E>(d)).collect::<anyhow::Result<Vec<_>>>()?;
    let items: Vec<(&[E::ScalarField], &Proof<E>)> = loaded.iter().map(|(x, p)| (x.as_slice(), p)).collect();
    let (res, t) = timed(|| pari::batch_verify_locate(&pvk, &items, &mut ChaCha20Rng::from_entropy()));
    match res {
        Ok(()) => {
            eprintln!("checked {} proof(s) in {}", items.len(), secs(t));
            Ok(())
        }
        Err(bad) => {
            let names: Vec<String> = bad.iter().map(|&i| dirs[i].display().to_string()).collect();
            bail!("verification failed for {} of {} proof(s): {}", bad.len(), items.len(), names.join(", "))
        }
    }
}

fn verify_bundles(dir: &Path) -> anyhow::Result<()> {
    use ark_bls12_381::Bls12_381;
    if read_circuit(dir)?.curve != Curve::Bls12_381 {
        anyhow::bail!("{}: platform bundles are on BLS12-381", dir.display());
    }
    let vk_bytes = std::fs::read(dir.join("vk.bin")).with_context(|| format!("{}: cannot read vk.bin", dir.display()))?;
    let vk = pari::VerifyingKey::<Bls12_381>::from_bytes(&vk_bytes).context("vk.bin")?;
    let pvk = vk.prepare();
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("bundle-") && n.ends_with(".bin")))
        .collect();
    names.sort();
    anyhow::ensure!(!names.is_empty(), "{}: no bundle-*.bin files", dir.display());
    let mut rng = ChaCha20Rng::from_entropy();
    let (mut proofs, start) = (0, std::time::Instant::now());
    for path in &names {
        let bytes = std::fs::read(path)?;
        let bundle = pari::bundle::Bundle::<Bls12_381>::from_bytes(&bytes).with_context(|| path.display().to_string())?;
        if let Err(e) = bundle.verify(&pvk, &mut rng) {
            let bad = bundle.locate_invalid(&pvk, &mut rng).unwrap_or_default();
            anyhow::bail!("{}: {e} (invalid entries: {bad:?})", path.display());
        }
        proofs += bundle.items.len();
    }
    println!("verified {proofs} proofs in {} bundles in {}", names.len(), secs(start.elapsed()));
    Ok(())
}

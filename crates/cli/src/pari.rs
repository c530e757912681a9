//! `prover pari setup | prove | verify | batch-verify | verify-bundles` for the built-in circuit
//! families and for circom circuits (`setup --r1cs FILE`, `prove --wtns FILE`).
//!
//! A key directory holds `circuit.json` (curve, and the circuit family or the circom file's
//! digest and sizes), `pk.bin`, `vk.bin`, and for circom a copy of the `.r1cs` as
//! `circuit.r1cs`. A proof directory holds `proof.bin` and `public.json` (public inputs,
//! decimal; for circom the public signals in circom's order: outputs, then public inputs).
//!
//! Trust: `setup` prints the verifying key's digest. Every verify command takes `--vk-digest HEX`
//! and refuses a `vk.bin` whose digest differs; without it, it says that it trusted the key
//! found beside the proofs (a key for any circuit of the same size would verify anything).
//! `batch-verify` and `verify-bundles` check every entry and print one line per bad one, a
//! summary `N verified, M bad`, and exit non-zero if any is bad; `--json` prints the report as
//! JSON on stdout instead.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use clap::{Args, Subcommand, ValueEnum};
use pari::circuits::CircuitFamily;
use pari::batch::{BadReason, Entry, Report};
use pari::{KeyDigest, PreparedVerifyingKey, Proof, ProvingKey, VerifyingKey};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::util::{canonical_field, secs, timed, write_dir_atomically};

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
    /// Prove an instance of the keyed circuit: a built-in family's witness from
    /// --witness-seed, a circom circuit's from --wtns (snarkjs / circom's witness generator).
    Prove {
        #[arg(long)]
        keys: PathBuf,
        #[arg(long, default_value_t = 1)]
        witness_seed: u64,
        /// The witness of a circom circuit (.wtns, one value per wire).
        #[arg(long, value_name = "FILE")]
        wtns: Option<PathBuf>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Verify one proof directory: prints `verified` or exits non-zero.
    Verify {
        #[arg(long)]
        keys: PathBuf,
        #[command(flatten)]
        pin: Pin,
        proof: PathBuf,
    },
    /// Verify many proof directories under one key together; names every bad one (path and
    /// reason), prints `N verified, M bad`, exits non-zero if any is bad.
    BatchVerify {
        #[arg(long)]
        keys: PathBuf,
        #[command(flatten)]
        pin: Pin,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
        #[arg(required = true)]
        proofs: Vec<PathBuf>,
    },
    /// Export in snarkjs's JSON conventions (decimal strings, [x, y, "1"] points):
    /// verification_key.json from DIR's vk.bin, and proof-<name>.json with public-<name>.json
    /// for each entry of DIR's bundles and each --proof directory.
    ExportSnarkjs(ExportArgs),
    /// Verify the bundles of a Pari job fetched from the platform (`vk.bin`, `bundle-<k>.bin`):
    /// every entry of every bundle, one batch verification per bundle; names every bad entry.
    /// Where the job publishes statements (`public-<k>.json`, a circom job), each must be what
    /// its bundle proves (canonical values, the same witness numbers); a bundle missing from
    /// 0..N (N: --bundles, else the manifest's list, else the largest index found) or beyond it
    /// is named by index.
    VerifyBundles {
        dir: PathBuf,
        #[command(flatten)]
        pin: Pin,
        /// The number of bundles the job made (bundle-0.bin … bundle-<N-1>.bin): pins the
        /// count, so that a removed last bundle is noticed. Without it the count comes from
        /// manifest.json (what the server says) or from the files found, and the command says so.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        bundles: Option<u64>,
        /// Also print each verified entry's public inputs (for a circom circuit its public
        /// signals, circom's order), one line per entry: `bundle-K.bin#I: v, v, …`.
        #[arg(long)]
        public: bool,
        /// Print the report as JSON on stdout.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub struct ExportArgs {
    /// A key directory (`prover pari setup`, `prover circuit export-vk`) or a fetched job's
    /// proof directory (`prover fetch`, `prover bundle`): its `circuit.json` names the curve.
    pub dir: PathBuf,
    /// Proof directories (`prover pari prove`: proof.bin, public.json) to export too.
    #[arg(long, value_name = "DIR")]
    pub proof: Vec<PathBuf>,
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args)]
pub struct Pin {
    /// The digest (128 hex characters, printed by `prover pari setup`) of the verifying key the
    /// proofs must be under; a `vk.bin` with another digest is refused. Without it the command
    /// trusts the `vk.bin` it finds, and says so.
    #[arg(long, value_name = "HEX")]
    pub vk_digest: Option<KeyDigest>,
}

#[derive(Args)]
pub struct SetupArgs {
    /// The curve (default bls12-381; with --r1cs, the file's prime decides).
    #[arg(long, value_enum)]
    pub curve: Option<Curve>,
    /// A circom circuit (.r1cs, compiled with --prime bn128 or bls12381) instead of a built-in
    /// family.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["circuit", "size"])]
    pub r1cs: Option<PathBuf>,
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
    /// A built-in family ...
    #[serde(default, skip_serializing_if = "Option::is_none")]
    circuit: Option<CircuitFamily>,
    /// ... or a circom circuit, kept beside the keys as `circuit.r1cs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    circom: Option<CircomInfo>,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct CircomInfo {
    /// `circom::digest` of `circuit.r1cs`.
    r1cs_digest: String,
    wires: u32,
    constraints: usize,
    /// Public signals: outputs, then public inputs.
    public_outputs: u32,
    public_inputs: u32,
}

/// The curve whose scalar field is the `.r1cs` file's prime.
fn curve_of_r1cs(path: &Path, bytes: &[u8]) -> anyhow::Result<Curve> {
    match circom::R1cs::<ark_bn254::Fr>::from_bytes(bytes) {
        Ok(_) => Ok(Curve::Bn254),
        Err(circom::Error::Prime { .. }) => {
            circom::R1cs::<ark_bls12_381::Fr>::from_bytes(bytes).with_context(|| format!("--r1cs {}", path.display()))?;
            Ok(Curve::Bls12_381)
        }
        Err(e) => Err(e).with_context(|| format!("--r1cs {}", path.display())),
    }
}

pub fn run(cmd: PariCommand) -> anyhow::Result<()> {
    match cmd {
        PariCommand::Setup(a) if a.r1cs.is_some() => {
            let path = a.r1cs.clone().expect("checked");
            let bytes = std::fs::read(&path).with_context(|| format!("--r1cs {}: cannot read", path.display()))?;
            let curve = curve_of_r1cs(&path, &bytes)?;
            if let Some(asked) = a.curve {
                if asked != curve {
                    bail!(
                        "--curve {asked:?} but --r1cs {} is over {curve:?}'s scalar field (compile it with circom --prime {})",
                        path.display(),
                        if asked == Curve::Bn254 { "bn128" } else { "bls12381" }
                    );
                }
            }
            let mut rng = match a.seed {
                Some(s) => ChaCha20Rng::seed_from_u64(s),
                None => ChaCha20Rng::from_entropy(),
            };
            match curve {
                Curve::Bls12_381 => setup_circom::<ark_bls12_381::Bls12_381>(curve, &bytes, &a.out, &mut rng),
                Curve::Bn254 => setup_circom::<ark_bn254::Bn254>(curve, &bytes, &a.out, &mut rng),
            }
        }
        PariCommand::Setup(a) => {
            let curve = a.curve.unwrap_or(Curve::Bls12_381);
            let circuit = match a.circuit {
                Family::Chain => CircuitFamily::Chain { steps: a.size },
                Family::Poseidon => CircuitFamily::Poseidon { inputs: a.size },
            };
            circuit.validate().map_err(anyhow::Error::msg).context("--size")?;
            let mut rng = match a.seed {
                Some(s) => ChaCha20Rng::seed_from_u64(s),
                None => ChaCha20Rng::from_entropy(),
            };
            match curve {
                Curve::Bls12_381 => setup::<ark_bls12_381::Bls12_381>(curve, circuit, &a.out, &mut rng),
                Curve::Bn254 => setup::<ark_bn254::Bn254>(curve, circuit, &a.out, &mut rng),
            }
        }
        PariCommand::Prove { keys, witness_seed, wtns, out } => {
            let c = read_circuit(&keys)?;
            match (c.circom.is_some(), wtns) {
                (true, Some(w)) => match c.curve {
                    Curve::Bls12_381 => prove_circom::<ark_bls12_381::Bls12_381>(&keys, &w, &out),
                    Curve::Bn254 => prove_circom::<ark_bn254::Bn254>(&keys, &w, &out),
                },
                (true, None) => bail!("--keys {} are for a circom circuit: give its witness with --wtns FILE", keys.display()),
                (false, Some(_)) => bail!("--wtns: --keys {} are for a built-in family, whose witness comes from --witness-seed", keys.display()),
                (false, None) => match c.curve {
                    Curve::Bls12_381 => prove::<ark_bls12_381::Bls12_381>(&keys, witness_seed, &out),
                    Curve::Bn254 => prove::<ark_bn254::Bn254>(&keys, witness_seed, &out),
                },
            }
        }
        PariCommand::Verify { keys, pin, proof } => match read_circuit(&keys)?.curve {
            Curve::Bls12_381 => verify_one::<ark_bls12_381::Bls12_381>(&keys, pin, &proof),
            Curve::Bn254 => verify_one::<ark_bn254::Bn254>(&keys, pin, &proof),
        },
        PariCommand::ExportSnarkjs(a) => match bundles_curve(&a.dir)? {
            Curve::Bls12_381 => export_snarkjs::<ark_bls12_381::Bls12_381>(&a),
            Curve::Bn254 => export_snarkjs::<ark_bn254::Bn254>(&a),
        },
        PariCommand::VerifyBundles { dir, pin, bundles, json, public } => match bundles_curve(&dir)? {
            Curve::Bls12_381 => verify_bundles::<ark_bls12_381::Bls12_381>(&dir, pin, bundles, json, public),
            Curve::Bn254 => verify_bundles::<ark_bn254::Bn254>(&dir, pin, bundles, json, public),
        },
        PariCommand::BatchVerify { keys, pin, json, proofs } => match read_circuit(&keys)?.curve {
            Curve::Bls12_381 => batch_verify::<ark_bls12_381::Bls12_381>(&keys, pin, json, &proofs),
            Curve::Bn254 => batch_verify::<ark_bn254::Bn254>(&keys, pin, json, &proofs),
        },
    }
}

fn export_snarkjs<E: Pairing>(a: &ExportArgs) -> anyhow::Result<()> {
    use pari::snarkjs;
    let vk_path = a.dir.join("vk.bin");
    let vk_bytes = std::fs::read(&vk_path).with_context(|| format!("{}: cannot read", vk_path.display()))?;
    let vk = VerifyingKey::<E>::from_bytes(&vk_bytes).with_context(|| vk_path.display().to_string())?;
    let mut files: Vec<(String, Vec<u8>)> = vec![("verification_key.json".into(), serde_json::to_vec_pretty(&snarkjs::verification_key(&vk))?)];
    let mut add = |name: String, proof: &Proof<E>, x: &[E::ScalarField]| -> anyhow::Result<()> {
        files.push((format!("proof-{name}.json"), serde_json::to_vec_pretty(&snarkjs::proof(proof))?));
        files.push((format!("public-{name}.json"), serde_json::to_vec_pretty(&snarkjs::public(x))?));
        Ok(())
    };
    let mut bundles: Vec<PathBuf> = std::fs::read_dir(&a.dir)
        .with_context(|| format!("{}: cannot list", a.dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("bundle-") && n.ends_with(".bin")))
        .collect();
    bundles.sort();
    for path in &bundles {
        let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))?;
        let b = pari::bundle::Bundle::<E>::from_bytes(&bytes).with_context(|| path.display().to_string())?;
        let stem = path.file_stem().and_then(|n| n.to_str()).unwrap_or("bundle").trim_start_matches("bundle-").to_string();
        for (i, (x, p)) in b.items.iter().enumerate() {
            add(format!("{stem}-{i}"), p, x)?;
        }
    }
    for (i, dir) in a.proof.iter().enumerate() {
        let (public, proof) = read_entry::<E>(dir).map_err(|e| anyhow::anyhow!("--proof {}: {e}", dir.display()))?;
        add(format!("p{i}"), &proof, &public)?;
    }
    let n = files.len();
    write_dir_atomically(&a.out, |out| {
        for (name, bytes) in &files {
            std::fs::write(out.join(name), bytes)?;
        }
        Ok(())
    })?;
    println!("wrote {} ({n} files; vk digest {})", a.out.display(), vk.digest());
    Ok(())
}

/// The curve a fetched Pari job's `circuit.json` names (a built-in family's job or a
/// registered circom circuit's).
fn bundles_curve(dir: &Path) -> anyhow::Result<Curve> {
    #[derive(serde::Deserialize)]
    struct Named {
        curve: Curve,
    }
    let p = dir.join("circuit.json");
    let bytes = std::fs::read(&p).with_context(|| format!("{}: cannot read circuit.json", dir.display()))?;
    Ok(serde_json::from_slice::<Named>(&bytes).with_context(|| format!("{}: invalid", p.display()))?.curve)
}

fn read_circuit(keys: &Path) -> anyhow::Result<CircuitFile> {
    let p = keys.join("circuit.json");
    let bytes = std::fs::read(&p).with_context(|| format!("--keys {}: cannot read circuit.json", keys.display()))?;
    let c: CircuitFile = serde_json::from_slice(&bytes).with_context(|| format!("{}: invalid", p.display()))?;
    match (&c.circuit, &c.circom) {
        (Some(f), None) => f.validate().map_err(anyhow::Error::msg).with_context(|| format!("{}", p.display()))?,
        (None, Some(_)) => {}
        _ => bail!("{}: names neither or both of a circuit family and a circom circuit", p.display()),
    }
    Ok(c)
}

fn setup<E: Pairing>(curve: Curve, circuit: CircuitFamily, out: &Path, rng: &mut ChaCha20Rng) -> anyhow::Result<()>
where
    E::ScalarField: Absorb,
{
    let (res, t) = timed(|| pari::setup::<E, _, _>(circuit.blank::<E::ScalarField>(), rng));
    let (pk, vk) = res?;
    eprintln!("setup: {} SR1CS rows, domain {}, in {}", pk.sr1cs.num_rows(), vk.domain_size, secs(t));
    write_keys(out, &CircuitFile { curve, circuit: Some(circuit), circom: None }, None, &pk, &vk)
}

/// Writes a key directory (`circuit.json`, the circom file when there is one, `pk.bin`,
/// `vk.bin`) and prints the verifying key's digest to pin.
fn write_keys<E: Pairing>(out: &Path, circuit: &CircuitFile, r1cs: Option<&[u8]>, pk: &ProvingKey<E>, vk: &VerifyingKey<E>) -> anyhow::Result<()> {
    let digest = vk.digest();
    write_dir_atomically(out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(circuit)?)?;
        if let Some(r1cs) = r1cs {
            std::fs::write(dir.join("circuit.r1cs"), r1cs)?;
        }
        std::fs::write(dir.join("pk.bin"), pk.to_bytes())?;
        std::fs::write(dir.join("vk.bin"), vk.to_bytes())?;
        Ok(())
    })?;
    println!("wrote {}", out.display());
    println!("vk digest: {digest}");
    eprintln!("(pin it: verifiers pass --vk-digest {digest})");
    Ok(())
}

/// Writes a proof directory (`proof.bin`, `public.json`).
fn write_proof<E: Pairing>(out: &Path, proof: &Proof<E>, public: &[String]) -> anyhow::Result<()> {
    write_dir_atomically(out, |dir| {
        std::fs::write(dir.join("proof.bin"), proof.to_bytes())?;
        std::fs::write(dir.join("public.json"), serde_json::to_vec_pretty(public)?)?;
        Ok(())
    })?;
    println!("wrote {} ({} bytes)", out.display(), proof.to_bytes().len());
    Ok(())
}

fn prove<E: Pairing>(keys: &Path, seed: u64, out: &Path) -> anyhow::Result<()>
where
    E::ScalarField: Absorb,
{
    let c = read_circuit(keys)?;
    let pk_bytes = std::fs::read(keys.join("pk.bin")).with_context(|| format!("{}: cannot read pk.bin", keys.display()))?;
    let pk = ProvingKey::<E>::from_bytes(&pk_bytes).with_context(|| format!("{}: pk.bin", keys.display()))?;
    let family = c.circuit.context("circuit.json names no circuit family")?;
    let (circuit, x) = family.instance::<E::ScalarField>(seed);
    let (proof, t) = timed(|| pari::prove(&pk, circuit, &mut ChaCha20Rng::from_entropy()));
    let proof = proof?;
    eprintln!("proved in {}", secs(t));
    let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
    write_proof(out, &proof, &public)
}

fn setup_circom<E: Pairing>(curve: Curve, r1cs_bytes: &[u8], out: &Path, rng: &mut ChaCha20Rng) -> anyhow::Result<()> {
    let r = circom::R1cs::<E::ScalarField>::from_bytes(r1cs_bytes).context("--r1cs")?;
    let (res, t) = timed(|| pari::setup::<E, _, _>(circom::CircomCircuit { r1cs: &r, witness: None }, rng));
    let (pk, vk) = res?;
    eprintln!(
        "setup: circom circuit, {} constraints, {} wires, {} public signals; {} SR1CS rows, domain {}, in {}",
        r.constraints.len(),
        r.num_wires,
        r.num_public(),
        pk.sr1cs.num_rows(),
        vk.domain_size,
        secs(t)
    );
    let info = CircomInfo {
        r1cs_digest: circom::digest(r1cs_bytes),
        wires: r.num_wires,
        constraints: r.constraints.len(),
        public_outputs: r.num_pub_out,
        public_inputs: r.num_pub_in,
    };
    write_keys(out, &CircuitFile { curve, circuit: None, circom: Some(info) }, Some(r1cs_bytes), &pk, &vk)
}

fn prove_circom<E: Pairing>(keys: &Path, wtns: &Path, out: &Path) -> anyhow::Result<()> {
    let c = read_circuit(keys)?;
    let info = c.circom.context("circuit.json names no circom circuit")?;
    let r1cs_path = keys.join("circuit.r1cs");
    let r1cs_bytes = std::fs::read(&r1cs_path).with_context(|| format!("{}: cannot read", r1cs_path.display()))?;
    if circom::digest(&r1cs_bytes) != info.r1cs_digest {
        bail!("{}: not the circuit the keys were made for (its digest differs from circuit.json's)", r1cs_path.display());
    }
    let r = circom::R1cs::<E::ScalarField>::from_bytes(&r1cs_bytes).with_context(|| r1cs_path.display().to_string())?;
    let w_bytes = std::fs::read(wtns).with_context(|| format!("--wtns {}: cannot read", wtns.display()))?;
    let w = circom::read_wtns::<E::ScalarField>(&w_bytes).with_context(|| format!("--wtns {}", wtns.display()))?;
    r.check_witness(&w).with_context(|| format!("--wtns {}", wtns.display()))?;
    let pk_bytes = std::fs::read(keys.join("pk.bin")).with_context(|| format!("{}: cannot read pk.bin", keys.display()))?;
    let pk = ProvingKey::<E>::from_bytes(&pk_bytes).with_context(|| format!("{}: pk.bin", keys.display()))?;
    let (proof, t) = timed(|| pari::prove(&pk, circom::CircomCircuit { r1cs: &r, witness: Some(&w) }, &mut ChaCha20Rng::from_entropy()));
    let proof = proof?;
    eprintln!("proved in {}", secs(t));
    let public: Vec<String> = r.public_signals(&w).iter().map(|v| v.to_string()).collect();
    write_proof(out, &proof, &public)?;
    println!("public signals: {}", public.join(", "));
    Ok(())
}

/// The key a verify command checks against: pinned by `--vk-digest`, or trusted as found.
struct Key<E: Pairing> {
    pvk: PreparedVerifyingKey<E>,
    path: PathBuf,
    pinned: bool,
}

impl<E: Pairing> Key<E> {
    fn load(path: PathBuf, pin: &Pin) -> anyhow::Result<Self> {
        let bytes = std::fs::read(&path).with_context(|| format!("{}: cannot read", path.display()))?;
        let vk = match &pin.vk_digest {
            Some(expected) => VerifyingKey::<E>::from_bytes_pinned(&bytes, expected)
                .with_context(|| format!("{}: refused (--vk-digest)", path.display()))?,
            None => VerifyingKey::<E>::from_bytes(&bytes).with_context(|| path.display().to_string())?,
        };
        let pvk = vk.prepare().with_context(|| path.display().to_string())?;
        Ok(Key { pvk, path, pinned: pin.vk_digest.is_some() })
    }

    /// One line saying what the proofs were checked against.
    fn describe(&self) -> String {
        let d = self.pvk.key_digest();
        if self.pinned {
            format!("key: {} has the expected vk digest {d} (--vk-digest)", self.path.display())
        } else {
            format!(
                "key: NOT PINNED: trusted {} found beside the proofs (vk digest {d}); a key for any circuit of the same size \
                 would verify anything: pass --vk-digest with the digest you expect",
                self.path.display()
            )
        }
    }
}

/// Reads one proof directory; what cannot be read or parsed becomes the entry's reason.
fn read_entry<E: Pairing>(dir: &Path) -> Entry<E> {
    let proof = std::fs::read(dir.join("proof.bin"))
        .map_err(|e| BadReason::UnparsableProof(format!("cannot read proof.bin: {e}")))
        .and_then(|b| Proof::<E>::from_bytes(&b).map_err(|e| BadReason::UnparsableProof(format!("proof.bin: {e}"))))?;
    let public_bytes = std::fs::read(dir.join("public.json"))
        .map_err(|e| BadReason::UnparsablePublicInput(format!("cannot read public.json: {e}")))?;
    let public: Vec<String> = serde_json::from_slice(&public_bytes)
        .map_err(|e| BadReason::UnparsablePublicInput(format!("public.json: {e}")))?;
    // Canonical values only: one spelling per field element, so that the statement a proof
    // verifies under is exactly the text it is published as (`util::canonical_field`).
    let x = public
        .iter()
        .enumerate()
        .map(|(i, s)| canonical_field::<E::ScalarField>(s).map_err(|m| BadReason::UnparsablePublicInput(format!("public.json entry {i}: {m}"))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((x, proof))
}

fn verify_one<E: Pairing>(keys: &Path, pin: Pin, dir: &Path) -> anyhow::Result<()> {
    let key = Key::<E>::load(keys.join("vk.bin"), &pin)?;
    println!("{}", key.describe());
    let entry = read_entry::<E>(dir);
    let report = pari::batch::verify_entries(&key.pvk, std::slice::from_ref(&entry), &mut ChaCha20Rng::from_entropy());
    if let Some(bad) = report.bad.first() {
        bail!("{}: {}", dir.display(), bad.reason);
    }
    println!("verified");
    if read_circuit(keys)?.circom.is_some() {
        // The values the proof was checked against (canonical, so also the file's text).
        let (x, _) = entry.as_ref().expect("a verified entry parsed");
        let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
        println!("public signals (outputs, then public inputs): {}", public.join(", "));
    }
    Ok(())
}

/// One bad entry of a report, named for the user.
struct Named {
    entry: String,
    kind: &'static str,
    reason: String,
}

/// Prints the report (lines, or JSON) and fails if anything is bad.
fn finish<E: Pairing>(key: &Key<E>, json: bool, total: usize, bad: Vec<Named>, extra: serde_json::Value) -> anyhow::Result<()> {
    let verified = total - bad.len();
    if json {
        let report = serde_json::json!({
            "vk_digest": key.pvk.key_digest().to_string(),
            "vk_pinned": key.pinned,
            "vk_path": key.path.display().to_string(),
            "total": total,
            "verified": verified,
            "bad": bad.iter().map(|b| serde_json::json!({ "entry": b.entry, "kind": b.kind, "reason": b.reason })).collect::<Vec<_>>(),
            "details": extra,
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
        eprintln!("{}", key.describe());
    } else {
        println!("{}", key.describe());
        for b in &bad {
            println!("bad: {}: {}", b.entry, b.reason);
        }
        println!("{verified} verified, {} bad", bad.len());
    }
    if !bad.is_empty() {
        bail!("{} of {total} bad", bad.len());
    }
    Ok(())
}

fn named(entry: String, reason: &BadReason) -> Named {
    Named { entry, kind: reason.kind(), reason: reason.to_string() }
}

fn batch_verify<E: Pairing>(keys: &Path, pin: Pin, json: bool, dirs: &[PathBuf]) -> anyhow::Result<()> {
    let key = Key::<E>::load(keys.join("vk.bin"), &pin)?;
    let entries: Vec<Entry<E>> = dirs.iter().map(|d| read_entry::<E>(d)).collect();
    let (report, t): (Report, _) = timed(|| pari::batch::verify_entries(&key.pvk, &entries, &mut ChaCha20Rng::from_entropy()));
    eprintln!("checked {} proof(s) in {}", entries.len(), secs(t));
    let bad = report.bad.iter().map(|b| named(dirs[b.index].display().to_string(), &b.reason)).collect();
    finish(&key, json, report.total, bad, serde_json::Value::Null)
}

/// The index `k` of a `<prefix>k<suffix>` file name, written canonically (`bundle-0.bin`, not
/// `bundle-00.bin`); `None` for another name.
fn indexed(name: &str, prefix: &str, suffix: &str) -> Option<u64> {
    let k = name.strip_prefix(prefix)?.strip_suffix(suffix)?;
    let canonical = !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) && (k == "0" || !k.starts_with('0'));
    canonical.then(|| k.parse().ok()).flatten()
}

/// The statements `public-<k>.json` publishes for bundle `k`: `[{"witness": n, "public": [v, …]}, …]`
/// (the platform's format), each value a canonical decimal field element.
fn read_published<F: ark_ff::PrimeField>(path: &Path) -> Result<Vec<(u64, Vec<F>)>, String> {
    #[derive(serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Published {
        witness: u64,
        public: Vec<String>,
    }
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read: {e}"))?;
    let entries: Vec<Published> = serde_json::from_slice(&bytes).map_err(|e| format!("not the platform's format: {e}"))?;
    entries
        .into_iter()
        .enumerate()
        .map(|(i, e)| {
            let x = e
                .public
                .iter()
                .enumerate()
                .map(|(j, v)| canonical_field::<F>(v).map_err(|m| format!("entry {i} (witness {}), public value {j}: {m}", e.witness)))
                .collect::<Result<Vec<F>, String>>()?;
            Ok((e.witness, x))
        })
        .collect()
}

/// How many bundles the directory must hold, and who says so.
enum Expected {
    /// `--bundles N`.
    Pinned(u64),
    /// The indices `manifest.json` lists (the server's word).
    Manifest(std::collections::BTreeSet<u64>),
    /// Neither: `0..=` the largest index found.
    Found,
}

fn verify_bundles<E: Pairing>(dir: &Path, pin: Pin, bundles: Option<u64>, json: bool, public: bool) -> anyhow::Result<()> {
    use std::collections::{BTreeMap, BTreeSet};
    let key = Key::<E>::load(dir.join("vk.bin"), &pin)?;
    let mut bad = Vec::new();
    // What the directory holds: bundle-<k>.bin and public-<k>.json by index; other names that
    // look like either are named as bad.
    let (mut found, mut published) = (BTreeMap::<u64, PathBuf>::new(), BTreeMap::<u64, PathBuf>::new());
    let mut listing: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("{}: cannot list", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    listing.sort();
    for path in listing {
        let Some(name) = path.file_name().and_then(|n| n.to_str()).map(str::to_string) else { continue };
        if let Some(k) = indexed(&name, "bundle-", ".bin") {
            found.insert(k, path);
        } else if let Some(k) = indexed(&name, "public-", ".json") {
            published.insert(k, path);
        } else if (name.starts_with("bundle-") && name.ends_with(".bin")) || (name.starts_with("public-") && name.ends_with(".json")) {
            bad.push(Named { entry: path.display().to_string(), kind: "unexpected-file", reason: "not a bundle-<k>.bin or public-<k>.json name (k decimal, no leading zero)".into() });
        }
    }
    anyhow::ensure!(!found.is_empty() || bundles.is_some(), "{}: no bundle-*.bin files", dir.display());
    let manifest = dir.join(platform::manifest::MANIFEST);
    let expected = match bundles {
        Some(n) => Expected::Pinned(n),
        None if manifest.exists() => {
            let m = std::fs::read(&manifest).map_err(|e| e.to_string()).and_then(|b| platform::manifest::Manifest::from_bytes(&b));
            match m {
                Ok(m) => Expected::Manifest(m.files.iter().filter_map(|n| indexed(n, "bundle-", ".bin")).collect()),
                Err(reason) => {
                    bad.push(Named { entry: manifest.display().to_string(), kind: "unusable-manifest", reason });
                    Expected::Found
                }
            }
        }
        None => Expected::Found,
    };
    let wanted: BTreeSet<u64> = match &expected {
        Expected::Pinned(n) => (0..*n).collect(),
        Expected::Manifest(set) => set.clone(),
        Expected::Found => (0..=found.keys().chain(published.keys()).copied().max().unwrap_or(0)).collect(),
    };
    // Statements are published for every bundle or none (a built-in family's job, a `prover
    // bundle` directory): one public-<k>.json present means each bundle needs its own.
    let statements = !published.is_empty();
    let bundle_path = |k: u64| dir.join(format!("bundle-{k}.bin"));
    let public_path = |k: u64| dir.join(format!("public-{k}.json"));
    for &k in wanted.iter().filter(|k| !found.contains_key(*k)) {
        let why = match &expected {
            Expected::Pinned(n) => format!("missing: --bundles {n} expects bundles 0 to {}", n - 1),
            Expected::Manifest(_) => "missing: manifest.json lists it".to_string(),
            Expected::Found if published.contains_key(&k) => format!("missing: public-{k}.json publishes its statements"),
            Expected::Found => "missing: the bundles found are numbered past it".to_string(),
        };
        bad.push(Named { entry: bundle_path(k).display().to_string(), kind: "missing-bundle", reason: why });
    }
    for (_, path) in found.iter().filter(|(k, _)| !wanted.contains(*k)) {
        let why = match &expected {
            Expected::Pinned(n) => format!("extra: --bundles {n} expects bundles 0 to {}", n.saturating_sub(1)),
            _ => "extra: manifest.json does not list it".to_string(),
        };
        bad.push(Named { entry: path.display().to_string(), kind: "extra-bundle", reason: why });
    }
    for (_, path) in published.iter().filter(|(k, _)| !wanted.contains(*k) && !found.contains_key(*k)) {
        bad.push(Named { entry: path.display().to_string(), kind: "extra-statements", reason: "statements of a bundle that is not expected".into() });
    }

    let mut rng = ChaCha20Rng::from_entropy();
    let (mut verified, mut per_bundle, start) = (0usize, Vec::new(), std::time::Instant::now());
    // The witness number of the next bundle's first entry, while every earlier bundle's size is known.
    let mut next_witness = Some(0u64);
    let indices: BTreeSet<u64> = wanted.iter().chain(found.keys()).copied().collect();
    for k in indices {
        let Some(path) = found.get(&k) else {
            // A missing bundle (named above): its published entries still take witness numbers.
            next_witness = next_witness.zip(read_published::<E::ScalarField>(&public_path(k)).ok()).map(|(w, s)| w + s.len() as u64);
            continue;
        };
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        // The published statements of this bundle, when statements are published.
        let stated = if statements {
            match read_published::<E::ScalarField>(&public_path(k)) {
                Ok(s) => Some(s),
                Err(reason) => {
                    let reason = if public_path(k).exists() { reason } else { "missing: the other bundles' statements are published".to_string() };
                    bad.push(Named { entry: public_path(k).display().to_string(), kind: "bad-statements", reason });
                    None
                }
            }
        } else {
            None
        };
        // A bundle whose own structure is damaged (or made for another key) counts as one bad
        // entry; otherwise each of its entries is checked and named.
        let report = std::fs::read(path).map_err(|e| format!("cannot read: {e}")).and_then(|bytes| {
            let r = pari::bundle::Bundle::<E>::verify_bytes_report(&bytes, &key.pvk, &mut rng).map_err(|e| e.to_string())?;
            let (_, entries) = pari::bundle::Bundle::<E>::parse_entries(&bytes).map_err(|e| e.to_string())?;
            Ok((r, entries))
        });
        match report {
            Ok((r, entries)) => {
                let proof_bad: BTreeSet<usize> = r.bad.iter().map(|b| b.index).collect();
                bad.extend(r.bad.iter().map(|b| named(format!("{}#{}", path.display(), b.index), &b.reason)));
                let mut statement_bad = 0;
                if let Some(stated) = &stated {
                    if stated.len() != entries.len() {
                        bad.push(Named {
                            entry: public_path(k).display().to_string(),
                            kind: "statement-mismatch",
                            reason: format!("{} entries, {name} holds {}", stated.len(), entries.len()),
                        });
                    }
                    for (i, (entry, (witness, x))) in entries.iter().zip(stated).enumerate() {
                        let Ok((proved, _)) = entry else { continue };
                        let mut why = Vec::new();
                        if proved != x {
                            let proved: Vec<String> = proved.iter().map(|v| v.to_string()).collect();
                            let x: Vec<String> = x.iter().map(|v| v.to_string()).collect();
                            why.push(format!("publishes [{}], {name}#{i} proves [{}]", x.join(", "), proved.join(", ")));
                        }
                        if let Some(w) = next_witness.map(|w| w + i as u64).filter(|w| w != witness) {
                            why.push(format!("names witness {witness}, entry {i} of {name} is witness {w}"));
                        }
                        if !why.is_empty() && !proof_bad.contains(&i) {
                            statement_bad += 1;
                            bad.push(Named {
                                entry: format!("{}#{i}", public_path(k).display()),
                                kind: "statement-mismatch",
                                reason: why.join("; "),
                            });
                        }
                    }
                }
                // Public inputs only of a bundle whose every entry verified.
                if public && r.bad.is_empty() {
                    for (i, entry) in entries.iter().enumerate() {
                        if let Ok((x, _)) = entry {
                            let x: Vec<String> = x.iter().map(|v| v.to_string()).collect();
                            if json {
                                eprintln!("{name}#{i}: {}", x.join(", "));
                            } else {
                                println!("{name}#{i}: {}", x.join(", "));
                            }
                        }
                    }
                }
                verified += r.verified() - statement_bad;
                next_witness = next_witness.map(|w| w + entries.len() as u64);
                per_bundle.push(serde_json::json!({ "bundle": path.display().to_string(), "entries": r.total, "bad": r.bad.len() }));
            }
            Err(reason) => {
                next_witness = stated.as_ref().and_then(|s| next_witness.map(|w| w + s.len() as u64));
                per_bundle.push(serde_json::json!({ "bundle": path.display().to_string(), "error": reason }));
                bad.push(Named { entry: path.display().to_string(), kind: "unusable-bundle", reason });
            }
        }
    }
    eprintln!("checked {} bundle(s) in {}", found.len(), secs(start.elapsed()));
    let count = match &expected {
        Expected::Pinned(n) => format!("bundles: {n} expected (--bundles), {} found", found.len()),
        Expected::Manifest(set) => format!(
            "bundles: {} expected as manifest.json lists them (the server's word: pass --bundles N to pin the count), {} found",
            set.len(),
            found.len()
        ),
        Expected::Found => format!(
            "bundles: {} found, numbered 0 to {}; the count is NOT PINNED (a last bundle removed with its statements goes unnoticed): \
             pass --bundles N, the number of bundles your job made",
            found.len(),
            wanted.len() - 1
        ),
    };
    if json {
        eprintln!("{count}");
    } else {
        println!("{count}");
    }
    let details = serde_json::json!({
        "bundles": per_bundle,
        "bundles_expected": wanted.len(),
        "bundles_pinned": matches!(expected, Expected::Pinned(_)),
        "statements_checked": statements,
    });
    finish(&key, json, verified + bad.len(), bad, details)
}

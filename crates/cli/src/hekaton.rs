//! `prover hekaton setup | prove | verify`: Hekaton proofs of partitioned circuits on this
//! machine (the distributed steps run in one process).
//!
//! Trust: whoever runs the setup knows the trapdoor and can prove anything under its keys, so
//! the verifier must hold the verifying key independently of the prover.
//!
//! * `setup … --out KEYS` writes `KEYS/pk.bin`, `KEYS/vk.bin`, the aggregation keys
//!   `KEYS/agg-pk.bin` and `KEYS/agg-vk.bin` (over an SRS sized to `k`) and `KEYS/circuit.json`,
//!   and prints both verifying keys' digests, which the setup party publishes.
//! * `prove … --keys KEYS --out DIR` proves with those keys (refusing keys made for another
//!   circuit) and writes `circuit.json`, `vk.bin` (a copy, for convenience), `proof.bin` (the
//!   subcircuit commitments and Mirage proofs, the Merkle root and leaf-0 path) and
//!   `public.json` (public inputs, decimal). With `--aggregate`, `proof.bin` is the aggregated
//!   proof the platform publishes ([`hekaton::aggregated::prove`]: `O(log k)` group elements)
//!   and `agg-vk.bin` is beside it. Without `--keys` it runs a one-shot setup itself (a demo:
//!   such a proof convinces only someone who trusts this prover). The circuit flags name a
//!   [`CircuitSpec`], the platform's description of the same circuits.
//! * `verify DIR --vk FILE` or `--vk-digest HEX` checks the proof against that key; without
//!   one it refuses, unless `--trust-proof-dir` is given, and then says what it trusted. A
//!   directory the platform published holds an aggregated proof ([`hekaton::aggregated`]:
//!   `O(log k)` group elements in place of the `k` proofs) and the aggregate verifying key
//!   `agg-vk.bin`; it is checked against a second pinned key, `--agg-vk FILE` or
//!   `--agg-vk-digest HEX` (the aggregate key names the Hekaton key by digest, so it cannot be
//!   another circuit's, but it carries its own SRS, whose secrets are part of the trusted setup:
//!   it is pinned, not derived from the Hekaton key's digest).
//! * `wrap DIR --vk-digest HEX --wrap-keys WDIR` verifies the proof directory against the
//!   pinned key, then proves the depth-1 wrap ([`hekaton::wrap`]: one Pari proof on BW6-767
//!   of the whole Hekaton proof) and writes `DIR/final.bin` and `DIR/final-key.bin`. The wrap
//!   keys are made once per Hekaton key into `WDIR` (`wrap-pk.bin`, `final-key.bin`,
//!   `wrap.json` with their digests) and reused; the final key's digest is printed (verifiers
//!   pin it).
//! * `verify-final DIR… --key-digest HEX` checks final proofs against the pinned final key
//!   (the leaf-0 path of `x` natively, then the Pari proof); several directories are checked
//!   with one Pari batch check and every bad one is named.

use std::path::{Path, PathBuf};
use std::str::FromStr;

use anyhow::{bail, ensure, Context};
use ark_bls12_381::{Bls12_381, Fr};
use ark_serialize::CanonicalDeserialize;
use clap::{Args, Subcommand, ValueEnum};
use hekaton::aggregate::srs::Srs;
use hekaton::aggregate::{AggProvingKey, AggVerifyingKey};
use hekaton::aggregated::AggregatedProof;
use hekaton::partition::{Partitioned, Subcircuit};
use hekaton::spec::{AnySubcircuit, CircuitSpec};
use hekaton::workflow::{self, HekatonProof, ProvingKey, VerifyingKey, VkDigest};
use hekaton::Check;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

use crate::util::{secs, timed, write_dir_atomically};

#[derive(Subcommand)]
pub enum HekatonCommand {
    /// Run the trusted setup for a circuit: write pk.bin, vk.bin and circuit.json to --out and
    /// print the verifying key's digest (publish it: verifiers pin it).
    Setup(SetupArgs),
    /// Split a circuit into subcircuits, prove each with Mirage, and write a proof directory.
    Prove(ProveArgs),
    /// Verify a proof directory against a pinned key: prints `verified`, or fails with the reason.
    Verify(VerifyArgs),
    /// Wrap a verified proof directory into one final Pari proof on BW6-767 (final.bin).
    Wrap(WrapArgs),
    /// Verify final proofs (final.bin) of one or more proof directories against a pinned final key.
    VerifyFinal(VerifyFinalArgs),
}

#[derive(Args, Clone, Debug)]
pub struct WrapArgs {
    #[command(flatten)]
    pub verify: VerifyArgs,
    /// Where the wrap keys of this Hekaton key live (made there on first use, reused after).
    #[arg(long)]
    pub wrap_keys: PathBuf,
}

#[derive(Args, Clone, Debug)]
pub struct VerifyFinalArgs {
    /// Proof directories holding final.bin and public.json.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The expected digest of the final key (printed by `prover hekaton wrap` and by the
    /// platform's fetch). The key is read from --key, or from each directory's final-key.bin.
    #[arg(long)]
    pub key_digest: String,
    /// The final key file (final-key.bin); by default each directory's own, if it has the digest.
    #[arg(long)]
    pub key: Option<PathBuf>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Circuit {
    /// The paper's §8.1 benchmark circuit: five subcircuit shapes chained through shared wires.
    Synthetic,
    /// A batch of Poseidon Merkle-path updates, each path split across subcircuits.
    MerkleUpdate,
}

/// The circuit's structure (what a key is made for).
#[derive(Args, Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CircuitArgs {
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
}

#[derive(Args, Clone, Debug)]
pub struct SetupArgs {
    #[command(flatten)]
    pub circuit: CircuitArgs,
    /// Directory to write the keys to (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ProveArgs {
    #[command(flatten)]
    #[serde(flatten)]
    pub circuit: CircuitArgs,
    /// Seed of the circuit's inputs (the setup and proofs use OS randomness).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Keys from `prover hekaton setup`. Without it, a one-shot setup runs in this process.
    #[arg(long)]
    #[serde(skip)]
    pub keys: Option<PathBuf>,
    /// Aggregate the k subcircuit proofs into one proof of O(log k) group elements (TIPP/MIPP,
    /// what the platform's `hekaton.prove` jobs publish; verify with --agg-vk-digest). Without
    /// it the directory holds the k proofs, the form `prover hekaton wrap` takes.
    #[arg(long)]
    #[serde(default)]
    pub aggregate: bool,
    #[arg(long)]
    #[serde(skip)]
    pub out: PathBuf,
}

#[derive(Args, Clone, Debug)]
pub struct VerifyArgs {
    /// The proof directory.
    pub dir: PathBuf,
    /// The verifying key to check against (vk.bin from `prover hekaton setup`).
    #[arg(long, conflicts_with = "trust_proof_dir")]
    pub vk: Option<PathBuf>,
    /// The expected digest of the verifying key (64 hex digits, printed by the setup). Without
    /// --vk, the proof directory's vk.bin is used if it has this digest.
    #[arg(long, conflicts_with = "trust_proof_dir")]
    pub vk_digest: Option<String>,
    /// An aggregated proof (what the platform publishes): the aggregate verifying key to check
    /// it against (agg-vk.bin of the platform's key store).
    #[arg(long, conflicts_with = "trust_proof_dir")]
    pub agg_vk: Option<PathBuf>,
    /// An aggregated proof: the expected digest of the aggregate verifying key (64 hex digits;
    /// `prover fetch` prints it, manifest.json pins it as agg_vk_digest). Without --agg-vk, the
    /// proof directory's agg-vk.bin is used if it has this digest.
    #[arg(long, conflicts_with = "trust_proof_dir")]
    pub agg_vk_digest: Option<String>,
    /// Check against the proof directory's own vk.bin (and agg-vk.bin). This only shows that
    /// the proof matches keys that came with it: whoever made those keys can prove anything
    /// under them.
    #[arg(long)]
    pub trust_proof_dir: bool,
}

pub fn run(cmd: HekatonCommand) -> anyhow::Result<()> {
    match cmd {
        HekatonCommand::Setup(a) => setup(a),
        HekatonCommand::Prove(a) => prove(a),
        HekatonCommand::Verify(a) => {
            println!("{}", verify(&a)?);
            println!("verified");
            Ok(())
        }
        HekatonCommand::Wrap(a) => wrap_dir(&a),
        HekatonCommand::VerifyFinal(a) => verify_final(&a),
    }
}

type Outer = ark_bw6_767::BW6_767;
type Inner = ark_bls12_381::Config;

fn write_beside(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(name)).with_context(|| format!("writing {}", dir.join(name).display()))
}

/// The wrap keys of `vk` in `wdir`: loaded (the proving key by the digest recorded when it was
/// made, the final key checked against this Hekaton key), or made and written there.
fn wrap_keys(
    wdir: &Path,
    vk: &VerifyingKey<Bls12_381>,
) -> anyhow::Result<(pari::ProvingKey<Outer>, hekaton::wrap::FinalKey<Outer>)> {
    let digest = vk.digest()?;
    let meta = wdir.join("wrap.json");
    if meta.exists() {
        let m: serde_json::Value = serde_json::from_slice(&std::fs::read(&meta)?).context("wrap.json")?;
        let pk_digest: pari::KeyDigest = m["pk_digest"].as_str().context("wrap.json: pk_digest")?.parse()?;
        let key = hekaton::wrap::FinalKey::<Outer>::from_bytes(&std::fs::read(wdir.join("final-key.bin"))?)
            .context("final-key.bin")?;
        ensure!(
            key.hekaton_vk_digest == digest,
            "{}: wrap keys for Hekaton key {}, not {digest}",
            wdir.display(),
            key.hekaton_vk_digest
        );
        let pk = pari::ProvingKey::<Outer>::from_bytes_with_digest(&std::fs::read(wdir.join("wrap-pk.bin"))?, &pk_digest)
            .context("wrap-pk.bin")?;
        return Ok((pk, key));
    }
    let (res, t) = timed(|| hekaton::wrap::setup::<Inner, Outer, _>(vk, &mut ChaCha20Rng::from_entropy()));
    let (pk, key) = res.context("wrap setup")?;
    eprintln!("made the wrap keys in {} (domain {})", secs(t), key.wrap_vk.domain_size);
    // Uncompressed: loading skips a square root per point (hundreds of thousands of them).
    let pk_bytes = pk.to_bytes_uncompressed();
    let meta = serde_json::json!({
        "hekaton_vk_digest": digest.to_string(),
        "final_key_digest": key.digest().to_string(),
        "pk_digest": pari::KeyDigest::of_bytes(&pk_bytes).to_string(),
    });
    write_dir_atomically(wdir, |d| {
        std::fs::write(d.join("wrap-pk.bin"), &pk_bytes)?;
        std::fs::write(d.join("final-key.bin"), key.to_bytes())?;
        std::fs::write(d.join("wrap.json"), serde_json::to_vec_pretty(&meta)?)?;
        Ok(())
    })?;
    Ok((pk, key))
}

fn wrap_dir(a: &WrapArgs) -> anyhow::Result<()> {
    ensure!(
        a.verify.agg_vk.is_none() && a.verify.agg_vk_digest.is_none(),
        "--agg-vk/--agg-vk-digest: the wrap takes the k subcircuit proofs (`prover hekaton prove`), not an aggregated proof"
    );
    ensure!(
        !a.verify.dir.join("agg-vk.bin").exists(),
        "{} holds an aggregated proof: the wrap takes the k subcircuit proofs (`prover hekaton prove` without --aggregate)",
        a.verify.dir.display()
    );
    let (vk, _) = pinned_key(&a.verify)?;
    let (proof, x) = read_proof(&a.verify.dir)?;
    let (pk, key) = wrap_keys(&a.wrap_keys, &vk)?;
    let (res, t) = timed(|| hekaton::wrap::prove::<Inner, Outer, _>(&pk, &vk, &x, &proof, &mut ChaCha20Rng::from_entropy()));
    let fin = res.context("wrap")?;
    eprintln!("wrapped in {}", secs(t));
    let bytes = fin.to_bytes()?;
    write_beside(&a.verify.dir, "final-key.bin", &key.to_bytes())?;
    write_beside(&a.verify.dir, "final.bin", &bytes)?;
    println!("wrote {} ({} bytes)", a.verify.dir.join("final.bin").display(), bytes.len());
    println!("final key digest: {}", key.digest());
    Ok(())
}

fn verify_final(a: &VerifyFinalArgs) -> anyhow::Result<()> {
    use hekaton::wrap::{FinalKey, FinalProof};
    let expected = VkDigest::from_str(&a.key_digest).context("--key-digest")?;
    let key_at = |dir: &Path| a.key.clone().unwrap_or_else(|| dir.join("final-key.bin"));
    let load = |path: &Path| -> anyhow::Result<FinalKey<Outer>> {
        let key = FinalKey::<Outer>::from_bytes(&std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?)
            .with_context(|| path.display().to_string())?;
        key.check_digest(&expected).with_context(|| format!("{}: not the pinned final key", path.display()))?;
        Ok(key)
    };
    let key = load(&key_at(&a.dirs[0]))?;
    let pvk = key.wrap_vk.prepare()?;
    let mut items = Vec::with_capacity(a.dirs.len());
    for dir in &a.dirs {
        if a.key.is_none() && dir != &a.dirs[0] {
            load(&key_at(dir))?;
        }
        let fin = FinalProof::<Fr, Outer>::from_bytes(
            &std::fs::read(dir.join("final.bin")).with_context(|| format!("{}: cannot read final.bin", dir.display()))?,
        )
        .with_context(|| format!("{}: final.bin", dir.display()))?;
        items.push((read_public(dir)?, fin));
    }
    let t = std::time::Instant::now();
    if items.len() == 1 {
        hekaton::wrap::verify_final::<Inner, Outer>(&key, &pvk, &items[0].0, &items[0].1)
            .with_context(|| format!("{}: the final proof does not verify", a.dirs[0].display()))?;
    } else {
        let bad = hekaton::wrap::batch_verify_final::<Inner, Outer, _>(&key, &pvk, &items, &mut ChaCha20Rng::from_entropy())?;
        if !bad.is_empty() {
            let names: Vec<String> = bad.iter().map(|&i| a.dirs[i].display().to_string()).collect();
            bail!("{} of {} final proofs do not verify: {}", bad.len(), items.len(), names.join(", "));
        }
    }
    eprintln!("checked in {}", secs(t.elapsed()));
    println!("{} final proofs checked against final key {expected} (Hekaton key {})", items.len(), key.hekaton_vk_digest);
    println!("verified");
    Ok(())
}

impl CircuitArgs {
    /// The platform's name for this circuit ([`CircuitSpec`]): the same spec and seed build the
    /// same circuit here and on the platform's workers.
    pub fn spec(&self) -> CircuitSpec {
        match self.circuit {
            Circuit::Synthetic => CircuitSpec::Synthetic { subcircuits: self.subcircuits, steps: self.steps, wires: self.wires },
            Circuit::MerkleUpdate => CircuitSpec::MerkleUpdate { depth: self.depth, updates: self.updates, parts: self.parts },
        }
    }

    /// The circuit with inputs from `seed`; a bad parameter is an error naming its flag.
    fn build(&self, seed: u64) -> anyhow::Result<Partitioned<Fr, AnySubcircuit<Fr>>> {
        self.spec().build::<Fr>(seed).map_err(|e| match e {
            hekaton::Error::Malformed { what, reason } => anyhow::anyhow!("--{what} {reason}"),
            e => anyhow::Error::new(e),
        })
    }
}

/// The aggregation keys of `vk` over a fresh SRS sized to its `k` (Agg.G, as the platform's
/// first job of a key makes them): whoever knows the SRS's secrets can break the commitments'
/// binding, so they are part of this trusted setup.
fn agg_setup(vk: &VerifyingKey<Bls12_381>, rng: &mut ChaCha20Rng) -> anyhow::Result<(AggProvingKey<Bls12_381>, AggVerifyingKey<Bls12_381>)> {
    let srs = Srs::<Bls12_381>::setup(vk.num_subcircuits(), rng);
    hekaton::aggregated::setup(vk, &srs).context("aggregate setup")
}

fn setup(a: SetupArgs) -> anyhow::Result<()> {
    let c = a.circuit.build(1)?;
    let mut rng = ChaCha20Rng::from_entropy();
    // The setup depends on the circuit's structure only; any inputs do.
    let (keys, t) = timed(|| workflow::setup::<Bls12_381, _, _>(&c, &mut rng));
    let (pk, vk) = keys.context("setup")?;
    let (apk, avk) = agg_setup(&vk, &mut rng)?;
    let digest = vk.digest()?;
    let pk_bytes = hekaton::mirage::to_bytes(&pk)?;
    let vk_bytes = hekaton::mirage::to_bytes(&vk)?;
    let apk_bytes = hekaton::mirage::to_bytes(&apk)?;
    let avk_bytes = hekaton::mirage::to_bytes(&avk)?;
    write_dir_atomically(&a.out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&a.circuit)?)?;
        std::fs::write(dir.join("pk.bin"), &pk_bytes)?;
        std::fs::write(dir.join("vk.bin"), &vk_bytes)?;
        std::fs::write(dir.join("agg-pk.bin"), &apk_bytes)?;
        std::fs::write(dir.join("agg-vk.bin"), &avk_bytes)?;
        Ok(())
    })?;
    eprintln!(
        "set up {} subcircuits ({} keys) in {}: wrote {} (proving key {} bytes, verifying key {} bytes)",
        vk.num_subcircuits(),
        vk.vks.len(),
        secs(t),
        a.out.display(),
        pk_bytes.len(),
        vk_bytes.len()
    );
    println!("verifying key digest: {digest}");
    println!("aggregate verifying key digest: {}", VkDigest(avk.digest()?));
    Ok(())
}

/// Proves `c` with `pk`, checks the proof, and returns it with the public input.
fn prove_circuit<S: Subcircuit<Fr>>(
    pk: &ProvingKey<Bls12_381>,
    c: &Partitioned<Fr, S>,
    rng: &mut ChaCha20Rng,
) -> anyhow::Result<(HekatonProof<Bls12_381>, Vec<Fr>, std::time::Duration)> {
    let (p, t) = timed(|| workflow::prove(pk, c, rng));
    let p = p.context("prove")?;
    workflow::verify(&pk.vk, &c.public_inputs, &p, rng).context("the proof just made does not verify")?;
    Ok((p, c.public_inputs.clone(), t))
}

fn prove(a: ProveArgs) -> anyhow::Result<()> {
    let c = a.circuit.build(a.seed)?;
    let mut rng = ChaCha20Rng::from_entropy();
    let (pk, apk) = match &a.keys {
        Some(keys) => {
            let pk: ProvingKey<Bls12_381> = read(keys, "pk.bin")?;
            if let Err(e) = workflow::check_circuit(&pk.vk, &c) {
                let made_for = std::fs::read_to_string(keys.join("circuit.json")).unwrap_or_default();
                bail!(
                    "{}: these keys were made for another circuit ({e}); circuit.json there says {}",
                    keys.display(),
                    made_for.split_whitespace().collect::<Vec<_>>().join(" ")
                );
            }
            let apk = if a.aggregate {
                ensure!(
                    keys.join("agg-pk.bin").exists(),
                    "{}: no agg-pk.bin (keys made before `prover hekaton setup` made aggregation keys): run the setup again, or prove without --aggregate",
                    keys.display()
                );
                let apk: AggProvingKey<Bls12_381> = read(keys, "agg-pk.bin")?;
                hekaton::aggregated::check_proving_key(&pk.vk, &apk)
                    .with_context(|| format!("{}: agg-pk.bin is not an aggregation key of pk.bin", keys.display()))?;
                Some(apk)
            } else {
                None
            };
            (pk, apk)
        }
        None => {
            eprintln!(
                "no --keys: running a one-shot setup in this process. Its trapdoor was this process's, so \
                 the proof convinces only someone who trusts this prover; use `prover hekaton setup` for keys \
                 a verifier can pin"
            );
            let pk = workflow::setup::<Bls12_381, _, _>(&c, &mut rng).context("setup")?.0;
            let apk = if a.aggregate { Some(agg_setup(&pk.vk, &mut rng)?.0) } else { None };
            (pk, apk)
        }
    };
    let vk = &pk.vk;
    let x = c.public_inputs.clone();
    let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
    let vk_bytes = hekaton::mirage::to_bytes(vk)?;
    // The aggregate (what the platform publishes: O(log k) group elements), or the k proofs.
    let (proof_bytes, agg_vk) = match &apk {
        Some(apk) => {
            let (p, t) = timed(|| hekaton::aggregated::prove(&pk, apk, &c, &mut rng));
            let p = p.context("prove")?;
            hekaton::aggregated::verify(vk, &apk.vk, &x, &p).context("the aggregated proof just made does not verify")?;
            eprintln!("proved and aggregated {} subcircuits in {}", vk.num_subcircuits(), secs(t));
            (hekaton::mirage::to_bytes(&p)?, Some(&apk.vk))
        }
        None => {
            let (p, _, t) = prove_circuit(&pk, &c, &mut rng)?;
            eprintln!("proved {} subcircuits in {}", vk.num_subcircuits(), secs(t));
            (hekaton::mirage::to_bytes(&p)?, None)
        }
    };
    let agg_vk_bytes = agg_vk.map(hekaton::mirage::to_bytes).transpose()?;
    write_dir_atomically(&a.out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&a)?)?;
        std::fs::write(dir.join("vk.bin"), &vk_bytes)?;
        if let Some(b) = &agg_vk_bytes {
            std::fs::write(dir.join("agg-vk.bin"), b)?;
        }
        std::fs::write(dir.join("proof.bin"), &proof_bytes)?;
        std::fs::write(dir.join("public.json"), serde_json::to_vec_pretty(&public)?)?;
        Ok(())
    })?;
    let form = if agg_vk.is_some() { "aggregated proof" } else { "proof" };
    println!("wrote {} ({form} {} bytes)", a.out.display(), proof_bytes.len());
    println!("verifying key digest: {}", vk.digest()?);
    if let Some(avk) = agg_vk {
        println!("aggregate verifying key digest: {}", VkDigest(avk.digest()?));
    }
    Ok(())
}

/// Reads and decodes `dir/name` with the crate's checked decoder.
fn read<T: CanonicalDeserialize + Check>(dir: &Path, name: &str) -> anyhow::Result<T> {
    read_file(&dir.join(name))
}

fn read_file<T: CanonicalDeserialize + Check>(path: &Path) -> anyhow::Result<T> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
    hekaton::mirage::from_bytes(&bytes).with_context(|| path.display().to_string())
}

/// The key to verify against, and its digest: from --vk, from the proof directory if it has the
/// --vk-digest, or (with --trust-proof-dir) from the proof directory, said plainly.
fn pinned_key(a: &VerifyArgs) -> anyhow::Result<(VerifyingKey<Bls12_381>, VkDigest)> {
    let expected = a
        .vk_digest
        .as_deref()
        .map(VkDigest::from_str)
        .transpose()
        .context("--vk-digest")?;
    let (vk, source): (VerifyingKey<Bls12_381>, PathBuf) = match (&a.vk, &expected, a.trust_proof_dir) {
        (Some(file), _, _) => (read_file(file)?, file.clone()),
        (None, Some(_), _) => (read(&a.dir, "vk.bin")?, a.dir.join("vk.bin")),
        (None, None, true) => {
            let vk: VerifyingKey<Bls12_381> = read(&a.dir, "vk.bin")?;
            let digest = vk.digest()?;
            eprintln!(
                "WARNING: no pinned key: checking against {} (digest {digest}), which came with the proof. This \
                 shows only that the proof matches that key; whoever made the key can prove anything under it.",
                a.dir.join("vk.bin").display()
            );
            return Ok((vk, digest));
        }
        (None, None, false) => bail!(
            "refusing to verify without a pinned verifying key: pass --vk FILE (vk.bin from `prover hekaton setup`) \
             or --vk-digest HEX (the digest the setup printed); --trust-proof-dir checks against the proof \
             directory's own vk.bin, which proves nothing about who made it"
        ),
    };
    let digest = vk.digest()?;
    if let Some(expected) = expected {
        vk.check_digest(&expected)
            .with_context(|| format!("{}: not the pinned verifying key", source.display()))?;
    }
    Ok((vk, digest))
}

/// `public.json`: the public inputs, decimal.
fn read_public(dir: &Path) -> anyhow::Result<Vec<Fr>> {
    let public: Vec<String> = serde_json::from_slice(
        &std::fs::read(dir.join("public.json")).with_context(|| format!("{}: cannot read public.json", dir.display()))?,
    )
    .with_context(|| format!("{}: public.json", dir.display()))?;
    public
        .iter()
        .enumerate()
        .map(|(i, s)| crate::util::canonical_field::<Fr>(s).map_err(|e| anyhow::anyhow!("{}: public.json entry {i} {s:?}: {e}", dir.display())))
        .collect()
}

fn read_proof(dir: &Path) -> anyhow::Result<(HekatonProof<Bls12_381>, Vec<Fr>)> {
    Ok((read(dir, "proof.bin")?, read_public(dir)?))
}

/// The aggregate verifying key to check an aggregated proof against, and its digest: from
/// --agg-vk, from the proof directory if it has the --agg-vk-digest, or (with
/// --trust-proof-dir) from the proof directory, said plainly. `None`: the directory holds the
/// `k` subcircuit proofs (it has no agg-vk.bin and none was pinned).
fn pinned_agg_key(a: &VerifyArgs) -> anyhow::Result<Option<(AggVerifyingKey<Bls12_381>, VkDigest)>> {
    let expected = a
        .agg_vk_digest
        .as_deref()
        .map(VkDigest::from_str)
        .transpose()
        .context("--agg-vk-digest")?;
    let in_dir = a.dir.join("agg-vk.bin");
    let (avk, source): (AggVerifyingKey<Bls12_381>, PathBuf) = match (&a.agg_vk, &expected) {
        (Some(file), _) => (read_file(file)?, file.clone()),
        (None, Some(_)) => (read_file(&in_dir)?, in_dir),
        (None, None) if !in_dir.exists() => return Ok(None),
        (None, None) if a.trust_proof_dir => {
            let avk: AggVerifyingKey<Bls12_381> = read_file(&in_dir)?;
            let digest = VkDigest(avk.digest()?);
            eprintln!(
                "WARNING: no pinned aggregate key: checking against {} (digest {digest}), which came with the proof. \
                 Whoever made its SRS can prove anything under it.",
                in_dir.display()
            );
            return Ok(Some((avk, digest)));
        }
        (None, None) => bail!(
            "{} holds an aggregated proof: pass --agg-vk-digest HEX (the aggregate verifying key's digest, \
             agg_vk_digest in the platform's manifest.json, printed by `prover fetch`) or --agg-vk FILE",
            a.dir.display()
        ),
    };
    let digest = VkDigest(avk.digest()?);
    if let Some(expected) = expected {
        avk.check_digest(&expected)
            .with_context(|| format!("{}: not the pinned aggregate verifying key", source.display()))?;
    }
    Ok(Some((avk, digest)))
}

/// Verifies the directory against the pinned keys; what was checked, in words.
fn verify(a: &VerifyArgs) -> anyhow::Result<String> {
    let (vk, digest) = pinned_key(a)?;
    if let Some((avk, agg_digest)) = pinned_agg_key(a)? {
        let proof: AggregatedProof<Bls12_381> = read(&a.dir, "proof.bin")
            .context("proof.bin is not an aggregated Hekaton proof (pin an aggregate key only for one)")?;
        let x = read_public(&a.dir)?;
        let (res, t) = timed(|| hekaton::aggregated::verify(&vk, &avk, &x, &proof));
        res.context("the aggregated proof does not verify")?;
        eprintln!("checked in {}", secs(t));
        return Ok(format!(
            "aggregated proof of {} subcircuits ({} bytes) checked against verifying key {digest} and aggregate verifying key {agg_digest}",
            vk.num_subcircuits(),
            proof.size()
        ));
    }
    let (proof, x) = read_proof(&a.dir)?;
    let (res, t) = timed(|| workflow::verify(&vk, &x, &proof, &mut ChaCha20Rng::from_entropy()));
    res.context("the proof does not verify")?;
    eprintln!("checked in {}", secs(t));
    Ok(format!("{} subcircuit proofs checked against verifying key {digest}", vk.num_subcircuits()))
}

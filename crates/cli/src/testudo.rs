//! `prover testudo setup | prove | verify`: Testudo proofs of circom circuits (BLS12-381) on
//! this machine: Spartan with Testudo-Comm ([`testudo`]), each proof optionally compressed
//! into one Pari proof on BW6-767 ([`testudo::compress`]).
//!
//! Trust: there are two trusted setups, and whoever runs one knows its trapdoor and can prove
//! anything under its key, so the verifier pins each key's digest, obtained independently of
//! the prover.
//!
//! * The **Testudo-Comm key** is universal: one setup (`--max-vars N`, `O(2^{N/2})` points)
//!   serves every circuit whose witness polynomial has at most `N` variables (at most `2^N`
//!   private wires, fewer than `2^N` public signals). `setup --out KEYS` writes
//!   `KEYS/tc-ck.bin`, `KEYS/tc-vk.bin` and `KEYS/keys.json` and prints the verifier key's
//!   digest ([`testudo::compress::tc_vk_digest`]), which the setup party publishes.
//! * The **compression key** (`setup --final-for FILE.r1cs`, into a new key directory or one
//!   that holds a Testudo-Comm key already) is made for one shape (`s_x`, `s_y`, `ℓ`: every
//!   circuit of that shape) under that Testudo-Comm key: `KEYS/final-pk.bin` (the Pari proving
//!   key) and `KEYS/final-key.bin`, whose digest is printed and pinned. The final key names
//!   the Testudo-Comm key by digest, so pinning it pins that key too.
//! * `prove --r1cs FILE --wtns FILE… --keys KEYS [--compress] --out DIR` proves each witness
//!   and writes the proof directory the platform publishes: `circuit.json`, `tc-vk.bin` (a
//!   copy, for convenience), `public.json`, `inner-<i>.bin`, and with `--compress`
//!   `final-key.bin` and `final-<i>.bin`.
//! * `verify DIR --r1cs FILE --tc-vk-digest HEX [--final-key-digest HEX]` checks every proof
//!   of the directory. The verifier reads the circuit itself (this Spartan is the variant
//!   whose verifier evaluates the matrices), so it brings its own `.r1cs`, refused unless it
//!   is the one the proofs name. Without a pinned key it refuses, unless `--trust-proof-dir`
//!   is given, and then says what it trusted.
//!
//! Privacy: the inner proofs are not zero knowledge (non-ZK Spartan; the crate's "not built
//! yet"), and a compressed directory still holds them: do not publish a directory whose
//! witnesses are secret.

use std::path::{Path, PathBuf};

use anyhow::{bail, ensure, Context};
use ark_bls12_381::{Bls12_381, Fr};
use clap::{Args, Subcommand};
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use serde::{Deserialize, Serialize};
use testudo::compress::{self, FinalKey, FinalProof, KeyDigest};
use testudo::files;
use testudo::spartan::constraints::SpartanShape;
use testudo::testudo_comm::{self, TcVerifierKey, TestudoComm};

use crate::util::{canonical_field, secs, shown, timed, write_dir_atomically};

type Outer = ark_bw6_767::BW6_767;
type Inner = ark_bls12_381::Config;
type Pcs = TestudoComm<Bls12_381>;

/// The largest `--max-vars`: a key for `2^24` private wires (some `2^13` points in each group).
const MAX_VARS: usize = 24;

#[derive(Subcommand)]
pub enum TestudoCommand {
    /// Run the universal Testudo-Comm setup (tc-ck.bin, tc-vk.bin, keys.json in --out) and print
    /// its verifier key's digest (publish it: verifiers pin it); with --final-for, also (or, in a
    /// directory holding a Testudo-Comm key, only) the compression key for that circuit's shape.
    Setup(SetupArgs),
    /// Prove circom witnesses of a BLS12-381 circuit with Spartan and Testudo-Comm (--compress:
    /// each proof also compressed into a Pari proof on BW6-767) and write a proof directory.
    Prove(ProveArgs),
    /// Verify a proof directory against pinned keys: prints `verified N proof(s)`, or fails
    /// naming every bad proof.
    Verify(VerifyArgs),
}

#[derive(Args, Clone, Debug)]
pub struct SetupArgs {
    /// The most variables of a witness polynomial the Testudo-Comm key serves (1..=24; default
    /// 24): circuits of up to 2^N private wires and fewer than 2^N public signals.
    #[arg(long)]
    pub max_vars: Option<usize>,
    /// A circom circuit (.r1cs, BLS12-381): also make the compression key for its shape (it
    /// serves every circuit of that shape). If --out holds a Testudo-Comm key already, only
    /// that key is made, under the key there.
    #[arg(long)]
    pub final_for: Option<PathBuf>,
    /// Directory to write the keys to (must not exist, or be empty, unless it holds a
    /// Testudo-Comm key and --final-for is given).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Clone, Debug)]
pub struct ProveArgs {
    /// The circom circuit (.r1cs, compiled with circom --prime bls12381).
    #[arg(long)]
    pub r1cs: PathBuf,
    /// A witness (.wtns, one value per wire); repeat for several, proved one after the other.
    #[arg(long, required = true)]
    pub wtns: Vec<PathBuf>,
    /// Keys from `prover testudo setup`.
    #[arg(long)]
    pub keys: PathBuf,
    /// Also compress each proof into a final Pari proof on BW6-767 (needs the compression key
    /// in --keys: `prover testudo setup --final-for`). Slow: minutes per proof.
    #[arg(long)]
    pub compress: bool,
    /// The proof directory to write (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args, Clone, Debug)]
pub struct VerifyArgs {
    /// The proof directory.
    pub dir: PathBuf,
    /// The circuit the proofs must be about: the verifier's own copy of the .r1cs (the
    /// verifier reads its matrices).
    #[arg(long)]
    pub r1cs: PathBuf,
    /// The expected digest of the Testudo-Comm verifier key (64 hex digits, printed by the
    /// setup): the proof directory's tc-vk.bin is used if it has this digest.
    #[arg(long, conflicts_with = "trust_proof_dir")]
    pub tc_vk_digest: Option<String>,
    /// The expected digest of the final key (64 hex digits, printed by `setup --final-for`):
    /// also check the final proofs (final-<i>.bin, in one batch) against the directory's
    /// final-key.bin if it has this digest. The final key names its Testudo-Comm key, so
    /// without --tc-vk-digest it pins that one too.
    #[arg(long, conflicts_with = "trust_proof_dir")]
    pub final_key_digest: Option<String>,
    /// Check against the proof directory's own tc-vk.bin (and final-key.bin). This only shows
    /// that the proofs match keys that came with them: whoever made those keys can prove
    /// anything under them.
    #[arg(long)]
    pub trust_proof_dir: bool,
    /// How many witnesses the job proved (printed by `prove`, or the job's request): pins the
    /// count. Without it the count is the directory's own circuit.json, and whoever serves the
    /// directory can drop a witness's proofs from it unnoticed (the command says so).
    #[arg(long)]
    pub witnesses: Option<usize>,
}

pub fn run(cmd: TestudoCommand) -> anyhow::Result<()> {
    match cmd {
        TestudoCommand::Setup(a) => setup(a),
        TestudoCommand::Prove(a) => prove(a),
        TestudoCommand::Verify(a) => {
            let (what, n) = verify(&a)?;
            println!("{what}");
            println!("verified {n} proof(s)");
            Ok(())
        }
    }
}

/// `KEYS/keys.json`.
#[derive(Serialize, Deserialize, Clone, Debug)]
struct KeysFile {
    tc_vk_digest: String,
    max_vars: usize,
    /// The compression key's [`FinalKey::digest`], when the directory holds one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_key_digest: Option<String>,
    /// `pari::KeyDigest::of_bytes` of `final-pk.bin` as written (uncompressed), so that loading
    /// it skips the point checks (a square root and a subgroup check per point).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_pk_digest: Option<String>,
}

/// `DIR/circuit.json` of a proof directory (the platform writes the same).
#[derive(Serialize, Deserialize, Clone, Debug)]
struct ProofFile {
    proof_system: String,
    curve: String,
    circuit_id: String,
    tc_vk_digest: String,
    witnesses: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    final_key_digest: Option<String>,
}

/// One entry of `DIR/public.json`: witness `i`'s public signals (`io`), decimal.
#[derive(Serialize, Deserialize, Clone, Debug)]
struct PublicEntry {
    witness: usize,
    public: Vec<String>,
}

const PROOF_SYSTEM: &str = "testudo";
const CURVE: &str = "bls12-381";

/// A circom circuit read from `flag`'s file, with its Testudo instance.
struct Circuit {
    path: PathBuf,
    flag: &'static str,
    /// `circom::digest` of the file: the circuit id.
    id: String,
    circom: circom::R1cs<Fr>,
    r1cs: testudo::R1cs<Fr>,
}

impl Circuit {
    fn load(path: &Path, flag: &'static str) -> anyhow::Result<Self> {
        let at = || format!("{flag} {}", path.display());
        let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", at()))?;
        let circom = circom::R1cs::<Fr>::from_bytes(&bytes).with_context(at)?;
        let m = circom.io_first_matrices();
        let r1cs = testudo::R1cs::new(m.num_constraints, m.num_io, m.num_aux, m.a, m.b, m.c)
            .with_context(|| format!("{}: not a Testudo R1CS instance", at()))?;
        Ok(Circuit { path: path.to_path_buf(), flag, id: circom::digest(&bytes), circom, r1cs })
    }

    fn describe(&self) -> String {
        format!("{} {}", self.flag, self.path.display())
    }

    /// What a Testudo-Comm key needs for this circuit.
    fn witness_vars(&self) -> usize {
        self.r1cs.witness_vars()
    }

    fn shape(&self) -> SpartanShape {
        SpartanShape::of(&self.r1cs)
    }

    /// Refuses a key of fewer variables than the circuit's witness polynomial, saying which
    /// `--max-vars` it needs.
    fn check_fits(&self, max_vars: usize, key: &str) -> anyhow::Result<()> {
        let need = self.witness_vars();
        ensure!(
            need <= max_vars,
            "{key} serves witness polynomials of up to {max_vars} variables, but {} ({} constraints, {} public \
             signals, {} private wires) needs {need}: make a key with `prover testudo setup --max-vars {need}` (or more)",
            self.describe(),
            self.r1cs.num_constraints(),
            self.r1cs.num_io(),
            self.r1cs.num_witness()
        );
        Ok(())
    }
}

fn shape_str(s: SpartanShape) -> String {
    format!("s_x = {}, s_y = {}, ℓ = {}", s.log_rows, s.log_cols, s.num_io)
}

/// A 64-hex-digit digest given to `flag` (or found in `what`).
fn parse_digest(what: &str, s: &str) -> anyhow::Result<KeyDigest> {
    let bytes = hex::decode(s.trim()).ok().and_then(|b| <[u8; 32]>::try_from(b.as_slice()).ok());
    bytes
        .map(KeyDigest)
        .with_context(|| format!("{what}: a digest is 64 hex digits, got {}", shown(s)))
}

fn read_bytes(path: &Path) -> anyhow::Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> anyhow::Result<T> {
    serde_json::from_slice(&read_bytes(path)?).with_context(|| path.display().to_string())
}

/// Writes `dir/name` through a temporary file and a rename.
fn write_beside(dir: &Path, name: &str, bytes: &[u8]) -> anyhow::Result<()> {
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, bytes).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, dir.join(name)).with_context(|| format!("writing {}", dir.join(name).display()))
}

/// A key directory's verifier key, checked against its keys.json.
struct Keys {
    dir: PathBuf,
    meta: KeysFile,
    vk: TcVerifierKey<Bls12_381>,
    digest: KeyDigest,
}

impl Keys {
    fn load(dir: &Path) -> anyhow::Result<Self> {
        let meta: KeysFile = read_json(&dir.join("keys.json"))
            .with_context(|| format!("{}: not a key directory of `prover testudo setup`", dir.display()))?;
        let expected = parse_digest(&format!("{}: tc_vk_digest", dir.join("keys.json").display()), &meta.tc_vk_digest)?;
        let path = dir.join("tc-vk.bin");
        let vk = files::vk_from_bytes::<Bls12_381>(&read_bytes(&path)?).with_context(|| path.display().to_string())?;
        let digest = compress::tc_vk_digest(&vk);
        ensure!(digest == expected, "{}: digest {digest}, but keys.json names {expected}", path.display());
        ensure!(
            vk.num_vars == meta.max_vars,
            "{}: a key for {} variables, but keys.json says max_vars {}",
            path.display(),
            vk.num_vars,
            meta.max_vars
        );
        Ok(Keys { dir: dir.to_path_buf(), meta, vk, digest })
    }

    fn describe(&self) -> String {
        format!("--keys {}", self.dir.display())
    }

    /// The compression keys, checked against keys.json, this Testudo-Comm key and `circuit`'s
    /// shape.
    fn load_final(&self, circuit: &Circuit) -> anyhow::Result<(pari::ProvingKey<Outer>, FinalKey<Outer>)> {
        let make = format!(
            "make one with `prover testudo setup --out NEW_DIR --final-for {}` (a directory holds one compression key)",
            circuit.path.display()
        );
        let Some(digest) = &self.meta.final_key_digest else {
            bail!("--compress: {} holds no compression key: {make}", self.describe())
        };
        let json = self.dir.join("keys.json");
        let digest = parse_digest(&format!("{}: final_key_digest", json.display()), digest)?;
        let path = self.dir.join("final-key.bin");
        let key = FinalKey::<Outer>::from_bytes(&read_bytes(&path)?).with_context(|| path.display().to_string())?;
        key.check_digest(&digest).with_context(|| format!("{}: not the key keys.json names", path.display()))?;
        ensure!(
            key.tc_vk_digest == self.digest,
            "{}: made for Testudo-Comm key {}, not this directory's {}",
            path.display(),
            key.tc_vk_digest,
            self.digest
        );
        ensure!(
            key.shape == circuit.shape(),
            "--compress: {}'s compression key is for circuits of shape {}, but {} has shape {}: {make}",
            self.describe(),
            shape_str(key.shape),
            circuit.describe(),
            shape_str(circuit.shape())
        );
        let pk_digest: pari::KeyDigest = self
            .meta
            .final_pk_digest
            .as_deref()
            .with_context(|| format!("{}: final_pk_digest missing", json.display()))?
            .parse()
            .with_context(|| format!("{}: final_pk_digest", json.display()))?;
        let path = self.dir.join("final-pk.bin");
        let pk = pari::ProvingKey::<Outer>::from_bytes_with_digest(&read_bytes(&path)?, &pk_digest)
            .with_context(|| path.display().to_string())?;
        ensure!(pk.vk == key.pari_vk, "{}: not the proving key of final-key.bin", path.display());
        Ok((pk, key))
    }
}

/// The compression keys for `circuit`'s shape under `vk`, and the keys.json fields naming them.
fn final_setup(
    vk: &TcVerifierKey<Bls12_381>,
    circuit: &Circuit,
    rng: &mut ChaCha20Rng,
) -> anyhow::Result<(Vec<u8>, FinalKey<Outer>, KeyDigest, String)> {
    let shape = circuit.shape();
    eprintln!(
        "making the compression key for shape {} ({}); this takes minutes",
        shape_str(shape),
        circuit.describe()
    );
    let (res, t) = timed(|| compress::setup::<Inner, Outer, _>(vk, shape, rng));
    let (pk, key) = res.context("compression setup")?;
    eprintln!("made the compression key in {} (Pari domain {})", secs(t), key.pari_vk.domain_size);
    // Uncompressed: loading skips a square root per point (hundreds of thousands of them).
    let pk_bytes = pk.to_bytes_uncompressed();
    let pk_digest = pari::KeyDigest::of_bytes(&pk_bytes).to_string();
    let digest = key.digest()?;
    Ok((pk_bytes, key, digest, pk_digest))
}

fn setup(a: SetupArgs) -> anyhow::Result<()> {
    let mut rng = ChaCha20Rng::from_entropy();
    if a.out.join("keys.json").exists() {
        // Add the compression key to an existing Testudo-Comm key.
        let Some(final_for) = &a.final_for else {
            bail!(
                "--out {}: holds a Testudo-Comm key already (keys.json); pass --final-for FILE.r1cs to add a \
                 compression key under it, or choose another --out",
                a.out.display()
            )
        };
        let keys = Keys::load(&a.out)?;
        if let Some(n) = a.max_vars {
            ensure!(
                n == keys.meta.max_vars,
                "--max-vars {n}: --out {} holds a key for --max-vars {} (the Testudo-Comm key is not remade)",
                a.out.display(),
                keys.meta.max_vars
            );
        }
        if let Some(d) = &keys.meta.final_key_digest {
            bail!(
                "--out {}: holds a compression key already (final key digest {d}); a key directory holds one: \
                 use another --out",
                a.out.display()
            );
        }
        let circuit = Circuit::load(final_for, "--final-for")?;
        circuit.check_fits(keys.vk.num_vars, &format!("the Testudo-Comm key in --out {}", a.out.display()))?;
        let (pk_bytes, key, digest, pk_digest) = final_setup(&keys.vk, &circuit, &mut rng)?;
        let mut meta = keys.meta.clone();
        meta.final_key_digest = Some(digest.to_string());
        meta.final_pk_digest = Some(pk_digest);
        // keys.json last: it names the compression key only once both files are in place.
        write_beside(&a.out, "final-pk.bin", &pk_bytes)?;
        write_beside(&a.out, "final-key.bin", &key.to_bytes()?)?;
        write_beside(&a.out, "keys.json", &serde_json::to_vec_pretty(&meta)?)?;
        eprintln!("wrote the compression key into {} (proving key {} bytes)", a.out.display(), pk_bytes.len());
        println!("tc vk digest: {}", keys.digest);
        println!("final key digest: {digest}");
        return Ok(());
    }

    let n = a.max_vars.unwrap_or(MAX_VARS);
    ensure!((1..=MAX_VARS).contains(&n), "--max-vars must be in 1..={MAX_VARS}, got {n}");
    check_out(&a.out)?;
    // The circuit first: a file that is unreadable or too large fails before the setup runs.
    let circuit = a.final_for.as_deref().map(|p| Circuit::load(p, "--final-for")).transpose()?;
    if let Some(c) = &circuit {
        c.check_fits(n, &format!("--max-vars {n}"))?;
    }
    let (res, t) = timed(|| testudo_comm::setup::<Bls12_381, _>(n, &mut rng));
    let (ck, vk) = res.context("Testudo-Comm setup")?;
    let digest = compress::tc_vk_digest(&vk);
    let (ck_bytes, vk_bytes) = (files::ck_to_bytes(&ck), files::vk_to_bytes(&vk));
    eprintln!(
        "set up the Testudo-Comm key for {n} variables in {} (committer key {} bytes, verifier key {} bytes)",
        secs(t),
        ck_bytes.len(),
        vk_bytes.len()
    );
    let mut meta = KeysFile { tc_vk_digest: digest.to_string(), max_vars: n, final_key_digest: None, final_pk_digest: None };
    let fin = match &circuit {
        Some(c) => {
            let (pk_bytes, key, fdigest, pk_digest) = final_setup(&vk, c, &mut rng)?;
            meta.final_key_digest = Some(fdigest.to_string());
            meta.final_pk_digest = Some(pk_digest);
            Some((pk_bytes, key.to_bytes()?, fdigest))
        }
        None => None,
    };
    write_dir_atomically(&a.out, |dir| {
        std::fs::write(dir.join("tc-ck.bin"), &ck_bytes)?;
        std::fs::write(dir.join("tc-vk.bin"), &vk_bytes)?;
        if let Some((pk_bytes, key_bytes, _)) = &fin {
            std::fs::write(dir.join("final-pk.bin"), pk_bytes)?;
            std::fs::write(dir.join("final-key.bin"), key_bytes)?;
        }
        std::fs::write(dir.join("keys.json"), serde_json::to_vec_pretty(&meta)?)?;
        Ok(())
    })?;
    eprintln!("wrote {}", a.out.display());
    println!("tc vk digest: {digest}");
    if let Some((_, _, fdigest)) = fin {
        println!("final key digest: {fdigest}");
    }
    Ok(())
}

/// Witness `path` of `c`, checked, as `(io, aux)`.
fn read_witness(c: &Circuit, path: &Path) -> anyhow::Result<(Vec<Fr>, Vec<Fr>)> {
    let at = || format!("--wtns {}", path.display());
    let bytes = std::fs::read(path).with_context(|| format!("{}: cannot read", at()))?;
    let w = circom::read_wtns::<Fr>(&bytes).with_context(at)?;
    let (io, aux) = c.circom.split_witness(&w).with_context(|| format!("{} (for {})", at(), c.describe()))?;
    Ok((io.to_vec(), aux.to_vec()))
}

/// Refuses an --out that write_dir_atomically would refuse, before minutes of proving.
fn check_out(out: &Path) -> anyhow::Result<()> {
    if out.exists() {
        let empty = out.is_dir() && std::fs::read_dir(out)?.next().is_none();
        ensure!(empty, "--out {}: already exists and is not an empty directory", out.display());
    }
    Ok(())
}

fn prove(a: ProveArgs) -> anyhow::Result<()> {
    check_out(&a.out)?;
    let circuit = Circuit::load(&a.r1cs, "--r1cs")?;
    let keys = Keys::load(&a.keys)?;
    circuit.check_fits(keys.vk.num_vars, &format!("the Testudo-Comm key in {}", keys.describe()))?;
    // Every witness checked before anything is proved.
    let witnesses = a.wtns.iter().map(|p| read_witness(&circuit, p)).collect::<anyhow::Result<Vec<_>>>()?;
    let fin = if a.compress { Some(keys.load_final(&circuit)?) } else { None };
    let ck_path = a.keys.join("tc-ck.bin");
    let ck = files::ck_from_bytes::<Bls12_381>(&read_bytes(&ck_path)?).with_context(|| ck_path.display().to_string())?;
    ensure!(
        ck.num_vars == keys.vk.num_vars,
        "{}: a key for {} variables, tc-vk.bin's is for {}",
        ck_path.display(),
        ck.num_vars,
        keys.vk.num_vars
    );

    let mut rng = ChaCha20Rng::from_entropy();
    let mut inner = Vec::with_capacity(witnesses.len());
    let mut finals = Vec::new();
    for (i, ((io, aux), path)) in witnesses.iter().zip(&a.wtns).enumerate() {
        let at = || format!("--wtns {} (witness {i})", path.display());
        let (proof, t) = timed(|| testudo::spartan::prove::<Fr, Pcs>(&ck, &circuit.r1cs, io, aux));
        let proof = proof.with_context(|| format!("{}: prove", at()))?;
        testudo::spartan::verify::<Fr, Pcs>(&keys.vk, &circuit.r1cs, io, &proof)
            .with_context(|| format!("{}: the proof just made does not verify (tc-ck.bin and tc-vk.bin of {} do not match?)", at(), keys.describe()))?;
        eprintln!("proved witness {i} in {}", secs(t));
        if let Some((pk, key)) = &fin {
            let (res, t) = timed(|| compress::prove::<Inner, Outer, _>(pk, key, &keys.vk, &circuit.r1cs, io, &proof, &mut rng));
            let f = res.with_context(|| format!("{}: compression", at()))?;
            eprintln!("compressed witness {i}'s proof in {}", secs(t));
            finals.push(f.to_bytes()?);
        }
        inner.push(files::proof_to_bytes::<Bls12_381>(&proof));
    }

    let meta = ProofFile {
        proof_system: PROOF_SYSTEM.into(),
        curve: CURVE.into(),
        circuit_id: circuit.id.clone(),
        tc_vk_digest: keys.digest.to_string(),
        witnesses: witnesses.len(),
        final_key_digest: keys.meta.final_key_digest.clone().filter(|_| a.compress),
    };
    let public: Vec<PublicEntry> = witnesses
        .iter()
        .enumerate()
        .map(|(i, (io, _))| PublicEntry { witness: i, public: io.iter().map(|v| v.to_string()).collect() })
        .collect();
    let vk_bytes = files::vk_to_bytes(&keys.vk);
    write_dir_atomically(&a.out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&meta)?)?;
        std::fs::write(dir.join("tc-vk.bin"), &vk_bytes)?;
        std::fs::write(dir.join("public.json"), serde_json::to_vec_pretty(&public)?)?;
        for (i, bytes) in inner.iter().enumerate() {
            std::fs::write(dir.join(format!("inner-{i}.bin")), bytes)?;
        }
        if let Some((_, key)) = &fin {
            std::fs::write(dir.join("final-key.bin"), key.to_bytes()?)?;
            for (i, bytes) in finals.iter().enumerate() {
                std::fs::write(dir.join(format!("final-{i}.bin")), bytes)?;
            }
        }
        Ok(())
    })?;
    let sizes = |v: &[Vec<u8>]| v.iter().map(|b| b.len().to_string()).collect::<Vec<_>>().join(", ");
    match fin {
        Some(_) => println!(
            "wrote {}: {} proofs (inner {} bytes, final {} bytes)",
            a.out.display(),
            inner.len(),
            sizes(&inner),
            sizes(&finals)
        ),
        None => println!("wrote {}: {} proofs ({} bytes)", a.out.display(), inner.len(), sizes(&inner)),
    }
    println!("circuit id: {}", circuit.id);
    println!("tc vk digest: {}", keys.digest);
    if let Some(d) = &meta.final_key_digest {
        println!("final key digest: {d}");
    }
    Ok(())
}

/// `DIR/public.json`: the public signals of each witness, in order.
fn read_public(dir: &Path, n: usize, num_io: usize) -> anyhow::Result<Vec<Vec<Fr>>> {
    let path = dir.join("public.json");
    let entries: Vec<PublicEntry> = read_json(&path)?;
    ensure!(entries.len() == n, "{}: {} entries, but circuit.json says {n} witnesses", path.display(), entries.len());
    entries
        .iter()
        .enumerate()
        .map(|(i, e)| -> anyhow::Result<Vec<Fr>> {
            ensure!(e.witness == i, "{}: entry {i} is for witness {}", path.display(), e.witness);
            ensure!(
                e.public.len() == num_io,
                "{}: entry {i} has {} public signals, the circuit {num_io}",
                path.display(),
                e.public.len()
            );
            e.public
                .iter()
                .enumerate()
                .map(|(j, s)| {
                    canonical_field::<Fr>(s).map_err(|err| anyhow::anyhow!("{}: entry {i}, signal {j}: {err}", path.display()))
                })
                .collect()
        })
        .collect()
}

/// The final key of `dir`, pinned by `expected` or (None) trusted as found.
fn load_final_key(dir: &Path, expected: Option<&KeyDigest>) -> anyhow::Result<FinalKey<Outer>> {
    let path = dir.join("final-key.bin");
    let key = FinalKey::<Outer>::from_bytes(&read_bytes(&path)?).with_context(|| path.display().to_string())?;
    if let Some(expected) = expected {
        key.check_digest(expected)
            .with_context(|| format!("{}: not the pinned final key (--final-key-digest)", path.display()))?;
    }
    Ok(key)
}

/// Verifies the directory against the pinned keys: what was checked, in words, and how many
/// witnesses' proofs.
fn verify(a: &VerifyArgs) -> anyhow::Result<(String, usize)> {
    let tc_pin = a.tc_vk_digest.as_deref().map(|s| parse_digest("--tc-vk-digest", s)).transpose()?;
    let final_pin = a.final_key_digest.as_deref().map(|s| parse_digest("--final-key-digest", s)).transpose()?;
    let circuit = Circuit::load(&a.r1cs, "--r1cs")?;
    let meta_path = a.dir.join("circuit.json");
    let meta: ProofFile = read_json(&meta_path)?;
    ensure!(
        meta.proof_system == PROOF_SYSTEM && meta.curve == CURVE,
        "{}: a {} proof on {}, not {PROOF_SYSTEM} on {CURVE}",
        meta_path.display(),
        meta.proof_system,
        meta.curve
    );
    ensure!(
        meta.circuit_id == circuit.id,
        "{} is circuit {}, but {} says the proofs are about circuit {}: not the circuit these proofs are for",
        circuit.describe(),
        circuit.id,
        meta_path.display(),
        meta.circuit_id
    );
    let n = meta.witnesses;
    ensure!(n >= 1, "{}: no witnesses", meta_path.display());
    match a.witnesses {
        Some(pinned) => ensure!(
            n == pinned,
            "{} says {n} witness(es), --witnesses says {pinned}: the directory does not hold the proofs of every witness",
            meta_path.display()
        ),
        None => eprintln!(
            "note: {n} witness(es), as {} says (the directory's own word): pass --witnesses N to pin the count",
            meta_path.display()
        ),
    }

    // The final key, when pinned (or trusted with the directory).
    let in_dir = a.dir.join("final-key.bin");
    let final_key = match (&final_pin, a.trust_proof_dir) {
        (Some(d), _) => Some((load_final_key(&a.dir, Some(d))?, *d)),
        (None, true) if in_dir.exists() => {
            let key = load_final_key(&a.dir, None)?;
            let d = key.digest()?;
            eprintln!(
                "WARNING: no pinned final key: checking the final proofs against {} (digest {d}), which came with \
                 the proofs. Whoever made it can prove anything under it.",
                in_dir.display()
            );
            Some((key, d))
        }
        _ => None,
    };
    if final_key.is_none() && (meta.final_key_digest.is_some() || in_dir.exists()) {
        eprintln!(
            "note: {} holds final proofs; they are not checked without --final-key-digest HEX",
            a.dir.display()
        );
    }

    // The Testudo-Comm verifier key: pinned by --tc-vk-digest, or by the pinned final key.
    let vk_path = a.dir.join("tc-vk.bin");
    let vk = files::vk_from_bytes::<Bls12_381>(&read_bytes(&vk_path)?).with_context(|| vk_path.display().to_string())?;
    let digest = compress::tc_vk_digest(&vk);
    let pinned_by = match (&tc_pin, &final_key, &final_pin) {
        (Some(d), _, _) => Some((*d, "--tc-vk-digest")),
        (None, Some((key, _)), Some(_)) => Some((key.tc_vk_digest, "the pinned final key")),
        _ => None,
    };
    match pinned_by {
        Some((expected, by)) => ensure!(
            digest == expected,
            "{}: digest {digest}, not the pinned Testudo-Comm key {expected} ({by})",
            vk_path.display()
        ),
        None if a.trust_proof_dir => eprintln!(
            "WARNING: no pinned key: checking against {} (digest {digest}), which came with the proofs. This shows \
             only that the proofs match that key; whoever made the key can prove anything under it.",
            vk_path.display()
        ),
        None => bail!(
            "refusing to verify without a pinned key: pass --tc-vk-digest HEX (the digest `prover testudo setup` \
             printed) or --final-key-digest HEX; --trust-proof-dir checks against the proof directory's own \
             tc-vk.bin, which proves nothing about who made it"
        ),
    }
    if let Some((key, _)) = &final_key {
        ensure!(
            key.tc_vk_digest == digest,
            "{}: made for Testudo-Comm key {}, not {digest} (tc-vk.bin)",
            in_dir.display(),
            key.tc_vk_digest
        );
        ensure!(
            key.shape == circuit.shape(),
            "{}: a final key for circuits of shape {}, but {} has shape {}",
            in_dir.display(),
            shape_str(key.shape),
            circuit.describe(),
            shape_str(circuit.shape())
        );
    }

    let public = read_public(&a.dir, n, circuit.r1cs.num_io())?;
    let mut bad: Vec<String> = Vec::new();
    let t = std::time::Instant::now();
    for (i, io) in public.iter().enumerate() {
        let name = format!("inner-{i}.bin");
        let res = read_bytes(&a.dir.join(&name)).and_then(|b| {
            let proof = files::proof_from_bytes::<Bls12_381>(&b)?;
            testudo::spartan::verify::<Fr, Pcs>(&vk, &circuit.r1cs, io, &proof)?;
            Ok(())
        });
        if let Err(e) = res {
            bad.push(format!("{name} (witness {i}): {e:#}"));
        }
    }
    let mut what = format!("{n} inner proofs of circuit {} checked against Testudo-Comm key {digest}", circuit.id);
    if let Some((key, kd)) = &final_key {
        let mut proofs = Vec::with_capacity(n);
        for i in 0..n {
            let name = format!("final-{i}.bin");
            match read_bytes(&a.dir.join(&name)).and_then(|b| Ok(FinalProof::<Fr, Outer>::from_bytes(&b)?)) {
                Ok(p) => proofs.push((i, p)),
                Err(e) => bad.push(format!("{name} (witness {i}): {e:#}")),
            }
        }
        let pvk = key.pari_vk.prepare()?;
        let items: Vec<compress::BatchItem<'_, Fr, Outer>> =
            proofs.iter().map(|(i, p)| (&circuit.r1cs, public[*i].as_slice(), p)).collect();
        let rejected = compress::batch_verify_final(key, &pvk, &items, &mut ChaCha20Rng::from_entropy())
            .context("checking the final proofs")?;
        for j in rejected {
            let i = proofs[j].0;
            bad.push(format!("final-{i}.bin (witness {i}): the final proof does not verify"));
        }
        what += &format!("; {} final proofs against final key {kd} (one batch)", proofs.len());
    }
    eprintln!("checked in {}", secs(t.elapsed()));
    if !bad.is_empty() {
        bail!("{} of the proofs in {} do not verify: {}", bad.len(), a.dir.display(), bad.join("; "));
    }
    Ok((what, n))
}

//! `prover reckle prove | update | verify`: Reckle-tree batch proofs on the local machine.
//!
//! A proof directory holds `statement.json` (C, d, the batch with its values, sum, count),
//! `proof.bin` (the root proof), and, for later updates, `lambda.bin` (Λ_I) and `leaves.bin`
//! (every leaf value). `verify` needs only the first two.
//!
//! `verify` checks the proof against the commitment given with `--root`; without it, only
//! against the statement's own `C`, which says no more than "some tree with root C holds these
//! leaves" (anyone can make that true), and it says so.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::{Args, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use reckle::{files, BatchProof, Change, Circuits, Digest, NodeProof, Params, RootKey, Statement, Tree};

use crate::util::{parse_u64, secs, timed, write_dir_atomically};

#[derive(Subcommand)]
pub enum ReckleCommand {
    /// Commit to a vector and prove a batch of its leaves.
    Prove(ProveArgs),
    /// Refresh a batch proof after leaf changes or batch changes, re-proving O(ℓ) nodes each.
    Update(UpdateArgs),
    /// Verify a proof directory: exits 0 and prints `verified`, or fails with the reason.
    Verify {
        dir: PathBuf,
        /// The commitment C (64 hex digits) the proof must be about. Without it the proof is
        /// checked only against the statement's own C, which anyone can make true.
        #[arg(long)]
        root: Option<String>,
        /// Derive the root key from (ℓ, q) now instead of using the one derived earlier and
        /// kept in the cache directory ($PROVER_CACHE_DIR, default ~/.cache/prover).
        #[arg(long)]
        no_cache: bool,
    },
    /// Verify the final proofs (final.bin) of many job directories in one batch, each against
    /// its --root, all against the wrap key pinned by --wrap-vk-digest.
    VerifyFinal(crate::reckle_final::VerifyFinalArgs),
    /// Make a wrap key offline with OS randomness (minutes, about 10 GB): vk.bin and pk.bin in
    /// --out, and the digest to pin.
    WrapSetup {
        /// Output directory (must not exist, or be empty).
        #[arg(long)]
        out: PathBuf,
    },
    /// Wrap keys in the platform's object store.
    #[command(subcommand)]
    WrapKey(crate::reckle_final::WrapKeyCommand),
}

#[derive(Args)]
pub struct ProveArgs {
    /// Text file with one leaf value per line (decimal or 0x-hex; blank lines and `#` comments
    /// ignored); the number of values must be a power of two.
    #[arg(long, conflicts_with = "random_leaves", required_unless_present = "random_leaves")]
    pub leaves_file: Option<PathBuf>,
    /// Use N random leaf values instead (N a power of two).
    #[arg(long)]
    pub random_leaves: Option<u64>,
    /// Batch indices, comma separated.
    #[arg(long, value_delimiter = ',', conflicts_with = "random_batch", required_unless_present = "random_batch")]
    pub batch: Vec<String>,
    /// Use K distinct random indices instead.
    #[arg(long)]
    pub random_batch: Option<u64>,
    /// q: leaves per bucket circuit = 2^q (capped at ℓ).
    #[arg(long, default_value_t = 3)]
    pub log_bucket: u32,
    /// Seed for --random-leaves / --random-batch.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output directory (must not exist, or be empty).
    #[arg(long)]
    pub out: PathBuf,
}

#[derive(Args)]
pub struct UpdateArgs {
    /// Directory written by `prove` or an earlier `update`.
    #[arg(long)]
    pub state: PathBuf,
    #[command(flatten)]
    pub changes: ChangeFlags,
    /// Output directory for the refreshed state (must not exist, or be empty). Without it the
    /// state directory is replaced, only once the new state is written and verified.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Leaf and batch changes, as flags (shared with `prover submit reckle-update`).
#[derive(Args)]
pub struct ChangeFlags {
    /// Set a leaf: INDEX=VALUE (VALUE decimal or 0x-hex). Repeatable.
    #[arg(long = "set")]
    pub set: Vec<String>,
    /// Add an index to the batch. Repeatable.
    #[arg(long = "add")]
    pub add: Vec<String>,
    /// Remove an index from the batch. Repeatable.
    #[arg(long = "remove")]
    pub remove: Vec<String>,
}

pub fn run(cmd: ReckleCommand) -> anyhow::Result<()> {
    match cmd {
        ReckleCommand::Prove(a) => prove(a),
        ReckleCommand::Update(a) => update(a),
        ReckleCommand::VerifyFinal(a) => crate::reckle_final::verify_final(a),
        ReckleCommand::WrapSetup { out } => crate::reckle_final::wrap_setup(&out),
        ReckleCommand::WrapKey(cmd) => crate::reckle_final::wrap_key(cmd),
        ReckleCommand::Verify { dir, root, no_cache } => {
            let expected = root
                .map(|r| Digest::from_hex(&r).map_err(|e| anyhow::anyhow!("--root: {e}")))
                .transpose()?;
            let report = verify_dir(&dir, expected.as_ref(), !no_cache)?;
            println!("{report}");
            match expected {
                Some(c) => println!("verified against C = {c}"),
                None => println!(
                    "verified against the statement's own C = {} only: this shows that some tree with that root \
                     holds these leaves, which anyone can make true; pass --root HEX with the commitment you trust",
                    read_statement(&dir)?.root
                ),
            }
            Ok(())
        }
    }
}

/// The batch from `--batch I,J,…` or `--random-batch K` (K distinct indices below `n`, sorted).
pub fn batch_flags(batch: &[String], random: Option<u64>, n: u64, rng: &mut StdRng) -> anyhow::Result<Vec<u64>> {
    match random {
        Some(k) => {
            if k == 0 || k > n {
                bail!("--random-batch must be in 1..={n}, got {k}");
            }
            Ok(random_batch(rng, n, k))
        }
        None => batch.iter().map(|s| parse_u64(s).context("--batch")).collect(),
    }
}

/// `k` distinct indices below `n`, sorted.
pub fn random_batch(rng: &mut StdRng, n: u64, k: u64) -> Vec<u64> {
    let mut b: Vec<u64> = sample(rng, n as usize, k as usize).into_iter().map(|i| i as u64).collect();
    b.sort_unstable();
    b
}

/// log2 of `n`, which must be a power of two ≥ 2.
pub fn log2_exact(n: u64, what: &str) -> anyhow::Result<u32> {
    if n < 2 || !n.is_power_of_two() {
        bail!("{what}: the number of leaves must be a power of two ≥ 2, got {n}");
    }
    Ok(n.trailing_zeros())
}

pub fn read_leaves_file(path: &Path) -> anyhow::Result<Vec<u64>> {
    let text = std::fs::read_to_string(path).with_context(|| format!("--leaves-file {}", path.display()))?;
    let mut values = Vec::new();
    for (no, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let v = parse_u64(line).with_context(|| format!("--leaves-file {} line {}", path.display(), no + 1))?;
        values.push(v);
    }
    Ok(values)
}

/// Builds the circuits for `params`, reporting the time taken.
pub fn build_circuits(params: Params) -> anyhow::Result<Circuits> {
    eprintln!(
        "building circuits for ℓ = {}, q = {} ({} levels)…",
        params.log_n,
        params.log_bucket,
        params.log_n - params.log_bucket + 1
    );
    let (c, t) = timed(|| Circuits::build(params));
    let c = c?;
    eprintln!("circuits built in {}", secs(t));
    Ok(c)
}

fn progress_bar(len: u64, what: &str) -> ProgressBar {
    let pb = ProgressBar::new(len);
    pb.set_style(
        ProgressStyle::with_template("{msg} [{bar:30}] {pos}/{len} nodes, {elapsed}")
            .expect("valid template")
            .progress_chars("=> "),
    );
    pb.set_message(what.to_string());
    pb
}

/// Writes a complete proof directory: into a scratch directory first, which is read back and
/// verified (the statement and root proof against the tree's C, Λ_I against the leaves) before
/// it is renamed into place; nothing is left at `out` when that fails.
pub fn write_state(out: &Path, circuits: &Circuits, tree: &Tree, lambda: &BatchProof) -> anyhow::Result<Statement> {
    let statement = lambda.statement(circuits, tree)?;
    write_dir_atomically(out, |dir| {
        fill_state(dir, tree, lambda, &statement)?;
        check_written(dir, circuits, &tree.root())
    })?;
    Ok(statement)
}

fn fill_state(dir: &Path, tree: &Tree, lambda: &BatchProof, statement: &Statement) -> anyhow::Result<()> {
    std::fs::write(dir.join(files::STATEMENT), serde_json::to_vec_pretty(statement)?)?;
    std::fs::write(dir.join(files::PROOF), lambda.root_proof().to_bytes())?;
    std::fs::write(dir.join(files::LAMBDA), lambda.to_bytes())?;
    std::fs::write(dir.join(files::LEAVES), reckle::encode_values(tree.values()))?;
    Ok(())
}

/// Reads back a freshly written state directory and verifies it as `verify` and `update` would.
fn check_written(dir: &Path, circuits: &Circuits, root: &Digest) -> anyhow::Result<()> {
    let st = read_statement(dir)?;
    let proof = NodeProof::root_from_bytes(circuits.root_key(), &read_file(dir, files::PROOF)?)?;
    st.verify_for(root, circuits.root_key(), &proof).context("the proof just written does not verify")?;
    load_state(dir, circuits).context("the state just written does not load")?;
    Ok(())
}

/// Replaces the state directory `state` with a new one: written into a scratch directory beside
/// it, verified, and then swapped in by renames, so a failure at any point leaves the old state
/// as it was.
fn replace_state(state: &Path, circuits: &Circuits, tree: &Tree, lambda: &BatchProof) -> anyhow::Result<Statement> {
    let statement = lambda.statement(circuits, tree)?;
    let name = state.file_name().context("--state must name a directory")?.to_string_lossy().to_string();
    let parent = match state.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let scratch = parent.join(format!(".{name}.new-{}", std::process::id()));
    let old = parent.join(format!(".{name}.old-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir(&scratch).with_context(|| format!("creating {}", scratch.display()))?;
    let written = fill_state(&scratch, tree, lambda, &statement).and_then(|_| check_written(&scratch, circuits, &tree.root()));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(e);
    }
    std::fs::rename(state, &old).with_context(|| format!("moving {} aside", state.display()))?;
    if let Err(e) = std::fs::rename(&scratch, state) {
        // Put the old state back.
        let _ = std::fs::rename(&old, state);
        let _ = std::fs::remove_dir_all(&scratch);
        return Err(e).with_context(|| format!("renaming the new state into {}", state.display()));
    }
    let _ = std::fs::remove_dir_all(&old);
    Ok(statement)
}

pub fn prove(a: ProveArgs) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(a.seed);
    let values = match (&a.leaves_file, a.random_leaves) {
        (Some(path), _) => read_leaves_file(path)?,
        (None, Some(n)) => {
            log2_exact(n, "--random-leaves")?;
            (0..n).map(|_| rng.gen()).collect()
        }
        (None, None) => bail!("give --leaves-file or --random-leaves"),
    };
    let log_n = log2_exact(values.len() as u64, "leaves")?;
    let params = Params::new(log_n, a.log_bucket.min(log_n))?;
    let batch = batch_flags(&a.batch, a.random_batch, params.num_leaves(), &mut rng)?;
    reckle::plan_batch(params, &batch).context("--batch")?;
    let circuits = build_circuits(params)?;
    let (tree, t_tree) = timed(|| Tree::build(params, values));
    let tree = tree?;
    eprintln!("committed {} leaves in {}: C = {}", params.num_leaves(), secs(t_tree), tree.root());
    let plan = reckle::plan_batch(params, &batch)?;
    let pb = progress_bar(plan.len() as u64, "proving");
    let (lambda, t) = timed(|| BatchProof::aggregate_with_progress(&circuits, &tree, &batch, |_| pb.inc(1)));
    pb.finish_and_clear();
    let lambda = lambda?;
    eprintln!("proved |I| = {} with {} node proofs in {}", batch.len(), lambda.num_nodes(), secs(t));
    let st = write_state(&a.out, &circuits, &tree, &lambda)?;
    println!("wrote and verified {} (C = {}, d = {}, sum = {}, count = {})", a.out.display(), st.root, st.digest, st.sum, st.count);
    Ok(())
}

fn read_file(dir: &Path, name: &str) -> anyhow::Result<Vec<u8>> {
    let p = dir.join(name);
    std::fs::read(&p).with_context(|| format!("state directory {}: cannot read {name}", dir.display()))
}

fn read_statement(dir: &Path) -> anyhow::Result<Statement> {
    let bytes = read_file(dir, files::STATEMENT)?;
    serde_json::from_slice(&bytes)
        .with_context(|| format!("{}: {} is not a valid statement", dir.display(), files::STATEMENT))
}

fn cache_dir() -> PathBuf {
    match std::env::var_os("PROVER_CACHE_DIR") {
        Some(d) => PathBuf::from(d),
        None => std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from(".")).join(".cache/prover"),
    }
}

/// The root key for `params`: derived by building the circuits (seconds to minutes), and kept
/// in the local cache so that later verifications take milliseconds. A cached key is used only
/// if its bytes hash to the digest pinned in the binary for `(ℓ, q)`
/// ([`reckle::pinned_root_key`]); any other entry is ignored and the key derived again. For an
/// `(ℓ, q)` with no pinned digest the cache is not used at all.
pub fn root_key(params: Params, use_cache: bool) -> anyhow::Result<RootKey> {
    let use_cache = use_cache && reckle::pinned_root_key(params).is_some();
    let path = cache_dir().join(format!(
        "reckle/root-key-c{}-l{}-q{}.bin",
        reckle::CIRCUIT_VERSION,
        params.log_n,
        params.log_bucket
    ));
    if use_cache {
        if let Ok(bytes) = std::fs::read(&path) {
            match RootKey::from_bytes(&bytes) {
                Ok(k) if k.params() == params => return Ok(k),
                Ok(_) => eprintln!("ignoring damaged cached key {}: it is for other parameters", path.display()),
                Err(e) => eprintln!("ignoring damaged cached key {}: {e}", path.display()),
            }
        }
    }
    let key = build_circuits(params)?.root_key().clone();
    if use_cache {
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        let stored = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&tmp, key.to_bytes()))
            .and_then(|_| std::fs::rename(&tmp, &path));
        if let Err(e) = stored {
            eprintln!("note: could not cache the root key in {}: {e}", path.display());
        }
    }
    Ok(key)
}

/// Verifies a proof directory against `expected_root` (or, without one, the statement's own
/// C); returns a one-line summary. Everything that needs no key (the statement's claims, the
/// expected C, the pinned circuit digest, the proof's header and size) is checked before any
/// circuit is built or key loaded.
pub fn verify_dir(dir: &Path, expected_root: Option<&Digest>, use_cache: bool) -> anyhow::Result<String> {
    let st = read_statement(dir)?;
    let proof_bytes = read_file(dir, files::PROOF)?;
    let params = st.precheck(expected_root, &proof_bytes).context("verification failed")?;
    let root = match expected_root {
        Some(c) => *c,
        None => Digest::from_hex(&st.root).context("statement: root")?,
    };
    let key = root_key(params, use_cache)?;
    let (res, t) = timed(|| {
        let proof = NodeProof::root_from_bytes(&key, &proof_bytes)?;
        st.verify_for(&root, &key, &proof)
    });
    res.context("verification failed")?;
    Ok(format!(
        "batch of {} leaves, sum {}, in C = {} (ℓ = {}, q = {}); proof {} bytes, checked in {}",
        st.count,
        st.sum,
        st.root,
        st.log_n,
        st.log_bucket,
        proof_bytes.len(),
        secs(t)
    ))
}

/// Loads a full state directory (statement, Λ_I, leaves), checking them against each other.
pub fn load_state(dir: &Path, circuits: &Circuits) -> anyhow::Result<(Tree, BatchProof)> {
    let values = reckle::decode_values(&read_file(dir, files::LEAVES)?)
        .with_context(|| format!("{}: {}", dir.display(), files::LEAVES))?;
    let tree = Tree::build(circuits.params(), values).with_context(|| format!("{}: {}", dir.display(), files::LEAVES))?;
    let lambda = BatchProof::from_bytes(circuits, &read_file(dir, files::LAMBDA)?)
        .with_context(|| format!("{}: {}", dir.display(), files::LAMBDA))?;
    lambda
        .check_against(circuits, &tree)
        .with_context(|| format!("{}: {} does not match {}", dir.display(), files::LAMBDA, files::LEAVES))?;
    Ok((tree, lambda))
}

fn parse_changes(a: &UpdateArgs) -> anyhow::Result<Vec<Change>> {
    parse_change_flags(&a.changes)
}

/// Changes from `--set I=V`, `--add I` and `--remove I` flags.
pub fn parse_change_flags(flags: &ChangeFlags) -> anyhow::Result<Vec<Change>> {
    let (set, add, remove) = (&flags.set, &flags.add, &flags.remove);
    let mut changes = Vec::new();
    for s in set {
        let (i, v) = s.split_once('=').with_context(|| format!("--set {s:?}: expected INDEX=VALUE"))?;
        changes.push(Change::Set {
            index: parse_u64(i).with_context(|| format!("--set {s:?}: INDEX"))?,
            value: parse_u64(v).with_context(|| format!("--set {s:?}: VALUE"))?,
        });
    }
    for s in add {
        changes.push(Change::Add(parse_u64(s).with_context(|| format!("--add {s:?}"))?));
    }
    for s in remove {
        changes.push(Change::Remove(parse_u64(s).with_context(|| format!("--remove {s:?}"))?));
    }
    if changes.is_empty() {
        bail!("nothing to update: give --set, --add or --remove");
    }
    Ok(changes)
}

pub fn update(a: UpdateArgs) -> anyhow::Result<()> {
    let changes = parse_changes(&a)?;
    let st = read_statement(&a.state)?;
    let params = st.params().context("statement")?;
    let circuits = build_circuits(params)?;
    let (mut tree, mut lambda) = load_state(&a.state, &circuits)?;
    // The state's statement must be what its Λ_I and leaves prove.
    let root_proof = lambda.root_proof().clone();
    st.verify_for(&tree.root(), circuits.root_key(), &root_proof)
        .with_context(|| format!("{}: {} is not what {} proves", a.state.display(), files::STATEMENT, files::LAMBDA))?;
    let (report, t) = timed(|| lambda.update(&circuits, &mut tree, &changes));
    let report = report?;
    eprintln!(
        "re-proved {} nodes ({} dropped) in {}",
        report.reproved.len(),
        report.dropped.len(),
        secs(t)
    );
    let (out, st) = match &a.out {
        Some(out) => (out, write_state(out, &circuits, &tree, &lambda)?),
        None => (&a.state, replace_state(&a.state, &circuits, &tree, &lambda)?),
    };
    println!("wrote and verified {} (C = {}, d = {}, sum = {}, count = {})", out.display(), st.root, st.digest, st.sum, st.count);
    Ok(())
}

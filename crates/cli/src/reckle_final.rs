//! `prover reckle verify-final | wrap-setup | wrap-key import`: Reckle final proofs (issue 29).
//!
//! A Reckle job submitted with `--final` publishes `final.bin` (one Pari proof on BN254 of its
//! root proof, with the public values `C`, `d`, sum, count and the circuit id of its `(ℓ, q)`)
//! and `wrap-vk.bin` (the wrap verifying key). `verify-final` checks many such directories in
//! one batch, each against the `C` its user expects, all against the wrap key the user pins by
//! digest (`--wrap-vk-digest`, required: a key found beside a proof decides nothing).
//!
//! The wrap key is made offline with `wrap-setup` (OS randomness; the trapdoor never leaves the
//! process and is dropped with it) and stored in the platform's object store with `wrap-key
//! import`; the platform is then pointed at it with `--reckle-wrap-vk-digest`.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use ark_bn254::Bn254;
use bytes::Bytes;
use clap::{Args, Subcommand};
use plonky2_r1cs::shrink::{NormalizeCircuit, ShrinkCircuit};
use plonky2_r1cs::wrap::{self, Expected, FinalProof, WrapKeys};
use platform::kinds::reckle::wrap::{check_public, parse_wrap_digest, wrap_key_file, FINAL_FILE, WRAP_VK_FILE};
use reckle::{files, Digest, Params, Statement};

use crate::util::{secs, timed, write_dir_atomically};

#[derive(Args)]
pub struct VerifyFinalArgs {
    /// Job directories (`prover fetch`), each with final.bin, statement.json and proof.bin.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The commitment C (64 hex digits) each job must be about: once per DIR, in the same order.
    #[arg(long = "root", required = true)]
    pub roots: Vec<String>,
    /// The digest (128 hex digits) of the wrap verifying key you trust: the one your platform's
    /// operator publishes (the manifest's `wrap_vk_digest` is only what the server reports).
    /// Required.
    #[arg(long)]
    pub wrap_vk_digest: Option<String>,
    /// The wrap verifying key file (default: each DIR's wrap-vk.bin); it must hash to
    /// --wrap-vk-digest.
    #[arg(long)]
    pub wrap_vk: Option<PathBuf>,
    /// Derive the Reckle root keys now instead of using the cached ones (see `verify`).
    #[arg(long)]
    pub no_cache: bool,
}

#[derive(Subcommand)]
pub enum WrapKeyCommand {
    /// Store a wrap key made by `wrap-setup` in the platform's object store under its digest
    /// (`reckle/keys/wrap/v<version>/<digest>/`), vk.bin last; then pin it on every role with
    /// --reckle-wrap-vk-digest. Importing the same key again changes nothing.
    Import {
        /// The directory `wrap-setup` wrote (vk.bin, pk.bin).
        dir: PathBuf,
        #[command(flatten)]
        backend: platform::service::BackendArgs,
    },
}

/// `prover reckle wrap-setup --out DIR`: the wrap's Pari setup with OS randomness (minutes,
/// about 10 GB): writes vk.bin (compressed) and pk.bin (uncompressed, the form workers load
/// without a square root per point) and prints the verifying key's digest.
pub fn wrap_setup(out: &Path) -> anyhow::Result<()> {
    let (shrink, t) = timed(ShrinkCircuit::build_default);
    let shrink = shrink.context("building the shrink circuit")?;
    eprintln!("shrink circuit built in {}", secs(t));
    // The trapdoor comes from the OS and lives only inside the setup: nobody, this process
    // included once it returns, can forge final proofs under the key.
    let (keys, t) = timed(|| WrapKeys::setup_with_rng(&shrink, &mut rand::rngs::OsRng));
    let keys = keys.context("wrap setup")?;
    eprintln!("setup in {}", secs(t));
    let digest = keys.vk_digest().to_string();
    write_dir_atomically(out, |dir| {
        std::fs::write(dir.join("vk.bin"), keys.vk.to_bytes())?;
        std::fs::write(dir.join("pk.bin"), keys.pk.to_bytes_uncompressed())?;
        Ok(())
    })?;
    println!("wrap key (version {}) in {}", wrap::WRAP_VERSION, out.display());
    println!("vk digest: {digest}");
    println!("next: prover reckle wrap-key import {} (with the platform's --redis and --s3-endpoint), then --reckle-wrap-vk-digest {digest}", out.display());
    Ok(())
}

pub fn wrap_key(cmd: WrapKeyCommand) -> anyhow::Result<()> {
    match cmd {
        WrapKeyCommand::Import { dir, backend } => import(&dir, &backend),
    }
}

fn read(dir: &Path, name: &str) -> anyhow::Result<Vec<u8>> {
    let path = dir.join(name);
    std::fs::read(&path).with_context(|| format!("reading {}", path.display()))
}

fn import(dir: &Path, backend: &platform::service::BackendArgs) -> anyhow::Result<()> {
    let vk = pari::VerifyingKey::<Bn254>::from_bytes(&read(dir, "vk.bin")?).context("vk.bin")?;
    let digest = vk.digest().to_string();
    parse_wrap_digest(&digest).map_err(|e| anyhow::anyhow!("vk.bin: {e}"))?;
    let pk_bytes = Bytes::from(read(dir, "pk.bin")?);
    {
        // Every point and the shape checked (the directory may have travelled since the setup
        // wrote it); workers check again when they load it, trusting nothing stored beside it.
        let pk = pari::ProvingKey::<Bn254>::from_bytes_checked(&pk_bytes).context("pk.bin")?;
        if pk.vk != vk {
            bail!("pk.bin is not the proving key of vk.bin");
        }
    }
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    rt.block_on(async {
        let p = platform::service::connect_backends(backend, Default::default(), Default::default(), false).await.context("connecting to Redis and S3")?;
        let vk_key = wrap_key_file(&digest, "vk.bin");
        if p.blobs().exists(&vk_key).await? {
            let stored = p.blobs().get(&vk_key).await?;
            if stored.as_ref() != vk.to_bytes().as_slice() {
                bail!("{vk_key} holds other bytes than this key: the store is damaged");
            }
            println!("wrap key {digest} is already imported");
            return Ok(());
        }
        // Content addressed by the verifying key's digest; vk.bin last, so its presence means
        // the key is complete. A concurrent import of the same key writes the same bytes.
        p.blobs().put(&wrap_key_file(&digest, "pk.bin"), pk_bytes).await?;
        p.blobs().put(&vk_key, Bytes::from(vk.to_bytes())).await?;
        println!("imported wrap key {digest}");
        println!("pin it on every role: --reckle-wrap-vk-digest {digest} (PROVER_RECKLE_WRAP_VK_DIGEST)");
        anyhow::Ok(())
    })
}

/// One directory's final proof, checked up to the pairing check.
struct Checked {
    dir: PathBuf,
    c: Digest,
    id: Digest,
    proof: FinalProof,
}

pub fn verify_final(a: VerifyFinalArgs) -> anyhow::Result<()> {
    let Some(pin) = &a.wrap_vk_digest else {
        bail!(
            "--wrap-vk-digest is required: a final proof is only as good as the key it is checked with; \
             pass the digest of the wrap verifying key your platform's operator publishes"
        );
    };
    let pin = parse_wrap_digest(pin).map_err(|e| anyhow::anyhow!("--wrap-vk-digest: {e}"))?;
    if a.roots.len() != a.dirs.len() {
        bail!("--root: give one per directory, in the same order ({} directories, {} roots)", a.dirs.len(), a.roots.len());
    }
    let vk = |bytes: &[u8], what: &str| -> anyhow::Result<pari::VerifyingKey<Bn254>> {
        let vk = pari::VerifyingKey::<Bn254>::from_bytes_pinned(bytes, &pin).with_context(|| format!("{what}: not the wrap key --wrap-vk-digest pins"))?;
        if vk.num_public_inputs() != wrap::NUM_PUBLIC_INPUTS {
            bail!("{what}: not a wrap key ({} public inputs, the wrap circuit has {})", vk.num_public_inputs(), wrap::NUM_PUBLIC_INPUTS);
        }
        Ok(vk)
    };
    let shared = match &a.wrap_vk {
        Some(path) => Some(vk(&std::fs::read(path).with_context(|| format!("reading {}", path.display()))?, &path.display().to_string())?),
        None => None,
    };
    let mut ids: HashMap<Params, Digest> = HashMap::new();
    let mut checked = Vec::new();
    let mut bad: Vec<(PathBuf, String)> = Vec::new();
    let mut key = shared;
    for (dir, root) in a.dirs.iter().zip(&a.roots) {
        let c = Digest::from_hex(root).map_err(|e| anyhow::anyhow!("--root {root}: {e}"))?;
        if key.is_none() {
            key = Some(vk(&read(dir, WRAP_VK_FILE)?, &dir.join(WRAP_VK_FILE).display().to_string())?);
        } else if a.wrap_vk.is_none() {
            // Each directory's key must be the pinned one too (it is the same bytes then).
            vk(&read(dir, WRAP_VK_FILE)?, &dir.join(WRAP_VK_FILE).display().to_string())?;
        }
        let proof = match FinalProof::from_bytes(&read(dir, FINAL_FILE)?) {
            Ok(p) => p,
            Err(e) => {
                bad.push((dir.clone(), format!("{FINAL_FILE}: {e}")));
                continue;
            }
        };
        let st: Statement = serde_json::from_slice(&read(dir, files::STATEMENT)?).with_context(|| format!("{}: statement", dir.display()))?;
        let params = match st.precheck(Some(&c), &read(dir, files::PROOF)?) {
            Ok(p) => p,
            Err(e) => {
                bad.push((dir.clone(), format!("statement: {e}")));
                continue;
            }
        };
        let id = match ids.get(&params) {
            Some(id) => *id,
            None => {
                let root_key = crate::reckle::root_key(params, !a.no_cache)?;
                let n = NormalizeCircuit::build(&root_key).context("normalize circuit")?;
                let id = Digest::from_hash(n.circuit_id());
                ids.insert(params, id);
                id
            }
        };
        if let Err(e) = check_public(&proof, params, &c, &id, &st) {
            bad.push((dir.clone(), e));
            continue;
        }
        checked.push(Checked { dir: dir.clone(), c, id, proof });
    }
    let key = key.context("no wrap verifying key")?;
    let pvk = key.prepare().context("wrap verifying key")?;
    let items: Vec<(Expected, &FinalProof)> = checked.iter().map(|k| (Expected { c: k.c, circuit_id: k.id }, &k.proof)).collect();
    let (verdict, t) = timed(|| wrap::batch_verify(&pvk, &items, &mut rand::rngs::OsRng));
    if let Err(failed) = verdict {
        for i in failed {
            bad.push((checked[i].dir.clone(), format!("the Pari proof does not verify under the wrap key {pin}")));
        }
    }
    eprintln!("checked {} final proofs in one batch in {} ({:.3} ms per proof)", items.len(), secs(t), t.as_secs_f64() * 1e3 / items.len().max(1) as f64);
    if !bad.is_empty() {
        for (dir, reason) in &bad {
            eprintln!("{}: {reason}", dir.display());
        }
        bail!("{} of {} final proofs rejected", bad.len(), a.dirs.len());
    }
    for k in &checked {
        println!("{}: verified against C = {} and wrap key {pin}", k.dir.display(), k.c);
    }
    println!("verified {} final proofs", checked.len());
    Ok(())
}

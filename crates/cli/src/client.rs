//! The platform's gRPC client commands: `submit`, `watch`, `status`, `jobs`, `cancel`, `fetch`,
//! `verify-remote`. Every command takes `--endpoint` (or `PROVER_ENDPOINT`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::{bail, Context};
use api::v1 as pb;
use clap::{Args, Subcommand};
use indicatif::{MultiProgress, ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::reckle::{batch_flags, log2_exact, parse_change_flags, read_leaves_file};
use crate::util::write_dir_atomically;

/// `--endpoint`, `--token`, `--ca` (one definition, shared with the operator and the load test).
pub type Endpoint = api::ClientArgs;

type Client = api::AuthedClient;

#[derive(Subcommand)]
pub enum SubmitCommand {
    /// A Reckle batch proof job.
    Reckle(SubmitReckle),
    /// Update the batch proof of a done Reckle job (re-proves only the affected paths).
    ReckleUpdate(SubmitUpdate),
    /// Many Pari proofs, emitted in batch-verified bundles: of a built-in circuit (BLS12-381,
    /// instances from seeds), or of a registered circom circuit (`--circuit-id`, one proof per
    /// `--witness`).
    Pari(SubmitPari),
    /// A Hekaton proof of a large circuit, its subcircuits proved by separate workers.
    Hekaton(SubmitHekaton),
    /// Testudo proofs of a registered circom circuit (BLS12-381), one per `--witness`: no
    /// per-circuit trusted setup; with `--compress`, each also compressed into a final Pari
    /// proof on BW6-767. Check the fetched directory with `prover testudo verify`.
    Testudo(SubmitTestudo),
    /// Tasks that do nothing: smoke-tests a deployment (every role takes part) or measures the
    /// orchestration. Publishes no proof.
    Noop(SubmitNoop),
}

#[derive(Args)]
pub struct SubmitTestudo {
    /// The registered circuit (`prover circuit register`, compiled with --prime bls12381).
    #[arg(long)]
    pub circuit_id: String,
    /// A witness (.wtns) to prove; give it once per proof. The files are uploaded, not sent
    /// inline.
    #[arg(long, value_name = "FILE", required = true)]
    pub witness: Vec<PathBuf>,
    /// Also compress each proof into a constant-size Pari proof (`final-<i>.bin`). The first
    /// job of a circuit's shape makes its final key: a long setup (minutes), reused after.
    #[arg(long)]
    pub compress: bool,
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

#[derive(Args)]
pub struct SubmitNoop {
    /// How many tasks (1 to 1,000,000).
    #[arg(long, default_value_t = 16)]
    pub tasks: u64,
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

#[derive(Args)]
pub struct SubmitHekaton {
    #[command(flatten)]
    pub circuit: crate::hekaton::CircuitArgs,
    /// Seed of the circuit's inputs.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also publish final.bin, one Pari proof on BW6-767 of the whole Hekaton proof (any k,
    /// made by a hekaton.wrap worker; proof.bin then holds the k subcircuit proofs, the form the
    /// wrap verifies, not the aggregate); check it with `prover hekaton verify-final DIR --key-digest HEX`.
    #[arg(long = "final")]
    pub final_proof: bool,
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

#[derive(Args)]
pub struct SubmitPari {
    /// Circuit family: chain or poseidon.
    #[arg(long, default_value = "chain", conflicts_with = "circuit_id")]
    pub circuit: String,
    /// Chain steps, or Poseidon inputs.
    #[arg(long, default_value_t = 64, conflicts_with = "circuit_id")]
    pub size: u64,
    /// Number of proofs (built-in families).
    #[arg(long, required_unless_present = "circuit_id", conflicts_with = "circuit_id")]
    pub count: Option<u64>,
    /// Instances come from seeds seed_start .. seed_start + count.
    #[arg(long, default_value_t = 0, conflicts_with = "circuit_id")]
    pub seed_start: u64,
    /// A registered circom circuit (`prover circuit register`) instead of a built-in family.
    #[arg(long, requires = "witness")]
    pub circuit_id: Option<String>,
    /// With --circuit-id: a witness (.wtns, from snarkjs or circom's generator) to prove; give
    /// it once per proof. The files are uploaded, not sent inline.
    #[arg(long, value_name = "FILE")]
    pub witness: Vec<PathBuf>,
    /// Proofs per prove task (default: 16 for built-in families, 4 for circom circuits).
    #[arg(long)]
    pub proofs_per_task: Option<u64>,
    #[arg(long, default_value_t = 1024)]
    pub bundle_size: u64,
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

#[derive(Args)]
pub struct SubmitReckle {
    /// Text file with one leaf value per line; the count must be a power of two.
    #[arg(long, conflicts_with_all = ["random_leaves", "leaves_object"])]
    pub leaves_file: Option<PathBuf>,
    /// N random leaf values (N a power of two).
    #[arg(long, conflicts_with = "leaves_object")]
    pub random_leaves: Option<u64>,
    /// Key of an object in the platform's store holding the values (`leaves.bin` format);
    /// needs --log-n.
    #[arg(long, requires = "log_n")]
    pub leaves_object: Option<String>,
    /// ℓ, with --leaves-object.
    #[arg(long)]
    pub log_n: Option<u32>,
    /// Batch indices, comma separated.
    #[arg(long, value_delimiter = ',', conflicts_with = "random_batch", required_unless_present = "random_batch")]
    pub batch: Vec<String>,
    /// K distinct random indices instead.
    #[arg(long)]
    pub random_batch: Option<u64>,
    /// q: leaves per bucket circuit = 2^q (capped at ℓ).
    #[arg(long, default_value_t = 3)]
    pub log_bucket: u32,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Submitting again with the same key and parameters returns the same job.
    #[arg(long)]
    pub idempotency_key: Option<String>,
    /// Also publish final.bin: one Pari proof on BN254 of the root proof (264 bytes, checked
    /// with `prover reckle verify-final DIR --root HEX --wrap-vk-digest HEX`). Refused where the
    /// platform pins no wrap key.
    #[arg(long = "final")]
    pub final_proof: bool,
}

#[derive(Args)]
pub struct SubmitUpdate {
    /// The done job whose proof is updated.
    #[arg(long)]
    pub base: String,
    #[command(flatten)]
    pub changes: crate::reckle::ChangeFlags,
    /// Also publish the updated job's final.bin (see `submit reckle --final`).
    #[arg(long = "final")]
    pub final_proof: bool,
    #[arg(long)]
    pub idempotency_key: Option<String>,
}

fn runtime() -> anyhow::Result<tokio::runtime::Runtime> {
    Ok(tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?)
}

async fn connect(ep: &Endpoint) -> anyhow::Result<Client> {
    ep.check_transport().map_err(anyhow::Error::msg)?;
    ep.connect().await.map_err(anyhow::Error::msg)
}

/// Largest request sent with its leaves inline. A message reserves 37 times its size of the
/// planner's request budget while it is read and decoded, an upload's 1 MiB pieces far less, so
/// leaves beyond this (about 2^17 values) are uploaded.
const INLINE_REQUEST_BYTES: usize = 1 << 20;

/// `req`, or, when its inline leaves make it larger than [`INLINE_REQUEST_BYTES`], the same
/// request with the leaves uploaded first (`UploadInput`) and passed by object key.
async fn inline_or_uploaded(c: &mut Client, mut req: pb::SubmitJobRequest) -> anyhow::Result<pb::SubmitJobRequest> {
    let size = api::prost::Message::encoded_len(&req);
    if size <= INLINE_REQUEST_BYTES {
        return Ok(req);
    }
    let Some(pb::submit_job_request::Params::ReckleBatch(p)) = &mut req.params else {
        bail!("the request is {size} bytes, over the {} MiB that the CLI sends inline", INLINE_REQUEST_BYTES >> 20);
    };
    let Some(pb::reckle_batch_params::Leaves::Inline(v)) = p.leaves.take() else {
        bail!("the request is {size} bytes, over the {} MiB that the CLI sends inline", INLINE_REQUEST_BYTES >> 20);
    };
    let data = reckle::encode_values(&v.values);
    let name = format!("leaves-{}.bin", &hex::encode(blake2_256(&data))[..16]);
    eprintln!("{} leaves are over {} MiB inline: uploading them as {name}", v.values.len(), INLINE_REQUEST_BYTES >> 20);
    let up = upload_bytes(c, &name, data).await?;
    p.leaves = Some(pb::reckle_batch_params::Leaves::ObjectKey(up.object_key));
    Ok(req)
}

fn blake2_256(data: &[u8]) -> [u8; 32] {
    use blake2::Digest;
    blake2::Blake2b::<blake2::digest::consts::U32>::digest(data).into()
}

/// Streams `data` to `UploadInput` as `name`, in chunks; checks the digest the server computed.
async fn upload_bytes(c: &mut Client, name: &str, data: Vec<u8>) -> anyhow::Result<pb::UploadInputResponse> {
    const PIECE: usize = 1 << 20;
    let total = data.len() as u64;
    let digest = hex::encode(blake2_256(&data));
    // Pieces are copied out one at a time as the stream is sent, so the upload holds the data
    // once plus one piece.
    let data = bytes::Bytes::from(data);
    let first = pb::UploadChunk { name: name.to_string(), total_size: total, data: Vec::new() };
    let pieces = (0..data.len()).step_by(PIECE).map(move |at| pb::UploadChunk { data: data[at..(at + PIECE).min(data.len())].to_vec(), ..Default::default() });
    let resp = c.upload_input(tokio_stream::iter(std::iter::once(first).chain(pieces))).await.map_err(rpc)?.into_inner();
    if resp.blake2b != digest || resp.size != total {
        bail!("the platform stored {} bytes with BLAKE2b {} for {name}, not the {total} bytes with BLAKE2b {digest} sent", resp.size, resp.blake2b);
    }
    Ok(resp)
}

/// `prover upload FILE [--name N]`: prints the object key.
pub fn upload(ep: Endpoint, file: std::path::PathBuf, name: Option<String>) -> anyhow::Result<()> {
    let name = match name {
        Some(n) => n,
        None => file.file_name().and_then(|n| n.to_str()).context("give --name: the file has no usable name")?.to_string(),
    };
    let data = std::fs::read(&file).with_context(|| format!("reading {}", file.display()))?;
    runtime()?.block_on(async {
        let up = upload_bytes(&mut connect(&ep).await?, &name, data).await?;
        eprintln!("{} bytes stored, BLAKE2b-256 {}", up.size, up.blake2b);
        println!("{}", up.object_key);
        Ok(())
    })
}

/// A gRPC status as one line: `INVALID_ARGUMENT: invalid batch: …`.
fn rpc(e: tonic::Status) -> anyhow::Error {
    anyhow::anyhow!("{:?}: {}", e.code(), e.message())
}

pub fn submit(ep: Endpoint, cmd: SubmitCommand) -> anyhow::Result<()> {
    let req = match cmd {
        SubmitCommand::Reckle(a) => {
            let mut rng = StdRng::seed_from_u64(a.seed);
            let (leaves, n) = match (&a.leaves_file, a.random_leaves, &a.leaves_object) {
                (Some(path), _, _) => {
                    let v = read_leaves_file(path)?;
                    let n = v.len() as u64;
                    (pb::reckle_batch_params::Leaves::Inline(pb::LeafValues { values: v }), n)
                }
                (None, Some(n), _) => {
                    log2_exact(n, "--random-leaves")?;
                    let v: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
                    (pb::reckle_batch_params::Leaves::Inline(pb::LeafValues { values: v }), n)
                }
                (None, None, Some(key)) => {
                    let log_n = a.log_n.context("--log-n is required with --leaves-object")?;
                    (pb::reckle_batch_params::Leaves::ObjectKey(key.clone()), 1u64.checked_shl(log_n).unwrap_or(0))
                }
                _ => bail!("give --leaves-file, --random-leaves or --leaves-object"),
            };
            let log_n = match a.log_n {
                Some(l) => l,
                None => log2_exact(n, "leaves")?,
            };
            let batch = batch_flags(&a.batch, a.random_batch, n, &mut rng)?;
            pb::SubmitJobRequest {
                idempotency_key: a.idempotency_key.unwrap_or_default(),
                params: Some(pb::submit_job_request::Params::ReckleBatch(pb::ReckleBatchParams {
                    log_n,
                    log_bucket: a.log_bucket.min(log_n),
                    batch,
                    leaves: Some(leaves),
                    final_proof: a.final_proof,
                })),
            }
        }
        SubmitCommand::Hekaton(a) => {
            let c = &a.circuit;
            let n = |v: usize, flag: &str| u32::try_from(v).map_err(|_| anyhow::anyhow!("--{flag} is too large"));
            pb::SubmitJobRequest {
                idempotency_key: a.idempotency_key.unwrap_or_default(),
                params: Some(pb::submit_job_request::Params::Hekaton(pb::HekatonParams {
                    circuit: match c.circuit {
                        crate::hekaton::Circuit::Synthetic => "synthetic".into(),
                        crate::hekaton::Circuit::MerkleUpdate => "merkle-update".into(),
                    },
                    subcircuits: n(c.subcircuits, "subcircuits")?,
                    steps: n(c.steps, "steps")?,
                    wires: n(c.wires, "wires")?,
                    depth: n(c.depth, "depth")?,
                    updates: n(c.updates, "updates")?,
                    parts: n(c.parts, "parts")?,
                    seed: a.seed,
                    final_proof: a.final_proof,
                })),
            }
        }
        SubmitCommand::Noop(a) => pb::SubmitJobRequest {
            idempotency_key: a.idempotency_key.unwrap_or_default(),
            params: Some(pb::submit_job_request::Params::Noop(pb::NoopParams { tasks: a.tasks })),
        },
        SubmitCommand::Pari(a) if a.circuit_id.is_some() => {
            let circuit_id = a.circuit_id.context("--circuit-id")?;
            let (per_task, bundle_size) = (a.proofs_per_task.unwrap_or(0), a.bundle_size);
            return submit_witnesses(ep, &a.witness, a.idempotency_key, move |keys| {
                pb::submit_job_request::Params::PariCircom(pb::PariCircomParams {
                    circuit_id,
                    witness_object_keys: keys,
                    proofs_per_task: per_task,
                    bundle_size,
                })
            });
        }
        SubmitCommand::Testudo(a) => {
            let (circuit_id, compress) = (a.circuit_id, a.compress);
            return submit_witnesses(ep, &a.witness, a.idempotency_key, move |keys| {
                pb::submit_job_request::Params::Testudo(pb::TestudoParams { circuit_id, witness_object_keys: keys, compress })
            });
        }
        SubmitCommand::Pari(a) => pb::SubmitJobRequest {
            idempotency_key: a.idempotency_key.unwrap_or_default(),
            params: Some(pb::submit_job_request::Params::PariBatch(pb::PariBatchParams {
                circuit: a.circuit,
                size: a.size,
                seed_start: a.seed_start,
                count: a.count.context("--count is required")?,
                proofs_per_task: a.proofs_per_task.unwrap_or(16),
                bundle_size: a.bundle_size,
            })),
        },
        SubmitCommand::ReckleUpdate(a) => {
            let changes = parse_change_flags(&a.changes)?
                .into_iter()
                .map(|c| pb::ReckleChange {
                    change: Some(match c {
                        reckle::Change::Set { index, value } => pb::reckle_change::Change::Set(pb::SetLeaf { index, value }),
                        reckle::Change::Add(i) => pb::reckle_change::Change::Add(i),
                        reckle::Change::Remove(i) => pb::reckle_change::Change::Remove(i),
                    }),
                })
                .collect();
            pb::SubmitJobRequest {
                idempotency_key: a.idempotency_key.unwrap_or_default(),
                params: Some(pb::submit_job_request::Params::ReckleUpdate(pb::ReckleUpdateParams { base_job_id: a.base, changes, final_proof: a.final_proof })),
            }
        }
    };
    runtime()?.block_on(async {
        let mut c = connect(&ep).await?;
        let req = inline_or_uploaded(&mut c, req).await?;
        let resp = c.submit_job(req).await.map_err(rpc)?.into_inner();
        if !resp.created {
            eprintln!("the idempotency key names an earlier job");
        }
        println!("{}", resp.job_id);
        Ok(())
    })
}

fn state_name(s: i32) -> &'static str {
    match pb::JobState::try_from(s).unwrap_or(pb::JobState::Unspecified) {
        pb::JobState::Queued => "queued",
        pb::JobState::Running => "running",
        pb::JobState::Done => "done",
        pb::JobState::Failed => "failed",
        pb::JobState::Cancelled => "cancelled",
        pb::JobState::Unspecified => "unknown",
    }
}

fn describe(j: &pb::Job) -> String {
    let tasks: Vec<String> = j.tasks.iter().map(|t| format!("{} {}/{}", t.kind, t.done, t.total)).collect();
    let mut s = format!("{}  {}  {}  [{}]", j.job_id, j.kind, state_name(j.state), tasks.join(", "));
    if !j.message.is_empty() {
        s.push_str(&format!("  {}", j.message));
    }
    s
}

/// Follows a job with a progress bar per task kind; Ok only if it ends done.
pub fn watch(ep: Endpoint, job: String) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let mut stream = connect(&ep).await?.watch_job(pb::WatchJobRequest { job_id: job.clone() }).await.map_err(rpc)?.into_inner();
        let multi = MultiProgress::new();
        let style = ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {elapsed}").expect("template").progress_chars("=> ");
        let mut bars: BTreeMap<String, ProgressBar> = BTreeMap::new();
        let mut last = None;
        while let Some(update) = stream.message().await.map_err(rpc)? {
            for t in &update.tasks {
                let bar = bars.entry(t.kind.clone()).or_insert_with(|| {
                    let b = multi.add(ProgressBar::new(t.total));
                    b.set_style(style.clone());
                    b.set_prefix(t.kind.clone());
                    b
                });
                bar.set_length(t.total);
                bar.set_position(t.done);
            }
            last = Some(update);
        }
        for b in bars.values() {
            b.finish();
        }
        let last = last.context("the server sent no update")?;
        match pb::JobState::try_from(last.state).unwrap_or(pb::JobState::Unspecified) {
            pb::JobState::Done => {
                println!("job {job} done");
                Ok(())
            }
            _ => bail!("job {job} {}: {}", state_name(last.state), last.message),
        }
    })
}

pub fn status(ep: Endpoint, job: String) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let j = connect(&ep).await?.get_job(pb::GetJobRequest { job_id: job }).await.map_err(rpc)?.into_inner();
        println!("{}", describe(&j));
        Ok(())
    })
}

/// `prover limits`: the server's GetLimits.
pub fn limits(ep: Endpoint) -> anyhow::Result<pb::Limits> {
    runtime()?.block_on(async {
        let mut client = connect(&ep).await.with_context(|| {
            format!("no planner answered at {} (`prover limits --local` prints this build's limits without one)", ep.url())
        })?;
        anyhow::Ok(client.get_limits(pb::GetLimitsRequest {}).await.map_err(rpc)?.into_inner())
    })
}

/// Prints limits as two Markdown tables, or as JSON.
pub fn print_limits(l: &pb::Limits, json: bool) -> anyhow::Result<()> {
    if json {
        let limits: Vec<_> = l
            .limits
            .iter()
            .map(|x| serde_json::json!({"scope": x.scope, "field": x.field, "max": x.max, "unit": x.unit, "description": x.description}))
            .collect();
        let memory: Vec<_> = l
            .memory
            .iter()
            .map(|r| {
                let parts: Vec<_> = r.parts.iter().map(|p| serde_json::json!({"description": p.description, "bytes": p.bytes})).collect();
                serde_json::json!({"role": r.role, "bytes": r.bytes, "parts": parts})
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({"limits": limits, "memory": memory}))?);
        return Ok(());
    }
    print!("{}", platform::limits::table(l));
    Ok(())
}

pub fn list(ep: Endpoint, page_size: u32) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let mut client = connect(&ep).await?;
        let mut token = String::new();
        loop {
            let resp = client
                .list_jobs(pb::ListJobsRequest { page_size, page_token: token.clone() })
                .await
                .map_err(rpc)?
                .into_inner();
            for j in &resp.jobs {
                println!("{}", describe(j));
            }
            if resp.next_page_token.is_empty() {
                return Ok(());
            }
            token = resp.next_page_token;
        }
    })
}

pub fn cancel(ep: Endpoint, job: String) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let j = connect(&ep).await?.cancel_job(pb::CancelJobRequest { job_id: job }).await.map_err(rpc)?.into_inner();
        println!("{}", describe(&j));
        Ok(())
    })
}

/// Downloads a done job's proof directory into `out` (atomically).
pub fn fetch(ep: Endpoint, job: String, out: PathBuf) -> anyhow::Result<()> {
    let files = runtime()?.block_on(async {
        let mut stream = connect(&ep).await?.get_proof(pb::GetProofRequest { job_id: job.clone() }).await.map_err(rpc)?.into_inner();
        let mut files: Vec<(String, u64, Vec<u8>)> = Vec::new();
        while let Some(chunk) = stream.message().await.map_err(rpc)? {
            match files.last_mut() {
                Some((name, _, data)) if *name == chunk.file => data.extend_from_slice(&chunk.data),
                _ => files.push((chunk.file, chunk.file_size, chunk.data)),
            }
        }
        anyhow::Ok(files)
    })?;
    for (name, size, data) in &files {
        if data.len() as u64 != *size || name.contains('/') || name.starts_with('.') {
            bail!("job {job}: file {name:?} arrived damaged ({} of {size} bytes)", data.len());
        }
    }
    write_dir_atomically(&out, |dir| {
        for (name, _, data) in &files {
            std::fs::write(dir.join(name), data)?;
        }
        Ok(())
    })?;
    println!("wrote {} ({} files)", out.display(), files.len());
    // What to pin when verifying offline (as the server reports it: check it against what you
    // expect, e.g. the C of the vector you committed to), from the manifest the job published.
    if let Some((_, _, data)) = files.iter().find(|(n, _, _)| n == platform::manifest::MANIFEST) {
        let m = platform::manifest::Manifest::from_bytes(data).map_err(anyhow::Error::msg)?;
        println!("{} job {}", m.kind, m.job);
        for (name, value) in &m.pins {
            let label = match name.as_str() {
                "root" => "commitment C",
                "vk_digest" => "vk digest",
                "agg_vk_digest" => "aggregate key digest",
                "final_key_digest" => "final key digest",
                "wrap_vk_digest" => "wrap key digest (check it against the one your operator publishes)",
                other => other,
            };
            println!("{label} = {value}");
        }
        for c in m.verify_commands(&out.display().to_string()) {
            println!("verify with: {c}");
        }
        return Ok(());
    }
    // A job published before manifests: guessed from the file names.
    for (name, _, data) in &files {
        let json = || serde_json::from_slice::<serde_json::Value>(data).ok();
        match name.as_str() {
            "statement.json" => {
                if let Some(c) = json().and_then(|v| v.get("root").and_then(|r| r.as_str().map(String::from))) {
                    println!("commitment C = {c} (verify with: prover reckle verify {} --root {c})", out.display());
                }
            }
            "circuit.json" if !files.iter().any(|(n, _, _)| n == "proof.bin" || n.starts_with("bundle-")) => {
                // A registration job: what it registered.
                if let Some(v) = json() {
                    let field = |k: &str| v.get(k).and_then(|r| r.as_str()).unwrap_or("?").to_string();
                    println!("circuit {} registered, vk digest = {}", field("circuit_id"), field("vk_digest"));
                }
            }
            "circuit.json" => {
                if let Some(d) = json().and_then(|v| v.get("vk_digest").and_then(|r| r.as_str().map(String::from))) {
                    // A Hekaton proof directory holds proof.bin; a Pari one, bundles.
                    let verify = if files.iter().any(|(n, _, _)| n == "proof.bin") { "hekaton verify" } else { "pari verify-bundles" };
                    println!("vk digest = {d} (verify with: prover {verify} {} --vk-digest {d})", out.display());
                }
                if let Some(f) = json().and_then(|v| v.get("final_key_digest").and_then(|r| r.as_str().map(String::from))) {
                    println!("final key digest = {f} (verify with: prover hekaton verify-final {} --key-digest {f})", out.display());
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// Asks the server to verify a done job's proof.
pub fn verify_remote(ep: Endpoint, job: String, root: Option<String>, vk_digest: Option<String>) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let r = connect(&ep)
            .await?
            .verify_proof(pb::VerifyProofRequest {
                target: Some(pb::verify_proof_request::Target::JobId(job.clone())),
                expected_root: root.unwrap_or_default(),
                expected_vk_digest: vk_digest.unwrap_or_default(),
            })
            .await
            .map_err(rpc)?
            .into_inner();
        if !r.valid {
            bail!("job {job}: proof invalid: {}", r.reason);
        }
        println!("verified against {}", r.checked_against);
        Ok(())
    })
}

/// Uploads a file under a name derived from its content (`<prefix>-<16 hex of its BLAKE2b>.<ext>`):
/// the object key.
async fn upload_file(c: &mut Client, path: &std::path::Path, prefix: &str, ext: &str) -> anyhow::Result<String> {
    let data = std::fs::read(path).with_context(|| format!("reading {}", path.display()))?;
    let name = format!("{prefix}-{}.{ext}", &hex::encode(blake2_256(&data))[..16]);
    Ok(upload_bytes(c, &name, data).await?.object_key)
}

/// `prover submit pari --circuit-id ID --witness FILE…` and `prover submit testudo`: uploads
/// the witnesses, then submits the parameters `params` makes of their object keys.
fn submit_witnesses(
    ep: Endpoint,
    witnesses: &[PathBuf],
    idempotency_key: Option<String>,
    params: impl FnOnce(Vec<String>) -> pb::submit_job_request::Params,
) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let mut c = connect(&ep).await?;
        let mut keys = Vec::with_capacity(witnesses.len());
        for w in witnesses {
            keys.push(upload_file(&mut c, w, "wtns", "wtns").await.with_context(|| format!("--witness {}", w.display()))?);
        }
        eprintln!("{} witness(es) uploaded", keys.len());
        let req = pb::SubmitJobRequest { idempotency_key: idempotency_key.unwrap_or_default(), params: Some(params(keys)) };
        let resp = c.submit_job(req).await.map_err(rpc)?.into_inner();
        if !resp.created {
            eprintln!("the idempotency key names an earlier job");
        }
        println!("{}", resp.job_id);
        Ok(())
    })
}

#[derive(Subcommand)]
pub enum CircuitCommand {
    /// Register a circom circuit (.r1cs, compiled with --prime bn128 or bls12381): uploads it,
    /// runs its setup once as a job (waits for it), prints the circuit id and the verifying
    /// key's digest to pin.
    Register {
        #[arg(long, value_name = "FILE")]
        r1cs: PathBuf,
        /// Return once the registration job is submitted (prints its id) instead of waiting.
        #[arg(long)]
        no_wait: bool,
    },
    /// Your registered circuits, one per line.
    List,
    /// One registered circuit.
    Show { circuit_id: String },
    /// Delete one of your circuits (its .r1cs and keys). Refused while a job of yours that
    /// proves or registers it has not ended. Proofs already fetched or published stay valid
    /// under their own vk.bin; registering the file again runs a new setup, with a new key.
    Delete { circuit_id: String },
    /// Write a registered circuit's verifying key (`vk.bin`, checked against its digest) and a
    /// `circuit.json` naming its curve into --out.
    ExportVk {
        circuit_id: String,
        #[arg(long)]
        out: PathBuf,
    },
}

fn print_circuit(c: &pb::Circuit) {
    println!("circuit_id {}", c.circuit_id);
    println!("vk_digest {}", c.vk_digest);
    println!("curve {}", c.curve);
    println!(
        "constraints {}, wires {}, public signals {} ({} outputs, {} inputs), registered by job {}",
        c.constraints,
        c.wires,
        c.public_outputs + c.public_inputs,
        c.public_outputs,
        c.public_inputs,
        c.job_id
    );
}

pub fn circuit(ep: Endpoint, cmd: CircuitCommand) -> anyhow::Result<()> {
    runtime()?.block_on(async {
        let mut c = connect(&ep).await?;
        match cmd {
            CircuitCommand::Register { r1cs, no_wait } => {
                let key = upload_file(&mut c, &r1cs, "circuit", "r1cs").await.with_context(|| format!("--r1cs {}", r1cs.display()))?;
                let resp = c.register_circuit(pb::RegisterCircuitRequest { r1cs_object_key: key }).await.map_err(rpc)?.into_inner();
                if let Some(circuit) = resp.circuit {
                    eprintln!("registered already");
                    print_circuit(&circuit);
                    return Ok(());
                }
                let job = resp.job.context("the server returned neither the circuit nor a registration job")?;
                eprintln!("circuit {}: registration job {} (the setup runs once)", resp.circuit_id, job.job_id);
                if no_wait {
                    println!("{}", job.job_id);
                    return Ok(());
                }
                let mut stream = c.watch_job(pb::WatchJobRequest { job_id: job.job_id.clone() }).await.map_err(rpc)?.into_inner();
                let mut last = job;
                while let Some(update) = stream.message().await.map_err(rpc)? {
                    last = update;
                }
                if pb::JobState::try_from(last.state) != Ok(pb::JobState::Done) {
                    bail!("registration job {} {}: {}", last.job_id, state_name(last.state), last.message);
                }
                let circuit = c.get_circuit(pb::GetCircuitRequest { circuit_id: resp.circuit_id }).await.map_err(rpc)?.into_inner();
                print_circuit(&circuit);
            }
            CircuitCommand::List => {
                for ci in c.list_circuits(pb::ListCircuitsRequest {}).await.map_err(rpc)?.into_inner().circuits {
                    println!("{}  {}  {} constraints  vk {}", ci.circuit_id, ci.curve, ci.constraints, ci.vk_digest);
                }
            }
            CircuitCommand::Show { circuit_id } => {
                print_circuit(&c.get_circuit(pb::GetCircuitRequest { circuit_id }).await.map_err(rpc)?.into_inner());
            }
            CircuitCommand::Delete { circuit_id } => {
                let resp = c.delete_circuit(pb::DeleteCircuitRequest { circuit_id: circuit_id.clone() }).await.map_err(rpc)?.into_inner();
                println!("deleted circuit {circuit_id} ({} objects)", resp.deleted_objects);
            }
            CircuitCommand::ExportVk { circuit_id, out } => {
                let ci = c.get_circuit(pb::GetCircuitRequest { circuit_id }).await.map_err(rpc)?.into_inner();
                let found = pari::KeyDigest::of_bytes(&ci.vk).to_string();
                if found != ci.vk_digest {
                    bail!("the platform sent a vk.bin with digest {found}, not the circuit's {}", ci.vk_digest);
                }
                let json = serde_json::json!({ "curve": ci.curve, "circuit_id": ci.circuit_id, "vk_digest": ci.vk_digest });
                write_dir_atomically(&out, |dir| {
                    std::fs::write(dir.join("vk.bin"), &ci.vk)?;
                    std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&json)?)?;
                    Ok(())
                })?;
                println!("wrote {} (vk digest {})", out.display(), ci.vk_digest);
            }
        }
        Ok(())
    })
}

/// `prover bundle --circuit-id ID --jobs A,B… --out DIR`: one bundle of the proofs of several
/// done jobs of a registered circuit, written as a directory `prover pari verify-bundles` checks
/// (`circuit.json`, `vk.bin`, `bundle-0.bin`, and `sources.json`: each entry's job and witness).
pub fn bundle(ep: Endpoint, circuit_id: String, jobs: Vec<String>, out: PathBuf) -> anyhow::Result<()> {
    let b = runtime()?.block_on(async {
        let mut c = connect(&ep).await?;
        anyhow::Ok(c.get_bundle(pb::GetBundleRequest { circuit_id: circuit_id.clone(), job_ids: jobs }).await.map_err(rpc)?.into_inner())
    })?;
    let circuit = serde_json::json!({ "curve": b.curve, "circuit_id": circuit_id, "vk_digest": b.vk_digest });
    let sources: Vec<serde_json::Value> = b.sources.iter().map(|s| serde_json::json!({ "job_id": s.job_id, "witness": s.witness })).collect();
    write_dir_atomically(&out, |dir| {
        std::fs::write(dir.join("circuit.json"), serde_json::to_vec_pretty(&circuit)?)?;
        std::fs::write(dir.join("vk.bin"), &b.vk)?;
        std::fs::write(dir.join("bundle-0.bin"), &b.bundle)?;
        std::fs::write(dir.join("sources.json"), serde_json::to_vec_pretty(&sources)?)?;
        Ok(())
    })?;
    println!("wrote {} ({} proofs)", out.display(), b.sources.len());
    println!("vk digest = {} (verify with: prover pari verify-bundles {} --vk-digest {})", b.vk_digest, out.display(), b.vk_digest);
    Ok(())
}

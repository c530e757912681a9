//! Hekaton jobs (`hekaton.prove`): one large circuit, partitioned into `k` subcircuits proved by
//! separate workers (paper §6.2), checked and published by the aggregator.
//!
//! DAG (task ids `<step>-<i>`):
//!
//! 1. `hekaton.setup` (worker): the keys of the circuit's structure, made once per
//!    [`CircuitSpec::digest`] and reused by every later job of that structure, and (unless the
//!    job asks for the depth-1 wrap) the aggregation keys of that Hekaton key (paper §5, Agg.G:
//!    an SRS sized to `k` and the aggregate keys, [`hekaton::aggregated::setup`]), made once
//!    per Hekaton key, or (for a `--final` job) the wrap keys of that Hekaton key
//!    ([`super::hekaton_wrap`]), made once per Hekaton key; then the coordinator's step 1: the
//!    traces, cut into one witness share per subcircuit. **Every key is made from the operating
//!    system's randomness** (`OsRng`, issue 32): nothing in the store, the job's secret
//!    included, can rebuild a trapdoor.
//! 2. `hekaton.commit` × k (worker `i`): `D_i`, the commitment to its share. Its randomness
//!    `κ_D` is drawn from the job's secret and `i`, so a redelivered commit task writes the same
//!    `D_i` (and the prove task re-derives the randomness rather than storing it).
//! 3. `hekaton.challenge` (worker): once every `D_i` is in, the challenge `(α, β)`, the Merkle
//!    tree and one message per subcircuit (a pure function of the commitments). An aggregating
//!    job draws `(α, β)` from `cm_D = CM1(D)` ([`hekaton::aggregated::coordinator_challenge`]),
//!    a wrapped one from the list of `D_i` (the wrap recomputes that challenge in its circuit).
//! 4. `hekaton.subproof` × k (worker `i`): the Mirage proof of subcircuit `i`, from the spec
//!    (the circuit is rebuilt, never shipped), its share, its message and the keys.
//! 5. `--final` jobs only, `hekaton.wrap` (worker, [`super::hekaton_wrap::wrap`]): the final
//!    proof, one Pari proof on BW6-767 of the `k`-proof Hekaton proof, under the wrap key the
//!    setup chose.
//! 6. `hekaton.assemble` (aggregator): aggregates the `k` proofs (Agg.P: GIPA's `log k` rounds
//!    one after the other, each round's multi-exponentiations and pairings parallel) into one
//!    [`AggregatedProof`] of `O(log k)` group elements, **verifies it** under the job's keys, and
//!    only then publishes `proof/{circuit.json, vk.bin, agg-vk.bin, proof.bin, public.json}` —
//!    the directory `prover hekaton verify DIR --vk-digest HEX --agg-vk-digest HEX` checks
//!    offline. A `--final` job (any `k` the platform accepts: [`super::hekaton_wrap::check_fits`])
//!    publishes the `k` proofs as `proof.bin` instead (the wrap circuit verifies that form),
//!    verified, and beside it the wrap task's `final.bin` once **it** verifies under the job's
//!    final key against the job's statement ([`super::hekaton_wrap::check_final`]).
//!
//! Workers report `hekaton.done`; the executor releases each step when the previous is done.
//! Which keys a job uses travels in its task payloads from the setup's report on (the digests
//! of the verifying key, of the aggregate verifying key, and of the final key: a payload
//! without the second is a job that publishes the `k` proofs), so a job's tasks agree on one
//! key even if two jobs of one structure make keys at the same time. The setup also records
//! them (`<job>/hekaton/keys.json`): a redelivered setup reuses them (a new run would draw
//! other keys), and the aggregator refuses a payload that names others.
//!
//! Objects: keys under `hekaton/keys/v2/<spec digest>/<vk digest>/` (`v2`: made from the OS's
//! randomness; the keys under `hekaton/keys/<spec digest>/`, made from job secrets, are never
//! read): `vk.bin` and one Mirage proving key per subcircuit shape, `pk-<shape>.bin` (content
//! addressed, never overwritten with other bytes; `vk.bin` is written last, so its presence
//! means the keys are complete), the aggregation keys under
//! `agg/<aggregate vk digest>/{pk.bin, vk.bin}` there (`vk.bin` last) with an `agg-current`
//! pointer beside them, the wrap keys under `wrap/v3/<final key digest>/` there
//! (`final-key.bin` last, no pointer), and `hekaton/keys/v2/<spec digest>/current` (the digest
//! later jobs reuse); per job `jobs/<id>/hekaton/{share,commit,message,proof}-<i>.bin`,
//! `round.bin`, `keys.json` and (wrapped) `final.bin`.
//!
//! A worker fetches the verifying key and **its own shape's** proving key only, never the
//! whole proving key, and keeps what it decoded in the process's byte-bounded cache
//! ([`crate::cache`]): decoding a key runs the curve and subgroup checks of every point, which
//! costs more than a small subcircuit's proof.

use std::collections::BTreeMap;

use ark_bls12_381::{Bls12_381, Fr};
use async_trait::async_trait;
use bytes::Bytes;
use hekaton::aggregate::srs::Srs;
use hekaton::aggregate::{AggProvingKey, AggVerifyingKey};
use hekaton::aggregated::{self, AggregatedProof};
use hekaton::mirage::{self, Commitment};
use hekaton::spec::CircuitSpec;
use hekaton::workflow::{self, ProveMessage, VerifyingKey, VkDigest, WitnessShare};
use std::sync::Arc;
use jobs::JobRecord;
use queue::Lease;
use rand::SeedableRng;

use super::hekaton_wrap::{self, WRAP};
use super::{JobKind, JobRequest, Served, TaskKind, Validated};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const JOB: &str = "hekaton.prove";
pub const SETUP: TaskKind = TaskKind::new("hekaton.setup", Served::Worker, 3600);
pub const COMMIT: TaskKind = TaskKind::new("hekaton.commit", Served::Worker, 1800);
pub const CHALLENGE: TaskKind = TaskKind::new("hekaton.challenge", Served::Worker, 600);
pub const PROVE: TaskKind = TaskKind::new("hekaton.subproof", Served::Worker, 3600);
pub const DONE: TaskKind = TaskKind::new("hekaton.done", Served::Executor, 300);
pub const ASSEMBLE: TaskKind = TaskKind::new("hekaton.assemble", Served::Aggregator, 1800);
const TASKS: &[TaskKind] = &[PROVE, COMMIT, CHALLENGE, SETUP, DONE, ASSEMBLE, WRAP];

/// The job's secret (32 random bytes under `jobs/<id>/inputs/`, drawn at submission): the seed
/// of its commitments' and proofs' randomness and of the leaf salts (zero knowledge: a
/// redelivered commit task writes the same `D_i`). **No key depends on it**: every setup (the
/// Mirage keys, the aggregation SRS and keys, the wrap keys) draws from the operating system
/// (issue 32), so whoever reads the bucket, even the secret, cannot rebuild a trapdoor.
pub const SECRET: &str = "hekaton-secret.bin";

/// Where a job's setup records the digests of the keys it chose (`{vk, agg, wrap}`, JSON): a
/// redelivered setup reuses them (its keys come from the OS, so making them again would give
/// other keys), and the aggregator checks its payload against them.
fn keys_record(job: &str) -> String {
    format!("{}keys.json", layout::hekaton_prefix(job))
}

/// What a Hekaton job proves: the circuit `circuit` with inputs from `seed`, on BLS12-381.
/// Decoding checks the spec's bounds (a stored spec is input too).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "RawSpec")]
pub struct HekatonJobSpec {
    pub circuit: CircuitSpec,
    pub seed: u64,
    /// Also publish the depth-1 wrap (`final.bin`, `final-key.bin`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub final_proof: bool,
    /// Fair share (`--job-window`): commit and prove tasks of this job queued or running at
    /// once, at most (less when its tenant's window is shared; see [`super::Window`]). Recorded
    /// with the job; `None` (specs recorded before windows): each step's k tasks at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window: Option<u64>,
}

#[derive(serde::Deserialize)]
struct RawSpec {
    circuit: CircuitSpec,
    seed: u64,
    #[serde(default)]
    final_proof: bool,
    #[serde(default)]
    window: Option<u64>,
}

impl TryFrom<RawSpec> for HekatonJobSpec {
    type Error = PlatformError;
    fn try_from(r: RawSpec) -> Result<Self, PlatformError> {
        if r.window == Some(0) {
            return Err(invalid("window", "must be at least 1"));
        }
        Ok(Self { window: r.window, ..HekatonJobSpec::new(r.circuit, r.seed)?.with_final_proof(r.final_proof)? })
    }
}

impl HekatonJobSpec {
    pub fn new(circuit: CircuitSpec, seed: u64) -> Result<Self, PlatformError> {
        circuit.check().map_err(|e| invalid("circuit", e.to_string()))?;
        Ok(Self { circuit, seed, final_proof: false, window: None })
    }

    /// The same spec with commit and prove tasks released `window` at a time (at least 1).
    pub fn with_window(mut self, window: u64) -> Self {
        self.window = Some(window.max(1));
        self
    }

    /// Step `step`'s k tasks, released by the job's share (see [`super::Window`]).
    fn window<'a>(&self, step: &'a str) -> super::Window<'a> {
        super::Window { step, n: self.k(), cap: self.window }
    }

    /// Asks for the final proof; refused (naming the field) for circuits whose wrap does not fit
    /// BW6-767's largest domain ([`hekaton_wrap::check_fits`]: no circuit the platform accepts).
    pub fn with_final_proof(mut self, final_proof: bool) -> Result<Self, PlatformError> {
        if final_proof {
            hekaton_wrap::check_fits(self.circuit.num_subcircuits(), self.circuit.num_public_inputs())?;
        }
        self.final_proof = final_proof;
        Ok(self)
    }

    pub(crate) fn of(rec: &JobRecord) -> Result<Self, PlatformError> {
        serde_json::from_str(&rec.spec).map_err(|e| corrupt(format!("job {} spec: {e}", rec.id)))
    }

    fn k(&self) -> u64 {
        self.circuit.num_subcircuits() as u64
    }
}

/// A task's step, index and (from the setup's report on) the digest of the job's key and, for
/// a job that aggregates, of its aggregate verifying key, for a `--final` job of its final key.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct HekatonTask {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) step: String,
    #[serde(default)]
    pub(crate) index: u64,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) vk: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) agg: String,
    /// The final key's digest ([`hekaton_wrap`]); empty: the job asked for no final proof.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub(crate) wrap: String,
}

impl HekatonTask {
    /// The key digests alone (what [`keys_record`] holds).
    fn keys(&self) -> HekatonTask {
        HekatonTask { vk: self.vk.clone(), agg: self.agg.clone(), wrap: self.wrap.clone(), ..HekatonTask::default() }
    }

    pub(crate) fn digest(&self) -> Result<VkDigest, PlatformError> {
        self.vk.parse().map_err(|e| corrupt(format!("task payload: vk: {e}")))
    }

    /// The aggregate verifying key's digest; `None`: the job publishes the `k` proofs.
    fn agg_digest(&self) -> Result<Option<VkDigest>, PlatformError> {
        if self.agg.is_empty() {
            return Ok(None);
        }
        self.agg.parse().map(Some).map_err(|e| corrupt(format!("task payload: agg: {e}")))
    }
}

pub(crate) fn task_of(lease: &Lease) -> Result<HekatonTask, PlatformError> {
    serde_json::from_str(&lease.task.payload).map_err(|e| corrupt(format!("task payload: {e}")))
}

/// Dispatches task `<step>-<index>`, carrying the keys `keys` names.
async fn dispatch(p: &Platform, job: &str, kind: TaskKind, step: &str, index: u64, keys: &HekatonTask) -> Result<bool, PlatformError> {
    let t = HekatonTask { step: step.into(), index, ..keys.keys() };
    let payload = serde_json::to_string(&t).map_err(corrupt)?;
    p.dispatch(job, kind, &format!("{step}-{index}"), payload).await
}

fn hek(e: hekaton::Error) -> PlatformError {
    match e {
        hekaton::Error::Interrupted => PlatformError::Abandoned,
        e => corrupt(format!("hekaton: {e}")),
    }
}

/// A seed for `purpose` (and index) from the job's secret: BLAKE2b-256 with a domain tag.
fn derive_seed(secret: &[u8], purpose: &str, index: u64) -> Result<[u8; 32], PlatformError> {
    use blake2::digest::{Update, VariableOutput};
    if secret.len() != 32 {
        return Err(corrupt(format!("{SECRET}: {} bytes, expected 32", secret.len())));
    }
    let mut h = blake2::Blake2bVar::new(32).map_err(corrupt)?;
    h.update(b"prover/hekaton/v1/");
    h.update(purpose.as_bytes());
    h.update(&index.to_le_bytes());
    h.update(secret);
    let mut seed = [0u8; 32];
    h.finalize_variable(&mut seed).map_err(corrupt)?;
    Ok(seed)
}

/// Runs CPU-heavy work off the async runtime, timed as `prover_hekaton_cpu_seconds{step}`
/// (what the proof system itself costs; the rest of a task's time is the platform's). Work
/// whose task was abandoned before it got a thread does not start; [`blocking_with`] hands
/// the closure its task's flag, for work that can stop part-way.
pub(crate) async fn blocking<T: Send + 'static>(
    step: &'static str,
    f: impl FnOnce() -> Result<T, hekaton::Error> + Send + 'static,
) -> Result<T, PlatformError> {
    blocking_with(step, move |_| f()).await
}

/// [`blocking`], the closure reading its task's [`crate::work::Cancel`] flag itself.
pub(crate) async fn blocking_with<T: Send + 'static>(
    step: &'static str,
    f: impl FnOnce(&crate::work::Cancel) -> Result<T, hekaton::Error> + Send + 'static,
) -> Result<T, PlatformError> {
    let started = std::time::Instant::now();
    let r = crate::work::blocking(move |cancel| if cancel.is_set() { Err(hekaton::Error::Interrupted) } else { f(cancel) }).await?.map_err(hek);
    ::metrics::histogram!("prover_hekaton_cpu_seconds", "step" => step).record(started.elapsed().as_secs_f64());
    r
}

/// Fetches and decodes an object; decoding checks every curve point, so it runs off the
/// async runtime (a 2^17-constraint proving key takes seconds).
pub(crate) async fn get<T>(p: &Platform, key: &str) -> Result<T, PlatformError>
where
    T: ark_serialize::CanonicalDeserialize + hekaton::Check + Send + 'static,
{
    decode(key, p.blobs().get(key).await?).await
}

/// Decodes the bytes of object `key` (see [`get`]).
async fn decode<T>(key: &str, bytes: Bytes) -> Result<T, PlatformError>
where
    T: ark_serialize::CanonicalDeserialize + hekaton::Check + Send + 'static,
{
    let name = key.to_string();
    blocking("decode", move || {
        mirage::from_bytes(&bytes).map_err(|e| hekaton::Error::Malformed { what: "stored object", reason: format!("{name}: {e}") })
    })
    .await
}

async fn put<T: ark_serialize::CanonicalSerialize>(p: &Platform, key: &str, value: &T) -> Result<(), PlatformError> {
    Ok(p.blobs().put(key, Bytes::from(mirage::to_bytes(value).map_err(hek)?)).await?)
}

/// Estimated heap of a key decoded from `stored` compressed bytes: affine points take about
/// twice their compressed size once decoded.
fn decoded_bytes(stored: usize) -> u64 {
    2 * stored as u64
}

/// The stored key object `key`, from the process's cache or read, decoded and accepted by
/// `check` (which ties it to a pinned digest) before it is cached.
async fn cached_key<T>(p: &Platform, key: &str, check: impl FnOnce(&T) -> Result<(), PlatformError>) -> Result<Arc<T>, PlatformError>
where
    T: ark_serialize::CanonicalDeserialize + hekaton::Check + Send + Sync + 'static,
{
    let name = format!("hekaton/{key}");
    if let Some(k) = p.cache().get::<T>(&name) {
        return Ok(k);
    }
    let bytes = p.blobs().get(key).await?;
    let size = decoded_bytes(bytes.len());
    let k: T = decode(key, bytes).await?;
    check(&k)?;
    let k = Arc::new(k);
    p.cache().put(&name, k.clone(), size);
    Ok(k)
}

/// The verifying key with digest `vk` for `spec`, checked against that digest.
pub(crate) async fn verifying_key(p: &Platform, spec: &HekatonJobSpec, vk: &VkDigest) -> Result<Arc<VerifyingKey<Bls12_381>>, PlatformError> {
    let key = layout::hekaton_key(&spec.circuit.digest(), &vk.to_string(), "vk.bin");
    cached_key(p, &key, |v: &VerifyingKey<Bls12_381>| v.check_digest(vk).map_err(hek)).await
}

/// Subcircuit `i`'s shape's Mirage proving key, checked to be the one `vk` names for it.
async fn shape_key(
    p: &Platform,
    spec: &HekatonJobSpec,
    digest: &VkDigest,
    vk: &VerifyingKey<Bls12_381>,
    i: u64,
) -> Result<Arc<mirage::ProvingKey<Bls12_381>>, PlatformError> {
    let shape = *vk.shape_of.get(i as usize).ok_or_else(|| corrupt(format!("subcircuit {i} out of range")))?;
    let key = layout::hekaton_key(&spec.circuit.digest(), &digest.to_string(), &format!("pk-{shape}.bin"));
    cached_key(p, &key, |k: &mirage::ProvingKey<Bls12_381>| {
        if vk.vks.get(shape as usize) == Some(&k.vk) {
            Ok(())
        } else {
            Err(corrupt(format!("{key}: not the shape key the verifying key {digest} names")))
        }
    })
    .await
}

/// Object `name` of the aggregation keys with digest `agg` of the Hekaton key `vk`.
fn agg_file(spec: &HekatonJobSpec, vk: &VkDigest, agg: &str, name: &str) -> String {
    layout::hekaton_key(&spec.circuit.digest(), &vk.to_string(), &format!("agg/{agg}/{name}"))
}

/// The aggregation keys of the Hekaton key `digest` (paper §5, Agg.G): made once per Hekaton
/// key, by the first aggregating job of its structure, from the operating system's randomness
/// (nothing stored can rebuild them), stored content addressed under the
/// Hekaton key's directory (`agg/<aggregate vk digest>/`, `vk.bin` after `pk.bin`, so its
/// presence means both are there) with an `agg-current` pointer that later jobs reuse. The SRS
/// is sized to the key's `k` (rounded up to a power of two); whoever knows its secrets `a, b`
/// can break the binding of the commitments, so they are part of the trusted setup. Returns the
/// aggregate verifying key's digest.
async fn agg_setup(
    p: &Platform,
    job: &str,
    spec: &HekatonJobSpec,
    digest: &VkDigest,
    vk: &Arc<VerifyingKey<Bls12_381>>,
) -> Result<String, PlatformError> {
    let current = layout::hekaton_key(&spec.circuit.digest(), &digest.to_string(), "agg-current");
    match p.blobs().get(&current).await {
        Ok(b) => {
            let ad = String::from_utf8_lossy(&b).trim().to_string();
            if ad.parse::<VkDigest>().is_ok() && p.blobs().exists(&agg_file(spec, digest, &ad, "vk.bin")).await? {
                tracing::info!(job, vk = %digest, agg = %ad, "reusing the aggregation keys of this Hekaton key");
                return Ok(ad);
            }
        }
        Err(blobstore::BlobError::NotFound(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let vk = vk.clone();
    let (pk_bytes, vk_bytes, ad) = blocking("aggregate setup", move || {
        let srs = Srs::<Bls12_381>::setup(vk.num_subcircuits(), &mut rand::rngs::OsRng);
        let (apk, avk) = aggregated::setup(&vk, &srs)?;
        Ok((mirage::to_bytes(&apk)?, mirage::to_bytes(&avk)?, VkDigest(avk.digest()?).to_string()))
    })
    .await?;
    p.blobs().put(&agg_file(spec, digest, &ad, "pk.bin"), Bytes::from(pk_bytes)).await?;
    p.blobs().put(&agg_file(spec, digest, &ad, "vk.bin"), Bytes::from(vk_bytes)).await?;
    p.blobs().put(&current, Bytes::from(ad.clone())).await?;
    tracing::info!(job, vk = %digest, agg = %ad, "made the aggregation keys of this Hekaton key");
    Ok(ad)
}

/// The aggregate proving key with verifying key digest `agg` (of the Hekaton key `digest`),
/// checked against that digest and kept in the cache.
async fn agg_proving_key(p: &Platform, spec: &HekatonJobSpec, digest: &VkDigest, agg: &VkDigest) -> Result<Arc<AggProvingKey<Bls12_381>>, PlatformError> {
    let key = agg_file(spec, digest, &agg.to_string(), "pk.bin");
    cached_key(p, &key, |k: &AggProvingKey<Bls12_381>| k.vk.check_digest(agg).map_err(|e| corrupt(format!("{key}: {e}")))).await
}

/// The job's spec, or `None` if it has ended (its tasks are dropped).
pub(crate) async fn live_spec(p: &Platform, job: &str) -> Result<Option<HekatonJobSpec>, PlatformError> {
    match p.job_store().get(job).await? {
        Some(r) if !r.state.is_terminal() => Ok(Some(HekatonJobSpec::of(&r)?)),
        _ => Ok(None),
    }
}

/// `hekaton.prove`.
pub struct Hekaton;

impl Hekaton {
    /// Step 1: the keys the job uses (see [`Self::keys`]), then the traces, cut into one share
    /// per subcircuit. Returns the digests of the keys, to travel in every later payload.
    async fn setup(&self, p: &Platform, job: &str, spec: &HekatonJobSpec) -> Result<HekatonTask, PlatformError> {
        let keys = self.keys(p, job, spec).await?;
        let vk = verifying_key(p, spec, &keys.digest()?).await?;
        let (circuit, seed) = (spec.circuit, spec.seed);
        // The leaf salts, from the job's secret: a redelivered setup writes the same shares.
        let salt_seed = derive_seed(&p.blobs().get(&layout::input(job, SECRET)).await?, "salt", 0)?;
        let shares = blocking("traces", move || {
            let c = circuit.build::<Fr>(seed)?;
            workflow::check_circuit(&vk, &c)?;
            Ok(workflow::coordinator_traces(&vk.layout, &c, &mut rand_chacha::ChaCha20Rng::from_seed(salt_seed))?.1)
        })
        .await?;
        for s in &shares {
            put(p, &layout::hekaton_file(job, "share", s.index), s).await?;
        }
        Ok(keys)
    }

    /// The keys of the job: those its setup recorded ([`keys_record`]) if a run of it got that
    /// far, else chosen now and recorded: the keys of the spec's structure (reused through the
    /// `current` pointer, or made), unless the job is wrapped the aggregation keys of that key,
    /// and for a `--final` job the wrap keys of that key ([`hekaton_wrap::wrap_setup`]). Every
    /// key made here is made from the operating system's randomness (`OsRng`), never from
    /// anything stored: a redelivered setup that got no further than making keys makes other
    /// ones (content addressed, so harmless), and the record makes the rest of the job use one.
    async fn keys(&self, p: &Platform, job: &str, spec: &HekatonJobSpec) -> Result<HekatonTask, PlatformError> {
        let sd = spec.circuit.digest();
        match p.blobs().get(&keys_record(job)).await {
            Ok(b) => {
                let keys: HekatonTask = serde_json::from_slice(&b).map_err(|e| corrupt(format!("{}: {e}", keys_record(job))))?;
                tracing::info!(job, vk = %keys.vk, "reusing the keys this job's setup recorded");
                return Ok(keys);
            }
            Err(blobstore::BlobError::NotFound(_)) => {}
            Err(e) => return Err(e.into()),
        }
        let current = layout::hekaton_current_key(&sd);
        let reusable = match p.blobs().get(&current).await {
            Ok(d) => {
                let d = String::from_utf8_lossy(&d).trim().to_string();
                let ok = d.parse::<VkDigest>().is_ok() && p.blobs().exists(&layout::hekaton_key(&sd, &d, "vk.bin")).await?;
                ok.then_some(d)
            }
            Err(blobstore::BlobError::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        let digest = match reusable {
            Some(d) => {
                tracing::info!(job, spec = %sd, vk = %d, "reusing the keys of this circuit structure");
                d
            }
            None => {
                let circuit = spec.circuit;
                let (pk, vk) = blocking("setup", move || {
                    let c = circuit.build::<Fr>(0)?;
                    workflow::setup::<Bls12_381, _, _>(&c, &mut rand::rngs::OsRng)
                })
                .await?;
                let d = vk.digest().map_err(hek)?.to_string();
                // Content addressed: a concurrent setup of another job writes another directory.
                // vk.bin last: its presence means every shape key is there.
                for (j, shape_pk) in pk.pks.iter().enumerate() {
                    put(p, &layout::hekaton_key(&sd, &d, &format!("pk-{j}.bin")), shape_pk).await?;
                }
                put(p, &layout::hekaton_key(&sd, &d, "vk.bin"), &vk).await?;
                p.blobs().put(&current, Bytes::from(d.clone())).await?;
                tracing::info!(job, spec = %sd, vk = %d, "made the keys of this circuit structure");
                d
            }
        };
        let vk_digest: VkDigest = digest.parse().map_err(hek)?;
        let vk = verifying_key(p, spec, &vk_digest).await?;
        // A wrapped job publishes the k proofs (the wrap circuit verifies that form).
        let agg = if spec.final_proof { String::new() } else { agg_setup(p, job, spec, &vk_digest, &vk).await? };
        let wrap = if spec.final_proof { hekaton_wrap::wrap_setup(p, job, spec, &vk_digest, &vk).await? } else { String::new() };
        let keys = HekatonTask { vk: digest, agg, wrap, ..HekatonTask::default() };
        p.blobs().put(&keys_record(job), Bytes::from(serde_json::to_vec(&keys).map_err(corrupt)?)).await?;
        Ok(keys)
    }

    /// The commitment of subcircuit `i` and its randomness, from the job's secret.
    async fn commitment(
        p: &Platform,
        job: &str,
        key: &Arc<mirage::ProvingKey<Bls12_381>>,
        share: &WitnessShare<Fr>,
    ) -> Result<(Commitment<Bls12_381>, mirage::CommitmentRandomness<Bls12_381>), PlatformError> {
        let seed = derive_seed(&p.blobs().get(&layout::input(job, SECRET)).await?, "commit", share.index)?;
        let (key, share) = (key.clone(), share.clone());
        blocking("commit", move || workflow::worker_commit(&key, &share, &mut rand_chacha::ChaCha20Rng::from_seed(seed))).await
    }
}

#[async_trait]
impl JobKind for Hekaton {
    fn name(&self) -> &'static str {
        JOB
    }
    fn limits(&self) -> Vec<crate::limits::Limit> {
        let k = hekaton::spec::MAX_SUBCIRCUITS as u64;
        vec![crate::limits::Limit::new(JOB, "circuit", k, "count", "subcircuits (for chains: updates × parts); with final_proof too")]
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        TASKS
    }

    async fn validate(&self, p: &Platform, _tenant: &str, request: JobRequest) -> Result<Validated, PlatformError> {
        let JobRequest::Hekaton { circuit, seed, final_proof } = request else {
            return Err(PlatformError::Config("hekaton.prove: not a Hekaton request".into()));
        };
        let spec = HekatonJobSpec::new(circuit, seed)?.with_final_proof(final_proof)?.with_window(p.config().job_window);
        let k = spec.k();
        let mut tasks = BTreeMap::from([(SETUP.name, 1), (COMMIT.name, k), (CHALLENGE.name, 1), (PROVE.name, k), (ASSEMBLE.name, 1)]);
        if spec.final_proof {
            tasks.insert(WRAP.name, 1);
        }
        Ok(Validated {
            spec: serde_json::to_string(&spec).map_err(corrupt)?,
            inputs: Vec::new(),
            tasks,
            secrets: vec![(SECRET.to_string(), Bytes::from(rand::random::<[u8; 32]>().to_vec()))],
            copies: Vec::new(),
        })
    }

    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        dispatch(p, &job.id, SETUP, "setup", 0, &HekatonTask::default()).await.map(|_| ())
    }

    async fn work(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        if task == WRAP {
            return hekaton_wrap::wrap(p, lease).await;
        }
        let job = &lease.task.job_id;
        let Some(spec) = live_spec(p, job).await? else { return Ok(()) };
        let mut t = task_of(lease)?;
        if task != SETUP && task != CHALLENGE && t.index >= spec.k() {
            return Err(corrupt(format!("{} task {} out of range", task.name, t.index)));
        }
        if task == SETUP {
            let keys = self.setup(p, job, &spec).await?;
            (t.vk, t.agg, t.wrap) = (keys.vk, keys.agg, keys.wrap);
        } else if task == COMMIT {
            let digest = t.digest()?;
            let vk = verifying_key(p, &spec, &digest).await?;
            let key = shape_key(p, &spec, &digest, &vk, t.index).await?;
            let share: WitnessShare<Fr> = get(p, &layout::hekaton_file(job, "share", t.index)).await?;
            if share.index != t.index {
                return Err(corrupt(format!("share-{}.bin holds subcircuit {}'s share", t.index, share.index)));
            }
            let (d, _) = Self::commitment(p, job, &key, &share).await?;
            put(p, &layout::hekaton_file(job, "commit", t.index), &d).await?;
        } else if task == CHALLENGE {
            let digest = t.digest()?;
            let vk = verifying_key(p, &spec, &digest).await?;
            let apk = match t.agg_digest()? {
                Some(agg) => Some(agg_proving_key(p, &spec, &digest, &agg).await?),
                None => None,
            };
            let (mut shares, mut commitments) = (Vec::new(), Vec::new());
            for i in 0..spec.k() {
                shares.push(get::<WitnessShare<Fr>>(p, &layout::hekaton_file(job, "share", i)).await?);
                commitments.push(get::<Commitment<Bls12_381>>(p, &layout::hekaton_file(job, "commit", i)).await?);
            }
            let (circuit, seed) = (spec.circuit, spec.seed);
            let round = blocking("challenge", move || {
                let x = circuit.build::<Fr>(seed)?.public_inputs;
                match apk {
                    // (α, β) from cm_D = CM1(D), which the aggregate proof carries.
                    Some(apk) => {
                        let cm_d = aggregated::coordinator_commit(&apk, &commitments)?;
                        aggregated::coordinator_challenge(&vk, &apk.vk, &x, &shares, &cm_d)
                    }
                    None => workflow::coordinator_challenge(&vk, &x, &shares, &commitments),
                }
            })
            .await?;
            for (i, m) in round.messages.iter().enumerate() {
                put(p, &layout::hekaton_file(job, "message", i as u64), m).await?;
            }
            put(p, &layout::hekaton_round(job), &round).await?;
        } else if task == PROVE {
            let digest = t.digest()?;
            let vk = verifying_key(p, &spec, &digest).await?;
            let key = shape_key(p, &spec, &digest, &vk, t.index).await?;
            let share: WitnessShare<Fr> = get(p, &layout::hekaton_file(job, "share", t.index)).await?;
            if share.index != t.index {
                return Err(corrupt(format!("share-{}.bin holds subcircuit {}'s share", t.index, share.index)));
            }
            let message: ProveMessage<Fr> = get(p, &layout::hekaton_file(job, "message", t.index)).await?;
            let (d, r) = Self::commitment(p, job, &key, &share).await?;
            let stored: Commitment<Bls12_381> = get(p, &layout::hekaton_file(job, "commit", t.index)).await?;
            if stored != d {
                return Err(corrupt(format!("subcircuit {}: the stored commitment is not the one the job's secret gives", t.index)));
            }
            let (circuit, seed, i) = (spec.circuit, spec.seed, t.index as usize);
            // Randomness from the job's secret: a rerun of this task writes the same proof.
            let rseed = derive_seed(&p.blobs().get(&layout::input(job, SECRET)).await?, "prove", t.index)?;
            let proof = blocking("prove", move || {
                let c = circuit.build::<Fr>(seed)?;
                let sub = c.subcircuits.get(i).ok_or(hekaton::Error::ShapeMismatch { what: "subcircuit index", expected: c.subcircuits.len(), got: i })?;
                workflow::worker_prove_with_key(&vk, &key, sub, &c.public_inputs, &share, &d, &r, &message, &mut rand_chacha::ChaCha20Rng::from_seed(rseed))
            })
            .await?;
            ::metrics::counter!("prover_proofs_total", "kind" => "hekaton.subcircuit").increment(1);
            put(p, &layout::hekaton_file(job, "proof", t.index), &proof).await?;
        } else {
            return Err(PlatformError::Config(format!("hekaton: {} is not a worker task", task.name)));
        }
        let payload = serde_json::to_string(&t).map_err(corrupt)?;
        p.report_with(lease, DONE, payload).await
    }

    async fn on_done(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        if !p.live(job).await? {
            return Ok(());
        }
        let t = task_of(lease)?;
        let spec = HekatonJobSpec::of(&p.record(job).await?)?;
        let store = p.job_store();
        // Marks this step's task done; the job's record after that, and whether every task of
        // `kind` is done.
        let mark_done = |kind: TaskKind| async move {
            store.task_done(job, kind.name, &lease.task.task_id).await?;
            let rec = p.record(job).await?;
            let c = rec.tasks.get(kind.name).copied().unwrap_or_default();
            Ok::<_, PlatformError>((rec, c.done == c.total))
        };
        // Releases what the job's share of step `kind` allows.
        let release = |kind: TaskKind, step: &'static str, rec: jobs::JobRecord| {
            let (spec, keys) = (&spec, &t);
            async move {
                let done = rec.tasks.get(kind.name).map_or(0, |c| c.done);
                spec.window(step).slide(p, &rec, done, |i| async move { dispatch(p, job, kind, step, i, keys).await.map(|_| ()) }).await
            }
        };
        match t.step.as_str() {
            "setup" => {
                t.digest()?;
                let (rec, _) = mark_done(SETUP).await?;
                release(COMMIT, "commit", rec).await?;
            }
            "commit" => {
                let (rec, all) = mark_done(COMMIT).await?;
                release(COMMIT, "commit", rec).await?;
                if all {
                    dispatch(p, job, CHALLENGE, "challenge", 0, &t).await?;
                }
            }
            "challenge" => {
                let (rec, _) = mark_done(CHALLENGE).await?;
                release(PROVE, "prove", rec).await?;
            }
            "prove" => {
                let (rec, all) = mark_done(PROVE).await?;
                release(PROVE, "prove", rec).await?;
                if all && spec.final_proof {
                    dispatch(p, job, WRAP, "wrap", 0, &t).await?;
                } else if all {
                    dispatch(p, job, ASSEMBLE, "assemble", 0, &t).await?;
                }
            }
            "wrap" => {
                mark_done(WRAP).await?;
                dispatch(p, job, ASSEMBLE, "assemble", 0, &t).await?;
            }
            "assemble" => {
                mark_done(ASSEMBLE).await?;
                let (dir, field) = (crate::manifest::DIR, |name| crate::manifest::published_field(p, job, "circuit.json", name));
                let mut pins = std::collections::BTreeMap::new();
                let mut verify = Vec::new();
                if let Some(d) = field("vk_digest").await? {
                    match field("agg_vk_digest").await? {
                        Some(a) => {
                            verify.push(format!("prover hekaton verify {dir} --vk-digest {d} --agg-vk-digest {a}"));
                            pins.insert("agg_vk_digest".to_string(), a);
                        }
                        None => verify.push(format!("prover hekaton verify {dir} --vk-digest {d}")),
                    }
                    pins.insert("vk_digest".to_string(), d);
                }
                if let Some(f) = field("final_key_digest").await? {
                    verify.push(format!("prover hekaton verify-final {dir} --key-digest {f}"));
                    pins.insert("final_key_digest".to_string(), f);
                }
                crate::manifest::Manifest::publish(p, job, JOB, pins, verify).await?;
                p.end(job, crate::Ending::Done).await?;
            }
            other => return Err(corrupt(format!("unknown hekaton step {other:?}"))),
        }
        Ok(())
    }

    /// Aggregator: aggregates the `k` proofs into one (a wrapped job: gathers them, and checks
    /// the final proof the wrap task made), verifies the result under the job's keys, and only
    /// then publishes it.
    async fn finish(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(spec) = live_spec(p, job).await? else { return Ok(()) };
        let t = task_of(lease)?;
        // The keys the payload names are the ones the job's setup recorded (a report that
        // changed them fails the job rather than publishing under other keys).
        let recorded: HekatonTask = serde_json::from_slice(&p.blobs().get(&keys_record(job)).await?).map_err(|e| corrupt(format!("{}: {e}", keys_record(job))))?;
        if recorded != t.keys() {
            return p.fail_job(job, &format!("the assemble task names other keys ({:?}) than the job's setup recorded ({recorded:?})", t.keys())).await;
        }
        let digest = t.digest()?;
        let vk_key = layout::hekaton_key(&spec.circuit.digest(), &digest.to_string(), "vk.bin");
        let vk_bytes = p.blobs().get(&vk_key).await?;
        let vk: Arc<VerifyingKey<Bls12_381>> = Arc::new(decode(&vk_key, vk_bytes.clone()).await?);
        vk.check_digest(&digest).map_err(hek)?;
        let (round, commitments, proofs) = hekaton_wrap::subproofs(p, job, spec.k()).await?;
        let (circuit, seed) = (spec.circuit, spec.seed);
        let out = |name: &str| layout::proof_file(job, name);
        // The directory `prover hekaton verify DIR --vk-digest HEX [--agg-vk-digest HEX]` reads
        // (and, wrapped, `prover hekaton verify-final DIR --key-digest HEX`).
        let mut circuit_json = serde_json::json!({
            "curve": "bls12-381",
            "circuit": spec.circuit,
            "seed": spec.seed,
            "vk_digest": digest.to_string(),
        });
        let x = if let Some(agg) = t.agg_digest()? {
            // Agg.P: cm_D (as the challenge step computed it), then the aggregate proof.
            let apk = agg_proving_key(p, &spec, &digest, &agg).await?;
            let key = apk.clone();
            let proof = blocking("aggregate", move || {
                let cm_d = aggregated::coordinator_commit(&key, &commitments)?;
                aggregated::coordinator_assemble(&key, &round, &cm_d, &commitments, &proofs)
            })
            .await?;
            let (key, checked) = (vk.clone(), proof.clone());
            let (x, verdict) = blocking("verify", move || {
                let x = circuit.build::<Fr>(seed)?.public_inputs;
                let verdict = aggregated::verify(&key, &apk.vk, &x, &checked);
                Ok((x, verdict.map(|_| apk)))
            })
            .await?;
            let apk = match verdict {
                Ok(apk) => apk,
                Err(e) => return p.fail_job(job, &format!("the aggregated Hekaton proof does not verify: {e}")).await,
            };
            circuit_json["proof"] = "aggregated".into();
            circuit_json["agg_vk_digest"] = agg.to_string().into();
            put(p, &out("agg-vk.bin"), &apk.vk).await?;
            put(p, &out("proof.bin"), &proof).await?;
            ::metrics::counter!("prover_proofs_total", "kind" => "hekaton.aggregate").increment(1);
            tracing::info!(job, k = spec.k(), bytes = proof.size(), "aggregated the subcircuit proofs");
            x
        } else {
            let key = vk.clone();
            let checked = blocking("verify", move || {
                let proof = workflow::coordinator_assemble(&round, commitments, proofs)?;
                let x = circuit.build::<Fr>(seed)?.public_inputs;
                let verdict = workflow::verify(&key, &x, &proof, &mut rand_chacha::ChaCha20Rng::from_entropy());
                Ok((proof, x, verdict))
            })
            .await?;
            let (proof, x, verdict) = checked;
            if let Err(e) = verdict {
                return p.fail_job(job, &format!("the assembled Hekaton proof does not verify: {e}")).await;
            }
            circuit_json["proof"] = "subcircuit-proofs".into();
            // The final proof (if asked for) first, so that circuit.json can name the final key:
            // the one the wrap task made, checked here before anything is published.
            if spec.final_proof {
                match hekaton_wrap::check_final(p, job, &spec, &digest, &t.wrap, x.clone()).await? {
                    Ok((fin, key)) => {
                        circuit_json["final_key_digest"] = serde_json::Value::String(t.wrap.clone());
                        p.blobs().put(&out(hekaton_wrap::FINAL_KEY_FILE), key).await?;
                        p.blobs().put(&out(hekaton_wrap::FINAL_FILE), fin).await?;
                    }
                    Err(reason) => return p.fail_job(job, &format!("the final proof does not verify: {reason}")).await,
                }
            }
            put(p, &out("proof.bin"), &proof).await?;
            x
        };
        let public: Vec<String> = x.iter().map(|v| v.to_string()).collect();
        p.blobs().put(&out("vk.bin"), vk_bytes).await?;
        p.blobs().put(&out("public.json"), Bytes::from(serde_json::to_vec_pretty(&public).map_err(corrupt)?)).await?;
        p.blobs().put(&out("circuit.json"), Bytes::from(serde_json::to_vec_pretty(&circuit_json).map_err(corrupt)?)).await?;
        p.report(lease, DONE).await
    }

    /// The published `proof.bin` against the job's own statement (its circuit and seed give the
    /// public inputs) under the published `vk.bin`, which must have the pinned digest. An
    /// aggregated proof is checked under the published `agg-vk.bin`, which must name that key
    /// and be the aggregation key this platform made for it (the one its stored keys hold: the
    /// API has no second pin).
    async fn verify_outputs(&self, p: &Platform, job: &JobRecord, pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        let pinned = pins.vk_digest.map(|hex| hex.parse::<VkDigest>().map_err(|e| invalid("expected_vk_digest", e.to_string()))).transpose()?;
        let spec = HekatonJobSpec::of(job)?;
        let vk_bytes = p.blobs().get(&layout::proof_file(&job.id, "vk.bin")).await?;
        let proof_bytes = p.blobs().get(&layout::proof_file(&job.id, "proof.bin")).await?;
        let agg_bytes = match p.blobs().get(&layout::proof_file(&job.id, "agg-vk.bin")).await {
            Ok(b) => Some(b),
            Err(blobstore::BlobError::NotFound(_)) => None,
            Err(e) => return Err(e.into()),
        };
        // The aggregate key as this platform stored it, under the digests the published keys have.
        let stored_agg = match &agg_bytes {
            Some(b) => {
                let digests = (|| {
                    let vk: VerifyingKey<Bls12_381> = mirage::from_bytes(&vk_bytes).map_err(|e| format!("vk.bin: {e}"))?;
                    let avk: AggVerifyingKey<Bls12_381> = mirage::from_bytes(b).map_err(|e| format!("agg-vk.bin: {e}"))?;
                    let vd = vk.digest().map_err(|e| format!("vk.bin: {e}"))?;
                    Ok::<_, String>((vd, VkDigest(avk.digest().map_err(|e| format!("agg-vk.bin: {e}"))?)))
                })();
                let (vd, ad) = match digests {
                    Ok(ds) => ds,
                    Err(e) => return Ok(Err(e)),
                };
                match p.blobs().get(&agg_file(&spec, &vd, &ad.to_string(), "vk.bin")).await {
                    Ok(stored) => Some((ad, stored)),
                    Err(blobstore::BlobError::NotFound(_)) => {
                        return Ok(Err(format!("agg-vk.bin (digest {ad}) is not an aggregation key this platform made for verifying key {vd}")))
                    }
                    Err(e) => return Err(e.into()),
                }
            }
            None => None,
        };
        let (vk_bytes2, spec2) = (vk_bytes.clone(), spec.clone());
        let checked = blocking("verify", move || {
            let checked = (|| {
                let vk: VerifyingKey<Bls12_381> = mirage::from_bytes(&vk_bytes).map_err(|e| format!("vk.bin: {e}"))?;
                let mut against = match &pinned {
                    Some(d) => {
                        vk.check_digest(d).map_err(|e| format!("vk.bin: {e}"))?;
                        format!("vk digest {d} (expected_vk_digest)")
                    }
                    None => format!("the published vk.bin, vk digest {} (not pinned: pass expected_vk_digest)", vk.digest().map_err(|e| format!("vk.bin: {e}"))?),
                };
                let x = spec.circuit.build::<Fr>(spec.seed).map_err(|e| format!("the job's circuit: {e}"))?.public_inputs;
                match (&agg_bytes, &stored_agg) {
                    (Some(published), Some((ad, stored))) => {
                        if published != stored {
                            return Err(format!("agg-vk.bin is not the aggregation key {ad} this platform stored"));
                        }
                        let avk: AggVerifyingKey<Bls12_381> = mirage::from_bytes(published).map_err(|e| format!("agg-vk.bin: {e}"))?;
                        let proof: AggregatedProof<Bls12_381> = mirage::from_bytes(&proof_bytes).map_err(|e| format!("proof.bin: {e}"))?;
                        aggregated::verify(&vk, &avk, &x, &proof).map_err(|e| format!("proof.bin: {e}"))?;
                        against.push_str(&format!(", aggregate vk digest {ad} (the platform's aggregation key of that key)"));
                    }
                    _ => {
                        let proof: hekaton::workflow::HekatonProof<Bls12_381> = mirage::from_bytes(&proof_bytes).map_err(|e| format!("proof.bin: {e}"))?;
                        workflow::verify(&vk, &x, &proof, &mut rand_chacha::ChaCha20Rng::from_entropy()).map_err(|e| format!("proof.bin: {e}"))?;
                    }
                }
                Ok::<_, String>(against)
            })();
            Ok(checked)
        })
        .await?;
        // A `--final` job's final proof too, under the wrap key this platform stored for the
        // published verifying key.
        let against = match checked {
            Ok(a) => a,
            Err(e) => return Ok(Err(e)),
        };
        if !spec2.final_proof {
            return Ok(Ok(against));
        }
        let vd = match mirage::from_bytes::<VerifyingKey<Bls12_381>>(&vk_bytes2).map_err(|e| e.to_string()).and_then(|vk| vk.digest().map_err(|e| e.to_string())) {
            Ok(d) => d,
            Err(e) => return Ok(Err(format!("vk.bin: {e}"))),
        };
        let x = spec2.circuit.build::<Fr>(spec2.seed).map_err(hek)?.public_inputs;
        Ok(hekaton_wrap::verify_published(p, &job.id, &spec2, &vd, x).await?.map(|f| format!("{against}, {f}")))
    }
    fn scratch_prefixes(&self, job: &str) -> Vec<String> {
        vec![layout::hekaton_prefix(job), layout::inputs_prefix(job)]
    }
    fn expected_secs(&self) -> u64 {
        7200
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_specs_are_checked_when_decoded() {
        let good = HekatonJobSpec::new(CircuitSpec::Synthetic { subcircuits: 2, steps: 4, wires: 1 }, 3).unwrap();
        let json = serde_json::to_string(&good).unwrap();
        assert_eq!(serde_json::from_str::<HekatonJobSpec>(&json).unwrap(), good);
        let bad = json.replace("\"subcircuits\":2", "\"subcircuits\":0");
        assert!(serde_json::from_str::<HekatonJobSpec>(&bad).unwrap_err().to_string().contains("subcircuits"));
    }

    #[test]
    fn windows_are_recorded_and_checked() {
        let spec = HekatonJobSpec::new(CircuitSpec::Synthetic { subcircuits: 8, steps: 4, wires: 1 }, 3).unwrap().with_window(3);
        assert_eq!((spec.window("commit").n, spec.window("commit").cap), (8, Some(3)));
        let json = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<HekatonJobSpec>(&json).unwrap(), spec);
        assert!(serde_json::from_str::<HekatonJobSpec>(&json.replace("\"window\":3", "\"window\":0")).is_err());
        // Specs recorded before windows: every task at once.
        let old = HekatonJobSpec::new(CircuitSpec::Synthetic { subcircuits: 8, steps: 4, wires: 1 }, 3).unwrap();
        assert_eq!(old.window("prove").cap, None);
    }

    #[test]
    fn seeds_depend_on_purpose_index_and_secret() {
        let s = derive_seed(&[1; 32], "commit", 0).unwrap();
        assert_eq!(s, derive_seed(&[1; 32], "commit", 0).unwrap());
        assert_ne!(s, derive_seed(&[1; 32], "commit", 1).unwrap());
        assert_ne!(s, derive_seed(&[1; 32], "setup", 0).unwrap());
        assert_ne!(s, derive_seed(&[2; 32], "commit", 0).unwrap());
        assert!(derive_seed(&[1; 31], "commit", 0).is_err());
    }
}

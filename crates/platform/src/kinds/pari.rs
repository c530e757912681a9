//! Pari batch jobs (`pari.batch`): many proofs of one circuit, emitted in bundles that each
//! verify with one batch verification.
//!
//! DAG: one `pari.setup` task (keys for the circuit) → `pari.prove` tasks (each proves a run of
//! instances and writes a proof list) → `pari.bundle` tasks on the aggregator (each gathers the
//! proof lists of its range, batch-verifies them under the job's verifying key, locating any bad
//! proof by bisection, and publishes `proof/bundle-<k>.bin`). Workers report `pari.done`; the
//! executor releases the prove tasks after the setup, a bundle once its prove tasks are done,
//! and marks the job done when every bundle is published.
//!
//! Objects: `jobs/<id>/pari/keys/<vk digest>/{pk.bin,vk.bin}`, `jobs/<id>/pari/proofs/<i>.bin`,
//! and the outputs `jobs/<id>/proof/{circuit.json,vk.bin,bundle-<k>.bin}` (`prover pari
//! verify-bundles DIR` checks them offline). A bundle that does not verify fails the job with
//! the bad seeds.
//!
//! **No trapdoor at rest.** The setup draws its randomness from the operating system and keeps
//! none of it: nothing stored anywhere rebuilds the keys. A redelivered setup therefore makes
//! *another* key pair, so keys are stored under their verifying key's digest, and which pair the
//! job uses is the one its setup *report* names: that report is enqueued by the same atomic step
//! that completes the task, once (a delivery that lost its lease cannot complete), and its key
//! digest then travels in every prove and bundle task's payload. A pair a lost delivery left
//! behind is never read and goes with the job's scratch. Proofs draw their randomness from the
//! operating system too, so no stored object reveals what a proof hides.

use std::collections::BTreeMap;
use std::sync::Arc;

use ark_bls12_381::{Bls12_381, Fr};
use async_trait::async_trait;
use bytes::Bytes;
use jobs::JobRecord;
use ::pari::bundle::{Bundle, ProofList};
use ::pari::circuits::CircuitFamily;
use ::pari::{PreparedVerifyingKey, ProvingKey, VerifyingKey};
use queue::Lease;
use rand::SeedableRng;

use super::{JobKind, JobRequest, Served, TaskKind, Validated};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const JOB: &str = "pari.batch";
pub const SETUP: TaskKind = TaskKind::new("pari.setup", Served::Worker, 3600);
pub const PROVE: TaskKind = TaskKind::new("pari.prove", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("pari.done", Served::Executor, 300);
pub const BUNDLE: TaskKind = TaskKind::new("pari.bundle", Served::Aggregator, 1800);
const TASKS: &[TaskKind] = &[PROVE, SETUP, DONE, BUNDLE];

/// Most proofs in one job.
pub const MAX_PROOFS: u64 = 1 << 16;
/// Largest chain circuit a job may ask for (setup and keys grow linearly).
pub const MAX_CHAIN_STEPS: usize = 1 << 20;
/// Proofs one prove task makes.
pub const MAX_PER_TASK: u64 = 1024;

/// What a Pari job proves: `count` instances of `circuit` from seeds `seed_start..`, on
/// BLS12-381. Decoding checks the same bounds as [`PariJobSpec::new`]: a spec read back from a
/// shared job store is input too (a zero `per_task` would otherwise divide by zero in the
/// executor; found by `crates/fuzz`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "RawPariJobSpec")]
pub struct PariJobSpec {
    pub circuit: CircuitFamily,
    pub seed_start: u64,
    pub count: u64,
    /// Proofs per prove task.
    pub per_task: u64,
    /// Prove tasks per bundle.
    pub tasks_per_bundle: u64,
    /// Prove tasks queued or running at once, at most (fair share: a large job holds at most
    /// this many places in the prove queue, so a small job submitted later is not starved;
    /// fewer when its tenant's window is shared, see [`super::Window`]). Recorded with the
    /// job, so every executor slides the same window.
    pub window: u64,
}

/// [`PariJobSpec`] as decoded, before its bounds are checked.
#[derive(serde::Deserialize)]
struct RawPariJobSpec {
    circuit: CircuitFamily,
    seed_start: u64,
    count: u64,
    per_task: u64,
    tasks_per_bundle: u64,
    /// Absent in specs recorded before the window: all tasks at once.
    #[serde(default = "unbounded")]
    window: u64,
}

fn unbounded() -> u64 {
    u64::MAX
}

/// Default of [`PariJobSpec::window`] (`--job-window`).
pub const DEFAULT_WINDOW: u64 = crate::defaults::JOB_WINDOW;

impl TryFrom<RawPariJobSpec> for PariJobSpec {
    type Error = PlatformError;
    fn try_from(r: RawPariJobSpec) -> Result<Self, PlatformError> {
        let spec = PariJobSpec {
            circuit: r.circuit,
            seed_start: r.seed_start,
            count: r.count,
            per_task: r.per_task,
            tasks_per_bundle: r.tasks_per_bundle,
            window: r.window,
        };
        spec.check()?;
        Ok(spec)
    }
}

impl PariJobSpec {
    /// The bounds every spec keeps (those of [`PariJobSpec::new`], on the stored fields).
    fn check(&self) -> Result<(), PlatformError> {
        Self::check_request(self.circuit, self.seed_start, self.count, self.per_task)?;
        if self.tasks_per_bundle == 0 || self.tasks_per_bundle > MAX_PROOFS {
            return Err(invalid("tasks_per_bundle", format!("must be in 1..={MAX_PROOFS}, got {}", self.tasks_per_bundle)));
        }
        if self.window == 0 {
            return Err(invalid("window", "must be at least 1"));
        }
        Ok(())
    }

    fn check_request(circuit: CircuitFamily, seed_start: u64, count: u64, per_task: u64) -> Result<(), PlatformError> {
        circuit.validate().map_err(|e| invalid("circuit", e))?;
        if let CircuitFamily::Chain { steps } = circuit {
            if steps > MAX_CHAIN_STEPS {
                return Err(invalid("circuit", format!("chain: at most {MAX_CHAIN_STEPS} steps on the platform, got {steps}")));
            }
        }
        if count == 0 || count > MAX_PROOFS {
            return Err(invalid("count", format!("must be in 1..={MAX_PROOFS}, got {count}")));
        }
        if seed_start.checked_add(count).is_none() {
            return Err(invalid("seed_start", "seed_start + count overflows"));
        }
        if per_task == 0 || per_task > MAX_PER_TASK {
            return Err(invalid("proofs_per_task", format!("must be in 1..={MAX_PER_TASK}, got {per_task}")));
        }
        Ok(())
    }

    /// Validates a request: `per_bundle` proofs per bundle is rounded up to whole prove tasks.
    pub fn new(circuit: CircuitFamily, seed_start: u64, count: u64, per_task: u64, per_bundle: u64) -> Result<Self, PlatformError> {
        Self::check_request(circuit, seed_start, count, per_task)?;
        if per_bundle == 0 || per_bundle > MAX_PROOFS {
            return Err(invalid("bundle_size", format!("must be in 1..={MAX_PROOFS}, got {per_bundle}")));
        }
        Ok(Self { circuit, seed_start, count, per_task, tasks_per_bundle: per_bundle.div_ceil(per_task), window: DEFAULT_WINDOW })
    }

    /// The same spec with prove tasks dispatched `window` at a time (at least 1).
    pub fn with_window(mut self, window: u64) -> Self {
        self.window = window.max(1);
        self
    }

    pub fn prove_tasks(&self) -> u64 {
        self.count.div_ceil(self.per_task)
    }

    pub fn bundles(&self) -> u64 {
        self.prove_tasks().div_ceil(self.tasks_per_bundle)
    }

    /// Seeds proved by prove task `i`.
    fn seeds(&self, i: u64) -> std::ops::Range<u64> {
        let lo = i * self.per_task;
        let hi = (lo + self.per_task).min(self.count);
        self.seed_start + lo..self.seed_start + hi
    }

    /// Prove tasks gathered by bundle `k`.
    fn bundle_tasks(&self, k: u64) -> std::ops::Range<u64> {
        self.steps().bundle_tasks(k)
    }

    fn steps(&self) -> Steps {
        Steps { prove: PROVE, bundle: BUNDLE, prove_tasks: self.prove_tasks(), tasks_per_bundle: self.tasks_per_bundle, window: self.window }
    }

    fn of(rec: &JobRecord) -> Result<Self, PlatformError> {
        serde_json::from_str(&rec.spec).map_err(|e| PlatformError::Corrupt(format!("job {} spec: {e}", rec.id)))
    }
}

/// A task's step and index, which is also its id (`<step>-<index>`), and (for `pari.batch`,
/// from the setup's report on) the hex digest of the verifying key of the job's key pair.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub(crate) struct PariTask {
    pub step: String,
    pub index: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

pub(crate) fn task_id(step: &str, index: u64) -> String {
    format!("{step}-{index}")
}

/// Where a `pari.batch` job's key file `name` is: under the digest its tasks name, or (a task
/// without one, dispatched before keys were stored by digest) the job's former fixed place.
fn key_path(job: &str, key: Option<&str>, name: &str) -> Result<String, PlatformError> {
    match key {
        Some(d) => {
            d.parse::<::pari::KeyDigest>().map_err(|e| corrupt(format!("task payload: key {d:?}: {e}")))?;
            Ok(layout::pari_key_at(job, d, name))
        }
        None => Ok(layout::pari_key(job, name)),
    }
}

/// The proofs of one prove task: instances `seeds` of `circuit`, randomness from the operating
/// system.
fn prove_list(
    pk: &ProvingKey<Bls12_381>,
    circuit: CircuitFamily,
    seeds: std::ops::Range<u64>,
    cancel: &crate::work::Cancel,
) -> Result<ProofList<Bls12_381>, PlatformError> {
    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
    let mut items = Vec::with_capacity(seeds.end.saturating_sub(seeds.start) as usize);
    for s in seeds {
        cancel.check()?;
        let (c, x) = circuit.instance::<Fr>(s);
        items.push((x, cancel.with_interrupt(|stop| ::pari::prove_interruptible(pk, c, &mut rng, stop)).map_err(pari_err)?));
    }
    Ok(ProofList { items })
}

/// A Pari error as the platform's; an interrupted proof is abandoned work (its task's flag
/// stopped it).
pub(crate) fn pari_err(e: ::pari::Error) -> PlatformError {
    match e {
        ::pari::Error::Interrupted => PlatformError::Abandoned,
        e => PlatformError::Corrupt(format!("pari: {e}")),
    }
}

pub(crate) fn task_of(lease: &Lease) -> Result<PariTask, PlatformError> {
    serde_json::from_str(&lease.task.payload).map_err(|e| corrupt(format!("task payload: {e}")))
}

pub(crate) async fn dispatch(p: &Platform, job: &str, kind: TaskKind, step: &str, index: u64) -> Result<bool, PlatformError> {
    dispatch_keyed(p, job, kind, step, index, None).await
}

/// [`dispatch`] of a task that names the job's key pair (its verifying key's digest).
async fn dispatch_keyed(p: &Platform, job: &str, kind: TaskKind, step: &str, index: u64, key: Option<&str>) -> Result<bool, PlatformError> {
    let payload = serde_json::to_string(&PariTask { step: step.into(), index, key: key.map(str::to_string) }).map_err(corrupt)?;
    p.dispatch(job, kind, &task_id(step, index), payload).await
}

/// The prove and bundle steps every Pari job kind shares (built-in families and registered
/// circom circuits): prove tasks released in a sliding window, bundle `k` once its prove tasks
/// are done, the job done when every bundle is published.
pub(crate) struct Steps {
    pub prove: TaskKind,
    pub bundle: TaskKind,
    pub prove_tasks: u64,
    pub tasks_per_bundle: u64,
    pub window: u64,
}

impl Steps {
    fn window(&self) -> super::Window<'static> {
        super::Window { step: "prove", n: self.prove_tasks, cap: Some(self.window) }
    }

    /// Releases the prove tasks the job's share allows (see [`super::Window`]), naming `key`.
    async fn release(&self, p: &Platform, rec: &JobRecord, key: Option<&str>) -> Result<(), PlatformError> {
        let done = rec.tasks.get(self.prove.name).map_or(0, |c| c.done);
        self.window().slide(p, rec, done, |i| async move { dispatch_keyed(p, &rec.id, self.prove, "prove", i, key).await.map(|_| ()) }).await
    }

    /// The first window of prove tasks (a rerun dispatches nothing twice), naming the job's key
    /// pair `key` if its keys are its own (`pari.batch`).
    pub async fn start(&self, p: &Platform, rec: &JobRecord, key: Option<&str>) -> Result<(), PlatformError> {
        self.release(p, rec, key).await
    }

    /// The executor, on the report of a prove or bundle task.
    pub async fn on_done(&self, p: &Platform, job: &str, t: &PariTask) -> Result<(), PlatformError> {
        let store = p.job_store();
        if t.step == "prove" {
            store.task_done(job, self.prove.name, &task_id("prove", t.index)).await?;
            self.release(p, &p.record(job).await?, t.key.as_deref()).await?;
            let k = t.index / self.tasks_per_bundle;
            for i in self.bundle_tasks(k) {
                if !store.is_done(job, &task_id("prove", i)).await? {
                    return Ok(());
                }
            }
            dispatch_keyed(p, job, self.bundle, "bundle", k, t.key.as_deref()).await?;
        } else {
            store.task_done(job, self.bundle.name, &task_id("bundle", t.index)).await?;
            let rec = p.record(job).await?;
            let b = rec.tasks.get(self.bundle.name).copied().unwrap_or_default();
            if b.done == b.total {
                let mut pins = std::collections::BTreeMap::new();
                let mut verify = Vec::new();
                if let Some(d) = crate::manifest::published_field(p, job, "circuit.json", "vk_digest").await? {
                    verify.push(format!("prover pari verify-bundles {} --vk-digest {d}", crate::manifest::DIR));
                    pins.insert("vk_digest".to_string(), d);
                }
                crate::manifest::Manifest::publish(p, job, &rec.kind, pins, verify).await?;
                p.end(job, crate::Ending::Done).await?;
            }
        }
        Ok(())
    }

    /// Prove tasks gathered by bundle `k`.
    pub fn bundle_tasks(&self, k: u64) -> std::ops::Range<u64> {
        let lo = k * self.tasks_per_bundle;
        lo..(lo + self.tasks_per_bundle).min(self.prove_tasks)
    }
}

/// The proofs (with their public inputs) that prove tasks `tasks` of `job` stored, in order.
#[allow(clippy::type_complexity)]
pub(crate) async fn read_proofs<E: ark_ec::pairing::Pairing>(
    p: &Platform,
    job: &str,
    tasks: std::ops::Range<u64>,
) -> Result<Vec<(Vec<E::ScalarField>, ::pari::Proof<E>)>, PlatformError> {
    let mut items = Vec::new();
    for i in tasks {
        items.extend(ProofList::<E>::from_bytes(&p.blobs().get(&layout::pari_proofs(job, i)).await?).map_err(pari_err)?.items);
    }
    Ok(items)
}

/// Gathers the proof lists of `tasks` and batch-verifies them under `vk`, locating any bad
/// proof by bisection: the bundle and the positions (in it) of the proofs that fail.
pub(crate) async fn gather_bundle<E: ark_ec::pairing::Pairing>(
    p: &Platform,
    job: &str,
    tasks: std::ops::Range<u64>,
    vk: VerifyingKey<E>,
) -> Result<(Bundle<E>, Vec<usize>), PlatformError> {
    let bundle = Bundle::new(&vk, read_proofs(p, job, tasks).await?);
    crate::work::blocking(move |_| {
        let pvk: PreparedVerifyingKey<E> = vk.prepare()?;
        let bad = bundle.locate_invalid(&pvk, &mut rand_chacha::ChaCha20Rng::from_entropy());
        bad.map(|bad| (bundle, bad))
    })
    .await?
    .map_err(pari_err)
}

/// The job's spec, or `None` if it has ended (or no longer exists): its tasks are dropped.
async fn live_spec(p: &Platform, job: &str) -> Result<Option<PariJobSpec>, PlatformError> {
    match p.job_store().get(job).await? {
        Some(r) if !r.state.is_terminal() => Ok(Some(PariJobSpec::of(&r)?)),
        _ => Ok(None),
    }
}

/// `pari.batch`.
pub struct PariBatch;

#[async_trait]
impl JobKind for PariBatch {
    fn name(&self) -> &'static str {
        JOB
    }
    fn limits(&self) -> Vec<crate::limits::Limit> {
        use crate::limits::Limit;
        vec![
            Limit::new(JOB, "count", MAX_PROOFS, "count", "proofs of the job"),
            Limit::new(JOB, "proofs_per_task", MAX_PER_TASK, "count", "proofs of one prove task"),
            Limit::new(JOB, "bundle_size", MAX_PROOFS, "count", "proofs of one bundle"),
            Limit::new(JOB, "circuit", MAX_CHAIN_STEPS as u64, "steps", "steps of a chain circuit"),
        ]
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        TASKS
    }

    async fn validate(&self, p: &Platform, _tenant: &str, request: JobRequest) -> Result<Validated, PlatformError> {
        let JobRequest::PariBatch { circuit, seed_start, count, per_task, bundle_size } = request else {
            return Err(PlatformError::Config("pari.batch: not a Pari request".into()));
        };
        let spec = PariJobSpec::new(circuit, seed_start, count, per_task, bundle_size)?.with_window(p.config().job_window);
        Ok(Validated {
            spec: serde_json::to_string(&spec).map_err(corrupt)?,
            inputs: Vec::new(),
            tasks: BTreeMap::from([(SETUP.name, 1), (PROVE.name, spec.prove_tasks()), (BUNDLE.name, spec.bundles())]),
            secrets: Vec::new(),
            copies: Vec::new(),
        })
    }

    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        dispatch(p, &job.id, SETUP, "setup", 0).await.map(|_| ())
    }

    /// Worker: `pari.setup` and `pari.prove`.
    async fn work(&self, p: &Platform, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(spec) = live_spec(p, job).await? else { return Ok(()) };
        let t = task_of(lease)?;
        if task == SETUP {
            // Randomness from the operating system, kept nowhere (see the module doc): this
            // delivery's key pair, stored under its digest; the report names it.
            let circuit = spec.circuit;
            let (pk, vk) = crate::work::blocking(move |_| {
                let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
                ::pari::setup::<Bls12_381, _, _>(circuit.blank::<Fr>(), &mut rng)
            })
            .await?
            .map_err(pari_err)?;
            let vk = vk.to_bytes();
            let digest = ::pari::KeyDigest::of_bytes(&vk).to_string();
            p.blobs().put(&layout::pari_key_at(job, &digest, "pk.bin"), Bytes::from(pk.to_bytes())).await?;
            p.blobs().put(&layout::pari_key_at(job, &digest, "vk.bin"), Bytes::from(vk)).await?;
            let report = PariTask { step: t.step, index: t.index, key: Some(digest) };
            return p.report_with(lease, DONE, serde_json::to_string(&report).map_err(corrupt)?).await;
        } else {
            if t.index >= spec.prove_tasks() {
                return Err(PlatformError::Corrupt(format!("prove task {} out of range", t.index)));
            }
            let pk = ProvingKey::<Bls12_381>::from_bytes(&p.blobs().get(&key_path(job, t.key.as_deref(), "pk.bin")?).await?).map_err(pari_err)?;
            let (circuit, seeds) = (spec.circuit, spec.seeds(t.index));
            let list = crate::work::blocking(move |cancel| prove_list(&pk, circuit, seeds, cancel)).await??;
            ::metrics::counter!("prover_proofs_total", "kind" => "pari.proof").increment(list.items.len() as u64);
            p.blobs().put(&layout::pari_proofs(job, t.index), Bytes::from(list.to_bytes())).await?;
        }
        p.report(lease, DONE).await
    }

    /// Executor: a `pari.done` report.
    async fn on_done(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let t = task_of(lease)?;
        if !p.live(job).await? {
            return Ok(());
        }
        let rec = p.record(job).await?;
        let spec = PariJobSpec::of(&rec)?;
        let store = p.job_store();
        match t.step.as_str() {
            "setup" => {
                store.task_done(job, SETUP.name, &task_id("setup", 0)).await?;
                // The first window of prove tasks; each report releases what the job's share
                // allows (dispatches are at most once per task id, so a rerun adds nothing).
                let key = t.key.as_deref().ok_or_else(|| corrupt("the setup's report names no key"))?;
                spec.steps().start(p, &rec, Some(key)).await?;
            }
            "prove" | "bundle" => {
                spec.steps().on_done(p, job, &t).await?;
            }
            other => return Err(PlatformError::Corrupt(format!("unknown pari step {other:?}"))),
        }
        Ok(())
    }

    /// Aggregator: gathers, batch-verifies and publishes bundle `k`.
    async fn finish(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(spec) = live_spec(p, job).await? else { return Ok(()) };
        let t = task_of(lease)?;
        let vk_bytes = p.blobs().get(&key_path(job, t.key.as_deref(), "vk.bin")?).await?;
        // A key file replaced in the store cannot put the bundle under another key: its digest
        // must be the one the job's setup reported.
        if let Some(d) = t.key.as_deref() {
            if ::pari::KeyDigest::of_bytes(&vk_bytes).to_string() != d {
                return Err(corrupt(format!("vk.bin under {d} has another digest")));
            }
        }
        let vk = VerifyingKey::<Bls12_381>::from_bytes(&vk_bytes).map_err(pari_err)?;
        let (bundle, bad) = gather_bundle(p, job, spec.bundle_tasks(t.index), vk).await?;
        if !bad.is_empty() {
            let first = t.index * spec.tasks_per_bundle * spec.per_task;
            let seeds: Vec<u64> = bad.iter().map(|i| spec.seed_start + first + *i as u64).collect();
            return p.fail_job(job, &format!("bundle {}: proofs for seeds {seeds:?} do not verify", t.index)).await;
        }
        // The digest a verifier pins (`prover pari verify-bundles --vk-digest`): it names the
        // one key pair this job's setup reported (see the module doc).
        let circuit = serde_json::json!({
            "curve": "bls12-381",
            "circuit": spec.circuit,
            "vk_digest": ::pari::KeyDigest::of_bytes(&vk_bytes).to_string(),
        });
        let put = |name: &str, bytes: Bytes| {
            let key = layout::proof_file(job, name);
            async move { p.blobs().put(&key, bytes).await }
        };
        put("circuit.json", Bytes::from(serde_json::to_vec_pretty(&circuit).map_err(corrupt)?)).await?;
        put("vk.bin", vk_bytes).await?;
        put(&layout::pari_bundle_name(t.index), Bytes::from(bundle.to_bytes())).await?;
        p.report(lease, DONE).await
    }

    async fn verify_outputs(&self, p: &Platform, job: &JobRecord, pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Ok(verify_outputs(p, &job.id, pinned_key(pins)?.as_ref()).await)
    }
    fn scratch_prefixes(&self, job: &str) -> Vec<String> {
        vec![layout::pari_prefix(job), layout::inputs_prefix(job)]
    }
}

/// Verifies a Pari job's published bundles (either Pari job kind) under `expected_vk` (or,
/// without one, the key published beside them) and says which key it checked against.
/// `Err(reason)` if any fails. The curve is the one `circuit.json` names (BLS12-381 if none).
pub async fn verify_outputs(p: &Platform, job: &str, expected_vk: Option<&::pari::KeyDigest>) -> Result<String, String> {
    let circuit = p.blobs().get(&layout::proof_file(job, "circuit.json")).await.map_err(|e| e.to_string())?;
    let circuit: serde_json::Value = serde_json::from_slice(&circuit).map_err(|e| format!("circuit.json: {e}"))?;
    match circuit["curve"].as_str() {
        None | Some("bls12-381") => verify_outputs_on::<Bls12_381>(p, job, expected_vk).await,
        Some("bn254") => verify_outputs_on::<ark_bn254::Bn254>(p, job, expected_vk).await,
        Some(other) => Err(format!("circuit.json: unknown curve {other:?}")),
    }
}

async fn verify_outputs_on<E: ark_ec::pairing::Pairing>(p: &Platform, job: &str, expected_vk: Option<&::pari::KeyDigest>) -> Result<String, String> {
    let dir = layout::proof_prefix(job);
    let vk = p.blobs().get(&layout::proof_file(job, "vk.bin")).await.map_err(|e| e.to_string())?;
    let found = ::pari::KeyDigest::of_bytes(&vk);
    let against = match expected_vk {
        Some(d) => format!("vk digest {d} (expected_vk_digest)"),
        None => format!("the published vk.bin, vk digest {found} (not pinned: pass expected_vk_digest)"),
    };
    let vk = match expected_vk {
        Some(d) => VerifyingKey::<E>::from_bytes_pinned(&vk, d),
        None => VerifyingKey::<E>::from_bytes(&vk),
    }
    .map_err(|e| format!("vk.bin: {e}"))?;
    let keys = p.blobs().list(&dir).await.map_err(|e| e.to_string())?;
    let mut bundles = Vec::new();
    for k in keys.iter().filter(|k| k.rsplit('/').next().is_some_and(|n| n.starts_with("bundle-"))) {
        let b = p.blobs().get(k).await.map_err(|e| e.to_string())?;
        bundles.push((k.clone(), Bundle::<E>::from_bytes(&b).map_err(|e| format!("{k}: {e}"))?));
    }
    if bundles.is_empty() {
        return Err("no bundles".into());
    }
    let vk = Arc::new(vk.prepare().map_err(|e| format!("vk.bin: {e}"))?);
    tokio::task::spawn_blocking(move || {
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        for (k, b) in &bundles {
            b.verify(&vk, &mut rng).map_err(|e| format!("{k}: {e}"))?;
        }
        Ok(against)
    })
    .await
    .map_err(|e| e.to_string())?
}

/// The pinned Pari key digest of a `VerifyProof` request, if any.
pub(crate) fn pinned_key(pins: super::Pins<'_>) -> Result<Option<::pari::KeyDigest>, PlatformError> {
    pins.vk_digest.map(|hex| hex.parse::<::pari::KeyDigest>().map_err(|e| invalid("expected_vk_digest", e.to_string()))).transpose()
}

impl Platform {
    /// Verifies a Pari job's published bundles. `Err(reason)` if any fails.
    pub async fn verify_pari_outputs(&self, job: &str, expected_vk: Option<&::pari::KeyDigest>) -> Result<String, String> {
        verify_outputs(self, job, expected_vk).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored spec is decoded with the request's bounds: a zero `per_task` or
    /// `tasks_per_bundle` (which made `prove_tasks`/`bundles` divide by zero) is an error.
    #[test]
    fn stored_specs_are_checked_when_decoded() {
        let good = PariJobSpec::new(CircuitFamily::Chain { steps: 8 }, 0, 10, 3, 6).unwrap();
        let json = serde_json::to_value(&good).unwrap();
        assert_eq!(serde_json::from_value::<PariJobSpec>(json.clone()).unwrap(), good);
        for (field, value) in [("per_task", 0u64), ("tasks_per_bundle", 0), ("count", 0), ("count", MAX_PROOFS + 1), ("seed_start", u64::MAX)] {
            let mut bad = json.clone();
            bad[field] = value.into();
            let err = serde_json::from_value::<PariJobSpec>(bad).expect_err(field).to_string();
            assert!(err.contains(if field == "per_task" { "proofs_per_task" } else { field }), "{field}: {err}");
        }
    }

    /// Tasks dispatched before keys were stored by digest carry no key and still decode; a
    /// payload's key must be a digest (it names an object path).
    #[test]
    fn task_payloads_name_the_key_pair() {
        let old: PariTask = serde_json::from_str(r#"{"step":"prove","index":3}"#).unwrap();
        assert!(old.key.is_none());
        assert_eq!(key_path("j", None, "pk.bin").unwrap(), layout::pari_key("j", "pk.bin"));
        let d = ::pari::KeyDigest([5; 64]).to_string();
        let t = PariTask { step: "prove".into(), index: 3, key: Some(d.clone()) };
        let back: PariTask = serde_json::from_str(&serde_json::to_string(&t).unwrap()).unwrap();
        assert_eq!(key_path("j", back.key.as_deref(), "vk.bin").unwrap(), layout::pari_key_at("j", &d, "vk.bin"));
        assert!(key_path("j", Some("../../other-job"), "pk.bin").is_err(), "a key that is not a digest names another path");
    }
}

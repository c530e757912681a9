//! Pari batch jobs (`pari.batch`): many proofs of one circuit, emitted in bundles that each
//! verify with one batch verification.
//!
//! On the typed contract ([`super::contract`]):
//!
//! ```text
//! pari.setup ─▶ pari.prove × n (in the job's window) ─▶ pari.bundle × b (each after its prove range) ─▶ pari.publish
//! ```
//!
//! One `pari.setup` task (keys for the circuit) → `pari.prove` tasks (each proves a run of
//! instances and writes a proof list) → `pari.bundle` tasks on the aggregator (each gathers the
//! proof lists of its range, batch-verifies them under the job's verifying key, locating any bad
//! proof by bisection, and publishes `proof/bundle-<k>.bin`) → `pari.publish` (the manifest,
//! once every bundle is published). Reports go to `pari.done`; the executor releases the prove
//! tasks after the setup, a bundle once its prove tasks are done.
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
//! digest then travels in every later task's payload and report ([`contract::Kind::payload`]). A pair a lost delivery left
//! behind is never read and goes with the job's scratch. Proofs draw their randomness from the
//! operating system too, so no stored object reveals what a proof hides.

use std::sync::Arc;

use api::v1 as pb;
use ark_bls12_381::{Bls12_381, Fr};
use async_trait::async_trait;
use bytes::Bytes;
use ::pari::bundle::{Bundle, ProofList};
use ::pari::circuits::CircuitFamily;
use ::pari::{PreparedVerifyingKey, ProvingKey, VerifyingKey};
use queue::Lease;
use rand::SeedableRng;

use super::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use super::{Submission, Served, TaskKind};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const JOB: &str = "pari.batch";
pub const SETUP: TaskKind = TaskKind::new("pari.setup", Served::Worker, 3600);
pub const PROVE: TaskKind = TaskKind::new("pari.prove", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("pari.done", Served::Executor, 300);
pub const BUNDLE: TaskKind = TaskKind::new("pari.bundle", Served::Aggregator, 1800);
/// The manifest, once every bundle is published.
pub const PUBLISH: TaskKind = TaskKind::new("pari.publish", Served::Aggregator, 300);

/// Most proofs in one job.
pub const MAX_PROOFS: u64 = 1 << 16;
/// Largest chain circuit a job may ask for (setup and keys grow linearly).
pub const MAX_CHAIN_STEPS: usize = 1 << 20;
/// Proofs one prove task makes.
pub const MAX_PER_TASK: u64 = 1024;

/// What a Pari job proves: `count` instances of `circuit` from seeds `seed_start..`, on
/// BLS12-381, `per_task` to a prove task, in bundles of `bundle_size` proofs (rounded up to whole
/// prove tasks). Its bounds ([`Kind::check`]) are checked at submission and whenever a record is
/// decoded: a spec read back from a shared job store is input too (a zero `per_task` would
/// otherwise divide by zero in the executor; found by `crates/fuzz`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PariJobSpec {
    pub circuit: CircuitFamily,
    pub seed_start: u64,
    pub count: u64,
    /// Proofs per prove task.
    pub per_task: u64,
    /// Proofs per bundle, as asked (a bundle gathers whole prove tasks).
    pub bundle_size: u64,
}

impl PariJobSpec {
    /// The request (its bounds are checked when it is submitted).
    pub fn new(circuit: CircuitFamily, seed_start: u64, count: u64, per_task: u64, bundle_size: u64) -> Self {
        Self { circuit, seed_start, count, per_task, bundle_size }
    }

    /// The bounds every spec keeps.
    fn check(&self) -> Result<(), PlatformError> {
        self.circuit.validate().map_err(|e| invalid("circuit", e))?;
        if let CircuitFamily::Chain { steps } = self.circuit {
            if steps > MAX_CHAIN_STEPS {
                return Err(invalid("circuit", format!("chain: at most {MAX_CHAIN_STEPS} steps on the platform, got {steps}")));
            }
        }
        if self.count == 0 || self.count > MAX_PROOFS {
            return Err(invalid("count", format!("must be in 1..={MAX_PROOFS}, got {}", self.count)));
        }
        if self.seed_start.checked_add(self.count).is_none() {
            return Err(invalid("seed_start", "seed_start + count overflows"));
        }
        if self.per_task == 0 || self.per_task > MAX_PER_TASK {
            return Err(invalid("proofs_per_task", format!("must be in 1..={MAX_PER_TASK}, got {}", self.per_task)));
        }
        if self.bundle_size == 0 || self.bundle_size > MAX_PROOFS {
            return Err(invalid("bundle_size", format!("must be in 1..={MAX_PROOFS}, got {}", self.bundle_size)));
        }
        Ok(())
    }

    /// Prove tasks per bundle.
    pub fn tasks_per_bundle(&self) -> u64 {
        self.bundle_size.div_ceil(self.per_task)
    }

    pub fn prove_tasks(&self) -> u64 {
        self.count.div_ceil(self.per_task)
    }

    pub fn bundles(&self) -> u64 {
        self.prove_tasks().div_ceil(self.tasks_per_bundle())
    }

    /// Seeds proved by prove task `i`.
    fn seeds(&self, i: u64) -> std::ops::Range<u64> {
        let lo = i * self.per_task;
        let hi = (lo + self.per_task).min(self.count);
        self.seed_start + lo..self.seed_start + hi
    }

    /// Prove tasks gathered by bundle `k`.
    fn bundle_tasks(&self, k: u64) -> std::ops::Range<u64> {
        let lo = k * self.tasks_per_bundle();
        lo..(lo + self.tasks_per_bundle()).min(self.prove_tasks())
    }
}

/// The in-process request for a Pari batch job (checked when submitted).
pub fn request(circuit: CircuitFamily, seed_start: u64, count: u64, per_task: u64, bundle_size: u64) -> Submission {
    contract::spec_request::<PariBatch>(&PariJobSpec::new(circuit, seed_start, count, per_task, bundle_size))
}

/// Where a `pari.batch` job's key file `name` is: under the digest its tasks name.
fn key_path(job: &str, digest: &str, name: &str) -> Result<String, PlatformError> {
    digest.parse::<::pari::KeyDigest>().map_err(|e| corrupt(format!("task payload: key {digest:?}: {e}")))?;
    Ok(layout::pari_key_at(job, digest, name))
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

/// The manifest of a Pari job (either kind) whose bundles are all published: the key digest
/// `circuit.json` names, pinned, and the command that checks the bundles offline.
pub(crate) async fn publish_manifest(p: &Platform, job: &str, kind: &str) -> Result<(), PlatformError> {
    let mut pins = std::collections::BTreeMap::new();
    let mut verify = Vec::new();
    if let Some(d) = crate::manifest::published_field(p, job, "circuit.json", "vk_digest").await? {
        verify.push(format!("prover pari verify-bundles {} --vk-digest {d}", crate::manifest::DIR));
        pins.insert("vk_digest".to_string(), d);
    }
    crate::manifest::Manifest::publish(p, job, kind, pins, verify).await
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

/// The steps of a Pari batch job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Setup,
    Prove,
    Bundle,
    Publish,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Setup, Step::Prove, Step::Bundle, Step::Publish];
    fn task(self) -> TaskKind {
        match self {
            Step::Setup => SETUP,
            Step::Prove => PROVE,
            Step::Bundle => BUNDLE,
            Step::Publish => PUBLISH,
        }
    }
}

/// The job's key pair, as a task's payload names it (its verifying key's digest).
fn key_of(job: &Job<PariBatch>, lease: &Lease, name: &str) -> Result<String, PlatformError> {
    let d = lease.task.payload.as_str();
    if d.is_empty() {
        return Err(corrupt(format!("job {}: a {} task that names no key pair", job.id(), lease.kind)));
    }
    key_path(job.id(), d, name)
}

/// `pari.batch`.
pub struct PariBatch;

#[async_trait]
impl Kind for PariBatch {
    const NAME: &'static str = JOB;
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = PariJobSpec;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<PariJobSpec, PlatformError>> {
        let pb::submit_job_request::Params::PariBatch(p) = params else { return None };
        let circuit = usize::try_from(p.size).map_err(|_| invalid("size", "too large")).and_then(|size| match p.circuit.as_str() {
            "chain" => Ok(CircuitFamily::Chain { steps: size }),
            "poseidon" => Ok(CircuitFamily::Poseidon { inputs: size }),
            other => Err(invalid("circuit", format!("{other:?}; use chain or poseidon"))),
        });
        Some(circuit.map(|circuit| {
            let per_task = if p.proofs_per_task == 0 { 16 } else { p.proofs_per_task };
            let bundle_size = if p.bundle_size == 0 { 1024 } else { p.bundle_size };
            PariJobSpec::new(circuit, p.seed_start, p.count, per_task, bundle_size)
        }))
    }

    fn check(spec: &PariJobSpec) -> Result<(), PlatformError> {
        spec.check()
    }

    async fn validate(&self, _p: &Platform, _tenant: &str, spec: &mut PariJobSpec) -> Result<Planned<Step>, PlatformError> {
        // The bounds first: the task counts divide by `per_task`.
        spec.check()?;
        Ok(Planned::tasks(vec![(Step::Setup, 1), (Step::Prove, spec.prove_tasks()), (Step::Bundle, spec.bundles()), (Step::Publish, 1)]))
    }

    fn plan(_spec: &PariJobSpec) -> Vec<Effect<Step>> {
        vec![Effect::Dispatch(Step::Setup, 0..1)]
    }

    /// The key digest the report names (the setup's, carried on by each later report).
    fn payload(_spec: &PariJobSpec, _step: Step, _index: u64, cause: Option<&Report<Step>>) -> String {
        cause.map(|r| r.payload.clone()).unwrap_or_default()
    }

    /// `pari.setup` (reports its key pair's digest) and `pari.prove` (reports the digest it
    /// proved under).
    async fn work(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, lease: &Lease) -> Result<String, PlatformError> {
        let (id, spec) = (job.id(), &job.spec);
        match step {
            Step::Setup => {
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
                p.blobs().put(&layout::pari_key_at(id, &digest, "pk.bin"), Bytes::from(pk.to_bytes())).await?;
                p.blobs().put(&layout::pari_key_at(id, &digest, "vk.bin"), Bytes::from(vk)).await?;
                Ok(digest)
            }
            Step::Prove => {
                if index >= spec.prove_tasks() {
                    return Err(corrupt(format!("prove task {index} out of range")));
                }
                let pk = ProvingKey::<Bls12_381>::from_bytes(&p.blobs().get(&key_of(job, lease, "pk.bin")?).await?).map_err(pari_err)?;
                let (circuit, seeds) = (spec.circuit, spec.seeds(index));
                let list = crate::work::blocking(move |cancel| prove_list(&pk, circuit, seeds, cancel)).await??;
                ::metrics::counter!("prover_proofs_total", "kind" => "pari.proof").increment(list.items.len() as u64);
                p.blobs().put(&layout::pari_proofs(id, index), Bytes::from(list.to_bytes())).await?;
                Ok(lease.task.payload.clone())
            }
            Step::Bundle | Step::Publish => Err(corrupt(format!("{JOB}: {step:?} is the aggregator's"))),
        }
    }

    /// The prove tasks go out in the job's window; bundle `k` once its prove range is done;
    /// the manifest once every bundle is published.
    fn on_done(spec: &PariJobSpec, progress: &Progress<Step>, report: &Report<Step>) -> Vec<Effect<Step>> {
        let release = Effect::Release { step: Step::Prove, n: spec.prove_tasks(), freed: progress.done(Step::Prove) };
        match report.step {
            Step::Setup => vec![release],
            Step::Prove => {
                let k = report.index / spec.tasks_per_bundle();
                vec![release, Effect::Join { step: Step::Bundle, index: k, of: Step::Prove, after: spec.bundle_tasks(k) }]
            }
            Step::Bundle if progress.complete(Step::Bundle) => vec![Effect::Dispatch(Step::Publish, 0..1)],
            Step::Bundle => Vec::new(),
            Step::Publish => vec![Effect::Done],
        }
    }

    /// `pari.bundle`: gathers, batch-verifies and publishes bundle `k`; `pari.publish`: the
    /// manifest.
    async fn finish(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, lease: &Lease) -> Result<String, PlatformError> {
        let (id, spec) = (job.id(), &job.spec);
        if step == Step::Publish {
            publish_manifest(p, id, JOB).await?;
            return Ok(String::new());
        }
        if index >= spec.bundles() {
            return Err(corrupt(format!("bundle {index} out of range")));
        }
        let vk_bytes = p.blobs().get(&key_of(job, lease, "vk.bin")?).await?;
        // A key file replaced in the store cannot put the bundle under another key: its digest
        // must be the one the job's setup reported.
        let d = lease.task.payload.as_str();
        if ::pari::KeyDigest::of_bytes(&vk_bytes).to_string() != d {
            return Err(corrupt(format!("vk.bin under {d} has another digest")));
        }
        let vk = VerifyingKey::<Bls12_381>::from_bytes(&vk_bytes).map_err(pari_err)?;
        let (bundle, bad) = gather_bundle(p, id, spec.bundle_tasks(index), vk).await?;
        if !bad.is_empty() {
            let first = index * spec.tasks_per_bundle() * spec.per_task;
            let seeds: Vec<u64> = bad.iter().map(|i| spec.seed_start + first + *i as u64).collect();
            return Err(contract::reject(format!("bundle {index}: proofs for seeds {seeds:?} do not verify")));
        }
        // The digest a verifier pins (`prover pari verify-bundles --vk-digest`): it names the
        // one key pair this job's setup reported (see the module doc).
        let circuit = serde_json::json!({
            "curve": "bls12-381",
            "circuit": spec.circuit,
            "vk_digest": d,
        });
        let put = |name: &str, bytes: Bytes| {
            let key = layout::proof_file(id, name);
            async move { p.blobs().put(&key, bytes).await }
        };
        put("circuit.json", Bytes::from(serde_json::to_vec_pretty(&circuit).map_err(corrupt)?)).await?;
        put("vk.bin", vk_bytes).await?;
        put(&layout::pari_bundle_name(index), Bytes::from(bundle.to_bytes())).await?;
        Ok(d.to_string())
    }

    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Ok(verify_outputs(p, job.id(), pinned_key(pins)?.as_ref()).await)
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![layout::pari_prefix(job), layout::inputs_prefix(job)]
    }

    fn limits() -> Vec<crate::limit::Limit> {
        use crate::limit::Limit;
        vec![
            Limit::new(JOB, "count", MAX_PROOFS, "count", "proofs of the job"),
            Limit::new(JOB, "proofs_per_task", MAX_PER_TASK, "count", "proofs of one prove task"),
            Limit::new(JOB, "bundle_size", MAX_PROOFS, "count", "proofs of one bundle"),
            Limit::new(JOB, "circuit", MAX_CHAIN_STEPS as u64, "steps", "steps of a chain circuit"),
        ]
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
    let bundles: Vec<String> = keys.into_iter().filter(|k| k.rsplit('/').next().is_some_and(|n| n.starts_with("bundle-"))).collect();
    if bundles.is_empty() {
        return Err("no bundles".into());
    }
    let vk = Arc::new(vk.prepare().map_err(|e| format!("vk.bin: {e}"))?);
    // One bundle in memory at a time (N5 of the platform review: a job's bundles hold up to
    // 65,536 proofs), each decoded and checked off the async runtime.
    for k in bundles {
        let b = p.blobs().get(&k).await.map_err(|e| e.to_string())?;
        let vk = vk.clone();
        tokio::task::spawn_blocking(move || {
            let bundle = Bundle::<E>::from_bytes(&b).map_err(|e| format!("{k}: {e}"))?;
            bundle.verify(&vk, &mut rand_chacha::ChaCha20Rng::from_entropy()).map_err(|e| format!("{k}: {e}"))
        })
        .await
        .map_err(|e| e.to_string())??;
    }
    Ok(against)
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

    /// A stored spec is checked with the request's bounds (the adaptor calls `check` on every
    /// decode): a zero `per_task` or `bundle_size` (which made `prove_tasks`/`bundles` divide by
    /// zero) is an error naming the field.
    #[test]
    fn stored_specs_are_checked_when_decoded() {
        let good = PariJobSpec::new(CircuitFamily::Chain { steps: 8 }, 0, 10, 3, 6);
        PariBatch::check(&good).unwrap();
        let json = serde_json::to_value(&good).unwrap();
        assert_eq!(serde_json::from_value::<PariJobSpec>(json.clone()).unwrap(), good);
        for (field, value) in [("per_task", 0u64), ("bundle_size", 0), ("count", 0), ("count", MAX_PROOFS + 1), ("seed_start", u64::MAX)] {
            let mut bad = json.clone();
            bad[field] = value.into();
            let err = PariBatch::check(&serde_json::from_value::<PariJobSpec>(bad).unwrap()).expect_err(field).to_string();
            assert!(err.contains(if field == "per_task" { "proofs_per_task" } else { field }), "{field}: {err}");
        }
    }


    fn report(step: Step, index: u64) -> Report<Step> {
        Report { step, index, payload: "digest".into() }
    }

    /// The state machine without Redis: 10 proofs, 3 to a task (4 prove tasks), bundles of 6
    /// proofs (2 tasks: bundles {0, 1} and {2, 3}).
    #[test]
    fn prove_tasks_go_out_in_the_window_and_each_bundle_follows_its_range() {
        let s = PariJobSpec::new(CircuitFamily::Chain { steps: 8 }, 0, 10, 3, 6);
        assert_eq!((s.prove_tasks(), s.tasks_per_bundle(), s.bundles()), (4, 2, 2));
        assert_eq!(PariBatch::plan(&s), vec![Effect::Dispatch(Step::Setup, 0..1)]);
        let release = |freed| Effect::Release { step: Step::Prove, n: 4, freed };
        let p = Progress::of(&[(Step::Setup, 1, 1), (Step::Prove, 0, 4)]);
        assert_eq!(PariBatch::on_done(&s, &p, &report(Step::Setup, 0)), vec![release(0)]);
        // Task 3 done first: it asks for bundle 1 once tasks 2 and 3 are done.
        let p = Progress::of(&[(Step::Prove, 1, 4)]);
        let join1 = Effect::Join { step: Step::Bundle, index: 1, of: Step::Prove, after: 2..4 };
        assert_eq!(PariBatch::on_done(&s, &p, &report(Step::Prove, 3)), vec![release(1), join1]);
        let p = Progress::of(&[(Step::Prove, 2, 4)]);
        let join0 = Effect::Join { step: Step::Bundle, index: 0, of: Step::Prove, after: 0..2 };
        assert_eq!(PariBatch::on_done(&s, &p, &report(Step::Prove, 0)), vec![release(2), join0]);
        // The manifest only after the last bundle; the job done with its report.
        let p = Progress::of(&[(Step::Bundle, 1, 2)]);
        assert_eq!(PariBatch::on_done(&s, &p, &report(Step::Bundle, 1)), vec![]);
        let p = Progress::of(&[(Step::Bundle, 2, 2)]);
        assert_eq!(PariBatch::on_done(&s, &p, &report(Step::Bundle, 0)), vec![Effect::Dispatch(Step::Publish, 0..1)]);
        assert_eq!(PariBatch::on_done(&s, &p, &report(Step::Publish, 0)), vec![Effect::Done]);
        // The setup's key digest travels on from each report to the tasks it dispatches.
        assert_eq!(PariBatch::payload(&s, Step::Prove, 2, Some(&report(Step::Setup, 0))), "digest");
        assert_eq!(PariBatch::payload(&s, Step::Setup, 0, None), "");
    }

    /// A task's key must be a digest (it names an object path).
    #[test]
    fn task_payloads_name_the_key_pair() {
        let d = ::pari::KeyDigest([5; 64]).to_string();
        assert_eq!(key_path("j", &d, "vk.bin").unwrap(), layout::pari_key_at("j", &d, "vk.bin"));
        assert!(key_path("j", "../../other-job", "pk.bin").is_err(), "a key that is not a digest names another path");
        assert!(key_path("j", "", "pk.bin").is_err());
    }
}

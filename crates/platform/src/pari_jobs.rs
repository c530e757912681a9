//! Pari batch jobs: many proofs of one circuit, emitted in bundles that each verify with one
//! batch verification.
//!
//! DAG: one `pari.setup` task (keys for the circuit) → `pari.prove` tasks (each proves a run of
//! instances and writes a proof list) → `pari.bundle` tasks on the aggregator (each gathers the
//! proof lists of its range, batch-verifies them under the job's verifying key, locating any bad
//! proof by bisection, and publishes `proof/bundle-<k>.bin`). Workers report `pari.done`; the
//! executor releases the prove tasks after the setup, a bundle once its prove tasks are done,
//! and marks the job done when every bundle is published.
//!
//! Objects: `jobs/<id>/pari/{pk.bin,vk.bin}`, `jobs/<id>/pari/proofs/<i>.bin`, and the outputs
//! `jobs/<id>/proof/{circuit.json,vk.bin,bundle-<k>.bin}` (`prover pari verify-bundles DIR`
//! checks them offline).

use std::sync::Arc;

use ark_bls12_381::{Bls12_381, Fr};
use bytes::Bytes;
use jobs::JobState;
use pari::bundle::{Bundle, ProofList};
use pari::circuits::CircuitFamily;
use pari::{PreparedVerifyingKey, ProvingKey, VerifyingKey};
use queue::{Lease, TaskMessage};
use rand::SeedableRng;

use crate::{invalid, proof_prefix, Platform, PlatformError};

pub const KIND_PARI_SETUP: &str = "pari.setup";
pub const KIND_PARI_PROVE: &str = "pari.prove";
pub const KIND_PARI_BUNDLE: &str = "pari.bundle";
pub const KIND_PARI_DONE: &str = "pari.done";
pub const JOB_PARI_BATCH: &str = "pari.batch";

/// Most proofs in one job.
pub const MAX_PROOFS: u64 = 1 << 16;
/// Largest chain circuit a job may ask for (setup and keys grow linearly).
pub const MAX_CHAIN_STEPS: usize = 1 << 20;

/// What a Pari job proves: `count` instances of `circuit` from seeds `seed_start..`, on
/// BLS12-381.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PariJobSpec {
    pub circuit: CircuitFamily,
    pub seed_start: u64,
    pub count: u64,
    /// Proofs per prove task.
    pub per_task: u64,
    /// Prove tasks per bundle.
    pub tasks_per_bundle: u64,
}

impl PariJobSpec {
    /// Validates a request: `per_bundle` proofs per bundle is rounded up to whole prove tasks.
    pub fn new(circuit: CircuitFamily, seed_start: u64, count: u64, per_task: u64, per_bundle: u64) -> Result<Self, PlatformError> {
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
        if per_task == 0 || per_task > 1024 {
            return Err(invalid("proofs_per_task", format!("must be in 1..=1024, got {per_task}")));
        }
        if per_bundle == 0 || per_bundle > MAX_PROOFS {
            return Err(invalid("bundle_size", format!("must be in 1..={MAX_PROOFS}, got {per_bundle}")));
        }
        Ok(Self { circuit, seed_start, count, per_task, tasks_per_bundle: per_bundle.div_ceil(per_task) })
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
        let lo = k * self.tasks_per_bundle;
        lo..(lo + self.tasks_per_bundle).min(self.prove_tasks())
    }
}

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
struct PariTask {
    step: String,
    index: u64,
}

fn task_id(step: &str, index: u64) -> String {
    format!("{step}-{index}")
}

fn key(job: &str, name: &str) -> String {
    format!("jobs/{job}/pari/{name}")
}

fn proofs_key(job: &str, i: u64) -> String {
    format!("jobs/{job}/pari/proofs/{i}.bin")
}

pub fn bundle_name(k: u64) -> String {
    format!("bundle-{k}.bin")
}

fn corrupt(e: impl std::fmt::Display) -> PlatformError {
    PlatformError::Corrupt(e.to_string())
}

fn pari_err(e: pari::Error) -> PlatformError {
    PlatformError::Corrupt(format!("pari: {e}"))
}

impl Platform {
    pub(crate) async fn enqueue_pari(&self, job: &str, kind: &str, step: &str, index: u64) -> Result<(), PlatformError> {
        let payload = serde_json::to_string(&PariTask { step: step.into(), index }).expect("serialize");
        self.queue
            .enqueue(kind, TaskMessage { job_id: job.into(), task_id: task_id(step, index), payload, failures: 0 })
            .await?;
        Ok(())
    }

    fn pari_task(lease: &Lease) -> Result<PariTask, PlatformError> {
        serde_json::from_str(&lease.task.payload).map_err(corrupt)
    }

    /// The job's spec, or `None` if it has ended (or no longer exists): its tasks are dropped.
    async fn live_spec(&self, job: &str) -> Result<Option<PariJobSpec>, PlatformError> {
        match self.jobs.get(job).await? {
            Some(r) if !r.state.is_terminal() => Ok(Some(Self::spec_of(&r)?)),
            _ => Ok(None),
        }
    }

    fn spec_of(rec: &jobs::JobRecord) -> Result<PariJobSpec, PlatformError> {
        serde_json::from_str(&rec.spec).map_err(|e| PlatformError::Corrupt(format!("job {} spec: {e}", rec.id)))
    }

    /// Worker: `pari.setup` and `pari.prove`.
    pub(crate) async fn pari_work(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(spec) = self.live_spec(job).await? else { return Ok(()) };
        let t = Self::pari_task(lease)?;
        match t.step.as_str() {
            "setup" => {
                let circuit = spec.circuit;
                let (pk, vk) = tokio::task::spawn_blocking(move || {
                    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
                    pari::setup::<Bls12_381, _, _>(circuit.blank::<Fr>(), &mut rng)
                })
                .await
                .map_err(corrupt)?
                .map_err(pari_err)?;
                self.blobs.put(&key(job, "pk.bin"), Bytes::from(pk.to_bytes())).await?;
                self.blobs.put(&key(job, "vk.bin"), Bytes::from(vk.to_bytes())).await?;
            }
            "prove" => {
                if t.index >= spec.prove_tasks() {
                    return Err(PlatformError::Corrupt(format!("prove task {} out of range", t.index)));
                }
                let pk = ProvingKey::<Bls12_381>::from_bytes(&self.blobs.get(&key(job, "pk.bin")).await?).map_err(pari_err)?;
                let (circuit, seeds) = (spec.circuit, spec.seeds(t.index));
                let list = tokio::task::spawn_blocking(move || -> Result<ProofList<Bls12_381>, pari::Error> {
                    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
                    let mut items = Vec::with_capacity(seeds.end.saturating_sub(seeds.start) as usize);
                    for seed in seeds {
                        let (c, x) = circuit.instance::<Fr>(seed);
                        items.push((x, pari::prove(&pk, c, &mut rng)?));
                    }
                    Ok(ProofList { items })
                })
                .await
                .map_err(corrupt)?
                .map_err(pari_err)?;
                ::metrics::counter!("prover_proofs_total", "kind" => "pari.proof").increment(list.items.len() as u64);
                self.blobs.put(&proofs_key(job, t.index), Bytes::from(list.to_bytes())).await?;
            }
            other => return Err(PlatformError::Corrupt(format!("unknown pari step {other:?}"))),
        }
        self.enqueue_pari(job, KIND_PARI_DONE, &t.step, t.index).await
    }

    /// Executor: a `pari.done` report.
    pub(crate) async fn pari_done(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(rec) = self.jobs.get(job).await? else { return Ok(()) };
        let t = Self::pari_task(lease)?;
        if rec.state == JobState::Cancelled && t.step == "prove" {
            // A worker finished after the cancellation's clean-up: remove what it wrote.
            self.blobs.delete(&proofs_key(job, t.index)).await?;
        }
        if rec.state.is_terminal() {
            return Ok(());
        }
        let spec = Self::spec_of(&rec)?;
        let again = lease.attempt > 1;
        match t.step.as_str() {
            "setup" => {
                self.jobs.task_done(job, KIND_PARI_SETUP, &task_id("setup", 0)).await?;
                for i in 0..spec.prove_tasks() {
                    if self.jobs.mark_released(job, &task_id("prove", i)).await? || again {
                        self.enqueue_pari(job, KIND_PARI_PROVE, "prove", i).await?;
                    }
                }
            }
            "prove" => {
                self.jobs.task_done(job, KIND_PARI_PROVE, &task_id("prove", t.index)).await?;
                let k = t.index / spec.tasks_per_bundle;
                for i in spec.bundle_tasks(k) {
                    if !self.jobs.is_done(job, &task_id("prove", i)).await? {
                        return Ok(());
                    }
                }
                if self.jobs.mark_released(job, &task_id("bundle", k)).await? || again {
                    self.enqueue_pari(job, KIND_PARI_BUNDLE, "bundle", k).await?;
                }
            }
            "bundle" => {
                self.jobs.task_done(job, KIND_PARI_BUNDLE, &task_id("bundle", t.index)).await?;
                let rec = self.record(job).await?;
                let b = rec.tasks.get(KIND_PARI_BUNDLE).copied().unwrap_or_default();
                if b.done == b.total && self.jobs.transition(job, JobState::Done, "").await? {
                    self.count_end(job, "done").await;
                    tracing::info!(job = %job, "job done");
                }
            }
            other => return Err(PlatformError::Corrupt(format!("unknown pari step {other:?}"))),
        }
        Ok(())
    }

    /// Aggregator: gathers, batch-verifies and publishes bundle `k`.
    pub(crate) async fn pari_bundle(&self, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(spec) = self.live_spec(job).await? else { return Ok(()) };
        let t = Self::pari_task(lease)?;
        let vk_bytes = self.blobs.get(&key(job, "vk.bin")).await?;
        let vk = VerifyingKey::<Bls12_381>::from_bytes(&vk_bytes).map_err(pari_err)?;
        let mut items = Vec::new();
        for i in spec.bundle_tasks(t.index) {
            let list = ProofList::<Bls12_381>::from_bytes(&self.blobs.get(&proofs_key(job, i)).await?).map_err(pari_err)?;
            items.extend(list.items);
        }
        let bundle = Bundle::new(&vk, items);
        let pvk: PreparedVerifyingKey<Bls12_381> = vk.prepare().map_err(pari_err)?;
        let (bundle, bad) = tokio::task::spawn_blocking(move || {
            let bad = bundle.locate_invalid(&pvk, &mut rand_chacha::ChaCha20Rng::from_entropy());
            (bundle, bad)
        })
        .await
        .map_err(corrupt)?;
        let bad = bad.map_err(pari_err)?;
        if !bad.is_empty() {
            let first = t.index * spec.tasks_per_bundle * spec.per_task;
            let seeds: Vec<u64> = bad.iter().map(|i| spec.seed_start + first + *i as u64).collect();
            self.fail_job(job, &format!("bundle {}: proofs for seeds {seeds:?} do not verify", t.index)).await?;
            return Ok(());
        }
        let dir = proof_prefix(job);
        let circuit = serde_json::json!({ "curve": "bls12-381", "circuit": spec.circuit });
        self.blobs.put(&format!("{dir}circuit.json"), Bytes::from(serde_json::to_vec_pretty(&circuit).expect("json"))).await?;
        self.blobs.put(&format!("{dir}vk.bin"), vk_bytes).await?;
        self.blobs.put(&format!("{dir}{}", bundle_name(t.index)), Bytes::from(bundle.to_bytes())).await?;
        self.enqueue_pari(job, KIND_PARI_DONE, "bundle", t.index).await
    }

    /// Verifies a Pari job's published bundles. `Err(reason)` if any fails.
    pub async fn verify_pari_outputs(&self, job: &str) -> Result<(), String> {
        let dir = proof_prefix(job);
        let vk = self.blobs.get(&format!("{dir}vk.bin")).await.map_err(|e| e.to_string())?;
        let vk = VerifyingKey::<Bls12_381>::from_bytes(&vk).map_err(|e| format!("vk.bin: {e}"))?;
        let keys = self.blobs.list(&dir).await.map_err(|e| e.to_string())?;
        let mut bundles = Vec::new();
        for k in keys.iter().filter(|k| k.rsplit('/').next().is_some_and(|n| n.starts_with("bundle-"))) {
            let b = self.blobs.get(k).await.map_err(|e| e.to_string())?;
            bundles.push((k.clone(), Bundle::<Bls12_381>::from_bytes(&b).map_err(|e| format!("{k}: {e}"))?));
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
            Ok(())
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

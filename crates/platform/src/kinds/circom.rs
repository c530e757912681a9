//! Bring your own circuit: circom circuits registered once, then proved with Pari per witness.
//!
//! * `circuit.register`: a user's `.r1cs` (uploaded) becomes a **registered circuit**. Its id is
//!   the file's digest ([`circom::digest`]); its prime names the curve (BN254 for circom's
//!   default `--prime bn128`, or BLS12-381). One `circuit.setup` task (a worker) runs the Pari
//!   setup, with randomness from the operating system that is kept nowhere (no stored object
//!   rebuilds the key or its trapdoor; proofs' randomness is drawn the same way), and stores `[tenants/<t>/]circuits/<id>/{circuit.r1cs, keys/<vk digest>/{pk,vk}.bin}`, then
//!   `circuit.json` last: a circuit exists once `circuit.json` does, and it names the key pair.
//!   Keys live under their own digest, so two registrations racing (each with its own setup)
//!   both leave valid key pairs and jobs keep the one they were submitted against.
//! * `pari.circom`: one Pari proof per uploaded `.wtns`, under the circuit's keys. The witnesses
//!   are copied into the job's inputs at submission (format and wire count checked there); a
//!   prove task (`circom.prove`) checks each of its witnesses against every constraint and fails
//!   the job naming the witness and the first constraint it breaks. Then, as for built-in
//!   families ([`super::pari`]), `circom.bundle` tasks batch-verify the proofs and
//!   publish `jobs/<id>/proof/{circuit.json, vk.bin, bundle-<k>.bin, public-<k>.json}`:
//!   `public-<k>.json` lists each proof's public signals (decimal, circom's order: outputs, then
//!   public inputs), the bundle itself carries them as the proofs' instances; `circom.publish`
//!   writes the manifest once every bundle is published. On the typed contract
//!   ([`super::contract`]); circuit registration is still on the older `JobKind`.
//!
//! Trust: the job's spec records the verifying key's digest at submission and the aggregator
//! refuses a `vk.bin` with another digest, so a key file replaced in the store cannot put a job's
//! bundles under another key; `prover pari verify-bundles --vk-digest` pins it offline.
//! Circuits are per tenant (the prefix), like jobs: another tenant's circuit id is unknown.

use std::collections::BTreeMap;
use std::sync::Arc;

use api::v1 as pb;
use ark_ec::pairing::Pairing;
use ark_ff::PrimeField;
use async_trait::async_trait;
use bytes::Bytes;
use jobs::JobRecord;
use ::pari::bundle::{Bundle, ProofList};
use ::pari::{KeyDigest, ProvingKey, VerifyingKey};
use queue::Lease;
use rand::SeedableRng;

use super::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use super::pari::{pari_err, read_proofs};
use super::{JobKind, JobRequest, Served, TaskKind, Validated};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const REGISTER_JOB: &str = "circuit.register";
pub const JOB: &str = "pari.circom";
pub const SETUP: TaskKind = TaskKind::new("circuit.setup", Served::Worker, 3600);
pub const SETUP_DONE: TaskKind = TaskKind::new("circuit.done", Served::Executor, 300);
pub const PROVE: TaskKind = TaskKind::new("circom.prove", Served::Worker, 1800);
pub const DONE: TaskKind = TaskKind::new("circom.done", Served::Executor, 300);
pub const BUNDLE: TaskKind = TaskKind::new("circom.bundle", Served::Aggregator, 1800);
/// The manifest, once every bundle is published.
pub const PUBLISH: TaskKind = TaskKind::new("circom.publish", Served::Aggregator, 300);
const REGISTER_TASKS: &[TaskKind] = &[SETUP, SETUP_DONE];
/// The id of a registration's one task, its setup.
const SETUP_ID: &str = "setup-0";

/// Most witnesses (proofs) in one job.
pub const MAX_WITNESSES: u64 = 1024;
/// Largest circuit the platform sets up (constraints): keys and setup time grow linearly.
pub const MAX_CONSTRAINTS: usize = 1 << 22;
/// Default proofs per prove task.
pub const DEFAULT_PER_TASK: u64 = 4;

const R1CS: &str = "circuit.r1cs";
const CIRCUIT_JSON: &str = "circuit.json";

/// The curve whose scalar field is a circuit's prime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Curve {
    #[serde(rename = "bn254")]
    Bn254,
    #[serde(rename = "bls12-381")]
    Bls12_381,
}

impl Curve {
    pub fn as_str(self) -> &'static str {
        match self {
            Curve::Bn254 => "bn254",
            Curve::Bls12_381 => "bls12-381",
        }
    }
}

/// Runs `$body` with `$E` bound to the pairing of `$curve`.
macro_rules! on_curve {
    ($curve:expr, $E:ident => $body:expr) => {
        match $curve {
            Curve::Bn254 => {
                type $E = ark_bn254::Bn254;
                $body
            }
            Curve::Bls12_381 => {
                type $E = ark_bls12_381::Bls12_381;
                $body
            }
        }
    };
}

/// A registered circuit, as `circuit.json` records it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CircuitInfo {
    pub circuit_id: String,
    pub curve: Curve,
    /// The digest of the verifying key (128 hex) its proofs are under.
    pub vk_digest: String,
    pub constraints: u64,
    pub wires: u64,
    pub public_outputs: u32,
    pub public_inputs: u32,
    /// The registration job.
    pub job_id: String,
}

/// Sizes of a decoded `.r1cs`.
struct Shape {
    curve: Curve,
    constraints: usize,
    wires: u32,
    public_outputs: u32,
    public_inputs: u32,
}

fn shape_of<F: PrimeField>(curve: Curve, r: &circom::R1cs<F>) -> Shape {
    Shape { curve, constraints: r.constraints.len(), wires: r.num_wires, public_outputs: r.num_pub_out, public_inputs: r.num_pub_in }
}

/// Decodes an `.r1cs` over whichever of the two curves its prime names.
fn decode_r1cs(bytes: &[u8]) -> Result<Shape, circom::Error> {
    match circom::R1cs::<ark_bn254::Fr>::from_bytes(bytes) {
        Ok(r) => Ok(shape_of(Curve::Bn254, &r)),
        Err(circom::Error::Prime { .. }) => {
            circom::R1cs::<ark_bls12_381::Fr>::from_bytes(bytes).map(|r| shape_of(Curve::Bls12_381, &r))
        }
        Err(e) => Err(e),
    }
}

/// A circuit id: 64 lowercase hex digits.
pub(crate) fn check_circuit_id(id: &str) -> Result<(), PlatformError> {
    if id.len() != 64 || !id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(invalid("circuit_id", format!("{id:?} is not a circuit id (64 lowercase hex digits)")));
    }
    Ok(())
}

/// An uploaded object the tenant may name: under its upload prefix, no `..`.
pub(crate) fn check_upload(field: &'static str, tenant: &str, key: &str) -> Result<(), PlatformError> {
    let root = layout::uploads_root(tenant);
    if !key.starts_with(&root) || key.contains("..") {
        return Err(invalid(field, format!("{key:?} is not under your upload prefix {root} (upload it with UploadInput / prover upload)")));
    }
    Ok(())
}

async fn get_upload(p: &Platform, field: &'static str, key: &str) -> Result<Bytes, PlatformError> {
    match p.blobs().get(key).await {
        Ok(b) => Ok(b),
        Err(blobstore::BlobError::NotFound(_)) => Err(invalid(field, format!("{key:?}: no such upload"))),
        Err(e) => Err(e.into()),
    }
}

impl Platform {
    /// The tenant's registered circuit `id`, if its registration has finished.
    pub async fn registered_circuit(&self, tenant: &str, id: &str) -> Result<Option<CircuitInfo>, PlatformError> {
        check_circuit_id(id)?;
        match self.blobs().get(&layout::circuit_file(tenant, id, CIRCUIT_JSON)).await {
            Ok(b) => Ok(Some(serde_json::from_slice(&b).map_err(|e| corrupt(format!("circuit {id}: {CIRCUIT_JSON}: {e}")))?)),
            Err(blobstore::BlobError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The verifying key (`vk.bin`) of a registered circuit, checked against its digest.
    pub async fn registered_vk(&self, tenant: &str, info: &CircuitInfo) -> Result<Bytes, PlatformError> {
        let vk = self.blobs().get(&layout::circuit_key(tenant, &info.circuit_id, &info.vk_digest, "vk.bin")).await?;
        if KeyDigest::of_bytes(&vk).to_string() != info.vk_digest {
            return Err(corrupt(format!("circuit {}: vk.bin does not have the digest circuit.json names", info.circuit_id)));
        }
        Ok(vk)
    }

    /// The tenant's registered circuits.
    pub async fn registered_circuits(&self, tenant: &str) -> Result<Vec<CircuitInfo>, PlatformError> {
        let mut out = Vec::new();
        let root = layout::circuits_root(tenant);
        for key in self.blobs().list(&root).await? {
            let Some(id) = key.strip_prefix(&root).and_then(|rest| rest.strip_suffix(&format!("/{CIRCUIT_JSON}"))) else { continue };
            if id.contains('/') || check_circuit_id(id).is_err() {
                continue;
            }
            if let Some(info) = self.registered_circuit(tenant, id).await? {
                out.push(info);
            }
        }
        Ok(out)
    }

    /// Deletes `tenant`'s circuit `id` and returns how many objects went, or None when nothing
    /// of it is stored. Refused (naming the job) while a job of the tenant that proves or
    /// registers it has not ended. `circuit.json` goes first, so from then on the circuit is
    /// unknown: a submission that read it an instant before fails when its task reads the key,
    /// naming it. Proofs already published keep their own `vk.bin`.
    pub async fn delete_circuit(&self, tenant: &str, id: &str) -> Result<Option<usize>, PlatformError> {
        check_circuit_id(id)?;
        if let Some(job) = self.unended_job_of_circuit(tenant, id).await? {
            return Err(PlatformError::Precondition(format!("circuit {id} is in use by job {job}, which has not ended: cancel it or wait")));
        }
        let json = layout::circuit_file(tenant, id, CIRCUIT_JSON);
        let had_json = self.blobs().exists(&json).await?;
        if had_json {
            self.blobs().delete(&json).await?;
        }
        let rest = self.blobs().delete_prefix(&layout::circuit_prefix(tenant, id)).await?;
        // Given back whatever was stored (a registration that failed after its charge too).
        self.job_store().uncharge(tenant, jobs::Usage::Circuits, id).await?;
        let deleted = rest + usize::from(had_json);
        if deleted > 0 {
            tracing::info!(tenant, circuit = id, objects = deleted, "circuit deleted");
        }
        Ok((deleted > 0).then_some(deleted))
    }

    /// A job of `tenant` that has not ended and proves (`pari.circom`) or registers
    /// (`circuit.register`) circuit `id`. Pages through the tenant's job index: as many jobs as
    /// its retention keeps.
    async fn unended_job_of_circuit(&self, tenant: &str, id: &str) -> Result<Option<String>, PlatformError> {
        const PAGE: u64 = 500;
        let store = self.job_store();
        let mut offset = Some(0);
        while let Some(at) = offset {
            let (recs, next) = if tenant.is_empty() { store.list(at, PAGE).await } else { store.list_tenant(tenant, at, PAGE).await }.map_err(PlatformError::from)?;
            for r in recs {
                if r.state.is_terminal() || !matches!(r.kind.as_str(), "pari.circom" | "circuit.register" | "testudo") {
                    continue;
                }
                let spec: serde_json::Value = serde_json::from_str(&r.spec).map_err(|e| corrupt(format!("job {} spec: {e}", r.id)))?;
                if spec.get("circuit_id").and_then(|v| v.as_str()) == Some(id) {
                    return Ok(Some(r.id));
                }
            }
            offset = next;
        }
        Ok(None)
    }

    /// Registers the uploaded `.r1cs` at `r1cs_key` for `tenant`: the circuit id, and either
    /// the circuit (registered already) or the registration job (created now, or the one
    /// already running for this file).
    pub async fn register_circuit(&self, tenant: &str, r1cs_key: &str) -> Result<(String, Option<CircuitInfo>, Option<String>), PlatformError> {
        check_upload("r1cs_object_key", tenant, r1cs_key)?;
        let bytes = get_upload(self, "r1cs_object_key", r1cs_key).await?;
        let id = circom::digest(&bytes);
        if let Some(info) = self.registered_circuit(tenant, &id).await? {
            return Ok((id, Some(info), None));
        }
        let request = || JobRequest::CircuitRegister { tenant: tenant.to_string(), r1cs_object: r1cs_key.to_string(), r1cs: bytes.clone() };
        // One registration job per file (per tenant); a failed or cancelled one is replaced.
        let mut key = format!("register-circuit/{id}");
        let (mut job, _) = self.submit_as(tenant, request(), Some(&key)).await?;
        for _ in 0..3 {
            let rec = self.record(&job).await?;
            if !matches!(rec.state, jobs::JobState::Failed | jobs::JobState::Cancelled) {
                break;
            }
            key = format!("register-circuit/{id}/{job}");
            job = self.submit_as(tenant, request(), Some(&key)).await?.0;
        }
        Ok((id, None, Some(job)))
    }
}

/// Most jobs in one cross-job bundle ([`Platform::circuit_bundle`]).
pub const MAX_BUNDLE_JOBS: usize = 64;
/// Most proofs in one cross-job bundle.
pub const MAX_BUNDLE_PROOFS: usize = 1 << 16;

/// A bundle of proofs from several jobs under one key ([`Platform::circuit_bundle`]).
pub struct CircuitBundle {
    pub curve: Curve,
    pub vk_digest: String,
    pub vk: Bytes,
    /// `bundle-*.bin` format.
    pub bundle: Vec<u8>,
    /// Per entry: its job and witness index.
    pub sources: Vec<(String, u64)>,
}

impl Platform {
    /// One bundle of the published proofs of `jobs` (done `pari.circom` jobs of `tenant`'s
    /// circuit `circuit_id`, all under one key), in the order given. The proofs are copied, not
    /// verified again: the consumer verifies the bundle, pinned to its key's digest.
    pub async fn circuit_bundle(&self, tenant: &str, circuit_id: &str, jobs: &[String]) -> Result<CircuitBundle, PlatformError> {
        check_circuit_id(circuit_id)?;
        if jobs.is_empty() || jobs.len() > MAX_BUNDLE_JOBS {
            return Err(invalid("job_ids", format!("give 1 to {MAX_BUNDLE_JOBS} jobs, got {}", jobs.len())));
        }
        let mut key: Option<(Curve, String)> = None;
        let mut parts = Vec::with_capacity(jobs.len());
        for job in jobs {
            let rec = match self.job_store().get(job).await? {
                Some(r) if r.tenant == tenant => r,
                // Another tenant's job reads as unknown.
                _ => return Err(PlatformError::NotFound(job.clone())),
            };
            if rec.kind != JOB {
                return Err(invalid("job_ids", format!("job {job} is a {} job, not {JOB}", rec.kind)));
            }
            if rec.state != jobs::JobState::Done {
                return Err(PlatformError::Precondition(format!("job {job} is {}, not done", rec.state.as_str())));
            }
            let spec = contract::spec_of::<PariCircom>(&rec)?;
            if spec.circuit_id != circuit_id {
                return Err(invalid("job_ids", format!("job {job} proves circuit {}, not {circuit_id}", spec.circuit_id)));
            }
            let k = spec.key()?;
            match &key {
                None => key = Some((k.curve, k.vk_digest.clone())),
                Some((_, d)) if *d != k.vk_digest => {
                    return Err(invalid("job_ids", format!("job {job} is under vk digest {}, the first job under {d}", k.vk_digest)));
                }
                Some(_) => {}
            }
            parts.push((rec.id, spec));
        }
        let (curve, vk_digest) = key.expect("at least one job");
        let vk = self.blobs().get(&layout::proof_file(&parts[0].0, "vk.bin")).await?;
        if KeyDigest::of_bytes(&vk).to_string() != vk_digest {
            return Err(corrupt(format!("job {}: the published vk.bin does not have the job's vk digest", parts[0].0)));
        }
        let total: u64 = parts.iter().map(|(_, s)| s.n()).sum();
        if total > MAX_BUNDLE_PROOFS as u64 {
            return Err(invalid("job_ids", format!("{total} proofs in all, at most {MAX_BUNDLE_PROOFS}")));
        }
        let mut files = Vec::with_capacity(parts.len());
        for (job, spec) in &parts {
            let mut bundles = Vec::new();
            for k in 0..spec.bundles() {
                bundles.push(self.blobs().get(&layout::proof_file(job, &layout::pari_bundle_name(k))).await?);
            }
            files.push((job.clone(), bundles));
        }
        let vk2 = vk.clone();
        let (bundle, sources) = crate::work::blocking(move |_| on_curve!(curve, E => merge::<E>(&vk2, &files))).await??;
        Ok(CircuitBundle { curve, vk_digest, vk, bundle, sources })
    }
}

/// The entries of every job's bundles, in order, as one bundle under `vk`.
#[allow(clippy::type_complexity)]
fn merge<E: Pairing>(vk: &[u8], files: &[(String, Vec<Bytes>)]) -> Result<(Vec<u8>, Vec<(String, u64)>), PlatformError> {
    let vk = VerifyingKey::<E>::from_bytes(vk).map_err(pari_err)?;
    let (mut items, mut sources) = (Vec::new(), Vec::new());
    for (job, bundles) in files {
        let mut witness = 0u64;
        for b in bundles {
            let b = ::pari::bundle::Bundle::<E>::from_bytes(b).map_err(|e| corrupt(format!("job {job}: {e}")))?;
            for item in b.items {
                items.push(item);
                sources.push((job.clone(), witness));
                witness += 1;
            }
        }
    }
    Ok((::pari::bundle::Bundle::new(&vk, items).to_bytes(), sources))
}

/// The spec of a `circuit.register` job.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct RegisterSpec {
    circuit_id: String,
    curve: Curve,
    /// The tenant's circuit quota when the registration was submitted (`None`: none), which
    /// the setup checks before it writes the keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    max_circuit_bytes: Option<u64>,
}

/// A registered circuit's charge besides its `.r1cs` and keys: its `circuit.json`.
const CIRCUIT_JSON_BYTES: u64 = 4096;

/// The key a `pari.circom` job proves under, resolved at submission from the registered
/// circuit: its curve and verifying key's digest.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CircuitKey {
    pub curve: Curve,
    pub vk_digest: String,
}

/// A `pari.circom` job: one proof per witness of `tenant`'s registered circuit `circuit_id`,
/// `per_task` to a prove task, in bundles of `bundle_size` proofs (rounded up to whole prove
/// tasks). `key` is resolved when the job is submitted (the job's proofs are under it).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CircomJobSpec {
    pub circuit_id: String,
    /// The uploaded `.wtns` objects as named at submission (copied into the job's inputs).
    pub witnesses: Vec<String>,
    pub per_task: u64,
    pub bundle_size: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<CircuitKey>,
}

impl CircomJobSpec {
    /// The request, with the defaults for a zero `per_task` (4) or `bundle_size` (1,024).
    pub fn request(circuit_id: impl Into<String>, witnesses: Vec<String>, per_task: u64, bundle_size: u64) -> Self {
        Self {
            circuit_id: circuit_id.into(),
            witnesses,
            per_task: if per_task == 0 { DEFAULT_PER_TASK } else { per_task },
            bundle_size: if bundle_size == 0 { MAX_WITNESSES } else { bundle_size },
            key: None,
        }
    }

    /// The bounds every spec keeps (a spec read back from the shared job store is input too).
    fn check(&self) -> Result<(), PlatformError> {
        check_circuit_id(&self.circuit_id)?;
        let key = self.key.as_ref().ok_or_else(|| invalid("circuit_id", "the circuit's key was not resolved"))?;
        key.vk_digest.parse::<KeyDigest>().map_err(|e| invalid("vk_digest", e.to_string()))?;
        let n = self.witnesses.len() as u64;
        if n == 0 || n > MAX_WITNESSES {
            return Err(invalid("witness_object_keys", format!("give 1 to {MAX_WITNESSES} witnesses, got {n}")));
        }
        if self.per_task == 0 || self.per_task > 64 {
            return Err(invalid("proofs_per_task", format!("must be in 1..=64, got {}", self.per_task)));
        }
        if self.bundle_size == 0 || self.bundle_size > MAX_WITNESSES {
            return Err(invalid("bundle_size", format!("must be in 1..={MAX_WITNESSES}, got {}", self.bundle_size)));
        }
        Ok(())
    }

    /// The resolved key (every checked spec has one).
    fn key(&self) -> Result<&CircuitKey, PlatformError> {
        self.key.as_ref().ok_or_else(|| corrupt(format!("circuit {}: the job records no key", self.circuit_id)))
    }

    fn n(&self) -> u64 {
        self.witnesses.len() as u64
    }

    pub fn prove_tasks(&self) -> u64 {
        self.n().div_ceil(self.per_task)
    }

    fn tasks_per_bundle(&self) -> u64 {
        self.bundle_size.div_ceil(self.per_task)
    }

    fn bundles(&self) -> u64 {
        self.prove_tasks().div_ceil(self.tasks_per_bundle())
    }

    /// Prove tasks gathered by bundle `k`.
    fn bundle_tasks(&self, k: u64) -> std::ops::Range<u64> {
        let lo = k * self.tasks_per_bundle();
        lo..(lo + self.tasks_per_bundle()).min(self.prove_tasks())
    }

    /// Witnesses proved by prove task `i`.
    fn witnesses_of(&self, i: u64) -> std::ops::Range<u64> {
        let lo = i * self.per_task;
        lo..(lo + self.per_task).min(self.n())
    }
}

/// The in-process request for a `pari.circom` job.
pub fn request(circuit_id: &str, witnesses: Vec<String>, per_task: u64, bundle_size: u64) -> JobRequest {
    contract::spec_request::<PariCircom>(&CircomJobSpec::request(circuit_id, witnesses, per_task, bundle_size))
}

fn witness_input(i: u64) -> String {
    format!("wtns-{i}.wtns")
}

/// The job's record if it has not ended (its tasks are dropped otherwise).
async fn live_record(p: &Platform, job: &str) -> Result<Option<JobRecord>, PlatformError> {
    Ok(p.job_store().get(job).await?.filter(|r| !r.state.is_terminal()))
}

/// `circuit.register`.
pub struct CircuitRegister;

#[async_trait]
impl JobKind for CircuitRegister {
    fn name(&self) -> &'static str {
        REGISTER_JOB
    }
    fn limits(&self) -> Vec<crate::limits::Limit> {
        vec![crate::limits::Limit::new(REGISTER_JOB, "r1cs_object_key", MAX_CONSTRAINTS as u64, "count", "constraints of a registered circuit")]
    }
    fn task_kinds(&self) -> &'static [TaskKind] {
        REGISTER_TASKS
    }

    async fn validate(&self, p: &Platform, _tenant: &str, request: JobRequest) -> Result<Validated, PlatformError> {
        let JobRequest::CircuitRegister { tenant, r1cs_object, r1cs: bytes } = request else {
            return Err(PlatformError::Config("circuit.register: not a registration".into()));
        };
        check_upload("r1cs_object_key", &tenant, &r1cs_object)?;
        let shape = tokio::task::spawn_blocking({
            let bytes = bytes.clone();
            move || decode_r1cs(&bytes)
        })
        .await
        .map_err(corrupt)?
        .map_err(|e| invalid("r1cs_object_key", e.to_string()))?;
        if shape.constraints > MAX_CONSTRAINTS {
            return Err(invalid("r1cs_object_key", format!("{} constraints, at most {MAX_CONSTRAINTS} on the platform", shape.constraints)));
        }
        if shape.constraints == 0 {
            return Err(invalid("r1cs_object_key", "the circuit has no constraints"));
        }
        let max_circuit_bytes = if tenant.is_empty() { None } else { p.config().quotas.max_circuit_bytes };
        // Refused now when the file alone would pass the quota; the keys are charged (and the
        // quota checked again) by the setup, which knows their size.
        if let Some(max) = max_circuit_bytes {
            let held = p.job_store().usage(&tenant, jobs::Usage::Circuits).await?;
            if held.saturating_add(bytes.len() as u64) > max {
                return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_CIRCUIT_BYTES, max }.into());
            }
        }
        let spec = RegisterSpec { circuit_id: circom::digest(&bytes), curve: shape.curve, max_circuit_bytes };
        Ok(Validated {
            spec: serde_json::to_string(&spec).map_err(corrupt)?,
            inputs: vec![(R1CS.to_string(), bytes)],
            tasks: BTreeMap::from([(SETUP.name, 1)]),
            secrets: Vec::new(),
            copies: Vec::new(),
        })
    }

    async fn plan(&self, p: &Platform, job: &JobRecord) -> Result<(), PlatformError> {
        p.dispatch(&job.id, SETUP, SETUP_ID, String::new()).await.map(|_| ())
    }

    /// Worker: the setup, once per circuit.
    async fn work(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        let Some(rec) = live_record(p, job).await? else { return Ok(()) };
        let spec: RegisterSpec = serde_json::from_str(&rec.spec).map_err(|e| corrupt(format!("job {job} spec: {e}")))?;
        let tenant = rec.tenant.as_str();
        let info = match p.registered_circuit(tenant, &spec.circuit_id).await? {
            // Registered already (by an earlier delivery of this task, or another registration).
            Some(info) => info,
            None => {
                let r1cs = p.blobs().get(&layout::input(job, R1CS)).await?;
                if circom::digest(&r1cs) != spec.circuit_id {
                    return Err(corrupt(format!("{R1CS}: not the circuit {} the job registers", spec.circuit_id)));
                }
                let curve = spec.curve;
                let bytes = r1cs.clone();
                let (shape, pk, vk) = crate::work::blocking(move |_| on_curve!(curve, E => setup::<E>(curve, &bytes))).await??;
                let vk_digest = KeyDigest::of_bytes(&vk).to_string();
                let id = &spec.circuit_id;
                // The tenant's circuit quota, charged what is about to be written (a delivery
                // again charges the same again: per circuit id). Past it, the job fails naming
                // the quota and writes nothing.
                let size = (r1cs.len() + pk.len() + vk.len()) as u64 + CIRCUIT_JSON_BYTES;
                p.job_store().charge(tenant, jobs::Usage::Circuits, id, size, spec.max_circuit_bytes, None).await?;
                p.blobs().put(&layout::circuit_file(tenant, id, R1CS), r1cs).await?;
                p.blobs().put(&layout::circuit_key(tenant, id, &vk_digest, "pk.bin"), Bytes::from(pk)).await?;
                p.blobs().put(&layout::circuit_key(tenant, id, &vk_digest, "vk.bin"), Bytes::from(vk)).await?;
                let info = CircuitInfo {
                    circuit_id: id.clone(),
                    curve,
                    vk_digest,
                    constraints: shape.constraints as u64,
                    wires: u64::from(shape.wires),
                    public_outputs: shape.public_outputs,
                    public_inputs: shape.public_inputs,
                    job_id: job.clone(),
                };
                // Last: the circuit exists from here on.
                let json = Bytes::from(serde_json::to_vec_pretty(&info).map_err(corrupt)?);
                p.blobs().put(&layout::circuit_file(tenant, id, CIRCUIT_JSON), json).await?;
                tracing::info!(circuit = %id, curve = curve.as_str(), constraints = shape.constraints, "circuit registered");
                info
            }
        };
        // The job's own outputs: what was registered, and the key to pin.
        let vk = p.registered_vk(tenant, &info).await?;
        p.blobs().put(&layout::proof_file(job, CIRCUIT_JSON), Bytes::from(serde_json::to_vec_pretty(&info).map_err(corrupt)?)).await?;
        p.blobs().put(&layout::proof_file(job, "vk.bin"), vk).await?;
        p.report(lease, SETUP_DONE).await
    }

    async fn on_done(&self, p: &Platform, _task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let job = &lease.task.job_id;
        if !p.live(job).await? {
            return Ok(());
        }
        p.job_store().task_done(job, SETUP.name, SETUP_ID).await?;
        let pins = crate::manifest::published_field(p, job, CIRCUIT_JSON, "vk_digest").await?.map(|d| ("vk_digest".to_string(), d)).into_iter().collect();
        crate::manifest::Manifest::publish(p, job, REGISTER_JOB, pins, Vec::new()).await?;
        p.end(job, crate::Ending::Done).await.map(|_| ())
    }

    async fn verify_outputs(&self, _p: &Platform, _job: &JobRecord, _pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        // A registration publishes a key (GetCircuit returns it with its digest); the proofs
        // made under it are the pari.circom jobs'.
        Err(super::no_proof(self.name()))
    }
    fn scratch_prefixes(&self, job: &str) -> Vec<String> {
        vec![layout::inputs_prefix(job)]
    }
}

/// The setup of a circom circuit: its shape and the key pair's bytes.
/// Its randomness comes from the operating system and is kept nowhere: nothing stored rebuilds
/// the key (its trapdoor dies with this call). Keys live under their own digest, so a
/// redelivered setup that makes another pair harms nothing (see the module doc).
fn setup<E: Pairing>(curve: Curve, r1cs: &[u8]) -> Result<(Shape, Vec<u8>, Vec<u8>), PlatformError> {
    let r = circom::R1cs::<E::ScalarField>::from_bytes(r1cs).map_err(|e| corrupt(format!("{R1CS}: {e}")))?;
    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
    let (pk, vk) = ::pari::setup::<E, _, _>(circom::CircomCircuit { r1cs: &r, witness: None }, &mut rng).map_err(pari_err)?;
    Ok((shape_of(curve, &r), pk.to_bytes(), vk.to_bytes()))
}

/// The steps of a `pari.circom` job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Prove,
    Bundle,
    Publish,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Prove, Step::Bundle, Step::Publish];
    fn task(self) -> TaskKind {
        match self {
            Step::Prove => PROVE,
            Step::Bundle => BUNDLE,
            Step::Publish => PUBLISH,
        }
    }
}

/// `pari.circom`.
pub struct PariCircom;

#[async_trait]
impl Kind for PariCircom {
    const NAME: &'static str = JOB;
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = CircomJobSpec;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<CircomJobSpec, PlatformError>> {
        let pb::submit_job_request::Params::PariCircom(p) = params else { return None };
        Some(Ok(CircomJobSpec::request(p.circuit_id.clone(), p.witness_object_keys.clone(), p.proofs_per_task, p.bundle_size)))
    }

    fn check(spec: &CircomJobSpec) -> Result<(), PlatformError> {
        spec.check()
    }

    /// Resolves the circuit's key (recorded with the job) and checks each witness by its head.
    async fn validate(&self, p: &Platform, tenant: &str, spec: &mut CircomJobSpec) -> Result<Planned<Step>, PlatformError> {
        check_circuit_id(&spec.circuit_id)?;
        let info = p.registered_circuit(tenant, &spec.circuit_id).await?.ok_or_else(|| {
            invalid("circuit_id", format!("no circuit {} is registered (RegisterCircuit / prover circuit register), or its registration has not finished", spec.circuit_id))
        })?;
        spec.key = Some(CircuitKey { curve: info.curve, vk_digest: info.vk_digest.clone() });
        spec.check()?;
        // Each witness: the tenant's, listed once, and a `.wtns` of this circuit's field and
        // wire count, judged by its head and size alone (a ranged read): the object store copies
        // it into the job's inputs, so the planner never holds witnesses, however many a job
        // lists. Its values and constraints are checked by the prove task, which reads it whole.
        let mut seen = std::collections::HashMap::with_capacity(spec.witnesses.len());
        let mut copies = Vec::with_capacity(spec.witnesses.len());
        for (i, key) in spec.witnesses.iter().enumerate() {
            check_upload("witness_object_keys", tenant, key)?;
            if let Some(j) = seen.insert(key.as_str(), i) {
                return Err(invalid("witness_object_keys", format!("[{i}] {key:?} is listed already as [{j}]: list each witness once")));
            }
            let size = match p.blobs().size(key).await {
                Err(blobstore::BlobError::NotFound(_)) => return Err(invalid("witness_object_keys", format!("[{i}] {key:?}: no such upload"))),
                r => r?,
            };
            let head = p.blobs().get_range(key, 0, size.min(circom::WTNS_HEAD_BYTES as u64)).await?;
            let bad = |e: String| invalid("witness_object_keys", format!("[{i}] {key:?}: {e}"));
            let head = on_curve!(info.curve, E => circom::wtns_head::<<E as Pairing>::ScalarField>(&head)).map_err(|e| bad(e.to_string()))?;
            if head.file_len != size {
                return Err(bad(format!("{size} bytes, but its header makes a file of {}", head.file_len)));
            }
            if head.wires != info.wires {
                return Err(bad(format!("{} wires, the circuit has {}", head.wires, info.wires)));
            }
            copies.push(super::InputCopy { name: witness_input(i as u64), from: key.clone(), size, field: "witness_object_keys" });
        }
        let tasks = vec![(Step::Prove, spec.prove_tasks()), (Step::Bundle, spec.bundles()), (Step::Publish, 1)];
        Ok(Planned { copies, ..Planned::tasks(tasks) })
    }

    fn plan(spec: &CircomJobSpec) -> Vec<Effect<Step>> {
        vec![Effect::Release { step: Step::Prove, n: spec.prove_tasks(), freed: 0 }]
    }

    /// Prove task `i` (its witnesses, one proof each).
    async fn work(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        let (id, spec) = (job.id(), &job.spec);
        if step != Step::Prove {
            return Err(corrupt(format!("{JOB}: {step:?} is the aggregator's")));
        }
        if index >= spec.prove_tasks() {
            return Err(corrupt(format!("prove task {index} out of range")));
        }
        let mut wtns = Vec::new();
        for i in spec.witnesses_of(index) {
            wtns.push((i, p.blobs().get(&layout::input(id, &witness_input(i))).await?));
        }
        let outcome = on_curve!(spec.key()?.curve, E => {
            let circuit = prover_circuit::<E>(p, &job.record.tenant, spec).await?;
            crate::work::blocking(move |cancel| prove_list::<E>(&circuit, &wtns, cancel)).await??
        });
        match outcome {
            Ok((list, n)) => {
                ::metrics::counter!("prover_proofs_total", "kind" => "circom.proof").increment(n);
                p.blobs().put(&layout::pari_proofs(id, index), Bytes::from(list)).await?;
                Ok(String::new())
            }
            // A witness that does not satisfy the circuit: the job cannot succeed.
            Err(reason) => Err(contract::reject(reason)),
        }
    }

    /// Prove tasks in the job's window, bundle `k` once its prove range is done, the manifest
    /// once every bundle is published.
    fn on_done(spec: &CircomJobSpec, progress: &Progress<Step>, report: &Report<Step>) -> Vec<Effect<Step>> {
        match report.step {
            Step::Prove => {
                let k = report.index / spec.tasks_per_bundle();
                vec![
                    Effect::Release { step: Step::Prove, n: spec.prove_tasks(), freed: progress.done(Step::Prove) },
                    Effect::Join { step: Step::Bundle, index: k, of: Step::Prove, after: spec.bundle_tasks(k) },
                ]
            }
            Step::Bundle if progress.complete(Step::Bundle) => vec![Effect::Dispatch(Step::Publish, 0..1)],
            Step::Bundle => Vec::new(),
            Step::Publish => vec![Effect::Done],
        }
    }

    /// `circom.bundle`: gathers, batch-verifies and publishes bundle `k`; `circom.publish`: the
    /// manifest.
    async fn finish(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        let spec = &job.spec;
        if step == Step::Publish {
            super::pari::publish_manifest(p, job.id(), JOB).await?;
            return Ok(String::new());
        }
        if index >= spec.bundles() {
            return Err(corrupt(format!("bundle {index} out of range")));
        }
        let key = spec.key()?;
        let vk = p.blobs().get(&layout::circuit_key(&job.record.tenant, &spec.circuit_id, &key.vk_digest, "vk.bin")).await?;
        on_curve!(key.curve, E => publish_bundle::<E>(p, job.id(), spec, index, vk).await)?;
        Ok(String::new())
    }

    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: super::Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Ok(super::pari::verify_outputs(p, job.id(), super::pari::pinned_key(pins)?.as_ref()).await)
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![layout::pari_prefix(job), layout::inputs_prefix(job)]
    }

    fn limits() -> Vec<crate::limits::Limit> {
        use crate::limits::Limit;
        vec![
            Limit::new(JOB, "witness_object_keys", MAX_WITNESSES, "count", "witnesses of the job"),
            Limit::new(JOB, "bundle_size", MAX_WITNESSES, "count", "proofs of one bundle"),
        ]
    }
}

/// A registered circuit decoded for proving: its constraints and proving key.
struct ProverCircuit<E: Pairing> {
    r1cs: circom::R1cs<E::ScalarField>,
    pk: ProvingKey<E>,
}

/// The circuit and proving key of a job's key pair, decoded once per process (the cache):
/// decoding a proving key checks every point, which costs more than proving a small circuit.
async fn prover_circuit<E: Pairing>(p: &Platform, tenant: &str, spec: &CircomJobSpec) -> Result<Arc<ProverCircuit<E>>, PlatformError> {
    let pk_key = layout::circuit_key(tenant, &spec.circuit_id, &spec.key()?.vk_digest, "pk.bin");
    let name = format!("circom/{pk_key}");
    if let Some(c) = p.cache().get::<ProverCircuit<E>>(&name) {
        return Ok(c);
    }
    let r1cs = p.blobs().get(&layout::circuit_file(tenant, &spec.circuit_id, R1CS)).await?;
    if circom::digest(&r1cs) != spec.circuit_id {
        return Err(corrupt(format!("circuit {}: {R1CS} does not have the circuit's digest", spec.circuit_id)));
    }
    let pk = p.blobs().get(&pk_key).await?;
    // Decoded sizes: a constraint term holds a 32-byte coefficient as the file does; the key
    // says what it holds.
    let r1cs_size = r1cs.len() as u64;
    let c = crate::work::blocking(move |_| -> Result<ProverCircuit<E>, PlatformError> {
        let r1cs = circom::R1cs::<E::ScalarField>::from_bytes(&r1cs).map_err(|e| corrupt(format!("{R1CS}: {e}")))?;
        Ok(ProverCircuit { r1cs, pk: ProvingKey::<E>::from_bytes(&pk).map_err(pari_err)? })
    })
    .await??;
    let size = r1cs_size + c.pk.heap_size();
    let c = Arc::new(c);
    p.cache().put(&name, c.clone(), size);
    Ok(c)
}

/// The proofs of one prove task (a [`ProofList`]'s bytes and its length), or why a witness
/// cannot be proved (it names the witness and the first constraint it breaks).
#[allow(clippy::type_complexity)]
fn prove_list<E: Pairing>(c: &ProverCircuit<E>, wtns: &[(u64, Bytes)], cancel: &crate::work::Cancel) -> Result<Result<(Vec<u8>, u64), String>, PlatformError> {
    let (r, pk) = (&c.r1cs, &c.pk);
    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
    let mut items = Vec::with_capacity(wtns.len());
    for (i, bytes) in wtns {
        cancel.check()?;
        let w = circom::read_wtns::<E::ScalarField>(bytes).map_err(|e| corrupt(format!("witness {i}: {e}")))?;
        if let Err(e) = r.check_witness(&w) {
            return Ok(Err(format!("witness {i} (witness_object_keys[{i}]): {e}")));
        }
        let x = r.public_signals(&w).to_vec();
        let circuit = circom::CircomCircuit { r1cs: r, witness: Some(&w) };
        let proof = cancel.with_interrupt(|stop| ::pari::prove_interruptible(pk, circuit, &mut rng, stop)).map_err(pari_err)?;
        items.push((x, proof));
    }
    let n = items.len() as u64;
    Ok(Ok((ProofList { items }.to_bytes(), n)))
}

/// Batch-verifies bundle `k` of a job under the circuit's key (refusing a key with another
/// digest than the job's) and publishes it with its public signals, or fails the job naming
/// the witnesses whose proofs do not verify.
async fn publish_bundle<E: Pairing>(p: &Platform, job: &str, spec: &CircomJobSpec, k: u64, vk_bytes: Bytes) -> Result<(), PlatformError> {
    let key = spec.key()?;
    let digest: KeyDigest = key.vk_digest.parse().map_err(corrupt)?;
    let vk = VerifyingKey::<E>::from_bytes_pinned(&vk_bytes, &digest).map_err(pari_err)?;
    let items = read_proofs::<E>(p, job, spec.bundle_tasks(k)).await?;
    // One batch with the bundles of other jobs under this key that arrive meanwhile.
    let bad = p.batcher().verify(vk.clone(), items.clone()).await?;
    let bundle = Bundle::new(&vk, items);
    let first = k * spec.tasks_per_bundle() * spec.per_task;
    if !bad.is_empty() {
        let witnesses: Vec<u64> = bad.iter().map(|i| first + *i as u64).collect();
        return Err(contract::reject(format!("bundle {k}: the proofs of witnesses {witnesses:?} do not verify")));
    }
    let public: Vec<serde_json::Value> = bundle
        .items
        .iter()
        .enumerate()
        .map(|(i, (x, _))| {
            serde_json::json!({ "witness": first + i as u64, "public": x.iter().map(|v| v.to_string()).collect::<Vec<_>>() })
        })
        .collect();
    let circuit = serde_json::json!({
        "curve": key.curve.as_str(),
        "circuit_id": spec.circuit_id,
        "vk_digest": key.vk_digest,
    });
    let put = |name: String, bytes: Vec<u8>| {
        let key = layout::proof_file(job, &name);
        async move { p.blobs().put(&key, Bytes::from(bytes)).await }
    };
    put(CIRCUIT_JSON.into(), serde_json::to_vec_pretty(&circuit).map_err(corrupt)?).await?;
    put("vk.bin".into(), vk_bytes.to_vec()).await?;
    put(format!("public-{k}.json"), serde_json::to_vec_pretty(&public).map_err(corrupt)?).await?;
    put(layout::pari_bundle_name(k), bundle.to_bytes()).await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> CircomJobSpec {
        let witnesses = (0..5).map(|i| format!("tenants/t/uploads/w{i}.wtns")).collect();
        CircomJobSpec { key: Some(CircuitKey { curve: Curve::Bn254, vk_digest: "00".repeat(64) }), ..CircomJobSpec::request("ab".repeat(32), witnesses, 2, 4) }
    }

    #[test]
    fn stored_specs_are_checked_when_decoded() {
        let good = spec();
        let json = serde_json::to_value(&good).unwrap();
        assert_eq!(serde_json::from_value::<CircomJobSpec>(json.clone()).unwrap(), good);
        PariCircom::check(&good).unwrap();
        assert_eq!(good.prove_tasks(), 3);
        assert_eq!(good.witnesses_of(2), 4..5);
        for (field, value, named) in [
            ("per_task", serde_json::json!(0), "proofs_per_task"),
            ("bundle_size", serde_json::json!(0), "bundle_size"),
            ("witnesses", serde_json::json!([]), "witness_object_keys"),
            ("circuit_id", serde_json::json!("../x"), "circuit_id"),
            ("key", serde_json::json!(null), "circuit_id"),
            ("key", serde_json::json!({ "curve": "bn254", "vk_digest": "zz" }), "vk_digest"),
        ] {
            let mut bad = json.clone();
            bad[field] = value;
            let err = PariCircom::check(&serde_json::from_value::<CircomJobSpec>(bad).unwrap()).expect_err(field).to_string();
            assert!(err.contains(named), "{field}: {err}");
        }
    }

    fn progress(counts: &[(Step, u64, u64)]) -> Progress<Step> {
        use contract::Step as _;
        Progress::new(counts.iter().map(|(s, done, total)| (s.task().name.to_string(), jobs::TaskCounts { total: *total, done: *done })).collect())
    }

    fn report(step: Step, index: u64) -> Report<Step> {
        Report { step, index, payload: String::new() }
    }

    /// The state machine without Redis: 5 witnesses, 2 to a task (3 prove tasks), bundles of
    /// 4 proofs (2 tasks: bundles {0, 1} and {2}).
    #[test]
    fn prove_tasks_go_out_in_the_window_and_each_bundle_follows_its_range() {
        let s = spec();
        assert_eq!((s.tasks_per_bundle(), s.bundles()), (2, 2));
        let release = |freed| Effect::Release { step: Step::Prove, n: 3, freed };
        assert_eq!(PariCircom::plan(&s), vec![release(0)]);
        let p = progress(&[(Step::Prove, 1, 3)]);
        let join1 = Effect::Join { step: Step::Bundle, index: 1, of: Step::Prove, after: 2..3 };
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Prove, 2)), vec![release(1), join1]);
        let p = progress(&[(Step::Prove, 3, 3), (Step::Bundle, 1, 2)]);
        let join0 = Effect::Join { step: Step::Bundle, index: 0, of: Step::Prove, after: 0..2 };
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Prove, 1)), vec![release(3), join0]);
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Bundle, 1)), vec![]);
        let p = progress(&[(Step::Bundle, 2, 2)]);
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Bundle, 0)), vec![Effect::Dispatch(Step::Publish, 0..1)]);
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Publish, 0)), vec![Effect::Done]);
    }
}

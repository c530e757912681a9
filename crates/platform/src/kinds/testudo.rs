//! Testudo jobs (`testudo`, issue 36): proofs of a registered circom circuit over BLS12-381
//! with Spartan and Testudo-Comm ([`::testudo`]), under a universal key, one per witness; with
//! `compress`, each is also compressed into one constant-size Pari proof on BW6-767
//! ([`::testudo::compress`]). On the typed contract ([`super::contract`]).
//!
//! ```text
//! testudo.setup ─▶ testudo.prove × n ─▶ (testudo.compress × n) ─▶ testudo.publish
//! ```
//!
//! * **Keys.** The universal Testudo-Comm key ([`TC_MAX_VARS`] variables: √N in size, about
//!   2 MiB, for every circuit the platform registers) and, for a compressed job, the final key
//!   of the circuit's shape (`s_x`, `s_y`, `ℓ`; the compression circuit depends on the shape and
//!   the Testudo-Comm key only, so one final key serves every circuit of that shape) are made by
//!   the job's **setup** task, never by a task that proves under them, from the operating
//!   system's randomness, kept nowhere. They live under `testudo/keys/v<KEYS_VERSION>/`:
//!   `tc/<tc digest>/{ck.bin, vk.bin}` and `final/<tc digest>/<s_x>-<s_y>-<ℓ>/<final digest>/{pk.digest,
//!   pk.bin, final-key.bin}` (the proving key uncompressed, loaded by the digest of its bytes
//!   rather than by checking its points), the verifier's file written last (a directory without it is a setup that
//!   crashed and is never used). A later setup reuses the complete key with the smallest digest
//!   (no pointer object), as for Hekaton's wrap keys. The setup records the digests in
//!   `jobs/<id>/testudo/keys.json`; the other tasks read them from there.
//! * **`testudo.prove`** (worker, one task per witness): the witness checked against every
//!   constraint (a witness that fails ends the job naming it and the constraint), then Spartan
//!   with Testudo-Comm; `jobs/<id>/testudo/inner-<i>.bin`.
//! * **`testudo.compress`** (worker, one per witness, dispatched when its proof is done): the
//!   inner proof verified, then the compression circuit proved with Pari under the final key;
//!   `jobs/<id>/testudo/final-<i>.bin`. Stops part-way when its task is abandoned.
//! * **`testudo.publish`** (aggregator): the public signals of each witness read from the job's
//!   own inputs (not from a worker), every inner proof verified under the recorded Testudo-Comm
//!   key (its digest checked), each final proof's `v_M` checked against the matrices and their
//!   Pari proofs handed to the process's batcher under the final key (its digest checked), so
//!   the final proofs of every job under that key within the batch window are checked in one
//!   batch, as circom bundles are; only then `jobs/<id>/proof/{circuit.json, tc-vk.bin, public.json,
//!   inner-<i>.bin}` and, compressed, `final-key.bin`, `final-<i>.bin`, with `tc_vk_digest` and
//!   `final_key_digest` in the manifest's pins. A bad proof fails the job naming the witnesses.
//!
//! Trust: the verifier reads the circuit's matrices (the non-ZK Spartan variant, and the final
//! verifier's `v_M` check) and trusts the keys' setup; `prover testudo verify` checks a
//! published directory against the verifier's own `.r1cs` and pinned digests.

use std::sync::Arc;

use api::v1 as pb;
use ark_bls12_381::{Bls12_381, Config, Fr};
use ark_bw6_767::BW6_767;
use ark_ff::{BigInteger, PrimeField};
use async_trait::async_trait;
use blobstore::BlobError;
use bytes::Bytes;
use queue::Lease;
use rand::SeedableRng;
use ::testudo::compress::{self, FinalKey, FinalProof};
use ::testudo::r1cs::R1cs;
use ::testudo::spartan::constraints::SpartanShape;
use ::testudo::testudo_comm::{TcCommitterKey, TcVerifierKey, TestudoComm};

use super::circom::{check_circuit_id, check_upload, Curve};
use super::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use super::{InputCopy, Submission, Pins, Served, TaskKind};
use crate::error::{corrupt, invalid};
use crate::{layout, Platform, PlatformError};

pub const JOB: &str = "testudo";
/// Finds or makes the keys (the final key's Pari setup is the long part).
pub const SETUP: TaskKind = TaskKind::new("testudo.setup", Served::Worker, 7200);
pub const PROVE: TaskKind = TaskKind::new("testudo.prove", Served::Worker, 1800);
pub const COMPRESS: TaskKind = TaskKind::new("testudo.compress", Served::Worker, 7200);
pub const PUBLISH: TaskKind = TaskKind::new("testudo.publish", Served::Aggregator, 1800);
pub const DONE: TaskKind = TaskKind::new("testudo.done", Served::Executor, 300);
/// Most witnesses (proofs) in one job.
pub const MAX_WITNESSES: u64 = 1024;
/// Variables of the universal Testudo-Comm key: `w̃` of a circuit of up to 2^24 wires.
pub const TC_MAX_VARS: usize = 24;
/// The layout version of stored Testudo keys.
pub const KEYS_VERSION: u32 = 1;

/// The steps of a Testudo job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Setup,
    Prove,
    Compress,
    Publish,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Setup, Step::Prove, Step::Compress, Step::Publish];
    fn task(self) -> TaskKind {
        match self {
            Step::Setup => SETUP,
            Step::Prove => PROVE,
            Step::Compress => COMPRESS,
            Step::Publish => PUBLISH,
        }
    }
}

/// A Testudo job as submitted and recorded.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TestudoSpec {
    pub circuit_id: String,
    /// The uploaded `.wtns` objects as named at submission (copied into the job's inputs).
    pub witnesses: Vec<String>,
    pub compress: bool,
}

impl TestudoSpec {
    fn n(&self) -> u64 {
        self.witnesses.len() as u64
    }
}

/// The in-process request.
pub fn request(spec: &TestudoSpec) -> Submission {
    contract::spec_request::<Testudo>(spec)
}

/// The key digests a job's setup chose (`jobs/<id>/testudo/keys.json`).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct JobKeys {
    pub tc_vk_digest: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub final_key_digest: Option<String>,
}

fn keys_root() -> String {
    format!("testudo/keys/v{KEYS_VERSION}/")
}

/// `ck.bin` or `vk.bin` of the Testudo-Comm key with digest `d` (empty: their directory).
pub fn tc_key_file(d: &str, name: &str) -> String {
    if d.is_empty() {
        format!("{}tc/", keys_root())
    } else {
        format!("{}tc/{d}/{name}", keys_root())
    }
}

fn shape_dir(tc: &str, s: SpartanShape) -> String {
    format!("{}final/{tc}/{}-{}-{}/", keys_root(), s.log_rows, s.log_cols, s.num_io)
}

/// `pk.bin` or `final-key.bin` of the final key `fd` of shape `s` under Testudo-Comm key `tc`.
pub fn final_key_file(tc: &str, s: SpartanShape, fd: &str, name: &str) -> String {
    format!("{}{fd}/{name}", shape_dir(tc, s))
}

/// Scratch: the job's key record, inner and final proofs.
fn scratch(job: &str, name: &str) -> String {
    format!("{}testudo/{name}", layout::job_prefix(job))
}

pub fn inner_scratch(job: &str, i: u64) -> String {
    scratch(job, &format!("inner-{i}.bin"))
}

pub fn final_scratch(job: &str, i: u64) -> String {
    scratch(job, &format!("final-{i}.bin"))
}

fn witness_input(i: u64) -> String {
    format!("wtns-{i}.wtns")
}

fn terr(e: ::testudo::Error) -> PlatformError {
    match e {
        ::testudo::Error::Interrupted => PlatformError::Abandoned,
        e => corrupt(format!("testudo: {e}")),
    }
}

/// The smallest digest among the complete key directories under `dir` (each holding `last`).
async fn smallest_complete(p: &Platform, dir: &str, last: &str) -> Result<Option<String>, PlatformError> {
    let mut found: Vec<String> = p
        .blobs()
        .list(dir)
        .await?
        .into_iter()
        .filter_map(|k| k.strip_prefix(dir).and_then(|r| r.strip_suffix(&format!("/{last}"))).map(str::to_string))
        .filter(|d| !d.contains('/'))
        .collect();
    found.sort();
    Ok(found.into_iter().next())
}

/// The Testudo-Comm verifier key `d`, its digest checked.
async fn tc_vk(p: &Platform, d: &str) -> Result<(Arc<TcVerifierKey<Bls12_381>>, Bytes), PlatformError> {
    let file = tc_key_file(d, "vk.bin");
    let bytes = p.blobs().get(&file).await?;
    let b = bytes.clone();
    let d2 = d.to_string();
    let vk = crate::work::blocking(move |_| -> Result<_, PlatformError> {
        let vk = ::testudo::files::vk_from_bytes::<Bls12_381>(&b).map_err(|e| corrupt(format!("{file}: {e}")))?;
        let got = compress::tc_vk_digest(&vk).to_string();
        if got != d2 {
            return Err(corrupt(format!("{file}: its digest is {got}, not {d2}")));
        }
        Ok(vk)
    })
    .await??;
    Ok((Arc::new(vk), bytes))
}

/// The committer key of Testudo-Comm key `d` (cached per process).
async fn tc_ck(p: &Platform, d: &str) -> Result<Arc<TcCommitterKey<Bls12_381>>, PlatformError> {
    let file = tc_key_file(d, "ck.bin");
    let name = format!("testudo/{file}");
    if let Some(ck) = p.cache().get::<TcCommitterKey<Bls12_381>>(&name) {
        return Ok(ck);
    }
    let bytes = p.blobs().get(&file).await?;
    let size = bytes.len() as u64 * 2;
    let ck = crate::work::blocking(move |_| ::testudo::files::ck_from_bytes::<Bls12_381>(&bytes).map_err(|e| corrupt(format!("{file}: {e}")))).await??;
    let ck = Arc::new(ck);
    p.cache().put(&name, ck.clone(), size);
    Ok(ck)
}

/// The final key `fd` of shape `s` under `tc`, its digest checked, and its bytes.
async fn final_key(p: &Platform, tc: &str, s: SpartanShape, fd: &str) -> Result<(Arc<FinalKey<BW6_767>>, Bytes), PlatformError> {
    let file = final_key_file(tc, s, fd, "final-key.bin");
    let bytes = p.blobs().get(&file).await?;
    let (b, fd2, tc2) = (bytes.clone(), fd.to_string(), tc.to_string());
    let key = crate::work::blocking(move |_| -> Result<_, PlatformError> {
        let key = FinalKey::<BW6_767>::from_bytes(&b).map_err(|e| corrupt(format!("{file}: {e}")))?;
        let got = key.digest().map_err(terr)?.to_string();
        if got != fd2 || key.tc_vk_digest.to_string() != tc2 || key.shape != s {
            return Err(corrupt(format!("{file}: not the final key {fd2} of shape {s:?} under Testudo-Comm key {tc2}")));
        }
        Ok(key)
    })
    .await??;
    Ok((Arc::new(key), bytes))
}

/// A registered circuit as Testudo proves it: the circom file's constraints in Spartan's
/// layout (cached per process).
struct Circuit {
    circom: circom::R1cs<Fr>,
    r1cs: R1cs<Fr>,
}

async fn circuit(p: &Platform, tenant: &str, id: &str) -> Result<Arc<Circuit>, PlatformError> {
    let file = layout::circuit_file(tenant, id, "circuit.r1cs");
    let name = format!("testudo/{file}");
    if let Some(c) = p.cache().get::<Circuit>(&name) {
        return Ok(c);
    }
    let bytes = p.blobs().get(&file).await?;
    if circom::digest(&bytes) != id {
        return Err(corrupt(format!("circuit {id}: circuit.r1cs does not have the circuit's digest")));
    }
    let size = bytes.len() as u64 * 4;
    let c = crate::work::blocking(move |_| -> Result<Circuit, PlatformError> {
        let circom = circom::R1cs::<Fr>::from_bytes(&bytes).map_err(|e| corrupt(format!("circuit.r1cs: {e}")))?;
        let m = circom.io_first_matrices();
        let r1cs = R1cs::new(m.num_constraints, m.num_io, m.num_aux, m.a, m.b, m.c).map_err(terr)?;
        Ok(Circuit { circom, r1cs })
    })
    .await??;
    let c = Arc::new(c);
    p.cache().put(&name, c.clone(), size);
    Ok(c)
}

/// The public signals of witness `i` of `job`, read from the job's own input (the head and
/// the public wires: a ranged read), so that no worker says what they are.
async fn public_of(p: &Platform, job: &str, i: u64, num_public: usize) -> Result<Vec<Fr>, PlatformError> {
    let key = layout::input(job, &witness_input(i));
    let head = p.blobs().get_range(&key, 0, circom::WTNS_HEAD_BYTES as u64).await?;
    circom::wtns_head::<Fr>(&head).map_err(|e| corrupt(format!("witness {i}: {e}")))?;
    // Header first (wtns_head checks it): magic, version, count (12), section type and size
    // (12), n8, the prime, the wire count (8 + n8), section type and size (12), then values.
    let n8 = Fr::MODULUS.to_bytes_le().len().div_ceil(8) * 8;
    let start = 44 + n8 as u64;
    let bytes = p.blobs().get_range(&key, start, (n8 * (1 + num_public)) as u64).await?;
    if bytes.len() != n8 * (1 + num_public) {
        return Err(corrupt(format!("witness {i}: shorter than its public signals")));
    }
    let vals: Vec<Fr> = bytes.chunks(n8).map(Fr::from_le_bytes_mod_order).collect();
    if vals[0] != Fr::from(1u64) {
        return Err(corrupt(format!("witness {i}: wire 0 is not 1")));
    }
    Ok(vals[1..].to_vec())
}

/// `testudo`.
pub struct Testudo;

#[async_trait]
impl Kind for Testudo {
    const NAME: &'static str = JOB;
    const REPORT: TaskKind = DONE;
    type Step = Step;
    type Spec = TestudoSpec;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<TestudoSpec, PlatformError>> {
        match params {
            pb::submit_job_request::Params::Testudo(t) => {
                Some(Ok(TestudoSpec { circuit_id: t.circuit_id.clone(), witnesses: t.witness_object_keys.clone(), compress: t.compress }))
            }
            _ => None,
        }
    }

    async fn validate(&self, p: &Platform, tenant: &str, spec: &mut TestudoSpec) -> Result<Planned<Step>, PlatformError> {
        check_circuit_id(&spec.circuit_id)?;
        let info = p.registered_circuit(tenant, &spec.circuit_id).await?.ok_or_else(|| {
            invalid("circuit_id", format!("no circuit {} is registered (RegisterCircuit / prover circuit register), or its registration has not finished", spec.circuit_id))
        })?;
        if info.curve != Curve::Bls12_381 {
            return Err(invalid("circuit_id", format!("circuit {} is over {}; Testudo proves BLS12-381 circuits (circom --prime bls12381)", spec.circuit_id, info.curve.as_str())));
        }
        // `w̃` has log₂ of the witness half's size variables: at most the universal key's.
        let aux = info.wires.saturating_sub(1 + u64::from(info.public_outputs) + u64::from(info.public_inputs));
        let half = aux.max(1 + u64::from(info.public_outputs) + u64::from(info.public_inputs)).next_power_of_two();
        if half.trailing_zeros() as usize > TC_MAX_VARS {
            return Err(invalid("circuit_id", format!("{} wires: more than the universal key's 2^{TC_MAX_VARS}", info.wires)));
        }
        let n = spec.n();
        if n == 0 || n > MAX_WITNESSES {
            return Err(invalid("witness_object_keys", format!("give 1 to {MAX_WITNESSES} witnesses, got {n}")));
        }
        let mut seen = std::collections::HashMap::with_capacity(spec.witnesses.len());
        let mut copies = Vec::with_capacity(spec.witnesses.len());
        for (i, key) in spec.witnesses.iter().enumerate() {
            check_upload("witness_object_keys", tenant, key)?;
            if let Some(j) = seen.insert(key.as_str(), i) {
                return Err(invalid("witness_object_keys", format!("[{i}] {key:?} is listed already as [{j}]: list each witness once")));
            }
            let size = match p.blobs().size(key).await {
                Err(BlobError::NotFound(_)) => return Err(invalid("witness_object_keys", format!("[{i}] {key:?}: no such upload"))),
                r => r?,
            };
            let head = p.blobs().get_range(key, 0, size.min(circom::WTNS_HEAD_BYTES as u64)).await?;
            let bad = |e: String| invalid("witness_object_keys", format!("[{i}] {key:?}: {e}"));
            let head = circom::wtns_head::<Fr>(&head).map_err(|e| bad(e.to_string()))?;
            if head.file_len != size {
                return Err(bad(format!("{size} bytes, but its header makes a file of {}", head.file_len)));
            }
            if head.wires != info.wires {
                return Err(bad(format!("{} wires, the circuit has {}", head.wires, info.wires)));
            }
            copies.push(InputCopy { name: witness_input(i as u64), from: key.clone(), size, field: "witness_object_keys" });
        }
        let mut tasks = vec![(Step::Setup, 1), (Step::Prove, n), (Step::Publish, 1)];
        if spec.compress {
            tasks.push((Step::Compress, n));
        }
        Ok(Planned { copies, ..Planned::tasks(tasks) })
    }

    fn plan(_spec: &TestudoSpec) -> Vec<Effect<Step>> {
        vec![Effect::Dispatch(Step::Setup, 0..1)]
    }

    async fn work(&self, p: &Platform, job: &Job<Self>, step: Step, index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        let spec = &job.spec;
        if step != Step::Setup && index >= spec.n() {
            return Err(corrupt(format!("{JOB}: task {index} of {} witnesses", spec.n())));
        }
        match step {
            Step::Setup => setup(p, job).await,
            Step::Prove => prove(p, job, index).await,
            Step::Compress => compress_one(p, job, index).await,
            Step::Publish => Err(corrupt(format!("{JOB}: publish is the aggregator's"))),
        }
    }

    /// Prove tasks are released in the job's window. A compressed job's compress task follows
    /// each proof, so a place is freed when a witness's compression ends: the job holds at most
    /// its share of prove and compress tasks together.
    fn on_done(spec: &TestudoSpec, progress: &Progress<Step>, report: &Report<Step>) -> Vec<Effect<Step>> {
        let n = spec.n();
        let freed = progress.done(if spec.compress { Step::Compress } else { Step::Prove });
        let release = Effect::Release { step: Step::Prove, n, freed };
        let publish = Effect::Dispatch(Step::Publish, 0..1);
        match report.step {
            Step::Setup => vec![release],
            Step::Prove if spec.compress => vec![Effect::Dispatch(Step::Compress, report.index..report.index + 1)],
            Step::Prove if progress.complete(Step::Prove) => vec![release, publish],
            Step::Compress if progress.complete(Step::Compress) => vec![release, publish],
            Step::Prove | Step::Compress => vec![release],
            Step::Publish => vec![Effect::Done],
        }
    }

    async fn finish(&self, p: &Platform, job: &Job<Self>, _step: Step, _index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        publish(p, job).await?;
        Ok(String::new())
    }

    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        let id = &job.id().to_string();
        let json = match p.blobs().get(&layout::proof_file(id, "circuit.json")).await {
            Ok(b) => b,
            Err(e) => return Ok(Err(format!("circuit.json: {e}"))),
        };
        let keys: JobKeys = serde_json::from_slice(&json).map_err(|e| corrupt(format!("circuit.json: {e}")))?;
        let pinned = pins.vk_digest;
        let (against, tc_pin, final_pin) = match (pinned, &keys.final_key_digest) {
            (Some(d), Some(fd)) if d == fd => (format!("final key {d} (expected_vk_digest)"), keys.tc_vk_digest.clone(), Some(fd.clone())),
            (Some(d), _) if d == keys.tc_vk_digest => (format!("Testudo-Comm key {d} (expected_vk_digest)"), d.to_string(), keys.final_key_digest.clone()),
            (Some(d), _) => return Ok(Err(format!("the job was proved under Testudo-Comm key {} and final key {:?}, not {d}", keys.tc_vk_digest, keys.final_key_digest))),
            (None, fd) => (format!("the published keys (not pinned: pass expected_vk_digest): {} {:?}", keys.tc_vk_digest, fd), keys.tc_vk_digest.clone(), fd.clone()),
        };
        let outputs = Outputs { tc: tc_pin, final_key: final_pin };
        match check(p, job, &outputs, Source::Published).await? {
            Ok(n) => Ok(Ok(format!("{n} proof(s) under {against}"))),
            Err(why) => Ok(Err(why)),
        }
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![format!("{}testudo/", layout::job_prefix(job)), layout::inputs_prefix(job)]
    }

    fn limits() -> Vec<crate::limit::Limit> {
        vec![crate::limit::Limit::new(JOB, "witness_object_keys", MAX_WITNESSES, "count", "witnesses of the job")]
    }
}

/// The job's key record, if its setup wrote one.
async fn job_keys(p: &Platform, job: &str) -> Result<Option<JobKeys>, PlatformError> {
    match p.blobs().get(&scratch(job, "keys.json")).await {
        Ok(b) => Ok(Some(serde_json::from_slice(&b).map_err(|e| corrupt(format!("keys.json: {e}")))?)),
        Err(BlobError::NotFound(_)) => Ok(None),
        Err(e) => Err(e.into()),
    }
}

async fn recorded_keys(p: &Platform, job: &str) -> Result<JobKeys, PlatformError> {
    job_keys(p, job).await?.ok_or_else(|| corrupt(format!("job {job}: no keys.json (its setup has not run)")))
}

/// Setup: finds or makes the keys the job proves under and records their digests.
async fn setup(p: &Platform, job: &Job<Testudo>) -> Result<String, PlatformError> {
    let id = job.id();
    if job_keys(p, id).await?.is_some() {
        return Ok(String::new());
    }
    let tc = match smallest_complete(p, &tc_key_file("", ""), "vk.bin").await? {
        Some(d) => d,
        None => {
            let (ck, vk) = crate::work::blocking(move |_| {
                let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
                ::testudo::testudo_comm::setup::<Bls12_381, _>(TC_MAX_VARS, &mut rng)
            })
            .await?
            .map_err(terr)?;
            let d = compress::tc_vk_digest(&vk).to_string();
            p.blobs().put(&tc_key_file(&d, "ck.bin"), Bytes::from(::testudo::files::ck_to_bytes(&ck))).await?;
            p.blobs().put(&tc_key_file(&d, "vk.bin"), Bytes::from(::testudo::files::vk_to_bytes(&vk))).await?;
            tracing::info!(digest = %d, vars = TC_MAX_VARS, "Testudo-Comm key made");
            d
        }
    };
    let final_key_digest = if job.spec.compress {
        let c = circuit(p, &job.record.tenant, &job.spec.circuit_id).await?;
        let shape = SpartanShape::of(&c.r1cs);
        match smallest_complete(p, &shape_dir(&tc, shape), "final-key.bin").await? {
            Some(fd) => Some(fd),
            None => {
                let (vk, _) = tc_vk(p, &tc).await?;
                let (pk, key) = crate::work::blocking(move |_| {
                    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
                    compress::setup::<Config, BW6_767, _>(&vk, shape, &mut rng)
                })
                .await?
                .map_err(terr)?;
                let fd = key.digest().map_err(terr)?.to_string();
                // Uncompressed (no square root per point to load) with its digest, so that a
                // compress task loads it without checking every point: on BW6-767 the subgroup
                // checks of a 2^20-row key took over 40 minutes a load on 2 cores.
                let pk_bytes = pk.to_bytes_uncompressed();
                let pk_digest = ::pari::KeyDigest::of_bytes(&pk_bytes).to_string();
                p.blobs().put(&final_key_file(&tc, shape, &fd, "pk.digest"), Bytes::from(pk_digest)).await?;
                p.blobs().put(&final_key_file(&tc, shape, &fd, "pk.bin"), Bytes::from(pk_bytes)).await?;
                p.blobs().put(&final_key_file(&tc, shape, &fd, "final-key.bin"), Bytes::from(key.to_bytes().map_err(terr)?)).await?;
                tracing::info!(digest = %fd, ?shape, "Testudo final key made");
                Some(fd)
            }
        }
    } else {
        None
    };
    let keys = JobKeys { tc_vk_digest: tc, final_key_digest };
    p.blobs().put(&scratch(id, "keys.json"), Bytes::from(serde_json::to_vec(&keys).map_err(corrupt)?)).await?;
    Ok(String::new())
}

/// Prove task `i`: witness `i`'s inner proof.
async fn prove(p: &Platform, job: &Job<Testudo>, i: u64) -> Result<String, PlatformError> {
    let id = job.id();
    let keys = recorded_keys(p, id).await?;
    let ck = tc_ck(p, &keys.tc_vk_digest).await?;
    let c = circuit(p, &job.record.tenant, &job.spec.circuit_id).await?;
    let wtns = p.blobs().get(&layout::input(id, &witness_input(i))).await?;
    let outcome = crate::work::blocking(move |cancel| -> Result<Result<Vec<u8>, String>, PlatformError> {
        cancel.check()?;
        let w = circom::read_wtns::<Fr>(&wtns).map_err(|e| corrupt(format!("witness {i}: {e}")))?;
        let (io, aux) = match c.circom.split_witness(&w) {
            Ok(s) => s,
            Err(e) => return Ok(Err(format!("witness {i} (witness_object_keys[{i}]): {e}"))),
        };
        let proof = ::testudo::spartan::prove::<Fr, TestudoComm<Bls12_381>>(&ck, &c.r1cs, io, aux).map_err(terr)?;
        Ok(Ok(::testudo::files::proof_to_bytes::<Bls12_381>(&proof)))
    })
    .await??;
    match outcome {
        Ok(bytes) => {
            ::metrics::counter!("prover_proofs_total", "kind" => "testudo.inner").increment(1);
            p.blobs().put(&inner_scratch(id, i), Bytes::from(bytes)).await?;
        }
        Err(reason) => return Err(contract::reject(reason)),
    }
    Ok(String::new())
}

/// Compress task `i`: witness `i`'s inner proof as one Pari proof on BW6-767.
async fn compress_one(p: &Platform, job: &Job<Testudo>, i: u64) -> Result<String, PlatformError> {
    let id = job.id();
    let keys = recorded_keys(p, id).await?;
    let fd = keys.final_key_digest.clone().ok_or_else(|| corrupt(format!("job {id}: keys.json names no final key")))?;
    let c = circuit(p, &job.record.tenant, &job.spec.circuit_id).await?;
    let shape = SpartanShape::of(&c.r1cs);
    let (vk, _) = tc_vk(p, &keys.tc_vk_digest).await?;
    let (key, _) = final_key(p, &keys.tc_vk_digest, shape, &fd).await?;
    let pk_file = final_key_file(&keys.tc_vk_digest, shape, &fd, "pk.bin");
    let name = format!("testudo/{pk_file}");
    let pk = match p.cache().get::<::pari::ProvingKey<BW6_767>>(&name) {
        Some(pk) => pk,
        None => {
            // The digest the setup task recorded of the bytes it wrote from the key it made
            // (the bucket is the platform's own store, as for the Hekaton wrap keys); a key
            // stored without one is checked point by point.
            let digest = match p.blobs().get(&final_key_file(&keys.tc_vk_digest, shape, &fd, "pk.digest")).await {
                Ok(b) => Some(String::from_utf8_lossy(&b).trim().parse::<::pari::KeyDigest>().map_err(|e| corrupt(format!("{pk_file}: its pk.digest: {e}")))?),
                Err(BlobError::NotFound(_)) => None,
                Err(e) => return Err(e.into()),
            };
            let bytes = p.blobs().get(&pk_file).await?;
            let pk = crate::work::blocking(move |_| match digest {
                Some(d) => ::pari::ProvingKey::<BW6_767>::from_bytes_with_digest(&bytes, &d),
                None => ::pari::ProvingKey::<BW6_767>::from_bytes_checked(&bytes),
            })
            .await?
            .map_err(super::pari::pari_err)?;
            let pk = Arc::new(pk);
            p.cache().put(&name, pk.clone(), pk.heap_size());
            pk
        }
    };
    let io = public_of(p, id, i, c.circom.num_public()).await?;
    let inner = p.blobs().get(&inner_scratch(id, i)).await?;
    let bytes = crate::work::blocking(move |cancel| -> Result<Vec<u8>, PlatformError> {
        let inner = ::testudo::files::proof_from_bytes::<Bls12_381>(&inner).map_err(|e| corrupt(format!("inner-{i}.bin: {e}")))?;
        let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
        let fin = cancel
            .with_interrupt(|stop| compress::prove_interruptible::<Config, BW6_767, _>(&pk, &key, &vk, &c.r1cs, &io, &inner, &mut rng, stop))
            .map_err(terr)?;
        fin.to_bytes().map_err(terr)
    })
    .await??;
    ::metrics::counter!("prover_proofs_total", "kind" => "testudo.final").increment(1);
    p.blobs().put(&final_scratch(id, i), Bytes::from(bytes)).await?;
    Ok(String::new())
}

/// The keys outputs are checked under.
struct Outputs {
    tc: String,
    final_key: Option<String>,
}

/// Where the proofs are read from.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Source {
    Scratch,
    Published,
}

/// What a check read and found good, ready to publish.
struct Checked {
    tc_vk: Bytes,
    final_key: Option<Bytes>,
    public: Vec<Vec<Fr>>,
    inner: Vec<Bytes>,
    finals: Vec<Bytes>,
}

/// Checks every proof of `job` under `keys`: `Ok(Ok(count))`, or why not (naming the witnesses).
async fn check(p: &Platform, job: &Job<Testudo>, keys: &Outputs, from: Source) -> Result<Result<u64, String>, PlatformError> {
    Ok(check_read(p, job, keys, from).await?.map(|c| c.inner.len() as u64))
}

async fn check_read(p: &Platform, job: &Job<Testudo>, keys: &Outputs, from: Source) -> Result<Result<Checked, String>, PlatformError> {
    let id = job.id();
    let n = job.spec.n();
    let c = circuit(p, &job.record.tenant, &job.spec.circuit_id).await?;
    let (vk, vk_bytes) = match tc_vk(p, &keys.tc).await {
        Ok(v) => v,
        Err(e) => return Ok(Err(format!("Testudo-Comm key {}: {e}", keys.tc))),
    };
    let shape = SpartanShape::of(&c.r1cs);
    let fk = match &keys.final_key {
        Some(fd) => match final_key(p, &keys.tc, shape, fd).await {
            Ok(k) => Some(k),
            Err(e) => return Ok(Err(format!("final key {fd}: {e}"))),
        },
        None => None,
    };
    let get = |name: String, scratch_key: String| {
        let key = if from == Source::Published { layout::proof_file(id, &name) } else { scratch_key };
        async move { p.blobs().get(&key).await.map_err(|e| format!("{name}: {e}")) }
    };
    // Before publishing, the public signals come from the job's inputs; once published (the
    // inputs are gone), from public.json: the statement the job published.
    let published_public: Option<Vec<Vec<Fr>>> = match from {
        Source::Scratch => None,
        Source::Published => match get("public.json".into(), String::new()).await.map(|b| parse_public(&b, n as usize, c.circom.num_public())) {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) | Err(e) => return Ok(Err(e)),
        },
    };
    let (mut public, mut inner, mut finals) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        match &published_public {
            Some(v) => public.push(v[i as usize].clone()),
            None => public.push(public_of(p, id, i, c.circom.num_public()).await?),
        }
        match get(format!("inner-{i}.bin"), inner_scratch(id, i)).await {
            Ok(b) => inner.push(b),
            Err(e) => return Ok(Err(format!("witness {i}: {e}"))),
        }
        if fk.is_some() {
            match get(format!("final-{i}.bin"), final_scratch(id, i)).await {
                Ok(b) => finals.push(b),
                Err(e) => return Ok(Err(format!("witness {i}: {e}"))),
            }
        }
    }
    let (pub2, inner2, finals2, c2) = (public.clone(), inner.clone(), finals.clone(), c.clone());
    let fk2 = fk.as_ref().map(|(k, _)| k.clone());
    // The native checks here (inner proofs; each final proof's `v_M` against the matrices);
    // the final proofs' Pari checks go to the process's batcher below, with whatever other
    // jobs' final proofs under the same final key arrive within its window (one batch).
    type Pending = Vec<(usize, Vec<<BW6_767 as ark_ec::pairing::Pairing>::ScalarField>, ::pari::Proof<BW6_767>)>;
    let (mut bad, pending) = crate::work::blocking(move |cancel| -> Result<(Vec<String>, Pending), PlatformError> {
        let mut bad = Vec::new();
        for (i, (b, io)) in inner2.iter().zip(&pub2).enumerate() {
            cancel.check()?;
            let ok = ::testudo::files::proof_from_bytes::<Bls12_381>(b)
                .and_then(|proof| ::testudo::spartan::verify::<Fr, TestudoComm<Bls12_381>>(&vk, &c2.r1cs, io, &proof));
            if let Err(e) = ok {
                bad.push(format!("witness {i}: inner proof: {e}"));
            }
        }
        let mut pending = Vec::new();
        if let Some(key) = fk2 {
            for (i, b) in finals2.iter().enumerate() {
                cancel.check()?;
                match FinalProof::<Fr, BW6_767>::from_bytes(b).and_then(|f| Ok((compress::final_statement(&key, &c2.r1cs, &pub2[i], &f)?, f))) {
                    Ok((inputs, f)) => pending.push((i, inputs, f.pari)),
                    Err(e) => bad.push(format!("witness {i}: final proof: {e}")),
                }
            }
        }
        Ok((bad, pending))
    })
    .await??;
    if let (Some((key, _)), false) = (&fk, pending.is_empty()) {
        let (which, items): (Vec<usize>, Vec<_>) = pending.into_iter().map(|(i, inputs, pari)| (i, (inputs, pari))).unzip();
        for j in p.batcher().verify(key.pari_vk.clone(), items).await? {
            bad.push(format!("witness {}: final proof does not verify", which[j]));
        }
    }
    if !bad.is_empty() {
        return Ok(Err(bad.join("; ")));
    }
    Ok(Ok(Checked { tc_vk: vk_bytes, final_key: fk.map(|(_, b)| b), public, inner, finals }))
}

/// `public.json`: `n` entries `{"witness": i, "public": [decimal, …]}` of `num_public` values.
fn parse_public(bytes: &[u8], n: usize, num_public: usize) -> Result<Vec<Vec<Fr>>, String> {
    let v: Vec<serde_json::Value> = serde_json::from_slice(bytes).map_err(|e| format!("public.json: {e}"))?;
    if v.len() != n {
        return Err(format!("public.json: {} entries for {n} witnesses", v.len()));
    }
    v.iter()
        .enumerate()
        .map(|(i, e)| {
            let vals = e["public"].as_array().ok_or_else(|| format!("public.json [{i}]: no public list"))?;
            if e["witness"].as_u64() != Some(i as u64) || vals.len() != num_public {
                return Err(format!("public.json [{i}]: not witness {i} with {num_public} values"));
            }
            // Canonically: the text published is the statement checked (one spelling per value).
            vals.iter()
                .map(|x| {
                    let d = x.as_str().ok_or_else(|| format!("public.json [{i}]: {x} is not a string"))?;
                    circom::canonical_field::<Fr>(d).map_err(|e| format!("public.json [{i}]: {e}"))
                })
                .collect()
        })
        .collect()
}

/// Publish: every proof checked, then the outputs written, the manifest last.
async fn publish(p: &Platform, job: &Job<Testudo>) -> Result<(), PlatformError> {
    let id = job.id();
    let keys = recorded_keys(p, id).await?;
    if job.spec.compress != keys.final_key_digest.is_some() {
        return Err(contract::reject("keys.json does not match the job's compress setting"));
    }
    let outputs = Outputs { tc: keys.tc_vk_digest.clone(), final_key: keys.final_key_digest.clone() };
    let checked = match check_read(p, job, &outputs, Source::Scratch).await? {
        Ok(c) => c,
        Err(why) => return Err(contract::reject(why)),
    };
    let put = |name: String, bytes: Bytes| {
        let key = layout::proof_file(id, &name);
        async move { p.blobs().put(&key, bytes).await }
    };
    let mut circuit_json = serde_json::json!({
        "proof_system": "testudo",
        "curve": "bls12-381",
        "circuit_id": job.spec.circuit_id,
        "tc_vk_digest": keys.tc_vk_digest,
        "witnesses": job.spec.n(),
    });
    if let Some(fd) = &keys.final_key_digest {
        circuit_json["final_key_digest"] = fd.clone().into();
    }
    let public: Vec<serde_json::Value> = checked
        .public
        .iter()
        .enumerate()
        .map(|(i, io)| serde_json::json!({ "witness": i, "public": io.iter().map(|v| v.to_string()).collect::<Vec<_>>() }))
        .collect();
    put("tc-vk.bin".into(), checked.tc_vk).await?;
    put("public.json".into(), Bytes::from(serde_json::to_vec_pretty(&public).map_err(corrupt)?)).await?;
    for (i, b) in checked.inner.into_iter().enumerate() {
        put(format!("inner-{i}.bin"), b).await?;
    }
    if let Some(k) = checked.final_key {
        put("final-key.bin".into(), k).await?;
    }
    for (i, b) in checked.finals.into_iter().enumerate() {
        put(format!("final-{i}.bin"), b).await?;
    }
    put("circuit.json".into(), Bytes::from(serde_json::to_vec_pretty(&circuit_json).map_err(corrupt)?)).await?;
    let mut pins = std::collections::BTreeMap::from([("tc_vk_digest".to_string(), keys.tc_vk_digest.clone())]);
    let mut verify = format!(
        "prover testudo verify {} --r1cs <the circuit's .r1cs> --tc-vk-digest {} --witnesses {}",
        crate::manifest::DIR,
        keys.tc_vk_digest,
        job.spec.n()
    );
    if let Some(fd) = &keys.final_key_digest {
        pins.insert("final_key_digest".into(), fd.clone());
        verify += &format!(" --final-key-digest {fd}");
    }
    crate::manifest::Manifest::publish(p, id, JOB, pins, vec![verify]).await
}

#[cfg(test)]
mod tests {
    //! The state machine without Redis.

    use super::*;
    use contract::Step as _;

    fn spec(n: usize, compress: bool) -> TestudoSpec {
        TestudoSpec { circuit_id: "ab".repeat(32), witnesses: (0..n).map(|i| format!("uploads/w{i}.wtns")).collect(), compress }
    }


    fn report(step: Step, index: u64) -> Report<Step> {
        Report { step, index, payload: String::new() }
    }

    fn release(n: u64, freed: u64) -> Effect<Step> {
        Effect::Release { step: Step::Prove, n, freed }
    }

    #[test]
    fn an_inner_only_job_publishes_after_its_last_proof() {
        let s = spec(2, false);
        assert_eq!(Testudo::plan(&s), vec![Effect::Dispatch(Step::Setup, 0..1)]);
        let p = Progress::of(&[(Step::Setup, 1, 1), (Step::Prove, 0, 2)]);
        // The prove tasks go out in the job's window, not all at once.
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Setup, 0)), vec![release(2, 0)]);
        let p = Progress::of(&[(Step::Prove, 1, 2)]);
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Prove, 1)), vec![release(2, 1)]);
        let p = Progress::of(&[(Step::Prove, 2, 2)]);
        let publish = Effect::Dispatch(Step::Publish, 0..1);
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Prove, 0)), vec![release(2, 2), publish.clone()]);
        // The last report delivered again says the same (each effect is idempotent).
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Prove, 0)), vec![release(2, 2), publish]);
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Publish, 0)), vec![Effect::Done]);
    }

    #[test]
    fn a_compressed_job_compresses_each_proof_and_publishes_after_the_last() {
        let s = spec(2, true);
        let p = Progress::of(&[(Step::Prove, 2, 2), (Step::Compress, 0, 2)]);
        // Each proof's compression follows it, even the last: no publish before compressions,
        // and no place freed (the witness is still in flight).
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Prove, 1)), vec![Effect::Dispatch(Step::Compress, 1..2)]);
        let p = Progress::of(&[(Step::Prove, 2, 2), (Step::Compress, 1, 2)]);
        // A compression that ends frees its witness's place in the window.
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Compress, 1)), vec![release(2, 1)]);
        let p = Progress::of(&[(Step::Prove, 2, 2), (Step::Compress, 2, 2)]);
        assert_eq!(Testudo::on_done(&s, &p, &report(Step::Compress, 0)), vec![release(2, 2), Effect::Dispatch(Step::Publish, 0..1)]);
    }

    /// S4-10: a published `public.json` is read canonically, so a bucket edit that rewrites a
    /// value as `r + v` (the same field element, another integer) is refused, not verified.
    #[test]
    fn a_published_statement_is_read_canonically() {
        use ark_ff::{BigInteger, PrimeField};
        let entry = |v: String| serde_json::to_vec(&serde_json::json!([{ "witness": 0, "public": [v] }])).unwrap();
        assert_eq!(parse_public(&entry("33".into()), 1, 1).unwrap(), vec![vec![Fr::from(33u64)]]);
        let mut r_plus_33 = Fr::MODULUS;
        r_plus_33.add_with_carry(&33u64.into());
        for bad in [r_plus_33.to_string(), "+33".into(), "033".into()] {
            let err = parse_public(&entry(bad.clone()), 1, 1).unwrap_err();
            assert!(err.contains("public.json [0]") && err.contains("canonical"), "{bad}: {err}");
        }
    }

    #[test]
    fn steps_are_found_by_their_task_kind() {
        assert_eq!(Step::of("testudo.compress"), Some(Step::Compress));
        assert_eq!(Step::of(JOB), None);
        assert!(Testudo::task_kinds().iter().all(|t| t.name != JOB));
    }
}

//! `pari.circom`: one Pari proof per uploaded `.wtns` of a registered circuit (see the module
//! doc of [`super`]): prove tasks in the job's window, each bundle after its prove range, the
//! manifest once every bundle is published.

use std::sync::Arc;

use api::v1 as pb;
use ark_ec::pairing::Pairing;
use async_trait::async_trait;
use bytes::Bytes;
use ::pari::bundle::{Bundle, ProofList};
use ::pari::{KeyDigest, ProvingKey, VerifyingKey};
use queue::Lease;
use rand::SeedableRng;

use super::{check_circuit_id, check_upload, Curve, BUNDLE, CIRCUIT_JSON, DONE, JOB, MAX_WITNESSES, DEFAULT_PER_TASK, PROVE, PUBLISH, R1CS};
use crate::error::{corrupt, invalid};
use crate::kinds::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use crate::kinds::pari::{pari_err, read_proofs};
use crate::kinds::{InputCopy, Submission, Pins, TaskKind};
use crate::{layout, Platform, PlatformError};

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
    pub(super) fn key(&self) -> Result<&CircuitKey, PlatformError> {
        self.key.as_ref().ok_or_else(|| corrupt(format!("circuit {}: the job records no key", self.circuit_id)))
    }

    pub(super) fn n(&self) -> u64 {
        self.witnesses.len() as u64
    }

    pub fn prove_tasks(&self) -> u64 {
        self.n().div_ceil(self.per_task)
    }

    fn tasks_per_bundle(&self) -> u64 {
        self.bundle_size.div_ceil(self.per_task)
    }

    pub(super) fn bundles(&self) -> u64 {
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
pub fn request(circuit_id: &str, witnesses: Vec<String>, per_task: u64, bundle_size: u64) -> Submission {
    contract::spec_request::<PariCircom>(&CircomJobSpec::request(circuit_id, witnesses, per_task, bundle_size))
}

fn witness_input(i: u64) -> String {
    format!("wtns-{i}.wtns")
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
            copies.push(InputCopy { name: witness_input(i as u64), from: key.clone(), size, field: "witness_object_keys" });
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
            crate::kinds::pari::publish_manifest(p, job.id(), JOB).await?;
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

    async fn verify_outputs(&self, p: &Platform, job: &Job<Self>, pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        Ok(crate::kinds::pari::verify_outputs(p, job.id(), crate::kinds::pari::pinned_key(pins)?.as_ref()).await)
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![layout::pari_prefix(job), layout::inputs_prefix(job)]
    }

    fn limits() -> Vec<crate::limit::Limit> {
        use crate::limit::Limit;
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
        let p = Progress::of(&[(Step::Prove, 1, 3)]);
        let join1 = Effect::Join { step: Step::Bundle, index: 1, of: Step::Prove, after: 2..3 };
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Prove, 2)), vec![release(1), join1]);
        let p = Progress::of(&[(Step::Prove, 3, 3), (Step::Bundle, 1, 2)]);
        let join0 = Effect::Join { step: Step::Bundle, index: 0, of: Step::Prove, after: 0..2 };
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Prove, 1)), vec![release(3), join0]);
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Bundle, 1)), vec![]);
        let p = Progress::of(&[(Step::Bundle, 2, 2)]);
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Bundle, 0)), vec![Effect::Dispatch(Step::Publish, 0..1)]);
        assert_eq!(PariCircom::on_done(&s, &p, &report(Step::Publish, 0)), vec![Effect::Done]);
    }
}

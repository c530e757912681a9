//! `circuit.register`: one `circuit.setup` task (a worker) runs the Pari setup of an uploaded
//! `.r1cs` and stores the registered circuit (see the module doc of [`super`]). On the typed
//! contract; its request comes from `RegisterCircuit` ([`crate::Platform::register_circuit`]),
//! not from `SubmitJob`.

use api::v1 as pb;
use ark_ec::pairing::Pairing;
use async_trait::async_trait;
use bytes::Bytes;
use ::pari::KeyDigest;
use queue::Lease;
use rand::SeedableRng;

use super::{check_circuit_id, check_upload, r1cs_head, shape_of, CircuitInfo, Curve, Shape, CIRCUIT_JSON, MAX_CONSTRAINTS, R1CS, REGISTER_JOB, SETUP, SETUP_DONE};
use crate::error::{corrupt, invalid};
use crate::kinds::contract::{self, Effect, Job, Kind, Planned, Progress, Report};
use crate::kinds::pari::pari_err;
use crate::kinds::{InputCopy, Submission, Pins, TaskKind};
use crate::{layout, Platform, PlatformError};

/// A registered circuit's charge besides its `.r1cs` and keys: its `circuit.json`.
const CIRCUIT_JSON_BYTES: u64 = 4096;

/// The spec of a `circuit.register` job: the upload and its digest (the circuit id) as
/// `RegisterCircuit` read it; validation reads the upload again and completes the spec with the
/// curve its prime names and the tenant's circuit quota.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RegisterSpec {
    pub circuit_id: String,
    /// The uploaded `.r1cs` (copied into the job's inputs at submission).
    #[serde(default)]
    pub r1cs_object: String,
    /// The curve whose scalar field is the file's prime (resolved at submission).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<Curve>,
    /// The tenant's circuit quota when the registration was submitted (`None`: none), which
    /// the setup checks before it writes the keys.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_circuit_bytes: Option<u64>,
}

/// The in-process request that registers the upload `r1cs_object`, whose digest is `circuit_id`.
pub fn request(circuit_id: &str, r1cs_object: &str) -> Submission {
    contract::spec_request::<CircuitRegister>(&RegisterSpec { circuit_id: circuit_id.to_string(), r1cs_object: r1cs_object.to_string(), curve: None, max_circuit_bytes: None })
}

/// The one step of a registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Setup,
}

impl contract::Step for Step {
    const ALL: &'static [Self] = &[Step::Setup];
    fn task(self) -> TaskKind {
        SETUP
    }
}

/// `circuit.register`.
pub struct CircuitRegister;

#[async_trait]
impl Kind for CircuitRegister {
    const NAME: &'static str = REGISTER_JOB;
    const REPORT: TaskKind = SETUP_DONE;
    type Step = Step;
    type Spec = RegisterSpec;

    /// Registration has an RPC of its own (`RegisterCircuit`), not a `SubmitJob` message.
    fn from_pb(_params: &pb::submit_job_request::Params) -> Option<Result<RegisterSpec, PlatformError>> {
        None
    }

    fn check(spec: &RegisterSpec) -> Result<(), PlatformError> {
        check_circuit_id(&spec.circuit_id)?;
        if spec.curve.is_none() {
            return Err(invalid("r1cs_object_key", "the circuit's curve was not resolved"));
        }
        Ok(())
    }

    /// The upload judged by its header and sections' sizes alone (a few ranged reads; N4 of the platform
    /// review: reading and decoding a near-limit file OOM-killed the planner): an `.r1cs` over
    /// BN254 or BLS12-381 with 1 to [`MAX_CONSTRAINTS`] constraints and no more wires than its
    /// length justifies, that fits, as a file, the tenant's circuit quota (the keys are charged
    /// by the setup, which knows their size). The object store copies it into the job's inputs;
    /// the setup decodes it whole and checks its digest.
    async fn validate(&self, p: &Platform, tenant: &str, spec: &mut RegisterSpec) -> Result<Planned<Step>, PlatformError> {
        const FIELD: &str = "r1cs_object_key";
        check_upload(FIELD, tenant, &spec.r1cs_object)?;
        let key = &spec.r1cs_object;
        let size = match p.blobs().size(key).await {
            Err(blobstore::BlobError::NotFound(_)) => return Err(invalid(FIELD, format!("{key:?}: no such upload"))),
            r => r?,
        };
        let (curve, head) = r1cs_head(p, key, size).await?.map_err(|e| invalid(FIELD, e.to_string()))?;
        let constraints = head.num_constraints as usize;
        if constraints > MAX_CONSTRAINTS {
            return Err(invalid(FIELD, format!("{constraints} constraints, at most {MAX_CONSTRAINTS} on the platform")));
        }
        if constraints == 0 {
            return Err(invalid(FIELD, "the circuit has no constraints"));
        }
        spec.curve = Some(curve);
        spec.max_circuit_bytes = if tenant.is_empty() { None } else { p.config().quotas.max_circuit_bytes };
        if let Some(max) = spec.max_circuit_bytes {
            let held = p.job_store().usage(tenant, jobs::Usage::Circuits).await?;
            if held.saturating_add(size) > max {
                return Err(jobs::JobError::LimitReached { limit: jobs::LIMIT_CIRCUIT_BYTES, max }.into());
            }
        }
        let copy = InputCopy { name: R1CS.to_string(), from: key.clone(), size, field: FIELD };
        Ok(Planned { copies: vec![copy], ..Planned::tasks(vec![(Step::Setup, 1)]) })
    }

    fn plan(_spec: &RegisterSpec) -> Vec<Effect<Step>> {
        vec![Effect::Dispatch(Step::Setup, 0..1)]
    }

    /// The setup, once per circuit; then the job's outputs (what was registered, the key to
    /// pin) and its manifest.
    async fn work(&self, p: &Platform, job: &Job<Self>, _step: Step, _index: u64, _lease: &Lease) -> Result<String, PlatformError> {
        let (id, spec, tenant) = (job.id(), &job.spec, job.record.tenant.as_str());
        let info = match p.registered_circuit(tenant, &spec.circuit_id).await? {
            // Registered already (by an earlier delivery of this task, or another registration).
            Some(info) => info,
            None => setup_and_store(p, id, tenant, spec).await?,
        };
        let vk = p.registered_vk(tenant, &info).await?;
        p.blobs().put(&layout::proof_file(id, CIRCUIT_JSON), Bytes::from(serde_json::to_vec_pretty(&info).map_err(corrupt)?)).await?;
        p.blobs().put(&layout::proof_file(id, "vk.bin"), vk).await?;
        let pins = [("vk_digest".to_string(), info.vk_digest.clone())].into();
        crate::manifest::Manifest::publish(p, id, REGISTER_JOB, pins, Vec::new()).await?;
        Ok(String::new())
    }

    fn on_done(_spec: &RegisterSpec, _progress: &Progress<Step>, _report: &Report<Step>) -> Vec<Effect<Step>> {
        vec![Effect::Done]
    }

    async fn verify_outputs(&self, _p: &Platform, _job: &Job<Self>, _pins: Pins<'_>) -> Result<Result<String, String>, PlatformError> {
        // A registration publishes a key (GetCircuit returns it with its digest); the proofs
        // made under it are the pari.circom jobs'.
        Err(crate::kinds::no_proof(REGISTER_JOB))
    }

    fn scratch_prefixes(job: &str) -> Vec<String> {
        vec![layout::inputs_prefix(job)]
    }

    fn limits() -> Vec<crate::limit::Limit> {
        vec![crate::limit::Limit::new(REGISTER_JOB, "r1cs_object_key", MAX_CONSTRAINTS as u64, "count", "constraints of a registered circuit")]
    }
}

/// The setup of job `job`'s circuit, charged to `tenant`'s circuit quota, then stored:
/// `circuit.r1cs`, the key pair under its digest, and `circuit.json` last (the circuit exists
/// from then on).
async fn setup_and_store(p: &Platform, job: &str, tenant: &str, spec: &RegisterSpec) -> Result<CircuitInfo, PlatformError> {
    let r1cs = p.blobs().get(&layout::input(job, R1CS)).await?;
    if circom::digest(&r1cs) != spec.circuit_id {
        return Err(contract::reject(format!("r1cs_object_key: {:?} changed after it was registered as circuit {}", spec.r1cs_object, spec.circuit_id)));
    }
    let curve = spec.curve.ok_or_else(|| corrupt(format!("job {job}: no curve recorded")))?;
    let bytes = r1cs.clone();
    let (shape, pk, vk) = crate::work::blocking(move |_| on_curve!(curve, E => setup::<E>(&bytes))).await??;
    let vk_digest = KeyDigest::of_bytes(&vk).to_string();
    let id = &spec.circuit_id;
    // The tenant's circuit quota, charged what is about to be written (a delivery again charges
    // the same again: per circuit id). Past it, the job fails naming the quota and writes
    // nothing.
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
        job_id: job.to_string(),
    };
    // Last: the circuit exists from here on.
    let json = Bytes::from(serde_json::to_vec_pretty(&info).map_err(corrupt)?);
    p.blobs().put(&layout::circuit_file(tenant, id, CIRCUIT_JSON), json).await?;
    tracing::info!(circuit = %id, curve = curve.as_str(), constraints = shape.constraints, "circuit registered");
    Ok(info)
}

/// The setup of a circom circuit: its shape and the key pair's bytes.
/// Its randomness comes from the operating system and is kept nowhere: nothing stored rebuilds
/// the key (its trapdoor dies with this call). Keys live under their own digest, so a
/// redelivered setup that makes another pair harms nothing (see the module doc).
/// A file its header let through but whose whole does not decode (a constraint cut short, wires
/// the constraints do not use) is the request's fault: the job fails naming the field.
fn setup<E: Pairing>(r1cs: &[u8]) -> Result<(Shape, Vec<u8>, Vec<u8>), PlatformError> {
    let r = circom::R1cs::<E::ScalarField>::from_bytes(r1cs).map_err(|e| contract::reject(format!("r1cs_object_key: {e}")))?;
    let mut rng = rand_chacha::ChaCha20Rng::from_entropy();
    let (pk, vk) = ::pari::setup::<E, _, _>(circom::CircomCircuit { r1cs: &r, witness: None }, &mut rng).map_err(pari_err)?;
    Ok((shape_of(&r), pk.to_bytes(), vk.to_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stored spec names a circuit id and a resolved curve; one setup, then the job is done.
    #[test]
    fn a_registration_is_one_setup() {
        let spec = RegisterSpec { circuit_id: "ab".repeat(32), r1cs_object: "tenants/t/uploads/c.r1cs".into(), curve: Some(Curve::Bn254), max_circuit_bytes: None };
        CircuitRegister::check(&spec).unwrap();
        for bad in [RegisterSpec { curve: None, ..spec.clone() }, RegisterSpec { circuit_id: "../x".into(), ..spec.clone() }] {
            assert!(matches!(CircuitRegister::check(&bad), Err(PlatformError::InvalidJob { .. })), "{bad:?}");
        }
        assert_eq!(CircuitRegister::plan(&spec), vec![Effect::Dispatch(Step::Setup, 0..1)]);
        let done = Progress::of(&[(Step::Setup, 1, 1)]);
        assert_eq!(CircuitRegister::on_done(&spec, &done, &Report { step: Step::Setup, index: 0, payload: String::new() }), vec![Effect::Done]);
    }
}

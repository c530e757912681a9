//! The ProofJob reconciler: submits the job over gRPC (once, with an idempotency key), then
//! mirrors `GetJob` into the status until the job ends; deleting a ProofJob whose job is still
//! running cancels it (finalizer).
//!
//! Each namespace is a tenant of its own (`ns-<namespace>`, the planner's naming): every call
//! names the ProofJob's namespace in the `x-prover-tenant` header, which the planner honours for
//! the operator's tenant alone
//! (`--delegating-tenant`). So namespaces have their own quotas, idempotency keys, base jobs and
//! circuits, and a ProofJob whose `status.jobId` was edited to another namespace's job reaches
//! nothing there (its GetJob and CancelJob are NOT_FOUND).
//!
//! Within a namespace the status is not trusted either: whoever may patch `proofjobs/status` can
//! point `status.jobId` at another ProofJob's job. Every job carries the idempotency key it was
//! submitted with, and the operator re-derives the key of each ProofJob from its UID and spec
//! ([`submission_key`]): a job whose key differs is neither mirrored (the ProofJob fails, naming
//! it) nor cancelled when the ProofJob is deleted ([`not_ours`]).

use std::sync::Arc;
use std::time::Duration;

use api::v1 as pb;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{finalizer, Event};
use kube::{Api, Client, Resource, ResourceExt};
use tonic::Code;

use crate::crd::{JobKind, Phase, ProofJob, ProofJobSpec, ProofJobStatus, TaskProgress};
use crate::{Error, FIELD_MANAGER};

/// A JobService request on behalf of `namespace`'s tenant (see the module doc).
pub fn for_namespace<T>(message: T, namespace: &str) -> Result<tonic::Request<T>, Error> {
    let mut r = tonic::Request::new(message);
    let value = namespace.parse().map_err(|_| Error::Invalid(format!("namespace {namespace:?} is not a valid header value")))?;
    r.metadata_mut().insert("x-prover-tenant", value);
    Ok(r)
}

/// Finalizer that holds a deleted ProofJob until its running job is cancelled.
pub const FINALIZER: &str = "prover.dev/cancel-job";

pub struct JobContext {
    pub client: Client,
    /// The JobService, sending the operator's API token (`--token`) on every call.
    pub jobs: api::AuthedClient,
    /// How often a job that has not ended is polled.
    pub poll: Duration,
    /// Retry delay after an error (API server or JobService unreachable), and for a
    /// submission refused with FAILED_PRECONDITION (e.g. the base job of an update not done).
    pub retry: Duration,
    /// The submissions refused for the namespace's quota, by ProofJob UID: how many times in a
    /// row (see [`quota_backoff`]). Kept in memory: a restarted operator starts again at `retry`.
    pub quota_waits: QuotaWaits,
}

/// Per ProofJob, how many submissions in a row the planner refused for a quota
/// (RESOURCE_EXHAUSTED).
#[derive(Debug, Default)]
pub struct QuotaWaits(std::sync::Mutex<std::collections::HashMap<String, u32>>);

impl QuotaWaits {
    /// One more refusal of `uid`'s submission: the count so far, this one included.
    fn refused(&self, uid: &str) -> u32 {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(uid.to_string()).or_default();
        *n = n.saturating_add(1);
        *n
    }

    /// `uid`'s submission went through (or it is gone): forget its refusals.
    fn clear(&self, uid: &str) {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).remove(uid);
    }
}

/// The longest wait between two submissions of a ProofJob refused for its quota.
pub const QUOTA_BACKOFF_MAX: Duration = Duration::from_secs(300);

/// How long a ProofJob whose submission was refused for a quota `refusals` times in a row waits
/// before it is submitted again: `retry`, doubled with each refusal, at most
/// [`QUOTA_BACKOFF_MAX`]. With a fixed 10 s, 436 ProofJobs over a namespace's quota were each
/// resubmitted every 10 s, each submission costing the planner a validation and, for a
/// 1,024-witness job, some 3,000 object-store calls (N3 of the platform review).
pub fn quota_backoff(retry: Duration, refusals: u32) -> Duration {
    retry.saturating_mul(1u32 << refusals.saturating_sub(1).min(16)).min(QUOTA_BACKOFF_MAX)
}

/// The idempotency key a ProofJob is submitted with: the resource's UID (unique in the cluster),
/// or the user's `spec.idempotencyKey` qualified by the namespace, so that two namespaces using
/// the same key get two jobs instead of one attaching to the other's. UIDs contain no `/`, so
/// the two forms never collide.
pub fn submission_key(namespace: &str, user_key: Option<&str>, uid: &str) -> Result<String, String> {
    match user_key.filter(|k| !k.is_empty()) {
        None => Ok(uid.to_string()),
        Some(k) => {
            let key = format!("{namespace}/{k}");
            let room = jobs_key_limit().saturating_sub(namespace.len() + 1);
            if key.len() > jobs_key_limit() || k.bytes().any(|b| b.is_ascii_whitespace() || b.is_ascii_control()) {
                return Err(format!("spec.idempotencyKey: at most {room} printable characters without spaces in namespace {namespace:?}"));
            }
            Ok(key)
        }
    }
}

/// The JobService's limit on idempotency keys.
const fn jobs_key_limit() -> usize {
    128
}

/// The `SubmitJobRequest` for a spec, or why the spec is invalid.
pub fn submit_request(spec: &ProofJobSpec, idempotency_key: &str) -> Result<pb::SubmitJobRequest, String> {
    use pb::submit_job_request::Params;
    let given: Vec<&str> = [
        spec.reckle_batch.as_ref().map(|_| "reckleBatch"),
        spec.reckle_update.as_ref().map(|_| "reckleUpdate"),
        spec.pari_batch.as_ref().map(|_| "pariBatch"),
        spec.pari_circom.as_ref().map(|_| "pariCircom"),
        spec.hekaton.as_ref().map(|_| "hekaton"),
        spec.noop.as_ref().map(|_| "noop"),
        spec.testudo.as_ref().map(|_| "testudo"),
    ]
    .into_iter()
    .flatten()
    .collect();
    let wanted = match spec.kind {
        JobKind::ReckleBatch => "reckleBatch",
        JobKind::ReckleUpdate => "reckleUpdate",
        JobKind::PariBatch => "pariBatch",
        JobKind::PariCircom => "pariCircom",
        JobKind::Hekaton => "hekaton",
        JobKind::Noop => "noop",
        JobKind::Testudo => "testudo",
    };
    if given != [wanted] {
        return Err(format!(
            "invalid spec: kind {} needs spec.{wanted} and no other parameters (given: {})",
            spec.kind.as_str(),
            if given.is_empty() { "none".to_string() } else { given.join(", ") }
        ));
    }
    let params = match spec.kind {
        JobKind::Hekaton => {
            let p = spec.hekaton.as_ref().expect("checked above");
            Params::Hekaton(pb::HekatonParams {
                circuit: p.circuit.clone(),
                subcircuits: p.subcircuits,
                steps: p.steps,
                wires: p.wires,
                depth: p.depth,
                updates: p.updates,
                parts: p.parts,
                seed: p.seed,
                final_proof: p.final_proof,
            })
        }
        JobKind::PariBatch => {
            let p = spec.pari_batch.as_ref().expect("checked above");
            Params::PariBatch(pb::PariBatchParams {
                circuit: p.circuit.clone(),
                size: p.size,
                seed_start: p.seed_start,
                count: p.count,
                proofs_per_task: p.proofs_per_task.unwrap_or(0),
                bundle_size: p.bundle_size.unwrap_or(0),
            })
        }
        JobKind::Noop => Params::Noop(pb::NoopParams { tasks: spec.noop.as_ref().expect("checked above").tasks }),
        JobKind::Testudo => {
            let p = spec.testudo.as_ref().expect("checked above");
            Params::Testudo(pb::TestudoParams { circuit_id: p.circuit_id.clone(), witness_object_keys: p.witness_object_keys.clone(), compress: p.compress })
        }
        JobKind::PariCircom => {
            let p = spec.pari_circom.as_ref().expect("checked above");
            Params::PariCircom(pb::PariCircomParams {
                circuit_id: p.circuit_id.clone(),
                witness_object_keys: p.witness_object_keys.clone(),
                proofs_per_task: p.proofs_per_task.unwrap_or(0),
                bundle_size: p.bundle_size.unwrap_or(0),
            })
        }
        JobKind::ReckleBatch => {
            let p = spec.reckle_batch.as_ref().expect("checked above");
            let leaves = match (&p.leaves, &p.leaves_object_key) {
                (Some(v), None) => pb::reckle_batch_params::Leaves::Inline(pb::LeafValues { values: v.clone() }),
                (None, Some(k)) => pb::reckle_batch_params::Leaves::ObjectKey(k.clone()),
                _ => return Err("invalid spec.reckleBatch: give exactly one of leaves and leavesObjectKey".into()),
            };
            Params::ReckleBatch(pb::ReckleBatchParams {
                log_n: p.log_n,
                log_bucket: p.log_bucket,
                batch: p.batch.clone(),
                leaves: Some(leaves),
                final_proof: p.final_proof,
            })
        }
        JobKind::ReckleUpdate => {
            let p = spec.reckle_update.as_ref().expect("checked above");
            let mut changes = Vec::with_capacity(p.changes.len());
            for (i, c) in p.changes.iter().enumerate() {
                use pb::reckle_change::Change as C;
                let change = match (&c.set, c.add, c.remove) {
                    (Some(s), None, None) => C::Set(pb::SetLeaf { index: s.index, value: s.value }),
                    (None, Some(a), None) => C::Add(a),
                    (None, None, Some(r)) => C::Remove(r),
                    _ => return Err(format!("invalid spec.reckleUpdate.changes[{i}]: give exactly one of set, add, remove")),
                };
                changes.push(pb::ReckleChange { change: Some(change) });
            }
            Params::ReckleUpdate(pb::ReckleUpdateParams { base_job_id: p.base_job_id.clone(), changes, final_proof: p.final_proof })
        }
    };
    Ok(pb::SubmitJobRequest { idempotency_key: idempotency_key.to_string(), params: Some(params) })
}

/// Copies a JobService `Job` into the status.
pub fn mirror(status: &mut ProofJobStatus, job: &pb::Job) {
    status.phase = match pb::JobState::try_from(job.state) {
        Ok(pb::JobState::Queued) => Phase::Queued,
        Ok(pb::JobState::Running) => Phase::Running,
        Ok(pb::JobState::Done) => Phase::Done,
        Ok(pb::JobState::Failed) => Phase::Failed,
        Ok(pb::JobState::Cancelled) => Phase::Cancelled,
        Ok(pb::JobState::Unspecified) | Err(_) => Phase::Pending,
    };
    if !job.job_id.is_empty() {
        status.job_id = Some(job.job_id.clone());
    }
    status.tasks = job.tasks.iter().map(|t| TaskProgress { kind: t.kind.clone(), done: t.done, total: t.total }).collect();
    status.proof_prefix = (!job.proof_prefix.is_empty()).then(|| job.proof_prefix.clone());
    status.message = (!job.message.is_empty()).then(|| job.message.clone());
}

async fn patch_status(api: &Api<ProofJob>, name: &str, status: &ProofJobStatus) -> Result<(), Error> {
    // Server-side apply: fields this manager set before and now leaves out are removed.
    let patch = serde_json::json!({
        "apiVersion": ProofJob::api_version(&()),
        "kind": ProofJob::kind(&()),
        "status": status,
    });
    api.patch_status(name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&patch)).await?;
    Ok(())
}

/// Reconciles one ProofJob (the `Controller`'s reconcile function).
pub async fn reconcile(obj: Arc<ProofJob>, ctx: Arc<JobContext>) -> Result<Action, Error> {
    let ns = obj.namespace().ok_or_else(|| Error::Invalid("ProofJob without a namespace".into()))?;
    let api: Api<ProofJob> = Api::namespaced(ctx.client.clone(), &ns);
    finalizer(&api, FINALIZER, obj, |event| async {
        match event {
            Event::Apply(pj) => apply(&pj, &api, &ctx).await,
            Event::Cleanup(pj) => cleanup(&pj, &ctx).await,
        }
    })
    .await
    .map_err(|e| Error::Finalizer(Box::new(e)))
}

async fn apply(pj: &ProofJob, api: &Api<ProofJob>, ctx: &JobContext) -> Result<Action, Error> {
    let name = pj.name_any();
    let old = pj.status.clone().unwrap_or_default();
    if old.phase.is_terminal() {
        return Ok(Action::await_change());
    }
    let mut new = old.clone();
    new.observed_generation = pj.metadata.generation;
    let mut retry_later = false;
    let mut retry_after = None;
    match old.job_id.clone() {
        None => {
            let ns = pj.namespace().unwrap_or_default();
            let uid = pj.uid().ok_or_else(|| Error::Invalid(format!("ProofJob {ns}/{name} has no UID")))?;
            match submission_key(&ns, pj.spec.idempotency_key.as_deref(), &uid).and_then(|key| Ok((submit_request(&pj.spec, &key)?, key))) {
                Err(message) => {
                    new.phase = Phase::Failed;
                    new.message = Some(message);
                }
                Ok((req, key)) => match ctx.jobs.clone().submit_job(for_namespace(req, &ns)?).await {
                    Ok(resp) => {
                        let resp = resp.into_inner();
                        ctx.quota_waits.clear(&uid);
                        tracing::info!(proofjob = %name, job_id = %resp.job_id, created = resp.created, "submitted");
                        new.job_id = Some(resp.job_id.clone());
                        new.idempotency_key = Some(key);
                        match resp.job {
                            Some(job) => mirror(&mut new, &job),
                            None => {
                                new.phase = Phase::Queued;
                                new.message = None;
                            }
                        }
                    }
                    Err(s) if s.code() == Code::InvalidArgument => {
                        tracing::info!(proofjob = %name, message = %s.message(), "submission refused");
                        new.phase = Phase::Failed;
                        new.message = Some(s.message().to_string());
                    }
                    Err(s) if s.code() == Code::ResourceExhausted => {
                        // The namespace's quota (active jobs, tasks per hour, ...): wait for it,
                        // longer with each refusal, rather than resubmit every `retry`.
                        let wait = quota_backoff(ctx.retry, ctx.quota_waits.refused(&uid));
                        tracing::info!(proofjob = %name, message = %s.message(), ?wait, "submission refused for a quota");
                        new.phase = Phase::Pending;
                        new.message = Some(format!("waiting for the namespace's quota: {}", s.message()));
                        retry_after = Some(wait);
                    }
                    Err(s) if s.code() == Code::FailedPrecondition => {
                        // E.g. the base job of an update is not done yet: wait and retry.
                        new.phase = Phase::Pending;
                        new.message = Some(format!("not submitted yet: {}", s.message()));
                        retry_later = true;
                    }
                    Err(status) => return Err(unreachable(api, &name, &old, new, "SubmitJob", status).await),
                },
            }
        }
        Some(job_id) => match ctx.jobs.clone().get_job(for_namespace(pb::GetJobRequest { job_id: job_id.clone() }, &pj.namespace().unwrap_or_default())?).await {
            Ok(job) => {
                let job = job.into_inner();
                match not_ours(pj, &job) {
                    // A planner that does not report keys yet (an upgrade under way): mirror as
                    // before; cancelling still needs the key (see `cleanup`).
                    Some(_) if job.idempotency_key.is_empty() => mirror(&mut new, &job),
                    Some(why) => {
                        tracing::warn!(proofjob = %name, %job_id, %why, "status.jobId names a job this ProofJob did not submit");
                        new.phase = Phase::Failed;
                        new.message = Some(why);
                    }
                    None => mirror(&mut new, &job),
                }
            }
            Err(s) if s.code() == Code::NotFound => {
                new.phase = Phase::Failed;
                new.message = Some(format!("the JobService no longer knows job {job_id}"));
            }
            Err(status) => return Err(unreachable(api, &name, &old, new, "GetJob", status).await),
        },
    }
    if new != old {
        patch_status(api, &name, &new).await?;
    }
    Ok(if new.phase.is_terminal() {
        Action::await_change()
    } else if let Some(wait) = retry_after {
        Action::requeue(wait)
    } else if retry_later {
        Action::requeue(ctx.retry)
    } else {
        Action::requeue(ctx.poll)
    })
}

/// The JobService failed (unavailable, timed out, ...): say so in the status (once; the
/// phase stays) and return the error, which the error policy retries.
async fn unreachable(api: &Api<ProofJob>, name: &str, old: &ProofJobStatus, mut new: ProofJobStatus, op: &'static str, status: tonic::Status) -> Error {
    new.message = Some(format!("retrying: JobService {op}: {}", status.message()));
    if new != *old {
        if let Err(e) = patch_status(api, name, &new).await {
            tracing::warn!(proofjob = %name, error = %e, "status update failed");
        }
    }
    Error::Grpc { op, status }
}

async fn cleanup(pj: &ProofJob, ctx: &JobContext) -> Result<Action, Error> {
    if let Some(uid) = pj.uid() {
        ctx.quota_waits.clear(&uid);
    }
    let Some(status) = &pj.status else { return Ok(Action::await_change()) };
    let (Some(job_id), false) = (&status.job_id, status.phase.is_terminal()) else {
        return Ok(Action::await_change());
    };
    let ns = pj.namespace().unwrap_or_default();
    // `status.jobId` is editable by whoever may patch the status: cancel only a job that carries
    // the idempotency key this ProofJob submits with, derived again from its UID and spec.
    let job = match ctx.jobs.clone().get_job(for_namespace(pb::GetJobRequest { job_id: job_id.clone() }, &ns)?).await {
        Ok(job) => job.into_inner(),
        Err(s) if s.code() == Code::NotFound => {
            tracing::info!(proofjob = %pj.name_any(), %job_id, "ProofJob deleted: its job is gone already");
            return Ok(Action::await_change());
        }
        Err(status) => return Err(Error::Grpc { op: "GetJob", status }),
    };
    if let Some(why) = not_ours(pj, &job) {
        tracing::warn!(proofjob = %pj.name_any(), %job_id, %why, "ProofJob deleted: not cancelling a job it did not submit");
        return Ok(Action::await_change());
    }
    match ctx.jobs.clone().cancel_job(for_namespace(pb::CancelJobRequest { job_id: job_id.clone() }, &ns)?).await {
        Ok(job) => {
            let job = job.into_inner();
            tracing::info!(proofjob = %pj.name_any(), %job_id, state = job.state, "ProofJob deleted: job cancelled");
        }
        // Gone already, or ended meanwhile: nothing to cancel.
        Err(s) if matches!(s.code(), Code::NotFound | Code::FailedPrecondition) => {
            tracing::info!(proofjob = %pj.name_any(), %job_id, message = %s.message(), "ProofJob deleted: nothing to cancel");
        }
        Err(status) => return Err(Error::Grpc { op: "CancelJob", status }),
    }
    Ok(Action::await_change())
}

/// Why `job` is not the job `pj` submitted (its idempotency key is not the one `pj` submits
/// with, re-derived from the UID and spec rather than read from the editable status), or None.
/// A job without a key (a planner too old to report it) is not taken as ours.
pub fn not_ours(pj: &ProofJob, job: &pb::Job) -> Option<String> {
    let ns = pj.namespace().unwrap_or_default();
    let Some(uid) = pj.uid() else { return Some(format!("ProofJob {ns}/{} has no UID", pj.name_any())) };
    let expected = match submission_key(&ns, pj.spec.idempotency_key.as_deref(), &uid) {
        Ok(k) => k,
        Err(e) => return Some(e),
    };
    (job.idempotency_key != expected).then(|| {
        format!(
            "status.jobId names job {}, which this ProofJob did not submit (its idempotency key is {:?}, not {expected:?}); not following it",
            job.job_id, job.idempotency_key
        )
    })
}

pub fn error_policy(obj: Arc<ProofJob>, err: &Error, ctx: Arc<JobContext>) -> Action {
    tracing::warn!(proofjob = %obj.name_any(), error = %err, "reconcile failed; retrying");
    Action::requeue(ctx.retry)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{PariBatch, ReckleBatch, ReckleChange, ReckleUpdate, SetLeaf};

    fn pari() -> ProofJobSpec {
        ProofJobSpec {
            kind: JobKind::PariBatch,
            pari_batch: Some(PariBatch { circuit: "chain".into(), size: 8, seed_start: 3, count: 4, proofs_per_task: Some(2), bundle_size: None }),
            ..Default::default()
        }
    }

    /// A ProofJob refused for its quota waits `retry`, then twice as long with each refusal,
    /// never more than five minutes; a submission that goes through starts it again.
    #[test]
    fn quota_refusals_back_off_to_a_cap() {
        let retry = Duration::from_secs(10);
        let waits: Vec<u64> = (1..=8).map(|n| quota_backoff(retry, n).as_secs()).collect();
        assert_eq!(waits, vec![10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(quota_backoff(retry, u32::MAX), QUOTA_BACKOFF_MAX);
        let w = QuotaWaits::default();
        assert_eq!((w.refused("a"), w.refused("a"), w.refused("b")), (1, 2, 1));
        w.clear("a");
        assert_eq!(w.refused("a"), 1);
    }

    #[test]
    fn pari_request_carries_params_and_key() {
        let req = submit_request(&pari(), "uid-1").unwrap();
        assert_eq!(req.idempotency_key, "uid-1");
        let Some(pb::submit_job_request::Params::PariBatch(p)) = req.params else { panic!("{req:?}") };
        assert_eq!((p.circuit.as_str(), p.size, p.seed_start, p.count, p.proofs_per_task, p.bundle_size), ("chain", 8, 3, 4, 2, 0));
    }

    /// A pari-circom ProofJob carries the registered circuit and the witnesses' object keys; a
    /// spec naming the kind without its parameters (or with another kind's) is refused.
    #[test]
    fn pari_circom_request_carries_circuit_and_witnesses() {
        use crate::crd::PariCircom;
        let spec = ProofJobSpec {
            kind: JobKind::PariCircom,
            pari_circom: Some(PariCircom {
                circuit_id: "ab".repeat(32),
                witness_object_keys: vec!["tenants/t/uploads/w0.wtns".into(), "tenants/t/uploads/w1.wtns".into()],
                proofs_per_task: None,
                bundle_size: Some(8),
            }),
            ..Default::default()
        };
        let req = submit_request(&spec, "uid-2").unwrap();
        let Some(pb::submit_job_request::Params::PariCircom(p)) = req.params else { panic!("{req:?}") };
        assert_eq!((p.circuit_id.len(), p.witness_object_keys.len(), p.proofs_per_task, p.bundle_size), (64, 2, 0, 8));
        let bare = ProofJobSpec { kind: JobKind::PariCircom, ..Default::default() };
        assert!(submit_request(&bare, "u").unwrap_err().contains("spec.pariCircom"));
        let mixed = ProofJobSpec { pari_batch: pari().pari_batch, ..spec };
        assert!(submit_request(&mixed, "u").unwrap_err().contains("pariBatch"));
    }

    /// Every job kind of the proto is a ProofJob kind, named as its params field (kebab case),
    /// and carries its parameters: the list is checked, not kept by hand (testudo and noop
    /// were once missing from it).
    #[test]
    fn every_job_kind_of_the_proto_is_a_proofjob_kind() {
        let proto = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../proto/prover/v1/jobs.proto")).unwrap();
        let mut oneof: Vec<String> = proto
            .lines()
            .skip_while(|l| l.trim() != "oneof params {")
            .skip(1)
            .take_while(|l| l.trim() != "}")
            .filter_map(|l| l.split_whitespace().nth(1).map(|f| f.replace('_', "-")))
            .collect();
        assert!(oneof.len() >= 7, "SubmitJobRequest's params not found in jobs.proto: {oneof:?}");
        let mut crd: Vec<String> = JobKind::ALL.iter().map(|k| k.as_str().to_string()).collect();
        oneof.sort();
        crd.sort();
        assert_eq!(crd, oneof, "the ProofJob kinds differ from SubmitJobRequest's params");
        let noop = ProofJobSpec { kind: JobKind::Noop, noop: Some(crate::crd::Noop { tasks: 3 }), ..Default::default() };
        let Some(pb::submit_job_request::Params::Noop(p)) = submit_request(&noop, "u").unwrap().params else { panic!() };
        assert_eq!(p.tasks, 3);
        let t = crate::crd::Testudo { circuit_id: "ab".repeat(32), witness_object_keys: vec!["tenants/t/uploads/w.wtns".into()], compress: true };
        let testudo = ProofJobSpec { kind: JobKind::Testudo, testudo: Some(t), ..Default::default() };
        let Some(pb::submit_job_request::Params::Testudo(p)) = submit_request(&testudo, "u").unwrap().params else { panic!() };
        assert_eq!((p.circuit_id.len(), p.witness_object_keys.len(), p.compress), (64, 1, true));
        let bare = ProofJobSpec { kind: JobKind::Testudo, ..Default::default() };
        assert!(submit_request(&bare, "u").unwrap_err().contains("spec.testudo"));
    }

    #[test]
    fn user_keys_are_qualified_by_namespace_and_uids_are_not() {
        assert_eq!(submission_key("team-a", None, "0f3c-uid").unwrap(), "0f3c-uid");
        assert_eq!(submission_key("team-a", Some(""), "0f3c-uid").unwrap(), "0f3c-uid");
        let a = submission_key("team-a", Some("nightly"), "u1").unwrap();
        let b = submission_key("team-b", Some("nightly"), "u2").unwrap();
        assert_eq!(a, "team-a/nightly");
        assert_ne!(a, b, "the same key in two namespaces must give two jobs");
        let long = "k".repeat(125);
        let err = submission_key("team-a", Some(&long), "u").unwrap_err();
        assert!(err.contains("spec.idempotencyKey") && err.contains("at most 121"), "{err}");
        assert!(submission_key("ns", Some("a b"), "u").unwrap_err().contains("spec.idempotencyKey"));
    }

    #[test]
    fn hekaton_request_carries_params() {
        let spec = ProofJobSpec {
            kind: JobKind::Hekaton,
            hekaton: Some(crate::crd::Hekaton { circuit: "synthetic".into(), subcircuits: 2, steps: 4, wires: 1, seed: 2, final_proof: true, ..Default::default() }),
            ..Default::default()
        };
        let req = submit_request(&spec, "k").unwrap();
        let Some(pb::submit_job_request::Params::Hekaton(p)) = req.params else { panic!("{req:?}") };
        assert_eq!((p.circuit.as_str(), p.subcircuits, p.steps, p.wires, p.seed, p.final_proof), ("synthetic", 2, 4, 1, 2, true));
        let wrong = ProofJobSpec { kind: JobKind::PariBatch, ..spec };
        assert!(submit_request(&wrong, "k").unwrap_err().contains("pariBatch"));
    }

    #[test]
    fn kind_must_match_the_params_given() {
        let mut s = pari();
        s.kind = JobKind::ReckleBatch;
        let e = submit_request(&s, "k").unwrap_err();
        assert!(e.contains("kind reckle-batch needs spec.reckleBatch") && e.contains("given: pariBatch"), "{e}");
        let mut s = pari();
        s.reckle_update = Some(ReckleUpdate::default());
        assert!(submit_request(&s, "k").unwrap_err().contains("given: reckleUpdate, pariBatch"));
        let s = ProofJobSpec { kind: JobKind::PariBatch, ..Default::default() };
        assert!(submit_request(&s, "k").unwrap_err().contains("given: none"));
    }

    #[test]
    fn reckle_requests() {
        let s = ProofJobSpec {
            kind: JobKind::ReckleBatch,
            reckle_batch: Some(ReckleBatch { log_n: 3, log_bucket: 1, batch: vec![1, 2], leaves: Some(vec![0; 8]), leaves_object_key: None, final_proof: false }),
            ..Default::default()
        };
        let Some(pb::submit_job_request::Params::ReckleBatch(p)) = submit_request(&s, "k").unwrap().params else { panic!() };
        assert_eq!(p.leaves, Some(pb::reckle_batch_params::Leaves::Inline(pb::LeafValues { values: vec![0; 8] })));
        let mut both = s.clone();
        both.reckle_batch.as_mut().unwrap().leaves_object_key = Some("x".into());
        assert!(submit_request(&both, "k").unwrap_err().contains("exactly one of leaves and leavesObjectKey"));

        let u = ProofJobSpec {
            kind: JobKind::ReckleUpdate,
            reckle_update: Some(ReckleUpdate {
                base_job_id: "j".into(),
                changes: vec![
                    ReckleChange { set: Some(SetLeaf { index: 1, value: 9 }), ..Default::default() },
                    ReckleChange { add: Some(4), ..Default::default() },
                    ReckleChange { remove: Some(2), ..Default::default() },
                ],
                final_proof: false,
            }),
            ..Default::default()
        };
        let Some(pb::submit_job_request::Params::ReckleUpdate(p)) = submit_request(&u, "k").unwrap().params else { panic!() };
        assert_eq!(p.changes.len(), 3);
        assert_eq!(p.changes[1].change, Some(pb::reckle_change::Change::Add(4)));
        let mut bad = u.clone();
        bad.reckle_update.as_mut().unwrap().changes.push(ReckleChange::default());
        assert!(submit_request(&bad, "k").unwrap_err().contains("changes[3]"));
    }

    #[test]
    fn mirror_copies_the_job() {
        let mut st = ProofJobStatus { message: Some("old".into()), ..Default::default() };
        let job = pb::Job {
            job_id: "j1".into(),
            kind: "pari.batch".into(),
            state: pb::JobState::Done as i32,
            message: String::new(),
            tasks: vec![pb::TaskProgress { kind: "pari.prove".into(), done: 2, total: 2 }],
            created_unix_ms: 1,
            updated_unix_ms: 2,
            proof_prefix: "jobs/j1/proof/".into(),
            idempotency_key: "uid-1".into(),
        };
        mirror(&mut st, &job);
        assert_eq!(st.phase, Phase::Done);
        assert_eq!(st.job_id.as_deref(), Some("j1"));
        assert_eq!(st.tasks, vec![TaskProgress { kind: "pari.prove".into(), done: 2, total: 2 }]);
        assert_eq!(st.proof_prefix.as_deref(), Some("jobs/j1/proof/"));
        assert_eq!(st.message, None);
    }

    /// Only the job carrying the key re-derived from the UID and spec is this ProofJob's: not
    /// another ProofJob's (another UID), not one submitted under another user key or in another
    /// namespace, not one without a key.
    #[test]
    fn a_job_is_ours_only_by_its_key() {
        let mut pj = ProofJob::new("p", pari());
        pj.metadata.namespace = Some("team-a".into());
        pj.metadata.uid = Some("0f3c-uid".into());
        let job = |key: &str| pb::Job { job_id: "j".into(), idempotency_key: key.into(), ..Default::default() };
        assert_eq!(not_ours(&pj, &job("0f3c-uid")), None);
        for other in ["9e1d-uid", "", "team-a/0f3c-uid", "team-b/nightly"] {
            assert!(not_ours(&pj, &job(other)).is_some_and(|m| m.contains("did not submit")), "{other}");
        }
        pj.spec.idempotency_key = Some("nightly".into());
        assert_eq!(not_ours(&pj, &job("team-a/nightly")), None);
        assert!(not_ours(&pj, &job("0f3c-uid")).is_some());
        assert!(not_ours(&pj, &job("team-b/nightly")).is_some());
        pj.metadata.uid = None;
        assert!(not_ours(&pj, &job("team-a/nightly")).is_some_and(|m| m.contains("no UID")));
    }
}

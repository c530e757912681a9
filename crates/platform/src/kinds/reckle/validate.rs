//! What a batch request and an update request are, over gRPC and checked before anything is
//! written: the two [`Mode`]s of [`super::Reckle`].

use api::v1 as pb;
use async_trait::async_trait;
use blobstore::BlobError;
use jobs::JobState;
use reckle::{Change, Params};

use super::{Leaves, Mode, ReckleJobSpec, JOB_BATCH, JOB_UPDATE, MAX_BATCH, MAX_CHANGES, MAX_LOG_N};
use crate::error::invalid;
use crate::kinds::InputCopy;
use crate::limit::Limit;
use crate::{layout, Platform, PlatformError};

/// The name of the job's leaves under its inputs ([`layout::reckle_leaves`]).
pub(super) const LEAVES_INPUT: &str = "leaves.bin";

/// `reckle.batch`: a tree of `2^log_n` leaves given inline or as an upload, and the batch.
#[derive(Default)]
pub struct Batch;

/// `reckle.update`: changes to a done Reckle job.
#[derive(Default)]
pub struct Update;

#[async_trait]
impl Mode for Batch {
    const NAME: &'static str = JOB_BATCH;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<ReckleJobSpec, PlatformError>> {
        let pb::submit_job_request::Params::ReckleBatch(p) = params else { return None };
        let leaves = match &p.leaves {
            Some(pb::reckle_batch_params::Leaves::Inline(v)) => Leaves::Inline(v.values.clone()),
            Some(pb::reckle_batch_params::Leaves::ObjectKey(k)) => Leaves::Object(k.clone()),
            None => return Some(Err(invalid("leaves", "give inline values or an object_key"))),
        };
        let spec = super::batch_spec(p.log_n, p.log_bucket, p.batch.clone(), leaves, p.final_proof);
        Some(Ok(spec))
    }

    async fn validate(p: &Platform, tenant: &str, spec: &mut ReckleJobSpec) -> Result<Vec<InputCopy>, PlatformError> {
        let log_n = spec.log_n;
        if log_n > MAX_LOG_N {
            return Err(invalid("log_n", format!("{log_n} is above the platform's limit of {MAX_LOG_N}")));
        }
        let params = Params::new(log_n, spec.log_bucket).map_err(|e| invalid("log_bucket", e.to_string()))?;
        if spec.batch.len() > MAX_BATCH {
            return Err(invalid("batch", format!("{} indices, at most {MAX_BATCH}", spec.batch.len())));
        }
        if spec.update.is_some() {
            return Err(invalid("update", "a batch request names no base job"));
        }
        // The plan, kept in the spec: a batch the tree does not hold is refused here, naming
        // `batch`, and the kind's validation and check reuse it.
        spec.derived()?;
        spec.wrap_vk_digest = super::wrap::wrap_request(p, spec.final_proof).await?;
        let expected = 8 * params.num_leaves();
        match &spec.leaves {
            None => Err(invalid("leaves", "give inline values or an object_key")),
            Some(Leaves::Inline(values)) if values.len() as u64 != params.num_leaves() => {
                Err(invalid("leaves", format!("expected {} values for log_n = {log_n}, got {}", params.num_leaves(), values.len())))
            }
            // Moved into the job's inputs by the kind's validation.
            Some(Leaves::Inline(_)) => Ok(Vec::new()),
            // Up to 1 GiB: checked by its size and copied by the object store, never read here.
            Some(Leaves::Object(key)) => {
                let key = key.clone();
                spec.leaves = None;
                blobstore::check_key(&key).map_err(|e| invalid("leaves.object_key", e.to_string()))?;
                // Only uploads, whether or not the API has tenants: an object key anywhere else
                // would copy another job's inputs (say, a stored secret) into this job's
                // published `leaves.bin`.
                let root = layout::uploads_root(tenant);
                if !key.starts_with(&root) || key.contains("..") {
                    return Err(invalid("leaves.object_key", format!("{key:?} is not under your upload prefix {root} (upload it with UploadInput / prover upload)")));
                }
                let size = match p.blobs().size(&key).await {
                    Err(BlobError::NotFound(_)) => return Err(invalid("leaves.object_key", format!("no object {key:?}"))),
                    r => r?,
                };
                if size != expected {
                    return Err(invalid(
                        "leaves.object_key",
                        format!("{key:?} has {size} bytes; log_n = {log_n} needs {} values of 8 bytes ({expected} bytes)", params.num_leaves()),
                    ));
                }
                Ok(vec![InputCopy { name: LEAVES_INPUT.into(), from: key, size, field: "leaves.object_key" }])
            }
        }
    }

    fn limits() -> Vec<Limit> {
        vec![
            Limit::new(JOB_BATCH, "log_n", MAX_LOG_N as u64, "log2", "leaves of the tree: 2^log_n"),
            Limit::new(JOB_BATCH, "log_bucket", reckle::MAX_LOG_BUCKET as u64, "log2", "leaves of a bucket: 2^log_bucket"),
            Limit::new(JOB_BATCH, "batch", MAX_BATCH as u64, "count", "indices of the batch"),
        ]
    }
}

#[async_trait]
impl Mode for Update {
    const NAME: &'static str = JOB_UPDATE;

    fn from_pb(params: &pb::submit_job_request::Params) -> Option<Result<ReckleJobSpec, PlatformError>> {
        let pb::submit_job_request::Params::ReckleUpdate(p) = params else { return None };
        let mut changes = Vec::with_capacity(p.changes.len());
        for (i, c) in p.changes.iter().enumerate() {
            use pb::reckle_change::Change as C;
            changes.push(match &c.change {
                Some(C::Set(s)) => Change::Set { index: s.index, value: s.value },
                Some(C::Add(i)) => Change::Add(*i),
                Some(C::Remove(i)) => Change::Remove(*i),
                None => return Some(Err(PlatformError::InvalidJob { field: "changes", reason: format!("changes[{i}]: empty change") })),
            });
        }
        Some(Ok(super::update_spec(p.base_job_id.clone(), changes, p.final_proof)))
    }

    async fn validate(p: &Platform, tenant: &str, spec: &mut ReckleJobSpec) -> Result<Vec<InputCopy>, PlatformError> {
        let Some(update) = spec.update.as_mut() else { return Err(invalid("update", "an update request names its base job")) };
        let base_job = update.base_job.clone();
        if update.changes.len() > MAX_CHANGES {
            return Err(invalid("changes", format!("{} changes, at most {MAX_CHANGES}", update.changes.len())));
        }
        jobs::check_id(&base_job).map_err(|_| invalid("base_job_id", format!("{base_job:?} is not a job id")))?;
        // The update reads the base job's leaves and node proofs: it must be the caller's. To
        // another tenant a job of someone else's does not exist (as in GetJob).
        let base = match p.job_store().get(&base_job).await? {
            Some(b) if b.tenant == tenant || tenant.is_empty() => b,
            _ if !tenant.is_empty() => return Err(PlatformError::NotFound(base_job)),
            _ => return Err(invalid("base_job_id", format!("no job {base_job}"))),
        };
        if base.state != JobState::Done {
            return Err(PlatformError::Precondition(format!("base job {base_job} is {}, not done", base.state.as_str())));
        }
        if base.kind != JOB_BATCH && base.kind != JOB_UPDATE {
            return Err(invalid("base_job_id", format!("job {base_job} is a {} job, not a Reckle job", base.kind)));
        }
        let base_spec = super::contract::spec_of::<super::ReckleBatch>(&base)?;
        let params = base_spec.params()?;
        // Jobs proved before the tree was stored in pieces (circuit version 2) cannot be the
        // base of an update: their node proofs are of other circuits.
        if !p.blobs().exists(&layout::reckle_piece_roots(&base_job, 0)).await? {
            return Err(PlatformError::Precondition(format!(
                "base job {base_job} was proved by an earlier version of the platform (no stored tree): submit a new batch job"
            )));
        }
        // Indices are checked here; the new leaves are written by the prepare task, streamed
        // from the base job's (up to 1 GiB, never whole in the planner).
        let plan = reckle::plan_update(params, &base_spec.batch, &update.changes).map_err(|e| invalid("changes", e.to_string()))?;
        update.base_batch = base_spec.batch.clone();
        spec.log_n = base_spec.log_n;
        spec.log_bucket = base_spec.log_bucket;
        spec.batch = plan.batch;
        spec.leaves = None;
        spec.wrap_vk_digest = super::wrap::wrap_request(p, spec.final_proof).await?;
        Ok(Vec::new())
    }

    fn limits() -> Vec<Limit> {
        vec![Limit::new(JOB_UPDATE, "changes", MAX_CHANGES as u64, "count", "changed leaves of the update")]
    }
}

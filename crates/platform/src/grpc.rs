//! The `prover.v1.JobService` gRPC API over a [`Platform`]: the planner's front door.
//!
//! Errors: bad input is `INVALID_ARGUMENT` with the field named; an idempotency key reused for
//! another request, a base job that is not done, or a proof asked of a job that is not done is
//! `FAILED_PRECONDITION`; an unknown job is `NOT_FOUND`; a tenant over a quota (active jobs,
//! tasks per job) is `RESOURCE_EXHAUSTED` naming the limit; backend trouble is `UNAVAILABLE`.
//!
//! Authentication ([`JobServiceImpl::with_tokens`]): every call must carry
//! `authorization: Bearer <token>`; the token's tenant (`auth` crate) owns the jobs it submits.
//! A call without a valid token is `UNAUTHENTICATED`; another tenant's job is `NOT_FOUND`
//! (indistinguishable from a job that does not exist), as a base job of an update too; idempotency
//! keys and listings are per tenant; an `object_key` input must lie under the tenant's upload
//! prefix `tenants/<tenant>/uploads/`. Tokens are resolved on every call, so a revoked token
//! stops working at once, and before the call's body is read ([`crate::grpc_auth`]). Without a
//! token store the API is open (one anonymous tenant).
//!
//! WatchJob: a stream polls its job until the job ends or the client goes away, whichever comes
//! first, and a tenant holds at most [`MAX_WATCHES_PER_TENANT`] streams at once.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use api::v1 as pb;
use api::v1::job_service_server::JobService;
use jobs::{JobRecord, JobState};

use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::{proof_prefix, Submission, Platform, PlatformError};
pub use crate::bounds::{
    CHUNK, MAX_MESSAGE_BYTES, MAX_PAGE_SIZE, MAX_PROOF_STREAMS_PER_TENANT, MAX_REQUEST_BYTES, MAX_STREAMS_PER_CONNECTION, MAX_UPLOAD_BYTES, MAX_UPLOAD_NAME,
    MAX_WATCHES_PER_TENANT, PROOF_CHUNKS_AHEAD, UPLOAD_BUFFER_BYTES,
};

pub struct JobServiceImpl {
    platform: Arc<Platform>,
    poll: Duration,
    tokens: Option<Arc<dyn auth::TokenStore>>,
    delegation: crate::grpc_auth::Delegation,
    /// Open WatchJob streams per tenant.
    watches: OpenStreams,
    /// Open GetProof streams per tenant.
    proofs: OpenStreams,
    /// What requests being received may hold ([`crate::budget`]).
    budget: Arc<crate::budget::RequestBudget>,
    /// What VerifyProof and GetBundle calls may take at once ([`crate::verify_gate`]).
    verify: Arc<crate::verify_gate::VerifyGate>,
}

/// Streams of one RPC open per tenant.
type OpenStreams = Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>;

/// One open stream (WatchJob, GetProof), counted against its tenant until dropped.
struct StreamSlot {
    tenant: String,
    open: OpenStreams,
}

impl StreamSlot {
    /// A place among `tenant`'s open `rpc` streams, at most `max`: RESOURCE_EXHAUSTED naming
    /// the RPC and the limit when they are taken.
    fn take(open: &OpenStreams, tenant: &str, max: usize, rpc: &str) -> Result<Self, Status> {
        let mut counts = open.lock().expect("open streams");
        let n = counts.entry(tenant.to_string()).or_default();
        if *n >= max {
            return Err(Status::resource_exhausted(format!("tenant limit reached: {rpc} streams open at once (at most {max}): close some first")));
        }
        *n += 1;
        Ok(Self { tenant: tenant.to_string(), open: open.clone() })
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut counts = self.open.lock().expect("open streams");
        if let Some(n) = counts.get_mut(&self.tenant) {
            *n -= 1;
            if *n == 0 {
                counts.remove(&self.tenant);
            }
        }
    }
}

/// Where a tenant may point `object_key` inputs.
pub fn upload_prefix(tenant: &str) -> String {
    crate::layout::uploads_root(tenant)
}

/// An upload's charge against its tenant's quota while its bytes arrive: dropped before the
/// upload is stored (`store` still set), it puts the name's earlier charge back, in a task of
/// its own since the call may be gone.
struct PendingCharge {
    store: Option<Arc<dyn jobs::JobStore>>,
    tenant: String,
    name: String,
    earlier: Option<u64>,
}

impl Drop for PendingCharge {
    fn drop(&mut self) {
        let Some(store) = self.store.take() else { return };
        let (tenant, name, earlier) = (std::mem::take(&mut self.tenant), std::mem::take(&mut self.name), self.earlier);
        let Ok(rt) = tokio::runtime::Handle::try_current() else { return };
        rt.spawn(async move {
            let back = match earlier {
                Some(bytes) => store.charge(&tenant, jobs::Usage::Uploads, &name, bytes, None, None).await.map(|_| ()),
                None => store.uncharge(&tenant, jobs::Usage::Uploads, &name).await,
            };
            if let Err(e) = back {
                tracing::warn!(tenant, name, error = %e, "a failed upload's charge was not put back (it expires by itself)");
            }
        });
    }
}

/// How long an upload's charge holds before its object is written: longer than any upload
/// runs, so only a charge a crash left behind expires.
pub const UPLOAD_CHARGE_HOLD: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// Where `UploadInput` puts an upload named `name`: under the tenant's upload prefix, or under
/// `uploads/` on an open API.
fn upload_key(tenant: &str, name: &str) -> Result<String, Status> {
    let ok = !name.is_empty()
        && name.len() <= MAX_UPLOAD_NAME
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
        && !name.starts_with('.');
    if !ok {
        return Err(Status::invalid_argument(format!(
            "invalid name: {name:?}: use 1 to {MAX_UPLOAD_NAME} letters, digits, '.', '-' and '_', not starting with '.'"
        )));
    }
    let key = format!("{}{name}", crate::layout::uploads_root(tenant));
    blobstore::check_key(&key).map_err(|e| Status::invalid_argument(format!("invalid name: {e}")))?;
    Ok(key)
}

impl JobServiceImpl {
    /// An open API: no authentication, every job visible to every caller.
    pub fn new(platform: Arc<Platform>) -> Self {
        let budget = crate::budget::RequestBudget::new(platform.config().request_budget_bytes);
        Self { platform, poll: Duration::from_millis(100), tokens: None, delegation: Default::default(), watches: Default::default(), proofs: Default::default(), budget, verify: crate::verify_gate::VerifyGate::new() }
    }

    /// Its VerifyProof calls bounded by `gate` instead of the default one.
    pub fn with_verify_gate(mut self, gate: Arc<crate::verify_gate::VerifyGate>) -> Self {
        self.verify = gate;
        self
    }

    /// Its calls sharing `budget` instead of one of the configured size (a test's shorter
    /// stall timeout, [`crate::budget::RequestBudget::with_stall`]).
    pub fn with_request_budget(mut self, budget: Arc<crate::budget::RequestBudget>) -> Self {
        self.budget = budget;
        self
    }

    /// The request budget its calls share ([`crate::budget`]).
    pub fn budget(&self) -> Arc<crate::budget::RequestBudget> {
        self.budget.clone()
    }

    /// Requires a bearer token from `tokens` on every call (see the module doc).
    pub fn with_tokens(mut self, tokens: Arc<dyn auth::TokenStore>) -> Self {
        self.tokens = Some(tokens);
        self
    }

    /// Lets tenant `delegator` act for other tenants (`--delegating-tenant`; see
    /// [`crate::grpc_auth`]).
    pub fn with_delegating_tenant(mut self, delegator: Option<String>) -> Self {
        self.delegation = crate::grpc_auth::Delegation { delegator };
        self
    }

    /// The caller's tenant: `""` on an open API. Served through [`JobServiceImpl::into_server`]
    /// the token was resolved before the body was read ([`crate::grpc_auth`]); a call that
    /// reaches the service another way (in-process) is resolved here.
    async fn tenant<T>(&self, request: &Request<T>) -> Result<String, Status> {
        let Some(tokens) = &self.tokens else { return Ok(String::new()) };
        if let Some(crate::grpc_auth::Tenant(t)) = request.extensions().get() {
            return Ok(t.clone());
        }
        crate::grpc_auth::resolve(tokens.as_ref(), &self.delegation, &request.metadata().clone().into_headers()).await
    }

    /// Job `id` if `tenant` owns it; another tenant's job reads as unknown.
    async fn owned(&self, tenant: &str, id: &str) -> Result<JobRecord, Status> {
        let rec = self.platform.record(id).await.map_err(status)?;
        if rec.tenant != tenant {
            return Err(status(PlatformError::NotFound(id.to_string())));
        }
        Ok(rec)
    }

    /// The service, with calls authenticated before their bodies are read.
    pub fn into_server(self) -> crate::grpc_auth::Authenticated<pb::job_service_server::JobServiceServer<Self>> {
        let (tokens, delegation, budget) = (self.tokens.clone(), self.delegation.clone(), self.budget.clone());
        let server = pb::job_service_server::JobServiceServer::new(self)
            .max_decoding_message_size(MAX_REQUEST_BYTES)
            .max_encoding_message_size(MAX_MESSAGE_BYTES);
        crate::grpc_auth::Authenticated::new(server, tokens, delegation, budget)
    }
}

pub fn status(e: PlatformError) -> Status {
    match e {
        PlatformError::InvalidJob { .. } => Status::invalid_argument(e.to_string()),
        PlatformError::Precondition(m) => Status::failed_precondition(m),
        PlatformError::NotFound(id) => Status::not_found(format!("no job {id}")),
        PlatformError::Quota(m) => Status::resource_exhausted(m),
        PlatformError::Queue(_) | PlatformError::Blob(_) | PlatformError::Jobs(_) => Status::unavailable(e.to_string()),
        e => Status::internal(e.to_string()),
    }
}

pub fn state_to_pb(s: JobState) -> pb::JobState {
    match s {
        JobState::Queued => pb::JobState::Queued,
        JobState::Running => pb::JobState::Running,
        JobState::Done => pb::JobState::Done,
        JobState::Failed => pb::JobState::Failed,
        JobState::Cancelled => pb::JobState::Cancelled,
    }
}

pub fn job_to_pb(r: &JobRecord) -> pb::Job {
    pb::Job {
        job_id: r.id.clone(),
        kind: r.kind.clone(),
        state: state_to_pb(r.state) as i32,
        message: r.message.clone(),
        tasks: r.tasks.iter().map(|(k, c)| pb::TaskProgress { kind: k.clone(), done: c.done, total: c.total }).collect(),
        created_unix_ms: r.created_ms,
        updated_unix_ms: r.updated_ms,
        proof_prefix: if r.state == JobState::Done { proof_prefix(&r.id) } else { String::new() },
        idempotency_key: r.idempotency_key.clone(),
    }
}

fn request_from_pb(registry: &crate::Registry, req: pb::SubmitJobRequest) -> Result<Submission, Status> {
    use pb::submit_job_request::Params;
    let Some(params) = req.params else {
        return Err(Status::invalid_argument("invalid params: one of reckle_batch, reckle_update, pari_batch, pari_circom, hekaton, noop, testudo is required"));
    };
    // Kinds on the typed contract parse their own message.
    if let Some(r) = registry.from_pb(&params) {
        return r.map_err(status);
    }
    match params {
        Params::ReckleBatch(_) => Err(Status::unimplemented("job kind reckle.batch is not served here")),
        Params::ReckleUpdate(_) => Err(Status::unimplemented("job kind reckle.update is not served here")),
        Params::Hekaton(_) => Err(Status::unimplemented("job kind hekaton.prove is not served here")),
        Params::PariBatch(_) => Err(Status::unimplemented("job kind pari.batch is not served here")),
        Params::PariCircom(_) => Err(Status::unimplemented("job kind pari.circom is not served here")),
        Params::Noop(_) => Err(Status::unimplemented("job kind noop is not served here")),
        Params::Testudo(_) => Err(Status::unimplemented("job kind testudo is not served here")),
    }
}

type BoxStream<T> = Pin<Box<dyn Stream<Item = Result<T, Status>> + Send + 'static>>;

#[tonic::async_trait]
impl JobService for JobServiceImpl {
    async fn upload_input(&self, request: Request<tonic::Streaming<pb::UploadChunk>>) -> Result<Response<pb::UploadInputResponse>, Status> {
        use blake2::Digest;
        let tenant = self.tenant(&request).await?;
        let mut stream = request.into_inner();
        let first = stream.message().await?.ok_or_else(|| Status::invalid_argument("invalid name: the upload stream is empty"))?;
        let key = upload_key(&tenant, &first.name)?;
        let total = first.total_size;
        if total > MAX_UPLOAD_BYTES {
            return Err(Status::invalid_argument(format!("invalid total_size: {total} bytes, at most {MAX_UPLOAD_BYTES}")));
        }
        // Written to the object store as it arrives (S3 multipart: one part in memory at a
        // time), so a 1 GiB upload costs the planner a part, not a gigabyte; visible only once
        // all the announced bytes have arrived. The part is held against the request budget
        // while the upload runs.
        let _part = self.budget.reserve(UPLOAD_BUFFER_BYTES.min(total.saturating_mul(2)), "an upload's buffered part", &tenant)?;
        // The tenant's upload quota, charged the announced size before a byte is stored (an
        // upload under a name used before replaces that one's charge). Until the object is
        // written the charge expires after a day, so an upload cut by a crash leaves nothing
        // charged; one that fails puts the name's earlier charge back. Once written, it
        // expires with the upload's retention, when `admin gc` may delete the object.
        let store = self.platform.job_store().clone();
        let name = first.name.clone();
        let expires = jobs::now_ms() + UPLOAD_CHARGE_HOLD.as_millis() as u64;
        let earlier =
            store.charge(&tenant, jobs::Usage::Uploads, &name, total, self.platform.config().quotas.max_upload_bytes, Some(expires)).await.map_err(|e| status(e.into()))?;
        // Put back unless the upload is stored, however this call ends: an error, or the
        // client going away (the server then drops this future at its next await).
        let mut charge = PendingCharge { store: Some(store.clone()), tenant: tenant.clone(), name: name.clone(), earlier };
        let blobs = self.platform.blobs().clone();
        let mut upload = blobs.upload(&key).await.map_err(|e| status(e.into()))?;
        let mut hasher = blake2::Blake2b::<blake2::digest::consts::U32>::new();
        let mut received = 0u64;
        let mut chunk = first;
        let mut later = false;
        let written: Result<(), Status> = async {
            loop {
                if later && (!chunk.name.is_empty() || chunk.total_size != 0) {
                    return Err(Status::invalid_argument("invalid name: only the first chunk carries the name and total_size"));
                }
                later = true;
                received += chunk.data.len() as u64;
                if received > total {
                    return Err(Status::invalid_argument(format!("invalid data: more than the {total} bytes total_size announced")));
                }
                hasher.update(&chunk.data);
                upload.write(bytes::Bytes::from(chunk.data)).await.map_err(|e| status(e.into()))?;
                match stream.message().await? {
                    Some(next) => chunk = next,
                    None => break,
                }
            }
            if received != total {
                return Err(Status::invalid_argument(format!(
                    "invalid data: {received} of the {total} bytes total_size announced arrived; nothing was stored"
                )));
            }
            Ok(())
        }
        .await;
        if let Err(e) = written {
            let _ = upload.abort().await;
            return Err(e);
        }
        upload.finish().await.map_err(|e| status(e.into()))?;
        charge.store = None;
        let kept_until = jobs::now_ms() + self.platform.config().upload_retention.as_millis() as u64;
        if let Err(e) = store.charge(&tenant, jobs::Usage::Uploads, &name, total, None, Some(kept_until)).await {
            tracing::warn!(tenant, name, error = %e, "an upload's charge was not made lasting: it expires, and the quota undercounts it");
        }
        let digest = hex::encode(hasher.finalize());
        tracing::info!(key, size = total, "input uploaded");
        Ok(Response::new(pb::UploadInputResponse { object_key: key, size: total, blake2b: digest }))
    }

    async fn register_circuit(&self, request: Request<pb::RegisterCircuitRequest>) -> Result<Response<pb::RegisterCircuitResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        let key = request.into_inner().r1cs_object_key;
        let (circuit_id, info, job) = self.platform.register_circuit(&tenant, &key).await.map_err(status)?;
        let circuit = match info {
            Some(info) => Some(self.circuit_to_pb(&tenant, info, true).await?),
            None => None,
        };
        let job = match job {
            Some(id) => Some(job_to_pb(&self.platform.record(&id).await.map_err(status)?)),
            None => None,
        };
        Ok(Response::new(pb::RegisterCircuitResponse { circuit_id, circuit, job }))
    }

    async fn get_circuit(&self, request: Request<pb::GetCircuitRequest>) -> Result<Response<pb::Circuit>, Status> {
        let tenant = self.tenant(&request).await?;
        let id = request.into_inner().circuit_id;
        match self.platform.registered_circuit(&tenant, &id).await.map_err(status)? {
            Some(info) => Ok(Response::new(self.circuit_to_pb(&tenant, info, true).await?)),
            None => Err(Status::not_found(format!("no circuit {id} is registered (or its registration has not finished)"))),
        }
    }

    async fn list_circuits(&self, request: Request<pb::ListCircuitsRequest>) -> Result<Response<pb::ListCircuitsResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        let mut circuits = Vec::new();
        for info in self.platform.registered_circuits(&tenant).await.map_err(status)? {
            circuits.push(self.circuit_to_pb(&tenant, info, false).await?);
        }
        Ok(Response::new(pb::ListCircuitsResponse { circuits }))
    }

    async fn delete_circuit(&self, request: Request<pb::DeleteCircuitRequest>) -> Result<Response<pb::DeleteCircuitResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        let id = request.into_inner().circuit_id;
        match self.platform.delete_circuit(&tenant, &id).await.map_err(status)? {
            Some(n) => Ok(Response::new(pb::DeleteCircuitResponse { deleted_objects: n as u64 })),
            None => Err(Status::not_found(format!("no circuit {id} is stored"))),
        }
    }

    async fn get_bundle(&self, request: Request<pb::GetBundleRequest>) -> Result<Response<pb::GetBundleResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        let req = request.into_inner();
        // Decodes and merges up to 65,536 proofs: bounded as VerifyProof is.
        let _pass = self.verify.enter(&tenant, "GetBundle").await?;
        let b = self.platform.circuit_bundle(&tenant, &req.circuit_id, &req.job_ids).await.map_err(status)?;
        Ok(Response::new(pb::GetBundleResponse {
            curve: b.curve.as_str().into(),
            vk_digest: b.vk_digest,
            vk: b.vk.to_vec(),
            bundle: b.bundle,
            sources: b.sources.into_iter().map(|(job_id, witness)| pb::BundleSource { job_id, witness }).collect(),
        }))
    }

    async fn get_limits(&self, request: Request<pb::GetLimitsRequest>) -> Result<Response<pb::Limits>, Status> {
        self.tenant(&request).await?;
        Ok(Response::new(limits_to_pb(self.platform.config())))
    }

    async fn submit_job(&self, request: Request<pb::SubmitJobRequest>) -> Result<Response<pb::SubmitJobResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        let req = request.into_inner();
        let key = (!req.idempotency_key.is_empty()).then(|| req.idempotency_key.clone());
        let job_request = request_from_pb(self.platform.registry(), req)?;
        // (An object key must lie under the caller's upload prefix, a base job must be the
        // caller's: each kind's `validate` checks its own.)
        let (job_id, created) = self.platform.submit_as(&tenant, job_request, key.as_deref()).await.map_err(status)?;
        let rec = self.platform.record(&job_id).await.map_err(status)?;
        Ok(Response::new(pb::SubmitJobResponse { job_id, created, job: Some(job_to_pb(&rec)) }))
    }

    async fn get_job(&self, request: Request<pb::GetJobRequest>) -> Result<Response<pb::Job>, Status> {
        let tenant = self.tenant(&request).await?;
        let id = request.into_inner().job_id;
        let rec = self.owned(&tenant, &id).await?;
        Ok(Response::new(job_to_pb(&rec)))
    }

    type WatchJobStream = BoxStream<pb::Job>;

    async fn watch_job(&self, request: Request<pb::WatchJobRequest>) -> Result<Response<Self::WatchJobStream>, Status> {
        let tenant = self.tenant(&request).await?;
        let id = request.into_inner().job_id;
        let first = self.owned(&tenant, &id).await?;
        let slot = StreamSlot::take(&self.watches, &tenant, MAX_WATCHES_PER_TENANT, "WatchJob")?;
        let (tx, rx) = tokio::sync::mpsc::channel(16);
        let platform = self.platform.clone();
        let poll = self.poll;
        tokio::spawn(async move {
            let _slot = slot;
            let mut ended = first.state.is_terminal();
            let mut last = job_to_pb(&first);
            if tx.send(Ok(last.clone())).await.is_err() {
                return;
            }
            while !ended {
                // A client that went away ends its poller now, not when the job next changes.
                tokio::select! {
                    () = tokio::time::sleep(poll) => {}
                    () = tx.closed() => return,
                }
                let rec = match platform.record(&id).await {
                    Ok(r) => r,
                    Err(e) => {
                        let _ = tx.send(Err(status(e))).await;
                        return;
                    }
                };
                ended = rec.state.is_terminal();
                let now = job_to_pb(&rec);
                if now != last {
                    if tx.send(Ok(now.clone())).await.is_err() {
                        return; // the client went away
                    }
                    last = now;
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn cancel_job(&self, request: Request<pb::CancelJobRequest>) -> Result<Response<pb::Job>, Status> {
        let tenant = self.tenant(&request).await?;
        let id = request.into_inner().job_id;
        self.owned(&tenant, &id).await?;
        let rec = self.platform.cancel(&id).await.map_err(status)?;
        Ok(Response::new(job_to_pb(&rec)))
    }

    async fn list_jobs(&self, request: Request<pb::ListJobsRequest>) -> Result<Response<pb::ListJobsResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        let req = request.into_inner();
        let size = match req.page_size {
            0 => 50,
            n if n > MAX_PAGE_SIZE => return Err(Status::invalid_argument(format!("invalid page_size: at most {MAX_PAGE_SIZE}"))),
            n => n as u64,
        };
        let offset = if req.page_token.is_empty() {
            0
        } else {
            req.page_token.parse::<u64>().map_err(|_| Status::invalid_argument("invalid page_token"))?
        };
        let store = self.platform.job_store();
        // Without the specs (ListJobs sends none): a page of a thousand 256 KiB specs was a
        // quarter of a GiB read into the planner per call.
        let listed = store.list_brief(Some(tenant.as_str()).filter(|t| !t.is_empty()), offset, size).await;
        let (recs, next) = listed.map_err(|e| status(e.into()))?;
        Ok(Response::new(pb::ListJobsResponse {
            jobs: recs.iter().map(job_to_pb).collect(),
            next_page_token: next.map(|n| n.to_string()).unwrap_or_default(),
        }))
    }

    type GetProofStream = BoxStream<pb::ProofChunk>;

    async fn get_proof(&self, request: Request<pb::GetProofRequest>) -> Result<Response<Self::GetProofStream>, Status> {
        let tenant = self.tenant(&request).await?;
        let id = request.into_inner().job_id;
        let rec = self.owned(&tenant, &id).await?;
        if rec.state != JobState::Done {
            return Err(Status::failed_precondition(format!("job {id} is {}, not done", rec.state.as_str())));
        }
        let slot = StreamSlot::take(&self.proofs, &tenant, MAX_PROOF_STREAMS_PER_TENANT, "GetProof")?;
        let (tx, rx) = tokio::sync::mpsc::channel(PROOF_CHUNKS_AHEAD);
        let blobs = self.platform.blobs().clone();
        let prefix = proof_prefix(&id);
        let names: Vec<String> = blobs
            .list(&prefix)
            .await
            .map_err(|e| Status::unavailable(e.to_string()))?
            .into_iter()
            .filter_map(|k| k.strip_prefix(&prefix).map(str::to_string))
            .filter(|n| !n.contains('/'))
            .collect();
        // Each file is read in ranges of one chunk as the client takes them (the channel holds
        // PROOF_CHUNKS_AHEAD): the planner's memory does not grow with the proof (a `lambda.bin`
        // of thousands of node proofs, or 1 GiB of leaves). The stream holds its tenant's place
        // until it ends or its client goes away.
        tokio::spawn(async move {
            let _slot = slot;
            for name in names {
                let key = format!("{prefix}{name}");
                let size = match blobs.size(&key).await {
                    Ok(n) => n,
                    Err(e) => {
                        let _ = tx.send(Err(Status::unavailable(e.to_string()))).await;
                        return;
                    }
                };
                let mut at = 0u64;
                loop {
                    // An empty file still sends one (empty) chunk, so the client sees its name.
                    let len = (CHUNK as u64).min(size - at);
                    let data = match blobs.get_range(&key, at, len).await {
                        Ok(d) => d,
                        Err(e) => {
                            let _ = tx.send(Err(Status::unavailable(e.to_string()))).await;
                            return;
                        }
                    };
                    let chunk = pb::ProofChunk { file: name.clone(), data: data.to_vec(), file_size: size };
                    if tx.send(Ok(chunk)).await.is_err() {
                        return;
                    }
                    at += len;
                    if at >= size {
                        break;
                    }
                }
            }
        });
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }

    async fn verify_proof(&self, request: Request<pb::VerifyProofRequest>) -> Result<Response<pb::VerifyProofResponse>, Status> {
        let tenant = self.tenant(&request).await?;
        // Held until the call answers (or its client goes away): at most a few calls per tenant,
        // one check per core in all.
        let _pass = self.verify.enter(&tenant, "VerifyProof").await?;
        let request = request.into_inner();
        let expected_root = match request.expected_root.trim() {
            "" => None,
            hex => Some(reckle::Digest::from_hex(hex).map_err(|e| Status::invalid_argument(format!("invalid expected_root: {e}")))?),
        };
        let expected_vk = Some(request.expected_vk_digest.trim()).filter(|d| !d.is_empty());
        let (statement, proof) = match request.target {
            None => return Err(Status::invalid_argument("invalid target: give job_id or reckle proof files")),
            Some(pb::verify_proof_request::Target::JobId(id)) => {
                let rec = self.owned(&tenant, &id).await?;
                if rec.state != JobState::Done {
                    return Err(Status::failed_precondition(format!("job {id} is {}, not done", rec.state.as_str())));
                }
                // Each kind verifies its own outputs (the registry knows every kind).
                let kind = self.platform.registry().job_kind(&rec.kind).ok_or_else(|| Status::internal(format!("job {id} has unknown kind {}", rec.kind)))?;
                let pins = crate::kinds::Pins { root: expected_root.as_ref(), vk_digest: expected_vk };
                let verdict = kind.verify_outputs(&self.platform, &rec, pins).await.map_err(status)?;
                let (reason, checked_against) = match verdict {
                    Ok(against) => (String::new(), against),
                    Err(e) => (e, String::new()),
                };
                return Ok(Response::new(pb::VerifyProofResponse { valid: reason.is_empty(), reason, checked_against }));
            }
            Some(pb::verify_proof_request::Target::Reckle(f)) => (f.statement_json, f.proof),
        };
        let (reason, checked_against) = match crate::kinds::reckle::verify_statement(&self.platform, &statement, &proof, expected_root.as_ref()).await.map_err(status)? {
            Ok(against) => (String::new(), against),
            Err(e) => (e, String::new()),
        };
        Ok(Response::new(pb::VerifyProofResponse { valid: reason.is_empty(), reason, checked_against }))
    }
}

/// [`crate::limits`] of a platform with `config`, as GetLimits answers.
pub fn limits_to_pb(config: &crate::PlatformConfig) -> pb::Limits {
    pb::Limits {
        limits: crate::limits::limits(config)
            .into_iter()
            .map(|l| pb::Limit { scope: l.scope, field: l.field, max: l.max, unit: l.unit, description: l.what })
            .collect(),
        memory: crate::limits::memory(config)
            .into_iter()
            .map(|r| pb::RoleMemory {
                bytes: r.bytes(),
                role: r.role,
                parts: r.parts.into_iter().map(|(description, bytes)| pb::MemoryPart { description, bytes }).collect(),
            })
            .collect(),
    }
}

impl JobServiceImpl {
    /// A circuit for the API; with `with_vk`, its verifying key too (read and checked against
    /// its digest: GetCircuit, RegisterCircuit), without it none (ListCircuits: no read per
    /// circuit).
    async fn circuit_to_pb(&self, tenant: &str, info: crate::CircuitInfo, with_vk: bool) -> Result<pb::Circuit, Status> {
        let vk = if with_vk { self.platform.registered_vk(tenant, &info).await.map_err(status)?.to_vec() } else { Vec::new() };
        Ok(pb::Circuit {
            circuit_id: info.circuit_id,
            curve: info.curve.as_str().into(),
            vk_digest: info.vk_digest,
            constraints: info.constraints,
            wires: info.wires,
            public_outputs: info.public_outputs,
            public_inputs: info.public_inputs,
            vk,
            job_id: info.job_id,
        })
    }
}

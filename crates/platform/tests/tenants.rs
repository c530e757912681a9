//! Authentication and tenant isolation through the gRPC API, with tokens, jobs and inputs in
//! real Redis and MinIO (`PROVER_TEST_*`; in-process stores without them). The attacks: no
//! token, a forged token, tenant B reading, watching, fetching, verifying, cancelling, listing or
//! building on tenant A's job, or pointing an input at A's objects; a token revoked while in use.
//! Then what tenants share: quotas, the request budget, stream and verification caps.
//!
//! Past 700 lines, and kept whole for now: every test here serves the real gRPC service with
//! tokens through the same helpers (`serve`, `req`, `tokens`, `done_noop_job`). The cut owed is
//! the shared resources (the budget, stream and verification caps: from
//! `unauthenticated_bodies_are_never_decoded` on) into a file of their own, with those helpers
//! in `common/`.

mod common;

use std::sync::Arc;
use std::time::Duration;

use api::v1 as pb;
use api::v1::job_service_client::JobServiceClient;
use auth::TokenStore;
use platform::grpc::JobServiceImpl;
use platform::Platform;
use queue::QueueConfig;
use tonic::transport::Channel;
use tonic::{Code, Request};

async fn serve(platform: Arc<Platform>, tokens: Arc<dyn TokenStore>) -> String {
    serve_service(JobServiceImpl::new(platform).with_tokens(tokens)).await
}

async fn serve_service(service: JobServiceImpl) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<pb::job_service_server::JobServiceServer<JobServiceImpl>>().await;
    let server = tonic::transport::Server::builder()
        .add_service(health)
        .add_service(service.into_server())
        .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener));
    tokio::spawn(server);
    format!("http://{addr}")
}

/// A request carrying `token` (or none).
fn req<T>(msg: T, token: Option<&str>) -> Request<T> {
    let mut r = Request::new(msg);
    if let Some(t) = token {
        r.metadata_mut().insert("authorization", format!("Bearer {t}").parse().unwrap());
    }
    r
}

/// A pari.circom request naming a circuit and a witness that do not exist: refused for its
/// inputs once validated, so a refusal for a quota shows the quota was checked first.
fn missing_inputs() -> pb::SubmitJobRequest {
    pb::SubmitJobRequest {
        idempotency_key: String::new(),
        params: Some(pb::submit_job_request::Params::PariCircom(pb::PariCircomParams {
            circuit_id: "ab".repeat(32),
            witness_object_keys: vec!["nowhere.wtns".into()],
            ..Default::default()
        })),
    }
}

fn pari(key: &str) -> pb::SubmitJobRequest {
    pb::SubmitJobRequest {
        idempotency_key: key.into(),
        params: Some(pb::submit_job_request::Params::PariBatch(pb::PariBatchParams {
            circuit: "chain".into(),
            size: 4,
            seed_start: 0,
            count: 2,
            proofs_per_task: 2,
            bundle_size: 2,
        })),
    }
}

async fn tokens(real: bool) -> Arc<dyn TokenStore> {
    match (real, std::env::var("PROVER_TEST_REDIS_URL")) {
        (true, Ok(url)) => Arc::new(auth::RedisTokenStore::connect(&url).await.unwrap()),
        _ => Arc::new(auth::MemoryTokenStore::new()),
    }
}

async fn tenants_are_isolated(real: bool) {
    // No worker runs: the jobs stay queued, which is all these checks need.
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(real, QueueConfig::default(), 2).await else { return };
    let platform = Platform::new(q, blobs.clone(), jobs);
    let store = tokens(real).await;
    let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let (ta, tb) = (format!("a-{run}"), format!("b-{run}"));
    let a = store.create(&ta).await.unwrap();
    let b = store.create(&tb).await.unwrap();
    let endpoint = serve(platform.clone(), store.clone()).await;
    let mut c: JobServiceClient<Channel> = JobServiceClient::connect(endpoint.clone()).await.unwrap();
    let (ka, kb) = (Some(a.secret.as_str()), Some(b.secret.as_str()));

    // No token, a malformed one, a forged one: UNAUTHENTICATED, and nothing is recorded.
    let mut forged = a.secret.clone();
    forged.replace_range(10..11, if &forged[10..11] == "0" { "1" } else { "0" });
    for t in [None, Some("prv_nothex"), Some(forged.as_str())] {
        let e = c.submit_job(req(pari("k"), t)).await.unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated, "{t:?}: {e:?}");
        let e = c.list_jobs(req(pb::ListJobsRequest::default(), t)).await.unwrap_err();
        assert_eq!(e.code(), Code::Unauthenticated);
    }
    // Health stays open.
    let channel = Channel::from_shared(endpoint.clone()).unwrap().connect().await.unwrap();
    let mut health = tonic_health::pb::health_client::HealthClient::new(channel);
    let h = health.check(tonic_health::pb::HealthCheckRequest { service: String::new() }).await.unwrap().into_inner();
    assert_eq!(h.status, tonic_health::pb::health_check_response::ServingStatus::Serving as i32);

    // A submits; B uses the same idempotency key and gets a job of its own, not A's.
    let ja = c.submit_job(req(pari("nightly"), ka)).await.unwrap().into_inner().job_id;
    let jb = c.submit_job(req(pari("nightly"), kb)).await.unwrap().into_inner().job_id;
    assert_ne!(ja, jb, "the same key in two tenants must give two jobs");
    // Each job's objects live under its tenant's prefix, which its id names.
    assert!(ja.starts_with(&format!("{ta}.")) && jb.starts_with(&format!("{tb}.")), "{ja} {jb}");
    assert_eq!(platform::layout::job_prefix(&ja), format!("tenants/{ta}/jobs/{ja}/"));
    // (A Pari job stores no inputs at submission: its setup keeps no secret, issue 32.)
    assert!(blobs.list("jobs/").await.unwrap().iter().all(|k| !k.contains(&ja) && !k.contains(&jb)), "nothing of a tenant's job outside its prefix");
    let again = c.submit_job(req(pari("nightly"), ka)).await.unwrap().into_inner();
    assert_eq!((again.job_id.as_str(), again.created), (ja.as_str(), false), "within a tenant the key deduplicates");

    // B cannot see, watch, fetch, verify or cancel A's job: NOT_FOUND, like a job that does not exist.
    let nf = |r: Result<(), tonic::Status>, what: &str| {
        let e = r.expect_err(what);
        assert_eq!(e.code(), Code::NotFound, "{what}: {e:?}");
        assert!(!e.message().replace(&ja, "").contains(&ta), "{what}: names the other tenant beyond the id asked for: {e:?}");
    };
    nf(c.get_job(req(pb::GetJobRequest { job_id: ja.clone() }, kb)).await.map(drop), "get");
    nf(c.watch_job(req(pb::WatchJobRequest { job_id: ja.clone() }, kb)).await.map(drop), "watch");
    nf(c.get_proof(req(pb::GetProofRequest { job_id: ja.clone() }, kb)).await.map(drop), "fetch");
    let verify = pb::VerifyProofRequest { target: Some(pb::verify_proof_request::Target::JobId(ja.clone())), ..Default::default() };
    nf(c.verify_proof(req(verify, kb)).await.map(drop), "verify");
    nf(c.cancel_job(req(pb::CancelJobRequest { job_id: ja.clone() }, kb)).await.map(drop), "cancel");
    let rec = c.get_job(req(pb::GetJobRequest { job_id: ja.clone() }, ka)).await.unwrap().into_inner();
    assert_ne!(rec.state, pb::JobState::Cancelled as i32, "B's cancel must not touch A's job");

    // Listings hold only the caller's jobs.
    let listed = |k| {
        let mut c = c.clone();
        async move {
            c.list_jobs(req(pb::ListJobsRequest::default(), k)).await.unwrap().into_inner().jobs.into_iter().map(|j| j.job_id).collect::<Vec<_>>()
        }
    };
    assert_eq!(listed(ka).await, vec![ja.clone()]);
    assert_eq!(listed(kb).await, vec![jb.clone()]);

    // B cannot build on A's job (an update reads its leaves and node proofs)…
    let update = pb::SubmitJobRequest {
        idempotency_key: String::new(),
        params: Some(pb::submit_job_request::Params::ReckleUpdate(pb::ReckleUpdateParams { base_job_id: ja.clone(), changes: vec![], final_proof: false })),
    };
    nf(c.submit_job(req(update, kb)).await.map(drop), "update on A's job");
    // …nor point an input at A's objects (or anything outside its own upload prefix).
    for key in [platform::layout::input(&ja, "leaves.bin"), format!("tenants/{ta}/uploads/leaves.bin"), format!("tenants/{tb}/uploads/../../{ta}/x")] {
        let batch = pb::SubmitJobRequest {
            idempotency_key: String::new(),
            params: Some(pb::submit_job_request::Params::ReckleBatch(pb::ReckleBatchParams {
                log_n: 4,
                log_bucket: 2,
                batch: vec![1],
                leaves: Some(pb::reckle_batch_params::Leaves::ObjectKey(key.clone())),
                final_proof: false,
            })),
        };
        let e = c.submit_job(req(batch, kb)).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{key}: {e:?}");
        assert!(e.message().contains("object_key"), "{e:?}");
    }

    // Uploads land under the caller's prefix and serve as its inputs, and only as its inputs.
    let upload = |name: &str, total: u64, pieces: Vec<Vec<u8>>| {
        let mut chunks = vec![pb::UploadChunk { name: name.into(), total_size: total, data: Vec::new() }];
        chunks.extend(pieces.into_iter().map(|data| pb::UploadChunk { data, ..Default::default() }));
        tokio_stream::iter(chunks)
    };
    let values: Vec<u8> = (0u64..16).flat_map(|v| v.to_le_bytes()).collect();
    let up = c.upload_input(req(upload("leaves.bin", 128, vec![values[..100].to_vec(), values[100..].to_vec()]), ka)).await.unwrap().into_inner();
    assert_eq!((up.object_key.as_str(), up.size), (format!("tenants/{ta}/uploads/leaves.bin").as_str(), 128));
    assert_eq!(blobs.get(&up.object_key).await.unwrap().as_ref(), values.as_slice());
    let by_key = |key: &str| pb::SubmitJobRequest {
        idempotency_key: String::new(),
        params: Some(pb::submit_job_request::Params::ReckleBatch(pb::ReckleBatchParams {
            log_n: 4,
            log_bucket: 2,
            batch: vec![3],
            leaves: Some(pb::reckle_batch_params::Leaves::ObjectKey(key.into())),
            final_proof: false,
        })),
    };
    c.submit_job(req(by_key(&up.object_key), ka)).await.unwrap();
    let e = c.submit_job(req(by_key(&up.object_key), kb)).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "B used A's upload: {e:?}");
    // No token; a stream cut short, or longer than announced; a bad name; too large: refused,
    // and nothing is stored.
    let e = c.upload_input(req(upload("x.bin", 8, vec![vec![0; 8]]), None)).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    for (name, total, pieces, field) in [
        ("cut.bin", 64, vec![vec![1u8; 32]], "32 of the 64"),
        ("long.bin", 8, vec![vec![1u8; 8], vec![1u8; 1]], "more than the 8"),
        ("../escape", 8, vec![vec![1u8; 8]], "name"),
        ("huge.bin", platform::grpc::MAX_UPLOAD_BYTES + 1, vec![], "total_size"),
    ] {
        let e = c.upload_input(req(upload(name, total, pieces), kb)).await.unwrap_err();
        assert_eq!(e.code(), Code::InvalidArgument, "{name}: {e:?}");
        assert!(e.message().contains(field), "{name}: {e:?}");
        if !name.contains('/') {
            assert!(!blobs.exists(&format!("tenants/{tb}/uploads/{name}")).await.unwrap(), "{name} was stored");
        }
    }

    // A's token revoked while in use: its next call is refused; B is unaffected.
    store.revoke(&a.info.id).await.unwrap();
    let e = c.get_job(req(pb::GetJobRequest { job_id: ja.clone() }, ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::Unauthenticated);
    c.get_job(req(pb::GetJobRequest { job_id: jb.clone() }, kb)).await.unwrap();
    // The job itself is still there for a new token of the same tenant.
    let a2 = store.create(&ta).await.unwrap();
    c.get_job(req(pb::GetJobRequest { job_id: ja.clone() }, Some(&a2.secret))).await.unwrap();
    tokio::time::sleep(Duration::from_millis(10)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_tenants_are_isolated() {
    tenants_are_isolated(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_s3_tenants_are_isolated() {
    tenants_are_isolated(true).await;
}

/// Quotas through the API (issue 12 item 3): a tenant at its limit of active jobs is refused
/// with RESOURCE_EXHAUSTED naming the limit, while another tenant is not; a job that ends frees
/// a place; a job planning more tasks than a tenant's per-job budget is refused the same way, and
/// so is a job over the tenant's hourly budget (which an ended job does not give back).
async fn quotas_are_enforced(real: bool) {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(real, QueueConfig::default(), 2).await else { return };
    // Each small Pari job plans 4 tasks (setup, prove, bundle, publish): 3 jobs an hour.
    let quotas = platform::Quotas { max_active_jobs: Some(2), max_job_tasks: Some(4), max_tasks_per_hour: Some(12), ..platform::Quotas::NONE };
    let platform = Platform::with_config(q, blobs, jobs, platform::PlatformConfig { quotas, ..Default::default() });
    let store = tokens(real).await;
    let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let a = store.create(&format!("qa-{run}")).await.unwrap();
    let b = store.create(&format!("qb-{run}")).await.unwrap();
    let endpoint = serve(platform, store).await;
    let mut c: JobServiceClient<Channel> = JobServiceClient::connect(endpoint).await.unwrap();
    let (ka, kb) = (Some(a.secret.as_str()), Some(b.secret.as_str()));
    // No worker runs: submitted jobs stay queued, i.e. active.
    let j1 = c.submit_job(req(pari(""), ka)).await.unwrap().into_inner().job_id;
    let j2 = c.submit_job(req(pari("again"), ka)).await.unwrap().into_inner().job_id;
    let e = c.submit_job(req(pari(""), ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("active jobs per tenant") && e.message().contains("at most 2"), "{e:?}");
    assert_eq!(c.list_jobs(req(pb::ListJobsRequest::default(), ka)).await.unwrap().into_inner().jobs.len(), 2, "a refused job was recorded");
    // N3: the quota is checked before the request is validated (which reads its inputs) and
    // before anything is stored: a request naming a circuit and a witness that do not exist is
    // refused for the quota, not for its inputs. A retry of a job already recorded (its
    // idempotency key) is still answered with that job.
    let circom = missing_inputs();
    let e = c.submit_job(req(circom.clone(), ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "validated before the quota was checked: {e:?}");
    let again = c.submit_job(req(pari("again"), ka)).await.expect("a retry at the quota is answered").into_inner();
    assert_eq!((again.job_id, again.created), (j2, false));
    c.submit_job(req(pari(""), kb)).await.expect("another tenant has its own quota");
    c.cancel_job(req(pb::CancelJobRequest { job_id: j1 }, ka)).await.unwrap();
    c.submit_job(req(pari(""), ka)).await.expect("a cancelled job frees its place");
    // Tenant a has planned 12 tasks this hour (the refused job charged nothing): a fourth job is
    // over the hourly budget even with a place free.
    let jobs = c.list_jobs(req(pb::ListJobsRequest::default(), ka)).await.unwrap().into_inner().jobs;
    let running = jobs.iter().find(|j| j.state != pb::JobState::Cancelled as i32).unwrap().job_id.clone();
    c.cancel_job(req(pb::CancelJobRequest { job_id: running }, ka)).await.unwrap();
    let e = c.submit_job(req(pari(""), ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("tasks per tenant per hour") && e.message().contains("next hour"), "{e:?}");
    // N3 for the hourly budget: with a place free, a request over it is refused before its
    // inputs are read (the circuit and the witness do not exist) or anything is stored.
    let e = c.submit_job(req(circom, ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "validated before the hourly budget was checked: {e:?}");
    assert!(e.message().contains("tasks per tenant per hour"), "{e:?}");
    // 2 proofs per task, 10 proofs: 5 prove tasks and more, over the budget of 4 tasks.
    let mut big = pari("");
    if let Some(pb::submit_job_request::Params::PariBatch(p)) = &mut big.params {
        p.count = 10;
    }
    let e = c.submit_job(req(big, kb)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("tasks per job"), "{e:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_quotas_are_enforced() {
    quotas_are_enforced(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_s3_quotas_are_enforced() {
    quotas_are_enforced(true).await;
}

/// Issue 32 item 5, a tenant's stored bytes are bounded. A submit-and-cancel loop (each
/// cancelled record kept a day) is refused by the record quota, naming it, after at most
/// quota / 4 KiB jobs, and another tenant still submits. An upload past the upload quota is
/// refused before a byte is stored; uploading under a name used before replaces its charge; an
/// upload cut half-way puts the name's earlier charge back.
async fn storage_quotas_are_enforced(real: bool) {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(real, QueueConfig::default(), 2).await else { return };
    let record_quota = 64u64 << 10;
    let mib = 1usize << 20;
    let quotas = platform::Quotas { max_record_bytes: Some(record_quota), max_upload_bytes: Some(3 * mib as u64), ..platform::Quotas::NONE };
    let platform = Platform::with_config(q, blobs.clone(), jobs, platform::PlatformConfig { quotas, ..Default::default() });
    let charged = |tenant: String, usage: jobs::Usage| {
        let p = platform.clone();
        async move { p.job_store().usage(&tenant, usage).await.unwrap() }
    };
    let store = tokens(real).await;
    let run = uuid::Uuid::new_v4().simple().to_string()[..8].to_string();
    let (ta, tb) = (format!("sa-{run}"), format!("sb-{run}"));
    let a = store.create(&ta).await.unwrap();
    let b = store.create(&tb).await.unwrap();
    let endpoint = serve(platform.clone(), store).await;
    let mut c: JobServiceClient<Channel> = JobServiceClient::connect(endpoint).await.unwrap();
    let (ka, kb) = (Some(a.secret.as_str()), Some(b.secret.as_str()));

    let most = record_quota / jobs::RECORD_BYTES + 1;
    let mut submitted = 0;
    let e = loop {
        match c.submit_job(req(pari(""), ka)).await {
            Ok(r) => {
                submitted += 1;
                assert!(submitted <= most, "{submitted} jobs submitted and cancelled within a record quota of {record_quota} bytes");
                c.cancel_job(req(pb::CancelJobRequest { job_id: r.into_inner().job_id }, ka)).await.unwrap();
            }
            Err(e) => break e,
        }
    };
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("bytes of job records per tenant") && e.message().contains("expire"), "{e:?}");
    assert!(submitted >= 2, "refused after {submitted} jobs");
    assert!(charged(ta.clone(), jobs::Usage::Records).await <= record_quota);
    // N3 for the record quota: refused before the request's inputs are read (the circuit and
    // the witness do not exist) or anything is stored.
    let circom = missing_inputs();
    let e = c.submit_job(req(circom, ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "validated before the record quota was checked: {e:?}");
    assert!(e.message().contains("bytes of job records per tenant"), "{e:?}");
    c.submit_job(req(pari(""), kb)).await.expect("another tenant has its own quota");

    let upload = |name: &str, total: usize, data: Vec<u8>| tokio_stream::iter(vec![pb::UploadChunk { name: name.into(), total_size: total as u64, data }]);
    c.upload_input(req(upload("a.bin", 2 * mib, vec![1; 2 * mib]), ka)).await.unwrap();
    let e = c.upload_input(req(upload("b.bin", 2 * mib, vec![2; 2 * mib]), ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("bytes of uploads per tenant"), "{e:?}");
    assert!(!blobs.exists(&format!("tenants/{ta}/uploads/b.bin")).await.unwrap(), "a refused upload was stored");
    assert_eq!(charged(ta.clone(), jobs::Usage::Uploads).await, 2 * mib as u64);
    // a.bin again, smaller: b.bin fits beside it.
    c.upload_input(req(upload("a.bin", mib, vec![3; mib]), ka)).await.unwrap();
    c.upload_input(req(upload("b.bin", 2 * mib, vec![2; 2 * mib]), ka)).await.unwrap();
    assert_eq!(charged(ta.clone(), jobs::Usage::Uploads).await, 3 * mib as u64);
    // b.bin again, cut half-way: charged its new size while it runs, its old one after.
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::UploadChunk>(4);
    tx.send(pb::UploadChunk { name: "b.bin".into(), total_size: (mib / 2) as u64, data: vec![4; 1000] }).await.unwrap();
    let mut c2 = c.clone();
    let secret = a.secret.clone();
    let cut = tokio::spawn(async move { c2.upload_input(req(tokio_stream::wrappers::ReceiverStream::new(rx), Some(&secret))).await });
    while charged(ta.clone(), jobs::Usage::Uploads).await != (3 * mib / 2) as u64 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    cut.abort();
    drop(tx);
    while charged(ta.clone(), jobs::Usage::Uploads).await != 3 * mib as u64 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(blobs.get(&format!("tenants/{ta}/uploads/b.bin")).await.unwrap().len(), 2 * mib, "a cut upload replaced the object");
    c.upload_input(req(upload("a.bin", 2 * mib, vec![1; 2 * mib]), kb)).await.expect("another tenant has its own upload quota");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_storage_quotas_are_enforced() {
    storage_quotas_are_enforced(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_s3_storage_quotas_are_enforced() {
    storage_quotas_are_enforced(true).await;
}

/// The bytes of a request body as they are, so a test can send what no client would.
#[derive(Clone, Copy, Default)]
struct Raw;

impl tonic::codec::Codec for Raw {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = Raw;
    type Decoder = Raw;
    fn encoder(&mut self) -> Raw {
        Raw
    }
    fn decoder(&mut self) -> Raw {
        Raw
    }
}

impl tonic::codec::Encoder for Raw {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn encode(&mut self, item: Vec<u8>, dst: &mut tonic::codec::EncodeBuf<'_>) -> Result<(), tonic::Status> {
        bytes::BufMut::put_slice(dst, &item);
        Ok(())
    }
}

impl tonic::codec::Decoder for Raw {
    type Item = Vec<u8>;
    type Error = tonic::Status;
    fn decode(&mut self, src: &mut tonic::codec::DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        let n = bytes::Buf::remaining(src);
        Ok(Some(bytes::Buf::copy_to_bytes(src, n).to_vec()))
    }
}

/// Issue 32 (review D1): a request without a valid token is refused before its body is
/// decoded. The body here is not a protobuf message at all, so a server that decodes first
/// answers with the decode error; one that authenticates first says UNAUTHENTICATED, for a
/// small body and for a 60 MiB one alike. With a valid token the same body reaches the decoder.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unauthenticated_bodies_are_never_decoded() {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(false, QueueConfig::default(), 2).await else { return };
    let platform = Platform::new(q, blobs, jobs);
    let store = tokens(false).await;
    let good = store.create("t").await.unwrap();
    let endpoint = serve(platform, store).await;
    let channel = Channel::from_shared(endpoint).unwrap().connect().await.unwrap();
    let path = tonic::codegen::http::uri::PathAndQuery::from_static("/prover.v1.JobService/SubmitJob");
    let call = |body: Vec<u8>, token: Option<String>| {
        let (channel, path) = (channel.clone(), path.clone());
        async move {
            let mut grpc = tonic::client::Grpc::new(channel).max_encoding_message_size(usize::MAX);
            grpc.ready().await.unwrap();
            grpc.unary(req(body, token.as_deref()), path, Raw).await.map(drop)
        }
    };
    // Field 1 (a string) announced with more bytes than the body holds: no valid message.
    let mut garbage = vec![0x0a, 0xff, 0xff, 0xff, 0x7f];
    garbage.resize(1024, 0xee);
    for (body, what) in [(garbage.clone(), "1 KiB"), (vec![0xee; 60 << 20], "60 MiB")] {
        for token in [None, Some("not-a-token".to_string())] {
            let e = call(body.clone(), token.clone()).await.unwrap_err();
            assert_eq!(e.code(), Code::Unauthenticated, "{what}, token {token:?}: {e:?}");
        }
    }
    let e = call(garbage, Some(good.secret.clone())).await.unwrap_err();
    assert_ne!(e.code(), Code::Unauthenticated, "a valid token was refused: {e:?}");
}

/// Issue 32 (review D3): a WatchJob poller ends with its client, and a tenant holds at most
/// `MAX_WATCHES_PER_TENANT` streams at once (the next is RESOURCE_EXHAUSTED, naming the limit),
/// while another tenant is not affected. Once the streams are dropped their places come back:
/// only a poller that noticed its client leave gives its place back (the job never changes
/// here: no worker runs, so it stays queued).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watch_streams_end_with_their_clients_and_are_capped() {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(false, QueueConfig::default(), 2).await else { return };
    let platform = Platform::new(q, blobs, jobs);
    let store = tokens(false).await;
    let (a, b) = (store.create("a").await.unwrap(), store.create("b").await.unwrap());
    let endpoint = serve(platform, store).await;
    let mut c = JobServiceClient::connect(endpoint).await.unwrap();
    let job = c.submit_job(req(pari(""), Some(&a.secret))).await.unwrap().into_inner().job_id;
    let watch = |token: String| {
        let (mut c, job) = (c.clone(), job.clone());
        async move { c.watch_job(req(pb::WatchJobRequest { job_id: job }, Some(&token))).await.map(|r| r.into_inner()) }
    };
    let mut open = Vec::new();
    for _ in 0..platform::grpc::MAX_WATCHES_PER_TENANT {
        open.push(watch(a.secret.clone()).await.unwrap());
    }
    let e = watch(a.secret.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("WatchJob"), "{e:?}");
    // Tenant b owns no such job: NOT_FOUND, not the limit of a's streams.
    assert_eq!(watch(b.secret.clone()).await.unwrap_err().code(), Code::NotFound);
    drop(open);
    assert!(once_a_place_frees(|| watch(a.secret.clone())).await.is_some(), "the pollers of dropped streams kept their places");
}

/// `open()`, again while it is refused for a tenant limit (a place frees once the server side of
/// a dropped stream notices its client left), at most a minute: the stream, or `None`.
async fn once_a_place_frees<T, F, Fut>(mut open: F) -> Option<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, tonic::Status>>,
{
    for _ in 0..600 {
        match open().await {
            Ok(s) => return Some(s),
            Err(e) if e.code() == Code::ResourceExhausted => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => panic!("{e:?}"),
        }
    }
    None
}

/// A noop job of one task, submitted with `token` and run to its end by an executor and a
/// worker of `platform` that stop once it is done.
async fn done_noop_job(platform: &Arc<Platform>, c: &mut JobServiceClient<Channel>, token: &str) -> String {
    let noop = pb::SubmitJobRequest { idempotency_key: String::new(), params: Some(pb::submit_job_request::Params::Noop(pb::NoopParams { tasks: 1 })) };
    let job = c.submit_job(req(noop, Some(token))).await.unwrap().into_inner().job_id;
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(platform.clone().run_executor("noop-executor".into(), rx.clone()));
    tokio::spawn(platform.clone().run_worker("noop-worker".into(), rx));
    assert_eq!(platform.wait(&job, |_| {}).await, platform::JobOutcome::Done);
    let _ = tx.send(true);
    job
}

/// Issue 58 N5: a tenant holds at most `MAX_PROOF_STREAMS_PER_TENANT` GetProof streams at once
/// (the next is RESOURCE_EXHAUSTED, naming the limit); each reads its files ahead of its client
/// by a few chunks only. Before, a tenant could open any number of streams that read nothing,
/// each holding ~5 MiB of the planner (250 of them: over a GiB). Dropped streams give their
/// places back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn proof_streams_are_capped_per_tenant() {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(false, QueueConfig::default(), 2).await else { return };
    let platform = Platform::new(q, blobs, jobs);
    let store = tokens(false).await;
    let (a, b) = (store.create("a").await.unwrap(), store.create("b").await.unwrap());
    let endpoint = serve(platform.clone(), store).await;
    let mut c = JobServiceClient::connect(endpoint.clone()).await.unwrap();
    // A done job of a's, with a proof file larger than what a stream reads ahead.
    let job = done_noop_job(&platform, &mut c, &a.secret).await;
    platform.blobs().put(&platform::layout::proof_file(&job, "big.bin"), bytes::Bytes::from(vec![7u8; 16 << 20])).await.unwrap();
    let proof = |token: String| {
        let (mut c, job) = (c.clone(), job.clone());
        async move { c.get_proof(req(pb::GetProofRequest { job_id: job }, Some(&token))).await.map(|r| r.into_inner()) }
    };
    let mut open = Vec::new();
    for _ in 0..platform::grpc::MAX_PROOF_STREAMS_PER_TENANT {
        open.push(proof(a.secret.clone()).await.unwrap());
    }
    let e = proof(a.secret.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("GetProof"), "{e:?}");
    // Tenant b owns no such job: NOT_FOUND, not the limit of a's streams.
    assert_eq!(proof(b.secret.clone()).await.unwrap_err().code(), Code::NotFound);
    // One stream dropped: its place comes back, and a new stream reads every byte (on a
    // connection of its own: the streams left unread hold their connection's flow-control
    // window).
    drop(open.pop());
    let fresh = JobServiceClient::connect(endpoint).await.unwrap();
    let fresh_proof = || {
        let (mut c, job, token) = (fresh.clone(), job.clone(), a.secret.clone());
        async move { c.get_proof(req(pb::GetProofRequest { job_id: job }, Some(&token))).await.map(|r| r.into_inner()) }
    };
    let mut whole = once_a_place_frees(fresh_proof).await.expect("the dropped stream kept its place");
    let mut got = 0usize;
    while let Some(chunk) = whole.message().await.unwrap() {
        if chunk.file == "big.bin" {
            got += chunk.data.len();
        }
    }
    assert_eq!(got, 16 << 20);
    drop(open);
    assert!(once_a_place_frees(|| proof(a.secret.clone())).await.is_some(), "the streams of dropped clients kept their places");
}

/// Issue 32 (review M10): the operator acts for each namespace as a tenant of its own. The
/// delegating tenant names the namespace in `x-prover-tenant`; a ProofJob in namespace A then
/// cannot read, cancel or build an update on namespace B's job (with one operator tenant for
/// all namespaces, editing a ProofJob's `status.jobId` reached any of them). Any other tenant
/// sending the header is refused, and a bad tenant name is refused by name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_operator_acts_for_each_namespace_as_its_own_tenant() {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(false, QueueConfig::default(), 2).await else { return };
    let platform = Platform::new(q, blobs, jobs);
    let store = tokens(false).await;
    let (op, acme) = (store.create("operator").await.unwrap(), store.create("acme").await.unwrap());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let svc = JobServiceImpl::new(platform).with_tokens(store).with_delegating_tenant(Some("operator".into()));
    tokio::spawn(tonic::transport::Server::builder().add_service(svc.into_server()).serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)));
    let mut c = JobServiceClient::connect(format!("http://{addr}")).await.unwrap();
    fn as_ns<T>(msg: T, token: &str, ns: &str) -> Request<T> {
        let mut r = req(msg, Some(token));
        r.metadata_mut().insert(platform::grpc_auth::ON_BEHALF_OF, ns.parse().unwrap());
        r
    }
    let job = c.submit_job(as_ns(pari("same-key"), &op.secret, "ns-a")).await.unwrap().into_inner().job_id;
    assert!(job.starts_with("ns-ns-a."), "the namespace's job is the namespace tenant's (ns-<namespace>): {job}");
    assert_eq!(c.get_job(as_ns(pb::GetJobRequest { job_id: job.clone() }, &op.secret, "ns-a")).await.unwrap().into_inner().job_id, job);
    // Namespace B, through the same operator token: A's job does not exist for it.
    let nf = |r: Result<(), tonic::Status>, what: &str| assert_eq!(r.unwrap_err().code(), Code::NotFound, "{what}");
    nf(c.get_job(as_ns(pb::GetJobRequest { job_id: job.clone() }, &op.secret, "ns-b")).await.map(drop), "get");
    nf(c.cancel_job(as_ns(pb::CancelJobRequest { job_id: job.clone() }, &op.secret, "ns-b")).await.map(drop), "cancel");
    let update = pb::SubmitJobRequest {
        idempotency_key: String::new(),
        params: Some(pb::submit_job_request::Params::ReckleUpdate(pb::ReckleUpdateParams { base_job_id: job.clone(), changes: vec![], final_proof: false })),
    };
    nf(c.submit_job(as_ns(update, &op.secret, "ns-b")).await.map(drop), "update on A's job");
    // Idempotency keys are per namespace: B's submission with A's key is a job of B's.
    let b_job = c.submit_job(as_ns(pari("same-key"), &op.secret, "ns-b")).await.unwrap().into_inner().job_id;
    assert!(b_job.starts_with("ns-ns-b.") && b_job != job, "{b_job}");
    // Only the delegating tenant may name another tenant; a bad name is refused by name.
    let e = c.get_job(as_ns(pb::GetJobRequest { job_id: job.clone() }, &acme.secret, "ns-a")).await.unwrap_err();
    assert_eq!(e.code(), Code::PermissionDenied, "{e:?}");
    let e = c.get_job(as_ns(pb::GetJobRequest { job_id: job.clone() }, &op.secret, "Not_A_Tenant")).await.unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument, "{e:?}");
    assert!(e.message().contains("x-prover-tenant"), "{e:?}");
    // Without the header the operator is its own tenant, which does not own A's job either.
    nf(c.get_job(req(pb::GetJobRequest { job_id: job.clone() }, Some(&op.secret))).await.map(drop), "the operator's own tenant");
    // Issue 58 N7: a namespace named like an API tenant is not that tenant, either way: acme's
    // job does not exist for namespace acme's ProofJobs (nor can they update it), the
    // namespace's job does not exist for acme's token, and namespace `operator` is not the
    // delegator's own tenant. Before, the namespace was the tenant of the same name.
    let acme_job = c.submit_job(req(pari("acme-key"), Some(&acme.secret))).await.unwrap().into_inner().job_id;
    nf(c.get_job(as_ns(pb::GetJobRequest { job_id: acme_job.clone() }, &op.secret, "acme")).await.map(drop), "namespace acme reading acme's job");
    let update = pb::SubmitJobRequest {
        idempotency_key: String::new(),
        params: Some(pb::submit_job_request::Params::ReckleUpdate(pb::ReckleUpdateParams { base_job_id: acme_job.clone(), changes: vec![], final_proof: false })),
    };
    nf(c.submit_job(as_ns(update, &op.secret, "acme")).await.map(drop), "namespace acme updating acme's job");
    let ns_job = c.submit_job(as_ns(pari("ns-key"), &op.secret, "acme")).await.unwrap().into_inner().job_id;
    assert!(ns_job.starts_with("ns-acme."), "{ns_job}");
    nf(c.get_job(req(pb::GetJobRequest { job_id: ns_job }, Some(&acme.secret))).await.map(drop), "acme's token reading namespace acme's job");
    let own = c.submit_job(req(pari("own-key"), Some(&op.secret))).await.unwrap().into_inner().job_id;
    nf(c.get_job(as_ns(pb::GetJobRequest { job_id: own }, &op.secret, "operator")).await.map(drop), "namespace operator reading the operator's own job");
}

/// Issue 32 item 4 and N1 of the platform review: every call's messages are reserved against
/// one request budget before they are read, so what a planner holds for requests is bounded
/// whatever the number of callers, and one tenant holds at most three quarters of it. With a
/// budget of 6 MiB: an upload holds its buffered part and its current chunk (charged near its
/// size) while its client is still sending; a submission that its tenant's share cannot cover
/// beside it is answered UNAVAILABLE (retry), its bytes unread, while another tenant's same
/// submission is taken; a message over a tenant's share is RESOURCE_EXHAUSTED, naming the flag;
/// once the upload ends (and once a client drops its stream half-way) the budget is whole again
/// and the same submission goes through. Real MinIO (the S3 multipart path) when configured.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_share_one_byte_budget() {
    let (q, blobs, jobs, _dir) = match common::backends_in_db(true, QueueConfig::default(), 2).await {
        Some(b) => b,
        None => common::backends_in_db(false, QueueConfig::default(), 2).await.unwrap(),
    };
    let total = 6u64 << 20;
    let config = platform::PlatformConfig { request_budget_bytes: total, ..Default::default() };
    let platform = Platform::with_config(q, blobs, jobs, config);
    let store = tokens(false).await;
    let t = store.create("budget").await.unwrap();
    let u = store.create("budget-other").await.unwrap();
    let svc = JobServiceImpl::new(platform).with_tokens(store);
    let budget = svc.budget();
    assert_eq!(budget.tenant_share(), total / 4 * 3);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tonic::transport::Server::builder().add_service(svc.into_server()).serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)));
    let mut c = JobServiceClient::connect(format!("http://{addr}")).await.unwrap();

    // A Reckle submission of 2^12 inline leaves: ~36 KiB, so ~1.3 MiB of the budget.
    let leaves = |n: usize| pb::SubmitJobRequest {
        idempotency_key: "budget".into(),
        params: Some(pb::submit_job_request::Params::ReckleBatch(pb::ReckleBatchParams {
            log_n: n.trailing_zeros(),
            log_bucket: 2,
            batch: vec![0, 1],
            leaves: Some(pb::reckle_batch_params::Leaves::Inline(pb::LeafValues { values: (0..n as u64).map(|v| (1 << 62) | v).collect() })),
            final_proof: false,
        })),
    };

    // An upload whose client sends its first chunk (512 KiB: ~1.5 MiB reserved, and 2 MiB for
    // the part) and then waits.
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::UploadChunk>(4);
    let chunk = 512usize << 10;
    tx.send(pb::UploadChunk { name: "leaves.bin".into(), total_size: 2 * chunk as u64, data: vec![1; chunk] }).await.unwrap();
    let mut c2 = c.clone();
    let upload = tokio::spawn({
        let secret = t.secret.clone();
        async move { c2.upload_input(req(tokio_stream::wrappers::ReceiverStream::new(rx), Some(&secret))).await }
    });
    let held = platform::budget::method_message_cost(platform::budget::UPLOAD_METHOD, chunk as u64 + 16) + platform::grpc::UPLOAD_BUFFER_BYTES.min(4 * chunk as u64);
    while budget.used() < held - 64 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(budget.used() <= held + 64, "an upload chunk was charged as any message: {} bytes held", budget.used());
    assert_eq!(budget.used_by("budget"), budget.used());

    // The submission does not fit beside it in the tenant's share: UNAVAILABLE, naming the
    // flag; another tenant's is taken.
    let e = c.submit_job(req(leaves(1 << 12), Some(&t.secret))).await.unwrap_err();
    assert_eq!(e.code(), Code::Unavailable, "{e:?}");
    assert!(e.message().contains(platform::budget::FLAG) && e.message().contains("your other calls"), "{e:?}");
    c.submit_job(req(leaves(1 << 12), Some(&u.secret))).await.expect("another tenant's submission is taken");
    // A message over a tenant's share: RESOURCE_EXHAUSTED, naming the flag and the way out.
    let e = c.submit_job(req(leaves(1 << 16), Some(&u.secret))).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains(platform::budget::FLAG) && e.message().contains("upload"), "{e:?}");
    // Small calls of the same tenant still fit.
    c.list_jobs(req(pb::ListJobsRequest::default(), Some(&t.secret))).await.unwrap();

    // The upload ends: everything it held comes back, and the submission goes through.
    tx.send(pb::UploadChunk { name: String::new(), total_size: 0, data: vec![2; chunk] }).await.unwrap();
    drop(tx);
    let up = upload.await.unwrap().unwrap().into_inner();
    assert_eq!(up.size, 2 * chunk as u64);
    assert_eq!(budget.used(), 0);
    c.submit_job(req(leaves(1 << 12), Some(&t.secret))).await.unwrap();
    assert_eq!(budget.used(), 0);

    // A client that drops its upload half-way gives everything back too.
    let (tx, rx) = tokio::sync::mpsc::channel::<pb::UploadChunk>(4);
    tx.send(pb::UploadChunk { name: "dropped.bin".into(), total_size: 2 * chunk as u64, data: vec![1; chunk] }).await.unwrap();
    let mut c3 = c.clone();
    let secret = t.secret.clone();
    let upload = tokio::spawn(async move { c3.upload_input(req(tokio_stream::wrappers::ReceiverStream::new(rx), Some(&secret))).await });
    while budget.used() < held - 64 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    upload.abort();
    drop(tx);
    while budget.used() > 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Issue 58, scenario (a): one tenant holds the front door while another works. Tenant a opens
/// uploads that send their first chunk and then nothing, and floods WatchJob streams; its calls
/// are held to its share of the request budget and its stream cap (the refused ones answered at
/// once), while tenant b's GetJob, ListJobs, small submissions and CancelJob all succeed. Then
/// a's stalled uploads fail on the stall timeout (1 s here) and give back all they held. Before,
/// the budget was one pool with no share, upload chunks were charged 37 times their size and a
/// stalled upload held its reservation until its connection closed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_tenant_cannot_hold_the_front_door() {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(false, QueueConfig::default(), 2).await else { return };
    let total = 13u64 << 20;
    let platform = Platform::new(q, blobs, jobs);
    let store = tokens(false).await;
    let (a, b) = (store.create("door-a").await.unwrap(), store.create("door-b").await.unwrap());
    // No stall ends a call in this first part, however slow the machine.
    let budget = platform::budget::RequestBudget::with_stall(total, Duration::from_secs(3600));
    let endpoint = serve_service(JobServiceImpl::new(platform.clone()).with_tokens(store.clone()).with_request_budget(budget.clone())).await;
    let mut c = JobServiceClient::connect(endpoint).await.unwrap();
    let noop = |key: &str| pb::SubmitJobRequest { idempotency_key: key.into(), params: Some(pb::submit_job_request::Params::Noop(pb::NoopParams { tasks: 1 })) };
    let b_job = c.submit_job(req(noop("b-first"), Some(&b.secret))).await.unwrap().into_inner().job_id;
    let a_job = c.submit_job(req(noop("a-first"), Some(&a.secret))).await.unwrap().into_inner().job_id;

    // a's uploads, one after the other: each holds ~3.5 MiB (a 512 KiB chunk, charged three
    // times its size, and a 2 MiB part); its share of 9.75 MiB takes two, the next are refused
    // at once.
    let chunk = 512usize << 10;
    let held = platform::budget::method_message_cost(platform::budget::UPLOAD_METHOD, chunk as u64 + 16) + platform::grpc::UPLOAD_BUFFER_BYTES.min(4 * chunk as u64);
    let mut senders = Vec::new();
    let mut uploads = Vec::new();
    for i in 0..5 {
        let before = budget.used_by("door-a");
        let (tx, rx) = tokio::sync::mpsc::channel::<pb::UploadChunk>(4);
        tx.send(pb::UploadChunk { name: format!("stall-{i}.bin"), total_size: 2 * chunk as u64, data: vec![1; chunk] }).await.unwrap();
        senders.push(tx);
        let (mut c, secret) = (c.clone(), a.secret.clone());
        let upload = tokio::spawn(async move { c.upload_input(req(tokio_stream::wrappers::ReceiverStream::new(rx), Some(&secret))).await });
        // Until it holds its share, or was refused.
        while !upload.is_finished() && budget.used_by("door-a") < before + held - 64 {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        uploads.push(upload);
    }
    let fits = (budget.tenant_share() / held) as usize;
    assert_eq!(fits, 2);
    assert_eq!(uploads.iter().filter(|u| u.is_finished()).count(), 5 - fits, "a's share takes {fits} uploads");
    assert!(budget.used_by("door-a") <= budget.tenant_share());
    // a's stream flood: capped per tenant.
    let mut watches = Vec::new();
    let e = loop {
        match c.watch_job(req(pb::WatchJobRequest { job_id: a_job.clone() }, Some(&a.secret))).await {
            Ok(w) => watches.push(w.into_inner()),
            Err(e) => break e,
        }
        assert!(watches.len() <= platform::grpc::MAX_WATCHES_PER_TENANT, "WatchJob streams are not capped");
    };
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");

    // b works as if a were not there.
    let got = c.get_job(req(pb::GetJobRequest { job_id: b_job.clone() }, Some(&b.secret))).await.expect("b's GetJob").into_inner();
    assert_eq!(got.job_id, b_job);
    c.list_jobs(req(pb::ListJobsRequest::default(), Some(&b.secret))).await.expect("b's ListJobs");
    c.submit_job(req(noop("b-second"), Some(&b.secret))).await.expect("b's small submission");
    c.watch_job(req(pb::WatchJobRequest { job_id: b_job.clone() }, Some(&b.secret))).await.expect("b's WatchJob");
    c.cancel_job(req(pb::CancelJobRequest { job_id: b_job }, Some(&b.secret))).await.expect("b's CancelJob");

    // The refused uploads were answered UNAVAILABLE; the held ones end with their streams.
    let mut held_uploads = Vec::new();
    for u in uploads {
        if u.is_finished() {
            let e = u.await.unwrap().unwrap_err();
            assert_eq!(e.code(), Code::Unavailable, "{e:?}");
            assert!(e.message().contains("your other calls"), "{e:?}");
        } else {
            held_uploads.push(u);
        }
    }
    drop(senders);
    for u in held_uploads {
        assert!(u.await.unwrap().is_err(), "an upload cut short was stored");
    }
    while budget.used_by("door-a") > 0 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    // Stalls: on a service whose calls may send nothing for 1 s while holding budget, a's
    // uploads that send a first chunk and then nothing end DEADLINE_EXCEEDED (the event waited
    // for, however long it takes), and everything they held comes back.
    let budget = platform::budget::RequestBudget::with_stall(total, Duration::from_secs(1));
    let endpoint = serve_service(JobServiceImpl::new(platform).with_tokens(store).with_request_budget(budget.clone())).await;
    let c = JobServiceClient::connect(endpoint).await.unwrap();
    let mut senders = Vec::new();
    let mut stalled = Vec::new();
    for i in 0..fits {
        let (tx, rx) = tokio::sync::mpsc::channel::<pb::UploadChunk>(4);
        tx.send(pb::UploadChunk { name: format!("quiet-{i}.bin"), total_size: 2 * chunk as u64, data: vec![1; chunk] }).await.unwrap();
        senders.push(tx);
        let (mut c, secret) = (c.clone(), a.secret.clone());
        stalled.push(tokio::spawn(async move { c.upload_input(req(tokio_stream::wrappers::ReceiverStream::new(rx), Some(&secret))).await }));
    }
    for u in stalled {
        let e = u.await.unwrap().unwrap_err();
        assert_eq!(e.code(), Code::DeadlineExceeded, "{e:?}");
        assert!(e.message().contains("stalled"), "{e:?}");
    }
    assert_eq!(budget.used(), 0, "a stalled call kept its reservation");
    drop(senders);
}

/// Issue 58 N5: VerifyProof calls are bounded: a tenant has at most `MAX_VERIFIES_PER_TENANT`
/// in flight (the next is RESOURCE_EXHAUSTED, naming the limit) while another tenant's call is
/// still taken in, and the checks themselves wait for a place (here none is open until the test
/// opens one, which holds the calls in flight without a clock). Before, every call verified at
/// once on an unbounded blocking pool, holding every decoded bundle of its job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_calls_are_capped_per_tenant() {
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(false, QueueConfig::default(), 2).await else { return };
    let platform = Platform::new(q, blobs, jobs);
    let store = tokens(false).await;
    let (a, b) = (store.create("a").await.unwrap(), store.create("b").await.unwrap());
    let gate = platform::verify_gate::VerifyGate::with_limits(platform::verify_gate::MAX_VERIFIES_PER_TENANT, 0);
    let endpoint = serve_service(JobServiceImpl::new(platform.clone()).with_tokens(store).with_verify_gate(gate.clone())).await;
    let mut c = JobServiceClient::connect(endpoint).await.unwrap();
    let job = done_noop_job(&platform, &mut c, &a.secret).await;
    let verify = |token: String| {
        let (mut c, job) = (c.clone(), job.clone());
        async move {
            let target = Some(pb::verify_proof_request::Target::JobId(job));
            c.verify_proof(req(pb::VerifyProofRequest { target, ..Default::default() }, Some(&token))).await.map(|r| r.into_inner())
        }
    };
    let held: Vec<_> = (0..platform::verify_gate::MAX_VERIFIES_PER_TENANT).map(|_| tokio::spawn(verify(a.secret.clone()))).collect();
    while gate.in_flight("a") < platform::verify_gate::MAX_VERIFIES_PER_TENANT {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let e = verify(a.secret.clone()).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("VerifyProof") && e.message().contains("at most"), "{e:?}");
    // b's call is taken in (and waits its turn): b owns no such job, NOT_FOUND once it runs.
    let other = tokio::spawn(verify(b.secret.clone()));
    while gate.in_flight("b") < 1 {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    gate.open_cpu_slots(1);
    // A noop job publishes no proof: the kind's own answer, once a held call runs.
    for call in held {
        let e = call.await.unwrap().unwrap_err();
        assert_eq!(e.code(), Code::FailedPrecondition, "{e:?}");
        assert!(e.message().contains("no proof"), "{e:?}");
    }
    assert_eq!(other.await.unwrap().unwrap_err().code(), Code::NotFound);
    assert_eq!((gate.in_flight("a"), gate.in_flight("b")), (0, 0), "answered calls kept their places");
    assert_eq!(verify(a.secret.clone()).await.unwrap_err().code(), Code::FailedPrecondition);
}

//! Authentication and tenant isolation through the gRPC API, with tokens, jobs and inputs in
//! real Redis and MinIO (`PROVER_TEST_*`; in-process stores without them). The attacks: no
//! token, a forged token, tenant B reading, watching, fetching, verifying, cancelling, listing or
//! building on tenant A's job, or pointing an input at A's objects; a token revoked while in use.

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
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (health_reporter, health) = tonic_health::server::health_reporter();
    health_reporter.set_serving::<pb::job_service_server::JobServiceServer<JobServiceImpl>>().await;
    let server = tonic::transport::Server::builder()
        .add_service(health)
        .add_service(JobServiceImpl::new(platform).with_tokens(tokens).into_server())
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
    assert!(!blobs.list(&format!("tenants/{ta}/jobs/{ja}/")).await.unwrap().is_empty(), "A's job stored its inputs under A's prefix");
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
    // Each small Pari job plans 3 tasks (setup, prove, bundle): 3 jobs an hour.
    let quotas = platform::Quotas { max_active_jobs: Some(2), max_job_tasks: Some(4), max_tasks_per_hour: Some(9) };
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
    c.submit_job(req(pari(""), ka)).await.unwrap();
    let e = c.submit_job(req(pari(""), ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("active jobs per tenant") && e.message().contains("at most 2"), "{e:?}");
    assert_eq!(c.list_jobs(req(pb::ListJobsRequest::default(), ka)).await.unwrap().into_inner().jobs.len(), 2, "a refused job was recorded");
    c.submit_job(req(pari(""), kb)).await.expect("another tenant has its own quota");
    c.cancel_job(req(pb::CancelJobRequest { job_id: j1 }, ka)).await.unwrap();
    c.submit_job(req(pari(""), ka)).await.expect("a cancelled job frees its place");
    // Tenant a has planned 9 tasks this hour (the refused job charged nothing): a fourth job is
    // over the hourly budget even with a place free.
    let jobs = c.list_jobs(req(pb::ListJobsRequest::default(), ka)).await.unwrap().into_inner().jobs;
    let running = jobs.iter().find(|j| j.state != pb::JobState::Cancelled as i32).unwrap().job_id.clone();
    c.cancel_job(req(pb::CancelJobRequest { job_id: running }, ka)).await.unwrap();
    let e = c.submit_job(req(pari(""), ka)).await.unwrap_err();
    assert_eq!(e.code(), Code::ResourceExhausted, "{e:?}");
    assert!(e.message().contains("tasks per tenant per hour") && e.message().contains("next hour"), "{e:?}");
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

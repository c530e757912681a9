//! The reconcilers against a real Kubernetes API server (etcd + kube-apiserver, started by
//! scripts/test.d/20-kube.sh, which exports PROVER_TEST_KUBECONFIG) and the platform's real
//! JobService, started in-process in embedded mode.
//!
//! Without PROVER_TEST_KUBECONFIG these tests print why and pass, unless
//! PROVER_TEST_REQUIRE_KUBE=1 (set by the test step), where they fail.
//! By hand: `bash scripts/test.d/20-kube.sh shell`, then `cargo test -p prover-operator`.
//!
//! One file at ~700 lines: every test here shares one harness (the API server client, the
//! in-process platform, the JobService clients, `eventually`), and each test is one controller
//! behaviour end to end; split further, the harness would move to a module of its own.

use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use api::v1::job_service_client::JobServiceClient;
use clap::Parser;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::Namespace;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::wait::{await_condition, conditions};
use kube::{Api, Client, CustomResourceExt, ResourceExt};
use platform::service::{Role, ServiceConfig};
use prover_operator::crd::{JobKind, PariBatch, Phase, ProofJob, ProofJobSpec, ProverPool, ProverPoolSpec, ReckleBatch};
use prover_operator::{pool, proofjob, Stats};
use queue::{MemoryQueue, Queue, QueueConfig, TaskMessage};
use tokio::sync::watch;

/// The client the controllers use: with PROVER_TEST_OPERATOR_SA=NAMESPACE:NAME (set by
/// 20-kube.sh after applying the chart's operator RBAC), requests impersonate that
/// ServiceAccount, so a request the chart's rules do not allow fails the test.
async fn operator_client() -> Client {
    let path = std::env::var("PROVER_TEST_KUBECONFIG").expect("PROVER_TEST_KUBECONFIG");
    let kc = Kubeconfig::read_from(&path).expect("read PROVER_TEST_KUBECONFIG");
    let mut cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await.expect("kubeconfig");
    match std::env::var("PROVER_TEST_OPERATOR_SA") {
        Ok(sa) => {
            let (ns, name) = sa.split_once(':').expect("PROVER_TEST_OPERATOR_SA=NAMESPACE:NAME");
            cfg.auth_info.impersonate = Some(format!("system:serviceaccount:{ns}:{name}"));
            cfg.auth_info.impersonate_groups =
                Some(vec!["system:serviceaccounts".into(), format!("system:serviceaccounts:{ns}"), "system:authenticated".into()]);
        }
        Err(_) => eprintln!("PROVER_TEST_OPERATOR_SA unset: controllers run as admin, the chart's RBAC is not exercised"),
    }
    Client::try_from(cfg).expect("client")
}

async fn kube_client() -> Option<Client> {
    let Ok(path) = std::env::var("PROVER_TEST_KUBECONFIG") else {
        if std::env::var("PROVER_TEST_REQUIRE_KUBE").as_deref() == Ok("1") {
            panic!("PROVER_TEST_REQUIRE_KUBE=1 but PROVER_TEST_KUBECONFIG is not set");
        }
        eprintln!("skipped: no Kubernetes API server (PROVER_TEST_KUBECONFIG unset; scripts/test.d/20-kube.sh starts one)");
        return None;
    };
    let kc = Kubeconfig::read_from(&path).expect("read PROVER_TEST_KUBECONFIG");
    let cfg = kube::Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default()).await.expect("kubeconfig");
    Some(Client::try_from(cfg).expect("client"))
}

/// Applies both CRDs (server-side apply: concurrent tests may both do it) and waits until
/// they are served; then creates a namespace of the test's own.
async fn setup(client: &Client, prefix: &str) -> String {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in [ProofJob::crd(), ProverPool::crd()] {
        let name = crd.name_any();
        crds.patch(&name, &PatchParams::apply("prover-operator-tests").force(), &Patch::Apply(&crd)).await.expect("apply CRD");
        tokio::time::timeout(Duration::from_secs(30), await_condition(crds.clone(), &name, conditions::is_crd_established()))
            .await
            .expect("CRD established in time")
            .expect("watch CRD");
    }
    let ns = format!("{prefix}-{}", uuid::Uuid::new_v4().simple().to_string().get(..8).unwrap());
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let obj: Namespace = serde_json::from_value(serde_json::json!({"metadata": {"name": ns}})).unwrap();
    namespaces.create(&PostParams::default(), &obj).await.expect("create namespace");
    ns
}

async fn teardown(client: &Client, ns: &str) {
    let namespaces: Api<Namespace> = Api::all(client.clone());
    // No namespace controller runs here, so this only marks it; good enough for a test server.
    let _ = namespaces.delete(ns, &DeleteParams::default()).await;
}

/// Polls `check` until it returns Some, or panics after `timeout` with `what` and the last value seen.
async fn eventually<T, F, Fut>(timeout: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = (Option<T>, String)>,
{
    let start = Instant::now();
    loop {
        let (r, seen) = check().await;
        if let Some(v) = r {
            return v;
        }
        if start.elapsed() > timeout {
            panic!("timed out after {timeout:?} waiting for {what}; last seen: {seen}");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[derive(Parser)]
struct Cfg {
    #[command(flatten)]
    cfg: ServiceConfig,
}

/// The platform in embedded mode with `roles`, serving gRPC on a free loopback port.
/// Returns the endpoint URL; everything stops when `stop` turns true.
async fn start_platform(roles: &'static [Role], dir: &std::path::Path, stop: watch::Receiver<bool>) -> String {
    start_platform_on(free_port(), roles, dir, stop).await
}

async fn start_platform_on(port: u16, roles: &'static [Role], dir: &std::path::Path, stop: watch::Receiver<bool>) -> String {
    start_platform_with(port, roles, dir, stop, &[]).await
}

/// [`start_platform_on`] with more service flags.
async fn start_platform_with(port: u16, roles: &'static [Role], dir: &std::path::Path, stop: watch::Receiver<bool>, extra: &[&str]) -> String {
    let listen = format!("127.0.0.1:{port}");
    let metrics = format!("127.0.0.1:{}", free_port());
    let mut args = vec!["test", "--listen", &listen, "--metrics-listen", &metrics, "--name", "operator-test"];
    args.extend_from_slice(extra);
    let cfg = Cfg::parse_from(args).cfg;
    let platform = platform::service::embedded(&cfg, dir.to_path_buf()).expect("embedded platform");
    tokio::spawn(async move {
        let mut stop = stop;
        let shutdown = async move {
            let _ = stop.wait_for(|s| *s).await;
        };
        if let Err(e) = platform::service::run(platform, roles, &cfg, shutdown).await {
            eprintln!("platform stopped: {e}");
        }
    });
    let endpoint = format!("http://127.0.0.1:{port}");
    // Wait for the gRPC server.
    eventually(Duration::from_secs(30), "the JobService to listen", move || async move {
        (tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok().map(|_| ()), String::new())
    })
    .await;
    endpoint
}

fn job_client(endpoint: &str) -> api::AuthedClient {
    job_client_as(endpoint, None)
}

/// A JobService client sending `token`.
fn job_client_as(endpoint: &str, token: Option<&str>) -> api::AuthedClient {
    let channel = tonic::transport::Endpoint::from_shared(endpoint.to_string()).unwrap().connect_lazy();
    JobServiceClient::with_interceptor(channel, api::Bearer::new(token).unwrap())
}

fn pari_job(name: &str, circuit: &str, size: u64, count: u64) -> ProofJob {
    ProofJob::new(
        name,
        ProofJobSpec {
            kind: JobKind::PariBatch,
            pari_batch: Some(PariBatch { circuit: circuit.into(), size, seed_start: 1, count, proofs_per_task: Some(2), bundle_size: None }),
            ..Default::default()
        },
    )
}

fn stopper(stop: &watch::Receiver<bool>) -> impl std::future::Future<Output = ()> + Send + Sync + 'static {
    let mut rx = stop.clone();
    async move {
        let _ = rx.wait_for(|s| *s).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn proofjob_is_submitted_mirrored_and_failed_on_invalid_spec() {
    let Some(client) = kube_client().await else { return };
    let ns = setup(&client, "op-pj").await;
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stop_rx) = watch::channel(false);
    // Authentication on, with the operator's token in a tokens directory (as the chart mounts
    // its Secret): the controller submits and polls with it.
    let tokens = tempfile::tempdir().unwrap();
    let token = auth::generate("operator", 0).unwrap().secret;
    std::fs::write(tokens.path().join("operator"), &token).unwrap();
    let auth_flags = ["--require-auth", "--tokens-dir", tokens.path().to_str().unwrap(), "--delegating-tenant", "operator"];
    let endpoint = start_platform_with(free_port(), &[Role::Planner, Role::Executor, Role::Aggregator, Role::Worker], dir.path(), stop_rx.clone(), &auth_flags).await;
    let denied = job_client(&endpoint).list_jobs(api::v1::ListJobsRequest::default()).await.expect_err("no token, no answer");
    assert_eq!(denied.code(), tonic::Code::Unauthenticated, "{denied:?}");

    let ctx = Arc::new(proofjob::JobContext {
        client: operator_client().await,
        jobs: job_client_as(&endpoint, Some(&token)),
        poll: Duration::from_millis(500),
        retry: Duration::from_secs(2),
        quota_waits: Default::default(),
    });
    let stats = Arc::new(Stats::default());
    let controller = tokio::spawn(prover_operator::run_proofjobs(ctx, Some(ns.clone()), stats.clone(), stopper(&stop_rx)));

    let jobs_api: Api<ProofJob> = Api::namespaced(client.clone(), &ns);
    let jobs = &jobs_api;
    let created = jobs.create(&PostParams::default(), &pari_job("tiny", "chain", 8, 4)).await.expect("create ProofJob");
    let bad = jobs.create(&PostParams::default(), &pari_job("bad", "nope", 8, 4)).await.expect("create ProofJob");
    // S2 of the platform review: inline leaves are bounded by the CRD's schema (the operator
    // caches every ProofJob whole), so the API server refuses a ProofJob with more; before,
    // anything up to etcd's object limit (~1.5 MiB) was taken.
    let big = ProofJob::new(
        "big-leaves",
        ProofJobSpec {
            kind: JobKind::ReckleBatch,
            reckle_batch: Some(ReckleBatch { log_n: 13, log_bucket: 2, batch: vec![0], leaves: Some(vec![1; 1 << 13]), ..Default::default() }),
            ..Default::default()
        },
    );
    let refused = match jobs.create(&PostParams::default(), &big).await {
        Ok(_) => panic!("a ProofJob with 8192 inline leaves was created"),
        Err(e) => e.to_string(),
    };
    assert!(refused.contains("leaves") && refused.contains("4096"), "{refused}");

    let done = eventually(Duration::from_secs(120), "ProofJob tiny Done", move || async move {
        let pj = jobs.get("tiny").await.unwrap();
        let st = pj.status.clone();
        (st.as_ref().filter(|s| s.phase == Phase::Done).map(|_| pj.clone()), format!("{st:?}"))
    })
    .await;
    let st = done.status.clone().unwrap();
    let job_id = st.job_id.clone().expect("jobId recorded");
    assert!(!job_id.is_empty());
    assert_eq!(st.idempotency_key.as_deref(), created.metadata.uid.as_deref(), "idempotency key defaults to the UID");
    assert!(st.proof_prefix.as_deref().is_some_and(|p| p.contains(&job_id)), "{st:?}");
    assert!(!st.tasks.is_empty() && st.tasks.iter().all(|t| t.done == t.total && t.total > 0), "{:?}", st.tasks);
    assert_eq!(st.observed_generation, done.metadata.generation);
    assert!(done.finalizers().iter().any(|f| f == proofjob::FINALIZER), "finalizer added");
    // The platform agrees, and the job is the namespace's tenant's (issue 32): the operator
    // reaches it only by acting for that namespace, not as its own tenant.
    assert!(job_id.starts_with(&format!("ns-{ns}.")), "the namespace's tenant is ns-<namespace>: {job_id}");
    let for_ns = |job_id: &str| proofjob::for_namespace(api::v1::GetJobRequest { job_id: job_id.into() }, &ns).unwrap();
    let job = job_client_as(&endpoint, Some(&token)).get_job(for_ns(&job_id)).await.unwrap().into_inner();
    assert_eq!(job.state, api::v1::JobState::Done as i32);
    let e = job_client_as(&endpoint, Some(&token)).get_job(api::v1::GetJobRequest { job_id: job_id.clone() }).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::NotFound, "the operator's own tenant reached a namespace's job: {e:?}");

    let failed = eventually(Duration::from_secs(60), "ProofJob bad Failed", move || async move {
        let pj = jobs.get("bad").await.unwrap();
        let st = pj.status.clone();
        (st.clone().filter(|s| s.phase == Phase::Failed), format!("{st:?}"))
    })
    .await;
    assert!(failed.message.as_deref().is_some_and(|m| m.contains("invalid circuit")), "{failed:?}");
    assert_eq!(failed.job_id, None);
    assert_eq!(failed.observed_generation, bad.metadata.generation);

    // No hot loop: with both ended, the controller goes quiet.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before = stats.jobs_ok.load(Ordering::Relaxed) + stats.jobs_err.load(Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(3)).await;
    let after = stats.jobs_ok.load(Ordering::Relaxed) + stats.jobs_err.load(Ordering::Relaxed);
    assert!(after - before <= 2, "{} reconciles in 3 s after both jobs ended", after - before);

    // Deleting an ended ProofJob needs no cancellation; the finalizer lets it go.
    jobs.delete("tiny", &DeleteParams::default()).await.unwrap();
    eventually(Duration::from_secs(30), "ProofJob tiny gone", move || async move {
        (jobs.get_opt("tiny").await.unwrap().is_none().then_some(()), String::new())
    })
    .await;
    let job = job_client_as(&endpoint, Some(&token)).get_job(for_ns(&job_id)).await.unwrap().into_inner();
    assert_eq!(job.state, api::v1::JobState::Done as i32, "a done job stays done");

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), controller).await;
    teardown(&client, &ns).await;
}

/// A platform with a planner and an executor but no workers (its jobs are planned and then wait
/// for ever), and a controller context polling it every 500 ms.
async fn stuck_platform(dir: &std::path::Path, stop: watch::Receiver<bool>) -> (String, Arc<proofjob::JobContext>) {
    let endpoint = start_platform(&[Role::Planner, Role::Executor], dir, stop).await;
    let ctx = Arc::new(proofjob::JobContext {
        client: operator_client().await,
        jobs: job_client(&endpoint),
        poll: Duration::from_millis(500),
        retry: Duration::from_secs(2),
        quota_waits: Default::default(),
    });
    (endpoint, ctx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn deleting_a_running_proofjob_cancels_its_job() {
    let Some(client) = kube_client().await else { return };
    let ns = setup(&client, "op-cancel").await;
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stop_rx) = watch::channel(false);
    let (endpoint, ctx) = stuck_platform(dir.path(), stop_rx.clone()).await;
    let controller = tokio::spawn(prover_operator::run_proofjobs(ctx, Some(ns.clone()), Arc::new(Stats::default()), stopper(&stop_rx)));

    let jobs_api: Api<ProofJob> = Api::namespaced(client.clone(), &ns);
    let jobs = &jobs_api;
    jobs.create(&PostParams::default(), &pari_job("stuck", "chain", 8, 4)).await.unwrap();
    let st = eventually(Duration::from_secs(60), "ProofJob stuck submitted", move || async move {
        let st = jobs.get("stuck").await.unwrap().status;
        (st.clone().filter(|s| s.job_id.is_some() && matches!(s.phase, Phase::Queued | Phase::Running)), format!("{st:?}"))
    })
    .await;
    let job_id = st.job_id.unwrap();

    jobs.delete("stuck", &DeleteParams::default()).await.unwrap();
    eventually(Duration::from_secs(30), "ProofJob stuck gone", move || async move {
        (jobs.get_opt("stuck").await.unwrap().is_none().then_some(()), String::new())
    })
    .await;
    let job = job_client(&endpoint).get_job(api::v1::GetJobRequest { job_id }).await.unwrap().into_inner();
    assert_eq!(job.state, api::v1::JobState::Cancelled as i32, "{job:?}");

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), controller).await;
    teardown(&client, &ns).await;
}

/// N3 of the platform review: a submission refused for the namespace's quota
/// (RESOURCE_EXHAUSTED) leaves the ProofJob Pending, naming the quota, and it is submitted again
/// (each wait longer, `proofjob::quota_backoff`) until a place frees: here the namespace may
/// have one active job, the first ProofJob's job waits for ever (no workers), and deleting that
/// ProofJob (its job cancelled) lets the second through.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_proofjob_over_its_quota_waits_pending_until_a_place_frees() {
    let Some(client) = kube_client().await else { return };
    let ns = setup(&client, "op-quota").await;
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stop_rx) = watch::channel(false);
    let tokens = tempfile::tempdir().unwrap();
    let token = auth::generate("operator", 0).unwrap().secret;
    std::fs::write(tokens.path().join("operator"), &token).unwrap();
    let flags = ["--require-auth", "--tokens-dir", tokens.path().to_str().unwrap(), "--delegating-tenant", "operator", "--tenant-max-active-jobs", "1"];
    let endpoint = start_platform_with(free_port(), &[Role::Planner, Role::Executor], dir.path(), stop_rx.clone(), &flags).await;
    let ctx = Arc::new(proofjob::JobContext {
        client: operator_client().await,
        jobs: job_client_as(&endpoint, Some(&token)),
        poll: Duration::from_millis(500),
        retry: Duration::from_millis(200),
        quota_waits: Default::default(),
    });
    let controller = tokio::spawn(prover_operator::run_proofjobs(ctx, Some(ns.clone()), Arc::new(Stats::default()), stopper(&stop_rx)));

    let jobs_api: Api<ProofJob> = Api::namespaced(client.clone(), &ns);
    let jobs = &jobs_api;
    jobs.create(&PostParams::default(), &pari_job("first", "chain", 8, 4)).await.unwrap();
    eventually(Duration::from_secs(60), "ProofJob first submitted", move || async move {
        let st = jobs.get("first").await.unwrap().status;
        (st.clone().filter(|s| s.job_id.is_some()), format!("{st:?}"))
    })
    .await;
    jobs.create(&PostParams::default(), &pari_job("second", "chain", 8, 4)).await.unwrap();
    let waiting = eventually(Duration::from_secs(60), "ProofJob second Pending for the quota", move || async move {
        let st = jobs.get("second").await.unwrap().status;
        (st.clone().filter(|s| s.phase == Phase::Pending && s.message.as_deref().is_some_and(|m| m.contains("quota"))), format!("{st:?}"))
    })
    .await;
    assert_eq!(waiting.job_id, None, "{waiting:?}");
    assert!(waiting.message.as_deref().is_some_and(|m| m.contains("active jobs")), "{waiting:?}");

    jobs.delete("first", &DeleteParams::default()).await.unwrap();
    let st = eventually(Duration::from_secs(180), "ProofJob second submitted once a place freed", move || async move {
        let st = jobs.get("second").await.unwrap().status;
        (st.clone().filter(|s| s.job_id.is_some()), format!("{st:?}"))
    })
    .await;
    assert!(matches!(st.phase, Phase::Queued | Phase::Running), "{st:?}");

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), controller).await;
    teardown(&client, &ns).await;
}

fn deployment(name: &str, replicas: i32) -> Deployment {
    let mut d = unlabelled_deployment(name, replicas);
    d.metadata.labels = Some([(prover_operator::pool::WORKER_LABEL.to_string(), "cpu".to_string())].into());
    d
}

/// A Deployment the chart did not make (no worker label): a ProverPool must not scale it.
fn unlabelled_deployment(name: &str, replicas: i32) -> Deployment {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "worker", "image": "prover:test", "args": ["serve", "worker"]}]}
            }
        }
    }))
    .unwrap()
}

fn task(i: u32) -> TaskMessage {
    TaskMessage::new("j", format!("t{i}"), "{}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pool_scales_the_deployment_with_the_backlog_and_never_below_busy_workers() {
    let Some(client) = kube_client().await else { return };
    let ns = setup(&client, "op-pool").await;
    let (stop_tx, stop_rx) = watch::channel(false);
    let queue = Arc::new(MemoryQueue::new(QueueConfig::default()));
    let op_client = operator_client().await;
    if std::env::var("PROVER_TEST_OPERATOR_SA").is_ok() {
        // Impersonation is in force: the operator may not read Secrets.
        let secrets: Api<k8s_openapi::api::core::v1::Secret> = Api::namespaced(op_client.clone(), &ns);
        match secrets.list(&Default::default()).await {
            Err(kube::Error::Api(e)) if e.code == 403 => {}
            other => panic!("listing Secrets as the operator's ServiceAccount should be forbidden: {other:?}"),
        }
    }
    let ctx = Arc::new(pool::PoolContext::new(op_client, queue.clone() as Arc<dyn Queue>, Duration::from_millis(300)));
    let controller = tokio::spawn(prover_operator::run_pools(ctx, Some(ns.clone()), Arc::new(Stats::default()), stopper(&stop_rx)));

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), &ns);
    deployments.create(&PostParams::default(), &deployment("workers", 1)).await.expect("create Deployment");
    let pools: Api<ProverPool> = Api::namespaced(client.clone(), &ns);
    let spec = ProverPoolSpec {
        task_kinds: vec!["pari.prove".into(), "pari.setup".into()],
        deployment: "workers".into(),
        min_replicas: 0,
        max_replicas: 6,
        target_backlog_seconds: Some(30.0),
        default_seconds_per_task: Some(10.0),
        scale_down_delay_seconds: Some(0),
    };
    pools.create(&PostParams::default(), &ProverPool::new("cpu", spec.clone())).await.expect("create ProverPool");
    let missing = ProverPoolSpec { deployment: "absent".into(), ..spec.clone() };
    pools.create(&PostParams::default(), &ProverPool::new("orphan", missing)).await.unwrap();
    // A pool pointed at a Deployment the chart did not make (say, the database) with work
    // waiting: it must leave it alone.
    deployments.create(&PostParams::default(), &unlabelled_deployment("database", 1)).await.expect("create Deployment");
    let intruder = ProverPoolSpec { deployment: "database".into(), min_replicas: 3, ..spec };
    pools.create(&PostParams::default(), &ProverPool::new("intruder", intruder)).await.unwrap();

    let deployments = &deployments;
    let pools = &pools;
    let replicas = move || async move { deployments.get("workers").await.unwrap().spec.and_then(|s| s.replicas).unwrap() };
    let wait_replicas = move |want: i32, what: &'static str| async move {
        eventually(Duration::from_secs(120), what, move || async move {
            let r = replicas().await;
            ((r == want).then_some(()), format!("replicas {r}"))
        })
        .await
    };

    // Empty queues: down to minReplicas (0).
    wait_replicas(0, "idle pool at 0 replicas").await;

    // 9 tasks waiting, no throughput data (10 s each): 90 s of work at 30 s per worker = 3.
    for i in 0..9 {
        queue.enqueue("pari.prove", task(i)).await.unwrap();
    }
    wait_replicas(3, "3 replicas for 9 waiting tasks").await;
    // The scaler writes the scale, then the status (two API writes): wait for the status too.
    let st = eventually(Duration::from_secs(120), "status for 9 waiting tasks", move || async move {
        let st = pools.get_status("cpu").await.unwrap().status.unwrap();
        (((st.pending, st.running, st.desired_replicas) == (9, 0, Some(3))).then(|| st.clone()), format!("{st:?}"))
    })
    .await;
    assert!(st.last_scale_time.is_some());

    // 4 workers take a task each and throughput shows 1 s per task: the backlog (9 s) alone
    // wants 1 worker, but 4 are busy, so the pool grows to 4 and does not drop below it.
    let mut leases = Vec::new();
    for w in 0..4 {
        leases.push(queue.claim("pari.prove", &format!("w{w}"), Duration::ZERO).await.unwrap().unwrap());
    }
    for _ in 0..3 {
        queue.record_throughput("pari.prove", Duration::from_secs(1)).await.unwrap();
    }
    wait_replicas(4, "4 replicas while 4 workers are busy").await;
    let st = eventually(Duration::from_secs(120), "status with 4 busy", move || async move {
        let st = pools.get_status("cpu").await.unwrap().status.unwrap();
        ((st.busy_workers == 4 && st.seconds_per_task == 1.0).then(|| st.clone()), format!("{st:?}"))
    })
    .await;
    assert_eq!((st.pending, st.running), (5, 4));
    assert!(st.message.as_deref().is_some_and(|m| m.contains("4 workers are busy")), "{st:?}");
    // It stays there over several decisions.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(replicas().await, 4);

    // Two finish: 2 busy, 5 waiting × 1 s → the floor (2) now decides.
    for l in leases.drain(..2) {
        queue.complete(&l).await.unwrap();
    }
    wait_replicas(2, "2 replicas with 2 busy").await;

    // All done: back to 0.
    for l in leases.drain(..) {
        queue.complete(&l).await.unwrap();
    }
    while let Some(l) = queue.claim("pari.prove", "w", Duration::ZERO).await.unwrap() {
        queue.complete(&l).await.unwrap();
    }
    wait_replicas(0, "0 replicas with nothing to do").await;

    // A pool whose Deployment does not exist says so.
    eventually(Duration::from_secs(10), "orphan pool message", move || async move {
        let st = pools.get_status("orphan").await.unwrap().status;
        let msg = st.as_ref().and_then(|s| s.message.clone()).unwrap_or_default();
        (msg.contains("Deployment").then_some(()).filter(|_| msg.contains("not found")), msg)
    })
    .await;

    // The pool aimed at an unlabelled Deployment says why and never scaled it (minReplicas 3).
    eventually(Duration::from_secs(10), "intruder pool message", move || async move {
        let st = pools.get_status("intruder").await.unwrap().status;
        let msg = st.as_ref().and_then(|s| s.message.clone()).unwrap_or_default();
        (msg.contains("worker label").then_some(()), msg)
    })
    .await;
    assert_eq!(deployments.get("database").await.unwrap().spec.and_then(|s| s.replicas), Some(1));

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), controller).await;
    teardown(&client, &ns).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_jobservice_is_reported_and_retried() {
    let Some(client) = kube_client().await else { return };
    let ns = setup(&client, "op-down").await;
    let (stop_tx, stop_rx) = watch::channel(false);
    // Nothing listens on this port yet: the submission fails and is retried.
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let ctx = Arc::new(proofjob::JobContext {
        client: operator_client().await,
        jobs: job_client(&endpoint),
        poll: Duration::from_millis(500),
        retry: Duration::from_millis(500),
        quota_waits: Default::default(),
    });
    let controller = tokio::spawn(prover_operator::run_proofjobs(ctx, Some(ns.clone()), Arc::new(Stats::default()), stopper(&stop_rx)));
    let jobs_api: Api<ProofJob> = Api::namespaced(client.clone(), &ns);
    let jobs = &jobs_api;
    jobs.create(&PostParams::default(), &pari_job("later", "chain", 8, 4)).await.unwrap();
    let st = eventually(Duration::from_secs(30), "a retrying message", move || async move {
        let st = jobs.get("later").await.unwrap().status;
        let msg = st.as_ref().and_then(|s| s.message.clone()).unwrap_or_default();
        (st.filter(|_| msg.starts_with("retrying: JobService SubmitJob")), msg)
    })
    .await;
    assert_eq!((st.phase, st.job_id), (Phase::Pending, None));

    // The JobService comes up on that port: the retry submits the job, and it is proved.
    let dir = tempfile::tempdir().unwrap();
    let started = start_platform_on(port, &[Role::Planner, Role::Executor, Role::Aggregator, Role::Worker], dir.path(), stop_rx.clone()).await;
    assert_eq!(started, endpoint);
    let st = eventually(Duration::from_secs(120), "ProofJob later Done", move || async move {
        let st = jobs.get("later").await.unwrap().status;
        (st.clone().filter(|s| s.phase == Phase::Done), format!("{st:?}"))
    })
    .await;
    assert!(st.job_id.is_some());
    assert_eq!(st.message, None, "the retry message is cleared");

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), controller).await;
    teardown(&client, &ns).await;
}

/// Issue 32 item 3: `status.jobId` is editable by whoever may patch the status, so it names a job
/// but does not vouch for it. A ProofJob whose jobId was pointed at another ProofJob's job in the
/// same namespace (one tenant) neither cancels that job when deleted nor mirrors it: the operator
/// re-derives the key it submitted with and compares it with the job's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_edited_job_id_neither_cancels_nor_mirrors_another_proofjobs_job() {
    let Some(client) = kube_client().await else { return };
    let ns = setup(&client, "op-steal").await;
    let dir = tempfile::tempdir().unwrap();
    let (stop_tx, stop_rx) = watch::channel(false);
    let (endpoint, ctx) = stuck_platform(dir.path(), stop_rx.clone()).await;
    // The first controller stops before the edit, so that the deletion below reaches the
    // finalizer of a ProofJob that still looks running (a controller that saw the edit first
    // would fail the ProofJob, and a failed one cancels nothing anyway).
    let (first_tx, first_rx) = watch::channel(false);
    let first = tokio::spawn(prover_operator::run_proofjobs(ctx.clone(), Some(ns.clone()), Arc::new(Stats::default()), stopper(&first_rx)));
    let jobs_api: Api<ProofJob> = Api::namespaced(client.clone(), &ns);
    let jobs = &jobs_api;
    for name in ["victim", "thief", "peeker"] {
        jobs.create(&PostParams::default(), &pari_job(name, "chain", 8, 4)).await.unwrap();
    }
    let mut ids = Vec::new();
    for name in ["victim", "thief", "peeker"] {
        let st = eventually(Duration::from_secs(60), "ProofJobs submitted", move || async move {
            let st = jobs.get(name).await.unwrap().status;
            (st.clone().filter(|s| s.job_id.is_some() && matches!(s.phase, Phase::Queued | Phase::Running)), format!("{name}: {st:?}"))
        })
        .await;
        ids.push(st.job_id.unwrap());
    }
    let victim_job = ids[0].clone();
    let _ = first_tx.send(true);
    first.await.unwrap();

    let steal = |name: &'static str| {
        let patch = serde_json::json!({"status": {"jobId": victim_job}});
        async move { jobs.patch_status(name, &PatchParams::default(), &Patch::Merge(&patch)).await.unwrap() }
    };
    steal("thief").await;
    jobs.delete("thief", &DeleteParams::default()).await.unwrap();
    let still = jobs.get("thief").await.unwrap();
    assert!(still.metadata.deletion_timestamp.is_some() && still.status.as_ref().and_then(|s| s.job_id.as_deref()) == Some(victim_job.as_str()));

    let second = tokio::spawn(prover_operator::run_proofjobs(ctx, Some(ns.clone()), Arc::new(Stats::default()), stopper(&stop_rx)));
    eventually(Duration::from_secs(60), "ProofJob thief gone", move || async move {
        (jobs.get_opt("thief").await.unwrap().is_none().then_some(()), String::new())
    })
    .await;
    let job = job_client(&endpoint).get_job(api::v1::GetJobRequest { job_id: victim_job.clone() }).await.unwrap().into_inner();
    assert!(matches!(api::v1::JobState::try_from(job.state), Ok(api::v1::JobState::Queued | api::v1::JobState::Running)), "the victim's job was cancelled by another ProofJob's deletion: {job:?}");

    // A live ProofJob pointed at the victim's job fails, naming it, instead of mirroring it.
    steal("peeker").await;
    let st = eventually(Duration::from_secs(60), "ProofJob peeker failed", move || async move {
        let st = jobs.get("peeker").await.unwrap().status;
        (st.clone().filter(|s| s.phase == Phase::Failed), format!("{st:?}"))
    })
    .await;
    assert!(st.message.as_deref().is_some_and(|m| m.contains(&victim_job) && m.contains("did not submit")), "{st:?}");
    let victim = jobs.get("victim").await.unwrap().status.unwrap();
    assert!(matches!(victim.phase, Phase::Queued | Phase::Running), "{victim:?}");
    // Its owner deleting the victim still cancels its job.
    jobs.delete("victim", &DeleteParams::default()).await.unwrap();
    eventually(Duration::from_secs(60), "ProofJob victim gone", move || async move {
        (jobs.get_opt("victim").await.unwrap().is_none().then_some(()), String::new())
    })
    .await;
    let job = job_client(&endpoint).get_job(api::v1::GetJobRequest { job_id: victim_job }).await.unwrap().into_inner();
    assert_eq!(job.state, api::v1::JobState::Cancelled as i32, "{job:?}");

    let _ = stop_tx.send(true);
    let _ = tokio::time::timeout(Duration::from_secs(30), second).await;
    teardown(&client, &ns).await;
}

/// `GET /readyz` on the operator's HTTP port: whether it answered 200.
async fn ready(port: u16) -> bool {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let Ok(mut s) = tokio::net::TcpStream::connect(("127.0.0.1", port)).await else { return false };
    if s.write_all(b"GET /readyz HTTP/1.0\r\nHost: operator\r\n\r\n").await.is_err() {
        return false;
    }
    let mut answer = Vec::new();
    let _ = s.read_to_end(&mut answer).await;
    answer.starts_with(b"HTTP/1.0 200") || answer.starts_with(b"HTTP/1.1 200")
}

/// The operator started before its Redis (a Redis pod replaced in the same rollout) waits for
/// it, retrying, and becomes ready once it answers; before, it exited at once and crash-looped
/// (seen on the real cluster, scripts/cluster.sh). With `--backend-wait-secs 0` it gives up
/// after one try, naming Redis. Waits on the operator's own log line and /readyz, not on time.
#[tokio::test]
async fn the_operator_waits_for_a_redis_started_after_it() {
    use std::process::Stdio;
    use tokio::io::AsyncBufReadExt;
    let Some(_client) = kube_client().await else { return };
    let kubeconfig = std::env::var("PROVER_TEST_KUBECONFIG").unwrap();
    let redis_port = free_port();
    let redis_url = format!("redis://127.0.0.1:{redis_port}/");
    let operator = |wait: &str, http: u16| {
        let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_operator"));
        c.args(["run", "--redis", &redis_url, "--namespace", "default", "--backend-wait-secs", wait])
            .args(["--metrics-listen", &format!("127.0.0.1:{http}")])
            .env("KUBECONFIG", &kubeconfig)
            .env_remove("PROVER_ENDPOINT")
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        c
    };

    let out = operator("0", free_port()).output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the operator ran without its Redis: {err}");
    assert!(err.contains("Redis not reachable (waited up to 0 s: --backend-wait-secs)"), "{err}");

    let http = free_port();
    let mut child = operator("600", http).spawn().unwrap();
    let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
    loop {
        match lines.next_line().await.unwrap() {
            Some(line) if line.contains("backend not reachable yet; waiting") => break,
            Some(_) => {}
            None => panic!("the operator exited instead of waiting for Redis: {:?}", child.wait().await),
        }
    }
    assert!(!ready(http).await, "ready before its Redis answered");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let mut redis = tokio::process::Command::new("redis-server")
        .args(["--port", &redis_port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
        .stdout(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("redis-server on PATH (scripts/test.d/10-services.sh installs it)");
    eventually(Duration::from_secs(600), "the operator to become ready once Redis is up", || async {
        let up = ready(http).await;
        (up.then_some(()), format!("ready {up}"))
    })
    .await;
    assert!(child.try_wait().unwrap().is_none(), "the operator exited");
    let _ = child.kill().await;
    let _ = redis.kill().await;
}

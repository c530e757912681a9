//! The platform's Kubernetes operator (kube-rs):
//!
//! * `ProofJob` ([`crd::ProofJob`]): a proving job as a resource. The reconciler
//!   ([`proofjob`]) submits it to the JobService over gRPC once, with an idempotency key (the
//!   resource's UID unless given), mirrors the job into `status` until it ends, and cancels a
//!   running job when the resource is deleted (finalizer `prover.dev/cancel-job`).
//! * `ProverPool` ([`crd::ProverPool`]): a worker Deployment scaled by the work in the queues
//!   of its task kinds ([`pool`], decision in [`scaling::decide`]), never below the workers
//!   busy with a task.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use kube::runtime::{watcher, Controller};
use kube::{Api, Client};

pub mod crd;
pub mod pool;
pub mod proofjob;
pub mod scaling;

/// Field manager of the operator's server-side-apply patches.
pub const FIELD_MANAGER: &str = "prover-operator";

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("Kubernetes API: {0}")]
    Kube(#[from] kube::Error),
    #[error("JobService {op}: {status}")]
    Grpc { op: &'static str, status: tonic::Status },
    #[error("{0}")]
    Finalizer(#[source] Box<kube::runtime::finalizer::Error<Error>>),
    #[error("queue: {0}")]
    Queue(#[from] queue::QueueError),
    #[error("{0}")]
    Invalid(String),
}

/// Reconcile counts by controller and outcome, for `/metrics`.
#[derive(Default)]
pub struct Stats {
    pub jobs_ok: AtomicU64,
    pub jobs_err: AtomicU64,
    pub pools_ok: AtomicU64,
    pub pools_err: AtomicU64,
    pub ready: AtomicBool,
}

impl Stats {
    pub fn render(&self) -> String {
        let l = |o: &AtomicU64| o.load(Ordering::Relaxed);
        format!(
            "# HELP prover_operator_reconciles_total Reconciliations by controller and outcome.\n\
             # TYPE prover_operator_reconciles_total counter\n\
             prover_operator_reconciles_total{{controller=\"proofjob\",outcome=\"ok\"}} {}\n\
             prover_operator_reconciles_total{{controller=\"proofjob\",outcome=\"error\"}} {}\n\
             prover_operator_reconciles_total{{controller=\"proverpool\",outcome=\"ok\"}} {}\n\
             prover_operator_reconciles_total{{controller=\"proverpool\",outcome=\"error\"}} {}\n",
            l(&self.jobs_ok),
            l(&self.jobs_err),
            l(&self.pools_ok),
            l(&self.pools_err)
        )
    }
}

fn api<K>(client: Client, namespace: Option<&str>) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    match namespace {
        Some(ns) => Api::namespaced(client, ns),
        None => Api::all(client),
    }
}

/// ProofJobs the controller reconciles at once.
pub const PROOFJOB_CONCURRENCY: u16 = 16;

/// Runs the ProofJob controller (all namespaces, or `namespace`) until `shutdown` resolves.
pub async fn run_proofjobs(
    ctx: Arc<proofjob::JobContext>,
    namespace: Option<String>,
    stats: Arc<Stats>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let jobs: Api<crd::ProofJob> = api(ctx.client.clone(), namespace.as_deref());
    Controller::new(jobs, watcher::Config::default())
        // At most this many ProofJobs reconciled at once (each holds a JobService call).
        .with_config(kube::runtime::controller::Config::default().concurrency(PROOFJOB_CONCURRENCY))
        .graceful_shutdown_on(shutdown)
        .run(proofjob::reconcile, proofjob::error_policy, ctx)
        .for_each(|r| {
            match r {
                Ok(_) => stats.jobs_ok.fetch_add(1, Ordering::Relaxed),
                Err(_) => stats.jobs_err.fetch_add(1, Ordering::Relaxed),
            };
            futures::future::ready(())
        })
        .await;
}

/// Runs the ProverPool scaler until `shutdown` resolves. Each pool is re-evaluated every
/// interval; events that change only the status (the scaler's own writes) do not cause an
/// earlier evaluation (see [`pool::reconcile`]).
pub async fn run_pools(
    ctx: Arc<pool::PoolContext>,
    namespace: Option<String>,
    stats: Arc<Stats>,
    shutdown: impl Future<Output = ()> + Send + Sync + 'static,
) {
    let pools: Api<crd::ProverPool> = api(ctx.client.clone(), namespace.as_deref());
    Controller::new(pools, watcher::Config::default())
        .graceful_shutdown_on(shutdown)
        .run(pool::reconcile, pool::error_policy, ctx)
        .for_each(|r| {
            match r {
                Ok(_) => stats.pools_ok.fetch_add(1, Ordering::Relaxed),
                Err(_) => stats.pools_err.fetch_add(1, Ordering::Relaxed),
            };
            futures::future::ready(())
        })
        .await;
}

/// HTTP side: `/healthz` (alive), `/readyz` (controllers started), `/metrics`.
pub fn http_router(stats: Arc<Stats>) -> axum::Router {
    use axum::http::StatusCode;
    use axum::routing::get;
    let ready = stats.clone();
    axum::Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || {
                let ready = ready.clone();
                async move {
                    if ready.ready.load(Ordering::Relaxed) {
                        (StatusCode::OK, "ready")
                    } else {
                        (StatusCode::SERVICE_UNAVAILABLE, "starting")
                    }
                }
            }),
        )
        .route("/metrics", get(move || {
            let stats = stats.clone();
            async move { stats.render() }
        }))
}

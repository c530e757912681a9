//! Prometheus metrics and the HTTP side of every service (`/metrics`, `/healthz`, `/readyz`).
//!
//! Names (all prefixed `prover_`; see `docs/service-contract.md`): `jobs_submitted_total{kind}`,
//! `jobs_total{kind,outcome}` (done, failed, cancelled, rejected), `proofs_total{kind}`,
//! `tasks_total{kind,outcome}` (ok, retried, dead_lettered), `task_duration_seconds{kind}`
//! (histogram), `task_redeliveries_total{kind}`, `worker_busy`, `worker_tasks_in_flight`,
//! `queue_depth{kind}` (waiting), `queue_running{kind}`, `queue_delayed{kind}`, `queue_dead{kind}`,
//! `queue_oldest_age_seconds{kind}`, `s3_bytes_total{direction}` (get, put),
//! `s3_request_duration_seconds{op}` (histogram), `s3_errors_total{op}`,
//! `backend_errors_total{role}` (Redis/S3 errors a loop waited out), `jobs_redriven_total{kind}`,
//! `job_duration_seconds{kind}` (submit → done, histogram), `oldest_active_job_age_seconds{kind}`, `job_expected_seconds{kind}`,
//! `cache_bytes`, `cache_evictions_total`, `cache_oversize_total`, `gc_objects_deleted_total`,
//! on the planner `acks_durable` (1 when acknowledgements wait for Redis's fsynced AOF) and
//! `request_budget_bytes`, `request_budget_used_bytes`, `request_budget_refusals_total{reason}`
//! ([`crate::budget`]);
//! `tasks_total` outcomes also count `fatal`, `deadline` and `lease_lost`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use blobstore::{BlobError, BlobStore};
use bytes::Bytes;
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use queue::Queue;
use tokio::sync::watch;

/// Installs the process-wide Prometheus recorder once and returns its handle.
pub fn install() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let buckets = [0.001, 0.005, 0.02, 0.1, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 300.0];
            let recorder = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), &buckets)
                .expect("bucket list is not empty")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (tests running roles in one process);
            // then this handle renders nothing, which is harmless.
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// What `/readyz` answers: the process's roles are running, and the last look at its backends
/// ([`probe_backends`]) reached both.
#[derive(Default)]
pub struct Readiness {
    running: AtomicBool,
    /// Why the last probe failed; `None` after one that reached both (and before the first: a
    /// process starts only once it has reached them).
    unreachable: std::sync::Mutex<Option<String>>,
}

impl Readiness {
    /// The roles are running (true) or stopping (false).
    pub fn set_running(&self, running: bool) {
        self.running.store(running, Ordering::Relaxed);
    }

    /// `(ready, why)`: 200 or 503 and the reason.
    pub fn check(&self) -> (bool, String) {
        if !self.running.load(Ordering::Relaxed) {
            return (false, "starting or stopping".into());
        }
        match self.unreachable.lock().expect("readiness mutex").clone() {
            Some(why) => (false, why),
            None => (true, "ready".into()),
        }
    }
}

/// The object key [`probe_backends`] asks the store about (it never exists).
pub const PROBE_KEY: &str = "readyz-probe";

/// Every `every` until `stop`: asks Redis for the stats of `kind` and the object store whether
/// [`PROBE_KEY`] exists (each bounded by its client's timeout), and records in `readiness`
/// whether both answered. A process that cannot reach a backend keeps running (it retries
/// its loops with backoff) but reads as not ready, with the backend and error named.
pub async fn probe_backends(queue: Arc<dyn Queue>, blobs: Arc<dyn BlobStore>, kind: &'static str, readiness: Arc<Readiness>, every: Duration, mut stop: watch::Receiver<bool>) {
    while !*stop.borrow() {
        let mut why = Vec::new();
        if let Err(e) = queue.stats(kind).await {
            why.push(format!("Redis unreachable: {e}"));
        }
        if let Err(e) = blobs.exists(PROBE_KEY).await {
            why.push(format!("object store unreachable: {e}"));
        }
        let why = (!why.is_empty()).then(|| why.join("; "));
        {
            let mut last = readiness.unreachable.lock().expect("readiness mutex");
            if *last != why {
                match &why {
                    Some(w) => tracing::warn!(reason = %w, "not ready: a backend is unreachable"),
                    None => tracing::info!("backends reachable again: ready"),
                }
            }
            *last = why;
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => {}
        }
    }
}

/// `/metrics` (Prometheus text), `/healthz` (the process is up), `/readyz` (its roles are running
/// and its backends answered the last probe; else 503 and why).
pub fn router(handle: PrometheusHandle, readiness: Arc<Readiness>) -> axum::Router {
    use axum::http::StatusCode;
    use axum::routing::get;
    axum::Router::new()
        .route("/metrics", get(move || std::future::ready(handle.render())))
        .route("/healthz", get(|| std::future::ready("ok")))
        .route(
            "/readyz",
            get(move || {
                let (ok, why) = readiness.check();
                std::future::ready((if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE }, why))
            }),
        )
}

/// Samples queue depth per kind into gauges every `every`, until `stop`.
pub async fn sample_queues(queue: Arc<dyn Queue>, kinds: Vec<&'static str>, every: Duration, mut stop: watch::Receiver<bool>) {
    while !*stop.borrow() {
        for kind in &kinds {
            match queue.stats(kind).await {
                Ok(s) => {
                    let k = kind.to_string();
                    metrics::gauge!("prover_queue_depth", "kind" => k.clone()).set(s.pending as f64);
                    metrics::gauge!("prover_queue_running", "kind" => k.clone()).set(s.running as f64);
                    metrics::gauge!("prover_queue_delayed", "kind" => k.clone()).set(s.delayed as f64);
                    metrics::gauge!("prover_queue_dead", "kind" => k.clone()).set(s.dead as f64);
                    metrics::counter!("prover_tasks_dead_lettered_total", "kind" => k.clone()).absolute(s.dead_lettered);
                    metrics::gauge!("prover_queue_oldest_age_seconds", "kind" => k)
                        .set(s.oldest_age.map(|d| d.as_secs_f64()).unwrap_or(0.0));
                }
                Err(e) => tracing::warn!(kind, error = %e, "queue stats"),
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(every) => {}
            _ = stop.changed() => {}
        }
    }
}

/// A [`BlobStore`] that records bytes, latency and errors of every call, and fails a call that
/// takes longer than `timeout` (a backend error: the task is retried) instead of letting a
/// stuck connection hold a task forever.
pub struct MeteredStore {
    inner: Arc<dyn BlobStore>,
    timeout: Duration,
}

impl MeteredStore {
    pub fn new(inner: Arc<dyn BlobStore>, timeout: Duration) -> Self {
        Self { inner, timeout }
    }

    async fn timed<T>(&self, op: &'static str, f: impl std::future::Future<Output = Result<T, BlobError>>) -> Result<T, BlobError> {
        match tokio::time::timeout(self.timeout, f).await {
            Ok(r) => r,
            Err(_) => Err(BlobError::Backend(format!("{op}: no answer within {} s", self.timeout.as_secs_f64()))),
        }
    }
}

fn observe<T>(op: &'static str, started: Instant, r: &Result<T, BlobError>, bytes: usize) {
    metrics::histogram!("prover_s3_request_duration_seconds", "op" => op).record(started.elapsed().as_secs_f64());
    match r {
        Ok(_) if op == "get" || op == "put" => metrics::counter!("prover_s3_bytes_total", "direction" => op).increment(bytes as u64),
        Ok(_) if op == "get_range" => metrics::counter!("prover_s3_bytes_total", "direction" => "get").increment(bytes as u64),
        Ok(_) | Err(BlobError::NotFound(_)) => {}
        Err(_) => metrics::counter!("prover_s3_errors_total", "op" => op).increment(1),
    }
}

#[async_trait]
impl BlobStore for MeteredStore {
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        let (t, n) = (Instant::now(), data.len());
        let r = self.timed("put", self.inner.put(key, data)).await;
        observe("put", t, &r, n);
        r
    }
    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        let t = Instant::now();
        let r = self.timed("get", self.inner.get(key)).await;
        let n = r.as_ref().map(|b| b.len()).unwrap_or(0);
        observe("get", t, &r, n);
        r
    }
    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        let t = Instant::now();
        let r = self.timed("get_range", self.inner.get_range(key, start, len)).await;
        let n = r.as_ref().map(|b| b.len()).unwrap_or(0);
        observe("get_range", t, &r, n);
        r
    }
    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        let t = Instant::now();
        let r = self.timed("size", self.inner.size(key)).await;
        observe("size", t, &r, 0);
        r
    }
    async fn copy(&self, from: &str, to: &str) -> Result<(), BlobError> {
        let t = Instant::now();
        let r = self.timed("copy", self.inner.copy(from, to)).await;
        observe("copy", t, &r, 0);
        r
    }
    /// Each piece's request is timed and counted as a `put` (the multipart parts); opening
    /// the upload costs no request.
    async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn blobstore::Upload + 'a>, BlobError> {
        let inner = self.inner.upload(key).await?;
        Ok(Box::new(MeteredUpload { inner, timeout: self.timeout }))
    }
    async fn exists(&self, key: &str) -> Result<bool, BlobError> {
        let t = Instant::now();
        let r = self.timed("exists", self.inner.exists(key)).await;
        observe("exists", t, &r, 0);
        r
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let t = Instant::now();
        let r = self.timed("list", self.inner.list(prefix)).await;
        observe("list", t, &r, 0);
        r
    }
    async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, BlobError> {
        let t = Instant::now();
        let r = self.timed("list", self.inner.list_objects(prefix)).await;
        observe("list", t, &r, 0);
        r
    }
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let t = Instant::now();
        let r = self.timed("list", self.inner.list_dirs(prefix)).await;
        observe("list", t, &r, 0);
        r
    }
    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        let t = Instant::now();
        let r = self.timed("delete", self.inner.delete(key)).await;
        observe("delete", t, &r, 0);
        r
    }
    /// The store's own (S3: `DeleteObjects`, a thousand keys a call), under one timeout.
    async fn delete_prefix(&self, prefix: &str) -> Result<usize, BlobError> {
        let t = Instant::now();
        let r = self.timed("delete", self.inner.delete_prefix(prefix)).await;
        observe("delete", t, &r, 0);
        r
    }
}

struct MeteredUpload<'a> {
    inner: Box<dyn blobstore::Upload + 'a>,
    timeout: Duration,
}

async fn within<T>(timeout: Duration, op: &'static str, f: impl std::future::Future<Output = Result<T, BlobError>>) -> Result<T, BlobError> {
    match tokio::time::timeout(timeout, f).await {
        Ok(r) => r,
        Err(_) => Err(BlobError::Backend(format!("{op}: no answer within {} s", timeout.as_secs_f64()))),
    }
}

#[async_trait]
impl blobstore::Upload for MeteredUpload<'_> {
    async fn write(&mut self, data: Bytes) -> Result<(), BlobError> {
        let (t, n) = (Instant::now(), data.len());
        let r = within(self.timeout, "put", self.inner.write(data)).await;
        observe("put", t, &r, n);
        r
    }
    async fn append_copy(&mut self, from: &str, start: u64, len: u64) -> Result<(), BlobError> {
        let t = Instant::now();
        let r = within(self.timeout, "copy", self.inner.append_copy(from, start, len)).await;
        observe("copy", t, &r, 0);
        r
    }
    async fn finish(self: Box<Self>) -> Result<u64, BlobError> {
        let t = Instant::now();
        let r = within(self.timeout, "put", self.inner.finish()).await;
        observe("put", t, &r, 0);
        r
    }
    async fn abort(self: Box<Self>) -> Result<(), BlobError> {
        within(self.timeout, "delete", self.inner.abort()).await
    }
}

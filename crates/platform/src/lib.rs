//! The platform's job pipeline, written against three traits only — [`Queue`] (tasks with
//! leases), [`BlobStore`] (inputs, intermediate proofs, outputs) and [`JobStore`] (job records and
//! DAG state) — so that the same code runs embedded (in-process queue and job store, filesystem
//! blobs) and distributed (Redis and S3), with any number of processes per role.
//!
//! * **Job kinds** ([`kinds`]): one trait, one file per kind (`reckle.batch` and
//!   `reckle.update`, `pari.batch`, `hekaton.prove`, `noop`), found by name in a [`Registry`];
//!   each names its typed task kinds and the role that serves each, and owns what only it uses
//!   (Reckle's circuit sets, Pari's output check, the no-op latencies).
//! * **Planner** ([`planner`]): `SubmitJob` validates, stores the inputs, records the job and
//!   enqueues one durable `plan` task; the plan task (on an executor) dispatches the first tasks,
//!   at most once each, however often it runs.
//! * **Roles** ([`roles`]): worker, executor (with the reconciler) and aggregator loops; every
//!   task runs under a heartbeat and a per-kind deadline; fatal errors fail the job at once,
//!   retryable ones are retried until dead-lettered, which fails the job; backend errors are
//!   waited out, never fatal to a process.
//! * **Object layout** ([`layout`]): `jobs/<id>/{inputs,nodes,pari,hekaton,proof}/…`.
//! * **Memory** ([`cache`]): one byte-bounded cache of decoded objects per process.
//! * **Blocking work** ([`work`]): provers run off the runtime, stop when their task is
//!   abandoned, and hold back new claims until they have.
//! * **Retention** ([`gc`]): finished jobs' objects, and orphans, collected.
//!
//! Every job ends: done, failed with a reason (a fatal error, a dead-lettered task, tasks lost
//! with nothing left to run), or cancelled. Cancellation ([`Platform::cancel`]) moves the job to
//! its final state first (so no role dispatches for it any more), then purges its waiting tasks
//! and deletes its intermediate objects; a late report of a cancelled job deletes them again.

pub mod bounds;
pub mod budget;
pub mod cache;
pub mod error;
pub mod gc;
pub mod grpc;
pub mod grpc_auth;
pub mod batcher;
pub mod defaults;
pub mod kinds;
pub mod layout;
pub mod lifecycle;
pub mod limit;
pub mod limits;
pub mod manifest;
pub mod metrics;
pub mod planner;
pub mod reconcile;
pub mod roles;
pub mod service;
pub mod telemetry;
pub mod tls;
pub mod verify_gate;
pub mod work;

pub use error::PlatformError;
pub use kinds::circom::{CircomJobSpec, CircuitInfo, Curve as CircomCurve, JOB as JOB_PARI_CIRCOM, REGISTER_JOB as JOB_CIRCUIT_REGISTER};
pub use kinds::hekaton::{HekatonJobSpec, JOB as JOB_HEKATON};
pub use kinds::pari::{PariJobSpec, JOB as JOB_PARI_BATCH};
pub use kinds::reckle::{ReckleJobSpec, UpdateSpec, JOB_BATCH as JOB_RECKLE_BATCH, JOB_UPDATE as JOB_RECKLE_UPDATE, MAX_BATCH, MAX_CHANGES, MAX_LOG_N};
pub use kinds::reckle::Leaves;
pub use kinds::{JobKind, Submission, Registry, Served, TaskKind};
pub use layout::proof_prefix;
pub use lifecycle::Ending;
pub use planner::JobOutcome;
pub use reconcile::{ReconcileState, Reconciled};

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use blobstore::BlobStore;
use jobs::JobStore;
use queue::Queue;

/// How a platform process behaves (the service flags map onto this).
#[derive(Clone)]
pub struct PlatformConfig {
    /// The job kinds served.
    pub registry: Registry,
    /// Task deadlines by task kind, overriding each kind's default.
    pub deadlines: BTreeMap<String, Duration>,
    /// How often each executor's reconciler runs.
    pub reconcile_every: Duration,
    /// How long a job may sit with nothing queued, running or delayed before the reconciler
    /// acts.
    pub reconcile_grace: Duration,
    /// Jobs the reconciler reads per page (it pages through every active job each round), and
    /// ended jobs whose clean-up it finishes per round (longest ended first).
    pub reconcile_batch: u64,
    /// How long a stopping worker may spend finishing its task before it releases the lease.
    pub drain_timeout: Duration,
    /// How long a finished job's record, task state and idempotency key stay in the job store.
    pub retention: Duration,
    /// The same for a failed or cancelled job (the shorter of the two applies).
    pub failed_retention: Duration,
    /// How long an upload is kept: its charge against the tenant's upload quota expires this
    /// long after it was written, and `prover admin gc` deletes uploads older than this
    /// ([`Platform::gc_uploads`]). Jobs keep their own copies of their inputs.
    pub upload_retention: Duration,
    /// Budget of the process's cache of decoded objects (job trees and plans, keys).
    pub cache_bytes: u64,
    /// Bytes that the requests a planner is receiving and decoding may hold at once
    /// ([`budget`]).
    pub request_budget_bytes: u64,
    /// Budget of the Reckle circuit sets the process keeps built (estimated by
    /// `reckle::Circuits::heap_bytes`); least recently used sets are dropped first.
    pub circuit_bytes: u64,
    /// Expected job durations by job kind, overriding each kind's default
    /// ([`kinds::JobKind::expected_secs`]).
    pub expected: BTreeMap<String, Duration>,
    /// Tasks of one job a kind keeps queued or running at once (fair share across jobs; Pari
    /// prove tasks, Reckle buckets, Hekaton commit and prove tasks), recorded with each job at
    /// submission.
    pub job_window: u64,
    /// Tasks of one tenant's jobs, all together, a kind keeps queued or running at once (fair
    /// share across tenants): divided among the tenant's jobs that have not ended, at least 1
    /// and at most `job_window` each; the rule is in `kinds::Window`). 0: each job its own window.
    pub tenant_window: u64,
    /// Task loops of the executor role in one process (reports and plan tasks).
    pub executor_loops: usize,
    /// Task loops of the aggregator role in one process: bundle tasks that run at once can share
    /// a batch verification ([`batcher`]).
    pub aggregator_loops: usize,
    /// How long a registered circuit's bundle waits for bundles of other jobs under the same key
    /// to verify with ([`batcher`]); zero: each bundle on its own.
    pub batch_window: Duration,
    /// Quotas of each tenant (jobs submitted without a tenant, on an open API, have none).
    pub quotas: Quotas,
    /// This process's worker role serves `reckle.wrap` tasks: it can hold the wrap proving key
    /// resident (see [`kinds::reckle::wrap`]). Off: its workers never claim them.
    pub reckle_wrap_worker: bool,
    /// The digest (128 hex digits) of the wrap verifying key this platform makes and checks
    /// Reckle final proofs with; `None`: jobs asking for a final proof are refused.
    pub reckle_wrap_vk_digest: Option<String>,
}

/// Per-tenant limits, checked at submission (`RESOURCE_EXHAUSTED` naming the limit).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quotas {
    /// Jobs of one tenant queued or running at once (checked atomically with the record).
    pub max_active_jobs: Option<u64>,
    /// Tasks one job of a tenant may plan (its work budget).
    pub max_job_tasks: Option<u64>,
    /// Tasks a tenant's jobs may plan per clock hour (UTC; checked atomically with the record).
    pub max_tasks_per_hour: Option<u64>,
    /// Bytes of job records and task state a tenant's jobs hold in Redis, all together
    /// ([`jobs::Usage::Records`]; checked atomically with the record).
    pub max_record_bytes: Option<u64>,
    /// Bytes of a tenant's uploads, all together (checked when an upload starts).
    pub max_upload_bytes: Option<u64>,
    /// Bytes of a tenant's registered circuits (`.r1cs` and key pairs), all together: checked
    /// by the registration's setup before it writes the keys, against the value the planner
    /// recorded with the registration job.
    pub max_circuit_bytes: Option<u64>,
}

impl Quotas {
    /// No quota at all (jobs without a tenant, on an open API).
    pub const NONE: Quotas =
        Quotas { max_active_jobs: None, max_job_tasks: None, max_tasks_per_hour: None, max_record_bytes: None, max_upload_bytes: None, max_circuit_bytes: None };
}

impl Default for Quotas {
    fn default() -> Self {
        Self {
            max_active_jobs: Some(defaults::TENANT_MAX_ACTIVE_JOBS),
            max_job_tasks: Some(defaults::TENANT_MAX_JOB_TASKS),
            max_tasks_per_hour: Some(defaults::TENANT_MAX_TASKS_PER_HOUR),
            max_record_bytes: Some(defaults::TENANT_MAX_RECORD_BYTES),
            max_upload_bytes: Some(defaults::TENANT_MAX_UPLOAD_BYTES),
            max_circuit_bytes: Some(defaults::TENANT_MAX_CIRCUIT_BYTES),
        }
    }
}

impl Default for PlatformConfig {
    fn default() -> Self {
        Self {
            registry: Registry::builtin(),
            deadlines: BTreeMap::new(),
            reconcile_every: Duration::from_secs(defaults::RECONCILE_EVERY_SECS),
            reconcile_grace: Duration::from_secs(defaults::RECONCILE_GRACE_SECS),
            reconcile_batch: 1000,
            drain_timeout: Duration::from_secs(defaults::DRAIN_TIMEOUT_SECS),
            retention: Duration::from_secs(defaults::RETENTION_SECS),
            failed_retention: Duration::from_secs(defaults::FAILED_RETENTION_SECS),
            upload_retention: Duration::from_secs(defaults::UPLOAD_RETENTION_SECS),
            cache_bytes: defaults::CACHE_BYTES,
            request_budget_bytes: defaults::REQUEST_BUDGET_BYTES,
            circuit_bytes: defaults::CIRCUIT_BYTES,
            expected: BTreeMap::new(),
            job_window: defaults::JOB_WINDOW,
            tenant_window: defaults::TENANT_WINDOW,
            executor_loops: defaults::EXECUTOR_LOOPS,
            aggregator_loops: defaults::AGGREGATOR_LOOPS,
            batch_window: Duration::from_millis(defaults::BATCH_WINDOW_MS),
            quotas: Quotas::default(),
            reckle_wrap_worker: defaults::RECKLE_WRAP_WORKER,
            reckle_wrap_vk_digest: None,
        }
    }
}

/// Shared state of one process running any of the roles.
pub struct Platform {
    queue: Arc<dyn Queue>,
    blobs: Arc<dyn BlobStore>,
    jobs: Arc<dyn JobStore>,
    config: PlatformConfig,
    drain_timeout: Mutex<Duration>,
    /// Reckle circuit data per `(ℓ, q)` ([`Platform::circuits`]).
    pub(crate) circuits: kinds::reckle::CircuitSets,
    /// Decoded objects (Reckle trees and plans, Hekaton keys), bounded by bytes.
    cache: cache::ObjectCache,
    /// Batch verification across jobs (the aggregator's bundles of registered circuits).
    batcher: batcher::VerifyBatcher,
    /// Blocking work started by this process's tasks ([`work`]).
    work: Arc<work::Work>,
    /// The Reckle wrap: the proving key where loaded, verifying keys and circuit ids.
    pub(crate) wrap: kinds::reckle::wrap::WrapState,
}

impl Platform {
    /// A platform with the default configuration.
    pub fn new(queue: Arc<dyn Queue>, blobs: Arc<dyn BlobStore>, jobs: Arc<dyn JobStore>) -> Arc<Self> {
        Self::with_config(queue, blobs, jobs, PlatformConfig::default())
    }

    pub fn with_config(queue: Arc<dyn Queue>, blobs: Arc<dyn BlobStore>, jobs: Arc<dyn JobStore>, config: PlatformConfig) -> Arc<Self> {
        Arc::new(Self {
            queue,
            blobs,
            jobs,
            drain_timeout: Mutex::new(config.drain_timeout),
            circuits: kinds::reckle::CircuitSets::default(),
            cache: cache::ObjectCache::new(config.cache_bytes),
            batcher: batcher::VerifyBatcher::new(config.batch_window),
            work: Arc::default(),
            wrap: Default::default(),
            config,
        })
    }

    /// How long a stopping worker may spend finishing its task before it releases the lease.
    pub fn set_drain_timeout(&self, d: Duration) {
        *self.drain_timeout.lock().expect("mutex") = d;
    }

    pub(crate) fn drain_timeout(&self) -> Duration {
        *self.drain_timeout.lock().expect("mutex")
    }

    pub fn queue(&self) -> &Arc<dyn Queue> {
        &self.queue
    }
    pub fn blobs(&self) -> &Arc<dyn BlobStore> {
        &self.blobs
    }
    pub fn job_store(&self) -> &Arc<dyn JobStore> {
        &self.jobs
    }
    pub fn registry(&self) -> &Registry {
        &self.config.registry
    }
    pub fn config(&self) -> &PlatformConfig {
        &self.config
    }
    /// The process's batch verifier ([`batcher`]).
    pub fn batcher(&self) -> &batcher::VerifyBatcher {
        &self.batcher
    }

    /// The blocking work this process's tasks started, abandoned tasks' included ([`work`]).
    pub fn work(&self) -> &work::Work {
        &self.work
    }

    /// The process's byte-bounded cache of decoded objects.
    pub fn cache(&self) -> &cache::ObjectCache {
        &self.cache
    }

    /// Every task kind served (queue names), for purges and queue metrics.
    pub fn task_kinds(&self) -> Vec<&'static str> {
        self.registry().task_kinds().iter().map(|t| t.name).collect()
    }
}

//! The platform's job pipeline, written against three traits only — [`Queue`] (tasks with
//! leases), [`BlobStore`] (inputs, intermediate proofs, outputs) and [`JobStore`] (job records and
//! DAG state) — so that the same code runs embedded (in-process queue and job store, filesystem
//! blobs) and distributed (Redis and S3), with any number of processes per role.
//!
//! * **Job kinds** ([`kinds`]): one trait, one file per kind (`reckle.batch` and
//!   `reckle.update`, `pari.batch`, `noop`), found by name in a [`Registry`]; each names its
//!   typed task kinds and the role that serves each.
//! * **Planner** ([`planner`]): `SubmitJob` validates, stores the inputs, records the job and
//!   enqueues one durable `plan` task; the plan task (on an executor) dispatches the first tasks,
//!   at most once each, however often it runs.
//! * **Roles** ([`roles`]): worker, executor (with the reconciler) and aggregator loops; every
//!   task runs under a heartbeat and a per-kind deadline; fatal errors fail the job at once,
//!   retryable ones are retried until dead-lettered, which fails the job; backend errors are
//!   waited out, never fatal to a process.
//! * **Object layout** ([`layout`]): `jobs/<id>/{inputs,nodes,pari,proof}/…`.
//!
//! Every job ends: done, failed with a reason (a fatal error, a dead-lettered task, tasks lost
//! with nothing left to run), or cancelled. Cancellation ([`Platform::cancel`]) moves the job to
//! its final state first (so no role dispatches for it any more), then purges its waiting tasks
//! and deletes its intermediate objects; a late report of a cancelled job deletes them again.

pub mod cache;
pub mod error;
pub mod gc;
pub mod grpc;
pub mod kinds;
pub mod layout;
pub mod metrics;
pub mod planner;
pub mod roles;
pub mod service;

pub use error::PlatformError;
pub use kinds::hekaton::{HekatonJobSpec, JOB as JOB_HEKATON};
pub use kinds::pari::{PariJobSpec, JOB as JOB_PARI_BATCH};
pub use kinds::reckle::{ReckleJobSpec, UpdateSpec, JOB_BATCH as JOB_RECKLE_BATCH, JOB_UPDATE as JOB_RECKLE_UPDATE, MAX_BATCH, MAX_CHANGES, MAX_LOG_N};
pub use kinds::{JobKind, JobRequest, Leaves, Registry, Served, TaskKind};
pub use layout::proof_prefix;
pub use planner::JobOutcome;
pub use roles::{ReconcileState, Reconciled};

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use blobstore::BlobStore;
use jobs::JobStore;
use queue::Queue;
use reckle::{Circuits, Params};

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
    /// Jobs the reconciler looks at per round (oldest first).
    pub reconcile_batch: u64,
    /// How long a stopping worker may spend finishing its task before it releases the lease.
    pub drain_timeout: Duration,
    /// How long a finished job's record, task state and idempotency key stay in the job store.
    pub retention: Duration,
    /// Budget of the process's cache of decoded objects (job trees and plans, keys).
    pub cache_bytes: u64,
    /// Expected job durations by job kind, overriding each kind's default
    /// ([`kinds::JobKind::expected_secs`]).
    pub expected: BTreeMap<String, Duration>,
}

impl Default for PlatformConfig {
    fn default() -> Self {
        Self {
            registry: Registry::builtin(),
            deadlines: BTreeMap::new(),
            reconcile_every: Duration::from_secs(2),
            reconcile_grace: Duration::from_secs(60),
            reconcile_batch: 1000,
            drain_timeout: Duration::from_secs(300),
            retention: Duration::from_secs(7 * 24 * 3600),
            cache_bytes: cache::DEFAULT_CACHE_BYTES,
            expected: BTreeMap::new(),
        }
    }
}

/// Reckle circuit sets `(ℓ, q)` a process keeps built.
const CIRCUIT_SETS_KEPT: usize = 4;

/// Shared state of one process running any of the roles.
pub struct Platform {
    queue: Arc<dyn Queue>,
    blobs: Arc<dyn BlobStore>,
    jobs: Arc<dyn JobStore>,
    config: PlatformConfig,
    drain_timeout: Mutex<Duration>,
    circuits: Arc<Mutex<HashMap<Params, Arc<Circuits>>>>,
    building: Arc<tokio::sync::Mutex<()>>,
    /// Decoded objects (Reckle trees and plans, Hekaton keys), bounded by bytes.
    cache: cache::ObjectCache,
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
            circuits: Arc::new(Mutex::new(HashMap::new())),
            building: Arc::new(tokio::sync::Mutex::new(())),
            cache: cache::ObjectCache::new(config.cache_bytes),
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
    /// The process's byte-bounded cache of decoded objects.
    pub fn cache(&self) -> &cache::ObjectCache {
        &self.cache
    }

    /// Every task kind served (queue names), for purges and queue metrics.
    pub fn task_kinds(&self) -> Vec<&'static str> {
        self.registry().task_kinds().iter().map(|t| t.name).collect()
    }

    /// `(enqueued, reported)` times in µs of the no-op tasks this process's executors have seen
    /// since the last call (orchestration benchmarks).
    pub fn take_noop_latencies() -> Vec<(u64, u64)> {
        kinds::noop::take_latencies()
    }

    /// Verifies a Pari job's published bundles. `Err(reason)` if any fails.
    pub async fn verify_pari_outputs(&self, job: &str, expected_vk: Option<&::pari::KeyDigest>) -> Result<String, String> {
        kinds::pari::verify_outputs(self, job, expected_vk).await
    }

    /// Circuit data per `(ℓ, q)`, built once per process. The build runs detached: a task
    /// abandoned while it waits (deadline, lost lease) does not waste it.
    pub async fn circuits(&self, params: Params) -> Result<Arc<Circuits>, PlatformError> {
        if let Some(c) = self.circuits.lock().expect("mutex").get(&params) {
            return Ok(c.clone());
        }
        let (cache, building) = (self.circuits.clone(), self.building.clone());
        tokio::spawn(async move {
            // One build at a time: concurrent tasks wait for the first instead of building again.
            let _building = building.lock_owned().await;
            if let Some(c) = cache.lock().expect("mutex").get(&params) {
                return Ok(c.clone());
            }
            let built = Arc::new(tokio::task::spawn_blocking(move || Circuits::build(params)).await.map_err(error::corrupt)??);
            let mut c = cache.lock().expect("mutex");
            // Circuit data cannot be sized cheaply: a process keeps a few parameter sets and
            // drops one of them (any) to make room.
            if c.len() >= CIRCUIT_SETS_KEPT {
                let victim = *c.keys().next().expect("not empty");
                c.remove(&victim);
            }
            c.entry(params).or_insert(built.clone());
            Ok(built)
        })
        .await
        .map_err(error::corrupt)?
    }
}

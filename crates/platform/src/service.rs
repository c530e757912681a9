//! The service runtime shared by the binaries in `services/` and `prover serve`: configuration
//! (flags and environment variables, for Kubernetes), backend connection, the roles, the gRPC
//! server (planner), the HTTP side (metrics and probes), and graceful shutdown.
//!
//! On SIGTERM or Ctrl-C a process stops claiming, lets each role finish the task in hand, and
//! exits; a task it could not finish is redelivered after the lease's visibility timeout.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use blobstore::{BlobStore, FsStore, S3Config, S3Store};
use jobs::{JobStore, MemoryJobStore, RedisJobStore};
use queue::{MemoryQueue, Queue, QueueConfig, RedisQueue};
use tokio::sync::watch;

use crate::kinds::Served;
use crate::{grpc, metrics, Platform, PlatformConfig};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    Planner,
    Executor,
    Worker,
    Aggregator,
}

impl Role {
    /// The role's name on the command line (`planner`, …).
    pub fn name(self) -> &'static str {
        match self {
            Role::Planner => "planner",
            Role::Executor => "executor",
            Role::Worker => "worker",
            Role::Aggregator => "aggregator",
        }
    }
}

/// Backend and listener settings. Every flag has an environment variable; a switch's takes
/// true/false, 1/0, yes/no or on/off.
#[derive(Clone, Debug, clap::Args)]
pub struct ServiceConfig {
    /// Redis and S3.
    #[command(flatten)]
    pub backend: BackendArgs,
    /// gRPC listen address (planner and embedded mode).
    #[arg(help_heading = "Planner API", long, env = "PROVER_LISTEN", default_value = "0.0.0.0:50051")]
    pub listen: SocketAddr,
    /// Require an API token on every gRPC call (planner role).
    ///
    /// Require an API token on every gRPC call (planner role; health and reflection stay
    /// open). On by default; the flag turns it on where it is off by default: an embedded
    /// server (no Redis) listening on a loopback address, which then makes one token for
    /// tenant `local` at start and prints it once on stderr. Tokens live in Redis (`prover
    /// admin token create --tenant NAME`) and in --tokens-dir.
    #[arg(help_heading = "Planner API", long, env = "PROVER_REQUIRE_AUTH", conflicts_with = "no_auth", value_parser = clap::builder::BoolishValueParser::new())]
    pub require_auth: bool,
    /// Serve the gRPC API without authentication (planner role).
    ///
    /// Serve the gRPC API without authentication (planner role): anyone who can reach the port
    /// can submit, list, fetch and cancel every job. Only where the network itself is the
    /// boundary; logged as a warning at start.
    #[arg(help_heading = "Planner API", long, env = "PROVER_NO_AUTH", value_parser = clap::builder::BoolishValueParser::new())]
    pub no_auth: bool,
    /// A directory of API tokens, one file per tenant (planner role).
    ///
    /// A directory of API tokens besides Redis (planner role): each file is named after a
    /// tenant and holds its tokens, one per line (a mounted Kubernetes Secret: the chart's
    /// operator token). Re-read at most once a second, so a token removed there stops working.
    #[arg(help_heading = "Planner API", long, env = "PROVER_TOKENS_DIR")]
    pub tokens_dir: Option<PathBuf>,
    /// The tenant that may act for others through `x-prover-tenant` (the operator's).
    ///
    /// The one tenant that may act for a namespace's tenant, `ns-<namespace>`, by naming the
    /// namespace in the `x-prover-tenant` header (planner role): the operator, so that each
    /// namespace's ProofJobs are a tenant of their own, apart from the API's tenants. Unset: no
    /// tenant may. Whoever holds this tenant's token can act as any namespace's tenant: give it
    /// to the operator alone.
    #[arg(help_heading = "Planner API", long, env = "PROVER_DELEGATING_TENANT")]
    pub delegating_tenant: Option<String>,
    /// Bytes the requests being received and decoded may hold at once (planner role).
    ///
    /// Bytes that the requests being received and decoded may hold at once, all callers
    /// together (planner role). Each message reserves 37 times its size (its bytes and the most
    /// its decoding can take; an upload chunk three times its size) before it is read, and each upload
    /// 16 MiB for its buffered part. One tenant's calls hold at most three quarters of it, and
    /// the last sixteenth is kept for messages of at most 64 KiB; a call that sends nothing for
    /// 30 s while holding some fails. A call the budget cannot cover is answered UNAVAILABLE
    /// (retry) without being read, and a message over a tenant's share RESOURCE_EXHAUSTED.
    /// Count it in the planner's memory.
    #[arg(help_heading = "Planner API", long, env = "PROVER_REQUEST_BUDGET_BYTES", default_value_t = crate::defaults::REQUEST_BUDGET_BYTES)]
    pub request_budget_bytes: u64,
    /// PEM certificate chain for the gRPC port (with --tls-key: TLS).
    ///
    /// PEM certificate chain for the gRPC port (planner role): with --tls-key, the API is
    /// served over TLS only. Re-read when the files change (a renewal needs no restart).
    #[arg(help_heading = "Planner API", long, env = "PROVER_TLS_CERT", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(help_heading = "Planner API", long, env = "PROVER_TLS_KEY", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Tasks of one job queued or running at once.
    ///
    /// Prove tasks of one Pari job, first tasks (buckets) of one Reckle job, or commit or
    /// prove tasks of one Hekaton job, queued or running at once (fair share: a large job holds at most this many places, so a small one
    /// submitted later is not starved behind it). Keep it above the number of workers; recorded
    /// with each job at submission (planner role).
    #[arg(help_heading = "Planner", long, env = "PROVER_JOB_WINDOW", default_value_t = crate::defaults::JOB_WINDOW)]
    pub job_window: u64,
    /// Quota: jobs one tenant may have queued or running at once.
    ///
    /// Jobs one tenant may have queued or running at once (planner role; 0: no limit). Jobs
    /// submitted without a tenant (an API without --require-auth) are not limited.
    #[arg(help_heading = "Planner", long, env = "PROVER_TENANT_MAX_ACTIVE_JOBS", default_value_t = crate::defaults::TENANT_MAX_ACTIVE_JOBS)]
    pub tenant_max_active_jobs: u64,
    /// Tasks one job of a tenant may plan (planner role; 0: no limit).
    #[arg(help_heading = "Planner", long, env = "PROVER_TENANT_MAX_JOB_TASKS", default_value_t = crate::defaults::TENANT_MAX_JOB_TASKS)]
    pub tenant_max_job_tasks: u64,
    /// Tasks a tenant's jobs may plan per clock hour, UTC (planner role; 0: no limit).
    #[arg(help_heading = "Planner", long, env = "PROVER_TENANT_MAX_TASKS_PER_HOUR", default_value_t = crate::defaults::TENANT_MAX_TASKS_PER_HOUR)]
    pub tenant_max_tasks_per_hour: u64,
    /// Quota: bytes of job records and task state a tenant may hold in Redis.
    ///
    /// Bytes of job records and task state a tenant's jobs may hold in Redis, all together: a
    /// record is charged 4 KiB plus its spec until it expires, and 160 bytes per planned task
    /// until an hour after its job ends (planner role; 0: no limit).
    #[arg(help_heading = "Planner", long, env = "PROVER_TENANT_MAX_RECORD_BYTES", default_value_t = crate::defaults::TENANT_MAX_RECORD_BYTES)]
    pub tenant_max_record_bytes: u64,
    /// Bytes of uploads a tenant may keep, all together (planner role; 0: no limit).
    #[arg(help_heading = "Planner", long, env = "PROVER_TENANT_MAX_UPLOAD_BYTES", default_value_t = crate::defaults::TENANT_MAX_UPLOAD_BYTES)]
    pub tenant_max_upload_bytes: u64,
    /// Quota: bytes of registered circuits a tenant may keep.
    ///
    /// Bytes of registered circuits (.r1cs and key pairs) a tenant may keep, all together:
    /// recorded with each registration, checked by its setup before the keys are written
    /// (planner role; 0: no limit).
    #[arg(help_heading = "Planner", long, env = "PROVER_TENANT_MAX_CIRCUIT_BYTES", default_value_t = crate::defaults::TENANT_MAX_CIRCUIT_BYTES)]
    pub tenant_max_circuit_bytes: u64,
    /// Name of this process in leases and logs (default: host name and pid).
    #[arg(help_heading = "Roles", long, env = "PROVER_NAME")]
    pub name: Option<String>,
    /// Task loops of the worker role in this process.
    #[arg(help_heading = "Roles", long, env = "PROVER_WORKER_CONCURRENCY", default_value_t = crate::defaults::WORKER_CONCURRENCY)]
    pub concurrency: usize,
    /// Seconds a lease lasts before its task is redelivered to another worker.
    #[arg(help_heading = "Roles", long, env = "PROVER_VISIBILITY_TIMEOUT_SECS", default_value_t = crate::defaults::VISIBILITY_TIMEOUT_SECS)]
    pub visibility_timeout_secs: u64,
    /// Attempts per task before it is dead-lettered and its job fails.
    #[arg(help_heading = "Roles", long, env = "PROVER_MAX_ATTEMPTS", default_value_t = crate::defaults::MAX_ATTEMPTS)]
    pub max_attempts: u32,
    /// Task kinds the worker role serves (comma list; default all it knows).
    #[arg(help_heading = "Roles", long, env = "PROVER_WORKER_KINDS", value_delimiter = ',')]
    pub kinds: Vec<String>,
    /// Serve `reckle.wrap` tasks (a large-memory worker).
    ///
    /// Serve `reckle.wrap` tasks (worker role): the wrap of a Reckle job's root proof into its
    /// final Pari proof on BN254. The wrap proving key stays resident once loaded (about 4 GB
    /// decoded from a 2.75 GB object; a wrap worker peaked at 11 GB: see docs/job-kinds.md), so
    /// turn it on only for workers with 12 GiB or more, and raise --circuit-bytes by ~4 GB
    /// there (the key is counted in it). Other workers never claim
    /// wrap tasks; with none running, a final proof waits (the `reckle.wrap` queue's depth).
    #[arg(help_heading = "Roles", long, env = "PROVER_RECKLE_WRAP_WORKER", value_parser = clap::builder::BoolishValueParser::new())]
    pub reckle_wrap_worker: bool,
    /// The pinned digest of the Reckle wrap's verifying key.
    ///
    /// The digest (128 hex digits) of the Reckle wrap verifying key this platform makes and
    /// checks final proofs with (every role): imported first with `prover reckle wrap-key
    /// import`. Unset: jobs asking for a final proof are refused (FAILED_PRECONDITION). The key
    /// of the public test seed is refused.
    #[arg(help_heading = "Roles", long, env = "PROVER_RECKLE_WRAP_VK_DIGEST")]
    pub reckle_wrap_vk_digest: Option<String>,
    /// On SIGTERM, seconds a task in hand may take to finish before its lease is released.
    #[arg(help_heading = "Roles", long, env = "PROVER_DRAIN_TIMEOUT_SECS", default_value_t = crate::defaults::DRAIN_TIMEOUT_SECS)]
    pub drain_timeout_secs: u64,
    /// Task deadlines overriding the kinds' defaults, as KIND=SECONDS.
    ///
    /// Task deadlines overriding the kinds' defaults, as `KIND=SECONDS` (comma list): a task
    /// running longer is abandoned and retried.
    #[arg(help_heading = "Roles", long = "task-deadline", env = "PROVER_TASK_DEADLINES", value_delimiter = ',')]
    pub task_deadlines: Vec<String>,
    /// Tasks of one tenant's jobs, all together, queued or running at once.
    ///
    /// Tasks of one tenant's jobs, all together, queued or running at once (fair share across
    /// tenants: divided among the tenant's jobs that have not ended, at least 1 and at most
    /// --job-window each, so a tenant with many jobs holds no more places in the queue than a
    /// tenant with one). Keep it above the number of workers; 0: each job its own window
    /// (executor role).
    #[arg(help_heading = "Roles", long, env = "PROVER_TENANT_WINDOW", default_value_t = crate::defaults::TENANT_WINDOW)]
    pub tenant_window: u64,
    /// Task loops of the executor role in this process (plan tasks and reports).
    #[arg(help_heading = "Roles", long, env = "PROVER_EXECUTOR_LOOPS", default_value_t = crate::defaults::EXECUTOR_LOOPS)]
    pub executor_loops: usize,
    /// Task loops of the aggregator role in this process.
    ///
    /// Task loops of the aggregator role in this process: bundle tasks running at once share
    /// batch verifications.
    #[arg(help_heading = "Roles", long, env = "PROVER_AGGREGATOR_LOOPS", default_value_t = crate::defaults::AGGREGATOR_LOOPS)]
    pub aggregator_loops: usize,
    /// Milliseconds the aggregator waits to batch-verify bundles under one key.
    ///
    /// How long (ms) the aggregator holds a registered circuit's bundle for bundles of other jobs
    /// under the same key, to verify them all in one batch (0: each on its own).
    #[arg(help_heading = "Roles", long, env = "PROVER_BATCH_WINDOW_MS", default_value_t = crate::defaults::BATCH_WINDOW_MS)]
    pub batch_window_ms: u64,
    /// Seconds between reconciler rounds (executor role).
    #[arg(help_heading = "Roles", long, env = "PROVER_RECONCILE_EVERY_SECS", default_value_t = crate::defaults::RECONCILE_EVERY_SECS)]
    pub reconcile_every_secs: u64,
    /// Seconds an idle job waits before the reconciler re-drives or fails it.
    ///
    /// Seconds a job may sit with nothing queued, running or delayed before the reconciler
    /// re-drives or fails it.
    #[arg(help_heading = "Roles", long, env = "PROVER_RECONCILE_GRACE_SECS", default_value_t = crate::defaults::RECONCILE_GRACE_SECS)]
    pub reconcile_grace_secs: u64,
    /// Seconds a finished job's record and task state stay in Redis (listable, fetchable).
    #[arg(help_heading = "Roles", long, env = "PROVER_RETENTION_SECS", default_value_t = crate::defaults::RETENTION_SECS)]
    pub retention_secs: u64,
    /// Seconds a failed or cancelled job stays in Redis.
    ///
    /// Seconds a failed or cancelled job's record and task state stay in Redis (at most
    /// --retention-secs).
    #[arg(help_heading = "Roles", long, env = "PROVER_FAILED_RETENTION_SECS", default_value_t = crate::defaults::FAILED_RETENTION_SECS)]
    pub failed_retention_secs: u64,
    /// Seconds an upload is kept (and charged to its tenant).
    ///
    /// Seconds an upload is kept: its charge against the tenant's upload quota expires this
    /// long after it was written (planner role); `prover admin gc --uploads-older-than`
    /// deletes uploads older than this.
    #[arg(help_heading = "Roles", long, env = "PROVER_UPLOAD_RETENTION_SECS", default_value_t = crate::defaults::UPLOAD_RETENTION_SECS)]
    pub upload_retention_secs: u64,
    /// Bytes of decoded objects a process keeps between tasks.
    ///
    /// Bytes of decoded objects (Reckle job trees and plans, Hekaton keys) a process keeps
    /// between tasks, least recently used evicted first; a tree larger than this is rebuilt by
    /// each task that needs it. Set it well under the container's memory limit.
    #[arg(help_heading = "Roles", long, env = "PROVER_CACHE_BYTES", default_value_t = crate::defaults::CACHE_BYTES)]
    pub cache_bytes: u64,
    /// Bytes of Reckle circuit sets a worker or aggregator keeps built.
    ///
    /// Bytes of Reckle circuit sets (about 90 MB per tree level) a worker or aggregator keeps
    /// built, least recently used dropped first; a set needed again is rebuilt (seconds to
    /// minutes). Warm-up builds only what fits. Set it under the container's memory limit,
    /// beside `--cache-bytes`.
    #[arg(help_heading = "Roles", long, env = "PROVER_CIRCUIT_BYTES", default_value_t = crate::defaults::CIRCUIT_BYTES)]
    pub circuit_bytes: u64,
    /// HTTP listen address for /metrics, /healthz and /readyz.
    ///
    /// Unset: `0.0.0.0:9090` for a role; with `--embedded`, `--listen`'s address on a free port
    /// (logged at start as "metrics and probes"), so a loopback server opens nothing on other
    /// interfaces and two can run on one machine.
    #[arg(help_heading = "Observability", long, env = "PROVER_METRICS_LISTEN")]
    pub metrics_listen: Option<SocketAddr>,
    /// Expected job durations for the overdue alert, as KIND=SECONDS.
    ///
    /// Expected job durations overriding the kinds' defaults, as `KIND=SECONDS` (comma list;
    /// e.g. `reckle.batch=7200`): the ProverJobOverdue alert fires for a job older than this.
    #[arg(help_heading = "Observability", long = "job-expected", env = "PROVER_JOB_EXPECTED", value_delimiter = ',')]
    pub job_expected: Vec<String>,
    /// OpenTelemetry collector for traces, over OTLP/gRPC (off when unset).
    ///
    /// OpenTelemetry collector to export traces to, over OTLP/gRPC (`http://collector:4317`):
    /// one trace per job, a span per task. Off when unset. `OTEL_SERVICE_NAME` and
    /// `OTEL_RESOURCE_ATTRIBUTES` are honoured; `OTEL_BSP_SCHEDULE_DELAY` (ms) sets how often
    /// spans are sent.
    #[arg(help_heading = "Observability", long, env = "OTEL_EXPORTER_OTLP_ENDPOINT")]
    pub otlp_endpoint: Option<String>,
    /// Log format.
    #[arg(help_heading = "Observability", long, env = "PROVER_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
}

/// Where the platform's state lives: Redis (queues, job state) and S3 (every object). The
/// flags `prover admin gc` takes as well.
#[derive(Clone, Debug, clap::Args)]
#[command(next_help_heading = "Backends")]
pub struct BackendArgs {
    /// Redis URL (queue and job state); the server must use `maxmemory-policy noeviction`.
    #[arg(long, env = "PROVER_REDIS_URL")]
    pub redis: Option<String>,
    /// S3 endpoint URL (path-style addressing, e.g. MinIO).
    #[arg(long, env = "PROVER_S3_ENDPOINT")]
    pub s3_endpoint: Option<String>,
    /// S3 bucket of every object (inputs, task outputs, proofs, keys).
    #[arg(long, env = "PROVER_S3_BUCKET", default_value = "prover")]
    pub bucket: String,
    /// S3 region (signing; MinIO accepts the default).
    #[arg(long, env = "PROVER_S3_REGION", default_value = "us-east-1")]
    pub s3_region: String,
    /// Seconds one object-store operation may take before it fails (and is retried).
    #[arg(long, env = "PROVER_S3_TIMEOUT_SECS", default_value_t = crate::defaults::S3_TIMEOUT_SECS)]
    pub s3_timeout_secs: u64,
    /// Seconds one Redis command may take to answer.
    ///
    /// Seconds one Redis command may take to answer (and one connection attempt to succeed)
    /// before it fails; the queue and the job store each read large replies (listings, whole
    /// streams, dead letters) on a connection of their own. Keep it at several seconds: a reply
    /// cut short leaves the write it answered ambiguous, and Redis pauses for AOF fsyncs and forks.
    #[arg(long, env = "PROVER_REDIS_TIMEOUT_SECS", default_value_t = crate::defaults::REDIS_TIMEOUT_SECS)]
    pub redis_timeout_secs: u64,
    /// Accept a Redis that refuses `CONFIG GET` without checking its eviction policy.
    ///
    /// Accept a Redis that refuses `CONFIG GET` (managed Redis often blocks CONFIG) without
    /// checking that it never evicts keys: only for a server known to run `noeviction`.
    #[arg(long, env = "PROVER_ASSUME_NOEVICTION", value_parser = clap::builder::BoolishValueParser::new())]
    pub assume_noeviction: bool,
    /// When a submit or a cancel is acknowledged: none, auto or aof.
    ///
    /// When a submit or a cancel is acknowledged: `aof` only once Redis has it in its AOF on
    /// disk (`WAITAOF` on Redis 7.2+, or `appendfsync always`), refusing to start on a Redis
    /// that cannot (AOF off, `appendfsync no`, `everysec` without `WAITAOF`); `auto` waits where
    /// the server can and warns at start where it cannot; `none` acknowledges once Redis
    /// answers. Under `everysec` each acknowledgement waits for the next fsync (up to ~1 s).
    #[arg(long, env = "PROVER_REDIS_DURABILITY", default_value = "auto", value_parser = ["none", "auto", "aof"])]
    pub redis_durability: String,
    /// Replicas that must have an acknowledged write fsynced.
    ///
    /// Replicas that must have a submit, a cancel or a token fsynced to their own AOF before it
    /// is acknowledged (`WAITAOF`'s replica count: Redis 7.2+, replicas with appendonly yes), so
    /// it survives the loss of the primary's machine; a write they do not confirm in time is
    /// not acknowledged (the client retries with its idempotency key). 0: the primary only.
    #[arg(long, env = "PROVER_REDIS_ACK_REPLICAS", default_value_t = 0)]
    pub redis_ack_replicas: u32,
    /// Seconds to wait at start for Redis and S3 to answer.
    ///
    /// Seconds to wait at start for Redis to answer and the S3 endpoint to accept connections
    /// (a backend restarting, or started after this process), trying again with a growing delay
    /// and logging each try; 0 tries once. A wrong password or URL fails at once.
    #[arg(long, env = "PROVER_BACKEND_WAIT_SECS", default_value_t = crate::defaults::BACKEND_WAIT_SECS)]
    pub backend_wait_secs: u64,
}

/// `docs/configuration.md`: every flag of [`ServiceConfig`] (the settings of `prover serve`
/// and the service binaries) with its environment variable, default and help, generated from
/// the flags themselves (`prover configuration` prints it; a test keeps the file in step).
pub fn configuration_markdown() -> String {
    let cmd = <ServiceConfig as clap::Args>::augment_args(clap::Command::new("prover serve"));
    let cell = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ").replace('|', "\\|");
    let mut out = String::from(
        "# Configuration\n\n\
         Generated from the flags by `prover configuration` (do not edit: \
         `crates/platform/tests/registry_lists.rs` checks this file). Every service (`prover serve \
         ROLE…`, `services/` binaries) takes these flags, each also as its environment variable; a \
         switch's variable takes true/false, 1/0, yes/no or on/off. The defaults live in \
         `crates/platform/src/defaults.rs`, which `PlatformConfig::default()` also returns. The Helm \
         chart sets them through `config.*` values and `config.extraEnv`. `prover admin gc` takes \
         the Backends group only.\n",
    );
    // One table per flag group, in the order `--help` shows them.
    let mut groups: Vec<(String, Vec<&clap::Arg>)> = Vec::new();
    for arg in cmd.get_arguments() {
        let Some(long) = arg.get_long() else { continue };
        if long == "help" || long == "version" {
            continue;
        }
        let heading = arg.get_help_heading().unwrap_or("Other").to_string();
        match groups.iter_mut().find(|(h, _)| *h == heading) {
            Some((_, args)) => args.push(arg),
            None => groups.push((heading, vec![arg])),
        }
    }
    for (heading, args) in groups {
        out += &format!("\n## {heading}\n\n| flag | environment | default | what it does |\n|---|---|---|---|\n");
        for arg in args {
            let long = arg.get_long().expect("filtered");
            let env = arg.get_env().map(|e| format!("`{}`", e.to_string_lossy())).unwrap_or_default();
            let default: Vec<String> = arg.get_default_values().iter().map(|v| v.to_string_lossy().into_owned()).collect();
            let default = if default.is_empty() { String::new() } else { format!("`{}`", default.join(",")) };
            // The long text without its one-line summary (the summary is what `--help` shows).
            let help = match arg.get_long_help() {
                Some(long) => {
                    let long = long.to_string();
                    long.split_once("\n\n").map(|(_, detail)| detail.to_string()).unwrap_or(long)
                }
                None => arg.get_help().map(|h| h.to_string()).unwrap_or_default(),
            };
            out += &format!("| `--{long}` | {env} | {default} | {} |\n", cell(&help));
        }
    }
    out
}

/// `cmd` (a command taking [`ServiceConfig`]) with one line of help per flag: each flag's
/// long text is dropped from `--help` (it is in `docs/configuration.md`, which `prover
/// configuration` prints), so the help is a list to scan, in its groups.
pub fn short_help(cmd: clap::Command) -> clap::Command {
    cmd.mut_args(|a| a.long_help(None::<&str>)).after_help(
        "Every flag in full, with its environment variable and default: docs/configuration.md \
         (or `prover configuration`).",
    )
}

/// The gRPC server's certificate from `--tls-cert` and `--tls-key`, if given, re-read when the
/// files change ([`crate::tls`]); unreadable or unparsable files are a configuration error
/// naming the flag.
fn tls_cert(cfg: &ServiceConfig) -> Result<Option<Arc<crate::tls::ReloadingCert>>, ServiceError> {
    let (Some(cert), Some(key)) = (&cfg.tls_cert, &cfg.tls_key) else { return Ok(None) };
    crate::tls::ReloadingCert::new(cert.clone(), key.clone()).map(|c| Some(Arc::new(c))).map_err(ServiceError::Config)
}

impl ServiceConfig {
    fn queue_config(&self) -> QueueConfig {
        QueueConfig {
            visibility_timeout: Duration::from_secs(self.visibility_timeout_secs.max(1)),
            max_attempts: self.max_attempts.max(1),
            idle_consumer_after: Duration::from_secs(self.visibility_timeout_secs.max(1)) * queue::IDLE_CONSUMER_TIMEOUTS,
            ..QueueConfig::default()
        }
    }

    /// The platform settings these flags describe.
    pub fn platform_config(&self) -> Result<PlatformConfig, ServiceError> {
        let mut c = PlatformConfig {
            reconcile_every: Duration::from_secs(self.reconcile_every_secs.max(1)),
            reconcile_grace: Duration::from_secs(self.reconcile_grace_secs.max(1)),
            drain_timeout: Duration::from_secs(self.drain_timeout_secs),
            retention: Duration::from_secs(self.retention_secs.max(1)),
            failed_retention: Duration::from_secs(self.failed_retention_secs.max(1)),
            upload_retention: Duration::from_secs(self.upload_retention_secs.max(1)),
            cache_bytes: self.cache_bytes,
            request_budget_bytes: self.request_budget_bytes,
            circuit_bytes: self.circuit_bytes,
            job_window: self.job_window.max(1),
            tenant_window: self.tenant_window,
            executor_loops: self.executor_loops.max(1),
            aggregator_loops: self.aggregator_loops.max(1),
            batch_window: Duration::from_millis(self.batch_window_ms),
            quotas: crate::Quotas {
                max_active_jobs: (self.tenant_max_active_jobs > 0).then_some(self.tenant_max_active_jobs),
                max_job_tasks: (self.tenant_max_job_tasks > 0).then_some(self.tenant_max_job_tasks),
                max_tasks_per_hour: (self.tenant_max_tasks_per_hour > 0).then_some(self.tenant_max_tasks_per_hour),
                max_record_bytes: (self.tenant_max_record_bytes > 0).then_some(self.tenant_max_record_bytes),
                max_upload_bytes: (self.tenant_max_upload_bytes > 0).then_some(self.tenant_max_upload_bytes),
                max_circuit_bytes: (self.tenant_max_circuit_bytes > 0).then_some(self.tenant_max_circuit_bytes),
            },
            ..PlatformConfig::default()
        };
        if let Some(d) = &self.reckle_wrap_vk_digest {
            let d = crate::kinds::reckle::wrap::parse_wrap_digest(d).map_err(|e| ServiceError::Config(format!("--reckle-wrap-vk-digest: {e}")))?;
            c.reckle_wrap_vk_digest = Some(d.to_string());
        }
        c.reckle_wrap_worker = self.reckle_wrap_worker;
        for d in &self.task_deadlines {
            let bad = || ServiceError::Config(format!("--task-deadline {d:?}: use KIND=SECONDS"));
            let (kind, secs) = d.split_once('=').ok_or_else(bad)?;
            let secs: u64 = secs.trim().parse().map_err(|_| bad())?;
            if c.registry.task(kind.trim()).is_none() || secs == 0 {
                return Err(ServiceError::Config(format!("--task-deadline {d:?}: unknown task kind or zero seconds")));
            }
            c.deadlines.insert(kind.trim().to_string(), Duration::from_secs(secs));
        }
        for d in &self.job_expected {
            let bad = || ServiceError::Config(format!("--job-expected {d:?}: use KIND=SECONDS"));
            let (kind, secs) = d.split_once('=').ok_or_else(bad)?;
            let secs: u64 = secs.trim().parse().map_err(|_| bad())?;
            if c.registry.job_kind(kind.trim()).is_none() || secs == 0 {
                return Err(ServiceError::Config(format!("--job-expected {d:?}: unknown job kind or zero seconds")));
            }
            c.expected.insert(kind.trim().to_string(), Duration::from_secs(secs));
        }
        Ok(c)
    }

    /// The flags' defaults (and `PROVER_*` variables), for an embedded platform built in code.
    pub fn from_env() -> Result<Self, ServiceError> {
        use clap::Parser;
        #[derive(Parser)]
        struct A {
            #[command(flatten)]
            c: ServiceConfig,
        }
        A::try_parse_from(["prover"]).map(|a| a.c).map_err(|e| ServiceError::Config(e.to_string()))
    }

    fn name(&self, role: &str) -> String {
        match &self.name {
            Some(n) => n.clone(),
            None => {
                let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "local".into());
                format!("{role}-{host}-{}", std::process::id())
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("configuration: {0}")]
    Config(String),
    /// The cause is part of the message (not an error `source`, which `{:#}` would print a
    /// second time).
    #[error("{what}: {cause}")]
    Backend { what: &'static str, cause: Box<dyn std::error::Error + Send + Sync> },
    #[error("{0}")]
    Role(#[from] crate::PlatformError),
    #[error("listen on {addr}: {source}")]
    Listen { addr: SocketAddr, source: std::io::Error },
}

fn backend(what: &'static str) -> impl FnOnce(Box<dyn std::error::Error + Send + Sync>) -> ServiceError {
    move |cause| ServiceError::Backend { what, cause }
}

/// Connects to Redis and S3.
/// Makes aws-lc-rs the process's default rustls CryptoProvider (the one gRPC TLS and S3 use):
/// the Redis client's TLS (`rediss://`) takes the default. Call before connecting; idempotent.
pub fn install_crypto_provider() {
    let _ = rustls::crypto::aws_lc_rs::default_provider().install_default();
}

/// For `roles`: only the planner acknowledges writes to clients (submissions, cancellations), so
/// only a process with the planner role opens the connection that waits for them to be on disk
/// (`--redis-durability`).
pub async fn connect(cfg: &ServiceConfig, roles: &[Role]) -> Result<Arc<Platform>, ServiceError> {
    connect_backends(&cfg.backend, cfg.queue_config(), cfg.platform_config()?, roles.contains(&Role::Planner)).await
}

/// Connects to the Redis and S3 of `b`, with the queue and platform settings given (a tool that
/// only reads and deletes, like `prover admin gc`, passes the defaults). With `acks`, the job
/// store makes acknowledged writes durable as `--redis-durability` says
/// ([`queue::durable::AckGate`]); without, it acknowledges nothing and opens no such connection.
pub async fn connect_backends(b: &BackendArgs, queue_config: QueueConfig, config: PlatformConfig, acks: bool) -> Result<Arc<Platform>, ServiceError> {
    install_crypto_provider();
    let redis = b.redis.as_deref().ok_or_else(|| ServiceError::Config("--redis (PROVER_REDIS_URL) is required".into()))?;
    let endpoint = b.s3_endpoint.clone().ok_or_else(|| ServiceError::Config("--s3-endpoint (PROVER_S3_ENDPOINT) is required".into()))?;
    let env = |k: &str| std::env::var(k).map_err(|_| ServiceError::Config(format!("{k} is required for S3")));
    if b.redis_timeout_secs == 0 {
        return Err(ServiceError::Config("--redis-timeout-secs (PROVER_REDIS_TIMEOUT_SECS) must be at least 1".into()));
    }
    let redis_timeout = Duration::from_secs(b.redis_timeout_secs);
    wait_for_backends(redis, &endpoint, redis_timeout, Duration::from_secs(b.backend_wait_secs)).await?;
    let queue = RedisQueue::connect_opts(redis, queue_config, b.assume_noeviction, redis_timeout).await.map_err(|e| backend("Redis queue")(Box::new(e)))?;
    if let Some(why) = queue.eviction_unchecked() {
        tracing::warn!(reason = why, "Redis eviction policy not checked (--assume-noeviction): an evicted key would be a lost task");
    }
    let durability: queue::durable::Durability = if acks { b.redis_durability.parse().map_err(ServiceError::Config)? } else { queue::durable::Durability::None };
    let replicas = if acks { b.redis_ack_replicas } else { 0 };
    let (gate, risk) = queue::durable::AckGate::open_with(redis, durability, replicas, redis_timeout).await.map_err(|e| match e {
        queue::durable::OpenError::Refused(why) => ServiceError::Config(why),
        e @ queue::durable::OpenError::Backend(_) => backend("Redis persistence")(Box::new(e)),
    })?;
    if let Some(risk) = risk {
        tracing::warn!(risk = %risk, "acknowledged writes are not made durable (--redis-durability aof refuses to start on such a Redis)");
    }
    if acks {
        // 1: each acknowledgement waits for Redis's fsynced AOF; 0: it does not (alert
        // ProverAcksNotDurable).
        ::metrics::gauge!("prover_acks_durable").set(if gate.is_some() { 1.0 } else { 0.0 });
    }
    let jobs = RedisJobStore::connect_opts(redis, b.assume_noeviction, redis_timeout)
        .await
        .map_err(|e| backend("Redis job store")(Box::new(e)))?
        .with_ack_gate(gate.map(Arc::new));
    let s3 = S3Store::connect(S3Config {
        endpoint,
        bucket: b.bucket.clone(),
        region: b.s3_region.clone(),
        access_key: env("AWS_ACCESS_KEY_ID")?,
        secret_key: env("AWS_SECRET_ACCESS_KEY")?,
    })
    .await
    .map_err(|e| backend("S3")(Box::new(e)))?;
    let blobs: Arc<dyn BlobStore> = Arc::new(metrics::MeteredStore::new(Arc::new(s3), Duration::from_secs(b.s3_timeout_secs.max(1))));
    Ok(Platform::with_config(Arc::new(queue), blobs, Arc::new(jobs), config))
}

/// Waits until the Redis at `redis` answers `PING` and the S3 endpoint accepts a TCP connection,
/// for at most `wait` ([`queue::wait_reachable`]: a delay doubling from 250 ms to 5 s between
/// tries). Only what waiting can cure is waited out ([`queue::ping_redis`]); the last problem is
/// the error when the time is up. The stores' own connection checks (eviction policy, bucket)
/// come after, once.
async fn wait_for_backends(redis: &str, s3: &str, timeout: Duration, wait: Duration) -> Result<(), ServiceError> {
    let uri: tonic::codegen::http::Uri = s3.parse().map_err(|e| ServiceError::Config(format!("--s3-endpoint (PROVER_S3_ENDPOINT) {s3:?}: {e}")))?;
    let host = uri.host().ok_or_else(|| ServiceError::Config(format!("--s3-endpoint (PROVER_S3_ENDPOINT) {s3:?} names no host")))?.trim_matches(['[', ']']).to_string();
    let port = uri.port_u16().unwrap_or(if uri.scheme_str() == Some("https") { 443 } else { 80 });
    let s3_down = |problem: String| queue::Unreachable { backend: "S3", problem: problem.into(), curable: true };
    let reached = queue::wait_reachable(wait, || async {
        queue::probe_redis(redis, timeout).await?;
        match tokio::time::timeout(timeout, tokio::net::TcpStream::connect((host.as_str(), port))).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(s3_down(format!("{s3}: {e}"))),
            Err(_) => Err(s3_down(format!("{s3}: no connection within {timeout:?}"))),
        }
    })
    .await;
    reached.map_err(|u| match u.curable {
        true => backend(u.backend)(format!("{} (waited up to {wait:?}: --backend-wait-secs)", u.problem).into()),
        false => backend(u.backend)(u.problem),
    })
}

/// Embedded mode: in-process queue and job store, blobs under `data_dir` (`prover serve
/// --embedded` and `prover dev`).
pub fn embedded(cfg: &ServiceConfig, data_dir: PathBuf) -> Result<Arc<Platform>, ServiceError> {
    let fs = FsStore::new(&data_dir).map_err(|e| backend("data directory")(Box::new(e)))?;
    let queue: Arc<dyn Queue> = Arc::new(MemoryQueue::new(cfg.queue_config()));
    let jobs: Arc<dyn JobStore> = Arc::new(MemoryJobStore::new());
    let blobs = Arc::new(metrics::MeteredStore::new(Arc::new(fs), Duration::from_secs(cfg.backend.s3_timeout_secs.max(1))));
    Ok(Platform::with_config(queue, blobs, jobs, cfg.platform_config()?))
}

/// Runs `roles` on `platform` until SIGTERM/Ctrl-C (or `shutdown` resolves), serving gRPC if the
/// planner is among them and the HTTP side always.
pub async fn run(
    platform: Arc<Platform>,
    roles: &[Role],
    cfg: &ServiceConfig,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServiceError> {
    let handle = metrics::install();
    platform.set_drain_timeout(Duration::from_secs(cfg.drain_timeout_secs));
    let known: Vec<&'static str> = platform.registry().served_by(Served::Worker).iter().map(|t| t.name).collect();
    let worker_kinds: Vec<&'static str> = if cfg.kinds.is_empty() {
        platform.worker_kinds().iter().map(|t| t.name).collect()
    } else {
        let mut v = Vec::new();
        for k in &cfg.kinds {
            match known.iter().find(|w| **w == k.as_str()) {
                Some(w) => v.push(*w),
                None => return Err(ServiceError::Config(format!("--kinds: unknown worker task kind {k:?} (known: {})", known.join(", ")))),
            }
        }
        v
    };
    let ready = Arc::new(metrics::Readiness::default());
    let (stop_tx, stop_rx) = watch::channel(false);

    let metrics_listen = cfg.metrics_listen.unwrap_or(crate::defaults::METRICS_LISTEN);
    let http = tokio::net::TcpListener::bind(metrics_listen)
        .await
        .map_err(|source| ServiceError::Listen { addr: metrics_listen, source })?;
    tracing::info!(addr = %http.local_addr().map(|a| a.to_string()).unwrap_or_default(), "metrics and probes");
    let router = metrics::router(handle, ready.clone());
    let mut http_stop = stop_rx.clone();
    tokio::spawn(async move {
        let _ = axum::serve(http, router)
            .with_graceful_shutdown(async move {
                let _ = http_stop.wait_for(|s| *s).await;
            })
            .await;
    });
    tokio::spawn(metrics::sample_queues(platform.queue().clone(), platform.task_kinds(), Duration::from_secs(5), stop_rx.clone()));
    tokio::spawn(metrics::probe_backends(
        platform.queue().clone(),
        platform.blobs().clone(),
        crate::kinds::PLAN.name,
        ready.clone(),
        Duration::from_secs(READINESS_PROBE_EVERY_SECS),
        stop_rx.clone(),
    ));

    let tokens = if roles.contains(&Role::Planner) { token_store(cfg).await? } else { None };

    let mut tasks = tokio::task::JoinSet::new();
    for role in roles {
        let p = platform.clone();
        match role {
            Role::Planner => {
                let listener = tokio::net::TcpListener::bind(cfg.listen)
                    .await
                    .map_err(|source| ServiceError::Listen { addr: cfg.listen, source })?;
                tracing::info!(addr = %listener.local_addr().map(|a| a.to_string()).unwrap_or_default(), "gRPC JobService");
                let (health_reporter, health) = tonic_health::server::health_reporter();
                health_reporter.set_serving::<api::v1::job_service_server::JobServiceServer<grpc::JobServiceImpl>>().await;
                let reflection = tonic_reflection::server::Builder::configure()
                    .register_encoded_file_descriptor_set(api::v1::FILE_DESCRIPTOR_SET)
                    .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
                    .build_v1()
                    .map_err(|e| ServiceError::Config(format!("reflection: {e}")))?;
                let mut grpc_stop = stop_rx.clone();
                // Keepalive finds connections whose peer is gone (their calls' reservations of
                // the request budget go with them: `crate::budget`); each connection carries a
                // bounded number of calls at once.
                let router = tonic::transport::Server::builder()
                    .http2_keepalive_interval(Some(Duration::from_secs(30)))
                    .http2_keepalive_timeout(Some(Duration::from_secs(20)))
                    .tcp_keepalive(Some(Duration::from_secs(60)))
                    .max_concurrent_streams(Some(grpc::MAX_STREAMS_PER_CONNECTION))
                    .add_service(health)
                    .add_service(reflection)
                    .add_service(match &tokens {
                        Some(t) => grpc::JobServiceImpl::new(p).with_tokens(t.clone()).with_delegating_tenant(cfg.delegating_tenant.clone()).into_server(),
                        None => grpc::JobServiceImpl::new(p).into_server(),
                    });
                let shutdown = async move {
                    let _ = grpc_stop.wait_for(|s| *s).await;
                };
                let gerr = |e: tonic::transport::Error| ServiceError::Config(format!("gRPC server: {e}"));
                match tls_cert(cfg)? {
                    Some(cert) => {
                        install_crypto_provider();
                        let config = crate::tls::server_config(cert).map_err(ServiceError::Config)?;
                        tracing::info!("gRPC over TLS (the certificate is re-read when its files change)");
                        let incoming = crate::tls::incoming(listener, config);
                        tasks.spawn(async move { router.serve_with_incoming_shutdown(incoming, shutdown).await.map_err(gerr) });
                    }
                    None => {
                        let incoming = tokio_stream::wrappers::TcpListenerStream::new(listener);
                        tasks.spawn(async move { router.serve_with_incoming_shutdown(incoming, shutdown).await.map_err(gerr) });
                    }
                }
            }
            Role::Executor => {
                let name = cfg.name("executor");
                let fut = p.run_executor(name, stop_rx.clone());
                tasks.spawn(async move { fut.await.map_err(ServiceError::from) });
            }
            Role::Aggregator => {
                let name = cfg.name("aggregator");
                let fut = p.run_aggregator(name, stop_rx.clone());
                tasks.spawn(async move { fut.await.map_err(ServiceError::from) });
            }
            Role::Worker => {
                for i in 0..cfg.concurrency.max(1) {
                    let name = format!("{}-{i}", cfg.name("worker"));
                    let kinds = worker_kinds.clone();
                    let p = p.clone();
                    let stop = stop_rx.clone();
                    tasks.spawn(async move { p.run_worker_for(name, &kinds, stop).await.map_err(ServiceError::from) });
                }
            }
        }
    }
    ready.set_running(true);
    tracing::info!(?roles, "running");

    let mut shutdown = Box::pin(shutdown);
    let result = tokio::select! {
        _ = &mut shutdown => Ok(()),
        _ = terminate() => Ok(()),
        Some(r) = tasks.join_next() => match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(e),
            Err(e) => Err(ServiceError::Config(format!("role panicked: {e}"))),
        },
    };
    tracing::info!("shutting down: finishing tasks in hand");
    ready.set_running(false);
    let _ = stop_tx.send(true);
    while let Some(r) = tasks.join_next().await {
        if let Ok(Err(e)) = r {
            tracing::warn!(error = %e, "role stopped with an error");
        }
    }
    result
}

/// Whether the planner requires API tokens, and from where (see `--require-auth`): on by
/// default, off with `--no-auth` or for an embedded server on a loopback address. Says which
/// at start, plainly.
async fn token_store(cfg: &ServiceConfig) -> Result<Option<Arc<dyn auth::TokenStore>>, ServiceError> {
    let embedded = cfg.backend.redis.is_none();
    let loopback = cfg.listen.ip().is_loopback();
    if cfg.no_auth || (embedded && loopback && !cfg.require_auth) {
        let why = if cfg.no_auth { "--no-auth" } else { "an embedded server on a loopback address" };
        tracing::warn!(
            "authentication is OFF ({why}): anyone who can reach {} can submit, list, fetch and cancel every job \
             (--require-auth turns it on)",
            cfg.listen
        );
        return Ok(None);
    }
    let config = |e: auth::AuthError| ServiceError::Config(e.to_string());
    let mut stores: Vec<Arc<dyn auth::TokenStore>> = Vec::new();
    if let Some(url) = &cfg.backend.redis {
        install_crypto_provider();
        let timeout = Duration::from_secs(cfg.backend.redis_timeout_secs.max(1));
        let store = auth::RedisTokenStore::connect_opts(url, timeout).await.map_err(|e| backend("Redis token store")(Box::new(e)))?;
        stores.push(Arc::new(store));
    } else {
        let store = auth::MemoryTokenStore::new();
        let t = auth::TokenStore::create(&store, "local").await.map_err(config)?;
        // On stderr, not in the log: the only place this process ever shows a secret.
        eprintln!("authentication on (embedded): API token for tenant \"local\" (shown once): {}", t.secret);
        stores.push(Arc::new(store));
    }
    if let Some(dir) = &cfg.tokens_dir {
        let store = auth::DirTokenStore::open(dir).map_err(|e| ServiceError::Config(format!("--tokens-dir: {e}")))?;
        for p in store.problems().map_err(config)? {
            tracing::warn!(problem = %p, "--tokens-dir: an entry is left out");
        }
        let tokens = auth::TokenStore::list(&store).await.map_err(config)?.len();
        tracing::info!(dir = %dir.display(), tokens, "API tokens also read from a directory");
        stores.push(Arc::new(store));
    }
    tracing::info!(redis = !embedded, "authentication on: every JobService call needs an API token");
    Ok(Some(if stores.len() == 1 { stores.pop().expect("one store") } else { Arc::new(auth::ChainTokenStore::new(stores)) }))
}

async fn terminate() {
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(s) => s,
            Err(_) => return std::future::pending().await,
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = tokio::signal::ctrl_c() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Seconds between two looks at Redis and the object store for `/readyz`
/// ([`metrics::probe_backends`]).
pub const READINESS_PROBE_EVERY_SECS: u64 = 5;

/// The directive that keeps arkworks' per-gadget spans out of the logs (see [`init_logging`]).
pub const GR1CS_OFF: &str = "gr1cs=off";

/// Logs as text (coloured only on a terminal: [`colour_logs`]), or JSON when `format` is
/// "json"; level from `RUST_LOG` (default info).
///
/// arkworks' constraint gadgets open an INFO span per operation under the target `gr1cs`, with
/// the whole constraint system as a Debug-formatted field: with those spans on, a Hekaton
/// subcircuit of a few thousand constraints took minutes and gigabytes per step (quadratic).
/// They are off unless `RUST_LOG` names `gr1cs` itself.
pub fn init_logging(format: &str) {
    init_logging_with(format, &crate::telemetry::Telemetry::off());
}

/// Whether text logs carry ANSI colour: only when stderr is a terminal and `NO_COLOR` is unset
/// (<https://no-color.org>). Logs written to a file, a pipe or a log shipper are plain text.
pub fn colour_logs() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

/// [`init_logging`], with the spans also exported through `telemetry` when it exports.
pub fn init_logging_with(format: &str, telemetry: &crate::telemetry::Telemetry) {
    use tracing_subscriber::layer::SubscriberExt;
    use tracing_subscriber::util::SubscriberInitExt;
    use tracing_subscriber::EnvFilter;
    let from_env = std::env::var("RUST_LOG").ok().filter(|v| !v.trim().is_empty());
    let names_gr1cs = from_env.as_deref().is_some_and(|v| v.contains("gr1cs"));
    let mut filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    if !names_gr1cs {
        filter = filter.add_directive(GR1CS_OFF.parse().expect("a valid directive"));
    }
    let json = (format == "json").then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr).json());
    let text = (format != "json").then(|| tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_ansi(colour_logs()));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(text)
        .with(json)
        .with(crate::telemetry::layer(telemetry))
        .try_init();
}

/// Starts the logs and, when `cfg` names an OTLP endpoint, the trace export of a process
/// running `service` (e.g. `prover-worker`). Call inside the tokio runtime the process runs
/// on, and keep the result until the end (dropping it flushes the last spans).
pub fn init_observability(cfg: &ServiceConfig, service: &str) -> Result<crate::telemetry::Telemetry, ServiceError> {
    let instance = cfg.name(service.trim_start_matches("prover-"));
    let target = crate::telemetry::TraceTarget { endpoint: cfg.otlp_endpoint.as_deref(), service, instance: &instance };
    let telemetry = crate::telemetry::exporter(&target).map_err(ServiceError::Config)?;
    init_logging_with(&cfg.log_format, &telemetry);
    if telemetry.exporting() {
        tracing::info!(endpoint = cfg.otlp_endpoint.as_deref().unwrap_or_default(), service, "exporting traces over OTLP");
    }
    Ok(telemetry)
}

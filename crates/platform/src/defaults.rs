//! Every default of the services' settings, in one place: the `prover serve` flags
//! ([`crate::service::ServiceConfig`]) read them for their `default_value_t`, and
//! [`crate::PlatformConfig::default`] and [`crate::Quotas::default`] return them, so an
//! embedded platform built in code and a service started with no flags behave alike.
//! `docs/configuration.md` is generated from the flags (`prover configuration`; a test keeps it
//! in step), and the chart's values name these settings.

/// Seconds a lease lasts before its task is redelivered (workers heartbeat every third).
pub const VISIBILITY_TIMEOUT_SECS: u64 = queue::DEFAULT_VISIBILITY_TIMEOUT_SECS;
/// Attempts per task before it is dead-lettered and its job fails.
pub const MAX_ATTEMPTS: u32 = queue::DEFAULT_MAX_ATTEMPTS;
/// Task loops of the worker role per process.
pub const WORKER_CONCURRENCY: usize = 1;
/// Seconds a worker given SIGTERM may finish its task before releasing the lease.
pub const DRAIN_TIMEOUT_SECS: u64 = 300;
/// Tasks of one job queued or running at once (see `kinds::Window`).
pub const JOB_WINDOW: u64 = 64;
/// Tasks of one tenant's jobs, all together, queued or running at once.
pub const TENANT_WINDOW: u64 = 64;
/// Task loops of the executor role per process.
pub const EXECUTOR_LOOPS: usize = 4;
/// Task loops of the aggregator role per process.
pub const AGGREGATOR_LOOPS: usize = 2;
/// Milliseconds a registered circuit's bundle waits for others under its key.
pub const BATCH_WINDOW_MS: u64 = 20;
/// Jobs one tenant may have queued or running at once.
pub const TENANT_MAX_ACTIVE_JOBS: u64 = 64;
/// Tasks one job of a tenant may plan.
pub const TENANT_MAX_JOB_TASKS: u64 = 100_000;
/// Tasks a tenant's jobs may plan per clock hour (UTC).
pub const TENANT_MAX_TASKS_PER_HOUR: u64 = 1_000_000;
/// Bytes of job records and task state one tenant's jobs may hold in Redis: a record is
/// charged 4 KiB plus its spec while it is kept, and 160 bytes per planned task until an hour
/// after its job ends (`jobs::record_charge`), so 256 MiB holds a week of ~60,000 small jobs,
/// or a 100,000-task job's state beside them.
pub const TENANT_MAX_RECORD_BYTES: u64 = 256 << 20;
/// Bytes of uploads one tenant may keep (32 of the largest).
pub const TENANT_MAX_UPLOAD_BYTES: u64 = 4 << 30;
/// Bytes of registered circuits (`.r1cs` and key pairs) one tenant may keep.
pub const TENANT_MAX_CIRCUIT_BYTES: u64 = 16 << 30;
/// Seconds between reconciler rounds.
pub const RECONCILE_EVERY_SECS: u64 = 2;
/// Seconds a job may sit with nothing queued, running or delayed before it is re-driven or
/// failed.
pub const RECONCILE_GRACE_SECS: u64 = 60;
/// Seconds a finished job's record stays in Redis.
pub const RETENTION_SECS: u64 = 7 * 24 * 3600;
/// Seconds a failed or cancelled job's record stays in Redis: a day, to read why it ended,
/// without a submit-and-cancel loop keeping a week of records.
pub const FAILED_RETENTION_SECS: u64 = 24 * 3600;
/// Seconds an upload is kept (its quota charge, and the age past which `admin gc` deletes it).
pub const UPLOAD_RETENTION_SECS: u64 = 7 * 24 * 3600;
/// Bytes of decoded objects a process keeps between tasks.
pub const CACHE_BYTES: u64 = 256 << 20;
/// The planner's request budget (`--request-budget-bytes`, [`crate::budget`]): one message of
/// the API's largest size decoded, with room for uploads and small calls beside it.
pub const REQUEST_BUDGET_BYTES: u64 = 512 << 20;
/// Bytes of Reckle circuit sets a worker or aggregator keeps built (half the worker pool's
/// default memory limit of 8 GiB: a set is about 90 MB per level).
pub const CIRCUIT_BYTES: u64 = 4 << 30;
/// Whether a worker serves `reckle.wrap` tasks (off: only workers that can hold the wrap
/// proving key, several GB resident, are started with `--reckle-wrap-worker`).
pub const RECKLE_WRAP_WORKER: bool = false;
/// Seconds one Redis command may take to answer (redis-rs's own default is 500 ms).
pub const REDIS_TIMEOUT_SECS: u64 = queue::DEFAULT_REDIS_TIMEOUT_SECS;
/// How long a process waits at start for its Redis and S3 to be reachable
/// (`--backend-wait-secs`): a rolling restart of a backend, or pods started in any order.
pub const BACKEND_WAIT_SECS: u64 = queue::BACKEND_WAIT_SECS;
/// Seconds one object-store call may take.
pub const S3_TIMEOUT_SECS: u64 = 120;
/// Where a role serves /metrics, /healthz and /readyz when `--metrics-listen` is unset (an
/// embedded server takes `--listen`'s address on a free port instead).
pub const METRICS_LISTEN: std::net::SocketAddr =
    std::net::SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED), 9090);

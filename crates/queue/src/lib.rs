//! Task queues for the platform: one [`Queue`] trait, a Redis Streams implementation
//! ([`RedisQueue`]) for clusters and an in-process one ([`MemoryQueue`]) for embedded mode, with
//! the same semantics, checked by one contract suite ([`contract`]) run against both.
//!
//! ## Semantics
//!
//! * A queue per task kind. Messages carry references (ids, object keys, small JSON), never
//!   blobs: payloads over [`MAX_PAYLOAD`] bytes are refused.
//! * [`Queue::claim`] hands out a [`Lease`]: the message plus a **fencing token**, a number drawn
//!   from a global counter each time the message is handed to a consumer. [`Queue::complete`],
//!   [`Queue::fail`] and [`Queue::release`] must present the token and are refused with
//!   [`QueueError::StaleLease`] once the message has been handed to someone else: a worker
//!   that stalled past its lease cannot complete or fail a task another worker now holds.
//! * A lease not completed within the **visibility timeout** expires; the next `claim` of that
//!   kind redelivers the message (Redis: `XAUTOCLAIM`). Every delivery counts as an attempt.
//! * [`Queue::fail`] retries with exponential backoff (the message waits in a delayed set)
//!   until `max_attempts`; then, like an expired lease past `max_attempts`, the message goes to
//!   the **dead-letter** queue with the reason.
//! * [`Queue::enqueue_once`] enqueues a task at most once per `(job, kind, task id)` (the check
//!   and the enqueue are one atomic step), so a planner or executor that is cut short and runs
//!   again does not duplicate work; [`Queue::forget_job`] drops a job's keys once it has ended.
//! * [`Queue::job_tasks`] counts a job's messages of a kind that are waiting, running or
//!   delayed, and [`Queue::job_has_tasks`] says whether it has any in any kind (a reconciler's
//!   "is anything still happening for this job?"); [`Queue::purge_all`] removes its waiting and
//!   delayed ones. All three cost O(the job's messages), whatever the queues hold: on Redis they
//!   read the job's **task index**. [`Queue::outstanding`] counts every job's messages of a
//!   kind in one walk of its queue (Redis: pages of 1,000 entries).
//!
//! ## Redis layout
//!
//! Stream `prover:q:{kind}` with consumer group `workers`; dead letters in stream
//! `prover:dlq:{kind}`; retries waiting for their backoff in sorted set
//! `prover:delayed:{kind}` (score = due time in ms); the `XAUTOCLAIM` cursor of each kind, and
//! its maintenance lease (field `lease:{kind}`: `{consumer} {until ms}`, the one consumer that
//! reaps the kind's expired leases and promotes its retries), in hash
//! `prover:autoclaim`; current lease per message in hash
//! `prover:lease:{kind}`; fencing counter `prover:fence`; the ids enqueued once per job in set
//! `prover:once:{job}` (members `kind/task id`, expiring a week after the last addition); the
//! job's task index in set `prover:tasks:{job}`, one member per message that is waiting, leased
//! or delayed: `{kind} {stream entry id}`, or `{kind} {message JSON}` for a retry in the delayed
//! set (same expiry, renewed by every addition). Every script that adds, moves or removes a
//! message updates the index in the same step; a reader checks each member against the queue
//! and drops the stale ones. Acknowledged entries are deleted,
//! so **waiting work = `XLEN` − the group's `pending`** and **running work = `pending`**
//! (`XINFO GROUPS`); the group's `lag` is not reliable after deletions. All state changes that
//! must be atomic run as Lua scripts.
//!
//! Round trips: a consumer whose last claim found work claims with one script (read, fencing
//! token, lease); an idle one blocks in `XREADGROUP` over all its kinds' streams, so idle loops
//! poll nothing. [`Queue::complete_with`] acknowledges a task, enqueues its reports and records
//! its throughput in one script, and [`Queue::enqueue_once_many`] dispatches up to 500 tasks of
//! a job per script.

use std::time::Duration;

use async_trait::async_trait;

pub mod contract;
pub mod durable;
mod memory;
mod redis_queue;

pub use memory::MemoryQueue;
pub use redis_queue::RedisQueue;

/// Dead letters kept per kind: older ones are trimmed as new ones arrive (each one's job has
/// already failed with its reason; the list is for an operator's investigation), so a flood of
/// failures cannot fill Redis.
pub const DEAD_LETTERS_KEPT: usize = 10_000;

/// Seconds a Redis command may take to answer by default (the services'
/// `--redis-timeout-secs`): several seconds, so a large reply or a short server pause (an AOF
/// fsync, a fork) is waited out instead of failing unrelated calls and turning writes ambiguous.
/// redis-rs's own default is 500 ms.
pub const DEFAULT_REDIS_TIMEOUT_SECS: u64 = 10;

/// Largest accepted payload: messages carry references, blobs go to object storage.
pub const MAX_PAYLOAD: usize = 4096;

/// A task as it travels through a queue.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TaskMessage {
    pub job_id: String,
    pub task_id: String,
    /// Small JSON describing the task (object keys, indices), at most [`MAX_PAYLOAD`] bytes.
    pub payload: String,
    /// Failed attempts before this delivery (set by the queue).
    #[serde(default)]
    pub failures: u32,
    /// The W3C `traceparent` of the span that sent this task, when traces are on (the task's
    /// own span becomes its child). Opaque to the queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl TaskMessage {
    /// A first delivery with no trace context.
    pub fn new(job_id: impl Into<String>, task_id: impl Into<String>, payload: impl Into<String>) -> Self {
        Self { job_id: job_id.into(), task_id: task_id.into(), payload: payload.into(), failures: 0, trace: None }
    }
}

/// A claimed message: hold it while working, present it to complete, fail or release.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    pub kind: String,
    pub message_id: String,
    pub consumer: String,
    /// The fencing token of this delivery.
    pub token: u64,
    /// Attempt number of this delivery, from 1.
    pub attempt: u32,
    pub task: TaskMessage,
}

/// What [`Queue::fail`] did with the message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FailOutcome {
    /// Will be delivered again after `delay`.
    Retried { delay: Duration },
    /// Out of attempts: moved to the dead-letter queue.
    DeadLettered,
}

/// Queue behaviour shared by all implementations.
#[derive(Clone, Debug)]
pub struct QueueConfig {
    pub visibility_timeout: Duration,
    pub max_attempts: u32,
    pub backoff_base: Duration,
    pub backoff_max: Duration,
    /// A consumer idle this long while holding nothing is deleted from its group (Redis):
    /// consumer names carry the process id, so every restart leaves one. A live consumer
    /// reads at least every few seconds, and each read resets its idle time.
    pub idle_consumer_after: Duration,
}

/// Seconds a lease lasts by default (the services' `--visibility-timeout-secs`).
pub const DEFAULT_VISIBILITY_TIMEOUT_SECS: u64 = 120;
/// [`QueueConfig::idle_consumer_after`] in visibility timeouts (the services' setting).
pub const IDLE_CONSUMER_TIMEOUTS: u32 = 10;
/// Deliveries of a task by default before it is dead-lettered (`--max-attempts`).
pub const DEFAULT_MAX_ATTEMPTS: u32 = 5;

impl Default for QueueConfig {
    fn default() -> Self {
        Self {
            visibility_timeout: Duration::from_secs(DEFAULT_VISIBILITY_TIMEOUT_SECS),
            max_attempts: DEFAULT_MAX_ATTEMPTS,
            backoff_base: Duration::from_millis(500),
            backoff_max: Duration::from_secs(30),
            idle_consumer_after: Duration::from_secs(IDLE_CONSUMER_TIMEOUTS as u64 * DEFAULT_VISIBILITY_TIMEOUT_SECS),
        }
    }
}

impl QueueConfig {
    /// Backoff before retry number `failures` (1-based): `base · 2^(failures−1)`, capped.
    pub fn backoff(&self, failures: u32) -> Duration {
        let factor = 1u32.checked_shl(failures.saturating_sub(1).min(20)).unwrap_or(u32::MAX);
        self.backoff_base.saturating_mul(factor).min(self.backoff_max)
    }
}

/// A dead letter and its place in its kind's dead-letter queue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeadLetter {
    /// Grows with every dead letter of the kind (a Redis stream id, or a sequence number), so a
    /// reader that remembers the last one it saw ([`Queue::dead_letters_after`]) sees each new
    /// one once, however many older ones were trimmed meanwhile.
    pub id: String,
    pub task: TaskMessage,
    pub reason: String,
}

/// Counts for one kind.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct QueueStats {
    /// Waiting for a worker (not delivered).
    pub pending: u64,
    /// Delivered, lease held.
    pub running: u64,
    /// Waiting for their retry backoff.
    pub delayed: u64,
    /// In the dead-letter queue (the newest [`DEAD_LETTERS_KEPT`]).
    pub dead: u64,
    /// Tasks dead-lettered since the queue began, by a failure on the last attempt or a lease
    /// that expired on it: a counter (`dead` saw-tooths once the queue is trimmed).
    pub dead_lettered: u64,
    /// Age of the oldest message not yet completed (waiting or running).
    pub oldest_age: Option<Duration>,
    /// Tasks recorded by [`Queue::record_throughput`] since the queue began.
    pub completed: u64,
    /// Total time those tasks took (so seconds per task = busy / completed).
    pub busy: Duration,
}

#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("the lease is no longer held (the message was redelivered or finished)")]
    StaleLease,
    #[error("payload of {0} bytes exceeds the {MAX_PAYLOAD}-byte limit (put blobs in object storage)")]
    PayloadTooLarge(usize),
    #[error("invalid task kind {0:?}: use letters, digits, '.', '-' and '_'")]
    InvalidKind(String),
    #[error("queue backend: {0}")]
    Backend(String),
}

/// The server's `maxmemory-policy`: from `INFO memory` (which the platform's Redis ACL users may
/// run, helm/prover/files/redis-acl.conf), else from `CONFIG GET` (an older or restricted
/// server). `Ok(None)` when the server answers neither with a policy; an error when it refuses
/// both (the caller decides whether to assume noeviction) or the connection fails.
pub async fn redis_eviction_policy(conn: &mut impl redis::aio::ConnectionLike) -> redis::RedisResult<Option<String>> {
    let info: redis::RedisResult<String> = redis::cmd("INFO").arg("memory").query_async(conn).await;
    match info {
        Ok(text) => {
            if let Some(p) = text.lines().find_map(|l| l.trim().strip_prefix("maxmemory_policy:")) {
                return Ok(Some(p.trim().to_string()));
            }
        }
        Err(e) if e.is_io_error() || e.is_timeout() => return Err(e),
        Err(_) => {}
    }
    let answer: Vec<String> = redis::cmd("CONFIG").arg("GET").arg("maxmemory-policy").query_async(conn).await?;
    Ok(answer.get(1).cloned())
}

/// One `PING` of the Redis at `url`, connecting anew, each step within `timeout`. The error says
/// whether waiting can cure it (`true`): the server refuses or drops the connection, does not
/// answer in time, or is loading its data set after a restart (`LOADING`). A malformed URL, a
/// wrong password or a refused command is `false`: waiting changes nothing.
pub async fn ping_redis(url: &str, timeout: std::time::Duration) -> Result<(), (QueueError, bool)> {
    let client = redis::Client::open(url).map_err(|e| (QueueError::Backend(e.to_string()), false))?;
    let transient = |e: &redis::RedisError| {
        // Not every I/O error: a certificate the client does not trust is one too, and waiting
        // does not cure it.
        e.is_timeout() || e.is_connection_refusal() || e.is_connection_dropped() || matches!(e.retry_method(), redis::RetryMethod::WaitAndRetry)
    };
    let late = || (QueueError::Backend(format!("no answer within {timeout:?}")), true);
    // The handshake gets the whole `timeout` too (redis-rs's own limits are 1 s and 500 ms).
    let config = redis::AsyncConnectionConfig::new().set_connection_timeout(Some(timeout)).set_response_timeout(Some(timeout));
    let mut conn = match tokio::time::timeout(timeout, client.get_multiplexed_async_connection_with_config(&config)).await {
        Err(_) => return Err(late()),
        Ok(Err(e)) => return Err((QueueError::Backend(e.to_string()), transient(&e))),
        Ok(Ok(c)) => c,
    };
    match tokio::time::timeout(timeout, redis::cmd("PING").query_async::<String>(&mut conn)).await {
        Err(_) => Err(late()),
        Ok(Err(e)) => Err((QueueError::Backend(e.to_string()), transient(&e))),
        Ok(Ok(_)) => Ok(()),
    }
}

/// How long a process waits at start for its backends before it gives up (`--backend-wait-secs`,
/// `PROVER_BACKEND_WAIT_SECS`, of the services and the operator): long enough for a Redis or
/// an object store started in the same rollout to come up.
pub const BACKEND_WAIT_SECS: u64 = 120;

/// A backend that did not answer [`wait_reachable`]'s probe: which one, the problem, and
/// whether waiting can cure it.
#[derive(Debug)]
pub struct Unreachable {
    pub backend: &'static str,
    pub problem: Box<dyn std::error::Error + Send + Sync>,
    pub curable: bool,
}

/// Calls `probe` until it succeeds, for at most `wait`, sleeping between tries a delay that
/// doubles from 250 ms to 5 s and logging each curable problem. Returns the first incurable
/// problem, or the last one once the time is up.
pub async fn wait_reachable<F, Fut>(wait: std::time::Duration, mut probe: F) -> Result<(), Unreachable>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<(), Unreachable>>,
{
    let deadline = tokio::time::Instant::now() + wait;
    let mut delay = std::time::Duration::from_millis(250);
    loop {
        let u = match probe().await {
            Ok(()) => return Ok(()),
            Err(u) => u,
        };
        if !u.curable || tokio::time::Instant::now() + delay > deadline {
            return Err(u);
        }
        tracing::warn!(backend = u.backend, problem = %u.problem, retry_in = ?delay, "backend not reachable yet; waiting");
        tokio::time::sleep(delay).await;
        delay = (delay * 2).min(std::time::Duration::from_secs(5));
    }
}

/// One [`ping_redis`] of the Redis at `url`, as [`wait_reachable`]'s probe (the password
/// redacted from a curable problem's message).
pub async fn probe_redis(url: &str, timeout: std::time::Duration) -> Result<(), Unreachable> {
    ping_redis(url, timeout).await.map_err(|(e, curable)| Unreachable {
        backend: "Redis",
        problem: if curable { format!("{}: {e}", redact_url(url)).into() } else { Box::new(e) },
        curable,
    })
}

/// [`wait_reachable`] for the Redis at `url` ([`probe_redis`] each try).
pub async fn wait_for_redis(url: &str, timeout: std::time::Duration, wait: std::time::Duration) -> Result<(), Unreachable> {
    wait_reachable(wait, || probe_redis(url, timeout)).await
}

/// A URL fit for a log line or an error message: any password (and user name) replaced by
/// `***` (`redis://:secret@host:6379/0` → `redis://***@host:6379/0`).
pub fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_string() };
    let authority_end = rest.find('/').unwrap_or(rest.len());
    match rest[..authority_end].rfind('@') {
        Some(at) => format!("{scheme}://***{}", &rest[at..]),
        None => url.to_string(),
    }
}

pub(crate) fn check_kind(kind: &str) -> Result<(), QueueError> {
    let ok = !kind.is_empty()
        && kind.len() <= 64
        && kind.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-' || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(QueueError::InvalidKind(kind.to_string()))
    }
}

pub(crate) fn check_payload(task: &TaskMessage) -> Result<(), QueueError> {
    let size = task.payload.len() + task.job_id.len() + task.task_id.len() + task.trace.as_ref().map_or(0, String::len);
    if size > MAX_PAYLOAD {
        return Err(QueueError::PayloadTooLarge(size));
    }
    Ok(())
}

/// A task queue with leases (see the crate doc for the semantics).
#[async_trait]
pub trait Queue: Send + Sync {
    async fn enqueue(&self, kind: &str, task: TaskMessage) -> Result<(), QueueError>;
    /// Waits up to `wait` for a message of `kind` (redelivering expired leases first).
    async fn claim(&self, kind: &str, consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError>;
    /// Waits up to `wait` for a message of any of `kinds` (earlier kinds first when several
    /// have work; expired leases first). An idle caller is woken by the enqueue itself, not by
    /// polling. The default polls each kind every 20 ms; both queues here override it.
    async fn claim_any(&self, kinds: &[&str], consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            for kind in kinds {
                if let Some(l) = self.claim(kind, consumer, Duration::ZERO).await? {
                    return Ok(Some(l));
                }
            }
            let now = tokio::time::Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            tokio::time::sleep((deadline - now).min(Duration::from_millis(20))).await;
        }
    }
    async fn complete(&self, lease: &Lease) -> Result<(), QueueError>;
    /// Completes `lease`, enqueues `then` (the task's reports: `(kind, message)`) and records
    /// the task's throughput (`busy`, as [`Queue::record_throughput`]), as one step: a report
    /// is enqueued exactly when its task is acknowledged, and a stale lease
    /// ([`QueueError::StaleLease`]) enqueues nothing. One round trip on Redis. The default
    /// enqueues first and completes after, so a crash in between can only repeat a report,
    /// never lose one.
    async fn complete_with(&self, lease: &Lease, then: &[(&str, TaskMessage)], busy: Duration) -> Result<(), QueueError> {
        for (kind, m) in then {
            self.enqueue(kind, m.clone()).await?;
        }
        self.complete(lease).await?;
        self.record_throughput(&lease.kind, busy).await
    }
    /// Keeps a lease alive for another visibility timeout (a worker's heartbeat during a long
    /// task). [`QueueError::StaleLease`] if the lease was lost meanwhile: the worker should
    /// stop, another holds the task.
    async fn extend(&self, lease: &Lease) -> Result<(), QueueError>;
    /// How long a lease lasts without [`Queue::extend`].
    fn visibility_timeout(&self) -> Duration;
    async fn fail(&self, lease: &Lease, reason: &str) -> Result<FailOutcome, QueueError>;
    /// Gives the message back for immediate redelivery without counting a failure (a draining
    /// worker that will not finish it).
    async fn release(&self, lease: &Lease) -> Result<(), QueueError>;
    async fn stats(&self, kind: &str) -> Result<QueueStats, QueueError>;
    /// Records one finished task of `kind` that took `busy` (per-kind throughput, which the
    /// autoscaler divides the backlog by).
    async fn record_throughput(&self, kind: &str, busy: Duration) -> Result<(), QueueError>;
    /// Dead-lettered messages of `kind` with their reasons (the newest [`DEAD_LETTERS_KEPT`]).
    async fn dead_letters(&self, kind: &str) -> Result<Vec<(TaskMessage, String)>, QueueError>;
    /// Up to `count` dead letters of `kind` that came after the one with id `after` (`None`:
    /// from the oldest kept), oldest first: a reader's cursor (see [`DeadLetter::id`]).
    async fn dead_letters_after(&self, kind: &str, after: Option<&str>, count: usize) -> Result<Vec<DeadLetter>, QueueError>;
    /// Deletes `kind`'s dead letters (once an operator has read them). Returns how many.
    async fn clear_dead_letters(&self, kind: &str) -> Result<u64, QueueError>;
    /// Removes every waiting or delayed message of `job_id` in `kind` (cancellation). Returns
    /// how many. Leased messages stay: their holders end them.
    async fn purge_job(&self, kind: &str, job_id: &str) -> Result<u64, QueueError>;
    /// [`Queue::purge_job`] for every kind at once, in O(the job's messages) (Redis: one walk
    /// of the job's task index, whatever the queues hold): what a job's ending runs.
    async fn purge_all(&self, job_id: &str) -> Result<u64, QueueError>;
    /// Enqueues `task` unless a task with the same `(job_id, kind, task_id)` was enqueued with
    /// this method before (since the last [`Queue::forget_job`]); the check and the enqueue are
    /// one atomic step. True if it was enqueued now.
    async fn enqueue_once(&self, kind: &str, task: TaskMessage) -> Result<bool, QueueError>;
    /// [`Queue::enqueue_once`] for each of `tasks`, in as few round trips as the backend allows
    /// (each task's check and enqueue stay one atomic step). Returns how many were enqueued now.
    async fn enqueue_once_many(&self, kind: &str, tasks: Vec<TaskMessage>) -> Result<u64, QueueError> {
        check_kind(kind)?;
        for t in &tasks {
            check_payload(t)?;
        }
        let mut n = 0;
        for t in tasks {
            n += self.enqueue_once(kind, t).await? as u64;
        }
        Ok(n)
    }
    /// Forgets which tasks of `job_id` were enqueued once (the job has ended).
    async fn forget_job(&self, job_id: &str) -> Result<(), QueueError>;
    /// Messages of `job_id` in `kind` that are waiting, running (leased) or delayed.
    async fn job_tasks(&self, kind: &str, job_id: &str) -> Result<u64, QueueError>;
    /// Whether `job_id` has a message waiting, running (leased) or delayed in any kind: the
    /// reconciler's "is anything still happening for this job?", in O(1) for a job that has
    /// (Redis: the first live member of its task index).
    async fn job_has_tasks(&self, job_id: &str) -> Result<bool, QueueError>;
    /// [`Queue::job_has_tasks`] of each of `jobs`, in order, in as few round trips as the
    /// backend allows (Redis: one pipeline per 1,000 jobs).
    async fn jobs_with_tasks(&self, jobs: &[String]) -> Result<Vec<bool>, QueueError> {
        let mut out = Vec::with_capacity(jobs.len());
        for job in jobs {
            out.push(self.job_has_tasks(job).await?);
        }
        Ok(out)
    }
    /// [`Queue::job_tasks`] of every job with a message in `kind`, in one walk of the queue
    /// (jobs with none are absent): what a reconciler looking at many jobs reads once per kind
    /// instead of once per job and kind.
    async fn outstanding(&self, kind: &str) -> Result<std::collections::HashMap<String, u64>, QueueError>;
}

#[cfg(test)]
mod tests {
    #[test]
    fn urls_lose_their_credentials() {
        use super::redact_url;
        assert_eq!(redact_url("redis://:s3cret@redis.data.svc:6379/0"), "redis://***@redis.data.svc:6379/0");
        assert_eq!(redact_url("rediss://user:p@ss@h:1/2"), "rediss://***@h:1/2");
        assert_eq!(redact_url("redis://127.0.0.1:6379/"), "redis://127.0.0.1:6379/");
        assert_eq!(redact_url("not a url"), "not a url");
        assert!(!redact_url("redis://:hunter2@h/0").contains("hunter2"));
    }
}

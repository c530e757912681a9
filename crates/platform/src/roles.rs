//! The roles: loops that claim tasks of the kinds they serve and hand them to their job kind.
//!
//! * **worker** ([`Platform::run_worker`]): the kinds' worker tasks ([`JobKind::work`]).
//! * **executor** ([`Platform::run_executor`]): `plan` tasks and reports ([`JobKind::on_done`]),
//!   and, beside them, the **reconciler**.
//! * **aggregator** ([`Platform::run_aggregator`]): finishing tasks ([`JobKind::finish`]).
//!
//! Every task runs under [`Platform::run_task`]: a heartbeat keeps its lease; the task is
//! abandoned (its future dropped, its report never sent, its blocking work told to stop: see
//! [`crate::work`]) when the heartbeat finds the lease gone or cannot renew it for a visibility
//! timeout, and abandoned and retried when it passes its kind's deadline. A loop claims nothing
//! while work of an abandoned task still runs in its process. A **fatal** error fails the job at once with the reason; a retryable one
//! is retried with backoff until the task is dead-lettered, which fails the job. A **transient**
//! one (Redis or S3 did not answer) first waits, still heartbeating, until both answer again, so
//! an outage costs each task it meets one attempt.
//!
//! Outputs are interchangeable rather than fenced: every object a task writes is either a
//! function of the job's inputs (Reckle node proofs are pure; Hekaton's commitments draw their
//! randomness from the job's secret and the task index), or a valid proof of the same statement
//! under the key the task's payload names (Pari and circom proofs draw fresh randomness from the
//! operating system), or lives under a path of its own (a setup's key pair, under its digest;
//! only the key the setup's fenced report names is used). So a copy of a task that runs on after
//! losing its lease, and whose put races the new holder's, leaves an object any reader accepts.
//!
//! A role loop never stops on a backend error: it counts it (`prover_backend_errors_total`),
//! backs off (100 ms doubling to 10 s) and goes on; only a configuration error ends it.
//!
//! Beside the executor runs the **reconciler** ([`crate::reconcile`]).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jobs::JobRecord;
use queue::{FailOutcome, Lease, QueueError};
use tokio::sync::{oneshot, watch};
use tracing::Instrument;

use crate::kinds::{JobKind, Served, TaskKind, PLAN};
use crate::{Platform, PlatformError};

/// An object key that is never written: `exists` on it asks the object store whether it
/// answers at all.
const BACKEND_PROBE: &str = "health/probe";

/// How long an idle role loop waits in one claim before it looks at its stop signal again.
const IDLE_WAIT: Duration = Duration::from_millis(500);

tokio::task_local! {
    /// The reports of the task in hand ([`Platform::report`]): enqueued with its completion.
    pub(crate) static OUTBOX: std::sync::Mutex<Vec<(&'static str, queue::TaskMessage)>>;
}

/// Tasks running in this process (all roles), for the busy/in-flight gauges.
static IN_FLIGHT: AtomicI64 = AtomicI64::new(0);

/// How a task in hand ended.
enum End {
    /// The work's result: the reports to send with the completion.
    Finished(Result<Vec<(&'static str, queue::TaskMessage)>, PlatformError>),
    /// The heartbeat lost the lease: another worker holds the task (or will).
    Lost(String),
    Deadline(Duration),
    Drained,
    /// The task's job ended while it ran (cancelled, above all): the work stops, the task is
    /// dropped.
    JobEnded(jobs::JobState),
}

impl Platform {
    /// Worker loop over every worker task kind, until `stop` is set; the task in hand is
    /// finished (or released after the drain timeout).
    pub async fn run_worker(self: Arc<Self>, name: String, stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        let kinds = self.worker_kinds();
        self.serve_worker(name, kinds, stop).await
    }

    /// Warms up (see [`JobKind::warm_up`]) and serves `kinds`.
    async fn serve_worker(self: Arc<Self>, name: String, kinds: Vec<TaskKind>, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        tokio::select! {
            r = self.warm_up(&kinds) => if let Err(e) = r {
                // Only a head start: the tasks build what they need anyway.
                tracing::warn!(error = %e, "warm-up failed; serving without it");
            },
            _ = stop.changed() => return Ok(()),
        }
        self.serve("worker", name, kinds, stop).await
    }

    /// Lets the job kinds behind `kinds` prepare for their active jobs (Reckle builds their
    /// circuits) before this worker claims anything.
    pub async fn warm_up(&self, kinds: &[TaskKind]) -> Result<(), PlatformError> {
        // Every job kind that owns one of them (Reckle's batch and update jobs share theirs).
        let job_kinds: Vec<Arc<dyn JobKind>> =
            self.registry().kinds().filter(|k| k.task_kinds().iter().any(|t| kinds.contains(t))).cloned().collect();
        let active = self.job_store().list_active(100).await?;
        for k in job_kinds {
            let mine: Vec<JobRecord> = active.iter().filter(|r| r.kind == k.name()).cloned().collect();
            if !mine.is_empty() {
                k.warm_up(self, &mine).await?;
            }
        }
        Ok(())
    }

    /// The worker task kinds this process serves by default: every one, but those that opt in
    /// ([`TaskKind::opt_in`]: `reckle.wrap`, whose key takes GBs resident) only with
    /// [`crate::PlatformConfig::reckle_wrap_worker`].
    pub fn worker_kinds(&self) -> Vec<TaskKind> {
        let opted = self.config.reckle_wrap_worker;
        self.registry().served_by(Served::Worker).into_iter().filter(|t| opted || !t.opt_in).collect()
    }

    /// Worker loop over the task kinds named in `kinds`.
    pub async fn run_worker_for(self: Arc<Self>, name: String, kinds: &[&str], stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        let mut served = Vec::new();
        for k in kinds {
            match self.registry().task(k) {
                Some((t, _)) if t.opt_in && !self.config.reckle_wrap_worker => {
                    return Err(PlatformError::Config(format!(
                        "worker task kind {k:?} needs --reckle-wrap-worker (a worker that can hold the wrap proving key)"
                    )))
                }
                Some((t, _)) if t.served_by == Served::Worker => served.push(t),
                _ => return Err(PlatformError::Config(format!("unknown worker task kind {k:?}"))),
            }
        }
        self.serve_worker(name, served, stop).await
    }

    /// Executor loop (plan tasks and reports) and the reconciler, until `stop` is set.
    pub async fn run_executor(self: Arc<Self>, name: String, stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        let reconciler = tokio::spawn(self.clone().run_reconciler(stop.clone()));
        let kinds = self.registry().served_by(Served::Executor);
        // Reports are short and wait on Redis, not on the CPU: several loops keep one executor
        // busy (everything they do is idempotent and safe beside other executors anyway).
        let r = self.clone().serve_loops("executor", name, kinds, self.config.executor_loops, stop).await;
        reconciler.abort();
        r
    }

    /// Aggregator loops, until `stop` is set: several, so that bundle tasks running at once can
    /// share a batch verification (see [`crate::batcher`]).
    pub async fn run_aggregator(self: Arc<Self>, name: String, stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        let kinds = self.registry().served_by(Served::Aggregator);
        self.clone().serve_loops("aggregator", name, kinds, self.config.aggregator_loops, stop).await
    }

    /// `n` (at least 1) loops of `role`, named `name`, `name-1`, …. The first loop to stop with
    /// an error ends the role (and with it the others), as a single loop would.
    async fn serve_loops(self: Arc<Self>, role: &'static str, name: String, kinds: Vec<TaskKind>, n: usize, stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        let mut loops = tokio::task::JoinSet::new();
        for i in 0..n.max(1) {
            let name = if i == 0 { name.clone() } else { format!("{name}-{i}") };
            loops.spawn(self.clone().serve(role, name, kinds.clone(), stop.clone()));
        }
        let mut r = Ok(());
        while let Some(done) = loops.join_next().await {
            match done {
                Ok(Ok(())) => {}
                Ok(Err(e)) => r = Err(e),
                Err(e) => r = Err(PlatformError::Config(format!("{role} loop panicked: {e}"))),
            }
            if r.is_err() {
                break;
            }
        }
        r
    }

    async fn serve(self: Arc<Self>, role: &'static str, name: String, kinds: Vec<TaskKind>, mut stop: watch::Receiver<bool>) -> Result<(), PlatformError> {
        let mut names: Vec<&'static str> = kinds.iter().map(|k| k.name).collect();
        let mut pause = Duration::ZERO;
        while !*stop.borrow() {
            // Round-robin over the kinds: each claim asks a different kind first. With a fixed
            // order a kind that is never empty (a large job's prove tasks) starved the kinds
            // after it (a small job's setup): found by pari_jobs' fairness test.
            names.rotate_left(1);
            // No new claim while work of an abandoned task still runs here ([`crate::work`]).
            self.work.wait_no_abandoned(&mut stop).await;
            let r = match self.claim_any(&names, &name, &mut stop).await {
                Ok(Some(lease)) => self.run_task(lease, &stop).await,
                Ok(None) => Ok(()),
                Err(e) => Err(e),
            };
            match r {
                Ok(()) => pause = Duration::ZERO,
                Err(e @ (PlatformError::Config(_) | PlatformError::Queue(QueueError::InvalidKind(_)))) => return Err(e),
                Err(e) => {
                    pause = (pause * 2).clamp(Duration::from_millis(100), Duration::from_secs(10));
                    ::metrics::counter!("prover_backend_errors_total", "role" => role).increment(1);
                    tracing::warn!(role, error = %e, retry_in = ?pause, "backend error; waiting it out");
                    tokio::select! {
                        _ = tokio::time::sleep(pause) => {}
                        _ = stop.changed() => {}
                    }
                }
            }
        }
        Ok(())
    }

    /// Claims the first available task of `kinds` (in the order given), or waits up to [`IDLE_WAIT`] for one: the
    /// queue wakes an idle loop when a task is enqueued (a blocking read over all the kinds'
    /// streams on Redis), so nothing polls. The wait is not cut short by `stop` (a read cut
    /// half-way could leave a message delivered to nobody); the loop sees `stop` after it.
    async fn claim_any(&self, kinds: &[&str], name: &str, stop: &mut watch::Receiver<bool>) -> Result<Option<Lease>, PlatformError> {
        if *stop.borrow() {
            return Ok(None);
        }
        let lease = self.queue().claim_any(kinds, name, IDLE_WAIT).await?;
        if let Some(l) = &lease {
            if l.attempt > 1 {
                ::metrics::counter!("prover_task_redeliveries_total", "kind" => l.kind.clone()).increment(1);
            }
        }
        Ok(lease)
    }

    /// The deadline of one task of `kind`.
    pub fn deadline(&self, kind: TaskKind) -> Duration {
        self.config.deadlines.get(kind.name).copied().unwrap_or(kind.deadline)
    }

    /// Runs one claimed task under its heartbeat and deadline, then completes, fails or
    /// releases the lease (see the module doc).
    async fn run_task(&self, lease: Lease, stop: &watch::Receiver<bool>) -> Result<(), PlatformError> {
        let (task, kind) = if lease.kind == PLAN.name {
            (PLAN, None)
        } else {
            match self.registry().task(&lease.kind) {
                Some((t, k)) => (t, Some(k.clone())),
                None => return Err(PlatformError::Config(format!("claimed a task of unknown kind {:?}", lease.kind))),
            }
        };
        let span = tracing::info_span!(
            parent: None,
            "task",
            otel.name = %task.name,
            job = %lease.task.job_id,
            task = %lease.task.task_id,
            kind = %task.name,
            attempt = lease.attempt,
            trace_id = tracing::field::Empty,
            otel.status_code = tracing::field::Empty,
            otel.status_message = tracing::field::Empty,
        );
        crate::telemetry::adopt(&span, lease.task.trace.as_deref());
        let started = Instant::now();
        let (lost_tx, lost_rx) = oneshot::channel::<String>();
        let (ended_tx, ended_rx) = oneshot::channel::<jobs::JobState>();
        let heartbeat = {
            let (queue, store, lease) = (self.queue().clone(), self.job_store().clone(), lease.clone());
            let visibility = queue.visibility_timeout();
            let every = (visibility / 3).max(Duration::from_millis(50));
            tokio::spawn(async move {
                let mut last_ok = Instant::now();
                loop {
                    tokio::time::sleep(every).await;
                    match queue.extend(&lease).await {
                        Ok(()) => last_ok = Instant::now(),
                        Err(QueueError::StaleLease) => {
                            let _ = lost_tx.send("the lease was lost to another delivery".into());
                            return;
                        }
                        Err(e) => {
                            ::metrics::counter!("prover_backend_errors_total", "role" => "heartbeat").increment(1);
                            if last_ok.elapsed() >= visibility {
                                let _ = lost_tx.send(format!("heartbeat failing for a visibility timeout: {e}"));
                                return;
                            }
                        }
                    }
                    // A job that ended (a cancel, above all) stops its running tasks at the next
                    // beat (N2 of the platform review): they no longer hold their workers to the
                    // end, outside their tenant's active-job quota and window. One record read
                    // a beat; an unanswered read changes nothing.
                    match store.get(&lease.task.job_id).await {
                        Ok(Some(r)) if r.state.is_terminal() => {
                            let _ = ended_tx.send(r.state);
                            return;
                        }
                        Ok(None) => {
                            let _ = ended_tx.send(jobs::JobState::Cancelled);
                            return;
                        }
                        _ => {}
                    }
                }
            })
        };
        let in_flight = IN_FLIGHT.fetch_add(1, Ordering::SeqCst) + 1;
        ::metrics::gauge!("prover_worker_tasks_in_flight").set(in_flight as f64);
        ::metrics::gauge!("prover_worker_busy").set(1.0);
        let drain = self.drain_timeout();
        let mut stop = stop.clone();
        let drained = async move {
            let _ = stop.wait_for(|s| *s).await;
            tokio::time::sleep(drain).await;
        };
        let deadline = self.deadline(task);
        let current = crate::work::Current { cancel: Default::default(), work: self.work.clone() };
        let cancel = current.cancel.clone();
        let work = crate::work::CURRENT.scope(current, OUTBOX.scope(Default::default(), async {
            let r = self.task_work(&kind, task, &lease).await;
            if let Err(e) = &r {
                if e.is_transient() {
                    self.wait_for_backends(&lease.kind, e).await;
                }
            }
            r.map(|()| OUTBOX.with(|o| std::mem::take(&mut *o.lock().expect("outbox"))))
        }));
        let end = tokio::select! {
            r = work.instrument(span.clone()) => End::Finished(r),
            Ok(why) = lost_rx => End::Lost(why),
            Ok(state) = ended_rx => End::JobEnded(state),
            _ = tokio::time::sleep(deadline) => End::Deadline(deadline),
            _ = drained => End::Drained,
        };
        heartbeat.abort();
        if !matches!(end, End::Finished(_)) {
            // Its future is gone; blocking work it started stops at its next check.
            cancel.set();
            self.work.recount();
        }
        let in_flight = IN_FLIGHT.fetch_sub(1, Ordering::SeqCst) - 1;
        ::metrics::gauge!("prover_worker_tasks_in_flight").set(in_flight as f64);
        ::metrics::gauge!("prover_worker_busy").set(if in_flight > 0 { 1.0 } else { 0.0 });
        // The rest runs in the task's span (not entered across awaits: a guard held over an
        // await would lend the span to whatever else that thread polls meanwhile).
        async move {
            let outcome = |o: &'static str| ::metrics::counter!("prover_tasks_total", "kind" => task.name, "outcome" => o).increment(1);
            let took = started.elapsed();
            let result = match end {
                End::Drained => {
                    tracing::warn!("drain timeout: releasing the lease");
                    return match self.queue().release(&lease).await {
                        Ok(()) | Err(QueueError::StaleLease) => Ok(()),
                        Err(e) => Err(e.into()),
                    };
                }
                End::JobEnded(state) => {
                    // Nothing to report for a job that has ended: the task is acknowledged, not
                    // retried.
                    tracing::info!(?state, "the job ended while its task ran: task stopped");
                    outcome("job_ended");
                    return match self.queue().complete(&lease).await {
                        Ok(()) | Err(QueueError::StaleLease) => Ok(()),
                        Err(e) => Err(e.into()),
                    };
                }
                End::Lost(why) => {
                    // Whoever holds the task now does it; this copy stops here, reporting nothing.
                    tracing::warn!(reason = %why, "lease lost: task abandoned");
                    outcome("lease_lost");
                    return Ok(());
                }
                End::Deadline(d) => {
                    tracing::warn!(deadline = ?d, "task over its deadline: abandoned");
                    outcome("deadline");
                    Err(format!("deadline of {} s exceeded", d.as_secs_f64()))
                }
                End::Finished(Ok(reports)) => Ok(reports),
                End::Finished(Err(e)) if e.is_fatal() => {
                    tracing::warn!(error = %e, "task failed for good");
                    tracing::Span::current().record("otel.status_code", "ERROR");
                    outcome("fatal");
                    self.fail_job(&lease.task.job_id, &format!("task {} ({}): {e}", lease.task.task_id, task.name)).await?;
                    Ok(Vec::new())
                }
                End::Finished(Err(e)) => Err(e.to_string()),
            };
            ::metrics::histogram!("prover_task_duration_seconds", "kind" => task.name).record(took.as_secs_f64());
            match result {
                Ok(reports) => match self.queue().complete_with(&lease, &reports, took).await {
                    Ok(()) => {
                        outcome("ok");
                        tracing::info!(took_ms = took.as_millis() as u64, "task done");
                    }
                    Err(QueueError::StaleLease) => tracing::warn!("lease lost before completion; the redelivered task wins"),
                    Err(e) => return Err(e.into()),
                },
                Err(reason) => {
                    tracing::warn!(error = %reason, "task failed");
                    let span = tracing::Span::current();
                    span.record("otel.status_code", "ERROR");
                    span.record("otel.status_message", reason.as_str());
                    match self.queue().fail(&lease, &reason).await {
                        Ok(FailOutcome::DeadLettered) => {
                            outcome("dead_lettered");
                            self.fail_job(&lease.task.job_id, &format!("task {} failed: {reason}", lease.task.task_id)).await?;
                        }
                        Ok(FailOutcome::Retried { .. }) => outcome("retried"),
                        Err(QueueError::StaleLease) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
            }
            Ok(())
        }
        .instrument(span)
        .await
    }

    /// A task failed because a backend did not answer: waits, still heartbeating and under the
    /// task's deadline, until the queue and the object store answer again, and only then lets
    /// the failure spend an attempt. An outage of a minute thus costs each task it meets one
    /// attempt, instead of all of them within the first few backoffs; a backend that stays away
    /// ends the wait at the deadline (or, for Redis, when the heartbeat gives up).
    async fn wait_for_backends(&self, kind: &str, first: &PlatformError) {
        tracing::warn!(error = %first, "a backend did not answer: waiting for the queue and the object store");
        let mut delay = Duration::from_millis(200);
        loop {
            let queue_ok = self.queue().stats(kind).await.is_ok();
            let blobs_ok = self.blobs().exists(BACKEND_PROBE).await.is_ok();
            if queue_ok && blobs_ok {
                return;
            }
            ::metrics::counter!("prover_backend_errors_total", "role" => "worker").increment(1);
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(5));
        }
    }

    /// What the role does with a task of `task`.
    async fn task_work(&self, kind: &Option<Arc<dyn JobKind>>, task: TaskKind, lease: &Lease) -> Result<(), PlatformError> {
        let Some(kind) = kind else { return self.run_plan(lease).await };
        match task.served_by {
            Served::Worker => kind.work(self, task, lease).await,
            Served::Executor => kind.on_done(self, task, lease).await,
            Served::Aggregator => kind.finish(self, task, lease).await,
        }
    }

    pub(crate) async fn record(&self, job: &str) -> Result<JobRecord, PlatformError> {
        self.job_store().get(job).await?.ok_or_else(|| PlatformError::NotFound(job.into()))
    }

    /// True if the job has ended (cancelled, failed, done) or no longer exists.
    pub(crate) async fn ended(&self, job: &str) -> Result<bool, PlatformError> {
        Ok(self.job_store().get(job).await?.is_none_or(|r| r.state.is_terminal()))
    }
}

//! In-process queue for embedded mode: the same semantics as Redis, behind a mutex.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use tokio::sync::Notify;

use crate::{check_kind, check_payload, FailOutcome, Lease, Queue, QueueConfig, QueueError, QueueStats, TaskMessage};

struct Held {
    consumer: String,
    token: u64,
    since: Instant,
    deliveries: u32,
    enqueued: Instant,
    task: TaskMessage,
}

#[derive(Default)]
struct Kind {
    ready: VecDeque<(u64, Instant, u32, TaskMessage)>,
    held: HashMap<u64, Held>,
    delayed: Vec<(Instant, TaskMessage)>,
    /// Dead letters with their sequence numbers.
    dead: Vec<(u64, TaskMessage, String)>,
    /// Dead letters ever (the last sequence number given).
    dead_lettered: u64,
    completed: u64,
    busy: Duration,
}

impl Kind {
    /// Removes `job_id`'s waiting and delayed messages (held ones stay). Returns how many.
    fn purge(&mut self, job_id: &str) -> u64 {
        let before = self.ready.len() + self.delayed.len();
        self.ready.retain(|r| r.3.job_id != job_id);
        self.delayed.retain(|d| d.1.job_id != job_id);
        (before - self.ready.len() - self.delayed.len()) as u64
    }

    /// Dead-letters `task` with `reason`, counted, keeping the newest [`crate::DEAD_LETTERS_KEPT`].
    fn bury(&mut self, task: TaskMessage, reason: &str) {
        self.dead_lettered += 1;
        self.dead.push((self.dead_lettered, task, reason.to_string()));
        trim_dead(&mut self.dead);
    }
}

#[derive(Default)]
struct State {
    kinds: HashMap<String, Kind>,
    /// `kind/task id` enqueued once, per job.
    once: HashMap<String, std::collections::HashSet<String>>,
    next_id: u64,
    fence: u64,
}

/// The in-process [`Queue`].
pub struct MemoryQueue {
    config: QueueConfig,
    state: Mutex<State>,
    notify: Notify,
}

impl MemoryQueue {
    pub fn new(config: QueueConfig) -> Self {
        Self { config, state: Mutex::new(State::default()), notify: Notify::new() }
    }

    /// One non-blocking claim attempt.
    fn try_claim(&self, kind: &str, consumer: &str) -> Option<Lease> {
        let mut st = self.state.lock().expect("queue mutex");
        let now = Instant::now();
        st.fence += 1;
        let token = st.fence;
        let k = st.kinds.entry(kind.to_string()).or_default();
        // Promote due retries.
        let (due, waiting): (Vec<_>, Vec<_>) = k.delayed.drain(..).partition(|(t, _)| *t <= now);
        k.delayed = waiting;
        for (_, task) in due {
            k.ready.push_back((u64::MAX, now, 0, task));
        }
        // Redeliver an expired lease first.
        let expired = k
            .held
            .iter()
            .filter(|(_, h)| now.duration_since(h.since) >= self.config.visibility_timeout)
            .map(|(id, _)| *id)
            .min();
        let (id, enqueued, deliveries, task) = if let Some(id) = expired {
            let h = k.held.remove(&id).expect("present");
            (id, h.enqueued, h.deliveries, h.task)
        } else {
            k.ready.pop_front()?
        };
        let deliveries = deliveries + 1;
        let attempt = task.failures + deliveries;
        if attempt > self.config.max_attempts {
            k.bury(task, "lease expired on the last attempt");
            drop(st);
            return self.try_claim(kind, consumer);
        }
        let id = if id == u64::MAX {
            st.next_id += 1;
            st.next_id
        } else {
            id
        };
        let k = st.kinds.get_mut(kind).expect("present");
        k.held.insert(
            id,
            Held { consumer: consumer.to_string(), token, since: now, deliveries, enqueued, task: task.clone() },
        );
        Some(Lease { kind: kind.to_string(), message_id: id.to_string(), consumer: consumer.to_string(), token, attempt, task })
    }

    /// Removes the held message of `lease` if the lease is current.
    fn take_held(&self, st: &mut State, lease: &Lease) -> Result<Held, QueueError> {
        let id: u64 = lease.message_id.parse().map_err(|_| QueueError::StaleLease)?;
        let k = st.kinds.get_mut(&lease.kind).ok_or(QueueError::StaleLease)?;
        match k.held.get(&id) {
            Some(h) if h.token == lease.token && h.consumer == lease.consumer => Ok(k.held.remove(&id).expect("present")),
            _ => Err(QueueError::StaleLease),
        }
    }
}

#[async_trait]
impl Queue for MemoryQueue {
    async fn enqueue(&self, kind: &str, task: TaskMessage) -> Result<(), QueueError> {
        check_kind(kind)?;
        check_payload(&task)?;
        {
            let mut st = self.state.lock().expect("queue mutex");
            st.kinds.entry(kind.to_string()).or_default().ready.push_back((u64::MAX, Instant::now(), 0, task));
        }
        self.notify.notify_waiters();
        Ok(())
    }

    async fn claim(&self, kind: &str, consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        self.claim_any(&[kind], consumer, wait).await
    }

    async fn claim_any(&self, kinds: &[&str], consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        for kind in kinds {
            check_kind(kind)?;
        }
        let deadline = Instant::now() + wait;
        loop {
            let notified = self.notify.notified();
            for kind in kinds {
                if let Some(l) = self.try_claim(kind, consumer) {
                    return Ok(Some(l));
                }
            }
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            // Wake on enqueue, or look again for expiring leases and due retries (in memory: no
            // round trips).
            let _ = tokio::time::timeout((deadline - now).min(Duration::from_millis(20)), notified).await;
        }
    }

    async fn complete(&self, lease: &Lease) -> Result<(), QueueError> {
        let mut st = self.state.lock().expect("queue mutex");
        self.take_held(&mut st, lease).map(|_| ())
    }

    async fn complete_with(&self, lease: &Lease, then: &[(&str, TaskMessage)], busy: Duration) -> Result<(), QueueError> {
        for (kind, m) in then {
            check_kind(kind)?;
            check_payload(m)?;
        }
        {
            let mut st = self.state.lock().expect("queue mutex");
            self.take_held(&mut st, lease)?;
            let k = st.kinds.entry(lease.kind.clone()).or_default();
            k.completed += 1;
            k.busy += busy;
            for (kind, m) in then {
                st.kinds.entry(kind.to_string()).or_default().ready.push_back((u64::MAX, Instant::now(), 0, m.clone()));
            }
        }
        if !then.is_empty() {
            self.notify.notify_waiters();
        }
        Ok(())
    }

    fn visibility_timeout(&self) -> Duration {
        self.config.visibility_timeout
    }

    async fn extend(&self, lease: &Lease) -> Result<(), QueueError> {
        let mut st = self.state.lock().expect("queue mutex");
        let id: u64 = lease.message_id.parse().map_err(|_| QueueError::StaleLease)?;
        let k = st.kinds.get_mut(&lease.kind).ok_or(QueueError::StaleLease)?;
        match k.held.get_mut(&id) {
            Some(h) if h.token == lease.token && h.consumer == lease.consumer => {
                h.since = Instant::now();
                Ok(())
            }
            _ => Err(QueueError::StaleLease),
        }
    }

    async fn fail(&self, lease: &Lease, reason: &str) -> Result<FailOutcome, QueueError> {
        let outcome = {
            let mut st = self.state.lock().expect("queue mutex");
            let h = self.take_held(&mut st, lease)?;
            let k = st.kinds.get_mut(&lease.kind).expect("present");
            if lease.attempt >= self.config.max_attempts {
                k.bury(h.task, reason);
                FailOutcome::DeadLettered
            } else {
                let mut task = h.task;
                task.failures = lease.attempt;
                let delay = self.config.backoff(lease.attempt);
                k.delayed.push((Instant::now() + delay, task));
                FailOutcome::Retried { delay }
            }
        };
        Ok(outcome)
    }

    async fn release(&self, lease: &Lease) -> Result<(), QueueError> {
        {
            let mut st = self.state.lock().expect("queue mutex");
            let h = self.take_held(&mut st, lease)?;
            let mut task = h.task;
            // The released delivery does not count as an attempt.
            task.failures = lease.attempt - 1;
            st.kinds.get_mut(&lease.kind).expect("present").ready.push_front((u64::MAX, h.enqueued, 0, task));
        }
        self.notify.notify_waiters();
        Ok(())
    }

    async fn stats(&self, kind: &str) -> Result<QueueStats, QueueError> {
        let st = self.state.lock().expect("queue mutex");
        let Some(k) = st.kinds.get(kind) else { return Ok(QueueStats::default()) };
        let now = Instant::now();
        let oldest = k.ready.iter().map(|r| r.1).chain(k.held.values().map(|h| h.enqueued)).min();
        Ok(QueueStats {
            pending: k.ready.len() as u64,
            running: k.held.len() as u64,
            delayed: k.delayed.len() as u64,
            dead: k.dead.len() as u64,
            dead_lettered: k.dead_lettered,
            oldest_age: oldest.map(|t| now.duration_since(t)),
            completed: k.completed,
            busy: k.busy,
        })
    }

    async fn record_throughput(&self, kind: &str, busy: Duration) -> Result<(), QueueError> {
        check_kind(kind)?;
        let mut st = self.state.lock().expect("queue mutex");
        let k = st.kinds.entry(kind.to_string()).or_default();
        k.completed += 1;
        k.busy += busy;
        Ok(())
    }

    async fn dead_letters(&self, kind: &str) -> Result<Vec<(TaskMessage, String)>, QueueError> {
        let st = self.state.lock().expect("queue mutex");
        Ok(st.kinds.get(kind).map(|k| k.dead.iter().map(|(_, t, r)| (t.clone(), r.clone())).collect()).unwrap_or_default())
    }

    async fn dead_letters_after(&self, kind: &str, after: Option<&str>, count: usize) -> Result<Vec<crate::DeadLetter>, QueueError> {
        check_kind(kind)?;
        let after = match after {
            None => 0,
            Some(a) => a.parse::<u64>().map_err(|_| QueueError::Backend(format!("dead letter id {a:?} is not one of this queue's")))?,
        };
        let st = self.state.lock().expect("queue mutex");
        let Some(k) = st.kinds.get(kind) else { return Ok(Vec::new()) };
        Ok(k.dead
            .iter()
            .filter(|(n, _, _)| *n > after)
            .take(count)
            .map(|(n, t, r)| crate::DeadLetter { id: n.to_string(), task: t.clone(), reason: r.clone() })
            .collect())
    }

    async fn clear_dead_letters(&self, kind: &str) -> Result<u64, QueueError> {
        check_kind(kind)?;
        let mut st = self.state.lock().expect("queue mutex");
        Ok(st.kinds.get_mut(kind).map(|k| std::mem::take(&mut k.dead).len() as u64).unwrap_or(0))
    }

    async fn purge_job(&self, kind: &str, job_id: &str) -> Result<u64, QueueError> {
        let mut st = self.state.lock().expect("queue mutex");
        Ok(st.kinds.get_mut(kind).map_or(0, |k| k.purge(job_id)))
    }

    async fn enqueue_once(&self, kind: &str, task: TaskMessage) -> Result<bool, QueueError> {
        check_kind(kind)?;
        check_payload(&task)?;
        {
            let mut st = self.state.lock().expect("queue mutex");
            if !st.once.entry(task.job_id.clone()).or_default().insert(format!("{kind}/{}", task.task_id)) {
                return Ok(false);
            }
            st.kinds.entry(kind.to_string()).or_default().ready.push_back((u64::MAX, Instant::now(), 0, task));
        }
        self.notify.notify_waiters();
        Ok(true)
    }

    async fn forget_job(&self, job_id: &str) -> Result<(), QueueError> {
        self.state.lock().expect("queue mutex").once.remove(job_id);
        Ok(())
    }

    async fn outstanding(&self, kind: &str) -> Result<std::collections::HashMap<String, u64>, QueueError> {
        let st = self.state.lock().expect("queue mutex");
        let mut by_job = std::collections::HashMap::new();
        let Some(k) = st.kinds.get(kind) else { return Ok(by_job) };
        let jobs = k.ready.iter().map(|r| &r.3.job_id).chain(k.held.values().map(|h| &h.task.job_id)).chain(k.delayed.iter().map(|d| &d.1.job_id));
        for job in jobs {
            *by_job.entry(job.clone()).or_insert(0) += 1;
        }
        Ok(by_job)
    }

    async fn purge_all(&self, job_id: &str) -> Result<u64, QueueError> {
        let mut st = self.state.lock().expect("queue mutex");
        Ok(st.kinds.values_mut().map(|k| k.purge(job_id)).sum())
    }

    async fn job_has_tasks(&self, job_id: &str) -> Result<bool, QueueError> {
        let st = self.state.lock().expect("queue mutex");
        Ok(st.kinds.values().any(|k| {
            k.ready.iter().any(|r| r.3.job_id == job_id)
                || k.held.values().any(|h| h.task.job_id == job_id)
                || k.delayed.iter().any(|d| d.1.job_id == job_id)
        }))
    }

    async fn job_tasks(&self, kind: &str, job_id: &str) -> Result<u64, QueueError> {
        let st = self.state.lock().expect("queue mutex");
        let Some(k) = st.kinds.get(kind) else { return Ok(0) };
        let n = k.ready.iter().filter(|r| r.3.job_id == job_id).count()
            + k.held.values().filter(|h| h.task.job_id == job_id).count()
            + k.delayed.iter().filter(|d| d.1.job_id == job_id).count();
        Ok(n as u64)
    }
}

/// Keeps the newest [`crate::DEAD_LETTERS_KEPT`] dead letters.
fn trim_dead<T>(dead: &mut Vec<T>) {
    if dead.len() > crate::DEAD_LETTERS_KEPT {
        let extra = dead.len() - crate::DEAD_LETTERS_KEPT;
        dead.drain(..extra);
    }
}

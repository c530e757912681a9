//! A [`Queue`] that records the order in which tasks are claimed, so a test can read the order a
//! worker served jobs in (an event the queue sees) instead of sampling counters while it runs.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use queue::{FailOutcome, Lease, Queue, QueueError, QueueStats, TaskMessage};

/// Delegates every call to `inner` (including the backends' own `claim_any`,
/// `complete_with` and `enqueue_once_many`) and appends `(kind, job id)` for each claim.
pub struct ClaimLog {
    pub inner: Arc<dyn Queue>,
    claims: Mutex<Vec<(String, String)>>,
}

impl ClaimLog {
    pub fn new(inner: Arc<dyn Queue>) -> Self {
        Self { inner, claims: Mutex::new(Vec::new()) }
    }

    /// The jobs whose `kind` tasks were claimed, in claim order (a redelivery counts again).
    pub fn jobs_claimed(&self, kind: &str) -> Vec<String> {
        self.claims.lock().unwrap().iter().filter(|(k, _)| k == kind).map(|(_, j)| j.clone()).collect()
    }

    fn note(&self, lease: &Option<Lease>) {
        if let Some(l) = lease {
            self.claims.lock().unwrap().push((l.kind.clone(), l.task.job_id.clone()));
        }
    }
}

#[async_trait]
impl Queue for ClaimLog {
    async fn enqueue(&self, kind: &str, task: TaskMessage) -> Result<(), QueueError> {
        self.inner.enqueue(kind, task).await
    }
    async fn claim(&self, kind: &str, consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        let lease = self.inner.claim(kind, consumer, wait).await?;
        self.note(&lease);
        Ok(lease)
    }
    async fn claim_any(&self, kinds: &[&str], consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        let lease = self.inner.claim_any(kinds, consumer, wait).await?;
        self.note(&lease);
        Ok(lease)
    }
    async fn complete(&self, lease: &Lease) -> Result<(), QueueError> {
        self.inner.complete(lease).await
    }
    async fn complete_with(&self, lease: &Lease, then: &[(&str, TaskMessage)], busy: Duration) -> Result<(), QueueError> {
        self.inner.complete_with(lease, then, busy).await
    }
    async fn extend(&self, lease: &Lease) -> Result<(), QueueError> {
        self.inner.extend(lease).await
    }
    fn visibility_timeout(&self) -> Duration {
        self.inner.visibility_timeout()
    }
    async fn fail(&self, lease: &Lease, reason: &str) -> Result<FailOutcome, QueueError> {
        self.inner.fail(lease, reason).await
    }
    async fn release(&self, lease: &Lease) -> Result<(), QueueError> {
        self.inner.release(lease).await
    }
    async fn stats(&self, kind: &str) -> Result<QueueStats, QueueError> {
        self.inner.stats(kind).await
    }
    async fn record_throughput(&self, kind: &str, busy: Duration) -> Result<(), QueueError> {
        self.inner.record_throughput(kind, busy).await
    }
    async fn dead_letters(&self, kind: &str) -> Result<Vec<(TaskMessage, String)>, QueueError> {
        self.inner.dead_letters(kind).await
    }
    async fn dead_letters_after(&self, kind: &str, after: Option<&str>, count: usize) -> Result<Vec<queue::DeadLetter>, QueueError> {
        self.inner.dead_letters_after(kind, after, count).await
    }
    async fn clear_dead_letters(&self, kind: &str) -> Result<u64, QueueError> {
        self.inner.clear_dead_letters(kind).await
    }
    async fn purge_job(&self, kind: &str, job_id: &str) -> Result<u64, QueueError> {
        self.inner.purge_job(kind, job_id).await
    }
    async fn purge_all(&self, job_id: &str) -> Result<u64, QueueError> {
        self.inner.purge_all(job_id).await
    }
    async fn enqueue_once(&self, kind: &str, task: TaskMessage) -> Result<bool, QueueError> {
        self.inner.enqueue_once(kind, task).await
    }
    async fn enqueue_once_many(&self, kind: &str, tasks: Vec<TaskMessage>) -> Result<u64, QueueError> {
        self.inner.enqueue_once_many(kind, tasks).await
    }
    async fn forget_job(&self, job_id: &str) -> Result<(), QueueError> {
        self.inner.forget_job(job_id).await
    }
    async fn job_tasks(&self, kind: &str, job_id: &str) -> Result<u64, QueueError> {
        self.inner.job_tasks(kind, job_id).await
    }
    async fn job_has_tasks(&self, job_id: &str) -> Result<bool, QueueError> {
        self.inner.job_has_tasks(job_id).await
    }
    async fn jobs_with_tasks(&self, jobs: &[String]) -> Result<Vec<bool>, QueueError> {
        self.inner.jobs_with_tasks(jobs).await
    }
    async fn outstanding(&self, kind: &str) -> Result<std::collections::HashMap<String, u64>, QueueError> {
        self.inner.outstanding(kind).await
    }
}

//! Fault injection around the real backends: a queue that loses one enqueue or one heartbeat,
//! and an object store whose first read of a key hangs or stalls (an S3 read with no timeout).

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use blobstore::{BlobError, BlobStore};
use bytes::Bytes;
use jobs::{Created, JobError, JobRecord, JobState, JobStore, Limits};
use queue::{FailOutcome, Lease, Queue, QueueError, QueueStats, TaskMessage};

/// A [`Queue`] that fails the `nth` enqueue of `fail_kind` once (a Redis blip mid-planning),
/// optionally loses the first lease of kind `lose_extend_of` it is asked to extend (the lease
/// really goes: it is released, so another worker gets the task, and the holder is told its
/// lease is stale), and counts the messages that went in per `(kind, task id)`.
pub struct FlakyQueue {
    pub inner: Arc<dyn Queue>,
    fail_kind: String,
    fail_nth: u32,
    seen: AtomicU32,
    lose_extend_of: Mutex<Option<String>>,
    pub enqueued: Mutex<HashMap<(String, String), u32>>,
    /// `purge_job` and `purge_all` calls still to fail (a Redis blip in the clean-up after an
    /// ending).
    failing_purges: AtomicU32,
}

impl FlakyQueue {
    pub fn new(inner: Arc<dyn Queue>, fail_kind: &str, fail_nth: u32, lose_extend_of: Option<&str>) -> Self {
        Self {
            inner,
            fail_kind: fail_kind.into(),
            fail_nth,
            seen: AtomicU32::new(0),
            lose_extend_of: Mutex::new(lose_extend_of.map(str::to_string)),
            enqueued: Mutex::new(HashMap::new()),
            failing_purges: AtomicU32::new(0),
        }
    }

    /// The same queue, whose next `n` `purge_job` or `purge_all` calls fail before doing
    /// anything.
    pub fn with_failing_purges(self, n: u32) -> Self {
        self.failing_purges.store(n, Ordering::SeqCst);
        self
    }

    fn count(&self, kind: &str, task: &TaskMessage) {
        *self.enqueued.lock().unwrap().entry((kind.to_string(), task.task_id.clone())).or_default() += 1;
    }

    fn blip(&self, kind: &str) -> Result<(), QueueError> {
        if kind == self.fail_kind && self.seen.fetch_add(1, Ordering::SeqCst) + 1 == self.fail_nth {
            return Err(QueueError::Backend("injected: connection reset".into()));
        }
        Ok(())
    }

    /// Messages that went into `kind`, per task id.
    pub fn copies(&self, kind: &str) -> HashMap<String, u32> {
        self.enqueued.lock().unwrap().iter().filter(|((k, _), _)| k == kind).map(|((_, t), n)| (t.clone(), *n)).collect()
    }
}

#[async_trait]
impl Queue for FlakyQueue {
    async fn enqueue(&self, kind: &str, task: TaskMessage) -> Result<(), QueueError> {
        self.blip(kind)?;
        self.inner.enqueue(kind, task.clone()).await?;
        self.count(kind, &task);
        Ok(())
    }
    async fn claim(&self, kind: &str, consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        self.inner.claim(kind, consumer, wait).await
    }
    async fn complete(&self, lease: &Lease) -> Result<(), QueueError> {
        self.inner.complete(lease).await
    }
    async fn extend(&self, lease: &Lease) -> Result<(), QueueError> {
        let lose = {
            let mut k = self.lose_extend_of.lock().unwrap();
            let hit = k.as_deref() == Some(lease.kind.as_str());
            if hit {
                *k = None;
            }
            hit
        };
        if lose {
            self.inner.release(lease).await?;
            return Err(QueueError::StaleLease);
        }
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
        if self.failing_purges.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Err(QueueError::Backend("injected: purge timed out".into()));
        }
        self.inner.purge_job(kind, job_id).await
    }
    async fn purge_all(&self, job_id: &str) -> Result<u64, QueueError> {
        if self.failing_purges.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1)).is_ok() {
            return Err(QueueError::Backend("injected: purge timed out".into()));
        }
        self.inner.purge_all(job_id).await
    }
    async fn enqueue_once(&self, kind: &str, task: TaskMessage) -> Result<bool, QueueError> {
        self.blip(kind)?;
        let added = self.inner.enqueue_once(kind, task.clone()).await?;
        if added {
            self.count(kind, &task);
        }
        Ok(added)
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

/// What the first `get` of a key ending in `suffix` does.
#[derive(Clone, Copy)]
pub enum FirstRead {
    /// Never returns (a read stuck on a dead connection).
    Hang,
    /// Returns after this long.
    Stall(Duration),
}

pub struct SlowStore {
    pub inner: Arc<dyn BlobStore>,
    suffix: String,
    how: FirstRead,
    armed: AtomicBool,
}

impl SlowStore {
    pub fn new(inner: Arc<dyn BlobStore>, suffix: &str, how: FirstRead) -> Self {
        Self { inner, suffix: suffix.into(), how, armed: AtomicBool::new(true) }
    }
}

#[async_trait]
impl BlobStore for SlowStore {
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        self.inner.put(key, data).await
    }
    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        if key.ends_with(&self.suffix) && self.armed.swap(false, Ordering::SeqCst) {
            match self.how {
                FirstRead::Hang => std::future::pending::<()>().await,
                FirstRead::Stall(d) => tokio::time::sleep(d).await,
            }
        }
        self.inner.get(key).await
    }
    /// A ranged read of the key is its read as much as a whole one.
    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        if key.ends_with(&self.suffix) && self.armed.swap(false, Ordering::SeqCst) {
            match self.how {
                FirstRead::Hang => std::future::pending::<()>().await,
                FirstRead::Stall(d) => tokio::time::sleep(d).await,
            }
        }
        self.inner.get_range(key, start, len).await
    }
    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        self.inner.size(key).await
    }
    async fn copy(&self, from: &str, to: &str) -> Result<(), BlobError> {
        self.inner.copy(from, to).await
    }
    async fn exists(&self, key: &str) -> Result<bool, BlobError> {
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        self.inner.list(prefix).await
    }
    async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, BlobError> {
        self.inner.list_objects(prefix).await
    }
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        self.inner.list_dirs(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        self.inner.delete(key).await
    }
}

/// An object store that goes away: the first `get` of a key ending in `suffix` starts an outage
/// of `length`, during which every call fails as an unreachable S3 server's would.
pub struct Outage {
    pub inner: Arc<dyn BlobStore>,
    suffix: String,
    length: Duration,
    until: Mutex<Option<std::time::Instant>>,
    pub refused: AtomicU32,
}

impl Outage {
    pub fn new(inner: Arc<dyn BlobStore>, suffix: &str, length: Duration) -> Self {
        Self { inner, suffix: suffix.into(), length, until: Mutex::new(None), refused: AtomicU32::new(0) }
    }

    fn down(&self, key: &str, starts: bool) -> Result<(), BlobError> {
        let mut until = self.until.lock().unwrap();
        if until.is_none() && starts && key.ends_with(&self.suffix) {
            *until = Some(std::time::Instant::now() + self.length);
        }
        match *until {
            Some(t) if std::time::Instant::now() < t => {
                self.refused.fetch_add(1, Ordering::SeqCst);
                Err(BlobError::Backend("injected: connection refused".into()))
            }
            _ => Ok(()),
        }
    }
}

#[async_trait]
impl BlobStore for Outage {
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        self.down(key, false)?;
        self.inner.put(key, data).await
    }
    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        self.down(key, true)?;
        self.inner.get(key).await
    }
    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        self.down(key, true)?;
        self.inner.get_range(key, start, len).await
    }
    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        self.down(key, false)?;
        self.inner.size(key).await
    }
    async fn copy(&self, from: &str, to: &str) -> Result<(), BlobError> {
        self.down(from, false)?;
        self.inner.copy(from, to).await
    }
    async fn exists(&self, key: &str) -> Result<bool, BlobError> {
        self.down(key, false)?;
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        self.down(prefix, false)?;
        self.inner.list(prefix).await
    }
    async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, BlobError> {
        self.down(prefix, false)?;
        self.inner.list_objects(prefix).await
    }
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        self.down(prefix, false)?;
        self.inner.list_dirs(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        self.down(key, false)?;
        self.inner.delete(key).await
    }
}

/// An object store that counts per key: whole-object reads, bytes read by ranged reads, and
/// whole-object writes; and the entries its listings returned.
pub struct Reads {
    pub inner: Arc<dyn BlobStore>,
    whole: Mutex<std::collections::BTreeMap<String, u64>>,
    ranged: Mutex<std::collections::BTreeMap<String, u64>>,
    puts: Mutex<std::collections::BTreeMap<String, u64>>,
    listed: std::sync::atomic::AtomicU64,
}

impl Reads {
    pub fn new(inner: Arc<dyn BlobStore>) -> Self {
        Self { inner, whole: Mutex::default(), ranged: Mutex::default(), puts: Mutex::default(), listed: Default::default() }
    }
    /// Entries (keys, objects, folders) listings have returned so far.
    pub fn listed(&self) -> u64 {
        self.listed.load(std::sync::atomic::Ordering::SeqCst)
    }
    /// How many times `key` was written whole (`put`, not an upload).
    pub fn puts(&self, key: &str) -> u64 {
        self.puts.lock().unwrap().get(key).copied().unwrap_or(0)
    }
    /// How many times `key` was read whole.
    pub fn whole(&self, key: &str) -> u64 {
        self.whole.lock().unwrap().get(key).copied().unwrap_or(0)
    }
    /// Bytes of `key` read by ranged reads.
    pub fn ranged(&self, key: &str) -> u64 {
        self.ranged.lock().unwrap().get(key).copied().unwrap_or(0)
    }
}

#[async_trait]
impl BlobStore for Reads {
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        *self.puts.lock().unwrap().entry(key.to_string()).or_default() += 1;
        self.inner.put(key, data).await
    }
    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        *self.whole.lock().unwrap().entry(key.to_string()).or_default() += 1;
        self.inner.get(key).await
    }
    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        let got = self.inner.get_range(key, start, len).await?;
        *self.ranged.lock().unwrap().entry(key.to_string()).or_default() += got.len() as u64;
        Ok(got)
    }
    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        self.inner.size(key).await
    }
    async fn copy(&self, from: &str, to: &str) -> Result<(), BlobError> {
        self.inner.copy(from, to).await
    }
    async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn blobstore::Upload + 'a>, BlobError> {
        self.inner.upload(key).await
    }
    async fn exists(&self, key: &str) -> Result<bool, BlobError> {
        self.inner.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let keys = self.inner.list(prefix).await?;
        self.listed.fetch_add(keys.len() as u64, std::sync::atomic::Ordering::SeqCst);
        Ok(keys)
    }
    async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, BlobError> {
        let objects = self.inner.list_objects(prefix).await?;
        self.listed.fetch_add(objects.len() as u64, std::sync::atomic::Ordering::SeqCst);
        Ok(objects)
    }
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let dirs = self.inner.list_dirs(prefix).await?;
        self.listed.fetch_add(dirs.len() as u64, std::sync::atomic::Ordering::SeqCst);
        Ok(dirs)
    }
    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        self.inner.delete(key).await
    }
}

/// A job store whose next `create` runs and then answers with a backend error, as when the
/// reply of the create script is lost (a reply timeout, a reset connection): the job exists,
/// and its submitter was told it failed.
pub struct LostCreateReply {
    pub inner: Arc<dyn JobStore>,
    armed: AtomicBool,
}

impl LostCreateReply {
    pub fn new(inner: Arc<dyn JobStore>) -> Self {
        Self { inner, armed: AtomicBool::new(true) }
    }
}

#[async_trait]
impl JobStore for LostCreateReply {
    async fn create_limited(&self, rec: &JobRecord, idempotency: Option<(&str, &str)>, limits: Limits) -> Result<Created, JobError> {
        let r = self.inner.create_limited(rec, idempotency, limits).await;
        if r.is_ok() && self.armed.swap(false, Ordering::SeqCst) {
            return Err(JobError::Backend("injected: the reply was lost".into()));
        }
        r
    }
    async fn get(&self, id: &str) -> Result<Option<JobRecord>, JobError> {
        self.inner.get(id).await
    }
    async fn list(&self, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        self.inner.list(offset, limit).await
    }
    async fn list_tenant(&self, tenant: &str, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        self.inner.list_tenant(tenant, offset, limit).await
    }
    async fn transition(&self, id: &str, to: JobState, message: &str) -> Result<bool, JobError> {
        self.inner.transition(id, to, message).await
    }
    async fn end(&self, id: &str, to: JobState, message: &str, ttl: Duration) -> Result<bool, JobError> {
        self.inner.end(id, to, message, ttl).await
    }
    async fn unclean(&self, limit: u64) -> Result<Vec<(String, u64)>, JobError> {
        self.inner.unclean(limit).await
    }
    async fn is_unclean(&self, id: &str) -> Result<bool, JobError> {
        self.inner.is_unclean(id).await
    }
    async fn mark_cleaned(&self, id: &str) -> Result<(), JobError> {
        self.inner.mark_cleaned(id).await
    }
    async fn task_done(&self, id: &str, kind: &str, task: &str) -> Result<bool, JobError> {
        self.inner.task_done(id, kind, task).await
    }
    async fn is_done(&self, id: &str, task: &str) -> Result<bool, JobError> {
        self.inner.is_done(id, task).await
    }
    async fn mark_released(&self, id: &str, task: &str) -> Result<bool, JobError> {
        self.inner.mark_released(id, task).await
    }
    async fn is_released(&self, id: &str, task: &str) -> Result<bool, JobError> {
        self.inner.is_released(id, task).await
    }
    async fn release_mark(&self, id: &str, step: &str) -> Result<u64, JobError> {
        self.inner.release_mark(id, step).await
    }
    async fn raise_release_mark(&self, id: &str, step: &str, to: u64) -> Result<(), JobError> {
        self.inner.raise_release_mark(id, step, to).await
    }
    async fn tenant_active(&self, tenant: &str) -> Result<u64, JobError> {
        self.inner.tenant_active(tenant).await
    }
    async fn tenant_hour_tasks(&self, tenant: &str) -> Result<u64, JobError> {
        self.inner.tenant_hour_tasks(tenant).await
    }
    async fn idempotent(&self, tenant: &str, key: &str) -> Result<Option<String>, JobError> {
        self.inner.idempotent(tenant, key).await
    }
    async fn list_active(&self, limit: u64) -> Result<Vec<JobRecord>, JobError> {
        self.inner.list_active(limit).await
    }
    async fn active_page(&self, offset: u64, limit: u64) -> Result<(Vec<jobs::ActiveJob>, Option<u64>), JobError> {
        self.inner.active_page(offset, limit).await
    }
    async fn expire(&self, id: &str, ttl: Duration) -> Result<(), JobError> {
        self.inner.expire(id, ttl).await
    }
    async fn delete(&self, id: &str) -> Result<(), JobError> {
        self.inner.delete(id).await
    }
    async fn charge(&self, tenant: &str, usage: jobs::Usage, item: &str, bytes: u64, max: Option<u64>, expires_ms: Option<u64>) -> Result<Option<u64>, JobError> {
        self.inner.charge(tenant, usage, item, bytes, max, expires_ms).await
    }
    async fn uncharge(&self, tenant: &str, usage: jobs::Usage, item: &str) -> Result<(), JobError> {
        self.inner.uncharge(tenant, usage, item).await
    }
    async fn usage(&self, tenant: &str, usage: jobs::Usage) -> Result<u64, JobError> {
        self.inner.usage(tenant, usage).await
    }
    async fn make_durable(&self) -> Result<(), JobError> {
        self.inner.make_durable().await
    }
}

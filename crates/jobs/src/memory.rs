//! The in-process [`JobStore`] for embedded mode.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use async_trait::async_trait;

use crate::{
    budget_hour, check_idempotency_key, check_record, now_ms, record_charge, task_state_item, ActiveJob, Created, JobError, JobRecord, JobState, JobStore, Limits, Usage,
    LIMIT_ACTIVE, LIMIT_HOURLY_TASKS, LIMIT_RECORD_BYTES, TASK_STATE_RETENTION,
};

/// One tenant's charges of one usage: item → (bytes, expiry ms).
type Charges = HashMap<String, (u64, Option<u64>)>;

#[derive(Default)]
struct Inner {
    jobs: HashMap<String, JobRecord>,
    order: Vec<String>,
    done: HashMap<String, HashSet<String>>,
    released: HashMap<String, HashSet<String>>,
    /// Release marks per job and step.
    marks: HashMap<String, HashMap<String, u64>>,
    idem: HashMap<String, (String, String)>,
    expires: HashMap<String, std::time::Instant>,
    /// Tasks planned per (tenant, clock hour).
    work: HashMap<(String, u64), u64>,
    /// Jobs ended and not cleaned up, with the time they ended (ms).
    unclean: HashMap<String, u64>,
    /// When an ended job's task state goes (see [`TASK_STATE_RETENTION`]).
    task_expires: HashMap<String, std::time::Instant>,
    /// Tenants' charges per usage.
    usage: HashMap<(String, Usage), Charges>,
}

impl Inner {
    /// Drops the jobs whose retention has run out.
    fn sweep(&mut self) {
        let now = std::time::Instant::now();
        let gone: Vec<String> = self.expires.iter().filter(|(_, t)| **t <= now).map(|(id, _)| id.clone()).collect();
        for id in gone {
            self.remove(&id);
        }
        let stale: Vec<String> = self.task_expires.iter().filter(|(_, t)| **t <= now).map(|(id, _)| id.clone()).collect();
        for id in stale {
            self.task_expires.remove(&id);
            self.done.remove(&id);
            self.released.remove(&id);
        }
        let ms = now_ms();
        for charges in self.usage.values_mut() {
            charges.retain(|_, (_, exp)| exp.is_none_or(|e| e > ms));
        }
    }

    /// The total of `tenant`'s charges of `usage` (call [`Inner::sweep`] first).
    fn total(&self, tenant: &str, usage: Usage) -> u64 {
        self.usage.get(&(tenant.to_string(), usage)).map_or(0, |c| c.values().map(|(b, _)| *b).sum())
    }

    fn remove(&mut self, id: &str) {
        if let Some(rec) = self.jobs.get(id) {
            if let Some(c) = self.usage.get_mut(&(rec.tenant.clone(), Usage::Records)) {
                c.remove(id);
                c.remove(&task_state_item(id));
            }
        }
        self.task_expires.remove(id);
        self.jobs.remove(id);
        self.order.retain(|j| j != id);
        self.done.remove(id);
        self.released.remove(id);
        self.marks.remove(id);
        self.idem.retain(|_, (j, _)| j != id);
        self.expires.remove(id);
        self.unclean.remove(id);
    }

    /// Moves `id` to `to` (see [`JobStore::transition`]); with a `ttl`, the retention too.
    fn transition(&mut self, id: &str, to: JobState, message: &str, ttl: Option<std::time::Duration>) -> Result<bool, JobError> {
        self.sweep();
        let rec = self.jobs.get_mut(id).ok_or_else(|| JobError::NotFound(id.into()))?;
        if !rec.state.can_move(to) {
            return Ok(false);
        }
        let now = now_ms();
        rec.state = to;
        rec.message = message.into();
        rec.updated_ms = now;
        if to.is_terminal() {
            self.unclean.insert(id.to_string(), now);
            if let Some(ttl) = ttl {
                let sets = ttl.min(TASK_STATE_RETENTION);
                self.expires.insert(id.to_string(), std::time::Instant::now() + ttl);
                self.task_expires.insert(id.to_string(), std::time::Instant::now() + sets);
                let tenant = rec.tenant.clone();
                if let Some(c) = self.usage.get_mut(&(tenant, Usage::Records)) {
                    for (item, after) in [(id.to_string(), ttl), (task_state_item(id), sets)] {
                        if let Some((_, exp)) = c.get_mut(&item) {
                            *exp = Some(now + after.as_millis() as u64);
                        }
                    }
                }
            }
        }
        Ok(true)
    }
}

#[derive(Default)]
pub struct MemoryJobStore {
    inner: Mutex<Inner>,
}

impl MemoryJobStore {
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[async_trait]
impl JobStore for MemoryJobStore {
    async fn create_limited(&self, rec: &JobRecord, idempotency: Option<(&str, &str)>, limits: Limits) -> Result<Created, JobError> {
        check_record(rec)?;
        let mut g = self.lock();
        g.sweep();
        if let Some((key, fp)) = idempotency {
            check_idempotency_key(key)?;
            if let Some((job, old_fp)) = g.idem.get(&crate::tenant_idempotency_key(&rec.tenant, key)) {
                return if old_fp == fp {
                    Ok(Created::Existing(job.clone()))
                } else {
                    Err(JobError::IdempotencyConflict { key: key.into(), job: job.clone() })
                };
            }
        }
        if g.jobs.contains_key(&rec.id) {
            return Err(JobError::AlreadyExists(rec.id.clone()));
        }
        if let (Some(max), false) = (limits.max_active, rec.tenant.is_empty()) {
            let active = g.jobs.values().filter(|r| r.tenant == rec.tenant && !r.state.is_terminal()).count() as u64;
            if active >= max {
                return Err(JobError::LimitReached { limit: LIMIT_ACTIVE, max });
            }
        }
        if !rec.tenant.is_empty() {
            let hour = budget_hour(now_ms());
            g.work.retain(|(_, h), _| *h + 1 >= hour);
            let planned = rec.progress().total;
            let used = g.work.get(&(rec.tenant.clone(), hour)).copied().unwrap_or(0);
            if let Some(max) = limits.max_tasks_per_hour {
                if used.saturating_add(planned) > max {
                    return Err(JobError::LimitReached { limit: LIMIT_HOURLY_TASKS, max });
                }
            }
            let (record_bytes, task_bytes) = record_charge(rec);
            if let Some(max) = limits.max_record_bytes {
                if g.total(&rec.tenant, Usage::Records).saturating_add(record_bytes).saturating_add(task_bytes) > max {
                    return Err(JobError::LimitReached { limit: LIMIT_RECORD_BYTES, max });
                }
            }
            g.work.insert((rec.tenant.clone(), hour), used.saturating_add(planned));
            let charges = g.usage.entry((rec.tenant.clone(), Usage::Records)).or_default();
            charges.insert(rec.id.clone(), (record_bytes, None));
            charges.insert(task_state_item(&rec.id), (task_bytes, None));
        }
        if let Some((key, fp)) = idempotency {
            g.idem.insert(crate::tenant_idempotency_key(&rec.tenant, key), (rec.id.clone(), fp.into()));
        }
        let mut rec = rec.clone();
        rec.idempotency_key = idempotency.map(|(k, _)| k.to_string()).unwrap_or_default();
        rec.state = JobState::Queued;
        rec.message.clear();
        for c in rec.tasks.values_mut() {
            c.done = 0;
        }
        g.order.push(rec.id.clone());
        g.jobs.insert(rec.id.clone(), rec);
        Ok(Created::New)
    }

    async fn get(&self, id: &str) -> Result<Option<JobRecord>, JobError> {
        let mut g = self.lock();
        g.sweep();
        Ok(g.jobs.get(id).cloned())
    }

    async fn list_tenant(&self, tenant: &str, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        let mut g = self.lock();
        g.sweep();
        let mine: Vec<&String> = g.order.iter().rev().filter(|id| g.jobs.get(*id).is_some_and(|r| r.tenant == tenant)).collect();
        let recs: Vec<JobRecord> = mine.iter().skip(offset as usize).take(limit as usize).filter_map(|id| g.jobs.get(*id).cloned()).collect();
        let next = offset + recs.len() as u64;
        Ok((recs, (next < mine.len() as u64).then_some(next)))
    }

    async fn list(&self, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        let mut g = self.lock();
        g.sweep();
        let ids: Vec<&String> = g.order.iter().rev().skip(offset as usize).take(limit as usize).collect();
        let recs: Vec<JobRecord> = ids.iter().filter_map(|id| g.jobs.get(*id).cloned()).collect();
        let next = offset + ids.len() as u64;
        Ok((recs, (next < g.order.len() as u64).then_some(next)))
    }

    async fn transition(&self, id: &str, to: JobState, message: &str) -> Result<bool, JobError> {
        self.lock().transition(id, to, message, None)
    }

    async fn end(&self, id: &str, to: JobState, message: &str, ttl: std::time::Duration) -> Result<bool, JobError> {
        crate::check_ending(to)?;
        self.lock().transition(id, to, message, Some(ttl))
    }

    async fn unclean(&self, limit: u64) -> Result<Vec<(String, u64)>, JobError> {
        let mut g = self.lock();
        g.sweep();
        let mut v: Vec<(String, u64)> = g.unclean.iter().map(|(id, ms)| (id.clone(), *ms)).collect();
        v.sort_by(|a, b| (a.1, &a.0).cmp(&(b.1, &b.0)));
        v.truncate(limit.min(usize::MAX as u64) as usize);
        Ok(v)
    }

    async fn is_unclean(&self, id: &str) -> Result<bool, JobError> {
        let mut g = self.lock();
        g.sweep();
        Ok(g.unclean.contains_key(id))
    }

    async fn mark_cleaned(&self, id: &str) -> Result<(), JobError> {
        self.lock().unclean.remove(id);
        Ok(())
    }

    async fn task_done(&self, id: &str, kind: &str, task: &str) -> Result<bool, JobError> {
        let mut g = self.lock();
        if !g.jobs.contains_key(id) {
            return Err(JobError::NotFound(id.into()));
        }
        if !g.done.entry(id.into()).or_default().insert(task.into()) {
            return Ok(false);
        }
        let rec = g.jobs.get_mut(id).expect("checked");
        rec.tasks.entry(kind.into()).or_default().done += 1;
        rec.updated_ms = now_ms();
        Ok(true)
    }

    async fn is_done(&self, id: &str, task: &str) -> Result<bool, JobError> {
        Ok(self.lock().done.get(id).is_some_and(|s| s.contains(task)))
    }

    async fn mark_released(&self, id: &str, task: &str) -> Result<bool, JobError> {
        let mut g = self.lock();
        if !g.jobs.contains_key(id) {
            return Err(JobError::NotFound(id.into()));
        }
        Ok(g.released.entry(id.into()).or_default().insert(task.into()))
    }

    async fn is_released(&self, id: &str, task: &str) -> Result<bool, JobError> {
        Ok(self.lock().released.get(id).is_some_and(|s| s.contains(task)))
    }

    async fn release_mark(&self, id: &str, step: &str) -> Result<u64, JobError> {
        let mut g = self.lock();
        g.sweep();
        if !g.jobs.contains_key(id) {
            return Err(JobError::NotFound(id.into()));
        }
        Ok(g.marks.get(id).and_then(|m| m.get(step)).copied().unwrap_or(0))
    }

    async fn raise_release_mark(&self, id: &str, step: &str, to: u64) -> Result<(), JobError> {
        let mut g = self.lock();
        g.sweep();
        if !g.jobs.contains_key(id) {
            return Err(JobError::NotFound(id.into()));
        }
        let mark = g.marks.entry(id.into()).or_default().entry(step.into()).or_insert(0);
        *mark = (*mark).max(to);
        Ok(())
    }

    async fn idempotent(&self, tenant: &str, key: &str) -> Result<Option<String>, JobError> {
        check_idempotency_key(key)?;
        Ok(self.lock().idem.get(&crate::tenant_idempotency_key(tenant, key)).map(|(job, _)| job.clone()))
    }

    async fn tenant_hour_tasks(&self, tenant: &str) -> Result<u64, JobError> {
        if tenant.is_empty() {
            return Ok(0);
        }
        let hour = budget_hour(now_ms());
        Ok(self.lock().work.get(&(tenant.to_string(), hour)).copied().unwrap_or(0))
    }

    async fn tenant_active(&self, tenant: &str) -> Result<u64, JobError> {
        if tenant.is_empty() {
            return Ok(0);
        }
        let mut g = self.lock();
        g.sweep();
        Ok(g.jobs.values().filter(|r| r.tenant == tenant && !r.state.is_terminal()).count() as u64)
    }

    async fn list_active(&self, limit: u64) -> Result<Vec<JobRecord>, JobError> {
        let g = self.lock();
        Ok(g.order
            .iter()
            .filter_map(|id| g.jobs.get(id))
            .filter(|r| !r.state.is_terminal())
            .take(limit as usize)
            .cloned()
            .collect())
    }

    async fn active_page(&self, offset: u64, limit: u64) -> Result<(Vec<ActiveJob>, Option<u64>), JobError> {
        let g = self.lock();
        let active: Vec<&JobRecord> = g.order.iter().filter_map(|id| g.jobs.get(id)).filter(|r| !r.state.is_terminal()).collect();
        let page: Vec<ActiveJob> = active.iter().skip(offset as usize).take(limit as usize).map(|r| ActiveJob::from(*r)).collect();
        let next = offset + page.len() as u64;
        Ok((page, (limit > 0 && (next as usize) < active.len()).then_some(next)))
    }

    async fn expire(&self, id: &str, ttl: std::time::Duration) -> Result<(), JobError> {
        let mut g = self.lock();
        if g.jobs.contains_key(id) {
            g.expires.insert(id.to_string(), std::time::Instant::now() + ttl);
        }
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), JobError> {
        self.lock().remove(id);
        Ok(())
    }

    async fn charge(&self, tenant: &str, usage: Usage, item: &str, bytes: u64, max: Option<u64>, expires_ms: Option<u64>) -> Result<Option<u64>, JobError> {
        crate::check_charge(tenant, usage, item)?;
        if tenant.is_empty() {
            return Ok(None);
        }
        let mut g = self.lock();
        g.sweep();
        let total = g.total(tenant, usage);
        let charges = g.usage.entry((tenant.to_string(), usage)).or_default();
        let old = charges.get(item).map(|(b, _)| *b);
        if let Some(max) = max {
            if old.is_none_or(|o| bytes > o) && (total - old.unwrap_or(0)).saturating_add(bytes) > max {
                return Err(JobError::LimitReached { limit: usage.limit(), max });
            }
        }
        charges.insert(item.to_string(), (bytes, expires_ms));
        Ok(old)
    }

    async fn uncharge(&self, tenant: &str, usage: Usage, item: &str) -> Result<(), JobError> {
        crate::check_charge(tenant, usage, item)?;
        if let Some(c) = self.lock().usage.get_mut(&(tenant.to_string(), usage)) {
            c.remove(item);
        }
        Ok(())
    }

    async fn usage(&self, tenant: &str, usage: Usage) -> Result<u64, JobError> {
        let mut g = self.lock();
        g.sweep();
        Ok(g.total(tenant, usage))
    }
}

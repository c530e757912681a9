//! The **reconciler** ([`Platform::reconcile_once`], every `reconcile_every` on each executor;
//! leader-free, since everything it does is idempotent). Each round it
//!
//! * fails the job of every new dead-lettered task with the task's reason (a lease that expired
//!   on its last attempt included). Dead letters are read by a cursor per task kind, the id of
//!   the last one seen ([`queue::Queue::dead_letters_after`]), so a dead-letter queue trimmed at
//!   its cap still shows every new one; a process starts from the oldest kept;
//! * finishes the clean-up of jobs that ended more than `reconcile_grace` ago and are still
//!   listed as not cleaned ([`jobs::JobStore::unclean`]): a clean-up cut by an error or a crash
//!   (see [`crate::lifecycle`]);
//! * looks at every job that has not ended, paging through them `reconcile_batch` at a time
//!   ([`jobs::JobStore::active_page`], records without their spec): one with nothing queued,
//!   running or delayed and no progress for `reconcile_grace`, seen so on two rounds in a row,
//!   is re-driven (a `queued` job: its plan task is enqueued again) or failed with the reason
//!   (a `running` job: its tasks were lost). Whether an idle job has anything queued is read
//!   from the queue's per-job task index ([`queue::Queue::jobs_with_tasks`], O(1) per job that
//!   has, pipelined), so a round costs O(active jobs), however long the queues. Before it acts on a job
//!   the index says is empty (on its second round), the reconciler confirms it with one walk
//!   of each task kind's queue that such jobs use ([`queue::Queue::outstanding`]): a message
//!   the index does not know (enqueued by a version before it) can never get a live job
//!   failed. That walk runs only in a round that acts, not in every round some job is idle.
//!
//! One job whose clean-up fails (or one malformed dead letter) does not stop the round: it is
//! logged, counted (`prover_backend_errors_total{role="reconciler"}`) and tried again next round.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use jobs::JobState;
use tokio::sync::watch;

use crate::kinds::PLAN;
use crate::planner::plan_message;
use crate::{Platform, PlatformError};

/// Dead letters read per call.
const DEAD_PAGE: usize = 1000;

/// What the reconciler remembers between rounds.
#[derive(Default)]
pub struct ReconcileState {
    /// Per task kind, the id of the last dead letter handled.
    dead_seen: HashMap<&'static str, String>,
    /// Jobs that looked stalled last round, with their `updated_ms` then.
    suspects: HashMap<String, u64>,
}

/// What one reconciler round did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reconciled {
    pub failed: Vec<String>,
    pub redriven: Vec<String>,
    /// Jobs whose clean-up after their ending this round finished.
    pub cleaned: Vec<String>,
}

impl Platform {
    pub(crate) async fn run_reconciler(self: Arc<Self>, mut stop: watch::Receiver<bool>) {
        let mut state = ReconcileState::default();
        while !*stop.borrow() {
            if let Err(e) = self.reconcile_once(&mut state).await {
                ::metrics::counter!("prover_backend_errors_total", "role" => "reconciler").increment(1);
                tracing::warn!(error = %e, "reconciler round failed");
            }
            tokio::select! {
                _ = tokio::time::sleep(self.config.reconcile_every) => {}
                _ = stop.changed() => {}
            }
        }
    }

    /// One reconciler round (see the module doc).
    pub async fn reconcile_once(&self, st: &mut ReconcileState) -> Result<Reconciled, PlatformError> {
        let mut done = Reconciled::default();
        for t in self.registry().task_kinds() {
            loop {
                let page = self.queue().dead_letters_after(t.name, st.dead_seen.get(t.name).map(String::as_str), DEAD_PAGE).await?;
                let Some(last) = page.last() else { break };
                let last = last.id.clone();
                let full = page.len() == DEAD_PAGE;
                for d in page {
                    if d.task.job_id.is_empty() {
                        tracing::warn!(kind = t.name, id = %d.id, reason = %d.reason, "malformed dead letter skipped");
                        continue;
                    }
                    if !self.ended(&d.task.job_id).await? {
                        self.fail_job(&d.task.job_id, &format!("task {} ({}) dead-lettered: {}", d.task.task_id, t.name, d.reason)).await?;
                        done.failed.push(d.task.job_id.clone());
                    }
                }
                st.dead_seen.insert(t.name, last);
                if !full {
                    break;
                }
            }
        }
        let now = jobs::now_ms();
        let grace = self.config.reconcile_grace.as_millis() as u64;
        for (job, ended_ms) in self.job_store().unclean(self.config.reconcile_batch).await? {
            if now.saturating_sub(ended_ms) < grace {
                // Most likely its ending's own clean-up is still under way.
                continue;
            }
            match self.clean_up(&job).await {
                Ok(()) => {
                    tracing::info!(job = %job, "clean-up after the ending finished by the reconciler");
                    done.cleaned.push(job);
                }
                Err(e) => {
                    ::metrics::counter!("prover_backend_errors_total", "role" => "reconciler").increment(1);
                    tracing::warn!(job = %job, error = %e, "clean-up after the ending failed; tried again next round");
                }
            }
        }
        // Every job that has not ended, a page at a time: per job kind the oldest (for the
        // ProverJobOverdue alert), and those with no progress for the grace.
        let mut oldest: HashMap<&str, u64> = HashMap::new();
        let mut idle = Vec::new();
        let mut offset = Some(0);
        while let Some(o) = offset {
            let (page, next) = self.job_store().active_page(o, self.config.reconcile_batch.max(1)).await?;
            for job in page {
                let Some(k) = self.registry().job_kind(&job.kind) else { continue };
                let age = oldest.entry(k.name()).or_default();
                *age = (*age).max(now.saturating_sub(job.created_ms));
                if now.saturating_sub(job.updated_ms) >= grace {
                    idle.push(job);
                }
            }
            offset = next;
        }
        for k in self.registry().job_kinds() {
            let age = oldest.get(k.name()).copied().unwrap_or(0);
            ::metrics::gauge!("prover_oldest_active_job_age_seconds", "kind" => k.name()).set(age as f64 / 1e3);
            let expected = self.config.expected.get(k.name()).map(|d| d.as_secs()).unwrap_or_else(|| k.expected_secs());
            ::metrics::gauge!("prover_job_expected_seconds", "kind" => k.name()).set(expected as f64);
        }
        // Which of them have nothing waiting, running or delayed: the task index, per job.
        let mut suspects = HashMap::new();
        let mut act = Vec::new();
        let ids: Vec<String> = idle.iter().map(|r| r.id.clone()).collect();
        let has_tasks = self.queue().jobs_with_tasks(&ids).await?;
        for (rec, has) in idle.into_iter().zip(has_tasks) {
            if has {
                continue;
            }
            if st.suspects.get(&rec.id) != Some(&rec.updated_ms) {
                // Seen idle once: act only if it is still so next round (a task moving from
                // one queue to the next may have been missed by this round's look).
                suspects.insert(rec.id.clone(), rec.updated_ms);
                continue;
            }
            act.push(rec);
        }
        // Confirmed by a walk of the queues before acting (see the module doc): one walk of
        // each task kind those jobs use, however many they are.
        let mut busy = HashSet::new();
        let mut walked = HashSet::new();
        for rec in &act {
            for t in self.registry().task_kinds_of(&rec.kind) {
                if walked.insert(t.name) {
                    busy.extend(self.queue().outstanding(t.name).await?.into_keys());
                }
            }
        }
        for rec in act {
            if busy.contains(&rec.id) {
                tracing::warn!(job = %rec.id, "a task the queue's job index does not list (enqueued by an earlier version?): not stalled");
                continue;
            }
            if rec.state == JobState::Queued {
                tracing::warn!(job = %rec.id, "no plan task: enqueued again");
                ::metrics::counter!("prover_jobs_redriven_total", "kind" => rec.kind.clone()).increment(1);
                self.queue().enqueue(PLAN.name, plan_message(&rec.id)).await?;
                done.redriven.push(rec.id);
            } else {
                let idle = Duration::from_millis(now.saturating_sub(rec.updated_ms));
                let reason = format!("stalled: no task queued, running or delayed and no progress for {} s", idle.as_secs());
                self.fail_job(&rec.id, &reason).await?;
                done.failed.push(rec.id);
            }
        }
        st.suspects = suspects;
        Ok(done)
    }
}

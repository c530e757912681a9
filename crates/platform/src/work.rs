//! CPU-heavy work off the async runtime, and what becomes of it when its task is abandoned.
//!
//! A role abandons a task by dropping its future (a deadline passed, the lease was lost, the
//! drain timeout ran out: see [`crate::roles`]). A thread cannot be stopped from outside, so a
//! prover started with `spawn_blocking` used to run on after that, and the task's retry, claimed
//! by the same worker a moment later, ran beside it: at every deadline the worker held one more
//! proof's memory, until the OOM killer took it and every other tenant's task with it.
//!
//! So every blocking closure a task starts goes through [`blocking`]:
//! * it receives the task's [`Cancel`] flag, which the role sets when it abandons the task; the
//!   closures check it between their steps (the items of a Pari or circom proof list; a Reckle
//!   bundle's node proofs are one closure each, so its task stops between nodes by itself) and
//!   stop there; a Pari proof reads it inside, between its FFTs and MSM windows
//!   ([`Cancel::with_interrupt`], [`pari::interrupt`]), so even one proof of a wrap (minutes)
//!   stops within seconds;
//! * the process counts the closures still running for an abandoned task (gauge
//!   `prover_abandoned_work`), and a role loop **claims nothing while that count is above zero**
//!   ([`Work::wait_no_abandoned`]). A worker therefore never runs more proving threads than it has
//!   loops, however many deadlines pass ([`Work::peak`] records the most that ran at once).
//!
//! Work started outside a task (the planner's checks, a detached circuit build shared by every
//! task that waits for it) is neither counted nor cancelled.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::watch;

use crate::PlatformError;

/// The abandonment flag of one task, as the closures of [`blocking`] see it.
#[derive(Clone, Debug, Default)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// True once the task that started this work has been abandoned.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// `Err(Abandoned)` once the task has been abandoned: the closure's cue to stop.
    pub fn check(&self) -> Result<(), PlatformError> {
        if self.is_set() {
            Err(PlatformError::Abandoned)
        } else {
            Ok(())
        }
    }

    /// Runs `f` with a [`pari::Interrupt`] raised once this flag is, so that a single Pari
    /// proof (a wrap's: minutes) stops part-way rather than at its end.
    pub fn with_interrupt<T>(&self, f: impl FnOnce(::pari::Interrupt<'_>) -> T) -> T {
        let raised = || self.is_set();
        f(::pari::Interrupt::new(&raised))
    }

    pub(crate) fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

#[derive(Default)]
struct State {
    next: u64,
    /// Running closures, with their task's flag.
    running: HashMap<u64, Cancel>,
    peak: usize,
}

/// One process's blocking work started by tasks: what runs, and what runs for nobody.
pub struct Work {
    state: Mutex<State>,
    /// The number of closures still running for abandoned tasks.
    abandoned: watch::Sender<usize>,
}

impl Default for Work {
    fn default() -> Self {
        Self { state: Mutex::new(State::default()), abandoned: watch::channel(0).0 }
    }
}

impl Work {
    /// Closures running now for tasks that were abandoned.
    pub fn abandoned(&self) -> usize {
        *self.abandoned.borrow()
    }

    /// Follows [`Work::abandoned`]: each change is seen (to wait for it to reach zero).
    pub fn abandoned_changes(&self) -> watch::Receiver<usize> {
        self.abandoned.subscribe()
    }

    /// The most closures that ran at once in this process so far.
    pub fn peak(&self) -> usize {
        self.state.lock().expect("work").peak
    }

    /// Closures running now.
    pub fn running(&self) -> usize {
        self.state.lock().expect("work").running.len()
    }

    /// Recounts the abandoned closures (after a flag was set or a closure ended).
    pub(crate) fn recount(&self) {
        let g = self.state.lock().expect("work");
        let n = g.running.values().filter(|c| c.is_set()).count();
        ::metrics::gauge!("prover_blocking_work").set(g.running.len() as f64);
        ::metrics::gauge!("prover_abandoned_work").set(n as f64);
        self.abandoned.send_replace(n);
    }

    fn start(self: &Arc<Self>, cancel: Cancel) -> Running {
        let mut g = self.state.lock().expect("work");
        let id = g.next;
        g.next += 1;
        g.running.insert(id, cancel);
        g.peak = g.peak.max(g.running.len());
        ::metrics::gauge!("prover_blocking_work").set(g.running.len() as f64);
        Running { work: self.clone(), id }
    }

    /// Waits until no closure of an abandoned task runs in this process (at once if none), or
    /// until `stop` is set. A role calls it before each claim.
    pub async fn wait_no_abandoned(&self, stop: &mut watch::Receiver<bool>) {
        let mut rx = self.abandoned.subscribe();
        if *rx.borrow_and_update() == 0 {
            return;
        }
        tracing::warn!(abandoned = *rx.borrow(), "work of abandoned tasks still runs: claiming nothing until it stops");
        tokio::select! {
            _ = rx.wait_for(|n| *n == 0) => {}
            _ = stop.wait_for(|s| *s) => {}
        }
    }
}

/// A closure's place in [`Work`], given up when the closure ends (or panics).
struct Running {
    work: Arc<Work>,
    id: u64,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.work.state.lock().expect("work").running.remove(&self.id);
        self.work.recount();
    }
}

/// The task in hand, for [`blocking`]: its flag and its process's [`Work`].
#[derive(Clone)]
pub(crate) struct Current {
    pub(crate) cancel: Cancel,
    pub(crate) work: Arc<Work>,
}

tokio::task_local! {
    pub(crate) static CURRENT: Current;
}

/// Runs `f` on the blocking pool, handing it the current task's [`Cancel`] flag (a flag never
/// set outside a task) and counting it in the task's process (see the module doc).
pub async fn blocking<T, F>(f: F) -> Result<T, PlatformError>
where
    T: Send + 'static,
    F: FnOnce(&Cancel) -> T + Send + 'static,
{
    let current = CURRENT.try_with(|c| c.clone()).ok();
    let cancel = current.as_ref().map(|c| c.cancel.clone()).unwrap_or_default();
    let running = current.map(|c| c.work.start(c.cancel));
    tokio::task::spawn_blocking(move || {
        let _running = running;
        f(&cancel)
    })
    .await
    .map_err(|e| PlatformError::Corrupt(format!("blocking work failed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn abandoned_work_is_counted_until_it_ends_and_holds_claims_back() {
        let work = Arc::new(Work::default());
        let current = Current { cancel: Cancel::default(), work: work.clone() };
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let (started_tx, started_rx) = tokio::sync::oneshot::channel::<()>();
        let cancel = current.cancel.clone();
        let task = tokio::spawn(CURRENT.scope(current, async move {
            blocking(move |c| {
                let _ = started_tx.send(());
                go_rx.recv().expect("go");
                c.is_set()
            })
            .await
        }));
        started_rx.await.expect("started");
        assert_eq!((work.running(), work.abandoned()), (1, 0));
        // The role abandons the task: its future goes, its closure runs on.
        task.abort();
        let _ = task.await;
        cancel.set();
        work.recount();
        assert_eq!((work.running(), work.abandoned()), (1, 1));
        // A claim waits for it; the stop signal is not set.
        let (_stop_tx, mut stop) = watch::channel(false);
        let waiter = {
            let work = work.clone();
            tokio::spawn(async move { work.wait_no_abandoned(&mut stop).await })
        };
        go_tx.send(()).expect("closure waits");
        waiter.await.expect("wait ends once the closure ends");
        assert_eq!((work.running(), work.abandoned(), work.peak()), (0, 0, 1));
    }

    #[tokio::test]
    async fn outside_a_task_nothing_is_counted_and_the_flag_is_never_set() {
        assert_eq!(blocking(|c| c.is_set()).await.unwrap(), false);
    }
}

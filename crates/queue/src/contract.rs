//! The contract every [`Queue`] implementation must meet. `tests/contract.rs` runs each case
//! against [`crate::MemoryQueue`] and [`crate::RedisQueue`] (real Redis).
//!
//! Each case takes a queue built with [`contract_config`] and a fresh, unique task kind.

use std::time::Duration;

use crate::{FailOutcome, Queue, QueueConfig, QueueError, TaskMessage, MAX_PAYLOAD};

/// Timeouts short enough for the cases to run in seconds, and long enough that what a case
/// asserts has *not* happened yet (a lease still held, a retry still in its backoff) still holds
/// on a loaded machine, where a few Redis round trips or a heartbeat can take hundreds of
/// milliseconds. Cases wait for expiries with sleeps that are lower bounds only.
pub fn contract_config() -> QueueConfig {
    QueueConfig {
        visibility_timeout: Duration::from_secs(2),
        max_attempts: 3,
        backoff_base: Duration::from_secs(1),
        backoff_max: Duration::from_secs(4),
        idle_consumer_after: Duration::from_secs(20),
    }
}

/// Longer than any backoff or lease of [`contract_config`]: a bound on a wait that must end.
const LONG: Duration = Duration::from_secs(20);

fn task(job: &str, n: u32) -> TaskMessage {
    TaskMessage::new(job, format!("t{n}"), format!("{{\"n\":{n}}}"))
}

const SHORT: Duration = Duration::from_millis(50);

/// Enqueue, claim, complete; nothing left afterwards; stats follow.
pub async fn claim_and_complete(q: &dyn Queue, kind: &str) {
    q.enqueue(kind, task("j1", 1)).await.unwrap();
    q.enqueue(kind, task("j1", 2)).await.unwrap();
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.pending, s.running), (2, 0), "{s:?}");
    assert!(s.oldest_age.is_some());
    let a = q.claim(kind, "w1", SHORT).await.unwrap().expect("first task");
    assert_eq!(a.task.task_id, "t1", "FIFO order");
    assert_eq!(a.attempt, 1);
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.pending, s.running), (1, 1), "{s:?}");
    let b = q.claim(kind, "w2", SHORT).await.unwrap().expect("second task");
    assert_eq!(b.task.task_id, "t2");
    q.complete(&a).await.unwrap();
    q.complete(&b).await.unwrap();
    assert!(q.claim(kind, "w1", SHORT).await.unwrap().is_none());
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.pending, s.running, s.delayed, s.dead), (0, 0, 0, 0), "{s:?}");
    // A lease cannot be completed twice.
    assert!(matches!(q.complete(&a).await, Err(QueueError::StaleLease)));
}

/// A claim with a wait returns as soon as a message arrives.
pub async fn claim_waits_for_enqueue(q: &'static dyn Queue, kind: &'static str) {
    let waiter = tokio::spawn(async move { q.claim(kind, "w1", Duration::from_secs(5)).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    q.enqueue(kind, task("j", 7)).await.unwrap();
    let lease = waiter.await.unwrap().unwrap().expect("woken by the enqueue");
    assert_eq!(lease.task.task_id, "t7");
    q.complete(&lease).await.unwrap();
}

/// An expired lease is redelivered to another worker; the stale holder's late completion and
/// failure are refused; the new holder's completion is accepted.
pub async fn stale_lease_is_fenced(q: &dyn Queue, kind: &str) {
    q.enqueue(kind, task("j", 1)).await.unwrap();
    let old = q.claim(kind, "slow", SHORT).await.unwrap().unwrap();
    assert!(q.claim(kind, "fast", SHORT).await.unwrap().is_none(), "lease still valid");
    tokio::time::sleep(contract_config().visibility_timeout + Duration::from_millis(100)).await;
    let new = q.claim(kind, "fast", SHORT).await.unwrap().expect("redelivered after the visibility timeout");
    assert_eq!(new.task.task_id, "t1");
    assert_eq!(new.attempt, 2, "an expired lease counts as an attempt");
    assert!(new.token > old.token);
    assert!(matches!(q.complete(&old).await, Err(QueueError::StaleLease)));
    assert!(matches!(q.fail(&old, "late").await, Err(QueueError::StaleLease)));
    assert!(matches!(q.release(&old).await, Err(QueueError::StaleLease)));
    q.complete(&new).await.unwrap();
    assert!(q.claim(kind, "fast", SHORT).await.unwrap().is_none());
}

/// Failures retry with backoff, then go to the dead-letter queue with the reason.
pub async fn retries_then_dead_letters(q: &dyn Queue, kind: &str) {
    let cfg = contract_config();
    q.enqueue(kind, task("j", 1)).await.unwrap();
    for attempt in 1..=cfg.max_attempts {
        let l = q.claim(kind, "w", LONG).await.unwrap().expect("delivered after backoff");
        assert_eq!(l.attempt, attempt);
        let out = q.fail(&l, &format!("boom {attempt}")).await.unwrap();
        if attempt < cfg.max_attempts {
            assert_eq!(out, FailOutcome::Retried { delay: cfg.backoff(attempt) });
            // Not redelivered before its backoff.
            assert!(q.claim(kind, "w", Duration::ZERO).await.unwrap().is_none(), "retried before backoff");
            assert_eq!(q.stats(kind).await.unwrap().delayed, 1);
        } else {
            assert_eq!(out, FailOutcome::DeadLettered);
        }
    }
    assert!(q.claim(kind, "w", Duration::from_millis(600)).await.unwrap().is_none());
    let dead = q.dead_letters(kind).await.unwrap();
    assert_eq!(dead.len(), 1);
    assert_eq!(dead[0].0.task_id, "t1");
    assert_eq!(dead[0].1, format!("boom {}", cfg.max_attempts));
    assert_eq!(q.stats(kind).await.unwrap().dead, 1);
    // Cleared once read.
    assert_eq!(q.clear_dead_letters(kind).await.unwrap(), 1);
    assert!(q.dead_letters(kind).await.unwrap().is_empty());
    assert_eq!(q.stats(kind).await.unwrap().dead, 0);
}

/// A message's trace context arrives with every delivery, a retry's and a redelivered
/// lease's included, and in reports enqueued by `complete_with`.
pub async fn trace_context_travels_with_the_message(q: &dyn Queue, kind: &str) {
    let tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    q.enqueue(kind, TaskMessage { trace: Some(tp.into()), ..task("jt", 1) }).await.unwrap();
    q.enqueue(kind, task("jt", 2)).await.unwrap();
    let a = q.claim(kind, "w", SHORT).await.unwrap().expect("delivered");
    assert_eq!(a.task.trace.as_deref(), Some(tp));
    let b = q.claim(kind, "w", SHORT).await.unwrap().expect("delivered");
    assert_eq!(b.task.trace, None, "no context, none invented");
    q.complete(&b).await.unwrap();
    q.fail(&a, "boom").await.unwrap();
    let again = q.claim(kind, "w", LONG).await.unwrap().expect("retried");
    assert_eq!((again.attempt, again.task.trace.as_deref()), (2, Some(tp)));
    let report = TaskMessage { trace: Some(tp.replace("00f067aa", "11f067aa")), ..task("jt", 9) };
    let reports = format!("{kind}-reports");
    q.complete_with(&again, &[(&reports, report.clone())], Duration::ZERO).await.unwrap();
    let r = q.claim(&reports, "w", SHORT).await.unwrap().expect("the report");
    assert_eq!(r.task.trace, report.trace);
    q.complete(&r).await.unwrap();
}

/// A message whose leases keep expiring is dead-lettered after `max_attempts` deliveries.
pub async fn expired_leases_count_as_attempts(q: &dyn Queue, kind: &str) {
    let cfg = contract_config();
    q.enqueue(kind, task("j", 1)).await.unwrap();
    for _ in 0..cfg.max_attempts {
        assert!(q.claim(kind, "dies", LONG).await.unwrap().is_some());
        tokio::time::sleep(cfg.visibility_timeout + Duration::from_millis(100)).await;
    }
    assert!(q.claim(kind, "w", SHORT).await.unwrap().is_none());
    assert_eq!(q.dead_letters(kind).await.unwrap().len(), 1);
}

/// A released message is redelivered at once, without using up an attempt.
pub async fn release_redelivers_without_penalty(q: &dyn Queue, kind: &str) {
    q.enqueue(kind, task("j", 1)).await.unwrap();
    let l = q.claim(kind, "draining", SHORT).await.unwrap().unwrap();
    q.release(&l).await.unwrap();
    let again = q.claim(kind, "other", SHORT).await.unwrap().expect("released message");
    assert_eq!(again.task.task_id, "t1");
    assert_eq!(again.attempt, 1);
    q.complete(&again).await.unwrap();
}

/// Oversized payloads and bad kinds are refused and leave nothing behind.
pub async fn bad_input_is_refused(q: &dyn Queue, kind: &str) {
    let mut big = task("j", 1);
    big.payload = "x".repeat(MAX_PAYLOAD + 1);
    assert!(matches!(q.enqueue(kind, big).await, Err(QueueError::PayloadTooLarge(_))));
    assert!(matches!(q.enqueue("bad kind!", task("j", 1)).await, Err(QueueError::InvalidKind(_))));
    assert!(q.claim(kind, "w", SHORT).await.unwrap().is_none());
    assert_eq!(q.stats(kind).await.unwrap().pending, 0);
}

/// Purging a job removes its waiting and delayed messages, not other jobs'.
pub async fn purge_removes_a_jobs_waiting_tasks(q: &dyn Queue, kind: &str) {
    q.enqueue(kind, task("cancel-me", 1)).await.unwrap();
    q.enqueue(kind, task("keep", 2)).await.unwrap();
    q.enqueue(kind, task("cancel-me", 3)).await.unwrap();
    assert_eq!(q.purge_job(kind, "cancel-me").await.unwrap(), 2);
    let l = q.claim(kind, "w", SHORT).await.unwrap().unwrap();
    assert_eq!(l.task.job_id, "keep");
    q.complete(&l).await.unwrap();
    assert!(q.claim(kind, "w", SHORT).await.unwrap().is_none());
}

/// A heartbeat keeps a lease past the visibility timeout; a lost lease cannot be extended.
pub async fn extend_keeps_the_lease(q: &dyn Queue, kind: &str) {
    let vt = contract_config().visibility_timeout;
    q.enqueue(kind, task("j", 1)).await.unwrap();
    let held = q.claim(kind, "busy", SHORT).await.unwrap().unwrap();
    for _ in 0..4 {
        tokio::time::sleep(vt / 2).await;
        q.extend(&held).await.unwrap();
        assert!(q.claim(kind, "other", Duration::ZERO).await.unwrap().is_none(), "extended lease still held");
    }
    q.complete(&held).await.unwrap();
    // Without heartbeats the lease is lost, and extending it then fails.
    q.enqueue(kind, task("j", 2)).await.unwrap();
    let old = q.claim(kind, "busy", SHORT).await.unwrap().unwrap();
    tokio::time::sleep(vt + Duration::from_millis(100)).await;
    let new = q.claim(kind, "other", SHORT).await.unwrap().expect("redelivered");
    assert!(matches!(q.extend(&old).await, Err(QueueError::StaleLease)));
    q.extend(&new).await.unwrap();
    assert_eq!(new.attempt, 2);
    q.complete(&new).await.unwrap();
}

/// An expired lease behind many live ones (older message ids, still heartbeating) is found and
/// redelivered: the scan for expired leases must not start over at the oldest entry each time.
pub async fn expired_lease_behind_live_ones_is_redelivered(q: &dyn Queue, kind: &str) {
    let vt = contract_config().visibility_timeout;
    const N: u32 = 40;
    for n in 0..N {
        q.enqueue(kind, task("j", n)).await.unwrap();
    }
    let mut held = Vec::new();
    for _ in 0..N {
        held.push(q.claim(kind, "busy", SHORT).await.unwrap().expect("claimed"));
    }
    let (live, expiring) = held.split_at(N as usize - 1);
    assert_eq!(expiring[0].task.task_id, format!("t{}", N - 1), "the newest message expires");
    let heartbeat = async {
        for _ in 0..10 {
            for l in live {
                q.extend(l).await.unwrap();
            }
            tokio::time::sleep(vt / 3).await;
        }
    };
    let other = async {
        tokio::time::sleep(vt + Duration::from_millis(100)).await;
        q.claim(kind, "other", vt).await.unwrap()
    };
    let (_, found) = tokio::join!(heartbeat, other);
    let found = found.expect("the expired lease is redelivered");
    assert_eq!(found.task.task_id, expiring[0].task.task_id);
    assert_eq!(found.attempt, 2);
    q.complete(&found).await.unwrap();
    for l in live {
        q.complete(l).await.unwrap();
    }
}

/// `claim_any` takes the first kind that has work, wakes on an enqueue of any of its kinds,
/// and returns nothing when none has work.
pub async fn claim_any_serves_several_kinds(q: &'static dyn Queue, kind: &'static str) {
    let other: &'static str = Box::leak(format!("{kind}.b").into_boxed_str());
    let kinds: &'static [&'static str] = Box::leak(vec![kind, other].into_boxed_slice());
    assert!(q.claim_any(kinds, "w", SHORT).await.unwrap().is_none());
    q.enqueue(other, task("j", 1)).await.unwrap();
    q.enqueue(kind, task("j", 2)).await.unwrap();
    let first = q.claim_any(kinds, "w", SHORT).await.unwrap().expect("work");
    assert_eq!((first.kind.as_str(), first.task.task_id.as_str()), (kind, "t2"), "earlier kinds first");
    let second = q.claim_any(kinds, "w", SHORT).await.unwrap().expect("work");
    assert_eq!((second.kind.as_str(), second.attempt), (other, 1));
    q.complete(&first).await.unwrap();
    q.complete(&second).await.unwrap();
    // An idle claim is woken by the enqueue (well before its 5 s wait is over).
    let waiter = tokio::spawn(async move { q.claim_any(kinds, "w", Duration::from_secs(5)).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    q.enqueue(other, task("j", 3)).await.unwrap();
    let woken = waiter.await.unwrap().unwrap().expect("woken by the enqueue");
    assert_eq!(woken.task.task_id, "t3");
    q.complete(&woken).await.unwrap();
    // Both kinds have work when an idle read wakes: one is leased, the other stays claimable
    // and has spent no attempt.
    let waiter = tokio::spawn(async move { q.claim_any(kinds, "w", Duration::from_secs(5)).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    q.enqueue(kind, task("j", 4)).await.unwrap();
    q.enqueue(other, task("j", 5)).await.unwrap();
    let a = waiter.await.unwrap().unwrap().expect("woken");
    let b = q.claim_any(kinds, "w2", SHORT).await.unwrap().expect("the other task is still there");
    assert_ne!(a.task.task_id, b.task.task_id);
    assert_eq!((a.attempt, b.attempt), (1, 1));
    q.complete(&a).await.unwrap();
    q.complete(&b).await.unwrap();
    assert!(q.claim_any(kinds, "w", SHORT).await.unwrap().is_none());
}

/// Throughput records add up per kind.
pub async fn throughput_is_recorded(q: &dyn Queue, kind: &str) {
    assert_eq!(q.stats(kind).await.unwrap().completed, 0);
    q.record_throughput(kind, Duration::from_millis(1500)).await.unwrap();
    q.record_throughput(kind, Duration::from_millis(500)).await.unwrap();
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.completed, s.busy), (2, Duration::from_secs(2)));
    assert!(matches!(q.record_throughput("bad kind", Duration::ZERO).await, Err(QueueError::InvalidKind(_))));
}

/// `enqueue_once` enqueues a `(job, kind, task id)` once, until the job is forgotten; other
/// jobs and kinds are independent.
pub async fn enqueue_once_does_not_duplicate(q: &dyn Queue, kind: &str) {
    let job = format!("once-{kind}");
    assert!(q.enqueue_once(kind, task(&job, 1)).await.unwrap());
    assert!(!q.enqueue_once(kind, task(&job, 1)).await.unwrap(), "a second copy");
    assert!(q.enqueue_once(kind, task(&job, 2)).await.unwrap());
    assert!(q.enqueue_once(kind, task(&format!("{job}-other"), 1)).await.unwrap());
    assert_eq!(q.stats(kind).await.unwrap().pending, 3);
    // Claimed and completed, it still counts as enqueued: a rerun does not bring it back.
    let l = q.claim(kind, "w1", SHORT).await.unwrap().expect("task");
    q.complete(&l).await.unwrap();
    assert!(!q.enqueue_once(kind, task(&job, 1)).await.unwrap());
    q.forget_job(&job).await.unwrap();
    assert!(q.enqueue_once(kind, task(&job, 1)).await.unwrap(), "forgotten");
    q.purge_job(kind, &job).await.unwrap();
    q.purge_job(kind, &format!("{job}-other")).await.unwrap();
    q.forget_job(&job).await.unwrap();
    q.forget_job(&format!("{job}-other")).await.unwrap();
}

/// `job_tasks` counts a job's waiting, leased and delayed messages, and nothing else.
pub async fn job_tasks_counts_waiting_running_and_delayed(q: &dyn Queue, kind: &str) {
    for n in 1..=3 {
        q.enqueue(kind, task("ja", n)).await.unwrap();
    }
    q.enqueue(kind, task("jb", 9)).await.unwrap();
    assert_eq!(q.job_tasks(kind, "ja").await.unwrap(), 3);
    let a = q.claim(kind, "w1", SHORT).await.unwrap().expect("t1");
    let b = q.claim(kind, "w1", SHORT).await.unwrap().expect("t2");
    assert_eq!(q.job_tasks(kind, "ja").await.unwrap(), 3, "leased messages count");
    assert!(matches!(q.fail(&a, "boom").await.unwrap(), FailOutcome::Retried { .. }));
    assert_eq!(q.job_tasks(kind, "ja").await.unwrap(), 3, "delayed messages count");
    q.complete(&b).await.unwrap();
    assert_eq!(q.job_tasks(kind, "ja").await.unwrap(), 2);
    assert_eq!(q.job_tasks(kind, "jb").await.unwrap(), 1);
    assert_eq!(q.job_tasks(kind, "nobody").await.unwrap(), 0);
    let all = q.outstanding(kind).await.unwrap();
    assert_eq!((all.get("ja"), all.get("jb"), all.get("nobody")), (Some(&2), Some(&1), None), "one walk counts the same: {all:?}");
    q.purge_job(kind, "ja").await.unwrap();
    q.purge_job(kind, "jb").await.unwrap();
    let left = q.job_tasks(kind, "ja").await.unwrap();
    assert_eq!(left, 0, "waiting and delayed purged");
    assert!(q.outstanding(kind).await.unwrap().is_empty());
}

/// `outstanding` and `purge_job` walk a queue longer than one page (1,000 entries on Redis),
/// with waiting, leased and delayed messages of several jobs.
pub async fn a_long_queue_is_walked_whole(q: &dyn Queue, kind: &str) {
    let jobs = ["la", "lb", "lc"];
    let tasks: Vec<TaskMessage> = (0..2_500u32).map(|i| task(jobs[i as usize % 3], i)).collect();
    for chunk in tasks.chunks(500) {
        for t in chunk {
            q.enqueue(kind, t.clone()).await.unwrap();
        }
    }
    let a = q.claim(kind, "w1", SHORT).await.unwrap().expect("a task");
    assert!(matches!(q.fail(&a, "boom").await.unwrap(), FailOutcome::Retried { .. }));
    let _held = q.claim(kind, "w1", SHORT).await.unwrap().expect("another");
    let all = q.outstanding(kind).await.unwrap();
    assert_eq!((all["la"], all["lb"], all["lc"]), (834, 833, 833), "{all:?}");
    assert_eq!(q.job_tasks(kind, "lb").await.unwrap(), 833);
    // Waiting and delayed go; the one leased stays until its holder ends it.
    let purged = q.purge_job(kind, "la").await.unwrap() + q.purge_job(kind, "lb").await.unwrap() + q.purge_job(kind, "lc").await.unwrap();
    assert_eq!(purged, 2_499);
    assert_eq!(q.outstanding(kind).await.unwrap().values().sum::<u64>(), 1);
}

/// `complete_with` acknowledges the task, enqueues its reports and records its throughput in
/// one step; a stale lease does none of it.
pub async fn complete_with_reports_atomically(q: &dyn Queue, kind: &str) {
    let reports = format!("{kind}.r");
    q.enqueue(kind, task("jc", 1)).await.unwrap();
    q.enqueue(kind, task("jc", 2)).await.unwrap();
    let a = q.claim(kind, "w1", SHORT).await.unwrap().expect("t1");
    let report = TaskMessage { payload: "done".into(), ..task("jc", 1) };
    q.complete_with(&a, &[(reports.as_str(), report.clone())], Duration::from_millis(1500)).await.unwrap();
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.pending, s.running, s.completed, s.busy), (1, 0, 1, Duration::from_millis(1500)), "{s:?}");
    let r = q.claim(&reports, "executor", SHORT).await.unwrap().expect("the report");
    assert_eq!(r.task, report);
    q.complete(&r).await.unwrap();
    // A holder whose lease expired and was redelivered reports nothing.
    let stale = q.claim(kind, "w1", SHORT).await.unwrap().expect("t2");
    tokio::time::sleep(contract_config().visibility_timeout + Duration::from_millis(100)).await;
    let fresh = q.claim(kind, "w2", SHORT).await.unwrap().expect("t2 redelivered");
    assert!(matches!(q.complete_with(&stale, &[(reports.as_str(), task("jc", 2))], Duration::ZERO).await, Err(QueueError::StaleLease)));
    assert!(q.claim(&reports, "executor", SHORT).await.unwrap().is_none(), "a stale lease enqueued a report");
    assert_eq!(q.stats(kind).await.unwrap().completed, 1);
    // Bad reports are refused before anything happens.
    assert!(matches!(q.complete_with(&fresh, &[("bad kind", task("jc", 2))], Duration::ZERO).await, Err(QueueError::InvalidKind(_))));
    q.complete_with(&fresh, &[], Duration::ZERO).await.unwrap();
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.pending, s.running, s.completed), (0, 0, 2), "{s:?}");
}

/// `enqueue_once_many` is `enqueue_once` per task: duplicates within the call and across calls
/// are dropped, per job.
pub async fn enqueue_once_many_does_not_duplicate(q: &dyn Queue, kind: &str) {
    let (j1, j2) = (format!("many-{kind}"), format!("many2-{kind}"));
    let batch: Vec<TaskMessage> = (0..700).map(|n| task(&j1, n)).chain([task(&j1, 3), task(&j2, 3)]).collect();
    assert_eq!(q.enqueue_once_many(kind, batch).await.unwrap(), 701);
    assert_eq!(q.enqueue_once_many(kind, vec![task(&j1, 699), task(&j1, 700)]).await.unwrap(), 1);
    assert!(!q.enqueue_once(kind, task(&j2, 3)).await.unwrap());
    assert_eq!(q.stats(kind).await.unwrap().pending, 702);
    let first = q.claim(kind, "w", SHORT).await.unwrap().expect("first");
    assert_eq!(first.task.task_id, "t0", "FIFO order");
    q.release(&first).await.unwrap();
    let big = TaskMessage { payload: "x".repeat(MAX_PAYLOAD + 1), ..task(&j1, 900) };
    assert!(matches!(q.enqueue_once_many(kind, vec![task(&j1, 901), big]).await, Err(QueueError::PayloadTooLarge(_))));
    assert!(q.enqueue_once(kind, task(&j1, 901)).await.unwrap(), "a refused call enqueued part of its tasks");
    for j in [&j1, &j2] {
        q.purge_job(kind, j).await.unwrap();
        q.forget_job(j).await.unwrap();
    }
}

/// Dead letters are read by cursor: a page starts after the last id its reader saw, and a dead
/// letter that arrives after older ones were cleared (or trimmed) is still seen, once. Every
/// dead letter is counted in `dead_lettered`, a lease buried by a claim (out of attempts before
/// it was delivered) included.
pub async fn dead_letters_are_read_by_cursor(q: &dyn Queue, kind: &str) {
    let max = contract_config().max_attempts;
    let last_try = |n| TaskMessage { failures: max - 1, ..task("jd", n) };
    for n in 1..=3 {
        q.enqueue(kind, last_try(n)).await.unwrap();
        let l = q.claim(kind, "w", LONG).await.unwrap().expect("delivered");
        assert_eq!(l.attempt, max);
        assert_eq!(q.fail(&l, &format!("boom {n}")).await.unwrap(), FailOutcome::DeadLettered);
    }
    // Out of attempts before its delivery: the claim buries it and hands out nothing.
    q.enqueue(kind, TaskMessage { failures: max, ..task("jd", 4) }).await.unwrap();
    assert!(q.claim(kind, "w", SHORT).await.unwrap().is_none());
    let first = q.dead_letters_after(kind, None, 2).await.unwrap();
    let ids = |v: &[crate::DeadLetter]| v.iter().map(|d| d.task.task_id.clone()).collect::<Vec<_>>();
    assert_eq!(ids(&first), ["t1", "t2"]);
    assert_eq!(first[0].reason, "boom 1");
    let rest = q.dead_letters_after(kind, Some(&first[1].id), 10).await.unwrap();
    assert_eq!(ids(&rest), ["t3", "t4"]);
    assert!(rest[1].reason.contains("lease expired"), "{}", rest[1].reason);
    let cursor = rest[1].id.clone();
    assert!(q.dead_letters_after(kind, Some(&cursor), 10).await.unwrap().is_empty());
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.dead, s.dead_lettered), (4, 4), "{s:?}");
    // The old ones go; a new one still comes after the cursor.
    assert_eq!(q.clear_dead_letters(kind).await.unwrap(), 4);
    q.enqueue(kind, last_try(5)).await.unwrap();
    let l = q.claim(kind, "w", LONG).await.unwrap().expect("delivered");
    assert_eq!(q.fail(&l, "boom 5").await.unwrap(), FailOutcome::DeadLettered);
    assert_eq!(ids(&q.dead_letters_after(kind, Some(&cursor), 10).await.unwrap()), ["t5"]);
    let s = q.stats(kind).await.unwrap();
    assert_eq!((s.dead, s.dead_lettered), (1, 5), "a counter, not the queue's length: {s:?}");
}

/// A job's messages are followed through every move, across kinds: `job_has_tasks` is true
/// while one waits, is leased, waits for its retry, is released or travels on as a report, and
/// false once the last is completed or dead-lettered (by a failure or by a claim that buries
/// it). `purge_all` removes the job's waiting and delayed messages of every kind, leaves its
/// leased one and other jobs' messages.
pub async fn job_has_tasks_follows_every_move(q: &dyn Queue, kind: &str) {
    let max = contract_config().max_attempts;
    // Job ids of this case alone: the index spans kinds, and cases share a server.
    let (job, keep, reports) = (format!("idx-{kind}"), format!("idx-keep-{kind}"), format!("{kind}.r"));
    assert!(!q.job_has_tasks(&job).await.unwrap());
    q.enqueue(kind, task(&job, 1)).await.unwrap();
    assert!(q.job_has_tasks(&job).await.unwrap(), "waiting");
    let a = q.claim(kind, "w", SHORT).await.unwrap().expect("t1");
    assert!(q.job_has_tasks(&job).await.unwrap(), "leased");
    assert!(matches!(q.fail(&a, "boom").await.unwrap(), FailOutcome::Retried { .. }));
    assert!(q.job_has_tasks(&job).await.unwrap(), "delayed");
    let b = q.claim(kind, "w", LONG).await.unwrap().expect("t1 after its backoff");
    assert_eq!((b.task.task_id.as_str(), b.attempt), ("t1", 2));
    assert!(q.job_has_tasks(&job).await.unwrap(), "promoted and leased again");
    q.release(&b).await.unwrap();
    assert!(q.job_has_tasks(&job).await.unwrap(), "released");
    let c = q.claim(kind, "w", SHORT).await.unwrap().expect("t1 released");
    q.complete_with(&c, &[(reports.as_str(), task(&job, 2))], Duration::ZERO).await.unwrap();
    assert!(q.job_has_tasks(&job).await.unwrap(), "its report, in another kind");
    assert_eq!((q.job_tasks(kind, &job).await.unwrap(), q.job_tasks(&reports, &job).await.unwrap()), (0, 1));
    let r = q.claim(&reports, "executor", SHORT).await.unwrap().expect("the report");
    q.complete(&r).await.unwrap();
    assert!(!q.job_has_tasks(&job).await.unwrap(), "everything completed");
    q.enqueue(kind, TaskMessage { failures: max - 1, ..task(&job, 3) }).await.unwrap();
    let d = q.claim(kind, "w", SHORT).await.unwrap().expect("t3, on its last attempt");
    assert_eq!(q.fail(&d, "last").await.unwrap(), FailOutcome::DeadLettered);
    assert!(!q.job_has_tasks(&job).await.unwrap(), "dead-lettered");
    q.enqueue(kind, TaskMessage { failures: max, ..task(&job, 4) }).await.unwrap();
    assert!(q.claim(kind, "w", SHORT).await.unwrap().is_none(), "buried by the claim");
    assert!(!q.job_has_tasks(&job).await.unwrap(), "buried");
    // Waiting, delayed and leased messages in two kinds, and another job's.
    q.enqueue(kind, task(&job, 5)).await.unwrap();
    q.enqueue(kind, task(&job, 6)).await.unwrap();
    assert_eq!(q.enqueue_once_many(&reports, vec![task(&job, 7), task(&job, 8)]).await.unwrap(), 2);
    q.enqueue(kind, task(&keep, 9)).await.unwrap();
    let leased = q.claim(kind, "w", SHORT).await.unwrap().expect("t5");
    let f = q.claim(kind, "w", SHORT).await.unwrap().expect("t6");
    assert!(matches!(q.fail(&f, "boom").await.unwrap(), FailOutcome::Retried { .. }));
    assert_eq!(q.purge_all(&job).await.unwrap(), 3, "t6 delayed, t7 and t8 waiting");
    assert_eq!(q.purge_all(&job).await.unwrap(), 0, "twice is once");
    assert!(q.job_has_tasks(&job).await.unwrap(), "the leased one stays");
    assert_eq!((q.job_tasks(kind, &job).await.unwrap(), q.job_tasks(&reports, &job).await.unwrap()), (1, 0));
    assert_eq!(q.stats(kind).await.unwrap().delayed, 0);
    q.complete(&leased).await.unwrap();
    assert!(!q.job_has_tasks(&job).await.unwrap());
    assert!(q.job_has_tasks(&keep).await.unwrap(), "another job's message stays");
    let k = q.claim(kind, "w", SHORT).await.unwrap().expect("t9");
    assert_eq!(k.task.job_id, keep);
    q.complete(&k).await.unwrap();
    assert!(!q.job_has_tasks(&keep).await.unwrap());
    assert!(q.claim(&reports, "executor", SHORT).await.unwrap().is_none(), "t7 and t8 purged");
    q.enqueue(&reports, task(&keep, 10)).await.unwrap();
    let many: Vec<String> = (0..1_100).map(|i| if i == 1_050 { keep.clone() } else { format!("idx-none-{i}-{kind}") }).collect();
    let has = q.jobs_with_tasks(&many).await.unwrap();
    assert_eq!(has.iter().enumerate().filter(|(_, h)| **h).map(|(i, _)| i).collect::<Vec<_>>(), vec![1_050], "many jobs at once, in order");
    q.purge_all(&keep).await.unwrap();
}

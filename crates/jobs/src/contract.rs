//! The [`JobStore`] contract: every implementation must pass these. Each case takes a store and
//! a prefix unique to the run, so cases can share one Redis server.

use std::collections::BTreeMap;

use crate::{budget_hour, now_ms, record_charge, Created, JobError, JobRecord, JobState, JobStore, Limits, TaskCounts, Usage, LIMIT_HOURLY_TASKS, LIMIT_RECORD_BYTES, LIMIT_UPLOAD_BYTES};

fn record(id: &str) -> JobRecord {
    let mut r = JobRecord::new(id, "reckle.batch", r#"{"log_n":4}"#);
    r.tasks = BTreeMap::from([("leaf".to_string(), TaskCounts { total: 2, done: 0 }), ("node".to_string(), TaskCounts { total: 1, done: 0 })]);
    r
}

pub async fn create_and_get(s: &dyn JobStore, p: &str) {
    let id = format!("{p}-a");
    assert_eq!(s.create(&record(&id), None).await.unwrap(), Created::New);
    let got = s.get(&id).await.unwrap().expect("stored");
    assert_eq!(got.state, JobState::Queued);
    assert_eq!(got.kind, "reckle.batch");
    assert_eq!(got.spec, r#"{"log_n":4}"#);
    assert_eq!(got.progress(), TaskCounts { total: 3, done: 0 });
    assert_eq!(s.create(&record(&id), None).await, Err(JobError::AlreadyExists(id.clone())));
    assert_eq!(s.get(&format!("{p}-missing")).await.unwrap(), None);
    assert_eq!(s.get("../bad id").await.unwrap(), None);
}

pub async fn bad_records_are_refused(s: &dyn JobStore, p: &str) {
    let mut r = record("bad id!");
    assert!(matches!(s.create(&r, None).await, Err(JobError::Invalid { field: "job_id", .. })));
    r = record(&format!("{p}-k"));
    r.kind = "no spaces".into();
    assert!(matches!(s.create(&r, None).await, Err(JobError::Invalid { field: "kind", .. })));
    r = record(&format!("{p}-s"));
    r.spec = "x".repeat(crate::MAX_SPEC_BYTES + 1);
    assert!(matches!(s.create(&r, None).await, Err(JobError::Invalid { field: "spec", .. })));
    assert!(matches!(
        s.create(&record(&format!("{p}-i")), Some(("has space", "f"))).await,
        Err(JobError::Invalid { field: "idempotency_key", .. })
    ));
    for id in ["k", "s", "i"] {
        assert_eq!(s.get(&format!("{p}-{id}")).await.unwrap(), None, "nothing written for a refused record");
    }
}

pub async fn idempotency(s: &dyn JobStore, p: &str) {
    let key = format!("{p}-key");
    assert_eq!(s.create(&record(&format!("{p}-1")), Some((&key, "fp1"))).await.unwrap(), Created::New);
    assert_eq!(s.get(&format!("{p}-1")).await.unwrap().unwrap().idempotency_key, key, "the record keeps its key");
    // A key the caller put in the record is not what the store keeps: only the argument counts.
    let mut forged = record(&format!("{p}-0"));
    forged.idempotency_key = key.clone();
    s.create(&forged, None).await.unwrap();
    assert_eq!(s.get(&forged.id).await.unwrap().unwrap().idempotency_key, "");
    s.delete(&forged.id).await.unwrap();
    assert_eq!(s.create(&record(&format!("{p}-2")), Some((&key, "fp1"))).await.unwrap(), Created::Existing(format!("{p}-1")));
    assert_eq!(s.get(&format!("{p}-2")).await.unwrap(), None, "a repeated submission creates nothing");
    assert_eq!(
        s.create(&record(&format!("{p}-3")), Some((&key, "fp2"))).await,
        Err(JobError::IdempotencyConflict { key: key.clone(), job: format!("{p}-1") })
    );
    assert_eq!(s.get(&format!("{p}-3")).await.unwrap(), None);
    // Deleting the job frees its key.
    s.delete(&format!("{p}-1")).await.unwrap();
    assert_eq!(s.get(&format!("{p}-1")).await.unwrap(), None);
    assert_eq!(s.create(&record(&format!("{p}-4")), Some((&key, "fp2"))).await.unwrap(), Created::New);
}

pub async fn terminal_states_are_final(s: &dyn JobStore, p: &str) {
    let id = format!("{p}-t");
    s.create(&record(&id), None).await.unwrap();
    assert!(s.transition(&id, JobState::Running, "").await.unwrap());
    assert!(s.transition(&id, JobState::Cancelled, "by user").await.unwrap());
    assert!(!s.transition(&id, JobState::Done, "").await.unwrap());
    assert!(!s.transition(&id, JobState::Running, "").await.unwrap());
    let got = s.get(&id).await.unwrap().unwrap();
    assert_eq!((got.state, got.message.as_str()), (JobState::Cancelled, "by user"));
    assert_eq!(s.transition(&format!("{p}-nope"), JobState::Done, "").await, Err(JobError::NotFound(format!("{p}-nope"))));
}

/// Every move from every state: the store moves a job exactly when [`JobState::can_move`]
/// allows it, and leaves the record as it was otherwise.
pub async fn moves_follow_the_table(s: &dyn JobStore, p: &str) {
    for (i, from) in JobState::ALL.into_iter().enumerate() {
        for (j, to) in JobState::ALL.into_iter().enumerate() {
            let id = format!("{p}-m{i}{j}");
            s.create(&record(&id), None).await.unwrap();
            // Reach `from` along allowed moves.
            match from {
                JobState::Queued => {}
                JobState::Running => assert!(s.transition(&id, JobState::Running, "").await.unwrap()),
                end => assert!(s.transition(&id, end, "first").await.unwrap()),
            }
            let moved = s.transition(&id, to, "second").await.unwrap();
            assert_eq!(moved, from.can_move(to), "{from:?} -> {to:?}");
            let got = s.get(&id).await.unwrap().unwrap();
            assert_eq!(got.state, if moved { to } else { from }, "{from:?} -> {to:?}");
            s.delete(&id).await.unwrap();
        }
    }
}

pub async fn task_state_is_counted_once(s: &dyn JobStore, p: &str) {
    let id = format!("{p}-d");
    s.create(&record(&id), None).await.unwrap();
    assert!(!s.is_done(&id, "0-1").await.unwrap());
    assert!(s.task_done(&id, "leaf", "0-1").await.unwrap());
    assert!(!s.task_done(&id, "leaf", "0-1").await.unwrap(), "a redelivered report is not counted twice");
    assert!(s.task_done(&id, "node", "1-0").await.unwrap());
    assert!(s.is_done(&id, "0-1").await.unwrap());
    let got = s.get(&id).await.unwrap().unwrap();
    assert_eq!(got.tasks["leaf"], TaskCounts { total: 2, done: 1 });
    assert_eq!(got.tasks["node"], TaskCounts { total: 1, done: 1 });
    assert!(!s.is_released(&id, "1-0").await.unwrap());
    assert!(s.mark_released(&id, "1-0").await.unwrap());
    assert!(!s.mark_released(&id, "1-0").await.unwrap());
    assert!(s.is_released(&id, "1-0").await.unwrap());
    assert_eq!(s.task_done(&format!("{p}-nope"), "leaf", "x").await, Err(JobError::NotFound(format!("{p}-nope"))));
    s.delete(&id).await.unwrap();
    assert!(!s.is_done(&id, "0-1").await.unwrap());
    assert!(!s.is_released(&id, "1-0").await.unwrap());
}

/// Concurrent reports of the same task: exactly one wins.
pub async fn concurrent_reports(s: &'static dyn JobStore, p: &str) {
    let id = format!("{p}-c");
    s.create(&record(&id), None).await.unwrap();
    let mut handles = Vec::new();
    for _ in 0..16 {
        let id = id.clone();
        handles.push(tokio::spawn(async move { s.mark_released(&id, "root").await.unwrap() }));
    }
    let mut wins = 0;
    for h in handles {
        wins += h.await.unwrap() as usize;
    }
    assert_eq!(wins, 1);
}

pub async fn list_pages_newest_first(s: &dyn JobStore, p: &str) {
    // Timestamps above any real job's, so these three are the newest in a shared store.
    let base = crate::now_ms() * 1000;
    for i in 0..3u64 {
        let mut r = record(&format!("{p}-l{i}"));
        r.created_ms = base + i;
        s.create(&r, None).await.unwrap();
    }
    let (page, next) = s.list(0, 2).await.unwrap();
    assert_eq!(page.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), vec![format!("{p}-l2"), format!("{p}-l1")]);
    assert_eq!(next, Some(2));
    let (page, _) = s.list(2, 1).await.unwrap();
    assert_eq!(page[0].id, format!("{p}-l0"));
    assert_eq!(s.list(0, 0).await.unwrap().0.len(), 0);
}

/// A brief listing (ListJobs's) has every record's fields but its spec, left empty: the
/// specs (up to 256 KiB each, a thousand to a page) are not read.
pub async fn brief_listings_leave_the_specs(s: &dyn JobStore, p: &str) {
    let base = crate::now_ms();
    let tenant = format!("{p}-t");
    let spec = format!(r#"{{"pad":"{}"}}"#, "x".repeat(100_000));
    for i in 0..3u64 {
        let mut r = JobRecord::new(format!("{p}-b{i}"), "reckle.batch", spec.clone()).with_tenant(tenant.clone());
        r.created_ms = base + i;
        r.tasks = BTreeMap::from([("leaf".to_string(), TaskCounts { total: 2, done: 0 })]);
        let (key, fingerprint) = (format!("key-{i}"), format!("fp-{i}"));
        s.create(&r, Some((key.as_str(), fingerprint.as_str()))).await.unwrap();
    }
    s.task_done(&format!("{p}-b1"), "leaf", "leaf:0").await.unwrap();
    s.transition(&format!("{p}-b2"), JobState::Running, "planned").await.unwrap();
    // (The tenant's own listing: the store is shared with the other cases.)
    for listed in [s.list_brief(Some(&tenant), 0, 10).await.unwrap()] {
        let (page, _) = listed;
        let ids: Vec<String> = page.iter().map(|r| r.id.clone()).collect();
        assert_eq!(ids, vec![format!("{p}-b2"), format!("{p}-b1"), format!("{p}-b0")]);
        for r in page {
            let mut whole = s.get(&r.id).await.unwrap().expect("stored");
            assert_eq!(whole.spec, spec, "the record keeps its spec");
            assert!(r.spec.is_empty(), "a brief listing carried the spec of {}", r.id);
            whole.spec = String::new();
            assert_eq!(r, whole, "a brief record differs from the record but for its spec");
        }
    }
}

/// Jobs not yet ended are listed oldest first; a terminal transition or a deletion takes a job
/// off the list.
pub async fn active_jobs_are_listed(s: &dyn JobStore, p: &str) {
    let ids: Vec<String> = (0..3).map(|i| format!("{p}-{i}")).collect();
    for (i, id) in ids.iter().enumerate() {
        let mut r = record(id);
        r.created_ms = 1 + i as u64; // older than anything a concurrent case creates
        s.create(&r, None).await.unwrap();
    }
    s.transition(&ids[1], JobState::Running, "").await.unwrap();
    s.transition(&ids[2], JobState::Failed, "boom").await.unwrap();
    let mine = |v: Vec<JobRecord>| v.into_iter().map(|r| r.id).filter(|id| id.starts_with(p)).collect::<Vec<_>>();
    assert_eq!(mine(s.list_active(1000).await.unwrap()), vec![ids[0].clone(), ids[1].clone()]);
    // Paged, two at a time, every active job (of this case and any other) is seen once.
    let (mut seen, mut offset) = (Vec::new(), Some(0));
    while let Some(o) = offset {
        let (page, next) = s.active_page(o, 2).await.unwrap();
        assert!(page.len() <= 2);
        seen.extend(page.into_iter().filter(|j| j.id.starts_with(p)));
        offset = next;
    }
    assert_eq!(seen.iter().map(|j| (j.id.clone(), j.state)).collect::<Vec<_>>(), vec![(ids[0].clone(), JobState::Queued), (ids[1].clone(), JobState::Running)]);
    assert_eq!((seen[0].kind.as_str(), seen[0].created_ms), ("reckle.batch", 1));
    s.transition(&ids[1], JobState::Done, "").await.unwrap();
    s.delete(&ids[0]).await.unwrap();
    assert!(mine(s.list_active(1000).await.unwrap()).is_empty());
    assert!(s.active_page(0, 0).await.unwrap().0.is_empty());
}

/// A job given a retention expires whole: record, task state and idempotency key.
pub async fn finished_jobs_expire(s: &dyn JobStore, p: &str) {
    let (id, keep) = (format!("{p}-x"), format!("{p}-keep"));
    let key = format!("{p}-key");
    s.create(&record(&id), Some((&key, "fp"))).await.unwrap();
    s.create(&record(&keep), None).await.unwrap();
    s.task_done(&id, "leaf", "a").await.unwrap();
    s.transition(&id, JobState::Done, "").await.unwrap();
    // A retention long enough that "still there" holds on a loaded machine; then wait for the
    // expiry itself (bounded: it must come).
    s.expire(&id, std::time::Duration::from_secs(2)).await.unwrap();
    assert!(s.get(&id).await.unwrap().is_some(), "still there until the retention runs out");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while s.get(&id).await.unwrap().is_some() {
        assert!(std::time::Instant::now() < deadline, "the record never expired");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(!s.is_done(&id, "a").await.unwrap());
    // The key is free again: a new request under it creates a new job.
    assert_eq!(s.create(&record(&format!("{p}-y")), Some((&key, "other"))).await.unwrap(), Created::New);
    assert!(s.get(&keep).await.unwrap().is_some(), "other jobs stay");
}

/// Tenants: the same idempotency key in two tenants gives two jobs (and no conflict naming the
/// other tenant's job); each tenant's listing holds only its own jobs; the record keeps its
/// tenant.
pub async fn tenants_are_separate(s: &dyn JobStore, p: &str) {
    let (ta, tb) = (format!("{p}-ta"), format!("{p}-tb"));
    let a = record(&format!("{p}-a")).with_tenant(ta.clone());
    let b = record(&format!("{p}-b")).with_tenant(tb.clone());
    assert_eq!(s.create(&a, Some(("nightly", "fa"))).await.unwrap(), Created::New);
    // Same key, another request, another tenant: a new job, not a conflict with a's.
    assert_eq!(s.create(&b, Some(("nightly", "fb"))).await.unwrap(), Created::New);
    // Within a tenant the key still deduplicates.
    let a2 = record(&format!("{p}-a2")).with_tenant(ta.clone());
    assert_eq!(s.create(&a2, Some(("nightly", "fa"))).await.unwrap(), Created::Existing(a.id.clone()));
    // The key names its tenant's job, and only to that tenant.
    assert_eq!(s.idempotent(&ta, "nightly").await.unwrap(), Some(a.id.clone()));
    assert_eq!(s.idempotent(&tb, "nightly").await.unwrap(), Some(b.id.clone()));
    assert_eq!(s.idempotent(&format!("{p}-nobody"), "nightly").await.unwrap(), None);
    assert_eq!(s.idempotent(&ta, "weekly").await.unwrap(), None);
    assert_eq!(s.get(&a.id).await.unwrap().unwrap().tenant, ta);
    // The key as the client gave it, not qualified by the tenant.
    assert_eq!(s.get(&a.id).await.unwrap().unwrap().idempotency_key, "nightly");
    let plain = record(&format!("{p}-a3")).with_tenant(ta.clone());
    s.create(&plain, None).await.unwrap();
    assert_eq!(s.get(&plain.id).await.unwrap().unwrap().idempotency_key, "");
    s.delete(&plain.id).await.unwrap();
    let (la, next) = s.list_tenant(&ta, 0, 10).await.unwrap();
    assert_eq!((la.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), next), (vec![a.id.clone()], None));
    let (lb, _) = s.list_tenant(&tb, 0, 10).await.unwrap();
    assert_eq!(lb.iter().map(|r| r.id.clone()).collect::<Vec<_>>(), vec![b.id.clone()]);
    assert!(s.list_tenant(&format!("{p}-nobody"), 0, 10).await.unwrap().0.is_empty());
    // A job without a tenant is in no tenant's listing.
    let anon = record(&format!("{p}-n"));
    s.create(&anon, Some(("nightly", "fn"))).await.unwrap();
    assert_eq!(s.get(&anon.id).await.unwrap().unwrap().tenant, "");
    assert_eq!(s.get(&anon.id).await.unwrap().unwrap().idempotency_key, "nightly");
    assert_eq!(s.list_tenant(&ta, 0, 10).await.unwrap().0.len(), 1);
    for id in [&a.id, &b.id, &anon.id] {
        s.delete(id).await.unwrap();
    }
    assert_eq!(s.idempotent(&ta, "nightly").await.unwrap(), None, "a deleted job frees its key");
    assert!(s.list_tenant(&ta, 0, 10).await.unwrap().0.is_empty(), "deleted jobs leave the tenant's listing");
}

/// A tenant's active jobs are limited: at the limit a new job is refused with
/// [`JobError::LimitReached`] and nothing is written; a job that ends (or is deleted) frees its
/// place; a repeated submission naming an earlier job still answers; other tenants and jobs
/// without a tenant are not counted against it.
pub async fn tenant_active_jobs_are_limited(s: &dyn JobStore, p: &str) {
    let (ta, tb) = (format!("{p}-ta"), format!("{p}-tb"));
    let job = |n: &str, t: &str| record(&format!("{p}-{n}")).with_tenant(t.to_string());
    let full = Err(JobError::LimitReached { limit: "active jobs per tenant", max: 2 });
    assert_eq!(s.create_limited(&job("a1", &ta), Some(("k1", "f1")), Limits::active(2)).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&job("a2", &ta), None, Limits::active(2)).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&job("a3", &ta), None, Limits::active(2)).await, full);
    assert_eq!(s.get(&format!("{p}-a3")).await.unwrap(), None, "a refused job left a record");
    assert_eq!(s.list_tenant(&ta, 0, 10).await.unwrap().0.len(), 2);
    // The retry of a recorded submission is answered, not refused.
    assert_eq!(s.create_limited(&job("a1-retry", &ta), Some(("k1", "f1")), Limits::active(2)).await.unwrap(), Created::Existing(format!("{p}-a1")));
    // Other tenants and tenant-less jobs have their own count.
    assert_eq!(s.create_limited(&job("b1", &tb), None, Limits::active(2)).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&record(&format!("{p}-n1")), None, Limits::active(0)).await.unwrap(), Created::New);
    // A job that ends, or is deleted, frees its place.
    s.transition(&format!("{p}-a1"), JobState::Running, "").await.unwrap();
    assert_eq!(s.create_limited(&job("a3", &ta), None, Limits::active(2)).await, full, "a running job still counts");
    s.transition(&format!("{p}-a1"), JobState::Done, "").await.unwrap();
    assert_eq!(s.create_limited(&job("a3", &ta), None, Limits::active(2)).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&job("a4", &ta), None, Limits::active(2)).await, full);
    s.delete(&format!("{p}-a2")).await.unwrap();
    assert_eq!(s.create_limited(&job("a4", &ta), None, Limits::active(2)).await.unwrap(), Created::New);
    // Without a limit, none.
    assert_eq!(s.create(&job("a5", &ta), None).await.unwrap(), Created::New);
    for n in ["a1", "a3", "a4", "a5", "b1", "n1"] {
        s.delete(&format!("{p}-{n}")).await.unwrap();
    }
}

/// A tenant's hourly work budget: a job whose planned tasks would take the hour's total over
/// the limit is refused with [`JobError::LimitReached`] and writes nothing; jobs that end give
/// nothing back; a repeated submission is answered and charges nothing; other tenants and jobs
/// without a tenant have their own budget (none).
pub async fn tenant_hourly_tasks_are_limited(s: &dyn JobStore, p: &str) {
    let (ta, tb) = (format!("{p}-ta"), format!("{p}-tb"));
    let job = |n: &str, t: &str| record(&format!("{p}-{n}")).with_tenant(t.to_string());
    // record() plans 3 tasks; a budget of 7 admits two jobs.
    let lim = Limits { max_tasks_per_hour: Some(7), ..Limits::default() };
    let spent = Err(JobError::LimitReached { limit: LIMIT_HOURLY_TASKS, max: 7 });
    let hour = budget_hour(now_ms());
    assert_eq!(s.create_limited(&job("a1", &ta), Some(("k1", "f1")), lim).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&job("a2", &ta), None, lim).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&job("a3", &ta), None, lim).await, spent);
    assert_eq!(s.get(&format!("{p}-a3")).await.unwrap(), None, "a refused job left a record");
    // The cheap read a submission is refused by before its inputs are read; a refused job
    // charged nothing. (Read in the hour the jobs were charged to, unless it just turned.)
    let spent_now = s.tenant_hour_tasks(&ta).await.unwrap();
    if budget_hour(now_ms()) == hour {
        assert_eq!(spent_now, 6);
    }
    assert_eq!(s.tenant_hour_tasks(&format!("{p}-tz")).await.unwrap(), 0);
    assert_eq!(s.tenant_hour_tasks("").await.unwrap(), 0);
    assert_eq!(s.create_limited(&job("a1-retry", &ta), Some(("k1", "f1")), lim).await.unwrap(), Created::Existing(format!("{p}-a1")));
    s.transition(&format!("{p}-a1"), JobState::Done, "").await.unwrap();
    assert_eq!(s.create_limited(&job("a3", &ta), None, lim).await, spent, "an ended job gave its budget back");
    assert_eq!(s.create_limited(&job("b1", &tb), None, lim).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&record(&format!("{p}-n1")), None, Limits { max_tasks_per_hour: Some(0), ..Limits::default() }).await.unwrap(), Created::New);
    for n in ["a1", "a2", "b1", "n1"] {
        s.delete(&format!("{p}-{n}")).await.unwrap();
    }
}

/// Release marks only rise, per job and step, and go with the job; a tenant's active jobs are
/// counted until they end (the empty tenant is never counted).
pub async fn release_marks_and_tenant_activity(s: &dyn JobStore, p: &str) {
    let (id, t) = (format!("{p}-m"), format!("{p}-t"));
    s.create(&record(&id).with_tenant(t.clone()), None).await.unwrap();
    assert_eq!(s.release_mark(&id, "prove").await.unwrap(), 0);
    s.raise_release_mark(&id, "prove", 5).await.unwrap();
    s.raise_release_mark(&id, "prove", 3).await.unwrap();
    assert_eq!(s.release_mark(&id, "prove").await.unwrap(), 5, "a mark went down");
    assert_eq!(s.release_mark(&id, "commit").await.unwrap(), 0, "steps share a mark");
    assert_eq!(s.get(&id).await.unwrap().unwrap().tasks.len(), 2, "a mark reads as a task kind");
    let nope = format!("{p}-nope");
    assert_eq!(s.release_mark(&nope, "prove").await, Err(JobError::NotFound(nope.clone())));
    assert_eq!(s.raise_release_mark(&nope, "prove", 1).await, Err(JobError::NotFound(nope.clone())));
    assert_eq!(s.tenant_active(&t).await.unwrap(), 1);
    s.create(&record(&format!("{id}2")).with_tenant(t.clone()), None).await.unwrap();
    s.create(&record(&format!("{id}3")), None).await.unwrap();
    assert_eq!(s.tenant_active(&t).await.unwrap(), 2);
    assert_eq!(s.tenant_active("").await.unwrap(), 0);
    s.transition(&id, JobState::Done, "").await.unwrap();
    assert_eq!(s.tenant_active(&t).await.unwrap(), 1, "an ended job still counts");
    s.delete(&id).await.unwrap();
    s.delete(&format!("{id}2")).await.unwrap();
    s.delete(&format!("{id}3")).await.unwrap();
    assert_eq!(s.tenant_active(&t).await.unwrap(), 0);
    s.create(&record(&id), None).await.unwrap();
    assert_eq!(s.release_mark(&id, "prove").await.unwrap(), 0, "a deleted job's mark survived");
    s.delete(&id).await.unwrap();
}

/// Every ending lists the job as ended and not cleaned, in the same step as the move, until its
/// clean-up is marked done; an ending found a second time changes nothing; `end` takes only a
/// terminal state; a deleted job leaves the list.
pub async fn endings_stay_listed_until_cleaned(s: &dyn JobStore, p: &str) {
    let (a, b, c) = (format!("{p}-a"), format!("{p}-b"), format!("{p}-c"));
    for id in [&a, &b, &c] {
        s.create(&record(id), None).await.unwrap();
        assert!(!s.is_unclean(id).await.unwrap(), "a job that has not ended");
    }
    let hour = std::time::Duration::from_secs(3600);
    assert!(matches!(s.end(&c, JobState::Running, "", hour).await, Err(JobError::Invalid { field: "state", .. })));
    assert!(s.end(&a, JobState::Done, "", hour).await.unwrap());
    assert!(!s.end(&a, JobState::Failed, "late", hour).await.unwrap(), "an ended job ends once");
    assert_eq!(s.get(&a).await.unwrap().unwrap().state, JobState::Done);
    s.transition(&b, JobState::Running, "").await.unwrap();
    assert!(!s.is_unclean(&b).await.unwrap());
    // A plain transition to a terminal state is an ending too.
    assert!(s.transition(&b, JobState::Cancelled, "by user").await.unwrap());
    assert!(s.is_unclean(&a).await.unwrap() && s.is_unclean(&b).await.unwrap());
    assert!(!s.is_unclean(&c).await.unwrap());
    let mine = |v: Vec<(String, u64)>| v.into_iter().map(|(id, _)| id).filter(|id| id.starts_with(p)).collect::<Vec<_>>();
    let listed = mine(s.unclean(u64::MAX).await.unwrap());
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.contains(&a) && listed.contains(&b));
    s.mark_cleaned(&a).await.unwrap();
    assert!(!s.is_unclean(&a).await.unwrap());
    assert_eq!(mine(s.unclean(u64::MAX).await.unwrap()), vec![b.clone()]);
    s.mark_cleaned(&a).await.unwrap(); // idempotent
    s.delete(&b).await.unwrap();
    assert!(!s.is_unclean(&b).await.unwrap(), "a deleted job is not left to clean");
    assert!(mine(s.unclean(u64::MAX).await.unwrap()).is_empty());
}

/// `end` gives the record, its task state (a set made by a late report included) and its
/// idempotency key their retention in the same step: they expire without any further call, and
/// the job leaves the unclean list with its record.
pub async fn an_ending_takes_its_retention(s: &dyn JobStore, p: &str) {
    let id = format!("{p}-x");
    let key = format!("{p}-key");
    s.create(&record(&id), Some((&key, "fp"))).await.unwrap();
    s.task_done(&id, "leaf", "a").await.unwrap();
    assert!(s.end(&id, JobState::Failed, "boom", std::time::Duration::from_secs(2)).await.unwrap());
    // A report that arrives after the ending.
    s.task_done(&id, "leaf", "late").await.unwrap();
    s.mark_released(&id, "late").await.unwrap();
    assert!(s.get(&id).await.unwrap().is_some(), "still there until the retention runs out");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while s.get(&id).await.unwrap().is_some() {
        assert!(std::time::Instant::now() < deadline, "the record never expired");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    for t in ["a", "late"] {
        assert!(!s.is_done(&id, t).await.unwrap(), "done set of {t}");
    }
    assert!(!s.is_released(&id, "late").await.unwrap(), "a released set made after the ending expires too");
    assert!(!s.unclean(u64::MAX).await.unwrap().iter().any(|(j, _)| *j == id), "an expired job is not listed");
    assert!(!s.is_unclean(&id).await.unwrap());
    assert_eq!(s.create(&record(&format!("{p}-y")), Some((&key, "other"))).await.unwrap(), Created::New, "the key expired");
}

/// Waits (bounded: it must come) until `tenant`'s `usage` reads `want`.
async fn usage_becomes(s: &dyn JobStore, tenant: &str, usage: Usage, want: u64) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let got = s.usage(tenant, usage).await.unwrap();
        if got == want {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{} of {tenant} stayed at {got}, never {want}", usage.as_str());
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}

/// A tenant's job records and task state are charged when the job is recorded: past
/// `max_record_bytes` a job is refused with [`JobError::LimitReached`] naming the limit, and
/// nothing is written; an ended job without a retention keeps its charge, one with a retention
/// gives it back when it expires, a deleted job at once; a repeated submission charges nothing;
/// other tenants are charged apart, jobs without a tenant never.
pub async fn tenant_record_bytes_are_limited(s: &dyn JobStore, p: &str) {
    let (ta, tb) = (format!("{p}-ta"), format!("{p}-tb"));
    let job = |n: &str, t: &str| record(&format!("{p}-{n}")).with_tenant(t.to_string());
    let (rb, tb_bytes) = record_charge(&job("a1", &ta));
    assert!(tb_bytes > 0 && rb > job("a1", &ta).spec.len() as u64, "a record is charged its spec and its task state");
    let one = rb + tb_bytes;
    let lim = Limits { max_record_bytes: Some(2 * one), ..Limits::default() };
    let full = Err(JobError::LimitReached { limit: LIMIT_RECORD_BYTES, max: 2 * one });
    assert_eq!(s.create_limited(&job("a1", &ta), Some(("k1", "f1")), lim).await.unwrap(), Created::New);
    assert_eq!(s.create_limited(&job("a2", &ta), None, lim).await.unwrap(), Created::New);
    assert_eq!(s.usage(&ta, Usage::Records).await.unwrap(), 2 * one);
    assert_eq!(s.create_limited(&job("a3", &ta), None, lim).await, full);
    assert_eq!(s.get(&format!("{p}-a3")).await.unwrap(), None, "a refused job left a record");
    assert_eq!(s.usage(&ta, Usage::Records).await.unwrap(), 2 * one, "a refused job was charged");
    assert_eq!(s.create_limited(&job("a1-retry", &ta), Some(("k1", "f1")), lim).await.unwrap(), Created::Existing(format!("{p}-a1")));
    assert_eq!(s.usage(&ta, Usage::Records).await.unwrap(), 2 * one, "a repeated submission was charged");
    // Ended for good (no retention): the record stays, and so does its charge.
    s.transition(&format!("{p}-a1"), JobState::Cancelled, "").await.unwrap();
    assert_eq!(s.create_limited(&job("a3", &ta), None, lim).await, full, "an ended record that stays gave its charge back");
    // Ended with a retention: the charge goes when the record does.
    // (A retention long enough that "still charged" holds on a loaded machine.)
    assert!(s.end(&format!("{p}-a2"), JobState::Failed, "", std::time::Duration::from_secs(5)).await.unwrap());
    assert_eq!(s.usage(&ta, Usage::Records).await.unwrap(), 2 * one, "charged until the retention runs out");
    usage_becomes(s, &ta, Usage::Records, one).await;
    assert_eq!(s.create_limited(&job("a3", &ta), None, lim).await.unwrap(), Created::New);
    // Deleted: at once.
    s.delete(&format!("{p}-a1")).await.unwrap();
    assert_eq!(s.usage(&ta, Usage::Records).await.unwrap(), one);
    // Other tenants and jobs without one.
    assert_eq!(s.create_limited(&job("b1", &tb), None, lim).await.unwrap(), Created::New);
    assert_eq!(s.usage(&tb, Usage::Records).await.unwrap(), one);
    let none = Limits { max_record_bytes: Some(0), ..Limits::default() };
    assert_eq!(s.create_limited(&record(&format!("{p}-n1")), None, none).await.unwrap(), Created::New);
    assert_eq!(s.usage("", Usage::Records).await.unwrap(), 0);
    for n in ["a3", "b1", "n1"] {
        s.delete(&format!("{p}-{n}")).await.unwrap();
    }
    assert_eq!(s.usage(&ta, Usage::Records).await.unwrap(), 0);
    assert_eq!(s.usage(&tb, Usage::Records).await.unwrap(), 0);
}

/// Charges per item: an item's new charge replaces its old one (a smaller one is never
/// refused); past `max` a charge is refused naming the usage's limit and changes nothing;
/// usages and tenants are counted apart; `uncharge` gives an item's charge back; an expiring
/// charge goes by itself; records are not charged this way; the empty tenant never is.
pub async fn charges_are_per_item_and_limited(s: &dyn JobStore, p: &str) {
    let (t, other) = (format!("{p}-t"), format!("{p}-o"));
    let u = Usage::Uploads;
    assert_eq!(s.charge(&t, u, "a", 10, Some(25), None).await.unwrap(), None);
    assert_eq!(s.charge(&t, u, "b", 10, Some(25), None).await.unwrap(), None);
    assert_eq!(s.charge(&t, u, "c", 10, Some(25), None).await, Err(JobError::LimitReached { limit: LIMIT_UPLOAD_BYTES, max: 25 }));
    assert_eq!(s.usage(&t, u).await.unwrap(), 20, "a refused charge counted");
    assert_eq!(s.charge(&t, u, "a", 5, Some(0), None).await.unwrap(), Some(10), "a smaller charge refused");
    assert_eq!(s.charge(&t, u, "a", 15, Some(25), None).await.unwrap(), Some(5), "the old charge counted twice");
    assert_eq!(s.charge(&t, u, "a", 16, Some(25), None).await, Err(JobError::LimitReached { limit: LIMIT_UPLOAD_BYTES, max: 25 }));
    assert_eq!(s.usage(&t, u).await.unwrap(), 25);
    assert_eq!(s.charge(&t, Usage::Circuits, "a", 100, Some(100), None).await.unwrap(), None, "usages share a total");
    assert_eq!(s.charge(&other, u, "a", 25, Some(25), None).await.unwrap(), None, "tenants share a total");
    s.uncharge(&t, u, "b").await.unwrap();
    s.uncharge(&t, u, "b").await.unwrap();
    assert_eq!(s.usage(&t, u).await.unwrap(), 15);
    // A charge whose expiry has passed is not counted.
    assert_eq!(s.charge(&t, u, "stale", 10, None, Some(now_ms() - 1)).await.unwrap(), None);
    assert_eq!(s.usage(&t, u).await.unwrap(), 15);
    // A charge for bytes still being written (it would stay behind a crash) expires by itself;
    // one made lasting before then stays. Both are given the same expiry, so the total reads
    // 20 after it only if the lasting one stayed (else it falls from 25 to 15 at once).
    let at = now_ms() + 5000;
    assert_eq!(s.charge(&t, u, "pending", 5, Some(25), Some(at)).await.unwrap(), None);
    assert_eq!(s.charge(&t, u, "kept", 5, Some(25), Some(at)).await.unwrap(), None);
    assert_eq!(s.charge(&t, u, "kept", 5, None, None).await.unwrap(), Some(5));
    assert_eq!(s.usage(&t, u).await.unwrap(), 25);
    assert!(matches!(s.charge(&t, Usage::Records, "x", 1, None, None).await, Err(JobError::Invalid { field: "usage", .. })));
    assert!(matches!(s.charge(&t, u, ":total", 1, None, None).await, Err(JobError::Invalid { field: "item", .. })));
    assert!(matches!(s.charge(&t, u, "", 1, None, None).await, Err(JobError::Invalid { field: "item", .. })));
    assert_eq!(s.charge("", u, "a", u64::MAX, Some(0), None).await.unwrap(), None);
    assert_eq!(s.usage("", u).await.unwrap(), 0);
    usage_becomes(s, &t, u, 20).await;
    for (tn, us, item) in [(&t, u, "a"), (&t, u, "kept"), (&t, Usage::Circuits, "a"), (&other, u, "a")] {
        s.uncharge(tn, us, item).await.unwrap();
    }
    assert_eq!(s.usage(&t, u).await.unwrap(), 0);
}

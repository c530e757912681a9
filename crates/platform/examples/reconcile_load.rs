//! What one reconciler round costs Redis with many jobs (issue 33 item 4), against the round
//! it replaced, in one run on one server.
//!
//! Setup per row: `N` no-op jobs submitted (records, indexes) whose plan tasks are taken off
//! the plan queue, and `T` tasks queued in `noop.task`, spread over the jobs: every job has
//! work waiting, none is done. Then, with a grace of 0 (every job is looked at):
//!
//! * **walk**: the round before the per-job task index: every active job paged without its
//!   spec, and each task kind its idle jobs use walked once (`Queue::outstanding`) to see
//!   which of them have a task;
//! * **index**: [`Platform::reconcile_once`]: every active job paged, and each idle one asked
//!   `Queue::job_has_tasks` (its task index; the queues are walked only to confirm a job the
//!   index calls empty, before acting on it).
//!
//! (The round before both, the oldest 1,000 jobs read whole and each one's queues walked, is
//! in issue 33's note of stop 47: 73 s a round at 1,100 jobs.)
//!
//! For each: Redis commands per round (`INFO stats` `total_commands_processed`, less this
//! program's own pings and INFO calls), the round's wall time (median of 3), and the p99 and
//! largest latency of a `PING` sent every 5 ms on another connection during the rounds (what
//! every heartbeat and completion sees meanwhile). Last, the newest job's tasks are deleted
//! behind the queue's back (raw `XDEL`s: its task index still lists them, as after a Redis that
//! lost the entries) and the time until a round re-drives it is measured (the reconciler acts on
//! the second round that sees it idle; rounds run back to back here, every 2 s in a service).
//! A second table: the time to purge the oldest job (a cancel), by its task index, against one
//! walk of its kind's queue (what the purge before the index read, per task kind).
//!
//! Commands run inside scripts count too (a task-index look is `EVALSHA`, `SSCAN` and one
//! `XRANGE`: three), so the column counts work done by the server, not round trips.
//!
//! `cargo build --workspace --example reconcile_load && PROVER_TEST_REDIS_URL=redis://127.0.0.1:6391/
//! $CARGO_TARGET_DIR/debug/examples/reconcile_load [--jobs 100,1100,5000] [--tasks 20000] [--db 6]`
//! (the database is flushed; `--workspace` keeps the workspace's features, so nothing is built
//! a second time).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jobs::{JobStore, RedisJobStore};
use platform::kinds::noop;
use platform::{Platform, PlatformConfig, ReconcileState};
use queue::{Queue, QueueConfig, RedisQueue, TaskMessage};

fn arg(name: &str, default: &str) -> String {
    let v: Vec<String> = std::env::args().collect();
    v.iter().position(|a| a == name).and_then(|i| v.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

fn numbers(name: &str, default: &str) -> Vec<u64> {
    arg(name, default).split(',').map(|x| x.trim().parse().unwrap_or_else(|_| panic!("{name}: {x:?} is not a number"))).collect()
}

async fn commands(c: &mut redis::aio::MultiplexedConnection) -> u64 {
    let info: String = redis::cmd("INFO").arg("stats").query_async(c).await.unwrap();
    info.lines().find_map(|l| l.strip_prefix("total_commands_processed:")).unwrap().trim().parse().unwrap()
}

/// PINGs every 5 ms on a connection of their own while `run` is set; their latencies.
fn pinger(url: String, run: Arc<AtomicBool>, sent: Arc<AtomicU64>) -> tokio::task::JoinHandle<Vec<Duration>> {
    tokio::spawn(async move {
        let mut c = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
        let mut lat = Vec::new();
        while run.load(Ordering::Relaxed) {
            let t = Instant::now();
            let _: String = redis::cmd("PING").query_async(&mut c).await.unwrap();
            lat.push(t.elapsed());
            sent.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        lat
    })
}

/// The reconciler's look at active jobs before the task index: every active job paged
/// without its spec, then one walk of each task kind the (idle) jobs use. Returns the jobs it
/// found with nothing.
async fn walk_round(p: &Platform) -> Vec<String> {
    let mut idle = Vec::new();
    let mut offset = Some(0);
    while let Some(o) = offset {
        let (page, next) = p.job_store().active_page(o, 1000).await.unwrap();
        idle.extend(page);
        offset = next;
    }
    let mut busy = std::collections::HashSet::new();
    let mut walked = std::collections::HashSet::new();
    for job in &idle {
        for t in p.registry().task_kinds_of(&job.kind) {
            if walked.insert(t.name) {
                busy.extend(p.queue().outstanding(t.name).await.unwrap().into_keys());
            }
        }
    }
    idle.into_iter().filter(|j| !busy.contains(&j.id)).map(|j| j.id).collect()
}

struct Measured {
    commands: u64,
    round: Duration,
    p99: Duration,
    max: Duration,
}

/// A measurement under way: the pinger and the command count at its start.
struct Probe {
    run: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    pings: tokio::task::JoinHandle<Vec<Duration>>,
    before: u64,
}

async fn start(url: &str, admin: &mut redis::aio::MultiplexedConnection) -> Probe {
    let (run, sent) = (Arc::new(AtomicBool::new(true)), Arc::new(AtomicU64::new(0)));
    let pings = pinger(url.to_string(), run.clone(), sent.clone());
    Probe { run, sent, pings, before: commands(admin).await }
}

async fn finish(p: Probe, admin: &mut redis::aio::MultiplexedConnection, mut times: Vec<Duration>) -> Measured {
    p.run.store(false, Ordering::Relaxed);
    let mut lat = p.pings.await.unwrap();
    let after = commands(admin).await;
    // This program's own: the pings and one INFO (the first is counted before it runs).
    let own = p.sent.load(Ordering::Relaxed) + 1;
    let rounds = times.len() as u64;
    times.sort();
    lat.sort();
    let p99 = lat.get(lat.len() * 99 / 100).copied().unwrap_or_default();
    Measured { commands: (after - p.before).saturating_sub(own) / rounds, round: times[times.len() / 2], p99, max: lat.last().copied().unwrap_or_default() }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let base = std::env::var("PROVER_TEST_REDIS_URL").expect("PROVER_TEST_REDIS_URL (a Redis this program may flush a database of)");
    let db: u8 = arg("--db", "6").parse().expect("--db");
    let url = format!("{}/{db}", base.trim_end_matches('/').trim_end_matches("/0"));
    let tasks = numbers("--tasks", "20000")[0];
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    println!("| active jobs | queued tasks | round | Redis commands / round | round time (median of 3) | PING p99 during rounds | PING max | lost job re-driven after |");
    println!("|---:|---:|---|---:|---:|---:|---:|---:|");
    let mut purges = Vec::new();
    for n in numbers("--jobs", "100,1100,5000") {
        let () = redis::cmd("FLUSHDB").query_async(&mut admin).await.unwrap();
        let q: Arc<dyn Queue> = Arc::new(RedisQueue::connect(&url, QueueConfig::default()).await.unwrap());
        let store: Arc<dyn JobStore> = Arc::new(RedisJobStore::connect(&url).await.unwrap());
        let blobs = Arc::new(blobstore::FsStore::new(dir.path()).unwrap());
        let config = PlatformConfig { reconcile_grace: Duration::ZERO, ..PlatformConfig::default() };
        let p = Platform::with_config(q.clone(), blobs, store.clone(), config);
        let mut jobs = Vec::new();
        for _ in 0..n {
            jobs.push(p.submit(noop::request(1), None).await.unwrap().0);
        }
        // Plan tasks taken and acknowledged (never run): the jobs' work is the queued tasks.
        while let Some(l) = q.claim("plan", "bench", Duration::ZERO).await.unwrap() {
            q.complete(&l).await.unwrap();
        }
        let per_task: Vec<TaskMessage> = (0..tasks).map(|i| TaskMessage::new(jobs[(i % n) as usize].clone(), noop::TASK.name, format!("{i}"))).collect();
        for chunk in per_task.chunks(5000) {
            for t in chunk {
                q.enqueue(noop::TASK.name, t.clone()).await.unwrap();
            }
        }
        let probe = start(&url, &mut admin).await;
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            assert!(walk_round(&p).await.is_empty(), "every job has a task");
            times.push(t.elapsed());
        }
        let old = finish(probe, &mut admin, times).await;
        let mut st = ReconcileState::default();
        let probe = start(&url, &mut admin).await;
        let mut times = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            let r = p.reconcile_once(&mut st).await.unwrap();
            times.push(t.elapsed());
            assert!(r.failed.is_empty() && r.redriven.is_empty(), "{r:?}");
        }
        let new = finish(probe, &mut admin, times).await;
        // A lost job: the newest job's tasks deleted behind the queue's back (a raw `XDEL`,
        // as a Redis that lost them would), so its task index still lists them.
        let lost = jobs.last().unwrap().clone();
        let ids: Vec<String> = redis::cmd("SMEMBERS").arg(format!("prover:tasks:{lost}")).query_async(&mut admin).await.unwrap();
        assert!(!ids.is_empty(), "the lost job's tasks are indexed");
        for m in &ids {
            let (kind, id) = m.split_once(' ').unwrap();
            let _: u64 = redis::cmd("XDEL").arg(format!("prover:q:{kind}")).arg(id).query_async(&mut admin).await.unwrap();
        }
        let start = Instant::now();
        let mut st = ReconcileState::default();
        let found = loop {
            let r = p.reconcile_once(&mut st).await.unwrap();
            if r.redriven.contains(&lost) {
                break start.elapsed();
            }
            assert!(start.elapsed() < Duration::from_secs(600), "the lost job was never re-driven");
        };
        // A cancel's purge of one job: the task index, against one walk of the one kind's
        // queue (the least the purge before the index read: it walked every task kind).
        let t = Instant::now();
        let walked = q.outstanding(noop::TASK.name).await.unwrap()[&jobs[0]];
        let walk_purge = t.elapsed();
        let t = Instant::now();
        let purged = q.purge_all(&jobs[0]).await.unwrap();
        let index_purge = t.elapsed();
        assert_eq!(purged, walked, "the purge took the job's waiting tasks");
        let ms = |d: Duration| format!("{:.1} ms", d.as_secs_f64() * 1e3);
        purges.push(format!("| {n} | {tasks} | {purged} | {} | {} | {:.0}× |", ms(walk_purge), ms(index_purge), walk_purge.as_secs_f64() / index_purge.as_secs_f64()));
        println!("| {n} | {tasks} | walk | {} | {} | {} | {} | 2 rounds |", old.commands, ms(old.round), ms(old.p99), ms(old.max));
        println!("| {n} | {tasks} | index | {} | {} | {} | {} | {} (2 rounds) |", new.commands, ms(new.round), ms(new.p99), ms(new.max), ms(found));
        println!(
            "| | | ratio walk/index | {:.1}× | {:.1}× | | | |",
            old.commands as f64 / new.commands.max(1) as f64,
            old.round.as_secs_f64() / new.round.as_secs_f64()
        );
    }
    println!();
    println!("| active jobs | queued tasks | the job's tasks purged | one walk of its kind's queue | purge_all (task index) | ratio |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for row in purges {
        println!("{row}");
    }
}

//! Orchestration benchmark of the platform roles, in one process, over the in-process backends
//! and (with `--redis URL --s3-endpoint URL`, credentials from AWS_ACCESS_KEY_ID /
//! AWS_SECRET_ACCESS_KEY) over Redis and S3:
//!
//! 1. no-op jobs: N tasks that do nothing go planner → worker → executor; throughput (tasks/s)
//!    and each task's dispatch-to-report latency (median, p99) for each number of worker loops;
//! 2. a Reckle batch job end to end with 1 and with 2 workers (circuits built beforehand);
//! 3. a Hekaton job (the §8.1 circuit, `K` subcircuits of `STEPS` steps and `WIRES` shared
//!    wires) with 1 and with 2 workers, after one warm-up job that makes the keys: wall time,
//!    the CPU time inside the proof system (`prover_hekaton_cpu_seconds`, by step) and the
//!    rest, which is the platform's (queue, object store, bookkeeping).
//!
//! `cargo run --release -p platform --example platform_bench -- [--tasks 5000] [--workers 1,4,16]
//!  [--executor-loops 1,4] [--reckle 8:3:16|none] [--hekaton 4:16384:64|none] [--redis URL --s3-endpoint URL]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use blobstore::{BlobStore, FsStore, S3Config, S3Store};
use jobs::{JobStore, MemoryJobStore, RedisJobStore};
use platform::{JobOutcome, Leaves, Platform, PlatformConfig};
use queue::{MemoryQueue, Queue, QueueConfig, RedisQueue};
use rand::{Rng, SeedableRng};

struct Args {
    tasks: u64,
    workers: Vec<usize>,
    executor_loops: Vec<usize>,
    reckle: Option<(u32, u32, usize)>,
    hekaton: Option<(usize, usize, usize)>,
    redis: Option<String>,
    s3: Option<String>,
}

fn args() -> Args {
    let mut a = Args { tasks: 5000, workers: vec![1, 4, 16], executor_loops: vec![4], reckle: Some((8, 3, 16)), hekaton: Some((4, 1 << 14, 64)), redis: None, s3: None };
    let v: Vec<String> = std::env::args().skip(1).collect();
    let mut i = 0;
    while i < v.len() {
        let val = v.get(i + 1).cloned().unwrap_or_default();
        match v[i].as_str() {
            "--tasks" => a.tasks = val.parse().expect("--tasks N"),
            "--workers" => a.workers = val.split(',').map(|w| w.parse().expect("--workers a,b,c")).collect(),
            "--executor-loops" => a.executor_loops = val.split(',').map(|w| w.parse().expect("--executor-loops a,b")).collect(),
            "--reckle" if val == "none" => a.reckle = None,
            "--reckle" => {
                let p: Vec<u64> = val.split(':').map(|x| x.parse().expect("--reckle LOG_N:LOG_BUCKET:BATCH")).collect();
                a.reckle = Some((p[0] as u32, p[1] as u32, p[2] as usize));
            }
            "--hekaton" if val == "none" => a.hekaton = None,
            "--hekaton" => {
                let p: Vec<usize> = val.split(':').map(|x| x.parse().expect("--hekaton K:STEPS:WIRES")).collect();
                a.hekaton = Some((p[0], p[1], p[2]));
            }
            "--redis" => a.redis = Some(val),
            "--s3-endpoint" => a.s3 = Some(val),
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    a
}

type Backends = (Arc<dyn Queue>, Arc<dyn BlobStore>, Arc<dyn JobStore>, &'static str);

async fn backends(a: &Args, dir: &std::path::Path) -> Backends {
    let cfg = QueueConfig::default();
    match (&a.redis, &a.s3) {
        (Some(r), Some(s3)) => {
            let blobs = S3Store::connect(S3Config {
                endpoint: s3.clone(),
                bucket: "prover-bench".into(),
                region: "us-east-1".into(),
                access_key: std::env::var("AWS_ACCESS_KEY_ID").expect("AWS_ACCESS_KEY_ID"),
                secret_key: std::env::var("AWS_SECRET_ACCESS_KEY").expect("AWS_SECRET_ACCESS_KEY"),
            })
            .await
            .expect("S3");
            (
                Arc::new(RedisQueue::connect(r, cfg).await.expect("Redis")),
                Arc::new(blobs),
                Arc::new(RedisJobStore::connect(r).await.expect("Redis")),
                "Redis + S3",
            )
        }
        _ => (Arc::new(MemoryQueue::new(cfg)), Arc::new(FsStore::new(dir).unwrap()), Arc::new(MemoryJobStore::new()), "in-process"),
    }
}

fn pct(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[((q * v.len() as f64).ceil() as usize).clamp(1, v.len()) - 1]
}

fn run_roles(p: &Arc<Platform>, workers: usize) -> tokio::sync::watch::Sender<bool> {
    let (tx, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(p.clone().run_executor("bench-executor".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("bench-aggregator".into(), rx.clone()));
    for i in 0..workers {
        tokio::spawn(p.clone().run_worker(format!("bench-worker-{i}"), rx.clone()));
    }
    tx
}

/// `prover_hekaton_cpu_seconds` sums by step, from the recorder's text rendering.
fn cpu_seconds(m: &metrics_exporter_prometheus::PrometheusHandle) -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    for line in m.render().lines() {
        let Some(rest) = line.strip_prefix("prover_hekaton_cpu_seconds_sum{step=\"") else { continue };
        let Some((step, value)) = rest.split_once("\"} ") else { continue };
        out.insert(step.to_string(), value.trim().parse().unwrap_or(0.0));
    }
    out
}

#[tokio::main]
async fn main() {
    let a = args();
    let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder().expect("metrics recorder");
    let dir = tempfile::tempdir().unwrap();
    let (q, blobs, jobs, backend) = backends(&a, dir.path()).await;
    println!("backend: {backend}, {} cores", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    println!("\nno-op tasks (planner enqueues all; each goes worker → done report → executor):");
    println!("gap = time between consecutive tasks finishing at the executor (per-task orchestration cost");
    println!("of the saturated pipeline); latency = enqueue → executor, mostly waiting behind the backlog");
    println!("| worker loops | executor loops | tasks | wall | tasks/s | gap p50 | gap p99 | latency p50 | latency p99 |");
    println!("|---|---|---|---|---|---|---|---|---|");
    for (w, e) in a.workers.iter().flat_map(|&w| a.executor_loops.iter().map(move |&e| (w, e))) {
        let config = PlatformConfig { executor_loops: e, ..Default::default() };
        let p = Platform::with_config(q.clone(), blobs.clone(), jobs.clone(), config);
        let stop = run_roles(&p, w);
        Platform::take_noop_latencies();
        let t = Instant::now();
        let (job, _) = p.submit(platform::kinds::noop::request(a.tasks), None).await.unwrap();
        let out = p.wait(&job, |_| {}).await;
        let wall = t.elapsed();
        let _ = stop.send(true);
        assert_eq!(out, JobOutcome::Done);
        let mut rec = Platform::take_noop_latencies();
        rec.sort_by_key(|r| r.1);
        let mut lat: Vec<f64> = rec.iter().map(|(a, b)| b.saturating_sub(*a) as f64 / 1e3).collect();
        let mut gaps: Vec<f64> = rec.windows(2).map(|w| (w[1].1 - w[0].1) as f64 / 1e3).collect();
        println!(
            "| {w} | {e} | {} | {:.2} s | {:.0} | {:.3} ms | {:.3} ms | {:.0} ms | {:.0} ms |",
            a.tasks,
            wall.as_secs_f64(),
            a.tasks as f64 / wall.as_secs_f64(),
            pct(&mut gaps, 0.5),
            pct(&mut gaps, 0.99),
            pct(&mut lat, 0.5),
            pct(&mut lat, 0.99)
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    // Idle dispatch: one task at a time into an idle pipeline (the roles block on the queue;
    // nothing polls), 1 worker loop.
    {
        let p = Platform::new(q.clone(), blobs.clone(), jobs.clone());
        let stop = run_roles(&p, 1);
        tokio::time::sleep(Duration::from_millis(300)).await;
        Platform::take_noop_latencies();
        for _ in 0..40 {
            let (job, _) = p.submit(platform::kinds::noop::request(1), None).await.unwrap();
            assert_eq!(p.wait(&job, |_| {}).await, JobOutcome::Done);
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        let _ = stop.send(true);
        let mut lat: Vec<f64> = Platform::take_noop_latencies().iter().map(|(a, b)| b.saturating_sub(*a) as f64 / 1e3).collect();
        println!("\nidle dispatch: 40 one-task jobs into an idle pipeline, task enqueued → worker → report at the executor:");
        println!("latency p50 {:.2} ms, p99 {:.2} ms", pct(&mut lat, 0.5), pct(&mut lat, 0.99));
        tokio::time::sleep(Duration::from_millis(200)).await;
    }

    if let Some((log_n, log_bucket, batch)) = a.reckle {
        println!("\nReckle batch job, ℓ = {log_n}, q = {log_bucket}, |I| = {batch} (circuits built before timing):");
        println!("| workers | node proofs | wall | speed-up |");
        println!("|---|---|---|---|");
        let mut rng = rand::rngs::StdRng::seed_from_u64(1);
        let n = 1usize << log_n;
        let values: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
        let mut idx: Vec<u64> = rand::seq::index::sample(&mut rng, n, batch).into_iter().map(|i| i as u64).collect();
        idx.sort_unstable();
        let mut base = None;
        for w in [1usize, 2] {
            let p = Platform::new(q.clone(), blobs.clone(), jobs.clone());
            p.circuits(reckle::Params::new(log_n, log_bucket).unwrap()).await.unwrap();
            let stop = run_roles(&p, w);
            let t = Instant::now();
            let req = platform::kinds::reckle::batch_request(log_n, log_bucket, idx.clone(), Leaves::Inline(values.clone()), false);
            let (job, _) = p.submit(req, None).await.unwrap();
            let out = p.wait(&job, |_| {}).await;
            let wall = t.elapsed().as_secs_f64();
            let _ = stop.send(true);
            assert_eq!(out, JobOutcome::Done);
            let nodes = jobs.get(&job).await.unwrap().unwrap().progress().total;
            let b = *base.get_or_insert(wall);
            println!("| {w} | {nodes} | {wall:.1} s | {:.2}× |", b / wall);
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    if let Some((k, steps, wires)) = a.hekaton {
        let circuit = hekaton::spec::CircuitSpec::Synthetic { subcircuits: k, steps, wires };
        println!("\nHekaton job, §8.1 circuit, {k} subcircuits × {steps} steps, {wires} shared wires each (keys made by a warm-up job):");
        println!("| workers | wall | proof-system CPU (commit / challenge / prove / verify / decode) | platform | platform share |");
        println!("|---|---|---|---|---|");
        let p = Platform::new(q.clone(), blobs.clone(), jobs.clone());
        let stop = run_roles(&p, 1);
        let (job, _) = p.submit(platform::kinds::hekaton::request(circuit, 0, false), None).await.unwrap();
        assert_eq!(p.wait(&job, |_| {}).await, JobOutcome::Done, "warm-up job");
        let _ = stop.send(true);
        tokio::time::sleep(Duration::from_millis(200)).await;
        let mut base = None;
        for (run, w) in [1usize, 2].into_iter().enumerate() {
            let p = Platform::new(q.clone(), blobs.clone(), jobs.clone());
            let stop = run_roles(&p, w);
            let before = cpu_seconds(&recorder);
            let t = Instant::now();
            let (job, _) = p.submit(platform::kinds::hekaton::request(circuit, 1 + run as u64, false), None).await.unwrap();
            let out = p.wait(&job, |_| {}).await;
            let wall = t.elapsed().as_secs_f64();
            let _ = stop.send(true);
            assert_eq!(out, JobOutcome::Done);
            let after = cpu_seconds(&recorder);
            let d = |s: &str| after.get(s).copied().unwrap_or(0.0) - before.get(s).copied().unwrap_or(0.0);
            let cpu: f64 = after.keys().map(|s| d(s)).sum();
            let b = *base.get_or_insert(wall);
            let platform = (wall - cpu).max(0.0);
            if w == 1 {
                println!(
                    "| 1 | {wall:.2} s | {cpu:.2} s ({:.2} / {:.2} / {:.2} / {:.2} / {:.2}) | {platform:.3} s | {:.2}% |",
                    d("commit"), d("challenge"), d("prove"), d("verify"), d("decode"),
                    100.0 * platform / wall
                );
            } else {
                // With two workers CPU time overlaps: wall against the one-worker run instead.
                println!("| {w} | {wall:.2} s ({:.2}× faster) | {cpu:.2} s summed | – | – |", b / wall);
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
}

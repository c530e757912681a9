//! Orchestration overhead of the queue with no-op tasks: enqueue N tasks, then W concurrent
//! workers claim and complete them until the queue is empty. Prints a markdown table with the
//! throughput and the per-task claim+complete latency (median, p99), for the in-process queue
//! and, if `PROVER_TEST_REDIS_URL` is set, for Redis.
//!
//! ```text
//! PROVER_TEST_REDIS_URL=redis://127.0.0.1:6391/ cargo run --release -p queue --example queue_bench -- 20000 1,4,16
//! ```

use std::sync::Arc;
use std::time::{Duration, Instant};

use queue::{MemoryQueue, Queue, QueueConfig, RedisQueue, TaskMessage};

async fn run(q: Arc<dyn Queue>, name: &str, n: usize, workers: usize) {
    let kind = format!("noop.bench{}", std::process::id() as u64 * 1000 + workers as u64);
    let t = Instant::now();
    for i in 0..n {
        let task = TaskMessage::new("bench", i.to_string(), "{}");
        q.enqueue(&kind, task).await.unwrap();
    }
    let enqueue = t.elapsed().as_secs_f64();
    let t = Instant::now();
    let mut handles = Vec::new();
    for w in 0..workers {
        let q = q.clone();
        let kind = kind.clone();
        handles.push(tokio::spawn(async move {
            let mut lat = Vec::new();
            loop {
                let s = Instant::now();
                match q.claim(&kind, &format!("w{w}"), Duration::ZERO).await.unwrap() {
                    Some(l) => {
                        q.complete(&l).await.unwrap();
                        lat.push(s.elapsed());
                    }
                    None => break,
                }
            }
            lat
        }));
    }
    let mut lat: Vec<Duration> = Vec::new();
    for h in handles {
        lat.extend(h.await.unwrap());
    }
    let drain = t.elapsed().as_secs_f64();
    assert_eq!(lat.len(), n, "every task claimed exactly once");
    lat.sort();
    let p = |q: f64| lat[((lat.len() as f64 - 1.0) * q) as usize].as_secs_f64() * 1e3;
    println!(
        "| {name} | {n} | {workers} | {:.0}/s | {:.0}/s | {:.3} ms | {:.3} ms |",
        n as f64 / enqueue,
        n as f64 / drain,
        p(0.5),
        p(0.99)
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = args.get(1).map(|s| s.parse().unwrap()).unwrap_or(20000);
    let workers: Vec<usize> =
        args.get(2).map(|s| s.split(',').map(|w| w.parse().unwrap()).collect()).unwrap_or_else(|| vec![1, 4, 16]);
    println!("| queue | tasks | workers | enqueue (1 client) | claim+complete throughput | latency p50 | latency p99 |");
    println!("|---|---|---|---|---|---|---|");
    for &w in &workers {
        run(Arc::new(MemoryQueue::new(QueueConfig::default())), "in-process", n, w).await;
    }
    if let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") {
        let q: Arc<dyn Queue> = Arc::new(RedisQueue::connect(&url, QueueConfig::default()).await.unwrap());
        for &w in &workers {
            run(q.clone(), "Redis 7 (loopback)", n, w).await;
        }
    }
}

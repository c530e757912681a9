//! Redis slow to answer (issue 33): 600 ms added to every answer, through a real TCP proxy
//! (Toxiproxy), while Pari jobs are submitted and run by an executor, an aggregator and two
//! workers in this process, the workers started once Redis is slow. Every submit is answered (no ambiguous create), every job ends done
//! (none failed by a timed-out heartbeat, completion or report), and every ended job's record
//! carries its retention (a TTL), with nothing left to clean up.

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

mod common;

use jobs::{JobState, JobStore, RedisJobStore};
use pari::circuits::CircuitFamily;
use platform::{JobOutcome, Submission, Platform};
use queue::{QueueConfig, RedisQueue};
use tokio::sync::watch;

/// A safety net on a wait for an event, not a timing assertion.
const BOUND: Duration = Duration::from_secs(600);
/// Logical database of the test Redis this test uses alone.
const DB: u8 = 6;
const LATENCY_MS: u64 = 600;

struct Toxiproxy {
    child: Child,
    api: String,
}

impl Drop for Toxiproxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Toxiproxy {
    /// The server at `bin` on a free loopback port, waited for until its API answers.
    async fn start(bin: &str) -> Toxiproxy {
        let port = free_port();
        let child = Command::new(bin)
            .args(["-host", "127.0.0.1", "-port", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("starting {bin}: {e}"));
        let t = Toxiproxy { child, api: format!("http://127.0.0.1:{port}") };
        let deadline = std::time::Instant::now() + BOUND;
        while t.call("GET", "/version", None).is_err() {
            assert!(std::time::Instant::now() < deadline, "toxiproxy never answered");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        t
    }

    /// One API call (curl, as the test command has it): the body of a 2xx answer.
    fn call(&self, method: &str, path: &str, body: Option<&str>) -> Result<String, String> {
        let mut c = Command::new("curl");
        c.args(["-sS", "--fail-with-body", "-X", method, &format!("{}{path}", self.api)]);
        if let Some(b) = body {
            c.args(["-H", "Content-Type: application/json", "-d", b]);
        }
        let out = c.output().map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        if out.status.success() {
            Ok(text)
        } else {
            Err(format!("{method} {path}: {text}{}", String::from_utf8_lossy(&out.stderr)))
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn request(seed_start: u64) -> Submission {
    platform::kinds::pari::request(CircuitFamily::Chain { steps: 8 }, seed_start, 6, 3, 6)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn pari_jobs_end_done_and_cleaned_through_600ms_of_redis_latency() {
    let _ = tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_test_writer().try_init();
    let bin = match std::env::var("PROVER_TEST_TOXIPROXY") {
        Ok(b) => b,
        Err(_) => {
            assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_TOXIPROXY is not set (scripts/test.d/10-services.sh sets it)");
            eprintln!("skipping: PROVER_TEST_TOXIPROXY not set");
            return;
        }
    };
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(6), ..QueueConfig::default() };
    let Some((_, blobs, _, _)) = common::backends_in_db(true, cfg.clone(), DB).await else { return };
    let redis = std::env::var("PROVER_TEST_REDIS_URL").unwrap();
    let upstream = redis.trim_start_matches("redis://").trim_end_matches('/').trim_end_matches("/0").to_string();
    let direct_url = format!("redis://{upstream}/{DB}");
    let mut direct = redis::Client::open(direct_url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("FLUSHDB").query_async(&mut direct).await.unwrap();

    let proxy = Toxiproxy::start(&bin).await;
    let listen = format!("127.0.0.1:{}", free_port());
    proxy.call("POST", "/proxies", Some(&format!(r#"{{"name":"redis","listen":"{listen}","upstream":"{upstream}","enabled":true}}"#))).unwrap();
    let via_proxy = format!("redis://{listen}/{DB}");
    // The services' defaults: each Redis answer may take up to --redis-timeout-secs (10 s).
    let q = RedisQueue::connect(&via_proxy, cfg).await.unwrap();
    let store = RedisJobStore::connect(&via_proxy).await.unwrap();
    let p = Platform::new(Arc::new(q), blobs, Arc::new(store));

    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    let (first, _) = p.submit(request(100), None).await.unwrap();

    // Every answer from Redis now comes 600 ms late: on the services' connections, their
    // heartbeats, claims, completions and creates.
    proxy
        .call("POST", "/proxies/redis/toxics", Some(&format!(r#"{{"name":"slow","type":"latency","stream":"downstream","attributes":{{"latency":{LATENCY_MS},"jitter":0}}}}"#)))
        .unwrap();
    // The workers start now, as pods restarted during the slowness would: each connection they
    // open (the blocking reads have their own) is set up under the latency.
    for i in 0..2 {
        tokio::spawn(p.clone().run_worker(format!("w{i}"), rx.clone()));
    }
    let progress_before = p.job_store().get(&first).await.unwrap().unwrap().progress().done;
    // Submits under latency, one of them retried with its idempotency key: each is answered.
    let mut jobs = vec![first.clone()];
    for (seed, key) in [(200, Some("slow-a")), (300, None), (200, Some("slow-a"))] {
        let (job, _) = p.submit(request(seed), key).await.expect("a submit under latency is answered");
        if !jobs.contains(&job) {
            jobs.push(job);
        }
    }
    assert_eq!(jobs.len(), 3, "the retried submit returned its first job");
    // The latency stays until some task has completed under it.
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        let mut done = 0;
        for j in &jobs {
            done += p.job_store().get(j).await.unwrap().unwrap().progress().done;
        }
        if done > progress_before {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "no task completed under latency");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    proxy.call("DELETE", "/proxies/redis/toxics/slow", None).unwrap();

    for j in &jobs {
        let outcome = tokio::time::timeout(BOUND, p.wait(j, |_| {})).await.expect("the job ended");
        assert_eq!(outcome, JobOutcome::Done, "job {j}");
    }
    // Every ended job has its retention and nothing is left to clean up, as read on a direct
    // connection; exactly the three jobs exist.
    let store = RedisJobStore::connect(&direct_url).await.unwrap();
    let deadline = std::time::Instant::now() + BOUND;
    while !store.unclean(100).await.unwrap().is_empty() {
        assert!(std::time::Instant::now() < deadline, "clean-ups never finished");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for j in &jobs {
        assert_eq!(store.get(j).await.unwrap().unwrap().state, JobState::Done);
        let ttl: i64 = redis::cmd("PTTL").arg(format!("prover:job:{j}")).query_async(&mut direct).await.unwrap();
        assert!(ttl > 0, "job {j} ended without a TTL ({ttl})");
    }
    assert_eq!(store.list(0, 100).await.unwrap().0.len(), 3, "a job was created twice");
    let _ = stop.send(true);
}

//! Durable acknowledgements (`--redis-durability`, `queue::durable`): a submit or a cancel is
//! acknowledged only once Redis has it in its AOF on disk. Real servers: Valkey 8 (it has
//! `WAITAOF`) and the apt Redis 7.0 (it has none), each started here on a directory of its own
//! with the persistence settings under test; MinIO for the job's inputs.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

mod common;

use jobs::{JobState, JobStore, RedisJobStore};
use platform::kinds::noop;
use platform::service::{connect_backends, BackendArgs, ServiceError};
use platform::{Ending, Platform, PlatformConfig};
use queue::durable::{AckGate, Durability};
use queue::{QueueConfig, RedisQueue};

/// A safety net on a wait for an event, not a timing assertion.
const BOUND: Duration = Duration::from_secs(120);
const TIMEOUT: Duration = Duration::from_secs(10);

/// A Redis-compatible server of this test's own, killed when dropped.
struct Server {
    bin: PathBuf,
    port: u16,
    dir: tempfile::TempDir,
    args: Vec<String>,
    child: Child,
}

impl Server {
    /// `bin` on a free loopback port with AOF settings `aof` (e.g. `["--appendonly", "yes",
    /// "--appendfsync", "everysec"]`), waited for until it answers.
    async fn start(bin: &Path, aof: &[&str]) -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
        let dir = tempfile::tempdir().unwrap();
        let args: Vec<String> = aof.iter().map(|s| s.to_string()).collect();
        let child = spawn(bin, port, dir.path(), &args);
        let s = Server { bin: bin.to_path_buf(), port, dir, args, child };
        s.wait_ready().await;
        s
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// SIGKILL, then the same server on the same directory (it loads its AOF).
    async fn kill_and_restart(&mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        self.child = spawn(&self.bin, self.port, self.dir.path(), &self.args);
        self.wait_ready().await;
    }

    async fn wait_ready(&self) {
        let client = redis::Client::open(self.url()).unwrap();
        let deadline = std::time::Instant::now() + BOUND;
        loop {
            if let Ok(mut c) = client.get_multiplexed_async_connection().await {
                // PING answers LOADING while the AOF is read back.
                if redis::cmd("PING").query_async::<String>(&mut c).await.is_ok() {
                    return;
                }
            }
            assert!(std::time::Instant::now() < deadline, "{} never answered", self.bin.display());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn conn(&self) -> redis::aio::MultiplexedConnection {
        redis::Client::open(self.url()).unwrap().get_multiplexed_async_connection().await.unwrap()
    }

    /// How many `WAITAOF` commands the server has run.
    async fn waitaofs(&self) -> u64 {
        let stats: String = redis::cmd("INFO").arg("commandstats").query_async(&mut self.conn().await).await.unwrap();
        stats
            .lines()
            .find_map(|l| l.strip_prefix("cmdstat_waitaof:calls="))
            .map(|rest| rest.split(',').next().unwrap().parse().unwrap())
            .unwrap_or(0)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(bin: &Path, port: u16, dir: &Path, aof: &[String]) -> Child {
    Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--maxmemory-policy", "noeviction"])
        .arg("--dir")
        .arg(dir)
        .args(aof)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("starting {}: {e}", bin.display()))
}

/// The server binary named by `var` (the test command sets both); `None` skips the test unless
/// the services are required.
fn server_bin(var: &str, default: Option<&str>) -> Option<PathBuf> {
    match std::env::var(var).ok().or(default.map(String::from)) {
        Some(p) => Some(PathBuf::from(p)),
        None => {
            assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "{var} is not set (scripts/test.d/10-services.sh sets it)");
            eprintln!("skipping: {var} not set");
            None
        }
    }
}

/// The apt Redis 7.0 (no `WAITAOF`), which the test command installs with the rest of the
/// services.
fn redis7() -> Option<PathBuf> {
    server_bin("PROVER_TEST_REDIS_URL", None).map(|_| PathBuf::from("redis-server"))
}

fn backend_args(redis: &str, durability: &str) -> BackendArgs {
    BackendArgs {
        redis: Some(redis.to_string()),
        s3_endpoint: std::env::var("PROVER_TEST_S3_ENDPOINT").ok(),
        bucket: std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into()),
        s3_region: "us-east-1".into(),
        s3_timeout_secs: 30,
        redis_timeout_secs: TIMEOUT.as_secs(),
        assume_noeviction: false,
        redis_durability: durability.into(),
        redis_ack_replicas: 0,
        backend_wait_secs: 0,
    }
}

/// A platform on the Valkey `v`, its job store waiting for the AOF, the objects in the test S3.
async fn platform_on(v: &Server) -> Option<Arc<Platform>> {
    let (_, blobs, _, _) = common::backends(true, QueueConfig::default()).await?;
    let (gate, warning) = AckGate::open(&v.url(), Durability::Aof, TIMEOUT).await.unwrap();
    assert_eq!(warning, None);
    let gate = gate.expect("Valkey has WAITAOF, so acknowledgements wait for it");
    let jobs = RedisJobStore::connect(&v.url()).await.unwrap().with_ack_gate(Some(Arc::new(gate)));
    let q = RedisQueue::connect(&v.url(), QueueConfig::default()).await.unwrap();
    Some(Platform::with_config(Arc::new(q), blobs, Arc::new(jobs), PlatformConfig::default()))
}

/// Under `appendfsync everysec` (Redis's default with AOF on) a submit and a cancel are
/// acknowledged after a `WAITAOF`; the server SIGKILLed right after the submit returned has
/// the job when it comes back. With AOF turned off under the running service, a submit is
/// not acknowledged (the job is recorded, and the user is told to retry with the same
/// idempotency key); once AOF is back, the retry returns that same job.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledged_submits_and_cancels_wait_for_the_aof() {
    let Some(bin) = server_bin("PROVER_TEST_VALKEY_SERVER", None) else { return };
    let mut v = Server::start(&bin, &["--appendonly", "yes", "--appendfsync", "everysec"]).await;
    let Some(p) = platform_on(&v).await else { return };

    let (job, _) = p.submit(noop::request(2), None).await.unwrap();
    let after_submit = v.waitaofs().await;
    assert!(after_submit >= 1, "the submit was acknowledged without WAITAOF");
    v.kill_and_restart().await;
    let reread = RedisJobStore::connect(&v.url()).await.unwrap();
    let rec = reread.get(&job).await.unwrap().expect("an acknowledged job survives Redis's SIGKILL");
    assert_eq!(rec.state, JobState::Queued);

    // The platform's connections come back by themselves, after a first call on each fails
    // (as a user's retry would); the cancel waits for the AOF too.
    let before_cancel = v.waitaofs().await;
    let deadline = std::time::Instant::now() + BOUND;
    let cancelled = loop {
        match p.cancel(&job).await {
            Ok(r) => break r,
            Err(e) => assert!(std::time::Instant::now() < deadline, "cancel never went through: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(cancelled.state, JobState::Cancelled);
    assert!(v.waitaofs().await > before_cancel, "the cancel was acknowledged without WAITAOF");

    // AOF off under the running service: not acknowledged, but recorded.
    let _: () = redis::cmd("CONFIG").arg("SET").arg("appendonly").arg("no").query_async(&mut v.conn().await).await.unwrap();
    let refused = p.submit(noop::request(2), Some("durable-retry")).await.unwrap_err().to_string();
    assert!(refused.contains("was recorded") && refused.contains("same idempotency key"), "{refused}");
    let recorded = reread.list(0, 10).await.unwrap().0.len();
    assert_eq!(recorded, 2, "the refused submit's job is recorded");

    // AOF back on (Valkey rewrites it first); the retry returns the job it recorded.
    let _: () = redis::cmd("CONFIG").arg("SET").arg("appendonly").arg("yes").query_async(&mut v.conn().await).await.unwrap();
    let deadline = std::time::Instant::now() + BOUND;
    let (again, fresh) = loop {
        match p.submit(noop::request(2), Some("durable-retry")).await {
            Ok(r) => break r,
            // The rewrite that turns AOF on is still running.
            Err(e) => assert!(std::time::Instant::now() < deadline, "submit never acknowledged again: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert!(!fresh, "the retry returns the job recorded by the refused submit");
    assert_eq!(reread.list(0, 10).await.unwrap().0.len(), 2);
    assert!(reread.get(&again).await.unwrap().is_some());
}

/// S1 of the platform review: a job's ending is durable before its clean-up deletes anything.
/// With AOF off under the running service, ending a job moves it (in Redis's memory) but its
/// inputs stay and it stays listed as unclean, the call an error; were the deletes done first,
/// a Redis that lost that second would bring the job back `running` with its inputs gone. Once
/// AOF is back, the next `end` (a retried report, the reconciler's sweep) finishes the clean-up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endings_are_durable_before_the_clean_up() {
    let Some(bin) = server_bin("PROVER_TEST_VALKEY_SERVER", None) else { return };
    let v = Server::start(&bin, &["--appendonly", "yes", "--appendfsync", "everysec"]).await;
    let Some(p) = platform_on(&v).await else { return };
    let reread = RedisJobStore::connect(&v.url()).await.unwrap();

    let (job, _) = p.submit(noop::request(2), None).await.unwrap();
    let input = platform::layout::input(&job, "witness.bin");
    p.blobs().put(&input, bytes::Bytes::from_static(b"a witness")).await.unwrap();

    let _: () = redis::cmd("CONFIG").arg("SET").arg("appendonly").arg("no").query_async(&mut v.conn().await).await.unwrap();
    let e = p.end(&job, Ending::Failed("a task failed")).await.unwrap_err().to_string();
    assert!(e.contains("not confirmed durable"), "{e}");
    assert_eq!(reread.get(&job).await.unwrap().unwrap().state, JobState::Failed);
    assert_eq!(p.blobs().size(&input).await.unwrap(), 9, "an input was deleted before the ending was durable");
    assert!(reread.is_unclean(&job).await.unwrap());

    let _: () = redis::cmd("CONFIG").arg("SET").arg("appendonly").arg("yes").query_async(&mut v.conn().await).await.unwrap();
    let deadline = std::time::Instant::now() + BOUND;
    loop {
        match p.end(&job, Ending::Failed("a task failed")).await {
            Ok(moved) => break assert!(!moved, "the job had ended before"),
            // The rewrite that turns AOF on is still running.
            Err(e) => assert!(std::time::Instant::now() < deadline, "the clean-up never finished: {e}"),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(matches!(p.blobs().size(&input).await, Err(blobstore::BlobError::NotFound(_))), "the clean-up left the input");
    assert!(!reread.is_unclean(&job).await.unwrap());
}

/// What each setting does with servers that cannot make acknowledgements durable, through the
/// services' own start-up (`connect_backends`): `aof` refuses to start on Redis 7.0 with AOF
/// off, or with `everysec` (no `WAITAOF` there), and starts on 7.0 with `appendfsync always`
/// (every write fsynced before its reply); `auto` and `none` start on all of them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aof_durability_refuses_a_redis_that_cannot_give_it() {
    let Some(bin) = redis7() else { return };
    if std::env::var("PROVER_TEST_S3_ENDPOINT").is_err() {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "test services required but not configured");
        return;
    }
    let refused = |e: ServiceError| match e {
        ServiceError::Config(why) => why,
        other => panic!("expected a configuration refusal, got {other}"),
    };
    for (aof, why) in [
        (&["--appendonly", "no"][..], "appendonly no"),
        (&["--appendonly", "yes", "--appendfsync", "everysec"][..], "no WAITAOF"),
        (&["--appendonly", "yes", "--appendfsync", "no"][..], "appendfsync no"),
    ] {
        let r = Server::start(&bin, aof).await;
        let e = refused(connect_backends(&backend_args(&r.url(), "aof"), QueueConfig::default(), PlatformConfig::default(), true).await.err().expect("refused"));
        assert!(e.contains(why) && e.contains("--redis-durability aof"), "{aof:?}: {e}");
        for lenient in ["auto", "none"] {
            connect_backends(&backend_args(&r.url(), lenient), QueueConfig::default(), PlatformConfig::default(), true).await.unwrap();
        }
        // A process that acknowledges nothing (no planner role) neither checks nor waits.
        let p = connect_backends(&backend_args(&r.url(), "aof"), QueueConfig::default(), PlatformConfig::default(), false).await.unwrap();
        p.job_store().make_durable().await.unwrap();
    }
    let always = Server::start(&bin, &["--appendonly", "yes", "--appendfsync", "always"]).await;
    let p = connect_backends(&backend_args(&always.url(), "aof"), QueueConfig::default(), PlatformConfig::default(), true).await.unwrap();
    let (job, _) = p.submit(noop::request(1), None).await.unwrap();
    assert!(p.job_store().get(&job).await.unwrap().is_some());
}

/// Replica acknowledgements (`--redis-ack-replicas`): with one replica (AOF on), a round
/// returns once the replica has the write, which it then serves; with the replica gone, a
/// round is an error, so the write is not acknowledged; a count of replicas the server does not
/// have is never confirmed; replicas without durability, or of a Redis without `WAITAOF` (the
/// apt Redis 7.0), are refused at start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acknowledgements_wait_for_replicas() {
    let Some(bin) = server_bin("PROVER_TEST_VALKEY_SERVER", None) else { return };
    let primary = Server::start(&bin, &["--appendonly", "yes", "--appendfsync", "everysec"]).await;
    let port = primary.port.to_string();
    let replica = Server::start(&bin, &["--appendonly", "yes", "--appendfsync", "everysec", "--replicaof", "127.0.0.1", &port]).await;
    let info = |s: &Server| {
        let url = s.url();
        async move {
            let mut c = redis::Client::open(url).unwrap().get_multiplexed_async_connection().await.unwrap();
            redis::cmd("INFO").arg("replication").query_async::<String>(&mut c).await.unwrap()
        }
    };
    let deadline = std::time::Instant::now() + BOUND;
    while !(info(&primary).await.contains("connected_slaves:1") && info(&replica).await.contains("master_link_status:up")) {
        assert!(std::time::Instant::now() < deadline, "the replica never synchronised");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // Rounds of at most 3 s (three quarters of the answer timeout).
    let short = Duration::from_secs(4);
    let (gate, warning) = AckGate::open_with(&primary.url(), Durability::Auto, 1, short).await.unwrap();
    assert_eq!(warning, None);
    let gate = gate.expect("a gate that waits for the replica");
    let mut pc = primary.conn().await;
    let _: () = redis::cmd("SET").arg("acked").arg("1").query_async(&mut pc).await.unwrap();
    gate.wait().await.expect("one replica confirms");
    let on_replica: Option<String> = redis::cmd("GET").arg("acked").query_async(&mut replica.conn().await).await.unwrap();
    assert_eq!(on_replica.as_deref(), Some("1"), "acknowledged before the replica had it");
    // More replicas than there are: never confirmed.
    let (two, _) = AckGate::open_with(&primary.url(), Durability::Auto, 2, short).await.unwrap();
    let e = two.unwrap().wait().await.unwrap_err();
    assert!(e.contains("1 of the 2 replicas"), "{e}");
    // The replica gone: the next write is not acknowledged.
    drop(replica);
    let _: () = redis::cmd("SET").arg("lost").arg("1").query_async(&mut pc).await.unwrap();
    let e = gate.wait().await.unwrap_err();
    assert!(e.contains("0 of the 1 replicas") && e.contains("--redis-ack-replicas"), "{e}");
    // Refused at start: replicas with durability off, and a Redis without WAITAOF.
    assert!(matches!(AckGate::open_with(&primary.url(), Durability::None, 1, short).await, Err(queue::durable::OpenError::Refused(m)) if m.contains("--redis-durability")));
    if let Some(r7) = redis7() {
        let old = Server::start(&r7, &["--appendonly", "yes", "--appendfsync", "always"]).await;
        let r = AckGate::open_with(&old.url(), Durability::Auto, 1, short).await;
        assert!(matches!(&r, Err(queue::durable::OpenError::Refused(m)) if m.contains("WAITAOF")), "{:?}", r.map(|(g, w)| (g.is_some(), w)));
    }
}

//! The platform as separate processes over real Redis and S3 (MinIO), driven through the gRPC
//! API with the `prover` client commands: 1 planner, 2 executors, 3 workers, 1 aggregator. A
//! worker holding a lease is killed with SIGKILL mid-job and an executor is killed and
//! restarted; the job still completes, and the fetched proof verifies offline. Then an update
//! job, invalid submissions, idempotency, cancellation, and the /metrics endpoint.
//!
//! Also `prover serve --embedded`: the same client commands against the single-process mode.

use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// A port for a service under test to listen on. Picked below Linux's ephemeral range (32768 and
/// up), where no outbound connection of any process can take it between this pick and the
/// service's bind (a port from `bind(0)` could be, and once was: an aggregator failed to start and
/// its job waited for ever), and distinct within this test binary.
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = 20_000 + ((std::process::id().wrapping_mul(97).wrapping_add(n)) % 12_000) as u16;
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

fn cache_dir() -> &'static Path {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| tempfile::tempdir().unwrap()).path()
}

fn prover(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_prover")).args(args).env("PROVER_CACHE_DIR", cache_dir()).output().expect("run prover")
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "prover failed: {}\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

fn fails_with(o: Output, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(!o.status.success(), "expected failure; stdout {}", String::from_utf8_lossy(&o.stdout));
    for n in needles {
        assert!(err.contains(n), "stderr does not mention {n:?}: {err}");
    }
    assert!(!err.contains("panicked"), "{err}");
}

/// A service process, killed when dropped.
struct Proc {
    child: Child,
    metrics: u16,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Services {
    redis: String,
    s3: String,
    bucket: String,
    logs: tempfile::TempDir,
}

impl Services {
    fn from_env() -> Option<Self> {
        match (std::env::var("PROVER_TEST_REDIS_URL"), std::env::var("PROVER_TEST_S3_ENDPOINT")) {
            (Ok(redis), Ok(s3)) => Some(Self {
                redis,
                s3,
                bucket: std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into()),
                logs: tempfile::tempdir().unwrap(),
            }),
            _ => {
                assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "test services required");
                eprintln!("skipping: no Redis/S3 configured");
                None
            }
        }
    }

    fn spawn(&self, role: &str, name: &str, grpc: Option<u16>) -> Proc {
        self.spawn_with(role, name, grpc, &[])
    }

    /// A service with authentication off (`PROVER_NO_AUTH`): the tests of other things call
    /// the API without tokens.
    fn spawn_with(&self, role: &str, name: &str, grpc: Option<u16>, extra: &[&str]) -> Proc {
        self.spawn_env(role, name, grpc, extra, &[("PROVER_NO_AUTH", "1")])
    }

    fn spawn_env(&self, role: &str, name: &str, grpc: Option<u16>, extra: &[&str], env: &[(&str, &str)]) -> Proc {
        let metrics = free_port();
        let log = std::fs::File::create(self.logs.path().join(format!("{name}.log"))).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_prover"));
        cmd.args(["serve", role, "--redis", &self.redis, "--s3-endpoint", &self.s3, "--bucket", &self.bucket])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics}"), "--name", name])
            .args(["--visibility-timeout-secs", "4"])
            .args(extra)
            .envs(env.iter().copied())
            .stdout(Stdio::null())
            .stderr(log);
        if let Some(port) = grpc {
            cmd.args(["--listen", &format!("127.0.0.1:{port}")]);
        }
        Proc { child: cmd.spawn().expect("spawn service"), metrics }
    }

    /// The same servers with Redis database `db` (`redis://host:port/…` → `…/db`): queues and
    /// job records no other test's processes see.
    fn own_database(mut self, db: u32) -> Self {
        self.redis = format!("{}/{db}", self.redis.split('/').take(3).collect::<Vec<_>>().join("/"));
        self
    }

    fn log(&self, name: &str) -> String {
        std::fs::read_to_string(self.logs.path().join(format!("{name}.log"))).unwrap_or_default()
    }
}

/// GET http://127.0.0.1:port/path with a plain HTTP/1.0 request.
fn http_get(port: u16, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(s, "GET {path} HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
    let mut out = String::new();
    s.read_to_string(&mut out).ok()?;
    Some(out)
}

fn wait_ready(port: u16) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while Instant::now() < deadline {
        if http_get(port, "/readyz").is_some_and(|r| r.starts_with("HTTP/1.0 200") || r.starts_with("HTTP/1.1 200")) {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("service on metrics port {port} never became ready");
}

fn busy(p: &Proc) -> bool {
    http_get(p.metrics, "/metrics").is_some_and(|m| m.lines().any(|l| l.trim() == "prover_worker_busy 1"))
}

fn status(ep: &str, job: &str) -> String {
    ok(prover(&["status", job, "--endpoint", ep]))
}

/// Waits for `job` to end done; panics with its status and `log` if it fails or outlasts
/// `deadline` (a generous bound against a hang, not a timing assertion).
fn wait_done(ep: &str, job: &str, deadline: Instant, log: impl Fn() -> String) {
    loop {
        let s = status(ep, job);
        if s.contains(" done") {
            return;
        }
        assert!(!s.contains(" failed") && Instant::now() < deadline, "job did not finish: {s}\n{}", log());
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn done_tasks(ep: &str, job: &str) -> u64 {
    // "<id>  reckle.batch  running  [reckle.leaf 2/3, reckle.node 0/3]"
    let s = status(ep, job);
    let inner = s.split('[').nth(1).unwrap_or("").split(']').next().unwrap_or("");
    inner.split(", ").filter_map(|t| t.rsplit(' ').next()?.split('/').next()?.parse::<u64>().ok()).sum()
}

/// Fetches a done job's proof and verifies it offline and remotely, pinned to the commitment C
/// that `fetch` reports; a wrong pinned C is refused both ways.
fn fetch_and_verify(ep: &str, job: &str, dir: &Path) {
    let fetched = ok(prover(&["fetch", job, "--out", dir.to_str().unwrap(), "--endpoint", ep]));
    let c = fetched.split("commitment C = ").nth(1).and_then(|r| r.split_whitespace().next()).expect("fetch prints C").to_string();
    let out = ok(prover(&["reckle", "verify", dir.to_str().unwrap(), "--root", &c]));
    assert!(out.contains("verified against C"), "{out}");
    let remote = ok(prover(&["verify-remote", job, "--root", &c, "--endpoint", ep]));
    assert!(remote.starts_with("verified against C = ") && remote.contains("expected_root"), "{remote}");
    let mut wrong = c.into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    let wrong = String::from_utf8(wrong).unwrap();
    assert!(!prover(&["reckle", "verify", dir.to_str().unwrap(), "--root", &wrong]).status.success());
    assert!(!prover(&["verify-remote", job, "--root", &wrong, "--endpoint", ep]).status.success());
}

#[test]
fn separate_processes_survive_a_killed_worker_and_a_restarted_executor() {
    let Some(svc) = Services::from_env() else { return };
    let grpc = free_port();
    let ep = format!("http://127.0.0.1:{grpc}");
    let planner = svc.spawn("planner", "planner", Some(grpc));
    let mut executors = vec![svc.spawn("executor", "executor-0", None), svc.spawn("executor", "executor-1", None)];
    let mut workers: Vec<Option<Proc>> = (0..3).map(|i| Some(svc.spawn("worker", &format!("worker-{i}"), None))).collect();
    let aggregator = svc.spawn("aggregator", "aggregator", None);
    for p in [&planner, &aggregator].into_iter().chain(executors.iter()).chain(workers.iter().flatten()) {
        wait_ready(p.metrics);
    }

    // Invalid submissions: INVALID_ARGUMENT naming the field.
    fails_with(prover(&["submit", "reckle", "--random-leaves", "16", "--batch", "16", "--log-bucket", "2", "--endpoint", &ep]), &["InvalidArgument", "batch"]);
    fails_with(
        prover(&["submit", "reckle-update", "--base", "no-such-job", "--add", "1", "--endpoint", &ep]),
        &["InvalidArgument", "base_job_id"],
    );
    fails_with(prover(&["fetch", "no-such-job", "--out", "/tmp/never", "--endpoint", &ep]), &["NotFound"]);

    let key = format!("e2e-{}", std::process::id());
    let submit = |batch: &str| {
        prover(&["submit", "reckle", "--random-leaves", "16", "--batch", batch, "--log-bucket", "2", "--seed", "5", "--idempotency-key", &key, "--endpoint", &ep])
    };
    let job = ok(submit("1,6,13"));
    assert_eq!(ok(submit("1,6,13")), job, "same key, same request: same job");
    fails_with(submit("1,6"), &["FailedPrecondition", "idempotency"]);

    // Kill a worker while it holds a lease, and an executor mid-job; start a new executor.
    let deadline = Instant::now() + Duration::from_secs(300);
    let victim = loop {
        assert!(Instant::now() < deadline, "no worker ever got busy");
        if let Some(i) = workers.iter().position(|w| w.as_ref().is_some_and(busy)) {
            break i;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut dead = workers[victim].take().unwrap();
    dead.child.kill().unwrap(); // SIGKILL
    let _ = dead.child.wait();
    while done_tasks(&ep, &job) == 0 {
        assert!(Instant::now() < deadline, "no progress");
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(executors.remove(0)); // SIGKILL
    executors.push(svc.spawn("executor", "executor-2", None));

    let watched = prover(&["watch", &job, "--endpoint", &ep]);
    assert!(
        watched.status.success(),
        "watch failed: {}\nworker logs:\n{}\n{}",
        String::from_utf8_lossy(&watched.stderr),
        svc.log("worker-0"),
        svc.log("aggregator")
    );
    assert!(status(&ep, &job).contains("reckle.leaf 3/3, reckle.node 3/3"), "{}", status(&ep, &job));
    let tmp = tempfile::tempdir().unwrap();
    fetch_and_verify(&ep, &job, &tmp.path().join("batch"));

    // An update job from the first job's outputs.
    let job2 = ok(prover(&["submit", "reckle-update", "--base", &job, "--set", "6=77", "--endpoint", &ep]));
    ok(prover(&["watch", &job2, "--endpoint", &ep]));
    fetch_and_verify(&ep, &job2, &tmp.path().join("update"));
    let st: serde_json::Value = serde_json::from_slice(&std::fs::read(tmp.path().join("update/statement.json")).unwrap()).unwrap();
    assert!(st.to_string().contains("77"), "the updated value is in the statement: {st}");

    // A Pari job: bundles batch-verified by the aggregator, then offline.
    let job4 = ok(prover(&["submit", "pari", "--circuit", "chain", "--size", "16", "--count", "12", "--proofs-per-task", "4", "--bundle-size", "8", "--endpoint", &ep]));
    ok(prover(&["watch", &job4, "--endpoint", &ep]));
    let pdir = tmp.path().join("pari");
    let fetched = ok(prover(&["fetch", &job4, "--out", pdir.to_str().unwrap(), "--endpoint", &ep]));
    let d = fetched.split("vk digest = ").nth(1).and_then(|r| r.split_whitespace().next()).expect("fetch prints the vk digest").to_string();
    let out = ok(prover(&["pari", "verify-bundles", pdir.to_str().unwrap(), "--vk-digest", &d]));
    assert!(out.contains("12 verified, 0 bad"), "{out}");
    let remote = ok(prover(&["verify-remote", &job4, "--vk-digest", &d, "--endpoint", &ep]));
    assert!(remote.contains(&d) && remote.contains("expected_vk_digest"), "{remote}");
    // Another key's digest is refused.
    let other = "ab".repeat(64);
    assert!(!prover(&["verify-remote", &job4, "--vk-digest", &other, "--endpoint", &ep]).status.success());
    assert!(!prover(&["pari", "verify-bundles", pdir.to_str().unwrap(), "--vk-digest", &other]).status.success());
    // A tampered bundle is rejected offline.
    let b = pdir.join("bundle-0.bin");
    let mut bytes = std::fs::read(&b).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&b, bytes).unwrap();
    assert!(!prover(&["pari", "verify-bundles", pdir.to_str().unwrap()]).status.success());

    // Cancellation of a job that cannot finish yet.
    let job3 = ok(prover(&["submit", "reckle", "--random-leaves", "64", "--random-batch", "8", "--log-bucket", "2", "--endpoint", &ep]));
    let cancelled = ok(prover(&["cancel", &job3, "--endpoint", &ep]));
    assert!(cancelled.contains("cancelled"), "{cancelled}");
    fails_with(prover(&["watch", &job3, "--endpoint", &ep]), &["cancelled"]);
    fails_with(prover(&["fetch", &job3, "--out", "/tmp/never", "--endpoint", &ep]), &["FailedPrecondition"]);

    // Listing and metrics.
    let list = ok(prover(&["jobs", "--endpoint", &ep]));
    assert!(list.contains(&job) && list.contains(&job2) && list.contains(&job3));
    let m = http_get(planner.metrics, "/metrics").unwrap();
    assert!(m.contains("prover_jobs_submitted_total") && m.contains(r#"outcome="rejected""#), "{m}");
    let w = workers.iter().flatten().filter_map(|w| http_get(w.metrics, "/metrics")).collect::<String>();
    assert!(w.contains("prover_tasks_total") && w.contains("prover_s3_bytes_total"), "{w}");
    // The executors' reconciler exports each job kind's oldest job and expected time (the
    // ProverJobOverdue alert), and the object cache's size.
    let e = executors.iter().filter_map(|e| http_get(e.metrics, "/metrics")).collect::<String>();
    assert!(e.contains(r#"prover_job_expected_seconds{kind="reckle.batch"} 3600"#), "{e}");
    assert!(e.contains(r#"prover_oldest_active_job_age_seconds{kind="hekaton.prove"}"#), "{e}");
    assert!(e.contains("prover_cache_bytes"), "{e}");
}

#[test]
fn embedded_server_runs_jobs_with_no_redis_or_s3() {
    let data = tempfile::tempdir().unwrap();
    let (grpc, metrics) = (free_port(), free_port());
    let ep = format!("http://127.0.0.1:{grpc}");
    let child = Command::new(env!("CARGO_BIN_EXE_prover"))
        .args(["serve", "--embedded", "--data", data.path().to_str().unwrap(), "--listen", &format!("127.0.0.1:{grpc}")])
        .args(["--metrics-listen", &format!("127.0.0.1:{metrics}"), "--concurrency", "2"])
        .env_remove("PROVER_REDIS_URL")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let _server = Proc { child, metrics };
    wait_ready(metrics);
    let job = ok(prover(&["submit", "reckle", "--random-leaves", "8", "--batch", "2,5", "--log-bucket", "1", "--endpoint", &ep]));
    ok(prover(&["watch", &job, "--endpoint", &ep]));
    let tmp = tempfile::tempdir().unwrap();
    fetch_and_verify(&ep, &job, &tmp.path().join("proof"));
    // A fetched proof that was tampered with is rejected offline.
    let proof = tmp.path().join("proof/proof.bin");
    let mut bytes = std::fs::read(&proof).unwrap();
    let mid = bytes.len() / 2;
    bytes[mid] ^= 1;
    std::fs::write(&proof, bytes).unwrap();
    assert!(!prover(&["reckle", "verify", tmp.path().join("proof").to_str().unwrap()]).status.success());
}

/// API tokens through a planner process with its default settings (authentication on): tokens
/// made with `prover admin token create` (stored hashed in the real Redis) and tokens in a
/// --tokens-dir (a Secret's files), sent by the client's --token; no token, another tenant's
/// token, a revoked token and a token removed from the directory are refused. A planner with
/// --no-auth says so at start.
#[test]
fn planner_serves_only_token_holders_by_default() {
    let Some(s) = Services::from_env() else { return };
    let grpc = free_port();
    let tokens_dir = tempfile::tempdir().unwrap();
    let run_dir = format!("e2e-dir-{}", std::process::id());
    let dir_token = auth::generate(&run_dir, 0).unwrap().secret;
    std::fs::write(tokens_dir.path().join(&run_dir), format!("{dir_token}\n")).unwrap();
    let planner = s.spawn_env("planner", "auth-planner", Some(grpc), &["--tokens-dir", tokens_dir.path().to_str().unwrap()], &[]);
    wait_ready(planner.metrics);
    let ep = format!("http://127.0.0.1:{grpc}");
    let run = format!("{}", std::process::id());
    let token = |tenant: &str| {
        let out = ok(prover(&["admin", "token", "create", "--tenant", tenant, "--redis", &s.redis]));
        let field = |name: &str| out.lines().find_map(|l| l.strip_prefix(name)).map(|v| v.trim().to_string()).expect(name);
        (field("token:"), field("id:"))
    };
    let (ta, ida) = token(&format!("e2e-a-{run}"));
    let (tb, _) = token(&format!("e2e-b-{run}"));
    assert!(ta.starts_with("prv_") && ta.len() == 68, "{ta}");

    fails_with(prover(&["jobs", "--endpoint", &ep]), &["Unauthenticated", "token"]);
    // GetLimits: behind the token like every call; the server's own bounds.
    fails_with(prover(&["limits", "--endpoint", &ep]), &["Unauthenticated"]);
    let limits = ok(prover(&["limits", "--endpoint", &ep, "--token", &ta]));
    assert!(limits.contains(&format!("| reckle.batch | log_n | {} | log2 |", platform::MAX_LOG_N)) && limits.contains("| worker |"), "{limits}");
    let submit = |t: &str| prover(&["submit", "pari", "--count", "2", "--size", "4", "--proofs-per-task", "2", "--endpoint", &ep, "--token", t]);
    fails_with(submit("prv_0000"), &["Unauthenticated"]);
    let job = ok(submit(&ta));
    assert!(ok(prover(&["status", &job, "--endpoint", &ep, "--token", &ta])).contains(&job));
    // Through the environment as well.
    let o = Command::new(env!("CARGO_BIN_EXE_prover")).args(["jobs", "--endpoint", &ep]).env("PROVER_TOKEN", &ta).output().unwrap();
    assert!(ok(o).contains(&job));
    fails_with(prover(&["status", &job, "--endpoint", &ep, "--token", &tb]), &["NotFound"]);
    fails_with(prover(&["cancel", &job, "--endpoint", &ep, "--token", &tb]), &["NotFound"]);
    // Large inputs go through UploadInput: A uploads leaves and submits by key; B cannot use
    // A's upload.
    let dir = tempfile::tempdir().unwrap();
    let leaves = dir.path().join("leaves.bin");
    std::fs::write(&leaves, (0u64..16).flat_map(|v| (v * 7).to_le_bytes()).collect::<Vec<u8>>()).unwrap();
    let key = ok(prover(&["upload", leaves.to_str().unwrap(), "--name", "e2e-leaves.bin", "--endpoint", &ep, "--token", &ta]));
    assert_eq!(key, format!("tenants/e2e-a-{run}/uploads/e2e-leaves.bin"));
    let by_key = |t: &str| prover(&["submit", "reckle", "--leaves-object", &key, "--log-n", "4", "--batch", "1,9", "--endpoint", &ep, "--token", t]);
    let reckle_job = ok(by_key(&ta));
    ok(prover(&["cancel", &reckle_job, "--endpoint", &ep, "--token", &ta]));
    fails_with(by_key(&tb), &["InvalidArgument", "leaves.object_key"]);
    fails_with(prover(&["upload", leaves.to_str().unwrap(), "--name", "../x", "--endpoint", &ep, "--token", &tb]), &["InvalidArgument", "name"]);
    assert!(!ok(prover(&["jobs", "--endpoint", &ep, "--token", &tb])).contains(&job));
    // The listing shows ids, never tokens.
    let listed = ok(prover(&["admin", "token", "list", "--redis", &s.redis]));
    assert!(listed.contains(&ida) && !listed.contains(&ta[4..]), "{listed}");
    ok(prover(&["admin", "token", "revoke", &ida, "--redis", &s.redis]));
    fails_with(prover(&["status", &job, "--endpoint", &ep, "--token", &ta]), &["Unauthenticated"]);
    fails_with(prover(&["admin", "token", "create", "--tenant", "Bad Name", "--redis", &s.redis]), &["tenant"]);
    assert!(s.log("auth-planner").contains("authentication on"), "{}", s.log("auth-planner"));

    // A token from the directory is its file's tenant, until the file goes.
    let dir_job = ok(submit(&dir_token));
    assert!(ok(prover(&["jobs", "--endpoint", &ep, "--token", &dir_token])).contains(&dir_job));
    fails_with(prover(&["status", &dir_job, "--endpoint", &ep, "--token", &tb]), &["NotFound"]);
    std::fs::remove_file(tokens_dir.path().join(&run_dir)).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    fails_with(prover(&["status", &dir_job, "--endpoint", &ep, "--token", &dir_token]), &["Unauthenticated"]);

    // Off only when asked, and said at start.
    let open = s.spawn_with("planner", "open-planner", Some(free_port()), &[]);
    wait_ready(open.metrics);
    assert!(s.log("open-planner").contains("authentication is OFF (--no-auth)"), "{}", s.log("open-planner"));
}

/// A Hekaton job proved by separate worker processes over Redis and MinIO (8 subcircuits, one
/// worker SIGKILLed while it holds a lease), fetched, and its aggregated proof verified offline
/// against the key digests the platform published (the command fetch prints); a wrong digest
/// and a tampered proof are refused. Beside it a
/// one-subcircuit job asks for the final proof (issue 15): the aggregator process wraps it into
/// one Pari proof on BW6-767, which verifies offline against the final key digest that fetch
/// prints; a tampered final proof and another pinned digest are refused.
#[test]
fn hekaton_job_across_worker_processes() {
    let Some(svc) = Services::from_env() else { return };
    let grpc = free_port();
    let ep = format!("http://127.0.0.1:{grpc}");
    let planner = svc.spawn("planner", "hk-planner", Some(grpc));
    let executor = svc.spawn("executor", "hk-executor", None);
    let aggregator = svc.spawn("aggregator", "hk-aggregator", None);
    let mut workers: Vec<Option<Proc>> = (0..3).map(|i| Some(svc.spawn("worker", &format!("hk-worker-{i}"), None))).collect();
    for p in [&planner, &executor, &aggregator].into_iter().chain(workers.iter().flatten()) {
        wait_ready(p.metrics);
    }
    fails_with(
        prover(&["submit", "hekaton", "--circuit", "merkle-update", "--depth", "4", "--parts", "3", "--endpoint", &ep]),
        &["InvalidArgument", "circuit"],
    );
    let job = ok(prover(&[
        "submit", "hekaton", "--circuit", "synthetic", "--subcircuits", "8", "--steps", "4", "--wires", "1", "--seed", "3", "--endpoint", &ep,
    ]));
    let final_job = ok(prover(&[
        "submit", "hekaton", "--circuit", "synthetic", "--subcircuits", "1", "--steps", "4", "--wires", "2", "--seed", "5", "--final", "--endpoint", &ep,
    ]));
    // Kill a worker while it holds a lease: its task is redelivered to another.
    let deadline = Instant::now() + Duration::from_secs(300);
    let victim = loop {
        assert!(Instant::now() < deadline, "no worker ever got busy");
        if let Some(i) = workers.iter().position(|w| w.as_ref().is_some_and(busy)) {
            break i;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let mut dead = workers[victim].take().unwrap();
    dead.child.kill().unwrap();
    let _ = dead.child.wait();
    // Polled with a generous bound (not a performance claim: a hung job must fail the test, not
    // hang the test command).
    let wait_done = |job: &str| {
        let deadline = Instant::now() + Duration::from_secs(900);
        loop {
            let s = status(&ep, job);
            if s.contains(" done") {
                break;
            }
            assert!(!s.contains(" failed") && Instant::now() < deadline, "job did not finish: {s}\n{}", svc.log("hk-aggregator"));
            std::thread::sleep(Duration::from_millis(200));
        }
    };
    wait_done(&job);

    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("proof");
    let fetched = ok(prover(&["fetch", &job, "--out", dir.to_str().unwrap(), "--endpoint", &ep]));
    let digest = fetched.split("vk digest = ").nth(1).and_then(|r| r.split_whitespace().next()).expect("fetch prints the vk digest").to_string();
    let agg = fetched
        .split("aggregate key digest = ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("fetch prints the aggregate key digest")
        .to_string();
    assert!(fetched.contains(&format!("prover hekaton verify {} --vk-digest {digest} --agg-vk-digest {agg}", dir.display())), "{fetched}");
    let out = ok(prover(&["hekaton", "verify", dir.to_str().unwrap(), "--vk-digest", &digest, "--agg-vk-digest", &agg]));
    assert!(out.contains("aggregated proof of 8 subcircuits") && out.contains("verified"), "{out}");
    let mut wrong = digest.clone().into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    fails_with(
        prover(&["hekaton", "verify", dir.to_str().unwrap(), "--vk-digest", std::str::from_utf8(&wrong).unwrap(), "--agg-vk-digest", &agg]),
        &["pinned"],
    );
    let proof = dir.join("proof.bin");
    let mut bytes = std::fs::read(&proof).unwrap();
    let n = bytes.len();
    bytes[n - 40] ^= 1;
    std::fs::write(&proof, bytes).unwrap();
    assert!(
        !prover(&["hekaton", "verify", dir.to_str().unwrap(), "--vk-digest", &digest, "--agg-vk-digest", &agg]).status.success(),
        "a tampered proof verified"
    );

    // The final proof, made by the aggregator process.
    wait_done(&final_job);
    let fdir = tmp.path().join("final");
    let fetched = ok(prover(&["fetch", &final_job, "--out", fdir.to_str().unwrap(), "--endpoint", &ep]));
    let fdigest = fetched
        .split("final key digest = ")
        .nth(1)
        .and_then(|r| r.split_whitespace().next())
        .expect("fetch prints the final key digest")
        .to_string();
    let out = ok(prover(&["hekaton", "verify-final", fdir.to_str().unwrap(), "--key-digest", &fdigest]));
    assert!(out.contains("1 final proofs checked"), "{out}");
    // The Hekaton key digest is not the final key's: refused.
    let vk_digest = fetched.split("vk digest = ").nth(1).and_then(|r| r.split_whitespace().next()).unwrap().to_string();
    fails_with(prover(&["hekaton", "verify-final", fdir.to_str().unwrap(), "--key-digest", &vk_digest]), &["not the pinned final key"]);
    let fin = fdir.join("final.bin");
    let good = std::fs::read(&fin).unwrap();
    let mut bad = good.clone();
    let n = bad.len();
    bad[n - 1] ^= 1;
    std::fs::write(&fin, &bad).unwrap();
    assert!(!prover(&["hekaton", "verify-final", fdir.to_str().unwrap(), "--key-digest", &fdigest]).status.success(), "a tampered final proof verified");
    std::fs::write(&fin, &good).unwrap();
    ok(prover(&["hekaton", "verify-final", fdir.to_str().unwrap(), "--key-digest", &fdigest]));
}

/// The example circom circuit over BN254 (c = a·b, h = Poseidon(a, b); b public), compiled by
/// circom2 in the test command (`PROVER_TEST_CIRCOM_DIR`), or the checked-in fixture: the
/// `.r1cs` and three witnesses with their (a, b).
/// The example circuit compiled for `curve` ("bn254" or "bls12381"), and three distinct
/// witnesses of it with their inputs `(a, b)`.
fn circom_example(dir: &Path, curve: &str) -> (std::path::PathBuf, Vec<(std::path::PathBuf, u64, u64)>) {
    let inputs = [(3, 11), (5, 7), (2, 13)];
    match std::env::var("PROVER_TEST_CIRCOM_DIR") {
        Ok(c) => {
            let c = Path::new(&c).join(curve);
            let w = inputs.iter().enumerate().map(|(i, (a, b))| (c.join(format!("w{i}.wtns")), *a, *b)).collect();
            (c.join("example.r1cs"), w)
        }
        Err(_) => {
            // The checked-in fixtures: three distinct witnesses (a job refuses one listed twice).
            let f = Path::new(env!("CARGO_MANIFEST_DIR")).join("../circom/tests/fixtures");
            let w = inputs
                .iter()
                .enumerate()
                .map(|(i, (a, b))| {
                    let name = if i == 0 { format!("example-{curve}.wtns") } else { format!("example-{curve}-w{i}.wtns") };
                    let p = dir.join(format!("w{i}.wtns"));
                    std::fs::copy(f.join(name), &p).unwrap();
                    (p, *a, *b)
                })
                .collect();
            (f.join(format!("example-{curve}.r1cs")), w)
        }
    }
}

/// Issue 14's path through the multi-process cluster: `prover circuit register` (the setup
/// runs once, on a worker), `prover submit pari --circuit-id … --witness …` (witnesses
/// uploaded), `prover fetch`, then offline `prover pari verify-bundles` pinned to the digest
/// the registration printed, with each proof's public signals; a tampered bundle and another
/// digest are refused.
#[test]
fn registered_circom_circuit_across_processes() {
    let Some(svc) = Services::from_env() else { return };
    let grpc = free_port();
    let ep = format!("http://127.0.0.1:{grpc}");
    let planner = svc.spawn("planner", "cc-planner", Some(grpc));
    let executor = svc.spawn("executor", "cc-executor", None);
    let aggregator = svc.spawn("aggregator", "cc-aggregator", None);
    let workers: Vec<Proc> = (0..2).map(|i| svc.spawn("worker", &format!("cc-worker-{i}"), None)).collect();
    for p in [&planner, &executor, &aggregator].into_iter().chain(&workers) {
        wait_ready(p.metrics);
    }
    let tmp = tempfile::tempdir().unwrap();
    let (r1cs, witnesses) = circom_example(tmp.path(), "bn254");
    let field = |out: &str, name: &str| -> String {
        out.lines().find_map(|l| l.strip_prefix(&format!("{name} "))).unwrap_or_else(|| panic!("no {name} in {out}")).to_string()
    };
    let registered = ok(prover(&["circuit", "register", "--r1cs", r1cs.to_str().unwrap(), "--endpoint", &ep]));
    let (id, digest) = (field(&registered, "circuit_id"), field(&registered, "vk_digest"));
    assert_eq!(field(&registered, "curve"), "bn254");
    // Registering the same file again runs no second setup.
    let again = prover(&["circuit", "register", "--r1cs", r1cs.to_str().unwrap(), "--endpoint", &ep]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("registered already"));
    assert_eq!(field(&ok(again), "vk_digest"), digest);
    assert!(ok(prover(&["circuit", "list", "--endpoint", &ep])).lines().any(|l| l.starts_with(&id) && l.contains(&digest)));
    assert_eq!(field(&ok(prover(&["circuit", "show", &id, "--endpoint", &ep])), "vk_digest"), digest);
    let vk_dir = tmp.path().join("vk");
    ok(prover(&["circuit", "export-vk", &id, "--out", vk_dir.to_str().unwrap(), "--endpoint", &ep]));
    fails_with(prover(&["circuit", "show", &"0".repeat(64), "--endpoint", &ep]), &["NotFound"]);
    // A file that is not a witness of this circuit is refused at submission, naming the field.
    fails_with(
        prover(&["submit", "pari", "--circuit-id", &id, "--witness", r1cs.to_str().unwrap(), "--endpoint", &ep]),
        &["InvalidArgument", "witness_object_keys"],
    );

    let mut args = vec!["submit", "pari", "--circuit-id", &id, "--proofs-per-task", "2", "--endpoint", &ep];
    for (w, _, _) in &witnesses {
        args.extend(["--witness", w.to_str().unwrap()]);
    }
    let job = ok(prover(&args));
    let deadline = Instant::now() + Duration::from_secs(600);
    wait_done(&ep, &job, deadline, || svc.log("cc-aggregator"));
    let dir = tmp.path().join("proof");
    let fetched = ok(prover(&["fetch", &job, "--out", dir.to_str().unwrap(), "--endpoint", &ep]));
    assert!(fetched.contains(&format!("vk digest = {digest}")) && fetched.contains("pari verify-bundles"), "{fetched}");
    assert_eq!(std::fs::read(dir.join("vk.bin")).unwrap(), std::fs::read(vk_dir.join("vk.bin")).unwrap());
    let d = dir.to_str().unwrap();
    let out = ok(prover(&["pari", "verify-bundles", d, "--vk-digest", &digest, "--public"]));
    assert!(out.contains("3 verified, 0 bad"), "{out}");
    // Public signals, circom's order: c = a·b, h = Poseidon(a, b), then b.
    for (i, (_, a, b)) in witnesses.iter().enumerate() {
        let line = out.lines().find(|l| l.starts_with(&format!("bundle-0.bin#{i}: "))).unwrap_or_else(|| panic!("no public signals of entry {i}: {out}"));
        let v: Vec<&str> = line.split(": ").nth(1).unwrap().split(", ").collect();
        assert_eq!((v.len(), v[0], v[2]), (3, (a * b).to_string().as_str(), b.to_string().as_str()), "{line}");
    }
    ok(prover(&["verify-remote", &job, "--vk-digest", &digest, "--endpoint", &ep]));
    // A second job of the same circuit, and one bundle of both jobs' proofs.
    let second = ok(prover(&["submit", "pari", "--circuit-id", &id, "--witness", witnesses[1].0.to_str().unwrap(), "--endpoint", &ep]));
    wait_done(&ep, &second, deadline, String::new);
    let both = tmp.path().join("both");
    let b = both.to_str().unwrap();
    let out = ok(prover(&["bundle", "--circuit-id", &id, "--jobs", &format!("{job},{second}"), "--out", b, "--endpoint", &ep]));
    assert!(out.contains("4 proofs") && out.contains(&digest), "{out}");
    let out = ok(prover(&["pari", "verify-bundles", b, "--vk-digest", &digest, "--public"]));
    assert!(out.contains("4 verified, 0 bad") && out.contains(&format!("bundle-0.bin#3: {}, ", witnesses[1].1 * witnesses[1].2)), "{out}");
    let sources: serde_json::Value = serde_json::from_slice(&std::fs::read(both.join("sources.json")).unwrap()).unwrap();
    assert_eq!(sources[3]["job_id"], second.as_str());
    // The same proofs in snarkjs's JSON conventions.
    let json = tmp.path().join("json");
    ok(prover(&["pari", "export-snarkjs", b, "--out", json.to_str().unwrap()]));
    let public: Vec<String> = serde_json::from_slice(&std::fs::read(json.join("public-0-3.json")).unwrap()).unwrap();
    assert_eq!((public[0].clone(), public[2].clone()), ((witnesses[1].1 * witnesses[1].2).to_string(), witnesses[1].2.to_string()));
    assert!(json.join("proof-0-3.json").exists() && json.join("verification_key.json").exists());
    let mut wrong = digest.clone().into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    assert!(!prover(&["pari", "verify-bundles", d, "--vk-digest", std::str::from_utf8(&wrong).unwrap()]).status.success());
    let bundle = dir.join("bundle-0.bin");
    let mut bytes = std::fs::read(&bundle).unwrap();
    let n = bytes.len();
    bytes[n - 50] ^= 1;
    std::fs::write(&bundle, bytes).unwrap();
    assert!(!prover(&["pari", "verify-bundles", d, "--vk-digest", &digest]).status.success(), "a tampered bundle verified");

    // Deleting the circuit (both its jobs have ended): it is unknown afterwards, and a second
    // deletion finds nothing.
    let out = ok(prover(&["circuit", "delete", &id, "--endpoint", &ep]));
    assert!(out.contains(&format!("deleted circuit {id}")), "{out}");
    fails_with(prover(&["circuit", "show", &id, "--endpoint", &ep]), &["NotFound"]);
    assert!(!ok(prover(&["circuit", "list", "--endpoint", &ep])).contains(&id));
    fails_with(prover(&["circuit", "delete", &id, "--endpoint", &ep]), &["NotFound"]);
}

/// Issue 36's path through the multi-process cluster, uncompressed (the compressed one is
/// `scripts/bench-testudo.sh`: its final key takes minutes): a BLS12-381 circuit registered,
/// `prover submit testudo` with two witnesses, `prover fetch`, then offline `prover testudo
/// verify` with the circuit's own .r1cs, pinned to the Testudo-Comm key digest the manifest
/// names. No pin, another digest, a flipped bit in a proof, one witness's proof under the other's
/// public signals and another circuit's .r1cs are refused.
#[test]
fn testudo_job_across_processes() {
    let Some(svc) = Services::from_env() else { return };
    let svc = svc.own_database(5);
    let grpc = free_port();
    let ep = format!("http://127.0.0.1:{grpc}");
    let planner = svc.spawn("planner", "tt-planner", Some(grpc));
    let executor = svc.spawn("executor", "tt-executor", None);
    let aggregator = svc.spawn("aggregator", "tt-aggregator", None);
    let workers: Vec<Proc> = (0..2).map(|i| svc.spawn("worker", &format!("tt-worker-{i}"), None)).collect();
    for p in [&planner, &executor, &aggregator].into_iter().chain(&workers) {
        wait_ready(p.metrics);
    }
    let tmp = tempfile::tempdir().unwrap();
    let (r1cs, witnesses) = circom_example(tmp.path(), "bls12381");
    let registered = ok(prover(&["circuit", "register", "--r1cs", r1cs.to_str().unwrap(), "--endpoint", &ep]));
    let id = registered.lines().find_map(|l| l.strip_prefix("circuit_id ")).unwrap_or_else(|| panic!("{registered}")).to_string();
    let mut args = vec!["submit", "testudo", "--circuit-id", &id, "--endpoint", &ep];
    for (w, _, _) in &witnesses[..2] {
        args.extend(["--witness", w.to_str().unwrap()]);
    }
    let job = ok(prover(&args));
    wait_done(&ep, &job, Instant::now() + Duration::from_secs(900), || svc.log("tt-aggregator") + &svc.log("tt-worker-0"));
    let dir = tmp.path().join("proof");
    let d = dir.to_str().unwrap();
    let fetched = ok(prover(&["fetch", &job, "--out", d, "--endpoint", &ep]));
    let digest = fetched.lines().find_map(|l| l.strip_prefix("tc_vk_digest = ")).unwrap_or_else(|| panic!("{fetched}")).to_string();
    let command = fetched.lines().find_map(|l| l.strip_prefix("verify with: prover ")).unwrap_or_else(|| panic!("{fetched}"));
    // The manifest's command, with the verifier's own copy of the circuit in its placeholder.
    let words: Vec<String> = command
        .replace("<the circuit's .r1cs>", r1cs.to_str().unwrap())
        .split_whitespace()
        .map(String::from)
        .collect();
    assert_eq!(words[..3], ["testudo", "verify", d], "{command}");
    let out = ok(prover(&words.iter().map(String::as_str).collect::<Vec<_>>()));
    assert!(out.contains("verified 2 proof(s)") && out.contains(&digest), "{out}");
    // Public signals, circom's order: c = a·b, h = Poseidon(a, b), then b.
    let public: Vec<serde_json::Value> = serde_json::from_slice(&std::fs::read(dir.join("public.json")).unwrap()).unwrap();
    for (i, (_, a, b)) in witnesses[..2].iter().enumerate() {
        assert_eq!(public[i]["public"][0], (a * b).to_string().as_str());
        assert_eq!(public[i]["public"][2], b.to_string().as_str());
    }
    ok(prover(&["verify-remote", &job, "--vk-digest", &digest, "--endpoint", &ep]));
    let verify = |dir: &Path, r1cs: &Path, pin: &[&str]| {
        let mut a = vec!["testudo", "verify", dir.to_str().unwrap(), "--r1cs", r1cs.to_str().unwrap()];
        a.extend(pin);
        prover(&a)
    };
    let pin = ["--tc-vk-digest", digest.as_str()];
    fails_with(verify(&dir, &r1cs, &[]), &["refusing to verify without a pinned key"]);
    let mut wrong = digest.clone().into_bytes();
    wrong[0] = if wrong[0] == b'0' { b'1' } else { b'0' };
    let wrong = String::from_utf8(wrong).unwrap();
    fails_with(verify(&dir, &r1cs, &["--tc-vk-digest", &wrong]), &["not the pinned Testudo-Comm key"]);
    std::fs::create_dir(tmp.path().join("bn")).unwrap();
    let other_curve = circom_example(&tmp.path().join("bn"), "bn254").0;
    assert!(!verify(&dir, &other_curve, &pin).status.success(), "another circuit's .r1cs was accepted");
    // Witness 0's proof under witness 1's public signals.
    let swapped = tmp.path().join("swapped");
    std::fs::create_dir(&swapped).unwrap();
    for f in ["circuit.json", "tc-vk.bin", "public.json"] {
        std::fs::copy(dir.join(f), swapped.join(f)).unwrap();
    }
    std::fs::copy(dir.join("inner-0.bin"), swapped.join("inner-1.bin")).unwrap();
    std::fs::copy(dir.join("inner-1.bin"), swapped.join("inner-0.bin")).unwrap();
    fails_with(verify(&swapped, &r1cs, &pin), &["2 of the proofs", "inner-0.bin", "inner-1.bin"]);
    // A flipped bit in the proof's tail (scalars, not points the parser refuses).
    let inner = dir.join("inner-1.bin");
    let mut bytes = std::fs::read(&inner).unwrap();
    let n = bytes.len();
    bytes[n - 20] ^= 1;
    std::fs::write(&inner, bytes).unwrap();
    fails_with(verify(&dir, &r1cs, &pin), &["1 of the proofs", "inner-1.bin (witness 1)"]);
}

/// `openssl` with `args` in `dir`; panics with its output on failure.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let o = Command::new("openssl").args(args).current_dir(dir).output().expect("run openssl");
    assert!(o.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&o.stderr));
}

/// A test CA `{name}-ca.pem`, and a certificate for localhost / 127.0.0.1 signed by it
/// (`{name}-cert.pem`, `{name}-key.pem`).
fn test_pki(dir: &std::path::Path, name: &str) {
    let ca = format!("{name}-ca");
    openssl(dir, &["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-days", "2", "-subj", &format!("/CN={ca}"), "-keyout", &format!("{ca}-key.pem"), "-out", &format!("{ca}.pem")]);
    openssl(dir, &["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-subj", "/CN=localhost", "-keyout", &format!("{name}-key.pem"), "-out", &format!("{name}.csr")]);
    std::fs::write(dir.join(format!("{name}.ext")), "subjectAltName=DNS:localhost,IP:127.0.0.1\n").unwrap();
    openssl(
        dir,
        &[
            "x509", "-req", "-in", &format!("{name}.csr"), "-CA", &format!("{ca}.pem"), "-CAkey", &format!("{ca}-key.pem"), "-CAcreateserial",
            "-days", "2", "-extfile", &format!("{name}.ext"), "-out", &format!("{name}-cert.pem"),
        ],
    );
}

/// The gRPC API over TLS (issue 12 item 4): a planner with --tls-cert/--tls-key answers the CLI
/// that trusts its CA (--ca), and refuses a client that trusts another CA, one that trusts only
/// the system's roots, and plaintext.
#[test]
fn planner_serves_grpc_over_tls() {
    let Some(s) = Services::from_env() else { return };
    let dir = tempfile::tempdir().unwrap();
    test_pki(dir.path(), "planner");
    test_pki(dir.path(), "other");
    let p = |f: &str| dir.path().join(f).to_str().unwrap().to_string();
    let grpc = free_port();
    let planner = s.spawn_with("planner", "tls-planner", Some(grpc), &["--tls-cert", &p("planner-cert.pem"), "--tls-key", &p("planner-key.pem")]);
    wait_ready(planner.metrics);
    let https = format!("https://localhost:{grpc}");
    let job = ok(prover(&["submit", "pari", "--count", "2", "--size", "4", "--proofs-per-task", "2", "--endpoint", &https, "--ca", &p("planner-ca.pem")]));
    assert!(ok(prover(&["status", &job, "--endpoint", &https, "--ca", &p("planner-ca.pem")])).contains(&job));
    fails_with(prover(&["status", &job, "--endpoint", &https, "--ca", &p("other-ca.pem")]), &[]);
    fails_with(prover(&["status", &job, "--endpoint", &https]), &[]);
    fails_with(prover(&["status", &job, "--endpoint", &format!("http://127.0.0.1:{grpc}")]), &[]);
    fails_with(prover(&["status", &job, "--endpoint", &format!("http://127.0.0.1:{grpc}"), "--ca", &p("planner-ca.pem")]), &["not https"]);
    ok(prover(&["cancel", &job, "--endpoint", &https, "--ca", &p("planner-ca.pem")]));
    assert!(s.log("tls-planner").contains("gRPC over TLS"), "{}", s.log("tls-planner"));

    // Rotation without a restart: new files (a certificate from the other CA) are served from
    // the next handshake on; the old CA is then refused.
    std::fs::copy(p("other-cert.pem"), p("planner-cert.pem")).unwrap();
    std::fs::copy(p("other-key.pem"), p("planner-key.pem")).unwrap();
    let status_with = |ca: &str| prover(&["status", &job, "--endpoint", &https, "--ca", &p(ca)]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !status_with("other-ca.pem").status.success() {
        assert!(Instant::now() < deadline, "the rotated certificate was never served: {}", s.log("tls-planner"));
        std::thread::sleep(Duration::from_millis(300));
    }
    fails_with(status_with("planner-ca.pem"), &[]);
    // A rotation that does not load (a damaged file) keeps the previous certificate.
    std::fs::write(p("planner-cert.pem"), "-----BEGIN CERTIFICATE-----\nbroken\n").unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    ok(status_with("other-ca.pem"));
    ok(status_with("other-ca.pem"));
    let log = s.log("tls-planner");
    assert!(log.contains("TLS certificate reloaded") && log.contains("does not load"), "{log}");
}

/// A child process killed when dropped.
struct Child2(Child);

impl Drop for Child2 {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Redis over TLS (`rediss://`) and S3 over HTTPS (MinIO with a certificate), both signed by a
/// private CA the processes trust through `SSL_CERT_FILE`: `prover admin token create`,
/// `prover admin gc` and a service process connect; with another CA they refuse.
#[test]
fn redis_and_s3_over_tls_with_a_private_ca() {
    let Some(svc) = Services::from_env() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    test_pki(d, "store");
    test_pki(d, "other");
    let (rport, sport) = (free_port(), free_port());
    let p = |n: &str| d.join(n).to_str().unwrap().to_string();
    let _redis = Child2(
        Command::new("redis-server")
            .args(["--port", "0", "--tls-port", &rport.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--tls-cert-file", &p("store-cert.pem"), "--tls-key-file", &p("store-key.pem"), "--tls-ca-cert-file", &p("store-ca.pem")])
            .args(["--tls-auth-clients", "no", "--maxmemory-policy", "noeviction"])
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server"),
    );
    let certs = d.join("certs");
    std::fs::create_dir_all(&certs).unwrap();
    std::fs::copy(d.join("store-cert.pem"), certs.join("public.crt")).unwrap();
    std::fs::copy(d.join("store-key.pem"), certs.join("private.key")).unwrap();
    let (key, secret) = (std::env::var("AWS_ACCESS_KEY_ID").unwrap(), std::env::var("AWS_SECRET_ACCESS_KEY").unwrap());
    let _minio = Child2(
        Command::new("minio")
            .args(["server", &p("minio"), "--address", &format!("127.0.0.1:{sport}"), "--console-address", &format!("127.0.0.1:{}", free_port())])
            .args(["--certs-dir", certs.to_str().unwrap()])
            .env("MINIO_ROOT_USER", &key)
            .env("MINIO_ROOT_PASSWORD", &secret)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("minio (go install github.com/minio/minio)"),
    );
    let redis = format!("rediss://127.0.0.1:{rport}/");
    let s3 = format!("https://127.0.0.1:{sport}");
    let with_ca = |ca: &str, args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_prover")).args(args).env("SSL_CERT_FILE", d.join(ca)).env_remove("SSL_CERT_DIR").output().unwrap()
    };
    // Wait for both servers (polled with a bound: a server that never starts fails the test).
    let deadline = Instant::now() + Duration::from_secs(60);
    let gc = ["admin", "gc", "--older-than", "1d", "--dry-run", "--redis", &redis, "--s3-endpoint", &s3, "--bucket", "tls-test"];
    loop {
        let o = with_ca("store-ca.pem", &gc);
        if o.status.success() {
            break;
        }
        assert!(Instant::now() < deadline, "gc over TLS never succeeded: {}", String::from_utf8_lossy(&o.stderr));
        std::thread::sleep(Duration::from_millis(300));
    }
    let token = with_ca("store-ca.pem", &["admin", "token", "create", "--tenant", "tls", "--redis", &redis]);
    assert!(ok(token).contains("tenant: tls"));
    // Another CA: neither server is trusted.
    let refused = with_ca("other-ca.pem", &["admin", "token", "list", "--redis", &redis]);
    assert!(!refused.status.success(), "Redis with an untrusted certificate was accepted");
    // S3 alone (Redis in plain text): trusted with the CA, refused with another.
    let gc_s3 = ["admin", "gc", "--older-than", "1d", "--dry-run", "--redis", &svc.redis, "--s3-endpoint", &s3, "--bucket", "tls-test"];
    ok(with_ca("store-ca.pem", &gc_s3));
    let refused = with_ca("other-ca.pem", &gc_s3);
    assert!(!refused.status.success(), "S3 with an untrusted certificate was accepted");
    // A service process over both.
    let metrics = free_port();
    let _exec = Child2(
        Command::new(env!("CARGO_BIN_EXE_prover"))
            .args(["serve", "executor", "--redis", &redis, "--s3-endpoint", &s3, "--bucket", "tls-test"])
            .args(["--metrics-listen", &format!("127.0.0.1:{metrics}"), "--name", "tls-executor"])
            .env("SSL_CERT_FILE", d.join("store-ca.pem"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_ready(metrics);
}

/// The path of a tool a test needs, from `var` (set by the test command); `None` (skip) when
/// unset, unless the test command requires every service.
fn test_tool(var: &str, what: &str) -> Option<String> {
    match std::env::var(var) {
        Ok(path) => Some(path),
        Err(_) => {
            assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "{var} required: {what}");
            eprintln!("skipping: no {what} ({var})");
            None
        }
    }
}

/// One span as the collector's debug exporter printed it.
#[derive(Debug, Default, Clone)]
struct CollectedSpan {
    service: String,
    instance: String,
    trace: String,
    parent: String,
    id: String,
    name: String,
    attrs: Vec<(String, String)>,
}

impl CollectedSpan {
    fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

/// Parses the debug exporter's detailed text: resource attributes, then its spans.
fn parse_collected(text: &str) -> Vec<CollectedSpan> {
    let (mut out, mut service, mut instance) = (Vec::new(), String::new(), String::new());
    let mut span: Option<CollectedSpan> = None;
    let mut in_resource = false;
    let value = |v: &str| v.trim().strip_prefix("Str(").and_then(|v| v.strip_suffix(')')).unwrap_or(v.trim()).to_string();
    for line in text.lines() {
        if line.starts_with("ResourceSpans #") {
            out.extend(span.take());
            (service, instance, in_resource) = (String::new(), String::new(), false);
        } else if line.starts_with("Resource attributes:") {
            in_resource = true;
        } else if line.starts_with("ScopeSpans #") {
            in_resource = false;
        } else if line.starts_with("Span #") {
            out.extend(span.take());
            span = Some(CollectedSpan { service: service.clone(), instance: instance.clone(), ..Default::default() });
        } else if let Some(kv) = line.trim_start().strip_prefix("-> ") {
            let Some((k, v)) = kv.split_once(": ") else { continue };
            if in_resource {
                match k {
                    "service.name" => service = value(v),
                    "service.instance.id" => instance = value(v),
                    _ => {}
                }
            } else if let Some(s) = span.as_mut() {
                s.attrs.push((k.to_string(), value(v)));
            }
        } else if let (Some(s), Some((k, v))) = (span.as_mut(), line.trim_start().split_once(':')) {
            let v = v.trim().to_string();
            match k.trim() {
                "Trace ID" => s.trace = v,
                "Parent ID" => s.parent = v,
                "ID" => s.id = v,
                "Name" => s.name = v,
                _ => {}
            }
        }
    }
    out.extend(span);
    out
}

/// Issue 12's trace test: a real OpenTelemetry Collector (built by scripts/otelcol.sh,
/// PROVER_TEST_OTELCOL) receives the spans of planner, executor, aggregator and two worker
/// processes over OTLP/gRPC. One Pari job's spans form one trace: its root `job` span from the
/// planner, a span per task (plan, prove, bundle, …) on the process that ran it, each a child
/// of a span of the same trace, prove tasks on both workers; the JSON logs carry the trace id.
#[test]
fn traces_of_a_job_reach_an_otlp_collector() {
    let Some(s) = Services::from_env().map(|s| s.own_database(7)) else { return };
    // (Queues of its own: the other tests' workers, started without traces, would take some of
    // this job's tasks.)
    let Some(collector) = test_tool("PROVER_TEST_OTELCOL", "an OpenTelemetry Collector (scripts/otelcol.sh)") else { return };
    let dir = tempfile::tempdir().unwrap();
    let otlp = free_port();
    let spans_file = dir.path().join("spans.txt");
    let config = format!(
        "receivers:\n  otlp:\n    protocols:\n      grpc:\n        endpoint: 127.0.0.1:{otlp}\n\
         exporters:\n  debug:\n    verbosity: detailed\n    use_internal_logger: false\n    output_paths: [\"{}\"]\n\
         service:\n  telemetry:\n    metrics:\n      level: none\n  pipelines:\n    traces:\n      receivers: [otlp]\n      exporters: [debug]\n",
        spans_file.display()
    );
    std::fs::write(dir.path().join("otelcol.yaml"), config).unwrap();
    let collector_log = std::fs::File::create(dir.path().join("otelcol.log")).unwrap();
    let mut collector = Proc {
        child: Command::new(&collector)
            .arg(format!("--config=file:{}", dir.path().join("otelcol.yaml").display()))
            .stdout(Stdio::null())
            .stderr(collector_log)
            .spawn()
            .expect("start the collector"),
        metrics: 0,
    };
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", otlp)).is_err() {
        let log = std::fs::read_to_string(dir.path().join("otelcol.log")).unwrap_or_default();
        let exited = collector.child.try_wait().unwrap();
        assert!(exited.is_none() && Instant::now() < deadline, "the collector never listened ({exited:?}): {log}");
        std::thread::sleep(Duration::from_millis(100));
    }

    let endpoint = format!("http://127.0.0.1:{otlp}");
    let traced = ["--otlp-endpoint", &endpoint, "--log-format", "json"];
    let grpc = free_port();
    let planner = s.spawn_with("planner", "otel-planner", Some(grpc), &traced);
    let executor = s.spawn_with("executor", "otel-executor", None, &traced);
    let aggregator = s.spawn_with("aggregator", "otel-aggregator", None, &traced);
    let workers: Vec<Proc> = (1..=2).map(|i| s.spawn_with("worker", &format!("otel-worker-{i}"), None, &traced)).collect();
    for p in [&planner, &executor, &aggregator].into_iter().chain(&workers) {
        wait_ready(p.metrics);
    }
    let ep = format!("http://127.0.0.1:{grpc}");
    let job = ok(prover(&["submit", "pari", "--count", "16", "--size", "4", "--proofs-per-task", "1", "--endpoint", &ep]));
    ok(prover(&["watch", &job, "--endpoint", &ep]));

    // Spans leave each process in batches (every OTEL_BSP_SCHEDULE_DELAY, 5 s by default):
    // wait until the job's reports and bundle spans have reached the collector.
    let deadline = Instant::now() + Duration::from_secs(60);
    let spans = loop {
        let all = parse_collected(&std::fs::read_to_string(&spans_file).unwrap_or_default());
        let ours: Vec<CollectedSpan> = all.into_iter().filter(|sp| sp.attr("job") == Some(job.as_str())).collect();
        let done = ours.iter().any(|sp| sp.attr("kind") == Some("pari.done")) && ours.iter().any(|sp| sp.name == "pari.bundle");
        let workers_seen = ours.iter().filter(|sp| sp.name == "pari.prove").map(|sp| sp.instance.clone()).collect::<std::collections::BTreeSet<_>>();
        if done && workers_seen.len() == 2 && ours.iter().filter(|sp| sp.name == "pari.prove").count() >= 16 {
            break ours;
        }
        assert!(
            Instant::now() < deadline,
            "the job's spans never all arrived ({} so far: {:?}); collector log: {}",
            ours.len(),
            ours.iter().map(|sp| (&sp.name, &sp.instance)).collect::<Vec<_>>(),
            std::fs::read_to_string(dir.path().join("otelcol.log")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(300));
    };

    // One trace, rooted at the planner's job span.
    let roots: Vec<&CollectedSpan> = spans.iter().filter(|sp| sp.name == "job").collect();
    assert_eq!(roots.len(), 1, "{spans:?}");
    let root = roots[0];
    assert_eq!((root.service.as_str(), root.instance.as_str(), root.parent.as_str()), ("prover-planner", "otel-planner", ""), "{root:?}");
    assert!(spans.iter().all(|sp| sp.trace == root.trace), "a span of the job is in another trace: {spans:?}");
    // Every task span hangs off a span of this trace, the plan task off the job span.
    let ids: std::collections::HashSet<&str> = spans.iter().map(|sp| sp.id.as_str()).collect();
    for sp in spans.iter().filter(|sp| sp.name != "job") {
        assert!(ids.contains(sp.parent.as_str()), "{sp:?} has a parent outside the job's spans");
    }
    let plan = spans.iter().find(|sp| sp.attr("kind") == Some("plan")).expect("a plan span");
    assert_eq!((plan.parent.as_str(), plan.service.as_str()), (root.id.as_str(), "prover-executor"), "{plan:?}");
    let proves: Vec<&CollectedSpan> = spans.iter().filter(|sp| sp.name == "pari.prove").collect();
    assert!(proves.iter().all(|sp| sp.service == "prover-worker"), "{proves:?}");
    let tasks: std::collections::BTreeSet<&str> = proves.iter().filter_map(|sp| sp.attr("task")).collect();
    assert_eq!(tasks.len(), 16, "a span per prove task: {proves:?}");
    assert!(spans.iter().any(|sp| sp.service == "prover-aggregator"), "the aggregator's bundle task: {spans:?}");

    // The JSON logs of a task carry the trace id.
    let worker_log = s.log("otel-worker-1") + &s.log("otel-worker-2");
    assert!(worker_log.contains(&format!("\"trace_id\":\"{}\"", root.trace)), "{worker_log}");
}

/// Issue 32 item 2: every role connects to Redis as its own ACL user, made from the chart's
/// rules (helm/prover/files/redis-acl.conf, which the bundled Redis loads as `--user` lines). A
/// Pari job with authentication on runs through planner, executor, aggregator and a worker, each
/// as its user, and verifies offline. With the worker's (and executor's, aggregator's,
/// operator's) credentials a tenant's token can be neither written nor read, in a command or a
/// script; no role but the administrator runs CONFIG, KEYS, FLUSHALL or ACL; the operator's user
/// reads the queues' counters (the ProverPool scaler) and writes nothing.
#[test]
fn services_run_as_their_redis_acl_users() {
    let Some(mut s) = Services::from_env().map(|s| s.own_database(9)) else { return };
    let admin = s.redis.clone();
    let run = std::process::id();
    let mut c = redis::Client::open(admin.as_str()).unwrap().get_connection().unwrap();
    let rules = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../helm/prover/files/redis-acl.conf")).unwrap();
    let mut urls = std::collections::BTreeMap::new();
    for line in rules.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let mut words = line.split_whitespace();
        let user = words.next().unwrap().to_string();
        let password = format!("acl-{user}-{run}-0123456789");
        let mut cmd = redis::cmd("ACL");
        cmd.arg("SETUSER").arg(&user).arg("reset").arg("on").arg(format!(">{password}"));
        for rule in words {
            cmd.arg(rule);
        }
        let () = cmd.query(&mut c).unwrap_or_else(|e| panic!("ACL SETUSER {user}: {e}"));
        urls.insert(user.clone(), admin.replacen("redis://", &format!("redis://{user}:{password}@"), 1));
    }
    assert_eq!(urls.keys().map(String::as_str).collect::<Vec<_>>(), ["aggregator", "executor", "gc", "operator", "planner", "worker"]);

    // The job, each role as its user; the token made by the administrator.
    let token = ok(prover(&["admin", "token", "create", "--tenant", &format!("acl-{run}"), "--redis", &admin]));
    let token = token.lines().find_map(|l| l.strip_prefix("token:")).expect("a token").trim().to_string();
    let grpc = free_port();
    let mut procs = Vec::new();
    for role in ["planner", "executor", "aggregator", "worker"] {
        s.redis = urls[role].clone();
        procs.push(s.spawn_env(role, &format!("acl-{role}"), (role == "planner").then_some(grpc), &[], &[]));
    }
    s.redis = admin.clone();
    for p in &procs {
        wait_ready(p.metrics);
    }
    let ep = format!("http://127.0.0.1:{grpc}");
    let job = ok(prover(&["submit", "pari", "--circuit", "chain", "--size", "8", "--count", "4", "--proofs-per-task", "2", "--endpoint", &ep, "--token", &token]));
    ok(prover(&["watch", &job, "--endpoint", &ep, "--token", &token]));
    let dir = tempfile::tempdir().unwrap();
    let fetched = ok(prover(&["fetch", &job, "--out", dir.path().to_str().unwrap(), "--endpoint", &ep, "--token", &token]));
    let d = fetched.split("vk digest = ").nth(1).and_then(|r| r.split_whitespace().next()).expect("fetch prints the vk digest").to_string();
    assert!(ok(prover(&["pari", "verify-bundles", dir.path().to_str().unwrap(), "--vk-digest", &d])).contains("4 verified, 0 bad"));
    for role in ["planner", "executor", "aggregator", "worker"] {
        let log = s.log(&format!("acl-{role}"));
        assert!(!log.contains("NOPERM"), "the {role} was refused something it needs:\n{log}");
    }

    // What the other roles' credentials cannot do.
    let refused = |url: &str, what: &str, cmd: &mut redis::Cmd| {
        let mut conn = redis::Client::open(url).unwrap().get_connection().unwrap();
        match cmd.query::<redis::Value>(&mut conn) {
            Err(e) if e.code() == Some("NOPERM") || e.to_string().to_uppercase().contains("NOPERM") => {}
            other => panic!("{url}: {what} was not refused: {other:?}"),
        }
    };
    let hash = format!("prover:token:{}", "ab".repeat(32));
    // The gc CronJob's user runs `prover admin gc` (a dry run: the bucket is shared with other
    // tests; this database lists this test's job, so gc does not refuse an empty index).
    let out = ok(prover(&["admin", "gc", "--dry-run", "--older-than", "7d", "--grace", "0s", "--redis", &urls["gc"], "--s3-endpoint", &s.s3, "--bucket", &s.bucket]));
    assert!(out.contains("dry run") || out.contains("would"), "{out}");
    for role in ["executor", "aggregator", "worker", "operator", "gc"] {
        let url = &urls[role];
        refused(url, "writing a token", redis::cmd("HSET").arg(&hash).arg("tenant").arg("evil"));
        refused(url, "adding to the token index", redis::cmd("SADD").arg("prover:tokens").arg("x"));
        refused(url, "reading a token", redis::cmd("HGETALL").arg(&hash));
        refused(url, "writing a token from a script", redis::cmd("EVAL").arg("return redis.call('HSET', KEYS[1], 'tenant', 'evil')").arg(1).arg(&hash));
        refused(url, "listing every key", redis::cmd("KEYS").arg("*"));
        refused(url, "scanning every key", redis::cmd("SCAN").arg(0));
        refused(url, "changing the eviction policy", redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("allkeys-lru"));
        refused(url, "flushing the database", &mut redis::cmd("FLUSHALL"));
        refused(url, "making a user", redis::cmd("ACL").arg("SETUSER").arg("evil").arg("on").arg("nopass").arg("~*").arg("+@all"));
        refused(url, "reaching a key outside prover:", redis::cmd("SET").arg("elsewhere").arg("1"));
    }
    refused(&urls["operator"], "the operator enqueuing a task", redis::cmd("XADD").arg("prover:q:pari.prove").arg("*").arg("f").arg("v"));
    refused(&urls["operator"], "the operator writing a job", redis::cmd("HSET").arg(format!("prover:job:{job}")).arg("state").arg("done"));
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stats = rt.block_on(async {
        let q = queue::RedisQueue::connect(&urls["operator"], queue::QueueConfig::default()).await.expect("the operator's user connects (INFO names the policy)");
        (queue::Queue::stats(&q, "pari.prove").await.expect("the operator reads a queue's counters"), queue::Queue::stats(&q, "never.used").await.expect("and an unused queue's"))
    });
    assert!(stats.0.completed >= 2, "{:?}", stats.0);
    assert_eq!((stats.1.pending, stats.1.running), (0, 0));

    // Every role that ends jobs ends one with an idempotency key, which the ending script names
    // (and gives its TTL): the executor (its reconciler, Pari jobs), the aggregator (the last
    // step of Reckle and Hekaton jobs, a failed bundle) and a worker (a witness that does not
    // satisfy its circuit). Without prover:idem:* in their rules the aggregator's and the
    // worker's EVALSHA was refused (NOPERM) and the job never ended: the real cluster's first
    // Reckle job (scripts/cluster.sh). The Pari job above ends on the executor, so it missed it.
    rt.block_on(async {
        let planner = jobs::RedisJobStore::connect(&urls["planner"]).await.expect("the planner's user connects");
        for role in ["executor", "aggregator", "worker"] {
            let id = format!("acl-end-{role}-{run}");
            let mut rec = jobs::JobRecord::new(&id, "noop", "{}");
            rec.tenant = format!("acl-{run}");
            jobs::JobStore::create(&planner, &rec, Some((&format!("acl-end-{role}"), "fingerprint"))).await.unwrap();
            let store = jobs::RedisJobStore::connect(&urls[role]).await.unwrap_or_else(|e| panic!("the {role}'s user connects: {e}"));
            let ended = jobs::JobStore::end(&store, &id, jobs::JobState::Failed, "ended by a role", Duration::from_secs(600)).await;
            assert!(ended.unwrap_or_else(|e| panic!("the {role} cannot end a job: {e}")), "the {role} did not end the job");
            let rec = jobs::JobStore::get(&planner, &id).await.unwrap().expect("the record");
            assert_eq!((rec.state, rec.idempotency_key.as_str()), (jobs::JobState::Failed, format!("acl-end-{role}").as_str()));
        }
    });
}

/// Issue 12 item 5: the services run with an S3 identity limited to their bucket, made by the
/// chart's own script (helm/prover/files/minio-services-user.sh) against the test MinIO with the
/// real MinIO client (PROVER_TEST_MC). A Pari job runs through planner, executor, aggregator and
/// a worker with that identity and verifies offline; the same identity cannot reach another
/// bucket (a worker pointed at one exits naming it) nor create one.
#[test]
fn services_run_with_a_bucket_scoped_s3_identity() {
    // Queues of its own: the other tests' workers use another bucket, so a task of this job
    // that one of them took would fail, and this test's workers would fail theirs.
    let Some(mut s) = Services::from_env().map(|s| s.own_database(8)) else { return };
    let Some(mc) = test_tool("PROVER_TEST_MC", "the MinIO client mc") else { return };
    let (root_user, root_password) = (std::env::var("AWS_ACCESS_KEY_ID").unwrap(), std::env::var("AWS_SECRET_ACCESS_KEY").unwrap());
    let run = std::process::id();
    let bucket = format!("prover-scoped-{run}");
    let (access, secret) = (format!("prover-services-{run}"), format!("scoped-secret-{run}-0123456789"));
    let mc_dir = tempfile::tempdir().unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/../../helm/prover/files/minio-services-user.sh");
    let setup = Command::new("sh")
        .arg(script)
        .envs([
            ("MC", mc.as_str()),
            ("MC_CONFIG_DIR", mc_dir.path().to_str().unwrap()),
            ("S3_ENDPOINT", s.s3.as_str()),
            ("ROOT_USER", root_user.as_str()),
            ("ROOT_PASSWORD", root_password.as_str()),
            ("BUCKET", bucket.as_str()),
            ("SERVICES_ACCESS_KEY", access.as_str()),
            ("SERVICES_SECRET_KEY", secret.as_str()),
        ])
        .output()
        .unwrap();
    assert!(setup.status.success(), "{}{}", String::from_utf8_lossy(&setup.stdout), String::from_utf8_lossy(&setup.stderr));

    s.bucket = bucket.clone();
    let scoped = [("PROVER_NO_AUTH", "1"), ("AWS_ACCESS_KEY_ID", access.as_str()), ("AWS_SECRET_ACCESS_KEY", secret.as_str())];
    let grpc = free_port();
    let planner = s.spawn_env("planner", "scoped-planner", Some(grpc), &[], &scoped);
    let executor = s.spawn_env("executor", "scoped-executor", None, &[], &scoped);
    let aggregator = s.spawn_env("aggregator", "scoped-aggregator", None, &[], &scoped);
    let worker = s.spawn_env("worker", "scoped-worker", None, &[], &scoped);
    for p in [&planner, &executor, &aggregator, &worker] {
        wait_ready(p.metrics);
    }
    let ep = format!("http://127.0.0.1:{grpc}");
    let job = ok(prover(&["submit", "pari", "--circuit", "chain", "--size", "8", "--count", "4", "--proofs-per-task", "2", "--endpoint", &ep]));
    ok(prover(&["watch", &job, "--endpoint", &ep]));
    let dir = tempfile::tempdir().unwrap();
    let fetched = ok(prover(&["fetch", &job, "--out", dir.path().to_str().unwrap(), "--endpoint", &ep]));
    let d = fetched.split("vk digest = ").nth(1).and_then(|r| r.split_whitespace().next()).expect("fetch prints the vk digest").to_string();
    assert!(ok(prover(&["pari", "verify-bundles", dir.path().to_str().unwrap(), "--vk-digest", &d])).contains("4 verified, 0 bad"));

    // Another bucket (the other tests' one, which exists) and a new one: refused.
    for other in [std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into()), format!("prover-new-{run}")] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_prover"))
            .args(["serve", "worker", "--redis", &s.redis, "--s3-endpoint", &s.s3, "--bucket", &other, "--metrics-listen", "127.0.0.1:0"])
            .envs(scoped)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A worker that can reach the bucket would run on: give it a bounded time to exit.
        let deadline = Instant::now() + Duration::from_secs(60);
        while child.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("a worker with the scoped identity kept running on bucket {other}: the identity reaches it");
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "a worker on bucket {other} with the scoped identity: {err}");
        assert!(err.contains(&format!("bucket {other}")) && err.contains("AccessDenied"), "{err}");
    }
}

/// Issue 33 item 6: a process started while its Redis is away (a restart, or pods started in any
/// order) waits for it, logging each try, instead of exiting; it becomes ready once Redis
/// answers. A wrong password is not waited out: the process exits at once, naming Redis.
#[test]
fn a_service_started_before_redis_waits_for_it() {
    let Some(s) = Services::from_env() else { return };
    let port = free_port();
    let away = Services { redis: format!("redis://127.0.0.1:{port}/"), s3: s.s3.clone(), bucket: s.bucket.clone(), logs: tempfile::tempdir().unwrap() };
    let mut worker = away.spawn("worker", "early-worker", None);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !away.log("early-worker").contains("backend not reachable yet") {
        assert!(worker.child.try_wait().unwrap().is_none(), "the worker exited instead of waiting: {}", away.log("early-worker"));
        assert!(Instant::now() < deadline, "no waiting logged: {}", away.log("early-worker"));
        std::thread::sleep(Duration::from_millis(50));
    }
    let dir = tempfile::tempdir().unwrap();
    let start_redis = || {
        let child = Command::new("redis-server")
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--maxmemory-policy", "noeviction"])
            .current_dir(dir.path())
            .stdout(Stdio::null())
            .spawn()
            .expect("redis-server (the test command installs it)");
        Proc { child, metrics: 0 }
    };
    let redis = start_redis();
    wait_ready(worker.metrics);
    assert!(away.log("early-worker").contains(&format!("127.0.0.1:{port}")), "the log names the Redis it waits for");

    // Redis goes away while the worker runs: it keeps running but reads as not ready, naming
    // Redis; once Redis is back it is ready again.
    drop(redis);
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        let r = http_get(worker.metrics, "/readyz").unwrap_or_default();
        if r.contains(" 503 ") {
            assert!(r.contains("Redis unreachable"), "the reason names Redis: {r}");
            break;
        }
        assert!(worker.child.try_wait().unwrap().is_none(), "the worker exited: {}", away.log("early-worker"));
        assert!(Instant::now() < deadline, "still ready with Redis gone: {r}");
        std::thread::sleep(Duration::from_millis(100));
    }
    let redis = start_redis();
    wait_ready(worker.metrics);

    let wrong = Services { redis: format!("redis://:wrong-password@127.0.0.1:{port}/"), ..away };
    let mut refused = wrong.spawn("worker", "wrong-password", None);
    let status = refused.child.wait().unwrap();
    let log = wrong.log("wrong-password");
    assert_eq!(status.code(), Some(1), "{log}");
    assert!(log.contains("Redis") && !log.contains("backend not reachable yet"), "a wrong password was waited out: {log}");
    drop(redis);
}

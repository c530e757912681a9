//! What a newcomer meets first (issue 59): `prover serve --embedded` writes plain logs to a file
//! or a pipe and binds its metrics and probes beside its gRPC port (so two run side by side on
//! one machine), `prover limits` without a server says how to get this build's limits, and
//! `prover serve --help` is one line per flag.

use std::io::Read;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// A port for an embedded server's gRPC listener, below Linux's ephemeral range and apart from
/// the ports the other CLI tests pick.
fn free_port() -> u16 {
    use std::sync::atomic::{AtomicU32, Ordering};
    static NEXT: AtomicU32 = AtomicU32::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let port = 20_500 + ((std::process::id().wrapping_mul(61).wrapping_add(n)) % 6_000) as u16;
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}

/// The server process, killed when dropped.
struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `prover serve --embedded` on 127.0.0.1:`grpc` with no `--metrics-listen`, its
/// stderr (the logs) written to `log`.
fn serve(dir: &Path, grpc: u16, log: &Path) -> Server {
    let child = Command::new(env!("CARGO_BIN_EXE_prover"))
        .args(["serve", "--embedded", "--data", dir.join("data").to_str().unwrap(), "--listen", &format!("127.0.0.1:{grpc}")])
        .env_remove("PROVER_REDIS_URL")
        .env_remove("PROVER_METRICS_LISTEN")
        .env_remove("NO_COLOR")
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    Server(child)
}

/// The address the server logged for its metrics and probes, once it has: waits on the log
/// (the line is written before the listener serves), failing if the server exits first.
fn metrics_addr(server: &mut Server, log: &Path) -> std::net::SocketAddr {
    loop {
        let text = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = text.lines().find(|l| l.contains("metrics and probes")) {
            let addr = line.split("addr=").nth(1).unwrap_or_else(|| panic!("no addr= in {line:?}"));
            return addr.split_whitespace().next().unwrap().parse().unwrap_or_else(|e| panic!("{addr:?}: {e}"));
        }
        if let Some(status) = server.0.try_wait().unwrap() {
            panic!("the server exited ({status}) before logging its metrics address:\n{text}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Waits until `/readyz` at `addr` answers 200, failing if the server exits first.
fn wait_ready(server: &mut Server, addr: std::net::SocketAddr) {
    use std::io::Write;
    loop {
        if let Some(status) = server.0.try_wait().unwrap() {
            panic!("the server exited before it was ready: {status}");
        }
        let answer = std::net::TcpStream::connect(addr).ok().and_then(|mut s| {
            write!(s, "GET /readyz HTTP/1.0\r\nHost: localhost\r\n\r\n").ok()?;
            let mut out = String::new();
            s.read_to_string(&mut out).ok()?;
            Some(out)
        });
        if answer.is_some_and(|r| r.starts_with("HTTP/1.0 200") || r.starts_with("HTTP/1.1 200")) {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Two embedded servers on one machine, each with only `--listen` and `--data` given: both come
/// up (each serves its probes on a port of its own, on loopback), and their logs, written to a
/// file, carry no ANSI escape.
#[test]
fn two_embedded_servers_run_side_by_side_with_plain_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let (a_dir, b_dir) = (tmp.path().join("a"), tmp.path().join("b"));
    let (a_log, b_log) = (tmp.path().join("a.log"), tmp.path().join("b.log"));
    let mut a = serve(&a_dir, free_port(), &a_log);
    let mut b = serve(&b_dir, free_port(), &b_log);
    let (a_addr, b_addr) = (metrics_addr(&mut a, &a_log), metrics_addr(&mut b, &b_log));
    assert!(a_addr.ip().is_loopback() && b_addr.ip().is_loopback(), "probes bound beyond loopback: {a_addr}, {b_addr}");
    assert_ne!(a_addr.port(), b_addr.port());
    wait_ready(&mut a, a_addr);
    wait_ready(&mut b, b_addr);
    drop((a, b));
    for log in [&a_log, &b_log] {
        let bytes = std::fs::read(log).unwrap();
        assert!(!bytes.is_empty(), "{} is empty", log.display());
        assert!(!bytes.contains(&0x1b), "{} holds an ANSI escape:\n{}", log.display(), String::from_utf8_lossy(&bytes));
    }
}

/// `prover limits` with no planner listening names `--local`, which answers without one.
#[test]
fn limits_without_a_server_says_how_to_get_them() {
    let port = free_port();
    let o = Command::new(env!("CARGO_BIN_EXE_prover"))
        .args(["limits", "--endpoint", &format!("http://127.0.0.1:{port}")])
        .env_remove("PROVER_TOKEN")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success() && err.contains("prover limits --local"), "{err}");
    let o = Command::new(env!("CARGO_BIN_EXE_prover")).args(["limits", "--local"]).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("total_size"), "{}", String::from_utf8_lossy(&o.stdout));
}

/// `prover serve --help` is a list to scan: each flag's name and one line of help (the full
/// text is in docs/configuration.md, which it names).
#[test]
fn serve_help_is_one_line_per_flag() {
    let o = Command::new(env!("CARGO_BIN_EXE_prover")).args(["serve", "--help"]).env("COLUMNS", "200").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let flags = text.lines().filter(|l| l.trim_start().starts_with("--") || l.trim_start().starts_with('-') && l.contains(", --")).count();
    assert!(flags >= 40, "{flags} flags in:\n{text}");
    let long = text.lines().filter(|l| l.len() > 200).count();
    assert_eq!(long, 0, "lines past 200 columns:\n{text}");
    // A flag line and at most one help line per flag, plus the group headings.
    assert!(text.lines().count() <= flags * 2 + 20, "{} lines for {flags} flags:\n{text}", text.lines().count());
    assert!(text.contains("docs/configuration.md"), "{text}");
}

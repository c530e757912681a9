//! The service binaries start, refuse an incomplete configuration with one line naming the
//! missing setting, and exit 1 (the end-to-end runs use `prover serve`, which shares their code).

use std::process::Command;

#[test]
fn each_binary_names_its_missing_configuration() {
    for (bin, path) in [
        ("planner", env!("CARGO_BIN_EXE_planner")),
        ("executor", env!("CARGO_BIN_EXE_executor")),
        ("worker", env!("CARGO_BIN_EXE_worker")),
        ("aggregator", env!("CARGO_BIN_EXE_aggregator")),
    ] {
        let out = Command::new(path).env_remove("PROVER_REDIS_URL").env_remove("PROVER_S3_ENDPOINT").output().unwrap();
        assert_eq!(out.status.code(), Some(1), "{bin}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--redis (PROVER_REDIS_URL) is required"), "{bin}: {err}");
        let help = Command::new(path).arg("--help").output().unwrap();
        assert!(help.status.success() && String::from_utf8_lossy(&help.stdout).contains("--s3-endpoint"), "{bin}");
    }
}

#[test]
fn an_unreachable_redis_is_reported() {
    // Nothing listens on port 1: the connection error is reported, not a panic. (Without
    // --backend-wait-secs 0 the worker would wait two minutes for it first.)
    let out = Command::new(env!("CARGO_BIN_EXE_worker"))
        .args(["--redis", "redis://127.0.0.1:1/", "--s3-endpoint", "http://127.0.0.1:1", "--metrics-listen", "127.0.0.1:0", "--backend-wait-secs", "0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.starts_with("error: Redis: redis://127.0.0.1:1/") && err.contains("--backend-wait-secs"), "{err}");
    assert!(!err.contains("panicked"));
}

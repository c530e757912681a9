//! `prover admin dlq list | clear` against real Redis (`PROVER_TEST_REDIS_URL`, database 4).

use std::process::Command;

use queue::{FailOutcome, Queue, QueueConfig, RedisQueue, TaskMessage};

fn redis_url() -> Option<String> {
    match std::env::var("PROVER_TEST_REDIS_URL") {
        Ok(u) => {
            // redis://host:port[/db] → redis://host:port/4
            let base = match u.rsplit_once('/') {
                Some((head, db)) if !head.ends_with('/') && db.chars().all(|c| c.is_ascii_digit()) => head.to_string(),
                _ => u.trim_end_matches('/').to_string(),
            };
            Some(format!("{base}/4"))
        }
        Err(_) => {
            assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
            None
        }
    }
}

fn prover(args: &[&str]) -> (bool, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_prover")).args(args).output().expect("run prover");
    let text = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
    assert!(!text.contains("panicked"), "{text}");
    (o.status.success(), text)
}

#[tokio::test]
async fn dead_letters_are_listed_and_cleared() {
    let Some(url) = redis_url() else { return };
    let cfg = QueueConfig { max_attempts: 1, ..QueueConfig::default() };
    let q = RedisQueue::connect(&url, cfg).await.unwrap();
    let job = format!("dlq-test-{}", std::process::id());
    let kind = "pari.prove";
    q.enqueue(kind, TaskMessage::new(job.clone(), "t1", "{}")).await.unwrap();
    let lease = q.claim(kind, "w", std::time::Duration::from_secs(2)).await.unwrap().expect("claimed");
    assert_eq!(q.fail(&lease, "the prover ran out of memory").await.unwrap(), FailOutcome::DeadLettered);

    let (ok, text) = prover(&["admin", "dlq", "list", "--job", &job, "--redis", &url]);
    assert!(ok, "{text}");
    assert!(text.contains(&format!("pari.prove  job {job}  task t1")) && text.contains("ran out of memory"), "{text}");
    assert!(text.contains("1 dead letters"), "{text}");

    let (ok, text) = prover(&["admin", "dlq", "clear", "--kind", kind, "--redis", &url]);
    assert!(ok && text.contains("cleared"), "{text}");
    let (ok, text) = prover(&["admin", "dlq", "list", "--job", &job, "--redis", &url]);
    assert!(ok && text.contains("0 dead letters"), "{text}");
    // Clear needs a kind or --all.
    let (ok, text) = prover(&["admin", "dlq", "clear", "--redis", &url]);
    assert!(!ok && text.contains("--kind"), "{text}");
}

/// `prover admin gc` (the collection itself is tested in platform/tests/gc.rs): a bad duration
/// is named; against real Redis and S3 an orphaned object is reported by a dry run, kept by it,
/// and deleted by a real run once past the grace period.
#[tokio::test]
async fn gc_collects_orphans() {
    let (ok, text) = prover(&["admin", "gc", "--older-than", "7w", "--redis", "redis://127.0.0.1:1/"]);
    assert!(!ok && text.contains("--older-than") && text.contains("unit"), "{text}");
    let Some(url) = redis_url() else { return };
    let Ok(endpoint) = std::env::var("PROVER_TEST_S3_ENDPOINT") else { return };
    let bucket = "prover-test-gc-cli";
    let s3 = blobstore::S3Store::connect(blobstore::S3Config {
        endpoint: endpoint.clone(),
        bucket: bucket.into(),
        region: "us-east-1".into(),
        access_key: std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
        secret_key: std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
    })
    .await
    .unwrap();
    use blobstore::BlobStore;
    let key = format!("jobs/orphan-{}/inputs/leaves.bin", std::process::id());
    s3.put(&key, bytes::Bytes::from_static(b"x")).await.unwrap();
    let args = |dry: bool| {
        // The Redis database may list no job at all, which gc refuses without this flag (a Redis
        // that lost its data would have every job's objects collected; gc::*_gc tests that).
        let mut a = vec!["admin", "gc", "--older-than", "7d", "--grace", "0s", "--redis", &url, "--s3-endpoint", &endpoint, "--bucket", bucket, "--allow-empty-index"];
        if dry {
            a.push("--dry-run");
        }
        a.into_iter().map(String::from).collect::<Vec<_>>()
    };
    let run = |dry: bool| {
        let a = args(dry);
        prover(&a.iter().map(String::as_str).collect::<Vec<_>>())
    };
    let (ok, text) = run(true);
    assert!(ok && text.contains("would collect orphaned objects of orphan-"), "{text}");
    assert!(s3.exists(&key).await.unwrap(), "a dry run deleted");
    let (ok, text) = run(false);
    assert!(ok && text.contains("collected orphaned objects of orphan-"), "{text}");
    assert!(!s3.exists(&key).await.unwrap());
}

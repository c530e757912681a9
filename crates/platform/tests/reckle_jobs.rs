//! Reckle jobs through the platform roles, embedded (in-process queue, filesystem store) and
//! against real Redis and S3 (MinIO), including a worker that dies holding a lease.

use std::sync::Arc;
use std::time::Duration;

use blobstore::{BlobStore, FsStore, S3Config, S3Store};
use platform::{JobOutcome, Platform, PlatformError, ReckleJobSpec, KIND_LEAF};
use queue::{MemoryQueue, Queue, QueueConfig, RedisQueue};
use rand::{Rng, SeedableRng};
use reckle::{files, Circuits, NodeProof, Params, Statement};
use tokio::sync::watch;

fn config() -> QueueConfig {
    // Short visibility timeout so that the dead-worker case redelivers quickly.
    QueueConfig { visibility_timeout: Duration::from_secs(3), ..QueueConfig::default() }
}

async fn backends(real: bool) -> Option<(Arc<dyn Queue>, Arc<dyn BlobStore>, Option<tempfile::TempDir>)> {
    if !real {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsStore::new(dir.path()).unwrap();
        return Some((Arc::new(MemoryQueue::new(config())), Arc::new(fs), Some(dir)));
    }
    let (Ok(redis), Ok(endpoint)) = (std::env::var("PROVER_TEST_REDIS_URL"), std::env::var("PROVER_TEST_S3_ENDPOINT")) else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "test services required but not configured");
        eprintln!("skipping: no Redis/S3 configured");
        return None;
    };
    let q = RedisQueue::connect(&redis, config()).await.unwrap();
    let s3 = S3Store::connect(S3Config {
        endpoint,
        bucket: std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into()),
        region: "us-east-1".into(),
        access_key: std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
        secret_key: std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
    })
    .await
    .unwrap();
    Some((Arc::new(q), Arc::new(s3), None))
}

/// Starts 1 executor, 1 aggregator and `workers` workers; returns the stop switch.
fn start(p: &Arc<Platform>, workers: usize, tag: &str) -> watch::Sender<bool> {
    let (tx, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor(format!("executor-{tag}"), rx.clone()));
    tokio::spawn(p.clone().run_aggregator(format!("aggregator-{tag}"), rx.clone()));
    for i in 0..workers {
        tokio::spawn(p.clone().run_worker(format!("worker-{tag}-{i}"), rx.clone()));
    }
    tx
}

async fn run_job(real: bool, kill_a_worker: bool) {
    let Some((q, blobs, _dir)) = backends(real).await else { return };
    let p = Platform::new(q.clone(), blobs.clone());
    let job = format!("job-{}", uuid::Uuid::new_v4().simple());
    let spec = ReckleJobSpec { log_n: 4, log_bucket: 2, batch: vec![1, 6, 13] };
    let mut rng = rand::rngs::StdRng::seed_from_u64(9);
    let values: Vec<u64> = (0..16).map(|_| rng.gen()).collect();

    // Invalid jobs are refused and leave nothing behind.
    let bad = ReckleJobSpec { batch: vec![16], ..spec.clone() };
    assert!(matches!(p.submit_reckle(&format!("{job}-bad"), bad, values.clone()).await, Err(PlatformError::InvalidJob(_))));
    assert!(matches!(p.submit_reckle(&format!("{job}-bad"), spec.clone(), values[..15].to_vec()).await, Err(PlatformError::InvalidJob(_))));
    assert!(blobs.list(&format!("jobs/{job}-bad/")).await.unwrap().is_empty());

    let total = p.submit_reckle(&job, spec.clone(), values.clone()).await.unwrap();
    assert_eq!(total, 6, "3 buckets, 2 nodes at level 3, the root");
    if kill_a_worker {
        // A worker claims a bucket task and dies without a word: its lease must expire and
        // the task be redelivered to the live workers.
        let lease = q.claim(KIND_LEAF, "doomed-worker", Duration::from_secs(1)).await.unwrap();
        assert!(lease.is_some());
    }
    let stop = start(&p, 2, &job[4..12]);
    let outcome = tokio::time::timeout(Duration::from_secs(600), p.wait(&job, |_| {})).await.expect("job finished");
    let _ = stop.send(true);
    assert_eq!(outcome, JobOutcome::Done);

    // The published proof directory verifies independently of the platform.
    let circuits = Circuits::build(Params::new(4, 2).unwrap()).unwrap();
    let dir = format!("jobs/{job}/proof");
    let st: Statement = serde_json::from_slice(&blobs.get(&format!("{dir}/{}", files::STATEMENT)).await.unwrap()).unwrap();
    let root = NodeProof::from_bytes(&circuits, &blobs.get(&format!("{dir}/{}", files::PROOF)).await.unwrap()).unwrap();
    st.verify(&circuits, &root).unwrap();
    assert_eq!(st.batch.iter().map(|l| l.value).collect::<Vec<_>>(), vec![values[1], values[6], values[13]]);
    let tree = reckle::Tree::build(circuits.params(), values).unwrap();
    assert_eq!(st.root, tree.root().to_hex());
    let lambda = reckle::BatchProof::from_bytes(&circuits, &blobs.get(&format!("{dir}/{}", files::LAMBDA)).await.unwrap()).unwrap();
    lambda.check_against(&circuits, &tree).unwrap();
    blobs.delete_prefix(&format!("jobs/{job}/")).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_reckle_job() {
    run_job(false, false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_reckle_job_survives_a_dead_worker() {
    run_job(true, true).await;
}

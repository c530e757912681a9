//! Backends for the platform tests: in-process, or the Redis and S3 (MinIO) servers the test
//! command starts (`PROVER_TEST_*`); with `PROVER_TEST_REQUIRE_SERVICES=1` a missing server fails
//! the test instead of skipping it.

#[allow(dead_code)]
pub mod faults;

use std::sync::Arc;

use blobstore::{BlobStore, FsStore, S3Config, S3Store};
use jobs::{JobStore, MemoryJobStore, RedisJobStore};
use queue::{MemoryQueue, Queue, QueueConfig, RedisQueue};

pub type Backends = (Arc<dyn Queue>, Arc<dyn BlobStore>, Arc<dyn JobStore>, Option<tempfile::TempDir>);

pub async fn backends(real: bool, cfg: QueueConfig) -> Option<Backends> {
    if !real {
        let dir = tempfile::tempdir().unwrap();
        let fs = FsStore::new(dir.path()).unwrap();
        return Some((Arc::new(MemoryQueue::new(cfg)), Arc::new(fs), Arc::new(MemoryJobStore::new()), Some(dir)));
    }
    let (Ok(redis), Ok(endpoint)) = (std::env::var("PROVER_TEST_REDIS_URL"), std::env::var("PROVER_TEST_S3_ENDPOINT")) else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "test services required but not configured");
        eprintln!("skipping: no Redis/S3 configured");
        return None;
    };
    let q = RedisQueue::connect(&redis, cfg).await.unwrap();
    let j = RedisJobStore::connect(&redis).await.unwrap();
    let s3 = S3Store::connect(S3Config {
        endpoint,
        bucket: std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into()),
        region: "us-east-1".into(),
        access_key: std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
        secret_key: std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
    })
    .await
    .unwrap();
    Some((Arc::new(q), Arc::new(s3), Arc::new(j), None))
}

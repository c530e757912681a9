//! Backends for the platform tests: in-process, or the Redis and S3 (MinIO) servers the test
//! command starts (`PROVER_TEST_*`); with `PROVER_TEST_REQUIRE_SERVICES=1` a missing server fails
//! the test instead of skipping it.

#[allow(dead_code)]
pub mod claims;
#[allow(dead_code)]
pub mod faults;

use std::sync::Arc;

use blobstore::{BlobStore, FsStore, S3Config, S3Store};
use jobs::{JobStore, MemoryJobStore, RedisJobStore};
use queue::{MemoryQueue, Queue, QueueConfig, RedisQueue};

pub type Backends = (Arc<dyn Queue>, Arc<dyn BlobStore>, Arc<dyn JobStore>, Option<tempfile::TempDir>);

#[allow(dead_code)]
pub async fn backends(real: bool, cfg: QueueConfig) -> Option<Backends> {
    backends_in_db(real, cfg, 0).await
}

/// Like [`backends`], with the Redis state in logical database `db` of the test server. Tests
/// of one binary run at once and a platform reads every stream, lease and dead letter of its
/// Redis (a queue with a 300 ms visibility timeout reclaims, and buries, another test's
/// leases), so a test whose queue settings differ from the others' takes a database of its own.
#[allow(dead_code)]
pub async fn backends_in_db(real: bool, cfg: QueueConfig, db: u8) -> Option<Backends> {
    let bucket = std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into());
    backends_in(real, cfg, db, &bucket).await
}

/// Like [`backends_in_db`], with the objects in bucket `bucket` of the test S3 server (created
/// if missing), for a test that lists or deletes across the whole store.
#[allow(dead_code)]
pub async fn backends_in(real: bool, cfg: QueueConfig, db: u8, bucket: &str) -> Option<Backends> {
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
    let redis = if db == 0 { redis } else { format!("{}/{db}", redis.trim_end_matches('/').trim_end_matches("/0")) };
    let q = RedisQueue::connect(&redis, cfg).await.unwrap();
    let j = RedisJobStore::connect(&redis).await.unwrap();
    let s3 = S3Store::connect(S3Config {
        endpoint,
        bucket: bucket.to_string(),
        region: "us-east-1".into(),
        access_key: std::env::var("AWS_ACCESS_KEY_ID").unwrap(),
        secret_key: std::env::var("AWS_SECRET_ACCESS_KEY").unwrap(),
    })
    .await
    .unwrap();
    Some((Arc::new(q), Arc::new(s3), Arc::new(j), None))
}

//! The blob-store contract against the filesystem store and a real S3-compatible server
//! (`PROVER_TEST_S3_ENDPOINT`, `PROVER_TEST_S3_BUCKET`, `AWS_ACCESS_KEY_ID`,
//! `AWS_SECRET_ACCESS_KEY`; started by the test command). Without an endpoint the S3 cases are
//! skipped, unless `PROVER_TEST_REQUIRE_SERVICES=1`.

use blobstore::contract::*;
use blobstore::{BlobStore, FsStore, S3Config, S3Store};

fn prefix() -> String {
    format!("run-{}/", uuid::Uuid::new_v4().simple())
}

async fn s3() -> Option<S3Store> {
    let Ok(endpoint) = std::env::var("PROVER_TEST_S3_ENDPOINT") else {
        assert!(
            std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"),
            "PROVER_TEST_REQUIRE_SERVICES=1 but PROVER_TEST_S3_ENDPOINT is not set"
        );
        eprintln!("skipping S3: PROVER_TEST_S3_ENDPOINT not set");
        return None;
    };
    let cfg = S3Config {
        endpoint,
        bucket: std::env::var("PROVER_TEST_S3_BUCKET").unwrap_or_else(|_| "prover-test".into()),
        region: "us-east-1".into(),
        access_key: std::env::var("AWS_ACCESS_KEY_ID").expect("AWS_ACCESS_KEY_ID"),
        secret_key: std::env::var("AWS_SECRET_ACCESS_KEY").expect("AWS_SECRET_ACCESS_KEY"),
    };
    Some(S3Store::connect(cfg).await.expect("connect to S3"))
}

#[tokio::test]
async fn fs_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = FsStore::new(dir.path()).unwrap();
    round_trip(&s, &prefix()).await;
    large_object(&s, &prefix()).await;
    pieces(&s, &prefix()).await;
    append_copies(&s, &prefix()).await;
    delete_many(&s, &prefix()).await;
    folders(&s, &prefix()).await;
}

/// A store with only the required methods: the trait's defaults (copy, size, ranged reads,
/// buffered uploads) meet the contract too.
struct Plain(FsStore);

#[async_trait::async_trait]
impl BlobStore for Plain {
    async fn put(&self, key: &str, data: bytes::Bytes) -> Result<(), blobstore::BlobError> {
        self.0.put(key, data).await
    }
    async fn get(&self, key: &str) -> Result<bytes::Bytes, blobstore::BlobError> {
        self.0.get(key).await
    }
    async fn exists(&self, key: &str) -> Result<bool, blobstore::BlobError> {
        self.0.exists(key).await
    }
    async fn list(&self, prefix: &str) -> Result<Vec<String>, blobstore::BlobError> {
        self.0.list(prefix).await
    }
    async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, blobstore::BlobError> {
        self.0.list_objects(prefix).await
    }
    async fn delete(&self, key: &str) -> Result<(), blobstore::BlobError> {
        self.0.delete(key).await
    }
}

#[tokio::test]
async fn default_methods_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let s = Plain(FsStore::new(dir.path()).unwrap());
    round_trip(&s, &prefix()).await;
    pieces(&s, &prefix()).await;
    append_copies(&s, &prefix()).await;
    folders(&s, &prefix()).await;
}

#[tokio::test]
async fn s3_round_trip() {
    if let Some(s) = s3().await {
        round_trip(&s as &dyn BlobStore, &prefix()).await;
    }
}

#[tokio::test]
async fn s3_delete_many() {
    if let Some(s) = s3().await {
        delete_many(&s, &prefix()).await;
    }
}

#[tokio::test]
async fn s3_folders() {
    if let Some(s) = s3().await {
        folders(&s, &prefix()).await;
    }
}

#[tokio::test]
async fn s3_large_object_multipart() {
    if let Some(s) = s3().await {
        large_object(&s, &prefix()).await;
    }
}

#[tokio::test]
async fn s3_pieces() {
    if let Some(s) = s3().await {
        pieces(&s, &prefix()).await;
    }
}

#[tokio::test]
async fn s3_append_copies() {
    if let Some(s) = s3().await {
        append_copies(&s, &prefix()).await;
    }
}

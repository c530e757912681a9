//! Object storage for the platform: one [`BlobStore`] trait with an S3 implementation
//! ([`S3Store`], aws-sdk-s3: custom endpoint, path-style addressing, multipart upload for large
//! objects, the SDK's retries) and a filesystem one ([`FsStore`]) for embedded mode, checked by
//! one contract suite ([`contract`]).
//!
//! Keys are relative paths (`jobs/<id>/inputs/leaves.bin`): segments of letters, digits, `.`,
//! `-`, `_`, `=`, no empty, `.` or `..` segment. Writes are all-or-nothing: a reader sees the old
//! object or the new one, never a prefix (S3 by its semantics; the filesystem store writes a
//! temporary file and renames it).

use async_trait::async_trait;
use bytes::Bytes;

pub mod contract;
mod fs;
mod s3;

pub use fs::FsStore;
pub use s3::{S3Config, S3Store};

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("object {0:?} not found")]
    NotFound(String),
    #[error("invalid object key {0:?}")]
    InvalidKey(String),
    #[error("object store: {0}")]
    Backend(String),
}

/// Checks a key (see the crate doc).
pub fn check_key(key: &str) -> Result<(), BlobError> {
    let ok = !key.is_empty()
        && key.len() <= 512
        && key.split('/').all(|seg| {
            !seg.is_empty()
                && seg != "."
                && seg != ".."
                && seg.bytes().all(|b| b.is_ascii_alphanumeric() || b"._-=".contains(&b))
        });
    if ok {
        Ok(())
    } else {
        Err(BlobError::InvalidKey(key.to_string()))
    }
}

#[async_trait]
pub trait BlobStore: Send + Sync {
    /// Stores `data` under `key`, replacing any previous object.
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError>;
    async fn get(&self, key: &str) -> Result<Bytes, BlobError>;
    async fn exists(&self, key: &str) -> Result<bool, BlobError>;
    /// Keys under `prefix` (a key prefix ending in `/`, or empty for all), sorted.
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError>;
    /// Copies object `from` to `to`, replacing `to`; `NotFound` if `from` is missing. The S3
    /// store copies on the server (`CopyObject`, objects up to 5 GB), so the bytes never pass
    /// through this process; the default reads and writes them.
    async fn copy(&self, from: &str, to: &str) -> Result<(), BlobError> {
        let data = self.get(from).await?;
        self.put(to, data).await
    }
    /// Deletes `key`; deleting a missing object is not an error.
    async fn delete(&self, key: &str) -> Result<(), BlobError>;
    /// Deletes everything under `prefix`; returns how many objects.
    async fn delete_prefix(&self, prefix: &str) -> Result<usize, BlobError> {
        let keys = self.list(prefix).await?;
        for k in &keys {
            self.delete(k).await?;
        }
        Ok(keys.len())
    }
}

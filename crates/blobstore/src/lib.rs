//! Object storage for the platform: one [`BlobStore`] trait with an S3 implementation
//! ([`S3Store`], aws-sdk-s3: custom endpoint, path-style addressing, multipart upload for large
//! objects, the SDK's retries) and a filesystem one ([`FsStore`]) for embedded mode, checked by
//! one contract suite ([`contract`]).
//!
//! Keys are relative paths (`jobs/<id>/inputs/leaves.bin`): segments of letters, digits, `.`,
//! `-`, `_`, `=`, no empty, `.` or `..` segment. Writes are all-or-nothing: a reader sees the old
//! object or the new one, never a prefix (S3 by its semantics; the filesystem store writes a
//! temporary file and renames it).
//!
//! Large objects never need to be whole in memory: [`BlobStore::size`] and
//! [`BlobStore::get_range`] read them in pieces, and [`BlobStore::upload`] writes one piece by
//! piece ([`Upload`]: S3 multipart, a temporary file for the filesystem store), visible only
//! once [`Upload::finish`] returns.

use async_trait::async_trait;
use bytes::Bytes;

pub mod contract;
mod fs;
mod s3;

pub use fs::FsStore;
pub use s3::{S3Config, S3Store, MULTIPART_THRESHOLD};

#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    #[error("object {0:?} not found")]
    NotFound(String),
    #[error("invalid object key {0:?}")]
    InvalidKey(String),
    #[error("object {key:?} has {size} bytes: no range {start}..{end}")]
    OutOfRange { key: String, size: u64, start: u64, end: u64 },
    #[error("object store: {0}")]
    Backend(String),
}

/// An object being written piece by piece ([`BlobStore::upload`]). Nothing is visible under
/// its key until [`Upload::finish`] returns `Ok`; an upload dropped or aborted leaves the old
/// object (or none).
#[async_trait]
pub trait Upload: Send {
    /// Appends `data`.
    async fn write(&mut self, data: Bytes) -> Result<(), BlobError>;
    /// Appends bytes `start..start + len` of the object `from` (`NotFound`, `OutOfRange` as
    /// [`BlobStore::get_range`]). The S3 store copies them on the server (`UploadPartCopy`)
    /// wherever S3's part sizes allow (at least [`MIN_COPY_PART`] bytes, at a part boundary), so
    /// a large unchanged range of an object written anew never passes through this process;
    /// the other stores read and write it, [`COPY_CHUNK`] bytes at a time.
    async fn append_copy(&mut self, from: &str, start: u64, len: u64) -> Result<(), BlobError>;
    /// Makes the object visible, whole; returns its size.
    async fn finish(self: Box<Self>) -> Result<u64, BlobError>;
    /// Discards what was written.
    async fn abort(self: Box<Self>) -> Result<(), BlobError>;
}

/// The smallest range [`Upload::append_copy`] copies on the S3 server (S3's least part size,
/// 5 MiB); a shorter one is read and written.
pub const MIN_COPY_PART: u64 = 5 << 20;
/// Bytes a store that cannot copy ranges on its side reads per step of [`Upload::append_copy`].
pub const COPY_CHUNK: u64 = 8 << 20;

/// The default [`Upload`]: the pieces gathered in memory, stored by one `put` at the end.
struct Buffered<'a, S: ?Sized> {
    store: &'a S,
    key: String,
    data: Vec<u8>,
}

#[async_trait]
impl<S: BlobStore + ?Sized> Upload for Buffered<'_, S> {
    async fn write(&mut self, data: Bytes) -> Result<(), BlobError> {
        self.data.extend_from_slice(&data);
        Ok(())
    }
    async fn append_copy(&mut self, from: &str, start: u64, len: u64) -> Result<(), BlobError> {
        let got = self.store.get_range(from, start, len).await?;
        self.data.extend_from_slice(&got);
        Ok(())
    }
    async fn finish(self: Box<Self>) -> Result<u64, BlobError> {
        let size = self.data.len() as u64;
        self.store.put(&self.key, Bytes::from(self.data)).await?;
        Ok(size)
    }
    async fn abort(self: Box<Self>) -> Result<(), BlobError> {
        Ok(())
    }
}

/// Checks `start..start + len` against an object of `size` bytes.
pub fn check_range(key: &str, size: u64, start: u64, len: u64) -> Result<std::ops::Range<u64>, BlobError> {
    match start.checked_add(len) {
        Some(end) if end <= size => Ok(start..end),
        end => Err(BlobError::OutOfRange { key: key.to_string(), size, start, end: end.unwrap_or(u64::MAX) }),
    }
}

/// The folder right under `prefix` that `key` lies in, if any (see [`BlobStore::list_dirs`]).
fn dir_of(key: &str, prefix: &str) -> Option<String> {
    let (dir, _) = key.strip_prefix(prefix)?.split_once('/')?;
    (!dir.is_empty()).then(|| dir.to_string())
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

/// An object as [`BlobStore::list_objects`] lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectInfo {
    pub key: String,
    pub size: u64,
    /// When it was last written, ms since the epoch.
    pub modified_ms: u64,
}

#[async_trait]
pub trait BlobStore: Send + Sync {
    /// Stores `data` under `key`, replacing any previous object.
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError>;
    async fn get(&self, key: &str) -> Result<Bytes, BlobError>;
    async fn exists(&self, key: &str) -> Result<bool, BlobError>;
    /// The object's size in bytes; `NotFound` if missing. The default reads it whole.
    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        Ok(self.get(key).await?.len() as u64)
    }
    /// Bytes `start..start + len` of the object; `OutOfRange` if they are not all in it. The
    /// default reads the object whole.
    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        let all = self.get(key).await?;
        let r = check_range(key, all.len() as u64, start, len)?;
        Ok(all.slice(r.start as usize..r.end as usize))
    }
    /// Starts writing `key` piece by piece (see [`Upload`]). The default gathers the pieces in
    /// memory.
    async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn Upload + 'a>, BlobError> {
        check_key(key)?;
        Ok(Box::new(Buffered { store: self, key: key.to_string(), data: Vec::new() }))
    }
    /// Keys under `prefix` (a key prefix ending in `/`, or empty for all), sorted.
    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError>;
    /// Like [`BlobStore::list`], each object with its size and when it was last written.
    async fn list_objects(&self, prefix: &str) -> Result<Vec<ObjectInfo>, BlobError>;
    /// The folders right under `prefix` (a key prefix ending in `/`, or empty): each name `d`
    /// such that some key starts with `prefix` + `d` + `/`, once, sorted. O(folders), not
    /// O(objects), where the store can (S3: `ListObjectsV2` with a delimiter); the default
    /// lists every key under `prefix`.
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let mut dirs: Vec<String> = self.list(prefix).await?.iter().filter_map(|k| dir_of(k, prefix)).collect();
        dirs.dedup();
        Ok(dirs)
    }
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

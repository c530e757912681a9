//! The filesystem [`BlobStore`]: one file per object under a root directory.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;

use crate::{check_key, BlobError, BlobStore};

pub struct FsStore {
    root: PathBuf,
}

fn io(e: std::io::Error) -> BlobError {
    BlobError::Backend(e.to_string())
}

impl FsStore {
    pub fn new(root: impl Into<PathBuf>) -> Result<Self, BlobError> {
        let root = root.into();
        std::fs::create_dir_all(&root).map_err(io)?;
        Ok(Self { root })
    }

    fn path(&self, key: &str) -> Result<PathBuf, BlobError> {
        check_key(key)?;
        Ok(self.root.join(key))
    }
}

fn walk(dir: &Path, rel: &str, out: &mut Vec<String>) -> std::io::Result<()> {
    let rd = match std::fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    for e in rd {
        let e = e?;
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with(".tmp-") {
            continue;
        }
        let key = if rel.is_empty() { name.clone() } else { format!("{rel}/{name}") };
        if e.file_type()?.is_dir() {
            walk(&e.path(), &key, out)?;
        } else {
            out.push(key);
        }
    }
    Ok(())
}

#[async_trait]
impl BlobStore for FsStore {
    async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
        let path = self.path(key)?;
        let dir = path.parent().expect("keys have a parent under the root").to_path_buf();
        tokio::task::spawn_blocking(move || {
            std::fs::create_dir_all(&dir)?;
            let tmp = dir.join(format!(".tmp-{}", std::process::id() as u64 * 1_000_000 + rand_suffix()));
            std::fs::write(&tmp, &data)?;
            std::fs::rename(&tmp, &path)
        })
        .await
        .map_err(|e| BlobError::Backend(e.to_string()))?
        .map_err(io)
    }

    async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
        let path = self.path(key)?;
        match tokio::fs::read(&path).await {
            Ok(b) => Ok(Bytes::from(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(BlobError::NotFound(key.to_string())),
            Err(e) => Err(io(e)),
        }
    }

    async fn exists(&self, key: &str) -> Result<bool, BlobError> {
        Ok(tokio::fs::metadata(self.path(key)?).await.map(|m| m.is_file()).unwrap_or(false))
    }

    async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        let root = self.root.clone();
        let prefix = prefix.to_string();
        let mut keys = tokio::task::spawn_blocking(move || {
            let mut out = Vec::new();
            walk(&root, "", &mut out).map(|_| out)
        })
        .await
        .map_err(|e| BlobError::Backend(e.to_string()))?
        .map_err(io)?;
        keys.retain(|k| k.starts_with(&prefix));
        keys.sort();
        Ok(keys)
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        match tokio::fs::remove_file(self.path(key)?).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io(e)),
        }
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed) % 1_000_000
}

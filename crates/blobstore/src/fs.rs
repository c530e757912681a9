//! The filesystem [`BlobStore`]: one file per object under a root directory.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use bytes::Bytes;

use crate::{check_key, check_range, BlobError, BlobStore, Upload};

#[derive(Clone)]
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

/// Whether `dir` holds a file (not a writer's temporary one) at any depth.
fn holds_a_file(dir: &Path) -> std::io::Result<bool> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if e.file_type()?.is_dir() {
            if holds_a_file(&e.path())? {
                return Ok(true);
            }
        } else if !e.file_name().to_string_lossy().starts_with(".tmp-") {
            return Ok(true);
        }
    }
    Ok(false)
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

    async fn size(&self, key: &str) -> Result<u64, BlobError> {
        match tokio::fs::metadata(self.path(key)?).await {
            Ok(m) if m.is_file() => Ok(m.len()),
            Ok(_) => Err(BlobError::NotFound(key.to_string())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(BlobError::NotFound(key.to_string())),
            Err(e) => Err(io(e)),
        }
    }

    async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
        use tokio::io::{AsyncReadExt, AsyncSeekExt};
        let path = self.path(key)?;
        let mut f = match tokio::fs::File::open(&path).await {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(BlobError::NotFound(key.to_string())),
            Err(e) => return Err(io(e)),
        };
        let size = f.metadata().await.map_err(io)?.len();
        let r = check_range(key, size, start, len)?;
        f.seek(std::io::SeekFrom::Start(r.start)).await.map_err(io)?;
        let mut buf = vec![0u8; (r.end - r.start) as usize];
        f.read_exact(&mut buf).await.map_err(io)?;
        Ok(Bytes::from(buf))
    }

    async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn Upload + 'a>, BlobError> {
        let path = self.path(key)?;
        let dir = path.parent().expect("keys have a parent under the root").to_path_buf();
        tokio::fs::create_dir_all(&dir).await.map_err(io)?;
        let tmp = dir.join(format!(".tmp-{}", std::process::id() as u64 * 1_000_000 + rand_suffix()));
        let file = tokio::fs::File::create(&tmp).await.map_err(io)?;
        Ok(Box::new(FsUpload { store: self.clone(), file: Some(file), tmp, path, size: 0 }))
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

    async fn list_objects(&self, prefix: &str) -> Result<Vec<crate::ObjectInfo>, BlobError> {
        let mut out = Vec::new();
        for key in self.list(prefix).await? {
            let meta = match tokio::fs::metadata(self.path(&key)?).await {
                Ok(m) => m,
                // Deleted since it was listed.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(io(e)),
            };
            let modified = meta.modified().map_err(io)?.duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0);
            out.push(crate::ObjectInfo { key, size: meta.len(), modified_ms: modified });
        }
        Ok(out)
    }

    /// The directories under `prefix` that hold a file (deleting files leaves directories
    /// behind; an empty one is no folder, as in S3).
    async fn list_dirs(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
        if !prefix.is_empty() && (!prefix.ends_with('/') || check_key(prefix.trim_end_matches('/')).is_err()) {
            // Not a folder's prefix: fall back on the listing.
            let mut dirs: Vec<String> = self.list(prefix).await?.iter().filter_map(|k| crate::dir_of(k, prefix)).collect();
            dirs.dedup();
            return Ok(dirs);
        }
        let dir = self.root.join(prefix.trim_end_matches('/'));
        let mut dirs = tokio::task::spawn_blocking(move || -> std::io::Result<Vec<String>> {
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
                Err(e) => return Err(e),
            };
            let mut out = Vec::new();
            for e in rd {
                let e = e?;
                let name = e.file_name().to_string_lossy().to_string();
                if e.file_type()?.is_dir() && holds_a_file(&e.path())? {
                    out.push(name);
                }
            }
            Ok(out)
        })
        .await
        .map_err(|e| BlobError::Backend(e.to_string()))?
        .map_err(io)?;
        dirs.sort();
        Ok(dirs)
    }

    async fn delete(&self, key: &str) -> Result<(), BlobError> {
        match tokio::fs::remove_file(self.path(key)?).await {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(e) => Err(io(e)),
        }
    }
}

/// A file written under a temporary name in the object's directory and renamed into place by
/// `finish`; removed if dropped unfinished.
struct FsUpload {
    /// Where [`Upload::append_copy`] reads its source.
    store: FsStore,
    file: Option<tokio::fs::File>,
    tmp: PathBuf,
    path: PathBuf,
    size: u64,
}

#[async_trait]
impl Upload for FsUpload {
    async fn write(&mut self, data: Bytes) -> Result<(), BlobError> {
        use tokio::io::AsyncWriteExt;
        self.file.as_mut().expect("open until finished").write_all(&data).await.map_err(io)?;
        self.size += data.len() as u64;
        Ok(())
    }
    async fn append_copy(&mut self, from: &str, start: u64, len: u64) -> Result<(), BlobError> {
        // The whole range is checked first, so a bad one appends nothing.
        let size = self.store.size(from).await?;
        let r = check_range(from, size, start, len)?;
        let mut at = r.start;
        while at < r.end {
            let n = crate::COPY_CHUNK.min(r.end - at);
            let chunk = self.store.get_range(from, at, n).await?;
            self.write(chunk).await?;
            at += n;
        }
        Ok(())
    }
    async fn finish(mut self: Box<Self>) -> Result<u64, BlobError> {
        use tokio::io::AsyncWriteExt;
        let mut file = self.file.take().expect("open until finished");
        file.flush().await.map_err(io)?;
        file.sync_all().await.map_err(io)?;
        drop(file);
        tokio::fs::rename(&self.tmp, &self.path).await.map_err(io)?;
        Ok(self.size)
    }
    async fn abort(self: Box<Self>) -> Result<(), BlobError> {
        Ok(())
    }
}

impl Drop for FsUpload {
    fn drop(&mut self) {
        if self.file.is_some() || self.tmp.exists() {
            let _ = std::fs::remove_file(&self.tmp);
        }
    }
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed) % 1_000_000
}

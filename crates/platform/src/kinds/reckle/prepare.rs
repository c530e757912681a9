//! An update's first step: its leaves and what it keeps of the base job.

use std::collections::{BTreeMap, BTreeSet};

use bytes::Bytes;
use reckle::stored::PieceId;
use reckle::{Change, Params};

use super::{Derived, ReckleJobSpec};
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// Object copies an update's prepare task keeps in flight.
const COPIES_AT_ONCE: usize = 32;

/// Copies `keys` (`(from, to)`) on the object store's side, [`COPIES_AT_ONCE`] at a time.
async fn copy_all(p: &Platform, keys: Vec<(String, String)>) -> Result<(), PlatformError> {
    let mut copies = tokio::task::JoinSet::new();
    for (from, to) in keys {
        if copies.len() >= COPIES_AT_ONCE {
            copies.join_next().await.expect("copies running").map_err(corrupt)??;
        }
        let blobs = p.blobs().clone();
        copies.spawn(async move { blobs.copy(&from, &to).await });
    }
    while let Some(copied) = copies.join_next().await {
        copied.map_err(corrupt)??;
    }
    Ok(())
}

/// `reckle.prepare` (update jobs): writes the update's leaves (the base job's, streamed, with
/// the changes applied), and copies the nodes it keeps and the tree pieces no change touches
/// from the base job; the tree tasks of the changed ranges follow.
pub(super) async fn prepare(p: &Platform, job: &str, spec: &ReckleJobSpec, d: &Derived) -> Result<(), PlatformError> {
    let (params, plan, todo, trees) = (d.params, &d.plan, &d.todo, &d.trees);
    if let Some(u) = &spec.update {
        write_update_leaves(p.blobs().as_ref(), job, &u.base_job, &u.changes, params).await?;
        // Nodes the update keeps: their subtrees did not change, so the base job's proofs stand.
        // Copied by the object store itself: one by one through the executor, an update of an
        // ℓ = 24 job with a batch of 4,096 (~90k kept nodes) did not plan within its deadline.
        let mut keys: Vec<(String, String)> =
            plan.difference(&todo).map(|id| (layout::reckle_node(&u.base_job, *id), layout::reckle_node(job, *id))).collect();
        let rebuilt: BTreeSet<u64> = trees.iter().map(|(first, _)| *first).collect();
        for (first, count) in super::tree_chunks(params).into_iter().filter(|(first, _)| !rebuilt.contains(first)) {
            keys.push((layout::reckle_piece_roots(&u.base_job, first), layout::reckle_piece_roots(job, first)));
            for index in first..first + count {
                let piece = PieceId { band: 0, index };
                keys.push((layout::reckle_piece(&u.base_job, piece), layout::reckle_piece(job, piece)));
            }
        }
        copy_all(p, keys).await?;
    }
    Ok(())
}

/// Bytes of leaf values an update reads, patches and writes per changed chunk (a whole part of
/// the multipart upload, so the copies between stay whole parts too).
const STREAM_BYTES: u64 = 8 << 20;
/// Most bytes of unchanged leaves one [`blobstore::Upload::append_copy`] call covers (each call
/// runs under the store's request timeout).
const COPY_BYTES: u64 = 256 << 20;

/// Writes an update's leaves: the base job's, with the `Set` changes applied (the last one of
/// an index wins). Only the [`STREAM_BYTES`] chunks holding a change are read and written by
/// this process; the ranges between are appended as copies of the base job's leaves, which the
/// S3 store makes on the server (`UploadPartCopy`). Streaming all 1 GiB of an ℓ = 27 job's
/// leaves through the executor for one change was most of that update's plan time.
async fn write_update_leaves(blobs: &dyn blobstore::BlobStore, job: &str, base_job: &str, changes: &[Change], params: Params) -> Result<(), PlatformError> {
    let sets: BTreeMap<u64, u64> = changes.iter().filter_map(|c| if let Change::Set { index, value } = *c { Some((index, value)) } else { None }).collect();
    let (from, total) = (layout::reckle_leaves(base_job), 8 * params.num_leaves());
    let mut up = blobs.upload(&layout::reckle_leaves(job)).await?;
    let mut start = 0;
    while start < total {
        // The chunk of the next change at or after `start` (chunks are aligned to STREAM_BYTES).
        let next = sets.range(start / 8..).next().map_or(total, |(&index, _)| (8 * index / STREAM_BYTES * STREAM_BYTES).min(total));
        if next > start {
            let end = next.min(start + COPY_BYTES);
            up.append_copy(&from, start, end - start).await?;
            start = end;
            continue;
        }
        let len = STREAM_BYTES.min(total - start);
        let mut chunk = blobs.get_range(&from, start, len).await?.to_vec();
        for (&index, &value) in sets.range(start / 8..(start + len) / 8) {
            let at = (8 * index - start) as usize;
            chunk[at..at + 8].copy_from_slice(&value.to_le_bytes());
        }
        up.write(Bytes::from(chunk)).await?;
        start += len;
    }
    up.finish().await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use async_trait::async_trait;
    use blobstore::BlobError;

    use super::*;

    /// A filesystem store that counts the bytes this process reads from it (`get`,
    /// `get_range`); the ranges an upload appends by [`blobstore::Upload::append_copy`] are the
    /// store's own (on S3, the server's).
    struct Counted {
        inner: blobstore::FsStore,
        read: std::sync::atomic::AtomicU64,
    }

    impl Counted {
        fn read(&self) -> u64 {
            self.read.swap(0, std::sync::atomic::Ordering::Relaxed)
        }
    }

    #[async_trait]
    impl blobstore::BlobStore for Counted {
        async fn put(&self, key: &str, data: Bytes) -> Result<(), BlobError> {
            self.inner.put(key, data).await
        }
        async fn get(&self, key: &str) -> Result<Bytes, BlobError> {
            let got = self.inner.get(key).await?;
            self.read.fetch_add(got.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(got)
        }
        async fn get_range(&self, key: &str, start: u64, len: u64) -> Result<Bytes, BlobError> {
            let got = self.inner.get_range(key, start, len).await?;
            self.read.fetch_add(got.len() as u64, std::sync::atomic::Ordering::Relaxed);
            Ok(got)
        }
        async fn size(&self, key: &str) -> Result<u64, BlobError> {
            self.inner.size(key).await
        }
        async fn upload<'a>(&'a self, key: &str) -> Result<Box<dyn blobstore::Upload + 'a>, BlobError> {
            self.inner.upload(key).await
        }
        async fn exists(&self, key: &str) -> Result<bool, BlobError> {
            self.inner.exists(key).await
        }
        async fn list(&self, prefix: &str) -> Result<Vec<String>, BlobError> {
            self.inner.list(prefix).await
        }
        async fn list_objects(&self, prefix: &str) -> Result<Vec<blobstore::ObjectInfo>, BlobError> {
            self.inner.list_objects(prefix).await
        }
        async fn delete(&self, key: &str) -> Result<(), BlobError> {
            self.inner.delete(key).await
        }
    }

    /// Issue 31 ("large updates never plan"): an update's plan wrote its leaves by streaming
    /// every byte of the base job's through the executor (1 GiB at ℓ = 27 for one change). Now
    /// it reads only the chunks holding a change and appends the rest as copies; the leaves come
    /// out the same. Seen failing before: 16 MiB read for a change in one of two chunks.
    #[tokio::test]
    async fn an_update_reads_only_the_leaf_chunks_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = Counted { inner: blobstore::FsStore::new(dir.path()).unwrap(), read: Default::default() };
        let params = Params::new(21, 3).unwrap();
        let n = params.num_leaves();
        assert_eq!(8 * n, 2 * STREAM_BYTES, "two chunks of leaves");
        let base: Vec<u64> = (0..n).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
        let bytes = |v: &[u64]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
        blobstore::BlobStore::put(&store, &layout::reckle_leaves("base"), Bytes::from(bytes(&base))).await.unwrap();
        store.read();
        let cases: [(&[Change], u64); 4] = [
            // Two sets in the second chunk (the later of one index wins) and an add: one chunk read.
            (&[Change::Set { index: n - 1, value: 5 }, Change::Set { index: n / 2 + 3, value: 6 }, Change::Add(4), Change::Set { index: n - 1, value: 7 }], STREAM_BYTES),
            // The first leaf and the last: both chunks.
            (&[Change::Set { index: 0, value: 1 }, Change::Set { index: n - 1, value: 2 }], 2 * STREAM_BYTES),
            // The last leaf of the first chunk: that chunk only.
            (&[Change::Set { index: n / 2 - 1, value: 9 }], STREAM_BYTES),
            // No leaf set (a batch change only): nothing read.
            (&[Change::Remove(4)], 0),
        ];
        for (i, (changes, read)) in cases.into_iter().enumerate() {
            let job = format!("upd{i}");
            write_update_leaves(&store, &job, "base", changes, params).await.unwrap();
            assert_eq!(store.read(), read, "case {i}: bytes of the base job's leaves read by this process");
            let mut want = base.clone();
            for c in changes {
                if let Change::Set { index, value } = *c {
                    want[index as usize] = value;
                }
            }
            let got = blobstore::BlobStore::get(&store.inner, &layout::reckle_leaves(&job)).await.unwrap();
            assert!(got == bytes(&want), "case {i}: the update's leaves differ from the base with its changes");
        }
    }
}

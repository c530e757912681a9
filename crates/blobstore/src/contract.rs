//! The contract every [`BlobStore`] must meet; `tests/contract.rs` runs it against the
//! filesystem store and a real S3-compatible server. `prefix` isolates a run (`run-<uuid>/`).

use bytes::Bytes;

use crate::{BlobError, BlobStore};

/// Put, get, overwrite, exists, list, delete, missing objects, bad keys.
pub async fn round_trip(s: &dyn BlobStore, prefix: &str) {
    let k = format!("{prefix}jobs/j1/inputs/leaves.bin");
    assert!(!s.exists(&k).await.unwrap());
    assert!(matches!(s.get(&k).await, Err(BlobError::NotFound(_))));
    s.put(&k, Bytes::from_static(b"first")).await.unwrap();
    assert_eq!(s.get(&k).await.unwrap(), Bytes::from_static(b"first"));
    s.put(&k, Bytes::from_static(b"second, longer")).await.unwrap();
    assert_eq!(s.get(&k).await.unwrap(), Bytes::from_static(b"second, longer"), "overwrite replaces");
    assert!(s.exists(&k).await.unwrap());
    s.put(&format!("{prefix}jobs/j1/out/a"), Bytes::new()).await.unwrap();
    s.put(&format!("{prefix}jobs/j2/out/b"), Bytes::from_static(b"b")).await.unwrap();
    assert_eq!(
        s.list(&format!("{prefix}jobs/j1/")).await.unwrap(),
        vec![format!("{prefix}jobs/j1/inputs/leaves.bin"), format!("{prefix}jobs/j1/out/a")]
    );
    assert_eq!(s.get(&format!("{prefix}jobs/j1/out/a")).await.unwrap().len(), 0, "empty objects");
    assert_eq!(s.delete_prefix(&format!("{prefix}jobs/j1/")).await.unwrap(), 2);
    assert!(s.list(&format!("{prefix}jobs/j1/")).await.unwrap().is_empty());
    s.delete(&format!("{prefix}jobs/j1/never")).await.unwrap();
    // Copies: the bytes, a replaced target, a missing source, bad keys.
    let (from, to) = (format!("{prefix}jobs/j2/out/b"), format!("{prefix}jobs/j3/nodes/x=1.bin"));
    s.put(&to, Bytes::from_static(b"old")).await.unwrap();
    s.copy(&from, &to).await.unwrap();
    assert_eq!(s.get(&to).await.unwrap(), Bytes::from_static(b"b"), "a copy replaces its target");
    s.copy(&to, &format!("{prefix}jobs/j3/nodes/y.bin")).await.unwrap();
    assert_eq!(s.get(&format!("{prefix}jobs/j3/nodes/y.bin")).await.unwrap(), Bytes::from_static(b"b"), "a key with '=' as the source");
    assert!(matches!(s.copy(&format!("{prefix}jobs/j1/never"), &to).await, Err(BlobError::NotFound(_))));
    assert!(matches!(s.copy(&from, "a/../b").await, Err(BlobError::InvalidKey(_))));
    assert_eq!(s.delete_prefix(&format!("{prefix}jobs/j3/")).await.unwrap(), 2);
    assert_eq!(s.list(prefix).await.unwrap(), vec![format!("{prefix}jobs/j2/out/b")]);
    for bad in ["", "/abs", "a//b", "a/../b", "a/./b", "sp ace", "a\\b"] {
        assert!(matches!(s.put(bad, Bytes::new()).await, Err(BlobError::InvalidKey(_))), "{bad:?}");
    }
    s.delete_prefix(prefix).await.unwrap();
}

/// An object larger than the multipart threshold round-trips intact.
pub async fn large_object(s: &dyn BlobStore, prefix: &str) {
    let data: Vec<u8> = (0..(20u32 << 20)).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let k = format!("{prefix}big.bin");
    s.put(&k, Bytes::from(data.clone())).await.unwrap();
    let back = s.get(&k).await.unwrap();
    assert_eq!(back.len(), data.len());
    assert!(back == data, "20 MiB object differs after the round trip");
    s.delete(&k).await.unwrap();
}

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
    // Listed with sizes and times: written between `before` and now (S3 keeps seconds).
    let before = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    s.put(&format!("{prefix}jobs/j1/out/c"), Bytes::from_static(b"abc")).await.unwrap();
    let after = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_millis() as u64;
    let objects = s.list_objects(&format!("{prefix}jobs/j1/")).await.unwrap();
    assert_eq!(objects.iter().map(|o| (o.key.clone(), o.size)).collect::<Vec<_>>(), vec![
        (format!("{prefix}jobs/j1/inputs/leaves.bin"), 14),
        (format!("{prefix}jobs/j1/out/a"), 0),
        (format!("{prefix}jobs/j1/out/c"), 3),
    ]);
    let c = &objects[2];
    assert!(c.modified_ms + 1000 >= before && c.modified_ms <= after + 1000, "written at {} ms, between {before} and {after}", c.modified_ms);
    s.delete(&format!("{prefix}jobs/j1/out/c")).await.unwrap();
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

/// A prefix of more objects than one S3 `DeleteObjects` call takes (1,000) is deleted whole,
/// and nothing beside it.
pub async fn delete_many(s: &dyn BlobStore, prefix: &str) {
    let keep = format!("{prefix}jobs/keep/x");
    s.put(&keep, Bytes::from_static(b"k")).await.unwrap();
    for i in 0..1001 {
        s.put(&format!("{prefix}jobs/many/{i:04}"), Bytes::from_static(b"m")).await.unwrap();
    }
    assert_eq!(s.list(&format!("{prefix}jobs/many/")).await.unwrap().len(), 1001);
    assert_eq!(s.delete_prefix(&format!("{prefix}jobs/many/")).await.unwrap(), 1001);
    assert!(s.list(&format!("{prefix}jobs/many/")).await.unwrap().is_empty());
    assert!(s.exists(&keep).await.unwrap());
    s.delete_prefix(prefix).await.unwrap();
}

/// The folders right under a prefix are listed once each, sorted, without the objects beside
/// them or a sibling prefix that shares their start; a folder whose last object is deleted is
/// gone; more folders than one S3 listing page (1,000) are all listed.
pub async fn folders(s: &dyn BlobStore, prefix: &str) {
    for key in ["jobs/b/x", "jobs/a/x", "jobs/a/deep/er/y", "jobs/top", "jobsx/c/d", "other/e/f"] {
        s.put(&format!("{prefix}{key}"), Bytes::from_static(b"o")).await.unwrap();
    }
    assert_eq!(s.list_dirs(&format!("{prefix}jobs/")).await.unwrap(), ["a", "b"]);
    assert_eq!(s.list_dirs(prefix).await.unwrap(), ["jobs", "jobsx", "other"]);
    assert_eq!(s.list_dirs(&format!("{prefix}jobs/a/")).await.unwrap(), ["deep"]);
    assert!(s.list_dirs(&format!("{prefix}nothing/")).await.unwrap().is_empty());
    s.delete(&format!("{prefix}jobs/b/x")).await.unwrap();
    assert_eq!(s.list_dirs(&format!("{prefix}jobs/")).await.unwrap(), ["a"]);
    for i in 0..1001 {
        s.put(&format!("{prefix}many/{i:04}/o"), Bytes::from_static(b"m")).await.unwrap();
    }
    let many = s.list_dirs(&format!("{prefix}many/")).await.unwrap();
    assert_eq!(many.len(), 1001);
    assert_eq!((many[0].as_str(), many[1000].as_str()), ("0000", "1000"));
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

/// Sizes, ranged reads (inside, at the end, past the end, missing objects) and uploads written
/// piece by piece: invisible until finished, nothing left by an abort or a drop, and a large
/// one (over the multipart threshold, in odd-sized pieces) intact.
pub async fn pieces(s: &dyn BlobStore, prefix: &str) {
    let k = format!("{prefix}jobs/j1/inputs/leaves.bin");
    let data: Vec<u8> = (0..(19u32 << 20) + 12345).map(|i| (i.wrapping_mul(2654435761) >> 11) as u8).collect();
    assert!(matches!(s.size(&k).await, Err(BlobError::NotFound(_))));
    assert!(matches!(s.get_range(&k, 0, 1).await, Err(BlobError::NotFound(_))));
    let mut up = s.upload(&k).await.unwrap();
    let mut at = 0;
    for step in [1usize, 7 << 20, 3, 9 << 20, 5000].iter().cycle() {
        let end = (at + step).min(data.len());
        up.write(Bytes::copy_from_slice(&data[at..end])).await.unwrap();
        at = end;
        if at == data.len() {
            break;
        }
    }
    assert!(!s.exists(&k).await.unwrap(), "an unfinished upload is not visible");
    assert_eq!(up.finish().await.unwrap(), data.len() as u64);
    assert_eq!(s.size(&k).await.unwrap(), data.len() as u64);
    assert!(s.get(&k).await.unwrap() == data, "a piecewise upload round-trips");
    let n = data.len() as u64;
    for (start, len) in [(0u64, 10u64), (12345, 8 << 20), (n - 3, 3), (n, 0), (5, 0)] {
        let got = s.get_range(&k, start, len).await.unwrap();
        assert!(got == data[start as usize..(start + len) as usize], "range {start}+{len}");
    }
    for (start, len) in [(n - 3, 4u64), (n, 1), (n + 10, 5), (u64::MAX, 2)] {
        assert!(matches!(s.get_range(&k, start, len).await, Err(BlobError::OutOfRange { .. })), "range {start}+{len}");
    }
    // An upload over an existing object: the old one stays until the new one is finished.
    let mut up = s.upload(&k).await.unwrap();
    up.write(Bytes::from_static(b"new")).await.unwrap();
    assert_eq!(s.size(&k).await.unwrap(), n, "the old object stays while the new one is written");
    assert_eq!(up.finish().await.unwrap(), 3);
    assert_eq!(s.get(&k).await.unwrap(), Bytes::from_static(b"new"));
    // Aborted and dropped uploads, small and multipart, leave nothing.
    let (a, d) = (format!("{prefix}jobs/j2/aborted"), format!("{prefix}jobs/j2/dropped"));
    for big in [false, true] {
        let piece = Bytes::from(vec![7u8; if big { 9 << 20 } else { 10 }]);
        let mut up = s.upload(&a).await.unwrap();
        up.write(piece.clone()).await.unwrap();
        up.abort().await.unwrap();
        let mut up = s.upload(&d).await.unwrap();
        up.write(piece).await.unwrap();
        drop(up);
    }
    assert!(s.list(&format!("{prefix}jobs/j2/")).await.unwrap().is_empty(), "aborted or dropped uploads leave no object");
    assert!(matches!(s.upload("a/../b").await, Err(BlobError::InvalidKey(_))));
    let empty = format!("{prefix}jobs/j3/empty");
    assert_eq!(s.upload(&empty).await.unwrap().finish().await.unwrap(), 0);
    assert_eq!(s.size(&empty).await.unwrap(), 0);
    s.delete_prefix(prefix).await.unwrap();
}

/// Uploads that append ranges of other objects ([`crate::Upload::append_copy`]) among written
/// pieces, in every order S3's part rules make hard: a copy after a short write, copies longer
/// and shorter than the least copied part, a copy of a whole object, a copy last, and the same
/// source twice; the result is byte for byte the concatenation. A range not in the source or a
/// missing source is refused, and the object stays unwritten.
pub async fn append_copies(s: &dyn BlobStore, prefix: &str) {
    let (a, b) = (format!("{prefix}jobs/base/a.bin"), format!("{prefix}jobs/base/b=1.bin"));
    let da: Vec<u8> = (0..(23u32 << 20) + 777).map(|i| (i.wrapping_mul(2654435761) >> 9) as u8).collect();
    let db: Vec<u8> = (0..(6u32 << 20) + 3).map(|i| (i.wrapping_mul(40503) >> 3) as u8).collect();
    s.put(&a, Bytes::from(da.clone())).await.unwrap();
    s.put(&b, Bytes::from(db.clone())).await.unwrap();
    enum Step<'a> {
        Write(usize),
        Copy(&'a str, &'a [u8], u64, u64),
    }
    let m = 1u64 << 20;
    let plans: Vec<Vec<Step>> = vec![
        // Whole-part copies between part-sized writes, as an update's leaves are written.
        vec![Step::Copy(&a, &da, 0, 8 * m), Step::Write(8 << 20), Step::Copy(&a, &da, 16 * m, da.len() as u64 - 16 * m)],
        // A short write first (held back), then a long copy, a short copy, a write, a copy last.
        vec![Step::Write(100), Step::Copy(&a, &da, 3, 17 * m + 5), Step::Copy(&b, &db, 10, 1000), Step::Write(3 << 20), Step::Copy(&b, &db, 0, db.len() as u64)],
        // Copies only: a short one, then the whole of `a` (one server-side part), `b` last.
        vec![Step::Copy(&b, &db, 1, 4096), Step::Copy(&a, &da, 0, da.len() as u64), Step::Copy(&b, &db, 0, db.len() as u64)],
        // One copy, shorter than any part.
        vec![Step::Copy(&a, &da, 5 * m, 12)],
    ];
    for (i, plan) in plans.iter().enumerate() {
        let k = format!("{prefix}jobs/new/{i}.bin");
        let (mut up, mut want) = (s.upload(&k).await.unwrap(), Vec::new());
        for step in plan {
            match step {
                Step::Write(n) => {
                    let piece: Vec<u8> = (0..*n).map(|j| (j as u8) ^ (i as u8 + 0x5a)).collect();
                    want.extend_from_slice(&piece);
                    up.write(Bytes::from(piece)).await.unwrap();
                }
                Step::Copy(from, data, start, len) => {
                    want.extend_from_slice(&data[*start as usize..(*start + *len) as usize]);
                    up.append_copy(from, *start, *len).await.unwrap();
                }
            }
        }
        assert!(!s.exists(&k).await.unwrap(), "plan {i}: an unfinished upload is not visible");
        assert_eq!(up.finish().await.unwrap(), want.len() as u64, "plan {i}: size");
        let got = s.get(&k).await.unwrap();
        assert_eq!(got.len(), want.len(), "plan {i}: stored size");
        assert!(got == want, "plan {i}: the copies and writes differ from their concatenation");
    }
    // Refused ranges and sources append nothing, and the object is never written.
    let k = format!("{prefix}jobs/new/refused.bin");
    let mut up = s.upload(&k).await.unwrap();
    let n = da.len() as u64;
    assert!(matches!(up.append_copy(&a, n - 3, 4).await, Err(BlobError::OutOfRange { .. })));
    assert!(matches!(up.append_copy(&a, u64::MAX, 2).await, Err(BlobError::OutOfRange { .. })));
    assert!(matches!(up.append_copy(&format!("{prefix}jobs/base/missing"), 0, 1).await, Err(BlobError::NotFound(_))));
    assert!(matches!(up.append_copy("a/../b", 0, 1).await, Err(BlobError::InvalidKey(_))));
    up.abort().await.unwrap();
    assert!(!s.exists(&k).await.unwrap());
    s.delete_prefix(prefix).await.unwrap();
}

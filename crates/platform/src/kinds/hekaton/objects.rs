//! A Hekaton job's objects and stored keys as the steps read and write them: CPU-heavy decoding
//! and proving off the async runtime ([`blocking`]), keys decoded once per process and kept in
//! the byte-bounded cache ([`cached_key`]), and the per-task seeds drawn from the job's secret.

use std::sync::Arc;

use bytes::Bytes;
use hekaton::mirage;

use super::SECRET;
use crate::error::corrupt;
use crate::{Platform, PlatformError};

/// A proof-system error as the platform reports it (an interrupted task is abandoned).
pub(super) fn hek(e: hekaton::Error) -> PlatformError {
    match e {
        hekaton::Error::Interrupted => PlatformError::Abandoned,
        e => corrupt(format!("hekaton: {e}")),
    }
}

/// A seed for `purpose` (and index) from the job's secret: BLAKE2b-256 with a domain tag.
pub(super) fn derive_seed(secret: &[u8], purpose: &str, index: u64) -> Result<[u8; 32], PlatformError> {
    use blake2::digest::{Update, VariableOutput};
    if secret.len() != 32 {
        return Err(corrupt(format!("{SECRET}: {} bytes, expected 32", secret.len())));
    }
    let mut h = blake2::Blake2bVar::new(32).map_err(corrupt)?;
    h.update(b"prover/hekaton/v1/");
    h.update(purpose.as_bytes());
    h.update(&index.to_le_bytes());
    h.update(secret);
    let mut seed = [0u8; 32];
    h.finalize_variable(&mut seed).map_err(corrupt)?;
    Ok(seed)
}

/// Runs CPU-heavy work off the async runtime, timed as `prover_hekaton_cpu_seconds{step}`
/// (what the proof system itself costs; the rest of a task's time is the platform's). Work
/// whose task was abandoned before it got a thread does not start; [`blocking_with`] hands
/// the closure its task's flag, for work that can stop part-way.
pub(super) async fn blocking<T: Send + 'static>(
    step: &'static str,
    f: impl FnOnce() -> Result<T, hekaton::Error> + Send + 'static,
) -> Result<T, PlatformError> {
    blocking_with(step, move |_| f()).await
}

/// [`blocking`], the closure reading its task's [`crate::work::Cancel`] flag itself.
pub(super) async fn blocking_with<T: Send + 'static>(
    step: &'static str,
    f: impl FnOnce(&crate::work::Cancel) -> Result<T, hekaton::Error> + Send + 'static,
) -> Result<T, PlatformError> {
    let started = std::time::Instant::now();
    let r = crate::work::blocking(move |cancel| if cancel.is_set() { Err(hekaton::Error::Interrupted) } else { f(cancel) }).await?.map_err(hek);
    ::metrics::histogram!("prover_hekaton_cpu_seconds", "step" => step).record(started.elapsed().as_secs_f64());
    r
}

/// Fetches and decodes an object; decoding checks every curve point, so it runs off the
/// async runtime (a 2^17-constraint proving key takes seconds).
pub(super) async fn get<T>(p: &Platform, key: &str) -> Result<T, PlatformError>
where
    T: ark_serialize::CanonicalDeserialize + hekaton::Check + Send + 'static,
{
    decode(key, p.blobs().get(key).await?).await
}

/// Decodes the bytes of object `key` (see [`get`]).
pub(super) async fn decode<T>(key: &str, bytes: Bytes) -> Result<T, PlatformError>
where
    T: ark_serialize::CanonicalDeserialize + hekaton::Check + Send + 'static,
{
    let name = key.to_string();
    blocking("decode", move || {
        mirage::from_bytes(&bytes).map_err(|e| hekaton::Error::Malformed { what: "stored object", reason: format!("{name}: {e}") })
    })
    .await
}

/// Encodes and stores an object.
pub(super) async fn put<T: ark_serialize::CanonicalSerialize>(p: &Platform, key: &str, value: &T) -> Result<(), PlatformError> {
    Ok(p.blobs().put(key, Bytes::from(mirage::to_bytes(value).map_err(hek)?)).await?)
}

/// Estimated heap of a key decoded from `stored` compressed bytes: affine points take about
/// twice their compressed size once decoded.
fn decoded_bytes(stored: usize) -> u64 {
    2 * stored as u64
}

/// The stored key object `key`, from the process's cache or read, decoded and accepted by
/// `check` (which ties it to a pinned digest) before it is cached.
pub(super) async fn cached_key<T>(p: &Platform, key: &str, check: impl FnOnce(&T) -> Result<(), PlatformError>) -> Result<Arc<T>, PlatformError>
where
    T: ark_serialize::CanonicalDeserialize + hekaton::Check + Send + Sync + 'static,
{
    let name = format!("hekaton/{key}");
    if let Some(k) = p.cache().get::<T>(&name) {
        return Ok(k);
    }
    let bytes = p.blobs().get(key).await?;
    let size = decoded_bytes(bytes.len());
    let k: T = decode(key, bytes).await?;
    check(&k)?;
    let k = Arc::new(k);
    p.cache().put(&name, k.clone(), size);
    Ok(k)
}


#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_depend_on_purpose_index_and_secret() {
        let s = derive_seed(&[1; 32], "commit", 0).unwrap();
        assert_eq!(s, derive_seed(&[1; 32], "commit", 0).unwrap());
        assert_ne!(s, derive_seed(&[1; 32], "commit", 1).unwrap());
        assert_ne!(s, derive_seed(&[1; 32], "setup", 0).unwrap());
        assert_ne!(s, derive_seed(&[2; 32], "commit", 0).unwrap());
        assert!(derive_seed(&[1; 31], "commit", 0).is_err());
    }
}

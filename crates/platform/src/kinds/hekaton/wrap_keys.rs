//! The wrap keys of a Hekaton key: made by a job's setup task, found and loaded by the wrap
//! task and the aggregator (where they live, and why a setup never trusts a pointer: the
//! module doc of [`super::wrap`]).

use std::sync::Arc;

use ark_bls12_381::Config;
use ark_bw6_767::BW6_767;
use bytes::Bytes;
use hekaton::workflow::{VerifyingKey, VkDigest};
use hekaton::wrap::FinalKey;

use super::objects::blocking;
use super::HekatonJobSpec;
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// The published final key ([`FinalKey::to_bytes`]; its digest is the manifest's
/// `final_key_digest`).
pub const FINAL_KEY_FILE: &str = "final-key.bin";
/// The layout version of stored wrap keys. Version 3: made from the operating system's
/// randomness, found without a pointer (versions up to 2 lived under `wrap/<digest>/` with a
/// `wrap-current` pointer and were made from a job's stored secret: never read again).
pub const WRAP_KEYS_VERSION: u32 = 3;

/// Object `name` of the wrap key with final key digest `fd`, of the Hekaton key `vd` of spec
/// `sd`; `fd` empty: the directory of that Hekaton key's wrap keys.
pub fn wrap_key_file(sd: &str, vd: &str, fd: &str, name: &str) -> String {
    let rel = if fd.is_empty() { format!("wrap/v{WRAP_KEYS_VERSION}/") } else { format!("wrap/v{WRAP_KEYS_VERSION}/{fd}/{name}") };
    layout::hekaton_key(sd, vd, &rel)
}

/// The final key with digest `fd`, read from the store: its digest checked, and it must name
/// the Hekaton key `vd`.
pub(super) async fn final_key(p: &Platform, sd: &str, vd: &VkDigest, fd: &str) -> Result<(Arc<FinalKey<BW6_767>>, Bytes), PlatformError> {
    let file = wrap_key_file(sd, &vd.to_string(), fd, FINAL_KEY_FILE);
    let bytes = p.blobs().get(&file).await?;
    let (b, fd2, vd2) = (bytes.clone(), fd.to_string(), *vd);
    let key = blocking("decode", move || {
        let key = FinalKey::<BW6_767>::from_bytes(&b)?;
        let expected: VkDigest = fd2.parse()?;
        key.check_digest(&expected)?;
        if key.hekaton_vk_digest != vd2 {
            return Err(hekaton::Error::Malformed { what: "final key", reason: format!("made for Hekaton key {}, not {vd2}", key.hekaton_vk_digest) });
        }
        Ok(key)
    })
    .await
    .map_err(|e| corrupt(format!("{file}: {e}")))?;
    Ok((Arc::new(key), bytes))
}

/// The complete wrap key of the Hekaton key `vd` with the smallest digest, if any: a directory
/// counts only with its `final-key.bin` (written last), and only if that key checks.
async fn existing(p: &Platform, sd: &str, vd: &VkDigest) -> Result<Option<String>, PlatformError> {
    let dir = wrap_key_file(sd, &vd.to_string(), "", "");
    let mut digests: Vec<String> = p
        .blobs()
        .list(&dir)
        .await?
        .into_iter()
        .filter_map(|k| k.strip_prefix(&dir)?.strip_suffix(&format!("/{FINAL_KEY_FILE}")).map(str::to_string))
        .collect();
    digests.sort();
    for fd in digests {
        match final_key(p, sd, vd, &fd).await {
            Ok(_) => return Ok(Some(fd)),
            Err(e) => tracing::warn!(vk = %vd, final_key = %fd, error = %e, "a stored wrap key does not check; not used"),
        }
    }
    Ok(None)
}

/// The wrap keys of the Hekaton key `vd` (see the module doc): the stored complete key with the
/// smallest digest, else new keys from the operating system's randomness. Returns the final
/// key's digest.
pub(super) async fn wrap_setup(p: &Platform, job: &str, spec: &HekatonJobSpec, vd: &VkDigest, vk: &Arc<VerifyingKey<ark_bls12_381::Bls12_381>>) -> Result<String, PlatformError> {
    let sd = spec.circuit.digest();
    if let Some(fd) = existing(p, &sd, vd).await? {
        tracing::info!(job, vk = %vd, final_key = %fd, "reusing the wrap keys of this Hekaton key");
        return Ok(fd);
    }
    let vk = vk.clone();
    let started = std::time::Instant::now();
    let (pk_bytes, key) = blocking("wrap setup", move || {
        let (pk, key) = hekaton::wrap::setup::<Config, BW6_767, _>(&vk, &mut rand::rngs::OsRng)?;
        Ok((pk.to_bytes_uncompressed(), key))
    })
    .await?;
    let fd = key.digest().to_string();
    let d = vd.to_string();
    p.blobs().put(&wrap_key_file(&sd, &d, &fd, "pk.digest"), Bytes::from(pari::KeyDigest::of_bytes(&pk_bytes).to_string())).await?;
    p.blobs().put(&wrap_key_file(&sd, &d, &fd, "pk.bin"), Bytes::from(pk_bytes)).await?;
    // Last: its presence means the key is complete.
    p.blobs().put(&wrap_key_file(&sd, &d, &fd, FINAL_KEY_FILE), Bytes::from(key.to_bytes())).await?;
    tracing::info!(job, vk = %d, final_key = %fd, took = ?started.elapsed(), "made the wrap keys of this Hekaton key");
    Ok(fd)
}

pub(super) type WrapKeys = (Arc<pari::ProvingKey<BW6_767>>, Arc<FinalKey<BW6_767>>);

/// The wrap proving key and final key with digest `fd`, kept in the process's cache.
pub(super) async fn wrap_keys(p: &Platform, sd: &str, vd: &VkDigest, fd: &str) -> Result<WrapKeys, PlatformError> {
    let name = format!("hekaton/wrap/v{WRAP_KEYS_VERSION}/{fd}");
    if let Some(k) = p.cache().get::<WrapKeys>(&name) {
        return Ok(k.as_ref().clone());
    }
    let (key, _) = final_key(p, sd, vd, fd).await?;
    let d = vd.to_string();
    let pk_digest = p.blobs().get(&wrap_key_file(sd, &d, fd, "pk.digest")).await?;
    let pk_bytes = p.blobs().get(&wrap_key_file(sd, &d, fd, "pk.bin")).await?;
    let file = wrap_key_file(sd, &d, fd, "pk.bin");
    let k2 = key.clone();
    let pk = blocking("wrap keys", move || {
        let bad = |reason: String| hekaton::Error::Malformed { what: "wrap proving key", reason };
        let pkd: pari::KeyDigest = String::from_utf8_lossy(&pk_digest).trim().parse().map_err(|e: pari::Error| bad(e.to_string()))?;
        let pk = pari::ProvingKey::<BW6_767>::from_bytes_with_digest(&pk_bytes, &pkd).map_err(|e| bad(e.to_string()))?;
        if pk.vk != k2.wrap_vk {
            return Err(bad("not the proving key of the final key".into()));
        }
        Ok(pk)
    })
    .await
    .map_err(|e| corrupt(format!("{file}: {e}")))?;
    // What the decoded key holds (a third of its uncompressed encoding for the wrap).
    let size = pk.heap_size();
    let keys = (Arc::new(pk), key);
    p.cache().put(&name, Arc::new(keys.clone()), size);
    Ok(keys)
}

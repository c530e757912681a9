//! Which keys a Hekaton job proves under, and where they are: the Mirage keys of its circuit
//! structure, the aggregation keys of that key, the wrap keys ([`super::wrap`]). The setup
//! chooses them ([`choose`]) and records their digests ([`Keys`]); the digests then travel in
//! every task's payload, and each key is read back checked against its digest.

use std::sync::Arc;

use ark_bls12_381::{Bls12_381, Fr};
use bytes::Bytes;
use hekaton::aggregate::srs::Srs;
use hekaton::aggregate::AggProvingKey;
use hekaton::aggregated;
use hekaton::mirage;
use hekaton::workflow::{self, VerifyingKey, VkDigest};

use super::objects::{blocking, cached_key, hek, put};
use super::{wrap_keys, HekatonJobSpec};
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// The digests of the keys a job uses, from its setup's report on (every task's payload, and
/// its setup's record): the job's Hekaton key, for a job that aggregates its aggregate
/// verifying key, for a `--final` job its final key.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Keys {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub vk: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub agg: String,
    /// The final key's digest ([`super::wrap`]); empty: the job asked for no final proof.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub wrap: String,
}

impl Keys {
    /// The keys a task's payload names (none in the setup's: it chooses them).
    pub(super) fn of(payload: &str) -> Result<Keys, PlatformError> {
        if payload.is_empty() {
            return Ok(Keys::default());
        }
        serde_json::from_str(payload).map_err(|e| corrupt(format!("task payload: {e}")))
    }

    /// As a task's payload.
    pub(super) fn payload(&self) -> Result<String, PlatformError> {
        serde_json::to_string(self).map_err(corrupt)
    }

    /// The Hekaton key's digest.
    pub(super) fn digest(&self) -> Result<VkDigest, PlatformError> {
        self.vk.parse().map_err(|e| corrupt(format!("task payload: vk: {e}")))
    }

    /// The aggregate verifying key's digest; `None`: the job publishes the `k` proofs.
    pub(super) fn agg_digest(&self) -> Result<Option<VkDigest>, PlatformError> {
        if self.agg.is_empty() {
            return Ok(None);
        }
        self.agg.parse().map(Some).map_err(|e| corrupt(format!("task payload: agg: {e}")))
    }
}

/// Where a job's setup records the digests of the keys it chose (`{vk, agg, wrap}`, JSON): a
/// redelivered setup reuses them (its keys come from the OS, so making them again would give
/// other keys), and the aggregator checks its payload against them.
fn keys_record(job: &str) -> String {
    format!("{}keys.json", layout::hekaton_prefix(job))
}

/// The verifying key with digest `vk` for `spec`, checked against that digest.
pub(super) async fn verifying_key(p: &Platform, spec: &HekatonJobSpec, vk: &VkDigest) -> Result<Arc<VerifyingKey<Bls12_381>>, PlatformError> {
    let key = layout::hekaton_key(&spec.circuit.digest(), &vk.to_string(), "vk.bin");
    cached_key(p, &key, |v: &VerifyingKey<Bls12_381>| v.check_digest(vk).map_err(hek)).await
}

/// Subcircuit `i`'s shape's Mirage proving key, checked to be the one `vk` names for it.
pub(super) async fn shape_key(
    p: &Platform,
    spec: &HekatonJobSpec,
    digest: &VkDigest,
    vk: &VerifyingKey<Bls12_381>,
    i: u64,
) -> Result<Arc<mirage::ProvingKey<Bls12_381>>, PlatformError> {
    let shape = *vk.shape_of.get(i as usize).ok_or_else(|| corrupt(format!("subcircuit {i} out of range")))?;
    let key = layout::hekaton_key(&spec.circuit.digest(), &digest.to_string(), &format!("pk-{shape}.bin"));
    cached_key(p, &key, |k: &mirage::ProvingKey<Bls12_381>| {
        if vk.vks.get(shape as usize) == Some(&k.vk) {
            Ok(())
        } else {
            Err(corrupt(format!("{key}: not the shape key the verifying key {digest} names")))
        }
    })
    .await
}

/// Object `name` of the aggregation keys with digest `agg` of the Hekaton key `vk`.
pub(super) fn agg_file(spec: &HekatonJobSpec, vk: &VkDigest, agg: &str, name: &str) -> String {
    layout::hekaton_key(&spec.circuit.digest(), &vk.to_string(), &format!("agg/{agg}/{name}"))
}

/// The aggregation keys of the Hekaton key `digest` (paper §5, Agg.G): made once per Hekaton
/// key, by the first aggregating job of its structure, from the operating system's randomness
/// (nothing stored can rebuild them), stored content addressed under the
/// Hekaton key's directory (`agg/<aggregate vk digest>/`, `vk.bin` after `pk.bin`, so its
/// presence means both are there) with an `agg-current` pointer that later jobs reuse. The SRS
/// is sized to the key's `k` (rounded up to a power of two); whoever knows its secrets `a, b`
/// can break the binding of the commitments, so they are part of the trusted setup. Returns the
/// aggregate verifying key's digest.
async fn agg_setup(
    p: &Platform,
    job: &str,
    spec: &HekatonJobSpec,
    digest: &VkDigest,
    vk: &Arc<VerifyingKey<Bls12_381>>,
) -> Result<String, PlatformError> {
    let current = layout::hekaton_key(&spec.circuit.digest(), &digest.to_string(), "agg-current");
    match p.blobs().get(&current).await {
        Ok(b) => {
            let ad = String::from_utf8_lossy(&b).trim().to_string();
            if ad.parse::<VkDigest>().is_ok() && p.blobs().exists(&agg_file(spec, digest, &ad, "vk.bin")).await? {
                tracing::info!(job, vk = %digest, agg = %ad, "reusing the aggregation keys of this Hekaton key");
                return Ok(ad);
            }
        }
        Err(blobstore::BlobError::NotFound(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let vk = vk.clone();
    let (pk_bytes, vk_bytes, ad) = blocking("aggregate setup", move || {
        let srs = Srs::<Bls12_381>::setup(vk.num_subcircuits(), &mut rand::rngs::OsRng);
        let (apk, avk) = aggregated::setup(&vk, &srs)?;
        Ok((mirage::to_bytes(&apk)?, mirage::to_bytes(&avk)?, VkDigest(avk.digest()?).to_string()))
    })
    .await?;
    p.blobs().put(&agg_file(spec, digest, &ad, "pk.bin"), Bytes::from(pk_bytes)).await?;
    p.blobs().put(&agg_file(spec, digest, &ad, "vk.bin"), Bytes::from(vk_bytes)).await?;
    p.blobs().put(&current, Bytes::from(ad.clone())).await?;
    tracing::info!(job, vk = %digest, agg = %ad, "made the aggregation keys of this Hekaton key");
    Ok(ad)
}

/// The aggregate proving key with verifying key digest `agg` (of the Hekaton key `digest`),
/// checked against that digest and kept in the cache.
pub(super) async fn agg_proving_key(p: &Platform, spec: &HekatonJobSpec, digest: &VkDigest, agg: &VkDigest) -> Result<Arc<AggProvingKey<Bls12_381>>, PlatformError> {
    let key = agg_file(spec, digest, &agg.to_string(), "pk.bin");
    cached_key(p, &key, |k: &AggProvingKey<Bls12_381>| k.vk.check_digest(agg).map_err(|e| corrupt(format!("{key}: {e}")))).await
}


/// The keys of the job: those its setup recorded ([`keys_record`]) if a run of it got that
/// far, else chosen now and recorded: the keys of the spec's structure (reused through the
/// `current` pointer, or made), unless the job is wrapped the aggregation keys of that key,
/// and for a `--final` job the wrap keys of that key ([`wrap_keys::wrap_setup`]). Every
/// key made here is made from the operating system's randomness (`OsRng`), never from
/// anything stored: a redelivered setup that got no further than making keys makes other
/// ones (content addressed, so harmless), and the record makes the rest of the job use one.
pub(super) async fn choose(p: &Platform, job: &str, spec: &HekatonJobSpec) -> Result<Keys, PlatformError> {
    let sd = spec.circuit.digest();
    match p.blobs().get(&keys_record(job)).await {
        Ok(b) => {
            let keys: Keys = serde_json::from_slice(&b).map_err(|e| corrupt(format!("{}: {e}", keys_record(job))))?;
            tracing::info!(job, vk = %keys.vk, "reusing the keys this job's setup recorded");
            return Ok(keys);
        }
        Err(blobstore::BlobError::NotFound(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let current = layout::hekaton_current_key(&sd);
    let reusable = match p.blobs().get(&current).await {
        Ok(d) => {
            let d = String::from_utf8_lossy(&d).trim().to_string();
            let ok = d.parse::<VkDigest>().is_ok() && p.blobs().exists(&layout::hekaton_key(&sd, &d, "vk.bin")).await?;
            ok.then_some(d)
        }
        Err(blobstore::BlobError::NotFound(_)) => None,
        Err(e) => return Err(e.into()),
    };
    let digest = match reusable {
        Some(d) => {
            tracing::info!(job, spec = %sd, vk = %d, "reusing the keys of this circuit structure");
            d
        }
        None => {
            let circuit = spec.circuit;
            let (pk, vk) = blocking("setup", move || {
                let c = circuit.build::<Fr>(0)?;
                workflow::setup::<Bls12_381, _, _>(&c, &mut rand::rngs::OsRng)
            })
            .await?;
            let d = vk.digest().map_err(hek)?.to_string();
            // Content addressed: a concurrent setup of another job writes another directory.
            // vk.bin last: its presence means every shape key is there.
            for (j, shape_pk) in pk.pks.iter().enumerate() {
                put(p, &layout::hekaton_key(&sd, &d, &format!("pk-{j}.bin")), shape_pk).await?;
            }
            put(p, &layout::hekaton_key(&sd, &d, "vk.bin"), &vk).await?;
            p.blobs().put(&current, Bytes::from(d.clone())).await?;
            tracing::info!(job, spec = %sd, vk = %d, "made the keys of this circuit structure");
            d
        }
    };
    let vk_digest: VkDigest = digest.parse().map_err(hek)?;
    let vk = verifying_key(p, spec, &vk_digest).await?;
    // A wrapped job publishes the k proofs (the wrap circuit verifies that form).
    let agg = if spec.final_proof { String::new() } else { agg_setup(p, job, spec, &vk_digest, &vk).await? };
    let wrap = if spec.final_proof { wrap_keys::wrap_setup(p, job, spec, &vk_digest, &vk).await? } else { String::new() };
    let keys = Keys { vk: digest, agg, wrap };
    p.blobs().put(&keys_record(job), Bytes::from(serde_json::to_vec(&keys).map_err(corrupt)?)).await?;
    Ok(keys)
}

/// The keys `job`'s setup recorded.
pub(super) async fn recorded(p: &Platform, job: &str) -> Result<Keys, PlatformError> {
    let b = p.blobs().get(&keys_record(job)).await?;
    serde_json::from_slice(&b).map_err(|e| corrupt(format!("{}: {e}", keys_record(job))))
}

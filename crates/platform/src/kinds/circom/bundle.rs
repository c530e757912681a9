//! Cross-job bundles (`GetBundle`): the published proofs of several done `pari.circom` jobs of
//! one circuit, all under one key, as one bundle that verifies in one batch.

use ark_ec::pairing::Pairing;
use bytes::Bytes;
use ::pari::{KeyDigest, VerifyingKey};

use super::prove::PariCircom;
use super::{check_circuit_id, Curve, JOB};
use crate::error::{corrupt, invalid};
use crate::kinds::contract;
use crate::kinds::pari::pari_err;
use crate::{layout, Platform, PlatformError};

pub const MAX_BUNDLE_JOBS: usize = 64;
/// Most proofs in one cross-job bundle.
pub const MAX_BUNDLE_PROOFS: usize = 1 << 16;

/// A bundle of proofs from several jobs under one key ([`Platform::circuit_bundle`]).
pub struct CircuitBundle {
    pub curve: Curve,
    pub vk_digest: String,
    pub vk: Bytes,
    /// `bundle-*.bin` format.
    pub bundle: Vec<u8>,
    /// Per entry: its job and witness index.
    pub sources: Vec<(String, u64)>,
}

impl Platform {
    /// One bundle of the published proofs of `jobs` (done `pari.circom` jobs of `tenant`'s
    /// circuit `circuit_id`, all under one key), in the order given. The proofs are copied, not
    /// verified again: the consumer verifies the bundle, pinned to its key's digest.
    pub async fn circuit_bundle(&self, tenant: &str, circuit_id: &str, jobs: &[String]) -> Result<CircuitBundle, PlatformError> {
        check_circuit_id(circuit_id)?;
        if jobs.is_empty() || jobs.len() > MAX_BUNDLE_JOBS {
            return Err(invalid("job_ids", format!("give 1 to {MAX_BUNDLE_JOBS} jobs, got {}", jobs.len())));
        }
        let mut key: Option<(Curve, String)> = None;
        let mut parts = Vec::with_capacity(jobs.len());
        for job in jobs {
            let rec = match self.job_store().get(job).await? {
                Some(r) if r.tenant == tenant => r,
                // Another tenant's job reads as unknown.
                _ => return Err(PlatformError::NotFound(job.clone())),
            };
            if rec.kind != JOB {
                return Err(invalid("job_ids", format!("job {job} is a {} job, not {JOB}", rec.kind)));
            }
            if rec.state != jobs::JobState::Done {
                return Err(PlatformError::Precondition(format!("job {job} is {}, not done", rec.state.as_str())));
            }
            let spec = contract::spec_of::<PariCircom>(&rec)?;
            if spec.circuit_id != circuit_id {
                return Err(invalid("job_ids", format!("job {job} proves circuit {}, not {circuit_id}", spec.circuit_id)));
            }
            let k = spec.key()?;
            match &key {
                None => key = Some((k.curve, k.vk_digest.clone())),
                Some((_, d)) if *d != k.vk_digest => {
                    return Err(invalid("job_ids", format!("job {job} is under vk digest {}, the first job under {d}", k.vk_digest)));
                }
                Some(_) => {}
            }
            parts.push((rec.id, spec));
        }
        let (curve, vk_digest) = key.expect("at least one job");
        let vk = self.blobs().get(&layout::proof_file(&parts[0].0, "vk.bin")).await?;
        if KeyDigest::of_bytes(&vk).to_string() != vk_digest {
            return Err(corrupt(format!("job {}: the published vk.bin does not have the job's vk digest", parts[0].0)));
        }
        let total: u64 = parts.iter().map(|(_, s)| s.n()).sum();
        if total > MAX_BUNDLE_PROOFS as u64 {
            return Err(invalid("job_ids", format!("{total} proofs in all, at most {MAX_BUNDLE_PROOFS}")));
        }
        let mut files = Vec::with_capacity(parts.len());
        for (job, spec) in &parts {
            let mut bundles = Vec::new();
            for k in 0..spec.bundles() {
                bundles.push(self.blobs().get(&layout::proof_file(job, &layout::pari_bundle_name(k))).await?);
            }
            files.push((job.clone(), bundles));
        }
        let vk2 = vk.clone();
        let (bundle, sources) = crate::work::blocking(move |_| on_curve!(curve, E => merge::<E>(&vk2, &files))).await??;
        Ok(CircuitBundle { curve, vk_digest, vk, bundle, sources })
    }
}

/// The entries of every job's bundles, in order, as one bundle under `vk`.
#[allow(clippy::type_complexity)]
fn merge<E: Pairing>(vk: &[u8], files: &[(String, Vec<Bytes>)]) -> Result<(Vec<u8>, Vec<(String, u64)>), PlatformError> {
    let vk = VerifyingKey::<E>::from_bytes(vk).map_err(pari_err)?;
    let (mut items, mut sources) = (Vec::new(), Vec::new());
    for (job, bundles) in files {
        let mut witness = 0u64;
        for b in bundles {
            let b = ::pari::bundle::Bundle::<E>::from_bytes(b).map_err(|e| corrupt(format!("job {job}: {e}")))?;
            for item in b.items {
                items.push(item);
                sources.push((job.clone(), witness));
                witness += 1;
            }
        }
    }
    Ok((::pari::bundle::Bundle::new(&vk, items).to_bytes(), sources))
}

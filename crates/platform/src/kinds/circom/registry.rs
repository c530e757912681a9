//! The registered circuits of a tenant, as the API sees them: read (`GetCircuit`, `ListCircuits`),
//! registered (`RegisterCircuit`: a [`super::register`] job per file) and deleted
//! (`DeleteCircuit`, refused while a job uses the circuit).

use bytes::Bytes;
use ::pari::KeyDigest;

use super::{check_circuit_id, check_upload, register, upload_digest, CircuitInfo, CIRCUIT_JSON};
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

impl Platform {
    /// The tenant's registered circuit `id`, if its registration has finished.
    pub async fn registered_circuit(&self, tenant: &str, id: &str) -> Result<Option<CircuitInfo>, PlatformError> {
        check_circuit_id(id)?;
        match self.blobs().get(&layout::circuit_file(tenant, id, CIRCUIT_JSON)).await {
            Ok(b) => Ok(Some(serde_json::from_slice(&b).map_err(|e| corrupt(format!("circuit {id}: {CIRCUIT_JSON}: {e}")))?)),
            Err(blobstore::BlobError::NotFound(_)) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    /// The verifying key (`vk.bin`) of a registered circuit, checked against its digest.
    pub async fn registered_vk(&self, tenant: &str, info: &CircuitInfo) -> Result<Bytes, PlatformError> {
        let vk = self.blobs().get(&layout::circuit_key(tenant, &info.circuit_id, &info.vk_digest, "vk.bin")).await?;
        if KeyDigest::of_bytes(&vk).to_string() != info.vk_digest {
            return Err(corrupt(format!("circuit {}: vk.bin does not have the digest circuit.json names", info.circuit_id)));
        }
        Ok(vk)
    }

    /// The tenant's registered circuits.
    pub async fn registered_circuits(&self, tenant: &str) -> Result<Vec<CircuitInfo>, PlatformError> {
        let mut out = Vec::new();
        let root = layout::circuits_root(tenant);
        for key in self.blobs().list(&root).await? {
            let Some(id) = key.strip_prefix(&root).and_then(|rest| rest.strip_suffix(&format!("/{CIRCUIT_JSON}"))) else { continue };
            if id.contains('/') || check_circuit_id(id).is_err() {
                continue;
            }
            if let Some(info) = self.registered_circuit(tenant, id).await? {
                out.push(info);
            }
        }
        Ok(out)
    }

    /// Deletes `tenant`'s circuit `id` and returns how many objects went, or None when nothing
    /// of it is stored. Refused (naming the job) while a job of the tenant that proves or
    /// registers it has not ended. `circuit.json` goes first, so from then on the circuit is
    /// unknown: a submission that read it an instant before fails when its task reads the key,
    /// naming it. Proofs already published keep their own `vk.bin`.
    pub async fn delete_circuit(&self, tenant: &str, id: &str) -> Result<Option<usize>, PlatformError> {
        check_circuit_id(id)?;
        if let Some(job) = self.unended_job_of_circuit(tenant, id).await? {
            return Err(PlatformError::Precondition(format!("circuit {id} is in use by job {job}, which has not ended: cancel it or wait")));
        }
        let json = layout::circuit_file(tenant, id, CIRCUIT_JSON);
        let had_json = self.blobs().exists(&json).await?;
        if had_json {
            self.blobs().delete(&json).await?;
        }
        let rest = self.blobs().delete_prefix(&layout::circuit_prefix(tenant, id)).await?;
        // Given back whatever was stored (a registration that failed after its charge too).
        self.job_store().uncharge(tenant, jobs::Usage::Circuits, id).await?;
        let deleted = rest + usize::from(had_json);
        if deleted > 0 {
            tracing::info!(tenant, circuit = id, objects = deleted, "circuit deleted");
        }
        Ok((deleted > 0).then_some(deleted))
    }

    /// A job of `tenant` that has not ended and proves (`pari.circom`) or registers
    /// (`circuit.register`) circuit `id`. Pages through the tenant's job index: as many jobs as
    /// its retention keeps.
    async fn unended_job_of_circuit(&self, tenant: &str, id: &str) -> Result<Option<String>, PlatformError> {
        const PAGE: u64 = 500;
        let store = self.job_store();
        let mut offset = Some(0);
        while let Some(at) = offset {
            let (recs, next) = if tenant.is_empty() { store.list(at, PAGE).await } else { store.list_tenant(tenant, at, PAGE).await }.map_err(PlatformError::from)?;
            for r in recs {
                if r.state.is_terminal() || ![super::JOB, super::REGISTER_JOB, crate::kinds::testudo::JOB].contains(&r.kind.as_str()) {
                    continue;
                }
                let spec: serde_json::Value = serde_json::from_str(&r.spec).map_err(|e| corrupt(format!("job {} spec: {e}", r.id)))?;
                if spec.get("circuit_id").and_then(|v| v.as_str()) == Some(id) {
                    return Ok(Some(r.id));
                }
            }
            offset = next;
        }
        Ok(None)
    }

    /// Registers the uploaded `.r1cs` at `r1cs_key` for `tenant`: the circuit id, and either
    /// the circuit (registered already) or the registration job (created now, or the one
    /// already running for this file).
    pub async fn register_circuit(&self, tenant: &str, r1cs_key: &str) -> Result<(String, Option<CircuitInfo>, Option<String>), PlatformError> {
        check_upload("r1cs_object_key", tenant, r1cs_key)?;
        // The id is the file's digest, read in pieces: the planner never holds the file.
        let (_, id) = upload_digest(self, "r1cs_object_key", r1cs_key).await?;
        if let Some(info) = self.registered_circuit(tenant, &id).await? {
            return Ok((id, Some(info), None));
        }
        let request = || register::request(&id, r1cs_key);
        // One registration job per file (per tenant); a failed or cancelled one is replaced.
        let mut key = format!("register-circuit/{id}");
        let (mut job, _) = self.submit_as(tenant, request(), Some(&key)).await?;
        for _ in 0..3 {
            let rec = self.record(&job).await?;
            if !matches!(rec.state, jobs::JobState::Failed | jobs::JobState::Cancelled) {
                break;
            }
            key = format!("register-circuit/{id}/{job}");
            job = self.submit_as(tenant, request(), Some(&key)).await?.0;
        }
        Ok((id, None, Some(job)))
    }
}


//! `manifest.json`: what a published job directory holds, what to pin when verifying it, and the
//! command that verifies it. Every kind that publishes writes one with its last output, before
//! the job is marked done ([`Manifest::publish`]), so `prover fetch` prints from it instead of
//! guessing the kind from file names.

use std::collections::BTreeMap;

use bytes::Bytes;

use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// The file's name in the proof directory.
pub const MANIFEST: &str = "manifest.json";
/// The format's version.
pub const VERSION: u32 = 1;
/// Stands for the fetched directory in [`Manifest::verify`]'s commands.
pub const DIR: &str = "{dir}";

#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Manifest {
    pub version: u32,
    pub job: String,
    /// The job kind.
    pub kind: String,
    /// The directory's other files, sorted.
    pub files: Vec<String>,
    /// What the job was proved against, as the server reports it (check each against what you
    /// expect before trusting a verification that pins it): e.g. `root` (a Reckle C),
    /// `vk_digest`, `final_key_digest`.
    pub pins: BTreeMap<String, String>,
    /// Commands that verify the directory offline, [`DIR`] standing for it.
    pub verify: Vec<String>,
}

impl Manifest {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, String> {
        let m: Manifest = serde_json::from_slice(bytes).map_err(|e| format!("{MANIFEST}: {e}"))?;
        if m.version != VERSION {
            return Err(format!("{MANIFEST}: version {}, this build reads {VERSION}", m.version));
        }
        Ok(m)
    }

    /// The verify commands for directory `dir`.
    pub fn verify_commands(&self, dir: &str) -> Vec<String> {
        self.verify.iter().map(|c| c.replace(DIR, dir)).collect()
    }

    /// Lists job `job`'s proof directory and writes its manifest there. Idempotent: a rerun
    /// writes the same bytes once the other outputs are in place.
    pub async fn publish(p: &Platform, job: &str, kind: &str, pins: BTreeMap<String, String>, verify: Vec<String>) -> Result<(), PlatformError> {
        let prefix = layout::proof_prefix(job);
        let mut files: Vec<String> =
            p.blobs().list(&prefix).await?.into_iter().filter_map(|k| k.strip_prefix(&prefix).map(str::to_string)).filter(|n| n != MANIFEST && !n.contains('/')).collect();
        files.sort();
        let m = Manifest { version: VERSION, job: job.to_string(), kind: kind.to_string(), files, pins, verify };
        p.blobs().put(&layout::proof_file(job, MANIFEST), Bytes::from(serde_json::to_vec_pretty(&m).map_err(corrupt)?)).await?;
        Ok(())
    }
}

/// A string field of the JSON object stored at `name` in job `job`'s proof directory.
pub(crate) async fn published_field(p: &Platform, job: &str, name: &str, field: &str) -> Result<Option<String>, PlatformError> {
    let bytes = p.blobs().get(&layout::proof_file(job, name)).await?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("{name}: {e}")))?;
    Ok(v.get(field).and_then(|f| f.as_str()).map(str::to_string))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_manifest_round_trips_and_other_versions_are_refused() {
        let m = Manifest {
            version: VERSION,
            job: "j1".into(),
            kind: "reckle.batch".into(),
            files: vec!["proof.bin".into(), "statement.json".into()],
            pins: BTreeMap::from([("root".to_string(), "ab".repeat(16))]),
            verify: vec![format!("prover reckle verify {DIR} --root {}", "ab".repeat(16))],
        };
        let bytes = serde_json::to_vec(&m).unwrap();
        assert_eq!(Manifest::from_bytes(&bytes).unwrap(), m);
        assert_eq!(m.verify_commands("out/")[0], format!("prover reckle verify out/ --root {}", "ab".repeat(16)));
        let mut v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        v["version"] = 2.into();
        assert!(Manifest::from_bytes(&serde_json::to_vec(&v).unwrap()).unwrap_err().contains("version 2"));
        assert!(Manifest::from_bytes(b"{}").is_err());
    }
}

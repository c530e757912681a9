//! The aggregator's step (`reckle.finish`: verify, then publish `reckle::files`) and
//! `VerifyProof` on what it published, with the root keys verifiers use.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use reckle::{files, Circuits, NodeId, NodeProof, Params, Statement};
use reckle::stored::Layout;

use super::prove::{bucket_values, node_hashes};
use super::{Derived, ReckleJobSpec};
use crate::error::corrupt;
use crate::kinds::contract;
use crate::{layout, Platform, PlatformError};

/// Stores the root key of `circuits` ([`layout::reckle_root_key`]) unless it is there already,
/// for verifiers that build nothing ([`Platform::root_key`]). Every done job's finish step does
/// it before publishing, so a done job's shape always has its key stored (an error here is
/// retried with the task).
async fn publish_root_key(p: &Platform, circuits: &Circuits) -> Result<(), PlatformError> {
    let params = circuits.params();
    if reckle::pinned_root_key(params).is_none() {
        return Ok(());
    }
    let key = layout::reckle_root_key(params);
    if !p.blobs().exists(&key).await? {
        p.blobs().put(&key, Bytes::from(circuits.root_key().to_bytes())).await?;
    }
    Ok(())
}

/// A done Reckle job's published statement and root proof, checked as [`verify_statement`].
pub(super) async fn verify_published(p: &Platform, job: &str, expected_root: Option<&reckle::Digest>) -> Result<Result<String, String>, PlatformError> {
    let statement = p.blobs().get(&layout::proof_file(job, files::STATEMENT)).await?;
    let proof = p.blobs().get(&layout::proof_file(job, files::PROOF)).await?;
    verify_statement(p, &statement, &proof, expected_root).await
}

/// Checks a Reckle statement and root proof against `expected_root` (or, without one, the
/// statement's own C) and returns what it checked against; `Err(reason)` when the statement
/// or proof is malformed or does not verify. Cheap checks (the claims, the expected C, the
/// pinned circuit digest, the proof's header and size) run before the root key is loaded; no
/// circuit is built ([`Platform::root_key`]).
pub async fn verify_statement(
    p: &Platform,
    statement: &[u8],
    proof: &[u8],
    expected_root: Option<&reckle::Digest>,
) -> Result<Result<String, String>, PlatformError> {
    let (st, params, c, against) = match precheck(statement, proof, expected_root) {
        Ok(checked) => checked,
        Err(reason) => return Ok(Err(reason)),
    };
    // A key that cannot be had (not pinned, not stored yet) is no verdict on the proof.
    let key = p.root_key(params).await?;
    Ok(match NodeProof::root_from_bytes(&key, proof) {
        Err(e) => Err(format!("proof: {e}")),
        Ok(proof) => st.verify_for(&c, &key, &proof).map(|()| against).map_err(|e| e.to_string()),
    })
}

/// The cheap checks of [`verify_statement`]: the statement, its parameters and the C it is
/// checked against (with a description of it).
fn precheck(statement: &[u8], proof: &[u8], expected_root: Option<&reckle::Digest>) -> Result<(Statement, Params, reckle::Digest, String), String> {
    let st: Statement = serde_json::from_slice(statement).map_err(|e| format!("statement: {e}"))?;
    let params = st.precheck(expected_root, proof).map_err(|e| format!("statement: {e}"))?;
    if params.log_n > crate::MAX_LOG_N {
        return Err(format!("statement: log_n {} above the platform's limit", params.log_n));
    }
    let (c, against) = match expected_root {
        Some(c) => (*c, format!("C = {c} (expected_root)")),
        None => {
            let c = reckle::Digest::from_hex(&st.root).map_err(|e| format!("statement: {e}"))?;
            (c, format!("the statement's own C = {c} only (not pinned: pass expected_root)"))
        }
    };
    Ok((st, params, c, against))
}

impl Platform {
    /// The root verifying key of `params`, without building circuits (the planner's memory
    /// limit holds no circuit set): from the circuits this process has built, else from this
    /// process's cache, else the stored key ([`layout::reckle_root_key`], written by the finish
    /// step of every done job of that shape), accepted only if its bytes hash to the digest pinned in the
    /// reckle crate, so no writer of the bucket can substitute a key.
    pub async fn root_key(&self, params: Params) -> Result<Arc<reckle::RootKey>, PlatformError> {
        if let Some(c) = self.circuits_if_built(params) {
            return Ok(Arc::new(c.root_key().clone()));
        }
        let name = format!("reckle/root-key/{}-{}", params.log_n, params.log_bucket);
        if let Some(k) = self.cache().get::<reckle::RootKey>(&name) {
            return Ok(k);
        }
        if reckle::pinned_root_key(params).is_none() {
            return Err(PlatformError::Precondition(format!(
                "no pinned root key for (log_n, log_bucket) = ({}, {}): this build cannot verify such proofs",
                params.log_n, params.log_bucket
            )));
        }
        let path = layout::reckle_root_key(params);
        let bytes = match self.blobs().get(&path).await {
            Ok(b) => b,
            Err(blobstore::BlobError::NotFound(_)) => {
                return Err(PlatformError::Precondition(format!(
                    "the root key of (log_n, log_bucket) = ({}, {}) is not stored yet: no job of that shape has run here",
                    params.log_n, params.log_bucket
                )))
            }
            Err(e) => return Err(e.into()),
        };
        let size = bytes.len() as u64;
        let key = crate::work::blocking(move |_| reckle::RootKey::from_bytes(&bytes)).await?;
        let key = match key {
            Ok(k) if k.params() == params => Arc::new(k),
            Ok(k) => return Err(PlatformError::Corrupt(format!("stored root key {path}: it is the key of {:?}", k.params()))),
            Err(e) => return Err(PlatformError::Corrupt(format!("stored root key {path}: {e}"))),
        };
        self.cache().put(&name, key.clone(), size);
        Ok(key)
    }
}

/// `reckle.finish` (aggregator): verifies the root proof against the statement and publishes
/// the proof directory; its report ends the job done. A proof that does not verify is
/// rejected (the job fails: the bytes are what they are, a retry would not change them).
pub(super) async fn finish(p: &Platform, job: &str, kind: &str, spec: &ReckleJobSpec, j: &Derived) -> Result<(), PlatformError> {
    let layout = Layout::new(j.params);
    let circuits = p.circuits(j.params).await?;
    let root = NodeProof::from_bytes(&circuits, &p.blobs().get(&layout::reckle_node(job, NodeId::new(j.params.log_n, 0))).await?)?;
    // The tree's hashes this step needs (T'_I and its siblings), and the batch's values (one
    // ranged read per bucket): never the whole tree or all the leaves.
    let hashes = node_hashes(p, job, &layout, &reckle::hashes_needed(j.params, &spec.batch)?).await?;
    let c = reckle::NodeHashes::node_hash(&hashes, NodeId::new(j.params.log_n, 0))?;
    let mut pairs = Vec::with_capacity(spec.batch.len());
    let mut bucket: Option<(u64, Vec<u64>)> = None;
    for &i in &spec.batch {
        let b = i >> j.params.log_bucket;
        if bucket.as_ref().is_none_or(|(at, _)| *at != b) {
            bucket = Some((b, bucket_values(p, job, j.params, b).await?));
        }
        let values = &bucket.as_ref().expect("just read").1;
        pairs.push((i, values[(i - (b << j.params.log_bucket)) as usize]));
    }
    let statement = Statement::new(&circuits, c, &pairs)?;
    if let Err(e) = statement.verify_for(&c, circuits.root_key(), &root) {
        return Err(contract::reject(format!("final verification failed: {e}")));
    }
    let wrapped = match &spec.wrap_vk_digest {
        None => None,
        Some(d) => match super::wrap::check_final(p, job, d, circuits.root_key(), &c, &statement).await? {
            Ok(files) => Some((d.clone(), files)),
            Err(e) => return Err(contract::reject(format!("final proof verification failed: {e}"))),
        },
    };
    publish_root_key(p, &circuits).await?;
    // Λ_I streamed into the object store one node proof at a time (each checked as it goes):
    // the aggregator's memory does not grow with |I| (a batch of 1,024 at ℓ = 27 is ~14k node
    // proofs, ~1.8 GB, which it used to hold twice).
    let (mut lambda, head) = reckle::LambdaStream::new(j.params, &spec.batch)?;
    let mut up = p.blobs().upload(&layout::proof_file(job, files::LAMBDA)).await?;
    up.write(Bytes::from(head)).await?;
    for id in lambda.nodes().to_vec() {
        let proof = NodeProof::from_bytes(&circuits, &p.blobs().get(&layout::reckle_node(job, id)).await?)?;
        up.write(Bytes::from(lambda.push(&circuits, &hashes, &proof)?)).await?;
    }
    up.write(Bytes::from(lambda.finish(&hashes)?)).await?;
    up.finish().await?;
    let put = |name: &str, bytes: Vec<u8>| {
        let key = layout::proof_file(job, name);
        async move { p.blobs().put(&key, Bytes::from(bytes)).await }
    };
    p.blobs().copy(&layout::reckle_leaves(job), &layout::proof_file(job, files::LEAVES)).await?;
    put(files::PROOF, root.to_bytes()).await?;
    put(files::STATEMENT, serde_json::to_vec_pretty(&statement).map_err(corrupt)?).await?;
    let root_hex = serde_json::to_value(&statement).map_err(corrupt)?.get("root").and_then(|r| r.as_str()).map(str::to_string);
    let mut verify: Vec<String> = root_hex.iter().map(|c| format!("prover reckle verify {} --root {c}", crate::manifest::DIR)).collect();
    let mut pins: BTreeMap<String, String> = root_hex.clone().map(|c| ("root".to_string(), c)).into_iter().collect();
    if let Some((d, (final_bytes, vk_bytes))) = wrapped {
        put(super::wrap::WRAP_VK_FILE, vk_bytes.to_vec()).await?;
        put(super::wrap::FINAL_FILE, final_bytes.to_vec()).await?;
        verify.extend(root_hex.iter().map(|c| format!("prover reckle verify-final {} --root {c} --wrap-vk-digest {d}", crate::manifest::DIR)));
        pins.insert("wrap_vk_digest".into(), d);
    }
    crate::manifest::Manifest::publish(p, job, kind, pins, verify).await?;
    ::metrics::counter!("prover_proofs_total", "kind" => "reckle.root").increment(1);
    Ok(())
}

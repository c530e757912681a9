//! The proofs of `T'_I`: a bucket's from its values, an inner node's from its children's
//! proofs and hashes, reading one piece of the stored tree at a time (never the whole tree).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use bytes::Bytes;
use reckle::stored::{Layout, Piece, PieceId};
use reckle::{Child, Digest, NodeId, NodeProof, Params};

use super::{Derived, ReckleJobSpec};
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// A stored piece of the job's tree, cached within the process's byte budget.
async fn piece(p: &Platform, job: &str, layout: &Layout, id: PieceId) -> Result<Arc<Piece>, PlatformError> {
    let key = layout::reckle_piece(job, id);
    if let Some(piece) = p.cache().get::<Piece>(&key) {
        return Ok(piece);
    }
    let bytes = p.blobs().get(&key).await?;
    let piece = Arc::new(Piece::from_bytes(layout, id, &bytes).map_err(|e| corrupt(format!("{key}: {e}")))?);
    p.cache().put(&key, piece.clone(), bytes.len() as u64);
    Ok(piece)
}

/// `C_v` of node `id` (at a level `≥ q`): one piece read.
async fn node_hash(p: &Platform, job: &str, layout: &Layout, id: NodeId) -> Result<Digest, PlatformError> {
    Ok(piece(p, job, layout, layout.piece_of(id)?).await?.hash(layout, id)?)
}

/// The hashes of `ids`, reading each piece they lie in once.
pub(super) async fn node_hashes(p: &Platform, job: &str, layout: &Layout, ids: &BTreeSet<NodeId>) -> Result<BTreeMap<NodeId, Digest>, PlatformError> {
    let mut by_piece: BTreeMap<PieceId, Vec<NodeId>> = BTreeMap::new();
    for id in ids {
        by_piece.entry(layout.piece_of(*id)?).or_default().push(*id);
    }
    let mut out = BTreeMap::new();
    for (pid, ids) in by_piece {
        let piece = piece(p, job, layout, pid).await?;
        for id in ids {
            out.insert(id, piece.hash(layout, id)?);
        }
    }
    Ok(out)
}

/// The values of bucket `bucket` (`2^q` of them): one ranged read of the job's leaves.
pub(super) async fn bucket_values(p: &Platform, job: &str, params: Params, bucket: u64) -> Result<Vec<u64>, PlatformError> {
    let size = params.bucket_size();
    let bytes = p.blobs().get_range(&layout::reckle_leaves(job), 8 * bucket * size, 8 * size).await?;
    Ok(reckle::decode_values(&bytes)?)
}

/// `reckle.leaf` task `index`: the proof of the job's `index`-th bucket, from its values (one
/// ranged read of the leaves).
pub(super) async fn leaf(p: &Platform, job: &str, spec: &ReckleJobSpec, d: &Derived, index: u64) -> Result<(), PlatformError> {
    let id = d.bucket(index).ok_or_else(|| corrupt(format!("reckle.leaf task {index} is not one of the job's")))?;
    let circuits = p.circuits(d.params).await?;
    let selected = reckle::selected_in_bucket(d.params, &spec.batch, id.index);
    let values = bucket_values(p, job, d.params, id.index).await?;
    let c = circuits.clone();
    let proof = crate::work::blocking(move |_| reckle::prove_bucket(&c, id.index, &values, &selected)).await??;
    p.blobs().put(&layout::reckle_node(job, id), Bytes::from(proof.to_bytes())).await?;
    Ok(())
}

/// `reckle.node` task `index` ([`super::node_index`]): the proof of an inner node of `T'_I`
/// (a pure function of its children's proofs, and the hash of a child outside the plan).
pub(super) async fn node(p: &Platform, job: &str, d: &Derived, index: u64) -> Result<(), PlatformError> {
    let id = super::node_of_index(index);
    if id.level <= d.params.log_bucket || !d.todo.contains(&id) {
        return Err(corrupt(format!("reckle.node task {index} ({id:?}) is not one of the job's")));
    }
    let layout = Layout::new(d.params);
    let circuits = p.circuits(d.params).await?;
    let mut children = Vec::with_capacity(2);
    for child in id.children() {
        if d.plan.contains(&child) {
            let bytes = p.blobs().get(&layout::reckle_node(job, child)).await?;
            children.push(Child::Proven(NodeProof::from_bytes(&circuits, &bytes)?));
        } else {
            children.push(Child::Hash(node_hash(p, job, &layout, child).await?));
        }
    }
    let c = circuits.clone();
    let proof = crate::work::blocking(move |_| reckle::prove_node(&c, id, &children[0], &children[1])).await??;
    p.blobs().put(&layout::reckle_node(job, id), Bytes::from(proof.to_bytes())).await?;
    Ok(())
}

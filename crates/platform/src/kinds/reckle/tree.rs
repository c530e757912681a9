//! The stored tree: `reckle.tree` tasks hash ranges of the leaves into band-0 pieces, and
//! `reckle.bands` hashes the bands above from their roots (`reckle::stored`).

use bytes::Bytes;
use reckle::stored::Layout;
use reckle::{Digest, Params};

use super::Derived;
use crate::error::corrupt;
use crate::{layout, Platform, PlatformError};

/// `reckle.tree` task `index`: hashes its range of the leaves (one ranged read per band-0
/// piece) into band-0 pieces, then stores their roots for the bands step.
pub(super) async fn tree(p: &Platform, job: &str, d: &Derived, index: u64) -> Result<(), PlatformError> {
    let &(first, count) = usize::try_from(index).ok().and_then(|i| d.trees.get(i)).ok_or_else(|| corrupt(format!("reckle.tree task {index} is not one of the job's")))?;
    let layout = Layout::new(d.params);
    let per = layout.leaves_per_bottom_piece();
    let mut roots = Vec::with_capacity(count as usize);
    for index in first..first + count {
        let values = reckle::decode_values(&p.blobs().get_range(&layout::reckle_leaves(job), 8 * index * per, 8 * per).await?)?;
        let piece = crate::work::blocking(move |cancel| {
            cancel.check()?;
            Ok::<_, PlatformError>(reckle::stored::bottom_piece(&layout, index, &values)?)
        })
        .await??;
        p.blobs().put(&layout::reckle_piece(job, piece.id), Bytes::from(piece.to_bytes())).await?;
        roots.push(piece.root());
    }
    p.blobs().put(&layout::reckle_piece_roots(job, first), Bytes::from(encode_digests(&roots))).await?;
    Ok(())
}

/// `reckle.bands`: hashes the bands above band 0 from the band-0 roots the tree tasks stored (at
/// most `2^(ℓ − q − 11)` digests) and stores their pieces.
pub(super) async fn upper_bands(p: &Platform, job: &str, params: Params) -> Result<(), PlatformError> {
    let layout = Layout::new(params);
    let mut below: Vec<Digest> = Vec::with_capacity(layout.pieces(0) as usize);
    for (first, count) in super::tree_chunks(params) {
        let bytes = p.blobs().get(&layout::reckle_piece_roots(job, first)).await?;
        let roots = decode_digests(&bytes).map_err(|e| corrupt(format!("tree roots {first}: {e}")))?;
        if roots.len() as u64 != count {
            return Err(corrupt(format!("tree roots {first}: {} digests, expected {count}", roots.len())));
        }
        below.extend(roots);
    }
    for band in 1..layout.bands() {
        let per = layout.piece_len(band).div_ceil(2) * 2;
        let mut roots = Vec::new();
        for (index, chunk) in below.chunks(per).enumerate() {
            let piece = reckle::stored::upper_piece(&layout, band, index as u64, chunk)?;
            p.blobs().put(&layout::reckle_piece(job, piece.id), Bytes::from(piece.to_bytes())).await?;
            roots.push(piece.root());
        }
        below = roots;
    }
    Ok(())
}

fn decode_digests(bytes: &[u8]) -> Result<Vec<Digest>, reckle::Error> {
    if !bytes.len().is_multiple_of(reckle::stored::DIGEST_BYTES) {
        return Err(reckle::Error::Malformed(format!("{} bytes is not a whole number of digests", bytes.len())));
    }
    bytes
        .chunks_exact(reckle::stored::DIGEST_BYTES)
        .map(|c| Digest::from_elements(std::array::from_fn(|i| u64::from_le_bytes(c[8 * i..8 * i + 8].try_into().expect("8 bytes")))))
        .collect()
}

fn encode_digests(digests: &[Digest]) -> Vec<u8> {
    digests.iter().flat_map(|d| d.0.iter().flat_map(|e| e.to_le_bytes())).collect()
}

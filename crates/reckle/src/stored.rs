//! The tree stored in pieces, so that a distributed prover reads only the path it needs.
//!
//! A task of the distributed prover needs the values of one bucket (`2^q` leaves) and the
//! Merkle hashes `C_v` of nodes at levels `q..=ℓ` (children a proof takes as hashes, the
//! siblings of `Λ_I`, the root `C`); never a hash below the buckets. So only levels `q..=ℓ`
//! are stored, cut into **pieces**: with relative levels `r = level − q` in `0..=m`
//! (`m = ℓ − q`), band `b` covers `r ∈ [b·H, min(b·H + H − 1, m)]` ([`PIECE_HEIGHT`] `= H`),
//! and a piece is the subtree of one node at the band's top level, down to the band's bottom
//! level: at most `2^H − 1` digests (128 KiB), bottom-up ([`Layout::offset`]). A node's hash
//! is one piece read, a path of `ℓ − q + 1` nodes at most `⌈(m + 1)/H⌉` pieces; at `ℓ = 27`,
//! `q = 5` the stored tree is 2,049 pieces, 256 MiB.
//!
//! Pieces are made bottom-up and independently: a band-0 piece from its `2^(q + h)` leaf
//! values ([`bottom_piece`], `h` = the band's height − 1), a band-`b` piece from the roots of
//! the `2^(h + 1)` band-`(b − 1)` pieces below it ([`upper_piece`]). So the leaves can be
//! hashed by many workers, a few MiB each, and the upper bands by one process from the
//! band-0 roots (at most `2^(m − H + 1)` digests).

use rayon::prelude::*;

use crate::hash::{hash_pair, leaf_hash, Digest};
use crate::{Error, NodeId, Params};

/// Levels per band of pieces (`H`): a piece holds at most `2^H − 1 = 4,095` digests.
pub const PIECE_HEIGHT: u32 = 12;

/// Bytes of one stored digest (four little-endian `u64`).
pub const DIGEST_BYTES: usize = 32;

/// One piece: band `band`, `index`-th from the left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PieceId {
    pub band: u32,
    pub index: u64,
}

/// Where every stored hash of a tree of shape `params` lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    params: Params,
}

impl Layout {
    pub fn new(params: Params) -> Self {
        Self { params }
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// `m = ℓ − q`: the highest relative level.
    fn m(&self) -> u32 {
        self.params.log_n - self.params.log_bucket
    }

    /// Number of bands.
    pub fn bands(&self) -> u32 {
        self.m() / PIECE_HEIGHT + 1
    }

    /// Relative levels `(bottom, top)` of band `band`.
    fn span(&self, band: u32) -> (u32, u32) {
        let bottom = band * PIECE_HEIGHT;
        (bottom, (bottom + PIECE_HEIGHT - 1).min(self.m()))
    }

    /// Number of pieces in band `band`.
    pub fn pieces(&self, band: u32) -> u64 {
        1u64 << (self.m() - self.span(band).1)
    }

    /// Number of digests in a piece of band `band`: `2^(h + 1) − 1`, `h = top − bottom`.
    pub fn piece_len(&self, band: u32) -> usize {
        let (bottom, top) = self.span(band);
        (1usize << (top - bottom + 1)) - 1
    }

    /// Leaf values under one band-0 piece: `2^(q + h)` (its bottom level has `2^h` buckets).
    pub fn leaves_per_bottom_piece(&self) -> u64 {
        let (bottom, top) = self.span(0);
        1u64 << (self.params.log_bucket + top - bottom)
    }

    /// The piece holding node `id` (at a level in `q..=ℓ`).
    pub fn piece_of(&self, id: NodeId) -> Result<PieceId, Error> {
        self.check(id)?;
        let r = id.level - self.params.log_bucket;
        let band = r / PIECE_HEIGHT;
        let top = self.span(band).1;
        Ok(PieceId { band, index: id.index >> (top - r) })
    }

    /// Position of node `id` in its piece's digests.
    pub fn offset(&self, id: NodeId) -> Result<usize, Error> {
        let piece = self.piece_of(id)?;
        let (bottom, top) = self.span(piece.band);
        let r = id.level - self.params.log_bucket;
        let h = top - bottom;
        // Levels below r in the piece: 2^h + 2^(h−1) + … + 2^(h − (r − bottom) + 1).
        let below: usize = (0..r - bottom).map(|t| 1usize << (h - t)).sum();
        let width = 1u64 << (top - r);
        Ok(below + (id.index - piece.index * width) as usize)
    }

    /// The node a piece's last digest is the hash of.
    pub fn root_of(&self, piece: PieceId) -> NodeId {
        NodeId::new(self.params.log_bucket + self.span(piece.band).1, piece.index)
    }

    fn check(&self, id: NodeId) -> Result<(), Error> {
        let Params { log_n, log_bucket } = self.params;
        if id.level < log_bucket || id.level > log_n || id.index >= 1u64 << (log_n - id.level) {
            return Err(Error::input(format!("node {id} is not stored (levels {log_bucket}..={log_n})")));
        }
        Ok(())
    }

    fn check_piece(&self, piece: PieceId) -> Result<(), Error> {
        if piece.band >= self.bands() || piece.index >= self.pieces(piece.band) {
            return Err(Error::input(format!("no piece {} of band {}", piece.index, piece.band)));
        }
        Ok(())
    }
}

/// A piece's digests, bottom level first ([`Layout::offset`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Piece {
    pub id: PieceId,
    pub digests: Vec<Digest>,
}

impl Piece {
    /// The hash of the piece's top node.
    pub fn root(&self) -> Digest {
        *self.digests.last().expect("a piece holds at least its root")
    }

    /// `C_v` of node `id`, which must lie in this piece.
    pub fn hash(&self, layout: &Layout, id: NodeId) -> Result<Digest, Error> {
        if layout.piece_of(id)? != self.id {
            return Err(Error::input(format!("node {id} is not in piece {:?}", self.id)));
        }
        Ok(self.digests[layout.offset(id)?])
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        self.digests.iter().flat_map(|d| d.0.iter().flat_map(|e| e.to_le_bytes())).collect()
    }

    /// Decodes piece `id` of `layout`: exactly its number of digests, each canonical.
    pub fn from_bytes(layout: &Layout, id: PieceId, bytes: &[u8]) -> Result<Self, Error> {
        layout.check_piece(id)?;
        let len = layout.piece_len(id.band);
        if bytes.len() != len * DIGEST_BYTES {
            return Err(Error::Malformed(format!(
                "piece {} of band {}: {} bytes, expected {}",
                id.index,
                id.band,
                bytes.len(),
                len * DIGEST_BYTES
            )));
        }
        let digests = bytes
            .chunks_exact(DIGEST_BYTES)
            .map(|c| {
                let e: [u64; 4] = std::array::from_fn(|i| u64::from_le_bytes(c[8 * i..8 * i + 8].try_into().expect("8 bytes")));
                Digest::from_elements(e)
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { id, digests })
    }
}

/// Hashes a piece's bottom level up to its top (the bottom given, `2^(h + 1)` digests).
fn grow(id: PieceId, bottom: Vec<Digest>) -> Piece {
    let mut digests = bottom;
    let (mut start, mut width) = (0, digests.len());
    while width > 1 {
        let next: Vec<Digest> = digests[start..start + width].par_chunks(2).map(|p| hash_pair(&p[0], &p[1])).collect();
        start += width;
        width /= 2;
        digests.extend(next);
    }
    Piece { id, digests }
}

/// Band-0 piece `index` from the values of its leaves (`leaves_per_bottom_piece` of them,
/// starting at leaf `index · leaves_per_bottom_piece`): the leaf hashes, the `q` levels up to
/// the buckets, then the piece. Parallel over each level.
pub fn bottom_piece(layout: &Layout, index: u64, values: &[u64]) -> Result<Piece, Error> {
    let id = PieceId { band: 0, index };
    layout.check_piece(id)?;
    let n = layout.leaves_per_bottom_piece();
    if values.len() as u64 != n {
        return Err(Error::input(format!("piece {index}: {} leaf values, expected {n}", values.len())));
    }
    let first = index * n;
    let mut level: Vec<Digest> = values.par_iter().enumerate().map(|(i, &v)| leaf_hash(first + i as u64, v)).collect();
    for _ in 0..layout.params.log_bucket {
        level = level.par_chunks(2).map(|p| hash_pair(&p[0], &p[1])).collect();
    }
    Ok(grow(id, level))
}

/// Band-`band` piece `index` (`band ≥ 1`) from the roots of the band-`(band − 1)` pieces
/// below it, left to right (`2^(h + 1)` of them).
pub fn upper_piece(layout: &Layout, band: u32, index: u64, below: &[Digest]) -> Result<Piece, Error> {
    let id = PieceId { band, index };
    if band == 0 {
        return Err(Error::input("band 0 is made from leaf values (bottom_piece)"));
    }
    layout.check_piece(id)?;
    let want = layout.piece_len(band).div_ceil(2) * 2;
    if below.len() != want {
        return Err(Error::input(format!("piece {index} of band {band}: {} roots below, expected {want}", below.len())));
    }
    Ok(grow(id, below.par_chunks(2).map(|p| hash_pair(&p[0], &p[1])).collect()))
}

/// Every piece of a tree, from all its values (tests and small trees; the platform makes
/// them with [`bottom_piece`] and [`upper_piece`] on many workers).
pub fn all_pieces(params: Params, values: &[u64]) -> Result<Vec<Piece>, Error> {
    let layout = Layout::new(params);
    let n = layout.leaves_per_bottom_piece() as usize;
    if values.len() as u64 != params.num_leaves() {
        return Err(Error::input(format!("leaves: expected {} values, got {}", params.num_leaves(), values.len())));
    }
    let mut out: Vec<Piece> = values.chunks(n).enumerate().map(|(i, v)| bottom_piece(&layout, i as u64, v)).collect::<Result<_, _>>()?;
    let mut below: Vec<Digest> = out.iter().map(Piece::root).collect();
    for band in 1..layout.bands() {
        let per = layout.piece_len(band).div_ceil(2) * 2;
        let pieces: Vec<Piece> =
            below.chunks(per).enumerate().map(|(i, b)| upper_piece(&layout, band, i as u64, b)).collect::<Result<_, _>>()?;
        below = pieces.iter().map(Piece::root).collect();
        out.extend(pieces);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Tree;

    /// Every stored node's hash, read from its piece, is the full tree's, for shapes with one
    /// band, several bands, a short top band and `q = 0`; pieces round-trip through bytes and
    /// refuse other lengths and non-canonical digests.
    #[test]
    fn pieces_hold_the_trees_hashes() {
        for (log_n, q) in [(3, 1), (5, 0), (14, 1), (16, 2), (26, 1), (12, 12)] {
            if log_n > 20 {
                // Layout arithmetic only (a full tree of 2^26 leaves is too slow for a unit test).
                let l = Layout::new(Params::new(log_n, q).unwrap());
                assert_eq!(l.bands(), 3);
                assert_eq!(l.pieces(0), 1 << (25 - 11));
                assert_eq!(l.pieces(2), 1);
                assert_eq!(l.piece_len(2), (1 << 2) - 1);
                assert_eq!(l.root_of(PieceId { band: 2, index: 0 }), NodeId::new(26, 0));
                continue;
            }
            let params = Params::new(log_n, q).unwrap();
            let values: Vec<u64> = (0..1u64 << log_n).map(|i| i.wrapping_mul(0x9e37_79b9_7f4a_7c15)).collect();
            let tree = Tree::build(params, values.clone()).unwrap();
            let layout = Layout::new(params);
            let pieces = all_pieces(params, &values).unwrap();
            let total: u64 = (0..layout.bands()).map(|b| layout.pieces(b)).sum();
            assert_eq!(pieces.len() as u64, total);
            for level in q..=log_n {
                for index in 0..1u64 << (log_n - level) {
                    let id = NodeId::new(level, index);
                    let p = layout.piece_of(id).unwrap();
                    let piece = pieces.iter().find(|x| x.id == p).unwrap();
                    assert_eq!(piece.hash(&layout, id).unwrap(), tree.hash(level, index).unwrap(), "({log_n}, {q}) node {id}");
                }
            }
            let top = pieces.last().unwrap();
            assert_eq!(top.root(), tree.root());
            let bytes = top.to_bytes();
            assert_eq!(Piece::from_bytes(&layout, top.id, &bytes).unwrap(), *top);
            assert!(Piece::from_bytes(&layout, top.id, &bytes[1..]).is_err());
            let mut bad = bytes.clone();
            bad[..8].copy_from_slice(&u64::MAX.to_le_bytes());
            assert!(Piece::from_bytes(&layout, top.id, &bad).is_err(), "a non-canonical digest");
            assert!(layout.piece_of(NodeId::new(q.saturating_sub(1), 0)).is_err() || q == 0);
            assert!(bottom_piece(&layout, 0, &values[1..]).is_err());
        }
    }
}

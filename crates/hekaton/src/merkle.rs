//! Poseidon hashing and the Merkle tree that homogenises the subcircuits' public inputs
//! (paper §2.4, "Homogenizing public inputs via Merkle trees").
//!
//! * Poseidon: the ark-crypto-primitives sponge with rate 2, capacity 1, `α = 5`, 8 full and
//!   57 partial rounds, round constants and MDS matrix from the Grain LFSR (the same
//!   parameters as the rest of this workspace).
//! * A **leaf** is a list of field elements hashed with one sponge call, `H(x_1, …, x_n)`:
//!   leaf 0 is the whole circuit's public input, leaf `i ≥ 1` the state after subcircuit
//!   `i − 1` and its random salt (five elements, three permutations; the salt is what makes
//!   the tree hiding, see [`crate::augment`]). Leaves carry no domain tag: every position is
//!   fixed (each circuit opens exactly its leaves, at positions bound to public inputs, along
//!   paths of the tree's fixed depth), so a leaf of one kind is never read as the other, nor a
//!   leaf as an inner node; telling them apart by content would need a Poseidon collision.
//! * An inner **node** is `H(left, right)`. The tree is complete: the leaf layer is padded
//!   with zeros to a power of two, and a path is the list of siblings from the leaf upwards.
//!
//! The Poseidon parameters come from a Grain LFSR run, which costs far more than a hash:
//! [`poseidon_config`] runs it once per field and process and hands out copies.
//!
//! Each function has an in-circuit twin ([`hash_leaf_var`], [`root_from_path_var`]) that
//! produces the same value.

use ark_crypto_primitives::sponge::constraints::CryptographicSpongeVar;
use ark_crypto_primitives::sponge::poseidon::constraints::PoseidonSpongeVar;
use ark_crypto_primitives::sponge::poseidon::{
    find_poseidon_ark_and_mds, PoseidonConfig, PoseidonSponge,
};
use ark_crypto_primitives::sponge::{Absorb, CryptographicSponge};
use ark_ff::PrimeField;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::select::CondSelectGadget;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use crate::Error;

/// The Poseidon parameters (rate 2, capacity 1, `α = 5`, 8 full / 57 partial rounds), made
/// once per field in this process.
pub fn poseidon_config<F: PrimeField>() -> PoseidonConfig<F> {
    type Cache = Mutex<HashMap<TypeId, Box<dyn Any + Send + Sync>>>;
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<F>();
    if let Some(cfg) = lock(cache)
        .get(&id)
        .and_then(|c| c.downcast_ref::<PoseidonConfig<F>>())
    {
        return cfg.clone();
    }
    let (full, partial, alpha, rate) = (8u64, 57u64, 5u64, 2usize);
    let (ark, mds) =
        find_poseidon_ark_and_mds::<F>(F::MODULUS_BIT_SIZE as u64, rate, full, partial, 0);
    let cfg = PoseidonConfig::new(full as usize, partial as usize, alpha, mds, ark, rate, 1);
    lock(cache).insert(id, Box::new(cfg.clone()));
    cfg
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // The map is only ever inserted into whole values: a poisoned lock holds a valid map.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// `H(items…)`: a leaf.
pub fn hash_leaf<F: PrimeField + Absorb>(cfg: &PoseidonConfig<F>, items: &[F]) -> F {
    let mut sponge = PoseidonSponge::new(cfg);
    sponge.absorb(&items.to_vec());
    sponge.squeeze_field_elements::<F>(1)[0]
}

/// `H(left, right)`.
pub fn hash_node<F: PrimeField + Absorb>(cfg: &PoseidonConfig<F>, left: F, right: F) -> F {
    let mut sponge = PoseidonSponge::new(cfg);
    sponge.absorb(&vec![left, right]);
    sponge.squeeze_field_elements::<F>(1)[0]
}

/// Depth of a complete tree with at least `num_leaves` leaves (at least 1).
pub fn depth_for(num_leaves: usize) -> usize {
    num_leaves.max(2).next_power_of_two().trailing_zeros() as usize
}

/// A complete binary Merkle tree over leaf hashes; `levels[0]` is the padded leaf layer and
/// the last level is the root.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct MerkleTree<F: PrimeField> {
    pub levels: Vec<Vec<F>>,
}

/// Deeper trees are refused when decoding: their leaf layer could not be held in memory.
pub const MAX_DEPTH: usize = 40;

impl<F: PrimeField> MerkleTree<F> {
    /// Checks the shape: `levels[j]` holds `2^(d−j)` nodes for a depth `d ≤ MAX_DEPTH`, so
    /// the last level is the root. (The hashes themselves are not recomputed.)
    pub fn check(&self) -> Result<(), Error> {
        let bad = |reason: String| Err(Error::malformed("Merkle tree", reason));
        let Some(depth) = self.levels.len().checked_sub(1) else {
            return bad("no level".into());
        };
        if depth > MAX_DEPTH {
            return bad(format!("depth {depth} exceeds {MAX_DEPTH}"));
        }
        for (j, level) in self.levels.iter().enumerate() {
            let want = 1usize << (depth - j);
            if level.len() != want {
                return bad(format!(
                    "level {j} has {} nodes, a depth-{depth} tree has {want}",
                    level.len()
                ));
            }
        }
        Ok(())
    }

    /// The depth (0 for a malformed tree without levels).
    pub fn depth(&self) -> usize {
        self.levels.len().saturating_sub(1)
    }

    pub fn root(&self) -> Result<F, Error> {
        self.check()?;
        Ok(self.levels[self.depth()][0])
    }

    /// The siblings of leaf `index`, from the bottom up.
    pub fn path(&self, index: usize) -> Result<Vec<F>, Error> {
        self.check()?;
        let depth = self.depth();
        if index >> depth != 0 {
            return Err(Error::malformed(
                "Merkle path index",
                format!("leaf {index} in a tree of {} leaves", 1usize << depth),
            ));
        }
        Ok((0..depth)
            .map(|level| self.levels[level][(index >> level) ^ 1])
            .collect())
    }
}

impl<F: PrimeField> crate::Check for MerkleTree<F> {
    fn check(&self) -> Result<(), Error> {
        MerkleTree::check(self)
    }
}

impl<F: PrimeField + Absorb> MerkleTree<F> {
    /// Builds the tree of the given depth over `leaf_hashes` (padded with zeros).
    pub fn new(cfg: &PoseidonConfig<F>, depth: usize, leaf_hashes: &[F]) -> Option<Self> {
        if depth > MAX_DEPTH || leaf_hashes.len() > 1usize << depth {
            return None;
        }
        let mut layer = leaf_hashes.to_vec();
        layer.resize(1 << depth, F::zero());
        let mut levels = vec![layer];
        for _ in 0..depth {
            let prev = levels.last().expect("non-empty");
            let next = prev.chunks(2).map(|p| hash_node(cfg, p[0], p[1])).collect();
            levels.push(next);
        }
        Some(MerkleTree { levels })
    }
}

/// The root reached from `leaf` at position `index` along `path`.
pub fn root_from_path<F: PrimeField + Absorb>(
    cfg: &PoseidonConfig<F>,
    index: usize,
    leaf: F,
    path: &[F],
) -> F {
    let mut cur = leaf;
    for (level, sibling) in path.iter().enumerate() {
        cur = if (index >> level) & 1 == 1 {
            hash_node(cfg, *sibling, cur)
        } else {
            hash_node(cfg, cur, *sibling)
        };
    }
    cur
}

/// Checks that `leaf` sits at `index` of the depth-`path.len()` tree with root `root`.
pub fn verify_path<F: PrimeField + Absorb>(
    cfg: &PoseidonConfig<F>,
    root: F,
    index: usize,
    leaf: F,
    path: &[F],
) -> bool {
    index >> path.len() == 0 && root_from_path(cfg, index, leaf, path) == root
}

/// In-circuit [`hash_leaf`].
pub fn hash_leaf_var<F: PrimeField>(
    cs: ConstraintSystemRef<F>,
    cfg: &PoseidonConfig<F>,
    items: &[FpVar<F>],
) -> Result<FpVar<F>, SynthesisError> {
    let mut sponge = PoseidonSpongeVar::new(cs, cfg);
    sponge.absorb(&items.to_vec())?;
    Ok(sponge.squeeze_field_elements(1)?.remove(0))
}

/// In-circuit [`hash_node`].
pub fn hash_node_var<F: PrimeField>(
    cs: ConstraintSystemRef<F>,
    cfg: &PoseidonConfig<F>,
    left: &FpVar<F>,
    right: &FpVar<F>,
) -> Result<FpVar<F>, SynthesisError> {
    let mut sponge = PoseidonSpongeVar::new(cs, cfg);
    sponge.absorb(&vec![left.clone(), right.clone()])?;
    Ok(sponge.squeeze_field_elements(1)?.remove(0))
}

/// In-circuit [`root_from_path`]; `index_bits` are the little-endian bits of the position.
pub fn root_from_path_var<F: PrimeField>(
    cs: ConstraintSystemRef<F>,
    cfg: &PoseidonConfig<F>,
    index_bits: &[Boolean<F>],
    leaf: &FpVar<F>,
    path: &[FpVar<F>],
) -> Result<FpVar<F>, SynthesisError> {
    if index_bits.len() != path.len() {
        return Err(SynthesisError::Unsatisfiable);
    }
    let mut cur = leaf.clone();
    for (bit, sibling) in index_bits.iter().zip(path) {
        // One select per level: the other child is what is left of the pair's sum.
        let left = FpVar::conditionally_select(bit, sibling, &cur)?;
        let right = &cur + sibling - &left;
        cur = hash_node_var(cs.clone(), cfg, &left, &right)?;
    }
    Ok(cur)
}

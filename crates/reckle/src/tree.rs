//! The full Merkle tree over `n = 2^ℓ` leaves (native), which the prover keeps to answer
//! sibling hashes and to update leaves in `O(ℓ)` hashes.

use rayon::prelude::*;

use crate::hash::{hash_pair, leaf_hash, Digest};
use crate::{Error, Params};

/// All node hashes `C_v`, level by level (`levels[0]` are the leaf hashes, `levels[ℓ]` the root).
#[derive(Clone, Debug)]
pub struct Tree {
    params: Params,
    values: Vec<u64>,
    levels: Vec<Vec<Digest>>,
}

impl Tree {
    /// Builds the tree over `values` (exactly `2^ℓ` of them). Parallel over each level.
    pub fn build(params: Params, values: Vec<u64>) -> Result<Self, Error> {
        params.check()?;
        if values.len() as u64 != params.num_leaves() {
            return Err(Error::input(format!(
                "leaves: expected {} values for log_n = {}, got {}",
                params.num_leaves(),
                params.log_n,
                values.len()
            )));
        }
        let leaves: Vec<Digest> =
            values.par_iter().enumerate().map(|(i, &v)| leaf_hash(i as u64, v)).collect();
        let mut levels = vec![leaves];
        for _ in 0..params.log_n {
            let below = levels.last().expect("at least the leaf level");
            let next: Vec<Digest> =
                below.par_chunks(2).map(|p| hash_pair(&p[0], &p[1])).collect();
            levels.push(next);
        }
        Ok(Self { params, values, levels })
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// The commitment `C`.
    pub fn root(&self) -> Digest {
        self.levels[self.params.log_n as usize][0]
    }

    pub fn values(&self) -> &[u64] {
        &self.values
    }

    pub fn value(&self, index: u64) -> Result<u64, Error> {
        self.values.get(index as usize).copied().ok_or_else(|| {
            Error::input(format!("index {index} is outside the tree of {} leaves", self.values.len()))
        })
    }

    /// Merkle hash `C_v` of node `index` at `level`.
    pub fn hash(&self, level: u32, index: u64) -> Result<Digest, Error> {
        self.levels
            .get(level as usize)
            .and_then(|l| l.get(index as usize))
            .copied()
            .ok_or_else(|| Error::input(format!("no node {index} at level {level}")))
    }

    /// Sets `a_index = value` and rehashes its path (`ℓ` hashes).
    pub fn set(&mut self, index: u64, value: u64) -> Result<(), Error> {
        if index >= self.params.num_leaves() {
            return Err(Error::input(format!(
                "index {index} is outside the tree of {} leaves",
                self.params.num_leaves()
            )));
        }
        self.values[index as usize] = value;
        self.levels[0][index as usize] = leaf_hash(index, value);
        let mut i = index as usize;
        for l in 1..=self.params.log_n as usize {
            i >>= 1;
            let (left, right) = (self.levels[l - 1][2 * i], self.levels[l - 1][2 * i + 1]);
            self.levels[l][i] = hash_pair(&left, &right);
        }
        Ok(())
    }

    /// Values of the leaves in bucket `b` (`2^q` of them).
    pub fn bucket_values(&self, bucket: u64) -> Result<&[u64], Error> {
        let size = self.params.bucket_size() as usize;
        let start = (bucket as usize).checked_mul(size).filter(|s| *s < self.values.len());
        match start {
            Some(s) => Ok(&self.values[s..s + size]),
            None => Err(Error::input(format!(
                "bucket {bucket} is outside the tree ({} buckets)",
                self.params.num_buckets()
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_matches_rebuild() {
        let p = Params::new(5, 2).unwrap();
        let vals: Vec<u64> = (0..32).map(|i| i * 3 + 1).collect();
        let mut t = Tree::build(p, vals.clone()).unwrap();
        t.set(13, 99).unwrap();
        let mut vals2 = vals;
        vals2[13] = 99;
        let t2 = Tree::build(p, vals2).unwrap();
        assert_eq!(t.root(), t2.root());
        assert!(t.set(32, 1).is_err());
    }

    #[test]
    fn wrong_leaf_count_is_rejected() {
        let p = Params::new(3, 1).unwrap();
        assert!(Tree::build(p, vec![0; 7]).is_err());
    }
}

//! The random satisfiable R1CS instances the examples measure on, one generator for all.
//!
//! Each row of `A` and `B` has three random nonzeros, row `i` of `C` is `(A·z)_i·(B·z)_i` on
//! the constant column, with one public input and `z = (io, 1, w)` random.

// Each example reads the parts it needs.
#![allow(dead_code)]

use ark_bls12_381::Fr;
use ark_ff::{One, UniformRand};
use rand::Rng;
use rand_chacha::ChaCha20Rng;
use testudo::r1cs::Entry;
use testudo::R1cs;

/// One row of a matrix: `(column, coefficient)` in the caller's layout `z = (io, 1, w)`.
pub type Row = Vec<(usize, Fr)>;

/// A satisfiable instance kept in both forms: Testudo's [`R1cs`] and the rows of `A, B, C`.
pub struct Instance {
    pub num_io: usize,
    pub io: Vec<Fr>,
    pub w: Vec<Fr>,
    /// `rows[0]`, `rows[1]`, `rows[2]`: the rows of `A`, `B`, `C`.
    pub rows: [Vec<Row>; 3],
    pub r1cs: R1cs<Fr>,
}

impl Instance {
    pub fn random(m: usize, rng: &mut ChaCha20Rng) -> Self {
        let (num_io, num_w) = (1, m - 1);
        let cols = num_io + 1 + num_w;
        let z: Vec<Fr> = (0..cols)
            .map(|j| {
                if j == num_io {
                    Fr::one()
                } else {
                    Fr::rand(rng)
                }
            })
            .collect();
        let mut rows: [Vec<Row>; 3] = Default::default();
        for _ in 0..m {
            let mut row = || {
                let r: Row = (0..3)
                    .map(|_| (rng.gen_range(0..cols), Fr::rand(rng)))
                    .collect();
                let dot: Fr = r.iter().map(|(j, v)| *v * z[*j]).sum();
                (r, dot)
            };
            let (a, az) = row();
            let (b, bz) = row();
            rows[0].push(a);
            rows[1].push(b);
            rows[2].push(vec![(num_io, az * bz)]);
        }
        let entries = |mat: &[Row]| -> Vec<Entry<Fr>> {
            mat.iter()
                .enumerate()
                .flat_map(|(i, r)| r.iter().map(move |&(j, v)| (i, j, v)))
                .collect()
        };
        let [a, b, c] = rows.each_ref().map(|mat| entries(mat));
        let r1cs = R1cs::new(m, num_io, num_w, a, b, c).expect("a well-formed instance");
        Instance {
            num_io,
            io: z[..num_io].to_vec(),
            w: z[num_io + 1..].to_vec(),
            rows,
            r1cs,
        }
    }
}

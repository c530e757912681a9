//! R1CS instances `(A, B, C)` with `z = (io, 1, w)`, their digest, and the multilinear view of
//! them that Spartan uses.
//!
//! **Caller's layout.** Column `j` of `A`, `B`, `C` multiplies `z_j` with
//! `z = (io_0, …, io_{ℓ−1}, 1, w_0, …, w_{n_w−1})`, as in the paper (§2.5). Entries are
//! `(row, col, value)`; repeated positions add up.
//!
//! **Spartan's layout (internal).** Let `h = 2^{s_y−1}` be the least power of two with
//! `h ≥ n_w` and `h ≥ ℓ + 1`. The vector Spartan commits to and sumchecks over is
//! `ẑ = (w, 0…0 | io, 1, 0…0)` of length `2h`: the witness padded to `h`, then the public part
//! `u = (io, 1)` padded to `h`. Its extension in `s_y` variables is therefore
//!
//! `z̃(y_0, y') = (1 − y_0)·w̃(y') + y_0·ũ(y')`, `y' ∈ F^{s_y−1}`,
//!
//! so the prover commits to `w̃` alone and the verifier evaluates `ũ` itself from `io`, which
//! is what binds the public input. Rows are padded with zero constraints to `2^{s_x}`. The
//! matrices are re-indexed to this layout once, in [`R1cs::new`].

use ark_ff::PrimeField;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};

use crate::poly::checked_pow2;
use crate::Error;

/// `(row, col, value)`: one nonzero of a sparse matrix, in the caller's column layout.
pub type Entry<F> = (usize, usize, F);

/// A 32-byte BLAKE2b digest of an R1CS instance (see [`R1cs::digest`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct R1csDigest(pub [u8; 32]);

/// A checked R1CS instance, re-indexed to Spartan's layout.
#[derive(Clone, Debug)]
pub struct R1cs<F: PrimeField> {
    num_constraints: usize,
    num_io: usize,
    num_witness: usize,
    /// `s_x`: rows are `2^{s_x}` after padding.
    log_rows: usize,
    /// `s_y`: columns of `ẑ` are `2^{s_y}`; the witness half is `2^{s_y − 1}`.
    log_cols: usize,
    /// `A`, `B`, `C` with columns in Spartan's layout.
    matrices: [Vec<Entry<F>>; 3],
    digest: R1csDigest,
}

/// The names of the three matrices, for errors.
const NAMES: [&str; 3] = ["A", "B", "C"];

impl<F: PrimeField> R1cs<F> {
    /// Checks every entry's position and builds the instance: `num_constraints` rows and
    /// `num_io + 1 + num_witness` columns in the caller's layout.
    pub fn new(
        num_constraints: usize,
        num_io: usize,
        num_witness: usize,
        a: Vec<Entry<F>>,
        b: Vec<Entry<F>>,
        c: Vec<Entry<F>>,
    ) -> Result<Self, Error> {
        let cols = num_io
            .checked_add(1)
            .and_then(|x| x.checked_add(num_witness))
            .ok_or(Error::TooLarge {
                field: "num_io + 1 + num_witness",
                value: usize::MAX,
            })?;
        let pow2 = |n: usize, field| {
            n.checked_next_power_of_two()
                .ok_or(Error::TooLarge { field, value: n })
        };
        let half = pow2(num_witness.max(num_io + 1), "columns")?;
        let log_cols = half.trailing_zeros() as usize + 1;
        checked_pow2(log_cols, "columns")?;
        let log_rows = pow2(num_constraints.max(1), "num_constraints")?.trailing_zeros() as usize;

        let digest = digest(num_constraints, num_io, num_witness, [&a, &b, &c]);
        let mut matrices = [a, b, c];
        for (m, name) in matrices.iter_mut().zip(NAMES) {
            for (entry, (row, col, _)) in m.iter_mut().enumerate() {
                if *row >= num_constraints || *col >= cols {
                    return Err(Error::EntryOutOfRange {
                        matrix: name,
                        entry,
                        row: *row,
                        col: *col,
                        rows: num_constraints,
                        cols,
                    });
                }
                *col = if *col <= num_io {
                    half + *col
                } else {
                    *col - num_io - 1
                };
            }
        }
        Ok(Self {
            num_constraints,
            num_io,
            num_witness,
            log_rows,
            log_cols,
            matrices,
            digest,
        })
    }

    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    pub fn num_io(&self) -> usize {
        self.num_io
    }

    pub fn num_witness(&self) -> usize {
        self.num_witness
    }

    /// `s_x`, the outer sumcheck's rounds.
    pub fn log_rows(&self) -> usize {
        self.log_rows
    }

    /// `s_y`, the inner sumcheck's rounds; the committed witness polynomial has `s_y − 1`
    /// variables.
    pub fn log_cols(&self) -> usize {
        self.log_cols
    }

    /// The number of variables of `w̃`, the committed polynomial: `s_y − 1`.
    pub fn witness_vars(&self) -> usize {
        self.log_cols - 1
    }

    /// The instance's digest: BLAKE2b-256 of a tag, `num_constraints`, `num_io`,
    /// `num_witness`, then for `A`, `B`, `C` in turn the entry count and each entry as
    /// `row`, `col` (caller's layout, u64 little-endian) and the value's compressed
    /// serialization. Entry order is part of the digest.
    pub fn digest(&self) -> R1csDigest {
        self.digest
    }

    /// `ẑ = (w, 0…0 | io, 1, 0…0)` (see the module doc), after checking the lengths.
    pub fn z_vector(&self, io: &[F], witness: &[F]) -> Result<Vec<F>, Error> {
        self.check_io(io)?;
        if witness.len() != self.num_witness {
            return Err(Error::Length {
                field: "witness",
                expected: self.num_witness,
                got: witness.len(),
            });
        }
        let half = 1usize << (self.log_cols - 1);
        let mut z = vec![F::zero(); 2 * half];
        z[..witness.len()].copy_from_slice(witness);
        z[half..half + io.len()].copy_from_slice(io);
        z[half + io.len()] = F::one();
        Ok(z)
    }

    /// `u = (io, 1, 0…0)` of length `2^{s_y − 1}`: the public half of `ẑ`.
    pub fn public_vector(&self, io: &[F]) -> Result<Vec<F>, Error> {
        self.check_io(io)?;
        let mut u = vec![F::zero(); 1 << (self.log_cols - 1)];
        u[..io.len()].copy_from_slice(io);
        u[io.len()] = F::one();
        Ok(u)
    }

    fn check_io(&self, io: &[F]) -> Result<(), Error> {
        if io.len() != self.num_io {
            return Err(Error::Length {
                field: "public input (io)",
                expected: self.num_io,
                got: io.len(),
            });
        }
        Ok(())
    }

    /// `(Az, Bz, Cz)` over `ẑ`, each padded to `2^{s_x}` rows.
    pub fn products(&self, z: &[F]) -> [Vec<F>; 3] {
        let rows = 1usize << self.log_rows;
        self.matrices.each_ref().map(|m| {
            let mut out = vec![F::zero(); rows];
            for (r, c, v) in m {
                out[*r] += *v * z[*c];
            }
            out
        })
    }

    /// The first constraint `Az·Bz ≠ Cz` fails at, if any.
    pub fn first_unsatisfied(&self, z: &[F]) -> Option<usize> {
        let [az, bz, cz] = self.products(z);
        (0..self.num_constraints).find(|&i| az[i] * bz[i] != cz[i])
    }

    /// `M_{r_x}(y) = Σ_x eq(r_x, x)·(ρ_A·A(x, y) + ρ_B·B(x, y) + ρ_C·C(x, y))` for every column
    /// `y` of `ẑ`: the table the inner sumcheck runs on. `eq_rx` is `eq(r_x, ·)` over the rows.
    pub fn bind_rows(&self, eq_rx: &[F], rho: [F; 3]) -> Vec<F> {
        let mut out = vec![F::zero(); 1 << self.log_cols];
        for (m, w) in self.matrices.iter().zip(rho) {
            for (r, c, v) in m {
                out[*c] += w * *v * eq_rx[*r];
            }
        }
        out
    }

    /// `ρ_A·Ã(r_x, r_y) + ρ_B·B̃(r_x, r_y) + ρ_C·C̃(r_x, r_y)` from the tables `eq(r_x, ·)` and
    /// `eq(r_y, ·)`: linear in the number of nonzeros (the verifier's cost in this non-SPARK
    /// variant).
    pub fn eval_combined(&self, eq_rx: &[F], eq_ry: &[F], rho: [F; 3]) -> F {
        self.matrices
            .iter()
            .zip(rho)
            .map(|(m, w)| {
                w * m
                    .iter()
                    .map(|(r, c, v)| *v * eq_rx[*r] * eq_ry[*c])
                    .sum::<F>()
            })
            .sum()
    }
}

fn digest<F: PrimeField>(
    num_constraints: usize,
    num_io: usize,
    num_witness: usize,
    matrices: [&Vec<Entry<F>>; 3],
) -> R1csDigest {
    let mut h = Blake2b::<U32>::new();
    h.update(b"testudo/r1cs/v1");
    for n in [num_constraints, num_io, num_witness] {
        h.update((n as u64).to_le_bytes());
    }
    let mut buf = Vec::new();
    for m in matrices {
        h.update((m.len() as u64).to_le_bytes());
        for (r, c, v) in m {
            h.update((*r as u64).to_le_bytes());
            h.update((*c as u64).to_le_bytes());
            buf.clear();
            v.serialize_compressed(&mut buf)
                .expect("serializing into a Vec cannot fail");
            h.update(&buf);
        }
    }
    R1csDigest(h.finalize().into())
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use ark_bls12_381::Fr;

    /// `A`, `B`, `C` of one instance, in the caller's layout.
    pub(crate) type Matrices = [Vec<Entry<Fr>>; 3];

    /// The matrices of a chain of `n ≥ 1` squarings: `v_0 = x`, `v_{i+1} = v_i·v_i` for
    /// `i < n − 1`, and the last constraint `v_{n−1}·v_{n−1} = y`. Columns (caller's layout):
    /// `0 = x`, `1 = y`, `2 = one`, `2 + k = v_k` for `k ≥ 1`.
    pub(crate) fn chain_matrices(n: usize) -> Matrices {
        let one = Fr::from(1u64);
        let v = |i: usize| if i == 0 { 0 } else { 2 + i };
        let a = (0..n).map(|i| (i, v(i), one)).collect();
        let b = (0..n).map(|i| (i, v(i), one)).collect();
        let c = (0..n)
            .map(|i| (i, if i + 1 < n { v(i + 1) } else { 1 }, one))
            .collect();
        [a, b, c]
    }

    /// The squaring chain ([`chain_matrices`]) of `n ≥ 1` constraints from `x`, with
    /// `io = (x, y)` and witness `(v_1, …, v_{n−1})`.
    pub(crate) fn squaring_chain(n: usize, x: u64) -> (R1cs<Fr>, Vec<Fr>, Vec<Fr>) {
        assert!(n >= 1);
        let mut values = vec![Fr::from(x)];
        for _ in 0..n {
            let last = values[values.len() - 1];
            values.push(last * last);
        }
        let [a, b, c] = chain_matrices(n);
        let r1cs = R1cs::new(n, 2, n - 1, a, b, c).unwrap();
        (r1cs, vec![Fr::from(x), values[n]], values[1..n].to_vec())
    }

    #[test]
    fn chain_is_satisfied_and_a_changed_value_is_not() {
        let (r1cs, io, w) = squaring_chain(5, 3);
        let z = r1cs.z_vector(&io, &w).unwrap();
        assert_eq!(r1cs.first_unsatisfied(&z), None);
        let mut w2 = w.clone();
        w2[2] += Fr::from(1u64);
        let z = r1cs.z_vector(&io, &w2).unwrap();
        assert_eq!(r1cs.first_unsatisfied(&z), Some(2));
    }

    #[test]
    fn layout_puts_the_witness_first_and_io_then_one_second() {
        let (r1cs, io, w) = squaring_chain(3, 2);
        // n_w = 2, ℓ + 1 = 3: half = 4, s_y = 3.
        assert_eq!(r1cs.log_cols(), 3);
        let z = r1cs.z_vector(&io, &w).unwrap();
        let zero = Fr::from(0u64);
        assert_eq!(
            z,
            vec![w[0], w[1], zero, zero, io[0], io[1], Fr::from(1u64), zero]
        );
    }

    #[test]
    fn bad_shapes_are_errors_naming_the_field() {
        let one = Fr::from(1u64);
        assert!(matches!(
            R1cs::new(2, 1, 1, vec![(2, 0, one)], vec![], vec![]),
            Err(Error::EntryOutOfRange { matrix: "A", .. })
        ));
        assert!(matches!(
            R1cs::new(2, 1, 1, vec![], vec![], vec![(0, 3, one)]),
            Err(Error::EntryOutOfRange { matrix: "C", .. })
        ));
        let (r1cs, io, w) = squaring_chain(4, 2);
        assert!(matches!(
            r1cs.z_vector(&io[..1], &w),
            Err(Error::Length {
                field: "public input (io)",
                ..
            })
        ));
        assert!(matches!(
            r1cs.z_vector(&io, &w[1..]),
            Err(Error::Length {
                field: "witness",
                ..
            })
        ));
    }

    #[test]
    fn digest_depends_on_every_part() {
        let one = Fr::from(1u64);
        let base = || -> Matrices { [vec![(0, 0, one)], vec![(0, 1, one)], vec![(0, 2, one)]] };
        let d = |n, io, w, [a, b, c]: Matrices| R1cs::new(n, io, w, a, b, c).unwrap().digest();
        let d0 = d(1, 1, 1, base());
        assert_eq!(d0, d(1, 1, 1, base()));
        assert_ne!(d0, d(2, 1, 1, base()));
        assert_ne!(d0, d(1, 0, 2, base()));
        let [a, b, _] = base();
        assert_ne!(d0, d(1, 1, 1, [a, b, vec![(0, 2, one + one)]]));
        let [a, _, c] = base();
        assert_ne!(d0, d(1, 1, 1, [a, vec![(0, 0, one)], c]));
    }
}

/// Instance builders shared by the tests of this crate.
#[cfg(test)]
pub(crate) mod test_instances {
    use super::*;
    use ark_bls12_381::Fr;
    use ark_ff::UniformRand;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    /// A random satisfiable instance: `m` constraints, `ℓ` public inputs, `n_w` witness
    /// values, all random; each row of `A` and `B` has three random nonzeros and row `i` of
    /// `C` is `(A·z)_i·(B·z)_i` times the constant column, so every constraint holds.
    pub(crate) fn random_satisfiable(
        m: usize,
        num_io: usize,
        num_witness: usize,
        seed: u64,
    ) -> (R1cs<Fr>, Vec<Fr>, Vec<Fr>) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let io: Vec<Fr> = (0..num_io).map(|_| Fr::rand(&mut rng)).collect();
        let w: Vec<Fr> = (0..num_witness).map(|_| Fr::rand(&mut rng)).collect();
        let cols = num_io + 1 + num_witness;
        let z_at = |j: usize| {
            if j < num_io {
                io[j]
            } else if j == num_io {
                Fr::from(1u64)
            } else {
                w[j - num_io - 1]
            }
        };
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..m {
            let mut row = |mat: &mut Vec<Entry<Fr>>| {
                let mut acc = Fr::from(0u64);
                for _ in 0..3 {
                    let (j, v) = (rng.gen_range(0..cols), Fr::rand(&mut rng));
                    acc += v * z_at(j);
                    mat.push((i, j, v));
                }
                acc
            };
            let az = row(&mut a);
            let bz = row(&mut b);
            c.push((i, num_io, az * bz));
        }
        let r1cs = R1cs::new(m, num_io, num_witness, a, b, c).unwrap();
        (r1cs, io, w)
    }
}

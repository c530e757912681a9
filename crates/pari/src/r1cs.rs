//! The R1CS front end: synthesize an arkworks [`ConstraintSynthesizer`] and convert its R1CS to
//! the square R1CS (SR1CS) Pari proves, with instance outlining. Shared by every proof system
//! that starts from R1CS.
//!
//! Variable layout of the SR1CS vector `z` (length `L + L + W + M`):
//! `[0, L)` the instance (`z_0 = 1`, then the `L − 1` public inputs); `[L, 2L)` the witness
//! copies `x'_j` of the instance; `[2L, 2L + W)` the R1CS witness; `[2L + W, 2L + W + M)` one
//! square variable `s_t` per R1CS constraint that needs two rows (`M` of them).
//!
//! Rows, **square-aware**: every instance index is first replaced by its copy (so the constant
//! `1` is the copy `x'_0`, forced to 1 by its outlined row). Then R1CS constraint `a·b = c`
//! becomes
//!
//! * **one row** when it is linear or a square:
//!   - `a` or `b` empty (`0 = c`), or a constant `λ·x'_0` (`λb = c`): `(0)² = c − λb`;
//!   - `a = λ·b` as linear combinations (a square, `λb² = c`; `a = b` is the common case, as in
//!     `x² = y` or Poseidon's S-box): `(b)² = λ⁻¹c`;
//! * **two rows** otherwise, with a new square variable `s_t`: `(a − b)² = s_t` and
//!   `(a + b)² = 4c + s_t` (since `(a+b)² − (a−b)² = 4ab`);
//!
//! each an identity equivalent to `a·b = c` once `x'_0 = 1`. Then the last `L` rows are the
//! outlined rows `(z_j − x'_j)² = 0`, `j < L`. A circom circuit's linear constraints and an
//! S-box's squarings thus cost one row instead of two.

use std::collections::HashMap;
use std::io::{Read, Write};

use ark_ff::PrimeField;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, OptimizationGoal, SynthesisMode, R1CS_PREDICATE_LABEL,
};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, SerializationError, Valid, Validate};

use crate::Error;

/// A sparse row: `(coefficient, variable index)` pairs.
pub type Row<F> = Vec<(F, usize)>;

/// A sparse matrix in compressed rows, with its coefficients interned: 8 bytes a term (a
/// 32-bit column and a 32-bit index into the table of distinct coefficients) where a
/// [`Row`] takes 56 on a 381-bit field. A circuit's coefficients repeat (±1, 2, 4, a few
/// constants), so the table stays small: the Hekaton wrap at k = 4 has 10.9M terms.
///
/// Its canonical encoding is a `Vec<Row<F>>`'s (row count, then each row's length and
/// `(coefficient, index as u64)` pairs), which version 1 proving keys hold; version 2 keys hold
/// the compact encoding ([`SparseRows::serialize_compact`]).
#[derive(Clone, Debug, Default)]
pub struct SparseRows<F: PrimeField> {
    /// Row `j`'s terms are `starts[j]..starts[j + 1]` (`starts[0] = 0`).
    starts: Vec<usize>,
    cols: Vec<u32>,
    coefs: Vec<u32>,
    values: Vec<F>,
    /// Coefficient → its index in `values`, while rows are pushed (emptied by
    /// [`SparseRows::shrink`]).
    index: HashMap<F, u32>,
}

impl<F: PrimeField> SparseRows<F> {
    pub fn new() -> Self {
        SparseRows { starts: vec![0], cols: Vec::new(), coefs: Vec::new(), values: Vec::new(), index: HashMap::new() }
    }

    /// Appends a row. Refuses a variable index or a term count past 32 bits (no circuit that
    /// fits in memory has them).
    pub fn push_row(&mut self, row: impl IntoIterator<Item = (F, usize)>) -> Result<(), Error> {
        if self.starts.is_empty() {
            self.starts.push(0);
        }
        for (c, v) in row {
            let col = u32::try_from(v).map_err(|_| Error::Malformed(format!("variable index {v} does not fit 32 bits")))?;
            let coef = match self.index.get(&c) {
                Some(&k) => k,
                None => {
                    let k = u32::try_from(self.values.len())
                        .map_err(|_| Error::Malformed("more than 2^32 distinct coefficients".into()))?;
                    self.values.push(c);
                    self.index.insert(c, k);
                    k
                }
            };
            self.cols.push(col);
            self.coefs.push(coef);
        }
        self.starts.push(self.cols.len());
        Ok(())
    }

    /// Drops the building index and spare capacity once every row is in.
    pub fn shrink(&mut self) {
        self.index = HashMap::new();
        self.starts.shrink_to_fit();
        self.cols.shrink_to_fit();
        self.coefs.shrink_to_fit();
        self.values.shrink_to_fit();
    }

    /// Builds from rows (each row's order kept).
    pub fn from_rows(rows: impl IntoIterator<Item = Row<F>>) -> Result<Self, Error> {
        let mut m = Self::new();
        for r in rows {
            m.push_row(r)?;
        }
        m.shrink();
        Ok(m)
    }

    /// The rows as vectors (for tests and tools that edit a matrix).
    pub fn to_rows(&self) -> Vec<Row<F>> {
        (0..self.len()).map(|j| self.row(j).collect()).collect()
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.starts.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of terms in all rows.
    pub fn num_terms(&self) -> usize {
        self.cols.len()
    }

    /// Number of distinct coefficients.
    pub fn num_coefficients(&self) -> usize {
        self.values.len()
    }

    /// Number of terms in row `j`.
    pub fn row_len(&self, j: usize) -> usize {
        self.starts[j + 1] - self.starts[j]
    }

    /// Row `j`'s `(coefficient, variable index)` pairs.
    pub fn row(&self, j: usize) -> impl ExactSizeIterator<Item = (F, usize)> + Clone + '_ {
        let range = self.starts[j]..self.starts[j + 1];
        self.cols[range.clone()].iter().zip(&self.coefs[range]).map(|(&v, &c)| (self.values[c as usize], v as usize))
    }

    /// Every row, in order.
    pub fn rows(&self) -> impl Iterator<Item = impl ExactSizeIterator<Item = (F, usize)> + Clone + '_> + '_ {
        (0..self.len()).map(|j| self.row(j))
    }

    /// `⟨row j, z⟩`.
    pub fn eval(&self, j: usize, z: &[F]) -> F {
        let range = self.starts[j]..self.starts[j + 1];
        let mut acc = F::zero();
        for (&v, &c) in self.cols[range.clone()].iter().zip(&self.coefs[range]) {
            let c = &self.values[c as usize];
            if c.is_one() {
                acc += z[v as usize];
            } else {
                acc += *c * z[v as usize];
            }
        }
        acc
    }

    /// Bytes its rows hold in memory (for cache budgets).
    pub fn heap_size(&self) -> usize {
        self.starts.len() * std::mem::size_of::<usize>()
            + (self.cols.len() + self.coefs.len()) * std::mem::size_of::<u32>()
            + self.values.len() * std::mem::size_of::<F>()
    }
}

/// The compact encoding of [`SparseRows`] (in proving keys from version 2 on; see
/// [`crate::ProvingKey::to_bytes`]): `rows`, `terms` and `distinct` as u64, the `distinct`
/// coefficients, each row's length as u32, then each term's column and coefficient index as u32.
/// 8 bytes a term against 56 in the rows encoding on a 381-bit field.
impl<F: PrimeField> SparseRows<F> {
    pub(crate) fn serialize_compact<W: Write>(&self, mut w: W, compress: Compress) -> Result<(), SerializationError> {
        (self.len() as u64).serialize_with_mode(&mut w, compress)?;
        (self.num_terms() as u64).serialize_with_mode(&mut w, compress)?;
        (self.values.len() as u64).serialize_with_mode(&mut w, compress)?;
        for v in &self.values {
            v.serialize_with_mode(&mut w, compress)?;
        }
        for j in 0..self.len() {
            u32::try_from(self.row_len(j)).map_err(|_| SerializationError::NotEnoughSpace)?.serialize_with_mode(&mut w, compress)?;
        }
        for (&col, &coef) in self.cols.iter().zip(&self.coefs) {
            col.serialize_with_mode(&mut w, compress)?;
            coef.serialize_with_mode(&mut w, compress)?;
        }
        Ok(())
    }

    pub(crate) fn compact_size(&self, compress: Compress) -> usize {
        24 + self.values.len() * F::zero().serialized_size(compress) + 4 * self.len() + 8 * self.num_terms()
    }

    /// Reads [`SparseRows::serialize_compact`]'s bytes. The counts come from the bytes: nothing
    /// is reserved on their word (vectors grow as the items arrive, so a lying count ends in a
    /// read error, not an allocation); the row lengths must add up to the term count and every
    /// coefficient index must name a coefficient.
    pub(crate) fn deserialize_compact<R: Read>(mut r: R, compress: Compress) -> Result<Self, SerializationError> {
        let rows = u64::deserialize_with_mode(&mut r, compress, Validate::Yes)?;
        let terms = u64::deserialize_with_mode(&mut r, compress, Validate::Yes)?;
        let distinct = u64::deserialize_with_mode(&mut r, compress, Validate::Yes)?;
        if distinct > u64::from(u32::MAX) + 1 {
            return Err(SerializationError::InvalidData);
        }
        let mut values = Vec::new();
        for _ in 0..distinct {
            values.push(F::deserialize_with_mode(&mut r, compress, Validate::Yes)?);
        }
        let mut starts = vec![0usize];
        let mut total = 0u64;
        for _ in 0..rows {
            total += u64::from(u32::deserialize_with_mode(&mut r, compress, Validate::Yes)?);
            if total > terms {
                return Err(SerializationError::InvalidData);
            }
            starts.push(usize::try_from(total).map_err(|_| SerializationError::InvalidData)?);
        }
        if total != terms {
            return Err(SerializationError::InvalidData);
        }
        let (mut cols, mut coefs) = (Vec::new(), Vec::new());
        for _ in 0..terms {
            cols.push(u32::deserialize_with_mode(&mut r, compress, Validate::Yes)?);
            let coef = u32::deserialize_with_mode(&mut r, compress, Validate::Yes)?;
            if u64::from(coef) >= distinct {
                return Err(SerializationError::InvalidData);
            }
            coefs.push(coef);
        }
        let mut m = SparseRows { starts, cols, coefs, values, index: HashMap::new() };
        m.shrink();
        Ok(m)
    }
}

impl<F: PrimeField> Sr1cs<F> {
    /// The SR1CS in proving keys from version 2 on: `A` and `B` compact
    /// ([`SparseRows::serialize_compact`]), then `L`, `W`, `M` as u64.
    pub(crate) fn serialize_compact<W: Write>(&self, mut w: W, compress: Compress) -> Result<(), SerializationError> {
        self.a.serialize_compact(&mut w, compress)?;
        self.b.serialize_compact(&mut w, compress)?;
        for v in [self.num_instance, self.r1cs_witness, self.r1cs_constraints] {
            v.serialize_with_mode(&mut w, compress)?;
        }
        Ok(())
    }

    pub(crate) fn compact_size(&self, compress: Compress) -> usize {
        self.a.compact_size(compress) + self.b.compact_size(compress) + 24
    }

    pub(crate) fn deserialize_compact<R: Read>(mut r: R, compress: Compress) -> Result<Self, SerializationError> {
        Ok(Sr1cs {
            a: SparseRows::deserialize_compact(&mut r, compress)?,
            b: SparseRows::deserialize_compact(&mut r, compress)?,
            num_instance: u64::deserialize_with_mode(&mut r, compress, Validate::Yes)?,
            r1cs_witness: u64::deserialize_with_mode(&mut r, compress, Validate::Yes)?,
            r1cs_constraints: u64::deserialize_with_mode(&mut r, compress, Validate::Yes)?,
        })
    }
}

impl<F: PrimeField> PartialEq for SparseRows<F> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len()
            && self.num_terms() == other.num_terms()
            && (0..self.len()).all(|j| self.row(j).eq(other.row(j)))
    }
}

impl<F: PrimeField> Eq for SparseRows<F> {}

impl<F: PrimeField> CanonicalSerialize for SparseRows<F> {
    fn serialize_with_mode<W: Write>(&self, mut w: W, compress: Compress) -> Result<(), SerializationError> {
        (self.len() as u64).serialize_with_mode(&mut w, compress)?;
        for j in 0..self.len() {
            (self.row_len(j) as u64).serialize_with_mode(&mut w, compress)?;
            for (c, v) in self.row(j) {
                c.serialize_with_mode(&mut w, compress)?;
                (v as u64).serialize_with_mode(&mut w, compress)?;
            }
        }
        Ok(())
    }

    fn serialized_size(&self, compress: Compress) -> usize {
        8 * (1 + self.len()) + self.num_terms() * (F::zero().serialized_size(compress) + 8)
    }
}

impl<F: PrimeField> Valid for SparseRows<F> {
    fn check(&self) -> Result<(), SerializationError> {
        Ok(())
    }
}

impl<F: PrimeField> CanonicalDeserialize for SparseRows<F> {
    fn deserialize_with_mode<R: Read>(mut r: R, compress: Compress, validate: Validate) -> Result<Self, SerializationError> {
        let rows = u64::deserialize_with_mode(&mut r, compress, validate)?;
        let mut m = Self::new();
        // Lengths come from the bytes: reserve nothing on their word, grow as terms arrive.
        for _ in 0..rows {
            let len = u64::deserialize_with_mode(&mut r, compress, validate)?;
            let mut row = Vec::new();
            for _ in 0..len {
                let c = F::deserialize_with_mode(&mut r, compress, validate)?;
                let v = u64::deserialize_with_mode(&mut r, compress, validate)?;
                row.push((c, usize::try_from(v).map_err(|_| SerializationError::InvalidData)?));
            }
            m.push_row(row).map_err(|_| SerializationError::InvalidData)?;
        }
        m.shrink();
        Ok(m)
    }
}

/// A square R1CS with outlined instance.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Sr1cs<F: PrimeField> {
    pub a: SparseRows<F>,
    pub b: SparseRows<F>,
    /// `L`: instance length, including the constant 1.
    pub num_instance: u64,
    /// `W`: witness variables of the original R1CS.
    pub r1cs_witness: u64,
    /// `M`: square variables `s_t`, one per R1CS constraint that takes two rows.
    pub r1cs_constraints: u64,
}

/// `⟨row, z⟩`.
pub fn eval_row<F: PrimeField>(row: &[(F, usize)], z: &[F]) -> F {
    row.iter().map(|(c, i)| *c * z[*i]).sum()
}

impl<F: PrimeField> Sr1cs<F> {
    /// Bytes its matrices hold in memory.
    pub fn heap_size(&self) -> usize {
        self.a.heap_size() + self.b.heap_size()
    }

    /// Number of SR1CS rows: the constraint rows, then `L` outlined rows.
    pub fn num_rows(&self) -> usize {
        self.a.len()
    }

    /// Number of SR1CS witness variables `L + W + M`.
    pub fn num_witness(&self) -> usize {
        // Saturating: a key read from outside is checked by `ProvingKey::check_shape` first.
        self.num_instance.saturating_add(self.r1cs_witness).saturating_add(self.r1cs_constraints) as usize
    }

    /// Total variables `2L + W + M`.
    pub fn num_variables(&self) -> usize {
        (self.num_instance as usize).saturating_add(self.num_witness())
    }

    /// First outlined row: row `start + j` carries instance variable `j` (the last `L` rows).
    pub fn instance_row_start(&self) -> usize {
        self.a.len().saturating_sub(self.num_instance as usize)
    }

    /// Converts R1CS matrices `(A, B, C)` over `L` instance and `W` witness variables. Takes
    /// them by value: each R1CS row is freed as soon as its SR1CS rows are made, so the two
    /// forms of a large circuit (tens of millions of terms for the Hekaton wrap) are never both
    /// whole in memory.
    pub fn from_r1cs(a: Vec<Row<F>>, b: Vec<Row<F>>, c: Vec<Row<F>>, num_instance: usize, num_witness: usize) -> Result<Self, Error> {
        let l = num_instance;
        // Instance index j → its copy L + j; witness index L + k → 2L + k.
        let map = |mut row: Row<F>| -> Row<F> {
            for (_, i) in row.iter_mut() {
                *i += l;
            }
            combine(row)
        };
        let one_copy = l; // the copy x'_0 of the constant 1
        let s_base = 2 * l + num_witness;
        let four = F::from(4u64);
        let mut ra = SparseRows::new();
        let mut rb = SparseRows::new();
        let mut squares = 0usize;
        for ((ai, bi), ci) in a.into_iter().zip(b).zip(c) {
            let (ai, bi, ci) = (map(ai), map(bi), map(ci));
            let constant = |r: &Row<F>| -> Option<F> {
                match r.as_slice() {
                    [] => Some(F::zero()),
                    [(coef, v)] if *v == one_copy => Some(*coef),
                    _ => None,
                }
            };
            // (0)² = c − λ·other when one factor is a constant λ (or empty: λ = 0).
            let linear = constant(&ai).map(|la| (la, &bi)).or_else(|| constant(&bi).map(|lb| (lb, &ai)));
            if let Some((lambda, other)) = linear {
                let mut row = ci;
                row.extend(other.iter().map(|&(coef, v)| (-(lambda * coef), v)));
                ra.push_row([])?;
                rb.push_row(combine(row))?;
                continue;
            }
            // (b)² = λ⁻¹·c when a = λ·b.
            if let Some(lambda) = proportional(&ai, &bi) {
                let inv = lambda.inverse().expect("a proportionality factor is nonzero");
                let mut rhs = ci;
                for (coef, _) in rhs.iter_mut() {
                    *coef *= inv;
                }
                ra.push_row(bi)?;
                rb.push_row(rhs)?;
                continue;
            }
            let s = s_base + squares;
            squares += 1;
            let mut diff = Vec::with_capacity(ai.len() + bi.len());
            diff.extend_from_slice(&ai);
            diff.extend(bi.iter().map(|&(coef, v)| (-coef, v)));
            let mut sum = ai;
            sum.extend(bi);
            let mut rhs = ci;
            for (coef, _) in rhs.iter_mut() {
                *coef *= four;
            }
            rhs.push((F::one(), s));
            ra.push_row(combine(diff))?;
            rb.push_row([(F::one(), s)])?;
            ra.push_row(combine(sum))?;
            rb.push_row(combine(rhs))?;
        }
        for j in 0..l {
            ra.push_row([(F::one(), j), (-F::one(), l + j)])?;
            rb.push_row([])?;
        }
        ra.shrink();
        rb.shrink();
        Ok(Sr1cs { a: ra, b: rb, num_instance: l as u64, r1cs_witness: num_witness as u64, r1cs_constraints: squares as u64 })
    }

    /// The SR1CS witness `(x', w, s)` for instance `z_inst` (with the leading 1) and R1CS
    /// witness `w`. Each square variable `s_t` is defined by the first row whose `B` is exactly
    /// `s_t` (its `(a − b)²` row, which the conversion puts first).
    pub fn witness(&self, z_inst: &[F], w: &[F]) -> Vec<F> {
        let l = self.num_instance as usize;
        let mut z = Vec::with_capacity(self.num_variables());
        z.extend_from_slice(z_inst);
        z.extend_from_slice(z_inst);
        z.extend_from_slice(w);
        z.resize(self.num_variables(), F::zero());
        let s_base = 2 * l + w.len();
        let mut set = vec![false; self.r1cs_constraints as usize];
        for j in 0..self.a.len().min(self.b.len()) {
            let mut rb = self.b.row(j);
            if let (1, Some((coef, v))) = (rb.len(), rb.next()) {
                if coef.is_one() && v >= s_base && v - s_base < set.len() && !set[v - s_base] {
                    set[v - s_base] = true;
                    z[v] = self.a.eval(j, &z).square();
                }
            }
        }
        z.split_off(l)
    }
}

/// `λ` with `a = λ·b`, when both are nonempty combinations of the same variables.
fn proportional<F: PrimeField>(a: &Row<F>, b: &Row<F>) -> Option<F> {
    if a.is_empty() || a.len() != b.len() {
        return None;
    }
    let lambda = a[0].0 * b[0].0.inverse()?;
    a.iter().zip(b).all(|(&(ca, va), &(cb, vb))| va == vb && ca == lambda * cb).then_some(lambda)
}

/// Merges repeated variables in a row and drops zero coefficients.
fn combine<F: PrimeField>(mut row: Row<F>) -> Row<F> {
    row.sort_by_key(|&(_, v)| v);
    let mut out: Row<F> = Vec::with_capacity(row.len());
    for (c, v) in row {
        match out.last_mut() {
            Some((acc, last)) if *last == v => *acc += c,
            _ => out.push((c, v)),
        }
    }
    out.retain(|(c, _)| !c.is_zero());
    out.shrink_to_fit();
    out
}

/// Synthesizes `circuit` for setup and returns its SR1CS.
pub fn synthesize_setup<F: PrimeField, C: ConstraintSynthesizer<F>>(circuit: C) -> Result<Sr1cs<F>, Error> {
    synthesize_matrices(circuit, SynthesisMode::Setup)
}

/// [`synthesize_setup`] for circuits whose gadgets need witness values to lay out their
/// constraints (hints computed from values, as in emulated-field arithmetic): synthesizes with
/// the circuit's assignment and keeps the matrices. The matrices must not depend on the
/// assignment: the prover evaluates the key's matrices on its own assignment, so a layout that
/// moved with the witness would leave it unsatisfied.
pub fn synthesize_setup_with_witness<F: PrimeField, C: ConstraintSynthesizer<F>>(circuit: C) -> Result<Sr1cs<F>, Error> {
    synthesize_matrices(circuit, SynthesisMode::Prove { construct_matrices: true, generate_lc_assignments: false })
}

fn synthesize_matrices<F: PrimeField, C: ConstraintSynthesizer<F>>(circuit: C, mode: SynthesisMode) -> Result<Sr1cs<F>, Error> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(mode);
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    let mut matrices = cs.to_matrices()?;
    let m = matrices
        .remove(R1CS_PREDICATE_LABEL)
        .ok_or_else(|| Error::Synthesis("the circuit has no R1CS constraints".into()))?;
    if cs.num_predicates() != 1 || m.len() != 3 {
        return Err(Error::Synthesis("only plain R1CS circuits are supported".into()));
    }
    let (num_instance, num_witness) = (cs.num_instance_variables(), cs.num_witness_variables());
    // The constraint system (its inlined linear combinations are larger than the matrices) is
    // freed before the conversion; the conversion frees each R1CS row as it goes.
    drop(cs);
    let [a, b, c]: [Vec<Row<F>>; 3] = m.try_into().map_err(|_| Error::Synthesis("only plain R1CS circuits are supported".into()))?;
    Sr1cs::from_r1cs(a, b, c, num_instance, num_witness)
}

/// Synthesizes `circuit` with its assignment; returns `(instance with leading 1, witness)`.
pub fn synthesize_assignment<F: PrimeField, C: ConstraintSynthesizer<F>>(circuit: C) -> Result<(Vec<F>, Vec<F>), Error> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Prove { construct_matrices: false, generate_lc_assignments: false });
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    Ok((cs.instance_assignment()?, cs.witness_assignment()?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;

    fn rows() -> Vec<Row<Fr>> {
        vec![
            vec![(Fr::from(1u64), 0), (-Fr::from(1u64), 7)],
            vec![],
            vec![(Fr::from(4u64), 3), (Fr::from(1u64), 5), (-Fr::from(1u64), 9)],
            vec![(Fr::from(123_456_789u64), 2)],
        ]
    }

    /// The compact matrix reads and writes exactly the bytes of the `Vec<Row>` it replaced, so
    /// keys written before it load, and their digests are unchanged.
    #[test]
    fn sparse_rows_encode_as_vectors_of_rows() {
        let m = SparseRows::from_rows(rows()).unwrap();
        assert_eq!((m.len(), m.num_terms(), m.num_coefficients()), (4, 6, 4));
        assert_eq!(m.heap_size(), 5 * 8 + 6 * 8 + 4 * 32);
        assert_eq!(m.to_rows(), rows());
        let z: Vec<Fr> = (0..10u64).map(|i| Fr::from(i * i + 1)).collect();
        for (j, r) in rows().iter().enumerate() {
            assert_eq!(m.eval(j, &z), eval_row(r, &z));
        }
        for compress in [Compress::Yes, Compress::No] {
            let mut ours = Vec::new();
            m.serialize_with_mode(&mut ours, compress).unwrap();
            let mut theirs = Vec::new();
            rows().serialize_with_mode(&mut theirs, compress).unwrap();
            assert_eq!(ours, theirs);
            assert_eq!(m.serialized_size(compress), theirs.len());
            let back = SparseRows::<Fr>::deserialize_with_mode(&ours[..], compress, Validate::Yes).unwrap();
            assert_eq!(back, m);
        }
        // An index past 32 bits is refused on read, not truncated.
        let mut far = rows();
        far[2].push((Fr::from(1u64), 1usize << 32));
        let mut bytes = Vec::new();
        far.serialize_compressed(&mut bytes).unwrap();
        assert!(SparseRows::<Fr>::deserialize_compressed(&bytes[..]).is_err());
        assert!(SparseRows::from_rows(far).is_err());
    }

    #[test]
    fn compact_encoding_reads_back_and_refuses_damage() {
        let m = SparseRows::from_rows(rows()).unwrap();
        for compress in [Compress::Yes, Compress::No] {
            let mut bytes = Vec::new();
            m.serialize_compact(&mut bytes, compress).unwrap();
            assert_eq!(bytes.len(), m.compact_size(compress));
            assert_eq!(SparseRows::<Fr>::deserialize_compact(&bytes[..], compress).unwrap(), m);
            // Every cut is refused.
            for cut in 0..bytes.len() {
                assert!(SparseRows::<Fr>::deserialize_compact(&bytes[..cut], compress).is_err(), "cut at {cut}");
            }
        }
        let mut bytes = Vec::new();
        m.serialize_compact(&mut bytes, Compress::Yes).unwrap();
        let fs = Fr::from(0u64).compressed_size();
        let lens = 24 + 4 * fs;
        let terms = lens + 4 * 4;
        // A coefficient index past the table.
        let mut bad = bytes.clone();
        bad[terms + 4..terms + 8].copy_from_slice(&4u32.to_le_bytes());
        assert!(SparseRows::<Fr>::deserialize_compact(&bad[..], Compress::Yes).is_err());
        // Row lengths that do not add up to the term count, either way.
        for len in [0u32, 3] {
            let mut bad = bytes.clone();
            bad[lens..lens + 4].copy_from_slice(&len.to_le_bytes());
            assert!(SparseRows::<Fr>::deserialize_compact(&bad[..], Compress::Yes).is_err(), "row length {len}");
        }
        // A term count that lies (more terms than the bytes hold).
        let mut bad = bytes.clone();
        bad[8..16].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(SparseRows::<Fr>::deserialize_compact(&bad[..], Compress::Yes).is_err());
    }
}

//! The R1CS front end: synthesize an arkworks [`ConstraintSynthesizer`] and convert its R1CS to
//! the square R1CS (SR1CS) Pari proves, with instance outlining. Shared by every proof system
//! that starts from R1CS.
//!
//! Variable layout of the SR1CS vector `z` (length `L + L + W + M`):
//! `[0, L)` the instance (`z_0 = 1`, then the `L − 1` public inputs); `[L, 2L)` the witness
//! copies `x'_j` of the instance; `[2L, 2L + W)` the R1CS witness; `[2L + W, 2L + W + M)` one
//! square variable `s_i` per R1CS constraint.
//!
//! Rows: for R1CS constraint `i`, row `2i` is `(a_i − b_i)² = s_i` and row `2i+1` is
//! `(a_i + b_i)² = 4c_i + s_i` (since `(a+b)² − (a−b)² = 4ab`), with every instance index
//! replaced by its copy; then row `2M + j` is `(z_j − x'_j)² = 0` for `j < L`.

use ark_ff::PrimeField;
use ark_relations::gr1cs::{
    ConstraintSynthesizer, ConstraintSystem, OptimizationGoal, SynthesisMode, R1CS_PREDICATE_LABEL,
};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::Error;

/// A sparse row: `(coefficient, variable index)` pairs.
pub type Row<F> = Vec<(F, usize)>;

/// A square R1CS with outlined instance.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Sr1cs<F: PrimeField> {
    pub a: Vec<Row<F>>,
    pub b: Vec<Row<F>>,
    /// `L`: instance length, including the constant 1.
    pub num_instance: u64,
    /// `W`: witness variables of the original R1CS.
    pub r1cs_witness: u64,
    /// `M`: constraints of the original R1CS.
    pub r1cs_constraints: u64,
}

/// `⟨row, z⟩`.
pub fn eval_row<F: PrimeField>(row: &[(F, usize)], z: &[F]) -> F {
    row.iter().map(|(c, i)| *c * z[*i]).sum()
}

impl<F: PrimeField> Sr1cs<F> {
    /// Number of SR1CS rows `m = 2M + L`.
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

    /// First outlined row `2M`: row `2M + j` carries instance variable `j`.
    pub fn instance_row_start(&self) -> usize {
        (self.r1cs_constraints as usize).saturating_mul(2)
    }

    /// Converts R1CS matrices `(A, B, C)` over `L` instance and `W` witness variables.
    pub fn from_r1cs(a: &[Row<F>], b: &[Row<F>], c: &[Row<F>], num_instance: usize, num_witness: usize) -> Self {
        let l = num_instance;
        // Instance index j → its copy L + j; witness index L + k → 2L + k.
        let map = |row: &Row<F>| -> Row<F> { row.iter().map(|&(coef, i)| (coef, i + l)).collect() };
        let m = a.len();
        let s_base = 2 * l + num_witness;
        let four = F::from(4u64);
        let mut ra = Vec::with_capacity(2 * m + l);
        let mut rb = Vec::with_capacity(2 * m + l);
        for i in 0..m {
            let (ai, bi, ci) = (map(&a[i]), map(&b[i]), map(&c[i]));
            let mut diff = ai.clone();
            diff.extend(bi.iter().map(|&(coef, v)| (-coef, v)));
            let mut sum = ai;
            sum.extend(bi);
            let mut rhs: Row<F> = ci.iter().map(|&(coef, v)| (coef * four, v)).collect();
            rhs.push((F::one(), s_base + i));
            ra.push(combine(diff));
            rb.push(vec![(F::one(), s_base + i)]);
            ra.push(combine(sum));
            rb.push(combine(rhs));
        }
        for j in 0..l {
            ra.push(vec![(F::one(), j), (-F::one(), l + j)]);
            rb.push(Vec::new());
        }
        Sr1cs { a: ra, b: rb, num_instance: l as u64, r1cs_witness: num_witness as u64, r1cs_constraints: m as u64 }
    }

    /// The SR1CS witness `(x', w, s)` for instance `z_inst` (with the leading 1) and R1CS
    /// witness `w`.
    pub fn witness(&self, z_inst: &[F], w: &[F]) -> Vec<F> {
        let l = self.num_instance as usize;
        let mut z = Vec::with_capacity(self.num_variables());
        z.extend_from_slice(z_inst);
        z.extend_from_slice(z_inst);
        z.extend_from_slice(w);
        z.resize(self.num_variables(), F::zero());
        let s_base = 2 * l + w.len();
        for i in 0..self.r1cs_constraints as usize {
            let d = eval_row(&self.a[2 * i], &z);
            z[s_base + i] = d.square();
        }
        z.split_off(l)
    }
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
    out
}

/// Synthesizes `circuit` for setup and returns its SR1CS.
pub fn synthesize_setup<F: PrimeField, C: ConstraintSynthesizer<F>>(circuit: C) -> Result<Sr1cs<F>, Error> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(SynthesisMode::Setup);
    circuit.generate_constraints(cs.clone())?;
    cs.finalize();
    let matrices = cs.to_matrices()?;
    let m = matrices
        .get(R1CS_PREDICATE_LABEL)
        .ok_or_else(|| Error::Synthesis("the circuit has no R1CS constraints".into()))?;
    if cs.num_predicates() != 1 || m.len() != 3 {
        return Err(Error::Synthesis("only plain R1CS circuits are supported".into()));
    }
    Ok(Sr1cs::from_r1cs(&m[0], &m[1], &m[2], cs.num_instance_variables(), cs.num_witness_variables()))
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

//! The custom gate behind the Keccak gadget: one row holds `num_ops` independent operations of
//! one kind ([`KeccakOp`]) on bits.
//!
//! An operation reads `n` input wires and writes `m` output wires (all routed), and has one
//! constraint per output, `out_j − f_j(inputs) = 0`, where `f_j` is a polynomial that agrees
//! with the operation's Boolean function on `{0, 1}^n`:
//!
//! * `u ⊕ v` is `u + v − 2uv`, nested for [`KeccakOp::Xor3`] (`a ⊕ b ⊕ c`, degree 3) and
//!   [`KeccakOp::Xor5`] (θ's column parity, degree 5);
//! * `a ⊕ (¬b ∧ c)` is `a + t − 2at` with `t = c − bc` ([`KeccakOp::Chi`], degree 3);
//! * [`KeccakOp::ThetaChi`] is one row of the plane at χ: inputs `(A_i, D_i)` for `i ∈ 0..5`,
//!   with `B_i = A_i ⊕ D_i` (the end of θ, before ρ and π moved the bit), and outputs
//!   `B_i ⊕ (¬B_{i+1} ∧ B_{i+2})` (degree 6). The five `B_i` are never wires: each is used
//!   by three outputs of the same row, so computing it inside the constraint saves the wires
//!   and the rows the separate XOR would take.
//!
//! These polynomials take values in `{0, 1}` on `{0, 1}^n`, so outputs are Boolean whenever
//! inputs are: the gate never range-checks, and the gadget range-checks only the bits it takes
//! from outside (see [`super`]). Unused operations of a partly filled row are left at zero by
//! plonky2, and every `f_j(0, …, 0) = 0`, so they satisfy their constraints.

use std::ops::{Add, Mul, Sub};

use anyhow::Result;
use plonky2::field::extension::Extendable;
use plonky2::gates::gate::Gate;
use plonky2::gates::util::StridedConstraintConsumer;
use plonky2::hash::hash_types::RichField;
use plonky2::iop::ext_target::ExtensionTarget;
use plonky2::iop::generator::{GeneratedValues, SimpleGenerator, WitnessGeneratorRef};
use plonky2::iop::target::Target;
use plonky2::iop::witness::{PartitionWitness, Witness, WitnessWrite};
use plonky2::plonk::circuit_builder::CircuitBuilder;
use plonky2::plonk::circuit_data::{CircuitConfig, CommonCircuitData};
use plonky2::plonk::vars::{EvaluationTargets, EvaluationVars, EvaluationVarsBase};
use plonky2::util::serialization::{Buffer, IoError, IoResult, Read, Write};

/// The operations of [`KeccakGate`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeccakOp {
    /// `a ⊕ b ⊕ c`.
    Xor3,
    /// `a ⊕ (¬b ∧ c)` (χ on one bit).
    Chi,
    /// `a ⊕ b ⊕ c ⊕ d ⊕ e` (θ's column parity).
    Xor5,
    /// The end of θ and χ on one row of five bits (see the module doc).
    ThetaChi,
}

impl KeccakOp {
    const ALL: [KeccakOp; 4] = [KeccakOp::Xor3, KeccakOp::Chi, KeccakOp::Xor5, KeccakOp::ThetaChi];

    fn to_byte(self) -> u8 {
        self as u8
    }

    fn from_byte(b: u8) -> IoResult<Self> {
        Self::ALL.get(b as usize).copied().ok_or(IoError)
    }

    /// Input wires per operation.
    pub fn num_inputs(self) -> usize {
        match self {
            KeccakOp::Xor3 | KeccakOp::Chi => 3,
            KeccakOp::Xor5 => 5,
            KeccakOp::ThetaChi => 10,
        }
    }

    /// Output wires (and constraints) per operation.
    pub fn num_outputs(self) -> usize {
        match self {
            KeccakOp::ThetaChi => 5,
            _ => 1,
        }
    }

    fn width(self) -> usize {
        self.num_inputs() + self.num_outputs()
    }

    fn degree(self) -> usize {
        match self {
            KeccakOp::Xor3 | KeccakOp::Chi => 3,
            KeccakOp::Xor5 => 5,
            KeccakOp::ThetaChi => 6,
        }
    }

    /// The outputs' polynomials in the inputs, over whatever `R` computes in.
    fn eval<T: Copy, R: Ring<T>>(self, r: &mut R, x: &[T]) -> Vec<T> {
        let xor = |r: &mut R, u: T, v: T| {
            let s = r.add(u, v);
            let uv = r.mul(u, v);
            let uv2 = r.add(uv, uv);
            r.sub(s, uv2)
        };
        let chi = |r: &mut R, a: T, b: T, c: T| {
            let bc = r.mul(b, c);
            let t = r.sub(c, bc);
            xor(r, a, t)
        };
        match self {
            KeccakOp::Xor3 => {
                let ab = xor(r, x[0], x[1]);
                vec![xor(r, ab, x[2])]
            }
            KeccakOp::Chi => vec![chi(r, x[0], x[1], x[2])],
            KeccakOp::Xor5 => {
                let mut acc = x[0];
                for &v in &x[1..5] {
                    acc = xor(r, acc, v);
                }
                vec![acc]
            }
            KeccakOp::ThetaChi => {
                let b: Vec<T> = (0..5).map(|i| xor(r, x[2 * i], x[2 * i + 1])).collect();
                (0..5).map(|i| chi(r, b[i], b[(i + 1) % 5], b[(i + 2) % 5])).collect()
            }
        }
    }

    /// Native evaluation on bits.
    pub fn eval_bool(self, x: &[bool]) -> Vec<bool> {
        match self {
            KeccakOp::Xor3 => vec![x[0] ^ x[1] ^ x[2]],
            KeccakOp::Chi => vec![x[0] ^ (!x[1] & x[2])],
            KeccakOp::Xor5 => vec![x.iter().fold(false, |acc, &v| acc ^ v)],
            KeccakOp::ThetaChi => {
                let b: Vec<bool> = (0..5).map(|i| x[2 * i] ^ x[2 * i + 1]).collect();
                (0..5).map(|i| b[i] ^ (!b[(i + 1) % 5] & b[(i + 2) % 5])).collect()
            }
        }
    }
}

/// Addition, subtraction and multiplication, natively or as circuit operations.
trait Ring<T> {
    fn add(&mut self, a: T, b: T) -> T;
    fn sub(&mut self, a: T, b: T) -> T;
    fn mul(&mut self, a: T, b: T) -> T;
}

/// Field (or extension field) arithmetic.
struct Native;

impl<T: Add<Output = T> + Sub<Output = T> + Mul<Output = T>> Ring<T> for Native {
    fn add(&mut self, a: T, b: T) -> T {
        a + b
    }
    fn sub(&mut self, a: T, b: T) -> T {
        a - b
    }
    fn mul(&mut self, a: T, b: T) -> T {
        a * b
    }
}

/// Arithmetic in a recursive verifier's circuit.
struct InCircuit<'a, F: RichField + Extendable<D>, const D: usize>(&'a mut CircuitBuilder<F, D>);

impl<F: RichField + Extendable<D>, const D: usize> Ring<ExtensionTarget<D>> for InCircuit<'_, F, D> {
    fn add(&mut self, a: ExtensionTarget<D>, b: ExtensionTarget<D>) -> ExtensionTarget<D> {
        self.0.add_extension(a, b)
    }
    fn sub(&mut self, a: ExtensionTarget<D>, b: ExtensionTarget<D>) -> ExtensionTarget<D> {
        self.0.sub_extension(a, b)
    }
    fn mul(&mut self, a: ExtensionTarget<D>, b: ExtensionTarget<D>) -> ExtensionTarget<D> {
        self.0.mul_extension(a, b)
    }
}

/// `num_ops` operations of one [`KeccakOp`] per row.
#[derive(Clone, Debug)]
pub struct KeccakGate {
    pub op: KeccakOp,
    pub num_ops: usize,
}

impl KeccakGate {
    /// As many operations as the configuration's routed wires hold.
    pub fn new(op: KeccakOp, config: &CircuitConfig) -> Self {
        Self { op, num_ops: config.num_routed_wires / op.width() }
    }

    /// Input wires of operation `i`.
    pub fn inputs(&self, i: usize) -> std::ops::Range<usize> {
        let w = self.op.width() * i;
        w..w + self.op.num_inputs()
    }

    /// Output wires of operation `i`.
    pub fn outputs(&self, i: usize) -> std::ops::Range<usize> {
        let w = self.op.width() * i + self.op.num_inputs();
        w..w + self.op.num_outputs()
    }
}

impl<F: RichField + Extendable<D>, const D: usize> Gate<F, D> for KeccakGate {
    fn id(&self) -> String {
        format!("{self:?}")
    }

    fn serialize(&self, dst: &mut Vec<u8>, _common_data: &CommonCircuitData<F, D>) -> IoResult<()> {
        dst.write_u8(self.op.to_byte())?;
        dst.write_usize(self.num_ops)
    }

    fn deserialize(src: &mut Buffer, _common_data: &CommonCircuitData<F, D>) -> IoResult<Self> {
        let op = KeccakOp::from_byte(src.read_u8()?)?;
        let num_ops = src.read_usize()?;
        Ok(Self { op, num_ops })
    }

    fn eval_unfiltered(&self, vars: EvaluationVars<F, D>) -> Vec<F::Extension> {
        let mut constraints = Vec::with_capacity(self.num_ops * self.op.num_outputs());
        for i in 0..self.num_ops {
            let x: Vec<_> = self.inputs(i).map(|w| vars.local_wires[w]).collect();
            let f = self.op.eval(&mut Native, &x);
            constraints.extend(self.outputs(i).zip(f).map(|(w, f)| vars.local_wires[w] - f));
        }
        constraints
    }

    fn eval_unfiltered_base_one(&self, vars: EvaluationVarsBase<F>, mut yield_constr: StridedConstraintConsumer<F>) {
        for i in 0..self.num_ops {
            let x: Vec<F> = self.inputs(i).map(|w| vars.local_wires[w]).collect();
            let f = self.op.eval(&mut Native, &x);
            yield_constr.many(self.outputs(i).zip(f).map(|(w, f)| vars.local_wires[w] - f));
        }
    }

    fn eval_unfiltered_circuit(
        &self,
        builder: &mut CircuitBuilder<F, D>,
        vars: EvaluationTargets<D>,
    ) -> Vec<ExtensionTarget<D>> {
        let mut constraints = Vec::with_capacity(self.num_ops * self.op.num_outputs());
        for i in 0..self.num_ops {
            let x: Vec<_> = self.inputs(i).map(|w| vars.local_wires[w]).collect();
            let f = self.op.eval(&mut InCircuit(builder), &x);
            for (w, f) in self.outputs(i).zip(f) {
                constraints.push(builder.sub_extension(vars.local_wires[w], f));
            }
        }
        constraints
    }

    fn generators(&self, row: usize, _local_constants: &[F]) -> Vec<WitnessGeneratorRef<F, D>> {
        (0..self.num_ops)
            .map(|i| WitnessGeneratorRef::new(KeccakOpGenerator { row, gate: self.clone(), i }.adapter()))
            .collect()
    }

    fn num_wires(&self) -> usize {
        self.num_ops * self.op.width()
    }

    fn num_constants(&self) -> usize {
        0
    }

    fn degree(&self) -> usize {
        self.op.degree()
    }

    fn num_constraints(&self) -> usize {
        self.num_ops * self.op.num_outputs()
    }
}

/// Computes the outputs of one operation from its inputs.
#[derive(Clone, Debug)]
pub struct KeccakOpGenerator {
    row: usize,
    gate: KeccakGate,
    i: usize,
}

impl<F: RichField + Extendable<D>, const D: usize> SimpleGenerator<F, D> for KeccakOpGenerator {
    fn id(&self) -> String {
        "KeccakOpGenerator".to_string()
    }

    fn dependencies(&self) -> Vec<Target> {
        self.gate.inputs(self.i).map(|w| Target::wire(self.row, w)).collect()
    }

    fn run_once(&self, witness: &PartitionWitness<F>, out_buffer: &mut GeneratedValues<F>) -> Result<()> {
        let x: Vec<F> = self.gate.inputs(self.i).map(|w| witness.get_target(Target::wire(self.row, w))).collect();
        for (w, v) in self.gate.outputs(self.i).zip(self.gate.op.eval(&mut Native, &x)) {
            out_buffer.set_target(Target::wire(self.row, w), v)?;
        }
        Ok(())
    }

    fn serialize(&self, dst: &mut Vec<u8>, _common_data: &CommonCircuitData<F, D>) -> IoResult<()> {
        dst.write_usize(self.row)?;
        dst.write_u8(self.gate.op.to_byte())?;
        dst.write_usize(self.gate.num_ops)?;
        dst.write_usize(self.i)
    }

    fn deserialize(src: &mut Buffer, _common_data: &CommonCircuitData<F, D>) -> IoResult<Self> {
        let row = src.read_usize()?;
        let op = KeccakOp::from_byte(src.read_u8()?)?;
        let num_ops = src.read_usize()?;
        let i = src.read_usize()?;
        Ok(Self { row, gate: KeccakGate { op, num_ops }, i })
    }
}

#[cfg(test)]
mod tests {
    use plonky2::field::types::Field;
    use plonky2::gates::gate_testing::{test_eval_fns, test_low_degree};
    use plonky2::plonk::circuit_data::CircuitConfig;

    use super::{KeccakGate, KeccakOp, Native};
    use crate::{C, D, F};

    #[test]
    fn keccak_gate_low_degree_and_recursive_eval() -> anyhow::Result<()> {
        let config = CircuitConfig::standard_recursion_config();
        for op in KeccakOp::ALL {
            test_low_degree::<F, _, D>(KeccakGate::new(op, &config));
            test_eval_fns::<F, C, _, D>(KeccakGate::new(op, &config))?;
        }
        Ok(())
    }

    #[test]
    fn keccak_gate_polynomials_match_truth_tables() {
        for op in KeccakOp::ALL {
            let n = op.num_inputs();
            for bits in 0..1u32 << n {
                let x: Vec<bool> = (0..n).map(|j| (bits >> j) & 1 == 1).collect();
                let xf: Vec<F> = x.iter().map(|&b| F::from_bool(b)).collect();
                let want: Vec<F> = op.eval_bool(&x).into_iter().map(F::from_bool).collect();
                assert_eq!(op.eval(&mut Native, &xf), want, "{op:?} on {bits:b}");
            }
        }
    }

    #[test]
    fn keccak_gate_ops_per_row() {
        let config = CircuitConfig::standard_recursion_config();
        let per_row = KeccakOp::ALL.map(|op| KeccakGate::new(op, &config).num_ops);
        assert_eq!(per_row, [20, 20, 13, 5]);
    }
}

//! The custom gate behind the Keccak gadget: one row holds `num_ops` independent Boolean
//! operations of three inputs, all of the same kind ([`BitOp`]).
//!
//! Each operation takes four routed wires `a, b, c, out` and one constraint
//! `out − f(a, b, c) = 0` of degree 3, with
//!
//! * [`BitOp::Xor3`]: `f = a ⊕ b ⊕ c`, written `s − 2·p + 4·abc` with `s = a + b + c`,
//!   `p = ab + bc + ca`;
//! * [`BitOp::Chi`]: `f = a ⊕ (¬b ∧ c)`, written `a + t − 2·a·t` with `t = c − bc`.
//!
//! Both polynomials agree with the Boolean function on `{0, 1}^3` and take values in `{0, 1}`
//! there, so an output is Boolean whenever its inputs are: the gate never range-checks, and the
//! gadget range-checks only the bits it takes from outside (see [`super`]). With the standard
//! recursion configuration (80 routed wires) a row holds 20 operations, where plonky2's
//! `ArithmeticGate` (`c0·x·y + c1·z`) needs 4 operations for a three-input XOR and 3 for χ.
//!
//! Unused operations of the last, partly filled row are left to zero by plonky2, and
//! `f(0, 0, 0) = 0` for both kinds, so they satisfy the constraint.

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

/// Which three-input Boolean function an operation computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOp {
    /// `a ⊕ b ⊕ c` (θ, absorbing, ι).
    Xor3,
    /// `a ⊕ (¬b ∧ c)` (χ).
    Chi,
}

impl BitOp {
    fn to_byte(self) -> u8 {
        match self {
            BitOp::Xor3 => 0,
            BitOp::Chi => 1,
        }
    }

    fn from_byte(b: u8) -> IoResult<Self> {
        match b {
            0 => Ok(BitOp::Xor3),
            1 => Ok(BitOp::Chi),
            _ => Err(IoError),
        }
    }

    /// The operation's polynomial, over any ring (field, extension field, packed field).
    fn eval<T: Copy + Add<Output = T> + Sub<Output = T> + Mul<Output = T>>(self, a: T, b: T, c: T) -> T {
        match self {
            BitOp::Xor3 => {
                let s = a + b + c;
                let p = a * b + b * c + c * a;
                let q = a * b * c;
                let q2 = q + q;
                s - (p + p) + (q2 + q2)
            }
            BitOp::Chi => {
                let t = c - b * c;
                let at = a * t;
                a + t - (at + at)
            }
        }
    }

    /// Native evaluation on bits.
    pub fn eval_bool(self, a: bool, b: bool, c: bool) -> bool {
        match self {
            BitOp::Xor3 => a ^ b ^ c,
            BitOp::Chi => a ^ (!b & c),
        }
    }
}

/// `num_ops` operations of one [`BitOp`] per row.
#[derive(Clone, Debug)]
pub struct KeccakBitGate {
    pub op: BitOp,
    pub num_ops: usize,
}

impl KeccakBitGate {
    const WIRES_PER_OP: usize = 4;

    /// As many operations as the configuration's routed wires hold.
    pub fn new(op: BitOp, config: &CircuitConfig) -> Self {
        Self { op, num_ops: config.num_routed_wires / Self::WIRES_PER_OP }
    }

    /// Wires of operation `i`: `[a, b, c, out]`.
    pub fn wires(i: usize) -> [usize; 4] {
        let w = Self::WIRES_PER_OP * i;
        [w, w + 1, w + 2, w + 3]
    }
}

impl<F: RichField + Extendable<D>, const D: usize> Gate<F, D> for KeccakBitGate {
    fn id(&self) -> String {
        format!("{self:?}")
    }

    fn serialize(&self, dst: &mut Vec<u8>, _common_data: &CommonCircuitData<F, D>) -> IoResult<()> {
        dst.write_u8(self.op.to_byte())?;
        dst.write_usize(self.num_ops)
    }

    fn deserialize(src: &mut Buffer, _common_data: &CommonCircuitData<F, D>) -> IoResult<Self> {
        let op = BitOp::from_byte(src.read_u8()?)?;
        let num_ops = src.read_usize()?;
        Ok(Self { op, num_ops })
    }

    fn eval_unfiltered(&self, vars: EvaluationVars<F, D>) -> Vec<F::Extension> {
        (0..self.num_ops)
            .map(|i| {
                let [a, b, c, out] = Self::wires(i).map(|w| vars.local_wires[w]);
                out - self.op.eval(a, b, c)
            })
            .collect()
    }

    fn eval_unfiltered_base_one(&self, vars: EvaluationVarsBase<F>, mut yield_constr: StridedConstraintConsumer<F>) {
        for i in 0..self.num_ops {
            let [a, b, c, out] = Self::wires(i).map(|w| vars.local_wires[w]);
            yield_constr.one(out - self.op.eval(a, b, c));
        }
    }

    fn eval_unfiltered_circuit(
        &self,
        builder: &mut CircuitBuilder<F, D>,
        vars: EvaluationTargets<D>,
    ) -> Vec<ExtensionTarget<D>> {
        let mut constraints = Vec::with_capacity(self.num_ops);
        for i in 0..self.num_ops {
            let [a, b, c, out] = Self::wires(i).map(|w| vars.local_wires[w]);
            let f = match self.op {
                BitOp::Xor3 => {
                    // s − 2p + 4abc
                    let s = builder.add_many_extension([a, b, c]);
                    let ab = builder.mul_extension(a, b);
                    let p = builder.mul_add_extension(b, c, ab);
                    let p = builder.mul_add_extension(c, a, p);
                    let q = builder.mul_extension(ab, c);
                    let one = builder.one_extension();
                    let f = builder.arithmetic_extension(F::NEG_ONE + F::NEG_ONE, F::ONE, p, one, s);
                    builder.arithmetic_extension(F::TWO + F::TWO, F::ONE, q, one, f)
                }
                BitOp::Chi => {
                    // a + t − 2at, t = c − bc
                    let t = builder.arithmetic_extension(F::NEG_ONE, F::ONE, b, c, c);
                    let s = builder.add_extension(a, t);
                    builder.arithmetic_extension(F::NEG_ONE + F::NEG_ONE, F::ONE, a, t, s)
                }
            };
            constraints.push(builder.sub_extension(out, f));
        }
        constraints
    }

    fn generators(&self, row: usize, _local_constants: &[F]) -> Vec<WitnessGeneratorRef<F, D>> {
        (0..self.num_ops)
            .map(|i| WitnessGeneratorRef::new(BitOpGenerator { row, op: self.op, i }.adapter()))
            .collect()
    }

    fn num_wires(&self) -> usize {
        self.num_ops * Self::WIRES_PER_OP
    }

    fn num_constants(&self) -> usize {
        0
    }

    fn degree(&self) -> usize {
        3
    }

    fn num_constraints(&self) -> usize {
        self.num_ops
    }
}

/// Computes `out` of one operation from its inputs.
#[derive(Clone, Debug)]
pub struct BitOpGenerator {
    row: usize,
    op: BitOp,
    i: usize,
}

impl<F: RichField + Extendable<D>, const D: usize> SimpleGenerator<F, D> for BitOpGenerator {
    fn id(&self) -> String {
        "KeccakBitOpGenerator".to_string()
    }

    fn dependencies(&self) -> Vec<Target> {
        let [a, b, c, _] = KeccakBitGate::wires(self.i);
        [a, b, c].into_iter().map(|w| Target::wire(self.row, w)).collect()
    }

    fn run_once(&self, witness: &PartitionWitness<F>, out_buffer: &mut GeneratedValues<F>) -> Result<()> {
        let [a, b, c, out] = KeccakBitGate::wires(self.i);
        let get = |w| witness.get_target(Target::wire(self.row, w));
        out_buffer.set_target(Target::wire(self.row, out), self.op.eval(get(a), get(b), get(c)))
    }

    fn serialize(&self, dst: &mut Vec<u8>, _common_data: &CommonCircuitData<F, D>) -> IoResult<()> {
        dst.write_usize(self.row)?;
        dst.write_u8(self.op.to_byte())?;
        dst.write_usize(self.i)
    }

    fn deserialize(src: &mut Buffer, _common_data: &CommonCircuitData<F, D>) -> IoResult<Self> {
        let row = src.read_usize()?;
        let op = BitOp::from_byte(src.read_u8()?)?;
        let i = src.read_usize()?;
        Ok(Self { row, op, i })
    }
}

#[cfg(test)]
mod tests {
    use plonky2::gates::gate_testing::{test_eval_fns, test_low_degree};
    use plonky2::plonk::circuit_data::CircuitConfig;

    use super::{BitOp, KeccakBitGate};
    use crate::{C, D, F};

    #[test]
    fn keccak_gate_low_degree_and_recursive_eval() -> anyhow::Result<()> {
        let config = CircuitConfig::standard_recursion_config();
        for op in [BitOp::Xor3, BitOp::Chi] {
            test_low_degree::<F, _, D>(KeccakBitGate::new(op, &config));
            test_eval_fns::<F, C, _, D>(KeccakBitGate::new(op, &config))?;
        }
        Ok(())
    }

    #[test]
    fn keccak_gate_polynomials_match_truth_tables() {
        use plonky2::field::types::Field;
        for op in [BitOp::Xor3, BitOp::Chi] {
            for bits in 0..8u8 {
                let (a, b, c) = (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4);
                let f = |x: bool| F::from_bool(x);
                assert_eq!(op.eval(f(a), f(b), f(c)), f(op.eval_bool(a, b, c)), "{op:?} on {bits:03b}");
            }
        }
    }
}

//! circom's R1CS as a Plonk circuit: a `.r1cs` file ([`circom::R1cs`], over `F`) becomes a
//! [`Circuit`], and its `.wtns` the [`Witness`] and the public input `x`.
//!
//! An R1CS constraint `⟨A, z⟩·⟨B, z⟩ = ⟨C, z⟩` over circom's wires `z` (`z_0 = 1`) becomes:
//!
//! - for each of `A, B, C`, the constant part `k` (the coefficient of `z_0`) split off, and the
//!   rest, `m` terms `Σ c_t z_t`, **reduced** to one term `c·v`: `m = 0` is `0·(an unused
//!   zero wire)`, `m = 1` is `c_1 z_1` itself, and `m ≥ 2` takes `m − 1` addition gates
//!   (`q_L = c_1, q_R = c_2, q_O = 1` for `v_1 = c_1 z_1 + c_2 z_2`, then `q_L = 1, q_R = c_t,
//!   q_O = 1` for `v_{t−1} = v_{t−2} + c_t z_t`), `v` the last output with `c = 1`;
//! - then **one multiplication gate** on `(a, b, c)` with the coefficients and constants folded
//!   into its selectors: `(α a + k_A)(β b + k_B) − (γ c + k_C) = 0` is
//!   `q_M = αβ, q_L = α k_B, q_R = β k_A, q_O = γ, q_C = k_A k_B − k_C`.
//!
//! So a constraint costs at most `1 + Σ_{A,B,C} max(m − 1, 0)` gates: a combination reduced
//! once (in `A` and `B` of a square, say, or in two constraints) is reused, not rebuilt. Gates `0 … ℓ` come first and
//! expose the public signals (`q_L = 1`, `w_1 = x_i`); circom's public signals are wires
//! `1 … ℓ`, the outputs and then the public inputs, and `x` is them in that order. Every use of
//! a wire `z_t` in any gate is tied by a copy constraint to its first use (for a public signal,
//! its public-input gate), and every use of an addition gate's output to that output. The
//! gates are padded with all-zero ones to `2^μ`, `μ ≥ 1`.
//!
//! The conversion does not check the witness against the R1CS: [`crate::prove`] refuses a
//! witness that breaks a constraint (the gate or copy constraint it breaks), and
//! [`crate::verify`] a proof for another public input.

use std::collections::HashMap;

use ark_ff::PrimeField;

use crate::circuit::{Circuit, Selectors, Wire, Witness};
use crate::Error;

/// Where a wire position's value comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Slot {
    /// Unused: 0.
    Zero,
    /// circom's wire `z_t`.
    Signal(u32),
    /// The output `w_3` of an earlier addition gate.
    Output(usize),
    /// This addition gate's output `q_L·w_1 + q_R·w_2`.
    Sum,
}

/// A linear combination reduced to `coefficient·operand + constant`.
struct Reduced<F> {
    coefficient: F,
    operand: Slot,
    constant: F,
}

/// An R1CS converted to a Plonk circuit, with what it takes to convert its witnesses.
#[derive(Clone, Debug)]
pub struct R1csCircuit<F: PrimeField> {
    circuit: Circuit<F>,
    /// Gate `i`'s three slots, for the gates in use (the rest are padding).
    slots: Vec<[Slot; 3]>,
    num_wires: usize,
    num_constraints: usize,
}

/// The gates under construction.
struct Builder<F> {
    selectors: Vec<[F; 5]>,
    slots: Vec<[Slot; 3]>,
    copies: Vec<(Wire, Wire)>,
    first_use: HashMap<u32, Wire>,
    /// The output of each multi-term combination already reduced (its terms sorted by wire).
    reduced: HashMap<Vec<(u32, F)>, usize>,
    num_wires: u32,
}

impl<F: PrimeField> Builder<F> {
    /// Appends a gate, tying each slot to the first use of its signal or to its output.
    fn gate(&mut self, selectors: [F; 5], slots: [Slot; 3]) -> Result<usize, Error> {
        let row = self.selectors.len();
        for (column, slot) in slots.iter().enumerate() {
            let here = Wire::new(column, row);
            match *slot {
                Slot::Signal(t) => {
                    if t >= self.num_wires {
                        return Err(Error::InvalidCircuit(format!(
                            "R1CS wire {t} is outside its {} wires",
                            self.num_wires
                        )));
                    }
                    match self.first_use.get(&t) {
                        Some(first) => self.copies.push((*first, here)),
                        None => {
                            self.first_use.insert(t, here);
                        }
                    }
                }
                Slot::Output(r) => self.copies.push((Wire::new(2, r), here)),
                Slot::Zero | Slot::Sum => {}
            }
        }
        self.selectors.push(selectors);
        self.slots.push(slots);
        Ok(row)
    }

    /// Reduces `lc` with addition gates (module doc).
    fn reduce(&mut self, lc: &[(u32, F)]) -> Result<Reduced<F>, Error> {
        let (zero, one) = (F::zero(), F::one());
        let constant: F = lc.iter().filter(|(t, _)| *t == 0).map(|(_, c)| *c).sum();
        let mut terms: Vec<(u32, F)> = lc.iter().filter(|(t, _)| *t != 0).copied().collect();
        terms.sort_by_key(|(t, _)| *t);
        if let Some(&out) = self.reduced.get(&terms) {
            return Ok(Reduced {
                coefficient: one,
                operand: Slot::Output(out),
                constant,
            });
        }
        let reduced = match terms.as_slice() {
            [] => Reduced {
                coefficient: zero,
                operand: Slot::Zero,
                constant,
            },
            [(t, c)] => Reduced {
                coefficient: *c,
                operand: Slot::Signal(*t),
                constant,
            },
            [(t1, c1), (t2, c2), rest @ ..] => {
                let mut out = self.gate(
                    [*c1, *c2, zero, one, zero],
                    [Slot::Signal(*t1), Slot::Signal(*t2), Slot::Sum],
                )?;
                for (t, c) in rest {
                    out = self.gate(
                        [one, *c, zero, one, zero],
                        [Slot::Output(out), Slot::Signal(*t), Slot::Sum],
                    )?;
                }
                self.reduced.insert(terms.clone(), out);
                Reduced {
                    coefficient: one,
                    operand: Slot::Output(out),
                    constant,
                }
            }
        };
        Ok(reduced)
    }
}

impl<F: PrimeField> R1csCircuit<F> {
    /// Converts `r1cs` (module doc).
    pub fn new(r1cs: &circom::R1cs<F>) -> Result<Self, Error> {
        let num_public = r1cs.num_public();
        if num_public + 1 > r1cs.num_wires as usize {
            return Err(Error::InvalidCircuit(format!(
                "{num_public} public signals but {} wires",
                r1cs.num_wires
            )));
        }
        let (zero, one) = (F::zero(), F::one());
        let mut b = Builder {
            selectors: Vec::new(),
            slots: Vec::new(),
            copies: Vec::new(),
            first_use: HashMap::new(),
            reduced: HashMap::new(),
            num_wires: r1cs.num_wires,
        };
        for i in 0..num_public {
            // Wire i + 1 ≤ num_public < num_wires fits in u32.
            let t = u32::try_from(i + 1)
                .map_err(|_| Error::InvalidCircuit("too many public signals".into()))?;
            b.gate(
                [one, zero, zero, zero, zero],
                [Slot::Signal(t), Slot::Zero, Slot::Zero],
            )?;
        }
        for k in &r1cs.constraints {
            let a = b.reduce(&k.a)?;
            let bb = b.reduce(&k.b)?;
            let c = b.reduce(&k.c)?;
            b.gate(
                [
                    a.coefficient * bb.constant,
                    bb.coefficient * a.constant,
                    a.coefficient * bb.coefficient,
                    c.coefficient,
                    a.constant * bb.constant - c.constant,
                ],
                [a.operand, bb.operand, c.operand],
            )?;
        }
        let used = b.selectors.len();
        let n = used.next_power_of_two().max(2);
        let mut selectors = Selectors::zeros(n);
        for (i, s) in b.selectors.into_iter().enumerate() {
            selectors.set(i, s);
        }
        let circuit = Circuit::new(
            n.trailing_zeros() as usize,
            num_public,
            selectors,
            &b.copies,
        )?;
        Ok(Self {
            circuit,
            slots: b.slots,
            num_wires: r1cs.num_wires as usize,
            num_constraints: r1cs.constraints.len(),
        })
    }

    /// Decodes a `.r1cs` file over `F` and converts it.
    pub fn from_r1cs_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let r1cs =
            circom::R1cs::<F>::from_bytes(bytes).map_err(|e| Error::Circom(e.to_string()))?;
        Self::new(&r1cs)
    }

    /// The Plonk circuit.
    pub fn circuit(&self) -> &Circuit<F> {
        &self.circuit
    }

    /// The gates in use (before padding to `2^μ`): `ℓ` public-input gates, then the
    /// constraints' addition and multiplication gates.
    pub fn gates_used(&self) -> usize {
        self.slots.len()
    }

    /// The R1CS's number of constraints.
    pub fn num_constraints(&self) -> usize {
        self.num_constraints
    }

    /// The public input `x` (circom's public signals: outputs, then public inputs) and the
    /// Plonk witness of a full circom witness (one value per wire, `z_0 = 1`).
    pub fn witness(&self, z: &[F]) -> Result<(Vec<F>, Witness<F>), Error> {
        if z.len() != self.num_wires {
            return Err(Error::Length {
                field: "circom witness",
                expected: self.num_wires,
                got: z.len(),
            });
        }
        if !z[0].is_one() {
            return Err(Error::Circom(format!(
                "witness wire 0 must be 1, it is {}",
                z[0]
            )));
        }
        let n = self.circuit.num_gates();
        let mut w: [Vec<F>; 3] = std::array::from_fn(|_| vec![F::zero(); n]);
        let s = self.circuit.selectors();
        for (i, slots) in self.slots.iter().enumerate() {
            for (j, slot) in slots.iter().enumerate() {
                w[j][i] = match *slot {
                    Slot::Zero => F::zero(),
                    // Wires were checked against num_wires = z.len() when the gates were made.
                    Slot::Signal(t) => z[t as usize],
                    Slot::Output(r) => w[2][r],
                    Slot::Sum => s.q_l[i] * w[0][i] + s.q_r[i] * w[1][i],
                };
            }
        }
        let public = z[1..=self.circuit.num_public()].to_vec();
        Ok((public, Witness { columns: w }))
    }

    /// [`R1csCircuit::witness`] of a `.wtns` file over `F`.
    pub fn witness_from_wtns_bytes(&self, bytes: &[u8]) -> Result<(Vec<F>, Witness<F>), Error> {
        let z = circom::read_wtns::<F>(bytes).map_err(|e| Error::Circom(e.to_string()))?;
        self.witness(&z)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prover::{prove_with, Cheat};
    use crate::{preprocess, prove, setup_insecure_from_seed, verify, ProvingKey, VerifyingKey};
    use ark_bls12_381::{Bls12_381, Fr};
    use circom::{Constraint, R1cs};

    type E = Bls12_381;

    const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circom/tests/fixtures");

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
    }

    fn keys(c: &R1csCircuit<Fr>) -> (ProvingKey<E>, VerifyingKey<E>) {
        let srs = setup_insecure_from_seed::<E>(c.circuit().num_vars(), 5).unwrap();
        preprocess(&srs, c.circuit()).unwrap()
    }

    #[test]
    fn circom_fixtures_prove_and_verify_and_lies_are_refused() {
        let c = R1csCircuit::<Fr>::from_r1cs_bytes(&fixture("example-bls12381.r1cs")).unwrap();
        println!(
            "example-bls12381.r1cs: {} constraints → {} gates ({} public), {:.2} gates per constraint, padded to 2^{}",
            c.num_constraints(),
            c.gates_used(),
            c.circuit().num_public(),
            c.gates_used() as f64 / c.num_constraints() as f64,
            c.circuit().num_vars()
        );
        let (pk, vk) = keys(&c);
        let mut proofs = Vec::new();
        for w in [
            "example-bls12381.wtns",
            "example-bls12381-w1.wtns",
            "example-bls12381-w2.wtns",
        ] {
            let (x, witness) = c.witness_from_wtns_bytes(&fixture(w)).unwrap();
            // Outputs c, h, then the public input b.
            assert_eq!(x.len(), 3);
            let proof = prove(&pk, &x, &witness).unwrap();
            verify(&vk, &x, &proof).unwrap_or_else(|e| panic!("{w}: {e}"));
            proofs.push((x, proof));
        }
        // a = 3, b = 11: c = 33, b = 11 among the public signals.
        assert_eq!(proofs[0].0[0], Fr::from(33u64));
        assert_eq!(proofs[0].0[2], Fr::from(11u64));
        // Another public input: each proof's, the others', and one value changed.
        for (i, (_, proof)) in proofs.iter().enumerate() {
            for (j, (x, _)) in proofs.iter().enumerate() {
                assert_eq!(
                    verify(&vk, x, proof).is_ok(),
                    i == j,
                    "proof {i}, input {j}"
                );
            }
            let mut x = proofs[i].0.clone();
            x[1] += Fr::from(1u64);
            assert!(verify(&vk, &x, proof).is_err());
        }

        // A witness with one value changed: the prover refuses it, and a prover that does
        // not check gets a proof the verifier rejects.
        let r1cs = R1cs::<Fr>::from_bytes(&fixture("example-bls12381.r1cs")).unwrap();
        let z = circom::read_wtns::<Fr>(&fixture("example-bls12381.wtns")).unwrap();
        for wire in [1, 3, 4, z.len() - 1] {
            let mut bad = z.clone();
            bad[wire] += Fr::from(1u64);
            assert!(r1cs.check_witness(&bad).is_err(), "wire {wire}");
            let (x, witness) = c.witness(&bad).unwrap();
            let refused = prove(&pk, &x, &witness).unwrap_err();
            assert!(
                matches!(
                    refused,
                    Error::GateUnsatisfied { .. } | Error::CopyUnsatisfied { .. }
                ),
                "wire {wire}: {refused}"
            );
            let (lie, _) = prove_with(&pk, &x, &witness, Cheat::SkipWitnessCheck).unwrap();
            assert!(verify(&vk, &x, &lie).is_err(), "wire {wire}");
        }
        // Witnesses of the wrong shape are refused by the conversion.
        assert!(matches!(c.witness(&z[1..]), Err(Error::Length { .. })));
        let mut two = z.clone();
        two[0] = Fr::from(2u64);
        assert!(matches!(c.witness(&two), Err(Error::Circom(_))));
        // A BN254 file is not a BLS12-381 circuit.
        assert!(matches!(
            R1csCircuit::<Fr>::from_r1cs_bytes(&fixture("example-bn254.r1cs")),
            Err(Error::Circom(_))
        ));
    }

    /// `(x + 2y + 3)·(y − 1) = z + 5`, `y·y = y` (y boolean) and `(2y + x)² = u`, with `x`
    /// public: constants, coefficients, multi-term combinations (one reused), an empty `C`.
    #[test]
    fn constants_and_long_combinations_are_reduced() {
        let f = |v: i64| {
            if v < 0 {
                -Fr::from((-v) as u64)
            } else {
                Fr::from(v as u64)
            }
        };
        // Wires: 0 = 1, 1 = x (public input), 2 = y, 3 = z, 4 = u.
        let r1cs = R1cs {
            num_wires: 5,
            num_pub_out: 0,
            num_pub_in: 1,
            num_prv_in: 1,
            num_labels: 4,
            constraints: vec![
                Constraint {
                    a: vec![(1, f(1)), (2, f(2)), (0, f(3))],
                    b: vec![(2, f(1)), (0, f(-1))],
                    c: vec![(3, f(1)), (0, f(5))],
                },
                Constraint {
                    a: vec![(2, f(1))],
                    b: vec![(2, f(1)), (0, f(-1))],
                    c: vec![],
                },
                Constraint {
                    a: vec![(2, f(2)), (1, f(1))],
                    b: vec![(1, f(1)), (2, f(2))],
                    c: vec![(4, f(1))],
                },
            ],
            wire_labels: None,
        };
        let c = R1csCircuit::new(&r1cs).unwrap();
        // 1 public gate, 1 addition + 1 multiplication, 1 multiplication, 1 multiplication
        // (x + 2y is reduced once).
        assert_eq!(c.gates_used(), 5);
        let (pk, vk) = keys(&c);
        // x = 4, y = 1: (4 + 2 + 3)·0 = 0 = z + 5, z = −5.
        let z = vec![f(1), f(4), f(1), f(-5), f(36)];
        r1cs.check_witness(&z).unwrap();
        let (x, witness) = c.witness(&z).unwrap();
        assert_eq!(x, vec![f(4)]);
        let proof = prove(&pk, &x, &witness).unwrap();
        verify(&vk, &x, &proof).unwrap();
        assert!(verify(&vk, &[f(5)], &proof).is_err());
        // y = 2 breaks both constraints.
        let (x, witness) = c.witness(&[f(1), f(4), f(2), f(-5), f(36)]).unwrap();
        assert!(prove(&pk, &x, &witness).is_err());
        // A wire outside the R1CS's wires is refused.
        let mut bad = r1cs.clone();
        bad.constraints[1].a = vec![(9, f(1))];
        assert!(matches!(
            R1csCircuit::new(&bad),
            Err(Error::InvalidCircuit(_))
        ));
    }
}

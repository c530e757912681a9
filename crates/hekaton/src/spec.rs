//! Circuits described by parameters: a [`CircuitSpec`] is a few numbers that travel in a job's
//! spec, and every machine that needs the circuit rebuilds it ([`CircuitSpec::build`]) instead of
//! receiving it. The same spec and input seed give the same circuit everywhere: the synthetic
//! circuit takes its public input from the seed, the Merkle-update circuit draws its tree and
//! updates from a ChaCha20 generator seeded with it.
//!
//! [`CircuitSpec::digest`] names the circuit's structure (not its inputs): keys made by
//! [`crate::workflow::setup`] for one spec serve every job of that spec, whatever its seed.

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use rand::SeedableRng;

use crate::circuits::{bench_circuit, merkle_update_circuit, BenchSubcircuit, MerkleUpdatePart};
use crate::partition::{Partitioned, Portals, Subcircuit};
use crate::Error;

/// Most subcircuits of one circuit.
pub const MAX_SUBCIRCUITS: usize = 1024;

/// The circuit families, by their structural parameters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(tag = "family", rename_all = "kebab-case", deny_unknown_fields)]
pub enum CircuitSpec {
    /// The paper's §8.1 benchmark circuit ([`bench_circuit`]).
    Synthetic { subcircuits: usize, steps: usize, wires: usize },
    /// A batch of Poseidon Merkle-path updates ([`merkle_update_circuit`]).
    MerkleUpdate { depth: usize, updates: usize, parts: usize },
}

/// A subcircuit of either family.
#[derive(Clone, Debug)]
pub enum AnySubcircuit<F: PrimeField> {
    Synthetic(BenchSubcircuit),
    MerkleUpdate(MerkleUpdatePart<F>),
}

impl<F: PrimeField + Absorb> Subcircuit<F> for AnySubcircuit<F> {
    fn shape(&self) -> String {
        match self {
            AnySubcircuit::Synthetic(s) => Subcircuit::<F>::shape(s),
            AnySubcircuit::MerkleUpdate(s) => s.shape(),
        }
    }

    fn generate_constraints(&self, cs: ConstraintSystemRef<F>, public_inputs: &[FpVar<F>], portals: &mut Portals<F>) -> Result<(), SynthesisError> {
        match self {
            AnySubcircuit::Synthetic(s) => s.generate_constraints(cs, public_inputs, portals),
            AnySubcircuit::MerkleUpdate(s) => s.generate_constraints(cs, public_inputs, portals),
        }
    }
}

impl CircuitSpec {
    /// The bounds every spec keeps; the error names the offending field.
    pub fn check(&self) -> Result<(), Error> {
        let bad = |field: &'static str, reason: String| Err(Error::malformed(field, reason));
        match *self {
            CircuitSpec::Synthetic { subcircuits, steps, wires } => {
                if !(1..=MAX_SUBCIRCUITS).contains(&subcircuits) {
                    return bad("subcircuits", format!("must be in 1..={MAX_SUBCIRCUITS}, got {subcircuits}"));
                }
                if !(1..=1 << 22).contains(&steps) {
                    return bad("steps", format!("must be in 1..=4194304, got {steps}"));
                }
                if !(1..=4096).contains(&wires) {
                    return bad("wires", format!("must be in 1..=4096, got {wires}"));
                }
            }
            CircuitSpec::MerkleUpdate { depth, updates, parts } => {
                if !(1..=32).contains(&depth) {
                    return bad("depth", format!("must be in 1..=32, got {depth}"));
                }
                if !(1..=MAX_SUBCIRCUITS).contains(&updates) {
                    return bad("updates", format!("must be in 1..={MAX_SUBCIRCUITS}, got {updates}"));
                }
                if parts == 0 || !depth.is_multiple_of(parts) {
                    return bad("parts", format!("must divide depth ({depth}), got {parts}"));
                }
                if updates.saturating_mul(parts) > MAX_SUBCIRCUITS {
                    return bad("updates", format!("updates × parts must be at most {MAX_SUBCIRCUITS}"));
                }
                if depth > 20 {
                    // The tree is built in memory (2^depth leaves) by whoever rebuilds the circuit.
                    return bad("depth", format!("at most 20 when the circuit is rebuilt from its spec, got {depth}"));
                }
            }
        }
        Ok(())
    }

    /// The number of subcircuits `k`.
    pub fn num_subcircuits(&self) -> usize {
        match *self {
            CircuitSpec::Synthetic { subcircuits, .. } => subcircuits,
            CircuitSpec::MerkleUpdate { updates, parts, .. } => updates * parts,
        }
    }

    /// The number of public inputs `|x|` of the circuit (without building it): the synthetic
    /// circuit's seed, the Merkle-update circuit's old and new roots.
    pub fn num_public_inputs(&self) -> usize {
        match self {
            CircuitSpec::Synthetic { .. } => 1,
            CircuitSpec::MerkleUpdate { .. } => 2,
        }
    }

    /// The circuit with inputs from `seed` (see the module doc). Checks the spec first.
    pub fn build<F: PrimeField + Absorb>(&self, seed: u64) -> Result<Partitioned<F, AnySubcircuit<F>>, Error> {
        self.check()?;
        Ok(match *self {
            CircuitSpec::Synthetic { subcircuits, steps, wires } => {
                let c = bench_circuit::<F>(subcircuits, steps, wires, F::from(seed));
                Partitioned { public_inputs: c.public_inputs, subcircuits: c.subcircuits.into_iter().map(AnySubcircuit::Synthetic).collect() }
            }
            CircuitSpec::MerkleUpdate { depth, updates, parts } => {
                let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(seed);
                let c = merkle_update_circuit::<F, _>(depth, updates, parts, &mut rng);
                Partitioned { public_inputs: c.public_inputs, subcircuits: c.subcircuits.into_iter().map(AnySubcircuit::MerkleUpdate).collect() }
            }
        })
    }

    /// BLAKE2b-256 of a domain tag and the spec's canonical JSON, as 64 hex digits: the name
    /// under which keys for this structure are stored.
    ///
    /// The tag carries the version of the augmentation ([`crate::augment`]): v2 dropped the
    /// subcircuit index from trace entries, v3 added the committed leaf salt, so keys stored
    /// under an older digest are for other constraints and must not be found by a newer lookup.
    pub fn digest(&self) -> String {
        let json = serde_json::to_vec(self).expect("a spec serializes");
        let mut h = Blake2b::<U32>::new();
        h.update(b"hekaton/spec/v3");
        h.update(&json);
        h.finalize().iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;

    #[test]
    fn specs_round_trip_and_are_checked() {
        let s = CircuitSpec::Synthetic { subcircuits: 3, steps: 8, wires: 2 };
        let json = serde_json::to_string(&s).unwrap();
        assert_eq!(json, r#"{"family":"synthetic","subcircuits":3,"steps":8,"wires":2}"#);
        assert_eq!(serde_json::from_str::<CircuitSpec>(&json).unwrap(), s);
        assert_eq!(s.digest(), s.digest());
        assert_ne!(s.digest(), CircuitSpec::Synthetic { subcircuits: 4, steps: 8, wires: 2 }.digest());
        for (bad, field) in [
            (CircuitSpec::Synthetic { subcircuits: 0, steps: 8, wires: 2 }, "subcircuits"),
            (CircuitSpec::Synthetic { subcircuits: 2, steps: 0, wires: 2 }, "steps"),
            (CircuitSpec::MerkleUpdate { depth: 4, updates: 1, parts: 3 }, "parts"),
            (CircuitSpec::MerkleUpdate { depth: 4, updates: 1, parts: 0 }, "parts"),
            (CircuitSpec::MerkleUpdate { depth: 30, updates: 1, parts: 2 }, "depth"),
        ] {
            let e = bad.build::<Fr>(1).unwrap_err().to_string();
            assert!(e.contains(field), "{bad:?}: {e}");
        }
        assert!(serde_json::from_str::<CircuitSpec>(r#"{"family":"synthetic","subcircuits":3,"steps":8,"wires":2,"x":1}"#).is_err());
    }

    #[test]
    fn the_same_seed_rebuilds_the_same_circuit() {
        let s = CircuitSpec::MerkleUpdate { depth: 4, updates: 2, parts: 2 };
        let (a, b) = (s.build::<Fr>(9).unwrap(), s.build::<Fr>(9).unwrap());
        assert_eq!(a.public_inputs, b.public_inputs);
        assert_eq!(a.subcircuits.len(), s.num_subcircuits());
        assert_ne!(s.build::<Fr>(10).unwrap().public_inputs, a.public_inputs);
        assert_eq!(a.public_inputs.len(), s.num_public_inputs());
        let syn = CircuitSpec::Synthetic { subcircuits: 2, steps: 4, wires: 1 };
        assert_eq!(syn.build::<Fr>(1).unwrap().public_inputs.len(), syn.num_public_inputs());
    }
}

//! Partitioned circuit families.
//!
//! * [`bench_circuit`]: the paper's §8.1 benchmark circuit: five distinct subcircuit shapes
//!   with a tunable number of constraints and of shared wires, chained through portals.
//! * [`merkle_update_circuit`]: a batch of updates to a Poseidon Merkle tree (the paper's §8.3
//!   application, with Poseidon in place of SHA-256), each path split across several
//!   subcircuits that hand their intermediate hashes to the next one through portals.

use ark_crypto_primitives::sponge::poseidon::PoseidonConfig;
use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::select::CondSelectGadget;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use rand::Rng;

use crate::merkle::{hash_node_var, poseidon_config, MerkleTree};
use crate::partition::{Partitioned, Portals, Subcircuit};

/// Number of distinct subcircuit kinds of the benchmark circuit.
pub const BENCH_KINDS: usize = 5;

/// One subcircuit of the §8.1 benchmark circuit. Subcircuit `i` is of kind `i mod 5`; it reads
/// the `wires` shared wires written by subcircuit `i − 1` (subcircuit 0 starts from the public
/// seed instead), runs `steps` multiplication steps of its kind, and writes `wires` shared
/// wires for subcircuit `i + 1`.
#[derive(Clone, Debug)]
pub struct BenchSubcircuit {
    pub index: usize,
    pub steps: usize,
    pub wires: usize,
}

impl BenchSubcircuit {
    pub fn kind(&self) -> usize {
        self.index % BENCH_KINDS
    }
}

impl<F: PrimeField> Subcircuit<F> for BenchSubcircuit {
    fn shape(&self) -> String {
        format!(
            "bench-kind{}-steps{}-wires{}",
            self.kind(),
            self.steps,
            self.wires
        )
    }

    fn generate_constraints(
        &self,
        cs: ConstraintSystemRef<F>,
        public_inputs: &[FpVar<F>],
        portals: &mut Portals<F>,
    ) -> Result<(), SynthesisError> {
        let inputs: Vec<FpVar<F>> = if self.index == 0 {
            let seed = public_inputs
                .first()
                .ok_or(SynthesisError::AssignmentMissing)?;
            (0..self.wires.max(1))
                .map(|j| seed + FpVar::Constant(F::from(j as u64)))
                .collect()
        } else {
            (0..self.wires)
                .map(|j| portals.get(&format!("w{}.{}", self.index - 1, j)))
                .collect::<Result<_, _>>()?
        };
        let input = |j: usize| -> FpVar<F> {
            if inputs.is_empty() {
                FpVar::Constant(F::from(j as u64 + 1))
            } else {
                inputs[j % inputs.len()].clone()
            }
        };
        // Every kind spends one constraint per step.
        let mut v = FpVar::new_witness(cs.clone(), || Ok(F::from(3u64)))?;
        let mut u = input(0);
        for j in 0..self.steps {
            let c = FpVar::Constant(F::from(j as u64 + 7));
            v = match self.kind() {
                0 => &v * &v + c,
                1 => {
                    let next = &v * &u + c;
                    u = v;
                    next
                }
                2 => (&v + input(j)) * (&v - input(j)),
                3 => &v * input(j) + c,
                _ => (&v + c) * (input(j) + FpVar::Constant(F::from(5u64))),
            };
        }
        for j in 0..self.wires {
            let out = &v + input(j) + FpVar::Constant(F::from(j as u64));
            portals.set(&format!("w{}.{}", self.index, j), &out)?;
        }
        Ok(())
    }
}

/// The benchmark circuit with `num_subcircuits` subcircuits of `steps` constraints and
/// `wires` shared wires each, and public input `(seed)`.
pub fn bench_circuit<F: PrimeField>(
    num_subcircuits: usize,
    steps: usize,
    wires: usize,
    seed: F,
) -> Partitioned<F, BenchSubcircuit> {
    Partitioned {
        public_inputs: vec![seed],
        subcircuits: (0..num_subcircuits)
            .map(|index| BenchSubcircuit {
                index,
                steps,
                wires,
            })
            .collect(),
    }
}

/// One piece of one Merkle-path update: levels `part·L .. (part+1)·L` of update `update`.
#[derive(Clone, Debug)]
pub struct MerkleUpdatePart<F: PrimeField> {
    pub update: usize,
    pub part: usize,
    pub parts: usize,
    pub num_updates: usize,
    /// The old and new leaf (read by part 0 only).
    pub old_leaf: F,
    pub new_leaf: F,
    /// Siblings of this part's levels, bottom up.
    pub siblings: Vec<F>,
    /// Position bits of this part's levels (1: the path node is a right child).
    pub bits: Vec<bool>,
    pub cfg: PoseidonConfig<F>,
}

impl<F: PrimeField> MerkleUpdatePart<F> {
    fn name(&self, what: &str) -> String {
        format!("u{}.p{}.{what}", self.update, self.part + 1)
    }
}

impl<F: PrimeField + Absorb> Subcircuit<F> for MerkleUpdatePart<F> {
    fn shape(&self) -> String {
        let first = self.update == 0 && self.part == 0;
        let last = self.update + 1 == self.num_updates && self.part + 1 == self.parts;
        format!(
            "merkle-levels{}-part{}of{}-first{}-last{}",
            self.siblings.len(),
            self.part,
            self.parts,
            first as u8,
            last as u8
        )
    }

    fn generate_constraints(
        &self,
        cs: ConstraintSystemRef<F>,
        public_inputs: &[FpVar<F>],
        portals: &mut Portals<F>,
    ) -> Result<(), SynthesisError> {
        if self.update == 0 && self.part == 0 {
            // Subcircuit 0 publishes the roots of the public input to the others.
            let [old_root, new_root] = public_inputs else {
                return Err(SynthesisError::AssignmentMissing);
            };
            portals.set("root0", old_root)?;
            portals.set("final", new_root)?;
        }
        let (mut old, mut new) = if self.part == 0 {
            (
                FpVar::new_witness(cs.clone(), || Ok(self.old_leaf))?,
                FpVar::new_witness(cs.clone(), || Ok(self.new_leaf))?,
            )
        } else {
            (
                portals.get(&format!("u{}.p{}.old", self.update, self.part))?,
                portals.get(&format!("u{}.p{}.new", self.update, self.part))?,
            )
        };
        for (&sib, &bit) in self.siblings.iter().zip(&self.bits) {
            let b = Boolean::new_witness(cs.clone(), || Ok(bit))?;
            let s = FpVar::new_witness(cs.clone(), || Ok(sib))?;
            let step = |cur: &FpVar<F>| -> Result<FpVar<F>, SynthesisError> {
                let l = FpVar::conditionally_select(&b, &s, cur)?;
                let r = FpVar::conditionally_select(&b, cur, &s)?;
                hash_node_var(cs.clone(), &self.cfg, &l, &r)
            };
            old = step(&old)?;
            new = step(&new)?;
        }
        if self.part + 1 < self.parts {
            portals.set(&self.name("old"), &old)?;
            portals.set(&self.name("new"), &new)?;
        } else {
            // The old path must end at the current root; the new one gives the next root.
            portals
                .get(&format!("root{}", self.update))?
                .enforce_equal(&old)?;
            portals.set(&format!("root{}", self.update + 1), &new)?;
            if self.update + 1 == self.num_updates {
                portals.get("final")?.enforce_equal(&new)?;
            }
        }
        Ok(())
    }
}

/// A batch of `num_updates` random leaf updates to a random Poseidon Merkle tree of depth
/// `depth`, each path check split into `parts` subcircuits (`parts` must divide `depth`).
/// Public input: `(old_root, new_root)`.
pub fn merkle_update_circuit<F: PrimeField + Absorb, R: Rng>(
    depth: usize,
    num_updates: usize,
    parts: usize,
    rng: &mut R,
) -> Partitioned<F, MerkleUpdatePart<F>> {
    assert!(
        parts > 0 && depth.is_multiple_of(parts) && num_updates > 0,
        "parts must divide depth"
    );
    let cfg = poseidon_config::<F>();
    let mut leaves: Vec<F> = (0..1usize << depth).map(|_| F::rand(rng)).collect();
    let tree = |leaves: &[F]| MerkleTree::new(&cfg, depth, leaves).expect("fits");
    let mut current = tree(&leaves);
    let old_root = current.root().expect("built by MerkleTree::new");
    let per = depth / parts;
    let mut subcircuits = Vec::with_capacity(num_updates * parts);
    for update in 0..num_updates {
        let pos = rng.gen_range(0..leaves.len());
        let path = current.path(pos).expect("pos is a leaf of the tree");
        let old_leaf = leaves[pos];
        let new_leaf = F::rand(rng);
        for part in 0..parts {
            let levels = part * per..(part + 1) * per;
            subcircuits.push(MerkleUpdatePart {
                update,
                part,
                parts,
                num_updates,
                old_leaf,
                new_leaf,
                siblings: path[levels.clone()].to_vec(),
                bits: levels.map(|l| (pos >> l) & 1 == 1).collect(),
                cfg: cfg.clone(),
            });
        }
        leaves[pos] = new_leaf;
        current = tree(&leaves);
    }
    Partitioned {
        public_inputs: vec![old_root, current.root().expect("built by MerkleTree::new")],
        subcircuits,
    }
}

//! Partitioned circuits and their memory traces (paper §2.1, §4.2 with Fig. 3, §2.4).
//!
//! # Model
//!
//! A [`Partitioned`] circuit is a public input `x` and a list of [`Subcircuit`]s `C_0..C_{k-1}`.
//! Each subcircuit synthesises its own constraints and exchanges values with the others only
//! through named shared wires, **portals**, via [`Portals::set`] (the subcircuit that computes
//! the wire) and [`Portals::get`] (the ones that use it). Only `C_0` sees `x`; it can hand any
//! part of it to the others through portals.
//!
//! # Read-only memory (paper §2.4)
//!
//! Following Fig. 3, each shared wire becomes one cell of a memory `M`, addressed in the order
//! in which the wires are first set (`0, 1, 2, …`). Because the memory is read-only, a `set`
//! is just a read of its cell plus an equality check between the cell and the computed wire,
//! and a `get` is a plain read; both produce one trace entry `(address, value)`. (The paper's
//! entries also carry the accessing subcircuit, a timestamp that a read-write memory needs;
//! a read-only memory does not, see [`crate::augment`].)
//! Each wire is set exactly once, by an earlier subcircuit than (or the same one as) every
//! subcircuit that gets it.
//!
//! # Traces (paper §4.3)
//!
//! `T` lists every access in subcircuit order (and, inside a subcircuit, in the order of its
//! accesses); `A` is `T` stably sorted by address. Both are cut into slices by subcircuit:
//! `T_i` is exactly subcircuit `i`'s accesses, and `A_i` is the same number `s_i` of entries
//! at the same positions of `A` (it may hold other subcircuits' accesses).
//!
//! # Modes of [`Portals`]
//!
//! * **direct** ([`synthesize_monolithic`]): all subcircuits in one constraint system, `get`
//!   returns the very variable that was `set` (the unpartitioned circuit, for comparison);
//! * **record** ([`record`]): each subcircuit alone, `get` allocates a fresh witness holding
//!   the memory value; the coordinator learns the layout and the trace values this way;
//! * **replay** (inside [`crate::augment`]): `set`/`get` consume the subcircuit's committed
//!   trace slice `T_i` in order, checking the names against the layout.

use std::collections::HashMap;

use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::GR1CSVar;
use ark_relations::gr1cs::{
    ConstraintSystem, ConstraintSystemRef, OptimizationGoal, SynthesisError, SynthesisMode,
};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::Error;

/// One piece of a partitioned circuit.
pub trait Subcircuit<F: PrimeField> {
    /// Subcircuits that return the same shape (and make the same number of portal accesses,
    /// in the same set/get pattern) must synthesise identical constraint systems: they share
    /// one Mirage setup (paper §6.3). Everything that differs between them (their position,
    /// the addresses they access) reaches the circuit as public inputs fixed at setup.
    fn shape(&self) -> String;

    /// Synthesises the subcircuit. `public_inputs` holds the variables of the whole circuit's
    /// public input for subcircuit 0 and is empty for the others. Values must only be read
    /// inside allocation closures, so that the same code runs in setup mode.
    fn generate_constraints(
        &self,
        cs: ConstraintSystemRef<F>,
        public_inputs: &[FpVar<F>],
        portals: &mut Portals<F>,
    ) -> Result<(), SynthesisError>;
}

/// A partitioned circuit: the public input and the subcircuits, in order.
#[derive(Clone, Debug)]
pub struct Partitioned<F: PrimeField, S> {
    pub public_inputs: Vec<F>,
    pub subcircuits: Vec<S>,
}

/// One memory trace entry `(a, v)`: the address and the value, field elements as they are in
/// the circuit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Entry<F: PrimeField> {
    pub address: F,
    pub value: F,
}

/// Field elements per trace entry, and so committed variables per `A_i` entry.
pub const ENTRY_FIELDS: usize = 2;

impl<F: PrimeField> Entry<F> {
    /// The entry that precedes the first one: address `−1`, so that the first real entry's
    /// address is forced to be `0` or `−1` (and `−1` is no address at all).
    pub fn sentinel() -> Self {
        Entry {
            address: -F::one(),
            value: F::zero(),
        }
    }

    pub fn to_fields(&self) -> [F; ENTRY_FIELDS] {
        [self.address, self.value]
    }

    /// The fingerprint factor `α − (v + β·a)` of the running products.
    pub fn factor(&self, alpha: F, beta: F) -> F {
        alpha - (self.value + beta * self.address)
    }
}

/// The portal accesses of one subcircuit, fixed by the circuit's structure.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct SubcircuitLayout {
    pub shape: String,
    /// Address of each access, in access order (`s_i = addresses.len()`).
    pub addresses: Vec<u64>,
}

/// Everything about a partitioned circuit that does not depend on the witness: the memory
/// (shared wire names by address) and each subcircuit's accesses.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Layout {
    pub num_public_inputs: u64,
    /// Name of the shared wire at each address.
    pub names: Vec<String>,
    pub subcircuits: Vec<SubcircuitLayout>,
}

impl Layout {
    pub fn num_subcircuits(&self) -> usize {
        self.subcircuits.len()
    }

    /// `s`, the total number of accesses (the length of `T` and `A`).
    pub fn num_accesses(&self) -> usize {
        self.subcircuits.iter().map(|s| s.addresses.len()).sum()
    }

    /// Depth of the Merkle tree over leaf 0 (public input) and leaves `1..=k`.
    pub fn tree_depth(&self) -> usize {
        crate::merkle::depth_for(self.num_subcircuits() + 1)
    }

    /// At least one subcircuit, distinct wire names, and every access at an address of the
    /// memory.
    pub fn check(&self) -> Result<(), Error> {
        if self.subcircuits.is_empty() {
            return Err(Error::malformed("layout", "no subcircuit"));
        }
        if self.address_map().len() != self.names.len() {
            return Err(Error::malformed("layout", "two shared wires with one name"));
        }
        for (i, sub) in self.subcircuits.iter().enumerate() {
            if let Some(a) = sub
                .addresses
                .iter()
                .find(|&&a| a >= self.names.len() as u64)
            {
                return Err(Error::malformed(
                    "layout",
                    format!(
                        "subcircuit {i} accesses address {a} of a memory of {} wires",
                        self.names.len()
                    ),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn address_map(&self) -> HashMap<String, u64> {
        self.names
            .iter()
            .enumerate()
            .map(|(a, n)| (n.clone(), a as u64))
            .collect()
    }
}

enum Mode<F: PrimeField> {
    Direct(HashMap<String, FpVar<F>>),
    Record {
        /// Shared with the other subcircuits of the same pass: name → (address, value).
        memory: HashMap<String, (u64, Option<F>)>,
        names: Vec<String>,
        /// This subcircuit's accesses: (address, value).
        log: Vec<(u64, Option<F>)>,
    },
    Replay {
        addresses: HashMap<String, u64>,
        expected: Vec<u64>,
        values: Vec<FpVar<F>>,
        next: usize,
        /// Constraints spent on `set` equalities.
        set_constraints: usize,
    },
}

/// The shared-wire interface handed to [`Subcircuit::generate_constraints`].
pub struct Portals<F: PrimeField> {
    cs: ConstraintSystemRef<F>,
    mode: Mode<F>,
}

impl<F: PrimeField> Portals<F> {
    pub(crate) fn replay(
        cs: ConstraintSystemRef<F>,
        addresses: HashMap<String, u64>,
        expected: Vec<u64>,
        values: Vec<FpVar<F>>,
    ) -> Self {
        Portals {
            cs,
            mode: Mode::Replay {
                addresses,
                expected,
                values,
                next: 0,
                set_constraints: 0,
            },
        }
    }

    /// Number of trace entries not consumed by a replaying subcircuit.
    pub(crate) fn unconsumed(&self) -> usize {
        match &self.mode {
            Mode::Replay { values, next, .. } => values.len() - next,
            _ => 0,
        }
    }

    /// Constraints spent on `set` equalities by a replaying subcircuit.
    pub(crate) fn sets(&self) -> usize {
        match &self.mode {
            Mode::Replay {
                set_constraints, ..
            } => *set_constraints,
            _ => 0,
        }
    }

    fn replay_next(&mut self, name: &str) -> Result<FpVar<F>, SynthesisError> {
        let Mode::Replay {
            addresses,
            expected,
            values,
            next,
            ..
        } = &mut self.mode
        else {
            unreachable!("replay_next outside replay mode")
        };
        let j = *next;
        if j >= values.len() || addresses.get(name) != Some(&expected[j]) {
            // The subcircuit accesses its portals differently from its layout.
            return Err(SynthesisError::Unsatisfiable);
        }
        *next += 1;
        Ok(values[j].clone())
    }

    /// Declares that this subcircuit computes the shared wire `name` as `value`.
    pub fn set(&mut self, name: &str, value: &FpVar<F>) -> Result<(), SynthesisError> {
        match &mut self.mode {
            Mode::Direct(wires) => {
                if wires.insert(name.to_string(), value.clone()).is_some() {
                    return Err(SynthesisError::Unsatisfiable);
                }
                Ok(())
            }
            Mode::Record { memory, names, log } => {
                if memory.contains_key(name) {
                    return Err(SynthesisError::Unsatisfiable);
                }
                let address = names.len() as u64;
                let v = value.value().ok();
                names.push(name.to_string());
                memory.insert(name.to_string(), (address, v));
                log.push((address, v));
                Ok(())
            }
            Mode::Replay { .. } => {
                let cell = self.replay_next(name)?;
                let before = self.cs.num_constraints();
                cell.enforce_equal(value)?;
                let spent = self.cs.num_constraints() - before;
                if let Mode::Replay {
                    set_constraints, ..
                } = &mut self.mode
                {
                    *set_constraints += spent;
                }
                Ok(())
            }
        }
    }

    /// Reads the shared wire `name`, set by this or an earlier subcircuit.
    pub fn get(&mut self, name: &str) -> Result<FpVar<F>, SynthesisError> {
        match &mut self.mode {
            Mode::Direct(wires) => wires
                .get(name)
                .cloned()
                .ok_or(SynthesisError::AssignmentMissing),
            Mode::Record { memory, log, .. } => {
                let &(address, v) = memory.get(name).ok_or(SynthesisError::AssignmentMissing)?;
                log.push((address, v));
                FpVar::new_witness(self.cs.clone(), || {
                    v.ok_or(SynthesisError::AssignmentMissing)
                })
            }
            Mode::Replay { .. } => self.replay_next(name),
        }
    }
}

fn new_cs<F: PrimeField>(mode: SynthesisMode) -> ConstraintSystemRef<F> {
    let cs = ConstraintSystem::<F>::new_ref();
    cs.set_optimization_goal(OptimizationGoal::Constraints);
    cs.set_mode(mode);
    cs
}

/// The trace values recorded for one subcircuit, in access order.
pub type AccessValues<F> = Vec<F>;

/// Runs every subcircuit alone, in order, with a recording [`Portals`]: returns the layout
/// and, when `with_values`, each subcircuit's access values (from a witness-generation run
/// that builds no matrices). Fails if a wire is set twice or read before it is set.
pub fn record<F: PrimeField, S: Subcircuit<F>>(
    circuit: &Partitioned<F, S>,
    with_values: bool,
) -> Result<(Layout, Option<Vec<AccessValues<F>>>), Error> {
    if circuit.subcircuits.is_empty() {
        return Err(Error::UnsupportedCircuit(
            "a partitioned circuit needs a subcircuit".into(),
        ));
    }
    let mode = if with_values {
        SynthesisMode::Prove {
            construct_matrices: false,
            generate_lc_assignments: false,
        }
    } else {
        SynthesisMode::Setup
    };
    let mut memory = HashMap::new();
    let mut names = Vec::new();
    let mut subs = Vec::with_capacity(circuit.subcircuits.len());
    let mut values = Vec::with_capacity(circuit.subcircuits.len());
    for (i, sub) in circuit.subcircuits.iter().enumerate() {
        let cs = new_cs::<F>(mode);
        let public: Vec<FpVar<F>> = if i == 0 {
            circuit
                .public_inputs
                .iter()
                .map(|&x| FpVar::new_witness(cs.clone(), || Ok(x)))
                .collect::<Result<_, _>>()?
        } else {
            Vec::new()
        };
        let mut portals = Portals {
            cs: cs.clone(),
            mode: Mode::Record {
                memory: std::mem::take(&mut memory),
                names: std::mem::take(&mut names),
                log: Vec::new(),
            },
        };
        sub.generate_constraints(cs, &public, &mut portals)
            .map_err(|e| {
                Error::UnsupportedCircuit(format!(
                    "subcircuit {i}: {e} (portal set twice or read before set?)"
                ))
            })?;
        let Mode::Record {
            memory: m,
            names: n,
            log,
        } = portals.mode
        else {
            unreachable!()
        };
        memory = m;
        names = n;
        subs.push(SubcircuitLayout {
            shape: sub.shape(),
            addresses: log.iter().map(|(a, _)| *a).collect(),
        });
        if with_values {
            let v = log
                .iter()
                .map(|(_, v)| {
                    v.ok_or_else(|| {
                        Error::Unsatisfied(format!("subcircuit {i}: a portal has no value"))
                    })
                })
                .collect::<Result<Vec<F>, Error>>()?;
            values.push(v);
        }
    }
    let layout = Layout {
        num_public_inputs: circuit.public_inputs.len() as u64,
        names,
        subcircuits: subs,
    };
    Ok((layout, with_values.then_some(values)))
}

/// One subcircuit's slices `(T_i, A_i)`.
pub type Slices<F> = (Vec<Entry<F>>, Vec<Entry<F>>);

/// The memory traces `T` (subcircuit-sorted) and `A` (address-sorted).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Traces<F: PrimeField> {
    pub t: Vec<Entry<F>>,
    pub a: Vec<Entry<F>>,
    /// `s_i` for each subcircuit; slice `i` of either trace starts at `Σ_{j<i} s_j`.
    pub slice_lengths: Vec<u64>,
}

impl<F: PrimeField> Traces<F> {
    /// Builds `T` and `A` from the layout and the recorded access values.
    pub fn build(layout: &Layout, values: &[AccessValues<F>]) -> Result<Self, Error> {
        if values.len() != layout.num_subcircuits() {
            return Err(Error::ShapeMismatch {
                what: "subcircuits",
                expected: layout.num_subcircuits(),
                got: values.len(),
            });
        }
        let mut t = Vec::with_capacity(layout.num_accesses());
        let mut keyed = Vec::with_capacity(layout.num_accesses());
        for (sub, vals) in layout.subcircuits.iter().zip(values) {
            if sub.addresses.len() != vals.len() {
                return Err(Error::ShapeMismatch {
                    what: "portal accesses",
                    expected: sub.addresses.len(),
                    got: vals.len(),
                });
            }
            for (&addr, &v) in sub.addresses.iter().zip(vals) {
                keyed.push(addr);
                t.push(Entry {
                    address: F::from(addr),
                    value: v,
                });
            }
        }
        // Stable sort by address: equal addresses stay in subcircuit order.
        let mut order: Vec<usize> = (0..t.len()).collect();
        order.sort_by_key(|&j| keyed[j]);
        let a = order.iter().map(|&j| t[j]).collect();
        Ok(Traces {
            t,
            a,
            slice_lengths: layout
                .subcircuits
                .iter()
                .map(|s| s.addresses.len() as u64)
                .collect(),
        })
    }

    /// `T` and `A` have the same length, the sum of the slice lengths.
    pub fn check(&self) -> Result<(), Error> {
        let total = self
            .slice_lengths
            .iter()
            .try_fold(0u64, |acc, &l| acc.checked_add(l));
        match total {
            Some(n) if n == self.t.len() as u64 && n == self.a.len() as u64 => Ok(()),
            _ => Err(Error::malformed(
                "traces",
                format!(
                    "T has {} entries, A {}, the slice lengths do not add up to both",
                    self.t.len(),
                    self.a.len()
                ),
            )),
        }
    }

    /// Splits both traces into the per-subcircuit slices `(T_i, A_i)`.
    pub fn slices(&self) -> Result<Vec<Slices<F>>, Error> {
        self.check()?;
        let mut start = 0usize;
        Ok(self
            .slice_lengths
            .iter()
            .map(|&len| {
                // Fits: the lengths add up to `t.len()` (checked above).
                let r = start..start + len as usize;
                start += len as usize;
                (self.t[r.clone()].to_vec(), self.a[r].to_vec())
            })
            .collect())
    }
}

impl<F: PrimeField> crate::Check for Traces<F> {
    fn check(&self) -> Result<(), Error> {
        Traces::check(self)
    }
}

impl crate::Check for Layout {
    fn check(&self) -> Result<(), Error> {
        Layout::check(self)
    }
}

impl crate::Check for SubcircuitLayout {
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
}

impl<F: PrimeField> crate::Check for Entry<F> {
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
}

/// Synthesises the whole circuit in one constraint system with direct portals: shared
/// wires are ordinary wires, there is no memory checking. This is the monolithic circuit the
/// partitioned one proves, e.g. for a plain Groth16 baseline.
pub struct Monolithic<'a, F: PrimeField, S>(pub &'a Partitioned<F, S>);

impl<F: PrimeField, S: Subcircuit<F>> ark_relations::gr1cs::ConstraintSynthesizer<F>
    for Monolithic<'_, F, S>
{
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        synthesize_monolithic(self.0, cs)
    }
}

/// See [`Monolithic`]: the public input becomes the instance, then every subcircuit runs.
pub fn synthesize_monolithic<F: PrimeField, S: Subcircuit<F>>(
    circuit: &Partitioned<F, S>,
    cs: ConstraintSystemRef<F>,
) -> Result<(), SynthesisError> {
    let public: Vec<FpVar<F>> = circuit
        .public_inputs
        .iter()
        .map(|&x| FpVar::new_input(cs.clone(), || Ok(x)))
        .collect::<Result<_, _>>()?;
    let mut portals = Portals {
        cs: cs.clone(),
        mode: Mode::Direct(HashMap::new()),
    };
    for (i, sub) in circuit.subcircuits.iter().enumerate() {
        let p: &[FpVar<F>] = if i == 0 { &public } else { &[] };
        sub.generate_constraints(cs.clone(), p, &mut portals)?;
    }
    Ok(())
}

//! The memory-checking augmentation of a subcircuit (paper §4.3, Fig. 4).
//!
//! Subcircuit `i` (0-based) of a `k`-way partition becomes the Mirage circuit `C'_i`:
//!
//! * **public input** `(rt, α, β, i, addr_0, …, addr_{s_i−1})`. The last `1 + s_i` are fixed at
//!   setup (paper §6.3): subcircuits with the same shape share one Mirage setup and differ
//!   only in these trailing inputs, which each subcircuit's verifying key folds in
//!   ([`crate::mirage::VerifyingKey::fix_trailing_inputs`]).
//! * **committed witness** `w_{i,1}` (allocated first, so Mirage's `D_i` binds it): the values
//!   `v_0..v_{s_i−1}` of the slice `T_i`, then the entries `(t, i, v)` of the slice `A_i`. The
//!   subcircuit index and address of a `T_i` entry are public (`i` and `addr_j`), so only its
//!   value needs committing.
//! * **rest of the witness** `w_{i,2}`: the previous leaf `(t_{i−1}, a_{i−1}, T_{i−1}, A_{i−1})`
//!   (for `i = 0`: the public input `x` of the whole circuit), the two Merkle paths, the
//!   position bits, and the subcircuit's own wires.
//!
//! It enforces:
//!
//! 1. every portal access of the subcircuit reads the next entry of `T_i` (a `set` also checks
//!    that the entry equals the wire the subcircuit computed);
//! 2. `A` is sorted and consistent across `(a_{i−1}, A_i)`: consecutive addresses differ by 0
//!    or 1 (`d·(d−1) = 0`) and equal addresses hold equal values (`(1−d)·(v'−v) = 0`);
//! 3. the running products `T_i = T_{i−1}·Π_j (α − (i + β·addr_j + β²·v_j))` and
//!    `A_i = A_{i−1}·Π_j (α − (t_j + β·a_j + β²·v_j))`;
//! 4. leaf `i` of the tree with root `rt` is `(t_{i−1}, a_{i−1}, T_{i−1}, A_{i−1})` (for
//!    `i = 0`: leaf 0 is `x`, and the products start at 1 after a sentinel entry at address
//!    `−1`), and leaf `i+1` is `(t_i, a_i, T_i, A_i)` with `t_i`, `a_i` the last entries of the
//!    slices (or the previous ones when the slice is empty);
//! 5. in the last subcircuit only, `T_{k−1} = A_{k−1}`: the permutation check. Doing it here
//!    rather than in the verifier keeps the last leaf (which holds a shared-wire value) hidden;
//!    the verifier only opens leaf 0.
//!
//! Because the memory is read-only (§2.4), `T` need not be checked for sortedness: its
//! subcircuit indices and addresses are public inputs, so its order is fixed by the layout.

use std::cell::Cell;

use ark_crypto_primitives::sponge::poseidon::PoseidonConfig;
use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use ark_r1cs_std::alloc::AllocVar;
use ark_r1cs_std::boolean::Boolean;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_r1cs_std::fields::FieldVar;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, SynthesisError};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::merkle::{hash_leaf, hash_leaf_var, root_from_path_var, LEAF_INPUT, LEAF_TRACE};
use crate::partition::{Entry, Layout, Portals, Subcircuit};

/// Leaf `i+1` of the tree: the last entries of `T_i` and `A_i` and the running products
/// after subcircuit `i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Leaf<F: PrimeField> {
    pub t_last: Entry<F>,
    pub a_last: Entry<F>,
    pub t_product: F,
    pub a_product: F,
}

impl<F: PrimeField> Leaf<F> {
    /// The state before subcircuit 0: sentinel entries and empty products.
    pub fn initial() -> Self {
        Leaf {
            t_last: Entry::sentinel(),
            a_last: Entry::sentinel(),
            t_product: F::one(),
            a_product: F::one(),
        }
    }

    pub fn to_fields(&self) -> Vec<F> {
        let mut v = Vec::with_capacity(8);
        v.extend(self.t_last.to_fields());
        v.extend(self.a_last.to_fields());
        v.push(self.t_product);
        v.push(self.a_product);
        v
    }

    /// Advances the state over the slices `(T_i, A_i)`.
    pub fn next(&self, t_slice: &[Entry<F>], a_slice: &[Entry<F>], alpha: F, beta: F) -> Self {
        let t_product = t_slice
            .iter()
            .fold(self.t_product, |p, e| p * e.factor(alpha, beta));
        let a_product = a_slice
            .iter()
            .fold(self.a_product, |p, e| p * e.factor(alpha, beta));
        Leaf {
            t_last: t_slice.last().copied().unwrap_or(self.t_last),
            a_last: a_slice.last().copied().unwrap_or(self.a_last),
            t_product,
            a_product,
        }
    }
}

impl<F: PrimeField> crate::Check for Leaf<F> {
    fn check(&self) -> Result<(), crate::Error> {
        Ok(())
    }
}

impl<F: PrimeField + Absorb> Leaf<F> {
    pub fn hash(&self, cfg: &PoseidonConfig<F>) -> F {
        hash_leaf(cfg, LEAF_TRACE, &self.to_fields())
    }
}

/// Public inputs of `C'_i`: `(rt, α, β, i, addr_0, …)`.
pub fn public_inputs_for<F: PrimeField>(
    layout: &Layout,
    i: usize,
    alpha: F,
    beta: F,
    root: F,
) -> Vec<F> {
    let mut v = vec![root, alpha, beta];
    v.extend(fixed_inputs_for::<F>(layout, i));
    v
}

/// The setup-time part of `C'_i`'s public input: `(i, addr_0, …)`.
pub fn fixed_inputs_for<F: PrimeField>(layout: &Layout, i: usize) -> Vec<F> {
    let mut v = vec![F::from(i as u64)];
    v.extend(layout.subcircuits[i].addresses.iter().map(|&a| F::from(a)));
    v
}

/// Constraints of an augmented subcircuit by purpose.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Breakdown {
    /// The subcircuit's own constraints.
    pub body: usize,
    /// Memory checking: trace reads (`set` equalities), sortedness and consistency of `A_i`,
    /// running products.
    pub memory: usize,
    /// Leaf hashes, position bits and the two Merkle paths.
    pub merkle: usize,
}

impl Breakdown {
    pub fn total(&self) -> usize {
        self.body + self.memory + self.merkle
    }
}

/// The augmented circuit `C'_i` with its full assignment (zeros in setup mode).
pub struct Augmented<'a, F: PrimeField, S> {
    pub cfg: &'a PoseidonConfig<F>,
    pub layout: &'a Layout,
    pub index: usize,
    pub subcircuit: &'a S,
    /// The whole circuit's public input (used by subcircuit 0 only).
    pub public_inputs: &'a [F],
    pub t_values: &'a [F],
    pub a_slice: &'a [Entry<F>],
    pub alpha: F,
    pub beta: F,
    pub root: F,
    /// Leaf `i` (ignored for subcircuit 0, whose leaf 0 is the public input).
    pub prev_leaf: Leaf<F>,
    pub prev_path: &'a [F],
    pub own_path: &'a [F],
    /// Filled with the constraint breakdown when present.
    pub breakdown: Option<&'a Cell<Breakdown>>,
}

fn alloc_witnesses<F: PrimeField>(
    cs: &ConstraintSystemRef<F>,
    values: &[F],
) -> Result<Vec<FpVar<F>>, SynthesisError> {
    values
        .iter()
        .map(|&v| FpVar::new_witness(cs.clone(), || Ok(v)))
        .collect()
}

/// Little-endian position bits, constrained to recompose to `position`.
fn position_bits<F: PrimeField>(
    cs: &ConstraintSystemRef<F>,
    depth: usize,
    value: usize,
    position: &FpVar<F>,
) -> Result<Vec<Boolean<F>>, SynthesisError> {
    let bits: Vec<Boolean<F>> = (0..depth)
        .map(|b| Boolean::new_witness(cs.clone(), || Ok((value >> b) & 1 == 1)))
        .collect::<Result<_, _>>()?;
    Boolean::le_bits_to_fp(&bits)?.enforce_equal(position)?;
    Ok(bits)
}

struct EntryVar<F: PrimeField> {
    t: FpVar<F>,
    a: FpVar<F>,
    v: FpVar<F>,
}

impl<F: PrimeField> EntryVar<F> {
    fn constant(e: Entry<F>) -> Self {
        EntryVar {
            t: FpVar::Constant(e.subcircuit),
            a: FpVar::Constant(e.address),
            v: FpVar::Constant(e.value),
        }
    }

    fn fields(&self) -> [FpVar<F>; 3] {
        [self.t.clone(), self.a.clone(), self.v.clone()]
    }

    /// `α − (t + β·(a + β·v))`: two constraints.
    fn factor(&self, alpha: &FpVar<F>, beta: &FpVar<F>) -> FpVar<F> {
        alpha - (&self.t + beta * (&self.a + beta * &self.v))
    }
}

impl<F: PrimeField, S: Subcircuit<F>> ConstraintSynthesizer<F> for Augmented<'_, F, S> {
    fn generate_constraints(self, cs: ConstraintSystemRef<F>) -> Result<(), SynthesisError> {
        let layout = self.layout;
        let addresses = &layout
            .subcircuits
            .get(self.index)
            .ok_or(SynthesisError::Unsatisfiable)?
            .addresses;
        let s = addresses.len();
        let depth = layout.tree_depth();
        if self.t_values.len() != s
            || self.a_slice.len() != s
            || self.prev_path.len() != depth
            || self.own_path.len() != depth
            || (self.index == 0 && self.public_inputs.len() != layout.num_public_inputs as usize)
        {
            return Err(SynthesisError::Unsatisfiable);
        }

        // Committed witness w_{i,1}: values of T_i, then the entries of A_i.
        let t_vals = alloc_witnesses(&cs, self.t_values)?;
        let a_entries: Vec<EntryVar<F>> = self
            .a_slice
            .iter()
            .map(|e| {
                Ok(EntryVar {
                    t: FpVar::new_witness(cs.clone(), || Ok(e.subcircuit))?,
                    a: FpVar::new_witness(cs.clone(), || Ok(e.address))?,
                    v: FpVar::new_witness(cs.clone(), || Ok(e.value))?,
                })
            })
            .collect::<Result<_, SynthesisError>>()?;

        // Public input (rt, α, β, i, addr_0, …).
        let root = FpVar::new_input(cs.clone(), || Ok(self.root))?;
        let alpha = FpVar::new_input(cs.clone(), || Ok(self.alpha))?;
        let beta = FpVar::new_input(cs.clone(), || Ok(self.beta))?;
        let idx = FpVar::new_input(cs.clone(), || Ok(F::from(self.index as u64)))?;
        let addrs: Vec<FpVar<F>> = addresses
            .iter()
            .map(|&a| FpVar::new_input(cs.clone(), || Ok(F::from(a))))
            .collect::<Result<_, _>>()?;

        let mut counts = Breakdown::default();
        let mark = |cs: &ConstraintSystemRef<F>| cs.num_constraints();

        // Leaf i: the previous state, or the public input for subcircuit 0.
        let c = mark(&cs);
        let (prev_t, prev_a, prev_tp, prev_ap, prev_hash, public_vars) = if self.index == 0 {
            let x = alloc_witnesses(&cs, self.public_inputs)?;
            let h = hash_leaf_var(cs.clone(), self.cfg, LEAF_INPUT, &x)?;
            let init = Leaf::<F>::initial();
            (
                EntryVar::constant(init.t_last),
                EntryVar::constant(init.a_last),
                FpVar::one(),
                FpVar::one(),
                h,
                x,
            )
        } else {
            let f = alloc_witnesses(&cs, &self.prev_leaf.to_fields())?;
            let h = hash_leaf_var(cs.clone(), self.cfg, LEAF_TRACE, &f)?;
            let e = |o: usize| EntryVar {
                t: f[o].clone(),
                a: f[o + 1].clone(),
                v: f[o + 2].clone(),
            };
            (e(0), e(3), f[6].clone(), f[7].clone(), h, Vec::new())
        };
        counts.merkle += mark(&cs) - c;

        // Memory checks on T_i and (a_{i−1}, A_i).
        let c = mark(&cs);
        let mut t_product = prev_tp;
        for (v, addr) in t_vals.iter().zip(&addrs) {
            let e = EntryVar {
                t: idx.clone(),
                a: addr.clone(),
                v: v.clone(),
            };
            t_product *= e.factor(&alpha, &beta);
        }
        let mut a_product = prev_ap;
        let mut last = &prev_a;
        for e in &a_entries {
            let d = &e.a - &last.a;
            d.mul_equals(&(&d - FpVar::one()), &FpVar::zero())?;
            (FpVar::one() - &d).mul_equals(&(&e.v - &last.v), &FpVar::zero())?;
            a_product *= e.factor(&alpha, &beta);
            last = e;
        }
        let t_last = match (t_vals.last(), addrs.last()) {
            (Some(v), Some(a)) => EntryVar {
                t: idx.clone(),
                a: a.clone(),
                v: v.clone(),
            },
            _ => prev_t,
        };
        let a_last = last;
        if self.index + 1 == layout.num_subcircuits() {
            t_product.enforce_equal(&a_product)?;
        }
        counts.memory += mark(&cs) - c;

        // Leaf i+1 and both paths.
        let c = mark(&cs);
        let mut own = Vec::with_capacity(8);
        own.extend(t_last.fields());
        own.extend(a_last.fields());
        own.push(t_product);
        own.push(a_product);
        let own_hash = hash_leaf_var(cs.clone(), self.cfg, LEAF_TRACE, &own)?;
        let prev_bits = position_bits(&cs, depth, self.index, &idx)?;
        let own_bits = position_bits(&cs, depth, self.index + 1, &(&idx + FpVar::one()))?;
        let prev_path = alloc_witnesses(&cs, self.prev_path)?;
        let own_path = alloc_witnesses(&cs, self.own_path)?;
        root_from_path_var(cs.clone(), self.cfg, &prev_bits, &prev_hash, &prev_path)?
            .enforce_equal(&root)?;
        root_from_path_var(cs.clone(), self.cfg, &own_bits, &own_hash, &own_path)?
            .enforce_equal(&root)?;
        counts.merkle += mark(&cs) - c;

        // The subcircuit itself, its portals reading T_i.
        let c = mark(&cs);
        let mut portals =
            Portals::replay(cs.clone(), layout.address_map(), addresses.clone(), t_vals);
        self.subcircuit
            .generate_constraints(cs.clone(), &public_vars, &mut portals)?;
        if portals.unconsumed() != 0 {
            return Err(SynthesisError::Unsatisfiable);
        }
        let sets = portals.sets();
        counts.body += mark(&cs) - c - sets;
        counts.memory += sets;

        if let Some(out) = self.breakdown {
            out.set(counts);
        }
        Ok(())
    }
}

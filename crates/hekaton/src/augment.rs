//! The memory-checking augmentation of a subcircuit (paper §4.3, Fig. 4).
//!
//! Subcircuit `i` (0-based) of a `k`-way partition becomes the Mirage circuit `C'_i`:
//!
//! * **public input** `(rt, α, β, i, addr_0, …, addr_{s_i−1})`. The last `1 + s_i` are fixed at
//!   setup (paper §6.3): subcircuits with the same shape share one Mirage setup and differ
//!   only in these trailing inputs, which each subcircuit's verifying key folds in
//!   ([`crate::mirage::VerifyingKey::fix_trailing_inputs`]).
//! * **committed witness** `w_{i,1}` (allocated first, so Mirage's `D_i` binds it): the values
//!   `v_0..v_{s_i−1}` of the slice `T_i`, then the entries `(a, v)` of the slice `A_i`, then
//!   the salt `σ_{i+1}` of the leaf this subcircuit writes ([`committed_len`] variables). The
//!   address of a `T_i` entry is public (`addr_j`), so only its value needs committing.
//! * **rest of the witness** `w_{i,2}`: the previous leaf `(a_{i−1}, v_{i−1}, T_{i−1}, A_{i−1},
//!   σ_i)` (for `i = 0`: the public input `x` of the whole circuit), the two Merkle paths, the
//!   position bits, and the subcircuit's own wires.
//!
//! It enforces:
//!
//! 1. every portal access of the subcircuit reads the next entry of `T_i` (a `set` also checks
//!    that the entry equals the wire the subcircuit computed);
//! 2. `A` is sorted and consistent across `((a, v)_{i−1}, A_i)`: consecutive addresses differ
//!    by 0 or 1 (`d·(d−1) = 0`) and equal addresses hold equal values (`(1−d)·(v'−v) = 0`);
//! 3. the running products `T_i = T_{i−1}·Π_j (α − (v_j + β·addr_j))` and
//!    `A_i = A_{i−1}·Π_j (α − (v_j + β·a_j))`;
//! 4. leaf `i` of the tree with root `rt` is `((a, v)_{i−1}, T_{i−1}, A_{i−1}, σ_i)` (for
//!    `i = 0`: leaf 0 is `x`, and the products start at 1 after a sentinel entry at address
//!    `−1`), and leaf `i+1` is `((a, v)_i, T_i, A_i, σ_{i+1})` with `(a, v)_i` the last entry
//!    of `A_i` (or the previous one when the slice is empty) and `σ_{i+1}` this subcircuit's
//!    committed salt;
//! 5. in the last subcircuit only, `T_{k−1} = A_{k−1}`: the permutation check, so the verifier
//!    opens no leaf but leaf 0 (the public input).
//!
//! # Salted leaves (zero knowledge)
//!
//! Every leaf `i ≥ 1` ends in a uniformly random salt `σ_i ∈ F` that the coordinator samples
//! ([`crate::workflow::coordinator_traces`]) and hands to subcircuit `i − 1`, which commits
//! to it in `D_{i−1}` and hashes it into the leaf it writes; subcircuit `i` reads it back with
//! the rest of leaf `i`, bound by the Merkle path. Without the salt, a leaf is a fixed
//! function of shared-wire values and the public `(α, β)`, and the published root and path
//! of leaf 0 (whose first node is `H(leaf 1)`) let anyone test guesses of those values
//! offline. With it, each leaf hash is `H(…, σ_i)` for a fresh `σ_i` that appears nowhere
//! else outside the (zero-knowledge) subcircuit proofs and the (hiding) commitments, so the
//! root and the path are uniformly random to a verifier when Poseidon is modelled as a random
//! oracle (the hiding Merkle tree of the paper's zero-knowledge proof, App. C.3). Soundness is
//! unchanged: the salt is committed before `(α, β)` like the rest of `D_{i−1}`, it takes no
//! part in the memory check, and both subcircuits that read leaf `i` open it at the same
//! position of the same root, so they agree on it unless Poseidon collides. See the crate doc
//! for the exact statement.
//!
//! # Why entries carry no subcircuit index
//!
//! The paper's entries are `(t, a, v)`, with `t` the accessing subcircuit: a read-write
//! memory needs that timestamp to tell an old value from a new one. This memory is read-only
//! (§2.4), and the check only has to show that **all accesses to one address see one value**:
//!
//! * the addresses of `T` are public inputs fixed by the layout, so `T`'s order and the
//!   address of each access are not the prover's choice (and `T` needs no sortedness check);
//! * every `D_i` is fixed before `α, β` are drawn, so with probability `1 − O(N/|F|)` over
//!   `(α, β)` the products are equal only if `T` and `A` are equal as multisets of `(a, v)`
//!   (Schwartz–Zippel on `Π (X − (v + Y·a))`, `N` accesses in all);
//! * `A` is sorted (steps of 0 or 1 from the sentinel) and consistent, so it holds one value
//!   per address; a multiset equal to it does too, so every access of `T` to an address reads
//!   the same value, the one its `set` checked against the computed wire.
//!
//! Nothing in this argument uses `t`, so it is dropped. The costs per access are then 2
//! constraints in `T` (`β·addr`, one product step) and 4 per `A` entry (`β·a`, one product
//! step, sortedness, consistency); a wire set once and read once costs
//! `2·2 + 2·4 + 1 = 13` constraints (the `1` is the `set` equality), against 16 with `t`.
//! The leaf keeps only the last `A` entry: `T` needs no continuity between slices, as its
//! addresses are public.

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

use crate::merkle::{hash_leaf, hash_leaf_var, root_from_path_var};
use crate::partition::{Entry, Layout, Portals, Subcircuit, ENTRY_FIELDS};

/// Committed variables of `C'_i` for `s_i` accesses: the `s_i` values of `T_i`, the `s_i`
/// entries of `A_i`, then the salt of the leaf it writes.
pub fn committed_len(accesses: usize) -> usize {
    accesses * (1 + ENTRY_FIELDS) + 1
}

/// Field elements of a [`Leaf`]: the last entry, the two products and the salt.
pub const LEAF_FIELDS: usize = ENTRY_FIELDS + 3;

/// Leaf `i+1` of the tree: the last entry of `A_i`, the running products after subcircuit `i`
/// and the salt `σ_{i+1}` that hides them (see the module doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Leaf<F: PrimeField> {
    pub a_last: Entry<F>,
    pub t_product: F,
    pub a_product: F,
    pub salt: F,
}

impl<F: PrimeField> Leaf<F> {
    /// The state before subcircuit 0: sentinel entries and empty products (never hashed: leaf
    /// 0 is the public input, so its salt is 0).
    pub fn initial() -> Self {
        Leaf {
            a_last: Entry::sentinel(),
            t_product: F::one(),
            a_product: F::one(),
            salt: F::zero(),
        }
    }

    /// `(a, v, T, A, σ)`, the order in which the leaf is hashed.
    pub fn to_fields(&self) -> Vec<F> {
        let mut v = Vec::with_capacity(LEAF_FIELDS);
        v.extend(self.a_last.to_fields());
        v.push(self.t_product);
        v.push(self.a_product);
        v.push(self.salt);
        v
    }

    /// Advances the state over the slices `(T_i, A_i)`; `salt` is the new leaf's.
    pub fn next(
        &self,
        t_slice: &[Entry<F>],
        a_slice: &[Entry<F>],
        alpha: F,
        beta: F,
        salt: F,
    ) -> Self {
        let t_product = t_slice
            .iter()
            .fold(self.t_product, |p, e| p * e.factor(alpha, beta));
        let a_product = a_slice
            .iter()
            .fold(self.a_product, |p, e| p * e.factor(alpha, beta));
        Leaf {
            a_last: a_slice.last().copied().unwrap_or(self.a_last),
            t_product,
            a_product,
            salt,
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
        hash_leaf(cfg, &self.to_fields())
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
    /// The salt `σ_{i+1}` of the leaf this subcircuit writes (committed).
    pub salt: F,
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

#[derive(Clone)]
struct EntryVar<F: PrimeField> {
    a: FpVar<F>,
    v: FpVar<F>,
}

impl<F: PrimeField> EntryVar<F> {
    fn constant(e: Entry<F>) -> Self {
        EntryVar {
            a: FpVar::Constant(e.address),
            v: FpVar::Constant(e.value),
        }
    }

    fn fields(&self) -> [FpVar<F>; ENTRY_FIELDS] {
        [self.a.clone(), self.v.clone()]
    }

    /// `α − (v + β·a)`: one constraint (`β·a`), the rest is linear.
    fn factor(&self, alpha: &FpVar<F>, beta: &FpVar<F>) -> FpVar<F> {
        alpha - (&self.v + beta * &self.a)
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

        // Committed witness w_{i,1}: values of T_i, the entries of A_i, the salt of leaf i+1.
        let t_vals = alloc_witnesses(&cs, self.t_values)?;
        let a_entries: Vec<EntryVar<F>> = self
            .a_slice
            .iter()
            .map(|e| {
                Ok(EntryVar {
                    a: FpVar::new_witness(cs.clone(), || Ok(e.address))?,
                    v: FpVar::new_witness(cs.clone(), || Ok(e.value))?,
                })
            })
            .collect::<Result<_, SynthesisError>>()?;
        let salt = FpVar::new_witness(cs.clone(), || Ok(self.salt))?;

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
        let (prev_a, prev_tp, prev_ap, prev_hash, public_vars) = if self.index == 0 {
            let x = alloc_witnesses(&cs, self.public_inputs)?;
            let h = hash_leaf_var(cs.clone(), self.cfg, &x)?;
            let init = Leaf::<F>::initial();
            (
                EntryVar::constant(init.a_last),
                FpVar::one(),
                FpVar::one(),
                h,
                x,
            )
        } else {
            let f = alloc_witnesses(&cs, &self.prev_leaf.to_fields())?;
            let h = hash_leaf_var(cs.clone(), self.cfg, &f)?;
            let e = EntryVar {
                a: f[0].clone(),
                v: f[1].clone(),
            };
            (e, f[2].clone(), f[3].clone(), h, Vec::new())
        };
        counts.merkle += mark(&cs) - c;

        // Memory checks on T_i and (a_{i−1}, A_i).
        let c = mark(&cs);
        let mut t_product = prev_tp;
        for (v, addr) in t_vals.iter().zip(&addrs) {
            let e = EntryVar {
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
        let a_last = last;
        if self.index + 1 == layout.num_subcircuits() {
            t_product.enforce_equal(&a_product)?;
        }
        counts.memory += mark(&cs) - c;

        // Leaf i+1 and both paths.
        let c = mark(&cs);
        let mut own = Vec::with_capacity(LEAF_FIELDS);
        own.extend(a_last.fields());
        own.push(t_product);
        own.push(a_product);
        own.push(salt);
        let own_hash = hash_leaf_var(cs.clone(), self.cfg, &own)?;
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

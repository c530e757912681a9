//! plonky2's gate constraints evaluated at `ζ` in R1CS (`evaluate_gate_constraints`): for each
//! gate of the circuit, its selector filter times each of its constraints, summed per constraint
//! index.
//!
//! **Filter.** Gate `i` of the circuit has selector column `s` and group `G` (plonky2's
//! `SelectorsInfo`); with `s(ζ)` the opened selector, `filter = Π_{j∈G, j≠i} (j − s(ζ))`, times
//! `(2^32 − 1 − s(ζ))` when the circuit has more than one selector column. The gate's own
//! constants follow the selector columns.
//!
//! **Ported gates** (each a transcription of the gate's constraint polynomial over
//! [`GlExtVar`]): `NoopGate`, `ConstantGate`, `PublicInputGate`, `ArithmeticGate`,
//! `PoseidonGate` (plonky2's Goldilocks Poseidon with its fast partial rounds, every S-box input
//! a wire), `PoseidonMdsGate`, `ArithmeticExtensionGate`, `MulExtensionGate`, `BaseSumGate<2>`,
//! `ReducingGate`, `ReducingExtensionGate`, `RandomAccessGate`, `CosetInterpolationGate` (the
//! extension-valued ones in plonky2's `ExtensionAlgebra`, `a_0 + a_1·Y` with `Y² = 7` over
//! `F_{p^2}`): every gate of a standard recursive verifier circuit. Any other gate panics
//! while the circuit is built (the last shrink circuit's gate set is fixed, so this shows at
//! once); not yet ported: `ExponentiationGate`, `BaseSumGate` with other bases, the lookup
//! gates.

use std::ops::Range;

use ark_relations::gr1cs::SynthesisError;
use plonky2::field::goldilocks_field::GoldilocksField;
use plonky2::field::types::{Field, PrimeField64};
use plonky2::gates::arithmetic_base::ArithmeticGate;
use plonky2::gates::arithmetic_extension::ArithmeticExtensionGate;
use plonky2::gates::base_sum::BaseSumGate;
use plonky2::gates::multiplication_extension::MulExtensionGate;
use plonky2::gates::reducing::ReducingGate;
use plonky2::gates::reducing_extension::ReducingExtensionGate;
use plonky2::gates::constant::ConstantGate;
use plonky2::gates::coset_interpolation::CosetInterpolationGate;
use plonky2::gates::noop::NoopGate;
use plonky2::gates::poseidon::PoseidonGate;
use plonky2::gates::poseidon_mds::PoseidonMdsGate;
use plonky2::gates::public_input::PublicInputGate;
use plonky2::gates::random_access::RandomAccessGate;
use plonky2::hash::poseidon::{Poseidon, ALL_ROUND_CONSTANTS, HALF_N_FULL_ROUNDS, N_PARTIAL_ROUNDS, SPONGE_WIDTH};
use plonky2::plonk::circuit_data::CommonCircuitData;

use crate::goldilocks::{GLExt, GlExtVar, GlVar};

type GL = GoldilocksField;

/// plonky2's placeholder selector value of gates that use no selector (`u32::MAX`).
const UNUSED_SELECTOR: u64 = u32::MAX as u64;

/// The selector layout of a circuit: per gate its selector column, per column its gate range.
#[derive(Clone, Debug)]
pub struct Selectors {
    /// `selector_indices[i]`: the selector column of gate `i`.
    pub selector_indices: Vec<usize>,
    /// `groups[s]`: the gates selected by column `s`.
    pub groups: Vec<Range<usize>>,
}

impl Selectors {
    /// Reads plonky2's `SelectorsInfo` (whose fields are crate-private) through its serde form.
    pub fn of(common: &CommonCircuitData<GL, 2>) -> Self {
        let info = serde_json::to_value(&common.selectors_info).expect("SelectorsInfo serializes");
        Self {
            selector_indices: serde_json::from_value(info["selector_indices"].clone())
                .expect("selector_indices field"),
            groups: serde_json::from_value(info["groups"].clone()).expect("groups field"),
        }
    }
}

fn ext_const(x: u64) -> GlExtVar {
    GlExtVar::constant(GLExt::from_canonical_u64(x))
}

/// Whether `gate` has an R1CS port here.
pub fn is_ported(gate: &dyn plonky2::gates::gate::AnyGate<GL, 2>) -> bool {
    let any = gate.as_any();
    any.is::<NoopGate>()
        || any.is::<ConstantGate>()
        || any.is::<PublicInputGate>()
        || any.is::<ArithmeticGate>()
        || any.is::<PoseidonGate<GL, 2>>()
        || any.is::<ArithmeticExtensionGate<2>>()
        || any.is::<MulExtensionGate<2>>()
        || any.is::<BaseSumGate<2>>()
        || any.is::<ReducingGate<2>>()
        || any.is::<ReducingExtensionGate<2>>()
        || any.is::<PoseidonMdsGate<GL, 2>>()
        || any.is::<RandomAccessGate<GL, 2>>()
        || any.is::<CosetInterpolationGate<GL, 2>>()
}

/// An element `a_0 + a_1·Y` of plonky2's `ExtensionAlgebra` (`Y² = 7`, coefficients in
/// `F_{p^2}`): how extension-valued wires are evaluated at the extension point `ζ`.
type Alg = [GlExtVar; 2];

fn alg(w: &[GlExtVar], start: usize) -> Alg {
    [w[start].clone(), w[start + 1].clone()]
}

fn alg_mul(a: &Alg, b: &Alg) -> Result<Alg, SynthesisError> {
    let a: Vec<GlExtVar> = a.iter().map(|x| x.reduce()).collect::<Result<_, _>>()?;
    let b: Vec<GlExtVar> = b.iter().map(|x| x.reduce()).collect::<Result<_, _>>()?;
    let c0 = a[0].mul(&b[0])?.add(&a[1].mul(&b[1])?.mul_base_const(GL::from_canonical_u64(7))?)?;
    let c1 = a[0].mul(&b[1])?.add(&a[1].mul(&b[0])?)?;
    Ok([c0, c1])
}

fn alg_scalar_mul(a: &Alg, c: &GlExtVar) -> Result<Alg, SynthesisError> {
    let c = c.reduce()?;
    Ok([a[0].reduce()?.mul(&c)?, a[1].reduce()?.mul(&c)?])
}

fn alg_add(a: &Alg, b: &Alg) -> Result<Alg, SynthesisError> {
    Ok([a[0].add(&b[0])?, a[1].add(&b[1])?])
}

fn alg_sub(a: &Alg, b: &Alg) -> Result<Alg, SynthesisError> {
    Ok([a[0].sub(&b[0])?, a[1].sub(&b[1])?])
}

/// The accumulator chain of `ReducingGate` / `ReducingExtensionGate`: wires `0..2` output (the
/// last accumulator), `2..4` α, `4..6` the old accumulator, then the coefficients, then the
/// intermediate accumulators; `acc_{i} = acc_{i−1}·α + coeff_i`.
fn reducing_constraints(w: &[GlExtVar], coeffs: &[Alg], accs_start: usize) -> Result<Vec<GlExtVar>, SynthesisError> {
    let n = coeffs.len();
    let alpha = alg(w, 2);
    let mut acc = alg(w, 4);
    let mut out = Vec::with_capacity(2 * n);
    for (i, c) in coeffs.iter().enumerate() {
        let acc_i = if i == n - 1 { alg(w, 0) } else { alg(w, accs_start + 2 * i) };
        let t = alg_sub(&alg_add(&alg_mul(&acc, &alpha)?, c)?, &acc_i)?;
        out.extend(t);
        acc = acc_i;
    }
    Ok(out)
}

/// A gate's unfiltered constraints (plonky2's `eval_unfiltered`), given its constants (selectors
/// removed), the wires and the public-inputs hash. Panics for a gate without a port
/// ([`is_ported`]).
pub fn eval_unfiltered(
    gate: &dyn plonky2::gates::gate::AnyGate<GL, 2>,
    constants: &[GlExtVar],
    wires: &[GlExtVar],
    pi_hash: &[GlVar],
) -> Result<Vec<GlExtVar>, SynthesisError> {
    let any = gate.as_any();
    if any.downcast_ref::<NoopGate>().is_some() {
        Ok(Vec::new())
    } else if any.downcast_ref::<ConstantGate>().is_some() {
        // Constant i is constant column i, output wire i.
        let n = plonky2::gates::gate::Gate::<GL, 2>::num_constraints(gate);
        (0..n).map(|i| constants[i].sub(&wires[i])).collect()
    } else if any.downcast_ref::<PublicInputGate>().is_some() {
        // Wires 0..4 hold the public-inputs hash.
        (0..4).map(|i| wires[i].sub(&GlExtVar::from_base(pi_hash[i].clone()))).collect()
    } else if let Some(g) = any.downcast_ref::<ArithmeticGate>() {
        // Operation i: wires 4i, 4i+1 (multiplicands), 4i+2 (addend), 4i+3 (output);
        // output = c_0·m_0·m_1 + c_1·addend.
        let (c0, c1) = (&constants[0], &constants[1]);
        (0..g.num_ops)
            .map(|i| {
                let prod = wires[4 * i].mul(&wires[4 * i + 1])?.reduce()?.mul(c0)?;
                let computed = prod.add(&wires[4 * i + 2].mul(c1)?)?;
                wires[4 * i + 3].sub(&computed)
            })
            .collect()
    } else if any.downcast_ref::<PoseidonGate<GL, 2>>().is_some() {
        poseidon_gate_constraints(wires)
    } else if let Some(g) = any.downcast_ref::<ArithmeticExtensionGate<2>>() {
        // Operation i: algebra wires at 8i (m_0), 8i+2 (m_1), 8i+4 (addend), 8i+6 (output).
        let mut out = Vec::with_capacity(2 * g.num_ops);
        for i in 0..g.num_ops {
            let prod = alg_scalar_mul(&alg_mul(&alg(wires, 8 * i), &alg(wires, 8 * i + 2))?, &constants[0])?;
            let computed = alg_add(&prod, &alg_scalar_mul(&alg(wires, 8 * i + 4), &constants[1])?)?;
            out.extend(alg_sub(&alg(wires, 8 * i + 6), &computed)?);
        }
        Ok(out)
    } else if let Some(g) = any.downcast_ref::<MulExtensionGate<2>>() {
        // Operation i: algebra wires at 6i (m_0), 6i+2 (m_1), 6i+4 (output).
        let mut out = Vec::with_capacity(2 * g.num_ops);
        for i in 0..g.num_ops {
            let prod = alg_scalar_mul(&alg_mul(&alg(wires, 6 * i), &alg(wires, 6 * i + 2))?, &constants[0])?;
            out.extend(alg_sub(&alg(wires, 6 * i + 4), &prod)?);
        }
        Ok(out)
    } else if let Some(g) = any.downcast_ref::<BaseSumGate<2>>() {
        // Wire 0 is the sum, wires 1..=num_limbs the bits (least significant first).
        let limbs = &wires[1..1 + g.num_limbs];
        let mut sum = GlExtVar::zero();
        for (k, l) in limbs.iter().enumerate() {
            sum = sum.add(&l.mul_base_const(GL::from_canonical_u64(1u64 << k))?)?;
        }
        let mut out = vec![sum.sub(&wires[0])?];
        for l in limbs {
            out.push(l.mul(&l.sub(&ext_const(1))?)?);
        }
        Ok(out)
    } else if let Some(g) = any.downcast_ref::<ReducingGate<2>>() {
        // Base-field coefficients at wires 6.., embedded as `c + 0·Y`.
        let coeffs: Vec<Alg> = (0..g.num_coeffs).map(|i| [wires[6 + i].clone(), GlExtVar::zero()]).collect();
        reducing_constraints(wires, &coeffs, 6 + g.num_coeffs)
    } else if let Some(g) = any.downcast_ref::<ReducingExtensionGate<2>>() {
        let coeffs: Vec<Alg> = (0..g.num_coeffs).map(|i| alg(wires, 6 + 2 * i)).collect();
        reducing_constraints(wires, &coeffs, 6 + 2 * g.num_coeffs)
    } else if any.downcast_ref::<PoseidonMdsGate<GL, 2>>().is_some() {
        // Inputs: algebra wires 2i; outputs: algebra wires 2(12 + i); the Poseidon MDS layer.
        let circ = <GL as Poseidon>::MDS_MATRIX_CIRC;
        let diag = <GL as Poseidon>::MDS_MATRIX_DIAG;
        let v: Vec<Alg> = (0..SPONGE_WIDTH).map(|i| alg(wires, 2 * i)).collect();
        let scale = |a: &Alg, c: u64| -> Result<Alg, SynthesisError> {
            Ok([a[0].mul_base_const(gl(c))?, a[1].mul_base_const(gl(c))?])
        };
        let mut out = Vec::with_capacity(4 * SPONGE_WIDTH);
        for r in 0..SPONGE_WIDTH {
            let mut acc = scale(&v[r], diag[r])?;
            for (i, c) in circ.iter().enumerate() {
                acc = alg_add(&acc, &scale(&v[(i + r) % SPONGE_WIDTH], *c)?)?;
            }
            out.extend(alg_sub(&alg(wires, 2 * (SPONGE_WIDTH + r)), &acc)?);
        }
        Ok(out)
    } else if let Some(g) = any.downcast_ref::<RandomAccessGate<GL, 2>>() {
        // Copy c: wires (2 + n)c (index), +1 (claimed element), +2.. (the n = 2^bits items);
        // then the extra constants; then, after the routed wires, the index bits of each copy.
        let n = 1usize << g.bits;
        let routed = (2 + n) * g.num_copies + g.num_extra_constants;
        let mut out = Vec::new();
        for copy in 0..g.num_copies {
            let base = (2 + n) * copy;
            let bits: Vec<&GlExtVar> = (0..g.bits).map(|i| &wires[routed + copy * g.bits + i]).collect();
            for b in &bits {
                out.push(b.mul(&b.sub(&ext_const(1))?)?);
            }
            let mut index = GlExtVar::zero();
            for (i, b) in bits.iter().enumerate() {
                index = index.add(&b.mul_base_const(gl(1u64 << i))?)?;
            }
            out.push(index.sub(&wires[base])?);
            let mut items: Vec<GlExtVar> = wires[base + 2..base + 2 + n].to_vec();
            for b in &bits {
                items = items
                    .chunks(2)
                    .map(|xy| xy[0].add(&b.mul(&xy[1].sub(&xy[0])?)?))
                    .collect::<Result<_, _>>()?;
            }
            out.push(items[0].sub(&wires[base + 1])?);
        }
        for i in 0..g.num_extra_constants {
            out.push(constants[i].sub(&wires[(2 + n) * g.num_copies + i])?);
        }
        Ok(out)
    } else if let Some(g) = any.downcast_ref::<CosetInterpolationGate<GL, 2>>() {
        coset_interpolation_constraints(g, wires)
    } else {
        panic!("gate {} is not ported to R1CS yet", gate.id());
    }
}

/// Reduces `x` when a coordinate's bound passes `2^180`, so that a product with a 64-bit
/// constant stays below the `2^252` limit without reducing `x` once per product.
fn tame(x: &GlExtVar) -> Result<GlExtVar, SynthesisError> {
    if x.c0.bound.bits() > 180 || x.c1.bound.bits() > 180 {
        x.reduce()
    } else {
        Ok(x.clone())
    }
}

fn ext_sbox7(x: &GlExtVar) -> Result<GlExtVar, SynthesisError> {
    let x = x.reduce()?;
    let x2 = x.mul(&x)?.reduce()?;
    let x3 = x2.mul(&x)?;
    let x4 = x2.mul(&x2)?.reduce()?;
    x3.mul(&x4)
}

fn gl(x: u64) -> GL {
    GL::from_canonical_u64(x)
}

fn constant_layer(state: &mut [GlExtVar; SPONGE_WIDTH], round: usize) -> Result<(), SynthesisError> {
    for (i, s) in state.iter_mut().enumerate() {
        *s = s.add(&ext_const(ALL_ROUND_CONSTANTS[i + SPONGE_WIDTH * round]))?;
    }
    Ok(())
}

fn mds_layer(state: &[GlExtVar; SPONGE_WIDTH]) -> Result<[GlExtVar; SPONGE_WIDTH], SynthesisError> {
    let circ = <GL as Poseidon>::MDS_MATRIX_CIRC;
    let diag = <GL as Poseidon>::MDS_MATRIX_DIAG;
    let state: Vec<GlExtVar> = state.iter().map(tame).collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(SPONGE_WIDTH);
    for r in 0..SPONGE_WIDTH {
        let mut acc = state[r].mul_base_const(gl(diag[r]))?;
        for (i, c) in circ.iter().enumerate() {
            acc = acc.add(&state[(i + r) % SPONGE_WIDTH].mul_base_const(gl(*c))?)?;
        }
        out.push(acc);
    }
    Ok(out.try_into().expect("width 12"))
}

/// One chunk of plonky2's `partial_interpolate_ext_algebra`: from `(eval, prod)`, for each point
/// `x_i` with weighted value `v_i`: `eval ← eval·(x − x_i) + v_i·prod`, `prod ← prod·(x − x_i)`.
fn partial_interpolate(
    domain: &[GL],
    values: &[Alg],
    weights: &[GL],
    x: &Alg,
    mut eval: Alg,
    mut prod: Alg,
) -> Result<(Alg, Alg), SynthesisError> {
    for ((x_i, v), w) in domain.iter().zip(values).zip(weights) {
        let term = [x[0].sub(&ext_const(x_i.to_canonical_u64()))?, x[1].clone()];
        let weighted = [v[0].mul_base_const(*w)?, v[1].mul_base_const(*w)?];
        let next_eval = alg_add(&alg_mul(&eval, &term)?, &alg_mul(&weighted, &prod)?)?;
        prod = alg_mul(&prod, &term)?;
        eval = next_eval;
    }
    Ok((eval, prod))
}

/// plonky2's `CosetInterpolationGate::eval_unfiltered`: wire 0 the coset shift, then the `n`
/// values (algebra), the evaluation point, the evaluation value, the intermediate evaluations and
/// products (`m = (n − 2)/(degree − 1)` each), and the shifted evaluation point.
fn coset_interpolation_constraints(
    g: &CosetInterpolationGate<GL, 2>,
    w: &[GlExtVar],
) -> Result<Vec<GlExtVar>, SynthesisError> {
    let n = 1usize << g.subgroup_bits;
    let degree = g.degree;
    let m = (n - 2) / (degree - 1);
    let start_ep = 1 + 2 * n;
    let start_int = start_ep + 4;
    let shift = &w[0];
    let ep = alg(w, start_ep);
    let sep = alg(w, start_int + 4 * m);
    let mut out = Vec::new();
    out.extend(alg_sub(&ep, &alg_scalar_mul(&sep, shift)?)?);
    let domain = GL::two_adic_subgroup(g.subgroup_bits);
    let values: Vec<Alg> = (0..n).map(|i| alg(w, 1 + 2 * i)).collect();
    let weights = &g.barycentric_weights;
    let one: Alg = [ext_const(1), GlExtVar::zero()];
    let zero: Alg = [GlExtVar::zero(), GlExtVar::zero()];
    let (mut eval, mut prod) =
        partial_interpolate(&domain[..degree], &values[..degree], &weights[..degree], &sep, zero, one)?;
    for i in 0..m {
        let ie = alg(w, start_int + 2 * i);
        let ip = alg(w, start_int + 2 * (m + i));
        out.extend(alg_sub(&ie, &eval)?);
        out.extend(alg_sub(&ip, &prod)?);
        let start = 1 + (degree - 1) * (i + 1);
        let end = (start + degree - 1).min(n);
        (eval, prod) =
            partial_interpolate(&domain[start..end], &values[start..end], &weights[start..end], &sep, ie, ip)?;
    }
    out.extend(alg_sub(&alg(w, start_ep + 2), &eval)?);
    Ok(out)
}

/// plonky2's `PoseidonGate::eval_unfiltered` over emulated values.
fn poseidon_gate_constraints(w: &[GlExtVar]) -> Result<Vec<GlExtVar>, SynthesisError> {
    const SWAP: usize = 2 * SPONGE_WIDTH;
    const DELTA: usize = SWAP + 1;
    const FULL_0: usize = DELTA + 4;
    const PARTIAL: usize = FULL_0 + SPONGE_WIDTH * (HALF_N_FULL_ROUNDS - 1);
    const FULL_1: usize = PARTIAL + N_PARTIAL_ROUNDS;
    let one = ext_const(1);
    let mut out = Vec::new();
    let swap = &w[SWAP];
    out.push(swap.mul(&swap.sub(&one)?)?);
    for i in 0..4 {
        out.push(swap.mul(&w[i + 4].sub(&w[i])?)?.sub(&w[DELTA + i])?);
    }
    let mut state: [GlExtVar; SPONGE_WIDTH] = core::array::from_fn(|i| w[i].clone());
    for i in 0..4 {
        state[i] = w[i].add(&w[DELTA + i])?;
        state[i + 4] = w[i + 4].sub(&w[DELTA + i])?;
    }
    let mut round = 0;
    for r in 0..HALF_N_FULL_ROUNDS {
        constant_layer(&mut state, round)?;
        if r != 0 {
            for (i, s) in state.iter_mut().enumerate() {
                let sbox_in = &w[FULL_0 + SPONGE_WIDTH * (r - 1) + i];
                out.push(s.sub(sbox_in)?);
                *s = sbox_in.clone();
            }
        }
        for s in state.iter_mut() {
            *s = ext_sbox7(s)?;
        }
        state = mds_layer(&state)?;
        round += 1;
    }
    // Partial rounds, in plonky2's fast form.
    for (s, c) in state.iter_mut().zip(<GL as Poseidon>::FAST_PARTIAL_FIRST_ROUND_CONSTANT) {
        *s = s.add(&ext_const(c))?;
    }
    let tamed: Vec<GlExtVar> = state.iter().map(tame).collect::<Result<_, _>>()?;
    let mut init: [GlExtVar; SPONGE_WIDTH] = core::array::from_fn(|_| GlExtVar::zero());
    init[0] = tamed[0].clone();
    for (row, s) in <GL as Poseidon>::FAST_PARTIAL_ROUND_INITIAL_MATRIX.iter().zip(&tamed[1..]) {
        for (acc, t) in init[1..].iter_mut().zip(row) {
            *acc = acc.add(&s.mul_base_const(gl(*t))?)?;
        }
    }
    state = init;
    for r in 0..N_PARTIAL_ROUNDS {
        let sbox_in = &w[PARTIAL + r];
        out.push(state[0].sub(sbox_in)?);
        state[0] = ext_sbox7(sbox_in)?;
        if r < N_PARTIAL_ROUNDS - 1 {
            state[0] = state[0].add(&ext_const(<GL as Poseidon>::FAST_PARTIAL_ROUND_CONSTANTS[r]))?;
        }
        // mds_partial_layer_fast.
        let st: Vec<GlExtVar> = state.iter().map(tame).collect::<Result<_, _>>()?;
        let mds00 = <GL as Poseidon>::MDS_MATRIX_CIRC[0] + <GL as Poseidon>::MDS_MATRIX_DIAG[0];
        let mut d = st[0].mul_base_const(gl(mds00))?;
        for (s, w_hat) in st[1..].iter().zip(<GL as Poseidon>::FAST_PARTIAL_ROUND_W_HATS[r]) {
            d = d.add(&s.mul_base_const(gl(w_hat))?)?;
        }
        let mut next: [GlExtVar; SPONGE_WIDTH] = core::array::from_fn(|_| GlExtVar::zero());
        next[0] = d;
        for ((n, s), v) in next[1..].iter_mut().zip(&st[1..]).zip(<GL as Poseidon>::FAST_PARTIAL_ROUND_VS[r]) {
            *n = st[0].mul_base_const(gl(v))?.add(s)?;
        }
        state = next;
    }
    round += N_PARTIAL_ROUNDS;
    for r in 0..HALF_N_FULL_ROUNDS {
        constant_layer(&mut state, round)?;
        for (i, s) in state.iter_mut().enumerate() {
            let sbox_in = &w[FULL_1 + SPONGE_WIDTH * r + i];
            out.push(s.sub(sbox_in)?);
            *s = sbox_in.clone();
        }
        for s in state.iter_mut() {
            *s = ext_sbox7(s)?;
        }
        state = mds_layer(&state)?;
        round += 1;
    }
    for (i, s) in state.iter().enumerate() {
        out.push(s.sub(&w[SPONGE_WIDTH + i])?);
    }
    Ok(out)
}

/// plonky2's `evaluate_gate_constraints` at `ζ`: `common.num_gate_constraints` terms (unreduced).
/// Panics if the circuit has a gate without a port.
pub fn evaluate_gate_constraints_var(
    common: &CommonCircuitData<GL, 2>,
    constants: &[GlExtVar],
    wires: &[GlExtVar],
    pi_hash: &[GlVar],
) -> Result<Vec<GlExtVar>, SynthesisError> {
    let (terms, skipped) = evaluate_ported_gate_constraints_var(common, constants, wires, pi_hash)?;
    assert!(skipped.is_empty(), "gates not ported to R1CS yet: {skipped:?}");
    Ok(terms)
}

/// As [`evaluate_gate_constraints_var`], but gates without a port are left out (their ids
/// returned): the terms are then wrong, only the constraint count of the rest is meaningful. For
/// measuring circuits whose gate set is not fully ported yet.
pub fn evaluate_ported_gate_constraints_var(
    common: &CommonCircuitData<GL, 2>,
    constants: &[GlExtVar],
    wires: &[GlExtVar],
    pi_hash: &[GlVar],
) -> Result<(Vec<GlExtVar>, Vec<String>), SynthesisError> {
    let sel = Selectors::of(common);
    let num_selectors = sel.groups.len();
    let gate_constants = &constants[num_selectors + common.num_lookup_selectors..];
    let mut terms = vec![GlExtVar::zero(); common.num_gate_constraints];
    let mut skipped = Vec::new();
    for (i, gate) in common.gates.iter().enumerate() {
        if !is_ported(gate.0.as_ref()) {
            skipped.push(gate.0.id());
            continue;
        }
        let s = sel.selector_indices[i];
        let s_val = &constants[s];
        let mut filter = ext_const(1);
        let factors = sel.groups[s]
            .clone()
            .filter(|&j| j != i)
            .map(|j| j as u64)
            .chain((num_selectors > 1).then_some(UNUSED_SELECTOR));
        for j in factors {
            filter = filter.mul(&ext_const(j).sub(s_val)?)?.reduce()?;
        }
        let constraints = eval_unfiltered(gate.0.as_ref(), gate_constants, wires, pi_hash)?;
        for (t, c) in terms.iter_mut().zip(constraints) {
            *t = t.add(&filter.mul(&c.reduce()?)?)?;
        }
    }
    Ok((terms, skipped))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bn254::Fr;
    use ark_relations::gr1cs::ConstraintSystem;
    use plonky2::hash::hash_types::HashOut;
    use plonky2::plonk::circuit_data::CircuitData;
    use plonky2::plonk::proof::ProofWithPublicInputs;
    use plonky2::plonk::vars::EvaluationVars;

    use crate::challenger_gadget::{proof_challenges, TranscriptVar};
    use crate::fri_gadget::{verify_fri_var, FriQueriesVar};
    use crate::hasher::PoseidonBn254GoldilocksConfig as C;
    use crate::vanishing_gadget::{check_vanishing_var, OpeningsVar};
    use ark_r1cs_std::fields::fp::FpVar;

    /// A proof of a circuit built from ported gates only (no public inputs, so no Poseidon gate
    /// for their hash), in a small toy FRI configuration.
    fn small_proof() -> (CircuitData<GL, C, 2>, ProofWithPublicInputs<GL, C, 2>) {
        use plonky2::fri::reduction_strategies::FriReductionStrategy;
        use plonky2::iop::witness::{PartialWitness, WitnessWrite};
        use plonky2::plonk::circuit_builder::CircuitBuilder;
        use plonky2::plonk::circuit_data::CircuitConfig;
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.proof_of_work_bits = 2;
        config.fri_config.num_query_rounds = 2;
        config.fri_config.reduction_strategy = FriReductionStrategy::ConstantArityBits(2, 2);
        config.security_bits = 8;
        let mut b = CircuitBuilder::<GL, 2>::new(config);
        let x = b.add_virtual_target();
        let mut y = x;
        for k in 0..300u64 {
            let c = b.constant(GL::from_canonical_u64(k + 2));
            y = b.mul_add(y, c, x);
        }
        let expected = b.add_virtual_target();
        b.connect(y, expected);
        let data = b.build::<C>();
        let xv = GL::from_canonical_u64(5);
        let mut yv = xv;
        for k in 0..300u64 {
            yv = yv * GL::from_canonical_u64(k + 2) + xv;
        }
        let mut pw = PartialWitness::new();
        pw.set_target(x, xv).unwrap();
        pw.set_target(expected, yv).unwrap();
        let proof = data.prove(pw).unwrap();
        data.verify(proof.clone()).unwrap();
        (data, proof)
    }

    fn native_gate_terms(common: &CommonCircuitData<GL, 2>, proof: &ProofWithPublicInputs<GL, C, 2>) -> Vec<GLExt> {
        let sel = Selectors::of(common);
        let pih: HashOut<GL> = proof.get_public_inputs_hash();
        let vars = EvaluationVars {
            local_constants: &proof.proof.openings.constants,
            local_wires: &proof.proof.openings.wires,
            public_inputs_hash: &pih,
        };
        let mut out = vec![GLExt::ZERO; common.num_gate_constraints];
        for (i, gate) in common.gates.iter().enumerate() {
            let s = sel.selector_indices[i];
            let cs = gate.0.eval_filtered(vars, i, s, sel.groups[s].clone(), sel.groups.len(), common.num_lookup_selectors);
            for (o, c) in out.iter_mut().zip(cs) {
                *o += c;
            }
        }
        out
    }

    /// The whole plonky2 verifier in R1CS on `proof`: transcript, challenges, gates, vanishing
    /// identity, FRI. Returns (satisfied, constraints by part).
    fn verify_in_circuit(data: &CircuitData<GL, C, 2>, proof: &ProofWithPublicInputs<GL, C, 2>) -> (bool, [usize; 5]) {
        let cs = ConstraintSystem::<Fr>::new_ref();
        let mut marks = vec![0];
        let t = TranscriptVar::new_witness(cs.clone(), proof).unwrap();
        let q = FriQueriesVar::new_witness(cs.clone(), &proof.proof.opening_proof).unwrap();
        marks.push(cs.num_constraints());
        let ch = proof_challenges(&t, data.verifier_only.circuit_digest.0, &data.common).unwrap();
        marks.push(cs.num_constraints());
        let o = OpeningsVar::from_transcript(&t, &data.common);
        let terms = evaluate_gate_constraints_var(&data.common, &o.constants, &o.wires, &t.public_inputs_hash).unwrap();
        marks.push(cs.num_constraints());
        check_vanishing_var(&data.common, &o, &ch, &terms).unwrap();
        marks.push(cs.num_constraints());
        let consts: Vec<FpVar<Fr>> =
            data.verifier_only.constants_sigmas_cap.0.iter().map(|h| FpVar::Constant(h.0)).collect();
        let caps = [consts, t.wires_cap.clone(), t.zs_cap.clone(), t.quotient_cap.clone()];
        verify_fri_var(&data.common, &caps, &t, &ch, &q).unwrap();
        marks.push(cs.num_constraints());
        let parts = [0, 1, 2, 3, 4].map(|k| marks[k + 1] - marks[k]);
        (cs.is_satisfied().unwrap(), parts)
    }

    #[test]
    fn gate_terms_match_native() {
        let (data, proof) = small_proof();
        let ids: Vec<String> = data.common.gates.iter().map(|g| g.0.id()).collect();
        println!("gates: {ids:?}");
        let cs = ConstraintSystem::<Fr>::new_ref();
        let t = TranscriptVar::new_witness(cs.clone(), &proof).unwrap();
        let o = OpeningsVar::from_transcript(&t, &data.common);
        let terms = evaluate_gate_constraints_var(&data.common, &o.constants, &o.wires, &t.public_inputs_hash).unwrap();
        let native = native_gate_terms(&data.common, &proof);
        let got: Vec<GLExt> = terms.iter().map(|x| x.value().unwrap()).collect();
        assert_eq!(got, native);
        assert!(cs.is_satisfied().unwrap());
    }

    /// Every gate of a recursive verifier circuit is ported and computes plonky2's
    /// `eval_unfiltered` on random openings.
    #[test]
    fn ported_gates_of_a_recursive_circuit() {
        use plonky2::field::types::Sample;
        use plonky2::plonk::circuit_builder::CircuitBuilder;
        use plonky2::plonk::circuit_data::CircuitConfig;
        use plonky2::plonk::config::PoseidonGoldilocksConfig;
        let config = CircuitConfig::standard_recursion_config();
        // An inner circuit large enough for its FRI proof to have a folding layer, so the
        // verifier uses CosetInterpolationGate.
        let mut inner = CircuitBuilder::<GL, 2>::new(config.clone());
        let x = inner.add_virtual_target();
        inner.register_public_input(x);
        let mut y = x;
        for _ in 0..(1 << 11) {
            y = inner.mul_add(y, y, x);
        }
        inner.register_public_input(y);
        let inner = inner.build::<PoseidonGoldilocksConfig>();
        let mut outer = CircuitBuilder::<GL, 2>::new(config);
        let pt = outer.add_virtual_proof_with_pis(&inner.common);
        let vd = outer.constant_verifier_data(&inner.verifier_only);
        outer.verify_proof::<PoseidonGoldilocksConfig>(&pt, &vd, &inner.common);
        // The gate set does not depend on the outer hasher: build with Goldilocks Poseidon, which
        // commits to the constants much faster than Poseidon-BN254 in a debug build.
        let outer = outer.build::<PoseidonGoldilocksConfig>();
        let common = &outer.common;
        assert!(common.gates.iter().any(|g| g.0.id().starts_with("CosetInterpolationGate")));
        let constants: Vec<GLExt> = (0..common.num_constants).map(|_| GLExt::rand()).collect();
        let wires: Vec<GLExt> = (0..common.config.num_wires).map(|_| GLExt::rand()).collect();
        let pih = HashOut { elements: GL::rand_array() };
        let num_sel = Selectors::of(common).groups.len() + common.num_lookup_selectors;
        let vars = EvaluationVars { local_constants: &constants[num_sel..], local_wires: &wires, public_inputs_hash: &pih };
        let cs = ConstraintSystem::<Fr>::new_ref();
        let cv: Vec<GlExtVar> = constants[num_sel..].iter().map(|c| GlExtVar::new_witness(cs.clone(), Some(*c)).unwrap()).collect();
        let wv: Vec<GlExtVar> = wires.iter().map(|w| GlExtVar::new_witness(cs.clone(), Some(*w)).unwrap()).collect();
        let pv: Vec<GlVar> = pih.elements.iter().map(|e| GlVar::new_witness(cs.clone(), Some(*e)).unwrap()).collect();
        let mut todo = Vec::new();
        for gate in &common.gates {
            if !is_ported(gate.0.as_ref()) {
                todo.push(gate.0.id());
                continue;
            }
            let before = cs.num_constraints();
            let got = eval_unfiltered(gate.0.as_ref(), &cv, &wv, &pv).unwrap();
            let cost = cs.num_constraints() - before;
            let native = gate.0.eval_unfiltered(vars);
            assert_eq!(got.iter().map(|g| g.value().unwrap()).collect::<Vec<_>>(), native, "{}", gate.0.id());
            println!("{}: {cost} constraints", gate.0.id());
        }
        assert!(cs.is_satisfied().unwrap());
        assert!(todo.is_empty(), "gates of a recursive circuit not ported: {todo:?}");
    }

    /// A circuit with public inputs (so a Poseidon gate hashes them) and a Poseidon hash.
    #[test]
    fn poseidon_gate_terms_match_native() {
        use plonky2::iop::witness::{PartialWitness, WitnessWrite};
        use plonky2::plonk::circuit_builder::CircuitBuilder;
        use plonky2::plonk::circuit_data::CircuitConfig;
        let mut config = CircuitConfig::standard_recursion_config();
        config.fri_config.proof_of_work_bits = 2;
        config.fri_config.num_query_rounds = 2;
        config.security_bits = 8;
        let mut b = CircuitBuilder::<GL, 2>::new(config);
        let x = b.add_virtual_target();
        b.register_public_input(x);
        let h = b.hash_n_to_hash_no_pad::<plonky2::hash::poseidon::PoseidonHash>(vec![x, x, x]);
        b.register_public_inputs(&h.elements);
        let data = b.build::<C>();
        let mut pw = PartialWitness::new();
        pw.set_target(x, GL::from_canonical_u64(9)).unwrap();
        let proof = data.prove(pw).unwrap();
        let ids: Vec<String> = data.common.gates.iter().map(|g| g.0.id()).collect();
        assert!(ids.iter().any(|id| id.starts_with("PoseidonGate")), "{ids:?}");
        let cs = ConstraintSystem::<Fr>::new_ref();
        let t = TranscriptVar::new_witness(cs.clone(), &proof).unwrap();
        let o = OpeningsVar::from_transcript(&t, &data.common);
        let before = cs.num_constraints();
        let terms = evaluate_gate_constraints_var(&data.common, &o.constants, &o.wires, &t.public_inputs_hash).unwrap();
        println!("gate constraints of {ids:?}: {} constraints", cs.num_constraints() - before);
        let got: Vec<GLExt> = terms.iter().map(|x| x.value().unwrap()).collect();
        assert_eq!(got, native_gate_terms(&data.common, &proof));
        assert!(cs.is_satisfied().unwrap());
    }

    /// A complete in-circuit verification of a real proof is satisfied; a proof whose wire
    /// opening was changed (and everything recomputed as a cheating prover would) is not.
    #[test]
    fn complete_verifier_on_a_real_proof() {
        let (data, proof) = small_proof();
        let (ok, parts) = verify_in_circuit(&data, &proof);
        assert!(ok);
        println!(
            "complete R1CS verifier of a degree-2^{} proof ({} queries): alloc {}, challenges {}, gates {}, vanishing {}, FRI {}; total {}",
            data.common.degree_bits(),
            data.common.fri_params.config.num_query_rounds,
            parts[0],
            parts[1],
            parts[2],
            parts[3],
            parts[4],
            parts.iter().sum::<usize>()
        );
        let mut bad = proof.clone();
        bad.proof.openings.wires[7] += GLExt::ONE;
        assert!(!verify_in_circuit(&data, &bad).0);
    }
}

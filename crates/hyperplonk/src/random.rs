//! Random satisfiable circuits with copy constraints and public inputs, for tests and
//! benchmarks: the first `ℓ` gates expose the public input (`q_L = 1`, `w_1 = x_i`); every
//! later gate is an addition, a multiplication, a constant or a gate with random selectors,
//! whose inputs are, each with probability one half, copies of an earlier gate's output
//! (or of a public input) and otherwise fresh values.
//!
//! [`sparse_satisfiable`] makes witnesses shaped like real ones for the sparse MSM (zkSpeed
//! §6.2: 10% full-width scalars, 45% zeros, 45% ones).

use ark_ff::PrimeField;
use rand::Rng;

use crate::circuit::{Circuit, Selectors, Wire, Witness};
use crate::Error;

/// A circuit, a public input and a witness that satisfies it.
pub type Satisfiable<F> = (Circuit<F>, Vec<F>, Witness<F>);

/// A random circuit with `2^num_vars` gates and `num_public` public inputs, a public input
/// and a witness that satisfy it.
pub fn satisfiable<F: PrimeField, R: Rng>(
    num_vars: usize,
    num_public: usize,
    rng: &mut R,
) -> Result<Satisfiable<F>, Error> {
    let n = 1usize << num_vars;
    let mut s = Selectors::zeros(n);
    let mut w: [Vec<F>; 3] = std::array::from_fn(|_| vec![F::zero(); n]);
    let mut copies = Vec::new();
    // Wires whose values later gates may read: (wire, value).
    let mut sources: Vec<(Wire, F)> = Vec::new();
    let public: Vec<F> = (0..num_public.min(n)).map(|_| F::rand(rng)).collect();
    let (one, zero) = (F::one(), F::zero());
    for i in 0..n {
        if i < public.len() {
            s.set(i, [one, zero, zero, zero, zero]);
            w[0][i] = public[i];
            w[1][i] = F::rand(rng);
            w[2][i] = F::rand(rng);
            sources.push((Wire::new(0, i), public[i]));
            continue;
        }
        let mut input = |col: usize, w: &mut [Vec<F>; 3], copies: &mut Vec<(Wire, Wire)>| {
            if !sources.is_empty() && rng.gen_bool(0.5) {
                let (src, v) = sources[rng.gen_range(0..sources.len())];
                copies.push((Wire::new(col, i), src));
                w[col][i] = v;
            } else {
                w[col][i] = F::rand(rng);
            }
        };
        input(0, &mut w, &mut copies);
        input(1, &mut w, &mut copies);
        let (a, b) = (w[0][i], w[1][i]);
        match rng.gen_range(0..4) {
            0 => {
                s.set(i, [one, one, zero, one, zero]);
                w[2][i] = a + b;
            }
            1 => {
                s.set(i, [zero, zero, one, one, zero]);
                w[2][i] = a * b;
            }
            2 => {
                // A constant: w_1 = c (its input, if copied, is c), q_L·w_1 + q_C = 0.
                s.set(i, [one, zero, zero, zero, -a]);
                w[2][i] = F::rand(rng);
                continue;
            }
            _ => {
                let q: [F; 4] = std::array::from_fn(|_| F::rand(rng));
                let q_o = loop {
                    let v = F::rand(rng);
                    if !v.is_zero() {
                        break v;
                    }
                };
                s.set(i, [q[0], q[1], q[2], q_o, q[3]]);
                let out = q[0] * a + q[1] * b + q[2] * a * b + q[3];
                w[2][i] = out * q_o.inverse().expect("nonzero");
            }
        }
        sources.push((Wire::new(2, i), w[2][i]));
    }
    let circuit = Circuit::new(num_vars, public.len(), s, &copies)?;
    Ok((circuit, public, Witness { columns: w }))
}

/// A random satisfiable circuit whose witness values are full-width with probability
/// `dense` and otherwise 0 or 1 (half each): the first `ℓ` gates expose the public input as in
/// [`satisfiable`]; every later gate reads two values (each a copy of an earlier gate's output
/// with probability one half, else fresh) and outputs a fresh value `w_3`, with random
/// `q_L, q_R, q_M, q_O` and `q_C` solving the gate identity.
pub fn sparse_satisfiable<F: PrimeField, R: Rng>(
    num_vars: usize,
    num_public: usize,
    dense: f64,
    rng: &mut R,
) -> Result<Satisfiable<F>, Error> {
    if !(0.0..=1.0).contains(&dense) {
        return Err(Error::InvalidCircuit(format!(
            "dense fraction {dense} is not a probability"
        )));
    }
    let n = 1usize << num_vars;
    let mut s = Selectors::zeros(n);
    let mut w: [Vec<F>; 3] = std::array::from_fn(|_| vec![F::zero(); n]);
    let mut copies = Vec::new();
    let mut sources: Vec<(Wire, F)> = Vec::new();
    let public: Vec<F> = (0..num_public.min(n)).map(|_| F::rand(rng)).collect();
    let value = |rng: &mut R| -> F {
        if rng.gen_bool(dense) {
            F::rand(rng)
        } else if rng.gen_bool(0.5) {
            F::one()
        } else {
            F::zero()
        }
    };
    for i in 0..n {
        if i < public.len() {
            s.set(i, [F::one(), F::zero(), F::zero(), F::zero(), F::zero()]);
            w[0][i] = public[i];
            sources.push((Wire::new(0, i), public[i]));
            continue;
        }
        for col in 0..2 {
            if !sources.is_empty() && rng.gen_bool(0.5) {
                let (src, v) = sources[rng.gen_range(0..sources.len())];
                copies.push((Wire::new(col, i), src));
                w[col][i] = v;
            } else {
                w[col][i] = value(rng);
            }
        }
        let (a, b, c) = (w[0][i], w[1][i], value(rng));
        w[2][i] = c;
        let q: [F; 4] = std::array::from_fn(|_| F::rand(rng));
        let q_c = q[3] * c - q[0] * a - q[1] * b - q[2] * a * b;
        s.set(i, [q[0], q[1], q[2], q[3], q_c]);
        sources.push((Wire::new(2, i), c));
    }
    let circuit = Circuit::new(num_vars, public.len(), s, &copies)?;
    Ok((circuit, public, Witness { columns: w }))
}

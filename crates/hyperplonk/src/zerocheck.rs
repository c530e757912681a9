//! The one ZeroCheck of the protocol (zkSpeed §3.3.2–3.3.3): the gate identity and the
//! prod-check identity batched with a challenge `α` into
//!
//! `h = [q_L w_1 + q_R w_2 + q_M w_1 w_2 − q_O w_3 + q_C − p] + α·(π − p_1·p_2)
//!      + α²·(φ·D_1 D_2 D_3 − N_1 N_2 N_3)`,
//!
//! which vanishes on the whole hypercube iff every gate holds and the PermCheck tables are
//! well formed. ZeroCheck proves it by a sumcheck of `eq(x, r)·h(x)` with claim `0`, for a
//! random `r ∈ F^μ` (zkSpeed's `f_zero` and `f_perm`, here in one sumcheck of degree 5:
//! `eq·φ·D_1·D_2·D_3`). The sumcheck ends at `ρ`; the verifier evaluates `eq(ρ, r)`, `p̃(ρ)`
//! and `id̃_j(ρ)` itself and takes the rest from the claimed evaluations.

use ark_ff::PrimeField;

use crate::circuit::gate_identity;

/// The sumcheck's degree.
pub const DEGREE: usize = 5;

/// Every MLE value `h` reads, at one point.
#[derive(Clone, Debug)]
pub struct Values<F> {
    pub q: [F; 5],
    pub w: [F; 3],
    pub public: F,
    pub n: [F; 3],
    pub d: [F; 3],
    pub phi: F,
    pub pi: F,
    pub p1: F,
    pub p2: F,
}

/// `h` at one point (module doc).
pub fn h<F: PrimeField>(v: &Values<F>, alpha: F) -> F {
    let gate = gate_identity(v.q, v.w, v.public);
    let prod = v.pi - v.p1 * v.p2;
    let frac = v.phi * v.d[0] * v.d[1] * v.d[2] - v.n[0] * v.n[1] * v.n[2];
    gate + alpha * (prod + alpha * frac)
}

/// The prover's table layout: `eq, q_L … q_C, w_1 … w_3, p, N_1 … N_3, D_1 … D_3, φ, π,
/// p_1, p_2`.
pub const NUM_TABLES: usize = 20;
const EQ: usize = 0;
const Q: usize = 1;
const W: usize = 6;
const PUBLIC: usize = 9;
const N: usize = 10;
const D: usize = 13;
const PHI: usize = 16;
const PI: usize = 17;
const P1: usize = 18;
const P2: usize = 19;

/// `eq·h` on a row of the prover's tables (layout above).
pub fn combine<F: PrimeField>(row: &[F], alpha: F) -> F {
    let v = Values {
        q: std::array::from_fn(|k| row[Q + k]),
        w: std::array::from_fn(|k| row[W + k]),
        public: row[PUBLIC],
        n: std::array::from_fn(|k| row[N + k]),
        d: std::array::from_fn(|k| row[D + k]),
        phi: row[PHI],
        pi: row[PI],
        p1: row[P1],
        p2: row[P2],
    };
    row[EQ] * h(&v, alpha)
}

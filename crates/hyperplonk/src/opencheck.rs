//! Batch evaluation and OpenCheck (zkSpeed §3.3.4–3.3.5): every claimed
//! evaluation of the protocol reduced to **one** PST opening.
//!
//! The claims are `f_{i_k}(z_{t_k}) = v_k`, `k = 0 … 17`: the thirteen MLEs at `ρ`
//! (`t = 0`), `φ` and `π` at `(ρ', 0)` and `(ρ', 1)` (`t = 1, 2`), and `π` at the root
//! `(1, …, 1, 0)` (`t = 3`) ([`claims`]). With a challenge `η`,
//!
//! `Σ_k η^k v_k = Σ_{x ∈ {0,1}^μ} Σ_t eq(x, z_t)·g_t(x)`, `g_t = Σ_{k: t_k = t} η^k f_{i_k}`,
//!
//! is proved by a sumcheck of degree 2 (zkSpeed's `f_open = Σ y_t k_t`) ending at `s`. The
//! prover sends every `f_i(s)`; the verifier checks the final claim against
//! `Σ_t eq(s, z_t)·g_t(s)`. Then, with a challenge `λ`, one PST opening of
//! `F = Σ_i λ^i f_i` at `s` against the commitment `Σ_i λ^i C_i` (PST is homomorphic) to the
//! value `Σ_i λ^i f_i(s)` checks all thirteen evaluations at once.

use ark_ff::PrimeField;

use crate::permcheck::{root_point, shifted_point};
use crate::proof::polys;

/// The sumcheck's degree.
pub const DEGREE: usize = 2;
/// The number of distinct points `z_t`.
pub const NUM_POINTS: usize = 4;

/// The claims `(i_k, t_k)` in order; their values are `evals_rho ‖ evals_shifted ‖ product`.
pub fn claims() -> Vec<(usize, usize)> {
    let mut c: Vec<(usize, usize)> = (0..polys::COUNT).map(|i| (i, 0)).collect();
    c.extend([
        (polys::PHI, 1),
        (polys::PHI, 2),
        (polys::PI, 1),
        (polys::PI, 2),
        (polys::PI, 3),
    ]);
    c
}

/// The points `z_0 … z_3`: `ρ`, `(ρ', 0)`, `(ρ', 1)`, `(1, …, 1, 0)`.
pub fn points<F: PrimeField>(rho: &[F]) -> [Vec<F>; NUM_POINTS] {
    [
        rho.to_vec(),
        shifted_point(rho, false),
        shifted_point(rho, true),
        root_point(rho.len()),
    ]
}

/// `η^0, η^1, …` (`n` of them).
pub fn powers<F: PrimeField>(x: F, n: usize) -> Vec<F> {
    std::iter::successors(Some(F::one()), |p| Some(*p * x))
        .take(n)
        .collect()
}

/// The weights `c_{t,i}` with `g_t = Σ_i c_{t,i} f_i` (`Σ` of `η^k` over the claims of `f_i`
/// at `z_t`).
pub fn weights<F: PrimeField>(eta: F) -> [[F; polys::COUNT]; NUM_POINTS] {
    let claims = claims();
    let eta_k = powers(eta, claims.len());
    let mut c = [[F::zero(); polys::COUNT]; NUM_POINTS];
    for ((i, t), e) in claims.into_iter().zip(eta_k) {
        c[t][i] += e;
    }
    c
}

/// `eq·g` summed over the points, on a row `eq_0 … eq_3, g_0 … g_3`.
pub fn combine<F: PrimeField>(row: &[F]) -> F {
    (0..NUM_POINTS).map(|t| row[t] * row[NUM_POINTS + t]).sum()
}

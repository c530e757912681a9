//! PermCheck's tables (zkSpeed §3.3.3, the wiring identity; zkSpeed's "Construct N&D",
//! FracMLE and ProdMLE units).
//!
//! With challenges `β, γ`: `N_j = w_j + β·id_j + γ` and `D_j = w_j + β·σ_j + γ`
//! (`j = 1, 2, 3`). The copy constraints hold (w.h.p. over `β, γ`) iff
//! `Π_{x ∈ {0,1}^μ} Π_j N_j(x) / D_j(x) = 1`.
//!
//! - The **fraction MLE** `φ = N_1 N_2 N_3 / (D_1 D_2 D_3)`, pointwise on the hypercube,
//!   with one batched inversion ([`fraction`]).
//! - The **product MLE** `π` ([`product_tree`]): with `V = φ ‖ π` (a `μ + 1`-variable table,
//!   `V(0, x) = φ(x)`, `V(1, x) = π(x)`), `π[i] = V[2i]·V[2i + 1]` for `i < 2^μ − 1` and
//!   `π[2^μ − 1] = 0`. The layers of the binary product tree over `φ` sit one after the other
//!   in `π`, and the root, the product of all of `φ`, is `π[2^μ − 2] = π(1, …, 1, 0)`.
//! - The **shifted MLEs** `p_1(x) = V(x, 0)`, `p_2(x) = V(x, 1)` ([`shifted`]); as MLEs in
//!   `x`, `p_c(x) = (1 − x_0)·φ(x_1, …, x_{μ−1}, c) + x_0·π(x_1, …, x_{μ−1}, c)`, so the
//!   verifier gets `p_c(ρ)` from the evaluations of `φ` and `π` at `(ρ_1, …, ρ_{μ−1}, c)`.
//!
//! The prod-check identity (checked by ZeroCheck, [`crate::zerocheck`]) is that for every
//! `x ∈ {0,1}^μ`: `π(x) − p_1(x)·p_2(x) = 0` and `φ(x)·Π_j D_j(x) − Π_j N_j(x) = 0`; with
//! the root `π(1, …, 1, 0) = 1` (an opened evaluation) it implies `Π φ = 1`. (At
//! `i = 2^μ − 1` the identity reads `π[2^μ − 1] = π[2^μ − 2]·π[2^μ − 1]`, true for `0`.)

use ark_ff::PrimeField;

use crate::kernels;
use crate::Error;

/// `N_j` and `D_j` for the three columns.
pub fn numerators_denominators<F: PrimeField>(
    w: &[Vec<F>; 3],
    id: &[Vec<F>; 3],
    sigma: &[Vec<F>; 3],
    beta: F,
    gamma: F,
) -> ([Vec<F>; 3], [Vec<F>; 3]) {
    let lin = |w: &Vec<F>, s: &Vec<F>| -> Vec<F> {
        w.iter()
            .zip(s)
            .map(|(w, s)| *w + beta * s + gamma)
            .collect()
    };
    (
        std::array::from_fn(|j| lin(&w[j], &id[j])),
        std::array::from_fn(|j| lin(&w[j], &sigma[j])),
    )
}

/// `φ = Π_j N_j / Π_j D_j` on the hypercube; a zero denominator is an error naming the wire
/// position.
pub fn fraction<F: PrimeField>(n: &[Vec<F>; 3], d: &[Vec<F>; 3]) -> Result<Vec<F>, Error> {
    let len = n[0].len();
    for (j, dj) in d.iter().enumerate() {
        if let Some(i) = dj.iter().position(|v| v.is_zero()) {
            return Err(Error::ZeroDenominator {
                position: j * len + i,
            });
        }
    }
    let mut den: Vec<F> = (0..len).map(|i| d[0][i] * d[1][i] * d[2][i]).collect();
    kernels::batch_invert(&mut den).map_err(|i| Error::ZeroDenominator { position: i })?;
    Ok((0..len)
        .map(|i| n[0][i] * n[1][i] * n[2][i] * den[i])
        .collect())
}

/// The product MLE `π` of `φ` (module doc).
pub fn product_tree<F: PrimeField>(phi: &[F]) -> Vec<F> {
    let n = phi.len();
    let mut pi = vec![F::zero(); n];
    for i in 0..n - 1 {
        let at = |k: usize, pi: &[F]| if k < n { phi[k] } else { pi[k - n] };
        pi[i] = at(2 * i, &pi) * at(2 * i + 1, &pi);
    }
    pi
}

/// `(p_1, p_2)`: `p_c[i] = V[2i + c]` with `V = φ ‖ π`.
pub fn shifted<F: PrimeField>(phi: &[F], pi: &[F]) -> (Vec<F>, Vec<F>) {
    let n = phi.len();
    let at = |k: usize| if k < n { phi[k] } else { pi[k - n] };
    (
        (0..n).map(|i| at(2 * i)).collect(),
        (0..n).map(|i| at(2 * i + 1)).collect(),
    )
}

/// The points `(ρ_1, …, ρ_{μ−1}, c)` at which `φ` and `π` are opened to give `p_c(ρ)`.
pub fn shifted_point<F: PrimeField>(rho: &[F], c: bool) -> Vec<F> {
    let mut z = rho[1..].to_vec();
    z.push(if c { F::one() } else { F::zero() });
    z
}

/// The root's point `(1, …, 1, 0)` (index `2^μ − 2`).
pub fn root_point<F: PrimeField>(mu: usize) -> Vec<F> {
    let mut z = vec![F::one(); mu];
    z[mu - 1] = F::zero();
    z
}

/// `p_c(ρ) = (1 − ρ_0)·φ(ρ', c) + ρ_0·π(ρ', c)`.
pub fn shifted_eval<F: PrimeField>(rho0: F, phi_c: F, pi_c: F) -> F {
    (F::one() - rho0) * phi_c + rho0 * pi_c
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_bls12_381::Fr;
    use ark_ff::UniformRand;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;
    use testudo::MultilinearPoly;

    #[test]
    fn the_tree_root_is_the_product_and_the_identities_hold() {
        let mut rng = ChaCha20Rng::seed_from_u64(5);
        let mu = 4;
        let phi: Vec<Fr> = (0..1 << mu).map(|_| Fr::rand(&mut rng)).collect();
        let pi = product_tree(&phi);
        assert_eq!(pi[(1 << mu) - 2], phi.iter().product::<Fr>());
        let (p1, p2) = shifted(&phi, &pi);
        for i in 0..1 << mu {
            assert_eq!(pi[i], p1[i] * p2[i]);
        }
        // The shifted MLEs are what the verifier computes from φ and π's evaluations.
        let rho: Vec<Fr> = (0..mu).map(|_| Fr::rand(&mut rng)).collect();
        let f = |t: &Vec<Fr>, z: &[Fr]| {
            MultilinearPoly::new(mu, t.clone())
                .unwrap()
                .evaluate(z)
                .unwrap()
        };
        for (c, p) in [(false, &p1), (true, &p2)] {
            let z = shifted_point(&rho, c);
            assert_eq!(f(p, &rho), shifted_eval(rho[0], f(&phi, &z), f(&pi, &z)));
        }
        assert_eq!(f(&pi, &root_point(mu)), pi[(1 << mu) - 2]);
    }
}

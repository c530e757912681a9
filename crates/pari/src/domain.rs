//! The evaluation domain `K`: a multiplicative subgroup of `F*` of order `n`, with
//! `v_K = X^n − 1` and the Lagrange basis `L_i(X) = (ω^i/n)·(X^n − 1)/(X − ω^i)`.
//!
//! Pari needs only what holds for **any** multiplicative subgroup: the vanishing polynomial,
//! the Lagrange basis at a point, and FFTs over `K` and a coset `gK`. Most pairing curves'
//! scalar fields have a large power of two in `|F*|` and use arkworks' radix-2 domain
//! ([`Domain::Radix2`]). Some do not: BW6-767's scalar field is BLS12-381's base field, whose
//! `q − 1 = 2 · 3² · 11 · 23 · 47 · 10177 · …` has two-adicity 1. For those, [`Domain::Smooth`]
//! takes a subgroup whose order is a product of small primes dividing `q − 1` (each at most
//! [`MAX_RADIX`]) and runs a mixed-radix Cooley–Tukey FFT, `O(n·Σp)` for `n = Πp`.
//!
//! The domain for `m` rows is the smallest supported order `n ≥ m` ([`Domain::new`]), so a
//! key's `n` determines its domain: [`Domain::new`]`(n).size() == n` holds exactly for the
//! orders a key may carry.

use ark_ff::{batch_inversion, FftField, Field, PrimeField};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};

/// The largest prime used as an FFT radix (an FFT stage of radix `p` costs `p` products per
/// element).
pub const MAX_RADIX: u64 = 64;

/// A multiplicative subgroup of smooth order, with its mixed-radix FFT.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SmoothDomain<F: Field> {
    size: usize,
    /// The prime factors of `size`, with multiplicity, in the order the FFT splits by.
    radices: Vec<usize>,
    gen: F,
    gen_inv: F,
    size_inv: F,
}

/// The domain of a key: radix-2 where the field allows it, smooth otherwise.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Domain<F: FftField> {
    Radix2(Radix2EvaluationDomain<F>),
    Smooth(SmoothDomain<F>),
}

/// `q − 1`, the order of `F*`, as little-endian limbs.
pub fn order_of_group<F: PrimeField>() -> Vec<u64> {
    let mut m: Vec<u64> = F::MODULUS.as_ref().to_vec();
    // q is odd, so subtracting 1 only clears the lowest bit.
    m[0] -= 1;
    m
}

/// `(quotient, remainder)` of little-endian limbs by a small nonzero divisor.
pub fn div_small(limbs: &[u64], d: u64) -> (Vec<u64>, u64) {
    let mut out = vec![0u64; limbs.len()];
    let mut rem: u128 = 0;
    for j in (0..limbs.len()).rev() {
        let cur = (rem << 64) | limbs[j] as u128;
        out[j] = (cur / d as u128) as u64;
        rem = cur % d as u128;
    }
    (out, rem as u64)
}

/// The primes `p ≤ MAX_RADIX` dividing `q − 1`, each with its multiplicity.
fn small_factors<F: PrimeField>() -> Vec<(usize, u32)> {
    let mut m = order_of_group::<F>();
    let mut out = Vec::new();
    for p in 2..=MAX_RADIX {
        if (2..p).any(|d| p % d == 0) {
            continue;
        }
        let mut e = 0;
        loop {
            let (q, r) = div_small(&m, p);
            if r != 0 {
                break;
            }
            m = q;
            e += 1;
        }
        if e > 0 {
            out.push((p as usize, e));
        }
    }
    out
}

impl<F: PrimeField> SmoothDomain<F> {
    /// The subgroup of the smallest smooth order `n ≥ min_size` dividing `q − 1`, if any.
    pub fn new(min_size: usize) -> Option<Self> {
        let factors = small_factors::<F>();
        // Every product of the available prime powers; keep the smallest ≥ min_size.
        let mut best: Option<(usize, Vec<usize>)> = None;
        fn search(
            factors: &[(usize, u32)],
            acc: usize,
            radices: &mut Vec<usize>,
            min: usize,
            best: &mut Option<(usize, Vec<usize>)>,
        ) {
            if acc >= min {
                if best.as_ref().is_none_or(|(b, _)| acc < *b) {
                    *best = Some((acc, radices.clone()));
                }
                return;
            }
            let Some(((p, e), rest)) = factors.split_first() else {
                return;
            };
            let mut a = acc;
            let depth = radices.len();
            for used in 0..=*e {
                if used > 0 {
                    let Some(next) = a.checked_mul(*p) else { break };
                    a = next;
                    radices.push(*p);
                }
                search(rest, a, radices, min, best);
            }
            radices.truncate(depth);
        }
        search(&factors, 1, &mut Vec::new(), min_size.max(1), &mut best);
        let (size, mut radices) = best?;
        // Split by the largest radix first: the deepest (most numerous) stages are the cheap ones.
        radices.sort_unstable_by(|a, b| b.cmp(a));
        let cofactor = {
            let mut m = order_of_group::<F>();
            for &p in &radices {
                m = div_small(&m, p as u64).0;
            }
            m
        };
        // ω = g^((q−1)/n) for a g whose power has exact order n.
        let gen = (2u64..1000).map(F::from).chain([F::GENERATOR]).find_map(|g| {
            let w = g.pow(&cofactor);
            let exact = radices
                .iter()
                .all(|&p| w.pow([(size / p) as u64]) != F::ONE);
            exact.then_some(w)
        })?;
        Some(SmoothDomain {
            size,
            radices,
            gen,
            gen_inv: gen.inverse()?,
            size_inv: F::from(size as u64).inverse()?,
        })
    }

    /// Evaluations at `ω^k` (k < n) of the polynomial with coefficients `coeffs` (at most n;
    /// padded with zeros) for the generator `w`.
    fn transform(&self, coeffs: &[F], w: F) -> Vec<F> {
        let mut a = coeffs.to_vec();
        a.resize(self.size, F::ZERO);
        fft_rec(&a, w, &self.radices)
    }
}

/// Decimation in time: `n = p·m`; the coefficients `j ≡ r (mod p)` form `p` polynomials of
/// size `m`, transformed with `ω^p`; `X_k = Σ_r ω^{rk}·Y_r[k mod m]`.
fn fft_rec<F: Field>(a: &[F], w: F, radices: &[usize]) -> Vec<F> {
    let n = a.len();
    let Some((&p, rest)) = radices.split_first() else {
        return a.to_vec();
    };
    let m = n / p;
    let wp = w.pow([p as u64]);
    let subs: Vec<Vec<F>> = (0..p)
        .map(|r| {
            let part: Vec<F> = a.iter().skip(r).step_by(p).copied().collect();
            fft_rec(&part, wp, rest)
        })
        .collect();
    let mut out = vec![F::ZERO; n];
    let mut wk = F::ONE; // ω^k
    for (k, o) in out.iter_mut().enumerate() {
        // Horner in ω^k over r = p−1 … 0.
        let km = k % m;
        let mut acc = F::ZERO;
        for sub in subs.iter().rev() {
            acc = acc * wk + sub[km];
        }
        *o = acc;
        wk *= w;
    }
    out
}

impl<F: PrimeField> Domain<F> {
    /// The smallest supported domain of at least `min_size` elements.
    pub fn new(min_size: usize) -> Option<Self> {
        if let Some(d) = Radix2EvaluationDomain::<F>::new(min_size) {
            return Some(Domain::Radix2(d));
        }
        SmoothDomain::new(min_size).map(Domain::Smooth)
    }

    pub fn size(&self) -> usize {
        match self {
            Domain::Radix2(d) => d.size(),
            Domain::Smooth(d) => d.size,
        }
    }

    pub fn size_inv(&self) -> F {
        match self {
            Domain::Radix2(d) => d.size_inv(),
            Domain::Smooth(d) => d.size_inv,
        }
    }

    /// `ω`, the generator of `K`.
    pub fn group_gen(&self) -> F {
        match self {
            Domain::Radix2(d) => d.group_gen(),
            Domain::Smooth(d) => d.gen,
        }
    }

    /// `ω^i`.
    pub fn element(&self, i: usize) -> F {
        self.group_gen().pow([i as u64])
    }

    /// `v_K(τ) = τ^n − 1`.
    pub fn evaluate_vanishing_polynomial(&self, tau: F) -> F {
        tau.pow([self.size() as u64]) - F::ONE
    }

    /// `L_i(τ)` for every `i < n`.
    pub fn evaluate_all_lagrange_coefficients(&self, tau: F) -> Vec<F> {
        if let Domain::Radix2(d) = self {
            return d.evaluate_all_lagrange_coefficients(tau);
        }
        let n = self.size();
        let w = self.group_gen();
        let v = self.evaluate_vanishing_polynomial(tau);
        if v.is_zero() {
            // τ = ω^j: L_i(τ) = [i = j].
            let mut out = vec![F::ZERO; n];
            let mut wi = F::ONE;
            for o in out.iter_mut() {
                if wi == tau {
                    *o = F::ONE;
                }
                wi *= w;
            }
            return out;
        }
        let mut denoms = Vec::with_capacity(n);
        let mut wi = F::ONE;
        for _ in 0..n {
            denoms.push(tau - wi);
            wi *= w;
        }
        batch_inversion(&mut denoms);
        let c = v * self.size_inv();
        let mut wi = F::ONE;
        for d in denoms.iter_mut() {
            *d *= c * wi;
            wi *= w;
        }
        denoms
    }

    /// Coefficients (in place, length n) of the polynomial with these evaluations on `K`.
    pub fn ifft_in_place(&self, evals: &mut Vec<F>) {
        match self {
            Domain::Radix2(d) => d.ifft_in_place(evals),
            Domain::Smooth(d) => {
                let mut c = d.transform(evals, d.gen_inv);
                c.iter_mut().for_each(|x| *x *= d.size_inv);
                *evals = c;
            }
        }
    }

    /// Evaluations on the coset `g·K` of the polynomial with these coefficients.
    pub fn coset_fft(&self, g: F, coeffs: &[F]) -> Vec<F> {
        match self {
            Domain::Radix2(d) => d.get_coset(g).expect("a nonzero offset").fft(coeffs),
            Domain::Smooth(d) => {
                let mut gi = F::ONE;
                let scaled: Vec<F> = coeffs
                    .iter()
                    .map(|c| {
                        let v = *c * gi;
                        gi *= g;
                        v
                    })
                    .collect();
                d.transform(&scaled, d.gen)
            }
        }
    }

    /// Coefficients of the polynomial with these evaluations on the coset `g·K`.
    pub fn coset_ifft(&self, g: F, evals: &[F]) -> Vec<F> {
        match self {
            Domain::Radix2(d) => d.get_coset(g).expect("a nonzero offset").ifft(evals),
            Domain::Smooth(_) => {
                let mut c = evals.to_vec();
                self.ifft_in_place(&mut c);
                let g_inv = g.inverse().expect("a nonzero offset");
                let mut gi = F::ONE;
                for x in c.iter_mut() {
                    *x *= gi;
                    gi *= g_inv;
                }
                c
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::{AdditiveGroup, UniformRand, Zero};
    use rand::SeedableRng;

    type Fq = ark_bls12_381::Fq;

    #[test]
    fn smooth_domains_of_bls12_381_base_field() {
        assert!(Radix2EvaluationDomain::<Fq>::new(4).is_none(), "two-adicity 1");
        let sizes: Vec<usize> = [1usize, 5, 20, 100, 1000, 75_000]
            .iter()
            .map(|&m| Domain::<Fq>::new(m).unwrap().size())
            .collect();
        for (m, n) in [1usize, 5, 20, 100, 1000, 75_000].iter().zip(&sizes) {
            assert!(n >= m);
            assert_eq!(Domain::<Fq>::new(*n).unwrap().size(), *n, "a key's n names its domain");
        }
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(3);
        for m in [6usize, 99, 1000] {
            let d = Domain::<Fq>::new(m).unwrap();
            let n = d.size();
            assert_eq!(d.group_gen().pow([n as u64]), Fq::ONE);
            let coeffs: Vec<Fq> = (0..n).map(|_| Fq::rand(&mut rng)).collect();
            let eval = |x: Fq| coeffs.iter().rev().fold(Fq::ZERO, |acc, c| acc * x + c);
            // FFT on a coset against direct evaluation, and both inverses.
            let g = Fq::GENERATOR;
            let evals = d.coset_fft(g, &coeffs);
            for i in [0, 1, n / 2, n - 1] {
                assert_eq!(evals[i], eval(g * d.element(i)));
            }
            assert_eq!(d.coset_ifft(g, &evals), coeffs);
            let mut on_k: Vec<Fq> = (0..n).map(|i| eval(d.element(i))).collect();
            d.ifft_in_place(&mut on_k);
            assert_eq!(on_k, coeffs);
            // Lagrange coefficients at a point interpolate.
            let tau = Fq::rand(&mut rng);
            let l = d.evaluate_all_lagrange_coefficients(tau);
            let via: Fq = (0..n).map(|i| l[i] * eval(d.element(i))).sum();
            assert_eq!(via, eval(tau));
            let l_on = d.evaluate_all_lagrange_coefficients(d.element(2));
            assert_eq!(l_on.iter().filter(|x| !x.is_zero()).count(), 1);
            assert_eq!(l_on[2], Fq::ONE);
        }
    }
}

//! The evaluation domain `K`: a multiplicative subgroup of `F*` of order `n`, with
//! `v_K = X^n − 1` and the Lagrange basis `L_i(X) = (ω^i/n)·(X^n − 1)/(X − ω^i)`.
//!
//! Pari needs only what holds for **any** multiplicative subgroup: the vanishing polynomial,
//! the Lagrange basis at a point, and FFTs over `K` and a coset `gK`. Most pairing curves'
//! scalar fields have a large power of two in `|F*|` and use arkworks' radix-2 domain
//! ([`Domain::Radix2`]). Some do not: BW6-767's scalar field is BLS12-381's base field, whose
//! `q − 1 = 2 · 3² · 11 · 23 · 47 · 10177 · …` has two-adicity 1. For those, [`Domain::Smooth`]
//! takes a subgroup whose order is a product of primes dividing `q − 1` and runs a
//! mixed-radix Cooley–Tukey FFT ([`SmoothDomain`]):
//!
//! * a prime `p ≤` [`MAX_RADIX`] is a direct radix: one stage costs about `p/2` products per
//!   element (each column's DFT pairs the terms `r` and `p − r`, `(p − 1)²/2` products, summed
//!   five at a time with one reduction; see `butterfly::Direct`);
//! * a larger prime `p ≤` [`MAX_RADER_PRIME`] (for BLS12-381's `F_q`, only 10177) is a Rader
//!   radix: a DFT of prime length `p` is, after permuting inputs and outputs by powers of a
//!   generator `g` of `(Z/p)*`, a cyclic convolution of length `p − 1` (Rader 1968). `F_q`
//!   has no subgroup of order `p − 1 = 10176 = 2⁶·3·53`, so the convolution is computed as a
//!   cyclic one of a length `L ≥ 2(p − 1) − 1` that the small primes do provide (for 10177,
//!   `L = 2·11·23·47 = 23,782`), with the kernel's transform computed once per domain. A
//!   Rader stage costs about `2L·(Σ radices of L)/(2p) ≈ 200` products per element: a Rader
//!   domain's transform costs about 2.3× a direct domain's per point (`examples/domain_bench.rs`).
//!
//! The domain for `m` rows ([`Domain::new`]) is the smallest order `n ≥ m` made of direct
//! radices (up to `2·3²·11·23·47 = 214,038` on BLS12-381's `F_q`), unless the smallest order
//! with a Rader radix is smaller by more than [`RADER_PREMIUM`] (the prover's extra cost per
//! point there); above 214,038 only the latter exist (up to `214,038·10177 ≈ 2.18·10⁹`, e.g.
//! 335,841, 671,682, 2,574,781, 4,213,278). The direct orders leave gaps (71,346, 107,019,
//! 214,038) that Rader orders fill (91,593, 111,947, 183,186), but a Rader order's transforms
//! cost about five times as much per point, so only the widest gap is worth it: 107,020 to
//! 111,947 rows take 111,947 points where the smallest direct order is 214,038. Until issue 60
//! the direct order was always taken when there was one
//! ([`SmoothDomain::new_direct_first`]); keys made then keep their domain. Either way a key's `n` determines its domain: [`Domain::new`]`(n).size() == n`
//! holds exactly for the orders a key may carry.
//!
//! Why this file stays whole at ~700 lines: the domain choice by measured cost, the smooth
//! domain's radix plan and twiddle tables, and the FFT driver over them are one concept (a
//! smooth subgroup and its transform) and share private tables; the butterflies, which are
//! separable, live in `domain/butterfly.rs`.

use std::sync::{Arc, OnceLock};

use ark_ff::{batch_inversion, FftField, Field, PrimeField};
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
#[cfg(feature = "parallel")]
use rayon::prelude::*;

mod butterfly;
use butterfly::Butterfly;

/// The largest prime used as a direct FFT radix (an FFT stage of radix `p` costs about `p/2`
/// products per element).
pub const MAX_RADIX: u64 = 64;

/// The largest prime used as a Rader radix (see the module doc).
pub const MAX_RADER_PRIME: u64 = 1 << 14;

/// How much more a proof costs per point of its domain on an order with a Rader radix than on
/// one of direct radices only: [`SmoothDomain::new`] takes the smallest order with a Rader radix
/// when it is this much smaller than the smallest direct one. A BW6-767 proof spends, per point
/// of `n`, four transforms and about four G1 points of MSM (`3n` for `U`, `n` of the `m + n` of
/// `T`). Measured with `examples/prove_profile.rs` (2 threads): a transform costs about 1.6 µs
/// a point on a direct order and 8 µs on a Rader one (the Rader stage's two convolution
/// transforms of 23,782 points per 10,177), the MSMs about 30 µs a point; so a Rader order
/// costs about `(4·30 + 4·8)/(4·30 + 4·1.6) ≈ 1.2` times as much per point.
pub const RADER_PREMIUM: f64 = 1.2;

/// Transforms at least this long run their stages in parallel.
const PARALLEL_MIN: usize = 1 << 12;

/// A multiplicative subgroup of smooth order, with its mixed-radix FFT.
#[derive(Clone, Debug)]
pub struct SmoothDomain<F: Field> {
    size: usize,
    /// The prime factors of `size`, with multiplicity, in the order the FFT splits by
    /// (largest first).
    radices: Vec<usize>,
    gen: F,
    gen_inv: F,
    size_inv: F,
    /// The stages' butterflies for `ω` and for `ω⁻¹`, made on the first transform (a verifier
    /// that only evaluates Lagrange polynomials never pays for the Rader kernels).
    plans: Arc<[OnceLock<Arc<Vec<Butterfly<F>>>>; 2]>,
    /// Run the butterflies as before issue 60 ([`Domain::baseline`]); same results.
    baseline: bool,
}

impl<F: Field> PartialEq for SmoothDomain<F> {
    fn eq(&self, other: &Self) -> bool {
        self.size == other.size && self.radices == other.radices && self.gen == other.gen
    }
}

impl<F: Field> Eq for SmoothDomain<F> {}

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

fn is_prime(p: u64) -> bool {
    p >= 2 && (2..).take_while(|d| d * d <= p).all(|d| p % d != 0)
}

/// The primes `p ≤ bound` dividing `q − 1`, each with its multiplicity.
fn prime_factors<F: PrimeField>(bound: u64) -> Vec<(usize, u32)> {
    let mut m = order_of_group::<F>();
    let mut out = Vec::new();
    for p in (2..=bound).filter(|&p| is_prime(p)) {
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

/// The smallest product `≥ min` of the prime powers in `factors`, with its primes.
fn smallest_order(factors: &[(usize, u32)], min: usize) -> Option<(usize, Vec<usize>)> {
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
    let mut best = None;
    search(factors, 1, &mut Vec::new(), min.max(1), &mut best);
    best
}

impl<F: PrimeField> SmoothDomain<F> {
    /// The subgroup of the smallest order `n ≥ min_size` dividing `q − 1` made of direct
    /// radices, or failing that of direct and Rader radices; `None` if there is none.
    pub fn new(min_size: usize) -> Option<Self> {
        let direct = prime_factors::<F>(MAX_RADIX);
        let rader = Self::rader_factors(&direct);
        let by_direct = smallest_order(&direct, min_size).map(|(size, _)| size);
        let by_rader = smallest_order(&rader, min_size).map(|(size, _)| size);
        match (by_direct, by_rader) {
            (Some(d), Some(r)) if (r as f64) * RADER_PREMIUM < d as f64 => Self::with_factors(r, &rader),
            (Some(d), _) => Self::with_factors(d, &direct),
            (None, Some(r)) => Self::with_factors(r, &rader),
            (None, None) => None,
        }
    }

    /// The rule before issue 60: the smallest order `≥ min_size` made of direct radices, else
    /// the smallest with Rader radices. Kept for the benchmark's "before" keys; every order it
    /// gives is one [`SmoothDomain::new`] keeps (tested), so keys made by it stay valid.
    pub fn new_direct_first(min_size: usize) -> Option<Self> {
        let direct = prime_factors::<F>(MAX_RADIX);
        if let Some((size, _)) = smallest_order(&direct, min_size) {
            return Self::with_factors(size, &direct);
        }
        let rader = Self::rader_factors(&direct);
        let (size, _) = smallest_order(&rader, min_size)?;
        Self::with_factors(size, &rader)
    }

    /// The prime factors of `q − 1` usable as radices: the direct ones and the Rader primes
    /// whose convolution fits a direct order.
    fn rader_factors(direct: &[(usize, u32)]) -> Vec<(usize, u32)> {
        prime_factors::<F>(MAX_RADER_PRIME)
            .into_iter()
            .filter(|&(p, _)| p as u64 <= MAX_RADIX || smallest_order(direct, 2 * p - 3).is_some())
            .collect()
    }

    /// The subgroup of order exactly `size`, whose prime factors must all be in `factors`.
    fn with_factors(size: usize, factors: &[(usize, u32)]) -> Option<Self> {
        let mut rest = size;
        let mut radices = Vec::new();
        for &(p, e) in factors {
            for _ in 0..e {
                if rest % p == 0 {
                    rest /= p;
                    radices.push(p);
                }
            }
        }
        if rest != 1 {
            return None;
        }
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
            let exact = radices.iter().all(|&p| w.pow([(size / p) as u64]) != F::ONE);
            exact.then_some(w)
        })?;
        Some(SmoothDomain {
            size,
            radices,
            gen,
            gen_inv: gen.inverse()?,
            size_inv: F::from(size as u64).inverse()?,
            plans: Arc::new([OnceLock::new(), OnceLock::new()]),
            baseline: false,
        })
    }

    /// The radices (prime factors of `n`, largest first).
    pub fn radices(&self) -> &[usize] {
        &self.radices
    }

    /// The stages for `ω` (`inverse` false) or `ω⁻¹`: stage `i` has radix `p_i` and
    /// `ζ_i = w^{n/p_i}`.
    fn plan(&self, inverse: bool) -> Arc<Vec<Butterfly<F>>> {
        self.plans[inverse as usize]
            .get_or_init(|| {
                let w = if inverse { self.gen_inv } else { self.gen };
                Arc::new(
                    self.radices
                        .iter()
                        .map(|&p| {
                            Butterfly::new(p, w.pow([(self.size / p) as u64]))
                                .expect("a domain is only made of radices with a plan")
                        })
                        .collect(),
                )
            })
            .clone()
    }

    /// Evaluations at `w^k` (k < n) of the polynomial with coefficients `coeffs` (at most n;
    /// padded with zeros), `w = ω` or `ω⁻¹`.
    fn transform(&self, coeffs: &[F], inverse: bool) -> Vec<F> {
        self.transform_with(coeffs, inverse, self.baseline)
    }

    fn transform_with(&self, coeffs: &[F], inverse: bool, baseline: bool) -> Vec<F> {
        let mut a = coeffs.to_vec();
        a.resize(self.size, F::ZERO);
        let w = if inverse { self.gen_inv } else { self.gen };
        let plan = self.plan(inverse);
        let mut out = vec![F::ZERO; self.size];
        fft_strided(&a, 0, 1, w, &plan, &self.radices, &mut out, baseline);
        out
    }
}

/// Decimation in time on the subsequence `input[offset + stride·i]`, `i < n = out.len()`, for
/// the generator `w` of order `n`: with `n = p·m`, the `p` subsequences `i ≡ r (mod p)` are
/// transformed with `w^p` into `out[r·m..(r+1)·m]` (`Y_r`), then for every column `j < m`,
/// `X_{j+ms} = Σ_r (w^{rj}·Y_r[j])·ζ^{rs}` (`ζ = w^m`) is one DFT of length `p`.
#[allow(clippy::too_many_arguments)]
fn fft_strided<F: PrimeField>(
    input: &[F],
    offset: usize,
    stride: usize,
    w: F,
    stages: &[Butterfly<F>],
    radices: &[usize],
    out: &mut [F],
    baseline: bool,
) {
    let n = out.len();
    let (Some((&p, rest)), Some((bf, rest_stages))) = (radices.split_first(), stages.split_first())
    else {
        out[0] = input[offset];
        return;
    };
    let m = n / p;
    if m == 1 {
        for (r, o) in out.iter_mut().enumerate() {
            *o = input[offset + stride * r];
        }
        bf.apply(out, baseline);
        return;
    }
    let wp = w.pow([p as u64]);
    let sub = |(r, chunk): (usize, &mut [F])| {
        fft_strided(input, offset + stride * r, stride * p, wp, rest_stages, rest, chunk, baseline)
    };
    let parallel = n >= PARALLEL_MIN;
    if parallel {
        ark_std::cfg_chunks_mut!(out, m).enumerate().for_each(sub);
    } else {
        out.chunks_mut(m).enumerate().for_each(sub);
    }
    // Columns: tmp[j·p + r] = w^{rj}·Y_r[j], transformed in place, then written back as
    // out[s·m + j] = tmp[j·p + s].
    let mut tmp = vec![F::ZERO; n];
    const COLS: usize = 256;
    let y: &[F] = out;
    let columns = |(c, block): (usize, &mut [F])| {
        let j0 = c * COLS;
        let mut wj = w.pow([j0 as u64]);
        for (dj, col) in block.chunks_mut(p).enumerate() {
            let j = j0 + dj;
            col[0] = y[j];
            let mut tw = wj;
            for r in 1..p {
                col[r] = y[r * m + j] * tw;
                tw *= wj;
            }
            bf.apply(col, baseline);
            wj *= w;
        }
    };
    if parallel {
        ark_std::cfg_chunks_mut!(tmp, COLS * p).enumerate().for_each(columns);
    } else {
        tmp.chunks_mut(COLS * p).enumerate().for_each(columns);
    }
    let rows = |(s, row): (usize, &mut [F])| {
        for (j, o) in row.iter_mut().enumerate() {
            *o = tmp[j * p + s];
        }
    };
    if parallel {
        ark_std::cfg_chunks_mut!(out, m).enumerate().for_each(rows);
    } else {
        out.chunks_mut(m).enumerate().for_each(rows);
    }
}

impl<F: PrimeField> Domain<F> {
    /// The smallest supported domain of at least `min_size` elements.
    pub fn new(min_size: usize) -> Option<Self> {
        if let Some(d) = Radix2EvaluationDomain::<F>::new(min_size) {
            return Some(Domain::Radix2(d));
        }
        SmoothDomain::new(min_size).map(Domain::Smooth)
    }

    /// The domain of order exactly `n`, if the field has one (radix-2, or smooth with direct and
    /// Rader radices), whichever [`Domain::new`] would pick for `n` rows: for benchmarks that
    /// compare orders.
    pub fn of_order(n: usize) -> Option<Self> {
        if let Some(d) = Radix2EvaluationDomain::<F>::new(n) {
            return (d.size() == n).then_some(Domain::Radix2(d));
        }
        let direct = prime_factors::<F>(MAX_RADIX);
        SmoothDomain::with_factors(n, &SmoothDomain::<F>::rader_factors(&direct)).map(Domain::Smooth)
    }

    /// [`Domain::new`] by the rule before issue 60 ([`SmoothDomain::new_direct_first`]).
    pub fn new_direct_first(min_size: usize) -> Option<Self> {
        if let Some(d) = Radix2EvaluationDomain::<F>::new(min_size) {
            return Some(Domain::Radix2(d));
        }
        SmoothDomain::new_direct_first(min_size).map(Domain::Smooth)
    }

    /// This domain with its transforms as they were before issue 60 (the plain DFT sum in each
    /// stage), for [`crate::prover::baseline`]; same results.
    pub fn baseline(self) -> Self {
        match self {
            Domain::Smooth(d) => Domain::Smooth(SmoothDomain { baseline: true, ..d }),
            radix2 => radix2,
        }
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
                let mut c = d.transform(evals, true);
                c.iter_mut().for_each(|x| *x *= d.size_inv);
                *evals = c;
            }
        }
    }

    /// Adds to `coeffs` (length n) the coefficients of the polynomial whose evaluations on `K` are
    /// `evals` (`(i, e)`: the value `e` at `ω^i`) and zero elsewhere. With
    /// `L_i(X) = (1/n)·Σ_k ω^{−ik}·X^k`, that is `n` products per listed evaluation, which beats
    /// a transform for a few of them (a circuit's instance rows); a full inverse transform for
    /// more than [`Domain::SPARSE_IFFT_MAX`].
    pub fn add_sparse_ifft(&self, coeffs: &mut [F], evals: &[(usize, F)]) {
        let n = self.size();
        assert_eq!(coeffs.len(), n, "one coefficient per point of K");
        if evals.len() > Self::SPARSE_IFFT_MAX {
            let mut dense = vec![F::ZERO; n];
            for &(i, e) in evals {
                dense[i] += e;
            }
            self.ifft_in_place(&mut dense);
            ark_std::cfg_iter_mut!(coeffs).zip(dense).for_each(|(c, d)| *c += d);
            return;
        }
        let w_inv = self.group_gen().inverse().expect("ω ≠ 0");
        let size_inv = self.size_inv();
        const CHUNK: usize = 1 << 12;
        ark_std::cfg_chunks_mut!(coeffs, CHUNK).enumerate().for_each(|(c, chunk)| {
            let k0 = (c * CHUNK) as u64;
            for &(i, e) in evals {
                // ω^{−ik} from k = k0 on.
                let step = w_inv.pow([i as u64]);
                let mut acc = e * size_inv * step.pow([k0]);
                for x in chunk.iter_mut() {
                    *x += acc;
                    acc *= step;
                }
            }
        });
    }

    /// Above this many evaluations [`Domain::add_sparse_ifft`] runs an inverse transform.
    pub const SPARSE_IFFT_MAX: usize = 16;

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
                d.transform(&scaled, false)
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
            assert_eq!(d.clone().baseline().coset_fft(g, &coeffs), evals, "baseline butterflies");
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

    /// The orders chosen for m rows: a Rader order where the direct one is more than
    /// [`RADER_PREMIUM`] larger; every order either rule gives (before and since issue 60) names
    /// its own domain, so keys of both stay valid.
    #[test]
    fn domain_choice_takes_rader_orders_in_the_direct_gaps() {
        let size = |m: usize| Domain::<Fq>::new(m).unwrap().size();
        let before = |m: usize| Domain::<Fq>::new_direct_first(m).unwrap().size();
        assert_eq!((size(1 << 16), before(1 << 16)), (71_346, 71_346));
        assert_eq!((size(80_000), before(80_000)), (107_019, 107_019));
        assert_eq!((size(108_000), before(108_000)), (111_947, 214_038));
        assert_eq!((size(111_948), before(111_948)), (214_038, 214_038));
        assert_eq!((size(1 << 17), before(1 << 17)), (214_038, 214_038));
        assert_eq!((size(200_000), before(200_000)), (214_038, 214_038));
        assert_eq!((size(1 << 18), before(1 << 18)), (335_841, 335_841));
        assert_eq!(Domain::<Fq>::of_order(183_186).unwrap().size(), 183_186);
        assert!(Domain::<Fq>::of_order(183_187).is_none());
        let mut m = 1usize;
        while m < 5_000_000 {
            for n in [size(m), before(m)] {
                assert!(n >= m);
                assert_eq!(size(n), n, "m {m}: order {n} names its domain");
            }
            m = m * 9 / 8 + 1;
        }
    }

    /// The sparse inverse transform against the dense one, below and above its switch, on a
    /// radix-2 domain and a smooth one.
    #[test]
    fn sparse_ifft_matches_the_transform() {
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(6);
        fn check<F: PrimeField>(d: &Domain<F>, rng: &mut rand_chacha::ChaCha20Rng) {
            let n = d.size();
            for count in [0, 1, 3, Domain::<F>::SPARSE_IFFT_MAX + 1] {
                let evals: Vec<(usize, F)> = (0..count).map(|t| ((t * 7919 + n - 1) % n, F::rand(rng))).collect();
                let base: Vec<F> = (0..n).map(|_| F::rand(rng)).collect();
                let mut dense = vec![F::ZERO; n];
                for &(i, e) in &evals {
                    dense[i] += e;
                }
                d.ifft_in_place(&mut dense);
                let expect: Vec<F> = base.iter().zip(&dense).map(|(b, x)| *b + x).collect();
                let mut got = base.clone();
                d.add_sparse_ifft(&mut got, &evals);
                assert_eq!(got, expect, "n {n}, {count} evaluations");
            }
        }
        check(&Domain::<ark_bls12_381::Fr>::new(1 << 13).unwrap(), &mut rng);
        check(&Domain::<Fq>::new(9000).unwrap(), &mut rng);
    }

    /// A domain with the Rader radix 10177 (n = 2·10177): transforms against direct
    /// evaluation, both inverses; and the choice of orders above the direct ones.
    #[test]
    fn rader_radix_of_bls12_381_base_field() {
        let largest_direct = 2 * 9 * 11 * 23 * 47;
        assert_eq!(Domain::<Fq>::new(largest_direct).unwrap().size(), largest_direct);
        // Above 214,038 the orders carry 10177: 10177·33 is the smallest above 300,000.
        let big = Domain::<Fq>::new(300_000).unwrap();
        assert_eq!(big.size(), 10177 * 33);
        assert_eq!(Domain::<Fq>::new(big.size()).unwrap().size(), big.size());
        assert_eq!(Domain::<Fq>::new(4_213_278).unwrap().size(), 4_213_278);

        let factors = prime_factors::<Fq>(MAX_RADER_PRIME);
        assert!(factors.contains(&(10177, 1)), "{factors:?}");
        let d = Domain::Smooth(SmoothDomain::<Fq>::with_factors(2 * 10177, &factors).unwrap());
        let Domain::Smooth(sd) = &d else { unreachable!() };
        assert_eq!(sd.radices(), &[10177, 2]);
        let n = d.size();
        assert_eq!(d.group_gen().pow([n as u64]), Fq::ONE);
        let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(4);
        let coeffs: Vec<Fq> = (0..n).map(|_| Fq::rand(&mut rng)).collect();
        let eval = |x: Fq| coeffs.iter().rev().fold(Fq::ZERO, |acc, c| acc * x + c);
        let g = Fq::GENERATOR;
        let evals = d.coset_fft(g, &coeffs);
        for i in [0, 1, 2, 10176, 10177, 10178, n - 1] {
            assert_eq!(evals[i], eval(g * d.element(i)), "coset evaluation {i}");
        }
        assert_eq!(d.coset_ifft(g, &evals), coeffs);
        // The butterflies as before issue 60 give the same values.
        assert_eq!(d.clone().baseline().coset_fft(g, &coeffs), evals);
        let mut on_k = d.coset_fft(Fq::ONE, &coeffs);
        assert_eq!(on_k[5], eval(d.element(5)));
        d.ifft_in_place(&mut on_k);
        assert_eq!(on_k, coeffs);
    }
}

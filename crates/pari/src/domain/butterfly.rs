//! The DFTs of prime length that the stages of a [`SmoothDomain`](super::SmoothDomain)'s
//! mixed-radix FFT apply to each column: radix 2, a direct radix (paired terms, see [`Direct`]),
//! a Rader radix ([`Rader`]). Each keeps the plain sum it replaced, for
//! [`Domain::baseline`](super::Domain::baseline).

use ark_ff::{Field, PrimeField};

use super::{is_prime, prime_factors, smallest_order, SmoothDomain, MAX_RADIX};

/// One FFT stage's DFT of prime length `p`, in place on a column of `p` values, for the
/// `p`-th root of unity `ζ` it was made for.
#[derive(Debug)]
pub(super) enum Butterfly<F: Field> {
    /// `p = 2`: `(a, b) ↦ (a + b, a − b)`.
    Two,
    /// `X_s = Σ_r t_r·ζ^{rs}` for an odd `p`, by pairs (see [`Direct`]).
    Direct(Direct<F>),
    Rader(Rader<F>),
}

/// A DFT of odd prime length `p ≤` [`MAX_RADIX`] by pairs of opposite terms: with
/// `h = (p − 1)/2`, `u_r = t_r + t_{p−r}`, `v_r = t_r − t_{p−r}` (`1 ≤ r ≤ h`),
/// `c_k = (ζ^k + ζ^{−k})/2` and `d_k = (ζ^k − ζ^{−k})/2`,
/// `X_s = t_0 + A_s + B_s` and `X_{p−s} = t_0 + A_s − B_s` with `A_s = Σ_r u_r·c_{rs}`,
/// `B_s = Σ_r v_r·d_{rs}`: `2h² = (p − 1)²/2` products where the plain sum `Σ_r t_r·ζ^{rs}`
/// takes `(p − 1)²`. (The same pairing as a real FFT's cosine and sine halves.)
///
/// Each `A_s`, `B_s` is a dot product with a row of a table (`c_{rs}` for `r = 1..h`, laid out
/// by `s`), computed by [`dot`] with one Montgomery reduction per few products.
#[derive(Debug)]
pub(super) struct Direct<F: Field> {
    /// `ζ^k`, `k < p` (the plain sum, kept for [`Domain::baseline`]).
    roots: Vec<F>,
    /// Row `s − 1` holds `c_{rs}` (and `d_{rs}`) for `r = 1..h`: `h²` entries each.
    cos: Vec<F>,
    sin: Vec<F>,
}

/// `Σ a_i·b_i` over two slices of one length, five products at a time through
/// [`Field::sum_of_products`] (on a Montgomery field with spare bits, such as BLS12-381's `F_q`,
/// one reduction for the five instead of one each).
fn dot<F: Field>(a: &[F], b: &[F]) -> F {
    const T: usize = 5;
    let mut acc = F::ZERO;
    let (ca, cb) = (a.chunks_exact(T), b.chunks_exact(T));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        acc += F::sum_of_products::<T>(x.try_into().expect("T items"), y.try_into().expect("T items"));
    }
    for (x, y) in ra.iter().zip(rb) {
        acc += *x * y;
    }
    acc
}

impl<F: Field> Direct<F> {
    fn new(p: usize, zeta: F) -> Self {
        let mut roots = Vec::with_capacity(p);
        let mut z = F::ONE;
        for _ in 0..p {
            roots.push(z);
            z *= zeta;
        }
        let half = F::from(2u64).inverse().expect("the field has odd characteristic");
        let h = (p - 1) / 2;
        let (mut cos, mut sin) = (Vec::with_capacity(h * h), Vec::with_capacity(h * h));
        for s in 1..=h {
            for r in 1..=h {
                let k = r * s % p;
                cos.push((roots[k] + roots[p - k]) * half);
                sin.push((roots[k] - roots[p - k]) * half);
            }
        }
        Direct { roots, cos, sin }
    }

    fn apply(&self, col: &mut [F], baseline: bool) {
        const HALF: usize = MAX_RADIX as usize / 2;
        let p = self.roots.len();
        if baseline {
            let mut t = [F::ZERO; MAX_RADIX as usize];
            t[..p].copy_from_slice(col);
            for (s, out) in col.iter_mut().enumerate() {
                // Σ_r t_r ζ^{rs}: the exponent rs mod p advances by s each step.
                let mut acc = t[0];
                let mut e = 0;
                for tr in &t[1..p] {
                    e += s;
                    if e >= p {
                        e -= p;
                    }
                    acc += *tr * self.roots[e];
                }
                *out = acc;
            }
            return;
        }
        let h = (p - 1) / 2;
        let t0 = col[0];
        let (mut u, mut v) = ([F::ZERO; HALF], [F::ZERO; HALF]);
        let mut sum = t0;
        for r in 1..=h {
            u[r - 1] = col[r] + col[p - r];
            v[r - 1] = col[r] - col[p - r];
            sum += u[r - 1];
        }
        col[0] = sum;
        for (s, (cos, sin)) in (1..=h).zip(self.cos.chunks_exact(h).zip(self.sin.chunks_exact(h))) {
            let a = t0 + dot(&u[..h], cos);
            let b = dot(&v[..h], sin);
            col[s] = a + b;
            col[p - s] = a - b;
        }
    }
}

/// Rader's algorithm for a prime `p` (see the module doc): with `g` generating `(Z/p)*`,
/// `X_0 = Σ_r t_r` and `X_{g^{−s}} = t_0 + Σ_q t_{g^q}·ζ^{g^{q−s}}`, a cyclic convolution of
/// `a_q = t_{g^q}` with `b_j = ζ^{g^{−j}}` (length `p − 1`), done as a cyclic convolution of
/// length `L ≥ 2(p − 1) − 1` with `b` wrapped around (`B = b_0 … b_{p−2}, 0 …, b_1 … b_{p−2}`).
#[derive(Debug)]
pub(super) struct Rader<F: Field> {
    p: usize,
    /// `g^q mod p` for `q < p − 1`.
    perm_in: Vec<usize>,
    /// `g^{−s} mod p` for `s < p − 1`.
    perm_out: Vec<usize>,
    /// The length-`L` domain of the convolution (direct radices only).
    conv: SmoothDomain<F>,
    /// `FFT_L(B)/L`.
    kernel: Vec<F>,
}

fn pow_mod(mut b: u64, mut e: u64, m: u64) -> u64 {
    let mut r = 1u64;
    b %= m;
    while e > 0 {
        if e & 1 == 1 {
            r = r * b % m;
        }
        b = b * b % m;
        e >>= 1;
    }
    r
}

/// The smallest generator of `(Z/p)*`.
fn primitive_root(p: u64) -> u64 {
    let n = p - 1;
    let primes: Vec<u64> = (2..=n).filter(|&f| n % f == 0 && is_prime(f)).collect();
    (2..p)
        .find(|&g| primes.iter().all(|&f| pow_mod(g, n / f, p) != 1))
        .expect("(Z/p)* is cyclic")
}

impl<F: PrimeField> Rader<F> {
    /// The Rader plan for prime `p` and the `p`-th root of unity `zeta`; `None` when the field
    /// has no convolution length for it.
    fn new(p: usize, zeta: F) -> Option<Self> {
        let n = p - 1;
        let direct = prime_factors::<F>(MAX_RADIX);
        let (len, _) = smallest_order(&direct, 2 * n - 1)?;
        let conv = SmoothDomain::with_factors(len, &direct)?;
        let g = primitive_root(p as u64);
        let g_inv = pow_mod(g, p as u64 - 2, p as u64);
        let perm_in: Vec<usize> = (0..n).map(|q| pow_mod(g, q as u64, p as u64) as usize).collect();
        let perm_out: Vec<usize> = (0..n).map(|s| pow_mod(g_inv, s as u64, p as u64) as usize).collect();
        let mut zeta_pow = Vec::with_capacity(p);
        let mut z = F::ONE;
        for _ in 0..p {
            zeta_pow.push(z);
            z *= zeta;
        }
        // b_j = ζ^{g^{−j}} = ζ^{perm_out[j]}.
        let mut b = vec![F::ZERO; len];
        for j in 0..n {
            b[j] = zeta_pow[perm_out[j]];
        }
        for t in 1..n {
            b[len - t] = zeta_pow[perm_out[n - t]];
        }
        let mut kernel = conv.transform(&b, false);
        let len_inv = F::from(len as u64).inverse()?;
        kernel.iter_mut().for_each(|k| *k *= len_inv);
        Some(Rader { p, perm_in, perm_out, conv, kernel })
    }

    fn apply(&self, col: &mut [F], baseline: bool) {
        let n = self.p - 1;
        let x0 = col[0];
        let sum: F = col.iter().sum();
        let mut a = vec![F::ZERO; self.conv.size];
        for (q, &i) in self.perm_in.iter().enumerate() {
            a[q] = col[i];
        }
        let mut c = self.conv.transform_with(&a, false, baseline);
        c.iter_mut().zip(&self.kernel).for_each(|(x, k)| *x *= k);
        let c = self.conv.transform_with(&c, true, baseline);
        col[0] = sum;
        for (s, &o) in self.perm_out.iter().enumerate().take(n) {
            col[o] = x0 + c[s];
        }
    }
}

impl<F: PrimeField> Butterfly<F> {
    pub(super) fn new(p: usize, zeta: F) -> Option<Self> {
        if p == 2 {
            return Some(Butterfly::Two);
        }
        if p as u64 <= MAX_RADIX {
            return Some(Butterfly::Direct(Direct::new(p, zeta)));
        }
        Rader::new(p, zeta).map(Butterfly::Rader)
    }

    pub(super) fn apply(&self, col: &mut [F], baseline: bool) {
        match self {
            Butterfly::Two => {
                let (a, b) = (col[0], col[1]);
                col[0] = a + b;
                col[1] = a - b;
            }
            Butterfly::Direct(d) => d.apply(col, baseline),
            Butterfly::Rader(r) => r.apply(col, baseline),
        }
    }
}

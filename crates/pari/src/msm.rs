//! The one place where multi-scalar multiplications happen, so that a GPU backend can replace
//! the CPU one without touching the protocol code.
//!
//! * [`msm`], [`msm_u128`]: arkworks' Pippenger (what the verifier used before; kept for the
//!   prover, for curves without a fast path, and as the baseline the bench measures against).
//! * [`Pippenger`]: a signed-digit bucket method with window width chosen for the size and the
//!   scalars' bit length (128-bit batch weights need half the windows of full-width scalars).
//!   On BLS12-381, BN254 and BW6-767 G1 the buckets are filled in affine coordinates with one
//!   batch inversion per round of pairwise additions ("batch-affine" accumulation, about 5M + 1S
//!   per addition instead of 8M for a mixed addition in arkworks' `XYZZ` bucket coordinates),
//!   [`Pippenger::AFFINE_CHUNK`] points at a time so that its copies stay bounded; on other
//!   curves, below [`Pippenger::BATCH_AFFINE_MIN`] points, and when asked
//!   ([`Accumulation::Projective`]), in `XYZZ` coordinates.
//! * [`FixedBaseTable`]: precomputed multiples of a few fixed points (the verifying key's G1
//!   points), so that a combination of them costs one mixed addition per signed window digit and
//!   no doubling.

use std::any::Any;

use ark_ec::short_weierstrass::{Affine, Projective, SWCurveConfig};
use ark_ec::{AffineRepr, CurveGroup, VariableBaseMSM};
use ark_ff::{batch_inversion, AdditiveGroup, Field, PrimeField, Zero};
#[cfg(feature = "parallel")]
use rayon::prelude::*;

use crate::interrupt::Interrupt;
use crate::Error;

/// `Σ scalars[i] · bases[i]` over the common prefix of the two slices (arkworks).
pub fn msm<G: CurveGroup>(bases: &[G::Affine], scalars: &[G::ScalarField]) -> G {
    let n = bases.len().min(scalars.len());
    G::msm_unchecked(&bases[..n], &scalars[..n])
}

/// `Σ scalars[i] · bases[i]` for 128-bit scalars, as two 64-bit arkworks MSMs (`lo + 2^64·hi`).
pub fn msm_u128<G: CurveGroup>(bases: &[G::Affine], scalars: &[u128]) -> G {
    let lo: Vec<G::ScalarField> = scalars.iter().map(|s| G::ScalarField::from(*s as u64)).collect();
    let hi: Vec<G::ScalarField> = scalars.iter().map(|s| G::ScalarField::from((*s >> 64) as u64)).collect();
    let shift = G::ScalarField::from(1u128 << 64);
    msm::<G>(bases, &lo) + msm::<G>(bases, &hi) * shift
}

/// Whether [`Pippenger`] has the batch-affine path for `G` (BLS12-381, BN254 and BW6-767 G1).
pub fn has_batch_affine<G: CurveGroup>() -> bool {
    use std::any::TypeId;
    let t = TypeId::of::<G>();
    t == TypeId::of::<ark_bls12_381::G1Projective>()
        || t == TypeId::of::<ark_bn254::G1Projective>()
        || t == TypeId::of::<ark_bw6_767::G1Projective>()
}

/// How [`Pippenger`] fills its buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Accumulation {
    /// Affine buckets, pairwise additions sharing one inversion per round, where the curve has
    /// a fast path (BLS12-381 and BN254 G1); projective elsewhere.
    BatchAffine,
    /// Projective buckets with mixed additions (arkworks' group law).
    Projective,
}

/// Signed-digit scalars ready for a bucket-method MSM: `digits[w·n + i]` is digit `w` of scalar
/// `i`, in `[−2^{c−1}, 2^{c−1}]`, so that `s_i = Σ_w digits[w·n + i]·2^{c·w}`.
///
/// The digits depend only on the scalars, so one set serves several MSMs with the same scalars
/// (the batch verifier's `T̃` and `Ũ`).
pub struct Pippenger {
    n: usize,
    c: usize,
    acc: Accumulation,
    windows: usize,
    digits: Vec<i32>,
    /// Points a batch-affine window sorts at a time ([`Pippenger::AFFINE_CHUNK`]).
    affine_chunk: usize,
}

impl Pippenger {
    /// Below this many points, batch-affine accumulation falls back to projective: each round
    /// of pairwise additions costs one field inversion per window, which few points do not
    /// amortise (measured: equal at 512 points, batch-affine slower below).
    pub const BATCH_AFFINE_MIN: usize = 1024;

    /// Recodes `scalars` (little-endian 64-bit limbs, each below `2^bits`) for `n = scalars.len()`
    /// points, with the window width that minimises the estimated cost for `acc`.
    pub fn new<S: AsRef<[u64]> + Sync>(scalars: &[S], bits: usize, acc: Accumulation) -> Self {
        let n = scalars.len();
        let acc = if n < Self::BATCH_AFFINE_MIN { Accumulation::Projective } else { acc };
        Self::with_width(scalars, bits, acc, window_width(n, bits, acc))
    }

    /// [`Pippenger::new`] with the window width `c` (2 to 16) given, for benchmarks that tune it.
    pub fn with_width<S: AsRef<[u64]> + Sync>(scalars: &[S], bits: usize, acc: Accumulation, c: usize) -> Self {
        assert!((2..=16).contains(&c), "window width {c}");
        let n = scalars.len();
        // Capacity windows·c ≥ bits + 1 leaves the top window's raw value below 2^{c−1}, so the
        // last carry is absorbed.
        let windows = (bits + 1).div_ceil(c);
        let mut digits = vec![0i32; windows * n];
        let half = 1i64 << (c - 1);
        let full = 1i64 << c;
        for (i, s) in scalars.iter().enumerate() {
            let limbs = s.as_ref();
            let mut carry = 0i64;
            for w in 0..windows {
                let mut d = bits_at(limbs, w * c, c) as i64 + carry;
                if d > half {
                    d -= full;
                    carry = 1;
                } else {
                    carry = 0;
                }
                digits[w * n + i] = d as i32;
            }
            debug_assert_eq!(carry, 0);
        }
        let affine_chunk = Self::AFFINE_CHUNK.max(16 << (c - 1));
        Pippenger { n, c, acc, windows, digits, affine_chunk }
    }

    /// Full-width field elements.
    pub fn from_field<F: PrimeField>(scalars: &[F], acc: Accumulation) -> Self {
        let bigints: Vec<F::BigInt> = scalars.iter().map(|s| s.into_bigint()).collect();
        Self::new(&bigints, F::MODULUS_BIT_SIZE as usize, acc)
    }

    /// 128-bit scalars.
    pub fn from_u128(scalars: &[u128], acc: Accumulation) -> Self {
        let limbs: Vec<[u64; 2]> = scalars.iter().map(|s| [*s as u64, (*s >> 64) as u64]).collect();
        Self::new(&limbs, 128, acc)
    }

    /// `Σ s_i · bases[i]` (`bases.len()` must equal the number of scalars; extra ones are ignored,
    /// missing ones count as the identity). A `Vec` because the fast path is chosen by its type.
    #[allow(clippy::ptr_arg)]
    pub fn run<G: CurveGroup>(&self, bases: &Vec<G::Affine>) -> G {
        self.run_until(bases, Interrupt::NEVER).expect("never interrupted")
    }

    /// [`Pippenger::run`], reading `stop` before each window: `Err(Error::Interrupted)` once it
    /// is raised (the windows already started finish; the rest are skipped).
    #[allow(clippy::ptr_arg)]
    pub fn run_until<G: CurveGroup>(&self, bases: &Vec<G::Affine>, stop: Interrupt<'_>) -> Result<G, Error> {
        self.run_parts_until(&[bases], stop)
    }

    /// `Σ s_i · bases_i` with the bases the concatenation of `parts`, so that a caller whose
    /// points live in several vectors (a proving key's) copies none of them. Vectors because the
    /// fast path is chosen by their type.
    #[allow(clippy::ptr_arg)]
    pub fn run_parts<G: CurveGroup>(&self, parts: &[&Vec<G::Affine>]) -> G {
        self.run_parts_until(parts, Interrupt::NEVER).expect("never interrupted")
    }

    /// [`Pippenger::run_parts`], reading `stop` before each window as [`Pippenger::run_until`].
    #[allow(clippy::ptr_arg)]
    pub fn run_parts_until<G: CurveGroup>(&self, parts: &[&Vec<G::Affine>], stop: Interrupt<'_>) -> Result<G, Error> {
        if self.acc == Accumulation::BatchAffine {
            if let Some(r) = self.run_sw::<G, ark_bls12_381::g1::Config>(parts, stop) {
                return r;
            }
            if let Some(r) = self.run_sw::<G, ark_bn254::g1::Config>(parts, stop) {
                return r;
            }
            if let Some(r) = self.run_sw::<G, ark_bw6_767::g1::Config>(parts, stop) {
                return r;
            }
        }
        let sums: Vec<G> = self.windows_until(stop, |w| self.window_projective::<G>(parts.iter().flat_map(|p| p.iter()), w));
        stop.check()?;
        Ok(self.combine(sums))
    }

    /// Each window's sum (in parallel), skipping the windows not yet started once `stop` is
    /// raised (their place holds the identity; the caller checks `stop` before combining).
    fn windows_until<G: CurveGroup>(&self, stop: Interrupt<'_>, window: impl Fn(usize) -> G + Sync) -> Vec<G> {
        ark_std::cfg_into_iter!(0..self.windows).map(|w| if stop.is_raised() { G::zero() } else { window(w) }).collect()
    }

    /// The batch-affine path when `G` is `Projective<P>` (decided by type identity, no unsafe).
    #[allow(clippy::ptr_arg)]
    fn run_sw<G: CurveGroup, P: SWCurveConfig>(&self, parts: &[&Vec<G::Affine>], stop: Interrupt<'_>) -> Option<Result<G, Error>> {
        let parts: Vec<&[Affine<P>]> = parts
            .iter()
            .map(|p| (*p as &dyn Any).downcast_ref::<Vec<Affine<P>>>().map(|v| v.as_slice()))
            .collect::<Option<_>>()?;
        let sums: Vec<Projective<P>> = self.windows_until(stop, |w| self.window_affine::<P>(&parts, w));
        if let Err(e) = stop.check() {
            return Some(Err(e));
        }
        let r: Box<dyn Any> = Box::new(self.combine(sums));
        r.downcast::<G>().ok().map(|b| Ok(*b))
    }

    /// `Σ_w 2^{c·w} S_w` by Horner's rule from the top window.
    fn combine<G: CurveGroup>(&self, sums: Vec<G>) -> G {
        let mut total = G::zero();
        for s in sums.into_iter().rev() {
            for _ in 0..self.c {
                total.double_in_place();
            }
            total += s;
        }
        total
    }

    fn window_digits(&self, w: usize) -> &[i32] {
        &self.digits[w * self.n..(w + 1) * self.n]
    }

    /// One window with buckets in arkworks' bucket representation (extended Jacobian `XYZZ`
    /// coordinates for short Weierstrass curves: 8M per mixed addition).
    fn window_projective<'a, G: CurveGroup>(&self, bases: impl IntoIterator<Item = &'a G::Affine>, w: usize) -> G
    where
        G::Affine: 'a,
    {
        let mut buckets = vec![G::ZERO_BUCKET; 1 << (self.c - 1)];
        for (&d, b) in self.window_digits(w).iter().zip(bases) {
            if d > 0 {
                buckets[(d - 1) as usize] += b;
            } else if d < 0 {
                buckets[(-d - 1) as usize] -= b;
            }
        }
        let mut running = G::ZERO_BUCKET;
        let mut res = G::ZERO_BUCKET;
        for b in buckets.iter().rev() {
            running += b;
            res += &running;
        }
        res.into()
    }

    /// Points sorted and reduced at a time by [`Pippenger::window_affine`]: at least this many,
    /// and at least 16 per bucket. Bounds the window's copies of the points (two coordinates
    /// each: 96 MiB a window at 2^19 BW6-767 points, two windows at a time on two threads)
    /// whatever the MSM's size; a bucket's sum so far joins the next chunk as one more point,
    /// so a chunk costs at most one addition per bucket more than one pass would.
    const AFFINE_CHUNK: usize = 1 << 16;

    /// One window with affine buckets. The points are taken a chunk at a time: each chunk is
    /// sorted by bucket (counting sort, each bucket's sum so far first), then each bucket's list
    /// is halved per round by pairwise additions whose denominators share one batch inversion,
    /// until one point (the bucket's new sum) or none is left; finally `Σ_b (b+1)·bucket_b` by
    /// running sums.
    fn window_affine<P: SWCurveConfig>(&self, parts: &[&[Affine<P>]], w: usize) -> Projective<P> {
        let digits = self.window_digits(w);
        let nb = 1usize << (self.c - 1);
        let chunk = self.affine_chunk;
        // Bucket k (digit magnitude k + 1): its sum so far, when it is not the identity.
        let mut sums: Vec<Option<(P::BaseField, P::BaseField)>> = vec![None; nb];
        let mut points = digits.iter().zip(parts.iter().flat_map(|p| p.iter()));
        let mut start = vec![0usize; nb + 1];
        let mut len = vec![0usize; nb];
        let mut xs: Vec<P::BaseField> = Vec::new();
        let mut ys: Vec<P::BaseField> = Vec::new();
        let mut denoms: Vec<P::BaseField> = Vec::new();
        loop {
            let mut taken = 0;
            let batch: Vec<(i32, &Affine<P>)> = points
                .by_ref()
                .take(chunk)
                .inspect(|_| taken += 1)
                .filter(|(&d, b)| d != 0 && !b.is_zero())
                .map(|(&d, b)| (d, b))
                .collect();
            if taken == 0 {
                break;
            }
            if batch.is_empty() {
                continue;
            }
            start.iter_mut().for_each(|s| *s = 0);
            for (k, s) in sums.iter().enumerate() {
                start[k + 1] += s.is_some() as usize;
            }
            for &(d, _) in &batch {
                start[d.unsigned_abs() as usize] += 1;
            }
            // start[k] = first slot of bucket k.
            let mut acc = 0;
            for k in 0..nb {
                let cnt = start[k + 1];
                start[k] = acc;
                acc += cnt;
            }
            start[nb] = acc;
            xs.clear();
            xs.resize(acc, P::BaseField::zero());
            ys.clear();
            ys.resize(acc, P::BaseField::zero());
            let mut fill = start.clone();
            for (k, s) in sums.iter_mut().enumerate() {
                if let Some((x, y)) = s.take() {
                    xs[fill[k]] = x;
                    ys[fill[k]] = y;
                    fill[k] += 1;
                }
            }
            for &(d, b) in &batch {
                let k = d.unsigned_abs() as usize - 1;
                xs[fill[k]] = b.x;
                ys[fill[k]] = if d > 0 { b.y } else { -b.y };
                fill[k] += 1;
            }
            for k in 0..nb {
                len[k] = start[k + 1] - start[k];
            }
            reduce_buckets::<P>(&mut xs, &mut ys, &start, &mut len, &mut denoms);
            for k in 0..nb {
                if len[k] == 1 {
                    sums[k] = Some((xs[start[k]], ys[start[k]]));
                }
            }
        }
        // Σ_k (k+1)·bucket_k by running sums, in XYZZ coordinates (mixed additions of the
        // affine bucket sums).
        let mut running = <Projective<P> as VariableBaseMSM>::ZERO_BUCKET;
        let mut res = <Projective<P> as VariableBaseMSM>::ZERO_BUCKET;
        for s in sums.iter().rev() {
            if let Some((x, y)) = s {
                running += Affine::<P>::new_unchecked(*x, *y);
            }
            res += &running;
        }
        res.into()
    }
}

/// Halves every bucket's list of affine points (bucket `k` holds `len[k]` points from slot
/// `start[k]` of `xs, ys`) by rounds of pairwise additions, one batch inversion a round, until
/// each holds one point or none (`P + (−P)` drops both).
fn reduce_buckets<P: SWCurveConfig>(
    xs: &mut [P::BaseField],
    ys: &mut [P::BaseField],
    start: &[usize],
    len: &mut [usize],
    denoms: &mut Vec<P::BaseField>,
) {
    let mut active: Vec<usize> = (0..len.len()).filter(|&k| len[k] >= 2).collect();
    while !active.is_empty() {
        denoms.clear();
        for &k in &active {
            let s = start[k];
            for j in 0..len[k] / 2 {
                let (a, b) = (s + 2 * j, s + 2 * j + 1);
                denoms.push(if xs[a] != xs[b] {
                    xs[b] - xs[a]
                } else if ys[a] == ys[b] && !ys[a].is_zero() {
                    ys[a].double()
                } else {
                    P::BaseField::ONE // the sum is the identity; no inversion needed
                });
            }
        }
        batch_inversion(denoms);
        let mut inv = denoms.iter();
        for &k in &active {
            let s = start[k];
            let l = len[k];
            let mut out = s;
            for j in 0..l / 2 {
                let (a, b) = (s + 2 * j, s + 2 * j + 1);
                let i = *inv.next().expect("one inverse per pair");
                let (x1, y1, x2, y2) = (xs[a], ys[a], xs[b], ys[b]);
                let lambda = if x1 != x2 {
                    (y2 - y1) * i
                } else if y1 == y2 && !y1.is_zero() {
                    let x1_sq = x1.square();
                    (x1_sq.double() + x1_sq + P::COEFF_A) * i
                } else {
                    continue; // P + (−P): drop both
                };
                let x3 = lambda.square() - x1 - x2;
                let y3 = lambda * (x1 - x3) - y1;
                xs[out] = x3;
                ys[out] = y3;
                out += 1;
            }
            if l % 2 == 1 {
                xs[out] = xs[s + l - 1];
                ys[out] = ys[s + l - 1];
                out += 1;
            }
            len[k] = out - s;
        }
        active.retain(|&k| len[k] >= 2);
    }
}

/// `c` bits of `limbs` starting at bit `start` (zero past the end).
fn bits_at(limbs: &[u64], start: usize, c: usize) -> u64 {
    let (li, off) = (start / 64, start % 64);
    let Some(&lo) = limbs.get(li) else {
        return 0;
    };
    let mut v = lo >> off;
    if off + c > 64 {
        if let Some(&hi) = limbs.get(li + 1) {
            v |= hi << (64 - off);
        }
    }
    v & ((1u64 << c) - 1)
}

/// The window width minimising `windows · (n·add + 2^{c−1}·reduce)`, with costs in field
/// multiplications: a batch-affine bucket addition ≈ 6, a mixed XYZZ one ≈ 8, and the two
/// additions per bucket of the running sums ≈ 22 (affine buckets) or 28 (XYZZ buckets).
fn window_width(n: usize, bits: usize, acc: Accumulation) -> usize {
    let (add, reduce) = match acc {
        Accumulation::BatchAffine => (6.0, 22.0),
        Accumulation::Projective => (8.0, 28.0),
    };
    (2..=16usize)
        .map(|c| {
            let windows = (bits + 1).div_ceil(c) as f64;
            (c, windows * (n as f64 * add + (1u64 << (c - 1)) as f64 * reduce))
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(c, _)| c)
        .unwrap_or(8)
}

/// Precomputed multiples `j·2^{w·i}·B` (`1 ≤ j ≤ 2^{w−1}`) of a few fixed points `B`, for
/// `Σ s_b·B_b` with one mixed addition per nonzero signed digit and no doubling.
#[derive(Clone, Debug)]
pub struct FixedBaseTable<G: CurveGroup> {
    w: usize,
    windows: usize,
    bases: usize,
    table: Vec<G::Affine>,
}

impl<G: CurveGroup> FixedBaseTable<G> {
    /// Window width 6: 43 windows × 32 multiples per point on a 255-bit field (about 0.45 MB for
    /// three BLS12-381 points), 43 additions per scalar.
    pub const WINDOW: usize = 6;

    pub fn new(bases: &[G::Affine]) -> Self {
        let w = Self::WINDOW;
        let bits = G::ScalarField::MODULUS_BIT_SIZE as usize;
        let windows = (bits + 1).div_ceil(w);
        let half = 1usize << (w - 1);
        let mut proj = Vec::with_capacity(bases.len() * windows * half);
        for b in bases {
            let mut cur: G = (*b).into();
            for _ in 0..windows {
                let mut m = cur;
                for _ in 0..half {
                    proj.push(m);
                    m += cur;
                }
                for _ in 0..w {
                    cur.double_in_place();
                }
            }
        }
        FixedBaseTable { w, windows, bases: bases.len(), table: G::normalize_batch(&proj) }
    }

    /// `Σ scalars[b]·bases[b]` (scalars past the number of bases are ignored).
    pub fn mul(&self, scalars: &[G::ScalarField]) -> G {
        let half = 1i64 << (self.w - 1);
        let full = 1i64 << self.w;
        let mut acc = G::zero();
        for (b, s) in scalars.iter().take(self.bases).enumerate() {
            let big = s.into_bigint();
            let limbs = big.as_ref();
            let mut carry = 0i64;
            for i in 0..self.windows {
                let mut d = bits_at(limbs, i * self.w, self.w) as i64 + carry;
                if d > half {
                    d -= full;
                    carry = 1;
                } else {
                    carry = 0;
                }
                let row = (b * self.windows + i) * half as usize;
                if d > 0 {
                    acc += self.table[row + d as usize - 1];
                } else if d < 0 {
                    acc -= self.table[row + (-d) as usize - 1];
                }
            }
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ark_ff::UniformRand;
    use ark_std::rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    fn check<G: CurveGroup>() {
        let mut rng = ChaCha20Rng::seed_from_u64(9);
        for n in [0usize, 1, 2, 3, 17, 300, 1500] {
            let mut bases: Vec<G::Affine> = (0..n).map(|_| G::rand(&mut rng).into_affine()).collect();
            // Repeated points, opposite points and the identity exercise every branch of the
            // affine additions.
            if n >= 17 {
                bases[1] = bases[0];
                bases[2] = -bases[0];
                bases[3] = G::Affine::zero();
                bases[4] = bases[0];
            }
            let full: Vec<G::ScalarField> = (0..n).map(|_| G::ScalarField::rand(&mut rng)).collect();
            let mut small: Vec<u128> = (0..n).map(|_| rng.gen()).collect();
            if n >= 17 {
                small[0] = small[1];
                small[5] = 0;
                small[6] = u128::MAX;
            }
            let small_f: Vec<G::ScalarField> = small.iter().map(|s| G::ScalarField::from(*s)).collect();
            let expect_full = msm::<G>(&bases, &full);
            let expect_small = msm::<G>(&bases, &small_f);
            for acc in [Accumulation::BatchAffine, Accumulation::Projective] {
                assert_eq!(Pippenger::from_field(&full, acc).run::<G>(&bases), expect_full, "n {n} {acc:?}");
                assert_eq!(Pippenger::from_u128(&small, acc).run::<G>(&bases), expect_small, "n {n} {acc:?}");
                if n == 300 {
                    // Force the batch-affine path below its threshold too.
                    let mut p = Pippenger::from_u128(&small, acc);
                    p.acc = acc;
                    assert_eq!(p.run::<G>(&bases), expect_small, "forced {acc:?}");
                    let mut p = Pippenger::from_field(&full, acc);
                    p.acc = acc;
                    assert_eq!(p.run::<G>(&bases), expect_full, "forced {acc:?}");
                }
            }
            assert_eq!(msm_u128::<G>(&bases, &small), expect_small);
            // The same points in three parts (one of them empty), copied into none.
            let (head, tail) = (bases[..n / 3].to_vec(), bases[n / 3..].to_vec());
            let empty = Vec::new();
            for acc in [Accumulation::BatchAffine, Accumulation::Projective] {
                let parts = [&head, &empty, &tail];
                assert_eq!(Pippenger::from_field(&full, acc).run_parts::<G>(&parts), expect_full, "parts, n {n} {acc:?}");
                // Batch-affine windows taken a few points at a time: each bucket's sum so far
                // joins the next chunk (chunks of 7 and 64 points, with and without parts).
                for chunk in [7, 64] {
                    let mut p = Pippenger::from_field(&full, acc);
                    p.acc = acc;
                    p.affine_chunk = chunk;
                    assert_eq!(p.run::<G>(&bases), expect_full, "chunks of {chunk}, n {n} {acc:?}");
                    assert_eq!(p.run_parts::<G>(&parts), expect_full, "parts in chunks of {chunk}, n {n} {acc:?}");
                }
            }
        }
        let pts: Vec<G::Affine> = (0..3).map(|_| G::rand(&mut rng).into_affine()).collect();
        let table = FixedBaseTable::<G>::new(&pts);
        for _ in 0..20 {
            let s: Vec<G::ScalarField> = (0..3).map(|_| G::ScalarField::rand(&mut rng)).collect();
            assert_eq!(table.mul(&s), msm::<G>(&pts, &s));
        }
        let edge = [G::ScalarField::zero(), -G::ScalarField::from(1u64), G::ScalarField::from(1u64)];
        assert_eq!(table.mul(&edge), msm::<G>(&pts, &edge));
    }

    #[test]
    fn pippenger_and_fixed_base_agree_with_arkworks() {
        check::<ark_bls12_381::G1Projective>();
        check::<ark_bn254::G1Projective>();
        check::<ark_bw6_767::G1Projective>();
        check::<ark_bls12_381::G2Projective>(); // no fast path: the projective fallback
    }

    /// An MSM reads its caller's flag once per window (and once before combining): a flag
    /// raised at any read ends it with `Interrupted`, on both paths; one never raised gives the
    /// sum.
    #[test]
    fn an_msm_stops_at_a_raised_interrupt() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        type G = ark_bls12_381::G1Projective;
        let mut rng = ChaCha20Rng::seed_from_u64(10);
        let n = 2 * Pippenger::BATCH_AFFINE_MIN;
        let bases: Vec<<G as CurveGroup>::Affine> = (0..n).map(|_| G::rand(&mut rng).into_affine()).collect();
        let full: Vec<ark_bls12_381::Fr> = (0..n).map(|_| UniformRand::rand(&mut rng)).collect();
        let expect = msm::<G>(&bases, &full);
        for acc in [Accumulation::BatchAffine, Accumulation::Projective] {
            let p = Pippenger::from_field(&full, acc);
            let reads = AtomicUsize::new(0);
            let never = || {
                reads.fetch_add(1, Ordering::Relaxed);
                false
            };
            assert_eq!(p.run_until::<G>(&bases, Interrupt::new(&never)).unwrap(), expect);
            assert_eq!(p.run_parts_until::<G>(&[&bases], Interrupt::new(&never)).unwrap(), expect);
            let total = reads.load(Ordering::Relaxed);
            assert_eq!(total, 2 * (p.windows + 1), "{acc:?}");
            for k in 1..=p.windows + 1 {
                let reads = AtomicUsize::new(0);
                let raised_at_k = || reads.fetch_add(1, Ordering::Relaxed) + 1 >= k;
                assert!(matches!(p.run_until::<G>(&bases, Interrupt::new(&raised_at_k)), Err(Error::Interrupted)), "{acc:?} at {k}");
                let reads = AtomicUsize::new(0);
                let raised_at_k = || reads.fetch_add(1, Ordering::Relaxed) + 1 >= k;
                assert!(matches!(p.run_parts_until::<G>(&[&bases], Interrupt::new(&raised_at_k)), Err(Error::Interrupted)), "{acc:?} parts at {k}");
            }
        }
    }

    #[test]
    fn the_batch_affine_curves_are_named() {
        assert!(has_batch_affine::<ark_bls12_381::G1Projective>() && has_batch_affine::<ark_bn254::G1Projective>());
        assert!(has_batch_affine::<ark_bw6_767::G1Projective>());
        assert!(!has_batch_affine::<ark_bls12_381::G2Projective>() && !has_batch_affine::<ark_bw6_761::G1Projective>());
    }
}

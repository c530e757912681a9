//! The aggregation SRS (paper §5.1, `CMD.Setup`, and the KZG keys of TIPP): for two secrets
//! `a, b` and a size `n` (a power of two, at least 2),
//!
//! * `[a^i]₁, [b^i]₁` for `i < 2n`: the commitment keys `w1_i = [a^{n+i}]₁`,
//!   `w2_i = [b^{n+i}]₁` for `G2` vectors, and the KZG powers for opening them;
//! * `[a^i]₂, [b^i]₂` for `i < n`: the commitment keys `v1_i`, `v2_i` for `G1` vectors, and
//!   the KZG powers for opening them.
//!
//! One SRS serves every vector length `m ≤ n` (keys are prefixes). Whoever runs [`Srs::setup`]
//! knows `a, b` and can break the binding of the commitments: it is part of the trusted setup,
//! like the Mirage keys.

use ark_ec::pairing::Pairing;
use ark_ec::{PrimeGroup, ScalarMul};
use ark_ff::{Field, UniformRand, Zero};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use rand::Rng;

use super::afgho::CommitmentKey;
use crate::Error;

/// The verifier's part of an [`Srs`]: `n`, `[a]₁, [b]₁, [a]₂, [b]₂`. TIPP's verifier checks
/// KZG openings of polynomials of degree below `2n` against these, so its key stays `O(1)`
/// whatever `n`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifierSrs<E: Pairing> {
    pub n: u64,
    pub g_a1: E::G1Affine,
    pub g_b1: E::G1Affine,
    pub h_a1: E::G2Affine,
    pub h_b1: E::G2Affine,
}

impl<E: Pairing> VerifierSrs<E> {
    /// `n`: a power of two, at least 2 (and no point is the identity: `a, b ≠ 0`).
    pub fn check(&self) -> Result<(), Error> {
        use ark_ec::AffineRepr;
        let n = usize::try_from(self.n).unwrap_or(0);
        if n < 2 || !n.is_power_of_two() || n > 1 << 40 {
            return Err(Error::malformed(
                "aggregation verifier SRS",
                format!("n = {} is not a power of two in [2, 2^40]", self.n),
            ));
        }
        if self.g_a1.is_zero() || self.g_b1.is_zero() || self.h_a1.is_zero() || self.h_b1.is_zero()
        {
            return Err(Error::malformed(
                "aggregation verifier SRS",
                "a power of a secret is the identity",
            ));
        }
        Ok(())
    }

    /// `n`: the longest vector the SRS commits to.
    pub fn max_len(&self) -> usize {
        self.n as usize
    }
}

#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Srs<E: Pairing> {
    /// `[a^i]₁`, `i < 2n`.
    pub g_a: Vec<E::G1Affine>,
    /// `[b^i]₁`, `i < 2n`.
    pub g_b: Vec<E::G1Affine>,
    /// `[a^i]₂`, `i < n`.
    pub h_a: Vec<E::G2Affine>,
    /// `[b^i]₂`, `i < n`.
    pub h_b: Vec<E::G2Affine>,
}

fn powers<F: Field>(x: F, len: usize) -> Vec<F> {
    std::iter::successors(Some(F::one()), |p| Some(*p * x))
        .take(len)
        .collect()
}

impl<E: Pairing> Srs<E> {
    /// An SRS for vectors of up to `max_len` elements (rounded up to a power of two, at least 2).
    pub fn setup<R: Rng>(max_len: usize, rng: &mut R) -> Self {
        let n = max_len.max(2).next_power_of_two();
        let nonzero = |rng: &mut R| loop {
            let x = E::ScalarField::rand(rng);
            if !x.is_zero() {
                break x;
            }
        };
        let (a, b) = (nonzero(rng), nonzero(rng));
        let (g, h) = (E::G1::generator(), E::G2::generator());
        Srs {
            g_a: g.batch_mul(&powers(a, 2 * n)),
            g_b: g.batch_mul(&powers(b, 2 * n)),
            h_a: h.batch_mul(&powers(a, n)),
            h_b: h.batch_mul(&powers(b, n)),
        }
    }

    /// `n`: the longest vector the SRS commits to.
    pub fn max_len(&self) -> usize {
        self.h_a.len()
    }

    /// What a verifier needs of the SRS ([`VerifierSrs`]): `n` and the degree-1 powers.
    pub fn verifier_srs(&self) -> Result<VerifierSrs<E>, Error> {
        self.check()?;
        Ok(VerifierSrs {
            n: self.max_len() as u64,
            g_a1: self.g_a[1],
            g_b1: self.g_b[1],
            h_a1: self.h_a[1],
            h_b1: self.h_b[1],
        })
    }

    /// Shapes: `n ≥ 2` a power of two, `2n` powers in G1, `n` in G2, for both secrets.
    pub fn check(&self) -> Result<(), Error> {
        let n = self.h_a.len();
        if n < 2
            || !n.is_power_of_two()
            || self.h_b.len() != n
            || self.g_a.len() != 2 * n
            || self.g_b.len() != 2 * n
        {
            return Err(Error::malformed(
                "aggregation SRS",
                format!(
                    "{}, {} powers in G1 and {}, {} in G2",
                    self.g_a.len(),
                    self.g_b.len(),
                    self.h_a.len(),
                    self.h_b.len()
                ),
            ));
        }
        Ok(())
    }

    /// The commitment key for vectors of length `m ≤ n`: `v1_i = [a^i]₂`, `v2_i = [b^i]₂`,
    /// `w1_i = [a^{n+i}]₁`, `w2_i = [b^{n+i}]₁` for `i < m`.
    pub fn commitment_key(&self, m: usize) -> Result<CommitmentKey<E>, Error> {
        self.check()?;
        let n = self.max_len();
        if m > n {
            return Err(Error::ShapeMismatch {
                what: "vector length for the aggregation SRS",
                expected: n,
                got: m,
            });
        }
        Ok(CommitmentKey {
            v1: self.h_a[..m].to_vec(),
            v2: self.h_b[..m].to_vec(),
            w1: self.g_a[n..n + m].to_vec(),
            w2: self.g_b[n..n + m].to_vec(),
        })
    }
}

//! Structure-preserving commitments to vectors of group elements (\[AFGHO16\]; the paper's
//! `CMD`, `CM1`, `CM2`, §5.1): with keys `v1, v2 ∈ G2^m` and `w1, w2 ∈ G1^m`,
//!
//! * `CM1(A) = (Π e(A_i, v1_i), Π e(A_i, v2_i))` for `A ∈ G1^m`;
//! * `CM2(B) = (Π e(w1_i, B_i), Π e(w2_i, B_i))` for `B ∈ G2^m`;
//! * `CMD(A, B) = CM1(A) · CM2(B)`, componentwise in `G_T`.
//!
//! All three are homomorphic (written additively here, as arkworks writes `G_T`), which is
//! what lets GIPA fold them and the verifier combine them. Binding rests on the SRS
//! structure (`v = [a^i]₂`, `w = [a^{n+i}]₁`, \[GMN22\]); none of them hides.

use std::ops::Add;

use ark_ec::pairing::{Pairing, PairingOutput};
use ark_ec::VariableBaseMSM;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use crate::Error;

/// A commitment key: `v1, v2` commit `G1` vectors, `w1, w2` commit `G2` vectors.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct CommitmentKey<E: Pairing> {
    pub v1: Vec<E::G2Affine>,
    pub v2: Vec<E::G2Affine>,
    pub w1: Vec<E::G1Affine>,
    pub w2: Vec<E::G1Affine>,
}

impl<E: Pairing> CommitmentKey<E> {
    pub fn len(&self) -> usize {
        self.v1.len()
    }

    pub fn is_empty(&self) -> bool {
        self.v1.is_empty()
    }

    fn fits(&self, len: usize) -> Result<(), Error> {
        if len > self.len() {
            return Err(Error::ShapeMismatch {
                what: "vector length for the commitment key",
                expected: self.len(),
                got: len,
            });
        }
        Ok(())
    }
}

/// A pair `(T, U) ∈ G_T²`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct PairCommitment<E: Pairing> {
    pub t: PairingOutput<E>,
    pub u: PairingOutput<E>,
}

impl<E: Pairing> Add for PairCommitment<E> {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        PairCommitment {
            t: self.t + o.t,
            u: self.u + o.u,
        }
    }
}

impl<E: Pairing> PairCommitment<E> {
    /// `(T^x, U^x)`.
    pub fn scale(&self, x: E::ScalarField) -> Self {
        PairCommitment {
            t: self.t * x,
            u: self.u * x,
        }
    }
}

/// `Π z_i^{c_i}` in `G_T` (a multi-exponentiation: one shared chain of squarings).
pub fn gt_msm<E: Pairing>(z: &[PairingOutput<E>], c: &[E::ScalarField]) -> PairingOutput<E> {
    PairingOutput::<E>::msm_unchecked(z, c)
}

/// `Π cm_i^{c_i}`, componentwise.
pub fn combine<E: Pairing>(cms: &[PairCommitment<E>], c: &[E::ScalarField]) -> PairCommitment<E> {
    let t: Vec<_> = cms.iter().map(|cm| cm.t).collect();
    let u: Vec<_> = cms.iter().map(|cm| cm.u).collect();
    PairCommitment {
        t: gt_msm(&t, c),
        u: gt_msm(&u, c),
    }
}

/// `Π e(a_i, b_i)` over two slices of affine points (the shorter one sets the length).
pub(crate) fn mp<E: Pairing>(a: &[E::G1Affine], b: &[E::G2Affine]) -> PairingOutput<E> {
    E::multi_pairing(a.iter().copied(), b.iter().copied())
}

/// `CM1(A)` under the first `|A|` elements of the key.
pub fn commit_g1<E: Pairing>(
    ck: &CommitmentKey<E>,
    a: &[E::G1Affine],
) -> Result<PairCommitment<E>, Error> {
    ck.fits(a.len())?;
    let n = a.len();
    Ok(PairCommitment {
        t: mp(a, &ck.v1[..n]),
        u: mp(a, &ck.v2[..n]),
    })
}

/// `CM2(B)` under the first `|B|` elements of the key.
pub fn commit_g2<E: Pairing>(
    ck: &CommitmentKey<E>,
    b: &[E::G2Affine],
) -> Result<PairCommitment<E>, Error> {
    ck.fits(b.len())?;
    let n = b.len();
    Ok(PairCommitment {
        t: mp(&ck.w1[..n], b),
        u: mp(&ck.w2[..n], b),
    })
}

/// `CMD(A, B) = CM1(A) · CM2(B)`.
pub fn commit<E: Pairing>(
    ck: &CommitmentKey<E>,
    a: &[E::G1Affine],
    b: &[E::G2Affine],
) -> Result<PairCommitment<E>, Error> {
    Ok(commit_g1(ck, a)? + commit_g2(ck, b)?)
}

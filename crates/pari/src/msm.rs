//! The one place where multi-scalar multiplications happen, so that a GPU backend can replace
//! the CPU one (arkworks' Pippenger) without touching the protocol code.

use ark_ec::CurveGroup;

/// `Σ scalars[i] · bases[i]` over the common prefix of the two slices.
pub fn msm<G: CurveGroup>(bases: &[G::Affine], scalars: &[G::ScalarField]) -> G {
    let n = bases.len().min(scalars.len());
    G::msm_unchecked(&bases[..n], &scalars[..n])
}

/// `Σ scalars[i] · bases[i]` for 128-bit scalars, as two 64-bit MSMs (`lo + 2^64·hi`), which
/// arkworks runs with 64-bit windows instead of full-width ones.
pub fn msm_u128<G: CurveGroup>(bases: &[G::Affine], scalars: &[u128]) -> G {
    let lo: Vec<G::ScalarField> = scalars.iter().map(|s| G::ScalarField::from(*s as u64)).collect();
    let hi: Vec<G::ScalarField> = scalars.iter().map(|s| G::ScalarField::from((*s >> 64) as u64)).collect();
    let shift = G::ScalarField::from(1u128 << 64);
    msm::<G>(bases, &lo) + msm::<G>(bases, &hi) * shift
}

//! MPP (paper §5.2, Fig. 5): one argument for several pairing products at once. For `N`
//! pairs of committed vectors `(X_j, Y_j) ∈ G1^m × G2^m` and a public `r`, it proves
//!
//! `Z_j = X'_j ∗ Y_j = Π_i e(r^i·X_{j,i}, Y_{j,i})` for every `j < N`
//!
//! with one TIPP ([`super::tipp`]). The first pair is committed jointly,
//! `cm_0 = CMD(X_0, Y_0)`; every other pair as two commitments `cm1_j = CM1(X_j)`,
//! `cm2_j = CM2(Y_j)` (in the aggregation, those are fixed at setup or sent by the prover;
//! the commitments are [`super::afgho`]'s). Fig. 5 has `N = 4`: `(A, B)`, `(S, γ)`, `(C, δ)`,
//! `(D, η)`; Hekaton's subcircuits have keys of their own, so [`super::scheme`] adds the
//! fifth pair `(α, β)` and runs it with `N = 5`.
//!
//! # The argument
//!
//! 1. The prover sends the `N² − N` cross products `Z_{jl} = X'_j ∗ Y_l`, `j ≠ l` (`Z_CP`;
//!    the diagonal `Z_jj = Z_j` is the statement, `Z_IP`).
//! 2. Both sides draw `s, t` from the transcript (which holds the commitments, `r`, `Z_IP`
//!    and `Z_CP`) and combine `L = Σ_j s^j·X_j`, `R = Σ_l t^l·Y_l`. Then
//!    `CMD(L, R) = cm_0 · Π_{j≥1} (cm1_j)^{s^j}·(cm2_j)^{t^j}` by homomorphism, and
//!    `Z_LR = L' ∗ R = Π_{j,l} Z_{jl}^{s^j·t^l}`.
//! 3. One TIPP proves `Z_LR = L' ∗ R` against `CMD(L, R)`.
//!
//! A prover that lies about one `Z_j` must send cross products that make `Z_LR` right for
//! the `(s, t)` it does not know yet: the claimed `Z_LR` is a polynomial in `(s, t)` of
//! degree `N − 1` in each, equal to the true one everywhere only if every coefficient is
//! (Schwartz–Zippel: probability `≤ 2(N−1)/|F|` per transcript query).
//!
//! # Proof and cost
//!
//! `N² − N` elements of `G_T` and the TIPP proof (`6·log m` `G_T`, 4 `G1`, 4 `G2` and the 4 KZG
//! openings): `O(log m)`. The verifier does `O(N² + log m)` `G_T` exponentiations and TIPP's
//! constant number of pairings. The prover's products run in `O(N²·m)` pairings in general;
//! vectors that are constant on a partition of the indices ([`Groups`]: in the aggregation,
//! every per-key value `α, β, γ, δ, η` is constant over the subcircuits of one key) are
//! paired one group at a time, so a product with such a vector costs one MSM and one pairing
//! per group.

use ark_ec::pairing::{Pairing, PairingOutput};
use ark_ec::{AffineRepr, CurveGroup};
use ark_ff::{Field, One, Zero};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};

use super::afgho::{self, gt_msm, mp, PairCommitment};
use super::srs::{Srs, VerifierSrs};
use super::tipp::{self, TippProof};
use super::transcript::Transcript;
use crate::Error;

/// The largest `N` this module accepts (the aggregation uses 5): the cross products grow as
/// `N²`, and a statement decoded from outside must not make the verifier allocate at will.
pub const MAX_PRODUCTS: usize = 8;

/// A partition of the indices `0..m` into groups, and which vectors are constant on every
/// group: the prover pairs those one group at a time.
#[derive(Clone, Debug)]
pub struct Groups<'a> {
    /// `group_of[i]`: the group of index `i`, below `num_groups`.
    pub group_of: &'a [u32],
    pub num_groups: usize,
    /// `left_constant[j]`: `X_j` is constant on every group.
    pub left_constant: Vec<bool>,
    /// `right_constant[l]`: `Y_l` is constant on every group.
    pub right_constant: Vec<bool>,
}

/// The statement: the commitments, the claimed products `Z_j` and `r`, for vectors of
/// length `len` (TIPP pads them to a power of two).
#[derive(Clone, Debug)]
pub struct Instance<E: Pairing> {
    /// `CMD(X_0, Y_0)`.
    pub cm_first: PairCommitment<E>,
    /// `CM1(X_j)` for `j = 1..N`.
    pub cm_left: Vec<PairCommitment<E>>,
    /// `CM2(Y_j)` for `j = 1..N`.
    pub cm_right: Vec<PairCommitment<E>>,
    /// `Z_j = X'_j ∗ Y_j` for `j < N`.
    pub z: Vec<PairingOutput<E>>,
    pub r: E::ScalarField,
    pub len: usize,
}

/// An MPP proof: the cross products `Z_{jl}` (`j ≠ l`, row by row) and the TIPP proof for
/// the combined vectors.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct MppProof<E: Pairing> {
    pub cross: Vec<PairingOutput<E>>,
    pub tipp: TippProof<E>,
}

fn powers<F: Field>(x: F, len: usize) -> Vec<F> {
    std::iter::successors(Some(F::one()), |p| Some(*p * x))
        .take(len)
        .collect()
}

fn shape(what: &'static str, expected: usize, got: usize) -> Error {
    Error::ShapeMismatch {
        what,
        expected,
        got,
    }
}

/// `Σ_j c_j·v_j` for vectors of one length.
fn combine<G: CurveGroup>(vectors: &[&[G::Affine]], c: &[G::ScalarField]) -> Vec<G::Affine> {
    let len = vectors[0].len();
    let sums: Vec<G> = (0..len)
        .map(|i| {
            vectors
                .iter()
                .zip(c)
                .map(|(v, cj)| {
                    if cj.is_one() {
                        v[i].into_group()
                    } else {
                        v[i] * cj
                    }
                })
                .sum()
        })
        .collect();
    G::normalize_batch(&sums)
}

/// `Σ_{i ∈ g} c_i·v_i` for every group `g`.
fn group_sums<G: CurveGroup>(
    v: &[G::Affine],
    c: &[G::ScalarField],
    group_of: &[u32],
    num_groups: usize,
    constant: bool,
) -> Vec<G::Affine> {
    let sums: Vec<G> = if constant {
        // One value per group: scale it by the sum of the group's weights.
        let mut weight = vec![G::ScalarField::zero(); num_groups];
        let mut value = vec![G::Affine::zero(); num_groups];
        for (i, g) in group_of.iter().enumerate() {
            weight[*g as usize] += c[i];
            value[*g as usize] = v[i];
        }
        value.iter().zip(&weight).map(|(p, w)| *p * w).collect()
    } else {
        let mut points = vec![Vec::new(); num_groups];
        let mut scalars = vec![Vec::new(); num_groups];
        for (i, g) in group_of.iter().enumerate() {
            points[*g as usize].push(v[i]);
            scalars[*g as usize].push(c[i]);
        }
        points
            .iter()
            .zip(&scalars)
            .map(|(p, s)| G::msm_unchecked(p, s))
            .collect()
    };
    G::normalize_batch(&sums)
}

/// Every product `Z_{jl} = Π_i e(r^i·X_{j,i}, Y_{l,i})`, `N × N`.
fn all_products<E: Pairing>(
    left: &[&[E::G1Affine]],
    right: &[&[E::G2Affine]],
    rp: &[E::ScalarField],
    groups: Option<&Groups<'_>>,
) -> Vec<Vec<PairingOutput<E>>> {
    let n = left.len();
    let mut z = vec![vec![PairingOutput::<E>::zero(); n]; n];
    // Per-group weighted sums of every vector, where some vector is grouped.
    type Sums<A> = Vec<Vec<A>>;
    let (left_sums, right_sums): (Sums<E::G1Affine>, Sums<E::G2Affine>) = match groups {
        Some(g) => (
            left.iter()
                .enumerate()
                .map(|(j, x)| {
                    group_sums::<E::G1>(x, rp, g.group_of, g.num_groups, g.left_constant[j])
                })
                .collect(),
            right
                .iter()
                .enumerate()
                .map(|(l, y)| {
                    group_sums::<E::G2>(y, rp, g.group_of, g.num_groups, g.right_constant[l])
                })
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    let rep = |v: &[E::G2Affine], g: &Groups<'_>| -> Vec<E::G2Affine> {
        let mut out = vec![E::G2Affine::zero(); g.num_groups];
        for (i, gi) in g.group_of.iter().enumerate() {
            out[*gi as usize] = v[i];
        }
        out
    };
    let rep1 = |v: &[E::G1Affine], g: &Groups<'_>| -> Vec<E::G1Affine> {
        let mut out = vec![E::G1Affine::zero(); g.num_groups];
        for (i, gi) in g.group_of.iter().enumerate() {
            out[*gi as usize] = v[i];
        }
        out
    };
    let mut scaled: Vec<Option<Vec<E::G1Affine>>> = vec![None; n];
    for l in 0..n {
        for j in 0..n {
            z[j][l] = match groups {
                Some(g) if g.right_constant[l] => mp::<E>(&left_sums[j], &rep(right[l], g)),
                Some(g) if g.left_constant[j] => mp::<E>(&rep1(left[j], g), &right_sums[l]),
                _ => {
                    let xs = scaled[j].get_or_insert_with(|| {
                        let v: Vec<E::G1> = left[j].iter().zip(rp).map(|(p, s)| *p * s).collect();
                        E::G1::normalize_batch(&v)
                    });
                    mp::<E>(xs, right[l])
                }
            };
        }
    }
    z
}

/// Powers `(1, x, x², …)` of a challenge.
type Powers<E> = Vec<<E as Pairing>::ScalarField>;

/// `(s^j)_j, (t^l)_l` from the transcript after `Z_IP` and `Z_CP`.
fn combiners<E: Pairing>(
    transcript: &mut Transcript,
    z: &[PairingOutput<E>],
    cross: &[PairingOutput<E>],
) -> Result<(Powers<E>, Powers<E>), Error> {
    let n = z.len();
    transcript.append(&(n as u64))?;
    for zj in z {
        transcript.append(zj)?;
    }
    for c in cross {
        transcript.append(c)?;
    }
    let s: E::ScalarField = transcript.challenge();
    let t: E::ScalarField = transcript.challenge();
    Ok((powers(s, n), powers(t, n)))
}

/// `Π_{j,l} Z_{jl}^{s^j·t^l}` from the diagonal and the cross products (row by row).
fn combined_product<E: Pairing>(
    z: &[PairingOutput<E>],
    cross: &[PairingOutput<E>],
    sp: &[E::ScalarField],
    tp: &[E::ScalarField],
) -> PairingOutput<E> {
    let n = z.len();
    let mut bases = Vec::with_capacity(n * n);
    let mut scalars = Vec::with_capacity(n * n);
    let mut next = cross.iter();
    for (j, (zj, sj)) in z.iter().zip(sp).enumerate() {
        for (l, tl) in tp.iter().enumerate() {
            bases.push(if j == l {
                *zj
            } else {
                *next
                    .next()
                    .expect("N² − N cross products, checked by the caller")
            });
            scalars.push(*sj * tl);
        }
    }
    gt_msm(&bases, &scalars)
}

/// Proves the products of `left[j]` and `right[j]` weighted by the powers of `r`; returns the
/// products `Z_j` and the proof. The caller has absorbed the commitments and `r` into
/// `transcript`. All vectors have one length; `groups`, if given, must describe the vectors
/// truly (it is checked).
pub fn prove<E: Pairing>(
    srs: &Srs<E>,
    transcript: &mut Transcript,
    left: &[&[E::G1Affine]],
    right: &[&[E::G2Affine]],
    r: E::ScalarField,
    groups: Option<&Groups<'_>>,
) -> Result<(Vec<PairingOutput<E>>, MppProof<E>), Error> {
    let n = left.len();
    if n == 0 || n > MAX_PRODUCTS {
        return Err(shape("MPP products", MAX_PRODUCTS, n));
    }
    if right.len() != n {
        return Err(shape("MPP right-hand vectors", n, right.len()));
    }
    let len = left[0].len();
    for v in left
        .iter()
        .map(|v| v.len())
        .chain(right.iter().map(|v| v.len()))
    {
        if v != len {
            return Err(shape("MPP vector length", len, v));
        }
    }
    if let Some(g) = groups {
        check_groups::<E>(g, left, right)?;
    }
    let rp = powers(r, len);
    let all = all_products::<E>(left, right, &rp, groups);
    let z: Vec<_> = (0..n).map(|j| all[j][j]).collect();
    let cross: Vec<_> = (0..n)
        .flat_map(|j| (0..n).filter(move |l| *l != j).map(move |l| (j, l)))
        .map(|(j, l)| all[j][l])
        .collect();
    let (sp, tp) = combiners::<E>(transcript, &z, &cross)?;
    let l_vec = combine::<E::G1>(left, &sp);
    let r_vec = combine::<E::G2>(right, &tp);
    let (z_lr, tipp) = tipp::prove(srs, transcript, &l_vec, &r_vec, r)?;
    debug_assert_eq!(z_lr, combined_product(&z, &cross, &sp, &tp));
    Ok((z, MppProof { cross, tipp }))
}

fn check_groups<E: Pairing>(
    g: &Groups<'_>,
    left: &[&[E::G1Affine]],
    right: &[&[E::G2Affine]],
) -> Result<(), Error> {
    let bad = |reason: String| Err(Error::malformed("MPP groups", reason));
    let len = left[0].len();
    if g.group_of.len() != len
        || g.left_constant.len() != left.len()
        || g.right_constant.len() != right.len()
    {
        return bad("lengths differ from the vectors'".into());
    }
    if g.group_of.iter().any(|x| *x as usize >= g.num_groups) {
        return bad("a group index is out of range".into());
    }
    let mut first: Vec<Option<usize>> = vec![None; g.num_groups];
    for (i, gi) in g.group_of.iter().enumerate() {
        let f = *first[*gi as usize].get_or_insert(i);
        for (j, x) in left.iter().enumerate() {
            if g.left_constant[j] && x[i] != x[f] {
                return bad(format!("left vector {j} is not constant on group {gi}"));
            }
        }
        for (l, y) in right.iter().enumerate() {
            if g.right_constant[l] && y[i] != y[f] {
                return bad(format!("right vector {l} is not constant on group {gi}"));
            }
        }
    }
    Ok(())
}

/// Checks an MPP proof for `instance`; `transcript` must have absorbed what the prover's had.
pub fn verify<E: Pairing>(
    srs: &VerifierSrs<E>,
    transcript: &mut Transcript,
    instance: &Instance<E>,
    proof: &MppProof<E>,
) -> Result<(), Error> {
    let n = instance.z.len();
    if n == 0 || n > MAX_PRODUCTS {
        return Err(shape("MPP products", MAX_PRODUCTS, n));
    }
    if instance.cm_left.len() + 1 != n || instance.cm_right.len() + 1 != n {
        return Err(shape(
            "MPP commitments",
            n - 1,
            instance.cm_left.len().min(instance.cm_right.len()),
        ));
    }
    if proof.cross.len() != n * n - n {
        return Err(Error::VerificationFailed);
    }
    let (sp, tp) = combiners::<E>(transcript, &instance.z, &proof.cross)?;
    let mut cms = vec![instance.cm_first];
    cms.extend_from_slice(&instance.cm_left);
    cms.extend_from_slice(&instance.cm_right);
    let mut c = sp.clone();
    c.extend_from_slice(&tp[1..]);
    let cm = afgho::combine(&cms, &c);
    let z_lr = combined_product(&instance.z, &proof.cross, &sp, &tp);
    tipp::verify(
        srs,
        transcript,
        &cm,
        &z_lr,
        instance.r,
        instance.len,
        &proof.tipp,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::aggregate::afgho::{commit, commit_g1, commit_g2};
    use ark_bls12_381::{Bls12_381 as E, Fr, G1Projective, G2Projective};
    use ark_ff::UniformRand;
    use ark_std::ops::Add;
    use rand::SeedableRng;
    use rand_chacha::ChaCha20Rng;

    type G1A = <E as Pairing>::G1Affine;
    type G2A = <E as Pairing>::G2Affine;

    struct Case {
        left: Vec<Vec<G1A>>,
        right: Vec<Vec<G2A>>,
        group_of: Vec<u32>,
    }

    /// Three pairs; `left[1]`, `right[1]` and `right[2]` constant on two groups.
    fn case(len: usize, rng: &mut ChaCha20Rng) -> Case {
        let group_of: Vec<u32> = (0..len).map(|i| (i % 3 == 0) as u32).collect();
        let g1 = |rng: &mut ChaCha20Rng| G1Projective::rand(rng).into_affine();
        let g2 = |rng: &mut ChaCha20Rng| G2Projective::rand(rng).into_affine();
        let c1 = [g1(rng), g1(rng)];
        let c2 = [g2(rng), g2(rng)];
        let c3 = [g2(rng), g2(rng)];
        Case {
            left: vec![
                (0..len).map(|_| g1(rng)).collect(),
                group_of.iter().map(|g| c1[*g as usize]).collect(),
                (0..len).map(|_| g1(rng)).collect(),
            ],
            right: vec![
                (0..len).map(|_| g2(rng)).collect(),
                group_of.iter().map(|g| c2[*g as usize]).collect(),
                group_of.iter().map(|g| c3[*g as usize]).collect(),
            ],
            group_of,
        }
    }

    fn instance(srs: &Srs<E>, c: &Case, z: Vec<PairingOutput<E>>, r: Fr) -> Instance<E> {
        let ck = srs.commitment_key(c.left[0].len()).unwrap();
        Instance {
            cm_first: commit(&ck, &c.left[0], &c.right[0]).unwrap(),
            cm_left: c.left[1..]
                .iter()
                .map(|v| commit_g1(&ck, v).unwrap())
                .collect(),
            cm_right: c.right[1..]
                .iter()
                .map(|v| commit_g2(&ck, v).unwrap())
                .collect(),
            z,
            r,
            len: c.left[0].len(),
        }
    }

    fn run(srs: &Srs<E>, c: &Case, r: Fr, grouped: bool) -> (Vec<PairingOutput<E>>, MppProof<E>) {
        let left: Vec<&[G1A]> = c.left.iter().map(|v| v.as_slice()).collect();
        let right: Vec<&[G2A]> = c.right.iter().map(|v| v.as_slice()).collect();
        let g = Groups {
            group_of: &c.group_of,
            num_groups: 2,
            left_constant: vec![false, true, false],
            right_constant: vec![false, true, true],
        };
        let mut t = Transcript::new(b"mpp test");
        prove(srs, &mut t, &left, &right, r, grouped.then_some(&g)).unwrap()
    }

    fn check(srs: &Srs<E>, inst: &Instance<E>, p: &MppProof<E>) -> Result<(), Error> {
        let mut t = Transcript::new(b"mpp test");
        verify(&srs.verifier_srs().unwrap(), &mut t, inst, p)
    }

    #[test]
    fn mpp_completeness_and_soundness_checks() {
        let mut rng = ChaCha20Rng::seed_from_u64(3);
        let srs = Srs::<E>::setup(8, &mut rng);
        for len in [1, 3, 8] {
            let c = case(len, &mut rng);
            let r = Fr::rand(&mut rng);
            let (z, proof) = run(&srs, &c, r, true);
            // Grouped and plain products agree, and each is the weighted product.
            let (z_plain, _) = run(&srs, &c, r, false);
            assert_eq!(z, z_plain);
            let rp = powers(r, len);
            for (j, zj) in z.iter().enumerate() {
                let want = E::multi_pairing(
                    c.left[j]
                        .iter()
                        .zip(&rp)
                        .map(|(p, s)| (*p * s).into_affine()),
                    &c.right[j],
                );
                assert_eq!(*zj, want);
            }
            let inst = instance(&srs, &c, z.clone(), r);
            check(&srs, &inst, &proof).unwrap();

            // A wrong claimed product, whichever.
            for j in 0..3 {
                let mut bad = inst.clone();
                bad.z[j] = bad.z[j].add(z[0]);
                assert!(check(&srs, &bad, &proof).is_err(), "Z_{j}");
            }
            // A wrong cross product, a missing one, a wrong commitment, another r.
            let mut bad = proof.clone();
            bad.cross[1] += z[0];
            assert!(check(&srs, &inst, &bad).is_err());
            let mut bad = proof.clone();
            bad.cross.pop();
            assert!(check(&srs, &inst, &bad).is_err());
            let mut bad = inst.clone();
            bad.cm_right[1] = bad.cm_right[0];
            assert!(check(&srs, &bad, &proof).is_err());
            if len > 1 {
                // (With one element, r^0 = 1 is all that r contributes.)
                let mut bad = inst.clone();
                bad.r += Fr::one();
                assert!(check(&srs, &bad, &proof).is_err());
            }
        }
        // Groups that do not describe the vectors are refused.
        let c = case(4, &mut rng);
        let left: Vec<&[G1A]> = c.left.iter().map(|v| v.as_slice()).collect();
        let right: Vec<&[G2A]> = c.right.iter().map(|v| v.as_slice()).collect();
        let g = Groups {
            group_of: &c.group_of,
            num_groups: 2,
            left_constant: vec![true, true, false],
            right_constant: vec![false, true, true],
        };
        let mut t = Transcript::new(b"mpp test");
        assert!(prove(&srs, &mut t, &left, &right, Fr::one(), Some(&g)).is_err());
    }
}

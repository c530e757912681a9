//! The aggregation scheme for Mirage (paper §5.3, Fig. 6): `Agg.G` ([`setup`]), `Agg.C`
//! ([`commit`]), `Agg.P` ([`prove`]) and `Agg.V` ([`verify`]).
//!
//! # Statement
//!
//! `k` subcircuits, subcircuit `i` with its own Mirage verifying key
//! `(α_i, β_i, γ_i, δ_i, η_i, S_{i,0..u})` whose instance is the homogenised
//! `(1, x_1, …, x_u)`, **the same `x` for every subcircuit** (in Hekaton `x = (rt, α, β)`,
//! §5: everything that differs between subcircuits is folded into their keys at setup, paper
//! §6.3). Given the aggregate commitment `cm_D = CM1(D)` to the commitments `D_i`, a proof
//! shows that the prover knows `(A_i, B_i, C_i)` for every `i` with
//!
//! `e(A_i, B_i) = e(α_i, β_i) · e(S_i, γ_i) · e(C_i, δ_i) · e(D_i, η_i)`,
//! `S_i = S_{i,0} + Σ_j x_j·S_{i,j}`,
//!
//! i.e. that every `(D_i, π_i)` verifies under subcircuit `i`'s key, in that order.
//!
//! # The protocol
//!
//! * [`setup`] (`Agg.G`): from the aggregation SRS and the `k` keys, commits the vectors
//!   `α = (α_i)`, `S_j = (S_{i,j})_i` (`CM1`) and `β, γ, δ, η` (`CM2`) and keeps the
//!   commitments in the [`VerifyingKey`] (`O(1)` size), the vectors in the [`ProvingKey`].
//! * [`commit`] (`Agg.C`): `cm_D = CM1(D)`.
//! * [`prove`] (`Agg.P`): sends `cm_AB = CMD(A, B)` and `cm_C = CM1(C)`; draws `r` from the
//!   transcript of the key, `x`, `cm_D`, `cm_AB` and `cm_C`; sends the five products
//!   `Z_AB = A' ∗ B`, `Z_αβ = α' ∗ β`, `Z_Sγ = S' ∗ γ`, `Z_Cδ = C' ∗ δ`, `Z_Dη = D' ∗ η`
//!   (`X' = (r^i·X_i)_i`, `S = S_0 + Σ_j x_j·S_j`) and one [`super::mpp`] proof of all five.
//! * [`verify`] (`Agg.V`): computes `cm_S = cm_{S_0} · Π_j cm_{S_j}^{x_j}` from the key, redraws
//!   `r`, checks the MPP proof and the batched Mirage equation
//!   `Z_AB = Z_αβ · Z_Sγ · Z_Cδ · Z_Dη`.
//!
//! Fig. 6 assumes one `e(α, β)` for all subcircuits (so `Z_αβ = e(α, β)^{Σ r^i}`); here every
//! distinct subcircuit key has its own `α, β`, so `(α, β)` is a fifth committed pair of the
//! MPP (`5² − 5 = 20` cross products where the paper has 12).
//!
//! Soundness: the batched equation holds for a random `r` drawn after `A, B, C, D` (and `x`)
//! are fixed by their commitments only if every per-subcircuit equation holds (a nonzero
//! polynomial of degree `< m` in `r`, `m` the padded length below, vanishes with probability
//! `< m/|F|`), and MPP shows the five products are those of the committed vectors.
//! Reordering, dropping, duplicating or replacing a proof, or using another key, changes a
//! committed vector, and so a product.
//! Padding (`k` up to a power of two `m`) gives a cheating prover no room: the key's vectors
//! are zero at `k ≤ i < m`, and whatever it commits at those positions in `A, B, C, D` enters
//! the batched equation with the powers `r^i`, `i ≥ k`, which cannot cancel an error at a
//! power below `k`.
//!
//! Nothing here hides (Agg need not, §5): the proof is a deterministic function of the `k`
//! Mirage proofs and commitments and public values, so it reveals nothing they do not.

use ark_ec::pairing::{Pairing, PairingOutput};
use ark_ec::{CurveGroup, VariableBaseMSM};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress};
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};

use super::afgho::{combine, commit as commit_d, commit_g1, commit_g2, PairCommitment};
use super::mpp::{self, Groups, MppProof};
use super::srs::{Srs, VerifierSrs};
use super::transcript::Transcript;
use crate::mirage::{self, Commitment, Proof};
use crate::{Check, Error};

/// The version of the key and proof encodings; a value with another version is refused.
pub const VERSION: u32 = 1;

/// The largest number of public inputs `u` a key may take (Hekaton's is 3).
pub const MAX_PUBLIC_INPUTS: usize = 64;

/// The per-key values of Mirage keys shared by several subcircuits: `α, β, γ, δ, η`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct KeyValues<E: Pairing> {
    pub alpha_g1: E::G1Affine,
    pub beta_g2: E::G2Affine,
    pub gamma_g2: E::G2Affine,
    pub delta_g2: E::G2Affine,
    pub eta_g2: E::G2Affine,
}

/// The aggregate verifying key: `O(1)` in `k`.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifyingKey<E: Pairing> {
    /// [`VERSION`].
    pub version: u32,
    pub srs: VerifierSrs<E>,
    /// `k`: the number of proofs aggregated.
    pub num_proofs: u64,
    /// `u`: public inputs per subcircuit, the constant 1 not counted.
    pub num_public_inputs: u64,
    /// What the keys belong to (in Hekaton the [`crate::workflow::VerifyingKey::digest`]):
    /// absorbed into every transcript, so a proof is for one statement only.
    pub statement_digest: [u8; 32],
    /// `CM1(α)`, `CM2(β)`.
    pub cm_alpha: PairCommitment<E>,
    pub cm_beta: PairCommitment<E>,
    /// `CM1(S_j)` for `j = 0..=u`.
    pub cm_s: Vec<PairCommitment<E>>,
    /// `CM2(γ)`, `CM2(δ)`, `CM2(η)`.
    pub cm_gamma: PairCommitment<E>,
    pub cm_delta: PairCommitment<E>,
    pub cm_eta: PairCommitment<E>,
}

/// The aggregate proving key: the SRS, the vectors committed in the verifying key (the
/// per-key values once per distinct key, `key_of[i]` naming subcircuit `i`'s) and the
/// verifying key.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProvingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub srs: Srs<E>,
    pub key_of: Vec<u32>,
    pub keys: Vec<KeyValues<E>>,
    /// `S_j = (S_{i,j})_i` for `j = 0..=u`.
    pub s: Vec<Vec<E::G1Affine>>,
}

/// `cm_D = CM1(D)`, the aggregate commitment (Agg.C).
#[derive(Clone, Copy, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct AggCommitment<E: Pairing> {
    pub cm_d: PairCommitment<E>,
}

/// An aggregate proof: `O(log k)` group elements.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct AggregateProof<E: Pairing> {
    /// [`VERSION`].
    pub version: u32,
    /// `CMD(A, B)`, `CM1(C)`.
    pub cm_ab: PairCommitment<E>,
    pub cm_c: PairCommitment<E>,
    /// `Z_AB, Z_αβ, Z_Sγ, Z_Cδ, Z_Dη`.
    pub z_ab: PairingOutput<E>,
    pub z_alpha_beta: PairingOutput<E>,
    pub z_s_gamma: PairingOutput<E>,
    pub z_c_delta: PairingOutput<E>,
    pub z_d_eta: PairingOutput<E>,
    pub mpp: MppProof<E>,
}

fn bad_version(what: &'static str, v: u32) -> Result<(), Error> {
    if v != VERSION {
        return Err(Error::malformed(
            what,
            format!("version {v}, this build reads {VERSION}"),
        ));
    }
    Ok(())
}

impl<E: Pairing> Check for VerifyingKey<E> {
    /// The version, the SRS, `1 ≤ k ≤ n`, `u ≤` [`MAX_PUBLIC_INPUTS`] and `u + 1` input bases.
    fn check(&self) -> Result<(), Error> {
        bad_version("aggregate verifying key", self.version)?;
        self.srs.check()?;
        let k = self.num_proofs;
        if k == 0 || k > self.srs.n {
            return Err(Error::malformed(
                "aggregate verifying key",
                format!("{k} proofs for an SRS of {}", self.srs.n),
            ));
        }
        if self.num_public_inputs > MAX_PUBLIC_INPUTS as u64
            || self.cm_s.len() as u64 != self.num_public_inputs + 1
        {
            return Err(Error::malformed(
                "aggregate verifying key",
                format!(
                    "{} input commitments for {} public inputs",
                    self.cm_s.len(),
                    self.num_public_inputs
                ),
            ));
        }
        Ok(())
    }
}

impl<E: Pairing> Check for ProvingKey<E> {
    /// The verifying key's checks, the SRS's (it is the one the verifying key names) and the
    /// vector lengths.
    fn check(&self) -> Result<(), Error> {
        self.vk.check()?;
        if self.srs.verifier_srs()? != self.vk.srs {
            return Err(Error::malformed(
                "aggregate proving key",
                "the SRS is not the verifying key's",
            ));
        }
        let k = self.vk.num_proofs as usize;
        let bad = self.key_of.len() != k
            || self.key_of.iter().any(|j| *j as usize >= self.keys.len())
            || self.s.len() != self.vk.cm_s.len()
            || self.s.iter().any(|v| v.len() != k);
        if bad {
            return Err(Error::malformed(
                "aggregate proving key",
                "vector lengths or key indices",
            ));
        }
        Ok(())
    }
}

impl<E: Pairing> Check for AggCommitment<E> {
    fn check(&self) -> Result<(), Error> {
        Ok(())
    }
}

impl<E: Pairing> Check for AggregateProof<E> {
    /// The version and the number of cross products; [`verify`] checks the rest against the key.
    fn check(&self) -> Result<(), Error> {
        bad_version("aggregate proof", self.version)?;
        if self.mpp.cross.len() != PRODUCTS * PRODUCTS - PRODUCTS || self.mpp.tipp.rounds.len() > 40
        {
            return Err(Error::malformed(
                "aggregate proof",
                format!(
                    "{} cross products, {} TIPP rounds",
                    self.mpp.cross.len(),
                    self.mpp.tipp.rounds.len()
                ),
            ));
        }
        Ok(())
    }
}

/// The five products of the batched Mirage check.
const PRODUCTS: usize = 5;

impl<E: Pairing> VerifyingKey<E> {
    /// BLAKE2b-256 of `"hekaton/aggregate-vk/v1"` and the key's compressed encoding.
    pub fn digest(&self) -> Result<[u8; 32], Error> {
        let mut h = Blake2b::<U32>::new();
        h.update(b"hekaton/aggregate-vk/v1");
        h.update(mirage::to_bytes(self)?);
        Ok(h.finalize().into())
    }

    /// Checks the key against the digest a verifier pinned (printed and parsed as hex through
    /// [`crate::workflow::VkDigest`], like the Hekaton key's).
    pub fn check_digest(&self, expected: &crate::workflow::VkDigest) -> Result<(), Error> {
        let got = crate::workflow::VkDigest(self.digest()?);
        if got != *expected {
            return Err(Error::DigestMismatch {
                expected: expected.to_string(),
                got: got.to_string(),
            });
        }
        Ok(())
    }
}

/// Agg.G: the aggregation keys for `keys` (subcircuit `i`'s Mirage verifying key, each with
/// the same number `u` of public inputs and nothing else folded in), under `srs` (sized to at
/// least `k`; one SRS serves every `k ≤ n`). `statement_digest` names what the keys belong to.
pub fn setup<E: Pairing>(
    srs: &Srs<E>,
    keys: &[mirage::VerifyingKey<E>],
    statement_digest: [u8; 32],
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error> {
    srs.check()?;
    let k = keys.len();
    if k == 0 {
        return Err(Error::EmptyBatch);
    }
    let ck = srs.commitment_key(k)?;
    let ic_len = keys[0].ic_query.len();
    if ic_len == 0 || ic_len > MAX_PUBLIC_INPUTS + 1 {
        return Err(Error::MalformedKey("IC query length"));
    }
    let mut key_of = Vec::with_capacity(k);
    let mut distinct: Vec<KeyValues<E>> = Vec::new();
    let mut index = std::collections::HashMap::<Vec<u8>, u32>::new();
    for vk in keys {
        vk.check()?;
        if vk.ic_query.len() != ic_len {
            return Err(Error::ShapeMismatch {
                what: "public inputs of subcircuit key",
                expected: ic_len - 1,
                got: vk.num_public_inputs(),
            });
        }
        let values = KeyValues {
            alpha_g1: vk.alpha_g1,
            beta_g2: vk.beta_g2,
            gamma_g2: vk.gamma_g2,
            delta_g2: vk.delta_g2,
            eta_g2: vk.eta_g2,
        };
        let j = *index.entry(mirage::to_bytes(&values)?).or_insert_with(|| {
            distinct.push(values);
            distinct.len() as u32 - 1
        });
        key_of.push(j);
    }
    let s: Vec<Vec<E::G1Affine>> = (0..ic_len)
        .map(|j| keys.iter().map(|vk| vk.ic_query[j]).collect())
        .collect();
    let expand1 = |f: fn(&KeyValues<E>) -> E::G1Affine| -> Vec<E::G1Affine> {
        key_of.iter().map(|j| f(&distinct[*j as usize])).collect()
    };
    let expand2 = |f: fn(&KeyValues<E>) -> E::G2Affine| -> Vec<E::G2Affine> {
        key_of.iter().map(|j| f(&distinct[*j as usize])).collect()
    };
    let vk = VerifyingKey {
        version: VERSION,
        srs: srs.verifier_srs()?,
        num_proofs: k as u64,
        num_public_inputs: ic_len as u64 - 1,
        statement_digest,
        cm_alpha: commit_g1(&ck, &expand1(|v| v.alpha_g1))?,
        cm_beta: commit_g2(&ck, &expand2(|v| v.beta_g2))?,
        cm_s: s
            .iter()
            .map(|v| commit_g1(&ck, v))
            .collect::<Result<_, _>>()?,
        cm_gamma: commit_g2(&ck, &expand2(|v| v.gamma_g2))?,
        cm_delta: commit_g2(&ck, &expand2(|v| v.delta_g2))?,
        cm_eta: commit_g2(&ck, &expand2(|v| v.eta_g2))?,
    };
    let pk = ProvingKey {
        vk: vk.clone(),
        srs: srs.clone(),
        key_of,
        keys: distinct,
        s,
    };
    Ok((pk, vk))
}

/// Checks that `pk` (and the verifying key in it) is what [`setup`] makes from its own SRS,
/// `keys` and `statement_digest`: for a prover or verifier that did not run the setup and
/// holds the Mirage keys. Costs a setup (`O(k)` pairings). The SRS itself is taken as is.
pub fn check_keys<E: Pairing>(
    pk: &ProvingKey<E>,
    keys: &[mirage::VerifyingKey<E>],
    statement_digest: [u8; 32],
) -> Result<(), Error> {
    pk.check()?;
    if setup(&pk.srs, keys, statement_digest)?.0 != *pk {
        return Err(Error::CircuitMismatch(
            "the aggregate keys are not the ones these Mirage keys give".into(),
        ));
    }
    Ok(())
}

/// Agg.C: `cm_D = CM1(D)` for the `k` commitments, in subcircuit order.
pub fn commit<E: Pairing>(
    pk: &ProvingKey<E>,
    commitments: &[Commitment<E>],
) -> Result<AggCommitment<E>, Error> {
    let k = pk.vk.num_proofs as usize;
    if commitments.len() != k {
        return Err(Error::ShapeMismatch {
            what: "commitments to aggregate",
            expected: k,
            got: commitments.len(),
        });
    }
    let ck = pk.srs.commitment_key(k)?;
    let d: Vec<E::G1Affine> = commitments.iter().map(|c| c.d).collect();
    Ok(AggCommitment {
        cm_d: commit_g1(&ck, &d)?,
    })
}

/// The homogenised public input `(1, x_1, …, x_u)`, checked against the key.
fn homogenised<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
) -> Result<Vec<E::ScalarField>, Error> {
    if public_inputs.len() as u64 != vk.num_public_inputs {
        return Err(Error::PublicInputLength {
            expected: vk.num_public_inputs as usize,
            got: public_inputs.len(),
        });
    }
    let mut x = vec![E::ScalarField::from(1u64)];
    x.extend_from_slice(public_inputs);
    Ok(x)
}

/// The transcript up to `r`: the key's digest, the public input, `cm_D`, `cm_AB`, `cm_C`.
fn transcript_to_r<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    cm_d: &AggCommitment<E>,
    cm_ab: &PairCommitment<E>,
    cm_c: &PairCommitment<E>,
) -> Result<(Transcript, E::ScalarField), Error> {
    let mut t = Transcript::new(b"hekaton/aggregate/mirage");
    t.append(&vk.digest()?)?;
    t.append(&public_inputs.to_vec())?;
    t.append(cm_d)?;
    t.append(cm_ab)?;
    t.append(cm_c)?;
    let r: E::ScalarField = t.challenge();
    t.append(&r)?;
    Ok((t, r))
}

/// Agg.P: aggregates the `k` Mirage proofs and commitments (subcircuit order) for public
/// input `x = (x_1, …, x_u)` into one proof. It does not check the proofs: invalid ones give
/// a proof that [`verify`] refuses.
pub fn prove<E: Pairing>(
    pk: &ProvingKey<E>,
    public_inputs: &[E::ScalarField],
    commitments: &[Commitment<E>],
    proofs: &[Proof<E>],
    cm_d: &AggCommitment<E>,
) -> Result<AggregateProof<E>, Error> {
    pk.check()?;
    let vk = &pk.vk;
    let k = vk.num_proofs as usize;
    for (what, got) in [
        ("commitments to aggregate", commitments.len()),
        ("proofs to aggregate", proofs.len()),
    ] {
        if got != k {
            return Err(Error::ShapeMismatch {
                what,
                expected: k,
                got,
            });
        }
    }
    let x = homogenised(vk, public_inputs)?;
    let ck = pk.srs.commitment_key(k)?;
    let a: Vec<E::G1Affine> = proofs.iter().map(|p| p.a).collect();
    let b: Vec<E::G2Affine> = proofs.iter().map(|p| p.b).collect();
    let c: Vec<E::G1Affine> = proofs.iter().map(|p| p.c).collect();
    let d: Vec<E::G1Affine> = commitments.iter().map(|c| c.d).collect();
    let cm_ab = commit_d(&ck, &a, &b)?;
    let cm_c = commit_g1(&ck, &c)?;
    let (mut t, r) = transcript_to_r(vk, public_inputs, cm_d, &cm_ab, &cm_c)?;

    // S = S_0 + Σ_j x_j·S_j, and the per-key vectors expanded to one entry per subcircuit.
    let s: Vec<E::G1Affine> = {
        let v: Vec<E::G1> = (0..k)
            .map(|i| {
                let bases: Vec<E::G1Affine> = pk.s.iter().map(|sj| sj[i]).collect();
                E::G1::msm_unchecked(&bases, &x)
            })
            .collect();
        E::G1::normalize_batch(&v)
    };
    let per = |f: &dyn Fn(&KeyValues<E>) -> E::G2Affine| -> Vec<E::G2Affine> {
        pk.key_of.iter().map(|j| f(&pk.keys[*j as usize])).collect()
    };
    let alpha: Vec<E::G1Affine> = pk
        .key_of
        .iter()
        .map(|j| pk.keys[*j as usize].alpha_g1)
        .collect();
    let (beta, gamma, delta, eta) = (
        per(&|v| v.beta_g2),
        per(&|v| v.gamma_g2),
        per(&|v| v.delta_g2),
        per(&|v| v.eta_g2),
    );
    let groups = Groups {
        group_of: &pk.key_of,
        num_groups: pk.keys.len(),
        left_constant: vec![false, true, false, false, false],
        right_constant: vec![false, true, true, true, true],
    };
    let left: [&[E::G1Affine]; PRODUCTS] = [&a, &alpha, &s, &c, &d];
    let right: [&[E::G2Affine]; PRODUCTS] = [&b, &beta, &gamma, &delta, &eta];
    let (z, mpp) = mpp::prove(&pk.srs, &mut t, &left, &right, r, Some(&groups))?;
    Ok(AggregateProof {
        version: VERSION,
        cm_ab,
        cm_c,
        z_ab: z[0],
        z_alpha_beta: z[1],
        z_s_gamma: z[2],
        z_c_delta: z[3],
        z_d_eta: z[4],
        mpp,
    })
}

/// Agg.V: accepts iff `proof` shows that the `k` proofs committed in it and the commitments
/// in `cm_d` verify, in order, under the `k` keys of `vk` with public input `x`. `O(log k)`
/// `G_T` operations and a constant number of pairings (TIPP's 11 Miller loops in two
/// multi-pairings plus three single pairings).
pub fn verify<E: Pairing>(
    vk: &VerifyingKey<E>,
    public_inputs: &[E::ScalarField],
    cm_d: &AggCommitment<E>,
    proof: &AggregateProof<E>,
) -> Result<(), Error> {
    vk.check()?;
    proof.check()?;
    let x = homogenised(vk, public_inputs)?;
    // The batched Mirage equation.
    if proof.z_ab != proof.z_alpha_beta + proof.z_s_gamma + proof.z_c_delta + proof.z_d_eta {
        return Err(Error::VerificationFailed);
    }
    let cm_s = combine(&vk.cm_s, &x);
    let (mut t, r) = transcript_to_r(vk, public_inputs, cm_d, &proof.cm_ab, &proof.cm_c)?;
    let instance = mpp::Instance {
        cm_first: proof.cm_ab,
        cm_left: vec![vk.cm_alpha, cm_s, proof.cm_c, cm_d.cm_d],
        cm_right: vec![vk.cm_beta, vk.cm_gamma, vk.cm_delta, vk.cm_eta],
        z: vec![
            proof.z_ab,
            proof.z_alpha_beta,
            proof.z_s_gamma,
            proof.z_c_delta,
            proof.z_d_eta,
        ],
        r,
        len: vk.num_proofs as usize,
    };
    mpp::verify(&vk.srs, &mut t, &instance, &proof.mpp)
}

impl<E: Pairing> AggregateProof<E> {
    /// The compressed size in bytes.
    pub fn size(&self) -> usize {
        self.serialized_size(Compress::Yes)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }
}

impl<E: Pairing> VerifyingKey<E> {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }
}

impl<E: Pairing> ProvingKey<E> {
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        mirage::from_bytes(bytes)
    }
}

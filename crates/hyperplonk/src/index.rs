//! The per-circuit index (HyperPlonk's preprocessing): the prover's and verifier's keys for
//! one circuit under the universal [`Srs`].
//!
//! The index commits with PST to the eight preprocessed MLEs, in the crate's order
//! `q_L, q_R, q_M, q_O, q_C, σ_1, σ_2, σ_3` ([`crate::proof::polys`]). The [`VerifyingKey`] holds
//! those commitments, `μ`, `ℓ`, the circuit's digest and the trimmed PST verifier key; its
//! own digest ([`VerifyingKey::digest`]) is the first thing the transcript absorbs, so a
//! proof is bound to one circuit, one index and one setup.

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use blake2::{Blake2s256, Digest};
use testudo::pst::{PstCommitment, PstCommitterKey, PstVerifierKey};

use crate::circuit::{Circuit, CircuitDigest};
use crate::kernels;
use crate::setup::Srs;
use crate::Error;

/// What the verifier needs for one circuit.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifyingKey<E: Pairing> {
    /// `μ`: the circuit has `2^μ` gates.
    pub num_vars: usize,
    /// `ℓ`: the number of public inputs.
    pub num_public: usize,
    pub circuit_digest: CircuitDigest,
    /// Commitments to `q_L, q_R, q_M, q_O, q_C, σ_1, σ_2, σ_3`.
    pub preprocessed: Vec<PstCommitment<E>>,
    /// The PST verifier key for `μ` variables.
    pub pst: PstVerifierKey<E>,
}

/// What the prover needs for one circuit: the circuit, the trimmed committer key and the
/// verifying key (whose digest the transcript absorbs).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProvingKey<E: Pairing> {
    pub circuit: Circuit<E::ScalarField>,
    pub ck: PstCommitterKey<E>,
    pub vk: VerifyingKey<E>,
}

/// The number of preprocessed MLEs (five selectors, three `σ_j`).
pub const NUM_PREPROCESSED: usize = 8;

/// Builds the index of `circuit` under `srs`.
pub fn preprocess<E: Pairing>(
    srs: &Srs<E>,
    circuit: &Circuit<E::ScalarField>,
) -> Result<(ProvingKey<E>, VerifyingKey<E>), Error>
where
    E::BaseField: Absorb,
{
    let mu = circuit.num_vars();
    let (ck, pst_vk) = srs.trim(mu)?;
    let s = circuit.selectors();
    let sigma = circuit.sigma_columns();
    let columns: Vec<&[E::ScalarField]> = s
        .columns()
        .into_iter()
        .map(Vec::as_slice)
        .chain(sigma.iter().map(Vec::as_slice))
        .collect();
    let preprocessed = columns
        .iter()
        .map(|c| kernels::commit::<E>(&ck, c))
        .collect::<Result<Vec<_>, _>>()?;
    let vk = VerifyingKey {
        num_vars: mu,
        num_public: circuit.num_public(),
        circuit_digest: circuit.digest(),
        preprocessed,
        pst: pst_vk,
    };
    let pk = ProvingKey {
        circuit: circuit.clone(),
        ck,
        vk: vk.clone(),
    };
    Ok((pk, vk))
}

impl<E: Pairing> VerifyingKey<E> {
    /// Blake2s-256 of a tagged compressed encoding of the whole key.
    pub fn digest(&self) -> [u8; 32] {
        let mut bytes = b"hyperplonk verifying key v1".to_vec();
        self.serialize_compressed(&mut bytes)
            .expect("serializing into a Vec does not fail");
        Blake2s256::digest(&bytes).into()
    }

    /// Shape checks: eight commitments, a PST key for exactly `μ` variables, `ℓ ≤ 2^μ`.
    pub fn check_shape(&self) -> Result<(), Error> {
        let bad = |reason: String| Error::Malformed {
            field: "verifying key",
            reason,
        };
        if self.num_vars == 0 || self.num_vars > 40 {
            return Err(bad(format!("μ = {}", self.num_vars)));
        }
        if self.num_public > 1usize << self.num_vars {
            return Err(bad(format!("ℓ = {} > 2^μ", self.num_public)));
        }
        if self.preprocessed.len() != NUM_PREPROCESSED {
            return Err(bad(format!("{} commitments", self.preprocessed.len())));
        }
        if self.pst.num_vars != self.num_vars || self.pst.h_t.len() != self.num_vars {
            return Err(bad("PST key of another size".into()));
        }
        Ok(())
    }
}

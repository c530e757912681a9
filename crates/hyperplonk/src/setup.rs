//! The universal setup: one PST (multilinear KZG) key pair for every circuit of up to
//! `2^μ_max` gates (HyperPlonk's universal, updatable-in-principle SRS; here a plain trusted
//! setup, [`testudo::pst::setup`]). A circuit with `μ ≤ μ_max` variables uses the key's last
//! `μ` levels ([`Srs::trim`]), so nothing circuit-specific is in the SRS.

use ark_crypto_primitives::sponge::Absorb;
use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use rand::{CryptoRng, RngCore};
use testudo::pst::{self, PstCommitterKey, PstVerifierKey};

use crate::Error;

/// The structured reference string: PST keys for up to `max_vars` variables.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Srs<E: Pairing> {
    pub ck: PstCommitterKey<E>,
    pub vk: PstVerifierKey<E>,
}

/// The trusted setup for circuits of up to `2^max_vars` gates; the secret is drawn from
/// `rng` and dropped. Whoever can replay `rng` can forge proofs.
pub fn setup<E: Pairing, R: RngCore + CryptoRng>(
    max_vars: usize,
    rng: &mut R,
) -> Result<Srs<E>, Error> {
    let (ck, vk) = pst::setup::<E, R>(max_vars, rng)?;
    Ok(Srs { ck, vk })
}

/// **Insecure, for tests and benchmarks only**: the setup with its secret derived from `seed`.
pub fn setup_insecure_from_seed<E: Pairing>(max_vars: usize, seed: u64) -> Result<Srs<E>, Error> {
    let (ck, vk) = pst::setup_insecure_from_seed::<E>(max_vars, seed)?;
    Ok(Srs { ck, vk })
}

impl<E: Pairing> Srs<E>
where
    E::BaseField: Absorb,
{
    /// The most variables a circuit under this SRS may have.
    pub fn max_vars(&self) -> usize {
        self.ck.num_vars
    }

    /// The keys for exactly `num_vars` variables: the last `num_vars` levels of the committer
    /// key (level `k` of a `ν`-variable key commits to `ν − k`-variable polynomials) and the
    /// matching `h^{t_k}`.
    pub fn trim(&self, num_vars: usize) -> Result<(PstCommitterKey<E>, PstVerifierKey<E>), Error> {
        let k0 = self
            .ck
            .num_vars
            .checked_sub(num_vars)
            .ok_or(Error::SetupTooSmall {
                supported: self.ck.num_vars,
                needed: num_vars,
            })?;
        if self.vk.num_vars != self.ck.num_vars || self.vk.h_t.len() != self.vk.num_vars {
            return Err(Error::Malformed {
                field: "SRS",
                reason: "committer and verifier keys of different sizes".into(),
            });
        }
        let ck = PstCommitterKey {
            num_vars,
            levels: self.ck.levels[k0..].to_vec(),
        };
        let vk = PstVerifierKey {
            num_vars,
            g: self.vk.g,
            h: self.vk.h,
            h_t: self.vk.h_t[k0..].to_vec(),
        };
        Ok((ck, vk))
    }
}

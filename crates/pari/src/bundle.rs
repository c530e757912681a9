//! Bundles: many proofs under one verifying key, with their public inputs, checked together by
//! one batch verification. The platform's aggregator emits them; anyone verifies them offline
//! with the verifying key alone.

use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use rand::{CryptoRng, RngCore};

use crate::data_structures::{decode, encode};
use crate::transcript::digest_of;
use crate::{batch_verify_locate, Error, PreparedVerifyingKey, Proof, VerifyingKey};

/// `(public input, proof)` pairs and the BLAKE2b-512 digest of the encoded verifying key they
/// are under (so a bundle cannot be checked against the wrong key by accident).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Bundle<E: Pairing> {
    pub vk_digest: Vec<u8>,
    pub items: Vec<(Vec<E::ScalarField>, Proof<E>)>,
}

impl<E: Pairing> Bundle<E> {
    pub fn new(vk: &VerifyingKey<E>, items: Vec<(Vec<E::ScalarField>, Proof<E>)>) -> Self {
        Self { vk_digest: digest_of(&vk.to_bytes()).to_vec(), items }
    }

    /// `"PRBN" ‖ version ‖ body` (compressed).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(b"PRBN", self)
    }

    /// Parses and validates every point and field element.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        decode(b"PRBN", "bundle", bytes)
    }

    /// Verifies every proof with one batch verification. `Err(Error::KeyMismatch)` if the bundle
    /// is for another key; `Err(Error::Verification)` naming nothing if some proof is bad — use
    /// [`Bundle::locate_invalid`] to find which.
    pub fn verify<R: RngCore + CryptoRng>(&self, pvk: &PreparedVerifyingKey<E>, rng: &mut R) -> Result<(), Error> {
        self.check_key(pvk)?;
        let items: Vec<(&[E::ScalarField], &Proof<E>)> = self.items.iter().map(|(x, p)| (x.as_slice(), p)).collect();
        crate::batch_verify(pvk, &items, rng)
    }

    /// Indices of the invalid proofs (empty if all verify).
    pub fn locate_invalid<R: RngCore + CryptoRng>(&self, pvk: &PreparedVerifyingKey<E>, rng: &mut R) -> Result<Vec<usize>, Error> {
        self.check_key(pvk)?;
        let items: Vec<(&[E::ScalarField], &Proof<E>)> = self.items.iter().map(|(x, p)| (x.as_slice(), p)).collect();
        Ok(batch_verify_locate(pvk, &items, rng).err().unwrap_or_default())
    }

    fn check_key(&self, pvk: &PreparedVerifyingKey<E>) -> Result<(), Error> {
        if self.vk_digest != digest_of(&pvk.vk.to_bytes()).to_vec() {
            return Err(Error::KeyMismatch("the bundle was made for another verifying key".into()));
        }
        Ok(())
    }
}

impl<E: Pairing> ProofList<E> {
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(b"PRPL", self)
    }
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        decode(b"PRPL", "proof list", bytes)
    }
}

/// `(public input, proof)` pairs without a key binding: what one prover task hands on.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProofList<E: Pairing> {
    pub items: Vec<(Vec<E::ScalarField>, Proof<E>)>,
}

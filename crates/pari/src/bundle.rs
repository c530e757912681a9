//! Bundles: many proofs under one verifying key, with their public inputs, checked together by
//! one batch verification. The platform's aggregator emits them; anyone verifies them offline
//! with the verifying key alone.

use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use rand::{CryptoRng, RngCore};

use crate::batch::{field_size, verify_entries, BadReason, Entry, Report};
use crate::data_structures::{bundle_body, decode, encode};
use crate::{batch_verify_locate, Error, KeyDigest, PreparedVerifyingKey, Proof, VerifyingKey};

/// `(public input, proof)` pairs and the digest ([`VerifyingKey::digest`]) of the verifying key
/// they are under (so a bundle cannot be checked against the wrong key by accident; which key is
/// the right one is for the verifier to pin, see [`VerifyingKey::from_bytes_pinned`]).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Bundle<E: Pairing> {
    pub vk_digest: Vec<u8>,
    pub items: Vec<(Vec<E::ScalarField>, Proof<E>)>,
}

impl<E: Pairing> Bundle<E> {
    pub fn new(vk: &VerifyingKey<E>, items: Vec<(Vec<E::ScalarField>, Proof<E>)>) -> Self {
        Self { vk_digest: vk.digest().0.to_vec(), items }
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

    /// Verifies every entry and names each bad one (see [`crate::batch`]).
    pub fn verify_report<R: RngCore + CryptoRng>(&self, pvk: &PreparedVerifyingKey<E>, rng: &mut R) -> Result<Report, Error> {
        self.check_key(pvk)?;
        let entries: Vec<Entry<E>> = self.items.iter().map(|(x, p)| Ok((x.clone(), p.clone()))).collect();
        Ok(verify_entries(pvk, &entries, rng))
    }

    /// Like [`Bundle::verify_report`] from the bundle's bytes: every entry is parsed on its own,
    /// so an entry with a damaged point or field element is reported as bad with its reason and
    /// the others are still checked. `Err` only when the bundle's own structure (magic, version,
    /// key digest, counts, lengths) is damaged or the bundle is for another key.
    pub fn verify_bytes_report<R: RngCore + CryptoRng>(
        bytes: &[u8],
        pvk: &PreparedVerifyingKey<E>,
        rng: &mut R,
    ) -> Result<Report, Error> {
        let (digest, entries) = Self::parse_entries(bytes)?;
        check_digest(&digest, pvk)?;
        Ok(verify_entries(pvk, &entries, rng))
    }

    /// Parses a bundle's structure strictly and each entry leniently: returns the key digest
    /// and one [`Entry`] per item.
    pub fn parse_entries(bytes: &[u8]) -> Result<(Vec<u8>, Vec<Entry<E>>), Error> {
        use ark_serialize::CanonicalDeserialize;
        let mut body = bundle_body(bytes)?;
        let malformed = |m: String| Error::Malformed(format!("bundle: {m}"));
        let take = |body: &mut &[u8], len: usize, what: &str| -> Result<Vec<u8>, Error> {
            if body.len() < len {
                return Err(malformed(format!("truncated in {what}")));
            }
            let (head, rest) = body.split_at(len);
            *body = rest;
            Ok(head.to_vec())
        };
        let read_len = |body: &mut &[u8], what: &str| -> Result<usize, Error> {
            let b = take(body, 8, what)?;
            let v = u64::from_le_bytes(b.try_into().expect("8 bytes"));
            usize::try_from(v).map_err(|_| malformed(format!("{what} {v} too large")))
        };
        let digest_len = read_len(&mut body, "key digest length")?;
        let digest = take(&mut body, digest_len, "key digest")?;
        let count = read_len(&mut body, "entry count")?;
        let (fs, ps) = (field_size::<E>(), Proof::<E>::body_size());
        if count.checked_mul(8 + ps).is_none_or(|need| need > body.len()) {
            return Err(malformed(format!("{count} entries cannot fit in {} bytes", body.len())));
        }
        let mut entries = Vec::with_capacity(count);
        for k in 0..count {
            let n = read_len(&mut body, &format!("entry {k}: public-input count"))?;
            let x_bytes = take(&mut body, n.checked_mul(fs).unwrap_or(usize::MAX), &format!("entry {k}: public input"))?;
            let p_bytes = take(&mut body, ps, &format!("entry {k}: proof"))?;
            let x: Result<Vec<E::ScalarField>, BadReason> = x_bytes
                .chunks(fs)
                .enumerate()
                .map(|(i, c)| {
                    E::ScalarField::deserialize_compressed(c)
                        .map_err(|e| BadReason::UnparsablePublicInput(format!("element {i}: {e}")))
                })
                .collect();
            let entry = x.and_then(|x| {
                Proof::<E>::deserialize_compressed(p_bytes.as_slice())
                    .map(|p| (x, p))
                    .map_err(|e| BadReason::UnparsableProof(e.to_string()))
            });
            entries.push(entry);
        }
        if !body.is_empty() {
            return Err(malformed(format!("{} trailing bytes", body.len())));
        }
        Ok((digest, entries))
    }

    fn check_key(&self, pvk: &PreparedVerifyingKey<E>) -> Result<(), Error> {
        check_digest(&self.vk_digest, pvk)
    }
}

fn check_digest<E: Pairing>(digest: &[u8], pvk: &PreparedVerifyingKey<E>) -> Result<(), Error> {
    if digest != pvk.digest.as_slice() {
        let found = <[u8; 64]>::try_from(digest).map(|d| KeyDigest(d).to_string()).unwrap_or_else(|_| "malformed".into());
        return Err(Error::KeyMismatch(format!(
            "the bundle was made for the verifying key with digest {found}, not {}",
            pvk.key_digest()
        )));
    }
    Ok(())
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

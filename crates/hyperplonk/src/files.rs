//! Byte formats: the SRS, the proving key, the verifying key and the proof. Each is a 5-byte
//! magic (4 letters and a version byte) and the value's compressed arkworks encoding; reading
//! checks every group element (on the curve, in its subgroup), refuses trailing bytes and
//! checks the shapes the verifier relies on, so bytes from anyone decode to a well-formed
//! value or to [`Error::Malformed`] naming the kind of file.

use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};

use crate::index::{ProvingKey, VerifyingKey};
use crate::proof::Proof;
use crate::setup::Srs;
use crate::Error;

const SRS_MAGIC: &[u8; 5] = b"HPSR\x01";
const VK_MAGIC: &[u8; 5] = b"HPVK\x01";
const PROOF_MAGIC: &[u8; 5] = b"HPPF\x01";
const PK_MAGIC: &[u8; 5] = b"HPPK\x01";

fn encode<T: CanonicalSerialize>(magic: &[u8; 5], value: &T) -> Vec<u8> {
    let mut out = magic.to_vec();
    value
        .serialize_with_mode(&mut out, Compress::Yes)
        .expect("serializing into a Vec does not fail");
    out
}

fn decode<T: CanonicalDeserialize>(
    magic: &[u8; 5],
    field: &'static str,
    bytes: &[u8],
) -> Result<T, Error> {
    let bad = |reason: String| Error::Malformed { field, reason };
    let mut body = bytes
        .strip_prefix(magic.as_slice())
        .ok_or_else(|| bad("wrong magic or version".into()))?;
    let v = T::deserialize_with_mode(&mut body, Compress::Yes, Validate::Yes)
        .map_err(|e| bad(e.to_string()))?;
    if !body.is_empty() {
        return Err(bad(format!("{} trailing bytes", body.len())));
    }
    Ok(v)
}

/// `HPSR` 1: the universal SRS.
pub fn srs_to_bytes<E: Pairing>(srs: &Srs<E>) -> Vec<u8> {
    encode(SRS_MAGIC, srs)
}

pub fn srs_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<Srs<E>, Error> {
    let srs: Srs<E> = decode(SRS_MAGIC, "SRS", bytes)?;
    let n = srs.ck.num_vars;
    let levels_ok = srs.ck.levels.len() == n + 1
        && srs
            .ck
            .levels
            .iter()
            .enumerate()
            .all(|(k, l)| l.len() == 1 << (n - k));
    if !levels_ok || srs.vk.num_vars != n || srs.vk.h_t.len() != n {
        return Err(Error::Malformed {
            field: "SRS",
            reason: "level sizes do not match the number of variables".into(),
        });
    }
    Ok(srs)
}

/// `HPVK` 1: a verifying key.
pub fn vk_to_bytes<E: Pairing>(vk: &VerifyingKey<E>) -> Vec<u8> {
    encode(VK_MAGIC, vk)
}

pub fn vk_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<VerifyingKey<E>, Error> {
    let vk: VerifyingKey<E> = decode(VK_MAGIC, "verifying key", bytes)?;
    vk.check_shape()?;
    Ok(vk)
}

/// `HPPK` 1: a proving key (the circuit, checked as it decodes, the trimmed committer key
/// and the verifying key, which must name this circuit).
pub fn pk_to_bytes<E: Pairing>(pk: &ProvingKey<E>) -> Vec<u8> {
    encode(PK_MAGIC, pk)
}

pub fn pk_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<ProvingKey<E>, Error> {
    let pk: ProvingKey<E> = decode(PK_MAGIC, "proving key", bytes)?;
    pk.vk.check_shape()?;
    let mu = pk.circuit.num_vars();
    let levels_ok = pk.ck.num_vars == mu
        && pk.ck.levels.len() == mu + 1
        && pk
            .ck
            .levels
            .iter()
            .enumerate()
            .all(|(k, l)| l.len() == 1 << (mu - k));
    if !levels_ok
        || pk.vk.num_vars != mu
        || pk.vk.num_public != pk.circuit.num_public()
        || pk.vk.circuit_digest != pk.circuit.digest()
    {
        return Err(Error::Malformed {
            field: "proving key",
            reason: "the keys do not match the circuit".into(),
        });
    }
    Ok(pk)
}

/// `HPPF` 1: a proof. (Its shape against a key is checked by the verifier.)
pub fn proof_to_bytes<E: Pairing>(proof: &Proof<E>) -> Vec<u8> {
    encode(PROOF_MAGIC, proof)
}

pub fn proof_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<Proof<E>, Error> {
    decode(PROOF_MAGIC, "proof", bytes)
}

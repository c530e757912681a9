//! Byte formats of what a Testudo prover stores and ships: the Testudo-Comm committer and
//! verifier keys and the inner proof (Spartan with Testudo-Comm). Each is a 5-byte magic
//! (4 letters and a version byte) and the value's compressed arkworks encoding; reading checks
//! every group element (on the curve, in its subgroup) and refuses trailing bytes, so a file
//! from anyone decodes to a well-formed value or to [`Error::Malformed`] naming the file kind.
//!
//! The platform and `prover testudo` use these formats for the same files, so a proof
//! directory made by either is read by the other. The final key and final proof of the
//! compression have their own `to_bytes`/`from_bytes` (`compress`, feature `r1cs`).

use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};

use crate::spartan::SpartanProof;
use crate::testudo_comm::{TcCommitment, TcCommitterKey, TcProof, TcVerifierKey};
use crate::Error;

/// A Spartan proof whose witness commitment is Testudo-Comm's on `E`.
pub type TestudoProof<E> = SpartanProof<<E as Pairing>::ScalarField, TcCommitment<E>, TcProof<E>>;

const CK_MAGIC: &[u8; 5] = b"TSCK\x01";
const VK_MAGIC: &[u8; 5] = b"TSVK\x01";
const PROOF_MAGIC: &[u8; 5] = b"TSIP\x01";

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

/// `TSCK` 1: a Testudo-Comm committer key.
pub fn ck_to_bytes<E: Pairing>(ck: &TcCommitterKey<E>) -> Vec<u8> {
    encode(CK_MAGIC, ck)
}

pub fn ck_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<TcCommitterKey<E>, Error> {
    decode(CK_MAGIC, "Testudo-Comm committer key", bytes)
}

/// `TSVK` 1: a Testudo-Comm verifier key.
pub fn vk_to_bytes<E: Pairing>(vk: &TcVerifierKey<E>) -> Vec<u8> {
    encode(VK_MAGIC, vk)
}

pub fn vk_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<TcVerifierKey<E>, Error> {
    decode(VK_MAGIC, "Testudo-Comm verifier key", bytes)
}

/// `TSIP` 1: an inner proof.
pub fn proof_to_bytes<E: Pairing>(proof: &TestudoProof<E>) -> Vec<u8> {
    encode(PROOF_MAGIC, proof)
}

pub fn proof_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<TestudoProof<E>, Error> {
    decode(PROOF_MAGIC, "Testudo proof", bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::r1cs::R1cs;
    use crate::spartan;
    use crate::testudo_comm::{self, TestudoComm};
    use ark_bls12_381::{Bls12_381, Fr};

    /// `x·x = y` with `io = (y)`, `w = (x)`.
    fn square() -> R1cs<Fr> {
        let one = Fr::from(1u64);
        R1cs::new(1, 1, 1, vec![(0, 2, one)], vec![(0, 2, one)], vec![(0, 0, one)]).unwrap()
    }

    #[test]
    fn keys_and_proofs_round_trip_and_damage_is_refused() {
        let (ck, vk) = testudo_comm::setup_insecure_from_seed::<Bls12_381>(4, 7).unwrap();
        let r1cs = square();
        let io = [Fr::from(9u64)];
        let proof = spartan::prove::<Fr, TestudoComm<Bls12_381>>(&ck, &r1cs, &io, &[Fr::from(3u64)]).unwrap();
        let (ckb, vkb, pb) = (ck_to_bytes(&ck), vk_to_bytes(&vk), proof_to_bytes::<Bls12_381>(&proof));
        assert_eq!(ck_from_bytes::<Bls12_381>(&ckb).unwrap(), ck);
        assert_eq!(vk_from_bytes::<Bls12_381>(&vkb).unwrap(), vk);
        let back = proof_from_bytes::<Bls12_381>(&pb).unwrap();
        assert_eq!(back, proof);
        spartan::verify::<Fr, TestudoComm<Bls12_381>>(&vk, &r1cs, &io, &back).unwrap();
        // Another kind's file, a trailing byte, a truncation, a flipped byte: refused.
        assert!(matches!(vk_from_bytes::<Bls12_381>(&ckb), Err(Error::Malformed { .. })));
        let mut long = pb.clone();
        long.push(0);
        assert!(proof_from_bytes::<Bls12_381>(&long).is_err());
        assert!(proof_from_bytes::<Bls12_381>(&pb[..pb.len() - 1]).is_err());
        // A byte of the last point of the key (`g^{s_k}`): off the curve or off G1.
        let mut flipped = vkb.clone();
        let at = flipped.len() - 5;
        flipped[at] ^= 1;
        assert!(vk_from_bytes::<Bls12_381>(&flipped).is_err());
    }
}

//! Keys and proofs, with canonical compressed serialization and full validation on read
//! (on-curve and subgroup checks by arkworks, lengths, magic and version tag, key consistency).

use ark_ec::pairing::Pairing;
use ark_poly::{EvaluationDomain, Radix2EvaluationDomain};
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Validate};

use crate::r1cs::Sr1cs;
use crate::transcript::digest_of;
use crate::Error;

const VERSION: u8 = 1;

/// A Pari proof `π = (T, U, v_a, v_b)`: 2 G1 + 2 field elements (160 B on BLS12-381, 128 B on
/// BN254, compressed).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Proof<E: Pairing> {
    pub t: E::G1Affine,
    pub u: E::G1Affine,
    pub v_a: E::ScalarField,
    pub v_b: E::ScalarField,
}

/// The verifying key: `G, αG, βG, H, δH, τH` and the shape of the outlined instance.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct VerifyingKey<E: Pairing> {
    pub g: E::G1Affine,
    pub alpha_g: E::G1Affine,
    pub beta_g: E::G1Affine,
    pub h: E::G2Affine,
    pub delta_h: E::G2Affine,
    pub tau_h: E::G2Affine,
    /// `n = |K|`.
    pub domain_size: u64,
    /// `L`: instance length including the constant 1 (`|x| = L − 1`).
    pub num_instance: u64,
    /// Row of `K` carrying instance variable 0; variable `j` sits at row `instance_row_start + j`.
    pub instance_row_start: u64,
}

/// The proving key. `sigma` covers the SR1CS witness columns; the four power vectors have
/// `n + 1` entries (degree up to `n` because of the zero-knowledge blinding).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct ProvingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub sr1cs: Sr1cs<E::ScalarField>,
    /// `[(α a_i(τ) + β b_i(τ))/δ]G` for every witness column `i`.
    pub sigma: Vec<E::G1Affine>,
    /// `[τ^k/δ]G`.
    pub sigma_q: Vec<E::G1Affine>,
    /// `[α τ^k]G`.
    pub sigma_a: Vec<E::G1Affine>,
    /// `[β τ^k]G`.
    pub sigma_b: Vec<E::G1Affine>,
    /// `[τ^k]G`.
    pub sigma_1: Vec<E::G1Affine>,
    /// `[α v_K(τ)/δ]G`, `[β v_K(τ)/δ]G`, `[β τ v_K(τ)/δ]G`: the blinding terms.
    pub zk_a: E::G1Affine,
    pub zk_b: E::G1Affine,
    pub zk_b_tau: E::G1Affine,
}

/// A verifying key ready for use: G2 elements prepared, domain and key digest computed once.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub digest: [u8; 64],
    pub domain: Radix2EvaluationDomain<E::ScalarField>,
    pub h_prep: E::G2Prepared,
    pub delta_h_prep: E::G2Prepared,
    pub tau_h_prep: E::G2Prepared,
}

pub(crate) fn encode(magic: &[u8; 4], value: &impl CanonicalSerialize) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + value.compressed_size());
    out.extend_from_slice(magic);
    out.push(VERSION);
    value.serialize_compressed(&mut out).expect("serialize to Vec");
    out
}

pub(crate) fn decode<T: CanonicalDeserialize + CanonicalSerialize>(magic: &[u8; 4], what: &str, bytes: &[u8]) -> Result<T, Error> {
    if bytes.len() < 5 || &bytes[..4] != magic {
        return Err(Error::Malformed(format!("{what}: wrong magic bytes")));
    }
    if bytes[4] != VERSION {
        return Err(Error::Malformed(format!("{what}: unsupported version {}", bytes[4])));
    }
    let mut body = &bytes[5..];
    let v = T::deserialize_with_mode(&mut body, Compress::Yes, Validate::Yes)
        .map_err(|e| Error::Malformed(format!("{what}: {e}")))?;
    if !body.is_empty() {
        return Err(Error::Malformed(format!("{what}: {} trailing bytes", body.len())));
    }
    Ok(v)
}

impl<E: Pairing> Proof<E> {
    /// `"PRPF" ‖ version ‖ T ‖ U ‖ v_a ‖ v_b` (compressed).
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(b"PRPF", self)
    }

    /// Parses and validates (points on the curve and in the prime-order subgroup, canonical
    /// field elements, exact length).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        decode(b"PRPF", "proof", bytes)
    }

    /// Size of the proof itself (without the 5-byte magic and version).
    pub fn compressed_size(&self) -> usize {
        CanonicalSerialize::compressed_size(self)
    }
}

impl<E: Pairing> VerifyingKey<E> {
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(b"PRVK", self)
    }

    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let vk: Self = decode(b"PRVK", "verifying key", bytes)?;
        vk.check()?;
        Ok(vk)
    }

    /// Shape checks a deserialized key must pass.
    pub fn check(&self) -> Result<(), Error> {
        let n = self.domain_size;
        if !n.is_power_of_two() || Radix2EvaluationDomain::<E::ScalarField>::new(n as usize).is_none() {
            return Err(Error::Malformed("verifying key: domain size is not a supported power of two".into()));
        }
        if self.num_instance == 0 || self.instance_row_start.checked_add(self.num_instance).is_none_or(|e| e > n) {
            return Err(Error::Malformed("verifying key: instance rows outside the domain".into()));
        }
        use ark_ec::AffineRepr;
        if self.g.is_zero() || self.h.is_zero() || self.delta_h.is_zero() {
            return Err(Error::Malformed("verifying key: a generator is the identity".into()));
        }
        Ok(())
    }

    /// Prepares the key for (batch) verification.
    pub fn prepare(&self) -> PreparedVerifyingKey<E> {
        let digest = digest_of(&self.to_bytes());
        PreparedVerifyingKey {
            vk: self.clone(),
            digest,
            domain: Radix2EvaluationDomain::new(self.domain_size as usize).expect("checked domain size"),
            h_prep: self.h.into(),
            delta_h_prep: self.delta_h.into(),
            tau_h_prep: self.tau_h.into(),
        }
    }

    /// Number of public inputs `|x|`.
    pub fn num_public_inputs(&self) -> usize {
        (self.num_instance - 1) as usize
    }
}

impl<E: Pairing> ProvingKey<E> {
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(b"PRPK", self)
    }

    /// Parses, validates every point, and checks that the parts of the key fit together.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let pk: Self = decode(b"PRPK", "proving key", bytes)?;
        pk.vk.check()?;
        let n = pk.vk.domain_size as usize;
        let sr = &pk.sr1cs;
        let vars = sr.num_variables();
        let consistent = sr.a.len() == sr.b.len()
            && sr.num_rows() <= n
            && sr.num_instance == pk.vk.num_instance
            && sr.instance_row_start() as u64 == pk.vk.instance_row_start
            && pk.sigma.len() == sr.num_witness()
            && [&pk.sigma_q, &pk.sigma_a, &pk.sigma_b, &pk.sigma_1].iter().all(|v| v.len() == n + 1)
            && sr.a.iter().chain(sr.b.iter()).all(|row| row.iter().all(|&(_, i)| i < vars));
        if !consistent {
            return Err(Error::Malformed("proving key: parts do not fit together".into()));
        }
        Ok(pk)
    }
}

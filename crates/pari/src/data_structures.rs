//! Keys and proofs, with canonical compressed serialization and full validation on read
//! (on-curve and subgroup checks by arkworks, lengths, magic and version tag, key consistency).

use ark_ec::pairing::Pairing;
use ark_ff::Field;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize, Compress, Read, SerializationError, Valid, Validate};

use crate::domain::Domain;
use crate::msm::FixedBaseTable;
use crate::r1cs::Sr1cs;
use crate::transcript::digest_of;
use crate::Error;

const VERSION: u8 = 1;
/// Proving keys: version 2 holds the SR1CS compact ([`Sr1cs::serialize_compact`]); version 1
/// (its rows as `(coefficient, u64 index)` pairs) is still read.
const PK_VERSION: u8 = 2;

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
///
/// Validated deserialization (arkworks' `Validate::Yes`, and [`VerifyingKey::from_bytes`])
/// checks every point (on the curve, in the prime-order subgroup) and the shape
/// ([`VerifyingKey::check`]). Its [`digest`](VerifyingKey::digest) is what a verifier pins.
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize)]
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
///
/// Validated deserialization (arkworks' `Validate::Yes`, and [`ProvingKey::from_bytes`]) checks
/// every point and that the parts fit together ([`ProvingKey::check_shape`]): row counts, the
/// outlined instance rows, no instance column outside them, every index in range, vector
/// lengths, all with checked arithmetic. [`ProvingKey::from_bytes_with_digest`] skips the point
/// checks for bytes whose digest was recorded when they were first checked.
#[derive(Clone, Debug, PartialEq, Eq)]
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

/// A verifying key ready for use: everything that depends only on the key computed once — G2
/// elements prepared for the Miller loop, domain, key digest, and a fixed-base table of the G1
/// points `αG, βG, G` (in that order) for the single and combined checks.
#[derive(Clone, Debug)]
pub struct PreparedVerifyingKey<E: Pairing> {
    pub vk: VerifyingKey<E>,
    pub digest: [u8; 64],
    pub domain: Domain<E::ScalarField>,
    pub h_prep: E::G2Prepared,
    pub delta_h_prep: E::G2Prepared,
    pub tau_h_prep: E::G2Prepared,
    pub g1_table: FixedBaseTable<E::G1>,
}

/// A key digest: BLAKE2b-512 of the key's encoding `magic ‖ version ‖ compressed body` (for a
/// verifying key: `"PRVK" ‖ 1 ‖ G ‖ αG ‖ βG ‖ H ‖ δH ‖ τH ‖ n ‖ L ‖ instance_row_start`, the
/// bytes of `vk.bin`). Printed and parsed as 128 lowercase hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyDigest(pub [u8; 64]);

impl KeyDigest {
    /// The digest of an encoded key (`vk.bin`, `pk.bin`) as read from disk.
    pub fn of_bytes(bytes: &[u8]) -> Self {
        KeyDigest(digest_of(bytes))
    }

    pub fn as_bytes(&self) -> &[u8; 64] {
        &self.0
    }
}

impl std::fmt::Display for KeyDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl std::fmt::Debug for KeyDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "KeyDigest({self})")
    }
}

impl std::str::FromStr for KeyDigest {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self, Error> {
        let s = s.trim();
        if s.len() != 128 || !s.is_ascii() {
            return Err(Error::Malformed(format!("key digest: expected 128 hex characters, got {} characters", s.chars().count())));
        }
        let mut out = [0u8; 64];
        for (k, byte) in out.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&s[2 * k..2 * k + 2], 16)
                .map_err(|_| Error::Malformed(format!("key digest: not hex at character {}", 2 * k)))?;
        }
        Ok(KeyDigest(out))
    }
}

pub(crate) fn encode(magic: &[u8; 4], value: &impl CanonicalSerialize) -> Vec<u8> {
    encode_with(magic, value, Compress::Yes)
}

fn encode_with(magic: &[u8; 4], value: &impl CanonicalSerialize, compress: Compress) -> Vec<u8> {
    encode_version(magic, VERSION, value, compress)
}

fn encode_version(magic: &[u8; 4], version: u8, value: &impl CanonicalSerialize, compress: Compress) -> Vec<u8> {
    let mut out = Vec::with_capacity(5 + value.serialized_size(compress));
    out.extend_from_slice(magic);
    out.push(version);
    value.serialize_with_mode(&mut out, compress).expect("serialize to Vec");
    out
}

/// Checks magic and version; returns the body.
fn body<'a>(magic: &[u8; 4], what: &str, bytes: &'a [u8]) -> Result<&'a [u8], Error> {
    body_of_versions(magic, what, bytes, &[VERSION]).map(|(_, b)| b)
}

/// Checks magic and that the version is one of `versions`; returns the version and the body.
fn body_of_versions<'a>(magic: &[u8; 4], what: &str, bytes: &'a [u8], versions: &[u8]) -> Result<(u8, &'a [u8]), Error> {
    if bytes.len() < 5 || &bytes[..4] != magic {
        return Err(Error::Malformed(format!("{what}: wrong magic bytes")));
    }
    if !versions.contains(&bytes[4]) {
        return Err(Error::Malformed(format!("{what}: unsupported version {}", bytes[4])));
    }
    Ok((bytes[4], &bytes[5..]))
}

/// Decodes `magic ‖ version ‖ body` with the given validation mode; the whole input must be
/// consumed.
pub(crate) fn decode_with<T: CanonicalDeserialize>(magic: &[u8; 4], what: &str, bytes: &[u8], validate: Validate) -> Result<T, Error> {
    decode_mode(magic, what, bytes, Compress::Yes, validate)
}

fn decode_mode<T: CanonicalDeserialize>(
    magic: &[u8; 4],
    what: &str,
    bytes: &[u8],
    compress: Compress,
    validate: Validate,
) -> Result<T, Error> {
    let mut body = body(magic, what, bytes)?;
    let v = T::deserialize_with_mode(&mut body, compress, validate).map_err(|e| Error::Malformed(format!("{what}: {e}")))?;
    if !body.is_empty() {
        return Err(Error::Malformed(format!("{what}: {} trailing bytes", body.len())));
    }
    Ok(v)
}

pub(crate) fn bundle_body(bytes: &[u8]) -> Result<&[u8], Error> {
    body(b"PRBN", "bundle", bytes)
}

pub(crate) fn decode<T: CanonicalDeserialize>(magic: &[u8; 4], what: &str, bytes: &[u8]) -> Result<T, Error> {
    decode_with(magic, what, bytes, Validate::Yes)
}

fn points_valid<'a, A: Valid + 'a>(what: &str, points: impl Iterator<Item = &'a A> + Send) -> Result<(), Error> {
    A::batch_check(points).map_err(|e| Error::Malformed(format!("{what}: a point is not in the prime-order subgroup ({e})")))
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

    /// Size of any proof's compressed body on this curve (2 G1 points, 2 field elements).
    pub fn body_size() -> usize {
        use ark_ec::AffineRepr;
        2 * E::G1Affine::zero().compressed_size() + 2 * E::ScalarField::default().compressed_size()
    }
}

impl<E: Pairing> VerifyingKey<E> {
    pub fn to_bytes(&self) -> Vec<u8> {
        encode(b"PRVK", self)
    }

    /// Parses and validates: every point, and the shape ([`VerifyingKey::check`]).
    ///
    /// This trusts whoever handed over the bytes: a key for any circuit with the same `n` and
    /// `L` parses. A verifier that knows which key it expects uses
    /// [`VerifyingKey::from_bytes_pinned`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let vk: Self = decode_with(b"PRVK", "verifying key", bytes, Validate::No)?;
        vk.validate()?;
        Ok(vk)
    }

    /// [`VerifyingKey::from_bytes`], then refuses a key whose [`digest`](VerifyingKey::digest)
    /// is not `expected` ([`Error::UnexpectedKey`], naming both digests).
    pub fn from_bytes_pinned(bytes: &[u8], expected: &KeyDigest) -> Result<Self, Error> {
        let vk = Self::from_bytes(bytes)?;
        vk.check_digest(expected)?;
        Ok(vk)
    }

    /// The digest a verifier pins: BLAKE2b-512 of [`VerifyingKey::to_bytes`] (see [`KeyDigest`]).
    /// It also seeds the Fiat–Shamir transcript, so a proof is bound to it.
    pub fn digest(&self) -> KeyDigest {
        KeyDigest::of_bytes(&self.to_bytes())
    }

    /// `Err(Error::UnexpectedKey)` unless this key's digest is `expected`.
    pub fn check_digest(&self, expected: &KeyDigest) -> Result<(), Error> {
        let found = self.digest();
        if &found != expected {
            return Err(Error::UnexpectedKey { expected: *expected, found });
        }
        Ok(())
    }

    /// Shape checks (no point validation): `n` the order of a domain the field supports (a
    /// power of two, or a smooth order where the field has no large power-of-two subgroup: see
    /// [`Domain`]), the instance rows `[start, start + L)` inside `K`, `L ≥ 1`, generators not
    /// the identity.
    pub fn check(&self) -> Result<(), Error> {
        let n = self.domain_size;
        if usize::try_from(n).is_err()
            || Domain::<E::ScalarField>::new(n as usize).is_none_or(|d| d.size() as u64 != n)
        {
            return Err(Error::Malformed(format!("verifying key: domain size {n} is not one the field supports")));
        }
        if self.num_instance == 0 || self.instance_row_start.checked_add(self.num_instance).is_none_or(|e| e > n) {
            return Err(Error::Malformed(format!(
                "verifying key: instance rows [{}, {} + {}) outside the domain of size {n}",
                self.instance_row_start, self.instance_row_start, self.num_instance
            )));
        }
        use ark_ec::AffineRepr;
        if self.g.is_zero() || self.h.is_zero() || self.delta_h.is_zero() {
            return Err(Error::Malformed("verifying key: a generator is the identity".into()));
        }
        Ok(())
    }

    /// Every point (on the curve, in the subgroup), then the shape.
    fn validate(&self) -> Result<(), Error> {
        points_valid("verifying key", [&self.g, &self.alpha_g, &self.beta_g].into_iter())?;
        points_valid("verifying key", [&self.h, &self.delta_h, &self.tau_h].into_iter())?;
        self.check()
    }

    /// Prepares the key for (batch) verification; checks the shape first (a key built by hand
    /// or read without validation gets an error, never a panic). Costs a few milliseconds (the
    /// fixed-base table); prepare once per key and reuse.
    pub fn prepare(&self) -> Result<PreparedVerifyingKey<E>, Error> {
        self.check()?;
        let domain = Domain::new(self.domain_size as usize)
            .ok_or_else(|| Error::Malformed("verifying key: unsupported domain size".into()))?;
        Ok(PreparedVerifyingKey {
            vk: self.clone(),
            digest: self.digest().0,
            domain,
            h_prep: self.h.into(),
            delta_h_prep: self.delta_h.into(),
            tau_h_prep: self.tau_h.into(),
            g1_table: FixedBaseTable::new(&[self.alpha_g, self.beta_g, self.g]),
        })
    }

    /// Number of public inputs `|x| = L − 1`.
    pub fn num_public_inputs(&self) -> usize {
        self.num_instance.saturating_sub(1) as usize
    }
}

impl<E: Pairing> PreparedVerifyingKey<E> {
    /// The digest of the key this was prepared from.
    pub fn key_digest(&self) -> KeyDigest {
        KeyDigest(self.digest)
    }
}

impl<E: Pairing> Valid for VerifyingKey<E> {
    fn check(&self) -> Result<(), SerializationError> {
        self.validate().map_err(|_| SerializationError::InvalidData)
    }
}

impl<E: Pairing> CanonicalDeserialize for VerifyingKey<E> {
    fn deserialize_with_mode<R: Read>(mut r: R, compress: Compress, validate: Validate) -> Result<Self, SerializationError> {
        let vk = VerifyingKey {
            g: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            alpha_g: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            beta_g: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            h: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            delta_h: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            tau_h: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            domain_size: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            num_instance: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            instance_row_start: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
        };
        if validate == Validate::Yes {
            Valid::check(&vk)?;
        }
        Ok(vk)
    }
}

impl<E: Pairing> ProvingKey<E> {
    /// `"PRPK" ‖ 2 ‖ body`, points compressed, the SR1CS compact (8 bytes a term). Version 1
    /// keys (the SR1CS as rows of `(coefficient, u64 index)`, 56 bytes a term on a 381-bit
    /// field) are still read; their digests ([`KeyDigest::of_bytes`]) are their own bytes', so
    /// a key recorded by digest loads as it was written.
    pub fn to_bytes(&self) -> Vec<u8> {
        encode_version(b"PRPK", PK_VERSION, self, Compress::Yes)
    }

    /// Parses, validates every point, and checks that the parts of the key fit together
    /// ([`ProvingKey::check_shape`]).
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        let pk = Self::decode(bytes, false)?;
        pk.check_shape()?;
        pk.check_points()?;
        Ok(pk)
    }

    /// Either magic (`PRPK` compressed; `PRPU` uncompressed if `uncompressed_too`) and either
    /// version; no validation.
    fn decode(bytes: &[u8], uncompressed_too: bool) -> Result<Self, Error> {
        const WHAT: &str = "proving key";
        let compress = if uncompressed_too && bytes.starts_with(b"PRPU") { Compress::No } else { Compress::Yes };
        let magic = if compress == Compress::No { b"PRPU" } else { b"PRPK" };
        let (version, mut body) = body_of_versions(magic, WHAT, bytes, &[1, PK_VERSION])?;
        let pk = Self::read_body(&mut body, compress, version).map_err(|e| Error::Malformed(format!("{WHAT}: {e}")))?;
        if !body.is_empty() {
            return Err(Error::Malformed(format!("{WHAT}: {} trailing bytes", body.len())));
        }
        Ok(pk)
    }

    /// The body of a version `version` key, without validation.
    fn read_body<R: Read>(mut r: R, compress: Compress, version: u8) -> Result<Self, SerializationError> {
        let vk = VerifyingKey::deserialize_with_mode(&mut r, compress, Validate::No)?;
        let sr1cs = if version == 1 {
            Sr1cs::deserialize_with_mode(&mut r, compress, Validate::No)?
        } else {
            Sr1cs::deserialize_compact(&mut r, compress)?
        };
        Ok(ProvingKey {
            vk,
            sr1cs,
            sigma: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            sigma_q: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            sigma_a: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            sigma_b: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            sigma_1: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            zk_a: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            zk_b: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
            zk_b_tau: CanonicalDeserialize::deserialize_with_mode(&mut r, compress, Validate::No)?,
        })
    }

    /// The version 1 encoding of this key (the SR1CS as rows), for tests that check old keys
    /// still load.
    #[doc(hidden)]
    pub fn to_bytes_v1(&self, compress: bool) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(if compress { b"PRPK" } else { b"PRPU" });
        out.push(1);
        let mode = if compress { Compress::Yes } else { Compress::No };
        self.write_body(&mut out, mode, 1).expect("serialize to Vec");
        out
    }

    /// The body of a version `version` key: the SR1CS as rows (1) or compact (2).
    fn write_body<W: ark_serialize::Write>(&self, mut w: W, compress: Compress, version: u8) -> Result<(), SerializationError> {
        self.vk.serialize_with_mode(&mut w, compress)?;
        if version == 1 {
            self.sr1cs.serialize_with_mode(&mut w, compress)?;
        } else {
            self.sr1cs.serialize_compact(&mut w, compress)?;
        }
        for v in [&self.sigma, &self.sigma_q, &self.sigma_a, &self.sigma_b, &self.sigma_1] {
            v.serialize_with_mode(&mut w, compress)?;
        }
        for p in [&self.zk_a, &self.zk_b, &self.zk_b_tau] {
            p.serialize_with_mode(&mut w, compress)?;
        }
        Ok(())
    }

    /// The same key uncompressed (`"PRPU" ‖ version ‖ body`, about twice the size): for a
    /// worker's cache, read back by [`ProvingKey::from_bytes_with_digest`] without the square
    /// root per point that decompression costs.
    pub fn to_bytes_uncompressed(&self) -> Vec<u8> {
        encode_version(b"PRPU", PK_VERSION, self, Compress::No)
    }

    /// Loads a proving key whose bytes were fully checked before: hashes `bytes`, compares with
    /// `expected` (recorded as [`KeyDigest::of_bytes`] of these very bytes when they were
    /// checked — by [`ProvingKey::from_bytes`], or written by [`ProvingKey::to_bytes_uncompressed`]
    /// from a checked key — and kept where the bytes' supplier cannot change it), then
    /// deserializes without point validation. Takes either encoding (`PRPK` compressed, `PRPU`
    /// uncompressed). The shape checks (cheap) still run.
    pub fn from_bytes_with_digest(bytes: &[u8], expected: &KeyDigest) -> Result<Self, Error> {
        let found = KeyDigest::of_bytes(bytes);
        if &found != expected {
            return Err(Error::UnexpectedKey { expected: *expected, found });
        }
        let pk = Self::decode(bytes, true)?;
        pk.check_shape()?;
        Ok(pk)
    }

    /// Loads a proving key from bytes nobody vouched for: either encoding (`PRPK` compressed,
    /// `PRPU` uncompressed, the form without a square root per point), the shape checks and
    /// every point checked, as [`ProvingKey::from_bytes`] does. For a key read from a store
    /// that holds no digest its reader controls (a digest kept beside the key vouches for
    /// nothing against whoever can write there).
    pub fn from_bytes_checked(bytes: &[u8]) -> Result<Self, Error> {
        let pk = Self::decode(bytes, true)?;
        pk.check_shape()?;
        pk.check_points()?;
        Ok(pk)
    }

    /// Bytes the decoded key holds in memory (its points and SR1CS matrices), which a cache
    /// of decoded keys counts; well below its encoding's size, whose SR1CS takes 56 bytes a
    /// term on a 381-bit field against 8 decoded.
    pub fn heap_size(&self) -> u64 {
        let points = self.sigma.len() + self.sigma_q.len() + self.sigma_a.len() + self.sigma_b.len() + self.sigma_1.len() + 3;
        (points * std::mem::size_of::<E::G1Affine>() + self.sr1cs.heap_size() + std::mem::size_of::<Self>()) as u64
    }

    /// Every point of the key is on the curve and in the prime-order subgroup.
    fn check_points(&self) -> Result<(), Error> {
        points_valid(
            "proving key",
            [&self.sigma, &self.sigma_q, &self.sigma_a, &self.sigma_b, &self.sigma_1]
                .into_iter()
                .flatten()
                .chain([&self.zk_a, &self.zk_b, &self.zk_b_tau]),
        )?;
        self.vk.validate()
    }

    /// The parts of the key fit together (no point validation), so that proving never panics:
    ///
    /// * the verifying key's shape ([`VerifyingKey::check`]), and the SR1CS's `L` equal to its
    ///   `L`;
    /// * row counts: `A` and `B` have the same number of rows, `start + L ≤ n` with `start` the
    ///   verifying key's instance row start (rows cannot be deleted or added unnoticed);
    /// * outlined rows: row `start + j` of `A` is `z_j − x'_j`, of `B` empty; no other row of
    ///   `A`, and no row of `B`, touches an instance column (`< L`);
    /// * every variable index `< 2L + W + M`; `σ` has `L + W + M` entries, the power vectors
    ///   `n + 1`; all counts computed with checked arithmetic.
    pub fn check_shape(&self) -> Result<(), Error> {
        let vk = &self.vk;
        vk.check()?;
        let bad = |m: String| Error::Malformed(format!("proving key: {m}"));
        let sr = &self.sr1cs;
        let (l, w, m) = (sr.num_instance, sr.r1cs_witness, sr.r1cs_constraints);
        if l != vk.num_instance {
            return Err(bad(format!("the SR1CS has L = {l}, the verifying key {}", vk.num_instance)));
        }
        let two_m = vk.instance_row_start;
        let rows = two_m.checked_add(l).ok_or_else(|| bad("row count: instance row start + L overflows".into()))?;
        if sr.a.len() as u64 != rows || sr.b.len() as u64 != rows {
            return Err(bad(format!(
                "row count: the verifying key's outlined rows end at row {rows}, A and B have {} and {} rows",
                sr.a.len(),
                sr.b.len()
            )));
        }
        if rows > vk.domain_size {
            return Err(bad(format!("{rows} rows do not fit the domain of size {}", vk.domain_size)));
        }
        let num_witness = l.checked_add(w).and_then(|v| v.checked_add(m)).ok_or_else(|| bad("L + W + M overflows".into()))?;
        let vars = num_witness.checked_add(l).and_then(|v| usize::try_from(v).ok()).ok_or_else(|| bad("2L + W + M overflows".into()))?;
        if self.sigma.len() as u64 != num_witness {
            return Err(bad(format!("σ has {} entries for {num_witness} witness columns", self.sigma.len())));
        }
        let n1 = vk.domain_size + 1;
        for (name, v) in [("σ_q", &self.sigma_q), ("σ_a", &self.sigma_a), ("σ_b", &self.sigma_b), ("σ_1", &self.sigma_1)] {
            if v.len() as u64 != n1 {
                return Err(bad(format!("{name} has {} entries, expected n + 1 = {n1}", v.len())));
            }
        }
        let (l, two_m) = (l as usize, two_m as usize);
        for (k, (ra, rb)) in sr.a.rows().zip(sr.b.rows()).enumerate() {
            if let Some((_, i)) = ra.clone().chain(rb.clone()).find(|&(_, i)| i >= vars) {
                return Err(bad(format!("row {k} uses variable {i}, past the {vars} variables")));
            }
            if rb.clone().any(|(_, i)| i < l) {
                return Err(bad(format!("row {k} of B uses an instance column")));
            }
            if k < two_m {
                if ra.clone().any(|(_, i)| i < l) {
                    return Err(bad(format!("row {k} of A uses an instance column outside the outlined rows")));
                }
            } else {
                let j = k - two_m;
                let one = E::ScalarField::ONE;
                if !ra.eq([(one, j), (-one, l + j)]) || rb.len() != 0 {
                    return Err(bad(format!("outlined row {k} is not (z_{j} − x'_{j})² = 0")));
                }
            }
        }
        Ok(())
    }
}

impl<E: Pairing> Valid for ProvingKey<E> {
    fn check(&self) -> Result<(), SerializationError> {
        self.check_shape().and_then(|()| self.check_points()).map_err(|_| SerializationError::InvalidData)
    }
}

/// The canonical form is version 2's body (the SR1CS compact).
impl<E: Pairing> CanonicalSerialize for ProvingKey<E> {
    fn serialize_with_mode<W: ark_serialize::Write>(&self, w: W, compress: Compress) -> Result<(), SerializationError> {
        self.write_body(w, compress, PK_VERSION)
    }

    fn serialized_size(&self, compress: Compress) -> usize {
        self.vk.serialized_size(compress)
            + self.sr1cs.compact_size(compress)
            + [&self.sigma, &self.sigma_q, &self.sigma_a, &self.sigma_b, &self.sigma_1].iter().map(|v| v.serialized_size(compress)).sum::<usize>()
            + [&self.zk_a, &self.zk_b, &self.zk_b_tau].iter().map(|p| p.serialized_size(compress)).sum::<usize>()
    }
}

impl<E: Pairing> CanonicalDeserialize for ProvingKey<E> {
    fn deserialize_with_mode<R: Read>(r: R, compress: Compress, validate: Validate) -> Result<Self, SerializationError> {
        let pk = Self::read_body(r, compress, PK_VERSION)?;
        if validate == Validate::Yes {
            Valid::check(&pk)?;
        }
        Ok(pk)
    }
}

//! Batch verification that names every bad entry (issue 16): entries are parsed one by one, an
//! entry that does not parse or has the wrong number of public inputs is reported with its
//! reason, and the rest go through one batch check, bisected on failure
//! ([`crate::batch_verify_locate`]) so that each proof that fails the check is named too.
//!
//! [`verify_bytes`] takes `(proof bytes, public-input bytes)` pairs; [`verify_entries`] takes
//! entries the caller parsed itself (e.g. from JSON), keeping the caller's parse errors as
//! reasons; [`crate::bundle::Bundle::verify_bytes_report`] does the same for a bundle's bytes.

use ark_ec::pairing::Pairing;
use ark_serialize::CanonicalSerialize;
use rand::{CryptoRng, RngCore};
#[cfg(feature = "parallel")]
use rayon::prelude::*;

use crate::data_structures::{decode, encode};
use crate::{batch_verify_locate, Error, PreparedVerifyingKey, Proof};

/// Why an entry of a batch is bad.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BadReason {
    /// The proof bytes do not parse (wrong length, magic or version, a point off the curve or
    /// outside the subgroup, a non-canonical field element), or could not be read.
    #[error("unparsable proof: {0}")]
    UnparsableProof(String),
    /// The public-input bytes do not parse, or could not be read.
    #[error("unparsable public input: {0}")]
    UnparsablePublicInput(String),
    /// The key expects another number of public inputs.
    #[error("wrong public-input count: the key expects {expected}, got {got}")]
    WrongPublicInputCount { expected: usize, got: usize },
    /// The proof parses but does not verify for its public input under the key.
    #[error("fails the check: the proof does not verify for its public input under this key")]
    FailsCheck,
}

impl BadReason {
    /// A short stable name for machine-readable reports.
    pub fn kind(&self) -> &'static str {
        match self {
            BadReason::UnparsableProof(_) => "unparsable-proof",
            BadReason::UnparsablePublicInput(_) => "unparsable-public-input",
            BadReason::WrongPublicInputCount { .. } => "wrong-public-input-count",
            BadReason::FailsCheck => "fails-check",
        }
    }
}

/// One bad entry: its index in the batch and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadEntry {
    pub index: usize,
    pub reason: BadReason,
}

/// The outcome of a batch: every bad entry, in index order; the others verified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Report {
    pub total: usize,
    pub bad: Vec<BadEntry>,
}

impl Report {
    pub fn verified(&self) -> usize {
        self.total - self.bad.len()
    }

    pub fn all_verified(&self) -> bool {
        self.bad.is_empty()
    }

    pub fn bad_indices(&self) -> Vec<usize> {
        self.bad.iter().map(|b| b.index).collect()
    }
}

/// An entry as parsed by the caller: `(public input, proof)`, or why it could not be parsed.
pub type Entry<E> = Result<(Vec<<E as Pairing>::ScalarField>, Proof<E>), BadReason>;

/// Public inputs as bytes: `"PRPX" ‖ version ‖ |x| ‖ x` (compressed, canonical).
pub fn public_inputs_to_bytes<E: Pairing>(x: &[E::ScalarField]) -> Vec<u8> {
    encode(b"PRPX", &x.to_vec())
}

/// Parses [`public_inputs_to_bytes`] (canonical field elements, exact length).
pub fn public_inputs_from_bytes<E: Pairing>(bytes: &[u8]) -> Result<Vec<E::ScalarField>, Error> {
    decode(b"PRPX", "public input", bytes)
}

/// Parses one `(proof bytes, public-input bytes)` pair.
pub fn parse_entry<E: Pairing>(proof: &[u8], public: &[u8]) -> Entry<E> {
    let x = public_inputs_from_bytes::<E>(public).map_err(|e| BadReason::UnparsablePublicInput(e.to_string()))?;
    let p = Proof::<E>::from_bytes(proof).map_err(|e| BadReason::UnparsableProof(e.to_string()))?;
    Ok((x, p))
}

/// Verifies every `(proof bytes, public-input bytes)` pair; reports each bad one with its reason.
pub fn verify_bytes<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    entries: &[(&[u8], &[u8])],
    rng: &mut R,
) -> Report {
    let parsed: Vec<Entry<E>> = ark_std::cfg_iter!(entries).map(|(p, x)| parse_entry::<E>(p, x)).collect();
    verify_entries(pvk, &parsed, rng)
}

/// [`verify_bytes`] as it was before the tuning (serial parsing, [`crate::verifier::baseline`]
/// batch check and bisection): for the bench's old-against-new comparison.
#[doc(hidden)]
pub fn verify_bytes_baseline<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    entries: &[(&[u8], &[u8])],
    rng: &mut R,
) -> Report {
    let parsed: Vec<Entry<E>> = entries.iter().map(|(p, x)| parse_entry::<E>(p, x)).collect();
    verify_entries_with(pvk, &parsed, rng, crate::verifier::baseline::batch_verify_locate)
}

/// Verifies the parsed entries together: entries already bad and entries with a wrong
/// public-input count are reported as such; the rest are batch-checked, and bisection names the
/// ones that fail.
pub fn verify_entries<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    entries: &[Entry<E>],
    rng: &mut R,
) -> Report {
    verify_entries_with(pvk, entries, rng, batch_verify_locate)
}

type Locate<E, R> = fn(&PreparedVerifyingKey<E>, &[(&[<E as Pairing>::ScalarField], &Proof<E>)], &mut R) -> Result<(), Vec<usize>>;

fn verify_entries_with<E: Pairing, R: RngCore + CryptoRng>(
    pvk: &PreparedVerifyingKey<E>,
    entries: &[Entry<E>],
    rng: &mut R,
    locate: Locate<E, R>,
) -> Report {
    let expected = pvk.vk.num_public_inputs();
    let mut bad = Vec::new();
    let mut index = Vec::new();
    let mut items: Vec<(&[E::ScalarField], &Proof<E>)> = Vec::new();
    for (k, e) in entries.iter().enumerate() {
        match e {
            Err(reason) => bad.push(BadEntry { index: k, reason: reason.clone() }),
            Ok((x, _)) if x.len() != expected => {
                bad.push(BadEntry { index: k, reason: BadReason::WrongPublicInputCount { expected, got: x.len() } })
            }
            Ok((x, p)) => {
                index.push(k);
                items.push((x.as_slice(), p));
            }
        }
    }
    if let Err(failing) = locate(pvk, &items, rng) {
        bad.extend(failing.into_iter().map(|i| BadEntry { index: index[i], reason: BadReason::FailsCheck }));
    }
    bad.sort_by_key(|b| b.index);
    Report { total: entries.len(), bad }
}

/// Size of one compressed field element.
pub(crate) fn field_size<E: Pairing>() -> usize {
    E::ScalarField::default().compressed_size()
}

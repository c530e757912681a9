//! The interface Spartan needs from a multilinear polynomial commitment scheme.
//!
//! Spartan commits to the witness polynomial `w̃` before any challenge is drawn and opens it
//! once, at the point `r_y'` the inner sumcheck ends at. Implementations: [`crate::pst`]
//! (PST, linear-size setup) and [`crate::testudo_comm`] (√N-size setup). Testudo-Comm's
//! opening is interactive (the MIPP's challenges), so `open` and `verify` take the transcript,
//! and its commitment step leaves the prover the row commitments, so `commit` returns an
//! opening hint. The transcript runs over a field of the scheme's choosing
//! ([`MultilinearPcs::TranscriptField`]: for both schemes here the pairing's base field
//! `F_q`, see [`crate::transcript`]), and each scheme says how its commitment is absorbed.

use ark_crypto_primitives::sponge::Absorb;
use ark_ff::PrimeField;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use std::fmt::Debug;

use crate::poly::MultilinearPoly;
use crate::transcript::Transcript;
use crate::Error;

/// The transcript a scheme `P` over `F` runs with.
pub type PcsTranscript<F, P> = Transcript<F, <P as MultilinearPcs<F>>::TranscriptField>;

/// A commitment scheme for multilinear polynomials over `F`, in this crate's variable order
/// ([`crate::poly`]).
pub trait MultilinearPcs<F: PrimeField> {
    /// The field the Fiat–Shamir sponge runs over (the curve's base field for a pairing-based
    /// scheme, so that the points it absorbs are native there).
    type TranscriptField: PrimeField + Absorb;
    /// What the prover needs: commit and open.
    type CommitterKey;
    /// What the verifier needs.
    type VerifierKey;
    /// Absorbed into the transcript by the caller with [`Self::absorb_commitment`].
    type Commitment: Clone + Debug + PartialEq + CanonicalSerialize + CanonicalDeserialize;
    /// The prover's private by-product of `commit`, passed back to `open`.
    type OpeningHint;
    /// The evaluation proof.
    type Proof: Clone + Debug + PartialEq + CanonicalSerialize + CanonicalDeserialize;

    /// The most variables a polynomial committed under `ck` may have.
    fn max_vars(ck: &Self::CommitterKey) -> usize;

    /// Absorbs `commitment` into `transcript` (the scheme's encoding of it).
    fn absorb_commitment(
        commitment: &Self::Commitment,
        transcript: &mut Transcript<F, Self::TranscriptField>,
    );

    /// Commits to `poly`.
    fn commit(
        ck: &Self::CommitterKey,
        poly: &MultilinearPoly<F>,
    ) -> Result<(Self::Commitment, Self::OpeningHint), Error>;

    /// Proves `poly(point) = value` (the value is the caller's to compute and send).
    /// May absorb into and squeeze from `transcript`; `verify` does the same.
    fn open(
        ck: &Self::CommitterKey,
        poly: &MultilinearPoly<F>,
        hint: &Self::OpeningHint,
        point: &[F],
        transcript: &mut Transcript<F, Self::TranscriptField>,
    ) -> Result<Self::Proof, Error>;

    /// Accepts (`Ok`) iff `proof` shows that the polynomial committed in `commitment`
    /// evaluates to `value` at `point`.
    fn verify(
        vk: &Self::VerifierKey,
        commitment: &Self::Commitment,
        point: &[F],
        value: F,
        proof: &Self::Proof,
        transcript: &mut Transcript<F, Self::TranscriptField>,
    ) -> Result<(), Error>;
}

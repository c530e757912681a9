//! The proof and the crate's fixed order of the thirteen committed MLEs.

use ark_ec::pairing::Pairing;
use ark_serialize::{CanonicalDeserialize, CanonicalSerialize};
use testudo::pst::{PstCommitment, PstProof};
use testudo::sumcheck::SumcheckProof;

/// The committed MLEs in the crate's order: the eight preprocessed ones (index), the three
/// witness columns, then `φ` and `π`. Evaluation vectors in the proof use this order.
pub mod polys {
    pub const Q_L: usize = 0;
    pub const Q_R: usize = 1;
    pub const Q_M: usize = 2;
    pub const Q_O: usize = 3;
    pub const Q_C: usize = 4;
    pub const SIGMA: [usize; 3] = [5, 6, 7];
    pub const W: [usize; 3] = [8, 9, 10];
    pub const PHI: usize = 11;
    pub const PI: usize = 12;
    /// How many there are.
    pub const COUNT: usize = 13;
}

/// A HyperPlonk proof (the messages in the order they are sent; see [`crate::prover`]).
#[derive(Clone, Debug, PartialEq, Eq, CanonicalSerialize, CanonicalDeserialize)]
pub struct Proof<E: Pairing> {
    /// Commitments to `w_1, w_2, w_3`.
    pub witness_comms: Vec<PstCommitment<E>>,
    /// Commitments to the fraction MLE `φ` and the product MLE `π`.
    pub phi_comm: PstCommitment<E>,
    pub pi_comm: PstCommitment<E>,
    /// ZeroCheck's sumcheck (`μ` rounds of degree 5), ending at `ρ`.
    pub zerocheck: SumcheckProof<E::ScalarField>,
    /// The thirteen MLEs at `ρ` ([`polys`] order).
    pub evals_rho: Vec<E::ScalarField>,
    /// `φ(ρ', 0), φ(ρ', 1), π(ρ', 0), π(ρ', 1)` with `ρ' = (ρ_1, …, ρ_{μ−1})`.
    pub evals_shifted: Vec<E::ScalarField>,
    /// The grand product `π(1, …, 1, 0)` (must be 1).
    pub product: E::ScalarField,
    /// OpenCheck's sumcheck (`μ` rounds of degree 2), ending at `s`.
    pub opencheck: SumcheckProof<E::ScalarField>,
    /// The thirteen MLEs at `s`.
    pub evals_s: Vec<E::ScalarField>,
    /// The one PST opening of `Σ_i λ^i f_i` at `s`.
    pub opening: PstProof<E>,
}

//! The shrink layers: from a Reckle root proof (whose shape depends on `(ℓ, q)`) to one plonky2
//! proof of **one fixed circuit** hashed with Poseidon over BN254, which the wrap verifies in
//! R1CS ([`crate::wrap`]).
//!
//! ## Two layers
//!
//! * **Normalize** `N_{ℓ,q}` ([`NormalizeCircuit`], Goldilocks Poseidon, [`normalize_config`]):
//!   verifies the root proof of `(ℓ, q)` against the root key as **constants**,
//!   asserts `idx = 0` (the proof is for the root's position, as `reckle::Statement::verify_for`
//!   requires), and re-exports `C ‖ d ‖ Σlo ‖ Σhi ‖ count` (11 elements). Root circuits differ
//!   in degree and gates from one `(ℓ, q)` to another (a bucket circuit `B_0` of `2^q` leaves, a
//!   level circuit…), so there is one `N` per `(ℓ, q)`; but every `N` is built with the same gate
//!   set ([`normalize_gates`]) and padded to the same degree `2^`[`NORMALIZE_DEGREE_BITS`], so all
//!   of them share **one** `CommonCircuitData` (checked when each is built).
//! * **Shrink** `S` ([`ShrinkCircuit`], Poseidon-BN254, [`shrink_config`]): one circuit for every
//!   `(ℓ, q)`. It verifies an `N` proof against that shared common data with `N`'s verifier data
//!   as a **witness**, and exports the 11 values plus the **circuit id**
//!   `id = H(constants_sigmas_cap ‖ circuit_digest)` of that verifier data (`H` = Goldilocks
//!   Poseidon `hash_no_pad`, 4 elements): 15 public inputs.
//!
//! Since `N`'s verifier data is a witness of `S`, anybody can make an `S` proof for a circuit of
//! their own with the same shape; what makes a proof mean "a Reckle root proof of `(ℓ, q)`
//! verifies" is that the verifier compares `id` with [`circuit_id`] of `N_{ℓ,q}`, which it
//! derives from the pinned root key ([`NormalizeCircuit::build`] is deterministic). `id`
//! covers the constants and wiring of `N` (its `constants_sigmas_cap`, and plonky2's
//! `circuit_digest`, which hashes that cap and the degree), and with them the root key that `N`
//! holds as constants; `N`'s gates and FRI parameters are fixed by `S` itself.
//!
//! ## `S`'s configuration, and why
//!
//! The wrap's R1CS cost is mostly per FRI query (Merkle paths of 4 initial trees and each
//! commit-phase tree, leaf hashing, range checks of the opened values), so the configuration
//! minimises queries at ≥ 100 bits of conjectured FRI security, `rate_bits · queries +
//! pow_bits ≥ 100` (plonky2's own estimate): see [`shrink_config`].

use plonky2::field::goldilocks_field::GoldilocksField as GL;
use plonky2::field::types::Field;
use plonky2::gates::arithmetic_base::ArithmeticGate;
use plonky2::gates::arithmetic_extension::ArithmeticExtensionGate;
use plonky2::gates::base_sum::BaseSumGate;
use plonky2::gates::constant::ConstantGate;
use plonky2::gates::coset_interpolation::CosetInterpolationGate;
use plonky2::gates::exponentiation::ExponentiationGate;
use plonky2::gates::gate::GateRef;
use plonky2::gates::multiplication_extension::MulExtensionGate;
use plonky2::gates::noop::NoopGate;
use plonky2::gates::poseidon::PoseidonGate;
use plonky2::gates::poseidon_mds::PoseidonMdsGate;
use plonky2::gates::public_input::PublicInputGate;
use plonky2::gates::random_access::RandomAccessGate;
use plonky2::gates::reducing::ReducingGate;
use plonky2::gates::reducing_extension::ReducingExtensionGate;
use plonky2::fri::reduction_strategies::FriReductionStrategy;
use plonky2::fri::FriConfig;
use plonky2::hash::hash_types::HashOut;
use plonky2::hash::poseidon::PoseidonHash;
use plonky2::iop::witness::{PartialWitness, WitnessWrite};
use plonky2::plonk::circuit_builder::CircuitBuilder;
use plonky2::plonk::circuit_data::{
    CircuitConfig, CircuitData, CommonCircuitData, VerifierCircuitData, VerifierCircuitTarget, VerifierOnlyCircuitData,
};
use plonky2::plonk::config::{Hasher, PoseidonGoldilocksConfig};
use plonky2::plonk::proof::{ProofWithPublicInputs, ProofWithPublicInputsTarget};

use crate::hasher::PoseidonBn254GoldilocksConfig;

const D: usize = 2;
/// The Goldilocks-Poseidon configuration of Reckle and of the normalize layer.
pub type GoldilocksConfig = PoseidonGoldilocksConfig;
/// The Poseidon-BN254 configuration of the shrink layer.
pub type ShrinkConfig = PoseidonBn254GoldilocksConfig;

/// Degree (log2 of the rows) every normalize circuit is padded to.
pub const NORMALIZE_DEGREE_BITS: usize = 13;

/// Public inputs a normalize proof exports: `C (4) ‖ d (4) ‖ Σlo ‖ Σhi ‖ count`.
pub const NUM_STATEMENT_INPUTS: usize = 11;
/// Public inputs of the shrink proof: the statement and the circuit id (4).
pub const NUM_SHRINK_INPUTS: usize = NUM_STATEMENT_INPUTS + 4;

/// Position of `idx` among a Reckle node's public inputs.
const ROOT_INDEX_INPUT: usize = 11;

/// Errors of the shrink layers.
#[derive(Debug, thiserror::Error)]
pub enum ShrinkError {
    #[error("the normalize circuit for log_n = {log_n}, log_bucket = {log_bucket} does not have the shared shape: {what}")]
    Shape { log_n: u32, log_bucket: u32, what: String },
    #[error("proving failed: {0}")]
    Proving(String),
    #[error("invalid input: {0}")]
    Input(String),
}

/// The configuration of the normalize layer: plonky2's standard recursion configuration with
/// `rate_bits = 4` and 21 queries (`4·21 + 16 = 100` bits), so that `S`, which verifies it,
/// fits in `2^12` rows (with 28 queries it would take just over `2^12`, doubling `S`'s prover).
pub fn normalize_config() -> CircuitConfig {
    let mut config = CircuitConfig::standard_recursion_config();
    config.fri_config.rate_bits = 4;
    config.fri_config.num_query_rounds = 21;
    config
}

/// The configuration of the shrink layer `S` (Poseidon-BN254), the proof the wrap verifies.
///
/// * `rate_bits = 4` (blow-up 16) and **20 queries** with **20 bits of proof of work**:
///   `4·20 + 20 = 100` bits of conjectured security. A query round costs the wrap about 70k
///   constraints (Merkle paths of the 4 initial trees and the commit-phase trees, leaf hashing,
///   64-bit range checks of every opened value), so the standard `3·28 + 16` would cost about
///   0.5M more (the measured 2.52M of the `costs recursive` example against 2.15M here). The
///   prover pays a blow-up of 16 on a `2^12`-row circuit and about `2^20` Poseidon-BN254
///   permutations of grinding (the shrink proof takes about 80 s on 2 cores, mostly Merkle
///   hashing with Poseidon-BN254). Rate `1/32` with 16 queries would save about 0.25M
///   constraints for twice the shrink prover's hashing; 24 bits of grinding, 16M permutations.
/// * Zero knowledge is off: the shrink proof never leaves the prover (the Pari proof is
///   zero-knowledge and shows only the public inputs).
/// * `cap_height = 4`: each Merkle path stops 4 levels below the root; the caps are observed
///   by the challenger (16 hashes per tree), which is cheaper than 4 more levels per query.
/// * The rest is the standard recursion configuration (135 wires, 80 routed, 2 challenges over
///   `F_{p^2}`, quotient degree 8, FRI arity 16 down to a final polynomial of ≤ 32 coefficients).
pub fn shrink_config() -> CircuitConfig {
    CircuitConfig {
        fri_config: FriConfig {
            rate_bits: 4,
            cap_height: 4,
            proof_of_work_bits: 20,
            reduction_strategy: FriReductionStrategy::ConstantArityBits(4, 5),
            num_query_rounds: 20,
        },
        ..CircuitConfig::standard_recursion_config()
    }
}

/// The gates of every normalize circuit (what plonky2's recursive verifier can use for any
/// inner proof of the standard recursion configuration), added up front so that the gate set,
/// and with it the selectors and the common data, is the same for every `(ℓ, q)`.
pub fn normalize_gates(config: &CircuitConfig) -> Vec<GateRef<GL, D>> {
    let mut gates: Vec<GateRef<GL, D>> = vec![
        GateRef::new(NoopGate),
        GateRef::new(ConstantGate::new(config.num_constants)),
        GateRef::new(PublicInputGate),
        GateRef::new(ArithmeticGate::new_from_config(config)),
        GateRef::new(ArithmeticExtensionGate::new_from_config(config)),
        GateRef::new(MulExtensionGate::new_from_config(config)),
        GateRef::new(BaseSumGate::<2>::new_from_config::<GL>(config)),
        GateRef::new(ExponentiationGate::new_from_config(config)),
        GateRef::new(PoseidonGate::<GL, D>::new()),
        GateRef::new(PoseidonMdsGate::<GL, D>::new()),
        GateRef::new(ReducingGate::new(ReducingGate::<D>::max_coeffs_len(config.num_wires, config.num_routed_wires))),
        GateRef::new(ReducingExtensionGate::new(ReducingExtensionGate::<D>::max_coeffs_len(
            config.num_wires,
            config.num_routed_wires,
        ))),
    ];
    for bits in 1..=4 {
        gates.push(GateRef::new(RandomAccessGate::new_from_config(config, bits)));
        gates.push(GateRef::new(coset_interpolation_gate(bits, config.max_quotient_degree_factor)));
    }
    gates
}

/// plonky2's `CosetInterpolationGate::with_max_degree` (crate-private there), as its FRI
/// verifier makes it: the smallest gate degree that needs no more intermediate values than
/// `max_degree` does.
fn coset_interpolation_gate(subgroup_bits: usize, max_degree: usize) -> CosetInterpolationGate<GL, D> {
    let n_points = 1usize << subgroup_bits;
    let n_intermediates = (n_points - 2) / (max_degree - 1);
    let mut gate = CosetInterpolationGate::new(subgroup_bits);
    gate.degree = (n_points - 2) / (n_intermediates + 1) + 2;
    gate
}

/// `id = H(constants_sigmas_cap ‖ circuit_digest)` of a Goldilocks verifier data: what the
/// shrink proof exports about the normalize circuit it verified.
pub fn circuit_id(vd: &VerifierOnlyCircuitData<GoldilocksConfig, D>) -> HashOut<GL> {
    let mut input: Vec<GL> = vd.constants_sigmas_cap.flatten();
    input.extend_from_slice(&vd.circuit_digest.elements);
    PoseidonHash::hash_no_pad(&input)
}

/// `N_{ℓ,q}`: verifies a Reckle root proof of `(ℓ, q)` and re-exports its statement, in the
/// shared shape (see the module doc).
pub struct NormalizeCircuit {
    params: reckle::Params,
    data: CircuitData<GL, GoldilocksConfig, D>,
    root_proof: ProofWithPublicInputsTarget<D>,
    /// The root key's verifier data, to check a root proof natively before proving.
    root: VerifierCircuitData<GL, GoldilocksConfig, D>,
}

impl NormalizeCircuit {
    /// Builds `N` for the root key of `(ℓ, q)` (about a second). Deterministic: the same key
    /// always gives the same circuit and so the same [`NormalizeCircuit::circuit_id`].
    pub fn build(root_key: &reckle::RootKey) -> Result<Self, ShrinkError> {
        let config = normalize_config();
        let vd = root_key.verifier_data();
        let mut b = CircuitBuilder::<GL, D>::new(config.clone());
        for g in normalize_gates(&config) {
            b.add_gate_to_gate_set(g);
        }
        let root_proof = b.add_virtual_proof_with_pis(&vd.common);
        let root_vk = b.constant_verifier_data(&vd.verifier_only);
        b.verify_proof::<GoldilocksConfig>(&root_proof, &root_vk, &vd.common);
        // The proof must be for the root's own position (Reckle's position binding).
        b.assert_zero(root_proof.public_inputs[ROOT_INDEX_INPUT]);
        b.register_public_inputs(&root_proof.public_inputs[..NUM_STATEMENT_INPUTS]);
        // Pad to just over half the shared degree: `build` then rounds the rows (with what it
        // adds: the public-input hash, its gate, constant gates) up to `2^NORMALIZE_DEGREE_BITS`.
        let target = (1usize << (NORMALIZE_DEGREE_BITS - 1)) + 1;
        let params = root_key.params();
        while b.num_gates() < target {
            b.add_gate(NoopGate, vec![]);
        }
        let data = b.build::<GoldilocksConfig>();
        if data.common.degree_bits() != NORMALIZE_DEGREE_BITS {
            return Err(ShrinkError::Shape {
                log_n: params.log_n,
                log_bucket: params.log_bucket,
                what: format!("degree 2^{}", data.common.degree_bits()),
            });
        }
        Ok(Self { params, data, root_proof, root: vd.clone() })
    }

    pub fn params(&self) -> reckle::Params {
        self.params
    }

    pub fn common(&self) -> &CommonCircuitData<GL, D> {
        &self.data.common
    }

    pub fn verifier_only(&self) -> &VerifierOnlyCircuitData<GoldilocksConfig, D> {
        &self.data.verifier_only
    }

    /// [`circuit_id`] of this circuit: what a shrink proof made through it exports.
    pub fn circuit_id(&self) -> HashOut<GL> {
        circuit_id(&self.data.verifier_only)
    }

    /// Proves `N` from a root proof of `(ℓ, q)`. The root proof is checked natively first
    /// (node, shape, validity under the root key, `idx = 0`), so a bad input gets an error
    /// rather than a panic or an unsatisfiable circuit.
    pub fn prove(&self, root: &reckle::NodeProof) -> Result<ProofWithPublicInputs<GL, GoldilocksConfig, D>, ShrinkError> {
        let p = root.plonky2_proof();
        if root.id != reckle::NodeId::new(self.params.log_n, 0) {
            return Err(ShrinkError::Input(format!("proof of node {} is not the root of a tree of height {}", root.id, self.params.log_n)));
        }
        // Same shape as the root circuit's proofs (a proof of another shape would make plonky2
        // panic when it is set as a witness): it must re-read identically with the root's data.
        let bytes = p.to_bytes();
        let reread = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ProofWithPublicInputs::<GL, GoldilocksConfig, D>::from_bytes(bytes.clone(), &self.root.common)
        }));
        match reread {
            Ok(Ok(q)) if q.public_inputs.len() == self.root_proof.public_inputs.len() && q.to_bytes() == bytes => {}
            _ => return Err(ShrinkError::Input("root proof does not have the shape of the root circuit's proofs".into())),
        }
        self.root
            .verify(p.clone())
            .map_err(|e| ShrinkError::Input(format!("root proof does not verify under the root key: {e}")))?;
        if p.public_inputs[ROOT_INDEX_INPUT] != GL::ZERO {
            return Err(ShrinkError::Input("root proof is not for position 0 of the root level".into()));
        }
        let mut pw = PartialWitness::new();
        pw.set_proof_with_pis_target(&self.root_proof, p).map_err(|e| ShrinkError::Proving(e.to_string()))?;
        self.data.prove(pw).map_err(|e| ShrinkError::Proving(format!("normalize: {e}")))
    }
}

/// `S`: the one fixed Poseidon-BN254 circuit the wrap verifies (see the module doc).
pub struct ShrinkCircuit {
    data: CircuitData<GL, ShrinkConfig, D>,
    /// The shared common data of every normalize circuit.
    normalize_common: CommonCircuitData<GL, D>,
    inner_proof: ProofWithPublicInputsTarget<D>,
    inner_vd: VerifierCircuitTarget,
}

impl ShrinkCircuit {
    /// Builds `S` for normalize proofs of shape `normalize_common` (from any
    /// [`NormalizeCircuit`]; they all share it).
    pub fn build(normalize_common: &CommonCircuitData<GL, D>) -> Self {
        let mut b = CircuitBuilder::<GL, D>::new(shrink_config());
        let inner_proof = b.add_virtual_proof_with_pis(normalize_common);
        let inner_vd = b.add_virtual_verifier_data(normalize_common.config.fri_config.cap_height);
        b.verify_proof::<GoldilocksConfig>(&inner_proof, &inner_vd, normalize_common);
        b.register_public_inputs(&inner_proof.public_inputs);
        let mut id_input: Vec<_> = inner_vd.constants_sigmas_cap.0.iter().flat_map(|h| h.elements).collect();
        id_input.extend_from_slice(&inner_vd.circuit_digest.elements);
        let id = b.hash_n_to_hash_no_pad::<PoseidonHash>(id_input);
        b.register_public_inputs(&id.elements);
        let data = b.build::<ShrinkConfig>();
        Self { data, normalize_common: normalize_common.clone(), inner_proof, inner_vd }
    }

    /// Builds `S` from the shape of the normalize circuit of the smallest tree, `(ℓ, q) = (1, 0)`
    /// (any supported `(ℓ, q)` gives the same shape).
    pub fn build_default() -> Result<Self, ShrinkError> {
        let params = reckle::Params::new(1, 0).map_err(|e| ShrinkError::Input(e.to_string()))?;
        let circuits = reckle::Circuits::build(params).map_err(|e| ShrinkError::Input(e.to_string()))?;
        let n = NormalizeCircuit::build(circuits.root_key())?;
        Ok(Self::build(n.common()))
    }

    /// A shrink proof of a fixed small job (`(ℓ, q) = (1, 0)`, leaves `(5, 7)`, batch `{1}`):
    /// what the wrap's setup lays out its constraints with (about a minute and a half on 2
    /// cores, mostly the shrink prover).
    pub fn sample_proof(&self) -> Result<ProofWithPublicInputs<GL, ShrinkConfig, D>, ShrinkError> {
        let input = |e: reckle::Error| ShrinkError::Input(e.to_string());
        let params = reckle::Params::new(1, 0).map_err(input)?;
        let circuits = reckle::Circuits::build(params).map_err(input)?;
        let tree = reckle::Tree::build(params, vec![5, 7]).map_err(input)?;
        let batch = reckle::BatchProof::aggregate(&circuits, &tree, &[1]).map_err(input)?;
        let n = NormalizeCircuit::build(circuits.root_key())?;
        let normalized = n.prove(batch.root_proof())?;
        self.prove(&n, &normalized)
    }

    pub fn common(&self) -> &CommonCircuitData<GL, D> {
        &self.data.common
    }

    pub fn verifier_only(&self) -> &VerifierOnlyCircuitData<ShrinkConfig, D> {
        &self.data.verifier_only
    }

    /// The shared shape every normalize circuit must have.
    pub fn normalize_common(&self) -> &CommonCircuitData<GL, D> {
        &self.normalize_common
    }

    /// Checks that `n` has the shape `S` verifies.
    pub fn accepts(&self, n: &NormalizeCircuit) -> Result<(), ShrinkError> {
        if n.common() != &self.normalize_common {
            return Err(ShrinkError::Shape {
                log_n: n.params.log_n,
                log_bucket: n.params.log_bucket,
                what: describe_difference(n.common(), &self.normalize_common),
            });
        }
        Ok(())
    }

    /// Proves `S` from a proof of `n`.
    pub fn prove(
        &self,
        n: &NormalizeCircuit,
        proof: &ProofWithPublicInputs<GL, GoldilocksConfig, D>,
    ) -> Result<ProofWithPublicInputs<GL, ShrinkConfig, D>, ShrinkError> {
        self.accepts(n)?;
        let mut pw = PartialWitness::new();
        let err = |e: anyhow::Error| ShrinkError::Proving(e.to_string());
        pw.set_proof_with_pis_target(&self.inner_proof, proof).map_err(err)?;
        pw.set_verifier_data_target(&self.inner_vd, n.verifier_only()).map_err(err)?;
        self.data.prove(pw).map_err(|e| ShrinkError::Proving(format!("shrink: {e}")))
    }

    /// Verifies a shrink proof natively (plonky2's verifier).
    pub fn verify(&self, proof: &ProofWithPublicInputs<GL, ShrinkConfig, D>) -> Result<(), ShrinkError> {
        self.data.verify(proof.clone()).map_err(|e| ShrinkError::Input(format!("shrink proof does not verify: {e}")))
    }
}

fn describe_difference(a: &CommonCircuitData<GL, D>, b: &CommonCircuitData<GL, D>) -> String {
    if a.degree_bits() != b.degree_bits() {
        return format!("degree 2^{} instead of 2^{}", a.degree_bits(), b.degree_bits());
    }
    if a.gates != b.gates {
        let ids = |c: &CommonCircuitData<GL, D>| c.gates.iter().map(|g| g.0.id()).collect::<Vec<_>>();
        return format!("gates {:?} instead of {:?}", ids(a), ids(b));
    }
    if a.fri_params != b.fri_params {
        return format!("FRI parameters {:?} instead of {:?}", a.fri_params, b.fri_params);
    }
    "common circuit data differ".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(log_n: u32, log_bucket: u32) -> (reckle::Circuits, reckle::BatchProof) {
        let params = reckle::Params::new(log_n, log_bucket).expect("params");
        let circuits = reckle::Circuits::build(params).expect("circuits");
        let tree = reckle::Tree::build(params, (0..params.num_leaves()).map(|i| 100 + i).collect()).expect("tree");
        let batch = reckle::BatchProof::aggregate(&circuits, &tree, &[0]).expect("aggregate");
        (circuits, batch)
    }

    #[test]
    fn normalize_refuses_proofs_that_are_not_a_root_proof_of_its_tree_shape() {
        let (circuits, batch) = job(2, 1);
        let n = NormalizeCircuit::build(circuits.root_key()).expect("normalize");
        assert_eq!(n.common().degree_bits(), NORMALIZE_DEGREE_BITS);
        // The root proof of another tree shape (same height, other bucket size).
        let (_, other) = job(2, 0);
        assert!(n.prove(other.root_proof()).is_err(), "a root proof of (2, 0) accepted by N_(2,1)");
        // Same for a normalize circuit of the other shape: the ids differ.
        let (other_circuits, _) = job(2, 0);
        let m = NormalizeCircuit::build(other_circuits.root_key()).expect("normalize");
        assert_ne!(m.circuit_id(), n.circuit_id());
        // The honest root proof goes through and exports C, d, Σlo, Σhi, count.
        let proof = n.prove(batch.root_proof()).expect("prove");
        let pv = batch.root_proof().public_values();
        assert_eq!(proof.public_inputs.len(), NUM_STATEMENT_INPUTS);
        assert_eq!(proof.public_inputs[10], GL::from_canonical_u64(pv.count));
        assert_eq!(proof.public_inputs[0], GL::from_canonical_u64(pv.c.0[0]));
    }
}

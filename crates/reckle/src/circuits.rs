//! The per-level circuits of Fig. 4 with the bucketing of §3.7, built once per [`Params`].
//!
//! * `B_0` ([`BucketCircuit`]) covers one bucket of `2^q` leaves with no recursion.
//! * `B_i` ([`LevelCircuit`]) proves one node at level `i ∈ q+1 ..= ℓ` from its two children,
//!   verifying each child's proof against the level-`(i−1)` key (a constant of the circuit)
//!   when the child's canonical hash is non-zero, and a fixed padding proof otherwise.
//!
//! Building is the expensive part (about a second per level, ~95 MiB each); callers build a
//! [`Circuits`] once and share it. The circuits of one `q` form one chain whatever `ℓ` is
//! (`B_0` depends on `q` only, `B_i` on `B_{i−1}`), so a set shares its circuits with the sets
//! of the same `q` made from it by [`Circuits::for_log_n`]: a shorter one is a prefix (nothing
//! built), a longer one builds only the levels above.

use std::sync::Arc;

use plonky2::field::types::Field;
use plonky2::gates::gate::GateRef;
use plonky2::gates::constant::ConstantGate;
use plonky2::gates::noop::NoopGate;
use plonky2::hash::hash_types::{HashOutTarget, NUM_HASH_OUT_ELTS};
use plonky2::hash::poseidon::PoseidonHash;
use plonky2::iop::target::{BoolTarget, Target};
use plonky2::plonk::circuit_builder::CircuitBuilder;
use plonky2::plonk::circuit_data::{
    CircuitConfig, CircuitData, CommonCircuitData, VerifierCircuitData, VerifierOnlyCircuitData,
};
use plonky2::util::serialization::DefaultGateSerializer;
use plonky2::plonk::proof::{ProofWithPublicInputs, ProofWithPublicInputsTarget};
use plonky2::recursion::dummy_circuit::{dummy_circuit, dummy_proof};

use crate::hash::LEAF_TAG;
use crate::{Error, Params, C, D, F};

/// Number of public inputs of every node proof: `C (4) ‖ d (4) ‖ Σlo ‖ Σhi ‖ count ‖ idx`.
pub const NUM_PUBLIC_INPUTS: usize = 12;

/// Position of `idx` (the node's index within its level) among the public inputs.
pub(crate) const INDEX_INPUT: usize = 11;

/// Targets of one node's public values inside a circuit.
#[derive(Clone, Debug)]
pub(crate) struct NodeTargets {
    pub c: HashOutTarget,
    pub d: HashOutTarget,
    /// `(Σlo, Σhi, count)`.
    pub out: [Target; 3],
}

/// Registers a node's public inputs, in the one order every circuit uses:
/// `C_v ‖ d_v ‖ out_v ‖ idx_v`.
fn register_node(b: &mut CircuitBuilder<F, D>, node: &NodeTargets, index: Target) {
    b.register_public_inputs(&node.c.elements);
    b.register_public_inputs(&node.d.elements);
    b.register_public_inputs(&node.out);
    b.register_public_input(index);
}

/// `B_0`: a monolithic circuit over the `2^q` leaves of one bucket.
pub struct BucketCircuit {
    pub(crate) data: CircuitData<F, C, D>,
    /// The bucket's index at level `q`; a public input (`idx`), and the base of its leaves'
    /// indices (`idx · 2^q + j`).
    pub(crate) bucket_index: Target,
    /// `(lo, hi)` limbs of every leaf value.
    pub(crate) values: Vec<(Target, Target)>,
    /// Whether each leaf is in the batch `I`.
    pub(crate) selected: Vec<BoolTarget>,
}

/// One child slot of a level circuit.
pub(crate) struct ChildTargets {
    pub proof: ProofWithPublicInputsTarget<D>,
    pub node: NodeTargets,
}

/// `B_i` for one level `i > q`.
pub struct LevelCircuit {
    pub(crate) data: CircuitData<F, C, D>,
    /// The node's index at its level (public input `idx`); each proven child must have
    /// `idx_L = 2·idx` (left) or `idx_R = 2·idx + 1` (right).
    pub(crate) index: Target,
    pub(crate) children: [ChildTargets; 2],
    /// The padding circuit (same shape as level `i−1`) and its proof, supplied for a child with
    /// `d = 0`; the proof has all-zero public inputs. Shared by the levels whose children have
    /// one shape.
    pub(crate) padding: Arc<Padding>,
}

/// All circuits for one `(ℓ, q)`: `B_0` and `B_{q+1} … B_ℓ`, each held by reference count so
/// that the sets of one `q` share them ([`Circuits::for_log_n`]).
pub struct Circuits {
    pub(crate) params: Params,
    pub(crate) bucket: Arc<BucketCircuit>,
    /// `levels[k]` is the circuit of level `q + 1 + k`.
    pub(crate) levels: Vec<Arc<LevelCircuit>>,
    pub(crate) root_key: RootKey,
}

/// The verifying key of the root circuit (`B_ℓ`, or `B_0` when `q = ℓ`): everything a verifier
/// needs. Obtained from [`Circuits::root_key`]; it can be stored and reloaded so that a verifier
/// derives it once per `(ℓ, q)` instead of building every circuit each time, but only a key
/// whose bytes hash to the digest pinned in this crate for its `(ℓ, q)` is accepted back (see
/// [`RootKey::from_bytes`] and [`pinned_root_key`]).
#[derive(Clone, Debug)]
pub struct RootKey {
    pub(crate) params: Params,
    pub(crate) data: VerifierCircuitData<F, C, D>,
}

const ROOT_KEY_MAGIC: &[u8; 4] = b"RKVK";
/// Format of [`RootKey::to_bytes`]; 2 adds the circuit version to the header.
const ROOT_KEY_FORMAT: u8 = 2;
const ROOT_KEY_HEADER: usize = 4 + 1 + 4 + 4 + 4;

/// The pinned digests of the root key of one `(ℓ, q)`, from the generated table in
/// `src/pinned.rs` (`cargo run --release -p reckle --example pin_digests`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PinnedKey {
    pub params: Params,
    /// plonky2's circuit digest of the root circuit (hex), as recorded in statements.
    pub circuit_digest: &'static str,
    /// [`RootKey::key_digest`] (hex): a hash of the whole serialized key, so it covers the
    /// common circuit data (gates, FRI parameters) that plonky2's circuit digest does not.
    pub key_digest: &'static str,
}

/// The pinned root key digests for `params`, or `None` if this `(ℓ, q)` is not in the table
/// (or the table was generated for another [`crate::CIRCUIT_VERSION`]).
pub fn pinned_root_key(params: Params) -> Option<PinnedKey> {
    if crate::pinned::CIRCUIT_VERSION != crate::CIRCUIT_VERSION {
        return None;
    }
    crate::pinned::ROOT_KEYS
        .iter()
        .find(|(l, q, _, _)| *l == params.log_n && *q == params.log_bucket)
        .map(|&(_, _, circuit_digest, key_digest)| PinnedKey { params, circuit_digest, key_digest })
}

/// Poseidon hash of arbitrary bytes (little-endian 32-bit words, zero-padded, then the length).
fn bytes_digest(bytes: &[u8]) -> crate::hash::Digest {
    use plonky2::plonk::config::Hasher;
    let mut input: Vec<F> = bytes
        .chunks(4)
        .map(|c| {
            let mut w = [0u8; 4];
            w[..c.len()].copy_from_slice(c);
            F::from_canonical_u32(u32::from_le_bytes(w))
        })
        .collect();
    input.push(F::from_canonical_u64(bytes.len() as u64));
    crate::hash::Digest::from_hash(PoseidonHash::hash_no_pad(&input))
}

/// See [`Circuits::heap_bytes`]. A `Vec`'s own header is 24 bytes; a witness generator is a
/// boxed trait object whose state is a few targets (counted as 96 bytes with its box).
fn circuit_heap_bytes(data: &CircuitData<F, C, D>) -> u64 {
    const FIELD: u64 = 8;
    const VEC: u64 = 24;
    let p = &data.prover_only;
    let batch = &p.constants_sigmas_commitment;
    let polys: u64 = batch.polynomials.iter().map(|c| VEC + FIELD * c.coeffs.len() as u64).sum();
    let leaves: u64 = batch.merkle_tree.leaves.iter().map(|l| VEC + FIELD * l.len() as u64).sum();
    let digests = (batch.merkle_tree.digests.len() + batch.merkle_tree.cap.0.len()) as u64 * 4 * FIELD;
    let sigmas: u64 = p.sigmas.iter().map(|s| VEC + FIELD * s.len() as u64).sum();
    let tables = FIELD * p.subgroup.len() as u64 + 8 * p.representative_map.len() as u64;
    let roots: u64 = p.fft_root_table.as_ref().map_or(0, |t| t.iter().map(|r| VEC + FIELD * r.len() as u64).sum());
    let watches: u64 = p.generator_indices_by_watches.values().map(|v| 48 + VEC + 8 * v.len() as u64).sum();
    polys + leaves + digests + sigmas + tables + roots + watches + 96 * p.generators.len() as u64
}

impl RootKey {
    pub fn params(&self) -> Params {
        self.params
    }

    /// Digest of the key (hex), as recorded in statements (plonky2's circuit digest).
    pub fn circuit_digest(&self) -> String {
        crate::hash::Digest::from_hash(self.data.verifier_only.circuit_digest).to_hex()
    }

    /// Hash of [`RootKey::to_bytes`] (hex): what the pinned table records.
    pub fn key_digest(&self) -> String {
        bytes_digest(&self.to_bytes()).to_hex()
    }

    /// The plonky2 verifier data of the root circuit, for a circuit that verifies root proofs
    /// recursively (the wrap's shrink layer takes it as constants).
    pub fn verifier_data(&self) -> &VerifierCircuitData<F, C, D> {
        &self.data
    }

    pub(crate) fn common(&self) -> &CommonCircuitData<F, D> {
        &self.data.common
    }

    /// `"RKVK" ‖ format:u8 (2) ‖ circuit version:u32 ‖ ℓ:u32 ‖ q:u32 ‖ plonky2 verifier data`.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(ROOT_KEY_MAGIC);
        out.push(ROOT_KEY_FORMAT);
        out.extend_from_slice(&crate::CIRCUIT_VERSION.to_le_bytes());
        out.extend_from_slice(&self.params.log_n.to_le_bytes());
        out.extend_from_slice(&self.params.log_bucket.to_le_bytes());
        let body = self.data.to_bytes(&DefaultGateSerializer).expect("standard gates serialize");
        out.extend_from_slice(&body);
        out
    }

    /// Loads a stored key, accepting it only if its bytes hash to the digest pinned for its
    /// `(ℓ, q)`: a key file cannot stand in for the real circuit (for instance one with fewer
    /// FRI queries, which plonky2's circuit digest would not notice). The check runs before
    /// the plonky2 data are parsed, so arbitrary bytes never reach plonky2's decoder. A key for
    /// an `(ℓ, q)` with no pinned digest is refused: derive it with [`Circuits::build`].
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, Error> {
        if bytes.len() < ROOT_KEY_HEADER || &bytes[..4] != ROOT_KEY_MAGIC || bytes[4] != ROOT_KEY_FORMAT {
            return Err(Error::Malformed("root key: wrong magic, format or length".into()));
        }
        let word = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
        let version = word(5);
        if version != crate::CIRCUIT_VERSION {
            return Err(Error::Malformed(format!(
                "root key: made for circuit version {version}, this is version {}",
                crate::CIRCUIT_VERSION
            )));
        }
        let params = Params::new(word(9), word(13)).map_err(|e| Error::Malformed(format!("root key: {e}")))?;
        let pin = pinned_root_key(params).ok_or_else(|| {
            Error::Verification(format!(
                "root key: no pinned digest for log_n = {}, log_bucket = {}; derive the key by building the circuits",
                params.log_n, params.log_bucket
            ))
        })?;
        if bytes_digest(bytes).to_hex() != pin.key_digest {
            return Err(Error::Verification(format!(
                "root key: not the pinned key for log_n = {}, log_bucket = {}",
                params.log_n, params.log_bucket
            )));
        }
        let body = bytes[ROOT_KEY_HEADER..].to_vec();
        let data = std::panic::catch_unwind(|| VerifierCircuitData::from_bytes(body, &DefaultGateSerializer))
            .map_err(|_| Error::Malformed("root key: malformed verifier data".into()))?
            .map_err(|e| Error::Malformed(format!("root key: {e:?}")))?;
        Ok(Self { params, data })
    }
}

fn config() -> CircuitConfig {
    CircuitConfig::standard_recursion_config()
}

/// A builder whose gate set includes `NoopGate` and `ConstantGate`, so that the padding circuit derived from a
/// circuit's common data (which is made of no-op gates) has exactly the same common data.
fn builder() -> CircuitBuilder<F, D> {
    let config = config();
    let num_constants = config.num_constants;
    let mut b = CircuitBuilder::<F, D>::new(config);
    b.add_gate_to_gate_set(GateRef::new(NoopGate));
    b.add_gate_to_gate_set(GateRef::new(ConstantGate::new(num_constants)));
    b
}

/// `true` iff some element of `d` is non-zero.
fn is_nonzero(b: &mut CircuitBuilder<F, D>, d: &HashOutTarget) -> BoolTarget {
    let zero = b.zero();
    let mut all_zero = b._true();
    for &e in &d.elements {
        let z = b.is_equal(e, zero);
        all_zero = b.and(all_zero, z);
    }
    b.not(all_zero)
}

fn hash_pair(b: &mut CircuitBuilder<F, D>, x: &HashOutTarget, y: &HashOutTarget) -> HashOutTarget {
    let input = x.elements.iter().chain(y.elements.iter()).copied().collect();
    b.hash_n_to_hash_no_pad::<PoseidonHash>(input)
}

/// The canonical-hash rule in-circuit: `H(d_L ‖ d_R)` if both flags are set, else `d_L + d_R`.
fn canonical_combine(
    b: &mut CircuitBuilder<F, D>,
    d_l: &HashOutTarget,
    nz_l: BoolTarget,
    d_r: &HashOutTarget,
    nz_r: BoolTarget,
) -> HashOutTarget {
    let both = b.and(nz_l, nz_r);
    let h = hash_pair(b, d_l, d_r);
    let mut elements = [b.zero(); NUM_HASH_OUT_ELTS];
    for i in 0..NUM_HASH_OUT_ELTS {
        let sum = b.add(d_l.elements[i], d_r.elements[i]);
        elements[i] = b.select(both, h.elements[i], sum);
    }
    HashOutTarget { elements }
}

impl BucketCircuit {
    fn build(params: Params) -> Self {
        let mut b = builder();
        let size = params.bucket_size() as usize;
        let bucket_index = b.add_virtual_target();
        // The parents' `idx` constraints and the verifier's `idx = 0` at the root fix
        // `bucket_index` to the bucket's real position; the range check keeps the leaf indices
        // `idx · 2^q + j` from wrapping the field even on their own. Its width depends on `q`
        // only, so `B_0` (and with it the chain `B_{q+1}, B_{q+2}, …`) is the same circuit for
        // every `ℓ`: the root key of `(ℓ, q)` is the level-`ℓ` circuit of `q`'s chain.
        b.range_check(bucket_index, (crate::MAX_LOG_N - params.log_bucket) as usize);
        let tag = b.constant(F::from_canonical_u64(LEAF_TAG));
        let base = b.mul_const(F::from_canonical_u64(size as u64), bucket_index);

        let mut values = Vec::with_capacity(size);
        let mut selected = Vec::with_capacity(size);
        // (C_v, d_v, d_v ≠ 0) for the current level of the bucket's subtree.
        let mut nodes: Vec<(HashOutTarget, HashOutTarget, BoolTarget)> = Vec::with_capacity(size);
        let mut sum_lo = b.zero();
        let mut sum_hi = b.zero();
        let mut count = b.zero();
        for j in 0..size {
            let lo = b.add_virtual_target();
            let hi = b.add_virtual_target();
            b.range_check(lo, 32);
            b.range_check(hi, 32);
            let sel = b.add_virtual_bool_target_safe();
            let index = b.add_const(base, F::from_canonical_u64(j as u64));
            let c = b.hash_n_to_hash_no_pad::<PoseidonHash>(vec![tag, index, lo, hi]);
            let d = HashOutTarget { elements: c.elements.map(|e| b.mul(e, sel.target)) };
            sum_lo = b.mul_add(sel.target, lo, sum_lo);
            sum_hi = b.mul_add(sel.target, hi, sum_hi);
            count = b.add(count, sel.target);
            values.push((lo, hi));
            selected.push(sel);
            nodes.push((c, d, sel));
        }
        // A leaf's flag is its selection bit; a node's flag is the OR of its children's, which
        // equals `d_v ≠ 0` except with negligible probability (a Poseidon output of zero).
        while nodes.len() > 1 {
            nodes = nodes
                .chunks(2)
                .map(|p| {
                    let (c_l, d_l, nz_l) = &p[0];
                    let (c_r, d_r, nz_r) = &p[1];
                    let c = hash_pair(&mut b, c_l, c_r);
                    let d = canonical_combine(&mut b, d_l, *nz_l, d_r, *nz_r);
                    let nz = b.or(*nz_l, *nz_r);
                    (c, d, nz)
                })
                .collect();
        }
        let (c, d, _) = nodes.pop().expect("a bucket has at least one leaf");
        register_node(&mut b, &NodeTargets { c, d, out: [sum_lo, sum_hi, count] }, bucket_index);
        let data = b.build::<C>();
        Self { data, bucket_index, values, selected }
    }
}

impl LevelCircuit {
    fn build(child: &CircuitData<F, C, D>, padding: Arc<Padding>) -> Result<Self, Error> {
        let child_common: &CommonCircuitData<F, D> = &child.common;

        let mut b = builder();
        let child_vk = b.constant_verifier_data(&child.verifier_only);
        let padding_vk = b.constant_verifier_data(&padding.verifier_only);

        let index = b.add_virtual_target();
        let two_index = b.mul_const(F::TWO, index);
        let mut slots = Vec::with_capacity(2);
        for side in 0..2u64 {
            let proof = b.add_virtual_proof_with_pis(child_common);
            let node = NodeTargets {
                c: b.add_virtual_hash(),
                d: b.add_virtual_hash(),
                out: [b.add_virtual_target(), b.add_virtual_target(), b.add_virtual_target()],
            };
            let nz = is_nonzero(&mut b, &node.d);
            // When d ≠ 0 the child's values are exactly the public inputs of a proof that
            // verifies under the level-(i−1) key; when d = 0 the child is just a Merkle hash.
            let claimed: Vec<Target> = node
                .c
                .elements
                .iter()
                .chain(node.d.elements.iter())
                .chain(node.out.iter())
                .copied()
                .collect();
            for (w, pi) in claimed.iter().zip(proof.public_inputs.iter()) {
                let diff = b.sub(*pi, *w);
                let gated = b.mul(diff, nz.target);
                b.assert_zero(gated);
            }
            // Position binding: a proven child sits where its own `idx` says,
            // `nz · (idx_child − 2·idx − side) = 0`. Fig. 4 has no such check (see the crate doc).
            let expected = b.add_const(two_index, F::from_canonical_u64(side));
            let diff = b.sub(proof.public_inputs[INDEX_INPUT], expected);
            let gated = b.mul(diff, nz.target);
            b.assert_zero(gated);
            let vk = b.select_verifier_data(nz, &child_vk, &padding_vk);
            b.verify_proof::<C>(&proof, &vk, child_common);
            slots.push((ChildTargets { proof, node }, nz));
        }
        let (right, nz_r) = slots.pop().expect("two children");
        let (left, nz_l) = slots.pop().expect("two children");
        let c = hash_pair(&mut b, &left.node.c, &right.node.c);
        let d = canonical_combine(&mut b, &left.node.d, nz_l, &right.node.d, nz_r);
        let mut out = [b.zero(); 3];
        for k in 0..3 {
            let l = b.mul(left.node.out[k], nz_l.target);
            out[k] = b.mul_add(right.node.out[k], nz_r.target, l);
        }
        register_node(&mut b, &NodeTargets { c, d, out }, index);
        let data = b.build::<C>();
        Ok(Self { data, index, children: [left, right], padding })
    }
}

/// The padding circuit for children of one shape, with its one proof (all-zero public inputs).
pub(crate) struct Padding {
    common: CommonCircuitData<F, D>,
    verifier_only: VerifierOnlyCircuitData<C, D>,
    pub(crate) proof: ProofWithPublicInputs<F, C, D>,
}

impl Padding {
    fn build(common: &CommonCircuitData<F, D>) -> Result<Self, Error> {
        let circuit = dummy_circuit::<F, C, D>(common);
        let proof = dummy_proof::<F, C, D>(&circuit, Default::default())
            .map_err(|e| Error::Proving(format!("padding proof: {e}")))?;
        Ok(Self { common: common.clone(), verifier_only: circuit.verifier_only, proof })
    }
}

impl Circuits {
    /// Builds `B_0` and every `B_i`, `i = q+1 … ℓ`. Deterministic: the same `(ℓ, q)` always
    /// gives the same keys, which is how a verifier obtains the root key.
    pub fn build(params: Params) -> Result<Self, Error> {
        params.check()?;
        Self::extend(params, Arc::new(BucketCircuit::build(params)), Vec::new())
    }

    /// The set of `(log_n, q)`, `q` this set's, sharing this set's circuits: when `log_n` is at
    /// most this set's `ℓ`, its first levels (nothing is built); when above, all of this set's
    /// and the levels above it, built (about a second each). Equal to [`Circuits::build`] of
    /// the same parameters: the same keys, the same root key.
    pub fn for_log_n(&self, log_n: u32) -> Result<Self, Error> {
        let params = Params::new(log_n, self.params.log_bucket)?;
        params.check()?;
        let mut levels = self.levels.clone();
        levels.truncate(log_n.saturating_sub(self.params.log_bucket) as usize);
        Self::extend(params, self.bucket.clone(), levels)
    }

    /// `levels` (the chain up to some level, over `bucket`) with the levels up to `params.log_n`
    /// built on top.
    fn extend(params: Params, bucket: Arc<BucketCircuit>, mut levels: Vec<Arc<LevelCircuit>>) -> Result<Self, Error> {
        // Levels above q+1 all verify children of the same shape, so they share one padding
        // circuit: build it only when the child shape changes.
        let mut padding: Option<Arc<Padding>> = levels.last().map(|l| l.padding.clone());
        for _ in params.log_bucket + 1 + levels.len() as u32..=params.log_n {
            let child = levels.last().map(|l| &l.data).unwrap_or(&bucket.data);
            let shared = padding.as_ref().filter(|p| p.common == child.common).cloned();
            let this = match shared {
                Some(p) => p,
                None => {
                    let p = Arc::new(Padding::build(&child.common)?);
                    padding = Some(p.clone());
                    p
                }
            };
            levels.push(Arc::new(LevelCircuit::build(child, this)?));
        }
        let root = levels.last().map(|l| &l.data).unwrap_or(&bucket.data);
        let root_key = RootKey { params, data: root.verifier_data() };
        Ok(Self { params, bucket, levels, root_key })
    }

    /// Whether `other` holds the very same circuit objects as this set for the levels both
    /// have (it was made from this set by [`Circuits::for_log_n`], or this set from it): the
    /// memory of those circuits is held once.
    pub fn shares_circuits_with(&self, other: &Circuits) -> bool {
        Arc::ptr_eq(&self.bucket, &other.bucket) && self.levels.iter().zip(&other.levels).all(|(a, b)| Arc::ptr_eq(a, b))
    }

    /// The root keys of `(ℓ', q)` for every `ℓ'` from `max(q, 1)` to `ℓ`. The circuits of one
    /// `q` form one chain `B_0, B_{q+1}, B_{q+2}, …` whatever `ℓ` is, and the root key of
    /// `(ℓ', q)` is the key of level `ℓ'`; this is how the pinned table is generated.
    pub fn chain_root_keys(&self) -> Vec<RootKey> {
        let q = self.params.log_bucket;
        (q.max(1)..=self.params.log_n)
            .filter_map(|level| {
                let params = Params::new(level, q).ok()?;
                let data = self.data(level).ok()?;
                Some(RootKey { params, data: data.verifier_data() })
            })
            .collect()
    }

    /// An estimate of the memory the set holds (bytes): the prover data of `B_0` and of every
    /// level circuit, counted from their vectors' lengths (the committed constants and sigmas
    /// with their Merkle tree, the permutation and subgroup tables, the witness generators),
    /// plus a quarter for what that count misses (the common and verifier data, the padding
    /// proofs, the allocator's slack). A process budgets its circuit sets with it.
    ///
    /// Measured against the growth of VmRSS during the build (`examples/circuit_memory.rs`):
    /// the estimate is 0.95 of it at `(8, 2)` (598 MiB), 1.06 at `(16, 4)` (1,077 MiB), 1.09 at
    /// `(20, 4)` (1,394 MiB), 1.11 at `(24, 4)` (1,712 MiB) and 1.10 at `(24, 12)` (2,306 MiB).
    pub fn heap_bytes(&self) -> u64 {
        let counted: u64 = std::iter::once(&self.bucket.data).chain(self.levels.iter().map(|l| &l.data)).map(circuit_heap_bytes).sum();
        counted + counted / 4
    }

    /// The root verifying key (see [`RootKey`]).
    pub fn root_key(&self) -> &RootKey {
        &self.root_key
    }

    pub fn params(&self) -> Params {
        self.params
    }

    /// Circuit data proving nodes of `level` (`q ≤ level ≤ ℓ`).
    pub(crate) fn data(&self, level: u32) -> Result<&CircuitData<F, C, D>, Error> {
        let q = self.params.log_bucket;
        if level == q {
            Ok(&self.bucket.data)
        } else if level > q && level <= self.params.log_n {
            Ok(&self.levels[(level - q - 1) as usize].data)
        } else {
            Err(Error::input(format!(
                "level {level} has no proofs: proofs exist for levels {q}..={}",
                self.params.log_n
            )))
        }
    }

    pub(crate) fn level(&self, level: u32) -> Result<&LevelCircuit, Error> {
        let q = self.params.log_bucket;
        if level > q && level <= self.params.log_n {
            Ok(&self.levels[(level - q - 1) as usize])
        } else {
            Err(Error::input(format!(
                "level {level} is not an internal proof level ({}..={})",
                q + 1,
                self.params.log_n
            )))
        }
    }

    /// Digest of the root circuit's verifying key (hex), recorded in statements so that a
    /// verifier can tell it derived the same key.
    pub fn root_circuit_digest(&self) -> String {
        self.root_key.circuit_digest()
    }

    /// Number of gates (rows) of the circuit at `level`, as `2^degree_bits`.
    pub fn degree_bits(&self, level: u32) -> Result<usize, Error> {
        Ok(self.data(level)?.common.degree_bits())
    }
}

//! Keccak-256 in plonky2: the gadget behind digest translation (the paper's §5), where a node
//! proof shows that a Keccak Merkle node `K_v = Keccak-256(K_L ‖ K_R)` and a Poseidon node
//! `C_v` are over the same children.
//!
//! * [`CircuitBuilderKeccak`] adds the gadgets to plonky2's `CircuitBuilder`:
//!   Keccak-f\[1600\] ([`CircuitBuilderKeccak::keccak_f1600`]), Keccak-256 of a byte string
//!   whose length is fixed when the circuit is built ([`CircuitBuilderKeccak::keccak256`]), and
//!   the Merkle node hash ([`CircuitBuilderKeccak::keccak_node`]).
//! * [`KeccakNodeCircuit`] is the node hash as a circuit of its own, built once and proved per
//!   node, with the public statement `K_L ‖ K_R ‖ K_v`.
//!
//! "Keccak-256" is Ethereum's: the original Keccak padding `0x01 … 0x80` (not SHA-3's `0x06`),
//! rate 1088 bits (136 bytes), capacity 512, 24 rounds.
//!
//! ## Representation
//!
//! The state is 25 lanes `A[x + 5y]` (`x, y ∈ 0..5`) of 64 bits, every bit a Goldilocks
//! element constrained to `{0, 1}`; bit `z` of a lane is its `2^z` bit, and byte `k` of a
//! message or digest is bits `8k … 8k + 7`, least significant first (Keccak's own order, so
//! lane `i` is bytes `8i … 8i + 7` read little-endian). With bits, ρ and π are free (a
//! rotation is a renaming of wires) and the rest is a few Boolean functions per bit, each one
//! slot of a custom gate ([`gate::KeccakGate`], routed wires only, one constraint per output):
//!
//! * θ: `C[x] = ⊕_y A[x, y]` is one five-input XOR per bit (13 to a row), and
//!   `D[x][z] = C[x−1][z] ⊕ C[x+1][z−1]` one three-input XOR (20 to a row);
//! * the end of θ, `A'[x, y] = A[x, y] ⊕ D[x]`, and χ, `A[x, y] = B[x, y] ⊕ (¬B[x+1, y] ∧
//!   B[x+2, y])` with `B` the state after ρ and π, are fused: one operation takes the five
//!   `(A, D)` pairs that ρ and π bring to one row of `B` and outputs that row after χ (5 to a
//!   row, degree 6), so the 1,600 bits of `A'` are never wires;
//! * ι flips the bits of lane 0 where the round constant has a one (one XOR each).
//!
//! Bits known when the circuit is built (the zero initial state, the padding) are folded away
//! rather than wired. Two other lowerings are kept to measure the difference
//! ([`KeccakGates`]): three-input operations only, and plonky2's `ArithmeticGate` alone
//! (`c0·x·y + c1·z`: 4 operations per three-input XOR, 3 per χ). The ignored test
//! `keccak_bench_table` prints rows and times
//! (`cargo test -p reckle --release keccak_bench_table -- --ignored --nocapture`). Standard
//! recursion configuration; times are the best of three proofs, on a shared 2-core machine with
//! other builds running, and moved by up to 2× between runs (the ranges are over three runs):
//!
//! | lowering | rows per Keccak-f\[1600\] | node circuit rows (padded) | node proof |
//! |---|---|---|---|
//! | [`KeccakGates::Fused`] | 2,516 | 2,567 (2^12) | 1.4–2.7 s |
//! | [`KeccakGates::ThreeInput`] | 4,613 | 4,614 (2^13) | 3.1–5.9 s |
//! | [`KeccakGates::Arithmetic`] | 16,522 | 16,252 (2^14) | 7.2–11.6 s |
//!
//! A lookup-based representation (lanes as sixteen 4-bit limbs, XOR and `¬a ∧ b` as lookups
//! of `a + 16·b` in 256-entry tables) was measured on its basic step only: 1.20 rows per
//! two-input operation on a 64-bit lane (one packing operation and one lookup per limb). A round
//! needs at least 100 such operations (θ 50, χ 50) before the rotations of θ and ρ, which split
//! limbs with more lookups: at least 120 rows per round against 105 for the fused bit gate, so
//! it was not built.
//!
//! Digests cross the circuit boundary as eight 32-bit words, word `i` being digest bytes
//! `4i … 4i + 3` read little-endian ([`digest_to_words`]); words that enter a circuit are
//! range-checked by their bit decomposition.

pub mod gate;

use plonky2::field::extension::Extendable;
use plonky2::field::types::{Field, PrimeField64};
use plonky2::gates::arithmetic_base::ArithmeticGate;
use plonky2::gates::arithmetic_extension::ArithmeticExtensionGate;
use plonky2::gates::base_sum::BaseSumGate;
use plonky2::gates::constant::ConstantGate;
use plonky2::gates::coset_interpolation::CosetInterpolationGate;
use plonky2::gates::exponentiation::ExponentiationGate;
use plonky2::gates::lookup::LookupGate;
use plonky2::gates::lookup_table::LookupTableGate;
use plonky2::gates::multiplication_extension::MulExtensionGate;
use plonky2::gates::noop::NoopGate;
use plonky2::gates::poseidon::PoseidonGate;
use plonky2::gates::poseidon_mds::PoseidonMdsGate;
use plonky2::gates::public_input::PublicInputGate;
use plonky2::gates::random_access::RandomAccessGate;
use plonky2::gates::reducing::ReducingGate;
use plonky2::gates::reducing_extension::ReducingExtensionGate;
use plonky2::hash::hash_types::RichField;
use plonky2::iop::target::{BoolTarget, Target};
use plonky2::iop::witness::{PartialWitness, WitnessWrite};
use plonky2::plonk::circuit_builder::CircuitBuilder;
use plonky2::plonk::circuit_data::{CircuitConfig, CircuitData};
use plonky2::plonk::proof::ProofWithPublicInputs;
use plonky2::util::serialization::GateSerializer;
use plonky2::{get_gate_tag_impl, impl_gate_serializer, read_gate_impl};

use self::gate::{KeccakGate, KeccakOp};
use crate::{Error, C, D, F};

/// Number of rounds of Keccak-f\[1600\].
pub const ROUNDS: usize = 24;
/// Rate of Keccak-256 in bytes (1088 bits, 17 lanes).
pub const RATE_BYTES: usize = 136;
/// Lanes of the state.
pub const LANES: usize = 25;

/// A Keccak-f\[1600\] state in a circuit: lane `x + 5y`, bit `z` least significant first.
pub type KeccakState = [[BoolTarget; 64]; LANES];
/// A 256-bit digest in a circuit: bit `8k + j` is bit `j` of byte `k`.
pub type DigestTarget = [BoolTarget; 256];
/// A digest as the eight 32-bit words that are its public form ([`digest_to_words`]).
pub type DigestWords = [Target; 8];

/// How the gadget lowers its Boolean operations to gates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeccakGates {
    /// The custom [`gate::KeccakGate`] with θ's parity as one five-input XOR and the end of θ
    /// fused into χ, five bits at a time ([`gate::KeccakOp::ThetaChi`]): the default.
    Fused,
    /// The custom gate with three-input operations only: two XORs per column parity bit, one
    /// XOR per bit for the end of θ, one χ per bit.
    ThreeInput,
    /// Only plonky2's `ArithmeticGate`: kept for comparison.
    Arithmetic,
}

/// The Keccak gadgets, as methods on plonky2's circuit builder.
pub trait CircuitBuilderKeccak {
    /// Keccak-f\[1600\] (24 rounds of θ, ρ, π, χ, ι). The input bits must be Boolean.
    fn keccak_f1600(&mut self, state: &KeccakState) -> KeccakState;

    /// [`CircuitBuilderKeccak::keccak_f1600`] with a chosen lowering.
    fn keccak_f1600_with(&mut self, state: &KeccakState, gates: KeccakGates) -> KeccakState;

    /// Keccak-256 of a message of `input.len() / 8` bytes (the length is part of the circuit;
    /// `input.len()` must be a multiple of 8), bits in the order of [`DigestTarget`].
    fn keccak256(&mut self, input: &[BoolTarget]) -> DigestTarget;

    /// [`CircuitBuilderKeccak::keccak256`] with a chosen lowering.
    fn keccak256_with(&mut self, input: &[BoolTarget], gates: KeccakGates) -> DigestTarget;

    /// The Merkle node hash `Keccak-256(left ‖ right)` of two 32-byte children (one
    /// permutation).
    fn keccak_node(&mut self, left: &DigestTarget, right: &DigestTarget) -> DigestTarget;

    /// The bits of a digest given as words; range-checks every word to 32 bits.
    fn digest_from_words(&mut self, words: &DigestWords) -> DigestTarget;

    /// The words of a digest's bits.
    fn digest_to_words(&mut self, digest: &DigestTarget) -> DigestWords;
}

impl CircuitBuilderKeccak for CircuitBuilder<F, D> {
    fn keccak_f1600(&mut self, state: &KeccakState) -> KeccakState {
        self.keccak_f1600_with(state, KeccakGates::Fused)
    }

    fn keccak_f1600_with(&mut self, state: &KeccakState, gates: KeccakGates) -> KeccakState {
        let mut bits = Bits::new(self, gates);
        let s = state.map(|lane| lane.map(Bit::Wire));
        let out = bits.permute(s);
        out.map(|lane| lane.map(|b| bits.target(b)))
    }

    fn keccak256(&mut self, input: &[BoolTarget]) -> DigestTarget {
        self.keccak256_with(input, KeccakGates::Fused)
    }

    fn keccak256_with(&mut self, input: &[BoolTarget], gates: KeccakGates) -> DigestTarget {
        let mut bits = Bits::new(self, gates);
        bits.sponge(input)
    }

    fn keccak_node(&mut self, left: &DigestTarget, right: &DigestTarget) -> DigestTarget {
        let input: Vec<BoolTarget> = left.iter().chain(right.iter()).copied().collect();
        self.keccak256(&input)
    }

    fn digest_from_words(&mut self, words: &DigestWords) -> DigestTarget {
        let bits: Vec<BoolTarget> = words.iter().flat_map(|&w| self.split_le(w, 32)).collect();
        bits.try_into().expect("8 words of 32 bits")
    }

    fn digest_to_words(&mut self, digest: &DigestTarget) -> DigestWords {
        std::array::from_fn(|i| self.le_sum(digest[32 * i..32 * (i + 1)].iter()))
    }
}

/// A bit while the circuit is being built: known now, or a wire.
#[derive(Clone, Copy, Debug)]
enum Bit {
    Const(bool),
    Wire(BoolTarget),
}

/// Lowers Boolean operations to gates, folding known bits.
struct Bits<'a> {
    b: &'a mut CircuitBuilder<F, D>,
    gates: KeccakGates,
}

impl<'a> Bits<'a> {
    fn new(b: &'a mut CircuitBuilder<F, D>, gates: KeccakGates) -> Self {
        Self { b, gates }
    }

    fn target(&mut self, bit: Bit) -> BoolTarget {
        match bit {
            Bit::Const(v) => self.b.constant_bool(v),
            Bit::Wire(t) => t,
        }
    }

    /// One operation of the custom gate on wires.
    fn gate_op(&mut self, op: KeccakOp, inputs: &[BoolTarget]) -> Vec<Bit> {
        let gate = KeccakGate::new(op, &self.b.config);
        let (row, i) = self.b.find_slot(gate.clone(), &[], &[]);
        for (t, w) in inputs.iter().zip(gate.inputs(i)) {
            self.b.connect(t.target, Target::wire(row, w));
        }
        gate.outputs(i).map(|w| Bit::Wire(BoolTarget::new_unsafe(Target::wire(row, w)))).collect()
    }

    /// One three-input operation on wires.
    fn op(&mut self, op: KeccakOp, a: BoolTarget, b: BoolTarget, c: BoolTarget) -> Bit {
        if self.gates != KeccakGates::Arithmetic {
            return self.gate_op(op, &[a, b, c])[0];
        }
        let xor = |b: &mut CircuitBuilder<F, D>, x: Target, y: Target| {
            let s = b.add(x, y);
            b.arithmetic(-F::TWO, F::ONE, x, y, s)
        };
        let out = match op {
            KeccakOp::Xor3 => {
                let ab = xor(self.b, a.target, b.target);
                xor(self.b, ab, c.target)
            }
            KeccakOp::Chi => {
                // t = c − bc = ¬b ∧ c
                let t = self.b.arithmetic(F::NEG_ONE, F::ONE, b.target, c.target, c.target);
                xor(self.b, a.target, t)
            }
            _ => unreachable!("three-input operations only"),
        };
        Bit::Wire(BoolTarget::new_unsafe(out))
    }

    /// `⊕` of any number of bits: known bits folded, then one five-input XOR where the lowering
    /// has it, else three-input XORs.
    fn xor_many(&mut self, bits: &[Bit]) -> Bit {
        let mut k = false;
        let mut wires: Vec<Bit> = Vec::with_capacity(bits.len());
        for &x in bits {
            match x {
                Bit::Const(v) => k ^= v,
                w => wires.push(w),
            }
        }
        if self.gates == KeccakGates::Fused && wires.len() >= 4 {
            while wires.len() > 5 {
                let t = self.xor_many(&wires[..5]);
                wires.splice(..5, [t]);
            }
            let mut ins: Vec<BoolTarget> = wires.iter().map(|&w| self.target(w)).collect();
            if ins.len() == 4 {
                ins.push(self.b.constant_bool(k));
            } else if k {
                let t = self.gate_op(KeccakOp::Xor5, &ins)[0];
                return self.xor3(t, Bit::Const(true), Bit::Const(false));
            }
            return self.gate_op(KeccakOp::Xor5, &ins)[0];
        }
        while wires.len() > 3 {
            let t = self.xor3(wires[0], wires[1], wires[2]);
            wires.splice(..3, [t]);
        }
        wires.resize(3, Bit::Const(false));
        wires[2] = self.xor3(wires[2], Bit::Const(k), Bit::Const(false));
        self.xor3(wires[0], wires[1], wires[2])
    }

    /// `a ⊕ b ⊕ c`.
    fn xor3(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        let mut k = false;
        let mut wires = Vec::with_capacity(3);
        for x in [a, b, c] {
            match x {
                Bit::Const(v) => k ^= v,
                Bit::Wire(t) => wires.push(t),
            }
        }
        match (wires.as_slice(), k) {
            ([], _) => Bit::Const(k),
            ([w], false) => Bit::Wire(*w),
            ([w], true) => {
                let (one, zero) = (self.b._true(), self.b._false());
                self.op(KeccakOp::Xor3, *w, one, zero)
            }
            ([w1, w2], _) => {
                let k = self.b.constant_bool(k);
                self.op(KeccakOp::Xor3, *w1, *w2, k)
            }
            ([w1, w2, w3], _) => self.op(KeccakOp::Xor3, *w1, *w2, *w3),
            _ => unreachable!("three inputs"),
        }
    }

    /// `a ⊕ (¬b ∧ c)`.
    fn chi(&mut self, a: Bit, b: Bit, c: Bit) -> Bit {
        match (b, c) {
            (Bit::Const(true), _) | (_, Bit::Const(false)) => a,
            (Bit::Const(false), c) => self.xor3(a, c, Bit::Const(false)),
            (b, Bit::Const(true)) => self.xor3(a, b, Bit::Const(true)),
            (Bit::Wire(b), Bit::Wire(c)) => {
                let a = self.target(a);
                self.op(KeccakOp::Chi, a, b, c)
            }
        }
    }

    fn round(&mut self, a: [[Bit; 64]; LANES], rc: u64) -> [[Bit; 64]; LANES] {
        let rho = rho_offsets();
        // θ: C[x] = ⊕_y A[x, y], D[x][z] = C[x−1][z] ⊕ C[x+1][z−1].
        let mut c = [[Bit::Const(false); 64]; 5];
        for (x, cx) in c.iter_mut().enumerate() {
            for (z, cxz) in cx.iter_mut().enumerate() {
                let col: [Bit; 5] = std::array::from_fn(|y| a[x + 5 * y][z]);
                *cxz = self.xor_many(&col);
            }
        }
        let fused = self.gates == KeccakGates::Fused;
        let mut d = [[Bit::Const(false); 64]; 5];
        if fused {
            for (x, dx) in d.iter_mut().enumerate() {
                for (z, dxz) in dx.iter_mut().enumerate() {
                    *dxz = self.xor3(c[(x + 4) % 5][z], c[(x + 1) % 5][(z + 63) % 64], Bit::Const(false));
                }
            }
        }
        // ρ and π move bit z of lane (x, y) to bit z + r[x, y] of lane (y, 2x + 3y); for each
        // destination bit, `src` is the lane and bit it comes from.
        let mut src = [[(0usize, 0usize); 64]; LANES];
        for x in 0..5 {
            for y in 0..5 {
                let r = rho[x + 5 * y] as usize;
                for z in 0..64 {
                    src[y + 5 * ((2 * x + 3 * y) % 5)][(z + r) % 64] = (x + 5 * y, z);
                }
            }
        }
        // The end of θ, A'[x, y][z] = A[x, y][z] ⊕ D[x][z], then χ along each row of five.
        let mut out = [[Bit::Const(false); 64]; LANES];
        for y in 0..5 {
            for z in 0..64 {
                let ins: [(Bit, Bit); 5] = std::array::from_fn(|x| {
                    let (lane, bit) = src[x + 5 * y][z];
                    (a[lane][bit], d[lane % 5][bit])
                });
                let all_wires = ins.iter().all(|(p, q)| matches!((p, q), (Bit::Wire(_), Bit::Wire(_))));
                let row: Vec<Bit> = if fused && all_wires {
                    let ws: Vec<BoolTarget> = ins.iter().flat_map(|&(p, q)| [self.target(p), self.target(q)]).collect();
                    self.gate_op(KeccakOp::ThetaChi, &ws)
                } else {
                    let b: Vec<Bit> = (0..5)
                        .map(|x| {
                            let (lane, bit) = src[x + 5 * y][z];
                            if fused {
                                self.xor3(ins[x].0, ins[x].1, Bit::Const(false))
                            } else {
                                let x_ = lane % 5;
                                self.xor3(a[lane][bit], c[(x_ + 4) % 5][bit], c[(x_ + 1) % 5][(bit + 63) % 64])
                            }
                        })
                        .collect();
                    (0..5).map(|x| self.chi(b[x], b[(x + 1) % 5], b[(x + 2) % 5])).collect()
                };
                for (x, bit) in row.into_iter().enumerate() {
                    out[x + 5 * y][z] = bit;
                }
            }
        }
        // ι
        for (z, bit) in out[0].iter_mut().enumerate() {
            if (rc >> z) & 1 == 1 {
                *bit = self.xor3(*bit, Bit::Const(true), Bit::Const(false));
            }
        }
        out
    }

    fn permute(&mut self, mut state: [[Bit; 64]; LANES]) -> [[Bit; 64]; LANES] {
        for rc in round_constants() {
            state = self.round(state, rc);
        }
        state
    }

    fn sponge(&mut self, input: &[BoolTarget]) -> DigestTarget {
        assert!(input.len().is_multiple_of(8), "Keccak-256 input must be whole bytes, got {} bits", input.len());
        let len = input.len() / 8;
        // pad10*1 on bytes: 0x01 right after the message, 0x80 in the block's last byte.
        let padded = (len / RATE_BYTES + 1) * RATE_BYTES;
        let mut msg: Vec<Bit> = input.iter().map(|&t| Bit::Wire(t)).collect();
        msg.resize(8 * padded, Bit::Const(false));
        msg[8 * len] = Bit::Const(true);
        msg[8 * padded - 1] = Bit::Const(true);

        let mut state = [[Bit::Const(false); 64]; LANES];
        for block in msg.chunks(8 * RATE_BYTES) {
            for (i, &m) in block.iter().enumerate() {
                let (lane, z) = (i / 64, i % 64);
                state[lane][z] = self.xor3(state[lane][z], m, Bit::Const(false));
            }
            state = self.permute(state);
        }
        std::array::from_fn(|i| self.target(state[i / 64][i % 64]))
    }
}

/// ρ's rotation offsets `r[x + 5y]`: `(t + 1)(t + 2)/2 mod 64` along the walk
/// `(x, y) ← (y, 2x + 3y)` from `(1, 0)` (FIPS 202, Algorithm 2).
pub fn rho_offsets() -> [u32; LANES] {
    let mut r = [0u32; LANES];
    let (mut x, mut y) = (1usize, 0usize);
    for t in 0..24u32 {
        r[x + 5 * y] = ((t + 1) * (t + 2) / 2) % 64;
        (x, y) = (y, (2 * x + 3 * y) % 5);
    }
    r
}

/// ι's round constants, from the degree-8 LFSR `rc(t)` (FIPS 202, Algorithms 5 and 6): bit
/// `2^j − 1` of round `i`'s constant is `rc(j + 7i)`.
pub fn round_constants() -> [u64; ROUNDS] {
    let mut lfsr: u8 = 1;
    let mut rcs = [0u64; ROUNDS];
    for rc in rcs.iter_mut() {
        for j in 0..7 {
            if lfsr & 1 == 1 {
                *rc |= 1u64 << ((1u32 << j) - 1);
            }
            lfsr = if lfsr & 0x80 != 0 { (lfsr << 1) ^ 0x71 } else { lfsr << 1 };
        }
    }
    rcs
}

/// A digest's public form: word `i` is bytes `4i … 4i + 3` read little-endian.
pub fn digest_to_words(digest: &[u8; 32]) -> [u32; 8] {
    std::array::from_fn(|i| u32::from_le_bytes(digest[4 * i..4 * i + 4].try_into().expect("4 bytes")))
}

/// Inverse of [`digest_to_words`].
pub fn digest_from_words(words: &[u32; 8]) -> [u8; 32] {
    let mut d = [0u8; 32];
    for (i, w) in words.iter().enumerate() {
        d[4 * i..4 * i + 4].copy_from_slice(&w.to_le_bytes());
    }
    d
}

/// Serializes the gates of circuits that use the Keccak gadget (their common data, hence their
/// verifier keys): plonky2's `DefaultGateSerializer` knows only plonky2's own gates. The tags of
/// those gates are the default serializer's, in its order, and [`gate::KeccakGate`] comes last.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeccakGateSerializer;

impl<F: RichField + Extendable<D>, const D: usize> GateSerializer<F, D> for KeccakGateSerializer {
    impl_gate_serializer! {
        KeccakGateSerializer,
        ArithmeticGate,
        ArithmeticExtensionGate<D>,
        BaseSumGate<2>,
        ConstantGate,
        CosetInterpolationGate<F, D>,
        ExponentiationGate<F, D>,
        LookupGate,
        LookupTableGate,
        MulExtensionGate<D>,
        NoopGate,
        PoseidonMdsGate<F, D>,
        PoseidonGate<F, D>,
        PublicInputGate,
        RandomAccessGate<F, D>,
        ReducingExtensionGate<D>,
        ReducingGate<D>,
        KeccakGate
    }
}

/// Number of public inputs of a [`KeccakNodeCircuit`] proof: `K_L (8) ‖ K_R (8) ‖ K_v (8)`.
pub const NODE_PUBLIC_INPUTS: usize = 24;

/// The Keccak Merkle node hash `K_v = Keccak-256(K_L ‖ K_R)` as a circuit, built once.
pub struct KeccakNodeCircuit {
    data: CircuitData<F, C, D>,
    left: DigestWords,
    right: DigestWords,
    parent: DigestWords,
    gates: usize,
}

/// Registers the node statement's public inputs, in its one order: `K_L ‖ K_R ‖ K_v`.
fn register_node(b: &mut CircuitBuilder<F, D>, left: &DigestWords, right: &DigestWords, parent: &DigestWords) {
    b.register_public_inputs(left);
    b.register_public_inputs(right);
    b.register_public_inputs(parent);
}

impl KeccakNodeCircuit {
    /// Builds the circuit with the custom gate (the standard recursion configuration, so its
    /// proofs can be verified inside the crate's other circuits).
    pub fn build() -> Self {
        Self::build_with(KeccakGates::Fused)
    }

    /// Builds the circuit with a chosen lowering (for measurements).
    pub fn build_with(gates: KeccakGates) -> Self {
        let mut b = CircuitBuilder::<F, D>::new(CircuitConfig::standard_recursion_config());
        let left: DigestWords = b.add_virtual_target_arr();
        let right: DigestWords = b.add_virtual_target_arr();
        let lbits = b.digest_from_words(&left);
        let rbits = b.digest_from_words(&right);
        let input: Vec<BoolTarget> = lbits.iter().chain(rbits.iter()).copied().collect();
        let pbits = b.keccak256_with(&input, gates);
        let parent = b.digest_to_words(&pbits);
        register_node(&mut b, &left, &right, &parent);
        let num_gates = b.num_gates();
        let data = b.build::<C>();
        Self { data, left, right, parent, gates: num_gates }
    }

    /// Gates (rows) used before plonky2 pads the trace to a power of two.
    pub fn num_gates(&self) -> usize {
        self.gates
    }

    /// `log2` of the padded trace length.
    pub fn degree_bits(&self) -> usize {
        self.data.common.degree_bits()
    }

    /// The built circuit (for recursion: its verifier data and common data).
    pub fn data(&self) -> &CircuitData<F, C, D> {
        &self.data
    }

    fn witness(&self, left: &[u8; 32], right: &[u8; 32]) -> Result<PartialWitness<F>, Error> {
        let mut pw = PartialWitness::new();
        for (targets, digest) in [(&self.left, left), (&self.right, right)] {
            for (&t, w) in targets.iter().zip(digest_to_words(digest)) {
                pw.set_target(t, F::from_canonical_u32(w)).map_err(|e| Error::Proving(e.to_string()))?;
            }
        }
        Ok(pw)
    }

    /// Proves `K_v = Keccak-256(left ‖ right)`; the parent is computed by the circuit and read
    /// from the proof with [`KeccakNodeCircuit::parent`].
    pub fn prove(&self, left: &[u8; 32], right: &[u8; 32]) -> Result<ProofWithPublicInputs<F, C, D>, Error> {
        let pw = self.witness(left, right)?;
        self.data.prove(pw).map_err(|e| Error::Proving(format!("Keccak node: {e}")))
    }

    /// Like [`KeccakNodeCircuit::prove`], with the expected parent also put into the witness:
    /// proving fails ([`Error::Proving`]) unless `parent = Keccak-256(left ‖ right)`.
    pub fn prove_expecting(
        &self,
        left: &[u8; 32],
        right: &[u8; 32],
        parent: &[u8; 32],
    ) -> Result<ProofWithPublicInputs<F, C, D>, Error> {
        let mut pw = self.witness(left, right)?;
        for (&t, w) in self.parent.iter().zip(digest_to_words(parent)) {
            pw.set_target(t, F::from_canonical_u32(w)).map_err(|e| Error::Proving(e.to_string()))?;
        }
        self.data.prove(pw).map_err(|e| Error::Proving(format!("Keccak node (expected parent {}): {e}", hex::encode(parent))))
    }

    /// `(K_L, K_R, K_v)` from a proof's public inputs (unverified).
    pub fn statement(proof: &ProofWithPublicInputs<F, C, D>) -> Result<[[u8; 32]; 3], Error> {
        if proof.public_inputs.len() != NODE_PUBLIC_INPUTS {
            return Err(Error::Malformed(format!(
                "a Keccak node proof has {NODE_PUBLIC_INPUTS} public inputs, got {}",
                proof.public_inputs.len()
            )));
        }
        let mut out = [[0u8; 32]; 3];
        for (d, chunk) in out.iter_mut().zip(proof.public_inputs.chunks(8)) {
            let mut words = [0u32; 8];
            for (w, x) in words.iter_mut().zip(chunk) {
                *w = u32::try_from(x.to_canonical_u64())
                    .map_err(|_| Error::Malformed(format!("public input {x} is not a 32-bit word")))?;
            }
            *d = digest_from_words(&words);
        }
        Ok(out)
    }

    /// The parent digest a proof claims (unverified).
    pub fn parent(proof: &ProofWithPublicInputs<F, C, D>) -> Result<[u8; 32], Error> {
        Ok(Self::statement(proof)?[2])
    }

    /// Checks that `proof` shows `parent = Keccak-256(left ‖ right)`.
    pub fn verify(
        &self,
        proof: &ProofWithPublicInputs<F, C, D>,
        left: &[u8; 32],
        right: &[u8; 32],
        parent: &[u8; 32],
    ) -> Result<(), Error> {
        let [l, r, p] = Self::statement(proof)?;
        if (&l, &r, &p) != (left, right, parent) {
            return Err(Error::Verification(format!(
                "the proof is of Keccak-256({} ‖ {}) = {}, not the expected statement",
                hex::encode(l),
                hex::encode(r),
                hex::encode(p)
            )));
        }
        self.data.verify(proof.clone()).map_err(|e| Error::Verification(format!("Keccak node proof: {e}")))
    }
}

#[cfg(test)]
mod tests;

//! Attacks on what the Hekaton verifier and the workflow steps trust: tampered verifying and
//! proving keys, a setup whose subcircuits lie about sharing a shape, and malformed bytes fed
//! to every decoder. Each must end in an error: never a panic, never "verified".

use std::sync::OnceLock;

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::{One, Zero};
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::fp::FpVar;
use ark_relations::gr1cs::{ConstraintSystemRef, SynthesisError};
use hekaton::circuits::{bench_circuit, BenchSubcircuit};
use hekaton::merkle::{hash_leaf, poseidon_config, root_from_path, MerkleTree};
use hekaton::mirage::{self, from_bytes, to_bytes};
use hekaton::partition::{Entry, Layout, Partitioned, Portals, Subcircuit, Traces};
use hekaton::workflow::{
    check_circuit, coordinator_assemble, coordinator_challenge, coordinator_traces, prove, setup,
    verify, worker_commit, ChallengeRound, HekatonProof, ProveMessage, ProvingKey, VerifyingKey,
    VkDigest, WitnessShare,
};
use hekaton::Error;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

struct Fixture {
    circuit: Partitioned<Fr, BenchSubcircuit>,
    pk: ProvingKey<E>,
    vk: VerifyingKey<E>,
    proof: HekatonProof<E>,
}

/// One honest setup and proof, shared by the tests: three subcircuits (three keys: first,
/// middle, last), a handful of constraints each.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let circuit = bench_circuit(3, 4, 1, Fr::from(5u64));
        let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng(1)).expect("setup");
        let proof = prove(&pk, &circuit, &mut rng(2)).expect("prove");
        verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).expect("honest proof verifies");
        Fixture {
            circuit,
            pk,
            vk,
            proof,
        }
    })
}

/// A proof "from scratch" for a false statement: leaf 0 holds `x`, no subcircuit proof is
/// valid. Only a verifier that checks no subcircuit can accept it.
fn forged_proof(vk: &VerifyingKey<E>, x: &[Fr], k: usize) -> HekatonProof<E> {
    let cfg = poseidon_config::<Fr>();
    let path = vec![Fr::zero(); vk.layout.tree_depth()];
    let root = root_from_path(&cfg, 0, hash_leaf(&cfg, x), &path);
    let f = fixture();
    HekatonProof {
        commitments: f
            .proof
            .commitments
            .iter()
            .cycle()
            .take(k)
            .copied()
            .collect(),
        proofs: f.proof.proofs.iter().cycle().take(k).copied().collect(),
        root,
        input_path: path,
    }
}

/// Sends a tampered key through its encoding and the verifier: it must be refused when
/// decoded and when verifying, with a typed error naming what is wrong: never accepted and
/// never a panic.
fn assert_key_refused(vk: &VerifyingKey<E>, x: &[Fr], proof: &HekatonProof<E>) {
    let decoded = from_bytes::<VerifyingKey<E>>(&to_bytes(vk).unwrap());
    assert!(
        matches!(
            decoded,
            Err(Error::Malformed { .. } | Error::MalformedKey(_))
        ),
        "tampered key decoded: {decoded:?}"
    );
    let res = verify(vk, x, proof, &mut rng(3));
    assert!(
        matches!(res, Err(Error::Malformed { .. } | Error::MalformedKey(_))),
        "tampered key not refused: {res:?}"
    );
    assert!(vk.check().is_err());
}

#[test]
fn vk_with_short_shape_of_is_rejected() {
    let f = fixture();
    let mut vk = f.vk.clone();
    vk.shape_of.pop();
    assert_key_refused(&vk, &f.circuit.public_inputs, &f.proof);
}

#[test]
fn vk_with_shape_of_past_vks_is_rejected() {
    // Every subcircuit points past `vks`: a verifier that loops over `vks` checks nothing, and
    // a forged proof of a false statement goes through.
    let f = fixture();
    let mut vk = f.vk.clone();
    let past = vk.vks.len() as u32;
    vk.shape_of.iter_mut().for_each(|s| *s = past);
    let x = [Fr::from(424242u64)];
    assert_key_refused(&vk, &x, &forged_proof(&vk, &x, 3));
    // One subcircuit out of range.
    let mut vk = f.vk.clone();
    vk.shape_of[2] = past;
    assert_key_refused(&vk, &f.circuit.public_inputs, &f.proof);
}

#[test]
fn vk_with_empty_vks_is_rejected() {
    let f = fixture();
    let mut vk = f.vk.clone();
    vk.vks.clear();
    let x = [Fr::from(424242u64)];
    assert_key_refused(&vk, &x, &forged_proof(&vk, &x, 3));
}

#[test]
fn vk_without_subcircuits_is_rejected() {
    // An empty batch: no subcircuit, no subcircuit proof, only leaf 0 to check.
    let f = fixture();
    let mut vk = f.vk.clone();
    vk.layout.subcircuits.clear();
    vk.layout.names.clear();
    vk.shape_of.clear();
    vk.vks.clear();
    let x = [Fr::from(424242u64)];
    assert_key_refused(&vk, &x, &forged_proof(&vk, &x, 0));
}

#[test]
fn vk_whose_last_subcircuit_skips_the_permutation_check_is_rejected() {
    // The last subcircuit verified under the middle one's key: the T = A check would be gone.
    let f = fixture();
    let mut vk = f.vk.clone();
    vk.shape_of[2] = vk.shape_of[1];
    assert_key_refused(&vk, &f.circuit.public_inputs, &f.proof);
}

#[test]
fn vk_with_wrong_input_count_is_rejected() {
    // Subcircuit keys with an instance query of the wrong length.
    let f = fixture();
    let mut vk = f.vk.clone();
    vk.vks[1].ic_query.pop();
    assert_key_refused(&vk, &f.circuit.public_inputs, &f.proof);
    let mut vk = f.vk.clone();
    vk.vks[0].ic_query.clear();
    assert_key_refused(&vk, &f.circuit.public_inputs, &f.proof);
}

/// Subcircuit 0 hands the public input `x` on; subcircuits 1 and 2 declare the same shape, but
/// subcircuit 2, when `strict`, requires `x = 7`; subcircuit 3 reads the result.
struct Lying {
    index: usize,
    strict: bool,
}

impl Subcircuit<Fr> for Lying {
    fn shape(&self) -> String {
        match self.index {
            0 => "first",
            3 => "last",
            _ => "middle",
        }
        .into()
    }

    fn generate_constraints(
        &self,
        _cs: ConstraintSystemRef<Fr>,
        public_inputs: &[FpVar<Fr>],
        portals: &mut Portals<Fr>,
    ) -> Result<(), SynthesisError> {
        match self.index {
            0 => {
                let x = public_inputs
                    .first()
                    .ok_or(SynthesisError::AssignmentMissing)?;
                portals.set("w0", x)
            }
            1 | 2 => {
                let w = portals.get(&format!("w{}", self.index - 1))?;
                if self.strict {
                    w.enforce_equal(&FpVar::Constant(Fr::from(7u64)))?;
                }
                portals.set(&format!("w{}", self.index), &w)
            }
            _ => portals.get("w2").map(|_| ()),
        }
    }
}

fn lying(x: u64, strict: bool) -> Partitioned<Fr, Lying> {
    Partitioned {
        public_inputs: vec![Fr::from(x)],
        subcircuits: (0..4)
            .map(|index| Lying {
                index,
                strict: strict && index == 2,
            })
            .collect(),
    }
}

#[test]
fn setup_refuses_a_shared_key_over_different_constraints() {
    // The circuit says "x = 7" (subcircuit 2). If setup lets subcircuit 2 share subcircuit 1's
    // key, the key attests to subcircuit 1's constraints in its place, and a prover that runs
    // the lenient subcircuit in slot 2 proves x = 3.
    let honest = lying(7, true);
    match setup::<E, _, _>(&honest, &mut rng(1)) {
        Err(e) => {
            assert!(e.to_string().contains("different constraints"), "{e}");
            assert!(
                matches!(&e, Error::SharedShapeMismatch { shape, first: 1, other: 2 } if shape == "middle"),
                "{e:?}"
            );
        }
        Ok((pk, vk)) => {
            let cheat = lying(3, false);
            let accepted = prove(&pk, &cheat, &mut rng(2))
                .map(|p| verify(&vk, &cheat.public_inputs, &p, &mut rng(3)).is_ok())
                .unwrap_or(false);
            panic!("setup accepted a shared key over different constraints; a proof of the false statement x = 3 verified: {accepted}");
        }
    }
}

#[test]
fn tampered_proving_keys_are_errors() {
    let f = fixture();
    f.pk.check().unwrap();
    let mut other = f.pk.clone();
    other.pks.swap(0, 1);
    let mut short = f.pk.clone();
    short.vk.shape_of.pop();
    let mut few = f.pk.clone();
    few.pks.pop();
    let mut past = f.pk.clone();
    past.vk.shape_of[1] = 9;
    for pk in [short, few, past, other] {
        assert!(from_bytes::<ProvingKey<E>>(&to_bytes(&pk).unwrap()).is_err());
        assert!(pk.subcircuit_key(2).is_err() || pk.check().is_err());
        assert!(prove(&pk, &f.circuit, &mut rng(2)).is_err());
    }
    // A Mirage proving key whose recorded sizes overflow.
    let mut pk = f.pk.pks[0].clone();
    pk.num_instance = u64::MAX;
    assert!(from_bytes::<mirage::ProvingKey<E>>(&to_bytes(&pk).unwrap()).is_err());
    assert!(matches!(pk.check_shape(), Err(Error::MalformedKey(_))));
}

#[test]
fn malformed_merkle_trees_are_errors() {
    let levels: [Vec<Vec<Fr>>; 5] = [
        vec![],
        vec![vec![]],
        vec![vec![Fr::one(), Fr::one()], vec![]],
        vec![vec![Fr::one()], vec![Fr::one()]],
        vec![vec![Fr::one(); 3], vec![Fr::one()]],
    ];
    for levels in levels {
        let tree = MerkleTree { levels };
        assert!(from_bytes::<MerkleTree<Fr>>(&to_bytes(&tree).unwrap()).is_err());
        let _ = tree.depth();
        assert!(matches!(tree.root(), Err(Error::Malformed { .. })));
        assert!(tree.path(0).is_err() && tree.path(1).is_err());
    }
}

#[test]
fn malformed_traces_are_errors() {
    let e = Entry {
        address: Fr::zero(),
        value: Fr::zero(),
    };
    let cases = [
        (vec![], vec![], vec![3u64]),
        (vec![e; 2], vec![e], vec![2]),
        (vec![e; 2], vec![e; 2], vec![1, u64::MAX]),
    ];
    for (t, a, slice_lengths) in cases {
        let traces = Traces {
            t,
            a,
            slice_lengths,
        };
        assert!(from_bytes::<Traces<Fr>>(&to_bytes(&traces).unwrap()).is_err());
        assert!(matches!(traces.slices(), Err(Error::Malformed { .. })));
    }
}

#[test]
fn malformed_worker_messages_are_errors() {
    let f = fixture();
    let layout: &Layout = &f.pk.vk.layout;
    let (_, shares) = coordinator_traces(layout, &f.circuit, &mut rng(9)).unwrap();
    let commitments: Vec<_> = shares
        .iter()
        .map(|s| {
            worker_commit(
                &f.pk.pks[f.pk.vk.shape_of[s.index as usize] as usize],
                s,
                &mut rng(4),
            )
            .unwrap()
            .0
        })
        .collect();
    // A share that claims a subcircuit outside the layout, or carries the wrong slice length.
    let mut bad_index = shares.clone();
    bad_index[2].index = 7;
    let mut short = shares.clone();
    short[1].t_values.clear();
    let mut swapped = shares.clone();
    swapped.swap(0, 1);
    for shares in [bad_index, short, swapped] {
        let decoded: Vec<_> = shares
            .iter()
            .map(|s| from_bytes::<WitnessShare<Fr>>(&to_bytes(s).unwrap()))
            .collect();
        let res = coordinator_challenge(&f.vk, &f.circuit.public_inputs, &shares, &commitments);
        assert!(
            decoded.iter().any(Result::is_err) || matches!(res, Err(Error::ShapeMismatch { .. })),
            "{res:?}"
        );
        assert!(res.is_err());
    }
    // A coordinator state whose tree is malformed.
    let round =
        coordinator_challenge(&f.vk, &f.circuit.public_inputs, &shares, &commitments).unwrap();
    for levels in [
        vec![],
        vec![vec![Fr::one()]],
        vec![vec![Fr::one(); 4], vec![Fr::one(); 2], vec![]],
    ] {
        let bad = ChallengeRound {
            tree: MerkleTree { levels },
            ..round.clone()
        };
        assert!(from_bytes::<ChallengeRound<Fr>>(&to_bytes(&bad).unwrap()).is_err());
        assert!(
            coordinator_assemble::<E>(&bad, commitments.clone(), f.proof.proofs.clone()).is_err()
        );
    }
    // A prove message with short paths.
    let mut msg = round.messages[0].clone();
    msg.own_path.pop();
    assert!(from_bytes::<ProveMessage<Fr>>(&to_bytes(&msg).unwrap()).is_err());
    // A proof with one subcircuit proof missing.
    let mut bad = f.proof.clone();
    bad.proofs.pop();
    assert!(from_bytes::<HekatonProof<E>>(&to_bytes(&bad).unwrap()).is_err());
    assert!(matches!(
        verify(&f.vk, &f.circuit.public_inputs, &bad, &mut rng(3)),
        Err(Error::ShapeMismatch { .. })
    ));
}

/// Every truncation and every one-byte change in the first bytes of a verifying key (the
/// layout and `shape_of`, where lengths and indices live) either fails to decode or yields a
/// key under which the honest proof is checked without a panic; the honest proof is accepted
/// only by the untouched key.
#[test]
fn mutated_verifying_key_bytes_never_panic() {
    let f = fixture();
    let bytes = to_bytes(&f.vk).unwrap();
    for cut in (0..bytes.len()).step_by(97) {
        assert!(from_bytes::<VerifyingKey<E>>(&bytes[..cut]).is_err());
    }
    let header = bytes.len().min(400);
    for pos in 0..header {
        for flip in [0x01u8, 0x80] {
            let mut b = bytes.clone();
            b[pos] ^= flip;
            if let Ok(vk) = from_bytes::<VerifyingKey<E>>(&b) {
                if vk != f.vk && vk.layout.subcircuits.len() < 64 && vk.shape_of.len() < 64 {
                    let _ = verify(&vk, &f.circuit.public_inputs, &f.proof, &mut rng(3));
                }
            }
        }
    }
}

#[test]
fn digest_pins_the_key_and_another_setup_is_another_key() {
    let f = fixture();
    let d = f.vk.digest().unwrap();
    let decoded: VerifyingKey<E> = from_bytes(&to_bytes(&f.vk).unwrap()).unwrap();
    assert_eq!(decoded.digest().unwrap(), d);
    let hex = d.to_string();
    assert_eq!(hex.len(), 64);
    assert_eq!(hex.parse::<VkDigest>().unwrap(), d);
    for bad in ["", "00", &hex[1..], &format!("{}g", &hex[1..])] {
        assert!(matches!(bad.parse::<VkDigest>(), Err(Error::BadDigest(_))));
    }
    f.vk.check_digest(&d).unwrap();
    // The same circuit set up again (other trapdoor): another digest, and the proof made
    // under the first key does not verify under the second.
    let (_, vk2) = setup::<E, _, _>(&f.circuit, &mut rng(99)).unwrap();
    let d2 = vk2.digest().unwrap();
    assert_ne!(d, d2);
    assert!(matches!(
        vk2.check_digest(&d),
        Err(Error::DigestMismatch { .. })
    ));
    assert!(verify(&vk2, &f.circuit.public_inputs, &f.proof, &mut rng(3)).is_err());
    // The key's constraint digests tie it to its circuit.
    check_circuit(&f.vk, &f.circuit).unwrap();
    let other = bench_circuit::<Fr>(3, 5, 1, Fr::from(5u64));
    assert!(matches!(
        check_circuit(&f.vk, &other),
        Err(Error::CircuitMismatch(_))
    ));
}

#[test]
fn a_key_for_lenient_subcircuits_is_not_a_key_for_the_strict_circuit() {
    // Both middle subcircuits lenient: they really share constraints, one key is fine. The
    // strict circuit has the same layout, but its subcircuit 2 does not match that key.
    let lenient = lying(7, false);
    let (_, vk) = setup::<E, _, _>(&lenient, &mut rng(1)).unwrap();
    assert_eq!(vk.shape_of[1], vk.shape_of[2]);
    check_circuit(&vk, &lenient).unwrap();
    let res = check_circuit(&vk, &lying(7, true));
    assert!(
        matches!(&res, Err(Error::CircuitMismatch(m)) if m.contains("subcircuit 2")),
        "{res:?}"
    );
}

/// An RNG that returns the same byte forever.
struct ConstRng(u8);

impl rand::RngCore for ConstRng {
    fn next_u32(&mut self) -> u32 {
        u32::from_le_bytes([self.0; 4])
    }
    fn next_u64(&mut self) -> u64 {
        u64::from_le_bytes([self.0; 8])
    }
    fn fill_bytes(&mut self, dest: &mut [u8]) {
        dest.fill(self.0)
    }
    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        dest.fill(self.0);
        Ok(())
    }
}

#[test]
fn cancelling_errors_in_two_subcircuits_of_one_shape_fail_under_a_constant_rng() {
    // Two middle subcircuits share a Mirage key, so one batch checks both. A verifier whose RNG
    // is constant gave them equal weights when the weights came from the RNG alone, and
    // C_1 + g, C_2 − g passed (review F6); the weights now hash every item.
    use ark_ec::{CurveGroup, PrimeGroup};
    let circuit = bench_circuit(8, 4, 1, Fr::from(5u64));
    let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng(1)).unwrap();
    let (i, j) = (1..8)
        .flat_map(|i| (i + 1..8).map(move |j| (i, j)))
        .find(|&(i, j)| vk.shape_of[i] == vk.shape_of[j])
        .expect("two subcircuits share a key");
    let proof = prove(&pk, &circuit, &mut rng(2)).unwrap();
    verify(&vk, &circuit.public_inputs, &proof, &mut ConstRng(1)).unwrap();
    let g = ark_bls12_381::G1Projective::generator();
    let mut bad = proof.clone();
    bad.proofs[i].c = (bad.proofs[i].c + g).into_affine();
    bad.proofs[j].c = (bad.proofs[j].c - g).into_affine();
    for byte in [0u8, 1, 0xff] {
        assert!(matches!(
            verify(&vk, &circuit.public_inputs, &bad, &mut ConstRng(byte)),
            Err(Error::BatchVerificationFailed)
        ));
    }
}

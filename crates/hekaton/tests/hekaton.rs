//! Hekaton end to end on BLS12-381: the benchmark circuit and the Merkle batch-update circuit
//! split into 1, 2 and 8 subcircuits, every workflow step through its serialized messages,
//! and the rejections the memory checker and the verifier must produce.

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::One;
use ark_r1cs_std::eq::EqGadget;
use ark_r1cs_std::fields::{fp::FpVar, FieldVar};
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystem};
use hekaton::circuits::{bench_circuit, merkle_update_circuit, BenchSubcircuit};
use hekaton::mirage::{self, from_bytes, to_bytes, Commitment, CommitmentRandomness, Proof};
use hekaton::partition::{Monolithic, Partitioned, Subcircuit};
use hekaton::workflow::{
    constraint_breakdown, coordinator_assemble, coordinator_challenge, coordinator_traces, prove,
    setup, verify, worker_commit, worker_prove, ChallengeRound, HekatonProof, ProveMessage,
    ProvingKey, VerifyingKey, WitnessShare,
};
use hekaton::Error;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Steps 1–5 with every message going through its byte encoding, and a hook that may tamper
/// with the witness shares before the workers commit (a cheating coordinator).
fn run_workflow<S: Subcircuit<Fr>>(
    pk: &ProvingKey<E>,
    circuit: &Partitioned<Fr, S>,
    tamper: impl FnOnce(&mut Vec<WitnessShare<Fr>>),
) -> Result<HekatonProof<E>, Error> {
    let mut r = rng(7);
    let (traces, mut shares) = coordinator_traces(&pk.vk.layout, circuit, &mut r)?;
    assert_eq!(traces.t.len(), pk.vk.layout.num_accesses());
    tamper(&mut shares);
    let mut commitments = Vec::new();
    let mut randomness = Vec::new();
    for share in &shares {
        let share: WitnessShare<Fr> = from_bytes(&to_bytes(share)?)?;
        let (d, kappa) = worker_commit(pk.subcircuit_key(share.index as usize)?, &share, &mut r)?;
        commitments.push(from_bytes::<Commitment<E>>(&to_bytes(&d)?)?);
        randomness.push(kappa);
    }
    let round = coordinator_challenge(&pk.vk, &circuit.public_inputs, &shares, &commitments)?;
    let round: ChallengeRound<Fr> = from_bytes(&to_bytes(&round)?)?;
    let mut proofs = Vec::new();
    for (i, share) in shares.iter().enumerate() {
        let msg: ProveMessage<Fr> = from_bytes(&to_bytes(&round.messages[i])?)?;
        let kappa: CommitmentRandomness<E> = randomness[i];
        let proof = worker_prove(
            pk,
            &circuit.subcircuits[i],
            &circuit.public_inputs,
            share,
            &commitments[i],
            &kappa,
            &msg,
            &mut r,
        )?;
        proofs.push(from_bytes::<Proof<E>>(&to_bytes(&proof)?)?);
    }
    coordinator_assemble(&round, commitments, proofs)
}

fn keys<S: Subcircuit<Fr>>(circuit: &Partitioned<Fr, S>) -> (ProvingKey<E>, VerifyingKey<E>) {
    setup::<E, _, _>(circuit, &mut rng(1)).expect("setup")
}

/// The monolithic circuit is satisfied: the partitioned one proves a true statement.
fn assert_monolithic_satisfied<S: Subcircuit<Fr>>(circuit: &Partitioned<Fr, S>) {
    let cs = ConstraintSystem::<Fr>::new_ref();
    Monolithic(circuit)
        .generate_constraints(cs.clone())
        .unwrap();
    assert!(cs.is_satisfied().unwrap());
}

fn completeness(k: usize, steps: usize, wires: usize) {
    let circuit = bench_circuit(k, steps, wires, Fr::from(11u64));
    assert_monolithic_satisfied(&circuit);
    let (pk, vk) = keys(&circuit);
    let proof = run_workflow(&pk, &circuit, |_| {}).expect("honest proving");
    let bytes = to_bytes(&proof).unwrap();
    let proof: HekatonProof<E> = from_bytes(&bytes).unwrap();
    verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).expect("honest proof verifies");
    // Another public input is rejected.
    assert!(verify(&vk, &[Fr::from(12u64)], &proof, &mut rng(3)).is_err());
    // The one-machine driver produces a proof that verifies too.
    let proof = prove(&pk, &circuit, &mut rng(5)).unwrap();
    verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).unwrap();
}

#[test]
fn bench_circuit_one_subcircuit() {
    completeness(1, 20, 3);
}

#[test]
fn bench_circuit_two_subcircuits() {
    completeness(2, 20, 3);
}

#[test]
fn bench_circuit_eight_subcircuits_share_keys() {
    let circuit = bench_circuit(8, 16, 2, Fr::from(5u64));
    let (pk, _) = keys(&circuit);
    // First subcircuit, kinds 1, 2, 3, 4, 0, 1, then the last (which also checks T = A):
    // seven setups for eight subcircuits.
    assert_eq!(pk.pks.len(), 7);
    assert_eq!(pk.vk.shape_of[1], pk.vk.shape_of[6]);
    completeness(8, 16, 2);
}

#[test]
fn merkle_update_circuit_eight_subcircuits() {
    // Two updates of a depth-4 tree, each path split into four subcircuits.
    let circuit = merkle_update_circuit::<Fr, _>(4, 2, 4, &mut rng(9));
    assert_eq!(circuit.subcircuits.len(), 8);
    assert_monolithic_satisfied(&circuit);
    let (pk, vk) = keys(&circuit);
    let proof = run_workflow(&pk, &circuit, |_| {}).unwrap();
    verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).unwrap();
    // A wrong new root is rejected.
    let wrong = [
        circuit.public_inputs[0],
        circuit.public_inputs[1] + Fr::one(),
    ];
    assert!(verify(&vk, &wrong, &proof, &mut rng(3)).is_err());
}

#[test]
fn merkle_update_with_wrong_new_root_cannot_be_proven() {
    let mut circuit = merkle_update_circuit::<Fr, _>(2, 1, 2, &mut rng(4));
    circuit.public_inputs[1] += Fr::one();
    let (pk, _) = keys(&circuit);
    assert!(matches!(
        run_workflow(&pk, &circuit, |_| {}),
        Err(Error::Unsatisfied(_))
    ));
}

#[test]
fn memory_checking_costs_per_shared_wire() {
    // Marginal memory-checking constraints of one more shared wire (one set, one get).
    let (_, few) = constraint_breakdown(&bench_circuit::<Fr>(4, 10, 2, Fr::one())).unwrap();
    let (_, more) = constraint_breakdown(&bench_circuit::<Fr>(4, 10, 3, Fr::one())).unwrap();
    let mem = |b: &[hekaton::augment::Breakdown]| b.iter().map(|x| x.memory).sum::<usize>();
    // 4 subcircuits write one more wire each, three of which are read: 4 sets + 3 gets, so
    // 7 accesses of 2 constraints in T, 7 entries of 4 in A and 4 set equalities.
    assert_eq!(mem(&more) - mem(&few), 7 * 2 + 7 * 4 + 4);
    // So a wire set once and read once costs 2·2 + 2·4 + 1 = 13 (issue target: ≤ 13).
    assert!(few.iter().all(|b| b.body >= 10));
}

/// Subcircuit 0 writes `x = seed²`; subcircuit 1 reads it and squares it, writing nothing,
/// so a changed read does not break any of subcircuit 1's own constraints.
struct WriterReader {
    reader: bool,
}

impl Subcircuit<Fr> for WriterReader {
    fn shape(&self) -> String {
        format!("writer-reader-{}", self.reader)
    }

    fn generate_constraints(
        &self,
        _cs: ark_relations::gr1cs::ConstraintSystemRef<Fr>,
        public_inputs: &[FpVar<Fr>],
        portals: &mut hekaton::partition::Portals<Fr>,
    ) -> Result<(), ark_relations::gr1cs::SynthesisError> {
        if self.reader {
            let x = portals.get("x")?;
            let y = &x * &x;
            y.enforce_not_equal(&FpVar::zero())?;
        } else {
            portals.set("x", &(&public_inputs[0] * &public_inputs[0]))?;
        }
        Ok(())
    }
}

fn writer_reader() -> Partitioned<Fr, WriterReader> {
    Partitioned {
        public_inputs: vec![Fr::from(3u64)],
        subcircuits: vec![
            WriterReader { reader: false },
            WriterReader { reader: true },
        ],
    }
}

#[test]
fn inconsistent_shared_wire_fails_the_permutation_check() {
    // Subcircuit 1 reads a value different from the one subcircuit 0 wrote: its T slice says
    // so, A (from the honest memory) does not. Every local check passes; only the permutation
    // check T = A, which the last subcircuit enforces, fails.
    let circuit = writer_reader();
    let (pk, vk) = keys(&circuit);
    let honest = run_workflow(&pk, &circuit, |_| {}).unwrap();
    verify(&vk, &circuit.public_inputs, &honest, &mut rng(3)).unwrap();
    let (_, mut shares) = coordinator_traces(&pk.vk.layout, &circuit, &mut rng(9)).unwrap();
    shares[1].t_values[0] += Fr::one();
    let commitments: Vec<Commitment<E>> = shares
        .iter()
        .map(|s| {
            worker_commit(pk.subcircuit_key(s.index as usize).unwrap(), s, &mut rng(2))
                .unwrap()
                .0
        })
        .collect();
    let round =
        coordinator_challenge(&pk.vk, &circuit.public_inputs, &shares, &commitments).unwrap();
    let last = round.leaves.last().unwrap();
    assert_ne!(last.t_product, last.a_product);
    let result = run_workflow(&pk, &circuit, |shares| {
        shares[1].t_values[0] += Fr::one();
    });
    assert!(matches!(result, Err(Error::Unsatisfied(_))), "{result:?}");
}

#[test]
fn inconsistent_shared_wire_in_both_traces_is_unprovable_writer_reader() {
    // The read changed in T and in A: A holds two values at address 0 (caught locally).
    // A is sorted stably, so the read is the second entry at its address.
    let circuit = writer_reader();
    let (pk, _) = keys(&circuit);
    let result = run_workflow(&pk, &circuit, |shares| {
        shares[1].t_values[0] += Fr::one();
        let hit = shares
            .iter_mut()
            .flat_map(|s| s.a_slice.iter_mut())
            .nth(1)
            .expect("the read is in A");
        hit.value += Fr::one();
    });
    assert!(matches!(result, Err(Error::Unsatisfied(_))), "{result:?}");
}

#[test]
fn inconsistent_shared_wire_in_both_traces_is_unprovable() {
    // The reader's value changed in T and in A alike: A now holds two values at one address.
    let circuit = bench_circuit(2, 10, 2, Fr::from(3u64));
    let (pk, _) = keys(&circuit);
    let addr = Fr::from(pk.vk.layout.subcircuits[1].addresses[0]);
    let result = run_workflow(&pk, &circuit, |shares| {
        let v = shares[1].t_values[0];
        shares[1].t_values[0] += Fr::one();
        let hit = shares
            .iter_mut()
            .flat_map(|s| s.a_slice.iter_mut())
            .filter(|e| e.address == addr && e.value == v)
            .nth(1)
            .expect("the read is in A, after the write");
        hit.value += Fr::one();
    });
    assert!(matches!(result, Err(Error::Unsatisfied(_))), "{result:?}");
}

#[test]
fn trace_that_is_not_a_permutation_is_rejected() {
    // A holds another value for every access to one address: still sorted and consistent,
    // not a permutation of T.
    let circuit = bench_circuit(2, 10, 2, Fr::from(3u64));
    let (pk, _) = keys(&circuit);
    let proof = run_workflow(&pk, &circuit, |shares| {
        let addr = shares[0].a_slice[0].address;
        for e in shares.iter_mut().flat_map(|s| s.a_slice.iter_mut()) {
            if e.address == addr {
                e.value += Fr::one();
            }
        }
    });
    assert!(matches!(proof, Err(Error::Unsatisfied(_))), "{proof:?}");
}

#[test]
fn unsorted_address_trace_is_unprovable() {
    let circuit = bench_circuit(2, 10, 2, Fr::from(3u64));
    let (pk, _) = keys(&circuit);
    let result = run_workflow(&pk, &circuit, |shares| {
        let a = &mut shares[1].a_slice;
        let n = a.len();
        a.swap(0, n - 1);
    });
    assert!(matches!(result, Err(Error::Unsatisfied(_))), "{result:?}");
}

#[test]
fn tampered_merkle_leaf_is_rejected() {
    let circuit = bench_circuit(4, 10, 2, Fr::from(3u64));
    let (pk, vk) = keys(&circuit);
    let proof = run_workflow(&pk, &circuit, |_| {}).unwrap();
    verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).unwrap();

    // Another path for leaf 0.
    let mut bad = proof.clone();
    bad.input_path[0] += Fr::one();
    assert!(verify(&vk, &circuit.public_inputs, &bad, &mut rng(3)).is_err());

    // Another root (a tree with a tampered leaf): the opened paths no longer lead to it, and
    // the subcircuit proofs were made for the old root.
    let mut bad = proof.clone();
    bad.root += Fr::one();
    assert!(verify(&vk, &circuit.public_inputs, &bad, &mut rng(3)).is_err());

    // A coordinator that hands worker 2 a tampered leaf 2 cannot get a proof out of it.
    let mut r = rng(8);
    let (_, shares) = coordinator_traces(&pk.vk.layout, &circuit, &mut rng(9)).unwrap();
    let cd: Vec<_> = shares
        .iter()
        .map(|s| worker_commit(pk.subcircuit_key(s.index as usize).unwrap(), s, &mut r).unwrap())
        .collect();
    let commitments: Vec<_> = cd.iter().map(|c| c.0).collect();
    let round =
        coordinator_challenge(&pk.vk, &circuit.public_inputs, &shares, &commitments).unwrap();
    let mut msg = round.messages[2].clone();
    msg.prev_leaf.t_product += Fr::one();
    let res = worker_prove(
        &pk,
        &circuit.subcircuits[2],
        &[],
        &shares[2],
        &cd[2].0,
        &cd[2].1,
        &msg,
        &mut r,
    );
    assert!(matches!(res, Err(Error::Unsatisfied(_))), "{res:?}");
}

#[test]
fn proof_under_another_subcircuits_key_is_rejected() {
    // Subcircuits 1 and 6 share a shape (and one Mirage setup) but not their fixed inputs.
    let circuit = bench_circuit(8, 8, 2, Fr::from(3u64));
    let (pk, vk) = keys(&circuit);
    let proof = run_workflow(&pk, &circuit, |_| {}).unwrap();
    verify(&vk, &circuit.public_inputs, &proof, &mut rng(3)).unwrap();
    assert_eq!(vk.shape_of[1], vk.shape_of[6]);

    let ch = hekaton::workflow::derive_challenge(&vk, &circuit.public_inputs, &proof.commitments)
        .unwrap();
    let x = [proof.root, ch.alpha, ch.beta];
    let vk1 = vk.subcircuit_key(1).unwrap();
    let vk6 = vk.subcircuit_key(6).unwrap();
    mirage::verify(&vk1, &x, &proof.commitments[1], &proof.proofs[1]).unwrap();
    mirage::verify(&vk6, &x, &proof.commitments[6], &proof.proofs[6]).unwrap();
    assert!(mirage::verify(&vk1, &x, &proof.commitments[6], &proof.proofs[6]).is_err());
    assert!(mirage::verify(&vk6, &x, &proof.commitments[1], &proof.proofs[1]).is_err());

    // Swapping the two subcircuits' proofs (and commitments) in the final proof fails.
    let mut bad = proof.clone();
    bad.proofs.swap(1, 6);
    bad.commitments.swap(1, 6);
    assert!(verify(&vk, &circuit.public_inputs, &bad, &mut rng(3)).is_err());
}

#[test]
fn mutated_proof_bytes_are_rejected() {
    let circuit = bench_circuit(2, 10, 2, Fr::from(3u64));
    let (pk, vk) = keys(&circuit);
    let proof = run_workflow(&pk, &circuit, |_| {}).unwrap();
    let bytes = to_bytes(&proof).unwrap();
    let mut rejected = 0;
    let positions: Vec<usize> = (0..bytes.len()).step_by(bytes.len() / 40 + 1).collect();
    for &pos in &positions {
        let mut b = bytes.clone();
        b[pos] ^= 0x01;
        let ok = match from_bytes::<HekatonProof<E>>(&b) {
            Ok(p) => verify(&vk, &circuit.public_inputs, &p, &mut rng(3)).is_ok(),
            Err(_) => false,
        };
        if !ok {
            rejected += 1;
        }
    }
    assert_eq!(rejected, positions.len());
}

#[test]
fn layout_mismatch_and_bad_portals_are_errors() {
    let circuit = bench_circuit(2, 10, 2, Fr::from(3u64));
    let (pk, _) = keys(&circuit);
    // A circuit with other wires does not fit the key.
    let other = bench_circuit(2, 10, 3, Fr::from(3u64));
    assert!(coordinator_traces(&pk.vk.layout, &other, &mut rng(9)).is_err());
    // Reading a wire nobody wrote is an error at setup.
    let orphan = Partitioned {
        public_inputs: vec![Fr::one()],
        subcircuits: vec![BenchSubcircuit {
            index: 1,
            steps: 2,
            wires: 1,
        }],
    };
    assert!(setup::<E, _, _>(&orphan, &mut rng(1)).is_err());
}

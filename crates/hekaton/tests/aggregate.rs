//! The aggregated Hekaton proof (paper §5.3, Fig. 6; [`hekaton::aggregated`]): the honest
//! flow for `k = 2, 4, 8`, and the attacks an aggregator (or anyone holding valid proofs)
//! could try: tampered `A_i, B_i, C_i, D_i`, proofs reordered, dropped, duplicated, mixed
//! from two jobs, a tampered aggregate, the aggregate key of another circuit, and mutated
//! bytes. Each must end in an error, never in "verified", never in a panic.

use std::sync::OnceLock;

use ark_bls12_381::{Bls12_381, Fr, G1Projective, G2Projective};
use ark_ec::{CurveGroup, PrimeGroup};
use hekaton::aggregate::srs::Srs;
use hekaton::aggregate::{self, AggCommitment, AggProvingKey, AggVerifyingKey, AggregateProof};
use hekaton::aggregated::{
    check_proving_key, coordinator_assemble, coordinator_challenge, coordinator_commit,
    derive_challenge, prove, setup as agg_setup, verify, AggregatedProof,
};
use hekaton::circuits::{bench_circuit, BenchSubcircuit};
use hekaton::mirage::{from_bytes, to_bytes, Commitment, Proof};
use hekaton::partition::Partitioned;
use hekaton::workflow::{
    self, coordinator_traces, setup, worker_commit, worker_prove, ChallengeRound, ProvingKey,
    VerifyingKey,
};
use hekaton::Error;
use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;

type E = Bls12_381;

fn rng(seed: u64) -> ChaCha20Rng {
    ChaCha20Rng::seed_from_u64(seed)
}

/// Everything one run of the aggregated flow produces.
#[derive(Clone)]
struct Run {
    x: Vec<Fr>,
    round: ChallengeRound<Fr>,
    cm_d: AggCommitment<E>,
    commitments: Vec<Commitment<E>>,
    proofs: Vec<Proof<E>>,
    proof: AggregatedProof<E>,
}

fn run(
    pk: &ProvingKey<E>,
    apk: &AggProvingKey<E>,
    circuit: &Partitioned<Fr, BenchSubcircuit>,
    seed: u64,
) -> Run {
    let mut r = rng(seed);
    let (_, shares) = coordinator_traces(&pk.vk.layout, circuit, &mut r).unwrap();
    let (commitments, randomness): (Vec<_>, Vec<_>) = shares
        .iter()
        .map(|s| worker_commit(pk.subcircuit_key(s.index as usize).unwrap(), s, &mut r).unwrap())
        .unzip();
    let cm_d = coordinator_commit(apk, &commitments).unwrap();
    let x = circuit.public_inputs.clone();
    let round = coordinator_challenge(&pk.vk, &apk.vk, &x, &shares, &cm_d).unwrap();
    let proofs: Vec<Proof<E>> = shares
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let sub = &circuit.subcircuits[i];
            let msg = &round.messages[i];
            worker_prove(pk, sub, &x, s, &commitments[i], &randomness[i], msg, &mut r).unwrap()
        })
        .collect();
    let proof = coordinator_assemble(apk, &round, &cm_d, &commitments, &proofs).unwrap();
    Run {
        x,
        round,
        cm_d,
        commitments,
        proofs,
        proof,
    }
}

struct Fixture {
    pk: ProvingKey<E>,
    vk: VerifyingKey<E>,
    apk: AggProvingKey<E>,
    avk: AggVerifyingKey<E>,
    /// Two jobs under the same keys, with public inputs 5 and 6.
    job: Run,
    other_job: Run,
}

/// Four subcircuits (keys: first, two middles sharing one, last), an SRS for 8.
fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let circuit = bench_circuit(4, 4, 1, Fr::from(5u64));
        let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng(1)).unwrap();
        let srs = Srs::<E>::setup(8, &mut rng(2));
        let (apk, avk) = agg_setup(&vk, &srs).unwrap();
        let job = run(&pk, &apk, &circuit, 3);
        verify(&vk, &avk, &job.x, &job.proof).expect("honest proof verifies");
        let other = bench_circuit(4, 4, 1, Fr::from(6u64));
        let other_job = run(&pk, &apk, &other, 4);
        verify(&vk, &avk, &other_job.x, &other_job.proof).expect("honest proof verifies");
        Fixture {
            pk,
            vk,
            apk,
            avk,
            job,
            other_job,
        }
    })
}

/// What an aggregator that changes the commitments or proofs can send at best: `cm_D` over
/// the given commitments, `(α, β)` recomputed from it as the verifier will, and Agg.P run
/// honestly on the given vectors (root and path kept), so every transcript matches.
fn aggregate_as(
    f: &Fixture,
    commitments: &[Commitment<E>],
    proofs: &[Proof<E>],
) -> Result<AggregatedProof<E>, Error> {
    let cm_d = coordinator_commit(&f.apk, commitments)?;
    let ch = derive_challenge(&f.vk, &f.avk, &f.job.x, &cm_d)?;
    let x = [f.job.proof.root, ch.alpha, ch.beta];
    Ok(AggregatedProof {
        cm_d,
        aggregate: aggregate::prove(&f.apk, &x, commitments, proofs, &cm_d)?,
        ..f.job.proof.clone()
    })
}

/// The same, but keeping the honest `cm_D` (so that `(α, β)` stay the ones the proofs used).
fn aggregate_keeping_cm_d(
    f: &Fixture,
    commitments: &[Commitment<E>],
    proofs: &[Proof<E>],
) -> Result<AggregatedProof<E>, Error> {
    coordinator_assemble(&f.apk, &f.job.round, &f.job.cm_d, commitments, proofs)
}

fn refused(f: &Fixture, proof: Result<AggregatedProof<E>, Error>, what: &str) {
    if let Ok(p) = proof {
        assert!(
            verify(&f.vk, &f.avk, &f.job.x, &p).is_err(),
            "{what}: the aggregate verifier accepted"
        );
    }
}

#[test]
fn honest_aggregates_verify_for_k_2_4_8() {
    let srs = Srs::<E>::setup(8, &mut rng(20));
    for k in [2usize, 4, 8] {
        let circuit = bench_circuit(k, 2, 1, Fr::from(9u64));
        let (pk, vk) = setup::<E, _, _>(&circuit, &mut rng(21)).unwrap();
        let (apk, avk) = agg_setup(&vk, &srs).unwrap();
        let proof = prove(&pk, &apk, &circuit, &mut rng(22)).unwrap();
        // Through the bytes, keys too.
        let proof: AggregatedProof<E> = from_bytes(&to_bytes(&proof).unwrap()).unwrap();
        let avk: AggVerifyingKey<E> = from_bytes(&to_bytes(&avk).unwrap()).unwrap();
        verify(&vk, &avk, &circuit.public_inputs, &proof).unwrap();
        // O(log k): 25 G_T of products and commitments, 6 per GIPA round.
        let rounds = proof.aggregate.mpp.tipp.rounds.len();
        assert_eq!(1 << rounds, k);
        // Another public input is another statement.
        assert!(verify(&vk, &avk, &[Fr::from(10u64)], &proof).is_err());
        assert!(verify(&vk, &avk, &[], &proof).is_err());
    }
    // An SRS too short for k is refused at setup.
    let circuit = bench_circuit(3, 2, 1, Fr::from(9u64));
    let (_, vk) = setup::<E, _, _>(&circuit, &mut rng(21)).unwrap();
    let small = Srs::<E>::setup(2, &mut rng(23));
    assert!(agg_setup(&vk, &small).is_err());
}

#[test]
fn tampered_a_b_c_or_d_of_any_subcircuit_is_rejected() {
    let f = fixture();
    let g1 = G1Projective::generator();
    let g2 = G2Projective::generator();
    let k = f.job.proofs.len();
    for i in 0..k {
        for which in ["A", "B", "C"] {
            let mut proofs = f.job.proofs.clone();
            match which {
                "A" => proofs[i].a = (proofs[i].a + g1).into_affine(),
                "B" => proofs[i].b = (proofs[i].b + g2).into_affine(),
                _ => proofs[i].c = (proofs[i].c + g1).into_affine(),
            }
            refused(
                f,
                aggregate_keeping_cm_d(f, &f.job.commitments, &proofs),
                which,
            );
        }
        let mut commitments = f.job.commitments.clone();
        commitments[i].d = (commitments[i].d + g1).into_affine();
        refused(
            f,
            aggregate_keeping_cm_d(f, &commitments, &f.job.proofs),
            "D, old cm_D",
        );
        refused(
            f,
            aggregate_as(f, &commitments, &f.job.proofs),
            "D, new cm_D",
        );
    }
}

#[test]
fn reordered_dropped_or_duplicated_proofs_are_rejected() {
    let f = fixture();
    // Subcircuits 1 and 2 share a Mirage key: only their fixed inputs (i, addresses) differ.
    for (i, j) in [(1, 2), (0, 3), (0, 1)] {
        let (mut c, mut p) = (f.job.commitments.clone(), f.job.proofs.clone());
        c.swap(i, j);
        p.swap(i, j);
        refused(f, aggregate_as(f, &c, &p), "swapped, new cm_D");
        refused(f, aggregate_keeping_cm_d(f, &c, &p), "swapped, old cm_D");
    }
    // Duplicated: proof 1 in place of proof 2.
    let (mut c, mut p) = (f.job.commitments.clone(), f.job.proofs.clone());
    c[2] = c[1];
    p[2] = p[1];
    refused(f, aggregate_as(f, &c, &p), "duplicated");
    refused(f, aggregate_keeping_cm_d(f, &c, &p), "duplicated, old cm_D");
    // Dropped: k − 1 proofs do not aggregate under a key for k.
    let (c, p) = (&f.job.commitments[..3], &f.job.proofs[..3]);
    assert!(aggregate_keeping_cm_d(f, c, p).is_err());
    assert!(coordinator_commit(&f.apk, c).is_err());
    // Nor under a key for the first k − 1 subcircuits' keys bound to the same statement.
    let keys: Vec<_> = (0..3).map(|i| f.vk.subcircuit_key(i).unwrap()).collect();
    let srs = Srs::<E>::setup(8, &mut rng(30));
    let (apk3, avk3) = aggregate::setup(&srs, &keys, f.vk.digest().unwrap().0).unwrap();
    let cm_d3 = aggregate::commit(&apk3, c).unwrap();
    let x = [
        f.job.proof.root,
        f.job.round.challenge.alpha,
        f.job.round.challenge.beta,
    ];
    let agg3 = aggregate::prove(&apk3, &x, c, p, &cm_d3).unwrap();
    let dropped = AggregatedProof {
        cm_d: cm_d3,
        aggregate: agg3,
        ..f.job.proof.clone()
    };
    assert!(verify(&f.vk, &f.avk, &f.job.x, &dropped).is_err());
    assert!(verify(&f.vk, &avk3, &f.job.x, &dropped).is_err());
}

#[test]
fn proofs_mixed_from_two_jobs_are_rejected() {
    let f = fixture();
    let k = f.job.proofs.len();
    for split in [1, k / 2, k - 1] {
        let mut c = f.job.commitments[..split].to_vec();
        c.extend_from_slice(&f.other_job.commitments[split..]);
        let mut p = f.job.proofs[..split].to_vec();
        p.extend_from_slice(&f.other_job.proofs[split..]);
        refused(f, aggregate_as(f, &c, &p), "mixed, new cm_D");
        refused(f, aggregate_keeping_cm_d(f, &c, &p), "mixed, old cm_D");
        // Nor as the other job's proof.
        let cm_d = coordinator_commit(&f.apk, &c).unwrap();
        if let Ok(mixed) = coordinator_assemble(&f.apk, &f.other_job.round, &cm_d, &c, &p) {
            assert!(verify(&f.vk, &f.avk, &f.other_job.x, &mixed).is_err());
        }
    }
    // A whole proof of job 2 is not a proof for job 1's public input.
    assert!(verify(&f.vk, &f.avk, &f.job.x, &f.other_job.proof).is_err());
}

#[test]
fn tampered_aggregate_proofs_are_rejected() {
    let f = fixture();
    let p = &f.job.proof;
    let z = p.aggregate.z_ab;
    type Edit = Box<dyn Fn(&mut AggregatedProof<E>)>;
    let mut edits: Vec<Edit> = vec![
        Box::new(move |q| q.aggregate.z_ab += z),
        Box::new(move |q| q.aggregate.z_alpha_beta += z),
        Box::new(move |q| q.aggregate.z_s_gamma += z),
        Box::new(move |q| q.aggregate.z_c_delta += z),
        Box::new(move |q| q.aggregate.z_d_eta += z),
        // Two products moved so that the batched equation still holds.
        Box::new(move |q| {
            q.aggregate.z_ab += z;
            q.aggregate.z_c_delta += z;
        }),
        Box::new(move |q| q.aggregate.mpp.cross[7] += z),
        Box::new(|q| q.aggregate.cm_ab = q.aggregate.cm_c),
        Box::new(|q| q.cm_d.cm_d = q.aggregate.cm_c),
        Box::new(|q| q.root += Fr::from(1u64)),
        Box::new(|q| {
            q.aggregate.mpp.tipp.rounds.pop();
        }),
        Box::new(|q| q.aggregate.version += 1),
        Box::new(|q| q.version += 1),
    ];
    for (n, edit) in edits.iter_mut().enumerate() {
        let mut q = p.clone();
        edit(&mut q);
        assert!(verify(&f.vk, &f.avk, &f.job.x, &q).is_err(), "edit {n}");
    }
}

#[test]
fn another_circuits_aggregate_key_is_rejected() {
    let f = fixture();
    // Another circuit (one more step per subcircuit): its keys, its aggregate key.
    let circuit2 = bench_circuit(4, 5, 1, Fr::from(5u64));
    let (pk2, vk2) = setup::<E, _, _>(&circuit2, &mut rng(40)).unwrap();
    let srs2 = Srs::<E>::setup(8, &mut rng(41));
    let (apk2, avk2) = agg_setup(&vk2, &srs2).unwrap();
    // The pair (vk, avk2) does not belong together.
    assert!(matches!(
        verify(&f.vk, &avk2, &f.job.x, &f.job.proof),
        Err(Error::CircuitMismatch(_))
    ));
    // A proof of the other circuit does not verify under this circuit's keys.
    let proof2 = prove(&pk2, &apk2, &circuit2, &mut rng(42)).unwrap();
    verify(&vk2, &avk2, &circuit2.public_inputs, &proof2).unwrap();
    assert!(verify(&f.vk, &f.avk, &circuit2.public_inputs, &proof2).is_err());
    // Nor when the other circuit's δ/η commitments are put into this key (statement digest
    // kept), against either proof.
    let mut mixed = f.avk.clone();
    mixed.cm_delta = avk2.cm_delta;
    mixed.cm_eta = avk2.cm_eta;
    assert!(verify(&f.vk, &mixed, &f.job.x, &f.job.proof).is_err());
    let mut mixed2 = avk2.clone();
    mixed2.statement_digest = f.avk.statement_digest;
    assert!(verify(&f.vk, &mixed2, &f.job.x, &f.job.proof).is_err());
    // An aggregate under the other SRS-and-keys for this statement (an aggregator that made
    // its own aggregate key for this circuit) is rejected by the honest key.
    let (apk3, _) = agg_setup(&f.vk, &srs2).unwrap();
    // A prover can tell which aggregate key is this circuit's.
    check_proving_key(&f.vk, &f.apk).unwrap();
    check_proving_key(&f.vk, &apk3).unwrap();
    assert!(check_proving_key(&vk2, &f.apk).is_err());
    let mut forged = f.apk.clone();
    forged.vk.cm_eta = avk2.cm_eta;
    assert!(check_proving_key(&f.vk, &forged).is_err());
    let cm_d = coordinator_commit(&apk3, &f.job.commitments).unwrap();
    let own = coordinator_assemble(
        &apk3,
        &f.job.round,
        &cm_d,
        &f.job.commitments,
        &f.job.proofs,
    );
    refused(f, own, "aggregate under another SRS");
    let _ = pk2;
}

#[test]
fn aggregate_layer_rejects_bad_lengths_and_inputs() {
    let f = fixture();
    let x = [
        f.job.proof.root,
        f.job.round.challenge.alpha,
        f.job.round.challenge.beta,
    ];
    let agg = &f.job.proof.aggregate;
    aggregate::verify(&f.avk, &x, &f.job.cm_d, agg).unwrap();
    assert!(aggregate::verify(&f.avk, &x[..2], &f.job.cm_d, agg).is_err());
    let mut y = x;
    y[1] += Fr::from(1u64);
    assert!(aggregate::verify(&f.avk, &y, &f.job.cm_d, agg).is_err());
    let mut p = f.job.proofs.clone();
    p.push(p[0]);
    assert!(aggregate::prove(&f.apk, &x, &f.job.commitments, &p, &f.job.cm_d).is_err());
    assert!(aggregate::prove(
        &f.apk,
        &x[..1],
        &f.job.commitments,
        &f.job.proofs,
        &f.job.cm_d
    )
    .is_err());
    // A malformed key is an error.
    let mut avk = f.avk.clone();
    avk.num_proofs = 0;
    assert!(aggregate::verify(&avk, &x, &f.job.cm_d, agg).is_err());
    let mut avk = f.avk.clone();
    avk.num_proofs = 1 << 20;
    assert!(aggregate::verify(&avk, &x, &f.job.cm_d, agg).is_err());
    let mut avk = f.avk.clone();
    avk.cm_s.pop();
    assert!(aggregate::verify(&avk, &x, &f.job.cm_d, agg).is_err());
    let mut apk = f.apk.clone();
    apk.key_of[1] = 99;
    assert!(aggregate::prove(&apk, &x, &f.job.commitments, &f.job.proofs, &f.job.cm_d).is_err());
    // The unaggregated verifier still accepts the same subcircuit proofs under its own
    // challenge derivation only: these proofs used the aggregated (α, β).
    let unagg = workflow::HekatonProof {
        commitments: f.job.commitments.clone(),
        proofs: f.job.proofs.clone(),
        root: f.job.proof.root,
        input_path: f.job.proof.input_path.clone(),
    };
    assert!(workflow::verify(&f.vk, &f.job.x, &unagg, &mut rng(5)).is_err());
    let _ = &f.pk;
}

#[test]
fn mutated_aggregate_proof_bytes_never_panic() {
    let f = fixture();
    let bytes = to_bytes(&f.job.proof).unwrap();
    for cut in (0..bytes.len()).step_by(1009) {
        assert!(from_bytes::<AggregatedProof<E>>(&bytes[..cut]).is_err());
    }
    let mut r = rng(50);
    for _ in 0..24 {
        let mut b = bytes.clone();
        let pos = rand::Rng::gen_range(&mut r, 0..b.len());
        b[pos] ^= 1 << rand::Rng::gen_range(&mut r, 0..8);
        if let Ok(p) = from_bytes::<AggregatedProof<E>>(&b) {
            assert!(verify(&f.vk, &f.avk, &f.job.x, &p).is_err());
        }
        if let Ok(p) = from_bytes::<AggregateProof<E>>(&b[4..]) {
            let _ = p;
        }
    }
    // Lengths past the limits in the header: an error, not an allocation.
    let mut b = bytes.clone();
    b.extend_from_slice(&[0u8; 3]);
    assert!(from_bytes::<AggregatedProof<E>>(&b).is_err());
    let key_bytes = to_bytes(&f.avk).unwrap();
    for pos in (0..key_bytes.len()).step_by(331) {
        let mut b = key_bytes.clone();
        b[pos] ^= 0x40;
        if let Ok(avk) = from_bytes::<AggVerifyingKey<E>>(&b) {
            let _ = verify(&f.vk, &avk, &f.job.x, &f.job.proof);
        }
    }
}

//! Hekaton jobs through the platform, embedded and against real Redis and S3 (MinIO): an
//! 8-subcircuit circuit proved by separate worker loops, with a commit task that runs twice (a
//! worker that committed, reported and died before completing its lease: the redelivery must
//! write the same `D_i`) and a worker that dies mid-prove leaving a torn proof object. The job
//! publishes one aggregate proof (issue 30), which verifies with the library alone against the
//! key digests the job names; tampering (a group element moved or flipped, another job's
//! aggregate, another circuit's aggregate key, an aggregate key of another SRS) is refused by
//! the library and by `VerifyProof`; a second job of the same structure reuses the keys.

use std::sync::Arc;
use std::time::Duration;

mod common;

use api::v1 as pb;
use api::v1::job_service_server::JobService;
use ark_bls12_381::{Bls12_381, Fr, G1Affine};
use ark_ec::{AffineRepr, CurveGroup};
use hekaton::aggregate::srs::Srs;
use hekaton::aggregate::AggVerifyingKey;
use hekaton::aggregated::{self, AggregatedProof};
use hekaton::spec::CircuitSpec;
use hekaton::workflow::{self, HekatonProof, VerifyingKey, VkDigest};
use platform::kinds::contract::{self, Kind, Typed};
use platform::kinds::hekaton::{request, Hekaton, Step, COMMIT};
use platform::{JobKind, JobOutcome, Platform, PlatformError};
use queue::QueueConfig;
use tokio::sync::watch;

const SPEC: CircuitSpec = CircuitSpec::Synthetic { subcircuits: 8, steps: 4, wires: 1 };

/// Claims a task of `kind` of `job` (giving back any other job's: a shared Redis may hold
/// tasks of earlier runs).
async fn claim(p: &Platform, job: &str, kind: &str) -> queue::Lease {
    for _ in 0..6000 {
        // A slow Redis answer is an error here as in a worker loop: try again.
        if let Ok(Some(l)) = p.queue().claim(kind, "doomed-worker", Duration::from_millis(50)).await {
            if l.task.job_id == job {
                return l;
            }
            let _ = p.queue().release(&l).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no {kind} task appeared");
}

fn spawn_workers(p: &Arc<Platform>, kinds: &'static [&'static str], n: usize, rx: &watch::Receiver<bool>) {
    for i in 0..n {
        let (p, rx) = (p.clone(), rx.clone());
        tokio::spawn(async move { p.run_worker_for(format!("w-{}-{i}", kinds[0]), kinds, rx).await });
    }
}

async fn published(p: &Platform, job: &str, name: &str) -> Vec<u8> {
    p.blobs().get(&format!("jobs/{job}/proof/{name}")).await.unwrap().to_vec()
}

async fn run(real: bool) {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(2), ..QueueConfig::default() };
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(real, cfg, 3).await else { return };
    let p = Platform::new(q, blobs, jobs);
    // Bad requests name the field.
    let bad = request(CircuitSpec::MerkleUpdate { depth: 4, updates: 1, parts: 3 }, 1, false);
    assert!(matches!(p.submit(bad, None).await, Err(PlatformError::InvalidJob { field: "circuit", .. })));

    let seed = rand::random::<u32>() as u64;
    let (job, _) = p.submit(request(SPEC, seed, false), None).await.unwrap();
    let rec = p.job_store().get(&job).await.unwrap().unwrap();
    assert_eq!((rec.tasks["hekaton.commit"].total, rec.tasks["hekaton.subproof"].total), (8, 8));
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    spawn_workers(&p, &["hekaton.setup", "hekaton.challenge"], 1, &rx);

    // A worker commits, reports, and dies before completing its lease: the task is redelivered
    // and runs again; the second run must write the same D_i.
    let doomed = claim(&p, &job, COMMIT.name).await;
    Typed::new(Hekaton).work(&p, COMMIT, &doomed).await.unwrap();
    let i = doomed.task.task_id.clone();
    let commit_key = format!("jobs/{job}/hekaton/commit-{i}.bin");
    let first = p.blobs().get(&commit_key).await.unwrap();
    // The run a redelivery makes, while the job's scratch is still there (it is deleted when the
    // job ends): the same D_i. The lease then expires and a worker below runs it a third time.
    Typed::new(Hekaton).work(&p, COMMIT, &doomed).await.unwrap();
    assert_eq!(p.blobs().get(&commit_key).await.unwrap(), first, "the redelivered commit task wrote another D_{i}");
    spawn_workers(&p, &["hekaton.commit"], 2, &rx);

    // A worker dies mid-prove, its proof object half-written; the redelivery replaces it.
    let doomed = claim(&p, &job, "hekaton.subproof").await;
    let j = doomed.task.task_id.clone();
    p.blobs().put(&format!("jobs/{job}/hekaton/proof-{j}.bin"), bytes::Bytes::from_static(b"torn")).await.unwrap();
    spawn_workers(&p, &["hekaton.subproof"], 2, &rx);

    let outcome = tokio::time::timeout(Duration::from_secs(600), p.wait(&job, |_| {})).await.unwrap();
    assert_eq!(outcome, JobOutcome::Done, "{:?}", p.job_store().get(&job).await.unwrap().map(|r| r.message));

    // Offline: pin the digests circuit.json names; the library alone verifies the directory.
    let circuit: serde_json::Value = serde_json::from_slice(&published(&p, &job, "circuit.json").await).unwrap();
    let digest: VkDigest = circuit["vk_digest"].as_str().expect("circuit.json names the vk digest").parse().unwrap();
    let agg_digest: VkDigest = circuit["agg_vk_digest"].as_str().expect("circuit.json names the aggregate vk digest").parse().unwrap();
    let vk: VerifyingKey<Bls12_381> = hekaton::mirage::from_bytes(&published(&p, &job, "vk.bin").await).unwrap();
    vk.check_digest(&digest).unwrap();
    let avk: AggVerifyingKey<Bls12_381> = hekaton::mirage::from_bytes(&published(&p, &job, "agg-vk.bin").await).unwrap();
    avk.check_digest(&agg_digest).unwrap();
    let public: Vec<String> = serde_json::from_slice(&published(&p, &job, "public.json").await).unwrap();
    let x: Vec<Fr> = public.iter().map(|s| s.parse().unwrap()).collect();
    assert_eq!(x, SPEC.build::<Fr>(seed).unwrap().public_inputs);
    // The published proof is the aggregate (O(log k) group elements), not the k proofs.
    let proof_bytes = published(&p, &job, "proof.bin").await;
    assert!(hekaton::mirage::from_bytes::<HekatonProof<Bls12_381>>(&proof_bytes).is_err(), "the job published the k proofs");
    let proof: AggregatedProof<Bls12_381> = hekaton::mirage::from_bytes(&proof_bytes).unwrap();
    aggregated::verify(&vk, &avk, &x, &proof).unwrap();
    // The manifest pins both keys and names the command that checks them.
    let manifest = platform::manifest::Manifest::from_bytes(&published(&p, &job, "manifest.json").await).unwrap();
    assert_eq!(manifest.pins.get("agg_vk_digest"), Some(&agg_digest.to_string()), "{manifest:?}");
    assert_eq!(manifest.pins.get("vk_digest"), Some(&digest.to_string()), "{manifest:?}");
    assert_eq!(manifest.verify, vec![format!("prover hekaton verify {{dir}} --vk-digest {digest} --agg-vk-digest {agg_digest}")]);
    assert!(manifest.files.iter().any(|f| f == "agg-vk.bin"), "{manifest:?}");

    // Tampered: a group element of the aggregate moved (still a point of the group), another
    // public input, and keys that are not the job's: another circuit's aggregate key, and an
    // aggregate key for the job's own Hekaton key made from another SRS.
    let mut moved = proof.clone();
    moved.aggregate.mpp.tipp.a = (moved.aggregate.mpp.tipp.a + G1Affine::generator()).into_affine();
    assert!(aggregated::verify(&vk, &avk, &x, &moved).is_err(), "a moved group element verified");
    assert!(aggregated::verify(&vk, &avk, &[x[0] + Fr::from(1u64)], &proof).is_err(), "the proof verified for another input");
    let mut rng = rand::thread_rng();
    let other_spec = CircuitSpec::Synthetic { subcircuits: 2, steps: 4, wires: 1 };
    let (_, other_vk) = workflow::setup::<Bls12_381, _, _>(&other_spec.build::<Fr>(0).unwrap(), &mut rng).unwrap();
    let (_, other_circuit_avk) = aggregated::setup(&other_vk, &Srs::setup(2, &mut rng)).unwrap();
    assert!(aggregated::verify(&vk, &other_circuit_avk, &x, &proof).is_err(), "another circuit's aggregate key was accepted");
    let (_, other_srs_avk) = aggregated::setup(&vk, &Srs::setup(8, &mut rng)).unwrap();
    assert!(aggregated::verify(&vk, &other_srs_avk, &x, &proof).is_err(), "an aggregate key of another SRS verified the proof");

    // A second job of the same structure reuses the keys (one key directory for the spec, one
    // aggregation key for the Hekaton key).
    let (job2, _) = p.submit(request(SPEC, seed + 1, false), None).await.unwrap();
    let outcome = tokio::time::timeout(Duration::from_secs(600), p.wait(&job2, |_| {})).await.unwrap();
    assert_eq!(outcome, JobOutcome::Done);
    let circuit2: serde_json::Value = serde_json::from_slice(&published(&p, &job2, "circuit.json").await).unwrap();
    assert_eq!(circuit2["vk_digest"], circuit["vk_digest"], "the second job made new keys");
    assert_eq!(circuit2["agg_vk_digest"], circuit["agg_vk_digest"], "the second job made new aggregation keys");
    let proof2_bytes = published(&p, &job2, "proof.bin").await;
    let proof2: AggregatedProof<Bls12_381> = hekaton::mirage::from_bytes(&proof2_bytes).unwrap();
    aggregated::verify(&vk, &avk, &SPEC.build::<Fr>(seed + 1).unwrap().public_inputs, &proof2).unwrap();
    assert!(aggregated::verify(&vk, &avk, &x, &proof2).is_err(), "another job's aggregate verified for this job's input");

    // VerifyProof through the API (it answered UNAVAILABLE for Hekaton jobs once: the call fell
    // through to the Reckle path and looked for statement.json): valid against the pinned
    // digest, invalid against another, a malformed digest names the field, and every tampered
    // published directory is refused.
    let verify = |vk_digest: String| {
        let svc = platform::grpc::JobServiceImpl::new(p.clone());
        let target = Some(pb::verify_proof_request::Target::JobId(job.clone()));
        async move { svc.verify_proof(tonic::Request::new(pb::VerifyProofRequest { target, expected_vk_digest: vk_digest, ..Default::default() })).await }
    };
    let ok = verify(digest.to_string()).await.expect("VerifyProof answers for a Hekaton job").into_inner();
    assert!(ok.valid && ok.checked_against.contains(&digest.to_string()) && ok.checked_against.contains(&agg_digest.to_string()), "{ok:?}");
    let unpinned = verify(String::new()).await.unwrap().into_inner();
    assert!(unpinned.valid && unpinned.checked_against.contains("not pinned"), "{unpinned:?}");
    let other = verify(VkDigest([7; 32]).to_string()).await.unwrap().into_inner();
    assert!(!other.valid, "a job was verified against another key's digest: {other:?}");
    let err = verify("zz".into()).await.expect_err("a malformed digest is refused");
    assert!(err.code() == tonic::Code::InvalidArgument && err.message().contains("expected_vk_digest"), "{err:?}");
    let (proof_key, agg_key) = (format!("jobs/{job}/proof/proof.bin"), format!("jobs/{job}/proof/agg-vk.bin"));
    let agg_bytes = published(&p, &job, "agg-vk.bin").await;
    // A byte inside the aggregate's last G1 point (a KZG opening), which ends after the
    // version (4 bytes), cm_D and the aggregate.
    let mut flipped = proof_bytes.clone();
    flipped[4 + hekaton::mirage::to_bytes(&proof.cm_d).unwrap().len() + proof.aggregate.size() - 20] ^= 1;
    let tampered: [(&str, &String, Vec<u8>); 5] = [
        ("a moved group element", &proof_key, hekaton::mirage::to_bytes(&moved).unwrap()),
        ("a flipped byte of a group element", &proof_key, flipped),
        ("another job's aggregate", &proof_key, proof2_bytes.clone()),
        ("another circuit's aggregate key", &agg_key, hekaton::mirage::to_bytes(&other_circuit_avk).unwrap()),
        ("an aggregate key of another SRS", &agg_key, hekaton::mirage::to_bytes(&other_srs_avk).unwrap()),
    ];
    for (what, key, bytes) in tampered {
        p.blobs().put(key, bytes::Bytes::from(bytes)).await.unwrap();
        let r = verify(digest.to_string()).await.unwrap().into_inner();
        assert!(!r.valid, "VerifyProof accepted {what}: {r:?}");
        p.blobs().put(&proof_key, bytes::Bytes::from(proof_bytes.clone())).await.unwrap();
        p.blobs().put(&agg_key, bytes::Bytes::from(agg_bytes.clone())).await.unwrap();
    }
    assert!(verify(digest.to_string()).await.unwrap().into_inner().valid, "the restored directory does not verify");
    let _ = stop.send(true);
    for j in [&job, &job2] {
        p.blobs().delete_prefix(&format!("jobs/{j}/")).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_hekaton_job() {
    run(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_hekaton_job() {
    run(true).await;
}

/// The depth-1 wrap on the platform (issue 15 part 3, issue 35): every k the platform accepts
/// may ask for the final proof; a one-subcircuit job does, its wrap runs as a `hekaton.wrap`
/// worker task under the wrap key its setup made (stored by digest, no `wrap-current`
/// pointer), and the aggregator publishes `final.bin` and `final-key.bin`, which verify offline
/// against the final key's digest and refuse another `x` or another root, and through
/// `VerifyProof`. Then a lying wrap worker (this test) hands the aggregator another job's final
/// proof, a moved root, garbage, nothing, and a payload naming another final key: each job
/// fails with the reason and publishes no `final.bin`.
async fn run_wrapped(real: bool) {
    use ark_bw6_767::BW6_767;
    use hekaton::wrap::{verify_final, FinalKey, FinalProof};
    use platform::kinds::hekaton::wrap::{final_scratch, wrap_key_file, WRAP};
    use platform::kinds::hekaton::HekatonJobSpec;
    type Inner = ark_bls12_381::Config;
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(5), ..QueueConfig::default() };
    // A Redis database of its own: `run` (visibility 2 s) would reclaim this test's leases.
    let Some((q, blobs, jobs, _dir)) = common::backends_in_db(real, cfg, 10).await else { return };
    let p = Platform::new(q, blobs, jobs);
    // No fixed cap on k any more: the largest circuits the platform accepts can be wrapped.
    for circuit in [SPEC, CircuitSpec::Synthetic { subcircuits: hekaton::spec::MAX_SUBCIRCUITS, steps: 4, wires: 1 }, CircuitSpec::MerkleUpdate { depth: 4, updates: 256, parts: 4 }] {
        Hekaton::check(&HekatonJobSpec::new(circuit, 1, true)).unwrap();
    }

    const ONE: CircuitSpec = CircuitSpec::Synthetic { subcircuits: 1, steps: 4, wires: 2 };
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    spawn_workers(&p, &["hekaton.setup", "hekaton.challenge", "hekaton.commit", "hekaton.subproof"], 1, &rx);
    // The wrap worker, stopped before the lies.
    let (stop_wrap, rx_wrap) = watch::channel(false);
    let wrapper = tokio::spawn(p.clone().run_worker_for("wrapper".into(), &["hekaton.wrap"], rx_wrap));
    let seed = rand::random::<u32>() as u64;
    let (job, _) = p.submit(request(ONE, seed, true), None).await.unwrap();
    assert_eq!(p.job_store().get(&job).await.unwrap().unwrap().tasks[WRAP.name].total, 1);
    let outcome = tokio::time::timeout(Duration::from_secs(900), p.wait(&job, |_| {})).await.unwrap();
    assert_eq!(outcome, JobOutcome::Done, "{:?}", p.job_store().get(&job).await.unwrap().map(|r| r.message));
    let _ = stop_wrap.send(true);
    wrapper.await.unwrap().unwrap();
    // A wrapped job publishes the k proofs (the form the wrap circuit verifies), no aggregate.
    assert!(p.blobs().get(&format!("jobs/{job}/proof/agg-vk.bin")).await.is_err(), "a wrapped job published an aggregate key");
    let k_proofs: HekatonProof<Bls12_381> = hekaton::mirage::from_bytes(&published(&p, &job, "proof.bin").await).unwrap();
    let key = FinalKey::<BW6_767>::from_bytes(&published(&p, &job, "final-key.bin").await).unwrap();
    let final_bytes = published(&p, &job, "final.bin").await;
    let fin = FinalProof::<Fr, BW6_767>::from_bytes(&final_bytes).unwrap();
    let public: Vec<String> = serde_json::from_slice(&published(&p, &job, "public.json").await).unwrap();
    let x: Vec<Fr> = public.iter().map(|v| v.parse().unwrap()).collect();
    // The final key names the job's Hekaton key; a verifier pins the final key's digest.
    let vk: VerifyingKey<Bls12_381> = hekaton::mirage::from_bytes(&published(&p, &job, "vk.bin").await).unwrap();
    assert_eq!(key.hekaton_vk_digest, vk.digest().unwrap(), "the final key names another Hekaton key");
    workflow::verify(&vk, &x, &k_proofs, &mut rand::thread_rng()).unwrap();
    let circuit: serde_json::Value = serde_json::from_slice(&published(&p, &job, "circuit.json").await).unwrap();
    let pinned: VkDigest = circuit["final_key_digest"].as_str().expect("circuit.json names the final key").parse().unwrap();
    key.check_digest(&pinned).unwrap();
    let manifest = platform::manifest::Manifest::from_bytes(&published(&p, &job, "manifest.json").await).unwrap();
    assert_eq!(manifest.pins.get("final_key_digest"), Some(&pinned.to_string()), "{manifest:?}");
    // Stored by digest, complete, and no pointer object.
    let (sd, vd) = (ONE.digest(), vk.digest().unwrap().to_string());
    assert!(p.blobs().exists(&wrap_key_file(&sd, &vd, &pinned.to_string(), "final-key.bin")).await.unwrap());
    assert!(!p.blobs().exists(&platform::layout::hekaton_key(&sd, &vd, "wrap-current")).await.unwrap());
    let pvk = key.wrap_vk.prepare().unwrap();
    verify_final::<Inner, BW6_767>(&key, &pvk, &x, &fin).unwrap();
    // Lies: another x, another root.
    let mut other_x = x.clone();
    other_x[0] += Fr::from(1u64);
    assert!(verify_final::<Inner, BW6_767>(&key, &pvk, &other_x, &fin).is_err());
    let mut moved = fin.clone();
    moved.root += Fr::from(1u64);
    assert!(verify_final::<Inner, BW6_767>(&key, &pvk, &x, &moved).is_err());
    // VerifyProof checks the final proof too.
    let svc = platform::grpc::JobServiceImpl::new(p.clone());
    let target = Some(pb::verify_proof_request::Target::JobId(job.clone()));
    let r = svc.verify_proof(tonic::Request::new(pb::VerifyProofRequest { target, expected_vk_digest: vd.clone(), ..Default::default() })).await.unwrap().into_inner();
    assert!(r.valid && r.checked_against.contains(&pinned.to_string()), "{r:?}");

    // A lying wrap worker: this test claims each job's wrap task and hands the aggregator what
    // it likes. Every job fails with the reason and publishes no final proof.
    let garbage = b"HKFP\x01not a proof".to_vec();
    let lies: [(&str, Option<Vec<u8>>, bool); 5] = [
        ("does not verify", Some(final_bytes.clone()), false), // another job's (valid) final proof
        ("does not verify", Some(FinalProof::to_bytes(&moved).unwrap()), false),
        ("final proof", Some(garbage), false),
        ("left no final proof", None, false),
        ("other keys", Some(final_bytes.clone()), true), // a payload naming another final key
    ];
    for (reason, bytes, other_key) in lies {
        let (liar_job, _) = p.submit(request(ONE, seed + 1, true), None).await.unwrap();
        let lease = claim(&p, &liar_job, WRAP.name).await;
        if let Some(b) = bytes {
            p.blobs().put(&final_scratch(&liar_job), bytes::Bytes::from(b)).await.unwrap();
        }
        let mut payload: serde_json::Value = serde_json::from_str(&lease.task.payload).unwrap();
        assert_eq!(payload["wrap"], serde_json::Value::String(pinned.to_string()), "the second job reuses the stored wrap key");
        if other_key {
            payload["wrap"] = VkDigest([9; 32]).to_string().into();
        }
        contract::report::<Hekaton>(&p, &lease, Step::Wrap, 0, payload.to_string()).await.unwrap();
        p.queue().complete(&lease).await.unwrap();
        match tokio::time::timeout(Duration::from_secs(600), p.wait(&liar_job, |_| {})).await.unwrap() {
            JobOutcome::Failed(m) => assert!(m.contains(reason), "{reason}: {m}"),
            other => panic!("{reason}: expected the job to fail, got {other:?}"),
        }
        assert!(!p.blobs().exists(&platform::layout::proof_file(&liar_job, "final.bin")).await.unwrap(), "{reason}: a final proof was published");
        p.blobs().delete_prefix(&format!("jobs/{liar_job}/")).await.unwrap();
    }
    let _ = stop.send(true);
    p.blobs().delete_prefix(&format!("jobs/{job}/")).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_wrapped_hekaton_job() {
    run_wrapped(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_wrapped_hekaton_job() {
    run_wrapped(true).await;
}

/// Fair share (issue 11 item 8): a Hekaton job keeps at most `--job-window` of a step's k tasks
/// queued or running; each one done releases the one a window after it. A real worker makes
/// the keys; a stand-in worker takes the 8 commit tasks one by one and reports them without
/// committing (the executor only does the bookkeeping), noting how many of the job's commit
/// tasks were queued or leased at each claim: at most 3 with a window of 3, all 8 without.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn commit_tasks_are_released_a_window_at_a_time() {
    async fn most_queued(window: u64) -> (u64, usize) {
        let (q, blobs, jobs, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
        let p = Platform::with_config(q.clone(), blobs, jobs, platform::PlatformConfig { job_window: window, ..Default::default() });
        let (job, _) = p.submit(request(SPEC, 5, false), None).await.unwrap();
        let (stop, rx) = watch::channel(false);
        tokio::spawn(p.clone().run_executor("window-ex".into(), rx.clone()));
        spawn_workers(&p, &["hekaton.setup"], 1, &rx);
        // Claim only once the executor has released the step's first tasks (it dispatches them
        // one by one after the setup): a claim in between would see a partial count.
        let deadline = std::time::Instant::now() + Duration::from_secs(300);
        while q.job_tasks(COMMIT.name, &job).await.unwrap() < window.min(8) {
            assert!(std::time::Instant::now() < deadline, "the first commit tasks were never queued");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (mut most, mut taken) = (0, std::collections::BTreeSet::new());
        while taken.len() < 8 {
            let lease = claim(&p, &job, COMMIT.name).await;
            most = most.max(q.job_tasks(COMMIT.name, &job).await.unwrap());
            taken.insert(lease.task.task_id.clone());
            let index = lease.task.task_id.parse().unwrap();
            contract::report::<Hekaton>(&p, &lease, Step::Commit, index, lease.task.payload.clone()).await.unwrap();
            q.complete(&lease).await.unwrap();
        }
        p.cancel(&job).await.unwrap();
        let _ = stop.send(true);
        (most, taken.len())
    }
    let (windowed, n) = most_queued(3).await;
    assert_eq!(n, 8, "every commit task was released");
    assert!((1..=3).contains(&windowed), "{windowed} commit tasks queued at once with a window of 3");
    let (unbounded, _) = most_queued(u64::MAX).await;
    assert_eq!(unbounded, 8, "without a window every commit task is queued at once (the test shows nothing)");
}

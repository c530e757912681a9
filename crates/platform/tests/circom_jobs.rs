//! Registered circom circuits through the platform (issue 14): `circuit.register` runs the Pari
//! setup once per `.r1cs`, `pari.circom` proves uploaded witnesses under those keys and
//! publishes batch-verified bundles with their public signals. Embedded and against real Redis
//! and S3 (MinIO); the circuits come from circom2 via the test command
//! (`PROVER_TEST_CIRCOM_DIR`, see scripts/circom-fixtures.sh), or the checked-in fixtures.

use std::sync::Arc;
use std::time::Duration;

mod common;

use ark_ff::PrimeField;
use bytes::Bytes;
use platform::{CircomCurve, JobOutcome, Submission, Platform, PlatformError};
use queue::QueueConfig;
use tokio::sync::watch;

/// The example circuit (c = a·b, h = Poseidon(a, b); b public) over `curve` ("bn254" or
/// "bls12381"): its `.r1cs`, and witnesses with their (a, b).
type Witnesses = Vec<(Vec<u8>, u64, u64)>;

fn example(curve: &str) -> (Vec<u8>, Witnesses) {
    let inputs = [(3, 11), (5, 7), (2, 13)];
    match std::env::var("PROVER_TEST_CIRCOM_DIR") {
        Ok(dir) => {
            let dir = std::path::Path::new(&dir).join(curve);
            let r1cs = std::fs::read(dir.join("example.r1cs")).expect("compiled example.r1cs");
            let w = inputs.iter().enumerate().map(|(i, (a, b))| (std::fs::read(dir.join(format!("w{i}.wtns"))).unwrap(), *a, *b)).collect();
            (r1cs, w)
        }
        Err(_) => {
            // The checked-in fixtures: the same three witnesses (make.sh).
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circom/tests/fixtures");
            let name = if curve == "bn254" { "bn254" } else { "bls12381" };
            let r1cs = std::fs::read(dir.join(format!("example-{name}.r1cs"))).unwrap();
            let files = [format!("example-{name}.wtns"), format!("example-{name}-w1.wtns"), format!("example-{name}-w2.wtns")];
            (r1cs, files.iter().zip(inputs).map(|(f, (a, b))| (std::fs::read(dir.join(f)).unwrap(), a, b)).collect())
        }
    }
}

async fn platform(real: bool) -> Option<(Arc<Platform>, Option<tempfile::TempDir>)> {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(5), ..QueueConfig::default() };
    let (q, blobs, jobs, dir) = common::backends(real, cfg).await?;
    // A batch window long enough that bundles of jobs submitted together meet in one batch.
    let config = platform::PlatformConfig { batch_window: Duration::from_secs(1), ..Default::default() };
    Some((Platform::with_config(q, blobs, jobs, config), dir))
}

async fn upload(p: &Platform, tenant: &str, name: &str, bytes: Vec<u8>) -> String {
    let key = format!("tenants/{tenant}/uploads/{name}");
    p.blobs().put(&key, Bytes::from(bytes)).await.unwrap();
    key
}

fn invalid_field(r: Result<impl std::fmt::Debug, PlatformError>) -> &'static str {
    match r {
        Err(PlatformError::InvalidJob { field, .. }) => field,
        other => panic!("expected an invalid request, got {other:?}"),
    }
}

async fn wait(p: &Platform, job: &str) -> JobOutcome {
    tokio::time::timeout(Duration::from_secs(600), p.wait(job, |_| {})).await.expect("job did not end")
}

/// Witness `w` with wire 1 (output c) changed: well-formed, but it breaks `c = a·b`.
fn broken<F: PrimeField>(w: &[u8]) -> Vec<u8> {
    let mut v = circom::read_wtns::<F>(w).unwrap();
    v[1] += F::one();
    circom::write_wtns(&v)
}

async fn run(real: bool, curve: &str) {
    let Some((p, _dir)) = platform(real).await else { return };
    let tenant = format!("alice-{}", uuid::Uuid::new_v4().simple());
    let other = format!("bob-{}", uuid::Uuid::new_v4().simple());
    let (r1cs, witnesses) = example(curve);
    let r1cs_key = upload(&p, &tenant, "example.r1cs", r1cs.clone()).await;

    // Registration input is checked before anything is written.
    let bob_key = upload(&p, &other, "example.r1cs", r1cs.clone()).await;
    assert_eq!(invalid_field(p.register_circuit(&tenant, &bob_key).await), "r1cs_object_key", "another tenant's upload");
    let junk = upload(&p, &tenant, "junk.r1cs", witnesses[0].0.clone()).await;
    assert_eq!(invalid_field(p.register_circuit(&tenant, &junk).await), "r1cs_object_key", "a .wtns handed over as .r1cs");
    let missing = format!("tenants/{tenant}/uploads/none.r1cs");
    assert_eq!(invalid_field(p.register_circuit(&tenant, &missing).await), "r1cs_object_key");

    let (id, info, job) = p.register_circuit(&tenant, &r1cs_key).await.unwrap();
    assert_eq!(id, circom::digest(&r1cs));
    assert!(info.is_none());
    let job = job.expect("a registration job");
    // Registering the same file again, before the setup ran, returns the same job.
    assert_eq!(p.register_circuit(&tenant, &r1cs_key).await.unwrap().2.as_deref(), Some(job.as_str()));

    let (stop, rx) = watch::channel(false);
    // The loops are kept, so that the deletion check at the end can wait until they stopped.
    let mut loops = vec![tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()))];
    // The first aggregator has a stop of its own: the batching check below holds it back.
    let (stop_ag, rx_ag) = watch::channel(false);
    let first_aggregator = tokio::spawn(p.clone().run_aggregator("ag".into(), rx_ag));
    for i in 0..2 {
        loops.push(tokio::spawn(p.clone().run_worker(format!("w{i}"), rx.clone())));
    }
    assert_eq!(wait(&p, &job).await, JobOutcome::Done);
    let info = p.registered_circuit(&tenant, &id).await.unwrap().expect("registered");
    assert_eq!(info.curve, if curve == "bn254" { CircomCurve::Bn254 } else { CircomCurve::Bls12_381 });
    assert_eq!((info.constraints, info.wires, info.public_outputs, info.public_inputs), (518, 521, 2, 1));
    assert_eq!(info.job_id, job);
    let vk = p.registered_vk(&tenant, &info).await.unwrap();
    assert_eq!(pari::KeyDigest::of_bytes(&vk).to_string(), info.vk_digest);
    assert_eq!(p.registered_circuits(&tenant).await.unwrap(), vec![info.clone()]);
    // Its bytes are charged to the tenant's circuit quota: the file and its keys.
    let stored: u64 = {
        let mut n = 0;
        for key in p.blobs().list(&platform::layout::circuit_prefix(&tenant, &id)).await.unwrap() {
            n += p.blobs().size(&key).await.unwrap();
        }
        n
    };
    let charged = p.job_store().usage(&tenant, jobs::Usage::Circuits).await.unwrap();
    assert!(charged >= stored && charged <= stored + 4096, "charged {charged} for {stored} bytes stored");
    // Circuits are per tenant, and registering again changes nothing.
    assert!(p.registered_circuit(&other, &id).await.unwrap().is_none());
    assert!(p.registered_circuits(&other).await.unwrap().is_empty());
    assert_eq!(p.register_circuit(&tenant, &r1cs_key).await.unwrap(), (id.clone(), Some(info.clone()), None));

    // Proving requests are checked before anything is written.
    let mut keys = Vec::new();
    for (i, (w, _, _)) in witnesses.iter().enumerate() {
        keys.push(upload(&p, &tenant, &format!("w{i}.wtns"), w.clone()).await);
    }
    // The tenant is the submitter's (`submit_as`); the request names only the circuit.
    let prove = |_tenant: &str, circuit_id: &str, witnesses: Vec<String>| platform::kinds::circom::request(circuit_id, witnesses, 2, 2);
    let submit = |r: Submission, t: String| {
        let p = p.clone();
        async move { p.submit_as(&t, r, None).await }
    };
    assert_eq!(invalid_field(submit(prove(&other, &id, vec![]), other.clone()).await), "circuit_id", "another tenant's circuit");
    assert_eq!(invalid_field(submit(prove(&tenant, &"0".repeat(64), keys.clone()), tenant.clone()).await), "circuit_id");
    assert_eq!(invalid_field(submit(prove(&tenant, "../x", keys.clone()), tenant.clone()).await), "circuit_id");
    assert_eq!(invalid_field(submit(prove(&tenant, &id, vec![]), tenant.clone()).await), "witness_object_keys");
    let bob_w = upload(&p, &other, "w0.wtns", witnesses[0].0.clone()).await;
    assert_eq!(invalid_field(submit(prove(&tenant, &id, vec![bob_w]), tenant.clone()).await), "witness_object_keys");
    let (other_curve, _) = example(if curve == "bn254" { "bls12381" } else { "bn254" });
    let wrong = upload(&p, &tenant, "r1cs-as-wtns", other_curve).await;
    assert_eq!(invalid_field(submit(prove(&tenant, &id, vec![wrong]), tenant.clone()).await), "witness_object_keys");
    // Issue 32: a witness listed twice (the planner used to hold every copy: one upload listed
    // 1,024 times), or one whose size is not what its header says, is refused by name.
    let twice = vec![keys[0].clone(), keys[1].clone(), keys[0].clone()];
    match submit(prove(&tenant, &id, twice), tenant.clone()).await {
        Err(PlatformError::InvalidJob { field: "witness_object_keys", reason }) => assert!(reason.contains("[2]") && reason.contains("[0]"), "{reason}"),
        other => panic!("a witness listed twice: {other:?}"),
    }
    let mut cut = witnesses[0].0.clone();
    cut.pop();
    let cut = upload(&p, &tenant, "cut.wtns", cut).await;
    assert_eq!(invalid_field(submit(prove(&tenant, &id, vec![cut]), tenant.clone()).await), "witness_object_keys");
    // A request cannot name another tenant than its submitter (it names none); submitted by
    // another tenant, the circuit is unknown there.
    assert_eq!(invalid_field(submit(prove(&tenant, &id, keys.clone()), other.clone()).await), "circuit_id", "submitted by another tenant");

    // Three witnesses, two per prove task, bundles of one task: 2 prove tasks, 2 bundles.
    let (pj, _) = submit(prove(&tenant, &id, keys.clone()), tenant.clone()).await.unwrap();
    let rec = p.job_store().get(&pj).await.unwrap().unwrap();
    assert_eq!((rec.tasks["circom.prove"].total, rec.tasks["circom.bundle"].total), (2, 2));
    assert_eq!(wait(&p, &pj).await, JobOutcome::Done);
    let digest: pari::KeyDigest = info.vk_digest.parse().unwrap();
    assert!(p.verify_pari_outputs(&pj, Some(&digest)).await.unwrap().contains(&info.vk_digest));
    assert!(p.verify_pari_outputs(&pj, Some(&pari::KeyDigest([7; 64]))).await.is_err(), "another key's digest was accepted");
    // Each proof's public signals, circom's order: c = a·b, h, then the public input b.
    for (k, range) in [(0, 0..2), (1, 2..3)] {
        let public: serde_json::Value = serde_json::from_slice(&p.blobs().get(&platform::layout::proof_file(&pj, &format!("public-{k}.json"))).await.unwrap()).unwrap();
        let public = public.as_array().unwrap();
        assert_eq!(public.len(), range.len());
        for (entry, i) in public.iter().zip(range) {
            let (_, a, b) = witnesses[i];
            assert_eq!(entry["witness"], i);
            let signals: Vec<&str> = entry["public"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
            assert_eq!((signals.len(), signals[0], signals[2]), (3, (a * b).to_string().as_str(), b.to_string().as_str()), "witness {i}");
        }
    }

    // One bundle across jobs of the circuit, for a consumer to verify at once.
    let (pj_b, _) = submit(prove(&tenant, &id, vec![keys[2].clone(), keys[0].clone()]), tenant.clone()).await.unwrap();
    assert_eq!(wait(&p, &pj_b).await, JobOutcome::Done);
    let cross = p.circuit_bundle(&tenant, &id, &[pj.clone(), pj_b.clone()]).await.unwrap();
    assert_eq!((cross.vk_digest.as_str(), &cross.vk[..]), (info.vk_digest.as_str(), &vk[..]));
    let expected: Vec<(String, u64)> = vec![(pj.clone(), 0), (pj.clone(), 1), (pj.clone(), 2), (pj_b.clone(), 0), (pj_b.clone(), 1)];
    assert_eq!(cross.sources, expected);
    let b_values: Vec<u64> = [0usize, 1, 2, 2, 0].iter().map(|i| witnesses[*i].2).collect();
    match curve {
        "bn254" => check_cross::<ark_bn254::Bn254>(&cross.vk, &cross.bundle, &b_values),
        _ => check_cross::<ark_bls12_381::Bls12_381>(&cross.vk, &cross.bundle, &b_values),
    }
    assert!(matches!(p.circuit_bundle(&other, &id, std::slice::from_ref(&pj)).await, Err(PlatformError::NotFound(_))), "another tenant's job");
    assert_eq!(invalid_field(p.circuit_bundle(&tenant, &id, std::slice::from_ref(&job)).await.map(|_| ())), "job_ids", "a registration job");
    assert_eq!(invalid_field(p.circuit_bundle(&tenant, &id, &[]).await.map(|_| ())), "job_ids");
    assert_eq!(invalid_field(p.circuit_bundle(&tenant, &"1".repeat(64), std::slice::from_ref(&pj)).await.map(|_| ())), "job_ids", "another circuit");

    // Jobs of the circuit submitted together: the aggregator verifies their bundles in shared
    // batches (fewer batches than bundles), and each job's outputs verify on their own. The
    // bundles are all waiting before an aggregator (two loops) is started, so two of them are
    // claimed at once and meet within the window whatever the machine's load.
    let _ = stop_ag.send(true);
    first_aggregator.await.unwrap().unwrap();
    let before = p.batcher().stats();
    let mut together = Vec::new();
    for k in &keys {
        together.push(submit(prove(&tenant, &id, vec![k.clone()]), tenant.clone()).await.unwrap().0);
    }
    for j in &together {
        while p.queue().job_tasks("circom.bundle", j).await.unwrap() == 0 {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    loops.push(tokio::spawn(p.clone().run_aggregator("ag2".into(), rx.clone())));
    for j in &together {
        assert_eq!(wait(&p, j).await, JobOutcome::Done);
        assert!(p.verify_pari_outputs(j, Some(&digest)).await.is_ok());
    }
    let after = p.batcher().stats();
    let (batches, bundles) = (after.batches - before.batches, after.calls - before.calls);
    assert_eq!(bundles, keys.len() as u64);
    assert!(batches < bundles, "{bundles} bundles of jobs submitted together took {batches} batches");

    // A witness that breaks a constraint fails the job, naming it and the constraint.
    let bad = match curve {
        "bn254" => broken::<ark_bn254::Fr>(&witnesses[1].0),
        _ => broken::<ark_bls12_381::Fr>(&witnesses[1].0),
    };
    let bad_key = upload(&p, &tenant, "bad.wtns", bad).await;
    let (bj, _) = submit(prove(&tenant, &id, vec![keys[0].clone(), bad_key]), tenant.clone()).await.unwrap();
    match wait(&p, &bj).await {
        JobOutcome::Failed(m) => assert!(m.contains("witness 1") && m.contains("constraint"), "{m}"),
        other => panic!("a job with an unsatisfying witness ended {other:?}"),
    }
    assert!(matches!(p.circuit_bundle(&tenant, &id, std::slice::from_ref(&bj)).await, Err(PlatformError::Precondition(_))), "a failed job");

    // The attack on the key store: another key pair of the same circuit (one whose setup the
    // attacker ran) written over the circuit's pk.bin and vk.bin. The job's spec pins the digest circuit.json names, so the aggregator
    // refuses the swapped key instead of publishing under it, and GetCircuit's check fails too.
    let vk_key = format!("tenants/{tenant}/circuits/{id}/keys/{}/vk.bin", info.vk_digest);
    let (other_pk, other_vk) = match curve {
        "bn254" => other_key::<ark_bn254::Bn254>(&r1cs),
        _ => other_key::<ark_bls12_381::Bls12_381>(&r1cs),
    };
    p.blobs().put(&vk_key.replace("vk.bin", "pk.bin"), Bytes::from(other_pk)).await.unwrap();
    p.blobs().put(&vk_key, Bytes::from(other_vk)).await.unwrap();
    let (pj2, _) = submit(prove(&tenant, &id, vec![keys[0].clone()]), tenant.clone()).await.unwrap();
    match wait(&p, &pj2).await {
        JobOutcome::Failed(m) => assert!(m.contains("digest"), "{m}"),
        other => panic!("a job under a swapped key ended {other:?}"),
    }
    assert!(p.registered_vk(&tenant, &info).await.is_err(), "a swapped vk.bin was served");

    // Issue 32 item 5: deleting a circuit. With every loop stopped, a job of the circuit stays
    // queued: the deletion is refused naming it, and goes through once the job is cancelled.
    let _ = stop.send(true);
    for l in loops {
        let _ = l.await;
    }
    let (waiting, _) = submit(prove(&tenant, &id, vec![keys[1].clone()]), tenant.clone()).await.unwrap();
    match p.delete_circuit(&tenant, &id).await {
        Err(PlatformError::Precondition(m)) => assert!(m.contains(&waiting), "{m}"),
        other => panic!("deleting a circuit a queued job proves: {other:?}"),
    }
    assert!(p.registered_circuit(&tenant, &id).await.unwrap().is_some(), "a refused deletion deleted something");
    // Another tenant reaches nothing of it.
    assert_eq!(p.delete_circuit(&other, &id).await.unwrap(), None);
    assert_eq!(invalid_field(p.delete_circuit(&tenant, "../x").await), "circuit_id");
    p.cancel(&waiting).await.unwrap();
    let deleted = p.delete_circuit(&tenant, &id).await.unwrap().expect("the circuit's objects");
    assert!(deleted >= 4, "circuit.json, circuit.r1cs, pk.bin, vk.bin: {deleted}");
    assert!(p.blobs().list(&platform::layout::circuit_prefix(&tenant, &id)).await.unwrap().is_empty());
    assert!(p.registered_circuit(&tenant, &id).await.unwrap().is_none());
    assert!(p.registered_circuits(&tenant).await.unwrap().is_empty());
    assert_eq!(p.delete_circuit(&tenant, &id).await.unwrap(), None, "deleted twice");
    assert_eq!(p.job_store().usage(&tenant, jobs::Usage::Circuits).await.unwrap(), 0, "a deleted circuit is still charged");
    assert_eq!(invalid_field(submit(prove(&tenant, &id, keys.clone()), tenant.clone()).await), "circuit_id", "a deleted circuit");
    // Proofs published before stay verifiable under their own vk.bin.
    assert!(p.verify_pari_outputs(&pj, Some(&digest)).await.is_ok());
}

/// The cross-job bundle verifies under the circuit's key, its entries' public input b are
/// `b_values` in order, and a bundle with one entry's proof replaced by another's does not.
fn check_cross<E: ark_ec::pairing::Pairing>(vk: &[u8], bundle: &[u8], b_values: &[u64]) {
    let pvk = pari::VerifyingKey::<E>::from_bytes(vk).unwrap().prepare().unwrap();
    let mut b = pari::bundle::Bundle::<E>::from_bytes(bundle).unwrap();
    b.verify(&pvk, &mut rand::thread_rng()).unwrap();
    let found: Vec<String> = b.items.iter().map(|(x, _)| x[2].to_string()).collect();
    assert_eq!(found, b_values.iter().map(|v| v.to_string()).collect::<Vec<_>>());
    // A proof moved to an entry with other public inputs (the checked-in fixtures give every
    // entry the same witness, so there may be none), and an entry's public input changed.
    if let Some(j) = (1..b.items.len()).find(|&j| b.items[j].0 != b.items[0].0) {
        let mut moved = b.clone();
        moved.items[j].1 = moved.items[0].1.clone();
        assert!(moved.verify(&pvk, &mut rand::thread_rng()).is_err(), "a proof moved to another entry verified");
    }
    b.items[1].0[2] += E::ScalarField::from(1u64);
    assert!(b.verify(&pvk, &mut rand::thread_rng()).is_err(), "an entry with a changed public input verified");
}

/// A second setup of the same circuit: another key pair's bytes.
fn other_key<E: ark_ec::pairing::Pairing>(r1cs: &[u8]) -> (Vec<u8>, Vec<u8>) {
    use rand::SeedableRng;
    let r = circom::R1cs::<E::ScalarField>::from_bytes(r1cs).unwrap();
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(99);
    let (pk, vk) = pari::setup::<E, _, _>(circom::CircomCircuit { r1cs: &r, witness: None }, &mut rng).unwrap();
    (pk.to_bytes(), vk.to_bytes())
}

/// Issue 32 item 5, a tenant's circuit quota: a file that alone would pass it is refused at
/// registration; one whose keys would pass it fails its job in the setup, naming the quota,
/// with nothing stored and nothing charged; a tenant with room registers the same file.
async fn circuit_quota(real: bool) {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(5), ..QueueConfig::default() };
    let Some((q, blobs, store, _dir)) = common::backends(real, cfg).await else { return };
    let (r1cs, _) = example("bn254");
    let quotas = platform::Quotas { max_circuit_bytes: Some(r1cs.len() as u64 + 1000), ..platform::Quotas::NONE };
    let p = Platform::with_config(q, blobs, store, platform::PlatformConfig { quotas, ..Default::default() });
    let run = uuid::Uuid::new_v4().simple().to_string();
    let (small, tiny) = (format!("small-{run}"), format!("tiny-{run}"));
    let key = upload(&p, &small, "example.r1cs", r1cs.clone()).await;
    let (stop, rx) = watch::channel(false);
    let loops = vec![tokio::spawn(p.clone().run_executor("ex".into(), rx.clone())), tokio::spawn(p.clone().run_worker("w".into(), rx.clone()))];
    let (id, _, job) = p.register_circuit(&small, &key).await.unwrap();
    match wait(&p, &job.expect("a registration job")).await {
        JobOutcome::Failed(m) => assert!(m.contains("bytes of registered circuits per tenant") && m.contains("delete a circuit"), "{m}"),
        other => panic!("a registration past the quota ended {other:?}"),
    }
    assert!(p.blobs().list(&platform::layout::circuit_prefix(&small, &id)).await.unwrap().is_empty(), "a refused setup stored keys");
    assert_eq!(p.job_store().usage(&small, jobs::Usage::Circuits).await.unwrap(), 0, "a refused setup was charged");
    // A tenant whose circuits already hold more than the room the file needs: refused before
    // any job.
    p.job_store().charge(&tiny, jobs::Usage::Circuits, &"0".repeat(64), 1001, None, None).await.unwrap();
    let key = upload(&p, &tiny, "example.r1cs", r1cs.clone()).await;
    let quota = p.register_circuit(&tiny, &key).await.map(|_| ());
    assert!(matches!(&quota, Err(PlatformError::Quota(m)) if m.contains("bytes of registered circuits per tenant")), "{quota:?}");
    assert!(p.job_store().list_tenant(&tiny, 0, 10).await.unwrap().0.is_empty(), "a refused registration made a job");
    let _ = stop.send(true);
    for l in loops {
        let _ = l.await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_circuit_quota() {
    circuit_quota(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_s3_circuit_quota() {
    circuit_quota(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_registered_circuits_bls12_381() {
    run(false, "bls12381").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_registered_circuits_bn254() {
    run(true, "bn254").await;
}

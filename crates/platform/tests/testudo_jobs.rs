//! Testudo jobs through the platform (issue 36 step 11): a registered BLS12-381 circom circuit
//! proved per witness with Spartan and Testudo-Comm under the universal key the first job's
//! setup makes; the aggregator verifies every proof against the public signals of the job's
//! own inputs before it publishes. Embedded and against real Redis and S3 (MinIO). The
//! compression (`compress: true`, a Pari proof of a ≈ 0.5M-constraint circuit per witness) is
//! the ignored test at the end: about half an hour on 2 cores.

use std::sync::Arc;
use std::time::Duration;

mod common;

use ark_bls12_381::{Bls12_381, Fr};
use ark_ff::One;
use bytes::Bytes;
use platform::kinds::testudo::{inner_scratch, request, TestudoSpec, JOB, PROVE};
use platform::{JobOutcome, Platform, PlatformError};
use queue::QueueConfig;
use testudo::testudo_comm::TestudoComm;
use tokio::sync::watch;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circom/tests/fixtures");

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(format!("{FIXTURES}/{name}")).unwrap()
}

async fn platform(real: bool) -> Option<(Arc<Platform>, Option<tempfile::TempDir>)> {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(5), ..QueueConfig::default() };
    let (q, blobs, jobs, dir) = common::backends(real, cfg).await?;
    Some((Platform::new(q, blobs, jobs), dir))
}

async fn upload(p: &Platform, tenant: &str, name: &str, bytes: Vec<u8>) -> String {
    let key = format!("tenants/{tenant}/uploads/{name}");
    p.blobs().put(&key, Bytes::from(bytes)).await.unwrap();
    key
}

async fn wait(p: &Platform, job: &str) -> JobOutcome {
    tokio::time::timeout(Duration::from_secs(1800), p.wait(job, |_| {})).await.expect("job did not end")
}

async fn published(p: &Platform, job: &str, name: &str) -> Vec<u8> {
    p.blobs().get(&platform::layout::proof_file(job, name)).await.unwrap().to_vec()
}

fn invalid_field(r: Result<impl std::fmt::Debug, PlatformError>) -> &'static str {
    match r {
        Err(PlatformError::InvalidJob { field, .. }) => field,
        other => panic!("expected an invalid request, got {other:?}"),
    }
}

/// The fixture circuit in Spartan's layout (what a verifier builds from its own `.r1cs`).
fn verifier_r1cs() -> testudo::r1cs::R1cs<Fr> {
    let m = circom::R1cs::<Fr>::from_bytes(&fixture("example-bls12381.r1cs")).unwrap().io_first_matrices();
    testudo::r1cs::R1cs::new(m.num_constraints, m.num_io, m.num_aux, m.a, m.b, m.c).unwrap()
}

/// A registered fixture circuit of a fresh tenant, with the executor, aggregator and (for the
/// task kinds `kinds`, all when empty) a worker running until `stop`.
async fn registered(p: &Arc<Platform>, kinds: &'static [&'static str]) -> (String, String, watch::Sender<bool>) {
    let tenant = format!("tt-{}", uuid::Uuid::new_v4().simple());
    let r1cs_key = upload(p, &tenant, "example.r1cs", fixture("example-bls12381.r1cs")).await;
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    // The registration's own setup, then the worker of the test.
    let (stop_reg, rx_reg) = watch::channel(false);
    tokio::spawn(p.clone().run_worker_for("reg".into(), &["circuit.setup"], rx_reg));
    let (id, _, job) = p.register_circuit(&tenant, &r1cs_key).await.unwrap();
    assert_eq!(wait(p, &job.unwrap()).await, JobOutcome::Done);
    let _ = stop_reg.send(true);
    if kinds.is_empty() {
        tokio::spawn(p.clone().run_worker("w".into(), rx));
    } else {
        tokio::spawn(p.clone().run_worker_for("w".into(), kinds, rx));
    }
    (tenant, id, stop)
}

async fn run(real: bool) {
    let _ = tracing_subscriber::fmt().with_env_filter(tracing_subscriber::EnvFilter::from_default_env()).with_test_writer().try_init();
    let Some((p, _dir)) = platform(real).await else { return };
    let (tenant, id, stop) = registered(&p, &[]).await;
    let w: Vec<String> = {
        let mut keys = Vec::new();
        for (i, f) in ["example-bls12381.wtns", "example-bls12381-w1.wtns"].iter().enumerate() {
            keys.push(upload(&p, &tenant, &format!("w{i}.wtns"), fixture(f)).await);
        }
        keys
    };
    let spec = |witnesses: Vec<String>| TestudoSpec { circuit_id: id.clone(), witnesses, compress: false };

    // Bad requests name their field and write nothing.
    assert_eq!(invalid_field(p.submit_as(&tenant, request(&spec(vec![])), None).await), "witness_object_keys");
    assert_eq!(invalid_field(p.submit_as(&tenant, request(&spec(vec![w[0].clone(), w[0].clone()])), None).await), "witness_object_keys");
    let missing = format!("tenants/{tenant}/uploads/none.wtns");
    assert_eq!(invalid_field(p.submit_as(&tenant, request(&spec(vec![missing])), None).await), "witness_object_keys");
    let bn = upload(&p, &tenant, "bn.wtns", fixture("example-bn254.wtns")).await;
    assert_eq!(invalid_field(p.submit_as(&tenant, request(&spec(vec![bn])), None).await), "witness_object_keys", "a BN254 witness");
    let unknown = TestudoSpec { circuit_id: "ab".repeat(32), witnesses: w.clone(), compress: false };
    assert_eq!(invalid_field(p.submit_as(&tenant, request(&unknown), None).await), "circuit_id");
    assert_eq!(invalid_field(p.submit_as("someone-else", request(&spec(w.clone())), None).await), "circuit_id", "another tenant's circuit is unknown");

    // The honest job.
    let (job, _) = p.submit_as(&tenant, request(&spec(w.clone())), None).await.unwrap();
    assert_eq!(wait(&p, &job).await, JobOutcome::Done, "{:?}", p.job_store().get(&job).await.unwrap().map(|r| (r.message, r.tasks)));
    let circuit: serde_json::Value = serde_json::from_slice(&published(&p, &job, "circuit.json").await).unwrap();
    assert_eq!(circuit["circuit_id"], id.as_str());
    assert!(circuit.get("final_key_digest").is_none());
    let manifest = platform::manifest::Manifest::from_bytes(&published(&p, &job, "manifest.json").await).unwrap();
    assert_eq!(manifest.kind, JOB);
    let pinned = manifest.pins["tc_vk_digest"].clone();
    assert_eq!(circuit["tc_vk_digest"], pinned.as_str());
    // Offline: the verifier's own circuit, the pinned key, the published public signals.
    let vk = testudo::files::vk_from_bytes::<Bls12_381>(&published(&p, &job, "tc-vk.bin").await).unwrap();
    assert_eq!(testudo::compress::tc_vk_digest(&vk).to_string(), pinned);
    let r1cs = verifier_r1cs();
    let public: Vec<serde_json::Value> = serde_json::from_slice(&published(&p, &job, "public.json").await).unwrap();
    assert_eq!(public.len(), 2);
    let mut proofs = Vec::new();
    for (i, entry) in public.iter().enumerate() {
        let io: Vec<Fr> = entry["public"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().parse().unwrap()).collect();
        assert_eq!(io[0], Fr::from(if i == 0 { 33u64 } else { 35 }), "c = a·b of witness {i}");
        let proof = testudo::files::proof_from_bytes::<Bls12_381>(&published(&p, &job, &format!("inner-{i}.bin")).await).unwrap();
        testudo::spartan::verify::<Fr, TestudoComm<Bls12_381>>(&vk, &r1cs, &io, &proof).unwrap();
        // Another public signal, or the other witness's proof: rejected.
        let mut other = io.clone();
        other[0] += Fr::one();
        assert!(testudo::spartan::verify::<Fr, TestudoComm<Bls12_381>>(&vk, &r1cs, &other, &proof).is_err());
        proofs.push((io, proof));
    }
    assert!(testudo::spartan::verify::<Fr, TestudoComm<Bls12_381>>(&vk, &r1cs, &proofs[1].0, &proofs[0].1).is_err());
    // VerifyProof's check, pinned to the key and to another digest.
    let rec = p.job_store().get(&job).await.unwrap().unwrap();
    let kind = p.registry().job_kind(JOB).unwrap().clone();
    let out = kind.verify_outputs(&p, &rec, platform::kinds::Pins { vk_digest: Some(&pinned), ..Default::default() }).await.unwrap();
    assert!(out.as_ref().is_ok_and(|a| a.contains("2 proof(s)")), "{out:?}");
    let wrong = "00".repeat(32);
    let out = kind.verify_outputs(&p, &rec, platform::kinds::Pins { vk_digest: Some(&wrong), ..Default::default() }).await.unwrap();
    assert!(out.is_err(), "{out:?}");
    // A published proof replaced by the other witness's: VerifyProof says which.
    let other_proof = published(&p, &job, "inner-1.bin").await;
    p.blobs().put(&platform::layout::proof_file(&job, "inner-0.bin"), Bytes::from(other_proof)).await.unwrap();
    let out = kind.verify_outputs(&p, &rec, platform::kinds::Pins { vk_digest: Some(&pinned), ..Default::default() }).await.unwrap();
    assert!(out.as_ref().is_err_and(|e| e.contains("witness 0")), "{out:?}");
    // A second job reuses the universal key.
    let (job2, _) = p.submit_as(&tenant, request(&spec(vec![w[1].clone()])), None).await.unwrap();
    assert_eq!(wait(&p, &job2).await, JobOutcome::Done);
    let m2 = platform::manifest::Manifest::from_bytes(&published(&p, &job2, "manifest.json").await).unwrap();
    assert_eq!(m2.pins["tc_vk_digest"], pinned, "the second job made another universal key");

    // A witness that breaks a constraint: the job fails naming it.
    let mut v = circom::read_wtns::<Fr>(&fixture("example-bls12381.wtns")).unwrap();
    v[1] += Fr::one();
    let broken = upload(&p, &tenant, "broken.wtns", circom::write_wtns(&v)).await;
    let (bad, _) = p.submit_as(&tenant, request(&spec(vec![w[0].clone(), broken])), None).await.unwrap();
    match wait(&p, &bad).await {
        JobOutcome::Failed(m) => assert!(m.contains("witness 1") && m.contains("constraint"), "{m}"),
        other => panic!("a broken witness: {other:?}"),
    }
    let _ = stop.send(true);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_testudo_job() {
    run(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_testudo_job() {
    run(true).await;
}

async fn claim(p: &Platform, job: &str, kind: &str) -> queue::Lease {
    for _ in 0..6000 {
        if let Ok(Some(l)) = p.queue().claim(kind, "lying-worker", Duration::from_millis(50)).await {
            if l.task.job_id == job {
                return l;
            }
            let _ = p.queue().release(&l).await;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("no {kind} task appeared");
}

/// A lying prove worker (this test) hands the aggregator, for witness 1, a valid proof of
/// witness 0: a true statement, but not about this job's witness. The aggregator reads the
/// public signals from the job's own inputs, so the job fails naming witness 1 and publishes
/// nothing.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_aggregator_refuses_a_proof_of_another_witness() {
    let Some((p, _dir)) = platform(false).await else { return };
    let (tenant, id, stop) = registered(&p, &["testudo.setup"]).await;
    let w0 = upload(&p, &tenant, "w0.wtns", fixture("example-bls12381.wtns")).await;
    let w1 = upload(&p, &tenant, "w1.wtns", fixture("example-bls12381-w1.wtns")).await;
    let (job, _) = p.submit_as(&tenant, request(&TestudoSpec { circuit_id: id, witnesses: vec![w0, w1], compress: false }), None).await.unwrap();
    // Witness 0's honest proof, made as a worker would under the job's key.
    let keys: serde_json::Value = {
        let lease = claim(&p, &job, PROVE.name).await;
        let keys = p.blobs().get(&format!("{}testudo/keys.json", platform::layout::job_prefix(&job))).await.unwrap();
        p.queue().release(&lease).await.unwrap();
        serde_json::from_slice(&keys).unwrap()
    };
    let ck_file = platform::kinds::testudo::tc_key_file(keys["tc_vk_digest"].as_str().unwrap(), "ck.bin");
    let ck = testudo::files::ck_from_bytes::<Bls12_381>(&p.blobs().get(&ck_file).await.unwrap()).unwrap();
    let circom_r1cs = circom::R1cs::<Fr>::from_bytes(&fixture("example-bls12381.r1cs")).unwrap();
    let full = circom::read_wtns::<Fr>(&fixture("example-bls12381.wtns")).unwrap();
    let (io, aux) = circom_r1cs.split_witness(&full).unwrap();
    let proof = testudo::spartan::prove::<Fr, TestudoComm<Bls12_381>>(&ck, &verifier_r1cs(), io, aux).unwrap();
    let bytes = Bytes::from(testudo::files::proof_to_bytes::<Bls12_381>(&proof));
    for _ in 0..2 {
        let lease = claim(&p, &job, PROVE.name).await;
        let index: u64 = lease.task.task_id.parse().unwrap();
        p.blobs().put(&inner_scratch(&job, index), bytes.clone()).await.unwrap();
        let report = serde_json::json!({ "step": PROVE.name, "index": index, "payload": "" });
        // As the typed contract sends it: the message id names the step and the index.
        let mut as_report = lease.clone();
        as_report.task.task_id = format!("{}:{index}", PROVE.name);
        p.report_with(&as_report, platform::kinds::testudo::DONE, report.to_string()).await.unwrap();
        p.queue().complete(&lease).await.unwrap();
    }
    match wait(&p, &job).await {
        JobOutcome::Failed(m) => assert!(m.contains("witness 1: inner proof") && !m.contains("witness 0"), "{m}"),
        other => panic!("expected the job to fail, got {other:?}"),
    }
    assert!(!p.blobs().exists(&platform::layout::proof_file(&job, "inner-0.bin")).await.unwrap(), "a proof was published");
    let _ = stop.send(true);
}

/// The compressed job end to end (ignored: the compression's Pari setup and proof on BW6-767
/// of a ≈ 0.5M-constraint circuit take about half an hour on 2 cores): the final proof
/// verifies offline under the final key pinned by the manifest's digest, and a tampered one
/// (`v_M` moved) is rejected.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore]
async fn a_compressed_testudo_job_ends_in_a_final_proof() {
    use ark_bw6_767::BW6_767;
    use testudo::compress::{verify_final, FinalKey, FinalProof, KeyDigest};
    let Some((p, _dir)) = platform(false).await else { return };
    let (tenant, id, stop) = registered(&p, &[]).await;
    let w0 = upload(&p, &tenant, "w0.wtns", fixture("example-bls12381.wtns")).await;
    let (job, _) = p.submit_as(&tenant, request(&TestudoSpec { circuit_id: id, witnesses: vec![w0], compress: true }), None).await.unwrap();
    assert_eq!(wait(&p, &job).await, JobOutcome::Done, "{:?}", p.job_store().get(&job).await.unwrap().map(|r| r.message));
    let manifest = platform::manifest::Manifest::from_bytes(&published(&p, &job, "manifest.json").await).unwrap();
    let pinned = manifest.pins["final_key_digest"].clone();
    let key = FinalKey::<BW6_767>::from_bytes(&published(&p, &job, "final-key.bin").await).unwrap();
    let digest = KeyDigest(hex_32(&pinned));
    key.check_digest(&digest).unwrap();
    let public: Vec<serde_json::Value> = serde_json::from_slice(&published(&p, &job, "public.json").await).unwrap();
    let io: Vec<Fr> = public[0]["public"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().parse().unwrap()).collect();
    let fin = FinalProof::<Fr, BW6_767>::from_bytes(&published(&p, &job, "final-0.bin").await).unwrap();
    let pvk = key.pari_vk.prepare().unwrap();
    let r1cs = verifier_r1cs();
    verify_final(&key, &pvk, &r1cs, &io, &fin).unwrap();
    let mut moved = fin.clone();
    moved.v_m += Fr::one();
    assert!(verify_final(&key, &pvk, &r1cs, &io, &moved).is_err());
    let mut other = io.clone();
    other[0] += Fr::one();
    assert!(verify_final(&key, &pvk, &r1cs, &other, &fin).is_err());
    let _ = stop.send(true);
}

fn hex_32(s: &str) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    out
}

/// Fair share holds for Testudo as for every kind that fans out (issue 57): with a job window
/// of 1, the setup's report releases one prove task of three, not all of them, and each report
/// releases the next, so the job still ends with every proof made.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn testudo_prove_tasks_are_held_to_the_job_window() {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(5), ..QueueConfig::default() };
    let Some((q, blobs, jobs, _dir)) = common::backends(false, cfg).await else { return };
    let p = Platform::with_config(q, blobs, jobs, platform::PlatformConfig { job_window: 1, ..Default::default() });
    let (tenant, id, stop) = registered(&p, &["testudo.setup"]).await;
    let mut witnesses = Vec::new();
    for i in 0..3 {
        witnesses.push(upload(&p, &tenant, &format!("w{i}.wtns"), fixture("example-bls12381.wtns")).await);
    }
    let (job, _) = p.submit_as(&tenant, request(&TestudoSpec { circuit_id: id, witnesses, compress: false }), None).await.unwrap();
    // The event: the executor has applied the setup's report (its report task is gone and a
    // prove task is queued; nothing claims prove tasks yet).
    loop {
        let rec = p.job_store().get(&job).await.unwrap().unwrap();
        let setup_done = rec.tasks.get("testudo.setup").is_some_and(|c| c.done == 1);
        let reports = p.queue().job_tasks("testudo.done", &job).await.unwrap();
        let proves = p.queue().job_tasks(PROVE.name, &job).await.unwrap();
        if setup_done && reports == 0 && proves > 0 {
            break;
        }
        assert!(!rec.state.is_terminal(), "the job ended: {}", rec.message);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(p.queue().job_tasks(PROVE.name, &job).await.unwrap(), 1, "prove tasks queued beyond the job window of 1");
    let (stop2, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_worker_for("prover".into(), &[PROVE.name], rx));
    assert_eq!(wait(&p, &job).await, JobOutcome::Done);
    let _ = (stop.send(true), stop2.send(true));
}

//! Reckle final proofs on the platform (issue 29), the parts that need no real wrap key (a real
//! one takes minutes and about 10 GB to make: `scripts/bench-reckle-final.sh` runs the whole
//! path): requests refused without a stored pinned wrap key, wrap tasks routed only to wrap
//! workers, and the aggregator refusing the final proofs of a lying wrap worker.

use std::sync::Arc;
use std::time::Duration;

mod common;

use ark_bn254::{Bn254, Fr};
use ark_ec::AffineRepr;
use ark_relations::gr1cs::{ConstraintSynthesizer, ConstraintSystemRef, LinearCombination, SynthesisError, Variable};
use bytes::Bytes;
use jobs::JobState;
use platform::kinds::reckle::wrap::{final_scratch, parse_wrap_digest, wrap_key_file, FINAL_FILE, WRAP};
use platform::{Submission, Leaves, Platform, PlatformConfig, PlatformError};
use plonky2_r1cs::shrink::NormalizeCircuit;
use plonky2_r1cs::wrap::{FinalProof, WrapPublic, PINNED_WRAP_VK_DIGEST, WRAP_VERSION};
use queue::QueueConfig;
use rand::SeedableRng;
use reckle::{Circuits, Digest, Params, Tree};
use tokio::sync::watch;

/// A circuit with `n` free public inputs (each only `x·1 = x`): a real Pari key of the wrap's
/// instance size that is **not** the wrap key, to pin in these tests.
struct FreeInputs(usize);

impl ConstraintSynthesizer<Fr> for FreeInputs {
    fn generate_constraints(self, cs: ConstraintSystemRef<Fr>) -> Result<(), SynthesisError> {
        for i in 0..self.0 {
            let x = cs.new_input_variable(|| Ok(Fr::from(i as u64)))?;
            let lc = |v: Variable| {
                let mut l = LinearCombination::zero();
                l += (Fr::from(1u64), v);
                l
            };
            cs.enforce_r1cs_constraint(|| lc(x), || lc(Variable::One), || lc(x))?;
        }
        Ok(())
    }
}

/// A verifying key with `n` public inputs, and its digest.
fn key(n: usize) -> (Vec<u8>, String) {
    let (_pk, vk) = pari::generator::setup::<Bn254, _, _>(FreeInputs(n), &mut rand_chacha::ChaCha20Rng::seed_from_u64(7)).expect("setup");
    (vk.to_bytes(), vk.digest().to_string())
}

fn request(values: &[u64], batch: Vec<u64>) -> Submission {
    platform::kinds::reckle::batch_request(2, 1, batch, Leaves::Inline(values.to_vec()), true)
}

async fn platform(config: PlatformConfig) -> (Arc<Platform>, Option<tempfile::TempDir>) {
    let (q, blobs, store, dir) = common::backends(false, QueueConfig::default()).await.expect("embedded backends");
    (Platform::with_config(q, blobs, store, config), dir)
}

#[tokio::test]
async fn final_proofs_are_refused_without_a_stored_pinned_wrap_key() {
    let values = [1, 2, 3, 4];
    // No key pinned: refused, naming the field and the setting, nothing recorded.
    let (p, _dir) = platform(PlatformConfig::default()).await;
    match p.submit(request(&values, vec![1]), None).await {
        Err(PlatformError::Precondition(m)) => assert!(m.contains("final_proof") && m.contains("--reckle-wrap-vk-digest"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(p.job_store().list(0, 10).await.unwrap().0.is_empty());
    assert!(p.blobs().list("jobs/").await.unwrap().is_empty());

    // A key pinned but not stored.
    let (vk8, d8) = key(8);
    let (p, _dir) = platform(PlatformConfig { reckle_wrap_vk_digest: Some(d8.clone()), ..Default::default() }).await;
    match p.submit(request(&values, vec![1]), None).await {
        Err(PlatformError::Precondition(m)) => assert!(m.contains("final_proof") && m.contains("not stored"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    // Stored under its digest, it is accepted; a job without final_proof never needed it.
    p.blobs().put(&wrap_key_file(&d8, "vk.bin"), Bytes::from(vk8)).await.unwrap();
    p.submit(request(&values, vec![1]), None).await.expect("accepted once the key is stored");

    // Bytes under a digest that are not that key's, and a key that is not the wrap circuit's
    // shape (1 public input), are refused.
    let (vk1, d1) = key(1);
    let (p, _dir) = platform(PlatformConfig { reckle_wrap_vk_digest: Some(d1.clone()), ..Default::default() }).await;
    p.blobs().put(&wrap_key_file(&d1, "vk.bin"), Bytes::from(vk1)).await.unwrap();
    match p.submit(request(&values, vec![1]), None).await {
        Err(PlatformError::Precondition(m)) => assert!(m.contains("final_proof") && m.contains("not a wrap key"), "{m}"),
        other => panic!("expected a refusal, got {other:?}"),
    }
    let (p, _dir) = platform(PlatformConfig { reckle_wrap_vk_digest: Some(d8.clone()), ..Default::default() }).await;
    let (vk8_other, _) = {
        let (_pk, vk) = pari::generator::setup::<Bn254, _, _>(FreeInputs(8), &mut rand_chacha::ChaCha20Rng::seed_from_u64(8)).unwrap();
        (vk.to_bytes(), ())
    };
    p.blobs().put(&wrap_key_file(&d8, "vk.bin"), Bytes::from(vk8_other)).await.unwrap();
    assert!(p.submit(request(&values, vec![1]), None).await.is_err(), "a substituted vk.bin is refused");
}

#[test]
fn the_public_seed_wrap_key_is_never_pinned() {
    let e = parse_wrap_digest(PINNED_WRAP_VK_DIGEST).unwrap_err();
    assert!(e.contains("WRAP_KEY_SEED"), "{e}");
    assert!(parse_wrap_digest("abc").is_err());
    let mut cfg = platform::service::ServiceConfig::from_env().unwrap();
    cfg.reckle_wrap_vk_digest = Some(PINNED_WRAP_VK_DIGEST.to_string());
    let e = cfg.platform_config().err().expect("refused").to_string();
    assert!(e.contains("--reckle-wrap-vk-digest"), "{e}");
    cfg.reckle_wrap_vk_digest = Some("0".repeat(128));
    assert_eq!(cfg.platform_config().unwrap().reckle_wrap_vk_digest.as_deref(), Some("0".repeat(128).as_str()));
}

#[tokio::test]
async fn only_wrap_workers_claim_wrap_tasks() {
    let (p, _dir) = platform(PlatformConfig::default()).await;
    assert!(!p.worker_kinds().contains(&WRAP));
    let (_tx, rx) = watch::channel(false);
    match p.clone().run_worker_for("w".into(), &[WRAP.name], rx).await {
        Err(PlatformError::Config(m)) => assert!(m.contains("--reckle-wrap-worker"), "{m}"),
        other => panic!("expected a configuration error, got {other:?}"),
    }
    let (p, _dir) = platform(PlatformConfig { reckle_wrap_worker: true, ..Default::default() }).await;
    assert!(p.worker_kinds().contains(&WRAP));
}

/// The public values an honest final proof of `values`' tree with `batch` carries.
fn honest_public(circuits: &Circuits, values: &[u64], batch: &[u64]) -> WrapPublic {
    let params = circuits.params();
    let tree = Tree::build(params, values.to_vec()).unwrap();
    let pairs: Vec<(u64, u64)> = batch.iter().map(|&i| (i, values[i as usize])).collect();
    let n = NormalizeCircuit::build(circuits.root_key()).unwrap();
    WrapPublic {
        c: tree.root(),
        d: reckle::hash::canonical_digest(params.log_n, &pairs).unwrap(),
        sum: pairs.iter().map(|&(_, v)| v as u128).sum(),
        count: pairs.len() as u64,
        circuit_id: Digest::from_hash(n.circuit_id()),
    }
}

/// Jobs with final proofs wait for a wrap worker (none runs here: the default worker does not
/// take the task), and the aggregator refuses what a lying wrap worker (this test) hands it:
/// a proof that does not verify under the pinned key, a proof about another job's C, a proof of
/// another circuit. Each job fails with the reason, and publishes nothing.
#[tokio::test]
async fn the_aggregator_refuses_the_final_proofs_of_a_lying_wrap_worker() {
    let (vk8, d8) = key(8);
    let (p, _dir) = platform(PlatformConfig { reckle_wrap_vk_digest: Some(d8.clone()), ..Default::default() }).await;
    p.blobs().put(&wrap_key_file(&d8, "vk.bin"), Bytes::from(vk8)).await.unwrap();
    let (tx, rx) = watch::channel(false);
    let mut loops = Vec::new();
    loops.push(tokio::spawn(p.clone().run_executor("executor".into(), rx.clone())));
    loops.push(tokio::spawn(p.clone().run_aggregator("aggregator".into(), rx.clone())));
    loops.push(tokio::spawn(p.clone().run_worker("worker".into(), rx.clone())));

    let params = Params::new(2, 1).unwrap();
    let circuits = Circuits::build(params).unwrap();
    let (a, b) = ([10, 20, 30, 40], [11, 21, 31, 41]);
    let honest_a = honest_public(&circuits, &a, &[1, 2]);
    let honest_b = honest_public(&circuits, &b, &[1, 2]);
    let g = ark_bn254::G1Affine::generator();
    let forged = pari::Proof::<Bn254> { t: g, u: (g + g).into(), v_a: Fr::from(4u64), v_b: Fr::from(5u64) };
    let mut other_id = honest_a.circuit_id;
    other_id.0[0] ^= 1;
    let lies = [
        (a, honest_a, "the Pari proof does not verify"),
        (b, WrapPublic { c: honest_a.c, ..honest_b }, "not the expected C"),
        (a, WrapPublic { circuit_id: other_id, ..honest_a }, "another circuit"),
    ];
    for (values, public, reason) in lies {
        let (job, _) = p.submit(request(&values, vec![1, 2]), None).await.unwrap();
        let rec = p.job_store().get(&job).await.unwrap().unwrap();
        assert!(rec.spec.contains(&d8), "the job records the wrap key it uses");
        // The wrap task is queued once the root is proved, and only this test claims it (the
        // worker running beside would fail the job: it has no proving key).
        let lease = loop {
            if let Some(l) = p.queue().claim(WRAP.name, "liar", Duration::from_millis(200)).await.unwrap() {
                break l;
            }
            let rec = p.job_store().get(&job).await.unwrap().unwrap();
            assert_eq!(rec.state, JobState::Running, "the job waits for a wrap worker: {}", rec.message);
        };
        assert_eq!(lease.task.job_id, job);
        let fp = FinalProof { version: WRAP_VERSION, params, public, proof: forged.clone() };
        p.blobs().put(&final_scratch(&job), Bytes::from(fp.to_bytes())).await.unwrap();
        platform::kinds::contract::report::<platform::kinds::reckle::ReckleBatch>(&p, &lease, platform::kinds::reckle::Step::Wrap, 0, String::new()).await.unwrap();
        p.queue().complete(&lease).await.unwrap();
        match p.wait(&job, |_| {}).await {
            platform::JobOutcome::Failed(m) => assert!(m.contains(reason), "{reason}: {m}"),
            other => panic!("{reason}: expected the job to fail, got {other:?}"),
        }
        assert!(!p.blobs().exists(&platform::layout::proof_file(&job, FINAL_FILE)).await.unwrap());
    }
    let _ = tx.send(true);
    for l in loops {
        l.await.unwrap().unwrap();
    }
}

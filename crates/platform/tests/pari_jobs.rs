//! Pari batch jobs through the platform: setup → prove tasks → batch-verified bundles, embedded
//! and against real Redis and S3 (MinIO).

use std::sync::Arc;
use std::time::Duration;

mod common;

use pari::circuits::CircuitFamily;
use platform::{JobOutcome, Submission, Platform, PlatformError};
use queue::QueueConfig;
use tokio::sync::watch;

async fn platform(real: bool) -> Option<(Arc<Platform>, Option<tempfile::TempDir>)> {
    let cfg = QueueConfig { visibility_timeout: Duration::from_secs(5), ..QueueConfig::default() };
    let (q, blobs, jobs, dir) = common::backends(real, cfg).await?;
    Some((Platform::new(q, blobs, jobs), dir))
}

fn request(count: u64) -> Submission {
    platform::kinds::pari::request(CircuitFamily::Chain { steps: 8 }, 100, count, 3, 6)
}

async fn run(real: bool) {
    let Some((p, _dir)) = platform(real).await else { return };
    // Bad requests name the field.
    for (req, field) in [
        (request(0), "count"),
        (platform::kinds::pari::request(CircuitFamily::Chain { steps: 0 }, 0, 1, 1, 1), "circuit"),
        (platform::kinds::pari::request(CircuitFamily::Chain { steps: 2 }, 0, 1, 0, 1), "proofs_per_task"),
        (platform::kinds::pari::request(CircuitFamily::Chain { steps: 2 }, u64::MAX, 2, 1, 1), "seed_start"),
    ] {
        match p.submit(req, None).await {
            Err(PlatformError::InvalidJob { field: f, .. }) => assert_eq!(f, field),
            other => panic!("expected invalid {field}, got {other:?}"),
        }
    }

    let (job, _) = p.submit(request(10), None).await.unwrap();
    let rec = p.job_store().get(&job).await.unwrap().unwrap();
    // 10 proofs, 3 per task: 4 prove tasks; bundles of 2 tasks: 2 bundles.
    assert_eq!(rec.tasks["pari.prove"].total, 4);
    assert_eq!(rec.tasks["pari.bundle"].total, 2);
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    for i in 0..2 {
        tokio::spawn(p.clone().run_worker(format!("w{i}"), rx.clone()));
    }
    let outcome = tokio::time::timeout(Duration::from_secs(600), p.wait(&job, |_| {})).await.unwrap();
    let _ = stop.send(true);
    assert_eq!(outcome, JobOutcome::Done);
    // Pinned to the digest the job published in circuit.json: verified; another digest: refused.
    let circuit: serde_json::Value = serde_json::from_slice(&p.blobs().get(&format!("jobs/{job}/proof/circuit.json")).await.unwrap()).unwrap();
    let digest: pari::KeyDigest = circuit["vk_digest"].as_str().expect("circuit.json names the vk digest").parse().unwrap();
    let against = p.verify_pari_outputs(&job, Some(&digest)).await.unwrap();
    assert!(against.contains(&digest.to_string()), "{against}");
    assert!(p.verify_pari_outputs(&job, None).await.unwrap().contains("not pinned"));
    let other = pari::KeyDigest([7; 64]);
    assert!(p.verify_pari_outputs(&job, Some(&other)).await.is_err(), "a key with another digest was accepted");

    // The bundles verify offline with the library alone, and hold every instance once.
    type E = ark_bls12_381::Bls12_381;
    let dir = format!("jobs/{job}/proof/");
    let vk = pari::VerifyingKey::<E>::from_bytes(&p.blobs().get(&format!("{dir}vk.bin")).await.unwrap()).unwrap();
    let pvk = vk.prepare().unwrap();
    let mut rng = rand::thread_rng();
    let mut inputs = Vec::new();
    for k in 0..2 {
        let b = pari::bundle::Bundle::<E>::from_bytes(&p.blobs().get(&format!("{dir}bundle-{k}.bin")).await.unwrap()).unwrap();
        b.verify(&pvk, &mut rng).unwrap();
        inputs.extend(b.items.iter().map(|(x, _)| x.clone()));
    }
    let expected: Vec<_> = (100..110).map(|s| CircuitFamily::Chain { steps: 8 }.instance::<ark_bls12_381::Fr>(s).1).collect();
    assert_eq!(inputs, expected);

    // No trapdoor outlives the setup (issue 32): an attacker who reads every object the job left
    // in the bucket and replays the derivation the platform once used (a ChaCha20 seed that is
    // BLAKE2b-256 of a domain tag and a stored 32-byte secret) must not rebuild the job's
    // verifying key, which would mean knowing its trapdoor.
    let published_vk = p.blobs().get(&format!("{dir}vk.bin")).await.unwrap();
    for key in p.blobs().list(&format!("jobs/{job}/")).await.unwrap() {
        let stored = p.blobs().get(&key).await.unwrap();
        if stored.len() != 32 {
            continue;
        }
        use blake2::digest::{Update, VariableOutput};
        let mut h = blake2::Blake2bVar::new(32).unwrap();
        h.update(b"prover/pari.setup/v1");
        h.update(&stored);
        let mut seed = [0u8; 32];
        h.finalize_variable(&mut seed).unwrap();
        let mut rng = <rand_chacha::ChaCha20Rng as rand::SeedableRng>::from_seed(seed);
        let (_, rebuilt) = pari::setup::<E, _, _>(CircuitFamily::Chain { steps: 8 }.blank::<ark_bls12_381::Fr>(), &mut rng).unwrap();
        assert_ne!(rebuilt.to_bytes(), published_vk.to_vec(), "{key}, left in the bucket, rebuilds the job's keys");
    }

    // A tampered published bundle is caught by the platform's verifier.
    let mut b = pari::bundle::Bundle::<E>::from_bytes(&p.blobs().get(&format!("{dir}bundle-1.bin")).await.unwrap()).unwrap();
    b.items.swap(0, 1);
    b.items[0].0 = b.items[1].0.clone();
    p.blobs().put(&format!("{dir}bundle-1.bin"), bytes::Bytes::from(b.to_bytes())).await.unwrap();
    assert!(p.verify_pari_outputs(&job, Some(&digest)).await.is_err());
    p.blobs().delete_prefix(&format!("jobs/{job}/")).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_pari_job() {
    run(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn redis_s3_pari_job() {
    run(true).await;
}

/// Fair share (issue 11 item 8): with one worker, a job of 24 prove tasks, and a job of one
/// submitted once the large job's prove tasks are released (its window's worth, or all 24
/// without a window), so the order the test is about is fixed before the small job exists.
/// We read where the small job's prove task came in the order the worker claimed prove tasks
/// (recorded by the queue, not sampled while the jobs run). With a window of 2 the large job
/// holds at most 2 places in the prove queue, so the small job's task is claimed after a few of
/// the large job's; with an unbounded window (every prove task queued at once) it is claimed
/// after all 24. Both measured, in the same run.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_small_job_is_not_starved_behind_a_large_one() {
    async fn large_claims_before_small(window: u64) -> usize {
        let (q, blobs, store, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
        let log = Arc::new(common::claims::ClaimLog::new(q));
        let p = Platform::with_config(log.clone(), blobs, store.clone(), platform::PlatformConfig { job_window: window, ..Default::default() });
        let req = |count: u64| platform::kinds::pari::request(CircuitFamily::Chain { steps: 512 }, 7, count, 1, 24);
        let (large, _) = p.submit(req(24), None).await.unwrap();
        let (tx, rx) = watch::channel(false);
        tokio::spawn(p.clone().run_executor("fair-executor".into(), rx.clone()));
        tokio::spawn(p.clone().run_aggregator("fair-aggregator".into(), rx.clone()));
        tokio::spawn(p.clone().run_worker("fair-worker".into(), rx.clone()));
        // The event the comparison needs: the large job's first prove tasks are dispatched.
        let released = window.min(24);
        while store.release_mark(&large, platform::kinds::pari::PROVE.name).await.unwrap() < released {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        let (small, _) = p.submit(req(1), None).await.unwrap();
        for job in [&small, &large] {
            let outcome = tokio::time::timeout(Duration::from_secs(600), p.wait(job, |_| {})).await.expect("job ended");
            assert_eq!(outcome, JobOutcome::Done);
        }
        let _ = tx.send(true);
        let order = log.jobs_claimed("pari.prove");
        assert_eq!(order.len(), 25, "each prove task claimed once: {order:?}");
        order.iter().position(|j| *j == small).expect("the small job's prove task was claimed")
    }
    let windowed = large_claims_before_small(2).await;
    let unbounded = large_claims_before_small(u64::MAX).await;
    eprintln!("large job's prove tasks claimed before the small job's: window 2: {windowed}/24, unbounded: {unbounded}/24");
    // The small job's setup runs on the same worker while the large job proves, so a few of the
    // large job's tasks go first; what matters is that the small one did not wait for all.
    assert!(windowed < 24, "the small job waited behind every task of the large one ({windowed}/24)");
    assert_eq!(unbounded, 24, "without a window the small job should wait behind every task (the test shows nothing)");
}

/// Fair share across tenants (issue 12 item 3): with one worker, tenant `big` runs four jobs of
/// 16 prove tasks each; once they are proving, tenant `small` submits one job of 8, and we count
/// big's proofs from small's first proof to its last. With a tenant window of 4 (job window 4)
/// big's four jobs share 4 places in the prove queue (one each) to small's 4, so at most about
/// one big task lies between two of small's (about 4 in all; measured 4). With the tenant window
/// off (each job its own window of 4) big holds 16 places, so each of small's later tasks is
/// released behind up to 16 of big's (measured 13 on an idle machine, 7 on a loaded one). Both
/// measured in the same run.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn tenants_share_the_queue_whatever_their_number_of_jobs() {
    async fn big_proofs_while_small_proves(tenant_window: u64) -> u64 {
        // Real Redis and S3 where configured, on a Redis database of its own (another test's
        // worker must not take these tasks); tenant names fresh for each run.
        let backends = match common::backends_in_db(true, QueueConfig::default(), 9).await {
            Some(b) => b,
            None => common::backends(false, QueueConfig::default()).await.unwrap(),
        };
        let (q, blobs, store, _dir) = backends;
        let log = Arc::new(common::claims::ClaimLog::new(q));
        let run = uuid::Uuid::new_v4().simple().to_string();
        let (big_tenant, small_tenant) = (format!("big-{}", &run[..8]), format!("small-{}", &run[..8]));
        let config = platform::PlatformConfig { job_window: 4, tenant_window, ..Default::default() };
        let p = Platform::with_config(log.clone(), blobs, store.clone(), config);
        let req = |count: u64| platform::kinds::pari::request(CircuitFamily::Chain { steps: 512 }, 7, count, 1, count);
        let mut big = Vec::new();
        for _ in 0..4 {
            big.push(p.submit_as(&big_tenant, req(16), None).await.unwrap().0);
        }
        let (tx, rx) = watch::channel(false);
        tokio::spawn(p.clone().run_executor("tenants-executor".into(), rx.clone()));
        tokio::spawn(p.clone().run_aggregator("tenants-aggregator".into(), rx.clone()));
        tokio::spawn(p.clone().run_worker("tenants-worker".into(), rx.clone()));
        let proved = |job: &str| {
            let (store, job) = (store.clone(), job.to_string());
            async move { store.get(&job).await.unwrap().unwrap().tasks["pari.prove"].done }
        };
        // Small submits once every job of big is proving.
        let mut proving = 0;
        while proving < big.len() {
            proving = 0;
            for job in &big {
                proving += usize::from(proved(job).await > 0);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let (small, _) = p.submit_as(&small_tenant, req(8), None).await.unwrap();
        for job in big.iter().chain([&small]) {
            assert_eq!(tokio::time::timeout(Duration::from_secs(300), p.wait(job, |_| {})).await.expect("job ended"), JobOutcome::Done);
        }
        let _ = tx.send(true);
        // Big's prove tasks the worker claimed between small's first and its last, in the order
        // the queue handed them out.
        let order = log.jobs_claimed("pari.prove");
        let first = order.iter().position(|j| *j == small).expect("small's tasks were claimed");
        let last = order.iter().rposition(|j| *j == small).unwrap();
        order[first..=last].iter().filter(|j| big.contains(j)).count() as u64
    }
    let fair = big_proofs_while_small_proves(4).await;
    let unfair = big_proofs_while_small_proves(0).await;
    eprintln!("big tenant's proofs while the small tenant proved its 8: tenant window 4: {fair}, off: {unfair}");
    assert!(fair <= 8, "with a tenant window big took more than an equal share of the worker ({fair} proofs to small's 8)");
    // How much more big takes without the window depends on how far big's jobs got before
    // small submitted, which a loaded machine changes (13 against 4 on an idle one; 7 against 4
    // in a fresh-clone run beside a build): only that it takes more is asserted.
    assert!(unfair > fair, "without a tenant window big should take more of the worker (the test shows nothing): {unfair} against {fair}");
}

//! Issue 32 item 1, Hekaton: no key a Hekaton job uses may be rebuilt from what the store
//! holds. The job's secret (`inputs/hekaton-secret.bin`) seeded the Mirage setup ("setup") and
//! the aggregation SRS ("aggregate-setup") once: whoever read the bucket could redo the setup
//! byte for byte and learn the trapdoor. This test is that reader: it takes the secret (at
//! submission, the most it could ever see), lets the job run, then re-derives both setups the
//! way the secret was used and checks that neither reproduces the published keys.

use std::time::Duration;

mod common;

use ark_bls12_381::{Bls12_381, Fr};
use blake2::digest::{Update, VariableOutput};
use hekaton::aggregate::srs::Srs;
use hekaton::aggregate::AggVerifyingKey;
use hekaton::aggregated;
use hekaton::spec::CircuitSpec;
use hekaton::workflow::{self, VerifyingKey, VkDigest};
use platform::kinds::hekaton::SECRET;
use platform::{JobOutcome, Platform};
use queue::QueueConfig;
use rand::SeedableRng;
use tokio::sync::watch;

/// The seed the kind derived for `purpose` from the job's secret (BLAKE2b-256 with the tag
/// `prover/hekaton/v1/`): what a reader of the bucket can compute.
fn derived(secret: &[u8], purpose: &str) -> [u8; 32] {
    let mut h = blake2::Blake2bVar::new(32).unwrap();
    h.update(b"prover/hekaton/v1/");
    h.update(purpose.as_bytes());
    h.update(&0u64.to_le_bytes());
    h.update(secret);
    let mut seed = [0u8; 32];
    h.finalize_variable(&mut seed).unwrap();
    seed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_keys_cannot_be_rebuilt_from_the_store() {
    // A store of its own: the job makes the keys of its structure (none to reuse).
    let (q, blobs, jobs, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let p = Platform::new(q, blobs, jobs);
    let spec = CircuitSpec::Synthetic { subcircuits: 2, steps: 4, wires: 1 };
    let (job, _) = p.submit(platform::kinds::hekaton::request(spec, 7, false), None).await.unwrap();
    let secret = p.blobs().get(&platform::layout::input(&job, SECRET)).await.unwrap();
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    tokio::spawn(p.clone().run_worker("w".into(), rx.clone()));
    let outcome = tokio::time::timeout(Duration::from_secs(600), p.wait(&job, |_| {})).await.unwrap();
    assert_eq!(outcome, JobOutcome::Done, "{:?}", p.job_store().get(&job).await.unwrap().map(|r| r.message));
    let _ = stop.send(true);

    let published = |name: &'static str| {
        let (p, job) = (p.clone(), job.clone());
        async move { p.blobs().get(&platform::layout::proof_file(&job, name)).await.unwrap() }
    };
    let vk: VerifyingKey<Bls12_381> = hekaton::mirage::from_bytes(&published("vk.bin").await).unwrap();
    let avk: AggVerifyingKey<Bls12_381> = hekaton::mirage::from_bytes(&published("agg-vk.bin").await).unwrap();

    // The Mirage setup, redone from the secret.
    let circuit = spec.build::<Fr>(0).unwrap();
    let (_, rebuilt) = workflow::setup::<Bls12_381, _, _>(&circuit, &mut rand_chacha::ChaCha20Rng::from_seed(derived(&secret, "setup"))).unwrap();
    assert_ne!(
        rebuilt.digest().unwrap(),
        vk.digest().unwrap(),
        "the job's verifying key was rebuilt from its stored secret: whoever reads the bucket knows the trapdoor"
    );
    // The aggregation SRS and keys, redone from the secret for the job's own key.
    let srs = Srs::<Bls12_381>::setup(vk.num_subcircuits(), &mut rand_chacha::ChaCha20Rng::from_seed(derived(&secret, "aggregate-setup")));
    let (_, rebuilt_avk) = aggregated::setup(&vk, &srs).unwrap();
    assert_ne!(
        VkDigest(rebuilt_avk.digest().unwrap()),
        VkDigest(avk.digest().unwrap()),
        "the job's aggregation key was rebuilt from its stored secret: whoever reads the bucket knows a, b"
    );
}

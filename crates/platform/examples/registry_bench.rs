//! A registered circom circuit serving many proofs (issue 14's target: 1,000 proofs from ≥ 10
//! jobs with one setup), in one process over the in-process backends:
//!
//! 1. `circuit.register` once (the only setup), timed;
//! 2. `JOBS` `pari.circom` jobs of `PER_JOB` witnesses each, submitted at once and served by
//!    `WORKERS` worker loops: wall time, proofs/s, and how many setups ran in all;
//! 3. one cross-job bundle of every proof (GetBundle's path), verified from bytes at once, against
//!    verifying each proof from its bytes one by one (same run, same proofs).
//!
//! `cargo run --release -p platform --example registry_bench -- [--circom-dir DIR] [--jobs 10]
//!  [--per-job 100] [--workers 2]`; DIR holds `bn254/example.r1cs` and `bn254/w<i>.wtns`
//! (scripts/circom-fixtures.sh DIR); without it, the checked-in example and its one witness.

use std::sync::Arc;
use std::time::{Duration, Instant};

use blobstore::{BlobStore, FsStore};
use bytes::Bytes;
use jobs::{JobStore, MemoryJobStore};
use platform::{JobOutcome, Platform};
use queue::{MemoryQueue, Queue, QueueConfig};
use tokio::sync::watch;

type E = ark_bn254::Bn254;

fn arg(name: &str, default: &str) -> String {
    let v: Vec<String> = std::env::args().collect();
    v.iter().position(|a| a == name).and_then(|i| v.get(i + 1).cloned()).unwrap_or_else(|| default.to_string())
}

fn circuit_files() -> (Vec<u8>, Vec<Vec<u8>>) {
    let dir = arg("--circom-dir", "");
    if dir.is_empty() {
        let f = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../circom/tests/fixtures");
        return (std::fs::read(f.join("example-bn254.r1cs")).unwrap(), vec![std::fs::read(f.join("example-bn254.wtns")).unwrap()]);
    }
    let d = std::path::Path::new(&dir).join("bn254");
    let mut w = Vec::new();
    for i in 0.. {
        match std::fs::read(d.join(format!("w{i}.wtns"))) {
            Ok(b) => w.push(b),
            Err(_) => break,
        }
    }
    (std::fs::read(d.join("example.r1cs")).expect("DIR/bn254/example.r1cs"), w)
}

async fn wait(p: &Platform, job: &str) {
    match p.wait(job, |_| {}).await {
        JobOutcome::Done => {}
        other => panic!("job {job}: {other:?}"),
    }
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let jobs_n: usize = arg("--jobs", "10").parse().expect("--jobs N");
    let per_job: usize = arg("--per-job", "100").parse().expect("--per-job N");
    let workers: usize = arg("--workers", "2").parse().expect("--workers N");
    let dir = tempfile::tempdir().unwrap();
    let q: Arc<dyn Queue> = Arc::new(MemoryQueue::new(QueueConfig { visibility_timeout: Duration::from_secs(600), ..QueueConfig::default() }));
    let blobs: Arc<dyn BlobStore> = Arc::new(FsStore::new(dir.path()).unwrap());
    let store: Arc<dyn JobStore> = Arc::new(MemoryJobStore::new());
    let p = Platform::new(q, blobs, store);
    let (stop, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("ex".into(), rx.clone()));
    tokio::spawn(p.clone().run_aggregator("ag".into(), rx.clone()));
    for i in 0..workers {
        tokio::spawn(p.clone().run_worker(format!("w{i}"), rx.clone()));
    }

    let tenant = "bench";
    let (r1cs, witnesses) = circuit_files();
    p.blobs().put("tenants/bench/uploads/example.r1cs", Bytes::from(r1cs)).await.unwrap();
    let t = Instant::now();
    let (id, _, job) = p.register_circuit(tenant, "tenants/bench/uploads/example.r1cs").await.unwrap();
    wait(&p, &job.expect("a registration job")).await;
    let setup = t.elapsed();
    let info = p.registered_circuit(tenant, &id).await.unwrap().expect("registered");

    let mut keys = Vec::new();
    for (i, w) in witnesses.iter().enumerate() {
        let k = format!("tenants/bench/uploads/w{i}.wtns");
        p.blobs().put(&k, Bytes::from(w.clone())).await.unwrap();
        keys.push(k);
    }
    let t = Instant::now();
    let mut jobs = Vec::new();
    for j in 0..jobs_n {
        let witnesses = (0..per_job).map(|i| keys[(j * per_job + i) % keys.len()].clone()).collect();
        let req = platform::kinds::circom::request(&id, witnesses, 0, 0);
        jobs.push(p.submit_as(tenant, req, None).await.unwrap().0);
    }
    for j in &jobs {
        wait(&p, j).await;
    }
    let wall = t.elapsed();
    let _ = stop.send(true);
    let mut setups = 0;
    for rec in p.job_store().list(0, 10_000).await.unwrap().0 {
        setups += rec.tasks.get("circuit.setup").map(|c| c.done).unwrap_or(0) + rec.tasks.get("pari.setup").map(|c| c.done).unwrap_or(0);
    }
    let proofs = (jobs_n * per_job) as f64;

    // One bundle of every proof, bytes → verdict, against each proof from its bytes alone.
    let cross = p.circuit_bundle(tenant, &id, &jobs).await.unwrap();
    let vk = pari::VerifyingKey::<E>::from_bytes(&cross.vk).unwrap();
    let pvk = vk.prepare().unwrap();
    let parsed = pari::bundle::Bundle::<E>::from_bytes(&cross.bundle).unwrap();
    let singles: Vec<(Vec<ark_bn254::Fr>, Vec<u8>)> = parsed.items.iter().map(|(x, pr)| (x.clone(), pr.to_bytes())).collect();
    let mut rng = rand::thread_rng();
    let t = Instant::now();
    let b = pari::bundle::Bundle::<E>::from_bytes(&cross.bundle).unwrap();
    b.verify(&pvk, &mut rng).unwrap();
    let batch = t.elapsed();
    let t = Instant::now();
    for (x, bytes) in &singles {
        let pr = pari::Proof::<E>::from_bytes(bytes).unwrap();
        pari::verify(&pvk, x, &pr).unwrap();
    }
    let single = t.elapsed();

    println!("circuit {id} ({} constraints, BN254), {jobs_n} jobs × {per_job} witnesses, {workers} worker loops", info.constraints);
    println!();
    println!("| measure | value |");
    println!("|---|---|");
    println!("| setups run (circuit.setup + pari.setup tasks) | {setups} |");
    println!("| registration (setup job, submit → done) | {:.2} s |", setup.as_secs_f64());
    println!("| {jobs_n} jobs, {} proofs, submit → all done | {:.2} s |", proofs as u64, wall.as_secs_f64());
    println!("| proofs per second | {:.1} |", proofs / wall.as_secs_f64());
    println!("| cross-job bundle of {} proofs, bytes → verdict | {:.1} ms ({:.1} µs/proof) |", b.items.len(), batch.as_secs_f64() * 1e3, batch.as_secs_f64() * 1e6 / proofs);
    println!("| the same proofs one by one, bytes → verdict | {:.1} ms ({:.1} µs/proof) |", single.as_secs_f64() * 1e3, single.as_secs_f64() * 1e6 / proofs);
    println!("| batch vs one by one | {:.1}× |", single.as_secs_f64() / batch.as_secs_f64());
}

//! `prover dev`: the embedded, single-process demo. Runs the platform's planner, executor, two
//! workers and the aggregator in this process, over the in-process queue and a filesystem
//! object store (the same code that runs over Redis and S3), to prove a batch of a random
//! vector; verifies the published proof offline; then submits an update job for one leaf of the
//! batch, which re-proves only its path, and verifies again. Prints progress and the timing of
//! every step.

use std::time::Duration;

use anyhow::{bail, ensure, Context};
use clap::Args;
use platform::service::{self, ServiceConfig};
use platform::{layout, JobOutcome, Leaves, Platform};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use reckle::{files, Change, Digest, NodeProof, Params, Statement, Tree};

use crate::reckle::build_circuits;
use crate::util::{secs, timed};

#[derive(Args)]
pub struct DevArgs {
    /// ℓ: the tree has 2^ℓ leaves.
    #[arg(long, default_value_t = 10)]
    pub log_n: u32,
    /// q: leaves per bucket circuit = 2^q.
    #[arg(long, default_value_t = 3)]
    pub log_bucket: u32,
    /// Batch size |I|.
    #[arg(long, default_value_t = 4)]
    pub batch: u64,
    /// Worker tasks proving nodes in parallel.
    #[arg(long, default_value_t = 2)]
    pub workers: usize,
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
    /// Object store directory (default: a temporary directory, removed afterwards).
    #[arg(long)]
    pub data: Option<std::path::PathBuf>,
}

pub fn run(a: DevArgs) -> anyhow::Result<()> {
    let params = Params::new(a.log_n, a.log_bucket).context("--log-n/--log-bucket")?;
    ensure!(a.batch >= 1 && a.batch <= params.num_leaves(), "--batch must be in 1..={}", params.num_leaves());
    ensure!(a.workers >= 1, "--workers must be at least 1");
    let tmp = tempfile::tempdir()?;
    let data = a.data.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(demo(a, params, data))
}

async fn demo(a: DevArgs, params: Params, data: std::path::PathBuf) -> anyhow::Result<()> {
    let mut rng = StdRng::seed_from_u64(a.seed);
    println!(
        "== Reckle trees on the embedded platform: n = 2^{} leaves, buckets of 2^{}, |I| = {}, {} workers",
        a.log_n, a.log_bucket, a.batch, a.workers
    );
    println!("   object store: {} (filesystem), queue: in-process", data.display());
    // The same constructor as `prover serve --embedded`.
    let mut cfg = ServiceConfig::from_env()?;
    cfg.concurrency = a.workers;
    let platform = service::embedded(&cfg, data.clone())?;
    let blobs = platform.blobs().clone();
    let (stop, rx) = tokio::sync::watch::channel(false);
    tokio::spawn(platform.clone().run_executor("executor".into(), rx.clone()));
    tokio::spawn(platform.clone().run_aggregator("aggregator".into(), rx.clone()));
    for i in 0..a.workers {
        tokio::spawn(platform.clone().run_worker(format!("worker-{i}"), rx.clone()));
    }

    let values: Vec<u64> = (0..params.num_leaves()).map(|_| rng.gen()).collect();
    let batch = crate::reckle::random_batch(&mut rng, params.num_leaves(), a.batch);
    let start = std::time::Instant::now();
    let request = platform::kinds::reckle::batch_request(a.log_n, a.log_bucket, batch.clone(), Leaves::Inline(values.clone()), false);
    let (job, _) = platform.submit(request, None).await?;
    // The commitment this client expects: it holds the vector, so it computes C itself and
    // checks the platform's proof against that, not against the C the platform reports.
    let mut tree = Tree::build(params, values.clone())?;
    println!("1. submitted job {job}: batch I = {batch:?}");
    println!("   (workers build the circuits for (ℓ, q) once, then prove nodes as their children land)");
    let outcome = follow(&platform, &job, start).await;
    if outcome != JobOutcome::Done {
        let _ = stop.send(true);
        bail!("job {job} did not finish: {outcome:?}");
    }
    let t_prove = start.elapsed();
    println!("2. job done in {} (proof verified by the aggregator before publishing)", secs(t_prove));

    // Offline verification of what the platform published, with the library alone.
    let st: Statement = serde_json::from_slice(&blobs.get(&layout::proof_file(&job, files::STATEMENT)).await?)?;
    let circuits = build_circuits(params)?;
    let root = NodeProof::from_bytes(&circuits, &blobs.get(&layout::proof_file(&job, files::PROOF)).await?)?;
    let (ok, t) = timed(|| st.verify_for(&tree.root(), circuits.root_key(), &root));
    ok.context("the published proof did not verify")?;
    println!(
        "3. verified offline against the C computed here: C = {}, d = {}, sum = {}, count = {}; proof {} bytes, in {}",
        st.root,
        st.digest,
        st.sum,
        st.count,
        root.proof_size(),
        secs(t)
    );

    // Update one batch leaf: an update job re-proves only the leaf's path, reusing the other
    // node proofs of the first job.
    let index = batch[0];
    let value = rng.gen::<u64>();
    let start = std::time::Instant::now();
    let request = platform::kinds::reckle::update_request(job.clone(), vec![Change::Set { index, value }], false);
    let (job2, _) = platform.submit(request, None).await?;
    let rec = platform.job_store().get(&job2).await?.context("update job recorded")?;
    println!("4. set a[{index}] = {value}: update job {job2} re-proves {} nodes", rec.progress().total);
    let outcome = follow(&platform, &job2, start).await;
    let _ = stop.send(true);
    if outcome != JobOutcome::Done {
        bail!("update job {job2} did not finish: {outcome:?}");
    }
    println!("   done in {}", secs(start.elapsed()));
    let st2: Statement = serde_json::from_slice(&blobs.get(&layout::proof_file(&job2, files::STATEMENT)).await?)?;
    let root2 = NodeProof::from_bytes(&circuits, &blobs.get(&layout::proof_file(&job2, files::PROOF)).await?)?;
    tree.set(index, value)?;
    let (ok, t) = timed(|| st2.verify_for(&tree.root(), circuits.root_key(), &root2));
    ok.context("updated batch proof did not verify")?;
    ensure!(st2.root != st.root, "the update did not change the commitment");
    println!("5. verified the updated proof against C' = {} in {}", st2.root, secs(t));
    let stale = st.verify_for(&Digest::from_hex(&st.root)?, circuits.root_key(), &root2);
    ensure!(stale.is_err(), "the updated proof verified against the old statement");
    println!("6. the updated proof is rejected for the old statement, as it must be: {}", stale.unwrap_err());
    tokio::time::sleep(Duration::from_millis(10)).await;
    println!("done");
    Ok(())
}

/// Waits for a job, printing progress.
async fn follow(platform: &Platform, job: &str, start: std::time::Instant) -> JobOutcome {
    let mut shown = 0;
    platform
        .wait(job, |o| {
            if let JobOutcome::Running { done, total } = o {
                if *done > shown {
                    shown = *done;
                    println!("   {done}/{total} nodes proven ({})", secs(start.elapsed()));
                }
            }
        })
        .await
}

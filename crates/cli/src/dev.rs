//! `prover dev`: the embedded, single-process demo. Builds a random vector, commits to it,
//! proves a batch, verifies, updates one leaf of the batch, verifies again, and prints the
//! timings of every step.

use anyhow::{ensure, Context};
use clap::Args;
use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use reckle::{BatchProof, Change, Params, Tree};

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
    #[arg(long, default_value_t = 7)]
    pub seed: u64,
}

pub fn run(a: DevArgs) -> anyhow::Result<()> {
    let params = Params::new(a.log_n, a.log_bucket).context("--log-n/--log-bucket")?;
    ensure!(a.batch >= 1 && a.batch <= params.num_leaves(), "--batch must be in 1..={}", params.num_leaves());
    let mut rng = StdRng::seed_from_u64(a.seed);
    println!("== Reckle trees, embedded demo: n = 2^{} leaves, buckets of 2^{}, |I| = {}", a.log_n, a.log_bucket, a.batch);

    let circuits = build_circuits(params)?;
    let values: Vec<u64> = (0..params.num_leaves()).map(|_| rng.gen()).collect();
    let (tree, t) = timed(|| Tree::build(params, values));
    let mut tree = tree?;
    println!("1. committed the vector: C = {} ({})", tree.root(), secs(t));

    let mut batch: Vec<u64> =
        sample(&mut rng, params.num_leaves() as usize, a.batch as usize).into_iter().map(|i| i as u64).collect();
    batch.sort_unstable();
    let (lambda, t_prove) = timed(|| BatchProof::aggregate(&circuits, &tree, &batch));
    let mut lambda = lambda?;
    println!("2. proved batch I = {batch:?}: {} node proofs in {}", lambda.num_nodes(), secs(t_prove));

    let st = lambda.statement(&circuits, &tree)?;
    let (ok, t) = timed(|| st.verify(&circuits, lambda.root_proof()));
    ok.context("batch proof did not verify")?;
    println!(
        "3. verified (d = {}, sum = {}, count = {}; proof {} bytes) in {}",
        st.digest,
        st.sum,
        st.count,
        lambda.root_proof().proof_size(),
        secs(t)
    );

    let index = batch[0];
    let value = rng.gen::<u64>();
    let (report, t_update) = timed(|| lambda.update(&circuits, &mut tree, &[Change::Set { index, value }]));
    let report = report?;
    println!(
        "4. set a[{index}] = {value}: re-proved {} of {} nodes in {} ({:.2}× the full proof time)",
        report.reproved.len(),
        lambda.num_nodes(),
        secs(t_update),
        t_update.as_secs_f64() / t_prove.as_secs_f64()
    );

    let st2 = lambda.statement(&circuits, &tree)?;
    let (ok, t) = timed(|| st2.verify(&circuits, lambda.root_proof()));
    ok.context("updated batch proof did not verify")?;
    println!("5. verified the updated proof against C' = {} in {}", st2.root, secs(t));

    // The old proof must not verify against the new commitment.
    let stale = st.verify(&circuits, lambda.root_proof());
    ensure!(stale.is_err(), "the updated proof verified against the old statement");
    println!("6. the updated proof is rejected for the old statement, as it must be: {}", stale.unwrap_err());
    println!("done");
    Ok(())
}

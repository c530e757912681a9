//! Reckle benchmark: prints markdown tables.
//!
//! ```text
//! cargo run --release -p reckle --example reckle_bench -- [--q 4] [--node-qs 2,3,4,5] \
//!     [--batches 10:4,10:16,16:4,16:16,16:64,20:4,20:16]
//! ```
//!
//! * Node proof time per level and bucket size `q` (bucket `B_0`, first level `B_{q+1}`, and a
//!   higher level `B_{q+2}`), with the circuit sizes.
//! * For each `ℓ:|I|`: circuit build time, full batch proof (node count, time), one update of
//!   a batch leaf (nodes re-proved, time), the ratio update / full rebuild, verification time
//!   (canonical digest + root proof) and proof size.

use std::time::Instant;

use rand::rngs::StdRng;
use rand::seq::index::sample;
use rand::{Rng, SeedableRng};
use reckle::{prove_bucket, prove_node, BatchProof, Change, Child, Circuits, NodeId, Params, Tree};

fn arg(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn secs(t: f64) -> String {
    if t < 1.0 { format!("{:.1} ms", t * 1e3) } else { format!("{t:.2} s") }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let q: u32 = arg("--q").map(|s| s.parse()).transpose()?.unwrap_or(4);
    let node_qs: Vec<u32> = arg("--node-qs")
        .unwrap_or_else(|| "2,3,4,5".into())
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| s.parse())
        .collect::<Result<_, _>>()?;
    let batches: Vec<(u32, usize)> = arg("--batches")
        .unwrap_or_else(|| "10:4,10:16,16:4,16:16,16:64,20:4,20:16".into())
        .split(',')
        .filter(|s| !s.is_empty())
        .map(|s| {
            let (l, k) = s.split_once(':').expect("ℓ:|I|");
            (l.parse().expect("ℓ"), k.parse().expect("|I|"))
        })
        .collect();
    println!("threads: {}", rayon::current_num_threads());
    let mut rng = StdRng::seed_from_u64(42);

    if !node_qs.is_empty() {
        println!("\n### Node proof time per level and bucket size (ℓ = q + 2)\n");
        println!("| q | leaves/bucket | B_0 rows | B_0 prove | B_q+1 rows | B_q+1 prove | B_q+2 rows | B_q+2 prove | build all |");
        println!("|---|---|---|---|---|---|---|---|---|");
        for &nq in &node_qs {
            let params = Params::new(nq + 2, nq)?;
            let t = Instant::now();
            let c = Circuits::build(params)?;
            let build = t.elapsed().as_secs_f64();
            let values: Vec<u64> = (0..params.num_leaves()).map(|_| rng.gen()).collect();
            let tree = Tree::build(params, values)?;
            let size = params.bucket_size();
            // Every leaf of bucket 0 in the batch (worst case for the bucket), bucket 1 hash-only.
            let t = Instant::now();
            let b0 = prove_bucket(&c, 0, tree.bucket_values(0)?, &(0..size).collect::<Vec<_>>())?;
            let t_b0 = t.elapsed().as_secs_f64();
            let h1 = tree.hash(nq, 1)?;
            let t = Instant::now();
            let n1 = prove_node(&c, NodeId::new(nq + 1, 0), &Child::Proven(b0), &Child::Hash(h1))?;
            let t_n1 = t.elapsed().as_secs_f64();
            let h2 = tree.hash(nq + 1, 1)?;
            let t = Instant::now();
            let _n2 = prove_node(&c, NodeId::new(nq + 2, 0), &Child::Proven(n1), &Child::Hash(h2))?;
            let t_n2 = t.elapsed().as_secs_f64();
            println!(
                "| {nq} | {size} | 2^{} | {} | 2^{} | {} | 2^{} | {} | {} |",
                c.degree_bits(nq)?,
                secs(t_b0),
                c.degree_bits(nq + 1)?,
                secs(t_n1),
                c.degree_bits(nq + 2)?,
                secs(t_n2),
                secs(build)
            );
        }
    }

    if !batches.is_empty() {
        println!("\n### Batch proofs (q = {q}, random batches, one update of a batch leaf)\n");
        println!("| ℓ | \\|I\\| | build circuits | node proofs | full proof | update: nodes | update | update / full | verify (digest + proof) | proof size |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        let mut cached: Option<(u32, Circuits, f64)> = None;
        for (log_n, k) in batches {
            let params = Params::new(log_n, q.min(log_n))?;
            if cached.as_ref().map(|c| c.0) != Some(log_n) {
                let t = Instant::now();
                let c = Circuits::build(params)?;
                cached = Some((log_n, c, t.elapsed().as_secs_f64()));
            }
            let (_, c, build) = cached.as_ref().expect("built");
            let values: Vec<u64> = (0..params.num_leaves()).map(|_| rng.gen()).collect();
            let mut tree = Tree::build(params, values)?;
            let mut batch: Vec<u64> =
                sample(&mut rng, params.num_leaves() as usize, k).into_iter().map(|i| i as u64).collect();
            batch.sort_unstable();
            let t = Instant::now();
            let mut lambda = BatchProof::aggregate(c, &tree, &batch)?;
            let full = t.elapsed().as_secs_f64();
            let nodes = lambda.num_nodes();
            let index = batch[rng.gen_range(0..batch.len())];
            let t = Instant::now();
            let report = lambda.update(c, &mut tree, &[Change::Set { index, value: rng.gen() }])?;
            let update = t.elapsed().as_secs_f64();
            let st = lambda.statement(c, &tree)?;
            let t = Instant::now();
            st.verify(c, lambda.root_proof())?;
            let verify = t.elapsed().as_secs_f64();
            println!(
                "| {log_n} | {k} | {} | {nodes} | {} | {} | {} | {:.3} | {} | {} B |",
                secs(*build),
                secs(full),
                report.reproved.len(),
                secs(update),
                update / full,
                secs(verify),
                lambda.root_proof().to_bytes().len()
            );
        }
    }
    Ok(())
}

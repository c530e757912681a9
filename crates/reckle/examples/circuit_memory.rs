//! How well [`reckle::Circuits::heap_bytes`] estimates a circuit set's memory: builds the set
//! of one `(ℓ, q)` in a fresh process and prints the estimate beside the growth of the
//! process's resident memory (VmRSS) and its peak (VmHWM) during the build.
//!
//! `cargo run --release -p reckle --example circuit_memory -- 16 4` (one set per run: freed
//! memory is not always returned to the system, so a second set in the same process would be
//! measured wrongly).
//!
//! `… -- 20 5 24` then extends the set to `(24, 5)` with [`reckle::Circuits::for_log_n`] (the
//! platform's chain per `q`: only the levels above 20 are built, the first 20 are shared) and
//! prints a second row for that step; compare it with a run of `24 5` alone.

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    s.lines()
        .find(|l| l.starts_with(field))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let usage = "usage: circuit_memory LOG_N LOG_BUCKET [LONGER_LOG_N]";
    let args: Vec<u32> = std::env::args().skip(1).map(|a| a.parse().expect(usage)).collect();
    let (log_n, log_bucket, longer) = match args[..] {
        [l, q] => (l, q, None),
        [l, q, l2] if l2 > l => (l, q, Some(l2)),
        _ => panic!("{usage}"),
    };
    let params = reckle::Params::new(log_n, log_bucket).expect("parameters");
    let before = status_kib("VmRSS:");
    let started = std::time::Instant::now();
    let circuits = reckle::Circuits::build(params).expect("build");
    let took = started.elapsed();
    let after = status_kib("VmRSS:");
    let peak = status_kib("VmHWM:");
    let estimate = circuits.heap_bytes();
    let grown = (after.saturating_sub(before)) * 1024;
    println!("| ℓ | q | levels | build | estimate | RSS growth | estimate / growth | peak RSS |");
    println!("|---|---|---|---|---|---|---|---|");
    println!(
        "| {log_n} | {log_bucket} | {} | {:.1} s | {:.1} MiB | {:.1} MiB | {:.2} | {:.1} MiB |",
        log_n - log_bucket + 1,
        took.as_secs_f64(),
        estimate as f64 / (1 << 20) as f64,
        grown as f64 / (1 << 20) as f64,
        estimate as f64 / grown.max(1) as f64,
        peak as f64 / 1024.0
    );
    if let Some(l2) = longer {
        let before = status_kib("VmRSS:");
        let started = std::time::Instant::now();
        let extended = circuits.for_log_n(l2).expect("extend");
        let took = started.elapsed();
        let grown = status_kib("VmRSS:").saturating_sub(before) * 1024;
        let added = extended.heap_bytes() - estimate;
        assert!(extended.shares_circuits_with(&circuits));
        println!(
            "| {l2} (from {log_n}) | {log_bucket} | {} built | {:.1} s | +{:.1} MiB | +{:.1} MiB | {:.2} | {:.1} MiB |",
            l2 - log_n,
            took.as_secs_f64(),
            added as f64 / (1 << 20) as f64,
            grown as f64 / (1 << 20) as f64,
            added as f64 / grown.max(1) as f64,
            status_kib("VmHWM:") as f64 / 1024.0
        );
    }
}

//! `loadtest SCENARIO.toml [--endpoint URL] [--out DIR]`: runs a scenario against the platform,
//! prints a table, writes `report.json` and `jobs.csv`.

use std::path::PathBuf;

use anyhow::Context;
use clap::Parser;

#[derive(Parser)]
#[command(name = "loadtest", about = "Load generator over the prover platform's gRPC API")]
struct Args {
    /// Scenario file (TOML; see loadtest/scenarios/).
    scenario: PathBuf,
    /// `--endpoint` (overrides the scenario's), `--token` (a tenant's, for a planner with
    /// authentication), `--ca`.
    #[command(flatten)]
    client: api::ClientArgs,
    /// Directory for report.json and jobs.csv.
    #[arg(long, default_value = "loadtest-report")]
    out: PathBuf,
}

fn main() -> std::process::ExitCode {
    match run(Args::parse()) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(a: Args) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(&a.scenario).with_context(|| format!("{}", a.scenario.display()))?;
    let mut scenario = prover_loadtest::Scenario::from_toml(&text).with_context(|| format!("{}", a.scenario.display()))?;
    if let Some(e) = &a.client.endpoint {
        scenario.endpoint = e.clone();
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    let report = rt.block_on(prover_loadtest::run_with(scenario, &a.client))?;
    print!("{}", report.table());
    std::fs::create_dir_all(&a.out).with_context(|| format!("--out {}", a.out.display()))?;
    std::fs::write(a.out.join("report.json"), serde_json::to_vec_pretty(&report)?)?;
    std::fs::write(a.out.join("jobs.csv"), report.csv())?;
    println!("wrote {}/report.json and jobs.csv", a.out.display());
    Ok(())
}

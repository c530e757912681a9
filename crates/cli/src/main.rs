//! `prover`: the command-line entry point of the proving platform.
//!
//! Each family of subcommands lives in its own module; this file only wires them together.

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

mod admin;
mod client;
mod dev;
mod hekaton;
mod pari;
mod reckle;
mod reckle_final;
mod serve;
mod testudo;
mod util;

#[derive(Parser)]
#[command(name = "prover", version, about = "Kubernetes-native proving platform: Reckle, Hekaton and Pari proofs")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Embedded demo: build a tree, prove a batch, update a leaf, verify both.
    Dev(dev::DevArgs),
    /// Reckle-tree batch proofs: prove, update, verify.
    #[command(subcommand)]
    Reckle(reckle::ReckleCommand),
    /// Pari proofs: setup, prove, verify, batch-verify.
    #[command(subcommand)]
    Pari(pari::PariCommand),
    /// Hekaton proofs of partitioned circuits: setup, prove, verify.
    #[command(subcommand)]
    Hekaton(hekaton::HekatonCommand),
    /// Testudo proofs of circom circuits (Spartan with Testudo-Comm, optionally compressed
    /// into a Pari proof on BW6-767): setup, prove, verify.
    #[command(subcommand)]
    Testudo(testudo::TestudoCommand),
    /// Operator commands against the platform's Redis: API tokens.
    #[command(subcommand)]
    Admin(admin::AdminCommand),
    /// Run platform services: one role against Redis and S3, or all of them with --embedded.
    Serve(serve::ServeArgs),
    /// The job kinds this build serves, their task kinds and the role serving each (the one
    /// list the chart schema and the service contract are checked against).
    Kinds {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Every service flag with its environment variable and default, as Markdown (the source
    /// of docs/configuration.md).
    Configuration,
    /// Submit a job to the platform; prints its id.
    Submit {
        #[command(flatten)]
        endpoint: client::Endpoint,
        #[command(subcommand)]
        job: client::SubmitCommand,
    },
    /// Registered circom circuits: register (setup once), list, show, export-vk.
    Circuit {
        #[command(flatten)]
        endpoint: client::Endpoint,
        #[command(subcommand)]
        cmd: client::CircuitCommand,
    },
    /// One bundle of the proofs of several done jobs of a registered circuit (GetBundle), to
    /// verify at once with `prover pari verify-bundles DIR --vk-digest HEX`.
    Bundle {
        #[arg(long)]
        circuit_id: String,
        /// Done `pari.circom` jobs of the circuit, comma separated.
        #[arg(long, value_delimiter = ',', required = true)]
        jobs: Vec<String>,
        #[arg(long)]
        out: std::path::PathBuf,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// Upload an input too large to send inline (a Reckle job's leaves, `leaves.bin` format:
    /// 8-byte little-endian values) to your tenant's upload prefix; prints the object key for
    /// `submit reckle --leaves-object`.
    Upload {
        file: std::path::PathBuf,
        /// Name of the upload (default: the file's name).
        #[arg(long)]
        name: Option<String>,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// Follow a job with progress bars: exits 0 when it is done, 1 when it failed or was
    /// cancelled.
    Watch {
        job: String,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// Print a job's state and progress.
    Status {
        job: String,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// List jobs, newest first.
    Jobs {
        #[arg(long, default_value_t = 50)]
        page_size: u32,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// Cancel a job.
    Cancel {
        job: String,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// Download a done job's proof directory (then `prover reckle verify DIR`).
    Fetch {
        job: String,
        #[arg(long)]
        out: std::path::PathBuf,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// The platform's limits (GetLimits): every bound a request can meet, the field a refusal
    /// names, and the memory each role needs at those bounds. `--local`: this build's, with
    /// the budgets given here, without asking a server.
    Limits {
        /// Print JSON instead of tables.
        #[arg(long)]
        json: bool,
        /// This build's limits, with the default configuration and the budgets below.
        #[arg(long)]
        local: bool,
        /// With --local: the object cache budget (bytes; --cache-bytes of `prover serve`).
        #[arg(long, requires = "local")]
        cache_bytes: Option<u64>,
        /// With --local: the Reckle circuit budget (bytes; --circuit-bytes of `prover serve`).
        #[arg(long, requires = "local")]
        circuit_bytes: Option<u64>,
        /// With --local: the planner's request budget (bytes; --request-budget-bytes of `prover
        /// serve`).
        #[arg(long, requires = "local")]
        request_budget_bytes: Option<u64>,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
    /// Ask the platform to verify a done job's proof.
    VerifyRemote {
        job: String,
        /// Reckle: the commitment C (hex) the proof must be about.
        #[arg(long)]
        root: Option<String>,
        /// Pari: the verifying-key digest (hex) the bundles must be under.
        #[arg(long)]
        vk_digest: Option<String>,
        #[command(flatten)]
        endpoint: client::Endpoint,
    },
}

fn main() -> std::process::ExitCode {
    // `prover serve --help`: one line per flag (the reference is docs/configuration.md).
    let matches = Cli::command().mut_subcommand("serve", platform::service::short_help).get_matches();
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match run(cli) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            // The error chain on one line (no backtrace): these are user-facing messages.
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Dev(args) => dev::run(args),
        Command::Reckle(cmd) => reckle::run(cmd),
        Command::Pari(cmd) => pari::run(cmd),
        Command::Hekaton(cmd) => hekaton::run(cmd),
        Command::Testudo(cmd) => testudo::run(cmd),
        Command::Serve(args) => serve::run(args),
        Command::Kinds { json } => kinds(json),
        Command::Configuration => {
            print!("{}", platform::service::configuration_markdown());
            Ok(())
        }
        Command::Admin(cmd) => admin::run(cmd),
        Command::Submit { endpoint, job } => client::submit(endpoint, job),
        Command::Circuit { endpoint, cmd } => client::circuit(endpoint, cmd),
        Command::Bundle { circuit_id, jobs, out, endpoint } => client::bundle(endpoint, circuit_id, jobs, out),
        Command::Upload { file, name, endpoint } => client::upload(endpoint, file, name),
        Command::Watch { job, endpoint } => client::watch(endpoint, job),
        Command::Status { job, endpoint } => client::status(endpoint, job),
        Command::Jobs { page_size, endpoint } => client::list(endpoint, page_size),
        Command::Cancel { job, endpoint } => client::cancel(endpoint, job),
        Command::Fetch { job, out, endpoint } => client::fetch(endpoint, job, out),
        Command::Limits { json, local, cache_bytes, circuit_bytes, request_budget_bytes, endpoint } => {
            let limits = if local {
                let mut config = platform::PlatformConfig::default();
                config.cache_bytes = cache_bytes.unwrap_or(config.cache_bytes);
                config.circuit_bytes = circuit_bytes.unwrap_or(config.circuit_bytes);
                config.request_budget_bytes = request_budget_bytes.unwrap_or(config.request_budget_bytes);
                platform::grpc::limits_to_pb(&config)
            } else {
                client::limits(endpoint)?
            };
            client::print_limits(&limits, json)
        }
        Command::VerifyRemote { job, root, vk_digest, endpoint } => client::verify_remote(endpoint, job, root, vk_digest),
    }
}

/// `prover kinds`: the registry of the platform this binary runs.
fn kinds(json: bool) -> anyhow::Result<()> {
    let registry = platform::kinds::Registry::builtin();
    if json {
        println!("{}", serde_json::to_string_pretty(&registry.describe())?);
        return Ok(());
    }
    print!("{}", registry.table());
    Ok(())
}

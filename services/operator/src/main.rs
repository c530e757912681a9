//! `operator`: the platform's Kubernetes operator.
//!
//!   operator run --endpoint http://prover-planner:50051 --redis redis://...   # the controllers
//!   operator crds [--out-dir DIR]                                              # CRD YAML
//!   operator --print-crds                                                      # same as `operator crds`

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::{Parser, Subcommand};
use prover_operator::{crd, pool, proofjob, Stats};
use queue::{QueueConfig, RedisQueue};

#[derive(Parser)]
#[command(name = "operator", about = "Kubernetes operator for the prover platform: ProofJob and ProverPool")]
struct Cli {
    /// Print the CustomResourceDefinitions as YAML and exit (same as `operator crds`).
    #[arg(long)]
    print_crds: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Run the controllers.
    Run(RunArgs),
    /// Print the CustomResourceDefinitions (one YAML stream), or write one file per CRD.
    Crds {
        #[arg(long)]
        out_dir: Option<PathBuf>,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// The planner (`--endpoint`, e.g. http://prover-planner:50051; without it the ProofJob
    /// controller does not run), and the operator tenant's `--token` (the planner requires one
    /// unless it runs with --no-auth: every ProofJob is submitted as this tenant; the chart
    /// makes one and mounts it from a Secret) and `--ca`.
    #[command(flatten)]
    client: api::ClientArgs,
    /// Redis URL of the platform's queues. Without it the ProverPool scaler does not run.
    #[arg(long, env = "PROVER_REDIS_URL")]
    redis: Option<String>,
    /// Seconds to wait at start for Redis to answer (a Redis started in the same rollout),
    /// retrying with a growing delay, before giving up; 0: one try.
    #[arg(long, env = "PROVER_BACKEND_WAIT_SECS", default_value_t = queue::BACKEND_WAIT_SECS)]
    backend_wait_secs: u64,
    /// Watch only this namespace (default: all namespaces).
    #[arg(long, env = "PROVER_OPERATOR_NAMESPACE")]
    namespace: Option<String>,
    /// Seconds between status polls of a job that has not ended.
    #[arg(long, env = "PROVER_OPERATOR_POLL_SECS", default_value_t = 5)]
    poll_secs: u64,
    /// Seconds between scaling decisions of each pool.
    #[arg(long, env = "PROVER_OPERATOR_SCALE_INTERVAL_SECS", default_value_t = 15)]
    scale_interval_secs: u64,
    /// HTTP address for /healthz, /readyz and /metrics.
    #[arg(long, env = "PROVER_METRICS_LISTEN", default_value = "0.0.0.0:9090")]
    metrics_listen: SocketAddr,
    #[arg(long, env = "PROVER_LOG_FORMAT", default_value = "text", value_parser = ["text", "json"])]
    log_format: String,
}

/// Text logs carry ANSI colour only on a terminal with `NO_COLOR` unset (as the services':
/// `platform::service::colour_logs`, which this binary does not link).
fn colour_logs() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

fn init_logging(format: &str) {
    use tracing_subscriber::EnvFilter;
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colour_logs());
    let _ = if format == "json" { builder.json().try_init() } else { builder.try_init() };
}

async fn shutdown_signal() {
    let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()).expect("SIGTERM handler");
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

async fn run(args: RunArgs) -> anyhow::Result<()> {
    init_logging(&args.log_format);
    if args.client.endpoint.is_none() && args.redis.is_none() {
        anyhow::bail!("nothing to do: give --endpoint (ProofJob controller) and/or --redis (ProverPool scaler)");
    }
    let client = kube::Client::try_default().await.context("Kubernetes client configuration")?;
    let stats = Arc::new(Stats::default());
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let stopped = move || {
        let mut rx = stop_rx.clone();
        async move {
            let _ = rx.wait_for(|s| *s).await;
        }
    };

    let http = tokio::net::TcpListener::bind(args.metrics_listen).await.with_context(|| format!("listen on {}", args.metrics_listen))?;
    let router = prover_operator::http_router(stats.clone());
    let http_stop = stopped();
    tokio::spawn(async move {
        let _ = axum::serve(http, router).with_graceful_shutdown(http_stop).await;
    });

    let mut tasks = tokio::task::JoinSet::new();
    if let Some(endpoint) = &args.client.endpoint {
        let ctx = Arc::new(proofjob::JobContext {
            client: client.clone(),
            jobs: args.client.client_lazy(endpoint).map_err(anyhow::Error::msg)?,
            poll: Duration::from_secs(args.poll_secs.max(1)),
            retry: Duration::from_secs(10),
            quota_waits: Default::default(),
        });
        tracing::info!(%endpoint, namespace = ?args.namespace, "ProofJob controller");
        tasks.spawn(prover_operator::run_proofjobs(ctx, args.namespace.clone(), stats.clone(), stopped()));
    }
    if let Some(redis) = &args.redis {
        let config = QueueConfig::default();
        queue::wait_for_redis(redis, Duration::from_secs(queue::DEFAULT_REDIS_TIMEOUT_SECS), Duration::from_secs(args.backend_wait_secs))
            .await
            .map_err(|u| anyhow::anyhow!(u.problem))
            .with_context(|| format!("Redis not reachable (waited up to {} s: --backend-wait-secs)", args.backend_wait_secs))?;
        let queue = RedisQueue::connect(redis, config).await.context("connect to Redis")?;
        let ctx = Arc::new(pool::PoolContext::new(client.clone(), Arc::new(queue), Duration::from_secs(args.scale_interval_secs.max(1))));
        tracing::info!(namespace = ?args.namespace, "ProverPool scaler");
        tasks.spawn(prover_operator::run_pools(ctx, args.namespace.clone(), stats.clone(), stopped()));
    }
    stats.ready.store(true, Ordering::Relaxed);

    tokio::select! {
        _ = shutdown_signal() => tracing::info!("shutting down"),
        _ = tasks.join_next() => tracing::warn!("a controller stopped"),
    }
    stats.ready.store(false, Ordering::Relaxed);
    let _ = stop_tx.send(true);
    while tasks.join_next().await.is_some() {}
    Ok(())
}

fn write_crds(out_dir: Option<PathBuf>) -> anyhow::Result<()> {
    match out_dir {
        None => print!("{}", crd::crds_yaml()),
        Some(dir) => {
            std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
            for (file, yaml) in crd::crd_files() {
                let path = dir.join(file);
                std::fs::write(&path, yaml).with_context(|| format!("write {}", path.display()))?;
                eprintln!("wrote {}", path.display());
            }
        }
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if cli.print_crds {
        return write_crds(None);
    }
    match cli.command {
        Some(Command::Crds { out_dir }) => write_crds(out_dir),
        Some(Command::Run(args)) => run(args).await,
        None => anyhow::bail!("give a command: `operator run ...` or `operator crds` (see --help)"),
    }
}

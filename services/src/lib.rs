//! Shared `main` of the service binaries: parse flags, connect to Redis and S3, run one role.

use clap::{CommandFactory, FromArgMatches, Parser};
use platform::service::{self, Role, ServiceConfig};

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    config: ServiceConfig,
}

/// Runs `role` until SIGTERM; exits 1 with one line on error.
pub fn main_for(role: Role) {
    let matches = service::short_help(Args::command()).get_matches();
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    let result = rt.block_on(async {
        let _telemetry = service::init_observability(&args.config, &format!("prover-{}", role.name()))?;
        let platform = service::connect(&args.config, &[role]).await?;
        service::run(platform, &[role], &args.config, std::future::pending()).await
    });
    if let Err(e) = result {
        eprintln!("error: {e}");
        std::process::exit(1);
    }
}

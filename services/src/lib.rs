//! Shared `main` of the service binaries: parse flags, connect to Redis and S3, run one role.

use clap::Parser;
use platform::service::{self, Role, ServiceConfig};

#[derive(Parser)]
struct Args {
    #[command(flatten)]
    config: ServiceConfig,
}

/// Runs `role` until SIGTERM; exits 1 with one line on error.
pub fn main_for(role: Role) {
    let args = Args::parse();
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

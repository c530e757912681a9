//! `prover serve`: one platform role against Redis and S3, or every role in one process
//! (`--embedded`: in-process queue and job store, filesystem object store).

use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::Args;
use platform::service::{self, Role, ServiceConfig};

#[derive(Args)]
pub struct ServeArgs {
    /// The role to run (omit with --embedded).
    pub role: Option<Role>,
    /// Run planner, executor, workers and aggregator in this process with no Redis or S3.
    #[arg(long)]
    pub embedded: bool,
    /// Object store directory of --embedded.
    #[arg(long, default_value = "./data")]
    pub data: PathBuf,
    #[command(flatten)]
    pub config: ServiceConfig,
}

pub fn run(mut a: ServeArgs) -> anyhow::Result<()> {
    if a.embedded && a.config.metrics_listen.is_none() {
        // The gRPC listener's interface, on a free port: a loopback demo opens nothing on other
        // interfaces, and two embedded servers on one machine do not collide on 9090.
        a.config.metrics_listen = Some(std::net::SocketAddr::new(a.config.listen.ip(), 0));
    }
    let rt = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    rt.block_on(async {
        let service = match (a.embedded, a.role) {
            (false, Some(role)) => format!("prover-{}", role.name()),
            _ => "prover".to_string(),
        };
        let _telemetry = service::init_observability(&a.config, &service)?;
        match (a.embedded, a.role) {
            (true, Some(_)) => bail!("--embedded runs every role: do not name one"),
            (true, None) => {
                std::fs::create_dir_all(&a.data).with_context(|| format!("--data {}", a.data.display()))?;
                let platform = service::embedded(&a.config, a.data.clone())?;
                let roles = [Role::Planner, Role::Executor, Role::Aggregator, Role::Worker];
                service::run(platform, &roles, &a.config, std::future::pending()).await?;
            }
            (false, Some(role)) => {
                let platform = service::connect(&a.config, &[role]).await?;
                service::run(platform, &[role], &a.config, std::future::pending()).await?;
            }
            (false, None) => bail!("name a role (planner, executor, worker, aggregator) or pass --embedded"),
        }
        Ok(())
    })
}

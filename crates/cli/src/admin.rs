//! `prover admin`: operator commands that talk to the platform's Redis directly (not through the
//! API): API tokens for tenants.

use anyhow::Context;
use auth::{RedisTokenStore, TokenStore};
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum AdminCommand {
    /// API tokens: stored hashed in Redis; a planner started with --require-auth accepts them.
    #[command(subcommand)]
    Token(TokenCommand),
}

#[derive(Args)]
pub struct RedisUrl {
    /// The platform's Redis.
    #[arg(long = "redis", env = "PROVER_REDIS_URL", hide_env_values = true)]
    pub url: String,
}

#[derive(Subcommand)]
pub enum TokenCommand {
    /// Create a token for a tenant: prints the token (shown this once) and its id.
    Create {
        /// The tenant (1–63 lowercase letters, digits or '-').
        #[arg(long)]
        tenant: String,
        #[command(flatten)]
        redis: RedisUrl,
    },
    /// List tokens: id, tenant, creation time (never the tokens themselves).
    List {
        #[command(flatten)]
        redis: RedisUrl,
    },
    /// Revoke a token by id: it stops working on the next request.
    Revoke {
        id: String,
        #[command(flatten)]
        redis: RedisUrl,
    },
}

pub fn run(cmd: AdminCommand) -> anyhow::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let AdminCommand::Token(cmd) = cmd;
        let url = match &cmd {
            TokenCommand::Create { redis, .. } | TokenCommand::List { redis } | TokenCommand::Revoke { redis, .. } => redis.url.clone(),
        };
        // The URL may carry a password: never print it.
        let store = RedisTokenStore::connect(&url).await.context("connecting to Redis (--redis)")?;
        match cmd {
            TokenCommand::Create { tenant, .. } => {
                let t = store.create(&tenant).await?;
                println!("token:  {}", t.secret);
                println!("id:     {}", t.info.id);
                println!("tenant: {}", t.info.tenant);
                eprintln!("keep the token secret: it is shown only now (the platform stores its hash)");
            }
            TokenCommand::List { .. } => {
                for t in store.list().await? {
                    println!("{}  {}  created {}", t.id, t.tenant, unix_ms(t.created_ms));
                }
            }
            TokenCommand::Revoke { id, .. } => {
                store.revoke(&id).await?;
                println!("revoked {id}");
            }
        }
        Ok(())
    })
}

/// Milliseconds since the epoch as `unix-ms N` (no date crate in the CLI).
fn unix_ms(ms: u64) -> String {
    format!("unix-ms {ms}")
}

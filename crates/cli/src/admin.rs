//! `prover admin`: operator commands that talk to the platform's Redis (and S3) directly, not
//! through the API: API tokens for tenants, dead letters, garbage collection of old jobs.

use anyhow::Context;
use auth::{RedisTokenStore, TokenStore};
use clap::{Args, Subcommand};

#[derive(Subcommand)]
pub enum AdminCommand {
    /// API tokens: stored hashed in Redis; planners accept them (authentication is on by default).
    #[command(subcommand)]
    Token(TokenCommand),
    /// Dead-lettered tasks (each one has already failed its job with the task's last error;
    /// the newest 10,000 per kind are kept).
    #[command(subcommand)]
    Dlq(DlqCommand),
    /// Delete the objects of jobs finished more than --older-than ago (each job's record is
    /// removed first, so the API never serves a job whose proof is gone) and of job ids that
    /// have objects but no record; shared Hekaton keys stay. Run it from a CronJob, or use an
    /// S3 lifecycle rule on `jobs/` (docs/operations.md, "Retention").
    Gc(GcArgs),
}

#[derive(Args)]
pub struct GcArgs {
    /// Collect jobs finished longer ago than this (e.g. 7d, 12h, 30m, 90s).
    #[arg(long, value_parser = platform::gc::parse_duration)]
    older_than: std::time::Duration,
    /// An id with objects but no record is deleted only if it still has no record after this
    /// long (a submission stores its inputs a moment before it records the job).
    #[arg(long, default_value = "60s", value_parser = platform::gc::parse_duration)]
    grace: std::time::Duration,
    /// Also delete uploads written longer ago than this (their quota charges expired at the
    /// same age: keep it equal to the planner's --upload-retention-secs).
    #[arg(long, default_value = "7d", value_parser = platform::gc::parse_duration)]
    uploads_older_than: std::time::Duration,
    /// Print what would be collected; change nothing.
    #[arg(long)]
    dry_run: bool,
    /// Collect even when the job store lists no job at all (refused by default: that is more
    /// likely a Redis that lost its data than a platform whose every job expired, and would
    /// delete every done job's proofs as orphans).
    #[arg(long)]
    allow_empty_index: bool,
    #[command(flatten)]
    backend: platform::service::BackendArgs,
}

#[derive(Subcommand)]
pub enum DlqCommand {
    /// List dead letters: kind, job, task, attempts failed, reason.
    List {
        /// Only this task kind (default: every kind the platform knows).
        #[arg(long)]
        kind: Option<String>,
        /// Only this job's.
        #[arg(long)]
        job: Option<String>,
        #[command(flatten)]
        redis: RedisUrl,
    },
    /// Delete the dead letters of one task kind, or of every kind with --all.
    Clear {
        #[arg(long, required_unless_present = "all", conflicts_with = "all")]
        kind: Option<String>,
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        redis: RedisUrl,
    },
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
        /// The tenant (1–66 lowercase letters, digits or '-'; `ns-NAMESPACE` is the tenant the
        /// operator acts for in a namespace).
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
    platform::service::install_crypto_provider();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    rt.block_on(async move {
        let cmd = match cmd {
            AdminCommand::Token(cmd) => cmd,
            AdminCommand::Dlq(cmd) => return dlq(cmd).await,
            AdminCommand::Gc(args) => return gc(args).await,
        };
        let url = match &cmd {
            TokenCommand::Create { redis, .. } | TokenCommand::List { redis } | TokenCommand::Revoke { redis, .. } => redis.url.clone(),
        };
        // The URL may carry a password: never print it.
        let store = RedisTokenStore::connect(&url).await.context("connecting to Redis (--redis)")?;
        // A token created or revoked is reported only once Redis has it on disk where it can
        // say so (WAITAOF); where it cannot, the warning says what may be lost.
        let timeout = std::time::Duration::from_secs(queue::DEFAULT_REDIS_TIMEOUT_SECS);
        let (gate, warning) = queue::durable::AckGate::open(&url, queue::durable::Durability::Auto, timeout).await?;
        if let Some(w) = warning {
            eprintln!("warning: {w}");
        }
        let durable = || async {
            match &gate {
                Some(g) => g.wait().await.map_err(|e| anyhow::anyhow!("the change is made, but {e}: run the command again to be sure")),
                None => Ok(()),
            }
        };
        match cmd {
            TokenCommand::Create { tenant, .. } => {
                let t = store.create(&tenant).await?;
                durable().await?;
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
                durable().await?;
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

/// The kinds a DLQ command looks at: `--kind`, or every task kind of the built-in job kinds.
fn dlq_kinds(kind: Option<String>) -> Vec<String> {
    match kind {
        Some(k) => vec![k],
        None => platform::kinds::Registry::builtin().task_kinds().iter().map(|k| k.name.to_string()).collect(),
    }
}

async fn dlq(cmd: DlqCommand) -> anyhow::Result<()> {
    let url = match &cmd {
        DlqCommand::List { redis, .. } | DlqCommand::Clear { redis, .. } => redis.url.clone(),
    };
    // Reading and deleting dead letters does not depend on the eviction policy: do not refuse a
    // managed Redis that blocks CONFIG.
    let q = queue::RedisQueue::connect_with(&url, queue::QueueConfig::default(), true)
        .await
        .context("connecting to Redis (--redis)")?;
    use queue::Queue;
    match cmd {
        DlqCommand::List { kind, job, .. } => {
            let mut total = 0;
            for k in dlq_kinds(kind) {
                for (task, reason) in q.dead_letters(&k).await.with_context(|| format!("kind {k}"))? {
                    if job.as_ref().is_some_and(|j| *j != task.job_id) {
                        continue;
                    }
                    total += 1;
                    println!("{k}  job {}  task {}  failures {}  {reason}", task.job_id, task.task_id, task.failures);
                }
            }
            println!("{total} dead letters");
        }
        DlqCommand::Clear { kind, .. } => {
            let mut total = 0;
            for k in dlq_kinds(kind) {
                total += q.clear_dead_letters(&k).await.with_context(|| format!("kind {k}"))?;
            }
            println!("cleared {total} dead letters");
        }
    }
    Ok(())
}

async fn gc(a: GcArgs) -> anyhow::Result<()> {
    let p = platform::service::connect_backends(&a.backend, Default::default(), Default::default(), false).await.context("connecting to Redis and S3")?;
    let r = p.gc_with(a.older_than, a.grace, a.dry_run, a.allow_empty_index).await?;
    let verb = if a.dry_run { "would collect" } else { "collected" };
    for id in &r.expired_jobs {
        println!("{verb} finished job {id}");
    }
    for id in &r.orphans {
        println!("{verb} orphaned objects of {id} (no job record)");
    }
    println!(
        "{verb} {} finished jobs and {} orphans ({} objects deleted); {} jobs kept",
        r.expired_jobs.len(),
        r.orphans.len(),
        r.objects_deleted,
        r.kept
    );
    let uploads = p.gc_uploads(a.uploads_older_than, a.dry_run).await?;
    for key in &uploads {
        println!("{verb} upload {key}");
    }
    println!("{verb} {} uploads older than {:?}", uploads.len(), a.uploads_older_than);
    Ok(())
}

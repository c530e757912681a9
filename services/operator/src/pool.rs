//! The ProverPool scaler: every interval, reads the queue counts of the pool's task kinds,
//! decides the replicas ([`crate::scaling::decide`]) and sets the worker Deployment's
//! `spec.replicas` through its scale subresource when it changes. It scales only Deployments
//! carrying the chart's worker label ([`WORKER_LABEL`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::{Api, Client, Resource, ResourceExt};
use queue::Queue;

use crate::crd::{ProverPool, ProverPoolStatus};
use crate::scaling::{self, KindLoad, PoolSettings};
use crate::{Error, FIELD_MANAGER};

/// The label the chart puts on every worker Deployment (its value: the pool's name); a
/// ProverPool scales only a Deployment that carries it.
pub const WORKER_LABEL: &str = "prover.dev/pool";

/// A pool by (namespace, name) → when it was last evaluated, at which generation.
type Evaluations = HashMap<(String, String), (Instant, Option<i64>)>;

pub struct PoolContext {
    pub client: Client,
    pub queue: Arc<dyn Queue>,
    /// How often each pool is re-evaluated.
    pub interval: Duration,
    /// When each pool (namespace, name) was last evaluated, and at which generation.
    last: Mutex<Evaluations>,
}

impl PoolContext {
    pub fn new(client: Client, queue: Arc<dyn Queue>, interval: Duration) -> Self {
        Self { client, queue, interval, last: Mutex::new(HashMap::new()) }
    }

    /// Time until the pool is due again, if it was evaluated less than an interval ago at the
    /// same generation: then the trigger was a status-only change (the scaler's own status
    /// write), and evaluating again would make every status write trigger the next one.
    fn not_due(&self, key: &(String, String), generation: Option<i64>) -> Option<Duration> {
        let last = self.last.lock().expect("pool mutex");
        let (at, seen) = last.get(key)?;
        let elapsed = at.elapsed();
        (*seen == generation && elapsed < self.interval).then(|| self.interval - elapsed)
    }

    fn evaluated(&self, key: (String, String), generation: Option<i64>) {
        self.last.lock().expect("pool mutex").insert(key, (Instant::now(), generation));
    }
}

/// The settings of a pool's spec, with defaults filled in.
pub fn settings(pool: &ProverPool) -> PoolSettings {
    let s = &pool.spec;
    let min = u32::try_from(s.min_replicas).unwrap_or(0);
    PoolSettings {
        min_replicas: min,
        max_replicas: u32::try_from(s.max_replicas).unwrap_or(0).max(min),
        target_backlog_seconds: s.target_backlog_seconds.unwrap_or(scaling::DEFAULT_TARGET_BACKLOG_SECONDS),
        default_seconds_per_task: s.default_seconds_per_task.unwrap_or(scaling::DEFAULT_SECONDS_PER_TASK),
        scale_down_delay: Duration::from_secs(s.scale_down_delay_seconds.unwrap_or(scaling::DEFAULT_SCALE_DOWN_DELAY_SECONDS)),
    }
}

async fn patch_status(api: &Api<ProverPool>, name: &str, status: &ProverPoolStatus) -> Result<(), Error> {
    let patch = serde_json::json!({
        "apiVersion": ProverPool::api_version(&()),
        "kind": ProverPool::kind(&()),
        "status": status,
    });
    api.patch_status(name, &PatchParams::apply(FIELD_MANAGER).force(), &Patch::Apply(&patch)).await?;
    Ok(())
}

/// Reconciles one ProverPool (the `Controller`'s reconcile function).
pub async fn reconcile(pool: Arc<ProverPool>, ctx: Arc<PoolContext>) -> Result<Action, Error> {
    let ns = pool.namespace().ok_or_else(|| Error::Invalid("ProverPool without a namespace".into()))?;
    let name = pool.name_any();
    let pools: Api<ProverPool> = Api::namespaced(ctx.client.clone(), &ns);
    let deployments: Api<Deployment> = Api::namespaced(ctx.client.clone(), &ns);
    let key = (ns.clone(), name.clone());
    if let Some(wait) = ctx.not_due(&key, pool.metadata.generation) {
        return Ok(Action::requeue(wait));
    }
    ctx.evaluated(key, pool.metadata.generation);
    let old = pool.status.clone().unwrap_or_default();
    let settings = settings(&pool);

    let mut loads = Vec::with_capacity(pool.spec.task_kinds.len());
    for kind in &pool.spec.task_kinds {
        let s = ctx.queue.stats(kind).await?;
        loads.push(KindLoad { pending: s.pending, running: s.running, delayed: s.delayed, completed: s.completed, busy: s.busy });
    }

    // Only the chart's worker Deployments may be scaled: a ProverPool is not a way to scale
    // any Deployment of its namespace (its author may not be allowed to).
    let refusal = match deployments.get_opt(&pool.spec.deployment).await? {
        None => Some(format!("Deployment {ns}/{} not found", pool.spec.deployment)),
        Some(d) if !d.labels().contains_key(WORKER_LABEL) => Some(format!(
            "Deployment {ns}/{} does not carry the worker label {WORKER_LABEL} (set by the chart on worker pools): not scaled",
            pool.spec.deployment
        )),
        Some(_) => None,
    };
    if let Some(message) = refusal {
        let mut st = old.clone();
        st.message = Some(message);
        st.current_replicas = None;
        st.observed_generation = pool.metadata.generation;
        if st != old {
            patch_status(&pools, &name, &st).await?;
        }
        return Ok(Action::requeue(ctx.interval));
    }
    let scale = match deployments.get_scale(&pool.spec.deployment).await {
        Ok(s) => s,
        Err(kube::Error::Api(e)) if e.code == 404 => {
            let mut st = old.clone();
            st.message = Some(format!("Deployment {ns}/{} not found", pool.spec.deployment));
            st.current_replicas = None;
            st.observed_generation = pool.metadata.generation;
            if st != old {
                patch_status(&pools, &name, &st).await?;
            }
            return Ok(Action::requeue(ctx.interval));
        }
        Err(e) => return Err(e.into()),
    };
    let current = scale.spec.and_then(|s| s.replicas).unwrap_or(0).max(0) as u32;

    let now = jiff::Timestamp::now();
    let since_last_scale = old
        .last_scale_time
        .as_deref()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
        .and_then(|t| Duration::try_from(now.duration_since(t)).ok());
    let decision = scaling::decide(&loads, &settings, current, since_last_scale);

    let mut last_scale_time = old.last_scale_time.clone();
    if decision.desired != current {
        let desired = i32::try_from(decision.desired).unwrap_or(i32::MAX);
        deployments
            .patch_scale(&pool.spec.deployment, &PatchParams::default(), &Patch::Merge(serde_json::json!({"spec": {"replicas": desired}})))
            .await?;
        tracing::info!(pool = %name, deployment = %pool.spec.deployment, from = current, to = desired, reason = %decision.reason, "scaled");
        last_scale_time = Some(now.to_string());
    }

    let new = ProverPoolStatus {
        desired_replicas: Some(i32::try_from(decision.desired).unwrap_or(i32::MAX)),
        current_replicas: Some(i32::try_from(decision.desired).unwrap_or(i32::MAX)),
        busy_workers: decision.busy_workers,
        pending: decision.pending,
        running: decision.running,
        delayed: decision.delayed,
        seconds_per_task: decision.seconds_per_task,
        last_scale_time,
        message: Some(decision.reason),
        observed_generation: pool.metadata.generation,
    };
    if new != old {
        patch_status(&pools, &name, &new).await?;
    }
    Ok(Action::requeue(ctx.interval))
}

pub fn error_policy(obj: Arc<ProverPool>, err: &Error, ctx: Arc<PoolContext>) -> Action {
    tracing::warn!(pool = %obj.name_any(), error = %err, "scaling failed; retrying");
    Action::requeue(ctx.interval)
}

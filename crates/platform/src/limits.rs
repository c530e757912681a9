//! What a request may ask for, and what each role needs in memory to serve the largest of
//! them (`GetLimits`, `prover limits`).
//!
//! Every bound a request can meet is listed once, by the code that enforces it: each job
//! kind's [`crate::JobKind::limits`] names the request field its validation names when the
//! bound is crossed (INVALID_ARGUMENT), [`request_limits`] the bounds of every call, and
//! [`tenant_limits`] the caller's quotas (RESOURCE_EXHAUSTED). `tests/limits.rs` submits one
//! past each kind's bound and checks that the refusal names the listed field.
//!
//! [`memory`] adds up what each role keeps within its budgets at those bounds: the object
//! cache, the Reckle circuit sets (or the one set at the largest `(ℓ, q)` when that is larger
//! than the budget: a set over the budget is still built for its task), the planner's request
//! budget ([`crate::budget`]: every request being received and decoded, together), and a
//! process's own working memory as measured by `scripts/bench-memory.sh` at ℓ = 27. The
//! chart's default memory limits are checked against it (`scripts/test.d/55-limits.sh`).
//! Wrap pools (`reckle.wrap`, `hekaton.wrap`) are sized separately (docs/job-kinds.md); their
//! keys are not part of the defaults.

pub use crate::limit::Limit;
use crate::{PlatformConfig, Quotas};

/// What one role needs in memory, part by part.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct RoleMemory {
    /// `planner`, `executor`, `aggregator` or `worker`.
    pub role: String,
    /// (what, bytes).
    pub parts: Vec<(String, u64)>,
}

impl RoleMemory {
    pub fn bytes(&self) -> u64 {
        self.parts.iter().map(|(_, b)| b).sum()
    }
}

/// A planner's or an executor's own working memory, apart from its cache: their peaks at
/// ℓ = 27 with a 1 GiB upload streamed through the planner were 60 and 29 MiB
/// (`scripts/bench-memory.sh 27:16:5`), doubled and rounded up.
pub const CONTROL_PROCESS_BYTES: u64 = 128 << 20;
/// A worker's or an aggregator's own working memory apart from its cache and circuit sets: a
/// plain worker peaked at 287–320 MiB on the Reckle final bench, and the ℓ = 27 worker and
/// aggregator at their circuit set plus under 100 MiB.
pub const PROVER_PROCESS_BYTES: u64 = 384 << 20;

/// The bounds of every call.
pub fn request_limits() -> Vec<Limit> {
    vec![
        Limit::new("request", "message", crate::bounds::MAX_REQUEST_BYTES as u64, "bytes", "one request message (a response: up to 64 MiB)"),
        Limit::new("request", "total_size", crate::bounds::MAX_UPLOAD_BYTES, "bytes", "one UploadInput stream (a Reckle job's leaves at the largest log_n)"),
        Limit::new("request", "name", crate::bounds::MAX_UPLOAD_NAME as u64, "count", "characters of an UploadInput's name"),
        Limit::new("request", "page_size", crate::bounds::MAX_PAGE_SIZE as u64, "count", "jobs of one ListJobs page"),
        Limit::new("request", "job_ids", crate::kinds::circom::MAX_BUNDLE_JOBS as u64, "count", "jobs of one GetBundle call"),
        Limit::new("request", "watches", crate::bounds::MAX_WATCHES_PER_TENANT as u64, "count", "WatchJob streams open at once per tenant"),
        Limit::new("request", "proof_streams", crate::bounds::MAX_PROOF_STREAMS_PER_TENANT as u64, "count", "GetProof streams open at once per tenant"),
        Limit::new("request", "streams_per_connection", crate::bounds::MAX_STREAMS_PER_CONNECTION as u64, "count", "calls one HTTP/2 connection carries at once"),
        Limit::new("request", "stall_secs", crate::budget::STALL_SECS, "seconds", "a call that sends nothing while it holds request budget fails after this"),
        Limit::new("request", "verifies", crate::verify_gate::MAX_VERIFIES_PER_TENANT as u64, "count", "VerifyProof and GetBundle calls in flight at once per tenant (run one per core)"),
    ]
}

/// The quotas every tenant has (none listed for a quota that is off).
pub fn tenant_limits(q: &Quotas) -> Vec<Limit> {
    let rows: [(&str, Option<u64>, &str, &str); 6] = [
        ("max_active_jobs", q.max_active_jobs, "count", "jobs queued or running at once"),
        ("max_job_tasks", q.max_job_tasks, "count", "tasks one job may plan"),
        ("max_tasks_per_hour", q.max_tasks_per_hour, "count", "tasks planned per clock hour (UTC)"),
        ("max_record_bytes", q.max_record_bytes, "bytes", "job records and task state kept in Redis, all together"),
        ("max_upload_bytes", q.max_upload_bytes, "bytes", "uploads kept, all together"),
        ("max_circuit_bytes", q.max_circuit_bytes, "bytes", "registered circuits (.r1cs and key pairs), all together"),
    ];
    rows.into_iter().filter_map(|(field, max, unit, what)| max.map(|m| Limit::new("tenant", field, m, unit, what))).collect()
}

/// Every bound of a platform with `config`: its kinds', every call's, the tenants' quotas.
pub fn limits(config: &PlatformConfig) -> Vec<Limit> {
    let mut all: Vec<Limit> = config.registry.kinds().flat_map(|k| k.limits()).collect();
    all.extend(request_limits());
    all.extend(tenant_limits(&config.quotas));
    all
}

/// What each role needs in memory, at the bounds of [`limits`], with `config`'s budgets.
pub fn memory(config: &PlatformConfig) -> Vec<RoleMemory> {
    let cache = ("object cache (--cache-bytes)".to_string(), config.cache_bytes);
    let serves_reckle = config.registry.kinds().any(|k| k.name() == crate::JOB_RECKLE_BATCH || k.name() == crate::JOB_RECKLE_UPDATE);
    let circuits = if serves_reckle {
        let (largest, at) = crate::kinds::reckle::largest_circuit_set();
        if largest > config.circuit_bytes {
            Some((format!("the Reckle circuit set at (ℓ, q) = {at:?}, over --circuit-bytes ({})", mib(config.circuit_bytes)), largest))
        } else {
            // Sets are dropped before a build to make room for it: the budget bounds the peak.
            Some((format!("Reckle circuit sets, kept and being built (--circuit-bytes; the largest, at (ℓ, q) = {at:?}: {})", mib(largest)), config.circuit_bytes))
        }
    } else {
        None
    };
    let control = ("process".to_string(), CONTROL_PROCESS_BYTES);
    let prover = ("process".to_string(), PROVER_PROCESS_BYTES);
    let body = ("requests being received and decoded (--request-budget-bytes)".to_string(), config.request_budget_bytes);
    vec![
        RoleMemory { role: "planner".into(), parts: vec![control.clone(), cache.clone(), body] },
        RoleMemory { role: "executor".into(), parts: vec![control, cache.clone()] },
        RoleMemory { role: "aggregator".into(), parts: [Some(prover.clone()), Some(cache.clone()), circuits.clone()].into_iter().flatten().collect() },
        RoleMemory { role: "worker".into(), parts: [Some(prover), Some(cache), circuits].into_iter().flatten().collect() },
    ]
}

fn mib(bytes: u64) -> String {
    format!("{} MiB", bytes.div_ceil(1 << 20))
}

/// GetLimits' answer as the two Markdown tables `prover limits` prints (and
/// docs/operations.md holds for the default configuration).
pub fn table(l: &api::v1::Limits) -> String {
    let mut out = String::from("| scope | field | max | unit | bounds |\n|---|---|---|---|---|\n");
    for x in &l.limits {
        out += &format!("| {} | {} | {} | {} | {} |\n", x.scope, x.field, x.max, x.unit, x.description);
    }
    out += "\n| role | memory | made of |\n|---|---|---|\n";
    for r in &l.memory {
        let parts: Vec<String> = r.parts.iter().map(|p| format!("{}: {}", p.description, mib(p.bytes))).collect();
        out += &format!("| {} | {} | {} |\n", r.role, mib(r.bytes), parts.join("; "));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_lists_its_bounds_and_fields_are_unique() {
        let config = PlatformConfig::default();
        let all = limits(&config);
        for kind in config.registry.kinds() {
            assert!(all.iter().any(|l| l.scope == kind.name()), "{} lists no limits", kind.name());
        }
        let mut seen = std::collections::BTreeSet::new();
        for l in &all {
            assert!(l.max > 0, "{l:?}");
            assert!(seen.insert((l.scope.clone(), l.field.clone())), "{}.{} listed twice", l.scope, l.field);
        }
    }

    #[test]
    fn memory_adds_the_budgets_and_the_largest_circuit_set_when_over_budget() {
        let mut config = PlatformConfig::default();
        config.cache_bytes = 1 << 20;
        config.circuit_bytes = 1 << 20;
        let (largest, _) = crate::kinds::reckle::largest_circuit_set();
        let worker = memory(&config).into_iter().find(|r| r.role == "worker").unwrap();
        assert_eq!(worker.bytes(), PROVER_PROCESS_BYTES + (1 << 20) + largest);
        config.circuit_bytes = 64 << 30;
        let worker = memory(&config).into_iter().find(|r| r.role == "worker").unwrap();
        assert_eq!(worker.bytes(), PROVER_PROCESS_BYTES + (1 << 20) + (64 << 30));
        let planner = memory(&config).into_iter().find(|r| r.role == "planner").unwrap();
        assert_eq!(planner.bytes(), CONTROL_PROCESS_BYTES + (1 << 20) + config.request_budget_bytes);
    }
}

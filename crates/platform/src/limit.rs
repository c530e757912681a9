//! One bound a request can meet, as each job kind ([`crate::kinds::JobKind::limits`]), every
//! call ([`crate::bounds`]) and the tenants' quotas name it; [`crate::limits`] lists them all
//! (`GetLimits`, `prover limits`).

/// One bound a request can meet.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Limit {
    /// A job kind (`reckle.batch`), `request` (every call) or `tenant` (the caller's quotas).
    pub scope: String,
    /// The request field (or quota) named when the bound is crossed.
    pub field: String,
    /// The largest value accepted.
    pub max: u64,
    /// What `max` counts: `count`, `bytes`, `log2` (of a count), `steps`, `seconds`.
    pub unit: String,
    /// What is bounded, in words.
    pub what: String,
}

impl Limit {
    pub fn new(scope: &str, field: &str, max: u64, unit: &str, what: &str) -> Self {
        Self { scope: scope.into(), field: field.into(), max, unit: unit.into(), what: what.into() }
    }
}

//! Garbage collection of the object store (`prover admin gc`): the objects of finished jobs
//! older than a cut-off, and of job ids the job store does not know (a submission cut between
//! storing its inputs and recording the job, or a record that expired with its retention).
//!
//! Order: a finished job's record is expired first, then its objects deleted, so the API never
//! serves a job whose proof is gone; a collection cut half-way leaves objects without a record,
//! which the next run collects as orphans. An orphan is deleted only if it still has no record
//! after `grace` (a submission in flight stores its inputs a moment before its record).
//! Jobs live under `jobs/<id>/` and, a tenant's, under `tenants/<t>/jobs/<id>/`. Shared objects
//! (`hekaton/keys/…`) and registered circuits (deleted by their tenant: `DeleteCircuit`) are not
//! collected; uploads older than their retention are ([`Platform::gc_uploads`]).
//!
//! A job store that lists no job at all while the object store holds jobs' objects is more
//! likely a Redis that lost its data (persistence off, a restore, another database number)
//! than a platform whose every job expired: collecting then would delete every done job's
//! proofs as orphans. Such a run is refused ([`PlatformError::Precondition`]) unless
//! `allow_empty_index` ([`Platform::gc_with`], `prover admin gc --allow-empty-index`).

use std::collections::BTreeSet;
use std::time::Duration;

use crate::{layout, Platform, PlatformError};

/// What a collection found and did.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct GcReport {
    /// Finished jobs older than the cut-off: record expired, objects deleted.
    pub expired_jobs: Vec<String>,
    /// Job ids with objects and no record (after the grace period): objects deleted.
    pub orphans: Vec<String>,
    /// Objects deleted (0 in a dry run).
    pub objects_deleted: usize,
    /// Jobs kept: not finished, or finished more recently than the cut-off.
    pub kept: usize,
}

impl Platform {
    /// Collects the objects of jobs finished more than `older_than` ago and of orphaned job ids
    /// (see the module doc). With `dry_run`, reports what it would collect and changes nothing.
    pub async fn gc(&self, older_than: Duration, grace: Duration, dry_run: bool) -> Result<GcReport, PlatformError> {
        self.gc_with(older_than, grace, dry_run, false).await
    }

    /// [`Platform::gc`]; with `allow_empty_index`, also when the job store lists no job at all
    /// (see the module doc).
    pub async fn gc_with(&self, older_than: Duration, grace: Duration, dry_run: bool, allow_empty_index: bool) -> Result<GcReport, PlatformError> {
        // Job ids are the folders of the job prefixes, listed at the delimiter: O(jobs) keys
        // in memory, never the objects of the jobs (a done Reckle job keeps hundreds of
        // thousands of node proofs and tree pieces; N10 of the platform review).
        let mut ids: BTreeSet<String> = self.blobs().list_dirs("jobs/").await?.into_iter().collect();
        // Tenants' jobs: `tenants/<t>/jobs/<t>.<uuid>/…` (uploads and circuits are not jobs'
        // and stay). An id that does not name its prefix's tenant is left alone.
        for t in self.blobs().list_dirs("tenants/").await? {
            for id in self.blobs().list_dirs(&format!("tenants/{t}/jobs/")).await? {
                if layout::job_tenant(&id) == t {
                    ids.insert(id);
                }
            }
        }
        let now = jobs::now_ms();
        let cutoff = now.saturating_sub(older_than.as_millis() as u64);
        let mut report = GcReport::default();
        let mut orphans = Vec::new();
        for id in ids {
            match self.job_store().get(&id).await? {
                Some(rec) if rec.state.is_terminal() && rec.updated_ms <= cutoff => report.expired_jobs.push(id),
                Some(_) => report.kept += 1,
                None => orphans.push(id),
            }
        }
        let index_empty = || async {
            // An expired first entry reads as no record but a next page: not empty.
            let (first, next) = self.job_store().list(0, 1).await?;
            Ok::<bool, PlatformError>(first.is_empty() && next.is_none())
        };
        if !orphans.is_empty() && !allow_empty_index && index_empty().await? {
            return Err(PlatformError::Precondition(format!(
                "the job store lists no job, yet {} job ids have objects: if Redis lost its data, collecting would delete \
                 every done job's proofs. Check the Redis URL and database; if every job really expired, run again with \
                 --allow-empty-index",
                orphans.len()
            )));
        }
        if !orphans.is_empty() && !grace.is_zero() {
            tokio::time::sleep(grace).await;
        }
        for id in orphans {
            match self.job_store().get(&id).await? {
                None => report.orphans.push(id),
                Some(_) => report.kept += 1,
            }
        }
        if dry_run {
            return Ok(report);
        }
        for id in &report.expired_jobs {
            // The record goes first: from now on the API answers NOT_FOUND, not a missing proof.
            self.job_store().expire(id, Duration::ZERO).await?;
        }
        for id in report.expired_jobs.iter().chain(&report.orphans) {
            report.objects_deleted += self.blobs().delete_prefix(&layout::job_prefix(id)).await?;
        }
        ::metrics::counter!("prover_gc_objects_deleted_total").increment(report.objects_deleted as u64);
        tracing::info!(
            expired = report.expired_jobs.len(),
            orphans = report.orphans.len(),
            objects = report.objects_deleted,
            kept = report.kept,
            "object store collected"
        );
        Ok(report)
    }
}

impl Platform {
    /// Deletes uploads (every tenant's, and the open API's `uploads/`) written more than
    /// `older_than` ago, and returns their keys; with `dry_run`, only lists them. Their charges
    /// against the tenants' upload quotas expired at the same age
    /// ([`crate::PlatformConfig::upload_retention`]); jobs hold their own copies of inputs.
    pub async fn gc_uploads(&self, older_than: Duration, dry_run: bool) -> Result<Vec<String>, PlatformError> {
        let cutoff = jobs::now_ms().saturating_sub(older_than.as_millis() as u64);
        let mut old = Vec::new();
        for prefix in ["tenants/", "uploads/"] {
            for o in self.blobs().list_objects(prefix).await? {
                let mut parts = o.key.split('/');
                let is_upload = match (parts.next(), parts.next(), parts.next()) {
                    (Some("uploads"), Some(name), None) => !name.is_empty(),
                    (Some("tenants"), Some(t), Some("uploads")) => !t.is_empty() && parts.next().is_some_and(|n| !n.is_empty()) && parts.next().is_none(),
                    _ => false,
                };
                if is_upload && o.modified_ms <= cutoff {
                    old.push(o.key);
                }
            }
        }
        if !dry_run {
            for key in &old {
                self.blobs().delete(key).await?;
            }
            ::metrics::counter!("prover_gc_objects_deleted_total").increment(old.len() as u64);
            tracing::info!(uploads = old.len(), "old uploads collected");
        }
        Ok(old)
    }
}

/// Parses a duration such as `90s`, `30m`, `12h` or `7d` (a bare number is seconds).
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num.parse().map_err(|_| format!("{s:?}: expected a number and a unit (s, m, h, d), e.g. 7d"))?;
    let secs = match unit {
        "" | "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return Err(format!("{s:?}: unknown unit {unit:?} (s, m, h, d)")),
    };
    n.checked_mul(secs).map(Duration::from_secs).ok_or_else(|| format!("{s:?}: too long"))
}

#[cfg(test)]
mod tests {
    use super::parse_duration;
    use std::time::Duration;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("7d").unwrap(), Duration::from_secs(7 * 86_400));
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("12h").unwrap(), Duration::from_secs(12 * 3600));
        for bad in ["", "d", "7w", "-1d", "1.5h"] {
            assert!(parse_duration(bad).is_err(), "{bad}");
        }
    }
}

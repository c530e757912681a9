//! The Reckle circuits a process holds: built once per `(ℓ, q)`, kept within
//! `--circuit-bytes`, and built before a worker claims anything ([`warm_up`]).

use std::sync::Arc;

use reckle::{Circuits, Params};

use super::MAX_LOG_N;
use crate::error::corrupt;
use crate::{Platform, PlatformError};

/// Bytes of the `(log_n, log_bucket)` circuit set as [`Circuits::heap_bytes`] counts them,
/// without building it: about 95.5 MiB per level circuit and 0.34 MiB per leaf of the bucket
/// circuit, fitted to the sets built by `examples/circuit_memory` ((8, 2): 568 MiB; (16, 4):
/// 1,143; (20, 4): 1,525; (24, 4): 1,907; (24, 12): 2,536; all within 2% of the fit).
pub fn circuit_set_estimate(log_n: u32, log_bucket: u32) -> u64 {
    const LEVEL: u64 = 100_139_008; // 95.5 MiB
    const LEAF: u64 = 356_516; // 0.34 MiB
    u64::from(log_n.saturating_sub(log_bucket)) * LEVEL + (1u64 << log_bucket) * LEAF
}

/// The largest circuit set a job within the platform's limits can need, and its `(ℓ, q)`.
pub fn largest_circuit_set() -> (u64, (u32, u32)) {
    (0..=reckle::MAX_LOG_BUCKET.min(MAX_LOG_N)).map(|q| (circuit_set_estimate(MAX_LOG_N, q), (MAX_LOG_N, q))).max().expect("q = 0 is allowed")
}

/// The circuit data a process has built, one chain per bucket height `q` (the circuits of one
/// `q` are the same whatever `ℓ`: [`Circuits::for_log_n`]), with each chain's size
/// ([`Circuits::heap_bytes`]) and when it was last used, and the lock that makes concurrent
/// tasks wait for one build instead of building again.
#[derive(Default)]
pub(crate) struct CircuitSets {
    built: Arc<std::sync::Mutex<BuiltSets>>,
    building: Arc<tokio::sync::Mutex<()>>,
}

#[derive(Default)]
pub(crate) struct BuiltSets {
    chains: std::collections::HashMap<u32, Chain>,
    tick: u64,
    /// The most bytes held at the end of a build: the chains kept beside it and the set built.
    peak: u64,
}

/// The longest set built for one `q`, and the sets of smaller `ℓ` handed out from it (its
/// prefixes: they hold no circuit of their own).
struct Chain {
    set: Arc<Circuits>,
    bytes: u64,
    used: u64,
    prefixes: std::collections::HashMap<u32, Arc<Circuits>>,
}

impl BuiltSets {
    /// The set of `params`, if the chain of its `q` reaches its `ℓ`.
    fn get(&mut self, params: &Params) -> Option<Arc<Circuits>> {
        self.tick += 1;
        let tick = self.tick;
        let chain = self.chains.get_mut(&params.log_bucket)?;
        if chain.set.params().log_n < params.log_n {
            return None;
        }
        chain.used = tick;
        if chain.set.params() == *params {
            return Some(chain.set.clone());
        }
        if let Some(c) = chain.prefixes.get(&params.log_n) {
            return Some(c.clone());
        }
        let prefix = Arc::new(chain.set.for_log_n(params.log_n).ok()?);
        chain.prefixes.insert(params.log_n, prefix.clone());
        Some(prefix)
    }

    /// The chain of `q`, whatever its length.
    fn chain(&self, q: u32) -> Option<Arc<Circuits>> {
        self.chains.get(&q).map(|c| c.set.clone())
    }

    fn bytes(&self) -> u64 {
        self.chains.values().map(|c| c.bytes).sum()
    }

    /// Bytes of the chains of other bucket heights than `q`.
    fn bytes_besides(&self, q: u32) -> u64 {
        self.chains.iter().filter(|(k, _)| **k != q).map(|(_, c)| c.bytes).sum()
    }

    /// Before building `params`' set (about `estimate` bytes, its `q`'s shorter chain included):
    /// drops the least recently used chains of other heights until the kept ones and the new
    /// set fit in `budget` together, so that the build's peak stays within it. A set over the
    /// whole budget is built alone. (A task still holding a dropped set keeps it alive until
    /// it ends; no new task gets it.)
    fn make_room(&mut self, params: Params, estimate: u64, budget: u64) {
        let q = params.log_bucket;
        while self.bytes_besides(q) > 0 && self.bytes_besides(q) + estimate > budget {
            let lru = *self.chains.iter().filter(|(k, _)| **k != q).min_by_key(|(_, c)| c.used).map(|(k, _)| k).expect("another chain");
            let dropped = self.chains.remove(&lru).expect("present").set.params();
            tracing::info!(log_n = dropped.log_n, log_bucket = dropped.log_bucket, "circuit set dropped before a build, to stay within --circuit-bytes");
        }
        ::metrics::gauge!("prover_circuit_bytes").set(self.bytes() as f64);
    }

    /// Keeps `c` (`bytes`) as its `q`'s chain (replacing a shorter one, whose circuits it
    /// shares), dropping the least recently used other chains until all fit in `budget`; a
    /// chain over the whole budget is kept alone (its tasks need it anyway, and the next set
    /// needed replaces it).
    fn put(&mut self, c: Arc<Circuits>, bytes: u64, budget: u64) {
        let q = c.params().log_bucket;
        self.peak = self.peak.max(self.bytes_besides(q) + bytes);
        self.chains.remove(&q);
        while !self.chains.is_empty() && self.bytes() + bytes > budget {
            let lru = *self.chains.iter().min_by_key(|(_, c)| c.used).map(|(q, _)| q).expect("not empty");
            let dropped = self.chains.remove(&lru).expect("present");
            let p = dropped.set.params();
            tracing::info!(log_n = p.log_n, log_bucket = p.log_bucket, "circuit set dropped to stay within --circuit-bytes");
        }
        self.tick += 1;
        self.chains.insert(q, Chain { set: c, bytes, used: self.tick, prefixes: Default::default() });
        ::metrics::gauge!("prover_circuit_bytes").set(self.bytes() as f64);
    }
}

impl Platform {
    /// The Reckle circuit sets this process holds: per `q`, the longest `(ℓ, q)` built (the
    /// sets of smaller `ℓ` are its prefixes).
    pub fn circuits_built(&self) -> Vec<Params> {
        self.circuits.built.lock().expect("mutex").chains.values().map(|c| c.set.params()).collect()
    }

    /// The circuit set of `params` if this process holds it (builds nothing).
    pub(crate) fn circuits_if_built(&self, params: Params) -> Option<Arc<Circuits>> {
        self.circuits.built.lock().expect("mutex").get(&params)
    }

    /// Bytes of the circuit sets this process keeps ([`Circuits::heap_bytes`]), within
    /// [`crate::PlatformConfig::circuit_bytes`] unless one set alone is larger.
    pub fn circuit_bytes(&self) -> u64 {
        self.circuits.built.lock().expect("mutex").bytes()
    }

    /// The most bytes of circuit sets this process held at the end of a build (the sets kept
    /// beside it and the set built): within [`crate::PlatformConfig::circuit_bytes`] unless one
    /// set alone is larger, since sets are dropped before a build to make room for it.
    pub fn circuit_peak_bytes(&self) -> u64 {
        self.circuits.built.lock().expect("mutex").peak
    }

    /// Circuit data per `(ℓ, q)`, built once per process and kept within
    /// [`crate::PlatformConfig::circuit_bytes`], at its peak too (least recently used sets of
    /// other bucket heights are dropped before a build, by the set's estimate). The
    /// sets of one `q` share one chain of circuits: a set of smaller `ℓ` than one built is its
    /// prefix (nothing built, no bytes added), and one of larger `ℓ` builds only the levels
    /// above. The build runs detached: a task abandoned while it waits (deadline, lost lease)
    /// does not waste it.
    pub async fn circuits(&self, params: Params) -> Result<Arc<Circuits>, PlatformError> {
        if let Some(c) = self.circuits.built.lock().expect("mutex").get(&params) {
            return Ok(c);
        }
        let (cache, building) = (self.circuits.built.clone(), self.circuits.building.clone());
        // The wrap proving key, where this process holds one, is counted in the same budget.
        let budget = self.config().circuit_bytes.saturating_sub(self.wrap_resident_bytes());
        tokio::spawn(async move {
            let _building = building.lock_owned().await;
            if let Some(c) = cache.lock().expect("mutex").get(&params) {
                return Ok(c);
            }
            let started = std::time::Instant::now();
            let shorter = {
                let mut sets = cache.lock().expect("mutex");
                sets.make_room(params, circuit_set_estimate(params.log_n, params.log_bucket), budget);
                sets.chain(params.log_bucket)
            };
            let from = shorter.as_ref().map_or(0, |c| c.params().log_n);
            let built = Arc::new(
                tokio::task::spawn_blocking(move || match shorter {
                    Some(c) => c.for_log_n(params.log_n),
                    None => Circuits::build(params),
                })
                .await
                .map_err(corrupt)??,
            );
            let bytes = built.heap_bytes();
            tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, from_log_n = from, bytes, took = ?started.elapsed(), "circuit set built");
            cache.lock().expect("mutex").put(built.clone(), bytes, budget);
            Ok(built)
        })
        .await
        .map_err(corrupt)?
    }
}

/// A worker about to serve: builds the circuit sets of the active jobs (distinct ones, oldest
/// jobs first) before it holds any lease, as long as the next set is expected to fit in
/// `--circuit-bytes` beside those built (expected: the bytes per level of the sets built so
/// far, times the next set's levels). Before, it built four sets whatever their size, so a
/// worker killed for memory there was killed again on every restart and never claimed a task.
pub(super) async fn warm_up(p: &Platform, active: &[Params]) -> Result<(), PlatformError> {
    // One set per q, the largest ℓ waiting (its chain serves the smaller ones), in the order
    // of each q's oldest job.
    let mut sets: Vec<Params> = Vec::new();
    for &params in active {
        match sets.iter_mut().find(|s| s.log_bucket == params.log_bucket) {
            Some(s) => s.log_n = s.log_n.max(params.log_n),
            None => sets.push(params),
        }
    }
    let levels = |params: Params| u64::from(params.log_n - params.log_bucket + 1);
    let (mut bytes, mut built_levels) = (0u64, 0u64);
    for params in sets {
        if built_levels > 0 && bytes + bytes / built_levels * levels(params) > p.config().circuit_bytes {
            tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, "warm-up stops: the next set would not fit in --circuit-bytes");
            break;
        }
        let started = std::time::Instant::now();
        bytes += p.circuits(params).await?.heap_bytes();
        built_levels += levels(params);
        tracing::info!(log_n = params.log_n, log_bucket = params.log_bucket, took = ?started.elapsed(), "circuits built before claiming");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_circuit_set_estimate_fits_the_measured_sets() {
        for (l, q, mib) in [(8, 2, 568u64), (16, 4, 1143), (20, 4, 1525), (24, 4, 1907), (24, 12, 2536)] {
            let est = super::circuit_set_estimate(l, q) as f64 / (1u64 << 20) as f64;
            assert!((est / mib as f64 - 1.0).abs() < 0.02, "({l}, {q}): estimate {est:.0} MiB, measured {mib}");
        }
        let (bytes, at) = super::largest_circuit_set();
        assert_eq!(at, (MAX_LOG_N, reckle::MAX_LOG_BUCKET));
        assert_eq!(bytes, super::circuit_set_estimate(MAX_LOG_N, reckle::MAX_LOG_BUCKET));
    }
}

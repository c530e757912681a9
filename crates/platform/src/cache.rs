//! The process's cache of decoded objects (job specs as the kinds decoded them, with what they
//! derive from them such as Reckle's plans; pieces of Reckle trees; Hekaton proving, verifying
//! and wrap keys), bounded by bytes: one budget for all of them
//! ([`crate::PlatformConfig::cache_bytes`]), least recently used entries evicted first. An entry
//! larger than the whole budget is handed back to its caller and not kept, so one large job
//! costs its task's memory once instead of staying resident in every process that touched it.
//!
//! Sizes are estimates of the decoded value's heap (a tree: its values and digests; a key: its
//! stored bytes times the point-decompression factor), made by whoever inserts the entry.

use std::any::Any;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Default budget of a process's cache (`--cache-bytes`).
pub const DEFAULT_CACHE_BYTES: u64 = crate::defaults::CACHE_BYTES;

struct Entry {
    value: Arc<dyn Any + Send + Sync>,
    bytes: u64,
    used: u64,
}

#[derive(Default)]
struct Inner {
    entries: HashMap<String, Entry>,
    total: u64,
    tick: u64,
}

/// A byte-bounded LRU map from names (`"spec/{kind}/{job}"`, …) to shared decoded values.
pub struct ObjectCache {
    budget: u64,
    inner: Mutex<Inner>,
}

impl ObjectCache {
    pub fn new(budget: u64) -> Self {
        Self { budget, inner: Mutex::new(Inner::default()) }
    }

    /// The value under `key`, if cached with this type (marks it recently used).
    pub fn get<T: Any + Send + Sync>(&self, key: &str) -> Option<Arc<T>> {
        let mut g = self.inner.lock().expect("object cache");
        g.tick += 1;
        let tick = g.tick;
        let e = g.entries.get_mut(key)?;
        e.used = tick;
        e.value.clone().downcast::<T>().ok()
    }

    /// Keeps `value` (about `bytes` of memory) under `key`, evicting the least recently used
    /// entries until the budget holds it. A value over the whole budget is not kept.
    pub fn put<T: Any + Send + Sync>(&self, key: &str, value: Arc<T>, bytes: u64) {
        let mut g = self.inner.lock().expect("object cache");
        if let Some(old) = g.entries.remove(key) {
            g.total -= old.bytes;
        }
        if bytes > self.budget {
            metrics::counter!("prover_cache_oversize_total").increment(1);
            tracing::debug!(key, bytes, budget = self.budget, "not cached: larger than the cache budget");
            metrics::gauge!("prover_cache_bytes").set(g.total as f64);
            return;
        }
        while g.total + bytes > self.budget {
            let Some(lru) = g.entries.iter().min_by_key(|(_, e)| e.used).map(|(k, _)| k.clone()) else { break };
            let gone = g.entries.remove(&lru).expect("present");
            g.total -= gone.bytes;
            metrics::counter!("prover_cache_evictions_total").increment(1);
        }
        g.tick += 1;
        let used = g.tick;
        g.total += bytes;
        g.entries.insert(key.to_string(), Entry { value, bytes, used });
        metrics::gauge!("prover_cache_bytes").set(g.total as f64);
    }

    /// Bytes held now (the sum of the entries' estimates), never above the budget.
    pub fn bytes(&self) -> u64 {
        self.inner.lock().expect("object cache").total
    }

    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// The keys held now that start with `prefix`.
    pub fn keys_with_prefix(&self, prefix: &str) -> Vec<String> {
        let g = self.inner.lock().expect("object cache");
        let mut keys: Vec<String> = g.entries.keys().filter(|k| k.starts_with(prefix)).cloned().collect();
        keys.sort();
        keys
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evicts_least_recently_used_first_and_stays_in_budget() {
        let c = ObjectCache::new(100);
        c.put("a", Arc::new(1u32), 40);
        c.put("b", Arc::new(2u32), 40);
        assert_eq!(*c.get::<u32>("a").unwrap(), 1); // a is now the most recent
        c.put("c", Arc::new(3u32), 40); // evicts b
        assert!(c.get::<u32>("b").is_none());
        assert_eq!((c.get::<u32>("a").as_deref(), c.get::<u32>("c").as_deref()), (Some(&1), Some(&3)));
        assert_eq!(c.bytes(), 80);
        // Replacing an entry frees its old size.
        c.put("a", Arc::new(4u32), 10);
        assert_eq!((c.bytes(), *c.get::<u32>("a").unwrap()), (50, 4));
    }

    #[test]
    fn an_entry_over_the_budget_is_not_kept_and_evicts_nothing() {
        let c = ObjectCache::new(100);
        c.put("small", Arc::new(1u8), 60);
        c.put("huge", Arc::new(2u8), 101);
        assert!(c.get::<u8>("huge").is_none());
        assert!(c.get::<u8>("small").is_some());
        assert_eq!(c.bytes(), 60);
    }

    #[test]
    fn a_value_of_another_type_is_a_miss() {
        let c = ObjectCache::new(100);
        c.put("k", Arc::new(1u8), 1);
        assert!(c.get::<u64>("k").is_none());
        assert_eq!(c.keys_with_prefix("k"), ["k"]);
    }
}

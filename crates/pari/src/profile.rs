//! Where a proof's time goes: the wall-clock time of each of the prover's phases, in the order
//! they ran, for benchmarks ([`crate::prover::prove_with_profile`], `examples/prove_profile.rs`).
//!
//! Timing costs two clock reads per phase (a dozen phases a proof), so the prover always keeps
//! a profile and [`crate::prove`] drops it. Nothing may assert on these times: they depend on
//! the machine and its load.

use std::time::{Duration, Instant};

/// The phases of one proof, each with its wall-clock time.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    phases: Vec<(&'static str, Duration)>,
}

impl Profile {
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs `f` as the phase `name` and records its time (a name used twice adds up).
    pub fn time<T>(&mut self, name: &'static str, f: impl FnOnce() -> T) -> T {
        let start = Instant::now();
        let out = f();
        self.record(name, start.elapsed());
        out
    }

    /// Adds `elapsed` to the phase `name` (appended the first time it is seen).
    pub fn record(&mut self, name: &'static str, elapsed: Duration) {
        match self.phases.iter_mut().find(|(n, _)| *n == name) {
            Some((_, t)) => *t += elapsed,
            None => self.phases.push((name, elapsed)),
        }
    }

    /// The phases in the order they first ran.
    pub fn phases(&self) -> &[(&'static str, Duration)] {
        &self.phases
    }

    /// The time of phase `name`, if it ran.
    pub fn get(&self, name: &str) -> Option<Duration> {
        self.phases.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
    }

    /// The sum of every phase.
    pub fn total(&self) -> Duration {
        self.phases.iter().map(|(_, t)| *t).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phases_keep_their_order_and_repeated_names_add_up() {
        let mut p = Profile::new();
        p.record("b", Duration::from_millis(2));
        p.record("a", Duration::from_millis(1));
        p.record("b", Duration::from_millis(3));
        assert_eq!(p.time("c", || 7), 7);
        let names: Vec<&str> = p.phases().iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["b", "a", "c"]);
        assert_eq!(p.get("b"), Some(Duration::from_millis(5)));
        assert_eq!(p.get("d"), None);
        assert!(p.total() >= Duration::from_millis(6));
    }
}

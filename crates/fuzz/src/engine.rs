//! A small mutation fuzzer: valid encodings in, damaged encodings out, panics counted.
//!
//! Each target is a function from bytes to "accepted or rejected"; the engine feeds it its seed
//! inputs (valid encodings made in-process by the real prover) and mutations of them: bit flips,
//! byte overwrites with boundary values, truncations, extensions, slices copied from another
//! seed, and length fields set to large values. Every call runs under `catch_unwind`, so a panic
//! is counted and its message kept instead of ending the run. The random stream is seeded, so a
//! run with the same seed and input count is repeatable.

use std::panic::{self, AssertUnwindSafe};
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One decoder under test.
pub struct Target {
    /// Name in the report (`pari.proof`, `reckle.statement`, ...).
    pub name: &'static str,
    /// Valid encodings to start from.
    pub seeds: Vec<Vec<u8>>,
    /// Decodes (and, where cheap, checks) the input; returns whether it was accepted. Must never
    /// panic, whatever the bytes.
    pub run: Box<dyn Fn(&[u8]) -> bool + Send + Sync>,
    /// Inputs for the short run in the test command, when this target is much slower than the
    /// others (a large key's validated decoding); `None`: the test's default.
    pub short_run: Option<u64>,
}

/// What one target did in one run.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub name: &'static str,
    pub inputs: u64,
    pub accepted: u64,
    pub panics: u64,
    /// The first few panics: message and the input that caused it (hex, truncated).
    pub examples: Vec<(String, String)>,
    pub elapsed: Duration,
}

/// How long a run lasts: a number of inputs (repeatable, for tests) or a wall-clock budget (for
/// the benchmark).
#[derive(Clone, Copy, Debug)]
pub enum Budget {
    Inputs(u64),
    Time(Duration),
}

/// Applies 1–4 random mutations to a copy of one seed.
pub fn mutate(rng: &mut impl Rng, seeds: &[Vec<u8>]) -> Vec<u8> {
    let mut data = seeds[rng.gen_range(0..seeds.len())].clone();
    for _ in 0..rng.gen_range(1..=4) {
        let len = data.len();
        match rng.gen_range(0..8) {
            // Flip one bit.
            0 if len > 0 => {
                let i = rng.gen_range(0..len);
                data[i] ^= 1 << rng.gen_range(0..8);
            }
            // Overwrite a byte with a boundary value.
            1 if len > 0 => {
                let i = rng.gen_range(0..len);
                data[i] = [0x00, 0x01, 0x7f, 0x80, 0xfe, 0xff][rng.gen_range(0..6)];
            }
            // Overwrite a byte at random.
            2 if len > 0 => {
                let i = rng.gen_range(0..len);
                data[i] = rng.gen();
            }
            // Truncate.
            3 if len > 0 => data.truncate(rng.gen_range(0..len)),
            // Extend with random bytes.
            4 => {
                let extra = rng.gen_range(1..64);
                data.extend((0..extra).map(|_| rng.gen::<u8>()));
            }
            // Copy a slice of another seed over this one (keeps structure, mixes fields).
            5 if len > 0 => {
                let other = &seeds[rng.gen_range(0..seeds.len())];
                if !other.is_empty() {
                    let from = rng.gen_range(0..other.len());
                    let to = rng.gen_range(0..len);
                    let n = rng.gen_range(1..=64).min(other.len() - from).min(len - to);
                    data[to..to + n].copy_from_slice(&other[from..from + n]);
                }
            }
            // Write a large little-endian u32/u64 somewhere (length and count fields).
            6 if len >= 8 => {
                let i = rng.gen_range(0..=len - 8);
                let v: u64 = [u64::MAX, u32::MAX as u64, 1 << 31, 1 << 40, 0][rng.gen_range(0..5)];
                if rng.gen() {
                    data[i..i + 8].copy_from_slice(&v.to_le_bytes());
                } else {
                    data[i..i + 4].copy_from_slice(&(v as u32).to_le_bytes());
                }
            }
            // Remove a range.
            7 if len > 1 => {
                let a = rng.gen_range(0..len);
                let b = rng.gen_range(a..=len.min(a + 64));
                data.drain(a..b);
            }
            _ => data.push(rng.gen()),
        }
    }
    data
}

/// Runs one target: its seeds first (they must all be accepted), then mutations until the
/// budget is spent.
pub fn run(target: &Target, budget: Budget, seed: u64) -> Report {
    let mut report = Report { name: target.name, ..Default::default() };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let start = Instant::now();
    let call = |input: &[u8], report: &mut Report| {
        report.inputs += 1;
        match panic::catch_unwind(AssertUnwindSafe(|| (target.run)(input))) {
            Ok(true) => report.accepted += 1,
            Ok(false) => {}
            Err(payload) => {
                report.panics += 1;
                if report.examples.len() < 3 {
                    let msg = payload
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_else(|| "non-string panic".into());
                    let shown: String = input.iter().take(96).map(|b| format!("{b:02x}")).collect();
                    report.examples.push((msg, shown));
                }
            }
        }
    };
    for s in &target.seeds {
        call(s, &mut report);
    }
    loop {
        let done = match budget {
            Budget::Inputs(n) => report.inputs >= n,
            Budget::Time(t) => start.elapsed() >= t,
        };
        if done {
            break;
        }
        let input = mutate(&mut rng, &target.seeds);
        call(&input, &mut report);
    }
    report.elapsed = start.elapsed();
    report
}

/// Silences the default panic message while fuzzing (panics are counted and reported instead);
/// returns a guard that restores the previous hook.
pub fn quiet_panics() -> impl Drop {
    struct Restore(Option<Box<dyn Fn(&panic::PanicHookInfo<'_>) + Sync + Send + 'static>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            if let Some(h) = self.0.take() {
                panic::set_hook(h);
            }
        }
    }
    let previous = panic::take_hook();
    panic::set_hook(Box::new(|_| {}));
    Restore(Some(previous))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A decoder with a planted bug (it indexes by a length byte without checking it): the
    /// engine must find the panic from a valid seed, count it and keep going.
    #[test]
    fn finds_a_planted_panic() {
        let target = Target {
            name: "planted",
            seeds: vec![vec![3, 10, 20, 30]],
            run: Box::new(|b: &[u8]| {
                let n = *b.first().unwrap_or(&0) as usize;
                b[1..][..n].iter().all(|&x| x != 0)
            }),
            short_run: None,
        };
        let quiet = quiet_panics();
        let r = run(&target, Budget::Inputs(500), 1);
        drop(quiet);
        assert_eq!(r.inputs, 500);
        assert!(r.panics > 0 && !r.examples.is_empty(), "{r:?}");
        assert!(r.accepted > 0);
    }
}

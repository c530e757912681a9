//! The short form of the fuzz benchmark: every decoder target gets its seeds and a fixed
//! number of damaged copies; any panic fails the test (with the message and the input).

use fuzz::engine::{self, Budget};

/// Inputs per target: enough to reach every field of each seed many times over, small enough
/// for the test command on 2 cores.
const INPUTS: u64 = 1000;

#[test]
fn no_decoder_panics_on_damaged_input() {
    let targets = fuzz::all_targets();
    // The seeds are honest encodings: each must be accepted, or the target tests nothing.
    for t in &targets {
        for (i, seed) in t.seeds.iter().enumerate() {
            assert!((t.run)(seed), "{}: honest seed {i} was rejected", t.name);
        }
    }
    let quiet = engine::quiet_panics();
    let reports: Vec<_> = targets.iter().map(|t| engine::run(t, Budget::Inputs(t.short_run.unwrap_or(INPUTS)), 0x5eed)).collect();
    drop(quiet);
    for (t, r) in targets.iter().zip(&reports) {
        assert_eq!(r.panics, 0, "{}: {} panics, e.g. {:?}", r.name, r.panics, r.examples);
        assert_eq!(r.inputs, t.short_run.unwrap_or(INPUTS));
    }
}

//! The platform's job specs, as the executor and workers read them back from the job store
//! (written by the planner, but a store is shared: a corrupt or hostile record must fail its
//! job with a reason, never take down the process that reads it). A decoded spec is planned,
//! as the executor would.

use platform::kinds::contract::Kind;
use platform::kinds::hekaton::Hekaton;
use platform::kinds::pari::PariBatch;
use platform::kinds::reckle::ReckleBatch;
use platform::{HekatonJobSpec, PariJobSpec, ReckleJobSpec};

use crate::engine::Target;

/// The job-spec targets, with seeds from honest specs.
pub fn targets() -> Vec<Target> {
    let reckle = serde_json::json!({ "log_n": 6, "log_bucket": 2, "batch": [1, 5, 17, 63], "window": 2 });
    let pari = PariJobSpec::new(pari::circuits::CircuitFamily::Chain { steps: 64 }, 3, 100, 16, 64);
    let hekaton = HekatonJobSpec::new(hekaton::spec::CircuitSpec::MerkleUpdate { depth: 8, updates: 2, parts: 4 }, 9, false);
    vec![
        Target {
            name: "platform.hekaton_spec",
            seeds: vec![serde_json::to_vec(&hekaton).expect("json")],
            // What the executor does with a stored spec before any circuit is built.
            run: Box::new(|b| {
                serde_json::from_slice::<HekatonJobSpec>(b)
                    .is_ok_and(|s| Hekaton::check(&s).is_ok() && s.circuit.num_subcircuits() > 0 && !s.circuit.digest().is_empty())
            }),
            short_run: None,
        },
        Target {
            name: "platform.reckle_spec",
            seeds: vec![serde_json::to_vec(&reckle).expect("json")],
            // Decoded as the adaptor decodes a record: the kind's check (which derives the plan),
            // then the plan.
            run: Box::new(|b| serde_json::from_slice::<ReckleJobSpec>(b).is_ok_and(|s| ReckleBatch::check(&s).is_ok() && !ReckleBatch::plan(&s).is_empty())),
            short_run: None,
        },
        Target {
            name: "platform.pari_spec",
            seeds: vec![serde_json::to_vec(&pari).expect("json")],
            // Decoded as the typed contract's adaptor decodes a record: the kind's check first.
            run: Box::new(|b| serde_json::from_slice::<PariJobSpec>(b).is_ok_and(|s| PariBatch::check(&s).is_ok() && s.prove_tasks() > 0 && s.bundles() > 0)),
            short_run: None,
        },
    ]
}

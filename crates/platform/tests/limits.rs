//! Issue 31 item 6: GetLimits lists every bound a request can meet, and each listed bound is
//! the one validation enforces: a request one past it is refused with INVALID_ARGUMENT naming
//! the listed field, and one at it is not refused for that field. A bound added to a kind
//! without a case here fails `every_listed_bound_has_a_case`.

mod common;

use api::v1 as pb;
use api::v1::job_service_server::JobService;
use platform::{Platform, PlatformConfig};
use queue::QueueConfig;
use tonic::Request;

/// Bounds whose requests need more than this test builds, with the test that covers them.
const ELSEWHERE: &[(&str, &str, &str)] = &[
    ("circuit.register", "r1cs_object_key", "a header of 2^22 + 1 constraints needs a ~50 MB file: circom_wires::registration_judges_a_circuit_by_its_header"),
    ("pari.circom", "witness_object_keys", "needs a registered circuit: kinds::circom::tests (witnesses = MAX_WITNESSES + 1)"),
    ("pari.circom", "bundle_size", "needs a registered circuit: kinds::circom::tests"),
    ("testudo", "witness_object_keys", "needs a registered BLS12-381 circuit: testudo_jobs (the count is checked after the circuit)"),
];

fn submit(params: pb::submit_job_request::Params) -> Request<pb::SubmitJobRequest> {
    Request::new(pb::SubmitJobRequest { idempotency_key: String::new(), params: Some(params) })
}

/// A request of `scope` with `field` at `value` (everything else valid and small).
fn request(scope: &str, field: &str, value: u64) -> pb::submit_job_request::Params {
    use pb::submit_job_request::Params;
    match (scope, field) {
        ("noop", "tasks") => Params::Noop(pb::NoopParams { tasks: value }),
        ("pari.batch", _) => {
            let mut p = pb::PariBatchParams { circuit: "poseidon".into(), size: 2, seed_start: 0, count: 4, proofs_per_task: 0, bundle_size: 0 };
            match field {
                "count" => p.count = value,
                "proofs_per_task" => p.proofs_per_task = value,
                "bundle_size" => p.bundle_size = value,
                "circuit" => (p.circuit, p.size) = ("chain".into(), value),
                _ => panic!("no case for pari.batch {field}"),
            }
            Params::PariBatch(p)
        }
        ("reckle.batch", _) => {
            let (log_n, log_bucket, batch) = match field {
                "log_n" => (value as u32, 1u32, vec![0u64]),
                "log_bucket" => (value.max(4) as u32, value as u32, vec![0]),
                "batch" => (13, 1, (0..value).collect()),
                _ => panic!("no case for reckle.batch {field}"),
            };
            // Leaves named by an object that does not exist: bounds are checked before it is
            // looked up, so a request within them is refused for leaves.object_key instead.
            let leaves = Some(pb::reckle_batch_params::Leaves::ObjectKey("uploads/none.bin".into()));
            Params::ReckleBatch(pb::ReckleBatchParams { log_n, log_bucket, batch, leaves, final_proof: false })
        }
        ("reckle.update", "changes") => Params::ReckleUpdate(pb::ReckleUpdateParams {
            base_job_id: "no-such-job".into(),
            changes: (0..value).map(|i| pb::ReckleChange { change: Some(pb::reckle_change::Change::Set(pb::SetLeaf { index: i, value: 1 })) }).collect(),
            ..Default::default()
        }),
        ("hekaton.prove", "circuit") => Params::Hekaton(pb::HekatonParams {
            circuit: "synthetic".into(),
            subcircuits: value as u32,
            steps: 2,
            wires: 2,
            ..Default::default()
        }),
        _ => panic!("no case for {scope} {field}"),
    }
}

async fn service() -> (platform::grpc::JobServiceImpl, pb::Limits, Option<tempfile::TempDir>) {
    let (q, blobs, store, dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let p = Platform::with_config(q, blobs, store, PlatformConfig::default());
    let svc = platform::grpc::JobServiceImpl::new(p);
    let limits = svc.get_limits(Request::new(pb::GetLimitsRequest {})).await.unwrap().into_inner();
    (svc, limits, dir)
}

#[tokio::test]
async fn one_past_each_listed_bound_is_refused_naming_its_field() {
    let (svc, limits, _dir) = service().await;
    let mut checked = 0;
    for l in limits.limits.iter().filter(|l| l.scope != "request" && l.scope != "tenant") {
        if ELSEWHERE.iter().any(|(s, f, _)| *s == l.scope && *f == l.field) {
            continue;
        }
        let e = svc.submit_job(submit(request(&l.scope, &l.field, l.max + 1))).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{} {} = max + 1: {e:?}", l.scope, l.field);
        assert!(e.message().contains(&l.field), "{} {} = max + 1 refused without naming {}: {}", l.scope, l.field, l.field, e.message());
        // At the bound, any refusal is for something else.
        if let Err(e) = svc.submit_job(submit(request(&l.scope, &l.field, l.max))).await {
            assert!(!e.message().starts_with(&format!("invalid {}:", l.field)), "{} {} = max refused for it: {}", l.scope, l.field, e.message());
        }
        checked += 1;
    }
    assert!(checked >= 9, "{checked} bounds checked");
}

#[tokio::test]
async fn every_listed_bound_has_a_case_and_every_role_a_memory_need() {
    let (_svc, limits, _dir) = service().await;
    for l in &limits.limits {
        assert!(l.max > 0 && !l.unit.is_empty() && !l.description.is_empty(), "{l:?}");
        if l.scope == "request" || l.scope == "tenant" || ELSEWHERE.iter().any(|(s, f, _)| *s == l.scope && *f == l.field) {
            continue;
        }
        // Panics for a bound this test has no request for.
        let _ = request(&l.scope, &l.field, l.max);
    }
    for scope in ["reckle.batch", "reckle.update", "pari.batch", "pari.circom", "circuit.register", "hekaton.prove", "noop", "testudo", "request", "tenant"] {
        assert!(limits.limits.iter().any(|l| l.scope == scope), "GetLimits lists nothing for {scope}");
    }
    let roles: Vec<&str> = limits.memory.iter().map(|r| r.role.as_str()).collect();
    assert_eq!(roles, ["planner", "executor", "aggregator", "worker"]);
    for r in &limits.memory {
        assert_eq!(r.bytes, r.parts.iter().map(|p| p.bytes).sum::<u64>(), "{r:?}");
    }
}

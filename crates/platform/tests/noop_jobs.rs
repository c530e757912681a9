//! The no-op kind, the example of the typed contract, end to end through the gRPC service:
//! its own proto message parsed by the kind, field errors naming the field, the job run by
//! the roles, and `VerifyProof` refusing a kind that publishes no proof.

mod common;

use std::time::Duration;

use api::v1 as pb;
use api::v1::job_service_server::JobService;
use platform::{JobOutcome, Platform, PlatformConfig};
use queue::QueueConfig;
use tokio::sync::watch;

fn noop(tasks: u64) -> pb::SubmitJobRequest {
    pb::SubmitJobRequest { idempotency_key: String::new(), params: Some(pb::submit_job_request::Params::Noop(pb::NoopParams { tasks })) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_noop_job_submitted_over_grpc_runs_to_the_end() {
    let (q, blobs, store, _dir) = common::backends(false, QueueConfig::default()).await.unwrap();
    let p = Platform::with_config(q, blobs, store, PlatformConfig::default());
    let svc = platform::grpc::JobServiceImpl::new(p.clone());

    // Bad input: a clear error naming the field, and nothing recorded.
    for bad in [0, platform::kinds::noop::MAX_TASKS + 1] {
        let e = svc.submit_job(tonic::Request::new(noop(bad))).await.unwrap_err();
        assert_eq!(e.code(), tonic::Code::InvalidArgument, "{e:?}");
        assert!(e.message().contains("tasks"), "{}", e.message());
    }
    assert!(p.job_store().list(0, 10).await.unwrap().0.is_empty(), "a refused request wrote a job");

    let r = svc.submit_job(tonic::Request::new(noop(5))).await.unwrap().into_inner();
    let job = r.job.unwrap();
    assert_eq!(job.kind, "noop");
    assert_eq!(job.tasks.iter().map(|t| (t.kind.as_str(), t.total)).collect::<Vec<_>>(), vec![("noop.task", 5)]);

    let (tx, rx) = watch::channel(false);
    tokio::spawn(p.clone().run_executor("executor".into(), rx.clone()));
    tokio::spawn(p.clone().run_worker("worker".into(), rx.clone()));
    // A safety net, not a timing assertion.
    let outcome = tokio::time::timeout(Duration::from_secs(120), p.wait(&r.job_id, |_| {})).await.expect("the job never ended");
    assert_eq!(outcome, JobOutcome::Done);
    let rec = p.job_store().get(&r.job_id).await.unwrap().unwrap();
    assert_eq!(rec.tasks["noop.task"].done, 5);

    let target = Some(pb::verify_proof_request::Target::JobId(r.job_id.clone()));
    let e = svc.verify_proof(tonic::Request::new(pb::VerifyProofRequest { target, ..Default::default() })).await.unwrap_err();
    assert_eq!(e.code(), tonic::Code::FailedPrecondition, "{e:?}");
    let _ = tx.send(true);
}

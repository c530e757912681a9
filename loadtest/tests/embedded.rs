//! The load generator against the embedded server, in-process: a small mixed scenario.

use std::time::Duration;

use platform::service::{self, Role, ServiceConfig};

fn config(grpc: u16) -> ServiceConfig {
    use clap::Parser;
    #[derive(Parser)]
    struct A {
        #[command(flatten)]
        c: ServiceConfig,
    }
    A::parse_from(["x", "--listen", &format!("127.0.0.1:{grpc}"), "--metrics-listen", "127.0.0.1:0", "--concurrency", "2"]).c
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn small_scenario_against_the_embedded_server() {
    let grpc = free_port();
    let cfg = config(grpc);
    let dir = tempfile::tempdir().unwrap();
    let platform = service::embedded(&cfg, dir.path().to_path_buf()).unwrap();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(async move {
        let roles = [Role::Planner, Role::Executor, Role::Aggregator, Role::Worker];
        service::run(platform, &roles, &cfg, async move {
            let _ = rx.await;
        })
        .await
    });
    // The event: the gRPC port accepts connections (bounded: the server must come up).
    let deadline = std::time::Instant::now() + Duration::from_secs(120);
    while tokio::net::TcpStream::connect(("127.0.0.1", grpc)).await.is_err() {
        assert!(std::time::Instant::now() < deadline, "the embedded server never listened on {grpc}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/small.toml")).unwrap();
    let mut scenario = prover_loadtest::Scenario::from_toml(&text).unwrap();
    scenario.endpoint = format!("http://127.0.0.1:{grpc}");
    scenario.duration_secs = 2.0;
    let report = prover_loadtest::run(scenario).await.unwrap();
    println!("{}", report.table());
    assert!(report.submitted >= 3, "{}", report.table());
    assert_eq!(report.completed, report.submitted, "{}", report.table());
    assert_eq!(report.failed + report.rejected, 0);
    assert!(report.latency.p50 > 0.0 && report.latency.p99 >= report.latency.p50);
    assert_eq!(report.csv().lines().count(), report.submitted + 1);

    // The scenario's Hekaton template alone (the random mix above may not have drawn it).
    let mut hekaton = prover_loadtest::Scenario::from_toml(&text).unwrap();
    hekaton.endpoint = format!("http://127.0.0.1:{grpc}");
    hekaton.mix.retain(|t| t.name() == "hekaton.prove");
    assert_eq!(hekaton.mix.len(), 1, "small.toml has a hekaton template");
    hekaton.duration_secs = 0.5;
    let report = prover_loadtest::run(hekaton).await.unwrap();
    println!("{}", report.table());
    assert!(report.submitted >= 1, "{}", report.table());
    assert_eq!(report.completed, report.submitted, "{}", report.table());
    let _ = tx.send(());
    server.await.unwrap().unwrap();

    // Bad scenarios are refused with the field named.
    let err = prover_loadtest::Scenario::from_toml("endpoint = \"x\"\nduration_secs = 1\nrate_per_sec = 0\nmix = []").unwrap_err();
    assert!(err.to_string().contains("rate_per_sec"), "{err}");
    assert!(prover_loadtest::Scenario::from_toml("endpoint = \"x\"\nduration_secs = 1\nrate_per_sec = 1\nbogus = 1\nmix = []").is_err());
}

//! Redis reply timeouts: a server pause longer than redis-rs's own default (500 ms) is waited
//! out by a store with the default settings, while a store given a shorter timeout fails, which
//! shows the pause was real. Needs `PROVER_TEST_REDIS_URL` (required when
//! `PROVER_TEST_REQUIRE_SERVICES=1`).

use std::time::Duration;

use jobs::{JobRecord, JobState, JobStore, RedisJobStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_pause_is_waited_out_with_the_default_timeout() {
    let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
        eprintln!("skipping: PROVER_TEST_REDIS_URL not set");
        return;
    };
    assert!(jobs::DEFAULT_REDIS_TIMEOUT_SECS >= 5, "the default is several seconds");
    let store = RedisJobStore::connect(&url).await.unwrap();
    let short = RedisJobStore::connect_opts(&url, false, Duration::from_millis(200)).await.unwrap();
    let id = format!("pause-{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    store.create(&JobRecord::new(&id, "noop", "{}"), None).await.unwrap();
    assert!(short.get(&id).await.unwrap().is_some(), "both stores answer before the pause");
    // Every client's commands wait 1.5 s from here (the command itself answers at once).
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("CLIENT").arg("PAUSE").arg(1500).query_async(&mut admin).await.unwrap();
    let (ended, cut) = tokio::join!(store.end(&id, JobState::Done, "", Duration::from_secs(60)), short.get(&id));
    assert!(ended.expect("the default timeout waits the pause out"), "ended by this call");
    let cut = cut.expect_err("a 200 ms timeout does not wait out a 1.5 s pause");
    assert!(cut.to_string().contains("backend"), "{cut}");
    assert_eq!(store.get(&id).await.unwrap().unwrap().state, JobState::Done);
    assert!(matches!(RedisJobStore::connect_opts(&url, false, Duration::ZERO).await, Err(jobs::JobError::Invalid { field: "redis_timeout", .. })));
}

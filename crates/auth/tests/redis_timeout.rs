//! The token store waits out a Redis pause longer than redis-rs's own 500 ms default (a planner
//! used to fail authentications while another client's large reply held the server), and a
//! store given a shorter timeout fails, which shows the pause was real (issue 33 item 3).
//! Needs `PROVER_TEST_REDIS_URL` (required when `PROVER_TEST_REQUIRE_SERVICES=1`).

use std::time::Duration;

use auth::{RedisTokenStore, TokenStore};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authentication_waits_out_a_server_pause() {
    let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
        eprintln!("skipping: PROVER_TEST_REDIS_URL not set");
        return;
    };
    assert!(auth::DEFAULT_TIMEOUT >= Duration::from_secs(5), "the default is several seconds");
    let store = RedisTokenStore::connect(&url).await.unwrap();
    let short = RedisTokenStore::connect_opts(&url, Duration::from_millis(200)).await.unwrap();
    let tenant = format!("pause{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
    let token = store.create(&tenant).await.unwrap();
    assert_eq!(short.resolve(&token.secret).await.unwrap().as_deref(), Some(tenant.as_str()), "both answer before the pause");
    // Every client's commands wait 1.5 s from here (the command itself answers at once).
    let mut admin = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("CLIENT").arg("PAUSE").arg(1500).query_async(&mut admin).await.unwrap();
    let (waited, cut) = tokio::join!(store.resolve(&token.secret), short.resolve(&token.secret));
    assert_eq!(waited.expect("the default timeout waits the pause out").as_deref(), Some(tenant.as_str()));
    assert!(cut.is_err(), "a 200 ms timeout does not wait out a 1.5 s pause: {cut:?}");
    store.revoke(&token.info.id).await.unwrap();
    assert!(RedisTokenStore::connect_opts(&url, Duration::ZERO).await.is_err());
}

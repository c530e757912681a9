//! A Redis that may evict keys is refused (its own test binary: it changes the server's policy
//! for a moment, which must not race with the contract tests).

use queue::contract::contract_config;
use queue::RedisQueue;

#[tokio::test]
async fn redis_refuses_an_evicting_server() {
    let Some(url) = std::env::var("PROVER_TEST_REDIS_URL").ok() else { return };
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("allkeys-lru").query_async(&mut c).await.unwrap();
    let refused = RedisQueue::connect(&url, contract_config()).await;
    let _: () = redis::cmd("CONFIG").arg("SET").arg("maxmemory-policy").arg("noeviction").query_async(&mut c).await.unwrap();
    assert!(matches!(refused, Err(queue::QueueError::Backend(m)) if m.contains("noeviction")));
}

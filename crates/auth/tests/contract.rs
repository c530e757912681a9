//! The token-store contract against the in-process store and a real Redis server
//! (`PROVER_TEST_REDIS_URL`; required when `PROVER_TEST_REQUIRE_SERVICES=1`, as the test command
//! sets).

use auth::contract::*;
use auth::{MemoryTokenStore, RedisTokenStore, TokenStore};

fn prefix() -> String {
    format!("t{}", &uuid::Uuid::new_v4().simple().to_string()[..12])
}

async fn redis() -> Option<RedisTokenStore> {
    match std::env::var("PROVER_TEST_REDIS_URL") {
        Ok(url) => Some(RedisTokenStore::connect(&url).await.expect("connect to Redis")),
        Err(_) => {
            assert!(
                std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"),
                "PROVER_TEST_REQUIRE_SERVICES=1 but PROVER_TEST_REDIS_URL is not set"
            );
            eprintln!("skipping Redis: PROVER_TEST_REDIS_URL not set");
            None
        }
    }
}

macro_rules! contract_case {
    ($name:ident) => {
        mod $name {
            use super::*;
            #[tokio::test]
            async fn memory_store() {
                $name(&MemoryTokenStore::new() as &dyn TokenStore, &prefix()).await;
            }
            #[tokio::test]
            async fn redis_store() {
                if let Some(s) = redis().await {
                    $name(&s as &dyn TokenStore, &prefix()).await;
                }
            }
        }
    };
}

contract_case!(tokens_resolve_to_their_tenant);
contract_case!(revoked_tokens_stop_working);

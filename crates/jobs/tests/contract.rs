//! The job-store contract against the in-process store and a real Redis server
//! (`PROVER_TEST_REDIS_URL`; required when `PROVER_TEST_REQUIRE_SERVICES=1`, as the test command
//! sets).

use jobs::contract::*;
use jobs::{JobStore, MemoryJobStore, RedisJobStore};

fn prefix(name: &str) -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    format!("{}-{}", name.replace('_', "-"), &id[..12])
}

fn memory() -> &'static dyn JobStore {
    Box::leak(Box::new(MemoryJobStore::new()))
}

async fn redis() -> Option<&'static dyn JobStore> {
    match std::env::var("PROVER_TEST_REDIS_URL") {
        Ok(url) => Some(Box::leak(Box::new(RedisJobStore::connect(&url).await.expect("connect to Redis")))),
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
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn memory_store() {
                $name(super::memory(), &super::prefix(stringify!($name))).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis_store() {
                if let Some(s) = super::redis().await {
                    $name(s, &super::prefix(stringify!($name))).await;
                }
            }
        }
    };
}

contract_case!(create_and_get);
contract_case!(bad_records_are_refused);
contract_case!(idempotency);
contract_case!(terminal_states_are_final);
contract_case!(moves_follow_the_table);
contract_case!(task_state_is_counted_once);
contract_case!(concurrent_reports);
contract_case!(list_pages_newest_first);
contract_case!(active_jobs_are_listed);
contract_case!(finished_jobs_expire);
contract_case!(tenants_are_separate);
contract_case!(tenant_active_jobs_are_limited);
contract_case!(tenant_hourly_tasks_are_limited);
contract_case!(release_marks_and_tenant_activity);
contract_case!(endings_stay_listed_until_cleaned);
contract_case!(an_ending_takes_its_retention);

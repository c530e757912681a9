//! The queue contract against the in-process queue and against a real Redis server.
//!
//! Redis comes from `PROVER_TEST_REDIS_URL` (the test command starts one). Without it the Redis
//! cases are skipped, unless `PROVER_TEST_REQUIRE_SERVICES=1`, which the test command sets, so a
//! missing server fails CI instead of passing silently.

use std::sync::OnceLock;

use queue::contract::*;
use queue::{MemoryQueue, Queue, RedisQueue};

fn kind(name: &str) -> &'static str {
    let id = uuid::Uuid::new_v4().simple().to_string();
    Box::leak(format!("t.{}.{}", &name[..name.len().min(20)], &id[..12]).into_boxed_str())
}

fn memory() -> &'static dyn Queue {
    Box::leak(Box::new(MemoryQueue::new(contract_config())))
}

async fn redis() -> Option<&'static dyn Queue> {
    static URL: OnceLock<Option<String>> = OnceLock::new();
    let url = URL.get_or_init(|| std::env::var("PROVER_TEST_REDIS_URL").ok()).clone();
    match url {
        Some(url) => Some(Box::leak(Box::new(RedisQueue::connect(&url, contract_config()).await.expect("connect to Redis")))),
        None => {
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
            async fn memory_queue() {
                $name(super::memory(), super::kind(stringify!($name))).await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn redis_queue() {
                if let Some(q) = super::redis().await {
                    $name(q, super::kind(stringify!($name))).await;
                }
            }
        }
    };
}

contract_case!(claim_and_complete);
contract_case!(claim_waits_for_enqueue);
contract_case!(claim_any_serves_several_kinds);
contract_case!(stale_lease_is_fenced);
contract_case!(retries_then_dead_letters);
contract_case!(trace_context_travels_with_the_message);
contract_case!(expired_leases_count_as_attempts);
contract_case!(release_redelivers_without_penalty);
contract_case!(extend_keeps_the_lease);
contract_case!(expired_lease_behind_live_ones_is_redelivered);
contract_case!(throughput_is_recorded);
contract_case!(bad_input_is_refused);
contract_case!(purge_removes_a_jobs_waiting_tasks);
contract_case!(enqueue_once_does_not_duplicate);
contract_case!(job_tasks_counts_waiting_running_and_delayed);
contract_case!(a_long_queue_is_walked_whole);

contract_case!(complete_with_reports_atomically);
contract_case!(enqueue_once_many_does_not_duplicate);
contract_case!(dead_letters_are_read_by_cursor);
contract_case!(job_has_tasks_follows_every_move);

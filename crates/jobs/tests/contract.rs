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
contract_case!(brief_listings_leave_the_specs);
contract_case!(active_jobs_are_listed);
contract_case!(finished_jobs_expire);
contract_case!(tenants_are_separate);
contract_case!(tenant_active_jobs_are_limited);
contract_case!(tenant_hourly_tasks_are_limited);
contract_case!(release_marks_and_tenant_activity);
contract_case!(endings_stay_listed_until_cleaned);
contract_case!(an_ending_takes_its_retention);
contract_case!(tenant_record_bytes_are_limited);
contract_case!(charges_are_per_item_and_limited);

/// [`jobs::TASK_STATE_BYTES`] covers what Redis holds per task (its id in the done and the
/// released set, as the kinds name tasks), and is not a gross overestimate; the record's fixed
/// charge covers its hash.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_state_charge_covers_redis() {
    let Ok(url) = std::env::var("PROVER_TEST_REDIS_URL") else {
        assert!(std::env::var("PROVER_TEST_REQUIRE_SERVICES").as_deref() != Ok("1"), "PROVER_TEST_REDIS_URL is not set");
        return;
    };
    let s = RedisJobStore::connect(&url).await.unwrap();
    let id = prefix("task-state");
    const N: u64 = 5000;
    let mut rec = jobs::JobRecord::new(id.clone(), "pari.circom", "{}");
    rec.tasks.insert("prove".into(), jobs::TaskCounts { total: N, done: 0 });
    s.create(&rec, None).await.unwrap();
    for i in 0..N {
        s.task_done(&id, "prove", &format!("prove-{i}")).await.unwrap();
        s.mark_released(&id, &format!("prove-{i}")).await.unwrap();
    }
    let conn = redis::Client::open(url.as_str()).unwrap().get_multiplexed_async_connection().await.unwrap();
    let mem = |key: String| {
        let mut c = conn.clone();
        async move { redis::cmd("MEMORY").arg("USAGE").arg(key).arg("SAMPLES").arg(0).query_async::<u64>(&mut c).await.unwrap() }
    };
    let sets = mem(format!("prover:job:{id}:done")).await + mem(format!("prover:job:{id}:released")).await;
    let hash = mem(format!("prover:job:{id}")).await;
    let (record, tasks) = jobs::record_charge(&rec);
    eprintln!("{N} tasks: sets {sets} B ({} per task), charged {tasks}; hash {hash} B, charged {record}", sets / N);
    assert!(sets <= tasks, "Redis holds {sets} B of task state, {tasks} charged");
    assert!(4 * sets >= tasks, "{tasks} charged for {sets} B");
    assert!(hash <= record, "Redis holds {hash} B of record, {record} charged");
    s.delete(&id).await.unwrap();
}

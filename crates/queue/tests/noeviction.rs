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

/// A server that refuses `CONFIG` and `INFO` (as managed Redis may; here an ACL user without
/// them) is refused with the way out named, and accepted with `assume_noeviction`, which says
/// so. A user with `INFO` but no `CONFIG` (the platform's role users,
/// helm/prover/files/redis-acl.conf) is checked through `INFO memory` and needs no assumption.
#[tokio::test]
async fn redis_blocking_config_needs_assume_noeviction() {
    let Some(url) = std::env::var("PROVER_TEST_REDIS_URL").ok() else { return };
    let client = redis::Client::open(url.as_str()).unwrap();
    let mut c = client.get_multiplexed_async_connection().await.unwrap();
    let user = format!("prover-noconfig-{}", std::process::id());
    let _: () = redis::cmd("ACL")
        .arg("SETUSER")
        .arg(&user)
        .arg("on")
        .arg(">secret-pw")
        .arg("~*")
        .arg("&*")
        .arg("+@all")
        .arg("-config")
        .arg("-info")
        .query_async(&mut c)
        .await
        .unwrap();
    let limited = url.replacen("redis://", &format!("redis://{user}:secret-pw@"), 1);
    let refused = RedisQueue::connect(&limited, contract_config()).await;
    let accepted = RedisQueue::connect_with(&limited, contract_config(), true).await;
    let _: () = redis::cmd("ACL").arg("SETUSER").arg(&user).arg("+info").query_async(&mut c).await.unwrap();
    let with_info = RedisQueue::connect(&limited, contract_config()).await;
    let _: i64 = redis::cmd("ACL").arg("DELUSER").arg(&user).query_async(&mut c).await.unwrap();
    match refused {
        Err(queue::QueueError::Backend(m)) => {
            assert!(m.contains("--assume-noeviction"), "{m}");
            assert!(!m.contains("secret-pw"), "the password is not printed: {m}");
        }
        Err(e) => panic!("refused for another reason: {e}"),
        Ok(_) => panic!("a server that hides its eviction policy was accepted"),
    }
    let q = accepted.expect("accepted with assume_noeviction");
    assert!(q.eviction_unchecked().is_some_and(|w| w.contains("CONFIG")));
    let q = with_info.expect("INFO memory names the policy");
    assert!(q.eviction_unchecked().is_none());
}

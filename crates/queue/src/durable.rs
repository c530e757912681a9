//! Durable acknowledgements: a write the platform acknowledges to a user (a submitted job, a
//! cancel, an API token) is on the Redis server's disk before the acknowledgement leaves.
//!
//! Redis answers a write once it is in memory. Whether it also survives the server's death
//! depends on its persistence: with AOF and `appendfsync always` every write is fsynced before
//! its reply; with `everysec` (Redis's default when AOF is on) up to a second of acknowledged
//! writes can be lost with the machine; with AOF off, everything since the last snapshot.
//!
//! [`Durability`] is what a service asks for; [`AckGate::open`] reads the server's settings
//! once (`INFO persistence`, `CONFIG GET appendfsync`, whether `WAITAOF` exists: Redis 7.2+),
//! and either refuses ([`Durability::Aof`] on a server that cannot give it), warns
//! ([`Durability::Auto`]) or returns a gate. [`AckGate::wait`] then returns once every write
//! made (on any connection) before the call is fsynced to the AOF: one `INCR` of a marker key
//! followed by `WAITAOF 1 0 <timeout>` on the gate's own connection. The marker makes the wait
//! independent of which connection wrote: `WAITAOF` covers the writes of the connection it
//! runs on, and the marker is written after the caller's write was answered, so its offset in
//! the AOF is past the caller's. Callers arriving while a round is out wait for the next
//! round, which covers all of them (group commit): under `everysec` a burst of submits waits
//! for about one fsync, not one each.
//!
//! On a server without `WAITAOF` (Redis 7.0) and with `appendfsync always` there is nothing to
//! wait for: the reply already followed the fsync, and no gate is returned.
//!
//! Replicas ([`AckGate::open_with`], `--redis-ack-replicas N`): the same round also waits until
//! `N` replicas have the writes fsynced to their own AOF (`WAITAOF`'s second count), so an
//! acknowledged write survives the loss of the primary's machine too; a round that `N`
//! replicas do not confirm in time is an error, and the write is not acknowledged.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use redis::aio::ConnectionManager;

/// The key whose `INCR` each [`AckGate`] round writes (a counter of rounds, nothing else).
pub const MARKER_KEY: &str = "prover:durable-rounds";

/// What a service asks of the Redis that acknowledges users' writes
/// (`--redis-durability`, `PROVER_REDIS_DURABILITY`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Durability {
    /// Acknowledge once Redis answered; nothing is checked.
    None,
    /// Wait for the AOF where the server can (`WAITAOF`); where it cannot (AOF off,
    /// `appendfsync no`, or `everysec` without `WAITAOF`), start anyway and say so in a warning.
    #[default]
    Auto,
    /// Refuse to start unless every acknowledged write is on disk first: AOF on, and either
    /// `WAITAOF` (Redis 7.2+) or `appendfsync always`; `appendfsync no` is refused.
    Aof,
}

impl Durability {
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::None => "none",
            Durability::Auto => "auto",
            Durability::Aof => "aof",
        }
    }
}

impl std::str::FromStr for Durability {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "none" => Ok(Durability::None),
            "auto" => Ok(Durability::Auto),
            "aof" => Ok(Durability::Aof),
            other => Err(format!("redis durability {other:?}: expected none, auto or aof")),
        }
    }
}

/// What a Redis server says about its persistence.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Persistence {
    /// `aof_enabled:1` in `INFO persistence`.
    pub aof: bool,
    /// `CONFIG GET appendfsync`; `None` where `CONFIG` is refused (managed Redis).
    pub appendfsync: Option<String>,
    /// The server knows `WAITAOF` (`COMMAND INFO WAITAOF`).
    pub waitaof: bool,
}

/// Reads [`Persistence`] from the server behind `conn`.
pub async fn redis_persistence(conn: &mut impl redis::aio::ConnectionLike) -> redis::RedisResult<Persistence> {
    let info: String = redis::cmd("INFO").arg("persistence").query_async(conn).await?;
    let aof = info.lines().any(|l| l.trim() == "aof_enabled:1");
    let appendfsync = match redis::cmd("CONFIG").arg("GET").arg("appendfsync").query_async::<Vec<String>>(conn).await {
        Ok(v) => v.get(1).cloned(),
        Err(e) if e.is_io_error() || e.is_timeout() => return Err(e),
        Err(_) => None,
    };
    let known: Vec<redis::Value> = redis::cmd("COMMAND").arg("INFO").arg("WAITAOF").query_async(conn).await?;
    let waitaof = known.first().is_some_and(|v| !matches!(v, redis::Value::Nil));
    Ok(Persistence { aof, appendfsync, waitaof })
}

/// What [`plan`] decided: wait with `WAITAOF` or not, and a warning to log (the acknowledged
/// writes may be lost, and why).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub waitaof: bool,
    pub warning: Option<String>,
}

/// The decision for `asked` on a server with `p`; `Err` is a refusal to start (only for
/// [`Durability::Aof`]), naming what to change.
pub fn plan(asked: Durability, p: &Persistence) -> Result<Plan, String> {
    let fsync = p.appendfsync.as_deref();
    // Why acknowledged writes could be lost, if they could.
    let risk = if asked == Durability::None {
        None
    } else if !p.aof {
        Some("Redis runs with AOF off (appendonly no): acknowledged submits, cancels and tokens since its last snapshot are lost when it goes".to_string())
    } else if fsync == Some("no") {
        Some("Redis runs with appendfsync no: writes reach the disk when the OS decides, so acknowledged submits, cancels and tokens can be lost with the machine; set appendfsync always or everysec".to_string())
    } else if p.waitaof || fsync == Some("always") {
        None
    } else {
        let setting = fsync.map(|f| format!("appendfsync {f}")).unwrap_or_else(|| "an appendfsync CONFIG GET does not show".into());
        Some(format!(
            "Redis has no WAITAOF (it needs 7.2 or later) and runs {setting}: up to a second of acknowledged submits, cancels and tokens can be lost with the machine; set appendfsync always or upgrade"
        ))
    };
    match (asked, risk) {
        (Durability::Aof, Some(why)) => Err(format!("--redis-durability aof (PROVER_REDIS_DURABILITY): {why}; or start with --redis-durability auto or none to accept that")),
        (Durability::None, _) => Ok(Plan { waitaof: false, warning: None }),
        (_, risk) => Ok(Plan { waitaof: p.aof && p.waitaof, warning: risk }),
    }
}

/// Why [`AckGate::open`] gave no gate.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The server cannot give what was asked ([`plan`]'s refusal).
    #[error("{0}")]
    Refused(String),
    /// The server could not be asked.
    #[error("{0}")]
    Backend(String),
}

/// Waits, for any number of concurrent callers, until Redis has fsynced what they wrote (see
/// the module doc).
pub struct AckGate {
    conn: ConnectionManager,
    /// Wait for the server's own AOF (it has AOF on).
    local: bool,
    /// Replicas that must have fsynced the writes too.
    replicas: u32,
    /// Rounds begun (each takes the lock first, so this only grows under it).
    begun: AtomicU64,
    /// The number of the last round that succeeded.
    finished: tokio::sync::Mutex<u64>,
    wait_ms: u64,
}

impl AckGate {
    /// Reads the server's persistence at `url` and applies `asked` ([`plan`]): `Err` refuses to
    /// start; `Ok((None, warning))` means nothing to wait for; `Ok((Some(gate), warning))`
    /// waits with `WAITAOF`. Each round may take up to three quarters of `response_timeout`
    /// (the connection's limit on one answer).
    pub async fn open(url: &str, asked: Durability, response_timeout: Duration) -> Result<(Option<AckGate>, Option<String>), OpenError> {
        Self::open_with(url, asked, 0, response_timeout).await
    }

    /// [`AckGate::open`], each round also waiting until `replicas` replicas have fsynced the
    /// writes to their AOF (see the module doc). With replicas there is always a gate; refused
    /// for [`Durability::None`] and on a server without `WAITAOF`.
    pub async fn open_with(url: &str, asked: Durability, replicas: u32, response_timeout: Duration) -> Result<(Option<AckGate>, Option<String>), OpenError> {
        if asked == Durability::None {
            if replicas > 0 {
                return Err(OpenError::Refused("--redis-ack-replicas (PROVER_REDIS_ACK_REPLICAS) needs --redis-durability auto or aof".into()));
            }
            return Ok((None, None));
        }
        let backend = |e: redis::RedisError| OpenError::Backend(format!("reading Redis's persistence settings: {e}"));
        let client = redis::Client::open(url).map_err(backend)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(response_timeout))
            .set_connection_timeout(Some(response_timeout));
        let mut conn = ConnectionManager::new_with_config(client, config).await.map_err(backend)?;
        let p = redis_persistence(&mut conn).await.map_err(backend)?;
        let Plan { waitaof, warning } = plan(asked, &p).map_err(OpenError::Refused)?;
        if replicas > 0 && !p.waitaof {
            return Err(OpenError::Refused(format!(
                "--redis-ack-replicas {replicas} (PROVER_REDIS_ACK_REPLICAS): this Redis has no WAITAOF (it needs 7.2 or later) to wait for replicas with"
            )));
        }
        let gate = (waitaof || replicas > 0).then(|| AckGate {
            conn,
            local: waitaof,
            replicas,
            begun: AtomicU64::new(0),
            finished: tokio::sync::Mutex::new(0),
            wait_ms: (response_timeout.as_millis() as u64 * 3 / 4).max(1),
        });
        Ok((gate, warning))
    }

    /// Returns once every write Redis answered before this call is in its AOF on disk; `Err`
    /// (the write may or may not survive a crash: do not acknowledge it) if Redis could not
    /// confirm that in time, or has turned AOF off since.
    pub async fn wait(&self) -> Result<(), String> {
        let entered = self.begun.load(Ordering::SeqCst);
        let mut finished = self.finished.lock().await;
        // A round numbered past `entered` began after this call did, so covers its writes.
        if *finished > entered {
            return Ok(());
        }
        let round = self.begun.fetch_add(1, Ordering::SeqCst) + 1;
        let (_, (local, replicas)): (i64, (i64, i64)) = redis::pipe()
            .cmd("INCR")
            .arg(MARKER_KEY)
            .cmd("WAITAOF")
            .arg(u8::from(self.local))
            .arg(self.replicas)
            .arg(self.wait_ms)
            .query_async(&mut self.conn.clone())
            .await
            .map_err(|e| format!("Redis did not confirm the write is on disk: {e}"))?;
        if self.local && local < 1 {
            return Err(format!("Redis did not fsync the write to its AOF within {} ms", self.wait_ms));
        }
        if replicas < i64::from(self.replicas) {
            return Err(format!(
                "{replicas} of the {} replicas asked for (--redis-ack-replicas) fsynced the write within {} ms",
                self.replicas, self.wait_ms
            ));
        }
        *finished = round;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(aof: bool, fsync: Option<&str>, waitaof: bool) -> Persistence {
        Persistence { aof, appendfsync: fsync.map(String::from), waitaof }
    }

    #[test]
    fn plans() {
        use Durability::*;
        // Nothing asked: nothing checked, whatever the server.
        assert_eq!(plan(None, &p(false, Some("no"), false)), Ok(Plan { waitaof: false, warning: Option::None }));
        // WAITAOF where it helps; always-fsync needs nothing more on 7.0.
        for asked in [Auto, Aof] {
            assert_eq!(plan(asked, &p(true, Some("everysec"), true)), Ok(Plan { waitaof: true, warning: Option::None }));
            assert_eq!(plan(asked, &p(true, Option::None, true)), Ok(Plan { waitaof: true, warning: Option::None }));
            assert_eq!(plan(asked, &p(true, Some("always"), false)), Ok(Plan { waitaof: false, warning: Option::None }));
        }
        // What cannot be made durable: refused under aof, a warning under auto.
        for server in [p(false, Some("always"), true), p(true, Some("no"), true), p(true, Some("everysec"), false), p(true, Option::None, false)] {
            let refused = plan(Aof, &server).unwrap_err();
            assert!(refused.contains("--redis-durability aof"), "{refused}");
            let auto = plan(Auto, &server).unwrap();
            assert!(auto.warning.is_some(), "{server:?}");
            // AOF off: WAITAOF would be refused by the server, so it is not used.
            assert_eq!(auto.waitaof, server.aof && server.waitaof);
        }
        assert!(plan(Aof, &p(false, Some("always"), true)).unwrap_err().contains("appendonly no"));
        assert!(plan(Aof, &p(true, Some("everysec"), false)).unwrap_err().contains("WAITAOF"));
        assert_eq!("aof".parse::<Durability>(), Ok(Aof));
        assert!("always".parse::<Durability>().unwrap_err().contains("none, auto or aof"));
    }
}

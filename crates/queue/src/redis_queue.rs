//! The Redis Streams implementation of [`Queue`] (layout in the crate doc).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use redis::aio::{ConnectionManager, MultiplexedConnection};
use redis::{AsyncCommands, Script, Value};

use crate::{check_kind, check_payload, FailOutcome, Lease, Queue, QueueConfig, QueueError, QueueStats, TaskMessage};

const GROUP: &str = "workers";

fn err(e: impl std::fmt::Display) -> QueueError {
    QueueError::Backend(e.to_string())
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

fn stream(kind: &str) -> String {
    format!("{STREAM_PREFIX}{kind}")
}
fn dlq(kind: &str) -> String {
    format!("prover:dlq:{kind}")
}
fn delayed(kind: &str) -> String {
    format!("{DELAYED_PREFIX}{kind}")
}
fn leases(kind: &str) -> String {
    format!("prover:lease:{kind}")
}
const FENCE: &str = "prover:fence";
fn once_key(job: &str) -> String {
    format!("prover:once:{job}")
}
/// How long a job's enqueue-once record outlives its last addition (a safety net: the platform
/// forgets a job's record when the job ends). Its task index gets the same.
const ONCE_TTL_SECS: u64 = 7 * 24 * 3600;

/// The job's **task index**: set `prover:tasks:{job}` of its messages that are waiting, leased
/// or delayed, in every kind. A member is `{kind} {stream entry id}` for a stream entry and
/// `{kind} {message JSON}` for a retry in the delayed set (whose members are the JSON). Every
/// script that adds, moves or removes a message keeps it, in the same atomic step, so a
/// job's purge and the reconciler's "has this job anything left?" cost O(the job's messages),
/// never a walk of the queues. Members are checked against the queue before they are
/// believed, and stale ones dropped ([`LIVE`]).
const INDEX_PREFIX: &str = "prover:tasks:";
fn index_key(job: &str) -> String {
    format!("{INDEX_PREFIX}{job}")
}
/// The start of an index member: `{kind} `.
fn member_prefix(kind: &str) -> String {
    format!("{kind} ")
}
const STREAM_PREFIX: &str = "prover:q:";
const DELAYED_PREFIX: &str = "prover:delayed:";

fn stats_key(kind: &str) -> String {
    format!("prover:stats:{kind}")
}

/// Hands message ARGV[2] to consumer ARGV[3] if the group says it owns it: a fresh fencing token.
/// Returns {token, delivery count} or nil.
const ASSIGN: &str = r#"
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
if #p == 0 or p[1][2] ~= ARGV[3] then return nil end
local t = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3] .. ':' .. t)
return {t, p[1][4]}
"#;

/// The start of [`FINISH`] and [`COMPLETE`]: returns 0 unless lease ARGV[2] of stream KEYS[1]
/// (lease hash KEYS[2], group ARGV[1]) is held as ARGV[3] ('consumer:token'): the token is
/// current and the group still assigns the message to that consumer. Sets `consumer`.
const HELD: &str = r#"
local cur = redis.call('HGET', KEYS[2], ARGV[2])
if cur ~= ARGV[3] then return 0 end
local p = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[2], ARGV[2], 1)
local consumer = string.sub(ARGV[3], 1, string.find(ARGV[3], ':[^:]*$') - 1)
if #p == 0 or p[1][2] ~= consumer then return 0 end
"#;

/// After [`HELD`]: acknowledges and deletes the message and drops it from its job's task
/// index KEYS[4] (member prefix ARGV[6]), adds its throughput (ARGV[4]: busy ms) to stats hash
/// KEYS[3], and appends report number r (ARGV[5 + 2r]: its member prefix, ARGV[6 + 2r]: its
/// JSON) to stream KEYS[3 + 2r], indexed in KEYS[4 + 2r] (TTL ARGV[5]).
const COMPLETE: &str = r#"
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('SREM', KEYS[4], ARGV[6] .. ARGV[2])
redis.call('HINCRBY', KEYS[3], 'completed', 1)
redis.call('HINCRBY', KEYS[3], 'busy_ms', ARGV[4])
local r = 0
for i = 7, #ARGV, 2 do
  r = r + 1
  local id = redis.call('XADD', KEYS[3 + 2 * r], '*', 'm', ARGV[i + 1])
  redis.call('SADD', KEYS[4 + 2 * r], ARGV[i] .. id)
  redis.call('EXPIRE', KEYS[4 + 2 * r], ARGV[5])
end
return 1
"#;

/// Appends message ARGV[1] to stream KEYS[1] and indexes it in its job's task index KEYS[2]
/// (member prefix ARGV[2], TTL ARGV[3]). Returns the entry id.
const ENQUEUE: &str = r#"
local id = redis.call('XADD', KEYS[1], '*', 'm', ARGV[1])
redis.call('SADD', KEYS[2], ARGV[2] .. id)
redis.call('EXPIRE', KEYS[2], ARGV[3])
return id
"#;

/// A claim without blocking, in one round trip: the first new message of streams KEYS[1..n]
/// (in that order; lease hashes KEYS[n+1..2n], fencing counter KEYS[2n+1]; ARGV: group,
/// consumer, n) is read for the consumer and given a fencing token. Returns
/// `{kind number, id, fields, token}` or nil. A fresh read is the message's first delivery.
const CLAIM: &str = r#"
local n = tonumber(ARGV[3])
for i = 1, n do
  local r = redis.call('XREADGROUP', 'GROUP', ARGV[1], ARGV[2], 'COUNT', 1, 'STREAMS', KEYS[i], '>')
  if r and r[1] and r[1][2][1] then
    local e = r[1][2][1]
    local t = redis.call('INCR', KEYS[2 * n + 1])
    redis.call('HSET', KEYS[n + i], e[1], ARGV[2] .. ':' .. t)
    return {i, e[1], e[2], t}
  end
end
return nil
"#;

/// Enqueues tasks of one job into stream KEYS[1], each unless its member is already in set
/// KEYS[2] (the job's enqueued-once record, whose TTL ARGV[1] is renewed), indexing each in
/// the job's task index KEYS[3] (member prefix ARGV[2]). ARGV: the TTL, the member prefix, then
/// pairs (once member, JSON). Returns how many were enqueued.
const ENQUEUE_ONCE_MANY: &str = r#"
local added = 0
for i = 3, #ARGV, 2 do
  if redis.call('SADD', KEYS[2], ARGV[i]) == 1 then
    local id = redis.call('XADD', KEYS[1], '*', 'm', ARGV[i + 1])
    redis.call('SADD', KEYS[3], ARGV[2] .. id)
    added = added + 1
  end
end
redis.call('EXPIRE', KEYS[2], ARGV[1])
if added > 0 then redis.call('EXPIRE', KEYS[3], ARGV[1]) end
return added
"#;

/// Ends lease ARGV[2] held as ARGV[3] ('consumer:token'): only if the token is current and the
/// group still assigns the message to that consumer. ARGV[4]: 'ack' | 'dead' | 'delay' | 'requeue'
/// | 'extend' (keeps the lease: resets the message's idle time, without counting a delivery),
/// ARGV[5]: message JSON for dead/delay/requeue, ARGV[6]: due ms or reason, ARGV[7]: the
/// message's task-index member prefix, ARGV[8]: the index's TTL. KEYS: stream, lease hash,
/// dead-letter stream, delayed set, stats hash (a dead letter is counted there), the job's task
/// index (the message leaves it, and a retry or a requeued message enters it under its new
/// place).
const FINISH: &str = r#"
if ARGV[4] == 'extend' then
  redis.call('XCLAIM', KEYS[1], ARGV[1], consumer, 0, ARGV[2], 'JUSTID')
  return 1
end
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('SREM', KEYS[6], ARGV[7] .. ARGV[2])
if ARGV[4] == 'dead' then
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 'm', ARGV[5], 'reason', ARGV[6])
  redis.call('HINCRBY', KEYS[5], 'dead_lettered', 1)
elseif ARGV[4] == 'delay' then
  redis.call('ZADD', KEYS[4], ARGV[6], ARGV[5])
  redis.call('SADD', KEYS[6], ARGV[7] .. ARGV[5])
  redis.call('EXPIRE', KEYS[6], ARGV[8])
elseif ARGV[4] == 'requeue' then
  local id = redis.call('XADD', KEYS[1], '*', 'm', ARGV[5])
  redis.call('SADD', KEYS[6], ARGV[7] .. id)
  redis.call('EXPIRE', KEYS[6], ARGV[8])
end
return 1
"#;

/// The maintenance of every kind a consumer serves, in one round trip, by whichever consumer
/// holds the kind's maintenance lease: one reaper per kind at a time, however many consumers
/// serve it. KEYS: stream and delayed set of each kind, then the cursor hash; ARGV: now (ms),
/// group, consumer, min idle (ms), the number of kinds, the lease (ms), the kind names, the
/// task-index key prefix, the index's TTL. For
/// each kind, takes (or renews) the lease, field `lease:{kind}` of the hash (`{consumer}
/// {until ms}`), unless another consumer holds it unexpired, and skips the kind then. For each
/// kind it leads, moves the retries whose backoff is over to the stream (re-indexed under their
/// new entry id in their job's task index, named from the message's `job_id`); then, kind by kind,
/// scans the pending list with `XAUTOCLAIM` (COUNT 1, up to 16 stretches, from the cursor kept
/// in the hash) and returns the first expired entry it claims as `{kind number (1-based), id,
/// fields}`, or nil.
const MAINTAIN: &str = r#"
local n = tonumber(ARGV[5])
local now = ARGV[1]
local cursors = KEYS[2 * n + 1]
local leads = {}
for i = 1, n do
  local field = 'lease:' .. ARGV[6 + i]
  local held = redis.call('HGET', cursors, field)
  local mine = true
  if held then
    local who, till = string.match(held, '^(.*) (%d+)$')
    if who and who ~= ARGV[3] and tonumber(till) > tonumber(now) then mine = false end
  end
  if mine then
    redis.call('HSET', cursors, field, ARGV[3] .. ' ' .. (tonumber(now) + tonumber(ARGV[6])))
  end
  leads[i] = mine
end
for i = 1, n do
  if leads[i] then
    local due = redis.call('ZRANGEBYSCORE', KEYS[2 * i], '-inf', now, 'LIMIT', 0, 100)
    for _, m in ipairs(due) do
      local id = redis.call('XADD', KEYS[2 * i - 1], '*', 'm', m)
      redis.call('ZREM', KEYS[2 * i], m)
      local ok, t = pcall(cjson.decode, m)
      if ok and type(t) == 'table' and type(t['job_id']) == 'string' then
        local index = ARGV[7 + n] .. t['job_id']
        redis.call('SREM', index, ARGV[6 + i] .. ' ' .. m)
        redis.call('SADD', index, ARGV[6 + i] .. ' ' .. id)
        redis.call('EXPIRE', index, ARGV[8 + n])
      end
    end
  end
end
for i = 1, n do
  if leads[i] then
    local kind = ARGV[6 + i]
    local cursor = redis.call('HGET', cursors, kind)
    if not cursor then cursor = '0-0' end
    for _ = 1, 16 do
      local r = redis.call('XAUTOCLAIM', KEYS[2 * i - 1], ARGV[2], ARGV[3], ARGV[4], cursor, 'COUNT', 1)
      cursor = r[1]
      for _, e in ipairs(r[2]) do
        if e[2] then
          redis.call('HSET', cursors, kind, cursor)
          return {i, e[1], e[2]}
        end
      end
      if cursor == '0-0' then break end
    end
    redis.call('HSET', cursors, kind, cursor)
  end
end
return nil
"#;

/// Deletes the consumers of the kinds' groups that hold nothing and were idle at least the
/// given time: consumer names carry the process id, so every restart leaves one behind, and
/// `XPENDING`/`XINFO` grow with them. KEYS: the kinds' streams (one round trip for all of
/// them); ARGV: group, min idle (ms), the calling consumer (kept). A consumer with a pending
/// entry is never deleted (that would drop the entry from the group's pending list: a lost
/// task). Returns how many went.
const REAP_CONSUMERS: &str = r#"
local gone = 0
for _, stream in ipairs(KEYS) do
  local ok, consumers = pcall(redis.call, 'XINFO', 'CONSUMERS', stream, ARGV[1])
  if ok then
    for _, c in ipairs(consumers) do
      local f = {}
      for j = 1, #c, 2 do f[c[j]] = c[j + 1] end
      if f['pending'] == 0 and f['idle'] >= tonumber(ARGV[2]) and f['name'] ~= ARGV[3] then
        redis.call('XGROUP', 'DELCONSUMER', stream, ARGV[1], f['name'])
        gone = gone + 1
      end
    end
  end
end
return gone
"#;

/// Tasks per [`ENQUEUE_ONCE_MANY`] call: bounds how long one script holds the server.
const ENQUEUE_CHUNK: usize = 500;

/// The start of [`LIVE`] and [`PURGE`]: one page of the task index KEYS[1], `SSCAN` from
/// cursor ARGV[1], COUNT ARGV[2], MATCH ARGV[3] unless empty, as `r` (`r[1]`: the next
/// cursor, `r[2]`: the members).
const INDEX_SCAN: &str = r#"
local scan = {'SSCAN', KEYS[1], ARGV[1]}
if ARGV[3] ~= '' then
  scan[#scan + 1] = 'MATCH'
  scan[#scan + 1] = ARGV[3]
end
scan[#scan + 1] = 'COUNT'
scan[#scan + 1] = ARGV[2]
local r = redis.call(unpack(scan))
"#;

/// After [`INDEX_SCAN`]: each member of the page checked against the queue: a stream entry
/// must still be in stream ARGV[4]..kind, a retry in delayed set ARGV[5]..kind. A member whose
/// message is gone (taken out by something that does not keep the index: an older version, a
/// hand-run `XDEL`) is dropped from the index. With ARGV[6] = '1' the page stops at the first
/// live member. Returns `{next cursor, live members seen}`.
const LIVE: &str = r#"
local live = 0
for _, member in ipairs(r[2]) do
  local kind, ref = string.match(member, '^(%S+) (.+)$')
  local alive = false
  if kind then
    if string.sub(ref, 1, 1) == '{' then
      alive = redis.call('ZSCORE', ARGV[5] .. kind, ref) ~= false
    else
      local ok, e = pcall(redis.call, 'XRANGE', ARGV[4] .. kind, ref, ref)
      alive = ok and #e > 0
    end
  end
  if alive then
    live = live + 1
    if ARGV[6] == '1' then return {r[1], live} end
  else
    redis.call('SREM', KEYS[1], member)
  end
end
return {r[1], live}
"#;

/// After [`INDEX_SCAN`]: the page purged. A retry leaves delayed set ARGV[6]..kind; a stream
/// entry of stream ARGV[5]..kind that is not delivered (not in group ARGV[4]'s pending list)
/// is deleted; either leaves the index. A delivered entry stays (its holder ends it; the
/// executor ignores what it reports for an ended job), and so does its member. Returns `{next
/// cursor, messages removed}`.
const PURGE: &str = r#"
local removed = 0
for _, member in ipairs(r[2]) do
  local kind, ref = string.match(member, '^(%S+) (.+)$')
  if not kind then
    redis.call('SREM', KEYS[1], member)
  elseif string.sub(ref, 1, 1) == '{' then
    removed = removed + redis.call('ZREM', ARGV[6] .. kind, ref)
    redis.call('SREM', KEYS[1], member)
  else
    local s = ARGV[5] .. kind
    local ok, p = pcall(redis.call, 'XPENDING', s, ARGV[4], ref, ref, 1)
    if not (ok and #p > 0) then
      removed = removed + redis.call('XDEL', s, ref)
      redis.call('SREM', KEYS[1], member)
    end
  end
end
return {r[1], removed}
"#;

/// Index members read per [`LIVE`] or [`PURGE`] call: bounds how long one script holds the
/// server.
const INDEX_PAGE: usize = 500;

/// Index members read per [`LIVE`] call that stops at the first live one (the reconciler's
/// question, asked of every idle job each round): the first member checked is almost always
/// live, and a large index is not copied 500 members at a time to find it.
const INDEX_FIRST_PAGE: usize = 16;

/// Messages read per call when a whole queue is walked ([`RedisQueue::each_message`]).
const SCAN_PAGE: usize = 1000;

/// Hash of `XAUTOCLAIM` cursors by kind, shared by every consumer.
const CURSORS: &str = "prover:autoclaim";

/// Moves an expired message that is out of attempts to the dead-letter stream, and counts it.
/// KEYS: stream, lease hash, dead-letter stream, stats hash, the job's task index (ARGV[5]: the
/// member prefix).
const BURY: &str = r#"
redis.call('XACK', KEYS[1], ARGV[1], ARGV[2])
redis.call('XDEL', KEYS[1], ARGV[2])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('SREM', KEYS[5], ARGV[5] .. ARGV[2])
redis.call('XADD', KEYS[3], 'MAXLEN', '~', 10000, '*', 'm', ARGV[3], 'reason', ARGV[4])
redis.call('HINCRBY', KEYS[4], 'dead_lettered', 1)
return 1
"#;

/// The Redis Streams [`Queue`].
pub struct RedisQueue {
    config: QueueConfig,
    conn: ConnectionManager,
    /// Reads whose replies grow with the data (pages of whole streams for `job_tasks`,
    /// `outstanding` and `purge_job`, the dead letters) go on a connection of their own, so a
    /// large reply never holds up the heartbeats, claims and completions queued behind it on
    /// `conn`.
    bulk: ConnectionManager,
    /// How long any command may take to answer (blocking reads: their block, plus this).
    response_timeout: Duration,
    /// Blocking reads (`XREADGROUP BLOCK`) get connections of their own, one per read in
    /// flight, so they never stall the multiplexed one nor each other (several role loops of
    /// one process block at once); idle ones are kept here for the next read.
    blocking: std::sync::Mutex<Vec<MultiplexedConnection>>,
    client: redis::Client,
    assign: Script,
    finish: Script,
    maintain: Script,
    reap_consumers: Script,
    bury: Script,
    enqueue_once_many: Script,
    enqueue: Script,
    complete: Script,
    claim: Script,
    live: Script,
    purge: Script,
    /// Sets of kinds (joined with ',') whose last claim found work: their next claim first
    /// tries [`CLAIM`] (one round trip) before the blocking read. An idle set goes straight to
    /// the blocking read, so idle loops add no commands.
    hot: std::sync::Mutex<std::collections::HashSet<String>>,
    /// Kinds whose consumer group this process has created (or found).
    groups: std::sync::Mutex<std::collections::HashSet<String>>,
    /// When each kind's retries were last promoted and expired leases last looked for.
    maintained: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
    /// When each set of kinds' idle consumers were last looked for ([`REAP_CONSUMERS`]).
    reaped: std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>,
    unchecked: Option<String>,
}

impl RedisQueue {
    /// Connects, and refuses a server whose `maxmemory-policy` is not `noeviction` (an evicted
    /// stream entry is a lost task), or that does not say (see [`RedisQueue::connect_with`]).
    pub async fn connect(url: &str, config: QueueConfig) -> Result<Self, QueueError> {
        Self::connect_with(url, config, false).await
    }

    /// [`RedisQueue::connect`]; with `assume_noeviction`, a server that refuses `CONFIG GET`
    /// (managed Redis often blocks `CONFIG`) is accepted on the operator's word, and
    /// [`RedisQueue::eviction_unchecked`] says why. A server that answers with another policy
    /// is refused either way.
    pub async fn connect_with(url: &str, config: QueueConfig, assume_noeviction: bool) -> Result<Self, QueueError> {
        Self::connect_opts(url, config, assume_noeviction, Duration::from_secs(crate::DEFAULT_REDIS_TIMEOUT_SECS)).await
    }

    /// [`RedisQueue::connect_with`], with every command's answer (and each connection attempt)
    /// waited for up to `response_timeout` (redis-rs's own default is 500 ms).
    pub async fn connect_opts(url: &str, config: QueueConfig, assume_noeviction: bool, response_timeout: Duration) -> Result<Self, QueueError> {
        if response_timeout.is_zero() {
            return Err(QueueError::Backend("the Redis response timeout must be more than zero".into()));
        }
        let client = redis::Client::open(url).map_err(err)?;
        let manager = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(response_timeout))
            .set_connection_timeout(Some(response_timeout));
        let mut conn = ConnectionManager::new_with_config(client.clone(), manager.clone()).await.map_err(err)?;
        let (policy, unchecked) = match crate::redis_eviction_policy(&mut conn).await {
            Ok(p) => (p, None),
            Err(e) if e.is_io_error() || e.is_timeout() => return Err(err(e)),
            Err(e) if assume_noeviction => (Some("noeviction".into()), Some(format!("INFO and CONFIG GET refused ({e}); noeviction assumed"))),
            Err(e) => {
                return Err(QueueError::Backend(format!(
                    "Redis at {} refused INFO memory and CONFIG GET maxmemory-policy ({e}), so the queue cannot check \
                     that it never evicts keys (an evicted entry is a lost task). Make sure its policy is noeviction, \
                     then start with --assume-noeviction (PROVER_ASSUME_NOEVICTION=1)",
                    crate::redact_url(url)
                )))
            }
        };
        if policy.as_deref() != Some("noeviction") {
            return Err(QueueError::Backend(format!(
                "Redis at {} has maxmemory-policy {:?}; the queue needs noeviction (evicted entries are lost tasks)",
                crate::redact_url(url),
                policy
            )));
        }
        let bulk = ConnectionManager::new_with_config(client.clone(), manager).await.map_err(err)?;
        Ok(Self {
            config,
            conn,
            bulk,
            response_timeout,
            blocking: Default::default(),
            client,
            assign: Script::new(ASSIGN),
            finish: Script::new(&format!("{HELD}{FINISH}")),
            complete: Script::new(&format!("{HELD}{COMPLETE}")),
            claim: Script::new(CLAIM),
            enqueue_once_many: Script::new(ENQUEUE_ONCE_MANY),
            enqueue: Script::new(ENQUEUE),
            live: Script::new(&format!("{INDEX_SCAN}{LIVE}")),
            purge: Script::new(&format!("{INDEX_SCAN}{PURGE}")),
            hot: Default::default(),
            maintain: Script::new(MAINTAIN),
            reap_consumers: Script::new(REAP_CONSUMERS),
            bury: Script::new(BURY),
            groups: Default::default(),
            maintained: Default::default(),
            reaped: Default::default(),
            unchecked,
        })
    }

    /// Why the eviction policy was not checked (`connect_with(…, true)` and a server that
    /// refused `CONFIG GET`), for the caller to log.
    pub fn eviction_unchecked(&self) -> Option<&str> {
        self.unchecked.as_deref()
    }

    /// Calls `f` for every message of `kind` that is waiting, leased (stream entries: deleted
    /// when acknowledged) or delayed, read in pages of [`SCAN_PAGE`] on the bulk connection, so
    /// no reply grows with the queue. `XRANGE` from an exclusive start and `ZSCAN` return every
    /// message present for the whole walk; one that moves meanwhile (a retry promoted to the
    /// stream) may be seen twice or not at all. Unreadable messages are skipped.
    async fn each_message(&self, kind: &str, mut f: impl FnMut(TaskMessage)) -> Result<(), QueueError> {
        let mut bulk = self.bulk.clone();
        let mut from = "-".to_string();
        loop {
            let page: Value =
                redis::cmd("XRANGE").arg(stream(kind)).arg(&from).arg("+").arg("COUNT").arg(SCAN_PAGE).query_async(&mut bulk).await.map_err(err)?;
            let Value::Array(entries) = page else { break };
            let full = entries.len() == SCAN_PAGE;
            let mut last = None;
            for e in entries {
                let Value::Array(pair) = e else { continue };
                let (Some(id), Some(fields)) = (pair.first().and_then(value_string), pair.get(1)) else { continue };
                if let Some(task) = field_m(fields).and_then(|m| serde_json::from_str::<TaskMessage>(&m).ok()) {
                    f(task);
                }
                last = Some(id);
            }
            match last {
                Some(id) if full => from = format!("({id}"),
                _ => break,
            }
        }
        let mut cursor = 0u64;
        loop {
            let (next, members): (u64, Vec<String>) =
                redis::cmd("ZSCAN").arg(delayed(kind)).arg(cursor).arg("COUNT").arg(SCAN_PAGE).query_async(&mut bulk).await.map_err(err)?;
            // ZSCAN answers member, score, member, score, ...
            for m in members.iter().step_by(2) {
                if let Ok(task) = serde_json::from_str::<TaskMessage>(m) {
                    f(task);
                }
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        Ok(())
    }

    /// Live members of the job's task index matching `pattern` (all when empty), a page of
    /// [`INDEX_PAGE`] per [`LIVE`] call; with `first`, pages of [`INDEX_FIRST_PAGE`], stopping
    /// at the first one found.
    async fn live_in_index(&self, job_id: &str, pattern: &str, first: bool) -> Result<u64, QueueError> {
        let count = if first { INDEX_FIRST_PAGE } else { INDEX_PAGE };
        self.index_pages(&self.live, job_id, count, pattern, &[STREAM_PREFIX, DELAYED_PREFIX, if first { "1" } else { "0" }], first).await
    }

    /// Purges the messages of the job's task index that match `pattern` (all when empty), a
    /// page of [`INDEX_PAGE`] per [`PURGE`] call. `SSCAN` returns every member present for the
    /// whole walk, so every waiting or delayed message indexed before the call is seen.
    async fn purge_index(&self, job_id: &str, pattern: &str) -> Result<u64, QueueError> {
        self.index_pages(&self.purge, job_id, INDEX_PAGE, pattern, &[GROUP, STREAM_PREFIX, DELAYED_PREFIX], false).await
    }

    /// Runs `script` (one of the [`INDEX_SCAN`] scripts: arguments cursor, `count`, `pattern`,
    /// then `tail`) page after page over the job's task index, summing what each page returns;
    /// with `stop`, returns at the first page that returns more than zero.
    async fn index_pages(&self, script: &Script, job_id: &str, count: usize, pattern: &str, tail: &[&str], stop: bool) -> Result<u64, QueueError> {
        let mut c = self.conn.clone();
        let (mut cursor, mut total) = ("0".to_string(), 0u64);
        loop {
            let mut inv = script.key(index_key(job_id));
            inv.arg(&cursor).arg(count).arg(pattern);
            for a in tail {
                inv.arg(*a);
            }
            let (next, n): (String, u64) = inv.invoke_async(&mut c).await.map_err(err)?;
            total += n;
            if next == "0" || (stop && total > 0) {
                return Ok(total);
            }
            cursor = next;
        }
    }

    /// Whether it is time to promote due retries and look for expired leases of the kinds
    /// `key` names: at most every quarter visibility timeout, capped at [`MAINTENANCE_EVERY`],
    /// per process and set of kinds. One [`MAINTAIN`] call serves all of them, so an idle loop
    /// costs about two maintenance calls and two blocking reads a second, however many kinds
    /// it serves (a retry waits up to that much longer than its backoff).
    fn maintenance_due(&self, key: &str) -> bool {
        due_every(&self.maintained, key, self.maintenance_every())
    }

    fn maintenance_every(&self) -> Duration {
        (self.config.visibility_timeout / 4).min(MAINTENANCE_EVERY)
    }

    /// How long a kind's maintenance lease lasts ([`MAINTAIN`]): three of its holder's rounds,
    /// so a holder that stops claiming (busy with a long task, or gone) hands it on within
    /// that.
    fn maintenance_lease(&self) -> Duration {
        self.maintenance_every() * 3
    }

    async fn ensure_group(&self, kind: &str) -> Result<(), QueueError> {
        if self.groups.lock().expect("mutex").contains(kind) {
            return Ok(());
        }
        let mut c = self.conn.clone();
        let r: redis::RedisResult<()> =
            redis::cmd("XGROUP").arg("CREATE").arg(stream(kind)).arg(GROUP).arg("0").arg("MKSTREAM").query_async(&mut c).await;
        match r {
            Ok(()) => {}
            Err(e) if e.to_string().contains("BUSYGROUP") => {}
            Err(e) => return Err(err(e)),
        }
        self.groups.lock().expect("mutex").insert(kind.to_string());
        Ok(())
    }

    /// A read failed because the stream or group vanished (a flushed server): forget the group
    /// so the next call creates it again.
    fn on_read_error(&self, kind: &str, e: redis::RedisError) -> QueueError {
        if e.to_string().contains("NOGROUP") {
            self.groups.lock().expect("mutex").remove(kind);
        }
        err(e)
    }

    /// Gives message `id` a fencing token for `consumer`, or dead-letters it when the delivery
    /// exceeds `max_attempts`. `None` if the message is not (or no longer) this consumer's.
    async fn lease(&self, kind: &str, consumer: &str, id: String, fields: &Value) -> Result<Option<Lease>, QueueError> {
        let json = field_m(fields).ok_or_else(|| err(format!("message {id} has no 'm' field")))?;
        let task: TaskMessage = serde_json::from_str(&json).map_err(err)?;
        let mut c = self.conn.clone();
        let r: Option<(u64, u64)> = self
            .assign
            .key(stream(kind))
            .key(leases(kind))
            .key(FENCE)
            .arg(GROUP)
            .arg(&id)
            .arg(consumer)
            .invoke_async(&mut c)
            .await
            .map_err(err)?;
        let Some((token, deliveries)) = r else { return Ok(None) };
        self.checked(kind, consumer, id, json, task, token, deliveries as u32).await
    }

    /// The lease of a delivery, or `None` after dead-lettering it when the delivery exceeds
    /// `max_attempts`.
    #[allow(clippy::too_many_arguments)]
    async fn checked(&self, kind: &str, consumer: &str, id: String, json: String, task: TaskMessage, token: u64, deliveries: u32) -> Result<Option<Lease>, QueueError> {
        let attempt = task.failures + deliveries;
        if attempt > self.config.max_attempts {
            let mut c = self.conn.clone();
            let _: i64 = self
                .bury
                .key(stream(kind))
                .key(leases(kind))
                .key(dlq(kind))
                .key(stats_key(kind))
                .key(index_key(&task.job_id))
                .arg(GROUP)
                .arg(&id)
                .arg(&json)
                .arg("lease expired on the last attempt")
                .arg(member_prefix(kind))
                .invoke_async(&mut c)
                .await
                .map_err(err)?;
            return Ok(None);
        }
        Ok(Some(Lease { kind: kind.into(), message_id: id, consumer: consumer.into(), token, attempt, task }))
    }

    /// When maintenance of `kinds` is due (see [`RedisQueue::maintenance_due`]): one
    /// [`MAINTAIN`] call promotes every kind's due retries and looks for an expired lease, which
    /// it leases to `consumer`.
    async fn reclaim(&self, key: &str, kinds: &[&str], consumer: &str) -> Result<Option<Lease>, QueueError> {
        self.reap_idle_consumers(key, kinds, consumer).await?;
        while self.maintenance_due(key) {
            let mut c = self.conn.clone();
            let mut inv = self.maintain.prepare_invoke();
            for kind in kinds {
                inv.key(stream(kind)).key(delayed(kind));
            }
            inv.key(CURSORS)
                .arg(now_ms())
                .arg(GROUP)
                .arg(consumer)
                .arg(self.config.visibility_timeout.as_millis() as u64)
                .arg(kinds.len())
                .arg(self.maintenance_lease().as_millis() as u64);
            for kind in kinds {
                inv.arg(*kind);
            }
            inv.arg(INDEX_PREFIX).arg(ONCE_TTL_SECS);
            let found: Value = inv.invoke_async(&mut c).await.map_err(|e| {
                for kind in kinds {
                    self.on_read_error(kind, e.clone());
                }
                err(e)
            })?;
            let Value::Array(parts) = found else { return Ok(None) };
            let (Some(i), Some(id)) = (
                parts.first().and_then(|v| redis::from_redis_value::<usize>(v.clone()).ok()),
                parts.get(1).and_then(value_string),
            ) else {
                return Ok(None);
            };
            let (Some(kind), Some(fields)) = (i.checked_sub(1).and_then(|i| kinds.get(i)), parts.get(2)) else {
                return Err(err(format!("maintenance returned kind number {i} of {}", kinds.len())));
            };
            // There may be more expired leases: look again on the next claim.
            self.maintained.lock().expect("mutex").remove(key);
            if let Some(l) = self.lease(kind, consumer, id, fields).await? {
                return Ok(Some(l));
            }
        }
        Ok(None)
    }

    /// Every half of the idle limit (per process and set of kinds): deletes the consumers of
    /// `kinds`' groups idle [`QueueConfig::idle_consumer_after`] and holding nothing (other
    /// processes' leftovers), one [`REAP_CONSUMERS`] call for all of them. Returns how many went.
    async fn reap_idle_consumers(&self, key: &str, kinds: &[&str], consumer: &str) -> Result<u64, QueueError> {
        let idle = self.config.idle_consumer_after;
        if !due_every(&self.reaped, key, idle / 2) {
            return Ok(0);
        }
        let mut inv = self.reap_consumers.prepare_invoke();
        for kind in kinds {
            inv.key(stream(kind));
        }
        let gone: u64 = inv.arg(GROUP).arg(idle.as_millis().max(1) as u64).arg(consumer).invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        Ok(gone)
    }

    /// One `XREADGROUP` over the streams of `kinds` (`COUNT 1` each), blocking up to `block`
    /// ms. Leases the first entry in `kinds` order; an entry of another stream read in the same
    /// call (a rare race: the streams were empty a moment ago) is leased and released at once,
    /// so it goes back to the queue without spending an attempt.
    async fn read_new(&self, kinds: &[&str], consumer: &str, block_ms: u64) -> Result<Read, QueueError> {
        let mut cmd = redis::cmd("XREADGROUP");
        cmd.arg("GROUP").arg(GROUP).arg(consumer).arg("COUNT").arg(1).arg("BLOCK").arg(block_ms);
        cmd.arg("STREAMS");
        for kind in kinds {
            cmd.arg(stream(kind));
        }
        for _ in kinds {
            cmd.arg(">");
        }
        let on_err = |e: redis::RedisError| {
            for kind in kinds {
                self.on_read_error(kind, e.clone());
            }
            err(e)
        };
        // Non-blocking claims go through [`CLAIM`] on the shared connection; this read blocks.
        let pooled = self.blocking.lock().expect("mutex").pop();
        let mut b = match pooled {
            Some(b) => b,
            None => {
                // The block itself bounds how long the server holds the read; beyond it, the
                // answer is waited for as long as any other. The handshake (SELECT, CLIENT
                // SETINFO) waits as long as any answer too: with redis-rs's defaults (1 s to
                // connect, 500 ms per answer) no connection could be made while Redis answered
                // 600 ms late, and an idle worker never claimed again (tests/redis_latency.rs).
                let config = redis::AsyncConnectionConfig::new()
                    .set_connection_timeout(Some(self.response_timeout))
                    .set_response_timeout(Some(MAINTENANCE_EVERY + self.response_timeout));
                self.client.get_multiplexed_async_connection_with_config(&config).await.map_err(err)?
            }
        };
        let read: Value = cmd.query_async(&mut b).await.map_err(on_err)?;
        // Kept only after a complete answer: a read cut short leaves its connection to be
        // dropped.
        self.blocking.lock().expect("mutex").push(b);
        let mut got: Vec<(usize, String, Value)> = Vec::new();
        if let Value::Array(streams) = &read {
            for s in streams {
                let Value::Array(pair) = s else { continue };
                let Some(name) = pair.first().and_then(value_string) else { continue };
                let Some(i) = kinds.iter().position(|k| stream(k) == name) else { continue };
                if let Some((id, fields)) = pair.get(1).and_then(first_entry) {
                    got.push((i, id, fields));
                }
            }
        }
        if got.is_empty() {
            return Ok(Read::Nothing);
        }
        got.sort_by_key(|g| g.0);
        let mut chosen = None;
        for (i, id, fields) in got {
            let Some(l) = self.lease(kinds[i], consumer, id, &fields).await? else { continue };
            if chosen.is_none() {
                chosen = Some(l);
            } else {
                match Queue::release(self, &l).await {
                    Ok(()) | Err(QueueError::StaleLease) => {}
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(chosen.map_or(Read::Lost, Read::Leased))
    }

    /// One [`CLAIM`] call: the first new message of `kinds`, leased, without blocking.
    async fn claim_now(&self, kinds: &[&str], consumer: &str) -> Result<Read, QueueError> {
        let mut inv = self.claim.prepare_invoke();
        for kind in kinds {
            inv.key(stream(kind));
        }
        for kind in kinds {
            inv.key(leases(kind));
        }
        inv.key(FENCE).arg(GROUP).arg(consumer).arg(kinds.len());
        let found: Value = inv.invoke_async(&mut self.conn.clone()).await.map_err(|e| {
            for kind in kinds {
                self.on_read_error(kind, e.clone());
            }
            err(e)
        })?;
        let Value::Array(parts) = found else { return Ok(Read::Nothing) };
        let i = parts.first().and_then(|v| redis::from_redis_value::<usize>(v.clone()).ok());
        let id = parts.get(1).and_then(value_string);
        let token = parts.get(3).and_then(|v| redis::from_redis_value::<u64>(v.clone()).ok());
        let (Some(i), Some(id), Some(fields), Some(token)) = (i, id, parts.get(2), token) else {
            return Err(err("claim script returned a malformed entry"));
        };
        let Some(kind) = i.checked_sub(1).and_then(|i| kinds.get(i)) else {
            return Err(err(format!("claim script returned kind number {i} of {}", kinds.len())));
        };
        let json = field_m(fields).ok_or_else(|| err(format!("message {id} has no 'm' field")))?;
        let task: TaskMessage = serde_json::from_str(&json).map_err(err)?;
        Ok(match self.checked(kind, consumer, id, json, task, token, 1).await? {
            Some(l) => Read::Leased(l),
            None => Read::Lost,
        })
    }

    fn set_hot(&self, key: &str, hot: bool) {
        let mut h = self.hot.lock().expect("mutex");
        if hot {
            h.insert(key.to_string());
        } else {
            h.remove(key);
        }
    }

    async fn finish(&self, lease: &Lease, action: &str, message: &str, extra: &str) -> Result<(), QueueError> {
        let mut c = self.conn.clone();
        let ok: i64 = self
            .finish
            .key(stream(&lease.kind))
            .key(leases(&lease.kind))
            .key(dlq(&lease.kind))
            .key(delayed(&lease.kind))
            .key(stats_key(&lease.kind))
            .key(index_key(&lease.task.job_id))
            .arg(GROUP)
            .arg(&lease.message_id)
            .arg(format!("{}:{}", lease.consumer, lease.token))
            .arg(action)
            .arg(message)
            .arg(extra)
            .arg(member_prefix(&lease.kind))
            .arg(ONCE_TTL_SECS)
            .invoke_async(&mut c)
            .await
            .map_err(err)?;
        if ok == 1 {
            Ok(())
        } else {
            Err(QueueError::StaleLease)
        }
    }
}

/// `<ms>-<seq>`.
fn is_stream_id(id: &str) -> bool {
    id.split_once('-').is_some_and(|(a, b)| !a.is_empty() && !b.is_empty() && a.bytes().chain(b.bytes()).all(|c| c.is_ascii_digit()))
}

/// The dead letters of an `XRANGE` reply on a dead-letter stream. A malformed entry (no task,
/// or one that does not parse) is kept with what is known, so one bad entry cannot stop a
/// reader: its task is empty and its reason says why.
fn dead_entries(reply: Value) -> Result<Vec<crate::DeadLetter>, QueueError> {
    let mut out = Vec::new();
    let Value::Array(entries) = reply else { return Ok(out) };
    for e in entries {
        let Value::Array(pair) = e else { continue };
        let (Some(idv), Some(fields), true) = (pair.first(), pair.get(1), pair.len() == 2) else { continue };
        let id: String = redis::from_redis_value(idv.clone()).map_err(err)?;
        let reason = match fields {
            Value::Array(items) => items
                .chunks(2)
                .find(|kv| redis::from_redis_value::<String>(kv[0].clone()).ok().as_deref() == Some("reason"))
                .and_then(|kv| redis::from_redis_value::<String>(kv[1].clone()).ok())
                .unwrap_or_default(),
            _ => String::new(),
        };
        let parsed = field_m(fields).ok_or_else(|| "no 'm' field".to_string()).and_then(|m| serde_json::from_str::<TaskMessage>(&m).map_err(|e| e.to_string()));
        match parsed {
            Ok(task) => out.push(crate::DeadLetter { id, task, reason }),
            Err(why) => out.push(crate::DeadLetter { id, task: TaskMessage::new("", "", ""), reason: format!("malformed dead letter ({why}); {reason}") }),
        }
    }
    Ok(out)
}

/// Whether `every` has passed since `key` was last found due in `last` (always the first time);
/// records the time when it is.
fn due_every(last: &std::sync::Mutex<std::collections::HashMap<String, std::time::Instant>>, key: &str, every: Duration) -> bool {
    let mut m = last.lock().expect("mutex");
    let now = std::time::Instant::now();
    match m.get(key) {
        Some(t) if now.duration_since(*t) < every => false,
        _ => {
            m.insert(key.to_string(), now);
            true
        }
    }
}

/// The `m` field of a stream entry's field list.
fn field_m(fields: &Value) -> Option<String> {
    let Value::Array(items) = fields else { return None };
    let mut it = items.iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        let key: String = redis::from_redis_value(k.clone()).ok()?;
        if key == "m" {
            return redis::from_redis_value(v.clone()).ok();
        }
    }
    None
}

fn value_string(v: &Value) -> Option<String> {
    match v {
        Value::BulkString(b) => String::from_utf8(b.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

/// What one read of new messages gave.
enum Read {
    Leased(Lease),
    /// Entries were read but none could be leased (dead-lettered or taken meanwhile).
    Lost,
    Nothing,
}

/// The longest an idle claim goes without maintenance (due retries, expired leases).
const MAINTENANCE_EVERY: Duration = Duration::from_millis(500);

/// The name of a set of kinds in the per-set bookkeeping (maintenance and reaping due, busy):
/// the same whatever order a caller lists them in. Workers rotate their kinds on every claim,
/// and a key in that order made every rotation a set of its own, each reaped and maintained as
/// if never before (13 kinds: 13 times the intended rounds).
fn kinds_key(kinds: &[&str]) -> String {
    let mut sorted = kinds.to_vec();
    sorted.sort_unstable();
    sorted.join(",")
}

/// The first `(id, fields)` of an `XAUTOCLAIM` / `XREADGROUP` entry list.
fn first_entry(entries: &Value) -> Option<(String, Value)> {
    let Value::Array(list) = entries else { return None };
    for e in list {
        if let Value::Array(pair) = e {
            if pair.len() == 2 {
                let id: String = redis::from_redis_value(pair[0].clone()).ok()?;
                if matches!(pair[1], Value::Nil) {
                    continue; // deleted entry
                }
                return Some((id, pair[1].clone()));
            }
        }
    }
    None
}

#[async_trait]
impl Queue for RedisQueue {
    async fn enqueue(&self, kind: &str, task: TaskMessage) -> Result<(), QueueError> {
        check_kind(kind)?;
        check_payload(&task)?;
        self.ensure_group(kind).await?;
        let json = serde_json::to_string(&task).map_err(err)?;
        let mut c = self.conn.clone();
        let _: String = self
            .enqueue
            .key(stream(kind))
            .key(index_key(&task.job_id))
            .arg(json)
            .arg(member_prefix(kind))
            .arg(ONCE_TTL_SECS)
            .invoke_async(&mut c)
            .await
            .map_err(err)?;
        Ok(())
    }

    async fn claim(&self, kind: &str, consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        self.claim_any(&[kind], consumer, wait).await
    }

    /// Expired leases first (per kind, when its maintenance is due), then one `XREADGROUP` over
    /// every kind's stream, blocking while idle: an enqueue wakes the reader at once. The block
    /// is cut at [`MAINTENANCE_EVERY`] so that due retries and expired leases are still looked
    /// for.
    async fn claim_any(&self, kinds: &[&str], consumer: &str, wait: Duration) -> Result<Option<Lease>, QueueError> {
        for kind in kinds {
            check_kind(kind)?;
            self.ensure_group(kind).await?;
        }
        let deadline = tokio::time::Instant::now() + wait;
        let key = kinds_key(kinds);
        // Whether this call has looked for a new message yet: it returns empty-handed only
        // after one look, however long the maintenance before it took. When Redis answered
        // slower than `wait`, the maintenance alone used up the wait and an idle worker never
        // read its streams again (tests/redis_latency.rs, 600 ms per answer).
        let mut looked = false;
        loop {
            if let Some(l) = self.reclaim(&key, kinds, consumer).await? {
                return Ok(Some(l));
            }
            // Busy (or asked not to wait): one round trip claims the next message.
            if wait.is_zero() || self.hot.lock().expect("mutex").contains(&key) {
                match self.claim_now(kinds, consumer).await? {
                    Read::Leased(l) => return Ok(Some(l)),
                    Read::Lost => continue,
                    Read::Nothing if wait.is_zero() => return Ok(None),
                    Read::Nothing => self.set_hot(&key, false),
                }
                looked = true;
            }
            // Waiting (a zero wait has returned above): block until a message arrives, or
            // until maintenance is due again.
            let now = tokio::time::Instant::now();
            if now >= deadline && looked {
                return Ok(None);
            }
            let block = deadline.saturating_duration_since(now).min(MAINTENANCE_EVERY).as_millis().max(1) as u64;
            match self.read_new(kinds, consumer, block).await? {
                Read::Leased(l) => {
                    self.set_hot(&key, true);
                    return Ok(Some(l));
                }
                Read::Lost => continue,
                Read::Nothing => looked = true,
            }
            if tokio::time::Instant::now() >= deadline {
                return Ok(None);
            }
        }
    }

    async fn complete(&self, lease: &Lease) -> Result<(), QueueError> {
        self.finish(lease, "ack", "", "").await
    }

    async fn complete_with(&self, lease: &Lease, then: &[(&str, TaskMessage)], busy: Duration) -> Result<(), QueueError> {
        let mut reports = Vec::with_capacity(then.len());
        for (kind, m) in then {
            check_kind(kind)?;
            check_payload(m)?;
            self.ensure_group(kind).await?;
            reports.push((stream(kind), index_key(&m.job_id), member_prefix(kind), serde_json::to_string(m).map_err(err)?));
        }
        let mut inv = self.complete.prepare_invoke();
        inv.key(stream(&lease.kind)).key(leases(&lease.kind)).key(stats_key(&lease.kind)).key(index_key(&lease.task.job_id));
        for (s, index, _, _) in &reports {
            inv.key(s).key(index);
        }
        inv.arg(GROUP)
            .arg(&lease.message_id)
            .arg(format!("{}:{}", lease.consumer, lease.token))
            .arg(busy.as_millis() as u64)
            .arg(ONCE_TTL_SECS)
            .arg(member_prefix(&lease.kind));
        for (_, _, prefix, json) in &reports {
            inv.arg(prefix).arg(json);
        }
        let ok: i64 = inv.invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        if ok == 1 {
            Ok(())
        } else {
            Err(QueueError::StaleLease)
        }
    }

    fn visibility_timeout(&self) -> Duration {
        self.config.visibility_timeout
    }

    async fn extend(&self, lease: &Lease) -> Result<(), QueueError> {
        self.finish(lease, "extend", "", "").await
    }

    async fn fail(&self, lease: &Lease, reason: &str) -> Result<FailOutcome, QueueError> {
        if lease.attempt >= self.config.max_attempts {
            let json = serde_json::to_string(&lease.task).map_err(err)?;
            self.finish(lease, "dead", &json, reason).await?;
            return Ok(FailOutcome::DeadLettered);
        }
        let mut task = lease.task.clone();
        task.failures = lease.attempt;
        let delay = self.config.backoff(lease.attempt);
        let json = serde_json::to_string(&task).map_err(err)?;
        self.finish(lease, "delay", &json, &(now_ms() + delay.as_millis() as u64).to_string()).await?;
        Ok(FailOutcome::Retried { delay })
    }

    async fn release(&self, lease: &Lease) -> Result<(), QueueError> {
        let mut task = lease.task.clone();
        task.failures = lease.attempt - 1;
        let json = serde_json::to_string(&task).map_err(err)?;
        self.finish(lease, "requeue", &json, "").await
    }

    async fn stats(&self, kind: &str) -> Result<QueueStats, QueueError> {
        check_kind(kind)?;
        // Reads only (the operator's Redis user may not write): a stream or group that no
        // producer or consumer made yet has nothing pending or running.
        let mut c = self.conn.clone();
        let len: u64 = c.xlen(stream(kind)).await.map_err(err)?;
        let summary: Value = match redis::cmd("XPENDING").arg(stream(kind)).arg(GROUP).query_async(&mut c).await {
            Err(e) if e.code() == Some("NOGROUP") => Value::Nil,
            other => other.map_err(err)?,
        };
        let running: u64 = match &summary {
            Value::Array(v) if !v.is_empty() => redis::from_redis_value(v[0].clone()).unwrap_or(0),
            _ => 0,
        };
        let delayed_n: u64 = c.zcard(delayed(kind)).await.map_err(err)?;
        let dead: u64 = c.xlen(dlq(kind)).await.map_err(err)?;
        let first: Value = redis::cmd("XRANGE").arg(stream(kind)).arg("-").arg("+").arg("COUNT").arg(1).query_async(&mut c).await.map_err(err)?;
        let oldest_age = first_entry(&first).and_then(|(id, _)| {
            let ms: u64 = id.split('-').next()?.parse().ok()?;
            Some(Duration::from_millis(now_ms().saturating_sub(ms)))
        });
        let (completed, busy_ms, dead_lettered): (Option<u64>, Option<u64>, Option<u64>) = redis::cmd("HMGET")
            .arg(stats_key(kind))
            .arg("completed")
            .arg("busy_ms")
            .arg("dead_lettered")
            .query_async(&mut c)
            .await
            .map_err(err)?;
        Ok(QueueStats {
            pending: len.saturating_sub(running),
            running,
            delayed: delayed_n,
            dead,
            dead_lettered: dead_lettered.unwrap_or(0),
            oldest_age,
            completed: completed.unwrap_or(0),
            busy: Duration::from_millis(busy_ms.unwrap_or(0)),
        })
    }

    async fn record_throughput(&self, kind: &str, busy: Duration) -> Result<(), QueueError> {
        check_kind(kind)?;
        let mut c = self.conn.clone();
        let _: () = redis::pipe()
            .atomic()
            .hincr(stats_key(kind), "completed", 1)
            .ignore()
            .hincr(stats_key(kind), "busy_ms", busy.as_millis() as u64)
            .ignore()
            .query_async(&mut c)
            .await
            .map_err(err)?;
        Ok(())
    }

    async fn clear_dead_letters(&self, kind: &str) -> Result<u64, QueueError> {
        check_kind(kind)?;
        let mut c = self.conn.clone();
        let n: u64 = redis::cmd("XLEN").arg(dlq(kind)).query_async(&mut c).await.map_err(err)?;
        let _: i64 = redis::cmd("DEL").arg(dlq(kind)).query_async(&mut c).await.map_err(err)?;
        Ok(n)
    }

    async fn dead_letters(&self, kind: &str) -> Result<Vec<(TaskMessage, String)>, QueueError> {
        check_kind(kind)?;
        let all: Value = redis::cmd("XRANGE").arg(dlq(kind)).arg("-").arg("+").query_async(&mut self.bulk.clone()).await.map_err(err)?;
        Ok(dead_entries(all)?.into_iter().map(|d| (d.task, d.reason)).collect())
    }

    async fn dead_letters_after(&self, kind: &str, after: Option<&str>, count: usize) -> Result<Vec<crate::DeadLetter>, QueueError> {
        check_kind(kind)?;
        if count == 0 {
            return Ok(Vec::new());
        }
        let from = match after {
            None => "-".to_string(),
            Some(id) if is_stream_id(id) => format!("({id}"),
            Some(id) => return Err(QueueError::Backend(format!("dead letter id {id:?} is not a stream id"))),
        };
        let page: Value =
            redis::cmd("XRANGE").arg(dlq(kind)).arg(from).arg("+").arg("COUNT").arg(count).query_async(&mut self.bulk.clone()).await.map_err(err)?;
        dead_entries(page)
    }

    /// One pass over the job's task index, the members of `kind` only ([`PURGE`]).
    async fn purge_job(&self, kind: &str, job_id: &str) -> Result<u64, QueueError> {
        check_kind(kind)?;
        self.purge_index(job_id, &format!("{} *", kind)).await
    }

    async fn purge_all(&self, job_id: &str) -> Result<u64, QueueError> {
        self.purge_index(job_id, "").await
    }

    async fn enqueue_once(&self, kind: &str, task: TaskMessage) -> Result<bool, QueueError> {
        Ok(self.enqueue_once_many(kind, vec![task]).await? == 1)
    }

    /// One [`ENQUEUE_ONCE_MANY`] call per job and chunk of [`ENQUEUE_CHUNK`] tasks.
    async fn enqueue_once_many(&self, kind: &str, tasks: Vec<TaskMessage>) -> Result<u64, QueueError> {
        check_kind(kind)?;
        for t in &tasks {
            check_payload(t)?;
        }
        self.ensure_group(kind).await?;
        let mut by_job: std::collections::BTreeMap<&str, Vec<&TaskMessage>> = Default::default();
        for t in &tasks {
            by_job.entry(t.job_id.as_str()).or_default().push(t);
        }
        let mut added = 0u64;
        for (job, tasks) in by_job {
            for chunk in tasks.chunks(ENQUEUE_CHUNK) {
                let mut inv = self.enqueue_once_many.prepare_invoke();
                inv.key(stream(kind)).key(once_key(job)).key(index_key(job)).arg(ONCE_TTL_SECS).arg(member_prefix(kind));
                for t in chunk {
                    inv.arg(format!("{kind}/{}", t.task_id)).arg(serde_json::to_string(t).map_err(err)?);
                }
                let n: u64 = inv.invoke_async(&mut self.conn.clone()).await.map_err(err)?;
                added += n;
            }
        }
        Ok(added)
    }

    async fn forget_job(&self, job_id: &str) -> Result<(), QueueError> {
        let _: i64 = self.conn.clone().del(once_key(job_id)).await.map_err(err)?;
        Ok(())
    }

    /// The live members of `kind` in the job's task index ([`LIVE`]): O(the job's messages).
    async fn job_tasks(&self, kind: &str, job_id: &str) -> Result<u64, QueueError> {
        check_kind(kind)?;
        self.live_in_index(job_id, &format!("{} *", kind), false).await
    }

    async fn job_has_tasks(&self, job_id: &str) -> Result<bool, QueueError> {
        Ok(self.live_in_index(job_id, "", true).await? > 0)
    }

    /// The first page of each job's [`LIVE`] look, pipelined ([`SCAN_PAGE`] jobs per round
    /// trip); a job whose first page held only stale members is looked at whole.
    async fn jobs_with_tasks(&self, jobs: &[String]) -> Result<Vec<bool>, QueueError> {
        let mut out = Vec::with_capacity(jobs.len());
        for chunk in jobs.chunks(SCAN_PAGE) {
            let mut pipe = redis::pipe();
            pipe.load_script(&self.live).ignore();
            for job in chunk {
                pipe.invoke_script(self.live.key(index_key(job)).arg("0").arg(INDEX_FIRST_PAGE).arg("").arg(STREAM_PREFIX).arg(DELAYED_PREFIX).arg("1"));
            }
            let pages: Vec<(String, u64)> = pipe.query_async(&mut self.conn.clone()).await.map_err(err)?;
            for (job, (next, live)) in chunk.iter().zip(pages) {
                out.push(live > 0 || (next != "0" && self.job_has_tasks(job).await?));
            }
        }
        Ok(out)
    }

    async fn outstanding(&self, kind: &str) -> Result<std::collections::HashMap<String, u64>, QueueError> {
        check_kind(kind)?;
        let mut by_job = std::collections::HashMap::new();
        self.each_message(kind, |task| *by_job.entry(task.job_id).or_insert(0) += 1).await?;
        Ok(by_job)
    }
}

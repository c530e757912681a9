//! The Redis implementation of [`JobStore`] (layout in the crate doc). Every multi-key change is
//! one Lua script, so concurrent executors see each transition whole.

use std::collections::HashMap;

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use redis::{AsyncCommands, Script};

use crate::{
    budget_hour, check_idempotency_key, check_record, now_ms, record_charge, tenant_idempotency_key, ActiveJob, Created, JobError, JobRecord, JobState,
    JobStore, Limits, TaskCounts, Usage, LIMIT_ACTIVE, LIMIT_HOURLY_TASKS, LIMIT_RECORD_BYTES, TASK_STATE_RETENTION,
};

const JOBS: &str = "prover:jobs";
const ACTIVE: &str = "prover:jobs:active";
/// Jobs that ended and whose clean-up is not marked done, by the time they ended.
const UNCLEAN: &str = "prover:jobs:unclean";

/// Seconds a Redis command may take to answer by default (the services' `--redis-timeout-secs`):
/// several seconds, so a large reply or a short server pause (an AOF fsync, a fork) is waited
/// out instead of turning writes ambiguous.
pub const DEFAULT_REDIS_TIMEOUT_SECS: u64 = 10;

fn job_key(id: &str) -> String {
    format!("prover:job:{id}")
}
fn done_key(id: &str) -> String {
    format!("prover:job:{id}:done")
}
fn released_key(id: &str) -> String {
    format!("prover:job:{id}:released")
}
fn tenant_key(tenant: &str) -> String {
    format!("prover:jobs:tenant:{tenant}")
}
/// The tasks `tenant`'s jobs planned in clock hour `hour` ([`budget_hour`]).
fn tenant_work_key(tenant: &str, hour: u64) -> String {
    format!("prover:jobs:tenant-work:{tenant}:{hour}")
}

fn tenant_active_key(tenant: &str) -> String {
    format!("prover:jobs:tenant-active:{tenant}")
}
fn idem_key(key: &str) -> String {
    format!("prover:idem:{key}")
}
/// A tenant's charges of one usage (hash: item → bytes, `:total`).
fn usage_key(tenant: &str, usage: Usage) -> String {
    format!("prover:jobs:usage:{tenant}:{}", usage.as_str())
}
/// The expiries of those charges (sorted set: item by ms).
fn usage_expiry_key(tenant: &str, usage: Usage) -> String {
    format!("{}:expiry", usage_key(tenant, usage))
}

/// Lua functions the scripts that keep tenants' charges share (`h`: a usage's hash, `z`: its
/// expiries). `usage_prune` drops up to `n` charges that expired by `now`.
const USAGE_LIB: &str = r#"
local function usage_prune(h, z, now, n)
  local gone = redis.call('ZRANGEBYSCORE', z, '-inf', now, 'LIMIT', 0, n)
  for _, item in ipairs(gone) do
    local b = tonumber(redis.call('HGET', h, item) or '0')
    if redis.call('HDEL', h, item) == 1 then redis.call('HINCRBY', h, ':total', -b) end
    redis.call('ZREM', z, item)
  end
end
local function usage_total(h)
  return tonumber(redis.call('HGET', h, ':total') or '0')
end
local function usage_set(h, z, item, bytes, expires)
  local old = redis.call('HGET', h, item)
  redis.call('HSET', h, item, bytes)
  redis.call('HINCRBY', h, ':total', tonumber(bytes) - tonumber(old or '0'))
  if expires then redis.call('ZADD', z, expires, item) else redis.call('ZREM', z, item) end
  return old
end
local function usage_drop(h, z, item)
  local old = redis.call('HGET', h, item)
  if old then
    redis.call('HDEL', h, item)
    redis.call('HINCRBY', h, ':total', -tonumber(old))
  end
  redis.call('ZREM', z, item)
end
local function usage_expire(h, z, item, at)
  if redis.call('HEXISTS', h, item) == 1 then redis.call('ZADD', z, at, item) end
end
"#;

/// Milliseconds of [`TASK_STATE_RETENTION`], for the scripts.
fn task_state_ms() -> u64 {
    TASK_STATE_RETENTION.as_millis() as u64
}

/// A script's `-1` (no such job), `0` (nothing changed) or `1` (changed).
fn found(id: &str, r: i64) -> Result<bool, JobError> {
    match r {
        -1 => Err(JobError::NotFound(id.into())),
        r => Ok(r == 1),
    }
}

fn err(e: impl std::fmt::Display) -> JobError {
    JobError::Backend(e.to_string())
}

/// KEYS: job hash, jobs zset, idempotency key, active zset[, the tenant's zset, the tenant's
/// active zset, the tenant's work counter of the hour, the tenant's record charges and their
/// expiries]. ARGV: has-key flag, fingerprint, id, created ms, the tenant's limit of active
/// jobs (-1: none), planned tasks, the hourly task limit (-1: none), the record's charge, its
/// task state's, the tenant's limit of record bytes (-1: none), now ms, then field/value pairs.
/// Returns {'new'|'existing'|'exists'|'limit'|'budget'|'records', stored idempotency value}.
const CREATE: &str = r#"
if ARGV[1] == '1' then
  local v = redis.call('GET', KEYS[3])
  if v then return {'existing', v} end
end
if redis.call('EXISTS', KEYS[1]) == 1 then return {'exists', ''} end
if KEYS[6] and tonumber(ARGV[5]) >= 0 and redis.call('ZCARD', KEYS[6]) >= tonumber(ARGV[5]) then return {'limit', ''} end
if KEYS[7] and tonumber(ARGV[7]) >= 0 and tonumber(redis.call('GET', KEYS[7]) or '0') + tonumber(ARGV[6]) > tonumber(ARGV[7]) then return {'budget', ''} end
if KEYS[8] then
  usage_prune(KEYS[8], KEYS[9], ARGV[11], 64)
  if tonumber(ARGV[10]) >= 0 and usage_total(KEYS[8]) + tonumber(ARGV[8]) + tonumber(ARGV[9]) > tonumber(ARGV[10]) then return {'records', ''} end
  usage_set(KEYS[8], KEYS[9], ARGV[3], ARGV[8], nil)
  usage_set(KEYS[8], KEYS[9], ARGV[3] .. '/tasks', ARGV[9], nil)
end
for i = 12, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[3])
redis.call('ZADD', KEYS[4], ARGV[4], ARGV[3])
if KEYS[5] then redis.call('ZADD', KEYS[5], ARGV[4], ARGV[3]) end
if KEYS[6] then redis.call('ZADD', KEYS[6], ARGV[4], ARGV[3]) end
if KEYS[7] then
  redis.call('INCRBY', KEYS[7], ARGV[6])
  redis.call('PEXPIRE', KEYS[7], 7200000)
end
if ARGV[1] == '1' then redis.call('SET', KEYS[3], ARGV[3] .. ' ' .. ARGV[2]) end
return {'new', ''}
"#;

/// KEYS: job hash, active zset, unclean zset, done set, released set, then the idempotency key
/// and the tenant's active zset, record charges and their expiries when the job has them (read
/// before, see [`RedisJobStore::transition_with`]). ARGV: state, message, now, id, retention ms
/// (0: none), whether an idempotency key is given, whether the tenant's keys are given, the
/// task state's retention ms. -1: no job, 0: not a move [`JobState::can_move`] allows, 1:
/// moved. A move to a terminal state lists the job as unclean and, with a retention, gives the
/// record and its idempotency key their TTL, its sets at most the task state's, and the
/// tenant's charges for them the same expiries, all in this one step. `MOVES` is replaced by
/// the table, generated from [`JobState::can_move`] (see [`transition_script`]).
const TRANSITION: &str = r#"
local s = redis.call('HGET', KEYS[1], 'state')
if not s then return -1 end
local moves = {MOVES}
if not moves[s .. '>' .. ARGV[1]] then return 0 end
redis.call('HSET', KEYS[1], 'state', ARGV[1], 'message', ARGV[2], 'updated_ms', ARGV[3])
if ARGV[1] == 'done' or ARGV[1] == 'failed' or ARGV[1] == 'cancelled' then
  redis.call('ZREM', KEYS[2], ARGV[4])
  redis.call('ZADD', KEYS[3], ARGV[3], ARGV[4])
  local t = 6
  local idem = nil
  if ARGV[6] == '1' then
    idem = KEYS[6]
    t = 7
  end
  if ARGV[7] == '1' then redis.call('ZREM', KEYS[t], ARGV[4]) end
  if tonumber(ARGV[5]) > 0 then
    local sets = math.min(tonumber(ARGV[5]), tonumber(ARGV[8]))
    redis.call('PEXPIRE', KEYS[1], ARGV[5])
    redis.call('PEXPIRE', KEYS[4], sets)
    redis.call('PEXPIRE', KEYS[5], sets)
    if ARGV[7] == '1' then
      usage_expire(KEYS[t + 1], KEYS[t + 2], ARGV[4], tonumber(ARGV[3]) + tonumber(ARGV[5]))
      usage_expire(KEYS[t + 1], KEYS[t + 2], ARGV[4] .. '/tasks', tonumber(ARGV[3]) + sets)
    end
    if idem then
      local v = redis.call('GET', idem)
      if v and string.sub(v, 1, #ARGV[4] + 1) == ARGV[4] .. ' ' then redis.call('PEXPIRE', idem, ARGV[5]) end
    end
  end
end
return 1
"#;

/// [`TRANSITION`] with the moves [`JobState::can_move`] allows, as a Lua table.
fn transition_script() -> String {
    let mut moves = String::new();
    for from in JobState::ALL {
        for to in JobState::ALL {
            if from.can_move(to) {
                moves += &format!("['{}>{}'] = true, ", from.as_str(), to.as_str());
            }
        }
    }
    TRANSITION.replace("{MOVES}", &format!("{{{moves}}}"))
}

/// KEYS: job hash, set. ARGV: member, counter field ('' for none), now, the task state's
/// retention ms. A set made after the job's retention was set (a late report of an ended job)
/// expires with the record, or after the task state's retention if that is sooner.
/// A job record's fields but its spec (HGETALL on the server, the spec left there): what a
/// listing reads, without up to `MAX_SPEC_BYTES` a job crossing the wire.
const BRIEF: &str = r#"
local h = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #h, 2 do
  if h[i] ~= 'spec' then
    out[#out + 1] = h[i]
    out[#out + 1] = h[i + 1]
  end
end
return out
"#;

const ADD_TASK: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if redis.call('SADD', KEYS[2], ARGV[1]) == 0 then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
if ttl > 0 and redis.call('PTTL', KEYS[2]) < 0 then redis.call('PEXPIRE', KEYS[2], math.min(ttl, tonumber(ARGV[4]))) end
if ARGV[2] ~= '' then
  redis.call('HINCRBY', KEYS[1], ARGV[2], 1)
  redis.call('HSET', KEYS[1], 'updated_ms', ARGV[3])
end
return 1
"#;

/// KEYS: job hash. ARGV: field, value. Raises a numeric field to the value. -1: no job.
const RAISE: &str = r#"
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0') < tonumber(ARGV[2]) then
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
  return 1
end
return 0
"#;

/// KEYS: job hash, done set, released set, jobs zset, active zset, then the idempotency key
/// and the tenant's two zsets, record charges and their expiries when the job has them (read
/// before, see [`RedisJobStore::delete`]). ARGV: id, whether an idempotency key is given,
/// whether the tenant's keys are given.
const DELETE: &str = r#"
if ARGV[2] == '1' then
  local v = redis.call('GET', KEYS[6])
  if v and string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. ' ' then redis.call('DEL', KEYS[6]) end
end
if ARGV[3] == '1' then
  local t = 6
  if ARGV[2] == '1' then t = 7 end
  redis.call('ZREM', KEYS[t], ARGV[1])
  redis.call('ZREM', KEYS[t + 1], ARGV[1])
  usage_drop(KEYS[t + 2], KEYS[t + 3], ARGV[1])
  usage_drop(KEYS[t + 2], KEYS[t + 3], ARGV[1] .. '/tasks')
end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
return 1
"#;

/// KEYS: job hash, done set, released set[, the job's idempotency key]. ARGV: ttl ms. The
/// idempotency key goes with them. (The tenant's charges keep the expiries the ending gave
/// them: `gc`, which calls this, may not write them.)
const EXPIRE: &str = r#"
for i = 1, #KEYS do redis.call('PEXPIRE', KEYS[i], ARGV[1]) end
return 1
"#;

/// KEYS: a usage's charges, their expiries. ARGV: item, bytes, limit (-1: none), now, expiry
/// ms (-1: none). Returns {'ok'|'limit', the earlier charge or ''}.
const CHARGE: &str = r#"
usage_prune(KEYS[1], KEYS[2], ARGV[4], 64)
local old = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '-1')
local bytes = tonumber(ARGV[2])
if tonumber(ARGV[3]) >= 0 and bytes > old and usage_total(KEYS[1]) - math.max(old, 0) + bytes > tonumber(ARGV[3]) then return {'limit', ''} end
local expires = nil
if tonumber(ARGV[5]) >= 0 then expires = ARGV[5] end
local prev = usage_set(KEYS[1], KEYS[2], ARGV[1], ARGV[2], expires)
return {'ok', prev or ''}
"#;

/// KEYS: a usage's charges, their expiries. ARGV: item ('' for none), now. Drops the item's
/// charge and up to 1,000 expired ones; returns the total.
const UNCHARGE: &str = r#"
usage_prune(KEYS[1], KEYS[2], ARGV[2], 1000)
if ARGV[1] ~= '' then usage_drop(KEYS[1], KEYS[2], ARGV[1]) end
return usage_total(KEYS[1])
"#;

pub struct RedisJobStore {
    conn: ConnectionManager,
    /// Reads whose replies grow with the data (listings: one `HGETALL` with its spec per job)
    /// go on a connection of their own, so a large reply never holds up the small commands
    /// queued behind it on `conn` (transitions, reports).
    bulk: ConnectionManager,
    /// Waits for Redis's AOF before a write is acknowledged ([`JobStore::make_durable`]); none:
    /// nothing to wait for, or nothing asked.
    ack: Option<std::sync::Arc<queue::durable::AckGate>>,
    /// A record without its spec ([`BRIEF`]).
    brief: Script,
    create: Script,
    transition: Script,
    add_task: Script,
    raise: Script,
    delete: Script,
    expire: Script,
    charge: Script,
    uncharge: Script,
}

impl RedisJobStore {
    /// Connects; like the queue, refuses a server that may evict keys.
    pub async fn connect(url: &str) -> Result<Self, JobError> {
        Self::connect_with(url, false).await
    }

    /// [`RedisJobStore::connect`]; with `assume_noeviction`, a server that refuses `CONFIG GET`
    /// (managed Redis) is accepted without the check, as the queue's `connect_with` does.
    pub async fn connect_with(url: &str, assume_noeviction: bool) -> Result<Self, JobError> {
        Self::connect_opts(url, assume_noeviction, std::time::Duration::from_secs(DEFAULT_REDIS_TIMEOUT_SECS)).await
    }

    /// [`RedisJobStore::connect_with`], with every command's answer (and each connection
    /// attempt) waited for up to `response_timeout` (redis-rs's own default is 500 ms).
    pub async fn connect_opts(url: &str, assume_noeviction: bool, response_timeout: std::time::Duration) -> Result<Self, JobError> {
        if response_timeout.is_zero() {
            return Err(JobError::Invalid { field: "redis_timeout", reason: "must be more than zero".into() });
        }
        let client = redis::Client::open(url).map_err(err)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(response_timeout))
            .set_connection_timeout(Some(response_timeout));
        let mut conn = ConnectionManager::new_with_config(client.clone(), config.clone()).await.map_err(err)?;
        let bulk = ConnectionManager::new_with_config(client, config).await.map_err(err)?;
        let policy = match queue::redis_eviction_policy(&mut conn).await {
            Err(e) if assume_noeviction && !e.is_io_error() && !e.is_timeout() => Some("noeviction".to_string()),
            Err(e) => {
                return Err(JobError::Backend(format!(
                    "Redis refused INFO memory and CONFIG GET maxmemory-policy ({e}); if it runs noeviction, start with --assume-noeviction"
                )))
            }
            Ok(p) => p,
        };
        if policy.as_deref() != Some("noeviction") {
            return Err(JobError::Backend(format!("Redis maxmemory-policy is {:?}; job state needs noeviction", policy.unwrap_or_default())));
        }
        Ok(Self {
            conn,
            bulk,
            ack: None,
            brief: Script::new(BRIEF),
            create: Script::new(&format!("{USAGE_LIB}{CREATE}")),
            transition: Script::new(&format!("{USAGE_LIB}{}", transition_script())),
            add_task: Script::new(ADD_TASK),
            raise: Script::new(RAISE),
            delete: Script::new(&format!("{USAGE_LIB}{DELETE}")),
            expire: Script::new(EXPIRE),
            charge: Script::new(&format!("{USAGE_LIB}{CHARGE}")),
            uncharge: Script::new(&format!("{USAGE_LIB}{UNCHARGE}")),
        })
    }

    /// This store with `gate` waited on by [`JobStore::make_durable`] (see
    /// [`queue::durable::AckGate::open`]).
    pub fn with_ack_gate(mut self, gate: Option<std::sync::Arc<queue::durable::AckGate>>) -> Self {
        self.ack = gate;
        self
    }

    /// Adds `task` to the job's `set`, bumping `counter` ('' for none) if it was new.
    async fn add_task(&self, id: &str, set: &str, task: &str, counter: &str) -> Result<bool, JobError> {
        let r: i64 = self
            .add_task
            .key(job_key(id))
            .key(set)
            .arg(task)
            .arg(counter)
            .arg(now_ms())
            .arg(task_state_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err)?;
        found(id, r)
    }

    /// A page of the jobs in sorted set `index`, newest first; ids whose record expired are
    /// dropped from the index on the way.
    async fn list_index(&self, index: &str, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        self.list_index_with(index, offset, limit, true).await
    }

    /// A page of `index`, the records with their specs or (`with_spec` false) with the spec
    /// left on the server ([`BRIEF`]) and empty here.
    async fn list_index_with(&self, index: &str, offset: u64, limit: u64, with_spec: bool) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        let mut conn = self.bulk.clone();
        if limit == 0 {
            return Ok((Vec::new(), None));
        }
        let ids: Vec<String> = conn.zrevrange(index, offset as isize, (offset + limit - 1) as isize).await.map_err(err)?;
        let total: u64 = conn.zcard(index).await.map_err(err)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in &ids {
            let got = if with_spec { self.get_on(&self.bulk, id).await? } else { self.get_brief(id).await? };
            match got {
                Some(r) => out.push(r),
                // Expired: forget it here too.
                None => {
                    let _: i64 = conn.zrem(index, id).await.map_err(err)?;
                }
            }
        }
        let next = offset + ids.len() as u64;
        Ok((out, (next < total).then_some(next)))
    }

    /// The record of `id` without its spec (empty), on the bulk connection.
    async fn get_brief(&self, id: &str) -> Result<Option<JobRecord>, JobError> {
        if crate::check_id(id).is_err() {
            return Ok(None);
        }
        let pairs: Vec<String> = self.brief.key(job_key(id)).invoke_async(&mut self.bulk.clone()).await.map_err(err)?;
        if pairs.is_empty() {
            return Ok(None);
        }
        let mut h: HashMap<String, String> = pairs.chunks_exact(2).map(|kv| (kv[0].clone(), kv[1].clone())).collect();
        h.insert("spec".into(), String::new());
        Self::parse(id, h)
    }

    /// The record of `id`, read on `conn`.
    async fn get_on(&self, conn: &ConnectionManager, id: &str) -> Result<Option<JobRecord>, JobError> {
        if crate::check_id(id).is_err() {
            return Ok(None);
        }
        let h: HashMap<String, String> = conn.clone().hgetall(job_key(id)).await.map_err(err)?;
        Self::parse(id, h)
    }

    /// [`JobStore::transition`], with the retention `ttl_ms` (0: none) of an ending.
    async fn transition_with(&self, id: &str, to: JobState, message: &str, ttl_ms: u64) -> Result<bool, JobError> {
        // Every key the script touches is named in KEYS: the idempotency key and the tenant,
        // fixed at creation, are read first.
        let (idem, tenant): (Option<String>, Option<String>) =
            redis::cmd("HMGET").arg(job_key(id)).arg("idem").arg("tenant").query_async(&mut self.conn.clone()).await.map_err(err)?;
        let idem = idem.filter(|k| !k.is_empty());
        let tenant = tenant.filter(|t| !t.is_empty());
        let mut call = self.transition.key(job_key(id));
        call.key(ACTIVE).key(UNCLEAN).key(done_key(id)).key(released_key(id));
        if let Some(k) = &idem {
            call.key(idem_key(k));
        }
        if let Some(t) = &tenant {
            call.key(tenant_active_key(t)).key(usage_key(t, Usage::Records)).key(usage_expiry_key(t, Usage::Records));
        }
        let r: i64 = call
            .arg(to.as_str())
            .arg(message)
            .arg(now_ms())
            .arg(id)
            .arg(ttl_ms)
            .arg(if idem.is_some() { "1" } else { "0" })
            .arg(if tenant.is_some() { "1" } else { "0" })
            .arg(task_state_ms())
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err)?;
        found(id, r)
    }

    fn parse(id: &str, h: HashMap<String, String>) -> Result<Option<JobRecord>, JobError> {
        if h.is_empty() {
            return Ok(None);
        }
        let field = |name: &str| h.get(name).cloned().ok_or_else(|| JobError::Backend(format!("job {id}: field {name} missing")));
        let num = |name: &str| -> Result<u64, JobError> {
            field(name)?.parse().map_err(|_| JobError::Backend(format!("job {id}: field {name} not a number")))
        };
        let state = JobState::parse(&field("state")?).ok_or_else(|| JobError::Backend(format!("job {id}: bad state")))?;
        let mut tasks = std::collections::BTreeMap::new();
        for (k, v) in &h {
            let (kind, is_total) = if let Some(k) = k.strip_prefix("total:") {
                (k, true)
            } else if let Some(k) = k.strip_prefix("done:") {
                (k, false)
            } else {
                continue;
            };
            let n: u64 = v.parse().map_err(|_| JobError::Backend(format!("job {id}: field {k} not a number")))?;
            let c: &mut TaskCounts = tasks.entry(kind.to_string()).or_default();
            if is_total {
                c.total = n
            } else {
                c.done = n
            }
        }
        // Stored qualified by the tenant (`{tenant} {key}`); empty or the bare tenant prefix
        // without one.
        let tenant = h.get("tenant").cloned().unwrap_or_default();
        let idem = h.get("idem").map(String::as_str).unwrap_or_default();
        let idempotency_key = if tenant.is_empty() { idem } else { idem.strip_prefix(&format!("{tenant} ")).unwrap_or_default() }.to_string();
        Ok(Some(JobRecord {
            id: id.into(),
            kind: field("kind")?,
            spec: field("spec")?,
            state,
            message: field("message")?,
            created_ms: num("created_ms")?,
            updated_ms: num("updated_ms")?,
            tasks,
            // Records written before tenants existed have none.
            tenant,
            idempotency_key,
        }))
    }
}

#[async_trait]
impl JobStore for RedisJobStore {
    async fn create_limited(&self, rec: &JobRecord, idempotency: Option<(&str, &str)>, limits: Limits) -> Result<Created, JobError> {
        check_record(rec)?;
        if let Some((key, _)) = idempotency {
            check_idempotency_key(key)?;
        }
        let (user_key, fp) = idempotency.unwrap_or(("", ""));
        let key = &tenant_idempotency_key(&rec.tenant, user_key);
        let mut inv = self.create.key(job_key(&rec.id));
        inv.key(JOBS).key(idem_key(key)).key(ACTIVE);
        if !rec.tenant.is_empty() {
            inv.key(tenant_key(&rec.tenant)).key(tenant_active_key(&rec.tenant));
            inv.key(tenant_work_key(&rec.tenant, budget_hour(now_ms())));
            inv.key(usage_key(&rec.tenant, Usage::Records)).key(usage_expiry_key(&rec.tenant, Usage::Records));
        }
        let cap = |m: Option<u64>| m.map_or(-1, |m| m.min(i64::MAX as u64) as i64);
        inv.arg(if idempotency.is_some() { "1" } else { "0" }).arg(fp).arg(&rec.id).arg(rec.created_ms).arg(cap(limits.max_active));
        inv.arg(rec.progress().total.min(i64::MAX as u64)).arg(cap(limits.max_tasks_per_hour));
        let (record_bytes, task_bytes) = record_charge(rec);
        inv.arg(cap(Some(record_bytes))).arg(cap(Some(task_bytes))).arg(cap(limits.max_record_bytes)).arg(now_ms());
        let mut fields: Vec<(String, String)> = vec![
            ("kind".into(), rec.kind.clone()),
            ("spec".into(), rec.spec.clone()),
            ("state".into(), JobState::Queued.as_str().into()),
            ("message".into(), String::new()),
            ("created_ms".into(), rec.created_ms.to_string()),
            ("updated_ms".into(), rec.updated_ms.to_string()),
            ("idem".into(), key.clone()),
            ("tenant".into(), rec.tenant.clone()),
        ];
        for (k, c) in &rec.tasks {
            fields.push((format!("total:{k}"), c.total.to_string()));
            fields.push((format!("done:{k}"), "0".into()));
        }
        for (k, v) in fields {
            inv.arg(k).arg(v);
        }
        let (what, stored): (String, String) = inv.invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        match what.as_str() {
            "new" => Ok(Created::New),
            "exists" => Err(JobError::AlreadyExists(rec.id.clone())),
            "limit" => Err(JobError::LimitReached { limit: LIMIT_ACTIVE, max: limits.max_active.unwrap_or(0) }),
            "budget" => Err(JobError::LimitReached { limit: LIMIT_HOURLY_TASKS, max: limits.max_tasks_per_hour.unwrap_or(0) }),
            "records" => Err(JobError::LimitReached { limit: LIMIT_RECORD_BYTES, max: limits.max_record_bytes.unwrap_or(0) }),
            _ => {
                let (job, old_fp) = stored.split_once(' ').unwrap_or((&stored, ""));
                if old_fp == fp {
                    Ok(Created::Existing(job.into()))
                } else {
                    Err(JobError::IdempotencyConflict { key: user_key.into(), job: job.into() })
                }
            }
        }
    }

    async fn get(&self, id: &str) -> Result<Option<JobRecord>, JobError> {
        self.get_on(&self.conn, id).await
    }

    async fn list(&self, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        self.list_index(JOBS, offset, limit).await
    }

    async fn list_tenant(&self, tenant: &str, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        self.list_index(&tenant_key(tenant), offset, limit).await
    }

    async fn list_brief(&self, tenant: Option<&str>, offset: u64, limit: u64) -> Result<(Vec<JobRecord>, Option<u64>), JobError> {
        let index = tenant.map_or_else(|| JOBS.to_string(), tenant_key);
        self.list_index_with(&index, offset, limit, false).await
    }


    async fn transition(&self, id: &str, to: JobState, message: &str) -> Result<bool, JobError> {
        self.transition_with(id, to, message, 0).await
    }

    async fn end(&self, id: &str, to: JobState, message: &str, ttl: std::time::Duration) -> Result<bool, JobError> {
        crate::check_ending(to)?;
        self.transition_with(id, to, message, (ttl.as_millis().min(i64::MAX as u128) as u64).max(1)).await
    }

    async fn unclean(&self, limit: u64) -> Result<Vec<(String, u64)>, JobError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let mut conn = self.bulk.clone();
        let listed: Vec<(String, f64)> = conn.zrange_withscores(UNCLEAN, 0, (limit - 1).min(isize::MAX as u64) as isize).await.map_err(err)?;
        let mut out = Vec::with_capacity(listed.len());
        for (id, ms) in listed {
            let exists: bool = conn.exists(job_key(&id)).await.map_err(err)?;
            if exists {
                out.push((id, ms as u64));
            } else {
                // Expired or deleted: nothing left to say what it was.
                let _: i64 = conn.zrem(UNCLEAN, &id).await.map_err(err)?;
            }
        }
        Ok(out)
    }

    async fn is_unclean(&self, id: &str) -> Result<bool, JobError> {
        let (score, exists): (Option<f64>, bool) =
            redis::pipe().zscore(UNCLEAN, id).exists(job_key(id)).query_async(&mut self.conn.clone()).await.map_err(err)?;
        Ok(score.is_some() && exists)
    }

    async fn mark_cleaned(&self, id: &str) -> Result<(), JobError> {
        let _: i64 = self.conn.clone().zrem(UNCLEAN, id).await.map_err(err)?;
        Ok(())
    }

    async fn task_done(&self, id: &str, kind: &str, task: &str) -> Result<bool, JobError> {
        self.add_task(id, &done_key(id), task, &format!("done:{kind}")).await
    }

    async fn is_done(&self, id: &str, task: &str) -> Result<bool, JobError> {
        self.conn.clone().sismember(done_key(id), task).await.map_err(err)
    }

    async fn mark_released(&self, id: &str, task: &str) -> Result<bool, JobError> {
        self.add_task(id, &released_key(id), task, "").await
    }

    async fn is_released(&self, id: &str, task: &str) -> Result<bool, JobError> {
        self.conn.clone().sismember(released_key(id), task).await.map_err(err)
    }

    async fn release_mark(&self, id: &str, step: &str) -> Result<u64, JobError> {
        let (exists, mark): (bool, Option<u64>) =
            redis::pipe().exists(job_key(id)).hget(job_key(id), format!("mark:{step}")).query_async(&mut self.conn.clone()).await.map_err(err)?;
        if !exists {
            return Err(JobError::NotFound(id.into()));
        }
        Ok(mark.unwrap_or(0))
    }

    async fn raise_release_mark(&self, id: &str, step: &str, to: u64) -> Result<(), JobError> {
        let r: i64 = self.raise.key(job_key(id)).arg(format!("mark:{step}")).arg(to).invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        found(id, r).map(|_| ())
    }

    async fn tenant_active(&self, tenant: &str) -> Result<u64, JobError> {
        if tenant.is_empty() {
            return Ok(0);
        }
        self.conn.clone().zcard(tenant_active_key(tenant)).await.map_err(err)
    }

    async fn tenant_hour_tasks(&self, tenant: &str) -> Result<u64, JobError> {
        if tenant.is_empty() {
            return Ok(0);
        }
        let n: Option<u64> = self.conn.clone().get(tenant_work_key(tenant, budget_hour(now_ms()))).await.map_err(err)?;
        Ok(n.unwrap_or(0))
    }

    async fn idempotent(&self, tenant: &str, key: &str) -> Result<Option<String>, JobError> {
        check_idempotency_key(key)?;
        // The stored value is "<job> <fingerprint>".
        let v: Option<String> = self.conn.clone().get(idem_key(&tenant_idempotency_key(tenant, key))).await.map_err(err)?;
        Ok(v.and_then(|v| v.split_once(' ').map(|(job, _)| job.to_string())))
    }

    async fn list_active(&self, limit: u64) -> Result<Vec<JobRecord>, JobError> {
        if limit == 0 {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = self.bulk.clone().zrange(ACTIVE, 0, (limit - 1) as isize).await.map_err(err)?;
        let mut out = Vec::with_capacity(ids.len());
        for id in &ids {
            match self.get_on(&self.bulk, id).await? {
                Some(r) if !r.state.is_terminal() => out.push(r),
                Some(_) => {}
                // A record that expired or was deleted behind the index's back.
                None => {
                    let _: i64 = self.bulk.clone().zrem(ACTIVE, id).await.map_err(err)?;
                }
            }
        }
        Ok(out)
    }

    async fn active_page(&self, offset: u64, limit: u64) -> Result<(Vec<ActiveJob>, Option<u64>), JobError> {
        if limit == 0 {
            return Ok((Vec::new(), None));
        }
        let mut conn = self.bulk.clone();
        let (ids, total): (Vec<String>, u64) =
            redis::pipe().zrange(ACTIVE, offset as isize, (offset + limit - 1) as isize).zcard(ACTIVE).query_async(&mut conn).await.map_err(err)?;
        let mut read = redis::pipe();
        for id in &ids {
            read.cmd("HMGET").arg(job_key(id)).arg("kind").arg("state").arg("created_ms").arg("updated_ms");
        }
        type Fields = (Option<String>, Option<String>, Option<u64>, Option<u64>);
        let fields: Vec<Fields> = if ids.is_empty() { Vec::new() } else { read.query_async(&mut conn).await.map_err(err)? };
        let mut out = Vec::with_capacity(ids.len());
        for (id, f) in ids.iter().zip(fields) {
            match f {
                (Some(kind), Some(state), Some(created_ms), Some(updated_ms)) => {
                    let state = JobState::parse(&state).ok_or_else(|| JobError::Backend(format!("job {id}: bad state")))?;
                    if !state.is_terminal() {
                        out.push(ActiveJob { id: id.clone(), kind, state, created_ms, updated_ms });
                    }
                }
                // A record that expired or was deleted behind the index's back.
                (None, None, None, None) => {
                    let _: i64 = conn.zrem(ACTIVE, id).await.map_err(err)?;
                }
                _ => return Err(JobError::Backend(format!("job {id}: record without kind, state or times"))),
            }
        }
        let next = offset + ids.len() as u64;
        Ok((out, (next < total).then_some(next)))
    }

    async fn expire(&self, id: &str, ttl: std::time::Duration) -> Result<(), JobError> {
        let idem: Option<String> = self.conn.clone().hget(job_key(id), "idem").await.map_err(err)?;
        let mut call = self.expire.key(job_key(id));
        call.key(done_key(id)).key(released_key(id));
        if let Some(k) = idem.filter(|k| !k.is_empty()) {
            call.key(idem_key(&k));
        }
        let _: i64 = call.arg(ttl.as_millis().max(1) as u64).invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), JobError> {
        // Every key the script touches is named in KEYS: the idempotency key and the tenant,
        // fixed at creation, are read first.
        let (idem, tenant): (Option<String>, Option<String>) =
            redis::cmd("HMGET").arg(job_key(id)).arg("idem").arg("tenant").query_async(&mut self.conn.clone()).await.map_err(err)?;
        let idem = idem.filter(|k| !k.is_empty());
        let tenant = tenant.filter(|t| !t.is_empty());
        let mut call = self.delete.key(job_key(id));
        call.key(done_key(id)).key(released_key(id)).key(JOBS).key(ACTIVE);
        if let Some(k) = &idem {
            call.key(idem_key(k));
        }
        if let Some(t) = &tenant {
            call.key(tenant_key(t)).key(tenant_active_key(t)).key(usage_key(t, Usage::Records)).key(usage_expiry_key(t, Usage::Records));
        }
        let _: i64 = call
            .arg(id)
            .arg(if idem.is_some() { "1" } else { "0" })
            .arg(if tenant.is_some() { "1" } else { "0" })
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err)?;
        let _: i64 = self.conn.clone().zrem(UNCLEAN, id).await.map_err(err)?;
        Ok(())
    }

    async fn charge(&self, tenant: &str, usage: Usage, item: &str, bytes: u64, max: Option<u64>, expires_ms: Option<u64>) -> Result<Option<u64>, JobError> {
        crate::check_charge(tenant, usage, item)?;
        if tenant.is_empty() {
            return Ok(None);
        }
        let cap = |m: Option<u64>| m.map_or(-1, |m| m.min(i64::MAX as u64) as i64);
        let (what, prev): (String, String) = self
            .charge
            .key(usage_key(tenant, usage))
            .key(usage_expiry_key(tenant, usage))
            .arg(item)
            .arg(cap(Some(bytes)))
            .arg(cap(max))
            .arg(now_ms())
            .arg(cap(expires_ms))
            .invoke_async(&mut self.conn.clone())
            .await
            .map_err(err)?;
        match what.as_str() {
            "ok" if prev.is_empty() => Ok(None),
            "ok" => prev.parse().map(Some).map_err(|_| JobError::Backend(format!("{} charge of {item:?}: {prev:?} is not a number", usage.as_str()))),
            _ => Err(JobError::LimitReached { limit: usage.limit(), max: max.unwrap_or(0) }),
        }
    }

    async fn uncharge(&self, tenant: &str, usage: Usage, item: &str) -> Result<(), JobError> {
        crate::check_charge(tenant, usage, item)?;
        if tenant.is_empty() {
            return Ok(());
        }
        let _: i64 = self.uncharge.key(usage_key(tenant, usage)).key(usage_expiry_key(tenant, usage)).arg(item).arg(now_ms()).invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        Ok(())
    }

    async fn usage(&self, tenant: &str, usage: Usage) -> Result<u64, JobError> {
        if tenant.is_empty() {
            return Ok(0);
        }
        let total: i64 = self.uncharge.key(usage_key(tenant, usage)).key(usage_expiry_key(tenant, usage)).arg("").arg(now_ms()).invoke_async(&mut self.conn.clone()).await.map_err(err)?;
        Ok(total.max(0) as u64)
    }

    async fn make_durable(&self) -> Result<(), JobError> {
        match &self.ack {
            Some(gate) => gate.wait().await.map_err(JobError::Backend),
            None => Ok(()),
        }
    }
}

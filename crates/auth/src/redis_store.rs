//! The Redis [`TokenStore`] (layout in the crate doc).

use std::collections::HashMap;

use async_trait::async_trait;
use redis::aio::ConnectionManager;
use redis::AsyncCommands;

use crate::{check_secret, generate, now_ms, token_hash, AuthError, NewToken, TokenInfo, TokenStore};

const TOKENS: &str = "prover:tokens";

fn token_key(hash: &str) -> String {
    format!("prover:token:{hash}")
}

fn err(e: impl std::fmt::Display) -> AuthError {
    AuthError::Backend(e.to_string())
}

pub struct RedisTokenStore {
    conn: ConnectionManager,
}

/// How long a token store waits for an answer (and a connection) by default: the queue's and
/// job store's default (`--redis-timeout-secs`), not redis-rs's 500 ms, which a busy server's
/// large reply to another client turns into failed authentications.
pub const DEFAULT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

impl RedisTokenStore {
    pub async fn connect(url: &str) -> Result<Self, AuthError> {
        Self::connect_opts(url, DEFAULT_TIMEOUT).await
    }

    /// [`RedisTokenStore::connect`], waiting up to `response_timeout` for each answer and
    /// connection attempt.
    pub async fn connect_opts(url: &str, response_timeout: std::time::Duration) -> Result<Self, AuthError> {
        if response_timeout.is_zero() {
            return Err(AuthError::Backend("the Redis response timeout must be more than zero".into()));
        }
        let client = redis::Client::open(url).map_err(err)?;
        let config = redis::aio::ConnectionManagerConfig::new()
            .set_response_timeout(Some(response_timeout))
            .set_connection_timeout(Some(response_timeout));
        Ok(Self { conn: ConnectionManager::new_with_config(client, config).await.map_err(err)? })
    }
}

#[async_trait]
impl TokenStore for RedisTokenStore {
    async fn create(&self, tenant: &str) -> Result<NewToken, AuthError> {
        let t = generate(tenant, now_ms())?;
        let hash = token_hash(&t.secret);
        // One transaction: a token is listed exactly when it resolves.
        let _: () = redis::pipe()
            .atomic()
            .hset_multiple(token_key(&hash), &[("tenant", t.info.tenant.clone()), ("id", t.info.id.clone()), ("created_ms", t.info.created_ms.to_string())])
            .hset(TOKENS, &t.info.id, &hash)
            .query_async(&mut self.conn.clone())
            .await
            .map_err(err)?;
        Ok(t)
    }

    async fn resolve(&self, secret: &str) -> Result<Option<String>, AuthError> {
        if !check_secret(secret) {
            return Ok(None);
        }
        let tenant: Option<String> = self.conn.clone().hget(token_key(&token_hash(secret)), "tenant").await.map_err(err)?;
        Ok(tenant)
    }

    async fn revoke(&self, id: &str) -> Result<(), AuthError> {
        let mut conn = self.conn.clone();
        let hash: Option<String> = conn.hget(TOKENS, id).await.map_err(err)?;
        let Some(hash) = hash else { return Err(AuthError::NotFound(id.into())) };
        let _: () = redis::pipe().atomic().del(token_key(&hash)).hdel(TOKENS, id).query_async(&mut conn).await.map_err(err)?;
        Ok(())
    }

    async fn list(&self) -> Result<Vec<TokenInfo>, AuthError> {
        let mut conn = self.conn.clone();
        let ids: HashMap<String, String> = conn.hgetall(TOKENS).await.map_err(err)?;
        let mut out = Vec::with_capacity(ids.len());
        for (id, hash) in ids {
            let h: HashMap<String, String> = conn.hgetall(token_key(&hash)).await.map_err(err)?;
            if let (Some(tenant), Some(created)) = (h.get("tenant"), h.get("created_ms")) {
                out.push(TokenInfo { id, tenant: tenant.clone(), created_ms: created.parse().unwrap_or(0) });
            }
        }
        out.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Ok(out)
    }
}

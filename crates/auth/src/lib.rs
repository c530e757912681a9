//! API tokens and tenants.
//!
//! A **tenant** is the unit of isolation on the platform: every job belongs to the tenant whose
//! token submitted it, and a tenant sees only its own jobs. A **token** is a bearer secret
//! (`prv_` + 64 hex digits = 256 random bits) that a client sends as
//! `authorization: Bearer <token>`; the server maps it to its tenant through a [`TokenStore`].
//!
//! Stores keep only a hash of each token (BLAKE2b-256: the token is uniformly random, so a
//! fast hash suffices — there is nothing to brute-force), never the token itself: a leaked
//! store does not leak usable tokens. Each token also has a short public **id** (the first 12
//! hex digits of its hash) for listing and revoking. A revoked token stops working on the next
//! request: servers resolve the token on every call, they do not cache it.
//!
//! Two implementations of [`TokenStore`], checked by one [`contract`] suite: [`RedisTokenStore`]
//! (the cluster: tokens live beside the job state) and [`MemoryTokenStore`] (embedded mode and
//! tests). Beside them, [`DirTokenStore`] reads tokens from a directory (a mounted Kubernetes
//! Secret: one file per tenant), and [`ChainTokenStore`] serves several stores as one.
//!
//! Redis layout: `prover:token:{hash}` (hash: `tenant`, `id`, `created_ms`) and `prover:tokens`
//! (hash: id → token hash, the listing).

use async_trait::async_trait;
use blake2::digest::consts::U32;
use blake2::{Blake2b, Digest};
use rand::RngCore;

pub mod contract;
mod dir;
mod memory;
mod redis_store;

pub use dir::{ChainTokenStore, DirTokenStore};
pub use memory::MemoryTokenStore;
pub use redis_store::{RedisTokenStore, DEFAULT_TIMEOUT};

/// The prefix of every token, so that a leaked one is recognisable (secret scanners).
pub const TOKEN_PREFIX: &str = "prv_";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AuthError {
    #[error("invalid {field}: {reason}")]
    Invalid { field: &'static str, reason: String },
    #[error("no token with id {0}")]
    NotFound(String),
    #[error("token store: {0}")]
    Backend(String),
}

/// A token as listed (never the secret itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenInfo {
    pub id: String,
    pub tenant: String,
    pub created_ms: u64,
}

/// A freshly created token: the secret is shown once, here.
#[derive(Clone, Debug)]
pub struct NewToken {
    pub secret: String,
    pub info: TokenInfo,
}

/// Most characters of a tenant name: a Kubernetes namespace's 63 and the `ns-` of its tenant.
pub const MAX_TENANT_LEN: usize = 66;

/// Tenant names: 1–66 lowercase letters, digits or '-', starting with a letter or digit (they
/// appear in object keys and Redis keys).
pub fn check_tenant(tenant: &str) -> Result<(), AuthError> {
    let ok = !tenant.is_empty()
        && tenant.len() <= MAX_TENANT_LEN
        && tenant.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !tenant.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(AuthError::Invalid { field: "tenant", reason: format!("{tenant:?}: 1–{MAX_TENANT_LEN} lowercase letters, digits or '-', not starting with '-'") })
    }
}

/// The stored hash of a token (hex).
pub fn token_hash(secret: &str) -> String {
    hex::encode(Blake2b::<U32>::digest(secret.as_bytes()))
}

/// A token's public id: the first 12 hex digits of its hash ([`token_hash`]).
pub fn token_id(hash: &str) -> String {
    hash[..12].to_string()
}

/// A new random token for `tenant`.
pub fn generate(tenant: &str, created_ms: u64) -> Result<NewToken, AuthError> {
    check_tenant(tenant)?;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    let secret = format!("{TOKEN_PREFIX}{}", hex::encode(bytes));
    let id = token_id(&token_hash(&secret));
    Ok(NewToken { secret, info: TokenInfo { id, tenant: tenant.into(), created_ms } })
}

/// Checks a presented token's shape before any lookup (so garbage never reaches the store).
pub fn check_secret(secret: &str) -> bool {
    secret.len() == TOKEN_PREFIX.len() + 64
        && secret.starts_with(TOKEN_PREFIX)
        && secret[TOKEN_PREFIX.len()..].bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// The token in an `authorization` header value (`Bearer <token>`, scheme case-insensitive).
pub fn bearer(header: &str) -> Option<&str> {
    let (scheme, rest) = header.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| rest.trim())
}

pub fn now_ms() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as u64).unwrap_or(0)
}

/// Where tokens are kept (see the crate doc).
#[async_trait]
pub trait TokenStore: Send + Sync {
    /// Creates a token for `tenant`; the secret is returned once and not stored.
    async fn create(&self, tenant: &str) -> Result<NewToken, AuthError>;
    /// The tenant of a presented token, or None (unknown, revoked or malformed).
    async fn resolve(&self, secret: &str) -> Result<Option<String>, AuthError>;
    /// Revokes the token with public id `id`.
    async fn revoke(&self, id: &str) -> Result<(), AuthError>;
    /// Every token (oldest first), without secrets.
    async fn list(&self) -> Result<Vec<TokenInfo>, AuthError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_have_the_documented_shape() {
        let t = generate("acme", 1).unwrap();
        assert!(check_secret(&t.secret), "{}", t.secret);
        assert_eq!(t.info.id, token_hash(&t.secret)[..12]);
        assert_ne!(generate("acme", 1).unwrap().secret, t.secret);
        assert!(!check_secret("prv_xyz"));
        assert!(!check_secret(&t.secret.to_uppercase()));
        assert!(matches!(generate("Acme", 1), Err(AuthError::Invalid { field: "tenant", .. })));
        assert!(matches!(generate("-a", 1), Err(AuthError::Invalid { field: "tenant", .. })));
        assert!(matches!(generate("", 1), Err(AuthError::Invalid { field: "tenant", .. })));
        assert!(matches!(generate("a/b", 1), Err(AuthError::Invalid { field: "tenant", .. })));
    }

    #[test]
    fn bearer_headers_parse() {
        assert_eq!(bearer("Bearer abc"), Some("abc"));
        assert_eq!(bearer("bearer  abc "), Some("abc"));
        assert_eq!(bearer("Basic abc"), None);
        assert_eq!(bearer("abc"), None);
    }
}

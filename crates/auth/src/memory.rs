//! The in-process [`TokenStore`] (embedded mode, tests).

use std::collections::BTreeMap;
use std::sync::Mutex;

use async_trait::async_trait;

use crate::{check_secret, generate, now_ms, token_hash, AuthError, NewToken, TokenInfo, TokenStore};

#[derive(Default)]
pub struct MemoryTokenStore {
    /// Token hash → info.
    tokens: Mutex<BTreeMap<String, TokenInfo>>,
}

impl MemoryTokenStore {
    pub fn new() -> Self {
        Self::default()
    }
}

#[async_trait]
impl TokenStore for MemoryTokenStore {
    async fn create(&self, tenant: &str) -> Result<NewToken, AuthError> {
        let t = generate(tenant, now_ms())?;
        self.tokens.lock().expect("token mutex").insert(token_hash(&t.secret), t.info.clone());
        Ok(t)
    }

    async fn resolve(&self, secret: &str) -> Result<Option<String>, AuthError> {
        if !check_secret(secret) {
            return Ok(None);
        }
        Ok(self.tokens.lock().expect("token mutex").get(&token_hash(secret)).map(|i| i.tenant.clone()))
    }

    async fn revoke(&self, id: &str) -> Result<(), AuthError> {
        let mut g = self.tokens.lock().expect("token mutex");
        let before = g.len();
        g.retain(|_, i| i.id != id);
        if g.len() == before {
            return Err(AuthError::NotFound(id.into()));
        }
        Ok(())
    }

    async fn list(&self) -> Result<Vec<TokenInfo>, AuthError> {
        let mut v: Vec<TokenInfo> = self.tokens.lock().expect("token mutex").values().cloned().collect();
        v.sort_by(|a, b| (a.created_ms, &a.id).cmp(&(b.created_ms, &b.id)));
        Ok(v)
    }
}

//! Tokens read from a directory (a mounted Kubernetes Secret), and a chain of stores.
//!
//! [`DirTokenStore`]: each regular file whose name is a tenant holds that tenant's tokens, one
//! per line (two during a rotation). Names starting with '.' are skipped (a Secret volume keeps
//! its versions in `..data` and `..<timestamp>` entries). The directory is read again at most
//! once a second, on a lookup, so a token removed from the Secret stops working once the
//! kubelet has updated the volume; a file that does not parse is left out with a message
//! (returned by [`DirTokenStore::problems`]) rather than failing every call. Only the hashes are
//! kept in memory. Tokens here are managed by editing the Secret: create and revoke refuse.
//!
//! [`ChainTokenStore`]: several stores as one (e.g. Redis, then a directory): a token resolves
//! through the first store that knows it; create goes to the first store, revoke to the one
//! holding the id, list concatenates.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;

use crate::{check_secret, check_tenant, token_hash, token_id, AuthError, NewToken, TokenInfo, TokenStore};

/// How long a read of the directory is reused.
const RELOAD_EVERY: Duration = Duration::from_secs(1);

struct Loaded {
    at: Instant,
    /// Token hash → (tenant, id).
    tokens: HashMap<String, TokenInfo>,
    problems: Vec<String>,
}

pub struct DirTokenStore {
    dir: PathBuf,
    loaded: Mutex<Option<Loaded>>,
}

impl DirTokenStore {
    /// A store over `dir`; fails if it cannot be read now (a missing mount is a configuration
    /// error, not an empty token list).
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, AuthError> {
        let dir = dir.into();
        let s = Self { dir, loaded: Mutex::new(None) };
        s.with_loaded(|_| ())?;
        Ok(s)
    }

    /// Entries of the last read that were left out, and why.
    pub fn problems(&self) -> Result<Vec<String>, AuthError> {
        self.with_loaded(|l| l.problems.clone())
    }

    /// Runs `f` on a read of the directory at most [`RELOAD_EVERY`] old. A read that fails
    /// keeps the last good one in service (a transient error); with none, it is the error.
    fn with_loaded<T>(&self, f: impl FnOnce(&Loaded) -> T) -> Result<T, AuthError> {
        let mut g = self.loaded.lock().expect("token dir mutex");
        if g.as_ref().is_none_or(|l| l.at.elapsed() >= RELOAD_EVERY) {
            match read_dir(&self.dir) {
                Ok((tokens, problems)) => *g = Some(Loaded { at: Instant::now(), tokens, problems }),
                Err(e) if g.is_none() => return Err(e),
                Err(_) => {}
            }
        }
        Ok(f(g.as_ref().expect("loaded above")))
    }
}

fn read_dir(dir: &Path) -> Result<(HashMap<String, TokenInfo>, Vec<String>), AuthError> {
    let backend = |e: std::io::Error| AuthError::Backend(format!("token directory {}: {e}", dir.display()));
    let mut tokens = HashMap::new();
    let mut problems = Vec::new();
    let mut entries: Vec<_> = std::fs::read_dir(dir).map_err(backend)?.collect::<Result<_, _>>().map_err(backend)?;
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let name = e.file_name().to_string_lossy().to_string();
        if name.starts_with('.') {
            continue;
        }
        // Follows symlinks (a Secret volume's keys are links into `..data`).
        let path = e.path();
        if !std::fs::metadata(&path).map(|m| m.is_file()).unwrap_or(false) {
            continue;
        }
        if let Err(err) = check_tenant(&name) {
            problems.push(format!("{}: the file name must be a tenant: {err}", path.display()));
            continue;
        }
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(err) => {
                problems.push(format!("{}: {err}", path.display()));
                continue;
            }
        };
        for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
            let secret = line.trim();
            if !check_secret(secret) {
                problems.push(format!("{} line {}: not a token (prv_ and 64 lowercase hex digits)", path.display(), i + 1));
                continue;
            }
            let hash = token_hash(secret);
            let info = TokenInfo { id: token_id(&hash), tenant: name.clone(), created_ms: 0 };
            if let Some(other) = tokens.insert(hash, info) {
                problems.push(format!("{}: a token also listed for tenant {} (the later file wins)", path.display(), other.tenant));
            }
        }
    }
    Ok((tokens, problems))
}

#[async_trait]
impl TokenStore for DirTokenStore {
    async fn create(&self, _tenant: &str) -> Result<NewToken, AuthError> {
        Err(AuthError::Backend(format!("tokens in {} are managed by editing that directory (its Secret), not created here", self.dir.display())))
    }

    async fn resolve(&self, secret: &str) -> Result<Option<String>, AuthError> {
        if !check_secret(secret) {
            return Ok(None);
        }
        let hash = token_hash(secret);
        self.with_loaded(|l| l.tokens.get(&hash).map(|i| i.tenant.clone()))
    }

    async fn revoke(&self, id: &str) -> Result<(), AuthError> {
        if self.with_loaded(|l| l.tokens.values().any(|i| i.id == id))? {
            return Err(AuthError::Backend(format!(
                "token {id} comes from {}: remove it there (from its Secret) to revoke it",
                self.dir.display()
            )));
        }
        Err(AuthError::NotFound(id.into()))
    }

    async fn list(&self) -> Result<Vec<TokenInfo>, AuthError> {
        let mut v: Vec<TokenInfo> = self.with_loaded(|l| l.tokens.values().cloned().collect())?;
        v.sort_by(|a, b| (&a.tenant, &a.id).cmp(&(&b.tenant, &b.id)));
        Ok(v)
    }
}

/// Several token stores as one (see the module doc).
pub struct ChainTokenStore {
    stores: Vec<Arc<dyn TokenStore>>,
}

impl ChainTokenStore {
    /// `stores` in lookup order; at least one.
    pub fn new(stores: Vec<Arc<dyn TokenStore>>) -> Self {
        assert!(!stores.is_empty(), "a chain of no token stores");
        Self { stores }
    }
}

#[async_trait]
impl TokenStore for ChainTokenStore {
    async fn create(&self, tenant: &str) -> Result<NewToken, AuthError> {
        self.stores[0].create(tenant).await
    }

    /// A store that fails (Redis gone for a minute) does not hide a token another store knows
    /// (the operator's, from the directory); the failure is returned only if no store knew it.
    async fn resolve(&self, secret: &str) -> Result<Option<String>, AuthError> {
        let mut failed = None;
        for s in &self.stores {
            match s.resolve(secret).await {
                Ok(Some(t)) => return Ok(Some(t)),
                Ok(None) => {}
                Err(e) => failed = Some(e),
            }
        }
        failed.map_or(Ok(None), Err)
    }

    async fn revoke(&self, id: &str) -> Result<(), AuthError> {
        for s in &self.stores {
            match s.revoke(id).await {
                Err(AuthError::NotFound(_)) => continue,
                other => return other,
            }
        }
        Err(AuthError::NotFound(id.into()))
    }

    async fn list(&self) -> Result<Vec<TokenInfo>, AuthError> {
        let mut all = Vec::new();
        for s in &self.stores {
            all.extend(s.list().await?);
        }
        Ok(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{generate, MemoryTokenStore};

    fn block<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap().block_on(f)
    }

    #[test]
    fn a_directory_of_tenant_files_resolves_and_follows_edits() {
        let dir = tempfile::tempdir().unwrap();
        let (a1, a2, b) = (generate("acme", 0).unwrap(), generate("acme", 0).unwrap(), generate("beta", 0).unwrap());
        std::fs::write(dir.path().join("acme"), format!("{}\n\n{}\n", a1.secret, a2.secret)).unwrap();
        std::fs::write(dir.path().join("beta"), &b.secret).unwrap();
        // Left out, with a message: a bad tenant name, a line that is not a token; skipped
        // silently: dot entries (a Secret volume's `..data`).
        std::fs::write(dir.path().join("Bad Name"), &generate("x", 0).unwrap().secret).unwrap();
        std::fs::write(dir.path().join("gamma"), "prv_short\n").unwrap();
        std::fs::create_dir(dir.path().join("..data")).unwrap();
        std::fs::write(dir.path().join(".hidden"), &generate("x", 0).unwrap().secret).unwrap();
        let s = DirTokenStore::open(dir.path()).unwrap();
        block(async {
            assert_eq!(s.resolve(&a1.secret).await.unwrap().as_deref(), Some("acme"));
            assert_eq!(s.resolve(&a2.secret).await.unwrap().as_deref(), Some("acme"));
            assert_eq!(s.resolve(&b.secret).await.unwrap().as_deref(), Some("beta"));
            assert_eq!(s.resolve(&generate("acme", 0).unwrap().secret).await.unwrap(), None, "an unknown token");
            assert_eq!(s.resolve("prv_short").await.unwrap(), None);
            let listed = s.list().await.unwrap();
            assert_eq!(listed.iter().map(|i| i.tenant.as_str()).collect::<Vec<_>>(), ["acme", "acme", "beta"]);
            assert!(listed.iter().all(|i| !a1.secret.contains(&i.id) || i.id == a1.info.id), "ids, not secrets");
            let problems = s.problems().unwrap();
            assert_eq!(problems.len(), 2, "{problems:?}");
            assert!(problems.iter().any(|p| p.contains("Bad Name") && p.contains("tenant")), "{problems:?}");
            assert!(problems.iter().any(|p| p.contains("gamma line 1")), "{problems:?}");
            assert!(s.create("acme").await.is_err(), "managed by editing the directory");
            assert!(matches!(s.revoke(&a1.info.id).await, Err(AuthError::Backend(m)) if m.contains("remove it there")));
            assert!(matches!(s.revoke("000000000000").await, Err(AuthError::NotFound(_))));

            // Rotation: acme's first token removed from the file stops working after the
            // next read (at most a second later).
            std::fs::write(dir.path().join("acme"), &a2.secret).unwrap();
            tokio::time::sleep(RELOAD_EVERY + Duration::from_millis(50)).await;
            assert_eq!(s.resolve(&a1.secret).await.unwrap(), None, "a removed token is refused");
            assert_eq!(s.resolve(&a2.secret).await.unwrap().as_deref(), Some("acme"));
        });
        assert!(DirTokenStore::open(dir.path().join("missing")).is_err(), "a missing directory is an error");
    }

    #[test]
    fn a_chain_resolves_through_every_store() {
        let dir = tempfile::tempdir().unwrap();
        let op = generate("operator", 0).unwrap();
        std::fs::write(dir.path().join("operator"), &op.secret).unwrap();
        let mem: Arc<dyn TokenStore> = Arc::new(MemoryTokenStore::new());
        let files: Arc<dyn TokenStore> = Arc::new(DirTokenStore::open(dir.path()).unwrap());
        let chain = ChainTokenStore::new(vec![mem.clone(), files]);
        block(async {
            let made = chain.create("acme").await.unwrap();
            assert_eq!(mem.resolve(&made.secret).await.unwrap().as_deref(), Some("acme"), "created in the first store");
            assert_eq!(chain.resolve(&made.secret).await.unwrap().as_deref(), Some("acme"));
            assert_eq!(chain.resolve(&op.secret).await.unwrap().as_deref(), Some("operator"));
            assert_eq!(chain.list().await.unwrap().len(), 2);
            chain.revoke(&made.info.id).await.unwrap();
            assert_eq!(chain.resolve(&made.secret).await.unwrap(), None);
            assert!(matches!(chain.revoke(&op.info.id).await, Err(AuthError::Backend(_))), "the directory's token is revoked there");
            assert!(matches!(chain.revoke("000000000000").await, Err(AuthError::NotFound(_))));
        });
    }

    /// A store that is down (Redis gone) in front of the directory.
    struct Down;

    #[async_trait]
    impl TokenStore for Down {
        async fn create(&self, _: &str) -> Result<NewToken, AuthError> {
            Err(AuthError::Backend("down".into()))
        }
        async fn resolve(&self, _: &str) -> Result<Option<String>, AuthError> {
            Err(AuthError::Backend("down".into()))
        }
        async fn revoke(&self, _: &str) -> Result<(), AuthError> {
            Err(AuthError::Backend("down".into()))
        }
        async fn list(&self) -> Result<Vec<TokenInfo>, AuthError> {
            Err(AuthError::Backend("down".into()))
        }
    }

    #[test]
    fn a_store_that_is_down_hides_no_other_stores_token() {
        let dir = tempfile::tempdir().unwrap();
        let op = generate("operator", 0).unwrap();
        std::fs::write(dir.path().join("operator"), &op.secret).unwrap();
        let chain = ChainTokenStore::new(vec![Arc::new(Down), Arc::new(DirTokenStore::open(dir.path()).unwrap())]);
        block(async {
            assert_eq!(chain.resolve(&op.secret).await.unwrap().as_deref(), Some("operator"));
            let unknown = generate("acme", 0).unwrap().secret;
            assert!(matches!(chain.resolve(&unknown).await, Err(AuthError::Backend(_))), "unknown while a store is down: its error, not a refusal");
        });
    }
}

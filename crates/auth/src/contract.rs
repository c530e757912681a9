//! The [`TokenStore`] contract: every implementation must pass these. Tenants are made unique
//! per run by the caller's prefix, so cases can share one Redis server.

use crate::{AuthError, TokenStore};

/// A token resolves to its tenant; other tokens, malformed ones and lookalikes do not.
pub async fn tokens_resolve_to_their_tenant(s: &dyn TokenStore, p: &str) {
    let a = s.create(&format!("{p}-a")).await.unwrap();
    let b = s.create(&format!("{p}-b")).await.unwrap();
    assert_eq!(s.resolve(&a.secret).await.unwrap(), Some(format!("{p}-a")));
    assert_eq!(s.resolve(&b.secret).await.unwrap(), Some(format!("{p}-b")));
    // One digit changed: a different (unknown) token.
    let mut forged = a.secret.clone();
    let last = forged.pop().unwrap();
    forged.push(if last == '0' { '1' } else { '0' });
    assert_eq!(s.resolve(&forged).await.unwrap(), None);
    for bad in ["", "prv_", "Bearer x", &a.info.id, &a.secret[4..]] {
        assert_eq!(s.resolve(bad).await.unwrap(), None, "{bad:?}");
    }
    assert!(matches!(s.create("Not A Tenant").await, Err(AuthError::Invalid { field: "tenant", .. })));
}

/// A revoked token stops resolving at once; the others keep working; the listing follows.
pub async fn revoked_tokens_stop_working(s: &dyn TokenStore, p: &str) {
    let tenant = format!("{p}-r");
    let a = s.create(&tenant).await.unwrap();
    let b = s.create(&tenant).await.unwrap();
    let listed: Vec<_> = s.list().await.unwrap().into_iter().filter(|i| i.tenant == tenant).collect();
    assert_eq!(listed.len(), 2);
    let mut ids: Vec<_> = listed.iter().map(|i| i.id.clone()).collect();
    ids.sort();
    let mut want = vec![a.info.id.clone(), b.info.id.clone()];
    want.sort();
    assert_eq!(ids, want, "the listing shows ids, not secrets");
    s.revoke(&a.info.id).await.unwrap();
    assert_eq!(s.resolve(&a.secret).await.unwrap(), None);
    assert_eq!(s.resolve(&b.secret).await.unwrap(), Some(tenant.clone()));
    assert_eq!(s.revoke(&a.info.id).await, Err(AuthError::NotFound(a.info.id.clone())));
    let listed: Vec<_> = s.list().await.unwrap().into_iter().filter(|i| i.tenant == tenant).collect();
    assert_eq!(listed.iter().map(|i| i.id.clone()).collect::<Vec<_>>(), vec![b.info.id.clone()]);
}

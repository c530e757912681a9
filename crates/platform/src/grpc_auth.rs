//! Authentication before a request's body is read (issue 32, review finding D1).
//!
//! tonic decodes a unary request's body (up to [`crate::grpc::MAX_REQUEST_BYTES`], which prost
//! may expand up to [`api::MAX_DECODED_PER_ENCODED_BYTE`] times in memory) before the handler
//! runs, so a token checked inside the handler is checked too late: one unauthenticated 8 MiB
//! request could take 300 MiB of the planner's memory.
//! [`Authenticated`] wraps the service: it resolves the `authorization: Bearer <token>` header
//! first, answers `UNAUTHENTICATED` without touching the body when it is missing or unknown,
//! and otherwise hands the request on with the caller's [`Tenant`] in its extensions, where
//! [`crate::grpc::JobServiceImpl`] reads it.
//!
//! **Delegation** (issue 32: one tenant per namespace for the operator). The one tenant named by
//! `--delegating-tenant` (the chart's operator) may act for another tenant by sending
//! [`ON_BEHALF_OF`]`: <tenant>`: the operator sends the ProofJob's namespace, so each namespace
//! is a tenant of its own (its quota, jobs, base jobs, uploads and circuits), and a ProofJob in
//! namespace A cannot reach namespace B's jobs whatever its status says. The header from any
//! other caller is refused (`PERMISSION_DENIED`), never ignored.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::codegen::{http, Service};
use tonic::server::NamedService;
use tonic::Status;

use crate::budget::{Held, Metered, RequestBudget};

/// The header by which the delegating tenant names the tenant it acts for.
pub const ON_BEHALF_OF: &str = "x-prover-tenant";

/// The tenant a request's token resolved to (an extension of the request).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tenant(pub String);

/// The error every call without a valid token gets.
pub(crate) fn denied() -> Status {
    Status::unauthenticated("a valid API token is required: send `authorization: Bearer <token>` (prover --token / PROVER_TOKEN)")
}

/// Who may act for other tenants ([`ON_BEHALF_OF`]).
#[derive(Clone, Debug, Default)]
pub struct Delegation {
    /// The tenant allowed to (`--delegating-tenant`); none: nobody.
    pub delegator: Option<String>,
}

/// The tenant of a call under `tokens`: its `authorization` header's, or, for the delegating
/// tenant, the one its [`ON_BEHALF_OF`] header names.
pub(crate) async fn resolve(
    tokens: &dyn auth::TokenStore,
    delegation: &Delegation,
    headers: &http::HeaderMap,
) -> Result<String, Status> {
    let secret = headers.get(http::header::AUTHORIZATION).and_then(|h| h.to_str().ok()).and_then(auth::bearer).ok_or_else(denied)?;
    let tenant = match tokens.resolve(secret).await {
        Ok(Some(tenant)) => tenant,
        Ok(None) => return Err(denied()),
        Err(e) => return Err(Status::unavailable(e.to_string())),
    };
    let Some(other) = headers.get(ON_BEHALF_OF) else { return Ok(tenant) };
    if delegation.delegator.as_deref() != Some(tenant.as_str()) {
        return Err(Status::permission_denied(format!(
            "{ON_BEHALF_OF}: tenant {tenant:?} may not act for another tenant (only the --delegating-tenant may)"
        )));
    }
    let other = other.to_str().map_err(|_| Status::invalid_argument(format!("{ON_BEHALF_OF}: not printable ASCII")))?;
    delegated_tenant(other).map_err(|e| Status::invalid_argument(format!("{ON_BEHALF_OF}: {e}")))
}

/// What a delegated tenant's name starts with: the tenant of namespace `X` is `ns-X`.
pub const DELEGATED_PREFIX: &str = "ns-";

/// The tenant the delegating tenant acts for when it names `namespace` (a Kubernetes namespace):
/// `ns-<namespace>`, in a name space of its own. Named verbatim, namespace `acme` was API
/// tenant `acme` (its quota, uploads, circuits and jobs, both ways), and namespace `operator`
/// the delegator itself. An API tenant is never named `ns-…` unless an administrator makes a
/// token for one on purpose (to read that namespace's outputs over the API).
pub fn delegated_tenant(namespace: &str) -> Result<String, auth::AuthError> {
    auth::check_tenant(namespace)?;
    let tenant = format!("{DELEGATED_PREFIX}{namespace}");
    auth::check_tenant(&tenant)?;
    Ok(tenant)
}

/// A gRPC service whose calls are authenticated before their bodies are read (see the module
/// doc). Without a token store it passes every call on unchanged (an open API).
/// Calls that pass go on with their bodies metered against the planner's request budget
/// ([`crate::budget`]).
#[derive(Clone)]
pub struct Authenticated<S> {
    inner: S,
    tokens: Option<Arc<dyn auth::TokenStore>>,
    delegation: Arc<Delegation>,
    budget: Arc<RequestBudget>,
}

impl<S> Authenticated<S> {
    pub fn new(inner: S, tokens: Option<Arc<dyn auth::TokenStore>>, delegation: Delegation, budget: Arc<RequestBudget>) -> Self {
        Self { inner, tokens, delegation: Arc::new(delegation), budget }
    }
}

/// `request` with its body metered; the reservation it holds, kept by the caller until the
/// call has answered.
fn metered(request: http::Request<Body>, budget: &Arc<RequestBudget>, tenant: &str) -> (http::Request<Body>, Held) {
    let held = Held::default();
    let method = request.uri().path().to_string();
    let (parts, body) = request.into_parts();
    let body = Body::new(Metered::new(body, budget.clone(), held.clone(), method, tenant.to_string()));
    (http::Request::from_parts(parts, body), held)
}

impl<S: NamedService> NamedService for Authenticated<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> Service<http::Request<Body>> for Authenticated<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<http::Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        let budget = self.budget.clone();
        let Some(tokens) = self.tokens.clone() else {
            // An open API: its callers share one tenant's share of the budget.
            let (request, held) = metered(request, &budget, "");
            let call = self.inner.call(request);
            return Box::pin(async move {
                let answer = call.await;
                drop(held);
                answer
            });
        };
        let delegation = self.delegation.clone();
        // The clone that was made ready goes to this call; the fresh clone stays for the next.
        let clone = self.inner.clone();
        let mut inner = std::mem::replace(&mut self.inner, clone);
        Box::pin(async move {
            match resolve(tokens.as_ref(), &delegation, request.headers()).await {
                Ok(tenant) => {
                    let (mut request, held) = metered(request, &budget, &tenant);
                    request.extensions_mut().insert(Tenant(tenant));
                    let answer = inner.call(request).await;
                    drop(held);
                    answer
                }
                // The body is dropped unread.
                Err(status) => Ok(status.into_http()),
            }
        })
    }
}

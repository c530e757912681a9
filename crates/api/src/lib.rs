//! Generated types, client and server for the `prover.v1` gRPC API (`proto/prover/v1/jobs.proto`).

#![allow(clippy::all)]

pub use prost;

/// Largest request message the server decodes and the CLI sends: inline leaves of a 2^19-leaf
/// tree fit; larger inputs go through the object store (`leaves.object_key`; the CLI uploads
/// them itself).
pub const MAX_REQUEST_BYTES: usize = 8 << 20;

/// Largest response message (a `GetBundle` of 65,536 proofs with their public signals).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

/// Bytes of memory decoding a request message may take per byte received, at most: the worst
/// case is a repeated field of two-byte elements that decode to 24-byte values, just past a
/// power of two, when the growing `Vec` holds its old buffer and a new one twice as large (up
/// to three times the elements); measured by `tests/decoded_size.rs`, which fails if a request
/// field exceeds it. The planner reserves `(1 + this) ×` a message's size of its request budget
/// before reading the message.
pub const MAX_DECODED_PER_ENCODED_BYTE: usize = 36;

/// Bytes of memory decoding an `UploadChunk` (an `UploadInput` message: a name, a size and the
/// bytes) takes per byte received, at most: prost holds two copies of its bytes at the peak
/// (measured by `tests/decoded_size.rs`: 2.000). The planner charges upload chunks by it rather
/// than by [`MAX_DECODED_PER_ENCODED_BYTE`].
pub const UPLOAD_DECODED_PER_ENCODED_BYTE: usize = 2;

/// Adds `authorization: Bearer <token>` to every call of a client (the CLI's and the
/// operator's `--token`).
#[derive(Clone, Default)]
pub struct Bearer(Option<tonic::metadata::MetadataValue<tonic::metadata::Ascii>>);

impl Bearer {
    /// For `token` (`--token` / PROVER_TOKEN); none or a blank one sends no header.
    pub fn new(token: Option<&str>) -> Result<Self, String> {
        match token.map(str::trim).filter(|t| !t.is_empty()) {
            Some(t) => Ok(Self(Some(format!("Bearer {t}").parse().map_err(|_| "invalid --token (PROVER_TOKEN): not printable ASCII".to_string())?))),
            None => Ok(Self(None)),
        }
    }
}

impl tonic::service::Interceptor for Bearer {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(v) = &self.0 {
            request.metadata_mut().insert("authorization", v.clone());
        }
        Ok(request)
    }
}

/// A JobService client that sends a [`Bearer`] token.
pub type AuthedClient = v1::job_service_client::JobServiceClient<tonic::service::interceptor::InterceptedService<tonic::transport::Channel, Bearer>>;

/// A client endpoint for `url` (the CLI's and the operator's `--endpoint`): an `https://` URL
/// gets TLS trusting the PEM CA certificate at `ca`, or the system's roots without one; a CA with
/// a plaintext URL is refused (the caller meant TLS). Errors name the flag.
pub fn endpoint(url: &str, ca: Option<&std::path::Path>) -> Result<tonic::transport::Endpoint, String> {
    let ep = tonic::transport::Endpoint::from_shared(url.to_string()).map_err(|e| format!("invalid --endpoint {url:?}: {e}"))?;
    if !url.starts_with("https://") {
        return match ca {
            Some(_) => Err(format!("--ca is given but --endpoint {url:?} is not https://")),
            None => Ok(ep),
        };
    }
    let tls = match ca {
        Some(path) => {
            let pem = std::fs::read(path).map_err(|e| format!("reading --ca {}: {e}", path.display()))?;
            tonic::transport::ClientTlsConfig::new().ca_certificate(tonic::transport::Certificate::from_pem(pem))
        }
        None => tonic::transport::ClientTlsConfig::new().with_native_roots(),
    };
    ep.tls_config(tls).map_err(|e| format!("TLS settings (--ca): {e}"))
}

/// The endpoint a client uses when none is given.
pub const DEFAULT_ENDPOINT: &str = "http://127.0.0.1:50051";

/// How a client reaches the planner: one definition of the `--endpoint`, `--token` and `--ca`
/// flags (and their `PROVER_*` variables) for the CLI, the operator and the load test.
#[derive(Clone, Debug, Default)]
#[cfg_attr(feature = "clap", derive(clap::Args))]
pub struct ClientArgs {
    /// The planner's gRPC address (`https://` for TLS). The CLI defaults to
    /// http://127.0.0.1:50051; the operator runs no ProofJob controller without one; the load
    /// test uses its scenario's.
    #[cfg_attr(feature = "clap", arg(long, env = "PROVER_ENDPOINT", global = true))]
    pub endpoint: Option<String>,
    /// Your tenant's API token (`prover admin token create`), sent as a bearer token.
    #[cfg_attr(feature = "clap", arg(long, env = "PROVER_TOKEN", hide_env_values = true, global = true))]
    pub token: Option<String>,
    /// PEM CA certificate that signed the planner's TLS certificate (an `https://` endpoint;
    /// without it the system's roots are used).
    #[cfg_attr(feature = "clap", arg(long, env = "PROVER_CA", global = true))]
    pub ca: Option<std::path::PathBuf>,
    /// Send `--token` over a plaintext (`http://`) endpoint on another host anyway. Without it
    /// the CLI refuses: anyone on the path would read the token and act as your tenant.
    #[cfg_attr(feature = "clap", arg(long, env = "PROVER_INSECURE", global = true))]
    pub insecure: bool,
}

/// Refuses to send a bearer `token` in plaintext (an `http://` `url`) to a host other than this
/// machine's loopback, unless `insecure` (`--insecure`) says the caller means it. A TLS endpoint
/// or a call without a token passes.
pub fn check_plaintext_token(url: &str, token: Option<&str>, insecure: bool) -> Result<(), String> {
    if insecure || token.map_or(true, |t| t.trim().is_empty()) || url.starts_with("https://") {
        return Ok(());
    }
    let uri: tonic::codegen::http::Uri = url.parse().map_err(|e| format!("invalid --endpoint {url:?}: {e}"))?;
    let host = uri.host().unwrap_or("").trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    if loopback {
        return Ok(());
    }
    Err(format!(
        "refusing to send --token (PROVER_TOKEN) in plaintext to {host:?}: use an https:// --endpoint \
         (with --ca if its certificate is private), or pass --insecure (PROVER_INSECURE=true) if the path is trusted"
    ))
}

impl ClientArgs {
    /// The endpoint given, or [`DEFAULT_ENDPOINT`].
    pub fn url(&self) -> &str {
        self.endpoint.as_deref().unwrap_or(DEFAULT_ENDPOINT)
    }

    /// A client of the endpoint at `url` (TLS and token from these flags) over `channel`'s
    /// settings; requests up to [`MAX_REQUEST_BYTES`], responses up to [`MAX_MESSAGE_BYTES`].
    /// Connects on first use.
    pub fn client_lazy(&self, url: &str) -> Result<AuthedClient, String> {
        let bearer = Bearer::new(self.token.as_deref())?;
        let channel = endpoint(url, self.ca.as_deref())?.connect_timeout(std::time::Duration::from_secs(10)).connect_lazy();
        Ok(Self::wrap(channel, bearer))
    }

    /// [`check_plaintext_token`] for these flags: the CLI's guard before it connects.
    pub fn check_transport(&self) -> Result<(), String> {
        check_plaintext_token(self.url(), self.token.as_deref(), self.insecure)
    }

    /// A client of [`ClientArgs::url`], connected now (errors name the flag or the address).
    pub async fn connect(&self) -> Result<AuthedClient, String> {
        let bearer = Bearer::new(self.token.as_deref())?;
        let url = self.url();
        let channel = endpoint(url, self.ca.as_deref())?.connect().await.map_err(|e| format!("connecting to {url}: {e}"))?;
        Ok(Self::wrap(channel, bearer))
    }

    fn wrap(channel: tonic::transport::Channel, bearer: Bearer) -> AuthedClient {
        v1::job_service_client::JobServiceClient::with_interceptor(channel, bearer)
            .max_decoding_message_size(MAX_MESSAGE_BYTES)
            .max_encoding_message_size(MAX_REQUEST_BYTES)
    }
}

pub mod v1 {
    tonic::include_proto!("prover.v1");

    /// Encoded `FileDescriptorSet` of the API, for gRPC server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prover_v1_descriptor.bin"));
}

#[cfg(test)]
mod tests {
    use super::check_plaintext_token as check;

    /// Issue 32: a token never leaves in plaintext for another host unless the caller says so.
    #[test]
    fn tokens_are_not_sent_in_plaintext_to_other_hosts() {
        for url in ["http://planner.example.com:50051", "http://10.0.0.7:50051", "http://[2001:db8::1]:50051"] {
            let e = check(url, Some("tok"), false).unwrap_err();
            assert!(e.contains("--insecure") && e.contains("https://"), "{url}: {e}");
            check(url, Some("tok"), true).unwrap();
            check(url, None, false).unwrap();
            check(url, Some("  "), false).unwrap();
        }
        for url in ["http://127.0.0.1:50051", "http://localhost:50051", "http://[::1]:50051", "https://planner.example.com"] {
            check(url, Some("tok"), false).unwrap();
        }
    }
}

//! Generated types, client and server for the `prover.v1` gRPC API (`proto/prover/v1/jobs.proto`).

#![allow(clippy::all)]

pub use prost;

/// Largest gRPC message the server decodes and the CLI sends: inline leaves of a 2^22-leaf tree
/// fit; larger inputs go through the object store (`leaves.object_key`).
pub const MAX_MESSAGE_BYTES: usize = 64 << 20;

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

pub mod v1 {
    tonic::include_proto!("prover.v1");

    /// Encoded `FileDescriptorSet` of the API, for gRPC server reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/prover_v1_descriptor.bin"));
}

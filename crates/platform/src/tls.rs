//! The gRPC port's TLS (rustls, aws-lc-rs), with the certificate and key re-read when their
//! files change: a cert-manager renewal (a Secret update the kubelet projects into the pod) or a
//! `cp` of new files takes effect on the next handshake, without a restart.
//!
//! Each handshake looks at the files' modification times at most once a second; when either
//! changed, both are read and parsed again. A pair that does not load (a half-written file, a
//! key that does not match) is logged and the previous pair kept, so a bad rotation never takes
//! the port down. Connections are accepted on one task and each handshake runs on its own (with
//! a 10 s limit), so a slow or silent client holds up no one.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::server::TlsStream;

/// Reads a PEM certificate chain and private key into a signing identity.
pub fn load_pair(cert: &Path, key: &Path) -> Result<CertifiedKey, String> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(cert)
        .map_err(|e| format!("--tls-cert {}: {e}", cert.display()))?
        .collect::<Result<_, _>>()
        .map_err(|e| format!("--tls-cert {}: {e}", cert.display()))?;
    if certs.is_empty() {
        return Err(format!("--tls-cert {}: no certificate in the PEM file", cert.display()));
    }
    let key_der = PrivateKeyDer::from_pem_file(key).map_err(|e| format!("--tls-key {}: {e}", key.display()))?;
    let provider = rustls::crypto::aws_lc_rs::default_provider();
    let ck = CertifiedKey::from_der(certs, key_der, &provider).map_err(|e| format!("--tls-cert/--tls-key: {e}"))?;
    Ok(ck)
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The current certificate, reloaded when its files change (see the module doc).
#[derive(Debug)]
pub struct ReloadingCert {
    cert: PathBuf,
    key: PathBuf,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    current: Arc<CertifiedKey>,
    stamps: (Option<SystemTime>, Option<SystemTime>),
    checked: Instant,
}

impl ReloadingCert {
    /// Loads the pair now: an error here is a configuration error (the process does not start).
    pub fn new(cert: PathBuf, key: PathBuf) -> Result<Self, String> {
        let current = Arc::new(load_pair(&cert, &key)?);
        let stamps = (mtime(&cert), mtime(&key));
        Ok(Self { cert, key, state: Mutex::new(State { current, stamps, checked: Instant::now() }) })
    }

    /// The pair to present now, re-read first if the files changed.
    pub fn current(&self) -> Arc<CertifiedKey> {
        let mut s = self.state.lock().expect("certificate state");
        if s.checked.elapsed() >= Duration::from_secs(1) {
            s.checked = Instant::now();
            let stamps = (mtime(&self.cert), mtime(&self.key));
            if stamps != s.stamps {
                match load_pair(&self.cert, &self.key) {
                    Ok(ck) => {
                        s.current = Arc::new(ck);
                        s.stamps = stamps;
                        tracing::info!(cert = %self.cert.display(), "TLS certificate reloaded");
                    }
                    // Keep serving the old pair; try again on a later handshake.
                    Err(e) => tracing::warn!(error = %e, "TLS certificate changed but does not load; keeping the previous one"),
                }
            }
        }
        s.current.clone()
    }
}

impl ResolvesServerCert for ReloadingCert {
    fn resolve(&self, _hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(self.current())
    }
}

/// The server's rustls configuration: HTTP/2 only, the certificate from `resolver`.
pub fn server_config(resolver: Arc<ReloadingCert>) -> Result<rustls::ServerConfig, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_cert_resolver(resolver);
    cfg.alpn_protocols = vec![b"h2".to_vec()];
    Ok(cfg)
}

/// TLS connections accepted on `listener`, for `serve_with_incoming`: a TCP accept loop that
/// hands each handshake to a task of its own. Ends when the receiver is dropped.
pub fn incoming(
    listener: TcpListener,
    cfg: rustls::ServerConfig,
) -> tokio_stream::wrappers::ReceiverStream<Result<TlsStream<tokio::net::TcpStream>, std::io::Error>> {
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(cfg));
    let (tx, rx) = tokio::sync::mpsc::channel(64);
    tokio::spawn(async move {
        loop {
            let (tcp, peer) = match listener.accept().await {
                Ok(c) => c,
                Err(e) => {
                    tracing::warn!(error = %e, "accept");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            };
            if tx.is_closed() {
                return;
            }
            let (acceptor, tx) = (acceptor.clone(), tx.clone());
            tokio::spawn(async move {
                match tokio::time::timeout(Duration::from_secs(10), acceptor.accept(tcp)).await {
                    Ok(Ok(tls)) => {
                        let _ = tx.send(Ok(tls)).await;
                    }
                    Ok(Err(e)) => tracing::debug!(%peer, error = %e, "TLS handshake failed"),
                    Err(_) => tracing::debug!(%peer, "TLS handshake timed out"),
                }
            });
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

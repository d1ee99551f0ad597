//! The TLS machinery behind [`TlsOptions`] (the `tls` feature): the
//! options read into zookeeper-client's and a rustls config, and the probe
//! that names why a secure connect fails.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, CertificateRevocationListDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use zookeeper_client as zk;

use super::{tls_error, Secret, TlsOptions};
use crate::error::{Error, Result};

/// Refuses a TLS host rustls cannot name: zookeeper-client checks the
/// certificate against each host as a rustls `ServerName` and panics on one
/// that resolves but is neither a DNS name nor an IP address in full (`127.1`).
pub(crate) fn check_tls_hosts(connect: &str, hosts: &[(String, u16)]) -> Result<()> {
    match hosts.iter().find(|(host, _)| ServerName::try_from(host.as_str()).is_err()) {
        Some((host, _)) => Err(Error::InvalidConnectString {
            connect: connect.to_owned(),
            reason: format!(
                "with TLS, each host must be a DNS name or a full IP address to check the certificate against: \
                 {host:?} is neither (write 127.0.0.1, not 127.1)"
            ),
        }),
        None => Ok(()),
    }
}

/// The system's CA certificates as PEM, as rustls-native-certs finds them on
/// each platform: OpenSSL's files and folders on Unix (`SSL_CERT_FILE` and
/// `SSL_CERT_DIR` first), the certificate store on Windows, the keychain on macOS.
fn system_ca() -> Result<String> {
    use base64::Engine;
    let found = rustls_native_certs::load_native_certs();
    if found.certs.is_empty() {
        let why = found.errors.first().map(|e| format!(" ({e})")).unwrap_or_default();
        return Err(tls_error(format!(
            "no `ca` given and no system CA certificates found{why}: pass the servers' CA as `ca`"
        )));
    }
    let mut pem = String::new();
    for cert in &found.certs {
        let text = base64::engine::general_purpose::STANDARD.encode(cert.as_ref());
        pem.push_str("-----BEGIN CERTIFICATE-----\n");
        for line in text.as_bytes().chunks(64) {
            pem.push_str(std::str::from_utf8(line).expect("base64 is ASCII"));
            pem.push('\n');
        }
        pem.push_str("-----END CERTIFICATE-----\n");
    }
    Ok(pem)
}

/// The TLS options read and checked: zookeeper-client's, and a rustls
/// config that verifies the same way for [`Probe`].
pub(crate) struct PreparedTls {
    pub zk: zk::TlsOptions,
    pub probe: Arc<ClientConfig>,
}

impl TlsOptions {
    /// Reads the files (again at each new session, so renewed certificates
    /// are picked up) and checks them before any network call.
    pub(crate) fn prepare(&self) -> Result<PreparedTls> {
        self.validate()?;
        let ca = match &self.ca {
            Some(ca) => ca.read("ca")?,
            None => system_ca()?,
        };
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(ca.as_bytes()) {
            let cert = cert.map_err(|e| tls_error(format!("ca is not valid PEM: {e}")))?;
            // Like zookeeper-client: a certificate webpki cannot use as an anchor is skipped.
            let _ = roots.add(cert);
        }
        if roots.is_empty() {
            return Err(tls_error("ca holds no usable CA certificate"));
        }
        let crls: Vec<CertificateRevocationListDer<'static>> =
            CertificateRevocationListDer::pem_slice_iter(ca.as_bytes())
                .collect::<std::result::Result<_, _>>()
                .map_err(|e| tls_error(format!("ca has an unreadable CRL: {e}")))?;
        let mut zk_options = zk::TlsOptions::new().with_pem_ca(&ca).map_err(|e| tls_error(format!("ca: {e}")))?;
        if !self.check_hostname {
            // SAFETY (zookeeper-client's `unsafe` marks a risk, not memory
            // unsafety): the chain is still verified against `ca`.
            zk_options = unsafe { zk_options.with_no_hostname_verification() };
        }
        let identity = match &self.certfile {
            None => None,
            Some(certfile) => {
                let cert_pem = certfile.read("certfile")?;
                let key_pem = match &self.keyfile {
                    Some(keyfile) => keyfile.read("keyfile")?,
                    None => cert_pem.clone(),
                };
                let key_pem = decrypt_key(&key_pem, self.keyfile_password.as_ref())?;
                let chain: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
                    .collect::<std::result::Result<_, _>>()
                    .map_err(|e| tls_error(format!("certfile is not valid PEM: {e}")))?;
                if chain.is_empty() {
                    return Err(tls_error("certfile holds no certificate"));
                }
                let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
                    .map_err(|_| tls_error("no private key for certfile: give keyfile (PEM)"))?;
                zk_options = zk_options
                    .with_pem_identity(&cert_pem, &key_pem)
                    .map_err(|_| tls_error("certfile or keyfile is not usable PEM"))?;
                Some((chain, key))
            }
        };
        let provider = ClientConfig::builder().crypto_provider().clone();
        let anchors = roots.clone();
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .with_crls(crls)
            .build()
            .map_err(|e| tls_error(format!("ca: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> =
            if self.check_hostname { verifier } else { Arc::new(AnyHostName(verifier)) };
        // As zookeeper-client's own: a self-signed server certificate given as `ca` is trusted.
        let verifier = Arc::new(zk::TrustedSelfSigned::new(verifier, anchors, self.check_hostname));
        let builder = ClientConfig::builder().dangerous().with_custom_certificate_verifier(verifier);
        let probe = match identity {
            None => builder.with_no_client_auth(),
            Some((chain, key)) => builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| tls_error(format!("certfile and keyfile do not make a client identity: {e}")))?,
        };
        Ok(PreparedTls { zk: zk_options, probe: Arc::new(probe) })
    }
}

/// The key as unencrypted PEM. rustls reads only unencrypted keys; an
/// encrypted PKCS#8 one is decrypted here with the password.
fn decrypt_key(pem: &str, password: Option<&Secret>) -> Result<String> {
    const BEGIN: &str = "-----BEGIN ENCRYPTED PRIVATE KEY-----";
    const END: &str = "-----END ENCRYPTED PRIVATE KEY-----";
    if pem.contains("Proc-Type: 4,ENCRYPTED") {
        return Err(tls_error(
            "keyfile is encrypted the legacy OpenSSL way, which zoolock cannot read: \
             convert it with `openssl pkcs8 -topk8 -v2 aes-256-cbc`",
        ));
    }
    let Some(start) = pem.find(BEGIN) else { return Ok(pem.to_owned()) };
    let end =
        pem[start..].find(END).map(|e| start + e + END.len()).ok_or_else(|| tls_error("keyfile: unterminated PEM"))?;
    let password = password.ok_or_else(|| tls_error("keyfile is encrypted: keyfile_password is needed"))?;
    let (_, der) = pkcs8::der::pem::decode_vec(pem[start..end].as_bytes())
        .map_err(|e| tls_error(format!("keyfile is not valid PEM: {e}")))?;
    let encrypted = pkcs8::EncryptedPrivateKeyInfo::try_from(der.as_slice())
        .map_err(|e| tls_error(format!("keyfile is not an encrypted PKCS#8 key: {e}")))?;
    let key = encrypted
        .decrypt(password.expose())
        .map_err(|_| tls_error("keyfile_password does not decrypt keyfile (or its cipher is not supported)"))?;
    let key = key.to_pem("PRIVATE KEY", pkcs8::LineEnding::LF).map_err(|e| tls_error(format!("keyfile: {e}")))?;
    Ok(key.to_string())
}

/// `check_hostname=false`: the chain is verified, the name is not (as
/// zookeeper-client's own verifier does then).
#[derive(Debug)]
struct AnyHostName(Arc<WebPkiServerVerifier>);

impl ServerCertVerifier for AnyHostName {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        match self.0.verify_server_cert(end_entity, intermediates, server_name, ocsp, now) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        self.0.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.supported_verify_schemes()
    }
}

/// Names why a connect is failing. zookeeper-client retries a refused TLS
/// handshake (or a peer that hangs up) until its deadline and keeps the
/// reason to itself, so a connect that has not succeeded after
/// [`Probe::DELAY`] gets one TLS handshake of our own per host, with the same
/// certificates: a TLS session against each host for a TLS connect, and for
/// a plain one a ClientHello, to see whether the host answers in TLS.
///
/// Only a refusal no retry can mend ends the connect early: a certificate
/// refused by either side. A TLS answer to a plain connect does not (a server
/// with `client.portUnification` answers both), nor does a hang-up during
/// the handshake (a server at `maxClientCnxns` hangs up too): those only
/// name the reason when the connect times out.
pub(crate) struct Probe {
    hosts: Vec<(String, u16)>,
    tls: Option<Arc<ClientConfig>>,
    findings: Mutex<Vec<String>>,
}

/// What one host's probe found.
struct Finding {
    reason: String,
    /// Retrying cannot mend it.
    lasting: bool,
}

impl Probe {
    /// A healthy connect (plain or TLS, on loopback or a LAN) is done long
    /// before this, so healthy connects never see a probe.
    const DELAY: Duration = Duration::from_secs(1);

    pub fn new(hosts: Vec<(String, u16)>, tls: Option<Arc<ClientConfig>>) -> Probe {
        Probe { hosts, tls, findings: Mutex::default() }
    }

    /// What the probes found wrong so far, host by host.
    pub fn finding(&self) -> Option<String> {
        let findings = self.findings.lock().unwrap();
        (!findings.is_empty()).then(|| findings.join("; "))
    }

    /// Resolves once every host refused a certificate; never otherwise.
    /// `within` is the connect timeout: the probe waits at most a quarter of it.
    pub async fn every_host_refuses(&self, within: Duration) -> String {
        tokio::time::sleep(Self::DELAY.min(within / 4)).await;
        let mut probes = tokio::task::JoinSet::new();
        for (host, port) in self.hosts.clone() {
            let tls = self.tls.clone();
            probes.spawn(async move {
                diagnose(&host, port, tls)
                    .await
                    .map(|f| Finding { reason: format!("{host}:{port}: {}", f.reason), ..f })
            });
        }
        let mut refused = 0;
        while let Some(result) = probes.join_next().await {
            if let Ok(Some(finding)) = result {
                refused += usize::from(finding.lasting);
                self.findings.lock().unwrap().push(finding.reason);
            }
        }
        if refused < self.hosts.len() {
            std::future::pending::<()>().await;
        }
        self.finding().unwrap_or_default()
    }
}

/// Why `host:port` does not take this client, if the probe can tell.
async fn diagnose(host: &str, port: u16, tls: Option<Arc<ClientConfig>>) -> Option<Finding> {
    let mut stream = TcpStream::connect((host, port)).await.ok()?;
    let name = ServerName::try_from(host.to_owned()).ok()?;
    let Some(config) = tls else {
        // A plain connect: send a ClientHello and see whether the answer is TLS.
        let config = ClientConfig::builder().with_root_certificates(RootCertStore::empty()).with_no_client_auth();
        let mut conn = rustls::ClientConnection::new(Arc::new(config), name).ok()?;
        let mut hello = Vec::new();
        conn.write_tls(&mut hello).ok()?;
        stream.write_all(&hello).await.ok()?;
        let mut head = [0u8; 2];
        stream.read_exact(&mut head).await.ok()?;
        // A TLS record: handshake (22) or alert (21), version 3.x.
        return (matches!(head[0], 21 | 22) && head[1] == 3).then(|| Finding {
            reason: "the server speaks TLS on this port (a secureClientPort): connect with TLS options (kazoo's use_ssl=True)"
                .to_owned(),
            lasting: false,
        });
    };
    let mut conn = rustls::ClientConnection::new(config, name).ok()?;
    let mut buf = vec![0u8; 16 * 1024];
    let mut handshake_done = false;
    loop {
        while conn.wants_write() {
            let mut out = Vec::new();
            conn.write_tls(&mut out).ok()?;
            stream.write_all(&out).await.ok()?;
        }
        if !conn.is_handshaking() && !handshake_done {
            handshake_done = true;
        }
        let read = if handshake_done {
            // TLS 1.3: a server refuses the client's certificate only after
            // the client has finished; its alert follows at once.
            match tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buf)).await {
                Err(_) => return None,
                Ok(read) => read,
            }
        } else {
            stream.read(&mut buf).await
        };
        let n = match read {
            Ok(0) | Err(_) if handshake_done => return None,
            Ok(0) | Err(_) => {
                return Some(Finding {
                    reason: "the server hung up during the TLS handshake: is this a plaintext clientPort, \
                             not the secureClientPort?"
                        .to_owned(),
                    lasting: false,
                })
            }
            Ok(n) => n,
        };
        if conn.read_tls(&mut &buf[..n]).is_err() {
            return None;
        }
        if let Err(e) = conn.process_new_packets() {
            return Some(describe(&e));
        }
        if handshake_done {
            // Application data or a ticket: the server took us.
            return None;
        }
    }
}

fn describe(e: &rustls::Error) -> Finding {
    // A certificate refused by either side stays refused; a garbled answer may not.
    let lasting = matches!(e, rustls::Error::InvalidCertificate(_) | rustls::Error::AlertReceived(_));
    let reason = match e {
        rustls::Error::InvalidCertificate(CertificateError::UnknownIssuer) => {
            "the server's certificate is not signed by `ca` (unknown issuer)".to_owned()
        }
        rustls::Error::InvalidCertificate(
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
        ) => "the server's certificate does not name this host (check_hostname)".to_owned(),
        rustls::Error::InvalidCertificate(other) => format!("the server's certificate is refused: {other:?}"),
        rustls::Error::AlertReceived(alert) => {
            format!("the server refused the TLS handshake ({alert:?}): does it need a client certificate (certfile, keyfile) it trusts?")
        }
        rustls::Error::InvalidMessage(_) | rustls::Error::InappropriateMessage { .. } => {
            "the server does not answer in TLS: is this a plaintext clientPort?".to_owned()
        }
        other => format!("TLS handshake failed: {other}"),
    };
    Finding { reason, lasting }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_encrypted_keys_are_refused_by_name() {
        let legacy = "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n-----END EC PRIVATE KEY-----\n";
        let err = decrypt_key(legacy, Some(&Secret::new("pw"))).unwrap_err();
        assert!(matches!(&err, Error::Tls { reason } if reason.contains("legacy")), "{err:?}");
        let plain = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
        assert_eq!(decrypt_key(plain, None).unwrap(), plain, "an unencrypted key passes as it is, password or not");
    }
}

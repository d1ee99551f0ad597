//! TLS and SASL for the session, named after kazoo's options (`use_ssl`,
//! `ca`, `certfile`, `keyfile`, `keyfile_password`, `verify_certs`,
//! `check_hostname`, `sasl_options`) so every binding maps them one to one.
//! Secrets are [`Secret`]s: no Debug output, Display or error shows them.

use std::fmt;
use std::path::PathBuf;
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

use crate::error::{Error, Result};

/// A password: Debug shows `Secret(<redacted>)`, and it has no Display, so
/// it cannot reach a log line, an error or a binding's `repr()` by accident.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A secret from its text.
    pub fn new(secret: impl Into<String>) -> Secret {
        Secret(secret.into())
    }

    /// The secret itself, for the one place that sends it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl From<&str> for Secret {
    fn from(secret: &str) -> Secret {
        Secret::new(secret)
    }
}

impl From<String> for Secret {
    fn from(secret: String) -> Secret {
        Secret(secret)
    }
}

/// PEM text, or the file that holds it (kazoo passes file names). Debug shows
/// the file name, never the text: a key may be inline.
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    /// A PEM file.
    File(PathBuf),
    /// The PEM itself (kept secret: it may hold a key).
    Text(Secret),
}

impl Pem {
    /// A PEM file at `path`.
    pub fn file(path: impl Into<PathBuf>) -> Pem {
        Pem::File(path.into())
    }

    /// The PEM text itself.
    pub fn text(pem: impl Into<String>) -> Pem {
        Pem::Text(Secret::new(pem))
    }

    /// The PEM text; `what` names the option in the error (never the content).
    fn read(&self, what: &str) -> Result<String> {
        match self {
            Pem::Text(text) => Ok(text.expose().to_owned()),
            Pem::File(path) => std::fs::read_to_string(path).map_err(|e| {
                let shown = path.display().to_string();
                let shown = if shown.contains(PEM_BEGIN) { "(PEM text given as a file name)".into() } else { shown };
                tls_error(format!("cannot read {what} {shown}: {e}"))
            }),
        }
    }
}

impl fmt::Debug for Pem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pem::File(path) if path.to_string_lossy().contains(PEM_BEGIN) => f.write_str("File(<PEM text>)"),
            Pem::File(path) => f.debug_tuple("File").field(path).finish(),
            Pem::Text(text) => write!(f, "Text(<{} bytes>)", text.expose().len()),
        }
    }
}

/// TLS to the servers' `secureClientPort` (kazoo's `use_ssl=True` and its
/// options, same names). zookeeper-client does it with rustls.
///
/// ```
/// use zoolock::{SessionOptions, TlsOptions};
///
/// let tls = TlsOptions::new().ca("/etc/zk/ca.pem").certfile("/etc/zk/client.pem").keyfile("/etc/zk/client.key");
/// let options = SessionOptions::new("zk1:2281").tls(tls);
/// assert!(options.tls.unwrap().verify_certs);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsOptions {
    /// Whether TLS is on (kazoo's `use_ssl`); on from [`TlsOptions::new`].
    /// For bindings that take the switch apart from the options: off with
    /// any option given is refused, never a plaintext connect that drops it.
    pub enabled: bool,
    /// CA certificates (and CRLs) the server's certificate must chain to;
    /// `None` trusts the system's bundle (`/etc/ssl/certs/ca-certificates.crt`).
    pub ca: Option<Pem>,
    /// This client's certificate chain, for servers with `ssl.clientAuth=need`.
    /// Its key is `keyfile`, or a key in the same PEM.
    pub certfile: Option<Pem>,
    /// The private key of `certfile`: PKCS#8, PKCS#1 or SEC1; encrypted
    /// PKCS#8 (`BEGIN ENCRYPTED PRIVATE KEY`) with `keyfile_password`.
    pub keyfile: Option<Pem>,
    /// Decrypts an encrypted `keyfile`; ignored for a key that is not encrypted.
    pub keyfile_password: Option<Secret>,
    /// Always `true`: zookeeper-client cannot skip verifying the server's
    /// certificate, so `false` is an [`Error::Tls`] at connect.
    pub verify_certs: bool,
    /// Whether the server's certificate must name the host of the connect
    /// string. On by default (kazoo's default is off: its binding says so).
    pub check_hostname: bool,
}

impl Default for TlsOptions {
    fn default() -> TlsOptions {
        TlsOptions::new()
    }
}

impl TlsOptions {
    /// Verifies the server against the system's CAs and its host name; no client certificate.
    pub fn new() -> TlsOptions {
        TlsOptions {
            enabled: true,
            ca: None,
            certfile: None,
            keyfile: None,
            keyfile_password: None,
            verify_certs: true,
            check_hostname: true,
        }
    }

    /// CA bundle file (PEM); [`Pem::text`] for the PEM itself.
    pub fn ca(mut self, ca: impl Into<Pem>) -> Self {
        self.ca = Some(ca.into());
        self
    }

    /// The client's certificate chain (kazoo's `certfile`), for servers with `ssl.clientAuth=need`.
    pub fn certfile(mut self, certfile: impl Into<Pem>) -> Self {
        self.certfile = Some(certfile.into());
        self
    }

    /// The client's private key (kazoo's `keyfile`): PKCS#8, PKCS#1 or SEC1.
    pub fn keyfile(mut self, keyfile: impl Into<Pem>) -> Self {
        self.keyfile = Some(keyfile.into());
        self
    }

    /// The password of an encrypted PKCS#8 key (kazoo's `keyfile_password`).
    pub fn keyfile_password(mut self, password: impl Into<Secret>) -> Self {
        self.keyfile_password = Some(password.into());
        self
    }

    /// Whether to verify the servers' certificates (kazoo's `verify_certs`); `false` is refused with [`Error::Tls`](crate::Error::Tls).
    pub fn verify_certs(mut self, verify: bool) -> Self {
        self.verify_certs = verify;
        self
    }

    /// Whether the server's certificate must name the host connected to (kazoo's `check_hostname`); on by default.
    pub fn check_hostname(mut self, check: bool) -> Self {
        self.check_hostname = check;
        self
    }

    /// Turns TLS on or off (kazoo's `use_ssl`), keeping the options given.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// The checks that need no file, run when a session connects; bindings
    /// call it where their options are built. TLS off with an option given
    /// (a CA, a client certificate or key, a key password, `verify_certs`
    /// off) is [`Error::InvalidArgument`]: the option would be dropped and
    /// the session connect in plaintext. `check_hostname` is not counted:
    /// bindings' defaults for it differ. TLS on: kazoo's ValueError, and what
    /// zookeeper-client cannot do.
    pub fn validate(&self) -> Result<()> {
        if !self.enabled {
            let given = [
                ("ca", self.ca.is_some()),
                ("certfile", self.certfile.is_some()),
                ("keyfile", self.keyfile.is_some()),
                ("keyfile_password", self.keyfile_password.is_some()),
                ("verify_certs=false", !self.verify_certs),
            ];
            return match given.iter().find(|(_, given)| *given) {
                Some((name, _)) => Err(Error::InvalidArgument(format!(
                    "{name} needs TLS on (kazoo's use_ssl=True): with TLS off the session would connect in plaintext"
                ))),
                None => Ok(()),
            };
        }
        if !self.verify_certs {
            if self.check_hostname {
                return Err(Error::InvalidArgument("check_hostname needs verify_certs".into()));
            }
            return Err(tls_error(
                "verify_certs=false is not supported: zookeeper-client always verifies the server's certificate; \
                 pass its CA as `ca`",
            ));
        }
        if self.keyfile.is_some() && self.certfile.is_none() {
            return Err(Error::InvalidArgument("keyfile needs certfile".into()));
        }
        Ok(())
    }
}

/// A file name, or PEM text if it holds a `-----BEGIN ` line: a key pasted
/// where a file name was expected must not end up in an error as a "path".
impl From<&str> for Pem {
    fn from(path_or_pem: &str) -> Pem {
        Pem::from(path_or_pem.to_owned())
    }
}

impl From<String> for Pem {
    fn from(path_or_pem: String) -> Pem {
        if path_or_pem.contains(PEM_BEGIN) {
            Pem::Text(Secret(path_or_pem))
        } else {
            Pem::File(path_or_pem.into())
        }
    }
}

const PEM_BEGIN: &str = "-----BEGIN ";

impl From<PathBuf> for Pem {
    fn from(path: PathBuf) -> Pem {
        Pem::File(path)
    }
}

impl From<&std::path::Path> for Pem {
    fn from(path: &std::path::Path) -> Pem {
        Pem::file(path)
    }
}

/// A SASL mechanism zoolock can use. kazoo's `sasl_options["mechanism"]`
/// goes through [`SaslMechanism::from_name`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SaslMechanism {
    /// DIGEST-MD5, with the JAAS users of the server.
    DigestMd5,
}

impl SaslMechanism {
    /// `"DIGEST-MD5"` (any case); others are [`Error::InvalidArgument`].
    ///
    /// ```
    /// use zoolock::SaslMechanism;
    /// assert_eq!(SaslMechanism::from_name("digest-md5"), Ok(SaslMechanism::DigestMd5));
    /// assert!(SaslMechanism::from_name("GSSAPI").is_err());
    /// ```
    pub fn from_name(name: &str) -> Result<SaslMechanism> {
        match name.to_ascii_uppercase().as_str() {
            "DIGEST-MD5" => Ok(SaslMechanism::DigestMd5),
            "GSSAPI" => Err(Error::InvalidArgument(
                "SASL GSSAPI (Kerberos) is not supported: zoolock is built without zookeeper-client's sasl-gssapi"
                    .into(),
            )),
            _ => Err(Error::InvalidArgument(format!("unknown SASL mechanism {name:?}: only DIGEST-MD5 is supported"))),
        }
    }

    /// The mechanism's SASL name ("DIGEST-MD5").
    pub fn name(&self) -> &'static str {
        match self {
            SaslMechanism::DigestMd5 => "DIGEST-MD5",
        }
    }
}

/// SASL authentication when the session connects (kazoo's `sasl_options`:
/// `mechanism`, `username`, `password`). A refused one is [`Error::AuthFailed`].
///
/// ```
/// use zoolock::{SaslOptions, SessionOptions};
/// let options = SessionOptions::new("zk1:2181").sasl(SaslOptions::digest_md5("locker", "secret"));
/// assert!(!format!("{options:?}").contains("secret"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SaslOptions {
    /// Which mechanism.
    pub mechanism: SaslMechanism,
    /// The user, as the server's JAAS file names it.
    pub username: String,
    /// Its password.
    pub password: Secret,
}

impl SaslOptions {
    /// DIGEST-MD5 as `username` with `password`.
    pub fn digest_md5(username: impl Into<String>, password: impl Into<Secret>) -> SaslOptions {
        SaslOptions { mechanism: SaslMechanism::DigestMd5, username: username.into(), password: password.into() }
    }

    pub(crate) fn to_zk(&self) -> zk::SaslOptions {
        match self.mechanism {
            SaslMechanism::DigestMd5 => {
                zk::SaslOptions::digest_md5(self.username.clone(), self.password.expose().to_owned()).into()
            }
        }
    }
}

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

fn tls_error(reason: impl Into<String>) -> Error {
    Error::Tls { reason: reason.into() }
}

/// Where Debian, RHEL and Alpine keep the system's CA bundle.
const SYSTEM_CA_BUNDLES: &[&str] =
    &["/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"];

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
            None => {
                let bundle = SYSTEM_CA_BUNDLES.iter().find(|p| std::path::Path::new(p).is_file()).ok_or_else(|| {
                    tls_error("no `ca` given and no system CA bundle found: pass the servers' CA as `ca`")
                })?;
                Pem::file(bundle).read("system CA bundle")?
            }
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
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
            .with_crls(crls)
            .build()
            .map_err(|e| tls_error(format!("ca: {e}")))?;
        let verifier: Arc<dyn ServerCertVerifier> =
            if self.check_hostname { verifier } else { Arc::new(AnyHostName(verifier)) };
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

    #[test]
    fn sasl_mechanisms_by_kazoo_name() {
        assert_eq!(SaslMechanism::from_name("DIGEST-MD5"), Ok(SaslMechanism::DigestMd5));
        assert_eq!(SaslMechanism::DigestMd5.name(), "DIGEST-MD5");
        for other in ["GSSAPI", "PLAIN", ""] {
            assert!(matches!(SaslMechanism::from_name(other), Err(Error::InvalidArgument(_))), "{other}");
        }
    }
}

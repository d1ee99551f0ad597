//! TLS and SASL for the session, named after kazoo's options (`use_ssl`,
//! `ca`, `certfile`, `keyfile`, `keyfile_password`, `verify_certs`,
//! `check_hostname`, `sasl_options`) so every binding maps them one to one.
//! Secrets are [`Secret`]s: no Debug output, Display or error shows them.

use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result};

// The rustls side of TLS, or (without the `tls` feature) stand-ins that
// refuse a TLS session with a typed error.
#[cfg(not(feature = "tls"))]
mod no_tls;
#[cfg(feature = "tls")]
mod tls;
#[cfg(not(feature = "tls"))]
pub(crate) use no_tls::{check_tls_hosts, Probe};
#[cfg(feature = "tls")]
pub(crate) use tls::{check_tls_hosts, Probe};

fn tls_error(reason: impl Into<String>) -> Error {
    Error::Tls { reason: reason.into() }
}

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
    #[cfg_attr(not(feature = "tls"), allow(dead_code))]
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
    /// `None` trusts the system's CAs (OpenSSL's files on Unix, `SSL_CERT_FILE` first; Windows' certificate store).
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

    #[cfg(feature = "sasl")]
    pub(crate) fn to_zk(&self) -> Result<zookeeper_client::SaslOptions> {
        match self.mechanism {
            SaslMechanism::DigestMd5 => {
                Ok(zookeeper_client::SaslOptions::digest_md5(self.username.clone(), self.password.expose().to_owned())
                    .into())
            }
        }
    }

    /// Without the `sasl` feature: an error before any network call.
    #[cfg(not(feature = "sasl"))]
    pub(crate) fn to_zk(&self) -> Result<std::convert::Infallible> {
        Err(Error::InvalidArgument("SASL needs zoolock's `sasl` feature, which this build leaves out".to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sasl_mechanisms_by_kazoo_name() {
        assert_eq!(SaslMechanism::from_name("DIGEST-MD5"), Ok(SaslMechanism::DigestMd5));
        assert_eq!(SaslMechanism::DigestMd5.name(), "DIGEST-MD5");
        for other in ["GSSAPI", "PLAIN", ""] {
            assert!(matches!(SaslMechanism::from_name(other), Err(Error::InvalidArgument(_))), "{other}");
        }
    }
}

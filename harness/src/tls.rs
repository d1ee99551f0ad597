//! Certificates for TLS mode, made when the ensemble starts (rcgen; no
//! `keytool` or `openssl` needed): ZooKeeper 3.8 reads PEM key and trust
//! stores (`ssl.keyStore.type=PEM`).

use crate::error::{Error, Result};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use std::path::{Path, PathBuf};

/// The PEM files of a TLS ensemble, in its directory.
#[derive(Debug, Clone)]
pub struct TlsFiles {
    /// The CA that signed the server's and the client's certificates.
    pub ca: PathBuf,
    /// A client certificate the servers trust (signed by `ca`), and its key.
    pub client_cert: PathBuf,
    pub client_key: PathBuf,
    /// `client_key` encrypted (PKCS#8, PBES2 with AES-256-CBC, what
    /// `openssl pkcs8 -topk8 -v2 aes-256-cbc` writes) with [`CLIENT_KEY_PASSWORD`].
    pub client_key_encrypted: PathBuf,
    /// A CA that signed nothing here: a client trusting only it must refuse the servers.
    pub other_ca: PathBuf,
    /// A client certificate signed by `other_ca`, and its key: servers that
    /// need client certificates must refuse it.
    pub stranger_cert: PathBuf,
    pub stranger_key: PathBuf,
    /// A self-signed server certificate marked CA:TRUE (what `openssl req
    /// -x509` makes), for `localhost`: the servers present it with
    /// [`Tls::self_signed`](crate::Tls::self_signed), and a client that
    /// trusts exactly it (as its CA) accepts them.
    pub self_signed: PathBuf,
    /// The servers' key store: their key and certificate chain in one PEM.
    pub(crate) server_store: PathBuf,
    /// The key store of [`TlsFiles::self_signed`].
    pub(crate) self_signed_store: PathBuf,
}

/// Host names the servers' certificate carries: `localhost` only, so a
/// client that checks host names accepts `localhost:port` and refuses
/// `127.0.0.1:port`.
pub const SERVER_NAMES: &[&str] = &["localhost"];

/// The password of [`TlsFiles::client_key_encrypted`].
pub const CLIENT_KEY_PASSWORD: &str = "zk-harness-key-pw";

fn encrypt_key(pem: &str) -> Result<String> {
    use pkcs8::der::Decode;
    let fail = |e: String| Error::new(format!("cannot encrypt the test client key: {e}"));
    let (_, der) = pkcs8::der::pem::decode_vec(pem.as_bytes()).map_err(|e| fail(e.to_string()))?;
    let params = pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"zkh-salt", b"zk-harness-iv-16")
        .map_err(|e| fail(e.to_string()))?;
    let encrypted = pkcs8::PrivateKeyInfo::from_der(&der)
        .map_err(|e| fail(e.to_string()))?
        .encrypt_with_params(params, CLIENT_KEY_PASSWORD)
        .map_err(|e| fail(e.to_string()))?;
    let pem = encrypted.to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF).map_err(|e| fail(e.to_string()))?;
    Ok(pem.to_string())
}

struct Authority {
    key: KeyPair,
    cert: rcgen::Certificate,
}

fn authority(name: &str) -> Result<Authority> {
    authority_for(&[], name)
}

/// A self-signed CA certificate; with `names`, also valid for those hosts.
fn authority_for(names: &[&str], name: &str) -> Result<Authority> {
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).map_err(err)?;
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    let cert = params.self_signed(&key).map_err(err)?;
    Ok(Authority { key, cert })
}

fn leaf(names: &[&str], common_name: &str, by: &Authority) -> Result<(String, String)> {
    let key = KeyPair::generate().map_err(err)?;
    let mut params = CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).map_err(err)?;
    params.distinguished_name.push(DnType::CommonName, common_name);
    let cert = params.signed_by(&key, &by.cert, &by.key).map_err(err)?;
    Ok((cert.pem(), key.serialize_pem()))
}

fn err(e: rcgen::Error) -> Error {
    Error::new(format!("cannot make test certificates: {e}"))
}

/// Makes the CA, the servers' and the clients' certificates in `dir`.
pub(crate) fn make(dir: &Path) -> Result<TlsFiles> {
    std::fs::create_dir_all(dir)?;
    let ca = authority("zk-harness test CA")?;
    let other = authority("zk-harness other CA")?;
    let (server_cert, server_key) = leaf(SERVER_NAMES, "zookeeper", &ca)?;
    let (client_cert, client_key) = leaf(&["localhost", "127.0.0.1"], "zoolock client", &ca)?;
    let (stranger_cert, stranger_key) = leaf(&["localhost", "127.0.0.1"], "stranger", &other)?;
    let self_signed = authority_for(SERVER_NAMES, "zookeeper, self-signed")?;
    let files = TlsFiles {
        ca: dir.join("ca.pem"),
        client_cert: dir.join("client-cert.pem"),
        client_key: dir.join("client-key.pem"),
        client_key_encrypted: dir.join("client-key-encrypted.pem"),
        other_ca: dir.join("other-ca.pem"),
        stranger_cert: dir.join("stranger-cert.pem"),
        stranger_key: dir.join("stranger-key.pem"),
        server_store: dir.join("server.pem"),
        self_signed: dir.join("self-signed.pem"),
        self_signed_store: dir.join("self-signed-server.pem"),
    };
    std::fs::write(&files.ca, ca.cert.pem())?;
    std::fs::write(&files.other_ca, other.cert.pem())?;
    std::fs::write(&files.client_cert, client_cert)?;
    std::fs::write(&files.client_key_encrypted, encrypt_key(&client_key)?)?;
    std::fs::write(&files.client_key, client_key)?;
    std::fs::write(&files.stranger_cert, stranger_cert)?;
    std::fs::write(&files.stranger_key, stranger_key)?;
    std::fs::write(&files.server_store, format!("{server_key}{server_cert}{}", ca.cert.pem()))?;
    std::fs::write(&files.self_signed, self_signed.cert.pem())?;
    std::fs::write(&files.self_signed_store, format!("{}{}", self_signed.key.serialize_pem(), self_signed.cert.pem()))?;
    Ok(files)
}

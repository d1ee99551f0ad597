//! Security options against real servers: TLS on a `secureClientPort` (with
//! and without client certificates), SASL DIGEST-MD5 through a JAAS file, and
//! every way they can be wrong ending in a typed error within the connect
//! timeout. Secrets never reach Debug output or errors.

mod common;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use common::unique_path;
use zk_harness::{Ensemble, Options, Sasl, Tls};
use zoolock::{Acquire, Error, Lock, LockState, Pem, SaslOptions, Session, SessionOptions, SessionState, TlsOptions};

const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Scheduling slack on a loaded machine past the connect timeout.
const SLACK: Duration = Duration::from_secs(1);

fn server(slot: &'static OnceLock<Ensemble>, opts: Options) -> &'static Ensemble {
    slot.get_or_init(|| Ensemble::start(1, opts).expect("start ZooKeeper"))
}

/// `ssl.clientAuth=none`: any client that trusts the CA.
fn tls_server() -> &'static Ensemble {
    static SERVER: OnceLock<Ensemble> = OnceLock::new();
    server(&SERVER, Options { tls: Some(Tls { client_auth: false, self_signed: false }), ..Options::default() })
}

/// `ssl.clientAuth=need`: only clients with a certificate signed by the CA.
fn mutual_tls_server() -> &'static Ensemble {
    static SERVER: OnceLock<Ensemble> = OnceLock::new();
    server(&SERVER, Options { tls: Some(Tls { client_auth: true, self_signed: false }), ..Options::default() })
}

/// DIGEST-MD5 through JAAS, required of every session.
fn sasl_server() -> &'static Ensemble {
    static SERVER: OnceLock<Ensemble> = OnceLock::new();
    let sasl = Sasl { users: vec![("locker".into(), "s3cret-pw".into())], required: true };
    server(&SERVER, Options { sasl: Some(sasl), ..Options::default() })
}

fn options(connect: &str) -> SessionOptions {
    SessionOptions::new(connect).connect_timeout(CONNECT_TIMEOUT).session_timeout(Duration::from_secs(4))
}

fn trusting_ca(zk: &Ensemble) -> TlsOptions {
    TlsOptions::new().ca(zk.tls_files().unwrap().ca.as_path())
}

fn with_client_cert(zk: &Ensemble) -> TlsOptions {
    let files = zk.tls_files().unwrap();
    trusting_ca(zk).certfile(files.client_cert.as_path()).keyfile(files.client_key.as_path())
}

/// Connects, takes and gives back a lock, and closes.
async fn connect_and_lock(options: SessionOptions) {
    let session = Session::connect(options).await.expect("connect");
    let lock = Lock::mutex(&session, &unique_path("security")).unwrap();
    assert!(lock.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap());
    assert!(lock.fencing_token().is_some());
    assert!(lock.release().await.unwrap());
    session.close().await;
}

/// The error a connect ends in; fails the test unless it came within the
/// connect timeout.
async fn connect_error(options: SessionOptions, case: &str) -> Error {
    let started = Instant::now();
    let result = tokio::time::timeout(3 * CONNECT_TIMEOUT, Session::connect(options))
        .await
        .unwrap_or_else(|_| panic!("{case}: connect hung past three times its connect timeout"));
    let elapsed = started.elapsed();
    let err = result.expect_err(case);
    eprintln!("{case}: {err} ({elapsed:?})");
    assert!(elapsed <= CONNECT_TIMEOUT + SLACK, "{case}: {err} only after {elapsed:?}");
    err
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_connect_and_lock_without_client_certificate() {
    let zk = tls_server();
    connect_and_lock(options(&zk.secure_connect_string("localhost").unwrap()).tls(trusting_ca(zk))).await;
}

/// A server whose certificate is self-signed and marked CA:TRUE (what
/// `openssl req -x509` makes), trusted by giving that very certificate as
/// `ca`, as OpenSSL (kazoo) and Java (zkCli) trust it: webpki alone refused
/// it as a CA used as an end entity (issue 36). Its name is still checked,
/// and another self-signed certificate is still refused.
#[tokio::test(flavor = "multi_thread")]
async fn tls_trusts_a_self_signed_server_certificate_given_as_the_ca() {
    static SERVER: OnceLock<Ensemble> = OnceLock::new();
    let zk =
        server(&SERVER, Options { tls: Some(Tls { client_auth: false, self_signed: true }), ..Options::default() });
    let files = zk.tls_files().unwrap();
    let pinned = || TlsOptions::new().ca(files.self_signed.as_path());
    connect_and_lock(options(&zk.secure_connect_string("localhost").unwrap()).tls(pinned())).await;
    // The connect string names an address the certificate does not: refused.
    let misnamed = options(&zk.secure_connect_string("127.0.0.1").unwrap()).tls(pinned());
    assert!(matches!(connect_error(misnamed, "self-signed, misnamed").await, Error::Tls { .. }));
    // Unless hostname checks are off, as kazoo's check_hostname=False.
    connect_and_lock(options(&zk.secure_connect_string("127.0.0.1").unwrap()).tls(pinned().check_hostname(false)))
        .await;
    let stranger =
        options(&zk.secure_connect_string("localhost").unwrap()).tls(TlsOptions::new().ca(files.other_ca.as_path()));
    assert!(matches!(connect_error(stranger, "another CA").await, Error::Tls { .. }));
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_connect_and_lock_with_client_certificate() {
    let zk = mutual_tls_server();
    connect_and_lock(options(&zk.secure_connect_string("localhost").unwrap()).tls(with_client_cert(zk))).await;
}

/// The CA, certificate and key given as PEM text instead of files (C# and
/// secrets managers hand over text).
#[tokio::test(flavor = "multi_thread")]
async fn tls_with_pem_text() {
    let zk = mutual_tls_server();
    let files = zk.tls_files().unwrap();
    let read = |p: &std::path::Path| Pem::text(std::fs::read_to_string(p).unwrap());
    let tls = TlsOptions::new().ca(read(&files.ca)).certfile(read(&files.client_cert)).keyfile(read(&files.client_key));
    connect_and_lock(options(&zk.secure_connect_string("localhost").unwrap()).tls(tls)).await;
}

/// An encrypted PKCS#8 key (what `openssl pkcs8 -topk8 -v2 aes-256-cbc`
/// writes: PBES2, PBKDF2-SHA256, AES-256-CBC) with its password connects;
/// a wrong or missing password is a typed error before any network call.
#[tokio::test(flavor = "multi_thread")]
async fn tls_encrypted_client_key() {
    use pkcs8::der::Decode;
    let zk = mutual_tls_server();
    let files = zk.tls_files().unwrap();
    let plain = std::fs::read_to_string(&files.client_key).unwrap();
    let (_, der) = pkcs8::der::pem::decode_vec(plain.as_bytes()).unwrap();
    let params =
        pkcs8::pkcs5::pbes2::Parameters::pbkdf2_sha256_aes256cbc(2048, b"saltsalt", b"0123456789abcdef").unwrap();
    let encrypted = pkcs8::PrivateKeyInfo::from_der(&der).unwrap().encrypt_with_params(params, "key-pw-42").unwrap();
    let encrypted = Pem::text(encrypted.to_pem("ENCRYPTED PRIVATE KEY", pkcs8::LineEnding::LF).unwrap().to_string());
    let connect = zk.secure_connect_string("localhost").unwrap();
    let tls = || trusting_ca(zk).certfile(files.client_cert.as_path()).keyfile(encrypted.clone());

    connect_and_lock(options(&connect).tls(tls().keyfile_password("key-pw-42"))).await;
    for (case, tls) in [("wrong key password", tls().keyfile_password("not-the-pw")), ("no key password", tls())] {
        let started = Instant::now();
        let err = connect_error(options(&connect).tls(tls), case).await;
        assert!(matches!(err, Error::Tls { .. }), "{case}: {err:?}");
        assert!(!err.to_string().contains("not-the-pw"), "{err}");
        assert!(started.elapsed() < Duration::from_secs(1), "{case}: the key is checked before connecting");
    }
}

/// A TLS session whose connection drops (its server restarts) reconnects
/// over TLS with the same certificates, and its lock is still held.
#[tokio::test(flavor = "multi_thread")]
async fn tls_session_reconnects_and_keeps_its_lock() {
    // A server of its own: restarting a shared one would disturb the other tests.
    let options_tls = Options { tls: Some(Tls { client_auth: true, self_signed: false }), ..Options::default() };
    let zk: &'static Ensemble = Box::leak(Box::new(Ensemble::start(1, options_tls).unwrap()));
    let connect = zk.secure_connect_string("localhost").unwrap();
    let session =
        Session::connect(options(&connect).session_timeout(Duration::from_secs(20)).tls(with_client_cert(zk)))
            .await
            .unwrap();
    let lock = Lock::mutex(&session, &unique_path("tls-reconnect")).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let (told, mut states) = tokio::sync::mpsc::unbounded_channel();
    session.add_listener(move |state| {
        let _ = told.send(state);
    });
    let generation = session.status().generation;
    tokio::task::spawn_blocking(move || zk.restart(0).unwrap()).await.unwrap();
    let seen = tokio::time::timeout(Duration::from_secs(20), async {
        let mut seen = Vec::new();
        while let Some(state) = states.recv().await {
            seen.push(state);
            if seen.ends_with(&[SessionState::Suspended, SessionState::Connected]) {
                return seen;
            }
        }
        seen
    })
    .await
    .expect("reconnected over TLS within 20 s");
    assert!(seen.ends_with(&[SessionState::Suspended, SessionState::Connected]), "{seen:?}");
    assert_eq!(session.status().generation, generation, "the same session, not a new one");
    let mut lock_state = lock.subscribe();
    tokio::time::timeout(Duration::from_secs(10), lock_state.wait_for(|s| *s == LockState::Held))
        .await
        .expect("the lock held again")
        .unwrap();
    assert!(lock.release().await.unwrap());
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_refuses_a_server_the_ca_does_not_vouch_for() {
    let zk = tls_server();
    let tls = TlsOptions::new().ca(zk.tls_files().unwrap().other_ca.as_path());
    let err = connect_error(options(&zk.secure_connect_string("localhost").unwrap()).tls(tls), "wrong CA").await;
    assert!(matches!(&err, Error::Tls { reason } if reason.contains("unknown issuer")), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_server_that_needs_a_client_certificate_refuses_none_and_strangers() {
    let zk = mutual_tls_server();
    let files = zk.tls_files().unwrap();
    let connect = zk.secure_connect_string("localhost").unwrap();
    let stranger = trusting_ca(zk).certfile(files.stranger_cert.as_path()).keyfile(files.stranger_key.as_path());
    for (case, tls) in [("no client certificate", trusting_ca(zk)), ("untrusted client certificate", stranger)] {
        let err = connect_error(options(&connect).tls(tls), case).await;
        assert!(matches!(&err, Error::Tls { reason } if reason.contains("client certificate")), "{case}: {err:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn plaintext_against_the_tls_port() {
    let zk = tls_server();
    let err = connect_error(options(&zk.secure_connect_string("127.0.0.1").unwrap()), "plaintext to TLS port").await;
    assert!(matches!(&err, Error::Tls { reason } if reason.contains("speaks TLS")), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn tls_against_the_plaintext_port() {
    let zk = tls_server();
    let plain = zk.direct_connect_string();
    let err = connect_error(options(&plain).tls(trusting_ca(zk).check_hostname(false)), "TLS to plain port").await;
    assert!(matches!(&err, Error::Tls { reason } if reason.contains("plaintext")), "{err:?}");
}

/// The servers' certificate names `localhost` only: with `check_hostname`
/// 127.0.0.1 is refused; without it the chain alone is checked.
#[tokio::test(flavor = "multi_thread")]
async fn check_hostname() {
    let zk = tls_server();
    let by_ip = zk.secure_connect_string("127.0.0.1").unwrap();
    let err = connect_error(options(&by_ip).tls(trusting_ca(zk)), "host name not in certificate").await;
    assert!(matches!(&err, Error::Tls { reason } if reason.contains("does not name this host")), "{err:?}");
    connect_and_lock(options(&by_ip).tls(trusting_ca(zk).check_hostname(false))).await;
}

/// A host that resolves but that rustls can check no certificate against
/// (`127.1` is neither a DNS name nor an IP address in full): refused by
/// name before connecting; zookeeper-client would panic on it.
#[tokio::test(flavor = "multi_thread")]
async fn a_tls_host_rustls_cannot_name_is_refused_before_connecting() {
    let zk = tls_server();
    for check_hostname in [true, false] {
        let tls = trusting_ca(zk).check_hostname(check_hostname);
        let err = connect_error(options(&zk.secure_connect_string("127.1").unwrap()).tls(tls), "127.1").await;
        assert!(
            matches!(&err, Error::InvalidConnectString { reason, .. } if reason.contains("127.1") && reason.contains("127.0.0.1")),
            "{err:?}"
        );
    }
}

#[test]
fn verify_certs_off_is_refused_before_connecting() {
    // zookeeper-client cannot skip verification: say so rather than verify anyway.
    let tls = TlsOptions::new().ca("/nonexistent/ca.pem").verify_certs(false).check_hostname(false);
    let err = Session::connect_blocking(options("127.0.0.1:1").tls(tls)).unwrap_err();
    assert!(matches!(&err, Error::Tls { reason } if reason.contains("verify_certs")), "{err:?}");
    // kazoo's ValueError: a host name check without verification makes no sense.
    let tls = TlsOptions::new().verify_certs(false);
    let err = Session::connect_blocking(options("127.0.0.1:1").tls(tls)).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    let err =
        Session::connect_blocking(options("127.0.0.1:1").tls(TlsOptions::new().ca("/nonexistent/ca.pem"))).unwrap_err();
    assert!(matches!(&err, Error::Tls { reason } if reason.contains("/nonexistent/ca.pem")), "{err:?}");
}

/// TLS options given with TLS switched off (a binding's `use_ssl=False`,
/// `UseTls = false`, `zl_session_options_set_tls(o, 0)`): refused, never
/// dropped for a plaintext connect. Off with nothing given is plaintext.
#[test]
fn tls_options_with_tls_off_are_refused() {
    let off = TlsOptions::new().enabled(false);
    let given = [
        ("ca", off.clone().ca("/etc/zk/ca.pem")),
        ("certfile", off.clone().certfile("/etc/zk/c.pem")),
        ("keyfile", off.clone().keyfile("/etc/zk/c.key")),
        ("keyfile_password", off.clone().keyfile_password("kp")),
        ("verify_certs=false", off.clone().verify_certs(false)),
    ];
    for (name, tls) in given {
        let err = Session::connect_blocking(options("127.0.0.1:1").tls(tls)).unwrap_err();
        let said =
            format!("{name} needs TLS on (kazoo's use_ssl=True): with TLS off the session would connect in plaintext");
        assert_eq!(err, Error::InvalidArgument(said));
    }
    let plain =
        SessionOptions::new("127.0.0.1:1").connect_timeout(Duration::from_millis(300)).tls(off.check_hostname(false));
    let err = Session::connect_blocking(plain).unwrap_err();
    assert!(matches!(err, Error::ConnectTimeout { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn sasl_digest_connect_and_lock() {
    let zk = sasl_server();
    connect_and_lock(options(&zk.connect_string()).sasl(SaslOptions::digest_md5("locker", "s3cret-pw"))).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn sasl_wrong_password_is_auth_failed() {
    let zk = sasl_server();
    let err = connect_error(
        options(&zk.connect_string()).sasl(SaslOptions::digest_md5("locker", "wrong-pw")),
        "wrong SASL password",
    )
    .await;
    assert_eq!(err, Error::AuthFailed);
}

/// A server that requires SASL (`enforce.auth.enabled`) closes a session
/// without it at once: AuthFailed, not a session reopened forever.
#[tokio::test(flavor = "multi_thread")]
async fn sasl_required_but_not_given_is_auth_failed() {
    let err = connect_error(options(&sasl_server().connect_string()), "no SASL where required").await;
    assert_eq!(err, Error::AuthFailed);
}

/// Debug output of the options (which bindings turn into repr()/ToString()
/// and users log) never shows a password or inline key.
#[test]
fn debug_never_shows_secrets() {
    let options = SessionOptions::new("127.0.0.1:2181")
        .digest_auth("locker", "hunter2")
        .tls(
            TlsOptions::new()
                .ca("/etc/zk/ca.pem")
                .certfile("/etc/zk/c.pem")
                .keyfile(Pem::text("PRIVATE-KEY-BYTES"))
                .keyfile_password("kp-1234"),
        )
        .sasl(SaslOptions::digest_md5("locker", "sasl-pw-99"));
    let shown = format!("{options:?}");
    for secret in ["hunter2", "PRIVATE-KEY-BYTES", "kp-1234", "sasl-pw-99"] {
        assert!(!leaks(&shown, secret), "{secret} in {shown}");
    }
    assert!(shown.contains("digest") && shown.contains("/etc/zk/ca.pem") && shown.contains("locker"), "{shown}");
    // A key pasted where a file name goes is taken as PEM text, and a PEM
    // forced in as a file name is not echoed by Debug or the error.
    let pasted = "-----BEGIN PRIVATE KEY-----\nS3CRETKEY\n-----END PRIVATE KEY-----\n";
    let tls = TlsOptions::new().certfile("/nonexistent/c.pem").keyfile(pasted);
    assert_eq!(tls.keyfile, Some(Pem::text(pasted)));
    let forced = TlsOptions::new().ca(Pem::File(pasted.into()));
    assert!(!format!("{forced:?}").contains("S3CRETKEY"));
    let err = Session::connect_blocking(SessionOptions::new("127.0.0.1:1").tls(forced)).unwrap_err();
    assert!(matches!(&err, Error::Tls { reason } if !reason.contains("S3CRETKEY")), "{err:?}");
}

/// Whether `shown` has `secret` as text or as a Debug list of its bytes.
fn leaks(shown: &str, secret: &str) -> bool {
    let bytes = format!("{:?}", secret.as_bytes());
    shown.contains(secret) || shown.contains(bytes.trim_matches(|c| c == '[' || c == ']'))
}

//! Validated inputs: every check here runs before any network call.

use std::time::Duration;

use zookeeper_client::{Acl, AuthId, Permission};

use crate::error::{Error, Result};
use crate::security::{check_tls_hosts, SaslOptions, TlsOptions};

/// The most node data zoolock writes: ZooKeeper refuses packets over
/// `jute.maxbuffer` (1 MiB by default), and the request needs some room.
pub const MAX_IDENTIFIER_BYTES: usize = 1_000_000;

/// The longest lock path, and the longest chroot: a create carries the
/// chroot, the path and the identifier in one packet, which must stay under
/// `jute.maxbuffer`. A server that refuses a packet drops the connection, and
/// a request that is sent again after every reconnect would never end.
pub const MAX_PATH_BYTES: usize = 16 * 1024;

/// Time a healthy connect (plain or TLS, on loopback or a LAN) needs at
/// most: the floor of [`SessionOptions::connect_within`]. The TLS probe
/// assumes the same (it looks only after this long).
pub const HEALTHY_CONNECT: Duration = Duration::from_secs(1);

/// The longest session timeout: the protocol carries it as a signed 32-bit
/// number of milliseconds (about 24.8 days). The server clamps it further
/// to its own `maxSessionTimeout`.
pub const MAX_SESSION_TIMEOUT: Duration = Duration::from_millis(i32::MAX as u64);

/// How to reach ZooKeeper and what to put on created nodes. Checked when
/// the session connects: a bad connect string, a zero timeout or no ACL is
/// an [`Error`] before any network call.
///
/// ```
/// use std::time::Duration;
/// use zoolock::{Session, SessionOptions, SessionState};
/// # fn main() -> zoolock::Result<()> {
/// # // A real server for the example (Debian's ZooKeeper, started by the harness).
/// # let connect = zk_harness::shared().connect_string();
/// let options = SessionOptions::new(connect) // "zk1:2181,zk2:2181/app"
///     .session_timeout(Duration::from_secs(6))
///     .connect_timeout(Duration::from_secs(5));
/// let session = Session::connect_blocking(options)?;
/// assert_eq!(session.state(), SessionState::Connected);
/// session.close_blocking();
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SessionOptions {
    /// `host:port[,host:port…][/chroot]`.
    pub connect: String,
    /// Asked of the server; it clamps it to its own min/max.
    pub session_timeout: Duration,
    /// How long `Session::connect` tries before giving up.
    pub connect_timeout: Duration,
    /// `(scheme, credentials)` pairs, e.g. `("digest", b"user:password")`.
    pub auth: Vec<(String, Vec<u8>)>,
    /// ACL of every node zoolock creates; world-readable-writable by default.
    pub acls: Vec<Acl>,
    /// Whether a missing chroot is created on first need (see [`SessionOptions::create_chroot`]).
    pub create_chroot: bool,
    /// TLS to every host (kazoo's `use_ssl=True`): the hosts' ports must be
    /// their `secureClientPort`s. `None`, or [`TlsOptions::enabled`] off: plaintext.
    pub tls: Option<TlsOptions>,
    /// SASL authentication on every connection (kazoo's `sasl_options`).
    pub sasl: Option<SaslOptions>,
    /// The session to resume instead of opening a new one (kazoo's
    /// `client_id=`); see [`SessionOptions::resume`].
    pub resume: Option<ClientId>,
}

/// A ZooKeeper session's id and password (kazoo's `client_id`): with them
/// another client, in this process or another, resumes the session
/// ([`SessionOptions::resume`]) and its ephemeral nodes stay. The password
/// is the session's secret: Debug shows the id only.
///
/// ```
/// use zoolock::ClientId;
///
/// let id = ClientId::new(0x1000_0a2b_0000_0001, [7u8; 16]);
/// assert_eq!(id.password(), &[7u8; 16]);
/// assert_eq!(format!("{id:?}"), "ClientId { session_id: 0x10000a2b00000001, password: <redacted> }");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ClientId {
    session_id: i64,
    password: Vec<u8>,
}

impl ClientId {
    /// The length of every password ZooKeeper gives a session.
    pub const PASSWORD_BYTES: usize = 16;

    /// A session's id and password, as [`Session::client_id`](crate::Session::client_id) gave them.
    pub fn new(session_id: i64, password: impl Into<Vec<u8>>) -> ClientId {
        ClientId { session_id, password: password.into() }
    }

    /// The session's id, as ZooKeeper shows it (`ephemeralOwner`).
    pub fn session_id(&self) -> i64 {
        self.session_id
    }

    /// The session's password: a secret, to hand only to whoever may resume the session.
    pub fn password(&self) -> &[u8] {
        &self.password
    }

    pub(crate) fn validate(&self) -> Result<()> {
        if self.session_id == 0 {
            return Err(Error::InvalidArgument("client id: session id 0 names no session".into()));
        }
        if self.password.len() != ClientId::PASSWORD_BYTES {
            return Err(Error::InvalidArgument(format!(
                "client id: a ZooKeeper session password is {} bytes, got {}",
                ClientId::PASSWORD_BYTES,
                self.password.len()
            )));
        }
        Ok(())
    }
}

impl std::fmt::Debug for ClientId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientId")
            .field("session_id", &format_args!("{:#x}", self.session_id))
            .field("password", &format_args!("<redacted>"))
            .finish()
    }
}

/// Credentials show as their scheme only: Debug output reaches logs and
/// the bindings' `repr()` / `ToString()`.
impl std::fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let auth: Vec<String> = self.auth.iter().map(|(scheme, _)| format!("{scheme}:<redacted>")).collect();
        f.debug_struct("SessionOptions")
            .field("connect", &self.connect)
            .field("session_timeout", &self.session_timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("auth", &auth)
            .field("acls", &self.acls)
            .field("create_chroot", &self.create_chroot)
            .field("tls", &self.tls)
            .field("sasl", &self.sasl)
            .field("resume", &self.resume)
            .finish()
    }
}

impl SessionOptions {
    /// Options for `connect` (`host:port[,host:port…][/chroot]`): a 10 s
    /// session timeout, a 15 s connect timeout, no credentials, and nodes
    /// created world-readable and writable.
    ///
    /// ```
    /// use std::time::Duration;
    /// use zoolock::SessionOptions;
    ///
    /// let options = SessionOptions::new("zk1:2181,zk2:2181/app");
    /// assert_eq!(options.session_timeout, Duration::from_secs(10));
    /// assert!(options.auth.is_empty());
    /// ```
    pub fn new(connect: impl Into<String>) -> SessionOptions {
        SessionOptions {
            connect: connect.into(),
            session_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(15),
            auth: Vec::new(),
            acls: vec![Acl::new(Permission::ALL, AuthId::anyone())],
            create_chroot: false,
            tls: None,
            sasl: None,
            resume: None,
        }
    }

    /// The session timeout to ask for: how long the server keeps the
    /// session (and its lock nodes) once it hears nothing more from it. A
    /// shorter one hands a crashed holder's lock over sooner, and expires
    /// more often under GC pauses and network blips. At most
    /// [`MAX_SESSION_TIMEOUT`]; the server clamps it to its own range.
    pub fn session_timeout(mut self, timeout: Duration) -> Self {
        self.session_timeout = timeout;
        self
    }

    /// How long connecting tries before it fails with [`Error::ConnectTimeout`].
    pub fn connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// Bounds the connect by a caller's limit (the timeout of the acquire
    /// it is for, whose wait the connect counts against): the connect
    /// timeout becomes `limit` where that is shorter, but not less than
    /// [`HEALTHY_CONNECT`], so that a single try (a zero limit) still
    /// connects to a server that is up.
    ///
    /// ```
    /// use std::time::Duration;
    /// use zoolock::SessionOptions;
    /// let secs = |o: SessionOptions| o.connect_timeout.as_secs_f64();
    /// assert_eq!(secs(SessionOptions::new("zk1:2181").connect_within(Duration::from_secs(2))), 2.0);
    /// assert_eq!(secs(SessionOptions::new("zk1:2181").connect_within(Duration::ZERO)), 1.0);
    /// assert_eq!(secs(SessionOptions::new("zk1:2181").connect_within(Duration::from_secs(60))), 15.0);
    /// ```
    pub fn connect_within(mut self, limit: Duration) -> Self {
        self.connect_timeout = self.connect_timeout.min(limit.max(HEALTHY_CONNECT));
        self
    }

    /// Adds ZooKeeper digest credentials (`addauth digest user:password`).
    ///
    /// ```
    /// use zoolock::SessionOptions;
    ///
    /// let options = SessionOptions::new("zk1:2181").digest_auth("locker", "secret");
    /// assert_eq!(options.auth, vec![("digest".to_string(), b"locker:secret".to_vec())]);
    /// ```
    pub fn digest_auth(mut self, user: &str, password: &str) -> Self {
        self.auth.push(("digest".to_owned(), format!("{user}:{password}").into_bytes()));
        self
    }

    /// The ACL of every node zoolock creates (lock nodes and their parents).
    ///
    /// ```
    /// use zoolock::{Acl, AuthId, Permission, SessionOptions};
    ///
    /// // Only the identities the session authenticated as may touch its nodes.
    /// let creator = Acl::new(Permission::ALL, AuthId::new("auth", ""));
    /// let options = SessionOptions::new("zk1:2181").digest_auth("locker", "secret").acls(vec![creator]);
    /// assert_eq!(options.acls[0].permission(), Permission::ALL);
    /// ```
    pub fn acls(mut self, acls: Vec<Acl>) -> Self {
        self.acls = acls;
        self
    }

    /// What to do when the connect string's chroot does not exist. Off (the
    /// default in Rust): `Session::connect` fails with [`Error::NoChroot`],
    /// which catches a mistyped connect string before anything is written.
    /// On (kazoo's behaviour): the session connects, and the chroot is
    /// created, with its missing ancestors, by the first call that creates
    /// parents (a lock's acquire, `ensure_path`, `create` with `makepath`);
    /// other calls under it fail with [`Error::NoNode`] until then.
    pub fn create_chroot(mut self, create: bool) -> Self {
        self.create_chroot = create;
        self
    }

    /// Connects over TLS ([`TlsOptions`]): give the servers' `secureClientPort`s.
    pub fn tls(mut self, tls: TlsOptions) -> Self {
        self.tls = Some(tls);
        self
    }

    /// Authenticates with SASL ([`SaslOptions`]) on every connection.
    pub fn sasl(mut self, sasl: SaslOptions) -> Self {
        self.sasl = Some(sasl);
        self
    }

    /// Resumes the session `client_id` names, which another client (maybe
    /// in another process) opened, instead of opening a new one: its
    /// ephemeral nodes, its lock nodes among them, stay. If the server no
    /// longer has that session (it expired or was closed) or the password is
    /// wrong — the server does not say which — [`Session::connect`](crate::Session::connect)
    /// fails with [`Error::SessionExpired`] and opens none. Once resumed, it
    /// is this session's: an expiry later is followed by a new session, as
    /// always.
    pub fn resume(mut self, client_id: ClientId) -> Self {
        self.resume = Some(client_id);
        self
    }

    pub(crate) fn validate(&self) -> Result<ConnectString> {
        let parsed = ConnectString::parse(&self.connect)?;
        if self.session_timeout.is_zero() || self.connect_timeout.is_zero() {
            return Err(Error::InvalidArgument("session and connect timeouts must be positive".into()));
        }
        if self.session_timeout > MAX_SESSION_TIMEOUT {
            return Err(Error::InvalidArgument(format!(
                "session timeout {:?} is over the {MAX_SESSION_TIMEOUT:?} ZooKeeper can carry",
                self.session_timeout
            )));
        }
        if self.acls.is_empty() {
            return Err(Error::InvalidArgument("at least one ACL is needed for created nodes".into()));
        }
        if let Some(client_id) = &self.resume {
            client_id.validate()?;
        }
        if let Some(tls) = &self.tls {
            tls.validate()?;
            if tls.enabled {
                check_tls_hosts(&self.connect, &parsed.endpoints())?;
            }
        }
        Ok(parsed)
    }

    /// The TLS options when TLS is on.
    pub(crate) fn tls_on(&self) -> Option<&TlsOptions> {
        self.tls.as_ref().filter(|tls| tls.enabled)
    }
}

/// A connect string as ZooKeeper's Java client reads it (`ConnectStringParser`):
/// the chroot from the first `/`; hosts split at commas, each trimmed, empty
/// ones skipped; `host`, `host:port`, `[v6]:port` or a bare IPv6 address;
/// no port (or `host:`) is 2181. zoolock also refuses, before any network
/// call, what Java would only fail on when connecting: no host at all, a
/// host with white space in it, a port that is not 1..65535.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConnectString {
    /// The hosts as given, trimmed, joined by commas.
    pub hosts: String,
    pub chroot: Option<String>,
}

impl ConnectString {
    pub fn parse(connect: &str) -> Result<ConnectString> {
        let bad = |reason: &str| Error::InvalidConnectString { connect: connect.to_owned(), reason: reason.to_owned() };
        let (hosts, chroot) = match connect.find('/') {
            Some(i) => (&connect[..i], Some(&connect[i..])),
            None => (connect, None),
        };
        let hosts: Vec<&str> = hosts.split(',').map(str::trim).filter(|host| !host.is_empty()).collect();
        if hosts.is_empty() {
            return Err(bad("no host given"));
        }
        for host in &hosts {
            let (name, port) = split_host(host).map_err(bad)?;
            if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
                return Err(bad("a host is empty or has white space"));
            }
            if let Some(port) = port.filter(|port| !port.is_empty() || name.starts_with('[')) {
                let digits = !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit());
                if !digits || !matches!(port.parse::<u16>(), Ok(p) if p > 0) {
                    return Err(bad("a port is not a number from 1 to 65535"));
                }
            }
        }
        let chroot = match chroot {
            None | Some("/") => None,
            Some(path) => {
                validate_path(path).map_err(|e| match e {
                    Error::InvalidPath { reason, .. } => bad(&format!("chroot: {reason}")),
                    other => other,
                })?;
                Some(path.to_owned())
            }
        };
        Ok(ConnectString { hosts: hosts.join(","), chroot })
    }

    /// Each host and port (2181 when none is given), brackets taken off IPv6 addresses.
    pub fn endpoints(&self) -> Vec<(String, u16)> {
        self.hosts
            .split(',')
            .filter_map(|host| split_host(host).ok())
            .map(|(name, port)| {
                let name = name.trim_start_matches('[').trim_end_matches(']');
                (name.to_owned(), port.and_then(|p| p.parse().ok()).unwrap_or(2181))
            })
            .collect()
    }
}

/// The hosts of a connect string, each `(host, port)` (2181 where none is
/// given, IPv6 without brackets), and its chroot, read as
/// [`SessionOptions::new`] reads them: kazoo's `client.hosts` and `chroot`.
pub fn connect_string_parts(connect: &str) -> Result<(Vec<(String, u16)>, Option<String>)> {
    let parsed = ConnectString::parse(connect)?;
    Ok((parsed.endpoints(), parsed.chroot))
}

/// The hosts and the chroot, as zookeeper-client is given them (it neither
/// trims nor skips empty hosts).
impl std::fmt::Display for ConnectString {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.hosts, self.chroot.as_deref().unwrap_or(""))
    }
}

/// `host[:port]`, `[v6]:port`, or a bare IPv6 address (colons, no port).
fn split_host(host: &str) -> std::result::Result<(&str, Option<&str>), &'static str> {
    use std::net::Ipv6Addr;
    if let Some(rest) = host.strip_prefix('[') {
        let end = rest.find(']').ok_or("a '[' is not closed by ']'")?;
        if rest[..end].parse::<Ipv6Addr>().is_err() {
            return Err("the address in brackets is not IPv6");
        }
        let (name, rest) = host.split_at(end + 2);
        return Ok((name, rest.strip_prefix(':').or(if rest.is_empty() { None } else { Some(rest) })));
    }
    match host.rsplit_once(':') {
        // Several colons without brackets: only a bare IPv6 address.
        Some((name, _)) if name.contains(':') => match host.parse::<Ipv6Addr>() {
            Ok(_) => Ok((host, None)),
            Err(_) => Err("a host has several ':' and is not an IPv6 address (write [v6]:port)"),
        },
        Some((name, port)) => Ok((name, Some(port))),
        None => Ok((host, None)),
    }
}

/// Checks a lock path the way ZooKeeper would, plus zoolock's own rules:
/// the root and the reserved `/zookeeper` tree cannot be lock paths.
/// Every lock, semaphore and chroot goes through it before any network call.
///
/// ```
/// use zoolock::{validate_path, Error};
///
/// assert!(validate_path("/locks/ledger").is_ok());
/// for bad in ["locks", "/", "/locks/", "/a//b", "/a/../b", "/zookeeper/quota"] {
///     assert!(matches!(validate_path(bad), Err(Error::InvalidPath { .. })), "{bad}");
/// }
/// ```
pub fn validate_path(path: &str) -> Result<()> {
    let bad = |reason: &'static str| Err(Error::InvalidPath { path: path.to_owned(), reason });
    if path == "/" {
        return bad("the root cannot be a lock path");
    }
    validate_node_path(path)?;
    if path == "/zookeeper" || path.starts_with("/zookeeper/") {
        return bad("the /zookeeper tree is reserved by the server");
    }
    Ok(())
}

/// Checks a node path the way ZooKeeper would, before any network call:
/// the paths of the znode API ([`Session::get`](crate::Session::get), …),
/// where the root and `/zookeeper` are fine.
///
/// ```
/// use zoolock::{validate_node_path, Error};
///
/// for ok in ["/", "/zookeeper/config", "/app/config"] {
///     assert!(validate_node_path(ok).is_ok(), "{ok}");
/// }
/// for bad in ["", "app", "/app/", "/a//b", "/a/./b"] {
///     assert!(matches!(validate_node_path(bad), Err(Error::InvalidPath { .. })), "{bad}");
/// }
/// ```
pub fn validate_node_path(path: &str) -> Result<()> {
    let bad = |reason: &'static str| Err(Error::InvalidPath { path: path.to_owned(), reason });
    if path.is_empty() {
        return bad("the path is empty");
    }
    if !path.starts_with('/') {
        return bad("the path must be absolute (start with '/')");
    }
    if path == "/" {
        return Ok(());
    }
    if path.ends_with('/') {
        return bad("the path must not end with '/'");
    }
    if path.len() > MAX_PATH_BYTES {
        return bad("the path is longer than MAX_PATH_BYTES (16 KiB)");
    }
    for component in path[1..].split('/') {
        match component {
            "" => return bad("the path has an empty component ('//')"),
            "." | ".." => return bad("relative components ('.', '..') are not allowed"),
            _ => {}
        }
    }
    if path.chars().any(|c| {
        c == '\0'
            || ('\u{1}'..='\u{1f}').contains(&c)
            || ('\u{7f}'..='\u{9f}').contains(&c)
            || ('\u{e000}'..='\u{f8ff}').contains(&c)
            || ('\u{fff0}'..='\u{ffff}').contains(&c)
    }) {
        return bad("the path has a character ZooKeeper refuses (NUL, control or private-use)");
    }
    Ok(())
}

/// A path a binding received as bytes: [`Error::InvalidPath`] unless it is
/// UTF-8 and passes [`validate_path`].
///
/// ```
/// assert_eq!(zoolock::path_from_utf8(b"/locks/ledger"), Ok("/locks/ledger"));
/// assert!(zoolock::path_from_utf8(b"/locks/\xff").is_err());
/// ```
pub fn path_from_utf8(path: &[u8]) -> Result<&str> {
    let text = std::str::from_utf8(path).map_err(|_| Error::InvalidPath {
        path: String::from_utf8_lossy(path).into_owned(),
        reason: "the path is not UTF-8",
    })?;
    validate_path(text)?;
    Ok(text)
}

/// Converts a timeout in seconds from a binding; `None` waits forever, and so
/// does an infinite one; one too large for a [`Duration`] is [`Duration::MAX`].
/// Negative and NaN timeouts are [`Error::InvalidArgument`].
///
/// ```
/// use std::time::Duration;
/// use zoolock::timeout_from_secs;
///
/// assert_eq!(timeout_from_secs(Some(1.5)), Ok(Some(Duration::from_millis(1500))));
/// assert_eq!(timeout_from_secs(None), Ok(None));
/// assert_eq!(timeout_from_secs(Some(f64::INFINITY)), Ok(None));
/// assert!(timeout_from_secs(Some(-1.0)).is_err());
/// ```
pub fn timeout_from_secs(secs: Option<f64>) -> Result<Option<Duration>> {
    match secs {
        None => Ok(None),
        Some(s) if s.is_nan() => Err(Error::InvalidArgument("timeout is NaN".into())),
        Some(s) if s < 0.0 => Err(Error::InvalidArgument(format!("timeout must not be negative, got {s}"))),
        Some(s) if s.is_infinite() => Ok(None),
        Some(s) => Ok(Some(Duration::try_from_secs_f64(s).unwrap_or(Duration::MAX))),
    }
}

/// Checks node data (an identifier) before it is written: UTF-8, as kazoo
/// peers decode it, and at most [`MAX_IDENTIFIER_BYTES`].
///
/// ```
/// use zoolock::{validate_identifier, MAX_IDENTIFIER_BYTES};
///
/// assert!(validate_identifier("worker-1".as_bytes()).is_ok());
/// assert!(validate_identifier(&[0xff, 0xfe]).is_err());
/// assert!(validate_identifier(&vec![b'x'; MAX_IDENTIFIER_BYTES + 1]).is_err());
/// ```
pub fn validate_identifier(identifier: &[u8]) -> Result<()> {
    if identifier.len() > MAX_IDENTIFIER_BYTES {
        return Err(Error::InvalidArgument(format!(
            "identifier is {} bytes; at most {MAX_IDENTIFIER_BYTES} fit in a znode",
            identifier.len()
        )));
    }
    if std::str::from_utf8(identifier).is_err() {
        return Err(Error::InvalidArgument(
            "identifier is not UTF-8: kazoo peers could not read it (contenders())".into(),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lock_paths() {
        for ok in ["/a", "/a/b-c/d_e", "/locks/ünïcode"] {
            validate_path(ok).unwrap();
        }
        for bad in
            ["", "a", "a/b", "/", "/a/", "/a//b", "/a/./b", "/a/..", "/a\0b", "/zookeeper", "/zookeeper/x", "/a\u{1}"]
        {
            assert!(matches!(validate_path(bad), Err(Error::InvalidPath { .. })), "{bad:?} accepted");
        }
        let longest = format!("/{}", "p".repeat(MAX_PATH_BYTES - 1));
        validate_path(&longest).unwrap();
        assert!(matches!(validate_path(&format!("{longest}p")), Err(Error::InvalidPath { .. })));
        assert_eq!(path_from_utf8(b"/a/b"), Ok("/a/b"));
        assert!(matches!(path_from_utf8(b"/a\xff"), Err(Error::InvalidPath { .. })));
        assert!(matches!(path_from_utf8(b"/a/"), Err(Error::InvalidPath { .. })));
    }

    #[test]
    fn identifiers() {
        validate_identifier(b"").unwrap();
        validate_identifier("wörker-1".as_bytes()).unwrap();
        validate_identifier(&vec![b'x'; MAX_IDENTIFIER_BYTES]).unwrap();
        assert!(matches!(validate_identifier(&vec![b'x'; MAX_IDENTIFIER_BYTES + 1]), Err(Error::InvalidArgument(_))));
        assert!(matches!(validate_identifier(&[0xff, 0xfe]), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn connect_strings() {
        let cs = ConnectString::parse("127.0.0.1:2181,localhost:2182/app/locks").unwrap();
        assert_eq!(cs.hosts, "127.0.0.1:2181,localhost:2182");
        assert_eq!(cs.chroot.as_deref(), Some("/app/locks"));
        assert_eq!(ConnectString::parse("zk1").unwrap().chroot, None);
        ConnectString::parse("[::1]:2181").unwrap();
        ConnectString::parse("::1,[fe80::1]:2181,zk1").unwrap();
        // As ZooKeeper's Java client: each host trimmed, empty ones skipped, `host:` is 2181.
        let cs = ConnectString::parse(" zk1:2181 , zk2:2182 ,, zk3: ,/app").unwrap();
        assert_eq!(cs.to_string(), "zk1:2181,zk2:2182,zk3:/app");
        assert_eq!(cs.endpoints(), [("zk1".into(), 2181), ("zk2".into(), 2182), ("zk3".into(), 2181)]);
        for bad in [
            "",
            "/chroot",
            ",",
            " , ,/app",
            "host:0",
            "host:99999",
            "host:abc",
            "host:+1",
            "[::1]:",
            "ho st:1",
            "h:1/bad/",
            "h:1//x",
            "::::",
            "zk1:2181:2181",
            "[::1",
            "[zk1]:2181",
            "[::1]x",
        ] {
            assert!(matches!(ConnectString::parse(bad), Err(Error::InvalidConnectString { .. })), "{bad:?} accepted");
        }
    }

    #[test]
    fn timeouts() {
        assert_eq!(timeout_from_secs(None).unwrap(), None);
        assert_eq!(timeout_from_secs(Some(1.5)).unwrap(), Some(Duration::from_millis(1500)));
        assert_eq!(timeout_from_secs(Some(0.0)).unwrap(), Some(Duration::ZERO));
        assert!(timeout_from_secs(Some(-1.0)).is_err());
        assert!(timeout_from_secs(Some(f64::NAN)).is_err());
        assert_eq!(timeout_from_secs(Some(f64::INFINITY)).unwrap(), None);
        assert_eq!(timeout_from_secs(Some(1e300)).unwrap(), Some(Duration::MAX));
    }
}

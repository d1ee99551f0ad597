use std::time::Duration;

/// Everything that can go wrong in zoolock. Each binding maps this enum once:
/// Python to kazoo's exception names, C to status codes, C# to exceptions.
///
/// Bad input is refused before any network call:
///
/// ```
/// use zoolock::{validate_path, Error};
///
/// match validate_path("locks/ledger") {
///     Err(Error::InvalidPath { path, reason }) => {
///         assert_eq!(path, "locks/ledger");
///         assert!(reason.contains("absolute"));
///     }
///     other => panic!("{other:?}"),
/// }
/// ```
///
/// A session that cannot reach a server within its connect timeout:
///
/// ```
/// use std::time::Duration;
/// use zoolock::{Error, Session, SessionOptions};
///
/// // Nothing listens on port 1.
/// let options = SessionOptions::new("127.0.0.1:1").connect_timeout(Duration::from_millis(200));
/// assert!(matches!(Session::connect_blocking(options), Err(Error::ConnectTimeout { .. })));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A lock path (or chroot) ZooKeeper or zoolock would refuse: see [`validate_path`](crate::validate_path).
    #[error("invalid lock path {path:?}: {reason}")]
    InvalidPath {
        /// The path as given (lossily decoded if it was not UTF-8).
        path: String,
        /// Which rule it breaks.
        reason: &'static str,
    },

    /// A connect string that is not `host:port[,host:port…][/chroot]`.
    #[error("invalid connect string {connect:?}: {reason}")]
    InvalidConnectString {
        /// The connect string as given.
        connect: String,
        /// What is wrong with it.
        reason: String,
    },

    /// Any other bad argument: a negative or NaN timeout, an identifier that
    /// is not UTF-8 or too long, zero leases, a session timeout over
    /// [`MAX_SESSION_TIMEOUT`](crate::MAX_SESSION_TIMEOUT), …
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// No server of the connect string could be reached within the connect timeout.
    #[error("could not connect to ZooKeeper at {hosts} within {timeout:?}")]
    ConnectTimeout {
        /// The hosts tried.
        hosts: String,
        /// The connect timeout ([`SessionOptions::connect_timeout`](crate::SessionOptions::connect_timeout)).
        timeout: Duration,
    },

    /// The chroot of the connect string names a node that does not exist.
    #[error("chroot {0} does not exist on the server")]
    NoChroot(String),

    /// A bounded wait ran out before the server answered (connection down).
    #[error("ZooKeeper did not answer within {0:?}: connection lost")]
    ConnectionLoss(Duration),

    /// The acquire was cancelled (`Lock::cancel`); its node is deleted.
    #[error("acquire of {path} was cancelled")]
    Cancelled {
        /// The lock path.
        path: String,
    },

    /// The session was closed (`Session::close`): every call on it fails at once.
    #[error("the session was closed")]
    Closed,

    /// A release of a reentrant lock by another owner (thread, task) than
    /// the one holding it; the hold is untouched (Curator's
    /// `IllegalMonitorStateException`, Python's `RLock`).
    #[error("{path} is held by another owner of this reentrant lock: only its owner may release it")]
    NotOwner { path: String },

    /// zoolock's threads live in the parent: after `fork()`, use zoolock in a
    /// freshly started process (e.g. multiprocessing's "spawn" start method).
    #[error("zoolock was started in process {parent}, which forked this one; its threads did not survive the fork: use zoolock only in processes started fresh (e.g. multiprocessing's 'spawn' start method)")]
    Forked {
        /// The process that started zoolock.
        parent: u32,
    },

    /// The server refused an operation on a node: its ACL does not let this session.
    #[error("not authorized to {action} {path}")]
    NoAuth {
        /// What was refused ("create", "delete", "read", …).
        action: &'static str,
        /// The node.
        path: String,
    },

    /// The server refused the session's credentials ([`SessionOptions::auth`](crate::SessionOptions::auth)).
    #[error("authentication with ZooKeeper failed")]
    AuthFailed,

    /// TLS failed: unreadable or unusable certificates or key, a wrong
    /// `keyfile_password`, a server certificate `ca` does not vouch for, a
    /// server that refuses this client's certificate, or a plaintext port
    /// where TLS was asked (and the reverse). Never shows a secret.
    #[error("TLS with ZooKeeper failed: {reason}")]
    Tls { reason: String },

    /// kazoo's `ValueError("Inconsistent max leases …")`.
    #[error("semaphore {path} is set up for {existing} leases, not {requested}")]
    InconsistentLeases {
        /// The semaphore's path.
        path: String,
        /// The data of the semaphore's node: the leases it was set up for.
        existing: String,
        /// The leases asked for.
        requested: u32,
    },

    /// A ZooKeeper reply that zoolock has no better name for.
    #[error("ZooKeeper error on {path}: {source}")]
    ZooKeeper {
        /// The node the request was about.
        path: String,
        /// zookeeper-client's error.
        source: zookeeper_client::Error,
    },
}

/// zoolock's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Names the node an unexpected ZooKeeper reply was about.
    pub(crate) fn zk(path: &str, action: &'static str, err: zookeeper_client::Error) -> Error {
        use zookeeper_client::Error as Zk;
        match err {
            Zk::NoAuth => Error::NoAuth { action, path: path.to_owned() },
            Zk::AuthFailed => Error::AuthFailed,
            Zk::ClientClosed => Error::Closed,
            source => Error::ZooKeeper { path: path.to_owned(), source },
        }
    }
}

use std::time::Duration;

/// Everything that can go wrong in zoolock. Each binding maps this enum once:
/// Python to kazoo's exception names, C to status codes, C# to exceptions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("invalid lock path {path:?}: {reason}")]
    InvalidPath { path: String, reason: &'static str },

    #[error("invalid connect string {connect:?}: {reason}")]
    InvalidConnectString { connect: String, reason: String },

    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    #[error("could not connect to ZooKeeper at {hosts} within {timeout:?}")]
    ConnectTimeout { hosts: String, timeout: Duration },

    /// The chroot of the connect string names a node that does not exist.
    #[error("chroot {0} does not exist on the server")]
    NoChroot(String),

    /// A bounded wait ran out before the server answered (connection down).
    #[error("ZooKeeper did not answer within {0:?}: connection lost")]
    ConnectionLoss(Duration),

    #[error("acquire of {path} was cancelled")]
    Cancelled { path: String },

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
    Forked { parent: u32 },

    #[error("not authorized to {action} {path}")]
    NoAuth { action: &'static str, path: String },

    #[error("authentication with ZooKeeper failed")]
    AuthFailed,

    /// kazoo's `ValueError("Inconsistent max leases …")`.
    #[error("semaphore {path} is set up for {existing} leases, not {requested}")]
    InconsistentLeases { path: String, existing: String, requested: u32 },

    /// A ZooKeeper reply that zoolock has no better name for.
    #[error("ZooKeeper error on {path}: {source}")]
    ZooKeeper { path: String, source: zookeeper_client::Error },
}

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

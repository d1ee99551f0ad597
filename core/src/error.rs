use std::time::Duration;

use crate::codes::codes;

/// Everything that can go wrong in zoolock. Each binding maps this enum once,
/// and nothing else: Python to kazoo's exception names, C to status codes, C#
/// to exceptions (docs/errors.md has the table). A ZooKeeper reply is one
/// of its kinds (`NoNode`, `SessionExpired`, …, or `ZooKeeper` for the rest):
/// the client crate's own error type is not part of zoolock's API.
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
    /// A path ZooKeeper or zoolock would refuse: a node path (see
    /// [`validate_node_path`](crate::validate_node_path)), a lock path or
    /// chroot (see [`validate_path`](crate::validate_path)); `reason` says
    /// which rule, and whether it is a lock path's.
    #[error("invalid path {path:?}: {reason}")]
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
        /// How long it tried, to the millisecond: the connect timeout
        /// ([`SessionOptions::connect_timeout`](crate::SessionOptions::connect_timeout)) or a little more.
        timeout: Duration,
    },

    /// The chroot of the connect string names a node that does not exist.
    #[error("chroot {0} does not exist on the server")]
    NoChroot(String),

    /// The connection was down longer than a request may wait, or dropped
    /// with the request on the wire, so whether it took effect is unknown.
    /// The session may live on: call again once it is back
    /// ([`SessionState`](crate::SessionState)).
    #[error("{}", connection_loss(.0))]
    ConnectionLoss(
        /// The bound that ran out; zero if the connection dropped under the request.
        Duration,
    ),

    /// The acquire was cancelled (`Lock::cancel`); its node is deleted.
    #[error("acquire of {path} was cancelled")]
    Cancelled {
        /// The lock path.
        path: String,
    },

    /// The session was closed (`Session::close`): every call on it fails at once.
    #[error("the session was closed")]
    Closed,

    /// The tokio runtime the session ran on (the caller's, see
    /// [`Session::connect`](crate::Session::connect)) shut down, and with it
    /// the session's connection: every call fails; connect a new session.
    #[error("the tokio runtime this session ran on has shut down; connect a new session")]
    RuntimeGone,

    /// A release of a reentrant lock by another owner (thread, task) than
    /// the one holding it; the hold is untouched (Curator's
    /// `IllegalMonitorStateException`, Python's `RLock`).
    #[error("{path} is held by another owner of this reentrant lock: only its owner may release it")]
    NotOwner {
        /// The lock path.
        path: String,
    },

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
    Tls {
        /// What the handshake or the key files said.
        reason: String,
    },

    /// kazoo's `ValueError("Inconsistent max leases …")`, whose words the message starts with.
    #[error("Inconsistent max leases: {existing}, expected: {requested}: semaphore {path} is set up for {existing} leases, not {requested}")]
    InconsistentLeases {
        /// The semaphore's path.
        path: String,
        /// The data of the semaphore's node: the leases it was set up for.
        existing: String,
        /// The leases asked for.
        requested: u32,
    },

    /// The lock path holds a node of a library that would not see this
    /// handle's node (its name follows another [`Scheme`](crate::Scheme)):
    /// both could hold at once, so the acquire stopped and left no node.
    /// Give every client of the path one scheme ([`Family::scheme`](crate::naming::Family::scheme)).
    #[error("{path} has node {node}, written by {}, which would not see this lock's {} node: two holders could follow, so zoolock does not queue there; {}", .family.library(), .scheme.name(), mixed_advice(*.family))]
    MixedSchemes {
        /// The lock path.
        path: String,
        /// The node of the other library.
        node: String,
        /// Whose node it is, by its name.
        family: crate::naming::Family,
        /// The scheme this handle names its nodes with.
        scheme: crate::Scheme,
    },

    /// A node a request needed is not there: the node a znode call names
    /// ([`Session::get`](crate::Session::get), …) or its parent, or a lock
    /// path's ancestor or the chroot, deleted after the session connected
    /// (an operator's `deleteall`, a cleanup job). Create it again, or change
    /// the path; zoolock creates a lock's missing parents itself, and the
    /// chroot only if [`SessionOptions::create_chroot`](crate::SessionOptions::create_chroot).
    #[error("could not {action} {path}: no such node")]
    NoNode {
        /// What was asked ("create", "read", …).
        action: &'static str,
        /// The node (below the chroot, if any).
        path: String,
    },

    /// A node to be created exists already: one a znode call creates
    /// ([`Session::create`](crate::Session::create), a transaction), or one
    /// of zoolock's own, whose names no one else uses (another client made
    /// it: look for who).
    #[error("could not {action} {path}: the node exists")]
    NodeExists {
        /// What was asked.
        action: &'static str,
        /// The node.
        path: String,
    },

    /// A write conditional on a node's version found another version: the
    /// node changed since it was read. Read it again and decide again.
    #[error("could not {action} {path}: its version changed")]
    BadVersion {
        /// What was asked.
        action: &'static str,
        /// The node.
        path: String,
    },

    /// A delete of a node that has children. Delete or wait for the
    /// children first (a lock path's children are its contenders).
    #[error("could not {action} {path}: it has children")]
    NotEmpty {
        /// What was asked.
        action: &'static str,
        /// The node.
        path: String,
    },

    /// The session expired before the request was answered: its ephemeral
    /// nodes, and with them its holds, are gone (a hold learns it as
    /// [`LostReason::SessionExpired`](crate::LostReason::SessionExpired)).
    /// The [`Session`](crate::Session) connects a new one by itself: call again.
    /// From [`Session::connect`](crate::Session::connect) with
    /// [`SessionOptions::resume`](crate::SessionOptions::resume): the session
    /// to resume is gone, or its password is wrong (`path`: the hosts).
    #[error("could not {action} {path}: the session expired")]
    SessionExpired {
        /// What was asked.
        action: &'static str,
        /// The node.
        path: String,
    },

    /// A fenced write ([`Transaction::fenced_by`](crate::Transaction::fenced_by))
    /// by a handle that does not hold, or whose node was gone when the write
    /// reached the server (deleted by an operator, its session expired):
    /// nothing of the write took effect.
    #[error("{path} is not held by this handle: the fenced write was not made")]
    NotHeld {
        /// The lock path (a semaphore's pool node).
        path: String,
    },

    /// A create below an ephemeral node: ephemeral nodes cannot have
    /// children. Make the parent persistent.
    #[error("could not {action} {path}: its parent is ephemeral, and ephemeral nodes cannot have children")]
    NoChildrenForEphemerals {
        /// What was asked.
        action: &'static str,
        /// The node that was to be created.
        path: String,
    },

    /// ZooKeeper refused an ACL: an empty list, an unknown scheme, or an id
    /// its scheme cannot parse. Fix the ACL; sending it again cannot help.
    #[error("could not {action} {path}: ZooKeeper refused its ACL (empty, an unknown scheme, or a malformed id)")]
    InvalidAcl {
        /// What was asked.
        action: &'static str,
        /// The node the ACL was for.
        path: String,
    },

    /// ZooKeeper (or zookeeper-client, before sending) refused a request's
    /// arguments: a reconfiguration spec the server cannot parse, or the
    /// like. Fix the request; sending it again cannot help.
    #[error("could not {action} {path}: bad arguments: {reason}")]
    BadArguments {
        /// What was asked.
        action: &'static str,
        /// The node the request was for.
        path: String,
        /// Who refused, in zookeeper-client's words ("server error": the server).
        reason: String,
    },

    /// A change whose request was sent but not answered (the connection
    /// dropped, or the session expired, under it) and whose outcome the node
    /// no longer tells: it may or may not have been made. Of its own kind,
    /// [`ErrorKind::OutcomeUnknown`], and not [retryable](Error::is_retryable):
    /// read the node and decide; sending the change again may make it twice.
    #[error("could not tell whether the {action} of {path} was made: the connection was lost before ZooKeeper answered, and the node has changed since")]
    OutcomeUnknown {
        /// What was asked.
        action: &'static str,
        /// The node.
        path: String,
    },

    /// A recipe's node holds data the recipe cannot read: a counter's value
    /// that is not a number of the counter's type, a lease record that is
    /// not kazoo's JSON. Another program wrote the node: fix or delete it.
    #[error("{path} holds data this recipe cannot read: {reason}")]
    BadData {
        /// The node.
        path: String,
        /// What is wrong with it.
        reason: String,
    },

    /// Any other failure of a request that zoolock has no better name for:
    /// ZooKeeper refused it (e.g. a quota) or the client failed it. `message` says which; a kind a
    /// program must tell apart deserves a variant of its own.
    #[error("could not {action} {path}: {message}")]
    ZooKeeper {
        /// What was asked.
        action: &'static str,
        /// The node the request was about.
        path: String,
        /// ZooKeeper's (or the client's) description of the failure.
        message: String,
    },
}

fn mixed_advice(family: crate::naming::Family) -> String {
    match family.scheme() {
        Some(scheme) => format!(
            "use the {name} scheme on this path (Scheme::{scheme:?}, scheme=\"{name}\", --scheme {name}, C# \
             NamingScheme(ZooKeeperNamingScheme.{scheme:?})){}",
            if scheme == crate::Scheme::DistributedLock { "; it names mutexes only" } else { "" },
            name = scheme.name(),
        ),
        None => {
            "move every client of this path to one library: zoolock cannot write that library's node names".to_owned()
        }
    }
}

fn connection_loss(waited: &Duration) -> String {
    if waited.is_zero() {
        "the connection to ZooKeeper was lost before it answered".to_owned()
    } else {
        format!("ZooKeeper did not answer within {waited:?}: connection lost")
    }
}

codes! {
    /// Which kind of failure an [`Error`] is ([`Error::kind`]): what a program
    /// acts on, with the stable number the C ABI returns for it and a name.
    /// Each binding maps the kinds once (docs/errors.md); the C header and
    /// the C# `ZooLockStatus` are generated from this list.
    ///
    /// Exhaustive on purpose, unlike [`Error`]: each binding matches it with no
    /// wildcard, so a kind added here fails to compile until every binding
    /// maps it. For a Rust caller that matches it exhaustively, a new kind is
    /// a breaking change and ships as one; [`Error`] stays `#[non_exhaustive]`,
    /// so a new variant of an existing kind is not.
    pub enum ErrorKind {
        /// A lock path (or chroot) ZooKeeper or zoolock would refuse: empty, relative, `/`, `//`, reserved, too long, not UTF-8.
        InvalidPath = 1 => "invalid_path",
        /// A connect string with no host, a bad port or a bad chroot.
        InvalidConnectString = 2 => "invalid_connect_string",
        /// Any other bad argument: a negative or NaN timeout, an identifier not UTF-8 or too long, zero leases, an unknown kind, a null handle.
        InvalidArgument = 3 => "invalid_argument",
        /// No server answered within the connect timeout.
        ConnectTimeout = 4 => "connect_timeout",
        /// The chroot of the connect string does not exist on the server.
        NoChroot = 5 => "no_chroot",
        /// The connection stayed down longer than a request may wait, or dropped under it.
        ConnectionLoss = 6 => "connection_loss",
        /// The acquire was cancelled; it left no node.
        Cancelled = 7 => "cancelled",
        /// The session was closed.
        Closed = 8 => "closed",
        /// This process was forked after zoolock started in its parent.
        Forked = 9 => "forked",
        /// The session's credentials do not allow the operation.
        NoAuth = 10 => "no_auth",
        /// ZooKeeper refused the session's credentials.
        AuthFailed = 11 => "auth_failed",
        /// The semaphore's pool node was set up for another number of leases.
        InconsistentLeases = 12 => "inconsistent_leases",
        /// Another failure of a ZooKeeper request, with no kind of its own (a quota, …): the message says which.
        ZooKeeper = 13 => "zookeeper",
        // 14 is the C ABI's ZL_PANIC: a panic caught at the boundary, no kind of the core's.
        /// A release of a reentrant lock by another owner than the one holding it; the hold is untouched.
        NotOwner = 15 => "not_owner",
        /// A node a request needed is not there.
        NoNode = 16 => "no_node",
        /// A node to be created exists already.
        NodeExists = 17 => "node_exists",
        /// A write conditional on a node's version found another version.
        BadVersion = 18 => "bad_version",
        /// A delete of a node that has children.
        NotEmpty = 19 => "not_empty",
        /// The session expired before the request was answered; a new session is being opened.
        SessionExpired = 20 => "session_expired",
        /// A fenced write by a handle or leadership that no longer holds: nothing of it was made.
        NotHeld = 21 => "not_held",
        /// A TLS connect failed (an untrusted or misnamed server certificate, a refused or unreadable client certificate or key, a wrong key password, TLS against a plaintext port or the reverse): the message says why.
        Tls = 22 => "tls",
        /// A create below an ephemeral node: ephemeral nodes cannot have children.
        NoChildrenForEphemerals = 23 => "no_children_for_ephemerals",
        /// ZooKeeper refused an ACL (empty, an unknown scheme, a malformed id).
        InvalidAcl = 24 => "invalid_acl",
        /// The tokio runtime the session ran on shut down: connect a new session.
        RuntimeGone = 25 => "runtime_gone",
        /// A recipe's node holds data the recipe cannot read (a counter's value, a lease record).
        BadData = 26 => "bad_data",
        /// ZooKeeper refused a request's arguments (a reconfiguration spec it cannot parse, …).
        BadArguments = 27 => "bad_arguments",
        /// The lock path holds a node of a library that would not see this handle's node (another scheme): the acquire left no node.
        MixedSchemes = 28 => "mixed_schemes",
        /// A change sent but not answered, whose outcome the node no longer tells: read it and decide (not retryable).
        OutcomeUnknown = 29 => "outcome_unknown",
    }
}

impl Error {
    /// The kind of this failure: what to act on, and its code in the C ABI.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidPath { .. } => ErrorKind::InvalidPath,
            Error::InvalidConnectString { .. } => ErrorKind::InvalidConnectString,
            Error::InvalidArgument(_) => ErrorKind::InvalidArgument,
            Error::ConnectTimeout { .. } => ErrorKind::ConnectTimeout,
            Error::NoChroot(_) => ErrorKind::NoChroot,
            Error::ConnectionLoss(_) => ErrorKind::ConnectionLoss,
            Error::OutcomeUnknown { .. } => ErrorKind::OutcomeUnknown,
            Error::Cancelled { .. } => ErrorKind::Cancelled,
            Error::Closed => ErrorKind::Closed,
            Error::RuntimeGone => ErrorKind::RuntimeGone,
            Error::NotOwner { .. } => ErrorKind::NotOwner,
            Error::Forked { .. } => ErrorKind::Forked,
            Error::NoAuth { .. } => ErrorKind::NoAuth,
            Error::AuthFailed => ErrorKind::AuthFailed,
            Error::Tls { .. } => ErrorKind::Tls,
            Error::InconsistentLeases { .. } => ErrorKind::InconsistentLeases,
            Error::NoNode { .. } => ErrorKind::NoNode,
            Error::NodeExists { .. } => ErrorKind::NodeExists,
            Error::BadVersion { .. } => ErrorKind::BadVersion,
            Error::NotEmpty { .. } => ErrorKind::NotEmpty,
            Error::SessionExpired { .. } => ErrorKind::SessionExpired,
            Error::NotHeld { .. } => ErrorKind::NotHeld,
            Error::NoChildrenForEphemerals { .. } => ErrorKind::NoChildrenForEphemerals,
            Error::InvalidAcl { .. } => ErrorKind::InvalidAcl,
            Error::ZooKeeper { .. } => ErrorKind::ZooKeeper,
            Error::BadData { .. } => ErrorKind::BadData,
            Error::BadArguments { .. } => ErrorKind::BadArguments,
            Error::MixedSchemes { .. } => ErrorKind::MixedSchemes,
        }
    }

    /// An error of `kind`, with made-up details: for the bindings' tests,
    /// which walk every kind through their mapping.
    #[doc(hidden)]
    pub fn example(kind: ErrorKind) -> Error {
        let path = "/locks/example".to_owned();
        let action = "create";
        match kind {
            ErrorKind::InvalidPath => Error::InvalidPath { path, reason: "it must be absolute" },
            ErrorKind::InvalidConnectString => {
                Error::InvalidConnectString { connect: "zk1:".to_owned(), reason: "no port".to_owned() }
            }
            ErrorKind::InvalidArgument => Error::InvalidArgument("a timeout of -1 s".to_owned()),
            ErrorKind::ConnectTimeout => {
                Error::ConnectTimeout { hosts: "zk1:2181".to_owned(), timeout: Duration::from_secs(1) }
            }
            ErrorKind::NoChroot => Error::NoChroot("/app".to_owned()),
            ErrorKind::ConnectionLoss => Error::ConnectionLoss(Duration::from_secs(2)),
            ErrorKind::Cancelled => Error::Cancelled { path },
            ErrorKind::Closed => Error::Closed,
            ErrorKind::Forked => Error::Forked { parent: 1 },
            ErrorKind::NoAuth => Error::NoAuth { action, path },
            ErrorKind::AuthFailed => Error::AuthFailed,
            ErrorKind::InconsistentLeases => Error::InconsistentLeases { path, existing: "3".to_owned(), requested: 2 },
            ErrorKind::ZooKeeper => Error::ZooKeeper { action, path, message: "quota exceeded".to_owned() },
            ErrorKind::NotOwner => Error::NotOwner { path },
            ErrorKind::NoNode => Error::NoNode { action, path },
            ErrorKind::NodeExists => Error::NodeExists { action, path },
            ErrorKind::BadVersion => Error::BadVersion { action, path },
            ErrorKind::NotEmpty => Error::NotEmpty { action, path },
            ErrorKind::SessionExpired => Error::SessionExpired { action, path },
            ErrorKind::NotHeld => Error::NotHeld { path },
            ErrorKind::Tls => Error::Tls { reason: "unknown issuer".to_owned() },
            ErrorKind::NoChildrenForEphemerals => Error::NoChildrenForEphemerals { action, path },
            ErrorKind::InvalidAcl => Error::InvalidAcl { action, path },
            ErrorKind::RuntimeGone => Error::RuntimeGone,
            ErrorKind::BadData => Error::BadData { path, reason: "not a whole number: \"seven\"".to_owned() },
            ErrorKind::BadArguments => Error::BadArguments {
                action: "reconfigure",
                path: "/zookeeper/config".to_owned(),
                reason: "server error".to_owned(),
            },
            ErrorKind::OutcomeUnknown => Error::OutcomeUnknown { action: "change", path },
            ErrorKind::MixedSchemes => Error::MixedSchemes {
                path,
                node: "_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-0000000002".to_owned(),
                family: crate::naming::Family::Curator,
                scheme: crate::Scheme::Kazoo,
            },
        }
    }
}

/// zoolock's result: [`Error`] unless said otherwise.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The one translation of a zookeeper-client error into zoolock's kinds:
    /// `action` and `path` say what failed, for the message.
    pub(crate) fn zk(path: &str, action: &'static str, err: zookeeper_client::Error) -> Error {
        use zookeeper_client::Error as Zk;
        let path = path.to_owned();
        match err {
            Zk::NoNode => Error::NoNode { action, path },
            Zk::NodeExists => Error::NodeExists { action, path },
            Zk::BadVersion => Error::BadVersion { action, path },
            Zk::NotEmpty => Error::NotEmpty { action, path },
            Zk::NoChildrenForEphemerals => Error::NoChildrenForEphemerals { action, path },
            Zk::InvalidAcl => Error::InvalidAcl { action, path },
            Zk::BadArguments(reason) => Error::BadArguments { action, path, reason: reason.to_string() },
            Zk::SessionExpired => Error::SessionExpired { action, path },
            Zk::NoAuth => Error::NoAuth { action, path },
            Zk::AuthFailed => Error::AuthFailed,
            Zk::ClientClosed => Error::Closed,
            Zk::ConnectionLoss => Error::ConnectionLoss(Duration::ZERO),
            // zookeeper-client fails a request whose connection broke under it
            // (a broken pipe, a reset) with the I/O error: the same loss to
            // the caller, who may retry (as `connection_lost` says).
            Zk::Custom(_) => Error::ConnectionLoss(Duration::ZERO),
            // The server refused the request, unapplied, because the session
            // moved to another server; the client reconnects. kazoo retries
            // it as it retries a connection loss.
            Zk::SessionMoved => Error::ConnectionLoss(Duration::ZERO),
            ref refused if refused_by_ended_session(refused) => Error::ConnectionLoss(Duration::ZERO),
            other => Error::ZooKeeper { action, path, message: other.to_string() },
        }
    }
}

/// Whether a request failed because its connection broke: it may or may not
/// have been applied. zookeeper-client fails the requests in flight with the
/// connection's own error — `ConnectionLoss`, or a custom one such as "no
/// response from connection in 1600ms" — so both count.
pub(crate) fn connection_lost(err: &zookeeper_client::Error) -> bool {
    use zookeeper_client::Error as Zk;
    matches!(err, Zk::ConnectionLoss | Zk::Custom(_)) || refused_by_ended_session(err)
}

/// A request zookeeper-client could not hand to its session task, which had
/// ended (the session closing or expired) while the state it reports was
/// still `SyncConnected`: it fails with `UnexpectedError("expect error
/// state, got …")` (zookeeper-client 0.11's `SessionState::to_error`). Never
/// sent, but counted as lost like any request on a dying connection: the
/// caller looks at the session, which then tells expired or closed.
/// Assumes that wording; another one falls back to the generic kind.
fn refused_by_ended_session(err: &zookeeper_client::Error) -> bool {
    matches!(err, zookeeper_client::Error::UnexpectedError(message) if message.starts_with("expect error state"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zookeeper_client::Error as Zk;

    /// Retry logic written on `kind()` and on `is_retryable()` agree: the
    /// retryable errors are exactly those of the retryable kinds.
    #[test]
    fn a_kind_is_retryable_exactly_when_its_errors_are() {
        for kind in ErrorKind::ALL {
            let retryable = matches!(kind, ErrorKind::ConnectionLoss | ErrorKind::SessionExpired);
            assert_eq!(Error::example(kind).is_retryable(), retryable, "{kind:?}");
        }
    }

    #[test]
    fn each_reply_a_binding_must_tell_apart_has_its_own_kind() {
        let kind = |err| Error::zk("/locks/x", "create", err);
        let path = || "/locks/x".to_owned();
        let action = "create";
        assert_eq!(kind(Zk::NoNode), Error::NoNode { action, path: path() });
        assert_eq!(kind(Zk::NodeExists), Error::NodeExists { action, path: path() });
        assert_eq!(kind(Zk::BadVersion), Error::BadVersion { action, path: path() });
        assert_eq!(kind(Zk::NotEmpty), Error::NotEmpty { action, path: path() });
        assert_eq!(kind(Zk::SessionExpired), Error::SessionExpired { action, path: path() });
        assert_eq!(kind(Zk::NoAuth), Error::NoAuth { action, path: path() });
        assert_eq!(kind(Zk::AuthFailed), Error::AuthFailed);
        assert_eq!(kind(Zk::ClientClosed), Error::Closed);
        assert_eq!(kind(Zk::ConnectionLoss), Error::ConnectionLoss(Duration::ZERO));
        assert_eq!(kind(Zk::NoChildrenForEphemerals), Error::NoChildrenForEphemerals { action, path: path() });
        assert_eq!(kind(Zk::InvalidAcl), Error::InvalidAcl { action, path: path() });
        let refused = kind(Zk::BadArguments(&"server error"));
        assert_eq!(refused, Error::BadArguments { action, path: path(), reason: "server error".to_owned() });
        assert_eq!(refused.to_string(), "could not create /locks/x: bad arguments: server error");
        let other = kind(Zk::QuotaExceeded);
        assert_eq!(other, Error::ZooKeeper { action, path: path(), message: Zk::QuotaExceeded.to_string() });
        assert_eq!(other.to_string(), format!("could not create /locks/x: {}", Zk::QuotaExceeded));
    }

    /// zookeeper-client fails a request it could not hand to its session
    /// task (the task ended: the session is closing or expired) with the
    /// state it last saw, which may still be `SyncConnected`; seen under load
    /// as an acquire failing with "unexpected error: expect error state, got
    /// SyncConnected".
    #[test]
    fn a_request_refused_by_an_ended_session_task_is_a_connection_loss() {
        let err = Zk::UnexpectedError("expect error state, got SyncConnected".to_owned());
        assert!(connection_lost(&err));
        assert_eq!(Error::zk("/locks/x", "create", err), Error::ConnectionLoss(Duration::ZERO));
        // Other unexpected errors keep their words.
        let other = Zk::UnexpectedError("unexpected op code 99".to_owned());
        assert!(!connection_lost(&other));
        assert_eq!(Error::zk("/locks/x", "create", other).kind(), ErrorKind::ZooKeeper);
    }

    #[test]
    fn each_kind_has_an_error_of_that_kind() {
        for kind in ErrorKind::ALL {
            assert_eq!(Error::example(kind).kind(), kind);
        }
    }

    #[test]
    fn a_connection_lost_under_a_request_does_not_claim_a_wait() {
        assert_eq!(
            Error::ConnectionLoss(Duration::ZERO).to_string(),
            "the connection to ZooKeeper was lost before it answered"
        );
        assert_eq!(
            Error::ConnectionLoss(Duration::from_secs(2)).to_string(),
            "ZooKeeper did not answer within 2s: connection lost"
        );
    }
}

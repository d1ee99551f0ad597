//! kazoo's exception names and hierarchy, and the one mapping from the
//! core's `zoolock::Error` to them.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use zoolock::Error;

create_exception!(
    zoolock,
    KazooException,
    PyException,
    "Base of every zoolock (and kazoo) error."
);
create_exception!(
    zoolock,
    ZookeeperError,
    KazooException,
    "An error the ZooKeeper server reported."
);
create_exception!(
    zoolock,
    ConnectionLoss,
    ZookeeperError,
    "ZooKeeper did not answer: the connection is down."
);
create_exception!(
    zoolock,
    NoNodeError,
    ZookeeperError,
    "A node (e.g. the chroot) does not exist."
);
create_exception!(
    zoolock,
    NodeExistsError,
    ZookeeperError,
    "A node already exists."
);
create_exception!(
    zoolock,
    NoAuthError,
    ZookeeperError,
    "Not authorized: the node's ACL refuses this client."
);
create_exception!(
    zoolock,
    AuthFailedError,
    ZookeeperError,
    "Authentication with ZooKeeper failed."
);
create_exception!(
    zoolock,
    SessionExpiredError,
    ZookeeperError,
    "The ZooKeeper session expired."
);
create_exception!(
    zoolock,
    ConnectionClosedError,
    SessionExpiredError,
    "The client was never started, or was stopped or closed."
);
create_exception!(
    zoolock,
    CancelledError,
    KazooException,
    "The acquire was cancelled by cancel()."
);
create_exception!(
    zoolock,
    LockTimeout,
    KazooException,
    "A blocking acquire with a timeout ran out of time."
);
create_exception!(
    zoolock,
    ConfigurationError,
    KazooException,
    "The client is configured in a way zoolock refuses."
);
create_exception!(
    zoolock,
    ForkedError,
    KazooException,
    "zoolock was started in a parent process; its threads do not survive fork(). \
     Use zoolock in processes started fresh (multiprocessing's 'spawn' start method)."
);
create_exception!(
    zoolock,
    KazooTimeoutError,
    PyException,
    "start() could not connect in time (like kazoo's, not a KazooException)."
);

/// Raises a core error as the exception kazoo would raise in its place.
pub fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        Error::InvalidPath { .. }
        | Error::InvalidConnectString { .. }
        | Error::InvalidArgument(_) => PyValueError::new_err(message),
        Error::InconsistentLeases {
            existing,
            requested,
            ..
        } => PyValueError::new_err(format!(
            "Inconsistent max leases: {existing}, expected: {requested}"
        )),
        Error::ConnectTimeout { .. } => {
            KazooTimeoutError::new_err(format!("Connection time-out: {message}"))
        }
        Error::NoChroot(_) => NoNodeError::new_err(message),
        Error::ConnectionLoss(_) => ConnectionLoss::new_err(message),
        Error::Cancelled { .. } => CancelledError::new_err(message),
        Error::Closed => ConnectionClosedError::new_err("Connection has been closed"),
        // threading.RLock's release by a thread that does not own it.
        Error::NotOwner { .. } => PyRuntimeError::new_err(message),
        Error::Forked { .. } => ForkedError::new_err(message),
        Error::NoAuth { .. } => NoAuthError::new_err(message),
        Error::AuthFailed => AuthFailedError::new_err(message),
        Error::ZooKeeper { ref source, .. } => {
            use zookeeper_client::Error as Zk;
            match source {
                Zk::NoNode => NoNodeError::new_err(message),
                Zk::NodeExists => NodeExistsError::new_err(message),
                Zk::NoAuth => NoAuthError::new_err(message),
                Zk::AuthFailed => AuthFailedError::new_err(message),
                Zk::SessionExpired => SessionExpiredError::new_err(message),
                Zk::ConnectionLoss => ConnectionLoss::new_err(message),
                Zk::ClientClosed => ConnectionClosedError::new_err(message),
                _ => ZookeeperError::new_err(message),
            }
        }
        _ => KazooException::new_err(message),
    }
}

/// `Result<T, zoolock::Error>` → `PyResult<T>`.
pub trait IntoPy<T> {
    fn py_err(self) -> PyResult<T>;
}

impl<T> IntoPy<T> for zoolock::Result<T> {
    fn py_err(self) -> PyResult<T> {
        self.map_err(to_py)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("KazooException", py.get_type::<KazooException>())?;
    m.add("ZookeeperError", py.get_type::<ZookeeperError>())?;
    m.add("ConnectionLoss", py.get_type::<ConnectionLoss>())?;
    m.add("NoNodeError", py.get_type::<NoNodeError>())?;
    m.add("NodeExistsError", py.get_type::<NodeExistsError>())?;
    m.add("NoAuthError", py.get_type::<NoAuthError>())?;
    m.add("AuthFailedError", py.get_type::<AuthFailedError>())?;
    m.add("SessionExpiredError", py.get_type::<SessionExpiredError>())?;
    m.add(
        "ConnectionClosedError",
        py.get_type::<ConnectionClosedError>(),
    )?;
    m.add("CancelledError", py.get_type::<CancelledError>())?;
    m.add("LockTimeout", py.get_type::<LockTimeout>())?;
    m.add("ConfigurationError", py.get_type::<ConfigurationError>())?;
    m.add("ForkedError", py.get_type::<ForkedError>())?;
    m.add("KazooTimeoutError", py.get_type::<KazooTimeoutError>())?;
    Ok(())
}

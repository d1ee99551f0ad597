//! The one mapping from the core's `zoolock::Error` to kazoo's exception
//! names (defined, with kazoo's hierarchy, in `zoolock/exceptions.py`).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::import_exception;
use pyo3::prelude::*;
use zoolock::Error;

// The classes live in Python (`zoolock/exceptions.py`) so that, when kazoo is
// importable, each can also derive from kazoo's class of the same name; the
// module is imported the first time one of them is raised.
import_exception!(zoolock.exceptions, KazooException);
import_exception!(zoolock.exceptions, ZookeeperError);
import_exception!(zoolock.exceptions, ConnectionLoss);
import_exception!(zoolock.exceptions, NoNodeError);
import_exception!(zoolock.exceptions, NodeExistsError);
import_exception!(zoolock.exceptions, BadVersionError);
import_exception!(zoolock.exceptions, NotEmptyError);
import_exception!(zoolock.exceptions, NoAuthError);
import_exception!(zoolock.exceptions, AuthFailedError);
import_exception!(zoolock.exceptions, SessionExpiredError);
import_exception!(zoolock.exceptions, ConnectionClosedError);
import_exception!(zoolock.exceptions, CancelledError);
import_exception!(zoolock.exceptions, LockTimeout);
import_exception!(zoolock.exceptions, ForkedError);
import_exception!(zoolock.exceptions, KazooTimeoutError);
import_exception!(zoolock.exceptions, BadArgumentsError);
import_exception!(zoolock.exceptions, NoChildrenForEphemeralsError);
import_exception!(zoolock.exceptions, NotHeldError);
import_exception!(zoolock.exceptions, InvalidACLError);
import_exception!(zoolock.exceptions, TlsError);

/// Raises a core error as the exception kazoo would raise in its place.
pub fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match err {
        // kazoo raises ValueError for some bad paths and, from the server,
        // BadArgumentsError for others; zoolock refuses all before sending,
        // with one class that is both.
        Error::InvalidPath { .. } => BadArgumentsError::new_err(message),
        Error::InvalidConnectString { .. } | Error::InvalidArgument(_) => PyValueError::new_err(message),
        Error::InconsistentLeases { existing, requested, .. } => {
            PyValueError::new_err(format!("Inconsistent max leases: {existing}, expected: {requested}"))
        }
        Error::ConnectTimeout { .. } => KazooTimeoutError::new_err(format!("Connection time-out: {message}")),
        // kazoo's start() raises KazooTimeoutError for a failed TLS connect; TlsError is one that says why.
        Error::Tls { .. } => TlsError::new_err(message),
        Error::NoChroot(_) => NoNodeError::new_err(message),
        Error::ConnectionLoss(_) => ConnectionLoss::new_err(message),
        Error::Cancelled { .. } => CancelledError::new_err(message),
        Error::Closed => ConnectionClosedError::new_err("Connection has been closed"),
        // threading.RLock's release by a thread that does not own it.
        Error::NotOwner { .. } => PyRuntimeError::new_err(message),
        Error::Forked { .. } => ForkedError::new_err(message),
        Error::NoAuth { .. } => NoAuthError::new_err(message),
        Error::AuthFailed => AuthFailedError::new_err(message),
        Error::NoNode { .. } => NoNodeError::new_err(message),
        Error::NodeExists { .. } => NodeExistsError::new_err(message),
        Error::BadVersion { .. } => BadVersionError::new_err(message),
        Error::NotEmpty { .. } => NotEmptyError::new_err(message),
        Error::SessionExpired { .. } => SessionExpiredError::new_err(message),
        Error::NotHeld { .. } => NotHeldError::new_err(message),
        Error::NoChildrenForEphemerals { .. } => NoChildrenForEphemeralsError::new_err(message),
        Error::InvalidAcl { .. } => InvalidACLError::new_err(message),
        Error::ZooKeeper { .. } => ZookeeperError::new_err(message),
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

//! The one mapping from the core's error kinds (`zoolock::ErrorKind`) to
//! kazoo's exception names (defined, with kazoo's hierarchy, in
//! `zoolock/exceptions.py`).

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::import_exception;
use pyo3::prelude::*;
use zoolock::{Error, ErrorKind};

// The classes live in Python (`zoolock/exceptions.py`) so that, when kazoo is
// importable, each can also derive from kazoo's class of the same name; the
// module is imported the first time one of them is raised.
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
import_exception!(zoolock.exceptions, ConfigurationError);

/// Raises a core error as the exception kazoo would raise in its place, with
/// the core's message: one arm per kind, no wildcard, so a kind the core adds
/// fails to compile here until it is mapped.
pub fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match err.kind() {
        // The server's BadArgumentsError in kazoo (its ValueError for "." and
        // "..", in the znode calls, is the package's).
        ErrorKind::InvalidPath => BadArgumentsError::new_err(message),
        ErrorKind::InvalidConnectString | ErrorKind::InvalidArgument => PyValueError::new_err(message),
        // kazoo's ValueError("Inconsistent max leases: …"), whose words the core's message starts with.
        ErrorKind::InconsistentLeases => PyValueError::new_err(message),
        ErrorKind::ConnectTimeout => KazooTimeoutError::new_err(message),
        // kazoo's start() raises KazooTimeoutError for a failed TLS connect; TlsError is one that says why.
        ErrorKind::Tls => TlsError::new_err(message),
        ErrorKind::NoChroot => NoNodeError::new_err(message),
        ErrorKind::ConnectionLoss => ConnectionLoss::new_err(message),
        // kazoo raises ConnectionLoss where its change may or may not have been made.
        ErrorKind::OutcomeUnknown => ConnectionLoss::new_err(message),
        ErrorKind::Cancelled => CancelledError::new_err(message),
        ErrorKind::Closed => ConnectionClosedError::new_err(message),
        // The module's runtime lives as long as the process; were it gone, no call could succeed again.
        ErrorKind::RuntimeGone => ConnectionClosedError::new_err(message),
        // threading.RLock's release by a thread that does not own it.
        ErrorKind::NotOwner => PyRuntimeError::new_err(message),
        ErrorKind::Forked => ForkedError::new_err(message),
        ErrorKind::NoAuth => NoAuthError::new_err(message),
        ErrorKind::AuthFailed => AuthFailedError::new_err(message),
        ErrorKind::NoNode => NoNodeError::new_err(message),
        ErrorKind::NodeExists => NodeExistsError::new_err(message),
        ErrorKind::BadVersion => BadVersionError::new_err(message),
        ErrorKind::NotEmpty => NotEmptyError::new_err(message),
        ErrorKind::SessionExpired => SessionExpiredError::new_err(message),
        ErrorKind::NotHeld => NotHeldError::new_err(message),
        ErrorKind::NoChildrenForEphemerals => NoChildrenForEphemeralsError::new_err(message),
        ErrorKind::InvalidAcl => InvalidACLError::new_err(message),
        ErrorKind::BadArguments => BadArgumentsError::new_err(message),
        // kazoo's class for configuration arguments an object cannot work with.
        ErrorKind::MixedSchemes => ConfigurationError::new_err(message),
        ErrorKind::ZooKeeper => ZookeeperError::new_err(message),
        // kazoo's recipes fail with the ValueError of int(), float() or json.loads().
        ErrorKind::BadData => PyValueError::new_err(message),
    }
}

/// For the tests: each kind's name, the exception an error of that kind
/// raises, and the core's message of that error.
#[pyfunction]
fn _error_examples(py: Python<'_>) -> Vec<(&'static str, Py<PyAny>, String)> {
    ErrorKind::ALL
        .into_iter()
        .map(|kind| {
            let error = Error::example(kind);
            let message = error.to_string();
            (kind.name(), to_py(error).into_value(py).into_any(), message)
        })
        .collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(_error_examples, m)?)
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

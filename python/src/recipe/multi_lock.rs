//! zoolock's `MultiLock` (kazoo has none) over the core's `MultiLock`.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class MultiLock(Holder):
//!     """All of several kazoo Locks or none (zoolock's; kazoo has none): taken in sorted order, so two
//!     multi-locks never deadlock; released together; lost when any path's node is."""
//!
//!     def __init__(self, client: KazooClient, paths: Iterable[str], identifier: Any = None) -> None: ...
//!     def acquire(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> bool:
//!         """True once every path is held; False for a failed non-blocking try; LockTimeout on timeout.
//!         Whatever ends it early leaves no node on any path."""
//!     def acquire_async(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> Awaitable[bool]:
//!         """acquire() for asyncio."""
//!     @property
//!     def paths(self) -> List[str]:
//!         """The paths in the order taken (sorted, each once)."""
//!     @property
//!     def fencing_tokens(self) -> Dict[str, int]:
//!         """{path: fencing token} while held, in the order taken; {} when not."""
//! ```

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use pyo3::PyClassInitializer;

use crate::holder::{self, AcquireCall, Holder};

/// All of several locks or none: ``MultiLock(client, paths, identifier=None)``,
/// or ``client.MultiLock(...)``. Each path is a kazoo ``Lock`` (kazoo clients
/// locking one of the paths exclude it and are excluded). The paths are taken
/// in one order, sorted, whatever order they were given in, so two multi-locks
/// never deadlock; released together; lost when any path's node is.
#[pyclass(frozen, extends = Holder, module = "zoolock")]
pub struct MultiLock {
    paths: Vec<String>,
}

#[pymethods]
impl MultiLock {
    #[new]
    #[pyo3(signature = (client, paths, identifier=None))]
    fn new(
        client: &Bound<'_, PyAny>,
        paths: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<PyClassInitializer<Self>> {
        if paths.is_instance_of::<PyString>() {
            return Err(PyTypeError::new_err("paths must be a sequence of str, not a str"));
        }
        let mut checked = Vec::new();
        for path in paths.try_iter().map_err(|_| PyTypeError::new_err("paths must be a sequence of str"))? {
            checked.push(holder::path(&path?)?);
        }
        if checked.is_empty() {
            return Err(PyValueError::new_err("a multi-lock needs at least one path"));
        }
        let identifier = holder::identifier(identifier)?;
        checked.sort();
        checked.dedup();
        let name = format!("[{}]", checked.join(", "));
        let (paths, data) = (checked.clone(), identifier.clone());
        let holder = Holder::new(client, name, identifier, "lock", false, move |session| {
            zoolock::MultiLock::new(session, &paths, data.as_bytes())
        })?;
        Ok(PyClassInitializer::from(holder).add_subclass(MultiLock { paths: checked }))
    }

    /// Acquires every path. Returns ``True`` once all are held; ``False`` if
    /// ``blocking=False`` and one is taken. A blocking acquire whose
    /// ``timeout`` (seconds, for all paths together) runs out raises
    /// ``LockTimeout``. Whatever ends it early leaves no node on any path.
    #[pyo3(
        signature = (blocking=None, timeout=None, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, *, lease=None)"
    )]
    fn acquire(
        slf: &Bound<'_, Self>,
        blocking: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        lease: Option<f64>,
    ) -> PyResult<bool> {
        let call = AcquireCall { blocking, timeout, lease, ..AcquireCall::default() };
        slf.as_super().get().acquire(slf.py(), call)
    }

    /// ``acquire`` for asyncio; cancelling the task abandons the acquire.
    #[pyo3(
        signature = (blocking=None, timeout=None, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, *, lease=None)"
    )]
    fn acquire_async<'py>(
        slf: &Bound<'py, Self>,
        blocking: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        lease: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = AcquireCall { blocking, timeout, lease, ..AcquireCall::default() };
        slf.as_super().get().acquire_async(slf.py(), call)
    }

    /// The paths, in the order they are taken (sorted, each once).
    #[getter]
    fn paths(&self) -> Vec<String> {
        self.paths.clone()
    }

    /// Each path's fencing token (``{path: token}``, in the order taken)
    /// while held, else an empty dict: pass each to what its path guards.
    #[getter]
    fn fencing_tokens<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyDict>> {
        let tokens = PyDict::new(slf.py());
        if let Some(lock) = slf.as_super().get().last_recipe::<zoolock::MultiLock>() {
            for (path, token) in lock.fencing_tokens() {
                tokens.set_item(path, token)?;
            }
        }
        Ok(tokens)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let holder = slf.as_super();
        format!("<zoolock.MultiLock paths={:?} state={}>", slf.get().paths, holder.get().state())
    }
}

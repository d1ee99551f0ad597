//! Curator's `PersistentNode` (ephemeral) over the core's: keeping the node
//! and its faults are the core's; this translates arguments and the
//! blocking style.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class PersistentNode:
//!     """Curator's PersistentNode (ephemeral): a node kept at path while started, made again after an expiry or a deletion."""
//!
//!     def __init__(self, client: KazooClient, path: str, data: Optional[bytes] = None) -> None: ...
//!     def start(self) -> None:
//!         """Makes the node and keeps it; returns once it is this session's (another session's node is waited out)."""
//!     def set_data(self, data: bytes) -> None:
//!         """Changes the node's data, and what it is made with from now on."""
//!     def close(self) -> bool:
//!         """Stops keeping the node and deletes it; True if it was this session's."""
//!     @property
//!     def data(self) -> bytes: ...
//!     @property
//!     def is_started(self) -> bool: ...
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//!     def __enter__(self) -> PersistentNode: ...
//!     def __exit__(self, *exc: object) -> bool: ...
//! ```

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::errors::{ConnectionClosedError, IntoPy};
use crate::holder;
use crate::recipe::{call, OnClient};
use crate::wait::uninterruptible;

fn bytes(data: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let bytes = data.cast::<PyBytes>().map_err(|_| PyTypeError::new_err("data must be a byte string"))?;
    Ok(bytes.as_bytes().to_vec())
}

/// Curator's ``PersistentNode`` in its ephemeral mode,
/// ``PersistentNode(client, path, data=b"")``: ``start()`` makes an
/// ephemeral node at ``path`` (and its parents) holding ``data`` and keeps
/// it — made again after a session expiry and after anyone deletes it —
/// until ``close()``; ``set_data(data)`` changes it. A node at the path
/// that another session owns (an earlier run's, not yet expired) is waited
/// out, never changed or deleted. As a context manager it starts and closes.
#[pyclass(frozen, module = "zoolock")]
pub struct PersistentNode {
    path: String,
    /// The data as last set: a client's later `start()` makes the node on its new session with it.
    data: Arc<Mutex<Vec<u8>>>,
    core: OnClient<zoolock::PersistentNode>,
}

#[pymethods]
impl PersistentNode {
    #[new]
    #[pyo3(signature = (client, path, data=None))]
    fn new(client: &Bound<'_, PyAny>, path: &Bound<'_, PyAny>, data: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let path = holder::path(path)?;
        let data = Arc::new(Mutex::new(data.map(bytes).transpose()?.unwrap_or_default()));
        let (node_path, made_with) = (path.clone(), data.clone());
        let core = OnClient::new(client, move |session| {
            zoolock::PersistentNode::new(session, &node_path, made_with.lock().unwrap().clone())
        })?;
        Ok(PersistentNode { path, data, core })
    }

    /// Makes the node and keeps it; returns once it is this session's.
    /// Starting again changes nothing.
    fn start(&self, py: Python<'_>) -> PyResult<()> {
        let node = self.core.get(py)?;
        call(py, async move { node.start().await })
    }

    /// Changes the node's data, and what it is made with from now on.
    fn set_data(&self, py: Python<'_>, data: &Bound<'_, PyAny>) -> PyResult<()> {
        let node = self.core.get(py)?;
        let data = bytes(data)?;
        *self.data.lock().unwrap() = data.clone();
        call(py, async move { node.set_data(data).await })
    }

    /// Stops keeping the node and deletes it: ``True`` if it was this
    /// session's. Not cut short by Ctrl-C, as a lock's release is not: a
    /// close half done would leave the node. A ``start()`` waiting in
    /// another thread ends with ``CancelledError``.
    fn close(&self, py: Python<'_>) -> PyResult<bool> {
        let node = self.core.get(py)?;
        uninterruptible(py, async move { node.close().await })?.py_err()
    }

    /// The data the node is made with.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.data.lock().unwrap())
    }

    /// Whether it is started and not closed.
    #[getter]
    fn is_started(&self) -> bool {
        self.core.last().is_some_and(|node| node.is_started())
    }

    /// The node's path.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// The client it was made with.
    #[getter]
    fn client(&self, py: Python<'_>) -> Py<PyAny> {
        self.core.client(py).into_any()
    }

    fn __enter__(slf: Bound<'_, Self>) -> PyResult<Bound<'_, Self>> {
        slf.get().start(slf.py())?;
        Ok(slf)
    }

    /// Closes; on a stopped client there is nothing to close (the node went with its session).
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        match self.close(py) {
            Err(err) if err.is_instance_of::<ConnectionClosedError>(py) => Ok(false),
            other => other.map(|_| false),
        }
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.PersistentNode path={:?}>", self.path)
    }
}

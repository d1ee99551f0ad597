//! Curator's `PersistentNode` (ephemeral) over the core's: keeping the node
//! and its faults are the core's; this translates arguments and the
//! blocking style.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};

use crate::holder;
use crate::recipe::{call, OnClient};

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
    core: OnClient<zoolock::PersistentNode>,
}

#[pymethods]
impl PersistentNode {
    #[new]
    #[pyo3(signature = (client, path, data=None))]
    fn new(client: &Bound<'_, PyAny>, path: &Bound<'_, PyAny>, data: Option<&Bound<'_, PyAny>>) -> PyResult<Self> {
        let path = holder::path(path)?;
        let data = data.map(bytes).transpose()?.unwrap_or_default();
        let node_path = path.clone();
        let core =
            OnClient::new(client, move |session| zoolock::PersistentNode::new(session, &node_path, data.clone()))?;
        Ok(PersistentNode { path, core })
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
        call(py, async move { node.set_data(data).await })
    }

    /// Stops keeping the node and deletes it: ``True`` if it was this session's.
    fn close(&self, py: Python<'_>) -> PyResult<bool> {
        let node = self.core.get(py)?;
        call(py, async move { node.close().await })
    }

    /// The data the node is made with.
    #[getter]
    fn data<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyBytes>> {
        let node = self.core.get(py)?;
        let data = call(py, async move { Ok(node.data().await) })?;
        Ok(PyBytes::new(py, &data))
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

    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.close(py)?;
        Ok(false)
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.PersistentNode path={:?}>", self.path)
    }
}

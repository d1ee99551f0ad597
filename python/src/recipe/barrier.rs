//! kazoo's `Barrier` and `DoubleBarrier` over the core's: the nodes, the
//! waits and their faults are the core's; this translates arguments and
//! the blocking style (the GIL released while waiting, Ctrl-C).
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class Barrier:
//!     """kazoo's Barrier: up while the node at path exists."""
//!
//!     def __init__(self, client: KazooClient, path: str) -> None: ...
//!     def create(self) -> None:
//!         """Puts the barrier up."""
//!     def remove(self) -> bool:
//!         """Takes it down; True if its node was there."""
//!     def wait(self, timeout: Optional[float] = None) -> bool:
//!         """True once the barrier is down; False if timeout (seconds) ran out."""
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//!
//! @final
//! class DoubleBarrier:
//!     """kazoo's DoubleBarrier: enter waits for num_clients members, leave for all to leave."""
//!
//!     def __init__(
//!         self, client: KazooClient, path: str, num_clients: int, identifier: Any = None, node_name: Optional[str] = None
//!     ) -> None: ...
//!     def enter(self) -> None:
//!         """Returns once num_clients members are in (as kazoo's, a failure does not raise: participating is False)."""
//!     def leave(self) -> None:
//!         """Returns once every member left."""
//!     @property
//!     def participating(self) -> bool: ...
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def num_clients(self) -> int: ...
//!     @property
//!     def identifier(self) -> str: ...
//!     @property
//!     def node_name(self) -> str: ...
//!     @property
//!     def create_path(self) -> str: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//! ```

use pyo3::prelude::*;

use crate::errors::IntoPy;
use crate::holder;
use crate::recipe::{call, path_recipe, timeout, OnClient};

path_recipe!(
    /// kazoo's ``Barrier(client, path)``, or ``client.Barrier(path)``: up
    /// while the node ``path`` exists. ``create()`` puts it up, ``remove()``
    /// takes it down, ``wait(timeout=None)`` waits until it is down. Unlike
    /// kazoo's, ``wait`` goes on across a lost connection and a session expiry.
    Barrier(zoolock::Barrier) {
        /// Puts the barrier up (creates its node, if missing).
        fn create(&self, py: Python<'_>) -> PyResult<()> {
            let barrier = self.core.get(py)?;
            call(py, async move { barrier.create().await })
        }

        /// Takes the barrier down: ``True`` if its node was there.
        fn remove(&self, py: Python<'_>) -> PyResult<bool> {
            let barrier = self.core.get(py)?;
            call(py, async move { barrier.remove().await })
        }

        /// Waits until the barrier is down: ``True``; ``False`` if ``timeout``
        /// (seconds) ran out first.
        #[pyo3(signature = (timeout=None))]
        fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
            let (barrier, timeout) = (self.core.get(py)?, self::timeout(timeout)?);
            call(py, async move { barrier.wait(timeout).await })
        }
    }
);

/// kazoo's ``DoubleBarrier(client, path, num_clients, identifier=None)``:
/// ``enter()`` waits until ``num_clients`` members entered, ``leave()``
/// until every member left; ``participating`` says whether this member is
/// in. As kazoo's, a failed ``enter`` or ``leave`` does not raise: its node
/// is deleted and ``participating`` is ``False``. Unlike kazoo's, both go on
/// across a lost connection and a session expiry (entering again on the
/// new session) instead of hanging.
#[pyclass(frozen, module = "zoolock")]
pub struct DoubleBarrier {
    path: String,
    num_clients: u32,
    identifier: String,
    core: OnClient<zoolock::DoubleBarrier>,
    /// The node name, the same on every session (kazoo's `node_name`).
    node_name: String,
}

#[pymethods]
impl DoubleBarrier {
    #[new]
    #[pyo3(signature = (client, path, num_clients, identifier=None, node_name=None))]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        num_clients: u32,
        identifier: Option<&Bound<'_, PyAny>>,
        node_name: Option<String>,
    ) -> PyResult<Self> {
        let path = holder::path(path)?;
        let identifier = match holder::identifier(identifier)? {
            given if !given.is_empty() => given,
            // kazoo's default: "<fqdn>-<pid>".
            _ => format!("{}-{}", py.import("socket")?.call_method0("getfqdn")?, std::process::id()),
        };
        let node_name = match node_name {
            Some(name) => name,
            None => py.import("uuid")?.call_method0("uuid4")?.getattr("hex")?.extract()?,
        };
        // The core's checks, now rather than at the first call.
        zoolock::DoubleBarrier::check(&path, num_clients, identifier.as_bytes(), &node_name).py_err()?;
        let (barrier_path, id, name) = (path.clone(), identifier.clone(), node_name.clone());
        let core = OnClient::new(client, move |session| {
            zoolock::DoubleBarrier::with_node_name(session, &barrier_path, num_clients, id.clone(), &name)
        })?;
        Ok(DoubleBarrier { path, num_clients, identifier, core, node_name })
    }

    /// Enters; returns once ``num_clients`` members are in.
    fn enter(&self, py: Python<'_>) -> PyResult<()> {
        let barrier = self.core.get(py)?;
        match call(py, async move { barrier.enter().await }) {
            Err(err) if is_kazoo_failure(py, &err) => Ok(()),
            done => done,
        }
    }

    /// Leaves; returns once every member left.
    fn leave(&self, py: Python<'_>) -> PyResult<()> {
        let barrier = self.core.get(py)?;
        match call(py, async move { barrier.leave().await }) {
            Err(err) if is_kazoo_failure(py, &err) => Ok(()),
            done => done,
        }
    }

    /// Whether this member entered and has not left.
    #[getter]
    fn participating(&self) -> bool {
        self.core.last().is_some_and(|b| b.participating())
    }

    /// The recipe's path.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// How many members ``enter`` waits for.
    #[getter]
    fn num_clients(&self) -> u32 {
        self.num_clients
    }

    /// This member's node data (kazoo's default: ``"<fqdn>-<pid>"``).
    #[getter]
    fn identifier(&self) -> &str {
        &self.identifier
    }

    /// This member's node name under ``path`` (a uuid4 hex).
    #[getter]
    fn node_name(&self) -> &str {
        &self.node_name
    }

    /// This member's node.
    #[getter]
    fn create_path(&self) -> String {
        format!("{}/{}", self.path, self.node_name)
    }

    /// The client it was made with.
    #[getter]
    fn client(&self, py: Python<'_>) -> Py<PyAny> {
        self.core.client(py).into_any()
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.DoubleBarrier path={:?} num_clients={}>", self.path, self.num_clients)
    }
}

/// What kazoo's `enter`/`leave` swallow: its exceptions (`KazooException`),
/// not Ctrl-C.
fn is_kazoo_failure(py: Python<'_>, err: &PyErr) -> bool {
    let kazoo_exception = py.import("zoolock.exceptions").and_then(|m| m.getattr("KazooException"));
    kazoo_exception.is_ok_and(|k| err.get_type(py).is_subclass(&k).unwrap_or(false))
}

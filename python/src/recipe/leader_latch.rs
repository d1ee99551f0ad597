//! Curator's `LeaderLatch` over the core's: the campaign and its faults are
//! the core's; this translates arguments and the blocking style.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class LeaderLatch:
//!     """Curator's LeaderLatch: a candidate that stays in the election at path from start() to close()."""
//!
//!     def __init__(self, client: KazooClient, path: str, identifier: Any = None) -> None: ...
//!     def start(self) -> None:
//!         """Joins the election and returns; leads whenever it can until close()."""
//!     def wait(self, timeout: Optional[float] = None) -> bool:
//!         """True once this candidate leads; False if timeout (seconds) ran out."""
//!     def close(self) -> None:
//!         """Leaves the election: its term or candidacy ends and its node is deleted."""
//!     @property
//!     def has_leadership(self) -> bool: ...
//!     @property
//!     def fencing_token(self) -> Optional[int]: ...
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//!     def __enter__(self) -> LeaderLatch: ...
//!     def __exit__(self, *exc: object) -> bool: ...
//! ```

use pyo3::prelude::*;
use pyo3::types::PyTuple;

use crate::errors::{ConnectionClosedError, IntoPy};
use crate::holder;
use crate::recipe::{call, timeout, OnClient};
use crate::wait::uninterruptible;

/// Curator's ``LeaderLatch``, ``LeaderLatch(client, path, identifier=None)``:
/// ``start()`` joins the election at ``path`` and returns; from then until
/// ``close()`` this candidate leads whenever it can, and campaigns again
/// after a term lost to a session expiry or a deletion of its node.
/// ``has_leadership`` says whether it leads now (not while the connection
/// is suspended), ``wait(timeout)`` waits until it does (Curator's
/// ``await``), ``fencing_token`` is the leading term's. Its node is a kazoo
/// ``Election`` candidate's. As a context manager it starts and closes.
#[pyclass(frozen, module = "zoolock")]
pub struct LeaderLatch {
    path: String,
    core: OnClient<zoolock::LeaderLatch>,
}

impl LeaderLatch {
    /// The core latch made last: after a client's restart, the one on its
    /// closed session (its waits end with ``ConnectionClosedError``) until
    /// ``start()`` makes one on the new session; none yet, one on the client's.
    fn started(&self, py: Python<'_>) -> PyResult<zoolock::LeaderLatch> {
        self.core.last().map_or_else(|| self.core.get(py), Ok)
    }
}

#[pymethods]
impl LeaderLatch {
    #[new]
    #[pyo3(signature = (client, path, identifier=None))]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let path = holder::path(path)?;
        let identifier = holder::identifier(identifier)?;
        let latch_path = path.clone();
        let core =
            OnClient::new(client, move |session| zoolock::LeaderLatch::new(session, &latch_path, identifier.clone()))?;
        Ok(LeaderLatch { path, core })
    }

    /// Joins the election and returns, on the client's current session.
    /// Twice: ``ValueError``; after ``close()``: ``ConnectionClosedError``.
    fn start(&self, py: Python<'_>) -> PyResult<()> {
        self.core.get(py)?.start().py_err()
    }

    /// ``True`` once this candidate leads; ``False`` if ``timeout``
    /// (seconds, ``None`` for ever) ran out first. The GIL is released while
    /// it waits; Ctrl-C ends the wait (not the candidacy).
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let (latch, limit) = (self.started(py)?, self::timeout(timeout)?);
        call(py, async move { latch.wait(limit).await })
    }

    /// Leaves the election: ends the term it leads or its candidacy, and
    /// returns once its node is deleted. Not cut short by Ctrl-C.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        let Some(latch) = self.core.last() else { return Ok(()) };
        uninterruptible(py, async move { latch.close().await })
    }

    /// Whether this candidate leads now.
    #[getter]
    fn has_leadership(&self) -> bool {
        self.core.last().is_some_and(|latch| latch.has_leadership())
    }

    /// The fencing token of the term it leads, ``None`` when it does not lead.
    #[getter]
    fn fencing_token(&self) -> Option<i64> {
        self.core.last().and_then(|latch| latch.fencing_token())
    }

    /// The election path.
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
            other => other.map(|()| false),
        }
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.LeaderLatch path={:?}>", self.path)
    }
}

//! kazoo's `Queue` and `LockingQueue` over the core's: the nodes, the
//! order and the locks are the core's; this translates arguments (kazoo's
//! `TypeError`/`ValueError`) and the blocking style.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class Queue:
//!     """kazoo's Queue: entry-<priority>-<sequence> nodes, removed as they are taken (at most once)."""
//!
//!     def __init__(self, client: KazooClient, path: str) -> None: ...
//!     def put(self, value: bytes, priority: int = 100) -> None:
//!         """Adds value; priority 0 to 999, lower first."""
//!     def get(self) -> Optional[bytes]:
//!         """Takes the first entry's value; None if empty (does not wait)."""
//!     def __len__(self) -> int: ...
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//!
//! @final
//! class LockingQueue:
//!     """kazoo's LockingQueue: get locks an entry, consume removes it, release gives it back (at least once)."""
//!
//!     def __init__(self, client: KazooClient, path: str) -> None: ...
//!     def put(self, value: bytes, priority: int = 100) -> None:
//!         """Adds value; priority 0 to 999, lower first."""
//!     def put_all(self, values: List[bytes], priority: int = 100) -> None:
//!         """Adds every value, all or none."""
//!     def get(self, timeout: Optional[float] = None) -> Optional[bytes]:
//!         """Locks the first free entry and returns its value (the same one until consumed or released); None on timeout."""
//!     def consume(self) -> bool:
//!         """Removes the entry got; False if this consumer holds none (or lost its lock)."""
//!     def release(self) -> bool:
//!         """Gives the entry got back; False if this consumer holds none."""
//!     def holds_lock(self) -> bool:
//!         """Whether this consumer still holds the entry's lock."""
//!     def __len__(self) -> int: ...
//!     @property
//!     def processing_element(self) -> Optional[Tuple[str, bytes]]: ...
//!     @property
//!     def id(self) -> Optional[bytes]: ...
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def client(self) -> KazooClient: ...
//! ```

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};

use crate::recipe::{call, path_recipe, priority, timeout};

fn value(value: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    let bytes = value.cast::<PyBytes>().map_err(|_| PyTypeError::new_err("value must be a byte string"))?;
    Ok(bytes.as_bytes().to_vec())
}

/// kazoo's `put(value, priority=100)` arguments, checked as kazoo checks them.
fn put_args(value: &Bound<'_, PyAny>, priority: Option<&Bound<'_, PyAny>>) -> PyResult<(Vec<u8>, u32)> {
    let value = self::value(value)?;
    let priority = priority.map(self::priority).transpose()?.unwrap_or(zoolock::Queue::DEFAULT_PRIORITY);
    Ok((value, priority))
}

path_recipe!(
    /// kazoo's ``Queue(client, path)``: ``put(value, priority=100)`` adds a
    /// ``bytes`` entry (priority 0 to 999, lower first), ``get()`` takes the
    /// first (removing it) or returns ``None``, ``len(queue)``. At most once:
    /// an entry is gone before it is processed.
    Queue(zoolock::Queue) {
        /// Adds ``value`` with ``priority``.
        #[pyo3(signature = (value, priority=None), text_signature = "(self, value, priority=100)")]
        fn put(&self, py: Python<'_>, value: &Bound<'_, PyAny>, priority: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
            let (value, priority) = put_args(value, priority)?;
            let queue = self.core.get(py)?;
            call(py, async move { queue.put(&value, priority).await }).map(drop)
        }

        /// Takes the first entry's value; ``None`` if the queue is empty.
        fn get<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyBytes>>> {
            let queue = self.core.get(py)?;
            let got = call(py, async move { queue.get().await })?;
            Ok(got.map(|v| PyBytes::new(py, &v)))
        }

        fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
            let queue = self.core.get(py)?;
            call(py, async move { queue.len().await })
        }
    }
);

path_recipe!(
    /// kazoo's ``LockingQueue(client, path)``: ``get(timeout=None)`` locks the
    /// first free entry and returns its value (the same one until it is
    /// consumed or released; ``None`` if ``timeout`` ran out), ``consume()``
    /// removes it, ``release()`` gives it back, ``holds_lock()`` says whether
    /// the lock is still this consumer's; ``put``, ``put_all(values,
    /// priority=100)``, ``len(queue)``. At least once: an entry whose
    /// consumer's session ends is free again; unlike kazoo's, that consumer
    /// then says so (``holds_lock()`` and ``consume()`` are ``False``) instead
    /// of returning the lost entry again.
    LockingQueue(zoolock::LockingQueue) {
        /// Adds ``value`` with ``priority``.
        #[pyo3(signature = (value, priority=None), text_signature = "(self, value, priority=100)")]
        fn put(&self, py: Python<'_>, value: &Bound<'_, PyAny>, priority: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
            let (value, priority) = put_args(value, priority)?;
            let queue = self.core.get(py)?;
            call(py, async move { queue.put(&value, priority).await }).map(drop)
        }

        /// Adds every value of the list ``values``, all or none.
        #[pyo3(signature = (values, priority=None), text_signature = "(self, values, priority=100)")]
        fn put_all(
            &self,
            py: Python<'_>,
            values: &Bound<'_, PyAny>,
            priority: Option<&Bound<'_, PyAny>>,
        ) -> PyResult<()> {
            let values =
                values.cast::<PyList>().map_err(|_| PyTypeError::new_err("values must be a list of byte strings"))?;
            let priority = priority.map(self::priority).transpose()?.unwrap_or(zoolock::Queue::DEFAULT_PRIORITY);
            let values = values.iter().map(|v| value(&v)).collect::<PyResult<Vec<_>>>()?;
            let queue = self.core.get(py)?;
            call(py, async move { queue.put_all(&values, priority).await })
        }

        /// Locks the first free entry and returns its value, waiting up to
        /// ``timeout`` seconds (``None``: until one comes); ``None`` if none came.
        #[pyo3(signature = (timeout=None))]
        fn get<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Option<Bound<'py, PyBytes>>> {
            let (queue, timeout) = (self.core.get(py)?, self::timeout(timeout)?);
            let got = call(py, async move { queue.get(timeout).await })?;
            Ok(got.map(|v| PyBytes::new(py, &v)))
        }

        /// Removes the entry this consumer got: ``False`` if it holds none.
        fn consume(&self, py: Python<'_>) -> PyResult<bool> {
            let queue = self.core.get(py)?;
            call(py, async move { queue.consume().await })
        }

        /// Gives the entry this consumer got back: ``False`` if it holds none.
        fn release(&self, py: Python<'_>) -> PyResult<bool> {
            let queue = self.core.get(py)?;
            call(py, async move { queue.release().await })
        }

        /// Whether this consumer still holds the lock of the entry it got.
        fn holds_lock(&self, py: Python<'_>) -> PyResult<bool> {
            let queue = self.core.get(py)?;
            call(py, async move { queue.holds_lock().await })
        }

        fn __len__(&self, py: Python<'_>) -> PyResult<usize> {
            let queue = self.core.get(py)?;
            call(py, async move { queue.len().await })
        }

        /// ``(entry name, value)`` of the entry got and not consumed or released.
        #[getter]
        fn processing_element<'py>(&self, py: Python<'py>) -> Option<(String, Bound<'py, PyBytes>)> {
            let (entry, value) = self.core.last()?.processing_element()?;
            Some((entry, PyBytes::new(py, &value)))
        }

        /// This consumer's id (uuid4 hex as bytes), the data of its locks.
        #[getter]
        fn id<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyBytes>> {
            self.core.last().map(|q| PyBytes::new(py, q.id().as_bytes()))
        }
    }
);

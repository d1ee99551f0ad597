//! kazoo's `Semaphore` over the core's `Semaphore`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyTuple};
use zoolock::{Holder, Owner};

use crate::handle::{self, lost_reason, state_name, AcquireArgs, Handle, LostEvent};

/// A counting semaphore in kazoo's layout, shared with kazoo clients:
/// ``Semaphore(client, path, identifier=None, max_leases=1)``, or
/// ``client.Semaphore(...)``. Up to ``max_leases`` holders at once; every
/// party must agree on ``max_leases`` (else ``ValueError``).
#[pyclass(frozen, module = "zoolock", name = "Semaphore")]
pub struct PySemaphore {
    handle: Handle<zoolock::Semaphore>,
    identifier: String,
    max_leases: u32,
}

#[pymethods]
impl PySemaphore {
    #[new]
    #[pyo3(
        signature = (client, path, identifier=None, max_leases=None),
        text_signature = "(client, path, identifier=None, max_leases=1)"
    )]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        max_leases: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        PySemaphore::build(client, path, identifier, max_leases)
    }

    /// Takes a lease. Returns ``True`` once held; ``False`` if
    /// ``blocking=False`` and none is free. A blocking acquire whose
    /// ``timeout`` (seconds) runs out raises ``LockTimeout``. ``lease``
    /// (seconds) gives the lease back by itself after that long.
    #[pyo3(
        signature = (blocking=None, timeout=None, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, *, lease=None)"
    )]
    fn acquire(
        &self,
        py: Python<'_>,
        blocking: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        lease: Option<f64>,
    ) -> PyResult<bool> {
        self.handle.acquire(py, args(py, blocking, timeout, lease)?)
    }

    /// ``acquire`` for asyncio; cancelling the task abandons the acquire.
    #[pyo3(
        signature = (blocking=None, timeout=None, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, *, lease=None)"
    )]
    fn acquire_async<'py>(
        &self,
        py: Python<'py>,
        blocking: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        lease: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.handle
            .acquire_async(py, args(py, blocking, timeout, lease)?)
    }

    /// Gives the lease back: ``True`` if this object held one, else ``False``.
    fn release(&self, py: Python<'_>) -> PyResult<bool> {
        self.handle.release(py, Owner::HANDLE)
    }

    /// ``release`` for asyncio.
    fn release_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.handle.release_async(py, Owner::HANDLE)
    }

    /// Makes the acquires pending on this object now raise ``CancelledError``.
    fn cancel(&self) {
        self.handle.cancel()
    }

    /// The identifiers of the current lease holders, in no particular order.
    fn lease_holders(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.handle
            .call(py, |core| async move { core.queue().await })
    }

    /// Whether this object holds a lease now (``False`` once it is lost).
    #[getter]
    fn is_acquired(&self) -> bool {
        self.handle.is_acquired()
    }

    /// ``"RELEASED"``, ``"HELD"``, ``"SUSPENDED"`` or ``"LOST"``.
    #[getter]
    fn state(&self) -> &'static str {
        state_name(self.handle.state())
    }

    /// Why the last lease was lost, or ``None`` unless ``state`` is ``"LOST"``.
    #[getter]
    fn lost_reason(&self) -> Option<&'static str> {
        lost_reason(self.handle.state())
    }

    /// An event set when the current lease is lost (see ``Lock.lost``).
    #[getter]
    fn lost(&self) -> LostEvent {
        self.handle.lost_event()
    }

    /// Calls ``listener(state)`` with each new ``state``, on zoolock's callback thread.
    fn add_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.handle.add_listener(py, listener)
    }

    /// Removes a listener added with ``add_listener``.
    fn remove_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.handle.remove_listener(py, listener)
    }

    /// The semaphore path.
    #[getter]
    fn path(&self) -> &str {
        &self.handle.path
    }

    /// The identifier written as lease data.
    #[getter]
    fn identifier(&self) -> &str {
        &self.identifier
    }

    /// How many holders the semaphore admits at once.
    #[getter]
    fn max_leases(&self) -> u32 {
        self.max_leases
    }

    /// ``with semaphore:`` takes a lease (blocking) and returns ``None``.
    fn __enter__(&self, py: Python<'_>) -> PyResult<()> {
        self.acquire(py, None, None, None).map(|_| ())
    }

    /// Gives the lease back; exceptions propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.release(py)?;
        Ok(false)
    }

    /// ``async with semaphore:``.
    fn __aenter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.acquire_async(py, None, None, None)
    }

    /// Gives the lease back.
    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.release_async(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "<zoolock.Semaphore path={:?} max_leases={} state={}>",
            self.handle.path,
            self.max_leases,
            self.state()
        )
    }
}

impl PySemaphore {
    pub fn build(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        max_leases: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let max_leases: i64 = match max_leases {
            None => 1,
            Some(m) if m.is_instance_of::<PyBool>() => {
                return Err(PyTypeError::new_err(
                    "max_leases must be an int, not a bool",
                ))
            }
            Some(m) => m
                .extract()
                .map_err(|_| PyTypeError::new_err("max_leases must be an int"))?,
        };
        let path = handle::path(path)?;
        let identifier = handle::identifier(identifier)?;
        let max_leases = u32::try_from(max_leases)
            .ok()
            .filter(|m| *m >= 1)
            .ok_or_else(|| {
                PyValueError::new_err(format!(
                    "max_leases must be from 1 to {}, got {max_leases}",
                    u32::MAX
                ))
            })?;
        let (sem_path, data) = (path.clone(), identifier.clone());
        let handle = Handle::new(client, path, "semaphore", move |session| {
            zoolock::Semaphore::new(session, &sem_path, data.as_bytes(), max_leases)
        })?;
        Ok(PySemaphore {
            handle,
            identifier,
            max_leases,
        })
    }
}

fn args(
    py: Python<'_>,
    blocking: Option<&Bound<'_, PyAny>>,
    timeout: Option<f64>,
    lease: Option<f64>,
) -> PyResult<AcquireArgs> {
    let default = PyBool::new(py, true);
    AcquireArgs::parse(blocking.unwrap_or(&default), timeout, true, lease)
}

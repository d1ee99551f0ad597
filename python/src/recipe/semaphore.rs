//! kazoo's `Semaphore` over the core's `Semaphore`.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class Semaphore(Holder):
//!     """A counting semaphore in kazoo's layout."""
//!
//!     def __init__(self, client: KazooClient, path: str, identifier: Any = None, max_leases: int = 1) -> None: ...
//!     def acquire(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> bool:
//!         """True once a lease is held (at once if this object holds one: kazoo); False for a failed
//!         non-blocking try; LockTimeout on timeout."""
//!     def acquire_async(self, blocking: bool = True, timeout: Optional[float] = None, *, lease: Optional[float] = None) -> Awaitable[bool]:
//!         """acquire() for asyncio."""
//!     def lease_holders(self) -> List[str]:
//!         """Identifiers of the current lease holders."""
//!     @property
//!     def max_leases(self) -> int:
//!         """How many holders at once."""
//! ```

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBool;
use pyo3::PyClassInitializer;

use crate::holder::{self, AcquireCall, Holder};

/// A counting semaphore in kazoo's layout, shared with kazoo clients:
/// ``Semaphore(client, path, identifier=None, max_leases=1)``, or
/// ``client.Semaphore(...)``. Up to ``max_leases`` holders at once; every
/// party must agree on ``max_leases`` (else ``ValueError``).
#[pyclass(frozen, extends = Holder, module = "zoolock")]
pub struct Semaphore {
    max_leases: u32,
}

#[pymethods]
impl Semaphore {
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
    ) -> PyResult<PyClassInitializer<Self>> {
        let max_leases: i64 = match max_leases {
            None => 1,
            Some(m) if m.is_instance_of::<PyBool>() => {
                return Err(PyTypeError::new_err("max_leases must be an int, not a bool"))
            }
            Some(m) => m.extract().map_err(|_| PyTypeError::new_err("max_leases must be an int"))?,
        };
        let path = holder::path(path)?;
        let identifier = holder::identifier(identifier)?;
        let max_leases = u32::try_from(max_leases).ok().filter(|m| *m >= 1).ok_or_else(|| {
            PyValueError::new_err(format!("max_leases must be from 1 to {}, got {max_leases}", u32::MAX))
        })?;
        let (sem_path, data) = (path.clone(), identifier.clone());
        let holder = Holder::new(client, path, identifier, "semaphore", false, move |session| {
            zoolock::Semaphore::new(session, &sem_path, data.as_bytes(), max_leases)
        })?;
        Ok(PyClassInitializer::from(holder).add_subclass(Semaphore { max_leases }))
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

    /// The identifiers of the current lease holders, in no particular order.
    fn lease_holders(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        slf.as_super().get().queue(slf.py())
    }

    /// How many holders the semaphore admits at once.
    #[getter]
    fn max_leases(&self) -> u32 {
        self.max_leases
    }

    fn __repr__(slf: &Bound<'_, Self>) -> String {
        let holder = slf.as_super();
        format!(
            "<zoolock.Semaphore path={:?} max_leases={} state={}>",
            holder.get().path(),
            slf.get().max_leases,
            holder.get().state()
        )
    }
}

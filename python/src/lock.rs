//! kazoo's `Lock`, `ReadLock` and `WriteLock` over the core's `Lock`.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::PyClassInitializer;
use zoolock::{Kind, LockConfig, Owner, Scheme};

use crate::handle::{self, identifier, lost_reason, state_name, AcquireArgs, Handle, LostEvent};

/// A distributed lock with kazoo's interface and node names: kazoo clients
/// on the same path exclude it and queue with it.
///
/// ``Lock(client, path, identifier=None, extra_lock_patterns=())``, or
/// ``client.Lock(...)``. ``identifier`` (``str()``-ed) is the node data that
/// ``contenders()`` shows. ``extra_lock_patterns`` are further node-name
/// markers to queue behind (matched literally, not as regular expressions).
/// Keyword ``scheme="curator"`` names nodes like Curator's
/// ``InterProcessMutex``. Not reentrant: a second ``acquire`` on a held
/// object waits for its ``release``, from whichever thread.
///
/// ``reentrant=True`` (zoolock's own; kazoo has none) makes it reentrant
/// per owner, like Curator's ``InterProcessMutex`` and ``threading.RLock``:
/// the owner is the asyncio task that calls, or the thread outside a task.
/// The owner's ``acquire`` on a held lock returns ``True`` at once on the
/// same node; each ``release`` counts down, the last deletes the node.
/// Another owner's ``acquire`` waits for that (``False`` if its timeout runs
/// out first), and its ``release`` raises ``RuntimeError``, as ``RLock``'s
/// does. A loss ends the hold whatever the count.
#[pyclass(frozen, subclass, module = "zoolock", name = "Lock")]
pub struct PyLock {
    handle: Handle<zoolock::Lock>,
    identifier: String,
    reentrant: bool,
}

impl PyLock {
    pub fn build(
        kind: Kind,
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier_arg: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
        reentrant: bool,
    ) -> PyResult<PyLock> {
        let path = handle::path(path)?;
        let identifier = identifier(identifier_arg)?;
        let extra_markers = match extra_lock_patterns {
            None => Vec::new(),
            Some(p) if p.is_instance_of::<PyString>() => {
                return Err(PyTypeError::new_err(
                    "extra_lock_patterns must be a sequence of str, not a str",
                ))
            }
            Some(p) => p.extract::<Vec<String>>().map_err(|_| {
                PyTypeError::new_err("extra_lock_patterns must be a sequence of str")
            })?,
        };
        let scheme = match scheme {
            "kazoo" => Scheme::Kazoo,
            "curator" => Scheme::Curator,
            other => {
                return Err(PyValueError::new_err(format!(
                    "scheme must be 'kazoo' or 'curator', not {other:?}"
                )))
            }
        };
        let config = LockConfig {
            identifier: identifier.clone().into_bytes(),
            scheme,
            extra_markers,
            reentrant,
            ..LockConfig::default()
        };
        let lock_path = path.clone();
        let handle = Handle::new(client, path, "lock", move |session| {
            zoolock::Lock::new(session, &lock_path, kind, config.clone())
        })?;
        Ok(PyLock {
            handle,
            identifier,
            reentrant,
        })
    }

    /// Who acquires or releases: only a reentrant lock tells owners apart.
    fn owner(&self, py: Python<'_>) -> PyResult<Owner> {
        if self.reentrant {
            handle::current_owner(py)
        } else {
            Ok(Owner::HANDLE)
        }
    }

    /// kazoo's ``acquire`` arguments, with the owner.
    fn args(
        &self,
        py: Python<'_>,
        blocking: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        ephemeral: bool,
        lease: Option<f64>,
    ) -> PyResult<AcquireArgs> {
        let mut args = args(py, blocking, timeout, ephemeral, lease)?;
        args.options.owner = self.owner(py)?;
        Ok(args)
    }
}

#[pymethods]
impl PyLock {
    #[new]
    #[pyo3(
        signature = (client, path, identifier=None, extra_lock_patterns=None, *, scheme="kazoo", reentrant=false),
        text_signature = "(client, path, identifier=None, extra_lock_patterns=(), *, scheme='kazoo', reentrant=False)"
    )]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
        reentrant: bool,
    ) -> PyResult<Self> {
        PyLock::build(
            Kind::Mutex,
            client,
            path,
            identifier,
            extra_lock_patterns,
            scheme,
            reentrant,
        )
    }

    /// Acquires the lock. Returns ``True`` once held; ``False`` if
    /// ``blocking=False`` and it is taken. A blocking acquire whose
    /// ``timeout`` (seconds) runs out raises ``LockTimeout``. Whatever ends
    /// an acquire early (timeout, ``cancel()``, Ctrl-C, an error) leaves no
    /// node behind. ``ephemeral=False`` keeps the lock held past the
    /// session; ``lease`` (seconds) releases it by itself that long after
    /// it was acquired. The GIL is released while waiting.
    #[pyo3(
        signature = (blocking=None, timeout=None, ephemeral=true, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, ephemeral=True, *, lease=None)"
    )]
    fn acquire(
        &self,
        py: Python<'_>,
        blocking: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        ephemeral: bool,
        lease: Option<f64>,
    ) -> PyResult<bool> {
        self.handle
            .acquire(py, self.args(py, blocking, timeout, ephemeral, lease)?)
    }

    /// ``acquire`` for asyncio: ``await lock.acquire_async(...)`` waits
    /// without blocking the event loop; cancelling the task abandons the
    /// acquire and removes its node.
    #[pyo3(
        signature = (blocking=None, timeout=None, ephemeral=true, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, ephemeral=True, *, lease=None)"
    )]
    fn acquire_async<'py>(
        &self,
        py: Python<'py>,
        blocking: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        ephemeral: bool,
        lease: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.handle
            .acquire_async(py, self.args(py, blocking, timeout, ephemeral, lease)?)
    }

    /// Releases the lock: ``True`` if this object held it, else ``False``.
    /// During a connection loss the node's deletion goes on in the background.
    /// A reentrant lock counts down; ``RuntimeError`` if another owner holds it.
    fn release(&self, py: Python<'_>) -> PyResult<bool> {
        self.handle.release(py, self.owner(py)?)
    }

    /// ``release`` for asyncio.
    fn release_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.handle.release_async(py, self.owner(py)?)
    }

    /// Makes the acquires pending on this object now raise ``CancelledError``
    /// (leaving no node). Unlike kazoo, a cancel with nothing pending does
    /// not spoil the next acquire.
    fn cancel(&self) {
        self.handle.cancel()
    }

    /// The identifiers of every contender queued on the path, holder first.
    fn contenders(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        self.handle
            .call(py, |core| async move { core.contenders().await })
    }

    /// Whether this object holds the lock now. Unlike kazoo's, it turns
    /// ``False`` when the hold is lost (session expired or stopped, lease over).
    #[getter]
    fn is_acquired(&self) -> bool {
        self.handle.is_acquired()
    }

    /// The name of the node holding the lock for this object (kazoo's
    /// ``node``: the child name, without the path), or ``None``.
    #[getter]
    fn node(&self) -> Option<String> {
        let node = self.handle.last()?.node()?;
        Some(
            node.strip_prefix(&format!("{}/", self.handle.path))
                .unwrap_or(&node)
                .to_owned(),
        )
    }

    /// A number that strictly increases from one holder of this path to the
    /// next (the zxid that created the holder's node), or ``None`` when not
    /// held. Pass it to the guarded resource and have it refuse lower ones.
    #[getter]
    fn fencing_token(&self) -> Option<i64> {
        self.handle.last()?.fencing_token()
    }

    /// ``"RELEASED"``, ``"HELD"``, ``"SUSPENDED"`` (connection down: stop
    /// using the resource until ``"HELD"`` again) or ``"LOST"``.
    #[getter]
    fn state(&self) -> &'static str {
        state_name(self.handle.state())
    }

    /// Why the last hold was lost: ``"SESSION_EXPIRED"``, ``"SESSION_CLOSED"``,
    /// ``"LEASE_EXPIRED"`` or ``"NODE_DELETED"`` (someone else deleted the
    /// holder's node); ``None`` unless ``state`` is ``"LOST"``.
    #[getter]
    fn lost_reason(&self) -> Option<&'static str> {
        lost_reason(self.handle.state())
    }

    /// An event set when the current hold is lost: ``lock.lost.wait()``,
    /// ``lock.lost.is_set()``, ``await lock.lost.wait_async()``.
    #[getter]
    fn lost(&self) -> LostEvent {
        self.handle.lost_event()
    }

    /// Calls ``listener(state)`` with each new ``state`` of this object
    /// (``"HELD"``, ``"SUSPENDED"``, ``"LOST"``, ``"RELEASED"``), on zoolock's
    /// callback thread.
    fn add_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.handle.add_listener(py, listener)
    }

    /// Removes a listener added with ``add_listener``.
    fn remove_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.handle.remove_listener(py, listener)
    }

    /// The lock path.
    #[getter]
    fn path(&self) -> &str {
        &self.handle.path
    }

    /// The identifier written as node data.
    #[getter]
    fn identifier(&self) -> &str {
        &self.identifier
    }

    /// ``with lock:`` acquires (blocking) and returns ``None``, as kazoo's.
    fn __enter__(&self, py: Python<'_>) -> PyResult<()> {
        self.acquire(py, None, None, true, None).map(|_| ())
    }

    /// Releases the lock; exceptions propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, pyo3::types::PyTuple>) -> PyResult<bool> {
        self.release(py)?;
        Ok(false)
    }

    /// ``async with lock:`` acquires without blocking the event loop.
    fn __aenter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.acquire_async(py, None, None, true, None)
    }

    /// Releases the lock.
    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(
        &self,
        py: Python<'py>,
        _exc: &Bound<'py, pyo3::types::PyTuple>,
    ) -> PyResult<Bound<'py, PyAny>> {
        self.release_async(py)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let class = slf.get_type().name()?;
        let this = slf.get();
        Ok(format!(
            "<zoolock.{class} path={:?} state={}>",
            this.handle.path,
            this.state()
        ))
    }
}

/// kazoo's `blocking` is any truthy value, True by default.
fn args(
    py: Python<'_>,
    blocking: Option<&Bound<'_, PyAny>>,
    timeout: Option<f64>,
    ephemeral: bool,
    lease: Option<f64>,
) -> PyResult<AcquireArgs> {
    let default = pyo3::types::PyBool::new(py, true);
    AcquireArgs::parse(blocking.unwrap_or(&default), timeout, ephemeral, lease)
}

/// A shared lock: readers hold it together and exclude writers; kazoo's
/// ``ReadLock`` (``__rlock__`` nodes). Same methods as ``Lock``.
#[pyclass(frozen, extends = PyLock, module = "zoolock", name = "ReadLock")]
pub struct ReadLock;

#[pymethods]
impl ReadLock {
    #[new]
    #[pyo3(
        signature = (client, path, identifier=None, extra_lock_patterns=None, *, scheme="kazoo"),
        text_signature = "(client, path, identifier=None, extra_lock_patterns=(), *, scheme='kazoo')"
    )]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
    ) -> PyResult<PyClassInitializer<Self>> {
        ReadLock::init(client, path, identifier, extra_lock_patterns, scheme)
    }
}

impl ReadLock {
    pub fn init(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
    ) -> PyResult<PyClassInitializer<Self>> {
        let base = PyLock::build(
            Kind::Read,
            client,
            path,
            identifier,
            extra_lock_patterns,
            scheme,
            false,
        )?;
        Ok(PyClassInitializer::from(base).add_subclass(ReadLock))
    }
}

/// The exclusive side of a read/write lock: waits for every earlier reader
/// and writer; kazoo's ``WriteLock``. Same methods as ``Lock``.
#[pyclass(frozen, extends = PyLock, module = "zoolock", name = "WriteLock")]
pub struct WriteLock;

#[pymethods]
impl WriteLock {
    #[new]
    #[pyo3(
        signature = (client, path, identifier=None, extra_lock_patterns=None, *, scheme="kazoo"),
        text_signature = "(client, path, identifier=None, extra_lock_patterns=(), *, scheme='kazoo')"
    )]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
    ) -> PyResult<PyClassInitializer<Self>> {
        WriteLock::init(client, path, identifier, extra_lock_patterns, scheme)
    }
}

impl WriteLock {
    pub fn init(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
    ) -> PyResult<PyClassInitializer<Self>> {
        let base = PyLock::build(
            Kind::Write,
            client,
            path,
            identifier,
            extra_lock_patterns,
            scheme,
            false,
        )?;
        Ok(PyClassInitializer::from(base).add_subclass(WriteLock))
    }
}

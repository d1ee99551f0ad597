//! kazoo's `Lock`, `ReadLock` and `WriteLock` over the core's `Lock`.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! class Lock(Holder):
//!     """A distributed lock with kazoo's interface and node names.
//!
//!     reentrant=True (zoolock only): the owner — the asyncio task that calls, else the calling thread —
//!     re-acquires at once, each release counts down and the last deletes the node; another owner's
//!     acquire waits, its release raises RuntimeError; a loss ends the hold whatever the count."""
//!
//!     def __init__(
//!         self,
//!         client: KazooClient,
//!         path: str,
//!         identifier: Any = None,
//!         extra_lock_patterns: Sequence[str] = (),
//!         *,
//!         scheme: str = "kazoo",
//!         reentrant: bool = False,
//!         mirror: bool = True,
//!     ) -> None: ...
//!     def acquire(self, blocking: bool = True, timeout: Optional[float] = None, ephemeral: bool = True, *, lease: Optional[float] = None) -> bool:
//!         """True once held; False for a failed non-blocking try; LockTimeout when the timeout runs out
//!         behind others; False when it runs out because this object held the lock all along (kazoo)."""
//!     def acquire_async(
//!         self, blocking: bool = True, timeout: Optional[float] = None, ephemeral: bool = True, *, lease: Optional[float] = None
//!     ) -> Awaitable[bool]:
//!         """acquire() for asyncio."""
//!     def contenders(self) -> List[str]:
//!         """Identifiers of every contender, holder first."""
//!     @property
//!     def node(self) -> Optional[str]:
//!         """The holding node's name (without the path)."""
//!     @property
//!     def fencing_token(self) -> Optional[int]:
//!         """Strictly increasing from holder to holder; None when not held."""
//!
//! @final
//! class ReadLock(Lock):
//!     """Shared with other readers; excludes writers."""
//!
//!     def __init__(
//!         self, client: KazooClient, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", mirror: bool = True
//!     ) -> None: ...
//!
//! @final
//! class WriteLock(Lock):
//!     """Exclusive; waits for every earlier reader and writer."""
//!
//!     def __init__(
//!         self, client: KazooClient, path: str, identifier: Any = None, extra_lock_patterns: Sequence[str] = (), *, scheme: str = "kazoo", mirror: bool = True
//!     ) -> None: ...
//! ```

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::PyClassInitializer;
use zoolock::{Kind, LockConfig, Scheme};

use crate::errors::IntoPy;
use crate::holder::{self, AcquireCall, Holder};

/// A distributed lock with kazoo's interface and node names: kazoo clients
/// on the same path exclude it and queue with it.
///
/// ``Lock(client, path, identifier=None, extra_lock_patterns=())``, or
/// ``client.Lock(...)``. ``identifier`` (``str()``-ed) is the node data that
/// ``contenders()`` shows. ``extra_lock_patterns`` are further node-name
/// markers to queue behind (matched literally, not as regular expressions).
/// Keyword ``scheme="curator"`` names nodes like Curator's
/// ``InterProcessMutex``, ``scheme="distributedlock"`` like .NET's
/// DistributedLock.ZooKeeper (mutexes only). Not reentrant: a second ``acquire`` on a held
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
///
/// ``mirror=False`` (zoolock's own) always waits the way kazoo does, listing
/// the children and watching the predecessor. By default the lock waits on
/// the session's one recursive watch of the path while its queue is short,
/// and lists while it is long (docs/benchmarks.md, "Adaptive").
#[pyclass(frozen, subclass, extends = Holder, module = "zoolock")]
pub struct Lock;

impl Lock {
    /// A lock of `kind` (its class's), with the base that holds it.
    fn init(
        kind: Kind,
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
        reentrant: bool,
        mirror: bool,
    ) -> PyResult<PyClassInitializer<Lock>> {
        let path = holder::path(path)?;
        let identifier = holder::identifier(identifier)?;
        let extra_markers = match extra_lock_patterns {
            None => Vec::new(),
            Some(p) if p.is_instance_of::<PyString>() => {
                return Err(PyTypeError::new_err("extra_lock_patterns must be a sequence of str, not a str"))
            }
            Some(p) => p
                .extract::<Vec<String>>()
                .map_err(|_| PyTypeError::new_err("extra_lock_patterns must be a sequence of str"))?,
        };
        let Some(scheme) = Scheme::ALL.into_iter().find(|s| s.name() == scheme) else {
            let names: Vec<&str> = Scheme::ALL.iter().map(|s| s.name()).collect();
            return Err(PyValueError::new_err(format!("scheme must be one of {names:?}, not {scheme:?}")));
        };
        let config = LockConfig {
            identifier: identifier.clone().into_bytes(),
            scheme,
            extra_markers,
            reentrant,
            mirror,
            ..LockConfig::default()
        };
        config.check(kind).py_err()?;
        let lock_path = path.clone();
        let holder = Holder::new(client, path, identifier, "lock", reentrant, move |session| {
            zoolock::Lock::new(session, &lock_path, kind, config.clone())
        })?;
        Ok(PyClassInitializer::from(holder).add_subclass(Lock))
    }
}

#[pymethods]
impl Lock {
    #[new]
    #[pyo3(
        signature = (client, path, identifier=None, extra_lock_patterns=None, *, scheme="kazoo", reentrant=false, mirror=true),
        text_signature = "(client, path, identifier=None, extra_lock_patterns=(), *, scheme='kazoo', reentrant=False, mirror=True)"
    )]
    fn new(
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
        extra_lock_patterns: Option<&Bound<'_, PyAny>>,
        scheme: &str,
        reentrant: bool,
        mirror: bool,
    ) -> PyResult<PyClassInitializer<Self>> {
        Lock::init(Kind::Mutex, client, path, identifier, extra_lock_patterns, scheme, reentrant, mirror)
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
        slf: &Bound<'_, Self>,
        blocking: Option<&Bound<'_, PyAny>>,
        timeout: Option<f64>,
        ephemeral: bool,
        lease: Option<f64>,
    ) -> PyResult<bool> {
        let call = AcquireCall { blocking, timeout, ephemeral, lease };
        slf.as_super().get().acquire(slf.py(), call)
    }

    /// ``acquire`` for asyncio: ``await lock.acquire_async(...)`` waits
    /// without blocking the event loop; cancelling the task abandons the
    /// acquire and removes its node.
    #[pyo3(
        signature = (blocking=None, timeout=None, ephemeral=true, *, lease=None),
        text_signature = "(self, blocking=True, timeout=None, ephemeral=True, *, lease=None)"
    )]
    fn acquire_async<'py>(
        slf: &Bound<'py, Self>,
        blocking: Option<&Bound<'py, PyAny>>,
        timeout: Option<f64>,
        ephemeral: bool,
        lease: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let call = AcquireCall { blocking, timeout, ephemeral, lease };
        slf.as_super().get().acquire_async(slf.py(), call)
    }

    /// The identifiers of every contender queued on the path, holder first.
    fn contenders(slf: &Bound<'_, Self>) -> PyResult<Vec<String>> {
        slf.as_super().get().queue(slf.py())
    }

    /// The name of the node holding the lock for this object (kazoo's
    /// ``node``: the child name, without the path), or ``None``.
    #[getter]
    fn node(slf: &Bound<'_, Self>) -> Option<String> {
        let holder = slf.as_super().get();
        let node = holder.last_recipe::<zoolock::Lock>()?.node()?;
        let name = node.strip_prefix(holder.path()).and_then(|n| n.strip_prefix('/'));
        Some(name.unwrap_or(&node).to_owned())
    }

    /// A number that strictly increases from one holder of this path to the
    /// next (the zxid that created the holder's node), or ``None`` when not
    /// held. Pass it to the guarded resource and have it refuse lower ones.
    #[getter]
    fn fencing_token(slf: &Bound<'_, Self>) -> Option<i64> {
        let holder = slf.as_super().get();
        holder.last_recipe::<zoolock::Lock>()?.fencing_token()
    }
}

/// The sides of a read/write lock: `Lock`s of their kind, without `reentrant`.
macro_rules! read_write_lock {
    ($(#[$doc:meta])* $name:ident, $kind:expr) => {
        $(#[$doc])*
        #[pyclass(frozen, extends = Lock, module = "zoolock")]
        pub struct $name;

        #[pymethods]
        impl $name {
            #[new]
            #[pyo3(
                signature = (client, path, identifier=None, extra_lock_patterns=None, *, scheme="kazoo", mirror=true),
                text_signature = "(client, path, identifier=None, extra_lock_patterns=(), *, scheme='kazoo', mirror=True)"
            )]
            fn new(
                client: &Bound<'_, PyAny>,
                path: &Bound<'_, PyAny>,
                identifier: Option<&Bound<'_, PyAny>>,
                extra_lock_patterns: Option<&Bound<'_, PyAny>>,
                scheme: &str,
                mirror: bool,
            ) -> PyResult<PyClassInitializer<Self>> {
                let lock = Lock::init(
                    $kind,
                    client,
                    path,
                    identifier,
                    extra_lock_patterns,
                    scheme,
                    false,
                    mirror,
                )?;
                Ok(lock.add_subclass($name))
            }
        }
    };
}

read_write_lock!(
    /// A shared lock: readers hold it together and exclude writers; kazoo's
    /// ``ReadLock`` (``__rlock__`` nodes). Same methods as ``Lock``.
    ReadLock,
    Kind::Read
);

read_write_lock!(
    /// The exclusive side of a read/write lock: waits for every earlier reader
    /// and writer; kazoo's ``WriteLock``. Same methods as ``Lock``.
    WriteLock,
    Kind::Write
);

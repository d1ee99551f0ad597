//! The base class of every Python recipe (`Lock`, `ReadLock`, `WriteLock`,
//! `Semaphore`): `Holder`, over the core's `zoolock::Holder`. What they share
//! is written here once: binding to the client's current session, kazoo's
//! acquire arguments and results, release, listeners, the `lost` event, the
//! asyncio forms and the context managers. The recipes themselves are the core's.

use std::any::Any;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString, PyTuple};
use tokio::sync::watch;
use zoolock::{runtime, timeout_from_secs, Acquire, LockState, Outcome, Owner, Session};

use crate::asyncio::{to_asyncio, weak_keys};
use crate::client::Client;
use crate::errors::{IntoPy, LockTimeout};
use crate::wait::{interruptible, interruptible_undoing, uninterruptible, Listeners};

pub const HELD: &str = "HELD";
pub const RELEASED: &str = "RELEASED";
pub const SUSPENDED: &str = "SUSPENDED";
pub const LOST: &str = "LOST";

pub fn state_name(state: LockState) -> &'static str {
    match state {
        LockState::Released => RELEASED,
        LockState::Held => HELD,
        LockState::Suspended => SUSPENDED,
        LockState::Lost(_) => LOST,
    }
}

/// The core's name of the reason, upper case (`SESSION_EXPIRED`).
pub fn lost_reason(state: LockState) -> Option<String> {
    match state {
        LockState::Lost(reason) => Some(reason.name().to_ascii_uppercase()),
        LockState::Released | LockState::Held | LockState::Suspended => None,
    }
}

/// Makes the core holder on a session; the second item is the same value
/// as its recipe type, for a subclass's own queries ([`Holder::last_recipe`]).
type Make =
    Box<dyn Fn(&Session) -> zoolock::Result<(Arc<dyn zoolock::Holder>, Arc<dyn Any + Send + Sync>)> + Send + Sync>;

/// The core holder on the client's current session, made on first use and
/// again after the client was restarted; shared with the `lost` events.
struct Current(Mutex<Option<OnSession>>);

struct OnSession {
    /// The client's epoch (one per `start()`) the holder was made in.
    epoch: u64,
    holder: Arc<dyn zoolock::Holder>,
    recipe: Arc<dyn Any + Send + Sync>,
    /// Whether the Python listeners are registered with `holder`: only once
    /// there are any, so that holds without listeners cost no event thread work.
    listening: bool,
}

impl Current {
    /// Watches what a `lost` event reports on.
    fn states(&self) -> Option<watch::Receiver<LockState>> {
        self.0.lock().unwrap().as_ref().map(|on| on.holder.subscribe())
    }
}

impl Drop for Current {
    /// In a forked child the holder's session is the parent's: its destructor
    /// (a held holder releases) would touch threads that stayed there.
    fn drop(&mut self) {
        if runtime::check_process().is_err() {
            std::mem::forget(self.0.get_mut().unwrap().take());
        }
    }
}

/// What a lock and a semaphore share: ``release``, ``cancel``, ``state``,
/// the ``lost`` event, listeners, ``with`` and ``async with``. Not made
/// directly: ``Lock``, ``ReadLock``, ``WriteLock`` and ``Semaphore`` extend
/// it, each with its own ``acquire``.
#[pyclass(frozen, subclass, module = "zoolock")]
pub struct Holder {
    pub(crate) client: Py<Client>,
    path: String,
    identifier: String,
    /// "lock" or "semaphore", for kazoo's LockTimeout message.
    what: &'static str,
    /// Only a reentrant lock tells owners (threads, asyncio tasks) apart.
    reentrant: bool,
    make: Make,
    current: Arc<Current>,
    listeners: Listeners,
}

/// kazoo's `acquire` arguments as Python passed them; each recipe's
/// signature takes its part of them.
pub struct AcquireCall<'a, 'py> {
    /// Any truthy value; True when not given.
    pub blocking: Option<&'a Bound<'py, PyAny>>,
    pub timeout: Option<f64>,
    pub ephemeral: bool,
    pub lease: Option<f64>,
}

impl Default for AcquireCall<'_, '_> {
    /// ``with holder:``'s acquire.
    fn default() -> Self {
        AcquireCall { blocking: None, timeout: None, ephemeral: true, lease: None }
    }
}

/// kazoo's `acquire` arguments, checked the way the core checks them.
struct AcquireArgs {
    blocking: bool,
    timeout: Option<f64>,
    options: Acquire,
}

impl Holder {
    /// A holder of `client`'s sessions, of the recipe `make` makes on each.
    pub fn new<R: zoolock::Holder + 'static>(
        client: &Bound<'_, PyAny>,
        path: String,
        identifier: String,
        what: &'static str,
        reentrant: bool,
        make: impl Fn(&Session) -> zoolock::Result<R> + Send + Sync + 'static,
    ) -> PyResult<Self> {
        let client = recipe_client(client)?.clone().unbind();
        let listeners = Listeners::holder(client.get().callbacks.clone());
        Ok(Holder {
            client,
            path,
            identifier,
            what,
            reentrant,
            make: Box::new(move |session| {
                let recipe = Arc::new(make(session)?);
                Ok((recipe.clone(), recipe))
            }),
            current: Arc::new(Current(Mutex::new(None))),
            listeners,
        })
    }

    /// The core holder on the client's current session, made if needed.
    pub(crate) fn core(&self) -> PyResult<Arc<dyn zoolock::Holder>> {
        let (epoch, session) = self.client.get().session()?;
        let mut current = self.current.0.lock().unwrap();
        if let Some(on) = current.as_ref().filter(|on| on.epoch == epoch) {
            return Ok(on.holder.clone());
        }
        let (holder, recipe) = (self.make)(&session).py_err()?;
        let mut on = OnSession { epoch, holder, recipe, listening: false };
        self.listen(&mut on);
        let holder = on.holder.clone();
        *current = Some(on);
        Ok(holder)
    }

    /// Registers the Python listeners with the core holder, once there are any.
    fn listen(&self, on: &mut OnSession) {
        if on.listening || self.listeners.is_empty() {
            return;
        }
        let listeners = self.listeners.clone();
        on.holder.add_listener(Box::new(move |state| listeners.notify(state_name(state))));
        on.listening = true;
    }

    /// The core holder last made, if any, without needing a session.
    fn last(&self) -> Option<Arc<dyn zoolock::Holder>> {
        let current = self.current.0.lock().unwrap();
        current.as_ref().map(|on| on.holder.clone())
    }

    /// [`Holder::last`] as its recipe type `R` (`zoolock::Lock` for `Lock.node`).
    pub fn last_recipe<R: Any + Send + Sync>(&self) -> Option<Arc<R>> {
        let current = self.current.0.lock().unwrap();
        current.as_ref()?.recipe.clone().downcast().ok()
    }

    /// Who acquires or releases: only a reentrant lock tells owners apart.
    fn owner(&self, py: Python<'_>) -> PyResult<Owner> {
        if self.reentrant {
            current_owner(py)
        } else {
            Ok(Owner::HANDLE)
        }
    }

    /// kazoo's `acquire` arguments, with the owner.
    fn args(&self, py: Python<'_>, call: AcquireCall<'_, '_>) -> PyResult<AcquireArgs> {
        let blocking = call.blocking.map_or(Ok(true), |b| b.is_truthy())?;
        let options = Acquire {
            blocking,
            timeout: timeout_from_secs(call.timeout).py_err()?,
            ephemeral: call.ephemeral,
            lease: timeout_from_secs(call.lease).py_err()?,
            owner: self.owner(py)?,
            // kazoo's: a collected Lock (Semaphore) keeps its node until
            // `release()` or the session's end.
            keep_if_dropped: true,
        };
        Ok(AcquireArgs { blocking, timeout: call.timeout, options })
    }

    /// The recipes' ``acquire``, whose Python signatures differ.
    pub fn acquire(&self, py: Python<'_>, call: AcquireCall<'_, '_>) -> PyResult<bool> {
        let args = self.args(py, call)?;
        let (core, options, owner) = (self.core()?, args.options.clone(), args.options.owner);
        let undo = {
            let core = core.clone();
            move |got| release_in_background(core, got, owner)
        };
        let got = interruptible_undoing(py, async move { core.acquire_outcome(options).await }, undo)?;
        outcome(self.what, &self.path, &args, got)
    }

    /// ``acquire`` for asyncio: cancelling the awaiting task abandons the
    /// acquire (its node is removed); a hold won just as the task was
    /// cancelled is released again.
    pub fn acquire_async<'py>(&self, py: Python<'py>, call: AcquireCall<'_, 'py>) -> PyResult<Bound<'py, PyAny>> {
        let args = self.args(py, call)?;
        let core = self.core()?;
        let (what, path, owner) = (self.what, self.path.clone(), args.options.owner);
        let work = {
            let (core, options) = (core.clone(), args.options.clone());
            async move { core.acquire_outcome(options).await }
        };
        to_asyncio(
            py,
            work,
            move |py, got| Ok(PyBool::new(py, outcome(what, &path, &args, got)?).to_owned().into_any().unbind()),
            move |got| release_in_background(core, got, owner),
        )
    }

    /// The core's `queue`: a lock's contenders, a semaphore's lease holders.
    pub fn queue(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let core = self.core()?;
        interruptible(py, async move { core.queue().await })?.py_err()
    }

    fn state_now(&self) -> LockState {
        self.last().map_or(LockState::Released, |core| core.state())
    }
}

#[pymethods]
impl Holder {
    /// Releases the hold: ``True`` if this object held it, else ``False``.
    /// During a connection loss the node's deletion goes on in the background.
    /// A reentrant lock counts down; ``RuntimeError`` if another owner holds it.
    fn release(&self, py: Python<'_>) -> PyResult<bool> {
        let owner = self.owner(py)?;
        match self.last() {
            Some(core) => uninterruptible(py, async move { core.release_by(owner).await })?.py_err(),
            None => Ok(false),
        }
    }

    /// ``release`` for asyncio.
    fn release_async<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let (core, owner) = (self.last(), self.owner(py)?);
        let work = async move {
            match core {
                Some(core) => core.release_by(owner).await,
                None => Ok(false),
            }
        };
        to_asyncio(
            py,
            work,
            |py, released| Ok(PyBool::new(py, released.py_err()?).to_owned().into_any().unbind()),
            |_| {},
        )
    }

    /// Makes the acquires pending on this object now raise ``CancelledError``
    /// (leaving no node). Unlike kazoo, a cancel with nothing pending does
    /// not spoil the next acquire.
    fn cancel(&self) {
        if let Some(core) = self.last() {
            core.cancel();
        }
    }

    /// Whether this object holds now. Unlike kazoo's, it turns ``False``
    /// when the hold is lost (session expired or stopped, lease over).
    #[getter]
    fn is_acquired(&self) -> bool {
        self.last().is_some_and(|core| core.is_acquired())
    }

    /// ``"RELEASED"``, ``"HELD"``, ``"SUSPENDED"`` (connection down: stop
    /// using the resource until ``"HELD"`` again) or ``"LOST"``.
    #[getter]
    pub fn state(&self) -> &'static str {
        state_name(self.state_now())
    }

    /// Why the last hold was lost: ``"SESSION_EXPIRED"``, ``"SESSION_CLOSED"``,
    /// ``"LEASE_EXPIRED"`` or ``"NODE_DELETED"`` (someone else deleted the
    /// holder's node); ``None`` unless ``state`` is ``"LOST"``.
    #[getter]
    fn lost_reason(&self) -> Option<String> {
        lost_reason(self.state_now())
    }

    /// An event set when the current hold is lost: ``lock.lost.wait()``,
    /// ``lock.lost.is_set()``, ``await lock.lost.wait_async()``.
    #[getter]
    fn lost(&self) -> LostEvent {
        LostEvent { current: self.current.clone() }
    }

    /// Calls ``listener(state)`` with each new ``state`` of this object
    /// (``"HELD"``, ``"SUSPENDED"``, ``"LOST"``, ``"RELEASED"``), on zoolock's
    /// callback thread.
    fn add_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        if self.listeners.add(py, listener)? {
            if let Some(on) = self.current.0.lock().unwrap().as_mut() {
                self.listen(on);
            }
        }
        Ok(())
    }

    /// Removes a listener added with ``add_listener``.
    fn remove_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.listeners.remove(py, listener)
    }

    /// The lock path (a semaphore's: its path).
    #[getter]
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The identifier written as node data (``contenders()``, ``lease_holders()``).
    #[getter]
    fn identifier(&self) -> &str {
        &self.identifier
    }

    /// ``with lock:`` acquires (blocking) and returns ``None``, as kazoo's.
    fn __enter__(&self, py: Python<'_>) -> PyResult<()> {
        self.acquire(py, AcquireCall::default()).map(|_| ())
    }

    /// Releases; exceptions propagate.
    #[pyo3(signature = (*_exc))]
    fn __exit__(&self, py: Python<'_>, _exc: &Bound<'_, PyTuple>) -> PyResult<bool> {
        self.release(py)?;
        Ok(false)
    }

    /// ``async with lock:`` acquires without blocking the event loop.
    fn __aenter__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        self.acquire_async(py, AcquireCall::default())
    }

    /// Releases.
    #[pyo3(signature = (*_exc))]
    fn __aexit__<'py>(&self, py: Python<'py>, _exc: &Bound<'py, PyTuple>) -> PyResult<Bound<'py, PyAny>> {
        self.release_async(py)
    }

    fn __repr__(slf: &Bound<'_, Self>) -> PyResult<String> {
        let class = slf.get_type().name()?;
        let this = slf.get();
        Ok(format!("<zoolock.{class} path={:?} state={}>", this.path, this.state()))
    }
}

/// kazoo's identifier rule: `str(identifier or "")`, written as UTF-8. The
/// core checks it at once, where kazoo's encode would fail: a str that is not
/// UTF-8 (a lone surrogate) or too large for a node is a `ValueError`.
pub fn identifier(identifier: Option<&Bound<'_, PyAny>>) -> PyResult<String> {
    let text = match identifier {
        Some(id) if id.is_truthy()? => id.str()?,
        _ => return Ok(String::new()),
    };
    let bytes = utf8_bytes(&text)?;
    zoolock::validate_identifier(&bytes).py_err()?;
    Ok(String::from_utf8_lossy(&bytes).into_owned())
}

/// A recipe's first argument: a zoolock client, else `TypeError`.
pub fn recipe_client<'a, 'py>(client: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, Client>> {
    client.cast::<Client>().map_err(|_| PyTypeError::new_err("the first argument must be a zoolock KazooClient"))
}

/// A lock or semaphore path, checked by the core (`ValueError` if refused).
pub fn path(path: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = path.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "path must be a str, not {}",
            path.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    let bytes = utf8_bytes(text)?;
    Ok(zoolock::path_from_utf8(&bytes).py_err()?.to_owned())
}

/// A str's UTF-8 bytes, lone surrogates passed through as they are
/// (`surrogatepass`): not UTF-8, for the core to refuse.
pub fn utf8_bytes(text: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    if let Ok(text) = text.to_cow() {
        return Ok(text.as_bytes().to_vec());
    }
    let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    Ok(encoded.cast::<PyBytes>()?.as_bytes().to_vec())
}

/// Releases a hold that an abandoned acquire won (or one count of it).
fn release_in_background(core: Arc<dyn zoolock::Holder>, got: zoolock::Result<Outcome>, owner: Owner) {
    if matches!(got, Ok(Outcome::Acquired)) {
        runtime::spawn(async move { core.release_by(owner).await });
    }
}

/// Who holds a reentrant lock in Python: the asyncio task that calls, or
/// the calling thread outside a task — the units that run concurrently, as
/// a thread is in Curator. Every thread and task gets an id of its own for
/// its lifetime, never used again (unlike `threading.get_ident()` or `id()`),
/// so a new thread never inherits a hold that an ended one leaked.
fn current_owner(py: Python<'_>) -> PyResult<Owner> {
    use std::sync::atomic::{AtomicU64, Ordering};
    // Starts at 1: 0 is the holder's own (`Owner::HANDLE`).
    static NEXT: AtomicU64 = AtomicU64::new(1);
    static TASKS: pyo3::sync::PyOnceLock<Py<PyAny>> = pyo3::sync::PyOnceLock::new();
    thread_local! {
        static THREAD: u64 = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    let asyncio = py.import("asyncio")?;
    let running = asyncio.call_method0("_get_running_loop")?;
    let task = match running.is_none() {
        true => None,
        false => Some(asyncio.call_method1("current_task", (running,))?).filter(|t| !t.is_none()),
    };
    let Some(task) = task else {
        return Ok(Owner(THREAD.with(|id| *id)));
    };
    let tasks = weak_keys(py, &TASKS)?;
    if let Some(id) = tasks.call_method1("get", (&task,))?.extract::<Option<u64>>()? {
        return Ok(Owner(id));
    }
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    tasks.set_item(&task, id)?;
    Ok(Owner(id))
}

/// kazoo's results: `False` for a try that found the lock taken, and
/// `LockTimeout` when a blocking wait with a timeout ran out of time behind
/// others; `False` again when it ran out because this holder itself held the
/// lock all along (kazoo's `test_lock_no_double_calls`).
fn outcome(what: &str, path: &str, args: &AcquireArgs, got: zoolock::Result<Outcome>) -> PyResult<bool> {
    let got = got.py_err()?;
    match args.timeout {
        Some(timeout) if got == Outcome::Taken && args.blocking && args.options.timeout.is_some() => {
            Err(LockTimeout::new_err(format!("Failed to acquire {what} on {path} after {timeout} seconds")))
        }
        _ => Ok(got.is_acquired()),
    }
}

/// Tells that a hold was lost, like a read-only ``threading.Event``: set
/// once the current hold is lost (session expired or closed, lease ran out),
/// clear again when the holder acquires anew or releases.
#[pyclass(frozen, module = "zoolock")]
pub struct LostEvent {
    current: Arc<Current>,
}

fn ended(state: &LockState) -> bool {
    matches!(state, LockState::Lost(_) | LockState::Released)
}

#[pymethods]
impl LostEvent {
    /// Whether the last hold was lost (not released).
    fn is_set(&self) -> bool {
        self.current.states().is_some_and(|s| matches!(*s.borrow(), LockState::Lost(_)))
    }

    /// Waits until the current hold ends: ``True`` if it was lost, ``False``
    /// if it was released, nothing is held, or ``timeout`` seconds passed.
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let bound = timeout_from_secs(timeout).py_err()?;
        let Some(mut states) = self.current.states() else {
            return Ok(false);
        };
        let work = async move {
            let end = async { states.wait_for(ended).await.map(|s| *s).ok() };
            match bound {
                Some(bound) => tokio::time::timeout(bound, end).await.ok().flatten(),
                None => end.await,
            }
        };
        Ok(matches!(interruptible(py, work)?, Some(LockState::Lost(_))))
    }

    /// ``wait()`` for asyncio: ``await lock.lost.wait_async()``.
    #[pyo3(signature = (timeout=None))]
    fn wait_async<'py>(&self, py: Python<'py>, timeout: Option<f64>) -> PyResult<Bound<'py, PyAny>> {
        let bound = timeout_from_secs(timeout).py_err()?;
        let states = self.current.states();
        let work = async move {
            let mut states = states?;
            let end = async { states.wait_for(ended).await.map(|s| *s).ok() };
            match bound {
                Some(bound) => tokio::time::timeout(bound, end).await.ok().flatten(),
                None => end.await,
            }
        };
        to_asyncio(
            py,
            work,
            |py, state| Ok(PyBool::new(py, matches!(state, Some(LockState::Lost(_)))).to_owned().into_any().unbind()),
            |_| {},
        )
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.LostEvent set={}>", self.is_set())
    }
}

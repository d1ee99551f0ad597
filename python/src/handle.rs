//! What a Python `Lock` and `Semaphore` share: binding to the client's
//! current session, kazoo's acquire arguments and results, listeners, the
//! `lost` event and the asyncio forms. The recipes themselves are the core's.

use std::future::Future;
use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyString};
use tokio::sync::watch;
use zoolock::{
    runtime, timeout_from_secs, Acquire, Holder, LockState, LostReason, Outcome, Owner, Session,
};

use crate::asyncio::to_asyncio;
use crate::client::Client;
use crate::errors::{IntoPy, LockTimeout};
use crate::wait::{self, call_reporting, interruptible, run_with_gil, uninterruptible, Listeners};

/// The core handle types behind Python's classes: any of the core's holders.
pub trait Core: Holder + Clone + 'static {}

impl<H: Holder + Clone + 'static> Core for H {}

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

pub fn lost_reason(state: LockState) -> Option<&'static str> {
    match state {
        LockState::Lost(LostReason::SessionExpired) => Some("SESSION_EXPIRED"),
        LockState::Lost(LostReason::SessionClosed) => Some("SESSION_CLOSED"),
        LockState::Lost(LostReason::LeaseExpired) => Some("LEASE_EXPIRED"),
        LockState::Lost(LostReason::NodeDeleted) => Some("NODE_DELETED"),
        _ => None,
    }
}

type Make<C> = Box<dyn Fn(&Session) -> zoolock::Result<C> + Send + Sync>;

/// The core handle of the client's current session, made on first use and
/// again after the client was restarted.
pub struct Slot<C> {
    current: Mutex<Option<Made<C>>>,
}

struct Made<C> {
    /// The client's epoch (one per `start()`) the handle was made in.
    epoch: u64,
    core: C,
    /// Whether the Python listeners are registered with `core`: only once
    /// there are any, so that holds without listeners cost no event thread work.
    listening: bool,
}

impl<C> Drop for Slot<C> {
    /// In a forked child the handle's session is the parent's: its destructor
    /// (a held handle releases) would touch threads that stayed there.
    fn drop(&mut self) {
        if runtime::check_process().is_err() {
            std::mem::forget(self.current.get_mut().unwrap().take());
        }
    }
}

/// Watches what a `lost` event reports on, whatever the core type.
pub trait Watched: Send + Sync {
    fn states(&self) -> Option<watch::Receiver<LockState>>;
}

impl<C: Core> Watched for Slot<C> {
    fn states(&self) -> Option<watch::Receiver<LockState>> {
        self.current
            .lock()
            .unwrap()
            .as_ref()
            .map(|made| made.core.subscribe())
    }
}

pub struct Handle<C: Core> {
    client: Py<Client>,
    pub path: String,
    /// "lock" or "semaphore", for kazoo's LockTimeout message.
    what: &'static str,
    make: Make<C>,
    slot: Arc<Slot<C>>,
    listeners: Listeners,
}

/// kazoo's `acquire` arguments, checked the way the core checks them.
pub struct AcquireArgs {
    pub blocking: bool,
    pub timeout: Option<f64>,
    pub options: Acquire,
}

impl AcquireArgs {
    pub fn parse(
        blocking: &Bound<'_, PyAny>,
        timeout: Option<f64>,
        ephemeral: bool,
        lease: Option<f64>,
    ) -> PyResult<Self> {
        let blocking = blocking.is_truthy()?;
        let options = Acquire {
            blocking,
            timeout: timeout_from_secs(timeout).py_err()?,
            ephemeral,
            lease: timeout_from_secs(lease).py_err()?,
            ..Acquire::default()
        };
        Ok(AcquireArgs {
            blocking,
            timeout,
            options,
        })
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

/// A lock or semaphore path, checked by the core (`ValueError` if refused).
pub fn path(path: &Bound<'_, PyAny>) -> PyResult<String> {
    let text = path.cast::<PyString>().map_err(|_| {
        PyTypeError::new_err(format!(
            "path must be a str, not {}",
            path.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let bytes = utf8_bytes(text)?;
    Ok(zoolock::path_from_utf8(&bytes).py_err()?.to_owned())
}

/// A str's UTF-8 bytes, lone surrogates passed through as they are
/// (`surrogatepass`): not UTF-8, for the core to refuse.
fn utf8_bytes(text: &Bound<'_, PyString>) -> PyResult<Vec<u8>> {
    if let Ok(text) = text.to_cow() {
        return Ok(text.as_bytes().to_vec());
    }
    let encoded = text.call_method1("encode", ("utf-8", "surrogatepass"))?;
    Ok(encoded.cast::<PyBytes>()?.as_bytes().to_vec())
}

impl<C: Core> Handle<C> {
    pub fn new(
        client: &Bound<'_, PyAny>,
        path: String,
        what: &'static str,
        make: impl Fn(&Session) -> zoolock::Result<C> + Send + Sync + 'static,
    ) -> PyResult<Self> {
        let client = client
            .cast::<Client>()
            .map_err(|_| PyTypeError::new_err("the first argument must be a zoolock KazooClient"))?
            .clone()
            .unbind();
        Ok(Handle {
            client,
            path,
            what,
            make: Box::new(make),
            slot: Arc::new(Slot {
                current: Mutex::new(None),
            }),
            listeners: Listeners::default(),
        })
    }

    /// The core handle on the client's current session, made if needed.
    fn core(&self) -> PyResult<C> {
        let (epoch, session) = self.client.get().session()?;
        let mut current = self.slot.current.lock().unwrap();
        if let Some(made) = current.as_ref().filter(|made| made.epoch == epoch) {
            return Ok(made.core.clone());
        }
        let mut made = Made {
            epoch,
            core: (self.make)(&session).py_err()?,
            listening: false,
        };
        self.listen(&mut made);
        let core = made.core.clone();
        *current = Some(made);
        Ok(core)
    }

    /// Registers the Python listeners with the core handle, once there are any.
    fn listen(&self, made: &mut Made<C>) {
        if made.listening || self.listeners.lock().unwrap().is_empty() {
            return;
        }
        let listeners = self.listeners.clone();
        made.core
            .add_listener(Box::new(move |state| notify(&listeners, state_name(state))));
        made.listening = true;
    }

    /// The core handle last made, if any, without needing a session.
    pub fn last(&self) -> Option<C> {
        self.slot
            .current
            .lock()
            .unwrap()
            .as_ref()
            .map(|made| made.core.clone())
    }

    pub fn acquire(&self, py: Python<'_>, args: AcquireArgs) -> PyResult<bool> {
        let (core, options) = (self.core()?, args.options.clone());
        let got = interruptible(py, async move { core.acquire_outcome(options).await })?;
        outcome(self.what, &self.path, &args, got)
    }

    /// ``acquire`` for asyncio: cancelling the awaiting task abandons the
    /// acquire (its node is removed); a lock won just as the task was
    /// cancelled is released again.
    pub fn acquire_async<'py>(
        &self,
        py: Python<'py>,
        args: AcquireArgs,
    ) -> PyResult<Bound<'py, PyAny>> {
        let core = self.core()?;
        let (what, path, owner) = (self.what, self.path.clone(), args.options.owner);
        let work = {
            let (core, options) = (core.clone(), args.options.clone());
            async move { core.acquire_outcome(options).await }
        };
        to_asyncio(
            py,
            work,
            move |py, got| {
                Ok(PyBool::new(py, outcome(what, &path, &args, got)?)
                    .to_owned()
                    .into_any()
                    .unbind())
            },
            move |got| release_in_background(core, got, owner),
        )
    }

    /// ``release`` for asyncio.
    pub fn release_async<'py>(&self, py: Python<'py>, owner: Owner) -> PyResult<Bound<'py, PyAny>> {
        let core = self.last();
        let work = async move {
            match core {
                Some(core) => core.release_by(owner).await,
                None => Ok(false),
            }
        };
        to_asyncio(
            py,
            work,
            |py, released| {
                Ok(PyBool::new(py, released.py_err()?)
                    .to_owned()
                    .into_any()
                    .unbind())
            },
            |_| {},
        )
    }

    pub fn release(&self, py: Python<'_>, owner: Owner) -> PyResult<bool> {
        match self.last() {
            Some(core) => uninterruptible(py, async move { core.release_by(owner).await })?.py_err(),
            None => Ok(false),
        }
    }

    pub fn cancel(&self) {
        if let Some(core) = self.last() {
            core.cancel();
        }
    }

    pub fn is_acquired(&self) -> bool {
        self.last().is_some_and(|core| core.is_acquired())
    }

    pub fn state(&self) -> LockState {
        self.last().map_or(LockState::Released, |core| core.state())
    }

    pub fn add_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        if wait::add_listener(py, &self.listeners, listener)? {
            if let Some(made) = self.slot.current.lock().unwrap().as_mut() {
                self.listen(made);
            }
        }
        Ok(())
    }

    pub fn remove_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        wait::remove_listener(py, &self.listeners, listener)
    }

    pub fn lost_event(&self) -> LostEvent {
        LostEvent {
            slot: self.slot.clone(),
        }
    }

    /// Runs a core call that needs the session, blocking interruptibly.
    pub fn call<T: Send + 'static, F: Future<Output = zoolock::Result<T>> + Send + 'static>(
        &self,
        py: Python<'_>,
        work: impl FnOnce(C) -> F,
    ) -> PyResult<T> {
        let core = self.core()?;
        interruptible(py, work(core))?.py_err()
    }
}

/// Releases a hold that an abandoned acquire won (or one count of it).
fn release_in_background<C: Core>(core: C, got: zoolock::Result<Outcome>, owner: Owner) {
    if matches!(got, Ok(Outcome::Acquired)) {
        runtime::spawn(async move { core.release_by(owner).await });
    }
}

/// Who holds a reentrant lock in Python: the asyncio task that calls, or
/// the calling thread outside a task — the units that run concurrently, as
/// a thread is in Curator. Every thread and task gets an id of its own for
/// its lifetime, never used again (unlike `threading.get_ident()` or `id()`),
/// so a new thread never inherits a hold that an ended one leaked.
pub fn current_owner(py: Python<'_>) -> PyResult<Owner> {
    use std::sync::atomic::{AtomicU64, Ordering};
    // Starts at 1: 0 is the handle's own owner.
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
    let tasks = TASKS
        .get_or_try_init(py, || {
            Ok::<_, PyErr>(
                py.import("weakref")?
                    .call_method0("WeakKeyDictionary")?
                    .unbind(),
            )
        })?
        .bind(py);
    if let Some(id) = tasks
        .call_method1("get", (&task,))?
        .extract::<Option<u64>>()?
    {
        return Ok(Owner(id));
    }
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    tasks.set_item(&task, id)?;
    Ok(Owner(id))
}

/// kazoo's results: `False` for a try that found the lock taken, and
/// `LockTimeout` when a blocking wait with a timeout ran out of time behind
/// others; `False` again when it ran out because the handle itself held the
/// lock all along (kazoo's `test_lock_no_double_calls`).
fn outcome(
    what: &str,
    path: &str,
    args: &AcquireArgs,
    got: zoolock::Result<Outcome>,
) -> PyResult<bool> {
    let got = got.py_err()?;
    match args.timeout {
        Some(timeout)
            if got == Outcome::Taken && args.blocking && args.options.timeout.is_some() =>
        {
            Err(LockTimeout::new_err(format!(
                "Failed to acquire {what} on {path} after {timeout} seconds"
            )))
        }
        _ => Ok(got.is_acquired()),
    }
}

fn notify(listeners: &Listeners, state: &'static str) {
    let listeners = listeners.clone();
    run_with_gil(move |py| {
        let current: Vec<Py<PyAny>> = listeners
            .lock()
            .unwrap()
            .iter()
            .map(|l| l.clone_ref(py))
            .collect();
        for listener in current {
            call_reporting(listener.bind(py), state);
        }
    });
}

/// Tells that a hold was lost, like a read-only ``threading.Event``: set
/// once the current hold is lost (session expired or closed, lease ran out),
/// clear again when the handle acquires anew or releases.
#[pyclass(frozen, module = "zoolock")]
pub struct LostEvent {
    slot: Arc<dyn Watched>,
}

fn ended(state: &LockState) -> bool {
    matches!(state, LockState::Lost(_) | LockState::Released)
}

#[pymethods]
impl LostEvent {
    /// Whether the last hold was lost (not released).
    fn is_set(&self) -> bool {
        self.slot
            .states()
            .is_some_and(|s| matches!(*s.borrow(), LockState::Lost(_)))
    }

    /// Waits until the current hold ends: ``True`` if it was lost, ``False``
    /// if it was released, nothing is held, or ``timeout`` seconds passed.
    #[pyo3(signature = (timeout=None))]
    fn wait(&self, py: Python<'_>, timeout: Option<f64>) -> PyResult<bool> {
        let bound = timeout_from_secs(timeout).py_err()?;
        let Some(mut states) = self.slot.states() else {
            return Ok(false);
        };
        let work = async move {
            let end = async { states.wait_for(ended).await.map(|s| *s).ok() };
            match bound {
                Some(bound) => tokio::time::timeout(bound, end).await.ok().flatten(),
                None => end.await,
            }
        };
        Ok(matches!(
            interruptible(py, work)?,
            Some(LockState::Lost(_))
        ))
    }

    /// ``wait()`` for asyncio: ``await lock.lost.wait_async()``.
    #[pyo3(signature = (timeout=None))]
    fn wait_async<'py>(
        &self,
        py: Python<'py>,
        timeout: Option<f64>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let bound = timeout_from_secs(timeout).py_err()?;
        let states = self.slot.states();
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
            |py, state| {
                Ok(PyBool::new(py, matches!(state, Some(LockState::Lost(_))))
                    .to_owned()
                    .into_any()
                    .unbind())
            },
            |_| {},
        )
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.LostEvent set={}>", self.is_set())
    }
}

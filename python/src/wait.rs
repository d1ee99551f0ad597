//! How Python waits for the core: blocking calls release the GIL and stay
//! interruptible by Ctrl-C; listeners run on their client's own thread,
//! which takes the GIL.
//! (asyncio's waits are in asyncio.rs.)

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use pyo3::prelude::*;
use pyo3::types::PyBool;
use zoolock::runtime;

use crate::errors::to_py;

/// How often a waiting main thread looks for a pending signal (Ctrl-C).
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// Runs `work` with the GIL released: polled on the calling thread first
/// (its first request leaves at once), then, off the main thread, on
/// zoolock's runtime from its first wake-up, waking this thread once with
/// the outcome (`runtime::wait`). On the main thread the wait goes in
/// slices, polled here throughout, and a pending signal (KeyboardInterrupt)
/// between slices drops `work` unfinished: dropping a core acquire removes
/// the node it queued. A call handed to the runtime could finish between the
/// signal and its drop, and its outcome (a lock just won) would be lost.
/// `work` must not call Python code: see [`interruptible_here`].
pub fn interruptible<T: Send + 'static>(py: Python<'_>, work: impl Future<Output = T> + Send + 'static) -> PyResult<T> {
    wait_for(py, work, true)
}

/// [`interruptible`] for an acquire, which on the main thread too runs on
/// the runtime from its first wake-up (`runtime::begin`): a signal gives it
/// up there, dropped unfinished, and a win that came first goes to `undo`
/// (released), as a cancelled asyncio acquire's does.
pub fn interruptible_undoing<T: Send + 'static>(
    py: Python<'_>,
    work: impl Future<Output = T> + Send + 'static,
    undo: impl FnOnce(T),
) -> PyResult<T> {
    prepare(py)?;
    if !is_main_thread(py) {
        return Ok(py.detach(move || runtime::wait(work)));
    }
    let call = py.detach(move || runtime::begin(work));
    loop {
        if let Some(done) = py.detach(|| call.wait_for(SIGNAL_SLICE)) {
            return Ok(done);
        }
        if let Err(interrupted) = py.check_signals() {
            if let Some(won) = py.detach(move || call.stop()) {
                undo(won);
            }
            return Err(interrupted);
        }
    }
}

/// [`interruptible`], polled on the calling thread throughout, for `work`
/// that calls Python code: a watch's first callback, which kazoo makes in
/// the calling thread and which may call the client there. On the runtime's
/// thread it would hold up every session's I/O for the GIL, and a call of
/// the client from it would wait for that thread itself.
pub fn interruptible_here<T: Send + 'static>(
    py: Python<'_>,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    wait_for(py, work, false)
}

fn wait_for<T: Send + 'static>(
    py: Python<'_>,
    work: impl Future<Output = T> + Send + 'static,
    hand_over: bool,
) -> PyResult<T> {
    prepare(py)?;
    if !is_main_thread(py) {
        // Only the main thread receives signals.
        return Ok(py.detach(move || if hand_over { runtime::wait(work) } else { runtime::block_on(work) }));
    }
    let mut work: Pin<Box<dyn Future<Output = T> + Send>> = Box::pin(work);
    loop {
        // The future goes into the GIL-free closure and comes back out.
        let (done, back) = py.detach(move || (poll_for(work.as_mut(), SIGNAL_SLICE), work));
        work = back;
        if let Some(done) = done {
            return Ok(done);
        }
        py.check_signals()?;
    }
}

/// Polls `work` on this thread for up to `slice`; `None` if still pending.
fn poll_for<T>(mut work: Pin<&mut (dyn Future<Output = T> + Send)>, slice: Duration) -> Option<T> {
    let _runtime = runtime::handle().enter();
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut context = Context::from_waker(&waker);
    let until = Instant::now() + slice;
    loop {
        if let Poll::Ready(done) = work.as_mut().poll(&mut context) {
            return Some(done);
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        // A wake before the park makes it return at once; a spurious return polls again.
        std::thread::park_timeout(left);
    }
}

struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
}

/// Runs `work` with the GIL released and no interruption, on the runtime
/// from its first wake-up (`runtime::wait`): for short, bounded calls
/// (release) that must not stop halfway. `work` must not call Python code.
pub fn uninterruptible<T: Send + 'static>(
    py: Python<'_>,
    work: impl Future<Output = T> + Send + 'static,
) -> PyResult<T> {
    prepare(py)?;
    Ok(py.detach(move || runtime::wait(work)))
}

/// What every wait does first: in a forked child the runtime's threads are
/// gone (nothing would wake us), and the runtime logs at Python's level.
fn prepare(py: Python<'_>) -> PyResult<()> {
    runtime::check_process().map_err(to_py)?;
    crate::logging::refresh_level(py);
    Ok(())
}

pub fn is_main_thread(py: Python<'_>) -> bool {
    thread_local! {
        static MAIN: Cell<Option<bool>> = const { Cell::new(None) };
    }
    MAIN.with(|main| {
        if let Some(known) = main.get() {
            return known;
        }
        let check = || -> PyResult<bool> {
            let threading = py.import("threading")?;
            let main_ident = threading.call_method0("main_thread")?.getattr("ident")?;
            let this_ident = threading.call_method0("get_ident")?;
            main_ident.eq(this_ident)
        };
        let known = check().unwrap_or(false);
        main.set(Some(known));
        known
    })
}

/// Open until the interpreter begins to shut down. Taking the GIL from a
/// thread of ours while Python finalizes kills the process ("PyGILState_Release:
/// thread state must be current"), so at exit the gate closes: callbacks and
/// log events still queued then are dropped, and the exit waits for the ones
/// being delivered, for `EXIT_WAIT` at most. One that never returns must not
/// hold the exit: kazoo runs them on daemon threads, which die with the
/// process (and so does ours; one that wakes while Python finalizes is ended
/// by Python, as a daemon thread is).
struct Gate {
    open: bool,
    delivering: u32,
}

static GATE: Mutex<Gate> = Mutex::new(Gate { open: true, delivering: 0 });
static DELIVERED: Condvar = Condvar::new();
const EXIT_WAIT: Duration = Duration::from_secs(2);

/// A delivery under way (see [`Gate`]), until dropped.
struct Delivering;

impl Drop for Delivering {
    fn drop(&mut self) {
        let mut gate = GATE.lock().unwrap_or_else(PoisonError::into_inner);
        gate.delivering -= 1;
        if gate.delivering == 0 {
            DELIVERED.notify_all();
        }
    }
}

/// Runs `f` with the GIL on a thread of zoolock's; `None` once Python is
/// shutting down.
pub fn attach_from_thread<R>(f: impl FnOnce(Python<'_>) -> R) -> Option<R> {
    let _delivering = {
        let mut gate = GATE.lock().unwrap_or_else(PoisonError::into_inner);
        if !gate.open {
            return None;
        }
        gate.delivering += 1;
        Delivering
    };
    Python::try_attach(f)
}

/// Registered with `atexit`: closes the gate, then waits (GIL released) a
/// moment for the callbacks and log events being delivered right now.
#[pyfunction]
pub fn _close_for_exit(py: Python<'_>) {
    py.detach(|| {
        let mut gate = GATE.lock().unwrap_or_else(PoisonError::into_inner);
        gate.open = false;
        let waited = DELIVERED.wait_timeout_while(gate, EXIT_WAIT, |gate| gate.delivering > 0);
        drop(waited.unwrap_or_else(PoisonError::into_inner));
    });
}

type Job = Box<dyn FnOnce(Python<'_>) + Send>;

/// A channel to a thread of this process, started on first use. A child
/// forked after that starts its own: threads do not survive `fork()`.
pub struct ProcessThread<T> {
    current: Mutex<Option<(u32, Sender<T>)>>,
}

impl<T: Send + 'static> ProcessThread<T> {
    pub const fn new() -> Self {
        ProcessThread { current: Mutex::new(None) }
    }

    /// Sends `item` to the thread, starting it with `start` if needed.
    pub fn send(&self, item: T, start: impl FnOnce(Receiver<T>)) {
        let mut current = self.current.lock().unwrap();
        let pid = runtime::process_id();
        if !matches!(&*current, Some((started_in, _)) if *started_in == pid) {
            let (sender, receiver) = channel();
            start(receiver);
            *current = Some((pid, sender));
        }
        if let Some((_, sender)) = current.as_ref() {
            let _ = sender.send(item);
        }
    }
}

/// One client's listener calls — its own listeners' and its locks' — in
/// the order queued, on a thread of the client's own ("zoolock-listeners"),
/// started at the first call. kazoo calls a client's listeners on that
/// client's connection thread: a listener that blocks (kazoo forbids it)
/// holds up its own client's listeners only, never another client's, nor
/// watches or I/O.
pub struct CallbackThread {
    jobs: ProcessThread<Job>,
    /// The thread, once started: a caller on it must not wait for a job it queues.
    thread: Mutex<Option<std::thread::ThreadId>>,
}

impl CallbackThread {
    pub fn new() -> Arc<CallbackThread> {
        Arc::new(CallbackThread { jobs: ProcessThread::new(), thread: Mutex::new(None) })
    }

    /// Runs `job` with the GIL on the thread, after the jobs queued before
    /// it. Dropped if the interpreter is shutting down.
    pub fn run(&self, job: impl FnOnce(Python<'_>) + Send + 'static) {
        self.jobs.send(Box::new(job), |receiver| {
            let started = std::thread::Builder::new().name("zoolock-listeners".into()).spawn(move || {
                while let Ok(first) = receiver.recv() {
                    // One attach for everything queued meanwhile: taking the
                    // GIL costs more than most jobs.
                    let attached = attach_from_thread(|py| {
                        first(py);
                        while let Ok(next) = receiver.try_recv() {
                            next(py);
                        }
                    });
                    if attached.is_none() {
                        return;
                    }
                }
            });
            let started = started.expect("zoolock cannot start a listener thread");
            *self.thread.lock().unwrap() = Some(started.thread().id());
        });
    }

    /// Whether the caller is this thread (a listener).
    fn is_current(&self) -> bool {
        *self.thread.lock().unwrap() == Some(std::thread::current().id())
    }
}

/// Calls `callback(arg)`, reporting (not raising) what it raises, as a
/// thread with no caller to raise to must.
fn call_reporting<'py>(callback: &Bound<'py, PyAny>, arg: &str) -> Option<Bound<'py, PyAny>> {
    match callback.call1((arg,)) {
        Ok(result) => Some(result),
        Err(err) => {
            err.write_unraisable(callback.py(), Some(callback));
            None
        }
    }
}

/// Listeners as kazoo keeps them, in a set: adding one twice keeps one, and
/// removal goes by equality (a bound method is a new object at each access).
/// Clones are the same set. Called on their client's [`CallbackThread`].
#[derive(Clone)]
pub struct Listeners {
    set: Arc<Mutex<Vec<Py<PyAny>>>>,
    /// A listener that returns ``True`` is removed (kazoo's client listeners).
    until_true: bool,
    thread: Arc<CallbackThread>,
}

impl Listeners {
    /// kazoo's client listeners: one that returns ``True`` is removed.
    pub fn client(thread: Arc<CallbackThread>) -> Self {
        Listeners { set: Arc::default(), until_true: true, thread }
    }

    /// A lock's or semaphore's listeners, on its client's thread.
    pub fn holder(thread: Arc<CallbackThread>) -> Self {
        Listeners { set: Arc::default(), until_true: false, thread }
    }

    pub fn is_empty(&self) -> bool {
        self.set.lock().unwrap().is_empty()
    }

    /// The registered listener equal to `listener`, compared without holding
    /// the set's lock (``__eq__`` is Python code).
    fn find_equal(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<Option<Py<PyAny>>> {
        for known in self.snapshot(py) {
            if known.bind(py).eq(listener)? {
                return Ok(Some(known));
            }
        }
        Ok(None)
    }

    fn snapshot(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        let set = self.set.lock().unwrap();
        set.iter().map(|l| l.clone_ref(py)).collect()
    }

    /// Adds `listener` unless an equal one is registered; true if added.
    pub fn add(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<bool> {
        if self.find_equal(py, listener)?.is_some() {
            return Ok(false);
        }
        self.set.lock().unwrap().push(listener.clone().unbind());
        Ok(true)
    }

    pub fn remove(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        if let Some(known) = self.find_equal(py, listener)? {
            self.set.lock().unwrap().retain(|l| !l.is(&known));
        }
        Ok(())
    }

    /// Queues `state` for every listener registered when it is delivered.
    pub fn notify(&self, state: &'static str) {
        self.notify_if(state, || true)
    }

    /// [`Listeners::notify`], unless `current()` says, at delivery, that
    /// `state` is out of date (a session stopped since).
    pub fn notify_if(&self, state: &'static str, current: impl FnOnce() -> bool + Send + 'static) {
        let listeners = self.clone();
        self.thread.run(move |py| {
            if current() {
                listeners.call_all(py, state);
            }
        });
    }

    /// Tells the listeners `state` and returns once they were called (kazoo's
    /// `start()` returns after its listeners heard `CONNECTED`, its `stop()`
    /// after `LOST`), with the GIL released and Ctrl-C interrupting the wait.
    /// A listener must not block (kazoo's rule too): if one still runs after
    /// `bound` (kazoo's `stop()` waits as long for its connection thread),
    /// this returns, with a warning, rather than hang. Called from a
    /// listener, it only queues: the state comes right after that listener.
    pub fn notify_and_wait(&self, py: Python<'_>, state: &'static str, bound: Duration) -> PyResult<()> {
        if self.is_empty() {
            return Ok(());
        }
        if self.thread.is_current() {
            self.notify(state);
            return Ok(());
        }
        let (called, told) = tokio::sync::oneshot::channel::<()>();
        let listeners = self.clone();
        self.thread.run(move |py| {
            listeners.call_all(py, state);
            drop(called);
        });
        // Told, or the call dropped (the interpreter is shutting down): either way, done.
        // The timer is made inside zoolock's runtime, where `interruptible` polls.
        if interruptible(py, async move { tokio::time::timeout(bound, told).await })?.is_err() {
            tracing::warn!(
                state,
                "a listener of this client has run for {bound:?} and still blocks the others: listeners must not block"
            );
        }
        Ok(())
    }

    fn call_all(&self, py: Python<'_>, state: &'static str) {
        for listener in self.snapshot(py) {
            let result = call_reporting(listener.bind(py), state);
            // kazoo removes a listener that returns True itself, not any truthy value.
            let done = result.is_some_and(|r| r.is(&*PyBool::new(py, true)));
            if self.until_true && done {
                self.set.lock().unwrap().retain(|l| !l.is(&listener));
            }
        }
    }
}

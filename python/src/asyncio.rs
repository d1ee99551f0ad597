//! asyncio support: a core call runs on zoolock's runtime and completes an
//! asyncio Future of the running loop without blocking it.
//!
//! Each loop gets one bridge: a queue of completions and a pipe the loop
//! watches (`add_reader`). A finished call queues its completion and writes
//! one byte if the queue was empty; the loop, which holds the GIL anyway,
//! drains the queue. No other thread takes the GIL, and a burst of
//! completions costs the loop one wake-up.

use std::cell::RefCell;
use std::future::Future;
use std::io::{ErrorKind, PipeReader, PipeWriter, Read, Write};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex};

use pyo3::intern;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyWeakrefReference;
use zoolock::runtime;

use crate::errors::to_py;

type Completion = Box<dyn FnOnce(Python<'_>) + Send>;

struct Queue {
    completions: Mutex<Vec<Completion>>,
    wake: Mutex<PipeWriter>,
}

impl Queue {
    fn push(&self, completion: Completion) {
        let was_empty = {
            let mut completions = self.completions.lock().unwrap();
            completions.push(completion);
            completions.len() == 1
        };
        if was_empty {
            // Fails only once the loop is gone, and then nobody is waiting.
            let _ = self.wake.lock().unwrap().write(&[1]);
        }
    }
}

/// The reader the loop calls when the pipe is readable.
#[pyclass(frozen)]
struct Bridge {
    queue: Arc<Queue>,
    woken: Mutex<PipeReader>,
}

#[pymethods]
impl Bridge {
    fn __call__(&self, py: Python<'_>) {
        // Empty the pipe before the queue: a completion queued in between
        // then finds the queue non-empty and is taken below, or writes a
        // byte that wakes the loop again.
        let mut bytes = [0u8; 256];
        let mut woken = self.woken.lock().unwrap();
        loop {
            match woken.read(&mut bytes) {
                Ok(n) if n > 0 => continue,
                Err(err) if err.kind() == ErrorKind::Interrupted => continue,
                _ => break, // WouldBlock: empty (or closed)
            }
        }
        drop(woken);
        let completions = std::mem::take(&mut *self.queue.completions.lock().unwrap());
        for completion in completions {
            completion(py);
        }
    }
}

/// A `weakref.WeakKeyDictionary` in `cell`, made on first use: what
/// zoolock keeps per event loop or task, gone with it.
pub fn weak_keys<'py>(py: Python<'py>, cell: &'py PyOnceLock<Py<PyAny>>) -> PyResult<&'py Bound<'py, PyAny>> {
    let made =
        cell.get_or_try_init(py, || Ok::<_, PyErr>(py.import("weakref")?.call_method0("WeakKeyDictionary")?.unbind()))?;
    Ok(made.bind(py))
}

/// The running loop and its bridge. Every call asks, so the answer for the
/// loop this thread last ran is kept (by weak reference: a new loop never
/// inherits a dead one's bridge): the dictionary lookup costs a Python call.
fn running_queue(py: Python<'_>) -> PyResult<(Bound<'_, PyAny>, Arc<Queue>)> {
    thread_local! {
        static LAST: RefCell<Option<(Py<PyWeakrefReference>, Arc<Queue>)>> = const { RefCell::new(None) };
    }
    static GET_RUNNING_LOOP: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let get_running_loop = GET_RUNNING_LOOP
        .get_or_try_init(py, || Ok::<_, PyErr>(py.import("asyncio")?.getattr("get_running_loop")?.unbind()))?;
    let event_loop = get_running_loop.bind(py).call0()?;
    let known = LAST.with_borrow(|last| {
        let (loop_ref, queue) = last.as_ref()?;
        loop_ref.bind(py).upgrade().filter(|known| known.is(&event_loop)).map(|_| queue.clone())
    });
    if let Some(queue) = known {
        return Ok((event_loop, queue));
    }
    let queue = queue_of(py, &event_loop)?;
    let loop_ref = PyWeakrefReference::new(&event_loop)?.unbind();
    LAST.with_borrow_mut(|last| *last = Some((loop_ref, queue.clone())));
    Ok((event_loop, queue))
}

/// The bridge of `event_loop`, made and registered on first use.
fn queue_of(py: Python<'_>, event_loop: &Bound<'_, PyAny>) -> PyResult<Arc<Queue>> {
    static BRIDGES: PyOnceLock<Py<PyAny>> = PyOnceLock::new();
    let bridges = weak_keys(py, &BRIDGES)?;
    if let Ok(bridge) = bridges.call_method1("get", (event_loop,))?.cast::<Bridge>() {
        return Ok(bridge.get().queue.clone());
    }
    let (woken, wake) = std::io::pipe()?;
    let fd = woken.as_raw_fd();
    py.import("os")?.call_method1("set_blocking", (fd, false))?;
    let queue = Arc::new(Queue { completions: Mutex::default(), wake: Mutex::new(wake) });
    let bridge = Bound::new(py, Bridge { queue: queue.clone(), woken: Mutex::new(woken) })?;
    event_loop.call_method1("add_reader", (fd, &bridge))?;
    bridges.set_item(event_loop, bridge)?;
    Ok(queue)
}

/// Where a call's outcome is, shared by the call, its completion and the
/// Future's done-callback, so a cancelled Future's outcome is handed to
/// `abandon` exactly once whoever comes last.
struct Pending<T> {
    cancelled: bool,
    outcome: Option<T>,
    abandon: Option<Box<dyn FnOnce(T) + Send>>,
}

impl<T> Pending<T> {
    fn give_up(&mut self) {
        if let (Some(outcome), Some(abandon)) = (self.outcome.take(), self.abandon.take()) {
            abandon(outcome);
        }
    }
}

/// A done-callback: cancelling the asyncio Future aborts the core call.
#[pyclass(frozen)]
struct OnCancel {
    cancel: Mutex<Option<Box<dyn FnOnce() + Send>>>,
}

#[pymethods]
impl OnCancel {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            if let Some(cancel) = self.cancel.lock().unwrap().take() {
                cancel();
            }
        }
        Ok(())
    }
}

/// Runs `work` on zoolock's runtime and returns an asyncio Future of the
/// running loop that `convert` completes. Cancelling the Future aborts
/// `work` (dropping a core acquire removes its node); an outcome that
/// arrives for a cancelled Future goes to `abandon` (a lock won just then is
/// released again).
pub fn to_asyncio<'py, T: Send + 'static>(
    py: Python<'py>,
    work: impl Future<Output = T> + Send + 'static,
    convert: impl FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
    abandon: impl FnOnce(T) + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    let (event_loop, queue) = running_queue(py)?;
    runtime::check_process().map_err(to_py)?;
    let future = event_loop.call_method0(intern!(py, "create_future"))?;
    let pending = Arc::new(Mutex::new(Pending { cancelled: false, outcome: None, abandon: Some(Box::new(abandon)) }));
    let on_cancel = Py::new(py, OnCancel { cancel: Mutex::new(None) })?;
    let (target, shared, watcher) = (future.clone().unbind(), pending.clone(), on_cancel.clone_ref(py));
    // Started here, so that calls keep their order (`runtime::start`).
    let task = runtime::start(async move {
        let outcome = work.await;
        {
            let mut pending = shared.lock().unwrap();
            pending.outcome = Some(outcome);
            if pending.cancelled {
                return pending.give_up();
            }
        }
        queue.push(Box::new(move |py| complete(py, target.bind(py), watcher.bind(py), &shared, convert)));
    });
    let abort = task.abort_handle();
    *on_cancel.get().cancel.lock().unwrap() = Some(Box::new(move || {
        abort.abort();
        let mut pending = pending.lock().unwrap();
        pending.cancelled = true;
        pending.give_up();
    }));
    future.call_method1(intern!(py, "add_done_callback"), (on_cancel,))?;
    Ok(future)
}

/// On the loop: settles `future` with the outcome, unless it was cancelled.
/// `on_cancel` is taken off first: it would only find the Future not
/// cancelled, and a done-callback costs the loop a turn.
fn complete<T>(
    py: Python<'_>,
    future: &Bound<'_, PyAny>,
    on_cancel: &Bound<'_, OnCancel>,
    pending: &Mutex<Pending<T>>,
    convert: impl FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>>,
) {
    let mut state = pending.lock().unwrap();
    let Some(outcome) = state.outcome.take() else {
        return;
    };
    if future.call_method0(intern!(py, "done")).and_then(|d| d.is_truthy()).unwrap_or(true) {
        state.outcome = Some(outcome);
        return state.give_up();
    }
    drop(state);
    let settled = future.call_method1(intern!(py, "remove_done_callback"), (on_cancel,)).and_then(|_| {
        match convert(py, outcome) {
            Ok(value) => future.call_method1(intern!(py, "set_result"), (value,)),
            Err(err) => future.call_method1(intern!(py, "set_exception"), (err.value(py),)),
        }
    });
    if let Err(err) = settled {
        err.write_unraisable(py, Some(future));
    }
}

//! kazoo's `*_async` forms: a core call started on the caller's thread, its
//! outcome handed to the package later, in the order the calls started.
//!
//! Started here, not on a worker thread, because ZooKeeper applies a
//! session's requests in the order they were sent and kazoo sends each when
//! it is called: `create_async(p)` then `exists(p)` must see the node
//! (`runtime::start` sends in the first poll).

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

use pyo3::exceptions::PyRuntimeError;
use pyo3::panic::PanicException;
use pyo3::prelude::*;
use zoolock::runtime;

use crate::errors::to_py;
use crate::wait::{attach_from_thread, interruptible};

type Delivery = Box<dyn FnOnce(Python<'_>) + Send>;

/// A core call: without `done`, waited for here (the GIL released, Ctrl-C
/// interrupting it) and its value `convert`ed. With `done`, started now and
/// `None` returned at once; `done(True, value)` or `done(False, exception)`
/// is called on the results thread once it ends, after those of the calls
/// started on `line` before it.
pub fn call_or_start<T: Send + 'static>(
    py: Python<'_>,
    done: Option<(Py<PyAny>, Line)>,
    work: impl Future<Output = T> + Send + 'static,
    convert: impl for<'py> FnOnce(Python<'py>, T) -> PyResult<Bound<'py, PyAny>> + Send + 'static,
) -> PyResult<Py<PyAny>> {
    let Some((done, line)) = done else {
        let value = interruptible(py, work)?;
        return Ok(convert(py, value)?.unbind());
    };
    // In a forked child the results thread is gone: nothing would deliver.
    runtime::check_process().map_err(to_py)?;
    let seq = line.lock().unwrap_or_else(PoisonError::into_inner).take();
    let mut turn = Turn { line, seq, done: Some(done) };
    // A panic, in the first poll here or later, is the call's outcome: never a second one.
    runtime::start(async move {
        match runtime::catch_unwind(work).await {
            Ok(outcome) => turn.end(move |py| convert(py, outcome)),
            Err(_) => turn.end(|_| Err(PanicException::new_err("zoolock: the call panicked"))),
        }
    });
    Ok(py.None())
}

/// One client's started calls, whose outcomes are handed over in the order
/// the calls started: a session's replies come in the order its requests
/// were sent, and kazoo sets its results in that order, but the runtime
/// wakes the tasks that wait for them in an order of its own.
pub type Line = Arc<Mutex<Order>>;

#[derive(Default)]
pub struct Order {
    started: u64,
    handed: u64,
    ended: BTreeMap<u64, Delivery>,
}

impl Order {
    fn take(&mut self) -> u64 {
        self.started += 1;
        self.started - 1
    }
}

/// A started call's place in its line; it ends exactly once (dropped
/// unended, as by a panic, with a `RuntimeError`).
struct Turn {
    line: Line,
    seq: u64,
    done: Option<Py<PyAny>>,
}

impl Turn {
    /// Queues `done` with the outcome `make` gives, then hands over every
    /// outcome of the line that is next.
    fn end(&mut self, make: impl for<'py> FnOnce(Python<'py>) -> PyResult<Bound<'py, PyAny>> + Send + 'static) {
        let Some(done) = self.done.take() else { return };
        let deliver: Delivery = Box::new(move |py| {
            let (ok, value) = match make(py) {
                Ok(value) => (true, value),
                Err(err) => (false, err.into_value(py).into_bound(py).into_any()),
            };
            if let Err(err) = done.call1(py, (ok, value)) {
                err.write_unraisable(py, Some(done.bind(py)));
            }
        });
        let mut order = self.line.lock().unwrap_or_else(PoisonError::into_inner);
        order.ended.insert(self.seq, deliver);
        let results = results();
        while let Some(next) = {
            let handed = order.handed;
            order.ended.remove(&handed)
        } {
            order.handed += 1;
            // The receiver lives as long as the process.
            let _ = results.send(next);
        }
    }
}

impl Drop for Turn {
    fn drop(&mut self) {
        self.end(|_| Err(PyRuntimeError::new_err("zoolock: the call ended without an outcome")));
    }
}

/// The results thread's queue, the thread started on first use: outcomes
/// are handed over one at a time, in the order the calls ended (kazoo sets
/// its results on its connection thread); what the package does with them
/// must not block it.
fn results() -> Sender<Delivery> {
    static RESULTS: OnceLock<Mutex<Sender<Delivery>>> = OnceLock::new();
    let sender = RESULTS.get_or_init(|| {
        let (sender, queue) = channel::<Delivery>();
        std::thread::Builder::new()
            .name("zoolock-results".into())
            .spawn(move || {
                for deliver in queue {
                    // `None`: Python is shutting down, nothing to hand it to.
                    let _ = attach_from_thread(deliver);
                }
            })
            .expect("zoolock cannot start its results thread");
        Mutex::new(sender)
    });
    sender.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

//! How Python waits for the core: blocking calls release the GIL and stay
//! interruptible by Ctrl-C; asyncio calls complete an asyncio Future from
//! zoolock's runtime without blocking the event loop.

use std::cell::Cell;
use std::future::Future;
use std::sync::mpsc::{channel, sync_channel, RecvTimeoutError, Sender};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use pyo3::prelude::*;
use zoolock::runtime;

use crate::errors::to_py;

/// How often a waiting main thread looks for a pending signal (Ctrl-C).
const SIGNAL_SLICE: Duration = Duration::from_millis(50);

/// Runs `work` on zoolock's runtime and waits for it with the GIL released.
/// On the main thread the wait goes in slices, and a pending signal
/// (KeyboardInterrupt) between slices aborts `work`: dropping a core
/// acquire removes the node it queued.
///
/// The wait is a plain channel receive, not a tokio timer: a timer set from
/// a thread outside the runtime would wake the runtime's driver on every call.
pub fn interruptible<T: Send + 'static>(py: Python<'_>, work: impl Future<Output = T> + Send + 'static) -> PyResult<T> {
    // In a forked child the runtime's threads are gone: nothing spawned would run.
    runtime::check_process().map_err(to_py)?;
    let (sender, outcome) = sync_channel(1);
    let task = runtime::spawn(async move {
        let _ = sender.send(work.await);
    });
    if !is_main_thread(py) {
        // Only the main thread receives signals.
        return Ok(py.detach(move || outcome.recv()).expect("zoolock task vanished"));
    }
    let mut outcome = outcome;
    loop {
        // The receiver goes into the GIL-free closure and comes back out.
        let (waited, back) = py.detach(move || (outcome.recv_timeout(SIGNAL_SLICE), outcome));
        outcome = back;
        match waited {
            Ok(done) => return Ok(done),
            Err(RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    task.abort();
                    return Err(interrupt);
                }
            }
            Err(RecvTimeoutError::Disconnected) => panic!("zoolock task vanished"),
        }
    }
}

/// Runs `work` with the GIL released and no interruption: for short,
/// bounded calls (release) that must not stop halfway.
pub fn uninterruptible<T: Send + 'static>(py: Python<'_>, work: impl Future<Output = T> + Send + 'static) -> PyResult<T> {
    runtime::check_process().map_err(to_py)?;
    let (sender, outcome) = sync_channel(1);
    runtime::spawn(async move {
        let _ = sender.send(work.await);
    });
    Ok(py.detach(move || outcome.recv()).expect("zoolock task vanished"))
}

fn is_main_thread(py: Python<'_>) -> bool {
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

type Delivery = Box<dyn FnOnce(Python<'_>, bool) + Send>;

/// Called on the event loop's thread with the outcome of a core call.
#[pyclass(frozen)]
struct Deliver {
    job: Mutex<Option<Delivery>>,
}

#[pymethods]
impl Deliver {
    fn __call__(&self, py: Python<'_>) {
        if let Some(job) = self.job.lock().unwrap().take() {
            job(py, false);
        }
    }
}

/// A done-callback: cancelling the asyncio Future aborts the core call.
#[pyclass(frozen)]
struct AbortOnCancel {
    task: tokio::task::AbortHandle,
}

#[pymethods]
impl AbortOnCancel {
    fn __call__(&self, future: &Bound<'_, PyAny>) -> PyResult<()> {
        if future.call_method0("cancelled")?.is_truthy()? {
            self.task.abort();
        }
        Ok(())
    }
}

/// Runs `work` on zoolock's runtime and returns an asyncio Future of the
/// running loop that `convert` completes. Cancelling the Future aborts
/// `work` (dropping a core acquire removes its node); if the outcome arrives
/// after the Future was cancelled or its loop closed, `abandon` gets it.
pub fn to_asyncio<'py, T: Send + 'static>(
    py: Python<'py>,
    work: impl Future<Output = T> + Send + 'static,
    convert: impl FnOnce(Python<'_>, T) -> PyResult<Py<PyAny>> + Send + 'static,
    abandon: impl FnOnce(T) + Send + 'static,
) -> PyResult<Bound<'py, PyAny>> {
    let event_loop = py.import("asyncio")?.call_method0("get_running_loop")?;
    runtime::check_process().map_err(to_py)?;
    let future = event_loop.call_method0("create_future")?;
    let (loop_ref, future_ref) = (event_loop.clone().unbind(), future.clone().unbind());
    let task = runtime::spawn(async move {
        let outcome = work.await;
        let job: Delivery = Box::new(move |py, abandoned| {
            let future = future_ref.bind(py);
            let done = future
                .call_method0("done")
                .and_then(|d| d.is_truthy())
                .unwrap_or(true);
            if abandoned || done {
                return abandon(outcome);
            }
            let settled = match convert(py, outcome) {
                Ok(value) => future.call_method1("set_result", (value,)),
                Err(err) => future.call_method1("set_exception", (err.value(py),)),
            };
            if let Err(err) = settled {
                err.write_unraisable(py, Some(future));
            }
        });
        // Taking the GIL may wait; keep that off the runtime's I/O threads.
        run_with_gil(move |py| {
            let deliver = match Bound::new(
                py,
                Deliver {
                    job: Mutex::new(Some(job)),
                },
            ) {
                Ok(deliver) => deliver,
                Err(err) => return err.write_unraisable(py, None),
            };
            if loop_ref
                .bind(py)
                .call_method1("call_soon_threadsafe", (&deliver,))
                .is_err()
            {
                // The loop is closed: nobody will ever see the outcome.
                if let Some(job) = deliver.get().job.lock().unwrap().take() {
                    job(py, true);
                }
            }
        });
    });
    future.call_method1(
        "add_done_callback",
        (AbortOnCancel {
            task: task.abort_handle(),
        },),
    )?;
    Ok(future)
}

type Job = Box<dyn FnOnce(Python<'_>) + Send>;

/// Runs `job` with the GIL on zoolock's Python thread ("zoolock-python"):
/// listener callbacks and asyncio deliveries, in the order they were queued,
/// never on an I/O thread. Dropped if the interpreter is shutting down.
pub fn run_with_gil(job: impl FnOnce(Python<'_>) + Send + 'static) {
    static QUEUE: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    let queue = QUEUE.get_or_init(|| {
        let (sender, receiver) = channel::<Job>();
        std::thread::Builder::new()
            .name("zoolock-python".into())
            .spawn(move || {
                while let Ok(first) = receiver.recv() {
                    // One attach for everything queued meanwhile: taking the
                    // GIL costs more than most jobs.
                    let attached = Python::try_attach(|py| {
                        first(py);
                        while let Ok(next) = receiver.try_recv() {
                            next(py);
                        }
                    });
                    if attached.is_none() {
                        return;
                    }
                }
            })
            .expect("zoolock cannot start its Python callback thread");
        Mutex::new(sender)
    });
    let _ = queue.lock().unwrap().send(Box::new(job));
}

/// Calls `callback(arg)`, reporting (not raising) what it raises, as a
/// thread with no caller to raise to must.
pub fn call_reporting<'py>(callback: &Bound<'py, PyAny>, arg: &str) -> Option<Bound<'py, PyAny>> {
    match callback.call1((arg,)) {
        Ok(result) => Some(result),
        Err(err) => {
            err.write_unraisable(callback.py(), Some(callback));
            None
        }
    }
}

//! Where callbacks into the caller run, and how the process exits cleanly.
//!
//! Every callback (acquire completions, state changes) runs on a thread of
//! this module's own, one at a time and in order, never on zoolock's I/O or
//! event threads. A managed runtime adopts a native thread the first time it
//! calls in, and Mono then waits for that thread at exit (aborting it first
//! if it is a background thread), forever if it never leaves native code.
//! So the thread never waits long for work: it ends after `IDLE` without a
//! job (the next job starts another). `zl_shutdown`, which the binding calls
//! when the process exits, cancels the acquires in progress and makes the
//! thread end as soon as its queue is empty, once their completions have
//! run on it: a managed runtime tears itself down right after its exit
//! hook, and a callback on a thread it has not met by then crashes it.

use std::future::Future;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender, TryRecvError};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::watch;
use zoolock::runtime;

use crate::status::{guard, Failure, FfiResult};

type Job = Box<dyn FnOnce() + Send>;

/// How long `zl_shutdown` waits for the calls it cancelled to call back and
/// for the callback thread to end.
const STOP_WAIT: Duration = Duration::from_secs(2);

/// How long the callback thread waits for a job before it ends: the most a
/// managed runtime's exit may wait for it. A burst of callbacks after a
/// quiet spell pays one thread start.
const IDLE: Duration = Duration::from_millis(500);

/// Set by `zl_shutdown`: from then on the thread ends as soon as it is
/// idle. Never cleared: after a shutdown every quiet spell ends the thread.
static SHUT_DOWN: AtomicBool = AtomicBool::new(false);

/// The running callback thread. Only that thread empties the slot, under
/// its lock and with its queue empty, so two never run at once.
struct Dispatcher {
    /// Which thread this is: an idle thread clears the slot only if it is still its own.
    id: u64,
    jobs: Sender<Job>,
    /// Closed when the thread ends; taken by the `zl_shutdown` that waits for it.
    stopped: Option<Receiver<()>>,
}

/// The slot's lock; a panic elsewhere while it was held does not stop callbacks.
fn dispatcher() -> MutexGuard<'static, Option<Dispatcher>> {
    static DISPATCHER: Mutex<Option<Dispatcher>> = Mutex::new(None);
    DISPATCHER.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Runs `job` on the callback thread, after the jobs posted before it.
pub fn post(job: Job) {
    post_unless(job, false);
}

/// As `post`, but drops `job` once `zl_shutdown` has been called: decided
/// under the slot's lock, which `zl_shutdown` takes after raising its flag,
/// so a job either runs before the thread it waits for ends, or not at all.
pub fn post_event(job: Job) {
    post_unless(job, true);
}

fn post_unless(job: Job, after_shutdown: bool) {
    let mut current = dispatcher();
    if after_shutdown && shut_down() {
        return;
    }
    let job = match current.as_ref() {
        Some(running) => match running.jobs.send(job) {
            Ok(()) => return,
            Err(failed) => failed.0,
        },
        None => job,
    };
    static IDS: AtomicU64 = AtomicU64::new(0);
    let id = IDS.fetch_add(1, Ordering::Relaxed);
    let (jobs, queue) = channel::<Job>();
    let (done, stopped) = channel();
    let spawned = std::thread::Builder::new().name("zoolock-callbacks".into()).spawn(move || {
        while let Some(job) = next_job(id, &queue) {
            // A callback is the caller's code and must not unwind into us; if
            // a Rust panic happens around it anyway, later callbacks still run.
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
        }
        drop(done);
    });
    match spawned {
        Ok(_) => {
            let _ = jobs.send(job);
            *current = Some(Dispatcher { id, jobs, stopped: Some(stopped) });
        }
        Err(err) => {
            drop(current);
            // Without a thread the callback cannot run; nothing better can be done.
            eprintln!("zoolock cannot start its callback thread: {err}");
        }
    }
}

/// The callback thread's next job, or `None` once it should end: idle for
/// `IDLE`, at once after `zl_shutdown`.
fn next_job(id: u64, queue: &Receiver<Job>) -> Option<Job> {
    let idle = if shut_down() { Duration::ZERO } else { IDLE };
    match queue.recv_timeout(idle) {
        Ok(job) => return Some(job),
        Err(RecvTimeoutError::Disconnected) => return None,
        Err(RecvTimeoutError::Timeout) => {}
    }
    // `post` sends under this lock: once the slot is cleared under it, no job
    // can reach this queue any more, and the next one starts a new thread.
    let mut current = dispatcher();
    match queue.try_recv() {
        Ok(job) => Some(job),
        Err(TryRecvError::Disconnected) => None,
        Err(TryRecvError::Empty) => {
            if current.as_ref().is_some_and(|running| running.id == id) {
                *current = None;
            }
            None
        }
    }
}

/// Runs `work` on zoolock's runtime, started on the caller's thread so that
/// calls keep their order (`runtime::start`), then `deliver` with its
/// outcome (a panic included) on the callback thread: every
/// callback-completed call (`_async`) ends here, exactly once.
pub fn complete_later<T, W, D>(work: W, deliver: D)
where
    T: Send + 'static,
    W: Future<Output = FfiResult<T>> + Send + 'static,
    D: FnOnce(FfiResult<T>) + Send + 'static,
{
    let pending = Pending::new();
    runtime::start(async move {
        let outcome = match runtime::catch_unwind(work).await {
            Ok(outcome) => outcome,
            Err(payload) => Err(Failure::panic(payload)),
        };
        post(Box::new(move || {
            deliver(outcome);
            drop(pending);
        }));
    });
}

/// Counts a call from its start until its callback has returned (or will
/// never run: the guard is dropped with the job); `zl_shutdown` waits for
/// none.
pub(crate) struct Pending;

fn pending_calls() -> &'static (Mutex<u64>, Condvar) {
    static PENDING: (Mutex<u64>, Condvar) = (Mutex::new(0), Condvar::new());
    &PENDING
}

impl Pending {
    pub(crate) fn new() -> Pending {
        *pending_calls().0.lock().unwrap_or_else(PoisonError::into_inner) += 1;
        Pending
    }

    /// Waits until no call is pending, or until `deadline`.
    fn wait_none(deadline: Instant) {
        let (count, none) = pending_calls();
        let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
        while *count > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return;
            }
            count = none.wait_timeout(count, left).unwrap_or_else(PoisonError::into_inner).0;
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        let (count, none) = pending_calls();
        let mut count = count.lock().unwrap_or_else(PoisonError::into_inner);
        *count -= 1;
        if *count == 0 {
            none.notify_all();
        }
    }
}

fn shutdown_channel() -> &'static watch::Sender<u64> {
    static SHUTDOWNS: OnceLock<watch::Sender<u64>> = OnceLock::new();
    SHUTDOWNS.get_or_init(|| watch::Sender::new(0))
}

/// Whether `zl_shutdown` has been called.
fn shut_down() -> bool {
    SHUT_DOWN.load(Ordering::Acquire)
}

/// A counter that `zl_shutdown` bumps: acquires in progress watch it.
pub fn shutdowns() -> watch::Receiver<u64> {
    shutdown_channel().subscribe()
}

/// For the process's exit: cancels every callback-completed call in
/// progress (each fails with `ZL_CANCELLED`; an acquire leaves no node),
/// waits until their callbacks have returned, then lets the callback thread
/// end, waiting up to two seconds in all. From then on state callbacks are
/// not called; calls still complete (the callback thread ends whenever it
/// is idle). Called from a callback, it cannot wait for the others (they
/// run on the same thread).
#[no_mangle]
pub extern "C" fn zl_shutdown() -> i32 {
    guard(|| {
        let deadline = Instant::now() + STOP_WAIT;
        let on_callback_thread = std::thread::current().name() == Some("zoolock-callbacks");
        SHUT_DOWN.store(true, Ordering::Release);
        shutdown_channel().send_modify(|n| *n += 1);
        if !on_callback_thread {
            Pending::wait_none(deadline);
        }
        let stopped = {
            let mut current = dispatcher();
            current.as_mut().and_then(|running| {
                // Wakes a thread waiting for work, which then sees the flag.
                let _ = running.jobs.send(Box::new(|| {}));
                running.stopped.take()
            })
        };
        // Called from a callback, the thread ends after this callback returns.
        if let Some(stopped) = stopped.filter(|_| !on_callback_thread) {
            let _ = stopped.recv_timeout(deadline.saturating_duration_since(Instant::now()));
        }
        Ok(())
    })
}

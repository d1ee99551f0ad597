//! The one tokio runtime that runs zoolock's I/O and background work.
//!
//! Sessions connected without a multi-thread tokio runtime of the caller's
//! (`connect_blocking`, the bindings, a current_thread runtime) live here,
//! with their watchers and guaranteed deletes, and `_blocking` calls run
//! here; a session connected from a multi-thread runtime runs there instead
//! (see `session_runtime` in session.rs). The bindings' blocking calls
//! move here at their first wake-up ([`wait`], in `call.rs`).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;
use std::task::{Context, Poll, Waker};

use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

mod call;

pub use call::{begin, wait, Begun};

/// The process that started zoolock's threads.
static STARTED_IN: AtomicU32 = AtomicU32::new(0);

/// This process's id once asked, 0 before: [`process_id`].
static PROCESS_ID: AtomicU32 = AtomicU32::new(0);

/// This process's id, asked of the kernel once: the fork checks run on
/// every call, and a `getpid` each is a system call. A forked child forgets
/// it (`pthread_atfork`), so its next check asks again and finds it is not
/// the parent. Assumes the fork is libc's
/// `fork()`, which runs those handlers (Python's `os.fork`, `multiprocessing`):
/// a child made by a raw `clone` system call, or by glibc's `_Fork`, that
/// went on to use zoolock would be taken for its parent.
pub fn process_id() -> u32 {
    let known = PROCESS_ID.load(Ordering::Acquire);
    if known != 0 {
        return known;
    }
    #[cfg(unix)]
    {
        static ATFORK: std::sync::Once = std::sync::Once::new();
        extern "C" fn forget_in_child() {
            PROCESS_ID.store(0, Ordering::Release);
        }
        // Before the id is kept: a fork after this line clears it in the child.
        // Safety: the handler only stores to an atomic (async-signal-safe).
        ATFORK.call_once(|| unsafe {
            libc::pthread_atfork(None, None, Some(forget_in_child));
        });
    }
    let pid = std::process::id();
    PROCESS_ID.store(pid, Ordering::Release);
    pid
}

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        STARTED_IN.store(process_id(), Ordering::Release);
        // One worker: its tasks (the sessions' I/O, the holds' watches,
        // background removals, the bindings' calls once they wait: `wait`)
        // are short, and callbacks run on the bindings' own threads, so a
        // second worker only adds wakes: measured on the uncontended cycle,
        // about 13 context switches per acquire+release instead of 17-18,
        // and 4-5 instead of 5-10 with 64 locks cycled at once (issue 16).
        // Nothing that blocks may run here (it never did: listeners have
        // their own thread).
        Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("zoolock-io")
            .enable_all()
            .build()
            .expect("zoolock cannot start its I/O runtime")
    })
}

/// Fails in a process forked after zoolock started: none of the parent's
/// threads (the runtime's, and the socket reactor of `zookeeper-client`)
/// exist in the child, and they cannot be restarted there, so any session
/// work would hang. Checked before anything is spawned; bindings that
/// spawn their own work on this runtime check it first too.
pub fn check_process() -> Result<()> {
    match STARTED_IN.load(Ordering::Acquire) {
        0 => Ok(()),
        pid if pid == process_id() => Ok(()),
        parent => Err(Error::Forked { parent }),
    }
}

/// The runtime's handle, started on first use.
pub fn handle() -> &'static Handle {
    runtime().handle()
}

/// Runs `future` on zoolock's runtime.
pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    handle().spawn(future)
}

/// Runs `future` on zoolock's runtime after polling it once on the calling
/// thread: a session call sends its request in that first poll, so calls
/// started one after another reach the server in that order, whatever
/// thread later waits for them (ZooKeeper applies a session's requests in
/// the order sent; kazoo's and Java's async calls send when called).
/// [`spawn`] alone would leave the send to the runtime's next turn, behind a
/// blocking call made meanwhile. The first poll's waker does nothing: the
/// spawned task polls again at once.
pub fn start<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut future = Box::pin(future);
    let first = {
        let _runtime = handle().enter();
        future.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    };
    match first {
        Poll::Ready(output) => spawn(std::future::ready(output)),
        Poll::Pending => spawn(future),
    }
}

/// `future`, its panic (in any poll) an outcome: the payload as `Err`. The
/// bindings complete a call with it rather than never (a panic must not
/// cross the C ABI, nor leave a Python result unset).
pub fn catch_unwind<F: Future>(future: F) -> CatchUnwind<F> {
    CatchUnwind(Box::pin(future))
}

/// See [`catch_unwind`].
pub struct CatchUnwind<F>(Pin<Box<F>>);

impl<F> std::fmt::Debug for CatchUnwind<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatchUnwind").finish_non_exhaustive()
    }
}

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        poll_caught(self.0.as_mut(), cx)
    }
}

/// One poll of `future`, its panic an outcome: [`CatchUnwind`]'s, and a
/// handed-over call's (`call.rs`), whose future is unsized.
fn poll_caught<F: Future + ?Sized>(future: Pin<&mut F>, cx: &mut Context<'_>) -> Poll<std::thread::Result<F::Output>> {
    match std::panic::catch_unwind(AssertUnwindSafe(|| future.poll(cx))) {
        Ok(Poll::Pending) => Poll::Pending,
        Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
        Err(payload) => Poll::Ready(Err(payload)),
    }
}

/// Runs `future` to completion on the calling thread (the blocking API).
/// Must not be called from inside an async task.
pub fn block_on<F: Future>(future: F) -> F::Output {
    handle().block_on(future)
}

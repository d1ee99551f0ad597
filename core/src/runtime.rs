//! The one tokio runtime that runs zoolock's I/O and background work.
//!
//! Sessions connected without a multi-thread tokio runtime of the caller's
//! (`connect_blocking`, the bindings, a current_thread runtime) live here,
//! with their watchers and guaranteed deletes, and `_blocking` calls run
//! here; a session connected from a multi-thread runtime runs there instead
//! (see `session_runtime` in session.rs).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};

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
pub struct CatchUnwind<F: ?Sized>(Pin<Box<F>>);

impl<F: ?Sized> std::fmt::Debug for CatchUnwind<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CatchUnwind").finish_non_exhaustive()
    }
}

impl<F: Future + ?Sized> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Runs `future` to completion on the calling thread (the blocking API).
/// Must not be called from inside an async task.
pub fn block_on<F: Future>(future: F) -> F::Output {
    handle().block_on(future)
}

/// Runs `future` to completion, blocking the calling thread: the bindings'
/// blocking calls. It is polled here first, so its first request leaves at
/// once and in call order (as with [`start`]). If it has to wait, it moves
/// onto the runtime at its first wake-up and runs there to the end, and this
/// thread wakes once, for the output. Polled here throughout ([`block_on`]),
/// each reply it waits for would cross threads twice: the reply wakes this
/// thread, and its next request wakes the runtime's again. A panic in
/// `future`, or in its drop, is raised here. `future` must not run code that
/// may block or call back in (a binding's callback): on the runtime's thread
/// it would hold up every session's I/O.
pub fn wait<F>(future: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    // Inside a task (a runtime's worker or blocking pool), as tokio's own
    // `block_on` does: a worker of ours would wait for itself.
    if tokio::task::try_id().is_some() {
        return block_on(future);
    }
    let call = Arc::new(Call { stage: Mutex::new(Stage::Polled { woken: false }), done: Condvar::new() });
    let mut future: Pin<Box<dyn Future<Output = F::Output> + Send>> = Box::pin(future);
    let first = {
        let _runtime = handle().enter();
        future.as_mut().poll(&mut Context::from_waker(&Waker::from(call.clone())))
    };
    if let Poll::Ready(output) = first {
        return output;
    }
    let mut stage = call.lock();
    // Woken while this thread polled: the wake found nothing to hand over yet.
    if let Stage::Polled { woken: true } = *stage {
        *stage = Stage::Running;
        drop(stage);
        call.hand_over(future);
        stage = call.lock();
    } else {
        *stage = Stage::Parked(future);
    }
    loop {
        if let Stage::Done(_) = &*stage {
            let Stage::Done(output) = std::mem::replace(&mut *stage, Stage::Running) else { unreachable!() };
            return output.unwrap_or_else(|payload| std::panic::resume_unwind(payload));
        }
        stage = call.done.wait(stage).unwrap_or_else(PoisonError::into_inner);
    }
}

/// A call of [`wait`]'s, shared by the waiting thread, the call's waker and
/// the task it becomes.
struct Call<T> {
    stage: Mutex<Stage<T>>,
    done: Condvar,
}

enum Stage<T> {
    /// Polled on the caller's thread; `woken` if a wake-up came meanwhile.
    Polled { woken: bool },
    /// Pending after that poll, until its first wake-up.
    Parked(Pin<Box<dyn Future<Output = T> + Send>>),
    /// A task on the runtime (from then on the task's waker is the one registered).
    Running,
    /// Its output, or its panic.
    Done(std::thread::Result<T>),
}

impl<T: Send + 'static> Call<T> {
    fn lock(&self) -> MutexGuard<'_, Stage<T>> {
        self.stage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spawns `future` (the stage already `Running`), which runs to the end
    /// on the runtime. From a wake-up on the runtime's thread (a reply), the
    /// task goes to that thread's own queue: no other thread is woken for it.
    fn hand_over(self: &Arc<Self>, future: Pin<Box<dyn Future<Output = T> + Send>>) {
        let call = self.clone();
        spawn(async move {
            let mut run = CatchUnwind(future);
            let mut output = (&mut run).await;
            // Dropped here, on the runtime, before the caller goes on (it may
            // borrow the caller's memory); a panic there is the call's too.
            if let Err(payload) = std::panic::catch_unwind(AssertUnwindSafe(|| drop(run))) {
                output = output.and(Err(payload));
            }
            *call.lock() = Stage::Done(output);
            call.done.notify_one();
        });
    }
}

impl<T: Send + 'static> Wake for Call<T> {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut stage = self.lock();
        match &mut *stage {
            Stage::Polled { woken } => *woken = true,
            Stage::Parked(_) => {
                let Stage::Parked(future) = std::mem::replace(&mut *stage, Stage::Running) else { unreachable!() };
                drop(stage);
                self.hand_over(future);
            }
            // The task's own waker runs it; this one was left with a sub-future.
            Stage::Running | Stage::Done(_) => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::poll_fn;
    use std::thread;
    use std::time::Duration;

    use super::*;

    fn thread_name() -> Option<String> {
        thread::current().name().map(str::to_owned)
    }

    /// A call that waits is polled by the caller once, then by the runtime.
    #[test]
    fn a_waiting_call_runs_on_the_runtime_from_its_first_wake_up() {
        let (tell, told) = tokio::sync::oneshot::channel();
        let teller = thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            tell.send(()).unwrap();
        });
        let (first, after_reply, after_timer) = wait(async move {
            let first = thread_name();
            told.await.unwrap();
            let after_reply = thread_name();
            tokio::time::sleep(Duration::from_millis(1)).await;
            (first, after_reply, thread_name())
        });
        teller.join().unwrap();
        assert_eq!(first, thread_name(), "the first poll is the caller's");
        assert_eq!(after_reply.as_deref(), Some("zoolock-io"));
        assert_eq!(after_timer.as_deref(), Some("zoolock-io"));
    }

    /// Ready at once: no hand-over, the caller's thread throughout.
    #[test]
    fn a_call_ready_at_once_stays_on_the_callers_thread() {
        assert_eq!(wait(async { thread_name() }), thread_name());
    }

    /// A wake-up during the caller's own poll is not lost: the caller hands over.
    #[test]
    fn a_call_woken_during_its_first_poll_is_handed_over_by_the_caller() {
        let mut polled = false;
        let ran_on = wait(poll_fn(move |cx| {
            if std::mem::replace(&mut polled, true) {
                return Poll::Ready(thread_name());
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }));
        assert_eq!(ran_on.as_deref(), Some("zoolock-io"));
    }

    /// A panic on the runtime is raised on the caller's thread, not left as a call that never returns.
    #[test]
    fn a_panic_after_the_hand_over_is_raised_to_the_caller() {
        let raised = std::panic::catch_unwind(|| {
            wait(async {
                tokio::time::sleep(Duration::from_millis(1)).await;
                panic!("boom after the hand-over");
            })
        });
        let payload = raised.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom after the hand-over"));
    }

    /// A future that panics when dropped, after the hand-over: the caller gets the panic, not a wait forever.
    #[test]
    fn a_panic_dropping_the_call_on_the_runtime_is_raised_to_the_caller() {
        struct PanicsOnDrop(Option<Pin<Box<tokio::time::Sleep>>>);
        impl Future for PanicsOnDrop {
            type Output = u8;
            fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u8> {
                let sleep = self.0.get_or_insert_with(|| Box::pin(tokio::time::sleep(Duration::from_millis(1))));
                sleep.as_mut().poll(cx).map(|()| 7)
            }
        }
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                panic!("boom in the drop");
            }
        }
        let raised = std::panic::catch_unwind(|| wait(PanicsOnDrop(None)));
        let payload = raised.expect_err("the drop's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in the drop"));
    }

    /// Inside a task (here a blocking-pool thread) it polls where it is called, as tokio's `block_on`.
    #[test]
    fn inside_a_blocking_task_a_call_is_polled_where_it_is() {
        let here = handle().block_on(async {
            tokio::task::spawn_blocking(|| {
                let caller = thread_name();
                let ran_on = wait(async {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    thread_name()
                });
                ran_on == caller
            })
            .await
            .unwrap()
        });
        assert!(here);
    }
}

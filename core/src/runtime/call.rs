//! A blocking call that wakes its caller once: polled on the caller's
//! thread until its first wake-up, on the runtime from then on.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::task::{Context, Poll, Wake, Waker};

use super::{block_on, handle, poll_caught, spawn};

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
    // `block_on` does: a worker of ours would wait for itself. Not inside a
    // `block_on`, where a binding's callback (a watch's first) may call back
    // in: tokio's would refuse to nest.
    if tokio::task::try_id().is_some() {
        return block_on(future);
    }
    begin(future).wait()
}

/// [`wait`]'s call, begun: polled once on this thread, on the runtime from
/// its first wake-up. Its caller waits for it ([`Begun::wait`], or in
/// slices: [`Begun::wait_for`]) or gives it up ([`Begun::stop`]); dropped, it
/// is given up. Not from inside an async task (see [`wait`]).
pub fn begin<F>(future: F) -> Begun<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    debug_assert!(tokio::task::try_id().is_none(), "zoolock: a call begun inside a task would wait for itself");
    let call = Arc::new(Call { stage: Mutex::new(Stage::Polled { woken: false }), done: Condvar::new() });
    let mut future: Pin<Box<dyn Future<Output = F::Output> + Send>> = Box::pin(future);
    let first = {
        let _runtime = handle().enter();
        future.as_mut().poll(&mut Context::from_waker(&Waker::from(call.clone())))
    };
    {
        let mut stage = call.lock();
        match first {
            Poll::Ready(output) => *stage = Stage::Done(Ok(output)),
            // Woken while this thread polled: the wake found nothing to hand over yet.
            Poll::Pending if matches!(*stage, Stage::Polled { woken: true }) => {
                *stage = Stage::Running { waker: None, stop: false };
                drop(stage);
                call.hand_over(future);
            }
            Poll::Pending => *stage = Stage::Parked(future),
        }
    }
    Begun { call }
}

/// The caller's end of a call of [`begin`]'s.
pub struct Begun<T: Send + 'static> {
    call: Arc<Call<T>>,
}

impl<T: Send + 'static> std::fmt::Debug for Begun<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Begun").finish_non_exhaustive()
    }
}

impl<T: Send + 'static> Begun<T> {
    /// Waits for the output; a panic of the call is raised here.
    pub fn wait(self) -> T {
        let mut stage = self.call.lock();
        loop {
            if let Some(output) = stage.take_output() {
                return output;
            }
            stage.assert_not_dropped();
            stage = self.call.done.wait(stage).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Waits at most `slice`: the output, or `None` while the call runs on.
    pub fn wait_for(&self, slice: std::time::Duration) -> Option<T> {
        let stage = self.call.lock();
        let ended = |stage: &mut Stage<T>| matches!(stage, Stage::Done(_) | Stage::Stopped);
        let waited = self.call.done.wait_timeout_while(stage, slice, |stage| !ended(stage));
        let mut stage = waited.unwrap_or_else(PoisonError::into_inner).0;
        stage.assert_not_dropped();
        stage.take_output()
    }

    /// Gives the call up: dropped unfinished (`None`), or its output if it
    /// finished first, which the caller undoes (a lock won just then is
    /// released). Returns once the future is dropped.
    pub fn stop(self) -> Option<T> {
        self.give_up().map(|output| output.unwrap_or_else(|payload| std::panic::resume_unwind(payload)))
    }

    /// What [`Begun::stop`] returns, with the call's panic as `Err`.
    fn give_up(&self) -> Option<std::thread::Result<T>> {
        let mut stage = self.call.lock();
        match &mut *stage {
            Stage::Parked(_) => {
                let parked = std::mem::replace(&mut *stage, Stage::Stopped);
                drop(stage);
                // Here, as a call polled here throughout would be.
                drop(parked);
                return None;
            }
            Stage::Running { waker, stop } => {
                *stop = true;
                // The task looks at `stop` at its next poll, and drops the future there.
                if let Some(waker) = waker.take() {
                    drop(stage);
                    waker.wake();
                    stage = self.call.lock();
                }
            }
            Stage::Polled { .. } | Stage::Done(_) | Stage::Stopped => {}
        }
        loop {
            match std::mem::replace(&mut *stage, Stage::Stopped) {
                Stage::Done(output) => return Some(output),
                Stage::Stopped => return None,
                waiting => {
                    *stage = waiting;
                    stage = self.call.done.wait(stage).unwrap_or_else(PoisonError::into_inner);
                }
            }
        }
    }
}

impl<T: Send + 'static> Drop for Begun<T> {
    /// Neither waited for nor stopped (its caller unwinding): given up, so
    /// that the future does not outlive its caller. An output that came
    /// first is dropped, not undone, and a panic of the call is not raised.
    fn drop(&mut self) {
        if !matches!(*self.call.lock(), Stage::Stopped) {
            drop(self.give_up());
        }
    }
}

/// A call of [`begin`]'s, shared by the waiting thread, the call's waker and
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
    /// A task on the runtime: its waker since its last poll, and whether its
    /// caller gave it up.
    Running { waker: Option<Waker>, stop: bool },
    /// Its output, or its panic.
    Done(std::thread::Result<T>),
    /// Dropped unfinished, or its output taken.
    Stopped,
}

impl<T> Stage<T> {
    /// Only the runtime going away drops a call its caller still waits for.
    fn assert_not_dropped(&self) {
        assert!(!matches!(self, Stage::Stopped), "zoolock's runtime dropped a call it was running");
    }

    /// The output, if done (a panic raised here); the stage is `Stopped` after.
    fn take_output(&mut self) -> Option<T> {
        if !matches!(self, Stage::Done(_)) {
            return None;
        }
        let Stage::Done(output) = std::mem::replace(self, Stage::Stopped) else { unreachable!() };
        Some(output.unwrap_or_else(|payload| std::panic::resume_unwind(payload)))
    }
}

impl<T: Send + 'static> Call<T> {
    fn lock(&self) -> MutexGuard<'_, Stage<T>> {
        self.stage.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Spawns `future` (the stage already `Running`). From a wake-up on the
    /// runtime's thread (a reply), the task goes to that thread's own queue:
    /// no other thread is woken for it.
    fn hand_over(self: &Arc<Self>, future: Pin<Box<dyn Future<Output = T> + Send>>) {
        spawn(Task { future: Some(future), call: self.clone() });
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
                let running = Stage::Running { waker: None, stop: false };
                let Stage::Parked(future) = std::mem::replace(&mut *stage, running) else { unreachable!() };
                drop(stage);
                self.hand_over(future);
            }
            // The task's own waker runs it; this one was left with a sub-future.
            Stage::Running { .. } | Stage::Done(_) | Stage::Stopped => {}
        }
    }
}

/// A call on the runtime: polled until done or given up by its caller.
struct Task<T: Send + 'static> {
    future: Option<Pin<Box<dyn Future<Output = T> + Send>>>,
    call: Arc<Call<T>>,
}

impl<T: Send + 'static> Future for Task<T> {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let task = &mut *self;
        let stopped = match &mut *task.call.lock() {
            Stage::Running { stop: true, .. } => true,
            Stage::Running { waker, .. } => {
                if !waker.as_ref().is_some_and(|known| known.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                false
            }
            _ => false,
        };
        if stopped {
            task.end(None);
            return Poll::Ready(());
        }
        let Some(future) = task.future.as_mut() else { return Poll::Ready(()) };
        let Poll::Ready(output) = poll_caught(future.as_mut(), cx) else { return Poll::Pending };
        task.end(Some(output));
        Poll::Ready(())
    }
}

impl<T: Send + 'static> Task<T> {
    /// Drops the future here, on the runtime, before its caller goes on (it
    /// may borrow the caller's memory), then tells the caller: `output`, or
    /// given up (`None`). A panic in the drop is the call's.
    fn end(&mut self, mut output: Option<std::thread::Result<T>>) {
        if let Some(future) = self.future.take() {
            if let Err(payload) = std::panic::catch_unwind(AssertUnwindSafe(|| drop(future))) {
                output = Some(match output {
                    Some(Err(first)) => Err(first),
                    _ => Err(payload),
                });
            }
        }
        *self.call.lock() = output.map_or(Stage::Stopped, Stage::Done);
        self.call.done.notify_all();
    }
}

impl<T: Send + 'static> Drop for Task<T> {
    /// Dropped unfinished (the runtime going away): its caller is told.
    fn drop(&mut self) {
        if self.future.is_some() {
            self.end(None);
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
        let (polled, first_poll) = std::sync::mpsc::channel();
        // Tells once the caller has polled: a reply from another thread.
        let teller = thread::spawn(move || {
            first_poll.recv().unwrap();
            tell.send(()).unwrap();
        });
        let (first, after_reply, after_timer) = wait(async move {
            let first = thread_name();
            // Told only once this poll found no reply and left its wake-up:
            // a reply sent earlier would make the first poll ready at once.
            let mut told = std::pin::pin!(told);
            poll_fn(|cx| {
                let reply = told.as_mut().poll(cx);
                if reply.is_pending() {
                    let _ = polled.send(());
                }
                reply
            })
            .await
            .unwrap();
            let after_reply = thread_name();
            tokio::task::yield_now().await;
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
                tokio::task::yield_now().await;
                panic!("boom after the hand-over");
            })
        });
        let payload = raised.expect_err("the panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom after the hand-over"));
    }

    /// A future that panics when dropped, after the hand-over: the caller gets the panic, not a wait forever.
    #[test]
    fn a_panic_dropping_the_call_on_the_runtime_is_raised_to_the_caller() {
        /// Pending once (waking itself: handed over), then ready.
        struct PanicsOnDrop(bool);
        impl Future for PanicsOnDrop {
            type Output = u8;
            fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u8> {
                if std::mem::replace(&mut self.0, true) {
                    return Poll::Ready(7);
                }
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
        impl Drop for PanicsOnDrop {
            fn drop(&mut self) {
                panic!("boom in the drop");
            }
        }
        let raised = std::panic::catch_unwind(|| wait(PanicsOnDrop(false)));
        let payload = raised.expect_err("the drop's panic reaches the caller");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"boom in the drop"));
    }

    /// Records the thread it is dropped on.
    struct DroppedOn(Arc<Mutex<Option<Option<String>>>>);

    impl Drop for DroppedOn {
        fn drop(&mut self) {
            *self.0.lock().unwrap() = Some(thread_name());
        }
    }

    /// Given up before its first wake-up: dropped by the caller, before `stop` returns.
    #[test]
    fn a_call_given_up_before_its_first_wake_up_is_dropped_by_its_caller() {
        let dropped_on = Arc::new(Mutex::new(None));
        let guard = DroppedOn(dropped_on.clone());
        let call = begin(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        assert_eq!(call.stop(), None);
        assert_eq!(dropped_on.lock().unwrap().clone(), Some(thread_name()));
    }

    /// Given up on the runtime: dropped there, unfinished, before `stop` returns.
    #[test]
    fn a_running_call_given_up_is_dropped_on_the_runtime_before_stop_returns() {
        let dropped_on = Arc::new(Mutex::new(None));
        let guard = DroppedOn(dropped_on.clone());
        let (running, on_the_runtime) = std::sync::mpsc::channel();
        let call = begin(async move {
            let _guard = guard;
            tokio::task::yield_now().await;
            running.send(()).unwrap();
            std::future::pending::<()>().await
        });
        on_the_runtime.recv().unwrap();
        assert_eq!(call.stop(), None);
        assert_eq!(dropped_on.lock().unwrap().clone(), Some(Some("zoolock-io".to_owned())));
    }

    /// Finished before it was given up: `stop` hands the output over, to be undone.
    #[test]
    fn a_call_finished_before_it_was_given_up_hands_its_output_to_stop() {
        let (finishing, finished) = std::sync::mpsc::channel();
        let call = begin(async move {
            tokio::task::yield_now().await;
            finishing.send(()).unwrap();
            7
        });
        finished.recv().unwrap();
        assert_eq!(call.stop(), Some(7));
    }

    /// Dropped unwaited after the call panicked: the drop neither raises the panic nor waits.
    #[test]
    fn a_begun_call_dropped_after_it_panicked_raises_nothing() {
        let (panicking, panicked) = std::sync::mpsc::channel();
        let call = begin(async move {
            tokio::task::yield_now().await;
            panicking.send(()).unwrap();
            panic!("boom, never waited for");
        });
        panicked.recv().unwrap();
        assert!(std::panic::catch_unwind(AssertUnwindSafe(|| drop(call))).is_ok());
    }

    /// Waited for in slices, as Python's main thread does between its looks for a signal.
    #[test]
    fn a_call_waited_for_in_slices_gives_its_output_once_done() {
        let (tell, told) = tokio::sync::oneshot::channel();
        let call = begin(async move { told.await.unwrap() });
        assert_eq!(call.wait_for(Duration::from_millis(10)), None);
        tell.send(5).unwrap();
        assert_eq!(call.wait_for(Duration::from_secs(10)), Some(5));
    }

    /// Inside a task (here a blocking-pool thread) it polls where it is called, as tokio's `block_on`.
    #[test]
    fn inside_a_blocking_task_a_call_is_polled_where_it_is() {
        let here = handle().block_on(async {
            tokio::task::spawn_blocking(|| {
                let caller = thread_name();
                let ran_on = wait(async {
                    tokio::task::yield_now().await;
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

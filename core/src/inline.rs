//! A future polled by whoever wakes it, with no task of its own: for a
//! watch a hold leaves behind, whose event is almost always our own
//! release's. A task per hold costs a spawn, and its wake-up beside the
//! release's reply makes tokio hand one of the two to another worker thread.

use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::atomic::AtomicU8;
use std::sync::atomic::Ordering::{AcqRel, Acquire, Release};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};

/// Polls `future` now and then in the thread of each wake-up, and calls
/// `then` there with its output; `None` if a poll panicked. Each poll and
/// `then` run wherever the waker is called — zookeeper-client's task,
/// for a watch — so both must only look and hand the rest to a task; a
/// panic in `then` is caught, so that it cannot end that task. `future`
/// must not use tokio's cooperative budget: polled in a task that spent
/// it, it would wake itself, and be polled again at once, until the task
/// yields (zookeeper-client's one-shot watch is `futures`' channel).
pub(crate) fn on_ready<F, T>(future: F, then: T)
where
    F: Future + Send + 'static,
    T: FnOnce(Option<F::Output>) + Send + 'static,
{
    // One allocation: the future is pinned in place inside it.
    let inline = Arc::new(Inline {
        state: AtomicU8::new(IDLE),
        work: Mutex::new(Work { future: Some(future), then: Some(then) }),
    });
    inline.wake_by_ref();
}

/// Nobody polls; one thread polls; it polls again, woken meanwhile; done.
const IDLE: u8 = 0;
const POLLING: u8 = 1;
const NOTIFIED: u8 = 2;
const DONE: u8 = 3;

/// The future and what to do with its output, until it is ready.
struct Work<F, T> {
    /// Pinned: never moved while `Some`, dropped in place once ready.
    future: Option<F>,
    then: Option<T>,
}

struct Inline<F, T> {
    /// Who polls, on one atomic: a wake-up during a poll (another thread's,
    /// or the future's own as it registers) is never lost nor run twice at once.
    state: AtomicU8,
    /// Touched only by the thread that moved `state` to `POLLING`.
    work: Mutex<Work<F, T>>,
}

impl<F, T> Wake for Inline<F, T>
where
    F: Future + Send + 'static,
    T: FnOnce(Option<F::Output>) + Send + 'static,
{
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        let mut state = self.state.load(Acquire);
        loop {
            let next = match state {
                IDLE => POLLING,
                POLLING => NOTIFIED,
                _ => return,
            };
            match self.state.compare_exchange(state, next, AcqRel, Acquire) {
                Ok(IDLE) => break,
                Ok(_) => return, // the polling thread polls again
                Err(now) => state = now,
            }
        }
        let waker = Waker::from(self.clone());
        let mut cx = Context::from_waker(&waker);
        let mut work = self.work.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        loop {
            let Some(future) = work.future.as_mut() else { return };
            // Safety: the future lives in this `Arc`, which never moves it:
            // it is only ever dropped in place (below).
            let future = unsafe { Pin::new_unchecked(future) };
            let polled = catch_unwind(AssertUnwindSafe(|| future.poll(&mut cx)));
            let output = match polled {
                Ok(Poll::Pending) => {
                    match self.state.compare_exchange(POLLING, IDLE, AcqRel, Acquire) {
                        Ok(_) => return,
                        Err(_) => {
                            // Woken while polling: poll again.
                            self.state.store(POLLING, Release);
                            continue;
                        }
                    }
                }
                Ok(Poll::Ready(output)) => Some(output),
                Err(_) => None,
            };
            self.state.store(DONE, Release);
            work.future = None;
            let then = work.then.take().expect("polled while there was work");
            drop(work);
            let _ = catch_unwind(AssertUnwindSafe(|| then(output)));
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn the_output_is_handed_over_in_the_thread_that_wakes() {
        let (sender, receiver) = tokio::sync::oneshot::channel::<u32>();
        let (done, outputs) = mpsc::channel();
        on_ready(receiver, move |output| done.send((output.map(Result::unwrap), std::thread::current().id())).unwrap());
        assert!(outputs.try_recv().is_err(), "nothing sent yet");
        let waker = std::thread::spawn(move || {
            sender.send(7).unwrap();
            std::thread::current().id()
        })
        .join()
        .unwrap();
        assert_eq!(outputs.try_recv().unwrap(), (Some(7), waker));
    }

    #[test]
    fn wakes_from_many_threads_poll_it_to_the_end_once() {
        // A future ready at its 1000th poll, woken from 8 threads at once:
        // every wake-up during a poll makes one more poll, none is lost.
        let polls = Arc::new(std::sync::atomic::AtomicU32::new(0));
        let wakers: Arc<Mutex<Option<Waker>>> = Arc::default();
        let future = {
            let (polls, wakers) = (polls.clone(), wakers.clone());
            std::future::poll_fn(move |cx| {
                *wakers.lock().unwrap() = Some(cx.waker().clone());
                match polls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) {
                    999 => Poll::Ready(()),
                    _ => Poll::Pending,
                }
            })
        };
        let (done, outputs) = mpsc::channel();
        on_ready(future, move |output| done.send(output).unwrap());
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let (wakers, polls) = (wakers.clone(), polls.clone());
                std::thread::spawn(move || {
                    while polls.load(std::sync::atomic::Ordering::SeqCst) < 1000 {
                        let waker = wakers.lock().unwrap().clone();
                        waker.inspect(Waker::wake_by_ref);
                    }
                })
            })
            .collect();
        threads.into_iter().for_each(|t| t.join().unwrap());
        assert_eq!(outputs.recv().unwrap(), Some(()));
        assert!(outputs.try_recv().is_err(), "handed over once");
        assert_eq!(polls.load(std::sync::atomic::Ordering::SeqCst), 1000, "never polled after it was ready");
    }

    #[test]
    fn a_poll_that_panics_hands_over_none() {
        let (done, outputs) = mpsc::channel();
        on_ready(async { panic!("the client's task went without a word") }, move |output: Option<()>| {
            done.send(output).unwrap()
        });
        assert_eq!(outputs.recv().unwrap(), None);
    }
}

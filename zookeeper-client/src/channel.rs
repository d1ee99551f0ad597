//! The unbounded channels that carry requests to the session's task and
//! notifications to persistent watchers. On tokio they are tokio's, which
//! keep messages in blocks of 32 and reuse them; `futures`' allocate a node
//! per message (zoolock: ZOOLOCK.md). Both keep the order of sends, a send
//! is in the channel when it returns, and a receive finds what is there.

#[cfg(not(all(feature = "tokio", not(feature = "smol"), not(feature = "async-global-executor"))))]
pub use futures::channel::mpsc::{unbounded, UnboundedReceiver, UnboundedSender};
#[cfg(all(feature = "tokio", not(feature = "smol"), not(feature = "async-global-executor")))]
pub use tokio_channel::{unbounded, UnboundedReceiver, UnboundedSender};

#[cfg(all(feature = "tokio", not(feature = "smol"), not(feature = "async-global-executor")))]
mod tokio_channel {
    use std::future::{poll_fn, Future};
    use std::pin::{pin, Pin};
    use std::task::{Context, Poll};

    use futures::stream::{FusedStream, Stream};
    use tokio::sync::mpsc;
    use tokio::task::coop::unconstrained;

    pub fn unbounded<T>() -> (UnboundedSender<T>, UnboundedReceiver<T>) {
        let (sender, receiver) = mpsc::unbounded_channel();
        (UnboundedSender(sender), UnboundedReceiver { receiver, ended: false })
    }

    pub struct UnboundedSender<T>(mpsc::UnboundedSender<T>);

    impl<T> std::fmt::Debug for UnboundedSender<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("UnboundedSender").finish_non_exhaustive()
        }
    }

    impl<T> Clone for UnboundedSender<T> {
        fn clone(&self) -> Self {
            UnboundedSender(self.0.clone())
        }
    }

    /// A send to a closed channel, with the message it gives back.
    pub struct SendError<T>(T);

    impl<T> SendError<T> {
        pub fn into_inner(self) -> T {
            self.0
        }
    }

    impl<T> UnboundedSender<T> {
        pub fn unbounded_send(&self, message: T) -> Result<(), SendError<T>> {
            self.0.send(message).map_err(|error| SendError(error.0))
        }
    }

    pub struct UnboundedReceiver<T> {
        receiver: mpsc::UnboundedReceiver<T>,
        ended: bool,
    }

    impl<T> std::fmt::Debug for UnboundedReceiver<T> {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("UnboundedReceiver").finish_non_exhaustive()
        }
    }

    impl<T> UnboundedReceiver<T> {
        /// Refuses further sends; what was sent before is still received.
        pub fn close(&mut self) {
            self.receiver.close()
        }
    }

    impl<T> Stream for UnboundedReceiver<T> {
        type Item = T;

        /// Outside tokio's cooperative budget: polled by a task that has
        /// spent it, tokio's receiver says `Pending` with messages
        /// buffered, and a caller that reads until `Pending` (zoolock's
        /// mirror) would take the channel for empty. `futures`' never does.
        fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
            let this = self.get_mut();
            let receiver = &mut this.receiver;
            let polled = pin!(unconstrained(poll_fn(|cx| receiver.poll_recv(cx)))).poll(cx);
            if let Poll::Ready(None) = polled {
                this.ended = true;
            }
            polled
        }
    }

    impl<T> FusedStream for UnboundedReceiver<T> {
        fn is_terminated(&self) -> bool {
            self.ended
        }
    }
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::pin;
    use std::sync::{Arc, Mutex};
    use std::task::{Context, Poll, Wake, Waker};

    use futures::StreamExt;

    use super::{unbounded, UnboundedReceiver};

    /// Reads the channel whenever woken, as zoolock's mirror does: it
    /// registers no task, only this waker, and relies on each send to call it.
    struct Reader(Mutex<(UnboundedReceiver<u32>, Vec<u32>)>, Mutex<Option<Waker>>);

    impl Wake for Reader {
        fn wake(self: Arc<Self>) {
            let waker = self.1.lock().unwrap().clone().unwrap();
            let Ok(mut state) = self.0.try_lock() else { return };
            let (receiver, read) = &mut *state;
            let mut cx = Context::from_waker(&waker);
            while let Poll::Ready(Some(message)) = pin!(receiver.next()).poll(&mut cx) {
                read.push(message);
            }
        }
    }

    #[test]
    fn each_send_wakes_the_registered_waker_with_its_message_already_in() {
        let (sender, receiver) = unbounded();
        let reader = Arc::new(Reader(Mutex::new((receiver, Vec::new())), Mutex::new(None)));
        let waker = Waker::from(reader.clone());
        *reader.1.lock().unwrap() = Some(waker.clone());
        waker.wake_by_ref(); // the first read registers it
        let sending = std::thread::spawn(move || {
            for i in 0..1000 {
                sender.unbounded_send(i).map_err(|_| "closed").unwrap();
            }
        });
        sending.join().unwrap();
        // No poll after the sends: every message was read in the sender's thread.
        assert_eq!(reader.0.lock().unwrap().1, (0..1000).collect::<Vec<_>>());
    }
}

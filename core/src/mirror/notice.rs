//! The mirror's wake-ups: a deletion notice a waiter awaits, or a hold
//! leaves a callback with, and the mirror's end of it.

use std::future::Future;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

/// Why a waiter on the mirror was woken.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Woken {
    /// The awaited node was deleted.
    Deleted,
    /// The mirror went stale (disconnect, expiry) or was rebuilt: look again.
    Stale,
}

/// A wake-up from the mirror: the deletion of one node, or the mirror gone
/// stale. Awaited by a waiter; a hold instead leaves a callback with it
/// ([`Deletion::then`]), so that it costs no task of its own.
pub(crate) struct Deletion(Arc<Mutex<Notice>>);

/// The mirror's end of a [`Deletion`]. Dropped unsent, it wakes the
/// waiter as [`Woken::Stale`] (the mirror is gone: look again).
pub(crate) struct Notifier(Option<Arc<Mutex<Notice>>>);

enum Notice {
    Waiting(Option<Waker>),
    Then(Box<dyn FnOnce(Woken) + Send>),
    Woken(Woken),
    Taken,
}

/// A notifier and the deletion it wakes.
pub(crate) fn notice() -> (Notifier, Deletion) {
    let notice = Arc::new(Mutex::new(Notice::Waiting(None)));
    (Notifier(Some(notice.clone())), Deletion(notice))
}

impl Notifier {
    /// Wakes the waiter, or calls its callback here: the mirror calls this
    /// under its state's lock, mostly in zookeeper-client's task, so a
    /// callback must only look and hand off.
    pub fn send(mut self, woken: Woken) {
        let Some(notice) = self.0.take() else { return };
        let mut slot = notice.lock().unwrap();
        match std::mem::replace(&mut *slot, Notice::Woken(woken)) {
            Notice::Waiting(waker) => {
                drop(slot);
                if let Some(waker) = waker {
                    waker.wake();
                }
            }
            Notice::Then(then) => {
                *slot = Notice::Taken;
                drop(slot);
                then(woken);
            }
            already => *slot = already,
        }
    }
}

impl Drop for Notifier {
    fn drop(&mut self) {
        if self.0.is_some() {
            Notifier(self.0.take()).send(Woken::Stale);
        }
    }
}

impl Deletion {
    /// Calls `then` with the wake-up instead of waiting for it: now if it
    /// has come, else wherever the mirror sends it (under the mirror's
    /// lock, mostly in zookeeper-client's task: `then` must only look and
    /// hand off).
    pub fn then(self, then: impl FnOnce(Woken) + Send + 'static) {
        let mut slot = self.0.lock().unwrap();
        match std::mem::replace(&mut *slot, Notice::Taken) {
            Notice::Woken(woken) => {
                drop(slot);
                then(woken);
            }
            _ => *slot = Notice::Then(Box::new(then)),
        }
    }

    /// A wake-up that has already come.
    pub fn ready(woken: Woken) -> Deletion {
        Deletion(Arc::new(Mutex::new(Notice::Woken(woken))))
    }
}

impl Future for Deletion {
    type Output = Woken;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Woken> {
        let mut slot = self.0.lock().unwrap();
        match &mut *slot {
            Notice::Woken(woken) => Poll::Ready(*woken),
            Notice::Waiting(waker) => {
                if !waker.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
                    *waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
            // `then` consumed the deletion: it cannot be polled after.
            Notice::Then(_) | Notice::Taken => Poll::Pending,
        }
    }
}

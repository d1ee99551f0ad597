//! Delivers state changes and watch calls to user callbacks on threads of
//! their own, so a slow or blocking callback never stalls I/O or the
//! watcher that noticed.

use std::sync::mpsc::{channel, Sender};
use std::sync::{Arc, Mutex, OnceLock};

type Job = Box<dyn FnOnce() + Send>;

fn dispatcher() -> &'static Mutex<Sender<Job>> {
    static DISPATCHER: OnceLock<Mutex<Sender<Job>>> = OnceLock::new();
    DISPATCHER.get_or_init(|| {
        let (sender, receiver) = channel::<Job>();
        std::thread::Builder::new()
            .name(EVENT_THREAD.into())
            .spawn(move || {
                for job in receiver {
                    // A panicking callback must not end delivery for everyone else.
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .expect("zoolock cannot start its event thread");
        Mutex::new(sender)
    })
}

const EVENT_THREAD: &str = "zoolock-events";

/// One session's watch callbacks, on a thread of that session's own
/// ("zoolock-watches"), started at the first call and ended once the
/// session and its watches are gone: a callback that blocks delays the
/// later calls of its own session's watches only, as in kazoo, where each
/// client's handler has its own callback thread. Never waited for by a
/// registration (see `watchers.rs`), so a callback may block on whatever
/// the registering thread holds.
#[derive(Default)]
pub(crate) struct WatchThread(Mutex<Option<Sender<Job>>>);

const WATCH_THREAD: &str = "zoolock-watches";

impl WatchThread {
    /// Runs `job` on the session's watch thread, after every call queued before it.
    pub fn deliver(&self, job: impl FnOnce() + Send + 'static) {
        let mut sender = self.0.lock().unwrap();
        let mut job: Job = Box::new(job);
        if let Some(running) = sender.as_ref() {
            match running.send(job) {
                Ok(()) => return,
                // Its thread is gone: start another.
                Err(unsent) => job = unsent.0,
            }
        }
        let (jobs, queue) = channel::<Job>();
        let spawned = std::thread::Builder::new().name(WATCH_THREAD.into()).spawn(move || {
            for job in queue {
                // A panicking callback must not end delivery for the session's other watches.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
            }
        });
        match spawned {
            Ok(_) => {
                let _ = jobs.send(job);
                *sender = Some(jobs);
            }
            Err(err) => tracing::error!(%err, "zoolock cannot start a watch thread; a watch call is lost"),
        }
    }
}

/// Callbacks registered for one source of events, in registration order.
/// The list is made by the first `add`: most handles, queued waiters above
/// all, never get a listener (issue 26: bytes per waiter).
pub struct Listeners<T> {
    next_id: Mutex<u64>,
    callbacks: OnceLock<Arc<Mutex<Vec<(u64, Callback<T>)>>>>,
}

pub type Callback<T> = Arc<dyn Fn(T) + Send + Sync>;

impl<T: Clone + Send + 'static> Listeners<T> {
    pub fn new() -> Self {
        Listeners { next_id: Mutex::new(0), callbacks: OnceLock::new() }
    }

    pub fn add(&self, callback: Callback<T>) -> u64 {
        let mut next = self.next_id.lock().unwrap();
        *next += 1;
        self.callbacks.get_or_init(Arc::default).lock().unwrap().push((*next, callback));
        *next
    }

    pub fn remove(&self, id: u64) -> bool {
        let Some(callbacks) = self.callbacks.get() else { return false };
        let mut callbacks = callbacks.lock().unwrap();
        let before = callbacks.len();
        callbacks.retain(|(i, _)| *i != id);
        callbacks.len() != before
    }

    /// Queues `event` for every callback registered now; events keep their order.
    pub fn emit(&self, event: T) {
        let Some(callbacks) = self.callbacks.get() else { return };
        if callbacks.lock().unwrap().is_empty() {
            return;
        }
        let callbacks = callbacks.clone();
        let job: Job = Box::new(move || {
            let current: Vec<Callback<T>> = callbacks.lock().unwrap().iter().map(|(_, c)| c.clone()).collect();
            for callback in current {
                callback(event.clone());
            }
        });
        let _ = dispatcher().lock().unwrap().send(job);
    }
}

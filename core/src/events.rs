//! Delivers state changes to user callbacks on a thread of their own, so a
//! slow or blocking callback never stalls I/O or the watcher that noticed.

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

/// Runs `job` on the event thread, after every callback queued before it.
pub(crate) fn deliver(job: impl FnOnce() + Send + 'static) {
    let _ = dispatcher().lock().unwrap().send(Box::new(job));
}

/// Whether the caller is the event thread itself (a callback): it must not
/// wait there for a job it queues, which would run only after it returns.
pub(crate) fn on_event_thread() -> bool {
    std::thread::current().name() == Some(EVENT_THREAD)
}

const EVENT_THREAD: &str = "zoolock-events";

/// Callbacks registered for one source of events, in registration order.
pub struct Listeners<T> {
    next_id: Mutex<u64>,
    callbacks: Arc<Mutex<Vec<(u64, Callback<T>)>>>,
}

pub type Callback<T> = Arc<dyn Fn(T) + Send + Sync>;

impl<T: Clone + Send + 'static> Listeners<T> {
    pub fn new() -> Self {
        Listeners { next_id: Mutex::new(0), callbacks: Arc::new(Mutex::new(Vec::new())) }
    }

    pub fn add(&self, callback: Callback<T>) -> u64 {
        let mut next = self.next_id.lock().unwrap();
        *next += 1;
        self.callbacks.lock().unwrap().push((*next, callback));
        *next
    }

    pub fn remove(&self, id: u64) -> bool {
        let mut callbacks = self.callbacks.lock().unwrap();
        let before = callbacks.len();
        callbacks.retain(|(i, _)| *i != id);
        callbacks.len() != before
    }

    /// Queues `event` for every callback registered now; events keep their order.
    pub fn emit(&self, event: T) {
        if self.callbacks.lock().unwrap().is_empty() {
            return;
        }
        let callbacks = self.callbacks.clone();
        let job: Job = Box::new(move || {
            let current: Vec<Callback<T>> = callbacks.lock().unwrap().iter().map(|(_, c)| c.clone()).collect();
            for callback in current {
                callback(event.clone());
            }
        });
        let _ = dispatcher().lock().unwrap().send(job);
    }
}

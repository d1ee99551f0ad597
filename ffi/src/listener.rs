//! One state callback per handle. Once `clear` returns, the callback is not
//! running and will not be called again, so the caller may free its user
//! data; a callback that clears its own slot does not wait for itself.

use std::ffi::c_void;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::ThreadId;

use crate::args::UserData;
use crate::dispatch;

/// Called with a state code (`ZL_SESSION_*` or `ZL_LOCK_*`) on zoolock's
/// callback thread, in the order of the changes, until `zl_shutdown`.
/// Callbacks run one at a time, but that thread ends when idle and a later
/// one may be another: a runtime that must register threads should do so
/// per call. The entry
/// points spell the type out, so that cbindgen writes it as a nullable
/// function pointer.
pub type ZlStateCallback = extern "C" fn(user_data: *mut c_void, state: i32);

#[derive(Default)]
struct Slot {
    target: Option<(ZlStateCallback, UserData)>,
    calling: Option<ThreadId>,
}

/// The callback of one handle and the core listener id that feeds it.
#[derive(Default)]
pub struct Listener {
    shared: Arc<(Mutex<Slot>, Condvar)>,
    registered: Mutex<Option<u64>>,
}

impl Listener {
    /// Replaces the callback; `register` subscribes the returned sink to the
    /// core object and gives back its listener id, `unregister` drops one.
    pub fn set(
        &self,
        callback: Option<ZlStateCallback>,
        user_data: *mut c_void,
        register: impl FnOnce(Box<dyn Fn(i32) + Send + Sync>) -> u64,
        unregister: impl FnOnce(u64),
    ) {
        let mut registered = self.registered.lock().unwrap();
        if let Some(id) = registered.take() {
            unregister(id);
        }
        self.clear();
        if let Some(callback) = callback {
            self.shared.0.lock().unwrap().target = Some((callback, UserData(user_data)));
            let shared = self.shared.clone();
            let deliver = move |state| {
                let shared = shared.clone();
                // After `zl_shutdown` the runtime the callback calls into may be gone.
                dispatch::post_event(Box::new(move || call(&shared, state)));
            };
            *registered = Some(register(Box::new(deliver)));
        }
    }

    /// Stops calls to the current callback and waits for one in flight.
    pub fn clear(&self) {
        let (slot, done) = &*self.shared;
        let mut slot = slot.lock().unwrap();
        slot.target = None;
        let me = std::thread::current().id();
        while slot.calling.is_some_and(|t| t != me) {
            slot = done.wait(slot).unwrap();
        }
    }

    /// The core listener id, for removal when the handle is freed.
    pub fn take_registration(&self) -> Option<u64> {
        self.registered.lock().unwrap().take()
    }
}

fn call(shared: &(Mutex<Slot>, Condvar), state: i32) {
    let (slot, done) = shared;
    let target = {
        let mut slot = slot.lock().unwrap();
        let Some(target) = slot.target else { return };
        slot.calling = Some(std::thread::current().id());
        target
    };
    // A Rust panic cannot come out of a C function; the callback is not ours to guard further.
    (target.0)(target.1.get(), state);
    slot.lock().unwrap().calling = None;
    done.notify_all();
}

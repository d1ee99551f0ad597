//! `zl_shutdown` while callbacks are queued: they still run one at a time,
//! in order, on one thread. A binary of its own: `zl_shutdown` is process-wide.

use std::ffi::c_void;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::Mutex;
use std::thread::ThreadId;
use std::time::Duration;

use zoolock_ffi::*;

/// Each delivered event: its message, the thread it ran on, and whether it
/// overlapped the first one.
static SEEN: Mutex<Vec<(String, ThreadId, bool)>> = Mutex::new(Vec::new());
static DELIVERED: Mutex<Option<Sender<String>>> = Mutex::new(None);
static IN_FIRST: Mutex<bool> = Mutex::new(false);

extern "C" fn record(_: *mut c_void, _: i32, _: *const u8, _: u32, message: *const u8, len: u32) {
    let message = String::from_utf8_lossy(unsafe { std::slice::from_raw_parts(message, len as usize) }).into_owned();
    if message != "first" {
        let overlapped = *IN_FIRST.lock().unwrap();
        SEEN.lock().unwrap().push((message.clone(), std::thread::current().id(), overlapped));
        let _ = DELIVERED.lock().unwrap().as_ref().unwrap().send(message);
        return;
    }
    *IN_FIRST.lock().unwrap() = true;
    SEEN.lock().unwrap().push((message, std::thread::current().id(), false));
    // From a callback, with "second" queued behind this one: shut down, then
    // post "third" from another thread.
    assert_eq!(zl_shutdown(), ZL_OK);
    std::thread::spawn(|| log::info!(target: "zoolock::shutdown_test", "third")).join().unwrap();
    // The window in which "third" must not run: this callback is still running.
    std::thread::sleep(Duration::from_millis(300));
    *IN_FIRST.lock().unwrap() = false;
}

#[test]
fn callbacks_after_a_shutdown_keep_their_order_on_one_thread() {
    let (sender, delivered): (Sender<String>, Receiver<String>) = channel();
    *DELIVERED.lock().unwrap() = Some(sender);
    assert_eq!(unsafe { zl_set_log_callback(ZL_LOG_INFO, Some(record), std::ptr::null_mut()) }, ZL_OK);
    log::info!(target: "zoolock::shutdown_test", "first");
    log::info!(target: "zoolock::shutdown_test", "second");
    let wait = Duration::from_secs(30);
    let got: Vec<String> = (0..2).map(|_| delivered.recv_timeout(wait).unwrap()).collect();
    assert_eq!(got, ["second", "third"], "delivered out of order");
    let seen = SEEN.lock().unwrap();
    assert!(seen.iter().all(|(_, _, overlapped)| !overlapped), "a callback ran beside another: {seen:?}");
    assert!(seen.iter().all(|(_, thread, _)| *thread == seen[0].1), "callbacks on two threads: {seen:?}");
}

//! `zl_shutdown` returns only once the calls it cancelled have called back,
//! and state callbacks are not called after it: a managed runtime tears
//! itself down right after its exit hook, and a callback after that (on a
//! thread the runtime has not met) crashes the process. A binary of its
//! own: `zl_shutdown` is process-wide.

use std::ffi::c_void;
use std::ptr::{null, null_mut};
use std::sync::atomic::{AtomicUsize, Ordering};

use zoolock::{ErrorKind, Kind, Scheme};
use zoolock_ffi::*;

/// Connects and acquires of each.
const CALLS: usize = 16;

static CANCELLED: AtomicUsize = AtomicUsize::new(0);
static STATES: AtomicUsize = AtomicUsize::new(0);
static LATER: AtomicUsize = AtomicUsize::new(0);

extern "C" fn connected(_: *mut c_void, status: i32, session: *mut ZlSession, _: *const u8, _: u32) {
    unsafe { zl_session_free(session) };
    if status == ErrorKind::Cancelled.code() {
        CANCELLED.fetch_add(1, Ordering::SeqCst);
    }
}

extern "C" fn acquired(_: *mut c_void, status: i32, _: u8, _: *const u8, _: u32) {
    if status == ErrorKind::Cancelled.code() {
        CANCELLED.fetch_add(1, Ordering::SeqCst);
    }
}

extern "C" fn state_changed(_: *mut c_void, _: i32) {
    STATES.fetch_add(1, Ordering::SeqCst);
}

extern "C" fn acquired_later(_: *mut c_void, status: i32, _: u8, _: *const u8, _: u32) {
    assert_eq!(status, ZL_OK);
    LATER.fetch_add(1, Ordering::SeqCst);
}

/// A holder of a lock at `path` on `session`.
fn holder(session: *const ZlSession, path: &str) -> *mut ZlHolder {
    let (kind, scheme) = (Kind::Mutex.code(), Scheme::Kazoo.code());
    let mut holder = null_mut();
    let status =
        unsafe { zl_lock_new(session, path.as_ptr(), path.len() as u32, kind, scheme, null(), 0, 0, &mut holder) };
    assert_eq!(status, ZL_OK);
    holder
}

#[test]
fn a_shutdown_returns_after_the_calls_it_cancelled_have_called_back() {
    // Connects to a server that accepts (the kernel does) but never speaks ZooKeeper.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let connect = silent.local_addr().unwrap().to_string();
    let mut options = std::ptr::null_mut();
    assert_eq!(unsafe { zl_session_options_new(connect.as_ptr(), connect.len() as u32, &mut options) }, ZL_OK);
    assert_eq!(unsafe { zl_session_options_set_connect_timeout(options, 600_000) }, ZL_OK);
    for _ in 0..CALLS {
        assert_eq!(unsafe { zl_session_connect_async(options, null(), connected, null_mut()) }, ZL_OK);
    }
    unsafe { zl_session_options_free(options) };
    // Acquires behind a holder: a cancelled one ends after a round trip (its node's delete).
    let server = zk_harness::shared().connect_string();
    let mut session = null_mut();
    assert_eq!(
        unsafe { zl_session_connect(server.as_ptr(), server.len() as u32, 30_000, 30_000, &mut session) },
        ZL_OK
    );
    let path = format!("/zoolock-tests/shutdown-{}", std::process::id());
    let (owner, mut acquired_now) = (holder(session, &path), 0);
    assert_eq!(unsafe { zl_holder_acquire(owner, -1, -1, 0, null(), &mut acquired_now) }, ZL_OK);
    assert_eq!(acquired_now, 1);
    assert_eq!(unsafe { zl_holder_set_listener(owner, Some(state_changed), null_mut()) }, ZL_OK);
    let waiters: Vec<_> = (0..CALLS).map(|_| holder(session, &path)).collect();
    for &waiter in &waiters {
        assert_eq!(unsafe { zl_holder_acquire_async(waiter, -1, -1, 0, null(), acquired, null_mut()) }, ZL_OK);
    }
    assert_eq!(CANCELLED.load(Ordering::SeqCst), 0, "nothing answered, nothing ended");
    assert_eq!(zl_shutdown(), ZL_OK);
    let ended = CANCELLED.load(Ordering::SeqCst);
    assert_eq!(ended, 2 * CALLS, "callbacks still to come when zl_shutdown returned");
    // After it, a state change is not told; a call still completes (after
    // the change's callback, had there been one: callbacks keep their order).
    let states = STATES.load(Ordering::SeqCst);
    let mut released = 0;
    assert_eq!(unsafe { zl_holder_release(owner, 0, &mut released) }, ZL_OK);
    assert_eq!(released, 1);
    let later = holder(session, &format!("{path}-later"));
    assert_eq!(unsafe { zl_holder_acquire_async(later, -1, -1, 0, null(), acquired_later, null_mut()) }, ZL_OK);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while LATER.load(Ordering::SeqCst) == 0 {
        assert!(std::time::Instant::now() < deadline, "an acquire after zl_shutdown never called back");
        std::thread::yield_now();
    }
    assert_eq!(STATES.load(Ordering::SeqCst), states, "a state callback after zl_shutdown");
    unsafe { zl_holder_free(later) };
    for waiter in waiters {
        unsafe { zl_holder_free(waiter) };
    }
    unsafe { zl_holder_free(owner) };
    unsafe { zl_session_free(session) };
}

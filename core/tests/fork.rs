//! A process forked after zoolock started cannot use it — the I/O threads
//! stayed in the parent — and is told so at once instead of hanging.

mod common;

use std::time::{Duration, Instant};

use common::*;
use zoolock::{Acquire, Error, Lock, Session, SessionOptions};

#[test]
fn a_forked_child_is_refused_at_once_and_the_parent_goes_on() {
    let connect = shared_server();
    let options = SessionOptions::new(&connect).session_timeout(SESSION_TIMEOUT);
    let parent = Session::connect_blocking(options.clone()).unwrap();
    let lock = Lock::mutex(&parent, &unique_path("fork")).unwrap();
    let parent_pid = std::process::id();

    // Safety: the child only makes zoolock calls that fail before any I/O, then _exit()s.
    let child = unsafe { libc::fork() };
    if child == 0 {
        let started = Instant::now();
        let forked = Err(Error::Forked { parent: parent_pid });
        let refused = lock.acquire_blocking(Acquire::no_wait()) == forked
            && Session::connect_blocking(options).err() == forked.clone().err()
            && Lock::mutex(&parent, "/x").err() == forked.err();
        let quick = started.elapsed() < Duration::from_secs(1);
        unsafe { libc::_exit(if refused && quick { 0 } else { 1 }) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child was not refused at once: {status}");
    assert!(lock.acquire_blocking(Acquire::timeout(Duration::from_secs(10))).unwrap(), "the parent still works");
}

/// A session on the caller's runtime (whose threads stay in the parent too)
/// is refused in a forked child as well, even if zoolock's own runtime never
/// started in the parent.
#[test]
fn a_forked_child_is_refused_a_session_on_the_callers_runtime() {
    let connect = shared_server();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let parent = runtime.block_on(session(&connect));
    let lock = Lock::mutex(&parent, &unique_path("fork-caller")).unwrap();
    let parent_pid = std::process::id();

    // Safety: the child only makes zoolock calls that fail before any I/O, then _exit()s.
    let child = unsafe { libc::fork() };
    if child == 0 {
        let started = Instant::now();
        let refused =
            matches!(lock.acquire_blocking(Acquire::no_wait()), Err(Error::Forked { parent }) if parent == parent_pid);
        let quick = started.elapsed() < Duration::from_secs(1);
        unsafe { libc::_exit(if refused && quick { 0 } else { 1 }) };
    }
    let mut status = 0;
    assert_eq!(unsafe { libc::waitpid(child, &mut status, 0) }, child);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "the child was not refused at once: {status}");
    runtime.block_on(async {
        assert!(lock.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap(), "the parent still works");
        parent.close().await;
    });
}

//! An async caller on a multi-thread tokio runtime gets its session's
//! connection on that runtime (no crossing to zoolock's threads per
//! request); a current_thread caller keeps zoolock's runtime; and a caller's
//! runtime that shuts down under a live session fails the session's calls
//! with a typed error instead of leaving them waiting on dropped tasks.

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::*;
use tokio::runtime::{Builder, Runtime};
use zoolock::{Acquire, Error, Lock, SessionState};

fn multi_thread() -> Runtime {
    Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap()
}

/// The session's connection and supervision are tasks of the caller's
/// runtime, and locks work there, contended included.
#[test]
fn a_multi_thread_caller_runs_the_session_on_its_own_runtime() {
    let connect = shared_server();
    let path = unique_path("caller-mt");
    let runtime = multi_thread();
    let before = runtime.metrics().num_alive_tasks();
    let session = runtime.block_on(session(&connect));
    assert!(
        runtime.metrics().num_alive_tasks() >= before + 2,
        "the connection and its supervisor run on the caller's runtime: {} tasks",
        runtime.metrics().num_alive_tasks()
    );
    runtime.block_on(async {
        let first = Lock::mutex(&session, &path).unwrap();
        let second = Lock::mutex(&session, &path).unwrap();
        assert!(first.acquire(Acquire::default()).await.unwrap());
        let waiter = tokio::spawn(async move { second.acquire(Acquire::default()).await.map(|held| (held, second)) });
        assert!(first.release().await.unwrap());
        let (held, second) = tokio::time::timeout(Duration::from_secs(10), waiter).await.unwrap().unwrap().unwrap();
        assert!(held && second.is_acquired());
        assert!(second.release().await.unwrap());
        session.close().await;
    });
}

/// A multi-thread runtime built without tokio's I/O driver cannot hold the
/// session's socket (zookeeper-client's is tokio's): the session runs on
/// zoolock's runtime instead, and works.
#[test]
fn a_multi_thread_caller_without_an_io_driver_keeps_zoolocks_runtime() {
    let connect = shared_server();
    let path = unique_path("caller-no-io");
    let runtime = Builder::new_multi_thread().worker_threads(2).enable_time().build().unwrap();
    let session = runtime.block_on(session(&connect));
    runtime.block_on(async {
        let lock = Lock::mutex(&session, &path).unwrap();
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        assert!(lock.release().await.unwrap());
    });
    drop(runtime);
    // On zoolock's runtime: it outlives the caller's.
    assert_eq!(session.state(), SessionState::Connected);
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire_blocking(Acquire::default()).unwrap());
    assert!(lock.release_blocking().unwrap());
    session.close_blocking();
}

/// A current_thread runtime runs its tasks only inside its own `block_on`:
/// the session stays on zoolock's runtime, so it still works once that
/// runtime is gone, from a thread without any.
#[test]
fn a_current_thread_caller_keeps_zoolocks_runtime() {
    let connect = shared_server();
    let path = unique_path("caller-ct");
    let runtime = Builder::new_current_thread().enable_all().build().unwrap();
    let (session, lock) = runtime.block_on(async {
        let session = session(&connect).await;
        let first = Lock::mutex(&session, &path).unwrap();
        let second = Lock::mutex(&session, &path).unwrap();
        assert!(first.acquire(Acquire::default()).await.unwrap());
        let waiter = tokio::spawn(async move { second.acquire(Acquire::default()).await.map(|held| (held, second)) });
        assert!(first.release().await.unwrap());
        let (held, second) = tokio::time::timeout(Duration::from_secs(10), waiter).await.unwrap().unwrap().unwrap();
        assert!(held);
        assert!(second.release().await.unwrap());
        (session, first)
    });
    drop(runtime);
    assert_eq!(session.state(), SessionState::Connected);
    assert!(lock.acquire_blocking(Acquire::timeout(Duration::from_secs(10))).unwrap());
    assert!(lock.release_blocking().unwrap());
    session.close_blocking();
}

/// The caller's runtime shuts down while one handle holds and another of
/// the same session waits (on zoolock's runtime, through the blocking API):
/// the waiter fails with `RuntimeGone` at once, later calls too, and the
/// holder's node goes with the session.
#[test]
fn a_callers_runtime_shut_down_under_the_session_fails_its_calls() {
    let connect = shared_server();
    let path = unique_path("caller-gone");
    let runtime = multi_thread();
    let (session, holder) = runtime.block_on(async {
        let session = session(&connect).await;
        let holder = Lock::mutex(&session, &path).unwrap();
        assert!(holder.acquire(Acquire::default()).await.unwrap());
        (session, holder)
    });
    let waiter = Lock::mutex(&session, &path).unwrap();
    let (queued, queued_seen) = mpsc::channel();
    let (done, outcome) = mpsc::channel();
    let waiting = std::thread::spawn(move || {
        let _ = queued.send(());
        let _ = done.send(waiter.acquire_blocking(Acquire::default()));
        waiter
    });
    queued_seen.recv().unwrap();
    let observer = tokio::runtime::Runtime::new().unwrap();
    observer.block_on(async {
        let raw = raw(&connect).await;
        until_children(&raw, &path, "the waiter's node", |c| c.len() == 2).await;
    });

    drop(runtime);

    let outcome = outcome.recv_timeout(Duration::from_secs(10)).expect("the waiter hangs after its runtime is gone");
    assert_eq!(outcome, Err(Error::RuntimeGone));
    let waiter = waiting.join().unwrap();
    assert_eq!(session.state(), SessionState::Closed);
    assert_eq!(waiter.acquire_blocking(Acquire::no_wait()), Err(Error::RuntimeGone));
    assert_eq!(Lock::mutex(&session, &path).err(), Some(Error::RuntimeGone));
    assert!(!holder.is_acquired(), "the hold ended with its session");
    session.close_blocking();
    observer.block_on(async {
        let raw = raw(&connect).await;
        // The dropped connection's session times out (SESSION_TIMEOUT) and takes both nodes.
        until_children(&raw, &path, "the session's nodes gone", |c| c.is_empty()).await;
    });
}

//! The hold guard ([`zoolock::Hold`]): released when dropped, from any
//! thread, runtime or not, and only its own term. These tests import no
//! `Holder` trait: a handle's methods are its own.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Acquire, Error, Holder, Kind, Lock, LockConfig, LockState, Semaphore, Session, SessionOptions};

/// Waits until `lock`, on another session, can be taken: the first handle let go.
async fn taken_by(lock: &Lock) {
    let acquired = lock.acquire(Acquire::timeout(Duration::from_secs(20))).await.unwrap();
    assert!(acquired, "the dropped hold was never released");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hold_dropped_releases_its_lock() {
    let connect = shared_server();
    let (ours, theirs) = (session(&connect).await, session(&connect).await);
    let raw = raw(&connect).await;
    let path = unique_path("guard-drop");
    let lock = Lock::mutex(&ours, &path).unwrap();
    let hold = lock.hold(Acquire::default()).await.unwrap().expect("uncontended");
    assert_eq!(hold.state(), LockState::Held);
    assert_eq!(Some(hold.fencing_token()), lock.fencing_token());
    assert_eq!(Some(hold.node().to_owned()), lock.node());
    let other = Lock::mutex(&theirs, &path).unwrap();
    assert_eq!(other.hold(Acquire::no_wait()).await.unwrap().map(|h| h.fencing_token()), None);

    drop(hold);
    taken_by(&other).await;
    assert!(!lock.is_acquired());
    assert_eq!(queued(&raw, &path, 1).await.len(), 1, "the dropped hold's node is gone, the new holder's is there");
}

/// zookeeper-client's `LockClient` spawns its release with `tokio::spawn`
/// on drop, which panics on a thread without a runtime; a `Hold` releases
/// on its session's own runtime.
#[test]
fn a_hold_dropped_on_a_thread_without_a_runtime_releases_and_does_not_panic() {
    let connect = shared_server();
    let options = || SessionOptions::new(&connect).session_timeout(SESSION_TIMEOUT);
    let (ours, theirs) = (Session::connect_blocking(options()).unwrap(), Session::connect_blocking(options()).unwrap());
    let path = unique_path("guard-no-runtime");
    let lock = Lock::mutex(&ours, &path).unwrap();
    let hold = lock.hold_blocking(Acquire::default()).unwrap().expect("uncontended");
    std::thread::spawn(move || drop(hold)).join().expect("dropping a hold outside a runtime panicked");
    let other = Lock::mutex(&theirs, &path).unwrap();
    assert!(other.acquire_blocking(Acquire::timeout(Duration::from_secs(20))).unwrap());
    other.release_blocking().unwrap();
    ours.close_blocking();
    theirs.close_blocking();
}

/// The blocking twins on a `dyn Holder`, a wait behind another holder
/// included: the call moves to zoolock's runtime at its first wake-up and
/// takes a handle of its own along.
#[test]
fn a_dyn_holder_waits_blocking_behind_another_and_holds() {
    let connect = shared_server();
    let options = || SessionOptions::new(&connect).session_timeout(SESSION_TIMEOUT);
    let (ours, theirs) = (Session::connect_blocking(options()).unwrap(), Session::connect_blocking(options()).unwrap());
    let path = unique_path("guard-dyn");
    let first: Box<dyn Holder> = Box::new(Lock::mutex(&ours, &path).unwrap());
    let second: Box<dyn Holder> = Box::new(Lock::mutex(&theirs, &path).unwrap());
    assert!(first.acquire_blocking(Acquire::default()).unwrap());
    let waiter = std::thread::spawn(move || {
        let hold = second.hold_blocking(Acquire::timeout(Duration::from_secs(20))).unwrap();
        (hold.map(|hold| hold.fencing_token()), second)
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while first.queue_blocking().unwrap().len() < 2 {
        assert!(std::time::Instant::now() < deadline, "the second never queued");
    }
    let first_token = first.fencing_token().unwrap();
    assert!(first.release_blocking().unwrap());
    let (token, _second) = waiter.join().unwrap();
    assert!(token.unwrap() > first_token, "the waiter held after the first");
    ours.close_blocking();
    theirs.close_blocking();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_hold_speaks_for_its_own_term_only() {
    let session = session(&shared_server()).await;
    let path = unique_path("guard-term");
    let lock = Lock::mutex(&session, &path).unwrap();
    let first = lock.hold(Acquire::default()).await.unwrap().expect("uncontended");
    assert!(lock.release().await.unwrap());
    assert_eq!(first.state(), LockState::Released);
    let second = lock.hold(Acquire::default()).await.unwrap().expect("uncontended");
    assert_ne!(first.fencing_token(), second.fencing_token());

    // The first hold is over: it neither fences nor releases the second.
    assert!(matches!(first.fenced(), Err(Error::NotHeld { .. })));
    assert_eq!(first.state(), LockState::Released);
    assert!(!first.release().await.unwrap());
    assert_eq!(second.state(), LockState::Held);
    assert_eq!(lock.fencing_token(), Some(second.fencing_token()));
    second.fenced().unwrap().commit().await.expect("the current hold fences");
    assert!(second.release().await.unwrap());
    assert!(!lock.is_acquired());
}

#[tokio::test(flavor = "multi_thread")]
async fn each_hold_of_a_reentrant_lock_counts_one_acquire() {
    let session = session(&shared_server()).await;
    let path = unique_path("guard-reentrant");
    let config = LockConfig { reentrant: true, ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
    let outer = lock.hold(Acquire::default()).await.unwrap().expect("uncontended");
    let inner = lock.hold(Acquire::default()).await.unwrap().expect("reentered");
    assert_eq!(outer.fencing_token(), inner.fencing_token());
    // What a drop runs, awaited here: one count down, the hold stays.
    assert!(inner.release().await.unwrap());
    assert_eq!(outer.state(), LockState::Held);
    assert!(lock.is_acquired());
    assert!(outer.release().await.unwrap());
    assert!(!lock.is_acquired());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_semaphore_hold_gives_its_lease_back_when_dropped() {
    let connect = shared_server();
    let (ours, theirs) = (session(&connect).await, session(&connect).await);
    let path = unique_path("guard-semaphore");
    let semaphore = Semaphore::new(&ours, &path, "ours", 1).unwrap();
    let hold = semaphore.hold(Acquire::default()).await.unwrap().expect("a free lease");
    let other = Semaphore::new(&theirs, &path, "theirs", 1).unwrap();
    assert!(other.hold(Acquire::no_wait()).await.unwrap().is_none());
    drop(hold);
    assert!(other.acquire(Acquire::timeout(Duration::from_secs(20))).await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_mutex_takes_its_identifier_in_one_call() {
    let session = session(&shared_server()).await;
    let path = unique_path("guard-identifier");
    let lock = Lock::mutex_with_identifier(&session, &path, "worker-1").unwrap();
    let _hold = lock.hold(Acquire::default()).await.unwrap().expect("uncontended");
    assert_eq!(lock.queue().await.unwrap(), vec!["worker-1".to_owned()]);
}

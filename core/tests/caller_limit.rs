//! An acquire keeps its caller's limit while the server is away (issue 35):
//! a timed acquire returns at its timeout, a single try (zero timeout) at
//! once with `ConnectionLoss`, a release returns at once, and what they
//! queued or held is removed once the session is back: no node is left.

mod common;

use std::time::{Duration, Instant};

use common::*;
use zk_harness::{Ensemble, Options};
use zoolock::{Acquire, Error, Lock, Session, SessionOptions};

#[tokio::test(flavor = "multi_thread")]
async fn acquires_keep_their_limit_during_an_outage_and_leave_no_node() {
    // Its own server, stopped and started again (as faults.rs's are).
    let ensemble: &'static Ensemble = Box::leak(Box::new(Ensemble::start(1, Options::default()).unwrap()));
    let connect = ensemble.connect_string();
    let options = SessionOptions::new(connect.clone()).session_timeout(Duration::from_secs(20));
    let session = Session::connect(options).await.unwrap();
    let path = unique_path("caller-limit");
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    lock.release().await.unwrap();
    let held_path = unique_path("caller-limit-held");
    let held = Lock::mutex(&session, &held_path).unwrap();
    assert!(held.acquire(Acquire::default()).await.unwrap());

    inject(move || ensemble.stop(0).unwrap()).await;
    let started = Instant::now();
    assert!(!lock.acquire(Acquire::timeout(Duration::from_secs(1))).await.unwrap());
    let waited = started.elapsed();
    // It waited out a 2 s cleanup of what it queued on top (3 s in all).
    assert!(waited < Duration::from_millis(1900), "a 1 s acquire returned after {waited:?}");

    let started = Instant::now();
    let err = lock.acquire(Acquire::timeout(Duration::ZERO)).await.unwrap_err();
    assert!(matches!(err, Error::ConnectionLoss(_)), "{err:?}");
    let waited = started.elapsed();
    // It waited for a connection until the session timeout (10.7 s with 10 s).
    assert!(waited < Duration::from_secs(1), "a single try returned after {waited:?}");

    // A release during the outage returns at once (it waited 2 s more for
    // a connection); its delete goes on in the background.
    let started = Instant::now();
    assert!(held.release().await.unwrap());
    let waited = started.elapsed();
    assert!(waited < Duration::from_secs(1), "a release returned after {waited:?}");

    inject(move || ensemble.restart(0).unwrap()).await;
    let raw = raw(&connect).await;
    let left = within_children(&raw, &path, Duration::from_secs(15), |c| c.is_empty()).await;
    assert!(left.is_some(), "a node of the timed-out acquires is left");
    let released = within_children(&raw, &held_path, Duration::from_secs(15), |c| c.is_empty()).await;
    assert!(released.is_some(), "the released node is left");
    assert!(lock.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap());
    lock.release().await.unwrap();
}

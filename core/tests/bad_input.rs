//! Bad input ends in a typed error before any network call, or within the
//! connect timeout — never a hang.

mod common;

use std::time::{Duration, Instant};

use common::*;
use zoolock::{timeout_from_secs, Acquire, Error, Kind, Lock, LockConfig, Session, SessionOptions};

#[tokio::test(flavor = "multi_thread")]
async fn lock_paths_are_checked_before_any_request() {
    let session = session(&shared_server()).await;
    for path in ["", "relative", "/", "/trailing/", "/a//b", "/a/./b", "/a/../b", "/nul\0byte", "/zookeeper/x"] {
        let err = Lock::mutex(&session, path).err();
        assert!(matches!(err, Some(Error::InvalidPath { .. })), "{path:?} gave {err:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn oversized_identifiers_and_contradictory_options_are_refused() {
    let session = session(&shared_server()).await;
    let huge = LockConfig { identifier: vec![b'x'; zoolock::MAX_IDENTIFIER_BYTES + 1], ..LockConfig::default() };
    assert!(matches!(Lock::new(&session, "/zoolock-tests/huge", Kind::Mutex, huge), Err(Error::InvalidArgument(_))));
    let lock = Lock::mutex(&session, &unique_path("options")).unwrap();
    let contradictory = Acquire { blocking: false, timeout: Some(Duration::from_secs(1)), ..Acquire::default() };
    assert!(matches!(lock.acquire(contradictory).await, Err(Error::InvalidArgument(_))));
    assert!(matches!(lock.acquire(Acquire::default().lease(Duration::ZERO)).await, Err(Error::InvalidArgument(_))));
    assert!(timeout_from_secs(Some(-1.0)).is_err() && timeout_from_secs(Some(f64::NAN)).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_connect_strings_are_typed_errors() {
    for connect in ["", "/chroot-only", "host:notaport", "host:70000", "a b:2181", "127.0.0.1:2181/bad/"] {
        let err = Session::connect(SessionOptions::new(connect)).await.err();
        assert!(matches!(err, Some(Error::InvalidConnectString { .. })), "{connect:?} gave {err:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn connecting_to_nothing_fails_within_the_connect_timeout() {
    // A port that was just free: nothing listens there.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let started = Instant::now();
    let options = SessionOptions::new(format!("127.0.0.1:{port}")).connect_timeout(Duration::from_millis(800));
    let err = Session::connect(options).await.err();
    assert!(matches!(err, Some(Error::ConnectTimeout { .. })), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_chroot_is_named() {
    let connect = format!("{}/zoolock-no-such-chroot", shared_server());
    let err = Session::connect(SessionOptions::new(connect)).await.err();
    assert_eq!(err, Some(Error::NoChroot("/zoolock-no-such-chroot".into())));
}

#[tokio::test(flavor = "multi_thread")]
async fn use_after_close_is_an_error_not_a_hang() {
    let session = session(&shared_server()).await;
    let lock = Lock::mutex(&session, &unique_path("closed")).unwrap();
    session.close().await;
    assert_eq!(lock.acquire(Acquire::default()).await, Err(Error::Closed));
    assert_eq!(lock.contenders().await, Err(Error::Closed));
    assert_eq!(Lock::mutex(&session, "/zoolock-tests/after-close").err(), Some(Error::Closed));
    assert_eq!(lock.release().await, Ok(false));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_acl_that_forbids_create_is_no_auth() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("read-only");
    let open = zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all());
    let _ = raw.mkdir("/zoolock-tests", &open).await;
    let read_only = zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_read());
    raw.create(&path, b"", &read_only).await.unwrap();
    let lock = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(matches!(lock.acquire(Acquire::default()).await, Err(Error::NoAuth { .. })));
    assert!(children(&raw, &path).await.is_empty());
}

#[test]
fn dropping_a_held_lock_outside_any_runtime_does_not_panic() {
    let session = Session::connect_blocking(SessionOptions::new(shared_server()).session_timeout(SESSION_TIMEOUT)).unwrap();
    let path = unique_path("drop-outside");
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire_blocking(Acquire::default()).unwrap());
    drop(lock);
    let other = Lock::mutex(&session, &path).unwrap();
    assert!(other.acquire_blocking(Acquire::timeout(Duration::from_secs(5))).unwrap(), "the drop released the lock");
    other.release_blocking().unwrap();
}

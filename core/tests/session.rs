//! Session options that reach the server: digest auth and the ACL put on
//! every node zoolock creates.

mod common;

use std::time::{Duration, Instant};

use common::*;
use zookeeper_client as zk;
use zoolock::{Acl, Acquire, AuthId, Error, Lock, Permission, Session, SessionOptions};

#[tokio::test(flavor = "multi_thread")]
async fn digest_auth_and_acls_protect_the_lock_nodes() {
    let connect = shared_server();
    let path = unique_path("acl");
    let creator_only = vec![Acl::new(Permission::ALL, AuthId::authed())];
    let options = SessionOptions::new(&connect)
        .session_timeout(SESSION_TIMEOUT)
        .digest_auth("alice", "secret")
        .acls(creator_only);
    let alice = Session::connect(options).await.unwrap();
    let lock = Lock::mutex(&alice, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());

    let same_user = zk::Client::connector().with_auth("digest", b"alice:secret").connect(&connect).await.unwrap();
    let (acl, _) = same_user.get_acl(&path).await.unwrap();
    assert_eq!(acl.len(), 1);
    assert_eq!((acl[0].scheme(), acl[0].permission()), ("digest", Permission::ALL));
    assert!(acl[0].id().starts_with("alice:"));
    // Someone without the credentials cannot queue on the path.
    let stranger = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(matches!(stranger.acquire(Acquire::no_wait()).await, Err(Error::NoAuth { .. })));
    lock.release().await.unwrap();
    assert!(same_user.list_children(&path).await.unwrap().is_empty());
}

/// zookeeper-client stops trying to connect after about the session
/// timeout; the connect timeout is the caller's to choose, longer or not,
/// and the error states how long it tried.
#[tokio::test(flavor = "multi_thread")]
async fn a_connect_timeout_longer_than_the_session_timeout_is_waited_out() {
    let (session_timeout, connect_timeout) = (Duration::from_secs(1), Duration::from_secs(4));
    // Nothing listens on port 1.
    let options = SessionOptions::new("127.0.0.1:1").session_timeout(session_timeout).connect_timeout(connect_timeout);
    let started = Instant::now();
    let err = Session::connect(options).await.unwrap_err();
    let waited = started.elapsed();
    let Error::ConnectTimeout { timeout: stated, .. } = &err else { panic!("{err:?}") };
    assert!(waited >= connect_timeout, "gave up after {waited:?} of {connect_timeout:?}: {err}");
    assert!(*stated >= connect_timeout && *stated <= waited, "states {stated:?}, waited {waited:?}: {err}");
}

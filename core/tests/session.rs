//! Session options that reach the server: digest auth and the ACL put on
//! every node zoolock creates.

mod common;

use std::time::{Duration, Instant};

use common::*;
use zookeeper_client as zk;
use zoolock::{Acl, Acquire, AuthId, ClientId, Error, Lock, Permission, Session, SessionOptions};

#[tokio::test(flavor = "multi_thread")]
async fn digest_auth_and_acls_protect_the_lock_nodes() {
    let connect = shared_server();
    let path = unique_path("acl");
    // alice would make the tests' base with her ACL, shutting out this file's other tests.
    session(&connect).await.ensure_path(path.rsplit_once('/').unwrap().0, None).await.unwrap();
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

/// kazoo's `client_id`: a second client resumes the first one's session by
/// its id and password, and the session's lock node stays while the first
/// client is gone without closing (its process died, here: cut off and
/// dropped). The lock node is the session's, not the second client's lock
/// object's: that one queues behind it (no second holder). Closing the
/// second client ends the session, and the node with it.
#[tokio::test(flavor = "multi_thread")]
async fn a_resumed_session_keeps_the_nodes_of_a_client_gone_without_closing() {
    let path = unique_path("resume");
    let first = session(&shared_server()).await;
    let lock = Lock::mutex(&first, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let node = lock.node().unwrap();
    let id = first.client_id().expect("a connected session has a client id");
    assert_eq!(id.session_id(), first.status().session_id);
    assert_eq!(id.password().len(), ClientId::PASSWORD_BYTES);

    let session_id = id.session_id();
    inject(move || harness().partition(session_id).unwrap()).await;
    let direct = harness().direct_connect_string();
    let options = SessionOptions::new(&direct).session_timeout(SESSION_TIMEOUT).resume(id.clone());
    let second = Session::connect(options).await.unwrap();
    assert_eq!(second.status().session_id, session_id);
    assert_eq!(second.client_id(), Some(id));
    // Dropped while cut off: it cannot close the session (nor would a killed process).
    drop(lock);
    drop(first);

    let raw = raw(&direct).await;
    let stat = raw.check_stat(&node).await.unwrap().expect("the resumed session's node stays");
    assert_eq!(stat.ephemeral_owner, session_id);
    let other = Lock::mutex(&second, &path).unwrap();
    assert!(!other.acquire(Acquire::no_wait()).await.unwrap(), "a second holder beside the session's node");
    assert_eq!(children(&raw, &path).await.len(), 1);

    second.close().await;
    until_children(&raw, &path, "the session's node gone with it", |c| c.is_empty()).await;
}

/// Resuming a session the server no longer has, or with a wrong password
/// (the server answers both alike), is `SessionExpired` at once, with no
/// session opened; the session itself, when it lives, goes on.
#[tokio::test(flavor = "multi_thread")]
async fn resuming_an_ended_session_or_with_a_wrong_password_is_session_expired() {
    let direct = harness().direct_connect_string();
    let resume =
        |id: ClientId| Session::connect(SessionOptions::new(&direct).session_timeout(SESSION_TIMEOUT).resume(id));
    let live = session(&direct).await;
    let id = live.client_id().unwrap();
    let wrong = ClientId::new(id.session_id(), id.password().iter().map(|b| !b).collect::<Vec<u8>>());
    let err = resume(wrong).await.unwrap_err();
    assert!(matches!(err, Error::SessionExpired { action: "resume the session at", .. }), "{err:?}");
    assert_eq!(err.to_string(), format!("could not resume the session at {direct}: the session expired"));
    assert_eq!(live.client_id().map(|now| now.session_id()), Some(id.session_id()));

    live.close().await;
    assert_eq!(live.client_id(), None);
    let err = resume(id).await.unwrap_err();
    assert!(matches!(err, Error::SessionExpired { .. }), "{err:?}");
}

/// A client id that cannot name a session is refused before any network
/// call, and the password shows nowhere in Debug output.
#[test]
fn client_ids_are_checked_and_their_password_never_shown() {
    let options = |id| SessionOptions::new("127.0.0.1:1").resume(id);
    for bad in [ClientId::new(0, [1u8; 16]), ClientId::new(7, [1u8; 15]), ClientId::new(7, Vec::new())] {
        let err = Session::connect_blocking(options(bad.clone())).unwrap_err();
        assert!(matches!(err, Error::InvalidArgument(_)), "{bad:?}: {err:?}");
    }
    let password = b"sixteen-byte-pw!".to_vec();
    let shown = format!("{:?}", options(ClientId::new(0x42, password.clone())));
    assert!(shown.contains("ClientId { session_id: 0x42, password: <redacted> }"), "{shown}");
    assert!(!shown.contains("sixteen") && !shown.contains(&format!("{password:?}")), "{shown}");
}

/// Issue 32: connect strings as people write them, read as ZooKeeper's Java
/// client reads them — each host trimmed, empty ones skipped. With the
/// first host down, `" down, up ,"` must reach the second host (before, every
/// host after the first was unusable, and a leading space failed).
#[tokio::test(flavor = "multi_thread")]
async fn hosts_with_white_space_and_empty_entries_each_count() {
    let live = shared_server();
    let live = live.split('/').next().unwrap();
    let down = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let connect = format!(" {down}, {live} ,");
    let options =
        SessionOptions::new(&connect).session_timeout(SESSION_TIMEOUT).connect_timeout(Duration::from_secs(10));
    let session = Session::connect(options).await.unwrap_or_else(|e| panic!("{connect:?}: {e}"));
    assert!(session.exists("/").await.unwrap().is_some());
    session.close().await;
}

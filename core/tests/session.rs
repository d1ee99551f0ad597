//! Session options that reach the server: digest auth and the ACL put on
//! every node zoolock creates.

mod common;

use common::*;
use zookeeper_client as zk;
use zoolock::{Acl, Acquire, AuthId, Error, Holder, Lock, Permission, Session, SessionOptions};

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

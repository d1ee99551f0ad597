//! The znode API on the session (kazoo's `get`, `set`, `create`, …) against
//! a real server: each operation, each error kind it names, bad input,
//! transactions, retry, and the chroot created on first need.

mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use zk_harness::{Op, Select};
use zoolock::{
    Acl, Acquire, AuthId, Create, DataWatch, Error, Lock, OpResult, Permission, Retry, Session, SessionOptions,
};

#[tokio::test(flavor = "multi_thread")]
async fn each_operation_does_what_kazoo_s_does() {
    let session = session(&shared_server()).await;
    let base = unique_path("ops");
    session.ensure_path(&base, None).await.unwrap();
    session.ensure_path(&base, None).await.unwrap(); // already there: fine

    let node = format!("{base}/config");
    assert_eq!(session.exists(&node).await.unwrap(), None);
    let (created, stat) = session.create(&node, Some(b"v1"), &Create::default()).await.unwrap();
    assert_eq!(created, node);
    assert_eq!((stat.version, stat.data_length, stat.ephemeral_owner), (0, 2, 0));
    let (data, read) = session.get(&node).await.unwrap();
    assert_eq!((data.as_deref(), read), (Some(&b"v1"[..]), stat));
    assert_eq!(session.exists(&node).await.unwrap(), Some(stat));

    let after = session.set(&node, Some(b"v2"), Some(0)).await.unwrap();
    assert_eq!(after.version, 1);
    assert!(after.mzxid > stat.mzxid);
    let any = session.set(&node, Some(b"v3"), None).await.unwrap();
    assert_eq!(any.version, 2);
    assert_eq!(session.get(&node).await.unwrap().0, Some(b"v3".to_vec()));

    // Sequential, ephemeral, and a trailing '/' for a sequential name.
    let queue = format!("{base}/queue");
    let (first, _) =
        session.create(&format!("{queue}/item-"), Some(b""), &Create::default().makepath().sequence()).await.unwrap();
    assert_eq!(first, format!("{queue}/item-0000000000"));
    let (second, _) = session.create(&format!("{queue}/"), Some(b""), &Create::default().sequence()).await.unwrap();
    assert_eq!(second, format!("{queue}/0000000001"));
    let (ephemeral, stat) =
        session.create(&format!("{base}/me"), Some(b""), &Create::default().ephemeral()).await.unwrap();
    assert_eq!(stat.ephemeral_owner, session.status().session_id);

    let mut children = session.children(&queue).await.unwrap();
    children.sort();
    assert_eq!(children, ["0000000001", "item-0000000000"]);
    let (listed, parent) = session.children_and_stat(&base).await.unwrap();
    assert_eq!(listed.len(), 3);
    assert_eq!(parent.num_children, 3);

    session.sync(&base).await.unwrap();
    session.delete(&ephemeral, Some(0), false).await.unwrap();
    assert_eq!(session.exists(&ephemeral).await.unwrap(), None);
    session.delete(&base, None, true).await.unwrap();
    assert_eq!(session.exists(&base).await.unwrap(), None);
    // A recursive delete of what is gone already is no error (kazoo's).
    session.delete(&base, None, true).await.unwrap();
    // The root lists, and reads of /zookeeper are allowed.
    assert!(session.children("/").await.unwrap().contains(&"zookeeper".to_string()));
    session.exists("/zookeeper").await.unwrap().expect("the server's own tree");
}

#[tokio::test(flavor = "multi_thread")]
async fn each_refusal_has_its_own_kind() {
    let session = session(&shared_server()).await;
    let base = unique_path("kinds");
    let node = format!("{base}/node");

    let err = session.get(&node).await.unwrap_err();
    assert_eq!(err, Error::NoNode { action: "read", path: node.clone() });
    // No parent and no makepath.
    assert!(matches!(session.create(&node, Some(b""), &Create::default()).await, Err(Error::NoNode { .. })));
    session.create(&node, Some(b""), &Create::default().makepath()).await.unwrap();
    assert_eq!(
        session.create(&node, Some(b""), &Create::default()).await.unwrap_err(),
        Error::NodeExists { action: "create", path: node.clone() }
    );
    assert_eq!(
        session.set(&node, Some(b"x"), Some(7)).await.unwrap_err(),
        Error::BadVersion { action: "set", path: node.clone() }
    );
    assert_eq!(
        session.delete(&node, Some(7), false).await.unwrap_err(),
        Error::BadVersion { action: "delete", path: node.clone() }
    );
    assert_eq!(
        session.delete(&base, None, false).await.unwrap_err(),
        Error::NotEmpty { action: "delete", path: base.clone() }
    );
    assert!(matches!(
        session.set(&format!("{base}/none"), Some(b""), None).await,
        Err(Error::NoNode { action: "set", .. })
    ));
    assert!(matches!(session.delete(&format!("{base}/none"), None, false).await, Err(Error::NoNode { .. })));
    assert!(matches!(session.children(&format!("{base}/none")).await, Err(Error::NoNode { action: "list", .. })));

    // An ACL that lets nobody but its creator in: another session gets NoAuth.
    let guarded = format!("{base}/guarded");
    let owner = Session::connect(SessionOptions::new(shared_server()).digest_auth("owner", "pw")).await.unwrap();
    let creator_only = vec![Acl::new(Permission::ALL, AuthId::authed())];
    owner.create(&guarded, Some(b"secret"), &Create::default().acls(creator_only)).await.unwrap();
    assert!(matches!(session.get(&guarded).await, Err(Error::NoAuth { .. })));
    assert_eq!(owner.get(&guarded).await.unwrap().0, Some(b"secret".to_vec()));
    // A recursive delete needs to list it too.
    assert!(matches!(session.delete(&base, None, true).await, Err(Error::NoAuth { action: "list", .. })));
    owner.delete(&guarded, None, false).await.unwrap();
    owner.close().await;

    // A node below an ephemeral node, and an ACL of a scheme the server does not know.
    let ephemeral = format!("{base}/ephemeral");
    session.create(&ephemeral, Some(b""), &Create::default().ephemeral()).await.unwrap();
    let child = format!("{ephemeral}/child");
    assert_eq!(
        session.create(&child, Some(b""), &Create::default()).await.unwrap_err(),
        Error::NoChildrenForEphemerals { action: "create", path: child }
    );
    let unknown = format!("{base}/unknown-scheme");
    let acls = vec![Acl::new(Permission::ALL, AuthId::new("no-such-scheme", "x"))];
    assert_eq!(
        session.create(&unknown, Some(b""), &Create::default().acls(acls)).await.unwrap_err(),
        Error::InvalidAcl { action: "create", path: unknown }
    );
    session.delete(&base, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_a_typed_error_before_any_request() {
    let session = session(&shared_server()).await;
    for path in ["relative", "/trailing/", "/a//b", "/a/../b", ""] {
        assert!(matches!(session.get(path).await, Err(Error::InvalidPath { .. })), "{path:?}");
        assert!(
            matches!(session.create(path, Some(b""), &Create::default()).await, Err(Error::InvalidPath { .. })),
            "{path:?}"
        );
    }
    assert!(matches!(session.create("/", Some(b""), &Create::default()).await, Err(Error::InvalidPath { .. })));
    assert!(matches!(session.delete("/", None, false).await, Err(Error::InvalidPath { .. })));
    assert!(matches!(session.set("/x", Some(b""), Some(-2)).await, Err(Error::InvalidArgument(_))));
    assert!(matches!(session.delete("/x", Some(-5), false).await, Err(Error::InvalidArgument(_))));
    let big = vec![0u8; zoolock::MAX_IDENTIFIER_BYTES + 1];
    assert!(matches!(session.set("/x", Some(&big), None).await, Err(Error::InvalidArgument(_))));
    let none = Create::default().acls(Vec::new());
    assert!(matches!(session.create("/x", Some(b""), &none).await, Err(Error::InvalidArgument(_))));
    assert!(matches!(
        session.retry(Retry { max_tries: 0, deadline: None }, || async { Ok(()) }).await,
        Err(Error::InvalidArgument(_))
    ));
}

/// A bulk of small operations the server reads (about 700 KB of jute) is
/// sent, not refused by zoolock's size check: the server answers it.
#[tokio::test(flavor = "multi_thread")]
async fn a_large_transaction_of_small_operations_reaches_the_server() {
    let session = session(&shared_server()).await;
    let base = unique_path("bulk");
    let mut transaction = session.transaction();
    for i in 0..12_000 {
        transaction = transaction.check(&format!("{base}/{i:05}"), Some(0));
    }
    let answered = transaction.commit_indexed().await;
    assert!(matches!(answered, Err((Some(0), Error::NoNode { .. }))), "{answered:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_transaction_commits_every_write_or_none() {
    let session = session(&shared_server()).await;
    let base = unique_path("multi");
    session.ensure_path(&base, None).await.unwrap();
    let (a, b) = (format!("{base}/a"), format!("{base}/b"));
    session.create(&a, Some(b"1"), &Create::default()).await.unwrap();

    let results = session
        .transaction()
        .check(&a, Some(0))
        .set(&a, Some(b"2"), Some(0))
        .create(&format!("{base}/s-"), Some(b""), Create::default().sequence())
        .create(&b, Some(b""), Create::default())
        .delete(&b, None)
        .commit()
        .await
        .unwrap();
    assert_eq!(results.len(), 5);
    assert_eq!(results[0], OpResult::Checked);
    assert!(matches!(results[1], OpResult::Set(stat) if stat.version == 1));
    assert!(matches!(&results[2], OpResult::Created { path, .. } if *path == format!("{base}/s-0000000001")));
    assert_eq!(results[4], OpResult::Deleted);

    // The second write fails: the first is not made either, and the error names the one that failed.
    let failed =
        session.transaction().set(&a, Some(b"3"), None).create(&a, Some(b""), Create::default()).commit().await;
    assert_eq!(failed.unwrap_err(), Error::NodeExists { action: "create", path: a.clone() });
    assert_eq!(session.get(&a).await.unwrap().0, Some(b"2".to_vec()));
    // Which one failed, by index, for bindings that report each (kazoo's results list).
    let failed = session.transaction().set(&a, Some(b"3"), None).set(&a, Some(b"3"), Some(0)).commit_indexed().await;
    assert_eq!(failed.unwrap_err(), (Some(1), Error::BadVersion { action: "set", path: a.clone() }));
    let bad = session
        .transaction()
        .set(&a, Some(b"3"), None)
        .set(&a, Some(b"3"), Some(-9))
        .set("x", Some(b""), None)
        .commit_indexed()
        .await;
    assert!(matches!(bad.unwrap_err(), (Some(1), Error::InvalidArgument(_))));
    let stale = session.transaction().check(&a, Some(0)).set(&a, Some(b"4"), None).commit().await;
    assert_eq!(stale.unwrap_err(), Error::BadVersion { action: "check", path: a.clone() });
    assert_eq!(session.get(&a).await.unwrap().0, Some(b"2".to_vec()));

    // Bad input is refused at commit, before anything is sent.
    let bad = session.transaction().set(&a, Some(b"5"), None).delete("relative", None).commit().await;
    assert!(matches!(bad, Err(Error::InvalidPath { .. })));
    let makepath =
        session.transaction().create(&format!("{base}/x/y"), Some(b""), Create::default().makepath()).commit().await;
    assert!(matches!(makepath, Err(Error::InvalidArgument(_))));
    assert_eq!(session.get(&a).await.unwrap().0, Some(b"2".to_vec()));
    assert!(session.transaction().commit().await.unwrap().is_empty());
    session.delete(&base, None, true).await.unwrap();
}

/// ZooKeeper's null data (kazoo's `None`, length -1 on the wire) round-trips
/// apart from empty data: through create, set, a transaction and a data watch.
#[tokio::test(flavor = "multi_thread")]
async fn null_data_round_trips_apart_from_empty_data() {
    let session = session(&shared_server()).await;
    let base = unique_path("null");
    session.ensure_path(&base, None).await.unwrap();
    let (null, empty) = (format!("{base}/null"), format!("{base}/empty"));
    session.create(&null, None, &Create::default()).await.unwrap();
    session.create(&empty, Some(b""), &Create::default()).await.unwrap();
    assert_eq!(session.get(&null).await.unwrap().0, None);
    assert_eq!(session.get(&empty).await.unwrap().0, Some(Vec::new()));

    session.set(&empty, None, None).await.unwrap();
    session.set(&null, Some(b""), None).await.unwrap();
    assert_eq!(session.get(&empty).await.unwrap().0, None);
    assert_eq!(session.get(&null).await.unwrap().0, Some(Vec::new()));

    let made = format!("{base}/made");
    session.transaction().create(&made, None, Create::default()).set(&null, None, None).commit().await.unwrap();
    assert_eq!(session.get(&made).await.unwrap().0, None);
    assert_eq!(session.get(&null).await.unwrap().0, None);
    session.transaction().set(&made, Some(b""), None).commit().await.unwrap();
    assert_eq!(session.get(&made).await.unwrap().0, Some(Vec::new()));

    // A data watch is called with the data as read: None for null, while the stat says the node exists.
    let (tx, mut calls) = tokio::sync::mpsc::unbounded_channel();
    let watch =
        DataWatch::start(&session, &null, move |value, _| tx.send(value.map(|(data, _)| data)).is_ok()).await.unwrap();
    assert_eq!(calls.try_recv().unwrap(), Some(None));
    let within = Duration::from_secs(20);
    session.set(&null, Some(b"x"), None).await.unwrap();
    assert_eq!(tokio::time::timeout(within, calls.recv()).await.unwrap(), Some(Some(Some(b"x".to_vec()))));
    session.set(&null, None, None).await.unwrap();
    assert_eq!(tokio::time::timeout(within, calls.recv()).await.unwrap(), Some(Some(None)));
    watch.stop();
    session.delete(&base, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn retry_tries_again_after_a_connection_loss_and_not_after_other_errors() {
    let session = session(&shared_server()).await;
    let node = unique_path("retry");
    session.create(&node, Some(b"data"), &Create::default().makepath()).await.unwrap();
    let id = session.status().session_id;
    // The server answers the read, the reply is dropped and the connection reset.
    let reads = Select::session(id).op(Op::GetData).path(node.clone());
    let fault = inject(move || zk_harness::shared().drop_reply(reads).unwrap()).await;

    let tries = Arc::new(AtomicU32::new(0));
    let attempt = || {
        tries.fetch_add(1, Ordering::SeqCst);
        session.get(&node)
    };
    let (data, _) = session.retry(Retry::default(), attempt).await.unwrap();
    assert_eq!(data, Some(b"data".to_vec()));
    assert_eq!(tries.load(Ordering::SeqCst), 2, "one connection loss, one retry");
    inject(move || zk_harness::shared().disarm(fault).unwrap()).await;

    // Without retry, the same fault is the caller's ConnectionLoss.
    let reads = Select::session(id).op(Op::GetData).path(node.clone());
    inject(move || zk_harness::shared().drop_reply(reads).unwrap()).await;
    assert!(matches!(session.get(&node).await, Err(Error::ConnectionLoss(_))));

    tries.store(0, Ordering::SeqCst);
    let missing = format!("{node}/missing");
    let attempt = || {
        tries.fetch_add(1, Ordering::SeqCst);
        session.get(&missing)
    };
    assert!(matches!(session.retry(Retry::default(), attempt).await, Err(Error::NoNode { .. })));
    assert_eq!(tries.load(Ordering::SeqCst), 1, "NoNode is not retried");
    session.delete(&node, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_go_on_after_the_session_expired() {
    let session = session(&shared_server()).await;
    let node = unique_path("after-expiry");
    session.create(&node, Some(b"kept"), &Create::default().makepath()).await.unwrap();
    let id = session.status().session_id;
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    // The first call may meet the dead session; a retry meets the new one.
    let (data, _) = session.retry(Retry::default(), || session.get(&node)).await.unwrap();
    assert_eq!(data, Some(b"kept".to_vec()));
    assert_ne!(session.status().session_id, id);
    session.delete(&node, None, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_chroot_is_refused_or_created_on_first_need() {
    let connect = shared_server();
    let chroot = unique_path("chroot");
    let under = format!("{connect}{chroot}");
    let refused = Session::connect(SessionOptions::new(&under).session_timeout(SESSION_TIMEOUT)).await;
    assert_eq!(refused.unwrap_err(), Error::NoChroot(chroot.clone()));

    let options = SessionOptions::new(&under).session_timeout(SESSION_TIMEOUT).create_chroot(true);
    let session = Session::connect(options.clone()).await.unwrap();
    let outside = common::session(&connect).await;
    assert_eq!(outside.exists(&chroot).await.unwrap(), None, "nothing written before the first need");
    // A plain create does not make parents, as in kazoo.
    assert!(matches!(session.create("/a", Some(b""), &Create::default()).await, Err(Error::NoNode { .. })));
    session.ensure_path("/a/b", None).await.unwrap();
    assert!(outside.exists(&format!("{chroot}/a/b")).await.unwrap().is_some());

    // A lock's acquire creates a missing chroot too.
    outside.delete(&chroot, None, true).await.unwrap();
    let lock = Lock::mutex(&session, "/locks/x").unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    assert_eq!(outside.children(&format!("{chroot}/locks/x")).await.unwrap().len(), 1);
    lock.release().await.unwrap();
    // And create with makepath, also of a top-level node.
    for node in ["/c/d", "/top"] {
        outside.delete(&chroot, None, true).await.unwrap();
        let (path, _) = session.create(node, Some(b""), &Create::default().makepath()).await.unwrap();
        assert_eq!(path, node);
    }
    outside.delete(&chroot, None, true).await.unwrap();
    session.ensure_path("/", None).await.unwrap();
    assert!(outside.exists(&chroot).await.unwrap().is_some());
    session.close().await;

    // Without the option, a chroot deleted after connect is NoNode, at once.
    outside.ensure_path(&chroot, None).await.unwrap();
    let strict = Session::connect(SessionOptions::new(&under).session_timeout(SESSION_TIMEOUT)).await.unwrap();
    outside.delete(&chroot, None, true).await.unwrap();
    for node in ["/top", "/c/d"] {
        let made = strict.create(node, Some(b""), &Create::default().makepath()).await;
        assert!(matches!(made, Err(Error::NoNode { .. })), "{made:?}");
    }
    assert!(matches!(strict.ensure_path("/a", None).await, Err(Error::NoNode { .. })));
    assert!(matches!(Lock::mutex(&strict, "/l").unwrap().acquire(Acquire::no_wait()).await, Err(Error::NoNode { .. })));
    assert_eq!(outside.exists(&chroot).await.unwrap(), None);
    strict.close().await;
}

#[test]
fn the_blocking_forms_work_without_a_runtime() {
    let session =
        Session::connect_blocking(SessionOptions::new(shared_server()).session_timeout(SESSION_TIMEOUT)).unwrap();
    let node = unique_path("blocking");
    session.ensure_path_blocking(&node, None).unwrap();
    session.set_blocking(&node, Some(b"x"), None).unwrap();
    assert_eq!(session.get_blocking(&node).unwrap().0, Some(b"x".to_vec()));
    assert!(session.exists_blocking(&node).unwrap().is_some());
    assert!(session.children_blocking(&node).unwrap().is_empty());
    let tries = AtomicU32::new(0);
    let read = session.retry_blocking(Retry::default(), || {
        tries.fetch_add(1, Ordering::SeqCst);
        session.get_blocking(&format!("{node}/none"))
    });
    assert!(matches!(read, Err(Error::NoNode { .. })));
    assert_eq!(tries.load(Ordering::SeqCst), 1);
    session.transaction().set(&node, Some(b"y"), Some(1)).commit_blocking().unwrap();
    session.delete_blocking(&node, None, false).unwrap();
    session.close_blocking();
}

/// How long a test waits for the session zoolock opens after an expiry.
const WITHIN: std::time::Duration = std::time::Duration::from_secs(30);

/// kazoo's `get_acls`, `set_acls` and `add_auth` at run time: credentials
/// added to a running session open what they guard, and are sent again by
/// the session zoolock opens after an expiry.
#[tokio::test(flavor = "multi_thread")]
async fn acls_and_credentials_added_at_run_time() {
    let connect = shared_server();
    let (session, other) = (session(&connect).await, session(&connect).await);
    let base = unique_path("acl");
    session.ensure_path(&base, None).await.unwrap();
    let (open, stat) = session.get_acls(&base).await.unwrap();
    assert_eq!(open, vec![Acl::new(Permission::ALL, AuthId::anyone())]);
    assert_eq!(stat.aversion, 0);

    session.add_auth("digest", b"owner:pw").await.unwrap();
    let guarded = format!("{base}/guarded");
    let creator_only = vec![Acl::new(Permission::ALL, AuthId::authed())];
    session.create(&guarded, Some(b"secret"), &Create::default().acls(creator_only)).await.unwrap();
    let (acls, _) = session.get_acls(&guarded).await.unwrap();
    assert_eq!(acls.len(), 1);
    assert_eq!((acls[0].permission(), acls[0].scheme()), (Permission::ALL, "digest"));
    assert!(acls[0].id().starts_with("owner:"), "{:?}", acls[0]);
    assert!(matches!(other.get(&guarded).await, Err(Error::NoAuth { .. })));

    // The same credentials on the session opened after an expiry.
    let id = session.status().session_id;
    let mut status = session.subscribe();
    inject(move || harness().expire(id).unwrap()).await;
    let next = status.wait_for(|s| s.generation > 1 && s.state == zoolock::SessionState::Connected);
    tokio::time::timeout(WITHIN, next).await.expect("a new session").unwrap();
    assert_eq!(session.get(&guarded).await.unwrap().0, Some(b"secret".to_vec()));

    // set_acls: conditional on the ACL's version, never an empty list.
    let readable = vec![Acl::new(Permission::READ, AuthId::anyone()), acls[0].clone()];
    assert!(matches!(session.set_acls(&guarded, &readable, Some(3)).await, Err(Error::BadVersion { .. })));
    assert!(matches!(session.set_acls(&guarded, &[], None).await, Err(Error::InvalidAcl { .. })));
    let stat = session.set_acls(&guarded, &readable, Some(0)).await.unwrap();
    assert_eq!(stat.aversion, 1);
    assert_eq!(other.get(&guarded).await.unwrap().0, Some(b"secret".to_vec()));
    assert!(matches!(other.set(&guarded, Some(b""), None).await, Err(Error::NoAuth { .. })));
    assert!(matches!(other.get_acls(&format!("{base}/none")).await, Err(Error::NoNode { .. })));
    assert!(matches!(other.add_auth("", b"x").await, Err(Error::InvalidArgument(_))));
    session.delete(&base, None, true).await.unwrap();
    session.close().await;
    other.close().await;
}

/// kazoo's `command` and `server_version`: the four-letter words.
#[tokio::test(flavor = "multi_thread")]
async fn four_letter_words_and_the_server_version() {
    let session = session(&shared_server()).await;
    assert_eq!(session.command("ruok").await.unwrap(), "imok");
    assert!(session.command("envi").await.unwrap().contains("zookeeper.version="));
    assert_eq!(session.server_version().await.unwrap()[..2], [3, 8]);
    for bad in ["ruo", "RUOK", "ruokk", "r\0ok"] {
        assert!(matches!(session.command(bad).await, Err(Error::InvalidArgument(_))), "{bad:?}");
    }
    session.close().await;
    assert!(session.command("ruok").await.is_err());
}

/// kazoo's `set_hosts`: the chroot cannot change, and the new hosts serve
/// the next ZooKeeper session (here: after an expiry, a session that
/// connected directly, past the harness's proxies).
#[tokio::test(flavor = "multi_thread")]
async fn set_hosts_serves_the_next_session() {
    let session = session(&shared_server()).await;
    let first = session.status().session_id;
    assert!(harness().sessions().contains(&first));
    let direct = harness().direct_connect_string();
    assert!(matches!(session.set_hosts(&format!("{direct}/elsewhere")), Err(Error::InvalidConnectString { .. })));
    assert!(matches!(session.set_hosts("no-port:x"), Err(Error::InvalidConnectString { .. })));
    session.set_hosts(&direct).unwrap();
    assert_eq!(session.hosts(), direct);
    assert_eq!(session.status().session_id, first, "the live session is kept");

    let mut status = session.subscribe();
    inject(move || harness().expire(first).unwrap()).await;
    let next = status.wait_for(|s| s.generation > 1 && s.state == zoolock::SessionState::Connected);
    let next = *tokio::time::timeout(WITHIN, next).await.expect("a new session").unwrap();
    let second = next.session_id;
    session.exists("/").await.unwrap();
    assert!(!harness().sessions().contains(&second), "the new session went through a proxy");
    session.close().await;
}

/// kazoo's `reconfig`: sent to the server, whose refusal (reconfig is off
/// on the test server, as by default) comes back as its error; and a call
/// that names no change, or both kinds, is refused before sending.
#[tokio::test(flavor = "multi_thread")]
async fn reconfig_reaches_the_server() {
    let session = session(&shared_server()).await;
    let refused = session.reconfig(None, Some("9"), None, None).await.unwrap_err();
    assert!(
        matches!(&refused, Error::ZooKeeper { message, .. } if message.contains("reconfiguration disabled")),
        "{refused:?}"
    );
    assert!(matches!(session.reconfig(None, None, None, None).await, Err(Error::InvalidArgument(_))));
    let both = session.reconfig(Some("server.4=127.0.0.1:2888:3888;2181"), None, Some("x"), None).await;
    assert!(matches!(both, Err(Error::InvalidArgument(_))));
    session.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn last_zxid_is_the_zxid_of_the_sessions_last_reply() {
    let (session, other) = (session(&shared_server()).await, session(&shared_server()).await);
    let base = unique_path("last-zxid");
    session.ensure_path(&base, None).await.unwrap();
    let (_, created) = session.create(&format!("{base}/a"), None, &Create::default()).await.unwrap();
    assert!(session.last_zxid() >= created.czxid && created.czxid > 0);
    // Another session's write moves it only with this session's next reply.
    let (_, written) = other.create(&format!("{base}/b"), None, &Create::default()).await.unwrap();
    assert!(other.last_zxid() >= written.czxid);
    assert!(session.last_zxid() < written.czxid);
    session.exists(&base).await.unwrap();
    assert!(session.last_zxid() >= written.czxid);
    session.delete(&base, None, true).await.unwrap();
}

/// Calls made while the session is lost wait for the next one in line and
/// leave in the order they were made (`Session::live_in_turn`): each
/// `exists` started after its `create` finds the node. Started with
/// `runtime::start`, as the bindings' async forms are.
#[tokio::test(flavor = "multi_thread")]
async fn calls_waiting_for_the_next_session_leave_in_the_order_they_were_made() {
    let ensemble = Arc::new(inject(|| zk_harness::Ensemble::start(1, Default::default()).unwrap()).await);
    let options = SessionOptions::new(ensemble.connect_string()).session_timeout(SESSION_TIMEOUT);
    let session = Session::connect(options).await.unwrap();
    let path = unique_path("order");
    session.ensure_path(&path, None).await.unwrap();
    let cut = ensemble.clone();
    inject(move || cut.partition_all(0).unwrap()).await;
    until_state(&session, zoolock::SessionState::Lost).await;

    let mut calls = Vec::new();
    for i in 0..20 {
        let node = format!("{path}/n{i}");
        let (s, n) = (session.clone(), node.clone());
        let created = zoolock::runtime::start(async move { s.create(&n, None, &Create::default()).await });
        let s = session.clone();
        let seen = zoolock::runtime::start(async move { s.exists(&node).await });
        calls.push((created, seen));
    }
    let healed = ensemble.clone();
    inject(move || healed.heal_all(0).unwrap()).await;
    for (i, (created, seen)) in calls.into_iter().enumerate() {
        created.await.unwrap().unwrap();
        assert!(seen.await.unwrap().unwrap().is_some(), "exists {i} overtook its create");
    }
    session.close().await;
}

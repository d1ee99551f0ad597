//! Curator's PersistentNode (ephemeral) on a real server: kept across a
//! session expiry and a deletion by someone else, changed, closed, and a
//! node of another session waited out.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Error, PersistentNode};

/// Waits, through watches, until `node` exists with `data` and is owned by `owner`.
async fn until_node(raw: &zookeeper_client::Client, node: &str, data: &[u8], owner: i64) {
    let wait = async {
        loop {
            let (found, watcher) = raw.check_and_watch_stat(node).await.unwrap();
            if let Some(stat) = found {
                if stat.ephemeral_owner == owner
                    && raw.get_data(node).await.map(|(d, _)| d).ok().as_deref() == Some(data)
                {
                    return;
                }
            }
            watcher.changed().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), wait).await.expect("the node as expected");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_is_kept_across_an_expiry_and_a_deletion_and_goes_on_close() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = format!("{}/worker-1", unique_path("registry"));
    let node = PersistentNode::new(&session, &path, b"10.0.0.1:80".to_vec()).unwrap();
    assert!(raw.check_stat(&path).await.unwrap().is_none(), "nothing before start");
    node.start().await.unwrap();
    node.start().await.unwrap();
    assert!(node.is_started());
    let first = session.status().session_id;
    let stat = raw.check_stat(&path).await.unwrap().expect("made with its parents");
    assert_eq!((stat.ephemeral_owner, raw.get_data(&path).await.unwrap().0), (first, b"10.0.0.1:80".to_vec()));

    expire(&session).await;
    node_of_next_session(&raw, &path, first).await;
    let second = session.status().session_id;
    until_node(&raw, &path, b"10.0.0.1:80", second).await;

    raw.delete(&path, None).await.unwrap();
    until_node(&raw, &path, b"10.0.0.1:80", second).await;

    node.set_data(b"10.0.0.1:81".to_vec()).await.unwrap();
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"10.0.0.1:81");
    assert_eq!(node.data(), b"10.0.0.1:81");
    raw.delete(&path, None).await.unwrap();
    until_node(&raw, &path, b"10.0.0.1:81", second).await;

    assert!(node.close().await.unwrap());
    assert!(!node.is_started());
    assert!(raw.check_stat(&path).await.unwrap().is_none());
    assert!(!node.close().await.unwrap(), "closed already");
    let generation = session.status().generation;
    expire(&session).await;
    let mut status = session.subscribe();
    status.wait_for(|s| s.generation > generation && s.state == zoolock::SessionState::Connected).await.unwrap();
    session.exists(&path).await.unwrap();
    assert!(raw.check_stat(&path).await.unwrap().is_none(), "a closed node is not made again");
}

/// Another session's node at the path (an earlier process's, not yet
/// expired) is waited out, never changed or deleted.
#[tokio::test(flavor = "multi_thread")]
async fn a_node_of_another_session_is_waited_out_and_left_alone() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let (session, earlier) = (session(&connect).await, session(&connect).await);
    let path = format!("{}/worker-1", unique_path("registry-earlier"));
    let node = PersistentNode::new(&session, &path, b"mine".to_vec()).unwrap();
    let made = zoolock::Create::default().ephemeral().makepath();
    earlier.create(&path, Some(b"earlier"), &made).await.unwrap();
    let starting = tokio::spawn({
        let node = node.clone();
        async move { node.start().await }
    });
    watched_by(&path, session.status().session_id).await;
    assert!(!node.is_started());
    earlier.close().await;
    starting.await.unwrap().unwrap();
    until_node(&raw, &path, b"mine", session.status().session_id).await;

    // Replaced at once by another session's node (one transaction): that
    // one is neither changed nor deleted, and ours comes back once it goes.
    let other = zoolock::Session::connect(zoolock::SessionOptions::new(&connect)).await.unwrap();
    let ephemeral = zoolock::Create::default().ephemeral();
    other.transaction().delete(&path, None).create(&path, Some(b"other"), ephemeral).commit().await.unwrap();
    node.set_data(b"changed".to_vec()).await.unwrap();
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"other", "another's node is not changed");
    other.close().await;
    until_node(&raw, &path, b"changed", session.status().session_id).await;
    assert!(node.close().await.unwrap());
}

/// A close while a start waits out another's node ends the start, and
/// nothing is made once that node goes (the review's case: the start used
/// to go on and keep the node the close had deleted).
#[tokio::test(flavor = "multi_thread")]
async fn a_close_ends_a_pending_start_and_nothing_is_kept() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let (session, earlier) = (session(&connect).await, session(&connect).await);
    let path = format!("{}/worker-1", unique_path("registry-close-pending"));
    let made = zoolock::Create::default().ephemeral().makepath();
    earlier.create(&path, Some(b"earlier"), &made).await.unwrap();
    let node = PersistentNode::new(&session, &path, b"mine".to_vec()).unwrap();
    let starting = tokio::spawn({
        let node = node.clone();
        async move { node.start().await }
    });
    watched_by(&path, session.status().session_id).await;
    assert!(!node.close().await.unwrap(), "another's node is not deleted");
    assert!(matches!(starting.await.unwrap(), Err(Error::Cancelled { .. })));
    assert!(!node.is_started());
    earlier.close().await;
    // The server has our session's requests in order: a create sent before
    // this read would show in it.
    session.exists(&path).await.unwrap();
    assert!(raw.check_stat(&path).await.unwrap().is_none(), "nothing made after the close");
}

/// A persistent node at the path goes with no session: no one's to wait
/// out, and never taken as this one's.
#[tokio::test(flavor = "multi_thread")]
async fn a_persistent_node_at_the_path_is_refused() {
    let connect = shared_server();
    let session = session(&connect).await;
    let path = format!("{}/worker-1", unique_path("registry-persistent"));
    session.create(&path, Some(b"by hand"), &zoolock::Create::default().makepath()).await.unwrap();
    let node = PersistentNode::new(&session, &path, b"mine".to_vec()).unwrap();
    assert!(matches!(node.start().await, Err(Error::NodeExists { .. })));
    assert!(!node.is_started());
    assert!(!node.close().await.unwrap());
    assert_eq!(session.get(&path).await.unwrap().0.as_deref(), Some(&b"by hand"[..]));
}

/// Every handle dropped without a close: the node stays with its session
/// (as a lock's holder dropped while holding), but is no longer kept.
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_node_is_no_longer_made_again() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = format!("{}/worker-1", unique_path("registry-dropped"));
    let node = PersistentNode::new(&session, &path, b"dropped".to_vec()).unwrap();
    node.start().await.unwrap();
    drop(node);
    assert!(raw.check_stat(&path).await.unwrap().is_some(), "the node stays with its session");
    raw.delete(&path, None).await.unwrap();
    session.create(&format!("{path}-probe"), Some(b""), &zoolock::Create::default()).await.unwrap();
    // A keeper still running would have been woken by the deletion before
    // the probe's create was answered on this session, and its create sent.
    session.exists(&path).await.unwrap();
    assert!(raw.check_stat(&path).await.unwrap().is_none(), "not made again once dropped");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_arguments_are_refused_before_anything_is_sent() {
    let connect = shared_server();
    let session = session(&connect).await;
    for path in ["", "relative", "/", "/a/", "/a//b", "/zookeeper/x"] {
        assert!(
            matches!(
                PersistentNode::new(&session, path, Vec::new()),
                Err(Error::InvalidPath { .. } | Error::InvalidArgument(_))
            ),
            "{path:?}"
        );
    }
    let too_big = vec![0u8; zoolock::MAX_IDENTIFIER_BYTES + 1];
    assert!(matches!(PersistentNode::new(&session, "/a/b", too_big.clone()), Err(Error::InvalidArgument(_))));
    let node = PersistentNode::new(&session, "/a/b", Vec::new()).unwrap();
    assert!(matches!(node.set_data(too_big).await, Err(Error::InvalidArgument(_))));
}

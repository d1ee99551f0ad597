//! kazoo's one-shot watches (`get`, `exists`, `get_children` with
//! `watch=`) in the core: set by the read's own request, called once on
//! the watch thread, in the order the server sent the events.

mod common;

use std::time::Duration;

use common::*;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::timeout;
use zoolock::{Create, Error, WatchEvent, WatchEventKind};

async fn next(calls: &mut UnboundedReceiver<WatchEvent>) -> WatchEvent {
    timeout(Duration::from_secs(20), calls.recv()).await.expect("no call within 20 s").expect("watch gone")
}

fn event(kind: WatchEventKind, path: &str) -> WatchEvent {
    WatchEvent { kind, path: path.to_owned() }
}

/// Deletes sent back to back by another client (its requests are
/// pipelined) make the events arrive together; each node is watched for
/// data and for children, as kazoo's TreeCache watches it. Separate tasks
/// per watch called back out of order at once on this test.
#[tokio::test(flavor = "multi_thread")]
async fn one_shot_watches_keep_the_servers_order() {
    let session = session(&shared_server()).await;
    let writer = raw(&shared_server()).await;
    let base = unique_path("one-shot-order");
    session.ensure_path(&base, None).await.unwrap();
    let names: Vec<String> = (0..100).map(|i| format!("{base}/n{i:03}")).collect();
    let (tx, mut calls) = unbounded_channel();
    let mut watches = Vec::new();
    for name in &names {
        session.create(name, None, &Create::default()).await.unwrap();
        let (tx_data, tx_children) = (tx.clone(), tx.clone());
        watches.push(session.get_watched(name, move |e| drop(tx_data.send(e))).await.unwrap().1);
        watches.push(session.children_watched(name, move |e| drop(tx_children.send(e))).await.unwrap().1);
    }
    let deletes: Vec<_> = names.iter().map(|name| writer.delete(name, None)).collect();
    for deleted in deletes {
        deleted.await.unwrap();
    }
    for name in &names {
        for _ in 0..2 {
            assert_eq!(next(&mut calls).await, event(WatchEventKind::Deleted, name));
        }
    }
    assert!(watches.iter().all(|w| w.is_stopped()), "each watch ended with its call");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_shot_watch_reads_and_calls_once_at_the_next_change() {
    let session = session(&shared_server()).await;
    let node = unique_path("one-shot-once");
    session.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel();
    let caller = std::thread::current().id();
    let ((data, stat), watch) = session
        .get_watched(&node, move |e| {
            assert_eq!(std::thread::current().name(), Some("zoolock-watches"));
            assert_ne!(std::thread::current().id(), caller);
            let _ = tx.send(e);
        })
        .await
        .unwrap();
    assert_eq!((data.as_deref(), stat.version), (Some(&b"0"[..]), 0));
    session.set(&node, Some(b"1"), None).await.unwrap();
    assert_eq!(next(&mut calls).await, event(WatchEventKind::Changed, &node));
    session.set(&node, Some(b"2"), None).await.unwrap();
    session.sync(&node).await.unwrap();
    assert!(watch.is_stopped());
    // The sender went with the callback: no second call can come.
    assert!(timeout(Duration::from_secs(20), calls.recv()).await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_exists_watch_on_a_missing_node_calls_at_its_creation_a_failed_read_sets_none() {
    let session = session(&shared_server()).await;
    let node = unique_path("one-shot-exists");
    let (tx, mut calls) = unbounded_channel();
    let (stat, _watch) = session.exists_watched(&node, move |e| drop(tx.send(e))).await.unwrap();
    assert!(stat.is_none());
    session.create(&node, None, &Create::default().makepath()).await.unwrap();
    assert_eq!(next(&mut calls).await, event(WatchEventKind::Created, &node));

    let missing = format!("{node}/missing");
    let refused = session.get_watched(&missing, |_| panic!("no watch on a failed read")).await;
    assert!(matches!(refused, Err(Error::NoNode { .. })), "{refused:?}");
    let refused = session.children_watched(&missing, |_| panic!("no watch on a failed read")).await;
    assert!(matches!(refused, Err(Error::NoNode { .. })), "{refused:?}");
    let refused = session.get_watched("no/slash", |_| panic!("no watch on a bad path")).await;
    assert!(matches!(refused, Err(Error::InvalidPath { .. })), "{refused:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_children_watch_calls_at_a_child_or_at_the_nodes_deletion() {
    let session = session(&shared_server()).await;
    let node = unique_path("one-shot-children");
    session.create(&node, None, &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel();
    let sender = tx.clone();
    let ((children, _), _child) = session.children_watched(&node, move |e| drop(sender.send(e))).await.unwrap();
    assert!(children.is_empty());
    session.create(&format!("{node}/c"), None, &Create::default()).await.unwrap();
    assert_eq!(next(&mut calls).await, event(WatchEventKind::Child, &node));
    let (_, _deletion) = session.children_watched(&node, move |e| drop(tx.send(e))).await.unwrap();
    session.delete(&node, None, true).await.unwrap();
    // The recursive delete removed the child first: that is the call.
    assert_eq!(next(&mut calls).await, event(WatchEventKind::Child, &node));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_or_dropped_one_shot_watch_never_calls_and_leaves_no_mark() {
    let session = session(&shared_server()).await;
    let node = unique_path("one-shot-stop");
    session.create(&node, None, &Create::default().makepath()).await.unwrap();
    let marks = session.data_watched_paths();
    let (tx, mut calls) = unbounded_channel();
    let sender = tx.clone();
    let (_, stopped) = session.get_watched(&node, move |e| drop(sender.send(e))).await.unwrap();
    let (_, dropped) = session.exists_watched(&node, move |e| drop(tx.send(e))).await.unwrap();
    stopped.stop();
    drop(dropped);
    assert!(stopped.is_stopped());
    session.set(&node, Some(b"1"), None).await.unwrap();
    // Both callbacks (and their senders) are dropped without a call.
    assert!(timeout(Duration::from_secs(20), calls.recv()).await.unwrap().is_none());
    // The mark goes with the rest of the ended watch (no event tells when).
    let unmarked = async {
        while session.data_watched_paths() != marks {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };
    timeout(Duration::from_secs(20), unmarked).await.expect("the marks of ended watches go");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_one_shot_watch_ends_without_a_call_when_its_session_closes() {
    let session = session(&shared_server()).await;
    let node = unique_path("one-shot-close");
    session.create(&node, None, &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel();
    let (_, watch) = session.get_watched(&node, move |e| drop(tx.send(e))).await.unwrap();
    session.close().await;
    assert!(timeout(Duration::from_secs(20), calls.recv()).await.unwrap().is_none());
    assert!(watch.is_stopped());
    let closed = session.get_watched(&node, |_| {}).await;
    assert!(matches!(closed, Err(Error::Closed)), "{closed:?}");
}

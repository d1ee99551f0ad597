//! kazoo's DataWatch and ChildrenWatch semantics in the core: a call at
//! once, then one per change, through deletion and re-creation, stopping
//! when the callback says so or the handle goes, and across a session expiry.

mod common;

use std::time::Duration;

use common::*;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::timeout;
use zoolock::{ChildrenWatch, Create, DataWatch, Error, Stat, WatchEvent, WatchEventKind};

type DataCall = (Option<(Vec<u8>, Stat)>, Option<WatchEvent>);

async fn next<T>(calls: &mut UnboundedReceiver<T>) -> T {
    timeout(Duration::from_secs(20), calls.recv()).await.expect("no call within 20 s").expect("watch gone")
}

fn data(call: &DataCall) -> Option<&[u8]> {
    call.0.as_ref().map(|(data, _)| data.as_slice())
}

fn kind<T>(call: &(T, Option<WatchEvent>)) -> Option<WatchEventKind> {
    call.1.as_ref().map(|e| e.kind)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_follows_the_node_through_deletion_and_re_creation() {
    let session = session(&shared_server()).await;
    let writer = common::session(&shared_server()).await;
    let node = unique_path("data-watch");
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let watch = DataWatch::start(&session, &node, move |value, event| {
        assert_eq!(std::thread::current().name(), Some("zoolock-events"));
        tx.send((value, event)).is_ok()
    })
    .await
    .unwrap();
    // The first call ran before start returned: the node is absent.
    let first = calls.try_recv().expect("the first call runs before start returns");
    assert_eq!(first, (None, None));

    writer.create(&node, b"v1", &Create::default().makepath()).await.unwrap();
    let created = next(&mut calls).await;
    assert_eq!((data(&created), kind(&created)), (Some(&b"v1"[..]), Some(WatchEventKind::Created)));
    writer.set(&node, b"v2", None).await.unwrap();
    let changed = next(&mut calls).await;
    assert_eq!((data(&changed), kind(&changed)), (Some(&b"v2"[..]), Some(WatchEventKind::Changed)));
    assert_eq!(changed.0.as_ref().unwrap().1.version, 1);
    assert_eq!(changed.1.as_ref().unwrap().path, node);
    writer.delete(&node, None, false).await.unwrap();
    let deleted = next(&mut calls).await;
    assert_eq!((data(&deleted), kind(&deleted)), (None, Some(WatchEventKind::Deleted)));
    writer.create(&node, b"v3", &Create::default()).await.unwrap();
    let again = next(&mut calls).await;
    assert_eq!((data(&again), kind(&again)), (Some(&b"v3"[..]), Some(WatchEventKind::Created)));
    assert!(!watch.is_stopped());
    drop(watch);
    writer.delete(&node, None, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_stops_when_its_callback_returns_false_or_its_handle_goes() {
    let session = session(&shared_server()).await;
    let node = unique_path("data-stop");
    session.create(&node, b"0", &Create::default().makepath()).await.unwrap();
    // Stops after its second call.
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let stopping = DataWatch::start(&session, &node, move |value, event| {
        let _ = tx.send((value, event));
        false
    })
    .await
    .unwrap();
    assert!(stopping.is_stopped(), "the first call returned false");
    let (tx, mut dropped_calls) = unbounded_channel::<DataCall>();
    let dropped = DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    // A witness: its calls come after the others' would have.
    let (tx, mut witness) = unbounded_channel::<DataCall>();
    let _witness =
        DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"0"[..]));
    assert_eq!(data(&next(&mut dropped_calls).await), Some(&b"0"[..]));
    assert_eq!(data(&next(&mut witness).await), Some(&b"0"[..]));
    drop(dropped);

    for value in [b"1", b"2"] {
        session.set(&node, value, None).await.unwrap();
        assert_eq!(data(&next(&mut witness).await), Some(&value[..]));
    }
    assert!(calls.try_recv().is_err(), "a watch whose callback returned false was called again");
    assert!(dropped_calls.try_recv().is_err(), "a dropped watch was called");
    session.delete(&node, None, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_reads_again_on_the_new_session_after_an_expiry() {
    let session = session(&shared_server()).await;
    let writer = common::session(&shared_server()).await;
    let node = unique_path("data-expiry");
    writer.create(&node, b"before", &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let _watch = DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"before"[..]));

    // The session expires; while it is gone the node changes.
    let id = session.status().session_id;
    inject(move || zk_harness::shared().partition(id).unwrap()).await;
    writer.set(&node, b"meanwhile", None).await.unwrap();
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    inject(move || zk_harness::shared().heal(id).unwrap()).await;
    let call = next(&mut calls).await;
    assert_eq!(data(&call), Some(&b"meanwhile"[..]));
    assert_ne!(session.status().session_id, id, "read on the new session");
    // And it watches on the new session: the next change is the next call (no repeat).
    writer.set(&node, b"after", None).await.unwrap();
    let call = next(&mut calls).await;
    assert_eq!((data(&call), kind(&call)), (Some(&b"after"[..]), Some(WatchEventKind::Changed)));
    writer.delete(&node, None, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_calls_nothing_new_after_an_expiry_if_nothing_changed() {
    let session = session(&shared_server()).await;
    let writer = common::session(&shared_server()).await;
    let node = unique_path("data-expiry-same");
    writer.create(&node, b"same", &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let _watch = DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"same"[..]));
    let id = session.status().session_id;
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    let mut status = session.subscribe();
    timeout(
        Duration::from_secs(20),
        status.wait_for(|s| s.generation > 1 && s.state == zoolock::SessionState::Connected),
    )
    .await
    .unwrap()
    .unwrap();
    // The re-read on the new session found the same mzxid: the next call is
    // this change (seen by the new watch, or by the re-read if that comes later).
    writer.set(&node, b"changed", None).await.unwrap();
    let call = next(&mut calls).await;
    assert_eq!(data(&call), Some(&b"changed"[..]), "called again with unchanged data after the expiry");
    assert!(matches!(kind(&call), None | Some(WatchEventKind::Changed)));
    writer.delete(&node, None, false).await.unwrap();
}

type ChildrenCall = (Vec<String>, Option<WatchEvent>);

fn sorted(call: &ChildrenCall) -> Vec<String> {
    let mut names = call.0.clone();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread")]
async fn a_children_watch_lists_at_once_then_on_each_change() {
    let session = session(&shared_server()).await;
    let parent = unique_path("children-watch");
    assert!(matches!(ChildrenWatch::start(&session, &parent, |_, _| true).await, Err(Error::NoNode { .. })));
    session.create(&format!("{parent}/a"), b"", &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<ChildrenCall>();
    let watch = ChildrenWatch::start(&session, &parent, move |children, event| tx.send((children, event)).is_ok())
        .await
        .unwrap();
    assert_eq!(calls.try_recv().expect("first call before start returns"), (vec!["a".to_string()], None));
    session.create(&format!("{parent}/b"), b"", &Create::default()).await.unwrap();
    let call = next(&mut calls).await;
    assert_eq!((sorted(&call), kind(&call)), (vec!["a".to_string(), "b".to_string()], Some(WatchEventKind::Child)));
    assert_eq!(call.1.as_ref().unwrap().path, parent);
    session.delete(&format!("{parent}/a"), None, false).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["b"]);
    // Data changes of the parent are no children changes.
    session.set(&parent, b"x", None).await.unwrap();
    session.create(&format!("{parent}/c"), b"", &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["b", "c"]);
    watch.stop();
    assert!(watch.is_stopped());
    session.create(&format!("{parent}/d"), b"", &Create::default()).await.unwrap();
    session.delete(&parent, None, true).await.unwrap();
    assert!(calls.try_recv().is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_children_watch_stops_on_false_and_when_its_node_is_deleted() {
    let session = session(&shared_server()).await;
    let parent = unique_path("children-stop");
    session.ensure_path(&parent, None).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<ChildrenCall>();
    let stopping = ChildrenWatch::start(&session, &parent, move |children, event| {
        let more = children.is_empty();
        let _ = tx.send((children, event));
        more
    })
    .await
    .unwrap();
    let (tx, mut witness) = unbounded_channel::<ChildrenCall>();
    let deleted = ChildrenWatch::start(&session, &parent, move |children, event| tx.send((children, event)).is_ok())
        .await
        .unwrap();
    assert!(next(&mut calls).await.0.is_empty());
    assert!(next(&mut witness).await.0.is_empty());
    session.create(&format!("{parent}/one"), b"", &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["one"]);
    assert_eq!(sorted(&next(&mut witness).await), ["one"]);
    session.create(&format!("{parent}/two"), b"", &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut witness).await), ["one", "two"]);
    // Callbacks run one at a time on the event thread, and this one was queued
    // after "one"'s call had sent (and so started): that call has returned.
    // (Just after its send, it may not have: the flag is set when it returns.)
    assert!(stopping.is_stopped(), "the callback returned false");
    assert!(calls.try_recv().is_err(), "called after returning false");

    // kazoo's: the node's deletion ends the watch, without a call.
    session.delete(&parent, None, true).await.unwrap();
    let ended = async {
        while !deleted.is_stopped() {
            // No event says "this watch ended" but its own flag: look again shortly.
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    };
    timeout(Duration::from_secs(20), ended).await.expect("the watch of a deleted node did not end");
    // Two children changes (the deletes of "one", "two") may still be called; nothing after the end.
    while let Ok(call) = witness.try_recv() {
        assert!(call.1.is_some());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_children_watch_calls_after_an_expiry_only_if_the_children_changed() {
    let session = session(&shared_server()).await;
    let writer = common::session(&shared_server()).await;
    let parent = unique_path("children-expiry");
    writer.ensure_path(&parent, None).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<ChildrenCall>();
    let _watch = ChildrenWatch::start(&session, &parent, move |children, event| tx.send((children, event)).is_ok())
        .await
        .unwrap();
    assert!(next(&mut calls).await.0.is_empty());
    let id = session.status().session_id;
    inject(move || zk_harness::shared().partition(id).unwrap()).await;
    writer.create(&format!("{parent}/while-away"), b"", &Create::default()).await.unwrap();
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    inject(move || zk_harness::shared().heal(id).unwrap()).await;
    // Called once for the change (its notice, held by the partition, may come before the expiry is seen).
    assert_eq!(sorted(&next(&mut calls).await), ["while-away"]);
    writer.create(&format!("{parent}/later"), b"", &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["later", "while-away"]);
    writer.delete(&parent, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn watches_refuse_bad_paths() {
    let session = session(&shared_server()).await;
    assert!(matches!(DataWatch::start(&session, "relative", |_, _| true).await, Err(Error::InvalidPath { .. })));
    assert!(matches!(ChildrenWatch::start(&session, "/a/", |_, _| true).await, Err(Error::InvalidPath { .. })));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_survives_a_reconnect_of_the_same_session() {
    let session = session(&shared_server()).await;
    let writer = common::session(&shared_server()).await;
    let node = unique_path("data-reconnect");
    writer.create(&node, b"before", &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let _watch = DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"before"[..]));

    let id = session.status().session_id;
    inject(move || zk_harness::shared().partition(id).unwrap()).await;
    let mut status = session.subscribe();
    timeout(Duration::from_secs(20), status.wait_for(|s| s.state == zoolock::SessionState::Suspended))
        .await
        .unwrap()
        .unwrap();
    writer.set(&node, b"while-suspended", None).await.unwrap();
    // Drop the held bytes' connection too, so that the client reconnects.
    inject(move || {
        zk_harness::shared().drop_connections(id).unwrap();
        zk_harness::shared().heal(id).unwrap()
    })
    .await;
    let call = next(&mut calls).await;
    assert_eq!(data(&call), Some(&b"while-suspended"[..]));
    assert_eq!(session.status().session_id, id, "the same session");
    writer.set(&node, b"after", None).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"after"[..]));
    writer.delete(&node, None, false).await.unwrap();
}

/// A session remembers the paths it may hold a data watch on (so that no
/// lock mirrors them: mirror.rs, point 6) only while it may: a watch that
/// fired or was stopped leaves no record, however many paths were watched.
#[tokio::test(flavor = "multi_thread")]
async fn stopped_data_watches_leave_no_record_behind() {
    let session = session(&shared_server()).await;
    let base = unique_path("data-watch-records");
    let mut watches = Vec::new();
    for i in 0..50 {
        let node = format!("{base}/n{i}");
        session.create(&node, b"", &Create::default().makepath()).await.unwrap();
        watches.push(DataWatch::start(&session, &node, |_, _| true).await.unwrap());
    }
    assert_eq!(session.data_watched_paths(), 50);
    drop(watches);
    // A stopped watch's task ends at its next poll on the runtime: no event
    // tells when, so wait for the count, bounded.
    let emptied = timeout(Duration::from_secs(10), async {
        while session.data_watched_paths() > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
    emptied.await.unwrap_or_else(|_| panic!("{} paths still recorded", session.data_watched_paths()));
    session.delete(&base, None, true).await.unwrap();
}

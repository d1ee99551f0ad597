//! kazoo's DataWatch and ChildrenWatch semantics in the core: a call at
//! once, then one per change, through deletion and re-creation, stopping
//! when the callback says so or the handle goes, and across a session expiry.

mod common;

use std::time::Duration;

use common::*;
use tokio::sync::mpsc::{unbounded_channel, UnboundedReceiver};
use tokio::time::timeout;
use zoolock::{ChildrenWatch, Create, DataWatch, Error, Stat, WatchEvent, WatchEventKind};

type DataCall = (Option<(Option<Vec<u8>>, Stat)>, Option<WatchEvent>);

async fn next<T>(calls: &mut UnboundedReceiver<T>) -> T {
    timeout(Duration::from_secs(20), calls.recv()).await.expect("no call within 20 s").expect("watch gone")
}

fn data(call: &DataCall) -> Option<&[u8]> {
    call.0.as_ref().and_then(|(data, _)| data.as_deref())
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
    let caller = std::thread::current().id();
    let first_call = std::sync::atomic::AtomicBool::new(true);
    let watch = DataWatch::start(&session, &node, move |value, event| {
        // kazoo's: the first call in the constructing thread, the rest on the session's watch thread.
        if first_call.swap(false, std::sync::atomic::Ordering::Relaxed) {
            assert_eq!(std::thread::current().id(), caller);
        } else {
            assert_eq!(std::thread::current().name(), Some("zoolock-watches"));
        }
        tx.send((value, event)).is_ok()
    })
    .await
    .unwrap();
    // The first call ran before start returned: the node is absent.
    let first = calls.try_recv().expect("the first call runs before start returns");
    assert_eq!(first, (None, None));

    writer.create(&node, Some(b"v1"), &Create::default().makepath()).await.unwrap();
    let created = next(&mut calls).await;
    assert_eq!((data(&created), kind(&created)), (Some(&b"v1"[..]), Some(WatchEventKind::Created)));
    writer.set(&node, Some(b"v2"), None).await.unwrap();
    let changed = next(&mut calls).await;
    assert_eq!((data(&changed), kind(&changed)), (Some(&b"v2"[..]), Some(WatchEventKind::Changed)));
    assert_eq!(changed.0.as_ref().unwrap().1.version, 1);
    assert_eq!(changed.1.as_ref().unwrap().path, node);
    writer.delete(&node, None, false).await.unwrap();
    let deleted = next(&mut calls).await;
    assert_eq!((data(&deleted), kind(&deleted)), (None, Some(WatchEventKind::Deleted)));
    writer.create(&node, Some(b"v3"), &Create::default()).await.unwrap();
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
    session.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
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
        session.set(&node, Some(value), None).await.unwrap();
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
    writer.create(&node, Some(b"before"), &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let _watch = DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"before"[..]));

    // The session expires; while it is gone the node changes.
    let id = session.status().session_id;
    inject(move || zk_harness::shared().partition(id).unwrap()).await;
    writer.set(&node, Some(b"meanwhile"), None).await.unwrap();
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    inject(move || zk_harness::shared().heal(id).unwrap()).await;
    let call = next(&mut calls).await;
    assert_eq!(data(&call), Some(&b"meanwhile"[..]));
    assert_ne!(session.status().session_id, id, "read on the new session");
    // And it watches on the new session: the next change is the next call (no repeat).
    writer.set(&node, Some(b"after"), None).await.unwrap();
    let call = next(&mut calls).await;
    assert_eq!((data(&call), kind(&call)), (Some(&b"after"[..]), Some(WatchEventKind::Changed)));
    writer.delete(&node, None, false).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_calls_nothing_new_after_an_expiry_if_nothing_changed() {
    let session = session(&shared_server()).await;
    let writer = common::session(&shared_server()).await;
    let node = unique_path("data-expiry-same");
    writer.create(&node, Some(b"same"), &Create::default().makepath()).await.unwrap();
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
    writer.set(&node, Some(b"changed"), None).await.unwrap();
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
    session.create(&format!("{parent}/a"), Some(b""), &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<ChildrenCall>();
    let watch = ChildrenWatch::start(&session, &parent, move |children, event| tx.send((children, event)).is_ok())
        .await
        .unwrap();
    assert_eq!(calls.try_recv().expect("first call before start returns"), (vec!["a".to_string()], None));
    session.create(&format!("{parent}/b"), Some(b""), &Create::default()).await.unwrap();
    let call = next(&mut calls).await;
    assert_eq!((sorted(&call), kind(&call)), (vec!["a".to_string(), "b".to_string()], Some(WatchEventKind::Child)));
    assert_eq!(call.1.as_ref().unwrap().path, parent);
    session.delete(&format!("{parent}/a"), None, false).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["b"]);
    // Data changes of the parent are no children changes.
    session.set(&parent, Some(b"x"), None).await.unwrap();
    session.create(&format!("{parent}/c"), Some(b""), &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["b", "c"]);
    watch.stop();
    assert!(watch.is_stopped());
    session.create(&format!("{parent}/d"), Some(b""), &Create::default()).await.unwrap();
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
    session.create(&format!("{parent}/one"), Some(b""), &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut calls).await), ["one"]);
    assert_eq!(sorted(&next(&mut witness).await), ["one"]);
    session.create(&format!("{parent}/two"), Some(b""), &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut witness).await), ["one", "two"]);
    // Callbacks run one at a time on the watch thread, and this one was queued
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
    writer.create(&format!("{parent}/while-away"), Some(b""), &Create::default()).await.unwrap();
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    inject(move || zk_harness::shared().heal(id).unwrap()).await;
    // Called once for the change (its notice, held by the partition, may come before the expiry is seen).
    assert_eq!(sorted(&next(&mut calls).await), ["while-away"]);
    writer.create(&format!("{parent}/later"), Some(b""), &Create::default()).await.unwrap();
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
    writer.create(&node, Some(b"before"), &Create::default().makepath()).await.unwrap();
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
    writer.set(&node, Some(b"while-suspended"), None).await.unwrap();
    // Drop the held bytes' connection too, so that the client reconnects.
    inject(move || {
        zk_harness::shared().drop_connections(id).unwrap();
        zk_harness::shared().heal(id).unwrap()
    })
    .await;
    let call = next(&mut calls).await;
    assert_eq!(data(&call), Some(&b"while-suspended"[..]));
    assert_eq!(session.status().session_id, id, "the same session");
    writer.set(&node, Some(b"after"), None).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"after"[..]));
    writer.delete(&node, None, false).await.unwrap();
}

/// A session remembers the paths it may hold a data watch on (so that no
/// lock mirrors them: mirror/mod.rs, point 6) only while it may: a watch that
/// fired or was stopped leaves no record, however many paths were watched.
#[tokio::test(flavor = "multi_thread")]
async fn stopped_data_watches_leave_no_record_behind() {
    let session = session(&shared_server()).await;
    let base = unique_path("data-watch-records");
    let mut watches = Vec::new();
    for i in 0..50 {
        let node = format!("{base}/n{i}");
        session.create(&node, Some(b""), &Create::default().makepath()).await.unwrap();
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

/// A watch of `node` on `session` whose callback, at the node's first
/// change, waits until the returned gate is dropped: the session's watch
/// thread is stuck there until then. Returns once it is.
async fn block_watch_thread(session: &zoolock::Session, node: &str) -> (DataWatch, std::sync::mpsc::Sender<()>) {
    let (entered_tx, entered) = std::sync::mpsc::channel();
    let (gate, wait) = std::sync::mpsc::channel::<()>();
    let wait = std::sync::Mutex::new(wait);
    let watch = DataWatch::start(session, node, move |_, event| {
        if event.is_some() {
            let _ = entered_tx.send(());
            let _ = wait.lock().unwrap().recv();
        }
        true
    })
    .await
    .unwrap();
    session.set(node, Some(b"block"), None).await.unwrap();
    inject(move || entered.recv_timeout(Duration::from_secs(20))).await.expect("the callback never blocked");
    (watch, gate)
}

/// kazoo's LockingQueue registers a watch while it holds what its earlier
/// watch callback waits for: a registration waits for the server's reply,
/// never for the watch thread.
#[tokio::test(flavor = "multi_thread")]
async fn registering_a_watch_never_waits_for_a_blocked_callback() {
    let session = session(&shared_server()).await;
    let node = unique_path("blocked-registration");
    session.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let (_blocked, gate) = block_watch_thread(&session, &node).await;

    let registrations = async {
        let (tx, mut calls) = unbounded_channel::<DataCall>();
        let watch =
            DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
        assert_eq!(data(&calls.try_recv().expect("the first call, made by start")), Some(&b"block"[..]));
        let (tx, mut calls) = unbounded_channel::<ChildrenCall>();
        let parent = node.rsplit_once('/').unwrap().0.to_owned();
        let children =
            ChildrenWatch::start(&session, &parent, move |names, event| tx.send((names, event)).is_ok()).await.unwrap();
        assert!(calls.try_recv().is_ok(), "the first call, made by start");
        let from = DataWatch::start_from(&session, &node, None, |_, _| true).await.unwrap();
        (watch, children, from)
    };
    let watches =
        timeout(Duration::from_secs(20), registrations).await.expect("a registration waited for the blocked callback");
    drop(gate);
    drop(watches);
    session.delete(&node, None, false).await.unwrap();
}

/// Each session's watch calls run on a thread of its own (kazoo: a callback
/// thread per client): one session's blocked callback delays no other's.
#[tokio::test(flavor = "multi_thread")]
async fn a_blocked_callback_delays_no_other_sessions_watches() {
    let blocked = session(&shared_server()).await;
    let free = session(&shared_server()).await;
    let node = unique_path("blocked-elsewhere");
    blocked.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let (_blocked, gate) = block_watch_thread(&blocked, &node).await;

    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let registration = DataWatch::start(&free, &node, move |value, event| tx.send((value, event)).is_ok());
    let _watch = timeout(Duration::from_secs(20), registration).await.expect("waited for the other session's callback");
    assert_eq!(data(&calls.try_recv().unwrap()), Some(&b"block"[..]));
    free.set(&node, Some(b"next"), None).await.unwrap();
    assert_eq!(data(&next(&mut calls).await), Some(&b"next"[..]));
    drop(gate);
    free.delete(&node, None, false).await.unwrap();
}

/// The first call, made by `start` in the caller's thread, comes before every
/// later call: a change during it is called back only once it returned.
#[tokio::test(flavor = "multi_thread")]
async fn a_change_during_the_first_call_is_called_back_after_it() {
    let session = session(&shared_server()).await;
    let node = unique_path("first-then-next");
    session.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let connect = shared_server();
    let (tx, mut calls) = unbounded_channel::<(Option<Vec<u8>>, bool)>();
    let first_done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let done = first_done.clone();
    let changer = node.clone();
    let _watch = DataWatch::start(&session, &node, move |value, _| {
        let value = value.map(|(data, _)| data).unwrap_or_default();
        let after_first = done.load(std::sync::atomic::Ordering::Acquire);
        if !after_first {
            // Changed (and the change's notice sent) while this first call runs.
            let (connect, node) = (connect.clone(), changer.clone());
            std::thread::spawn(move || {
                let writer = zoolock::Session::connect_blocking(zoolock::SessionOptions::new(connect)).unwrap();
                writer.set_blocking(&node, Some(b"1"), None).unwrap();
                writer.close_blocking();
            })
            .join()
            .unwrap();
            std::thread::sleep(Duration::from_millis(200)); // room for an early call to show
        }
        let _ = tx.send((value, after_first));
        done.store(true, std::sync::atomic::Ordering::Release);
        true
    })
    .await
    .unwrap();
    assert_eq!(calls.try_recv().unwrap(), (Some(b"0".to_vec()), false));
    assert_eq!(next(&mut calls).await, (Some(b"1".to_vec()), true), "a later call ran before the first returned");
    session.delete(&node, None, false).await.unwrap();
}

/// `start_from` calls back only at a change after the state given, on the
/// watch thread, never in the registering call: kazoo's one-shot `watch=`
/// and a watch resumed on a new session.
#[tokio::test(flavor = "multi_thread")]
async fn a_watch_started_from_a_seen_state_calls_only_at_a_change() {
    let session = session(&shared_server()).await;
    let base = unique_path("start-from");
    let node = format!("{base}/n");
    let (_, stat) = session.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let caller = std::thread::current().id();
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    let _same = DataWatch::start_from(&session, &node, Some(stat.mzxid), move |value, event| {
        assert_ne!(std::thread::current().id(), caller);
        tx.send((value, event)).is_ok()
    })
    .await
    .unwrap();
    let (tx, mut children) = unbounded_channel::<ChildrenCall>();
    let _listed = ChildrenWatch::start_from(&session, &base, vec!["n".into()], move |names, event| {
        tx.send((names, event)).is_ok()
    })
    .await
    .unwrap();
    // Seen as absent, but there: called at once (with no event), on the watch thread.
    let (tx, mut stale) = unbounded_channel::<DataCall>();
    let _stale = DataWatch::start_from(&session, &node, None, move |value, event| {
        assert_ne!(std::thread::current().id(), caller);
        tx.send((value, event)).is_ok()
    })
    .await
    .unwrap();
    let call = next(&mut stale).await;
    assert_eq!((data(&call), kind(&call)), (Some(&b"0"[..]), None));
    assert!(calls.try_recv().is_err() && children.try_recv().is_err(), "called without a change");

    session.set(&node, Some(b"1"), None).await.unwrap();
    let call = next(&mut calls).await;
    assert_eq!((data(&call), kind(&call)), (Some(&b"1"[..]), Some(WatchEventKind::Changed)));
    session.create(&format!("{base}/m"), Some(b""), &Create::default()).await.unwrap();
    assert_eq!(sorted(&next(&mut children).await), ["m", "n"]);
    assert!(matches!(
        ChildrenWatch::start_from(&session, &format!("{base}/none"), Vec::new(), |_, _| true).await,
        Err(Error::NoNode { .. })
    ));
    session.delete(&base, None, true).await.unwrap();
}

/// Polls `future` once, as a timeout or a select around it may before giving it up, and drops it.
/// Polls a start once and drops it: true if that left it pending (given up
/// mid-start). On a loaded machine the first read may be answered within
/// that one poll; the watch it started is then dropped, which ends it too.
async fn poll_once_and_drop<T>(future: impl std::future::Future<Output = T>) -> bool {
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| std::task::Poll::Ready(future.as_mut().poll(cx).is_pending())).await
}

/// A start given up after its first poll (a timeout around it, Ctrl-C in a
/// binding) leaves no watch behind: nothing is called later.
#[tokio::test(flavor = "multi_thread")]
async fn a_start_given_up_leaves_no_watch_running() {
    let session = session(&shared_server()).await;
    let node = unique_path("given-up");
    session.create(&node, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let (tx, mut calls) = unbounded_channel::<DataCall>();
    // Each polled once (its task is spawned, its first read sent), then
    // dropped; tried again while the first poll happens to finish the start.
    let mut given_up = (false, false);
    for _ in 0..20 {
        let (tx1, tx2) = (tx.clone(), tx.clone());
        if !given_up.0 {
            let start = DataWatch::start(&session, &node, move |value, event| tx1.send((value, event)).is_ok());
            given_up.0 = poll_once_and_drop(start).await;
        }
        if !given_up.1 {
            let from =
                DataWatch::start_from(&session, &node, Some(0), move |value, event| tx2.send((value, event)).is_ok());
            given_up.1 = poll_once_and_drop(from).await;
        }
    }
    assert_eq!(given_up, (true, true), "in 20 tries, every first read answered within the first poll");
    // A witness registered after them: its call for the change comes after theirs would have.
    let (tx, mut witness) = unbounded_channel::<DataCall>();
    let _witness =
        DataWatch::start(&session, &node, move |value, event| tx.send((value, event)).is_ok()).await.unwrap();
    assert_eq!(data(&witness.try_recv().unwrap()), Some(&b"0"[..]));
    session.set(&node, Some(b"1"), None).await.unwrap();
    assert_eq!(data(&next(&mut witness).await), Some(&b"1"[..]));
    session.set(&node, Some(b"2"), None).await.unwrap();
    assert_eq!(data(&next(&mut witness).await), Some(&b"2"[..]));
    assert!(calls.try_recv().is_err(), "an abandoned start's watch was called");
    session.delete(&node, None, false).await.unwrap();
}

//! A writer's release marks its transaction (`contender/removal.rs`,
//! `release_marked`), and the listing waiter right behind it, which watches
//! the marker's name and its own node besides its predecessor, holds on the
//! deletion without a read (`recipe/lock/queue.rs`, `Wake::Released`). Each
//! assumption, and the case where it fails: our node deleted before the
//! release, a marker's name already taken, a predecessor deleted without one.

mod common;

use std::time::Duration;

use common::*;
use tokio::time::timeout;
use zk_harness::{FaultState, Op, Select};
use zoolock::{Acquire, Kind, Lock, LockConfig, LockState, LostReason, Session};

const SETTLE: Duration = Duration::from_secs(20);

fn listing(session: &Session, path: &str) -> Lock {
    Lock::new(session, path, Kind::Mutex, LockConfig { mirror: false, ..LockConfig::default() }).unwrap()
}

/// A listing holder on their session and a listing waiter on ours, queued
/// behind it and parked: the server lists the waiter's watch on the
/// holder's node, the last of its three requests. Returns the waiter's node.
async fn waiter_parked_behind_a_holder(
    ours: &Session,
    theirs: &Session,
    raw: &zookeeper_client::Client,
    path: &str,
) -> (Lock, Lock, tokio::task::JoinHandle<zoolock::Result<bool>>, String) {
    let holder = listing(theirs, path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter = listing(ours, path);
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let held = holder.node().unwrap();
    let queued = queued(raw, path, 2).await;
    let node = format!("{path}/{}", queued.into_iter().find(|n| !held.ends_with(n.as_str())).unwrap());
    watched_by(&held, ours.client_id().unwrap().session_id()).await;
    (holder, waiter, waiting, node)
}

/// Drops the replies to `session`'s reads of nodes on the path.
async fn drop_reads(session: &Session, path: &str) -> zk_harness::FaultId {
    let reads = Select::session(session.client_id().unwrap().session_id())
        .op(Op::GetData)
        .op(Op::GetChildren)
        .op(Op::GetChildren2)
        .op(Op::Exists)
        .path(path.to_owned());
    inject(move || harness().drop_reply(reads).unwrap()).await
}

/// The release's marker comes before the holder's deletion: the waiter holds
/// with no read after it (every read's reply on the path is dropped, and the
/// fault is still armed after the hold), on its node, with no marker left;
/// the watch it set on its node while waiting tells the hold of an
/// operator's deletion.
#[tokio::test(flavor = "multi_thread")]
async fn a_writers_release_lets_the_listing_waiter_behind_hold_without_a_read() {
    let connect = shared_server();
    let (ours, theirs, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);
    let path = unique_path("released");
    let (holder, waiter, waiting, node) = waiter_parked_behind_a_holder(&ours, &theirs, &raw, &path).await;
    let armed = drop_reads(&ours, &path).await;
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    let report = inject(move || harness().disarm(armed).unwrap()).await;
    assert!(report.request.is_none(), "the waiter read after the release: {:?}", report.request);
    assert_eq!(waiter.node().unwrap(), node);
    assert_eq!(children(&raw, &path).await, [node.rsplit('/').next().unwrap()]);
    let mut state = waiter.subscribe();
    raw.delete(&node, None).await.unwrap();
    timeout(SETTLE, state.wait_for(|s| *s == LockState::Lost(LostReason::NodeDeleted)))
        .await
        .expect("the holder is told")
        .unwrap();
}

/// An operator deletes the waiter's node while it waits, then the holder
/// releases with its marker. The marker alone would mean "yours": the
/// waiter's watch on its own node fired first, so it does not hold on the
/// deleted node; it queues again and holds on a new one.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_whose_node_was_deleted_before_the_release_does_not_hold_on_it() {
    let connect = shared_server();
    let (ours, theirs, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);
    let path = unique_path("released-gone");
    for round in 0..5 {
        let (holder, waiter, waiting, node) = waiter_parked_behind_a_holder(&ours, &theirs, &raw, &path).await;
        raw.delete(&node, None).await.unwrap();
        assert!(holder.release().await.unwrap());
        assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
        let held = waiter.node().unwrap_or_else(|| panic!("round {round}: held on no node ({:?})", waiter.state()));
        assert_ne!(held, node, "round {round}: held on the node the operator deleted");
        assert!(raw.check_stat(&held).await.unwrap().is_some(), "round {round}: held on a node that is gone");
        assert!(waiter.release().await.unwrap());
    }
}

/// A node of the marker's name is there already (an operator's): the
/// release's transaction fails on it and falls back to a plain delete, or
/// the waiter would wait forever; the waiter then decides by a read, as
/// behind any holder without a marker (the dropped reply shows that it
/// read), and the operator's node stays.
#[tokio::test(flavor = "multi_thread")]
async fn a_marker_whose_name_is_taken_is_no_evidence_and_the_release_deletes_plainly() {
    let connect = shared_server();
    let (ours, theirs, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);
    let path = unique_path("released-taken");
    let holder = listing(&theirs, &path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let held = holder.node().unwrap();
    let persistent = zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all());
    let marker = format!("{held}.released");
    raw.create(&marker, b"", &persistent).await.unwrap();
    let waiter = listing(&ours, &path);
    let waiting = spawn_acquire(&waiter, Acquire::default());
    until_children(&raw, &path, "the holder, the marker and the waiter", |c| c.len() == 3).await;
    watched_by(&held, ours.client_id().unwrap().session_id()).await;
    let armed = drop_reads(&ours, &path).await;
    assert!(holder.release().await.unwrap());
    let read = inject(move || harness().wait_fault(armed, FaultState::AwaitingReply, SETTLE)).await;
    assert!(read.is_ok_and(|report| report.request.is_some()), "the waiter held without a read");
    // The dropped reply costs the waiter its connection; it holds after it.
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    assert!(raw.check_stat(&marker).await.unwrap().is_some(), "the operator's node stays");
    assert!(waiter.release().await.unwrap());
    raw.delete(&marker, None).await.unwrap();
}

/// The holder's node is deleted by an operator (no marker): the waiter
/// behind it cannot tell that deletion from a release, and reads before it
/// holds, as it did before release markers.
#[tokio::test(flavor = "multi_thread")]
async fn a_predecessor_deleted_without_a_marker_is_followed_by_a_read() {
    let connect = shared_server();
    let (ours, theirs, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);
    let path = unique_path("released-none");
    let (holder, waiter, waiting, node) = waiter_parked_behind_a_holder(&ours, &theirs, &raw, &path).await;
    let armed = drop_reads(&ours, &path).await;
    raw.delete(&holder.node().unwrap(), None).await.unwrap();
    let read = inject(move || harness().wait_fault(armed, FaultState::AwaitingReply, SETTLE)).await;
    assert!(read.is_ok_and(|report| report.request.is_some()), "the waiter held without a read");
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    assert_eq!(waiter.node().unwrap(), node);
    assert!(waiter.release().await.unwrap());
}

/// A persistent `foo-<seq>` child is an operator's note to a lock without
/// extra markers, and a writer to one whose `extra_markers` name `foo-`
/// (kazoo's `extra_lock_patterns`). The holder below, blind to it, held and
/// marks its release; the waiter behind, which counts the note ahead of
/// both, must not take that marker for "first in line": it lists again,
/// waits for the note, and holds once it goes.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_with_extra_markers_does_not_hold_on_a_release_marker() {
    let connect = shared_server();
    let (ours, theirs, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);
    let path = unique_path("released-extra");
    raw.mkdir(&path, &zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all()))
        .await
        .unwrap();
    let persistent = zookeeper_client::CreateMode::PersistentSequential.with_acls(zookeeper_client::Acls::anyone_all());
    let (_, sequence) = raw.create(&format!("{path}/foo-"), b"", &persistent).await.unwrap();
    let note = format!("{path}/foo-{sequence}");
    let holder = listing(&theirs, &path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let extra = LockConfig { mirror: false, extra_markers: vec!["foo-".into()], ..LockConfig::default() };
    let waiter = Lock::new(&ours, &path, Kind::Mutex, extra).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let held = holder.node().unwrap();
    let ours_id = ours.client_id().unwrap().session_id();
    queued(&raw, &path, 3).await;
    watched_by(&held, ours_id).await;
    assert!(holder.release().await.unwrap());
    // Listed again, it watches the note.
    watched_by(&note, ours_id).await;
    assert!(!waiter.is_acquired(), "held while the note its markers count was ahead");
    raw.delete(&note, None).await.unwrap();
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    assert!(waiter.release().await.unwrap());
}

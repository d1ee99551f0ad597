//! Locks that wait on the session's mirror of the path (`LockConfig::mirror`):
//! each assumption of core/src/mirror/mod.rs, and the case where it fails —
//! events lost while disconnected, a watch zookeeper-client does not set
//! again on reconnect, expiry, nodes of unmirrored contenders, an operator's
//! deletion of the holder's node — and the adaptive design's switch off the
//! mirror and back (point 9).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use common::*;
use tokio::time::timeout;
use zk_harness::{DelayRelay, FaultState, Op, Select};
use zoolock::{Acquire, Adaptive, Kind, Lock, LockConfig, LockState, LostReason, Session, SessionState};

const SETTLE: Duration = Duration::from_secs(20);

/// On the mirror whatever the queue.
fn mirrored(session: &Session, path: &str) -> Lock {
    Lock::new(session, path, Kind::Mutex, LockConfig { mirror: true, adaptive: None, ..LockConfig::default() }).unwrap()
}

fn listing(session: &Session, path: &str) -> Lock {
    Lock::new(session, path, Kind::Mutex, LockConfig { mirror: false, ..LockConfig::default() }).unwrap()
}

/// The adaptive design, listing above `list_above` contenders and
/// mirroring again once a listing shows the node alone.
fn switching(session: &Session, path: &str, list_above: u32) -> Lock {
    let adaptive = Some(Adaptive { list_above, mirror_at_most: 1, round_trip: None });
    Lock::new(session, path, Kind::Mutex, LockConfig { mirror: true, adaptive, ..LockConfig::default() }).unwrap()
}

/// Our session (a mirrored waiter's), theirs (a listing holder's), a raw
/// client that looks, and a path of its own.
struct Scene {
    ours: Session,
    theirs: Session,
    raw: zookeeper_client::Client,
    path: String,
}

async fn scene(name: &str) -> Scene {
    let connect = shared_server();
    let (ours, theirs, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);
    Scene { ours, theirs, raw, path: unique_path(name) }
}

impl Scene {
    /// A listing holder on their session, and a mirrored waiter on ours,
    /// queued behind it (the acquire still running in `waiting`).
    async fn waiter_behind_a_holder(&self) -> (Lock, Lock, tokio::task::JoinHandle<zoolock::Result<bool>>) {
        let holder = Lock::mutex(&self.theirs, &self.path).unwrap();
        assert!(holder.acquire(Acquire::default()).await.unwrap());
        let waiter = mirrored(&self.ours, &self.path);
        let waiting = spawn_acquire(&waiter, Acquire::default());
        queued(&self.raw, &self.path, 2).await;
        (holder, waiter, waiting)
    }

    /// [`Scene::waiter_behind_a_holder`] with a mirrored holder (one whose
    /// release hands over), and the waiter's node's name.
    async fn waiter_behind_a_mirrored_holder(
        &self,
    ) -> (Lock, Lock, tokio::task::JoinHandle<zoolock::Result<bool>>, String) {
        let holder = mirrored(&self.theirs, &self.path);
        assert!(holder.acquire(Acquire::default()).await.unwrap());
        let waiter = mirrored(&self.ours, &self.path);
        let waiting = spawn_acquire(&waiter, Acquire::default());
        let held = holder.node().unwrap();
        let queued = queued(&self.raw, &self.path, 2).await;
        let node = queued.into_iter().find(|n| !held.ends_with(n.as_str())).unwrap();
        (holder, waiter, waiting, node)
    }

    /// Drops the replies to our session's reads of nodes on the path.
    async fn drop_our_reads(&self) -> zk_harness::FaultId {
        let reads = Select::session(self.ours.client_id().unwrap().session_id()).op(Op::Exists).path(self.path.clone());
        inject(move || harness().drop_reply(reads).unwrap()).await
    }
}

async fn wait_connected(session: &Session, generation: u64) {
    let mut status = session.subscribe();
    timeout(SETTLE, status.wait_for(|s| s.state == SessionState::Connected && s.generation >= generation))
        .await
        .expect("the session reconnects")
        .unwrap();
}

/// Mirrored, listing and switching contenders on four sessions share one
/// path: never two holders, everyone served. A session's handles share its
/// mirror, so an adaptive one dismisses it under a mirrored one, which
/// brings it back, again and again.
#[tokio::test(flavor = "multi_thread")]
async fn mirrored_and_listing_contenders_never_hold_together() {
    let connect = shared_server();
    let path = unique_path("mirror-mixed");
    let inside = Arc::new(AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for i in 0..4 {
        let session = session(&connect).await;
        let lock = match i % 3 {
            0 => mirrored(&session, &path),
            1 => listing(&session, &path),
            _ => switching(&session, &path, 1),
        };
        let second = if i % 2 == 0 { mirrored(&session, &path) } else { switching(&session, &path, 2) };
        for lock in [lock, second] {
            let inside = inside.clone();
            tasks.push(tokio::spawn(async move {
                for _ in 0..15 {
                    assert!(lock.acquire(Acquire::default()).await.unwrap());
                    assert_eq!(inside.fetch_add(1, Ordering::SeqCst), 0, "two holders at once");
                    tokio::task::yield_now().await;
                    inside.fetch_sub(1, Ordering::SeqCst);
                    assert!(lock.release().await.unwrap());
                }
            }));
        }
    }
    for task in tasks {
        timeout(Duration::from_secs(60), task).await.expect("every contender served").unwrap();
    }
}

/// A holder's release while the waiter's connection is down reaches no
/// watch (ZooKeeper does not replay it): the mirror lists again after the
/// reconnect and the waiter holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_while_the_waiters_connection_is_down_is_seen_after_it() {
    let scene = scene("mirror-down").await;
    let Scene { ours, .. } = &scene;
    let (holder, waiter, waiting) = scene.waiter_behind_a_holder().await;
    let id = ours.status().session_id;
    // Partitioned, then reset: the release happens while no connection of
    // the waiter's session is up to carry its notice.
    inject(move || harness().partition(id).unwrap()).await;
    inject(move || harness().drop_connections(id).unwrap()).await;
    assert!(holder.release().await.unwrap());
    inject(move || harness().heal(id).unwrap()).await;
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds after the reconnect").unwrap().unwrap());
    assert_eq!(ours.status().session_id, id, "the same session");
    assert!(waiter.release().await.unwrap());
}

/// zookeeper-client 0.11.2 does not set a persistent watch again on
/// reconnect: a release after the reconnect would go unheard unless the
/// mirror adds its watch again.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_after_the_waiters_reconnect_is_heard() {
    let scene = scene("mirror-reconnect").await;
    let Scene { ours, .. } = &scene;
    let (holder, waiter, waiting) = scene.waiter_behind_a_holder().await;
    let id = ours.status().session_id;
    inject(move || harness().drop_connections(id).unwrap()).await;
    wait_connected(&ours, 1).await;
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter hears the release").unwrap().unwrap());
    assert!(waiter.release().await.unwrap());
}

/// A waiter whose session expires queues again on the next session, whose
/// mirror is built anew, and holds once the holder lets go.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_whose_session_expired_queues_again_on_a_new_mirror() {
    let scene = scene("mirror-expiry").await;
    let Scene { ours, raw, path, .. } = &scene;
    let (holder, waiter, waiting) = scene.waiter_behind_a_holder().await;
    let id = ours.status().session_id;
    inject(move || harness().expire(id).unwrap()).await;
    wait_connected(&ours, 2).await;
    queued(&raw, &path, 2).await;
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds on its new session").unwrap().unwrap());
    assert!(waiter.release().await.unwrap());
}

/// An operator deletes the mirrored holder's node: the holder learns it
/// from the mirror (no watch of its own), and the next contender holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_mirrored_holder_whose_node_is_deleted_is_told_and_the_next_holds() {
    let Scene { ours, theirs, raw, path } = scene("mirror-deleted").await;
    let holder = mirrored(&ours, &path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let next = mirrored(&theirs, &path);
    let waiting = spawn_acquire(&next, Acquire::default());
    queued(&raw, &path, 2).await;
    let mut state = holder.subscribe();
    raw.delete(&holder.node().unwrap(), None).await.unwrap();
    timeout(SETTLE, state.wait_for(|s| *s == LockState::Lost(LostReason::NodeDeleted)))
        .await
        .expect("the holder is told")
        .unwrap();
    assert!(timeout(SETTLE, waiting).await.expect("the next contender holds").unwrap().unwrap());
    assert!(next.release().await.unwrap());
}

/// The mirror goes stale while the holder's connection is down, and an
/// operator deletes the holder's node meanwhile: the holder, no longer told
/// by the mirror, reads its node after the reconnect and learns of the loss.
#[tokio::test(flavor = "multi_thread")]
async fn a_mirrored_holders_node_deleted_while_its_connection_is_down_is_seen_after_it() {
    let scene = scene("mirror-holder-down").await;
    let Scene { ours, raw, path, .. } = &scene;
    let holder = mirrored(&ours, &path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let mut state = holder.subscribe();
    let id = ours.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    inject(move || harness().drop_connections(id).unwrap()).await;
    timeout(SETTLE, state.wait_for(|s| *s == LockState::Suspended)).await.expect("suspended").unwrap();
    raw.delete(&holder.node().unwrap(), None).await.unwrap();
    inject(move || harness().heal(id).unwrap()).await;
    timeout(SETTLE, state.wait_for(|s| *s == LockState::Lost(LostReason::NodeDeleted)))
        .await
        .expect("the holder is told after the reconnect")
        .unwrap();
    assert_eq!(ours.status().session_id, id, "the same session");
}

/// The whole path deleted under a mirrored waiter and made again: the waiter
/// finds its node gone, queues again on the new path and holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_mirrored_waiter_queues_again_when_its_node_and_the_path_are_deleted() {
    let Scene { ours, theirs, raw, path } = scene("mirror-path").await;
    let holder = Lock::mutex(&theirs, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter = mirrored(&ours, &path);
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let nodes = queued(&raw, &path, 2).await;
    let holder_node = holder.node().unwrap();
    let waiter_node = nodes.iter().map(|n| format!("{path}/{n}")).find(|n| *n != holder_node).unwrap();
    // The waiter's node first, so that nothing is ever ahead of a node of the new path.
    raw.delete(&waiter_node, None).await.unwrap();
    raw.delete(&holder_node, None).await.unwrap();
    let _ = raw.delete(&path, None).await;
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds on the path made again").unwrap().unwrap());
    assert!(waiter.node().unwrap().starts_with(&path));
    assert!(waiter.release().await.unwrap());
}

/// ZooKeeper 3.8 keeps one watch mode per connection and path
/// (ZOOKEEPER-4466, fixed in 3.9): a standard data watch that the same
/// session sets on the lock path itself (a `DataWatch`, an `exists`)
/// turns the mirror's persistent recursive watch into a standard one, which
/// hears no create under the path again. A waiter queued after that must
/// still hold once the holder lets go, on one node.
#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_on_the_lock_path_in_the_same_session_does_not_blind_the_mirror() {
    let Scene { ours, theirs, raw, path } = scene("mirror-datawatch").await;
    let waiter = mirrored(&ours, &path);
    // The mirror is built (its watch set) by this first hold, before the data watch.
    assert!(waiter.acquire(Acquire::default()).await.unwrap());
    assert!(waiter.release().await.unwrap());
    let watch = zoolock::DataWatch::start(&ours, &path, |_, _| true).await.unwrap();
    let holder = Lock::mutex(&theirs, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiting = spawn_acquire(&waiter, Acquire::default());
    queued(&raw, &path, 2).await;
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds after the release").unwrap().unwrap());
    assert_eq!(children(&raw, &path).await.len(), 1, "one node: the waiter's");
    assert!(waiter.release().await.unwrap());
    watch.stop();
}

/// The other way round (ZooKeeper 3.8, ZOOKEEPER-4466): the mirror's
/// persistent recursive watch, set again after a reconnect (after the client
/// set the `ChildrenWatch`'s watch of the same session on the lock path
/// again), must not leave that watch deaf to the path's children.
#[tokio::test(flavor = "multi_thread")]
async fn the_mirror_does_not_deafen_a_children_watch_of_its_session_on_the_lock_path() {
    let scene = scene("mirror-childrenwatch").await;
    let Scene { ours, path, .. } = &scene;
    let (holder, waiter, waiting) = scene.waiter_behind_a_holder().await;
    let (sender, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let watch = zoolock::ChildrenWatch::start(&ours, &path, move |children, _| sender.send(children.len()).is_ok())
        .await
        .unwrap();
    assert_eq!(seen.recv().await, Some(2));
    // On reconnect the client sets the children watch again first; the
    // waiter's mirror sets its own after it.
    let id = ours.status().session_id;
    inject(move || harness().drop_connections(id).unwrap()).await;
    wait_connected(&ours, 1).await;
    // A round trip on our session after the waiter's mirror has likely sent its watch (it
    // asks as soon as the session is connected again): the release comes after that watch.
    zoolock::inspect(&ours, &path).await.unwrap();
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    assert_eq!(timeout(SETTLE, seen.recv()).await.expect("the children watch hears the release"), Some(1));
    assert!(waiter.release().await.unwrap());
    watch.stop();
}

/// The window inside the mirror's resync: its `addWatch` has made the
/// session's entry for the path in ZooKeeper's children table recursive
/// (point 6), its listing has not yet made it standard again, and a child
/// is created. The server sends the recursive watch's `NodeCreated` only;
/// zookeeper-client wakes the session's children watchers set before from
/// it. Without that, a `ChildrenWatch` (the CLI's `--verbose`) missed the
/// change until the next one.
#[tokio::test(flavor = "multi_thread")]
async fn a_child_made_between_the_mirrors_watch_and_its_listing_wakes_an_earlier_children_watch() {
    use zookeeper_client as zk;
    let raw = raw(&shared_server()).await;
    let other = common::raw(&shared_server()).await;
    let path = unique_path("mirror-children-window");
    let mode = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    raw.mkdir(&path, &mode).await.unwrap();
    let (_, _, earlier) = raw.get_and_watch_children(&path).await.unwrap();
    let _recursive = raw.watch(&path, zk::AddWatchMode::PersistentRecursive).await.unwrap();
    other.create(&format!("{path}/child"), b"", &mode).await.unwrap();
    let event = timeout(Duration::from_secs(10), earlier.changed()).await.expect("the earlier children watch fires");
    assert_eq!(event.event_type, zk::EventType::NodeChildrenChanged);
    assert_eq!(event.path, path);
}

/// The same data watch set while a mirrored waiter already waits: with the
/// session's children watch entry standard (the mirror's listing sets one),
/// ZooKeeper 3.8 would send the mirror neither creates nor deletes under the
/// path. The holder's release must still reach the waiter.
#[tokio::test(flavor = "multi_thread")]
async fn a_data_watch_on_the_lock_path_set_while_a_mirrored_waiter_waits_does_not_strand_it() {
    let Scene { ours, theirs, raw, path } = scene("mirror-datawatch-waiting").await;
    let holder = Lock::mutex(&theirs, &path).unwrap();
    // The path exists when the mirror is built (its listing sets a children watch).
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    assert!(holder.release().await.unwrap());
    let waiter = mirrored(&ours, &path);
    // The mirror is built by this first hold, long before the data watch.
    assert!(waiter.acquire(Acquire::default()).await.unwrap());
    assert!(waiter.release().await.unwrap());
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiting = spawn_acquire(&waiter, Acquire::default());
    queued(&raw, &path, 2).await;
    let watch = zoolock::DataWatch::start(&ours, &path, |_, _| true).await.unwrap();
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds after the release").unwrap().unwrap());
    assert!(waiter.release().await.unwrap());
    watch.stop();
}

/// An operator deletes the lock path with every node in it and makes it
/// again while the mirrored waiter's connection is down: no event reaches
/// it, and the listing after the reconnect shows an empty path. The waiter
/// reads its node before believing it gone, queues again and holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_mirrored_waiter_queues_again_when_the_path_is_made_again_while_it_is_down() {
    let Scene { ours, theirs, raw, path } = scene("mirror-path-down").await;
    let holder = Lock::mutex(&theirs, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter = mirrored(&ours, &path);
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let nodes = queued(&raw, &path, 2).await;
    let id = ours.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    inject(move || harness().drop_connections(id).unwrap()).await;
    let mut nodes: Vec<String> = nodes.iter().map(|n| format!("{path}/{n}")).collect();
    // The waiter's node first, so that nothing is ever ahead of a node of the new path.
    nodes.sort_by_key(|n| *n == holder.node().unwrap());
    for node in &nodes {
        raw.delete(node, None).await.unwrap();
    }
    raw.delete(&path, None).await.unwrap();
    raw.create(&path, b"", &zookeeper_client::CreateMode::Persistent.with_acls(zookeeper_client::Acls::anyone_all()))
        .await
        .unwrap();
    inject(move || harness().heal(id).unwrap()).await;
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds on the path made again").unwrap().unwrap());
    assert_eq!(children(&raw, &path).await, vec![waiter.node().unwrap()[path.len() + 1..].to_owned()]);
    assert_eq!(ours.status().session_id, id, "the same session");
    assert!(waiter.release().await.unwrap());
}

/// One transaction deletes the holder's node and the waiter's (an
/// operator's `deleteall`, which ZooKeeper's CLI sends as one multi): the
/// server sends one notice per node, back to back. Woken by the first, a
/// waiter that believed the mirror alone would hold on a node already gone
/// (found by the model, `mirror_rules_hold_on_a_node_deleted_in_the_same_multi`):
/// it must read its node first, find it gone, and queue again.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_whose_node_goes_in_the_same_multi_as_its_predecessor_does_not_hold_on_it() {
    let scene = scene("mirror-multi").await;
    let Scene { raw, path, .. } = &scene;
    for round in 0..20 {
        let (holder, waiter, waiting) = scene.waiter_behind_a_holder().await;
        let held = holder.node().unwrap();
        let queued_node =
            format!("{path}/{}", queued(raw, path, 2).await.into_iter().find(|n| !held.ends_with(n.as_str())).unwrap());
        let mut multi = raw.new_multi_writer();
        multi.add_delete(&held, None).unwrap();
        multi.add_delete(&queued_node, None).unwrap();
        multi.commit().await.unwrap();
        assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
        // Held on a node of its own that is there: a new one.
        let node = waiter.node().unwrap_or_else(|| panic!("round {round}: held on no node ({:?})", waiter.state()));
        assert_ne!(node, queued_node, "round {round}: held on the node the multi deleted");
        assert!(raw.check_stat(&node).await.unwrap().is_some(), "round {round}: held on a node that is gone");
        assert!(waiter.release().await.unwrap());
        drop(holder);
    }
}

/// A release hands the lock over in its delete's transaction (mirror/mod.rs,
/// point 11): the mirrored waiter behind hears its node named by the marker
/// that comes and goes there, and holds without reading its node. Every
/// read of a node on the path by the waiter's session has its reply
/// dropped: the fault is still armed after the hold, so none was sent.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_hands_the_lock_over_to_the_mirrored_waiter_behind_without_a_read() {
    let scene = scene("hand-over").await;
    let Scene { theirs, raw, path, .. } = &scene;
    let (holder, waiter, waiting, queued_node) = scene.waiter_behind_a_mirrored_holder().await;
    // A round trip of the holder's session: by its reply, the holder's mirror
    // has heard of the waiter's node (a release hands over to a node it knows).
    theirs.exists(path).await.unwrap();
    let armed = scene.drop_our_reads().await;
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    let report = inject(move || harness().disarm(armed).unwrap()).await;
    assert!(report.request.is_none(), "the waiter read its node before it held: {:?}", report.request);
    assert_eq!(waiter.node().unwrap(), format!("{path}/{queued_node}"));
    // No marker is left, and the path lists only the holder.
    assert_eq!(raw.list_children(path).await.unwrap(), [queued_node]);
    assert!(waiter.release().await.unwrap());
}

/// The same waiter, its predecessor deleted without a hand-over (an
/// operator's delete): the deletion alone does not say that our node is
/// still there (point 8), so the waiter reads it before it holds — the read
/// the test above shows a hand-over saves.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_whose_predecessor_is_deleted_without_a_hand_over_reads_its_node() {
    let scene = scene("no-hand-over").await;
    let (holder, waiter, waiting, _) = scene.waiter_behind_a_mirrored_holder().await;
    let armed = scene.drop_our_reads().await;
    scene.raw.delete(&holder.node().unwrap(), None).await.unwrap();
    let read = inject(move || harness().wait_fault(armed, FaultState::AwaitingReply, SETTLE)).await;
    assert!(read.is_ok_and(|report| report.request.is_some()), "the waiter held without reading its node");
    // The dropped reply costs the waiter its connection; it holds after it.
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    assert!(waiter.release().await.unwrap());
}

/// The adaptive design (mirror/mod.rs, point 9). A waiter that sees more
/// contenders than its limit dismisses its session's mirror: the server
/// drops the session's watch on the path (no more fan-out), and the waiter
/// already parked on the mirror is woken, lists, watches its predecessor and
/// holds in turn. Were it left on the dismissed mirror, nothing would wake
/// it. A listing that shows the node alone brings the mirror back for the
/// session's next acquisition.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_queue_dismisses_the_mirror_and_a_short_one_brings_it_back() {
    let scene = scene("mirror-adaptive").await;
    let Scene { ours, theirs, raw, path } = &scene;
    let id = ours.status().session_id;
    let holder = listing(theirs, path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let first = switching(ours, path, 2);
    let first_waiting = spawn_acquire(&first, Acquire::default());
    queued(raw, path, 2).await;
    watched_by(path, id).await;
    let other = listing(theirs, path);
    let other_waiting = spawn_acquire(&other, Acquire::default());
    queued(raw, path, 3).await;
    // Four contenders, two over the limit: the second waiter of our session dismisses the mirror.
    let second = switching(ours, path, 2);
    let second_waiting = spawn_acquire(&second, Acquire::default());
    queued(raw, path, 4).await;
    unwatched_by(path, id).await;
    watched_by(&holder.node().unwrap(), id).await;

    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, first_waiting).await.expect("the dismissed mirror's waiter holds").unwrap().unwrap());
    assert!(!other.is_acquired() && !second.is_acquired());
    assert!(first.release().await.unwrap());
    assert!(timeout(SETTLE, other_waiting).await.expect("the next waiter holds").unwrap().unwrap());
    assert!(!second.is_acquired());
    assert!(other.release().await.unwrap());
    assert!(timeout(SETTLE, second_waiting).await.expect("the last waiter holds").unwrap().unwrap());
    assert!(second.release().await.unwrap());

    // Alone on the path: this acquisition lists and sees itself alone, the next one mirrors again.
    assert!(first.acquire(Acquire::default()).await.unwrap());
    assert!(first.release().await.unwrap());
    assert!(first.acquire(Acquire::default()).await.unwrap());
    watched_by(path, id).await;
    assert!(first.release().await.unwrap());
}

/// The adaptive design weighs the round trip too (point 9): the mirror
/// saves one at each hand-over, so a session whose reads take 10 ms, ten
/// times the limits' round trip, mirrors a queue of four past a limit of
/// two. The first waiter, knowing no round trip yet, dismisses the mirror
/// and has the session measure it (eight reads in the background, done
/// well within its try); the second lists, and the listing brings the
/// mirror back; the third keeps it. Without the measure, the listings'
/// own reads (one a try here) would give the round trip only after eight
/// tries; weighing the queue alone, every waiter would dismiss it.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_round_trip_keeps_a_long_queue_on_the_mirror() {
    let relay = DelayRelay::start(shared_server().parse().unwrap(), Duration::from_millis(5)).unwrap();
    let far = session(&relay.connect_string()).await;
    let scene = scene("mirror-round-trip").await;
    let Scene { theirs, raw, path, .. } = &scene;
    let holder = listing(theirs, path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let behind: Vec<Lock> = (0..2).map(|_| listing(theirs, path)).collect();
    let _waiting: Vec<_> = behind.iter().map(|waiter| spawn_acquire(waiter, Acquire::default())).collect();
    queued(raw, path, 3).await;

    let adaptive = Some(Adaptive { list_above: 2, mirror_at_most: 1, round_trip: Some(Duration::from_millis(1)) });
    let ours = Lock::new(&far, path, Kind::Mutex, LockConfig { mirror: true, adaptive, ..LockConfig::default() });
    let ours = ours.unwrap();
    let tries = Acquire { timeout: Some(Duration::from_secs(2)), ..Acquire::default() };
    for _ in 0..3 {
        assert!(!ours.acquire(tries.clone()).await.unwrap(), "the path stays held");
    }
    watched_by(path, far.status().session_id).await;
    assert!(!ours.acquire(tries).await.unwrap());
    watched_by(path, far.status().session_id).await;
}

/// The adaptive design weighs other sessions' nodes only (point 9): the
/// server sends this session nothing more for its own, so six waiters of
/// one session behind another's holder — seven nodes, over the default
/// limit of four — keep the session's mirror. Counting every node, the
/// first waiter to decide past the fifth would have dismissed it, and its
/// watch would be gone once the queue is served.
#[tokio::test(flavor = "multi_thread")]
async fn a_long_queue_of_one_sessions_own_waiters_keeps_its_mirror() {
    let scene = scene("mirror-own-queue").await;
    let Scene { ours, theirs, raw, path } = &scene;
    let id = ours.status().session_id;
    let holder = listing(theirs, path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let mut waiting = Vec::new();
    for n in 0..6 {
        let waiter = Lock::mutex(ours, path).unwrap();
        waiting.push((spawn_acquire(&waiter, Acquire::default()), waiter));
        queued(raw, path, n + 2).await;
    }
    watched_by(path, id).await;
    assert!(holder.release().await.unwrap());
    for (acquire, waiter) in &mut waiting {
        assert!(timeout(SETTLE, acquire).await.expect("each waiter holds in turn").unwrap().unwrap());
        assert!(waiter.release().await.unwrap());
    }
    // The handles live on, and with them the session's mirror, if it was never dismissed.
    watched_by(path, id).await;
    drop(waiting);
}

/// The same in a burst: eight waiters of one session start at once, so the
/// mirror sees their nodes before their waiters decide. Nodes of this
/// session's creates in flight count as its own too (point 9); counted as
/// other sessions', the first waiter to decide would see nine contenders
/// and dismiss the mirror, and its watch would be gone once the queue is
/// served (10,000 waiters of one process then each listed the whole path).
#[tokio::test(flavor = "multi_thread")]
async fn a_burst_of_one_sessions_own_waiters_keeps_its_mirror() {
    let scene = scene("mirror-own-burst").await;
    let Scene { ours, theirs, raw, path } = &scene;
    let id = ours.status().session_id;
    let holder = listing(theirs, path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiters: Vec<Lock> = (0..8).map(|_| Lock::mutex(ours, path).unwrap()).collect();
    let mut waiting = tokio::task::JoinSet::new();
    for (at, waiter) in waiters.iter().enumerate() {
        let waiter = waiter.clone();
        waiting.spawn(async move { (at, waiter.acquire(Acquire::default()).await) });
    }
    queued(raw, path, 9).await;
    assert!(holder.release().await.unwrap());
    while let Some(done) = timeout(SETTLE, waiting.join_next()).await.expect("each waiter holds in turn") {
        let (at, acquired) = done.unwrap();
        assert!(acquired.unwrap(), "waiter {at} holds");
        assert_eq!(waiters.iter().filter(|w| w.is_acquired()).count(), 1, "one holder at a time");
        assert!(waiters[at].release().await.unwrap());
    }
    // The handles live on, and with them the session's mirror, if it was never dismissed.
    watched_by(path, id).await;
}

/// Dismissing the mirror (point 9) drops its watcher; a `RemoveWatches` of
/// every watch of the session on the path would take a `ChildrenWatch` of
/// the session there with it. zookeeper-client sends none while another
/// watcher of the session is on the path: the children watch goes on
/// firing, and the waiter that dismissed the mirror holds in turn.
#[tokio::test(flavor = "multi_thread")]
async fn dismissing_the_mirror_does_not_deafen_a_children_watch_of_its_session() {
    let scene = scene("mirror-dismiss-childrenwatch").await;
    let Scene { ours, theirs, raw, path } = &scene;
    let holder = listing(theirs, path);
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let (sender, mut seen) = tokio::sync::mpsc::unbounded_channel();
    let watch = zoolock::ChildrenWatch::start(ours, path, move |children, _| sender.send(children.len()).is_ok())
        .await
        .unwrap();
    assert_eq!(seen.recv().await, Some(1));
    // Behind another session's holder: over the limit of one at its first decision.
    let waiter = switching(ours, path, 1);
    let (dismissed, _) = zoolock::adaptive_switches();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    queued(raw, path, 2).await;
    assert_eq!(timeout(SETTLE, seen.recv()).await.expect("the children watch fires"), Some(2));
    watched_by(&holder.node().unwrap(), ours.status().session_id).await;
    assert!(zoolock::adaptive_switches().0 > dismissed, "the waiter dismissed the mirror");
    assert!(holder.release().await.unwrap());
    assert!(timeout(SETTLE, waiting).await.expect("the waiter holds").unwrap().unwrap());
    assert_eq!(timeout(SETTLE, seen.recv()).await.expect("the children watch fires after the dismissal"), Some(1));
    assert!(waiter.release().await.unwrap());
    assert_eq!(timeout(SETTLE, seen.recv()).await.expect("and again"), Some(0));
    watch.stop();
}

/// Point 2 assumes a notification is read from the watcher's channel once
/// it is there: the mirror drains until the channel says nothing is left.
/// tokio's cooperative budget makes a channel say that with a message
/// buffered, once the polling task has spent its budget; the channel must
/// not take part in it.
#[tokio::test(flavor = "multi_thread")]
async fn a_buffered_notification_is_read_whatever_the_tasks_budget() {
    use std::future::Future;
    use std::task::{Context, Poll, Waker};
    use zookeeper_client as zk;
    let raw = raw(&shared_server()).await;
    let path = unique_path("mirror-budget");
    let mode = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    raw.mkdir(&path, &mode).await.unwrap();
    let mut watcher = raw.watch(&path, zk::AddWatchMode::PersistentRecursive).await.unwrap();
    // The create's reply comes after its notification is in the channel.
    raw.create(&format!("{path}/child"), b"", &mode).await.unwrap();
    // Spend this task's budget on a channel that is always ready.
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let mut cx = Context::from_waker(Waker::noop());
    let mut spent = 0;
    loop {
        sender.send(()).unwrap();
        match std::pin::pin!(receiver.recv()).poll(&mut cx) {
            Poll::Ready(_) => spent += 1,
            Poll::Pending => break,
        }
    }
    assert!(spent > 0, "the budget was spent");
    let polled = std::pin::pin!(watcher.changed()).poll(&mut cx);
    match polled {
        Poll::Ready(event) => assert_eq!(event.path, format!("{path}/child")),
        Poll::Pending => panic!("the notification is buffered, yet the watcher said nothing is left"),
    }
}

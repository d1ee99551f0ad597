//! The recipe's shortcuts where the ZooKeeper behaviour they assume fails:
//! the lock path deleted and re-created (its sequence counter restarts), an
//! operator deleting nodes under waiters. Each test stands for one shortcut
//! or one reported two-holder case; see `core/src/recipe/lock/queue.rs`.

mod common;

use std::time::Duration;

use common::*;
use zk_harness::{FaultState, Landing, Op, Select};
use zookeeper_client as zk;
use zoolock::{Acquire, Kind, Lock, LockConfig, LockState, LostReason, Scheme, Session};

/// A handle that lists the children and watches its predecessor
/// (`LockConfig::mirror` off): the faults of the tests that use it land on
/// that design's requests (a data watch on the holder or on its own node).
fn listing(session: &Session, path: &str) -> Lock {
    Lock::new(session, path, Kind::Mutex, LockConfig { mirror: false, ..LockConfig::default() }).unwrap()
}

/// A handle of either design: mirrored, or listing (see [`listing`]).
fn design(mirror: bool, session: &Session, path: &str) -> zoolock::Result<Lock> {
    Lock::new(session, path, Kind::Mutex, LockConfig { mirror, ..LockConfig::default() })
}

/// An operator's `deleteall` of `path`, done atomically so that every
/// contender sees all of it at once.
async fn delete_all(raw: &zk::Client, path: &str) {
    let mut multi = raw.new_multi_writer();
    for child in children(raw, path).await {
        multi.add_delete(&format!("{path}/{child}"), None).unwrap();
    }
    multi.add_delete(path, None).unwrap();
    multi.commit().await.unwrap();
}

/// Whether the node a handle says it holds exists on the server.
async fn node_exists(raw: &zk::Client, lock: &Lock) -> bool {
    let node = lock.node().expect("a holder has a node");
    raw.check_stat(&node).await.unwrap().is_some()
}

/// Whether a contender whose node is queued is still waiting a while later.
/// Holding wrongly needs at most one more round trip after its node shows,
/// so the bound is generous; waiting rightly has no event to wait for.
async fn still_waiting<F: std::future::Future + Unpin>(acquire: &mut F) -> bool {
    tokio::time::timeout(Duration::from_millis(500), acquire).await.is_err()
}

/// Issue 10, item 1: a handle that held three times without waiting must
/// not trust the next sequence number once the path was re-created.
#[tokio::test(flavor = "multi_thread")]
async fn a_recreated_lock_path_restarts_the_sequence_and_nobody_holds_beside_its_holder() {
    for mirror in [false, true] {
        a_recreated_lock_path_restarts_the_sequence_and_nobody_holds_beside_its_holder_with(mirror).await;
    }
}

async fn a_recreated_lock_path_restarts_the_sequence_and_nobody_holds_beside_its_holder_with(mirror: bool) {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("recreated-counter");
    let first = design(mirror, &session(&connect).await, &path).unwrap();
    for _ in 0..3 {
        assert!(first.acquire(Acquire::no_wait()).await.unwrap());
        assert!(first.release().await.unwrap());
    }
    // A cleanup job (or ZooKeeper reaping an empty container) deletes the
    // path; someone re-creates it: its sequence counter starts again at 0.
    raw.delete(&path, None).await.unwrap();
    raw.create(&path, b"", &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let other = design(mirror, &session(&connect).await, &path).unwrap();
    for _ in 0..2 {
        assert!(other.acquire(Acquire::no_wait()).await.unwrap());
        assert!(other.release().await.unwrap());
    }
    assert!(other.acquire(Acquire::no_wait()).await.unwrap(), "the other session holds sequence 2");

    assert!(!first.acquire(Acquire::no_wait()).await.unwrap(), "two holders: sequence 3 held beside 2");
    assert!(!first.acquire(Acquire::timeout(Duration::from_millis(200))).await.unwrap(), "two holders");
    assert_eq!(children(&raw, &path).await.len(), 1, "the failed tries left no node");
    other.release().await.unwrap();
    assert!(first.acquire(Acquire::no_wait()).await.unwrap());
    assert!(node_exists(&raw, &first).await);
    first.release().await.unwrap();
}

/// DistributedLock's names come back whenever the path is re-created (a
/// DistributedLock service deletes it when it releases last): a waiter whose
/// predecessor goes must not take that name's earlier win by this session
/// for a sign that nothing is ahead.
#[tokio::test(flavor = "multi_thread")]
async fn a_shared_prefix_name_won_before_the_path_was_recreated_proves_nothing() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("recreated-shared-prefix");
    let open = zk::Acls::anyone_all();
    let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(open);
    let service = || async {
        let (_, sequence) = raw.create(&format!("{path}/lock-"), b"", &ephemeral).await.unwrap();
        format!("{path}/lock-{sequence}")
    };
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
    let config = LockConfig { scheme: Scheme::DistributedLock, ..LockConfig::default() };
    let lock = Lock::new(&session(&connect).await, &path, Kind::Mutex, config).unwrap();
    // This session wins `lock-0000000001`, behind a service's `lock-0000000000`.
    let first = service().await;
    let waiting = spawn_acquire(&lock, Acquire::default());
    queued(&raw, &path, 2).await;
    raw.delete(&first, None).await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    assert_eq!(lock.node().unwrap(), format!("{path}/lock-0000000001"));
    lock.release().await.unwrap();
    // The service deletes the empty path; it is made again, its counter at 0.
    raw.delete(&path, None).await.unwrap();
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
    let holder = service().await;
    let next = service().await;
    assert_eq!(next, format!("{path}/lock-0000000001"));
    let mut waiting = spawn_acquire(&lock, Acquire::default());
    queued(&raw, &path, 3).await;
    // The middle service gives up: the holder still holds.
    raw.delete(&next, None).await.unwrap();
    assert!(still_waiting(&mut waiting).await, "held beside lock-0000000000");
    raw.delete(&holder, None).await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    lock.release().await.unwrap();
}

/// Issue 10, item 2: an operator's `deleteall` of a "stuck" lock path
/// deletes the holder's node and the waiter's. The waiter, woken by its last
/// blocker's deletion, must not hold without a node: it queues again, here
/// behind a third contender that re-created the path meanwhile.
#[tokio::test(flavor = "multi_thread")]
async fn deleting_the_lock_path_under_a_waiter_makes_it_queue_again_not_hold() {
    for mirror in [false, true] {
        deleting_the_lock_path_under_a_waiter_makes_it_queue_again_not_hold_with(mirror).await;
    }
}

async fn deleting_the_lock_path_under_a_waiter_makes_it_queue_again_not_hold_with(mirror: bool) {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("deleteall");
    let holder = design(mirror, &session(&connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter_session = session(&connect).await;
    let waiter = design(mirror, &waiter_session, &path).unwrap();
    let mut waiting = spawn_acquire(&waiter, Acquire::default());
    queued(&raw, &path, 2).await;
    let third = design(mirror, &session(&connect).await, &path).unwrap();

    // The waiter hears of the deletion only once the third contender holds.
    let id = waiter_session.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    delete_all(&raw, &path).await;
    assert!(third.acquire(Acquire::no_wait()).await.unwrap(), "the third contender re-creates the path and holds");
    inject(move || harness().heal(id).unwrap()).await;

    tokio::select! {
        done = &mut waiting => panic!("the waiter returned {done:?} while the third contender holds: two holders"),
        _ = queued(&raw, &path, 2) => {}
    }
    // Queued again: it must keep waiting for as long as the third holds.
    assert!(still_waiting(&mut waiting).await, "the waiter held beside the third contender");
    assert!(third.release().await.unwrap());
    assert!(waiting.await.unwrap().unwrap());
    assert!(node_exists(&raw, &waiter).await, "the waiter holds with a node of its own");
    waiter.release().await.unwrap();
}

/// A waiter whose own node an operator deleted notices when its predecessor
/// goes, and queues again instead of holding without a node.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_whose_node_was_deleted_queues_again_when_its_predecessor_goes() {
    for mirror in [false, true] {
        a_waiter_whose_node_was_deleted_queues_again_when_its_predecessor_goes_with(mirror).await;
    }
}

async fn a_waiter_whose_node_was_deleted_queues_again_when_its_predecessor_goes_with(mirror: bool) {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("waiter-node-deleted");
    let holder = design(mirror, &session(&connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter = design(mirror, &session(&connect).await, &path).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let nodes = queued(&raw, &path, 2).await;
    let holder_node = holder.node().unwrap();
    let waiter_node = nodes.iter().map(|n| format!("{path}/{n}")).find(|n| *n != holder_node).unwrap();
    raw.delete(&waiter_node, None).await.unwrap();

    assert!(holder.release().await.unwrap());
    assert!(waiting.await.unwrap().unwrap());
    assert_ne!(waiter.node().unwrap(), waiter_node, "a new node");
    assert!(node_exists(&raw, &waiter).await, "the waiter holds with a node of its own");
    let other = design(mirror, &session(&connect).await, &path).unwrap();
    assert!(!other.acquire(Acquire::no_wait()).await.unwrap());
    waiter.release().await.unwrap();
}

/// The same-session shortcut predicts the name of the previous node of its
/// session in line. If the path was deleted and re-created between the two
/// creates, a node of that name is gone (it held, in the old path) while a
/// node of another client holds in the new one: the shortcut must not apply.
#[tokio::test(flavor = "multi_thread")]
async fn a_path_recreated_between_two_creates_of_one_session_is_noticed() {
    for mirror in [false, true] {
        a_path_recreated_between_two_creates_of_one_session_is_noticed_with(mirror).await;
    }
}

async fn a_path_recreated_between_two_creates_of_one_session_is_noticed_with(mirror: bool) {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("recreated-between");
    let shared = session(&connect).await;
    let first = design(mirror, &shared, &path).unwrap();
    assert!(first.acquire(Acquire::default()).await.unwrap(), "sequence 0 of the old path");
    let second = design(mirror, &shared, &path).unwrap();
    let other = design(mirror, &session(&connect).await, &path).unwrap();

    // The session hears nothing of the deletion until `second` has queued.
    let id = shared.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    delete_all(&raw, &path).await;
    assert!(other.acquire(Acquire::no_wait()).await.unwrap(), "sequence 0 of the new path");
    let mut queueing = Box::pin(second.acquire(Acquire::default()));
    // One poll sends the create: `second` joins its session's line behind `first`.
    assert!(tokio::time::timeout(Duration::ZERO, &mut queueing).await.is_err());
    inject(move || harness().heal(id).unwrap()).await;

    tokio::select! {
        done = &mut queueing => panic!("second returned {done:?} while another client holds: two holders"),
        _ = queued(&raw, &path, 2) => {}
    }
    // Its node is sequence 1, named as `first`'s old node's successor would
    // be: it must keep waiting for as long as the other client holds.
    assert!(still_waiting(&mut queueing).await, "second held beside the other client");
    assert!(other.release().await.unwrap());
    assert!(tokio::time::timeout(Duration::from_secs(10), queueing).await.expect("second holds").unwrap());
    assert!(node_exists(&raw, &second).await);
    second.release().await.unwrap();
}

/// Issue 10, item 6: a create whose reply was lost lands late, after the
/// listing that did not find it and just before the create again, so its
/// node sits right ahead of ours. It is ours to delete, not to wait for:
/// neither as the predecessor in a listing (a single try would find the lock
/// taken) nor as the same-session neighbour a waiting acquire would watch.
#[tokio::test(flavor = "multi_thread")]
async fn a_create_that_lands_late_right_ahead_of_its_retry_is_deleted_not_waited_for() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let tries = [("single try", Acquire::no_wait()), ("wait", Acquire::timeout(Duration::from_secs(5)))];
    // DistributedLock's `lock-` is every node's prefix: the late node is told by the token in its data.
    let designs = [(Scheme::Kazoo, false), (Scheme::Kazoo, true), (Scheme::DistributedLock, false)];
    for ((how, options), (scheme, mirror)) in tries.into_iter().flat_map(|t| designs.map(|d| (t.clone(), d))) {
        let how = format!("{how}, {scheme:?}, mirror: {mirror}");
        let path = unique_path("late-create");
        // The path exists: the first create on it is the lock node's.
        raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
        let session = session(&connect).await;
        let config = LockConfig { mirror, scheme, ..LockConfig::default() };
        let lock = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
        let id = session.status().session_id;
        let creates = Select::session(id).op(Op::Create2).path(path.clone());
        let retry = Landing::Before(Select::any().op(Op::Create2).path(path.clone()));
        let fault = inject(move || harness().land_late(creates, retry).unwrap()).await;

        let acquired = lock.acquire(options).await.unwrap();
        let report = inject(move || harness().wait_fault(fault, FaultState::Fired, Duration::from_secs(10))).await;
        report.expect("the first create landed, right before the second");
        assert!(acquired, "{how}: the acquire found its own late node ahead");
        let ours = lock.node().unwrap();
        assert_eq!(children(&raw, &path).await, [&ours[path.len() + 1..]], "{how}: the late node is gone");
        lock.release().await.unwrap();
        assert!(children(&raw, &path).await.is_empty());
    }
}

/// A create whose reply was lost, applied by the server, among other
/// clients' nodes of the same name (DistributedLock's `lock-`): the acquire
/// finds its own by the token in its data, queues with it, and leaves no
/// second node.
#[tokio::test(flavor = "multi_thread")]
async fn a_lost_create_reply_under_a_shared_prefix_finds_its_node_by_its_token() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("lost-create-token");
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    let (_, sequence) = raw.create(&format!("{path}/lock-"), b"", &ephemeral).await.unwrap();
    let theirs = format!("{path}/lock-{sequence}");
    let session = session(&connect).await;
    let config = LockConfig { scheme: Scheme::DistributedLock, identifier: b"ours".to_vec(), ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
    let creates = Select::session(session.status().session_id).op(Op::Create2).path(path.clone());
    let fault = inject(move || harness().drop_reply(creates).unwrap()).await;

    let waiting = spawn_acquire(&lock, Acquire::timeout(Duration::from_secs(15)));
    let report = inject(move || harness().wait_fault(fault, FaultState::Fired, Duration::from_secs(10))).await;
    report.expect("the create's reply was dropped");
    queued(&raw, &path, 2).await;
    raw.delete(&theirs, None).await.unwrap();
    assert!(waiting.await.unwrap().unwrap(), "the acquire found its own node and held");
    let ours = lock.node().unwrap();
    assert_eq!(children(&raw, &path).await, [&ours[path.len() + 1..]], "one node, ours");
    assert_eq!(lock.queue().await.unwrap(), ["ours"]);
    lock.release().await.unwrap();
    assert!(children(&raw, &path).await.is_empty());
}

/// A lost create that never lands leaves its tag doubtful for the rest of
/// the session: under a shared prefix, each listing of the path reads the
/// `lock-` nodes it has not read. On a path where DistributedLock clients
/// come and go all the time, a waiter must still decide on what it listed,
/// not read and list again for as long as new nodes keep coming.
#[tokio::test(flavor = "multi_thread")]
async fn a_doubtful_shared_prefix_tag_does_not_keep_a_waiter_from_deciding_on_a_busy_path() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("doubtful-busy");
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let session = session(&connect).await;
    let config = LockConfig { scheme: Scheme::DistributedLock, ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
    let creates = Select::session(session.status().session_id).op(Op::Create2).path(path.clone());
    // Held back until a create2 that never comes: it never lands.
    let never = Landing::After(Select::any().op(Op::Create2).path("/never"));
    let fault = inject(move || harness().land_late(creates, never).unwrap()).await;
    assert!(lock.acquire(Acquire::timeout(Duration::from_secs(5))).await.unwrap());
    lock.release().await.unwrap();
    inject(move || harness().disarm(fault)).await.ok();

    // DistributedLock clients that try once and give up, many at a time.
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let churn: Vec<_> = (0..8)
        .map(|_| {
            let (raw, path, stop) = (raw.clone(), path.clone(), stop.clone());
            tokio::spawn(async move {
                let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let (_, sequence) = raw.create(&format!("{path}/lock-"), b"", &ephemeral).await.unwrap();
                    raw.delete(&format!("{path}/lock-{sequence}"), None).await.unwrap();
                }
            })
        })
        .collect();
    let before = tokio::task::block_in_place(|| received(&session));
    let acquired = lock.acquire(Acquire::timeout(Duration::from_secs(10))).await;
    let sent = tokio::task::block_in_place(|| received(&session)) - before;
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    for churn in churn {
        churn.await.unwrap();
    }
    assert!(acquired.unwrap(), "the waiter read and listed until its timeout");
    // A create, a listing and a read per node it waited behind, and the
    // quorum's confirmations: tens. Listing again after each read: hundreds.
    assert!(sent < 100, "{sent} requests for one acquire");
    lock.release().await.unwrap();
}

/// The model's `doubtful_prefixes_forgotten_with_the_attempt`: a create
/// whose reply was lost lands late, after the attempt that gave its prefix
/// up has ended (an operator deleted that attempt's node while it waited)
/// and after the next attempt's listing. An operator deletes that attempt's
/// node too: the attempt after it finds the late node ahead. It must still
/// know it as its own — delete it, not wait on it until its timeout.
///
/// (Landing right before the next attempt's create is no test of main: the
/// ended attempt's sweep of the prefix, sent just after that create, finds
/// the node then, most of the time.)
#[tokio::test(flavor = "multi_thread")]
async fn a_create_that_lands_late_after_its_attempt_ended_is_not_waited_for() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("late-after-attempt");
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let holder = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let other = Lock::mutex(&session(&connect).await, &path).unwrap();
    let other_waiting = spawn_acquire(&other, Acquire::default());
    let others = queued(&raw, &path, 2).await;
    let session = session(&connect).await;
    let lock = listing(&session, &path);
    let id = session.status().session_id;
    let creates = Select::session(id).op(Op::Create2).path(path.clone());
    // Lands once the next attempt, queued behind the holder, watches it:
    // after that attempt's listing, and after the ended attempt's own sweep
    // of the prefix, which is sent before the next attempt's create returns.
    let watches_holder = Select::any().op(Op::GetData).path(holder.node().unwrap());
    let fault = inject(move || harness().land_late(creates, Landing::After(watches_holder)).unwrap()).await;

    let waiting = spawn_acquire(&lock, Acquire::timeout(Duration::from_secs(8)));
    let retry = queued(&raw, &path, 3).await.into_iter().find(|n| !others.contains(n)).unwrap();
    raw.delete(&format!("{path}/{retry}"), None).await.unwrap();
    // The node it waits for goes: it finds its own gone, and queues again behind the holder.
    other.cancel();
    assert!(other_waiting.await.unwrap().is_err());
    let report = inject(move || harness().wait_fault(fault, FaultState::Fired, Duration::from_secs(10))).await;
    let request = report.expect("the first create landed after the next attempt's listing").request.unwrap();
    let late = request.path.unwrap()[path.len() + 1..].to_owned();
    let holder_node = &holder.node().unwrap()[path.len() + 1..];
    let nodes = children(&raw, &path).await;
    let next = nodes.iter().find(|n| *n != holder_node && !n.starts_with(&late)).expect("the next attempt's node");
    raw.delete(&format!("{path}/{next}"), None).await.unwrap();
    assert!(holder.release().await.unwrap());

    assert!(waiting.await.unwrap().unwrap(), "the acquire waited on its own late node");
    let ours = lock.node().unwrap();
    assert_eq!(children(&raw, &path).await, [&ours[path.len() + 1..]], "the late node is gone");
    lock.release().await.unwrap();
    assert!(children(&raw, &path).await.is_empty(), "no node of the session is left");
}

/// Holds `path` with a late node of the session behind the hold: a create
/// whose reply was lost in an earlier attempt (its node deleted by an
/// operator) lands once the winning attempt has listed the path and waits
/// for the holder. Returns the late node's prefix.
async fn hold_ahead_of_a_late_create(connect: &str, raw: &zk::Client, lock: &Lock, options: Acquire) -> String {
    let path = lock.path().to_owned();
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let holder = Lock::mutex(&session(connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let other = Lock::mutex(&session(connect).await, &path).unwrap();
    let other_waiting = spawn_acquire(&other, Acquire::default());
    let others = queued(raw, &path, 2).await;
    let id = lock.session().status().session_id;
    let creates = Select::session(id).op(Op::Create2).path(path.clone());
    let watches_holder = Select::any().op(Op::GetData).path(holder.node().unwrap());
    let fault = inject(move || harness().land_late(creates, Landing::After(watches_holder)).unwrap()).await;
    let waiting = spawn_acquire(lock, options);
    let retry = queued(raw, &path, 3).await.into_iter().find(|n| !others.contains(n)).unwrap();
    raw.delete(&format!("{path}/{retry}"), None).await.unwrap();
    other.cancel();
    assert!(other_waiting.await.unwrap().is_err());
    let report = inject(move || harness().wait_fault(fault, FaultState::Fired, Duration::from_secs(10))).await;
    let request = report.expect("the first create landed behind the next attempt").request.unwrap();
    let late = request.path.unwrap()[path.len() + 1..].to_owned();
    assert!(holder.release().await.unwrap());
    assert!(waiting.await.unwrap().unwrap());
    let ours = &lock.node().unwrap()[path.len() + 1..];
    let mut nodes = children(raw, &path).await;
    nodes.sort_by_key(|n| naming_sequence(n));
    let behind = nodes.len() == 2 && nodes[0] == ours && nodes[1].starts_with(&late);
    assert!(behind, "{nodes:?}: the late node behind ours");
    late
}

fn naming_sequence(node: &str) -> u32 {
    node[node.len() - 10..].parse().unwrap()
}

/// Issue 10: the late duplicates a hold leaves behind go however the hold
/// ends — released, its lease run out, its node deleted by an operator —
/// even when they were given up by an earlier attempt than the one that
/// won. (A hold lost to its session's end needs nothing: an ephemeral late
/// node ends with the session, a persistent hold outlives it.)
#[tokio::test(flavor = "multi_thread")]
async fn a_late_create_of_an_earlier_attempt_goes_however_the_hold_ends() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    for ending in [None, Some(LostReason::LeaseExpired), Some(LostReason::NodeDeleted)] {
        let lock = listing(&session(&connect).await, &unique_path("late-hold-ends"));
        let options = match ending {
            Some(LostReason::LeaseExpired) => Acquire::default().lease(Duration::from_secs(2)),
            _ => Acquire::default(),
        };
        let late = hold_ahead_of_a_late_create(&connect, &raw, &lock, options).await;
        match ending {
            None => assert!(lock.release().await.unwrap()),
            Some(reason) => {
                if reason == LostReason::NodeDeleted {
                    raw.delete(&lock.node().unwrap(), None).await.unwrap();
                }
                let mut states = lock.subscribe();
                let lost = states.wait_for(|s| *s == LockState::Lost(reason));
                tokio::time::timeout(Duration::from_secs(10), lost).await.expect("lost").unwrap();
            }
        }
        let gone = within_children(&raw, lock.path(), Duration::from_secs(10), |c| c.is_empty()).await;
        assert!(gone.is_some(), "{ending:?}: the late node {late}… outlived the hold");
    }
}

/// A persistent create whose reply was lost lands once the hold is decided
/// (after the hold's own-node watch is set), so no listing of the acquire
/// shows it. Its prefix stays with the session: closing the session removes
/// the late node, and keeps the persistent hold (kazoo's `ephemeral=False`).
#[tokio::test(flavor = "multi_thread")]
async fn closing_a_session_removes_a_persistent_late_node_and_keeps_the_hold() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("late-persistent");
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let session = session(&connect).await;
    let lock = listing(&session, &path);
    let id = session.status().session_id;
    let creates = Select::session(id).op(Op::Create2).path(path.clone());
    let watches_own = Landing::After(Select::any().op(Op::GetData).path(path.clone()));
    let fault = inject(move || harness().land_late(creates, watches_own).unwrap()).await;

    assert!(lock.acquire(Acquire::default().persistent()).await.unwrap());
    let report = inject(move || harness().wait_fault(fault, FaultState::Fired, Duration::from_secs(10))).await;
    let late = report.expect("the first create landed").request.unwrap().path.unwrap()[path.len() + 1..].to_owned();
    let ours = lock.node().unwrap()[path.len() + 1..].to_owned();
    let mut nodes = children(&raw, &path).await;
    nodes.sort();
    let mut expected = vec![ours.clone(), format!("{late}{:010}", naming_sequence(&ours) + 1)];
    expected.sort();
    assert_eq!(nodes, expected, "the late node behind the hold");
    session.close().await;
    assert_eq!(children(&raw, &path).await, [ours.clone()], "the late node outlived the closed session");
    raw.delete(&format!("{path}/{ours}"), None).await.unwrap();
}

/// A create whose reply was lost on a lock path that is not there (never
/// made yet, or deleted by an operator meanwhile): the listing that looks
/// for its node finds no path, which means "not created", not an error.
/// Here the create is held back and lands, failing, right before the create
/// again.
#[tokio::test(flavor = "multi_thread")]
async fn a_lost_create_on_a_missing_lock_path_is_created_again() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("lost-create-no-path");
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &path).unwrap();
    let id = session.status().session_id;
    let creates = Select::session(id).op(Op::Create2).path(path.clone());
    let retry = Landing::Before(Select::any().op(Op::Create2).path(path.clone()));
    let fault = inject(move || harness().land_late(creates, retry).unwrap()).await;

    let acquired = lock.acquire(Acquire::timeout(Duration::from_secs(5))).await;
    assert!(acquired.expect("no error for a missing path"), "holds");
    let report = inject(move || harness().wait_fault(fault, FaultState::Fired, Duration::from_secs(10))).await;
    const NO_NODE: i32 = -101;
    assert_eq!(report.expect("the first create landed").reply.map(|(_, err)| err), Some(NO_NODE));
    let ours = lock.node().unwrap();
    assert_eq!(children(&raw, &path).await, [&ours[path.len() + 1..]]);
    lock.release().await.unwrap();
    assert!(children(&raw, &path).await.is_empty());
}

/// Requests the server received from `session`'s connection (`cons`).
fn received(session: &zoolock::Session) -> u64 {
    use std::io::{Read, Write};
    let mut conn = std::net::TcpStream::connect(("127.0.0.1", harness().client_port(0).unwrap())).unwrap();
    conn.write_all(b"cons").unwrap();
    let mut text = String::new();
    conn.read_to_string(&mut text).unwrap();
    let sid = format!("sid={:#x},", session.status().session_id);
    let line = text.lines().find(|l| l.contains(&sid)).unwrap_or_else(|| panic!("{sid} in {text}"));
    let recved = line.split("recved=").nth(1).unwrap();
    recved[..recved.find(',').unwrap()].parse().unwrap()
}

/// Requests per acquire+release, printed: uncontended; a waiter queued
/// behind a holder of another session; a holder and a waiter on one session
/// (both counted). Run with
/// `-- --ignored --nocapture packets`.
#[tokio::test(flavor = "multi_thread")]
#[ignore]
async fn packets_per_acquisition() {
    const CYCLES: u64 = 100;
    let connect = shared_server();
    let raw = raw(&connect).await;

    let alone = session(&connect).await;
    let lock = Lock::mutex(&alone, &unique_path("packets-uncontended")).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    lock.release().await.unwrap();
    let start = inject(move || received(&alone)).await;
    for _ in 0..CYCLES {
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        lock.release().await.unwrap();
    }
    let alone = lock.session().clone();
    let uncontended = (inject(move || received(&alone)).await - start) as f64 / CYCLES as f64;

    let mut handoffs = Vec::new();
    for one_session in [false, true] {
        let path = unique_path("packets-handoff");
        let first = session(&connect).await;
        let second = if one_session { first.clone() } else { session(&connect).await };
        let (holder, waiter) = (Lock::mutex(&first, &path).unwrap(), Lock::mutex(&second, &path).unwrap());
        let counted = second.clone();
        let start = inject(move || received(&counted)).await;
        for _ in 0..CYCLES {
            assert!(holder.acquire(Acquire::default()).await.unwrap());
            let waiting = spawn_acquire(&waiter, Acquire::default());
            queued(&raw, &path, 2).await;
            holder.release().await.unwrap();
            assert!(waiting.await.unwrap().unwrap());
            waiter.release().await.unwrap();
        }
        let counted = second.clone();
        let requests = inject(move || received(&counted)).await - start;
        handoffs.push(requests as f64 / CYCLES as f64);
    }
    println!(
        "requests per acquire+release: uncontended {uncontended:.2}; a waiter behind another session's holder {:.2}; \
         holder and waiter on one session {:.2}",
        handoffs[0], handoffs[1]
    );
}

//! The exclusive lock against a real ZooKeeper: ordering, single tries,
//! timeouts, cancellation, handover, fencing and node names.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use tokio::sync::mpsc;
use zoolock::{Acquire, Error, Kind, Lock, LockConfig, LockState, Scheme};

fn config(identifier: &str) -> LockConfig {
    LockConfig { identifier: identifier.as_bytes().to_vec(), ..LockConfig::default() }
}

#[tokio::test(flavor = "multi_thread")]
async fn acquire_and_release_leave_a_kazoo_named_node_only_while_held() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let path = unique_path("basic");
    let lock = Lock::new(&session, &path, Kind::Mutex, config("worker-1")).unwrap();

    assert!(lock.acquire(Acquire::default()).await.unwrap());
    assert!(lock.is_acquired());
    assert_eq!(lock.state(), LockState::Held);
    let nodes = children(&raw, &path).await;
    assert_eq!(nodes.len(), 1);
    let name = &nodes[0];
    assert_eq!(name.len(), 32 + "__lock__".len() + 10, "{name}");
    assert!(name[..32].bytes().all(|b| b.is_ascii_hexdigit()) && name[32..].starts_with("__lock__"));
    let (data, stat) = raw.get_data(&format!("{path}/{name}")).await.unwrap();
    assert_eq!(data, b"worker-1");
    assert_eq!(lock.fencing_token(), Some(stat.czxid));
    assert_eq!(lock.node().as_deref(), Some(format!("{path}/{name}").as_str()));
    assert_eq!(lock.queue().await.unwrap(), vec!["worker-1".to_string()]);

    assert!(lock.release().await.unwrap());
    assert!(!lock.is_acquired());
    assert_eq!(lock.state(), LockState::Released);
    assert!(children(&raw, &path).await.is_empty());
    assert!(!lock.release().await.unwrap(), "a second release has nothing to release");
}

#[tokio::test(flavor = "multi_thread")]
async fn curator_scheme_names_nodes_like_interprocess_mutex() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let path = unique_path("curator");
    let cfg = LockConfig { scheme: Scheme::Curator, ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, cfg).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let name = children(&raw, &path).await.remove(0);
    assert!(name.starts_with("_c_") && name[3 + 36..].starts_with("-lock-"), "{name}");
    lock.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn waiters_get_the_lock_in_queue_order() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("fifo");
    let holder_session = session(&connect).await;
    let holder = Lock::new(&holder_session, &path, Kind::Mutex, config("holder")).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());

    let (order_tx, mut order_rx) = mpsc::unbounded_channel();
    let mut tasks = Vec::new();
    for i in 0..4 {
        let session = session(&connect).await;
        let lock = Lock::new(&session, &path, Kind::Mutex, config(&format!("waiter-{i}"))).unwrap();
        let order_tx = order_tx.clone();
        tasks.push(tokio::spawn(async move {
            assert!(lock.acquire(Acquire::default()).await.unwrap());
            order_tx.send(i).unwrap();
            lock.release().await.unwrap();
            session
        }));
        // Queue them one at a time so their order is known.
        queued(&raw, &path, i + 2).await;
    }
    let expected: Vec<String> =
        ["holder", "waiter-0", "waiter-1", "waiter-2", "waiter-3"].iter().map(|s| s.to_string()).collect();
    assert_eq!(holder.queue().await.unwrap(), expected);
    holder.release().await.unwrap();
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(order_rx.recv().await.unwrap());
    }
    assert_eq!(order, vec![0, 1, 2, 3]);
    for task in tasks {
        task.await.unwrap();
    }
    assert!(children(&raw, &path).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn single_tries_timeouts_and_cancels_leave_no_node() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("no-orphans");
    let holder = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let other_session = session(&connect).await;
    let other = Lock::mutex(&other_session, &path).unwrap();

    assert!(!other.acquire(Acquire::no_wait()).await.unwrap());
    assert_eq!(children(&raw, &path).await.len(), 1, "a failed single try leaves no node");
    assert!(!other.acquire(Acquire::timeout(Duration::ZERO)).await.unwrap());
    assert_eq!(children(&raw, &path).await.len(), 1);

    assert!(!other.acquire(Acquire::timeout(Duration::from_millis(300))).await.unwrap());
    assert_eq!(children(&raw, &path).await.len(), 1, "a timed-out acquire leaves no node");

    let waiting = spawn_acquire(&other, Acquire::default());
    queued(&raw, &path, 2).await;
    other.cancel();
    assert!(matches!(waiting.await.unwrap(), Err(Error::Cancelled { .. })));
    assert_eq!(children(&raw, &path).await.len(), 1, "a cancelled acquire leaves no node");

    // Dropping a pending acquire (a Rust future's cancellation) also cleans up.
    let dropped = spawn_acquire(&other, Acquire::default());
    queued(&raw, &path, 2).await;
    dropped.abort();
    until_children(&raw, &path, "the dropped contender's node to go", |c| c.len() == 1).await;

    assert!(!other.is_acquired());
    holder.release().await.unwrap();
    assert!(other.acquire(Acquire::no_wait()).await.unwrap(), "the handle still works after all that");
    other.release().await.unwrap();
    assert!(other.acquire(Acquire::timeout(Duration::ZERO)).await.unwrap(), "a zero timeout tries once, and can win");
    other.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_holder_hands_over_to_the_next_waiter() {
    let connect = shared_server();
    let path = unique_path("handover");
    let holder_session = session(&connect).await;
    let holder = Lock::mutex(&holder_session, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let mut holder_state = holder.subscribe();

    let waiter = Lock::mutex(&session(&connect).await, &path).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    queued(&raw(&connect).await, &path, 2).await;
    holder_session.close().await;
    assert!(waiting.await.unwrap().unwrap());
    holder_state.wait_for(|s| *s == LockState::Lost(zoolock::LostReason::SessionClosed)).await.unwrap();
    assert!(!holder.is_acquired());
    assert!(matches!(holder.acquire(Acquire::default()).await, Err(Error::Closed)));
    waiter.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_a_session_fails_its_pending_acquires_and_releases_its_holds() {
    let connect = shared_server();
    let path = unique_path("close-pending");
    let closing = session(&connect).await;
    let holder = Lock::mutex(&closing, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter = Lock::mutex(&closing, &path).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let raw = raw(&connect).await;
    queued(&raw, &path, 2).await;
    closing.close().await;
    let failed = tokio::time::timeout(Duration::from_secs(10), waiting).await.expect("the pending acquire ended");
    assert_eq!(failed.unwrap(), Err(Error::Closed));
    // The pending acquire no longer keeps the session open: the server drops its nodes.
    until_children(&raw, &path, "the closed session's nodes are gone", |c| c.is_empty()).await;
    let other = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(other.acquire(Acquire::no_wait()).await.unwrap());
    other.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn fencing_tokens_strictly_increase_across_holders() {
    let connect = shared_server();
    let path = unique_path("fencing");
    let sessions = [session(&connect).await, session(&connect).await, session(&connect).await];
    let locks: Vec<Lock> = sessions.iter().map(|s| Lock::mutex(s, &path).unwrap()).collect();
    let mut last = i64::MIN;
    for round in 0..3 {
        for lock in &locks {
            assert!(lock.acquire(Acquire::default()).await.unwrap());
            let token = lock.fencing_token().unwrap();
            assert!(token > last, "round {round}: token {token} after {last}");
            last = token;
            lock.release().await.unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn one_handle_shared_by_many_tasks_has_one_holder_at_a_time() {
    let connect = shared_server();
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &unique_path("shared-handle")).unwrap();
    let inside = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let (lock, inside) = (lock.clone(), inside.clone());
        tasks.push(tokio::spawn(async move {
            for _ in 0..5 {
                assert!(lock.acquire(Acquire::default()).await.unwrap());
                assert_eq!(inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst), 0);
                tokio::task::yield_now().await;
                inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                assert!(lock.release().await.unwrap());
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert!(!lock.is_acquired());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_releases_the_lock_by_itself() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("lease");
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &path).unwrap();
    let mut state = lock.subscribe();
    assert!(lock.acquire(Acquire::default().lease(Duration::from_millis(300))).await.unwrap());
    state.wait_for(|s| *s == LockState::Lost(zoolock::LostReason::LeaseExpired)).await.unwrap();
    assert!(!lock.is_acquired());
    until_children(&raw, &path, "the leased node to go", |c| c.is_empty()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_persistent_lock_node_outlives_its_session_expiring() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("persistent");
    let first = session(&connect).await;
    let lock = Lock::mutex(&first, &path).unwrap();
    assert!(lock.acquire(Acquire::default().persistent()).await.unwrap());
    let id = first.status().session_id;
    tokio::task::spawn_blocking(move || zk_harness::shared().expire(id).unwrap()).await.unwrap();
    let mut status = first.subscribe();
    status.wait_for(|s| s.generation == 2 && s.state == zoolock::SessionState::Connected).await.unwrap();
    assert_eq!(children(&raw, &path).await.len(), 1);
    assert!(lock.is_acquired(), "a persistent hold survives its session");
    let second = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(!second.acquire(Acquire::no_wait()).await.unwrap());
    assert!(lock.release().await.unwrap());
    assert!(children(&raw, &path).await.is_empty());
}

/// `close` releases everything the session has, persistent nodes included:
/// nothing could release them after it.
#[tokio::test(flavor = "multi_thread")]
async fn closing_a_session_keeps_its_persistent_hold_and_removes_its_persistent_waiter() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("persistent-close");
    let session = session(&connect).await;
    let holder = Lock::new(&session, &path, Kind::Mutex, config("holder")).unwrap();
    assert!(holder.acquire(Acquire::default().persistent()).await.unwrap());
    let waiter = Lock::new(&session, &path, Kind::Mutex, config("waiter")).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default().persistent());
    queued(&raw, &path, 2).await;

    let held = holder.node().unwrap();
    session.close().await;
    // The hold was asked to outlive its session (kazoo's test_lock_ephemeral);
    // the waiter's node never held anything: an orphan if it stayed.
    let left: Vec<String> = children(&raw, &path).await.into_iter().map(|c| format!("{path}/{c}")).collect();
    assert_eq!(left, vec![held], "close must keep the persistent hold and remove the persistent waiter");
    assert_eq!(holder.state(), LockState::Lost(zoolock::LostReason::SessionClosed));
    assert!(!holder.is_acquired());
    assert_eq!(waiting.await.unwrap(), Err(Error::Closed));
}

#[tokio::test(flavor = "multi_thread")]
async fn handles_of_one_session_hand_over_in_order_and_a_cancelled_waiter_hands_nothing() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("one-session");
    let session = session(&connect).await;
    let holder = Lock::new(&session, &path, Kind::Mutex, config("holder")).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let quitter = Lock::new(&session, &path, Kind::Mutex, config("quitter")).unwrap();
    let quitting = spawn_acquire(&quitter, Acquire::default());
    queued(&raw, &path, 2).await;
    let (order_tx, mut order_rx) = mpsc::unbounded_channel();
    for i in 0..3 {
        let lock = Lock::new(&session, &path, Kind::Mutex, config(&format!("w{i}"))).unwrap();
        let order_tx = order_tx.clone();
        tokio::spawn(async move {
            assert!(lock.acquire(Acquire::default()).await.unwrap());
            order_tx.send(i).unwrap();
            lock.release().await.unwrap();
        });
        queued(&raw, &path, i + 3).await;
    }
    // The quitter's node goes without ever holding: its successor must not think it holds.
    quitter.cancel();
    assert!(matches!(quitting.await.unwrap(), Err(Error::Cancelled { .. })));
    queued(&raw, &path, 4).await;
    assert_eq!(holder.queue().await.unwrap(), ["holder", "w0", "w1", "w2"]);
    assert!(order_rx.try_recv().is_err(), "nobody got in while the holder held");
    holder.release().await.unwrap();
    let mut order = Vec::new();
    for _ in 0..3 {
        order.push(order_rx.recv().await.unwrap());
    }
    assert_eq!(order, [0, 1, 2]);
}

/// A worker that locks path after path (a lock per job) keeps a record of
/// the paths it has nodes on, and of some it had, not of every path it
/// ever locked: the session's lines and its holds' order forget a path
/// with no node of the session in line once their maps double.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_locking_path_after_path_keeps_only_what_it_has_in_line() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let base = unique_path("per-job");
    let held: Vec<Lock> = (0..40).map(|i| Lock::mutex(&session, &format!("{base}/held-{i}")).unwrap()).collect();
    for lock in &held {
        assert!(lock.acquire(Acquire::default()).await.unwrap());
    }
    for i in 0..400 {
        let lock = Lock::mutex(&session, &format!("{base}/job-{i}")).unwrap();
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        assert!(lock.release().await.unwrap());
    }
    // 440 paths locked; 40 held. Each map forgets down to what is in line
    // (the order's, to what the lines keep), then grows to twice that.
    let (lines, orders) = (session.lock_lines_kept(), session.hold_orders_kept());
    assert!((40..=128).contains(&lines), "{lines} lines kept");
    assert!((40..=256).contains(&orders), "{orders} hold orders kept");
    // What is held still hands over: a waiter of another session gets each lock.
    let other = common::session(&connect).await;
    for (i, lock) in held.iter().enumerate().step_by(13) {
        let path = format!("{base}/held-{i}");
        let waiter = Lock::mutex(&other, &path).unwrap();
        let waiting = spawn_acquire(&waiter, Acquire::default());
        queued(&raw, &path, 2).await;
        assert!(lock.release().await.unwrap());
        assert!(waiting.await.unwrap().unwrap());
        assert!(waiter.release().await.unwrap());
    }
    other.close().await;
    session.close().await;
}

//! The multi-lock: every path or none, in one order, released together,
//! a fencing token per path, no node left by a failed or cancelled acquire,
//! and a loss of any path reported as the hold's.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Acquire, Error, Lock, LockState, LostReason, MultiLock, Session, SessionState};

async fn wait_state(lock: &MultiLock, want: LockState) {
    let mut states = lock.subscribe();
    tokio::time::timeout(Duration::from_secs(20), states.wait_for(|s| *s == want))
        .await
        .unwrap_or_else(|_| panic!("the multi-lock never became {want:?}"))
        .unwrap();
}

/// Three lock paths under one unique base, named so that the order given
/// ("c", "a", "b") is not the order taken.
fn three_paths(name: &str) -> [String; 3] {
    let base = unique_path(name);
    [format!("{base}/c"), format!("{base}/a"), format!("{base}/b")]
}

async fn nodes_on(raw: &zookeeper_client::Client, paths: &[String]) -> Vec<Vec<String>> {
    let mut all = Vec::new();
    for path in paths {
        all.push(children(raw, path).await);
    }
    all
}

#[tokio::test(flavor = "multi_thread")]
async fn it_holds_every_path_with_a_token_each_and_releases_them_together() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-all");
    let session = session(&connect).await;
    let multi = MultiLock::new(&session, &paths, "worker-1").unwrap();
    let mut sorted = paths.to_vec();
    sorted.sort();
    assert_eq!(multi.paths(), sorted.iter().map(String::as_str).collect::<Vec<_>>());

    assert!(multi.acquire(Acquire::default()).await.unwrap());
    let tokens = multi.fencing_tokens();
    assert_eq!(tokens.iter().map(|(p, _)| p.as_str()).collect::<Vec<_>>(), multi.paths());
    assert!(tokens.windows(2).all(|w| w[0].1 < w[1].1), "taken in order: {tokens:?}");
    assert_eq!(multi.fencing_token(), Some(tokens[0].1));
    for (path, nodes) in sorted.iter().zip(nodes_on(&raw, &sorted).await) {
        assert_eq!(nodes.len(), 1, "one node on {path}");
        assert!(nodes[0].contains("__lock__"), "a kazoo lock node: {}", nodes[0]);
        assert_eq!(raw.get_data(&format!("{path}/{}", nodes[0])).await.unwrap().0, b"worker-1");
    }
    // Each path is an ordinary lock to everyone else.
    let other = Lock::mutex(&session, &paths[2]).unwrap();
    assert!(!other.acquire(Acquire::no_wait()).await.unwrap());

    assert!(multi.release().await.unwrap());
    assert!(nodes_on(&raw, &sorted).await.iter().all(Vec::is_empty));
    assert!(multi.fencing_tokens().is_empty());
    assert!(other.acquire(Acquire::no_wait()).await.unwrap());
    other.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn one_path_taken_means_none_held_and_no_node_left_anywhere() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-none");
    let blocker = Lock::mutex(&session(&connect).await, &paths[2]).unwrap(); // ".../b": the middle one
    assert!(blocker.acquire(Acquire::default()).await.unwrap());
    let multi = MultiLock::new(&session(&connect).await, &paths, "").unwrap();

    assert!(!multi.acquire(Acquire::no_wait()).await.unwrap());
    assert!(!multi.acquire(Acquire::timeout(Duration::from_millis(300))).await.unwrap());
    assert!(!multi.is_acquired());
    let left = nodes_on(&raw, &paths).await;
    assert!(left[0].is_empty() && left[1].is_empty(), "no node on the free paths: {left:?}");
    assert_eq!(left[2].len(), 1, "only the blocker's: {left:?}");

    blocker.release().await.unwrap();
    assert!(multi.acquire(Acquire::no_wait()).await.unwrap());
    multi.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_wait_removes_the_nodes_of_the_paths_it_had_taken() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-cancel");
    let blocker = Lock::mutex(&session(&connect).await, &paths[0]).unwrap(); // ".../c": the last one
    assert!(blocker.acquire(Acquire::default()).await.unwrap());
    let multi = MultiLock::new(&session(&connect).await, &paths, "").unwrap();
    let waiting = spawn_acquire(&multi, Acquire::default());
    // Holding a and b, queued behind the blocker on c.
    queued(&raw, &paths[0], 2).await;
    assert_eq!(children(&raw, &paths[1]).await.len(), 1);
    assert_eq!(children(&raw, &paths[2]).await.len(), 1);

    multi.cancel();
    assert!(matches!(waiting.await.unwrap(), Err(Error::Cancelled { .. })));
    let left = nodes_on(&raw, &paths).await;
    assert!(left[1].is_empty() && left[2].is_empty(), "no node on a or b: {left:?}");
    assert_eq!(left[0].len(), 1, "only the blocker's node on c: {left:?}");
    blocker.release().await.unwrap();
}

/// Two multi-locks over the same two paths, named in opposite orders, in two
/// sessions, acquiring and releasing in turn as fast as they can: taken in
/// one order, neither ever holds one path while waiting for the other's.
#[tokio::test(flavor = "multi_thread")]
async fn two_multi_locks_named_in_opposite_orders_never_deadlock() {
    let connect = shared_server();
    let base = unique_path("multi-order");
    let (x, y) = (format!("{base}/x"), format!("{base}/y"));
    let forward = MultiLock::new(&session(&connect).await, [&x, &y], "forward").unwrap();
    let backward = MultiLock::new(&session(&connect).await, [&y, &x], "backward").unwrap();
    let rounds = |multi: MultiLock| {
        tokio::spawn(async move {
            for _ in 0..25 {
                assert!(multi.acquire(Acquire::default()).await.unwrap());
                multi.release().await.unwrap();
            }
        })
    };
    let (a, b) = (rounds(forward), rounds(backward));
    tokio::time::timeout(Duration::from_secs(60), async {
        a.await.unwrap();
        b.await.unwrap();
    })
    .await
    .expect("the two multi-locks deadlocked");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_node_on_any_path_loses_the_hold_and_frees_the_other_paths() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-deleted");
    let multi = MultiLock::new(&session(&connect).await, &paths, "").unwrap();
    assert!(multi.acquire(Acquire::default()).await.unwrap());
    let fenced = multi.fenced().unwrap();
    // An operator deletes the node on the last path taken.
    let victim = children(&raw, &paths[0]).await.remove(0);
    raw.delete(&format!("{}/{victim}", paths[0]), None).await.unwrap();

    wait_state(&multi, LockState::Lost(LostReason::NodeDeleted)).await;
    assert!(!multi.is_acquired());
    for path in &paths {
        until_children(&raw, path, "the other paths' nodes to go", |c| c.is_empty()).await;
    }
    let err = fenced.set(&paths[1], Some(b"late"), None).commit().await.unwrap_err();
    assert!(matches!(err, Error::NotHeld { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fenced_write_commits_only_while_every_path_is_held() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-fenced");
    let session = session(&connect).await;
    let state = format!("{}/state", unique_path("multi-fenced-state"));
    session.ensure_path(&state, None).await.unwrap();
    let multi = MultiLock::new(&session, &paths, "").unwrap();
    let hold = multi.hold(Acquire::default()).await.unwrap().unwrap();
    hold.fenced().unwrap().set(&state, Some(b"v1"), None).commit().await.unwrap();
    assert_eq!(raw.get_data(&state).await.unwrap().0, b"v1");
    // The fence checks each path's node: one gone is enough to refuse.
    let victim = children(&raw, &paths[1]).await.remove(0);
    let fenced = hold.fenced().unwrap();
    raw.delete(&format!("{}/{victim}", paths[1]), None).await.unwrap();
    let err = fenced.set(&state, Some(b"v2"), None).commit().await.unwrap_err();
    assert!(matches!(err, Error::NotHeld { .. }), "{err:?}");
    assert_eq!(raw.get_data(&state).await.unwrap().0, b"v1");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_partition_suspends_the_hold_and_an_expiry_loses_every_path() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-faults");
    let session = session(&connect).await;
    let multi = MultiLock::new(&session, &paths, "").unwrap();
    assert!(multi.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;

    inject(move || harness().partition(id).unwrap()).await;
    wait_state(&multi, LockState::Suspended).await;
    inject(move || harness().heal(id).unwrap()).await;
    wait_state(&multi, LockState::Held).await;
    assert_eq!(session.status().generation, 1);

    inject(move || harness().expire(id).unwrap()).await;
    wait_state(&multi, LockState::Lost(LostReason::SessionExpired)).await;
    assert!(nodes_on(&raw, &paths).await.iter().all(Vec::is_empty), "the expired session's nodes are gone");
    let mut status = session.subscribe();
    status.wait_for(|s| s.generation == 2 && s.state == SessionState::Connected).await.unwrap();
    assert!(multi.acquire(Acquire::default()).await.unwrap(), "the handle works on the new session");
    multi.release().await.unwrap();
}

/// Holding the first paths and waiting for the last when the session
/// expires: the wins of the old session hold nothing any more, so the
/// acquire starts over on the new one and ends holding every path on it.
#[tokio::test(flavor = "multi_thread")]
async fn an_expiry_while_waiting_for_the_last_path_starts_over_on_the_new_session() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-expire-waiting");
    let blocker = Lock::mutex(&session(&connect).await, &paths[0]).unwrap();
    assert!(blocker.acquire(Acquire::default()).await.unwrap());
    let session = session(&connect).await;
    let multi = MultiLock::new(&session, &paths, "").unwrap();
    let waiting = spawn_acquire(&multi, Acquire::default());
    queued(&raw, &paths[0], 2).await;
    let id = session.status().session_id;

    inject(move || harness().expire(id).unwrap()).await;
    let mut status = session.subscribe();
    status.wait_for(|s| s.generation == 2).await.unwrap();
    // The wait on c stops with the old session: a and b are taken again
    // on the new one while the blocker still holds c.
    queued(&raw, &paths[1], 1).await;
    queued(&raw, &paths[2], 1).await;
    queued(&raw, &paths[0], 2).await;
    blocker.release().await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    let owner = session.status().session_id;
    for path in &paths {
        let nodes = children(&raw, path).await;
        assert_eq!(nodes.len(), 1, "{path}: {nodes:?}");
        let stat = raw.check_stat(&format!("{path}/{}", nodes[0])).await.unwrap().unwrap();
        assert_eq!(stat.ephemeral_owner, owner, "every node of the new session");
    }
    multi.release().await.unwrap();
}

/// The node won on an early path is deleted, and that path taken by
/// another client, while the multi-lock waits for a later path: when the
/// later path comes free, the early one is not held, so the acquire starts
/// over and waits behind the other holder instead of returning held.
#[tokio::test(flavor = "multi_thread")]
async fn an_early_path_deleted_while_waiting_is_not_held_at_the_end() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let paths = three_paths("multi-early-deleted");
    let (a, b) = (&paths[1], &paths[2]);
    let blocker = Lock::mutex(&session(&connect).await, b).unwrap();
    assert!(blocker.acquire(Acquire::default()).await.unwrap());
    let multi = MultiLock::new(&session(&connect).await, &paths, "multi").unwrap();
    let waiting = spawn_acquire(&multi, Acquire::default());
    queued(&raw, b, 2).await;
    // An operator deletes the multi-lock's node on a; another client takes a.
    let ours = children(&raw, a).await.remove(0);
    raw.delete(&format!("{a}/{ours}"), None).await.unwrap();
    let other = Lock::mutex(&session(&connect).await, a).unwrap();
    assert!(other.acquire(Acquire::no_wait()).await.unwrap());

    blocker.release().await.unwrap();
    let mut waiting = waiting;
    tokio::select! {
        done = &mut waiting => panic!("the acquire ended with {done:?} while another lock holds {a}"),
        _ = queued(&raw, a, 2) => {}
    }
    assert!(!multi.is_acquired());
    other.release().await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    for path in &paths {
        assert_eq!(children(&raw, path).await.len(), 1, "one node on {path}");
    }
    multi.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_before_any_request() {
    let connect = shared_server();
    let session: Session = session(&connect).await;
    let none: [&str; 0] = [];
    assert!(matches!(MultiLock::new(&session, none, ""), Err(Error::InvalidArgument(_))));
    assert!(matches!(MultiLock::new(&session, ["/ok", "relative"], ""), Err(Error::InvalidPath { .. })));
    let twice = MultiLock::new(&session, ["/zoolock-tests/same", "/zoolock-tests/same"], "").unwrap();
    assert_eq!(twice.paths(), ["/zoolock-tests/same"]);
}

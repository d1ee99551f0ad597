//! The opt-in reentrant lock (`LockConfig { reentrant: true, .. }`, Curator's
//! `InterProcessMutex`): its owner's acquires count up on one node, each
//! release counts down, the last one deletes the node; another owner waits
//! and may not release; a loss ends the hold at any depth.

mod common;

use std::time::Duration;

use common::*;
use tokio::time::timeout;
use zoolock::{Acquire, Error, Kind, Lock, LockConfig, LockState, LostReason, Outcome, Owner, Session, SessionState};

fn reentrant(session: &Session, path: &str) -> Lock {
    Lock::new(session, path, Kind::Mutex, LockConfig { reentrant: true, ..LockConfig::default() }).unwrap()
}

/// At once: no round trip, so far below any wait for the server.
async fn at_once<T>(what: &str, call: impl std::future::Future<Output = T>) -> T {
    timeout(Duration::from_secs(2), call).await.unwrap_or_else(|_| panic!("{what} did not return at once"))
}

async fn wait_state(lock: &Lock, want: LockState) {
    let mut states = lock.subscribe();
    timeout(Duration::from_secs(20), states.wait_for(|s| *s == want))
        .await
        .unwrap_or_else(|_| panic!("the hold never became {want:?}"))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_owner_reenters_on_one_node_until_its_last_release_and_others_wait_until_then() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("reentrant");
    let lock = reentrant(&session(&connect).await, &path);
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let (node, token) = (lock.node().unwrap(), lock.fencing_token());
    assert_eq!(at_once("a re-entry", lock.acquire(Acquire::timeout(Duration::from_secs(30)))).await, Ok(true));
    assert_eq!(at_once("a re-entry", lock.acquire(Acquire::no_wait())).await, Ok(true));
    // A clone is the same handle, so the same owner.
    let clone = lock.clone();
    assert_eq!(at_once("a re-entry", clone.acquire(Acquire::default())).await, Ok(true));
    assert_eq!(children(&raw, &path).await, vec![node[path.len() + 1..].to_owned()], "one node");
    assert_eq!((lock.node().unwrap(), lock.fencing_token()), (node.clone(), token));

    let other = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert_eq!(other.acquire_outcome(Acquire::no_wait()).await, Ok(Outcome::Taken));
    let waiting = spawn_acquire(&other, Acquire::timeout(Duration::from_secs(30)));
    queued(&raw, &path, 2).await;
    for depth in (1..4).rev() {
        assert_eq!(lock.release().await, Ok(true));
        assert!(lock.is_acquired(), "still held at depth {depth}");
        assert_eq!(lock.state(), LockState::Held);
        assert!(raw.check_stat(&node).await.unwrap().is_some(), "the node stays at depth {depth}");
        assert!(!waiting.is_finished(), "the other handle still waits at depth {depth}");
    }
    assert_eq!(lock.release().await, Ok(true), "the last release");
    assert_eq!(timeout(Duration::from_secs(20), waiting).await.expect("the waiter holds").unwrap(), Ok(true));
    assert!(raw.check_stat(&node).await.unwrap().is_none(), "the last release deleted the node");
    assert_eq!(lock.release().await, Ok(false), "nothing left");
    other.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn another_owner_waits_for_the_owners_hold_and_may_not_release_it() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("reentrant-owners");
    let lock = reentrant(&session(&connect).await, &path);
    let (a, b) = (Owner(1), Owner(2));
    assert!(lock.acquire(Acquire::default().owner(a)).await.unwrap());
    assert!(lock.acquire(Acquire::default().owner(a)).await.unwrap());
    let short = Acquire::timeout(Duration::from_millis(300)).owner(b);
    assert_eq!(lock.acquire_outcome(short).await, Ok(Outcome::HandleBusy));
    assert_eq!(lock.acquire_outcome(Acquire::no_wait().owner(b)).await, Ok(Outcome::HandleBusy));
    assert!(matches!(lock.release_by(b).await, Err(Error::NotOwner { .. })));
    assert!(matches!(lock.release().await, Err(Error::NotOwner { .. })), "the handle is an owner too");
    assert_eq!(children(&raw, &path).await.len(), 1, "the refused release left the node");

    // b waits until a's last release, then holds on a node of its own.
    let waiting = spawn_acquire(&lock, Acquire::timeout(Duration::from_secs(30)).owner(b));
    let node = lock.node().unwrap();
    assert_eq!(lock.release_by(a).await, Ok(true));
    assert!(lock.is_acquired() && !waiting.is_finished(), "a still holds at depth 1");
    assert_eq!(lock.release_by(a).await, Ok(true));
    assert_eq!(timeout(Duration::from_secs(20), waiting).await.expect("b holds").unwrap(), Ok(true));
    assert_ne!(lock.node().unwrap(), node, "b's own node");
    assert!(matches!(lock.release_by(a).await, Err(Error::NotOwner { .. })));
    assert_eq!(lock.release_by(b).await, Ok(true));
    assert_eq!(lock.release_by(a).await, Ok(false), "nothing held: nothing to refuse");
    assert!(children(&raw, &path).await.is_empty());
}

/// Enters three deep, loses the hold by `lose`, and checks that the whole
/// hold ended: no count left over, and the next acquire takes a new node.
async fn a_loss_at_depth_ends_the_hold(name: &str, lease: Option<Duration>, reason: LostReason) {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path(name);
    let session = session(&connect).await;
    let lock = reentrant(&session, &path);
    let first = Acquire { lease, ..Acquire::default() };
    assert!(lock.acquire(first).await.unwrap());
    let node = lock.node().unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    match reason {
        LostReason::NodeDeleted => raw.delete(&node, None).await.unwrap(),
        LostReason::SessionExpired => {
            let id = session.status().session_id;
            tokio::task::spawn_blocking(move || harness().expire(id).unwrap()).await.unwrap();
        }
        LostReason::SessionClosed => session.close().await,
        LostReason::LeaseExpired => {}
    }
    wait_state(&lock, LockState::Lost(reason)).await;
    assert!(!lock.is_acquired());
    assert_eq!(lock.release().await, Ok(false), "no count survives the loss");
    if reason == LostReason::SessionClosed {
        return;
    }
    if reason == LostReason::SessionExpired {
        let mut status = session.subscribe();
        let connected = status.wait_for(|s| s.state == SessionState::Connected);
        timeout(Duration::from_secs(20), connected).await.unwrap().unwrap();
    }
    assert!(lock.acquire(Acquire::default()).await.unwrap(), "a fresh hold");
    assert_ne!(lock.node().unwrap(), node);
    assert_eq!(lock.release().await, Ok(true));
    assert_eq!(lock.release().await, Ok(false), "a fresh hold of depth 1");
    assert!(children(&raw, &path).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_the_node_ends_a_reentered_hold() {
    a_loss_at_depth_ends_the_hold("reentrant-deleted", None, LostReason::NodeDeleted).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lease_ends_a_reentered_hold() {
    a_loss_at_depth_ends_the_hold("reentrant-lease", Some(Duration::from_millis(500)), LostReason::LeaseExpired).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expiry_ends_a_reentered_hold() {
    a_loss_at_depth_ends_the_hold("reentrant-expired", None, LostReason::SessionExpired).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_close_ends_a_reentered_hold() {
    a_loss_at_depth_ends_the_hold("reentrant-closed", None, LostReason::SessionClosed).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_plain_lock_stays_kazoos() {
    let connect = shared_server();
    let path = unique_path("not-reentrant");
    let lock = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(lock.acquire(Acquire::default().owner(Owner(1))).await.unwrap());
    let again = lock.acquire_outcome(Acquire::timeout(Duration::from_millis(300)).owner(Owner(1))).await;
    assert_eq!(again, Ok(Outcome::HandleBusy), "no re-entry without reentrant: true");
    assert_eq!(lock.release_by(Owner(2)).await, Ok(true), "any owner releases, as in kazoo");
}

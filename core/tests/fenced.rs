//! Fenced writes: a transaction that commits only while a handle holds,
//! checked by the server on the holder's own node. A deposed holder (its
//! node deleted by an operator, its session expired) writes nothing.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{
    Acquire, Create, Error, Kind, Lock, LockConfig, LockState, LostReason, OpResult, Retry, Scheme, Semaphore,
};

async fn until_state(lock: &Lock, want: impl Fn(&LockState) -> bool) {
    let mut states = lock.subscribe();
    tokio::time::timeout(Duration::from_secs(20), states.wait_for(want)).await.expect("lock state").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_holder_writes_and_a_handle_that_holds_nothing_is_refused() {
    let session = session(&shared_server()).await;
    let base = unique_path("fenced");
    let state = format!("{base}/state");
    session.create(&state, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let lock = Lock::mutex(&session, &format!("{base}/lock")).unwrap();
    let lock_path = format!("{base}/lock");
    assert_eq!(lock.fenced().unwrap_err(), Error::NotHeld { path: lock_path.clone() });

    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let results = lock.fenced().unwrap().set(&state, Some(b"1"), Some(0)).commit().await.unwrap();
    assert!(matches!(results.as_slice(), [OpResult::Set(stat)] if stat.version == 1), "{results:?}");
    assert_eq!(session.get(&state).await.unwrap().0, Some(b"1".to_vec()));
    // The fence does not hide the writes' own errors.
    let stale = lock.fenced().unwrap().set(&state, Some(b"2"), Some(0)).commit().await;
    assert_eq!(stale.unwrap_err(), Error::BadVersion { action: "set", path: state.clone() });

    // Built while holding, committed after the release: refused by the server's check.
    let late = lock.fenced().unwrap().set(&state, Some(b"late"), None);
    lock.release().await.unwrap();
    assert_eq!(late.commit().await.unwrap_err(), Error::NotHeld { path: lock_path.clone() });
    assert_eq!(lock.fenced().unwrap_err(), Error::NotHeld { path: lock_path });
    assert_eq!(session.get(&state).await.unwrap().0, Some(b"1".to_vec()));
    session.delete(&base, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_holder_whose_node_an_operator_deleted_cannot_write_and_the_next_holder_can() {
    let connect = shared_server();
    let (a, b, operator) = (session(&connect).await, session(&connect).await, session(&connect).await);
    let base = unique_path("fenced-deleted");
    let state = format!("{base}/state");
    a.create(&state, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let lock_path = format!("{base}/lock");
    let stale = Lock::mutex(&a, &lock_path).unwrap();
    assert!(stale.acquire(Acquire::default()).await.unwrap());
    let next = Lock::mutex(&b, &lock_path).unwrap();
    let waiting = spawn_acquire(&next, Acquire::default());

    // The stale holder prepares its write, then loses its node before it commits.
    let write = stale.fenced().unwrap().set(&state, Some(b"stale"), None).create(
        &format!("{base}/side"),
        Some(b""),
        Create::default(),
    );
    operator.delete(&stale.node().unwrap(), None, false).await.unwrap();
    assert!(waiting.await.unwrap().unwrap(), "the next contender holds");
    assert_eq!(write.commit().await.unwrap_err(), Error::NotHeld { path: lock_path.clone() });
    assert_eq!(a.get(&state).await.unwrap().0, Some(b"0".to_vec()), "nothing of the stale write was made");
    assert_eq!(a.exists(&format!("{base}/side")).await.unwrap(), None);
    until_state(&stale, |s| *s == LockState::Lost(LostReason::NodeDeleted)).await;
    assert!(matches!(stale.fenced(), Err(Error::NotHeld { .. })));

    next.fenced().unwrap().set(&state, Some(b"next"), None).commit().await.unwrap();
    assert_eq!(a.get(&state).await.unwrap().0, Some(b"next".to_vec()));
    next.release().await.unwrap();
    a.delete(&base, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_holder_whose_session_expired_cannot_write() {
    let connect = shared_server();
    let (a, b) = (session(&connect).await, session(&connect).await);
    let base = unique_path("fenced-expired");
    let state = format!("{base}/state");
    b.create(&state, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let lock_path = format!("{base}/lock");
    let stale = Lock::mutex(&a, &lock_path).unwrap();
    assert!(stale.acquire(Acquire::default()).await.unwrap());
    let write = stale.fenced().unwrap().set(&state, Some(b"stale"), None);
    let next = Lock::mutex(&b, &lock_path).unwrap();
    let waiting = spawn_acquire(&next, Acquire::default());

    let id = a.status().session_id;
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    // Sent at once, it meets the dead session (a connection loss or
    // SessionExpired); sent again by retry on the new one, the fence fails:
    // its node died with the old session.
    let retried = a.retry(Retry::default(), || write.clone().commit()).await;
    assert_eq!(retried.unwrap_err(), Error::NotHeld { path: lock_path.clone() });
    assert!(waiting.await.unwrap().unwrap());
    assert_eq!(b.get(&state).await.unwrap().0, Some(b"0".to_vec()));
    next.fenced().unwrap().set(&state, Some(b"next"), None).commit().await.unwrap();
    assert_eq!(b.get(&state).await.unwrap().0, Some(b"next".to_vec()));
    next.release().await.unwrap();
    b.delete(&base, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_semaphore_lease_fences_writes_too() {
    let session = session(&shared_server()).await;
    let base = unique_path("fenced-semaphore");
    let state = format!("{base}/state");
    session.create(&state, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let semaphore = Semaphore::new(&session, &format!("{base}/pool"), "worker", 2).unwrap();
    assert!(matches!(semaphore.fenced(), Err(Error::NotHeld { .. })));
    assert!(semaphore.acquire(Acquire::default()).await.unwrap());
    let write = semaphore.fenced().unwrap().set(&state, Some(b"1"), None);
    write.clone().commit().await.unwrap();
    semaphore.release().await.unwrap();
    assert!(matches!(write.commit().await, Err(Error::NotHeld { .. })));
    assert_eq!(session.get(&state).await.unwrap().0, Some(b"1".to_vec()));
    session.delete(&base, None, true).await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_persistent_hold_outlives_an_expiry_and_so_does_its_fence() {
    let session = session(&shared_server()).await;
    let base = unique_path("fenced-persistent");
    let state = format!("{base}/state");
    session.create(&state, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let lock = Lock::mutex(&session, &format!("{base}/lock")).unwrap();
    assert!(lock.acquire(Acquire::default().persistent()).await.unwrap());
    let write = lock.fenced().unwrap().set(&state, Some(b"1"), None);
    let id = session.status().session_id;
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    session.retry(Retry::default(), || write.clone().commit()).await.unwrap();
    assert_eq!(session.get(&state).await.unwrap().0, Some(b"1".to_vec()));
    assert_eq!(lock.state(), LockState::Held);
    lock.release().await.unwrap();
    session.delete(&base, None, true).await.unwrap();
}

/// DistributedLock's names are everyone's: once the hold's session expired
/// and the path was made again, a `lock-0000000000` there is another
/// client's. A fenced write built during the hold and sent again on the
/// new session (`Session::retry`) must not pass on it.
#[tokio::test(flavor = "multi_thread")]
async fn a_fence_of_a_shared_name_fails_on_a_later_session() {
    let connect = shared_server();
    let (session, other) = (session(&connect).await, common::session(&connect).await);
    let base = unique_path("fenced-shared-name");
    let (state, lock_path) = (format!("{base}/state"), format!("{base}/lock"));
    session.create(&state, Some(b"0"), &Create::default().makepath()).await.unwrap();
    let config = LockConfig { scheme: Scheme::DistributedLock, ..LockConfig::default() };
    let lock = Lock::new(&session, &lock_path, Kind::Mutex, config).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let node = lock.node().unwrap();
    let write = lock.fenced().unwrap().set(&state, Some(b"stale"), None);
    expire(&session).await;
    until_state(&lock, |s| matches!(s, LockState::Lost(_))).await;
    // A DistributedLock service finds the path empty, deletes it, and another takes its first name.
    other.delete(&lock_path, None, false).await.unwrap();
    other.create(&node, Some(b""), &Create::default().ephemeral().makepath()).await.unwrap();
    let err = session.retry(Retry::default(), || write.clone().commit()).await.unwrap_err();
    assert_eq!(err, Error::NotHeld { path: lock_path });
    assert_eq!(other.get(&state).await.unwrap().0, Some(b"0".to_vec()), "the stale write was made");
    other.delete(&base, None, true).await.unwrap();
}

/// The fence's assumption — no one but the holder creates a node of its
/// name — fails when an operator re-creates the node by hand. The hold sees
/// the deletion and ends, so a fence asked for afterwards is refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_node_re_created_by_hand_does_not_give_the_deposed_holder_a_fence() {
    let connect = shared_server();
    let (session, operator) = (session(&connect).await, common::session(&connect).await);
    let base = unique_path("fenced-recreated");
    let lock = Lock::mutex(&session, &format!("{base}/lock")).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let node = lock.node().unwrap();
    operator.delete(&node, None, false).await.unwrap();
    operator.create(&node, Some(b""), &Create::default()).await.unwrap();
    until_state(&lock, |s| *s == LockState::Lost(LostReason::NodeDeleted)).await;
    assert!(matches!(lock.fenced(), Err(Error::NotHeld { .. })));
    operator.delete(&base, None, true).await.unwrap();
}

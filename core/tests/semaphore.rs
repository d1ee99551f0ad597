//! The semaphore in kazoo's layout: a pool node holding max_leases,
//! ephemeral lease nodes, and an admission lock beside the pool.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Acquire, Error, LockState, LostReason, Semaphore};

#[tokio::test(flavor = "multi_thread")]
async fn leases_are_counted_and_handed_on_when_freed() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("semaphore");
    let (s1, s2, s3) = (session(&connect).await, session(&connect).await, session(&connect).await);
    let first = Semaphore::new(&s1, &path, "first", 2).unwrap();
    let second = Semaphore::new(&s2, &path, "second", 2).unwrap();
    let third = Semaphore::new(&s3, &path, "third", 2).unwrap();
    assert!(first.acquire(Acquire::default()).await.unwrap());
    assert!(second.acquire(Acquire::default()).await.unwrap());
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"2");
    let mut holders = first.queue().await.unwrap();
    holders.sort();
    assert_eq!(holders, ["first", "second"]);

    assert!(!third.acquire(Acquire::no_wait()).await.unwrap(), "no lease is free");
    assert!(!third.acquire(Acquire::timeout(Duration::from_millis(200))).await.unwrap());
    assert_eq!(children(&raw, &path).await.len(), 2, "failed tries leave no lease node");
    until_children(&raw, &format!("{path}-__lock__"), "the admission node to go", |c| c.is_empty()).await;

    let waiting = spawn_acquire(&third, Acquire::default());
    until_children(&raw, &format!("{path}-__lock__"), "the waiter to be admitted", |c| c.len() == 1).await;
    assert!(first.release().await.unwrap());
    assert!(waiting.await.unwrap().unwrap());
    let mut holders = third.queue().await.unwrap();
    holders.sort();
    assert_eq!(holders, ["second", "third"]);
    assert!(!first.release().await.unwrap());
    second.release().await.unwrap();
    third.release().await.unwrap();
    assert!(children(&raw, &path).await.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pool_of_another_size_is_refused() {
    let connect = shared_server();
    let path = unique_path("inconsistent");
    let session = session(&connect).await;
    let three = Semaphore::new(&session, &path, "a", 3).unwrap();
    assert!(three.acquire(Acquire::default()).await.unwrap());
    let two = Semaphore::new(&session, &path, "b", 2).unwrap();
    let err = two.acquire(Acquire::default()).await.unwrap_err();
    assert!(matches!(err, Error::InconsistentLeases { requested: 2, .. }), "{err:?}");
    assert!(matches!(Semaphore::new(&session, &path, "c", 0), Err(Error::InvalidArgument(_))));
    three.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_expired_lease_holder_is_told_and_its_lease_freed() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("semaphore-expiry");
    let session = session(&connect).await;
    let semaphore = Semaphore::new(&session, &path, "holder", 1).unwrap();
    assert!(semaphore.acquire(Acquire::default()).await.unwrap());
    let mut state = semaphore.subscribe();
    let id = session.status().session_id;
    tokio::task::spawn_blocking(move || zk_harness::shared().expire(id).unwrap()).await.unwrap();
    state.wait_for(|s| *s == LockState::Lost(LostReason::SessionExpired)).await.unwrap();
    assert!(!semaphore.is_acquired());
    until_children(&raw, &path, "the expired lease to go", |c| c.is_empty()).await;
    assert!(semaphore.acquire(Acquire::default()).await.unwrap(), "a new lease on the new session");
    semaphore.release().await.unwrap();
}

/// The lease create's reply is lost, and so is the reply to the check that
/// follows: the listing then shows our own lease, which must count as ours
/// (kazoo checks the same), not as another holder to wait for forever.
#[tokio::test(flavor = "multi_thread")]
async fn a_lease_whose_create_reply_was_lost_is_found_as_ours() {
    use zk_harness::{FaultState, Op, Select};
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("semaphore-lost-reply");
    let session = session(&connect).await;
    let semaphore = Semaphore::new(&session, &path, "holder", 1).unwrap();
    let id = session.status().session_id;
    let leases = Select::session(id).path(format!("{path}/"));
    let (create, check) = tokio::task::spawn_blocking(move || {
        let harness = zk_harness::shared();
        let create = harness.drop_reply(leases.clone().op(Op::Create).op(Op::Create2)).unwrap();
        let check = harness.drop_reply(leases.op(Op::Exists)).unwrap();
        (create, check)
    })
    .await
    .unwrap();

    let acquired = tokio::time::timeout(Duration::from_secs(15), semaphore.acquire(Acquire::default())).await;
    let report = tokio::task::spawn_blocking(move || {
        let harness = zk_harness::shared();
        let fired = |id| harness.wait_fault(id, FaultState::Fired, Duration::ZERO).is_ok();
        let fired = (fired(create), fired(check));
        let _ = (harness.disarm(create), harness.disarm(check));
        fired
    })
    .await
    .unwrap();
    assert_eq!(report, (true, true), "both replies were dropped");
    assert!(acquired.expect("the acquire hung on its own lease").unwrap());
    assert_eq!(children(&raw, &path).await.len(), 1);
    assert_eq!(semaphore.queue().await.unwrap(), ["holder"]);
    assert!(semaphore.release().await.unwrap());
    until_children(&raw, &path, "the lease to go", |c| c.is_empty()).await;
}

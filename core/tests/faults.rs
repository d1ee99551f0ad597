//! The lock under faults, each injected through the harness: a partitioned
//! client, an expired session, a restarted server, a killed leader.

mod common;

use std::time::Duration;

use common::*;
use tokio::sync::mpsc;
use zk_harness::{Ensemble, Options};
use zoolock::{Acquire, Lock, LockState, LostReason, Session, SessionOptions, SessionState};

async fn wait_state(lock: &Lock, want: LockState) {
    let mut states = lock.subscribe();
    tokio::time::timeout(Duration::from_secs(20), states.wait_for(|s| *s == want))
        .await
        .unwrap_or_else(|_| panic!("lock never became {want:?}"))
        .unwrap();
}

async fn wait_session(session: &Session, want: impl Fn(&zoolock::Status) -> bool) {
    let mut status = session.subscribe();
    tokio::time::timeout(Duration::from_secs(20), status.wait_for(want)).await.expect("session state").unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_short_partition_suspends_the_lock_then_restores_it() {
    let connect = shared_server();
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &unique_path("suspend")).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;

    inject(move || harness().partition(id).unwrap()).await;
    wait_state(&lock, LockState::Suspended).await;
    assert_eq!(session.state(), SessionState::Suspended);
    inject(move || harness().heal(id).unwrap()).await;
    wait_state(&lock, LockState::Held).await;
    assert!(lock.is_acquired());
    assert_eq!(session.status().generation, 1, "the same session survived");
    assert!(lock.release().await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn expiry_while_holding_loses_the_lock_and_a_new_session_takes_over() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("expire-holder");
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;

    inject(move || harness().expire(id).unwrap()).await;
    wait_state(&lock, LockState::Lost(LostReason::SessionExpired)).await;
    assert!(!lock.is_acquired());
    assert_eq!(lock.fencing_token(), None);
    wait_session(&session, |s| s.generation == 2 && s.state == SessionState::Connected).await;
    assert_ne!(session.status().session_id, id);
    assert!(children(&raw, &path).await.is_empty(), "the expired session's node is gone");

    assert!(lock.acquire(Acquire::default()).await.unwrap(), "the handle works on the new session");
    lock.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn expiry_while_waiting_requeues_and_still_gets_the_lock() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("expire-waiter");
    let holder = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter_session = session(&connect).await;
    let waiter = Lock::mutex(&waiter_session, &path).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    let before = queued(&raw, &path, 2).await;
    let id = waiter_session.status().session_id;

    inject(move || harness().expire(id).unwrap()).await;
    wait_session(&waiter_session, |s| s.generation == 2).await;
    // The waiter queues again: a new node replaces the expired one.
    until_children(&raw, &path, "the waiter to queue again", |c| c.len() == 2 && c != before.as_slice()).await;
    holder.release().await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    assert_eq!(waiter.state(), LockState::Held);
    waiter.release().await.unwrap();
}

/// Everyone queued gets the lock exactly once while `fault` strikes mid-queue.
async fn every_waiter_served_once(ensemble: &'static Ensemble, fault: impl FnOnce() + Send + 'static) {
    let connect = ensemble.connect_string();
    // Long enough for a server that is back within seconds: zookeeper-client
    // gives a session up at 7/5 of its timeout, and its reconnect backoff
    // (attempts ~0.1, 0.3, 0.7, 1.5, 3.1, 6.3 s after the drop, then 12.7 s)
    // made an 8 s session miss a restart that took 7 s; restarts took up to
    // 7.5 s on a loaded machine.
    let options = || SessionOptions::new(connect.clone()).session_timeout(Duration::from_secs(20));
    let raw = raw(&connect).await;
    let path = unique_path("served-once");
    let holder = Lock::mutex(&Session::connect(options()).await.unwrap(), &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let (served_tx, mut served_rx) = mpsc::unbounded_channel();
    let mut sessions = Vec::new();
    for i in 0..3 {
        let session = Session::connect(options()).await.unwrap();
        let lock = Lock::mutex(&session, &path).unwrap();
        let served_tx = served_tx.clone();
        tokio::spawn(async move {
            assert!(lock.acquire(Acquire::default()).await.unwrap());
            served_tx.send((i, lock.fencing_token().unwrap())).unwrap();
            lock.release().await.unwrap();
        });
        sessions.push(session);
        queued(&raw, &path, i + 2).await;
    }
    drop(raw);
    inject(fault).await;
    assert!(holder.release().await.unwrap());
    let mut served = Vec::new();
    for _ in 0..3 {
        let next = tokio::time::timeout(Duration::from_secs(60), served_rx.recv()).await.expect("a waiter starved");
        served.push(next.unwrap());
    }
    let order: Vec<_> = served.iter().map(|(i, _)| *i).collect();
    assert_eq!(order, vec![0, 1, 2], "served once each, in queue order");
    assert!(served.windows(2).all(|w| w[0].1 < w[1].1), "fencing tokens increase: {served:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_restart_with_waiters_queued_serves_each_once() {
    let ensemble: &'static Ensemble = Box::leak(Box::new(Ensemble::start(1, Options::default()).unwrap()));
    every_waiter_served_once(ensemble, move || ensemble.restart(0).unwrap()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn killing_the_leader_of_three_with_waiters_queued_serves_each_once() {
    let ensemble: &'static Ensemble = Box::leak(Box::new(Ensemble::start(3, Options::default()).unwrap()));
    every_waiter_served_once(ensemble, move || {
        let leader = ensemble.leader().expect("a leader");
        ensemble.kill(leader).unwrap();
    })
    .await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_release_during_a_partition_is_retried_until_the_node_is_gone() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("guaranteed-release");
    // The partition lasts the client's read timeout (2/5 of the session
    // timeout) plus the release's bounded wait (2 s): under the 4 s of the
    // other tests that ends a few hundred ms before the server expires the
    // session, and the expiry would take the node instead of the delete.
    let options = SessionOptions::new(&connect).session_timeout(Duration::from_secs(10));
    let session = Session::connect(options).await.unwrap();
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;

    inject(move || harness().partition(id).unwrap()).await;
    wait_session(&session, |s| s.state == SessionState::Suspended).await;
    assert!(lock.release().await.unwrap(), "release returns while the delete waits for the server");
    assert!(!lock.is_acquired());
    assert_eq!(children(&raw, &path).await.len(), 1, "the node outlives the cut connection");
    inject(move || harness().heal(id).unwrap()).await;
    until_children(&raw, &path, "the retried delete", |c| c.is_empty()).await;
    // An expiry would have taken the node too: the client is back on the same session.
    wait_session(&session, |s| s.state == SessionState::Connected).await;
    assert_eq!(session.status().generation, 1, "the node went by the delete, not with an expired session");
}

/// A release polls its delete in the caller's task: dropped after its first
/// poll, with the delete on a connection that is then reset (so it fails and
/// must be sent again), the delete goes on in the background and the node
/// goes once the connection is back.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_dropped_after_its_first_poll_during_a_partition_still_deletes_the_node() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("release-dropped");
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;

    inject(move || harness().partition(id).unwrap()).await;
    // Still connected as far as the client knows: the delete goes on the wire, unanswered.
    let mut release = lock.release();
    let waker = std::task::Waker::noop();
    assert!(release.as_mut().poll(&mut std::task::Context::from_waker(waker)).is_pending());
    drop(release);
    assert!(!lock.is_acquired());
    // The reset discards the held delete and fails it with the connection.
    inject(move || harness().drop_connections(id).unwrap()).await;
    wait_session(&session, |s| s.state == SessionState::Suspended).await;
    inject(move || harness().heal(id).unwrap()).await;
    until_children(&raw, &path, "the dropped release's delete", |c| c.is_empty()).await;
    assert_eq!(session.status().generation, 1, "the same session: its node went by the delete");
}

/// A partition that starts under a release: the release still returns,
/// within the client's read timeout plus its bounded wait, and the delete
/// goes on until the node is gone.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_cut_off_midway_returns_within_its_bound() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("release-cut");
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;

    inject(move || harness().partition(id).unwrap()).await;
    // The session still reads as connected: the bound starts once it does not.
    let bound = SESSION_TIMEOUT + Duration::from_secs(2 + 4);
    let released = tokio::time::timeout(bound, lock.release()).await;
    assert!(released.expect("the release returns within its bound").unwrap());
    inject(move || harness().heal(id).unwrap()).await;
    until_children(&raw, &path, "the retried delete", |c| c.is_empty()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn listeners_hear_each_state_in_order_on_their_own_thread() {
    let connect = shared_server();
    let session = session(&connect).await;
    let lock = Lock::mutex(&session, &unique_path("listeners")).unwrap();
    let (session_tx, session_rx) = std::sync::mpsc::channel();
    let (lock_tx, lock_rx) = std::sync::mpsc::channel();
    session
        .add_listener(move |state| session_tx.send((state, std::thread::current().name().map(String::from))).unwrap());
    lock.add_listener(Box::new(move |state| lock_tx.send(state).unwrap()));
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = session.status().session_id;
    inject(move || harness().expire(id).unwrap()).await;
    wait_session(&session, |s| s.generation == 2 && s.state == SessionState::Connected).await;

    let heard = inject(move || {
        let mut heard = Vec::new();
        while heard.last().map(|(s, _)| *s) != Some(SessionState::Connected) {
            heard.push(session_rx.recv_timeout(Duration::from_secs(10)).expect("a session event"));
        }
        heard
    })
    .await;
    let states: Vec<_> = heard.iter().map(|(s, _)| *s).collect();
    assert_eq!(states.last(), Some(&SessionState::Connected));
    assert!(states.contains(&SessionState::Lost), "{states:?}");
    assert!(heard.iter().all(|(_, thread)| thread.as_deref() == Some("zoolock-events")));
    let lost = LockState::Lost(LostReason::SessionExpired);
    let lock_states: Vec<_> = inject(move || {
        let mut states = Vec::new();
        while states.last() != Some(&lost) {
            states.push(lock_rx.recv_timeout(Duration::from_secs(10)).expect("a lock event"));
        }
        states
    })
    .await;
    // The connection drops before the server's verdict arrives: Suspended may come between.
    assert_eq!(lock_states.first(), Some(&LockState::Held), "{lock_states:?}");
    assert!(lock_states[1..lock_states.len() - 1].iter().all(|s| *s == LockState::Suspended), "{lock_states:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn connection_resets_mid_request_keep_exclusion_and_leave_no_orphan() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("resets");
    let inside = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let mut workers = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let session = session(&connect).await;
        ids.push(session.status().session_id);
        let (lock, inside) = (Lock::mutex(&session, &path).unwrap(), inside.clone());
        workers.push(tokio::spawn(async move {
            let mut held = 0;
            for _ in 0..40 {
                // Resets may fail an attempt; what matters is what holds when it succeeds.
                if let Ok(true) = lock.acquire(Acquire::timeout(Duration::from_secs(5))).await {
                    assert_eq!(inside.fetch_add(1, std::sync::atomic::Ordering::SeqCst), 0, "two holders");
                    tokio::task::yield_now().await;
                    inside.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                    held += 1;
                    lock.release().await.unwrap();
                }
            }
            (held, session)
        }));
    }
    // Reset every client's connection again and again while they work, so
    // that creates, lists, watches and deletes get cut mid-flight.
    let resets = inject(move || {
        let mut resets = 0;
        for round in 0..30 {
            resets += harness().drop_connections(ids[round % ids.len()]).unwrap_or(0);
            std::thread::sleep(Duration::from_millis(15)); // the fault's pacing, not a wait for an event
        }
        resets
    })
    .await;
    let mut total = 0;
    let mut sessions = Vec::new();
    for worker in workers {
        let (held, session) = worker.await.unwrap();
        total += held;
        sessions.push(session);
    }
    assert!(resets > 0 && total > 0, "resets {resets}, acquisitions {total}");
    // With every session still open, only a leaked node could remain.
    let left = within_children(&raw, &path, Duration::from_secs(10), |c| c.is_empty()).await;
    if left.is_none() {
        for child in children(&raw, &path).await {
            let stat = raw.check_stat(&format!("{path}/{child}")).await.unwrap();
            eprintln!("left: {child} owner {:x?}", stat.map(|s| s.ephemeral_owner));
        }
        let ids: Vec<_> =
            sessions.iter().map(|s| format!("{:x} gen {}", s.status().session_id, s.status().generation)).collect();
        panic!("orphans left; sessions {ids:?}");
    }
    assert!(sessions.iter().all(|s| s.status().generation == 1), "resets alone never expire a session");
}

//! The recipe's shortcuts where the ZooKeeper behaviour they assume fails:
//! the lock path deleted and re-created (its sequence counter restarts), an
//! operator deleting nodes under waiters. Each test stands for one shortcut
//! or one reported two-holder case; see `core/src/lock.rs`.

mod common;

use std::time::Duration;

use common::*;
use zk_harness::Ensemble;
use zookeeper_client as zk;
use zoolock::{Acquire, Lock};

fn harness() -> &'static Ensemble {
    zk_harness::shared()
}

/// Runs a blocking harness call without stalling the clients under test.
async fn inject<T: Send + 'static>(fault: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(fault).await.unwrap()
}

/// Whether the node a handle says it holds exists on the server.
async fn node_exists(raw: &zk::Client, lock: &Lock) -> bool {
    let node = lock.node().expect("a holder has a node");
    raw.check_stat(&node).await.unwrap().is_some()
}

/// Issue 10, item 1: a handle that held three times without waiting must
/// not trust the next sequence number once the path was re-created.
#[tokio::test(flavor = "multi_thread")]
async fn a_recreated_lock_path_restarts_the_sequence_and_nobody_holds_beside_its_holder() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("recreated-counter");
    let first = Lock::mutex(&session(&connect).await, &path).unwrap();
    for _ in 0..3 {
        assert!(first.acquire(Acquire::no_wait()).await.unwrap());
        assert!(first.release().await.unwrap());
    }
    // A cleanup job (or ZooKeeper reaping an empty container) deletes the
    // path; someone re-creates it: its sequence counter starts again at 0.
    raw.delete(&path, None).await.unwrap();
    raw.create(&path, b"", &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let other = Lock::mutex(&session(&connect).await, &path).unwrap();
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
            let waiting = {
                let waiter = waiter.clone();
                tokio::spawn(async move { waiter.acquire(Acquire::default()).await })
            };
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

//! Inspection of a path without a handle: holders then waiters in queue
//! order, with session, age, token and kind, for zoolock, kazoo and Curator
//! nodes alike; and the live view on watches.

mod common;

use std::time::{Duration, SystemTime};

use common::*;
use tokio::time::timeout;
use zookeeper_client as zk;
use zoolock::{inspect, Acquire, Inspector, Kind, Lock, LockConfig, ParticipantKind, Scheme, Semaphore};

fn config(identifier: &str, scheme: Scheme) -> LockConfig {
    LockConfig { identifier: identifier.as_bytes().to_vec(), scheme, ..LockConfig::default() }
}

/// A node created raw, as kazoo or Curator name theirs (FACTS.md).
async fn raw_node(raw: &zk::Client, parent: &str, prefix: &str, data: &str) -> (String, zk::Stat) {
    let mode = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    let (stat, sequence) = raw.create(&format!("{parent}/{prefix}"), data.as_bytes(), &mode).await.unwrap();
    (format!("{parent}/{prefix}{sequence}"), stat)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_lock_path_shows_holder_then_waiters_of_every_peer_in_queue_order() {
    let connect = shared_server();
    let (s1, raw) = (session(&connect).await, raw(&connect).await);
    let path = unique_path("inspect-lock");
    assert!(inspect(&s1, &path).await.unwrap().is_empty(), "nothing at a path that does not exist");

    let holder = Lock::new(&s1, &path, Kind::Mutex, config("holder", Scheme::Kazoo)).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let kazoo = raw_node(&raw, &path, "0123456789abcdef0123456789abcdef__lock__", "kazoo-worker").await;
    let curator = raw_node(&raw, &path, "_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-", "10.0.0.7").await;
    // Raw too: a zoolock handle would not queue on a path of two families (MixedSchemes).
    let reader = raw_node(&raw, &path, "_c_9b2f1c1e-6f0e-4c43-9d1a-7e6a4b3c2d1f-__READ__", "reader").await;

    let seen = inspect(&s1, &path).await.unwrap();
    let nodes: Vec<_> = seen.iter().map(|p| p.node.as_str()).collect();
    let holder_node = holder.node().unwrap();
    assert_eq!(nodes[..3], [holder_node.as_str(), kazoo.0.as_str(), curator.0.as_str()]);
    assert_eq!(nodes[3], reader.0);
    let holds: Vec<_> = seen.iter().map(|p| p.holds).collect();
    assert_eq!(holds, [true, false, false, false]);
    let kinds: Vec<_> = seen.iter().map(|p| p.kind).collect();
    use ParticipantKind::{Lock as L, Read};
    assert_eq!(kinds, [L, L, L, Read]);
    let schemes: Vec<_> = seen.iter().map(|p| p.scheme).collect();
    assert_eq!(schemes, [Some(Scheme::Kazoo), Some(Scheme::Kazoo), Some(Scheme::Curator), Some(Scheme::Curator)]);
    let identifiers: Vec<_> = seen.iter().map(|p| p.identifier.as_str()).collect();
    assert_eq!(identifiers, ["holder", "kazoo-worker", "10.0.0.7", "reader"]);
    let raw_id = raw.session_id().0;
    let sessions: Vec<_> = seen.iter().map(|p| p.session_id).collect();
    assert_eq!(sessions, [s1.status().session_id, raw_id, raw_id, raw_id]);
    assert_eq!(seen[0].fencing_token, holder.fencing_token().unwrap());
    assert_eq!((seen[1].fencing_token, seen[2].fencing_token), (kazoo.1.czxid, curator.1.czxid));
    let age = SystemTime::now().duration_since(seen[0].created).unwrap_or_default();
    assert!(age < Duration::from_secs(60), "created {:?} ago", age);

    // The holder goes, then the two raw writers: the reader holds.
    holder.release().await.unwrap();
    raw.delete(&kazoo.0, None).await.unwrap();
    raw.delete(&curator.0, None).await.unwrap();
    let seen = inspect(&s1, &path).await.unwrap();
    assert_eq!(seen.len(), 1);
    assert!(seen[0].holds && seen[0].kind == Read && seen[0].node == reader.0);
}

#[tokio::test(flavor = "multi_thread")]
async fn readers_before_the_first_writer_all_hold() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let path = unique_path("inspect-rw");
    let r1 = Lock::new(&session, &path, Kind::Read, config("r1", Scheme::Kazoo)).unwrap();
    let r2 = Lock::new(&session, &path, Kind::Read, config("r2", Scheme::Kazoo)).unwrap();
    assert!(r1.acquire(Acquire::default()).await.unwrap());
    assert!(r2.acquire(Acquire::default()).await.unwrap());
    raw_node(&raw, &path, "_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-__WRIT__", "w").await;
    raw_node(&raw, &path, "0123456789abcdef0123456789abcdef__rlock__", "r3").await;
    let seen = inspect(&session, &path).await.unwrap();
    let view: Vec<_> = seen.iter().map(|p| (p.identifier.as_str(), p.kind, p.holds)).collect();
    use ParticipantKind::{Read, Write};
    assert_eq!(view, [("r1", Read, true), ("r2", Read, true), ("w", Write, false), ("r3", Read, false)]);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_semaphore_shows_its_leases_then_the_admission_queue() {
    let connect = shared_server();
    let (s1, s2, s3) = (session(&connect).await, session(&connect).await, session(&connect).await);
    let raw = raw(&connect).await;
    let path = unique_path("inspect-sem");
    let first = Semaphore::new(&s1, &path, "first", 1).unwrap();
    let second = Semaphore::new(&s2, &path, "second", 1).unwrap();
    let third = Semaphore::new(&s3, &path, "third", 1).unwrap();
    assert!(first.acquire(Acquire::default()).await.unwrap());
    let waits: Vec<_> = [second.clone(), third.clone()]
        .into_iter()
        .map(|s| tokio::spawn(async move { s.acquire(Acquire::default()).await }))
        .collect();
    queued(&raw, &format!("{path}-__lock__"), 2).await;
    let seen = inspect(&s1, &path).await.unwrap();
    let view: Vec<_> = seen.iter().map(|p| (p.holds, p.kind, p.session_id)).collect();
    assert_eq!(view[0], (true, ParticipantKind::Lease, s1.status().session_id));
    assert_eq!(seen[0].identifier, "first");
    assert_eq!(seen[0].scheme, Some(Scheme::Kazoo));
    assert!(seen[1..].iter().all(|p| !p.holds && p.kind == ParticipantKind::Lease));
    let mut waiting: Vec<_> = seen[1..].iter().map(|p| p.identifier.as_str()).collect();
    waiting.sort();
    assert_eq!(waiting, ["second", "third"]);
    first.release().await.unwrap();
    second.cancel();
    third.cancel();
    for wait in waits {
        let _ = wait.await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_inspector_answers_again_on_each_change() {
    let connect = shared_server();
    let (s1, s2) = (session(&connect).await, session(&connect).await);
    let path = unique_path("inspect-watch");
    let mut inspector = Inspector::new(&s1, &path).unwrap();
    assert!(inspector.next().await.unwrap().is_empty());
    let next = tokio::spawn(async move {
        let seen = inspector.next().await;
        (inspector, seen)
    });
    let lock = Lock::new(&s2, &path, Kind::Mutex, config("late", Scheme::Kazoo)).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let (mut inspector, seen) = timeout(Duration::from_secs(10), next).await.expect("no answer on a change").unwrap();
    let seen = seen.unwrap();
    // The parent's creation wakes it before the node exists: wait for the node.
    let seen = if seen.is_empty() { inspector.next().await.unwrap() } else { seen };
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].identifier, "late");
    lock.release().await.unwrap();
    let seen = timeout(Duration::from_secs(10), inspector.next()).await.expect("no answer on the release").unwrap();
    assert!(seen.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_path_is_a_typed_error() {
    let connect = shared_server();
    let session = session(&connect).await;
    assert!(matches!(inspect(&session, "no/slash").await, Err(zoolock::Error::InvalidPath { .. })));
    assert!(matches!(Inspector::new(&session, "/trailing/"), Err(zoolock::Error::InvalidPath { .. })));
}

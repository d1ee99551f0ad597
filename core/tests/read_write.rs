//! Read/write locks: readers share, a writer excludes everyone, and a
//! queued writer keeps later readers waiting (kazoo's writer preference).

mod common;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use common::*;
use zoolock::{Acquire, Kind, Lock, LockConfig, Session};

fn lock(session: &Session, path: &str, kind: Kind, id: &str) -> Lock {
    Lock::new(session, path, kind, LockConfig { identifier: id.into(), ..LockConfig::default() }).unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn readers_share_writers_exclude_and_a_queued_writer_goes_first() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("rw");
    let (s1, s2, s3, s4) =
        (session(&connect).await, session(&connect).await, session(&connect).await, session(&connect).await);
    let reader1 = lock(&s1, &path, Kind::Read, "reader-1");
    let reader2 = lock(&s2, &path, Kind::Read, "reader-2");
    assert!(reader1.acquire(Acquire::no_wait()).await.unwrap());
    assert!(reader2.acquire(Acquire::no_wait()).await.unwrap(), "readers share");
    assert!(children(&raw, &path).await.iter().all(|c| c.contains("__rlock__")));

    let writer = lock(&s3, &path, Kind::Write, "writer");
    assert!(!writer.acquire(Acquire::no_wait()).await.unwrap(), "a writer waits for readers");
    let writing = spawn_acquire(&writer, Acquire::default());
    queued(&raw, &path, 3).await;
    let late_reader = lock(&s4, &path, Kind::Read, "late-reader");
    assert!(!late_reader.acquire(Acquire::no_wait()).await.unwrap(), "a reader queues behind a waiting writer");
    let reading = spawn_acquire(&late_reader, Acquire::default());
    queued(&raw, &path, 4).await;
    assert_eq!(reader1.queue().await.unwrap(), ["reader-1", "reader-2", "writer", "late-reader"]);

    reader1.release().await.unwrap();
    assert!(!writing.is_finished());
    reader2.release().await.unwrap();
    assert!(writing.await.unwrap().unwrap(), "the writer goes once both readers left");
    assert!(!late_reader.is_acquired());
    writer.release().await.unwrap();
    assert!(reading.await.unwrap().unwrap());
    late_reader.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_writer_holding_keeps_readers_and_writers_out() {
    let connect = shared_server();
    let path = unique_path("writer-holds");
    let (s1, s2) = (session(&connect).await, session(&connect).await);
    let writer = lock(&s1, &path, Kind::Write, "w");
    assert!(writer.acquire(Acquire::default()).await.unwrap());
    let reader = lock(&s2, &path, Kind::Read, "r");
    let second_writer = lock(&s2, &path, Kind::Write, "w2");
    let mutex = lock(&s2, &path, Kind::Mutex, "m");
    for other in [&reader, &second_writer, &mutex] {
        assert!(
            !other.acquire(Acquire::timeout(Duration::from_millis(100))).await.unwrap(),
            "{:?} got in",
            other.kind()
        );
    }
    writer.release().await.unwrap();
    assert!(reader.acquire(Acquire::no_wait()).await.unwrap());
    reader.release().await.unwrap();
}

/// Polls `future` until it has sent every request it gets to on replies
/// already in, each answered by then: a request of the same session after
/// a poll is answered after every request that poll sent. Four rounds: an
/// acquire parks after at most three (a removal, the create and listing
/// pipelined, the watch on the node ahead), and a parked one is polled in vain.
async fn poll_until_parked<F: Future + ?Sized>(mut future: Pin<&mut F>, session: &Session, path: &str) {
    for _ in 0..4 {
        assert!(poll_once(future.as_mut()).is_pending(), "returned while the lock was taken");
        session.exists(path).await.unwrap();
    }
}

/// A reader decides it holds on a reply sent before its node was deleted
/// (an operator's `deleteall`), but its acquire is polled only after a
/// writer of the same session, queued behind it, held: the session knows by
/// then that the reader's node is gone, so the reader must not report a
/// hold (its token is below the writer's). It queues again instead. Made
/// exact by polling the reader by hand: seed 214861018 of the invariant
/// test, step 285, found it by the scheduling of two tasks.
#[tokio::test(flavor = "multi_thread")]
async fn a_hold_decided_before_its_node_went_is_not_reported_after_one_it_excluded() {
    for mirror in [false, true] {
        let connect = shared_server();
        let raw = raw(&connect).await;
        let path = unique_path(&format!("stale-hold-mirror-{mirror}"));
        let (ours, theirs) = (session(&connect).await, session(&connect).await);
        let config = |id: &str| LockConfig { identifier: id.into(), mirror, adaptive: None, ..LockConfig::default() };
        // The session's mirror synced first: a waiter that found it unsynced
        // could decide on its create's reply alone, with no read to hold back.
        let warm = Lock::new(&ours, &path, Kind::Mutex, config("warm")).unwrap();
        assert!(warm.acquire(Acquire::default()).await.unwrap());
        assert!(warm.release().await.unwrap());
        // A listing holder whose node an operator deletes: no hand-over
        // (mirror/mod.rs, point 11) and no release marker (queue.rs,
        // `Wake::Released`), so the reader reads its node before it holds.
        let holder = Lock::new(&theirs, &path, Kind::Mutex, LockConfig { mirror: false, ..config("holder") }).unwrap();
        assert!(holder.acquire(Acquire::default()).await.unwrap());
        let reader = Lock::new(&ours, &path, Kind::Read, config("reader")).unwrap();
        let mut reading = Box::pin(reader.acquire(Acquire::default()));
        poll_until_parked(reading.as_mut(), &ours, &path).await;
        let writer = Lock::new(&ours, &path, Kind::Write, config("writer")).unwrap();
        let writing = spawn_acquire(&writer, Acquire::default());
        let queue = queued(&raw, &path, 3).await;
        // The holder goes: the reader, woken, sends the read of its own node
        // that would confirm its hold, and its reply comes in.
        raw.delete(&holder.node().unwrap(), None).await.unwrap();
        ours.exists(&path).await.unwrap();
        assert!(poll_once(reading.as_mut()).is_pending());
        ours.exists(&path).await.unwrap();
        // An operator deletes the reader's node: the writer holds.
        let reader_node = queue.iter().find(|c| c.contains("__rlock__")).expect("the reader's node");
        raw.delete(&format!("{path}/{reader_node}"), None).await.unwrap();
        assert!(writing.await.unwrap().unwrap());
        let writer_token = writer.fencing_token().unwrap();
        // The session locks path after path meanwhile: its records of other
        // paths are forgotten, not this path's, where it has nodes in line.
        for i in 0..150 {
            let other = Lock::mutex(&ours, &format!("{path}-other-{i}")).unwrap();
            assert!(other.acquire(Acquire::default()).await.unwrap());
            assert!(other.release().await.unwrap());
        }
        assert!(ours.lock_lines_kept() < 150 && ours.hold_orders_kept() < 150);
        // The reader, polled at last: not held, queued again behind the writer.
        assert!(poll_once(reading.as_mut()).is_pending(), "the reader held after the writer (mirror: {mirror})");
        assert!(!reader.is_acquired());
        // Its stale node's removal answered, it queues a new one.
        poll_until_parked(reading.as_mut(), &ours, &path).await;
        queued(&raw, &path, 2).await;
        assert!(writer.release().await.unwrap());
        assert!(reading.await.unwrap());
        assert!(reader.fencing_token().unwrap() > writer_token);
        assert!(reader.release().await.unwrap());
    }
}

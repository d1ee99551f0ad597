//! Read/write locks: readers share, a writer excludes everyone, and a
//! queued writer keeps later readers waiting (kazoo's writer preference).

mod common;

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

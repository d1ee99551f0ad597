//! kazoo's Queue and LockingQueue on a real server, and a consumer across
//! a lost connection and a session expiry.

mod common;

use std::collections::BTreeSet;
use std::time::Duration;

use common::*;
use zoolock::{Error, LockingQueue, Queue};

#[tokio::test(flavor = "multi_thread")]
async fn a_queue_gives_entries_by_priority_then_order_in_kazoos_names() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("queue");
    let queue = Queue::new(&session, &path).unwrap();
    assert_eq!(queue.get().await.unwrap(), None, "no path: empty");
    assert_eq!(queue.len().await.unwrap(), 0);

    let first = queue.put(b"one", Queue::DEFAULT_PRIORITY).await.unwrap();
    assert_eq!(first, format!("{path}/entry-100-0000000000"));
    queue.put(b"two", 100).await.unwrap();
    queue.put(b"urgent", 7).await.unwrap();
    queue.put(b"last", 999).await.unwrap();
    assert_eq!(queue.len().await.unwrap(), 4);
    let mut names = children(&raw, &path).await;
    names.sort();
    assert_eq!(names, ["entry-007-0000000002", "entry-100-0000000000", "entry-100-0000000001", "entry-999-0000000003"]);

    let mut got = Vec::new();
    while let Some(value) = queue.get().await.unwrap() {
        got.push(value);
    }
    assert_eq!(got, [&b"urgent"[..], b"one", b"two", b"last"]);
    assert!(queue.is_empty().await.unwrap());
    assert!(children(&raw, &path).await.is_empty(), "a taken entry is deleted");
    assert!(matches!(queue.put(b"x", 1000).await, Err(Error::InvalidArgument(_))));
    assert!(matches!(Queue::new(&session, "relative"), Err(Error::InvalidPath { .. })));
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrent_consumers_take_each_entry_once() {
    let connect = shared_server();
    let path = unique_path("queue-consumers");
    let producer = Queue::new(&session(&connect).await, &path).unwrap();
    for i in 0..40 {
        producer.put(format!("{i}").as_bytes(), 100).await.unwrap();
    }
    let mut consumers = Vec::new();
    for _ in 0..3 {
        let queue = Queue::new(&session(&connect).await, &path).unwrap();
        consumers.push(tokio::spawn(async move {
            let mut got = Vec::new();
            while let Some(value) = queue.get().await.unwrap() {
                got.push(String::from_utf8(value).unwrap());
            }
            got
        }));
    }
    let mut all = Vec::new();
    for consumer in consumers {
        all.extend(consumer.await.unwrap());
    }
    let unique: BTreeSet<&String> = all.iter().collect();
    assert_eq!(all.len(), 40, "each entry once: {all:?}");
    assert_eq!(unique.len(), 40);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_locking_queue_locks_consumes_and_releases_in_kazoos_layout() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let (s1, s2) = (session(&connect).await, session(&connect).await);
    let path = unique_path("locking-queue");
    let (a, b) = (LockingQueue::new(&s1, &path).unwrap(), LockingQueue::new(&s2, &path).unwrap());
    assert_eq!(a.get(Some(Duration::ZERO)).await.unwrap(), None);
    assert_eq!(a.get(Some(Duration::from_millis(50))).await.unwrap(), None, "empty: times out");
    assert!(!a.holds_lock().await.unwrap());
    assert!(!a.consume().await.unwrap() && !a.release().await.unwrap(), "nothing got");

    a.put(b"one", 100).await.unwrap();
    a.put_all(&[b"two".to_vec(), b"three".to_vec()], 100).await.unwrap();
    a.put(b"zero", 1).await.unwrap();
    assert_eq!(a.len().await.unwrap(), 4);
    let mut structure = children(&raw, &path).await;
    structure.sort();
    assert_eq!(structure, ["entries", "taken"]);

    assert_eq!(a.get(None).await.unwrap().as_deref(), Some(&b"zero"[..]));
    let (entry, _) = a.processing_element().unwrap();
    assert_eq!(entry, "entry-001-0000000003");
    let lock = raw.get_data(&format!("{path}/taken/{entry}")).await.unwrap();
    assert_eq!(lock.0, a.id().as_bytes(), "the lock holds the consumer's id");
    assert_eq!(lock.1.ephemeral_owner, s1.status().session_id);
    assert_eq!(a.get(None).await.unwrap().as_deref(), Some(&b"zero"[..]), "the same entry until consumed");
    assert!(a.holds_lock().await.unwrap());

    assert_eq!(b.get(None).await.unwrap().as_deref(), Some(&b"one"[..]), "a locked entry is skipped");
    assert!(b.release().await.unwrap());
    assert!(!b.holds_lock().await.unwrap());
    assert!(a.consume().await.unwrap());
    assert!(!a.holds_lock().await.unwrap());
    assert_eq!(a.len().await.unwrap(), 3);
    assert!(children(&raw, &format!("{path}/taken")).await.is_empty());

    // A waiting get takes the entry put after it started.
    let mut got = Vec::new();
    for queue in [&a, &b, &a] {
        got.push(queue.get(None).await.unwrap().unwrap());
        assert!(queue.consume().await.unwrap());
    }
    assert_eq!(got, [&b"one"[..], b"two", b"three"]);
    let waiting = tokio::spawn({
        let b = b.clone();
        async move { b.get(None).await }
    });
    until_children(&raw, &format!("{path}/entries"), "no entries", |c| c.is_empty()).await;
    a.put(b"late", 100).await.unwrap();
    assert_eq!(waiting.await.unwrap().unwrap().as_deref(), Some(&b"late"[..]));
    assert!(b.consume().await.unwrap());
    assert!(a.is_empty().await.unwrap());
    assert!(matches!(a.put(b"x", 1000).await, Err(Error::InvalidArgument(_))));
}

/// kazoo's consumer keeps its `processing_element` after an expiry and
/// returns it again from `get`, though its lock went with the session and
/// another consumer may hold the entry. zoolock's says it lost the lock,
/// and its next `get` locks an entry again.
#[tokio::test(flavor = "multi_thread")]
async fn a_consumer_whose_session_expires_loses_its_entry_to_another() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let (s1, s2) = (session(&connect).await, session(&connect).await);
    let path = unique_path("locking-queue-expiry");
    let (a, b) = (LockingQueue::new(&s1, &path).unwrap(), LockingQueue::new(&s2, &path).unwrap());
    a.put(b"job", 100).await.unwrap();
    assert_eq!(a.get(None).await.unwrap().as_deref(), Some(&b"job"[..]));
    assert_eq!(b.get(Some(Duration::from_millis(50))).await.unwrap(), None, "locked by a");

    let taking = tokio::spawn({
        let b = b.clone();
        async move { b.get(None).await }
    });
    expire(&s1).await;
    assert_eq!(taking.await.unwrap().unwrap().as_deref(), Some(&b"job"[..]), "free again once a's session ended");
    assert!(!a.holds_lock().await.unwrap());
    assert!(!a.consume().await.unwrap(), "a cannot consume what b holds");
    assert!(b.holds_lock().await.unwrap());
    assert_eq!(children(&raw, &format!("{path}/entries")).await.len(), 1);

    // a's next get waits on its new session, across a partition.
    let a_next = tokio::spawn({
        let a = a.clone();
        async move { a.get(None).await }
    });
    assert!(b.consume().await.unwrap());
    until_state(&s1, zoolock::SessionState::Connected).await;
    let id = s1.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    b.put(b"next", 100).await.unwrap();
    inject(move || harness().heal(id).unwrap()).await;
    let got = tokio::time::timeout(Duration::from_secs(15), a_next).await.expect("got after the heal");
    assert_eq!(got.unwrap().unwrap().as_deref(), Some(&b"next"[..]));
    assert!(a.consume().await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_get_given_up_leaves_no_lock() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("locking-queue-cancel");
    let queue = LockingQueue::new(&session, &path).unwrap();
    let waiting = tokio::spawn({
        let queue = queue.clone();
        async move { queue.get(None).await }
    });
    until_children(&raw, &path, "the queue's nodes", |c| c.len() == 2).await;
    waiting.abort();
    assert!(waiting.await.unwrap_err().is_cancelled());
    queue.put(b"free", 100).await.unwrap();
    assert!(children(&raw, &format!("{path}/taken")).await.is_empty());
    assert!(queue.processing_element().is_none());
    let other = LockingQueue::new(&session, &path).unwrap();
    assert_eq!(other.get(None).await.unwrap().as_deref(), Some(&b"free"[..]));
}

/// A timed get on a partitioned session ends by its timeout although no
/// request is answered. The bound asserted is a generous one on a hang.
#[tokio::test(flavor = "multi_thread")]
async fn a_timed_get_ends_by_its_timeout_during_a_partition() {
    let connect = shared_server();
    let session = session(&connect).await;
    let queue = LockingQueue::new(&session, &unique_path("locking-queue-partition")).unwrap();
    assert_eq!(queue.get(Some(Duration::ZERO)).await.unwrap(), None, "the queue's nodes are made");
    let id = session.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    let started = std::time::Instant::now();
    let got = queue.get(Some(Duration::from_millis(500))).await;
    let took = started.elapsed();
    inject(move || harness().heal(id).unwrap()).await;
    assert_eq!(got.unwrap(), None);
    assert!(took < Duration::from_secs(3), "a 500 ms get took {took:?}");
}

/// Consumers sharing one session are told apart by their id, not by the
/// lock node's owner: woken together by one entry, one of them locks it and
/// the others wait on.
#[tokio::test(flavor = "multi_thread")]
async fn consumers_on_one_session_lock_an_entry_once() {
    let connect = shared_server();
    let session = session(&connect).await;
    let path = unique_path("locking-queue-one-session");
    let producer = LockingQueue::new(&session, &path).unwrap();
    let (got, mut returned) = tokio::sync::mpsc::unbounded_channel();
    for _ in 0..3 {
        let (consumer, got) = (LockingQueue::new(&session, &path).unwrap(), got.clone());
        tokio::spawn(async move { got.send(consumer.get(None).await.unwrap().unwrap()).unwrap() });
    }
    producer.put(b"one", 100).await.unwrap();
    let mut values = vec![returned.recv().await.unwrap()];
    producer.put_all(&[b"two".to_vec(), b"three".to_vec()], 100).await.unwrap();
    for _ in 0..2 {
        values.push(tokio::time::timeout(Duration::from_secs(15), returned.recv()).await.unwrap().unwrap());
    }
    values.sort();
    assert_eq!(values, [&b"one"[..], b"three", b"two"], "each entry locked by one consumer");
}

//! A hold's life on one handle: a second acquire while it holds, a lease
//! shorter than recording the hold, a win whose session ended before it was
//! recorded, and the holder's node deleted by someone else.

mod common;

use std::time::Duration;

use common::*;
use tokio::time::timeout;
use zk_harness::{Op, Select};
use zookeeper_client as zk;
use zoolock::{Acquire, Kind, Lock, LockConfig, LockState, LostReason, Outcome, Semaphore, Session, SessionState};

async fn wait_state(states: &mut tokio::sync::watch::Receiver<LockState>, want: LockState) {
    timeout(Duration::from_secs(10), states.wait_for(|s| *s == want))
        .await
        .unwrap_or_else(|_| panic!("the hold never became {want:?}"))
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_acquire_on_a_holding_semaphore_handle_succeeds_at_once() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("sem-twice");
    let semaphore = Semaphore::new(&session(&connect).await, &path, "one", 1).unwrap();
    assert!(semaphore.acquire(Acquire::default()).await.unwrap());
    let again = timeout(Duration::from_secs(5), semaphore.acquire(Acquire::default())).await;
    assert_eq!(again.expect("a second acquire returns at once, as kazoo's does"), Ok(true));
    assert!(semaphore.acquire(Acquire::no_wait()).await.unwrap());
    assert_eq!(children(&raw, &path).await.len(), 1, "still one lease");
    assert!(semaphore.release().await.unwrap());
    assert!(!semaphore.release().await.unwrap(), "one release gave the one lease back");
    assert!(children(&raw, &path).await.is_empty());

    // Two acquires pending on one handle: the lease one of them wins is the other's too.
    let other = Semaphore::new(&session(&connect).await, &path, "other", 1).unwrap();
    assert!(other.acquire(Acquire::default()).await.unwrap());
    let pending: Vec<_> =
        (0..2).map(|_| spawn_acquire(&semaphore, Acquire::timeout(Duration::from_secs(10)))).collect();
    until_children(&raw, &format!("{path}-__lock__"), "one acquire admitted", |c| c.len() == 1).await;
    other.release().await.unwrap();
    for acquire in pending {
        assert_eq!(acquire.await.unwrap(), Ok(true));
    }
    assert_eq!(children(&raw, &path).await.len(), 1);
    assert!(semaphore.release().await.unwrap());
    assert!(!semaphore.release().await.unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_acquire_on_a_holding_lock_handle_waits_for_that_hold_and_says_so() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("lock-twice");
    let lock = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let short = || Acquire::timeout(Duration::from_millis(300));
    assert_eq!(lock.acquire_outcome(short()).await, Ok(Outcome::HandleBusy));
    assert!(!lock.acquire(short()).await.unwrap());
    assert_eq!(lock.acquire_outcome(Acquire::no_wait()).await, Ok(Outcome::HandleBusy));
    assert!(lock.is_acquired(), "the first hold is untouched");
    assert_eq!(children(&raw, &path).await.len(), 1);
    let other = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert_eq!(other.acquire_outcome(short()).await, Ok(Outcome::Taken));
    assert_eq!(other.acquire_outcome(Acquire::no_wait()).await, Ok(Outcome::Taken));

    // It waits for the handle's own release, then holds.
    let second = spawn_acquire(&lock, Acquire::timeout(Duration::from_secs(10)));
    lock.release().await.unwrap();
    assert_eq!(second.await.unwrap(), Ok(true));
    assert!(lock.release().await.unwrap());
}

/// The lease timer races the recording of the hold; several handles at once
/// make the recording thread lose its core now and then, as under load.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_lease_shorter_than_recording_the_hold_still_ends_it() {
    let connect = shared_server();
    let session = session(&connect).await;
    let mut tasks = Vec::new();
    for handle in 0..8 {
        let lock = Lock::mutex(&session, &unique_path("tiny-lease")).unwrap();
        tasks.push(tokio::spawn(async move {
            let mut states = lock.subscribe();
            for round in 0..100 {
                assert!(lock.acquire(Acquire::default().lease(Duration::from_nanos(1))).await.unwrap());
                let lost = states.wait_for(|s| *s == LockState::Lost(LostReason::LeaseExpired));
                let lost = timeout(Duration::from_secs(5), lost).await;
                assert!(lost.is_ok(), "handle {handle}, round {round}: the lease never ended the hold");
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
}

/// The waiter wins on its predecessor's deletion notice, but its caller does
/// not poll it (a starved thread) until its session has expired and a new
/// one is up: the win belongs to a session that has ended. `mirror`: the
/// notice comes to the session's mirror of the path (`LockConfig::mirror`),
/// not to a watch on the predecessor.
async fn win_on_an_ended_session(
    waiter_timeout: Duration,
    resume_after_timeout: bool,
    mirror: bool,
) -> (Lock, Session, bool) {
    let connect = shared_server();
    let path = unique_path("ended-win");
    let holder = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let waiter_session = session(&connect).await;
    let config = LockConfig { mirror, ..LockConfig::default() };
    let waiter = Lock::new(&waiter_session, &path, Kind::Mutex, config).unwrap();
    let id = waiter_session.status().session_id;
    let holder_node = holder.node().unwrap();
    let mut acquiring = Box::pin(waiter.acquire(Acquire::timeout(waiter_timeout)));
    let raw = raw(&connect).await;
    // Queued and watching: the predecessor's node, or (mirrored) the whole path.
    let watching = async {
        match mirror {
            true => {
                queued(&raw, &path, 2).await;
                watched_by(&path, id).await
            }
            false => watched_by(&holder_node, id).await,
        }
    };
    tokio::select! {
        done = &mut acquiring => panic!("acquired while held: {done:?}"),
        _ = watching => {}
    }
    // After the acquire's first poll, which set its deadline: resuming at
    // `started + waiter_timeout` is past that deadline.
    let started = tokio::time::Instant::now();
    holder.release().await.unwrap();
    inject(move || harness().expire(id).unwrap()).await;
    let mut status = waiter_session.subscribe();
    timeout(Duration::from_secs(20), status.wait_for(|s| s.generation == 2 && s.state == SessionState::Connected))
        .await
        .expect("a new session")
        .unwrap();
    if resume_after_timeout {
        tokio::time::sleep_until(started + waiter_timeout).await;
    }
    let got = acquiring.await.unwrap();
    (waiter, waiter_session, got)
}

#[tokio::test(flavor = "multi_thread")]
async fn a_win_whose_session_ended_before_it_was_recorded_queues_again() {
    for mirror in [false, true] {
        a_win_whose_session_ended_before_it_was_recorded_queues_again_with(mirror).await;
    }
}

async fn a_win_whose_session_ended_before_it_was_recorded_queues_again_with(mirror: bool) {
    let (waiter, session, got) = win_on_an_ended_session(Duration::from_secs(30), false, mirror).await;
    assert!(got);
    assert_eq!(waiter.state(), LockState::Held, "a hold of the new session, not one already lost");
    let raw = raw(&shared_server()).await;
    let stat = raw.check_stat(&waiter.node().unwrap()).await.unwrap().expect("its node exists");
    assert_eq!(stat.ephemeral_owner, session.status().session_id);
    assert!(waiter.fencing_token().is_some());
    waiter.release().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_win_whose_session_ended_is_no_hold_once_the_timeout_is_gone() {
    for mirror in [false, true] {
        a_win_whose_session_ended_is_no_hold_once_the_timeout_is_gone_with(mirror).await;
    }
}

async fn a_win_whose_session_ended_is_no_hold_once_the_timeout_is_gone_with(mirror: bool) {
    let (waiter, _session, got) = win_on_an_ended_session(Duration::from_secs(3), true, mirror).await;
    assert!(!got, "the timeout ran out (mirror: {mirror})");
    assert!(!waiter.is_acquired());
    assert_ne!(waiter.state(), LockState::Held);
    let raw = raw(&shared_server()).await;
    assert!(children(&raw, waiter.path()).await.is_empty(), "no node left");
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_the_holders_node_tells_the_holder_and_the_next_waiter_holds() {
    deleting_the_holders_node_tells_the_holder_and_the_next_waiter_holds_with(true).await;
}

/// A listed hold watches its node by a read the session skips only if the
/// hold is gone (`HolderState::read_and_watch`). This pins the outcome, not
/// the path: the task it falls back to would pass too.
#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_listed_holders_node_tells_the_holder_and_the_next_waiter_holds() {
    deleting_the_holders_node_tells_the_holder_and_the_next_waiter_holds_with(false).await;
}

async fn deleting_the_holders_node_tells_the_holder_and_the_next_waiter_holds_with(mirror: bool) {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("node-deleted");
    let config = LockConfig { mirror, ..LockConfig::default() };
    let holder = Lock::new(&session(&connect).await, &path, Kind::Mutex, config.clone()).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    let mut states = holder.subscribe();
    let waiter = Lock::new(&session(&connect).await, &path, Kind::Mutex, config).unwrap();
    let waiting = spawn_acquire(&waiter, Acquire::default());
    queued(&raw, &path, 2).await;
    raw.delete(&holder.node().unwrap(), None).await.unwrap();
    wait_state(&mut states, LockState::Lost(LostReason::NodeDeleted)).await;
    assert!(!holder.is_acquired());
    assert_eq!(holder.fencing_token(), None);
    assert_eq!(waiting.await.unwrap(), Ok(true));
    assert!(!holder.release().await.unwrap(), "nothing left to release");

    // The handle holds again, and its own release is no loss.
    waiter.release().await.unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    assert!(holder.release().await.unwrap());
    assert_eq!(holder.state(), LockState::Released);
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_lease_node_tells_its_holder() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("lease-deleted");
    let semaphore = Semaphore::new(&session(&connect).await, &path, "holder", 1).unwrap();
    assert!(semaphore.acquire(Acquire::default()).await.unwrap());
    let mut states = semaphore.subscribe();
    let lease = children(&raw, &path).await.remove(0);
    raw.delete(&format!("{path}/{lease}"), None).await.unwrap();
    wait_state(&mut states, LockState::Lost(LostReason::NodeDeleted)).await;
    assert!(!semaphore.is_acquired());
    let other = Semaphore::new(&session(&connect).await, &path, "other", 1).unwrap();
    assert!(other.acquire(Acquire::no_wait()).await.unwrap(), "the lease is free");
    other.release().await.unwrap();
}

/// Tells when it is dropped: a listener that owns one is dropped with its handle's state.
struct SaysDropped(std::sync::mpsc::Sender<()>);

impl Drop for SaysDropped {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

/// Waits until `dropped` says so; fails after ten seconds.
async fn until_dropped(dropped: std::sync::mpsc::Receiver<()>, what: &str) {
    let said = inject(move || dropped.recv_timeout(Duration::from_secs(10))).await;
    assert!(said.is_ok(), "{what} was never dropped");
}

/// kazoo's: a handle dropped while it holds ([`Acquire::keep_if_dropped`],
/// what the Python binding asks for) keeps the hold until its session ends,
/// and its state (with its listeners) is freed once the hold ended.
#[tokio::test(flavor = "multi_thread")]
async fn a_kept_hold_outlives_its_handle_until_the_session_is_closed() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let worker = session(&connect).await;
    let path = unique_path("kept");
    let lock = Lock::mutex(&worker, &path).unwrap();
    let (dropped_tx, dropped) = std::sync::mpsc::channel();
    let says = SaysDropped(dropped_tx);
    lock.add_listener(Box::new(move |_| {
        let _ = &says;
    }));
    assert!(lock.acquire(Acquire::no_wait().keep_if_dropped()).await.unwrap());
    let node = lock.node().unwrap();
    drop(lock);

    let other = session(&connect).await;
    let contender = Lock::mutex(&other, &path).unwrap();
    // A dropped hold would be gone within milliseconds; a kept one stays.
    assert!(!contender.acquire(Acquire::timeout(Duration::from_millis(1500))).await.unwrap());
    assert_eq!(children(&raw, &path).await, [node.rsplit('/').next().unwrap()]);
    worker.close().await;
    assert!(contender.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap());
    until_dropped(dropped, "the kept hold's state").await;
    contender.release().await.unwrap();
}

/// A kept hold still ends as any hold does, and its listeners hear how:
/// its node deleted, its lease over, its session expired; a lease (a
/// semaphore's) kept the same way.
#[tokio::test(flavor = "multi_thread")]
async fn a_kept_hold_ends_and_says_so_like_any_hold() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let worker = session(&connect).await;
    let path = unique_path("kept-ends");

    let lock = Lock::mutex(&worker, &path).unwrap();
    let (heard_tx, heard) = std::sync::mpsc::channel();
    let (dropped_tx, dropped) = std::sync::mpsc::channel();
    let says = SaysDropped(dropped_tx);
    lock.add_listener(Box::new(move |state| {
        let _ = &says;
        let _ = heard_tx.send(state);
    }));
    assert!(lock.acquire(Acquire::default().keep_if_dropped()).await.unwrap());
    let node = lock.node().unwrap();
    drop(lock);
    raw.delete(&node, None).await.unwrap();
    let lost = inject(move || {
        let mut states = Vec::new();
        while !matches!(states.last(), Some(LockState::Lost(_))) {
            states.push(heard.recv_timeout(Duration::from_secs(10)).expect("a state"));
        }
        states
    })
    .await;
    assert_eq!(lost.last(), Some(&LockState::Lost(LostReason::NodeDeleted)), "{lost:?}");
    until_dropped(dropped, "the state of a kept hold whose node was deleted").await;

    let leased = Lock::mutex(&worker, &path).unwrap();
    assert!(leased.acquire(Acquire::default().lease(Duration::from_millis(300)).keep_if_dropped()).await.unwrap());
    drop(leased);
    let next = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(next.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap(), "the lease ended the kept hold");
    next.release().await.unwrap();

    let semaphore = Semaphore::new(&worker, &format!("{path}-sem"), "worker", 1).unwrap();
    assert!(semaphore.acquire(Acquire::no_wait().keep_if_dropped()).await.unwrap());
    drop(semaphore);
    let other = Semaphore::new(&session(&connect).await, &format!("{path}-sem"), "other", 1).unwrap();
    assert!(!other.acquire(Acquire::timeout(Duration::from_millis(1500))).await.unwrap());
    let id = worker.status().session_id;
    inject(move || harness().expire(id).unwrap()).await;
    assert!(other.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap(), "the expiry ended the kept lease");
    other.release().await.unwrap();
}

/// Without `keep_if_dropped` (Rust's default), dropping a held handle releases it.
#[tokio::test(flavor = "multi_thread")]
async fn a_dropped_handle_releases_unless_kept() {
    let connect = shared_server();
    let worker = session(&connect).await;
    let path = unique_path("dropped");
    let lock = Lock::mutex(&worker, &path).unwrap();
    assert!(lock.acquire(Acquire::no_wait()).await.unwrap());
    drop(lock);
    let other = Lock::mutex(&session(&connect).await, &path).unwrap();
    assert!(other.acquire(Acquire::timeout(Duration::from_secs(10))).await.unwrap());
    other.release().await.unwrap();
}

/// A hold decided by a listing watches its node (a `getData` with a watch,
/// sent once it holds). Its own release must let that watch fire on the
/// delete: a watcher dropped before the notice costs zookeeper-client a
/// `RemoveWatches` for it and another for the notice no watcher expects
/// (issue 26: the bindings, whose release comes after the watch is set,
/// sent two more requests per contended acquisition than Rust).
#[tokio::test(flavor = "multi_thread")]
async fn releasing_a_watched_hold_sends_no_remove_watches() {
    let connect = shared_server();
    let session = session(&connect).await;
    let id = session.status().session_id;
    let path = unique_path("release-unwatch");
    let config = LockConfig { mirror: false, ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
    for round in 0..3 {
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        watched_by(&lock.node().unwrap(), id).await;
        let removals = Select::session(id).op(Op::RemoveWatches);
        let armed = inject(move || harness().drop_reply(removals).unwrap()).await;
        assert!(lock.release().await.unwrap());
        // A round trip of the session after the release: whatever the
        // release sent is at the server by then.
        lock.queue().await.unwrap();
        let report = inject(move || harness().disarm(armed).unwrap()).await;
        assert!(report.request.is_none(), "round {round}: the release sent RemoveWatches: {:?}", report.request);
    }
    session.close().await;
}

/// The read that sets a listed hold's watch may be skipped (zookeeper-client's
/// `get_and_watch_data_or_skip`): `skip` is asked when the session's task
/// takes the read from its queue, not when it is called. Skipped, the read
/// reaches no server and sets no watch; sent, its watch hears the deletion.
#[tokio::test(flavor = "multi_thread")]
async fn a_read_or_skip_is_skipped_as_the_session_takes_it_and_watches_otherwise() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let id = raw.session_id().0;
    let path = unique_path("read-or-skip");
    raw.mkdir(&path, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();

    // Queued while the session reconnects (its new connections black-holed),
    // so its task takes the read only after `skip`'s answer changed.
    inject(move || harness().partition(id).unwrap()).await;
    let mut states = raw.state_watcher();
    inject(move || assert!(harness().drop_connections(id).unwrap() > 0, "the client had a connection")).await;
    while states.state() != zk::SessionState::Disconnected {
        timeout(Duration::from_secs(10), states.changed()).await.expect("the reset disconnected the client");
    }
    let reads = Select::session(id).op(Op::GetData);
    let armed = inject(move || harness().drop_reply(reads).unwrap()).await;
    let gone = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let asked = gone.clone();
    let read = raw.get_and_watch_data_or_skip(&path, move || asked.load(std::sync::atomic::Ordering::SeqCst));
    gone.store(true, std::sync::atomic::Ordering::SeqCst);
    inject(move || harness().heal(id).unwrap()).await;
    let skipped = timeout(Duration::from_secs(10), read).await.expect("the skipped read ended");
    assert!(matches!(skipped, Err(zk::Error::Skipped)), "{:?}", skipped.map(|(_, stat, _)| stat));
    // A round trip after it: had it been sent, the server has it by then.
    raw.check_stat(&path).await.unwrap();
    let report = inject(move || harness().disarm(armed).unwrap()).await;
    assert!(report.request.is_none(), "a skipped read reached the server: {:?}", report.request);

    let (_, _, watcher) = raw.get_and_watch_data_or_skip(&path, || false).await.unwrap();
    watched_by(&path, id).await;
    raw.delete(&path, None).await.unwrap();
    let event = timeout(Duration::from_secs(10), watcher.changed()).await.expect("the watch fired");
    assert_eq!(event.event_type, zk::EventType::NodeDeleted);
}

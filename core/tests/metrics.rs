//! Metrics after a known sequence of acquisitions, releases, losses and
//! faults: each session's snapshot, and the process's Prometheus text.
//! One test: the Prometheus recorder is global to this test binary.

mod common;

use std::collections::BTreeMap;
use std::time::Duration;

use common::*;
use tokio::time::timeout;
use zk_harness::{FaultState, Op, Select};
use zoolock::metrics::*;
use zoolock::{Acquire, Lock, LockState, LostReason, Semaphore, Session, SessionState};

fn value(snapshot: &BTreeMap<String, f64>, name: &str) -> f64 {
    *snapshot.get(name).unwrap_or_else(|| panic!("no {name} in {snapshot:?}"))
}

fn loss(reason: &str) -> String {
    format!("{LOSSES}{{reason=\"{reason}\"}}")
}

fn state(state: &str) -> String {
    format!("{SESSION_STATE_CHANGES}{{state=\"{state}\"}}")
}

async fn until_state(lock: &Lock, wanted: LockState) {
    let mut states = lock.subscribe();
    timeout(Duration::from_secs(20), states.wait_for(|s| *s == wanted))
        .await
        .unwrap_or_else(|_| panic!("{} never became {wanted:?}", lock.path()))
        .unwrap();
}

async fn until_session(session: &Session, wanted: SessionState) {
    let mut status = session.subscribe();
    timeout(Duration::from_secs(20), status.wait_for(|s| s.state == wanted)).await.unwrap().unwrap();
}

/// The sample `name` (labels included) of Prometheus' text.
#[cfg(feature = "prometheus")]
fn sample(text: &str, name: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(name).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {name} in\n{text}"))
        .trim()
        .parse()
        .unwrap()
}

/// The sum of the samples of `name` over the label `path`, which every sample of it has.
#[cfg(feature = "prometheus")]
fn over_paths(text: &str, name: &str) -> f64 {
    let prefix = format!("{name}{{{PATH}=\"");
    let samples: Vec<f64> = text
        .lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|rest| rest.rsplit_once(' ').expect("a value").1.trim().parse().unwrap())
        .collect();
    assert!(!samples.is_empty(), "no {name}{{path=...}} in\n{text}");
    assert!(!text.lines().any(|l| l.starts_with(&format!("{name} "))), "{name} without its path in\n{text}");
    samples.iter().sum()
}

/// The sample of `name` for the lock at `path`.
#[cfg(feature = "prometheus")]
fn of_path(text: &str, name: &str, path: &str) -> f64 {
    sample(text, &format!("{name}{{{PATH}=\"{path}\"}}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn metrics_count_a_known_sequence() {
    // The packaged crate's tests build without the feature (its self dev-dependency is dropped).
    #[cfg(feature = "prometheus")]
    let prometheus = install_prometheus().expect("the first recorder of this process");
    let zk = zk_harness::shared();
    let connect = shared_server();
    let (s1, s2, raw) = (session(&connect).await, session(&connect).await, raw(&connect).await);

    // Uncontended on s1, then a handoff to s2 waiting behind it.
    let path = unique_path("metrics-handoff");
    let (a, b) = (Lock::mutex(&s1, &path).unwrap(), Lock::mutex(&s2, &path).unwrap());
    assert!(a.acquire(Acquire::default()).await.unwrap());
    let waiting = tokio::spawn({
        let b = b.clone();
        async move { b.acquire(Acquire::default()).await }
    });
    queued(&raw, &path, 2).await;
    a.release().await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    b.release().await.unwrap();
    let (m1, m2) = (s1.metrics(), s2.metrics());
    assert_eq!(value(&m1, "zoolock_acquire_wait_seconds_count"), 1.0);
    assert_eq!(value(&m1, HANDOFFS), 0.0);
    assert_eq!(value(&m1, "zoolock_hold_seconds_count"), 1.0);
    assert_eq!(value(&m2, "zoolock_acquire_wait_seconds_count"), 1.0);
    assert_eq!(value(&m2, HANDOFFS), 1.0);
    // s2 waited at least as long as s1 held.
    assert!(value(&m2, "zoolock_acquire_wait_seconds_sum") >= value(&m1, "zoolock_hold_seconds_sum"), "{m1:?} {m2:?}");

    // A timed acquire whose timeout runs out counts as a timeout; a single
    // try that finds the lock taken does not. s3 holds, so that s1 and s2
    // count no acquisition more.
    let s3 = session(&connect).await;
    let timed_path = unique_path("metrics-timeout");
    let (holder, late) = (Lock::mutex(&s3, &timed_path).unwrap(), Lock::mutex(&s2, &timed_path).unwrap());
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    assert!(!late.acquire(Acquire::timeout(Duration::from_millis(200))).await.unwrap());
    assert!(!late.acquire(Acquire::no_wait()).await.unwrap());
    assert!(holder.release().await.unwrap());
    assert_eq!(value(&s2.metrics(), ACQUIRE_TIMEOUTS), 1.0, "{:?}", s2.metrics());
    assert_eq!(value(&s1.metrics(), ACQUIRE_TIMEOUTS), 0.0);
    assert_eq!(value(&s2.metrics(), "zoolock_acquire_wait_seconds_count"), 1.0, "a timeout is no acquisition");

    // A lease runs out; someone deletes a holder's node.
    let leased = Lock::mutex(&s1, &unique_path("metrics-lease")).unwrap();
    assert!(leased.acquire(Acquire::default().lease(Duration::from_millis(100))).await.unwrap());
    until_state(&leased, LockState::Lost(LostReason::LeaseExpired)).await;
    let broken = Lock::mutex(&s1, &unique_path("metrics-deleted")).unwrap();
    assert!(broken.acquire(Acquire::default()).await.unwrap());
    raw.delete(&broken.node().unwrap(), None).await.unwrap();
    until_state(&broken, LockState::Lost(LostReason::NodeDeleted)).await;

    // A semaphore counts once per lease, not for its admission lock too.
    let semaphore = Semaphore::new(&s1, &unique_path("metrics-sem"), "s", 2).unwrap();
    assert!(semaphore.acquire(Acquire::default()).await.unwrap());
    semaphore.release().await.unwrap();

    // A release whose delete is answered by a connection reset is tried again.
    let s1_id = s1.status().session_id;
    let retried = Lock::mutex(&s1, &unique_path("metrics-retry")).unwrap();
    assert!(retried.acquire(Acquire::default()).await.unwrap());
    // A plain delete (a hold decided on the mirror), or a multi with its
    // release marker (a writer's hold decided by listing).
    let fault = zk.reset_before_reply(Select::session(s1_id).op(Op::Delete).op(Op::Multi)).unwrap();
    assert!(retried.release().await.unwrap());
    zk.wait_fault(fault, FaultState::Fired, Duration::from_secs(10)).unwrap();
    until_session(&s1, SessionState::Connected).await;

    let m1 = s1.metrics();
    assert_eq!(value(&m1, "zoolock_acquire_wait_seconds_count"), 5.0, "{m1:?}");
    assert_eq!(value(&m1, "zoolock_hold_seconds_count"), 5.0, "{m1:?}");
    assert_eq!(value(&m1, &loss("lease_expired")), 1.0);
    assert_eq!(value(&m1, &loss("node_deleted")), 1.0);
    assert_eq!(value(&m1, &loss("session_expired")), 0.0);
    assert_eq!(value(&m1, CLEANUP_RETRIES), 1.0, "{m1:?}");
    assert_eq!(value(&m1, &state("suspended")), 1.0, "{m1:?}");
    assert_eq!(value(&m1, &state("connected")), 1.0, "{m1:?}");
    assert_eq!(value(&m1, SUSPENSIONS), 0.0, "nothing was held when the connection dropped");

    // s2: a hold suspended by a partition and restored, then lost to expiry.
    let s2_id = s2.status().session_id;
    let held = Lock::mutex(&s2, &unique_path("metrics-partition")).unwrap();
    assert!(held.acquire(Acquire::default()).await.unwrap());
    zk.partition(s2_id).unwrap();
    until_state(&held, LockState::Suspended).await;
    zk.heal(s2_id).unwrap();
    until_state(&held, LockState::Held).await;
    tokio::task::spawn_blocking(move || zk_harness::shared().expire(s2_id)).await.unwrap().unwrap();
    until_state(&held, LockState::Lost(LostReason::SessionExpired)).await;
    until_session(&s2, SessionState::Connected).await;
    let m2 = s2.metrics();
    // Suspended twice: by the partition, and by the expiry (the server drops the connection first).
    assert_eq!(value(&m2, SUSPENSIONS), 2.0, "{m2:?}");
    assert_eq!(value(&m2, &loss("session_expired")), 1.0, "{m2:?}");
    assert_eq!(value(&m2, &state("lost")), 1.0, "{m2:?}");
    assert_eq!(value(&m2, &state("suspended")), 2.0, "the partition and the expiry: {m2:?}");

    // Closing s1 ends its last hold.
    let last = Lock::mutex(&s1, &unique_path("metrics-close")).unwrap();
    assert!(last.acquire(Acquire::default()).await.unwrap());
    s1.close().await;
    let m1 = s1.metrics();
    assert_eq!(value(&m1, &loss("session_closed")), 1.0);
    assert_eq!(value(&m1, &state("closed")), 1.0);

    #[cfg(feature = "prometheus")]
    {
        let text = prometheus.render();
        check_prometheus(&text, &[&s1, &s2, &s3]);
        // A lock's own metrics carry its path.
        assert_eq!(of_path(&text, "zoolock_acquire_wait_seconds_count", &path), 2.0, "{text}");
        assert_eq!(of_path(&text, "zoolock_hold_seconds_count", &path), 2.0, "{text}");
        assert_eq!(of_path(&text, HANDOFFS, &path), 1.0, "{text}");
        assert_eq!(of_path(&text, ACQUIRE_TIMEOUTS, &timed_path), 1.0, "{text}");
        assert_eq!(of_path(&text, "zoolock_acquire_wait_seconds_count", &timed_path), 1.0, "s3's: {text}");
    }
}

/// The process's Prometheus text adds up the sessions; a lock's own
/// metrics, over their paths.
#[cfg(feature = "prometheus")]
fn check_prometheus(text: &str, sessions: &[&Session]) {
    let snapshots: Vec<_> = sessions.iter().map(|s| s.metrics()).collect();
    let all = |name: &str| snapshots.iter().map(|m| value(m, name)).sum::<f64>();
    for name in [SUSPENSIONS, CLEANUP_RETRIES] {
        assert_eq!(sample(text, name), all(name), "{name} in\n{text}");
    }
    for name in [HANDOFFS, ACQUIRE_TIMEOUTS, "zoolock_acquire_wait_seconds_count", "zoolock_hold_seconds_count"] {
        assert_eq!(over_paths(text, name), all(name), "{name} in\n{text}");
    }
    for reason in ["lease_expired", "node_deleted", "session_expired", "session_closed"] {
        assert_eq!(sample(text, &loss(reason)), all(&loss(reason)), "{reason} in\n{text}");
    }
    assert!(text.contains("# TYPE zoolock_acquire_wait_seconds histogram"), "{text}");
}

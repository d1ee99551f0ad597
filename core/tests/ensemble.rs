//! Faults inside the ensemble: servers on hosts of their own (network
//! namespaces of the test's), cut apart by netfilter in the kernel. Each
//! test runs alone in a namespace of its own (`zk_harness::net::isolated`).

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use zk_harness::{Ensemble, Net, Options};
use zoolock::{Acquire, Lock, LockState, Session, SessionOptions, SessionState};

/// A 3-server ensemble on hosts of its own with `tick_ms` and `sync_limit`.
async fn ensemble(net: &Arc<Net>, tick_ms: u64, sync_limit: u32) -> Ensemble {
    let options = Options { net: Some(net.clone()), tick_ms, sync_limit, init_limit: 10, ..Options::default() };
    common::inject(move || Ensemble::start(3, options).expect("an ensemble on hosts of its own")).await
}

async fn session(connect: String, timeout: Duration) -> Session {
    Session::connect(SessionOptions::new(connect).session_timeout(timeout)).await.expect("connect")
}

/// Reads `lock`'s state in a loop until `stop`; the last time it said
/// `Held`, from the test's start.
fn last_held(lock: Lock, stop: Arc<AtomicBool>, start: Instant) -> std::thread::JoinHandle<Duration> {
    std::thread::spawn(move || {
        let mut last = Duration::ZERO;
        while !stop.load(Ordering::Relaxed) {
            let before = start.elapsed();
            if lock.state() == LockState::Held {
                last = before;
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        last
    })
}

/// A holder on the server `holds_on` picks, another client on one of the
/// others; `holds_on`'s server is cut from the other two (both ways); the
/// other client must hold, and the holder must have stopped saying `Held`
/// before it did (read every 0.2 ms, and for a second after).
async fn cut_off_holder_says_not_held_before_another_holds(
    zk: &Ensemble,
    net: &Net,
    holds_on: usize,
    timeout: Duration,
    name: &str,
) {
    let other_on = (0..3).find(|&i| i != holds_on).unwrap();
    let addr = |i: usize| zk.host(i).unwrap().addr;
    let path = common::unique_path(name);
    let holder_session = session(zk.client_addr(holds_on).unwrap().to_string(), timeout).await;
    let other_session = session(zk.client_addr(other_on).unwrap().to_string(), timeout).await;
    let holder = Lock::mutex(&holder_session, &path).unwrap();
    let other = Lock::mutex(&other_session, &path).unwrap();
    assert!(holder.acquire(Acquire::default()).await.unwrap());
    assert_eq!(holder.state(), LockState::Held);

    let start = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let reader = last_held(holder.clone(), stop.clone(), start);
    let others: Vec<_> = (0..3).filter(|&i| i != holds_on).map(addr).collect();
    net.split(&[addr(holds_on)], &others).unwrap();
    assert!(other.acquire(Acquire::timeout(Duration::from_secs(30))).await.unwrap(), "the majority's client holds");
    let other_held = start.elapsed();
    // Still reading a while after: a holder that goes on saying Held is caught.
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    let last = reader.join().unwrap();
    eprintln!("{name}: cut at 0; the other held by {other_held:?}; the cut-off holder last said Held at {last:?}");
    assert!(last < other_held, "the cut-off holder said Held at {last:?}, after the other held ({other_held:?})");
    assert_ne!(holder_session.state(), SessionState::Connected);
    net.heal_all().unwrap();
    other.release().await.unwrap();
    other_session.close().await;
    holder_session.close().await;
}

/// Issue 32's first case: a holder connected to a follower that the others
/// cut off. The leader expires its session after the session timeout T
/// (1.6 s) and a client of the majority holds, while the follower still
/// answers the holder's pings until syncLimit × tickTime (3 s here).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_on_a_follower_cut_off_from_the_leader_says_not_held_before_another_holds() {
    if !zk_harness::net::isolated("a_holder_on_a_follower_cut_off_from_the_leader_says_not_held_before_another_holds") {
        return;
    }
    let net = Arc::new(Net::new().unwrap());
    let zk = ensemble(&net, 200, 15).await;
    let follower = (0..3).find(|&i| Some(i) != zk.leader()).unwrap();
    let timeout = Duration::from_millis(1600);
    cut_off_holder_says_not_held_before_another_holds(&zk, &net, follower, timeout, "cut-off-follower").await;
}

/// A leader cut off from the majority goes on answering `sync` until it
/// notices (up to a tick after its followers left it), while the majority
/// elects a new leader, which expires the session T after it starts. With
/// tickTime 1 s and T = 2 s, syncs alone could keep the holder on the old
/// leader `Held` after the other client holds: only a write, which the old
/// leader cannot commit, proves that no new leader started.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_holder_on_a_leader_cut_off_from_the_majority_says_not_held_before_another_holds() {
    if !zk_harness::net::isolated("a_holder_on_a_leader_cut_off_from_the_majority_says_not_held_before_another_holds") {
        return;
    }
    let net = Arc::new(Net::new().unwrap());
    let zk = ensemble(&net, 1000, 3).await;
    let leader = zk.leader().expect("a leader");
    cut_off_holder_says_not_held_before_another_holds(&zk, &net, leader, Duration::from_secs(2), "cut-off-leader")
        .await;
}

//! `zoolock exec` on a server cut off from the rest of its ensemble
//! (servers on hosts of their own, cut apart by netfilter in the kernel).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use zk_harness::{Ensemble, Net, Options};
use zoolock::{Acquire, Lock, Session, SessionOptions};

/// Issue 32: a follower cut off from the leader answers zoolock's requests
/// until syncLimit × tickTime (3 s here), while the leader expires the
/// session after its timeout (1.6 s) and another client holds. CMD must be
/// gone before that other client holds.
#[tokio::test(flavor = "multi_thread")]
async fn a_command_on_a_follower_cut_off_from_the_leader_is_gone_before_another_client_holds() {
    if !zk_harness::net::isolated("a_command_on_a_follower_cut_off_from_the_leader_is_gone_before_another_client_holds")
    {
        return;
    }
    let net = Arc::new(Net::new().unwrap());
    let options = Options { net: Some(net.clone()), sync_limit: 15, ..Options::default() };
    let zk = tokio::task::spawn_blocking(move || Ensemble::start(3, options).unwrap()).await.unwrap();
    let leader = zk.leader().expect("a leader");
    let follower = (0..3).find(|&i| i != leader).unwrap();
    let addr = |i: usize| zk.host(i).unwrap().addr;
    let lock = path("exec-cut-off-follower");

    let probe = Probe::listen().await;
    let script = format!("{}; while :; do sleep 0.1; done", probe.prelude());
    let on_follower = zk.client_addr(follower).unwrap().to_string();
    let args = ["--session-timeout", "1600ms", "exec", &lock, "--", "bash", "-c", &script];
    let mut child = zoolock_on(&on_follower, &args).spawn().unwrap();
    let mut cmd = probe.accept().await;

    let other_session =
        SessionOptions::new(zk.client_addr(leader).unwrap().to_string()).session_timeout(Duration::from_millis(1600));
    let other_session = Session::connect(other_session).await.unwrap();
    let other = Lock::mutex(&other_session, &lock).unwrap();
    let others: Vec<_> = (0..3).filter(|&i| i != follower).map(addr).collect();
    let cut = Instant::now();
    net.split(&[addr(follower)], &others).unwrap();
    let (gone, held) = tokio::join!(
        async {
            assert!(cmd.gone_within(Duration::from_secs(20)).await, "CMD ran on");
            cut.elapsed()
        },
        async {
            assert!(other.acquire(Acquire::timeout(Duration::from_secs(20))).await.unwrap());
            cut.elapsed()
        }
    );
    eprintln!("after the cut: CMD gone at {gone:?}, the other client held at {held:?}");
    assert!(gone < held, "CMD ran until {gone:?}, the other client held from {held:?}");
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, EXIT_LOST);
    net.heal_all().unwrap();
    other.release().await.unwrap();
    other_session.close().await;
}

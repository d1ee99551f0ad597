//! Ensembles on hosts of their own (network namespaces), cut apart in the kernel.

use std::sync::Arc;
use std::time::{Duration, Instant};
use zk_harness::{Ensemble, Net, Options};

/// A follower cut off from both other servers stops serving once it gives
/// up on the leader (syncLimit × tickTime), and serves again once healed.
#[test]
fn a_follower_cut_off_from_the_others_stops_serving_until_healed() {
    if !zk_harness::net::isolated("a_follower_cut_off_from_the_others_stops_serving_until_healed") {
        return;
    }
    let net = Arc::new(Net::new().unwrap());
    let started = Instant::now();
    let zk = Ensemble::start(3, Options { net: Some(net.clone()), ..Options::default() }).unwrap();
    eprintln!("3 servers on their own hosts in {:?}: {}", started.elapsed(), zk.direct_connect_string());
    let leader = zk.leader().expect("a leader");
    let follower = (0..3).find(|&i| i != leader).unwrap();
    let addr = |i: usize| zk.host(i).unwrap().addr;
    let others: Vec<_> = (0..3).filter(|&i| i != follower).map(addr).collect();
    net.split(&[addr(follower)], &others).unwrap();
    let cut = Instant::now();
    while zk.mntr(follower).is_ok_and(|m| m["zk_server_state"] == "follower") {
        assert!(cut.elapsed() < Duration::from_secs(10), "the follower kept following");
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!("the cut-off follower stopped following after {:?}", cut.elapsed());
    assert_eq!(zk.leader(), Some(leader), "the majority keeps its leader");
    net.heal_all().unwrap();
    zk.wait_ready(Duration::from_secs(30)).unwrap();
    assert_eq!(zk.mntr(follower).unwrap()["zk_server_state"], "follower");
}

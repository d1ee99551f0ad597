//! A 3-server ensemble: leader election, and a client surviving the leader's death.

mod common;

use common::{connect, connect_with, wait_state, PERSISTENT};
use std::time::{Duration, Instant};
use zk_harness::{Ensemble, Options};
use zookeeper_client as zk;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn client_writes_after_the_leader_dies() {
    let started = Instant::now();
    let zk = Ensemble::start(3, Options::default()).unwrap();
    eprintln!("3-server ensemble ready in {:?}", started.elapsed());
    assert_eq!(zk.connect_string().split(',').count(), 3);
    let leader = zk.leader().expect("a leader");
    let states: Vec<String> = (0..3).map(|i| zk.mntr(i).unwrap()["zk_server_state"].clone()).collect();
    assert_eq!(states.iter().filter(|s| *s == "leader").count(), 1, "{states:?}");
    assert_eq!(states.iter().filter(|s| *s == "follower").count(), 2, "{states:?}");

    // A whole proxy partitioned: the client moves to another server, same session.
    let mover = zk::Client::connector()
        .with_session_timeout(Duration::from_secs(8))
        .with_connection_timeout(Duration::from_secs(1));
    let mover = connect_with(mover, &zk.connect_string()).await;
    let session = mover.session_id().0;
    let [first] = zk.servers_of(session).unwrap()[..] else { panic!("one connection expected") };
    let mut states = mover.state_watcher();
    let mut seen = Vec::new();
    zk.partition_all(first).unwrap();
    wait_state(&mut states, zk::SessionState::Disconnected, Duration::from_secs(5), &mut seen).await;
    wait_state(&mut states, zk::SessionState::SyncConnected, Duration::from_secs(8), &mut seen).await;
    zk.heal_all(first).unwrap();
    assert_eq!(mover.session_id().0, session);
    assert!(zk.servers_of(session).unwrap().iter().any(|&s| s != first));
    mover.check_stat("/").await.unwrap();

    // Expiry goes through the leader; the client may sit on a follower.
    let doomed = connect(&zk.connect_string(), Duration::from_secs(4)).await;
    let mut states = doomed.state_watcher();
    let mut seen = Vec::new();
    zk.expire(doomed.session_id().0).unwrap();
    wait_state(&mut states, zk::SessionState::Expired, Duration::from_secs(10), &mut seen).await;
    eprintln!("expire on server {:?}: {seen:?}", zk.servers_of(doomed.session_id().0).unwrap());

    let client = connect(&zk.connect_string(), Duration::from_secs(4)).await;
    let path = zk_harness::unique_path("ensemble");
    client.create(&path, b"1", &PERSISTENT).await.unwrap();

    let killed = Instant::now();
    zk.kill(leader).unwrap();
    assert!(!zk.is_running(leader));
    // A request on the wire when the connection drops fails with ConnectionLoss
    // (and may or may not have been applied); later ones wait for the reconnect.
    let mut losses = 0;
    let write = async {
        loop {
            match client.set_data(&path, b"2", None).await {
                Err(zk::Error::ConnectionLoss) => losses += 1,
                r => return r,
            }
        }
    };
    tokio::time::timeout(Duration::from_secs(20), write).await.expect("write after re-election timed out").unwrap();
    eprintln!("write succeeded {:?} after killing leader {leader} ({losses} ConnectionLoss)", killed.elapsed());
    let new_leader = zk.leader().expect("a new leader");
    assert_ne!(new_leader, leader);

    let restarted = Instant::now();
    zk.restart(leader).unwrap();
    zk.wait_ready(Duration::from_secs(30)).unwrap();
    eprintln!("old leader back as {} in {:?}", zk.mntr(leader).unwrap()["zk_server_state"], restarted.elapsed());
    assert_eq!(client.get_data(&path).await.unwrap().0, b"2");
}

//! The shared standalone server, its proxy, and fault injection per session.

mod common;

use common::{connect, wait_state, EPHEMERAL, PERSISTENT};
use std::time::{Duration, Instant};
use zk::SessionState::{Disconnected, Expired, SyncConnected};
use zookeeper_client as zk;

#[tokio::test]
async fn create_through_the_proxy() {
    let started = Instant::now();
    let zk = zk_harness::shared();
    eprintln!("shared standalone server ready in {:?}", started.elapsed());
    let client = connect(&zk.connect_string(), Duration::from_secs(4)).await;
    let path = zk_harness::unique_path("create");
    client.create(&path, b"hello", &PERSISTENT).await.unwrap();
    assert_eq!(client.get_data(&path).await.unwrap().0, b"hello");
    assert!(zk.sessions().contains(&client.session_id().0));
    assert_eq!(zk.leader(), Some(0));
    let mntr = zk.mntr(0).unwrap();
    assert_eq!(mntr["zk_server_state"], "standalone");
    assert!(mntr["zk_packets_received"].parse::<u64>().unwrap() > 0);
    // Benchmarks bypass the proxy.
    let direct = connect(&zk.direct_connect_string(), Duration::from_secs(4)).await;
    assert!(direct.check_stat(&path).await.unwrap().is_some());
    assert!(!zk.sessions().contains(&direct.session_id().0), "direct sessions are not seen by the proxy");
}

#[tokio::test]
async fn expire_ends_the_session() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(4)).await;
    let path = zk_harness::unique_path("expire");
    client.create(&path, b"", &EPHEMERAL).await.unwrap();
    let mut states = client.state_watcher();
    let mut seen = Vec::new();
    zk.expire(client.session_id().0).unwrap();
    wait_state(&mut states, Expired, Duration::from_secs(10), &mut seen).await;
    eprintln!("states after expire: {seen:?}");
    // The ephemeral node went with the session.
    let other = connect(&zk.connect_string(), Duration::from_secs(4)).await;
    assert_eq!(other.check_stat(&path).await.unwrap(), None);
    assert!(zk.expire(0x1234).is_err(), "an unknown session is an error");
    // Expiring again is harmless.
    zk.expire(client.session_id().0).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn partition_then_heal_keeps_the_session() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let session = client.session_id();
    let path = zk_harness::unique_path("partition");
    client.create(&path, b"", &EPHEMERAL).await.unwrap();
    let mut states = client.state_watcher();
    let mut seen = Vec::new();
    let partitioned = Instant::now();
    zk.partition(session.0).unwrap();
    wait_state(&mut states, Disconnected, Duration::from_secs(5), &mut seen).await;
    let disconnected = partitioned.elapsed();
    zk.heal(session.0).unwrap();
    wait_state(&mut states, SyncConnected, Duration::from_secs(5), &mut seen).await;
    eprintln!(
        "partition: {seen:?}; Disconnected after {disconnected:?}, SyncConnected {:?} after partition",
        partitioned.elapsed()
    );
    assert_eq!(client.session_id(), session);
    assert!(client.check_stat(&path).await.unwrap().is_some(), "the ephemeral node survived");
}

#[tokio::test]
async fn dropped_connections_reconnect() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(4)).await;
    let session = client.session_id();
    let mut states = client.state_watcher();
    let mut seen = Vec::new();
    assert_eq!(zk.drop_connections(session.0).unwrap(), 1);
    wait_state(&mut states, Disconnected, Duration::from_secs(5), &mut seen).await;
    wait_state(&mut states, SyncConnected, Duration::from_secs(5), &mut seen).await;
    eprintln!("drop_connections: {seen:?}");
    assert_eq!(client.session_id(), session);
    client.check_stat("/").await.unwrap();
}

#[test]
fn servers_outlive_the_thread_that_started_them() {
    // PR_SET_PDEATHSIG fires when the forking *thread* exits: the harness
    // forks from its own long-lived thread, so this thread's end is harmless.
    let zk = std::thread::spawn(|| zk_harness::Ensemble::standalone().unwrap()).join().unwrap();
    // The kernel signals children as part of the thread's exit, before join returns.
    assert!(zk.is_running(0));
    assert_eq!(zk.mntr(0).unwrap()["zk_server_state"], "standalone");
    let log = zk.log_path(0).unwrap();
    let dir = zk.data_dir(0).unwrap().to_path_buf();
    assert!(log.starts_with(&dir));
    drop(zk);
    assert!(!dir.exists(), "dropping the ensemble removes its directories");
}

//! Request-level faults against the real server, seen by zookeeper-client.

mod common;

use common::{connect, wait_state, PERSISTENT};
use std::time::Duration;
use zk::SessionState::SyncConnected;
use zk_harness::{FaultState, Landing, Op, Select};
use zookeeper_client as zk;

const WAIT: Duration = Duration::from_secs(10);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropped_create_reply_is_a_connection_loss_for_an_applied_create() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let session = client.session_id();
    let path = zk_harness::unique_path("drop-reply");
    let fault = zk.drop_reply(Select::session(session.0).op(Op::Create2).path(&path)).unwrap();
    assert_eq!(zk.fault(fault).unwrap().state, FaultState::Armed);

    let lost = client.create(&path, b"", &PERSISTENT).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    let report = zk.wait_fault(fault, FaultState::Fired, WAIT).unwrap();
    let picked = report.request.unwrap();
    assert_eq!((picked.op, picked.path.as_deref()), (15, Some(path.as_str())));
    assert_eq!(report.reply.unwrap().1, 0, "the server applied the create");
    assert!(report.fired_after.is_some());

    // Same session, new connection: the node is there.
    assert!(client.check_stat(&path).await.unwrap().is_some());
    assert_eq!(client.session_id(), session);
    // It fired once: the next create goes through.
    client.create(&format!("{path}/child"), b"", &PERSISTENT).await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_picks_by_op_path_prefix_and_occurrence() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let session = client.session_id().0;
    let root = zk_harness::unique_path("select");
    let (a, b) = (format!("{root}/a"), format!("{root}/b"));
    for p in [&root, &a, &b] {
        client.create(p, b"", &PERSISTENT).await.unwrap();
    }
    let fault = zk.drop_reply(Select::session(session).op(Op::GetData).path(&b).nth(2)).unwrap();
    client.get_data(&a).await.unwrap(); // another path
    client.get_data(&b).await.unwrap(); // 1st match
    client.check_stat(&b).await.unwrap(); // another op
    assert_eq!(zk.fault(fault).unwrap().state, FaultState::Armed);
    assert_eq!(
        client.get_data(&b).await.unwrap_err(), // 2nd match
        zk::Error::ConnectionLoss
    );
    let report = zk.wait_fault(fault, FaultState::Fired, WAIT).unwrap();
    assert_eq!(report.request.unwrap().op, Op::GetData.code());
    client.get_data(&b).await.unwrap();

    // Bad selections are errors.
    assert!(zk.drop_reply(Select::session(0x1234)).is_err(), "unknown session");
    assert!(zk.drop_reply(Select::session(session).nth(0)).is_err());
    assert!(zk.drop_reply(Select::any()).is_err(), "no session");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disarmed_fault_never_fires() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let path = zk_harness::unique_path("disarm");
    let fault = zk.drop_reply(Select::session(client.session_id().0).op(Op::Create2)).unwrap();
    assert_eq!(zk.disarm(fault).unwrap().state, FaultState::Disarmed);
    client.create(&path, b"", &PERSISTENT).await.unwrap();
    let err = zk.wait_fault(fault, FaultState::Fired, WAIT).unwrap_err().to_string();
    assert!(err.contains("disarmed"), "{err}");
    assert!(zk.fault(zk_harness::FaultId(u64::MAX)).is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_create_lands_after_a_listing_on_the_new_connection() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let session = client.session_id();
    let root = zk_harness::unique_path("land-late");
    let held = format!("{root}/held");
    client.create(&root, b"", &PERSISTENT).await.unwrap();
    let fault = zk
        .land_late(
            Select::session(session.0).op(Op::Create2).path(&held),
            Landing::After(Select::any().op(Op::GetChildren)),
        )
        .unwrap();

    let mut states = client.state_watcher();
    let lost = client.create(&held, b"", &PERSISTENT).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    let report = zk.wait_fault(fault, FaultState::Held, WAIT).unwrap();
    assert_eq!(report.state, FaultState::Held);
    wait_state(&mut states, SyncConnected, WAIT, &mut Vec::new()).await;

    // The held create lands right after this listing, on the new connection.
    let first = client.list_children(&root).await.unwrap();
    assert!(first.is_empty(), "{first:?}");
    let report = zk.wait_fault(fault, FaultState::Fired, WAIT).unwrap();
    assert_eq!(report.reply.unwrap().1, 0, "the held create succeeded");
    assert_eq!(client.list_children(&root).await.unwrap(), ["held"]);

    // The swallowed reply did not confuse the client: same session, and no
    // reconnect since the one after the hold.
    client.create(&format!("{root}/after"), b"", &PERSISTENT).await.unwrap();
    assert_eq!(client.session_id(), session);
    assert!(
        tokio::time::timeout(Duration::ZERO, states.changed()).await.is_err(),
        "the client's connection changed: {:?}",
        states.state()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_disarmed_held_request_never_lands() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let path = zk_harness::unique_path("never-lands");
    let fault =
        zk.land_late(Select::session(client.session_id().0).op(Op::Create2), Landing::Before(Select::any())).unwrap();
    let lost = client.create(&path, b"", &PERSISTENT).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    zk.wait_fault(fault, FaultState::Held, WAIT).unwrap();
    assert_eq!(zk.disarm(fault).unwrap().state, FaultState::Disarmed);
    assert_eq!(client.check_stat(&path).await.unwrap(), None);
    assert_eq!(client.check_stat(&path).await.unwrap(), None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_reset_before_its_reply_is_a_connection_loss_for_an_applied_delete() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let session = client.session_id();
    let path = zk_harness::unique_path("reset-before-reply");
    client.create(&path, b"", &PERSISTENT).await.unwrap();
    let fault = zk.reset_before_reply(Select::session(session.0).op(Op::Delete).path(&path)).unwrap();
    let lost = client.delete(&path, None).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    let report = zk.wait_fault(fault, FaultState::Fired, WAIT).unwrap();
    assert_eq!(report.request.unwrap().op, Op::Delete.code());
    assert_eq!(report.reply.map(|(_, err)| err), Some(0), "the server applied the delete");
    // The proxy held the reconnect until the server answered the delete.
    assert_eq!(client.check_stat(&path).await.unwrap(), None);
    assert_eq!(client.session_id(), session);
}

/// The server drops a request it has not read yet when the session's
/// reconnect closes the old connection: the proxy holds the reconnect until
/// the reply. Many rounds, as one in a hundred lost the delete without that.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_delete_reset_before_its_reply_is_applied_before_the_session_reconnects() {
    let zk = zk_harness::shared();
    let client = connect(&zk.connect_string(), Duration::from_secs(6)).await;
    let session = client.session_id();
    let base = zk_harness::unique_path("reset-before-reply-rounds");
    client.create(&base, b"", &PERSISTENT).await.unwrap();
    for round in 0..100 {
        let path = format!("{base}/{round}");
        client.create(&path, b"", &PERSISTENT).await.unwrap();
        let fault = zk.reset_before_reply(Select::session(session.0).op(Op::Delete).path(&path)).unwrap();
        assert_eq!(client.delete(&path, None).await.unwrap_err(), zk::Error::ConnectionLoss);
        let seen = client.check_stat(&path).await.unwrap();
        assert_eq!(seen, None, "round {round}: the reconnected session still sees {path}: {:?}", zk.fault(fault));
        let report = zk.wait_fault(fault, FaultState::Fired, WAIT).unwrap();
        assert_eq!(report.reply.map(|(_, err)| err), Some(0), "round {round}: {report:?}");
    }
    assert_eq!(client.session_id(), session);
}

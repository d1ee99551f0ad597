//! Curator's LeaderLatch on a real server: one leader at a time, a close
//! that hands over, a term lost to an expiry or a deletion campaigned for
//! again, a close that returns once the node is gone (however many close at
//! once), a drop that leaves no node, and a session closed under a latch.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Error, LeaderLatch};

const LIMIT: Option<Duration> = Some(Duration::from_secs(15));

#[tokio::test(flavor = "multi_thread")]
async fn one_candidate_leads_at_a_time_and_a_close_hands_over() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("latch");
    let (one, two) = (session(&connect).await, session(&connect).await);
    let first = LeaderLatch::new(&one, &path, "first").unwrap();
    let second = LeaderLatch::new(&two, &path, "second").unwrap();
    assert!(children(&raw, &path).await.is_empty(), "nothing before start");
    first.start().unwrap();
    assert!(first.wait(LIMIT).await.unwrap());
    second.start().unwrap();
    queued(&raw, &path, 2).await;
    assert!(!second.wait(Some(Duration::from_millis(300))).await.unwrap(), "the first leads");
    assert!(first.has_leadership() && !second.has_leadership());
    assert!(matches!(first.start(), Err(Error::InvalidArgument(_))), "started twice");

    first.close().await;
    assert!(!first.has_leadership());
    assert!(second.wait(LIMIT).await.unwrap());
    assert!(second.fencing_token() > first.fencing_token());
    assert_eq!(queued(&raw, &path, 1).await.len(), 1, "the first's node went with its close");
    assert!(matches!(first.wait(None).await, Err(Error::Closed)));
    assert!(matches!(first.start(), Err(Error::Closed)));
    second.close().await;
    second.close().await;
    queued(&raw, &path, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_term_lost_to_an_expiry_or_a_deletion_is_campaigned_for_again() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("latch-again");
    let session = session(&connect).await;
    let latch = LeaderLatch::new(&session, &path, "worker").unwrap();
    latch.start().unwrap();
    assert!(latch.wait(LIMIT).await.unwrap());
    let mut leading = latch.subscribe();
    let first = latch.fencing_token().unwrap();

    expire(&session).await;
    let regained = tokio::time::timeout(LIMIT.unwrap(), leading.wait_for(|t| t.is_some_and(|t| t > first)));
    let second = regained.await.expect("leads again on the next session").unwrap().unwrap();

    let node = queued(&raw, &path, 1).await.remove(0);
    raw.delete(&format!("{path}/{node}"), None).await.unwrap();
    let regained = tokio::time::timeout(LIMIT.unwrap(), leading.wait_for(|t| t.is_some_and(|t| t > second)));
    regained.await.expect("leads again after its node was deleted").unwrap();
    assert!(latch.has_leadership());
    latch.close().await;
    queued(&raw, &path, 0).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_waiting_candidate_closed_or_dropped_leaves_no_node() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("latch-waiting");
    let (one, two) = (session(&connect).await, session(&connect).await);
    let leader = LeaderLatch::new(&one, &path, "leader").unwrap();
    leader.start().unwrap();
    assert!(leader.wait(LIMIT).await.unwrap());

    let waiting = LeaderLatch::new(&two, &path, "waiting").unwrap();
    waiting.start().unwrap();
    queued(&raw, &path, 2).await;
    let wait = tokio::spawn({
        let waiting = waiting.clone();
        async move { waiting.wait(None).await }
    });
    waiting.close().await;
    assert_eq!(queued(&raw, &path, 1).await.len(), 1, "closed: its node removed");
    assert!(matches!(wait.await.unwrap(), Err(Error::Closed)), "a wait ends with the close");

    let dropped = LeaderLatch::new(&two, &path, "dropped").unwrap();
    dropped.start().unwrap();
    queued(&raw, &path, 2).await;
    drop(dropped);
    queued(&raw, &path, 1).await;
    assert!(leader.has_leadership());
    drop(leader);
    queued(&raw, &path, 0).await;
}

/// A close returns once the node is gone, read at once (not waited for):
/// a waiting candidate's `lead` is cancelled and removes its node before
/// the close returns, and a second close at the same time returns after
/// the first. Rounds, because the race lost a node one time in three.
#[tokio::test(flavor = "multi_thread")]
async fn a_close_returns_once_the_node_is_gone() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("latch-close");
    let (one, two) = (session(&connect).await, session(&connect).await);
    let leader = LeaderLatch::new(&one, &path, "leader").unwrap();
    leader.start().unwrap();
    assert!(leader.wait(LIMIT).await.unwrap());
    for round in 0..10 {
        let waiting = LeaderLatch::new(&two, &path, format!("waiting-{round}")).unwrap();
        waiting.start().unwrap();
        if round % 2 == 0 {
            queued(&raw, &path, 2).await;
        }
        let (first, second) = (waiting.clone(), waiting.clone());
        let closes = tokio::spawn(async move { first.close().await });
        second.close().await;
        assert!(children(&raw, &path).await.len() == 1, "round {round}: the second close returned with the node there");
        closes.await.unwrap();
        assert!(children(&raw, &path).await.len() == 1, "round {round}: the first close returned with the node there");
    }
    leader.close().await;
    assert!(children(&raw, &path).await.is_empty(), "the leader's close returned with its node there");
}

/// Its session closed under it, the latch's candidacy is over: a wait says
/// so instead of waiting for ever, and it does not start again.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_closed_under_a_latch_ends_its_waits() {
    let connect = shared_server();
    let path = unique_path("latch-session-closed");
    let (one, two) = (session(&connect).await, session(&connect).await);
    let leader = LeaderLatch::new(&one, &path, "leader").unwrap();
    leader.start().unwrap();
    assert!(leader.wait(LIMIT).await.unwrap());
    let waiting = LeaderLatch::new(&two, &path, "waiting").unwrap();
    waiting.start().unwrap();
    let wait = tokio::spawn({
        let waiting = waiting.clone();
        async move { waiting.wait(None).await }
    });
    two.close().await;
    let ended = tokio::time::timeout(LIMIT.unwrap(), wait).await.expect("the wait ended").unwrap();
    assert!(matches!(ended, Err(Error::Closed)), "{ended:?}");
    assert!(matches!(waiting.start(), Err(Error::Closed)));
    one.close().await;
    assert!(matches!(leader.wait(LIMIT).await, Err(Error::Closed)));
    assert!(!leader.has_leadership());
}

/// A leader cut off from the server: it stops leading (its confirmation
/// lapses) before its session can expire and another candidate lead; when
/// the partition heals, it campaigns again behind the new leader.
#[tokio::test(flavor = "multi_thread")]
async fn a_partitioned_leader_stops_leading_before_another_leads() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("latch-partition");
    let (one, two) = (session(&connect).await, session(&connect).await);
    let leader = LeaderLatch::new(&one, &path, "leader").unwrap();
    leader.start().unwrap();
    assert!(leader.wait(LIMIT).await.unwrap());
    let follower = LeaderLatch::new(&two, &path, "follower").unwrap();
    follower.start().unwrap();
    queued(&raw, &path, 2).await;

    let cut = one.status().session_id;
    inject(move || harness().partition(cut).unwrap()).await;
    let mut leading = leader.subscribe();
    tokio::time::timeout(LIMIT.unwrap(), leading.wait_for(Option::is_none)).await.expect("stops leading").unwrap();
    assert!(follower.wait(Some(Duration::from_secs(30))).await.unwrap(), "leads once the cut-off session expired");
    assert!(!leader.has_leadership(), "two leaders");
    inject(move || harness().heal(cut).unwrap()).await;

    queued(&raw, &path, 2).await;
    assert!(!leader.has_leadership());
    follower.close().await;
    assert!(leader.wait(LIMIT).await.unwrap(), "leads again on its next session");
    leader.close().await;
    assert!(children(&raw, &path).await.is_empty());
}

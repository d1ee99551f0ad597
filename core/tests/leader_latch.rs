//! Curator's LeaderLatch on a real server: one leader at a time, a close
//! that hands over, a term lost to an expiry or a deletion campaigned for
//! again, and a close or drop that leaves no node.

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

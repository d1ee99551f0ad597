//! kazoo's Barrier and DoubleBarrier on a real server, and what they do
//! across a lost connection and a session expiry.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Barrier, DoubleBarrier, Error};

#[tokio::test(flavor = "multi_thread")]
async fn a_barrier_holds_waiters_until_it_is_removed() {
    let connect = shared_server();
    let path = unique_path("barrier");
    let (s1, s2) = (session(&connect).await, session(&connect).await);
    let barrier = Barrier::new(&s1, &path).unwrap();
    assert!(barrier.wait(None).await.unwrap(), "no node: no barrier");
    barrier.create().await.unwrap();
    barrier.create().await.unwrap();
    assert!(!barrier.wait(Some(Duration::ZERO)).await.unwrap(), "up: wait(0) looks once");
    assert!(!barrier.wait(Some(Duration::from_millis(100))).await.unwrap());

    let waiter = Barrier::new(&s2, &path).unwrap();
    let waiting = tokio::spawn(async move { waiter.wait(None).await });
    assert!(barrier.remove().await.unwrap());
    assert!(waiting.await.unwrap().unwrap());
    assert!(!barrier.remove().await.unwrap(), "removed already");
    assert!(matches!(Barrier::new(&s1, "relative"), Err(Error::InvalidPath { .. })));
}

/// kazoo's `wait` keeps its watch across a lost connection, but an expiry
/// resets it without setting the event: kazoo then waits out its timeout
/// (or forever) although the barrier is gone. zoolock's looks again.
#[tokio::test(flavor = "multi_thread")]
async fn a_waiter_sees_the_barrier_go_across_a_partition_and_an_expiry() {
    let connect = shared_server();
    let path = unique_path("barrier-faults");
    let (waiting_session, other) = (session(&connect).await, session(&connect).await);
    let barrier = Barrier::new(&other, &path).unwrap();

    barrier.create().await.unwrap();
    let waiter = Barrier::new(&waiting_session, &path).unwrap();
    let waiting = tokio::spawn({
        let waiter = waiter.clone();
        async move { waiter.wait(None).await }
    });
    let id = waiting_session.status().session_id;
    watched_by(&path, id).await;
    inject(move || harness().partition(id).unwrap()).await;
    assert!(barrier.remove().await.unwrap());
    inject(move || harness().heal(id).unwrap()).await;
    assert!(tokio::time::timeout(Duration::from_secs(15), waiting)
        .await
        .expect("woken after the heal")
        .unwrap()
        .unwrap());

    barrier.create().await.unwrap();
    let waiting = tokio::spawn(async move { waiter.wait(None).await });
    watched_by(&path, id).await;
    expire(&waiting_session).await;
    assert!(barrier.remove().await.unwrap());
    assert!(tokio::time::timeout(Duration::from_secs(15), waiting)
        .await
        .expect("woken after the expiry")
        .unwrap()
        .unwrap());
}

#[tokio::test(flavor = "multi_thread")]
async fn members_enter_together_and_leave_together() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("double-barrier");
    let sessions = [session(&connect).await, session(&connect).await, session(&connect).await];
    let members: Vec<DoubleBarrier> =
        sessions.iter().enumerate().map(|(i, s)| DoubleBarrier::new(s, &path, 3, format!("m{i}")).unwrap()).collect();
    assert!(!members[0].participating());

    let entering: Vec<_> = members[..2].iter().cloned().map(|m| tokio::spawn(async move { m.enter().await })).collect();
    until_children(&raw, &path, "two members", |c| c.len() == 2).await;
    assert!(entering.iter().all(|e| !e.is_finished()), "two of three are not let in");
    members[2].enter().await.unwrap();
    for entered in entering {
        entered.await.unwrap().unwrap();
    }
    assert!(members.iter().all(DoubleBarrier::participating));
    let mut nodes = children(&raw, &path).await;
    nodes.sort();
    let mut expected: Vec<String> = members.iter().map(|m| m.node_name().to_owned()).collect();
    expected.push("ready".into());
    expected.sort();
    assert_eq!(nodes, expected, "kazoo's layout: a node per member and the ready node");
    assert_eq!(raw.get_data(&members[1].create_path()).await.unwrap().0, b"m1");

    let leaving: Vec<_> = members[..2].iter().cloned().map(|m| tokio::spawn(async move { m.leave().await })).collect();
    until_children(&raw, &path, "the others to go", |c| c.len() <= 2).await;
    assert!(leaving.iter().all(|l| !l.is_finished()), "no one leaves before everyone does");
    members[2].leave().await.unwrap();
    for left in leaving {
        left.await.unwrap().unwrap();
    }
    assert!(members.iter().all(|m| !m.participating()));
    assert!(children(&raw, &path).await.is_empty());
    assert!(matches!(DoubleBarrier::new(&sessions[0], &path, 0, ""), Err(Error::InvalidArgument(_))));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_enter_given_up_leaves_no_member() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("double-barrier-cancel");
    let session = session(&connect).await;
    let member = DoubleBarrier::new(&session, &path, 2, "alone").unwrap();
    let entering = tokio::spawn({
        let member = member.clone();
        async move { member.enter().await }
    });
    until_children(&raw, &path, "the member", |c| c.len() == 1).await;
    entering.abort();
    until_children(&raw, &path, "the member to go", |c| c.is_empty()).await;
    assert!(!member.participating());
}

/// kazoo's enter waits for the ready node with a watch that an expiry
/// resets without waking it: it hangs with no node of its own. zoolock's
/// enters again on the next session, and a partition only delays it.
#[tokio::test(flavor = "multi_thread")]
async fn an_entering_member_survives_an_expiry_and_a_partition() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("double-barrier-faults");
    let (s1, s2, s3) = (session(&connect).await, session(&connect).await, session(&connect).await);
    let first = DoubleBarrier::new(&s1, &path, 3, "first").unwrap();
    let entering = tokio::spawn({
        let first = first.clone();
        async move { first.enter().await }
    });
    let node = until_children(&raw, &path, "the first member", |c| c.len() == 1).await.remove(0);
    let owner = raw.check_stat(&format!("{path}/{node}")).await.unwrap().unwrap().ephemeral_owner;
    expire(&s1).await;
    // Its node goes with the session and comes back with the next one.
    node_of_next_session(&raw, &first.create_path(), owner).await;

    let second = DoubleBarrier::new(&s2, &path, 3, "second").unwrap();
    let entering_second = tokio::spawn({
        let second = second.clone();
        async move { second.enter().await }
    });
    until_children(&raw, &path, "two members", |c| c.len() == 2).await;
    let id = s2.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    let third = DoubleBarrier::new(&s3, &path, 3, "third").unwrap();
    third.enter().await.unwrap();
    entering.await.unwrap().unwrap();
    inject(move || harness().heal(id).unwrap()).await;
    entering_second.await.unwrap().unwrap();

    // Leaving: the member whose session expires is gone, and the others go on.
    let leaving: Vec<_> =
        [first.clone(), second.clone()].into_iter().map(|m| tokio::spawn(async move { m.leave().await })).collect();
    until_children(&raw, &path, "the ready node to go", |c| !c.contains(&"ready".to_string())).await;
    expire(&s3).await;
    for left in leaving {
        tokio::time::timeout(Duration::from_secs(15), left).await.expect("left").unwrap().unwrap();
    }
    third.leave().await.unwrap();
    assert!(children(&raw, &path).await.is_empty());
}

/// A timed wait on a partitioned session: the requests that would look at
/// the barrier get no answer, and the wait still ends by its timeout. The
/// bound asserted is a generous one on a hang, not a speed.
#[tokio::test(flavor = "multi_thread")]
async fn a_timed_wait_ends_by_its_timeout_during_a_partition() {
    let connect = shared_server();
    let session = session(&connect).await;
    let barrier = Barrier::new(&session, &unique_path("barrier-partition")).unwrap();
    barrier.create().await.unwrap();
    let id = session.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    let started = std::time::Instant::now();
    assert!(!barrier.wait(Some(Duration::from_millis(500))).await.unwrap());
    let took = started.elapsed();
    inject(move || harness().heal(id).unwrap()).await;
    assert!(took < Duration::from_secs(3), "a 500 ms wait took {took:?}");
}

/// A node of this member's name made by another session is not this
/// member's: the enter waits for it to go and makes its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_member_node_of_another_session_is_not_taken_as_ours() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let (session, intruder) = (session(&connect).await, session(&connect).await);
    let member = DoubleBarrier::new(&session, &unique_path("double-barrier-intruder"), 1, "m0").unwrap();
    let made = zoolock::Create::default().ephemeral().makepath();
    intruder.create(&member.create_path(), Some(b"intruder"), &made).await.unwrap();
    let entering = tokio::spawn({
        let member = member.clone();
        async move { member.enter().await }
    });
    // Waiting for the other session's node to go.
    watched_by(&member.create_path(), session.status().session_id).await;
    intruder.close().await;
    entering.await.unwrap().unwrap();
    let stat = raw.check_stat(&member.create_path()).await.unwrap().expect("the member's node");
    assert_eq!(stat.ephemeral_owner, session.status().session_id);
    member.leave().await.unwrap();
}

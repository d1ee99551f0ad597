//! kazoo's Counter: the value as the node's data (kazoo's text or Curator's
//! four bytes), changes by a version-conditional write tried again on
//! contention, and a change whose reply was lost never made twice.

mod common;

use common::*;
use zk_harness::{FaultState, Landing, Op, Select};
use zoolock::{Counter, CounterChange, CounterFormat, CounterValue, Error, ErrorKind, SessionState};

#[tokio::test(flavor = "multi_thread")]
async fn values_are_kazoos_text_and_changes_tell_the_value_before_and_after() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter");
    let counter = Counter::new(&session, &path, 0).unwrap();
    assert_eq!(counter.value().await.unwrap(), CounterValue::Int(0));
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"", "an empty node reads as the default");
    let change = counter.add(2).await.unwrap();
    assert_eq!(change, CounterChange { pre_value: CounterValue::Int(0), post_value: CounterValue::Int(2) });
    let change = counter.subtract(5).await.unwrap();
    assert_eq!(change.post_value, CounterValue::Int(-3));
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"-3");

    let floats = Counter::new(&session, &format!("{path}-float"), 1.0).unwrap();
    assert_eq!(floats.add(1.5).await.unwrap().post_value, CounterValue::Float(2.5));
    assert_eq!(raw.get_data(&format!("{path}-float")).await.unwrap().0, b"2.5");
    assert_eq!(floats.add(0.5).await.unwrap().post_value, CounterValue::Float(3.0));
    assert_eq!(raw.get_data(&format!("{path}-float")).await.unwrap().0, b"3.0");

    // A value another client wrote, with the spaces Python's int() allows.
    raw.set_data(&path, b" 41\n", None).await.unwrap();
    assert_eq!(counter.add(1).await.unwrap().post_value, CounterValue::Int(42));
}

#[tokio::test(flavor = "multi_thread")]
async fn curators_format_is_four_big_endian_bytes() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-curator");
    let counter = Counter::with_format(&session, &path, CounterValue::Int(0), CounterFormat::Curator).unwrap();
    counter.add(258).await.unwrap();
    assert_eq!(raw.get_data(&path).await.unwrap().0, [0, 0, 1, 2]);
    counter.subtract(259).await.unwrap();
    assert_eq!(raw.get_data(&path).await.unwrap().0, [0xff, 0xff, 0xff, 0xff]);
    assert_eq!(counter.value().await.unwrap(), CounterValue::Int(-1));
    raw.set_data(&path, &[0x7f, 0xff, 0xff, 0xff], None).await.unwrap();
    let err = counter.add(1).await.unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "past 32 bits: {err:?}");
    assert!(Counter::with_format(&session, &path, CounterValue::Float(0.0), CounterFormat::Curator).is_err());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_of_another_type_or_unreadable_data_is_refused() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-bad");
    let counter = Counter::new(&session, &path, 0).unwrap();
    assert!(matches!(counter.add(1.5).await, Err(Error::InvalidArgument(_))));
    counter.value().await.unwrap();
    raw.set_data(&path, b"seven", None).await.unwrap();
    let err = counter.add(1).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::BadData, "{err:?}");
    assert!(err.to_string().contains("seven"), "{err}");
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"seven", "nothing written");
    assert!(matches!(Counter::new(&session, "relative", 0), Err(Error::InvalidPath { .. })));
}

/// Curator's compareAndSet: set only from the value expected, of the
/// counter's type; Curator's format refuses what 32 bits cannot hold.
#[tokio::test(flavor = "multi_thread")]
async fn compare_and_set_sets_only_from_the_value_expected() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-cas");
    let counter = Counter::new(&session, &path, 0).unwrap();
    assert!(counter.compare_and_set(0, 7).await.unwrap());
    assert!(!counter.compare_and_set(0, 9).await.unwrap(), "no longer 0");
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"7");
    assert!(matches!(counter.compare_and_set(7, 1.5).await, Err(Error::InvalidArgument(_))));
    assert!(matches!(counter.compare_and_set(7.0, 1).await, Err(Error::InvalidArgument(_))));
    assert_eq!(counter.value().await.unwrap(), CounterValue::Int(7));

    let curator = Counter::with_format(&session, &format!("{path}-curator"), 0.into(), CounterFormat::Curator).unwrap();
    assert!(matches!(curator.compare_and_set(0, 1i64 << 31).await, Err(Error::InvalidArgument(_))));
    assert!(curator.compare_and_set(0, -2).await.unwrap());
    assert_eq!(raw.get_data(&format!("{path}-curator")).await.unwrap().0, [0xff, 0xff, 0xff, 0xfe]);
}

/// Eight clients set from 0 at once: the conditional write lets exactly one in.
#[tokio::test(flavor = "multi_thread")]
async fn of_racing_compare_and_sets_from_one_value_exactly_one_wins() {
    let connect = shared_server();
    let path = unique_path("counter-cas-race");
    let sessions = [session(&connect).await, session(&connect).await];
    let mut tasks = Vec::new();
    for i in 1..=8i64 {
        let counter = Counter::new(&sessions[i as usize % 2], &path, 0).unwrap();
        tasks.push(tokio::spawn(async move { counter.compare_and_set(0, i).await.unwrap().then_some(i) }));
    }
    let mut winners = Vec::new();
    for task in tasks {
        winners.extend(task.await.unwrap());
    }
    assert_eq!(winners.len(), 1, "{winners:?}");
    let value = Counter::new(&sessions[0], &path, 0).unwrap().value().await.unwrap();
    assert_eq!(value, CounterValue::Int(winners[0]));
}

/// A set whose reply was lost is not guessed at: `OutcomeUnknown`, made once.
#[tokio::test(flavor = "multi_thread")]
async fn a_compare_and_set_whose_reply_was_lost_says_it_cannot_tell() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-cas-lost-reply");
    let counter = Counter::new(&session, &path, 0).unwrap();
    counter.value().await.unwrap();
    let id = session.status().session_id;
    let set = Select::session(id).op(Op::SetData).path(path.clone());
    let fault = inject(move || harness().drop_reply(set).unwrap()).await;

    let err = counter.compare_and_set(0, 5).await.unwrap_err();
    let report = inject(move || harness().fault(fault).unwrap()).await;
    assert_eq!(report.state, FaultState::Fired);
    assert!(matches!(err, Error::OutcomeUnknown { .. }), "{err:?}");
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"5", "made once");
}

/// Four clients on two sessions add one 25 times each: the conditional
/// write that loses a race reads again, so none of the 100 is lost.
#[tokio::test(flavor = "multi_thread")]
async fn concurrent_changes_all_count() {
    let connect = shared_server();
    let path = unique_path("counter-race");
    let sessions = [session(&connect).await, session(&connect).await];
    let mut tasks = Vec::new();
    for i in 0..4 {
        let counter = Counter::new(&sessions[i % 2], &path, 0).unwrap();
        tasks.push(tokio::spawn(async move {
            for _ in 0..25 {
                counter.add(1).await.unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(Counter::new(&sessions[0], &path, 0).unwrap().value().await.unwrap(), CounterValue::Int(100));
}

/// The write is made, its reply lost: kazoo would read and add again (the
/// value counted twice). Sent again as it was, it finds the version moved
/// on, and the change cannot tell whose write that was: it says so.
#[tokio::test(flavor = "multi_thread")]
async fn a_change_whose_reply_was_lost_is_never_made_twice() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-lost-reply");
    let counter = Counter::new(&session, &path, 0).unwrap();
    counter.add(10).await.unwrap();
    let id = session.status().session_id;
    let set = Select::session(id).op(Op::SetData).path(path.clone());
    let fault = inject(move || harness().drop_reply(set).unwrap()).await;

    let err = counter.add(1).await.unwrap_err();
    let report = inject(move || harness().fault(fault).unwrap()).await;
    assert_eq!(report.state, FaultState::Fired);
    assert!(matches!(err, Error::OutcomeUnknown { .. }), "{err:?}");
    // Its own kind: retry logic on kind() and on is_retryable() agree not to send it again.
    assert_eq!((err.kind(), err.is_retryable()), (ErrorKind::OutcomeUnknown, false));
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"11", "made once");
}

/// The write never reached the server: sent again, it is made, once.
#[tokio::test(flavor = "multi_thread")]
async fn a_change_lost_on_the_way_is_sent_again_and_made_once() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-lost-request");
    let counter = Counter::new(&session, &path, 0).unwrap();
    counter.add(10).await.unwrap();
    let id = session.status().session_id;
    let set = Select::session(id).op(Op::SetData).path(path.clone());
    // Held back until a create2 that never comes: it never lands.
    let never = Landing::After(Select::any().op(Op::Create2).path("/never"));
    let fault = inject(move || harness().land_late(set, never).unwrap()).await;

    let change = counter.add(1).await.unwrap();
    assert_eq!(change.post_value, CounterValue::Int(11));
    assert_eq!(inject(move || harness().fault(fault).unwrap()).await.state, FaultState::Held);
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"11");
    inject(move || harness().disarm(fault)).await.ok();
}

/// kazoo's retry: a change made while the connection is down goes through
/// once it is back; one made across an expiry goes through on the new session.
#[tokio::test(flavor = "multi_thread")]
async fn changes_wait_out_a_short_partition_and_survive_an_expiry() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-faults");
    let counter = Counter::new(&session, &path, 0).unwrap();
    counter.add(1).await.unwrap();
    let id = session.status().session_id;

    inject(move || harness().partition(id).unwrap()).await;
    let mut status = session.subscribe();
    status.wait_for(|s| s.state == SessionState::Suspended).await.unwrap();
    let pending = tokio::spawn({
        let counter = counter.clone();
        async move { counter.add(1).await }
    });
    inject(move || harness().heal(id).unwrap()).await;
    assert_eq!(pending.await.unwrap().unwrap().post_value, CounterValue::Int(2));

    inject(move || harness().expire(id).unwrap()).await;
    assert_eq!(counter.add(1).await.unwrap().post_value, CounterValue::Int(3));
    assert_eq!(session.status().generation, 2, "on the new session");
    assert_eq!(raw.get_data(&path).await.unwrap().0, b"3");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_deleted_counter_starts_again_from_its_default() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("counter-deleted");
    let counter = Counter::new(&session, &path, 5).unwrap();
    counter.add(1).await.unwrap();
    raw.delete(&path, None).await.unwrap();
    assert_eq!(counter.add(1).await.unwrap(), CounterChange { pre_value: 5.into(), post_value: 6.into() });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_node_with_null_data_reads_as_the_default() {
    // kazoo's `create(path, None)` (or an operator's `create path` in zkCli) stores null data.
    let session = session(&shared_server()).await;
    let path = unique_path("counter-null");
    session.create(&path, None, &zoolock::Create::default().makepath()).await.unwrap();
    assert_eq!(session.get(&path).await.unwrap().0, None);
    let counter = Counter::new(&session, &path, 7).unwrap();
    assert_eq!(counter.value().await.unwrap(), CounterValue::Int(7));
    assert_eq!(counter.add(1).await.unwrap().post_value, CounterValue::Int(8));
    assert_eq!(session.get(&path).await.unwrap().0.as_deref(), Some(&b"8"[..]));
}

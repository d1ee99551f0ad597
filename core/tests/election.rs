//! Leader election on the core's lock: one leader at a time, handoff on
//! resign, drop and expiry, cancel, contenders, fenced writes of a term.

mod common;

use std::time::Duration;

use common::*;
use zoolock::{Create, Election, Error, LockState, LostReason};

fn spawn_lead(election: &Election) -> tokio::task::JoinHandle<zoolock::Result<zoolock::Leadership>> {
    let election = election.clone();
    tokio::spawn(async move { election.lead().await })
}

/// Expires `session` on the servers and waits until `term` is told it is lost.
async fn expire_and_wait_lost(session: &zoolock::Session, term: &zoolock::Leadership) {
    let mut states = term.subscribe();
    let id = session.status().session_id;
    inject(move || zk_harness::shared().expire(id).unwrap()).await;
    tokio::time::timeout(Duration::from_secs(20), states.wait_for(|s| matches!(s, LockState::Lost(_))))
        .await
        .expect("told of the loss")
        .unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn leadership_passes_to_the_next_candidate_when_the_leader_resigns() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("election");
    let (a, b) = (session(&connect).await, session(&connect).await);
    let first = Election::new(&a, &path, "a").unwrap();
    let second = Election::new(&b, &path, "b").unwrap();
    let leading = first.lead().await.unwrap();
    assert!(leading.is_leader());
    let pending = spawn_lead(&second);
    queued(&raw, &path, 2).await;
    assert_eq!(second.contenders().await.unwrap(), ["a", "b"]);
    assert!(!pending.is_finished());

    let token = leading.fencing_token();
    assert!(leading.resign().await.unwrap());
    let next = pending.await.unwrap().unwrap();
    assert!(next.is_leader());
    assert!(next.fencing_token() > token, "a later term has a greater token");
    assert_eq!(first.contenders().await.unwrap(), ["b"]);
    // Dropping the term resigns too.
    let again = spawn_lead(&first);
    queued(&raw, &path, 2).await;
    drop(next);
    let third = again.await.unwrap().unwrap();
    assert!(third.fencing_token() > token);
    third.resign().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_withdraws_a_waiting_candidate() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("election-cancel");
    let (a, b) = (session(&connect).await, session(&connect).await);
    let leader = Election::new(&a, &path, "leader").unwrap();
    let term = leader.lead().await.unwrap();
    let candidate = Election::new(&b, &path, "candidate").unwrap();
    let pending = spawn_lead(&candidate);
    queued(&raw, &path, 2).await;
    candidate.cancel();
    assert!(matches!(pending.await.unwrap(), Err(Error::Cancelled { .. })));
    assert_eq!(leader.contenders().await.unwrap(), ["leader"]);
    term.resign().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn lead_within_gives_up_when_another_leads_and_leaves_no_candidacy() {
    let connect = shared_server();
    let path = unique_path("election-within");
    let (a, b) = (session(&connect).await, session(&connect).await);
    let leader = Election::new(&a, &path, "leader").unwrap();
    // Zero is one try, which wins an election nobody leads.
    let term = leader.lead_within(Duration::ZERO).await.unwrap().expect("a free election is won at once");
    let candidate = Election::new(&b, &path, "candidate").unwrap();
    assert!(candidate.lead_within(Duration::from_millis(300)).await.unwrap().is_none());
    assert_eq!(leader.contenders().await.unwrap(), ["leader"]);
    let token = term.fencing_token();
    term.resign().await.unwrap();
    let next = candidate.lead_within(Duration::from_secs(10)).await.unwrap().expect("leads once the leader resigned");
    assert!(next.fencing_token() > token);
    next.resign().await.unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn a_leader_whose_session_expired_learns_its_term_is_over_and_cannot_write() {
    let connect = shared_server();
    let path = unique_path("election-expiry");
    let (a, b) = (session(&connect).await, session(&connect).await);
    let state = format!("{path}-state");
    b.create(&state, Some(b""), &Create::default().makepath()).await.unwrap();
    let first = Election::new(&a, &path, "a").unwrap();
    let term = first.lead().await.unwrap();
    let write = term.fenced().unwrap().set(&state, Some(b"a"), None);
    let pending = spawn_lead(&Election::new(&b, &path, "b").unwrap());

    expire_and_wait_lost(&a, &term).await;
    assert_eq!(term.state(), LockState::Lost(LostReason::SessionExpired));
    assert!(!term.is_leader());
    let next = pending.await.unwrap().unwrap();
    assert!(matches!(write.commit().await, Err(Error::NotHeld { .. })));
    assert!(matches!(term.fenced(), Err(Error::NotHeld { .. })));
    next.fenced().unwrap().set(&state, Some(b"b"), None).commit().await.unwrap();
    assert_eq!(b.get(&state).await.unwrap().0, Some(b"b".to_vec()));
    assert!(!term.resign().await.unwrap(), "nothing to resign");
    next.resign().await.unwrap();
}

/// A resigned term is over for good: `Released` when its candidate's next
/// term is lost, refused for a fenced write, and a second resign is a no-op
/// (what the C ABI's and Python's shared terms rely on).
#[tokio::test(flavor = "multi_thread")]
async fn a_resigned_term_stays_released_whatever_the_candidate_s_next_term_does() {
    let connect = shared_server();
    let path = unique_path("election-resigned");
    let a = session(&connect).await;
    let election = Election::new(&a, &path, "a").unwrap();
    let first = election.lead().await.unwrap();
    assert!(first.resign().await.unwrap());
    assert!(!first.resign().await.unwrap(), "resigned already");
    assert_eq!(first.state(), LockState::Released);
    assert!(matches!(first.fenced(), Err(Error::NotHeld { .. })));
    let second = election.lead().await.unwrap();
    expire_and_wait_lost(&a, &second).await;
    assert_eq!(second.state(), LockState::Lost(LostReason::SessionExpired));
    assert_eq!(first.state(), LockState::Released, "the resigned term is not the lost one");
}

/// A term's listener hears the term, not the lock: the candidate's next
/// term makes the lock `Held` again, which the resigned term's listener
/// hears as `Released`; the next term's listener hears its loss.
#[tokio::test(flavor = "multi_thread")]
async fn a_term_s_listener_hears_its_own_term() {
    let connect = shared_server();
    let path = unique_path("election-listener");
    let a = session(&connect).await;
    let election = Election::new(&a, &path, "a").unwrap();
    let heard = |term: &std::sync::Arc<zoolock::Leadership>| {
        let (tx, rx) = std::sync::mpsc::channel();
        term.add_listener(Box::new(move |state| {
            let _ = tx.send(state);
        }));
        rx
    };
    let first = std::sync::Arc::new(election.lead().await.unwrap());
    let first_heard = heard(&first);
    assert!(first.resign().await.unwrap());
    let second = std::sync::Arc::new(election.lead().await.unwrap());
    let second_heard = heard(&second);
    expire_and_wait_lost(&a, &second).await;
    // One event thread calls both listeners in order: once the second term's
    // loss is heard, so is all the first term heard before it.
    let lost = LockState::Lost(LostReason::SessionExpired);
    let until_lost = |heard: std::sync::mpsc::Receiver<LockState>| {
        let mut states = Vec::new();
        while states.last() != Some(&lost) {
            states.push(heard.recv_timeout(Duration::from_secs(20)).expect("a state"));
        }
        states
    };
    tokio::task::block_in_place(|| {
        let second_states = until_lost(second_heard);
        assert!(!second_states.contains(&LockState::Released), "{second_states:?}");
        let first_states = until_lost(first_heard);
        assert_eq!(first_states[0], LockState::Released, "{first_states:?}");
        assert!(!first_states.contains(&LockState::Held), "the next term is not this one's: {first_states:?}");
    });
}

#[test]
fn run_leads_calls_and_resigns_as_kazoo_s_does() {
    let session = zoolock::Session::connect_blocking(
        zoolock::SessionOptions::new(shared_server()).session_timeout(SESSION_TIMEOUT),
    )
    .unwrap();
    let path = unique_path("election-run");
    let election = Election::new(&session, &path, "runner").unwrap();
    let led = election.run_blocking(|term| (term.is_leader(), election.contenders_blocking().unwrap())).unwrap();
    assert_eq!(led, Some((true, vec!["runner".to_string()])));
    assert!(election.contenders_blocking().unwrap().is_empty(), "resigned after the call");
    assert!(matches!(Election::new(&session, "relative", "x"), Err(Error::InvalidPath { .. })));
    session.close_blocking();
}

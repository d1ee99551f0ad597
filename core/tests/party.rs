//! kazoo's Party and ShallowParty on a real server, and a member across a
//! lost connection and a session expiry.

mod common;

use common::*;
use zoolock::{Error, Party, SessionState};

fn sorted(mut items: Vec<String>) -> Vec<String> {
    items.sort();
    items
}

#[tokio::test(flavor = "multi_thread")]
async fn members_join_and_leave_in_kazoos_layouts() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    for shallow in [false, true] {
        let path = unique_path(if shallow { "shallow-party" } else { "party" });
        let make =
            |id: &str| if shallow { Party::shallow(&session, &path, id) } else { Party::new(&session, &path, id) };
        let parties: Vec<Party> = (0..3).map(|i| make(&format!("p{i}")).unwrap()).collect();
        assert!(parties[0].members().await.unwrap().is_empty());
        assert_eq!(parties[0].len().await.unwrap(), 0);
        for party in &parties {
            party.join().await.unwrap();
            assert!(party.participating());
        }
        assert_eq!(sorted(parties[2].members().await.unwrap()), ["p0", "p1", "p2"]);
        assert_eq!(parties[1].len().await.unwrap(), 3);
        let nodes = children(&raw, &path).await;
        assert!(nodes.contains(&parties[0].node().to_owned()));
        let node = parties[0].node();
        if shallow {
            assert!(node.len() == 35 && node.ends_with("-p0"), "<uuid4 hex>-<identifier>: {node}");
        } else {
            assert!(node.len() == 41 && node.ends_with("__party__"), "<uuid4 hex>__party__: {node}");
            assert_eq!(raw.get_data(&parties[0].create_path()).await.unwrap().0, b"p0");
        }
        assert!(parties[1].leave().await.unwrap());
        assert!(!parties[1].participating());
        assert!(!parties[1].leave().await.unwrap(), "left already");
        assert_eq!(sorted(parties[0].members().await.unwrap()), ["p0", "p2"]);
        for party in &parties {
            party.leave().await.unwrap();
        }
        assert!(children(&raw, &path).await.is_empty());
    }
    let path = unique_path("party-bad");
    assert!(matches!(
        Party::shallow(&session, &path, "a/b"),
        Err(Error::InvalidArgument(_) | Error::InvalidPath { .. })
    ));
}

/// A Party counts only its `__party__` children; a node already at the
/// member's name is taken as its own (kazoo's `test_party_reuse_node`).
#[tokio::test(flavor = "multi_thread")]
async fn a_party_skips_other_children_and_reuses_its_node() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let session = session(&connect).await;
    let path = unique_path("party-reuse");
    let party = Party::new(&session, &path, "p1").unwrap();
    session.create(&format!("{path}/notes"), Some(b""), &zoolock::Create::default().makepath()).await.unwrap();
    session.create(&party.create_path(), Some(b""), &zoolock::Create::default()).await.unwrap();
    party.join().await.unwrap();
    assert!(party.participating());
    assert_eq!(party.len().await.unwrap(), 1);
    assert!(party.leave().await.unwrap());
    assert_eq!(party.len().await.unwrap(), 0);
    assert_eq!(children(&raw, &path).await, ["notes"]);
}

/// kazoo's member node goes with an expired session while `participating`
/// stays true; zoolock's is made again on the next session, until it leaves.
/// A partition shorter than the session timeout changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn a_member_stays_one_across_an_expiry_and_a_partition() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let path = unique_path("party-faults");
    let (session, other) = (session(&connect).await, session(&connect).await);
    let member = Party::new(&session, &path, "stays").unwrap();
    member.join().await.unwrap();
    let owner = raw.check_stat(&member.create_path()).await.unwrap().unwrap().ephemeral_owner;
    expire(&session).await;
    node_of_next_session(&raw, &member.create_path(), owner).await;
    let observer = Party::new(&other, &path, "observer").unwrap();
    assert_eq!(observer.members().await.unwrap(), ["stays"]);

    let id = session.status().session_id;
    inject(move || harness().partition(id).unwrap()).await;
    until_state(&session, SessionState::Suspended).await;
    inject(move || harness().heal(id).unwrap()).await;
    until_state(&session, SessionState::Connected).await;
    assert_eq!(observer.members().await.unwrap(), ["stays"]);
    assert_eq!(raw.check_stat(&member.create_path()).await.unwrap().unwrap().ephemeral_owner, id);

    assert!(member.leave().await.unwrap());
    let generation = session.status().generation;
    expire(&session).await;
    let mut status = session.subscribe();
    status.wait_for(|s| s.generation > generation && s.state == SessionState::Connected).await.unwrap();
    session.exists(&path).await.unwrap();
    assert!(children(&raw, &path).await.is_empty(), "a member that left is not made again");
}

/// A node of this member's name made by another session is not this
/// member's: it goes with that session, so the join waits for it to go and
/// makes its own.
#[tokio::test(flavor = "multi_thread")]
async fn a_member_node_of_another_session_is_not_taken_as_ours() {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let (session, intruder) = (session(&connect).await, session(&connect).await);
    let party = Party::new(&session, &unique_path("party-intruder"), "p1").unwrap();
    let made = zoolock::Create::default().ephemeral().makepath();
    intruder.create(&party.create_path(), Some(b"intruder"), &made).await.unwrap();
    let joining = tokio::spawn({
        let party = party.clone();
        async move { party.join().await }
    });
    // Waiting for the other session's node to go.
    watched_by(&party.create_path(), session.status().session_id).await;
    intruder.close().await;
    joining.await.unwrap().unwrap();
    assert_eq!(party.members().await.unwrap(), ["p1"]);
    let stat = raw.check_stat(&party.create_path()).await.unwrap().expect("the member's node");
    assert_eq!(stat.ephemeral_owner, session.status().session_id);
}

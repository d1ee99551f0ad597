//! Helpers shared by the harness's own tests.
#![allow(dead_code)]

use std::time::Duration;
use zookeeper_client as zk;

pub static PERSISTENT: zk::CreateOptions<'static> = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
pub static EPHEMERAL: zk::CreateOptions<'static> = zk::CreateMode::Ephemeral.with_acls(zk::Acls::anyone_all());

pub async fn connect(connect: &str, session_timeout: Duration) -> zk::Client {
    connect_with(zk::Client::connector().with_session_timeout(session_timeout), connect).await
}

pub async fn connect_with(connector: zk::Connector, connect: &str) -> zk::Client {
    let connecting = connector.connect(connect);
    tokio::time::timeout(Duration::from_secs(20), connecting).await.expect("connect timed out").expect("connect failed")
}

/// Waits (bounded) until the client reports `want`; every state seen on the
/// way is appended to `seen`.
pub async fn wait_state(
    w: &mut zk::StateWatcher,
    want: zk::SessionState,
    within: Duration,
    seen: &mut Vec<zk::SessionState>,
) {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        let state = tokio::time::timeout_at(deadline, w.changed())
            .await
            .unwrap_or_else(|_| panic!("no {want:?} within {within:?}; states seen: {seen:?}"));
        seen.push(state);
        if state == want {
            return;
        }
    }
}

//! Shared pieces of the core's tests: a real ZooKeeper from the harness,
//! sessions with short timeouts, and a raw client to look at the nodes.
#![allow(dead_code)]

use std::future::Future;
use std::io::{Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::timeout;
use zookeeper_client as zk;
use zoolock::{Acquire, Holder, Session, SessionOptions};

pub const SESSION_TIMEOUT: Duration = Duration::from_secs(4);

/// The connect string of the server shared by this test binary.
pub fn shared_server() -> String {
    harness().connect_string()
}

/// The servers shared by this test binary, for the faults a test injects.
pub fn harness() -> &'static zk_harness::Ensemble {
    zk_harness::shared()
}

/// Runs a blocking harness call (a fault, a restart) without stalling the
/// clients under test.
pub async fn inject<T: Send + 'static>(fault: impl FnOnce() -> T + Send + 'static) -> T {
    tokio::task::spawn_blocking(fault).await.unwrap()
}

pub async fn session(connect: &str) -> Session {
    Session::connect(SessionOptions::new(connect).session_timeout(SESSION_TIMEOUT)).await.expect("connect")
}

/// A lock path no other test uses.
pub fn unique_path(name: &str) -> String {
    format!("/zoolock-tests/{name}-{}", uuid_suffix())
}

fn uuid_suffix() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    format!("{}-{nanos}-{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}

/// A plain client for inspecting what the recipes left on the server.
pub async fn raw(connect: &str) -> zk::Client {
    zk::Client::connect(connect).await.expect("raw connect")
}

pub async fn children(raw: &zk::Client, path: &str) -> Vec<String> {
    match raw.list_children(path).await {
        Ok(children) => children,
        Err(zk::Error::NoNode) => Vec::new(),
        Err(e) => panic!("list {path}: {e}"),
    }
}

/// Waits, through child watches, until the children of `path` satisfy
/// `condition`; fails the test after ten seconds.
pub async fn until_children(
    raw: &zk::Client,
    path: &str,
    what: &str,
    condition: impl Fn(&[String]) -> bool,
) -> Vec<String> {
    within_children(raw, path, Duration::from_secs(10), condition)
        .await
        .unwrap_or_else(|| panic!("timed out waiting for {what} on {path}"))
}

/// Waits, through child watches, until the children of `path` satisfy
/// `condition`; `None` after `limit`.
pub async fn within_children(
    raw: &zk::Client,
    path: &str,
    limit: Duration,
    condition: impl Fn(&[String]) -> bool,
) -> Option<Vec<String>> {
    let wait = async {
        loop {
            match raw.list_and_watch_children(path).await {
                Ok((children, watcher)) => {
                    if condition(&children) {
                        return children;
                    }
                    watcher.changed().await;
                }
                Err(zk::Error::NoNode) => {
                    if condition(&[]) {
                        return Vec::new();
                    }
                    let (stat, watcher) = raw.check_and_watch_stat(path).await.expect("watch path");
                    if stat.is_none() {
                        watcher.changed().await;
                    }
                }
                Err(e) => panic!("list {path}: {e}"),
            }
        }
    };
    timeout(limit, wait).await.ok()
}

/// Waits until exactly `n` contenders are queued on `path`.
pub async fn queued(raw: &zk::Client, path: &str, n: usize) -> Vec<String> {
    until_children(raw, path, &format!("{n} nodes"), |c| c.len() == n).await
}

/// Polls `future` once with a waker that does nothing: the test polls again
/// on its own schedule.
pub fn poll_once<F: Future + ?Sized>(future: Pin<&mut F>) -> Poll<F::Output> {
    future.poll(&mut Context::from_waker(Waker::noop()))
}

/// Starts `holder`'s acquire as a task of its own: a contender that waits
/// while the test goes on.
pub fn spawn_acquire<H: Holder + Clone + 'static>(holder: &H, options: Acquire) -> JoinHandle<zoolock::Result<bool>> {
    let holder = holder.clone();
    tokio::spawn(async move { holder.acquire(options).await })
}

/// Waits until the server lists a data watch of `session` on `node` (the
/// `wchp` four-letter word): no event tells a test that a watch is set.
pub async fn watched_by(node: &str, session: i64) {
    until_watch(node, session, true).await
}

/// Waits until the server lists no watch of `session` on `node` any more.
pub async fn unwatched_by(node: &str, session: i64) {
    until_watch(node, session, false).await
}

async fn until_watch(node: &str, session: i64, present: bool) {
    let port = harness().client_port(0).unwrap();
    let wanted = format!("0x{session:x}");
    for _ in 0..500 {
        let text = inject(move || {
            let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
            s.write_all(b"wchp").unwrap();
            let mut out = String::new();
            s.read_to_string(&mut out).unwrap();
            out
        })
        .await;
        let mut lines = text.lines().skip_while(|l| *l != node).skip(1);
        let found = lines.by_ref().take_while(|l| l.starts_with(char::is_whitespace)).any(|l| l.trim() == wanted);
        if found == present {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    match present {
        true => panic!("no watch of {wanted} on {node}"),
        false => panic!("{wanted} still watches {node}"),
    }
}

/// Waits, through data watches, until `node` exists and belongs to another
/// session than `owner`.
pub async fn node_of_next_session(raw: &zk::Client, node: &str, owner: i64) {
    let wait = async {
        loop {
            let (stat, watcher) = raw.check_and_watch_stat(node).await.unwrap();
            if stat.is_some_and(|s| s.ephemeral_owner != owner) {
                return;
            }
            watcher.changed().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(15), wait).await.expect("the node was not made again on the next session");
}

/// Expires `session`'s current ZooKeeper session on the server.
pub async fn expire(session: &Session) {
    let id = session.status().session_id;
    inject(move || harness().expire(id).unwrap()).await;
}

/// Waits until `session` is in `state`; fails the test after thirty seconds.
/// A session cut off is told `Lost` about 7 s after the cut at the tests'
/// 4 s session timeout: ten seconds ran out on a loaded CI machine once.
pub async fn until_state(session: &Session, state: zoolock::SessionState) {
    let mut status = session.subscribe();
    timeout(Duration::from_secs(30), status.wait_for(|s| s.state == state))
        .await
        .unwrap_or_else(|_| panic!("the session never became {state:?}"))
        .unwrap();
}

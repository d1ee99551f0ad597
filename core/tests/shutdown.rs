//! A program that leaves `main` while it holds (`?` between acquire and
//! release, no `close`): its runtime shuts down under the session, and the
//! next process must not wait a session timeout for the lock.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use common::*;
use zoolock::{Acquire, Lock, Session, SessionOptions};

const CHILD: &str = "ZOOLOCK_SHUTDOWN_CHILD";
/// Longer than the test waits for the node to go: an expiry cannot pass for a close.
const SESSION_TIMEOUT: Duration = Duration::from_secs(20);

/// How the child leaves `main`.
#[derive(Clone, Copy)]
enum Leaving {
    /// Its hold dropped on the way out.
    Dropped,
    /// Its hold never released: only the session's end can remove the node.
    Forgotten,
    /// Forgotten, after handing its session's id out (`client_id`, for
    /// another process to resume): the session must live on.
    HandedOut,
    /// Handed out while its session is busy with reads: the client's task
    /// may still be running as the runtime drops the session's last client.
    HandedOutBusy,
}

/// The child's `main`: a `#[tokio::main]` that returns while it holds.
fn child(connect: &str, path: &str, leaving: Leaving) -> ! {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let options = SessionOptions::new(connect).session_timeout(SESSION_TIMEOUT);
        let session = Session::connect(options).await.unwrap();
        let lock = Lock::mutex(&session, path).unwrap();
        let hold = lock.hold(Acquire::default()).await.unwrap().unwrap();
        println!("\nnode={}", hold.node());
        match leaving {
            Leaving::Dropped => drop(hold),
            Leaving::Forgotten => std::mem::forget(hold),
            Leaving::HandedOut | Leaving::HandedOutBusy => {
                if matches!(leaving, Leaving::HandedOutBusy) {
                    for _ in 0..32 {
                        let session = session.clone();
                        tokio::spawn(async move { while session.exists("/").await.is_ok() {} });
                    }
                    tokio::task::yield_now().await;
                }
                // Not closed on the way out (dropping the last handle would): handed over.
                std::mem::forget(session.clone());
                let id = session.client_id().unwrap();
                println!(
                    "\nid={} {}",
                    id.session_id(),
                    id.password().iter().map(|b| format!("{b:02x}")).collect::<String>()
                );
                std::mem::forget(hold);
            }
        }
    });
    drop(runtime);
    std::process::exit(0)
}

/// Runs `test` of this binary as the child, and returns what it printed.
fn run_child(test: &str, connect: &str, path: &str) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{connect} {path}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let seen: Vec<String> = lines.by_ref().map_while(Result::ok).collect();
    assert!(child.wait().unwrap().success());
    seen
}

/// The value of the child's line `key=…`.
fn said<'a>(seen: &'a [String], key: &str) -> &'a str {
    seen.iter().find_map(|l| l.strip_prefix(key)).unwrap_or_else(|| panic!("no {key} in {seen:?}"))
}

/// Outside any runtime: the child builds its own, as `#[tokio::main]` does.
fn in_child_or_parent(test: &str, leaving: Leaving, parent: impl std::future::Future<Output = ()>) {
    if let Ok(args) = std::env::var(CHILD) {
        let (connect, path) = args.split_once(' ').unwrap();
        child(connect, path, leaving);
    }
    let _ = test;
    tokio::runtime::Runtime::new().unwrap().block_on(parent);
}

async fn the_node_goes_at_once(test: &str) {
    let connect = shared_server();
    let path = unique_path("shutdown");
    let seen = tokio::task::spawn_blocking({
        let (connect, path, test) = (connect.clone(), path.clone(), test.to_owned());
        move || run_child(&test, &connect, &path)
    })
    .await
    .unwrap();
    let node = said(&seen, "node=");
    // Gone within a quarter of the session timeout: closed, not expired.
    let raw = raw(&connect).await;
    let gone = within_children(&raw, &path, SESSION_TIMEOUT / 4, |c| c.is_empty()).await;
    assert!(gone.is_some(), "{node} outlived its program's runtime");
    let session = session(&connect).await;
    let next = Lock::mutex(&session, &path).unwrap();
    assert!(next.acquire(Acquire::timeout(Duration::ZERO)).await.unwrap());
    next.release().await.unwrap();
}

#[test]
fn a_hold_dropped_as_main_returns_frees_the_lock_at_once() {
    let test = "a_hold_dropped_as_main_returns_frees_the_lock_at_once";
    in_child_or_parent(test, Leaving::Dropped, the_node_goes_at_once(test));
}

#[test]
fn a_hold_never_released_frees_the_lock_when_its_runtime_shuts_down() {
    let test = "a_hold_never_released_frees_the_lock_when_its_runtime_shuts_down";
    in_child_or_parent(test, Leaving::Forgotten, the_node_goes_at_once(test));
}

/// kazoo's hand-over of a session to another process (`client_id`): the
/// session outlives the runtime of the program that handed it out, and the
/// other process resumes it, its node still there.
#[test]
fn a_session_handed_out_is_not_closed_when_its_runtime_shuts_down() {
    let test = "a_session_handed_out_is_not_closed_when_its_runtime_shuts_down";
    in_child_or_parent(test, Leaving::HandedOut, the_session_lives_on(test));
}

/// As above, with reads in flight as the runtime shuts down: the client's
/// own task may still run while the session's last client is dropped.
#[test]
fn a_busy_session_handed_out_is_not_closed_when_its_runtime_shuts_down() {
    let test = "a_busy_session_handed_out_is_not_closed_when_its_runtime_shuts_down";
    in_child_or_parent(test, Leaving::HandedOutBusy, the_session_lives_on(test));
}

async fn the_session_lives_on(test: &'static str) {
    let connect = shared_server();
    let path = unique_path("shutdown-handed-out");
    let seen = tokio::task::spawn_blocking({
        let (connect, path) = (connect.clone(), path.clone());
        move || run_child(test, &connect, &path)
    })
    .await
    .unwrap();
    let node = said(&seen, "node=").to_owned();
    let (id, password) = said(&seen, "id=").split_once(' ').unwrap();
    let password: Vec<u8> =
        (0..password.len()).step_by(2).map(|i| u8::from_str_radix(&password[i..i + 2], 16).unwrap()).collect();
    let raw = raw(&connect).await;
    assert!(raw.check_stat(&node).await.unwrap().is_some(), "the handed-out session was closed");
    let resumed = SessionOptions::new(connect.clone()).resume(zoolock::ClientId::new(id.parse().unwrap(), password));
    let session = Session::connect(resumed).await.unwrap();
    assert!(raw.check_stat(&node).await.unwrap().is_some());
    session.close().await;
    assert!(within_children(&raw, &path, SESSION_TIMEOUT / 4, |c| c.is_empty()).await.is_some());
}

/// A runtime shut down under a mirrored waiter and a hold watching its node
/// says nothing on its way out. Both are polled where zookeeper-client's
/// task drops their channels (mirror/mod.rs `Apply`, `inline.rs`), and
/// read the end as an end: `changed()` there would panic, each caught but
/// printed by the panic hook.
#[test]
fn a_runtime_shut_down_under_a_mirror_and_a_watched_hold_panics_nowhere() {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use zoolock::{Kind, LockConfig};

    let panics = Arc::new(AtomicUsize::new(0));
    let previous = std::panic::take_hook();
    let counted = panics.clone();
    std::panic::set_hook(Box::new(move |info| {
        // Other tests of this binary may panic meanwhile: only the client's watches count.
        if info.location().is_some_and(|l| l.file().contains("zookeeper-client")) {
            counted.fetch_add(1, Ordering::SeqCst);
        }
        previous(info)
    }));
    let connect = shared_server();
    let (mirrored, listed) = (unique_path("shutdown-mirror"), unique_path("shutdown-watch"));
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    runtime.block_on(async {
        let raw = raw(&connect).await;
        let session = Session::connect(SessionOptions::new(&connect)).await.unwrap();
        // A holder and a waiter parked on the session's mirror of the path.
        let holder = Lock::mutex(&session, &mirrored).unwrap();
        assert!(holder.acquire(Acquire::default()).await.unwrap());
        let waiter = Lock::mutex(&session, &mirrored).unwrap();
        spawn_acquire(&waiter, Acquire::default());
        queued(&raw, &mirrored, 2).await;
        // A listing waiter that held after its predecessor went: it reads
        // its node with a watch, which the hold keeps.
        let listing = LockConfig { mirror: false, ..LockConfig::default() };
        let first = Lock::new(&session, &listed, Kind::Mutex, listing.clone()).unwrap();
        let second = Lock::new(&session, &listed, Kind::Mutex, listing).unwrap();
        assert!(first.acquire(Acquire::default()).await.unwrap());
        let won = spawn_acquire(&second, Acquire::default());
        queued(&raw, &listed, 2).await;
        first.release().await.unwrap();
        assert!(won.await.unwrap().unwrap());
        std::mem::forget((holder, waiter, first, second, session));
    });
    drop(runtime);
    let _ = std::panic::take_hook();
    assert_eq!(panics.load(Ordering::SeqCst), 0, "a watch panicked as its runtime shut down");
}

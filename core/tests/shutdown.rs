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

/// The child's `main`: a `#[tokio::main]` that returns while it holds. With
/// `forget`, its hold never releases: only the session's end can remove the node.
fn child(connect: &str, path: &str, forget: bool) -> ! {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let options = SessionOptions::new(connect).session_timeout(SESSION_TIMEOUT);
        let session = Session::connect(options).await.unwrap();
        let lock = Lock::mutex(&session, path).unwrap();
        let hold = lock.hold(Acquire::default()).await.unwrap().unwrap();
        println!("\nnode={}", hold.node());
        if forget {
            std::mem::forget(hold);
        }
    });
    drop(runtime);
    std::process::exit(0)
}

/// Runs `test` of this binary as the child, and returns the node it held.
fn run_child(test: &str, connect: &str, path: &str) -> String {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, format!("{connect} {path}"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let seen: Vec<String> = lines.by_ref().map_while(Result::ok).collect();
    let node = seen.iter().find_map(|l| l.strip_prefix("node=")).unwrap_or_else(|| panic!("no node in {seen:?}"));
    assert!(child.wait().unwrap().success());
    node.to_owned()
}

/// Outside any runtime: the child builds its own, as `#[tokio::main]` does.
fn the_node_goes_at_once(test: &str, forget: bool) {
    if let Ok(args) = std::env::var(CHILD) {
        let (connect, path) = args.split_once(' ').unwrap();
        child(connect, path, forget);
    }
    tokio::runtime::Runtime::new().unwrap().block_on(parent(test));
}

async fn parent(test: &str) {
    let connect = shared_server();
    let path = unique_path("shutdown");
    let node = tokio::task::spawn_blocking({
        let (connect, path, test) = (connect.clone(), path.clone(), test.to_owned());
        move || run_child(&test, &connect, &path)
    })
    .await
    .unwrap();
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
    the_node_goes_at_once("a_hold_dropped_as_main_returns_frees_the_lock_at_once", false);
}

#[test]
fn a_hold_never_released_frees_the_lock_when_its_runtime_shuts_down() {
    the_node_goes_at_once("a_hold_never_released_frees_the_lock_when_its_runtime_shuts_down", true);
}

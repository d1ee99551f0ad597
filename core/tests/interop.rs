//! A lock path shared with another library: zoolock queues only beside
//! nodes whose library sees its own (docs/interop.md's matrix), and refuses
//! the others with `MixedSchemes`, leaving no node. The peers here are
//! zookeeper-client's own lock (the Rust library a zoolock user most likely
//! migrates from), Curator's `InterProcessMutex` (Java, Debian's jars:
//! tests/peers/CuratorMutex.java), and nodes laid out as
//! DistributedLock.ZooKeeper and ZooKeeper's recipes lay them out; kazoo's
//! cells are in python/tests/test_interop.py.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::*;
use zookeeper_client as zk;
use zoolock::naming::Family;
use zoolock::{Acquire, Error, ErrorKind, Kind, Lock, LockConfig, Scheme};

fn lock(session: &zoolock::Session, path: &str, scheme: Scheme, mirror: bool) -> Lock {
    Lock::new(session, path, Kind::Mutex, LockConfig { scheme, mirror, ..LockConfig::default() }).unwrap()
}

/// zookeeper-client's lock as its users take it: `LockPrefix::new_curator(path, "lock-")`.
async fn zk_client_lock(client: &zk::Client, path: &str) -> String {
    let prefix = zk::LockPrefix::new_curator(path, "lock-").unwrap();
    let options = zk::LockOptions::new(zk::Acls::anyone_all())
        .with_ancestor_options(zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all()))
        .unwrap();
    let held = client.lock(prefix, b"", options).await.unwrap();
    let node = held.lock_path().to_owned();
    std::mem::forget(held); // released by the test, with a delete
    node
}

/// The refusal: the right kind, naming the node and its family, and no node of ours left.
async fn refused(lock: &Lock, raw: &zk::Client, path: &str, foreign: &str, family: Family) {
    let before = children(raw, path).await;
    // Bounded: before the refusal existed, the acquire waited (or held).
    let err = lock.acquire(Acquire::timeout(std::time::Duration::from_secs(5))).await.unwrap_err();
    assert_eq!(err.kind(), ErrorKind::MixedSchemes, "{err}");
    let Error::MixedSchemes { node, family: seen, .. } = &err else { panic!("{err:?}") };
    assert_eq!((foreign.ends_with(node.as_str()), *seen), (true, family), "{err}");
    assert!(!lock.is_acquired());
    assert_eq!(children(raw, path).await, before, "the refused acquire left a node");
}

#[tokio::test(flavor = "multi_thread")]
async fn zookeeper_clients_curator_lock_excludes_the_curator_scheme_and_refuses_the_default() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    for mirror in [true, false] {
        let path = unique_path("interop-zkc");
        let node = zk_client_lock(&raw, &path).await;
        // The default scheme's node would be invisible to zookeeper-client: refused.
        refused(&lock(&session, &path, Scheme::Kazoo, mirror), &raw, &path, &node, Family::Curator).await;
        // The Curator scheme queues behind it, and holds once it goes.
        let curator = lock(&session, &path, Scheme::Curator, mirror);
        assert!(!curator.acquire(Acquire::timeout(std::time::Duration::ZERO)).await.unwrap());
        let waiting = spawn_acquire(&curator, Acquire::default());
        queued(&raw, &path, 2).await;
        raw.delete(&node, None).await.unwrap();
        assert!(waiting.await.unwrap().unwrap());
        // And zookeeper-client waits for it: its lock comes only after our release.
        let released = Arc::new(AtomicBool::new(false));
        let theirs = tokio::spawn({
            let (raw, path, released) = (raw.clone(), path.clone(), released.clone());
            async move {
                let node = zk_client_lock(&raw, &path).await;
                assert!(released.load(Ordering::SeqCst), "zookeeper-client held beside zoolock's curator scheme");
                raw.delete(&node, None).await.unwrap();
            }
        });
        queued(&raw, &path, 2).await;
        released.store(true, Ordering::SeqCst);
        curator.release().await.unwrap();
        theirs.await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_kazoo_node_refuses_the_curator_scheme_and_a_curator_node_the_default() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let mode = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    for mirror in [true, false] {
        let path = unique_path("interop-kazoo");
        let kazoo = lock(&session, &path, Scheme::Kazoo, mirror);
        assert!(kazoo.acquire(Acquire::default()).await.unwrap());
        let node = kazoo.node().unwrap();
        let other = session_of(&connect).await;
        refused(&lock(&other, &path, Scheme::Curator, mirror), &raw, &path, &node, Family::Kazoo).await;
        kazoo.release().await.unwrap();
        // A Curator node first: the default scheme refuses.
        let (_, sequence) =
            raw.create(&format!("{path}/_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-"), b"", &mode).await.unwrap();
        let curator = format!("{path}/_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-{sequence}");
        refused(&lock(&other, &path, Scheme::Kazoo, mirror), &raw, &path, &curator, Family::Curator).await;
        raw.delete(&curator, None).await.unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn distributed_lock_and_shared_prefix_nodes_refuse_every_other_scheme() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let mode = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    // DistributedLock.ZooKeeper's `lock-<seq>`; zookeeper-client's `new_shared("…/n-")`
    // (ZooKeeper's LeaderElectionSupport); ZooKeeper's WriteLock `x-<session>-<seq>`.
    let layouts = [("lock-", Family::DistributedLock), ("n-", Family::Other), ("x-72057594037927936-", Family::Other)];
    for (prefix, family) in layouts {
        let path = unique_path("interop-foreign");
        session.ensure_path(&path, None).await.unwrap();
        let (_, sequence) = raw.create(&format!("{path}/{prefix}"), b"", &mode).await.unwrap();
        let node = format!("{path}/{prefix}{sequence}");
        for scheme in Scheme::ALL.into_iter().filter(|s| s.family() != family) {
            for mirror in [true, false] {
                refused(&lock(&session, &path, scheme, mirror), &raw, &path, &node, family).await;
            }
        }
        // Named as an extra marker, a node is the caller's declared peer: queued behind.
        let config = LockConfig { extra_markers: vec![prefix.to_owned()], ..LockConfig::default() };
        let declared = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
        assert!(!declared.acquire(Acquire::timeout(std::time::Duration::ZERO)).await.unwrap());
        raw.delete(&node, None).await.unwrap();
        assert!(declared.acquire(Acquire::default()).await.unwrap());
        declared.release().await.unwrap();
    }
}

/// Which of `children` DistributedLock.ZooKeeper's lock counts as holding:
/// its `ZooKeeperSequentialPathHelper` keeps the names that are exactly
/// `lock-` and a sequence, and sorts them by sequence (the wrap aside).
fn distributed_lock_holder(children: &[String]) -> Option<String> {
    let sequence =
        |name: &str| name.strip_prefix("lock-").filter(|s| s.len() == 10).and_then(|s| s.parse::<i32>().ok());
    children.iter().filter_map(|c| Some((sequence(c)?, c.clone()))).min().map(|(_, name)| name)
}

/// A fleet that moves from DistributedLock.ZooKeeper one service at a time:
/// a service still on it (its nodes laid out as it lays them out, its
/// holder decided as it decides) and one on zoolock's distributedlock
/// scheme exclude each other both ways, and the other schemes are refused.
#[tokio::test(flavor = "multi_thread")]
async fn a_distributed_lock_service_and_the_distributedlock_scheme_exclude_each_other() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let mode = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    let path = unique_path("interop-distributedlock");
    session.ensure_path(&path, None).await.unwrap();
    let old_service = || async {
        let (_, sequence) = raw.create(&format!("{path}/lock-"), b"", &mode).await.unwrap();
        format!("lock-{sequence}")
    };
    let first = old_service().await;
    assert_eq!(distributed_lock_holder(&children(&raw, &path).await), Some(first.clone()));

    let config =
        LockConfig { scheme: Scheme::DistributedLock, identifier: b"new-service".to_vec(), ..LockConfig::default() };
    let ours = Lock::new(&session, &path, Kind::Mutex, config).unwrap();
    assert!(!ours.acquire(Acquire::timeout(std::time::Duration::ZERO)).await.unwrap(), "the old service holds");
    let waiting = spawn_acquire(&ours, Acquire::default());
    let queued_nodes = queued(&raw, &path, 2).await;
    let our_node = queued_nodes.iter().find(|n| **n != first).unwrap().clone();
    assert_eq!(
        distributed_lock_holder(&queued_nodes),
        Some(first.clone()),
        "the old service sees our node behind its own"
    );
    // A second old service queues behind ours.
    let second = old_service().await;
    raw.delete(&format!("{path}/{first}"), None).await.unwrap();
    assert!(waiting.await.unwrap().unwrap());
    assert_eq!(ours.node().unwrap(), format!("{path}/{our_node}"));
    assert_eq!(distributed_lock_holder(&children(&raw, &path).await), Some(our_node), "the old service waits for ours");
    // The token that tells our node from every `lock-` is no part of the identifier.
    assert_eq!(ours.queue().await.unwrap(), ["new-service", ""]);
    // Refused, in this session too (whose own node is not the one named, maybe).
    for scheme in [Scheme::Kazoo, Scheme::Curator] {
        let other = lock(&session, &path, scheme, false);
        let err = other.acquire(Acquire::timeout(std::time::Duration::from_secs(5))).await.unwrap_err();
        assert!(matches!(err, Error::MixedSchemes { family: Family::DistributedLock, .. }), "{err:?}");
        assert_eq!(children(&raw, &path).await.len(), 2, "the refused acquire left a node");
    }
    assert!(ours.release().await.unwrap());
    assert_eq!(distributed_lock_holder(&children(&raw, &path).await), Some(second.clone()));
    assert!(!ours.acquire(Acquire::timeout(std::time::Duration::ZERO)).await.unwrap(), "the second old service holds");
    raw.delete(&format!("{path}/{second}"), None).await.unwrap();
    assert!(ours.acquire(Acquire::timeout(std::time::Duration::from_secs(5))).await.unwrap());
    ours.release().await.unwrap();
    // DistributedLock's reader-writer lock is another recipe: refused up front.
    let read = LockConfig { scheme: Scheme::DistributedLock, ..LockConfig::default() };
    let err = Lock::new(&session, &path, Kind::Read, read).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
}

/// A persistent child whose name ends in ten digits (an operator's note, a
/// backup's epoch) is nobody's contender: no lock library writes persistent
/// sequential nodes, so a read of it lets the acquire go on.
#[tokio::test(flavor = "multi_thread")]
async fn a_persistent_note_ending_in_digits_is_not_a_foreign_lock() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    for mirror in [true, false] {
        let path = unique_path("interop-note");
        session.ensure_path(&path, None).await.unwrap();
        raw.create(&format!("{path}/backup-1732867200"), b"", &persistent).await.unwrap();
        for scheme in [Scheme::Kazoo, Scheme::Curator] {
            let lock = lock(&session, &path, scheme, mirror);
            assert!(lock.acquire(Acquire::timeout(std::time::Duration::from_secs(5))).await.unwrap(), "{scheme:?}");
            lock.release().await.unwrap();
        }
    }
}

/// Curator's own InterProcessMutex in a JVM of its own: `held` once it
/// holds, released when its stdin closes (then `released`).
struct Curator {
    child: std::process::Child,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Curator {
    fn start(connect: &str, path: &str) -> Curator {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let built = std::process::Command::new(root.join("scripts/lib/build-worker.sh"))
            .args(["curator", "peer"])
            .current_dir(root)
            .output()
            .unwrap();
        assert!(built.status.success(), "{}", String::from_utf8_lossy(&built.stderr));
        let run = root.join(String::from_utf8(built.stdout).unwrap().lines().last().unwrap());
        let mut child = std::process::Command::new(run)
            .args([connect, path])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let (tx, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::BufRead;
            for line in stdout.lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        Curator { child, lines }
    }

    fn says(&self, expected: &str) {
        let line = tokio::task::block_in_place(|| self.lines.recv_timeout(std::time::Duration::from_secs(60)));
        assert_eq!(line.as_deref(), Ok(expected));
    }

    fn release(&mut self) {
        drop(self.child.stdin.take());
        self.says("released");
        self.child.wait().unwrap();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn curators_own_mutex_excludes_the_curator_scheme_and_refuses_the_default() {
    let connect = shared_server();
    let (session, raw) = (session(&connect).await, raw(&connect).await);
    let path = unique_path("interop-curator");
    // Curator holds: the default scheme refuses, the Curator scheme queues behind it.
    let mut theirs = Curator::start(&connect, &path);
    theirs.says("held");
    let node = format!("{path}/{}", children(&raw, &path).await[0]);
    refused(&lock(&session, &path, Scheme::Kazoo, true), &raw, &path, &node, Family::Curator).await;
    let ours = lock(&session, &path, Scheme::Curator, true);
    let waiting = spawn_acquire(&ours, Acquire::default());
    queued(&raw, &path, 2).await;
    theirs.release();
    assert!(waiting.await.unwrap().unwrap());
    // zoolock holds with the Curator scheme: Curator queues behind it.
    let mut next = Curator::start(&connect, &path);
    queued(&raw, &path, 2).await;
    assert!(next.lines.try_recv().is_err(), "Curator held beside zoolock's curator scheme");
    ours.release().await.unwrap();
    next.says("held");
    next.release();
}

/// A second session, so that a refused acquire is not decided by the holder's own mirror.
async fn session_of(connect: &str) -> zoolock::Session {
    session(connect).await
}

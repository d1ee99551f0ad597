//! The cancellation sweep: every public acquire, release and close future is
//! dropped after exactly k polls, for every k until it completes on its own,
//! with the lock contended and not, with and without a fault. After each
//! drop: no node of the session under test is left once it settles, no other
//! contender is stuck, and the handle's state is consistent.
//!
//! Faults: a connection reset or a short partition right after the first
//! poll, or the reply to the first create or delete dropped after the server
//! applied it.
//!
//! A poll happens only when the future asked to be woken, so "after k polls"
//! names the same point of the future's progress however slow the machine.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use common::*;
use tokio::sync::Notify;
use tokio::task::JoinHandle;
use tokio::time::timeout;
use zk_harness::{Op, Select};
use zookeeper_client as zk;
use zoolock::{
    Acquire, Adaptive, Holder, Kind, Lock, LockConfig, LockState, LostReason, Semaphore, Session, SessionOptions,
    SessionState,
};

/// How long a future may stay silent (neither wake nor complete) before the
/// sweep calls it hung.
const WAKE_BOUND: Duration = Duration::from_secs(20);
/// How long the session under test may take to settle, and its nodes to go.
const SETTLE: Duration = Duration::from_secs(10);
/// Past this many polls a future that has not completed is called hung.
const MAX_POLLS: usize = 400;
/// The timeout of the `Acquire::timeout` runs behind a holder: long enough to
/// queue, short enough to run out.
const ACQUIRE_TIMEOUT: Duration = Duration::from_millis(250);
/// The timeout of the uncontended `Acquire::timeout` runs, which must win: a
/// wait for the server, never run out by it (a create's fsync alone can take
/// longer than [`ACQUIRE_TIMEOUT`] on a loaded machine).
const UNCONTENDED_TIMEOUT: Duration = SETTLE;
/// How long the `Partition` fault holds the session's bytes: less than the
/// client's ping timeout, so requests are delayed, not lost.
const PARTITION: Duration = Duration::from_millis(300);

#[derive(Default)]
struct Wakes(Notify);

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.0.notify_one();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.notify_one();
    }
}

/// What happens to the session under test right after the first poll, while
/// the future's first request is in flight.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Fault {
    None,
    /// Its connection is reset: requests in flight fail with a connection
    /// loss (a lost create reply, a lost delete) and the client reconnects.
    Reset,
    /// Its bytes are held for [`PARTITION`], then flow on.
    Partition,
    /// The server applies its first create or delete, whose reply is lost
    /// with the connection (armed before the first poll).
    DropReply,
}

/// A fault under way; [`Injected::settle`] ends it.
#[derive(Default)]
struct Injected {
    healer: Option<JoinHandle<()>>,
    armed: Option<zk_harness::FaultId>,
}

impl Injected {
    /// Arms the faults that must be in place before the first poll.
    async fn arm(fault: Fault, session: i64) -> Injected {
        if fault != Fault::DropReply {
            return Injected::default();
        }
        let writes = Select::session(session).op(Op::Create).op(Op::Create2).op(Op::Delete).op(Op::Multi);
        let armed = inject(move || harness().drop_reply(writes).unwrap()).await;
        Injected { healer: None, armed: Some(armed) }
    }

    /// Injects the faults that strike after the first poll.
    async fn strike(&mut self, fault: Fault, session: i64) {
        match fault {
            Fault::None | Fault::DropReply => {}
            Fault::Reset => {
                inject(move || harness().drop_connections(session).unwrap()).await;
            }
            Fault::Partition => {
                inject(move || harness().partition(session).unwrap()).await;
                self.healer = Some(tokio::spawn(async move {
                    tokio::time::sleep(PARTITION).await;
                    inject(move || harness().heal(session).unwrap()).await;
                }));
            }
        }
    }

    async fn settle(self) {
        if let Some(healer) = self.healer {
            healer.await.unwrap();
        }
        if let Some(armed) = self.armed {
            // Goes on if it matched already; a dropped reply ends with its reset.
            inject(move || harness().disarm(armed).unwrap()).await;
        }
    }
}

/// Polls `future` at most `k` times, each after it asked to be woken, with
/// `fault` injected after the first poll; `Some(output)` if it completed,
/// `None` if it was dropped pending. The fault has ended when this returns.
async fn drive<T>(future: impl Future<Output = T>, k: usize, fault: Fault, session: i64) -> Option<T> {
    let wakes = Arc::new(Wakes::default());
    let waker = Waker::from(wakes.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = Box::pin(future);
    let mut injected = Injected::arm(fault, session).await;
    let mut output = None;
    for poll in 1..=k {
        if poll > 1 {
            timeout(WAKE_BOUND, wakes.0.notified()).await.expect("the future neither completed nor woke");
        }
        if let Poll::Ready(out) = future.as_mut().poll(&mut cx) {
            output = Some(out);
            break;
        }
        if poll == 1 {
            injected.strike(fault, session).await;
        }
    }
    drop(future);
    injected.settle().await;
    output
}

/// Runs `run(k)` for k = 0, 1, 2, … until it reports that the future
/// completed on its own; returns how many polls that took.
async fn sweep<Fut: Future<Output = bool>>(name: &str, mut run: impl FnMut(usize) -> Fut) -> usize {
    let started = Instant::now();
    for k in 0..=MAX_POLLS {
        if run(k).await {
            eprintln!("sweep {name}: completed after {k} polls, {:.1} s", started.elapsed().as_secs_f64());
            return k;
        }
    }
    panic!("sweep {name}: not completed after {MAX_POLLS} polls");
}

async fn wait_connected(session: &Session) {
    let mut status = session.subscribe();
    timeout(SETTLE, status.wait_for(|s| s.state == SessionState::Connected))
        .await
        .expect("the session under test reconnects")
        .unwrap();
}

/// Waits, on child watches, until every child of `path` is a node of
/// `theirs` (the session not under test); fails after [`SETTLE`].
async fn only_theirs(raw: &zk::Client, path: &str, theirs: i64, what: &str) {
    let wait = async {
        loop {
            let (children, watcher) = match raw.list_and_watch_children(path).await {
                Ok(listed) => listed,
                Err(zk::Error::NoNode) => return,
                Err(err) => panic!("list {path}: {err}"),
            };
            let mut ours = Vec::new();
            for child in children {
                let node = format!("{path}/{child}");
                match raw.check_stat(&node).await.unwrap() {
                    Some(stat) if stat.ephemeral_owner != theirs => ours.push(child),
                    _ => {}
                }
            }
            if ours.is_empty() {
                return;
            }
            if timeout(SETTLE, watcher.changed()).await.is_err() {
                panic!("{what}: nodes left on {path}: {ours:?}");
            }
        }
    };
    timeout(SETTLE, wait).await.unwrap_or_else(|_| panic!("{what}: nodes still on {path} after {SETTLE:?}"));
}

#[derive(Clone, Copy, Debug)]
enum Mode {
    Blocking,
    Timeout,
    NoWait,
}

impl Mode {
    fn options(self, persistent: bool, contended: bool) -> Acquire {
        let options = match self {
            Mode::Blocking => Acquire::default(),
            Mode::Timeout if contended => Acquire::timeout(ACQUIRE_TIMEOUT),
            Mode::Timeout => Acquire::timeout(UNCONTENDED_TIMEOUT),
            Mode::NoWait => Acquire::no_wait(),
        };
        if persistent {
            options.persistent()
        } else {
            options
        }
    }
}

const MODES: [Mode; 3] = [Mode::Blocking, Mode::Timeout, Mode::NoWait];
const KINDS: [Kind; 3] = [Kind::Mutex, Kind::Read, Kind::Write];

/// Two sessions and a plain client: `ours` runs the futures under test.
struct Bench {
    raw: zk::Client,
    ours: Session,
    theirs: Session,
}

impl Bench {
    async fn new() -> Bench {
        let connect = shared_server();
        Bench { raw: raw(&connect).await, ours: session(&connect).await, theirs: session(&connect).await }
    }

    fn our_id(&self) -> i64 {
        self.ours.status().session_id
    }

    fn their_id(&self) -> i64 {
        self.theirs.status().session_id
    }
}

fn config(identifier: &str) -> LockConfig {
    LockConfig { identifier: identifier.as_bytes().to_vec(), ..LockConfig::default() }
}

/// One recipe under the sweep, through the core's one [`Holder`] trait:
/// the handle under test (`ours`) and two of `theirs` on the same path.
struct Subject {
    name: String,
    bench: Bench,
    ours: Arc<dyn Holder>,
    /// Holds while a contended acquire runs; the waiter behind a release.
    other: Arc<dyn Holder>,
    probe: Arc<dyn Holder>,
    /// Where no node of ours may be left: the lock path; a semaphore's pool
    /// and admission lock.
    paths: Vec<String>,
    /// Where a waiter shows up, and how many children say it did: a lock's
    /// second contender; a semaphore's waiter admitted to watch the pool.
    waiting_on: (String, usize),
}

impl Subject {
    async fn lock(kind: Kind, name: String) -> Subject {
        Subject::lock_with(kind, name, config).await
    }

    /// A lock whose handle under test waits by `ours`' config.
    async fn lock_with(kind: Kind, name: String, ours: fn(&str) -> LockConfig) -> Subject {
        let bench = Bench::new().await;
        let path = unique_path(&format!("sweep-{}", name.replace([' ', '='], "-")));
        let lock = |session: &Session, who| Arc::new(Lock::new(session, &path, kind, ours(who)).unwrap());
        let theirs = |who| Arc::new(Lock::new(&bench.theirs, &path, Kind::Write, config(who)).unwrap());
        Subject {
            ours: lock(&bench.ours, "under-test"),
            other: theirs("other"),
            probe: theirs("probe"),
            paths: vec![path.clone()],
            waiting_on: (path.clone(), 2),
            name,
            bench,
        }
    }

    async fn semaphore(name: String) -> Subject {
        let bench = Bench::new().await;
        let path = unique_path(&format!("sweep-{}", name.replace([' ', '='], "-")));
        let admission = format!("{path}-__lock__");
        let semaphore = |session: &Session, who| Arc::new(Semaphore::new(session, &path, who, 1).unwrap());
        Subject {
            ours: semaphore(&bench.ours, "under-test"),
            other: semaphore(&bench.theirs, "other"),
            probe: semaphore(&bench.theirs, "probe"),
            paths: vec![path.clone(), admission.clone()],
            waiting_on: (admission, 1),
            name,
            bench,
        }
    }

    /// Waits until a contender waits behind the holder.
    async fn until_waiting(raw: &zk::Client, (path, count): &(String, usize)) {
        until_children(raw, path, "a waiter", |c| c.len() >= *count).await;
    }

    async fn only_theirs(&self, what: &str) {
        for path in &self.paths {
            only_theirs(&self.bench.raw, path, self.bench.their_id(), what).await;
        }
    }
}

/// The adaptive design switching at every acquisition: off the mirror
/// behind any other contender, back on it alone (mirror/mod.rs, point 9).
fn switching(identifier: &str) -> LockConfig {
    LockConfig { adaptive: Some(Adaptive { list_above: 1, mirror_at_most: 1, round_trip: None }), ..config(identifier) }
}

/// One acquire future per k on the subject's handle, behind a hold of
/// `theirs` if `contended` (released once we wait, for a blocking acquire).
async fn sweep_acquire(subject: Subject, mode: Mode, persistent: bool, contended: bool, fault: Fault) -> usize {
    let subject = &subject;
    let Subject { name, bench, ours, other, probe, .. } = subject;
    sweep(name, |k| async move {
        let what = format!("{name} k={k}");
        let mut releaser = None;
        if contended {
            assert!(other.acquire(Acquire::default()).await.unwrap());
            if matches!(mode, Mode::Blocking) {
                let (raw, waiting_on, other) = (bench.raw.clone(), subject.waiting_on.clone(), other.clone());
                releaser = Some(tokio::spawn(async move {
                    Subject::until_waiting(&raw, &waiting_on).await;
                    other.release().await.unwrap();
                }));
            }
        }
        let got = drive(ours.acquire(mode.options(persistent, contended)), k, fault, bench.our_id()).await;
        wait_connected(&bench.ours).await;
        if let Some(releaser) = releaser {
            releaser.abort();
            let _ = releaser.await;
        }
        other.release().await.unwrap();
        match &got {
            Some(Ok(true)) => {
                assert!(ours.is_acquired(), "{what}: acquired but not held");
                assert!(ours.release().await.unwrap(), "{what}: release after acquire");
            }
            Some(Ok(false)) => assert!(contended || fault != Fault::None, "{what}: an uncontended acquire failed"),
            Some(Err(err)) => panic!("{what}: {err}"),
            None => {}
        }
        assert!(!ours.is_acquired(), "{what}: held after {got:?}");
        subject.only_theirs(&what).await;
        assert!(probe.acquire(Acquire::timeout(SETTLE)).await.unwrap(), "{what}: another contender is stuck");
        probe.release().await.unwrap();
        assert!(ours.acquire(Acquire::timeout(SETTLE)).await.unwrap(), "{what}: the handle is stuck");
        assert!(ours.release().await.unwrap());
        got.is_some()
    })
    .await
}

async fn sweep_lock_acquire(kind: Kind, mode: Mode, persistent: bool, contended: bool, fault: Fault) -> usize {
    let name = format!("lock {kind:?} {mode:?} persistent={persistent} contended={contended} {fault:?}");
    sweep_acquire(Subject::lock(kind, name).await, mode, persistent, contended, fault).await
}

async fn sweep_semaphore_acquire(mode: Mode, contended: bool, fault: Fault) -> usize {
    let name = format!("semaphore {mode:?} contended={contended} {fault:?}");
    sweep_acquire(Subject::semaphore(name).await, mode, false, contended, fault).await
}

/// One release future per k, of the subject's handle holding; with a waiter
/// of `theirs` behind if `contended`, who must get the hold.
async fn sweep_release(subject: Subject, persistent: bool, contended: bool, fault: Fault) -> usize {
    let subject = &subject;
    let Subject { name, bench, ours, other: waiter, .. } = subject;
    sweep(name, |k| async move {
        let what = format!("{name} k={k}");
        assert!(ours.acquire(Mode::Blocking.options(persistent, false)).await.unwrap());
        let waiting = contended.then(|| {
            let waiter = waiter.clone();
            tokio::spawn(async move { waiter.acquire(Acquire::timeout(WAKE_BOUND)).await })
        });
        if contended {
            Subject::until_waiting(&bench.raw, &subject.waiting_on).await;
        }
        let got = drive(ours.release(), k, fault, bench.our_id()).await;
        wait_connected(&bench.ours).await;
        match &got {
            Some(Ok(released)) => assert!(released, "{what}: a hold released nothing"),
            Some(Err(err)) => panic!("{what}: {err}"),
            // Never polled: nothing happened yet.
            None if ours.is_acquired() => assert!(ours.release().await.unwrap(), "{what}"),
            None => {}
        }
        assert!(!ours.is_acquired(), "{what}: held after release");
        assert_eq!(ours.state(), LockState::Released, "{what}");
        if let Some(waiting) = waiting {
            let got = timeout(SETTLE, waiting).await.unwrap_or_else(|_| panic!("{what}: the waiter is stuck"));
            assert!(got.unwrap().unwrap(), "{what}: the waiter timed out");
            waiter.release().await.unwrap();
        }
        subject.only_theirs(&what).await;
        got.is_some()
    })
    .await
}

async fn sweep_lock_release(kind: Kind, persistent: bool, contended: bool, fault: Fault) -> usize {
    let name = format!("release {kind:?} persistent={persistent} contended={contended} {fault:?}");
    sweep_release(Subject::lock(kind, name).await, persistent, contended, fault).await
}

async fn sweep_semaphore_release(fault: Fault) -> usize {
    sweep_release(Subject::semaphore(format!("semaphore release {fault:?}")).await, false, true, fault).await
}

/// One close future per k, of a fresh session holding a lock and waiting
/// for another behind `theirs`; a `persistent` waiter's node must go as
/// well, while a persistent hold stays held (kazoo's `ephemeral=False`) until
/// its node is deleted, here by hand as an operator would.
async fn sweep_close(persistent: bool, fault: Fault) -> usize {
    let connect = shared_server();
    let raw = raw(&connect).await;
    let theirs = session(&connect).await;
    let their_id = theirs.status().session_id;
    let held_path = unique_path(&format!("sweep-close-held-{persistent}-{fault:?}"));
    let waited_path = unique_path(&format!("sweep-close-waited-{persistent}-{fault:?}"));
    let other = Lock::new(&theirs, &waited_path, Kind::Write, config("other")).unwrap();
    let probe = Lock::new(&theirs, &held_path, Kind::Write, config("probe")).unwrap();
    let options = if persistent { Acquire::default().persistent() } else { Acquire::default() };
    let name = format!("close persistent={persistent} {fault:?}");
    sweep(&name, |k| {
        let (connect, raw, other, probe, options, held_path, waited_path, name) =
            (&connect, &raw, &other, &probe, &options, &held_path, &waited_path, &name);
        async move {
            let what = format!("{name} k={k}");
            let ours = session(connect).await;
            let held = Lock::new(&ours, held_path, Kind::Mutex, config("held")).unwrap();
            assert!(held.acquire(options.clone()).await.unwrap());
            let held_node = held.node().unwrap();
            assert!(other.acquire(Acquire::default()).await.unwrap());
            let waiter = Lock::new(&ours, waited_path, Kind::Mutex, config("waiter")).unwrap();
            let waiting = {
                let (waiter, options) = (waiter.clone(), options.clone());
                tokio::spawn(async move { waiter.acquire(options).await })
            };
            queued(raw, waited_path, 2).await;
            let got = drive(ours.close(), k, fault, ours.status().session_id).await;
            if got.is_none() && !ours.is_closed() {
                ours.close().await; // never polled: close it now
            }
            let ended = timeout(SETTLE, waiting).await.unwrap_or_else(|_| panic!("{what}: the pending acquire hangs"));
            assert_eq!(ended.unwrap(), Err(zoolock::Error::Closed), "{what}");
            assert!(!waiter.is_acquired(), "{what}");
            // A close dropped after k polls goes on in the background, and the
            // waiter hears Closed from the session's status before that close
            // has told the holds (the clean run's k=1 of DropReply, once).
            let mut state = held.subscribe();
            let lost = timeout(SETTLE, state.wait_for(|s| matches!(s, LockState::Lost(_))));
            assert!(matches!(lost.await, Ok(Ok(_))), "{what}: the hold is not told its session closed");
            assert_eq!(held.state(), LockState::Lost(LostReason::SessionClosed), "{what}");
            assert!(!held.is_acquired(), "{what}");
            if persistent {
                let kept = raw.check_stat(&held_node).await.unwrap();
                assert!(kept.is_some(), "{what}: close deleted the persistent hold {held_node}");
                raw.delete(&held_node, None).await.unwrap();
            }
            only_theirs(raw, held_path, their_id, &what).await;
            only_theirs(raw, waited_path, their_id, &what).await;
            other.release().await.unwrap();
            assert!(probe.acquire(Acquire::timeout(SETTLE)).await.unwrap(), "{what}: another contender is stuck");
            probe.release().await.unwrap();
            got.is_some()
        }
    })
    .await
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_lock_acquire_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for kind in KINDS {
        for mode in MODES {
            for contended in [false, true] {
                sweep_lock_acquire(kind, mode, false, contended, Fault::None).await;
            }
        }
    }
    for mode in MODES {
        for contended in [false, true] {
            sweep_lock_acquire(Kind::Mutex, mode, true, contended, Fault::None).await;
        }
    }
    eprintln!("lock acquires without faults: {:.1} s", started.elapsed().as_secs_f64());
}

/// Dropped at any poll while the adaptive design leaves the mirror (a
/// contended acquire) or comes back to it (the uncontended one after it).
#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_lock_acquire_while_the_design_switches_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for mode in MODES {
        for fault in [Fault::None, Fault::Reset] {
            let name = format!("switching lock {mode:?} {fault:?}");
            let subject = Subject::lock_with(Kind::Mutex, name, switching).await;
            sweep_acquire(subject, mode, false, true, fault).await;
        }
    }
    let (dismissed, restored) = zoolock::adaptive_switches();
    eprintln!(
        "switching lock acquires: {:.1} s, {dismissed} dismissals, {restored} returns",
        started.elapsed().as_secs_f64()
    );
    assert!(dismissed > 0 && restored > 0, "the sweep never switched the design");
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_lock_acquire_under_a_reset_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for kind in KINDS {
        for mode in MODES {
            for contended in [false, true] {
                sweep_lock_acquire(kind, mode, false, contended, Fault::Reset).await;
            }
        }
    }
    sweep_lock_acquire(Kind::Mutex, Mode::Blocking, true, true, Fault::Reset).await;
    sweep_lock_acquire(Kind::Mutex, Mode::Timeout, true, false, Fault::Reset).await;
    eprintln!("lock acquires under a reset: {:.1} s", started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_lock_acquire_whose_create_reply_is_lost_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for kind in KINDS {
        for mode in MODES {
            for contended in [false, true] {
                sweep_lock_acquire(kind, mode, false, contended, Fault::DropReply).await;
            }
        }
    }
    sweep_lock_acquire(Kind::Mutex, Mode::Blocking, true, true, Fault::DropReply).await;
    sweep_lock_acquire(Kind::Mutex, Mode::Timeout, true, false, Fault::DropReply).await;
    eprintln!("lock acquires with a lost create reply: {:.1} s", started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_lock_acquire_under_a_partition_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for mode in MODES {
        for contended in [false, true] {
            sweep_lock_acquire(Kind::Mutex, mode, false, contended, Fault::Partition).await;
        }
    }
    sweep_lock_acquire(Kind::Read, Mode::Blocking, false, true, Fault::Partition).await;
    sweep_lock_acquire(Kind::Mutex, Mode::Timeout, true, true, Fault::Partition).await;
    eprintln!("lock acquires under a partition: {:.1} s", started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_semaphore_acquire_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for fault in [Fault::None, Fault::Reset, Fault::Partition, Fault::DropReply] {
        for mode in MODES {
            for contended in [false, true] {
                sweep_semaphore_acquire(mode, contended, fault).await;
            }
        }
    }
    eprintln!("semaphore acquires: {:.1} s", started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_release_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for fault in [Fault::None, Fault::Reset, Fault::Partition, Fault::DropReply] {
        for kind in KINDS {
            for contended in [false, true] {
                sweep_lock_release(kind, false, contended, fault).await;
            }
        }
        sweep_lock_release(Kind::Mutex, true, true, fault).await;
        sweep_semaphore_release(fault).await;
    }
    eprintln!("releases: {:.1} s", started.elapsed().as_secs_f64());
}

#[tokio::test(flavor = "multi_thread")]
async fn dropping_a_close_after_any_poll_leaves_nothing() {
    let started = Instant::now();
    for fault in [Fault::None, Fault::Reset, Fault::Partition, Fault::DropReply] {
        sweep_close(false, fault).await;
        sweep_close(true, fault).await;
    }
    eprintln!("closes: {:.1} s", started.elapsed().as_secs_f64());
}

/// A release whose caller gives up while the delete is on a dead connection
/// (`timeout(release())`, a cancelled `release_async`) still deletes the node.
#[tokio::test(flavor = "multi_thread")]
async fn a_release_its_caller_gave_up_on_still_deletes_the_node() {
    let bench = Bench::new().await;
    let path = unique_path("abandoned-release");
    let lock = Lock::mutex(&bench.ours, &path).unwrap();
    assert!(lock.acquire(Acquire::default()).await.unwrap());
    let id = bench.our_id();
    inject(move || harness().partition(id).unwrap()).await;
    // The delete goes out and is held; the caller stops waiting.
    assert!(timeout(Duration::from_millis(100), lock.release()).await.is_err());
    assert!(!lock.is_acquired());
    // The held delete dies with its connection; the session lives on.
    inject(move || harness().drop_connections(id).unwrap()).await;
    inject(move || harness().heal(id).unwrap()).await;
    wait_connected(&bench.ours).await;
    assert_eq!(bench.ours.status().session_id, id);
    only_theirs(&bench.raw, &path, bench.their_id(), "the released node").await;
}

/// A burst of acquires fills the session's create slots
/// ([`zoolock::CREATES_IN_FLIGHT`]): each sends its create at its first poll
/// and keeps its slot until polled again, which the test does not do. The
/// acquires after it wait for a slot: they send no create, dropped while
/// waiting (holding the slots' gate, or queued behind it) or timed out they
/// leave nothing, and the others send theirs in the order they asked,
/// however they are polled once slots are free.
#[tokio::test(flavor = "multi_thread")]
async fn dropping_an_acquire_waiting_for_a_create_slot_leaves_nothing() {
    let mut bench = Bench::new().await;
    // The polls below run under a partition. At the common 4 s session
    // timeout the client drops a connection silent for 1.6 s (zookeeper-client:
    // 2/5 of it), and its creates with it: on a loaded CI machine the
    // partition lasted that long once. At 30 s it waits 12 s.
    bench.ours =
        Session::connect(SessionOptions::new(&shared_server()).session_timeout(Duration::from_secs(30))).await.unwrap();
    let path = unique_path("sweep-create-slot");
    // The path first: a create that finds no parent is answered, and sent
    // again, only when polled again.
    bench.ours.ensure_path(&path, None).await.unwrap();
    let lock = |who: &str| Lock::new(&bench.ours, &path, Kind::Mutex, config(who)).unwrap();
    let burst: Vec<Lock> = (0..zoolock::CREATES_IN_FLIGHT).map(|i| lock(&format!("burst-{i}"))).collect();
    let mut burst: Vec<_> = burst.iter().map(|l| Box::pin(l.acquire(Acquire::default()))).collect();
    // The session's bytes held while the test polls: no reply can come within
    // a poll and let an acquire go on (and free its slot) on a slow machine.
    let id = bench.our_id();
    inject(move || harness().partition(id).unwrap()).await;
    for acquire in &mut burst {
        assert!(poll_once(acquire.as_mut()).is_pending());
    }
    let names = ["dropped at the gate", "first", "dropped in line", "second", "third"];
    let waiters: Vec<Lock> = names.iter().map(|who| lock(who)).collect();
    let mut waiting: Vec<_> = waiters.iter().map(|l| Some(Box::pin(l.acquire(Acquire::default())))).collect();
    for acquire in waiting.iter_mut().flatten() {
        assert!(poll_once(acquire.as_mut()).is_pending());
    }
    inject(move || harness().heal(id).unwrap()).await;
    // A request of the same session after the waiters' first polls: answered,
    // every create sent before it has been applied.
    bench.ours.exists(&path).await.unwrap();
    let queued = children(&bench.raw, &path).await;
    assert_eq!(queued.len(), zoolock::CREATES_IN_FLIGHT, "the burst's creates, and none past the slots");
    // The timeout bounds the wait for a slot too.
    let timed = lock("timed out");
    assert!(!timed.acquire(Acquire::timeout(ACQUIRE_TIMEOUT)).await.unwrap(), "acquired with every slot taken");
    waiting[0] = None;
    waiting[2] = None;
    // Slots free: the waiters left are polled last first, and send in order.
    inject(move || harness().partition(id).unwrap()).await;
    drop(burst);
    for _ in 0..3 {
        for acquire in waiting.iter_mut().rev().flatten() {
            assert!(poll_once(acquire.as_mut()).is_pending());
        }
    }
    inject(move || harness().heal(id).unwrap()).await;
    bench.ours.exists(&path).await.unwrap();
    let mut ours = Vec::new();
    for child in children(&bench.raw, &path).await {
        // A burst node may go under the read: its dropped acquire removes it.
        let Ok((data, _)) = bench.raw.get_data(&format!("{path}/{child}")).await else { continue };
        let who = String::from_utf8(data).unwrap();
        let sequence: i64 = child[child.len() - 10..].parse().unwrap();
        if !who.starts_with("burst-") {
            ours.push((sequence, who));
        }
    }
    ours.sort();
    let order: Vec<&str> = ours.iter().map(|(_, who)| who.as_str()).collect();
    assert_eq!(order, ["first", "second", "third"], "the waiters' nodes in sequence order");
    drop(waiting);
    only_theirs(&bench.raw, &path, bench.their_id(), "the waiters dropped").await;
    // No slot or gate kept by a dropped acquire: the session still creates.
    let after = lock("after");
    assert!(after.acquire(Acquire::timeout(SETTLE)).await.unwrap(), "the session's creates are stuck");
    assert!(after.release().await.unwrap());
}

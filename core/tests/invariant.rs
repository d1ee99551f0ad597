//! The randomized, seeded, replayable invariant test (issue 10).
//!
//! Three sessions each hold one handle of every kind on one lock path (a
//! mutex, a reader and a writer) and one semaphore (max 2 leases) on a
//! second path; a kazoo peer joins with a writer, a reader and a semaphore
//! when `.venv` has kazoo (`scripts/lib/setup-python.sh`). Random steps acquire
//! (timed, try, no-wait, forever), cancel, release, drop pending acquires,
//! close and reopen sessions, and inject faults: short and long partitions,
//! expiries, connection resets, `deleteall` of a path and its re-creation,
//! a raw client deleting the holder's node, and request-level faults (a
//! dropped reply; a request held back that lands late, before the session's
//! next write or after N requests; a reset before the reply) on a create2,
//! delete, getChildren, getData or multi-read of the session of a handle
//! about to act (`invariant/request_faults.rs`); the step log names the
//! request each hit. Every [`CHURN_EVERY`] steps a session locks fresh
//! paths in the background, past the point where it forgets its records
//! of paths it has no node in line on. Acquires run concurrently;
//! the driver settles after each step on events (an acquire returning, a
//! state change) with a bound, then checks:
//!
//! - exclusion: among handles that report held and whose node exists, a
//!   mutex or writer excludes everyone, readers exclude writers, and at most
//!   `MAX_LEASES` hold a lease;
//! - a handle that reports held has its node, or stops reporting held within
//!   [`LOST_BOUND`] after its node is first seen gone;
//! - fencing tokens increase: a new exclusive hold's token exceeds every
//!   earlier hold's, a new reader's every earlier exclusive hold's; but for
//!   a hold whose node an operator's delete was sent for before every
//!   earlier hold it is not above was recorded (see [`Shared::fence`]);
//! - every acquire returns within its timeout (a single try: the session
//!   timeout; a forever acquire: from its cancel, drop or close) plus
//!   [`ACQUIRE_SLACK`];
//! - at quiescence (everything released, sessions settled) no node is left.
//!
//! `ZOOLOCK_SEED=<n>` replays a run's choices (the server's timing is real,
//! so a replay is the same schedule of steps, not the same interleaving);
//! `ZOOLOCK_STEPS=<n>` runs that many steps, `ZOOLOCK_MINUTES=<m>` steps for
//! that long (default 45 s, plus settling); `ZOOLOCK_KEEP_GOING=1` counts
//! every violation instead of stopping at the first (`scripts/soak.sh`);
//! `ZOOLOCK_WITHOUT=delete-holder,kazoo,churn,...` leaves kinds of steps (or the churn) out
//! (`request-fault`: all request faults; or one kind of them, `drop-reply`,
//! `reset-before-reply`, `land-late`, or one op, `create2`, `getData`, ...).
//! `ZOOLOCK_MIRROR=on|off|adaptive|mixed` makes the lock handles wait on
//! their session's mirror of the path (`LockConfig::mirror`, `adaptive: None`),
//! by listing, or by the adaptive design with limits so low that it switches
//! between the two all the time (`SWITCHING`); mixed (the default): slot 0
//! mirrors, slot 1 lists, slot 2 switches.
//! On failure the seed, the replay command and the step log are printed; the
//! whole log is written to `$CARGO_TARGET_TMPDIR/invariant-<seed>.log` (with
//! `ZOOLOCK_KEEP_GOING`, always).

mod common;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::{harness, inject};
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::{timeout, timeout_at, Instant};
use zk_harness::FaultId;
use zookeeper_client as zk;
use zoolock::naming;
use zoolock::{Acquire, Adaptive, Holder, Kind, Lock, LockConfig, Semaphore, Session, SessionOptions, SessionState};

#[path = "invariant/kazoo_peer.rs"]
mod kazoo_peer;
use kazoo_peer::Peer;

#[path = "invariant/request_faults.rs"]
mod request_faults;
use request_faults::{Aim, ReqOp};

const SESSIONS: usize = 3;
/// Short, so that partitions longer than it and expiries fit in a short run.
const SESSION_TIMEOUT: Duration = Duration::from_secs(2);
const MAX_LEASES: u32 = 2;
/// After its timeout an acquire waits up to 2 s for its node's removal
/// (zoolock's `FOREGROUND_WAIT`); 2 s more for a loaded machine.
const ACQUIRE_SLACK: Duration = Duration::from_secs(4);
/// A holder whose node went (its session expired, or someone deleted it) is
/// told within this long after the node is first seen gone: the client
/// declares expiry at 7/5 of the session timeout without an answer, and a
/// deleted node is noticed at the latest when the connection comes back.
const LOST_BOUND: Duration = Duration::from_millis(2 * 2000 + 1000);
/// How long a release or a close may take: the release's bounded delete
/// (2 s) or the close's wait for the server (the session timeout), plus slack.
const CALL_BOUND: Duration = Duration::from_secs(5);

/// The adaptive design at limits that switch it off the mirror whenever
/// more than two contenders queue, and back whenever a listing shows two.
const SWITCHING: Adaptive = Adaptive { list_above: 2, mirror_at_most: 2, round_trip: None };
const KINDS: [&str; 4] = ["mutex", "read", "write", "sem"];
const SEM: usize = 3;

/// Every this many steps a session locks [`CHURN_PATHS`] fresh paths in
/// the background, within [`CHURN_BOUND`] (see [`Driver::churn`]).
const CHURN_EVERY: usize = 20;
/// More than the 64 paths below which a session forgets none of its records.
const CHURN_PATHS: usize = 70;
const CHURN_BOUND: Duration = Duration::from_secs(8);

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn random_steps_under_faults_keep_every_invariant() {
    let config = Config::from_env();
    let mut driver = Driver::start(config).await;
    driver.run().await;
    driver.finish().await;
    driver.report();
}

/// Found by the random test (seed 2): the same-session neighbour shortcut
/// names the node it waits for `<prefix of the session's previous node>` +
/// `<our sequence - 1>`. When the lock path is deleted and re-created, the
/// counter restarts: our new node can get the old node's sequence + 1 while
/// the node now at our sequence - 1 belongs to someone else. The shortcut
/// then watches the old, deleted name, finds it gone, sees that it was a
/// winner, and holds beside the real holder. (It needs the previous node's
/// hold still registered: here because its owner is never told, issue 10
/// item 11; with that fixed, until the deletion notice is processed.)
#[tokio::test(flavor = "multi_thread")]
async fn a_restarted_counter_does_not_make_a_stranger_our_neighbour() {
    let connect = common::shared_server();
    let raw = common::raw(&harness().direct_connect_string()).await;
    let path = common::unique_path("neighbour-restart");
    let a = common::session(&connect).await;
    let b = common::session(&connect).await;
    let writer = Lock::new(&a, &path, Kind::Write, LockConfig::default()).unwrap();
    assert!(writer.acquire(Acquire::default()).await.unwrap());
    let old = writer.node().unwrap();
    assert!(old.ends_with("__lock__0000000000"), "{old}");

    // An operator's deleteall, then someone else queues first on the re-created path.
    raw.delete(&old, None).await.unwrap();
    raw.delete(&path, None).await.unwrap();
    let stranger = Lock::new(&b, &path, Kind::Write, LockConfig::default()).unwrap();
    assert!(stranger.acquire(Acquire::default()).await.unwrap());
    assert!(stranger.node().unwrap().ends_with("__lock__0000000000"));

    let mutex = Lock::mutex(&a, &path).unwrap();
    let held = mutex.acquire(Acquire::timeout(Duration::from_millis(500))).await.unwrap();
    let nodes = common::children(&raw, &path).await;
    assert!(
        !(held && stranger.is_acquired()),
        "two holders, each with its node: {} and {} (children {nodes:?})",
        mutex.node().unwrap(),
        stranger.node().unwrap()
    );
}

struct Config {
    seed: u64,
    steps: Option<usize>,
    duration: Duration,
    keep_going: bool,
    /// Kinds of steps left out (`ZOOLOCK_WITHOUT=delete-holder,kazoo`), to
    /// isolate a defect; they still draw from the seed, so the rest replays.
    without: Vec<String>,
    /// Each slot's lock handles' design (`ZOOLOCK_MIRROR`): `mirror` and `adaptive`.
    design: fn(usize) -> (bool, Option<Adaptive>),
}

impl Config {
    fn from_env() -> Config {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.is_empty());
        let seed = var("ZOOLOCK_SEED").map(|s| s.parse().expect("ZOOLOCK_SEED is a number")).unwrap_or_else(|| {
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap();
            (now.as_nanos() as u64 ^ u64::from(std::process::id()).rotate_left(32)) % 1_000_000_000
        });
        let steps = var("ZOOLOCK_STEPS").map(|s| s.parse().expect("ZOOLOCK_STEPS is a number"));
        let minutes: f64 =
            var("ZOOLOCK_MINUTES").map(|m| m.parse().expect("ZOOLOCK_MINUTES is a number")).unwrap_or(0.75);
        let keep_going = var("ZOOLOCK_KEEP_GOING").is_some_and(|v| v != "0");
        let without =
            var("ZOOLOCK_WITHOUT").map(|w| w.split(',').map(|k| k.trim().to_owned()).collect()).unwrap_or_default();
        let design: fn(usize) -> (bool, Option<Adaptive>) = match var("ZOOLOCK_MIRROR").as_deref() {
            Some("on") => |_| (true, None),
            Some("off") => |_| (false, None),
            Some("adaptive") => |_| (true, Some(SWITCHING)),
            None | Some("mixed") => |slot| [(true, None), (false, None), (true, Some(SWITCHING))][slot % 3],
            Some(other) => panic!("ZOOLOCK_MIRROR is on, off, adaptive or mixed, not {other}"),
        };
        Config { seed, steps, duration: Duration::from_secs_f64(minutes * 60.0), keep_going, without, design }
    }
}

/// SplitMix64: the whole schedule of steps follows from the seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }

    fn millis(&mut self, low: u64, high: u64) -> Duration {
        Duration::from_millis(low + self.below(high - low))
    }
}

#[derive(Debug, Clone, Copy)]
enum Mode {
    Timed(Duration),
    /// `timeout: 0`: a single try.
    Try,
    /// `blocking: false`.
    NoWait,
    /// No timeout: ends by holding, or by a cancel, a drop or a close.
    Forever,
}

impl Mode {
    fn draw(rng: &mut Rng) -> Mode {
        match rng.below(100) {
            0..=49 => Mode::Timed(rng.millis(200, 4000)),
            50..=64 => Mode::Try,
            65..=79 => Mode::NoWait,
            _ => Mode::Forever,
        }
    }

    fn options(self) -> Acquire {
        match self {
            Mode::Timed(t) => Acquire::timeout(t),
            Mode::Try => Acquire::timeout(Duration::ZERO),
            Mode::NoWait => Acquire::no_wait(),
            Mode::Forever => Acquire::default(),
        }
    }

    /// When the acquire must have returned, if it has a bound of its own.
    fn deadline(self, started: Instant) -> Option<Instant> {
        match self {
            Mode::Timed(t) => Some(started + t + ACQUIRE_SLACK),
            // A single try is bounded by zoolock's request bound, the session timeout.
            Mode::Try | Mode::NoWait => Some(started + SESSION_TIMEOUT + ACQUIRE_SLACK),
            Mode::Forever => None,
        }
    }

    fn label(self) -> String {
        match self {
            Mode::Timed(t) => format!("timeout {}ms", t.as_millis()),
            Mode::Try => "try".into(),
            Mode::NoWait => "no-wait".into(),
            Mode::Forever => "forever".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Res {
    Lock,
    Sem,
    /// The semaphore's admission lock, `<sem>-__lock__`.
    Admission,
}

#[derive(Debug, Clone, Copy)]
enum Step {
    Acquire(usize, usize, Mode),
    Release(usize, usize),
    Cancel(usize, usize),
    DropPending(usize, usize),
    Pause(Duration),
    ShortPartition(usize, Duration),
    LongPartition(usize),
    Expire(usize),
    Reset(usize),
    DeletePath(Res),
    CreatePath(Res),
    DeleteHolder(Res),
    /// Closes the session if the flag is set, reopens a closed one.
    CloseOrReopen(usize, bool),
    /// The kazoo peer's writer (0), reader (1) or semaphore (2).
    KazooAcquire(usize, Duration),
    KazooRelease(usize),
    /// A request fault against the session of the handle that acts next
    /// from `(slot, kind)` on, then that action.
    RequestFault(usize, usize, Aim),
}

impl Step {
    /// The name `ZOOLOCK_WITHOUT` knows this kind of step by.
    fn kind(&self) -> &'static str {
        match self {
            Step::Acquire(..) => "acquire",
            Step::Release(..) => "release",
            Step::Cancel(..) => "cancel",
            Step::DropPending(..) => "drop",
            Step::Pause(_) => "pause",
            Step::ShortPartition(..) => "short-partition",
            Step::LongPartition(_) => "long-partition",
            Step::Expire(_) => "expire",
            Step::Reset(_) => "reset",
            Step::DeletePath(_) => "delete-path",
            Step::CreatePath(_) => "create-path",
            Step::DeleteHolder(_) => "delete-holder",
            Step::CloseOrReopen(..) => "close",
            Step::KazooAcquire(..) | Step::KazooRelease(_) => "kazoo",
            Step::RequestFault(..) => "request-fault",
        }
    }

    /// Whether `ZOOLOCK_WITHOUT`'s `word` leaves this step out.
    fn left_out_by(&self, word: &str) -> bool {
        word == self.kind() || matches!(self, Step::RequestFault(_, _, aim) if aim.left_out_by(word))
    }

    /// Draws the next step from the seed alone, never from what happened, so
    /// a replay makes the same choices; a step that does not apply is a no-op.
    fn draw(rng: &mut Rng) -> Step {
        let slot = rng.below(SESSIONS as u64) as usize;
        let kind = rng.below(KINDS.len() as u64) as usize;
        match rng.below(1150) {
            0..=329 => Step::Acquire(slot, kind, Mode::draw(rng)),
            330..=509 => Step::Release(slot, kind),
            510..=549 => Step::Cancel(slot, kind),
            550..=589 => Step::DropPending(slot, kind),
            590..=649 => Step::Pause(rng.millis(100, 800)),
            650..=679 => Step::ShortPartition(slot, rng.millis(200, SESSION_TIMEOUT.as_millis() as u64 * 3 / 4)),
            680..=694 => Step::LongPartition(slot),
            695..=719 => Step::Expire(slot),
            720..=759 => Step::Reset(slot),
            760..=789 => Step::DeletePath([Res::Lock, Res::Lock, Res::Sem, Res::Admission][kind]),
            790..=809 => Step::CreatePath([Res::Lock, Res::Sem][kind % 2]),
            810..=849 => Step::DeleteHolder([Res::Lock, Res::Lock, Res::Lock, Res::Sem][kind]),
            // Closed about a fifth of the time: its handles must fail fast meanwhile.
            850..=899 => Step::CloseOrReopen(slot, rng.below(4) == 0),
            900..=959 => Step::KazooAcquire(kind % 3, rng.millis(200, 3000)),
            960..=999 => Step::KazooRelease(kind % 3),
            _ => Step::RequestFault(slot, kind, Aim::draw(rng)),
        }
    }
}

/// One handle of the test: a lock of some kind, or a semaphore, through
/// the core's one [`Holder`] trait; the lock too for its node and token.
#[derive(Clone)]
struct Handle {
    holder: Arc<dyn Holder>,
    lock: Option<Lock>,
}

impl Handle {
    fn lock(lock: Lock) -> Handle {
        Handle { holder: Arc::new(lock.clone()), lock: Some(lock) }
    }

    fn semaphore(semaphore: Semaphore) -> Handle {
        Handle { holder: Arc::new(semaphore), lock: None }
    }

    /// The lock node, for a lock; a semaphore's lease is found by its identifier.
    fn node(&self) -> Option<String> {
        self.lock.as_ref().and_then(Lock::node)
    }

    fn token(&self) -> Option<i64> {
        self.lock.as_ref().and_then(Lock::fencing_token)
    }
}

impl std::ops::Deref for Handle {
    type Target = dyn Holder;

    fn deref(&self) -> &(dyn Holder + 'static) {
        &*self.holder
    }
}

/// What the driver, the acquire tasks, the listeners and the fault tasks share.
struct Shared {
    start: Instant,
    log: Mutex<Vec<String>>,
    /// Bumped by every event: what settling waits on.
    tick: watch::Sender<u64>,
    fence: Mutex<Fence>,
    /// The nodes an operator's delete was sent for (full paths: unique,
    /// kazoo's names), each with the [`Shared::moment`] it was sent at.
    deleted_by_operator: Mutex<HashMap<String, u64>>,
    /// Orders operators' deletes and recorded holds.
    moments: AtomicU64,
    violations: Mutex<Vec<(usize, String)>>,
    counts: Mutex<BTreeMap<String, u64>>,
    /// Session ids seen, by the name of their slot and generation.
    owners: Mutex<HashMap<i64, String>>,
    step: std::sync::atomic::AtomicUsize,
    requests: Mutex<request_faults::Record>,
}

impl Shared {
    fn note(&self, text: impl AsRef<str>) {
        let t = self.start.elapsed().as_secs_f64();
        self.log.lock().unwrap().push(format!("{t:8.3}s  {}", text.as_ref()));
        self.tick.send_modify(|n| *n += 1);
    }

    fn count(&self, key: impl Into<String>) {
        *self.counts.lock().unwrap().entry(key.into()).or_default() += 1;
    }

    fn violate(&self, kind: &str, text: String) {
        let recent = self.requests.lock().unwrap().recent();
        let text =
            if recent.is_empty() { text } else { format!("{text} [request faults lately: {}]", recent.join("; ")) };
        self.count(format!("violation: {kind}"));
        self.note(format!("VIOLATION {kind}: {text}"));
        self.violations.lock().unwrap().push((self.step.load(Ordering::Relaxed), format!("{kind}: {text}")));
    }

    fn moment(&self) -> u64 {
        self.moments.fetch_add(1, Ordering::Relaxed)
    }

    /// Records that an operator's delete of `node` is about to be sent.
    fn deleting(&self, node: &str) {
        let moment = self.moment();
        self.deleted_by_operator.lock().unwrap().insert(node.to_owned(), moment);
    }

    /// Records a new hold on the lock path and checks its fencing token.
    ///
    /// Not checked if an operator's delete of this hold's `node` was sent
    /// before every earlier hold it is not above was recorded: the reply
    /// that decided this hold may have come before the delete, and its
    /// acquire returned after those, queued behind it, had held (its task
    /// polled late). No ZooKeeper lock can rule that out across sessions;
    /// the hold is told lost within [`LOST_BOUND`] instead. Within a session
    /// the reports are ordered (`holder::order`, tested in read_write.rs),
    /// but two acquires returning at once on two threads still return in
    /// either order: the same rule applies to pairs of one session.
    fn fence(&self, who: &str, node: &str, exclusive: bool, token: i64) {
        let deleted = self.deleted_by_operator.lock().unwrap().get(node).copied();
        let mut fence = self.fence.lock().unwrap();
        // The earlier holds it must be above: all for an exclusive hold, the
        // exclusive ones for a reader. The highest, and when the first was recorded.
        let mut above = fence.holds.range(token..).filter(|(_, recorded)| exclusive || recorded.exclusive);
        let first = above.clone().map(|(_, recorded)| recorded.at).min();
        if let (Some(first), Some((highest, by))) = (first, above.next_back().map(|(t, r)| (*t, r.who.clone()))) {
            drop(fence);
            if deleted.is_some_and(|deleted| deleted < first) {
                self.count("fencing: not checked, the node's delete sent before the earlier holds");
                return self.note(format!(
                    "{who}: token {token:#x} not fenced against {by}'s {highest:#x} and any lower: an operator's delete of its node was sent before those holds"
                ));
            }
            self.violate(
                "fencing",
                format!("{who} holds with token {token:#x}, not above {highest:#x} of {by}, an earlier holder"),
            );
            return;
        }
        let at = self.moment();
        fence.holds.insert(token, Recorded { who: who.to_owned(), exclusive, at });
    }
}

#[derive(Default)]
struct Fence {
    /// Every hold so far, by its token.
    holds: BTreeMap<i64, Recorded>,
}

struct Recorded {
    who: String,
    /// A mutex's or a writer's.
    exclusive: bool,
    /// When recorded ([`Shared::moment`]).
    at: u64,
}

struct Slot {
    session: Session,
    incarnation: u32,
    closed: bool,
    handles: Vec<Handle>,
    partitioned: Arc<AtomicBool>,
}

/// What a handle does right after a request fault is armed against its session.
#[derive(Clone, Copy)]
enum Action {
    Acquire(Mode),
    Release,
    Read,
}

struct Pending {
    who: String,
    mode: Mode,
    started: Instant,
    deadline: Option<Instant>,
    task: JoinHandle<()>,
    reported: bool,
}

/// A hold the check saw: a handle that reports held, and where its node should be.
struct Claim {
    who: String,
    /// `(slot, kind)` for zoolock's handles, `None` for the kazoo peer.
    handle: Option<(usize, usize)>,
    exclusive: bool,
    /// The lock node, or for a lease the identifier its node carries.
    node: String,
    lease: bool,
    state: String,
}

struct Driver {
    config: Config,
    rng: Rng,
    shared: Arc<Shared>,
    connect: String,
    raw: zk::Client,
    lock_path: String,
    sem_path: String,
    slots: Vec<Slot>,
    pending: HashMap<(usize, usize), Pending>,
    faults: Vec<JoinHandle<()>>,
    /// Claims seen without their node: since when.
    missing: HashMap<(String, String), Instant>,
    reported: HashSet<String>,
    peer: Option<Peer>,
    steps_run: usize,
}

impl Driver {
    async fn start(config: Config) -> Driver {
        let ensemble = harness();
        let connect = ensemble.connect_string();
        // The inspecting client bypasses the proxies: no fault reaches it.
        let raw = zk::Client::connect(&ensemble.direct_connect_string()).await.expect("raw connect");
        let lock_path = common::unique_path("invariant");
        let sem_path = format!("{lock_path}-sem");
        let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
        raw.mkdir(&lock_path, &open).await.expect("lock path");
        let shared = Arc::new(Shared {
            start: Instant::now(),
            log: Mutex::default(),
            tick: watch::Sender::new(0),
            fence: Mutex::default(),
            deleted_by_operator: Mutex::default(),
            moments: Default::default(),
            violations: Mutex::default(),
            counts: Mutex::default(),
            owners: Mutex::default(),
            step: Default::default(),
            requests: Mutex::default(),
        });
        let steps = config.steps.map_or_else(|| format!("for {:?}", config.duration), |n| format!("{n} steps"));
        shared.note(format!(
            "seed {} ({steps}); lock path {lock_path}, semaphore {sem_path} (max {MAX_LEASES}); session timeout {SESSION_TIMEOUT:?}",
            config.seed
        ));
        let peer =
            Peer::start(&ensemble.direct_connect_string(), &lock_path, &sem_path, MAX_LEASES, shared.clone()).await;
        let mut driver = Driver {
            rng: Rng(config.seed),
            config,
            shared,
            connect,
            raw,
            lock_path,
            sem_path,
            slots: Vec::new(),
            pending: HashMap::new(),
            faults: Vec::new(),
            missing: HashMap::new(),
            reported: HashSet::new(),
            peer,
            steps_run: 0,
        };
        for slot in 0..SESSIONS {
            let opened = driver.open_slot(slot, 1).await;
            driver.slots.push(opened);
        }
        driver
    }

    fn who(&self, slot: usize, kind: usize) -> String {
        format!("s{slot}.{}#{}", KINDS[kind], self.slots[slot].incarnation)
    }

    async fn open_slot(&self, slot: usize, incarnation: u32) -> Slot {
        let options = SessionOptions::new(self.connect.clone()).session_timeout(SESSION_TIMEOUT);
        let session = Session::connect(options).await.expect("connect");
        let name = format!("s{slot}#{incarnation}");
        let mut status = session.subscribe();
        let first = *status.borrow_and_update();
        self.shared.owners.lock().unwrap().insert(first.session_id, format!("{name} gen {}", first.generation));
        self.shared.note(format!("{name}: session open, id {:#x}", first.session_id));
        let shared = self.shared.clone();
        tokio::spawn(async move {
            while status.changed().await.is_ok() {
                let s = *status.borrow_and_update();
                shared.owners.lock().unwrap().insert(s.session_id, format!("{name} gen {}", s.generation));
                shared.note(format!("{name}: session {:?} gen {} id {:#x}", s.state, s.generation, s.session_id));
            }
        });
        let mut handles = Vec::new();
        for (kind, label) in KINDS.iter().enumerate() {
            let who = format!("s{slot}.{label}#{incarnation}");
            let handle = match kind {
                SEM => Handle::semaphore(Semaphore::new(&session, &self.sem_path, who.clone(), MAX_LEASES).unwrap()),
                _ => {
                    let kind = [Kind::Mutex, Kind::Read, Kind::Write][kind];
                    let (mirror, adaptive) = (self.config.design)(slot);
                    let identifier = who.clone().into_bytes();
                    let config = LockConfig { identifier, mirror, adaptive, ..LockConfig::default() };
                    Handle::lock(Lock::new(&session, &self.lock_path, kind, config).unwrap())
                }
            };
            let shared = self.shared.clone();
            handle.add_listener(Box::new(move |state| shared.note(format!("{who}: {state:?}"))));
            handles.push(handle);
        }
        Slot { session, incarnation, closed: false, handles, partitioned: Arc::default() }
    }

    fn done(&self, started: Instant) -> bool {
        if !self.config.keep_going && !self.shared.violations.lock().unwrap().is_empty() {
            return true;
        }
        match self.config.steps {
            Some(n) => self.steps_run >= n,
            None => started.elapsed() >= self.config.duration,
        }
    }

    async fn run(&mut self) {
        let started = Instant::now();
        while !self.done(started) {
            self.steps_run += 1;
            self.shared.step.store(self.steps_run, Ordering::Relaxed);
            let step = Step::draw(&mut self.rng);
            // By the step's number, whatever the step: leaving steps out keeps the churn.
            if self.steps_run % CHURN_EVERY == 0 && !self.config.without.iter().any(|w| w == "churn") {
                self.churn();
            }
            if self.config.without.iter().any(|w| step.left_out_by(w)) {
                continue;
            }
            self.step(step).await;
            self.reap();
            self.check().await;
        }
    }

    /// A session locks path after path meanwhile, as a worker with a lock
    /// per job does: its records of its holds' order and of its lines are
    /// forgotten for paths it has no node in line on, while its handles on
    /// the lock path are decided (`holder::order`). Not drawn from the seed:
    /// a replay keeps its schedule. Failures are the faults' and are only
    /// counted. Its requests are the session's: a request fault held to land
    /// after the session's next N requests may land after churn's.
    fn churn(&mut self) {
        let slot = (self.steps_run / CHURN_EVERY) % SESSIONS;
        if self.slots[slot].closed {
            return;
        }
        let session = self.slots[slot].session.clone();
        let name = format!("s{slot}#{}", self.slots[slot].incarnation);
        let (shared, base) = (self.shared.clone(), common::unique_path("invariant-churn"));
        self.faults.push(tokio::spawn(async move {
            let mut held = 0;
            let done = timeout(CHURN_BOUND, async {
                for i in 0..CHURN_PATHS {
                    let lock = Lock::mutex(&session, &format!("{base}/p{i}")).expect("a valid path");
                    if let Ok(true) = lock.acquire(Acquire::timeout(Duration::from_secs(1))).await {
                        held += 1;
                        let _ = lock.release().await;
                    }
                }
            })
            .await;
            shared.count(match (done, held) {
                (Err(_), _) => "churn: cut short by its bound",
                (Ok(()), CHURN_PATHS) => "churn: every path held",
                (Ok(()), _) => "churn: some paths not held",
            });
            let kept = (session.lock_lines_kept(), session.hold_orders_kept());
            shared.note(format!("{name}: churn held {held} of {CHURN_PATHS} fresh paths; records kept {kept:?}"));
        }));
    }

    /// Waits until `done` holds or `bound` passes, waking on every event.
    async fn settle(&self, bound: Duration, done: impl Fn(&Self) -> bool) -> bool {
        let deadline = Instant::now() + bound;
        let mut tick = self.shared.tick.subscribe();
        loop {
            if done(self) {
                return true;
            }
            if timeout_at(deadline, tick.changed()).await.is_err() {
                return done(self);
            }
        }
    }

    /// The first handle from `(slot, kind)` on, in a fixed order, that `fits`:
    /// the seed picks where to start, the state which handle applies.
    fn pick(&self, slot: usize, kind: usize, fits: impl Fn(&Self, usize, usize) -> bool) -> Option<(usize, usize)> {
        let start = slot * KINDS.len() + kind;
        (0..SESSIONS * KINDS.len())
            .map(|i| (start + i) % (SESSIONS * KINDS.len()))
            .map(|i| (i / KINDS.len(), i % KINDS.len()))
            .find(|(s, k)| fits(self, *s, *k))
    }

    fn pending_done(&self, key: (usize, usize)) -> bool {
        self.pending.get(&key).is_none_or(|p| p.task.is_finished())
    }

    async fn step(&mut self, step: Step) {
        let n = self.steps_run;
        let note = |driver: &Driver, text: String| driver.shared.note(format!("#{n} {text}"));
        match step {
            Step::Acquire(slot, kind, mode) => {
                let idle = |d: &Driver, s: usize, k: usize| {
                    !d.slots[s].closed && d.pending_done((s, k)) && !d.slots[s].handles[k].is_acquired()
                };
                // A draw of a closed session's semaphore tries it (it must fail at once);
                // other draws go to the next idle handle of an open session.
                let chosen = if self.slots[slot].closed && kind == SEM {
                    Some((slot, kind))
                } else {
                    self.pick(slot, kind, idle)
                };
                let Some((slot, kind)) = chosen else {
                    return note(self, format!("acquire ({}): skipped, every handle holds or waits", mode.label()));
                };
                self.start_acquire(slot, kind, mode).await;
            }
            Step::Release(slot, kind) => {
                let Some((slot, kind)) = self.pick(slot, kind, |d, s, k| d.slots[s].handles[k].is_acquired()) else {
                    return note(self, "release: skipped, nothing held".into());
                };
                self.release(slot, kind).await;
            }
            Step::Cancel(slot, kind) => {
                let (slot, kind) = self.pick(slot, kind, |d, s, k| !d.pending_done((s, k))).unwrap_or((slot, kind));
                let who = self.who(slot, kind);
                let pending = !self.pending_done((slot, kind));
                note(self, format!("cancel {who}{}", if pending { "" } else { " (nothing pending)" }));
                self.slots[slot].handles[kind].cancel();
                if let Some(p) = self.pending.get_mut(&(slot, kind)) {
                    p.deadline =
                        Some(p.deadline.unwrap_or(Instant::now() + ACQUIRE_SLACK).min(Instant::now() + ACQUIRE_SLACK));
                }
                self.settle(Duration::from_millis(300), |d| d.pending_done((slot, kind))).await;
            }
            Step::DropPending(slot, kind) => {
                let (slot, kind) = self.pick(slot, kind, |d, s, k| !d.pending_done((s, k))).unwrap_or((slot, kind));
                let who = self.who(slot, kind);
                match self.pending.remove(&(slot, kind)).filter(|p| !p.task.is_finished()) {
                    None => note(self, format!("drop the pending acquire of {who}: skipped, none")),
                    Some(p) => {
                        note(
                            self,
                            format!(
                                "drop the pending acquire of {who} ({}, started {:?} ago)",
                                p.mode.label(),
                                p.started.elapsed()
                            ),
                        );
                        p.task.abort();
                        let _ = p.task.await;
                        self.shared.count("acquire dropped");
                    }
                }
            }
            Step::Pause(bound) => {
                note(self, format!("pause: until an acquire returns, at most {}ms", bound.as_millis()));
                let before: HashSet<_> =
                    self.pending.iter().filter(|(_, p)| !p.task.is_finished()).map(|(k, _)| *k).collect();
                self.settle(bound, |d| before.iter().any(|k| d.pending_done(*k))).await;
            }
            Step::ShortPartition(slot, length) => {
                let s = &self.slots[slot];
                if s.closed || s.partitioned.load(Ordering::SeqCst) {
                    return note(
                        self,
                        format!("partition s{slot} {}ms: skipped (closed or partitioned)", length.as_millis()),
                    );
                }
                let id = s.session.status().session_id;
                note(self, format!("partition s{slot} (session {id:#x}) for {}ms (short)", length.as_millis()));
                self.shared.count("fault: short partition");
                let (shared, partitioned) = (self.shared.clone(), s.partitioned.clone());
                partitioned.store(true, Ordering::SeqCst);
                self.faults.push(tokio::spawn(async move {
                    if let Err(e) = inject(move || harness().partition(id)).await {
                        shared.note(format!("partition s{slot}: {e}"));
                    }
                    tokio::time::sleep(length).await; // the fault's length, not a wait for an event
                    let _ = inject(move || harness().heal(id)).await;
                    shared.note(format!("healed s{slot} (session {id:#x})"));
                    partitioned.store(false, Ordering::SeqCst);
                }));
                let mut status = s.session.subscribe();
                let _ =
                    timeout(Duration::from_millis(200), status.wait_for(|s| s.state != SessionState::Connected)).await;
            }
            Step::LongPartition(slot) => {
                let s = &self.slots[slot];
                if s.closed || s.partitioned.load(Ordering::SeqCst) {
                    return note(self, format!("long partition of s{slot}: skipped (closed or partitioned)"));
                }
                let status = s.session.status();
                let id = status.session_id;
                note(self, format!("partition s{slot} (session {id:#x}) until its session expires (long)"));
                self.shared.count("fault: long partition");
                let (shared, partitioned) = (self.shared.clone(), s.partitioned.clone());
                let mut states = s.session.subscribe();
                partitioned.store(true, Ordering::SeqCst);
                self.faults.push(tokio::spawn(async move {
                    if let Err(e) = inject(move || harness().partition(id)).await {
                        shared.note(format!("partition s{slot}: {e}"));
                    }
                    let ended = states.wait_for(|s| {
                        s.generation > status.generation
                            || s.state != SessionState::Connected && s.state != SessionState::Suspended
                    });
                    if timeout(SESSION_TIMEOUT * 4, ended).await.is_err() {
                        shared.note(format!("s{slot}: the session outlived a partition of {:?}", SESSION_TIMEOUT * 4));
                    }
                    let _ = inject(move || harness().heal(id)).await;
                    shared.note(format!("healed s{slot} (session {id:#x})"));
                    partitioned.store(false, Ordering::SeqCst);
                }));
            }
            Step::Expire(slot) => {
                let s = &self.slots[slot];
                if s.closed {
                    return note(self, format!("expire s{slot}: skipped, closed"));
                }
                let status = s.session.status();
                let id = status.session_id;
                note(self, format!("expire s{slot} (session {id:#x})"));
                self.shared.count("fault: expire");
                if let Err(e) = inject(move || harness().expire(id)).await {
                    return note(self, format!("expire s{slot}: {e}"));
                }
                let mut states = s.session.subscribe();
                let renewed = states.wait_for(|s| s.generation > status.generation || s.state == SessionState::Closed);
                if timeout(SESSION_TIMEOUT * 3, renewed).await.is_err() {
                    note(self, format!("s{slot}: no new session {:?} after the expiry", SESSION_TIMEOUT * 3));
                }
            }
            Step::Reset(slot) => {
                let s = &self.slots[slot];
                if s.closed {
                    return note(self, format!("reset s{slot}: skipped, closed"));
                }
                let id = s.session.status().session_id;
                let reset = inject(move || harness().drop_connections(id)).await;
                note(self, format!("reset the connections of s{slot} (session {id:#x}): {reset:?}"));
                self.shared.count("fault: connection reset");
            }
            Step::DeletePath(res) => {
                let path = self.path_of(res);
                let claims = self.claims_by_node();
                note(self, format!("deleteall {path} ..."));
                let deleted = self.delete_all(&path).await;
                let named: Vec<String> = deleted
                    .iter()
                    .map(|c| {
                        format!(
                            "{c}{}",
                            claims.get(&format!("{path}/{c}")).map(|w| format!(" (held by {w})")).unwrap_or_default()
                        )
                    })
                    .collect();
                note(self, format!("deleteall {path}: {named:?}"));
                self.shared.count(format!("fault: delete path ({res:?})"));
                self.settle(Duration::from_millis(300), |_| false).await;
            }
            Step::CreatePath(res) => {
                let path = self.path_of(res);
                let data = if res == Res::Sem { MAX_LEASES.to_string() } else { String::new() };
                let open = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
                let created = self.raw.create(&path, data.as_bytes(), &open).await.map(|_| ());
                note(self, format!("create {path}: {created:?}"));
                self.shared.count("fault: create path");
            }
            Step::DeleteHolder(res) => {
                let path = self.path_of(res);
                let children = match self.raw.list_children(&path).await {
                    Ok(children) => children,
                    Err(zk::Error::NoNode) => Vec::new(),
                    Err(e) => panic!("list {path}: {e}"),
                };
                let first = match res {
                    Res::Lock => naming::queue(&children, &[]).first().map(|c| c.name.clone()),
                    _ => children.iter().min().cloned(),
                };
                let Some(first) = first else {
                    return note(self, format!("delete the holder's node under {path}: skipped, none"));
                };
                let node = format!("{path}/{first}");
                let data = self
                    .raw
                    .get_data(&node)
                    .await
                    .map(|(d, _)| String::from_utf8_lossy(&d).into_owned())
                    .unwrap_or_default();
                note(self, format!("delete the holder's node {node} (data {data:?}) ..."));
                self.shared.deleting(&node);
                let deleted = self.raw.delete(&node, None).await;
                note(self, format!("deleted {node}: {deleted:?}"));
                self.shared.count(format!("fault: delete holder node ({res:?})"));
                self.settle(Duration::from_millis(300), |_| false).await;
            }
            Step::CloseOrReopen(slot, close) => {
                if self.slots[slot].closed {
                    let incarnation = self.slots[slot].incarnation + 1;
                    note(self, format!("reopen s{slot} as incarnation {incarnation}"));
                    self.slots[slot] = self.open_slot(slot, incarnation).await;
                    self.shared.count("session reopened");
                    return;
                }
                if !close {
                    return note(self, format!("close s{slot}: skipped this time"));
                }
                note(self, format!("close s{slot}"));
                self.shared.count("session closed");
                let session = self.slots[slot].session.clone();
                if timeout(CALL_BOUND, session.close()).await.is_err() {
                    self.shared.violate("hang", format!("close of s{slot} still running after {CALL_BOUND:?}"));
                }
                self.slots[slot].closed = true;
                let bound = Instant::now() + ACQUIRE_SLACK;
                for ((s, _), p) in self.pending.iter_mut() {
                    if *s == slot {
                        p.deadline = Some(p.deadline.unwrap_or(bound).min(bound));
                    }
                }
                note(self, format!("closed s{slot}"));
            }
            Step::KazooAcquire(k, t) => {
                let what = format!("kazoo acquire {} (timeout {}ms)", kazoo_peer::HANDLES[k], t.as_millis());
                let Some(peer) = &mut self.peer else { return note(self, format!("{what}: skipped, no kazoo peer")) };
                self.shared.note(format!("#{n} {what}"));
                peer.acquire(k, t).await;
                self.settle(Duration::from_millis(300), |d| d.peer.as_ref().is_some_and(|p| !p.pending(k))).await;
            }
            Step::KazooRelease(k) => {
                let what = format!("kazoo release {}", kazoo_peer::HANDLES[k]);
                let Some(peer) = &mut self.peer else { return note(self, format!("{what}: skipped, no kazoo peer")) };
                self.shared.note(format!("#{n} {what}"));
                peer.release(k).await;
            }
            Step::RequestFault(slot, kind, aim) => self.request_fault(slot, kind, aim).await,
        }
    }

    /// Starts an acquire on `(slot, kind)` and gives it a moment to return.
    async fn start_acquire(&mut self, slot: usize, kind: usize, mode: Mode) {
        let who = self.who(slot, kind);
        let handle = self.slots[slot].handles[kind].clone();
        self.shared.note(format!("#{} acquire {who} ({})", self.steps_run, mode.label()));
        let started = Instant::now();
        let task = tokio::spawn(acquire_task(self.shared.clone(), who.clone(), kind, handle, mode));
        let deadline = mode.deadline(started);
        self.pending.insert((slot, kind), Pending { who, mode, started, deadline, task, reported: false });
        self.settle(Duration::from_millis(300), |d| d.pending_done((slot, kind))).await;
    }

    async fn release(&mut self, slot: usize, kind: usize) {
        let who = self.who(slot, kind);
        let handle = self.slots[slot].handles[kind].clone();
        let n = self.steps_run;
        self.shared.note(format!("#{n} release {who}"));
        let started = Instant::now();
        match timeout(CALL_BOUND, handle.release()).await {
            Ok(result) => self.shared.note(format!("#{n} release {who} → {result:?} in {:?}", started.elapsed())),
            Err(_) => self.shared.violate("hang", format!("release of {who} still running after {CALL_BOUND:?}")),
        }
    }

    /// Arms a request fault against the session of the handle that acts
    /// next, on the op that action sends, then acts: an acquire for a
    /// create2, getChildren or getData (a waiter's watch on the node ahead,
    /// the hold's watch on its own); a release for a delete or a multi (a
    /// writer's release, with its release marker; or, with nothing
    /// held, a single try, which deletes its node when the lock is taken, as
    /// a semaphore's acquire deletes its admission lock's node); a read of
    /// the contenders or lease holders for a multi-read.
    async fn request_fault(&mut self, slot: usize, kind: usize, aim: Aim) {
        let n = self.steps_run;
        let idle = |d: &Driver, s: usize, k: usize| {
            !d.slots[s].closed && d.pending_done((s, k)) && !d.slots[s].handles[k].is_acquired()
        };
        let held = |d: &Driver, s: usize, k: usize| !d.slots[s].closed && d.slots[s].handles[k].is_acquired();
        let action = match aim.op {
            ReqOp::Delete | ReqOp::Multi => self
                .pick(slot, kind, held)
                .map(|h| (h, Action::Release))
                .or_else(|| self.pick(slot, kind, idle).map(|h| (h, Action::Acquire(Mode::Try)))),
            ReqOp::MultiRead => self.pick(slot, kind, |d, s, _| !d.slots[s].closed).map(|h| (h, Action::Read)),
            _ => self.pick(slot, kind, idle).map(|h| (h, Action::Acquire(aim.mode))),
        };
        let Some(((slot, kind), action)) = action else {
            return self.shared.note(format!("#{n} request fault {}: skipped, no handle to act", aim.describe()));
        };
        let res = match kind {
            SEM if aim.admission && !matches!(action, Action::Read | Action::Release) => Res::Admission,
            SEM => Res::Sem,
            _ => Res::Lock,
        };
        let path = self.path_of(res);
        // A listing's path is the lock path itself; the others' a node's below it.
        let prefix = if aim.op == ReqOp::GetChildren { path } else { format!("{path}/") };
        let id = self.slots[slot].session.status().session_id;
        let armed = inject({
            let prefix = prefix.clone();
            move || aim.arm(id, prefix)
        })
        .await;
        let who = self.who(slot, kind);
        let doing = match action {
            Action::Acquire(mode) => format!("acquire {who} ({})", mode.label()),
            Action::Release => format!("release {who}"),
            Action::Read => format!("read the {} of {who}", if kind == SEM { "lease holders" } else { "contenders" }),
        };
        let FaultId(f) = match armed {
            Ok(f) => f,
            Err(e) => return self.shared.note(format!("#{n} request fault {}: not armed: {e}", aim.describe())),
        };
        self.shared.note(format!(
            "#{n} request fault F{f}: {} of s{slot} ({id:#x}) under {prefix}, then {doing}",
            aim.describe()
        ));
        let tag = format!("F{f} (#{n} {} {} of s{slot})", aim.fault.name(), aim.op.name());
        self.faults.push(tokio::spawn(request_faults::follow(self.shared.clone(), FaultId(f), aim, tag)));
        match action {
            Action::Acquire(mode) => self.start_acquire(slot, kind, mode).await,
            Action::Release => self.release(slot, kind).await,
            Action::Read => {
                let handle = self.slots[slot].handles[kind].clone();
                let started = Instant::now();
                match timeout(CALL_BOUND, handle.queue()).await {
                    Ok(result) => self.shared.note(format!("#{n} {doing} → {result:?} in {:?}", started.elapsed())),
                    Err(_) => self.shared.violate("hang", format!("{doing}: still running after {CALL_BOUND:?}")),
                }
            }
        }
    }

    fn path_of(&self, res: Res) -> String {
        match res {
            Res::Lock => self.lock_path.clone(),
            Res::Sem => self.sem_path.clone(),
            Res::Admission => format!("{}-__lock__", self.sem_path),
        }
    }

    /// Who holds which lock node, as far as the handles say.
    fn claims_by_node(&self) -> HashMap<String, String> {
        let mut claims = HashMap::new();
        for (slot, s) in self.slots.iter().enumerate() {
            for (kind, h) in s.handles.iter().enumerate() {
                if let Some(node) = h.node() {
                    claims.insert(node, self.who(slot, kind));
                }
            }
        }
        claims
    }

    /// An operator's `deleteall`: every child, then the path.
    async fn delete_all(&self, path: &str) -> Vec<String> {
        let mut deleted = Vec::new();
        for _ in 0..10 {
            let children = match self.raw.list_children(path).await {
                Ok(children) => children,
                Err(zk::Error::NoNode) => return deleted,
                Err(e) => panic!("list {path}: {e}"),
            };
            for child in children {
                let node = format!("{path}/{child}");
                self.shared.deleting(&node);
                match self.raw.delete(&node, None).await {
                    Ok(()) => deleted.push(child),
                    Err(zk::Error::NoNode) => {}
                    Err(e) => panic!("delete {path}/{child}: {e}"),
                }
            }
            match self.raw.delete(path, None).await {
                Ok(()) | Err(zk::Error::NoNode) => return deleted,
                Err(zk::Error::NotEmpty) => continue,
                Err(e) => panic!("delete {path}: {e}"),
            }
        }
        deleted
    }

    /// Forgets finished acquires; reports those past their bound.
    fn reap(&mut self) {
        let now = Instant::now();
        self.pending.retain(|_, p| !p.task.is_finished());
        self.faults.retain(|f| !f.is_finished());
        for p in self.pending.values_mut() {
            if let Some(deadline) = p.deadline.filter(|d| now > *d && !p.reported) {
                p.reported = true;
                self.shared.violate(
                    "hang",
                    format!(
                        "{}'s acquire ({}) has not returned {:?} after it started (bound {:?})",
                        p.who,
                        p.mode.label(),
                        p.started.elapsed(),
                        deadline - p.started
                    ),
                );
            }
        }
    }

    fn claims(&self) -> Vec<Claim> {
        let mut claims = Vec::new();
        for (slot, s) in self.slots.iter().enumerate() {
            for (kind, h) in s.handles.iter().enumerate() {
                if !h.is_acquired() {
                    continue;
                }
                let who = self.who(slot, kind);
                let state = format!("{:?}", h.state());
                let handle = Some((slot, kind));
                if kind == SEM {
                    claims.push(Claim { node: who.clone(), who, handle, exclusive: false, lease: true, state });
                } else if let Some(node) = h.node() {
                    claims.push(Claim { who, handle, exclusive: kind != 1, node, lease: false, state });
                }
            }
        }
        if let Some(peer) = &self.peer {
            for (k, node) in peer.holds() {
                let who = format!("kazoo.{}", kazoo_peer::HANDLES[k]);
                let lease = k == 2;
                let node = if lease { kazoo_peer::SEM_IDENTIFIER.to_owned() } else { node };
                claims.push(Claim { who, handle: None, exclusive: k == 0, node, lease, state: "held".into() });
            }
        }
        claims
    }

    /// Which claims have their node on the server, read in one snapshot
    /// (a multi-read) taken after the claims.
    async fn present(&self, claims: &[Claim]) -> Vec<bool> {
        let mut reader = self.raw.new_multi_reader();
        let locks: Vec<&Claim> = claims.iter().filter(|c| !c.lease).collect();
        for claim in &locks {
            reader.add_get_data(&claim.node).unwrap();
        }
        reader.add_get_children(&self.sem_path).unwrap();
        let mut results = reader.commit().await.expect("multi-read");
        let leases = match results.pop() {
            Some(zk::MultiReadResult::Children { children }) => children,
            _ => Vec::new(),
        };
        let mut lease_owners = HashSet::new();
        if claims.iter().any(|c| c.lease) && !leases.is_empty() {
            let mut reader = self.raw.new_multi_reader();
            for lease in &leases {
                reader.add_get_data(&format!("{}/{lease}", self.sem_path)).unwrap();
            }
            for result in reader.commit().await.expect("multi-read") {
                if let zk::MultiReadResult::Data { data, .. } = result {
                    lease_owners.insert(String::from_utf8_lossy(&data).into_owned());
                }
            }
        }
        let mut locks = results.into_iter();
        claims
            .iter()
            .map(|c| {
                if c.lease {
                    lease_owners.contains(&c.node)
                } else {
                    matches!(locks.next(), Some(zk::MultiReadResult::Data { .. }))
                }
            })
            .collect()
    }

    async fn check(&mut self) {
        let claims = self.claims();
        if claims.is_empty() {
            self.missing.clear();
            return;
        }
        let present = self.present(&claims).await;
        let live: Vec<&Claim> = claims.iter().zip(&present).filter(|(_, p)| **p).map(|(c, _)| c).collect();
        let describe = |cs: &[&Claim]| {
            cs.iter().map(|c| format!("{} [{}] {}", c.who, c.state, c.node)).collect::<Vec<_>>().join(", ")
        };

        let locks: Vec<&Claim> = live.iter().copied().filter(|c| !c.lease).collect();
        let exclusive = locks.iter().filter(|c| c.exclusive).count();
        if exclusive > 1 || (exclusive == 1 && locks.len() > 1) {
            let key = format!("overlap {}", describe(&locks));
            if self.reported.insert(key) {
                self.shared.violate(
                    "overlap",
                    format!("holders at once on the lock path, each with its node: {}", describe(&locks)),
                );
            }
        }
        let leases: Vec<&Claim> = live.iter().copied().filter(|c| c.lease).collect();
        if leases.len() > MAX_LEASES as usize {
            let key = format!("leases {}", describe(&leases));
            if self.reported.insert(key) {
                self.shared.violate(
                    "overlap",
                    format!(
                        "{} lease holders, each with its node (max {MAX_LEASES}): {}",
                        leases.len(),
                        describe(&leases)
                    ),
                );
            }
        }

        // zoolock's holders without their node (kazoo is never told: not checked).
        let now = Instant::now();
        let mut seen = HashSet::new();
        for (claim, present) in claims.iter().zip(&present) {
            if *present || claim.handle.is_none() {
                continue;
            }
            let key = (claim.who.clone(), claim.node.clone());
            let since = *self.missing.entry(key.clone()).or_insert(now);
            seen.insert(key);
            if now - since > LOST_BOUND && self.reported.insert(format!("missing {} {}", claim.who, claim.node)) {
                self.shared.violate(
                    "held without node",
                    format!(
                        "{} still reports held [{}] {:?} after its node {} was first seen gone",
                        claim.who,
                        claim.state,
                        now - since,
                        if claim.lease {
                            format!("(the lease with identifier {})", claim.node)
                        } else {
                            claim.node.clone()
                        }
                    ),
                );
            }
        }
        self.missing.retain(|k, _| seen.contains(k));
    }

    /// Ends the run: cancels and drains every acquire, heals, lets the
    /// sessions settle, checks once more, releases everything and looks for
    /// orphan nodes.
    async fn finish(&mut self) {
        self.shared.note(format!("quiescence after {} steps", self.steps_run));
        let stopped_early = !self.config.keep_going && !self.shared.violations.lock().unwrap().is_empty();
        for ((slot, kind), p) in self.pending.iter_mut() {
            if !p.task.is_finished() {
                self.slots[*slot].handles[*kind].cancel();
                let bound = Instant::now() + ACQUIRE_SLACK;
                p.deadline = Some(p.deadline.unwrap_or(bound).min(bound));
            }
        }
        for fault in std::mem::take(&mut self.faults) {
            let _ = timeout(SESSION_TIMEOUT * 5, fault).await;
        }
        let last = self.pending.values().filter_map(|p| p.deadline).max();
        if let Some(last) = last {
            self.settle(last.saturating_duration_since(Instant::now()) + Duration::from_millis(100), |d| {
                d.pending.values().all(|p| p.task.is_finished())
            })
            .await;
        }
        self.reap();
        for p in self.pending.values() {
            p.task.abort();
        }
        if let Some(peer) = &mut self.peer {
            peer.settle(Duration::from_secs(10)).await;
        }
        for (slot, s) in self.slots.iter().enumerate() {
            if s.closed {
                continue;
            }
            let mut status = s.session.subscribe();
            if timeout(SESSION_TIMEOUT * 4, status.wait_for(|s| s.state == SessionState::Connected)).await.is_err() {
                self.shared.note(format!("s{slot}: not connected {:?} after the last fault", SESSION_TIMEOUT * 4));
            }
        }
        if stopped_early {
            return;
        }
        // Holders whose node went must be told, within the bound.
        self.check().await;
        if !self.missing.is_empty() {
            let last = self.missing.values().max().copied().unwrap() + LOST_BOUND + Duration::from_millis(100);
            let gone = self.missing.keys().cloned().collect::<Vec<_>>();
            self.settle(last.saturating_duration_since(Instant::now()), |d| {
                let claims = d.claims();
                !gone.iter().any(|(who, _)| claims.iter().any(|c| &c.who == who))
            })
            .await;
            self.check().await;
        }
        for (slot, s) in self.slots.iter().enumerate() {
            for (kind, h) in s.handles.iter().enumerate() {
                if h.is_acquired() {
                    let result = timeout(CALL_BOUND, h.release()).await;
                    self.shared.note(format!("release {} → {result:?}", self.who(slot, kind)));
                }
            }
        }
        if let Some(peer) = &mut self.peer {
            for k in 0..kazoo_peer::HANDLES.len() {
                peer.release(k).await;
            }
        }
        // Every session still open: only a leaked node can remain.
        for res in [Res::Lock, Res::Sem, Res::Admission] {
            let path = self.path_of(res);
            if common::within_children(&self.raw, &path, Duration::from_secs(10), |c| c.is_empty()).await.is_some() {
                continue;
            }
            for child in common::children(&self.raw, &path).await {
                let node = format!("{path}/{child}");
                let Ok((data, stat)) = self.raw.get_data(&node).await else { continue };
                let owner = self.shared.owners.lock().unwrap().get(&stat.ephemeral_owner).cloned();
                let owner = owner.or_else(|| {
                    self.peer.as_ref().filter(|p| p.session_id() == Some(stat.ephemeral_owner)).map(|_| "kazoo".into())
                });
                self.shared.violate(
                    "orphan",
                    format!(
                        "{node} (data {:?}) left at quiescence, owner {:#x} ({})",
                        String::from_utf8_lossy(&data),
                        stat.ephemeral_owner,
                        owner.unwrap_or_else(|| "unknown".into())
                    ),
                );
            }
        }
        for s in &self.slots {
            if !s.closed {
                let _ = timeout(CALL_BOUND, s.session.close()).await;
            }
        }
    }

    fn report(&self) {
        let counts = self.shared.counts.lock().unwrap();
        let violations = self.shared.violations.lock().unwrap();
        let seed = self.config.seed;
        let mut summary = format!(
            "zoolock invariant run: seed {seed}, {} steps, {:.1}s, kazoo peer: {}\n",
            self.steps_run,
            self.shared.start.elapsed().as_secs_f64(),
            if self.peer.is_some() { "yes" } else { "no (run scripts/lib/setup-python.sh)" }
        );
        let total = |prefix: &str| counts.iter().filter(|(k, _)| k.starts_with(prefix)).map(|(_, v)| v).sum::<u64>();
        summary += &format!("acquisitions: {}\n", total("acquired"));
        for (key, value) in counts.iter() {
            summary += &format!("  {key}: {value}\n");
        }
        summary += &self.shared.requests.lock().unwrap().summary();
        let (dismissed, restored) = zoolock::adaptive_switches();
        summary += &format!("adaptive design: {dismissed} mirrors dismissed, {restored} brought back\n");
        for kind in ["overlap", "held without node", "fencing", "hang", "orphan"] {
            summary += &format!("{kind}s: {}\n", counts.get(&format!("violation: {kind}")).copied().unwrap_or(0));
        }
        println!("{summary}");
        let log = self.shared.log.lock().unwrap();
        let file = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("invariant-{seed}.log"));
        // A soak keeps its log even when clean: what the request faults hit, for the record.
        if self.config.keep_going || !violations.is_empty() {
            let _ = std::fs::write(&file, log.join("\n") + "\n");
            println!("step log: {}", file.display());
        }
        if violations.is_empty() {
            return;
        }
        let first_step = violations[0].0;
        eprintln!("---- step log (last 150 lines of {}; all in {}) ----", log.len(), file.display());
        for line in log.iter().skip(log.len().saturating_sub(150)) {
            eprintln!("{line}");
        }
        let without = if self.config.without.is_empty() {
            String::new()
        } else {
            format!(" ZOOLOCK_WITHOUT={}", self.config.without.join(","))
        };
        let listed: Vec<_> = violations.iter().take(10).map(|(step, v)| format!("  at step {step}: {v}")).collect();
        panic!(
            "{} invariant violation(s), seed {seed}:\n{}\n{summary}replay: ZOOLOCK_SEED={seed} ZOOLOCK_STEPS={first_step}{without} cargo test -p zoolock --test invariant -- --nocapture",
            violations.len(),
            listed.join("\n")
        );
    }
}

async fn acquire_task(shared: Arc<Shared>, who: String, kind: usize, handle: Handle, mode: Mode) {
    let started = Instant::now();
    let result = handle.acquire(mode.options()).await;
    let took = started.elapsed();
    match result {
        Ok(true) => {
            shared.count(format!("acquired {}", KINDS[kind]));
            let (node, token) = (handle.node(), handle.token());
            let at = node.as_deref().map(|n| n.rsplit('/').next().unwrap_or(n)).unwrap_or("(lease)");
            shared.note(format!(
                "{who}: acquire ({}) → held after {took:?}: {at}, token {token:x?}, {:?}",
                mode.label(),
                handle.state()
            ));
            if let Some(token) = token {
                shared.fence(&who, node.as_deref().unwrap_or_default(), kind != 1, token);
            } else if kind != SEM {
                shared.count("acquire true but not held");
            }
        }
        Ok(false) => {
            shared.count("acquire false");
            shared.note(format!("{who}: acquire ({}) → false after {took:?}", mode.label()));
        }
        Err(e) => {
            let name = format!("{e:?}");
            let name = name.split(['(', ' ', '{']).next().unwrap_or("").to_owned();
            shared.count(format!("acquire error {name}"));
            shared.note(format!("{who}: acquire ({}) → error after {took:?}: {e}", mode.label()));
        }
    }
}

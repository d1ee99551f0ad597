//! The main job under faults: the same workers against a 3-node ensemble
//! while an injector expires sessions of holders and waiters, partitions the
//! holder for shorter and longer than the session timeout, kills and
//! restarts servers (the leader included), SIGKILLs the holding worker,
//! deletes the lock path (an operator's `deleteall`) or a zoolock holder's
//! node (the usual way to break a "stuck" lock), and arms request-level
//! faults against a worker's session: the reply to its next create dropped,
//! its next create landing late, a reset before the reply to its next delete.

use std::collections::{BTreeMap, HashMap};
use std::io::Write;
use std::process::{Child, ChildStdin};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use zk_harness::{Ensemble, FaultId, FaultState, Landing, Op, Options, Select};
use zoolock::{Lock, Session, SessionOptions};

use crate::logs::Log;
use crate::operator::Operator;
use crate::resource::{now_ns, Record, Resource};
use crate::{ledger, spawn_worker, stop_all, Args, Spawned, START_LIMIT};

/// Workers' session timeout: partitions last shorter or longer than this.
pub const SESSION_TIMEOUT: Duration = Duration::from_secs(4);
/// How long workers keep the lock, so that faults often catch a holder.
pub const HOLD: Duration = Duration::from_millis(30);
/// How late a holder may learn that its lock is suspended or lost.
const TOLD_WITHIN: Duration = Duration::from_secs(SESSION_TIMEOUT.as_secs() + 1);
/// How late a zoolock holder may learn that its node was deleted: one watch
/// notice and the read that confirms it, with room for a loaded machine.
const DELETION_TOLD_WITHIN: Duration = Duration::from_secs(2);

const KINDS: [&str; 11] = [
    "expire holder",
    "expire waiter",
    "short partition",
    "long partition",
    "kill server",
    "kill holder",
    "delete path",
    "delete holder node",
    "drop create reply",
    "land create late",
    "reset delete reply",
];

/// Workers on zoolock, which tell a holder that its node was deleted
/// (`Lost(NodeDeleted)`); kazoo and Curator do not notice, so a holder-node
/// deletion is aimed at these only.
fn zoolock_based(worker: &str) -> bool {
    ["rust-", "python-", "csharp-"].iter().any(|p| worker.starts_with(p))
}

/// A deletion of a zoolock holder's node by the operator, made while the
/// holder waited in its critical section: it must be told.
struct Deletion {
    worker: String,
    /// When the delete was sent and when it was answered.
    sent: u128,
    done: u128,
}

struct Worker {
    child: Child,
    stdin: ChildStdin,
}

impl Worker {
    /// Takes a started worker over: its stdout lines (`first`, then the rest) go to `follow`.
    fn adopt(s: Spawned, first: Option<String>, heard: &Arc<Mutex<Heard>>, idle: &Sender<()>) -> (String, Worker) {
        let Spawned { name, mut child, lines, .. } = s;
        let stdin = child.stdin.take().expect("piped stdin");
        follow(first.into_iter().chain(lines), name.clone(), heard.clone(), idle.clone());
        (name, Worker { child, stdin })
    }
}

/// Signalled with each `told` line added to [`Heard`] (the one `Heard` of a run).
static TOLD: Condvar = Condvar::new();

/// Waits until `worker` said it lost its hold to a deletion, at or after
/// `since` (ns), or `limit` passed.
fn wait_told(heard: &Mutex<Heard>, worker: &str, since: u128, limit: Duration) {
    let heard = heard.lock().unwrap();
    drop(TOLD.wait_timeout_while(heard, limit, |h| !h.told.iter().any(|t| told_deleted(t, worker, since))).unwrap());
}

/// Whether `told` says `worker` lost its hold to a deletion at or after `since` (ns).
fn told_deleted((w, state, ns): &(String, String, u128), worker: &str, since: u128) -> bool {
    w == worker && state == "NodeDeleted" && *ns >= since
}

/// What the workers' stdout lines tell the driver.
#[derive(Default)]
struct Heard {
    sessions: HashMap<String, i64>,
    /// (worker, state, ns) of each time a worker was told its session was
    /// suspended or lost, or its hold lost (the state is then the reason, e.g. `NodeDeleted`).
    told: Vec<(String, String, u128)>,
    /// (worker, ns) of each time a worker's session was connected again.
    connected: Vec<(String, u128)>,
    /// The zoolock workers' metrics, said before `idle`.
    metrics: crate::metrics::Metrics,
}

pub fn run(args: &Args, log: &Arc<Log>) -> Result<bool, String> {
    say!("starting a 3-node ZooKeeper ensemble…");
    let ensemble = Ensemble::start(3, Options::default()).map_err(|e| e.to_string())?;
    let connect = ensemble.connect_string();
    let resource = Resource::start().map_err(|e| format!("cannot start the resource: {e}"))?;
    let heard = Arc::new(Mutex::new(Heard::default()));
    let (idle_tx, idle_rx) = channel();
    let mut workers: BTreeMap<String, Worker> = BTreeMap::new();
    let mut next = 0;
    // The first workers must all start (see `Spawned::started`); a
    // replacement that does not shows as a worker that exited by itself.
    let mut first = Vec::new();
    for _ in 0..args.workers.max(args.languages.len()).max(3) {
        first.push(spawn_worker(&connect, None, args, &resource, next, None, log)?);
        next += 1;
    }
    let deadline = Instant::now() + START_LIMIT;
    let mut said = Vec::new();
    for i in 0..first.len() {
        match first[i].started(deadline) {
            Ok(line) => said.push(line),
            Err(message) => {
                stop_all(first);
                return Err(message);
            }
        }
    }
    for (s, line) in first.into_iter().zip(said) {
        let (name, worker) = Worker::adopt(s, Some(line), &heard, &idle_tx);
        workers.insert(name, worker);
    }
    let mut start_worker = |workers: &mut BTreeMap<String, Worker>| -> Result<(), String> {
        let s = spawn_worker(&connect, None, args, &resource, next, None, log)?;
        next += 1;
        let (name, worker) = Worker::adopt(s, None, &heard, &idle_tx);
        workers.insert(name, worker);
        Ok(())
    };
    let observer =
        Session::connect_blocking(SessionOptions::new(ensemble.direct_connect_string())).map_err(|e| e.to_string())?;
    let queue = Lock::mutex(&observer, &args.path).map_err(|e| e.to_string())?;
    let operator = Operator::connect(&ensemble.direct_connect_string())?;
    say!("{} workers on {}; injecting faults for {:?}", workers.len(), args.path, args.duration);

    if !resource.wait_for_writes(1, Duration::from_secs(30)) {
        return Err("no worker got the lock within 30 s".into());
    }
    let (started, t0) = (Instant::now(), now_ns());
    let mut rng = Rng(now_ns() as u64 | 1);
    let mut injected: BTreeMap<&str, usize> = BTreeMap::new();
    let mut partitions: Vec<(String, u128)> = Vec::new();
    let (mut round, mut first_pass, mut tries) = (0, 0, 0);
    let mut died: Vec<String> = Vec::new();
    // When the operator's `deleteall`s ended (ns), and its deletions of zoolock holders' nodes.
    let (mut path_deletions, mut deletions): (Vec<(u128, u128)>, Vec<Deletion>) = (Vec::new(), Vec::new());
    // The sessions the servers were made to end (each deletes its worker's node).
    let mut expiries: Vec<Deletion> = Vec::new();
    // The request-level fault armed last, and how each ended.
    let mut pending: Option<(&str, FaultId)> = None;
    let mut requests: BTreeMap<(&str, &str), usize> = BTreeMap::new();
    while started.elapsed() < args.duration {
        // What did not fire before the next fault is disarmed.
        if let Some((kind, fault)) = pending.take() {
            *requests.entry((kind, settle(&ensemble, fault))).or_default() += 1;
        }
        // A worker that exits by itself has a bug worth failing the run for;
        // a fresh one keeps the load up meanwhile.
        let exited: Vec<String> = workers
            .iter_mut()
            .filter_map(|(name, w)| matches!(w.child.try_wait(), Ok(Some(_))).then(|| name.clone()))
            .collect();
        for name in exited {
            let mut worker = workers.remove(&name).expect("listed");
            say!("  worker {name} exited by itself: {:?}", worker.child.wait());
            died.push(name);
            start_worker(&mut workers)?;
        }
        // Every kind in turn (each retried a few times if it found no target), then at random.
        let kind = if first_pass < KINDS.len() { KINDS[first_pass] } else { KINDS[rng.below(KINDS.len())] };
        round += 1;
        let contenders = queue.queue_blocking().unwrap_or_default();
        // Only live workers: a SIGKILLed one's node lingers until its session times out.
        let session_of = |name: &str| {
            workers.contains_key(name).then(|| heard.lock().unwrap().sessions.get(name).copied()).flatten()
        };
        let holder = contenders.first().cloned();
        let done = match kind {
            "expire holder" | "expire waiter" => {
                let target = if kind == "expire holder" { holder } else { contenders.get(1 + rng.below(3)).cloned() };
                match target.and_then(|n| session_of(&n).map(|id| (n, id))) {
                    Some((worker, id)) => {
                        let sent = now_ns();
                        let expired = ensemble.expire(id).is_ok();
                        if expired {
                            expiries.push(Deletion { worker, sent, done: now_ns() });
                        }
                        expired
                    }
                    None => false,
                }
            }
            "short partition" | "long partition" => match holder.and_then(|n| session_of(&n).map(|id| (n, id))) {
                Some((name, id)) if ensemble.partition(id).is_ok() => {
                    say!("  partitioning {name} (session {id:#x})");
                    partitions.push((name, now_ns()));
                    // Short: long enough to be noticed (2/5 of the session timeout), short enough for the session to survive.
                    let cut = if kind == "short partition" { SESSION_TIMEOUT * 3 / 4 } else { SESSION_TIMEOUT * 3 / 2 };
                    std::thread::sleep(cut); // the partition's length, not a wait for an event
                    ensemble.heal(id).is_ok()
                }
                _ => false,
            },
            "kill server" => {
                let victim = if round % 2 == 0 { ensemble.leader().unwrap_or(0) } else { rng.below(3) };
                let killed = ensemble.kill(victim).is_ok();
                std::thread::sleep(Duration::from_millis(500)); // the outage's length
                killed && ensemble.restart(victim).is_ok()
            }
            "delete path" => match (now_ns(), operator.delete_all(&args.path)) {
                (begun, Ok((deleted, children))) => {
                    // The children went even if the path stayed: holders may have lost their nodes.
                    if deleted || children > 0 {
                        path_deletions.push((begun, now_ns()));
                    }
                    if !deleted {
                        say!("  deleted {children} children of {}, but it kept getting new ones", args.path);
                    }
                    deleted
                }
                (_, Err(e)) => {
                    say!("  deleting {}: {e}", args.path);
                    false
                }
            },
            "delete holder node" => {
                // Right after a zoolock worker's write, whose answer waits until
                // the worker was told (or too long passed): it holds the lock
                // meanwhile, its node first in the queue. Without the wait, a
                // release soon after the write could come before the notice,
                // and a hold released is no longer told it was lost.
                let held = resource.hold_next_reply(Duration::from_secs(5), |r: &Record| zoolock_based(&r.worker));
                let node = held.as_ref().and_then(|held| {
                    let write = &held.record;
                    let first =
                        operator.first_node(&args.path).map_err(|e| say!("  listing {}: {e}", args.path)).ok()??;
                    (Some(first.owner) == session_of(&write.worker) && first.czxid == write.token).then_some(first)
                });
                match held.zip(node) {
                    Some((held, node)) => {
                        let worker = held.record.worker.clone();
                        let sent = now_ns();
                        let deleted = operator.delete(&node.path).unwrap_or_else(|e| {
                            say!("  deleting {}: {e}", node.path);
                            false
                        });
                        let done = now_ns();
                        if deleted {
                            say!("  deleted {worker}'s node {}", node.path);
                            wait_told(&heard, &worker, sent, DELETION_TOLD_WITHIN + Duration::from_secs(1));
                            deletions.push(Deletion { worker, sent, done });
                        }
                        deleted
                    }
                    None => false,
                }
            }
            "drop create reply" | "land create late" | "reset delete reply" => {
                // A create that lands late is aimed at zoolock's workers only:
                // kazoo's retry looks for its node once, creates another, and
                // the late one stays an orphan ahead of everyone for kazoo's
                // session's life (seen here: "nodes left by: [kazoo-6]").
                let live: Vec<(String, i64)> = workers
                    .keys()
                    .filter(|n| kind != "land create late" || zoolock_based(n))
                    .filter_map(|n| session_of(n).map(|id| (n.clone(), id)))
                    .collect();
                if live.is_empty() {
                    false
                } else {
                    let (name, id) = live[rng.below(live.len())].clone();
                    // Lock nodes only (not the path's own creation); zoolock creates with create2, kazoo with create.
                    let nodes = format!("{}/", args.path);
                    let creates = |s: Select| s.op(Op::Create).op(Op::Create2).path(nodes.as_str());
                    let armed = match kind {
                        "drop create reply" => ensemble.drop_reply(creates(Select::session(id))),
                        "land create late" => {
                            ensemble.land_late(creates(Select::session(id)), Landing::Before(creates(Select::any())))
                        }
                        // A release: a plain delete, or a listing writer's multi with its release marker.
                        _ => ensemble
                            .reset_before_reply(Select::session(id).op(Op::Delete).op(Op::Multi).path(nodes.as_str())),
                    };
                    match armed {
                        Ok(fault) => {
                            say!("  armed against {name} (session {id:#x})");
                            pending = Some((kind, fault));
                            true
                        }
                        Err(e) => {
                            say!("  arming against {name}: {e}");
                            false
                        }
                    }
                }
            }
            _ => match holder.and_then(|n| workers.remove(&n).map(|w| (n, w))) {
                Some((_, mut worker)) => {
                    let _ = worker.child.kill(); // SIGKILL
                    let _ = worker.child.wait();
                    start_worker(&mut workers)?;
                    true
                }
                None => false,
            },
        };
        if done {
            *injected.entry(kind).or_default() += 1;
        }
        tries += 1;
        if done || tries == 5 {
            (first_pass, tries) = (first_pass + 1, 0);
        }
        say!(
            "  {:>5.1}s {kind:<18} {:<4} acquisitions so far {}",
            started.elapsed().as_secs_f64(),
            if done { "ok" } else { "skip" },
            resource.count()
        );
        std::thread::sleep(Duration::from_millis(300 + rng.below(700) as u64)); // the pace of faults
    }

    if let Some((kind, fault)) = pending.take() {
        *requests.entry((kind, settle(&ensemble, fault))).or_default() += 1;
    }

    // Stop, let every worker release and report idle with its session still
    // open, then count the nodes left: any is an orphan.
    for worker in workers.values_mut() {
        let _ = writeln!(worker.stdin, "stop");
    }
    let idle = wait_idle(&idle_rx, workers.len(), Duration::from_secs(30));
    // A SIGKILLed worker's node lives until its session times out; past
    // that, any node left is an orphan.
    let end = Instant::now() + SESSION_TIMEOUT * 2;
    let left = loop {
        let left = queue.queue_blocking().map_err(|e| e.to_string())?;
        if left.is_empty() || Instant::now() > end {
            break left;
        }
        std::thread::sleep(Duration::from_millis(200)); // zoolock has no child watch to wait on
    };
    let orphans = left.len();
    if orphans > 0 {
        say!("  nodes left by: {left:?}");
    }
    for (_, mut worker) in std::mem::take(&mut workers) {
        drop(worker.stdin);
        let _ = worker.child.wait();
    }
    observer.close_blocking();

    let report = ledger::verify(&resource.ledger.lock().unwrap());
    let names: Vec<&str> = args.languages.iter().map(|l| l.name()).collect();
    report.print(started.elapsed(), &names);
    let metrics = std::mem::take(&mut heard.lock().unwrap().metrics);
    metrics.print();
    let (heard_told, heard_connected) = {
        let h = heard.lock().unwrap();
        (h.told.clone(), h.connected.clone())
    };
    let told = told_latencies(&partitions, &heard_told, &heard_connected);
    for (kind, n) in &injected {
        say!("  faults injected: {kind:<18} {n}");
    }
    for ((kind, outcome), n) in &requests {
        say!("  request-level {kind:<18} {outcome:<14} {n}");
    }
    let slowest = told.iter().max().copied();
    for ((worker, _), latency) in partitions.iter().zip(&told) {
        say!("  partition of {worker}: told after {latency:?}");
    }
    say!(
        "  partitions of a holder: {}, holder told within {:?} (limit {TOLD_WITHIN:?})",
        told.len(),
        slowest.unwrap_or_default()
    );
    let deleted_told = deletion_latencies(&deletions, &heard_told);
    for (d, latency) in deletions.iter().zip(&deleted_told) {
        match latency {
            Some(latency) => say!("  node of {} deleted: told after {latency:?}", d.worker),
            None => say!("  node of {} deleted: never told", d.worker),
        }
    }
    let slowest_deleted = deleted_told.iter().map(|t| t.unwrap_or(Duration::MAX)).max();
    say!(
        "  holder nodes deleted: {}; holder told within {:?} (limit {DELETION_TOLD_WITHIN:?})",
        deletions.len(),
        slowest_deleted.unwrap_or_default()
    );
    let unexplained = blame(&report, t0, &path_deletions, &deletions, &expiries, &heard_told);
    let deposed = report.overlapping().len() - unexplained;
    if deposed > 0 {
        say!("  overlaps of a holder the operator deposed mid-write: {deposed} (no lock can prevent them; see docs/demo.md)");
    }
    say!("  workers idle at the end: {idle}; orphan lock nodes left: {orphans}");
    say!("  workers that exited by themselves: {}", died.len());
    let all_kinds = KINDS.iter().all(|k| injected.contains_key(k));
    let idle_languages = report.idle_languages(&names);
    for language in &idle_languages {
        say!("  no acquisitions by the {language} workers");
    }
    // Tokens out of order only inside an overlap already judged above.
    let regressions_alone = report.token_regressions_outside_overlaps();
    let ok = unexplained == 0
        && regressions_alone == 0
        && idle_languages.is_empty()
        && orphans == 0
        && died.is_empty()
        && slowest.is_none_or(|t| t <= TOLD_WITHIN)
        && slowest_deleted.is_none_or(|t| t <= DELETION_TOLD_WITHIN)
        && report.total() > 0;
    if !all_kinds {
        say!("  not every kind of fault could be injected in {:?}", args.duration);
    }
    say!("client logs: {}", log.path.display());
    say!(
        "{}",
        if ok {
            "VERIFIED under faults: exclusion held, stale writes fenced off, no orphans, holders told"
        } else {
            "VIOLATION"
        }
    );
    if args.json {
        let mut summary = report.json(started.elapsed(), &names);
        summary["mode"] = "faults".into();
        summary["ok"] = ok.into();
        summary["faults_injected"] = serde_json::json!(injected);
        summary["request_level"] = requests
            .iter()
            .map(|((kind, outcome), n)| serde_json::json!({ "kind": kind, "outcome": outcome, "count": n }))
            .collect();
        summary["holder_told_within_seconds"] = slowest.map(|d| d.as_secs_f64()).into();
        summary["deleted_node_told_within_seconds"] =
            slowest_deleted.map(|d| if d == Duration::MAX { f64::INFINITY } else { d.as_secs_f64() }).into();
        summary["deposed_overlaps"] = deposed.into();
        summary["unexplained_overlaps"] = unexplained.into();
        summary["orphans"] = orphans.into();
        summary["workers_idle"] = idle.into();
        summary["workers_died"] = died.len().into();
        summary["metrics"] = metrics.json();
        summary["log"] = log.path.display().to_string().into();
        println!("{summary}");
    }
    Ok(ok)
}

/// Reads a worker's lines on a thread of its own.
fn follow(
    lines: impl Iterator<Item = String> + Send + 'static,
    name: String,
    heard: Arc<Mutex<Heard>>,
    idle: Sender<()>,
) {
    std::thread::spawn(move || {
        for line in lines {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["session", id] => {
                    if let Ok(id) = id.parse() {
                        heard.lock().unwrap().sessions.insert(name.clone(), id);
                    }
                }
                ["told", worker, state, ns] => {
                    if let Ok(ns) = ns.parse() {
                        heard.lock().unwrap().told.push((worker.to_string(), state.to_string(), ns));
                        TOLD.notify_all();
                    }
                }
                ["connected", worker, ns] => {
                    if let Ok(ns) = ns.parse() {
                        heard.lock().unwrap().connected.push((worker.to_string(), ns));
                    }
                }
                ["metrics", ..] => {
                    if let Some(reported) = crate::metrics::parse(&line) {
                        heard.lock().unwrap().metrics.add(&name, reported);
                    }
                }
                ["idle"] => {
                    let _ = idle.send(());
                }
                _ => {}
            }
        }
    });
}

fn wait_idle(idle: &Receiver<()>, workers: usize, limit: Duration) -> usize {
    let end = Instant::now() + limit;
    (0..workers).take_while(|_| idle.recv_timeout(end.saturating_duration_since(Instant::now())).is_ok()).count()
}

/// For each partition of the holder, how long until it was told that its
/// session — and so its lock — was suspended or lost; never told counts as
/// too late. A holder told before the partition and not connected again since
/// (another fault suspended it) already keeps off the resource: told at once.
/// A `connected` line is stamped when the worker's listener ran, a little
/// after the reconnect: one up to [`CONNECTED_LAG`] after the partition's
/// start counts as a reconnect before it (the partition blocks any later one
/// for its whole length), so a holder that was connected is not excused.
fn told_latencies(
    partitions: &[(String, u128)],
    told: &[(String, String, u128)],
    connected: &[(String, u128)],
) -> Vec<Duration> {
    partitions
        .iter()
        .map(|(worker, at)| {
            let last_before = |times: &mut dyn Iterator<Item = u128>| times.filter(|ns| ns < at).max();
            let session_told = told.iter().filter(|(w, state, _)| w == worker && session_state(state));
            let last_told = last_before(&mut session_told.map(|(_, _, ns)| *ns));
            let connected = connected.iter().filter(|(w, _)| w == worker).map(|(_, ns)| *ns);
            let last_connected = connected.filter(|ns| *ns < at + CONNECTED_LAG).max();
            if last_told.is_some_and(|t| last_connected.map_or(true, |c| c < t)) {
                return Duration::ZERO;
            }
            told.iter()
                .filter(|(w, _, ns)| w == worker && ns >= at)
                .map(|(_, _, ns)| Duration::from_nanos((ns - at) as u64))
                .min()
                .unwrap_or(Duration::MAX)
        })
        .collect()
}

/// How long after a reconnect a worker's `connected` line may come.
const CONNECTED_LAG: u128 = 500_000_000;

/// Whether a `told` state is the session's (suspended or lost, in any
/// client's words), not a hold's loss such as `NodeDeleted`.
fn session_state(state: &str) -> bool {
    ["suspended", "lost"].contains(&state.to_ascii_lowercase().as_str())
}

/// For each deletion of a holder's node, how long after the delete's answer
/// the worker said it lost the lock to a deletion (at once if before);
/// `None` if it never did.
fn deletion_latencies(deletions: &[Deletion], told: &[(String, String, u128)]) -> Vec<Option<Duration>> {
    deletions
        .iter()
        .map(|d| {
            told.iter()
                .filter(|t| told_deleted(t, &d.worker, d.sent))
                .map(|(_, _, ns)| Duration::from_nanos(ns.saturating_sub(d.done) as u64))
                .min()
        })
        .collect()
}

/// How far before the stale holder's write a deletion can still have taken
/// its node from it: its acquire returned, then it wrote.
const DEPOSED_BEFORE_WRITE: u128 = 100_000_000;

/// Says whose each overlap is, and returns how many no operator explains.
///
/// An operator deleting a holder's node (alone, or with the whole path)
/// deposes that holder on purpose: the next contender holds at once. A
/// zoolock holder is told within milliseconds (checked apart, against
/// `DELETION_TOLD_WITHIN`), but a write it sent just before cannot be called
/// back, and fencing refuses only a stale write that reaches the resource
/// after the next holder's: such a pair overlaps, and no lock can prevent it.
/// kazoo and Curator holders are never told. So an overlap counts as
/// *deposed* when a deletion that could have taken the older holder's node
/// ran between just before that holder's write and the start of the newer
/// one's. The servers ending a holder's session (a waiter's expiry lands on
/// the holder it just became) delete its node as at once: that deposes it
/// too, if the holder was told (suspended or lost) before the newer one
/// held — what zoolock promises; its write in flight is the overlap. Every
/// other overlap is a violation.
fn blame(
    report: &ledger::Report,
    t0: u128,
    path_deletions: &[(u128, u128)],
    deletions: &[Deletion],
    expiries: &[Deletion],
    told: &[(String, String, u128)],
) -> usize {
    let at = |ns: u128| format!("{:.6}s", ns.saturating_sub(t0) as f64 / 1e9);
    let mut unexplained = 0;
    for (a, b) in report.overlapping() {
        // The stale holder is the one with the older node.
        let (stale, newer) = if a.token < b.token { (a, b) } else { (b, a) };
        let window = |from: u128, to: u128| to + DEPOSED_BEFORE_WRITE >= stale.start && from <= newer.start;
        let path_deleted = path_deletions.iter().any(|&(from, to)| window(from, to));
        let node_deleted = deletions.iter().any(|d| d.worker == stale.worker && window(d.sent, d.done));
        let told_first = told.iter().any(|(w, state, ns)| {
            *w == stale.worker && (state == "Suspended" || state == "Lost") && (stale.start..=newer.start).contains(ns)
        });
        let expired = told_first && expiries.iter().any(|d| d.worker == stale.worker && window(d.sent, d.done));
        let deposed = path_deleted || node_deleted || expired;
        if !deposed {
            unexplained += 1;
        }
        say!("  overlap at {}..{} and {}..{}", at(a.start), at(a.end), at(b.start), at(b.end));
        let near = |ns: u128| ns + 1_000_000_000 >= a.start && ns <= b.end + 1_000_000_000;
        for &(from, to) in path_deletions.iter().filter(|&&(from, to)| near(from) || near(to)) {
            say!("    lock path's nodes deleted at {}..{}", at(from), at(to));
        }
        for d in deletions.iter().filter(|d| near(d.sent)) {
            say!("    node of {} deleted at {}..{}", d.worker, at(d.sent), at(d.done));
        }
        for d in expiries.iter().filter(|d| near(d.sent)) {
            say!("    session of {} ended by the servers at {}..{}", d.worker, at(d.sent), at(d.done));
        }
        for (w, state, ns) in told.iter().filter(|(w, _, ns)| (*w == a.worker || *w == b.worker) && near(*ns)) {
            say!("    {w} told {state} at {}", at(*ns));
        }
        let whose = match (deposed, stale.language.as_str()) {
            (true, _) if expired && !(path_deleted || node_deleted) => format!(
                "deposed: the servers ended {}'s session, and it was told before the next hold while its write was under way",
                stale.worker
            ),
            (true, "kazoo" | "curator") => {
                format!("deposed: the operator deleted {}'s node, and {} is never told", stale.worker, stale.language)
            }
            (true, _) => format!("deposed: the operator deleted {}'s node while its write was under way", stale.worker),
            (false, _) => "VIOLATION: no deletion of the older holder's node explains it".to_string(),
        };
        say!(
            "  overlap: {} ({}, token {}) and {} ({}, token {}): {whose}",
            a.worker,
            a.language,
            a.token,
            b.worker,
            b.language,
            b.token
        );
    }
    unexplained
}

/// Disarms a request-level fault unless it fired, and says how it ended.
fn settle(ensemble: &Ensemble, fault: FaultId) -> &'static str {
    let held = matches!(ensemble.fault(fault).map(|r| r.state), Ok(FaultState::Held));
    match ensemble.disarm(fault).map(|r| r.state) {
        Ok(FaultState::Fired) => "fired",
        Ok(FaultState::Disarmed) if held => "held, dropped",
        Ok(FaultState::Disarmed) => "not fired",
        Ok(FaultState::Missed) => "missed",
        Ok(_) => match ensemble.wait_fault(fault, FaultState::Fired, Duration::from_secs(2)) {
            Ok(_) => "fired",
            Err(_) => "missed",
        },
        Err(_) => "lost track",
    }
}

/// xorshift: fault choices need variety, not quality.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn told(worker: &str, ns: u128) -> (String, String, u128) {
        (worker.to_string(), "Suspended".to_string(), ns)
    }

    const S: u128 = 1_000_000_000;

    /// The overlap of a clean run (24.577–24.581 s): the servers ended the
    /// holder's session (an expiry aimed at it as a waiter), it was told
    /// `Suspended` before the next worker held, and its write was in flight.
    #[test]
    fn a_holder_whose_session_the_servers_ended_is_deposed_if_told_before_the_next_hold() {
        use crate::resource::{Ledger, Record};
        let ms = |n: u128| n * 1_000_000;
        let record = |worker: &str, token, start, end| Record {
            worker: worker.into(),
            language: "rust".into(),
            token,
            start,
            end,
            wait: Duration::ZERO,
        };
        let mut ledger = Ledger::default();
        ledger.records = vec![record("old", 572, ms(24_577), ms(24_581)), record("new", 574, ms(24_580), ms(24_581))];
        let report = ledger::verify(&ledger);
        let expiry = || vec![Deletion { worker: "old".into(), sent: ms(24_570), done: ms(24_586) }];
        let suspended = vec![("old".to_string(), "Suspended".to_string(), ms(24_578))];
        assert_eq!(blame(&report, 0, &[], &[], &expiry(), &suspended), 0);
        // Told only after the next hold began: the promise was broken.
        let late = vec![("old".to_string(), "Suspended".to_string(), ms(24_580) + 1)];
        assert_eq!(blame(&report, 0, &[], &[], &expiry(), &late), 1);
        // No expiry of the old holder's session: nothing explains it.
        assert_eq!(blame(&report, 0, &[], &[], &[], &suspended), 1);
        let other = vec![Deletion { worker: "new".into(), sent: ms(24_570), done: ms(24_586) }];
        assert_eq!(blame(&report, 0, &[], &[], &other, &suspended), 1);
    }

    #[test]
    fn a_holder_suspended_before_a_partition_counts_as_told() {
        let partitions = [("w".to_string(), 3 * S)];
        let connected = |ns| [("w".to_string(), ns)];
        // Suspended by a server kill at 1 s, reconnected only after the 3 s partition: told.
        let latencies = told_latencies(&partitions, &[told("w", S), told("w", 30 * S)], &connected(6 * S));
        assert_eq!(latencies, [Duration::ZERO]);
        // Reconnected before the partition: the next tell counts.
        let latencies = told_latencies(&partitions, &[told("w", S), told("w", 4 * S)], &connected(2 * S));
        assert_eq!(latencies, [Duration::from_secs(1)]);
        // Reconnected just before it, its listener heard just after its start: not excused.
        let latencies =
            told_latencies(&partitions, &[told("w", S), told("w", 4 * S)], &connected(3 * S + CONNECTED_LAG / 2));
        assert_eq!(latencies, [Duration::from_secs(1)]);
        // Never told since a reconnect: too late.
        let latencies = told_latencies(&partitions, &[told("w", S)], &connected(2 * S));
        assert_eq!(latencies, [Duration::MAX]);
        // A hold lost to a deletion is no session state: the worker holds again, connected.
        let deleted = ("w".to_string(), "NodeDeleted".to_string(), S);
        let latencies = told_latencies(&partitions, &[deleted, told("w", 4 * S)], &[]);
        assert_eq!(latencies, [Duration::from_secs(1)]);
        // Another worker's tell does not count.
        let latencies = told_latencies(&partitions, &[told("v", S)], &[]);
        assert_eq!(latencies, [Duration::MAX]);
    }
}

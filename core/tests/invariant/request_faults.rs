//! Request-level faults of the invariant test (harness/: `drop_reply`,
//! `land_late`, `reset_before_reply`). The driver arms one against the
//! session of the handle it is about to make act, on the op that action
//! sends, then acts; [`follow`] logs which request the fault hit and what the
//! server answered, and tallies whether it fired, found no request in time
//! (unmatched), was missed, or held a request that never landed.
//!
//! How late a held request may land: ZooKeeper applies a session's writes in
//! the order its servers read them, so a write read before a connection
//! broke is applied before every write the session sends after reconnecting,
//! or never (a server that no longer owns the session refuses it); only the
//! session's reads on the new connection (a lagging follower) can miss it.
//! `land_late` before the session's next write (create2 or delete) is that.
//! `land_late` after N further requests is stronger when a write is among
//! them: an orphan or overlap found only with it must be checked against
//! this before it is called a defect (seed 909 of the first hunt: a lease
//! create landing after the dropped acquire's own delete of it).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use zk_harness::{FaultId, FaultReport, FaultState, Landing, Op, Select};

use super::{harness, inject, Mode, Rng, Shared};

/// How long an armed fault waits for its request before it is disarmed: the
/// action it is aimed at sends it at once, or (a waiter's getData, a release
/// of the admission lock) within a round trip or a wake.
const ARMED_BOUND: Duration = Duration::from_secs(4);
/// How long a matched fault may take to finish: a reply comes back, or a held
/// request lands among the session's next requests after its reconnect. A
/// held request still waiting then is dropped (disarmed): it never lands.
const FIRE_BOUND: Duration = Duration::from_secs(4);
/// A violation lists the request faults that hit a request this recently.
const RECENT: Duration = Duration::from_secs(10);

/// What the proxy does to the request it picks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    DropReply,
    ResetBeforeReply,
    /// `land_late`, landing just before the session's next write (create2 or delete).
    LandBeforeWrite,
    /// `land_late`, landing after this many further requests of the session.
    LandAfter(u32),
}

impl Fault {
    /// The name it is counted by (and left out by, in `ZOOLOCK_WITHOUT`).
    pub fn name(self) -> &'static str {
        match self {
            Fault::DropReply => "drop-reply",
            Fault::ResetBeforeReply => "reset-before-reply",
            Fault::LandBeforeWrite => "land-late-before-write",
            Fault::LandAfter(_) => "land-late-after",
        }
    }

    fn label(self) -> String {
        match self {
            Fault::DropReply => "drop_reply".into(),
            Fault::ResetBeforeReply => "reset_before_reply".into(),
            Fault::LandBeforeWrite => "land_late (before the next write)".into(),
            Fault::LandAfter(n) => format!("land_late (after {n} more requests)"),
        }
    }
}

/// The requests zoolock sends for a lock or a semaphore: creates are
/// `create2`, listings `getChildren`, the waiter's and the hold's watches
/// `getData`; its only multi is the multi-read of `contenders` and
/// `lease_holders`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReqOp {
    Create2,
    Delete,
    /// A writer's release: its delete with its release marker.
    Multi,
    GetChildren,
    GetData,
    MultiRead,
}

const OPS: [ReqOp; 6] =
    [ReqOp::Create2, ReqOp::Delete, ReqOp::Multi, ReqOp::GetChildren, ReqOp::GetData, ReqOp::MultiRead];
const FAULTS: [&str; 4] = ["drop-reply", "reset-before-reply", "land-late-before-write", "land-late-after"];

impl ReqOp {
    fn op(self) -> Op {
        match self {
            ReqOp::Create2 => Op::Create2,
            ReqOp::Delete => Op::Delete,
            ReqOp::Multi => Op::Multi,
            ReqOp::GetChildren => Op::GetChildren,
            ReqOp::GetData => Op::GetData,
            ReqOp::MultiRead => Op::MultiRead,
        }
    }

    pub fn name(self) -> &'static str {
        self.op().name()
    }
}

/// One request fault of the schedule: the fault, the op and which of the
/// session's requests of that op (`nth`), the acquire mode if the action is
/// an acquire, and for a semaphore whether to aim at its admission lock.
#[derive(Debug, Clone, Copy)]
pub struct Aim {
    pub fault: Fault,
    pub op: ReqOp,
    pub nth: u32,
    pub mode: Mode,
    pub admission: bool,
}

impl Aim {
    pub fn draw(rng: &mut Rng) -> Aim {
        let fault = match rng.below(100) {
            0..=29 => Fault::DropReply,
            30..=54 => Fault::ResetBeforeReply,
            55..=79 => Fault::LandBeforeWrite,
            _ => Fault::LandAfter(1 + rng.below(3) as u32),
        };
        let op = match rng.below(100) {
            0..=29 => ReqOp::Create2,
            30..=39 => ReqOp::Delete,
            40..=49 => ReqOp::Multi,
            50..=67 => ReqOp::GetChildren,
            68..=89 => ReqOp::GetData,
            _ => ReqOp::MultiRead,
        };
        let nth = if rng.below(5) == 0 { 2 } else { 1 };
        Aim { fault, op, nth, mode: Mode::draw(rng), admission: rng.below(3) == 0 }
    }

    /// Arms the fault on `session`'s requests of this op under `prefix`.
    pub fn arm(self, session: i64, prefix: String) -> zk_harness::Result<FaultId> {
        let select = Select::session(session).op(self.op.op()).path(prefix).nth(self.nth);
        let zk = harness();
        match self.fault {
            Fault::DropReply => zk.drop_reply(select),
            Fault::ResetBeforeReply => zk.reset_before_reply(select),
            Fault::LandBeforeWrite => {
                zk.land_late(select, Landing::Before(Select::any().op(Op::Create2).op(Op::Delete).op(Op::Multi)))
            }
            Fault::LandAfter(n) => zk.land_late(select, Landing::After(Select::any().nth(n))),
        }
    }

    /// "drop_reply on the 2nd create2".
    pub fn describe(self) -> String {
        let nth = if self.nth == 1 { "first".to_owned() } else { format!("{}nd", self.nth) };
        format!("{} on the {nth} {}", self.fault.label(), self.op.name())
    }

    /// Whether `ZOOLOCK_WITHOUT`'s `word` leaves this fault out.
    pub fn left_out_by(self, word: &str) -> bool {
        word == self.fault.name()
            || word == self.op.name()
            || (word == "land-late" && self.fault.name().starts_with(word))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Fired,
    /// No request matched within [`ARMED_BOUND`]; disarmed.
    Unmatched,
    /// Matched, but its connection closed before it could finish.
    Missed,
    /// land_late: held, but no later request landed it within [`FIRE_BOUND`];
    /// disarmed, which drops it.
    Unlanded,
    /// Matched, and neither fired nor ended within [`FIRE_BOUND`].
    Stuck,
}

const OUTCOMES: [(Outcome, &str); 5] = [
    (Outcome::Fired, "fired"),
    (Outcome::Unmatched, "unmatched"),
    (Outcome::Missed, "missed"),
    (Outcome::Unlanded, "unlanded"),
    (Outcome::Stuck, "stuck"),
];

/// The request faults of a run: counts by kind, op and outcome, and the
/// requests hit lately, for the violations they may explain.
#[derive(Default)]
pub struct Record {
    counts: BTreeMap<(&'static str, &'static str, Outcome), u64>,
    /// By fault id: when it hit its request, and what it did.
    recent: BTreeMap<u64, (Instant, String)>,
}

impl Record {
    /// The requests hit within [`RECENT`], for a violation's message.
    pub fn recent(&self) -> Vec<String> {
        let now = Instant::now();
        self.recent
            .values()
            .filter(|(at, _)| now - *at <= RECENT)
            .map(|(at, what)| format!("{what}, {:.1}s ago", (now - *at).as_secs_f64()))
            .collect()
    }

    /// Records what fault `id` did; the time is when it first hit its request.
    fn hit(&mut self, id: FaultId, what: String) {
        let now = Instant::now();
        self.recent.retain(|_, (at, _)| now - *at <= RECENT);
        self.recent.entry(id.0).and_modify(|e| e.1 = what.clone()).or_insert((now, what));
    }

    pub fn total(&self, outcome: &str) -> u64 {
        self.counts.iter().filter(|((_, _, o), _)| name(*o) == outcome).map(|(_, n)| n).sum()
    }

    /// "request faults: 120 armed, 98 fired, ..." and a line per kind: fired by op, the rest.
    pub fn summary(&self) -> String {
        let armed: u64 = self.counts.values().sum();
        let totals: Vec<String> = OUTCOMES.iter().map(|(_, o)| format!("{} {o}", self.total(o))).collect();
        let mut text = format!("request faults: {armed} armed, {}\n", totals.join(", "));
        for fault in FAULTS {
            let of = |outcome: Outcome, op: Option<&str>| -> u64 {
                self.counts
                    .iter()
                    .filter(|((f, o, oc), _)| *f == fault && *oc == outcome && op.is_none_or(|op| op == *o))
                    .map(|(_, n)| n)
                    .sum()
            };
            let by_op: Vec<String> =
                OPS.iter().map(|op| format!("{} {}", op.name(), of(Outcome::Fired, Some(op.name())))).collect();
            let rest: Vec<String> =
                OUTCOMES[1..].iter().map(|(outcome, o)| format!("{o} {}", of(*outcome, None))).collect();
            text += &format!(
                "  request fault {fault}: fired {} ({}), {}\n",
                of(Outcome::Fired, None),
                by_op.join(", "),
                rest.join(", ")
            );
        }
        text
    }
}

fn name(outcome: Outcome) -> &'static str {
    OUTCOMES.iter().find(|(o, _)| *o == outcome).map_or("?", |(_, n)| n)
}

/// "getData /x/y xid 12"
fn request(report: &FaultReport) -> String {
    match &report.request {
        Some(r) => format!(
            "{} {} xid {}",
            Op::from_code(r.op).map_or_else(|| format!("op {}", r.op), |op| op.name().to_owned()),
            r.path.as_deref().unwrap_or("-"),
            r.xid
        ),
        None => "no request".into(),
    }
}

/// "the server answered err 0 (ok) at zxid 0x1a2"
fn reply(report: &FaultReport) -> String {
    match report.reply {
        Some((zxid, 0)) => format!("the server applied it (ok, zxid {zxid:#x})"),
        Some((zxid, err)) => format!("the server answered err {err} (zxid {zxid:#x})"),
        None => "no reply".into(),
    }
}

/// Follows fault `id` (armed by step `tag`) to its end, logging the request
/// it hit and what became of it, and counts the outcome.
pub async fn follow(shared: Arc<Shared>, id: FaultId, aim: Aim, tag: String) {
    let matched = inject(move || harness().wait_fault(id, FaultState::AwaitingReply, ARMED_BOUND)).await;
    let mut report = match matched {
        Ok(report) => report,
        // Nothing matched in time, or it was missed: disarm unless it matched meanwhile.
        Err(_) => inject(move || harness().disarm(id)).await.expect("disarm"),
    };
    if report.state == FaultState::Disarmed {
        return end(&shared, id, aim, &tag, Outcome::Unmatched, &report);
    }
    let what = format!("{tag} hit {}", request(&report));
    shared.note(format!("{what} ({})", report.state.name()));
    shared.requests.lock().unwrap().hit(id, what);
    if !matches!(report.state, FaultState::Fired | FaultState::Missed) {
        report = match inject(move || harness().wait_fault(id, FaultState::Fired, FIRE_BOUND)).await {
            Ok(report) => report,
            Err(_) => inject(move || harness().disarm(id)).await.expect("disarm"),
        };
    }
    let outcome = match report.state {
        FaultState::Fired => Outcome::Fired,
        FaultState::Missed => Outcome::Missed,
        FaultState::Disarmed => Outcome::Unlanded,
        _ => Outcome::Stuck,
    };
    end(&shared, id, aim, &tag, outcome, &report);
}

fn end(shared: &Shared, id: FaultId, aim: Aim, tag: &str, outcome: Outcome, report: &FaultReport) {
    let text = match outcome {
        Outcome::Fired => format!(
            "{tag} fired on {} after {:?}: {}",
            request(report),
            report.fired_after.unwrap_or_default(),
            reply(report)
        ),
        Outcome::Unmatched => format!("{tag}: no request matched within {ARMED_BOUND:?}, disarmed"),
        Outcome::Missed => {
            format!("{tag} missed on {}: {}", request(report), report.missed.as_deref().unwrap_or("?"))
        }
        Outcome::Unlanded => {
            format!("{tag} held {} but nothing landed it within {FIRE_BOUND:?}: dropped", request(report))
        }
        Outcome::Stuck => format!("{tag} on {} still {} after {FIRE_BOUND:?}", request(report), report.state.name()),
    };
    shared.note(&text);
    let mut record = shared.requests.lock().unwrap();
    if outcome != Outcome::Unmatched {
        record.hit(id, text);
    }
    *record.counts.entry((aim.fault.name(), aim.op.name(), outcome)).or_default() += 1;
}

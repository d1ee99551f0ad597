//! Request-level faults: which request a fault picks ([`Select`]), what the
//! proxy does to it, and what happened ([`FaultReport`]). The proxies apply
//! them (registry.rs keeps their state); `Ensemble` arms them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::error::{Error, Result};

/// A ZooKeeper request type, with the names and numbers of ZooKeeper's
/// `ZooDefs.OpCode`. Clients differ in which they send: zookeeper-client
/// creates with `Create2`, kazoo with `Create`; a listing is `GetChildren`
/// or `GetChildren2` (with a stat).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Create,
    Delete,
    Exists,
    GetData,
    SetData,
    GetAcl,
    SetAcl,
    GetChildren,
    Sync,
    Ping,
    GetChildren2,
    Check,
    Multi,
    Create2,
    Reconfig,
    CheckWatches,
    RemoveWatches,
    CreateContainer,
    DeleteContainer,
    CreateTtl,
    MultiRead,
    Auth,
    SetWatches,
    Sasl,
    GetEphemerals,
    GetAllChildrenNumber,
    SetWatches2,
    AddWatch,
    WhoAmI,
    CreateSession,
    CloseSession,
}

/// (op, ZooKeeper's name, op code)
const OPS: [(Op, &str, i32); 31] = [
    (Op::Create, "create", 1),
    (Op::Delete, "delete", 2),
    (Op::Exists, "exists", 3),
    (Op::GetData, "getData", 4),
    (Op::SetData, "setData", 5),
    (Op::GetAcl, "getACL", 6),
    (Op::SetAcl, "setACL", 7),
    (Op::GetChildren, "getChildren", 8),
    (Op::Sync, "sync", 9),
    (Op::Ping, "ping", 11),
    (Op::GetChildren2, "getChildren2", 12),
    (Op::Check, "check", 13),
    (Op::Multi, "multi", 14),
    (Op::Create2, "create2", 15),
    (Op::Reconfig, "reconfig", 16),
    (Op::CheckWatches, "checkWatches", 17),
    (Op::RemoveWatches, "removeWatches", 18),
    (Op::CreateContainer, "createContainer", 19),
    (Op::DeleteContainer, "deleteContainer", 20),
    (Op::CreateTtl, "createTTL", 21),
    (Op::MultiRead, "multiRead", 22),
    (Op::Auth, "auth", 100),
    (Op::SetWatches, "setWatches", 101),
    (Op::Sasl, "sasl", 102),
    (Op::GetEphemerals, "getEphemerals", 103),
    (Op::GetAllChildrenNumber, "getAllChildrenNumber", 104),
    (Op::SetWatches2, "setWatches2", 105),
    (Op::AddWatch, "addWatch", 106),
    (Op::WhoAmI, "whoAmI", 107),
    (Op::CreateSession, "createSession", -10),
    (Op::CloseSession, "closeSession", -11),
];

impl Op {
    /// The op code on the wire.
    pub fn code(self) -> i32 {
        OPS.iter().find(|o| o.0 == self).map_or(0, |o| o.2)
    }

    /// ZooKeeper's name: `create2`, `getChildren2`, ...
    pub fn name(self) -> &'static str {
        OPS.iter().find(|o| o.0 == self).map_or("?", |o| o.1)
    }

    pub fn from_code(code: i32) -> Option<Op> {
        OPS.iter().find(|o| o.2 == code).map(|o| o.0)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Op {
    type Err = Error;

    /// ZooKeeper's name, in any case: `create2`, `getchildren2`, `GETDATA`.
    fn from_str(s: &str) -> Result<Op> {
        OPS.iter().find(|o| o.1.eq_ignore_ascii_case(s)).map(|o| o.0).ok_or_else(|| {
            let names: Vec<&str> = OPS.iter().map(|o| o.1).collect();
            Error::new(format!("unknown op {s:?}; one of {}", names.join(", ")))
        })
    }
}

/// Which request a fault picks: the `nth` (from 1) request, counted from
/// when the fault is armed, of one session that has any of `ops` (any op if
/// none) and a path starting with `path` (any path, or none, if unset; the
/// path is a plain string prefix, and a multi's path is its first op's).
/// Only requests with a non-negative xid count: pings, auth and set-watches
/// use ZooKeeper's reserved negative xids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Select {
    pub(crate) session: Option<i64>,
    pub(crate) ops: Vec<Op>,
    pub(crate) path: Option<String>,
    pub(crate) nth: u32,
}

impl Select {
    /// Requests of `session` (a session that went through the proxies).
    pub fn session(session: i64) -> Select {
        Select { session: Some(session), ops: Vec::new(), path: None, nth: 1 }
    }

    /// Requests of the session of the fault (for a [`Landing`]).
    pub fn any() -> Select {
        Select { session: None, ops: Vec::new(), path: None, nth: 1 }
    }

    /// Adds `op` to the ops that match (none yet: any op matches).
    pub fn op(mut self, op: Op) -> Select {
        self.ops.push(op);
        self
    }

    /// Only requests whose path starts with `prefix`.
    pub fn path(mut self, prefix: impl Into<String>) -> Select {
        self.path = Some(prefix.into());
        self
    }

    /// The `n`th matching request (from 1; the default is 1).
    pub fn nth(mut self, n: u32) -> Select {
        self.nth = n;
        self
    }

    pub(crate) fn check(&self) -> Result<()> {
        if self.nth == 0 {
            return Err(Error::new("nth counts from 1"));
        }
        Ok(())
    }

    pub(crate) fn matches(&self, op: i32, path: Option<&str>) -> bool {
        (self.ops.is_empty() || self.ops.iter().any(|o| o.code() == op))
            && self.path.as_deref().map_or(true, |prefix| path.is_some_and(|p| p.starts_with(prefix)))
    }
}

/// When a request held back by [`crate::Ensemble::land_late`] reaches the
/// server: just before or just after the proxy forwards the request that
/// the [`Select`] picks among the session's later ones (on its new
/// connection). `Landing::After(Select::any().nth(n))` lands it after `n`
/// further requests; `Landing::Before(Select::any())` before the next one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landing {
    Before(Select),
    After(Select),
}

impl Landing {
    pub(crate) fn select(&self) -> &Select {
        match self {
            Landing::Before(s) | Landing::After(s) => s,
        }
    }
}

/// An armed fault, for [`crate::Ensemble::fault`] and friends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FaultId(pub u64);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// [`crate::Ensemble::drop_reply`]
    DropReply,
    /// [`crate::Ensemble::land_late`]
    LandLate,
    /// [`crate::Ensemble::reset_before_reply`]
    ResetBeforeReply,
}

impl FaultKind {
    pub fn name(self) -> &'static str {
        match self {
            FaultKind::DropReply => "drop_reply",
            FaultKind::LandLate => "land_late",
            FaultKind::ResetBeforeReply => "reset_before_reply",
        }
    }
}

/// Where a fault is. Each kind goes through its own stages in order, ending
/// at `Fired`; `Missed` and `Disarmed` end it without effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultState {
    /// No request matched yet.
    Armed,
    /// drop_reply, reset_before_reply: the request was forwarded (and for
    /// reset_before_reply the client reset); its reply is not back yet.
    AwaitingReply,
    /// land_late: the request was held back and the connection reset.
    Held,
    /// land_late: the held request went to the server on the session's new
    /// connection; its reply is not back yet.
    Injected,
    /// Done. drop_reply: the reply was dropped and the connection reset.
    /// land_late: the server's reply to the landed request was swallowed.
    /// reset_before_reply: the reply to the request came and was dropped.
    Fired,
    /// The request matched, but its connection closed before the fault
    /// could finish (e.g. the client gave up on it): it does not re-arm.
    Missed,
    /// Disarmed before a request matched, or while held (the held request
    /// is then dropped: it never reaches the server).
    Disarmed,
}

impl FaultState {
    pub fn name(self) -> &'static str {
        match self {
            FaultState::Armed => "armed",
            FaultState::AwaitingReply => "awaiting_reply",
            FaultState::Held => "held",
            FaultState::Injected => "injected",
            FaultState::Fired => "fired",
            FaultState::Missed => "missed",
            FaultState::Disarmed => "disarmed",
        }
    }

    /// Progress towards `Fired`, for waiting on a stage.
    pub(crate) fn rank(self) -> Option<u8> {
        match self {
            FaultState::Armed => Some(0),
            FaultState::AwaitingReply | FaultState::Held => Some(1),
            FaultState::Injected => Some(2),
            FaultState::Fired => Some(3),
            FaultState::Missed | FaultState::Disarmed => None,
        }
    }
}

impl FromStr for FaultState {
    type Err = Error;

    fn from_str(s: &str) -> Result<FaultState> {
        [
            FaultState::Armed,
            FaultState::AwaitingReply,
            FaultState::Held,
            FaultState::Injected,
            FaultState::Fired,
            FaultState::Missed,
            FaultState::Disarmed,
        ]
        .into_iter()
        .find(|st| st.name() == s)
        .ok_or_else(|| Error::new(format!("unknown fault state {s:?}")))
    }
}

/// The request a fault picked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PickedRequest {
    /// As the client sent it (a landed request goes with another: see
    /// [`crate::Ensemble::land_late`]).
    pub xid: i32,
    /// The op code ([`Op::from_code`] names it).
    pub op: i32,
    pub path: Option<String>,
}

/// What a fault did so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultReport {
    pub id: FaultId,
    pub kind: FaultKind,
    pub state: FaultState,
    /// Set once a request matched.
    pub request: Option<PickedRequest>,
    /// The reply the proxy kept from the client (drop_reply,
    /// reset_before_reply) or swallowed (land_late): (zxid, err); err 0 is
    /// success, e.g. -110 NodeExists.
    pub reply: Option<(i64, i32)>,
    /// From arming to `Fired`.
    pub fired_after: Option<Duration>,
    /// Why it was `Missed`.
    pub missed: Option<String>,
}

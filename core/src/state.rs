//! The states and outcomes every binding names: a session's, a handle's,
//! why a hold was lost, how an acquire ended. A leaf: plain values that the
//! session, the holder and the metrics share without importing each other.

use crate::codes::codes;

/// kazoo's connection states, plus `Closed` once the user closed the session
/// (bindings that mirror kazoo report it as `LOST`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// Connected to a server, the session alive.
    Connected,
    /// The connection dropped; the session, and every lock it holds, may
    /// still live. Stop touching guarded resources until `Connected`.
    Suspended,
    /// The session expired: its ephemeral nodes, and so its locks, are gone.
    /// A new session is being opened.
    Lost,
    /// [`Session::close`](crate::Session::close) closed it: every call fails with [`Error::Closed`](crate::Error::Closed).
    Closed,
}

/// The state plus which session it is about: `generation` grows by one each
/// time a lost session is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The state.
    pub state: SessionState,
    /// Which session of this `Session` it is: 0 for the first, one more for each replacement.
    pub generation: u64,
    /// ZooKeeper's id of that session (0 before the first connects).
    pub session_id: i64,
}

/// Where a handle stands; each change also reaches the handle's listeners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockState {
    /// Holds nothing.
    Released,
    /// Holds: the node is first in line and the session is connected.
    Held,
    /// The connection dropped while holding. The hold is still ours if the
    /// session survives (back to `Held`); stop using the guarded resource.
    Suspended,
    /// The hold ended without a release; the reason says why.
    Lost(LostReason),
}

/// Why a hold ended without a release.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    /// The server expired the session, and with it the node.
    SessionExpired,
    /// [`Session::close`](crate::Session::close) closed the session under the hold.
    SessionClosed,
    /// The hold's [lease](crate::Acquire::lease) ran out.
    LeaseExpired,
    /// Someone else deleted the holder's node (an operator breaking a
    /// "stuck" lock): the next contender may already hold it.
    NodeDeleted,
}

/// How an acquire ended. `acquire` says only whether it holds; the bindings
/// need the reason too, because kazoo answers the two ways of not getting
/// it differently (`False` and `LockTimeout`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The handle holds.
    Acquired,
    /// Others hold it: a single try found it taken, or the timeout ran out
    /// while queued behind them.
    Taken,
    /// The timeout (or a single try) ran out before this acquire could
    /// queue, because this same handle held the lock — or another acquire
    /// on it was under way — the whole time. kazoo returns `False` here.
    HandleBusy,
}

impl Outcome {
    /// Whether the handle holds: what `acquire` returns.
    pub fn is_acquired(self) -> bool {
        self == Outcome::Acquired
    }
}

codes! {
    impl SessionState {
        /// Connected to a server, the session alive.
        Connected = 0 => "connected",
        /// The connection dropped; the session, and every lock it holds, may still live. Stop touching guarded resources until connected again.
        Suspended = 1 => "suspended",
        /// The session expired and its locks are gone; a new session is being opened.
        Lost = 2 => "lost",
        /// The session was closed by its owner.
        Closed = 3 => "closed",
    }
}

codes! {
    // 0 is no reason: C#'s `LostReason.None`, a hold that is not lost.
    impl LostReason {
        /// The session expired: its ephemeral nodes, the hold's among them, are gone.
        SessionExpired = 1 => "session_expired",
        /// The session was closed under the hold.
        SessionClosed = 2 => "session_closed",
        /// The lease given at acquire ran out.
        LeaseExpired = 3 => "lease_expired",
        /// Someone else deleted the holder's node (an operator breaking the lock): the next contender may already hold it.
        NodeDeleted = 4 => "node_deleted",
    }
}

impl LockState {
    /// Every state, in code order: `Lost` once for each [`LostReason`].
    pub const ALL: [LockState; 3 + LostReason::ALL.len()] = {
        let mut all = [LockState::Released; 3 + LostReason::ALL.len()];
        all[1] = LockState::Held;
        all[2] = LockState::Suspended;
        let mut i = 0;
        while i < LostReason::ALL.len() {
            all[3 + i] = LockState::Lost(LostReason::ALL[i]);
            i += 1;
        }
        all
    };

    /// The stable number the C ABI and C# carry: a lost state's is 2 plus its reason's.
    pub const fn code(self) -> i32 {
        match self {
            LockState::Released => 0,
            LockState::Held => 1,
            LockState::Suspended => 2,
            LockState::Lost(reason) => 2 + reason.code(),
        }
    }

    /// The stable snake_case name, the same for every reason of `Lost`.
    pub const fn name(self) -> &'static str {
        match self {
            LockState::Released => "released",
            LockState::Held => "held",
            LockState::Suspended => "suspended",
            LockState::Lost(_) => "lost",
        }
    }

    /// What it means, in a line (a lost state's is its reason's).
    pub const fn doc(self) -> &'static str {
        match self {
            LockState::Released => "Holds nothing.",
            LockState::Held => "Holds: the node is first in line and the session is connected.",
            LockState::Suspended => {
                "The connection dropped while holding: stop using the guarded resource until held again."
            }
            LockState::Lost(reason) => reason.doc(),
        }
    }
}

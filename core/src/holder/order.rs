//! The order of a session's holds on each lock path: reported in the
//! order of their fencing tokens, a stale one not at all.

use std::sync::{Mutex, MutexGuard, PoisonError, Weak};

use crate::contender::Won;
use crate::naming::{parent_of, Role};
use crate::per_path::PerPath;
use crate::session::{Extension, Session};

/// Per lock path, the highest fencing tokens of the holds this session
/// reported there, on the latest generation it reported one on; kept at
/// least while the session has a node in line there. A path's record may
/// be forgotten once the session's lines have forgotten the path (only once
/// no node of the session was in line there): every node created later has
/// a higher token than every hold recorded, and so no record to be checked
/// against.
#[derive(Default)]
pub(super) struct HoldOrder(Mutex<PerPath<Highest>>);

impl Extension for HoldOrder {}

#[derive(Default)]
struct Highest {
    /// The session's line on the path ([`Won::line`]), as of the last hold
    /// recorded; `None` for a win with none, which is never forgotten.
    line: Option<Weak<()>>,
    generation: u64,
    /// Of any hold, and of a writer's.
    any: i64,
    writer: i64,
}

/// The order held while a hold is recorded and reported: another hold of
/// the session is admitted before or after, not in between. A win with no
/// lock role (a semaphore's lease) is not ordered, and holds no lock.
pub(super) struct Admitted<'a> {
    _order: Option<MutexGuard<'a, PerPath<Highest>>>,
}

impl Session {
    /// How many lock paths the session keeps a record of holds for now (tests).
    #[doc(hidden)]
    pub fn hold_orders_kept(&self) -> usize {
        HoldOrder::of(self).0.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

impl HoldOrder {
    /// `session`'s.
    pub(super) fn of(session: &Session) -> &HoldOrder {
        session.extension()
    }

    /// Admits `won` (and its parts, each on its own path) to be reported
    /// held, recording its tokens; `None`, recording nothing, if the session
    /// reported a hold before that excludes one of them and has a higher
    /// token. That hold was decided after this node was gone, so this one
    /// is stale: decided on a reply that came before the other's, and acted
    /// on after it (two acquires of one session, polled out of order). The
    /// caller reports the hold before it lets the order go.
    ///
    /// Assumes every hold decided before was right when decided: a writer
    /// holds only once every node created before it (a lower czxid, on this
    /// incarnation of the path or an earlier one) is gone, a reader once
    /// every such writer is, and a deleted node never comes back. And that
    /// zxids only grow, which holds within one ZooKeeper session, one
    /// generation: holds of different generations are not compared (a
    /// persistent node won on an ended generation is not checked).
    pub(super) fn admit(&self, won: &Won) -> Option<Admitted<'_>> {
        let ordered = || won.all().filter_map(|w| w.role.map(|role| (w, parent_of(&w.node), role)));
        if ordered().next().is_none() {
            return Some(Admitted { _order: None });
        }
        // A map of maximums stays whole whatever panicked while it was held.
        let mut paths = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = ordered().any(|(w, path, role)| {
            paths.get(path).is_some_and(|h| h.generation == won.generation && w.token < h.above(role))
        });
        if stale {
            return None;
        }
        let needed = |h: &Highest| h.line.as_ref().is_none_or(|line| line.strong_count() > 0);
        for (w, path, role) in ordered() {
            paths.entry(path, Highest::default, needed).record(w, won.generation, role);
        }
        Some(Admitted { _order: Some(paths) })
    }
}

impl Highest {
    /// The token a hold of `role` must not be below: every earlier hold's
    /// for a writer, every earlier writer's for a reader.
    fn above(&self, role: Role) -> i64 {
        match role {
            Role::Writer => self.any,
            Role::Reader => self.writer,
        }
    }

    /// Records a hold on `generation`: a later one starts afresh, an earlier
    /// one is not recorded.
    fn record(&mut self, won: &Won, generation: u64, role: Role) {
        if generation < self.generation {
            return;
        }
        if generation > self.generation {
            *self = Highest { generation, ..Highest::default() };
        }
        self.line = won.line();
        self.any = self.any.max(won.token);
        if role == Role::Writer {
            self.writer = self.writer.max(won.token);
        }
    }
}

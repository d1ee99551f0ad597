//! What a session knows of its own contenders on each lock path: the node
//! it queued last (a waiter behind it watches it without listing) and the
//! writers that held recently (their deletion hands over without a listing);
//! and the slots that bound its lock-node creates in flight.

use std::collections::{HashSet, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use tokio::sync::Semaphore;

use crate::contender::Place;
use crate::naming::Role;
use crate::per_path::PerPath;
use crate::session::{Extension, Session};

/// At most this many lock-node creates of one session are in flight at
/// once; further acquires wait for a slot, in the order they asked, before
/// they send theirs. A burst of acquires thus never keeps every create's
/// request and reply at once (issue 26).
pub const CREATES_IN_FLIGHT: usize = 128;

/// The session's contenders on each lock path, as the lock's shortcuts need
/// them: the last node queued, and the writers that held recently.
pub(super) struct Lines {
    /// Per lock path, the session's line there; a line with no node may be forgotten.
    lines: Mutex<PerPath<Line>>,
    winners: Mutex<RecentWinners>,
    /// One permit: held from a slot's grant to its create's send. tokio's
    /// semaphore is fair (first asked, first served), so the sends go in the
    /// order the acquires asked for slots, as they went without slots.
    gate: Semaphore,
    /// [`CREATES_IN_FLIGHT`] permits, one per create from its send to its reply.
    slots: Semaphore,
}

impl Default for Lines {
    fn default() -> Self {
        Lines {
            lines: Mutex::default(),
            winners: Mutex::default(),
            gate: Semaphore::new(1),
            slots: Semaphore::new(CREATES_IN_FLIGHT),
        }
    }
}

impl Extension for Lines {}

/// A contender's slot for one create: [`Lines::create_slot`].
pub(super) struct Slot<'a> {
    lines: &'a Lines,
    /// Whether it still holds the gate: until its create is sent.
    gate: bool,
}

impl Slot<'_> {
    /// Its create is sent: the next contender may send its own.
    pub(super) fn sent(&mut self) {
        if std::mem::take(&mut self.gate) {
            self.lines.gate.add_permits(1);
        }
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.sent();
        self.lines.slots.add_permits(1);
    }
}

impl Session {
    /// How many lock paths the session keeps a line for now (tests).
    #[doc(hidden)]
    pub fn lock_lines_kept(&self) -> usize {
        Lines::of(self).lines.lock().unwrap().len()
    }
}

impl Lines {
    /// `session`'s.
    pub(super) fn of(session: &Session) -> &Lines {
        session.extension()
    }

    /// A slot to send one create in, at once if one is free and no other
    /// contender waits for one. Assumes whoever holds a slot is polled on
    /// until its create's reply: every create in flight releases its slot
    /// by its reply, its failure or its drop, never by anyone's release.
    pub(super) fn try_create_slot(&self) -> Option<Slot<'_>> {
        let gate = self.gate.try_acquire().ok()?;
        let slot = self.slots.try_acquire().ok()?;
        gate.forget();
        slot.forget();
        Some(Slot { lines: self, gate: true })
    }

    /// Waits for a slot, behind every contender that asked before. Dropped
    /// while waiting, it leaves nothing: no create was sent, and the gate's
    /// permit goes back with the wait.
    pub(super) async fn create_slot(&self) -> Slot<'_> {
        let gate = self.gate.acquire().await.expect("the gate is never closed");
        let slot = self.slots.acquire().await.expect("the slots are never closed");
        gate.forget();
        slot.forget();
        Slot { lines: self, gate: true }
    }

    pub(super) fn record_winner(&self, node: &str) {
        let mut winners = self.winners.lock().unwrap();
        if winners.order.len() == RECENT_WINNERS {
            let oldest = winners.order.pop_front().expect("full");
            winners.set.remove(&oldest);
        }
        let node: Arc<str> = Arc::from(node);
        winners.order.push_back(node.clone());
        winners.set.insert(node);
    }

    pub(super) fn won_recently(&self, node: &str) -> bool {
        self.winners.lock().unwrap().set.contains(node)
    }

    /// Sends a create (`send`) as this session's next node in line on `path`,
    /// returning its result, a place token to keep while the node is queued
    /// or held, and the prefix and role of the session's previous node on
    /// `path` if that one is still in line. Both are decided under one lock,
    /// so the order of the sends is the order of the sequence numbers.
    pub(super) fn join_line<T>(
        &self,
        path: &str,
        prefix: &str,
        role: Role,
        send: impl FnOnce() -> T,
    ) -> (T, Arc<Place>, Option<(String, Role)>) {
        let mut paths = self.lines.lock().unwrap();
        let new_line = || Line { nodes: Arc::new(()), last: None };
        let line = paths.entry(path, new_line, |line| Arc::strong_count(&line.nodes) > 1);
        let place = Place::new(&line.nodes);
        let ours = LastInLine { prefix: prefix.to_owned(), role, place: Arc::downgrade(&place) };
        let last = line.last.replace(ours);
        let before = last.filter(|last| last.place.strong_count() > 0).map(|last| (last.prefix, last.role));
        (send(), place, before)
    }
}

/// The session's nodes on one lock path.
struct Line {
    /// Cloned into every node's place: the line is empty once this is the only one.
    nodes: Arc<()>,
    /// The node queued last.
    last: Option<LastInLine>,
}

/// A node this session is queueing or holding; `place` dies when it leaves.
struct LastInLine {
    prefix: String,
    role: Role,
    place: Weak<Place>,
}

/// Writer nodes of this session that held their lock, the latest few
/// thousand. A writer holds only once every lower node is gone, and no node
/// can appear below it later, so when such a node is deleted its successor
/// holds the lock without listing the children again: handing over between
/// contenders of one process costs nothing, however long the queue.
#[derive(Default)]
struct RecentWinners {
    /// One copy of each name, shared by the two.
    order: VecDeque<Arc<str>>,
    set: HashSet<Arc<str>>,
}

const RECENT_WINNERS: usize = 4096;

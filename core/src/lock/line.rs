//! What a session knows of its own contenders on each lock path: the node
//! it queued last (a waiter behind it watches it without listing) and the
//! writers that held recently (their deletion hands over without a listing).

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, Mutex, Weak};

use crate::naming::Role;
use crate::session::{Extension, Session};

/// The session's contenders on each lock path, as the lock's shortcuts need
/// them: the last node queued, and the writers that held recently.
#[derive(Default)]
pub(super) struct Lines {
    /// Per lock path, the node this session queued last, while it is queued.
    lines: Mutex<HashMap<String, LastInLine>>,
    winners: Mutex<RecentWinners>,
}

impl Extension for Lines {}

impl Lines {
    /// `session`'s.
    pub(super) fn of(session: &Session) -> &Lines {
        session.extension()
    }

    pub(super) fn record_winner(&self, node: &str) {
        let mut winners = self.winners.lock().unwrap();
        if winners.order.len() == RECENT_WINNERS {
            let oldest = winners.order.pop_front().expect("full");
            winners.set.remove(&oldest);
        }
        winners.order.push_back(node.to_owned());
        winners.set.insert(node.to_owned());
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
    ) -> (T, Arc<()>, Option<(String, Role)>) {
        let place = Arc::new(());
        let mut lines = self.lines.lock().unwrap();
        let ours = LastInLine { prefix: prefix.to_owned(), role, place: Arc::downgrade(&place) };
        let before = lines
            .insert(path.to_owned(), ours)
            .filter(|last| last.place.strong_count() > 0)
            .map(|last| (last.prefix, last.role));
        (send(), place, before)
    }
}

/// A node this session is queueing or holding; `place` dies when it leaves.
struct LastInLine {
    prefix: String,
    role: Role,
    place: Weak<()>,
}

/// Writer nodes of this session that held their lock, the latest few
/// thousand. A writer holds only once every lower node is gone, and no node
/// can appear below it later, so when such a node is deleted its successor
/// holds the lock without listing the children again: handing over between
/// contenders of one process costs nothing, however long the queue.
#[derive(Default)]
struct RecentWinners {
    order: VecDeque<String>,
    set: HashSet<String>,
}

const RECENT_WINNERS: usize = 4096;

//! The node that won, from the attempt's end until the handle records it.

use std::sync::{Arc, Weak};

use tokio::task::JoinHandle;
use zookeeper_client as zk;

use super::removal::{HandOver, Removal, Target};
use super::{DoubtfulTags, Nodes, Place, Removals};
use crate::mirror::{Deletion, Mirror};
use crate::naming::{self, parent_of, Role};
use crate::session::Session;

/// How a hold learns of its node's deletion without a request of its own.
pub(crate) enum NodeWatch {
    /// A data watch set by the read that confirmed the node.
    Oneshot(zk::OneshotWatcher),
    /// The session's mirror of the lock path (see [`crate::mirror`]).
    Mirror(Deletion),
    /// A data watch that fired already, with this event.
    Fired(zk::EventType),
}

/// The node that won, before the handle records it.
pub(crate) struct Won {
    pub node: String,
    pub token: i64,
    pub generation: u64,
    pub ephemeral: bool,
    /// A watch on the node itself, if the recipe set one on the way: the
    /// hold uses it to learn of the node's deletion instead of arming another.
    pub node_watch: Option<NodeWatch>,
    /// Whether the acquire waited for another holder to go (a handoff).
    pub waited: bool,
    /// The lock role the node holds in, which orders its report among the
    /// session's other holds on its path (`holder::order`); `None` for a
    /// semaphore's lease, which is not ordered.
    pub role: Option<Role>,
    /// The node's place in its session's line, kept while it holds.
    pub(super) place: Option<Arc<Place>>,
    /// Until the handle records the win: a dropped acquire (between its
    /// win and the record) removes the node, and its acquire waits for that.
    pub(super) guard: Option<(Session, Removals)>,
    /// The mirror that decided the hold: a release hands the lock over
    /// through it to the node after ours (mirror/mod.rs, point 11); a writer
    /// that held without it marks its release ([`HandOver::Released`]).
    pub hands_over: Option<Arc<Mirror>>,
    /// The other nodes of a hold over several paths (a [`MultiLock`](crate::MultiLock)),
    /// each won on a path of its own, in the order taken; empty otherwise.
    /// They go with this one: recorded, watched, released or lost together.
    pub parts: Vec<Won>,
}

impl Won {
    /// Marks whether the acquire waited for another holder to go (a handoff, in the metrics).
    pub fn with_wait(mut self, waited: bool) -> Won {
        self.waited = waited;
        self
    }

    /// The session's line on the node's path, while any node of the session
    /// is in it; `None` for a node with no place (a semaphore's).
    pub fn line(&self) -> Option<Weak<()>> {
        self.place.as_ref().map(|place| place.line())
    }

    /// This node, then its parts.
    pub fn all(&self) -> impl Iterator<Item = &Won> {
        std::iter::once(self).chain(self.parts.iter())
    }

    /// The removal of the node, when the hold ends.
    pub fn removal(&self, session: &Session) -> Removal {
        Removal {
            session: session.clone(),
            target: Target::Node(self.node.clone()),
            generation: self.generation,
            ephemeral: self.ephemeral,
        }
    }

    /// Sweeps the session's late duplicates of nodes on this lock path,
    /// whatever attempt gave them up: one may have landed after the last
    /// listing (see [`DoubtfulTags`]).
    pub fn spawn_sweep(&self, session: &Session) -> Option<JoinHandle<()>> {
        DoubtfulTags::spawn_sweep(session, parent_of(&self.node))
    }

    /// Removes the node and its parts, and sweeps their late duplicates, in the background.
    pub fn spawn_removals(&self, session: &Session) -> Vec<JoinHandle<()>> {
        self.all()
            .flat_map(|won| std::iter::once(won.removal(session).spawn()).chain(won.spawn_sweep(session)))
            .collect()
    }

    /// Removes the node and its parts for a release: the parts' removals in
    /// tasks of their own, so that all deletes go out at once; each wait is
    /// bounded as [`Removal::run_bounded`]'s, and then goes on in the background.
    pub async fn release(&self, session: &Session) {
        let parts: Vec<_> = self.parts.iter().map(|part| session.spawn(part.removal(session).run_bounded())).collect();
        let name = naming::name_of(&self.node);
        let hand = match &self.hands_over {
            Some(mirror) => mirror.successor(name, self.generation).map_or(HandOver::None, HandOver::To),
            // A writer held only once first in line: its release can say so.
            // Not one decided on the mirror: every session mirroring the path
            // would hear the marker, for no listing waiter behind.
            None if self.role == Some(Role::Writer) => HandOver::Released,
            None => HandOver::None,
        };
        let own = self.removal(session).hand_over_bounded(hand);
        for won in self.all() {
            won.spawn_sweep(session);
        }
        own.await;
        for part in parts {
            let _ = part.await;
        }
    }

    /// Recorded by the handle, whose release now removes the node. A
    /// persistent hold outlives a closed session (see [`Session::close`]).
    pub fn installed(mut self) -> Won {
        if let Some((session, _)) = self.guard.take() {
            if !self.ephemeral {
                Nodes::of(&session).persistent.hold(&Target::Node(self.node.clone()));
            }
        }
        self.parts = std::mem::take(&mut self.parts).into_iter().map(Won::installed).collect();
        self
    }
}

impl Drop for Won {
    fn drop(&mut self) {
        if let Some((session, removals)) = self.guard.take() {
            for removal in self.spawn_removals(&session) {
                removals.push(removal);
            }
            // The parts' removals went out with ours: their drops send none.
            for part in &mut self.parts {
                part.guard = None;
            }
        }
    }
}

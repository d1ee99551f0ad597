//! The contender's node, from its create to its removal: what every handle
//! (lock or semaphore) queues with, and what makes sure none is left behind.
//!
//! An acquire makes an [`Attempt`]: the node to create, with a unique
//! [`Tag`](crate::naming::Tag) (its name's prefix, or a token in its data).
//! A create whose reply was lost is looked for by that tag, and
//! given up to the session's [`DoubtfulTags`] when not found, since it
//! may still land ([`create`]); every listing of the path sweeps such late
//! nodes. An attempt that wins becomes a [`Won`], which the holder records as
//! its hold; any other way out of the acquire drops the attempt, and with it
//! the node ([`Removal`], retried until the node is certainly gone).
//! Persistent nodes are also kept in the session's [`PersistentNodes`], which
//! [`crate::Session::close`] removes.

mod create;
mod doubtful;
mod persistent;
mod removal;
mod won;

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};

use tokio::task::JoinHandle;
use tokio::time::timeout;

use crate::naming;
use crate::session::{Extension, Session};

pub(crate) use create::Recovered;
pub(crate) use doubtful::DoubtfulTags;
pub(crate) use persistent::PersistentNodes;
use removal::FOREGROUND_WAIT;
pub(crate) use removal::{Removal, Target};
pub(crate) use won::{NodeWatch, Won};

/// What the session keeps of its contenders' nodes: the persistent ones,
/// and the tags of creates that may land late.
#[derive(Default)]
pub(crate) struct Nodes {
    pub persistent: PersistentNodes,
    pub doubtful: DoubtfulTags,
}

impl Nodes {
    /// `session`'s.
    pub fn of(session: &Session) -> &Nodes {
        session.extension()
    }
}

impl Extension for Nodes {
    /// Persistent nodes that no hold keeps outlive the session: removed while its client is ours.
    fn closing<'a>(&'a self, session: &'a Session) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(self.persistent.remove_all(session))
    }
}

/// Removals started by one acquire, which it waits for before returning so
/// that a timed-out or cancelled acquire leaves no node behind.
#[derive(Default, Clone)]
pub(crate) struct Removals(Arc<Mutex<Vec<JoinHandle<()>>>>);

impl Removals {
    pub fn push(&self, removal: JoinHandle<()>) {
        self.0.lock().unwrap().push(removal);
    }

    /// Whether any removal was started.
    pub fn any(&self) -> bool {
        !self.0.lock().unwrap().is_empty()
    }

    pub async fn wait(&self) {
        let pending: Vec<_> = std::mem::take(&mut *self.0.lock().unwrap());
        let _ = timeout(FOREGROUND_WAIT, async {
            for removal in pending {
                let _ = removal.await;
            }
        })
        .await;
    }
}

/// A node (maybe) queued by an acquire, removed when dropped unless it won:
/// so every way out of an acquire — error, timeout, cancel, a dropped
/// future — cleans up.
pub(crate) struct Attempt {
    removal: Option<Removal>,
    removals: Removals,
    place: Option<Arc<Place>>,
}

/// A node's place in its session's line on its lock path, kept while the
/// node is queued or held. Its count shows whether the node is still in
/// line; `line`'s, whether any node of the session is.
pub(crate) struct Place {
    line: Arc<()>,
}

impl Place {
    pub fn new(line: &Arc<()>) -> Arc<Place> {
        Arc::new(Place { line: line.clone() })
    }

    /// Gone once no node of the session is in line on the path and the line is forgotten.
    pub fn line(&self) -> Weak<()> {
        Arc::downgrade(&self.line)
    }
}

impl Attempt {
    /// A persistent node is registered with its session from now on, so
    /// that `Session::close` removes it whoever holds the attempt.
    pub fn new(removal: Removal, removals: &Removals) -> Attempt {
        if let Some(persistent) = removal.persistent() {
            persistent.own(&removal.target);
        }
        Attempt { removal: Some(removal), removals: removals.clone(), place: None }
    }

    /// The tag the node is (to be) created with.
    pub fn tag(&self) -> &crate::naming::Tag {
        match self.removal.as_ref().map(|r| &r.target) {
            Some(Target::Tagged { tag, .. }) => tag,
            _ => unreachable!("the tag is only asked for before the create succeeds"),
        }
    }

    /// A create's reply was lost and its node not found: that create may
    /// still land late, with the old tag. Create again with `tag`;
    /// the old one goes to the session's [`DoubtfulTags`], which sweep
    /// its node from the first listing of the path that shows it, by this
    /// attempt or any later one of the session.
    pub fn renew_tag(&mut self, tag: crate::naming::Tag) {
        let removal = self.removal.as_mut().expect("attempt in use");
        let old = removal.target.clone();
        let Target::Tagged { parent, tag: current } = &mut removal.target else {
            unreachable!("a tag is renewed only before the create succeeds")
        };
        let given_up = std::mem::replace(current, tag);
        Nodes::of(&removal.session).doubtful.add(parent, given_up, removal.generation, removal.ephemeral);
        if let Some(persistent) = removal.persistent() {
            // The old tag stays registered until its node is found, or the session closes.
            persistent.settle(&old);
            persistent.own(&removal.target);
        }
    }

    /// Takes out of `children` (of the path, listed on session `generation`)
    /// the late nodes of the session's doubtful tags (see
    /// [`Attempt::renew_tag`]): each is ours and would sit in the queue,
    /// maybe right ahead of our own node. It is deleted in the background,
    /// and this acquire waits for that before it returns. Nodes of a shared
    /// prefix (the distributedlock scheme's) stay in `children`: the reads
    /// returned say whether one was ours ([`Attempt::read_late`]).
    pub fn sweep_late(&self, generation: u64, children: &mut Vec<String>) -> Vec<JoinHandle<bool>> {
        let Some(ours) = self.removal.as_ref() else { return Vec::new() };
        let (session, parent) = (&ours.session, ours.target.parent());
        let swept = Nodes::of(session).doubtful.sweep(session, parent, generation, children);
        for removal in swept.removals {
            self.removals.push(removal);
        }
        swept.reads
    }

    /// Waits (bounded) for the reads of [`Attempt::sweep_late`]: true if one
    /// found a late node of ours, deleted by then, so the listing is stale.
    /// Reads not done in time go on; the acquire waits for them before it returns.
    pub async fn read_late(&self, reads: Vec<JoinHandle<bool>>) -> bool {
        let mut reads = reads.into_iter();
        let deleted = timeout(FOREGROUND_WAIT, async {
            let mut deleted = false;
            for read in reads.by_ref() {
                deleted |= read.await.unwrap_or(false);
            }
            deleted
        })
        .await;
        if let Some(session) = self.removal.as_ref().map(|r| &r.session) {
            for read in reads {
                self.removals.push(session.spawn(async move {
                    let _ = read.await;
                }));
            }
        }
        deleted.unwrap_or(false)
    }

    /// Keeps the node's place in its session's line for as long as it is queued or held.
    pub fn keep_place(&mut self, place: Arc<Place>) {
        self.place = Some(place);
    }

    /// The create succeeded: from now on the node is known by name.
    pub fn created(&mut self, node: String) {
        if let Some(removal) = self.removal.as_mut() {
            let node = Target::Node(node);
            if let Some(persistent) = removal.persistent() {
                persistent.retarget(&removal.target, &node);
            }
            removal.target = node;
        }
    }

    /// The created node's name under its parent: kept once, here, for as
    /// long as the attempt waits.
    pub fn name(&self) -> &str {
        naming::name_of(self.node())
    }

    /// Our node's path, once created.
    pub fn node(&self) -> &str {
        match self.removal.as_ref().map(|r| &r.target) {
            Some(Target::Node(node)) => node,
            _ => unreachable!("a node's path is only asked for after its create"),
        }
    }

    /// Turns the attempt into the win; the attempt is spent (its drop does nothing).
    pub fn won(&mut self, token: i64) -> Won {
        let removal = self.removal.take().expect("an attempt wins once");
        if let Some(persistent) = removal.persistent() {
            persistent.settle(&removal.target);
        }
        let Target::Node(node) = removal.target else { unreachable!("a won node was created") };
        Won {
            node,
            token,
            generation: removal.generation,
            ephemeral: removal.ephemeral,
            node_watch: None,
            waited: false,
            role: None,
            place: self.place.take(),
            guard: Some((removal.session, self.removals.clone())),
            hands_over: None,
            parts: Vec::new(),
        }
    }

    /// [`Attempt::won`], with the watch set by the read that confirmed the node.
    pub fn won_watched(&mut self, token: i64, node_watch: NodeWatch) -> Won {
        let mut won = self.won(token);
        won.node_watch = Some(node_watch);
        won
    }
}

impl Drop for Attempt {
    /// Unless it won (the hold sweeps when it ends), removes the node and
    /// sweeps the path once more: a late node may have landed since the
    /// attempt's last listing.
    fn drop(&mut self) {
        let Some(removal) = self.removal.take() else { return };
        if let Some(persistent) = removal.persistent() {
            persistent.settle(&removal.target);
        }
        let sweep = DoubtfulTags::spawn_sweep(&removal.session, removal.target.parent());
        self.removals.push(removal.spawn());
        if let Some(sweep) = sweep {
            self.removals.push(sweep);
        }
    }
}

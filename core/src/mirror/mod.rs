//! A session's mirror of one lock path's children, kept by one persistent
//! recursive watch (ZooKeeper ≥ 3.6 `addWatch`) and shared by every handle
//! of the session on that path ([`crate::LockConfig::mirror`]). A waiter
//! decides on the mirror — no listing, no watch of its predecessor — so an
//! acquisition costs the create and the delete, and a waiter one read of its
//! own node more (point 8) unless the release before it handed the lock over
//! (point 11); the price is that the server sends every create and delete
//! on the path to every session that mirrors it.
//!
//! Why the mirror is exact. Each point names the ZooKeeper behaviour it
//! assumes; `core/tests/mirror.rs` covers the cases where it would fail.
//! 1. Registration before listing. [`Mirror::resync`] sends `addWatch` and
//!    the listing back to back on one connection. The server handles a
//!    session's requests in order and never a read while it applies a write,
//!    so the watch hears every change after the listing's read point, and
//!    every change after its own registration. The listing, then every
//!    event of the new watcher replayed in order, is the current set:
//!    replaying a create or delete ends each name in its last event's state,
//!    and a name without events has not changed since the registration.
//! 2. Ordered delivery. ZooKeeper sends a session's notifications and
//!    replies in the order of the changes (the notification of a change
//!    before the reply to any request read after it), and zookeeper-client
//!    puts each notification in the watcher's channel before it completes a
//!    later reply. So once a reply has come, draining the channel
//!    ([`State::drain`]) brings the mirror to that reply's point at least:
//!    after our create, the mirror shows our node and every node before it.
//! 3. Resync after reconnect. Changes while disconnected are not delivered
//!    (ZOOKEEPER-4698), and zookeeper-client 0.11.2 does not even re-register
//!    a persistent watch on reconnect (`resend_watches` sends only the first
//!    three lists of SetWatches). The client puts a `Disconnected` event in
//!    the watcher's channel, in order: from there the mirror is stale until
//!    a new watch and listing (1.). A reply that came on a later connection
//!    comes after that event, so a waiter that drains first sees the mirror
//!    stale and waits for the resync instead of trusting it.
//! 4. Expiry: the terminal event ends this generation's mirror; it is built
//!    again on the next generation's client, and a waiter of the ended
//!    generation is told its session ended.
//! 5. Path deleted and re-created, nodes of other sessions, kazoo's and
//!    Curator's nodes: all are creates and deletes of children, delivered
//!    like any other, in order. The mirror holds names, never predicts one,
//!    so no incarnation of the path is taken for another.
//! 6. One watch mode per connection and path (ZooKeeper < 3.9,
//!    ZOOKEEPER-4466): a standard data watch the session sets on the lock
//!    path itself (a `DataWatch`, an `exists`) turns the persistent
//!    recursive watch into a one-shot one, deaf to changes under the path.
//!    zoolock sets every watch of the session, and says so first
//!    ([`Mirrors::data_watch`]): the mirror gives way to listing for good
//!    ([`Mirror::blind`]). As a backstop, a mirror that lacks our node after
//!    our create's reply is not believed: the waiter reads its node, and if
//!    it is there the mirror gives way the same.
//!    The other way round, the mirror's `addWatch` would deafen a children
//!    watch of the session on the path; its listing sets one after it,
//!    which undoes that ([`Mirror::resync`]). A child made between the two
//!    is told by the recursive watch alone: zoolock's zookeeper-client
//!    wakes the session's children watchers on the path from it.
//! 7. The trust issue's shortcuts: a late create of a doubtful prefix shows
//!    up as a child and is swept like one from a listing; a hold learns of
//!    its node's deletion from the mirror (the same notice as a data watch).
//! 8. One transaction, several notices. A multi that deletes our
//!    predecessor and our own node (the CLI's `deleteall` sends one) gives
//!    one notice per node, and a waiter woken by the first would hold before
//!    the second is read: on a node already gone, beside the next holder
//!    (the model found it; `core/tests/mirror.rs` held on the deleted node in
//!    its third round before this read).
//!    The same happens at the create's reply when the mirror has drained
//!    part of a later multi by then (the model found that too). So a
//!    waiter reads its node before it holds, unless the mirror applied no
//!    deletion since our node's create event ([`Entry::arrived`]): then
//!    what was ahead of it at its create still is, nothing was, and the
//!    create's reply is the evidence. The read's reply comes after every
//!    notice of the transaction that deleted the last node ahead (2.).
//! 9. The adaptive switch ([`Mirror::dismiss`], `LockConfig::adaptive`).
//!    A waiter that sees a long queue (other sessions' nodes: ours cost no
//!    fan-out; a node is ours once its waiter decided, or from its create
//!    event on while its create is in flight, [`Expected`]) dismisses the
//!    mirror: the watcher is dropped, every waiter and hold on it woken as
//!    stale, and from then on each decides by
//!    listing and watching its predecessor (the listing rules, which assume
//!    nothing of the mirror), holds by a watch of their node. A listing that
//!    shows a short queue lets the next acquisition rebuild the mirror from
//!    scratch (1.). What is long and short grows with the session's round
//!    trip (`Adaptive::at`): the mirror saves one per hand-over. The round
//!    trip is the least of the session's last eight lock reads; a waiter
//!    that dismisses the mirror with none known has the session read the
//!    path for it, and the first listing that weighs it judges the queue
//!    again ([`ListAbove`]). A mirrored waiter seldom reads, so the limits
//!    a round trip set hold until the next listing or a new session.
//!    Safety assumes nothing of the server here: no decision
//!    is taken on a dismissed mirror, whatever events still arrive; and
//!    only a synced mirror is dismissed, so no resync is in flight. The
//!    rebuilt mirror hears none of the old watch's events: zookeeper-client
//!    sends `RemoveWatches` when the old watcher is dropped, before the new
//!    `addWatch`, and registers a watcher only at its `addWatch`'s reply,
//!    which comes after every event of the old watch. The saving assumes
//!    that `RemoveWatches` is sent: it is when the mirror's watcher was the
//!    session's only watcher on the path. With another (a `ChildrenWatch`
//!    of the session on the lock path itself) the server keeps the
//!    recursive watch and its fan-out, and waiters still list.
//! 10. Mixed families ([`naming::unseen_by`]): the mirror counts every
//!     sequential child by family, contender or not, so a decision sees a
//!     node whose library would not see ours exactly as a listing would.
//! 11. The hand-over ([`Mirror::successor`], `Removal::hand_over`). A
//!     release of a hold decided on the mirror deletes its node in one multi
//!     with a check that the next node in its mirror is there and the create
//!     and delete of that node's marker (`<name>.handoff`, never a
//!     contender, never listed: it lives inside the transaction). The
//!     deletion is the multi's last operation, so the next waiter's mirror
//!     applies the marker and then, as the very next deletion, ours: from that
//!     deletion on, the named node is as fresh as a create event (8.) — it
//!     was there in the transaction that deleted the node ahead of it, and a
//!     later deletion (one of a multi that deletes it too) ends that — and
//!     it holds without the read, one round trip less per hand-over. Assumes
//!     that only a release makes a marker, in that order, and that a
//!     multi's notices are in its operations' order (checked on 3.8.0:
//!     `mirror.rs`'s hand-over tests). A marker followed by any deletion
//!     other than the node ahead's breaks that: a later multi that deletes
//!     a node behind the one named, then that node, is point 8's split
//!     again. So the release deletes last; deleting first, the model finds
//!     the hold on a deleted node
//!     (`mirror_hand_over_deleting_first_holds_on_a_node_deleted_later`).
//!     Each hand-over moves the path's sequence counter by two more (the
//!     marker's create and delete), so it wraps twice as soon.

mod mirrors;
mod notice;

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::Bound;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use zookeeper_client as zk;

use crate::error::connection_lost;
use crate::naming::{self, Family, Role};
use crate::session::Session;
use crate::Scheme;
pub(crate) use mirrors::{DataWatchMark, Mirrors};
use notice::{notice, Notifier};

/// What takes the session's late nodes out of a decision's children ([`Mirror::decide`]).
pub type Sweep<'a> = &'a dyn Fn(&mut Vec<String>);
pub(crate) use notice::{Deletion, Woken};

/// The adaptive design's limit on contenders (point 9), and whether it
/// weighed the session's round trip (`Adaptive::at`).
#[derive(Debug, Clone, Copy)]
pub struct ListAbove {
    pub limit: u32,
    pub weighed: bool,
}

/// By which limit the adaptive design dismissed the mirror (point 9).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Dismissal {
    /// One that weighed the session's round trip.
    Weighed,
    /// One that weighed no round trip (none known yet): the first listing
    /// whose limit weighs one judges the queue by it.
    Unweighed,
}

/// Mirrors dismissed and brought back by the adaptive design (point 9), in this process.
static SWITCHES: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// How many times the adaptive design left a mirror for listing, and came
/// back, in this process (tests: a run that never switched proves nothing
/// of the switch).
#[doc(hidden)]
pub fn adaptive_switches() -> (u64, u64) {
    (SWITCHES[0].load(Relaxed), SWITCHES[1].load(Relaxed))
}

/// Acquisitions that waited on a mirror, and by listing, in this process.
static QUEUED: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];

/// How many acquisitions queued on a mirror, and by listing, in this
/// process: the design the adaptive default chose (the bench shows it).
#[doc(hidden)]
pub fn designs_queued() -> (u64, u64) {
    (QUEUED[0].load(Relaxed), QUEUED[1].load(Relaxed))
}

/// Counts one acquisition queued on a mirror (`true`) or by listing.
pub(crate) fn count_queued(mirrored: bool) {
    QUEUED[usize::from(!mirrored)].fetch_add(1, Relaxed);
}

/// What the mirror says of one contender's node.
pub(crate) enum Decision {
    /// First in line, with the deletion notice of our node; `fresh` when
    /// decided on our create's own evidence (point 8: no read needed).
    Holds(Deletion, bool),
    /// Our node is not there (deleted by someone else, or the path was).
    Missing,
    /// Waits for `predecessor`; woken when it goes, or the mirror goes stale.
    Waits(Deletion),
    /// Not usable now: woken once it is rebuilt (or its rebuild failed).
    Stale(Deletion),
    /// The session of this generation has ended.
    SessionEnded,
    /// The server refused the watch (ZooKeeper < 3.6): list instead.
    Broken,
    /// The queue is long: the adaptive design lists (point 9).
    Dismissed,
    /// The path holds `node` of a family that would not see ours (point 10).
    Mixed(String, Family),
}

pub(crate) struct Mirror {
    path: String,
    session: Session,
    state: Mutex<State>,
    this: Weak<Mirror>,
    /// Registered with the watcher's channel by every drain: the client's
    /// task calls it as it sends each event ([`Apply`]).
    apply: Waker,
}

#[derive(Default)]
struct State {
    /// The session generation whose client set the watch.
    generation: u64,
    synced: bool,
    resyncing: bool,
    broken: bool,
    /// Dismissed by the adaptive design while the queue is long (point 9):
    /// no watch, and adaptive waiters list until a listing shows it short.
    dismissed: Option<Dismissal>,
    watcher: Option<zk::PersistentWatcher>,
    /// Contenders by (sequence, name) — kazoo's and Curator's markers, no
    /// extras — each with the waiters its deletion wakes: kept in the entry,
    /// not in a map by name of their own (issue 16: bytes per waiter).
    queue: BTreeMap<(i32, String), Entry>,
    /// Sequential children by [`Family`] (point 10): the queue's, and the
    /// names of `others`, kept only for the message that names one.
    families: [usize; 4],
    others: BTreeSet<String>,
    /// Names of `others` found persistent (an operator's note, no lock
    /// library's contender): passed over until the mirror is rebuilt.
    benign: HashSet<String>,
    /// Entries marked [`Entry::ours`]: the queue's other nodes are other
    /// sessions' (or ours whose create's reply was lost), whose fan-out point 9 weighs.
    ours: usize,
    /// Prefixes of this session's creates in flight on the path, by
    /// [`prefix_key`] ([`Expected`]).
    expected: HashSet<u64>,
    /// NodeDeleted events applied so far: a node whose create event came
    /// with none since was first in line then if it is first now (point 8).
    deletions: u64,
    /// Waiters for the next rebuild.
    on_sync: Vec<Notifier>,
    /// Room for the key a node is looked up by ([`State::keyed`]).
    lookup: String,
}

impl Mirror {
    /// `deaf`: the session has a data watch on `path` (point 6): its
    /// waiters list from the start.
    pub fn new(session: &Session, path: &str, deaf: bool) -> Arc<Mirror> {
        let state = State { broken: deaf, ..State::default() };
        Arc::new_cyclic(|this| Mirror {
            path: path.to_owned(),
            session: session.clone(),
            state: Mutex::new(state),
            this: this.clone(),
            apply: Waker::from(Arc::new(Apply(this.clone()))),
        })
    }

    /// The state, with every event received so far applied (point 2).
    fn caught_up(&self) -> MutexGuard<'_, State> {
        let mut state = self.state.lock().unwrap();
        state.drain(&self.path, &self.apply);
        state
    }

    /// Starts building the mirror if nobody is, so that it is likely ready
    /// by the time the caller's create is answered. False if the caller,
    /// `adaptive`, is to list because the mirror is dismissed (point 9); a
    /// caller that mirrors whatever the queue brings a dismissed mirror back.
    pub fn prepare(&self, adaptive: bool) -> bool {
        let mut state = self.caught_up();
        if state.dismissed.is_some() {
            if adaptive {
                return false;
            }
            state.dismissed = None;
        }
        self.start_resync(&mut state);
        true
    }

    /// Marks nodes created with `prefix` as this session's (point 9) until
    /// the returned guard drops: call before sending the create, keep the
    /// guard until the waiter decided on a synced mirror. In a burst the mirror sees a node before its
    /// waiter decides on it, and would otherwise count it as another
    /// session's.
    pub fn expect(self: &Arc<Self>, prefix: &str) -> Expected {
        let key = prefix_key(prefix);
        self.state.lock().unwrap().expected.insert(key);
        Expected { mirror: self.clone(), key }
    }

    /// A listing of the adaptive design showed `contenders`: at most
    /// `mirror_at_most`, the next acquisition mirrors again (point 9); so
    /// it does at most `list_above` when the limit that dismissed the
    /// mirror weighed no round trip and this one does.
    pub fn listed(&self, contenders: usize, list_above: ListAbove, mirror_at_most: u32) {
        let mut state = self.state.lock().unwrap();
        let weighed_now = state.dismissed == Some(Dismissal::Unweighed)
            && list_above.weighed
            && contenders <= list_above.limit as usize;
        if state.dismissed.is_some() && (contenders <= mirror_at_most as usize || weighed_now) {
            tracing::debug!(path = self.path, contenders, "zoolock mirrors the lock path again: its queue is short");
            state.dismissed = None;
            SWITCHES[1].fetch_add(1, Relaxed);
        }
    }

    /// Drops the watch and wakes every waiter and hold on the mirror: they
    /// list, or watch their node, until [`Mirror::listed`] brings it back.
    fn dismiss(&self, state: &mut State, contenders: usize, list_above: ListAbove) {
        tracing::debug!(
            path = self.path,
            contenders,
            limit = list_above.limit,
            "zoolock lists the lock path instead of mirroring it: its queue is long"
        );
        state.dismissed = Some(if list_above.weighed { Dismissal::Weighed } else { Dismissal::Unweighed });
        SWITCHES[0].fetch_add(1, Relaxed);
        state.unsync();
        state.wake_on_sync();
    }

    fn start_resync(&self, state: &mut State) {
        if state.synced || state.resyncing || state.broken {
            return;
        }
        state.resyncing = true;
        if let Some(mirror) = self.this.upgrade() {
            self.session.spawn_in(mirror_span(&self.path), mirror.resync());
        }
    }

    /// Passes over `node`, of the [`Family::Other`] names, found persistent
    /// by a read: no lock library's contender (point 10).
    pub fn benign(&self, node: String) {
        self.state.lock().unwrap().benign.insert(node);
    }

    /// Where node `name` (of role `role`, created on session `generation`)
    /// stands. Call after the create's reply: the mirror is drained first.
    /// `list_above`: the adaptive design's limit, if the caller adapts
    /// (point 9); a caller that does not brings a dismissed mirror back.
    /// `sweep`, when given, takes the session's late nodes out of the
    /// children (deleting them, see [`crate::contender::DoubtfulTags`]):
    /// they are no contenders, though the mirror shows them until their
    /// deletion comes. Any late node ahead of ours landed before our create
    /// and is here now; one that lands later sorts behind ours.
    pub fn decide(
        &self,
        generation: u64,
        name: &str,
        role: Role,
        scheme: Scheme,
        sweep: Option<Sweep<'_>>,
        list_above: Option<ListAbove>,
    ) -> Decision {
        let mut state = self.caught_up();
        if state.broken {
            return Decision::Broken;
        }
        if state.dismissed.is_some() {
            if list_above.is_some() {
                return Decision::Dismissed;
            }
            state.dismissed = None;
        }
        if state.synced && state.generation > generation {
            return Decision::SessionEnded;
        }
        if !state.synced || state.generation < generation {
            if state.synced {
                // An older generation's watch whose end is not delivered yet.
                state.unsync();
            }
            self.start_resync(&mut state);
            let (sender, receiver) = notice();
            state.on_sync.push(sender);
            return Decision::Stale(receiver);
        }
        if let Some((node, family)) = state.unseen_by(scheme) {
            return Decision::Mixed(node, family);
        }
        let Some((_, sequence)) = naming::classify(name, &[]) else { return Decision::Missing };
        state.keyed(sequence, name, |state, key| self.stand(state, key, role, sweep, list_above))
    }

    /// [`Mirror::decide`] on a synced mirror, for the node at `key`.
    fn stand(
        &self,
        state: &mut State,
        key: &(i32, String),
        role: Role,
        sweep: Option<Sweep<'_>>,
        list_above: Option<ListAbove>,
    ) -> Decision {
        let Some(entry) = state.queue.get_mut(key) else { return Decision::Missing };
        if !entry.ours {
            entry.ours = true;
            state.ours += 1;
        }
        // Our own nodes cost no fan-out: the contenders weighed are the
        // other nodes (as many sessions at most) and ours, counted once.
        let contenders = state.queue.len() - state.ours + 1;
        if let Some(limit) = list_above.filter(|limit| contenders > limit.limit as usize) {
            self.dismiss(state, contenders, limit);
            return Decision::Dismissed;
        }
        let mut late = HashSet::new();
        if let Some(sweep) = sweep {
            let mut names: Vec<String> = state.queue.keys().map(|(_, n)| n.clone()).collect();
            late = names.iter().cloned().collect();
            sweep(&mut names);
            for kept in &names {
                late.remove(kept);
            }
        }
        // Rare (the counter wrapped between live nodes): the full sort names the node awaited.
        let wrapped = state.wrapped().then(|| {
            let names: Vec<String> = state.queue.keys().map(|(_, n)| n.clone()).filter(|n| !late.contains(n)).collect();
            match naming::standing(&names, &key.1, role, &[]) {
                naming::Standing::Waits { predecessor, .. } => {
                    naming::parse(&predecessor, &[]).map(|c| (c.sequence, c.name))
                }
                _ => None,
            }
        });
        let (sender, receiver) = notice();
        let deletions = state.deletions;
        let ahead = match &wrapped {
            Some(Some(predecessor)) => {
                Some(state.queue.range_mut(predecessor..=predecessor).next().expect("the awaited node is in the queue"))
            }
            Some(None) => None,
            None => state
                .queue
                .range_mut((Bound::Unbounded, Bound::Excluded(key)))
                .rev()
                .find(|((_, n), e)| role.waits_for(e.role) && !late.contains(n)),
        };
        let Some(((_, predecessor), entry)) = ahead else {
            // Nothing ahead: woken by our own node's deletion.
            let entry = state.queue.get_mut(key).expect("our node is in the queue");
            entry.add(sender);
            return Decision::Holds(receiver, entry.arrived == deletions);
        };
        entry.add(sender);
        // Asked as an event: the bindings' subscribers enable events only, and
        // `enabled!` asks as a hint (kind HINT), which they refuse.
        if tracing::event_enabled!(tracing::Level::DEBUG) {
            let predecessor = predecessor.clone();
            let ahead = state.queue.range((Bound::Unbounded, Bound::Excluded(key))).count();
            tracing::debug!(path = self.path, node = key.1, predecessor, ahead, "zoolock waits");
        }
        Decision::Waits(receiver)
    }

    /// The node after `node` (a name) in the queue, while the mirror is
    /// synced on session `generation`: the one a release of `node` hands
    /// the lock over to (point 11). In the queue's key order: after the
    /// sequence counter wraps, none or a node that is not next, which only
    /// costs the next waiter its shortcut (its mirror decides for itself).
    pub fn successor(&self, node: &str, generation: u64) -> Option<String> {
        let mut state = self.caught_up();
        if !state.synced || state.dismissed.is_some() || state.broken || state.generation != generation {
            return None;
        }
        let (role, sequence) = naming::classify(node, &[])?;
        state.keyed(sequence, node, |state, key| {
            let next = state.queue.range((Bound::Excluded(key), Bound::Unbounded)).next();
            // A reader behind a reader does not wait for ours: nothing to hand over.
            next.filter(|(_, e)| role.waits_for(e.role)).map(|((_, n), _)| n.clone())
        })
    }

    /// The session's status changed (ended, closed, a new generation): every
    /// waiter looks at it again, and the mirror decides again for those that go on.
    pub fn wake_waiters(&self) {
        let mut state = self.state.lock().unwrap();
        state.wake_all();
        state.wake_on_sync();
    }

    /// The server no longer sends the mirror every change (point 6): a data
    /// watch of the session on the path, or a node of ours the mirror lacks.
    /// Waiters list instead from now on: a watch set again would be turned
    /// back by the other watch's next round.
    pub fn blind(&self) {
        tracing::debug!(path = self.path, "zoolock's mirror of the lock path is deaf; waiters list it instead");
        self.state.lock().unwrap().blind();
    }

    /// Sets a new watch and lists (point 1), on the session's current client.
    async fn resync(self: Arc<Self>) {
        loop {
            let Ok(live) = self.session.live().await else {
                self.state.lock().unwrap().stop_resync();
                return;
            };
            // Sent back to back: registration before listing. The listing
            // sets a children watch, dropped at once: ZooKeeper 3.8 keeps one
            // mode per connection and path in each of its two watch tables
            // (ZOOKEEPER-4466), and `addWatch` just made this session's entry
            // in the children table recursive, deaf to NodeChildrenChanged.
            // A children watch set after it makes that entry standard again
            // (until then zookeeper-client wakes the session's earlier
            // children watchers from the recursive watch's events). Left
            // recursive, the entry would outlive a dismissed mirror whose
            // session still watches the path (no `RemoveWatches` is sent
            // then), and a `ChildrenWatch` there would never fire again.
            // The mirror hears creates and deletes from the data table alone.
            let watch = live.client.watch(&self.path, zk::AddWatchMode::PersistentRecursive);
            let list = live.client.list_and_watch_children(&self.path);
            let (watch, list) = (watch.await, list.await);
            let list = match list {
                Ok((children, _)) => Ok(children),
                Err(zk::Error::NoNode) => Ok(Vec::new()),
                Err(err) => Err(err),
            };
            match (watch, list) {
                (Ok(watcher), Ok(children)) => {
                    let mut state = self.state.lock().unwrap();
                    if state.broken {
                        return;
                    }
                    if state.dismissed.is_some() {
                        // Dismissed on the way (point 9): the watcher goes with this task.
                        state.stop_resync();
                        return;
                    }
                    state.install(watcher, &children, live.generation);
                    state.drain(&self.path, &self.apply);
                    return;
                }
                (Err(err), _) | (_, Err(err)) if connection_lost(&err) => {
                    // Requests wait for the reconnect; the pause only keeps a flapping connection from spinning.
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                (Err(zk::Error::SessionExpired | zk::Error::ClientClosed), _)
                | (_, Err(zk::Error::SessionExpired | zk::Error::ClientClosed)) => {
                    // The next waiter rebuilds on the next generation's client.
                    self.state.lock().unwrap().stop_resync();
                    return;
                }
                (Err(err), _) | (_, Err(err)) => {
                    tracing::warn!(path = self.path, %err, "zoolock cannot mirror the lock path; waiters list it instead");
                    let mut state = self.state.lock().unwrap();
                    state.broken = true;
                    state.stop_resync();
                    return;
                }
            }
        }
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        let mut state = self.state.lock().unwrap();
        state.watcher = None;
        state.wake_all();
    }
}

impl State {
    /// A new entry for node `name`, ours if its prefix is [`Expected`].
    fn entry(&mut self, name: &str, role: Role, arrived: u64) -> Entry {
        let mut entry = Entry::new(role, arrived);
        // ZooKeeper appends 10 characters ("%010d"), 11 for i32::MIN.
        let expected = |n: usize| name.len().checked_sub(n).and_then(|end| name.get(..end));
        if [10, 11].into_iter().filter_map(expected).any(|prefix| self.expected.contains(&prefix_key(prefix))) {
            entry.ours = true;
            self.ours += 1;
        }
        entry
    }

    fn wrapped(&self) -> bool {
        let low = self.queue.first_key_value().is_some_and(|((s, _), _)| *s < i32::MIN / 2);
        let high = self.queue.last_key_value().is_some_and(|((s, _), _)| *s > i32::MAX / 2);
        low && high
    }

    fn install(&mut self, watcher: zk::PersistentWatcher, children: &[String], generation: u64) {
        self.wake_all();
        self.ours = 0;
        self.families = [0; 4];
        self.others.clear();
        self.benign.clear();
        let mut queue = BTreeMap::new();
        for c in children {
            self.count(c, 1);
        }
        for c in children.iter().filter_map(|c| naming::parse(c, &[])) {
            let entry = self.entry(&c.name, c.role, LISTED);
            queue.insert((c.sequence, c.name), entry);
        }
        self.queue = queue;
        self.watcher = Some(watcher);
        self.generation = generation;
        self.synced = true;
        self.stop_resync();
    }

    /// Gives way to listing for good (point 6, or a failure to apply an event).
    fn blind(&mut self) {
        self.broken = true;
        self.unsync();
        self.stop_resync();
    }

    fn stop_resync(&mut self) {
        self.resyncing = false;
        self.wake_on_sync();
    }

    /// Wakes the waiters for the next rebuild: they look again.
    fn wake_on_sync(&mut self) {
        for sender in self.on_sync.drain(..) {
            sender.send(Woken::Stale);
        }
    }

    /// Stale from here on: every waiter looks again.
    fn unsync(&mut self) {
        self.synced = false;
        self.watcher = None;
        self.wake_all();
        self.queue.clear();
        self.ours = 0;
        self.families = [0; 4];
        self.others.clear();
        self.benign.clear();
    }

    /// Counts sequential child `name` in (`by` = 1) or out (`by` = -1) of [`State::families`].
    fn count(&mut self, name: &str, by: isize) {
        let Some(family) = Family::of(name) else { return };
        let counted = &mut self.families[family.index()];
        *counted = counted.checked_add_signed(by).expect("a family counted out more often than in");
        if family == Family::Other {
            match by > 0 {
                true => self.others.insert(name.to_owned()),
                false => self.benign.remove(name) | self.others.remove(name),
            };
        }
    }

    /// A child created, as its event says (`name`: the event's own string).
    fn created(&mut self, path: &str, name: String) {
        match naming::classify(&name, &[]) {
            Some((role, sequence)) => {
                let mut key = (sequence, name);
                let new = !self.queue.contains_key(&key);
                if new {
                    self.count(&key.1, 1);
                }
                self.warn_if_mixed(path, &key.1);
                if new {
                    let entry = self.entry(&key.1, role, self.deletions);
                    // The event's string had room for the path too; kept while the node is.
                    key.1.shrink_to_fit();
                    self.queue.insert(key, entry);
                }
            }
            None => {
                if !self.others.contains(&name) {
                    self.count(&name, 1);
                }
                self.warn_if_mixed(path, &name);
            }
        }
    }

    /// A release hands the lock over to node `next` (point 11): its
    /// transaction checked that `next` is there, and its last operation,
    /// whose event comes next, deletes the releaser's node. Once that is
    /// applied, `next` is as fresh as if its create event had come then.
    fn handed_over(&mut self, next: &str) {
        let Some((_, sequence)) = naming::classify(next, &[]) else { return };
        self.keyed(sequence, next, |state, key| {
            if let Some(entry) = state.queue.get_mut(key) {
                entry.arrived = state.deletions + 1;
            }
        });
    }

    /// Runs `f` with node `name`'s key in the queue, built in the string
    /// kept for lookups: a lookup allocates no key.
    fn keyed<R>(&mut self, sequence: i32, name: &str, f: impl FnOnce(&mut State, &(i32, String)) -> R) -> R {
        let mut key = (sequence, std::mem::take(&mut self.lookup));
        key.1.push_str(name);
        let out = f(self, &key);
        key.1.clear();
        self.lookup = key.1;
        out
    }

    /// A node of a second family arrived (point 10): a holder of this
    /// session cannot stop its library from holding too, but says so.
    fn warn_if_mixed(&self, path: &str, name: &str) {
        let Some(family) = Family::of(name) else { return };
        let present = self.families.iter().filter(|n| **n > 0).count();
        if self.families[family.index()] == 1 && present > 1 {
            tracing::warn!(path, node = name, ?family, "zoolock: a node of another lock library joined this path, and that library does not see zoolock's nodes: give every client of the path one scheme");
        }
    }

    /// A child whose library would not see a node of `scheme` (point 10).
    fn unseen_by(&self, scheme: Scheme) -> Option<(String, Family)> {
        let present = Family::ALL.into_iter().filter(|f| *f != scheme.family() && self.families[f.index()] > 0);
        present.into_iter().find_map(|family| {
            let node = match family {
                Family::Other => self.others.iter().find(|n| !self.benign.contains(*n)).cloned(),
                _ => self.queue.keys().map(|(_, n)| n).find(|n| Family::of(n) == Some(family)).cloned(),
            }?;
            Some((node, family))
        })
    }

    fn wake_all(&mut self) {
        for entry in self.queue.values_mut() {
            entry.wake(Woken::Stale);
        }
    }

    /// Applies every event already in the watcher's channel, and leaves
    /// `apply` registered for the next one.
    fn drain(&mut self, path: &str, apply: &Waker) {
        let mut cx = Context::from_waker(apply);
        while let Some(watcher) = self.watcher.as_mut() {
            DRAINING.set(Some(false));
            let polled = watcher.poll_changed(&mut cx);
            // Woken while registering: the waker was taken out of the
            // channel to be called, and none is left there (see [`Apply`]).
            let woken = DRAINING.replace(None) == Some(true);
            match polled {
                Poll::Pending if woken => continue,
                Poll::Pending => return,
                Poll::Ready(Some(event)) => self.apply(path, event),
                // The client's task ended without a terminal event: its
                // runtime shut down.
                Poll::Ready(None) => self.unsync(),
            }
        }
    }

    fn apply(&mut self, path: &str, event: zk::WatchedEvent) {
        let zk::WatchedEvent { event_type, session_state, path: mut name, .. } = event;
        let child = name.strip_prefix(path).and_then(|p| p.strip_prefix('/')).is_some_and(|n| !n.contains('/'));
        if child {
            // The child's name, in the event's own string: no copy per event.
            name.drain(..=path.len());
        }
        match (event_type, child) {
            (zk::EventType::Session, _) => match session_state {
                zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {}
                // Disconnected (point 3), or the session's end (point 4).
                _ => self.unsync(),
            },
            // A release marker is for a listing waiter's watch: it deletes no contender.
            (zk::EventType::NodeCreated | zk::EventType::NodeDeleted, true) if naming::is_release_marker(&name) => {}
            (zk::EventType::NodeCreated, true) => match naming::handed_to(&name) {
                Some(next) => self.handed_over(next),
                None => self.created(path, name),
            },
            // A marker goes in the transaction that made it, and deletes no contender (point 11).
            (zk::EventType::NodeDeleted, true) if naming::handed_to(&name).is_some() => {}
            (zk::EventType::NodeDeleted, true) => {
                self.deletions += 1;
                let mut queued = None;
                if let Some((_, sequence)) = naming::classify(&name, &[]) {
                    let key = (sequence, name);
                    queued = self.queue.remove(&key);
                    name = key.1;
                }
                if let Some(mut entry) = queued {
                    self.count(&name, -1);
                    self.ours -= usize::from(entry.ours);
                    entry.wake(Woken::Deleted);
                } else if self.others.contains(&name) {
                    self.count(&name, -1);
                }
            }
            _ => {}
        }
    }
}

/// A create of this session in flight on the mirror's path ([`Mirror::expect`]).
/// Small: a parked mirrored waiter's future keeps it.
pub(crate) struct Expected {
    mirror: Arc<Mirror>,
    key: u64,
}

impl Drop for Expected {
    /// Applies the events received so far first: our node's create event
    /// comes before the create's reply, so it is marked ours by now.
    fn drop(&mut self) {
        self.mirror.caught_up().expected.remove(&self.key);
    }
}

/// A prefix's key in [`State::expected`]: prefixes carry a random uuid, so
/// 64 bits tell them apart (a collision would only miscount, point 9).
fn prefix_key(prefix: &str) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault};
    BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(prefix)
}

/// [`Entry::arrived`] of a node the mirror learned from a listing: never fresh.
const LISTED: u64 = u64::MAX;

/// A contender of the mirror's queue.
struct Entry {
    role: Role,
    /// A node of this session: a waiter decided on it (point 9 counts the others).
    ours: bool,
    /// [`State::deletions`] when its create event was applied ([`LISTED`]
    /// if it came in a listing), or the next deletion's when a marker named
    /// it (point 11).
    arrived: u64,
    /// Waiters woken by this node's deletion: one in a mutex's queue, kept
    /// inline; more (readers behind a writer) boxed, so every entry stays small.
    first: Option<Notifier>,
    more: Option<Box<Vec<Notifier>>>,
}

impl Entry {
    fn new(role: Role, arrived: u64) -> Entry {
        Entry { role, ours: false, arrived, first: None, more: None }
    }

    fn add(&mut self, sender: Notifier) {
        match self.first {
            None => self.first = Some(sender),
            Some(_) => self.more.get_or_insert_with(Box::default).push(sender),
        }
    }

    fn wake(&mut self, woken: Woken) {
        for sender in self.first.take().into_iter().chain(self.more.take().into_iter().flat_map(|more| *more)) {
            sender.send(woken);
        }
    }
}

/// The span of a mirror's work, which serves every waiter on the path
/// (not the span of the one that started it).
fn mirror_span(path: &str) -> tracing::Span {
    tracing::debug_span!(parent: None, "mirror", path)
}

thread_local! {
    /// Some while a drain polls the channel, under the state's lock; true
    /// once [`Apply`] was called meanwhile.
    static DRAINING: std::cell::Cell<Option<bool>> = const { std::cell::Cell::new(None) };
}

/// Applies the mirror's events where they are sent: the channel wakes its
/// receiver's waker on each send, in the client's task, so an event is
/// applied, and its waiter woken, before the client reads on. A task of
/// the mirror's own would cost a wake-up per event, and the client's next
/// reply would then wake a second task at once, which tokio hands to
/// another worker thread (measured: about one thread wake-up per
/// acquisition at B(2), zookeeper-client's own lock none).
///
/// Assumes (zookeeper-client's channel, tokio's or futures'; its test
/// pins the first): each send wakes the waker registered last, after the
/// event is in the channel; and a receiver registering its waker while a
/// send wakes the old one takes the new one out again and wakes it at
/// once — inside our drain, under the state's lock. That call only marks
/// the drain ([`DRAINING`]), which polls again to register anew: the
/// event may be one the drain already read, and skipping the call would
/// leave no waker in the channel. Every other call takes the lock, held
/// elsewhere only briefly and never across an await. What it runs (the
/// waiters' wake-ups, a hold's callback) runs in the client's task: it
/// must only look and hand off, and a panic there is caught, leaving the
/// mirror to listing (point 6's way), not the client's task dead.
struct Apply(Weak<Mirror>);

impl std::task::Wake for Apply {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if DRAINING.get().is_some() {
            DRAINING.set(Some(true));
            return;
        }
        let Some(mirror) = self.0.upgrade() else { return };
        let _span = mirror_span(&mirror.path).entered();
        let lock = || mirror.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if catch_unwind(AssertUnwindSafe(|| lock().drain(&mirror.path, &mirror.apply))).is_err() {
            DRAINING.set(None);
            tracing::error!(
                path = mirror.path,
                "zoolock's mirror failed to apply an event; waiters list the lock path instead"
            );
            let _ = catch_unwind(AssertUnwindSafe(|| lock().blind()));
            mirror.state.clear_poison();
        }
    }
}

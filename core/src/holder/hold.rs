//! A hold: recorded from the win, told of the session's changes, watched
//! for its node's deletion, ended by a release, a lease or a loss.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use tokio::sync::OwnedMutexGuard;
use tokio::task::AbortHandle;
use tokio::time::Instant;
use tracing::Instrument;
use zookeeper_client as zk;

use super::order::HoldOrder;
use super::{Acquire, HolderState, OnHeld, Owner};
use crate::contender::{NodeWatch, Nodes, Target, Won};
use crate::error::{connection_lost, Error, Result};
use crate::mirror::{Deletion, Woken};
use crate::runtime;
use crate::session::{detached_span, StatusWatcher};
use crate::state::{LockState, LostReason, SessionState, Status};
use crate::znode::Transaction;

pub(super) struct Held {
    pub(super) id: u64,
    pub(super) won: Won,
    /// This hold's entry in the session's registry of holders.
    pub(super) watch_key: u64,
    /// The lease timer and the watch on the node: they end with the hold.
    pub(super) tasks: Vec<AbortHandle>,
    pub(super) owner: Owner,
    pub(super) since: Instant,
    /// Acquires by `owner` not yet released ([`OnHeld::Reenter`]; 1 otherwise).
    /// 0 while the last release takes the hold away.
    pub(super) depth: u64,
    pub(super) _turn: OwnedMutexGuard<()>,
}

impl Drop for Held {
    fn drop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}

impl HolderState {
    /// Releases for `owner`. A reentrant lock's owner counts down,
    /// and lets go at its last release; another owner's release is refused
    /// with [`Error::NotOwner`] and changes nothing. Other handles let go
    /// whoever releases (kazoo).
    pub(crate) fn release_by(&self, owner: Owner) -> impl Future<Output = Result<bool>> + Send + '_ {
        self.release_own(owner, None).instrument(self.release_span())
    }

    /// The span of a release of this handle's: `release`, with the path, in
    /// the caller's span. Made where the release is called, so that a
    /// release in the background (a dropped [`Hold`]'s) is in it too.
    fn release_span(&self) -> tracing::Span {
        tracing::info_span!("release", path = %self.path)
    }

    /// [`HolderState::release_by`], of the hold won with fencing token
    /// `term` only, when given (a [`Hold`]'s own): false if the handle holds
    /// another or none.
    async fn release_own(&self, owner: Owner, term: Option<i64>) -> Result<bool> {
        let ours = |won: &Won| term.is_none_or(|t| won.token == t);
        if self.on_held == OnHeld::Reenter {
            let mut held = self.held.lock().unwrap();
            if let Some(held) = held.as_mut().filter(|h| ours(&h.won)) {
                if held.owner != owner {
                    return Err(Error::NotOwner { path: self.path.clone() });
                }
                match held.depth {
                    // Another release of this owner is taking the hold away.
                    0 => return Ok(false),
                    1 => held.depth = 0,
                    _ => {
                        held.depth -= 1;
                        return Ok(true);
                    }
                }
            }
        }
        // Depth 0 keeps re-entries out until `release_if` takes the hold, on
        // this same poll (it takes the hold before its first await).
        Ok(self.release_if(ours).await)
    }

    /// Records the win as this handle's hold; false, recording nothing, if
    /// the session the node was won on has ended since (a caller not polled
    /// for a while, or a wake that raced the expiry): an ephemeral node of an
    /// ended session is gone, and another contender may hold by now. False
    /// too if the hold is stale: the session reported one it excluded, with
    /// a higher token, since it was decided ([`HoldOrder::admit`]).
    pub(super) fn install(self: &Arc<Self>, mut won: Won, turn: OwnedMutexGuard<()>, options: &Acquire) -> bool {
        let (lease, owner) = (options.lease, options.owner);
        let status = self.session.status();
        let ended = status.state == SessionState::Lost || status.generation != won.generation;
        if status.state == SessionState::Closed || (won.ephemeral && ended) {
            drop(won); // its guard removes the node; the acquire waits for that
            return false;
        }
        // Held until the hold is reported: the session's holds are reported in order.
        let Some(admitted) = HoldOrder::of(&self.session).admit(&won) else {
            tracing::debug!(path = self.path, node = won.node, token = won.token, "zoolock hold is stale");
            drop(won); // as above
            return false;
        };
        let id = self.acquisitions.fetch_add(1, Ordering::Relaxed) + 1;
        let watcher: Weak<dyn StatusWatcher> = Arc::downgrade(self) as Weak<dyn StatusWatcher>;
        // A kept hold's session keeps its state alive until the hold ends (`unwatch_status`).
        let kept = options.keep_if_dropped.then(|| self.clone() as Arc<dyn StatusWatcher>);
        let watch_key = self.session.watch_status(watcher, kept);
        let node_watch = won.node_watch.take();
        let (node, generation, ephemeral, token) = (won.node.clone(), won.generation, won.ephemeral, won.token);
        // A multi-lock's other nodes, each watched by a task of its own.
        let parts: Vec<_> = won.parts.iter_mut().map(|part| (part.node.clone(), part.node_watch.take())).collect();
        // Recorded before any task that may end it starts: a lease shorter
        // than the time to record it must still find the hold to end.
        *self.held.lock().unwrap() = Some(Box::new(Held {
            id,
            won: won.installed(),
            watch_key,
            tasks: Vec::new(),
            owner,
            since: Instant::now(),
            depth: 1,
            _turn: turn,
        }));
        self.set_state(LockState::Held);
        drop(admitted);
        tracing::debug!(path = self.path, node, token, "zoolock holds");
        // The hold's tasks last as long as it does, past the acquire and its
        // caller: a span of their own, which follows from the acquire's.
        let span = detached_span(tracing::info_span!(parent: None, "hold", path = %self.path, token));
        if let Some(lease) = lease {
            let holder = Arc::downgrade(self);
            let timer = self.session.spawn_in(span.clone(), async move {
                tokio::time::sleep(lease).await;
                if let Some(holder) = holder.upgrade() {
                    holder.lose(id, LostReason::LeaseExpired);
                }
            });
            self.attach(id, timer.abort_handle());
        }
        let node_of =
            |node| HeldNode { holder: Arc::downgrade(self), id, node, generation, ephemeral, span: span.clone() };
        let held = node_of(node);
        match node_watch {
            // The mirror calls back on the node's deletion: a hold costs no
            // task, and its release nothing to abort. ZooKeeper sends the
            // mirror's watch the node's deletion like any other change of the
            // path (mirror/mod.rs, point 2), and a mirror gone stale says so too.
            Some(NodeWatch::Mirror(deletion)) => {
                deletion.then(move |woken| {
                    // Under the mirror's lock, in zookeeper-client's task: only look,
                    // and hand the rest to a task.
                    held.watch_if_held(Some(NodeWatch::Mirror(Deletion::ready(woken))));
                });
            }
            // The same for the data watch the read of our node set.
            Some(NodeWatch::Oneshot(watcher)) => held.watch_inline(watcher),
            None => self.read_and_watch(held),
            // A win carries no watch that fired already; were it to, a task takes it.
            fired @ Some(NodeWatch::Fired(_)) => self.watch_in_task(held, fired),
        }
        for (node, node_watch) in parts {
            self.watch_in_task(node_of(node), node_watch);
        }
        // A change between the win and the registration would go unheard.
        self.session_changed(self.session.status(), false);
        true
    }

    /// A hold decided by a listing has no watch on its node yet. The read
    /// that sets one is queued now, on the condition that the hold is still
    /// there when zookeeper-client's task takes it from its queue (a hold
    /// released at once sends nothing), and its reply is looked at inline.
    /// A task spawned here would be pushed out of tokio's LIFO slot by the
    /// release's wake of the session's task, and a parked worker woken to
    /// take it. With no connection at hand, a task waits for one.
    fn read_and_watch(self: &Arc<Self>, held: HeldNode) {
        let live = match self.session.live_now() {
            Some(Ok(live)) if live.generation == held.generation => live,
            _ => return self.watch_in_task(held, None),
        };
        let (holder, id, span) = (held.holder.clone(), held.id, held.span.clone());
        let still = holder.clone();
        let skip = move || !still_holds(&still, id);
        // Queued at on_ready's first poll, here: zookeeper-client queues a
        // request when called. The node comes back with the reply.
        let read = async move { (live.client.get_and_watch_data_or_skip(&held.node, skip).await, held) };
        crate::inline::on_ready(read, move |reply| {
            // The poll panicked, and the node went with it: the hold's record has it.
            let Some((reply, held)) = reply else {
                if let Some(held) = holder.upgrade().and_then(|h| h.held_node(id, span)) {
                    held.watch_if_held(None);
                }
                return;
            };
            match reply {
                // Kept whether or not the hold is released meanwhile: dropped
                // before its event, zookeeper-client would send `RemoveWatches`.
                Ok((_, _, watcher)) => held.watch_inline(watcher),
                // Gone before our release could delete it (the read went first).
                Err(zk::Error::NoNode) => held.watch_if_held(Some(NodeWatch::Fired(zk::EventType::NodeDeleted))),
                // Skipped (the hold ended), the connection broke or the
                // session ended: a hold still there is watched by a task,
                // which tells which, as with no connection at hand.
                Err(_) => held.watch_if_held(None),
            }
        });
    }

    /// Hold `id`'s node, while it holds.
    fn held_node(self: &Arc<Self>, id: u64, span: tracing::Span) -> Option<HeldNode> {
        let held = self.held.lock().unwrap();
        let won = &held.as_ref().filter(|h| h.id == id)?.won;
        let (node, generation, ephemeral) = (won.node.clone(), won.generation, won.ephemeral);
        Some(HeldNode { holder: Arc::downgrade(self), id, node, generation, ephemeral, span })
    }

    /// Watches `held`'s node in a task of the hold's ([`watch_node`]).
    fn watch_in_task(self: &Arc<Self>, held: HeldNode, node_watch: Option<NodeWatch>) {
        let (id, span) = (held.id, held.span.clone());
        let watch = self.session.spawn_in(span, watch_node(held, node_watch));
        self.attach(id, watch.abort_handle());
    }

    /// Ties `task` to hold `id`: aborted when the hold ends, or now if it has.
    fn attach(&self, id: u64, task: AbortHandle) {
        match self.held.lock().unwrap().as_mut().filter(|h| h.id == id) {
            Some(held) => held.tasks.push(task),
            None => task.abort(),
        }
    }

    /// Releases the hold won with fencing token `token` (a leadership's own
    /// term), and no later one: false if the handle holds another or none.
    pub(crate) async fn release_term(&self, token: i64) -> bool {
        self.release_if(|won| won.token == token).instrument(self.release_span()).await
    }

    /// Releases the hold if `this` says it is the one: whether it was. If
    /// the connection is down, the delete goes on in the background until it
    /// succeeds or the session ends. The delete runs in the caller's task (no
    /// spawn: a cycle wakes no other thread); a caller that stops waiting
    /// after the first poll (a timeout around `release`, a cancelled task)
    /// leaves it running in the background (see
    /// [`Removal::run_bounded`](crate::contender::Removal::run_bounded)): no node outlives it.
    async fn release_if(&self, this: impl FnOnce(&Won) -> bool) -> bool {
        let Some(held) = self.held.lock().unwrap().take_if(|h| this(&h.won)) else { return false };
        // The node's watch ends at our delete's notice, which it takes for
        // no loss, the hold being gone; a task watching it stops with
        // `held`, after our delete, which has had that notice by then (the
        // notice comes before the reply). Dropped before the notice,
        // zookeeper-client would send `RemoveWatches` for it, and again for
        // the notice.
        self.session.unwatch_status(held.watch_key);
        self.meter().inspect(|m| m.hold_ended(&self.series, &self.path, held.since.elapsed()));
        self.set_state(LockState::Released);
        if !held.won.ephemeral {
            for won in held.won.all() {
                Nodes::of(&self.session).persistent.release(&Target::Node(won.node.clone()));
            }
        }
        held.won.release(&self.session).await;
        true
    }

    /// Ends acquisition `id` because of `reason`, if it still holds.
    fn lose(&self, id: u64, reason: LostReason) {
        let mut held = self.held.lock().unwrap();
        if held.as_ref().is_none_or(|h| h.id != id) {
            return;
        }
        let lost = held.take().expect("checked above");
        drop(held);
        self.session.unwatch_status(lost.watch_key);
        self.meter().inspect(|m| m.hold_ended(&self.series, &self.path, lost.since.elapsed()));
        self.set_state(LockState::Lost(reason));
        // The node (and any late duplicate of it) may still be there: a lease
        // ran out, or only the node itself was deleted. Otherwise the session
        // ended: its ephemeral nodes are gone, and a persistent hold is not
        // lost to an expiry, nor on close, which removes its late duplicates
        // (see `PersistentNodes`).
        if matches!(reason, LostReason::LeaseExpired | LostReason::NodeDeleted) {
            lost.won.spawn_removals(&self.session);
        }
        if reason == LostReason::SessionClosed && !lost.won.ephemeral {
            tracing::warn!(
                node = lost.won.node,
                "a persistent lock stays held after its session closed: delete its node to release it"
            );
        }
    }

    fn mark(&self, id: u64, state: LockState) {
        let held = self.held.lock().unwrap();
        if held.as_ref().is_some_and(|h| h.id == id) {
            self.set_state(state);
        }
    }
}

impl StatusWatcher for HolderState {
    /// Tells the holder when its hold is suspended, restored or lost (an
    /// ended generation is the generation's or the state's to tell).
    fn session_changed(&self, now: Status, _ended: bool) {
        let Some((id, generation, ephemeral)) =
            self.held.lock().unwrap().as_ref().map(|h| (h.id, h.won.generation, h.won.ephemeral))
        else {
            return;
        };
        match now.state {
            SessionState::Closed => self.lose(id, LostReason::SessionClosed),
            _ if ephemeral && now.generation != generation => self.lose(id, LostReason::SessionExpired),
            SessionState::Lost if ephemeral => self.lose(id, LostReason::SessionExpired),
            SessionState::Lost | SessionState::Suspended => self.mark(id, LockState::Suspended),
            SessionState::Connected => self.mark(id, LockState::Held),
        }
    }
}

impl Drop for HolderState {
    /// Dropping a held handle releases it, in the background (in a
    /// `release` span of the dropper's).
    fn drop(&mut self) {
        if let Some(held) = self.held.get_mut().unwrap().take() {
            let _release = self.release_span().entered();
            self.session.unwatch_status(held.watch_key);
            self.meter().inspect(|m| m.hold_ended(&self.series, &self.path, held.since.elapsed()));
            held.won.spawn_removals(&self.session);
        }
    }
}

/// One node of hold `id` and what watching it takes, handed whole from
/// one way of watching to the next.
struct HeldNode {
    holder: Weak<HolderState>,
    id: u64,
    node: String,
    generation: u64,
    ephemeral: bool,
    /// The hold's span, for a task that takes the watch over.
    span: tracing::Span,
}

impl HeldNode {
    /// A watch of the node fired (`node_watch` says how; `None`: it could
    /// not be set): the rest goes to a task, unless the hold is gone (our
    /// own release deleted it).
    fn watch_if_held(self, node_watch: Option<NodeWatch>) {
        if let Some(holder) = self.holder.upgrade().filter(|h| h.holds(self.id)) {
            holder.watch_in_task(self, node_watch);
        }
    }

    /// Watches the node with the data watch `watcher`, polled inline: its
    /// event comes in zookeeper-client's task, which looks here (only
    /// looks: the whole session waits meanwhile).
    fn watch_inline(self, watcher: zk::OneshotWatcher) {
        crate::inline::on_ready(watcher.changed_or_closed(), move |event| {
            // None: the client's task is gone.
            if let Some(event) = event.flatten() {
                self.watch_if_held(Some(NodeWatch::Fired(event.event_type)));
            }
        });
    }
}

/// Whether the handle behind `holder` still holds with acquisition `id`.
fn still_holds(holder: &Weak<HolderState>, id: u64) -> bool {
    holder.upgrade().is_some_and(|h| h.holds(id))
}

/// Watches `held`'s node and ends the hold with [`LostReason::NodeDeleted`]
/// when someone else deletes it. Our own release deletes it too, but the hold
/// is gone by then (and this task aborted), so that is a no-op. A watch ends
/// early only when its session does, which the session's own logic reports;
/// a persistent node outlives its session and is watched again on the next.
async fn watch_node(held: HeldNode, mut armed: Option<NodeWatch>) {
    // The task runs in the span already.
    let HeldNode { holder, id, node, generation, ephemeral, span } = held;
    drop(span);
    let lose = |holder: &Weak<HolderState>| {
        if let Some(holder) = holder.upgrade() {
            holder.lose(id, LostReason::NodeDeleted);
        }
    };
    loop {
        let watcher = match armed.take() {
            Some(watcher) => watcher,
            None => {
                let Some(session) = holder.upgrade().map(|h| h.session.clone()) else { return };
                let Ok(live) = session.live().await else { return };
                if ephemeral && live.generation != generation {
                    return;
                }
                // Released already (before this task first ran, in a short
                // hold): no watch to set, and none to remove.
                if !still_holds(&holder, id) {
                    return;
                }
                // Sent at once and not awaited by the acquirer: the hold costs no round trip more.
                match live.client.get_and_watch_data(&node).await {
                    Ok((_, _, watcher)) => NodeWatch::Oneshot(watcher),
                    // As a deletion seen by a watch: an expiring session's ephemeral node goes too.
                    Err(zk::Error::NoNode) => NodeWatch::Fired(zk::EventType::NodeDeleted),
                    Err(err) if connection_lost(&err) => continue,
                    Err(zk::Error::SessionExpired | zk::Error::ClientClosed) if !ephemeral => {
                        if !session.wait_past(live.generation).await {
                            return;
                        }
                        continue;
                    }
                    Err(_) => return,
                }
            }
        };
        let event_type = match watcher {
            NodeWatch::Oneshot(watcher) => watcher.changed().await.event_type,
            NodeWatch::Fired(event_type) => event_type,
            // The mirror's notice of the deletion; gone stale, watch the node itself.
            NodeWatch::Mirror(deletion) => match deletion.await {
                Woken::Deleted => zk::EventType::NodeDeleted,
                Woken::Stale => continue,
            },
        };
        match event_type {
            zk::EventType::NodeDeleted if ephemeral => {
                // An expiring session's ephemeral node is deleted too, and that
                // notice can come before the session's own end: the hold was
                // lost to expiry, not to someone else, and says so only if a
                // request on the session still succeeds.
                // Our own release deleted it (the hold is gone): nothing to ask.
                let current = still_holds(&holder, id);
                if current && session_alive(&holder, generation).await {
                    lose(&holder);
                }
                return;
            }
            zk::EventType::NodeDeleted => return lose(&holder),
            zk::EventType::Session if ephemeral => return,
            // Data changed, or a persistent node's session ended: watch again.
            _ => {}
        }
    }
}

/// Whether session `generation` still serves requests (after any reconnect);
/// false once it ended, which the session's own logic reports.
async fn session_alive(holder: &Weak<HolderState>, generation: u64) -> bool {
    loop {
        let Some(session) = holder.upgrade().map(|h| h.session.clone()) else { return false };
        let Ok(live) = session.live().await else { return false };
        if live.generation != generation {
            return false;
        }
        match live.client.check_stat("/").await {
            Ok(_) => return true,
            Err(err) if connection_lost(&err) => continue,
            Err(_) => return false,
        }
    }
}

/// One hold of a lock or semaphore handle, released when dropped (in the
/// background, on the session's own runtime: a drop needs no runtime
/// context, unlike zookeeper-client's `LockClient`, whose drop panics
/// without one). What [`Holder::hold`](super::Holder::hold) returns, as
/// tokio's `Mutex::lock` returns a `MutexGuard`.
///
/// It speaks for its own term only: once the hold is lost, or released and
/// taken again by the same handle, its state is `Lost` or `Released`, its
/// fenced writes are refused and its release or drop leaves the newer hold
/// alone. On a reentrant lock each hold counts one acquire; on a semaphore
/// a handle holds one lease, whatever its holds (kazoo).
///
/// ```
/// use zoolock::{Acquire, Lock, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # // A real server for the example (Debian's ZooKeeper, started by the harness).
/// # let connect = zk_harness::shared().connect_string();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = Session::connect(SessionOptions::new(connect)).await?;
/// session.ensure_path("/ledger", None).await?;
/// let lock = Lock::mutex(&session, "/locks/ledger")?;
/// if let Some(hold) = lock.hold(Acquire::default()).await? {
///     println!("{} holds with token {}", hold.node(), hold.fencing_token());
///     // Written only if this hold still lasts when the write reaches the server.
///     hold.fenced()?.set("/ledger", Some(b"balance: 10"), None).commit().await?;
///     // Stop writing once hold.state() leaves Held (Suspended, Lost(..)).
/// } // dropped: released in the background, on the session's runtime
/// session.close().await;
/// # Ok(()) })
/// # }
/// ```
#[must_use = "dropping a Hold releases it at once"]
pub struct Hold {
    state: Arc<HolderState>,
    node: String,
    token: i64,
    owner: Owner,
    released: bool,
}

impl Hold {
    /// The hold the handle has now, acquired for `owner`; [`Error::NotHeld`]
    /// if it was lost already (between the win and here: an expiry).
    pub(super) fn of(state: &Arc<HolderState>, owner: Owner) -> Result<Hold> {
        match state.node_and_token() {
            Some((node, token)) => Ok(Hold { state: state.clone(), node, token, owner, released: false }),
            None => Err(Error::NotHeld { path: state.path.clone() }),
        }
    }

    /// The hold's fencing token (see [`Holder::fencing_token`](super::Holder::fencing_token)).
    pub fn fencing_token(&self) -> i64 {
        self.token
    }

    /// The full path of the hold's node.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// The lock path (a semaphore's pool node).
    pub fn path(&self) -> &str {
        &self.state.path
    }

    /// Whether this hold is the handle's hold now.
    fn current(&self) -> bool {
        self.state.token() == Some(self.token)
    }

    /// `Held` while it lasts, `Suspended` while the connection is down (stop
    /// using the resource until `Held` again); `Lost(_)` or `Released` once over.
    pub fn state(&self) -> LockState {
        match self.state.state() {
            state if self.current() => state,
            lost @ LockState::Lost(_) => lost,
            _ => LockState::Released,
        }
    }

    /// Whether the hold lasts and is not suspended.
    pub fn is_held(&self) -> bool {
        self.state() == LockState::Held
    }

    /// Every change of the handle's state: `wait_for(|s| matches!(s, LockState::Lost(_)))`
    /// learns that the hold is over.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<LockState> {
        self.state.subscribe()
    }

    /// A transaction that commits only while this hold lasts
    /// ([`Transaction::fenced_by`]): [`Error::NotHeld`] once it is over.
    pub fn fenced(&self) -> Result<Transaction> {
        // Read before the check: nodes of a later hold fail it.
        let nodes = self.state.fence_nodes();
        if !self.current() {
            return Err(Error::NotHeld { path: self.state.path.clone() });
        }
        Ok(self.state.session.transaction().fenced_at(&self.state.path, nodes))
    }

    /// Releases the hold, as [`Holder::release`](super::Holder::release)
    /// does: `Ok(false)` if it was over already.
    pub async fn release(mut self) -> Result<bool> {
        self.released = true;
        self.state.release_own(self.owner, Some(self.token)).instrument(self.state.release_span()).await
    }

    /// [`Hold::release`] for callers without an async runtime.
    pub fn release_blocking(self) -> Result<bool> {
        runtime::block_on(self.release())
    }
}

impl std::fmt::Debug for Hold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hold").field("node", &self.node).field("fencing_token", &self.token).finish()
    }
}

impl Drop for Hold {
    /// Releases in the background, on the session's runtime: no runtime
    /// context is needed here. In the dropper's span, as a `release`. Not
    /// in a forked child, whose session's threads stayed in the parent.
    fn drop(&mut self) {
        if self.released || !self.current() || runtime::check_process().is_err() {
            return;
        }
        let (state, owner, token) = (self.state.clone(), self.owner, self.token);
        let span = state.release_span();
        self.state.session.spawn_in(span, async move {
            let _ = state.release_own(owner, Some(token)).await;
        });
    }
}

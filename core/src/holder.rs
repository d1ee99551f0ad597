//! What every handle (lock or semaphore) does around its recipe: one
//! acquisition at a time, timeouts and cancellation that leave no node,
//! telling the holder when its hold is suspended or lost, leases, release.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::{watch, Notify, OwnedMutexGuard};
use tokio::task::{AbortHandle, JoinHandle};
use tokio::time::{sleep_until, timeout, Instant};
use zookeeper_client as zk;

use crate::cleanup::{connection_lost, parent_of, DoubtfulPrefixes, Removal, Target, FOREGROUND_WAIT};
use crate::error::{Error, Result};
use crate::events::Listeners;
use crate::metrics::Meter;
use crate::mirror::{Deletion, Woken};
use crate::runtime;
use crate::session::{HoldWatcher, Session, SessionState, Status};

/// How to acquire: kazoo's `acquire(blocking, timeout, ephemeral)` plus a lease.
#[derive(Debug, Clone)]
pub struct Acquire {
    /// Waits for the holder; `false` tries once (kazoo's `blocking`).
    pub blocking: bool,
    /// `None` waits forever; `Some(ZERO)` tries once, like `blocking: false`.
    /// A deadline for the whole acquire, reconnections included.
    pub timeout: Option<Duration>,
    /// A persistent node survives the session: the lock stays held until released.
    pub ephemeral: bool,
    /// Releases the hold by itself this long after it was acquired (Redisson's leaseTime).
    pub lease: Option<Duration>,
    /// Who acquires: on a reentrant lock, an acquire by the owner that holds
    /// counts up and a release by another owner is refused. The handle
    /// itself ([`Owner::HANDLE`]) unless a binding names a thread or task.
    pub owner: Owner,
    /// The hold outlives the handle: once every clone of the handle is
    /// dropped, the hold lasts until the session ends (closed, or expired
    /// for an ephemeral node), its lease runs out or its node is deleted,
    /// and its listeners still hear how it ended. kazoo's: a
    /// garbage-collected `Lock` keeps its node. Off, dropping a held handle
    /// releases it (Rust's and .NET's way). A kept hold keeps its session
    /// open until then, even with no other handle on it.
    pub keep_if_dropped: bool,
}

/// Who holds a reentrant lock: the handle in Rust, a thread or task id in
/// the bindings (never 0, which is the handle's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owner(pub u64);

impl Owner {
    /// The handle itself: Rust's owner, and any acquire that names none.
    pub const HANDLE: Owner = Owner(0);
}

impl Default for Acquire {
    fn default() -> Self {
        Acquire {
            blocking: true,
            timeout: None,
            ephemeral: true,
            lease: None,
            owner: Owner::HANDLE,
            keep_if_dropped: false,
        }
    }
}

impl Acquire {
    /// A single try: `Ok(false)` at once if others hold.
    pub fn no_wait() -> Self {
        Acquire { blocking: false, ..Acquire::default() }
    }

    /// Waits at most `timeout` for the whole acquire, reconnections included.
    pub fn timeout(timeout: Duration) -> Self {
        Acquire { timeout: Some(timeout), ..Acquire::default() }
    }

    /// A node that outlives the session (kazoo's `ephemeral=False`).
    pub fn persistent(self) -> Self {
        Acquire { ephemeral: false, ..self }
    }

    /// Lets go by itself `lease` after the acquire (see [`Acquire::lease`](Acquire#structfield.lease)).
    pub fn lease(self, lease: Duration) -> Self {
        Acquire { lease: Some(lease), ..self }
    }

    /// Acquires for `owner` (a thread or task of a binding's reentrant lock).
    pub fn owner(self, owner: Owner) -> Self {
        Acquire { owner, ..self }
    }

    /// Keeps the hold when the handle is dropped (see [`Acquire::keep_if_dropped`](Acquire#structfield.keep_if_dropped)).
    pub fn keep_if_dropped(self) -> Self {
        Acquire { keep_if_dropped: true, ..self }
    }

    fn validate(&self) -> Result<()> {
        if !self.blocking && self.timeout.is_some() {
            return Err(Error::InvalidArgument("a timeout needs a blocking acquire".into()));
        }
        if self.lease.is_some_and(|l| l.is_zero()) {
            return Err(Error::InvalidArgument("a lease must be longer than zero".into()));
        }
        Ok(())
    }

    /// Whether to wait for the holder rather than try once.
    pub(crate) fn waits(&self) -> bool {
        self.blocking && self.timeout != Some(Duration::ZERO)
    }
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
    /// [`Session::close`] closed the session under the hold.
    SessionClosed,
    /// The hold's [lease](Acquire::lease) ran out.
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

/// A future a [`Holder`] returns: boxed, so that one `dyn Holder` can stand
/// for any recipe (the C ABI's one opaque holder type, Python's base class).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What every recipe handle — [`Lock`](crate::Lock), [`Semaphore`](crate::Semaphore),
/// and whatever recipe comes next — offers: one acquisition at a time,
/// timeouts and cancellation that leave no node, its state and listeners,
/// release. The bindings hold any recipe through this one trait. Handles
/// are cheap to clone; clones are the same handle.
pub trait Holder: sealed::Recipe + Send + Sync {
    /// Acquires: `Ok(true)` once held, `Ok(false)` when a single try or the
    /// timeout found it taken. Whatever ends the attempt — timeout,
    /// [`Holder::cancel`], an error, dropping the future — removes this
    /// contender's node. What an acquire on a handle that holds does is the
    /// recipe's: a [`Lock`](crate::Lock) waits for its own release (kazoo),
    /// or counts up for the same owner if reentrant; a
    /// [`Semaphore`](crate::Semaphore) succeeds at once, keeping one lease.
    fn acquire(&self, options: Acquire) -> BoxFuture<'_, Result<bool>> {
        let outcome = self.acquire_outcome(options);
        Box::pin(async move { outcome.await.map(Outcome::is_acquired) })
    }

    /// [`Holder::acquire`], saying why it did not hold: others held it
    /// ([`Outcome::Taken`]), or this handle did the whole time ([`Outcome::HandleBusy`]).
    fn acquire_outcome(&self, options: Acquire) -> BoxFuture<'_, Result<Outcome>>;

    /// [`Holder::acquire`] for code without a runtime.
    fn acquire_blocking(&self, options: Acquire) -> Result<bool> {
        runtime::block_on(self.acquire(options))
    }

    /// Releases: `Ok(false)` if this handle held nothing. If the connection
    /// is down, the node's delete goes on in the background until it
    /// succeeds or the session ends. A reentrant lock releases for the handle
    /// itself ([`Holder::release_by`]).
    fn release(&self) -> BoxFuture<'_, Result<bool>> {
        self.release_by(Owner::HANDLE)
    }

    /// Releases for `owner`. A reentrant lock counts down and deletes the
    /// node at its owner's last release; a release by another owner fails
    /// with [`Error::NotOwner`] and leaves the hold as it was. Any owner
    /// releases a handle that is not reentrant (kazoo).
    fn release_by(&self, owner: Owner) -> BoxFuture<'_, Result<bool>> {
        Box::pin(self.state_of().release_by(owner))
    }

    /// [`Holder::release`] for code without a runtime.
    fn release_blocking(&self) -> Result<bool> {
        runtime::block_on(self.release())
    }

    /// Cancels the acquires pending on this handle now; they fail with
    /// [`Error::Cancelled`] and leave no node. Later acquires are unaffected.
    fn cancel(&self) {
        self.state_of().cancel()
    }

    /// Whether the handle holds now ([`LockState::Held`] or [`LockState::Suspended`]).
    fn is_acquired(&self) -> bool {
        self.state_of().is_held()
    }

    /// Where the handle stands now.
    fn state(&self) -> LockState {
        self.state_of().state()
    }

    /// Watches this handle's state; `wait_for(|s| matches!(s, LockState::Lost(_)))` learns of a loss.
    fn subscribe(&self) -> watch::Receiver<LockState> {
        self.state_of().subscribe()
    }

    /// Calls `callback` with each new state, on zoolock's event thread.
    fn add_listener(&self, callback: Box<dyn Fn(LockState) + Send + Sync>) -> u64 {
        self.state_of().listeners().add(Arc::from(callback))
    }

    /// Stops the listener `add_listener` returned `id` for; false if it was gone.
    fn remove_listener(&self, id: u64) -> bool {
        self.state_of().listeners().remove(id)
    }

    /// The full path of the node this handle holds with (a lock node, a lease).
    fn node(&self) -> Option<String> {
        self.state_of().node()
    }

    /// A number that strictly increases from one holder of this path to
    /// the next: the zxid of the transaction that created the holder's node.
    /// zxids order every write of the ensemble, and a contender only holds
    /// once every earlier-created node it waits for is gone, so a later
    /// holder's node is always a later write. A guarded resource that refuses
    /// tokens lower than the highest it has seen turns away a holder that
    /// lost its lock without knowing (a long pause, a partition). A
    /// semaphore's grows from lease to lease, but up to `max_leases` hold at once.
    fn fencing_token(&self) -> Option<i64> {
        self.state_of().token()
    }

    /// A transaction that commits only while this handle holds
    /// ([`Transaction::fenced_by`](crate::Transaction::fenced_by)):
    /// [`Error::NotHeld`] if it holds nothing.
    ///
    /// ```
    /// use zoolock::{Acquire, Create, Holder, Lock, Session, SessionOptions};
    /// # fn main() -> zoolock::Result<()> {
    /// # let connect = zk_harness::shared().connect_string();
    /// let session = Session::connect_blocking(SessionOptions::new(connect))?;
    /// # let path = format!("/zoolock-doc{}", zk_harness::unique_path("fenced"));
    /// let lock = Lock::mutex(&session, &format!("{path}/lock"))?;
    /// session.ensure_path_blocking(&format!("{path}/state"), None)?;
    /// assert!(lock.acquire_blocking(Acquire::default())?);
    /// // Written only if the lock is still ours when the write reaches the server.
    /// lock.fenced()?.set(&format!("{path}/state"), b"v2", None).commit_blocking()?;
    /// lock.release_blocking()?;
    /// # Ok(())
    /// # }
    /// ```
    fn fenced(&self) -> Result<crate::Transaction> {
        self.session().transaction().fenced_on(self.state_of())
    }

    /// The lock path (a semaphore's pool node).
    fn path(&self) -> &str {
        &self.state_of().path
    }

    /// The session the handle contends on.
    fn session(&self) -> &Session {
        &self.state_of().session
    }

    /// The identifiers of those queued on the path, holders first: a lock's
    /// contenders (kazoo's `contenders()`), a semaphore's lease holders
    /// (`lease_holders()`; its waiters queue on its admission lock).
    fn queue(&self) -> BoxFuture<'_, Result<Vec<String>>>;

    /// [`Holder::queue`] for code without a runtime.
    fn queue_blocking(&self) -> Result<Vec<String>> {
        runtime::block_on(self.queue())
    }
}

/// What a recipe gives [`Holder`]'s provided methods; sealed, so the
/// machinery stays the core's.
pub(crate) mod sealed {
    use super::*;

    pub trait Recipe {
        /// The handle's holding state, shared by its clones.
        fn state_of(&self) -> &Arc<HolderState>;
    }
}

/// What an acquire on a handle that already holds does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OnHeld {
    /// Succeeds at once without a second hold (kazoo's `Semaphore`).
    Succeed,
    /// Waits for the handle's own release, within the timeout (kazoo's `Lock`).
    Wait,
    /// Counts up when the acquiring owner holds; other owners wait as with
    /// [`OnHeld::Wait`] (Curator's `InterProcessMutex`, reentrant per thread).
    Reenter,
}

/// How a hold learns of its node's deletion without a request of its own.
pub(crate) enum NodeWatch {
    /// A data watch set by the read that confirmed the node.
    Oneshot(zk::OneshotWatcher),
    /// The session's mirror of the lock path (see [`crate::mirror`]).
    Mirror(Deletion),
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
    /// The node's place in its session's line, kept while it holds.
    _place: Option<Arc<()>>,
    /// Until the handle records the win: a dropped acquire (between its
    /// win and the record) removes the node, and its acquire waits for that.
    guard: Option<(Session, Removals)>,
}

impl Won {
    /// Marks whether the acquire waited for another holder to go (a handoff, in the metrics).
    pub fn with_wait(mut self, waited: bool) -> Won {
        self.waited = waited;
        self
    }

    /// The removal of the node, when the hold ends.
    fn removal(&self, session: &Session) -> Removal {
        Removal {
            session: session.clone(),
            target: Target::Node(self.node.clone()),
            generation: self.generation,
            ephemeral: self.ephemeral,
        }
    }

    /// Sweeps the session's late duplicates of nodes on this lock path,
    /// whatever attempt gave them up: one may have landed after the last
    /// listing (see [`DoubtfulPrefixes`]).
    fn spawn_sweep(&self, session: &Session) -> Option<JoinHandle<()>> {
        DoubtfulPrefixes::spawn_sweep(session, parent_of(&self.node))
    }

    /// Removes the node, and sweeps its late duplicates, in the background.
    fn spawn_removals(&self, session: &Session) -> Vec<JoinHandle<()>> {
        std::iter::once(self.removal(session).spawn()).chain(self.spawn_sweep(session)).collect()
    }

    /// Recorded by the handle, whose release now removes the node. A
    /// persistent hold outlives a closed session (see [`Session::close`]).
    fn installed(mut self) -> Won {
        if let Some((session, _)) = self.guard.take() {
            if !self.ephemeral {
                session.persistent_nodes().hold(&Target::Node(self.node.clone()));
            }
        }
        self
    }
}

impl Drop for Won {
    fn drop(&mut self) {
        if let Some((session, removals)) = self.guard.take() {
            for removal in self.spawn_removals(&session) {
                removals.push(removal);
            }
        }
    }
}

struct Held {
    id: u64,
    won: Won,
    /// This hold's entry in the session's registry of holders.
    watch_key: u64,
    /// The lease timer and the watch on the node: they end with the hold.
    tasks: Vec<AbortHandle>,
    owner: Owner,
    since: Instant,
    /// Acquires by `owner` not yet released ([`OnHeld::Reenter`]; 1 otherwise).
    /// 0 while the last release takes the hold away.
    depth: u64,
    _turn: OwnedMutexGuard<()>,
}

impl Drop for Held {
    fn drop(&mut self) {
        for task in self.tasks.drain(..) {
            task.abort();
        }
    }
}

/// What waiting for the handle's turn and contending came to.
enum Turn {
    Won(Won, OwnedMutexGuard<()>),
    /// The handle held already ([`OnHeld::Succeed`]).
    AlreadyHeld,
    NotWon,
}

/// The holding state of one handle.
/// `pub` only to appear in the sealed [`sealed::Recipe`]: not exported.
pub struct HolderState {
    pub(crate) session: Session,
    /// Names the handle in errors.
    pub(crate) path: String,
    /// One acquisition per handle at a time; held for as long as the hold is,
    /// so a second acquire on a held handle waits for its release (kazoo).
    turn: Arc<tokio::sync::Mutex<()>>,
    on_held: OnHeld,
    /// Boxed: a queued waiter, which holds nothing, pays a pointer for it.
    held: Mutex<Option<Box<Held>>>,
    /// How many times [`HolderState::cancel`] was called; `cancelled` tells
    /// pending acquires of each call. A counter and a `Notify` rather than a
    /// watch channel, which allocates some 340 bytes per handle.
    cancels: AtomicU64,
    cancelled: Notify,
    state: Mutex<LockState>,
    /// Created by the first [`HolderState::subscribe`]: most handles, queued
    /// waiters above all, are never watched, and a channel costs some 340 bytes.
    changes: OnceLock<watch::Sender<LockState>>,
    listeners: Listeners<LockState>,
    acquisitions: AtomicU64,
    /// Whether its holds count in the session's metrics (not a semaphore's admission lock).
    pub metered: bool,
}

impl HolderState {
    pub(crate) fn new(session: &Session, path: &str, on_held: OnHeld) -> Arc<HolderState> {
        Arc::new(HolderState {
            session: session.clone(),
            path: path.to_owned(),
            turn: Arc::new(tokio::sync::Mutex::new(())),
            on_held,
            held: Mutex::new(None),
            cancels: AtomicU64::new(0),
            cancelled: Notify::new(),
            state: Mutex::new(LockState::Released),
            changes: OnceLock::new(),
            listeners: Listeners::new(),
            acquisitions: AtomicU64::new(0),
            metered: true,
        })
    }

    /// Runs `contend` under the handle's turn, bounded by the timeout and
    /// cancellable; records the win. Nodes that `contend` queued and did not
    /// win with are removed (see [`Attempt`]) before this returns.
    pub(crate) async fn acquire<F, Fut>(self: &Arc<Self>, options: &Acquire, contend: F) -> Result<Outcome>
    where
        F: Fn(Removals) -> Fut,
        Fut: Future<Output = Result<Option<Won>>>,
    {
        options.validate()?;
        self.session.check_usable()?;
        if self.session.is_closed() {
            return Err(self.session.closed_error());
        }
        let started = Instant::now();
        if self.enter(options.owner) {
            return Ok(Outcome::Acquired);
        }
        // A single try (a zero timeout included) is bounded by the request
        // bound in `take_turn_and`: a deadline of now would end it unanswered.
        // A timeout too large for a deadline (`Duration::MAX`) waits forever.
        let deadline = options.timeout.filter(|_| options.waits()).and_then(|t| Instant::now().checked_add(t));
        let cancels = self.cancels.load(Ordering::Acquire);
        loop {
            let removals = Removals::default();
            // Set once this acquire has the handle's turn: before that, it waits
            // for the handle itself, not for other contenders.
            let queued = AtomicBool::new(false);
            // Boxed once: moved through the select and the timeout, it would be
            // stored inline several times over (a waiter pays this for as long as it waits).
            let work = self.take_turn_and(options, &queued, Box::pin(contend(removals.clone())));
            let outcome = tokio::select! {
                biased;
                won = work => won,
                // A pending acquire holds a clone of the client, which would keep a
                // closed session open (and its locks held): it ends on close too.
                ended = self.cancelled_or_closed(cancels) => Err(ended),
                _ = sleep_until_some(deadline) => Ok(Turn::NotWon),
            };
            // Boxed, and only when there is something to wait for: its timer is large.
            if removals.any() {
                Box::pin(removals.wait()).await;
            }
            let (won, turn) = match outcome? {
                Turn::Won(won, turn) => (won, turn),
                Turn::AlreadyHeld => return Ok(Outcome::Acquired),
                Turn::NotWon if queued.load(Ordering::Acquire) => return Ok(Outcome::Taken),
                Turn::NotWon => return Ok(Outcome::HandleBusy),
            };
            let waited = won.waited;
            if self.install(won, turn, options) {
                self.meter().inspect(|m| m.acquired(started.elapsed(), waited));
                return Ok(Outcome::Acquired);
            }
            // The win belonged to a session that has ended since: queue again
            // on the new one, as a waiter whose session expired does.
            if self.session.is_closed() {
                return Err(self.session.closed_error());
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return Ok(Outcome::Taken);
            }
        }
    }

    async fn take_turn_and(
        &self,
        options: &Acquire,
        queued: &AtomicBool,
        contend: impl Future<Output = Result<Option<Won>>>,
    ) -> Result<Turn> {
        let turn = self.turn.clone();
        if !options.waits() {
            let Ok(turn) = turn.try_lock_owned() else {
                return Ok(if self.enter(options.owner) { Turn::AlreadyHeld } else { Turn::NotWon });
            };
            queued.store(true, Ordering::Release);
            // Even a single try must not hang on a dead connection.
            // Boxed: a timer is large, and waiters (who wait for a turn) never need it.
            let won = Box::pin(self.session.bounded(contend)).await?;
            return Ok(won.map_or(Turn::NotWon, |w| Turn::Won(w, turn)));
        }
        // A free turn means nothing is held (a hold keeps the turn): no
        // hold to wait for or enter. Waiting for a busy one is boxed, so
        // that what a queued waiter keeps is small (issue 16).
        let turn = match (turn.clone().try_lock_owned(), self.on_held) {
            (Ok(turn), _) => turn,
            (Err(_), OnHeld::Wait) => Box::pin(turn.lock_owned()).await,
            (Err(_), OnHeld::Succeed | OnHeld::Reenter) => {
                match Box::pin(self.turn_or_enter(turn, options.owner)).await {
                    Some(turn) => turn,
                    None => return Ok(Turn::AlreadyHeld),
                }
            }
        };
        queued.store(true, Ordering::Release);
        Ok(contend.await?.map_or(Turn::NotWon, |w| Turn::Won(w, turn)))
    }

    /// Waits for the handle's turn, or until a hold that `owner` may enter
    /// (see [`HolderState::enter`]) — one another acquire on this handle wins —
    /// and enters it (`None`). Every hold recorded or ended changes the
    /// state, so each change is a moment to ask again; the check runs
    /// outside the state's lock, which [`HolderState::mark`] takes under `held`.
    async fn turn_or_enter(&self, turn: Arc<tokio::sync::Mutex<()>>, owner: Owner) -> Option<OwnedMutexGuard<()>> {
        let mut states = self.subscribe();
        let turn = turn.lock_owned();
        tokio::pin!(turn);
        loop {
            if self.enter(owner) {
                return None;
            }
            tokio::select! {
                turn = &mut turn => return Some(turn),
                _ = states.changed() => {}
            }
        }
    }

    /// Whether an acquire by `owner` succeeds at once, without a second hold:
    /// on a semaphore that holds; on a reentrant lock that `owner` holds,
    /// counting one acquire more.
    fn enter(&self, owner: Owner) -> bool {
        match (self.on_held, self.held.lock().unwrap().as_mut()) {
            (OnHeld::Succeed, Some(_)) => true,
            (OnHeld::Reenter, Some(held)) if held.owner == owner && held.depth > 0 => {
                held.depth += 1;
                true
            }
            _ => false,
        }
    }

    /// [`HolderState::release`] by `owner`. A reentrant lock's owner counts down,
    /// and lets go at its last release; another owner's release is refused
    /// with [`Error::NotOwner`] and changes nothing. Other handles let go
    /// whoever releases (kazoo).
    pub(crate) async fn release_by(&self, owner: Owner) -> Result<bool> {
        if self.on_held == OnHeld::Reenter {
            let mut held = self.held.lock().unwrap();
            if let Some(held) = held.as_mut() {
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
        // Depth 0 keeps re-entries out until `release` takes the hold, on
        // this same poll (it takes the hold before its first await).
        Ok(self.release().await)
    }

    /// Records the win as this handle's hold; false, recording nothing, if
    /// the session the node was won on has ended since (a caller not polled
    /// for a while, or a wake that raced the expiry): an ephemeral node of an
    /// ended session is gone, and another contender may hold by now.
    fn install(self: &Arc<Self>, mut won: Won, turn: OwnedMutexGuard<()>, options: &Acquire) -> bool {
        let (lease, owner) = (options.lease, options.owner);
        let status = self.session.status();
        let ended = status.state == SessionState::Lost || status.generation != won.generation;
        if status.state == SessionState::Closed || (won.ephemeral && ended) {
            drop(won); // its guard removes the node; the acquire waits for that
            return false;
        }
        let id = self.acquisitions.fetch_add(1, Ordering::Relaxed) + 1;
        let watcher: Weak<dyn HoldWatcher> = Arc::downgrade(self) as Weak<dyn HoldWatcher>;
        // A kept hold's session keeps its state alive until the hold ends (`unwatch_hold`).
        let kept = options.keep_if_dropped.then(|| self.clone() as Arc<dyn HoldWatcher>);
        let watch_key = self.session.watch_hold(watcher, kept);
        let node_watch = won.node_watch.take();
        let (node, generation, ephemeral) = (won.node.clone(), won.generation, won.ephemeral);
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
        if let Some(lease) = lease {
            let holder = Arc::downgrade(self);
            let timer = self.session.spawn(async move {
                tokio::time::sleep(lease).await;
                if let Some(holder) = holder.upgrade() {
                    holder.lose(id, LostReason::LeaseExpired);
                }
            });
            self.attach(id, timer.abort_handle());
        }
        match node_watch {
            // The mirror calls back on the node's deletion: a hold costs no
            // task, and its release nothing to abort. ZooKeeper sends the
            // mirror's watch the node's deletion like any other change of the
            // path (mirror.rs, point 2), and a mirror gone stale says so too.
            Some(NodeWatch::Mirror(deletion)) => {
                let holder = Arc::downgrade(self);
                deletion.then(move |woken| {
                    // Under the mirror's lock: only look, and hand the rest to a task.
                    let Some(holder) = holder.upgrade() else { return };
                    if !holder.holds(id) {
                        return; // our own release deleted it
                    }
                    let node_watch = Some(NodeWatch::Mirror(Deletion::ready(woken)));
                    let watching = watch_node(Arc::downgrade(&holder), id, node, generation, ephemeral, node_watch);
                    let watch = holder.session.spawn(watching);
                    holder.attach(id, watch.abort_handle());
                });
            }
            node_watch => {
                let watch =
                    self.session.spawn(watch_node(Arc::downgrade(self), id, node, generation, ephemeral, node_watch));
                self.attach(id, watch.abort_handle());
            }
        }
        // A change between the win and the registration would go unheard.
        self.session_changed(self.session.status());
        true
    }

    /// Ties `task` to hold `id`: aborted when the hold ends, or now if it has.
    fn attach(&self, id: u64, task: AbortHandle) {
        match self.held.lock().unwrap().as_mut().filter(|h| h.id == id) {
            Some(held) => held.tasks.push(task),
            None => task.abort(),
        }
    }

    /// Whether something was held. If the connection is down, the delete
    /// goes on in the background until it succeeds or the session ends.
    /// The delete runs in the caller's task (no spawn: a cycle wakes no
    /// other thread); a caller that stops waiting after the first poll (a
    /// timeout around `release`, a cancelled task) leaves it running in the
    /// background (see [`Removal::run_bounded`]): no node outlives it.
    pub(crate) async fn release(&self) -> bool {
        self.release_if(|_| true).await
    }

    /// Releases the hold won with fencing token `token` (a leadership's own
    /// term), and no later one: false if the handle holds another or none.
    pub(crate) async fn release_term(&self, token: i64) -> bool {
        self.release_if(|won| won.token == token).await
    }

    async fn release_if(&self, this: impl FnOnce(&Won) -> bool) -> bool {
        let Some(mut held) = self.held.lock().unwrap().take_if(|h| this(&h.won)) else { return false };
        // Our own delete would fire the node's watch: stop it first.
        for task in held.tasks.drain(..) {
            task.abort();
        }
        self.session.unwatch_hold(held.watch_key);
        self.meter().inspect(|m| m.hold_ended(held.since.elapsed()));
        self.set_state(LockState::Released);
        if !held.won.ephemeral {
            self.session.persistent_nodes().release(&Target::Node(held.won.node.clone()));
        }
        let node = held.won.removal(&self.session).run_bounded();
        held.won.spawn_sweep(&self.session);
        node.await;
        true
    }

    pub(crate) fn cancel(&self) {
        self.cancels.fetch_add(1, Ordering::AcqRel);
        self.cancelled.notify_waiters();
    }

    /// Returns once [`HolderState::cancel`] was called after the count was
    /// `seen`, or the session closed: the error to end the acquire with. Two
    /// notifications rather than a watch of the session's status, which is
    /// larger, for as long as a waiter waits (issue 16).
    async fn cancelled_or_closed(&self, seen: u64) -> Error {
        loop {
            let cancelled = self.cancelled.notified();
            let closed = self.session.closing();
            tokio::pin!(cancelled, closed);
            // Registered before the checks: a cancel or close between them still wakes it.
            cancelled.as_mut().enable();
            closed.as_mut().enable();
            if self.cancels.load(Ordering::Acquire) != seen {
                return Error::Cancelled { path: self.path.clone() };
            }
            if self.session.is_closed() {
                return self.session.closed_error();
            }
            tokio::select! {
                _ = cancelled => {}
                _ = closed => {}
            }
        }
    }

    /// Whether acquisition `id` is the hold now.
    fn holds(&self, id: u64) -> bool {
        self.held.lock().unwrap().as_ref().is_some_and(|h| h.id == id)
    }

    pub(crate) fn is_held(&self) -> bool {
        self.held.lock().unwrap().is_some()
    }

    pub(crate) fn node(&self) -> Option<String> {
        self.held.lock().unwrap().as_ref().map(|h| h.won.node.clone())
    }

    pub(crate) fn token(&self) -> Option<i64> {
        self.held.lock().unwrap().as_ref().map(|h| h.won.token)
    }

    /// The hold's node and token, read together: of one and the same hold.
    pub(crate) fn node_and_token(&self) -> Option<(String, i64)> {
        self.held.lock().unwrap().as_ref().map(|h| (h.won.node.clone(), h.won.token))
    }

    pub(crate) fn state(&self) -> LockState {
        *self.state.lock().unwrap()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<LockState> {
        // Under the state's lock, as `set_state` sends: no change falls between the two.
        let state = self.state.lock().unwrap();
        self.changes.get_or_init(|| watch::Sender::new(*state)).subscribe()
    }

    pub(crate) fn listeners(&self) -> &Listeners<LockState> {
        &self.listeners
    }

    fn set_state(&self, state: LockState) {
        let mut current = self.state.lock().unwrap();
        if std::mem::replace(&mut *current, state) == state {
            return;
        }
        // Counted before the change is published: whoever it wakes reads it in the metrics.
        match (state, self.meter()) {
            (LockState::Suspended, Some(meter)) => meter.suspended(),
            (LockState::Lost(reason), Some(meter)) => meter.lost(reason),
            _ => {}
        }
        if let Some(changes) = self.changes.get() {
            changes.send_replace(state);
        }
        // Queued under the lock too, so listeners hear changes in their order.
        self.listeners.emit(state);
    }

    /// Ends acquisition `id` because of `reason`, if it still holds.
    fn lose(&self, id: u64, reason: LostReason) {
        let mut held = self.held.lock().unwrap();
        if held.as_ref().is_none_or(|h| h.id != id) {
            return;
        }
        let lost = held.take().expect("checked above");
        drop(held);
        self.session.unwatch_hold(lost.watch_key);
        self.meter().inspect(|m| m.hold_ended(lost.since.elapsed()));
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

    fn meter(&self) -> Option<&Meter> {
        self.metered.then(|| self.session.meter())
    }

    fn mark(&self, id: u64, state: LockState) {
        let held = self.held.lock().unwrap();
        if held.as_ref().is_some_and(|h| h.id == id) {
            self.set_state(state);
        }
    }
}

impl HoldWatcher for HolderState {
    /// Tells the holder when its hold is suspended, restored or lost.
    fn session_changed(&self, now: Status) {
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
    /// Dropping a held handle releases it, in the background.
    fn drop(&mut self) {
        if let Some(held) = self.held.get_mut().unwrap().take() {
            self.session.unwatch_hold(held.watch_key);
            self.meter().inspect(|m| m.hold_ended(held.since.elapsed()));
            held.won.spawn_removals(&self.session);
        }
    }
}

/// Watches hold `id`'s node and ends the hold with [`LostReason::NodeDeleted`]
/// when someone else deletes it. Our own release deletes it too, but the hold
/// is gone by then (and this task aborted), so that is a no-op. A watch ends
/// early only when its session does, which the session's own logic reports;
/// a persistent node outlives its session and is watched again on the next.
async fn watch_node(
    holder: Weak<HolderState>,
    id: u64,
    node: String,
    generation: u64,
    ephemeral: bool,
    mut armed: Option<NodeWatch>,
) {
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
                // Sent at once and not awaited by the acquirer: the hold costs no round trip more.
                match live.client.get_and_watch_data(&node).await {
                    Ok((_, _, watcher)) => NodeWatch::Oneshot(watcher),
                    Err(zk::Error::NoNode) => return lose(&holder),
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
                let current = holder.upgrade().is_some_and(|h| h.holds(id));
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

/// Removals started by one acquire, which it waits for before returning so
/// that a timed-out or cancelled acquire leaves no node behind.
#[derive(Default, Clone)]
pub(crate) struct Removals(Arc<Mutex<Vec<JoinHandle<()>>>>);

impl Removals {
    pub fn push(&self, removal: JoinHandle<()>) {
        self.0.lock().unwrap().push(removal);
    }

    /// Whether any removal was started.
    fn any(&self) -> bool {
        !self.0.lock().unwrap().is_empty()
    }

    async fn wait(&self) {
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
    place: Option<Arc<()>>,
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

    /// The prefix the node is (to be) created with.
    pub fn prefix(&self) -> &str {
        match self.removal.as_ref().map(|r| &r.target) {
            Some(Target::Prefix { prefix, .. }) => prefix,
            _ => unreachable!("the prefix is only asked for before the create succeeds"),
        }
    }

    /// A create's reply was lost and its node not found: that create may
    /// still land late, under the old prefix. Create again under `prefix`;
    /// the old one goes to the session's [`DoubtfulPrefixes`], which sweep
    /// its node from the first listing of the path that shows it, by this
    /// attempt or any later one of the session.
    pub fn renew_prefix(&mut self, prefix: String) {
        let removal = self.removal.as_mut().expect("attempt in use");
        let old = removal.target.clone();
        let Target::Prefix { parent, prefix: current } = &mut removal.target else {
            unreachable!("a prefix is renewed only before the create succeeds")
        };
        let given_up = std::mem::replace(current, prefix);
        removal.session.doubtful_prefixes().add(parent, given_up, removal.generation, removal.ephemeral);
        if let Some(persistent) = removal.persistent() {
            // The old prefix stays registered until its node is found, or the session closes.
            persistent.settle(&old);
            persistent.own(&removal.target);
        }
    }

    /// Takes out of `children` (of the path, listed on session `generation`)
    /// the late nodes of the session's doubtful prefixes (see
    /// [`Attempt::renew_prefix`]): each is ours and would sit in the queue,
    /// maybe right ahead of our own node. It is deleted in the background,
    /// and this acquire waits for that before it returns.
    pub fn sweep_late(&self, generation: u64, children: &mut Vec<String>) {
        let Some(ours) = self.removal.as_ref() else { return };
        let (session, parent) = (&ours.session, ours.target.parent());
        for removal in session.doubtful_prefixes().sweep(session, parent, generation, children) {
            self.removals.push(removal);
        }
    }

    /// Keeps the node's place in its session's line for as long as it is queued or held.
    pub fn keep_place(&mut self, place: Arc<()>) {
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
            _place: self.place.take(),
            guard: Some((removal.session, self.removals.clone())),
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
        let sweep = DoubtfulPrefixes::spawn_sweep(&removal.session, removal.target.parent());
        self.removals.push(removal.spawn());
        if let Some(sweep) = sweep {
            self.removals.push(sweep);
        }
    }
}

pub(crate) async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        // Boxed: a timer is large, and an acquire without a timeout (the
        // common waiter) would carry one for as long as it waits.
        Some(deadline) => Box::pin(sleep_until(deadline)).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zookeeper_client as zk;

    use super::*;
    use crate::SessionOptions;

    /// The window between a win and its record, while the acquire waits for
    /// earlier removals: an acquire dropped there removes the node it won.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_acquire_dropped_between_its_win_and_its_record_removes_the_node() {
        let connect = zk_harness::shared().connect_string();
        let session = Session::connect(SessionOptions::new(&connect)).await.unwrap();
        let raw = zk::Client::connect(&connect).await.unwrap();
        let parent = format!("/zoolock-tests{}", zk_harness::unique_path("won-dropped"));
        let open = zk::Acls::anyone_all();
        raw.mkdir(&parent, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
        let node = format!("{parent}/node");
        let holder = HolderState::new(&session, &parent, OnHeld::Wait);
        let won = Arc::new(tokio::sync::Notify::new());
        let contend = |removals: Removals| {
            let (session, node, won) = (session.clone(), node.clone(), won.clone());
            async move {
                // An earlier attempt's removal, still running when this one wins.
                removals.push(tokio::spawn(std::future::pending::<()>()));
                let live = session.live().await?;
                let ephemeral = zk::CreateMode::Ephemeral.with_acls(open);
                let (stat, _) = live.client.create(&node, b"", &ephemeral).await.unwrap();
                let target = Target::Node(node.clone());
                let removal = Removal { session, target, generation: live.generation, ephemeral: true };
                let mut attempt = Attempt::new(removal, &removals);
                won.notify_one();
                Ok(Some(attempt.won(stat.czxid)))
            }
        };
        let options = Acquire::default();
        let mut acquire = Box::pin(holder.acquire(&options, contend));
        tokio::select! {
            _ = &mut acquire => panic!("the acquire did not wait for the earlier removal"),
            _ = won.notified() => {}
        }
        drop(acquire);
        assert!(!holder.is_held());
        let gone = async {
            loop {
                let (stat, watcher) = raw.check_and_watch_stat(&node).await.unwrap();
                if stat.is_none() {
                    return;
                }
                watcher.changed().await;
            }
        };
        timeout(Duration::from_secs(10), gone).await.expect("the won node outlived the dropped acquire");
    }
}

//! What every handle (lock or semaphore) does around its recipe: one
//! acquisition at a time, timeouts and cancellation that leave no node,
//! telling the holder when its hold is suspended or lost, leases, release.
//!
//! The [`Holder`] trait is what users and bindings call; [`HolderState`],
//! one per handle, does it: [`acquire`] takes the handle's turn and runs
//! the recipe's contention; [`hold`] records the win, watches it and ends it.

mod acquire;
mod hold;
mod order;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, OnceLock};

use tokio::sync::{watch, Notify};

use crate::error::{Error, Result};
use crate::events::Listeners;
use crate::metrics::{Meter, PathSeries};
use crate::naming::parent_of;
use crate::runtime;
use crate::session::Session;
use crate::state::{LockState, Outcome};
use crate::znode::{FencedNode, Transaction};
pub use acquire::{Acquire, Owner};
use hold::Held;
pub use hold::Hold;

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

    /// [`Holder::acquire`] for code without a runtime. A waiter's replies
    /// are handled on zoolock's runtime, and the caller woken once
    /// (`runtime::wait`).
    fn acquire_blocking(&self, options: Acquire) -> Result<bool> {
        let handle = self.handle();
        runtime::wait(async move { handle.acquire(options).await })
    }

    /// [`Holder::acquire`], returning the hold as a [`Hold`] that releases
    /// when dropped; `Ok(None)` when a single try or the timeout found it
    /// taken. [`Error::NotHeld`] if the hold was lost before this returned.
    fn hold(&self, options: Acquire) -> BoxFuture<'_, Result<Option<Hold>>> {
        let owner = options.owner;
        let acquire = self.acquire(options);
        Box::pin(async move {
            if !acquire.await? {
                return Ok(None);
            }
            Hold::of(self.state_of(), owner).map(Some)
        })
    }

    /// [`Holder::hold`] for code without a runtime, as [`Holder::acquire_blocking`].
    fn hold_blocking(&self, options: Acquire) -> Result<Option<Hold>> {
        let handle = self.handle();
        runtime::wait(async move { handle.hold(options).await })
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

    /// The lock path and fencing token of each node the handle holds with,
    /// in the order taken: one for a lock or semaphore, one per path for a
    /// [`MultiLock`](crate::MultiLock); empty when it holds nothing.
    fn fencing_tokens(&self) -> Vec<(String, i64)> {
        self.state_of().tokens()
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
    /// lock.fenced()?.set(&format!("{path}/state"), Some(b"v2"), None).commit_blocking()?;
    /// lock.release_blocking()?;
    /// # Ok(())
    /// # }
    /// ```
    fn fenced(&self) -> Result<Transaction> {
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

/// [`Holder`]'s methods as inherent ones of a recipe handle, so that a
/// handle's methods need no `use zoolock::Holder`; each forwards to the trait.
macro_rules! holder_methods {
    ($recipe:ty) => {
        /// The [`Holder`](crate::Holder) methods, callable without importing the trait.
        impl $recipe {
            /// Acquires: `Ok(true)` once held, `Ok(false)` if a single try or the timeout found it taken.
            /// See [`Holder::acquire`](crate::Holder::acquire).
            pub fn acquire(&self, options: crate::Acquire) -> crate::BoxFuture<'_, crate::Result<bool>> {
                crate::Holder::acquire(self, options)
            }

            /// [`acquire`](Self::acquire), saying why it did not hold: taken by others, or by this handle.
            /// See [`Holder::acquire_outcome`](crate::Holder::acquire_outcome).
            pub fn acquire_outcome(
                &self,
                options: crate::Acquire,
            ) -> crate::BoxFuture<'_, crate::Result<crate::Outcome>> {
                crate::Holder::acquire_outcome(self, options)
            }

            /// [`acquire`](Self::acquire) for code without a runtime.
            /// See [`Holder::acquire_blocking`](crate::Holder::acquire_blocking).
            pub fn acquire_blocking(&self, options: crate::Acquire) -> crate::Result<bool> {
                crate::Holder::acquire_blocking(self, options)
            }

            /// Acquires, returning a [`Hold`](crate::Hold) that releases when dropped; `Ok(None)` if it was taken.
            /// See [`Holder::hold`](crate::Holder::hold).
            pub fn hold(&self, options: crate::Acquire) -> crate::BoxFuture<'_, crate::Result<Option<crate::Hold>>> {
                crate::Holder::hold(self, options)
            }

            /// [`hold`](Self::hold) for code without a runtime.
            /// See [`Holder::hold_blocking`](crate::Holder::hold_blocking).
            pub fn hold_blocking(&self, options: crate::Acquire) -> crate::Result<Option<crate::Hold>> {
                crate::Holder::hold_blocking(self, options)
            }

            /// Releases: `Ok(false)` if the handle held nothing.
            /// See [`Holder::release`](crate::Holder::release).
            pub fn release(&self) -> crate::BoxFuture<'_, crate::Result<bool>> {
                crate::Holder::release(self)
            }

            /// Releases for `owner`; on a reentrant lock, counts down that owner's acquires.
            /// See [`Holder::release_by`](crate::Holder::release_by).
            pub fn release_by(&self, owner: crate::Owner) -> crate::BoxFuture<'_, crate::Result<bool>> {
                crate::Holder::release_by(self, owner)
            }

            /// [`release`](Self::release) for code without a runtime.
            /// See [`Holder::release_blocking`](crate::Holder::release_blocking).
            pub fn release_blocking(&self) -> crate::Result<bool> {
                crate::Holder::release_blocking(self)
            }

            /// Cancels pending acquires: they fail with [`Error::Cancelled`](crate::Error::Cancelled), leaving no node.
            /// See [`Holder::cancel`](crate::Holder::cancel).
            pub fn cancel(&self) {
                crate::Holder::cancel(self)
            }

            /// Whether the handle holds now (`Held` or `Suspended`).
            /// See [`Holder::is_acquired`](crate::Holder::is_acquired).
            pub fn is_acquired(&self) -> bool {
                crate::Holder::is_acquired(self)
            }

            /// Where the handle stands now: `Released`, `Held`, `Suspended` or `Lost(..)`.
            /// See [`Holder::state`](crate::Holder::state).
            pub fn state(&self) -> crate::LockState {
                crate::Holder::state(self)
            }

            /// Watches the handle's state: `wait_for(|s| matches!(s, LockState::Lost(_)))` learns of a loss.
            /// See [`Holder::subscribe`](crate::Holder::subscribe).
            pub fn subscribe(&self) -> tokio::sync::watch::Receiver<crate::LockState> {
                crate::Holder::subscribe(self)
            }

            /// Calls `callback` with each new state, on zoolock's event thread; returns the listener's id.
            /// See [`Holder::add_listener`](crate::Holder::add_listener).
            pub fn add_listener(&self, callback: Box<dyn Fn(crate::LockState) + Send + Sync>) -> u64 {
                crate::Holder::add_listener(self, callback)
            }

            /// Stops the listener [`add_listener`](Self::add_listener) returned `id` for; false if it was gone.
            /// See [`Holder::remove_listener`](crate::Holder::remove_listener).
            pub fn remove_listener(&self, id: u64) -> bool {
                crate::Holder::remove_listener(self, id)
            }

            /// The full path of the node the handle holds with; `None` while it holds nothing.
            /// See [`Holder::node`](crate::Holder::node).
            pub fn node(&self) -> Option<String> {
                crate::Holder::node(self)
            }

            /// The hold's fencing token, strictly increasing from holder to holder; `None` while not held.
            /// See [`Holder::fencing_token`](crate::Holder::fencing_token).
            pub fn fencing_token(&self) -> Option<i64> {
                crate::Holder::fencing_token(self)
            }

            /// The lock path and fencing token of each node the handle holds with, in the order taken.
            /// See [`Holder::fencing_tokens`](crate::Holder::fencing_tokens).
            pub fn fencing_tokens(&self) -> Vec<(String, i64)> {
                crate::Holder::fencing_tokens(self)
            }

            /// A transaction that commits only while it holds; [`Error::NotHeld`](crate::Error::NotHeld) if not.
            /// See [`Holder::fenced`](crate::Holder::fenced).
            pub fn fenced(&self) -> crate::Result<crate::Transaction> {
                crate::Holder::fenced(self)
            }

            /// The lock path (a semaphore's pool node).
            /// See [`Holder::path`](crate::Holder::path).
            pub fn path(&self) -> &str {
                crate::Holder::path(self)
            }

            /// The session the handle contends on.
            /// See [`Holder::session`](crate::Holder::session).
            pub fn session(&self) -> &crate::Session {
                crate::Holder::session(self)
            }

            /// The identifiers queued on the path, holders first (kazoo's `contenders()`, `lease_holders()`).
            /// See [`Holder::queue`](crate::Holder::queue).
            pub fn queue(&self) -> crate::BoxFuture<'_, crate::Result<Vec<String>>> {
                crate::Holder::queue(self)
            }

            /// [`queue`](Self::queue) for code without a runtime.
            /// See [`Holder::queue_blocking`](crate::Holder::queue_blocking).
            pub fn queue_blocking(&self) -> crate::Result<Vec<String>> {
                crate::Holder::queue_blocking(self)
            }
        }
    };
}
pub(crate) use holder_methods;

/// What a recipe gives [`Holder`]'s provided methods; sealed, so the
/// machinery stays the core's.
pub(crate) mod sealed {
    use super::*;

    pub trait Recipe {
        /// The handle's holding state, shared by its clones.
        fn state_of(&self) -> &Arc<HolderState>;

        /// A clone of the handle that a call moved to the runtime owns
        /// (`runtime::wait`), for a `dyn Holder` as for the recipe itself.
        fn handle(&self) -> Box<dyn Holder>;
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
    series: PathSeries,
}

impl std::fmt::Debug for HolderState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HolderState").field("path", &self.path).finish_non_exhaustive()
    }
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
            series: PathSeries::default(),
        })
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

    /// Every node of the hold (a multi-lock's one per path), with the
    /// session generation an ephemeral one lives on; empty if none.
    pub(crate) fn fence_nodes(&self) -> Vec<FencedNode> {
        let held = self.held.lock().unwrap();
        held.as_ref().map_or_else(Vec::new, |h| {
            h.won.all().map(|w| (w.node.clone(), w.ephemeral.then_some(w.generation))).collect()
        })
    }

    /// Each node's lock path and fencing token, in the order taken; empty if none.
    pub(crate) fn tokens(&self) -> Vec<(String, i64)> {
        let held = self.held.lock().unwrap();
        held.as_ref().map_or_else(Vec::new, |h| h.won.all().map(|w| (parent_of(&w.node).to_owned(), w.token)).collect())
    }

    /// `Held` only while the quorum's confirmation of the session holds:
    /// a read after the process was paused past it says `Suspended` at once,
    /// before the session's own timer has published it.
    pub(crate) fn state(&self) -> LockState {
        match *self.state.lock().unwrap() {
            LockState::Held if !self.session.confirmed() => LockState::Suspended,
            state => state,
        }
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
        let before = std::mem::replace(&mut *current, state);
        if before == state {
            return;
        }
        match state {
            LockState::Suspended => tracing::info!(path = self.path, "zoolock hold suspended: the connection is down"),
            LockState::Held if before == LockState::Suspended => {
                tracing::info!(path = self.path, "zoolock hold restored")
            }
            LockState::Lost(reason) => tracing::warn!(path = self.path, reason = reason.name(), "zoolock hold lost"),
            LockState::Released => tracing::debug!(path = self.path, "zoolock released"),
            LockState::Held => {}
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

    fn meter(&self) -> Option<&Meter> {
        self.metered.then(|| self.session.meter())
    }
}

/// Fenced writes: a [`Transaction`] made to commit only while a handle holds.
impl Transaction {
    /// Makes the transaction commit only while `holder` holds: it first
    /// checks that the holder's node exists. Fails with [`Error::NotHeld`]
    /// if the handle holds nothing now, and the commit fails with it, writing
    /// nothing, if the node is gone by then (deleted by an operator, its
    /// session expired, released).
    ///
    /// Assumes no one but this handle creates a node of that name while its
    /// session lives: the name carries the handle's own random prefix
    /// (kazoo's and Curator's), so a node there is this hold's node. An
    /// ephemeral hold's fence also fails on a later session than the hold's,
    /// where DistributedLock's `lock-<seq>`, everyone's, may name another
    /// client's node. An operator who re-creates the node by hand defeats
    /// the fence; the hold itself sees the deletion and ends as
    /// [`LostReason::NodeDeleted`](crate::LostReason::NodeDeleted).
    pub fn fenced_by(self, holder: &dyn Holder) -> Result<Transaction> {
        self.fenced_on(holder.state_of())
    }

    /// [`Transaction::fenced_by`] the holder whose state this is.
    pub(crate) fn fenced_on(self, state: &HolderState) -> Result<Transaction> {
        let nodes = state.fence_nodes();
        if nodes.is_empty() {
            return Err(Error::NotHeld { path: state.path.clone() });
        }
        Ok(self.fenced_at(&state.path, nodes))
    }
}

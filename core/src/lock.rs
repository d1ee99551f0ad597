//! The lock recipe: contenders create EPHEMERAL_SEQUENTIAL nodes under the
//! lock path; the lowest holds the lock; each other contender watches only
//! the nearest lower node it waits for, so a release wakes one client.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::sync::{watch, OwnedMutexGuard};
use tokio::task::AbortHandle;
use tokio::time::{sleep_until, timeout, Instant};
use zookeeper_client as zk;

use crate::cleanup::{find_own, Removal, Target, FOREGROUND_WAIT};
use crate::error::{Error, Result};
use crate::events::Listeners;
use crate::naming::{self, Role, Scheme, Standing};
use crate::options::{validate_identifier, validate_path};
use crate::runtime;
use crate::session::{Live, Session, SessionState, Status};

/// Which recipe a handle follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// kazoo's `Lock`, Curator's `InterProcessMutex`.
    Mutex,
    /// Shares the lock with other readers; waits only for earlier writers.
    Read,
    /// Waits for every earlier contender, readers included.
    Write,
}

impl Kind {
    fn role(self) -> Role {
        if self == Kind::Read { Role::Reader } else { Role::Writer }
    }

    fn new_prefix(self, scheme: Scheme) -> String {
        match self {
            Kind::Mutex => naming::new_prefix(scheme, Role::Writer),
            Kind::Read => naming::new_prefix(scheme, Role::Reader),
            Kind::Write => naming::new_write_prefix(scheme),
        }
    }
}

/// What a handle writes and recognises besides its kind.
#[derive(Debug, Clone, Default)]
pub struct LockConfig {
    /// Node data, shown by `contenders()` (kazoo's `identifier`).
    pub identifier: Vec<u8>,
    pub scheme: Scheme,
    /// Further node-name markers to queue behind, as writers (kazoo's `extra_lock_patterns`).
    pub extra_markers: Vec<String>,
}

/// How to acquire: kazoo's `acquire(blocking, timeout, ephemeral)` plus a lease.
#[derive(Debug, Clone)]
pub struct Acquire {
    pub blocking: bool,
    /// `None` waits forever; `Some(ZERO)` tries once, like `blocking: false`.
    pub timeout: Option<Duration>,
    /// A persistent node survives the session: the lock stays held until released.
    pub ephemeral: bool,
    /// Releases the lock by itself this long after it was acquired (Redisson's leaseTime).
    pub lease: Option<Duration>,
}

impl Default for Acquire {
    fn default() -> Self {
        Acquire { blocking: true, timeout: None, ephemeral: true, lease: None }
    }
}

impl Acquire {
    pub fn no_wait() -> Self {
        Acquire { blocking: false, ..Acquire::default() }
    }

    pub fn timeout(timeout: Duration) -> Self {
        Acquire { timeout: Some(timeout), ..Acquire::default() }
    }

    pub fn persistent(self) -> Self {
        Acquire { ephemeral: false, ..self }
    }

    pub fn lease(self, lease: Duration) -> Self {
        Acquire { lease: Some(lease), ..self }
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

    fn waits(&self) -> bool {
        self.blocking && self.timeout != Some(Duration::ZERO)
    }
}

/// Where a handle stands; each change also reaches the handle's listeners.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockState {
    Released,
    Held,
    /// The connection dropped while holding. The lock is still ours if the
    /// session survives (back to `Held`); stop using the guarded resource.
    Suspended,
    Lost(LostReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    SessionExpired,
    SessionClosed,
    LeaseExpired,
}

/// A lock handle: kazoo's `Lock`, `ReadLock` or `WriteLock`. Cheap to clone;
/// clones are the same handle. Not reentrant: a second acquire on a held
/// handle waits until the handle is released, as kazoo's does.
#[derive(Clone)]
pub struct Lock {
    inner: Arc<Inner>,
}

struct Inner {
    session: Session,
    path: String,
    kind: Kind,
    config: LockConfig,
    /// One acquisition per handle at a time; held for as long as the lock is.
    turn: Arc<tokio::sync::Mutex<()>>,
    held: Mutex<Option<Held>>,
    cancels: watch::Sender<u64>,
    state: watch::Sender<LockState>,
    listeners: Listeners<LockState>,
    acquisitions: AtomicU64,
}

struct Held {
    id: u64,
    node: String,
    token: i64,
    generation: u64,
    ephemeral: bool,
    monitor: Option<AbortHandle>,
    _turn: OwnedMutexGuard<()>,
}

impl Held {
    fn removal(&self, session: &Session) -> Removal {
        Removal {
            session: session.clone(),
            target: Target::Node(self.node.clone()),
            generation: self.generation,
            ephemeral: self.ephemeral,
        }
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Some(monitor) = self.monitor.take() {
            monitor.abort();
        }
    }
}

/// A node that won the lock, before the handle records it.
struct Won {
    node: String,
    token: i64,
    generation: u64,
    ephemeral: bool,
}

impl Lock {
    pub fn new(session: &Session, path: &str, kind: Kind, config: LockConfig) -> Result<Lock> {
        validate_path(path)?;
        validate_identifier(&config.identifier)?;
        if session.is_closed() {
            return Err(Error::Closed);
        }
        Ok(Lock {
            inner: Arc::new(Inner {
                session: session.clone(),
                path: path.to_owned(),
                kind,
                config,
                turn: Arc::new(tokio::sync::Mutex::new(())),
                held: Mutex::new(None),
                cancels: watch::Sender::new(0),
                state: watch::Sender::new(LockState::Released),
                listeners: Listeners::new(),
                acquisitions: AtomicU64::new(0),
            }),
        })
    }

    /// An exclusive lock with kazoo's node names and no identifier.
    pub fn mutex(session: &Session, path: &str) -> Result<Lock> {
        Lock::new(session, path, Kind::Mutex, LockConfig::default())
    }

    pub fn path(&self) -> &str {
        &self.inner.path
    }

    pub fn kind(&self) -> Kind {
        self.inner.kind
    }

    pub fn session(&self) -> &Session {
        &self.inner.session
    }

    /// Acquires the lock: `Ok(true)` once held, `Ok(false)` when a
    /// non-blocking try or the timeout found it taken. Whatever ends the
    /// attempt — timeout, [`Lock::cancel`], an error, dropping the future —
    /// removes this contender's node.
    pub async fn acquire(&self, options: Acquire) -> Result<bool> {
        options.validate()?;
        if self.inner.session.is_closed() {
            return Err(Error::Closed);
        }
        let deadline = options.timeout.map(|t| Instant::now() + t);
        let mut cancels = self.inner.cancels.subscribe();
        cancels.borrow_and_update();
        let removals = Removals::default();
        let outcome = tokio::select! {
            biased;
            won = self.take_turn_and_contend(&options, &removals) => won,
            _ = cancels.changed() => Err(Error::Cancelled { path: self.inner.path.clone() }),
            _ = sleep_until_some(deadline) => Ok(None),
        };
        removals.wait().await;
        match outcome? {
            Some((won, turn)) => {
                self.install(won, turn, options.lease);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    pub fn acquire_blocking(&self, options: Acquire) -> Result<bool> {
        runtime::block_on(self.acquire(options))
    }

    async fn take_turn_and_contend(
        &self,
        options: &Acquire,
        removals: &Removals,
    ) -> Result<Option<(Won, OwnedMutexGuard<()>)>> {
        let turn = self.inner.turn.clone();
        if !options.waits() {
            let Ok(turn) = turn.try_lock_owned() else { return Ok(None) };
            // Even a single try must not hang on a dead connection.
            let bound = self.inner.session.request_bound();
            return match timeout(bound, self.contend(options, removals)).await {
                Ok(won) => Ok(won?.map(|w| (w, turn))),
                Err(_) => Err(Error::ConnectionLoss(bound)),
            };
        }
        let turn = turn.lock_owned().await;
        Ok(self.contend(options, removals).await?.map(|w| (w, turn)))
    }

    /// Queues a node and waits for it to come first, queueing again on a new
    /// session if the old one ends first.
    async fn contend(&self, options: &Acquire, removals: &Removals) -> Result<Option<Won>> {
        loop {
            let live = self.inner.session.live().await?;
            let mut attempt = Attempt {
                removal: Some(Removal {
                    session: self.inner.session.clone(),
                    target: Target::Prefix {
                        parent: self.inner.path.clone(),
                        prefix: self.inner.kind.new_prefix(self.inner.config.scheme),
                    },
                    generation: live.generation,
                    ephemeral: options.ephemeral,
                }),
                removals,
            };
            match self.queue_once(&live, &mut attempt, options).await? {
                Step::Won(won) => {
                    attempt.removal = None;
                    return Ok(Some(won));
                }
                Step::Taken => return Ok(None),
                Step::SessionEnded => {
                    drop(attempt);
                    self.inner.session.wait_past(live.generation).await;
                }
                Step::NodeGone => {}
            }
        }
    }

    async fn queue_once(&self, live: &Live, attempt: &mut Attempt<'_>, options: &Acquire) -> Result<Step> {
        let Some((name, token, mut children)) = self.enqueue(live, attempt, options).await? else {
            return Ok(Step::SessionEnded);
        };
        let won = || Won {
            node: format!("{}/{name}", self.inner.path),
            token,
            generation: live.generation,
            ephemeral: options.ephemeral,
        };
        loop {
            let standing = naming::standing(&children, &name, self.inner.kind.role(), &self.inner.config.extra_markers);
            let (predecessor, last_blocker) = match standing {
                Standing::Holds => return Ok(Step::Won(won())),
                Standing::Missing => return Ok(Step::NodeGone),
                Standing::Waits { predecessor, last_blocker } => (predecessor, last_blocker),
            };
            if !options.waits() {
                return Ok(Step::Taken);
            }
            let path = format!("{}/{predecessor}", self.inner.path);
            match self.await_deletion(live, &path).await? {
                Wake::Deleted if last_blocker => return Ok(Step::Won(won())),
                Wake::Deleted | Wake::Relist => {}
                Wake::SessionEnded => return Ok(Step::SessionEnded),
            }
            children = match self.list(live).await? {
                Some(children) => children,
                None => return Ok(Step::SessionEnded),
            };
        }
    }

    /// Creates our node and lists the children in one round trip: the two
    /// requests are pipelined, and the server answers them in order.
    /// `None` when the session ended on the way.
    async fn enqueue(
        &self,
        live: &Live,
        attempt: &mut Attempt<'_>,
        options: &Acquire,
    ) -> Result<Option<(String, i64, Vec<String>)>> {
        let parent = &self.inner.path;
        let prefix = attempt.prefix().to_owned();
        let prefix_path = format!("{parent}/{prefix}");
        let mode = if options.ephemeral { zk::CreateMode::EphemeralSequential } else { zk::CreateMode::PersistentSequential };
        let acls = &self.inner.session.options().acls;
        let create_options = mode.with_acls(zk::Acls::new(acls));
        loop {
            let create = live.client.create(&prefix_path, &self.inner.config.identifier, &create_options);
            let list = live.client.list_children(parent);
            let created = create.await;
            let listed = list.await;
            let (node, token) = match created {
                Ok((stat, sequence)) => (format!("{prefix_path}{sequence}"), stat.czxid),
                Err(zk::Error::NoNode) => {
                    // The parent is made on first use only, not paid for on every acquire.
                    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::new(acls));
                    match live.client.mkdir(parent, &persistent).await {
                        Ok(()) | Err(zk::Error::ConnectionLoss) => continue,
                        Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(None),
                        Err(err) => return Err(Error::zk(parent, "create", err)),
                    }
                }
                Err(zk::Error::ConnectionLoss) => {
                    // The create may have happened: look for our unique prefix.
                    match find_own(live, parent, &prefix, options.ephemeral).await {
                        Ok(Some((node, stat))) => (node, stat.czxid),
                        Ok(None) | Err(zk::Error::ConnectionLoss) => continue,
                        Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(None),
                        Err(err) => return Err(Error::zk(parent, "list", err)),
                    }
                }
                Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(None),
                Err(err) => return Err(Error::zk(parent, "create a lock node under", err)),
            };
            attempt.created(node.clone());
            let name = node[parent.len() + 1..].to_owned();
            let children = match listed {
                Ok(children) => children,
                Err(_) => match self.list(live).await? {
                    Some(children) => children,
                    None => return Ok(None),
                },
            };
            return Ok(Some((name, token, children)));
        }
    }

    /// The children of the lock path; `None` when the session ended.
    async fn list(&self, live: &Live) -> Result<Option<Vec<String>>> {
        loop {
            match live.client.list_children(&self.inner.path).await {
                Ok(children) => return Ok(Some(children)),
                Err(zk::Error::ConnectionLoss) => continue,
                // The lock path itself was deleted: our node went with it.
                Err(zk::Error::NoNode) => return Ok(Some(Vec::new())),
                Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(None),
                Err(err) => return Err(Error::zk(&self.inner.path, "list", err)),
            }
        }
    }

    /// Waits until the predecessor at `path` changes. A data watch (`get`)
    /// leaves no watch behind when the node is already gone, unlike `exists`.
    async fn await_deletion(&self, live: &Live, path: &str) -> Result<Wake> {
        let watcher = match live.client.get_and_watch_data(path).await {
            Ok((_, _, watcher)) => watcher,
            Err(zk::Error::NoNode) => return Ok(Wake::Deleted),
            Err(zk::Error::ConnectionLoss) => return Ok(Wake::Relist),
            Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(Wake::SessionEnded),
            Err(err) => return Err(Error::zk(path, "watch", err)),
        };
        let event = watcher.changed().await;
        Ok(match event.event_type {
            zk::EventType::NodeDeleted => Wake::Deleted,
            zk::EventType::Session if event.session_state.is_terminated() => Wake::SessionEnded,
            _ => Wake::Relist,
        })
    }

    fn install(&self, won: Won, turn: OwnedMutexGuard<()>, lease: Option<Duration>) {
        let id = self.inner.acquisitions.fetch_add(1, Ordering::Relaxed) + 1;
        let mut held = self.inner.held.lock().unwrap();
        let monitor = runtime::spawn(monitor(
            Arc::downgrade(&self.inner),
            id,
            self.inner.session.subscribe(),
            won.generation,
            won.ephemeral,
            lease.map(|l| Instant::now() + l),
        ));
        *held = Some(Held {
            id,
            node: won.node,
            token: won.token,
            generation: won.generation,
            ephemeral: won.ephemeral,
            monitor: Some(monitor.abort_handle()),
            _turn: turn,
        });
        self.inner.set_state(LockState::Held);
    }

    /// Releases the lock: `Ok(false)` if this handle did not hold it. If the
    /// connection is down, the delete goes on in the background until it
    /// succeeds or the session ends.
    pub async fn release(&self) -> Result<bool> {
        let Some(mut held) = self.inner.held.lock().unwrap().take() else { return Ok(false) };
        if let Some(monitor) = held.monitor.take() {
            monitor.abort();
        }
        self.inner.set_state(LockState::Released);
        held.removal(&self.inner.session).run_bounded().await;
        Ok(true)
    }

    pub fn release_blocking(&self) -> Result<bool> {
        runtime::block_on(self.release())
    }

    /// Cancels the acquires pending on this handle now; they fail with
    /// [`Error::Cancelled`] and leave no node.
    pub fn cancel(&self) {
        self.inner.cancels.send_modify(|n| *n += 1);
    }

    pub fn is_acquired(&self) -> bool {
        self.inner.held.lock().unwrap().is_some()
    }

    /// The full path of the node holding the lock for this handle.
    pub fn node(&self) -> Option<String> {
        self.inner.held.lock().unwrap().as_ref().map(|h| h.node.clone())
    }

    /// A number that strictly increases from one holder of this lock path to
    /// the next: the zxid of the transaction that created the holder's node.
    /// zxids order every write of the ensemble, and a contender only holds
    /// once every earlier-created node it waits for is gone, so a later
    /// holder's node is always a later write. A guarded resource that refuses
    /// tokens lower than the highest it has seen turns away a holder that
    /// lost its lock without knowing (a long pause, a partition).
    pub fn fencing_token(&self) -> Option<i64> {
        self.inner.held.lock().unwrap().as_ref().map(|h| h.token)
    }

    pub fn state(&self) -> LockState {
        *self.inner.state.borrow()
    }

    /// Watches this handle's state; resolve `wait_for(|s| matches!(s, LockState::Lost(_)))` to learn of a loss.
    pub fn subscribe(&self) -> watch::Receiver<LockState> {
        self.inner.state.subscribe()
    }

    /// Calls `callback` with each new state, on zoolock's event thread.
    pub fn add_listener(&self, callback: impl Fn(LockState) + Send + Sync + 'static) -> u64 {
        self.inner.listeners.add(Arc::new(callback))
    }

    pub fn remove_listener(&self, id: u64) -> bool {
        self.inner.listeners.remove(id)
    }

    /// The identifiers of everyone queued on this path, holder(s) first.
    pub async fn contenders(&self) -> Result<Vec<String>> {
        let live = self.inner.session.live().await?;
        let bound = self.inner.session.request_bound();
        let read = async {
            let Some(children) = self.list(&live).await? else { return Err(Error::ConnectionLoss(bound)) };
            let queue = naming::queue(&children, &self.inner.config.extra_markers);
            if queue.is_empty() {
                return Ok(Vec::new());
            }
            let mut reader = live.client.new_multi_reader();
            for contender in &queue {
                let node = format!("{}/{}", self.inner.path, contender.name);
                reader.add_get_data(&node).map_err(|e| Error::zk(&node, "read", e))?;
            }
            let results = reader.commit().await.map_err(|e| Error::zk(&self.inner.path, "read", e))?;
            Ok(results
                .into_iter()
                .filter_map(|r| match r {
                    zk::MultiReadResult::Data { data, .. } => Some(String::from_utf8_lossy(&data).into_owned()),
                    _ => None,
                })
                .collect())
        };
        timeout(bound, read).await.map_err(|_| Error::ConnectionLoss(bound))?
    }

    pub fn contenders_blocking(&self) -> Result<Vec<String>> {
        runtime::block_on(self.contenders())
    }
}

impl Inner {
    fn set_state(&self, state: LockState) {
        if self.state.send_if_modified(|s| std::mem::replace(s, state) != state) {
            self.listeners.emit(state);
        }
    }

    /// Ends acquisition `id` because of `reason`, if it still holds.
    fn lose(&self, id: u64, reason: LostReason) {
        let mut held = self.held.lock().unwrap();
        if held.as_ref().is_none_or(|h| h.id != id) {
            return;
        }
        let lost = held.take().expect("checked above");
        drop(held);
        self.set_state(LockState::Lost(reason));
        if reason == LostReason::LeaseExpired {
            lost.removal(&self.session).spawn();
        }
    }

    fn mark(&self, id: u64, state: LockState) {
        let held = self.held.lock().unwrap();
        if held.as_ref().is_some_and(|h| h.id == id) {
            self.set_state(state);
        }
    }
}

impl Drop for Inner {
    /// Dropping a held handle releases the lock, in the background.
    fn drop(&mut self) {
        if let Some(held) = self.held.get_mut().unwrap().take() {
            held.removal(&self.session).spawn();
        }
    }
}

/// Follows the session for one acquisition: tells the holder when its lock
/// is suspended, restored or lost, and ends a lease.
async fn monitor(
    inner: Weak<Inner>,
    id: u64,
    mut status: watch::Receiver<Status>,
    generation: u64,
    ephemeral: bool,
    lease_end: Option<Instant>,
) {
    loop {
        let now = *status.borrow_and_update();
        let Some(lock) = inner.upgrade() else { return };
        match now.state {
            SessionState::Closed => return lock.lose(id, LostReason::SessionClosed),
            _ if ephemeral && now.generation != generation => return lock.lose(id, LostReason::SessionExpired),
            SessionState::Lost if ephemeral => return lock.lose(id, LostReason::SessionExpired),
            SessionState::Lost | SessionState::Suspended => lock.mark(id, LockState::Suspended),
            SessionState::Connected => lock.mark(id, LockState::Held),
        }
        drop(lock);
        tokio::select! {
            changed = status.changed() => if changed.is_err() { return },
            _ = sleep_until_some(lease_end) => {
                if let Some(lock) = inner.upgrade() {
                    lock.lose(id, LostReason::LeaseExpired);
                }
                return;
            }
        }
    }
}

/// Removals started by one acquire, which it waits for before returning so
/// that a timed-out or cancelled acquire leaves no node behind.
#[derive(Default)]
struct Removals(Mutex<Vec<tokio::task::JoinHandle<()>>>);

impl Removals {
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

/// One node in the queue, removed when dropped unless it won.
struct Attempt<'a> {
    removal: Option<Removal>,
    removals: &'a Removals,
}

impl Attempt<'_> {
    fn prefix(&self) -> &str {
        match &self.removal.as_ref().expect("attempt in use").target {
            Target::Prefix { prefix, .. } => prefix,
            Target::Node(_) => unreachable!("the prefix is only needed before the create succeeds"),
        }
    }

    fn created(&mut self, node: String) {
        if let Some(removal) = self.removal.as_mut() {
            removal.target = Target::Node(node);
        }
    }
}

impl Drop for Attempt<'_> {
    fn drop(&mut self) {
        if let Some(removal) = self.removal.take() {
            self.removals.0.lock().unwrap().push(removal.spawn());
        }
    }
}

enum Step {
    Won(Won),
    /// A single try found the lock taken.
    Taken,
    SessionEnded,
    /// Our node vanished while the session lived (deleted by someone else).
    NodeGone,
}

enum Wake {
    Deleted,
    Relist,
    SessionEnded,
}

async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

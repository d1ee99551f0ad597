//! One ZooKeeper session shared by every lock of a process, reopened by
//! itself after expiry so users never rebuild anything.

use std::collections::{HashMap, HashSet, VecDeque};
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::futures::Notified;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tokio::time::timeout;
use zookeeper_client as zk;

use crate::cleanup::{DoubtfulPrefixes, PersistentNodes};
use crate::error::{Error, Result};
use crate::events::{Listeners, WatchThread};
use crate::metrics::Meter;
use crate::mirror::Mirror;
use crate::naming::Role;
use crate::options::{ConnectString, SessionOptions};
use crate::runtime;
use crate::security::{Probe, TlsOptions};

/// kazoo's connection states, plus `Closed` once the user closed the session
/// (bindings that mirror kazoo report it as `LOST`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionState {
    /// Connected to a server, the session alive.
    Connected,
    /// The connection dropped; the session, and every lock it holds, may
    /// still live. Stop touching guarded resources until `Connected`.
    Suspended,
    /// The session expired: its ephemeral nodes, and so its locks, are gone.
    /// A new session is being opened.
    Lost,
    /// [`Session::close`] closed it: every call fails with [`Error::Closed`](crate::Error::Closed).
    Closed,
}

/// The state plus which session it is about: `generation` grows by one each
/// time a lost session is replaced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Status {
    /// The state.
    pub state: SessionState,
    /// Which session of this `Session` it is: 0 for the first, one more for each replacement.
    pub generation: u64,
    /// ZooKeeper's id of that session (0 before the first connects).
    pub session_id: i64,
}

/// The ZooKeeper client of one generation, as handed to recipes.
#[derive(Clone)]
pub(crate) struct Live {
    pub client: zk::Client,
    pub generation: u64,
    pub session_id: i64,
}

struct Shared {
    options: SessionOptions,
    status: watch::Sender<Status>,
    /// Shared, not cloned, with every request: a `Live` is large, and
    /// cloning a client allocates (a queued waiter keeps one, issue 16).
    current: Mutex<Option<Arc<Live>>>,
    /// Notified once the session is closed (after its status says so).
    closed: Notify,
    listeners: Listeners<SessionState>,
    /// Handles holding something now, told of each status change.
    holds: Mutex<Holds>,
    winners: Mutex<RecentWinners>,
    /// Per lock path, the node this session queued last, while it is queued.
    lines: Mutex<HashMap<String, LastInLine>>,
    persistent: PersistentNodes,
    doubtful: DoubtfulPrefixes,
    meter: Meter,
    /// Per lock path, the mirror its handles share while any exists.
    mirrors: Mutex<HashMap<String, Weak<Mirror>>>,
    /// The runtime that runs this session's connection and every task of
    /// its own (see [`session_runtime`]).
    runtime: Handle,
    /// The process that connected it: its tasks' threads exist only there.
    pid: u32,
    /// Set when `runtime` shut down under the session (see [`Supervisor`]).
    runtime_gone: AtomicBool,
    /// Per path, how many data watches this session may have set there and
    /// not yet seen fire or dropped (locked after `mirrors`): a path with
    /// any is not mirrored, see [`Session::data_watch`].
    data_watched: Mutex<HashMap<String, u32>>,
    /// Where this session's watch callbacks run (see [`WatchThread`]).
    watch_thread: WatchThread,
}

/// A data watch this session may have on a path (see [`Session::data_watch`]).
pub(crate) struct DataWatchMark {
    shared: Weak<Shared>,
    path: String,
}

impl Drop for DataWatchMark {
    fn drop(&mut self) {
        let Some(shared) = self.shared.upgrade() else { return };
        let mut watched = shared.data_watched.lock().unwrap();
        if let Some(count) = watched.get_mut(&self.path) {
            *count -= 1;
            if *count == 0 {
                watched.remove(&self.path);
            }
        }
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

/// Told of every status change while it holds a node of this session.
pub(crate) trait HoldWatcher: Send + Sync {
    fn session_changed(&self, status: Status);
}

#[derive(Default)]
struct Holds {
    next_key: u64,
    watchers: Vec<HoldEntry>,
}

struct HoldEntry {
    key: u64,
    watcher: Weak<dyn HoldWatcher>,
    /// The same holder, kept alive while it holds: a hold that outlives its
    /// handle ([`crate::Acquire::keep_if_dropped`]).
    _kept: Option<Arc<dyn HoldWatcher>>,
}

/// A handle to the process's ZooKeeper session; clones share it.
#[derive(Clone)]
pub struct Session {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("connect", &self.shared.options.connect)
            .field("status", &self.status())
            .finish()
    }
}

impl Session {
    /// Connects, failing with [`Error::ConnectTimeout`] if no server answers
    /// within the connect timeout, and with [`Error::NoChroot`] if the
    /// connect string's chroot does not exist (unless
    /// [`SessionOptions::create_chroot`]).
    ///
    /// Awaited on a multi-thread tokio runtime, the session's connection and
    /// tasks run on that runtime; its calls fail with [`Error::RuntimeGone`]
    /// once that runtime shuts down. Elsewhere they run on zoolock's own.
    pub async fn connect(options: SessionOptions) -> Result<Session> {
        let parsed = options.validate()?;
        runtime::check_process()?;
        let handle = session_runtime();
        let on = handle.clone();
        let hosts = options.connect.clone();
        // Spawned on the chosen runtime: `zookeeper-client` starts the
        // connection's task on the runtime its connect runs on.
        on.spawn(async move {
            let live = open(&options, 1).await?;
            if let Some(chroot) = parsed.chroot {
                match live.client.check_stat("/").await {
                    Ok(Some(_)) => {}
                    // Created on first need instead (`SessionOptions::create_chroot`).
                    Ok(None) if options.create_chroot => {}
                    Ok(None) => return Err(Error::NoChroot(chroot)),
                    Err(e) => return Err(Error::zk(&chroot, "check", e)),
                }
            }
            let status = Status { state: SessionState::Connected, generation: 1, session_id: live.session_id };
            let shared = Arc::new(Shared {
                options,
                status: watch::Sender::new(status),
                current: Mutex::new(Some(Arc::new(live.clone()))),
                closed: Notify::new(),
                listeners: Listeners::new(),
                holds: Mutex::default(),
                winners: Mutex::default(),
                lines: Mutex::default(),
                persistent: PersistentNodes::default(),
                doubtful: DoubtfulPrefixes::default(),
                meter: Meter::default(),
                mirrors: Mutex::default(),
                runtime: handle,
                pid: std::process::id(),
                runtime_gone: AtomicBool::new(false),
                data_watched: Mutex::default(),
                watch_thread: WatchThread::default(),
            });
            let supervisor = Supervisor(Arc::downgrade(&shared));
            shared.runtime.spawn(supervise(supervisor, live));
            Ok(Session { shared })
        })
        .await
        .unwrap_or_else(|ended| Err(connect_ended(ended, hosts)))
    }

    /// [`Session::connect`] for callers without an async runtime.
    pub fn connect_blocking(options: SessionOptions) -> Result<Session> {
        runtime::check_process()?;
        runtime::block_on(Session::connect(options))
    }

    /// The options it was connected with.
    pub fn options(&self) -> &SessionOptions {
        &self.shared.options
    }

    /// The state now, and which session it is about.
    pub fn status(&self) -> Status {
        *self.shared.status.borrow()
    }

    /// The state now.
    pub fn state(&self) -> SessionState {
        self.status().state
    }

    /// Watches every status change; the receiver always holds the latest.
    pub fn subscribe(&self) -> watch::Receiver<Status> {
        self.shared.status.subscribe()
    }

    /// Calls `callback` with each new state, on zoolock's event thread.
    pub fn add_listener(&self, callback: impl Fn(SessionState) + Send + Sync + 'static) -> u64 {
        self.shared.listeners.add(Arc::new(callback))
    }

    /// Stops the listener `add_listener` returned `id` for; false if it was gone.
    pub fn remove_listener(&self, id: u64) -> bool {
        self.shared.listeners.remove(id)
    }

    /// Ends the session: pending acquires fail with [`Error::Closed`] and
    /// holds end as `Lost(SessionClosed)`. The persistent nodes of pending
    /// acquires, of late duplicates and of releases under way are deleted
    /// first (waiting at most the session timeout), then the session ends and
    /// the server deletes its ephemeral nodes at once, releasing those locks.
    /// A persistent hold stays held, as kazoo's `ephemeral=False` lock does:
    /// it was asked to outlive its session; delete its node (`Lock::node`) to
    /// release it. The close goes on in the background if the caller stops
    /// waiting for it.
    pub async fn close(&self) {
        if runtime::check_process().is_err() {
            return;
        }
        let session = self.clone();
        let _ = self.spawn(async move { session.close_now().await }).await;
    }

    async fn close_now(&self) {
        {
            let _current = self.shared.current.lock().unwrap();
            let status = self.status();
            publish(&self.shared, SessionState::Closed, status.generation, status.session_id);
        }
        // Persistent nodes that no hold keeps outlive the session: remove them while its client is ours.
        let _ = timeout(self.shared.options.session_timeout, self.shared.persistent.remove_all(self)).await;
        let live = self.shared.current.lock().unwrap().take();
        let Some(live) = live else { return };
        let mut states = live.client.state_watcher();
        drop(live);
        // The session closes when the last clone of its client is gone; tasks
        // holding one see `Closed` through the status and let go.
        let _ = timeout(self.shared.options.session_timeout, async {
            while !states.state().is_terminated() {
                states.changed().await;
            }
        })
        .await;
    }

    /// [`Session::close`] for callers without an async runtime.
    pub fn close_blocking(&self) {
        runtime::block_on(self.close())
    }

    /// Whether [`Session::close`] was called.
    pub fn is_closed(&self) -> bool {
        self.state() == SessionState::Closed
    }

    /// Completes once the session is closed, if enabled or polled before:
    /// check [`Session::is_closed`] after enabling it.
    pub(crate) fn closing(&self) -> Notified<'_> {
        self.shared.closed.notified()
    }

    /// Runs `future` on the session's runtime (see [`session_runtime`]).
    /// Once that runtime has shut down, the task is dropped at once and its
    /// handle reports it cancelled.
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared.runtime.spawn(future)
    }

    /// Fails in a forked child (none of the threads that run the session
    /// exist there) and once the session's runtime is gone.
    pub(crate) fn check_usable(&self) -> Result<()> {
        runtime::check_process()?;
        if self.shared.pid != std::process::id() {
            return Err(Error::Forked { parent: self.shared.pid });
        }
        if self.shared.runtime_gone.load(Ordering::Acquire) {
            return Err(Error::RuntimeGone);
        }
        Ok(())
    }

    /// [`Error::Closed`], or [`Error::RuntimeGone`] if that is why it closed.
    pub(crate) fn closed_error(&self) -> Error {
        if self.shared.runtime_gone.load(Ordering::Acquire) {
            Error::RuntimeGone
        } else {
            Error::Closed
        }
    }

    /// The client to use now, waiting while a lost session is being replaced.
    pub(crate) async fn live(&self) -> Result<Arc<Live>> {
        self.check_usable()?;
        let mut status = self.subscribe();
        loop {
            match status.borrow_and_update().state {
                SessionState::Closed => return Err(self.closed_error()),
                SessionState::Lost => {}
                SessionState::Connected | SessionState::Suspended => {
                    if let Some(live) = self.shared.current.lock().unwrap().clone() {
                        return Ok(live);
                    }
                }
            }
            if status.changed().await.is_err() {
                return Err(self.closed_error());
            }
        }
    }

    /// The client to remove nodes with: as [`Session::live`], and also while
    /// [`Session::close`] removes the session's persistent nodes.
    pub(crate) async fn live_for_removal(&self) -> Result<Arc<Live>> {
        self.check_usable()?;
        let mut status = self.subscribe();
        loop {
            let state = status.borrow_and_update().state;
            if state != SessionState::Lost {
                match self.shared.current.lock().unwrap().clone() {
                    Some(live) => return Ok(live),
                    None if state == SessionState::Closed => return Err(self.closed_error()),
                    None => {}
                }
            }
            if status.changed().await.is_err() {
                return Err(self.closed_error());
            }
        }
    }

    /// This session's counters, by the names of [`crate::metrics`]: every
    /// generation of it, since [`Session::connect`].
    pub fn metrics(&self) -> std::collections::BTreeMap<String, f64> {
        self.shared.meter.snapshot()
    }

    pub(crate) fn meter(&self) -> &Meter {
        &self.shared.meter
    }

    pub(crate) fn persistent_nodes(&self) -> &PersistentNodes {
        &self.shared.persistent
    }

    pub(crate) fn doubtful_prefixes(&self) -> &DoubtfulPrefixes {
        &self.shared.doubtful
    }

    /// Waits until a session newer than `generation` is up; false once closed.
    pub(crate) async fn wait_past(&self, generation: u64) -> bool {
        let mut status = self.subscribe();
        let newer = status.wait_for(|s| s.state == SessionState::Closed || s.generation > generation).await;
        matches!(newer, Ok(s) if s.state != SessionState::Closed)
    }

    /// Registers a holder for status changes until [`Session::unwatch_hold`];
    /// one registry instead of a task per hold keeps acquire and release
    /// cheap. `kept`, the holder itself, is kept alive until then.
    pub(crate) fn watch_hold(&self, watcher: Weak<dyn HoldWatcher>, kept: Option<Arc<dyn HoldWatcher>>) -> u64 {
        let mut holds = self.shared.holds.lock().unwrap();
        holds.next_key += 1;
        let key = holds.next_key;
        holds.watchers.push(HoldEntry { key, watcher, _kept: kept });
        key
    }

    pub(crate) fn unwatch_hold(&self, key: u64) {
        let mut holds = self.shared.holds.lock().unwrap();
        let gone = holds.watchers.iter().position(|h| h.key == key).map(|at| holds.watchers.remove(at));
        drop(holds);
        // A kept holder may be dropped here, outside the registry's lock.
        drop(gone);
    }

    /// The mirror of `path`'s children that every handle of this session
    /// on `path` shares (see [`crate::mirror`]).
    pub(crate) fn mirror(&self, path: &str) -> Arc<Mirror> {
        let mut mirrors = self.shared.mirrors.lock().unwrap();
        if let Some(mirror) = mirrors.get(path).and_then(Weak::upgrade) {
            return mirror;
        }
        mirrors.retain(|_, m| m.strong_count() > 0);
        let deaf = self.shared.data_watched.lock().unwrap().contains_key(path);
        let mirror = Mirror::new(self, path, deaf);
        mirrors.insert(path.to_owned(), Arc::downgrade(&mirror));
        mirror
    }

    /// Called before this session sets a data watch (`get`, `exists`) on
    /// `path`. ZooKeeper 3.8 keeps one watch mode per connection and path
    /// (ZOOKEEPER-4466, fixed in 3.9): that watch turns a mirror's
    /// persistent recursive watch on `path` into a one-shot one, and the
    /// mirror hears neither creates nor deletes under it. Handles of this
    /// session on `path` list instead, from now on, and a mirror made while
    /// the returned mark lives starts blind. Keep the mark until the watch
    /// fired or its watcher was dropped: assumes zookeeper-client removes a
    /// dropped one-shot watcher's watch from the server (`RemoveWatches`,
    /// sent before any later request of the session, such as a new
    /// mirror's `addWatch`). Without the marks ending, the record of every
    /// path ever watched would grow for the session's whole life.
    pub(crate) fn data_watch(&self, path: &str) -> DataWatchMark {
        let mirror = {
            let mirrors = self.shared.mirrors.lock().unwrap();
            *self.shared.data_watched.lock().unwrap().entry(path.to_owned()).or_default() += 1;
            mirrors.get(path).and_then(Weak::upgrade)
        };
        if let Some(mirror) = mirror {
            mirror.blind();
        }
        DataWatchMark { shared: Arc::downgrade(&self.shared), path: path.to_owned() }
    }

    /// Runs a watch callback on this session's watch thread, after the calls queued before it.
    pub(crate) fn deliver_watch_call(&self, job: impl FnOnce() + Send + 'static) {
        self.shared.watch_thread.deliver(job)
    }

    /// How many paths carry a data watch mark now (tests).
    #[doc(hidden)]
    pub fn data_watched_paths(&self) -> usize {
        self.shared.data_watched.lock().unwrap().len()
    }

    pub(crate) fn record_winner(&self, node: &str) {
        let mut winners = self.shared.winners.lock().unwrap();
        if winners.order.len() == RECENT_WINNERS {
            let oldest = winners.order.pop_front().expect("full");
            winners.set.remove(&oldest);
        }
        winners.order.push_back(node.to_owned());
        winners.set.insert(node.to_owned());
    }

    pub(crate) fn won_recently(&self, node: &str) -> bool {
        self.shared.winners.lock().unwrap().set.contains(node)
    }

    /// Sends a create (`send`) as this session's next node in line on `path`,
    /// returning its result, a place token to keep while the node is queued
    /// or held, and the prefix and role of the session's previous node on
    /// `path` if that one is still in line. Both are decided under one lock,
    /// so the order of the sends is the order of the sequence numbers.
    pub(crate) fn join_line<T>(
        &self,
        path: &str,
        prefix: &str,
        role: Role,
        send: impl FnOnce() -> T,
    ) -> (T, Arc<()>, Option<(String, Role)>) {
        let place = Arc::new(());
        let mut lines = self.shared.lines.lock().unwrap();
        let ours = LastInLine { prefix: prefix.to_owned(), role, place: Arc::downgrade(&place) };
        let before = lines
            .insert(path.to_owned(), ours)
            .filter(|last| last.place.strong_count() > 0)
            .map(|last| (last.prefix, last.role));
        (send(), place, before)
    }

    /// How long a single request may wait on a down connection before the
    /// caller is told [`Error::ConnectionLoss`].
    pub(crate) fn request_bound(&self) -> Duration {
        self.shared.options.session_timeout
    }

    /// Runs `work` (requests and the waits for a connection between them)
    /// within the request bound: past it, [`Error::ConnectionLoss`].
    pub(crate) async fn bounded<T>(&self, work: impl Future<Output = Result<T>>) -> Result<T> {
        let bound = self.request_bound();
        timeout(bound, work).await.unwrap_or(Err(Error::ConnectionLoss(bound)))
    }
}

/// Why the connecting task ended without an answer: the runtime shut down
/// (it was cancelled), or zookeeper-client panicked, which must reach the
/// caller as an error and not as a panic (nor as a runtime that is gone).
fn connect_ended(ended: tokio::task::JoinError, hosts: String) -> Error {
    if !ended.is_panic() {
        return Error::RuntimeGone;
    }
    let panic = ended.into_panic();
    let said = panic.downcast_ref::<&str>().copied().or(panic.downcast_ref::<String>().map(String::as_str));
    Error::ZooKeeper {
        action: "connect to",
        path: hosts,
        message: format!("the client panicked: {}", said.unwrap_or("?")),
    }
}

async fn open(options: &SessionOptions, generation: u64) -> Result<Live> {
    let tls = options.tls_on().map(TlsOptions::prepare).transpose()?;
    let probe = Probe::new(ConnectString::parse(&options.connect)?.endpoints(), tls.as_ref().map(|t| t.probe.clone()));
    let started = Instant::now();
    // zookeeper-client gives up after about the session timeout when no
    // server answers: a longer connect timeout is the caller's, so start
    // again until it runs out.
    let connect = async {
        loop {
            let mut connector = zk::Client::connector().with_session_timeout(options.session_timeout);
            for (scheme, auth) in &options.auth {
                connector = connector.with_auth(scheme, auth);
            }
            if let Some(sasl) = &options.sasl {
                connector = connector.with_sasl(sasl.to_zk());
            }
            let attempt = match &tls {
                Some(tls) => connector.with_tls(tls.zk.clone()).secure_connect(&options.connect).await,
                None => connector.connect(&options.connect).await,
            };
            match attempt {
                Err(zk::Error::Timeout | zk::Error::NoHosts | zk::Error::ConnectionLoss) => {
                    tokio::time::sleep(RECONNECT_PAUSE).await
                }
                other => return other,
            }
        }
    };
    let attempt = tokio::select! {
        attempt = timeout(options.connect_timeout, connect) => attempt,
        reason = probe.every_host_refuses(options.connect_timeout) => return Err(Error::Tls { reason }),
    };
    let client = match attempt {
        Err(_) => {
            return Err(match probe.finding() {
                Some(reason) => Error::Tls { reason },
                // What was waited, to the millisecond: not more than it was.
                None => Error::ConnectTimeout {
                    hosts: options.connect.clone(),
                    timeout: Duration::from_millis(started.elapsed().as_millis() as u64),
                },
            });
        }
        Ok(Err(zk::Error::AuthFailed)) => return Err(Error::AuthFailed),
        Ok(Err(e)) => return Err(Error::zk(&options.connect, "connect to", e)),
        Ok(Ok(client)) => client,
    };
    let session_id = client.session_id().0;
    Ok(Live { client, generation, session_id })
}

/// Between two connect attempts that each tried every host until the session timeout.
const RECONNECT_PAUSE: Duration = Duration::from_millis(50);

fn publish(shared: &Shared, state: SessionState, generation: u64, session_id: i64) {
    let next = Status { state, generation, session_id };
    let mut ended = false;
    let changed = shared.status.send_if_modified(|current| {
        // Nothing reopens a closed session, and an old generation cannot speak for a newer one.
        if current.state == SessionState::Closed || generation < current.generation || *current == next {
            return false;
        }
        ended = generation != current.generation || matches!(state, SessionState::Lost | SessionState::Closed);
        *current = next;
        // Counted before the change is published: whoever it wakes reads it in the metrics.
        shared.meter.session_state(state);
        true
    });
    if changed {
        tracing::info!(?state, generation, session_id = format_args!("{session_id:#x}"), "zoolock session");
        shared.listeners.emit(state);
        let watchers: Vec<_> =
            shared.holds.lock().unwrap().watchers.iter().filter_map(|h| h.watcher.upgrade()).collect();
        for watcher in watchers {
            watcher.session_changed(next);
        }
        // Mirrored waiters of an ended generation learn it here, woken by
        // their mirror, rather than each from a watch of the status of its own.
        if state == SessionState::Closed {
            shared.closed.notify_waiters();
        }
        if ended {
            let mirrors: Vec<_> = shared.mirrors.lock().unwrap().values().filter_map(Weak::upgrade).collect();
            for mirror in mirrors {
                mirror.wake_waiters();
            }
        }
    }
}

/// Follows each generation's client and replaces it when its session ends.
async fn supervise(supervisor: Supervisor, mut live: Live) {
    let shared = &supervisor.0;
    loop {
        let mut states = live.client.state_watcher();
        let (generation, session_id) = (live.generation, live.session_id);
        // Holding the client here would keep the session open after close().
        drop(live);
        loop {
            let state = states.changed().await;
            let Some(shared) = shared.upgrade() else { return };
            match state {
                zk::SessionState::Disconnected => publish(&shared, SessionState::Suspended, generation, session_id),
                zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {
                    publish(&shared, SessionState::Connected, generation, session_id)
                }
                _ => {
                    if shared.status.borrow().state == SessionState::Closed {
                        return;
                    }
                    tracing::warn!(
                        ?state,
                        session_id = format_args!("{session_id:#x}"),
                        "zoolock session ended; opening a new one"
                    );
                    shared.current.lock().unwrap().take();
                    publish(&shared, SessionState::Lost, generation, session_id);
                    break;
                }
            }
        }
        live = match reopen(shared, generation + 1).await {
            Some(live) => live,
            None => return,
        };
    }
}

/// Opens the next generation's session, retrying with backoff until it
/// succeeds or the user closes (or drops) the session.
async fn reopen(weak: &Weak<Shared>, generation: u64) -> Option<Live> {
    let mut backoff = Duration::from_millis(50);
    loop {
        let shared = weak.upgrade()?;
        let options = shared.options.clone();
        let mut status = shared.status.subscribe();
        drop(shared);
        match open(&options, generation).await {
            Ok(live) => {
                let shared = weak.upgrade()?;
                {
                    let mut current = shared.current.lock().unwrap();
                    if shared.status.borrow().state == SessionState::Closed {
                        return None;
                    }
                    *current = Some(Arc::new(live.clone()));
                }
                publish(&shared, SessionState::Connected, generation, live.session_id);
                return Some(live);
            }
            Err(err) => {
                tracing::warn!(%err, "zoolock could not open a new session; retrying");
                let closed = status.wait_for(|s| s.state == SessionState::Closed);
                if timeout(backoff, closed).await.is_ok() {
                    return None;
                }
                backoff = (backoff * 2).min(Duration::from_secs(2));
            }
        }
    }
}

/// The runtime a new session runs on: the caller's when it is a
/// multi-thread tokio runtime, else zoolock's own ([`runtime`]).
///
/// On the caller's runtime each request is sent and answered without
/// crossing to another thread pool and back (issue 16: 0.78–0.90× the raw
/// create+delete floor with the crossing, 0.88–1.09× without). Only a
/// multi-thread runtime drives its tasks by itself: a current_thread runtime
/// runs them only inside its own `block_on`, so a session there would stall
/// whenever its owner blocks, e.g. in a `_blocking` call from another
/// thread. Callers without a runtime (`connect_blocking`, the bindings) get
/// zoolock's, which is multi-thread and is what `runtime::block_on` enters,
/// so for them nothing changes.
///
/// A caller's runtime may shut down while the session lives: its tasks,
/// the connection's among them, are dropped. [`Supervisor`] notices and
/// closes the session, so every call then fails with [`Error::RuntimeGone`]
/// instead of waiting on a task that is gone; the server ends the session,
/// and its ephemeral nodes with it, when the dropped connection's session
/// timeout runs out.
fn session_runtime() -> Handle {
    match Handle::try_current() {
        Ok(caller) if caller.runtime_flavor() == RuntimeFlavor::MultiThread => caller,
        _ => runtime::handle().clone(),
    }
}

/// Owned by the supervising task, which returns only once the session is
/// closed or dropped. Dropped before that, the task was dropped unfinished:
/// its runtime shut down, and with it the session's connection. Then it
/// closes the session, which wakes every waiter (they watch the status)
/// with [`Error::RuntimeGone`].
struct Supervisor(Weak<Shared>);

impl Drop for Supervisor {
    fn drop(&mut self) {
        let Some(shared) = self.0.upgrade() else { return };
        // Closed (by the user, or past its last owner): it finished.
        if shared.status.borrow().state == SessionState::Closed {
            return;
        }
        shared.runtime_gone.store(true, Ordering::Release);
        shared.current.lock().unwrap().take();
        let status = *shared.status.borrow();
        publish(&shared, SessionState::Closed, status.generation, status.session_id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A panic of zookeeper-client while connecting (it had one for TLS
    /// hosts rustls cannot name) reaches the caller as an error that says so.
    #[tokio::test]
    async fn a_panic_while_connecting_is_an_error_not_a_runtime_gone() {
        let ended = tokio::spawn(async { panic!("cannot name 127.1") }).await.unwrap_err();
        let err = connect_ended(ended, "127.1:2281".into());
        assert!(matches!(&err, Error::ZooKeeper { message, .. } if message.contains("cannot name 127.1")), "{err:?}");
    }
}

//! One ZooKeeper session shared by every lock of a process, reopened by
//! itself after expiry so users never rebuild anything.
//!
//! [`connection`] opens and follows it, [`confirm`] keeps the quorum's
//! confirmation of it; [`Session`] is the facade that everything above
//! uses. What a layer above keeps once per session (the contender's
//! doubtful prefixes, the lock's lines, the mirrors, the one-shot watches)
//! is an [`Extension`] of it, so the session names none of them.

mod confirm;
mod connection;
mod round_trip;

use std::any::{Any, TypeId};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use tokio::sync::futures::Notified;
use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::timeout;

use crate::error::{Error, Result};
use crate::metrics::Meter;
use crate::options::{ClientId, SessionOptions};
use crate::runtime;
use crate::state::{SessionState, Status};
use connection::Connection;
pub(crate) use connection::{Live, StatusWatcher};
pub(crate) use round_trip::WINDOW;

/// A handle to the process's ZooKeeper session; clones share it.
///
/// One per process: every lock, semaphore, watch and znode call made on it
/// shares its connection, and it opens a new ZooKeeper session by itself
/// after an expiry.
///
/// ```
/// use zoolock::{Session, SessionOptions, SessionState};
/// # fn main() -> zoolock::Result<()> {
/// # // A real server for the example (Debian's ZooKeeper, started by the harness).
/// # let connect = zk_harness::shared().connect_string();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = Session::connect(SessionOptions::new(connect)).await?; // "zk1:2181,zk2:2181/app"
/// assert_eq!(session.state(), SessionState::Connected);
/// // Suspended while the connection is down, Lost once the session expired, Connected again.
/// let listener = session.add_listener(|state| println!("session: {state:?}"));
/// session.ensure_path("/app/config", None).await?; // kazoo's znode calls
/// session.remove_listener(listener);
/// session.close().await; // pending acquires fail, ephemeral nodes go
/// # Ok(()) })
/// # }
/// ```
#[derive(Clone)]
pub struct Session {
    inner: Arc<Inner>,
}

struct Inner {
    /// Held by this alone: the connection's supervisor ends once it is dropped.
    connection: Arc<Connection>,
    extensions: Extensions,
    /// The line of calls waiting for a connection ([`Session::live_in_turn`]).
    line: tokio::sync::Semaphore,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session")
            .field("connect", &self.connection().options.connect)
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
    /// tasks run on that runtime if it has tokio's I/O driver (its time
    /// driver every runtime needs, for the calls' own waits); its calls fail
    /// with [`Error::RuntimeGone`] once that runtime shuts down. Elsewhere
    /// they run on zoolock's own.
    pub async fn connect(options: SessionOptions) -> Result<Session> {
        let connection = Connection::connect(options).await?;
        let inner =
            Arc::new(Inner { connection, extensions: Extensions::default(), line: tokio::sync::Semaphore::new(1) });
        let extensions: Weak<dyn StatusWatcher> = Arc::downgrade(&inner) as Weak<dyn StatusWatcher>;
        inner.connection.watchers.lock().unwrap().add(extensions, None);
        Ok(Session { inner })
    }

    /// [`Session::connect`] for callers without an async runtime.
    pub fn connect_blocking(options: SessionOptions) -> Result<Session> {
        runtime::check_process()?;
        runtime::block_on(Session::connect(options))
    }

    /// The options it was connected with.
    pub fn options(&self) -> &SessionOptions {
        &self.connection().options
    }

    /// The state now, and which session it is about. `Connected` only
    /// while the quorum's confirmation of the session holds (see
    /// [`Session::confirmed_until`]): read after a pause of the process (a
    /// stop, a long GC) past it, the state says `Suspended` at once.
    pub fn status(&self) -> Status {
        let mut status = *self.connection().status.borrow();
        if status.state == SessionState::Connected && !self.confirmed() {
            status.state = SessionState::Suspended;
        }
        status
    }

    /// Whether the quorum's confirmation of the session holds now.
    pub(crate) fn confirmed(&self) -> bool {
        self.connection().confirmation.holds()
    }

    /// Until when no server can have expired the session, as far as the
    /// quorum has confirmed it, and when it last confirmed it: nanoseconds on
    /// the boot clock ([`boot_clock`]). A `sync` through the leader every
    /// T/7 renews it; docs/guarantees.md states the bound. The CLI's
    /// supervisor stops a command by it.
    pub fn confirmed_until(&self) -> Confirmed {
        let confirmation = &self.connection().confirmation;
        Confirmed { until: confirmation.until(), last: confirmation.last() }
    }

    /// The id and password of the ZooKeeper session open now (kazoo's
    /// `client_id`), for another client to resume it with
    /// [`SessionOptions::resume`]; `None` while there is none (lost and not
    /// yet replaced, or closed). A new session after an expiry has a new one.
    pub fn client_id(&self) -> Option<ClientId> {
        if self.is_closed() {
            return None;
        }
        let live = self.connection().current.lock().unwrap().clone()?;
        let session = live.client.session();
        // Another process may resume it: a runtime's shutdown must not close it.
        self.connection().id_given.store(true, Ordering::Release);
        Some(ClientId::new(session.id().0, session.password()))
    }

    /// The state now.
    pub fn state(&self) -> SessionState {
        self.status().state
    }

    /// The highest zxid of a reply the current ZooKeeper session has received
    /// (watch notifications aside), as kazoo's `last_zxid`: 0 before the
    /// first reply and again in the session opened after an expiry.
    pub fn last_zxid(&self) -> i64 {
        self.connection().current.lock().unwrap().as_ref().map_or(0, |live| live.client.last_zxid())
    }

    /// Watches every status change; the receiver always holds the latest.
    pub fn subscribe(&self) -> watch::Receiver<Status> {
        self.connection().status.subscribe()
    }

    /// Calls `callback` with each new state, on zoolock's event thread.
    pub fn add_listener(&self, callback: impl Fn(SessionState) + Send + Sync + 'static) -> u64 {
        self.connection().listeners.add(Arc::new(callback))
    }

    /// Stops the listener `add_listener` returned `id` for; false if it was gone.
    pub fn remove_listener(&self, id: u64) -> bool {
        self.connection().listeners.remove(id)
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
        self.connection().publish_closed();
        // What the extensions must finish while the client is ours: the
        // contender's persistent nodes that no hold keeps outlive the session.
        let closing = async {
            for hooks in self.inner.extensions.iter() {
                hooks.closing(self).await;
            }
        };
        let _ = timeout(self.connection().options.session_timeout, closing).await;
        self.connection().end().await;
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
        self.connection().closed.notified()
    }

    /// Runs `future` on the session's runtime (see `session_runtime` in connection.rs),
    /// in the caller's `tracing` span: background work on behalf of a call
    /// (a release on drop, a node's removal) logs where the call does.
    /// Once that runtime has shut down, the task is dropped at once and its
    /// handle reports it cancelled.
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.spawn_in(tracing::Span::current(), future)
    }

    /// [`Session::spawn`] in `span`: for work that outlives the call that
    /// starts it (a hold's watch, a mirror), in a span of its own (see
    /// [`detached_span`]), not the caller's, which it would keep open.
    pub(crate) fn spawn_in<F>(&self, span: tracing::Span, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.connection().runtime.spawn(tracing::Instrument::instrument(future, span))
    }

    /// Fails in a forked child (none of the threads that run the session
    /// exist there) and once the session's runtime is gone.
    pub(crate) fn check_usable(&self) -> Result<()> {
        runtime::check_process()?;
        if self.connection().pid != runtime::process_id() {
            return Err(Error::Forked { parent: self.connection().pid });
        }
        if self.connection().runtime_gone.load(Ordering::Acquire) {
            return Err(Error::RuntimeGone);
        }
        Ok(())
    }

    /// [`Error::Closed`], or [`Error::RuntimeGone`] if that is why it closed.
    pub(crate) fn closed_error(&self) -> Error {
        if self.connection().runtime_gone.load(Ordering::Acquire) {
            Error::RuntimeGone
        } else {
            Error::Closed
        }
    }

    /// The server the session's connection goes to, `(host, port)` as the
    /// connect string names it; `None` while it has none. Tools show it and
    /// ask it four-letter words ([`Session::command`]).
    pub fn server(&self) -> Option<(String, u16)> {
        self.connected_client()?.last_server()
    }

    /// The local address of the session's connection; `None` while it has none.
    pub fn local_addr(&self) -> Option<std::net::SocketAddr> {
        self.connected_client()?.last_local_addr()
    }

    /// The client while its connection is up (what it says of that connection holds).
    fn connected_client(&self) -> Option<zookeeper_client::Client> {
        let live = self.connection().current.lock().unwrap().clone()?;
        (live.client.state() == zookeeper_client::SessionState::SyncConnected).then(|| live.client.clone())
    }

    /// The id of the last request the session sent (ZooKeeper's xid); 0
    /// before the first.
    pub fn last_xid(&self) -> i32 {
        self.connection().current.lock().unwrap().as_ref().map_or(0, |live| live.client.last_xid())
    }

    /// The session timeout the server granted the current session; `None`
    /// while there is none.
    pub fn session_timeout(&self) -> Option<Duration> {
        Some(self.connection().current.lock().unwrap().as_ref()?.client.session_timeout())
    }

    /// The credentials the session authenticates with, sent again on each
    /// new session: the options' and those [`Session::add_auth`] added.
    pub fn credentials(&self) -> Vec<(String, Vec<u8>)> {
        let mut all = self.options().auth.clone();
        for added in self.connection().added_auth.lock().unwrap().iter() {
            if !all.contains(added) {
                all.push(added.clone());
            }
        }
        all
    }

    /// The client to use now, waiting while a lost session is being replaced.
    pub(crate) async fn live(&self) -> Result<Arc<Live>> {
        Ok(self.live_in_turn().await?.0)
    }

    /// [`Session::live`] if it need not wait: `None` when it would (no
    /// connection now, or calls in line before it).
    pub(crate) fn live_now(&self) -> Option<Result<Arc<Live>>> {
        if let Err(err) = self.check_usable() {
            return Some(Err(err));
        }
        let _turn = self.inner.line.try_acquire().ok()?;
        self.usable_now(&mut self.subscribe())
    }

    /// [`Session::live`] in the session's order: a call that finds no
    /// connection waits in line (FIFO), and every call after it waits behind
    /// it, so that requests leave in the order their calls started.
    /// ZooKeeper applies a session's requests in the order they were sent,
    /// and zookeeper-client sends each when it is called, as kazoo's and
    /// Java's clients do; only the wait for a connection could reorder them.
    /// The turn is `Some` when the caller waited: it is dropped once its
    /// request is sent.
    pub(crate) async fn live_in_turn(&self) -> Result<(Arc<Live>, Option<tokio::sync::SemaphorePermit<'_>>)> {
        self.check_usable()?;
        let mut status = self.subscribe();
        // No one in line: the permit is free, and with a connection at hand
        // the call goes at once.
        let turn = match self.inner.line.try_acquire() {
            Ok(turn) => match self.usable_now(&mut status) {
                Some(found) => return found.map(|live| (live, None)),
                None => turn,
            },
            Err(_) => self.inner.line.acquire().await.map_err(|_| self.closed_error())?,
        };
        loop {
            if let Some(found) = self.usable_now(&mut status) {
                return found.map(|live| (live, Some(turn)));
            }
            if status.changed().await.is_err() {
                return Err(self.closed_error());
            }
        }
    }

    /// The connection to send on now, an error if the session is closed, or
    /// `None` while a lost session is being replaced.
    fn usable_now(&self, status: &mut watch::Receiver<Status>) -> Option<Result<Arc<Live>>> {
        match status.borrow_and_update().state {
            SessionState::Closed => Some(Err(self.closed_error())),
            SessionState::Lost => None,
            SessionState::Connected | SessionState::Suspended => {
                self.connection().current.lock().unwrap().clone().map(Ok)
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
                match self.connection().current.lock().unwrap().clone() {
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
        self.connection().meter.snapshot()
    }

    pub(crate) fn meter(&self) -> &Meter {
        &self.connection().meter
    }

    /// Waits until a session newer than `generation` is up; false once closed.
    pub(crate) async fn wait_past(&self, generation: u64) -> bool {
        let mut status = self.subscribe();
        let newer = status.wait_for(|s| s.state == SessionState::Closed || s.generation > generation).await;
        matches!(newer, Ok(s) if s.state != SessionState::Closed)
    }

    /// Registers a watcher (a hold) for status changes until
    /// [`Session::unwatch_status`]; one registry instead of a task per hold
    /// keeps acquire and release cheap. `kept`, the watcher itself, is kept
    /// alive until then.
    pub(crate) fn watch_status(&self, watcher: Weak<dyn StatusWatcher>, kept: Option<Arc<dyn StatusWatcher>>) -> u64 {
        self.connection().watchers.lock().unwrap().add(watcher, kept)
    }

    pub(crate) fn unwatch_status(&self, key: u64) {
        let gone = self.connection().watchers.lock().unwrap().remove(key);
        // A kept holder may be dropped here, outside the registry's lock.
        drop(gone);
    }

    /// Runs a watch callback on this session's watch thread, after the calls queued before it.
    pub(crate) fn deliver_watch_call(&self, job: impl FnOnce() + Send + 'static) {
        self.connection().watch_thread.deliver(job)
    }

    /// This session's `T`, made on first use (see [`Extension`]).
    pub(crate) fn extension<T: Extension>(&self) -> &T {
        self.inner.extensions.get_or_make::<T>()
    }

    /// How long a single request may wait on a down connection before the
    /// caller is told [`Error::ConnectionLoss`].
    pub(crate) fn request_bound(&self) -> Duration {
        self.connection().options.session_timeout
    }

    /// Runs `work` (requests and the waits for a connection between them)
    /// within the request bound: past it, [`Error::ConnectionLoss`].
    pub(crate) async fn bounded<T>(&self, work: impl Future<Output = Result<T>>) -> Result<T> {
        let bound = self.request_bound();
        timeout(bound, work).await.unwrap_or(Err(Error::ConnectionLoss(bound)))
    }

    /// Resolves once the session is not connected (at once if it is not
    /// now): a caller whose limit is up waits for answers, not for a connection.
    pub(crate) async fn disconnected(&self) {
        let mut status = self.subscribe();
        // The quorum's deadline is published too, within a second of passing
        // (`confirm::lapses`, for as long as the generation lasts): no timer
        // here, whose registration at every release would wake a parked
        // worker thread to re-arm tokio's timer wheel.
        while self.status().state == SessionState::Connected {
            if status.changed().await.is_err() {
                return; // the session's status is gone with it
            }
        }
    }

    /// [`Session::bounded`], but failing at once ([`Error::ConnectionLoss`])
    /// when the session is not connected to begin with: a single try (a zero
    /// timeout) does not wait for a connection. One that was connected waits
    /// through a blip (a reset connection comes back in milliseconds).
    pub(crate) async fn bounded_if_connected<T>(&self, work: impl Future<Output = Result<T>>) -> Result<T> {
        if self.status().state != SessionState::Connected {
            return Err(Error::ConnectionLoss(Duration::ZERO));
        }
        self.bounded(work).await
    }

    /// Runs `work` (a timed wait: its requests and its waits for a
    /// connection alike) until `deadline` (`None`: no deadline); `None` past
    /// it. A partitioned session answers no request, and a caller's timeout
    /// holds all the same. A deadline already passed (a zero timeout) still
    /// gives one look the request bound.
    pub(crate) async fn until_deadline<T>(
        &self,
        deadline: Option<tokio::time::Instant>,
        work: impl Future<Output = T>,
    ) -> Option<T> {
        let Some(deadline) = deadline else { return Some(work.await) };
        let now = tokio::time::Instant::now();
        let end = if deadline <= now { now + self.request_bound() } else { deadline };
        tokio::time::timeout_at(end, work).await.ok()
    }

    /// The connect string (hosts and chroot) the session opens its next
    /// ZooKeeper session with: [`SessionOptions::connect`] until
    /// [`Session::set_hosts`].
    pub fn hosts(&self) -> String {
        self.connection().hosts.lock().unwrap().clone()
    }

    /// Replaces the hosts (kazoo's `set_hosts`). zookeeper-client cannot
    /// change the servers of a live ZooKeeper session, so the change takes
    /// effect when this session next opens one, after an expiry; until then
    /// it goes on with the servers it has. The chroot cannot change
    /// ([`Error::InvalidConnectString`]): every path of every lock is below it.
    pub fn set_hosts(&self, connect: &str) -> Result<()> {
        let given = crate::options::ConnectString::parse(connect)?;
        let current = crate::options::ConnectString::parse(&self.options().connect)?;
        if given.chroot != current.chroot {
            return Err(Error::InvalidConnectString {
                connect: connect.to_owned(),
                reason: format!(
                    "the chroot cannot change on a running session (it is {:?})",
                    current.chroot.as_deref().unwrap_or("/")
                ),
            });
        }
        *self.connection().hosts.lock().unwrap() = connect.to_owned();
        Ok(())
    }

    /// Keeps credentials the server accepted for the sessions opened after this one.
    pub(crate) fn remember_auth(&self, scheme: &str, credential: &[u8]) {
        let mut added = self.connection().added_auth.lock().unwrap();
        let entry = (scheme.to_owned(), credential.to_vec());
        if !added.contains(&entry) {
            added.push(entry);
        }
    }

    fn connection(&self) -> &Connection {
        &self.inner.connection
    }
}

/// `span` (made with `parent: None`) linked to the caller's span by
/// `follows_from`, for work that outlives the call that starts it
/// ([`Session::spawn_in`]): a trace shows which call started it, and the
/// caller's span still closes when the call ends.
pub(crate) fn detached_span(span: tracing::Span) -> tracing::Span {
    span.follows_from(tracing::Span::current());
    span
}

/// What [`Session::confirmed_until`] returns; nanoseconds on the boot clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Confirmed {
    /// No server can have expired the session before this time.
    pub until: u64,
    /// When the quorum last answered a renewal (or `until` last moved):
    /// what the CLI's `--grace` counts from.
    pub last: u64,
}

/// Nanoseconds on the clock [`Session::confirmed_until`] counts on:
/// `CLOCK_BOOTTIME` on Linux (it counts while the machine sleeps, as the
/// servers' clocks do).
pub fn boot_clock() -> u64 {
    confirm::boot_now()
}

/// State that a layer above the session keeps once per session — the
/// contender's doubtful prefixes and persistent nodes, the lock's lines, the
/// mirrors — made on first use and kept for the session's life.
pub(crate) trait Extension: Default + Send + Sync + 'static {
    /// Told of each status change; `ended`: a generation ended (lost,
    /// replaced or closed).
    fn session_changed(&self, _now: Status, _ended: bool) {}

    /// What must be done before the session ends: [`Session::close`] waits
    /// for it, at most the session timeout.
    fn closing<'a>(&'a self, _session: &'a Session) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Box::pin(async {})
    }
}

/// An [`Extension`] of any type, as the session keeps it.
trait Hooks: Send + Sync {
    fn as_any(&self) -> &dyn Any;
    fn session_changed(&self, now: Status, ended: bool);
    fn closing<'a>(&'a self, session: &'a Session) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>>;
}

impl<T: Extension> Hooks for T {
    fn as_any(&self) -> &dyn Any {
        self
    }

    fn session_changed(&self, now: Status, ended: bool) {
        Extension::session_changed(self, now, ended)
    }

    fn closing<'a>(&'a self, session: &'a Session) -> Pin<Box<dyn Future<Output = ()> + Send + 'a>> {
        Extension::closing(self, session)
    }
}

/// The extensions of one session, at most one of each type: a chain of
/// slots, each set once, grown as types come, so that a lookup takes no
/// lock (acquires look some up on every attempt) and any number fit.
#[derive(Default)]
struct Extensions {
    here: OnceLock<(TypeId, Box<dyn Hooks>)>,
    rest: OnceLock<Box<Extensions>>,
}

impl Extensions {
    /// The `T`, made in the first free slot if none has it yet. A slot's
    /// type is set once, so every caller that wants `T` stops at the same slot.
    fn get_or_make<T: Extension>(&self) -> &T {
        let wanted = TypeId::of::<T>();
        let mut slots = self;
        loop {
            let (id, hooks) = slots.here.get_or_init(|| (wanted, Box::new(T::default())));
            if *id == wanted {
                return hooks.as_any().downcast_ref().expect("a slot of T's type id holds a T");
            }
            slots = slots.rest.get_or_init(Box::default);
        }
    }

    fn iter(&self) -> impl Iterator<Item = &dyn Hooks> {
        std::iter::successors(Some(self), |slots| slots.rest.get().map(Box::as_ref))
            .filter_map(|slots| slots.here.get())
            .map(|(_, hooks)| hooks.as_ref())
    }
}

impl StatusWatcher for Inner {
    /// Tells every extension made so far.
    fn session_changed(&self, now: Status, ended: bool) {
        for hooks in self.extensions.iter() {
            hooks.session_changed(now, ended);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    macro_rules! kinds {
        ($($name:ident),*) => {$(
            #[derive(Default)]
            struct $name(std::sync::atomic::AtomicU32);
            impl Extension for $name {}
        )*};
    }
    kinds!(A, B, C, D, E, F, G);

    /// Any number of extension types fit (four slots once panicked at the fifth),
    /// each made once and found again.
    #[test]
    fn any_number_of_extensions_each_made_once() {
        let extensions = Extensions::default();
        extensions.get_or_make::<A>().0.store(1, Ordering::Relaxed);
        extensions.get_or_make::<G>().0.store(7, Ordering::Relaxed);
        for _ in 0..2 {
            let others = [
                extensions.get_or_make::<B>().0.load(Ordering::Relaxed),
                extensions.get_or_make::<C>().0.load(Ordering::Relaxed),
                extensions.get_or_make::<D>().0.load(Ordering::Relaxed),
                extensions.get_or_make::<E>().0.load(Ordering::Relaxed),
                extensions.get_or_make::<F>().0.load(Ordering::Relaxed),
            ];
            assert_eq!(others, [0; 5]);
        }
        assert_eq!(extensions.get_or_make::<A>().0.load(Ordering::Relaxed), 1);
        assert_eq!(extensions.get_or_make::<G>().0.load(Ordering::Relaxed), 7);
        assert_eq!(extensions.iter().count(), 7);
    }
}

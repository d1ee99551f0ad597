//! The session's connection: opening a ZooKeeper session (TLS, SASL, the
//! connect timeout), following its state, replacing it after expiry, and
//! publishing each change to the status channel, the listeners and the
//! status watchers. Below the [`Session`](super::Session) facade, which reads
//! what this keeps.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::{watch, Notify};
use tokio::time::timeout;
use tracing::Instrument;
use zookeeper_client as zk;

use super::confirm::{self, boot_now, Confirmation, Refresh};
use super::round_trip::RoundTrip;
use crate::error::{Error, Result};
use crate::events::{Listeners, WatchThread};
use crate::metrics::Meter;
use crate::options::{ClientId, ConnectString, SessionOptions};
use crate::runtime;
use crate::security::{Probe, SaslOptions, TlsOptions};
use crate::state::{SessionState, Status};

/// The ZooKeeper client of one generation, as handed to recipes.
#[derive(Clone)]
pub(crate) struct Live {
    pub client: zk::Client,
    pub generation: u64,
    pub session_id: i64,
    /// When the connect request that opened it was sent (boot clock, ns).
    pub opened: u64,
    /// Its round trip, by its locks' reads (round_trip.rs); shared by clones.
    pub round_trip: Arc<RoundTrip>,
}

impl Live {
    /// A lock's read, sent by `send`, its round trip recorded when the
    /// server answered (a missing node too; a lost connection not).
    pub async fn timed_read<'a, T, F>(&'a self, send: impl FnOnce(&'a zk::Client) -> F) -> Result<T, zk::Error>
    where
        F: std::future::Future<Output = Result<T, zk::Error>>,
    {
        let sent = boot_now();
        let reply = send(&self.client).await;
        if matches!(reply, Ok(_) | Err(zk::Error::NoNode)) {
            self.round_trip.record(sent);
        }
        reply
    }
}

/// What every generation of one session shares: its options, its status,
/// the current generation's client, and who hears of changes.
pub(crate) struct Connection {
    pub(super) options: SessionOptions,
    pub(super) status: watch::Sender<Status>,
    /// Shared, not cloned, with every request: a `Live` is large, and
    /// cloning a client allocates (a queued waiter keeps one, issue 16).
    pub(super) current: Mutex<Option<Arc<Live>>>,
    /// Notified once the session is closed (after its status says so).
    pub(super) closed: Notify,
    pub(super) listeners: Listeners<SessionState>,
    /// Where this session's watch callbacks run (see [`WatchThread`]).
    pub(super) watch_thread: WatchThread,
    /// Told of each status change: handles holding something now, and the
    /// session's extensions.
    pub(super) watchers: Mutex<Watchers>,
    pub(super) meter: Meter,
    /// The runtime that runs this session's connection and every task of
    /// its own (see [`session_runtime`]).
    pub(super) runtime: Handle,
    /// The process that connected it: its tasks' threads exist only there.
    pub(super) pid: u32,
    /// Set when `runtime` shut down under the session (see [`Supervisor`]).
    pub(super) runtime_gone: AtomicBool,
    /// Credentials the server accepted at run time (`Session::add_auth`):
    /// every later generation sends them too, after the options' own.
    pub(super) added_auth: Mutex<Vec<(String, Vec<u8>)>>,
    /// The connect string the next generation opens with (`Session::set_hosts`).
    pub(super) hosts: Mutex<String>,
    /// Until when the quorum has confirmed the session (see [`confirm`]).
    pub(super) confirmation: Arc<Confirmation>,
    /// Whether zookeeper-client is connected to a server now.
    linked: AtomicBool,
    /// Taken to work out and publish the state: the last to publish read the latest.
    refreshing: Mutex<()>,
    /// Set once the session's id was handed out (`Session::client_id`).
    pub(super) id_given: Arc<AtomicBool>,
}

/// Told of every status change while registered ([`Watchers`]); `ended`:
/// a generation ended (lost, replaced or closed).
pub(crate) trait StatusWatcher: Send + Sync {
    fn session_changed(&self, now: Status, ended: bool);
}

/// The status watchers of one session: one registry instead of a task per
/// hold keeps acquire and release cheap.
#[derive(Default)]
pub(crate) struct Watchers {
    next_key: u64,
    watchers: Vec<WatcherEntry>,
}

pub(crate) struct WatcherEntry {
    key: u64,
    watcher: Weak<dyn StatusWatcher>,
    /// The same watcher, kept alive while registered: a hold that outlives
    /// its handle ([`crate::Acquire::keep_if_dropped`]).
    _kept: Option<Arc<dyn StatusWatcher>>,
}

impl Watchers {
    pub(super) fn add(&mut self, watcher: Weak<dyn StatusWatcher>, kept: Option<Arc<dyn StatusWatcher>>) -> u64 {
        self.next_key += 1;
        self.watchers.push(WatcherEntry { key: self.next_key, watcher, _kept: kept });
        self.next_key
    }

    /// Takes the watcher `key` out; the caller drops it outside the registry's lock.
    pub(super) fn remove(&mut self, key: u64) -> Option<WatcherEntry> {
        let at = self.watchers.iter().position(|w| w.key == key)?;
        Some(self.watchers.remove(at))
    }
}

impl Connection {
    /// Connects (see [`Session::connect`](super::Session::connect)) and
    /// starts following the session.
    pub(super) async fn connect(options: SessionOptions) -> Result<Arc<Connection>> {
        let chroot = options.validate()?.chroot;
        runtime::check_process()?;
        let (handle, callers) = session_runtime();
        let hosts = options.connect.clone();
        match Connection::connect_on(options.clone(), chroot.clone(), handle).await {
            Ok(connected) => connected,
            // zookeeper-client's socket is tokio's: a caller's runtime built
            // without tokio's I/O driver panics at its registration. The
            // session runs on zoolock's runtime instead, as it did before.
            // (tokio's JoinError shows the panic's text.) A runtime without
            // timers fails as before: every acquire's own wait needs them.
            Err(ended) if callers && ended.is_panic() && ended.to_string().contains("IO is disabled") => {
                tracing::warn!(
                    "zoolock: the caller's tokio runtime has no I/O driver (Builder::enable_io): the session runs on zoolock's own runtime"
                );
                let own = runtime::handle().clone();
                Connection::connect_on(options, chroot, own)
                    .await
                    .unwrap_or_else(|ended| Err(connect_ended(ended, hosts)))
            }
            Err(ended) => Err(connect_ended(ended, hosts)),
        }
    }

    /// [`Connection::connect`] on the runtime `handle`, with the connect
    /// string's `chroot` (validated options).
    async fn connect_on(
        options: SessionOptions,
        chroot: Option<String>,
        handle: Handle,
    ) -> std::result::Result<Result<Arc<Connection>>, tokio::task::JoinError> {
        let on = handle.clone();
        let hosts = options.connect.clone();
        // Spawned on the chosen runtime: `zookeeper-client` starts the
        // connection's task on the runtime its connect runs on. In a
        // `connect` span of the caller's: the connect is the caller's.
        let span = tracing::info_span!("connect", hosts);
        on.spawn(
            async move {
            let live = open(&options, 1).await?;
            // A resumed session was not created by a write: one proves the
            // quorum before the session counts as connected (confirm.rs).
            let quorum = match options.resume {
                None => Some(live.opened),
                Some(_) => confirm::quorum_write(&live.client).await.ok(),
            };
            if let Some(chroot) = chroot {
                match live.client.check_stat("/").await {
                    Ok(Some(_)) => {}
                    // Created on first need instead (`SessionOptions::create_chroot`).
                    Ok(None) if options.create_chroot => {}
                    Ok(None) => return Err(Error::NoChroot(chroot)),
                    Err(e) => return Err(Error::zk(&chroot, "check", e)),
                }
            }
            let status = Status { state: SessionState::Connected, generation: 1, session_id: live.session_id };
            let session_id = format!("{:#x}", live.session_id);
            let resumed = options.resume.is_some();
            tracing::info!(state = ?status.state, generation = 1, session_id, resumed, hosts = options.connect, "zoolock session");
            let connect = options.connect.clone();
            let connection = Arc::new(Connection {
                options,
                status: watch::Sender::new(status),
                current: Mutex::new(Some(Arc::new(live.clone()))),
                closed: Notify::new(),
                listeners: Listeners::new(),
                watch_thread: WatchThread::default(),
                watchers: Mutex::default(),
                meter: Meter::default(),
                runtime: handle,
                pid: runtime::process_id(),
                runtime_gone: AtomicBool::new(false),
                added_auth: Mutex::default(),
                hosts: Mutex::new(connect),
                confirmation: Arc::default(),
                linked: AtomicBool::new(true),
                refreshing: Mutex::new(()),
                id_given: Arc::default(),
            });
            connection.confirmation.opened(live.opened, quorum, live.client.session_timeout());
            connection.start_renewal(&live);
            let supervisor = Supervisor(Arc::downgrade(&connection));
            connection.runtime.spawn(supervise(supervisor, live));
            Ok(connection)
        }
            .instrument(span),
        )
        .await
    }

    /// Renews the confirmation of `live`'s session while that generation lasts.
    fn start_renewal(self: &Arc<Self>, live: &Live) {
        let renewal = confirm::renew(
            Arc::downgrade(self),
            self.confirmation.clone(),
            live.client.clone(),
            self.status.subscribe(),
            live.generation,
        );
        self.runtime.spawn(renewal.instrument(session_span(live)));
    }

    /// Publishes `Closed`, under the lock of the current client: no new
    /// generation is installed after it.
    pub(super) fn publish_closed(&self) {
        let _current = self.current.lock().unwrap();
        let status = *self.status.borrow();
        publish(self, SessionState::Closed, status.generation, status.session_id);
    }

    /// Lets go of the current client and waits, at most the session
    /// timeout, until its session has ended.
    pub(super) async fn end(&self) {
        let live = self.current.lock().unwrap().take();
        let Some(live) = live else { return };
        let mut states = live.client.state_watcher();
        drop(live);
        // The session closes when the last clone of its client is gone; tasks
        // holding one see `Closed` through the status and let go.
        let _ = timeout(self.options.session_timeout, async {
            while !states.state().is_terminated() {
                states.changed().await;
            }
        })
        .await;
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
    let parsed = ConnectString::parse(&options.connect)?;
    #[cfg(feature = "tls")]
    let probe = Probe::new(parsed.endpoints(), tls.as_ref().map(|t| t.probe.clone()));
    #[cfg(not(feature = "tls"))]
    let probe = Probe::new(parsed.endpoints(), tls.as_ref().map(|never| match *never {}));
    let sasl = options.sasl.as_ref().map(SaslOptions::to_zk).transpose()?;
    let cluster = parsed.to_string();
    let started = Instant::now();
    let mut opened = 0;
    // zookeeper-client gives up after about the session timeout when no
    // server answers: a longer connect timeout is the caller's, so start
    // again until it runs out.
    let connect = async {
        loop {
            let mut connector = zk::Client::connector().with_session_timeout(options.session_timeout);
            if let Some(id) = &options.resume {
                let session = zk::SessionInfo::new(zk::SessionId(id.session_id()), id.password().to_vec());
                connector = connector.with_session(session);
            }
            for (scheme, auth) in &options.auth {
                connector = connector.with_auth(scheme, auth);
            }
            #[cfg(feature = "sasl")]
            if let Some(sasl) = &sasl {
                connector = connector.with_sasl(sasl.clone());
            }
            #[cfg(not(feature = "sasl"))]
            if let Some(never) = sasl {
                match never {}
            }
            opened = boot_now();
            let attempt = match &tls {
                #[cfg(feature = "tls")]
                Some(tls) => connector.with_tls(tls.zk.clone()).secure_connect(&cluster).await,
                #[cfg(not(feature = "tls"))]
                Some(never) => match *never {},
                None => connector.connect(&cluster).await,
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
        // The server answers a resume of a session it no longer has, or with
        // the wrong password, alike: as expired.
        Ok(Err(zk::Error::SessionExpired)) if options.resume.is_some() => {
            return Err(Error::SessionExpired { action: "resume the session at", path: options.connect.clone() })
        }
        Ok(Err(e)) => return Err(Error::zk(&options.connect, "connect to", e)),
        Ok(Ok(client)) => client,
    };
    let session_id = client.session_id().0;
    Ok(Live { client, generation, session_id, opened, round_trip: Arc::default() })
}

/// Between two connect attempts that each tried every host until the session timeout.
const RECONNECT_PAUSE: Duration = Duration::from_millis(50);

fn publish(shared: &Connection, state: SessionState, generation: u64, session_id: i64) {
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
        // The watchers are the holds and the session's extensions: mirrored
        // waiters of an ended generation learn it there, woken by their
        // mirror, rather than each from a watch of the status of its own.
        let watchers: Vec<_> =
            shared.watchers.lock().unwrap().watchers.iter().filter_map(|w| w.watcher.upgrade()).collect();
        for watcher in watchers {
            watcher.session_changed(next, ended);
        }
        if state == SessionState::Closed {
            shared.closed.notify_waiters();
        }
    }
}

impl Refresh for Connection {
    /// `Connected` while linked to a server and confirmed by the quorum,
    /// else `Suspended`; a lost or closed session stays so.
    fn refresh(&self) {
        let _turn = self.refreshing.lock().unwrap();
        let status = *self.status.borrow();
        if matches!(status.state, SessionState::Lost | SessionState::Closed) {
            return;
        }
        let state = if self.linked.load(Ordering::Acquire) && self.confirmation.holds() {
            SessionState::Connected
        } else {
            SessionState::Suspended
        };
        publish(self, state, status.generation, status.session_id);
    }
}

/// The span of one generation's own work (its supervision, its renewals):
/// they outlive any caller, so not in a caller's span.
fn session_span(live: &Live) -> tracing::Span {
    let session_id = format_args!("{:#x}", live.session_id);
    tracing::info_span!(parent: None, "session", session_id, generation = live.generation)
}

/// Follows each generation's client and replaces it when its session ends,
/// in the span of the generation that ended ([`session_span`]).
async fn supervise(supervisor: Supervisor, mut live: Live) {
    let shared = &supervisor.0;
    let mut at_shutdown = CloseAtShutdown::default();
    loop {
        at_shutdown.arm(shared, &live);
        let generation = live.generation;
        let span = session_span(&live);
        if !follow(shared, live).instrument(span.clone()).await {
            break;
        }
        at_shutdown.disarm();
        live = match reopen(shared, generation + 1).instrument(span).await {
            Some(live) => live,
            None => break,
        };
    }
    at_shutdown.disarm();
}

/// How long a runtime's shutdown may wait for [`CloseAtShutdown`]: a
/// program leaving while the ensemble is unreachable waits no longer.
const CLOSE_AT_SHUTDOWN: Duration = Duration::from_secs(2);

/// Ends the session when the runtime it runs on shuts down under it (a
/// `#[tokio::main]` that returns, or leaves by `?`, while it holds): the
/// supervision, dropped unfinished, resumes the session from zoolock's own
/// runtime and closes it, so its nodes go now and not a session timeout
/// later (the release a dropped hold spawned died with that runtime). Armed
/// with what the close needs for each generation, so it does not depend on
/// the session's handles outliving the shutdown; not for a session whose
/// id was handed out (`Session::client_id`): another process may go on with it.
#[derive(Default)]
struct CloseAtShutdown {
    armed: Option<(SessionOptions, Weak<Connection>, Arc<AtomicBool>)>,
}

impl CloseAtShutdown {
    fn arm(&mut self, shared: &Weak<Connection>, live: &Live) {
        let Some(connection) = shared.upgrade() else { return };
        let session = live.client.session();
        let mut options = connection.options.clone();
        options.resume = Some(ClientId::new(session.id().0, session.password()));
        options.connect = connection.hosts.lock().unwrap().clone();
        options.auth.extend(connection.added_auth.lock().unwrap().iter().cloned());
        self.armed = Some((options, shared.clone(), connection.id_given.clone()));
    }

    fn disarm(&mut self) {
        self.armed = None;
    }
}

impl Drop for CloseAtShutdown {
    fn drop(&mut self) {
        let Some((options, shared, id_given)) = self.armed.take() else { return };
        let closed = shared.upgrade().is_some_and(|c| c.status.borrow().state == SessionState::Closed);
        if closed || id_given.load(Ordering::Acquire) {
            return;
        }
        let session_id = options.resume.as_ref().map_or(0, |id| id.session_id());
        tracing::info!(
            session_id = format_args!("{session_id:#x}"),
            "zoolock closes its session: the runtime it ran on shut down"
        );
        let close = async move {
            let live = open(&options, 0).await?;
            let mut states = live.client.state_watcher();
            drop(live); // the last clone: zookeeper-client sends CloseSession
            while !states.state().is_terminated() {
                states.changed().await;
            }
            Ok::<(), Error>(())
        };
        // A thread of its own: this one may still be inside the runtime that
        // shuts down. Not one to be had (a process out of threads): nothing closed.
        let closer = std::thread::Builder::new()
            .name("zoolock-close".into())
            .spawn(move || runtime::block_on(async move { timeout(CLOSE_AT_SHUTDOWN, close).await }));
        if let Ok(closer) = closer {
            let _ = closer.join();
        }
    }
}

/// Follows one generation's client until its session ends (true), or the
/// session is closed or dropped (false).
async fn follow(shared: &Weak<Connection>, live: Live) -> bool {
    let mut states = live.client.state_watcher();
    let (generation, session_id) = (live.generation, live.session_id);
    // Holding the client here would keep the session open after close().
    drop(live);
    loop {
        let state = states.changed().await;
        let Some(shared) = shared.upgrade() else { return false };
        match state {
            zk::SessionState::Disconnected => {
                shared.linked.store(false, Ordering::Release);
                shared.refresh();
            }
            // Connected again: `Connected` while the quorum's confirmation
            // holds; the renewal confirms a reconnect at once (confirm.rs).
            zk::SessionState::SyncConnected | zk::SessionState::ConnectedReadOnly => {
                shared.linked.store(true, Ordering::Release);
                shared.refresh();
            }
            _ => {
                if shared.status.borrow().state == SessionState::Closed {
                    return false;
                }
                tracing::warn!(
                    ?state,
                    session_id = format_args!("{session_id:#x}"),
                    "zoolock session ended; opening a new one"
                );
                shared.current.lock().unwrap().take();
                publish(&shared, SessionState::Lost, generation, session_id);
                return true;
            }
        }
    }
}

/// Opens the next generation's session, retrying with backoff until it
/// succeeds or the user closes (or drops) the session.
async fn reopen(weak: &Weak<Connection>, generation: u64) -> Option<Live> {
    let mut backoff = Duration::from_millis(50);
    loop {
        let shared = weak.upgrade()?;
        let mut options = shared.options.clone();
        options.connect = shared.hosts.lock().unwrap().clone();
        options.auth.extend(shared.added_auth.lock().unwrap().iter().cloned());
        // The resumed session is the one that ended.
        options.resume = None;
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
                shared.confirmation.opened(live.opened, Some(live.opened), live.client.session_timeout());
                shared.linked.store(true, Ordering::Release);
                publish(&shared, SessionState::Connected, generation, live.session_id);
                shared.start_renewal(&live);
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
fn session_runtime() -> (Handle, bool) {
    match Handle::try_current() {
        Ok(caller) if caller.runtime_flavor() == RuntimeFlavor::MultiThread => (caller, true),
        _ => (runtime::handle().clone(), false),
    }
}

/// Owned by the supervising task, which returns only once the session is
/// closed or dropped. Dropped before that, the task was dropped unfinished:
/// its runtime shut down, and with it the session's connection. Then it
/// closes the session, which wakes every waiter (they watch the status)
/// with [`Error::RuntimeGone`].
struct Supervisor(Weak<Connection>);

impl Drop for Supervisor {
    fn drop(&mut self) {
        let Some(shared) = self.0.upgrade() else { return };
        // Closed (by the user, or past its last owner): it finished.
        if shared.status.borrow().state == SessionState::Closed {
            return;
        }
        shared.runtime_gone.store(true, Ordering::Release);
        let last = shared.current.lock().unwrap().take();
        // zookeeper-client sends CloseSession when its last client drops, if
        // its task is still polled (a worker not yet told of the shutdown):
        // a session whose id was handed out lives on, so its client is kept.
        if shared.id_given.load(Ordering::Acquire) {
            std::mem::forget(last);
        }
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

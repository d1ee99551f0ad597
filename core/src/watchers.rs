//! kazoo's `DataWatch` and `ChildrenWatch`, once for every binding: a
//! callback called with a node's current data (or children) at once and
//! again after each change, on its session's watch thread, until it returns
//! false or the watch is stopped or dropped. A watch survives reconnects and
//! session expiry: on a new session it reads again and calls back only if
//! something changed meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use zookeeper_client as zk;

use crate::error::{connection_lost, Error, Result};
use crate::mirror::Mirrors;
use crate::options::validate_node_path;
use crate::runtime;
use crate::session::{detached_span, Session};
use crate::state::SessionState;
use crate::znode::Stat;

/// What happened to a watched node (kazoo's `WatchedEvent.type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEventKind {
    /// The node was created.
    Created,
    /// The node was deleted.
    Deleted,
    /// Its data changed.
    Changed,
    /// Its children changed.
    Child,
}

/// The change that led to a call; `None` in the first call and in calls
/// after the session was replaced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WatchEvent {
    /// What happened.
    pub kind: WatchEventKind,
    /// The node it happened to.
    pub path: String,
}

/// What a [`DataWatch`] reads: the data (`None`: null) and stat, `None` while the node does not exist.
type DataValue = Option<(Option<Vec<u8>>, Stat)>;

/// A [`DataWatch`] callback: the data (`None`: null) and stat, or `None` while the node does
/// not exist, and the event. Returning false ends the watch.
pub type DataCallback = dyn Fn(Option<(Option<Vec<u8>>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync;

/// A [`ChildrenWatch`] callback: the child names and the event. Returning
/// false ends the watch.
pub type ChildrenCallback = dyn Fn(Vec<String>, Option<WatchEvent>) -> bool + Send + Sync;

/// Shared by a watch's handle, its task and its queued calls.
struct Flag {
    stopped: AtomicBool,
    task: std::sync::Mutex<Option<AbortHandle>>,
}

impl Flag {
    fn new() -> Arc<Flag> {
        Arc::new(Flag { stopped: AtomicBool::new(false), task: std::sync::Mutex::new(None) })
    }

    fn stop(&self) {
        self.stopped.store(true, Ordering::Release);
        if let Some(task) = self.task.lock().unwrap().take() {
            task.abort();
        }
    }

    fn is_stopped(&self) -> bool {
        self.stopped.load(Ordering::Acquire)
    }
}

/// Queues one call on the session's watch thread; a call after the
/// callback returned false (or after `stop`) is skipped.
fn call<T: Send + 'static>(
    session: &Session,
    flag: &Arc<Flag>,
    callback: &Arc<dyn Fn(T, Option<WatchEvent>) -> bool + Send + Sync>,
    value: T,
    event: Option<WatchEvent>,
) {
    let (flag, callback) = (flag.clone(), callback.clone());
    session.deliver_watch_call(move || {
        if !flag.is_stopped() && !callback(value, event) {
            flag.stop();
        }
    });
}

/// The first read of a watch that `start` calls back with itself; the
/// task queues no later call before `go_on` says the first one returned
/// (true: watch on), so calls stay in order.
struct First<T> {
    value: T,
    go_on: oneshot::Sender<bool>,
}

/// What the task tells `start` once its first read is in: an error, the
/// first call for the caller to make, or that the watch is set (with its
/// call, if the read differed from what the caller had seen, queued).
type Started<T> = Result<Option<First<T>>>;

/// Stops a watch whose start was given up (its future dropped, e.g. by a
/// timeout or Ctrl-C around it) before its handle was returned.
struct StopUnlessStarted(Option<Arc<Flag>>);

impl Drop for StopUnlessStarted {
    fn drop(&mut self) {
        if let Some(flag) = self.0.take() {
            flag.stop();
        }
    }
}

/// Starts `task` for a watch and waits for its first read. Waits only for
/// the server's reply, never for the watch thread, where another callback
/// may be waiting for something the caller holds. The first call of
/// [`DataWatch::start`] and [`ChildrenWatch::start`] is made here, in the
/// caller's thread (or task), as kazoo's recipes make it in the
/// constructing thread; later calls go to the session's watch thread.
/// The task runs until the watch stops: in a `watch` span of its own
/// (`path`), not the caller's.
async fn start<T: Send + 'static>(
    session: &Session,
    path: &str,
    flag: &Arc<Flag>,
    task: impl std::future::Future<Output = ()> + Send + 'static,
    started: oneshot::Receiver<Started<T>>,
    callback: &Arc<dyn Fn(T, Option<WatchEvent>) -> bool + Send + Sync>,
) -> Result<()> {
    session.check_usable()?;
    let mut given_up = StopUnlessStarted(Some(flag.clone()));
    let span = detached_span(tracing::info_span!(parent: None, "watch", path));
    let handle = session.spawn_in(span, task);
    *flag.task.lock().unwrap() = Some(handle.abort_handle());
    let first = match started.await {
        Ok(Ok(first)) => first,
        Ok(Err(err)) => return Err(err),
        // The task ended without a word: the session closed (or its runtime is gone).
        Err(_) => return Err(session.closed_error()),
    };
    if let Some(First { value, go_on }) = first {
        let more = callback(value, None);
        if !more {
            flag.stop();
        }
        let _ = go_on.send(more);
    }
    given_up.0 = None;
    Ok(())
}

/// Hands the first read to `start` (`Some` of `started`, taken): to call
/// back with itself (`inline`), or queued on the watch thread if `changed`.
/// False if the watch must end: `start` was given up, or its first call
/// returned false.
async fn begin<T: Send + 'static>(
    started: oneshot::Sender<Started<T>>,
    inline: bool,
    changed: bool,
    session: &Session,
    flag: &Arc<Flag>,
    callback: &Arc<dyn Fn(T, Option<WatchEvent>) -> bool + Send + Sync>,
    value: T,
) -> bool {
    if inline {
        let (go_on, answer) = oneshot::channel();
        if started.send(Ok(Some(First { value, go_on }))).is_err() {
            return false;
        }
        // Unanswered (dropped): `start` was given up.
        return answer.await.unwrap_or(false);
    }
    if changed {
        call(session, flag, callback, value, None);
    }
    started.send(Ok(None)).is_ok()
}

pub(crate) fn event_of(event: &zk::WatchedEvent) -> Option<WatchEvent> {
    let kind = match event.event_type {
        zk::EventType::NodeCreated => WatchEventKind::Created,
        zk::EventType::NodeDeleted => WatchEventKind::Deleted,
        zk::EventType::NodeDataChanged => WatchEventKind::Changed,
        zk::EventType::NodeChildrenChanged => WatchEventKind::Child,
        zk::EventType::Session => return None,
    };
    Some(WatchEvent { kind, path: event.path.clone() })
}

/// What to do after a request of a watch failed: go on (after the session
/// is back), or end with the error.
async fn recover(session: &Session, generation: u64, err: zk::Error, path: &str) -> Result<()> {
    match err {
        // A request sent while disconnected waits for the reconnect; only
        // one on the wire is lost: send it again once connected.
        err if connection_lost(&err) => {
            let mut status = session.subscribe();
            let _ = status.wait_for(|s| matches!(s.state, SessionState::Connected | SessionState::Closed)).await;
            Ok(())
        }
        zk::Error::SessionExpired | zk::Error::ClientClosed => {
            if session.wait_past(generation).await {
                Ok(())
            } else {
                Err(session.closed_error())
            }
        }
        err => Err(Error::zk(path, "watch", err)),
    }
}

/// kazoo's `DataWatch`: calls back with the node's data and stat at once,
/// then after each change; with `None` while the node does not exist (it
/// need not exist at the start) and keeps watching through its deletion and
/// re-creation. The first call is made by [`DataWatch::start`] itself, in
/// the caller's thread (kazoo's: in the constructing thread); the later ones
/// come in order on the session's watch thread, so a slow callback delays
/// its session's later calls, never I/O, another session's watches or a
/// registration. A call is made only when the node's `mzxid` changed (or it
/// came or went) since the last one, so a new session's read calls back
/// only if the node changed meanwhile.
///
/// The watch ends when the callback returns false, on [`DataWatch::stop`],
/// when the handle is dropped, or when the session is closed.
pub struct DataWatch {
    flag: Arc<Flag>,
    path: String,
}

impl std::fmt::Debug for DataWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DataWatch").field("path", &self.path).finish_non_exhaustive()
    }
}

impl DataWatch {
    /// Reads the node and calls back with it before returning, in the
    /// caller's thread (or task). Fails on a bad path, or when the first
    /// read does (e.g. [`Error::NoAuth`]).
    pub async fn start(
        session: &Session,
        path: &str,
        callback: impl Fn(Option<(Option<Vec<u8>>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<DataWatch> {
        DataWatch::begin(session, path, None, callback).await
    }

    /// Watches from a state the caller has seen: `seen` is the node's
    /// `mzxid` as last seen, `None` if it did not exist. Returns once the
    /// watch is set, without a call; calls back (on the watch thread) at the
    /// first change after that state, at once if the first read already
    /// differs from it. What a watch resumed on a new session needs (kazoo's
    /// one-shot `watch=` reads are [`Session::get_watched`] and its kin).
    pub async fn start_from(
        session: &Session,
        path: &str,
        seen: Option<i64>,
        callback: impl Fn(Option<(Option<Vec<u8>>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<DataWatch> {
        DataWatch::begin(session, path, Some(seen), callback).await
    }

    async fn begin(
        session: &Session,
        path: &str,
        seen: Option<Option<i64>>,
        callback: impl Fn(Option<(Option<Vec<u8>>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<DataWatch> {
        validate_node_path(path)?;
        let flag = Flag::new();
        let (started, first) = oneshot::channel();
        let callback: Arc<DataCallback> = Arc::new(callback);
        let task = watch_data(session.clone(), path.to_owned(), flag.clone(), callback.clone(), seen, started);
        start(session, path, &flag, task, first, &callback).await?;
        Ok(DataWatch { flag, path: path.to_owned() })
    }

    /// [`DataWatch::start`] for callers without an async runtime.
    pub fn start_blocking(
        session: &Session,
        path: &str,
        callback: impl Fn(Option<(Option<Vec<u8>>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<DataWatch> {
        runtime::block_on(DataWatch::start(session, path, callback))
    }

    /// Ends the watch: no call starts after this returns.
    pub fn stop(&self) {
        self.flag.stop()
    }

    /// Whether the watch has ended (stopped, its callback returned false, or
    /// an error a retry cannot mend, such as [`Error::NoAuth`]).
    pub fn is_stopped(&self) -> bool {
        self.flag.is_stopped()
    }

    /// The watched path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl Drop for DataWatch {
    fn drop(&mut self) {
        self.flag.stop()
    }
}

/// The data watch's task. `last`: the mzxid the caller has seen (`Some`,
/// [`DataWatch::start_from`]) or `None` ([`DataWatch::start`], whose first
/// read `start` calls back with).
async fn watch_data(
    session: Session,
    path: String,
    flag: Arc<Flag>,
    callback: Arc<DataCallback>,
    mut last: Option<Option<i64>>,
    started: oneshot::Sender<Started<DataValue>>,
) {
    let inline = last.is_none();
    let mut started = Some(started);
    let fail = |started: &mut Option<oneshot::Sender<_>>, err: Error| {
        match started.take() {
            Some(started) => drop(started.send(Err(err))),
            // A closed session, or a watch stopped meanwhile, ends it as asked: no warning.
            None if matches!(err, Error::Closed) || flag.is_stopped() => {}
            None => tracing::warn!(%err, path, "zoolock data watch ended"),
        }
        flag.stop();
    };
    let mut event = None;
    while !flag.is_stopped() {
        let live = match session.live().await {
            Ok(live) => live,
            Err(err) => return fail(&mut started, err),
        };
        // A data watch: the session's handles on `path` stop mirroring it
        // while it may be set (the mark drops after the watcher).
        let _mark = Mirrors::of(&session).data_watch(&path);
        let read = match live.client.get_and_watch_data_nullable(&path).await {
            Ok((data, stat, watcher)) => Ok((Some((data, Stat::from(&stat))), watcher)),
            // Watch for its creation instead; `exists` leaves a watch also when absent.
            Err(zk::Error::NoNode) => match live.client.check_and_watch_stat(&path).await {
                Ok((None, watcher)) => Ok((None, watcher)),
                // Created in between: read it (the spare watch only costs a read later).
                Ok((Some(_), _)) => continue,
                Err(err) => Err(err),
            },
            Err(err) => Err(err),
        };
        let (value, watcher) = match read {
            Ok(read) => read,
            Err(err) => match recover(&session, live.generation, err, &path).await {
                Ok(()) => continue,
                Err(err) => return fail(&mut started, err),
            },
        };
        drop(live);
        let version = value.as_ref().map(|(_, stat)| stat.mzxid);
        let changed = last != Some(version);
        last = Some(version);
        let go_on = match started.take() {
            Some(started) => begin(started, inline, changed, &session, &flag, &callback, value).await,
            None => {
                if changed {
                    call(&session, &flag, &callback, value, event.take());
                }
                true
            }
        };
        if !go_on {
            return flag.stop();
        }
        let woke = watcher.changed().await;
        // Session events (an expiry) read again on the next session, as kazoo's does.
        event = event_of(&woke);
    }
}

/// kazoo's `ChildrenWatch`: calls back with the node's children at once,
/// then after each change of them. The first call is made by
/// [`ChildrenWatch::start`] itself, in the caller's thread; the later ones
/// on the session's watch thread (as [`DataWatch`]'s). The node must exist
/// at the start ([`Error::NoNode`] otherwise); the watch ends when it is
/// deleted, when the callback returns false, on [`ChildrenWatch::stop`],
/// when the handle is dropped, or when the session is closed. On a new
/// session it lists again and calls back only if the children differ.
pub struct ChildrenWatch {
    flag: Arc<Flag>,
    path: String,
}

impl std::fmt::Debug for ChildrenWatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChildrenWatch").field("path", &self.path).finish_non_exhaustive()
    }
}

impl ChildrenWatch {
    /// Starts watching the children of `path`: `callback` gets the list at
    /// once (before this returns, in the caller's thread), then after each
    /// change, until it returns false or the watch is stopped or dropped. A
    /// missing node is [`Error::NoNode`](crate::Error::NoNode).
    pub async fn start(
        session: &Session,
        path: &str,
        callback: impl Fn(Vec<String>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<ChildrenWatch> {
        ChildrenWatch::begin(session, path, None, callback).await
    }

    /// Watches from children the caller has seen (`seen`, in any order):
    /// returns once the watch is set, without a call; calls back (on the
    /// watch thread) at the first change after that, at once if the first
    /// listing already differs. As [`DataWatch::start_from`].
    pub async fn start_from(
        session: &Session,
        path: &str,
        seen: Vec<String>,
        callback: impl Fn(Vec<String>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<ChildrenWatch> {
        ChildrenWatch::begin(session, path, Some(seen), callback).await
    }

    async fn begin(
        session: &Session,
        path: &str,
        seen: Option<Vec<String>>,
        callback: impl Fn(Vec<String>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<ChildrenWatch> {
        validate_node_path(path)?;
        let flag = Flag::new();
        let (started, first) = oneshot::channel();
        let callback: Arc<ChildrenCallback> = Arc::new(callback);
        let task = watch_children(session.clone(), path.to_owned(), flag.clone(), callback.clone(), seen, started);
        start(session, path, &flag, task, first, &callback).await?;
        Ok(ChildrenWatch { flag, path: path.to_owned() })
    }

    /// [`ChildrenWatch::start`] for callers without an async runtime.
    pub fn start_blocking(
        session: &Session,
        path: &str,
        callback: impl Fn(Vec<String>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<ChildrenWatch> {
        runtime::block_on(ChildrenWatch::start(session, path, callback))
    }

    /// Stops the watch; the callback is not called again.
    pub fn stop(&self) {
        self.flag.stop()
    }

    /// Whether the watch has ended (see [`ChildrenWatch`]).
    pub fn is_stopped(&self) -> bool {
        self.flag.is_stopped()
    }

    /// The watched path.
    pub fn path(&self) -> &str {
        &self.path
    }
}

impl Drop for ChildrenWatch {
    fn drop(&mut self) {
        self.flag.stop()
    }
}

/// The children watch's task; `last` as in [`watch_data`], sorted.
async fn watch_children(
    session: Session,
    path: String,
    flag: Arc<Flag>,
    callback: Arc<ChildrenCallback>,
    last: Option<Vec<String>>,
    started: oneshot::Sender<Started<Vec<String>>>,
) {
    let inline = last.is_none();
    let mut last = last.map(sorted);
    let mut started = Some(started);
    let fail = |started: &mut Option<oneshot::Sender<_>>, err: Option<Error>| {
        match (started.take(), err) {
            (Some(started), Some(err)) => drop(started.send(Err(err))),
            (None, Some(err)) if !matches!(err, Error::Closed) && !flag.is_stopped() => {
                tracing::warn!(%err, path, "zoolock children watch ended")
            }
            _ => {}
        }
        flag.stop();
    };
    // Set after a wake by a change (always called back), not after a new session.
    let mut event = None;
    while !flag.is_stopped() {
        let live = match session.live().await {
            Ok(live) => live,
            Err(err) => return fail(&mut started, Some(err)),
        };
        let (children, watcher) = match live.client.list_and_watch_children(&path).await {
            Ok(listed) => listed,
            // Deleted: the watch ends (kazoo's), without a call.
            Err(zk::Error::NoNode) if started.is_none() => return fail(&mut started, None),
            Err(err) => match recover(&session, live.generation, err, &path).await {
                Ok(()) => continue,
                Err(err) => return fail(&mut started, Some(err)),
            },
        };
        drop(live);
        let now = sorted(children.clone());
        let changed = event.is_some() || last.as_ref() != Some(&now);
        last = Some(now);
        let go_on = match started.take() {
            Some(started) => begin(started, inline, changed, &session, &flag, &callback, children).await,
            None => {
                if changed {
                    call(&session, &flag, &callback, children, event.take());
                }
                true
            }
        };
        if !go_on {
            return flag.stop();
        }
        let woke = watcher.changed().await;
        event = event_of(&woke);
    }
}

fn sorted(mut names: Vec<String>) -> Vec<String> {
    names.sort_unstable();
    names
}

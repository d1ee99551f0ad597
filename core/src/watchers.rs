//! kazoo's `DataWatch` and `ChildrenWatch`, once for every binding: a
//! callback called with a node's current data (or children) at once and
//! again after each change, on zoolock's event thread, until it returns
//! false or the watch is stopped or dropped. A watch survives reconnects and
//! session expiry: on a new session it reads again and calls back only if
//! something changed meanwhile.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use tokio::sync::oneshot;
use tokio::task::AbortHandle;
use zookeeper_client as zk;

use crate::error::{connection_lost, Error, Result};
use crate::events;
use crate::mirror::Mirrors;
use crate::options::validate_node_path;
use crate::runtime;
use crate::session::Session;
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

/// A [`DataWatch`] callback: the data and stat, or `None` while the node does
/// not exist, and the event. Returning false ends the watch.
pub type DataCallback = dyn Fn(Option<(Vec<u8>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync;

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

/// Queues one call on the event thread; a call after the callback returned
/// false (or after `stop`) is skipped. `done` is told once it ran.
fn call<T: Send + 'static>(
    flag: &Arc<Flag>,
    callback: &Arc<dyn Fn(T, Option<WatchEvent>) -> bool + Send + Sync>,
    value: T,
    event: Option<WatchEvent>,
    done: Option<oneshot::Sender<()>>,
) {
    let (flag, callback) = (flag.clone(), callback.clone());
    events::deliver(move || {
        if !flag.is_stopped() && !callback(value, event) {
            flag.stop();
        }
        drop(done);
    });
}

/// Starts `task` for a watch and waits until its first call has run (unless
/// the caller is the event thread, where that call can run only later).
async fn start(
    session: &Session,
    flag: &Arc<Flag>,
    task: impl std::future::Future<Output = ()> + Send + 'static,
    started: oneshot::Receiver<Result<oneshot::Receiver<()>>>,
) -> Result<()> {
    session.check_usable()?;
    let handle = session.spawn(task);
    *flag.task.lock().unwrap() = Some(handle.abort_handle());
    // Stopped before the handle was stored (a first call that returned false): end the task too.
    if flag.is_stopped() {
        flag.stop();
    }
    let first = match started.await {
        Ok(Ok(first)) => first,
        Ok(Err(err)) => return Err(err),
        // The task ended without a word: the session closed (or its runtime is gone).
        Err(_) => return Err(session.closed_error()),
    };
    if !events::on_event_thread() {
        let _ = first.await;
    }
    Ok(())
}

fn event_of(event: &zk::WatchedEvent) -> Option<WatchEvent> {
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
/// re-creation. Calls come in order on zoolock's event thread, so a slow
/// callback delays later calls, never I/O. A call is made only when the
/// node's `mzxid` changed (or it came or went) since the last one, so a new
/// session's read calls back only if the node changed meanwhile.
///
/// The watch ends when the callback returns false, on [`DataWatch::stop`],
/// when the handle is dropped, or when the session is closed.
pub struct DataWatch {
    flag: Arc<Flag>,
    path: String,
}

impl DataWatch {
    /// Reads the node, and returns once the first call has run. Fails on a
    /// bad path, or when the first read does (e.g. [`Error::NoAuth`]).
    pub async fn start(
        session: &Session,
        path: &str,
        callback: impl Fn(Option<(Vec<u8>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<DataWatch> {
        validate_node_path(path)?;
        let flag = Flag::new();
        let (started, first) = oneshot::channel();
        let callback: Arc<DataCallback> = Arc::new(callback);
        let task = watch_data(session.clone(), path.to_owned(), flag.clone(), callback, started);
        start(session, &flag, task, first).await?;
        Ok(DataWatch { flag, path: path.to_owned() })
    }

    /// [`DataWatch::start`] for callers without an async runtime.
    pub fn start_blocking(
        session: &Session,
        path: &str,
        callback: impl Fn(Option<(Vec<u8>, Stat)>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
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

async fn watch_data(
    session: Session,
    path: String,
    flag: Arc<Flag>,
    callback: Arc<DataCallback>,
    started: oneshot::Sender<Result<oneshot::Receiver<()>>>,
) {
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
    // The mzxid of the last call's node (`Some(None)`: called with no node).
    let mut last: Option<Option<i64>> = None;
    let mut event = None;
    while !flag.is_stopped() {
        let live = match session.live().await {
            Ok(live) => live,
            Err(err) => return fail(&mut started, err),
        };
        // A data watch: the session's handles on `path` stop mirroring it
        // while it may be set (the mark drops after the watcher).
        let _mark = Mirrors::of(&session).data_watch(&path);
        let read = match live.client.get_and_watch_data(&path).await {
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
        let (done, first) = oneshot::channel();
        if last != Some(version) {
            last = Some(version);
            call(&flag, &callback, value, event.take(), Some(done));
        }
        if let Some(started) = started.take() {
            let _ = started.send(Ok(first));
        }
        let woke = watcher.changed().await;
        // Session events (an expiry) read again on the next session, as kazoo's does.
        event = event_of(&woke);
    }
}

/// kazoo's `ChildrenWatch`: calls back with the node's children at once,
/// then after each change of them, on zoolock's event thread. The node must
/// exist at the start ([`Error::NoNode`] otherwise); the watch ends when it
/// is deleted, when the callback returns false, on [`ChildrenWatch::stop`],
/// when the handle is dropped, or when the session is closed. On a new
/// session it lists again and calls back only if the children differ.
pub struct ChildrenWatch {
    flag: Arc<Flag>,
    path: String,
}

impl ChildrenWatch {
    /// Starts watching the children of `path`: `callback` gets the list at once, then after each change, until it returns false or the watch is stopped or dropped. A missing node is [`Error::NoNode`](crate::Error::NoNode).
    pub async fn start(
        session: &Session,
        path: &str,
        callback: impl Fn(Vec<String>, Option<WatchEvent>) -> bool + Send + Sync + 'static,
    ) -> Result<ChildrenWatch> {
        validate_node_path(path)?;
        let flag = Flag::new();
        let (started, first) = oneshot::channel();
        let callback: Arc<ChildrenCallback> = Arc::new(callback);
        let task = watch_children(session.clone(), path.to_owned(), flag.clone(), callback, started);
        start(session, &flag, task, first).await?;
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

async fn watch_children(
    session: Session,
    path: String,
    flag: Arc<Flag>,
    callback: Arc<ChildrenCallback>,
    started: oneshot::Sender<Result<oneshot::Receiver<()>>>,
) {
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
    let mut last: Option<Vec<String>> = None;
    // Set after a wake by a change (always called back), not after a new session.
    let mut event = None;
    while !flag.is_stopped() {
        let live = match session.live().await {
            Ok(live) => live,
            Err(err) => return fail(&mut started, Some(err)),
        };
        let watcher = match live.client.list_and_watch_children(&path).await {
            Ok((children, watcher)) => {
                let (done, first) = oneshot::channel();
                if event.is_some() || last.as_ref() != Some(&children) {
                    last = Some(children.clone());
                    call(&flag, &callback, children, event.take(), Some(done));
                }
                if let Some(started) = started.take() {
                    let _ = started.send(Ok(first));
                }
                watcher
            }
            // Deleted: the watch ends (kazoo's), without a call.
            Err(zk::Error::NoNode) if started.is_none() => return fail(&mut started, None),
            Err(err) => match recover(&session, live.generation, err, &path).await {
                Ok(()) => continue,
                Err(err) => return fail(&mut started, Some(err)),
            },
        };
        drop(live);
        let woke = watcher.changed().await;
        event = event_of(&woke);
    }
}

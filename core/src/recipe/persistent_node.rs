//! Curator's `PersistentNode` in its ephemeral mode: an ephemeral node at a
//! path, holding data, that stays there while started — made again on
//! each new session after an expiry and after anyone deletes it — and goes
//! on `close`. What a service registers itself with; kazoo users write it
//! by hand around a session listener.
//!
//! The node is kept as a party's member is (`znode::create_kept`): a node
//! of that path another session owns is waited out, and a create whose
//! reply was lost finds its node. A [`DataWatch`] on the path says when
//! the node is gone, on this session or after a new one. Changes and the
//! delete read the node and write it on one session, and read it again
//! after a lost connection: another session's node is never touched.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::task::JoinHandle;
use zookeeper_client as zk;

use crate::error::{Error, Result};
use crate::options::{validate_node_path, validate_path};
use crate::runtime;
use crate::session::{detached_span, Session};
use crate::state::SessionState;
use crate::watchers::DataWatch;
use crate::znode::{ask, check_data, create_kept, OnSession, Retry};

/// An ephemeral node kept at its path while started. Clones are the same node.
#[derive(Clone)]
pub struct PersistentNode {
    inner: Arc<Kept>,
}

impl std::fmt::Debug for PersistentNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentNode").field("path", &self.inner.node.path).finish_non_exhaustive()
    }
}

/// What the keeper task shares with the handle (not the handle itself, so
/// that dropping every handle ends the keeper).
struct Node {
    session: Session,
    path: String,
    parent: String,
    name: String,
    /// What the node is made with, and how many times it was changed.
    data: Mutex<(Vec<u8>, u64)>,
    started: AtomicBool,
}

struct Kept {
    node: Arc<Node>,
    /// Held by `start` and `close`: one at a time.
    turn: tokio::sync::Mutex<()>,
    /// Counts the closes, and wakes a `start` waiting out another's node.
    closes: AtomicU64,
    closing: Notify,
    /// The watch on the path and the task that makes the node again.
    keeper: Mutex<Option<(DataWatch, JoinHandle<()>)>>,
}

impl Drop for Kept {
    fn drop(&mut self) {
        if let Some((watch, task)) = self.keeper.get_mut().unwrap_or_else(|e| e.into_inner()).take() {
            watch.stop();
            task.abort();
        }
    }
}

impl PersistentNode {
    /// The node at `path` holding `data`. Nothing is sent before [`start`](PersistentNode::start).
    pub fn new(session: &Session, path: &str, data: impl Into<Vec<u8>>) -> Result<PersistentNode> {
        validate_node_path(path)?;
        let data = data.into();
        check_data(Some(&data))?;
        let (parent, name) = path.rsplit_once('/').expect("a valid node path has a '/'");
        if name.is_empty() {
            return Err(Error::InvalidPath { path: path.to_owned(), reason: "the root is no node of one's own" });
        }
        if !parent.is_empty() {
            validate_path(parent)?;
        }
        let node = Node {
            session: session.clone(),
            path: path.to_owned(),
            parent: parent.to_owned(),
            name: name.to_owned(),
            data: Mutex::new((data, 0)),
            started: AtomicBool::new(false),
        };
        Ok(PersistentNode {
            inner: Arc::new(Kept {
                node: Arc::new(node),
                turn: tokio::sync::Mutex::new(()),
                closes: AtomicU64::new(0),
                closing: Notify::new(),
                keeper: Mutex::new(None),
            }),
        })
    }

    /// The node's path.
    pub fn path(&self) -> &str {
        &self.inner.node.path
    }

    /// Whether it is started, not closed, and still kept: not once its
    /// session is closed, nor once its keeper met an error no retry mends,
    /// such as [`Error::NoAuth`] (start it again).
    pub fn is_started(&self) -> bool {
        let node = &self.inner.node;
        node.started.load(Ordering::Acquire) && !node.session.is_closed()
    }

    /// Makes the node (and its parents) and keeps it until [`close`](PersistentNode::close).
    /// A node at the path that another session owns is waited out (a
    /// process's earlier session, not yet expired): this returns once the
    /// node is this session's. A persistent node at the path is no one's to
    /// wait for: [`Error::NodeExists`]. A `close` meanwhile ends the wait
    /// with [`Error::Cancelled`]. Starting again changes nothing.
    pub async fn start(&self) -> Result<()> {
        let kept = &self.inner;
        let node = &kept.node;
        let closing = kept.closing.notified();
        tokio::pin!(closing);
        closing.as_mut().enable();
        let closes = kept.closes.load(Ordering::Acquire);
        let _turn = kept.turn.lock().await;
        let cancelled = || Error::Cancelled { path: node.path.clone() };
        if kept.closes.load(Ordering::Acquire) != closes {
            return Err(cancelled());
        }
        if node.started.load(Ordering::Acquire) {
            return Ok(());
        }
        let (data, version) = node.data.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let create = || create_kept(&node.session, &node.parent, &node.name, &data, false);
        tokio::select! {
            made = node.session.retry(Retry::default(), create) => { made?; }
            _ = &mut closing => return Err(cancelled()),
        }
        if kept.closes.load(Ordering::Acquire) != closes {
            return Err(cancelled()); // the close, next in turn, deletes what was made
        }
        let wake = Arc::new(Notify::new());
        let gone = wake.clone();
        // Told of every state after this one, on this session and the next:
        // no node (`None`) is the one to act on.
        let watch = DataWatch::start(&node.session, &node.path, move |found, _| {
            if found.is_none() {
                gone.notify_one();
            }
            true
        })
        .await?;
        node.started.store(true, Ordering::Release);
        let span = detached_span(tracing::info_span!(parent: None, "persistent_node", path = %node.path));
        let task = node.session.spawn_in(span, keep(node.clone(), wake));
        *kept.keeper.lock().unwrap_or_else(|e| e.into_inner()) = Some((watch, task));
        node.catch_up(version).await
    }

    /// The data the node is made with.
    pub fn data(&self) -> Vec<u8> {
        self.inner.node.data.lock().unwrap_or_else(|e| e.into_inner()).0.clone()
    }

    /// Changes the node's data, and what it is made with from now on. Sets
    /// it only on this session's node: one another session owns is left as it is.
    pub async fn set_data(&self, data: impl Into<Vec<u8>>) -> Result<()> {
        let node = &self.inner.node;
        let data = data.into();
        check_data(Some(&data))?;
        {
            let mut kept = node.data.lock().unwrap_or_else(|e| e.into_inner());
            *kept = (data, kept.1 + 1);
        }
        if node.started.load(Ordering::Acquire) {
            node.write_own(Write::Set).await?;
        }
        Ok(())
    }

    /// Stops keeping the node and deletes it: `false` if it was not this
    /// session's (gone, another's, or its session closed). A `start`
    /// waiting out another's node ends. Closing again is harmless.
    pub async fn close(&self) -> Result<bool> {
        let kept = &self.inner;
        kept.closes.fetch_add(1, Ordering::AcqRel);
        kept.closing.notify_waiters();
        let _turn = kept.turn.lock().await;
        kept.node.started.store(false, Ordering::Release);
        let keeper = kept.keeper.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((watch, task)) = keeper {
            watch.stop();
            task.abort();
            let _ = task.await;
        }
        // After the keeper: a create it sent went before the requests below
        // (a session's requests are applied in the order sent).
        match kept.node.write_own(Write::Delete).await {
            Err(Error::Closed) => Ok(false),
            done => done,
        }
    }

    /// [`PersistentNode::start`] for callers without an async runtime.
    pub fn start_blocking(&self) -> Result<()> {
        runtime::block_on(self.start())
    }

    /// [`PersistentNode::set_data`] for callers without an async runtime.
    pub fn set_data_blocking(&self, data: impl Into<Vec<u8>>) -> Result<()> {
        runtime::block_on(self.set_data(data))
    }

    /// [`PersistentNode::close`] for callers without an async runtime.
    pub fn close_blocking(&self) -> Result<bool> {
        runtime::block_on(self.close())
    }
}

#[derive(Clone, Copy)]
enum Write {
    Set,
    Delete,
}

impl Node {
    /// Writes this session's node (its current data, or its delete), read
    /// and written on one session and read again after a lost connection;
    /// `false` if there is none (absent, or another session's: untouched).
    async fn write_own(&self, write: Write) -> Result<bool> {
        let path = self.path.as_str();
        loop {
            let live = self.session.live().await?;
            let step = self.session.bounded(async {
                loop {
                    let stat = match ask!(live, live.client.check_stat(path)) {
                        Ok(Some(stat)) if stat.ephemeral_owner == live.session_id => stat,
                        Ok(_) => return Ok(OnSession::Done(false)),
                        Err(err) => return Err(Error::zk(path, "check", err)),
                    };
                    let written = match write {
                        Write::Delete => ask!(live, live.client.delete(path, Some(stat.version))),
                        Write::Set => {
                            let data = self.data.lock().unwrap_or_else(|e| e.into_inner()).0.clone();
                            ask!(live, live.client.set_data(path, &data, Some(stat.version))).map(drop)
                        }
                    };
                    match written {
                        Ok(()) => return Ok(OnSession::Done(true)),
                        Err(zk::Error::BadVersion | zk::Error::NoNode) => continue,
                        Err(err) => return Err(Error::zk(path, "write", err)),
                    }
                }
            });
            match step.await? {
                OnSession::Done(done) => return Ok(done),
                OnSession::Ended => continue, // its node, if any, went with the session
            }
        }
    }

    /// Sets the data changed since `version` was made (by a `set_data` that
    /// found no node while it was being made).
    async fn catch_up(&self, version: u64) -> Result<()> {
        if self.data.lock().unwrap_or_else(|e| e.into_inner()).1 != version {
            self.write_own(Write::Set).await?;
        }
        Ok(())
    }
}

/// Makes the node again each time the watch finds none, for as long as
/// the server is away, until the node is closed or dropped (the handle
/// aborts this task) or its session closes.
async fn keep(node: Arc<Node>, wake: Arc<Notify>) {
    let mut status = node.session.subscribe();
    loop {
        tokio::select! {
            _ = wake.notified() => {}
            _ = status.wait_for(|s| s.state == SessionState::Closed) => return,
        }
        if !node.started.load(Ordering::Acquire) {
            return;
        }
        let (data, version) = node.data.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let create = || create_kept(&node.session, &node.parent, &node.name, &data, false);
        let made = node.session.retry(Retry { max_tries: u32::MAX, deadline: None }, create).await;
        if let Err(err) = made.map(drop).and(node.catch_up(version).await) {
            if !node.session.is_closed() {
                node.started.store(false, Ordering::Release);
                tracing::warn!(path = %node.path, error = %err, "a persistent node is no longer kept");
            }
            return;
        }
    }
}

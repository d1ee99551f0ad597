//! Curator's `PersistentNode` in its ephemeral mode: an ephemeral node at a
//! path, holding data, that stays there while started — made again on
//! each new session after an expiry and after anyone deletes it — and goes
//! on `close`. What a service registers itself with; kazoo users write it
//! by hand around a session listener.
//!
//! The node is kept as a party's member is (`znode::create_kept`): a node
//! of that path another session owns is waited out, and a create whose
//! reply was lost finds its node. A [`DataWatch`] on the path says when
//! the node is gone, on this session or after a new one.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use tokio::sync::{Mutex, Notify};
use tokio::task::JoinHandle;

use crate::error::{Error, Result};
use crate::options::{validate_node_path, validate_path};
use crate::runtime;
use crate::session::{detached_span, Session};
use crate::watchers::DataWatch;
use crate::znode::{create_kept, Retry};

/// An ephemeral node kept at its path while started. Clones are the same node.
#[derive(Clone)]
pub struct PersistentNode {
    inner: Arc<Kept>,
}

impl std::fmt::Debug for PersistentNode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PersistentNode").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

struct Kept {
    session: Session,
    path: String,
    parent: String,
    name: String,
    /// What the node is made with. Held by a create, a change and the
    /// close, so that none of them sees another half done.
    data: Mutex<Vec<u8>>,
    started: AtomicBool,
    /// The watch on the path and the task that makes the node again.
    keeper: std::sync::Mutex<Option<(DataWatch, JoinHandle<()>)>>,
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
        crate::znode::check_data(Some(&data))?;
        let (parent, name) = path.rsplit_once('/').expect("a valid node path has a '/'");
        if name.is_empty() {
            return Err(Error::InvalidPath { path: path.to_owned(), reason: "the root is no node of one's own" });
        }
        if !parent.is_empty() {
            validate_path(parent)?;
        }
        Ok(PersistentNode {
            inner: Arc::new(Kept {
                session: session.clone(),
                path: path.to_owned(),
                parent: parent.to_owned(),
                name: name.to_owned(),
                data: Mutex::new(data),
                started: AtomicBool::new(false),
                keeper: std::sync::Mutex::new(None),
            }),
        })
    }

    /// The node's path.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// Whether it is started and not closed.
    pub fn is_started(&self) -> bool {
        self.inner.started.load(Ordering::Acquire)
    }

    /// Makes the node (and its parents) and keeps it until [`close`](PersistentNode::close).
    /// A node at the path that another session owns is waited out (a
    /// process's earlier session, not yet expired): this returns once the
    /// node is this session's. Starting again is harmless.
    pub async fn start(&self) -> Result<()> {
        let kept = &self.inner;
        let data = kept.data.lock().await;
        if kept.started.load(Ordering::Acquire) {
            return Ok(());
        }
        let create = || create_kept(&kept.session, &kept.parent, &kept.name, &data);
        kept.session.retry(Retry::default(), create).await?;
        let wake = Arc::new(Notify::new());
        let gone = wake.clone();
        // Told of every state after this one, on this session and the next:
        // no node (`None`) is the one to act on.
        let watch = DataWatch::start(&kept.session, &kept.path, move |node, _| {
            if node.is_none() {
                gone.notify_one();
            }
            true
        })
        .await?;
        kept.started.store(true, Ordering::Release);
        let span = detached_span(tracing::info_span!(parent: None, "persistent_node", path = %kept.path));
        let task = kept.session.spawn_in(span, keep(Arc::downgrade(kept), wake));
        *kept.keeper.lock().unwrap_or_else(|e| e.into_inner()) = Some((watch, task));
        Ok(())
    }

    /// The data the node is made with.
    pub async fn data(&self) -> Vec<u8> {
        self.inner.data.lock().await.clone()
    }

    /// Changes the node's data, and what it is made with from now on. Sets
    /// it only on this session's node: one another session owns is left as it is.
    pub async fn set_data(&self, data: impl Into<Vec<u8>>) -> Result<()> {
        let kept = &self.inner;
        let data = data.into();
        crate::znode::check_data(Some(&data))?;
        let mut kept_data = kept.data.lock().await;
        *kept_data = data;
        if !kept.started.load(Ordering::Acquire) {
            return Ok(());
        }
        loop {
            let Some(stat) = kept.session.retry(Retry::default(), || kept.session.exists(&kept.path)).await? else {
                return Ok(()); // the keeper makes it with the new data
            };
            if stat.ephemeral_owner != kept.session.status().session_id {
                return Ok(());
            }
            let set = || kept.session.set(&kept.path, Some(&kept_data), Some(stat.version));
            match kept.session.retry(Retry::default(), set).await {
                Ok(_) => return Ok(()),
                Err(Error::BadVersion { .. } | Error::NoNode { .. }) => continue,
                Err(err) => return Err(err),
            }
        }
    }

    /// Stops keeping the node and deletes it: `false` if it was not this
    /// session's (gone, or another's). Closing again is harmless.
    pub async fn close(&self) -> Result<bool> {
        let kept = &self.inner;
        kept.started.store(false, Ordering::Release);
        let keeper = kept.keeper.lock().unwrap_or_else(|e| e.into_inner()).take();
        if let Some((watch, task)) = keeper {
            watch.stop();
            task.abort();
            let _ = task.await;
        }
        // After the keeper: a create it sent went before the requests below
        // (a session's requests are applied in the order sent).
        let _data = kept.data.lock().await;
        loop {
            let Some(stat) = kept.session.retry(Retry::default(), || kept.session.exists(&kept.path)).await? else {
                return Ok(false);
            };
            if stat.ephemeral_owner != kept.session.status().session_id {
                return Ok(false);
            }
            let delete = || kept.session.delete(&kept.path, Some(stat.version), false);
            match kept.session.retry(Retry::default(), delete).await {
                Ok(()) => return Ok(true),
                Err(Error::BadVersion { .. }) => continue,
                Err(Error::NoNode { .. }) => return Ok(false),
                Err(err) => return Err(err),
            }
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

/// Makes the node again each time the watch finds none, for as long as
/// the server is away, until the node is closed or dropped or its
/// session closes.
async fn keep(kept: Weak<Kept>, wake: Arc<Notify>) {
    loop {
        wake.notified().await;
        let Some(kept) = kept.upgrade() else { return };
        let data = kept.data.lock().await;
        if !kept.started.load(Ordering::Acquire) {
            return;
        }
        let session = kept.session.clone();
        let create = || create_kept(&session, &kept.parent, &kept.name, &data);
        if let Err(err) = session.retry(Retry { max_tries: u32::MAX, deadline: None }, create).await {
            if !session.is_closed() {
                tracing::warn!(path = %kept.path, error = %err, "a persistent node could not be made again");
            }
            return;
        }
    }
}

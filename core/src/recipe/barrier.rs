//! kazoo's `Barrier` and `DoubleBarrier`, node for node, so that kazoo
//! clients take part on the same path.
//!
//! - `Barrier(path)`: the barrier is up while the node `path` exists;
//!   waiters wait for its deletion.
//! - `DoubleBarrier(path, num_clients)`: each member is an ephemeral
//!   `path/<uuid4 hex>` holding its identifier; the member that sees
//!   `num_clients` members creates `path/ready`, which lets everyone in.
//!   Leaving, the lowest member (by name) waits for the highest to go and the
//!   others delete their node and wait for the lowest: no one returns before
//!   every member has left.
//!
//! Unlike kazoo's, the waits survive a lost connection and a session expiry
//! (kazoo's `wait` raises or hangs): they wait for the next session and look
//! again. A member whose session expired while entering enters again with a
//! node of the new session.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;
use uuid::Uuid;
use zookeeper_client as zk;

use crate::error::{Error, Result};
use crate::options::{validate_identifier, validate_node_path, validate_path};
use crate::runtime;
use crate::session::{Live, Session};
use crate::znode::{ask, make_dirs, OnSession, Retry};

/// A barrier shared with kazoo's `Barrier` on the same path: up while its
/// node exists.
#[derive(Clone, Debug)]
pub struct Barrier {
    session: Session,
    path: String,
}

impl Barrier {
    /// A handle on the barrier at `path`; nothing is sent before a call.
    pub fn new(session: &Session, path: &str) -> Result<Barrier> {
        validate_path(path)?;
        Ok(Barrier { session: session.clone(), path: path.to_owned() })
    }

    /// The barrier's node.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Puts the barrier up (creates its node and missing parents); one
    /// already up is fine.
    pub async fn create(&self) -> Result<()> {
        self.session.retry(Retry::default(), || self.session.ensure_path(&self.path, None)).await
    }

    /// Takes the barrier down: `false` if it was not up. Its node must have
    /// no children ([`Error::NotEmpty`]). After a lost reply the retried
    /// delete may find the node gone by its own first try: `false` then too, as kazoo.
    pub async fn remove(&self) -> Result<bool> {
        match self.session.retry(Retry::default(), || self.session.delete(&self.path, None, false)).await {
            Ok(()) => Ok(true),
            Err(Error::NoNode { .. }) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// Waits until the barrier is down: `true` at once if it is not up,
    /// `false` if `timeout` passed first (the first look is made even with a
    /// zero timeout, as kazoo's `wait(0)`). Across a lost connection or a
    /// session expiry it waits for the next session and looks again.
    pub async fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        self.session.until_deadline(deadline, self.wait_until(deadline)).await.unwrap_or(Ok(false))
    }

    async fn wait_until(&self, deadline: Option<Instant>) -> Result<bool> {
        loop {
            let live = self.session.live().await?;
            match self.try_wait(&live, deadline).await? {
                OnSession::Done(down) => return Ok(down),
                OnSession::Ended => {
                    if !until(deadline, self.session.wait_past(live.generation)).await {
                        return Ok(false);
                    }
                }
            }
        }
    }

    async fn try_wait(&self, live: &Live, deadline: Option<Instant>) -> Result<OnSession<bool>> {
        loop {
            let watched = ask!(live, live.client.check_and_watch_stat(&self.path));
            let (stat, watcher) = watched.map_err(|err| Error::zk(&self.path, "watch", err))?;
            if stat.is_none() {
                return Ok(OnSession::Done(true));
            }
            let Some(event) = until_some(deadline, watcher.changed()).await else {
                return Ok(OnSession::Done(false));
            };
            match event.event_type {
                // Down, if only for a moment: a barrier put up again is the next round's.
                zk::EventType::NodeDeleted => return Ok(OnSession::Done(true)),
                zk::EventType::Session if event.session_state.is_terminated() => return Ok(OnSession::Ended),
                _ => {}
            }
        }
    }

    /// [`Barrier::create`] for callers without an async runtime.
    pub fn create_blocking(&self) -> Result<()> {
        runtime::block_on(self.create())
    }

    /// [`Barrier::remove`] for callers without an async runtime.
    pub fn remove_blocking(&self) -> Result<bool> {
        runtime::block_on(self.remove())
    }

    /// [`Barrier::wait`] for callers without an async runtime.
    pub fn wait_blocking(&self, timeout: Option<Duration>) -> Result<bool> {
        runtime::block_on(self.wait(timeout))
    }
}

/// Runs `wait` until `deadline` (`None`: no deadline); false if it came
/// first or `wait` said false.
async fn until(deadline: Option<Instant>, wait: impl std::future::Future<Output = bool>) -> bool {
    until_some(deadline, wait).await.unwrap_or(false)
}

async fn until_some<T>(deadline: Option<Instant>, wait: impl std::future::Future<Output = T>) -> Option<T> {
    match deadline {
        Some(deadline) => tokio::time::timeout_at(deadline, wait).await.ok(),
        None => Some(wait.await),
    }
}

/// A member of kazoo's `DoubleBarrier` on the same path: [`DoubleBarrier::enter`]
/// waits until `num_clients` members have entered, [`DoubleBarrier::leave`]
/// until every member has left. Clones are the same member.
#[derive(Clone)]
pub struct DoubleBarrier {
    inner: Arc<Member>,
}

impl std::fmt::Debug for DoubleBarrier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoubleBarrier")
            .field("path", &self.inner.path)
            .field("num_clients", &self.inner.num_clients)
            .finish_non_exhaustive()
    }
}

struct Member {
    session: Session,
    path: String,
    num_clients: u32,
    identifier: Vec<u8>,
    node_name: String,
    participating: AtomicBool,
}

impl DoubleBarrier {
    /// A member of the double barrier at `path` that waits for `num_clients`
    /// members; `identifier` is its node's data (kazoo's default is
    /// `"<fqdn>-<pid>"`, which the bindings give). Nothing is sent before `enter`.
    pub fn new(session: &Session, path: &str, num_clients: u32, identifier: impl Into<Vec<u8>>) -> Result<Self> {
        let node_name = Uuid::new_v4().simple().to_string();
        DoubleBarrier::with_node_name(session, path, num_clients, identifier, &node_name)
    }

    /// [`DoubleBarrier::new`] with the member's node name given rather
    /// than a fresh uuid4 hex: the same member across sessions or processes.
    pub fn with_node_name(
        session: &Session,
        path: &str,
        num_clients: u32,
        identifier: impl Into<Vec<u8>>,
        node_name: &str,
    ) -> Result<Self> {
        let identifier = identifier.into();
        DoubleBarrier::check(path, num_clients, &identifier, node_name)?;
        Ok(DoubleBarrier {
            inner: Arc::new(Member {
                session: session.clone(),
                path: path.to_owned(),
                num_clients,
                identifier,
                node_name: node_name.to_owned(),
                participating: AtomicBool::new(false),
            }),
        })
    }

    /// What [`DoubleBarrier::with_node_name`] refuses, for a binding that
    /// makes the member later (on the session of its first call).
    pub fn check(path: &str, num_clients: u32, identifier: &[u8], node_name: &str) -> Result<()> {
        validate_path(path)?;
        validate_identifier(identifier)?;
        if num_clients == 0 {
            return Err(Error::InvalidArgument("num_clients must be at least 1".into()));
        }
        if node_name.is_empty() || node_name.contains('/') || node_name == "ready" {
            return Err(Error::InvalidArgument(format!("not a member's node name: {node_name:?}")));
        }
        validate_node_path(&format!("{path}/{node_name}"))
    }

    /// The barrier's path.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// How many members `enter` waits for.
    pub fn num_clients(&self) -> u32 {
        self.inner.num_clients
    }

    /// This member's node name under the path (kazoo's `node_name`).
    pub fn node_name(&self) -> &str {
        &self.inner.node_name
    }

    /// This member's node (kazoo's `create_path`).
    pub fn create_path(&self) -> String {
        format!("{}/{}", self.inner.path, self.inner.node_name)
    }

    /// Whether it entered and has not left (kazoo's `participating`).
    pub fn participating(&self) -> bool {
        self.inner.participating.load(Ordering::Acquire)
    }

    /// Enters: creates this member's node and waits until `num_clients`
    /// members are in (or the barrier opened already). A failure removes the
    /// node; so does dropping the future before it entered (cancelling).
    pub async fn enter(&self) -> Result<()> {
        let member = &self.inner;
        let mut cleanup = Cleanup { member: Some(member.clone()) };
        let mut parent_made = false;
        loop {
            let live = member.session.live().await?;
            match member.try_enter(&live, &mut parent_made).await {
                Ok(OnSession::Done(())) => {
                    cleanup.member = None;
                    member.participating.store(true, Ordering::Release);
                    return Ok(());
                }
                Ok(OnSession::Ended) => {
                    member.session.wait_past(live.generation).await;
                }
                Err(err) => {
                    member.participating.store(false, Ordering::Release);
                    return Err(err);
                }
            }
        }
    }

    /// Leaves: deletes this member's node and waits until every member has
    /// left. Dropping the future (cancelling) still deletes the node.
    pub async fn leave(&self) -> Result<()> {
        let member = &self.inner;
        member.participating.store(false, Ordering::Release);
        let mut cleanup = Cleanup { member: Some(member.clone()) };
        loop {
            let live = member.session.live().await?;
            match member.try_leave(&live).await? {
                OnSession::Done(()) => {
                    cleanup.member = None;
                    return Ok(());
                }
                OnSession::Ended => {
                    member.session.wait_past(live.generation).await;
                }
            }
        }
    }

    /// [`DoubleBarrier::enter`] for callers without an async runtime.
    pub fn enter_blocking(&self) -> Result<()> {
        runtime::block_on(self.enter())
    }

    /// [`DoubleBarrier::leave`] for callers without an async runtime.
    pub fn leave_blocking(&self) -> Result<()> {
        runtime::block_on(self.leave())
    }
}

/// Deletes the member's node unless disarmed: an enter or leave that
/// failed or was dropped leaves no member behind.
struct Cleanup {
    member: Option<Arc<Member>>,
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if let Some(member) = self.member.take() {
            let session = member.session.clone();
            drop(session.spawn(async move {
                let node = format!("{}/{}", member.path, member.node_name);
                let delete = || member.session.delete(&node, None, false);
                let _ = member.session.retry(Retry::default(), delete).await;
            }));
        }
    }
}

impl Member {
    fn node(&self) -> String {
        format!("{}/{}", self.path, self.node_name)
    }

    fn ready(&self) -> String {
        format!("{}/ready", self.path)
    }

    /// kazoo's `_inner_enter` on one session.
    async fn try_enter(&self, live: &Live, parent_made: &mut bool) -> Result<OnSession<()>> {
        let acls = zk::Acls::new(&self.session.options().acls);
        let (persistent, ephemeral) =
            (zk::CreateMode::Persistent.with_acls(acls), zk::CreateMode::Ephemeral.with_acls(acls));
        let (node, ready) = (self.node(), self.ready());
        loop {
            if !*parent_made {
                ask!(live, make_dirs(&self.session, live, &self.path, &persistent))
                    .map_err(|err| Error::zk(&self.path, "create", err))?;
                *parent_made = true;
            }
            match ask!(live, live.client.create(&node, &self.identifier, &ephemeral)) {
                Ok(_) => {}
                // Ours from a try whose reply was lost, or one made for us by
                // hand (persistent: kazoo reuses it); another session's goes
                // with that session, and ours is made then.
                Err(zk::Error::NodeExists) => match ask!(live, live.client.check_and_watch_stat(&node)) {
                    Ok((Some(stat), watcher))
                        if stat.ephemeral_owner != 0 && stat.ephemeral_owner != live.session_id =>
                    {
                        let event = watcher.changed().await;
                        if event.event_type == zk::EventType::Session && event.session_state.is_terminated() {
                            return Ok(OnSession::Ended);
                        }
                        continue;
                    }
                    Ok((Some(_), _)) => {}
                    Ok((None, _)) => continue,
                    Err(err) => return Err(Error::zk(&node, "check", err)),
                },
                Err(zk::Error::NoNode) => {
                    *parent_made = false;
                    continue;
                }
                Err(err) => return Err(Error::zk(&node, "create", err)),
            }
            let watched = ask!(live, live.client.check_and_watch_stat(&ready));
            let (opened, watcher) = watched.map_err(|err| Error::zk(&ready, "watch", err))?;
            if opened.is_some() {
                return Ok(OnSession::Done(()));
            }
            let children = ask!(live, live.client.list_children(&self.path));
            let children = children.map_err(|err| Error::zk(&self.path, "list", err))?;
            if children.iter().filter(|c| *c != "ready").count() >= self.num_clients as usize {
                return match ask!(live, live.client.create(&ready, &[], &persistent)) {
                    Ok(_) | Err(zk::Error::NodeExists) => Ok(OnSession::Done(())),
                    Err(err) => Err(Error::zk(&ready, "create", err)),
                };
            }
            let event = watcher.changed().await;
            match event.event_type {
                zk::EventType::NodeCreated => return Ok(OnSession::Done(())),
                zk::EventType::Session if event.session_state.is_terminated() => return Ok(OnSession::Ended),
                // Look again: at our node (an operator may have deleted it) and the ready node.
                _ => {}
            }
        }
    }

    /// kazoo's `_inner_leave` on one session.
    async fn try_leave(&self, live: &Live) -> Result<OnSession<()>> {
        let (node, ready) = (self.node(), self.ready());
        loop {
            match ask!(live, live.client.delete(&ready, None)) {
                Ok(()) | Err(zk::Error::NoNode) => {}
                Err(err) => return Err(Error::zk(&ready, "delete", err)),
            }
            let mut members = match ask!(live, live.client.list_children(&self.path)) {
                Ok(children) => children,
                Err(zk::Error::NoNode) => return Ok(OnSession::Done(())),
                Err(err) => return Err(Error::zk(&self.path, "list", err)),
            };
            // A late member's `enter` may have opened the barrier again.
            members.retain(|c| c != "ready");
            members.sort();
            let Some(lowest) = members.first() else {
                return Ok(OnSession::Done(()));
            };
            let last = members.len() == 1 && *lowest == self.node_name;
            // The lowest waits for the highest; the others go, then wait for the lowest.
            let awaited = if *lowest == self.node_name && !last {
                members.last().expect("two or more")
            } else {
                match ask!(live, live.client.delete(&node, None)) {
                    // Gone already: a delete whose reply was lost, or our session expired since.
                    Ok(()) | Err(zk::Error::NoNode) => {}
                    Err(err) => return Err(Error::zk(&node, "delete", err)),
                }
                if last {
                    return Ok(OnSession::Done(()));
                }
                lowest
            };
            let awaited = format!("{}/{awaited}", self.path);
            let watched = ask!(live, live.client.check_and_watch_stat(&awaited));
            let (stat, watcher) = watched.map_err(|err| Error::zk(&awaited, "watch", err))?;
            if stat.is_none() {
                continue;
            }
            let event = watcher.changed().await;
            if event.event_type == zk::EventType::Session && event.session_state.is_terminated() {
                return Ok(OnSession::Ended);
            }
        }
    }
}

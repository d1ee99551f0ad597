//! kazoo's `Party` and `ShallowParty`, node for node, so that kazoo
//! clients take part on the same path: each member is an ephemeral child
//! of the party's path, `<uuid4 hex>__party__` holding the identifier
//! (`Party`), or `<uuid4 hex>-<identifier>` (`ShallowParty`, whose
//! members are listed in one request).
//!
//! Unlike kazoo's, a member stays one across a session expiry: its node,
//! gone with the expired session, is created again on the next one until
//! it leaves (kazoo's says it participates while its node is gone).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Weak};

use tokio::sync::Mutex;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::options::{validate_identifier, validate_node_path, validate_path};
use crate::runtime;
use crate::session::{detached_span, Session};
use crate::znode::{create_kept, Retry};

/// A member of a kazoo `Party` (or, made by [`Party::shallow`], a
/// `ShallowParty`) on the same path. Clones are the same member.
#[derive(Clone)]
pub struct Party {
    inner: Arc<Member>,
}

impl std::fmt::Debug for Party {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Party").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

struct Member {
    session: Session,
    path: String,
    identifier: String,
    node: String,
    shallow: bool,
    /// Set and cleared with `rejoin` held: joins, leaves and rejoins go one at a time.
    participating: AtomicBool,
    /// Creates the node again on each new session while participating.
    rejoin: Mutex<Option<JoinHandle<()>>>,
}

impl Party {
    /// A member of kazoo's `Party` at `path`: its node `<uuid4 hex>__party__`
    /// holds `identifier`. Nothing is sent before `join`.
    pub fn new(session: &Session, path: &str, identifier: &str) -> Result<Party> {
        let node = format!("{}__party__", Uuid::new_v4().simple());
        Party::member(session, path, identifier, node, false)
    }

    /// A member of kazoo's `ShallowParty` at `path`: the identifier is in
    /// the node's name, `<uuid4 hex>-<identifier>`, so it must be a valid
    /// node name (no '/'). Listing the members takes one request.
    pub fn shallow(session: &Session, path: &str, identifier: &str) -> Result<Party> {
        let node = format!("{}-{identifier}", Uuid::new_v4().simple());
        Party::member(session, path, identifier, node, true)
    }

    fn member(session: &Session, path: &str, identifier: &str, node: String, shallow: bool) -> Result<Party> {
        validate_path(path)?;
        validate_identifier(identifier.as_bytes())?;
        validate_node_path(&format!("{path}/{node}"))?;
        if shallow && identifier.contains('/') {
            return Err(Error::InvalidArgument(format!(
                "a ShallowParty identifier is part of a node name and cannot contain '/': {identifier:?}"
            )));
        }
        Ok(Party {
            inner: Arc::new(Member {
                session: session.clone(),
                path: path.to_owned(),
                identifier: identifier.to_owned(),
                node,
                shallow,
                participating: AtomicBool::new(false),
                rejoin: Mutex::new(None),
            }),
        })
    }

    /// The party's path.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// This member's identifier.
    pub fn identifier(&self) -> &str {
        &self.inner.identifier
    }

    /// This member's node name under the path (kazoo's `node`).
    pub fn node(&self) -> &str {
        &self.inner.node
    }

    /// This member's node (kazoo's `create_path`).
    pub fn create_path(&self) -> String {
        format!("{}/{}", self.inner.path, self.inner.node)
    }

    /// Whether [`ShallowParty`](Party::shallow)'s layout.
    pub fn is_shallow(&self) -> bool {
        self.inner.shallow
    }

    /// Whether it joined and has not left (kazoo's `participating`).
    pub fn participating(&self) -> bool {
        self.inner.participating.load(Ordering::Acquire)
    }

    /// Joins: creates this member's node (and the party's path). A node
    /// already there is taken as this member's (kazoo's: a join whose reply
    /// was lost). Until [`Party::leave`], the node is made again after each
    /// session expiry.
    pub async fn join(&self) -> Result<()> {
        let member = &self.inner;
        let mut rejoin = member.rejoin.lock().await;
        let session = member.session.clone();
        let generation = session.retry(Retry::default(), || member.create()).await?;
        member.participating.store(true, Ordering::Release);
        if rejoin.as_ref().is_none_or(|task| task.is_finished()) {
            // Until the leave: a span of its own, not the joiner's.
            let span = detached_span(tracing::info_span!(parent: None, "party", path = %member.path));
            *rejoin = Some(session.spawn_in(span, rejoin_after(Arc::downgrade(member), session.clone(), generation)));
        }
        Ok(())
    }

    /// Leaves: deletes this member's node; `false` if it was not there.
    pub async fn leave(&self) -> Result<bool> {
        let member = &self.inner;
        // Not aborted: a rejoin's create may be on its way; the task sees
        // the leave and removes what it made (see `rejoin_after`).
        let _one_at_a_time = member.rejoin.lock().await;
        member.participating.store(false, Ordering::Release);
        let node = self.create_path();
        let delete = || member.session.delete(&node, None, false);
        match member.session.retry(Retry::default(), delete).await {
            Ok(()) => Ok(true),
            Err(Error::NoNode { .. }) => Ok(false),
            Err(err) => Err(err),
        }
    }

    /// The members' identifiers, in no particular order: the nodes' data
    /// (`Party`), or the part of their names after the first '-' (`ShallowParty`).
    pub async fn members(&self) -> Result<Vec<String>> {
        let member = &self.inner;
        let children = member.children().await?;
        if member.shallow {
            return Ok(children.iter().map(|c| c[c.find('-').map_or(0, |at| at + 1)..].to_owned()).collect());
        }
        let mut identifiers = Vec::with_capacity(children.len());
        for child in children {
            let node = format!("{}/{child}", member.path);
            match member.session.retry(Retry::default(), || member.session.get(&node)).await {
                Ok((data, _)) => {
                    identifiers.push(String::from_utf8_lossy(data.as_deref().unwrap_or_default()).into_owned())
                }
                Err(Error::NoNode { .. }) => {}
                Err(err) => return Err(err),
            }
        }
        Ok(identifiers)
    }

    /// How many members there are.
    pub async fn len(&self) -> Result<usize> {
        Ok(self.inner.children().await?.len())
    }

    /// Whether there are no members.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// [`Party::join`] for callers without an async runtime.
    pub fn join_blocking(&self) -> Result<()> {
        runtime::block_on(self.join())
    }

    /// [`Party::leave`] for callers without an async runtime.
    pub fn leave_blocking(&self) -> Result<bool> {
        runtime::block_on(self.leave())
    }

    /// [`Party::members`] for callers without an async runtime.
    pub fn members_blocking(&self) -> Result<Vec<String>> {
        runtime::block_on(self.members())
    }

    /// [`Party::len`] for callers without an async runtime.
    pub fn len_blocking(&self) -> Result<usize> {
        runtime::block_on(self.len())
    }
}

impl Member {
    /// Creates the node on the live session; the generation it is on.
    async fn create(&self) -> Result<u64> {
        create_kept(&self.session, &self.path, &self.node, self.identifier.as_bytes(), true).await
    }

    /// The member nodes among the path's children (a `Party` skips others).
    async fn children(&self) -> Result<Vec<String>> {
        let list = || self.session.children(&self.path);
        let mut children = match self.session.retry(Retry::default(), list).await {
            Ok(children) => children,
            Err(Error::NoNode { .. }) => Vec::new(),
            Err(err) => return Err(err),
        };
        if !self.shallow {
            children.retain(|c| c.contains("__party__"));
        }
        Ok(children)
    }
}

/// Makes the member's node again on every session after `generation`,
/// while it participates; ends when the member leaves or is dropped, or
/// the session closes. The create, retried for as long as the server is
/// away, runs without `rejoin` held, so that a leave never waits behind it;
/// a leave meanwhile is seen after it, with `rejoin` held, and the node goes.
async fn rejoin_after(member: Weak<Member>, session: Session, mut generation: u64) {
    while session.wait_past(generation).await {
        let Some(member) = member.upgrade() else { return };
        let participating = || member.participating.load(Ordering::Acquire);
        let create = || async {
            if !participating() {
                return Ok(None);
            }
            member.create().await.map(Some)
        };
        let made = session.retry(Retry { max_tries: u32::MAX, deadline: None }, create).await;
        let _one_at_a_time = member.rejoin.lock().await;
        match made {
            Ok(Some(now)) if participating() => generation = now,
            Ok(Some(_)) => {
                let node = format!("{}/{}", member.path, member.node);
                let _ = session.retry(Retry::default(), || session.delete(&node, None, false)).await;
                return;
            }
            Ok(None) | Err(_) => return,
        }
    }
}

//! The ZooKeeper operations on the session's one session (kazoo's
//! `KazooClient.get`, `set`, `create`, …): locks and plain znodes share it,
//! and each call uses the client of the session's current generation, so
//! the calls go on working after an expiry, as the recipes do.
//! [`transaction`] is kazoo's `TransactionRequest`, [`retry`] its `KazooRetry`.

mod acl;
mod four_letter;
mod kept;
mod reconfig;
mod retry;
mod transaction;

use zookeeper_client as zk;

use crate::error::{Error, Result};
use crate::naming::parent_of;
use crate::options::{validate_node_path, ConnectString, MAX_IDENTIFIER_BYTES};
use crate::runtime;
use crate::session::{Live, Session};
use crate::Acl;
pub use acl::{permission_bits, permission_from_bits};
pub use four_letter::parse_version;
pub(crate) use kept::create_kept;
pub use retry::Retry;
pub(crate) use transaction::FencedNode;
pub use transaction::{OpResult, Transaction};

/// A node's metadata (ZooKeeper's `Stat`, kazoo's `ZnodeStat`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stat {
    /// The zxid of the transaction that created the node.
    pub czxid: i64,
    /// The zxid of the transaction that last changed its data.
    pub mzxid: i64,
    /// The zxid of the transaction that last changed its children.
    pub pzxid: i64,
    /// Creation time, milliseconds since the epoch.
    pub ctime: i64,
    /// Last data change, milliseconds since the epoch.
    pub mtime: i64,
    /// Changes to its data: the version a conditional `set` or `delete` names.
    pub version: i32,
    /// Changes to its children.
    pub cversion: i32,
    /// Changes to its ACL.
    pub aversion: i32,
    /// The session owning an ephemeral node; 0 for a persistent one.
    pub ephemeral_owner: i64,
    /// The length of its data.
    pub data_length: i32,
    /// How many children it has.
    pub num_children: i32,
}

impl From<&zk::Stat> for Stat {
    fn from(s: &zk::Stat) -> Stat {
        Stat {
            czxid: s.czxid,
            mzxid: s.mzxid,
            pzxid: s.pzxid,
            ctime: s.ctime,
            mtime: s.mtime,
            version: s.version,
            cversion: s.cversion,
            aversion: s.aversion,
            ephemeral_owner: s.ephemeral_owner,
            data_length: s.data_length,
            num_children: s.num_children,
        }
    }
}

/// How to create a node (kazoo's `create` arguments): persistent, not
/// sequential, parents required, the session's ACL, unless said otherwise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Create {
    /// Deleted by the server when the session that created it ends.
    pub ephemeral: bool,
    /// The server appends a 10-digit sequence number to the name.
    pub sequence: bool,
    /// Creates missing parents, persistent and with the same ACL (kazoo's `makepath`).
    pub makepath: bool,
    /// The node's ACL; `None`: [`SessionOptions::acls`](crate::SessionOptions::acls).
    pub acls: Option<Vec<Acl>>,
}

impl Create {
    /// An ephemeral node: gone with the session.
    pub fn ephemeral(self) -> Create {
        Create { ephemeral: true, ..self }
    }

    /// A sequential node: the server appends a 10-digit counter.
    pub fn sequence(self) -> Create {
        Create { sequence: true, ..self }
    }

    /// Creates missing ancestors (empty, persistent) too.
    pub fn makepath(self) -> Create {
        Create { makepath: true, ..self }
    }

    /// The node's ACL (the session's default otherwise).
    pub fn acls(self, acls: Vec<Acl>) -> Create {
        Create { acls: Some(acls), ..self }
    }

    fn mode(&self) -> zk::CreateMode {
        match (self.ephemeral, self.sequence) {
            (false, false) => zk::CreateMode::Persistent,
            (false, true) => zk::CreateMode::PersistentSequential,
            (true, false) => zk::CreateMode::Ephemeral,
            (true, true) => zk::CreateMode::EphemeralSequential,
        }
    }
}

/// Checks a path and, for a sequential create, allows the trailing '/'
/// ZooKeeper allows there (`/queue/` creates `/queue/0000000007`).
pub(super) fn check_create_path(path: &str, sequence: bool) -> Result<()> {
    match path.strip_suffix('/') {
        Some(parent) if sequence && !parent.is_empty() => {
            validate_node_path(&format!("{parent}/x")).map_err(|_| invalid_path(path))
        }
        _ if path == "/" => {
            Err(Error::InvalidPath { path: path.to_owned(), reason: "the root exists and cannot be created" })
        }
        _ => validate_node_path(path),
    }
}

fn invalid_path(path: &str) -> Error {
    match validate_node_path(path) {
        Err(err) => err,
        Ok(()) => Error::InvalidPath { path: path.to_owned(), reason: "not a valid node path" },
    }
}

/// Node data: at most [`MAX_IDENTIFIER_BYTES`]. A bigger packet than the
/// server's `jute.maxbuffer` makes it drop the connection, and a request
/// sent again after every reconnect would never end. `None` (null) always fits.
pub(crate) fn check_data(data: Option<&[u8]>) -> Result<()> {
    let data = data.unwrap_or_default();
    if data.len() > MAX_IDENTIFIER_BYTES {
        return Err(Error::InvalidArgument(format!(
            "node data is {} bytes; at most {MAX_IDENTIFIER_BYTES} fit in a znode",
            data.len()
        )));
    }
    Ok(())
}

/// A version a conditional write may name: `None` or -1 is any version.
pub(super) fn check_version(version: Option<i32>) -> Result<Option<i32>> {
    match version {
        Some(v) if v < -1 => Err(Error::InvalidArgument(format!("version must be -1 (any) or at least 0, got {v}"))),
        Some(-1) | None => Ok(None),
        Some(v) => Ok(Some(v)),
    }
}

/// `mkdir -p` of `path` for the session, creating a missing chroot too when
/// [`SessionOptions::create_chroot`](crate::SessionOptions::create_chroot)
/// asks for it (kazoo's behaviour). The one place where parents are made,
/// for the recipes and the znode API alike. The root ("/", or "" for a
/// top-level node's parent) is the chroot: made if asked, never refused here.
pub(crate) async fn make_dirs(
    session: &Session,
    live: &Live,
    path: &str,
    options: &zk::CreateOptions<'_>,
) -> std::result::Result<(), zk::Error> {
    let make_chroot = || async {
        match ConnectString::parse(&session.options().connect) {
            Ok(ConnectString { chroot: Some(chroot), .. }) if session.options().create_chroot => {
                let root = live.client.clone().chroot("/").map_err(|_| zk::Error::NoNode)?;
                root.mkdir(&chroot, options).await
            }
            _ => Err(zk::Error::NoNode),
        }
    };
    if path.is_empty() || path == "/" {
        return match make_chroot().await {
            Err(zk::Error::NoNode) => Ok(()),
            done => done,
        };
    }
    match live.client.mkdir(path, options).await {
        // The client answers NoNode from `mkdir` only when even the chroot is missing.
        Err(zk::Error::NoNode) => {
            make_chroot().await?;
            live.client.mkdir(path, options).await
        }
        other => other,
    }
}

/// How a recipe's step on one session ends: done, or the session ended
/// under it (go on with the next one, [`Session::wait_past`]).
pub(crate) enum OnSession<T> {
    Done(T),
    Ended,
}

/// A request of a recipe's step on one session (inside the step's loop):
/// its answer; or, if the connection dropped under it, `continue` — the
/// step asks again, queued by the client until it reconnects; or, if the
/// session is over, `return Ok(OnSession::Ended)`.
macro_rules! ask {
    ($live:expr, $request:expr) => {
        match $request.await {
            Err(err) if $crate::error::connection_lost(&err) && !$live.client.state().is_terminated() => continue,
            Err(err)
                if $crate::error::connection_lost(&err)
                    || matches!(
                        err,
                        zookeeper_client::Error::SessionExpired | zookeeper_client::Error::ClientClosed
                    ) =>
            {
                return Ok($crate::znode::OnSession::Ended)
            }
            answered => answered,
        }
    };
}
pub(crate) use ask;

/// The znode API: kazoo's `KazooClient` operations, on this session.
///
/// Node data is an `Option`: `None` is ZooKeeper's null data (kazoo's and
/// Java's `None`/`null`, length -1 on the wire), which the server keeps
/// apart from empty data (`Some(b"")`); what a write sends, a read returns.
///
/// Paths are absolute, below the connect string's chroot; each is checked
/// before any network call ([`validate_node_path`]). A call waits at most the
/// session timeout for an answer (then [`Error::ConnectionLoss`]), and
/// replies are zoolock's kinds: [`Error::NoNode`], [`Error::NodeExists`],
/// [`Error::BadVersion`], [`Error::NotEmpty`], [`Error::NoAuth`], …
impl Session {
    /// The node's stat, `None` if there is no such node.
    pub async fn exists(&self, path: &str) -> Result<Option<Stat>> {
        validate_node_path(path)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.check_stat(path);
            drop(turn);
            let stat = reply.await.map_err(|e| Error::zk(path, "check", e))?;
            Ok(stat.as_ref().map(Stat::from))
        })
        .await
    }

    /// The node's data (`None`: null) and stat; [`Error::NoNode`] if there is none.
    pub async fn get(&self, path: &str) -> Result<(Option<Vec<u8>>, Stat)> {
        validate_node_path(path)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.get_data_nullable(path);
            drop(turn);
            let (data, stat) = reply.await.map_err(|e| Error::zk(path, "read", e))?;
            Ok((data, Stat::from(&stat)))
        })
        .await
    }

    /// Replaces the node's data (`None`: null) if it is at `version` (`None`:
    /// any), returning its new stat; [`Error::BadVersion`] if it changed, [`Error::NoNode`].
    pub async fn set(&self, path: &str, data: Option<&[u8]>, version: Option<i32>) -> Result<Stat> {
        validate_node_path(path)?;
        check_data(data)?;
        let version = check_version(version)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.set_data_nullable(path, data, version);
            drop(turn);
            let stat = reply.await.map_err(|e| Error::zk(path, "set", e))?;
            Ok(Stat::from(&stat))
        })
        .await
    }

    /// Creates a node with `data` (`None`: null), returning its path (with the
    /// sequence number, if sequential) and stat. [`Error::NodeExists`];
    /// [`Error::NoNode`] if its parent is missing and `makepath` is off.
    pub async fn create(&self, path: &str, data: Option<&[u8]>, options: &Create) -> Result<(String, Stat)> {
        check_create_path(path, options.sequence)?;
        check_data(data)?;
        let acls = options.acls.as_deref().unwrap_or(&self.options().acls);
        if acls.is_empty() {
            return Err(Error::InvalidArgument("a node needs at least one ACL".into()));
        }
        let mode = options.mode().with_acls(zk::Acls::new(acls));
        self.bounded(async {
            let (live, mut turn) = self.live_in_turn().await?;
            // Parents are made once: a create that still misses its parent
            // after that (deleted meanwhile, or a chroot not to be created) fails.
            let mut makepath = options.makepath;
            loop {
                let reply = live.client.create_nullable(path, data, &mode);
                turn.take();
                let created = reply.await;
                return match created {
                    Ok((stat, sequence)) => {
                        let created = if options.sequence { format!("{path}{sequence}") } else { path.to_owned() };
                        Ok((created, Stat::from(&stat)))
                    }
                    Err(zk::Error::NoNode) if makepath => {
                        makepath = false;
                        let parents = zk::CreateMode::Persistent.with_acls(zk::Acls::new(acls));
                        // A sequential create under "/queue/" makes a child of "/queue".
                        let parent = path.strip_suffix('/').unwrap_or_else(|| parent_of(path));
                        make_dirs(self, &live, parent, &parents).await.map_err(|e| Error::zk(parent, "create", e))?;
                        continue;
                    }
                    Err(err) => Err(Error::zk(path, "create", err)),
                };
            }
        })
        .await
    }

    /// Deletes the node if it is at `version` (`None`: any). `recursive`
    /// deletes its descendants first, as kazoo does: not atomically (a
    /// child created meanwhile makes it fail with [`Error::NotEmpty`]), and
    /// a node already gone is no error.
    pub async fn delete(&self, path: &str, version: Option<i32>, recursive: bool) -> Result<()> {
        validate_node_path(path)?;
        let version = check_version(version)?;
        if path == "/" && !recursive {
            return Err(Error::InvalidPath { path: path.to_owned(), reason: "the root cannot be deleted" });
        }
        if !recursive {
            return self
                .bounded(async {
                    let (live, turn) = self.live_in_turn().await?;
                    let reply = live.client.delete(path, version);
                    drop(turn);
                    reply.await.map_err(|e| Error::zk(path, "delete", e))
                })
                .await;
        }
        // Depth first, one request at a time: each bounded on its own.
        let mut stack = vec![(path.to_owned(), false)];
        while let Some((node, listed)) = stack.pop() {
            if !listed {
                let children = match self.children(&node).await {
                    Ok(children) => children,
                    Err(Error::NoNode { .. }) => continue,
                    Err(err) => return Err(err),
                };
                stack.push((node.clone(), true));
                let base = if node == "/" { "" } else { node.as_str() };
                stack.extend(
                    children
                        .into_iter()
                        .filter(|c| node != "/" || c != "zookeeper")
                        .map(|c| (format!("{base}/{c}"), false)),
                );
                continue;
            }
            if node == "/" {
                continue;
            }
            let version = if node == path { version } else { None };
            let deleted = self
                .bounded(async {
                    let (live, turn) = self.live_in_turn().await?;
                    let reply = live.client.delete(&node, version);
                    drop(turn);
                    reply.await.map_err(|e| Error::zk(&node, "delete", e))
                })
                .await;
            match deleted {
                Ok(()) => {}
                Err(Error::NoNode { .. }) if node != path => {}
                Err(Error::NoNode { .. }) => return Ok(()),
                Err(err) => return Err(err),
            }
        }
        Ok(())
    }

    /// The names of the node's children, unsorted (as the server lists them).
    pub async fn children(&self, path: &str) -> Result<Vec<String>> {
        validate_node_path(path)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.list_children(path);
            drop(turn);
            reply.await.map_err(|e| Error::zk(path, "list", e))
        })
        .await
    }

    /// The children and the node's stat (kazoo's `include_data=True`).
    pub async fn children_and_stat(&self, path: &str) -> Result<(Vec<String>, Stat)> {
        validate_node_path(path)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.get_children(path);
            drop(turn);
            let (children, stat) = reply.await.map_err(|e| Error::zk(path, "list", e))?;
            Ok((children, Stat::from(&stat)))
        })
        .await
    }

    /// Creates the node and its missing ancestors, empty and persistent
    /// with the session's ACL (`acls`: another one); a node already there is
    /// fine. With [`SessionOptions::create_chroot`](crate::SessionOptions::create_chroot),
    /// a missing chroot too.
    pub async fn ensure_path(&self, path: &str, acls: Option<&[Acl]>) -> Result<()> {
        validate_node_path(path)?;
        let acls = acls.unwrap_or(&self.options().acls);
        if acls.is_empty() {
            return Err(Error::InvalidArgument("a node needs at least one ACL".into()));
        }
        let mode = zk::CreateMode::Persistent.with_acls(zk::Acls::new(acls));
        self.bounded(async {
            // A turn waited for is kept to the end: the parents come one by one.
            let (live, _turn) = self.live_in_turn().await?;
            make_dirs(self, &live, path, &mode).await.map_err(|e| Error::zk(path, "create", e))
        })
        .await
    }

    /// Waits until the server this session talks to has seen every write
    /// committed before the call (ZooKeeper's `sync`), so a read after it
    /// sees them.
    pub async fn sync(&self, path: &str) -> Result<()> {
        validate_node_path(path)?;
        self.bounded(async {
            let (live, turn) = self.live_in_turn().await?;
            let reply = live.client.sync(path);
            drop(turn);
            reply.await.map_err(|e| Error::zk(path, "sync", e))
        })
        .await
    }

    /// A transaction on this session ([`Transaction`]).
    pub fn transaction(&self) -> Transaction {
        Transaction::new(self)
    }

    /// [`Session::exists`] for callers without an async runtime.
    pub fn exists_blocking(&self, path: &str) -> Result<Option<Stat>> {
        runtime::block_on(self.exists(path))
    }

    /// [`Session::get`] for callers without an async runtime.
    pub fn get_blocking(&self, path: &str) -> Result<(Option<Vec<u8>>, Stat)> {
        runtime::block_on(self.get(path))
    }

    /// [`Session::set`] for callers without an async runtime.
    pub fn set_blocking(&self, path: &str, data: Option<&[u8]>, version: Option<i32>) -> Result<Stat> {
        runtime::block_on(self.set(path, data, version))
    }

    /// [`Session::create`] for callers without an async runtime.
    pub fn create_blocking(&self, path: &str, data: Option<&[u8]>, options: &Create) -> Result<(String, Stat)> {
        runtime::block_on(self.create(path, data, options))
    }

    /// [`Session::delete`] for callers without an async runtime.
    pub fn delete_blocking(&self, path: &str, version: Option<i32>, recursive: bool) -> Result<()> {
        runtime::block_on(self.delete(path, version, recursive))
    }

    /// [`Session::children`] for callers without an async runtime.
    pub fn children_blocking(&self, path: &str) -> Result<Vec<String>> {
        runtime::block_on(self.children(path))
    }

    /// [`Session::children_and_stat`] for callers without an async runtime.
    pub fn children_and_stat_blocking(&self, path: &str) -> Result<(Vec<String>, Stat)> {
        runtime::block_on(self.children_and_stat(path))
    }

    /// [`Session::ensure_path`] for callers without an async runtime.
    pub fn ensure_path_blocking(&self, path: &str, acls: Option<&[Acl]>) -> Result<()> {
        runtime::block_on(self.ensure_path(path, acls))
    }

    /// [`Session::sync`] for callers without an async runtime.
    pub fn sync_blocking(&self, path: &str) -> Result<()> {
        runtime::block_on(self.sync(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments_are_checked_before_any_request() {
        assert_eq!(check_version(None).unwrap(), None);
        assert_eq!(check_version(Some(-1)).unwrap(), None);
        assert_eq!(check_version(Some(3)).unwrap(), Some(3));
        assert!(matches!(check_version(Some(-2)), Err(Error::InvalidArgument(_))));
        assert!(check_create_path("/queue/", true).is_ok());
        assert!(matches!(check_create_path("/queue/", false), Err(Error::InvalidPath { .. })));
        assert!(matches!(check_create_path("/", false), Err(Error::InvalidPath { .. })));
        assert!(matches!(check_create_path("//", true), Err(Error::InvalidPath { .. })));
        assert!(matches!(check_data(Some(&vec![0; MAX_IDENTIFIER_BYTES + 1])), Err(Error::InvalidArgument(_))));
    }
}

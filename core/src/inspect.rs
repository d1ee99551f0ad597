//! What an operator asks of a lock path: who holds it, since when, who
//! waits, in which order — without a handle, from the path alone.
//!
//! A lock path's contenders are its children with a peer's marker (see
//! [`naming`]); a kazoo semaphore's path holds its size as data, its leases
//! as children, and its waiters queue on the admission lock at
//! `path + "-__lock__"`.
//!
//! A path is read as a semaphore only when it has no lock contenders, its
//! admission lock exists (kazoo and zoolock create it before the first
//! lease), and every child is named as a lease is (`uuid4().hex`: 32
//! lowercase hex digits). The data is no sign: kazoo accepts a pool node
//! whose data is not a number, and a plain node may hold a number.

use std::time::{Duration, SystemTime};

use zookeeper_client as zk;

use crate::codes::codes;
use crate::error::{Error, Result};
use crate::mirror::{DataWatchMark, Mirrors};
use crate::naming::{self, Family, Role, Scheme};
use crate::options::validate_path;
use crate::session::{Live, Session};

/// What a participant holds or waits for, as its node's name tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParticipantKind {
    /// An exclusive node: a mutex's, or a kazoo write lock's (kazoo names
    /// both `__lock__`, so they cannot be told apart).
    Lock,
    /// A read lock's node (`__rlock__`, Curator's `__READ__`).
    Read,
    /// A Curator write lock's node (`__WRIT__`).
    Write,
    /// A semaphore lease, or a wait for one.
    Lease,
}

/// One holder or waiter on a path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Participant {
    /// The node's full path.
    pub node: String,
    /// What its node name says it is.
    pub kind: ParticipantKind,
    /// Whether it holds the lock (or a lease) now; otherwise it waits.
    pub holds: bool,
    /// The node's data as text (kazoo's identifier; Curator's default is the client's IP).
    pub identifier: String,
    /// The ZooKeeper session owning the node (its `ephemeralOwner`; 0 for a persistent node).
    pub session_id: i64,
    /// Whose naming the node follows: `Kazoo` for kazoo and zoolock's default
    /// (the names are the same), `Curator` for Curator and zoolock's Curator
    /// scheme; `None` for other markers.
    pub scheme: Option<Scheme>,
    /// When the node was created, by the server's clock (its `ctime`).
    pub created: SystemTime,
    /// The zxid that created the node (its `czxid`): the holder's fencing token.
    pub fencing_token: i64,
}

/// The holders, then the waiters, of the lock or semaphore at `path`, in
/// queue order (leases in creation order). Empty if nothing is there.
///
/// ```
/// use zoolock::{inspect, Acquire, Holder, Lock, LockConfig, Kind, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # let connect = zk_harness::shared().connect_string();
/// let session = Session::connect_blocking(SessionOptions::new(connect))?;
/// let config = LockConfig { identifier: b"billing".to_vec(), ..LockConfig::default() };
/// let lock = Lock::new(&session, "/locks/inspected", Kind::Mutex, config)?;
/// lock.acquire_blocking(Acquire::default())?;
/// let seen = zoolock::runtime::block_on(inspect(&session, "/locks/inspected"))?;
/// assert_eq!(seen.len(), 1);
/// assert!(seen[0].holds && seen[0].identifier == "billing");
/// assert_eq!(Some(seen[0].fencing_token), lock.fencing_token());
/// # Ok(()) }
/// ```
pub async fn inspect(session: &Session, path: &str) -> Result<Vec<Participant>> {
    validate_path(path)?;
    let reading = session.bounded(read_again(session, path, false)).await?;
    Ok(reading.participants)
}

/// [`inspect`] again each time the participants may have changed, on
/// ZooKeeper watches (children of the path and of a semaphore's admission
/// lock, or their creation).
pub struct Inspector {
    session: Session,
    path: String,
    watches: Option<[Watch; 2]>,
    exists: bool,
}

impl std::fmt::Debug for Inspector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Inspector").field("path", &self.path).finish_non_exhaustive()
    }
}

impl Inspector {
    /// An inspector of `path`; nothing is read before [`Inspector::next`].
    pub fn new(session: &Session, path: &str) -> Result<Inspector> {
        validate_path(path)?;
        Ok(Inspector { session: session.clone(), path: path.to_owned(), watches: None, exists: false })
    }

    /// The participants now at the first call; at each later one, once
    /// something changed since the previous answer (or the session was
    /// replaced). May answer with the same list when a change was undone.
    pub async fn next(&mut self) -> Result<Vec<Participant>> {
        if let Some([a, b]) = self.watches.take() {
            tokio::select! {
                _ = a.0.changed() => {}
                _ = b.0.changed() => {}
            }
        }
        let reading = read_again(&self.session, &self.path, true).await?;
        self.watches = reading.watches;
        self.exists = reading.exists;
        Ok(reading.participants)
    }

    /// Whether the path existed at the last answer of [`Inspector::next`]
    /// (a mistyped path is empty too; operators' tools tell them apart).
    pub fn exists(&self) -> bool {
        self.exists
    }
}

/// One reading of a path.
struct Reading {
    participants: Vec<Participant>,
    exists: bool,
    watches: Option<[Watch; 2]>,
}

/// [`read`], again after a connection loss or on the next session.
async fn read_again(session: &Session, path: &str, watch: bool) -> Result<Reading> {
    loop {
        let live = session.live().await?;
        match read(session, &live, path, watch).await {
            Err(Error::ConnectionLoss(_) | Error::SessionExpired { .. }) => continue,
            read => return read,
        }
    }
}

/// A watch on the children of a node, or on its creation while it is
/// absent, with the mark of that data watch (dropped after the watcher).
type Watch = (zk::OneshotWatcher, Option<DataWatchMark>);

/// The admission lock of a kazoo semaphore at `path`.
fn admission_path(path: &str) -> String {
    format!("{path}-__lock__")
}

/// Reads the participants at `path` (and the watches, if asked): the
/// listings and the path's data are pipelined, then every node is read in
/// one multi-read.
async fn read(session: &Session, live: &Live, path: &str, watch: bool) -> Result<Reading> {
    let admission = admission_path(path);
    let data = live.client.get_data(path);
    let (children, waiting, watches) = if watch {
        let ((children, a), (waiting, b)) =
            (watched_children(session, live, path).await?, watched_children(session, live, &admission).await?);
        (children, waiting, Some([a, b]))
    } else {
        let (children, waiting) = (live.client.list_children(path), live.client.list_children(&admission));
        (absent(path, children.await)?, absent(&admission, waiting.await)?, None)
    };
    let exists = match data.await {
        Ok(_) => true,
        Err(zk::Error::NoNode) => false,
        Err(err) => return Err(Error::zk(path, "read", err)),
    };
    let children = children.unwrap_or_default();
    let queue = naming::queue(&children, &[]);
    let is_semaphore = queue.is_empty() && waiting.is_some() && children.iter().all(|c| is_lease_name(c));
    let waiting = waiting.unwrap_or_default();
    let participants = if is_semaphore {
        let leases: Vec<String> = children.iter().map(|c| format!("{path}/{c}")).collect();
        let mut holders = read_nodes(live, &leases).await?;
        holders.sort_by_key(|(_, stat, _)| stat.czxid);
        let queue = naming::queue(&waiting, &[]);
        let waiters: Vec<String> = queue.iter().map(|c| format!("{admission}/{}", c.name)).collect();
        let waiters = read_nodes(live, &waiters).await?;
        let holders =
            holders.into_iter().map(|(node, stat, data)| participant(node, ParticipantKind::Lease, true, stat, data));
        let waiters =
            waiters.into_iter().map(|(node, stat, data)| participant(node, ParticipantKind::Lease, false, stat, data));
        holders.chain(waiters).collect()
    } else {
        let nodes: Vec<String> = queue.iter().map(|c| format!("{path}/{}", c.name)).collect();
        let read = read_nodes(live, &nodes).await?;
        // A node holds when nothing lower blocks it: no lower node at all for
        // a writer, no lower writer for a reader (see `naming::standing`).
        let (mut lower, mut lower_writer) = (false, false);
        let mut participants = Vec::new();
        for contender in &queue {
            let holds = match contender.role {
                Role::Writer => !lower,
                Role::Reader => !lower_writer,
            };
            lower = true;
            lower_writer |= contender.role == Role::Writer;
            let node = format!("{path}/{}", contender.name);
            // Gone between the listing and the read: left out.
            if let Some((_, stat, data)) = read.iter().find(|(n, _, _)| *n == node) {
                participants.push(participant(
                    node,
                    kind_of(&contender.name, contender.role),
                    holds,
                    *stat,
                    data.clone(),
                ));
            }
        }
        participants
    };
    Ok(Reading { participants, exists, watches })
}

/// A kazoo (and zoolock) semaphore lease's name: `uuid4().hex`.
fn is_lease_name(name: &str) -> bool {
    name.len() == 32 && name.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The children of `path` with a watch on them, or (`None`) a watch on its creation.
async fn watched_children(session: &Session, live: &Live, path: &str) -> Result<(Option<Vec<String>>, Watch)> {
    loop {
        match live.client.list_and_watch_children(path).await {
            Ok((children, watch)) => return Ok((Some(children), (watch, None))),
            Err(zk::Error::NoNode) => {}
            Err(err) => return Err(Error::zk(path, "list", err)),
        }
        // A data watch: the session's handles on `path` stop mirroring it.
        let mark = Mirrors::of(session).data_watch(path);
        match live.client.check_and_watch_stat(path).await {
            // Created meanwhile: list it.
            Ok((Some(_), _)) => continue,
            Ok((None, watch)) => return Ok((None, (watch, Some(mark)))),
            Err(err) => return Err(Error::zk(path, "watch", err)),
        }
    }
}

/// A listing; `None` if the node does not exist.
fn absent(path: &str, listed: std::result::Result<Vec<String>, zk::Error>) -> Result<Option<Vec<String>>> {
    match listed {
        Ok(children) => Ok(Some(children)),
        Err(zk::Error::NoNode) => Ok(None),
        Err(err) => Err(Error::zk(path, "list", err)),
    }
}

/// Data and stat of `nodes`, in one round trip; nodes gone meanwhile are left out.
async fn read_nodes(live: &Live, nodes: &[String]) -> Result<Vec<(String, zk::Stat, Vec<u8>)>> {
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = live.client.new_multi_reader();
    for node in nodes {
        reader.add_get_data(node).map_err(|e| Error::zk(node, "read", e))?;
    }
    let results = reader.commit().await.map_err(|e| Error::zk(&nodes[0], "read", e))?;
    Ok(nodes
        .iter()
        .zip(results)
        .filter_map(|(node, result)| match result {
            zk::MultiReadResult::Data { data, stat } => Some((node.clone(), stat, data)),
            _ => None,
        })
        .collect())
}

fn kind_of(name: &str, role: Role) -> ParticipantKind {
    match role {
        Role::Reader => ParticipantKind::Read,
        Role::Writer if name.contains("__WRIT__") => ParticipantKind::Write,
        Role::Writer => ParticipantKind::Lock,
    }
}

/// Curator's names start `_c_<uuid>`; kazoo's (and kazoo semaphore leases)
/// with 32 hex digits; DistributedLock's are `lock-<seq>`.
fn scheme_of(name: &str) -> Option<Scheme> {
    let hex = |s: &str| s.len() >= 32 && s.as_bytes()[..32].iter().all(u8::is_ascii_hexdigit);
    if Family::of(name) == Some(Family::DistributedLock) {
        Some(Scheme::DistributedLock)
    } else if name.starts_with("_c_") {
        Some(Scheme::Curator)
    } else if hex(name)
        && (name.len() == 32 || name[32..].starts_with("__lock__") || name[32..].starts_with("__rlock__"))
    {
        Some(Scheme::Kazoo)
    } else {
        None
    }
}

fn participant(node: String, kind: ParticipantKind, holds: bool, stat: zk::Stat, data: Vec<u8>) -> Participant {
    let name = &node[node.rfind('/').map_or(0, |i| i + 1)..];
    Participant {
        scheme: scheme_of(name),
        kind,
        holds,
        identifier: String::from_utf8_lossy(naming::identifier(&data)).into_owned(),
        session_id: stat.ephemeral_owner,
        created: SystemTime::UNIX_EPOCH + Duration::from_millis(stat.ctime.max(0) as u64),
        fencing_token: stat.czxid,
        node,
    }
}

codes! {
    impl ParticipantKind {
        /// An exclusive node: a mutex's, or a kazoo write lock's (kazoo names both alike).
        Lock = 0 => "lock",
        /// A read lock's node.
        Read = 1 => "read",
        /// A Curator write lock's node (`__WRIT__`).
        Write = 2 => "write",
        /// A semaphore lease, or a wait for one.
        Lease = 3 => "lease",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schemes_by_name() {
        let hex = "0123456789abcdef0123456789abcdef";
        assert_eq!(scheme_of(&format!("{hex}__lock__0000000001")), Some(Scheme::Kazoo));
        assert_eq!(scheme_of(&format!("{hex}__rlock__0000000001")), Some(Scheme::Kazoo));
        assert_eq!(scheme_of(hex), Some(Scheme::Kazoo));
        assert_eq!(scheme_of("_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-0000000009"), Some(Scheme::Curator));
        assert_eq!(scheme_of("x__mylock__0000000001"), None);
        assert_eq!(scheme_of("lock-0000000009"), Some(Scheme::DistributedLock));
        assert_eq!(scheme_of("lock--000000009"), Some(Scheme::DistributedLock));
        assert_eq!(scheme_of("lock-1"), None);
        assert_eq!(kind_of("_c_x-__WRIT__0000000001", Role::Writer), ParticipantKind::Write);
        assert_eq!(kind_of("x__lock__0000000001", Role::Writer), ParticipantKind::Lock);
        assert!(is_lease_name(hex));
        for not in ["alpha", "0123456789ABCDEF0123456789ABCDEF", "0123456789abcdef0123456789abcde", &format!("{hex}0")]
        {
            assert!(!is_lease_name(not), "{not}");
        }
    }
}

//! Writes that commit together or not at all: kazoo's `TransactionRequest`,
//! ZooKeeper's `multi`, and the fence a hold adds to it.

use tokio::time::timeout;
use zookeeper_client as zk;

use super::{check_create_path, check_data, check_version, Create, Stat};
use crate::error::{Error, Result};
use crate::options::{validate_node_path, MAX_IDENTIFIER_BYTES, MAX_PATH_BYTES};
use crate::runtime;
use crate::session::{Live, Session};

/// What one operation of a [`Transaction`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OpResult {
    /// A check held.
    Checked,
    /// The path created (with its sequence number, if sequential) and its stat.
    Created {
        /// The path created.
        path: String,
        /// Its stat.
        stat: Stat,
    },
    /// The data was set; the new stat.
    Set(Stat),
    /// The node was deleted.
    Deleted,
}

#[derive(Debug, Clone)]
enum Op {
    Check { path: String, version: Option<i32> },
    Create { path: String, data: Option<Vec<u8>>, options: Create },
    Set { path: String, data: Option<Vec<u8>>, version: Option<i32> },
    Delete { path: String, version: Option<i32> },
}

impl Op {
    fn target(&self) -> (&str, &'static str) {
        match self {
            Op::Check { path, .. } => (path, "check"),
            Op::Create { path, .. } => (path, "create"),
            Op::Set { path, .. } => (path, "set"),
            Op::Delete { path, .. } => (path, "delete"),
        }
    }
}

/// Writes that commit together or not at all (ZooKeeper's `multi`, kazoo's
/// `transaction()`). Each add checks its arguments at once; the first bad
/// one is returned by [`Transaction::commit`], which then sends nothing.
///
/// A node a fence checks, with the session generation it lives on if ephemeral.
pub(crate) type FencedNode = (String, Option<u64>);

/// A fenced transaction ([`Transaction::fenced_by`]) commits only while a
/// given lock or semaphore handle still holds.
#[derive(Debug, Clone)]
pub struct Transaction {
    session: Session,
    ops: Vec<Op>,
    /// The lock path and the holder's nodes (one per path of a multi-lock), checked first.
    fence: Option<(String, Vec<FencedNode>)>,
    /// The first bad operation: its index among those added, and why.
    invalid: Option<(usize, Error)>,
    /// Operations added, bad ones included.
    added: usize,
}

impl Transaction {
    /// An empty transaction on `session`.
    pub(super) fn new(session: &Session) -> Transaction {
        Transaction { session: session.clone(), ops: Vec::new(), fence: None, invalid: None, added: 0 }
    }

    fn keep(mut self, checked: Result<()>, op: impl FnOnce() -> Op) -> Transaction {
        match checked {
            Ok(()) => self.ops.push(op()),
            Err(err) => {
                self.invalid.get_or_insert((self.added, err));
            }
        }
        self.added += 1;
        self
    }

    /// Fails the transaction unless `path` is at `version` (`None`: exists).
    pub fn check(self, path: &str, version: Option<i32>) -> Transaction {
        let checked = validate_node_path(path).and(check_version(version));
        let version = checked.as_ref().ok().copied().flatten();
        self.keep(checked.map(drop), || Op::Check { path: path.to_owned(), version })
    }

    /// Creates a node with `data` (`None`: null); `makepath` is not available
    /// in a transaction (its parents would be created outside it): refused at commit.
    pub fn create(self, path: &str, data: Option<&[u8]>, options: Create) -> Transaction {
        let checked = check_create_path(path, options.sequence).and(check_data(data)).and(if options.makepath {
            Err(Error::InvalidArgument("makepath is not available in a transaction".into()))
        } else {
            Ok(())
        });
        self.keep(checked, || Op::Create { path: path.to_owned(), data: data.map(<[u8]>::to_vec), options })
    }

    /// Sets a node's data (`None`: null), if at `version` when given.
    pub fn set(self, path: &str, data: Option<&[u8]>, version: Option<i32>) -> Transaction {
        let checked = validate_node_path(path).and(check_data(data)).and(check_version(version));
        let version = checked.as_ref().ok().copied().flatten();
        self.keep(checked.map(drop), || Op::Set { path: path.to_owned(), data: data.map(<[u8]>::to_vec), version })
    }

    /// Deletes a node, if at `version` when given.
    pub fn delete(self, path: &str, version: Option<i32>) -> Transaction {
        let checked = validate_node_path(path).and(check_version(version));
        let version = checked.as_ref().ok().copied().flatten();
        self.keep(checked.map(drop), || Op::Delete { path: path.to_owned(), version })
    }

    /// Fenced on `nodes`, a hold's own nodes on the lock `path` (see
    /// [`Transaction::fenced_by`], which the holder adds).
    pub(crate) fn fenced_at(mut self, path: &str, nodes: Vec<FencedNode>) -> Transaction {
        self.fence = Some((path.to_owned(), nodes));
        self
    }

    /// Sends the operations as one request: every write is made, or none.
    /// On success, one [`OpResult`] per operation (the fence's check not
    /// included). On failure, the error of the first operation that failed,
    /// naming its path and what it was (`action` "check", "create", "set",
    /// "delete"); [`Error::NotHeld`] when the fence failed. An empty
    /// transaction commits nothing and succeeds.
    ///
    /// After [`Error::ConnectionLoss`] or [`Error::SessionExpired`] it is not
    /// known whether it was made: [`Session::retry`] sends it again, as
    /// kazoo's `retry` does. A fenced one sent again on a new session fails
    /// with [`Error::NotHeld`] unless the hold outlived the old session (a
    /// persistent one).
    pub async fn commit(self) -> Result<Vec<OpResult>> {
        self.commit_indexed().await.map_err(|(_, err)| err)
    }

    /// [`Transaction::commit`], saying which operation failed: its index
    /// (from 0, in the order added; `None` when the request as a whole or
    /// the fence failed). For bindings that report one result per operation,
    /// as kazoo's `commit()` does.
    pub async fn commit_indexed(self) -> Result<Vec<OpResult>, (Option<usize>, Error)> {
        if let Some((index, err)) = self.invalid {
            return Err((Some(index), err));
        }
        let session = self.session.clone();
        let (ops, fence) = (self.ops, self.fence);
        let bound = session.request_bound();
        let commit = async {
            let (live, turn) = session.live_in_turn().await.map_err(|err| (None, err))?;
            commit_on(&session, &live, turn, &ops, &fence).await
        };
        timeout(bound, commit).await.unwrap_or(Err((None, Error::ConnectionLoss(bound))))
    }

    /// [`Transaction::commit`] for callers without an async runtime.
    pub fn commit_blocking(self) -> Result<Vec<OpResult>> {
        runtime::block_on(self.commit())
    }

    /// [`Transaction::commit_indexed`] for callers without an async runtime.
    pub fn commit_indexed_blocking(self) -> Result<Vec<OpResult>, (Option<usize>, Error)> {
        runtime::block_on(self.commit_indexed())
    }
}

/// The most a multi may carry: one create at the limits (the data, a path
/// and a chroot of [`MAX_PATH_BYTES`] each) fits, with room for the headers,
/// under ZooKeeper's default `jute.maxbuffer` (1 MiB - 1).
const MAX_MULTI_BYTES: usize = MAX_IDENTIFIER_BYTES + 2 * MAX_PATH_BYTES + 8 * 1024;

/// Refuses a multi the server would not read. Over `jute.maxbuffer` it drops
/// the connection (every request in flight on the session fails with it),
/// and a commit sent again after each reconnect, as a retry does, would
/// never end. Each operation counts its path with the chroot, its data, its
/// ACL's texts, and 36 bytes for the numbers and lengths around them (in
/// jute at most 33: a create with a TTL, its op header included), so that a
/// bulk of small operations a server takes is not refused.
const PER_OP: usize = 36;

fn check_request_size(session: &Session, ops: &[Op], fence: &Option<(String, Vec<FencedNode>)>) -> Result<()> {
    let connect = &session.options().connect;
    let chroot = connect.find('/').map_or(0, |at| connect.len() - at);
    let acl_bytes = |acls: &[zk::Acl]| acls.iter().map(|a| 16 + a.scheme().len() + a.id().len()).sum::<usize>();
    let session_acls = acl_bytes(&session.options().acls);
    let fenced = fence.as_ref().map_or(0, |(_, nodes)| nodes.iter().map(|(n, _)| PER_OP + chroot + n.len()).sum());
    let total = fenced
        + ops
            .iter()
            .map(|op| {
                PER_OP
                    + chroot
                    + op.target().0.len()
                    + match op {
                        Op::Create { data, options, .. } => {
                            data.as_ref().map_or(0, Vec::len) + options.acls.as_deref().map_or(session_acls, acl_bytes)
                        }
                        Op::Set { data, .. } => data.as_ref().map_or(0, Vec::len),
                        Op::Check { .. } | Op::Delete { .. } => 0,
                    }
            })
            .sum::<usize>();
    if total > MAX_MULTI_BYTES {
        return Err(Error::InvalidArgument(format!(
            "the transaction is about {total} bytes; at most {MAX_MULTI_BYTES} fit in one request"
        )));
    }
    Ok(())
}

/// Sends a transaction's operations, after the fence's check if any, as one
/// multi; `turn` ([`Session::live_in_turn`]) is let go once it is sent.
async fn commit_on(
    session: &Session,
    live: &Live,
    turn: Option<tokio::sync::SemaphorePermit<'_>>,
    ops: &[Op],
    fence: &Option<(String, Vec<FencedNode>)>,
) -> Result<Vec<OpResult>, (Option<usize>, Error)> {
    let session_acls = &session.options().acls;
    let mut writer = live.client.new_multi_writer();
    let fenced = fence.is_some();
    // The fence's checks come first: one per node of the hold.
    let checks = fence.as_ref().map_or(0, |(_, nodes)| nodes.len());
    let not_held = |lock_path: &str| Error::NotHeld { path: lock_path.to_owned() };
    if let Some((lock_path, nodes)) = fence {
        // An ephemeral node ended with its session, whatever has its name now.
        if nodes.iter().any(|(_, generation)| generation.is_some_and(|g| g != live.generation)) {
            return Err((None, not_held(lock_path)));
        }
        for (node, _) in nodes {
            // -1: any version; the check is of existence.
            writer.add_check_version(node, -1).map_err(|_| (None, not_held(lock_path)))?;
        }
    }
    for (i, op) in ops.iter().enumerate() {
        let (path, action) = op.target();
        let added = match op {
            Op::Check { path, version } => writer.add_check_version(path, version.unwrap_or(-1)),
            Op::Create { path, data, options } => {
                let acls = options.acls.as_deref().unwrap_or(session_acls);
                writer.add_create_nullable(path, data.as_deref(), &options.mode().with_acls(zk::Acls::new(acls)))
            }
            Op::Set { path, data, version } => writer.add_set_data_nullable(path, data.as_deref(), *version),
            Op::Delete { path, version } => writer.add_delete(path, *version),
        };
        added.map_err(|e| (Some(i), Error::zk(path, action, e)))?;
    }
    if ops.is_empty() && !fenced {
        return Ok(Vec::new());
    }
    check_request_size(session, ops, fence).map_err(|err| (None, err))?;
    let reply = writer.commit();
    drop(turn);
    let results = match reply.await {
        Ok(results) => results,
        Err(zk::MultiWriteError::OperationFailed { index, source }) => {
            let err = match (index.checked_sub(checks), fence) {
                (None, Some((lock_path, _))) => match source {
                    zk::Error::NoNode | zk::Error::BadVersion => (None, not_held(lock_path)),
                    other => (None, Error::zk(lock_path, "check the hold on", other)),
                },
                (Some(i), _) if i < ops.len() => {
                    let (path, action) = ops[i].target();
                    (Some(i), Error::zk(path, action, source))
                }
                _ => (None, Error::zk("/", "commit", source)),
            };
            return Err(err);
        }
        Err(zk::MultiWriteError::RequestFailed { source }) => {
            let path = ops.first().map_or("/", |op| op.target().0);
            return Err((None, Error::zk(path, "commit", source)));
        }
    };
    Ok(results
        .into_iter()
        .skip(checks)
        .map(|r| match r {
            zk::MultiWriteResult::Delete => OpResult::Deleted,
            zk::MultiWriteResult::Create { path, stat } => OpResult::Created { path, stat: (&stat).into() },
            zk::MultiWriteResult::SetData { stat } => OpResult::Set((&stat).into()),
            // `Check`, and whatever a later client version adds.
            _ => OpResult::Checked,
        })
        .collect())
}

//! A lock over several paths, all or nothing (Curator's
//! `InterProcessMultiLock`): each path is a kazoo `Lock`, node for node, so
//! kazoo and Curator clients that lock one of the paths exclude it and are
//! excluded. The paths are taken one after the other in one order, sorted
//! by their bytes, whatever order the caller gave: two multi-locks that
//! share paths never hold one each while waiting for the other's.

use std::sync::Arc;

use super::lock::{Kind, Lock, LockConfig};
use crate::contender::{Removals, Won};
use crate::error::{Error, Result};
use crate::holder::{holder_methods, sealed, Acquire, BoxFuture, Holder, HolderState, OnHeld};
use crate::options::validate_path;
use crate::session::Session;
use crate::state::Outcome;

/// All of several locks, or none. One hold: acquired when every path is,
/// released together, lost when any path's node is (deleted, or its session
/// ended), with a fencing token per path ([`MultiLock::fencing_tokens`]).
/// A timeout, a cancel, an error or a dropped acquire removes the nodes it
/// queued on every path. Not reentrant: a second acquire on a held handle
/// waits for its release, as a kazoo `Lock`'s does.
///
/// ```
/// use zoolock::{Acquire, MultiLock, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # let connect = zk_harness::shared().connect_string();
/// # let base = format!("/zoolock-doc{}", zk_harness::unique_path("multi"));
/// # let (from, to) = (format!("{base}/accounts/7"), format!("{base}/accounts/3"));
/// let session = Session::connect_blocking(SessionOptions::new(connect))?;
/// // A transfer locks both accounts; another transfer between them, named
/// // the other way round, takes them in the same order and cannot deadlock.
/// let accounts = MultiLock::new(&session, [&from, &to], "transfer-42")?;
/// assert!(accounts.acquire_blocking(Acquire::default())?);
/// let tokens = accounts.fencing_tokens(); // one per path, sorted by path
/// assert_eq!(tokens[0].0, to);
/// accounts.release_blocking()?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct MultiLock {
    holder: Arc<HolderState>,
    /// One lock per path, in the order they are taken. Only their
    /// contention is used: the hold is the multi-lock's own.
    locks: Arc<[Lock]>,
}

impl std::fmt::Debug for MultiLock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiLock").field("paths", &self.paths()).field("state", &self.state()).finish_non_exhaustive()
    }
}

impl MultiLock {
    /// A handle on the locks at `paths`, whose nodes hold `identifier`
    /// (kazoo's `Lock(path, identifier)` on each). The same path given twice
    /// is one path. Nothing is sent before the first acquire; bad input
    /// fails here: [`Error::InvalidPath`], or [`Error::InvalidArgument`]
    /// for no path at all.
    pub fn new<P: AsRef<str>>(
        session: &Session,
        paths: impl IntoIterator<Item = P>,
        identifier: impl Into<Vec<u8>>,
    ) -> Result<MultiLock> {
        let mut paths: Vec<String> = paths.into_iter().map(|p| p.as_ref().to_owned()).collect();
        for path in &paths {
            validate_path(path)?;
        }
        if paths.is_empty() {
            return Err(Error::InvalidArgument("a multi-lock needs at least one path".into()));
        }
        // The one order every multi-lock takes its paths in.
        paths.sort();
        paths.dedup();
        let config = LockConfig { identifier: identifier.into(), ..LockConfig::default() };
        let locks = paths
            .iter()
            .map(|path| Lock::new(session, path, Kind::Mutex, config.clone()).map(Lock::unmetered))
            .collect::<Result<Vec<_>>>()?;
        let name = format!("[{}]", paths.join(", "));
        Ok(MultiLock { holder: HolderState::new(session, &name, OnHeld::Wait), locks: locks.into() })
    }

    /// The paths, in the order they are taken (sorted, each once).
    pub fn paths(&self) -> Vec<&str> {
        self.locks.iter().map(|lock| lock.path()).collect()
    }

    /// Takes every path in order, each waiting as `options` says; gives up
    /// all (their nodes go with the dropped wins) as soon as one is taken
    /// for a single try. Wins on different sessions (one expired between
    /// two paths) hold nothing together: as soon as the session changes the
    /// wait stops, and starts all over on the new one. So does a set whose
    /// earlier nodes are gone by the time the last path is won.
    async fn contend(&self, options: &Acquire, removals: Removals) -> Result<Option<Won>> {
        let session = &self.holder.session;
        'again: loop {
            let mut won: Vec<Won> = Vec::with_capacity(self.locks.len());
            for lock in self.locks.iter() {
                let next = match won.first().map(|first| first.generation) {
                    None => lock.contend(options, removals.clone()).await?,
                    Some(generation) => tokio::select! {
                        next = lock.contend(options, removals.clone()) => next?,
                        // The wins so far ended with their session; the
                        // dropped wait removes its node as a timeout's does.
                        _ = session.wait_past(generation) => continue 'again,
                    },
                };
                match next {
                    Some(next) => {
                        if won.first().is_some_and(|first| first.generation != next.generation) {
                            continue 'again;
                        }
                        won.push(next);
                    }
                    None => return Ok(None),
                }
            }
            if !self.earlier_wins_remain(&won).await? {
                continue 'again;
            }
            let waited = won.iter().any(|w| w.waited);
            let mut won = won.into_iter();
            let mut first = won.next().expect("at least one path");
            first.parts = won.collect();
            return Ok(Some(first.with_wait(waited)));
        }
    }

    /// Whether the nodes won before the last still exist, all at once (one
    /// multi of existence checks): while this acquire waited for a later
    /// path, an operator may have deleted one and another client taken that
    /// path. A loss of the connection or the session counts as gone: the
    /// caller starts over, and its new wins are checked again.
    async fn earlier_wins_remain(&self, won: &[Won]) -> Result<bool> {
        let Some((_, earlier)) = won.split_last() else { return Ok(true) };
        if earlier.is_empty() {
            return Ok(true);
        }
        let session = &self.holder.session;
        let live = session.live().await?;
        if live.generation != earlier[0].generation {
            return Ok(false);
        }
        let mut checks = live.client.new_multi_writer();
        for w in earlier {
            // -1: any version; the check is of existence.
            checks.add_check_version(&w.node, -1).map_err(|e| Error::zk(&w.node, "check", e))?;
        }
        let checked = session
            .bounded(async { checks.commit().await.map_err(|e| Error::zk(&earlier[0].node, "check", e.into())) });
        match checked.await {
            Ok(_) => Ok(true),
            Err(Error::NoNode { .. } | Error::ConnectionLoss(_) | Error::SessionExpired { .. }) => Ok(false),
            Err(e) => Err(e),
        }
    }
}

holder_methods!(MultiLock);

impl sealed::Recipe for MultiLock {
    fn state_of(&self) -> &Arc<HolderState> {
        &self.holder
    }

    fn handle(&self) -> Box<dyn Holder> {
        Box::new(self.clone())
    }
}

impl Holder for MultiLock {
    fn acquire_outcome(&self, options: Acquire) -> BoxFuture<'_, Result<Outcome>> {
        Box::pin(async move {
            self.holder.acquire("multi_lock", &options, |removals| self.contend(&options, removals)).await
        })
    }

    /// The contenders of each path in turn, holder first (kazoo's
    /// `contenders()` of each path's `Lock`, one after the other).
    fn queue(&self) -> BoxFuture<'_, Result<Vec<String>>> {
        Box::pin(async move {
            let mut all = Vec::new();
            for lock in self.locks.iter() {
                all.extend(lock.queue().await?);
            }
            Ok(all)
        })
    }
}

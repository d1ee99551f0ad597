//! kazoo's `Semaphore`, node for node: the pool node `path` holds
//! `max_leases` as text; each lease is an ephemeral `path/<uuid hex>` whose
//! data is the holder's identifier; a lock at `path + "-__lock__"` admits one
//! contender at a time to watch the pool, so a freed lease wakes one client.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use uuid::Uuid;
use zookeeper_client as zk;

use super::lock::{read_identifiers, Kind, Lock, LockConfig};
use crate::contender::{Attempt, Removal, Removals, Target, Won};
use crate::error::{connection_lost, Error, Result};
use crate::holder::{holder_methods, sealed, Acquire, BoxFuture, Holder, HolderState, OnHeld};
use crate::options::{validate_identifier, validate_path};
use crate::session::{Live, Session};
use crate::state::Outcome;

/// A counting semaphore shared with kazoo clients on the same path.
#[derive(Clone)]
pub struct Semaphore {
    holder: Arc<HolderState>,
    spec: Arc<Spec>,
}

impl std::fmt::Debug for Semaphore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Semaphore")
            .field("path", &self.spec.path)
            .field("max_leases", &self.spec.max_leases)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

struct Spec {
    path: String,
    identifier: Vec<u8>,
    max_leases: u32,
    admission: Lock,
    pool_checked: AtomicBool,
}

enum Step {
    Won(Won),
    Taken,
    SessionEnded,
}

impl Semaphore {
    /// A handle on the semaphore at `path` with `max_leases` leases (kazoo's
    /// `Semaphore(path, identifier, max_leases)`); nothing is sent before the first acquire.
    pub fn new(session: &Session, path: &str, identifier: impl Into<Vec<u8>>, max_leases: u32) -> Result<Semaphore> {
        let identifier = identifier.into();
        validate_path(path)?;
        validate_identifier(&identifier)?;
        if max_leases == 0 {
            return Err(Error::InvalidArgument("max_leases must be at least 1".into()));
        }
        let admission_config = LockConfig { identifier: identifier.clone(), ..LockConfig::default() };
        let admission =
            Lock::on_checked_path(session, &format!("{path}-__lock__"), Kind::Mutex, admission_config)?.unmetered();
        Ok(Semaphore {
            holder: HolderState::new(session, path, OnHeld::Succeed),
            spec: Arc::new(Spec {
                path: path.to_owned(),
                identifier,
                max_leases,
                admission,
                pool_checked: AtomicBool::new(false),
            }),
        })
    }

    /// How many may hold at once.
    pub fn max_leases(&self) -> u32 {
        self.spec.max_leases
    }

    async fn contend(&self, options: &Acquire, removals: Removals) -> Result<Option<Won>> {
        loop {
            let live = self.holder.session.live().await?;
            self.check_pool(&live).await?;
            let admission = if options.waits() { Acquire::default() } else { Acquire::no_wait() };
            if !self.spec.admission.acquire(admission).await? {
                return Ok(None);
            }
            let admitted = Admitted { lock: Some(&self.spec.admission), removals: &removals };
            let step = self.take_lease(&live, options, &removals).await;
            // Dropped here, the acquire still removes a won lease: see `Won`.
            admitted.release().await;
            match step? {
                Step::Won(won) => return Ok(Some(won)),
                Step::Taken => return Ok(None),
                Step::SessionEnded => {
                    self.holder.session.wait_past(live.generation).await;
                }
            }
        }
    }

    /// With the admission lock held: waits for a free lease and takes it.
    async fn take_lease(&self, live: &Live, options: &Acquire, removals: &Removals) -> Result<Step> {
        let path = &self.spec.path;
        // A fresh name per acquisition, so a late background delete of an
        // earlier lease can never remove this one.
        let lease = format!("{path}/{}", Uuid::new_v4().simple());
        let removal = Removal {
            session: self.holder.session.clone(),
            target: Target::Node(lease.clone()),
            generation: live.generation,
            ephemeral: true,
        };
        let mut attempt = Attempt::new(removal, removals);
        let name = &lease[path.len() + 1..];
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::new(&self.holder.session.options().acls));
        // Whether a lease was freed for us (a handoff, in the metrics).
        let mut waited = false;
        loop {
            let (children, watcher) = match live.client.list_and_watch_children(path).await {
                Ok(listed) => listed,
                Err(err) if connection_lost(&err) => continue,
                Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(Step::SessionEnded),
                Err(err) => return Err(Error::zk(path, "list", err)),
            };
            // After a create whose reply was lost, our lease may be among the
            // children: the name is ours alone, but the session must be too.
            // Counted as another holder, it would be waited for forever.
            if children.iter().any(|c| c == name) {
                match live.client.check_stat(&lease).await {
                    Ok(Some(stat)) if stat.ephemeral_owner == live.session_id => {
                        return Ok(Step::Won(attempt.won(stat.czxid).with_wait(waited)))
                    }
                    Ok(_) => {}
                    Err(err) if connection_lost(&err) => continue,
                    Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(Step::SessionEnded),
                    Err(err) => return Err(Error::zk(&lease, "check", err)),
                }
            }
            // Every child counts as a lease, as in kazoo.
            if children.len() < self.spec.max_leases as usize {
                match live.client.create(&lease, &self.spec.identifier, &ephemeral).await {
                    Ok((stat, _)) => return Ok(Step::Won(attempt.won(stat.czxid).with_wait(waited))),
                    // Maybe created: the next listing tells.
                    Err(err) if connection_lost(&err) || err == zk::Error::NodeExists => continue,
                    Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(Step::SessionEnded),
                    Err(err) => return Err(Error::zk(path, "create a lease under", err)),
                }
            }
            if !options.waits() {
                return Ok(Step::Taken);
            }
            let event = watcher.changed().await;
            if event.event_type == zk::EventType::Session && event.session_state.is_terminated() {
                return Ok(Step::SessionEnded);
            }
            waited = true;
        }
    }

    /// Creates the pool node holding `max_leases`, or checks the number an
    /// existing one holds (kazoo's "Inconsistent max leases").
    async fn check_pool(&self, live: &Live) -> Result<()> {
        if self.spec.pool_checked.load(Ordering::Acquire) {
            return Ok(());
        }
        let path = &self.spec.path;
        let acls = &self.holder.session.options().acls;
        let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::new(acls));
        let size = self.spec.max_leases.to_string();
        loop {
            match live.client.create(path, size.as_bytes(), &persistent).await {
                Ok(_) => break,
                Err(zk::Error::NodeExists) => {
                    let (data, _) = live.client.get_data(path).await.map_err(|e| Error::zk(path, "read", e))?;
                    let existing = String::from_utf8_lossy(&data).into_owned();
                    if existing.trim().parse::<u32>().is_ok_and(|n| n != self.spec.max_leases) {
                        return Err(Error::InconsistentLeases {
                            path: path.clone(),
                            existing,
                            requested: self.spec.max_leases,
                        });
                    }
                    break;
                }
                Err(zk::Error::NoNode) => {
                    let parent = &path[..path.rfind('/').unwrap_or(0)];
                    match crate::znode::make_dirs(&self.holder.session, live, parent, &persistent).await {
                        Ok(()) => continue,
                        Err(err) if connection_lost(&err) => continue,
                        Err(err) => return Err(Error::zk(parent, "create", err)),
                    }
                }
                Err(err) if connection_lost(&err) => continue,
                Err(err) => return Err(Error::zk(path, "create", err)),
            }
        }
        self.spec.pool_checked.store(true, Ordering::Release);
        Ok(())
    }
}

holder_methods!(Semaphore);

impl sealed::Recipe for Semaphore {
    fn state_of(&self) -> &Arc<HolderState> {
        &self.holder
    }

    fn handle(&self) -> Box<dyn Holder> {
        Box::new(self.clone())
    }
}

impl Holder for Semaphore {
    /// Takes a lease. Fails with [`Error::InconsistentLeases`] if the pool
    /// was set up with another size. A handle that holds a lease already
    /// gets [`Outcome::Acquired`] at once and keeps its one lease (kazoo's
    /// `Semaphore`): one release gives it back.
    fn acquire_outcome(&self, options: Acquire) -> BoxFuture<'_, Result<Outcome>> {
        Box::pin(async move {
            self.holder.acquire("semaphore", &options, |removals| self.contend(&options, removals)).await
        })
    }

    /// The current lease holders, in no particular order (kazoo's `lease_holders()`).
    fn queue(&self) -> BoxFuture<'_, Result<Vec<String>>> {
        Box::pin(async move {
            let live = self.holder.session.live().await?;
            let read = async {
                let children = match live.client.list_children(&self.spec.path).await {
                    Ok(children) => children,
                    Err(zk::Error::NoNode) => return Ok(Vec::new()),
                    Err(err) => return Err(Error::zk(&self.spec.path, "list", err)),
                };
                let nodes: Vec<String> = children.iter().map(|c| format!("{}/{c}", self.spec.path)).collect();
                read_identifiers(&live, &nodes).await
            };
            self.holder.session.bounded(read).await
        })
    }
}

/// The admission lock while held; released even when the acquire that
/// took it is dropped midway.
struct Admitted<'a> {
    lock: Option<&'a Lock>,
    removals: &'a Removals,
}

impl Admitted<'_> {
    async fn release(mut self) {
        if let Some(lock) = self.lock.take() {
            let _ = lock.release().await;
        }
    }
}

impl Drop for Admitted<'_> {
    fn drop(&mut self) {
        if let Some(lock) = self.lock.take().cloned() {
            self.removals.push(lock.session().clone().spawn(async move {
                let _ = lock.release().await;
            }));
        }
    }
}

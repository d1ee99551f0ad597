//! Guaranteed removal of a contender's node: retried until it succeeds or
//! the node is certainly gone, so no path through zoolock leaves an orphan.

use std::collections::HashMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use zookeeper_client as zk;

use crate::error::connection_lost;
use crate::session::{Live, Session};
use crate::state::SessionState;

/// How long a caller waits for a removal before it goes on in the background.
/// A reachable server answers in milliseconds; an unreachable one will not
/// answer sooner for waiting.
pub(crate) const FOREGROUND_WAIT: Duration = Duration::from_secs(2);

/// The node to remove: by name, or — when a create's reply was lost — by the
/// unique prefix it was created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Node(String),
    Prefix { parent: String, prefix: String },
}

impl Target {
    /// The lock path (or semaphore pool) the node is under.
    pub fn parent(&self) -> &str {
        match self {
            Target::Node(node) => parent_of(node),
            Target::Prefix { parent, .. } => parent,
        }
    }
}

pub(crate) fn parent_of(node: &str) -> &str {
    node.rsplit_once('/').map_or("", |(parent, _)| parent)
}

/// One node that must go: created (or maybe created) on `generation`.
#[derive(Debug, Clone)]
pub(crate) struct Removal {
    pub session: Session,
    pub target: Target,
    pub generation: u64,
    pub ephemeral: bool,
}

impl Removal {
    /// Removes the node, retrying across connection loss; true once the
    /// node is certainly gone. An ephemeral node is gone once its session is;
    /// a persistent one is retried on the next session, and is struck off
    /// the session's [`PersistentNodes`] once gone.
    pub async fn run(self) -> bool {
        let gone = self.remove().await;
        if gone && !self.ephemeral {
            self.session.persistent_nodes().disown(&self.target);
        }
        gone
    }

    async fn remove(&self) -> bool {
        loop {
            // Closing ends the session, and its ephemeral nodes with it.
            if self.ephemeral && self.session.is_closed() {
                return true;
            }
            let Ok(live) = self.session.live_for_removal().await else { return false };
            if self.ephemeral && live.generation != self.generation {
                return true;
            }
            let node = match &self.target {
                Target::Node(node) => node.clone(),
                Target::Prefix { parent, prefix } => match find_own(&live, parent, prefix, self.ephemeral).await {
                    Ok(Some((node, _))) => node,
                    Ok(None) => return true,
                    Err(err) if self.retry_after(&live, &err).await => continue,
                    Err(_) => return false,
                },
            };
            match live.client.delete(&node, None).await {
                Ok(()) | Err(zk::Error::NoNode) => return true,
                // An ephemeral node ends with its session.
                Err(zk::Error::SessionExpired | zk::Error::ClientClosed) if self.ephemeral => return true,
                Err(err) if self.retry_after(&live, &err).await => continue,
                Err(err) => {
                    tracing::error!(%err, node, "zoolock could not delete a lock node");
                    return false;
                }
            }
        }
    }

    /// Whether `err` is worth another try, after waiting out what caused it.
    async fn retry_after(&self, live: &Live, err: &zk::Error) -> bool {
        match err {
            err if connection_lost(err) => {
                // The retry queues until the client reconnects; the pause only
                // keeps a flapping connection from spinning.
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.session.meter().cleanup_retry();
                true
            }
            zk::Error::SessionExpired | zk::Error::ClientClosed => {
                let retry = !self.ephemeral && self.session.wait_past(live.generation).await;
                if retry {
                    self.session.meter().cleanup_retry();
                }
                retry
            }
            _ => false,
        }
    }

    /// Removes the node in the background; returns at once.
    pub fn spawn(self) -> JoinHandle<()> {
        self.session.clone().spawn(async move {
            self.run().await;
        })
    }

    /// Runs the removal in the caller's task — no task of its own, no wake
    /// of another thread — and returns true if the node is certainly gone.
    /// The wait is bounded: once the session is not connected, at most
    /// [`FOREGROUND_WAIT`] more; the removal then goes on in the background,
    /// as it does if the wait is dropped (a caller's timeout, a cancelled
    /// task): a removal once started is never stopped.
    ///
    /// The bound starts at the disconnect, not at the call, so that a
    /// release on a healthy connection arms no timer. It assumes that a
    /// connected session answers the delete, or that zookeeper-client fails
    /// the connection after its own read timeout (a fraction of the session
    /// timeout) and the session leaves `Connected`; a partition under a
    /// release (`a_release_cut_off_midway_returns_within_its_bound`) is the case.
    pub fn run_bounded(self) -> impl Future<Output = bool> + Send {
        let mut status = self.session.subscribe();
        let work = Foreground { session: self.session.clone(), work: Some(Box::pin(self.run())) };
        async move {
            let disconnected = async {
                let _ = status.wait_for(|s| s.state != SessionState::Connected).await;
                tokio::time::sleep(FOREGROUND_WAIT).await;
            };
            tokio::select! {
                biased;
                gone = work => gone,
                _ = disconnected => false,
            }
        }
    }

    /// The registry of this removal's node if it is persistent.
    pub fn persistent(&self) -> Option<&PersistentNodes> {
        (!self.ephemeral).then(|| self.session.persistent_nodes())
    }
}

/// A removal polled by its caller; dropped before it ends, it finishes in the background.
struct Foreground {
    session: Session,
    work: Option<Pin<Box<dyn Future<Output = bool> + Send>>>,
}

impl Future for Foreground {
    type Output = bool;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<bool> {
        let gone = ready!(self.work.as_mut().expect("polled after it ended").as_mut().poll(cx));
        self.work = None;
        Poll::Ready(gone)
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            self.session.spawn(async move {
                work.await;
            });
        }
    }
}

/// Persistent nodes a session created, or may have, and that no hold keeps:
/// those of pending acquires, late duplicates, and releases under way, so
/// that [`Session::close`] can remove them: unlike ephemeral nodes they
/// outlive the session, and nothing else would remove them after it.
#[derive(Default)]
pub(crate) struct PersistentNodes {
    nodes: Mutex<Vec<Owned>>,
    /// Bumped on every change that `remove_all` may be waiting for.
    changes: watch::Sender<u64>,
}

struct Owned {
    target: Target,
    /// An acquire is still queueing it: its create may not be sent yet, so
    /// not finding it proves nothing.
    queued: bool,
}

impl PersistentNodes {
    /// An acquire is about to create `target`.
    pub fn own(&self, target: &Target) {
        self.nodes.lock().unwrap().push(Owned { target: target.clone(), queued: true });
    }

    /// The node of `from` is now known as `to`.
    pub fn retarget(&self, from: &Target, to: &Target) {
        for owned in self.nodes.lock().unwrap().iter_mut().filter(|o| o.target == *from) {
            owned.target = to.clone();
        }
    }

    /// The acquire that queued `target` won with it or let go of it.
    pub fn settle(&self, target: &Target) {
        for owned in self.nodes.lock().unwrap().iter_mut().filter(|o| o.target == *target) {
            owned.queued = false;
        }
        self.changes.send_modify(|n| *n += 1);
    }

    /// `target` won: a persistent hold is a lock held by design until it is
    /// released, so closing the session leaves it (kazoo's `ephemeral=False`).
    pub fn hold(&self, target: &Target) {
        self.disown(target);
    }

    /// A persistent hold is being released: its node must go even if the
    /// session closes while the delete is retried.
    pub fn release(&self, target: &Target) {
        self.nodes.lock().unwrap().push(Owned { target: target.clone(), queued: false });
        self.changes.send_modify(|n| *n += 1);
    }

    /// The node of `target` is gone.
    fn disown(&self, target: &Target) {
        self.nodes.lock().unwrap().retain(|o| o.target != *target);
        self.changes.send_modify(|n| *n += 1);
    }

    /// Removes every persistent node of `session` — once no acquire is
    /// queueing one any more — and returns when none is left or a removal
    /// gave up. `Session::close` bounds it by the session timeout.
    pub async fn remove_all(&self, session: &Session) {
        let mut changes = self.changes.subscribe();
        loop {
            changes.borrow_and_update();
            let (queued, targets): (bool, Vec<Target>) = {
                let nodes = self.nodes.lock().unwrap();
                (nodes.iter().any(|o| o.queued), nodes.iter().map(|o| o.target.clone()).collect())
            };
            if targets.is_empty() {
                return;
            }
            if queued {
                // Pending acquires see the close and let go of their nodes.
                if changes.changed().await.is_err() {
                    return;
                }
                continue;
            }
            let generation = session.status().generation;
            let removal = |target| Removal { session: session.clone(), target, generation, ephemeral: false };
            let removals: Vec<_> = targets.into_iter().map(|target| session.spawn(removal(target).run())).collect();
            let mut all_gone = true;
            for removal in removals {
                all_gone &= matches!(removal.await, Ok(true));
            }
            if !all_gone {
                return;
            }
        }
    }
}

/// Prefixes of this session's creates whose reply was lost and whose node
/// was not found then, per lock path (see `Attempt::renew_prefix`): such a
/// create can still land, late, on the server. Its node is ours and in
/// nobody's way only once deleted, so every listing of the path by any
/// handle of the session takes it out of the queue and deletes it
/// ([`DoubtfulPrefixes::sweep`]), and so does a listing made for the
/// purpose when an attempt or a hold on the path ends
/// ([`DoubtfulPrefixes::spawn_sweep`]). Kept by the session, not by the
/// attempt: a late node can land after the attempt that gave its prefix up
/// has ended (its node deleted by an operator, say) and sit right ahead of
/// the next attempt's node.
///
/// An entry goes once its node is found and deleted, or when its session
/// ends if ephemeral (no create of an ended session lands, and its nodes
/// are gone). A persistent one stays, and stays with [`PersistentNodes`] so
/// that [`Session::close`] removes its node.
///
/// The limit: a node that lands after the session's last listing of its
/// path stays until the session ends (forever if persistent and the
/// session is never closed), and whoever queues behind it waits as long.
/// No client rule prevents that (the model's
/// `new_rules_late_creates_are_safe_but_can_orphan`); ZooKeeper 3.8 nearly
/// rules such late creates out (model/README.md, "Late creates").
#[derive(Default)]
pub(crate) struct DoubtfulPrefixes(Mutex<HashMap<String, Vec<Doubtful>>>);

struct Doubtful {
    prefix: String,
    generation: u64,
    ephemeral: bool,
    /// Found: its removal is under way.
    deleting: bool,
}

impl DoubtfulPrefixes {
    /// A create under `prefix` on `parent`, sent on session `generation`, may land late.
    pub fn add(&self, parent: &str, prefix: String, generation: u64, ephemeral: bool) {
        let mut all = self.0.lock().unwrap();
        // Ephemeral entries of ended sessions, on paths not listed since, go too.
        all.retain(|_, doubtful| {
            doubtful.retain(|d| !d.ephemeral || d.generation >= generation);
            !doubtful.is_empty()
        });
        let doubtful = Doubtful { prefix, generation, ephemeral, deleting: false };
        all.entry(parent.to_owned()).or_default().push(doubtful);
    }

    pub fn any(&self, parent: &str) -> bool {
        self.0.lock().unwrap().contains_key(parent)
    }

    /// Takes out of `children` (of `parent`, listed on session `generation`)
    /// the late nodes of doubtful prefixes, and deletes them in the
    /// background: the handles say when each is gone.
    pub fn sweep(
        &self,
        session: &Session,
        parent: &str,
        generation: u64,
        children: &mut Vec<String>,
    ) -> Vec<JoinHandle<()>> {
        let mut found = Vec::new();
        {
            let mut all = self.0.lock().unwrap();
            let Some(doubtful) = all.get_mut(parent) else { return Vec::new() };
            doubtful.retain(|d| !d.ephemeral || d.generation >= generation);
            children.retain(|child| {
                let ours =
                    |d: &&mut Doubtful| (!d.ephemeral || d.generation == generation) && child.starts_with(&d.prefix);
                let Some(late) = doubtful.iter_mut().find(ours) else { return true };
                if !late.deleting {
                    late.deleting = true;
                    found.push((format!("{parent}/{child}"), late.prefix.clone(), late.generation, late.ephemeral));
                }
                false
            });
            if doubtful.is_empty() {
                all.remove(parent);
            }
        }
        found
            .into_iter()
            .map(|(node, prefix, generation, ephemeral)| {
                let target = Target::Node(node);
                let removal = Removal { session: session.clone(), target, generation, ephemeral };
                if let Some(persistent) = removal.persistent() {
                    let doubtful = Target::Prefix { parent: parent.to_owned(), prefix: prefix.clone() };
                    persistent.retarget(&doubtful, &removal.target);
                }
                let parent = parent.to_owned();
                removal.session.clone().spawn(async move {
                    let session = removal.session.clone();
                    removal.run().await;
                    session.doubtful_prefixes().forget(&parent, &prefix);
                })
            })
            .collect()
    }

    fn forget(&self, parent: &str, prefix: &str) {
        let mut all = self.0.lock().unwrap();
        if let Some(doubtful) = all.get_mut(parent) {
            doubtful.retain(|d| d.prefix != prefix);
            if doubtful.is_empty() {
                all.remove(parent);
            }
        }
    }

    /// Lists `parent` once, in the background, to sweep it (see
    /// [`DoubtfulPrefixes::sweep`]); `None` if the session has no doubtful
    /// prefix there. For when an attempt or a hold ends: a late node may
    /// have landed after the last listing.
    pub fn spawn_sweep(session: &Session, parent: &str) -> Option<JoinHandle<()>> {
        if !session.doubtful_prefixes().any(parent) {
            return None;
        }
        let (session, parent) = (session.clone(), parent.to_owned());
        Some(session.clone().spawn(async move {
            loop {
                let Ok(live) = session.live_for_removal().await else { return };
                match live.client.list_children(&parent).await {
                    Ok(mut children) => {
                        let doubtful = session.doubtful_prefixes();
                        for removal in doubtful.sweep(&session, &parent, live.generation, &mut children) {
                            let _ = removal.await;
                        }
                        return;
                    }
                    // The pause only keeps a flapping connection from spinning.
                    Err(err) if connection_lost(&err) => tokio::time::sleep(Duration::from_millis(20)).await,
                    Err(_) => return,
                }
            }
        }))
    }
}

/// Finds this session's node among `parent`'s children by its unique prefix.
/// An ephemeral node of another session with the same prefix is not ours.
/// No `parent` (an operator deleted it, or it was never made), no node.
pub(crate) async fn find_own(
    live: &Live,
    parent: &str,
    prefix: &str,
    ephemeral: bool,
) -> Result<Option<(String, zk::Stat)>, zk::Error> {
    let children = match live.client.list_children(parent).await {
        Err(zk::Error::NoNode) => return Ok(None),
        listed => listed?,
    };
    let Some(name) = children.into_iter().find(|c| c.starts_with(prefix)) else { return Ok(None) };
    let node = format!("{parent}/{name}");
    match live.client.check_stat(&node).await? {
        Some(stat) if !ephemeral || stat.ephemeral_owner == live.session_id => Ok(Some((node, stat))),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Session, SessionOptions};

    #[tokio::test(flavor = "multi_thread")]
    async fn a_node_with_our_prefix_from_another_session_is_not_ours() {
        let connect = zk_harness::shared().connect_string();
        let ours = Session::connect(SessionOptions::new(&connect)).await.unwrap().live().await.unwrap();
        let theirs = Session::connect(SessionOptions::new(&connect)).await.unwrap().live().await.unwrap();
        let parent = format!("/zoolock-tests{}", zk_harness::unique_path("find-own"));
        let open = zk::Acls::anyone_all();
        ours.client.mkdir(&parent, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
        let prefix = crate::naming::new_prefix(crate::Scheme::Kazoo, crate::naming::Role::Writer);
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(open);
        theirs.client.create(&format!("{parent}/{prefix}"), b"", &ephemeral).await.unwrap();

        assert_eq!(find_own(&ours, &parent, &prefix, true).await.unwrap(), None);
        let (node, stat) = find_own(&theirs, &parent, &prefix, true).await.unwrap().expect("their own node");
        assert!(node.starts_with(&format!("{parent}/{prefix}")));
        assert_eq!(stat.ephemeral_owner, theirs.session_id);
        // A persistent node has no owner: its unique prefix alone names it.
        assert!(find_own(&ours, &parent, &prefix, false).await.unwrap().is_some());
    }
}

//! Guaranteed removal of a contender's node: retried until it succeeds or
//! the node is certainly gone, so no path through zoolock leaves an orphan.

use std::future::Future;
use std::pin::Pin;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::task::JoinHandle;
use zookeeper_client as zk;

use super::create::find_own;
use super::Nodes;
use crate::error::connection_lost;
use crate::naming::{self, parent_of, Tag};
use crate::session::{Live, Session};
use crate::state::SessionState;

/// How long a caller waits for a removal before it goes on in the background.
/// A reachable server answers in milliseconds; an unreachable one will not
/// answer sooner for waiting.
pub(crate) const FOREGROUND_WAIT: Duration = Duration::from_secs(2);

/// What a release's transaction tells the waiters behind its node, besides
/// deleting it.
#[derive(Debug)]
pub(crate) enum HandOver {
    /// Nothing: a plain delete.
    None,
    /// The lock goes to this node, the next in the mirror's queue (mirror/mod.rs, point 11).
    To(String),
    /// The node went as a writer that held: its release marker
    /// ([`naming::release_marker`]), heard by the listing waiter behind it.
    Released,
}

/// The node to remove: by name, or — when a create's reply was lost — by the
/// [`Tag`] it was created with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Target {
    Node(String),
    Tagged { parent: String, tag: Tag },
}

impl Target {
    /// The lock path (or semaphore pool) the node is under.
    pub fn parent(&self) -> &str {
        match self {
            Target::Node(node) => parent_of(node),
            Target::Tagged { parent, .. } => parent,
        }
    }
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
    /// the session's `PersistentNodes` once gone.
    pub async fn run(self) -> bool {
        self.run_handing_over(HandOver::None).await
    }

    /// [`Removal::run`], telling what `hand` says in the transaction that
    /// deletes ours, if it can be told then ([`hand_over`], [`release_marked`]).
    async fn run_handing_over(self, hand: HandOver) -> bool {
        let gone = self.remove(hand).await;
        if gone && !self.ephemeral {
            Nodes::of(&self.session).persistent.disown(&self.target);
        }
        gone
    }

    async fn remove(&self, mut hand: HandOver) -> bool {
        loop {
            // Closing ends the session, and its ephemeral nodes with it.
            if self.ephemeral && self.session.is_closed() {
                return true;
            }
            let Ok(live) = self.session.live_for_removal().await else { return false };
            if self.ephemeral && live.generation != self.generation {
                return true;
            }
            let found;
            let node = match &self.target {
                Target::Node(node) => node.as_str(),
                Target::Tagged { parent, tag } => match find_own(&live, parent, tag, self.ephemeral).await {
                    Ok(Some((node, _))) => {
                        found = node;
                        found.as_str()
                    }
                    Ok(None) => return true,
                    Err(err) if self.retry_after(&live, &err).await => continue,
                    Err(_) => return false,
                },
            };
            let told = match std::mem::replace(&mut hand, HandOver::None) {
                HandOver::To(next) => hand_over(&live, node, &next).await,
                HandOver::Released => release_marked(&live, node).await,
                HandOver::None => Some(live.client.delete(node, None).await),
            };
            // Nothing done: a plain delete next.
            let Some(deleted) = told else { continue };
            match deleted {
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
        tracing::debug!(%err, target = ?self.target, "zoolock retries the removal of a node");
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
    /// [`FOREGROUND_WAIT`] more (none if it was not connected to begin
    /// with); the removal then goes on in the background,
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
        self.hand_over_bounded(HandOver::None)
    }

    /// [`Removal::run_bounded`], telling what `hand` says as
    /// [`Removal::run_handing_over`] does: a release's.
    pub fn hand_over_bounded(self, hand: HandOver) -> impl Future<Output = bool> + Send {
        // Not connected to begin with (an outage): no wait at all, as a
        // caller's timeout would have it (issue 35: a C# Dispose took 2.2 s).
        let connected = self.session.status().state == SessionState::Connected;
        let session = self.session.clone();
        let work = Foreground { session: self.session.clone(), work: Some(Box::pin(self.run_handing_over(hand))) };
        async move {
            let disconnected = async {
                session.disconnected().await;
                if connected {
                    tokio::time::sleep(FOREGROUND_WAIT).await;
                }
            };
            tokio::select! {
                biased;
                gone = work => gone,
                _ = disconnected => false,
            }
        }
    }
}

/// Deletes `node` in a transaction that first checks that node `next` (its
/// successor in the mirror's queue) is there, and creates and deletes its
/// hand-over marker: the next waiter's mirror hears the marker come and go
/// right before our node's deletion, proof that its node was there in that
/// transaction, and holds without reading it (mirror/mod.rs, point 11). The
/// deletion is last, so that the waiter, woken by it, has heard the marker.
/// All or nothing: `None` when it did nothing for a reason a plain delete
/// does not share (`next` is gone, or the marker refused: its name taken,
/// no permission, a quota), else the delete's outcome. The marker is
/// persistent: it outlives nothing, and needs no global session.
async fn hand_over(live: &Live, node: &str, next: &str) -> Option<Result<(), zk::Error>> {
    let parent = parent_of(node);
    let marker = naming::child_path(parent, &naming::handoff_marker(next));
    delete_marked(live, node, Some(&naming::child_path(parent, next)), &marker).await
}

/// Deletes `node`, a writer's that held, in a transaction that first creates
/// and deletes its release marker: the listing waiter right behind it
/// watches the marker's name, and hears it come before the deletion of the
/// node it watches, proof that the node went as a holder, in a transaction
/// that deleted no other contender (recipe/lock/queue.rs, `Wake::Released`).
/// Assumes that only a release makes a marker, and that a multi's notices
/// are in its operations' order (as point 11 of mirror/mod.rs). `None` when
/// the marker was refused (its name taken, no permission, a quota), else
/// the delete's outcome. The marker is persistent, as a hand-over's.
async fn release_marked(live: &Live, node: &str) -> Option<Result<(), zk::Error>> {
    delete_marked(live, node, None, &naming::release_marker(node)).await
}

/// Deletes `node` in one multi that first checks that node `there` is (if
/// given), then creates and deletes `marker`; the deletion is last. `None`
/// when an operation before the deletion failed (a plain delete is for the
/// caller), else the delete's outcome.
async fn delete_marked(live: &Live, node: &str, there: Option<&str>, marker: &str) -> Option<Result<(), zk::Error>> {
    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    let mut multi = live.client.new_multi_writer();
    if let Some(there) = there {
        multi.add_check_version(there, -1).ok()?;
    }
    multi.add_create(marker, b"", &persistent).ok()?;
    multi.add_delete(marker, None).ok()?;
    multi.add_delete(node, None).ok()?;
    let before_the_delete = 2 + usize::from(there.is_some());
    match multi.commit().await {
        Ok(_) => Some(Ok(())),
        Err(zk::MultiWriteError::OperationFailed { index, source }) if index < before_the_delete => {
            tracing::debug!(node, marker, %source, "zoolock marks nothing: a plain delete");
            None
        }
        Err(err) => Some(Err(err.into())),
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionOptions;

    /// A release's hand-over (mirror/mod.rs, point 11): the node goes, the
    /// next stays, and no marker is left; if the next node went first, the
    /// transaction fails whole and a plain delete removes ours all the same.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_hand_over_deletes_our_node_whether_or_not_the_next_is_there() {
        let connect = zk_harness::shared().connect_string();
        let session = Session::connect(SessionOptions::new(&connect)).await.unwrap();
        let live = session.live().await.unwrap();
        let parent = format!("/zoolock-tests{}", zk_harness::unique_path("hand-over"));
        let open = zk::Acls::anyone_all();
        live.client.mkdir(&parent, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
        let ephemeral = zk::CreateMode::EphemeralSequential.with_acls(open);
        let mut nodes = Vec::new();
        for _ in 0..3 {
            let (_, sequence) = live.client.create(&format!("{parent}/x__lock__"), b"", &ephemeral).await.unwrap();
            nodes.push(format!("x__lock__{sequence}"));
        }
        let children = || async {
            let mut children = live.client.list_children(&parent).await.unwrap();
            children.sort();
            children
        };
        let removal = |name: &str| Removal {
            session: session.clone(),
            target: Target::Node(crate::naming::child_path(&parent, name)),
            generation: live.generation,
            ephemeral: true,
        };
        let to = |name: &str| HandOver::To(name.to_owned());
        assert!(removal(&nodes[0]).hand_over_bounded(to(&nodes[1])).await);
        assert_eq!(children().await, &nodes[1..]);
        // The next node named is gone: index 0 of the transaction fails.
        assert!(removal(&nodes[1]).hand_over_bounded(to("x__lock__0000009999")).await);
        assert_eq!(children().await, &nodes[2..]);
        // Ours is gone already: done.
        assert!(removal(&nodes[0]).hand_over_bounded(to(&nodes[2])).await);
        assert_eq!(children().await, &nodes[2..]);
    }
}

//! The persistent nodes a session must remove when it closes: unlike
//! ephemeral ones, nothing else would remove them after it.

use std::sync::Mutex;

use tokio::sync::watch;

use super::removal::{Removal, Target};
use super::Nodes;
use crate::session::Session;

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
    pub(super) fn disown(&self, target: &Target) {
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

impl Removal {
    /// The registry of this removal's node if it is persistent. Here, not
    /// in removal.rs: the registry removes its nodes through removals.
    pub fn persistent(&self) -> Option<&PersistentNodes> {
        (!self.ephemeral).then(|| &Nodes::of(&self.session).persistent)
    }
}

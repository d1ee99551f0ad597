//! The prefixes of creates whose reply was lost, and the sweep of their late nodes.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::removal::{Removal, Target};
use super::Nodes;
use crate::error::connection_lost;
use crate::session::Session;

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
/// are gone). A persistent one stays, and stays with [`PersistentNodes`](super::PersistentNodes) so
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
                    Nodes::of(&session).doubtful.forget(&parent, &prefix);
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
        if !Nodes::of(session).doubtful.any(parent) {
            return None;
        }
        let (session, parent) = (session.clone(), parent.to_owned());
        Some(session.clone().spawn(async move {
            loop {
                let Ok(live) = session.live_for_removal().await else { return };
                match live.client.list_children(&parent).await {
                    Ok(mut children) => {
                        let doubtful = &Nodes::of(&session).doubtful;
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

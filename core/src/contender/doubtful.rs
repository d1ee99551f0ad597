//! The tags of creates whose reply was lost, and the sweep of their late nodes.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use tokio::task::JoinHandle;

use super::create::read_tagged;
use super::removal::{Removal, Target};
use super::Nodes;
use crate::error::connection_lost;
use crate::naming::Tag;
use crate::session::Session;

/// Tags of this session's creates whose reply was lost and whose node
/// was not found then, per lock path (see `Attempt::renew_tag`): such a
/// create can still land, late, on the server. Its node is ours and in
/// nobody's way only once deleted, so every listing of the path by any
/// handle of the session takes it out of the queue and deletes it
/// ([`DoubtfulTags::sweep`]), and so does a listing made for the
/// purpose when an attempt or a hold on the path ends
/// ([`DoubtfulTags::spawn_sweep`]). Kept by the session, not by the
/// attempt: a late node can land after the attempt that gave its tag up
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
///
/// A tag whose prefix is not unique (DistributedLock's `lock-`) cannot be
/// told by the name: a listing leaves such nodes in the queue, and each
/// node of that prefix not seen before is read once, in the background,
/// and deleted if it is ours. A waiter that queued behind it is woken by
/// that delete, as by any other.
#[derive(Default)]
pub(crate) struct DoubtfulTags(Mutex<HashMap<String, Vec<Doubtful>>>);

/// What a sweep started: deletes of late nodes found by name, and reads
/// of the new nodes of a shared prefix (each deletes ours if it finds it).
#[derive(Default)]
pub(crate) struct Swept {
    pub removals: Vec<JoinHandle<()>>,
    pub reads: Vec<JoinHandle<bool>>,
}

/// Whether sequence `s` is newer than `than`, in the counter's own order
/// (serial-number arithmetic: the signed counter wraps).
fn newer(s: i32, than: Option<i32>) -> bool {
    than.is_none_or(|read| s.wrapping_sub(read) > 0)
}

/// What a read for a doubtful tag's token looks for.
struct Late {
    tag: Tag,
    generation: u64,
    ephemeral: bool,
}

struct Doubtful {
    tag: Tag,
    generation: u64,
    ephemeral: bool,
    /// Found: its removal is under way.
    deleting: bool,
    /// With a shared prefix: the newest sequence of that prefix read for
    /// its token. A late node lands above what was listed.
    read_up_to: Option<i32>,
}

impl DoubtfulTags {
    /// A create tagged `tag` on `parent`, sent on session `generation`, may land late.
    pub fn add(&self, parent: &str, tag: Tag, generation: u64, ephemeral: bool) {
        let mut all = self.0.lock().unwrap();
        // Ephemeral entries of ended sessions, on paths not listed since, go too.
        all.retain(|_, doubtful| {
            doubtful.retain(|d| !d.ephemeral || d.generation >= generation);
            !doubtful.is_empty()
        });
        let doubtful = Doubtful { tag, generation, ephemeral, deleting: false, read_up_to: None };
        all.entry(parent.to_owned()).or_default().push(doubtful);
    }

    pub fn any(&self, parent: &str) -> bool {
        self.0.lock().unwrap().contains_key(parent)
    }

    /// Takes out of `children` (of `parent`, listed on session `generation`)
    /// the late nodes of doubtful tags, and deletes them in the background:
    /// the handles say when each is gone. For a shared prefix, the nodes
    /// stay in `children`, and `reads` says when the new ones of that prefix
    /// were read, and whether one was ours (then deleted).
    pub fn sweep(&self, session: &Session, parent: &str, generation: u64, children: &mut Vec<String>) -> Swept {
        let mut found = Vec::new();
        let mut unread = Vec::new();
        {
            let mut all = self.0.lock().unwrap();
            let Some(doubtful) = all.get_mut(parent) else { return Swept::default() };
            doubtful.retain(|d| !d.ephemeral || d.generation >= generation);
            let listed_on = |d: &Doubtful| !d.ephemeral || d.generation == generation;
            for late in doubtful.iter_mut().filter(|d| d.tag.token().is_some() && !d.deleting && listed_on(d)) {
                let listed: Vec<(i32, &String)> =
                    children.iter().filter_map(|c| Some((late.tag.sequence(c)?, c))).collect();
                // Nothing at or past what was read: the path was re-created
                // (its counter restarted): read them all.
                if let Some(read) = late.read_up_to {
                    if !listed.iter().any(|(s, _)| s.wrapping_sub(read) >= 0) {
                        late.read_up_to = None;
                    }
                }
                let new: Vec<(i32, &String)> = listed.into_iter().filter(|(s, _)| newer(*s, late.read_up_to)).collect();
                if let Some(top) = new.iter().map(|(s, _)| *s).reduce(|a, b| if newer(b, Some(a)) { b } else { a }) {
                    let names: Vec<String> = new.into_iter().map(|(_, c)| c.clone()).collect();
                    unread.push((names, top, late.tag.clone(), late.generation, late.ephemeral));
                }
            }
            children.retain(|child| {
                let ours =
                    |d: &&mut Doubtful| listed_on(d) && d.tag.token().is_none() && child.starts_with(d.tag.prefix());
                let Some(late) = doubtful.iter_mut().find(ours) else { return true };
                if !late.deleting {
                    late.deleting = true;
                    found.push((format!("{parent}/{child}"), late.tag.clone(), late.generation, late.ephemeral));
                }
                false
            });
            if doubtful.is_empty() {
                all.remove(parent);
            }
        }
        let removals = found
            .into_iter()
            .map(|(node, tag, generation, ephemeral)| {
                let removal = Removal { session: session.clone(), target: Target::Node(node), generation, ephemeral };
                remove_late(removal, parent, tag)
            })
            .collect();
        let reads = unread
            .into_iter()
            .map(|(names, top, tag, generation, ephemeral)| {
                let (session, parent) = (session.clone(), parent.to_owned());
                let late = Late { tag, generation, ephemeral };
                session.clone().spawn(async move {
                    let Some(removal) = read_for_token(&session, &parent, &names, top, &late).await else {
                        return false;
                    };
                    let _ = remove_late(removal, &parent, late.tag).await;
                    true
                })
            })
            .collect();
        Swept { removals, reads }
    }

    /// Records a read of doubtful `tag`'s nodes up to sequence `top`, and
    /// whether its node was found (to delete); `None` if the tag is no longer
    /// doubtful there, or its node is already being deleted.
    fn read(&self, parent: &str, tag: &Tag, top: i32, found: bool) -> Option<()> {
        let mut all = self.0.lock().unwrap();
        let doubtful = all.get_mut(parent)?.iter_mut().find(|d| d.tag == *tag && !d.deleting)?;
        if newer(top, doubtful.read_up_to) {
            doubtful.read_up_to = Some(top);
        }
        doubtful.deleting = found;
        Some(())
    }

    fn forget(&self, parent: &str, tag: &Tag) {
        let mut all = self.0.lock().unwrap();
        if let Some(doubtful) = all.get_mut(parent) {
            doubtful.retain(|d| d.tag != *tag);
            if doubtful.is_empty() {
                all.remove(parent);
            }
        }
    }

    /// Lists `parent` once, in the background, to sweep it (see
    /// [`DoubtfulTags::sweep`]); `None` if the session has no doubtful
    /// tag there. For when an attempt or a hold ends: a late node may
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
                        let swept =
                            Nodes::of(&session).doubtful.sweep(&session, &parent, live.generation, &mut children);
                        for removal in swept.removals {
                            let _ = removal.await;
                        }
                        for read in swept.reads {
                            let _ = read.await;
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

/// Deletes a late node found for doubtful `tag`, then forgets the tag.
fn remove_late(removal: Removal, parent: &str, tag: Tag) -> JoinHandle<()> {
    if let Some(persistent) = removal.persistent() {
        let doubtful = Target::Tagged { parent: parent.to_owned(), tag: tag.clone() };
        persistent.retarget(&doubtful, &removal.target);
    }
    let parent = parent.to_owned();
    removal.session.clone().spawn(async move {
        let session = removal.session.clone();
        removal.run().await;
        Nodes::of(&session).doubtful.forget(&parent, &tag);
    })
}

/// Reads `names` (children of `parent` with the doubtful tag's shared
/// prefix, `top` the newest) in one round trip, retried across connection
/// loss: the removal of the one that is the tag's node, if one is. Only a
/// read that succeeded moves the tag's `read_up_to`: names not read are
/// read at the next listing.
async fn read_for_token(session: &Session, parent: &str, names: &[String], top: i32, late: &Late) -> Option<Removal> {
    let (tag, generation, ephemeral) = (&late.tag, late.generation, late.ephemeral);
    loop {
        let live = session.live_for_removal().await.ok()?;
        if ephemeral && live.generation != generation {
            return None;
        }
        match read_tagged(&live, parent, names, tag, ephemeral).await {
            Ok(found) => {
                let found = found.map(|(name, _)| name);
                Nodes::of(session).doubtful.read(parent, tag, top, found.is_some())?;
                let target = Target::Node(format!("{parent}/{}", found?));
                return Some(Removal { session: session.clone(), target, generation, ephemeral });
            }
            // The pause only keeps a flapping connection from spinning.
            Err(err) if connection_lost(&err) => tokio::time::sleep(Duration::from_millis(20)).await,
            Err(_) => return None,
        }
    }
}

//! Queueing a lock node and waiting until it comes first: by a listing and
//! a watch on the node ahead, or on the session's mirror of the path.

use std::fmt::Write;
use std::future::Future;
use std::sync::Arc;

use zookeeper_client as zk;

use super::line::{Lines, Slot};
use super::{Lock, Step};
use crate::contender::{Attempt, NodeWatch, Nodes, Recovered};
use crate::error::{connection_lost, Error, Result};
use crate::holder::Acquire;
use crate::mirror::{Decision, Expected, ListAbove, Mirror};
use crate::naming::{self, Family, Role, Standing};
use crate::session::{boot_clock, detached_span, Live, WINDOW};
use crate::state::SessionState;

impl Lock {
    /// Queues one node and waits until it holds, its session ends, or the
    /// node is gone. Never reports a hold without our node there: a hold is
    /// decided by a listing that shows our node first in line, or by a
    /// deletion notice that alone would mean it (see [`Watched`]) followed by
    /// a read of our node. A node deleted while it waits (an operator) is
    /// noticed there, or at the listing after its predecessor goes.
    ///
    /// Every wait but the mirror's is boxed on its own: what this future
    /// keeps while a mirrored waiter is parked (issue 16) is what the create
    /// learned and a pointer; the node's name is the attempt's.
    pub(super) fn queue_once<'a>(
        &'a self,
        live: &'a Live,
        attempt: &'a mut Attempt,
        options: &'a Acquire,
        slot: Slot<'a>,
    ) -> impl Future<Output = Result<Step>> + Send + 'a {
        async move {
            // Boxed: the create's state is large and not needed while waiting.
            let Some((token, ahead)) = Box::pin(self.enqueue(live, attempt, options, slot)).await? else {
                return Ok(Step::SessionEnded);
            };
            crate::mirror::count_queued(matches!(ahead, Ahead::Mirror(..)));
            let (listed, watched) = match ahead {
                Ahead::Listed(children) => (Some(children), None),
                Ahead::Neighbour(neighbour) => (None, Some((neighbour, Watched::Neighbour))),
                Ahead::Mirror(mirror, expected) => {
                    match Box::pin(self.wait_mirrored(&mirror, expected, live, attempt, options)).await? {
                        Mirrored::Holds(deletion, waited) => {
                            let mut won = attempt.won_watched(token, NodeWatch::Mirror(deletion));
                            won.hands_over = Some(mirror);
                            return Ok(Step::Won(won.with_wait(waited)));
                        }
                        Mirrored::Step(step) => return Ok(step),
                        // The server refused the watch, or the mirror is deaf: list instead.
                        Mirrored::Refused => (None, None),
                    }
                }
            };
            Box::pin(self.wait_listed(live, attempt, token, options, listed, watched)).await
        }
    }

    /// [`Lock::queue_once`] by listings and a watch on the node ahead:
    /// `listed`, the children if a listing came with the create; `watched`,
    /// the node to watch first instead; neither, list first.
    fn wait_listed<'a>(
        &'a self,
        live: &'a Live,
        attempt: &'a mut Attempt,
        token: i64,
        options: &'a Acquire,
        mut listed: Option<Vec<String>>,
        mut watched: Option<(String, Watched)>,
    ) -> impl Future<Output = Result<Step>> + Send + 'a {
        async move {
            let name = attempt.name();
            // A watch on our node, set before the first wait that listens for
            // a release marker (`Wake::Released`); kept across listings while unchanged.
            let mut own: Option<zk::OneshotWatcher> = None;
            // Each read is boxed: inline, the largest would size the whole
            // future, which a listing waiter keeps for as long as it waits.
            if listed.is_none() && watched.is_none() {
                match Box::pin(self.list(live)).await? {
                    Some(children) => listed = Some(children),
                    None => return Ok(Step::SessionEnded),
                }
            }
            let mut waited = false;
            loop {
                if let Some(children) = listed.take() {
                    // Boxed, the children moved in and back: a waiter parks
                    // after it, and keeps none of it.
                    let Some(children) = Box::pin(self.settled(live, attempt, children)).await? else {
                        return Ok(Step::SessionEnded);
                    };
                    // The adaptive design mirrors again once the queue is short (mirror/mod.rs, point 9).
                    if let (Some((list_above, mirror_at_most)), Some(mirror)) =
                        (self.limits(live), self.spec.mirror.get())
                    {
                        mirror.listed(children.len(), list_above, mirror_at_most);
                    }
                    let role = self.spec.kind.role();
                    watched = match naming::standing(&children, name, role, &self.spec.config.extra_markers) {
                        Standing::Holds => {
                            // The hold keeps watching our node by the watch set while waiting, if unchanged.
                            let won = match unchanged(&mut own) {
                                true => attempt.won_watched(token, NodeWatch::Oneshot(own.take().expect("unchanged"))),
                                false => attempt.won(token),
                            };
                            return Ok(Step::Won(won.with_wait(waited)));
                        }
                        Standing::Missing => return Ok(Step::NodeGone),
                        Standing::Waits { .. } if !options.waits() => return Ok(Step::Taken),
                        Standing::Waits { predecessor, last_blocker } => {
                            let markers = &self.spec.config.extra_markers;
                            let ahead = || naming::queue(&children, markers).iter().position(|c| c.name == name);
                            tracing::debug!(
                                path = self.holder.path,
                                node = name,
                                predecessor,
                                ahead = ahead(),
                                "zoolock waits"
                            );
                            Some((predecessor, Watched::Listed { last_blocker }))
                        }
                    };
                }
                let (predecessor, how) = watched.take().expect("a predecessor to watch after a listing that waits");
                let path = naming::child_path(&self.holder.path, &predecessor);
                let own_node = self.hears_release(&predecessor).then(|| (attempt.node(), &mut own));
                let wake = Box::pin(self.await_deletion(live, &path, own_node)).await?;
                waited = true;
                let decisive = match (wake, how) {
                    (Wake::SessionEnded, _) => return Ok(Step::SessionEnded),
                    // Assumes the listing showed the predecessor right ahead of
                    // ours (or, `Neighbour`, this session made it there): a
                    // writer held only once first, and nothing can queue
                    // between it and us since. Its marker's notice came before
                    // its deletion's, in the transaction that deleted it and no
                    // other node (removal.rs, `release_marked`), and no notice
                    // of our node before either: our node was there then.
                    (Wake::Released, _) => {
                        let watch = NodeWatch::Oneshot(own.take().expect("a release is heard with our node watched"));
                        return Ok(Step::Won(attempt.won_watched(token, watch).with_wait(waited)));
                    }
                    (Wake::Relist, _) => false,
                    // Assumes the listing showed our node, so its incarnation of
                    // the path is ours: nodes created there since sort higher.
                    // The only lower blocker gone, whenever, nothing is ahead.
                    (Wake::Deleted | Wake::Gone, Watched::Listed { last_blocker: true }) => true,
                    // Assumes a node of this session that held saw every lower
                    // node gone; it sat below ours in the listing (our
                    // incarnation), and later nodes sort higher.
                    (Wake::Deleted | Wake::Gone, Watched::Listed { last_blocker: false }) => {
                        Lines::of(&self.holder.session).won_recently(&path)
                    }
                    // Assumes the predicted node existed when the watch was set,
                    // after our create: created before ours by this session, it
                    // shares our incarnation of the path, at the sequence right
                    // below ours; having held, it saw every lower node gone.
                    (Wake::Deleted, Watched::Neighbour) => Lines::of(&self.holder.session).won_recently(&path),
                    // Not there at all: the name may be an earlier incarnation's
                    // (the path deleted and re-created between the two creates),
                    // whose holding says nothing about this one.
                    (Wake::Gone, Watched::Neighbour) => false,
                };
                if decisive {
                    // Every shortcut above also assumes our node is still there.
                    match Box::pin(self.own_node(live, attempt.node())).await? {
                        Own::There(watch) => {
                            return Ok(Step::Won(
                                attempt.won_watched(token, NodeWatch::Oneshot(watch)).with_wait(waited),
                            ))
                        }
                        Own::Gone => return Ok(Step::NodeGone),
                        Own::SessionEnded => return Ok(Step::SessionEnded),
                        Own::Unknown => {}
                    }
                }
                listed = match Box::pin(self.list(live)).await? {
                    Some(children) => Some(children),
                    None => return Ok(Step::SessionEnded),
                };
            }
        }
    }

    /// Waits on the mirror until node `name` holds, is gone, or the session
    /// ends: decided on deletion notices alone (see [`crate::mirror`] for why
    /// that is exact). [`Mirrored::Refused`] if the server refused the watch
    /// or the mirror turned out deaf. Parked, it keeps the mirror's wake-up
    /// and the session's status: the read of a missing node is boxed.
    fn wait_mirrored<'a>(
        &'a self,
        mirror: &'a Mirror,
        mut expected: Option<Expected>,
        live: &'a Live,
        attempt: &'a Attempt,
        options: &'a Acquire,
    ) -> impl Future<Output = Result<Mirrored>> + Send + 'a {
        async move {
            let mut waited = false;
            loop {
                // Matched without a binding: nothing of the decision is kept while parked.
                let wake = match self.decide_mirrored(mirror, &mut expected, live, attempt) {
                    Decision::Holds(deletion, fresh) => {
                        // Not decided on our create's own evidence, nor on a
                        // hand-over's (mirror/mod.rs, points 8 and 11): the
                        // transaction that deleted the last node ahead may
                        // have deleted ours too (a multi, such as the CLI's
                        // `deleteall`), its notice not read yet. The read's reply
                        // comes after every notice of that transaction.
                        if !fresh {
                            match Box::pin(self.presence(live, attempt.node())).await? {
                                Own::There(()) => {}
                                Own::Gone => return Ok(Mirrored::Step(Step::NodeGone)),
                                Own::SessionEnded => return Ok(Mirrored::Step(Step::SessionEnded)),
                                // The mirror goes stale with the connection: decide again.
                                Own::Unknown => continue,
                            }
                        }
                        return Ok(Mirrored::Holds(deletion, waited));
                    }
                    // Our create's reply came and the mirror lacks our node: gone,
                    // or the mirror is deaf to creates (mirror/mod.rs, point 6). A read tells.
                    Decision::Missing => match Box::pin(self.presence(live, attempt.node())).await? {
                        Own::Gone => return Ok(Mirrored::Step(Step::NodeGone)),
                        Own::There(()) => {
                            mirror.blind();
                            return Ok(Mirrored::Refused);
                        }
                        Own::SessionEnded => return Ok(Mirrored::Step(Step::SessionEnded)),
                        Own::Unknown => continue,
                    },
                    // Boxed whole: the name it keeps across the read would size every parked waiter.
                    Decision::Mixed(node, family) => {
                        match Box::pin(self.refuse_or_pass(mirror, live, node, family)).await? {
                            Some(step) => return Ok(Mirrored::Step(step)),
                            None => continue,
                        }
                    }
                    Decision::SessionEnded => return Ok(Mirrored::Step(Step::SessionEnded)),
                    Decision::Broken | Decision::Dismissed => return Ok(Mirrored::Refused),
                    Decision::Waits(_) if !options.waits() => return Ok(Mirrored::Step(Step::Taken)),
                    Decision::Waits(wake) | Decision::Stale(wake) => wake,
                };
                // Looked at once the wake-up is registered: a change of the status
                // after this look wakes it (see `Mirror::wake_waiters`).
                let status = self.holder.session.status();
                if status.generation != live.generation
                    || matches!(status.state, SessionState::Lost | SessionState::Closed)
                {
                    return Ok(Mirrored::Step(Step::SessionEnded));
                }
                // Woken by a deletion, a rebuild or the status alike: decide again.
                let _ = wake.await;
                waited = true;
            }
        }
    }

    /// Whether `node`, of a `family` that would not see ours, contends: a
    /// node of a named library's format does; one of the
    /// [`Family::Other`] names only if ephemeral (a lock library's, such as
    /// zookeeper-client's shared prefixes), which a read tells — a
    /// persistent one is an operator's note that happens to end in digits.
    async fn contends(&self, live: &Live, node: &str, family: Family) -> Result<Own<bool>> {
        if family != Family::Other {
            return Ok(Own::There(true));
        }
        let path = naming::child_path(&self.holder.path, node);
        Own::of(&path, live.client.check_stat(&path).await.map(|stat| stat.map(|s| s.ephemeral_owner != 0)))
    }

    /// For a listing waiter: the refusal to queue beside a node of
    /// `children` whose library would not see ours (an error), or the
    /// children to decide on (listed again if the connection broke on a
    /// read); `None` when the session ended. Persistent nodes of the `Other`
    /// names are passed over, each found so by a read at each listing: they
    /// are rare.
    async fn foreign(&self, live: &Live, mut children: Vec<String>) -> Result<Option<Vec<String>>> {
        let (scheme, markers) = (self.spec.config.scheme, &self.spec.config.extra_markers);
        loop {
            let mut benign: Vec<String> = Vec::new();
            let broke = loop {
                let skip = |n: &str| benign.iter().any(|b| b == n);
                let Some((node, family)) = naming::unseen_by(&children, scheme, markers, skip) else { break false };
                let node = node.to_owned();
                match self.contends(live, &node, family).await? {
                    Own::There(true) => return Err(self.mixed(node, family)),
                    Own::There(false) | Own::Gone => benign.push(node),
                    Own::SessionEnded => return Ok(None),
                    Own::Unknown => break true,
                }
            };
            if !broke {
                return Ok(Some(children));
            }
            match self.list(live).await? {
                Some(listed) => children = listed,
                None => return Ok(None),
            }
        }
    }

    /// The children a listing waiter decides on: none of a library that
    /// would not see our node (refused), none of our late nodes (swept).
    /// Under a shared prefix a late node is told by a read: if one was ours,
    /// it is deleted by then and the path is listed again. `None`: the
    /// session ended.
    async fn settled(&self, live: &Live, attempt: &Attempt, mut children: Vec<String>) -> Result<Option<Vec<String>>> {
        loop {
            let Some(mut checked) = self.foreign(live, children).await? else { return Ok(None) };
            let reads = attempt.sweep_late(live.generation, &mut checked);
            if reads.is_empty() || !attempt.read_late(reads).await {
                return Ok(Some(checked));
            }
            match self.list(live).await? {
                Some(listed) => children = listed,
                None => return Ok(None),
            }
        }
    }

    /// For a mirrored waiter: the refusal to queue beside `node` (an error),
    /// the session's end, or `None` to decide again (the node is persistent
    /// and passed over from now on, gone, or the connection broke).
    async fn refuse_or_pass(&self, mirror: &Mirror, live: &Live, node: String, family: Family) -> Result<Option<Step>> {
        match self.contends(live, &node, family).await? {
            Own::There(true) => Err(self.mixed(node, family)),
            Own::There(false) | Own::Gone => {
                mirror.benign(node);
                Ok(None)
            }
            Own::SessionEnded => Ok(Some(Step::SessionEnded)),
            Own::Unknown => Ok(None),
        }
    }

    /// The refusal to queue beside `node`, whose library would not see ours:
    /// the attempt's error, so its node is removed like any failed acquire's.
    fn mixed(&self, node: String, family: Family) -> Error {
        let scheme = self.spec.config.scheme;
        tracing::warn!(
            path = self.holder.path,
            node,
            ?family,
            ?scheme,
            "zoolock refuses a path shared with another scheme"
        );
        Error::MixedSchemes { path: self.holder.path.clone(), node, family, scheme }
    }

    /// What the mirror says of our node now; `expected` goes once the
    /// decision was taken on a synced mirror (our entry is marked ours by then).
    fn decide_mirrored(
        &self,
        mirror: &Mirror,
        expected: &mut Option<Expected>,
        live: &Live,
        attempt: &Attempt,
    ) -> Decision {
        // Late nodes of this session's doubtful prefixes go, as from a listing.
        // No shared prefix mirrors (`Lock::mirror`): no reads to wait for.
        let sweep = |children: &mut Vec<String>| {
            let _ = attempt.sweep_late(live.generation, children);
        };
        let doubtful = Nodes::of(&self.holder.session).doubtful.any(&self.holder.path);
        let list_above = self.limits(live).map(|(list_above, _)| list_above);
        let role = self.spec.kind.role();
        let scheme = self.spec.config.scheme;
        let decision =
            mirror.decide(live.generation, attempt.name(), role, scheme, doubtful.then_some(&sweep), list_above);
        if !matches!(decision, Decision::Stale(_)) {
            drop(expected.take());
        }
        if matches!(decision, Decision::Dismissed) && list_above.is_some_and(|limit| !limit.weighed) {
            self.measure_round_trip(live);
        }
        decision
    }

    /// The adaptive design's limits for this session now (its round trip
    /// weighed, if known): `list_above` and `mirror_at_most`.
    fn limits(&self, live: &Live) -> Option<(ListAbove, u32)> {
        let adaptive = self.spec.config.adaptive?;
        let round_trip = live.round_trip.least();
        let limits = adaptive.at(round_trip);
        let weighed = adaptive.round_trip.is_none() || round_trip.is_some();
        Some((ListAbove { limit: limits.list_above, weighed }, limits.mirror_at_most))
    }

    /// Learns the session's round trip, unless known or being learnt: the
    /// mirror was dismissed by limits that may not have weighed it (point
    /// 9). Eight reads of the path in turn, in the background: listing
    /// waiters read only one or two each, and would take as many
    /// acquisitions to give it.
    fn measure_round_trip(&self, live: &Live) {
        if !live.round_trip.start_measuring() {
            return;
        }
        // This generation's client: its reads fail once the connection or the session is lost.
        let (live, path) = (live.clone(), self.holder.path.clone());
        let span = detached_span(tracing::debug_span!(parent: None, "round trip", path));
        self.holder.session.spawn_in(span, async move {
            for _ in 0..WINDOW {
                if live.timed_read(|client| client.check_stat(&path)).await.is_err() {
                    // A later dismissal measures again; listings' reads count meanwhile.
                    live.round_trip.stop_measuring();
                    return;
                }
            }
        });
    }

    /// Whether a listing waiter listens for `predecessor`'s release marker
    /// ([`Wake::Released`]). Only a writer's release marks itself. Not with
    /// `extra_markers`: the releaser held by its own view of the queue, which
    /// may lack a node these markers count. Not behind DistributedLock's
    /// shared `lock-` names: a stale release of a node of an earlier
    /// incarnation of the path deletes by a name that may have come back.
    fn hears_release(&self, predecessor: &str) -> bool {
        self.spec.config.extra_markers.is_empty()
            && !predecessor.starts_with(naming::DISTRIBUTED_LOCK_PREFIX)
            && naming::classify(predecessor, &[]).is_some_and(|(role, _)| role == Role::Writer)
    }

    /// Whether our node (its path) is there, by a read (no watch): for a
    /// mirrored waiter, whose mirror's watch already covers the node.
    async fn presence(&self, live: &Live, node: &str) -> Result<Own<()>> {
        Own::of(node, live.timed_read(|client| client.check_stat(node)).await.map(|stat| stat.map(drop)))
    }

    /// Whether our node (its path) is still there, leaving a data watch on it if so.
    async fn own_node(&self, live: &Live, node: &str) -> Result<Own<zk::OneshotWatcher>> {
        Own::of(
            node,
            live.timed_read(|client| client.get_and_watch_data(node)).await.map(|(_, _, watcher)| Some(watcher)),
        )
    }

    /// Creates our node and learns what is ahead of it; `None` when the
    /// session ended on the way. Usually the create and a listing of the
    /// children are pipelined: one round trip, answered in order.
    ///
    /// One shortcut skips the listing, whose size grows with the queue: when
    /// another node of this session, one that blocks ours, was queued on the
    /// path just before, ours most likely sits right behind it, and we watch
    /// the name it would have at our sequence minus one (see
    /// [`Lock::queue_once`]). A waiter queued behind its own process's
    /// contenders thus costs O(1), however long the queue.
    ///
    /// There is no shortcut for an uncontended acquire: "my node got the
    /// sequence after my last one, so nobody queued in between" is false once
    /// the path was deleted and re-created (its counter restarts), and ruling
    /// that out takes a read as costly as the pipelined listing.
    ///
    /// `slot` is held until this returns: the create's reply (and its
    /// recovery, if the reply was lost) is in by then.
    fn enqueue<'a>(
        &'a self,
        live: &'a Live,
        attempt: &'a mut Attempt,
        options: &'a Acquire,
        mut slot: Slot<'a>,
    ) -> impl Future<Output = Result<Option<(i64, Ahead)>>> + Send + 'a {
        async move {
            let parent = &self.holder.path;
            let role = self.spec.kind.role();
            // No mirror while the adaptive design has dismissed it (mirror/mod.rs, point 9).
            let mirror = self.mirror().filter(|mirror| mirror.prepare(self.spec.config.adaptive.is_some()));
            // The prefixes of this attempt's creates before the current one:
            // empty, and so no allocation, unless a create is tried again.
            let mut given_up: Vec<String> = Vec::new();
            loop {
                let tag = attempt.tag();
                let prefix = tag.prefix();
                // Room for the sequence's ten digits: the node's path is made in it.
                let mut prefix_path = String::with_capacity(parent.len() + 1 + prefix.len() + 10);
                write!(prefix_path, "{parent}/{prefix}").expect("a String takes any text");
                // Adapting, our node counts as ours from its create event on, until
                // our waiter decided on it (mirror/mod.rs, point 9).
                let mut expected =
                    mirror.as_ref().filter(|_| self.spec.config.adaptive.is_some()).map(|m| m.expect(prefix));
                // The create's options go once it is sent: the request is sent
                // when `create` is called, and its future borrows none of them.
                let (create, place, before) = {
                    let mode = match options.ephemeral {
                        true => zk::CreateMode::EphemeralSequential,
                        false => zk::CreateMode::PersistentSequential,
                    };
                    let create_options = mode.with_acls(zk::Acls::new(&self.holder.session.options().acls));
                    Lines::of(&self.holder.session).join_line(parent, prefix, role, || {
                        live.client.create(&prefix_path, &tag.data(&self.spec.config.identifier), &create_options)
                    })
                };
                slot.sent();
                // A create again (the parent was missing, or the first reply was
                // lost) finds its own earlier try last in line: no neighbour.
                let neighbour = before.filter(|(before, before_role)| {
                    mirror.is_none()
                        && options.waits()
                        && role.waits_for(*before_role)
                        && before != prefix
                        && !given_up.contains(before)
                        // Its name at a sequence is ours only if its prefix is unique.
                        && before != naming::DISTRIBUTED_LOCK_PREFIX
                });
                attempt.keep_place(place);
                // Mirrored, the mirror shows what is ahead once the create is answered.
                // Boxed: a mirrored create, the common one, needs no room for it.
                let list =
                    (mirror.is_none() && neighbour.is_none()).then(|| Box::pin(live.client.list_children(parent)));
                let created = create.await;
                let listed = match list {
                    Some(list) => list.await,
                    None => Err(zk::Error::ConnectionLoss),
                };
                let (node, token, sequence) = match created {
                    Ok((stat, sequence)) => {
                        // Sized exactly (but for a negative sequence's sign): the
                        // attempt keeps it for as long as it waits.
                        let mut node = prefix_path;
                        write!(node, "{sequence}").expect("a String takes any text");
                        (node, stat.czxid, Some(sequence.into_i64() as i32))
                    }
                    // Boxed: rare, and large for a future that every contender of a burst keeps at once.
                    Err(err) => {
                        // Tried with this prefix: a create again may find it last in line.
                        given_up.push(attempt.tag().prefix().to_owned());
                        match Box::pin(attempt.recover(live, err, || self.spec.kind.new_tag(self.spec.config.scheme)))
                            .await?
                        {
                            Recovered::Found { node, token } => (node, token, None),
                            Recovered::Again => continue,
                            Recovered::SessionEnded => return Ok(None),
                        }
                    }
                };
                attempt.created(node);
                let ahead = match (sequence, neighbour) {
                    _ if mirror.is_some() => Ahead::Mirror(mirror.expect("checked"), expected.take()),
                    (Some(sequence), Some((before, _))) => {
                        Ahead::Neighbour(format!("{before}{:010}", sequence.wrapping_sub(1)))
                    }
                    _ => match listed {
                        Ok(children) => Ahead::Listed(children),
                        Err(_) => match Box::pin(self.list(live)).await? {
                            Some(children) => Ahead::Listed(children),
                            None => return Ok(None),
                        },
                    },
                };
                return Ok(Some((token, ahead)));
            }
        }
    }

    /// The children of the lock path; `None` when the session ended.
    pub(super) async fn list(&self, live: &Live) -> Result<Option<Vec<String>>> {
        loop {
            match live.timed_read(|client| client.list_children(&self.holder.path)).await {
                Ok(children) => return Ok(Some(children)),
                Err(err) if connection_lost(&err) => continue,
                // The lock path itself was deleted: our node went with it.
                Err(zk::Error::NoNode) => return Ok(Some(Vec::new())),
                Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(None),
                Err(err) => return Err(Error::zk(&self.holder.path, "list", err)),
            }
        }
    }

    /// Waits until the predecessor at `path` changes. A data watch (`get`)
    /// leaves no watch behind when the node is already gone, unlike `exists`.
    ///
    /// With `own_node` (our node's path, and the watch on it kept by the
    /// waiter, set here first if it has none), it also listens for the
    /// predecessor's release marker: [`Wake::Released`] if the marker came
    /// before the deletion and nothing changed our node before either. The
    /// three requests go in this order: a notice of the transaction that
    /// deleted the predecessor comes after the marker's watch was set (or
    /// its deletion would have been there before the read, `Gone`, with the
    /// marker heard or not), and after our node's: a deletion of our node
    /// before that transaction was noticed (or read) first.
    fn await_deletion<'a>(
        &'a self,
        live: &'a Live,
        path: &'a str,
        own_node: Option<(&'a str, &'a mut Option<zk::OneshotWatcher>)>,
    ) -> impl Future<Output = Result<Wake>> + Send + 'a {
        async move {
            // Timed by hand: `Live::timed_read` would make the future a
            // parked listing waiter keeps 24 bytes larger.
            let sent = boot_clock();
            let (mut marker, own, predecessor) = match own_node {
                // Boxed: three requests in flight would size the future a waiter keeps parked.
                Some((node, own)) => {
                    let (marker, predecessor) = Box::pin(Self::watch_released(live, path, node, own)).await;
                    (marker, Some(own), predecessor)
                }
                None => (None, None, live.client.get_and_watch_data(path).await),
            };
            // Only the watch is kept while parked.
            let predecessor = predecessor.map(|(_, _, watcher)| watcher);
            let wake = match predecessor {
                Ok(watcher) => {
                    live.round_trip.record(sent);
                    let event = watcher.changed().await;
                    match event.event_type {
                        zk::EventType::NodeDeleted => Wake::Deleted,
                        zk::EventType::Session if event.session_state.is_terminated() => return Ok(Wake::SessionEnded),
                        _ => return Ok(Wake::Relist),
                    }
                }
                Err(zk::Error::NoNode) => {
                    live.round_trip.record(sent);
                    Wake::Gone
                }
                Err(err) if connection_lost(&err) => return Ok(Wake::Relist),
                Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(Wake::SessionEnded),
                Err(err) => return Err(Error::zk(path, "watch", err)),
            };
            // Delivered in the server's order: a marker sent before the deletion is here by now.
            let released = marker.take().and_then(|m| m.try_changed().ok()).map(|e| e.event_type);
            let heard = released == Some(zk::EventType::NodeCreated) && own.is_some_and(unchanged);
            Ok(if heard { Wake::Released } else { wake })
        }
    }
}

impl Lock {
    /// Sends, in this order, a watch on our node `node` unless `own` has
    /// one, a watch on the release marker of the predecessor at `path`, and
    /// the predecessor's read with a watch ([`Lock::await_deletion`]); returns
    /// the marker's watch, unless the marker was there (an operator's: no
    /// evidence) or a read failed, and the predecessor's read.
    async fn watch_released(
        live: &Live,
        path: &str,
        node: &str,
        own: &mut Option<zk::OneshotWatcher>,
    ) -> (Option<zk::OneshotWatcher>, std::result::Result<(Vec<u8>, zk::Stat, zk::OneshotWatcher), zk::Error>) {
        // Each request is sent when called.
        let read = own.is_none().then(|| live.client.get_and_watch_data(node));
        let marker = naming::release_marker(path);
        let marker = live.client.check_and_watch_stat(&marker);
        let predecessor = live.client.get_and_watch_data(path);
        if let Some(read) = read {
            *own = read.await.ok().map(|(_, _, watcher)| watcher);
        }
        let marker = marker.await.ok().and_then(|(stat, watcher)| stat.is_none().then_some(watcher));
        (marker.filter(|_| own.is_some()), predecessor.await)
    }
}

/// Whether the watch on our node is set and has not fired; one that has is dropped.
fn unchanged(own: &mut Option<zk::OneshotWatcher>) -> bool {
    match own.take().map(zk::OneshotWatcher::try_changed) {
        Some(Err(watcher)) => {
            *own = Some(watcher);
            true
        }
        _ => false,
    }
}

/// How a wait on the mirror ended.
enum Mirrored {
    /// Our node is first in line; the deletion notice of our node, and whether it waited.
    Holds(crate::mirror::Deletion, bool),
    Step(Step),
    /// The server refused the watch, the mirror is deaf, or the adaptive
    /// design dismissed it: list instead.
    Refused,
}

/// What a contender learned about the nodes ahead of its own when queueing.
enum Ahead {
    Listed(Vec<String>),
    /// The name the session's previous node in line has if it sits right before ours.
    Neighbour(String),
    /// The session's mirror of the path shows it (see [`crate::mirror`]).
    Mirror(Arc<Mirror>, Option<Expected>),
}

enum Wake {
    /// The node was deleted while watched: it existed when the watch was set.
    Deleted,
    /// The node went by its holder's release (its marker came first), our
    /// node unchanged: ours holds ([`Lock::await_deletion`]).
    Released,
    /// The node was not there when the watch was to be set.
    Gone,
    Relist,
    SessionEnded,
}

/// Which node a contender watches, and so what that node's deletion alone
/// may tell it (see [`Lock::queue_once`]).
#[derive(Clone, Copy)]
enum Watched {
    /// The name the session's previous node in line has if it sits right before ours.
    Neighbour,
    /// The nearest blocker of a listing that showed our node; `last_blocker`:
    /// the only one.
    Listed { last_blocker: bool },
}

/// Our own node, read before a hold decided by a deletion notice: there
/// (with what the read left on it, such as a watch), gone, or unknown.
enum Own<T> {
    There(T),
    Gone,
    /// The connection broke on the way: decide again (list, or ask the mirror).
    Unknown,
    SessionEnded,
}

impl<T> Own<T> {
    /// What a read of our node `node` says; `None` or `NoNode`: gone.
    fn of(node: &str, read: std::result::Result<Option<T>, zk::Error>) -> Result<Own<T>> {
        match read {
            Ok(Some(found)) => Ok(Own::There(found)),
            Ok(None) | Err(zk::Error::NoNode) => Ok(Own::Gone),
            Err(err) if connection_lost(&err) => Ok(Own::Unknown),
            Err(zk::Error::SessionExpired | zk::Error::ClientClosed) => Ok(Own::SessionEnded),
            Err(err) => Err(Error::zk(node, "read", err)),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::mem::size_of_val;

    use super::*;
    use crate::contender::{Removal, Removals, Target};
    use crate::session::Session;
    use crate::SessionOptions;

    /// A queued waiter keeps, besides its handle and its node's entry in
    /// the mirror, three boxed futures: the acquire, `contend` and
    /// `wait_mirrored` (issue 16; a listing waiter `wait_listed` and
    /// `await_deletion` instead of the last). Each is as large as its largest
    /// state; these bounds catch a state that grows them back (the three
    /// were 536, 312 and 208 bytes while they were `async fn`s, which keep
    /// their arguments twice, and 912, 944 and 600 before issue 16).
    const ACQUIRE_BOUND: usize = 424;
    const CONTEND_BOUND: usize = 256;
    const MIRRORED_BOUND: usize = 128;
    /// A listing waiter's own wait (288 B as an `async fn`, 488 B before its
    /// first listing and its read of our node were boxed) and its
    /// predecessor's watch (224 B as an `async fn`); `enqueue` is kept by
    /// every create in flight, all of a burst's at once (616 B while it kept
    /// its arguments twice, the create's options and room for a listing;
    /// 536 B with rustc 1.95.0, of which the create's own future is 216).
    /// A listing waiter that listens for its predecessor's release marker
    /// keeps a watch on its own node (wait_listed: 208 → 240 B) and on the
    /// marker (await_deletion: 216 → 320 B).
    const LISTED_BOUND: usize = 248;
    const DELETION_BOUND: usize = 328;
    const ENQUEUE_BOUND: usize = 544;

    #[tokio::test(flavor = "multi_thread")]
    async fn the_futures_of_a_parked_waiter_stay_small() {
        let connect = zk_harness::shared().connect_string();
        let session = Session::connect(SessionOptions::new(&connect)).await.unwrap();
        let path = format!("/zoolock-tests{}", zk_harness::unique_path("future-sizes"));
        let lock = Lock::mutex(&session, &path).unwrap();
        let options = Acquire::default();
        let outcome = lock.acquire_outcome(options.clone());
        let acquire = size_of_val(&*outcome);
        drop(outcome);
        let contend = size_of_val(&lock.contend(&options, Removals::default()));
        let live = session.live().await.unwrap();
        let attempt = Attempt::new(removal_of(&session, &path, live.generation), &Removals::default());
        let mirror = lock.mirror().unwrap();
        let mirrored = size_of_val(&lock.wait_mirrored(&mirror, None, &live, &attempt, &options));
        let ahead = Some(("x-0000000000".to_owned(), Watched::Neighbour));
        let mut listing = Attempt::new(removal_of(&session, &path, live.generation), &Removals::default());
        let listed = size_of_val(&lock.wait_listed(&live, &mut listing, 1, &options, None, ahead));
        let mut own = None;
        let deletion = size_of_val(&lock.await_deletion(&live, "/x", Some(("/y", &mut own))));
        let slot = Lines::of(&session).try_create_slot().unwrap();
        let enqueue = size_of_val(&lock.enqueue(&live, &mut listing, &options, slot));
        eprintln!(
            "a parked waiter's futures: acquire {acquire} B, contend {contend} B, wait_mirrored {mirrored} B, \
             wait_listed {listed} B, await_deletion {deletion} B; a create in flight: enqueue {enqueue} B"
        );
        assert!(acquire <= ACQUIRE_BOUND, "the acquire future: {acquire} bytes");
        assert!(contend <= CONTEND_BOUND, "contend: {contend} bytes");
        assert!(mirrored <= MIRRORED_BOUND, "wait_mirrored: {mirrored} bytes");
        assert!(listed <= LISTED_BOUND, "wait_listed: {listed} bytes");
        assert!(deletion <= DELETION_BOUND, "await_deletion: {deletion} bytes");
        assert!(enqueue <= ENQUEUE_BOUND, "enqueue: {enqueue} bytes");
        drop((attempt, listing));
        session.close().await;
    }

    fn removal_of(session: &Session, path: &str, generation: u64) -> Removal {
        let tag = crate::naming::Tag::unique("x-".into());
        let target = Target::Tagged { parent: path.to_owned(), tag };
        Removal { session: session.clone(), target, generation, ephemeral: true }
    }
}

//! A lock handle's decision rules (`core/src/recipe/lock/`, `holder/`,
//! `contender/`), one message at a time. Every place where the old and the new
//! rules differ reads a flag of [`Rules`].

use std::collections::VecDeque;

use crate::zk::{Body, Msg, Name, Op, OpKind, Prefix, Role};
use crate::{Recipe, Rules, State};

/// Where a handle's program stands: what it waits for next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Pc {
    /// No acquire in progress (done once `left` is 0).
    Idle,
    /// `enqueue`: the create (and, when `list`, the pipelined listing) sent.
    AwaitCreate { list: bool },
    /// The create answered; its pipelined listing still to come.
    AwaitCreateList { outcome: Created },
    /// `mkdir` of the missing parent (`enqueue`, NoNode arm).
    AwaitMkdir,
    /// `find_own` after a create's reply was lost.
    FindOwn,
    /// `Lock::list`, then `naming::standing`.
    AwaitList,
    /// `await_deletion`: the `get_and_watch_data` on the predecessor sent
    /// (`release_marker`: after the read of our node and the marker's `exists`).
    /// `line`: the predecessor is the name predicted by the session's line.
    AwaitWatch { pred: Name, last_blocker: bool, line: bool, marker: Marker },
    /// The watch is set; waiting for its event.
    Waiting { pred: Name, last_blocker: bool, line: bool, marker: Marker },
    /// New rules: a shortcut's `get_and_watch_data(own)` before holding.
    AwaitOwnRead,
    /// Believes it holds (`Holder::install` .. `release` or `lose`).
    Holding { watch: OwnWatch },
    /// `Holder::release`: the delete of the node sent.
    Releasing,
    /// Mirror: waits for the deletion of `on` in the session's mirror, or
    /// (`None`) for the mirror's rebuild (`Decision::Waits`, `Decision::Stale`).
    MirrorWait { on: Option<Name> },
    /// Mirror: our node is not in the mirror after our create's reply
    /// (`Decision::Missing`): `check_stat` of our node sent.
    AwaitCheck,
    /// Mirror: holds after a wake; `check_stat` of our node sent (point 8).
    AwaitHoldCheck,
    /// Removing nodes of doubtful prefixes (`Removal` with `Target::Tagged`):
    /// listing (or deleting) the `at`-th one.
    Sweep { then: Then, at: u8, deleting: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Created {
    Yes,
    NoParent,
    Lost,
}

/// The holder's watch on its own node (issue 10, item 11).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OwnWatch {
    None,
    Pending,
    Armed,
    /// The mirror's notice of its deletion (`NodeWatch::Mirror`).
    Mirror,
}

/// A listing waiter's watch on its own node, set before it listens for a
/// release marker and kept across listings (`wait_listed`'s `own`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kept {
    None,
    /// The read is out.
    Pending,
    Armed,
    /// Its NodeDeleted came: the next look drops it (`unchanged`).
    Fired,
}

/// The exists watch on the predecessor's release marker, for one wait (`await_deletion`'s `marker`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Marker {
    /// Not listened for: a reader ahead, or the rule off.
    Off,
    Pending,
    Armed,
    /// NodeCreated came.
    Heard,
}

/// Why a waiter on the mirror was woken (`mirror::Woken`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Woken {
    Deleted,
    Stale,
}

/// What follows a sweep: queueing again (`Step::NodeGone`) or the end of the acquire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Then {
    Retry,
    Finish,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Client {
    pub pc: Pc,
    /// Messages produced for this client and not processed yet, in order.
    pub inbox: VecDeque<Msg>,
    /// Acquisitions still to make.
    pub left: u8,
    /// The current prefix is `Prefix { client, n: prefix_n }`.
    pub prefix_n: u8,
    pub node: Option<Name>,
    /// The node's czxid, its fencing token.
    pub token: Option<u8>,
    /// Prefixes whose create's reply was lost and whose node was not found
    /// (`Attempt::renew_tag`): per attempt in main; for the session's life in the new rules.
    pub doubtful: Vec<u8>,
    /// This handle's place in its session's line is alive (`join_line`'s `place`).
    pub in_line: bool,
    /// The session's previous node in line, if it blocks ours (`enqueue`'s `neighbour`), and its role.
    pub neighbour: Option<(Prefix, Role)>,
    /// Old rules: `Spec::uncontended_next`, and its value taken for this attempt.
    pub expected: Option<u8>,
    pub expect_now: Option<u8>,
    /// Old rules: `Spec::won_at_once`.
    pub won_at_once: Option<u8>,
    pub waited: bool,
    /// This attempt waits on the mirror (`enqueue`'s `mirror`: on, and not dismissed).
    pub mirroring: bool,
    /// Woken by the mirror, not yet run.
    pub woken: Option<Woken>,
    /// The watch on our node a listing waiter keeps (`release_marker`).
    pub kept: Kept,
}

impl Client {
    pub fn new(acquisitions: u8) -> Client {
        Client {
            pc: Pc::Idle,
            inbox: VecDeque::new(),
            left: acquisitions,
            prefix_n: 0,
            node: None,
            token: None,
            doubtful: Vec::new(),
            in_line: false,
            neighbour: None,
            expected: None,
            expect_now: None,
            won_at_once: None,
            waited: false,
            mirroring: false,
            woken: None,
            kept: Kept::None,
        }
    }

    pub fn holds(&self) -> bool {
        matches!(self.pc, Pc::Holding { .. })
    }

    pub fn done(&self) -> bool {
        self.pc == Pc::Idle && self.left == 0
    }

    /// Whether the handle holds a watch on `name`, its node, by a reply that arrived.
    pub fn keeps(&self, name: Name) -> bool {
        self.kept == Kept::Armed && self.node == Some(name)
    }
}

/// One client's step, with the model's configuration at hand.
pub struct Ctx<'a> {
    pub m: &'a Recipe,
    pub st: &'a mut State,
    pub c: u8,
    /// The ghost bit of the message being processed.
    pub own_present: bool,
}

impl Ctx<'_> {
    fn me(&mut self) -> &mut Client {
        &mut self.st.clients[self.c as usize]
    }

    fn rules(&self) -> Rules {
        self.m.rules
    }

    fn role(&self) -> Role {
        self.m.clients[self.c as usize].role
    }

    fn session(&self) -> usize {
        self.m.clients[self.c as usize].session as usize
    }

    fn prefix(&self) -> Prefix {
        Prefix { client: self.c, n: self.st.clients[self.c as usize].prefix_n }
    }

    fn own(&self) -> Name {
        self.st.clients[self.c as usize].node.expect("a node")
    }

    fn send(&mut self, op: Op) {
        let s = self.session();
        self.st.sessions[s].requests.push_back(crate::zk::Request { client: self.c, op });
    }

    fn goto(&mut self, pc: Pc) {
        self.me().pc = pc;
    }

    /// `Lock::acquire` → `contend`.
    pub fn start(&mut self) {
        self.me().left -= 1;
        self.begin_attempt();
    }

    /// The top of `contend`'s loop: a fresh prefix, a new `Attempt`.
    fn begin_attempt(&mut self) {
        let (fast_path, keep_doubtful) = (self.rules().fast_path, self.rules().doubtful_kept);
        let me = self.me();
        me.prefix_n += 1;
        me.node = None;
        me.token = None;
        if !keep_doubtful {
            // main: `Attempt::doubtful` dies with the attempt.
            me.doubtful.clear();
        }
        me.waited = false;
        me.in_line = false;
        me.woken = None;
        me.kept = Kept::None;
        me.expect_now = if fast_path { me.expected.take() } else { None };
        self.enqueue();
    }

    /// The top of `enqueue`'s loop: `join_line`, the create and maybe the listing.
    fn enqueue(&mut self) {
        let (c, s, role, prefix) = (self.c, self.session(), self.role(), self.prefix());
        let line = self.st.sessions[s].line;
        let before = line.filter(|(owner, _, _)| self.st.clients[*owner as usize].in_line);
        self.st.sessions[s].line = Some((c, prefix, role));
        let own_never_before = self.rules().doubtful_own;
        // `Mirror::prepare`: an adaptive handle lists while the mirror is dismissed.
        let mirror = self.rules().mirror && !self.st.sessions[s].mirror.dismissed;
        let neighbour = before
            .filter(|(owner, _, r)| !mirror && role.waits_for(*r) && !(own_never_before && *owner == c))
            .map(|(_, p, r)| (p, r));
        let me = self.me();
        me.in_line = true;
        me.neighbour = neighbour;
        me.mirroring = mirror;
        let list = !mirror && me.expect_now.is_none() && neighbour.is_none();
        self.send(Op::Create(prefix, role));
        if list {
            self.send(Op::List);
        }
        if mirror {
            // `Mirror::prepare`: likely built by the time the create is answered.
            let m = self.m;
            m.start_resync(self.st, s as u8, c);
        }
        self.goto(Pc::AwaitCreate { list });
    }

    pub fn on_message(&mut self, msg: Msg) {
        self.own_present = msg.own_present;
        let pc = self.st.clients[self.c as usize].pc;
        if msg.body == Body::SessionEnded {
            return self.session_ended(pc);
        }
        let (m, s, c) = (self.m, self.session() as u8, self.c);
        if m.resync_reply(self.st, s, c, &msg.body) {
            return;
        }
        // The kept watch hears its node's deletion whatever the handle is doing.
        if let Body::Deleted(n) = msg.body {
            if self.st.clients[c as usize].keeps(n) {
                self.me().kept = Kept::Fired;
            }
        }
        let pending = self.st.clients[c as usize].kept == Kept::Pending;
        match (pc, msg.body) {
            (Pc::AwaitCreate { list }, body) => {
                let outcome = match body {
                    Body::Created(name, czxid) => {
                        self.me().node = Some(name);
                        self.me().token = Some(czxid);
                        Created::Yes
                    }
                    Body::NoParent(OpKind::Create) => Created::NoParent,
                    Body::ConnLoss(OpKind::Create) => Created::Lost,
                    _ => return,
                };
                if list {
                    self.goto(Pc::AwaitCreateList { outcome });
                } else {
                    self.created(outcome, None);
                }
            }
            (Pc::AwaitCreateList { outcome }, body @ (Body::Children(_) | Body::NoParent(_) | Body::ConnLoss(_))) => {
                self.created(outcome, Some(body))
            }
            (Pc::AwaitMkdir, Body::MkdirDone | Body::ConnLoss(OpKind::Mkdir)) => self.enqueue(),
            (Pc::FindOwn, Body::Children(children)) => {
                let prefix = self.prefix();
                match children.iter().find(|(n, _)| n.prefix == prefix) {
                    Some((name, _)) => {
                        // `check_stat` gives the czxid (a ghost here: read off the tree).
                        let token = self.st.tree.czxid(*name);
                        self.me().node = Some(*name);
                        self.me().token = token;
                        if self.me().mirroring {
                            return self.mirror_decide();
                        }
                        self.relist();
                    }
                    None => self.renew(),
                }
            }
            // `find_own` on a missing parent: the old code fails the acquire
            // (and its removals give up, leaving a late create behind).
            (Pc::FindOwn, Body::NoParent(_)) if self.rules().doubtful_own => self.renew(),
            (Pc::FindOwn, Body::NoParent(_)) => {
                self.me().in_line = false;
                self.finish();
            }
            (Pc::FindOwn, Body::ConnLoss(_)) => self.send(Op::List),
            (Pc::AwaitList, Body::Children(children)) => self.standing(children),
            // `Lock::list`: the lock path itself is gone, and our node with it.
            (Pc::AwaitList, Body::NoParent(_)) => self.node_gone(),
            (Pc::AwaitList, Body::ConnLoss(_)) => self.send(Op::List),
            // The read of our node, answered first (`watch_released`).
            (Pc::AwaitWatch { .. }, Body::Exists(n)) if pending && n == self.own() => self.me().kept = Kept::Armed,
            (Pc::AwaitWatch { .. }, Body::Absent(n)) if pending && n == self.own() => self.me().kept = Kept::None,
            (Pc::AwaitWatch { .. }, Body::ConnLoss(OpKind::Get)) if pending => self.me().kept = Kept::None,
            (Pc::AwaitWatch { pred, marker: Marker::Pending, .. }, Body::NoMarker(n)) if n == pred => {
                self.marker(Marker::Armed)
            }
            (Pc::AwaitWatch { .. }, Body::ConnLoss(OpKind::Marker)) => self.marker(Marker::Off),
            (
                Pc::AwaitWatch { pred, marker: Marker::Armed, .. } | Pc::Waiting { pred, marker: Marker::Armed, .. },
                Body::MarkerCreated(n),
            ) if n == pred => self.marker(Marker::Heard),
            (Pc::AwaitWatch { pred, last_blocker, line, marker }, Body::Exists(n)) if n == pred => {
                self.goto(Pc::Waiting { pred, last_blocker, line, marker })
            }
            (Pc::AwaitWatch { marker, .. }, Body::Absent(n)) if self.heard_release(marker, n) => self.won_released(),
            (Pc::AwaitWatch { pred, last_blocker, line, .. }, Body::Absent(n)) if n == pred => {
                if line && !self.rules().line_nonode_is_deletion {
                    self.relist()
                } else {
                    self.deleted(pred, last_blocker, line)
                }
            }
            (Pc::AwaitWatch { .. }, Body::ConnLoss(OpKind::Get)) => self.relist(),
            (Pc::Waiting { marker, .. }, Body::Deleted(n)) if self.heard_release(marker, n) => self.won_released(),
            (Pc::Waiting { pred, last_blocker, line, .. }, Body::Deleted(n)) if n == pred => {
                self.deleted(pred, last_blocker, line)
            }
            (Pc::AwaitOwnRead, Body::Exists(n)) if n == self.own() => self.won(OwnWatch::Armed, None),
            (Pc::AwaitOwnRead, Body::Absent(n)) if n == self.own() => self.node_gone(),
            (Pc::AwaitOwnRead, Body::ConnLoss(OpKind::Get)) => self.relist(),
            (Pc::Holding { watch: OwnWatch::Pending }, Body::Exists(n)) if n == self.own() => {
                self.goto(Pc::Holding { watch: OwnWatch::Armed })
            }
            (Pc::Holding { watch: OwnWatch::Pending }, Body::Absent(n)) if n == self.own() => self.lost(),
            (Pc::Holding { watch: OwnWatch::Pending }, Body::ConnLoss(OpKind::Get)) => {
                let own = self.own();
                self.send(Op::GetWatch(own));
            }
            (Pc::Holding { watch: OwnWatch::Armed }, Body::Deleted(n)) if n == self.own() => self.lost(),
            (Pc::AwaitCheck, Body::Stat(n, true)) if n == self.own() => {
                // The mirror is deaf to creates (mirror/mod.rs, point 6): list from now on.
                let (m, s) = (self.m, self.session() as u8);
                m.blind(self.st, s);
                self.relist()
            }
            (Pc::AwaitCheck | Pc::AwaitHoldCheck, Body::Stat(n, false)) if n == self.own() => self.node_gone(),
            (Pc::AwaitCheck | Pc::AwaitHoldCheck, Body::ConnLoss(OpKind::Check)) => self.mirror_decide(),
            // The ghost bit of the read's reply is the evidence. The hold's
            // deletion notice was taken at the decision (`Decision::Holds`):
            // what the mirror heard during the read reaches the hold now.
            (Pc::AwaitHoldCheck, Body::Stat(n, true)) if n == self.own() => {
                let mirror = &self.st.sessions[self.session()].mirror;
                let stale = mirror.broken || mirror.dismissed || !mirror.synced;
                let deleted = !mirror.names.iter().any(|(name, _)| *name == n);
                self.won(OwnWatch::Mirror, None);
                if stale {
                    self.on_wake(Woken::Stale);
                } else if deleted {
                    self.on_wake(Woken::Deleted);
                }
            }
            (Pc::Releasing, Body::DeleteDone) => self.released(),
            // The next node went: a plain delete.
            (Pc::Releasing, Body::HandOverRefused) => {
                let own = self.own();
                self.send(Op::Delete(own));
            }
            (Pc::Releasing, Body::ConnLoss(OpKind::Delete)) => {
                let own = self.own();
                self.send(Op::Delete(own));
            }
            (Pc::Sweep { then, at, deleting: false }, Body::Children(children)) => {
                let doubtful = Prefix { client: self.c, n: self.st.clients[self.c as usize].doubtful[at as usize] };
                match children.iter().find(|(n, _)| n.prefix == doubtful) {
                    Some((name, _)) => {
                        self.send(Op::Delete(*name));
                        self.goto(Pc::Sweep { then, at, deleting: true });
                    }
                    None => self.sweep_next(then, at),
                }
            }
            // `find_own` fails on a missing parent: the old removal gives up,
            // the new one finds nothing; both move on.
            (Pc::Sweep { then, at, deleting: false }, Body::NoParent(_)) => self.sweep_next(then, at),
            (Pc::Sweep { deleting: false, .. }, Body::ConnLoss(_)) => self.send(Op::List),
            (Pc::Sweep { then, at, deleting: true }, Body::DeleteDone) => {
                if self.rules().doubtful_kept {
                    // A prefix names one create: once its node is deleted, nothing more can land.
                    self.me().doubtful.remove(at as usize);
                    return self.sweep_at(then, at);
                }
                self.sweep_next(then, at)
            }
            // `Removal::run` retries from `find_own`.
            (Pc::Sweep { then, at, deleting: true }, Body::ConnLoss(_)) => {
                self.send(Op::List);
                self.goto(Pc::Sweep { then, at, deleting: false });
            }
            // Replies to requests given up on, events of watches no longer waited on.
            _ => {}
        }
    }

    /// After the create (and its pipelined listing) answered.
    fn created(&mut self, outcome: Created, listed: Option<Body>) {
        match outcome {
            Created::Yes => self.ahead(listed),
            Created::NoParent => {
                // The parent is made on first use; then the create is sent again, same prefix.
                self.send(Op::Mkdir);
                self.goto(Pc::AwaitMkdir);
            }
            Created::Lost => {
                self.send(Op::List);
                self.goto(Pc::FindOwn);
            }
        }
    }

    /// `attempt.renew_tag`: the create may still land under the old prefix.
    fn renew(&mut self) {
        let me = self.me();
        let old = me.prefix_n;
        me.doubtful.push(old);
        me.prefix_n += 1;
        self.enqueue();
    }

    /// `enqueue`'s `ahead`, then `queue_once`.
    fn ahead(&mut self, listed: Option<Body>) {
        let own = self.own();
        let me = self.me();
        // Old rules: the next-sequence fast path (`Spec::uncontended_next`).
        if me.expect_now == Some(own.seq) {
            return self.won(OwnWatch::None, Some(Some(own.seq)));
        }
        if let Some((prefix, role)) = me.neighbour {
            // The same-session line: the name the previous node in line has if it sits right before ours.
            let pred = Name { prefix, seq: own.seq.wrapping_sub(1) };
            return self.await_deletion(pred, role, false, true);
        }
        if self.me().mirroring {
            return self.mirror_decide();
        }
        match listed {
            Some(Body::Children(children)) => self.standing(children),
            _ => self.relist(),
        }
    }

    /// `wait_mirrored`'s loop: `Mirror::decide` on the mirror as it is (every
    /// event produced before the message being processed already read).
    fn mirror_decide(&mut self) {
        let (m, s, c, role, own) = (self.m, self.session(), self.c, self.role(), self.own());
        let mirror = &self.st.sessions[s].mirror;
        if mirror.broken || mirror.dismissed {
            return self.relist();
        }
        if !mirror.synced {
            m.start_resync(self.st, s as u8, c);
            return self.goto(Pc::MirrorWait { on: None });
        }
        if !mirror.names.iter().any(|(n, _)| *n == own) {
            if self.rules().mirror_missing_reads {
                self.send(Op::Check(own));
                return self.goto(Pc::AwaitCheck);
            }
            // The broken variant: the mirror trusted, our node taken for gone.
            return self.node_gone();
        }
        // Late nodes of our doubtful prefixes: no contenders, deleted (`sweep`).
        let doubtful = self.st.clients[c as usize].doubtful.clone();
        let ours = |n: &Name| n.prefix.client == c && doubtful.contains(&n.prefix.n);
        let names = self.st.sessions[s].mirror.names.clone();
        for (name, _) in names.iter().filter(|(n, _)| ours(n)) {
            self.send(Op::DeleteQuiet(*name));
        }
        let position = names.iter().position(|(n, _)| *n == own).expect("checked");
        let predecessor = names[..position].iter().rev().find(|(n, r)| role.waits_for(*r) && !ours(n)).map(|(n, _)| *n);
        match predecessor {
            // Holds, but not on our create's own evidence (point 8): read our node.
            None if self.rules().mirror_wake_reads_own && !self.st.sessions[s].mirror.fresh.contains(&own) => {
                self.send(Op::Check(own));
                self.goto(Pc::AwaitHoldCheck)
            }
            None => {
                // Ghost: the evidence is the mirror, as of the last change it shows.
                self.own_present = self.st.sessions[s].mirror.truth.contains(&own);
                self.won(OwnWatch::Mirror, None)
            }
            Some(pred) => self.goto(Pc::MirrorWait { on: Some(pred) }),
        }
    }

    /// A wake-up from the mirror, run.
    pub fn on_wake(&mut self, woken: Woken) {
        self.own_present = false;
        match (self.st.clients[self.c as usize].pc, woken) {
            (Pc::MirrorWait { .. }, _) => {
                self.me().waited = true;
                self.mirror_decide()
            }
            (Pc::Holding { watch: OwnWatch::Mirror }, Woken::Deleted) => self.lost(),
            // Gone stale: the holder watches its node itself.
            (Pc::Holding { watch: OwnWatch::Mirror }, Woken::Stale) => {
                let own = self.own();
                self.send(Op::GetWatch(own));
                self.goto(Pc::Holding { watch: OwnWatch::Pending });
            }
            _ => {}
        }
    }

    fn relist(&mut self) {
        self.send(Op::List);
        self.goto(Pc::AwaitList);
    }

    /// `naming::standing` on a listing, and what `queue_once` does with it.
    fn standing(&mut self, mut children: Vec<(Name, Role)>) {
        let (c, role, own) = (self.c, self.role(), self.own());
        if self.rules().doubtful_own {
            // New rules: late nodes of our doubtful prefixes are ours: not in our way, and deleted.
            let doubtful = self.st.clients[c as usize].doubtful.clone();
            let ours = |n: &Name| n.prefix.client == c && doubtful.contains(&n.prefix.n);
            for (name, _) in children.iter().filter(|(n, _)| ours(n)) {
                self.send(Op::DeleteQuiet(*name));
            }
            children.retain(|(n, _)| !ours(n));
        }
        let Some(position) = children.iter().position(|(n, _)| *n == own) else {
            return self.node_gone();
        };
        let blockers: Vec<Name> =
            children[..position].iter().filter(|(_, r)| role.waits_for(*r)).map(|(n, _)| *n).collect();
        match blockers.last() {
            None => {
                let at_once = if self.st.clients[c as usize].waited { None } else { Some(own.seq) };
                // The hold keeps the watch set while waiting, if unchanged (`unchanged`).
                let watch = if self.me().kept == Kept::Armed { OwnWatch::Armed } else { OwnWatch::None };
                self.won(watch, Some(at_once))
            }
            Some(&pred) => {
                let role = children.iter().find(|(n, _)| *n == pred).map_or(Role::Writer, |(_, r)| *r);
                self.await_deletion(pred, role, blockers.len() == 1, false)
            }
        }
    }

    /// `await_deletion` on `pred`: with release markers and a writer ahead,
    /// first a watch on our node (unless one is kept) and one on the
    /// marker's name (`watch_released`), all three back to back.
    fn await_deletion(&mut self, pred: Name, role: Role, last_blocker: bool, line: bool) {
        self.me().waited = true;
        let marker = match self.rules().release_marker && role == Role::Writer {
            true => {
                if self.me().kept == Kept::None {
                    let own = self.own();
                    self.send(Op::GetWatch(own));
                    self.me().kept = Kept::Pending;
                }
                self.send(Op::WatchMarker(pred));
                Marker::Pending
            }
            false => Marker::Off,
        };
        self.send(Op::GetWatch(pred));
        self.goto(Pc::AwaitWatch { pred, last_blocker, line, marker });
    }

    /// The wait's watch on the predecessor's marker is `to` now.
    fn marker(&mut self, to: Marker) {
        if let Pc::AwaitWatch { marker, .. } | Pc::Waiting { marker, .. } = &mut self.me().pc {
            *marker = to;
        }
    }

    /// `Wake::Released`: `n`, the predecessor, went after its marker was
    /// heard, and the watch on our node, set before the marker's, has not
    /// fired (`unchanged`: a fired one is dropped). Then our node was there
    /// when the predecessor went as a holder in a transaction that deleted
    /// no other node: nothing is ahead of ours.
    fn heard_release(&mut self, marker: Marker, n: Name) -> bool {
        let pred = match self.st.clients[self.c as usize].pc {
            Pc::AwaitWatch { pred, .. } | Pc::Waiting { pred, .. } => pred,
            _ => return false,
        };
        if n != pred || marker != Marker::Heard {
            return false;
        }
        match self.me().kept {
            Kept::Armed => true,
            Kept::Fired => {
                self.me().kept = Kept::None;
                // The broken variant: the watch was set, its firing ignored.
                !self.rules().released_checks_own
            }
            Kept::None | Kept::Pending => false,
        }
    }

    /// Holds on a release heard, keeping the watch on our node as the hold's.
    fn won_released(&mut self) {
        let watch = if self.me().kept == Kept::Armed { OwnWatch::Armed } else { OwnWatch::None };
        self.won(watch, None)
    }

    /// `Wake::Deleted` for the predecessor: one of the deletion-notice
    /// shortcuts, or a listing.
    fn deleted(&mut self, pred: Name, last_blocker: bool, line: bool) {
        let rules = self.rules();
        let winner = self.st.sessions[self.session()].winners.contains(&pred);
        let last_blocker = last_blocker && !line;
        let unchecked = (last_blocker && !rules.last_blocker_reads_own) || (winner && !rules.winner_reads_own);
        if unchecked {
            return self.won(OwnWatch::None, None);
        }
        if last_blocker || winner {
            // New rules: a request sent after the notice; its answer is newer than the notice.
            let own = self.own();
            self.send(Op::GetWatch(own));
            return self.goto(Pc::AwaitOwnRead);
        }
        self.relist()
    }

    /// `Step::Won` → `record_winner` → `Holder::install`. `at_once`: `Some`
    /// when the win came from a listing (`won_at_once` is written there only).
    fn won(&mut self, watch: OwnWatch, at_once: Option<Option<u8>>) {
        if !self.own_present {
            self.st.decided_on_gone.get_or_insert(self.c);
        }
        let (s, own) = (self.session(), self.own());
        // The token (czxid) is known from the create's or `check_stat`'s Stat. A hold decided on old
        // news (its node already gone) may come with a lower token after a newer holder's: that is
        // what fencing rejects. One decided while its node exists must carry the highest token yet.
        if let Some(token) = self.st.clients[self.c as usize].token {
            let (any, writers) = self.st.tokens;
            let after = if self.role() == Role::Writer { any } else { writers };
            self.st.token_went_back |= self.st.tree.has(own) && token <= after;
            let writers = if self.role() == Role::Writer { writers.max(token) } else { writers };
            self.st.tokens = (any.max(token), writers);
        }
        if self.role() == Role::Writer && !self.st.sessions[s].winners.contains(&own) {
            let winners = &mut self.st.sessions[s].winners;
            winners.push(own);
            winners.sort();
        }
        let fast_path = self.rules().fast_path;
        if let (true, Some(at_once)) = (fast_path, at_once) {
            self.me().won_at_once = at_once;
        }
        // The waiter's watch on our node is the hold's now, or dropped.
        self.me().kept = Kept::None;
        let watch = match watch {
            OwnWatch::None if self.rules().holder_watch => {
                // Pipelined, not awaited: the uncontended path stays at one create and one delete.
                self.send(Op::GetWatch(own));
                OwnWatch::Pending
            }
            watch => watch,
        };
        self.goto(Pc::Holding { watch });
    }

    /// `Lock::release`: the handle stops believing, then deletes its node;
    /// a hold on the mirror hands the lock over to the next node in it
    /// (`Mirror::successor`: a reader does not hand over to a reader).
    pub fn release(&mut self) {
        let (own, role, s) = (self.own(), self.role(), self.session());
        let hands_over = self.rules().mirror_hand_over && self.me().mirroring;
        let mirror = &self.st.sessions[s].mirror;
        let usable = mirror.synced && !mirror.broken && !mirror.dismissed;
        let next = match hands_over && usable {
            true => {
                let after = mirror.names.iter().skip_while(|(n, _)| *n != own).nth(1);
                after.filter(|(_, r)| role.waits_for(*r)).map(|(n, _)| *n)
            }
            false => None,
        };
        let op = match next {
            Some(next) => Op::HandOver(own, next),
            // A writer held only once first in line: its release can say so
            // (`HandOver::Released`), unless it held on the mirror, whose
            // sessions would all hear the marker for no listing waiter.
            None if self.rules().release_marker && role == Role::Writer && !hands_over => Op::ReleaseMarked(own),
            None => Op::Delete(own),
        };
        self.send(op);
        self.goto(Pc::Releasing);
    }

    fn released(&mut self) {
        let fast_path = self.rules().fast_path;
        let own = self.own();
        let me = self.me();
        me.in_line = false;
        if fast_path && me.won_at_once.take() == Some(own.seq) {
            me.expected = Some(own.seq + 1);
        }
        self.sweep(Then::Finish);
    }

    /// The node went while held (`LockState::Lost`).
    fn lost(&mut self) {
        self.me().in_line = false;
        if self.rules().doubtful_own {
            self.sweep(Then::Finish)
        } else {
            // `Holder::lose` spawns no removals for this reason.
            self.finish()
        }
    }

    /// `Step::NodeGone`: queue again, after the attempt's removals.
    fn node_gone(&mut self) {
        // Ghost: a node given up while it is there stays, ours, until the session ends.
        if self.st.clients[self.c as usize].node.is_some_and(|n| self.st.tree.has(n)) {
            self.st.gave_up_present.get_or_insert(self.c);
        }
        self.me().in_line = false;
        self.sweep(Then::Retry);
    }

    /// `Step::SessionEnded`: ephemeral nodes went with the session; queue
    /// again on the next one. A holder was told at once (`Holder::session_changed`).
    fn session_ended(&mut self, pc: Pc) {
        let me = self.me();
        me.in_line = false;
        me.doubtful.clear();
        match pc {
            Pc::Idle | Pc::Holding { .. } => {}
            Pc::Releasing | Pc::Sweep { then: Then::Finish, .. } => {
                if pc == Pc::Releasing {
                    self.released();
                }
                self.finish();
            }
            _ => self.begin_attempt(),
        }
    }

    fn sweep(&mut self, then: Then) {
        if self.st.clients[self.c as usize].doubtful.is_empty() {
            return self.then(then);
        }
        self.send(Op::List);
        self.goto(Pc::Sweep { then, at: 0, deleting: false });
    }

    fn sweep_next(&mut self, then: Then, at: u8) {
        self.sweep_at(then, at + 1)
    }

    fn sweep_at(&mut self, then: Then, at: u8) {
        if at as usize >= self.st.clients[self.c as usize].doubtful.len() {
            return self.then(then);
        }
        self.send(Op::List);
        self.goto(Pc::Sweep { then, at, deleting: false });
    }

    fn then(&mut self, then: Then) {
        match then {
            Then::Retry => self.begin_attempt(),
            Then::Finish => self.finish(),
        }
    }

    /// The acquire (or the hold) is over.
    pub fn finish(&mut self) {
        let keep_doubtful = self.rules().doubtful_kept;
        let me = self.me();
        me.pc = Pc::Idle;
        me.node = None;
        me.token = None;
        if !keep_doubtful {
            me.doubtful.clear();
        }
        me.neighbour = None;
        me.waited = false;
        me.in_line = false;
        me.woken = None;
        me.kept = Kept::None;
        me.expect_now = None;
    }
}

//! A model of zoolock's lock recipe over ZooKeeper's semantics, checked
//! exhaustively with stateright's BFS checker for small configurations
//! (issue 10, "A model of the recipe, model-checked").
//!
//! [`zk`] is the server: one lock path, its sequential children, data
//! watches, sessions and faults. [`client`] is a lock handle's decision rules,
//! in two versions selected by [`Rules`]: [`Rules::OLD`] (main as of the
//! issue) and [`Rules::NEW`] (the fixes being made on branch `recipe`);
//! [`Rules::MIRROR`] is issue 16's default waiter, deciding on the session's
//! mirror of the children ([`mirror`]); [`Rules::RELEASED`] adds release
//! markers to the listing rules (commit 0c637c9): a writer's release marks
//! its transaction, and the listing waiter behind it holds on the deletion
//! without a read, if its own node's watch has not fired.
//!
//! The properties (see [`Recipe::properties`]):
//! - `exclusive`: at most one client believes it holds while its node is
//!   present (readers may share with readers);
//! - `holder told`: no client believes it holds with no node of its own once it
//!   has processed everything sent to it and has no request outstanding;
//! - `decided on a present node`: a hold is decided only on a message
//!   produced while the client's node existed (else the acquire returns true
//!   for a hold already gone — issue 10, items 2 and 10);
//! - `fencing tokens increase`: a writer's hold decided while its node exists
//!   has a token (czxid) above every hold decided before, a reader's above
//!   every writer's (`Lock::fencing_token`). Decided on old news (its node
//!   already gone), a hold can carry a lower token than one decided before it;
//!   a fenced resource rejects it;
//! - `never waits on its own node`: a watch set on a node of its own (a
//!   late create, issue 10 item 6) would wait until the session ends;
//! - `mirror exact`: after each transaction it read, a session's mirror is the
//!   set of children then (`core/src/mirror/mod.rs`'s proof);
//! - `gives up only a gone node`: a handle queues again (NodeGone) only once
//!   its node is gone, else the node stays until its session ends;
//! - `nobody stuck`, `no orphan`: when nothing but a fault could happen next,
//!   every acquire has finished and no lock node is left.

pub mod client;
pub mod mirror;
pub mod zk;

use std::fmt::Write as _;

use stateright::{Model, Property};

use client::{Client, Ctx, Pc};
use zk::{Body, Event, Msg, Name, Op, OpKind, PathWatch, Request, Role, SessionState, Tree};

/// The decision rules; each flag is one rule that changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// `Lock::enqueue`: a handle that held at once and deleted its own node
    /// expects the next sequence; if its create gets it, it holds without listing.
    pub fast_path: bool,
    /// `queue_once`, `last_blocker`: before holding on the deletion of the only
    /// lower blocker, read our own node (a request after the notice).
    pub last_blocker_reads_own: bool,
    /// `queue_once`, `won_recently`: likewise before holding on the deletion
    /// of a predecessor this session recorded as a winner.
    pub winner_reads_own: bool,
    /// `await_deletion` on the name the session's line predicts: NoNode
    /// counts as a deletion (old). Else only the event of a watch set while
    /// the node existed does; NoNode relists.
    pub line_nonode_is_deletion: bool,
    /// `Holder`: a holder watches its own node and reports Lost on its deletion (item 11).
    pub holder_watch: bool,
    /// After a lost create reply (items 5, 6): late nodes of doubtful
    /// prefixes are ours: left out of the standing and deleted when listed,
    /// never taken for the line's predecessor, swept when the hold ends even
    /// if lost; a missing parent during `find_own` means "not found".
    pub doubtful_own: bool,
    /// The handle remembers its doubtful prefixes until their node is found
    /// and deleted or the session ends, not only for the attempt
    /// (main's `Attempt::doubtful`; now the session's `DoubtfulTags`, per
    /// lock path): a late node can land after the attempt's sweep,
    /// right ahead of the next attempt's node.
    pub doubtful_kept: bool,
    /// Waiters decide on the session's mirror of the path (issue 16's
    /// default, `LockConfig::mirror`) instead of listing and watching the
    /// predecessor; the listing rules remain its fallback.
    pub mirror: bool,
    /// Mirror: a `Disconnected` makes the mirror stale until a new watch and
    /// listing (mirror/mod.rs, point 3). Else it is trusted as it was.
    pub mirror_resync: bool,
    /// Mirror: `addWatch` is sent before the listing (point 1). Else after.
    pub mirror_watch_first: bool,
    /// Mirror: our node missing from the mirror after our create's reply is
    /// read before it counts as gone (point 6). Else the mirror is trusted.
    pub mirror_missing_reads: bool,
    /// Mirror: a waiter that holds on a mirror that applied a deletion since
    /// its node's create event (a wake, or a deletion drained before its
    /// create's reply) reads its own node first (point 8): one multi may have
    /// deleted it too, its notice not read yet. Else the mirror is trusted.
    pub mirror_wake_reads_own: bool,
    /// Adaptive: dismissing the mirror wakes its waiters and holds, which
    /// list or watch their node (point 9). Else they stay parked on it.
    pub adaptive_wakes: bool,
    /// Mirror: a release of a hold decided on the mirror hands the lock over
    /// to the next node in it (point 11): one transaction checks that node,
    /// creates and deletes its marker, and deletes ours; the next waiter,
    /// its mirror having applied the marker and then that deletion, holds
    /// without reading its node.
    pub mirror_hand_over: bool,
    /// The hand-over's transaction deletes our node last. Else first (before
    /// the check and the marker): the marker then says nothing of the deletion that follows it.
    pub hand_over_deletes_last: bool,
    /// Release markers (`removal.rs`, `release_marked`; `queue.rs`,
    /// `Wake::Released`): a writer's release of a hold not decided on the mirror deletes its node
    /// in one multi with the create and delete of `<node>.released`; a listing
    /// waiter whose predecessor is a writer watches, in this order, its own
    /// node (unless it keeps an unfired watch on it), that marker's name and
    /// the predecessor, and holds on the deletion with no read if the marker
    /// came first and its own watch has not fired. Else the listing rules.
    pub release_marker: bool,
    /// Release markers: the waiter holds only if its own node's watch, set
    /// before the marker's, has not fired. Else a watch that fired is
    /// ignored: its node may have gone before the release.
    pub released_checks_own: bool,
}

impl Rules {
    /// main, as issue 10 found it.
    pub const OLD: Rules = Rules {
        fast_path: true,
        last_blocker_reads_own: false,
        winner_reads_own: false,
        line_nonode_is_deletion: true,
        holder_watch: false,
        doubtful_own: false,
        doubtful_kept: false,
        mirror: false,
        mirror_resync: true,
        mirror_watch_first: true,
        mirror_missing_reads: true,
        mirror_wake_reads_own: true,
        adaptive_wakes: true,
        mirror_hand_over: false,
        hand_over_deletes_last: true,
        release_marker: false,
        released_checks_own: true,
    };
    /// What branch `recipe` implements.
    pub const NEW: Rules = Rules {
        fast_path: false,
        last_blocker_reads_own: true,
        winner_reads_own: true,
        line_nonode_is_deletion: false,
        holder_watch: true,
        doubtful_own: true,
        doubtful_kept: true,
        mirror: false,
        mirror_resync: true,
        mirror_watch_first: true,
        mirror_missing_reads: true,
        mirror_wake_reads_own: true,
        adaptive_wakes: true,
        mirror_hand_over: false,
        hand_over_deletes_last: true,
        release_marker: false,
        released_checks_own: true,
    };
    /// The mirror design (`core/src/mirror/mod.rs`), on the new rules.
    pub const MIRROR: Rules = Rules { mirror: true, mirror_hand_over: true, ..Rules::NEW };
    /// The listing rules with release markers (commit 0c637c9).
    pub const RELEASED: Rules = Rules { release_marker: true, ..Rules::NEW };
}

/// How many faults of each kind may happen on one path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Faults {
    /// A connection breaks: replies not yet read are lost, requests not yet
    /// applied are dropped (or held back, see `late`); all fail with ConnectionLoss.
    pub conn_loss: u8,
    /// Of those dropped creates, how many land late instead.
    pub late: u8,
    pub expire: u8,
    /// An operator deletes one node.
    pub delete_node: u8,
    /// An operator deletes the lock path with its children, as one multi.
    pub delete_all: u8,
    /// The same, highest node first: a multi's order is its caller's (the
    /// CLI's `deleteall` goes by its own listing).
    pub delete_all_descending: u8,
    /// The empty lock path is deleted (a reaped CONTAINER, a cleanup job).
    pub reap: u8,
    /// A data watch of the session on the lock path that zoolock did not
    /// announce deafens the mirror's watch (ZOOKEEPER-4466), while the
    /// session's handles are idle (a waiter on a deaf mirror would wait forever).
    pub deafen: u8,
    /// zoolock sets a data watch on the lock path (`Session::data_watch`):
    /// it blinds the session's mirror first, then the watch deafens it.
    pub data_watch: u8,
    /// The adaptive design dismisses the session's synced mirror (a waiter
    /// saw a long queue); a dismissed mirror comes back for the next
    /// acquisition whenever (a listing saw a short queue). Point 9.
    pub dismiss: u8,
}

#[derive(Clone, Copy, Debug)]
pub struct ClientSpec {
    pub session: u8,
    pub role: Role,
    pub acquisitions: u8,
}

/// The model: clients on sessions, their rules, the faults allowed.
#[derive(Clone, Debug)]
pub struct Recipe {
    pub clients: Vec<ClientSpec>,
    pub sessions: u8,
    pub rules: Rules,
    pub faults: Faults,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct State {
    pub tree: Tree,
    pub sessions: Vec<SessionState>,
    pub clients: Vec<Client>,
    /// Faults still allowed on this path.
    pub budget: Faults,
    /// Ghost: the first client that decided a hold on a message produced
    /// after its node was gone.
    pub decided_on_gone: Option<u8>,
    /// Ghost: the highest fencing token (czxid) of any hold decided so far,
    /// and of any writer's; and whether a hold was decided on a token not
    /// above those it must follow.
    pub tokens: (u8, u8),
    pub token_went_back: bool,
    /// Ghost: the first session whose mirror, at the end of a transaction
    /// it read, differed from the children then.
    pub mirror_wrong: Option<u8>,
    /// Ghost: the first client that gave up its node (to queue again) while it was there.
    pub gave_up_present: Option<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// A client calls `acquire`.
    Acquire(u8),
    /// A holder calls `release`.
    Release(u8),
    /// A client processes the next message sent to it.
    Deliver(u8),
    /// The server applies a session's next request.
    Apply(u8),
    /// A create held back on a lost connection lands: (session, index).
    Land(u8, u8),
    /// Session's connection breaks; `Some(i)`: its i-th pending request, a
    /// create, is held back and lands later.
    ConnLoss(u8, Option<u8>),
    Expire(u8),
    /// The client of a session reads the next event of the mirror's watch.
    Pump(u8),
    /// A waiter or holder woken by the mirror runs.
    Wake(u8),
    /// A data watch on the lock path deafens the session's watch.
    Deafen(u8),
    /// zoolock's own data watch on the lock path: blind, then deaf.
    DataWatch(u8),
    /// The adaptive design dismisses the session's mirror.
    Dismiss(u8),
    /// The adaptive design lets the session's next acquisition mirror again.
    Restore(u8),
    DeleteNode(Name),
    DeleteAll,
    DeleteAllDescending,
    Reap,
}

impl Recipe {
    fn session_of(&self, c: u8) -> u8 {
        self.clients[c as usize].session
    }

    /// The clients of session `s`.
    pub(crate) fn clients_of(&self, s: u8) -> impl Iterator<Item = u8> + '_ {
        (0..self.clients.len() as u8).filter(move |&c| self.session_of(c) == s)
    }

    /// Sends `body` to client `c`, with the ghost bit.
    fn post(&self, st: &mut State, c: u8, body: Body) {
        let prefix = zk::Prefix { client: c, n: st.clients[c as usize].prefix_n };
        let own_present = st.tree.has_prefix(prefix);
        let after = st.sessions[self.session_of(c) as usize].events.len() as u8;
        st.clients[c as usize].inbox.push_back(Msg { body, own_present, after });
    }

    fn delete(&self, st: &mut State, name: Name) {
        self.delete_many(st, vec![name]);
    }

    /// Deletes several nodes in one transaction: every event is produced after it.
    fn delete_many(&self, st: &mut State, names: Vec<Name>) {
        let mut fired = Vec::new();
        let mut changes = Vec::new();
        for name in names {
            if let Some(role) = st.tree.role(name) {
                changes.push((name, role, false));
            }
            fired.extend(st.tree.delete(name).into_iter().map(|c| (c, name)));
        }
        self.notify(st, &changes);
        for (c, name) in fired {
            self.post(st, c, Body::Deleted(name));
        }
    }

    fn create(&self, st: &mut State, s: u8, prefix: zk::Prefix, role: Role) -> Option<Name> {
        let name = st.tree.create(prefix, role, s)?;
        self.notify(st, &[(name, role, true)]);
        Some(name)
    }

    fn apply(&self, st: &mut State, s: u8, req: Request) {
        let body = match req.op {
            Op::Create(prefix, role) => match self.create(st, s, prefix, role) {
                Some(name) => Body::Created(name, st.tree.created),
                None => Body::NoParent(OpKind::Create),
            },
            Op::List if st.tree.parent => Body::Children(st.tree.children()),
            Op::List => Body::NoParent(OpKind::List),
            Op::GetWatch(name) if st.tree.has(name) => {
                st.tree.watch(req.client, name);
                Body::Exists(name)
            }
            Op::GetWatch(name) => Body::Absent(name),
            Op::Delete(name) => {
                self.delete(st, name);
                Body::DeleteDone
            }
            Op::DeleteQuiet(name) => return self.delete(st, name),
            // `Removal::hand_over`: all or nothing.
            Op::HandOver(_, next) if !st.tree.has(next) => Body::HandOverRefused,
            Op::HandOver(own, next) => {
                if st.tree.has(own) {
                    // The marker's create takes a sequence number, as any child's does.
                    st.tree.counter += 1;
                    if !self.rules.hand_over_deletes_last {
                        self.delete(st, own);
                    }
                    self.notify_marker(st, next);
                    if self.rules.hand_over_deletes_last {
                        self.delete(st, own);
                    }
                }
                Body::DeleteDone
            }
            // Never there between transactions: the watch is set on a missing name.
            Op::WatchMarker(name) => {
                st.tree.watch_marker(req.client, name);
                Body::NoMarker(name)
            }
            // `release_marked`: one multi, its notices in its operations' order:
            // the marker's NodeCreated, then the node's NodeDeleted. Gone already: NoNode, done.
            Op::ReleaseMarked(own) => {
                if st.tree.has(own) {
                    // The marker's create takes a sequence number, as any child's does.
                    st.tree.counter += 1;
                    for c in st.tree.create_marker(own) {
                        self.post(st, c, Body::MarkerCreated(own));
                    }
                    self.delete(st, own);
                }
                Body::DeleteDone
            }
            Op::Check(name) => Body::Stat(name, st.tree.has(name)),
            Op::AddWatch => {
                st.sessions[s as usize].path_watch = PathWatch::Live(0);
                Body::Watching
            }
            Op::MirrorList => {
                let produced = match st.sessions[s as usize].path_watch {
                    PathWatch::Live(produced) => produced,
                    _ => 0,
                };
                Body::MirrorChildren(st.tree.children(), produced)
            }
            Op::Mkdir => {
                if !st.tree.parent {
                    st.tree.parent = true;
                    st.tree.counter = 0;
                }
                Body::MkdirDone
            }
        };
        self.post(st, req.client, body);
    }

    /// The connection of session `s` breaks.
    fn conn_loss(&self, st: &mut State, s: u8, late: Option<u8>) {
        let pending: Vec<Request> = st.sessions[s as usize].requests.drain(..).collect();
        // The server drops the mirror's watch with the connection; events not
        // read are lost, and the client reads a `Disconnected` instead.
        let session = &mut st.sessions[s as usize];
        session.path_watch = PathWatch::None;
        session.events.clear();
        if self.rules.mirror {
            session.events.push_back(Event::Disconnected);
        }
        let after = session.events.len() as u8;
        for c in self.clients_of(s) {
            let inbox: Vec<Msg> = st.clients[c as usize].inbox.drain(..).collect();
            let mut errors = Vec::new();
            let mut events = Vec::new();
            let mut unknown_watches = Vec::new();
            let mut unknown_markers = Vec::new();
            for msg in inbox {
                let kind = match msg.body {
                    Body::Deleted(name) => {
                        // An event of a watch whose reply is lost too: the client never had it.
                        if !unknown_watches.contains(&name) {
                            events.push(msg);
                        }
                        continue;
                    }
                    Body::MarkerCreated(name) => {
                        if !unknown_markers.contains(&name) {
                            events.push(msg);
                        }
                        continue;
                    }
                    // Told by the client library itself: not on the wire.
                    Body::SessionEnded => {
                        errors.push(msg);
                        continue;
                    }
                    // A watch the client holds by an earlier reply (a waiter's
                    // on its node, read again) survives: zookeeper-client sets it again.
                    Body::Exists(name) if st.clients[c as usize].keeps(name) => OpKind::Get,
                    Body::Exists(name) => {
                        st.tree.watches.retain(|w| *w != (c, name));
                        unknown_watches.push(name);
                        OpKind::Get
                    }
                    Body::NoMarker(name) => {
                        st.tree.markers.retain(|w| *w != (c, name));
                        unknown_markers.push(name);
                        OpKind::Marker
                    }
                    Body::Absent(_) => OpKind::Get,
                    Body::Created(..) | Body::NoParent(OpKind::Create) => OpKind::Create,
                    Body::Children(_) | Body::NoParent(_) => OpKind::List,
                    Body::DeleteDone | Body::HandOverRefused => OpKind::Delete,
                    Body::MkdirDone => OpKind::Mkdir,
                    Body::Stat(..) => OpKind::Check,
                    Body::Watching => OpKind::AddWatch,
                    Body::MirrorChildren(..) => OpKind::MirrorList,
                    Body::ConnLoss(kind) => kind,
                };
                errors.push(Msg { body: Body::ConnLoss(kind), own_present: false, after });
            }
            for (i, req) in pending.iter().enumerate().filter(|(_, r)| r.client == c) {
                if late == Some(i as u8) {
                    st.sessions[s as usize].late.push(*req);
                }
                if !matches!(req.op, Op::DeleteQuiet(_)) {
                    errors.push(Msg { body: Body::ConnLoss(req.op.kind()), own_present: false, after });
                }
            }
            let events = events.into_iter().map(|msg| Msg { after, ..msg });
            st.clients[c as usize].inbox = errors.into_iter().chain(events).collect();
        }
    }

    /// Session `s` expires; its clients learn it at once (one connection tells them all).
    fn expire(&self, st: &mut State, s: u8) {
        let ours: Vec<u8> = self.clients_of(s).collect();
        st.tree.watches.retain(|(c, _)| !ours.contains(c));
        st.tree.markers.retain(|(c, _)| !ours.contains(c));
        // The mirror's watch ends with the session; its next generation builds it again.
        let session = &mut st.sessions[s as usize];
        session.path_watch = PathWatch::None;
        session.events.clear();
        let (broken, dismissed) = (session.mirror.broken, session.mirror.dismissed);
        session.mirror = zk::Mirror { broken, dismissed, ..zk::Mirror::default() };
        let ephemeral: Vec<Name> = st.tree.nodes.iter().filter(|n| n.session == s).map(|n| n.name).collect();
        self.delete_many(st, ephemeral);
        let session = &mut st.sessions[s as usize];
        session.requests.clear();
        session.late.clear();
        for c in ours {
            let client = &mut st.clients[c as usize];
            client.inbox.clear();
            client.woken = None;
            match client.pc {
                Pc::Idle => {}
                Pc::Holding { .. } => Ctx { m: self, st, c, own_present: false }.finish(),
                _ => client.inbox.push_back(Msg { body: Body::SessionEnded, own_present: false, after: 0 }),
            }
        }
    }

    /// Whether anything but a fault can happen next.
    pub fn progress_possible(&self, st: &State) -> bool {
        st.clients
            .iter()
            .any(|c| c.holds() || !c.inbox.is_empty() || c.woken.is_some() || (c.pc == Pc::Idle && c.left > 0))
            || st.sessions.iter().any(|s| !s.requests.is_empty() || !s.late.is_empty() || !s.events.is_empty())
    }

    fn node_present(st: &State, c: &Client) -> bool {
        c.node.is_some_and(|n| st.tree.has(n))
    }

    /// A few lines per state, for printing counterexamples.
    pub fn describe(&self, st: &State) -> String {
        let mut out = String::new();
        let nodes: Vec<String> = st.tree.nodes.iter().map(|n| format!("{:?}", n.name)).collect();
        let parent = if st.tree.parent { "path" } else { "no path" };
        let _ = write!(out, "      tree: {parent} [{}] next #{}", nodes.join(" "), st.tree.counter);
        for (i, c) in st.clients.iter().enumerate() {
            let node = c.node.map_or("-".to_string(), |n| format!("{n:?}"));
            let _ = write!(out, "\n      c{i}: {:?} node={node}", c.pc);
            if c.kept != client::Kept::None {
                let _ = write!(out, " own watch={:?}", c.kept);
            }
            if let Some(woken) = c.woken {
                let _ = write!(out, " woken={woken:?}");
            }
            if !c.inbox.is_empty() {
                let inbox: Vec<String> = c.inbox.iter().map(|m| format!("{:?}", m.body)).collect();
                let _ = write!(out, " inbox=[{}]", inbox.join(", "));
            }
        }
        for (s, session) in st.sessions.iter().enumerate() {
            if !session.requests.is_empty() || !session.late.is_empty() {
                let _ = write!(out, "\n      s{s} sent={:?} late={:?}", session.requests, session.late);
            }
            if !session.winners.is_empty() {
                let _ = write!(out, "\n      s{s} winners={:?}", session.winners);
            }
            if self.rules.mirror {
                let m = &session.mirror;
                let names: Vec<Name> = m.names.iter().map(|(n, _)| *n).collect();
                let state = match (m.broken, m.synced, m.resyncing) {
                    (true, ..) => "broken",
                    _ if m.dismissed => "dismissed",
                    (_, true, _) => "synced",
                    (_, _, true) => "resyncing",
                    _ => "stale",
                };
                let events: Vec<String> = session
                    .events
                    .iter()
                    .map(|e| match e {
                        Event::Child { name, created: true, .. } => format!("+{name:?}"),
                        Event::Child { name, .. } => format!("-{name:?}"),
                        Event::Marker(name) => format!("marker {name:?}"),
                        Event::Disconnected => "Disconnected".to_string(),
                    })
                    .collect();
                let _ = write!(
                    out,
                    "\n      s{s} watch={:?} mirror={state} {names:?} events=[{}]",
                    session.path_watch,
                    events.join(" ")
                );
            }
        }
        out
    }

    /// A counterexample path: each action, then the state it leads to.
    pub fn explain(&self, path: &stateright::Path<State, Action>) -> String {
        let steps = path.clone().into_vec();
        let mut out = String::new();
        for (i, (_, action)) in steps.iter().enumerate() {
            if let Some(action) = action {
                let _ = writeln!(out, "  {:>2}. {action:?}\n{}", i + 1, self.describe(&steps[i + 1].0));
            }
        }
        out
    }
}

impl Model for Recipe {
    type State = State;
    type Action = Action;

    fn init_states(&self) -> Vec<State> {
        vec![State {
            tree: Tree { parent: true, ..Tree::default() },
            sessions: vec![SessionState::default(); self.sessions as usize],
            clients: self.clients.iter().map(|spec| Client::new(spec.acquisitions)).collect(),
            budget: self.faults,
            decided_on_gone: None,
            tokens: (0, 0),
            token_went_back: false,
            mirror_wrong: None,
            gave_up_present: None,
        }]
    }

    fn actions(&self, st: &State, actions: &mut Vec<Action>) {
        for (i, c) in st.clients.iter().enumerate() {
            let i = i as u8;
            if c.pc == Pc::Idle && c.left > 0 {
                actions.push(Action::Acquire(i));
            }
            if c.holds() {
                actions.push(Action::Release(i));
            }
            if !c.inbox.is_empty() {
                actions.push(Action::Deliver(i));
            }
            if c.woken.is_some() {
                actions.push(Action::Wake(i));
            }
        }
        let b = st.budget;
        for (s, session) in st.sessions.iter().enumerate() {
            let s = s as u8;
            if !session.requests.is_empty() {
                actions.push(Action::Apply(s));
            }
            if !session.events.is_empty() {
                actions.push(Action::Pump(s));
            }
            for i in 0..session.late.len() {
                actions.push(Action::Land(s, i as u8));
            }
            let clients = || st.clients.iter().enumerate().filter(|(c, _)| self.session_of(*c as u8) == s);
            let in_flight = !session.requests.is_empty()
                || !session.events.is_empty()
                || clients().any(|(_, c)| !c.inbox.is_empty());
            if b.conn_loss > 0 && in_flight {
                actions.push(Action::ConnLoss(s, None));
                if b.late > 0 {
                    for (i, req) in session.requests.iter().enumerate() {
                        if matches!(req.op, Op::Create(..)) {
                            actions.push(Action::ConnLoss(s, Some(i as u8)));
                        }
                    }
                }
            }
            let idle = clients().all(|(_, c)| c.pc == Pc::Idle);
            if b.deafen > 0 && matches!(session.path_watch, PathWatch::Live(_)) && idle {
                actions.push(Action::Deafen(s));
            }
            if b.data_watch > 0 && !session.mirror.broken {
                actions.push(Action::DataWatch(s));
            }
            // `Mirror::decide` dismisses only a synced mirror: no resync is in flight then.
            if b.dismiss > 0 && session.mirror.synced && !session.mirror.broken && !session.mirror.dismissed {
                actions.push(Action::Dismiss(s));
            }
            if session.mirror.dismissed {
                actions.push(Action::Restore(s));
            }
            let busy = clients().any(|(_, c)| c.pc != Pc::Idle) || st.tree.nodes.iter().any(|n| n.session == s);
            if b.expire > 0 && busy {
                actions.push(Action::Expire(s));
            }
        }
        if b.delete_node > 0 {
            actions.extend(st.tree.nodes.iter().map(|n| Action::DeleteNode(n.name)));
        }
        if b.delete_all > 0 && st.tree.parent {
            actions.push(Action::DeleteAll);
        }
        if b.delete_all_descending > 0 && st.tree.parent {
            actions.push(Action::DeleteAllDescending);
        }
        if b.reap > 0 && st.tree.parent && st.tree.nodes.is_empty() {
            actions.push(Action::Reap);
        }
    }

    fn next_state(&self, last: &State, action: Action) -> Option<State> {
        let mut st = last.clone();
        match action {
            Action::Acquire(c) => Ctx { m: self, st: &mut st, c, own_present: false }.start(),
            Action::Release(c) => Ctx { m: self, st: &mut st, c, own_present: false }.release(),
            Action::Deliver(c) => {
                // Every event produced before the message is read first (mirror/mod.rs, point 2).
                let s = self.session_of(c);
                while st.clients[c as usize].inbox.front()?.after > 0 {
                    self.read_event(&mut st, s);
                }
                let msg = st.clients[c as usize].inbox.pop_front()?;
                Ctx { m: self, st: &mut st, c, own_present: false }.on_message(msg);
            }
            Action::Pump(s) => self.read_event(&mut st, s),
            Action::Wake(c) => {
                let woken = st.clients[c as usize].woken.take()?;
                Ctx { m: self, st: &mut st, c, own_present: false }.on_wake(woken);
            }
            Action::Deafen(s) => {
                st.budget.deafen -= 1;
                st.sessions[s as usize].path_watch = PathWatch::Deaf;
            }
            Action::DataWatch(s) => {
                st.budget.data_watch -= 1;
                self.blind(&mut st, s);
                if let PathWatch::Live(_) = st.sessions[s as usize].path_watch {
                    st.sessions[s as usize].path_watch = PathWatch::Deaf;
                }
            }
            Action::Dismiss(s) => {
                st.budget.dismiss -= 1;
                self.dismiss(&mut st, s);
            }
            Action::Restore(s) => st.sessions[s as usize].mirror.dismissed = false,
            Action::Apply(s) => {
                let req = st.sessions[s as usize].requests.pop_front()?;
                self.apply(&mut st, s, req);
            }
            Action::Land(s, i) => {
                let req = st.sessions[s as usize].late.remove(i as usize);
                if let Op::Create(prefix, role) = req.op {
                    self.create(&mut st, s, prefix, role);
                }
            }
            Action::ConnLoss(s, late) => {
                st.budget.conn_loss -= 1;
                if late.is_some() {
                    st.budget.late -= 1;
                }
                self.conn_loss(&mut st, s, late);
            }
            Action::Expire(s) => {
                st.budget.expire -= 1;
                self.expire(&mut st, s);
            }
            Action::DeleteNode(name) => {
                st.budget.delete_node -= 1;
                self.delete(&mut st, name);
            }
            Action::DeleteAll | Action::DeleteAllDescending => {
                let mut names: Vec<Name> = st.tree.nodes.iter().map(|n| n.name).collect();
                if action == Action::DeleteAll {
                    st.budget.delete_all -= 1;
                } else {
                    st.budget.delete_all_descending -= 1;
                    names.reverse();
                }
                // One multi: every event is produced after the whole transaction.
                st.tree.parent = false;
                self.delete_many(&mut st, names);
            }
            Action::Reap => {
                st.budget.reap -= 1;
                st.tree.parent = false;
            }
        }
        Some(st)
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![
            Property::always("exclusive", |m: &Recipe, st: &State| {
                let present: Vec<usize> = (0..st.clients.len())
                    .filter(|&c| st.clients[c].holds() && Recipe::node_present(st, &st.clients[c]))
                    .collect();
                present.len() < 2 || present.iter().all(|&c| m.clients[c].role == Role::Reader)
            }),
            Property::always("holder told", |m: &Recipe, st: &State| {
                st.clients.iter().enumerate().all(|(i, c)| {
                    let session = &st.sessions[m.session_of(i as u8) as usize];
                    let quiet = c.inbox.is_empty()
                        && c.woken.is_none()
                        && session.events.is_empty()
                        && session.requests.iter().all(|r| r.client != i as u8);
                    !(c.holds() && quiet && !Recipe::node_present(st, c))
                })
            }),
            Property::always("decided on a present node", |_: &Recipe, st: &State| st.decided_on_gone.is_none()),
            Property::always("fencing tokens increase", |_: &Recipe, st: &State| !st.token_went_back),
            Property::always("never waits on its own node", |_: &Recipe, st: &State| {
                st.clients.iter().enumerate().all(|(i, c)| match c.pc {
                    Pc::Waiting { pred, .. } | Pc::MirrorWait { on: Some(pred) } => pred.prefix.client != i as u8,
                    _ => true,
                })
            }),
            Property::always("mirror exact", |_: &Recipe, st: &State| st.mirror_wrong.is_none()),
            Property::always("gives up only a gone node", |_: &Recipe, st: &State| st.gave_up_present.is_none()),
            Property::always("nobody stuck", |m: &Recipe, st: &State| {
                m.progress_possible(st) || st.clients.iter().all(|c| c.done())
            }),
            Property::always("no orphan", |m: &Recipe, st: &State| {
                m.progress_possible(st) || !st.clients.iter().all(|c| c.done()) || st.tree.nodes.is_empty()
            }),
        ]
    }
}

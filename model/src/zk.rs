//! ZooKeeper as the recipe sees it: one lock path, its children, data watches
//! and sessions, with the faults the lock must survive.
//!
//! What is kept, because the recipe's shortcuts lean on it:
//! - the sequence counter belongs to the parent and restarts at 0 when the
//!   parent is deleted and re-created (FACTS.md, "Sequence numbers");
//! - each session's requests are applied in the order sent, and what the
//!   server sends a client (replies and notifications) reaches it in the
//!   order produced: a notification for a change comes before the reply to any
//!   request the session sent after that change;
//! - data watches are one-shot: set by a `get` on an existing node, fired once
//!   by its deletion; a `get` on a missing node answers NoNode and leaves no watch;
//! - a broken connection fails every request in flight with ConnectionLoss,
//!   whether or not the server applied it (a lost reply), and can hold a
//!   create back so that it lands after later requests of the session (a
//!   late create); watches whose reply did reach the client survive it
//!   (zookeeper-client re-arms them on reconnection, `OneshotWatcher::changed`);
//! - session expiry deletes the session's ephemeral nodes and fires their watches;
//! - an operator deletes one node, or the whole lock path as one multi, and an
//!   empty parent is reaped (CONTAINER nodes, cleanup jobs);
//! - the mirror's persistent recursive watch (`addWatch`, one per session on
//!   the lock path): it hears every create and delete of a child from its
//!   registration on, in order with the session's replies; a broken
//!   connection drops it on the server and loses the events not yet read (the
//!   client reads a `Disconnected` instead, in order; zookeeper-client never
//!   registers it again); expiry ends it; a data watch of the session on the
//!   lock path deafens it (ZOOKEEPER-4466);
//! - exists watches on a release marker's name (`<node>.released`, never
//!   there between transactions): one-shot, set on the missing name, fired
//!   (NodeCreated) by the writer's release that creates and deletes it in the
//!   multi that deletes the node, before that node's NodeDeleted.

use std::collections::VecDeque;

/// Node roles: writers exclude everyone, readers only writers (`naming::Role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    Writer,
    Reader,
}

impl Role {
    /// `naming::Role::waits_for`.
    pub fn waits_for(self, other: Role) -> bool {
        self == Role::Writer || other == Role::Writer
    }
}

/// A node-name prefix: unique per create attempt, like the uuid of
/// `naming::new_prefix`. Shown as `c<client>.<n>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Prefix {
    pub client: u8,
    pub n: u8,
}

/// A child's name: prefix plus the parent's sequence number at its
/// creation. Shown as `c<client>.<n>#<seq>`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Name {
    pub prefix: Prefix,
    pub seq: u8,
}

impl std::fmt::Debug for Prefix {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "c{}.{}", self.client, self.n)
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}#{}", self.prefix, self.seq)
    }
}

/// An ephemeral sequential child of the lock path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Node {
    pub name: Name,
    pub role: Role,
    pub session: u8,
    /// Ghost: the node's czxid as an order of creation (the fencing token).
    pub czxid: u8,
}

/// A request as the recipe sends it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Create(Prefix, Role),
    List,
    /// `get_and_watch_data`.
    GetWatch(Name),
    Delete(Name),
    /// A delete whose answer nobody waits for.
    DeleteQuiet(Name),
    Mkdir,
    /// `check_stat`: whether a node exists, no watch.
    Check(Name),
    /// The mirror's `addWatch(path, PersistentRecursive)`.
    AddWatch,
    /// The mirror's listing.
    MirrorList,
    /// A release that hands the lock over to the next node (`Removal::hand_over`).
    HandOver(Name, Name),
    /// `check_and_watch_stat` on the release marker of the node named
    /// (`naming::release_marker`): an exists watch on a missing name.
    WatchMarker(Name),
    /// A writer's release that marks its transaction (`removal.rs`,
    /// `release_marked`): creates and deletes the node's marker, then deletes the node.
    ReleaseMarked(Name),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Create,
    List,
    Get,
    Delete,
    Mkdir,
    Check,
    AddWatch,
    MirrorList,
    /// The marker's `exists`.
    Marker,
}

impl Op {
    pub fn kind(self) -> OpKind {
        match self {
            Op::Create(..) => OpKind::Create,
            Op::List => OpKind::List,
            Op::GetWatch(_) => OpKind::Get,
            Op::Delete(_) | Op::DeleteQuiet(_) | Op::HandOver(..) | Op::ReleaseMarked(_) => OpKind::Delete,
            Op::Mkdir => OpKind::Mkdir,
            Op::Check(_) => OpKind::Check,
            Op::AddWatch => OpKind::AddWatch,
            Op::MirrorList => OpKind::MirrorList,
            Op::WatchMarker(_) => OpKind::Marker,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request {
    pub client: u8,
    pub op: Op,
}

/// What reaches a client.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Body {
    /// The create's name and czxid.
    Created(Name, u8),
    /// Create or list under a missing parent.
    NoParent(OpKind),
    Children(Vec<(Name, Role)>),
    /// `get_and_watch_data` found the node: a watch is set.
    Exists(Name),
    Absent(Name),
    DeleteDone,
    /// A hand-over whose next node is gone: nothing was done.
    HandOverRefused,
    MkdirDone,
    ConnLoss(OpKind),
    SessionEnded,
    /// NodeDeleted on a data watch.
    Deleted(Name),
    /// `check_stat`'s answer: whether the node exists.
    Stat(Name, bool),
    /// `addWatch` answered.
    Watching,
    /// The mirror's listing (a missing parent lists as empty), and a ghost:
    /// how many events the new watch had produced before it.
    MirrorChildren(Vec<(Name, Role)>, u8),
    /// The marker's `exists` answered: no such node, a watch set.
    NoMarker(Name),
    /// NodeCreated on the exists watch of the named node's release marker.
    MarkerCreated(Name),
}

/// What the mirror's watch brings, on the session's event channel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Event {
    /// NodeCreated (`created`) or NodeDeleted of a child. Ghost: the
    /// children when the server produced it (after the whole transaction).
    /// `last`: the transaction's last change (its truth is the mirror's own then).
    Child { name: Name, role: Role, created: bool, truth: Vec<Name>, last: bool },
    /// A hand-over's marker naming the node it is for, created and deleted
    /// in its transaction (the mirror ignores the deletion: one event here).
    Marker(Name),
    /// zookeeper-client's session event on a broken connection.
    Disconnected,
}

/// The session's persistent recursive watch on the lock path, on the server.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum PathWatch {
    #[default]
    None,
    /// Registered; `u8`: events produced since (a ghost for the listing).
    Live(u8),
    /// Turned one-shot by a data watch of the session on the path: hears no child.
    Deaf,
}

/// The session's mirror (`core/src/mirror/mod.rs`'s `State`), shared by its handles.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Mirror {
    pub synced: bool,
    /// A resync's `addWatch` and listing are out.
    pub resyncing: bool,
    /// Lists instead, for good (`Mirror::blind`).
    pub broken: bool,
    /// Dismissed by the adaptive design: adaptive waiters list (`Mirror::dismiss`).
    pub dismissed: bool,
    /// Contenders, sorted by (sequence, name).
    pub names: Vec<(Name, Role)>,
    /// Names whose create event this mirror applied with no deletion since
    /// (`Entry::fresh`, point 8): what was ahead of them then still is.
    pub fresh: Vec<Name>,
    /// The node a marker named, fresh from the next deletion on (point 11).
    pub handed: Option<Name>,
    /// The resync's answers so far: the watch, the listing (with its ghost).
    pub got_watch: bool,
    pub got_list: Option<(Vec<(Name, Role)>, u8)>,
    /// The new watch's events, read before its listing was installed.
    pub buffer: Vec<Event>,
    /// Ghost: the children at the point the mirror shows.
    pub truth: Vec<Name>,
}

/// A message plus a ghost bit the clients never read: whether the recipient's
/// node (any node with its current prefix) existed when the server produced
/// it. A hold decided on a message without it was decided on a node already gone.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Msg {
    pub body: Body,
    pub own_present: bool,
    /// How many of the session's events the server produced before this
    /// message and the client has not read yet: it reads them first.
    pub after: u8,
}

/// One session of the server, shared by the clients configured on it.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct SessionState {
    /// Requests sent on the current connection and not applied yet, in order.
    pub requests: VecDeque<Request>,
    /// Creates sent on a lost connection, still to land.
    pub late: Vec<Request>,
    /// Client-side session memory (`session.rs`): the last node queued on
    /// the path (`lines`) ...
    pub line: Option<(u8, Prefix, Role)>,
    /// ... and the writer nodes that won (`RecentWinners`); both outlive an expiry.
    pub winners: Vec<Name>,
    /// The server's side of the mirror's watch.
    pub path_watch: PathWatch,
    /// Events produced for the session and not yet read by its client, in order.
    pub events: VecDeque<Event>,
    pub mirror: Mirror,
}

/// The tree under the lock path.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Tree {
    pub parent: bool,
    /// The next sequence number under the parent.
    pub counter: u8,
    /// Ghost: creations so far, under any incarnation of the parent (zxids only grow).
    pub created: u8,
    /// Sorted by sequence.
    pub nodes: Vec<Node>,
    /// Data watches: (client, node). Sorted.
    pub watches: Vec<(u8, Name)>,
    /// Exists watches on release markers: (client, the node the marker is
    /// of). Sorted. Dropped with their node: a node's marker is made only
    /// by its release, and a name is never created twice (one create per prefix).
    pub markers: Vec<(u8, Name)>,
}

impl Tree {
    pub fn has(&self, name: Name) -> bool {
        self.nodes.iter().any(|n| n.name == name)
    }

    pub fn has_prefix(&self, prefix: Prefix) -> bool {
        self.nodes.iter().any(|n| n.name.prefix == prefix)
    }

    /// Creates a sequential child; `None` without a parent.
    pub fn create(&mut self, prefix: Prefix, role: Role, session: u8) -> Option<Name> {
        if !self.parent {
            return None;
        }
        let name = Name { prefix, seq: self.counter };
        self.counter += 1;
        self.created += 1;
        self.nodes.push(Node { name, role, session, czxid: self.created });
        Some(name)
    }

    /// Deletes a child; returns the clients whose watch on it fired.
    pub fn delete(&mut self, name: Name) -> Vec<u8> {
        self.nodes.retain(|n| n.name != name);
        self.markers.retain(|(_, m)| *m != name);
        let fired = self.watches.iter().filter(|(_, w)| *w == name).map(|(c, _)| *c).collect();
        self.watches.retain(|(_, w)| *w != name);
        fired
    }

    pub fn watch(&mut self, client: u8, name: Name) {
        if !self.watches.contains(&(client, name)) {
            self.watches.push((client, name));
            self.watches.sort();
        }
    }

    /// An exists watch of `client` on the release marker of `name`.
    pub fn watch_marker(&mut self, client: u8, name: Name) {
        if !self.markers.contains(&(client, name)) {
            self.markers.push((client, name));
            self.markers.sort();
        }
    }

    /// The marker of `name` is created: returns the clients whose watch on it fired.
    pub fn create_marker(&mut self, name: Name) -> Vec<u8> {
        let fired = self.markers.iter().filter(|(_, m)| *m == name).map(|(c, _)| *c).collect();
        self.markers.retain(|(_, m)| *m != name);
        fired
    }

    pub fn czxid(&self, name: Name) -> Option<u8> {
        self.nodes.iter().find(|n| n.name == name).map(|n| n.czxid)
    }

    pub fn children(&self) -> Vec<(Name, Role)> {
        self.nodes.iter().map(|n| (n.name, n.role)).collect()
    }

    pub fn names(&self) -> Vec<Name> {
        self.nodes.iter().map(|n| n.name).collect()
    }

    pub fn role(&self, name: Name) -> Option<Role> {
        self.nodes.iter().find(|n| n.name == name).map(|n| n.role)
    }
}

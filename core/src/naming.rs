//! Node names of lock contenders, compatible with kazoo and Curator, and the
//! queue order derived from them.
//!
//! zoolock recognises every peer's markers whatever scheme it names its own
//! nodes with: counting more nodes as contenders never breaks exclusion, and
//! nobody can wait on a later node, so no cycle of waits can form.
//!
//! ```
//! use zoolock::naming::{standing, Role, Standing};
//!
//! // A kazoo holder, a Curator contender and our own node, as ZooKeeper lists them.
//! let children = [
//!     "_c_9b2f1c1e-6f0e-4c43-9d1a-7e6a4b3c2d1f-lock-0000000002".to_string(),
//!     "8c3d5e7f90a1b2c3d4e5f60718293a4b__lock__0000000001".to_string(),
//!     "0f1e2d3c4b5a69788796a5b4c3d2e1f0__lock__0000000003".to_string(),
//! ];
//! let mine = "0f1e2d3c4b5a69788796a5b4c3d2e1f0__lock__0000000003";
//! assert_eq!(
//!     standing(&children, mine, Role::Writer, &[]),
//!     Standing::Waits { predecessor: children[0].clone(), last_blocker: false },
//! );
//! ```

use std::fmt::Write;

use uuid::Uuid;

use crate::codes::codes;

/// How zoolock names its own nodes, so that a peer sharing the path sees them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    /// kazoo's `<uuid hex>__lock__<seq>` (readers `__rlock__`).
    #[default]
    Kazoo,
    /// Curator's `_c_<uuid>-lock-<seq>` (read/write lock `__READ__`/`__WRIT__`).
    Curator,
    /// DistributedLock.ZooKeeper's `lock-<seq>`, mutexes only: every node
    /// has the same prefix, so the node's [`Tag`] is in its data.
    DistributedLock,
}

/// What a contender asks for: writers exclude everyone, readers only writers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A mutex contender or a write lock's: kazoo's `__lock__`, Curator's `lock-` and `__WRIT__`.
    Writer,
    /// A read lock's contender: kazoo's `__rlock__`, Curator's `__READ__`.
    Reader,
}

impl Role {
    /// Whether a lower node of role `other` keeps a contender of role `self` waiting.
    ///
    /// ```
    /// use zoolock::naming::Role;
    ///
    /// assert!(!Role::Reader.waits_for(Role::Reader)); // readers share
    /// assert!(Role::Reader.waits_for(Role::Writer));
    /// assert!(Role::Writer.waits_for(Role::Reader));
    /// ```
    pub fn waits_for(self, other: Role) -> bool {
        self == Role::Writer || other == Role::Writer
    }
}

const WRITER_MARKERS: [&str; 3] = ["__lock__", "lock-", "__WRIT__"];
const READER_MARKERS: [&str; 2] = ["__rlock__", "__READ__"];

/// A fresh, unique prefix for one node: the uuid lets a client find its node
/// again after a create whose reply was lost. ZooKeeper appends the sequence
/// number (the node is created `EPHEMERAL_SEQUENTIAL`). DistributedLock's
/// `lock-` is the same for every node: [`new_tag`] adds what tells it apart.
///
/// ```
/// use zoolock::naming::{new_prefix, Role};
/// use zoolock::Scheme;
///
/// let kazoo = new_prefix(Scheme::Kazoo, Role::Writer);
/// assert!(kazoo.ends_with("__lock__") && kazoo.len() == 32 + 8);
/// let curator = new_prefix(Scheme::Curator, Role::Writer);
/// assert!(curator.starts_with("_c_") && curator.ends_with("-lock-"));
/// assert_ne!(new_prefix(Scheme::Kazoo, Role::Reader), new_prefix(Scheme::Kazoo, Role::Reader));
/// assert_eq!(new_prefix(Scheme::DistributedLock, Role::Writer), "lock-");
/// ```
pub fn new_prefix(scheme: Scheme, role: Role) -> String {
    let id = Uuid::new_v4();
    // Sized once, for the longest (48): `format!` would grow it twice.
    let mut prefix = String::with_capacity(48);
    match (scheme, role) {
        (Scheme::Kazoo, Role::Writer) => write!(prefix, "{}__lock__", id.simple()),
        (Scheme::Kazoo, Role::Reader) => write!(prefix, "{}__rlock__", id.simple()),
        (Scheme::Curator, Role::Writer) => write!(prefix, "_c_{}-lock-", id.hyphenated()),
        (Scheme::Curator, Role::Reader) => write!(prefix, "_c_{}-__READ__", id.hyphenated()),
        // Refused by `Lock::new`: DistributedLock's readers are another recipe's.
        (Scheme::DistributedLock, _) => return DISTRIBUTED_LOCK_PREFIX.to_owned(),
    }
    .expect("a String takes any text");
    prefix
}

/// DistributedLock.ZooKeeper's node prefix (its `ZooKeeperDistributedLock`'s `NodePrefix`).
pub const DISTRIBUTED_LOCK_PREFIX: &str = "lock-";

/// What finds a contender's node before its create's reply names it: its
/// unique name prefix, or, where every node has the same prefix
/// (DistributedLock's `lock-`), a unique token that starts the node's
/// data. Finding a node by its token costs a read of each node of that
/// prefix: only after a create whose reply was lost.
///
/// One string, as the prefix alone was (a waiter keeps it for as long as it
/// waits): the token follows a NUL, which no node name holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Tag(String);

/// Starts the data of a node named by a shared prefix: the token follows, then a newline.
const TOKEN_MARK: &str = "zoolock-token:";

/// A fresh [`Tag`] for a node of `scheme` and `role`.
///
/// ```
/// use zoolock::naming::{new_tag, Role};
/// use zoolock::Scheme;
///
/// let tag = new_tag(Scheme::DistributedLock, Role::Writer);
/// assert_eq!(tag.prefix(), "lock-");
/// let data = tag.data(b"worker-1");
/// assert!(tag.marks(&data) && !new_tag(Scheme::DistributedLock, Role::Writer).marks(&data));
/// assert_eq!(zoolock::naming::identifier(&data), b"worker-1");
/// assert_eq!(new_tag(Scheme::Kazoo, Role::Writer).token(), None);
/// ```
pub fn new_tag(scheme: Scheme, role: Role) -> Tag {
    let mut tag = new_prefix(scheme, role);
    if !scheme.unique_names() {
        write!(tag, "\0{TOKEN_MARK}{}\n", Uuid::new_v4().simple()).expect("a String takes any text");
    }
    Tag(tag)
}

impl Tag {
    /// A tag of a name prefix unique to its node.
    pub fn unique(prefix: String) -> Tag {
        Tag(prefix)
    }

    /// The name ZooKeeper appends the sequence to.
    pub fn prefix(&self) -> &str {
        self.0.split_once('\0').map_or(&self.0, |(prefix, _)| prefix)
    }

    /// The node data's first bytes, if the prefix is not unique.
    pub fn token(&self) -> Option<&str> {
        self.0.split_once('\0').map(|(_, token)| token)
    }

    /// The node's data: the token (if any), then `identifier`.
    pub fn data<'a>(&self, identifier: &'a [u8]) -> std::borrow::Cow<'a, [u8]> {
        match self.token() {
            None => identifier.into(),
            Some(token) => [token.as_bytes(), identifier].concat().into(),
        }
    }

    /// Whether a node's `data` is this tag's node's (always, if the prefix is unique).
    pub fn marks(&self, data: &[u8]) -> bool {
        self.token().is_none_or(|token| data.starts_with(token.as_bytes()))
    }

    /// The sequence of `child` (a name under the lock path) if it may be
    /// this tag's node: its prefix, then a sequence.
    pub fn sequence(&self, child: &str) -> Option<i32> {
        child.strip_prefix(self.prefix()).and_then(parse_sequence)
    }
}

/// A node's identifier: its data without the token a [`Tag`] put first.
pub fn identifier(data: &[u8]) -> &[u8] {
    let Some(rest) = data.strip_prefix(TOKEN_MARK.as_bytes()) else { return data };
    match rest.get(32) {
        Some(b'\n') => &rest[33..],
        _ => data,
    }
}

/// Whose lock wrote a sequential child, told by its name. Each library
/// counts only its own family's nodes as contenders (kazoo matches
/// `__lock__`/`__rlock__`; Curator and zookeeper-client's Curator-style
/// lock sort on the text after `lock-`; DistributedLock takes only
/// `lock-<seq>`), so a path where two families meet can have two holders:
/// a contender refuses to go on there ([`unseen_by`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// kazoo's and zoolock's [`Scheme::Kazoo`]: `…__lock__<seq>`, `…__rlock__<seq>`.
    Kazoo,
    /// Curator's and zoolock's [`Scheme::Curator`]: `…lock-<seq>`, `…__READ__<seq>`, `…__WRIT__<seq>`.
    Curator,
    /// DistributedLock.ZooKeeper's (.NET): exactly `lock-<seq>`.
    DistributedLock,
    /// Any other name ending in a sequence (zookeeper-client's shared
    /// prefixes, ZooKeeper's own recipes, …).
    Other,
}

impl Family {
    /// Every family, in [`Family::index`] order.
    pub const ALL: [Family; 4] = [Family::Kazoo, Family::Curator, Family::DistributedLock, Family::Other];

    /// The family of a child name; `None` if it has no sequence suffix.
    /// ```
    /// use zoolock::naming::Family;
    /// assert_eq!(Family::of("5f0c__rlock__0000000042"), Some(Family::Kazoo));
    /// assert_eq!(Family::of("_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-0000000001"), Some(Family::Curator));
    /// assert_eq!(Family::of("lock-0000000007"), Some(Family::DistributedLock));
    /// assert_eq!(Family::of("n-0000000003"), Some(Family::Other));
    /// assert_eq!(Family::of("leases"), None);
    /// // After the counter wrapped (negative sequences):
    /// assert_eq!(Family::of("5f0c__lock__-1234567890"), Some(Family::Kazoo));
    /// assert_eq!(Family::of("5f0c__lock__-000000001"), Some(Family::Kazoo));
    /// assert_eq!(Family::of("_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock--2147483648"), Some(Family::Curator));
    /// assert_eq!(Family::of("lock--1000000000"), Some(Family::DistributedLock));
    /// ```
    pub fn of(name: &str) -> Option<Family> {
        // A marker right before the sequence decides, as in `parse`: after the
        // counter wraps, `…__lock__-1234567890`'s last ten characters parse too.
        let prefixes = [10, 11].into_iter().filter_map(|tail| {
            let at = name.len().checked_sub(tail).filter(|&at| name.is_char_boundary(at))?;
            parse_sequence(&name[at..]).map(|_| &name[..at])
        });
        let mut sequential = false;
        for prefix in prefixes {
            sequential = true;
            if prefix.ends_with("__lock__") || prefix.ends_with("__rlock__") {
                return Some(Family::Kazoo);
            } else if prefix == "lock-" {
                return Some(Family::DistributedLock);
            } else if ["lock-", "__READ__", "__WRIT__"].iter().any(|m| prefix.ends_with(m)) {
                return Some(Family::Curator);
            }
        }
        sequential.then_some(Family::Other)
    }

    /// Its place in [`Family::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// The library that names its nodes so, for messages.
    pub fn library(self) -> &'static str {
        match self {
            Family::Kazoo => "kazoo (or zoolock's kazoo scheme)",
            Family::Curator => "Curator (or zookeeper-client's Curator-style lock, or zoolock's curator scheme)",
            Family::DistributedLock => "DistributedLock.ZooKeeper",
            Family::Other => "another library",
        }
    }

    /// The scheme whose nodes this family's library sees, if zoolock has one.
    pub fn scheme(self) -> Option<Scheme> {
        match self {
            Family::Kazoo => Some(Scheme::Kazoo),
            Family::Curator => Some(Scheme::Curator),
            Family::DistributedLock => Some(Scheme::DistributedLock),
            Family::Other => None,
        }
    }
}

impl Scheme {
    /// Whether a node's name is its own for good. Not DistributedLock's
    /// `lock-<seq>`: every client's, and back whenever the path is
    /// re-created; no shortcut may take such a name for a node it knew.
    pub fn unique_names(self) -> bool {
        self != Scheme::DistributedLock
    }

    /// The family of the nodes this scheme writes.
    pub fn family(self) -> Family {
        match self {
            Scheme::Kazoo => Family::Kazoo,
            Scheme::Curator => Family::Curator,
            Scheme::DistributedLock => Family::DistributedLock,
        }
    }
}

/// The first of `children` whose library would not see a node named by
/// `scheme`, with its family: a contender that meets one stops
/// ([`Error::MixedSchemes`](crate::Error::MixedSchemes)) rather than hold
/// beside it. A child matching one of `extra_markers` passes: the caller
/// declared it; so does one `benign` names (a persistent node of the
/// [`Family::Other`] names, which no lock library writes: an operator's
/// note that happens to end in ten digits).
/// ```
/// use zoolock::naming::{unseen_by, Family};
/// use zoolock::Scheme;
/// let children = ["a__lock__0000000001", "_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-0000000002"].map(String::from);
/// let none = |_: &str| false;
/// assert_eq!(unseen_by(&children, Scheme::Kazoo, &[], none), Some((children[1].as_str(), Family::Curator)));
/// assert_eq!(unseen_by(&children, Scheme::Curator, &[], none), Some((children[0].as_str(), Family::Kazoo)));
/// assert_eq!(unseen_by(&children[..1], Scheme::Kazoo, &[], none), None);
/// ```
pub fn unseen_by<'a>(
    children: &'a [String],
    scheme: Scheme,
    extra_markers: &[String],
    benign: impl Fn(&str) -> bool,
) -> Option<(&'a str, Family)> {
    children.iter().filter(|child| !benign(child)).find_map(|child| {
        let family = Family::of(child).filter(|f| *f != scheme.family())?;
        let declared = extra_markers.iter().any(|m| !m.is_empty() && child.contains(m.as_str()));
        (!declared).then_some((child.as_str(), family))
    })
}

/// Curator names read/write-lock writers differently from its mutex.
///
/// ```
/// use zoolock::naming::new_write_prefix;
/// use zoolock::Scheme;
///
/// assert!(new_write_prefix(Scheme::Curator).ends_with("-__WRIT__"));
/// assert!(new_write_prefix(Scheme::Kazoo).ends_with("__lock__"));
/// ```
pub fn new_write_prefix(scheme: Scheme) -> String {
    match scheme {
        Scheme::Kazoo => new_prefix(scheme, Role::Writer),
        Scheme::Curator => format!("_c_{}-__WRIT__", Uuid::new_v4().hyphenated()),
        Scheme::DistributedLock => DISTRIBUTED_LOCK_PREFIX.to_owned(),
    }
}

/// A child of the lock path that takes part in the queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contender {
    /// The child's name (without the lock path).
    pub name: String,
    /// What its marker says it asks for.
    pub role: Role,
    /// The sequence number ZooKeeper appended (a signed 32-bit counter).
    pub sequence: i32,
}

/// Parses a child name; `None` for children that are not contenders.
/// `extra_markers` are treated as writers (kazoo's `extra_lock_patterns`).
///
/// ```
/// use zoolock::naming::{parse, Contender, Role};
///
/// let reader = parse("5f0c3a__rlock__0000000042", &[]).unwrap();
/// assert_eq!((reader.role, reader.sequence), (Role::Reader, 42));
/// // After the counter wrapped, ZooKeeper writes negative numbers.
/// assert_eq!(parse("x-lock--2147483648", &[]).map(|c| c.sequence), Some(i32::MIN));
/// assert_eq!(parse("leases", &[]), None);
/// assert_eq!(parse("7a__mylock__0000000001", &["__mylock__".to_string()]).map(|c| c.role), Some(Role::Writer));
/// ```
pub fn parse(name: &str, extra_markers: &[String]) -> Option<Contender> {
    classify(name, extra_markers).map(|(role, sequence)| Contender { name: name.to_owned(), role, sequence })
}

/// [`parse`] without a copy of the name: its role and sequence.
pub fn classify(name: &str, extra_markers: &[String]) -> Option<(Role, i32)> {
    let readers = READER_MARKERS.iter().map(|m| (*m, Role::Reader));
    let writers = WRITER_MARKERS.iter().map(|m| (*m, Role::Writer));
    // The built-in markers, read from the end: the sequence is the name's
    // last 10 or 11 characters, and the marker ends right before it. Same
    // answer as the search below (run on every create and delete the mirror
    // sees): no built-in marker can occur again inside a sequence, nor two
    // of them end at one place, so the last occurrence of a marker followed
    // by a sequence is the one that ends where the sequence starts.
    for tail in [10, 11] {
        let Some(at) = name.len().checked_sub(tail).filter(|&at| name.is_char_boundary(at)) else { continue };
        let Some(sequence) = parse_sequence(&name[at..]) else { continue };
        if let Some((_, role)) = readers.clone().chain(writers.clone()).find(|(m, _)| name[..at].ends_with(m)) {
            return Some((role, sequence));
        }
    }
    // Extra markers may hold anything (digits, a dash): the general search.
    let extras = extra_markers.iter().filter(|m| !m.is_empty()).map(|m| (m.as_str(), Role::Writer));
    extras.into_iter().find_map(|(marker, role)| {
        let at = name.rfind(marker)?;
        let sequence = parse_sequence(&name[at + marker.len()..])?;
        Some((role, sequence))
    })
}

/// ZooKeeper's `%010d` of an i32: ten digits, or a minus sign and nine or
/// ten digits ("-000000001", "-2147483648").
fn parse_sequence(text: &str) -> Option<i32> {
    let digits = text.strip_prefix('-').unwrap_or(text);
    let width_ok = if digits.len() == text.len() { digits.len() == 10 } else { matches!(digits.len(), 9 | 10) };
    if !width_ok || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// Sorts contenders into queue order.
///
/// The sequence is a signed 32-bit counter that wraps from `i32::MAX` to
/// `i32::MIN`. When live nodes sit at both ends of the range the counter has
/// wrapped between them, so negative numbers come after positive ones. This
/// holds while the queue spans fewer than 2^30 creations under one parent.
///
/// ```
/// use zoolock::naming::{parse, sort};
///
/// let names = ["b__lock__-2147483647", "a__lock__2147483646", "c__lock__0000000007"];
/// // Live nodes at both ends of the range: the counter wrapped between them.
/// let mut wrapped: Vec<_> = names[..2].iter().map(|n| parse(n, &[]).unwrap()).collect();
/// sort(&mut wrapped);
/// assert_eq!(wrapped[0].name, "a__lock__2147483646");
/// let mut plain: Vec<_> = names[1..].iter().map(|n| parse(n, &[]).unwrap()).collect();
/// sort(&mut plain);
/// assert_eq!(plain[0].name, "c__lock__0000000007");
/// ```
pub fn sort(contenders: &mut [Contender]) {
    sort_by_sequence(contenders, |c| c.sequence);
}

/// [`sort`]'s order for anything with a sequence.
fn sort_by_sequence<T>(items: &mut [T], sequence: impl Fn(&T) -> i32) {
    let wrapped = wrapped(items.iter().map(&sequence));
    items.sort_by_key(|item| sequence_key(wrapped, sequence(item)));
}

/// Whether the counter wrapped between the sequences of one parent's live
/// nodes (see [`sort`]).
fn wrapped(sequences: impl Iterator<Item = i32> + Clone) -> bool {
    sequences.clone().any(|s| s > i32::MAX / 2) && sequences.into_iter().any(|s| s < i32::MIN / 2)
}

/// The key that orders sequences, across a wrap (see [`wrapped`]).
fn sequence_key(wrapped: bool, sequence: i32) -> i64 {
    let s = i64::from(sequence);
    if wrapped && s < 0 {
        s + (1i64 << 32)
    } else {
        s
    }
}

/// kazoo's queue entries (`Queue`, `LockingQueue`: `entry-<priority as 3
/// digits>-<sequence>`) among `children`, in the order they are taken: by
/// priority, lowest first, then by sequence (across a wrap, as [`sort`]).
/// kazoo compares the names as text, which agrees until the counter wraps.
/// Other children are left out.
///
/// ```
/// use zoolock::naming::queue_entries;
///
/// let children = ["entry-100-0000000001", "entry-007-0000000002", "taken", "entry-100-0000000000"].map(String::from);
/// assert_eq!(queue_entries(&children), ["entry-007-0000000002", "entry-100-0000000000", "entry-100-0000000001"]);
/// ```
pub fn queue_entries(children: &[String]) -> Vec<String> {
    let parse = |name: &String| {
        let rest = name.strip_prefix("entry-")?;
        let (priority, sequence) = (rest.get(..3)?, rest.get(3..)?.strip_prefix('-')?);
        Some((
            priority.parse::<u16>().ok().filter(|_| priority.bytes().all(|b| b.is_ascii_digit()))?,
            parse_sequence(sequence)?,
        ))
    };
    let mut entries: Vec<(u16, i32, &String)> =
        children.iter().filter_map(|c| parse(c).map(|(p, s)| (p, s, c))).collect();
    let wrapped = wrapped(entries.iter().map(|e| e.1));
    entries.sort_by_key(|e| (e.0, sequence_key(wrapped, e.1)));
    entries.into_iter().map(|e| e.2.clone()).collect()
}

/// The contenders among `children`, in queue order; other children are left out.
///
/// ```
/// use zoolock::naming::queue;
///
/// let children = ["b__lock__0000000002", "notes", "a__rlock__0000000001"].map(String::from);
/// let names: Vec<_> = queue(&children, &[]).into_iter().map(|c| c.name).collect();
/// assert_eq!(names, ["a__rlock__0000000001", "b__lock__0000000002"]);
/// ```
pub fn queue(children: &[String], extra_markers: &[String]) -> Vec<Contender> {
    let mut contenders: Vec<Contender> = children.iter().filter_map(|c| parse(c, extra_markers)).collect();
    sort(&mut contenders);
    contenders
}

/// Where a contender stands after listing the children.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// No lower node keeps it waiting: it holds the lock.
    Holds,
    /// Watch `predecessor`. When `last_blocker` is set, it is the only lower
    /// node that blocks; since every later node sorts higher, its deletion
    /// alone means the lock is ours, with no need to list the children again.
    Waits {
        /// The nearest lower node that blocks this one.
        predecessor: String,
        /// Whether it is the only lower node that blocks.
        last_blocker: bool,
    },
    /// Our node is not among the children (deleted, or its session ended).
    Missing,
}

/// Decides the standing of node `mine` (of role `role`) among `children`.
///
/// ```
/// use zoolock::naming::{standing, Role, Standing};
///
/// let children = ["r1__rlock__0000000001", "r2__rlock__0000000002", "w__lock__0000000003"].map(String::from);
/// // Readers share; a writer waits on the nearest reader before it, which is not the last blocker.
/// assert_eq!(standing(&children, "r2__rlock__0000000002", Role::Reader, &[]), Standing::Holds);
/// assert_eq!(
///     standing(&children, "w__lock__0000000003", Role::Writer, &[]),
///     Standing::Waits { predecessor: "r2__rlock__0000000002".into(), last_blocker: false },
/// );
/// assert_eq!(standing(&children, "gone__lock__0000000009", Role::Writer, &[]), Standing::Missing);
/// ```
pub fn standing(children: &[String], mine: &str, role: Role, extra_markers: &[String]) -> Standing {
    // `queue`'s order, the names borrowed: a listing's names are not copied.
    // Sized once: a collect from the filter would grow it.
    let mut queue = Vec::with_capacity(children.len());
    queue.extend(children.iter().filter_map(|c| classify(c, extra_markers).map(|(r, s)| (r, s, c.as_str()))));
    sort_by_sequence(&mut queue, |&(_, sequence, _)| sequence);
    let Some(position) = queue.iter().position(|&(_, _, name)| name == mine) else {
        return Standing::Missing;
    };
    let mut blockers = queue[..position].iter().filter(|&&(r, _, _)| role.waits_for(r));
    match blockers.next_back() {
        None => Standing::Holds,
        Some(&(_, _, nearest)) => {
            Standing::Waits { predecessor: nearest.to_owned(), last_blocker: blockers.next().is_none() }
        }
    }
}

/// The last part of a node's path: its name under its parent.
pub(crate) fn name_of(node: &str) -> &str {
    node.rsplit_once('/').map_or(node, |(_, name)| name)
}

/// The path of a node's parent, as ZooKeeper has it: the root's children's is `/`.
pub(crate) fn parent_of(path: &str) -> &str {
    match path.rfind('/') {
        Some(0) | None => "/",
        Some(i) => &path[..i],
    }
}

/// The path of child `name` of `parent`, in one allocation (`format!`
/// would grow its string twice).
pub(crate) fn child_path(parent: &str, name: &str) -> String {
    let mut path = String::with_capacity(parent.len() + 1 + name.len());
    path.push_str(parent);
    path.push('/');
    path.push_str(name);
    path
}

codes! {
    // 2 is neither, in `inspect`'s records: the C ABI's `ZL_SCHEME_OTHER`.
    impl Scheme {
        /// kazoo's node names, zoolock's default: `<uuid hex>__lock__<seq>`.
        Kazoo = 0 => "kazoo",
        /// Curator's node names: `_c_<uuid>-lock-<seq>`.
        Curator = 1 => "curator",
        /// DistributedLock.ZooKeeper's: `lock-<seq>`, mutexes only (3: 2 is `ZL_SCHEME_OTHER`).
        DistributedLock = 3 => "distributedlock",
    }
}

/// What ends a hand-over marker's name: `<next node's name>.handoff`, a
/// child a release creates and deletes in the transaction that deletes its
/// node, so that the next waiter's mirror hears its node named there
/// (mirror/mod.rs, point 11). Never a contender of any library: its name
/// does not end in a sequence, and no listing ever shows it.
const HANDOFF: &str = ".handoff";

/// The hand-over marker's name for node `next`.
pub(crate) fn handoff_marker(next: &str) -> String {
    suffixed(next, HANDOFF)
}

/// `name` and then `suffix`, in one allocation.
fn suffixed(name: &str, suffix: &str) -> String {
    let mut marker = String::with_capacity(name.len() + suffix.len());
    marker.push_str(name);
    marker.push_str(suffix);
    marker
}

/// The node a hand-over marker names, if `child` is one.
pub(crate) fn handed_to(child: &str) -> Option<&str> {
    child.strip_suffix(HANDOFF).filter(|next| classify(next, &[]).is_some())
}

/// What ends a release marker's name: `<held node's name>.released`, a
/// child a writer's release creates and deletes in the transaction that
/// deletes its node, so that the listing waiter right behind it, which
/// watches that name, hears that the node went as a holder
/// (recipe/lock/queue.rs, `Wake::Released`). Like a hand-over marker,
/// never a contender and never listed.
const RELEASED: &str = ".released";

/// The release marker of node `held`, a name or a path: its path, given the node's.
pub(crate) fn release_marker(held: &str) -> String {
    suffixed(held, RELEASED)
}

/// Whether `child` is a release marker.
pub(crate) fn is_release_marker(child: &str) -> bool {
    child.strip_suffix(RELEASED).is_some_and(|held| classify(held, &[]).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    /// Every family at every kind of sequence ZooKeeper writes (`%010d` of an
    /// i32: after the counter wraps, a sign and nine or ten digits).
    #[test]
    fn families_are_told_apart_at_every_sequence() {
        let uuid = "3f2504e0-4f89-11d3-9a0c-0305e82c3301";
        let cases = [
            (format!("{}__lock__", uuid.replace('-', "")), Family::Kazoo),
            (format!("{}__rlock__", uuid.replace('-', "")), Family::Kazoo),
            (format!("_c_{uuid}-lock-"), Family::Curator),
            (format!("_c_{uuid}-__READ__"), Family::Curator),
            (format!("_c_{uuid}-__WRIT__"), Family::Curator),
            ("lock-".to_owned(), Family::DistributedLock),
            ("n-".to_owned(), Family::Other),
            ("x-72057594037927936-".to_owned(), Family::Other),
        ];
        for sequence in [0, 7, i32::MAX, -1, -999_999_999, -1_234_567_890, i32::MIN] {
            for (prefix, family) in &cases {
                let name = format!("{prefix}{sequence:010}");
                assert_eq!(Family::of(&name), Some(*family), "{name}");
            }
        }
        assert_eq!(Family::of("notes"), None);
    }

    #[test]
    fn a_path_splits_into_its_parent_and_name() {
        assert_eq!((parent_of("/a"), name_of("/a")), ("/", "a"));
        assert_eq!(
            (parent_of("/locks/a/x-0000000001"), name_of("/locks/a/x-0000000001")),
            ("/locks/a", "x-0000000001")
        );
    }

    #[test]
    fn parses_both_peers_and_ignores_foreign_children() {
        let w = parse("0123456789abcdef0123456789abcdef__lock__0000000007", &[]).unwrap();
        assert_eq!((w.role, w.sequence), (Role::Writer, 7));
        let r = parse("0123456789abcdef0123456789abcdef__rlock__0000000008", &[]).unwrap();
        assert_eq!((r.role, r.sequence), (Role::Reader, 8));
        let c = parse("_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock-0000000009", &[]).unwrap();
        assert_eq!((c.role, c.sequence), (Role::Writer, 9));
        let cr = parse("_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-__READ__0000000010", &[]).unwrap();
        assert_eq!(cr.role, Role::Reader);
        assert_eq!(parse("x__lock__-000000001", &[]).unwrap().sequence, -1);
        assert_eq!(parse("x__lock__-2147483648", &[]).unwrap().sequence, i32::MIN);
        let curator_negative = parse("_c_3f2504e0-4f89-11d3-9a0c-0305e82c3301-lock--2147483648", &[]).unwrap();
        assert_eq!(curator_negative.sequence, i32::MIN);
        assert_eq!(parse("x__lock__00000000001", &[]), None);
        assert_eq!(parse("x__lock__2147483648", &[]), None);
        assert_eq!(parse("leases", &[]), None);
        assert_eq!(parse("x__lock__00000001", &[]), None);
        assert_eq!(parse("x__lock__+000000001", &[]), None);
        assert_eq!(parse("x__other__0000000001", &[]), None);
        let extra = vec!["__other__".to_string()];
        assert_eq!(parse("x__other__0000000001", &extra).unwrap().role, Role::Writer);
    }

    #[test]
    fn fresh_prefixes_have_the_peers_shapes() {
        let k = new_prefix(Scheme::Kazoo, Role::Writer);
        assert_eq!(k.len(), 32 + "__lock__".len());
        assert!(k.ends_with("__lock__") && k[..32].bytes().all(|b| b.is_ascii_hexdigit()));
        let c = new_prefix(Scheme::Curator, Role::Writer);
        assert!(c.starts_with("_c_") && c.ends_with("-lock-") && c.len() == 3 + 36 + 6);
        assert!(new_write_prefix(Scheme::Curator).ends_with("-__WRIT__"));
        assert_ne!(new_prefix(Scheme::Kazoo, Role::Reader), new_prefix(Scheme::Kazoo, Role::Reader));
    }

    #[test]
    fn sorts_by_number_across_the_signed_wrap() {
        let children =
            names(&["a__lock__-2147483647", "b__lock__2147483646", "c__lock__-2147483648", "d__lock__2147483647"]);
        let order: Vec<_> = queue(&children, &[]).into_iter().map(|c| c.name).collect();
        assert_eq!(
            order,
            names(&["b__lock__2147483646", "d__lock__2147483647", "c__lock__-2147483648", "a__lock__-2147483647"])
        );
        // Without the wrap, negative numbers simply come first.
        let plain = names(&["x__lock__0000000003", "y__lock__-000000002"]);
        assert_eq!(queue(&plain, &[])[0].name, "y__lock__-000000002");
    }

    #[test]
    fn writers_wait_for_all_lower_nodes_and_readers_only_for_writers() {
        let children = names(&[
            "w1__lock__0000000001",
            "r1__rlock__0000000002",
            "r2__rlock__0000000003",
            "w2__lock__0000000004",
            "r3__rlock__0000000005",
        ]);
        assert_eq!(standing(&children, "w1__lock__0000000001", Role::Writer, &[]), Standing::Holds);
        assert_eq!(
            standing(&children, "r2__rlock__0000000003", Role::Reader, &[]),
            Standing::Waits { predecessor: "w1__lock__0000000001".into(), last_blocker: true }
        );
        assert_eq!(
            standing(&children, "w2__lock__0000000004", Role::Writer, &[]),
            Standing::Waits { predecessor: "r2__rlock__0000000003".into(), last_blocker: false }
        );
        // A reader never considers a later writer (kazoo's reader/writer deadlock).
        assert_eq!(
            standing(&children, "r3__rlock__0000000005", Role::Reader, &[]),
            Standing::Waits { predecessor: "w2__lock__0000000004".into(), last_blocker: false }
        );
        assert_eq!(standing(&children, "gone__lock__0000000009", Role::Writer, &[]), Standing::Missing);
        let readers = names(&["r1__rlock__0000000001", "r2__rlock__0000000002"]);
        assert_eq!(standing(&readers, "r2__rlock__0000000002", Role::Reader, &[]), Standing::Holds);
    }

    /// A hand-over marker (mirror/mod.rs, point 11) is no contender of any
    /// library and no sequential child, and names the node it is for.
    #[test]
    fn a_hand_over_marker_names_its_node_and_is_no_contender() {
        for node in ["0f1e__lock__0000000003", "_c_9b2f-lock-0000000002", "lock-0000000007", "r__rlock__-000000001"] {
            let marker = handoff_marker(node);
            assert_eq!(handed_to(&marker), Some(node));
            assert_eq!(classify(&marker, &[]), None);
            assert_eq!(Family::of(&marker), None);
        }
        assert_eq!(handed_to("0f1e__lock__0000000003"), None);
        assert_eq!(handed_to("notes.handoff"), None);
    }

    /// A release marker (recipe/lock/queue.rs, `Wake::Released`) is no
    /// contender of any library, and is told from a hand-over marker.
    #[test]
    fn a_release_marker_is_no_contender_and_no_hand_over() {
        for node in ["x__lock__0000000007", "_c_1-lock-0000000009", "lock-0000000002", "r__rlock__-000000001"] {
            let marker = release_marker(node);
            assert!(is_release_marker(&marker));
            assert_eq!(classify(&marker, &[]), None);
            assert_eq!(handed_to(&marker), None);
            assert_eq!(Family::of(&marker), None);
            assert!(!is_release_marker(&handoff_marker(node)));
        }
        assert!(!is_release_marker("notes.released"));
    }
}

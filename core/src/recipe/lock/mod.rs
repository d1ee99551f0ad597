//! The lock recipe: contenders create EPHEMERAL_SEQUENTIAL nodes under the
//! lock path; the lowest holds the lock; each other contender watches only
//! the nearest lower node it waits for, so a release wakes one client.
//!
//! [`Lock`] is the handle; [`queue`] queues its node and waits until the
//! node comes first, by listings or on the session's mirror; [`line`](mod@line) keeps
//! what the session knows of its own contenders on each path.

mod line;
mod queue;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use zookeeper_client as zk;

use crate::codes::codes;
use crate::contender::{Attempt, Nodes, Removal, Removals, Target, Won};
use crate::error::{Error, Result};
use crate::holder::{holder_methods, sealed, Acquire, BoxFuture, Holder, HolderState, OnHeld};
use crate::mirror::{Mirror, Mirrors};
use crate::naming::{self, Role, Scheme, Tag};
use crate::options::{validate_identifier, validate_path};
use crate::session::{Live, Session};
use crate::state::Outcome;
use line::Lines;
pub use line::CREATES_IN_FLIGHT;

/// Which recipe a handle follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// kazoo's `Lock`, Curator's `InterProcessMutex`.
    Mutex,
    /// Shares the lock with other readers; waits only for earlier writers.
    Read,
    /// Waits for every earlier contender, readers included.
    Write,
}

impl Kind {
    fn role(self) -> Role {
        if self == Kind::Read {
            Role::Reader
        } else {
            Role::Writer
        }
    }

    fn new_tag(self, scheme: Scheme) -> Tag {
        match self {
            Kind::Mutex => naming::new_tag(scheme, Role::Writer),
            Kind::Read => naming::new_tag(scheme, Role::Reader),
            Kind::Write => Tag::unique(naming::new_write_prefix(scheme)),
        }
    }
}

/// What a handle writes and recognises besides its kind.
#[derive(Debug, Clone)]
pub struct LockConfig {
    /// Node data, shown by `contenders()` (kazoo's `identifier`).
    pub identifier: Vec<u8>,
    /// Whose node names to write: kazoo's (the default) or Curator's.
    pub scheme: Scheme,
    /// Further node-name markers to queue behind, as writers (kazoo's `extra_lock_patterns`).
    pub extra_markers: Vec<String>,
    /// Reentrant per owner, like Curator's `InterProcessMutex` (zoolock's
    /// own option: kazoo has none). An acquire by the owner that holds
    /// ([`Acquire::owner`]: the handle in Rust, the thread in Python and C#)
    /// returns `Ok(true)` at once on the same node, and each acquire needs
    /// its release: the last one deletes the node. Another owner's acquire
    /// waits for that, and its release is refused ([`Error::NotOwner`]). A
    /// loss ends the hold whatever its depth. Off by default (kazoo's).
    pub reentrant: bool,
    /// Waits on the session's mirror of the path's children (one persistent
    /// recursive watch per session and path, ZooKeeper ≥ 3.6; see
    /// `core/src/mirror/mod.rs`) instead of listing the children and watching
    /// the predecessor: an acquisition costs a create and a delete, and the
    /// server sends each of them to every session that mirrors the path.
    /// On by default, with [`LockConfig::adaptive`]. Off, waiters list the
    /// children and watch their predecessor (kazoo's and Curator's way).
    /// Ignored with `extra_markers`. Falls back to listing if the server
    /// refuses the watch.
    pub mirror: bool,
    /// With `mirror`: leaves the mirror for listing while the queue is long
    /// and comes back when it is short (the adaptive design,
    /// docs/benchmarks.md, "Adaptive"), so that the server's fan-out of
    /// every change to every mirroring session stops where it costs more
    /// than the listings it saves. `None`: the mirror whatever the queue.
    pub adaptive: Option<Adaptive>,
}

/// When the adaptive design ([`LockConfig::adaptive`]) leaves the mirror
/// and when it comes back, by the number of contenders a session sees on
/// the path, for a round trip (longer ones scale both); the gap between
/// the two keeps a queue at the edge from switching at every acquisition.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Adaptive {
    /// A waiter that finds more contenders than this on the mirror
    /// dismisses the session's mirror of the path: every waiter of the
    /// session there lists from then on. Counted: the nodes of other
    /// sessions, whose creates and deletes the server sends to this one,
    /// plus one for all of this session's (its own cost no fan-out).
    pub list_above: u32,
    /// A listing that shows at most this many nodes (this session's
    /// included) lets the next acquisition of the session on the path
    /// mirror again.
    pub mirror_at_most: u32,
    /// The round trip the two limits are for. A session whose round trip
    /// is longer (the least of its last eight reads, session/round_trip.rs)
    /// scales both by its round trip over this one: the mirror saves a
    /// round trip at each hand-over, while its fan-out costs the same for
    /// each contender. `None`: the limits whatever the round trip.
    pub round_trip: Option<Duration>,
}

impl Default for Adaptive {
    /// Up to four sessions mirror; more list, whatever the round trip.
    /// Listing hands over without a round trip too since a writer's release
    /// marks itself (recipe/lock/queue.rs, `Wake::Released`), and costs no
    /// fan-out; the mirror still leads where a waiter's two round trips
    /// from its create to its watches outlast its wait: at B(4) and below,
    /// on one host and across 0.5 and 2 ms each way alike; listing leads
    /// from B(8) on (docs/benchmarks.md, "Release markers").
    fn default() -> Self {
        Adaptive { list_above: 4, mirror_at_most: 2, round_trip: None }
    }
}

impl Adaptive {
    /// The limits for a session whose round trip is `measured`: as they
    /// are up to [`Adaptive::round_trip`], in proportion beyond it.
    pub fn at(self, measured: Option<Duration>) -> Adaptive {
        let (Some(base), Some(measured)) = (self.round_trip, measured) else { return self };
        if base.is_zero() || measured <= base {
            return self;
        }
        let scale =
            |limit: u32| (u128::from(limit) * measured.as_nanos() / base.as_nanos()).min(u32::MAX.into()) as u32;
        Adaptive { list_above: scale(self.list_above), mirror_at_most: scale(self.mirror_at_most), ..self }
    }
}

impl LockConfig {
    /// Refuses what no lock of `kind` can be made with: for bindings that
    /// make their core lock only once a session is there.
    pub fn check(&self, kind: Kind) -> Result<()> {
        validate_identifier(&self.identifier)?;
        if self.adaptive.is_some_and(|adaptive| adaptive.round_trip == Some(Duration::ZERO)) {
            return Err(Error::InvalidArgument(
                "the adaptive design's round trip must be longer than zero, or None to leave the limits as they are"
                    .into(),
            ));
        }
        if self.scheme == Scheme::DistributedLock && kind != Kind::Mutex {
            return Err(Error::InvalidArgument(format!(
                "the distributedlock scheme names mutex nodes only, not {} nodes: DistributedLock's \
                 reader-writer lock is another recipe",
                kind.name()
            )));
        }
        Ok(())
    }
}

impl Default for LockConfig {
    fn default() -> Self {
        LockConfig {
            identifier: Vec::new(),
            scheme: Scheme::default(),
            extra_markers: Vec::new(),
            reentrant: false,
            mirror: true,
            adaptive: Some(Adaptive::default()),
        }
    }
}

/// A lock handle: kazoo's `Lock`, `ReadLock` or `WriteLock`. Cheap to clone;
/// clones are the same handle. Not reentrant unless [`LockConfig::reentrant`]:
/// a second acquire on a held handle waits until the handle is released, as
/// kazoo's does.
///
/// ```
/// use std::time::Duration;
/// use zoolock::{Acquire, Kind, Lock, LockConfig, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # // A real server for the example (Debian's ZooKeeper, started by the harness).
/// # let connect = zk_harness::shared().connect_string();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = Session::connect(SessionOptions::new(connect)).await?;
/// let lock = Lock::mutex_with_identifier(&session, "/locks/ledger", "worker-1")?;
/// if lock.acquire(Acquire::timeout(Duration::from_secs(5))).await? {
///     assert_eq!(lock.queue().await?, ["worker-1"]); // kazoo's contenders()
///     let token = lock.fencing_token(); // Some(..) while held
///     // … write to the guarded resource, passing `token` along …
///     lock.release().await?;
/// }
///
/// // Read/write: readers share the lock; a writer waits for every earlier contender.
/// let reader = Lock::new(&session, "/locks/report", Kind::Read, LockConfig::default())?;
/// let another = Lock::new(&session, "/locks/report", Kind::Read, LockConfig::default())?;
/// let writer = Lock::new(&session, "/locks/report", Kind::Write, LockConfig::default())?;
/// assert!(reader.acquire(Acquire::no_wait()).await?);
/// assert!(another.acquire(Acquire::no_wait()).await?);
/// assert!(!writer.acquire(Acquire::no_wait()).await?); // a single try, leaving no node
/// session.close().await;
/// # Ok(()) })
/// # }
/// ```
#[derive(Clone)]
pub struct Lock {
    holder: Arc<HolderState>,
    spec: Arc<Spec>,
}

/// The path, kind, scheme and current state: what a log line about a lock
/// needs. Every public type has `Debug` (the crate denies
/// `missing_debug_implementations`), so an application's own types derive it:
///
/// ```
/// #[derive(Debug)]
/// struct App {
///     session: zoolock::Session,
///     lock: zoolock::Lock,
///     semaphore: zoolock::Semaphore,
///     election: zoolock::Election,
/// }
/// ```
impl std::fmt::Debug for Lock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lock")
            .field("path", &self.path())
            .field("kind", &self.spec.kind)
            .field("scheme", &self.spec.config.scheme)
            .field("state", &self.state())
            .finish_non_exhaustive()
    }
}

/// What the handle contends with; its path is the holder's.
struct Spec {
    kind: Kind,
    config: LockConfig,
    /// The session's mirror of the path, from the first mirrored acquire on.
    mirror: std::sync::OnceLock<Arc<Mirror>>,
}

impl Lock {
    /// A handle on the lock at `path`; nothing is sent to the server before
    /// the first acquire. Bad input fails here ([`Error::InvalidPath`], …).
    pub fn new(session: &Session, path: &str, kind: Kind, config: LockConfig) -> Result<Lock> {
        validate_path(path)?;
        Lock::on_checked_path(session, path, kind, config)
    }

    /// [`Lock::new`] on a path derived from one already checked (a
    /// semaphore's admission lock: its path plus a suffix, which may take it
    /// past [`crate::MAX_PATH_BYTES`] by those few bytes).
    pub(crate) fn on_checked_path(session: &Session, path: &str, kind: Kind, config: LockConfig) -> Result<Lock> {
        config.check(kind)?;
        session.check_usable()?;
        if session.is_closed() {
            return Err(session.closed_error());
        }
        let on_held = if config.reentrant { OnHeld::Reenter } else { OnHeld::Wait };
        let spec = Spec { kind, config, mirror: Default::default() };
        Ok(Lock { holder: HolderState::new(session, path, on_held), spec: Arc::new(spec) })
    }

    /// Leaves this handle's holds out of the session's metrics (a
    /// semaphore's admission lock: the semaphore counts its own).
    pub(crate) fn unmetered(mut self) -> Lock {
        Arc::get_mut(&mut self.holder).expect("a handle not yet shared").metered = false;
        self
    }

    /// An exclusive lock with kazoo's node names and no identifier.
    pub fn mutex(session: &Session, path: &str) -> Result<Lock> {
        Lock::new(session, path, Kind::Mutex, LockConfig::default())
    }

    /// An exclusive lock with kazoo's node names whose nodes hold
    /// `identifier`, shown by [`Lock::queue`] and to operators (kazoo's
    /// `Lock(path, identifier)`).
    pub fn mutex_with_identifier(session: &Session, path: &str, identifier: impl Into<Vec<u8>>) -> Result<Lock> {
        Lock::new(session, path, Kind::Mutex, LockConfig { identifier: identifier.into(), ..LockConfig::default() })
    }

    /// Which recipe the handle follows.
    pub fn kind(&self) -> Kind {
        self.spec.kind
    }

    /// Queues a node and waits for it to come first, queueing again on a new
    /// session if the old one ends first.
    /// An `async move` block, not an `async fn`, which would keep its
    /// arguments twice for as long as a waiter waits.
    pub(crate) fn contend<'a>(
        &'a self,
        options: &'a Acquire,
        removals: Removals,
    ) -> impl Future<Output = Result<Option<Won>>> + Send + 'a {
        async move {
            let role = self.spec.kind.role();
            loop {
                let live = match self.holder.session.live_now() {
                    Some(live) => live?,
                    // Boxed: its wait is larger than what a parked waiter keeps here.
                    None => Box::pin(self.holder.session.live()).await?,
                };
                // A slot before anything of the attempt: a contender waiting
                // for one holds no node and no prefix (line.rs, `CREATES_IN_FLIGHT`).
                let lines = Lines::of(&self.holder.session);
                let slot = match lines.try_create_slot() {
                    Some(slot) => slot,
                    // Boxed: only a contender of a burst waits here.
                    None => Box::pin(lines.create_slot()).await,
                };
                let tag = self.spec.kind.new_tag(self.spec.config.scheme);
                let mut attempt = Attempt::new(
                    Removal {
                        session: self.holder.session.clone(),
                        target: Target::Tagged { parent: self.holder.path.clone(), tag },
                        generation: live.generation,
                        ephemeral: options.ephemeral,
                    },
                    &removals,
                );
                let step = self.queue_once(&live, &mut attempt, options, slot).await;
                // Not won: its node goes now, before any wait for a new session.
                drop(attempt);
                // Decided before the wait: the step (a won hold is large) is not kept across it.
                let session_ended = match step? {
                    Step::Won(mut won) => {
                        won.role = Some(role);
                        // A winner's name proves a hand-over only if no other node can have it.
                        if role == Role::Writer && self.spec.config.scheme.unique_names() {
                            lines.record_winner(&won.node);
                        }
                        return Ok(Some(won));
                    }
                    Step::Taken => return Ok(None),
                    Step::SessionEnded => true,
                    Step::NodeGone => false,
                };
                if session_ended {
                    Box::pin(self.holder.session.wait_past(live.generation)).await;
                }
            }
        }
    }

    /// The session's mirror of the path, if this handle may wait on one.
    /// Not with the distributedlock scheme: the mirror tells the session's
    /// own nodes by their unique prefixes, and `lock-` is everyone's.
    fn mirror(&self) -> Option<Arc<Mirror>> {
        let config = &self.spec.config;
        if !config.mirror || !config.extra_markers.is_empty() || !config.scheme.unique_names() {
            return None;
        }
        let session = &self.holder.session;
        Some(self.spec.mirror.get_or_init(|| Mirrors::of(session).mirror(session, &self.holder.path)).clone())
    }
}

holder_methods!(Lock);

impl sealed::Recipe for Lock {
    fn state_of(&self) -> &Arc<HolderState> {
        &self.holder
    }

    fn handle(&self) -> Box<dyn Holder> {
        Box::new(self.clone())
    }
}

impl Holder for Lock {
    /// One box, where the trait's would box [`Holder::acquire_outcome`]'s
    /// inside a second: a queued waiter keeps it for as long as it waits.
    fn acquire(&self, options: Acquire) -> BoxFuture<'_, Result<bool>> {
        Box::pin(async move {
            let contend = |removals| self.contend(&options, removals);
            self.holder.acquire(self.spec.kind.name(), &options, contend).await.map(Outcome::is_acquired)
        })
    }

    fn acquire_outcome(&self, options: Acquire) -> BoxFuture<'_, Result<Outcome>> {
        Box::pin(async move {
            self.holder.acquire(self.spec.kind.name(), &options, |removals| self.contend(&options, removals)).await
        })
    }

    /// Everyone queued on this path, holder(s) first (kazoo's `contenders()`).
    fn queue(&self) -> BoxFuture<'_, Result<Vec<String>>> {
        Box::pin(async move {
            let live = self.holder.session.live().await?;
            let read = async {
                let Some(mut children) = self.list(&live).await? else {
                    return Err(Error::ConnectionLoss(self.holder.session.request_bound()));
                };
                let session = &self.holder.session;
                // Late nodes of this session's are no contenders: they go.
                let _ = Nodes::of(session).doubtful.sweep(session, &self.holder.path, live.generation, &mut children);
                let queue = naming::queue(&children, &self.spec.config.extra_markers);
                let nodes: Vec<String> = queue.iter().map(|c| format!("{}/{}", self.holder.path, c.name)).collect();
                read_identifiers(&live, &nodes).await
            };
            self.holder.session.bounded(read).await
        })
    }
}

/// The data of `nodes` as text, in one round trip; nodes gone meanwhile are skipped.
pub(crate) async fn read_identifiers(live: &Live, nodes: &[String]) -> Result<Vec<String>> {
    if nodes.is_empty() {
        return Ok(Vec::new());
    }
    let mut reader = live.client.new_multi_reader();
    for node in nodes {
        reader.add_get_data(node).map_err(|e| Error::zk(node, "read", e))?;
    }
    let results = reader.commit().await.map_err(|e| Error::zk(&nodes[0], "read", e))?;
    Ok(results
        .into_iter()
        .filter_map(|r| match r {
            zk::MultiReadResult::Data { data, .. } => {
                Some(String::from_utf8_lossy(naming::identifier(&data)).into_owned())
            }
            _ => None,
        })
        .collect())
}

enum Step {
    Won(Won),
    /// A single try found the lock taken.
    Taken,
    SessionEnded,
    /// Our node vanished while the session lived (deleted by someone else).
    NodeGone,
}

codes! {
    impl Kind {
        /// An exclusive lock (kazoo's `Lock`, Curator's `InterProcessMutex`).
        Mutex = 0 => "mutex",
        /// The read side of a read/write lock: shared with other readers.
        Read = 1 => "read",
        /// The write side of a read/write lock: excludes readers and writers.
        Write = 2 => "write",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limits_grow_with_the_round_trip_beyond_theirs() {
        let adaptive = Adaptive { list_above: 8, mirror_at_most: 4, round_trip: Some(Duration::from_micros(400)) };
        let at = |micros| adaptive.at(Some(Duration::from_micros(micros)));
        assert_eq!(adaptive.at(None), adaptive, "no round trip known: the limits as they are");
        assert_eq!(at(300), adaptive, "a shorter round trip than theirs: the limits as they are");
        assert_eq!((at(1_000).list_above, at(1_000).mirror_at_most), (20, 10));
        assert_eq!((at(4_000).list_above, at(4_000).mirror_at_most), (80, 40));
        assert_eq!(at(u64::MAX).list_above, u32::MAX, "saturates");
        let fixed = Adaptive { round_trip: None, ..adaptive };
        assert_eq!(fixed.at(Some(Duration::from_secs(1))), fixed);
    }

    #[test]
    fn a_round_trip_of_zero_is_refused() {
        let adaptive = Some(Adaptive { round_trip: Some(Duration::ZERO), ..Adaptive::default() });
        let refused = LockConfig { adaptive, ..LockConfig::default() }.check(Kind::Mutex);
        assert!(matches!(refused, Err(Error::InvalidArgument(_))), "{refused:?}");
    }
}

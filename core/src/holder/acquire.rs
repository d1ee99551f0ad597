//! An acquire: its options, the handle's turn, the timeout and cancellation
//! around the recipe's contention.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::futures::Notified;
use tokio::sync::OwnedMutexGuard;
use tokio::time::{sleep_until, Instant};

use super::{HolderState, OnHeld};
use crate::contender::{Removals, Won};
use crate::error::{Error, Result};
use crate::state::Outcome;

/// How to acquire: kazoo's `acquire(blocking, timeout, ephemeral)` plus a lease.
///
/// ```
/// use std::time::Duration;
/// use zoolock::{Acquire, Lock, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # // A real server for the example (Debian's ZooKeeper, started by the harness).
/// # let connect = zk_harness::shared().connect_string();
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let session = Session::connect(SessionOptions::new(connect)).await?;
/// let first = Lock::mutex(&session, "/locks/ledger")?;
/// let second = Lock::mutex(&session, "/locks/ledger")?;
/// // Waits at most 5 s; once held, released by itself after a minute at the latest.
/// let leased = Acquire::timeout(Duration::from_secs(5)).lease(Duration::from_secs(60));
/// assert!(first.acquire(leased).await?);
/// assert!(!second.acquire(Acquire::no_wait()).await?); // kazoo's blocking=False: one try
/// assert!(!second.acquire(Acquire::timeout(Duration::from_millis(200))).await?); // gave up, no node left
/// first.release().await?;
/// assert!(second.acquire(Acquire::default()).await?); // blocking, no timeout: waits as long as it takes
/// second.release().await?;
/// session.close().await;
/// # Ok(()) })
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Acquire {
    /// Waits for the holder; `false` tries once (kazoo's `blocking`).
    pub blocking: bool,
    /// `None` waits forever; `Some(ZERO)` tries once, like `blocking: false`.
    /// A deadline for the whole acquire, reconnections included.
    pub timeout: Option<Duration>,
    /// A persistent node survives the session: the lock stays held until released.
    pub ephemeral: bool,
    /// Releases the hold by itself this long after it was acquired (Redisson's leaseTime).
    pub lease: Option<Duration>,
    /// Who acquires: on a reentrant lock, an acquire by the owner that holds
    /// counts up and a release by another owner is refused. The handle
    /// itself ([`Owner::HANDLE`]) unless a binding names a thread or task.
    pub owner: Owner,
    /// The hold outlives the handle: once every clone of the handle is
    /// dropped, the hold lasts until the session ends (closed, or expired
    /// for an ephemeral node), its lease runs out or its node is deleted,
    /// and its listeners still hear how it ended. kazoo's: a
    /// garbage-collected `Lock` keeps its node. Off, dropping a held handle
    /// releases it (Rust's and .NET's way). A kept hold keeps its session
    /// open until then, even with no other handle on it.
    pub keep_if_dropped: bool,
}

/// Who holds a reentrant lock: the handle in Rust, a thread or task id in
/// the bindings (never 0, which is the handle's).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Owner(pub u64);

impl Owner {
    /// The handle itself: Rust's owner, and any acquire that names none.
    pub const HANDLE: Owner = Owner(0);
}

impl Default for Acquire {
    fn default() -> Self {
        Acquire {
            blocking: true,
            timeout: None,
            ephemeral: true,
            lease: None,
            owner: Owner::HANDLE,
            keep_if_dropped: false,
        }
    }
}

impl Acquire {
    /// A single try: `Ok(false)` at once if others hold.
    pub fn no_wait() -> Self {
        Acquire { blocking: false, ..Acquire::default() }
    }

    /// Waits at most `timeout` for the whole acquire, reconnections included.
    pub fn timeout(timeout: Duration) -> Self {
        Acquire { timeout: Some(timeout), ..Acquire::default() }
    }

    /// A node that outlives the session (kazoo's `ephemeral=False`).
    pub fn persistent(self) -> Self {
        Acquire { ephemeral: false, ..self }
    }

    /// Lets go by itself `lease` after the acquire (see [`Acquire::lease`](Acquire#structfield.lease)).
    pub fn lease(self, lease: Duration) -> Self {
        Acquire { lease: Some(lease), ..self }
    }

    /// Acquires for `owner` (a thread or task of a binding's reentrant lock).
    pub fn owner(self, owner: Owner) -> Self {
        Acquire { owner, ..self }
    }

    /// Keeps the hold when the handle is dropped (see [`Acquire::keep_if_dropped`](Acquire#structfield.keep_if_dropped)).
    pub fn keep_if_dropped(self) -> Self {
        Acquire { keep_if_dropped: true, ..self }
    }

    fn validate(&self) -> Result<()> {
        if !self.blocking && self.timeout.is_some() {
            return Err(Error::InvalidArgument("a timeout needs a blocking acquire".into()));
        }
        if self.lease.is_some_and(|l| l.is_zero()) {
            return Err(Error::InvalidArgument("a lease must be longer than zero".into()));
        }
        Ok(())
    }

    /// Whether to wait for the holder rather than try once.
    pub(crate) fn waits(&self) -> bool {
        self.blocking && self.timeout != Some(Duration::ZERO)
    }
}

/// What waiting for the handle's turn and contending came to.
enum Turn {
    Won(Won, OwnedMutexGuard<()>),
    /// The handle held already ([`OnHeld::Succeed`]).
    AlreadyHeld,
    /// A single try found it taken.
    NotWon,
    /// The timeout ran out first.
    TimedOut,
}

impl HolderState {
    /// Runs `contend` under the handle's turn, bounded by the timeout and
    /// cancellable; records the win. Nodes that `contend` queued and did not
    /// win with are removed (see [`Attempt`](crate::contender::Attempt)) before this returns.
    ///
    /// A function returning an `async move` block rather than an `async fn`:
    /// an `async fn`'s future keeps its arguments twice (captured, and moved
    /// into locals), and a queued waiter keeps this one while it waits.
    ///
    /// Runs in an `acquire` span of the caller's, with the path and the
    /// recipe's `kind`: every event of the acquisition is in it, and so is
    /// the work it leaves in the background while it runs (removing a node
    /// it did not win with; see [`InSpan`] for an acquire dropped midway).
    pub(crate) fn acquire<'a, F, Fut>(
        self: &'a Arc<Self>,
        kind: &'static str,
        options: &'a Acquire,
        contend: F,
    ) -> impl Future<Output = Result<Outcome>> + 'a
    where
        F: Fn(Removals) -> Fut + 'a,
        Fut: Future<Output = Result<Option<Won>>> + 'a,
    {
        let span = tracing::info_span!("acquire", path = %self.path, kind);
        let acquire = async move {
            options.validate()?;
            self.session.check_usable()?;
            if self.session.is_closed() {
                return Err(self.session.closed_error());
            }
            let started = Instant::now();
            if self.enter(options.owner) {
                return Ok(Outcome::Acquired);
            }
            // A single try (a zero timeout included) is bounded by the request
            // bound in `take_turn_and`: a deadline of now would end it unanswered.
            // A timeout too large for a deadline (`Duration::MAX`) waits forever.
            let deadline = options.timeout.filter(|_| options.waits()).and_then(|t| Instant::now().checked_add(t));
            let cancels = self.cancels.load(Ordering::Acquire);
            loop {
                let removals = Removals::default();
                // Set once this acquire has the handle's turn: before that, it waits
                // for the handle itself, not for other contenders.
                let queued = AtomicBool::new(false);
                // Boxed once: moved through the select and the timeout, it would be
                // stored inline several times over (a waiter pays this for as long as it waits).
                let work = self.take_turn_and(options, &queued, Box::pin(contend(removals.clone())));
                let outcome = tokio::select! {
                    biased;
                    won = work => won,
                    // A pending acquire holds a clone of the client, which would keep a
                    // closed session open (and its locks held): it ends on close too.
                    ended = self.cancelled_or_closed(cancels) => Err(ended),
                    _ = sleep_until_some(deadline) => Ok(Turn::TimedOut),
                };
                self.removed(&removals).await;
                let outcome = outcome?;
                if let Turn::TimedOut = outcome {
                    self.meter().inspect(|m| m.timed_out(&self.path));
                }
                let (won, turn) = match outcome {
                    Turn::Won(won, turn) => (won, turn),
                    Turn::AlreadyHeld => return Ok(Outcome::Acquired),
                    Turn::NotWon | Turn::TimedOut if queued.load(Ordering::Acquire) => {
                        let waited = started.elapsed();
                        tracing::debug!(path = self.path, ?waited, "zoolock did not acquire: taken until the timeout");
                        return Ok(Outcome::Taken);
                    }
                    Turn::NotWon | Turn::TimedOut => return Ok(Outcome::HandleBusy),
                };
                let waited = won.waited;
                if self.install(won, turn, options) {
                    self.meter().inspect(|m| m.acquired(&self.series, &self.path, started.elapsed(), waited));
                    return Ok(Outcome::Acquired);
                }
                // The win belonged to a session that has ended since, or was
                // stale: queue again, as a waiter whose session expired does,
                // once the dropped win's nodes are gone (a multi-lock's others live).
                self.removed(&removals).await;
                if self.session.is_closed() {
                    return Err(self.session.closed_error());
                }
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    self.meter().inspect(|m| m.timed_out(&self.path));
                    return Ok(Outcome::Taken);
                }
            }
        };
        InSpan::new(span, acquire)
    }

    /// Waits for `removals`, the nodes an attempt queued and did not hold
    /// with, while connected only: a removal waiting for a connection goes
    /// on in the background, and the caller's limit holds (issue 35).
    async fn removed(&self, removals: &Removals) {
        // Boxed, and only when there is something to wait for: its timer is large.
        if removals.any() {
            Box::pin(async {
                tokio::select! {
                    () = removals.wait() => {}
                    () = self.session.disconnected() => {}
                }
            })
            .await;
        }
    }

    /// An `async move` block, not an `async fn`: a queued waiter keeps it
    /// (see [`HolderState::acquire`]).
    fn take_turn_and<'a>(
        &'a self,
        options: &'a Acquire,
        queued: &'a AtomicBool,
        contend: impl Future<Output = Result<Option<Won>>> + 'a,
    ) -> impl Future<Output = Result<Turn>> + 'a {
        async move {
            let turn = self.turn.clone();
            if !options.waits() {
                let Ok(turn) = turn.try_lock_owned() else {
                    return Ok(if self.enter(options.owner) { Turn::AlreadyHeld } else { Turn::NotWon });
                };
                queued.store(true, Ordering::Release);
                // Even a single try must not hang on a dead connection, nor wait
                // for one to come: its caller's limit is now (issue 35).
                // Boxed: a timer is large, and waiters (who wait for a turn) never need it.
                let won = Box::pin(self.session.bounded_if_connected(contend)).await?;
                return Ok(won.map_or(Turn::NotWon, |w| Turn::Won(w, turn)));
            }
            // A free turn means nothing is held (a hold keeps the turn): no
            // hold to wait for or enter. Waiting for a busy one is boxed, so
            // that what a queued waiter keeps is small (issue 16).
            let turn = match (turn.clone().try_lock_owned(), self.on_held) {
                (Ok(turn), _) => turn,
                (Err(_), OnHeld::Wait) => Box::pin(turn.lock_owned()).await,
                (Err(_), OnHeld::Succeed | OnHeld::Reenter) => {
                    match Box::pin(self.turn_or_enter(turn, options.owner)).await {
                        Some(turn) => turn,
                        None => return Ok(Turn::AlreadyHeld),
                    }
                }
            };
            queued.store(true, Ordering::Release);
            Ok(contend.await?.map_or(Turn::NotWon, |w| Turn::Won(w, turn)))
        }
    }

    /// Waits for the handle's turn, or until a hold that `owner` may enter
    /// (see [`HolderState::enter`]) — one another acquire on this handle wins —
    /// and enters it (`None`). Every hold recorded or ended changes the
    /// state, so each change is a moment to ask again; the check runs
    /// outside the state's lock, which [`HolderState::mark`] takes under `held`.
    async fn turn_or_enter(&self, turn: Arc<tokio::sync::Mutex<()>>, owner: Owner) -> Option<OwnedMutexGuard<()>> {
        let mut states = self.subscribe();
        let turn = turn.lock_owned();
        tokio::pin!(turn);
        loop {
            if self.enter(owner) {
                return None;
            }
            tokio::select! {
                turn = &mut turn => return Some(turn),
                _ = states.changed() => {}
            }
        }
    }

    /// Whether an acquire by `owner` succeeds at once, without a second hold:
    /// on a semaphore that holds; on a reentrant lock that `owner` holds,
    /// counting one acquire more.
    fn enter(&self, owner: Owner) -> bool {
        match (self.on_held, self.held.lock().unwrap().as_mut()) {
            (OnHeld::Succeed, Some(_)) => true,
            (OnHeld::Reenter, Some(held)) if held.owner == owner && held.depth > 0 => {
                held.depth += 1;
                true
            }
            _ => false,
        }
    }

    pub(crate) fn cancel(&self) {
        self.cancels.fetch_add(1, Ordering::AcqRel);
        self.cancelled.notify_waiters();
    }

    /// Completes once [`HolderState::cancel`] was called after the count was
    /// `seen`, or the session closed: the error to end the acquire with. Two
    /// notifications rather than a watch of the session's status, which is
    /// larger, for as long as a waiter waits (issue 16).
    fn cancelled_or_closed(&self, seen: u64) -> CancelledOrClosed<'_> {
        CancelledOrClosed { holder: self, seen, cancelled: self.cancelled.notified(), closed: self.session.closing() }
    }
}

pin_project_lite::pin_project! {
    /// [`HolderState::cancelled_or_closed`]: written out, because an `async
    /// fn` with a `select!` keeps its arguments and the select's state besides
    /// the two notifications, for as long as a waiter waits.
    struct CancelledOrClosed<'a> {
        holder: &'a HolderState,
        seen: u64,
        #[pin]
        cancelled: Notified<'a>,
        #[pin]
        closed: Notified<'a>,
    }
}

impl Future for CancelledOrClosed<'_> {
    type Output = Error;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Error> {
        let mut this = self.project();
        loop {
            // Registered before the checks: a cancel or close between them still wakes it.
            this.cancelled.as_mut().enable();
            this.closed.as_mut().enable();
            if this.holder.cancels.load(Ordering::Acquire) != *this.seen {
                return Poll::Ready(Error::Cancelled { path: this.holder.path.clone() });
            }
            if this.holder.session.is_closed() {
                return Poll::Ready(this.holder.session.closed_error());
            }
            if this.cancelled.as_mut().poll(cx).is_pending() && this.closed.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            // One of them fired: wait on fresh ones, after the checks again.
            this.cancelled.set(this.holder.cancelled.notified());
            this.closed.set(this.holder.session.closing());
        }
    }
}

pin_project_lite::pin_project! {
    /// `future`, polled in `span`, as tracing's `Instrumented` does, but with
    /// the span boxed, and not kept at all when disabled: a queued waiter
    /// keeps 8 bytes for it rather than 40 (issue 16). Unlike `Instrumented`
    /// it drops the future outside the span (what an abandoned acquire
    /// removes in the background is in the dropper's span): in the span, it
    /// would keep 8 bytes more.
    struct InSpan<F> {
        span: Option<Box<tracing::Span>>,
        #[pin]
        future: F,
    }
}

impl<F> InSpan<F> {
    fn new(span: tracing::Span, future: F) -> Self {
        InSpan { span: (!span.is_disabled()).then(|| Box::new(span)), future }
    }
}

impl<F: Future> Future for InSpan<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let _entered = this.span.as_deref().map(tracing::Span::enter);
        this.future.poll(cx)
    }
}

/// Completes at `deadline`, never without one. Boxed: a timer is large, and
/// an acquire without a timeout (the common waiter) would carry one for as
/// long as it waits; written out, it keeps a pointer and nothing else.
fn sleep_until_some(deadline: Option<Instant>) -> SleepUntilSome {
    SleepUntilSome(deadline.map(|deadline| Box::pin(sleep_until(deadline))))
}

struct SleepUntilSome(Option<Pin<Box<tokio::time::Sleep>>>);

impl Future for SleepUntilSome {
    type Output = ();

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        match self.0.as_mut() {
            Some(sleep) => sleep.as_mut().poll(cx),
            None => Poll::Pending,
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use zookeeper_client as zk;

    use tokio::time::timeout;

    use super::*;
    use crate::contender::{Attempt, Removal, Target};
    use crate::session::Session;
    use crate::SessionOptions;

    /// The window between a win and its record, while the acquire waits for
    /// earlier removals: an acquire dropped there removes the node it won.
    #[tokio::test(flavor = "multi_thread")]
    async fn an_acquire_dropped_between_its_win_and_its_record_removes_the_node() {
        let connect = zk_harness::shared().connect_string();
        let session = Session::connect(SessionOptions::new(&connect)).await.unwrap();
        let raw = zk::Client::connect(&connect).await.unwrap();
        let parent = format!("/zoolock-tests{}", zk_harness::unique_path("won-dropped"));
        let open = zk::Acls::anyone_all();
        raw.mkdir(&parent, &zk::CreateMode::Persistent.with_acls(open)).await.unwrap();
        let node = format!("{parent}/node");
        let holder = HolderState::new(&session, &parent, OnHeld::Wait);
        let won = Arc::new(tokio::sync::Notify::new());
        let contend = |removals: Removals| {
            let (session, node, won) = (session.clone(), node.clone(), won.clone());
            async move {
                // An earlier attempt's removal, still running when this one wins.
                removals.push(tokio::spawn(std::future::pending::<()>()));
                let live = session.live().await?;
                let ephemeral = zk::CreateMode::Ephemeral.with_acls(open);
                let (stat, _) = live.client.create(&node, b"", &ephemeral).await.unwrap();
                let target = Target::Node(node.clone());
                let removal = Removal { session, target, generation: live.generation, ephemeral: true };
                let mut attempt = Attempt::new(removal, &removals);
                won.notify_one();
                Ok(Some(attempt.won(stat.czxid)))
            }
        };
        let options = Acquire::default();
        let mut acquire = Box::pin(holder.acquire("mutex", &options, contend));
        tokio::select! {
            _ = &mut acquire => panic!("the acquire did not wait for the earlier removal"),
            _ = won.notified() => {}
        }
        drop(acquire);
        assert!(!holder.is_held());
        let gone = async {
            loop {
                let (stat, watcher) = raw.check_and_watch_stat(&node).await.unwrap();
                if stat.is_none() {
                    return;
                }
                watcher.changed().await;
            }
        };
        timeout(Duration::from_secs(10), gone).await.expect("the won node outlived the dropped acquire");
    }
}

//! Leader election as kazoo's `Election` does it: a [`Lock`] on the
//! election path, whose holder leads. Thin on purpose: what the lock knows
//! (its state, fencing token, loss) is the leadership's.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::lock::{Kind, Lock, LockConfig};
use crate::error::{Error, Result};
use crate::holder::sealed::Recipe;
use crate::holder::Acquire;
use crate::runtime;
use crate::session::Session;
use crate::state::LockState;
use crate::znode::Transaction;

/// A candidate in the election at a path (kazoo's `Election(path, identifier)`,
/// Curator's `LeaderLatch`). Its node is a kazoo `Lock` node, so kazoo
/// candidates on the same path take part in the same election.
///
/// ```
/// use zoolock::{Election, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # let connect = zk_harness::shared().connect_string();
/// let session = Session::connect_blocking(SessionOptions::new(connect))?;
/// let election = Election::new(&session, "/elections/scheduler", "worker-1")?;
/// let leadership = election.lead_blocking()?; // waits until this candidate leads
/// assert_eq!(election.contenders_blocking()?, vec!["worker-1".to_string()]);
/// let term = leadership.fencing_token(); // hand it to what the leader writes to
/// # let _ = term;
/// leadership.resign_blocking()?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Election {
    lock: Lock,
}

impl std::fmt::Debug for Election {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Election").field("path", &self.lock.path()).finish_non_exhaustive()
    }
}

impl Election {
    /// An election at `path`; `identifier` is the node data `contenders()` shows. Nothing is sent before [`Election::lead`].
    pub fn new(session: &Session, path: &str, identifier: impl Into<Vec<u8>>) -> Result<Election> {
        let config = LockConfig { identifier: identifier.into(), ..LockConfig::default() };
        Ok(Election { lock: Lock::new(session, path, Kind::Mutex, config)? })
    }

    /// Waits until this candidate leads. Fails with [`Error::Cancelled`]
    /// after [`Election::cancel`] (its node removed), and as an acquire does.
    /// One term at a time: while a [`Leadership`] of this candidate lasts, a
    /// second `lead` waits for it to end.
    pub async fn lead(&self) -> Result<Leadership> {
        self.lock.acquire(Acquire::default()).await?;
        self.term()
    }

    /// [`Election::lead`] waiting at most `timeout` (zero: one try, as an
    /// acquire's): `Ok(None)` when others led the whole time, this
    /// candidacy's node then removed (Curator's `LeaderLatch.await(timeout)`).
    pub async fn lead_within(&self, timeout: Duration) -> Result<Option<Leadership>> {
        if !self.lock.acquire(Acquire::timeout(timeout)).await? {
            return Ok(None);
        }
        self.term().map(Some)
    }

    /// The term the lock just won: its node and token read together, of one hold.
    fn term(&self) -> Result<Leadership> {
        let Some((node, token)) = self.lock.state_of().node_and_token() else {
            // Lost between the win and here (an expiry): a term that is over.
            return Err(Error::NotHeld { path: self.lock.path().to_owned() });
        };
        Ok(Leadership { lock: self.lock.clone(), node, token, resigned: AtomicBool::new(false) })
    }

    /// [`Election::lead`] for callers without an async runtime.
    pub fn lead_blocking(&self) -> Result<Leadership> {
        runtime::block_on(self.lead())
    }

    /// kazoo's `run(func)`: leads, calls `work`, then resigns; `Ok(None)`
    /// if the candidacy was cancelled before it led.
    pub fn run_blocking<T>(&self, work: impl FnOnce(&Leadership) -> T) -> Result<Option<T>> {
        let leadership = match self.lead_blocking() {
            Ok(leadership) => leadership,
            Err(Error::Cancelled { .. }) => return Ok(None),
            Err(err) => return Err(err),
        };
        let done = work(&leadership);
        leadership.resign_blocking()?;
        Ok(Some(done))
    }

    /// Withdraws a waiting candidacy (kazoo's `cancel()`): a pending `lead`
    /// fails with [`Error::Cancelled`]. A term already won is not affected.
    pub fn cancel(&self) {
        self.lock.cancel()
    }

    /// The identifiers of the candidates, the leader first.
    pub async fn contenders(&self) -> Result<Vec<String>> {
        self.lock.queue().await
    }

    /// [`Election::contenders`] for callers without an async runtime.
    pub fn contenders_blocking(&self) -> Result<Vec<String>> {
        runtime::block_on(self.contenders())
    }

    /// The election path.
    pub fn path(&self) -> &str {
        self.lock.path()
    }

    /// The lock underneath, for its listeners and state.
    pub fn lock(&self) -> &Lock {
        &self.lock
    }
}

/// One term of leadership. It lasts until [`Leadership::resign`] or the drop
/// of this value (which resigns in the background), or until the lock is
/// lost: watch [`Leadership::state`] — `Suspended` while the connection is
/// down (stop acting as leader until it is `Held` again), `Lost` when the
/// session expired or the node was deleted (the term is over; another
/// candidate may lead already). Everything it does is about its own term,
/// never a later one the same candidate won: a term is known by its token.
pub struct Leadership {
    lock: Lock,
    node: String,
    token: i64,
    /// Set by the first resign: the term is `Released` for good, whatever the lock does next.
    resigned: AtomicBool,
}

impl std::fmt::Debug for Leadership {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Leadership")
            .field("node", &self.node)
            .field("token", &self.token)
            .field("resigned", &self.resigned.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Leadership {
    /// The term's fencing token (the lock's, see [`Lock::fencing_token`]):
    /// strictly greater than every earlier term's on this path.
    pub fn fencing_token(&self) -> i64 {
        self.token
    }

    /// The leader's node.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Whether this term is still on: `Held` or `Suspended`. The token,
    /// a zxid, is the term's alone (a node name could come back, e.g. after
    /// the lock path was re-created).
    fn current(&self) -> bool {
        self.lock.fencing_token() == Some(self.token)
    }

    /// `Held` while leading; `Suspended`, `Lost(_)` or `Released` otherwise
    /// (`Released` for good once resigned).
    pub fn state(&self) -> LockState {
        if self.resigned.load(Ordering::Acquire) {
            LockState::Released
        } else if self.current() {
            self.lock.state()
        } else {
            match self.lock.state() {
                lost @ LockState::Lost(_) => lost,
                _ => LockState::Released,
            }
        }
    }

    /// Whether this term lasts: held, not suspended or lost.
    pub fn is_leader(&self) -> bool {
        self.state() == LockState::Held
    }

    /// Tells `callback` of each change of this term's state, on zoolock's
    /// event thread, as [`Leadership::state`] reads it then (a loss as the
    /// lock says it): the lock outlives the term, and its later terms are
    /// this one's `Released`. Returns the listener's id.
    pub fn add_listener(self: &Arc<Leadership>, callback: Box<dyn Fn(LockState) + Send + Sync>) -> u64 {
        let term = Arc::downgrade(self);
        self.lock.add_listener(Box::new(move |state| {
            callback(match (state, term.upgrade()) {
                (lost @ LockState::Lost(_), _) => lost,
                (_, Some(term)) => term.state(),
                (_, None) => LockState::Released,
            })
        }))
    }

    /// Stops the listener [`add_listener`](Leadership::add_listener) returned `id` for; false if it was gone.
    pub fn remove_listener(&self, id: u64) -> bool {
        self.lock.remove_listener(id)
    }

    /// Every change of the lock's state: `wait_for(|s| matches!(s, LockState::Lost(_)))`
    /// learns that the term is over.
    pub fn subscribe(&self) -> watch::Receiver<LockState> {
        self.lock.subscribe()
    }

    /// A transaction that commits only while this term lasts
    /// ([`Transaction::fenced_by`]).
    pub fn fenced(&self) -> Result<Transaction> {
        if self.resigned.load(Ordering::Acquire) || !self.current() {
            return Err(Error::NotHeld { path: self.lock.path().to_owned() });
        }
        #[cfg(test)]
        tests::after_term_check();
        // On the term's own node: the lock may hold a later term by now.
        // An election's nodes have kazoo's names, unique for good: no session check.
        Ok(self.lock.session().transaction().fenced_at(self.lock.path(), vec![(self.node.clone(), None)]))
    }

    /// Ends the term: the next candidate leads. `Ok(false)` if it was over
    /// already (lost, or resigned before). By reference, so that a binding
    /// that shares the term with its listeners needs no state of its own.
    pub async fn resign(&self) -> Result<bool> {
        if self.resigned.swap(true, Ordering::AcqRel) {
            return Ok(false);
        }
        Ok(self.lock.state_of().release_term(self.token).await)
    }

    /// [`Leadership::resign`] for callers without an async runtime.
    pub fn resign_blocking(&self) -> Result<bool> {
        runtime::block_on(self.resign())
    }
}

impl Drop for Leadership {
    fn drop(&mut self) {
        if !*self.resigned.get_mut() && self.current() && runtime::check_process().is_ok() {
            let (lock, token) = (self.lock.clone(), self.token);
            // Only this term: by the time the task runs, the lock may hold a later one.
            lock.session().clone().spawn(async move { lock.state_of().release_term(token).await });
        }
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::znode::Create;
    use crate::SessionOptions;

    thread_local! {
        /// Run once where a leadership has checked its term and goes on to use it.
        static AFTER_TERM_CHECK: RefCell<Option<Box<dyn FnOnce()>>> = RefCell::new(None);
    }

    pub(super) fn after_term_check() {
        if let Some(interleave) = AFTER_TERM_CHECK.with(|hook| hook.borrow_mut().take()) {
            interleave();
        }
    }

    /// The term is lost (an operator deletes its node) and the same
    /// candidate wins the next one, between the old leadership's check of its
    /// term and its fence: the old object must not write under the new term.
    #[test]
    fn an_old_term_cannot_write_under_the_next_one_won_between_its_check_and_its_fence() {
        let connect = zk_harness::shared().connect_string();
        let session = Session::connect_blocking(SessionOptions::new(&connect)).unwrap();
        let operator = Session::connect_blocking(SessionOptions::new(&connect)).unwrap();
        let path = format!("/zoolock-tests{}", zk_harness::unique_path("term-fence"));
        let state = format!("{path}-state");
        operator.create_blocking(&state, Some(b""), &Create::default().makepath()).unwrap();
        let election = Election::new(&session, &path, "a").unwrap();
        let old = election.lead_blocking().unwrap();
        let next = Arc::new(Mutex::new(None));
        let (won, old_node) = (next.clone(), old.node().to_owned());
        let ops = operator.clone();
        AFTER_TERM_CHECK.with(|hook| {
            *hook.borrow_mut() = Some(Box::new(move || {
                let mut states = election.lock().subscribe();
                ops.delete_blocking(&old_node, None, false).unwrap();
                runtime::block_on(states.wait_for(|s| matches!(s, LockState::Lost(_)))).unwrap();
                *won.lock().unwrap() = Some(election.lead_blocking().unwrap());
            }))
        });
        let write = old.fenced().and_then(|t| t.set(&state, Some(b"old term"), None).commit_blocking());
        let next = next.lock().unwrap().take().expect("the next term was won in between");
        assert_ne!(next.node(), old.node());
        assert!(matches!(write, Err(Error::NotHeld { .. })), "the old term wrote under the next: {write:?}");
        assert_eq!(operator.get_blocking(&state).unwrap().0, Some(b"".to_vec()));
        next.fenced().unwrap().set(&state, Some(b"next term"), None).commit_blocking().unwrap();
        assert!(next.resign_blocking().unwrap());
        session.close_blocking();
        operator.close_blocking();
    }
}

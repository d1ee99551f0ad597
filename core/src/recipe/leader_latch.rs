//! Curator's `LeaderLatch`: a candidate that stays in the election at its
//! path from `start` to `close` — campaigning again after a term ends with
//! an expiry or a deletion of its node — and says at any time whether it
//! leads. kazoo users write it by hand around `Election.run`. Its node is
//! the [`Election`]'s, so kazoo `Election` candidates on the path take part.
//!
//! It leads only while its term is `Held`, read when asked: `Suspended`
//! (the connection down, or the quorum's confirmation of the session
//! lapsed) reads as not leading, as in Curator.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::election::{Election, Leadership};
use crate::error::{Error, ErrorKind, Result};
use crate::runtime;
use crate::session::Session;
use crate::state::LockState;

/// The pause before campaigning again after a `lead` that failed with a
/// passing error (a lost term campaigns at once).
const AGAIN_AFTER: Duration = Duration::from_millis(500);

/// A candidate that stays in the election at its path while started.
/// Clones are the same candidate; dropping the last one closes it.
///
/// ```
/// use std::time::Duration;
/// use zoolock::{LeaderLatch, Session, SessionOptions};
/// # fn main() -> zoolock::Result<()> {
/// # let connect = zk_harness::shared().connect_string();
/// let session = Session::connect_blocking(SessionOptions::new(connect))?;
/// let latch = LeaderLatch::new(&session, "/elections/latch-doc", "worker-1")?;
/// latch.start()?;
/// assert!(latch.wait_blocking(Some(Duration::from_secs(10)))?); // leads: alone in the election
/// assert!(latch.has_leadership());
/// latch.close_blocking(); // its node deleted: the next candidate leads
/// assert!(!latch.has_leadership());
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct LeaderLatch {
    inner: Arc<Latch>,
}

impl std::fmt::Debug for LeaderLatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LeaderLatch").field("path", &self.inner.election.path()).finish_non_exhaustive()
    }
}

struct Latch {
    election: Election,
    /// The fencing token of the term the campaign holds, while it holds it.
    leading: Arc<watch::Sender<Option<i64>>>,
    /// Why the candidacy is over: closed, its session closed, or an error
    /// no new campaign would get past. Set once the node is gone.
    ended: Arc<watch::Sender<Option<Error>>>,
    campaign: Mutex<Campaign>,
}

enum Campaign {
    Idle,
    Started { stop: watch::Sender<bool>, task: JoinHandle<()> },
    Closing,
}

impl LeaderLatch {
    /// A candidate at `path`; `identifier` is the node data the election's
    /// `contenders` show. Nothing is sent before [`LeaderLatch::start`].
    pub fn new(session: &Session, path: &str, identifier: impl Into<Vec<u8>>) -> Result<LeaderLatch> {
        let election = Election::new(session, path, identifier)?;
        let latch = Latch {
            election,
            leading: Arc::new(watch::Sender::new(None)),
            ended: Arc::new(watch::Sender::new(None)),
            campaign: Mutex::new(Campaign::Idle),
        };
        Ok(LeaderLatch { inner: Arc::new(latch) })
    }

    /// Joins the election and returns: from now until [`LeaderLatch::close`],
    /// a task of zoolock's runtime leads whenever this candidate can.
    /// Starting twice is [`Error::InvalidArgument`]; after the candidacy
    /// ended, why it did ([`Error::Closed`] after a close).
    pub fn start(&self) -> Result<()> {
        let mut campaign = self.inner.campaign.lock().unwrap();
        if let Some(ended) = self.inner.ended.borrow().clone() {
            return Err(ended);
        }
        match *campaign {
            Campaign::Idle => {}
            Campaign::Started { .. } => {
                return Err(Error::InvalidArgument("the leader latch is started already".into()))
            }
            Campaign::Closing => return Err(Error::Closed),
        }
        runtime::check_process()?;
        let (stop, stopped) = watch::channel(false);
        let election = self.inner.election.clone();
        let (leading, ended) = (self.inner.leading.clone(), self.inner.ended.clone());
        let task = runtime::spawn(async move {
            let why = run(&election, &leading, stopped).await;
            leading.send_replace(None);
            ended.send_if_modified(|now| {
                now.is_none() && {
                    *now = Some(why);
                    true
                }
            });
        });
        *campaign = Campaign::Started { stop, task };
        Ok(())
    }

    /// Whether this candidate leads now: its term held, and the session
    /// confirmed by the quorum at this instant.
    pub fn has_leadership(&self) -> bool {
        self.fencing_token().is_some()
    }

    /// The fencing token of the term this candidate leads now, if it leads.
    pub fn fencing_token(&self) -> Option<i64> {
        let token = (*self.inner.leading.borrow())?;
        let lock = self.inner.election.lock();
        (lock.state() == LockState::Held && lock.fencing_token() == Some(token)).then_some(token)
    }

    /// Watches the leading term's fencing token as the campaign sees it:
    /// `Some` while its term is held (Curator's `LeaderLatchListener`:
    /// `isLeader`, `notLeader`); [`LeaderLatch::has_leadership`] also checks
    /// the session's confirmation when read.
    pub fn subscribe(&self) -> watch::Receiver<Option<i64>> {
        self.inner.leading.subscribe()
    }

    /// Waits until this candidate leads (Curator's `await`): `Ok(true)`, or
    /// `Ok(false)` once `timeout` has passed (`None`: for ever). Once the
    /// candidacy is over, why: [`Error::Closed`] after a close or when its
    /// session closed.
    pub async fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        let (mut leading, mut ended) = (self.inner.leading.subscribe(), self.inner.ended.subscribe());
        let leads = async {
            loop {
                tokio::select! {
                    biased;
                    why = ended.wait_for(Option::is_some) => return Err(why.expect("the sender lives").clone().unwrap()),
                    _ = leading.wait_for(Option::is_some) => {}
                }
                if self.has_leadership() {
                    return Ok(true);
                }
                // Held but not confirmed: the session's timer publishes `Suspended`, then `Held` again.
                let _ = leading.changed().await;
            }
        };
        match timeout {
            None => leads.await,
            Some(timeout) => tokio::time::timeout(timeout, leads).await.unwrap_or(Ok(false)),
        }
    }

    /// [`LeaderLatch::wait`] for callers without an async runtime.
    pub fn wait_blocking(&self, timeout: Option<Duration>) -> Result<bool> {
        runtime::block_on(self.wait(timeout))
    }

    /// Leaves the election: ends the term it leads or its candidacy, and
    /// returns once its node is deleted (in the background while the
    /// connection is down, as a release). A second close returns when the
    /// first is done.
    pub async fn close(&self) {
        let campaign = std::mem::replace(&mut *self.inner.campaign.lock().unwrap(), Campaign::Closing);
        match campaign {
            Campaign::Started { stop, task } => {
                stop.send_replace(true);
                let _ = task.await;
            }
            Campaign::Idle => {}
            Campaign::Closing => {
                let mut ended = self.inner.ended.subscribe();
                let _ = ended.wait_for(Option::is_some).await;
                return;
            }
        }
        self.inner.leading.send_replace(None);
        self.inner.ended.send_if_modified(|now| {
            now.is_none() && {
                *now = Some(Error::Closed);
                true
            }
        });
    }

    /// [`LeaderLatch::close`] for callers without an async runtime.
    pub fn close_blocking(&self) {
        runtime::block_on(self.close())
    }

    /// The election path.
    pub fn path(&self) -> &str {
        self.inner.election.path()
    }
}
impl Drop for Latch {
    /// Closes in the background: the campaign resigns its term, or withdraws its candidacy, and ends.
    fn drop(&mut self) {
        if let Campaign::Started { stop, .. } = &*self.campaign.lock().unwrap() {
            stop.send_replace(true);
        }
    }
}

/// How a term ended.
enum Ended {
    Lost,
    Stopped,
}

/// The campaign: leads, keeps `leading` current while it does, and leads
/// again when the term is lost, until `stop` (a close) or an error that a
/// new campaign would not get past. Returns why it ended, its node gone.
async fn run(election: &Election, leading: &watch::Sender<Option<i64>>, mut stop: watch::Receiver<bool>) -> Error {
    loop {
        if *stop.borrow() {
            return Error::Closed;
        }
        // Polled before `stop` is looked at: a close then cancels a `lead`
        // that has started, which fails with Cancelled once its node is
        // removed (dropping it would remove the node in the background,
        // after the close returned).
        let lead = election.lead();
        tokio::pin!(lead);
        let mut stopping = false;
        let won = loop {
            tokio::select! {
                biased;
                won = &mut lead => break won,
                _ = stop.wait_for(|stop| *stop), if !stopping => {
                    stopping = true;
                    election.cancel();
                }
            }
        };
        let term = match won {
            Ok(term) if stopping => {
                let _ = term.resign().await;
                return Error::Closed;
            }
            Ok(term) => term,
            Err(_) if stopping => return Error::Closed,
            Err(err) if !passing(&err) => return err,
            Err(err) => {
                tracing::warn!(path = election.path(), error = %err, "leader latch: campaigning again");
                tokio::select! {
                    biased;
                    _ = stop.wait_for(|stop| *stop) => return Error::Closed,
                    () = tokio::time::sleep(AGAIN_AFTER) => continue,
                }
            }
        };
        let ended = lead_while(&term, leading, &mut stop).await;
        leading.send_replace(None);
        if let Ended::Stopped = ended {
            let _ = term.resign().await;
            return Error::Closed;
        }
    }
}

/// An error a new campaign may get past: the connection or the session
/// went while it waited, or the term ended as it was won. Anything else (the
/// session closed, the runtime gone, a refused ACL) ends the candidacy.
fn passing(err: &Error) -> bool {
    matches!(
        err.kind(),
        ErrorKind::ConnectionLoss | ErrorKind::SessionExpired | ErrorKind::NotHeld | ErrorKind::OutcomeUnknown
    )
}

/// Keeps `leading` to the term's state until the term ends or the latch closes.
async fn lead_while(
    term: &Leadership,
    leading: &watch::Sender<Option<i64>>,
    stop: &mut watch::Receiver<bool>,
) -> Ended {
    let mut states = term.subscribe();
    loop {
        if *stop.borrow() {
            return Ended::Stopped;
        }
        let leads = match *states.borrow_and_update() {
            LockState::Held => Some(term.fencing_token()),
            LockState::Suspended => None,
            _ => return Ended::Lost,
        };
        leading.send_if_modified(|now| std::mem::replace(now, leads) != leads);
        tokio::select! {
            biased;
            _ = stop.wait_for(|stop| *stop) => return Ended::Stopped,
            changed = states.changed() => if changed.is_err() { return Ended::Lost },
        }
    }
}

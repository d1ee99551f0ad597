//! Curator's `LeaderLatch`: a candidate that stays in the election at its
//! path from `start` to `close` — campaigning again after a term ends with
//! an expiry or a deletion of its node — and says at any time whether it
//! leads. kazoo users write it by hand around `Election.run`. Its node is
//! the [`Election`]'s, so kazoo `Election` candidates on the path take part.
//!
//! It leads only while its term is `Held`: `Suspended` (the connection is
//! down, the term not confirmed) reads as not leading, as in Curator.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::election::{Election, Leadership};
use crate::error::{Error, Result};
use crate::runtime;
use crate::session::Session;
use crate::state::LockState;

/// The pause before campaigning again after a `lead` that failed (not a
/// lost term: that campaigns at once).
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
    /// The leading term's fencing token while this candidate leads.
    leading: Arc<watch::Sender<Option<i64>>>,
    campaign: Mutex<Campaign>,
    closed: watch::Sender<bool>,
}

enum Campaign {
    Idle,
    Started { closing: watch::Sender<bool>, task: JoinHandle<()> },
    Closed,
}

impl LeaderLatch {
    /// A candidate at `path`; `identifier` is the node data the election's
    /// `contenders` show. Nothing is sent before [`LeaderLatch::start`].
    pub fn new(session: &Session, path: &str, identifier: impl Into<Vec<u8>>) -> Result<LeaderLatch> {
        let election = Election::new(session, path, identifier)?;
        let latch = Latch {
            election,
            leading: Arc::new(watch::Sender::new(None)),
            campaign: Mutex::new(Campaign::Idle),
            closed: watch::Sender::new(false),
        };
        Ok(LeaderLatch { inner: Arc::new(latch) })
    }

    /// Joins the election and returns: from now until [`LeaderLatch::close`],
    /// a task of zoolock's runtime leads whenever this candidate can.
    /// Starting twice is [`Error::InvalidArgument`]; after a close, [`Error::Closed`].
    pub fn start(&self) -> Result<()> {
        let mut campaign = self.inner.campaign.lock().unwrap();
        match *campaign {
            Campaign::Idle => {}
            Campaign::Started { .. } => {
                return Err(Error::InvalidArgument("the leader latch is started already".into()))
            }
            Campaign::Closed => return Err(Error::Closed),
        }
        runtime::check_process()?;
        let (closing, stop) = watch::channel(false);
        let task = runtime::spawn(run(self.inner.election.clone(), self.inner.leading.clone(), stop));
        *campaign = Campaign::Started { closing, task };
        Ok(())
    }

    /// Whether this candidate leads now (its term `Held`).
    pub fn has_leadership(&self) -> bool {
        self.inner.leading.borrow().is_some()
    }

    /// The fencing token of the term this candidate leads now, if it leads.
    pub fn fencing_token(&self) -> Option<i64> {
        *self.inner.leading.borrow()
    }

    /// Watches the leading term's fencing token: `Some` while this candidate
    /// leads (Curator's `LeaderLatchListener`: `isLeader`, `notLeader`).
    pub fn subscribe(&self) -> watch::Receiver<Option<i64>> {
        self.inner.leading.subscribe()
    }

    /// Waits until this candidate leads (Curator's `await`): `Ok(true)`, or
    /// `Ok(false)` once `timeout` has passed (`None`: for ever).
    /// [`Error::Closed`] when closed, before or during the wait.
    pub async fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        let (mut leading, mut closed) = (self.inner.leading.subscribe(), self.inner.closed.subscribe());
        let leads = async {
            tokio::select! {
                biased;
                _ = closed.wait_for(|closed| *closed) => Err(Error::Closed),
                _ = leading.wait_for(Option::is_some) => Ok(true),
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
    /// connection is down, as a release). Closing again does nothing.
    pub async fn close(&self) {
        let campaign = std::mem::replace(&mut *self.inner.campaign.lock().unwrap(), Campaign::Closed);
        self.inner.closed.send_replace(true);
        if let Campaign::Started { closing, task } = campaign {
            closing.send_replace(true);
            // A `lead` pending now fails with Cancelled once its node is removed.
            self.inner.election.cancel();
            let _ = task.await;
        }
        self.inner.leading.send_replace(None);
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
    /// Closes in the background: the campaign resigns its term, or its candidacy, and ends.
    fn drop(&mut self) {
        if let Campaign::Started { closing, .. } = &*self.campaign.lock().unwrap() {
            closing.send_replace(true);
            self.election.cancel();
        }
    }
}

/// How a term ended.
enum Ended {
    Lost,
    Closing,
}

/// The campaign: leads, keeps `leading` current while it does, and leads
/// again when the term is lost, until `stop` says the latch is closing.
async fn run(election: Election, leading: Arc<watch::Sender<Option<i64>>>, mut stop: watch::Receiver<bool>) {
    loop {
        let won = tokio::select! {
            biased;
            _ = stop.wait_for(|stop| *stop) => return,
            won = election.lead() => won,
        };
        let term = match won {
            Ok(term) => term,
            Err(Error::Closed) => return,
            Err(err) => {
                tracing::debug!(path = election.path(), error = %err, "leader latch: campaigning again");
                tokio::select! {
                    biased;
                    _ = stop.wait_for(|stop| *stop) => return,
                    () = tokio::time::sleep(AGAIN_AFTER) => continue,
                }
            }
        };
        let ended = lead_while(&term, &leading, &mut stop).await;
        leading.send_replace(None);
        if let Ended::Closing = ended {
            let _ = term.resign().await;
            return;
        }
    }
}

/// Keeps `leading` to the term's state until the term ends or the latch closes.
async fn lead_while(
    term: &Leadership,
    leading: &watch::Sender<Option<i64>>,
    stop: &mut watch::Receiver<bool>,
) -> Ended {
    let mut states = term.subscribe();
    loop {
        let leads = match *states.borrow_and_update() {
            LockState::Held => Some(term.fencing_token()),
            LockState::Suspended => None,
            _ => return Ended::Lost,
        };
        leading.send_if_modified(|now| std::mem::replace(now, leads) != leads);
        tokio::select! {
            biased;
            _ = stop.wait_for(|stop| *stop) => return Ended::Closing,
            changed = states.changed() => if changed.is_err() { return Ended::Lost },
        }
    }
}

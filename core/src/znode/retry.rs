//! kazoo's `KazooRetry`: an attempt tried again after a connection loss or
//! an expiry, once the session is connected.

use std::future::Future;
use std::time::Duration;

use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::runtime;
use crate::session::Session;
use crate::state::{SessionState, Status};

/// How [`Session::retry`] retries: kazoo's `KazooRetry` semantics. An
/// attempt that failed with [`Error::ConnectionLoss`] or
/// [`Error::SessionExpired`] (the session reopens itself) is tried again
/// once the session is connected, at most `max_tries` times in all and
/// within `deadline`; any other error, and the last one, is returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retry {
    /// Attempts in all, the first included; at least 1.
    pub max_tries: u32,
    /// For all attempts and the waits between them; `None`: no bound but `max_tries`.
    pub deadline: Option<Duration>,
}

impl Default for Retry {
    /// Five attempts within a minute.
    fn default() -> Retry {
        Retry { max_tries: 5, deadline: Some(Duration::from_secs(60)) }
    }
}

impl Error {
    /// Whether [`Session::retry`] tries again after this error: the request
    /// may not have been made (a connection loss, a moved or expired session).
    pub fn is_retryable(&self) -> bool {
        matches!(self, Error::ConnectionLoss(_) | Error::SessionExpired { .. })
    }
}

impl Retry {
    fn check(&self) -> Result<()> {
        if self.max_tries == 0 {
            return Err(Error::InvalidArgument("a retry needs at least one try".into()));
        }
        Ok(())
    }
}

impl Session {
    /// Calls `attempt` until it succeeds, fails with an error that is not
    /// [retryable](Error::is_retryable), or `policy` runs out (see
    /// [`Retry`]). Between attempts it waits for the session to be
    /// connected: an event, not a sleep.
    pub async fn retry<T, F, Fut>(&self, policy: Retry, mut attempt: F) -> Result<T>
    where
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T>>,
    {
        policy.check()?;
        let deadline = policy.deadline.and_then(|d| Instant::now().checked_add(d));
        let mut tries = 0;
        loop {
            tries += 1;
            let before = self.status();
            let err = match attempt().await {
                Err(err) if err.is_retryable() => err,
                other => return other,
            };
            if tries >= policy.max_tries {
                return Err(err);
            }
            self.wait_to_retry(err, before, deadline).await?;
        }
    }

    /// Waits until a retry may succeed: the session connected, and after an
    /// expiry a newer one. Returns `err` if the deadline comes first.
    async fn wait_to_retry(&self, err: Error, before: Status, deadline: Option<Instant>) -> Result<()> {
        tracing::debug!(%err, "zoolock retries once the session is connected");
        let expired = matches!(err, Error::SessionExpired { .. });
        let mut status = self.subscribe();
        let ready = status.wait_for(|s| {
            s.state == SessionState::Closed
                || (s.state == SessionState::Connected && (!expired || s.generation > before.generation))
        });
        let waited = match deadline {
            Some(deadline) => tokio::time::timeout_at(deadline, ready).await.ok().map(|s| s.map(|s| *s)),
            None => Some(ready.await.map(|s| *s)),
        };
        match waited {
            Some(Ok(s)) if s.state == SessionState::Connected => Ok(()),
            Some(_) => Err(self.closed_error()),
            None => Err(err),
        }
    }

    /// [`Session::retry`] for a blocking `attempt` (the bindings' calls):
    /// the waits between attempts block the calling thread.
    pub fn retry_blocking<T>(&self, policy: Retry, mut attempt: impl FnMut() -> Result<T>) -> Result<T> {
        policy.check()?;
        let deadline = policy.deadline.and_then(|d| Instant::now().checked_add(d));
        let mut tries = 0;
        loop {
            tries += 1;
            let before = self.status();
            let err = match attempt() {
                Err(err) if err.is_retryable() => err,
                other => return other,
            };
            if tries >= policy.max_tries {
                return Err(err);
            }
            runtime::block_on(self.wait_to_retry(err, before, deadline))?;
        }
    }
}

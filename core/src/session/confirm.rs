//! The quorum's confirmation of the session: the time until which no
//! server can have expired it. The session counts as `Connected` (and a
//! hold as `Held`) only before that time, whatever the connection says.
//!
//! Why the connection is not enough: a follower cut off from the leader
//! keeps its clients and answers their pings and reads for up to
//! syncLimit × tickTime, while the leader, hearing nothing of the session,
//! expires it after the session timeout T and lets another client hold.
//! Only what goes through the leader proves anything: a `sync` (answered
//! after the leader handled it) or a write.
//!
//! ## The bound, and what it rests on
//!
//! The renewal sends a `sync` every T/7, each after the reply to the one
//! before. Given three answered syncs `a`, `b`, `c` (sent at `s`, answered
//! at `r`) with `s_b ≥ r_a + BRIDGE` and `s_c ≥ r_b`, the leader touched the
//! session at a time after `s_a`, so it cannot expire it before `s_a + T`;
//! the session is confirmed until `s_a + T − MARGIN`. The argument, and the
//! ZooKeeper behaviour each step assumes (3.8's code):
//!
//! 1. The leader expires a session no earlier than T after its last touch
//!    of it (`ExpiryQueue` rounds the expiry *up* to the next tick).
//! 2. A follower touches a session when any packet of it arrives, and
//!    reports the sessions it touched to the leader in its reply to the
//!    leader's next ping; the leader touches each. The leader pings every
//!    follower every tickTime/2, and tickTime ≤ T/2 (ZooKeeper grants no
//!    session timeout below `minSessionTimeout`, 2 ticks by default), so
//!    BRIDGE = 0.28 T exceeds the ping period with room for its jitter.
//! 3. Leader → follower, pings and sync replies travel one TCP stream, read
//!    in order; follower → leader, ping replies and forwarded requests
//!    travel one stream, handled in order. So: the leader sent a ping
//!    between handling `a` (after `s_a`) and answering `b` (`s_b − r_a`
//!    exceeds the ping period); the follower had it, and answered it with
//!    the touch `a` made, before `b`'s answer and so before `c` arrived
//!    (`s_c ≥ r_b`); that answer reached the leader before `c`, which the
//!    leader handled. Hence a touch after `s_a`.
//! 4. A client that moves to another server is revalidated by the leader,
//!    which touches the session; a server that loses its leader closes its
//!    clients' connections. So a move between `a` and `c` touches it after
//!    `s_a` too; and a session just opened (or resumed) was touched after
//!    its connect request was sent.
//! 5. The machine's clock runs at the servers' rate (ppm apart). The boot
//!    clock counts a suspended machine's sleep, as the servers' clocks do.
//!
//! When 2 fails (an operator set `minSessionTimeout` below 2 ticks), the
//! bound does not hold; docs/guarantees.md says so.
//!
//! The renewal costs one `sync` per T/7 per session, at the leader; it
//! sends before zookeeper-client's own idle ping (3T/20), so it replaces
//! those pings rather than adding to them.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use tokio::sync::watch;
use zookeeper_client as zk;

use crate::error::connection_lost;
use crate::state::{SessionState, Status};

/// One renewal per this part of the session timeout.
const RENEWALS_PER_TIMEOUT: u32 = 7;

/// The least gap between a confirmation's reply and the next send that
/// bridges it (point 2), in hundredths of the session timeout.
const BRIDGE_PERCENT: u64 = 28;

/// Kept back from the bound for timers' wake-ups, in tenths of T.
const MARGIN_TENTHS: u64 = 1;

/// Nanoseconds on the boot clock: `CLOCK_BOOTTIME` on Linux, which counts
/// while the machine sleeps, as the servers' clocks do.
pub fn boot_now() -> u64 {
    #[cfg(any(target_os = "linux", target_os = "android"))]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: clock_gettime writes the timespec it is given.
        unsafe { libc::clock_gettime(libc::CLOCK_BOOTTIME, &mut ts) };
        ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
    }
    #[cfg(not(any(target_os = "linux", target_os = "android")))]
    {
        static START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        START.get_or_init(std::time::Instant::now).elapsed().as_nanos() as u64 + 1
    }
}

/// Until when the session is confirmed, and when it last was; boot clock, ns.
#[derive(Default)]
pub(crate) struct Confirmation {
    until: AtomicU64,
    last: AtomicU64,
    /// Told each time `until` moves.
    moved: tokio::sync::Notify,
}

impl Confirmation {
    /// Whether the session is confirmed now.
    pub fn holds(&self) -> bool {
        boot_now() < self.until()
    }

    pub fn until(&self) -> u64 {
        self.until.load(Ordering::Acquire)
    }

    /// The latest confirmation (when its proof arrived); 0 before the first.
    pub fn last(&self) -> u64 {
        self.last.load(Ordering::Acquire)
    }

    /// A new session was opened (or resumed) by a connect request sent at `sent`.
    pub fn opened(&self, sent: u64, timeout: Duration) {
        self.until.store(bound(sent, timeout), Ordering::Release);
        self.last.store(boot_now(), Ordering::Release);
        self.moved.notify_waiters();
    }

    /// Extends the confirmation to `sent`'s bound; whether it moved.
    fn extend(&self, sent: u64, timeout: Duration) -> bool {
        self.last.store(boot_now(), Ordering::Release);
        let moved = self.until.fetch_max(bound(sent, timeout), Ordering::AcqRel) < bound(sent, timeout);
        if moved {
            self.moved.notify_waiters();
        }
        moved
    }
}

fn bound(sent: u64, timeout: Duration) -> u64 {
    let t = timeout.as_nanos() as u64;
    sent + t - t / 10 * MARGIN_TENTHS
}

/// The answered renewals of one generation, newest last.
#[derive(Default)]
struct Answered(VecDeque<(u64, u64)>);

impl Answered {
    /// Records renewal `(sent, replied)`; the send time it proves a touch
    /// after, if three answered renewals now chain (the module's point 3).
    fn record(&mut self, sent: u64, replied: u64, timeout: Duration) -> Option<u64> {
        if self.0.len() == 16 {
            self.0.pop_front();
        }
        self.0.push_back((sent, replied));
        let bridge = timeout.as_nanos() as u64 / 100 * BRIDGE_PERCENT;
        let (s_c, _) = *self.0.back()?;
        let &(s_b, _) = self.0.iter().rev().skip(1).find(|(_, r)| *r <= s_c)?;
        let &(s_a, _) = self.0.iter().rev().find(|(_, r)| r.saturating_add(bridge) <= s_b)?;
        Some(s_a)
    }
}

/// The session a renewal works for.
pub(crate) trait Refresh: Send + Sync + 'static {
    /// Recomputes and publishes the session's state (the confirmation moved or ran out).
    fn refresh(&self);
}

/// Renews `confirmation` for `client`'s session (generation `generation`),
/// and publishes the state when it runs out, until `status` says that
/// generation ended (or the session is gone). Holds the client until then.
pub(crate) async fn renew<S: Refresh>(
    session: Weak<S>,
    confirmation: Arc<Confirmation>,
    client: zk::Client,
    mut status: watch::Receiver<Status>,
    generation: u64,
) {
    let ended =
        status.wait_for(|s| s.generation != generation || matches!(s.state, SessionState::Lost | SessionState::Closed));
    tokio::select! {
        _ = renewals(&session, &confirmation, &client) => {}
        _ = lapses(&session, &confirmation) => {}
        _ = ended => {}
    }
}

/// Sends a `sync` every T/7, each after the previous reply; returns when
/// the session ends.
async fn renewals<S: Refresh>(session: &Weak<S>, confirmation: &Confirmation, client: &zk::Client) {
    let timeout = client.session_timeout();
    let every = timeout / RENEWALS_PER_TIMEOUT;
    let mut answered = Answered::default();
    let mut next = tokio::time::Instant::now();
    loop {
        tokio::time::sleep_until(next).await;
        let sent = boot_now();
        next = tokio::time::Instant::now() + every;
        match client.sync("/").await {
            Ok(()) => {
                let proven = answered.record(sent, boot_now(), timeout);
                if proven.is_some_and(|proven| confirmation.extend(proven, timeout)) {
                    let Some(owner) = session.upgrade() else { return };
                    owner.refresh();
                }
            }
            Err(err) if connection_lost(&err) => {}
            Err(_) => return,
        }
        // A reply later than the period: the next goes at once.
        next = next.max(tokio::time::Instant::now());
    }
}

/// Publishes the state each time the confirmation runs out, without
/// waiting for any reply; never returns while the session lives.
async fn lapses<S: Refresh>(session: &Weak<S>, confirmation: &Confirmation) {
    loop {
        let moved = confirmation.moved.notified();
        tokio::pin!(moved);
        moved.as_mut().enable();
        let (now, until) = (boot_now(), confirmation.until());
        if now < until {
            tokio::select! {
                _ = tokio::time::sleep(Duration::from_nanos(until - now)) => {}
                _ = moved => {}
            }
            continue;
        }
        let Some(owner) = session.upgrade() else { return };
        owner.refresh();
        drop(owner);
        moved.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: Duration = Duration::from_secs(10);
    const S: u64 = 1_000_000_000;

    #[test]
    fn three_answered_renewals_bridged_by_the_leaders_ping_period_prove_the_first() {
        let mut answered = Answered::default();
        // Sent every T/7 (1.43 s), answered in 10 ms.
        let sends: Vec<u64> = (0..6).map(|i| 100 * S + i * 1_430_000_000).collect();
        let proofs: Vec<_> = sends.iter().map(|&s| answered.record(s, s + 10_000_000, T)).collect();
        // The first three cannot chain yet: b must be sent ≥ 2.8 s after a's reply.
        assert_eq!(&proofs[..3], &[None, None, None]);
        // The fourth: b = the third (sent 2.86 s after the first), a = the first.
        assert_eq!(proofs[3], Some(sends[0]));
        assert_eq!(proofs[5], Some(sends[2]));
    }

    #[test]
    fn a_late_reply_bridges_nothing_sent_before_it() {
        let mut answered = Answered::default();
        // a answered at once; b sent 3 s after a's reply but answered only 20 s later.
        assert_eq!(answered.record(0, S / 100, T), None);
        assert_eq!(answered.record(3 * S, 23 * S, T), None);
        // c sent after b's reply: a is proven, whatever b's delay.
        assert_eq!(answered.record(23 * S, 23 * S + S / 100, T), Some(0));
    }

    #[test]
    fn the_bound_keeps_a_tenth_of_the_timeout_back() {
        assert_eq!(bound(100 * S, T), 109 * S);
    }
}

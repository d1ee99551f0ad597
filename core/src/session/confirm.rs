//! The quorum's confirmation of the session: the time until which no
//! server can have expired it. The session counts as `Connected` (and a
//! hold as `Held`) only before that time, whatever the connection says.
//!
//! Why the connection is not enough: a follower cut off from the leader
//! keeps its clients and answers their pings and reads for up to
//! syncLimit × tickTime, while the leader, hearing nothing of the session,
//! expires it after the session timeout T and lets another client hold.
//! Only what goes through the leader proves anything.
//!
//! ## The bound, and what it rests on
//!
//! A leader expires a session T after its last touch of it; a leader that
//! takes over counts every session's T from when it starts. So the session
//! cannot have expired before `min(touch, quorum) + T`, where the leader
//! touched it after `touch`, and no other leader started before `quorum`.
//! The renewal sends a request through the leader every T/7, each after
//! the reply to the one before: a `sync`, and every second one a write (a
//! `delete` of a node that never exists: refused, but as a transaction the
//! quorum commits). The session is confirmed until
//! `min(touch, quorum) + T − T/10`, the tenth kept back for timers'
//! wake-ups. Each step rests on ZooKeeper 3.8 behaving as follows:
//!
//! 1. A leader expires a session no earlier than T after its last touch of
//!    it (`ExpiryQueue` rounds the expiry *up* to the next tick), and a new
//!    leader gives every session a full T from its start.
//! 2. `touch` from three answered renewals `a`, `b`, `c` (sent at `s`,
//!    answered at `r`) with `s_b ≥ r_a + BRIDGE` and `s_c ≥ r_b`: the
//!    leader touched the session after `s_a`. A follower touches a session
//!    when any packet of it arrives, and reports the sessions it touched in
//!    its reply to the leader's next ping; the leader touches each. The
//!    leader pings every follower every tickTime/2 and tickTime ≤ T/2
//!    (ZooKeeper grants no session timeout below `minSessionTimeout`, 2
//!    ticks by default), so BRIDGE = 0.28 T exceeds the ping period with
//!    room for its jitter. Leader → follower, pings and replies travel one
//!    TCP stream, read in order; follower → leader, ping replies and
//!    forwarded requests travel one stream, handled in order. So the
//!    leader sent a ping between handling `a` and answering `b`; the
//!    follower had it, and answered it with `a`'s touch, before `b`'s
//!    answer and so before `c` arrived; that answer reached the leader
//!    before `c`, which the leader handled.
//! 3. `touch` from a connect: a session just opened, resumed or
//!    reconnected was touched by the leader after its connect request was
//!    sent (a leader revalidates a session that comes to any server;
//!    zookeeper-client's `last_handshake`). Not a read-only server's
//!    connect, which no leader revalidates. A server that loses its leader
//!    closes its clients' connections, so a chain across a move holds too.
//! 4. `quorum` from an answered write sent at `s_w`: a quorum acknowledged
//!    it in its leader's epoch, and a later leader needs a quorum that
//!    left that leader first; the two quorums share a server. So no later
//!    leader started before `s_w`. (A `sync` proves no quorum: a leader cut
//!    off from the others answers syncs until it notices, up to a tick
//!    after its followers have left it.) Opening a new session is such a
//!    write; after a reconnect the renewal writes at once.
//! 5. The machine's clock runs at the servers' rate (ppm apart). The boot
//!    clock counts a suspended machine's sleep, as the servers' clocks do.
//!
//! When 2 fails (an operator set `minSessionTimeout` below 2 ticks), the
//! bound does not hold; docs/guarantees.md says so.
//!
//! The renewal costs a request per T/7 per session at the leader, half of
//! them writes the quorum logs; it sends before zookeeper-client's own idle
//! ping (3T/20), so it replaces those pings rather than adding to them.

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

/// The node the renewal's writes try to delete: it never exists (and were
/// it made, the version asked for keeps it from being deleted).
const NEVER: &str = "/zoolock-confirmation-never-created";

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

/// What the quorum confirmed of one session; boot clock, ns.
#[derive(Default)]
pub(crate) struct Confirmation {
    evidence: std::sync::Mutex<Evidence>,
    /// `min(touch, quorum) + T − T/10`, read without the lock.
    until: AtomicU64,
    last: AtomicU64,
    /// Told each time `until` moves.
    moved: tokio::sync::Notify,
}

#[derive(Default, Clone, Copy)]
struct Evidence {
    touch: u64,
    quorum: u64,
    timeout: Duration,
}

impl Confirmation {
    /// Whether the session is confirmed now.
    pub fn holds(&self) -> bool {
        boot_now() < self.until()
    }

    pub fn until(&self) -> u64 {
        self.until.load(Ordering::Acquire)
    }

    /// When the quorum last answered a renewal, or `until` last moved; 0
    /// before the first.
    pub fn last(&self) -> u64 {
        self.last.load(Ordering::Acquire)
    }

    /// A renewal was answered: the leader and the quorum answer now, whether
    /// or not `until` moved (after a connect the first proof of a later
    /// touch takes about T/2: three renewals bridging the leader's ping
    /// period), so that [`Confirmation::last`] says when the session was
    /// last heard of through the leader.
    fn answered(&self) {
        self.last.store(boot_now(), Ordering::Release);
    }

    /// A session was opened by a connect request sent at `sent`: touched
    /// after it; `quorum` when a write proved the quorum (creating a new
    /// session is one; a resumed one needs [`quorum_write`]).
    pub fn opened(&self, sent: u64, quorum: Option<u64>, timeout: Duration) {
        *self.evidence.lock().unwrap() = Evidence { touch: sent, quorum: quorum.unwrap_or(0), timeout };
        self.until.store(0, Ordering::Release);
        self.update(|_| {});
    }

    /// Records evidence; whether `until` moved.
    fn update(&self, record: impl FnOnce(&mut Evidence)) -> bool {
        let mut evidence = self.evidence.lock().unwrap();
        record(&mut evidence);
        let t = evidence.timeout.as_nanos() as u64;
        let until = match evidence.touch.min(evidence.quorum) {
            0 => 0,
            since => since + t - t / 10,
        };
        let moved = self.until.fetch_max(until, Ordering::AcqRel) < until;
        drop(evidence);
        if moved {
            self.last.store(boot_now(), Ordering::Release);
            self.moved.notify_waiters();
        }
        moved
    }
}

/// Sends the renewal's write; when it was sent, if the server answered.
pub(crate) async fn quorum_write(client: &zk::Client) -> Result<u64, zk::Error> {
    let sent = boot_now();
    match client.delete(NEVER, Some(i32::MAX)).await {
        // Any answer of the server's: the quorum committed it (refused).
        Ok(()) | Err(zk::Error::NoNode | zk::Error::BadVersion | zk::Error::NoAuth) => Ok(sent),
        Err(err) => Err(err),
    }
}

/// The answered renewals of one generation, newest last.
#[derive(Default)]
struct Answered(VecDeque<(u64, u64)>);

impl Answered {
    /// Records renewal `(sent, replied)`; the send time it proves a touch
    /// after, if three answered renewals now chain (the module's point 2).
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
    // Renewals that stop (a refused request) leave the lapse to be published
    // all the same: waits for a disconnect rely on it (`Session::disconnected`).
    let renewing = async {
        renewals(&session, &confirmation, &client).await;
        std::future::pending::<()>().await
    };
    tokio::select! {
        _ = renewing => {}
        _ = lapses(&session, &confirmation) => {}
        _ = ended => {}
    }
}

/// Sends a request through the leader every T/7, each after the previous
/// reply, every second one a write, and a write at once after each
/// reconnect; returns when the session ends.
async fn renewals<S: Refresh>(session: &Weak<S>, confirmation: &Confirmation, client: &zk::Client) {
    let timeout = client.session_timeout();
    let every = timeout / RENEWALS_PER_TIMEOUT;
    let mut states = client.state_watcher();
    let mut answered = Answered::default();
    let mut handshake = client.last_handshake();
    let mut next = tokio::time::Instant::now();
    let mut write = true;
    loop {
        tokio::select! {
            _ = tokio::time::sleep_until(next) => {}
            state = states.changed() => {
                if state.is_terminated() {
                    return;
                }
                continue;
            }
        }
        // Reconnected: the connect touched the session; a write now gives the quorum.
        let latest = client.last_handshake();
        if latest != handshake && client.state() == zk::SessionState::SyncConnected {
            handshake = latest;
            if let Some(at) = latest {
                let sent = boot_now().saturating_sub(at.elapsed().as_nanos() as u64);
                confirmation.update(|e| e.touch = e.touch.max(sent));
            }
            write = true;
        }
        let sent = boot_now();
        next = tokio::time::Instant::now() + every;
        let reply = if write { quorum_write(client).await.map(drop) } else { client.sync("/").await };
        match reply {
            Ok(()) => {
                let proven = answered.record(sent, boot_now(), timeout);
                let moved = confirmation.update(|e| {
                    if let Some(proven) = proven {
                        e.touch = e.touch.max(proven);
                    }
                    if write {
                        e.quorum = e.quorum.max(sent);
                    }
                });
                confirmation.answered();
                if moved {
                    let Some(owner) = session.upgrade() else { return };
                    owner.refresh();
                }
                write = !write;
            }
            Err(err) if connection_lost(&err) => write = true,
            Err(_) => return,
        }
        // A reply later than the period: the next goes at once.
        next = next.max(tokio::time::Instant::now());
    }
}

/// Publishes the state each time the confirmation runs out, without
/// waiting for any reply; never returns while the session lives. Looks at
/// least each second: tokio's clock stops while the machine sleeps, the
/// boot clock the confirmation is on does not.
async fn lapses<S: Refresh>(session: &Weak<S>, confirmation: &Confirmation) {
    loop {
        let moved = confirmation.moved.notified();
        tokio::pin!(moved);
        moved.as_mut().enable();
        let (now, until) = (boot_now(), confirmation.until());
        if now < until {
            let left = Duration::from_nanos(until - now).min(Duration::from_secs(1));
            tokio::select! {
                _ = tokio::time::sleep(left) => {}
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
    fn the_bound_is_the_older_evidence_plus_nine_tenths_of_the_timeout() {
        let confirmation = Confirmation::default();
        confirmation.opened(100 * S, Some(100 * S), T);
        assert_eq!(confirmation.until(), 109 * S);
        // A touch proven later moves nothing until a write proves the quorum later too.
        assert!(!confirmation.update(|e| e.touch = 103 * S));
        assert!(confirmation.update(|e| e.quorum = 105 * S));
        assert_eq!(confirmation.until(), 112 * S);
        // A resumed session: touched, but no write yet.
        confirmation.opened(200 * S, None, T);
        assert_eq!(confirmation.until(), 0);
        assert!(confirmation.update(|e| e.quorum = 201 * S));
        assert_eq!(confirmation.until(), 209 * S);
    }
}

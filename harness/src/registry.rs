//! What the proxies of one ensemble know and share: the sessions seen (with
//! their passwords), which sessions or proxies are partitioned, every live
//! proxied connection, and the request-level faults.

use crate::error::{Error, Result};
use crate::fault::{FaultId, FaultKind, FaultReport, FaultState, Landing, PickedRequest, Select};
use crate::jute::{self, ReplyHeader, RequestHead};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};
use tokio::sync::{watch, Notify};

pub(crate) struct Registry {
    inner: Mutex<Inner>,
    /// Bumped on every partition/heal, waking connections held by a partition.
    changed: watch::Sender<u64>,
    /// Signalled whenever a fault changes state.
    fault_changed: Condvar,
    /// Faults that look at requests (armed, or holding one back): while there are none,
    /// request pumps pass bytes without reading frames.
    inspecting: AtomicUsize,
}

/// What the proxy of one connection shares with the registry.
#[derive(Default)]
pub(crate) struct ConnShared {
    /// Notified to reset the connection (RST both sockets).
    pub reset: Notify,
    /// Faults waiting for a reply on this connection: while there are none,
    /// the reply pump passes bytes without reading frames.
    watched_replies: AtomicUsize,
    /// A fault reset the client while the server's side stays open for a
    /// reply: replies are read and dropped.
    client_reset: AtomicBool,
}

impl ConnShared {
    pub fn reset_client(&self) {
        self.client_reset.store(true, Ordering::Release);
    }

    pub fn client_is_reset(&self) -> bool {
        self.client_reset.load(Ordering::Acquire)
    }

    pub fn watches_replies(&self) -> bool {
        self.watched_replies.load(Ordering::Acquire) > 0
    }
}

#[derive(Default)]
struct Inner {
    /// Every session seen, with its password.
    passwords: BTreeMap<i64, Vec<u8>>,
    partitioned: HashSet<i64>,
    blocked_proxies: HashSet<usize>,
    conns: HashMap<u64, Conn>,
    next_conn: u64,
    closed: bool,
    faults: BTreeMap<u64, Fault>,
    next_fault: u64,
}

struct Conn {
    proxy: usize,
    session: Option<i64>,
    shared: Arc<ConnShared>,
}

struct Fault {
    kind: FaultKind,
    select: Select,
    session: i64,
    /// Matching requests seen so far.
    seen: u32,
    state: FaultState,
    request: Option<PickedRequest>,
    /// land_late: when the held request lands, and the later requests that
    /// matched its selector so far.
    landing: Option<Landing>,
    land_seen: u32,
    /// land_late: the request frame held back.
    held: Option<Vec<u8>>,
    /// The connection and xid of the reply it waits for.
    awaiting: Option<(u64, i32)>,
    reply: Option<(i64, i32)>,
    armed_at: Instant,
    fired_after: Option<Duration>,
    missed: Option<String>,
}

impl Fault {
    fn report(&self, id: u64) -> FaultReport {
        FaultReport {
            id: FaultId(id),
            kind: self.kind,
            state: self.state,
            request: self.request.clone(),
            reply: self.reply,
            fired_after: self.fired_after,
            missed: self.missed.clone(),
        }
    }

    fn fire(&mut self) {
        self.state = FaultState::Fired;
        self.fired_after = Some(self.armed_at.elapsed());
    }
}

impl Registry {
    pub fn new() -> Arc<Registry> {
        Arc::new(Registry {
            inner: Mutex::new(Inner::default()),
            changed: watch::channel(0).0,
            fault_changed: Condvar::new(),
            inspecting: AtomicUsize::new(0),
        })
    }

    /// Registers a new proxied connection; `None` once the registry is closed.
    pub fn add_conn(&self, proxy: usize) -> Option<(u64, Arc<ConnShared>)> {
        let mut inner = self.inner.lock().unwrap();
        if inner.closed {
            return None;
        }
        inner.next_conn += 1;
        let id = inner.next_conn;
        let shared = Arc::new(ConnShared::default());
        inner.conns.insert(id, Conn { proxy, session: None, shared: shared.clone() });
        Some((id, shared))
    }

    /// Forgets a closed connection; a fault still waiting for a reply on it
    /// is missed.
    pub fn remove_conn(&self, id: u64) {
        let mut inner = self.inner.lock().unwrap();
        inner.conns.remove(&id);
        let mut changed = false;
        for f in inner.faults.values_mut() {
            if f.awaiting.is_some_and(|(conn, _)| conn == id) {
                f.awaiting = None;
                f.state = FaultState::Missed;
                f.missed = Some("the connection closed before the reply came".into());
                changed = true;
            }
        }
        if changed {
            self.faults_changed(&inner);
        }
    }

    /// Records that connection `id` carries `session`, and the session's password.
    pub fn set_session(&self, id: u64, session: i64, passwd: &[u8]) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(c) = inner.conns.get_mut(&id) {
            c.session = Some(session);
        }
        if !passwd.is_empty() {
            inner.passwords.entry(session).or_insert_with(|| passwd.to_vec());
        }
    }

    pub fn sessions(&self) -> Vec<i64> {
        self.inner.lock().unwrap().passwords.keys().copied().collect()
    }

    /// The proxies (server indices) carrying a live connection of `session`.
    pub fn proxies_of(&self, session: i64) -> Result<Vec<usize>> {
        let inner = self.inner.lock().unwrap();
        known(&inner, session)?;
        let mut proxies: Vec<usize> =
            inner.conns.values().filter(|c| c.session == Some(session)).map(|c| c.proxy).collect();
        proxies.sort_unstable();
        proxies.dedup();
        Ok(proxies)
    }

    pub fn password(&self, session: i64) -> Result<Vec<u8>> {
        self.inner.lock().unwrap().passwords.get(&session).cloned().ok_or_else(|| unknown(session))
    }

    /// Whether connection `id` is held now: partitioned, or a new connection
    /// of a session whose request reset before its reply is not answered yet
    /// (the server would close the old connection on the session's
    /// reconnect, dropping the request if it has not read it yet).
    pub fn is_blocked(&self, id: u64) -> bool {
        let inner = self.inner.lock().unwrap();
        match inner.conns.get(&id) {
            Some(c) => {
                inner.blocked_proxies.contains(&c.proxy)
                    || c.session.is_some_and(|s| {
                        inner.partitioned.contains(&s)
                            || inner.faults.values().any(|f| {
                                f.kind == FaultKind::ResetBeforeReply
                                    && f.session == s
                                    && f.awaiting.is_some_and(|(conn, _)| conn != id)
                            })
                    })
            }
            None => false,
        }
    }

    /// Changes whenever a partition starts or ends.
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.changed.subscribe()
    }

    /// Returns once connection `id` may forward bytes.
    pub async fn wait_unblocked(&self, id: u64) {
        let mut rx = self.changed.subscribe();
        while self.is_blocked(id) {
            if rx.changed().await.is_err() {
                return;
            }
        }
    }

    fn update(&self, f: impl FnOnce(&mut Inner) -> Result<()>) -> Result<()> {
        f(&mut self.inner.lock().unwrap())?;
        self.changed.send_modify(|g| *g += 1);
        Ok(())
    }

    pub fn partition(&self, session: i64) -> Result<()> {
        self.update(|i| {
            known(i, session)?;
            i.partitioned.insert(session);
            Ok(())
        })
    }

    pub fn is_partitioned(&self, session: i64) -> bool {
        self.inner.lock().unwrap().partitioned.contains(&session)
    }

    pub fn heal(&self, session: i64) -> Result<()> {
        self.update(|i| {
            known(i, session)?;
            i.partitioned.remove(&session);
            Ok(())
        })
    }

    pub fn partition_proxy(&self, proxy: usize) {
        let _ = self.update(|i| {
            i.blocked_proxies.insert(proxy);
            Ok(())
        });
    }

    pub fn heal_proxy(&self, proxy: usize) {
        let _ = self.update(|i| {
            i.blocked_proxies.remove(&proxy);
            Ok(())
        });
    }

    /// Resets every current connection of `session`; returns how many.
    pub fn reset_session(&self, session: i64) -> Result<usize> {
        let inner = self.inner.lock().unwrap();
        known(&inner, session)?;
        let conns: Vec<_> = inner.conns.values().filter(|c| c.session == Some(session)).collect();
        conns.iter().for_each(|c| c.shared.reset.notify_one());
        Ok(conns.len())
    }

    /// Resets every connection and refuses new ones.
    pub fn close(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.closed = true;
        inner.conns.values().for_each(|c| c.shared.reset.notify_one());
    }

    pub fn arm(&self, kind: FaultKind, select: Select, landing: Option<Landing>) -> Result<FaultId> {
        select.check()?;
        let session = select.session.ok_or_else(|| Error::new("a fault needs a session: Select::session(id)"))?;
        if let Some(land) = &landing {
            land.select().check()?;
            if land.select().session.is_some_and(|s| s != session) {
                return Err(Error::new("a held request lands among its own session's requests: use Select::any()"));
            }
        }
        let mut inner = self.inner.lock().unwrap();
        known(&inner, session)?;
        inner.next_fault += 1;
        let id = inner.next_fault;
        inner.faults.insert(
            id,
            Fault {
                kind,
                select,
                session,
                seen: 0,
                state: FaultState::Armed,
                request: None,
                landing,
                land_seen: 0,
                held: None,
                awaiting: None,
                reply: None,
                armed_at: Instant::now(),
                fired_after: None,
                missed: None,
            },
        );
        self.faults_changed(&inner);
        Ok(FaultId(id))
    }

    pub fn fault(&self, id: FaultId) -> Result<FaultReport> {
        let inner = self.inner.lock().unwrap();
        Ok(fault(&inner, id)?.report(id.0))
    }

    /// Waits until fault `id` reaches `until` (or a later stage).
    pub fn wait_fault(&self, id: FaultId, until: FaultState, timeout: Duration) -> Result<FaultReport> {
        let want =
            until.rank().ok_or_else(|| Error::new(format!("cannot wait for {}: wait for a stage", until.name())))?;
        let deadline = Instant::now() + timeout;
        let mut inner = self.inner.lock().unwrap();
        loop {
            let f = fault(&inner, id)?;
            match f.state.rank() {
                Some(rank) if rank >= want => return Ok(f.report(id.0)),
                Some(_) => {}
                None => {
                    return Err(Error::new(format!(
                        "fault {} ended {} before it was {}{}",
                        id.0,
                        f.state.name(),
                        until.name(),
                        f.missed.as_ref().map(|m| format!(": {m}")).unwrap_or_default()
                    )))
                }
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::new(format!(
                    "fault {} not {} within {timeout:?}: still {} ({} matching requests seen)",
                    id.0,
                    until.name(),
                    f.state.name(),
                    f.seen
                )));
            }
            inner = self.fault_changed.wait_timeout(inner, left).unwrap().0;
        }
    }

    /// Disarms fault `id` if no request matched yet, or drops the request
    /// it holds back; otherwise leaves it as it is. Returns where it is.
    pub fn disarm(&self, id: FaultId) -> Result<FaultReport> {
        let mut inner = self.inner.lock().unwrap();
        let f = fault_mut(&mut inner, id)?;
        if matches!(f.state, FaultState::Armed | FaultState::Held) {
            f.state = FaultState::Disarmed;
            f.held = None;
        }
        let report = f.report(id.0);
        self.faults_changed(&inner);
        Ok(report)
    }

    /// Whether request pumps must read frames (some fault is armed).
    pub fn inspects_requests(&self) -> bool {
        self.inspecting.load(Ordering::Acquire) > 0
    }

    /// A whole request `frame` (length prefix included) from connection
    /// `conn`'s client: appends to `out` what to send the server instead,
    /// and returns whether to reset the connection after that.
    pub fn on_request(&self, conn: u64, frame: &[u8], out: &mut Vec<u8>) -> bool {
        let head = match RequestHead::parse(&frame[4..]) {
            Some(head) if head.xid >= 0 => head,
            _ => {
                out.extend_from_slice(frame);
                return false;
            }
        };
        let mut inner = self.inner.lock().unwrap();
        let Some(session) = inner.conns.get(&conn).and_then(|c| c.session) else {
            out.extend_from_slice(frame);
            return false;
        };
        let mut changed = land(&mut inner, conn, session, &head, false, out);
        // At most one fault fires per request: the first armed.
        let mut picked = None;
        for f in inner.faults.values_mut() {
            if f.state == FaultState::Armed && f.session == session && f.select.matches(head.op, head.path.as_deref()) {
                f.seen += 1;
                if f.seen == f.select.nth {
                    picked = Some(f);
                    break;
                }
            }
        }
        let (forward, reset) = match picked {
            None => (true, false),
            Some(f) => {
                changed = true;
                f.request = Some(PickedRequest { xid: head.xid, op: head.op, path: head.path.clone() });
                match f.kind {
                    FaultKind::DropReply | FaultKind::ResetBeforeReply => {
                        f.state = FaultState::AwaitingReply;
                        f.awaiting = Some((conn, head.xid));
                        (true, f.kind == FaultKind::ResetBeforeReply)
                    }
                    FaultKind::LandLate => {
                        f.state = FaultState::Held;
                        f.held = Some(frame.to_vec());
                        (false, true)
                    }
                }
            }
        };
        if forward {
            out.extend_from_slice(frame);
            changed |= land(&mut inner, conn, session, &head, true, out);
        }
        if changed {
            self.faults_changed(&inner);
        }
        reset
    }

    /// A whole reply `frame` from connection `conn`'s server: appends to
    /// `out` what to send the client, and returns whether to reset the
    /// connection after that.
    pub fn on_reply(&self, conn: u64, frame: &[u8], out: &mut Vec<u8>) -> bool {
        let Some(header) = ReplyHeader::parse(&frame[4..]) else {
            out.extend_from_slice(frame);
            return false;
        };
        let mut inner = self.inner.lock().unwrap();
        let awaited = Some((conn, header.xid));
        let Some(f) = inner.faults.values_mut().find(|f| f.awaiting == awaited) else {
            out.extend_from_slice(frame);
            return false;
        };
        f.awaiting = None;
        f.reply = Some((header.zxid, header.err));
        f.fire();
        let reset = match f.kind {
            FaultKind::DropReply | FaultKind::ResetBeforeReply => true,
            // The client never sent this xid on this connection.
            FaultKind::LandLate => false,
        };
        self.faults_changed(&inner);
        reset
    }

    /// After any change to faults: tells the pumps whether to read frames,
    /// and wakes waiters and the connections a fault holds.
    fn faults_changed(&self, inner: &Inner) {
        self.changed.send_modify(|g| *g += 1);
        let armed = inner.faults.values().filter(|f| matches!(f.state, FaultState::Armed | FaultState::Held)).count();
        self.inspecting.store(armed, Ordering::Release);
        for (id, c) in &inner.conns {
            let awaiting = inner.faults.values().filter(|f| f.awaiting.is_some_and(|(conn, _)| conn == *id)).count();
            c.shared.watched_replies.store(awaiting, Ordering::Release);
        }
        self.fault_changed.notify_all();
    }
}

/// Lands the requests held back for `session` that are due just before
/// (`after` false) or just after the request `head` on connection `conn`:
/// appends them to `out`, and has their replies swallowed. Returns whether
/// any landing counted `head`.
fn land(inner: &mut Inner, conn: u64, session: i64, head: &RequestHead, after: bool, out: &mut Vec<u8>) -> bool {
    let mut changed = false;
    for (id, f) in inner.faults.iter_mut() {
        let Some(landing) = f.landing.as_ref().filter(|_| f.state == FaultState::Held) else {
            continue;
        };
        if f.session != session
            || matches!(landing, Landing::After(_)) != after
            || !landing.select().matches(head.op, head.path.as_deref())
        {
            continue;
        }
        changed = true;
        f.land_seen += 1;
        if f.land_seen < landing.select().nth {
            continue;
        }
        let mut frame = f.held.take().expect("a held fault holds a request");
        // The client may use the held request's xid again on its new
        // connection (kazoo restarts its xids at each connect): the landed
        // request gets one no client uses, so its reply is known for sure.
        let xid = i32::MIN + (*id % (1 << 30)) as i32;
        jute::set_request_xid(&mut frame, xid);
        out.extend_from_slice(&frame);
        f.state = FaultState::Injected;
        f.awaiting = Some((conn, xid));
    }
    changed
}

fn fault(inner: &Inner, id: FaultId) -> Result<&Fault> {
    inner.faults.get(&id.0).ok_or_else(|| Error::new(format!("no fault {}", id.0)))
}

fn fault_mut(inner: &mut Inner, id: FaultId) -> Result<&mut Fault> {
    inner.faults.get_mut(&id.0).ok_or_else(|| Error::new(format!("no fault {}", id.0)))
}

fn known(inner: &Inner, session: i64) -> Result<()> {
    if inner.passwords.contains_key(&session) {
        Ok(())
    } else {
        Err(unknown(session))
    }
}

fn unknown(session: i64) -> Error {
    Error::new(format!("session {session:#x} never went through this ensemble's proxies"))
}

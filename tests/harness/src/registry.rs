//! What the proxies of one ensemble know and share: the sessions seen (with
//! their passwords), which sessions or proxies are partitioned, and every
//! live proxied connection.

use crate::error::{Error, Result};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use tokio::sync::{watch, Notify};

pub(crate) struct Registry {
    inner: Mutex<Inner>,
    /// Bumped on every partition/heal, waking connections held by a partition.
    changed: watch::Sender<u64>,
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
}

struct Conn {
    proxy: usize,
    session: Option<i64>,
    /// Notified to reset the connection (RST both sockets).
    reset: Arc<Notify>,
}

impl Registry {
    pub fn new() -> Arc<Registry> {
        Arc::new(Registry {
            inner: Mutex::new(Inner::default()),
            changed: watch::channel(0).0,
        })
    }

    /// Registers a new proxied connection; `None` once the registry is closed.
    pub fn add_conn(&self, proxy: usize) -> Option<(u64, Arc<Notify>)> {
        let mut inner = self.inner.lock().unwrap();
        if inner.closed {
            return None;
        }
        inner.next_conn += 1;
        let id = inner.next_conn;
        let reset = Arc::new(Notify::new());
        inner.conns.insert(
            id,
            Conn {
                proxy,
                session: None,
                reset: reset.clone(),
            },
        );
        Some((id, reset))
    }

    pub fn remove_conn(&self, id: u64) {
        self.inner.lock().unwrap().conns.remove(&id);
    }

    /// Records that connection `id` carries `session`, and the session's password.
    pub fn set_session(&self, id: u64, session: i64, passwd: &[u8]) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(c) = inner.conns.get_mut(&id) {
            c.session = Some(session);
        }
        if !passwd.is_empty() {
            inner
                .passwords
                .entry(session)
                .or_insert_with(|| passwd.to_vec());
        }
    }

    pub fn sessions(&self) -> Vec<i64> {
        self.inner
            .lock()
            .unwrap()
            .passwords
            .keys()
            .copied()
            .collect()
    }

    /// The proxies (server indices) carrying a live connection of `session`.
    pub fn proxies_of(&self, session: i64) -> Result<Vec<usize>> {
        let inner = self.inner.lock().unwrap();
        known(&inner, session)?;
        let mut proxies: Vec<usize> = inner
            .conns
            .values()
            .filter(|c| c.session == Some(session))
            .map(|c| c.proxy)
            .collect();
        proxies.sort_unstable();
        proxies.dedup();
        Ok(proxies)
    }

    pub fn password(&self, session: i64) -> Result<Vec<u8>> {
        self.inner
            .lock()
            .unwrap()
            .passwords
            .get(&session)
            .cloned()
            .ok_or_else(|| unknown(session))
    }

    /// Whether connection `id` is partitioned now.
    pub fn is_blocked(&self, id: u64) -> bool {
        let inner = self.inner.lock().unwrap();
        match inner.conns.get(&id) {
            Some(c) => {
                inner.blocked_proxies.contains(&c.proxy)
                    || c.session.is_some_and(|s| inner.partitioned.contains(&s))
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
        let conns: Vec<_> = inner
            .conns
            .values()
            .filter(|c| c.session == Some(session))
            .collect();
        conns.iter().for_each(|c| c.reset.notify_one());
        Ok(conns.len())
    }

    /// Resets every connection and refuses new ones.
    pub fn close(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.closed = true;
        inner.conns.values().for_each(|c| c.reset.notify_one());
    }
}

fn known(inner: &Inner, session: i64) -> Result<()> {
    if inner.passwords.contains_key(&session) {
        Ok(())
    } else {
        Err(unknown(session))
    }
}

fn unknown(session: i64) -> Error {
    Error::new(format!(
        "session {session:#x} never went through this ensemble's proxies"
    ))
}

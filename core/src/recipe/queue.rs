//! kazoo's `Queue` and `LockingQueue`, node for node, so that kazoo
//! producers and consumers share the path.
//!
//! - `Queue(path)`: each entry is a persistent sequential
//!   `path/entry-<priority as 3 digits>-<sequence>` holding the value; a
//!   consumer takes the first by reading and deleting it. At most once: an
//!   entry is gone before it is processed, and a delete whose reply was lost
//!   and whose retry finds the entry gone counts as another consumer's (kazoo's).
//! - `LockingQueue(path)`: entries under `path/entries`; a consumer locks
//!   one with an ephemeral `path/taken/<entry>` holding its id, and removes
//!   both in one transaction when done (`consume`) or only the lock to give
//!   it back (`release`). An entry whose consumer's session ends is free
//!   again: at least once.
//!
//! Both take entries by priority, then by sequence (see
//! [`naming::queue_entries`](crate::naming::queue_entries)).
//!
//! A `LockingQueue` is in the core rather than left to kazoo's Python
//! because it is the queue workers in several languages share: a C#
//! producer and Python consumers, say. Its lock per entry is an
//! ephemeral node, not a [`Lock`](crate::Lock): an entry has one taker or
//! none, and no one waits in line for it.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OwnedMutexGuard;
use tokio::time::Instant;
use uuid::Uuid;
use zookeeper_client as zk;

use crate::error::{connection_lost, Error, Result};
use crate::naming::queue_entries;
use crate::options::validate_path;
use crate::runtime;
use crate::session::{Live, Session};
use crate::znode::{ask, make_dirs, Create, OnSession, Retry};

fn check_priority(priority: u32) -> Result<()> {
    if priority > Queue::MAX_PRIORITY {
        let max = Queue::MAX_PRIORITY;
        return Err(Error::InvalidArgument(format!("priority must be between 0 and {max}, got {priority}")));
    }
    Ok(())
}

/// The path an entry's sequential create names.
fn entry_prefix(dir: &str, priority: u32) -> String {
    format!("{dir}/entry-{priority:03}-")
}

/// The number of children of `dir` (kazoo's `len()`: every child counts).
async fn children_count(session: &Session, dir: &str) -> Result<usize> {
    match session.retry(Retry::default(), || session.exists(dir)).await? {
        Some(stat) => Ok(stat.num_children.max(0) as usize),
        None => Ok(0),
    }
}

/// kazoo's `Queue` on the same path: a consumer removes an entry as it
/// takes it (at most once; see the module).
#[derive(Clone, Debug)]
pub struct Queue {
    session: Session,
    path: String,
}

impl Queue {
    /// The highest priority (the last taken): kazoo writes three digits.
    pub const MAX_PRIORITY: u32 = 999;

    /// The priority kazoo's `put` uses when given none.
    pub const DEFAULT_PRIORITY: u32 = 100;

    /// A handle on the queue at `path`; nothing is sent before a call.
    pub fn new(session: &Session, path: &str) -> Result<Queue> {
        validate_path(path)?;
        Ok(Queue { session: session.clone(), path: path.to_owned() })
    }

    /// The queue's path.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// Adds `value` with `priority` (0 to [`Queue::MAX_PRIORITY`], lower
    /// first; kazoo's default is [`Queue::DEFAULT_PRIORITY`]); returns the entry's node.
    /// Not retried: after [`Error::ConnectionLoss`] the entry may be in.
    pub async fn put(&self, value: &[u8], priority: u32) -> Result<String> {
        check_priority(priority)?;
        let prefix = entry_prefix(&self.path, priority);
        Ok(self.session.create(&prefix, Some(value), &Create::default().sequence().makepath()).await?.0)
    }

    /// Takes the first entry: its value, removed from the queue; `None` if
    /// the queue is empty. Does not wait for an entry.
    pub async fn get(&self) -> Result<Option<Vec<u8>>> {
        let session = &self.session;
        loop {
            let children = match session.retry(Retry::default(), || session.children(&self.path)).await {
                Ok(children) => children,
                Err(Error::NoNode { .. }) => return Ok(None),
                Err(err) => return Err(err),
            };
            let entries = queue_entries(&children);
            if entries.is_empty() {
                return Ok(None);
            }
            for name in entries {
                let node = format!("{}/{name}", self.path);
                let value = match session.retry(Retry::default(), || session.get(&node)).await {
                    // A null entry (not one a queue writes) is taken as empty.
                    Ok((value, _)) => value.unwrap_or_default(),
                    Err(Error::NoNode { .. }) => continue,
                    Err(err) => return Err(err),
                };
                match session.retry(Retry::default(), || session.delete(&node, None, false)).await {
                    Ok(()) => return Ok(Some(value)),
                    // Taken by another consumer (or by a try of ours whose reply was lost).
                    Err(Error::NoNode { .. }) => continue,
                    Err(err) => return Err(err),
                }
            }
        }
    }

    /// How many entries there are (every child of the path, as kazoo counts).
    pub async fn len(&self) -> Result<usize> {
        children_count(&self.session, &self.path).await
    }

    /// Whether there are no entries.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// [`Queue::put`] for callers without an async runtime.
    pub fn put_blocking(&self, value: &[u8], priority: u32) -> Result<String> {
        runtime::block_on(self.put(value, priority))
    }

    /// [`Queue::get`] for callers without an async runtime.
    pub fn get_blocking(&self) -> Result<Option<Vec<u8>>> {
        runtime::block_on(self.get())
    }

    /// [`Queue::len`] for callers without an async runtime.
    pub fn len_blocking(&self) -> Result<usize> {
        runtime::block_on(self.len())
    }
}

/// A consumer (and producer) of kazoo's `LockingQueue` on the same path:
/// [`LockingQueue::get`] locks an entry for this consumer, which then
/// [`consume`](LockingQueue::consume)s or [`release`](LockingQueue::release)s
/// it. One entry at a time; clones are the same consumer.
#[derive(Clone)]
pub struct LockingQueue {
    inner: Arc<Consumer>,
}

impl std::fmt::Debug for LockingQueue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LockingQueue").field("path", &self.inner.path).finish_non_exhaustive()
    }
}

struct Consumer {
    session: Session,
    path: String,
    entries: String,
    taken: String,
    /// This consumer's id: the data of its lock nodes (kazoo's `id`).
    id: String,
    /// The entry it locked, if any.
    locked: Mutex<Option<Locked>>,
    /// One `get` at a time.
    getting: tokio::sync::Mutex<()>,
    /// A get's turn to write this consumer's lock nodes, shared with the
    /// clean-ups of the takes it leaves unfinished ([`Turn`]).
    writing: Arc<tokio::sync::Mutex<()>>,
}

/// Held by a get and by each clean-up of a take it left unfinished: the
/// next get waits until the last of them ends. A clean-up knows its lock
/// by session and id, which the next get's lock of the same entry shares,
/// so running beside that get it could delete the get's lock and the entry
/// would go to a second consumer.
type Turn = Arc<OwnedMutexGuard<()>>;

#[derive(Clone)]
struct Locked {
    entry: String,
    value: Vec<u8>,
    /// The session that made the lock node: writes on it cannot apply once it ended.
    live: Arc<Live>,
}

impl LockingQueue {
    /// A consumer of the queue at `path`, with a fresh id; nothing is sent
    /// before a call.
    pub fn new(session: &Session, path: &str) -> Result<LockingQueue> {
        validate_path(path)?;
        Ok(LockingQueue {
            inner: Arc::new(Consumer {
                session: session.clone(),
                path: path.to_owned(),
                entries: format!("{path}/entries"),
                taken: format!("{path}/taken"),
                id: Uuid::new_v4().simple().to_string(),
                locked: Mutex::new(None),
                getting: tokio::sync::Mutex::new(()),
                writing: Arc::new(tokio::sync::Mutex::new(())),
            }),
        })
    }

    /// The queue's path.
    pub fn path(&self) -> &str {
        &self.inner.path
    }

    /// This consumer's id, the data of its lock nodes.
    pub fn id(&self) -> &str {
        &self.inner.id
    }

    /// The entry this consumer locked and has not consumed or released:
    /// its node name under `path/entries` and its value.
    pub fn processing_element(&self) -> Option<(String, Vec<u8>)> {
        self.inner.locked().map(|l| (l.entry, l.value))
    }

    /// Adds `value` with `priority` (see [`Queue::put`]); not retried.
    pub async fn put(&self, value: &[u8], priority: u32) -> Result<String> {
        check_priority(priority)?;
        let prefix = entry_prefix(&self.inner.entries, priority);
        Ok(self.inner.session.create(&prefix, Some(value), &Create::default().sequence().makepath()).await?.0)
    }

    /// Adds every value with `priority`, all or none (one transaction).
    pub async fn put_all(&self, values: &[Vec<u8>], priority: u32) -> Result<()> {
        check_priority(priority)?;
        let consumer = &self.inner;
        consumer.session.retry(Retry::default(), || consumer.session.ensure_path(&consumer.entries, None)).await?;
        let prefix = entry_prefix(&consumer.entries, priority);
        let transaction = values.iter().fold(consumer.session.transaction(), |t, value| {
            t.create(&prefix, Some(value), Create::default().sequence())
        });
        transaction.commit().await.map(drop)
    }

    /// Locks the first free entry and returns its value, waiting for one up
    /// to `timeout` (`None`: forever): `None` if none came. An entry locked
    /// before and neither consumed nor released is returned again. Across a
    /// lost connection or a session expiry it goes on waiting; dropping the
    /// future leaves no lock behind.
    pub async fn get(&self, timeout: Option<Duration>) -> Result<Option<Vec<u8>>> {
        let consumer = &self.inner;
        let _one_at_a_time = consumer.getting.lock().await;
        if let Some(locked) = consumer.locked() {
            if !locked.live.client.state().is_terminated() {
                return Ok(Some(locked.value));
            }
            consumer.forget(&locked.entry);
        }
        let deadline = timeout.and_then(|t| Instant::now().checked_add(t));
        // Dropped at the deadline, wherever it is: no lock is left (see `take`).
        consumer.session.until_deadline(deadline, consumer.get_until(deadline)).await.unwrap_or(Ok(None))
    }

    /// Whether this consumer still holds the lock of the entry it got: its
    /// lock node exists, on the session that made it, with its id.
    pub async fn holds_lock(&self) -> Result<bool> {
        let consumer = &self.inner;
        let Some(locked) = consumer.locked() else { return Ok(false) };
        let lock = format!("{}/{}", consumer.taken, locked.entry);
        let read = async {
            loop {
                match locked.live.client.get_data(&lock).await {
                    Err(err) if connection_lost(&err) && !locked.live.client.state().is_terminated() => continue,
                    read => return read,
                }
            }
        };
        let holds = match consumer.session.bounded(async { Ok::<_, Error>(read.await) }).await? {
            Ok((data, stat)) => data == consumer.id.as_bytes() && stat.ephemeral_owner == locked.live.session_id,
            Err(zk::Error::NoNode | zk::Error::SessionExpired | zk::Error::ClientClosed) => false,
            Err(err) if connection_lost(&err) => false,
            Err(err) => return Err(Error::zk(&lock, "read", err)),
        };
        if !holds {
            consumer.forget(&locked.entry);
        }
        Ok(holds)
    }

    /// Removes the entry this consumer got, with its lock, in one
    /// transaction: `false` if it holds none (or lost its lock: its session
    /// ended, and another consumer may have it now).
    pub async fn consume(&self) -> Result<bool> {
        self.inner.finish(true).await
    }

    /// Gives the entry this consumer got back to the queue (deletes its
    /// lock): `false` if it holds none.
    pub async fn release(&self) -> Result<bool> {
        self.inner.finish(false).await
    }

    /// How many entries there are, locked ones included.
    pub async fn len(&self) -> Result<usize> {
        children_count(&self.inner.session, &self.inner.entries).await
    }

    /// Whether there are no entries.
    pub async fn is_empty(&self) -> Result<bool> {
        Ok(self.len().await? == 0)
    }

    /// [`LockingQueue::put`] for callers without an async runtime.
    pub fn put_blocking(&self, value: &[u8], priority: u32) -> Result<String> {
        runtime::block_on(self.put(value, priority))
    }

    /// [`LockingQueue::put_all`] for callers without an async runtime.
    pub fn put_all_blocking(&self, values: &[Vec<u8>], priority: u32) -> Result<()> {
        runtime::block_on(self.put_all(values, priority))
    }

    /// [`LockingQueue::get`] for callers without an async runtime.
    pub fn get_blocking(&self, timeout: Option<Duration>) -> Result<Option<Vec<u8>>> {
        runtime::block_on(self.get(timeout))
    }

    /// [`LockingQueue::holds_lock`] for callers without an async runtime.
    pub fn holds_lock_blocking(&self) -> Result<bool> {
        runtime::block_on(self.holds_lock())
    }

    /// [`LockingQueue::consume`] for callers without an async runtime.
    pub fn consume_blocking(&self) -> Result<bool> {
        runtime::block_on(self.consume())
    }

    /// [`LockingQueue::release`] for callers without an async runtime.
    pub fn release_blocking(&self) -> Result<bool> {
        runtime::block_on(self.release())
    }

    /// [`LockingQueue::len`] for callers without an async runtime.
    pub fn len_blocking(&self) -> Result<usize> {
        runtime::block_on(self.len())
    }
}

impl Consumer {
    fn locked(&self) -> Option<Locked> {
        self.locked.lock().unwrap().clone()
    }

    /// Whether a lock node read on `live` is this consumer's: made by its
    /// session and holding its id.
    fn owns(&self, live: &Live, data: &[u8], stat: &zk::Stat) -> bool {
        stat.ephemeral_owner == live.session_id && data == self.id.as_bytes()
    }

    /// Forgets the entry `entry`, if it is still the one locked.
    fn forget(&self, entry: &str) {
        let mut locked = self.locked.lock().unwrap();
        if locked.as_ref().is_some_and(|l| l.entry == entry) {
            *locked = None;
        }
    }

    /// [`LockingQueue::get`]'s wait for an entry, on each session in turn.
    async fn get_until(&self, deadline: Option<Instant>) -> Result<Option<Vec<u8>>> {
        // Within the deadline: a clean-up held up by a partition holds up
        // no timed get beyond it.
        let turn: Turn = Arc::new(self.writing.clone().lock_owned().await);
        let mut dirs_made = false;
        loop {
            let live = self.session.live().await?;
            match self.try_get(&live, deadline, &mut dirs_made, &turn).await? {
                OnSession::Done(value) => return Ok(value),
                OnSession::Ended => {
                    let next = self.session.wait_past(live.generation);
                    match deadline {
                        Some(deadline) => {
                            if tokio::time::timeout_at(deadline, next).await.is_err() {
                                return Ok(None);
                            }
                        }
                        None => {
                            next.await;
                        }
                    }
                }
            }
        }
    }

    /// kazoo's `_inner_get` on one session: lists the entries and the locks
    /// (watching both), locks the first free entry, else waits for a change.
    async fn try_get(
        &self,
        live: &Arc<Live>,
        deadline: Option<Instant>,
        dirs_made: &mut bool,
        turn: &Turn,
    ) -> Result<OnSession<Option<Vec<u8>>>> {
        loop {
            if !*dirs_made {
                let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&self.session.options().acls));
                for dir in [&self.taken, &self.entries] {
                    ask!(live, make_dirs(&self.session, live, dir, &persistent))
                        .map_err(|e| Error::zk(dir, "create", e))?;
                }
                *dirs_made = true;
            }
            let (entries, entries_changed) = match ask!(live, live.client.list_and_watch_children(&self.entries)) {
                Ok(listed) => listed,
                Err(zk::Error::NoNode) => {
                    *dirs_made = false;
                    continue;
                }
                Err(err) => return Err(Error::zk(&self.entries, "list", err)),
            };
            let (taken, taken_changed) = match ask!(live, live.client.list_and_watch_children(&self.taken)) {
                Ok(listed) => listed,
                Err(zk::Error::NoNode) => {
                    *dirs_made = false;
                    continue;
                }
                Err(err) => return Err(Error::zk(&self.taken, "list", err)),
            };
            for entry in queue_entries(&entries).into_iter().filter(|e| !taken.contains(e)) {
                match self.take(live, &entry, turn).await? {
                    OnSession::Done(Some(value)) => return Ok(OnSession::Done(Some(value))),
                    OnSession::Done(None) => {}
                    OnSession::Ended => return Ok(OnSession::Ended),
                }
            }
            let changed = async {
                tokio::select! {
                    event = entries_changed.changed() => event,
                    event = taken_changed.changed() => event,
                }
            };
            let event = match deadline {
                Some(deadline) => match tokio::time::timeout_at(deadline, changed).await {
                    Ok(event) => event,
                    Err(_) => return Ok(OnSession::Done(None)),
                },
                None => changed.await,
            };
            if event.event_type == zk::EventType::Session && event.session_state.is_terminated() {
                return Ok(OnSession::Ended);
            }
        }
    }

    /// Locks `entry` for this consumer and reads its value: `None` if
    /// another consumer has it or it was consumed meanwhile.
    async fn take(&self, live: &Arc<Live>, entry: &str, turn: &Turn) -> Result<OnSession<Option<Vec<u8>>>> {
        let lock = format!("{}/{entry}", self.taken);
        let node = format!("{}/{entry}", self.entries);
        let ephemeral = zk::CreateMode::Ephemeral.with_acls(zk::Acls::new(&self.session.options().acls));
        // From the create on, whatever ends this take unfinished removes our lock.
        let mut unlock = self.unlock(live, &lock, turn);
        loop {
            match ask!(live, live.client.create(&lock, self.id.as_bytes(), &ephemeral)) {
                Ok(_) => break,
                // The locks' parent went (an operator's delete): made again.
                Err(zk::Error::NoNode) => {
                    let persistent = zk::CreateMode::Persistent.with_acls(zk::Acls::new(&self.session.options().acls));
                    ask!(live, make_dirs(&self.session, live, &self.taken, &persistent))
                        .map_err(|e| Error::zk(&self.taken, "create", e))?;
                }
                // Ours, if a create whose reply was lost made it: the owner and
                // the data say (other consumers may share this session).
                Err(zk::Error::NodeExists) => match ask!(live, live.client.get_data(&lock)) {
                    Ok((data, stat)) if self.owns(live, &data, &stat) => break,
                    Ok(_) => {
                        unlock.live = None;
                        return Ok(OnSession::Done(None));
                    }
                    Err(zk::Error::NoNode) => continue,
                    Err(err) => return Err(Error::zk(&lock, "read", err)),
                },
                Err(err) => return Err(Error::zk(&lock, "create", err)),
            }
        }
        let value = loop {
            match ask!(live, live.client.get_data(&node)) {
                Ok((value, _)) => break value,
                // Consumed meanwhile: `unlock` deletes our lock.
                Err(zk::Error::NoNode) => return Ok(OnSession::Done(None)),
                Err(err) => return Err(Error::zk(&node, "read", err)),
            }
        };
        unlock.live = None;
        *self.locked.lock().unwrap() =
            Some(Locked { entry: entry.to_owned(), value: value.clone(), live: live.clone() });
        Ok(OnSession::Done(Some(value)))
    }

    /// The clean-up of a take of `lock` on `live`, armed, in the get's `turn`.
    fn unlock(&self, live: &Arc<Live>, lock: &str, turn: &Turn) -> Unlock {
        Unlock {
            session: self.session.clone(),
            live: Some(live.clone()),
            lock: lock.to_owned(),
            id: self.id.clone(),
            turn: turn.clone(),
        }
    }

    /// `consume` (the entry and its lock) or `release` (the lock), as one
    /// transaction on the session that made the lock: if that session
    /// ended, nothing is written, and another consumer may hold the entry.
    async fn finish(&self, consume: bool) -> Result<bool> {
        let Some(locked) = self.locked() else { return Ok(false) };
        let lock = format!("{}/{}", self.taken, locked.entry);
        let node = format!("{}/{}", self.entries, locked.entry);
        let client = &locked.live.client;
        let commit = async {
            let mut lost_once = false;
            loop {
                let mut multi = client.new_multi_writer();
                if consume {
                    multi.add_delete(&node, None).map_err(|e| Error::zk(&node, "delete", e))?;
                }
                multi.add_delete(&lock, None).map_err(|e| Error::zk(&lock, "delete", e))?;
                match multi.commit().await.map_err(zk::Error::from) {
                    Ok(_) => return Ok(true),
                    Err(err) if connection_lost(&err) && !client.state().is_terminated() => lost_once = true,
                    // Assumes no one else deletes our lock or the entry it locks
                    // (kazoo consumers do not): gone after a lost reply, it was our commit.
                    Err(zk::Error::NoNode) if lost_once => return Ok(true),
                    Err(zk::Error::NoNode | zk::Error::SessionExpired | zk::Error::ClientClosed) => return Ok(false),
                    Err(err) if connection_lost(&err) => return Ok(false),
                    Err(err) => return Err(Error::zk(&lock, "delete", err)),
                }
            }
        };
        let done = self.session.bounded(commit).await;
        if !matches!(done, Err(Error::ConnectionLoss(_))) {
            self.forget(&locked.entry);
        }
        done
    }
}

/// Deletes a lock node of ours unless disarmed (`live` taken): a take that
/// ends unfinished (an error, a dropped future) leaves no lock.
struct Unlock {
    session: Session,
    live: Option<Arc<Live>>,
    lock: String,
    /// The consumer's id: a node of its session without it is another consumer's.
    id: String,
    /// Kept until the clean-up ends: the consumer's next get waits for it.
    turn: Turn,
}

impl Drop for Unlock {
    fn drop(&mut self) {
        let Some(live) = self.live.take() else { return };
        let (lock, id, turn) = (std::mem::take(&mut self.lock), std::mem::take(&mut self.id), self.turn.clone());
        drop(self.session.spawn(async move {
            let _turn = turn;
            loop {
                // Only ours: a create that never landed leaves another's node,
                // maybe of another consumer on this session.
                match live.client.get_data(&lock).await {
                    Ok((data, stat)) if stat.ephemeral_owner == live.session_id && data == id.as_bytes() => {}
                    Err(err) if connection_lost(&err) && !live.client.state().is_terminated() => continue,
                    _ => return,
                }
                match live.client.delete(&lock, None).await {
                    Err(err) if connection_lost(&err) && !live.client.state().is_terminated() => continue,
                    _ => return,
                }
            }
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SessionOptions;

    /// Until the entry's lock is `wanted` (present or not), at most `limit`.
    async fn lock_is(raw: &zk::Client, lock: &str, wanted: bool, limit: Duration) -> bool {
        let wait = async {
            loop {
                let (stat, watcher) = raw.check_and_watch_stat(lock).await.unwrap();
                if stat.is_some() == wanted {
                    return;
                }
                watcher.changed().await;
            }
        };
        tokio::time::timeout(limit, wait).await.is_ok()
    }

    /// A get dropped while its create is on the wire, a create that never
    /// lands: the take's clean-up is due, and its first read comes late (its
    /// task not yet run on a busy runtime; no fault of the server's orders a
    /// session's requests that way, so the test holds the clean-up itself).
    /// The consumer's next get must not lock the entry before that read: the
    /// clean-up would find the new lock, with this session and this id, take
    /// it for its own and delete it, and the entry would go to a second
    /// consumer while the first believes it holds it.
    #[tokio::test(flavor = "multi_thread")]
    async fn a_late_clean_up_never_removes_the_next_gets_lock() {
        let connect = zk_harness::shared().connect_string();
        let raw = zk::Client::connect(&connect).await.unwrap();
        let (s1, s2) = (
            Session::connect(SessionOptions::new(&connect)).await.unwrap(),
            Session::connect(SessionOptions::new(&connect)).await.unwrap(),
        );
        let path = format!("/zoolock-tests{}", zk_harness::unique_path("queue-late-clean-up"));
        let (a, b) = (LockingQueue::new(&s1, &path).unwrap(), LockingQueue::new(&s2, &path).unwrap());
        let entry = a.put(b"job", 100).await.unwrap();
        let entry = entry.rsplit('/').next().unwrap();
        assert_eq!(a.get(Some(Duration::ZERO)).await.unwrap().as_deref(), Some(&b"job"[..]));
        assert!(a.release().await.unwrap());
        let lock = format!("{}/{entry}", a.inner.taken);

        let turn = Arc::new(a.inner.writing.clone().lock_owned().await);
        let pending = a.inner.unlock(&s1.live().await.unwrap(), &lock, &turn);
        drop(turn);
        let timed = tokio::time::timeout(Duration::from_secs(15), a.get(Some(Duration::from_millis(200))));
        assert_eq!(timed.await.expect("a timed get ended").unwrap(), None, "waiting for the clean-up, then timed out");
        let next = tokio::spawn({
            let a = a.clone();
            async move { a.get(None).await }
        });
        // The next get waits for the clean-up: the bound is on that wait alone.
        let locked_early = lock_is(&raw, &lock, true, Duration::from_secs(1)).await;
        drop(pending);
        let got = tokio::time::timeout(Duration::from_secs(15), next).await.expect("the next get ended");
        assert_eq!(got.unwrap().unwrap().as_deref(), Some(&b"job"[..]));
        assert_eq!(b.get(Some(Duration::from_secs(1))).await.unwrap(), None, "the entry a holds was handed to b too");
        assert!(a.holds_lock().await.unwrap(), "a's lock is gone");
        assert!(!locked_early, "the next get locked the entry before the clean-up ran");
    }
}

//! kazoo's one-shot watches (`get`, `exists` and `get_children` with
//! `watch=`): a read that sets ZooKeeper's own watch in the same request,
//! and one call at the first change after it, on the session's watch
//! thread, in the order the server sent the events. kazoo's TreeCache
//! relies on that order: a child's deletion is heard before its parent's.
//!
//! The order rests on two claims. zookeeper-client's one session task
//! wakes the waiters of replies and of watches in the order the server's
//! messages arrive; and [`FuturesUnordered`] polls its futures in the
//! order they were woken. So all of a session's one-shot watches live as
//! futures of one task, each making its read and then waiting for its
//! event, and each queues its call while that task polls it: a reply and
//! the event right behind it are taken in one poll, before any event that
//! came later. Separate tasks would not do: tokio runs the last task woken
//! first, and a watch that read again before calling would let replies
//! overtake. `one_shot_watches_keep_the_servers_order` tests it.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use futures_util::stream::{FuturesUnordered, StreamExt};
use tokio::sync::{mpsc, oneshot, Notify};

use crate::error::{Error, Result};
use crate::mirror::Mirrors;
use crate::options::validate_node_path;
use crate::session::{Extension, Session};
use crate::watchers::{event_of, WatchEvent};
use crate::znode::Stat;

/// A one-shot watch's callback, called once with the change.
type Callback = Box<dyn FnOnce(WatchEvent) + Send>;

/// A pending one-shot watch; stopping or dropping it removes the watch.
#[derive(Debug)]
pub struct OneShot {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    /// Asked to stop: a call not started yet is not made.
    stopped: AtomicBool,
    /// Fired, or ended with its session or its read.
    ended: AtomicBool,
    stop: Notify,
}

impl OneShot {
    /// Ends the watch: no call starts after this returns.
    pub fn stop(&self) {
        self.shared.stopped.store(true, Ordering::Release);
        self.shared.stop.notify_one();
    }

    /// Whether the watch has ended: stopped, fired, or its session closed.
    pub fn is_stopped(&self) -> bool {
        self.shared.stopped.load(Ordering::Acquire) || self.shared.ended.load(Ordering::Acquire)
    }
}

impl Drop for OneShot {
    fn drop(&mut self) {
        self.stop()
    }
}

/// The read a one-shot watch comes with.
#[derive(Clone, Copy)]
enum Read {
    Data,
    Exists,
    Children,
}

enum Value {
    Data(Option<Vec<u8>>, Stat),
    Exists(Option<Stat>),
    Children(Vec<String>, Stat),
}

type Member = Pin<Box<dyn Future<Output = ()> + Send>>;

/// The task that runs the session's one-shot watches, started on first use.
#[derive(Default)]
pub(crate) struct OneShots {
    members: Mutex<Option<mpsc::UnboundedSender<Member>>>,
}

impl Extension for OneShots {}

impl OneShots {
    fn add(session: &Session, member: Member) {
        let mut members = session.extension::<OneShots>().members.lock().unwrap();
        let member = match members.as_ref() {
            Some(running) => match running.send(member) {
                Ok(()) => return,
                // Its task is gone (its runtime shut down): start another.
                Err(unsent) => unsent.0,
            },
            None => member,
        };
        let (sender, added) = mpsc::unbounded_channel();
        let _ = sender.send(member);
        // The session's one-shot watches, whoever set them: a span of its own.
        session.spawn_in(tracing::debug_span!(parent: None, "one_shot_watches"), run(added));
        *members = Some(sender);
    }
}

async fn run(mut added: mpsc::UnboundedReceiver<Member>) {
    let mut members = FuturesUnordered::new();
    loop {
        tokio::select! {
            member = added.recv() => match member {
                Some(member) => members.push(member),
                None => break,
            },
            Some(()) = members.next(), if !members.is_empty() => {}
        }
    }
}

/// One watch: its read (the answer goes to `answer`), then its event.
async fn watch(
    session: Session,
    path: String,
    read: Read,
    answer: oneshot::Sender<Result<Value>>,
    shared: Arc<Shared>,
    callback: Callback,
) {
    let watched = async {
        let (live, turn) = match session.live_in_turn().await {
            Ok(found) => found,
            Err(err) => return drop(answer.send(Err(err))),
        };
        // A data watch: the session's handles on `path` stop mirroring it while it may be set.
        let _mark = matches!(read, Read::Data | Read::Exists).then(|| Mirrors::of(&session).data_watch(&path));
        let client = &live.client;
        let replied = match read {
            Read::Data => {
                let reply = client.get_and_watch_data_nullable(&path);
                drop(turn);
                reply
                    .await
                    .map(|(data, stat, watcher)| (Value::Data(data, Stat::from(&stat)), watcher))
                    .map_err(|err| Error::zk(&path, "read", err))
            }
            Read::Exists => {
                let reply = client.check_and_watch_stat(&path);
                drop(turn);
                reply
                    .await
                    .map(|(stat, watcher)| (Value::Exists(stat.as_ref().map(Stat::from)), watcher))
                    .map_err(|err| Error::zk(&path, "check", err))
            }
            Read::Children => {
                let reply = client.get_and_watch_children(&path);
                drop(turn);
                reply
                    .await
                    .map(|(children, stat, watcher)| (Value::Children(children, Stat::from(&stat)), watcher))
                    .map_err(|err| Error::zk(&path, "list", err))
            }
        };
        drop(live);
        let (value, watcher) = match replied {
            Ok(replied) => replied,
            Err(err) => return drop(answer.send(Err(err))),
        };
        // The caller gave up (a timeout): the watch goes with its read.
        if answer.send(Ok(value)).is_err() {
            return;
        }
        // Session events end it without a call: the binding hears the session's state itself.
        let event = event_of(&watcher.changed().await);
        // Ended before the call is queued: whoever hears the call sees it ended.
        shared.ended.store(true, Ordering::Release);
        if let Some(event) = event {
            let shared = shared.clone();
            session.deliver_watch_call(move || {
                if !shared.stopped.load(Ordering::Acquire) {
                    callback(event)
                }
            });
        }
    };
    tokio::select! {
        biased;
        _ = shared.stop.notified() => {}
        _ = watched => {}
    }
    shared.ended.store(true, Ordering::Release);
}

/// kazoo's reads with `watch=`: the read and a [`OneShot`] watch set by
/// the same request, whose `callback` is called once, on the session's
/// watch thread, at the first change after the read (a node's deletion
/// fires both its data and its children watches), in the order the server
/// sent the events. A watch ends without a call when its session does
/// (kazoo fires pending watches with the session's event: the bindings do,
/// from the session's state). Errors are those of the plain reads.
impl Session {
    /// [`Session::get`] and a watch of the node's data and deletion.
    pub async fn get_watched(
        &self,
        path: &str,
        callback: impl FnOnce(WatchEvent) + Send + 'static,
    ) -> Result<((Option<Vec<u8>>, Stat), OneShot)> {
        match self.read_watched(path, Read::Data, Box::new(callback)).await? {
            (Value::Data(data, stat), watch) => Ok(((data, stat), watch)),
            _ => unreachable!("a data read answers with data"),
        }
    }

    /// [`Session::exists`] and a watch of the node's creation, data and deletion.
    pub async fn exists_watched(
        &self,
        path: &str,
        callback: impl FnOnce(WatchEvent) + Send + 'static,
    ) -> Result<(Option<Stat>, OneShot)> {
        match self.read_watched(path, Read::Exists, Box::new(callback)).await? {
            (Value::Exists(stat), watch) => Ok((stat, watch)),
            _ => unreachable!("an exists read answers with a stat"),
        }
    }

    /// [`Session::children_and_stat`] and a watch of the children and the node's deletion.
    pub async fn children_watched(
        &self,
        path: &str,
        callback: impl FnOnce(WatchEvent) + Send + 'static,
    ) -> Result<((Vec<String>, Stat), OneShot)> {
        match self.read_watched(path, Read::Children, Box::new(callback)).await? {
            (Value::Children(children, stat), watch) => Ok(((children, stat), watch)),
            _ => unreachable!("a children read answers with children"),
        }
    }

    async fn read_watched(&self, path: &str, read: Read, callback: Callback) -> Result<(Value, OneShot)> {
        validate_node_path(path)?;
        self.check_usable()?;
        // Dropped with this future (an error, a timeout): the watch stops.
        let handle = OneShot { shared: Arc::default() };
        let (answer, answered) = oneshot::channel();
        let mut member: Member =
            Box::pin(watch(self.clone(), path.to_owned(), read, answer, handle.shared.clone(), callback));
        // Polled once here, the read is sent in the caller's order; the
        // session's one-shot task polls the rest.
        let first = std::future::poll_fn(|cx| std::task::Poll::Ready(member.as_mut().poll(cx))).await;
        if first.is_pending() {
            OneShots::add(self, member);
        }
        let value = self.bounded(async { answered.await.unwrap_or_else(|_| Err(self.closed_error())) }).await?;
        Ok((value, handle))
    }
}

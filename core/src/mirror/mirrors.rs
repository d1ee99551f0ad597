//! The session's mirrors, one per lock path (a session extension), and the
//! data watches that deafen them (point 6 of the mirror's header).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};

use super::Mirror;
use crate::session::{Extension, Session};
use crate::state::Status;

/// The session's mirrors, one per lock path, and the data watches that
/// would deafen them (point 6).
#[derive(Default)]
pub(crate) struct Mirrors {
    /// Per lock path, the mirror its handles share while any exists.
    paths: Mutex<HashMap<String, Weak<Mirror>>>,
    /// Per path, how many data watches this session may have set there and
    /// not yet seen fire or dropped (locked after `paths`): a path with
    /// any is not mirrored, see [`Mirrors::data_watch`].
    data_watched: Arc<Mutex<HashMap<String, u32>>>,
}

impl Extension for Mirrors {
    /// An ended generation (lost, replaced or closed): every waiter looks at the status again.
    fn session_changed(&self, _now: Status, ended: bool) {
        if ended {
            let mirrors: Vec<_> = self.paths.lock().unwrap().values().filter_map(Weak::upgrade).collect();
            for mirror in mirrors {
                mirror.wake_waiters();
            }
        }
    }
}

impl Mirrors {
    /// `session`'s.
    pub fn of(session: &Session) -> &Mirrors {
        session.extension()
    }

    /// The mirror of `path`'s children that every handle of this session
    /// on `path` shares (see [`crate::mirror`]).
    pub fn mirror(&self, session: &Session, path: &str) -> Arc<Mirror> {
        let mut mirrors = self.paths.lock().unwrap();
        if let Some(mirror) = mirrors.get(path).and_then(Weak::upgrade) {
            return mirror;
        }
        mirrors.retain(|_, m| m.strong_count() > 0);
        let deaf = self.data_watched.lock().unwrap().contains_key(path);
        let mirror = Mirror::new(session, path, deaf);
        mirrors.insert(path.to_owned(), Arc::downgrade(&mirror));
        mirror
    }

    /// Called before this session sets a data watch (`get`, `exists`) on
    /// `path`. ZooKeeper 3.8 keeps one watch mode per connection and path
    /// (ZOOKEEPER-4466, fixed in 3.9): that watch turns a mirror's
    /// persistent recursive watch on `path` into a one-shot one, and the
    /// mirror hears neither creates nor deletes under it. Handles of this
    /// session on `path` list instead, from now on, and a mirror made while
    /// the returned mark lives starts blind. Keep the mark until the watch
    /// fired or its watcher was dropped: assumes zookeeper-client removes a
    /// dropped one-shot watcher's watch from the server (`RemoveWatches`,
    /// sent before any later request of the session, such as a new
    /// mirror's `addWatch`). Without the marks ending, the record of every
    /// path ever watched would grow for the session's whole life.
    pub fn data_watch(&self, path: &str) -> DataWatchMark {
        let mirror = {
            let mirrors = self.paths.lock().unwrap();
            *self.data_watched.lock().unwrap().entry(path.to_owned()).or_default() += 1;
            mirrors.get(path).and_then(Weak::upgrade)
        };
        if let Some(mirror) = mirror {
            mirror.blind();
        }
        DataWatchMark { watched: Arc::downgrade(&self.data_watched), path: path.to_owned() }
    }
}

/// A data watch this session may have on a path (see [`Mirrors::data_watch`]).
pub(crate) struct DataWatchMark {
    watched: Weak<Mutex<HashMap<String, u32>>>,
    path: String,
}

impl Drop for DataWatchMark {
    fn drop(&mut self) {
        let Some(watched) = self.watched.upgrade() else { return };
        let mut watched = watched.lock().unwrap();
        if let Some(count) = watched.get_mut(&self.path) {
            *count -= 1;
            if *count == 0 {
                watched.remove(&self.path);
            }
        }
    }
}

impl Session {
    /// How many paths carry a data watch mark now (tests).
    #[doc(hidden)]
    pub fn data_watched_paths(&self) -> usize {
        Mirrors::of(self).data_watched.lock().unwrap().len()
    }
}

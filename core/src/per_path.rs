//! A session's record per lock path that forgets the paths it no longer
//! needs, so that a session locking path after path (a lock per job) keeps
//! what it has in line, not every path it ever locked.

use std::collections::HashMap;

/// Below this many paths, nothing is forgotten.
const KEPT: usize = 64;

/// Per path, a `V`; entries no longer needed are forgotten when a new path
/// comes and the map has doubled since it last forgot (amortized O(1)).
pub(crate) struct PerPath<V> {
    map: HashMap<String, V>,
    /// The size at which entries are forgotten next.
    forget_at: usize,
}

impl<V> Default for PerPath<V> {
    fn default() -> Self {
        PerPath { map: HashMap::new(), forget_at: KEPT }
    }
}

impl<V> PerPath<V> {
    pub fn get(&self, path: &str) -> Option<&V> {
        self.map.get(path)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    /// `path`'s entry, made by `make` if it has none. Before a new path is
    /// added, the entries `needed` refuses may be forgotten.
    pub fn entry(&mut self, path: &str, make: impl FnOnce() -> V, mut needed: impl FnMut(&V) -> bool) -> &mut V {
        if !self.map.contains_key(path) {
            if self.map.len() >= self.forget_at {
                self.map.retain(|_, v| needed(v));
                self.forget_at = (2 * self.map.len()).max(KEPT);
            }
            // The path's key is made at its first entry, again once forgotten.
            self.map.insert(path.to_owned(), make());
        }
        self.map.get_mut(path).expect("inserted above")
    }
}

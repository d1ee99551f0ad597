use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::Arc;

/// Request ids; the last one given is shared with the clients
/// ([Client::last_xid](crate::Client::last_xid)).
#[derive(Default)]
pub struct Xid {
    prev: Arc<AtomicI32>,
}

impl Xid {
    pub fn next(&mut self) -> i32 {
        let prev = self.prev.load(Ordering::Relaxed);
        let next = if prev == i32::MAX { 1 } else { prev + 1 };
        self.prev.store(next, Ordering::Relaxed);
        next
    }

    pub fn shared(&self) -> Arc<AtomicI32> {
        self.prev.clone()
    }
}

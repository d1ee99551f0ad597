//! The recipes, kazoo's `recipe/` in kind: each a handle that users and the
//! bindings call, built on the layers below (the session, the znode API, the
//! contender's node, the holder). A recipe is one file here (the lock, which
//! the others reuse, a folder), named as users know it; it imports only the
//! lock among its siblings.

mod barrier;
mod counter;
mod election;
mod lease;
mod lock;
mod multi_lock;
mod party;
mod persistent_node;
mod queue;
mod semaphore;

pub use barrier::{Barrier, DoubleBarrier};
pub use counter::{Counter, CounterChange, CounterFormat, CounterValue};
pub use election::{Election, Leadership};
pub use lease::{try_lease, try_multi_lease};
pub use lock::{Adaptive, Kind, Lock, LockConfig, CREATES_IN_FLIGHT};
pub use multi_lock::MultiLock;
pub use party::Party;
pub use persistent_node::PersistentNode;
pub use queue::{LockingQueue, Queue};
pub use semaphore::Semaphore;

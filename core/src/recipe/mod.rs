//! The recipes, kazoo's `recipe/` in kind: each a handle that users and the
//! bindings call, built on the layers below (the session, the znode API, the
//! contender's node, the holder). A recipe is one file here (the lock, which
//! the others reuse, a folder), named as users know it; it imports only the
//! lock among its siblings. `scripts/codegen.sh` declares and exports
//! each file (or folder) of this one: a new recipe is named nowhere else,
//! and every `pub` item of a recipe's file is the crate's public API.

// codegen: the recipes, from the files of recipe/ (scripts/codegen.sh writes this list)
mod barrier;
mod counter;
mod election;
mod leader_latch;
mod lease;
mod lock;
mod multi_lock;
mod party;
mod persistent_node;
mod queue;
mod semaphore;

pub use barrier::*;
pub use counter::*;
pub use election::*;
pub use leader_latch::*;
pub use lease::*;
pub use lock::*;
pub use multi_lock::*;
pub use party::*;
pub use persistent_node::*;
pub use queue::*;
pub use semaphore::*;
// codegen: end

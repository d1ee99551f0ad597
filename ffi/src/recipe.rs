//! What the recipes' handles (barriers, parties, queues) share: each
//! `_async` call runs on a clone of the core object behind the handle and
//! is completed by a `ZlResultCallback`. `scripts/codegen.sh` declares
//! each file of `recipe/` below and re-exports it whole: every `pub` item
//! there is exported.

// codegen: the recipes, from the files of recipe/ (scripts/codegen.sh writes this list)
mod barrier;
mod counter;
mod election;
mod leader_latch;
mod lease;
mod party;
mod persistent_node;
mod queue;

pub use barrier::*;
pub use counter::*;
pub use election::*;
pub use leader_latch::*;
pub use lease::*;
pub use party::*;
pub use persistent_node::*;
pub use queue::*;
// codegen: end

use std::future::Future;

use crate::args::{self};
use crate::castable::{self, Castable};
use crate::entry::Completion;
use crate::session::ZlSession;
use crate::status::{guard, FfiResult};
use crate::znode::Reply;

/// A handle on one of the core's recipe objects (cheap clones on a path).
pub(crate) trait Recipe: Castable {
    type Core: Clone;
    fn core(&self) -> &Self::Core;
    fn path(core: &Self::Core) -> &str;
}

/// Makes `$handle` (its core object in field `$field`) a [`Recipe`],
/// named `$name` in messages.
macro_rules! impl_recipe {
    ($handle:ty, $field:ident: $core:ty, $name:literal) => {
        impl $crate::castable::Castable for $handle {
            const NAME: &'static str = $name;
        }

        impl $crate::recipe::Recipe for $handle {
            type Core = $core;
            fn core(&self) -> &$core {
                &self.$field
            }
            fn path(core: &$core) -> &str {
                core.path()
            }
        }
    };
}
pub(crate) use impl_recipe;

/// Starts `start`'s work on a clone of the core object behind `handle`;
/// `callback` gets `reply`'s data, or a failure. `start` checks the call's
/// other arguments first; a fired `cancel` ends the call as "`verb` <the
/// handle's name> <path>" cancelled.
///
/// # Safety
/// `handle` must be a live handle until the callback; `cancel` null or
/// live; `user_data` valid until the callback.
pub(crate) unsafe fn call_later<H, T, F>(
    handle: *const H,
    verb: &str,
    start: impl FnOnce(H::Core) -> FfiResult<F>,
    reply: impl FnOnce(T) -> Reply + Send + 'static,
    completion: Completion,
) -> i32
where
    H: Recipe,
    T: Send + 'static,
    F: Future<Output = zoolock::Result<T>> + Send + 'static,
{
    guard(|| {
        let core = castable::borrow(handle)?.core().clone();
        let what = format!("{verb} {} {}", H::NAME, H::path(&core));
        let work = start(core)?;
        completion.start(work, what, reply)
    })
}

/// A recipe's `_new`: `make` builds the handle from the session and the
/// path (checked), once `out` is known to be writable.
///
/// # Safety
/// `session` must be a live handle; the byte range valid; `out` valid for writes.
pub(crate) unsafe fn new_recipe<H: Castable>(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out: *mut *mut H,
    out_name: &str,
    make: impl FnOnce(&zoolock::Session, &str) -> FfiResult<H>,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        args::need(out, out_name)?;
        castable::give(make(session, path)?, out, out_name)
    })
}

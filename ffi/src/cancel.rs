//! Cancel tokens: fired from any thread, they cancel the acquires they were
//! passed to, even one that has not started waiting yet.

use tokio::sync::watch;

use crate::castable::{self, Castable};
use crate::status::{guard, guard_void};

/// A cancel token for acquires: fire it from any thread to cancel the
/// acquires it was passed to, even one that has not started waiting yet.
pub struct ZlCancel {
    fired: watch::Sender<bool>,
}

impl Castable for ZlCancel {
    const NAME: &'static str = "cancel";
}

impl ZlCancel {
    /// What an acquire given this token watches.
    pub fn subscribe(&self) -> watch::Receiver<bool> {
        self.fired.subscribe()
    }
}

/// Creates a cancel token; free it with `zl_cancel_free` once the acquires
/// it was passed to have returned (or called back).
///
/// # Safety
/// `out_cancel` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_new(out_cancel: *mut *mut ZlCancel) -> i32 {
    guard(|| castable::give(ZlCancel { fired: watch::Sender::new(false) }, out_cancel, "out_cancel"))
}

/// Fires the token: every acquire given it fails with `ZL_CANCELLED` and
/// leaves no node (unless it had already acquired). Any thread may call it.
///
/// # Safety
/// `cancel` must come from `zl_cancel_new` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_fire(cancel: *const ZlCancel) -> i32 {
    guard(|| {
        castable::borrow(cancel)?.fired.send_replace(true);
        Ok(())
    })
}

/// Frees a cancel token. Null is ignored.
///
/// # Safety
/// `cancel` must come from `zl_cancel_new`, freed once.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_free(cancel: *mut ZlCancel) {
    guard_void(|| castable::free(cancel))
}

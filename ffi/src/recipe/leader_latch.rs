//! Curator's `LeaderLatch` (the core's): start, the leading state and
//! close; the wait is an `_async` entry point completed by a `ZlResultCallback`.

use zoolock::LeaderLatch;

use crate::args;
use crate::castable;
use crate::entry::{async_entry, new_entry};
use crate::recipe::{call_later, impl_recipe};
use crate::status::{guard, guard_void};
use crate::znode::Reply;

/// A candidate that stays in the election at its path while started.
pub struct ZlLeaderLatch {
    latch: LeaderLatch,
}

impl_recipe!(ZlLeaderLatch, latch: LeaderLatch, "leader latch");

new_entry! {
    /// A candidate in the election at `path` whose node holds `identifier`;
    /// nothing is sent before `zl_leader_latch_start`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_latch` valid for writes.
    fn zl_leader_latch_new(
        session, path, identifier: *const u8, identifier_len: u32
    ) -> out_latch: ZlLeaderLatch |session, path| {
        let identifier = args::bytes(identifier, identifier_len, "identifier")?.to_vec();
        Ok(ZlLeaderLatch { latch: LeaderLatch::new(session, path, identifier)? })
    }
}

/// Joins the election and returns: from now until
/// `zl_leader_latch_close_async` the candidate leads whenever it can, and
/// campaigns again after a term lost to a session expiry or a deletion of
/// its node. `ZL_INVALID_ARGUMENT` if started already, `ZL_CLOSED` after a close.
///
/// # Safety
/// `latch` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_leader_latch_start(latch: *const ZlLeaderLatch) -> i32 {
    guard(|| Ok(castable::borrow(latch)?.latch.start()?))
}

/// `*out_leads` 1 while the candidate leads (its term held; 0 while the
/// connection is suspended), and `*out_fencing_token` that term's token
/// (0 when it does not lead). Either out-pointer may be null.
///
/// # Safety
/// `latch` must be a live handle; non-null out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_leader_latch_leads(
    latch: *const ZlLeaderLatch,
    out_leads: *mut u8,
    out_fencing_token: *mut i64,
) -> i32 {
    guard(|| {
        let token = castable::borrow(latch)?.latch.fencing_token();
        if !out_leads.is_null() {
            out_leads.write(token.is_some() as u8);
        }
        if !out_fencing_token.is_null() {
            out_fencing_token.write(token.unwrap_or(0));
        }
        Ok(())
    })
}

async_entry! {
    /// Waits until the candidate leads, for `timeout_ms` (0 looks once, -1
    /// waits forever): one byte, 1 once it leads, 0 if the timeout ran out.
    /// `ZL_CLOSED` once the latch is closed.
    ///
    /// # Safety
    /// `latch` must be a live handle until the callback; `cancel` null or live;
    /// `user_data` valid until the callback.
    fn zl_leader_latch_wait_async(latch: *const ZlLeaderLatch, timeout_ms: i64) |completion| {
        let start = |latch: LeaderLatch| {
            let timeout = args::timeout(timeout_ms, "timeout_ms")?;
            Ok(async move { latch.wait(timeout).await })
        };
        call_later(latch, "wait to lead", start, Reply::yes_no, completion)
    }
}

async_entry! {
    /// Leaves the election: ends the term it leads or its candidacy, and
    /// completes once its node is deleted. Closing again does nothing.
    ///
    /// # Safety
    /// As for `zl_leader_latch_wait_async`.
    fn zl_leader_latch_close_async(latch: *const ZlLeaderLatch) |completion| {
        let start = |latch: LeaderLatch| {
            Ok(async move {
                latch.close().await;
                Ok(())
            })
        };
        call_later(latch, "close", start, |()| Reply::empty(), completion)
    }
}

/// Frees the handle; a latch started and not closed closes in the
/// background (its node deleted). Null is ignored.
///
/// # Safety
/// `latch` must come from `zl_leader_latch_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_leader_latch_free(latch: *mut ZlLeaderLatch) {
    guard_void(|| castable::free(latch))
}

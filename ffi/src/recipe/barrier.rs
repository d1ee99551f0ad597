//! kazoo's barriers (the core's `Barrier` and `DoubleBarrier`): every wait
//! is an `_async` entry point completed by a `ZlResultCallback`, whose data
//! is one byte for a yes/no answer (`remove`, `wait`) and empty otherwise.
//! A fired `cancel` drops the wait, and the core then removes what it left
//! half done (a member's node).

use zoolock::{Barrier, DoubleBarrier};

use crate::args;
use crate::castable;
use crate::entry::{async_entry, new_entry};
use crate::recipe::{call_later, impl_recipe};
use crate::status::{guard, guard_void};
use crate::znode::Reply;

/// A barrier: up while the node at its path exists (kazoo's `Barrier`).
pub struct ZlBarrier {
    barrier: Barrier,
}

impl_recipe!(ZlBarrier, barrier: Barrier, "barrier");

/// A member of a double barrier (kazoo's `DoubleBarrier`).
pub struct ZlDoubleBarrier {
    barrier: DoubleBarrier,
}

impl_recipe!(ZlDoubleBarrier, barrier: DoubleBarrier, "double barrier");

new_entry! {
    /// The barrier at `path`; nothing is sent before a call.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; `out_barrier` valid for writes.
    fn zl_barrier_new(session, path) -> out_barrier: ZlBarrier |session, path| {
        Ok(ZlBarrier { barrier: Barrier::new(session, path)? })
    }
}

async_entry! {
    /// Puts the barrier up (creates its node if missing); `callback` gets empty data.
    ///
    /// # Safety
    /// `barrier` must be a live handle until the callback; `cancel` null or
    /// live; `user_data` valid until the callback.
    fn zl_barrier_create_async(barrier: *const ZlBarrier) |completion| {
        let start = |barrier: Barrier| Ok(async move { barrier.create().await });
        call_later(barrier, "create", start, |()| Reply::empty(), completion)
    }
}

async_entry! {
    /// Takes the barrier down; `callback`'s one byte is 1 if its node was there.
    ///
    /// # Safety
    /// As for `zl_barrier_create_async`.
    fn zl_barrier_remove_async(barrier: *const ZlBarrier) |completion| {
        let start = |barrier: Barrier| Ok(async move { barrier.remove().await });
        call_later(barrier, "remove", start, Reply::yes_no, completion)
    }
}

async_entry! {
    /// Waits until the barrier is down, for `timeout_ms` (0 looks once, -1
    /// waits forever); `callback`'s one byte is 1 if it is down, 0 if the
    /// timeout ran out. Goes on across a lost connection and a session expiry.
    ///
    /// # Safety
    /// As for `zl_barrier_create_async`.
    fn zl_barrier_wait_async(barrier: *const ZlBarrier, timeout_ms: i64) |completion| {
        let start = |barrier: Barrier| {
            let timeout = args::timeout(timeout_ms, "timeout_ms")?;
            Ok(async move { barrier.wait(timeout).await })
        };
        call_later(barrier, "wait for", start, Reply::yes_no, completion)
    }
}

/// Frees the barrier handle (the barrier's node stays). Null is ignored.
///
/// # Safety
/// `barrier` must come from `zl_barrier_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_barrier_free(barrier: *mut ZlBarrier) {
    guard_void(|| castable::free(barrier))
}

new_entry! {
    /// A member of the double barrier at `path` that waits for `num_clients`
    /// members (at least 1); `identifier` is its node's data. Nothing is sent
    /// before `zl_double_barrier_enter_async`.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_barrier` valid for writes.
    fn zl_double_barrier_new(
        session, path, num_clients: u32, identifier: *const u8, identifier_len: u32
    ) -> out_barrier: ZlDoubleBarrier |session, path| {
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        let barrier = DoubleBarrier::new(session, path, num_clients, identifier.to_vec())?;
        Ok(ZlDoubleBarrier { barrier })
    }
}

async_entry! {
    /// Enters: `callback` (empty data) once `num_clients` members are in. A
    /// failure or a fired `cancel` leaves no node of this member.
    ///
    /// # Safety
    /// `barrier` must be a live handle until the callback; `cancel` null or
    /// live; `user_data` valid until the callback.
    fn zl_double_barrier_enter_async(barrier: *const ZlDoubleBarrier) |completion| {
        let start = |barrier: DoubleBarrier| Ok(async move { barrier.enter().await });
        call_later(barrier, "enter", start, |()| Reply::empty(), completion)
    }
}

async_entry! {
    /// Leaves: `callback` (empty data) once every member has left. This
    /// member's node is deleted even if the wait is cancelled.
    ///
    /// # Safety
    /// As for `zl_double_barrier_enter_async`.
    fn zl_double_barrier_leave_async(barrier: *const ZlDoubleBarrier) |completion| {
        let start = |barrier: DoubleBarrier| Ok(async move { barrier.leave().await });
        call_later(barrier, "leave", start, |()| Reply::empty(), completion)
    }
}

/// `*out_participating` 1 while this member has entered and not left.
///
/// # Safety
/// `barrier` must be a live handle; `out_participating` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_double_barrier_participating(
    barrier: *const ZlDoubleBarrier,
    out_participating: *mut u8,
) -> i32 {
    guard(|| {
        let participating = castable::borrow(barrier)?.barrier.participating();
        args::put(out_participating, participating as u8, "out_participating")
    })
}

/// This member's node (full path), as UTF-8 to free with `zl_bytes_free`.
///
/// # Safety
/// `barrier` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_double_barrier_node(
    barrier: *const ZlDoubleBarrier,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let node = castable::borrow(barrier)?.barrier.create_path();
        args::give(node.into_bytes(), out_ptr, out_len, "node")
    })
}

/// Frees the member; a wait in flight must have called back first. A
/// member that entered and did not leave keeps its node until its session
/// ends. Null is ignored.
///
/// # Safety
/// `barrier` must come from `zl_double_barrier_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_double_barrier_free(barrier: *mut ZlDoubleBarrier) {
    guard_void(|| castable::free(barrier))
}

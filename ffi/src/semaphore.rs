//! Semaphore handles: kazoo's `Semaphore(path, identifier, max_leases)`.

use std::ffi::c_void;

use zoolock::{runtime, Holder, Owner, Semaphore};

use crate::args;
use crate::listener::ZlStateCallback;
use crate::recipe::{self, Handle, ZlAcquireCallback, ZlCancel};
use crate::session::ZlSession;
use crate::status::{guard, guard_void};

/// One semaphore handle: holds at most one lease at a time.
pub struct ZlSemaphore(Handle<Semaphore>);

/// Creates a semaphore handle on `path` with `max_leases` leases (every
/// client of the path must agree on it: else `ZL_INCONSISTENT_LEASES` at
/// acquire). `identifier` is the lease's node data.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; `out_semaphore` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_new(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    identifier: *const u8,
    identifier_len: u32,
    max_leases: u32,
    out_semaphore: *mut *mut ZlSemaphore,
) -> i32 {
    guard(|| {
        let session = &args::handle(session, "session")?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        args::need(out_semaphore, "out_semaphore")?;
        let semaphore = Semaphore::new(session, path, identifier.to_vec(), max_leases)?;
        args::put(out_semaphore, Box::into_raw(Box::new(ZlSemaphore(Handle::new(semaphore)))), "out_semaphore")
    })
}

/// Takes a lease, blocking: arguments and outcome as for `zl_lock_acquire`.
///
/// # Safety
/// `semaphore` must be a live handle; `cancel` null or live; `out_acquired` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_acquire(
    semaphore: *const ZlSemaphore,
    timeout_ms: i64,
    lease_ms: i64,
    cancel: *const ZlCancel,
    out_acquired: *mut u8,
) -> i32 {
    guard(|| {
        let handle = &args::handle(semaphore, "semaphore")?.0;
        args::need(out_acquired, "out_acquired")?;
        let acquired = handle.acquire_blocking(recipe::options(timeout_ms, lease_ms)?, cancel)?;
        args::put(out_acquired, acquired as u8, "out_acquired")
    })
}

/// Takes a lease with a completion callback, as `zl_lock_acquire_async`.
///
/// # Safety
/// As for `zl_lock_acquire_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_acquire_async(
    semaphore: *const ZlSemaphore,
    timeout_ms: i64,
    lease_ms: i64,
    cancel: *const ZlCancel,
    callback: ZlAcquireCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let handle = &args::handle(semaphore, "semaphore")?.0;
        handle.acquire_async(recipe::options(timeout_ms, lease_ms)?, cancel, callback, user_data)
    })
}

/// Gives the lease back: `*out_released` 1 if one was held (may be null).
///
/// # Safety
/// `semaphore` must be a live handle; `out_released` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_release(semaphore: *const ZlSemaphore, out_released: *mut u8) -> i32 {
    guard(|| {
        let released = args::handle(semaphore, "semaphore")?.0.release_blocking(Owner::HANDLE)?;
        if !out_released.is_null() {
            out_released.write(released as u8);
        }
        Ok(())
    })
}

/// Cancels every acquire pending on this handle now (`ZL_CANCELLED`).
///
/// # Safety
/// `semaphore` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_cancel(semaphore: *const ZlSemaphore) -> i32 {
    guard(|| {
        args::handle(semaphore, "semaphore")?.0.recipe.cancel();
        Ok(())
    })
}

/// The handle's state, a `ZL_LOCK_*` code.
///
/// # Safety
/// `semaphore` must be a live handle; `out_state` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_state(semaphore: *const ZlSemaphore, out_state: *mut i32) -> i32 {
    guard(|| {
        let state = args::handle(semaphore, "semaphore")?.0.recipe.state();
        args::put(out_state, recipe::state_code(state), "out_state")
    })
}

/// The identifiers of the current lease holders, encoded as for
/// `zl_lock_contenders`, to free with `zl_bytes_free`.
///
/// # Safety
/// `semaphore` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_lease_holders(
    semaphore: *const ZlSemaphore,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let semaphore = &args::handle(semaphore, "semaphore")?.0.recipe;
        args::need(out_ptr, "out_ptr")?;
        let holders = runtime::block_on(semaphore.queue())?;
        args::give(args::encode_list(&holders), out_ptr, out_len, "lease holders")
    })
}

/// Sets the state callback, as `zl_lock_set_listener`.
///
/// # Safety
/// `semaphore` must be a live handle; `user_data` must stay valid for the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_set_listener(
    semaphore: *const ZlSemaphore,
    callback: Option<ZlStateCallback>,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        args::handle(semaphore, "semaphore")?.0.set_listener(callback, user_data);
        Ok(())
    })
}

/// Frees the handle; a lease it still holds is given back in the background.
///
/// # Safety
/// `semaphore` must come from `zl_semaphore_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_semaphore_free(semaphore: *mut ZlSemaphore) {
    guard_void(|| {
        if !semaphore.is_null() {
            drop(Box::from_raw(semaphore));
        }
    })
}

//! Lock handles: kazoo's `Lock`, `ReadLock` and `WriteLock` (the read/write
//! lock is a pair of handles of kinds READ and WRITE on one path).

use std::ffi::c_void;

use zoolock::{runtime, Holder, Kind, Lock, LockConfig, Owner, Scheme};

use crate::args;
use crate::listener::ZlStateCallback;
use crate::recipe::{self, Handle, ZlAcquireCallback, ZlCancel};
use crate::session::ZlSession;
use crate::status::{guard, guard_void, Failure};

/// An exclusive lock (kazoo's `Lock`, Curator's `InterProcessMutex`).
pub const ZL_KIND_MUTEX: i32 = 0;
/// The read side of a read/write lock: shared with other readers.
pub const ZL_KIND_READ: i32 = 1;
/// The write side of a read/write lock: excludes readers and writers.
pub const ZL_KIND_WRITE: i32 = 2;
/// kazoo's node names (`<uuid hex>__lock__<seq>`).
pub const ZL_SCHEME_KAZOO: i32 = 0;
/// Curator's node names (`_c_<uuid>-lock-<seq>`).
pub const ZL_SCHEME_CURATOR: i32 = 1;

/// One lock handle: one acquisition at a time (a second acquire waits for the
/// first hold's release, unless the lock is reentrant and the same owner
/// acquires). Make one handle per concurrent holder.
pub struct ZlLock(Handle<Lock>);

/// Creates a lock handle on `path`; nothing is sent to the server yet.
/// `identifier` is the node data others see in `zl_lock_contenders`.
/// `reentrant` 1 makes the lock reentrant per owner (Curator's
/// `InterProcessMutex`): an acquire by the `owner` that holds counts up and
/// succeeds at once, each `zl_lock_release` by it counts down, the last one
/// deletes the node; another owner's acquire waits, its release fails with
/// `ZL_NOT_OWNER`. 0: kazoo's lock, whose owners are all one.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; `out_lock` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_new(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    kind: i32,
    scheme: i32,
    identifier: *const u8,
    identifier_len: u32,
    reentrant: u8,
    out_lock: *mut *mut ZlLock,
) -> i32 {
    guard(|| {
        let session = &args::handle(session, "session")?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        args::need(out_lock, "out_lock")?;
        let kind = match kind {
            ZL_KIND_MUTEX => Kind::Mutex,
            ZL_KIND_READ => Kind::Read,
            ZL_KIND_WRITE => Kind::Write,
            other => return Err(Failure::invalid(format!("unknown lock kind {other}"))),
        };
        let scheme = match scheme {
            ZL_SCHEME_KAZOO => Scheme::Kazoo,
            ZL_SCHEME_CURATOR => Scheme::Curator,
            other => return Err(Failure::invalid(format!("unknown naming scheme {other}"))),
        };
        let reentrant = match reentrant {
            0 | 1 => reentrant == 1,
            other => return Err(Failure::invalid(format!("reentrant must be 0 or 1, got {other}"))),
        };
        let config = LockConfig { identifier: identifier.to_vec(), scheme, reentrant, ..LockConfig::default() };
        let lock = Lock::new(session, path, kind, config)?;
        args::put(out_lock, Box::into_raw(Box::new(ZlLock(Handle::new(lock)))), "out_lock")
    })
}

/// Acquires, blocking the calling thread: `*out_acquired` is 1 once held, 0
/// when the lock stayed taken for `timeout_ms` (0 tries once, -1 waits
/// forever). `lease_ms` > 0 releases the hold by itself after that long; -1
/// for none. `cancel` (may be null) cancels the wait from another thread:
/// `ZL_CANCELLED`. A timeout, cancel or error leaves no node behind. `owner`
/// names who acquires, for a reentrant lock (a thread id; 0 is the handle).
///
/// # Safety
/// `lock` must be a live handle; `cancel` null or live; `out_acquired` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_acquire(
    lock: *const ZlLock,
    timeout_ms: i64,
    lease_ms: i64,
    owner: u64,
    cancel: *const ZlCancel,
    out_acquired: *mut u8,
) -> i32 {
    guard(|| {
        let handle = &args::handle(lock, "lock")?.0;
        args::need(out_acquired, "out_acquired")?;
        let options = recipe::options(timeout_ms, lease_ms)?.owner(Owner(owner));
        let acquired = handle.acquire_blocking(options, cancel)?;
        args::put(out_acquired, acquired as u8, "out_acquired")
    })
}

/// Starts an acquire and returns at once; `callback` is called exactly once
/// with the outcome, on one of zoolock's threads, if and only if this returns
/// `ZL_OK`. Arguments as for `zl_lock_acquire`. The handle and `cancel` must
/// stay alive until the callback has run.
///
/// # Safety
/// As for `zl_lock_acquire`; `user_data` must stay valid until the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_acquire_async(
    lock: *const ZlLock,
    timeout_ms: i64,
    lease_ms: i64,
    owner: u64,
    cancel: *const ZlCancel,
    callback: ZlAcquireCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let handle = &args::handle(lock, "lock")?.0;
        let options = recipe::options(timeout_ms, lease_ms)?.owner(Owner(owner));
        handle.acquire_async(options, cancel, callback, user_data)
    })
}

/// Releases the hold for `owner`: `*out_released` is 1 if this handle held
/// the lock, 0 if not. A release during a connection loss goes on in the
/// background. On a reentrant lock it counts down (the node goes at the
/// owner's last release); another owner's release is `ZL_NOT_OWNER`.
///
/// # Safety
/// `lock` must be a live handle; `out_released` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_release(lock: *const ZlLock, owner: u64, out_released: *mut u8) -> i32 {
    guard(|| {
        let released = args::handle(lock, "lock")?.0.release_blocking(Owner(owner))?;
        if !out_released.is_null() {
            out_released.write(released as u8);
        }
        Ok(())
    })
}

/// Cancels every acquire pending on this handle now (`ZL_CANCELLED`).
///
/// # Safety
/// `lock` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_cancel(lock: *const ZlLock) -> i32 {
    guard(|| {
        args::handle(lock, "lock")?.0.recipe.cancel();
        Ok(())
    })
}

/// The handle's state, a `ZL_LOCK_*` code.
///
/// # Safety
/// `lock` must be a live handle; `out_state` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_state(lock: *const ZlLock, out_state: *mut i32) -> i32 {
    guard(|| {
        let state = args::handle(lock, "lock")?.0.recipe.state();
        args::put(out_state, recipe::state_code(state), "out_state")
    })
}

/// The fencing token of the current hold (the czxid of its node, strictly
/// increasing from one holder of the path to the next); `*out_held` is 0 and
/// the token 0 when the handle holds nothing.
///
/// # Safety
/// `lock` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_fencing_token(lock: *const ZlLock, out_token: *mut i64, out_held: *mut u8) -> i32 {
    guard(|| {
        let token = args::handle(lock, "lock")?.0.recipe.fencing_token();
        args::put(out_token, token.unwrap_or(0), "out_token")?;
        args::put(out_held, token.is_some() as u8, "out_held")
    })
}

/// The full path of the node holding the lock for this handle (empty when
/// not held), as UTF-8 to free with `zl_bytes_free`.
///
/// # Safety
/// `lock` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_node(lock: *const ZlLock, out_ptr: *mut *mut u8, out_len: *mut u32) -> i32 {
    guard(|| {
        let node = args::handle(lock, "lock")?.0.recipe.node().unwrap_or_default();
        args::give(node.into_bytes(), out_ptr, out_len, "node")
    })
}

/// The identifiers of everyone queued on the path, holders first, as a list
/// (each a little-endian u32 length, then UTF-8) to free with `zl_bytes_free`.
///
/// # Safety
/// `lock` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_contenders(lock: *const ZlLock, out_ptr: *mut *mut u8, out_len: *mut u32) -> i32 {
    guard(|| {
        let lock = &args::handle(lock, "lock")?.0.recipe;
        args::need(out_ptr, "out_ptr")?;
        let contenders = runtime::block_on(lock.queue())?;
        args::give(args::encode_list(&contenders), out_ptr, out_len, "contenders")
    })
}

/// Sets the callback told of each state change of the handle (`ZL_LOCK_*`:
/// held, suspended, lost…), replacing any earlier one; null removes it. When
/// this returns, the earlier callback is not running and will not run again.
///
/// # Safety
/// `lock` must be a live handle; `user_data` must stay valid for the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_set_listener(lock: *const ZlLock, callback: Option<ZlStateCallback>, user_data: *mut c_void) -> i32 {
    guard(|| {
        args::handle(lock, "lock")?.0.set_listener(callback, user_data);
        Ok(())
    })
}

/// Frees the handle; a lock it still holds is released in the background.
/// Its callback is not running and will not run once this returns. Null is ignored.
///
/// # Safety
/// `lock` must come from `zl_lock_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_free(lock: *mut ZlLock) {
    guard_void(|| {
        if !lock.is_null() {
            drop(Box::from_raw(lock));
        }
    })
}

//! Holders: the core's `Holder` (a lock, a multi-lock or a semaphore) as one
//! opaque type, `ZlHolder`, with one set of entry points. `zl_lock_new`,
//! `zl_multi_lock_new` and `zl_semaphore_new` make one; `zl_holder_*` acquire (blocking or with a
//! completion callback), release, cancel, report state and queue, and free
//! it; `zl_lock_*` queries only a lock answers. Every decision stays in the
//! core; this only changes the style.

use std::ffi::c_void;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use zoolock::{runtime, Acquire, Holder, Kind, Lock, LockConfig, MultiLock, Owner, Scheme, Semaphore};

use crate::args::{self, UserData};
use crate::cancel::{cancellable, Stops, ZlCancel};
use crate::castable::{self, Castable};
use crate::dispatch;
use crate::entry::new_entry;
use crate::listener::Listener;
use crate::session::ZlSession;
use crate::status::{guard, guard_void, Failure, FfiResult, ZL_OK};

/// Called once when an asynchronous acquire ends: `status` is `ZL_OK` with
/// `acquired` 1 (held) or 0 (taken, or the timeout ran out), or an error code
/// with its UTF-8 message, valid only during the call. Runs on zoolock's
/// callback thread, which runs every callback in turn: return quickly.
pub type ZlAcquireCallback =
    extern "C" fn(user_data: *mut c_void, status: i32, acquired: u8, message: *const u8, message_len: u32);

/// One holder (a lock of any kind, or a semaphore): one acquisition at a
/// time (a second acquire waits for the first hold's release, unless the lock
/// is reentrant and the same owner acquires; a semaphore that holds succeeds
/// at once). Make one holder per concurrent acquisition.
pub struct ZlHolder {
    pub(crate) holder: Arc<dyn Holder>,
    /// The same handle as a lock, for the lock-only queries; `None` for a semaphore or a multi-lock.
    lock: Option<Lock>,
    listener: Listener,
}

impl Castable for ZlHolder {
    const NAME: &'static str = "holder";
}

impl ZlHolder {
    fn new(holder: Arc<dyn Holder>, lock: Option<Lock>) -> ZlHolder {
        ZlHolder { holder, lock, listener: Listener::default() }
    }

    /// The lock, or `ZL_INVALID_ARGUMENT` for a lock-only query on another holder.
    fn lock(&self, query: &str) -> FfiResult<&Lock> {
        self.lock.as_ref().ok_or_else(|| {
            Failure::invalid(format!("{query}: the holder is not a lock of one path (a semaphore or a multi-lock)"))
        })
    }
}

impl Drop for ZlHolder {
    /// Stops the callback before the holder goes; the core releases a held
    /// lock in the background when its last handle is dropped.
    fn drop(&mut self) {
        if let Some(id) = self.listener.take_registration() {
            self.holder.remove_listener(id);
        }
        self.listener.clear();
    }
}

/// Builds the core's acquire options from the C arguments.
pub(crate) fn options(timeout_ms: i64, lease_ms: i64, owner: u64) -> FfiResult<Acquire> {
    let timeout = args::timeout(timeout_ms, "timeout_ms")?;
    let lease = match lease_ms {
        -1 => None,
        ms if ms <= 0 => return Err(Failure::invalid(format!("lease_ms must be -1 (none) or positive, got {ms}"))),
        ms => Some(Duration::from_millis(ms as u64)),
    };
    Ok(Acquire { timeout, lease, owner: Owner(owner), ..Acquire::default() })
}

/// The core's acquire, cancelled through the core when `cancel` fires or
/// `zl_shutdown` is called.
fn acquire(holder: Arc<dyn Holder>, options: Acquire, cancel: Stops) -> impl Future<Output = FfiResult<bool>> {
    // An `async move` block, not an `async fn`: that would keep its
    // arguments twice for as long as the acquire waits.
    async move {
        let stop = holder.clone();
        cancellable(holder.acquire(options), cancel, move || {
            stop.cancel();
            None
        })
        .await
    }
}

/// Hands an acquire's outcome to its callback.
pub(crate) fn acquired(callback: ZlAcquireCallback, user_data: UserData) -> impl FnOnce(FfiResult<bool>) + Send {
    move |outcome| {
        let data = user_data.get();
        match outcome {
            Ok(acquired) => callback(data, ZL_OK, acquired as u8, std::ptr::null(), 0),
            Err(failure) => {
                let message = failure.message.as_bytes();
                callback(data, failure.code, 0, message.as_ptr(), message.len() as u32);
            }
        }
    }
}

/// `zl_lock_new` option: reentrant per owner.
pub const ZL_LOCK_REENTRANT: u32 = 1;
/// `zl_lock_new` option: wait by listing, not on the session's mirror of the path.
pub const ZL_LOCK_LISTING: u32 = 2;

/// Creates a lock holder on `path` (kazoo's `Lock`, `ReadLock` or
/// `WriteLock` by `kind`: a read/write lock is a pair of holders of kinds
/// READ and WRITE on one path); nothing is sent to the server yet.
/// `identifier` is the node data others see in `zl_holder_queue`.
/// `scheme` (`ZL_SCHEME_KAZOO`, `_CURATOR`, `_DISTRIBUTEDLOCK`: mutexes
/// only) names the nodes as that library does (docs/interop.md).
/// `options` is 0 or a sum of flags. `ZL_LOCK_REENTRANT` makes the lock
/// reentrant per owner (Curator's `InterProcessMutex`): an acquire by the
/// `owner` that holds counts up and succeeds at once, each
/// `zl_holder_release` by it counts down, the last one deletes the node;
/// another owner's acquire waits, its release fails with `ZL_NOT_OWNER`.
/// Without it: kazoo's lock, whose owners are all one. `ZL_LOCK_LISTING`
/// always waits by listing the children and watching the predecessor
/// (kazoo's way); without it the lock waits on the session's mirror of the
/// path while its queue is short and lists while it is long (the adaptive
/// design, docs/benchmarks.md).
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; `out_holder` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_new(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    kind: i32,
    scheme: i32,
    identifier: *const u8,
    identifier_len: u32,
    options: u32,
    out_holder: *mut *mut ZlHolder,
) -> i32 {
    guard(|| {
        if options & !(ZL_LOCK_REENTRANT | ZL_LOCK_LISTING) != 0 {
            return Err(Failure::invalid(format!("unknown lock options {options:#x}")));
        }
        let session = &castable::borrow(session)?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        args::need(out_holder, "out_holder")?;
        let kind = Kind::from_code(kind).ok_or_else(|| Failure::invalid(format!("unknown lock kind {kind}")))?;
        let scheme =
            Scheme::from_code(scheme).ok_or_else(|| Failure::invalid(format!("unknown naming scheme {scheme}")))?;
        let config = LockConfig {
            identifier: identifier.to_vec(),
            scheme,
            reentrant: options & ZL_LOCK_REENTRANT != 0,
            mirror: options & ZL_LOCK_LISTING == 0,
            ..LockConfig::default()
        };
        let lock = Lock::new(session, path, kind, config)?;
        castable::give(ZlHolder::new(Arc::new(lock.clone()), Some(lock)), out_holder, "out_holder")
    })
}

new_entry! {
    /// Creates a semaphore holder on `path` with `max_leases` leases (kazoo's
    /// `Semaphore`; every client of the path must agree on the number: else
    /// `ZL_INCONSISTENT_LEASES` at acquire). `identifier` is the lease's node
    /// data. A semaphore holder holds at most one lease.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_holder` valid for writes.
    fn zl_semaphore_new(
        session, path, identifier: *const u8, identifier_len: u32, max_leases: u32
    ) -> out_holder: ZlHolder |session, path| {
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        let semaphore = Semaphore::new(session, path, identifier.to_vec(), max_leases)?;
        Ok(ZlHolder::new(Arc::new(semaphore), None))
    }
}

/// Creates a multi-lock holder over the paths in `paths` (a list: each a
/// little-endian u32 byte length, then UTF-8): all of them or none, each a
/// kazoo `Lock` whose node holds `identifier`, taken in one order (sorted by
/// bytes, each path once) so that two multi-locks never deadlock. Acquire,
/// release, cancel and listen with `zl_holder_*`; each path's fencing token
/// with `zl_holder_fencing_tokens`. Nothing is sent to the server yet.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; `out_holder` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_multi_lock_new(
    session: *const ZlSession,
    paths: *const u8,
    paths_len: u32,
    identifier: *const u8,
    identifier_len: u32,
    out_holder: *mut *mut ZlHolder,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        // A path that is not UTF-8 is a bad path (ZL_INVALID_PATH), as for `zl_lock_new`.
        let paths = args::decode_byte_list(args::bytes(paths, paths_len, "paths")?, "paths")?
            .into_iter()
            .map(zoolock::path_from_utf8)
            .collect::<zoolock::Result<Vec<_>>>()?;
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        args::need(out_holder, "out_holder")?;
        let multi = MultiLock::new(session, paths, identifier.to_vec())?;
        castable::give(ZlHolder::new(Arc::new(multi), None), out_holder, "out_holder")
    })
}

/// Acquires, blocking the calling thread: `*out_acquired` is 1 once held, 0
/// when the lock (or every lease) stayed taken for `timeout_ms` (0 tries
/// once, -1 waits forever). `lease_ms` > 0 releases the hold by itself after
/// that long; -1 for none. `cancel` (may be null) cancels the wait from
/// another thread: `ZL_CANCELLED`. A timeout, cancel or error leaves no node
/// behind. `owner` names who acquires a reentrant lock (a thread id; 0 is
/// the holder itself); other holders ignore it.
///
/// # Safety
/// `holder` must be a live handle; `cancel` null or live; `out_acquired` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_acquire(
    holder: *const ZlHolder,
    timeout_ms: i64,
    lease_ms: i64,
    owner: u64,
    cancel: *const ZlCancel,
    out_acquired: *mut u8,
) -> i32 {
    guard(|| {
        let holder = castable::borrow(holder)?;
        args::need(out_acquired, "out_acquired")?;
        let options = options(timeout_ms, lease_ms, owner)?;
        let cancel = Stops::new(cancel.as_ref());
        let acquired = runtime::wait(acquire(holder.holder.clone(), options, cancel))?;
        args::put(out_acquired, acquired as u8, "out_acquired")
    })
}

/// Starts an acquire and returns at once; `callback` is called exactly once
/// with the outcome, on one of zoolock's threads, if and only if this returns
/// `ZL_OK`. Arguments as for `zl_holder_acquire`. The holder and `cancel`
/// must stay alive until the callback has run.
///
/// # Safety
/// As for `zl_holder_acquire`; `user_data` must stay valid until the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_acquire_async(
    holder: *const ZlHolder,
    timeout_ms: i64,
    lease_ms: i64,
    owner: u64,
    cancel: *const ZlCancel,
    callback: ZlAcquireCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let holder = castable::borrow(holder)?;
        let options = options(timeout_ms, lease_ms, owner)?;
        // In a forked child the runtime's threads are gone: a spawned task would never run.
        runtime::check_process()?;
        let cancel = Stops::new(cancel.as_ref());
        dispatch::complete_later(
            acquire(holder.holder.clone(), options, cancel),
            acquired(callback, UserData(user_data)),
        );
        Ok(())
    })
}

/// Releases the hold for `owner`: `*out_released` (may be null) is 1 if this
/// holder held, 0 if not. A release during a connection loss goes on in the
/// background. On a reentrant lock it counts down (the node goes at the
/// owner's last release); another owner's release is `ZL_NOT_OWNER`. Other
/// holders let go whoever releases.
///
/// # Safety
/// `holder` must be a live handle; `out_released` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_release(holder: *const ZlHolder, owner: u64, out_released: *mut u8) -> i32 {
    guard(|| {
        let holder = &castable::borrow(holder)?.holder;
        let released = runtime::wait(holder.release_by(Owner(owner)))?;
        if !out_released.is_null() {
            out_released.write(released as u8);
        }
        Ok(())
    })
}

/// Cancels every acquire pending on this holder now (`ZL_CANCELLED`).
///
/// # Safety
/// `holder` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_cancel(holder: *const ZlHolder) -> i32 {
    guard(|| {
        castable::borrow(holder)?.holder.cancel();
        Ok(())
    })
}

/// The holder's state, a `ZL_LOCK_*` code.
///
/// # Safety
/// `holder` must be a live handle; `out_state` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_state(holder: *const ZlHolder, out_state: *mut i32) -> i32 {
    guard(|| {
        let state = castable::borrow(holder)?.holder.state();
        args::put(out_state, state.code(), "out_state")
    })
}

/// The identifiers of those queued on the path, holders first: a lock's
/// contenders, a semaphore's lease holders. A list (each a little-endian u32
/// length, then UTF-8) to free with `zl_bytes_free`.
///
/// # Safety
/// `holder` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_queue(holder: *const ZlHolder, out_ptr: *mut *mut u8, out_len: *mut u32) -> i32 {
    guard(|| {
        let holder = &castable::borrow(holder)?.holder;
        args::need(out_ptr, "out_ptr")?;
        let queue = runtime::wait(holder.queue())?;
        args::give(args::encode_list(&queue), out_ptr, out_len, "queue")
    })
}

/// Sets the callback told of each state change of the holder (`ZL_LOCK_*`:
/// held, suspended, lost…), replacing any earlier one; null removes it. When
/// this returns, the earlier callback is not running and will not run again.
/// No state callback is called after `zl_shutdown` (the process is exiting;
/// `zl_holder_state` still answers).
///
/// # Safety
/// `holder` must be a live handle; `user_data` must stay valid for the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_set_listener(
    holder: *const ZlHolder,
    callback: Option<extern "C" fn(user_data: *mut c_void, state: i32)>,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let this = castable::borrow(holder)?;
        let holder = &this.holder;
        this.listener.set(
            callback,
            user_data,
            |sink| holder.add_listener(Box::new(move |state| sink(state.code()))),
            |id| {
                holder.remove_listener(id);
            },
        );
        Ok(())
    })
}

/// Frees the holder; a lock or lease it still holds is released in the
/// background. Its callback is not running and will not run once this
/// returns. Null is ignored.
///
/// # Safety
/// `holder` must come from `zl_lock_new` or `zl_semaphore_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_free(holder: *mut ZlHolder) {
    guard_void(|| castable::free(holder))
}

/// The lock path and fencing token of each node the holder holds with, in
/// the order taken (one for a lock, one per path for a multi-lock; none
/// when it holds nothing), as a record to free with `zl_bytes_free`: for
/// each, the path (a little-endian u32 length, then UTF-8), then the token
/// (a little-endian i64).
///
/// # Safety
/// `holder` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_fencing_tokens(
    holder: *const ZlHolder,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let tokens = castable::borrow(holder)?.holder.fencing_tokens();
        let mut record = args::Record::default();
        for (path, token) in &tokens {
            record.text(path).i64(*token);
        }
        args::give(record.0, out_ptr, out_len, "fencing tokens")
    })
}

/// The fencing token of a lock holder's current hold (the czxid of its
/// node, strictly increasing from one holder of the path to the next);
/// `*out_held` is 0 and the token 0 when it holds nothing. On a semaphore
/// holder: `ZL_INVALID_ARGUMENT`.
///
/// # Safety
/// `holder` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_fencing_token(holder: *const ZlHolder, out_token: *mut i64, out_held: *mut u8) -> i32 {
    guard(|| {
        let token = castable::borrow(holder)?.lock("zl_lock_fencing_token")?.fencing_token();
        args::put(out_token, token.unwrap_or(0), "out_token")?;
        args::put(out_held, token.is_some() as u8, "out_held")
    })
}

/// The full path of the node holding the lock for this lock holder (empty
/// when not held), as UTF-8 to free with `zl_bytes_free`. On a semaphore
/// holder: `ZL_INVALID_ARGUMENT`.
///
/// # Safety
/// `holder` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lock_node(holder: *const ZlHolder, out_ptr: *mut *mut u8, out_len: *mut u32) -> i32 {
    guard(|| {
        let node = castable::borrow(holder)?.lock("zl_lock_node")?.node().unwrap_or_default();
        args::give(node.into_bytes(), out_ptr, out_len, "node")
    })
}

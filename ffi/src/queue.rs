//! kazoo's queues (the core's `Queue` and `LockingQueue`): each call is an
//! `_async` entry point completed by a `ZlResultCallback`. A taken value
//! comes as data `1` followed by the value, or `0` alone when there was none
//! (an empty queue, a timeout); a yes/no answer as one byte.

use std::ffi::c_void;
use std::future::Future;

use zoolock::{LockingQueue, Queue};

use crate::args::{self, UserData};
use crate::cancel::ZlCancel;
use crate::castable::{self, Castable};
use crate::session::ZlSession;
use crate::status::{guard, guard_void, FfiResult};
use crate::znode::{reply_later, Reply, ZlResultCallback};

/// A producer and consumer of kazoo's `Queue`.
pub struct ZlQueue {
    queue: Queue,
}

impl Castable for ZlQueue {
    const NAME: &'static str = "queue";
}

/// A consumer (and producer) of kazoo's `LockingQueue`.
pub struct ZlLockingQueue {
    queue: LockingQueue,
}

impl Castable for ZlLockingQueue {
    const NAME: &'static str = "locking queue";
}

fn taken(value: Option<Vec<u8>>) -> Reply {
    Reply::data(match value {
        Some(value) => [&[1u8][..], &value].concat(),
        None => vec![0],
    })
}

/// A put of either queue: `put(value)` is the core's put with the priority.
unsafe fn put_later<F>(
    what: String,
    value: *const u8,
    value_len: u32,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
    put: impl FnOnce(Vec<u8>) -> F,
) -> FfiResult
where
    F: Future<Output = zoolock::Result<String>> + Send + 'static,
{
    let value = args::bytes(value, value_len, "value")?.to_vec();
    let cancel = cancel.as_ref().map(ZlCancel::subscribe);
    reply_later(put(value), what, cancel, callback, UserData(user_data), |entry| Reply::data(entry.into_bytes()))
}

/// The queue at `path`; nothing is sent before a call.
///
/// # Safety
/// `session` must be a live handle; the byte range valid; `out_queue` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_new(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out_queue: *mut *mut ZlQueue,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        args::need(out_queue, "out_queue")?;
        castable::give(ZlQueue { queue: Queue::new(session, path)? }, out_queue, "out_queue")
    })
}

/// Adds `value` with `priority` (0 to 999, lower first); `callback`'s data
/// is the entry's path. Not retried: after `ZL_CONNECTION_LOSS` the entry may be in.
///
/// # Safety
/// `queue` must be a live handle until the callback; the byte range valid;
/// `cancel` null or live; `user_data` valid until the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_put_async(
    queue: *const ZlQueue,
    value: *const u8,
    value_len: u32,
    priority: u32,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let queue = castable::borrow(queue)?.queue.clone();
        let what = format!("put into queue {}", queue.path());
        put_later(what, value, value_len, cancel, callback, user_data, |value| async move {
            queue.put(&value, priority).await
        })
    })
}

/// Takes the first entry, removing it: data `1` + its value, or `0` if the
/// queue is empty (it does not wait).
///
/// # Safety
/// As for `zl_queue_put_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_get_async(
    queue: *const ZlQueue,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let queue = castable::borrow(queue)?.queue.clone();
        let cancel = cancel.as_ref().map(ZlCancel::subscribe);
        let what = format!("get from queue {}", queue.path());
        let work = async move { queue.get().await };
        reply_later(work, what, cancel, callback, UserData(user_data), taken)
    })
}

/// How many entries the queue has (every child of its path, as kazoo counts).
///
/// # Safety
/// `queue` must be a live handle; `out_len` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_len(queue: *const ZlQueue, out_len: *mut u32) -> i32 {
    guard(|| {
        let queue = &castable::borrow(queue)?.queue;
        args::need(out_len, "out_len")?;
        let len = zoolock::runtime::block_on(queue.len())?;
        args::put(out_len, u32::try_from(len).unwrap_or(u32::MAX), "out_len")
    })
}

/// Frees the queue handle (its entries stay). Null is ignored.
///
/// # Safety
/// `queue` must come from `zl_queue_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_free(queue: *mut ZlQueue) {
    guard_void(|| castable::free(queue))
}

/// A consumer of the locking queue at `path`, with a fresh id; nothing is
/// sent before a call.
///
/// # Safety
/// `session` must be a live handle; the byte range valid; `out_queue` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_new(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out_queue: *mut *mut ZlLockingQueue,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        args::need(out_queue, "out_queue")?;
        castable::give(ZlLockingQueue { queue: LockingQueue::new(session, path)? }, out_queue, "out_queue")
    })
}

/// Adds `value` with `priority`, as `zl_queue_put_async`.
///
/// # Safety
/// As for `zl_queue_put_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_put_async(
    queue: *const ZlLockingQueue,
    value: *const u8,
    value_len: u32,
    priority: u32,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let queue = castable::borrow(queue)?.queue.clone();
        let what = format!("put into locking queue {}", queue.path());
        put_later(what, value, value_len, cancel, callback, user_data, |value| async move {
            queue.put(&value, priority).await
        })
    })
}

/// Locks the first free entry for this consumer, waiting up to `timeout_ms`
/// (0 looks once, -1 waits forever): data `1` + its value, or `0` if none
/// came. The entry got and neither consumed nor released comes again.
/// Cancelling leaves no lock behind.
///
/// # Safety
/// As for `zl_queue_put_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_get_async(
    queue: *const ZlLockingQueue,
    timeout_ms: i64,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let queue = castable::borrow(queue)?.queue.clone();
        let timeout = args::timeout(timeout_ms, "timeout_ms")?;
        let cancel = cancel.as_ref().map(ZlCancel::subscribe);
        let what = format!("get from locking queue {}", queue.path());
        let work = async move { queue.get(timeout).await };
        reply_later(work, what, cancel, callback, UserData(user_data), taken)
    })
}

/// The yes/no calls on the entry this consumer got.
enum Finish {
    Consume,
    Release,
    HoldsLock,
}

unsafe fn finish(
    queue: *const ZlLockingQueue,
    finish: Finish,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let queue = castable::borrow(queue)?.queue.clone();
        let cancel = cancel.as_ref().map(ZlCancel::subscribe);
        let what = format!("finish an entry of locking queue {}", queue.path());
        let work = async move {
            match finish {
                Finish::Consume => queue.consume().await,
                Finish::Release => queue.release().await,
                Finish::HoldsLock => queue.holds_lock().await,
            }
        };
        reply_later(work, what, cancel, callback, UserData(user_data), Reply::yes_no)
    })
}

/// Removes the entry this consumer got, with its lock, in one transaction:
/// one byte, 0 if it holds none (or lost its lock: its session ended).
///
/// # Safety
/// As for `zl_queue_get_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_consume_async(
    queue: *const ZlLockingQueue,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    finish(queue, Finish::Consume, cancel, callback, user_data)
}

/// Gives the entry this consumer got back to the queue: one byte, 0 if it holds none.
///
/// # Safety
/// As for `zl_queue_get_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_release_async(
    queue: *const ZlLockingQueue,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    finish(queue, Finish::Release, cancel, callback, user_data)
}

/// Whether this consumer still holds the lock of the entry it got: one byte.
///
/// # Safety
/// As for `zl_queue_get_async`.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_holds_lock_async(
    queue: *const ZlLockingQueue,
    cancel: *const ZlCancel,
    callback: ZlResultCallback,
    user_data: *mut c_void,
) -> i32 {
    finish(queue, Finish::HoldsLock, cancel, callback, user_data)
}

/// How many entries there are, locked ones included.
///
/// # Safety
/// `queue` must be a live handle; `out_len` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_len(queue: *const ZlLockingQueue, out_len: *mut u32) -> i32 {
    guard(|| {
        let queue = &castable::borrow(queue)?.queue;
        args::need(out_len, "out_len")?;
        let len = zoolock::runtime::block_on(queue.len())?;
        args::put(out_len, u32::try_from(len).unwrap_or(u32::MAX), "out_len")
    })
}

/// Frees the consumer. An entry it locked stays locked until released,
/// consumed, or its session ends. Null is ignored.
///
/// # Safety
/// `queue` must come from `zl_locking_queue_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_free(queue: *mut ZlLockingQueue) {
    guard_void(|| castable::free(queue))
}

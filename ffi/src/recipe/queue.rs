//! kazoo's queues (the core's `Queue` and `LockingQueue`): each call is an
//! `_async` entry point completed by a `ZlResultCallback`. A taken value
//! comes as data `1` followed by the value, or `0` alone when there was none
//! (an empty queue, a timeout); a yes/no answer as one byte.

use std::future::Future;

use zoolock::{LockingQueue, Queue};

use crate::args;
use crate::castable;
use crate::entry::{async_entry, new_entry, Completion};
use crate::recipe::{call_later, impl_recipe};
use crate::status::{guard, guard_void, FfiResult};
use crate::znode::Reply;

/// A producer and consumer of kazoo's `Queue`.
pub struct ZlQueue {
    queue: Queue,
}

impl_recipe!(ZlQueue, queue: Queue, "queue");

/// A consumer (and producer) of kazoo's `LockingQueue`.
pub struct ZlLockingQueue {
    queue: LockingQueue,
}

impl_recipe!(ZlLockingQueue, queue: LockingQueue, "locking queue");

fn taken(value: Option<Vec<u8>>) -> Reply {
    Reply::data(match value {
        Some(value) => [&[1u8][..], &value].concat(),
        None => vec![0],
    })
}

/// The entry a put added: its path.
fn entry(path: String) -> Reply {
    Reply::data(path.into_bytes())
}

new_entry! {
    /// The queue at `path`; nothing is sent before a call.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; `out_queue` valid for writes.
    fn zl_queue_new(session, path) -> out_queue: ZlQueue |session, path| {
        Ok(ZlQueue { queue: Queue::new(session, path)? })
    }
}

async_entry! {
    /// Adds `value` with `priority` (0 to 999, lower first); `callback`'s data
    /// is the entry's path. Not retried: after `ZL_CONNECTION_LOSS` the entry may be in.
    ///
    /// # Safety
    /// `queue` must be a live handle until the callback; the byte range valid;
    /// `cancel` null or live; `user_data` valid until the callback.
    fn zl_queue_put_async(queue: *const ZlQueue, value: *const u8, value_len: u32, priority: u32) |completion| {
        let start = |queue: Queue| {
            let value = args::bytes(value, value_len, "value")?.to_vec();
            Ok(async move { queue.put(&value, priority).await })
        };
        call_later(queue, "put into", start, entry, completion)
    }
}

async_entry! {
    /// Takes the first entry, removing it: data `1` + its value, or `0` if the
    /// queue is empty (it does not wait).
    ///
    /// # Safety
    /// As for `zl_queue_put_async`.
    fn zl_queue_get_async(queue: *const ZlQueue) |completion| {
        let start = |queue: Queue| Ok(async move { queue.get().await });
        call_later(queue, "get from", start, taken, completion)
    }
}

/// How many entries the queue has (every child of its path, as kazoo counts).
///
/// # Safety
/// `queue` must be a live handle; `out_len` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_len(queue: *const ZlQueue, out_len: *mut u32) -> i32 {
    guard(|| put_len(castable::borrow(queue)?.queue.len(), out_len))
}

/// Frees the queue handle (its entries stay). Null is ignored.
///
/// # Safety
/// `queue` must come from `zl_queue_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_queue_free(queue: *mut ZlQueue) {
    guard_void(|| castable::free(queue))
}

new_entry! {
    /// A consumer of the locking queue at `path`, with a fresh id; nothing is
    /// sent before a call.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte range valid; `out_queue` valid for writes.
    fn zl_locking_queue_new(session, path) -> out_queue: ZlLockingQueue |session, path| {
        Ok(ZlLockingQueue { queue: LockingQueue::new(session, path)? })
    }
}

async_entry! {
    /// Adds `value` with `priority`, as `zl_queue_put_async`.
    ///
    /// # Safety
    /// As for `zl_queue_put_async`.
    fn zl_locking_queue_put_async(
        queue: *const ZlLockingQueue,
        value: *const u8,
        value_len: u32,
        priority: u32,
    ) |completion| {
        let start = |queue: LockingQueue| {
            let value = args::bytes(value, value_len, "value")?.to_vec();
            Ok(async move { queue.put(&value, priority).await })
        };
        call_later(queue, "put into", start, entry, completion)
    }
}

async_entry! {
    /// Adds every value of `values` with `priority`, all or none (one
    /// transaction; kazoo's `put_all`): `values` a list, each a little-endian
    /// u32 length then its bytes (`zl_session_children`'s layout, any bytes).
    /// No data. As `zl_queue_put_async` otherwise.
    ///
    /// # Safety
    /// As for `zl_queue_put_async`.
    fn zl_locking_queue_put_all_async(
        queue: *const ZlLockingQueue,
        values: *const u8,
        values_len: u32,
        priority: u32,
    ) |completion| {
        let start = |queue: LockingQueue| {
            let values: Vec<Vec<u8>> = args::decode_byte_list(args::bytes(values, values_len, "values")?, "values")?
                .into_iter()
                .map(<[u8]>::to_vec)
                .collect();
            Ok(async move { queue.put_all(&values, priority).await })
        };
        call_later(queue, "put into", start, |()| Reply::empty(), completion)
    }
}

async_entry! {
    /// Locks the first free entry for this consumer, waiting up to `timeout_ms`
    /// (0 looks once, -1 waits forever): data `1` + its value, or `0` if none
    /// came. The entry got and neither consumed nor released comes again.
    /// Cancelling leaves no lock behind.
    ///
    /// # Safety
    /// As for `zl_queue_put_async`.
    fn zl_locking_queue_get_async(queue: *const ZlLockingQueue, timeout_ms: i64) |completion| {
        let start = |queue: LockingQueue| {
            let timeout = args::timeout(timeout_ms, "timeout_ms")?;
            Ok(async move { queue.get(timeout).await })
        };
        call_later(queue, "get from", start, taken, completion)
    }
}

/// Writes a queue's count to `*out_len` (saturated) once `len` is done.
unsafe fn put_len(len: impl Future<Output = zoolock::Result<usize>> + Send + 'static, out_len: *mut u32) -> FfiResult {
    args::need(out_len, "out_len")?;
    let len = zoolock::runtime::wait(len)?;
    args::put(out_len, u32::try_from(len).unwrap_or(u32::MAX), "out_len")
}

/// The yes/no calls on the entry this consumer got.
enum Finish {
    Consume,
    Release,
    HoldsLock,
}

unsafe fn finish(queue: *const ZlLockingQueue, finish: Finish, completion: Completion) -> i32 {
    let start = |queue: LockingQueue| {
        Ok(async move {
            match finish {
                Finish::Consume => queue.consume().await,
                Finish::Release => queue.release().await,
                Finish::HoldsLock => queue.holds_lock().await,
            }
        })
    };
    call_later(queue, "finish an entry of", start, Reply::yes_no, completion)
}

async_entry! {
    /// Removes the entry this consumer got, with its lock, in one transaction:
    /// one byte, 0 if it holds none (or lost its lock: its session ended).
    ///
    /// # Safety
    /// As for `zl_queue_get_async`.
    fn zl_locking_queue_consume_async(queue: *const ZlLockingQueue) |completion| {
        finish(queue, Finish::Consume, completion)
    }
}

async_entry! {
    /// Gives the entry this consumer got back to the queue: one byte, 0 if it holds none.
    ///
    /// # Safety
    /// As for `zl_queue_get_async`.
    fn zl_locking_queue_release_async(queue: *const ZlLockingQueue) |completion| {
        finish(queue, Finish::Release, completion)
    }
}

async_entry! {
    /// Whether this consumer still holds the lock of the entry it got: one byte.
    ///
    /// # Safety
    /// As for `zl_queue_get_async`.
    fn zl_locking_queue_holds_lock_async(queue: *const ZlLockingQueue) |completion| {
        finish(queue, Finish::HoldsLock, completion)
    }
}

/// How many entries there are, locked ones included.
///
/// # Safety
/// `queue` must be a live handle; `out_len` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_locking_queue_len(queue: *const ZlLockingQueue, out_len: *mut u32) -> i32 {
    guard(|| put_len(castable::borrow(queue)?.queue.len(), out_len))
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

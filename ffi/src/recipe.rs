//! What lock and semaphore handles share at the boundary: acquiring
//! blocking or with a completion callback, cancel tokens, state codes and
//! listeners. Every decision stays in the core; this only changes the style.

use std::ffi::c_void;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::sync::watch;
use zoolock::{runtime, Acquire, Holder, LockState, LostReason, Owner};

use crate::args::{self, UserData};
use crate::dispatch;
use crate::listener::{Listener, ZlStateCallback};
use crate::status::{guard, guard_void, FfiResult, Failure, ZL_OK};

/// The handle holds nothing.
pub const ZL_LOCK_RELEASED: i32 = 0;
/// The handle holds the lock (or lease).
pub const ZL_LOCK_HELD: i32 = 1;
/// The connection dropped while holding: stop using the guarded resource until `ZL_LOCK_HELD` again.
pub const ZL_LOCK_SUSPENDED: i32 = 2;
/// The hold ended because the session expired.
pub const ZL_LOCK_LOST_SESSION_EXPIRED: i32 = 3;
/// The hold ended because the session was closed.
pub const ZL_LOCK_LOST_SESSION_CLOSED: i32 = 4;
/// The hold ended because its lease ran out.
pub const ZL_LOCK_LOST_LEASE_EXPIRED: i32 = 5;
/// The hold ended because someone else deleted its node (an operator breaking a lock).
pub const ZL_LOCK_LOST_NODE_DELETED: i32 = 6;

pub fn state_code(state: LockState) -> i32 {
    match state {
        LockState::Released => ZL_LOCK_RELEASED,
        LockState::Held => ZL_LOCK_HELD,
        LockState::Suspended => ZL_LOCK_SUSPENDED,
        LockState::Lost(LostReason::SessionExpired) => ZL_LOCK_LOST_SESSION_EXPIRED,
        LockState::Lost(LostReason::SessionClosed) => ZL_LOCK_LOST_SESSION_CLOSED,
        LockState::Lost(LostReason::LeaseExpired) => ZL_LOCK_LOST_LEASE_EXPIRED,
        LockState::Lost(LostReason::NodeDeleted) => ZL_LOCK_LOST_NODE_DELETED,
    }
}

/// Called once when an asynchronous acquire ends: `status` is `ZL_OK` with
/// `acquired` 1 (held) or 0 (taken, or the timeout ran out), or an error code
/// with its UTF-8 message, valid only during the call. Runs on zoolock's
/// callback thread, which runs every callback in turn: return quickly.
pub type ZlAcquireCallback =
    extern "C" fn(user_data: *mut c_void, status: i32, acquired: u8, message: *const u8, message_len: u32);

/// A cancel token for acquires: fire it from any thread to cancel the
/// acquires it was passed to, even one that has not started waiting yet.
pub struct ZlCancel {
    fired: watch::Sender<bool>,
}

/// A lock or semaphore as the boundary holds it: any of the core's holders.
pub trait Recipe: Holder + Clone + 'static {}

impl<H: Holder + Clone + 'static> Recipe for H {}

/// A lock or semaphore handle as the caller owns it.
pub struct Handle<R: Recipe> {
    pub recipe: R,
    listener: Listener,
}

impl<R: Recipe> Handle<R> {
    pub fn new(recipe: R) -> Handle<R> {
        Handle { recipe, listener: Listener::default() }
    }

    pub fn acquire_blocking(&self, options: Acquire, cancel: *const ZlCancel) -> FfiResult<bool> {
        let cancel = unsafe { cancel.as_ref() }.map(|c| c.fired.subscribe());
        Ok(runtime::block_on(acquire(self.recipe.clone(), options, cancel))?)
    }

    pub fn acquire_async(
        &self,
        options: Acquire,
        cancel: *const ZlCancel,
        callback: ZlAcquireCallback,
        user_data: *mut c_void,
    ) -> FfiResult {
        // In a forked child the runtime's threads are gone: a spawned task would never run.
        runtime::check_process()?;
        let cancel = unsafe { cancel.as_ref() }.map(|c| c.fired.subscribe());
        let work = acquire(self.recipe.clone(), options, cancel);
        complete_later(work, callback, UserData(user_data));
        Ok(())
    }

    pub fn release_blocking(&self, owner: Owner) -> FfiResult<bool> {
        Ok(runtime::block_on(self.recipe.release_by(owner))?)
    }

    pub fn set_listener(&self, callback: Option<ZlStateCallback>, user_data: *mut c_void) {
        let recipe = &self.recipe;
        self.listener.set(
            callback,
            user_data,
            |sink| recipe.add_listener(Box::new(move |state| sink(state_code(state)))),
            |id| {
                recipe.remove_listener(id);
            },
        );
    }
}

impl<R: Recipe> Drop for Handle<R> {
    /// Stops the callback before the handle goes; the core releases a held
    /// lock in the background when its last handle is dropped.
    fn drop(&mut self) {
        if let Some(id) = self.listener.take_registration() {
            self.recipe.remove_listener(id);
        }
        self.listener.clear();
    }
}

/// Builds the core's acquire options from the C arguments.
pub fn options(timeout_ms: i64, lease_ms: i64) -> FfiResult<Acquire> {
    let timeout = args::timeout(timeout_ms, "timeout_ms")?;
    let lease = match lease_ms {
        -1 => None,
        ms if ms <= 0 => return Err(Failure::invalid(format!("lease_ms must be -1 (none) or positive, got {ms}"))),
        ms => Some(Duration::from_millis(ms as u64)),
    };
    Ok(Acquire { timeout, lease, ..Acquire::default() })
}

/// The core's acquire, cancelled through the core when `cancel` fires or
/// `zl_shutdown` is called.
async fn acquire<R: Recipe>(recipe: R, options: Acquire, cancel: Option<watch::Receiver<bool>>) -> zoolock::Result<bool> {
    let mut shutdowns = dispatch::shutdowns();
    shutdowns.borrow_and_update();
    let attempt = recipe.acquire(options);
    tokio::pin!(attempt);
    let fired = async move {
        let user = async {
            match cancel {
                Some(mut cancel) => cancel.wait_for(|fired| *fired).await.is_ok(),
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            fired = user => fired,
            changed = shutdowns.changed() => changed.is_ok(),
        }
    };
    tokio::select! {
        // The attempt is polled first: once polled it is pending in the core,
        // so the core's cancel reaches it even if the token fired before.
        biased;
        outcome = &mut attempt => return outcome,
        true = fired => {}
    }
    recipe.cancel();
    attempt.await
}

/// Runs `work` on zoolock's runtime and calls `callback` exactly once with
/// its outcome, a panic included.
pub fn complete_later<F>(work: F, callback: ZlAcquireCallback, user_data: UserData)
where
    F: Future<Output = zoolock::Result<bool>> + Send + 'static,
{
    runtime::spawn(async move {
        let outcome = match (CatchUnwind(AssertUnwindSafe(Box::pin(work)))).await {
            Ok(Ok(acquired)) => Ok(acquired),
            Ok(Err(error)) => Err(Failure::from(error)),
            Err(payload) => Err(Failure::panic(payload)),
        };
        dispatch::post(Box::new(move || {
            let data = user_data.get();
            match outcome {
                Ok(acquired) => callback(data, ZL_OK, acquired as u8, std::ptr::null(), 0),
                Err(failure) => {
                    let message = failure.message.as_bytes();
                    callback(data, failure.code, 0, message.as_ptr(), message.len() as u32);
                }
            }
        }));
    });
}

/// A future that turns a panic while polling into an error.
struct CatchUnwind<F>(AssertUnwindSafe<Pin<Box<F>>>);

impl<F: Future> Future for CatchUnwind<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = &mut self.0;
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.as_mut().poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => Poll::Ready(Err(payload)),
        }
    }
}

/// Creates a cancel token; free it with `zl_cancel_free` once the acquires
/// it was passed to have returned (or called back).
///
/// # Safety
/// `out_cancel` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_new(out_cancel: *mut *mut ZlCancel) -> i32 {
    guard(|| {
        args::need(out_cancel, "out_cancel")?;
        let cancel = Box::new(ZlCancel { fired: watch::Sender::new(false) });
        args::put(out_cancel, Box::into_raw(cancel), "out_cancel")
    })
}

/// Fires the token: every acquire given it fails with `ZL_CANCELLED` and
/// leaves no node (unless it had already acquired). Any thread may call it.
///
/// # Safety
/// `cancel` must come from `zl_cancel_new` and not be freed.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_fire(cancel: *const ZlCancel) -> i32 {
    guard(|| {
        args::handle(cancel, "cancel")?.fired.send_replace(true);
        Ok(())
    })
}

/// Frees a cancel token. Null is ignored.
///
/// # Safety
/// `cancel` must come from `zl_cancel_new`, freed once.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_free(cancel: *mut ZlCancel) {
    guard_void(|| {
        if !cancel.is_null() {
            drop(Box::from_raw(cancel));
        }
    })
}

//! Cancel tokens: fired from any thread, they cancel the calls they were
//! passed to, even one that has not started waiting yet. [`cancellable`] is
//! the one place a call meets its token and `zl_shutdown`.

use std::future::Future;

use tokio::sync::watch;

use crate::castable::{self, Castable};
use crate::dispatch;
use crate::status::{guard, guard_void, Failure, FfiResult};

/// A cancel token for acquires: fire it from any thread to cancel the
/// acquires it was passed to, even one that has not started waiting yet.
pub struct ZlCancel {
    fired: watch::Sender<bool>,
}

impl Castable for ZlCancel {
    const NAME: &'static str = "cancel";
}

/// What ends a call early: its token, if it was given one, and
/// `zl_shutdown`. Made when the call is made, not when its work is first
/// polled: a `zl_shutdown` in between ends it too. The call counts as
/// pending from then on (before it subscribes), so that `zl_shutdown`
/// either waits for it or is not seen by it.
pub(crate) struct Stops {
    cancel: Option<watch::Receiver<bool>>,
    shutdowns: watch::Receiver<u64>,
    pending: dispatch::Pending,
}

impl Stops {
    pub(crate) fn new(cancel: Option<&ZlCancel>) -> Stops {
        let pending = dispatch::Pending::new();
        Stops { cancel: cancel.map(|cancel| cancel.fired.subscribe()), shutdowns: dispatch::shutdowns(), pending }
    }
}

/// Runs `work` until it ends or one of `stops` does, then calls `stop`:
/// `None` when it asked the core to end the work (an acquire or a lead,
/// which then returns `Cancelled` and leaves no node), or the failure to
/// end with at once, dropping the work (a request already sent may still
/// take effect, as one whose reply was lost).
///
/// An `async move` block rather than an `async fn`, which would keep its
/// arguments twice for as long as an acquire waits.
pub(crate) fn cancellable<T>(
    work: impl Future<Output = zoolock::Result<T>>,
    stops: Stops,
    stop: impl FnOnce() -> Option<Failure>,
) -> impl Future<Output = FfiResult<T>> {
    async move {
        // `pending` lives until the work ends; `complete_later` counts the callback on from there.
        let Stops { cancel, mut shutdowns, pending: _pending } = stops;
        tokio::pin!(work);
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
            // The work is polled first: once polled an acquire is pending in the
            // core, so the core's cancel reaches it even if the token fired before.
            biased;
            outcome = &mut work => return Ok(outcome?),
            true = fired => {}
        }
        match stop() {
            None => Ok(work.await?),
            Some(failure) => Err(failure),
        }
    }
}

/// Creates a cancel token; free it with `zl_cancel_free` once the calls it
/// was passed to have returned (or called back).
///
/// # Safety
/// `out_cancel` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_cancel_new(out_cancel: *mut *mut ZlCancel) -> i32 {
    guard(|| castable::give(ZlCancel { fired: watch::Sender::new(false) }, out_cancel, "out_cancel"))
}

/// Fires the token: every call given it fails with `ZL_CANCELLED`; an
/// acquire or lead leaves no node (unless it had already acquired). Any
/// thread may call it.
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

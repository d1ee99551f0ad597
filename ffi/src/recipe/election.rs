//! Leader election (the core's `Election` and `Leadership`): a candidate
//! waits to lead, blocking or with a completion callback; each term won is a
//! `ZlLeadership` with its fencing token, state, callback and fenced writes,
//! which ends when resigned, freed, or lost.

use std::ffi::c_void;
use std::sync::Arc;
use std::time::Duration;

use zoolock::{runtime, Election, Leadership};

use crate::args::{self, UserData};
use crate::cancel::{cancellable, Stops, ZlCancel};
use crate::castable::{self, Castable};
use crate::dispatch;
use crate::entry::new_entry;
use crate::listener::Listener;
use crate::status::{guard, guard_void, FfiResult, ZL_OK};
use crate::transaction::ZlTransaction;

/// Called once when an asynchronous lead ends: `status` `ZL_OK` with the
/// term won in `leadership` (the caller's to free with `zl_leadership_free`),
/// or null when the timeout ran out; else an error code with its UTF-8
/// message, valid only during the call. Runs on zoolock's callback thread.
pub type ZlLeadCallback = extern "C" fn(
    user_data: *mut c_void,
    status: i32,
    leadership: *mut ZlLeadership,
    message: *const u8,
    message_len: u32,
);

/// A candidate in the election at a path (kazoo's `Election`, Curator's `LeaderLatch`).
pub struct ZlElection {
    election: Election,
}

impl Castable for ZlElection {
    const NAME: &'static str = "election";
}

/// One term of leadership, the core's `Leadership` (shared with its listener).
pub struct ZlLeadership {
    term: Arc<Leadership>,
    listener: Listener,
}

impl Castable for ZlLeadership {
    const NAME: &'static str = "leadership";
}

impl ZlLeadership {
    fn new(term: Leadership) -> ZlLeadership {
        ZlLeadership { term: Arc::new(term), listener: Listener::default() }
    }
}

impl Drop for ZlLeadership {
    /// Stops the callback; dropping the term resigns it in the background (the core's).
    fn drop(&mut self) {
        if let Some(id) = self.listener.take_registration() {
            self.term.remove_listener(id);
        }
        self.listener.clear();
    }
}

/// Waits to lead: forever (`timeout` `None`) or within it; cancelled through
/// the core when `cancel` fires or `zl_shutdown` is called.
async fn lead(election: Election, timeout: Option<Duration>, cancel: Stops) -> FfiResult<Option<Leadership>> {
    let attempt = async {
        match timeout {
            Some(timeout) => election.lead_within(timeout).await,
            None => election.lead().await.map(Some),
        }
    };
    cancellable(attempt, cancel, || {
        election.cancel();
        None
    })
    .await
}

new_entry! {
    /// A candidate for the election at `path`; `identifier` is its node's data,
    /// shown by `zl_election_contenders`. Nothing is sent before a lead. Its
    /// nodes are kazoo `Lock` nodes: kazoo's `Election` on the path takes part.
    ///
    /// # Safety
    /// `session` must be a live handle; the byte ranges valid; `out_election` valid for writes.
    fn zl_election_new(
        session, path, identifier: *const u8, identifier_len: u32
    ) -> out_election: ZlElection |session, path| {
        let identifier = args::bytes(identifier, identifier_len, "identifier")?;
        let election = Election::new(session, path, identifier.to_vec())?;
        Ok(ZlElection { election })
    }
}

/// Waits until this candidate leads, blocking the calling thread, for
/// `timeout_ms` (0 tries once, -1 waits forever): `*out_leadership` is the
/// term won (free it with `zl_leadership_free`, which resigns), or null when
/// others led the whole time. `cancel` (may be null) cancels from another
/// thread: `ZL_CANCELLED`. Giving up leaves no candidacy behind. One term at
/// a time: while a term of this candidate lasts, another lead waits for it.
///
/// # Safety
/// `election` must be a live handle; `cancel` null or live; `out_leadership` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_election_lead(
    election: *const ZlElection,
    timeout_ms: i64,
    cancel: *const ZlCancel,
    out_leadership: *mut *mut ZlLeadership,
) -> i32 {
    guard(|| {
        let election = castable::borrow(election)?.election.clone();
        args::need(out_leadership, "out_leadership")?;
        let timeout = args::timeout(timeout_ms, "timeout_ms")?;
        let cancel = Stops::new(cancel.as_ref());
        match runtime::wait(lead(election.clone(), timeout, cancel))? {
            Some(term) => castable::give(ZlLeadership::new(term), out_leadership, "out_leadership"),
            None => args::put(out_leadership, std::ptr::null_mut(), "out_leadership"),
        }
    })
}

/// Starts a lead and returns at once; `callback` is called exactly once with
/// the outcome, on one of zoolock's threads, if and only if this returns
/// `ZL_OK`. Arguments as for `zl_election_lead`; the election and `cancel`
/// must stay alive until the callback has run.
///
/// # Safety
/// As for `zl_election_lead`; `user_data` must stay valid until the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_election_lead_async(
    election: *const ZlElection,
    timeout_ms: i64,
    cancel: *const ZlCancel,
    callback: ZlLeadCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let election = castable::borrow(election)?.election.clone();
        let timeout = args::timeout(timeout_ms, "timeout_ms")?;
        // In a forked child the runtime's threads are gone: a spawned task would never run.
        runtime::check_process()?;
        let cancel = Stops::new(cancel.as_ref());
        let user_data = UserData(user_data);
        dispatch::complete_later(lead(election.clone(), timeout, cancel), move |outcome| {
            let data = user_data.get();
            match outcome {
                Ok(term) => {
                    let won =
                        term.map_or(std::ptr::null_mut(), |term| Box::into_raw(Box::new(ZlLeadership::new(term))));
                    callback(data, ZL_OK, won, std::ptr::null(), 0);
                }
                Err(failure) => {
                    let message = failure.message.as_bytes();
                    callback(data, failure.code, std::ptr::null_mut(), message.as_ptr(), message.len() as u32);
                }
            }
        });
        Ok(())
    })
}

/// Withdraws this candidate's pending leads now (`ZL_CANCELLED`, no node
/// left; kazoo's `cancel()`). A term already won is not affected.
///
/// # Safety
/// `election` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_election_cancel(election: *const ZlElection) -> i32 {
    guard(|| {
        castable::borrow(election)?.election.cancel();
        Ok(())
    })
}

/// The identifiers of the candidates, the leader first, as a list (each a
/// little-endian u32 length, then UTF-8) to free with `zl_bytes_free`.
///
/// # Safety
/// `election` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_election_contenders(
    election: *const ZlElection,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let election = &castable::borrow(election)?.election;
        args::need(out_ptr, "out_ptr")?;
        let contenders = runtime::wait(election.contenders())?;
        args::give(args::encode_list(&contenders), out_ptr, out_len, "contenders")
    })
}

/// Frees the candidate; its terms live on until freed themselves. Null is ignored.
///
/// # Safety
/// `election` must come from `zl_election_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_election_free(election: *mut ZlElection) {
    guard_void(|| castable::free(election))
}

/// The term's state, a `ZL_LOCK_*` code: `ZL_LOCK_HELD` while leading,
/// `ZL_LOCK_SUSPENDED` while the connection is down (stop acting as leader
/// until held again), `ZL_LOCK_LOST_*` once lost, `ZL_LOCK_RELEASED` once resigned.
///
/// # Safety
/// `leadership` must be a live handle; `out_state` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_state(leadership: *const ZlLeadership, out_state: *mut i32) -> i32 {
    guard(|| {
        let code = castable::borrow(leadership)?.term.state().code();
        args::put(out_state, code, "out_state")
    })
}

/// The term's fencing token: strictly greater than every earlier term's on the path.
///
/// # Safety
/// `leadership` must be a live handle; `out_token` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_fencing_token(leadership: *const ZlLeadership, out_token: *mut i64) -> i32 {
    guard(|| args::put(out_token, castable::borrow(leadership)?.term.fencing_token(), "out_token"))
}

/// The leader's node (full path), as UTF-8 to free with `zl_bytes_free`.
///
/// # Safety
/// `leadership` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_node(
    leadership: *const ZlLeadership,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let node = castable::borrow(leadership)?.term.node().to_owned();
        args::give(node.into_bytes(), out_ptr, out_len, "node")
    })
}

/// Sets the callback told of each change of the term's state (`ZL_LOCK_*`,
/// as `zl_leadership_state` gives it), replacing any earlier one; null
/// removes it. When this returns, the earlier callback is not running and
/// will not run again. No state callback is called after `zl_shutdown`
/// (the process is exiting; `zl_leadership_state` still answers).
///
/// # Safety
/// `leadership` must be a live handle; `user_data` must stay valid for the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_set_listener(
    leadership: *const ZlLeadership,
    callback: Option<extern "C" fn(user_data: *mut c_void, state: i32)>,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let this = castable::borrow(leadership)?;
        let (term, removes) = (this.term.clone(), this.term.clone());
        this.listener.set(
            callback,
            user_data,
            |sink| term.add_listener(Box::new(move |state| sink(state.code()))),
            |id| {
                removes.remove_listener(id);
            },
        );
        Ok(())
    })
}

/// A transaction that commits only while this term lasts (the core's
/// `Leadership::fenced`); `ZL_NOT_HELD` if it is over.
///
/// # Safety
/// `leadership` must be a live handle; `out_transaction` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_fenced(
    leadership: *const ZlLeadership,
    out_transaction: *mut *mut ZlTransaction,
) -> i32 {
    guard(|| {
        let this = castable::borrow(leadership)?;
        args::need(out_transaction, "out_transaction")?;
        let transaction = this.term.fenced()?;
        castable::give(ZlTransaction::new(transaction), out_transaction, "out_transaction")
    })
}

/// Ends the term: the next candidate leads. `*out_resigned` (may be null)
/// is 0 if the term was over already (lost, or resigned before).
///
/// # Safety
/// `leadership` must be a live handle; `out_resigned` null or valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_resign(leadership: *const ZlLeadership, out_resigned: *mut u8) -> i32 {
    guard(|| {
        let resigned = runtime::wait(castable::borrow(leadership)?.term.resign())?;
        if !out_resigned.is_null() {
            out_resigned.write(resigned as u8);
        }
        Ok(())
    })
}

/// Frees the term, resigning it in the background if it lasts. Its callback
/// is not running and will not run once this returns. Null is ignored.
///
/// # Safety
/// `leadership` must come from a lead, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_leadership_free(leadership: *mut ZlLeadership) {
    guard_void(|| castable::free(leadership))
}

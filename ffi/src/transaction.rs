//! Transactions (the core's `Transaction`, ZooKeeper's `multi`): operations
//! added one call at a time, committed together or not at all. A fenced one
//! (`zl_holder_fenced`, `zl_leadership_fenced`) commits only while its
//! holder still holds, else `ZL_NOT_HELD`.

use std::sync::Mutex;

use zoolock::{runtime, OpResult, Transaction};

use crate::args::{self};
use crate::castable::{self, Castable};
use crate::entry::{async_entry, path_entry};
use crate::holder::ZlHolder;
use crate::session::ZlSession;
use crate::status::{guard, guard_void, Failure, FfiResult};
use crate::znode::{create_options, Reply};

/// Operations to commit as one: built by `zl_transaction_*`, sent by
/// `zl_transaction_commit`, after which it takes no more operations.
pub struct ZlTransaction {
    /// The transaction and the path of each operation added; `None` once committed.
    pending: Mutex<Option<(Transaction, Vec<String>)>>,
}

impl Castable for ZlTransaction {
    const NAME: &'static str = "transaction";
}

impl ZlTransaction {
    pub fn new(transaction: Transaction) -> ZlTransaction {
        ZlTransaction { pending: Mutex::new(Some((transaction, Vec::new()))) }
    }

    /// Adds an operation on `path`: `add(transaction)` replaces the
    /// transaction. A bad operation is kept by the core and fails the commit.
    fn add(&self, path: &str, add: impl FnOnce(Transaction) -> Transaction) -> FfiResult {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        let (transaction, mut paths) = pending.take().ok_or_else(committed)?;
        paths.push(path.to_owned());
        *pending = Some((add(transaction), paths));
        Ok(())
    }

    fn take(&self) -> FfiResult<(Transaction, Vec<String>)> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner()).take().ok_or_else(committed)
    }
}

fn committed() -> Failure {
    Failure::invalid("the transaction was committed already")
}

/// A new, empty transaction on the session; free it with `zl_transaction_free`.
///
/// # Safety
/// `session` must be a live handle; `out_transaction` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_transaction_new(
    session: *const ZlSession,
    out_transaction: *mut *mut ZlTransaction,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        castable::give(ZlTransaction::new(session.transaction()), out_transaction, "out_transaction")
    })
}

/// A transaction that commits only while `holder` holds (the core's
/// `Holder::fenced`: its first operation checks the holder's node).
/// `ZL_NOT_HELD` if the holder holds nothing now.
///
/// # Safety
/// `holder` must be a live handle; `out_transaction` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_holder_fenced(holder: *const ZlHolder, out_transaction: *mut *mut ZlTransaction) -> i32 {
    guard(|| {
        let holder = castable::borrow(holder)?;
        args::need(out_transaction, "out_transaction")?;
        let transaction = holder.holder.fenced()?;
        castable::give(ZlTransaction::new(transaction), out_transaction, "out_transaction")
    })
}

path_entry! {
    /// Adds a check: the commit fails unless the node is at `version` (-1: exists).
    ///
    /// # Safety
    /// `transaction` must be a live handle; the byte range valid.
    fn zl_transaction_check(transaction: *const ZlTransaction, path, version: i32) |transaction, path| {
        transaction.add(path, |t| t.check(path, Some(version)))
    }
}

path_entry! {
    /// Adds a create with `data` (null data: a null pointer with length
    /// `ZL_NULL_DATA`; `flags`: `ZL_CREATE_EPHEMERAL`, `ZL_CREATE_SEQUENCE`;
    /// `ZL_CREATE_MAKEPATH` is refused at commit: parents would be made outside
    /// the transaction).
    ///
    /// # Safety
    /// `transaction` must be a live handle; the byte ranges valid.
    fn zl_transaction_create(
        transaction: *const ZlTransaction, path, data: *const u8, data_len: u32, flags: u32
    ) |transaction, path| {
        let data = args::data(data, data_len, "data")?;
        let options = create_options(flags)?;
        transaction.add(path, |t| t.create(path, data, options))
    }
}

path_entry! {
    /// Adds a set of the node's data (null data: a null pointer with length
    /// `ZL_NULL_DATA`), if at `version` (-1: any).
    ///
    /// # Safety
    /// `transaction` must be a live handle; the byte ranges valid.
    fn zl_transaction_set(
        transaction: *const ZlTransaction, path, data: *const u8, data_len: u32, version: i32
    ) |transaction, path| {
        let data = args::data(data, data_len, "data")?;
        transaction.add(path, |t| t.set(path, data, Some(version)))
    }
}

path_entry! {
    /// Adds a delete of the node, if at `version` (-1: any).
    ///
    /// # Safety
    /// `transaction` must be a live handle; the byte range valid.
    fn zl_transaction_delete(transaction: *const ZlTransaction, path, version: i32) |transaction, path| {
        transaction.add(path, |t| t.delete(path, Some(version)))
    }
}

/// Sends the operations as one request: every write is made, or none. On
/// success, one path per operation, in the order added, as a list (each a
/// little-endian u32 length, then UTF-8) to free with `zl_bytes_free`: the
/// path created for a create (with its sequence number), the operation's
/// path otherwise. On failure, the first failing operation's status
/// (`ZL_NO_NODE`, `ZL_BAD_VERSION`, …, `ZL_NOT_HELD` for the fence) and a
/// message naming its path. Either way the transaction is spent; free it.
///
/// # Safety
/// `transaction` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_transaction_commit(
    transaction: *const ZlTransaction,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let transaction = castable::borrow(transaction)?;
        args::need(out_ptr, "out_ptr")?;
        args::need(out_len, "out_len")?;
        let (pending, paths) = transaction.take()?;
        let results = runtime::wait(pending.commit())?;
        args::give(args::encode_list(&result_paths(results, paths)), out_ptr, out_len, "results")
    })
}

async_entry! {
    /// `zl_transaction_commit`, completed by `callback` (`ZlResultCallback`):
    /// the list of paths in `data`, no stat. Returns at once; the callback is
    /// called exactly once, if and only if this returns `ZL_OK`. `cancel` (may be
    /// null) abandons the wait (`ZL_CANCELLED`): the commit, if already sent, may
    /// still be made, all of it or none. The transaction is spent either way;
    /// `cancel` must stay alive until the callback has run.
    ///
    /// # Safety
    /// `transaction` must be a live handle; `cancel` null or live; `user_data`
    /// must stay valid until the callback.
    fn zl_transaction_commit_async(transaction: *const ZlTransaction) |completion| {
        guard(|| {
            let transaction = castable::borrow(transaction)?;
            let (pending, paths) = transaction.take()?;
            let what = format!("the commit of {}", paths.join(", "));
            completion.start(pending.commit(), what, |results| Reply {
                data: Some(args::encode_list(&result_paths(results, paths))),
                stat: None,
            })
        })
    }
}

/// One path per operation: the path created for a create, the operation's own otherwise.
fn result_paths(results: Vec<OpResult>, paths: Vec<String>) -> Vec<String> {
    results
        .into_iter()
        .zip(paths)
        .map(|(result, added)| match result {
            OpResult::Created { path, .. } => path,
            _ => added,
        })
        .collect()
}

/// Frees a transaction, committed or not (an uncommitted one sends nothing). Null is ignored.
///
/// # Safety
/// `transaction` must come from `zl_transaction_new` or a `_fenced` call, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_transaction_free(transaction: *mut ZlTransaction) {
    guard_void(|| castable::free(transaction))
}

//! Who holds and who waits on a lock or semaphore path, from the path alone
//! (`zoolock::inspect`): the operator's view, as one buffer of records.

use std::time::UNIX_EPOCH;

use zoolock::{runtime, ParticipantKind, Scheme};

use crate::args;
use crate::castable;
use crate::holder::{ZL_SCHEME_CURATOR, ZL_SCHEME_KAZOO};
use crate::session::ZlSession;
use crate::status::guard;

/// An exclusive node: a mutex's, or a kazoo write lock's (kazoo names both alike).
pub const ZL_PARTICIPANT_LOCK: i32 = 0;
/// A read lock's node.
pub const ZL_PARTICIPANT_READ: i32 = 1;
/// A Curator write lock's node (`__WRIT__`).
pub const ZL_PARTICIPANT_WRITE: i32 = 2;
/// A semaphore lease, or a wait for one.
pub const ZL_PARTICIPANT_LEASE: i32 = 3;
/// In `zl_inspect`'s records only: a node named by neither kazoo's nor Curator's scheme.
pub const ZL_SCHEME_OTHER: i32 = 2;

fn kind_code(kind: ParticipantKind) -> i32 {
    match kind {
        ParticipantKind::Lock => ZL_PARTICIPANT_LOCK,
        ParticipantKind::Read => ZL_PARTICIPANT_READ,
        ParticipantKind::Write => ZL_PARTICIPANT_WRITE,
        ParticipantKind::Lease => ZL_PARTICIPANT_LEASE,
    }
}

fn scheme_code(scheme: Option<Scheme>) -> i32 {
    match scheme {
        Some(Scheme::Kazoo) => ZL_SCHEME_KAZOO,
        Some(Scheme::Curator) => ZL_SCHEME_CURATOR,
        _ => ZL_SCHEME_OTHER,
    }
}

/// The holders, then the waiters, of the lock or semaphore at `path`, in
/// queue order (empty if nothing is there), as a buffer to free with
/// `zl_bytes_free`. Per participant, in this order: node (text), kind
/// (`ZL_PARTICIPANT_*`, i32), holds (u8: 1 holds, 0 waits), identifier
/// (text: the node's data), session id (i64: the node's ephemeralOwner, 0
/// for a persistent node), scheme (`ZL_SCHEME_*`, i32), created (i64:
/// milliseconds since 1970 by the server's clock, the node's ctime), fencing
/// token (i64: its czxid). A text is a little-endian u32 byte length then
/// UTF-8; numbers are little-endian.
///
/// # Safety
/// `session` must be a live handle; `path` valid for `path_len` bytes; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_inspect(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?;
        args::need(out_ptr, "out_ptr")?;
        args::need(out_len, "out_len")?;
        let participants = runtime::block_on(zoolock::inspect(session, path))?;
        let mut record = args::Record::default();
        for p in participants {
            let created = p.created.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            record
                .text(&p.node)
                .i32(kind_code(p.kind))
                .u8(p.holds as u8)
                .text(&p.identifier)
                .i64(p.session_id)
                .i32(scheme_code(p.scheme))
                .i64(created)
                .i64(p.fencing_token);
        }
        args::give(record.0, out_ptr, out_len, "participants")
    })
}

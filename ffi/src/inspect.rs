//! Who holds and who waits on a lock or semaphore path, from the path alone
//! (`zoolock::inspect`): the operator's view, as one buffer of records.

use std::time::UNIX_EPOCH;

use zoolock::{runtime, Scheme};

use crate::args;
use crate::castable;
use crate::session::ZlSession;
use crate::status::guard;

/// In `zl_inspect`'s records only: a node named by neither kazoo's nor
/// Curator's scheme (the others, `ZL_SCHEME_*`, are the core's `Scheme` codes).
pub const ZL_SCHEME_OTHER: i32 = 2;

const _: () = assert!(Scheme::from_code(ZL_SCHEME_OTHER).is_none(), "a Scheme has the code of ZL_SCHEME_OTHER");

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
        let participants = runtime::wait(zoolock::inspect(session, path))?;
        let mut record = args::Record::default();
        for p in participants {
            let created = p.created.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64);
            record
                .text(&p.node)
                .i32(p.kind.code())
                .u8(p.holds as u8)
                .text(&p.identifier)
                .i64(p.session_id)
                .i32(p.scheme.map_or(ZL_SCHEME_OTHER, Scheme::code))
                .i64(created)
                .i64(p.fencing_token);
        }
        args::give(record.0, out_ptr, out_len, "participants")
    })
}

//! The core's kazoo leases (`NonBlockingLease`, `MultiNonBlockingLease`)
//! as one blocking, cancellable call: `zl_lease_try`.

use std::time::{Duration, UNIX_EPOCH};

use zoolock::runtime;

use crate::args;
use crate::cancel::{cancellable, Stops, ZlCancel};
use crate::castable;
use crate::session::ZlSession;
use crate::status::{guard, Failure};

/// One try at kazoo's `NonBlockingLease` on `path` (with `count` > 0, kazoo's
/// `MultiNonBlockingLease` over `path/0` … `path/<count - 1>`) for
/// `duration_ms` from `now_ms` (milliseconds since 1970, UTC: the caller's
/// clock): `*out_obtained` is 1 if obtained or renewed (the same
/// `identifier` holds it), 0 if another holds it until later.
///
/// # Safety
/// `session` must be a live handle; the byte ranges valid; `cancel` null or live; `out_obtained` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_lease_try(
    session: *const ZlSession,
    path: *const u8,
    path_len: u32,
    identifier: *const u8,
    identifier_len: u32,
    duration_ms: i64,
    now_ms: i64,
    count: u32,
    cancel: *const ZlCancel,
    out_obtained: *mut u8,
) -> i32 {
    guard(|| {
        let session = castable::borrow(session)?.session.clone();
        let path = zoolock::path_from_utf8(args::bytes(path, path_len, "path")?)?.to_owned();
        let identifier = args::text(identifier, identifier_len, "identifier")?.to_owned();
        let duration = u64::try_from(duration_ms)
            .map(Duration::from_millis)
            .map_err(|_| Failure::invalid(format!("duration_ms must be 0 or more, got {duration_ms}")))?;
        let now = u64::try_from(now_ms)
            .map(|ms| UNIX_EPOCH + Duration::from_millis(ms))
            .map_err(|_| Failure::invalid(format!("now_ms must be 0 or more, got {now_ms}")))?;
        args::need(out_obtained, "out_obtained")?;
        let cancel = Stops::new(cancel.as_ref());
        let work = async move {
            match count {
                0 => zoolock::try_lease(&session, &path, duration, &identifier, now).await,
                count => zoolock::try_multi_lease(&session, count, &path, duration, &identifier, now).await,
            }
        };
        let obtained = runtime::wait(cancellable(work, cancel, || Some(Failure::cancelled("lease try"))))?;
        args::put(out_obtained, obtained as u8, "out_obtained")
    })
}

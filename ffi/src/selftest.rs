//! The library's version, and a deliberate panic so that bindings can test
//! that a panic inside zoolock reaches them as `ZL_PANIC`, not a crash.

use std::ffi::c_void;

use crate::args::{self, UserData};
use crate::dispatch;
use crate::holder::{acquired, ZlAcquireCallback};
use crate::status::guard;

static VERSION: &str = env!("CARGO_PKG_VERSION");

/// zoolock's version as UTF-8 (static storage: do not free).
///
/// # Safety
/// Out-pointers must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_version(out_ptr: *mut *const u8, out_len: *mut u32) -> i32 {
    guard(|| {
        args::put(out_ptr, VERSION.as_ptr(), "out_ptr")?;
        args::put(out_len, VERSION.len() as u32, "out_len")
    })
}

/// Panics inside zoolock on purpose, for tests of the boundary: with
/// `in_task` 0 in this call (which returns `ZL_PANIC`), otherwise inside an
/// asynchronous task whose `callback` then receives `ZL_PANIC` (this call
/// returns `ZL_OK`).
///
/// # Safety
/// `user_data` must stay valid until the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_selftest_panic(in_task: u8, callback: ZlAcquireCallback, user_data: *mut c_void) -> i32 {
    guard(|| {
        if in_task == 0 {
            panic!("zl_selftest_panic, as asked");
        }
        dispatch::complete_later::<bool, _, _>(
            async { panic!("zl_selftest_panic in a task, as asked") },
            acquired(callback, UserData(user_data)),
        );
        Ok(())
    })
}

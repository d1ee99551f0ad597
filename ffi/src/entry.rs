//! One declaration per callback-completed entry point: `async_entry!`
//! writes its C signature's trailer (`cancel`, `callback`, `user_data`),
//! `#[no_mangle]` and `extern "C"`, and hands the body the three as one
//! [`Completion`]. `scripts/codegen.sh` expands the same declarations for
//! cbindgen and csbindgen, which read source (codegen/src/entry.rs).

use std::ffi::c_void;
use std::future::Future;

use crate::args::UserData;
use crate::cancel::{Stops, ZlCancel};
use crate::status::FfiResult;
use crate::znode::{reply_later, Reply, ZlResultCallback};

/// What ends a callback-completed call: its callback with the caller's
/// data, called exactly once, or its cancel token (may be null) first.
pub(crate) struct Completion {
    pub(crate) cancel: *const ZlCancel,
    pub(crate) callback: ZlResultCallback,
    pub(crate) user_data: *mut c_void,
}

impl Completion {
    /// Starts `work` and returns at once ([`reply_later`]), naming it `what`
    /// if cancelled.
    ///
    /// # Safety
    /// `cancel` null or live until the callback.
    pub(crate) unsafe fn start<T: Send + 'static>(
        self,
        work: impl Future<Output = zoolock::Result<T>> + Send + 'static,
        what: String,
        reply: impl FnOnce(T) -> Reply + Send + 'static,
    ) -> FfiResult {
        reply_later(work, what, Stops::new(self.cancel.as_ref()), self.callback, UserData(self.user_data), reply)
    }
}

/// `async_entry! { /// docs  fn zl_x_async(handle: *const ZlX, …) |completion| { … } }`:
/// the entry point `zl_x_async(handle, …, cancel, callback, user_data) -> i32`.
macro_rules! async_entry {
    ($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),* $(,)?) |$completion:ident| $body:block) => {
        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            $($arg: $ty,)*
            cancel: *const $crate::cancel::ZlCancel,
            callback: $crate::znode::ZlResultCallback,
            user_data: *mut ::std::ffi::c_void,
        ) -> i32 {
            let $completion = $crate::entry::Completion { cancel, callback, user_data };
            $body
        }
    };
}

pub(crate) use async_entry;

//! One declaration per entry point that follows a pattern: `async_entry!`
//! writes a callback-completed call's trailer (`cancel`, `callback`,
//! `user_data`) and hands the body the three as one [`Completion`];
//! `path_entry!` writes a blocking call on a node's path: the handle
//! borrowed, the path checked, the body under [`guard`](crate::status::guard);
//! `new_entry!` writes a recipe's `_new`: the session borrowed, the path
//! read, the handle the body makes given out.
//! Both write `#[no_mangle]` and `extern "C"`. `scripts/codegen.sh` expands
//! the same declarations for cbindgen and csbindgen, which read source
//! (codegen/src/entry.rs).

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

/// `path_entry! { /// docs  fn zl_x(handle: *const ZlX, path, …) |x, path| { … } }`:
/// the blocking entry point `zl_x(handle, path, path_len, …) -> i32`, its
/// body given the borrowed handle and the path as `&str`.
macro_rules! path_entry {
    ($(#[$attr:meta])* fn $name:ident($handle:ident: $handle_ty:ty, path $(, $arg:ident: $ty:ty)* $(,)?) |$borrowed:ident, $path:ident| $body:block) => {
        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $name($handle: $handle_ty, path: *const u8, path_len: u32, $($arg: $ty,)*) -> i32 {
            $crate::status::guard(|| {
                let $borrowed = $crate::castable::borrow($handle)?;
                let $path = $crate::znode::node_path(path, path_len)?;
                $body
            })
        }
    };
}

pub(crate) use path_entry;

/// `new_entry! { /// docs  fn zl_x_new(session, path, …) -> out_x: ZlX |session, path| { … } }`:
/// the entry point `zl_x_new(session, path, path_len, …, out_x) -> i32`,
/// its body given the session and the path as `&str`, returning the handle.
macro_rules! new_entry {
    ($(#[$attr:meta])* fn $name:ident(session, path $(, $arg:ident: $ty:ty)* $(,)?) -> $out:ident: $out_ty:ty |$session:ident, $path:ident| $body:block) => {
        $(#[$attr])*
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            session: *const $crate::session::ZlSession,
            path: *const u8,
            path_len: u32,
            $($arg: $ty,)*
            $out: *mut *mut $out_ty,
        ) -> i32 {
            $crate::recipe::new_recipe(session, path, path_len, $out, stringify!($out), |$session, $path| $body)
        }
    };
}

pub(crate) use new_entry;

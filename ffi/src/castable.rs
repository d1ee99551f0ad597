//! How each opaque type crosses the boundary, said once (rustls-ffi's
//! `Castable`): every handle (`ZlSession`, `ZlHolder`, `ZlCancel`) is a `Box`
//! that the caller owns from its `_new`/`_connect` to its `_free`. Entry
//! points borrow it with [`borrow`], which turns null into
//! `ZL_INVALID_ARGUMENT` naming the handle; constructors hand it out with
//! [`give`]; `_free` takes it back with [`free`], ignoring null. No `Arc`
//! crosses: the core's handles are cheap clones already, so a handle that
//! work outlives (an asynchronous acquire) clones what it needs inside.

use crate::args;
use crate::status::{Failure, FfiResult};

/// An opaque type the caller holds a pointer to.
pub trait Castable: Sized {
    /// Its name in messages: "holder handle is null".
    const NAME: &'static str;
}

/// The handle behind `ptr`, borrowed for one call.
///
/// # Safety
/// A non-null `ptr` must come from [`give`] and not be freed.
pub unsafe fn borrow<'a, T: Castable>(ptr: *const T) -> FfiResult<&'a T> {
    ptr.as_ref().ok_or_else(|| Failure::invalid(format!("{} handle is null", T::NAME)))
}

/// Hands a new handle to the caller through `out`, who frees it with the
/// type's `_free`.
///
/// # Safety
/// A non-null `out` must be valid for writes.
pub unsafe fn give<T: Castable>(value: T, out: *mut *mut T, what: &str) -> FfiResult {
    args::need(out, what)?;
    args::put(out, Box::into_raw(Box::new(value)), what)
}

/// Takes a handle back from the caller and drops it. Null is ignored.
///
/// # Safety
/// A non-null `ptr` must come from [`give`], freed once, with no call on it in flight.
pub unsafe fn free<T: Castable>(ptr: *mut T) {
    if !ptr.is_null() {
        drop(Box::from_raw(ptr));
    }
}

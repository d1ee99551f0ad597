//! Status codes, the calling thread's last error message, and the guard that
//! every entry point runs in: it turns errors and panics into status codes.
//! A failure's code is its `zoolock::ErrorKind`'s (the core numbers the
//! kinds, and only ever appends); `ZL_OK` and `ZL_PANIC` are the ABI's own.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use zoolock::{Error, ErrorKind};

/// The call succeeded.
pub const ZL_OK: i32 = 0;
/// zoolock panicked; the panic was caught and the process is unharmed.
pub const ZL_PANIC: i32 = 14;

// Every other status is the code of a `zoolock::ErrorKind` (`ZL_<NAME>` in
// the header): neither of the ABI's own two may be one.
const _: () = {
    let mut i = 0;
    while i < ErrorKind::ALL.len() {
        let code = ErrorKind::ALL[i].code();
        assert!(code != ZL_OK && code != ZL_PANIC, "an ErrorKind has the code of ZL_OK or ZL_PANIC");
        i += 1;
    }
};

/// A failure on its way to the caller: a status code and its message.
#[derive(Debug, Clone)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure { code: ErrorKind::InvalidArgument.code(), message: message.into() }
    }

    /// A call given up when its cancel token fired: `what` names it.
    pub fn cancelled(what: impl std::fmt::Display) -> Failure {
        Failure {
            code: ErrorKind::Cancelled.code(),
            message: format!("{what} was cancelled: a request already sent may still take effect"),
        }
    }

    pub fn panic(payload: Box<dyn Any + Send>) -> Failure {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        Failure { code: ZL_PANIC, message: format!("zoolock panicked: {what}") }
    }
}

impl From<Error> for Failure {
    fn from(error: Error) -> Failure {
        Failure { code: error.kind().code(), message: error.to_string() }
    }
}

pub type FfiResult<T = ()> = Result<T, Failure>;

thread_local! {
    static LAST_ERROR: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Runs an entry point's body: `ZL_OK`, or the failure's code with its
/// message kept for `zl_last_error`. A panic becomes `ZL_PANIC`.
pub fn guard(body: impl FnOnce() -> FfiResult) -> i32 {
    let outcome = catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| Err(Failure::panic(payload)));
    match outcome {
        Ok(()) => ZL_OK,
        Err(failure) => {
            LAST_ERROR.with(|last| *last.borrow_mut() = failure.message.into_bytes());
            failure.code
        }
    }
}

/// Runs a `void` entry point (the free functions): a panic is swallowed.
pub fn guard_void(body: impl FnOnce()) {
    let _ = catch_unwind(AssertUnwindSafe(body));
}

/// The message of the calling thread's last failed call, as UTF-8: `*out_ptr`
/// points into storage owned by zoolock, valid on this thread until its next
/// failing call. Empty if no call failed yet.
///
/// # Safety
/// `out_ptr` and `out_len` must be valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_last_error(out_ptr: *mut *const u8, out_len: *mut u32) -> i32 {
    guard(|| {
        if out_ptr.is_null() || out_len.is_null() {
            return Err(Failure::invalid("zl_last_error: null out-pointer"));
        }
        LAST_ERROR.with(|last| {
            let last = last.borrow();
            *out_ptr = last.as_ptr();
            *out_len = u32::try_from(last.len()).unwrap_or(u32::MAX);
        });
        Ok(())
    })
}

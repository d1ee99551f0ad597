//! Status codes, the calling thread's last error message, and the guard that
//! every entry point runs in: it turns errors and panics into status codes.
//! `zoolock::Error` is mapped to a code here and nowhere else. Codes are only
//! ever appended: a caller built against an older list keeps working.

use std::any::Any;
use std::cell::RefCell;
use std::panic::{catch_unwind, AssertUnwindSafe};

use zoolock::Error;

/// The call succeeded.
pub const ZL_OK: i32 = 0;
/// A lock or semaphore path ZooKeeper would refuse (empty, relative, `/`, `//`, reserved, too long, not UTF-8).
pub const ZL_INVALID_PATH: i32 = 1;
/// A connect string with no host, a bad port or a bad chroot.
pub const ZL_INVALID_CONNECT_STRING: i32 = 2;
/// Any other bad argument: a null handle or out-pointer, a connect string or identifier not UTF-8, a negative timeout, an unknown kind.
pub const ZL_INVALID_ARGUMENT: i32 = 3;
/// No server answered within the connect timeout.
pub const ZL_CONNECT_TIMEOUT: i32 = 4;
/// The chroot of the connect string does not exist on the server.
pub const ZL_NO_CHROOT: i32 = 5;
/// The connection stayed down longer than a request may wait.
pub const ZL_CONNECTION_LOSS: i32 = 6;
/// The acquire was cancelled (`zl_cancel_fire`, `zl_holder_cancel`); it left no node.
pub const ZL_CANCELLED: i32 = 7;
/// The session was closed.
pub const ZL_CLOSED: i32 = 8;
/// This process was forked after zoolock started in its parent.
pub const ZL_FORKED: i32 = 9;
/// The session's credentials do not allow the operation.
pub const ZL_NO_AUTH: i32 = 10;
/// ZooKeeper refused the session's credentials.
pub const ZL_AUTH_FAILED: i32 = 11;
/// The semaphore's pool node was set up for another number of leases.
pub const ZL_INCONSISTENT_LEASES: i32 = 12;
/// Another failure of a ZooKeeper request, with no code of its own (a quota, …): the message says which.
pub const ZL_ZOOKEEPER: i32 = 13;
/// zoolock panicked; the panic was caught and the process is unharmed.
pub const ZL_PANIC: i32 = 14;
/// A release of a reentrant lock by another owner than the one holding it; the hold is untouched.
pub const ZL_NOT_OWNER: i32 = 15;
/// A node a request needed is not there (a lock path's ancestor or the chroot, deleted after the session connected).
pub const ZL_NO_NODE: i32 = 16;
/// A node zoolock meant to create exists already.
pub const ZL_NODE_EXISTS: i32 = 17;
/// A write conditional on a node's version found another version.
pub const ZL_BAD_VERSION: i32 = 18;
/// A delete of a node that has children.
pub const ZL_NOT_EMPTY: i32 = 19;
/// The session expired before the request was answered; the session connects a new one by itself.
pub const ZL_SESSION_EXPIRED: i32 = 20;
/// A fenced write by a holder or leadership that no longer holds: nothing of it was made.
pub const ZL_NOT_HELD: i32 = 21;
/// A TLS connect failed (an untrusted or misnamed server certificate, a refused or unreadable client certificate or key, a wrong key password, TLS against a plaintext port or the reverse, `verify_certs` off): the message says why.
/// (22, not 21: main took 21 for `ZL_NOT_HELD` while this was written; codes are only appended.)
pub const ZL_TLS: i32 = 22;
/// A create below an ephemeral node: ephemeral nodes cannot have children.
pub const ZL_NO_CHILDREN_FOR_EPHEMERALS: i32 = 23;
/// ZooKeeper refused an ACL (empty, an unknown scheme, a malformed id).
pub const ZL_INVALID_ACL: i32 = 24;

/// The code of an error: the one mapping of `zoolock::Error` in the ABI.
pub fn code(error: &Error) -> i32 {
    match error {
        Error::InvalidPath { .. } => ZL_INVALID_PATH,
        Error::InvalidConnectString { .. } => ZL_INVALID_CONNECT_STRING,
        Error::InvalidArgument(_) => ZL_INVALID_ARGUMENT,
        Error::ConnectTimeout { .. } => ZL_CONNECT_TIMEOUT,
        Error::NoChroot(_) => ZL_NO_CHROOT,
        Error::ConnectionLoss(_) => ZL_CONNECTION_LOSS,
        Error::Cancelled { .. } => ZL_CANCELLED,
        Error::Closed => ZL_CLOSED,
        Error::NotOwner { .. } => ZL_NOT_OWNER,
        Error::Forked { .. } => ZL_FORKED,
        Error::NoAuth { .. } => ZL_NO_AUTH,
        Error::AuthFailed => ZL_AUTH_FAILED,
        Error::InconsistentLeases { .. } => ZL_INCONSISTENT_LEASES,
        Error::NoNode { .. } => ZL_NO_NODE,
        Error::NodeExists { .. } => ZL_NODE_EXISTS,
        Error::BadVersion { .. } => ZL_BAD_VERSION,
        Error::NotEmpty { .. } => ZL_NOT_EMPTY,
        Error::SessionExpired { .. } => ZL_SESSION_EXPIRED,
        Error::NotHeld { .. } => ZL_NOT_HELD,
        Error::ZooKeeper { .. } => ZL_ZOOKEEPER,
        Error::Tls { .. } => ZL_TLS,
        Error::NoChildrenForEphemerals { .. } => ZL_NO_CHILDREN_FOR_EPHEMERALS,
        Error::InvalidAcl { .. } => ZL_INVALID_ACL,
        // `Error` is non_exhaustive: a kind the core adds is a ZooKeeper failure until it gets a code.
        _ => ZL_ZOOKEEPER,
    }
}

/// A failure on its way to the caller: a status code and its message.
#[derive(Debug, Clone)]
pub struct Failure {
    pub code: i32,
    pub message: String,
}

impl Failure {
    pub fn invalid(message: impl Into<String>) -> Failure {
        Failure { code: ZL_INVALID_ARGUMENT, message: message.into() }
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
        Failure { code: code(&error), message: error.to_string() }
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

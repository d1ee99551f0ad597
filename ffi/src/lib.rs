//! zoolock's C ABI, for .NET (through the P/Invoke file `build.rs` generates
//! into `dotnet/`) and any other C caller.
//!
//! - **Handles** are opaque pointers made by `zl_session_connect`,
//!   `zl_lock_new`, `zl_semaphore_new`, `zl_cancel_new` and freed by the
//!   matching `_free` (null is ignored).
//! - **Every call returns a status** (`ZL_OK` or a `ZL_*` error code, see
//!   `status.rs`); `zl_last_error` gives the calling thread's last message.
//!   A panic never crosses the boundary: it becomes `ZL_PANIC`.
//! - **Strings** are UTF-8 as pointer + `u32` length; results that zoolock
//!   allocates are freed with `zl_bytes_free`. No `usize`/`isize` anywhere.
//! - **Blocking** acquires take a timeout in milliseconds and a cancel token
//!   that another thread may fire; `_acquire_async` calls back once instead.
//! - **Notifications**: `zl_session_set_listener` and `zl_lock_set_listener`
//!   report session states and a hold's suspension or loss. Every callback
//!   runs on one thread of zoolock's; `zl_shutdown` stops it at exit.
//!
//! Every decision about locking is the core's (`zoolock`); this crate only
//! translates types, errors and the blocking/callback style.

mod args;
mod dispatch;
mod listener;
mod lock;
mod recipe;
mod selftest;
mod semaphore;
mod session;
mod status;
#[cfg(test)]
mod tests;

pub use args::zl_bytes_free;
pub use dispatch::zl_shutdown;
pub use listener::ZlStateCallback;
pub use lock::*;
pub use recipe::{zl_cancel_fire, zl_cancel_free, zl_cancel_new, ZlAcquireCallback, ZlCancel};
pub use recipe::{
    ZL_LOCK_HELD, ZL_LOCK_LOST_LEASE_EXPIRED, ZL_LOCK_LOST_NODE_DELETED, ZL_LOCK_LOST_SESSION_CLOSED,
    ZL_LOCK_LOST_SESSION_EXPIRED, ZL_LOCK_RELEASED, ZL_LOCK_SUSPENDED,
};
pub use selftest::*;
pub use semaphore::*;
pub use session::*;
pub use status::*;

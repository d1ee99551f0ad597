//! zoolock's C ABI, for .NET (through the P/Invoke file `scripts/codegen.sh`
//! generates into `dotnet/`) and any other C caller (through
//! `include/zoolock.h`, which it generates too).
//!
//! - **Handles** are opaque pointers made by `zl_session_connect` (or `zl_session_connect_with` a
//!   `ZlSessionOptions` from `zl_session_options_new`),
//!   `zl_cancel_new`, and `zl_lock_new`, `zl_multi_lock_new` or `zl_semaphore_new` (each makes a
//!   `ZlHolder`), freed by the matching `_free` (null is ignored);
//!   `castable.rs` says once how every handle crosses the boundary.
//! - **Znodes** on a session, `zl_session_exists`/`get`/`set`/`create`/
//!   `delete`/`children` (`znode.rs`); `ZlTransaction`s commit several
//!   writes as one, and `zl_holder_fenced`/`zl_leadership_fenced` make one
//!   that commits only while a hold lasts (`ZL_NOT_HELD` otherwise). Each
//!   has an `_async` form completed by a `ZlResultCallback`.
//! - **Barriers**: a `ZlBarrier` and a `ZlDoubleBarrier` member (kazoo's
//!   `Barrier` and `DoubleBarrier`), waits completed by a `ZlResultCallback` (`recipe/barrier.rs`).
//! - **Queues and parties**: a `ZlQueue`, a `ZlLockingQueue` consumer and a
//!   `ZlParty` member (kazoo's `Queue`, `LockingQueue`, `Party` and
//!   `ShallowParty`), calls completed the same way (`recipe/queue.rs`, `recipe/party.rs`); a
//!   `ZlPersistentNode` and a `ZlLeaderLatch` (Curator's, `recipe/`).
//! - **Elections**: a `ZlElection` candidate leads (`zl_election_lead`, as
//!   an acquire) and each term won is a `ZlLeadership` (`recipe/election.rs`).
//! - **Holders**: a lock or semaphore is one `ZlHolder` with one set of
//!   entry points, `zl_holder_*`; the lock-only queries, `zl_lock_*`,
//!   refuse a semaphore holder with `ZL_INVALID_ARGUMENT`.
//! - **Every call returns a status** (`ZL_OK` or a `ZL_*` error code: the
//!   code of the failure's `zoolock::ErrorKind`, see `status.rs`);
//!   `zl_last_error` gives the calling thread's last message.
//!   A panic never crosses the boundary: it becomes `ZL_PANIC`.
//! - **Strings** are UTF-8 as pointer + `u32` length; results that zoolock
//!   allocates are freed with `zl_bytes_free`. No `usize`/`isize` anywhere.
//! - **Blocking** acquires take a timeout in milliseconds and a cancel token
//!   that another thread may fire; each `_async` entry point (acquire, lead,
//!   znode calls, commit, `zl_session_connect_async`) calls back once
//!   instead, and its token ends it (`cancel.rs` says how, once).
//! - **Notifications**: `zl_session_set_listener` and `zl_holder_set_listener`
//!   report session states and a hold's suspension or loss;
//!   `zl_set_log_callback` passes on zoolock's log events. Callbacks run
//!   one at a time, in order, on a thread of zoolock's that ends when idle;
//!   `zl_shutdown` stops it at exit.
//! - **Operators**: `zl_session_metrics` (the session's counters) and
//!   `zl_inspect` (who holds and waits on a path) return record buffers.
//!
//! Every decision about locking is the core's (`zoolock`); this crate only
//! translates types, errors and the blocking/callback style.

mod args;
mod cancel;
mod castable;
mod dispatch;
mod entry;
mod holder;
mod inspect;
mod listener;
mod logs;
mod options;
mod recipe;
mod selftest;
mod session;
mod status;
#[cfg(test)]
mod tests;
mod transaction;
mod znode;

pub use args::zl_bytes_free;
pub use cancel::*;
pub use dispatch::zl_shutdown;
pub use holder::*;
pub use inspect::*;
pub use listener::ZlStateCallback;
pub use logs::*;
pub use options::*;
pub use recipe::*;
pub use selftest::*;
pub use session::*;
pub use status::*;
pub use transaction::*;
pub use znode::*;

//! zoolock: one correct ZooKeeper lock for Rust, Python and .NET.
//!
//! A [`Session`] is one ZooKeeper session shared by every lock of a process;
//! it reopens itself after expiry. A [`Lock`] is kazoo's `Lock`, `ReadLock`
//! or `WriteLock` (and can name its nodes Curator's way), a [`Semaphore`] is
//! kazoo's `Semaphore`. Every call has an async form and a `_blocking` one;
//! [`Lock::hold`] returns a [`Hold`] that releases when dropped.
//!
//! ```
//! use zoolock::{Acquire, Lock, Session, SessionOptions};
//! # fn main() -> zoolock::Result<()> {
//! # // A real server for the example (Debian's ZooKeeper, started by the harness).
//! # let connect = zk_harness::shared().connect_string();
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let session = Session::connect(SessionOptions::new(connect)).await?; // "zk1:2181,zk2:2181/app"
//! let lock = Lock::mutex_with_identifier(&session, "/locks/ledger", "worker-1")?;
//! if let Some(hold) = lock.hold(Acquire::default()).await? {
//!     let token = hold.fencing_token();
//!     // … write to the guarded resource, passing `token` along …
//!     hold.release().await?; // or drop it: released in the background
//! }
//! session.close().await;
//! # Ok(()) })
//! # }
//! ```
//!
//! The same without a runtime:
//!
//! ```
//! use std::time::Duration;
//! use zoolock::{Acquire, Lock, Session, SessionOptions};
//! # fn main() -> zoolock::Result<()> {
//! # let connect = zk_harness::shared().connect_string();
//! let session = Session::connect_blocking(SessionOptions::new(connect))?;
//! let lock = Lock::mutex(&session, "/locks/ledger")?;
//! assert!(lock.acquire_blocking(Acquire::timeout(Duration::from_secs(5)))?);
//! assert!(lock.is_acquired());
//! lock.release_blocking()?;
//! session.close_blocking();
//! # Ok(())
//! # }
//! ```
//!
//! The session also reads and writes plain znodes with kazoo's operations
//! ([`Session::get`], [`Session::create`], [`Transaction`], [`Session::retry`], …),
//! runs kazoo's [`DataWatch`] and [`ChildrenWatch`], leader [`Election`], and
//! writes that commit only while a lock is held ([`Lock::fenced`]).
//!
//! Bad input ends in a typed [`Error`] before any network call; see
//! [`validate_path`] and [`SessionOptions`]. Node names and queue order,
//! shared with kazoo and Curator, are in [`naming`]; [`runtime`] is the
//! runtime behind the `_blocking` calls. [`inspect`] shows who holds and who
//! waits on a path, for operators; [`metrics`] lists what the core counts.

#![warn(missing_docs)]
// C-DEBUG: a user's `#[derive(Debug)]` struct may hold any public type.
#![deny(missing_debug_implementations)]

mod codes;
mod contender;
mod error;
mod events;
mod holder;
mod inline;
mod inspect;
pub mod logging;
pub mod metrics;
mod mirror;
pub mod naming;
mod one_shot;
mod options;
mod per_path;
mod recipe;
pub mod runtime;
mod security;
mod session;
mod state;
mod watchers;
mod znode;

pub use error::{Error, ErrorKind, Result};
pub use holder::{Acquire, BoxFuture, Hold, Holder, Owner};
pub use inspect::{inspect, Inspector, Participant, ParticipantKind};
#[doc(hidden)]
pub use mirror::{adaptive_switches, designs_queued};
pub use naming::Scheme;
pub use one_shot::OneShot;
pub use options::{
    connect_string_parts, path_from_utf8, timeout_from_secs, validate_identifier, validate_node_path, validate_path,
    ClientId, SessionOptions, HEALTHY_CONNECT, MAX_IDENTIFIER_BYTES, MAX_PATH_BYTES, MAX_SESSION_TIMEOUT,
};
// Whatever recipe/mod.rs exports: a new recipe is named there only.
pub use recipe::*;
pub use security::{Pem, SaslMechanism, SaslOptions, Secret, TlsOptions};
pub use session::{boot_clock, Confirmed, Session};
pub use state::{LockState, LostReason, Outcome, SessionState, Status};
pub use watchers::{ChildrenWatch, DataWatch, WatchEvent, WatchEventKind};
pub use znode::{parse_version, permission_bits, permission_from_bits, Create, OpResult, Retry, Stat, Transaction};
// Shown as zoolock's own: they are the types of zoolock's copy of zookeeper-client
// (zoolock-zookeeper-client), which cargo keeps apart from the `zookeeper-client` crate's.
#[doc(inline)]
pub use zookeeper_client::{Acl, AuthId, Permission};

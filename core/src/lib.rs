//! zoolock: one correct ZooKeeper lock for Rust, Python and .NET.
//!
//! A [`Session`] is one ZooKeeper session shared by every lock of a process;
//! it reopens itself after expiry. A [`Lock`] is kazoo's `Lock`, `ReadLock`
//! or `WriteLock` (and can name its nodes Curator's way), a [`Semaphore`] is
//! kazoo's `Semaphore`. Every call has an async form and a `_blocking` one.
//!
//! ```no_run
//! use zoolock::{Acquire, Lock, Session, SessionOptions};
//! # async fn demo() -> zoolock::Result<()> {
//! let session = Session::connect(SessionOptions::new("127.0.0.1:2181")).await?;
//! let lock = Lock::mutex(&session, "/locks/ledger")?;
//! if lock.acquire(Acquire::default()).await? {
//!     let token = lock.fencing_token().unwrap();
//!     // … write to the guarded resource, passing `token` along …
//!     lock.release().await?;
//! }
//! # Ok(()) }
//! ```

mod cleanup;
mod error;
mod events;
mod holder;
mod lock;
pub mod naming;
mod options;
pub mod runtime;
mod semaphore;
mod session;

pub use error::{Error, Result};
pub use holder::{Acquire, LockState, LostReason, Outcome, Owner};
pub use lock::{Kind, Lock, LockConfig};
pub use naming::Scheme;
pub use options::{
    path_from_utf8, timeout_from_secs, validate_identifier, validate_path, SessionOptions, MAX_IDENTIFIER_BYTES,
    MAX_PATH_BYTES, MAX_SESSION_TIMEOUT,
};
pub use semaphore::Semaphore;
pub use session::{Session, SessionState, Status};
pub use zookeeper_client::{Acl, AuthId, Permission};

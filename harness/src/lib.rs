//! Test harness for zoolock: real ZooKeeper servers (Debian's `zookeeper`
//! 3.8 package) behind per-server TCP proxies that can partition, reset or
//! expire one client session at a time.
//!
//! ```no_run
//! let zk = zk_harness::shared();            // one standalone server per test process
//! let connect = zk.connect_string();        // through the proxies
//! # let session_id = 0;
//! zk.partition(session_id).unwrap();        // black-hole that client
//! zk.heal(session_id).unwrap();
//! zk.expire(session_id).unwrap();           // the client will see Expired
//! ```
//!
//! Every method blocks the calling thread (servers start in seconds); the
//! proxies run on the harness's own runtime, so the methods work from plain
//! tests and from any async runtime. In an async test prefer a multi-thread
//! runtime (or `spawn_blocking`) around slow calls such as `restart`, so the
//! client under test keeps running meanwhile.

mod cpu;
mod ensemble;
mod error;
mod expire;
mod fault;
mod fourlw;
mod jute;
pub mod net;
mod options;
mod proxy;
mod raw;
mod registry;
mod relay;
mod server;
mod spawner;
mod startup;
mod tempdir;
pub mod tls;

pub use cpu::cpu_seconds;
pub use ensemble::Ensemble;
pub use error::{Error, Result};
pub use fault::{FaultId, FaultKind, FaultReport, FaultState, Landing, Op, PickedRequest, Select};
pub use net::Net;
pub use options::{Options, Sasl, Tls};
pub use raw::{NodeAcl, TreeNode};
pub use relay::DelayRelay;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// A standalone server shared by every test of this process, started on
/// first use with the default [`Options`]. It lives until the process exits
/// (the JVM dies with it). Tests sharing it should use distinct paths, e.g.
/// from [`unique_path`]. Panics if the server cannot start.
pub fn shared() -> &'static Ensemble {
    static SHARED: OnceLock<Result<Ensemble>> = OnceLock::new();
    match SHARED.get_or_init(|| Ensemble::start(1, Options::default())) {
        Ok(ensemble) => ensemble,
        Err(e) => panic!("zk-harness: cannot start the shared ZooKeeper server: {e}"),
    }
}

/// A znode path unique within this process: `/<name>-<pid>-<n>`.
pub fn unique_path(name: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("/{name}-{}-{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed))
}

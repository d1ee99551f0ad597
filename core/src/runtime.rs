//! The one tokio runtime that runs zoolock's I/O and background work.
//!
//! Sessions, watchers and guaranteed deletes live here rather than on the
//! caller's runtime, so they outlive any caller's runtime, and dropping a lock
//! on a thread without a tokio context never panics.

use std::future::Future;
use std::sync::OnceLock;

use tokio::runtime::{Builder, Handle, Runtime};
use tokio::task::JoinHandle;

fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("zoolock-io")
            .enable_all()
            .build()
            .expect("zoolock cannot start its I/O runtime")
    })
}

pub fn handle() -> &'static Handle {
    runtime().handle()
}

pub fn spawn<F>(future: F) -> JoinHandle<F::Output>
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    handle().spawn(future)
}

/// Runs `future` to completion on the calling thread (the blocking API).
/// Must not be called from inside an async task.
pub fn block_on<F: Future>(future: F) -> F::Output {
    handle().block_on(future)
}

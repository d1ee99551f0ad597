//! `zoolock._zoolock`: the Python module over zoolock's core. It translates
//! types, errors and the blocking/async style of kazoo's lock API; every
//! lock decision is the core's.

mod asyncio;
mod barrier;
mod client;
mod counter;
mod election;
mod errors;
mod holder;
mod inspect;
mod lease;
mod lock;
mod logging;
mod multi_lock;
mod party;
mod queue;
mod recipe;
mod security;
mod semaphore;
mod started;
mod wait;
mod znode;

use pyo3::prelude::*;

#[pymodule]
fn _zoolock(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install();
    m.add_class::<barrier::Barrier>()?;
    m.add_class::<barrier::DoubleBarrier>()?;
    m.add_class::<client::Client>()?;
    m.add_class::<counter::Counter>()?;
    m.add_class::<election::Election>()?;
    m.add_class::<election::TermFence>()?;
    m.add_class::<holder::Holder>()?;
    m.add_class::<holder::LostEvent>()?;
    m.add_class::<inspect::Participant>()?;
    m.add_class::<lock::Lock>()?;
    m.add_class::<lock::ReadLock>()?;
    m.add_class::<lock::WriteLock>()?;
    m.add_class::<multi_lock::MultiLock>()?;
    m.add_class::<party::Party>()?;
    m.add_class::<party::ShallowParty>()?;
    m.add_class::<queue::Queue>()?;
    m.add_class::<queue::LockingQueue>()?;
    m.add_class::<semaphore::Semaphore>()?;
    znode::register(m)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(lease::try_lease, m)?)?;
    let close_for_exit = wrap_pyfunction!(wait::_close_for_exit, m)?;
    m.py().import("atexit")?.call_method1("register", (close_for_exit,))?;
    Ok(())
}

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
mod persistent_node;
mod queue;
mod recipe;
mod security;
mod semaphore;
mod started;
mod wait;
mod znode;

use pyo3::prelude::*;

/// Adds the recipe classes to the module: their names, the module's
/// `__all__`, are what `zoolock` exports and binds to `KazooClient`
/// (`client.Barrier(path)`), so that a new recipe is named here and in its
/// stub only.
macro_rules! recipes {
    ($m:expr; $($class:ty),+ $(,)?) => {{
        let mut names = Vec::new();
        $(
            $m.add_class::<$class>()?;
            names.push($m.py().get_type::<$class>().name()?);
        )+
        names
    }};
}

#[pymodule]
fn _zoolock(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install();
    let recipes = recipes!(
        m;
        barrier::Barrier,
        barrier::DoubleBarrier,
        counter::Counter,
        lock::Lock,
        lock::ReadLock,
        lock::WriteLock,
        multi_lock::MultiLock,
        party::Party,
        party::ShallowParty,
        persistent_node::PersistentNode,
        queue::Queue,
        queue::LockingQueue,
        semaphore::Semaphore,
    );
    m.add_class::<client::Client>()?;
    m.add_class::<election::Election>()?;
    m.add_class::<election::TermFence>()?;
    m.add_class::<holder::Holder>()?;
    m.add_class::<holder::LostEvent>()?;
    m.add_class::<inspect::Participant>()?;
    znode::register(m)?;
    errors::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_function(wrap_pyfunction!(lease::try_lease, m)?)?;
    let close_for_exit = wrap_pyfunction!(wait::_close_for_exit, m)?;
    m.py().import("atexit")?.call_method1("register", (close_for_exit,))?;
    // Set last: pyo3's `add` appends every name it adds to `__all__`.
    m.setattr("__all__", recipes)?;
    Ok(())
}

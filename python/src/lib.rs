//! `zoolock._zoolock`: the Python module over zoolock's core. It translates
//! types, errors and the blocking/async style of kazoo's lock API; every
//! lock decision is the core's.

mod asyncio;
mod client;
mod election;
mod errors;
mod holder;
mod inspect;
mod lease;
mod logging;
mod recipe;
mod security;
mod started;
mod wait;
mod znode;

use pyo3::prelude::*;

#[pymodule]
fn _zoolock(m: &Bound<'_, PyModule>) -> PyResult<()> {
    logging::install();
    let recipes = recipe::add_all(m)?;
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

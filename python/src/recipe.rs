//! What the recipes' bindings (Barrier, Party, Queue, …) share: the core
//! object on the client's current session, made again after a `start()`,
//! and the blocking call that releases the GIL while it waits.

// codegen: the recipes, from the files of recipe/ and the classes their stubs name (scripts/codegen.sh writes this list)
pub(crate) mod barrier;
pub(crate) mod counter;
pub(crate) mod leader_latch;
pub(crate) mod lock;
pub(crate) mod multi_lock;
pub(crate) mod party;
pub(crate) mod persistent_node;
pub(crate) mod queue;
pub(crate) mod semaphore;

/// Adds every recipe class to the module: their names, the module's
/// `__all__`, are what `zoolock` exports and binds to `KazooClient`.
pub fn add_all<'py>(m: &Bound<'py, PyModule>) -> PyResult<Vec<Bound<'py, PyString>>> {
    let mut names = Vec::new();
    add::<barrier::Barrier>(m, &mut names)?;
    add::<barrier::DoubleBarrier>(m, &mut names)?;
    add::<counter::Counter>(m, &mut names)?;
    add::<leader_latch::LeaderLatch>(m, &mut names)?;
    add::<lock::Lock>(m, &mut names)?;
    add::<lock::ReadLock>(m, &mut names)?;
    add::<lock::WriteLock>(m, &mut names)?;
    add::<multi_lock::MultiLock>(m, &mut names)?;
    add::<party::Party>(m, &mut names)?;
    add::<party::ShallowParty>(m, &mut names)?;
    add::<persistent_node::PersistentNode>(m, &mut names)?;
    add::<queue::Queue>(m, &mut names)?;
    add::<queue::LockingQueue>(m, &mut names)?;
    add::<semaphore::Semaphore>(m, &mut names)?;
    Ok(names)
}
// codegen: end

use std::sync::Mutex;
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;
use pyo3::PyClass;
use zoolock::Session;

use crate::client::Client;
use crate::errors::{ConnectionClosedError, IntoPy};
use crate::wait::interruptible;

/// A core recipe object on its client's session. kazoo's recipes may be
/// made before `start()`: the core object is made at the first call, and
/// again on the session of a later `start()`.
pub struct OnClient<T> {
    client: Py<Client>,
    make: Box<dyn Fn(&Session) -> zoolock::Result<T> + Send + Sync>,
    current: Mutex<Option<(u64, T)>>,
}

impl<T: Clone> OnClient<T> {
    pub fn new(
        client: &Bound<'_, PyAny>,
        make: impl Fn(&Session) -> zoolock::Result<T> + Send + Sync + 'static,
    ) -> PyResult<Self> {
        let client = client.cast::<Client>().map_err(|_| PyTypeError::new_err("not a zoolock KazooClient"))?;
        let on_client = OnClient { client: client.clone().unbind(), make: Box::new(make), current: Mutex::new(None) };
        // Bad arguments raise here on a started client, else at the first call.
        match on_client.get(client.py()) {
            Err(err) if !err.is_instance_of::<ConnectionClosedError>(client.py()) => Err(err),
            _ => Ok(on_client),
        }
    }

    /// The core object on the client's session now (`ConnectionClosedError`
    /// if it is not started).
    pub fn get(&self, py: Python<'_>) -> PyResult<T> {
        let (epoch, session) = self.client.bind(py).get().session()?;
        let mut current = self.current.lock().unwrap();
        match &*current {
            Some((made_in, core)) if *made_in == epoch => Ok(core.clone()),
            _ => {
                let core = (self.make)(&session).py_err()?;
                *current = Some((epoch, core.clone()));
                Ok(core)
            }
        }
    }

    /// The core object made last, if any (for read-only attributes).
    pub fn last(&self) -> Option<T> {
        self.current.lock().unwrap().as_ref().map(|(_, core)| core.clone())
    }

    pub fn client(&self, py: Python<'_>) -> Py<Client> {
        self.client.clone_ref(py)
    }
}

/// A kazoo recipe class made with `(client, path)` (`Barrier`, `Queue`,
/// `LockingQueue`): its constructor, `path`, `client` and `repr`, then
/// `$methods`. `$core` is the core's type, made with `new(session, path)`.
macro_rules! path_recipe {
    ($(#[$doc:meta])* $name:ident($core:ty) { $($methods:tt)* }) => {
        $(#[$doc])*
        #[pyclass(frozen, module = "zoolock")]
        pub struct $name {
            path: String,
            core: $crate::recipe::OnClient<$core>,
        }

        #[pymethods]
        impl $name {
            #[new]
            fn new(client: &Bound<'_, PyAny>, path: &Bound<'_, PyAny>) -> PyResult<Self> {
                let path = $crate::holder::path(path)?;
                let core_path = path.clone();
                let core = $crate::recipe::OnClient::new(client, move |session| <$core>::new(session, &core_path))?;
                Ok($name { path, core })
            }

            /// The recipe's path.
            #[getter]
            fn path(&self) -> &str {
                &self.path
            }

            /// The client it was made with.
            #[getter]
            fn client(&self, py: Python<'_>) -> Py<PyAny> {
                self.core.client(py).into_any()
            }

            fn __repr__(&self) -> String {
                format!(concat!("<zoolock.", stringify!($name), " path={:?}>"), self.path)
            }

            $($methods)*
        }
    };
}
pub(crate) use path_recipe;

/// Runs a core call with the GIL released; Ctrl-C drops it (the core then
/// removes what it left half done).
pub fn call<T: Send + 'static>(
    py: Python<'_>,
    work: impl std::future::Future<Output = zoolock::Result<T>> + Send + 'static,
) -> PyResult<T> {
    interruptible(py, work)?.py_err()
}

/// kazoo's `timeout` in seconds: `None` waits forever.
pub fn timeout(seconds: Option<f64>) -> PyResult<Option<Duration>> {
    zoolock::timeout_from_secs(seconds).py_err()
}

/// kazoo's queue priority: an int from 0 to 999 (`TypeError`, `ValueError`).
pub fn priority(priority: &Bound<'_, PyAny>) -> PyResult<u32> {
    if priority.is_instance_of::<pyo3::types::PyBool>() || !priority.is_instance_of::<pyo3::types::PyInt>() {
        return Err(PyTypeError::new_err("priority must be an int"));
    }
    priority
        .extract::<i64>()
        .ok()
        .and_then(|p| u32::try_from(p).ok())
        .filter(|p| *p <= zoolock::Queue::MAX_PRIORITY)
        .ok_or_else(|| PyValueError::new_err("priority must be between 0 and 999"))
}

/// Adds the class `T` to the module and its name to `names`.
fn add<'py, T: PyClass>(m: &Bound<'py, PyModule>, names: &mut Vec<Bound<'py, PyString>>) -> PyResult<()> {
    m.add_class::<T>()?;
    names.push(m.py().get_type::<T>().name()?);
    Ok(())
}

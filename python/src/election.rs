//! kazoo's `Election` over the core's `Election`: leading, the term and its
//! fence are the core's; this translates the arguments, the blocking style
//! (the GIL released while waiting, Ctrl-C) and the errors. `zoolock.Election`
//! (`_znode.py`) gives it kazoo's signatures.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use pyo3::PyClassInitializer;
use zoolock::{Error, Transaction};

use crate::client::Client;
use crate::errors::{to_py, IntoPy};
use crate::holder::{self, Holder};
use crate::recipe::lock::Lock;
use crate::wait::{interruptible, uninterruptible};

/// A candidate in the election at ``path``: ``Election(client, path,
/// identifier=None)``, the core's election. ``run(func, *args, **kwargs)``
/// waits until this candidate leads, calls ``func`` and resigns when it
/// returns or raises; ``cancel()`` withdraws a waiting ``run`` (it returns
/// ``None``); ``contenders()`` lists the identifiers, the leader first.
/// ``lock`` is the ``Lock`` the candidacy holds while it leads (its
/// ``fencing_token``, ``state`` and ``lost``); ``fenced()`` during ``func``
/// makes a transaction that commits only while this term lasts.
#[pyclass(frozen, module = "zoolock._zoolock")]
pub struct Election {
    lock: Py<Lock>,
    /// The core election on the client's current session: made by `lock`'s
    /// holder with its core lock, once per `start()` of the client.
    current: Arc<Mutex<Option<zoolock::Election>>>,
    /// The term `run` leads, while its function runs.
    term: Mutex<Option<zoolock::Leadership>>,
}

impl Election {
    /// The core election on the client's current session, made if needed.
    fn core(&self, py: Python<'_>) -> PyResult<zoolock::Election> {
        // Makes the election (with its lock) if the client started again since.
        self.lock.bind(py).as_super().get().core()?;
        Ok(self.current.lock().unwrap().clone().expect("made with the lock's holder"))
    }
}

#[pymethods]
impl Election {
    #[new]
    #[pyo3(signature = (client, path, identifier=None))]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        identifier: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let path = holder::path(path)?;
        let identifier = holder::identifier(identifier)?;
        let current = Arc::new(Mutex::new(None));
        let made = current.clone();
        let (election_path, data) = (path.clone(), identifier.clone());
        let holder = Holder::new(client, path, identifier, "lock", false, move |session| {
            let election = zoolock::Election::new(session, &election_path, data.clone())?;
            let lock = election.lock().clone();
            *made.lock().unwrap() = Some(election);
            Ok(lock)
        })?;
        let lock = Py::new(py, PyClassInitializer::from(holder).add_subclass(Lock))?;
        Ok(Election { lock, current, term: Mutex::new(None) })
    }

    /// Waits until this candidate leads (the GIL released; Ctrl-C withdraws
    /// the candidacy, leaving no node), calls ``func(*args, **kwargs)``, then
    /// resigns, whether it returned or raised. ``None``, also when
    /// ``cancel()`` withdrew it first; ``ValueError`` if ``func`` is not callable.
    #[pyo3(signature = (func, *args, **kwargs))]
    fn run(
        &self,
        py: Python<'_>,
        func: &Bound<'_, PyAny>,
        args: &Bound<'_, PyTuple>,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<()> {
        if !func.is_callable() {
            return Err(PyValueError::new_err("leader function is not callable"));
        }
        let election = self.core(py)?;
        let term = match interruptible(py, async move { election.lead().await })? {
            Ok(term) => term,
            Err(Error::Cancelled { .. }) => return Ok(()),
            Err(err) => return Err(to_py(err)),
        };
        *self.term.lock().unwrap() = Some(term);
        let led = func.call(args, kwargs);
        let term = self.term.lock().unwrap().take().expect("the term run leads");
        let resigned = uninterruptible(py, async move { term.resign().await })?;
        led?;
        resigned.py_err().map(drop)
    }

    /// Withdraws this candidate: a waiting ``run`` returns ``None``. A term
    /// already won is not affected.
    fn cancel(&self) {
        if let Some(election) = self.current.lock().unwrap().as_ref() {
            election.cancel();
        }
    }

    /// The candidates' identifiers, the leader first.
    fn contenders(&self, py: Python<'_>) -> PyResult<Vec<String>> {
        let election = self.core(py)?;
        interruptible(py, async move { election.contenders().await })?.py_err()
    }

    /// The fence of the term ``run`` leads now, for ``TransactionRequest``:
    /// its commit requires that term, not a later one (``NotHeldError``
    /// then, and outside a term).
    fn term_fence(&self, py: Python<'_>) -> TermFence {
        let holder = self.lock.bind(py).as_super().get();
        let fenced = match self.term.lock().unwrap().as_ref() {
            Some(term) => term.fenced(),
            None => Err(Error::NotHeld { path: holder.path().to_owned() }),
        };
        TermFence { client: holder.client.clone_ref(py), fenced }
    }

    /// The ``Lock`` this candidacy holds while it leads.
    #[getter]
    fn lock(&self, py: Python<'_>) -> Py<Lock> {
        self.lock.clone_ref(py)
    }
}

/// One term's fence (``Election.fenced()``): the core's transaction fenced
/// on that term's own node, to which `_commit` adds the operations.
#[pyclass(frozen, module = "zoolock._zoolock")]
pub struct TermFence {
    client: Py<Client>,
    fenced: zoolock::Result<Transaction>,
}

impl TermFence {
    /// The fenced transaction, on `client` only; `NotHeldError` if no term was led.
    pub fn transaction(&self, py: Python<'_>, client: &Bound<'_, PyAny>) -> PyResult<Transaction> {
        if !self.client.bind(py).is(client) {
            return Err(PyTypeError::new_err("a fenced transaction goes on its election's client"));
        }
        self.fenced.clone().py_err()
    }
}

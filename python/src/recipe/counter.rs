//! kazoo's `Counter` over the core's `Counter`.
//!
//! Its Python face (`scripts/codegen.sh` copies it into `_zoolock.pyi`):
//!
//! ```pyi
//! @final
//! class Counter:
//!     """kazoo's Counter: a number kept as one node's data, shared with kazoo's Counter on the path.
//!     A change whose reply was lost is never made twice: if it cannot tell, ConnectionLoss."""
//!
//!     def __init__(self, client: KazooClient, path: str, default: Union[int, float] = 0, support_curator: bool = False) -> None: ...
//!     @property
//!     def value(self) -> Union[int, float]:
//!         """The value now (creates the node, empty = default, if missing)."""
//!     def compare_and_set(self, expected: Union[int, float], new: Union[int, float]) -> bool:
//!         """Sets the value to new if it is expected now (Curator's compareAndSet): True if set,
//!         False (nothing changed) if it was another; both of default's type, else TypeError."""
//!     def __add__(self, value: Union[int, float]) -> Counter:
//!         """Adds value (of default's type, else TypeError); sets pre_value and post_value."""
//!     def __sub__(self, value: Union[int, float]) -> Counter:
//!         """Subtracts value, as __add__."""
//!     @property
//!     def pre_value(self) -> Optional[Union[int, float]]:
//!         """The value the last change read."""
//!     @property
//!     def post_value(self) -> Optional[Union[int, float]]:
//!         """The value the last change wrote."""
//!     @property
//!     def path(self) -> str: ...
//!     @property
//!     def default(self) -> Union[int, float]: ...
//!     @property
//!     def default_type(self) -> type: ...
//!     @property
//!     def support_curator(self) -> bool: ...
//! ```

use std::sync::Mutex;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyFloat, PyInt};
use zoolock::{CounterFormat, CounterValue};

use crate::client::Client;
use crate::errors::IntoPy;
use crate::holder;
use crate::wait::interruptible;

/// A shared number on one node, in kazoo's format: ``Counter(client, path,
/// default=0, support_curator=False)``, or ``client.Counter(...)``. kazoo
/// clients on the same path count with it. ``counter += 5`` and
/// ``counter -= 5`` change it (a change of another type than ``default``'s
/// raises ``TypeError``) and set ``pre_value`` / ``post_value``; ``value``
/// reads it. ``support_curator=True`` stores Curator's ``SharedCount``
/// (4 bytes, 32-bit ints). Unlike kazoo, a change whose reply was lost is
/// never made twice: if it cannot tell, it raises ``ConnectionLoss``.
#[pyclass(frozen, module = "zoolock")]
pub struct Counter {
    client: Py<Client>,
    path: String,
    default: Py<PyAny>,
    default_value: CounterValue,
    support_curator: bool,
    /// The core counter on the client's session of that epoch.
    current: Mutex<Option<(u64, zoolock::Counter)>>,
    /// kazoo's `pre_value` and `post_value`, of the last change.
    last: Mutex<(Option<CounterValue>, Option<CounterValue>)>,
}

impl Counter {
    fn core(&self) -> PyResult<zoolock::Counter> {
        let (epoch, session) = self.client.get().session()?;
        let mut current = self.current.lock().unwrap();
        if let Some((_, counter)) = current.as_ref().filter(|(e, _)| *e == epoch) {
            return Ok(counter.clone());
        }
        let format = if self.support_curator { CounterFormat::Curator } else { CounterFormat::Kazoo };
        let counter = zoolock::Counter::with_format(&session, &self.path, self.default_value, format).py_err()?;
        *current = Some((epoch, counter.clone()));
        Ok(counter)
    }

    /// kazoo's `_change`: `delta` must be of the default's type (an int
    /// counter takes a bool, as `isinstance` does).
    fn change<'py>(slf: &Bound<'py, Self>, delta: &Bound<'py, PyAny>, negate: bool) -> PyResult<Bound<'py, Self>> {
        let this = slf.get();
        let delta = this.value_of(delta)?;
        let counter = this.core()?;
        let change = interruptible(slf.py(), async move {
            if negate {
                counter.subtract(delta).await
            } else {
                counter.add(delta).await
            }
        })?;
        *this.last.lock().unwrap() = match &change {
            Ok(change) => (Some(change.pre_value), Some(change.post_value)),
            Err(_) => (None, None),
        };
        change.py_err()?;
        Ok(slf.clone())
    }
}

impl Counter {
    /// A value of the default's type (kazoo's `isinstance` check), else `TypeError`.
    fn value_of(&self, value: &Bound<'_, PyAny>) -> PyResult<CounterValue> {
        match self.default_value {
            CounterValue::Int(_) if value.is_instance_of::<PyInt>() => Ok(CounterValue::Int(value.extract()?)),
            CounterValue::Float(_) if value.is_instance_of::<PyFloat>() => Ok(CounterValue::Float(value.extract()?)),
            _ => Err(PyTypeError::new_err("invalid type for value change")),
        }
    }
}

fn to_py(py: Python<'_>, value: Option<CounterValue>) -> PyResult<Py<PyAny>> {
    Ok(match value {
        None => py.None(),
        Some(CounterValue::Int(v)) => v.into_pyobject(py)?.into_any().unbind(),
        Some(CounterValue::Float(v)) => v.into_pyobject(py)?.into_any().unbind(),
    })
}

#[pymethods]
impl Counter {
    #[new]
    #[pyo3(
        signature = (client, path, default=None, support_curator=false),
        text_signature = "(client, path, default=0, support_curator=False)"
    )]
    fn new(
        py: Python<'_>,
        client: &Bound<'_, PyAny>,
        path: &Bound<'_, PyAny>,
        default: Option<&Bound<'_, PyAny>>,
        support_curator: bool,
    ) -> PyResult<Self> {
        let client = holder::recipe_client(client)?.clone().unbind();
        let path = holder::path(path)?;
        let default = default.map_or_else(|| 0i64.into_pyobject(py).map(|d| d.into_any()), |d| Ok(d.clone()))?;
        let default_value = if default.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err("a counter's default must be an int or a float, not a bool"));
        } else if default.is_instance_of::<PyInt>() {
            CounterValue::Int(default.extract().map_err(|_| PyValueError::new_err("default out of range"))?)
        } else if default.is_instance_of::<PyFloat>() && !support_curator {
            CounterValue::Float(default.extract()?)
        } else if support_curator {
            return Err(PyTypeError::new_err("when support_curator is enabled the default type must be an int"));
        } else {
            return Err(PyTypeError::new_err("a counter's default must be an int or a float"));
        };
        if let (true, CounterValue::Int(v)) = (support_curator, default_value) {
            if i32::try_from(v).is_err() {
                return Err(PyValueError::new_err("a Curator counter's default must fit 32 bits"));
            }
        }
        Ok(Counter {
            client,
            path,
            default: default.unbind(),
            default_value,
            support_curator,
            current: Mutex::new(None),
            last: Mutex::new((None, None)),
        })
    }

    /// The value now; creates the node (empty: the default) if missing.
    #[getter]
    fn value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        let counter = self.core()?;
        let value = interruptible(py, async move { counter.value().await })?.py_err()?;
        to_py(py, Some(value))
    }

    /// Sets the value to ``new`` if it is ``expected`` now (Curator's
    /// ``compareAndSet``): True if set, False (nothing changed) if it was
    /// another. Both of ``default``'s type, else ``TypeError``;
    /// ``pre_value`` and ``post_value`` are left as they were.
    fn compare_and_set(&self, py: Python<'_>, expected: &Bound<'_, PyAny>, new: &Bound<'_, PyAny>) -> PyResult<bool> {
        let (expected, new) = (self.value_of(expected)?, self.value_of(new)?);
        let counter = self.core()?;
        interruptible(py, async move { counter.compare_and_set(expected, new).await })?.py_err()
    }

    fn __add__<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        Counter::change(slf, value, false)
    }

    fn __sub__<'py>(slf: &Bound<'py, Self>, value: &Bound<'py, PyAny>) -> PyResult<Bound<'py, Self>> {
        Counter::change(slf, value, true)
    }

    /// The value the last change read (``None`` before one, or after one failed).
    #[getter]
    fn pre_value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.last.lock().unwrap().0)
    }

    /// The value the last change wrote (``None`` before one, or after one failed).
    #[getter]
    fn post_value(&self, py: Python<'_>) -> PyResult<Py<PyAny>> {
        to_py(py, self.last.lock().unwrap().1)
    }

    /// The counter's node.
    #[getter]
    fn path(&self) -> &str {
        &self.path
    }

    /// What an empty node reads as.
    #[getter]
    fn default(&self, py: Python<'_>) -> Py<PyAny> {
        self.default.clone_ref(py)
    }

    /// The type of the default, which every change must have.
    #[getter]
    fn default_type<'py>(&self, py: Python<'py>) -> Bound<'py, PyAny> {
        self.default.bind(py).get_type().into_any()
    }

    /// Whether the node holds Curator's ``SharedCount`` (4 bytes) instead of kazoo's text.
    #[getter]
    fn support_curator(&self) -> bool {
        self.support_curator
    }

    fn __repr__(&self) -> String {
        format!("<zoolock.Counter path={:?}>", self.path)
    }
}

//! The znode API's translation: private functions over the core's `Session`
//! operations, transactions and watches, which the Python package's
//! `KazooClient` (`zoolock/_znode.py`) wraps in kazoo's names, argument
//! checks and return types. Every ZooKeeper decision is the core's.

use std::sync::{Arc, Mutex};

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyString, PyTuple};
use pyo3::IntoPyObjectExt;
use zoolock::{
    Acl, AuthId, ChildrenWatch, Create, DataWatch, Error, OneShot, OpResult, Retry, Session, Stat, WatchEvent,
    WatchEventKind,
};

use crate::client::{permission, Client};
use crate::election::TermFence;
use crate::errors::{to_py, ConnectionClosedError, ConnectionLoss, IntoPy, SessionExpiredError};
use crate::holder::Holder;
use crate::started::{call_or_start, Line};
use crate::wait::{attach_from_thread, interruptible, interruptible_here, is_main_thread};

/// kazoo's `ZnodeStat` field order; the package makes its namedtuple of it.
fn stat_tuple<'py>(py: Python<'py>, s: &Stat) -> PyResult<Bound<'py, PyTuple>> {
    PyTuple::new(
        py,
        [
            s.czxid,
            s.mzxid,
            s.ctime,
            s.mtime,
            s.version.into(),
            s.cversion.into(),
            s.aversion.into(),
            s.ephemeral_owner,
            s.data_length.into(),
            s.num_children.into(),
            s.pzxid,
        ],
    )
}

fn client_of<'a, 'py>(client: &'a Bound<'py, PyAny>) -> PyResult<&'a Bound<'py, Client>> {
    client.cast::<Client>().map_err(|_| PyTypeError::new_err("not a zoolock KazooClient"))
}

fn session_of(client: &Bound<'_, PyAny>) -> PyResult<Session> {
    Ok(client_of(client)?.get().session()?.1)
}

/// `done` of a started call, with its client's line.
fn started(client: &Bound<'_, PyAny>, done: Option<Py<PyAny>>) -> PyResult<Option<(Py<PyAny>, Line)>> {
    let Some(done) = done else { return Ok(None) };
    Ok(Some((done, client_of(client)?.get().started.clone())))
}

/// `(perms, scheme, id)` triples, checked by the package.
fn acls(given: Option<Vec<(u32, String, String)>>) -> PyResult<Option<Vec<Acl>>> {
    given
        .map(|list| {
            list.into_iter()
                .map(|(perms, scheme, id)| Ok(Acl::new(permission(perms)?, AuthId::new(&scheme, &id))))
                .collect()
        })
        .transpose()
}

fn create_options(ephemeral: bool, sequence: bool, makepath: bool, acls: Option<Vec<Acl>>) -> Create {
    Create { ephemeral, sequence, makepath, acls }
}

/// Runs a core call with the GIL released, Ctrl-C interrupting it.
fn call<T: Send + 'static>(
    py: Python<'_>,
    work: impl std::future::Future<Output = zoolock::Result<T>> + Send + 'static,
) -> PyResult<T> {
    interruptible(py, work)?.py_err()
}

/// A node path that is not UTF-8 (a lone surrogate) refused as the core
/// refuses it (`BadArgumentsError`, "the path is not UTF-8"), not as the
/// `UnicodeEncodeError` of turning it into a Rust `String`.
#[pyfunction]
fn _refuse_non_utf8_path(path: &Bound<'_, PyString>) -> PyResult<()> {
    let bytes = crate::holder::utf8_bytes(path)?;
    if std::str::from_utf8(&bytes).is_err() {
        zoolock::path_from_utf8(&bytes).py_err()?;
    }
    Ok(())
}

// The calls below that take `done` are kazoo's `*_async` forms too
// (`started::call_or_start`): the package passes `done` for those.

#[pyfunction]
#[pyo3(signature = (client, path, done=None))]
fn _exists(py: Python<'_>, client: &Bound<'_, PyAny>, path: String, done: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(py, started(client, done)?, async move { s.exists(&path).await }, |py, stat| {
        stat.py_err()?.map(|stat| stat_tuple(py, &stat)).transpose()?.into_bound_py_any(py)
    })
}

#[pyfunction]
#[pyo3(signature = (client, path, done=None))]
fn _get(py: Python<'_>, client: &Bound<'_, PyAny>, path: String, done: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(py, started(client, done)?, async move { s.get(&path).await }, |py, read| {
        let (data, stat) = read.py_err()?;
        (data.map(|data| PyBytes::new(py, &data)), stat_tuple(py, &stat)?).into_bound_py_any(py)
    })
}

#[pyfunction]
#[pyo3(signature = (client, path, data, version, done=None))]
fn _set(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    data: Option<&[u8]>,
    version: i32,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let (s, data) = (session_of(client)?, data.map(<[u8]>::to_vec));
    call_or_start(
        py,
        started(client, done)?,
        async move { s.set(&path, data.as_deref(), Some(version)).await },
        |py, stat| stat_tuple(py, &stat.py_err()?)?.into_bound_py_any(py),
    )
}

#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (client, path, data, acl, ephemeral, sequence, makepath, done=None))]
fn _create(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    data: Option<&[u8]>,
    acl: Option<Vec<(u32, String, String)>>,
    ephemeral: bool,
    sequence: bool,
    makepath: bool,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let (s, data) = (session_of(client)?, data.map(<[u8]>::to_vec));
    let options = create_options(ephemeral, sequence, makepath, acls(acl)?);
    call_or_start(
        py,
        started(client, done)?,
        async move { s.create(&path, data.as_deref(), &options).await },
        |py, created| {
            let (created, stat) = created.py_err()?;
            (created, stat_tuple(py, &stat)?).into_bound_py_any(py)
        },
    )
}

#[pyfunction]
#[pyo3(signature = (client, path, version, recursive, done=None))]
fn _delete(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    version: i32,
    recursive: bool,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(py, started(client, done)?, async move { s.delete(&path, Some(version), recursive).await }, none)
}

#[pyfunction]
#[pyo3(signature = (client, path, include_data, done=None))]
fn _children(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    include_data: bool,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    let listed = async move {
        match include_data {
            true => s.children_and_stat(&path).await.map(|(children, stat)| (children, Some(stat))),
            false => s.children(&path).await.map(|children| (children, None)),
        }
    };
    call_or_start(py, started(client, done)?, listed, |py, listed| {
        let (children, stat) = listed.py_err()?;
        (children, stat.map(|stat| stat_tuple(py, &stat)).transpose()?).into_bound_py_any(py)
    })
}

#[pyfunction]
#[pyo3(signature = (client, path, acl, done=None))]
fn _ensure_path(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    acl: Option<Vec<(u32, String, String)>>,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let (s, acls) = (session_of(client)?, acls(acl)?);
    call_or_start(py, started(client, done)?, async move { s.ensure_path(&path, acls.as_deref()).await }, none)
}

#[pyfunction]
#[pyo3(signature = (client, path, done=None))]
fn _sync(py: Python<'_>, client: &Bound<'_, PyAny>, path: String, done: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(py, started(client, done)?, async move { s.sync(&path).await }, none)
}

/// The node's ACL as `(perms, scheme, id)` triples (the package makes
/// kazoo's `ACL` of them) and its stat.
#[pyfunction]
#[pyo3(signature = (client, path, done=None))]
fn _get_acls(py: Python<'_>, client: &Bound<'_, PyAny>, path: String, done: Option<Py<PyAny>>) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(py, started(client, done)?, async move { s.get_acls(&path).await }, |py, read| {
        let (acls, stat) = read.py_err()?;
        let triples: Vec<_> = acls
            .iter()
            .map(|a| (zoolock::permission_bits(a.permission()), a.scheme().to_owned(), a.id().to_owned()))
            .collect();
        (triples, stat_tuple(py, &stat)?).into_bound_py_any(py)
    })
}

#[pyfunction]
#[pyo3(signature = (client, path, acl, version, done=None))]
fn _set_acls(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    acl: Vec<(u32, String, String)>,
    version: i32,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let (s, acls) = (session_of(client)?, acls(Some(acl))?.unwrap_or_default());
    call_or_start(
        py,
        started(client, done)?,
        async move { s.set_acls(&path, &acls, Some(version)).await },
        |py, stat| stat_tuple(py, &stat.py_err()?)?.into_bound_py_any(py),
    )
}

#[pyfunction]
#[pyo3(signature = (client, scheme, credential, done=None))]
fn _add_auth(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    scheme: String,
    credential: String,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(py, started(client, done)?, async move { s.add_auth(&scheme, credential.as_bytes()).await }, none)
}

/// A call's `None`, or its error.
fn none(py: Python<'_>, done: zoolock::Result<()>) -> PyResult<Bound<'_, PyAny>> {
    done.py_err()?;
    Ok(py.None().into_bound(py))
}

/// A four-letter word's answer (`Session::command`).
#[pyfunction]
fn _command(py: Python<'_>, client: &Bound<'_, PyAny>, word: String) -> PyResult<String> {
    let s = session_of(client)?;
    call(py, async move { s.command(&word).await })
}

/// kazoo's `reconfig`: the new config and the stat of `/zookeeper/config`.
#[pyfunction]
#[pyo3(signature = (client, joining, leaving, new_members, from_config, done=None))]
fn _reconfig(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    joining: Option<String>,
    leaving: Option<String>,
    new_members: Option<String>,
    from_config: i64,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    let work = async move {
        s.reconfig(joining.as_deref(), leaving.as_deref(), new_members.as_deref(), Some(from_config)).await
    };
    call_or_start(py, started(client, done)?, work, |py, made| {
        let (config, stat) = made.py_err()?;
        (PyBytes::new(py, &config), stat_tuple(py, &stat)?).into_bound_py_any(py)
    })
}

/// The version in an `envi` answer (`zoolock::parse_version`); `None` if cut off.
#[pyfunction]
fn _parse_version(envi: &str) -> Option<Vec<u32>> {
    zoolock::parse_version(envi)
}

/// Commits kazoo `TransactionRequest` operations, given as tuples
/// `("check", path, version)`, `("create", path, data, acl, ephemeral, sequence)`,
/// `("set", path, data, version)`, `("delete", path, version)`; `fence`, a
/// holder whose hold the commit requires (or an election's term). Returns `(None, results)`, or
/// `(index, exception)` when the server refused operation `index` (kazoo
/// reports that per operation). Bad arguments, a failed fence (`NotHeldError`)
/// and a failed request raise.
#[pyfunction]
#[pyo3(signature = (client, ops, fence=None, done=None))]
fn _commit<'py>(
    py: Python<'py>,
    client: &Bound<'py, PyAny>,
    ops: &Bound<'py, PyList>,
    fence: Option<&Bound<'py, PyAny>>,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let mut transaction = session_of(client)?.transaction();
    if let Some(term) = fence.and_then(|f| f.cast::<TermFence>().ok()) {
        transaction = term.get().transaction(py, client)?;
    } else if let Some(fence) = fence {
        let holder = fence.cast::<Holder>().map_err(|_| PyTypeError::new_err("fence must be a zoolock lock"))?;
        if !holder.get().client.bind(py).is(client) {
            return Err(PyTypeError::new_err("a fenced transaction goes on its lock's client"));
        }
        let core = holder.get().core()?;
        transaction = transaction.fenced_by(&*core).py_err()?;
    }
    for op in ops.iter() {
        let kind: String = op.get_item(0)?.extract()?;
        let path: String = op.get_item(1)?.extract()?;
        transaction = match kind.as_str() {
            "check" => transaction.check(&path, Some(op.get_item(2)?.extract()?)),
            "create" => {
                let item = op.get_item(2)?;
                let data = op_data(&item)?;
                let acl = acls(op.get_item(3)?.extract()?)?;
                let options = create_options(op.get_item(4)?.extract()?, op.get_item(5)?.extract()?, false, acl);
                transaction.create(&path, data, options)
            }
            "set" => {
                let item = op.get_item(2)?;
                transaction.set(&path, op_data(&item)?, Some(op.get_item(3)?.extract()?))
            }
            "delete" => transaction.delete(&path, Some(op.get_item(2)?.extract()?)),
            other => return Err(PyTypeError::new_err(format!("unknown transaction operation {other}"))),
        };
    }
    call_or_start(py, started(client, done)?, transaction.commit_indexed(), committed)
}

/// A commit's `(None, results)` or `(index, exception)`.
fn committed(py: Python<'_>, outcome: Result<Vec<OpResult>, (Option<usize>, Error)>) -> PyResult<Bound<'_, PyAny>> {
    match outcome {
        Ok(results) => {
            let list = PyList::empty(py);
            for result in results {
                match result {
                    OpResult::Checked | OpResult::Deleted => list.append(true)?,
                    OpResult::Created { path, .. } => list.append(path)?,
                    OpResult::Set(stat) => list.append(stat_tuple(py, &stat)?)?,
                }
            }
            (None::<usize>, list).into_bound_py_any(py)
        }
        // Refused before anything was sent (bad arguments): an error, not a result.
        Err((_, err @ (Error::InvalidPath { .. } | Error::InvalidArgument(_)))) => Err(to_py(err)),
        Err((Some(index), err)) => (Some(index), to_py(err).into_value(py)).into_bound_py_any(py),
        Err((None, err)) => Err(to_py(err)),
    }
}

/// A transaction operation's data: bytes, or None for ZooKeeper's null.
fn op_data<'a>(item: &'a Bound<'_, PyAny>) -> PyResult<Option<&'a [u8]>> {
    match item.is_none() {
        true => Ok(None),
        false => Ok(Some(item.cast::<PyBytes>()?.as_bytes())),
    }
}

/// What one try of `retry` came to: the value or a final exception
/// (`Ok`), or an error the core's retry tries again after (`Err`), with
/// the exception to raise if it gives up.
type Tried = zoolock::Result<PyResult<Py<PyAny>>>;

/// Calls `func` once: ConnectionLoss and SessionExpiredError (not its
/// subclass ConnectionClosedError) are the core's retryable errors.
fn try_once(call: &Call, raised: &Mutex<Option<PyErr>>) -> Tried {
    let (func, args, kwargs) = call;
    Python::attach(|py| {
        let err = match func.call(py, args.bind(py), kwargs.as_ref().map(|k| k.bind(py))) {
            Ok(value) => return Ok(Ok(value)),
            Err(err) => err,
        };
        let retryable = if err.is_instance_of::<ConnectionLoss>(py) {
            Error::ConnectionLoss(std::time::Duration::ZERO)
        } else if err.is_instance_of::<SessionExpiredError>(py) && !err.is_instance_of::<ConnectionClosedError>(py) {
            Error::SessionExpired { action: "retry", path: "/".into() }
        } else {
            return Ok(Err(err));
        };
        *raised.lock().unwrap() = Some(err);
        Err(retryable)
    })
}

/// `func`, `args` and `kwargs` of a `retry`.
type Call = (Py<PyAny>, Py<PyTuple>, Option<Py<PyDict>>);

/// kazoo's `retry(func, *args, **kwargs)` over the core's `Session::retry`:
/// `func` again after `ConnectionLoss` or `SessionExpiredError` (not after
/// `ConnectionClosedError`), once the session is connected (a new one after
/// an expiry), at most 5 times in a minute; then its last exception. On the
/// main thread the waits between tries are interruptible (Ctrl-C).
#[pyfunction]
#[pyo3(signature = (client, func, *args, **kwargs))]
fn _retry(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    func: Py<PyAny>,
    args: Py<PyTuple>,
    kwargs: Option<Py<PyDict>>,
) -> PyResult<Py<PyAny>> {
    let session = session_of(client)?;
    let call: Arc<Call> = Arc::new((func, args, kwargs));
    let raised = Arc::new(Mutex::new(None));
    let outcome = if is_main_thread(py) {
        // Polled on this thread (interruptible's way on the main thread), so
        // `func` runs here. Off the main thread `retry_blocking` calls it here
        // too: handed to the runtime (`interruptible` there), it would run on
        // the runtime's thread.
        let raised = raised.clone();
        let tries = async move {
            let attempt = || {
                let (call, raised) = (call.clone(), raised.clone());
                async move { try_once(&call, &raised) }
            };
            session.retry(Retry::default(), attempt).await
        };
        interruptible(py, tries)?
    } else {
        py.detach(|| session.retry_blocking(Retry::default(), || try_once(&call, &raised)))
    };
    match outcome {
        Ok(done) => done,
        Err(err) if err.is_retryable() => Err(raised.lock().unwrap().take().unwrap_or_else(|| to_py(err))),
        Err(err) => Err(to_py(err)),
    }
}

fn event_tuple<'py>(py: Python<'py>, event: Option<WatchEvent>) -> PyResult<Bound<'py, PyAny>> {
    let Some(event) = event else {
        return Ok(py.None().into_bound(py));
    };
    // kazoo's EventType names.
    let kind = match event.kind {
        WatchEventKind::Created => "CREATED",
        WatchEventKind::Deleted => "DELETED",
        WatchEventKind::Changed => "CHANGED",
        WatchEventKind::Child => "CHILD",
    };
    Ok(PyTuple::new(py, [PyString::new(py, kind), PyString::new(py, &event.path)])?.into_any())
}

/// Calls the package's watch callback; it returns False to end the watch.
/// What it raises is reported (nowhere to raise it to) and the watch goes on.
fn call_back(callback: &Py<PyAny>, args: impl FnOnce(Python<'_>) -> PyResult<Bound<'_, PyTuple>>) -> bool {
    attach_from_thread(|py| {
        let result = args(py).and_then(|args| callback.bind(py).call1(args));
        match result {
            Ok(result) => !result.is(&*pyo3::types::PyBool::new(py, false)),
            Err(err) => {
                err.write_unraisable(py, Some(callback.bind(py)));
                true
            }
        }
    })
    // Python is shutting down: nothing to call any more.
    .unwrap_or(false)
}

/// A running core watch, kept alive by the package's `DataWatch`,
/// `ChildrenWatch` or one-shot `watch=` (dropping it stops the watch).
#[pyclass(frozen, module = "zoolock._zoolock")]
pub struct Watch {
    inner: WatchKind,
}

enum WatchKind {
    Data(DataWatch),
    Children(ChildrenWatch),
    OneShot(OneShot),
}

#[pymethods]
impl Watch {
    /// Ends the watch: no call starts after this returns.
    fn stop(&self) {
        match &self.inner {
            WatchKind::Data(w) => w.stop(),
            WatchKind::Children(w) => w.stop(),
            WatchKind::OneShot(w) => w.stop(),
        }
    }

    /// Whether the watch has ended (stopped, the callback returned False,
    /// the node of a children watch deleted, the client stopped).
    #[getter]
    fn stopped(&self) -> bool {
        match &self.inner {
            WatchKind::Data(w) => w.is_stopped(),
            WatchKind::Children(w) => w.is_stopped(),
            WatchKind::OneShot(w) => w.is_stopped(),
        }
    }
}

/// Starts the core's data watch: `callback(data, stat, event)` with bytes
/// or None (null data, or no node), a stat tuple or None, `(type, path)` or None. Its first call is
/// made here, in the calling thread (kazoo's `DataWatch`); with `resume`,
/// none: it calls back at the first change from `seen`, the mzxid last seen
/// (None: the node was absent), on the session's watch thread.
#[pyfunction]
#[pyo3(signature = (client, path, callback, resume=false, seen=None))]
fn _data_watch(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    callback: Py<PyAny>,
    resume: bool,
    seen: Option<i64>,
) -> PyResult<Watch> {
    let s = session_of(client)?;
    let on_change = move |value: Option<(Option<Vec<u8>>, Stat)>, event: Option<WatchEvent>| {
        call_back(&callback, |py| {
            let (data, stat) = match &value {
                Some((Some(data), stat)) => (PyBytes::new(py, data).into_any(), stat_tuple(py, stat)?.into_any()),
                Some((None, stat)) => (py.None().into_bound(py), stat_tuple(py, stat)?.into_any()),
                None => (py.None().into_bound(py), py.None().into_bound(py)),
            };
            PyTuple::new(py, [data, stat, event_tuple(py, event)?])
        })
    };
    // Its first callback runs in this thread (kazoo's), and may call the client.
    let watch = interruptible_here(py, async move {
        match resume {
            true => DataWatch::start_from(&s, &path, seen, on_change).await,
            false => DataWatch::start(&s, &path, on_change).await,
        }
    })?
    .py_err()?;
    Ok(Watch { inner: WatchKind::Data(watch) })
}

/// Starts the core's children watch: `callback(children, event)`, the first
/// call made here; with `seen` (the children last seen), none: it calls
/// back at the first change from them, on the session's watch thread.
#[pyfunction]
#[pyo3(signature = (client, path, callback, seen=None))]
fn _children_watch(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    callback: Py<PyAny>,
    seen: Option<Vec<String>>,
) -> PyResult<Watch> {
    let s = session_of(client)?;
    let on_change = move |children: Vec<String>, event: Option<WatchEvent>| {
        call_back(&callback, |py| PyTuple::new(py, [PyList::new(py, children)?.into_any(), event_tuple(py, event)?]))
    };
    // Its first callback runs in this thread (kazoo's), and may call the client.
    let watch = interruptible_here(py, async move {
        match seen {
            Some(seen) => ChildrenWatch::start_from(&s, &path, seen, on_change).await,
            None => ChildrenWatch::start(&s, &path, on_change).await,
        }
    })?
    .py_err()?;
    Ok(Watch { inner: WatchKind::Children(watch) })
}

/// A one-shot watch's callback: `callback((type, path))`, once, on the session's watch thread.
fn one_shot_call(callback: Py<PyAny>) -> impl FnOnce(WatchEvent) + Send + 'static {
    move |event| {
        call_back(&callback, |py| PyTuple::new(py, [event_tuple(py, Some(event))?]));
    }
}

/// `(read, Watch)` of a read with its one-shot watch.
fn watched<'py>(py: Python<'py>, read: impl IntoPyObject<'py>, watch: OneShot) -> PyResult<Bound<'py, PyAny>> {
    (read, Watch { inner: WatchKind::OneShot(watch) }).into_bound_py_any(py)
}

/// kazoo's `get(path, watch=)`: `((data, stat), Watch)`, the watch set by the read's own request.
#[pyfunction]
#[pyo3(signature = (client, path, callback, done=None))]
fn _get_watched(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    callback: Py<PyAny>,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(
        py,
        started(client, done)?,
        async move { s.get_watched(&path, one_shot_call(callback)).await },
        |py, read| {
            let ((data, stat), watch) = read.py_err()?;
            watched(py, (data.map(|data| PyBytes::new(py, &data)), stat_tuple(py, &stat)?), watch)
        },
    )
}

/// kazoo's `exists(path, watch=)`: `(stat or None, Watch)`.
#[pyfunction]
#[pyo3(signature = (client, path, callback, done=None))]
fn _exists_watched(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    callback: Py<PyAny>,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(
        py,
        started(client, done)?,
        async move { s.exists_watched(&path, one_shot_call(callback)).await },
        |py, read| {
            let (stat, watch) = read.py_err()?;
            watched(py, stat.map(|stat| stat_tuple(py, &stat)).transpose()?, watch)
        },
    )
}

/// kazoo's `get_children(path, watch=)`: `((children, stat), Watch)`.
#[pyfunction]
#[pyo3(signature = (client, path, callback, done=None))]
fn _children_watched(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: String,
    callback: Py<PyAny>,
    done: Option<Py<PyAny>>,
) -> PyResult<Py<PyAny>> {
    let s = session_of(client)?;
    call_or_start(
        py,
        started(client, done)?,
        async move { s.children_watched(&path, one_shot_call(callback)).await },
        |py, read| {
            let ((children, stat), watch) = read.py_err()?;
            watched(py, (children, stat_tuple(py, &stat)?), watch)
        },
    )
}

/// The client a lock or semaphore was made on (for its `fenced()`).
#[pyfunction]
fn _holder_client(holder: &Bound<'_, Holder>) -> Py<Client> {
    holder.get().client.clone_ref(holder.py())
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Watch>()?;
    m.add_function(wrap_pyfunction!(_refuse_non_utf8_path, m)?)?;
    m.add_function(wrap_pyfunction!(_exists, m)?)?;
    m.add_function(wrap_pyfunction!(_get, m)?)?;
    m.add_function(wrap_pyfunction!(_set, m)?)?;
    m.add_function(wrap_pyfunction!(_create, m)?)?;
    m.add_function(wrap_pyfunction!(_delete, m)?)?;
    m.add_function(wrap_pyfunction!(_children, m)?)?;
    m.add_function(wrap_pyfunction!(_ensure_path, m)?)?;
    m.add_function(wrap_pyfunction!(_sync, m)?)?;
    m.add_function(wrap_pyfunction!(_get_acls, m)?)?;
    m.add_function(wrap_pyfunction!(_set_acls, m)?)?;
    m.add_function(wrap_pyfunction!(_add_auth, m)?)?;
    m.add_function(wrap_pyfunction!(_command, m)?)?;
    m.add_function(wrap_pyfunction!(_parse_version, m)?)?;
    m.add_function(wrap_pyfunction!(_reconfig, m)?)?;
    m.add_function(wrap_pyfunction!(_commit, m)?)?;
    m.add_function(wrap_pyfunction!(_retry, m)?)?;
    m.add_function(wrap_pyfunction!(_holder_client, m)?)?;
    m.add_function(wrap_pyfunction!(_get_watched, m)?)?;
    m.add_function(wrap_pyfunction!(_exists_watched, m)?)?;
    m.add_function(wrap_pyfunction!(_children_watched, m)?)?;
    m.add_function(wrap_pyfunction!(_data_watch, m)?)?;
    m.add_function(wrap_pyfunction!(_children_watch, m)?)?;
    Ok(())
}

//! The operator's view of a lock or semaphore path (`zoolock::inspect`) as
//! plain Python values: `Participant` objects of str, bool, int and datetime.

use std::time::UNIX_EPOCH;

use pyo3::prelude::*;
use zoolock::Scheme;

/// One holder or waiter on a path, as ``KazooClient.inspect(path)`` lists
/// them (holders first, then waiters in queue order).
///
/// ``node`` is the node's full path; ``kind`` is ``"lock"`` (a mutex's or a
/// kazoo write lock's node: kazoo names both alike), ``"read"``, ``"write"``
/// (Curator's) or ``"lease"`` (a semaphore's); ``holds`` is True for a holder,
/// False for a waiter; ``identifier`` the node's data; ``session_id`` the
/// owning session (0 for a persistent node); ``scheme`` ``"kazoo"`` (kazoo
/// and zoolock's default), ``"curator"`` or ``"other"``; ``created`` when the
/// node was created by the server's clock (an aware UTC ``datetime``);
/// ``fencing_token`` its czxid, the holder's token.
#[pyclass(frozen, module = "zoolock", name = "Participant")]
pub struct Participant {
    /// The node's full path.
    #[pyo3(get)]
    node: String,
    /// ``"lock"``, ``"read"``, ``"write"`` or ``"lease"``: what its node's name says.
    #[pyo3(get)]
    kind: &'static str,
    /// True for a holder, False for a waiter.
    #[pyo3(get)]
    holds: bool,
    /// The node's data as text (kazoo's identifier).
    #[pyo3(get)]
    identifier: String,
    /// The owning session (the node's ephemeralOwner; 0 for a persistent node).
    #[pyo3(get)]
    session_id: i64,
    /// ``"kazoo"`` (kazoo and zoolock's default), ``"curator"`` or ``"other"``.
    #[pyo3(get)]
    scheme: &'static str,
    created_ms: i64,
    /// The node's czxid: the holder's fencing token.
    #[pyo3(get)]
    fencing_token: i64,
}

impl From<zoolock::Participant> for Participant {
    fn from(p: zoolock::Participant) -> Participant {
        Participant {
            kind: p.kind.name(),
            scheme: p.scheme.map_or("other", Scheme::name),
            created_ms: p.created.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as i64),
            holds: p.holds,
            identifier: p.identifier,
            session_id: p.session_id,
            fencing_token: p.fencing_token,
            node: p.node,
        }
    }
}

#[pymethods]
impl Participant {
    /// When the node was created, by the server's clock (its ctime), in UTC.
    #[getter]
    fn created<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        // Exact to the millisecond: the epoch plus a timedelta, not a float timestamp.
        let datetime = py.import("datetime")?;
        let utc = datetime.getattr("timezone")?.getattr("utc")?;
        let epoch = datetime.getattr("datetime")?.call1((1970, 1, 1, 0, 0, 0, 0, utc))?;
        let since = datetime.getattr("timedelta")?.call1((0, 0, 0, self.created_ms))?; // days, seconds, microseconds, milliseconds
        epoch.call_method1("__add__", (since,))
    }

    fn __repr__(&self) -> String {
        format!(
            "<zoolock.Participant {} {} {} identifier={:?} session_id={:#x} scheme={} fencing_token={}>",
            if self.holds { "holds" } else { "waits" },
            self.kind,
            self.node,
            self.identifier,
            self.session_id,
            self.scheme,
            self.fencing_token
        )
    }
}

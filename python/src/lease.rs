//! The core's kazoo leases for `zoolock.NonBlockingLease` and
//! `zoolock.MultiNonBlockingLease` (`_lease.py`, which turns kazoo's
//! `datetime` arguments into seconds).

use std::time::{Duration, UNIX_EPOCH};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::IntoPy;
use crate::holder;
use crate::wait::interruptible;

/// One try at the lease on `path` (or, with `count`, at `path/0` …
/// `path/<count - 1>`): whether it was obtained. `duration` and `now` in
/// seconds, `now` since the epoch, UTC.
#[pyfunction]
#[pyo3(name = "_try_lease", signature = (client, path, duration, identifier, now, count=None))]
pub fn try_lease(
    py: Python<'_>,
    client: &Bound<'_, PyAny>,
    path: &Bound<'_, PyAny>,
    duration: f64,
    identifier: &str,
    now: f64,
    count: Option<u32>,
) -> PyResult<bool> {
    let client = holder::recipe_client(client)?;
    let (_, session) = client.get().session()?;
    let path = holder::path(path)?;
    let duration = Duration::try_from_secs_f64(duration).map_err(|_| {
        PyValueError::new_err(format!("a lease's duration must be zero or more seconds, got {duration}"))
    })?;
    let now = Duration::try_from_secs_f64(now)
        .map(|since| UNIX_EPOCH + since)
        .map_err(|_| PyValueError::new_err("utcnow() must be a time after 1970"))?;
    let identifier = identifier.to_owned();
    let obtained = interruptible(py, async move {
        match count {
            None => zoolock::try_lease(&session, &path, duration, &identifier, now).await,
            Some(count) => zoolock::try_multi_lease(&session, count, &path, duration, &identifier, now).await,
        }
    })?;
    obtained.py_err()
}

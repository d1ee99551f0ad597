//! `KazooClient`: kazoo's client, as far as locks need it, over one core
//! `Session` per `start()`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyTuple};
use zoolock::{timeout_from_secs, Acl, AuthId, ClientId, Permission, Session, SessionOptions, SessionState};

use crate::errors::IntoPy;

pyo3::import_exception!(zoolock.exceptions, ConfigurationError);
use crate::inspect::Participant;
use crate::security;
use crate::wait::{interruptible, uninterruptible, CallbackThread, Listeners};

/// kazoo's `KazooState` strings.
pub const CONNECTED: &str = "CONNECTED";
pub const SUSPENDED: &str = "SUSPENDED";
pub const LOST: &str = "LOST";

fn state_name(state: SessionState) -> &'static str {
    match state {
        SessionState::Connected => CONNECTED,
        SessionState::Suspended => SUSPENDED,
        // A closed session is kazoo's LOST, as after stop().
        SessionState::Lost | SessionState::Closed => LOST,
    }
}

/// A ZooKeeper client with kazoo's interface, for locks and semaphores.
///
/// ``KazooClient(hosts="127.0.0.1:2181", timeout=10.0, ...)`` takes kazoo's
/// argument names. ``hosts`` may end with a chroot (``"zk1:2181,zk2:2181/app"``);
/// ``timeout`` is the session timeout in seconds; ``auth_data`` is a set of
/// ``(scheme, credential)``; ``default_acl`` a list of kazoo ``ACL`` tuples.
/// An argument zoolock does not support, given a value other than kazoo's
/// default, raises ``TypeError`` instead of being ignored. Call ``start()``
/// before acquiring; ``stop()`` ends the session and so every lock it held.
#[pyclass(frozen, subclass, module = "zoolock", name = "KazooClient")]
pub struct Client {
    /// Its hosts change with `set_hosts`.
    options: Mutex<SessionOptions>,
    now: Mutex<Current>,
    listeners: Listeners,
    /// Where this client's listeners and its locks' run.
    pub(crate) callbacks: Arc<CallbackThread>,
    /// The epoch whose session may still tell the listeners its states; 0
    /// once stopped: what a closed session says comes too late (stop() has
    /// said LOST itself, in order before a new session's CONNECTED).
    telling: Arc<AtomicU64>,
    /// The order its `*_async` outcomes are handed over in.
    pub(crate) started: crate::started::Line,
    /// The arguments kazoo keeps as attributes (`use_ssl`, `ca`, …), as given.
    given: Py<PyDict>,
}

struct Current {
    session: Option<Session>,
    /// Grows with each start(): locks made before rebind to the new session.
    epoch: u64,
}

impl Client {
    fn connect_string_parts(&self) -> (Vec<(String, u16)>, Option<String>) {
        let connect = self.options.lock().unwrap().connect.clone();
        // Checked when it was given (KazooClient(), set_hosts).
        zoolock::connect_string_parts(&connect).unwrap_or_default()
    }

    /// The session to use now and its epoch; `ConnectionClosedError` at once
    /// if the client is not started (kazoo's answer), never a wait.
    pub fn session(&self) -> PyResult<(u64, Session)> {
        let now = self.now.lock().unwrap();
        match &now.session {
            Some(session) if !session.is_closed() => Ok((now.epoch, session.clone())),
            _ => Err(zoolock::Error::Closed).py_err(),
        }
    }
}

impl Client {
    /// How long start() and stop() wait for the listeners to hear them: as
    /// kazoo's stop() waits for its connection thread, the session timeout
    /// but at least 10 s.
    fn listener_bound(&self) -> Duration {
        self.options.lock().unwrap().session_timeout.max(Duration::from_secs(10))
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        // In a forked child the session is the parent's: closing it from here
        // would touch threads that stayed in the parent.
        if zoolock::runtime::check_process().is_err() {
            std::mem::forget(self.now.get_mut().unwrap().session.take());
        }
    }
}

fn unsupported(name: &str, why: &str) -> PyErr {
    PyTypeError::new_err(format!("KazooClient: zoolock does not support {name} ({why})"))
}

fn hosts_string(hosts: &Bound<'_, PyAny>) -> PyResult<String> {
    if let Ok(text) = hosts.extract::<String>() {
        return Ok(text);
    }
    // kazoo also takes a list of "host:port", whose last item may be the chroot.
    let Ok(mut list) = hosts.extract::<Vec<String>>() else {
        return Err(PyTypeError::new_err("hosts must be a string or a list of strings"));
    };
    let chroot = match list.last() {
        Some(last) if last.trim().starts_with('/') => list.pop(),
        _ => None,
    };
    Ok(list.join(",") + chroot.as_deref().unwrap_or(""))
}

/// kazoo's `client_id`, `(session_id, password)`: an int and bytes.
fn client_id_from(client_id: &Bound<'_, PyAny>) -> PyResult<ClientId> {
    let wrong = || PyTypeError::new_err("client_id is a (session_id, password) tuple of an int and bytes");
    let (session_id, password): (Bound<'_, PyAny>, Bound<'_, PyAny>) = client_id.extract().map_err(|_| wrong())?;
    let session_id: i64 = session_id.extract().map_err(|_| wrong())?;
    let password = password.cast::<PyBytes>().map_err(|_| wrong())?;
    Ok(ClientId::new(session_id, password.as_bytes()))
}

/// kazoo's `Permissions` bits as the core's `Permission` (`ValueError` for others).
pub(crate) fn permission(bits: u32) -> PyResult<Permission> {
    zoolock::permission_from_bits(bits).py_err()
}

#[pymethods]
impl Client {
    #[new]
    #[pyo3(signature = (
        hosts=None, timeout=10.0, client_id=None, handler=None, default_acl=None, auth_data=None,
        sasl_options=None, read_only=None, randomize_hosts=true, connection_retry=None,
        command_retry=None, logger=None, keyfile=None, keyfile_password=None, certfile=None,
        ca=None, use_ssl=false, verify_certs=true, check_hostname=false, create_chroot=true, **kwargs
    ), text_signature = "(hosts='127.0.0.1:2181', timeout=10.0, client_id=None, handler=None, \
        default_acl=None, auth_data=None, sasl_options=None, read_only=None, randomize_hosts=True, \
        connection_retry=None, command_retry=None, logger=None, keyfile=None, keyfile_password=None, \
        certfile=None, ca=None, use_ssl=False, verify_certs=True, check_hostname=False, create_chroot=True)")]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        hosts: Option<&Bound<'_, PyAny>>,
        timeout: f64,
        client_id: Option<&Bound<'_, PyAny>>,
        handler: Option<&Bound<'_, PyAny>>,
        default_acl: Option<&Bound<'_, PyAny>>,
        auth_data: Option<&Bound<'_, PyAny>>,
        sasl_options: Option<&Bound<'_, PyAny>>,
        read_only: Option<bool>,
        randomize_hosts: bool,
        connection_retry: Option<&Bound<'_, PyAny>>,
        command_retry: Option<&Bound<'_, PyAny>>,
        logger: Option<&Bound<'_, PyAny>>,
        keyfile: Option<&Bound<'_, PyAny>>,
        keyfile_password: Option<&Bound<'_, PyAny>>,
        certfile: Option<&Bound<'_, PyAny>>,
        ca: Option<&Bound<'_, PyAny>>,
        use_ssl: bool,
        verify_certs: bool,
        check_hostname: bool,
        create_chroot: bool,
        kwargs: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Client> {
        if let Some(kwargs) = kwargs.filter(|k| !k.is_empty()) {
            let names: Vec<String> = kwargs.keys().iter().map(|k| k.to_string()).collect();
            return Err(PyTypeError::new_err(format!(
                "KazooClient got unexpected keyword arguments: {}",
                names.join(", ")
            )));
        }
        let refusals = [
            (handler.is_some(), "handler", "zoolock does its I/O on its own threads; there is nothing to plug in"),
            (read_only == Some(true), "read_only=True", "locks need a writable quorum"),
            (!randomize_hosts, "randomize_hosts=False", "hosts are always tried in random order"),
            (connection_retry.is_some(), "connection_retry", "zoolock reconnects on its own until the session ends"),
            (command_retry.is_some(), "command_retry", "lock operations retry on their own, bounded by their timeouts"),
            (logger.is_some(), "logger", "zoolock logs to the 'zoolock' logger; configure that one"),
        ];
        if let Some((_, name, why)) = refusals.iter().find(|(given, _, _)| *given) {
            return Err(unsupported(name, why));
        }
        let connect = match hosts {
            Some(hosts) => hosts_string(hosts)?,
            None => "127.0.0.1:2181".to_owned(),
        };
        let session_timeout = match timeout_from_secs(Some(timeout)).py_err()? {
            Some(t) if !t.is_zero() => t,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "timeout must be a positive number of seconds, got {timeout}"
                )))
            }
        };
        let tls = security::TlsArgs { use_ssl, ca, certfile, keyfile, keyfile_password, verify_certs, check_hostname };
        // kazoo creates a missing chroot on the first write; `create_chroot=False`
        // refuses it instead (NoNodeError), as zoolock's other languages do.
        let mut options = SessionOptions::new(connect).session_timeout(session_timeout).create_chroot(create_chroot);
        // kazoo resumes the session on the first connect when client_id is truthy.
        if let Some(client_id) = client_id.filter(|id| id.is_truthy().unwrap_or(true)) {
            options = options.resume(client_id_from(client_id)?);
        }
        let options = security::apply_tls(options, tls)?;
        let mut options = security::apply_sasl(options, sasl_options)?;
        if let Some(auth_data) = auth_data {
            for pair in auth_data.try_iter()? {
                let (scheme, credential): (String, String) = pair?
                    .extract()
                    .map_err(|_| PyTypeError::new_err("auth_data holds (scheme, credential) pairs of str"))?;
                options.auth.push((scheme, credential.into_bytes()));
            }
        }
        if let Some(default_acl) = default_acl {
            let mut acls = Vec::new();
            for acl in default_acl.try_iter()? {
                // kazoo's ACL(perms, Id(scheme, id)) is a tuple of this shape.
                let (perms, (scheme, id)): (u32, (String, String)) = acl?
                    .extract()
                    .map_err(|_| PyTypeError::new_err("default_acl holds ACL(perms, Id(scheme, id)) tuples"))?;
                acls.push(Acl::new(permission(perms)?, AuthId::new(&scheme, &id)));
            }
            options = options.acls(acls);
        }
        let given = PyDict::new(py);
        given.set_item("keyfile", keyfile)?;
        given.set_item("keyfile_password", keyfile_password)?;
        given.set_item("certfile", certfile)?;
        given.set_item("ca", ca)?;
        given.set_item("use_ssl", use_ssl)?;
        given.set_item("verify_certs", verify_certs)?;
        given.set_item("check_hostname", check_hostname)?;
        given.set_item("randomize_hosts", randomize_hosts)?;
        given.set_item("read_only", read_only)?;
        let callbacks = CallbackThread::new();
        Ok(Client {
            given: given.unbind(),
            options: Mutex::new(options),
            now: Mutex::new(Current { session: None, epoch: 0 }),
            listeners: Listeners::client(callbacks.clone()),
            callbacks,
            telling: Arc::default(),
            started: Arc::default(),
        })
    }

    /// Connects, waiting up to ``timeout`` seconds; raises
    /// ``KazooTimeoutError`` if no server answers in time. Does nothing if
    /// already started. Locks made before ``start()`` (or before a
    /// ``stop()``) work on the new session.
    #[pyo3(signature = (timeout=15.0))]
    fn start(&self, py: Python<'_>, timeout: f64) -> PyResult<()> {
        let connect_timeout = match timeout_from_secs(Some(timeout)).py_err()? {
            Some(t) if !t.is_zero() => t,
            Some(_) => return Err(PyValueError::new_err("start() needs a positive timeout")),
            None => Duration::from_secs(3600 * 24 * 365),
        };
        if self.session().is_ok() {
            return Ok(());
        }
        let (options, resume) = {
            let mut options = self.options.lock().unwrap();
            // client_id= is resumed by one start() at a time: two would take
            // the session from each other, and the one kept out would close it.
            let resume = options.resume.take();
            let mut taken = options.clone().connect_timeout(connect_timeout);
            taken.resume = resume.clone();
            (taken, resume)
        };
        let connected = interruptible(py, Session::connect(options));
        // client_id= serves one session, as in kazoo: resumed, or found gone
        // (SessionExpiredError), the next start() opens a new one; after a
        // timeout or Ctrl-C it tries again.
        let resumed = resume.is_some() && matches!(connected, Ok(Ok(_)));
        let served = matches!(connected, Ok(Ok(_) | Err(zoolock::Error::SessionExpired { .. })));
        if let Some(resume) = resume.filter(|_| !served) {
            self.options.lock().unwrap().resume.get_or_insert(resume);
        }
        let session = connected?.py_err()?;
        let replaced = {
            let mut now = self.now.lock().unwrap();
            let mut replaced = None;
            if now.session.as_ref().is_some_and(|s| !s.is_closed()) {
                if !resumed {
                    // A concurrent start() got there first: keep its session.
                    drop(now);
                    return uninterruptible(py, async move { session.close().await });
                }
                // A concurrent start() opened a new session meanwhile; the
                // resumed one is the session the caller asked for.
                replaced = now.session.take();
            }
            now.epoch += 1;
            let (listeners, telling, epoch) = (self.listeners.clone(), self.telling.clone(), now.epoch);
            session.add_listener(move |state| {
                let telling = telling.clone();
                listeners.notify_if(state_name(state), move || telling.load(Ordering::Acquire) == epoch)
            });
            self.telling.store(epoch, Ordering::Release);
            now.session = Some(session);
            replaced
        };
        if let Some(replaced) = replaced {
            uninterruptible(py, async move { replaced.close().await })?;
        }
        // kazoo's listeners hear LOST → CONNECTED when the client starts,
        // before start() returns.
        self.listeners.notify_and_wait(py, CONNECTED, self.listener_bound())
    }

    /// Ends the session: the server deletes its ephemeral nodes at once,
    /// releasing every lock it held, and listeners hear ``LOST``. Pending
    /// acquires fail with ``ConnectionClosedError``. A stopped client can be
    /// started again.
    fn stop(&self, py: Python<'_>) -> PyResult<()> {
        let session = {
            let mut now = self.now.lock().unwrap();
            self.telling.store(0, Ordering::Release);
            now.session.take()
        };
        let Some(session) = session else { return Ok(()) };
        if zoolock::runtime::check_process().is_err() {
            // A forked child: the session is the parent's; leave it be.
            std::mem::forget(session);
            return Ok(());
        }
        let _ = uninterruptible(py, async move { session.close().await });
        // kazoo's stop() returns after its listeners heard LOST.
        self.listeners.notify_and_wait(py, LOST, self.listener_bound())
    }

    /// kazoo frees the connection's resources here; in zoolock it is
    /// ``stop()`` (idempotent). The client can still be started again.
    fn close(&self, py: Python<'_>) -> PyResult<()> {
        self.stop(py)
    }

    /// ``stop()`` then ``start()``: a new session.
    fn restart(&self, py: Python<'_>) -> PyResult<()> {
        self.stop(py)?;
        self.start(py, 15.0)
    }

    /// ``"CONNECTED"``, ``"SUSPENDED"`` or ``"LOST"`` (a ``KazooState``);
    /// ``"LOST"`` before ``start()`` and after ``stop()``.
    #[getter]
    fn state(&self) -> &'static str {
        match &self.now.lock().unwrap().session {
            Some(session) => state_name(session.state()),
            None => LOST,
        }
    }

    /// Whether the client is connected now.
    #[getter]
    fn connected(&self) -> bool {
        self.state() == CONNECTED
    }

    /// ``(session_id, password)`` while connected, else ``None``, as kazoo:
    /// ``KazooClient(client_id=...)`` resumes the session, e.g. in another
    /// process. The password is the session's secret.
    #[getter]
    fn client_id<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyTuple>>> {
        let now = self.now.lock().unwrap();
        let id = match &now.session {
            Some(session) if session.state() == SessionState::Connected => session.client_id(),
            _ => None,
        };
        let Some(id) = id else { return Ok(None) };
        let password = PyBytes::new(py, id.password()).into_any();
        Ok(Some(PyTuple::new(py, [id.session_id().into_pyobject(py)?.into_any(), password])?))
    }

    /// kazoo's ``hosts``: each ``(host, port)`` this client connects to
    /// (2181 where none is given, IPv6 without brackets), the chroot apart.
    #[getter]
    fn hosts(&self) -> Vec<(String, u16)> {
        self.connect_string_parts().0
    }

    /// The ``(host, port)`` of the server the session is connected to, as
    /// ``hosts`` names it; ``None`` while not connected (the package's
    /// ``_connection._socket.getpeername()``, kazoo's).
    #[getter]
    fn _server(&self) -> Option<(String, u16)> {
        self.now.lock().unwrap().session.as_ref()?.server()
    }

    /// The connection's local ``(host, port)``; ``None`` while not connected
    /// (the package's ``_connection._socket.getsockname()``).
    #[getter]
    fn _local(&self) -> Option<(String, u16)> {
        let local = self.now.lock().unwrap().session.as_ref()?.local_addr()?;
        Some((local.ip().to_string(), local.port()))
    }

    /// The id of the last request the session sent (the package's
    /// ``_connection._xid``, kazoo's); 0 before the first.
    #[getter]
    fn _xid(&self) -> i32 {
        self.now.lock().unwrap().session.as_ref().map_or(0, Session::last_xid)
    }

    /// kazoo's ``_session_timeout``: in milliseconds, the one the server
    /// granted while there is a session, else the one asked for.
    #[getter]
    fn _session_timeout(&self) -> u128 {
        let granted = self.now.lock().unwrap().session.as_ref().and_then(Session::session_timeout);
        granted.unwrap_or_else(|| self.options.lock().unwrap().session_timeout).as_millis()
    }

    /// kazoo's ``auth_data``: the ``(scheme, credential)`` pairs the session
    /// authenticates with, ``auth_data=`` and those ``add_auth`` added (a
    /// copy: add credentials with ``add_auth``).
    #[getter]
    fn auth_data(&self) -> HashSet<(String, String)> {
        let credentials = match &self.now.lock().unwrap().session {
            Some(session) => session.credentials(),
            None => self.options.lock().unwrap().auth.clone(),
        };
        credentials.into_iter().map(|(scheme, c)| (scheme, String::from_utf8_lossy(&c).into_owned())).collect()
    }

    /// The arguments kazoo keeps as attributes of the client (``use_ssl``,
    /// ``ca``, ``read_only``, …), as given; the package's properties of
    /// those names read them.
    #[getter]
    fn _given<'py>(&self, py: Python<'py>) -> Bound<'py, PyDict> {
        self.given.bind(py).clone()
    }

    /// kazoo's ``chroot``: the connect string's chroot, ``""`` if none.
    #[getter]
    fn chroot(&self) -> String {
        self.connect_string_parts().1.unwrap_or_default()
    }

    /// kazoo's ``last_zxid``: the highest zxid of a reply the session has
    /// received (watch events aside); 0 before the first and without a session.
    #[getter]
    fn last_zxid(&self) -> i64 {
        self.now.lock().unwrap().session.as_ref().map_or(0, |session| session.last_zxid())
    }

    /// kazoo's ``set_hosts(hosts)``: the hosts (a string or a list, as
    /// ``KazooClient(hosts=...)``) of the next session. zoolock's client
    /// library cannot move a live session to other servers, so they serve
    /// the next ``start()`` and the new session zoolock opens after an
    /// expiry; the session now goes on with the servers it has.
    /// ``ConfigurationError`` if the chroot would change.
    #[pyo3(signature = (hosts, randomize_hosts=None))]
    fn set_hosts(&self, hosts: &Bound<'_, PyAny>, randomize_hosts: Option<bool>) -> PyResult<()> {
        if randomize_hosts == Some(false) {
            return Err(unsupported("randomize_hosts=False", "hosts are always tried in random order"));
        }
        let connect = hosts_string(hosts)?;
        let mut options = self.options.lock().unwrap();
        let chroot = |c: &str| c.find('/').map(|i| c[i..].trim_end_matches('/').to_owned()).unwrap_or_default();
        if chroot(&connect) != chroot(&options.connect) {
            return Err(ConfigurationError::new_err("Changing chroot at runtime is not currently supported"));
        }
        // Without a session, start() checks them.
        if let Some(session) = &self.now.lock().unwrap().session {
            session.set_hosts(&connect).py_err()?;
        }
        options.connect = connect;
        Ok(())
    }

    /// Calls ``listener(state)`` with each new ``KazooState``, on zoolock's
    /// callback thread. A listener that returns ``True`` is removed, as in kazoo.
    fn add_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.listeners.add(py, listener).map(drop)
    }

    /// Removes a listener added with ``add_listener``.
    fn remove_listener(&self, py: Python<'_>, listener: &Bound<'_, PyAny>) -> PyResult<()> {
        self.listeners.remove(py, listener)
    }

    /// The current session's metrics as ``{name: value}`` (floats): acquire
    /// waits and hold times (``zoolock_acquire_wait_seconds_count``/``_sum``,
    /// ``zoolock_hold_seconds_count``/``_sum``), ``zoolock_handoffs_total``,
    /// ``zoolock_acquire_timeouts_total``,
    /// ``zoolock_suspensions_total``, ``zoolock_losses_total{reason="..."}``,
    /// ``zoolock_cleanup_retries_total`` and
    /// ``zoolock_session_state_changes_total{state="..."}``, named as in
    /// Prometheus' text format. Counts start at zero with each ``start()``.
    fn metrics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let (_, session) = self.session()?;
        let metrics = PyDict::new(py);
        for (name, value) in session.metrics() {
            metrics.set_item(name, value)?;
        }
        Ok(metrics)
    }

    /// The holders, then the waiters, of the lock or semaphore at ``path``
    /// (kazoo's, Curator's or zoolock's nodes), in queue order: a list of
    /// ``Participant``. Empty if nothing is there. Needs no lock object.
    fn inspect(&self, py: Python<'_>, path: String) -> PyResult<Vec<Participant>> {
        let (_, session) = self.session()?;
        let participants = interruptible(py, async move { zoolock::inspect(&session, &path).await })?.py_err()?;
        Ok(participants.into_iter().map(Participant::from).collect())
    }

    fn __repr__(&self) -> String {
        let connect = self.options.lock().unwrap().connect.clone();
        format!("<zoolock.KazooClient hosts={connect:?} state={}>", self.state())
    }
}

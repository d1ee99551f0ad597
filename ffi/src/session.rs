//! The session handle: connect, status, state callbacks, close, free.

use std::ffi::c_void;
use std::time::Duration;

use zoolock::{Session, SessionOptions};

use crate::args;
use crate::castable::{self, Castable};
use crate::listener::Listener;
use crate::status::{guard, guard_void};

/// One ZooKeeper session, shared by the holders made from it.
pub struct ZlSession {
    pub(crate) session: Session,
    pub(crate) listener: Listener,
}

impl Castable for ZlSession {
    const NAME: &'static str = "session";
}

/// A borrowed handle is its session, for the calls that only use that.
impl std::ops::Deref for ZlSession {
    type Target = Session;

    fn deref(&self) -> &Session {
        &self.session
    }
}

impl Drop for ZlSession {
    /// Stops the callback before the handle goes.
    fn drop(&mut self) {
        if let Some(id) = self.listener.take_registration() {
            self.session.remove_listener(id);
        }
        self.listener.clear();
    }
}

/// Connects to ZooKeeper (`host:port[,host:port…][/chroot]`), blocking until
/// the session is up or `connect_timeout_ms` has passed (`ZL_CONNECT_TIMEOUT`).
/// A timeout of 0 takes the default (10 s session, 15 s connect).
///
/// # Safety
/// `connect` must be valid for `connect_len` bytes; `out_session` for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_connect(
    connect: *const u8,
    connect_len: u32,
    session_timeout_ms: u32,
    connect_timeout_ms: u32,
    out_session: *mut *mut ZlSession,
) -> i32 {
    guard(|| {
        let connect = args::text(connect, connect_len, "connect")?;
        args::need(out_session, "out_session")?;
        let mut options = SessionOptions::new(connect);
        if session_timeout_ms > 0 {
            options = options.session_timeout(Duration::from_millis(session_timeout_ms.into()));
        }
        if connect_timeout_ms > 0 {
            options = options.connect_timeout(Duration::from_millis(connect_timeout_ms.into()));
        }
        let session = Session::connect_blocking(options)?;
        castable::give(ZlSession { session, listener: Listener::default() }, out_session, "out_session")
    })
}

/// The session's state (`ZL_SESSION_*`), its ZooKeeper session id, and its
/// generation (1, then one more each time an expired session is replaced).
/// Any out-pointer may be null.
///
/// # Safety
/// `session` must be a live handle; non-null out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_status(
    session: *const ZlSession,
    out_state: *mut i32,
    out_session_id: *mut i64,
    out_generation: *mut u64,
) -> i32 {
    guard(|| {
        let status = castable::borrow(session)?.session.status();
        if !out_state.is_null() {
            out_state.write(status.state.code());
        }
        if !out_session_id.is_null() {
            out_session_id.write(status.session_id);
        }
        if !out_generation.is_null() {
            out_generation.write(status.generation);
        }
        Ok(())
    })
}

/// The id and password of the ZooKeeper session open now (kazoo's
/// `client_id`), for another client to resume it with
/// `zl_session_options_set_resume`. The password is a buffer to free with
/// `zl_bytes_free`, and a secret. While no session is open (lost and not
/// yet replaced, or closed) the id is 0 and the password empty.
///
/// # Safety
/// `session` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_client_id(
    session: *const ZlSession,
    out_session_id: *mut i64,
    out_password_ptr: *mut *mut u8,
    out_password_len: *mut u32,
) -> i32 {
    guard(|| {
        let client_id = castable::borrow(session)?.session.client_id();
        args::need(out_session_id, "out_session_id")?;
        let (id, password) = client_id.map_or((0, Vec::new()), |id| (id.session_id(), id.password().to_vec()));
        args::give(password, out_password_ptr, out_password_len, "password")?;
        out_session_id.write(id);
        Ok(())
    })
}

/// Sets the callback told of each session state change (`ZL_SESSION_*`),
/// replacing any earlier one; a null callback removes it. When this returns,
/// the earlier callback is not running and will not run again. No state
/// callback is called after `zl_shutdown` (the process is exiting;
/// `zl_session_status` still answers).
///
/// # Safety
/// `session` must be a live handle; `user_data` must stay valid for the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_session_set_listener(
    session: *const ZlSession,
    callback: Option<extern "C" fn(user_data: *mut c_void, state: i32)>,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let handle = castable::borrow(session)?;
        let session = &handle.session;
        handle.listener.set(
            callback,
            user_data,
            |sink| session.add_listener(move |state| sink(state.code())),
            |id| {
                session.remove_listener(id);
            },
        );
        Ok(())
    })
}

/// The session's metrics (`zoolock::Session::metrics`: acquire waits, hold
/// times, handoffs, suspensions, losses, cleanup retries, state changes) as
/// a buffer to free with `zl_bytes_free`: per metric, its name (a
/// little-endian u32 byte length, then UTF-8, e.g.
/// `zoolock_losses_total{reason="node_deleted"}`) and its value (a
/// little-endian f64), in name order.
///
/// # Safety
/// `session` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_metrics(
    session: *const ZlSession,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let session = &castable::borrow(session)?.session;
        let mut record = args::Record::default();
        for (name, value) in session.metrics() {
            record.text(&name).f64(value);
        }
        args::give(record.0, out_ptr, out_len, "metrics")
    })
}

/// Closes the session: the server deletes its nodes at once, releasing every
/// lock and lease taken through it; pending acquires fail with `ZL_CLOSED`.
/// The handle must still be freed.
///
/// # Safety
/// `session` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_session_close(session: *const ZlSession) -> i32 {
    guard(|| {
        castable::borrow(session)?.session.close_blocking();
        Ok(())
    })
}

/// Frees the handle and its callback. The session itself lives on while
/// holders made from it do, and ends when the last of them is freed. Null is ignored.
///
/// # Safety
/// `session` must come from `zl_session_connect`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_session_free(session: *mut ZlSession) {
    guard_void(|| castable::free(session))
}

//! Session options: every `SessionOptions` field of the core, set one at a
//! time through `zl_session_options_*` and used by
//! `zl_session_connect_with`. The names are the core's (and kazoo's): `auth`,
//! `acl`, `tls_ca`, `tls_certfile`, `tls_keyfile`, `tls_keyfile_password`,
//! `tls_verify_certs`, `tls_check_hostname`, `sasl`, `resume`. Nothing is checked
//! against the network until the connect; bad values the core can tell
//! without one fail there or at their setter.

use std::ffi::c_void;
use std::sync::Mutex;
use std::time::Duration;

use zoolock::{
    runtime, Acl, AuthId, ClientId, Permission, SaslMechanism, SaslOptions, Session, SessionOptions, TlsOptions,
};

use crate::args::{self, UserData};
use crate::cancel::{cancellable, Stops, ZlCancel};
use crate::castable::{self, Castable};
use crate::dispatch;
use crate::listener::Listener;
use crate::session::ZlSession;
use crate::status::{guard, guard_void, Failure, FfiResult, ZL_OK};

/// The options of a session to connect, owned by the caller.
pub struct ZlSessionOptions {
    options: Mutex<Pending>,
}

struct Pending {
    options: SessionOptions,
    /// Whether an ACL was added: the first replaces the default (world:anyone, all).
    acl_given: bool,
}

impl Castable for ZlSessionOptions {
    const NAME: &'static str = "session options";
}

/// Runs `change` on the options behind `options`.
///
/// # Safety
/// `options` must be null or a live handle.
unsafe fn change(options: *const ZlSessionOptions, change: impl FnOnce(&mut Pending) -> FfiResult) -> i32 {
    guard(|| change(&mut castable::borrow(options)?.options.lock().unwrap()))
}

/// The TLS options, turning TLS on (with its defaults if none were set).
fn tls(pending: &mut Pending) -> &mut TlsOptions {
    let tls = pending.options.tls.get_or_insert_with(TlsOptions::new);
    tls.enabled = true;
    tls
}

/// Options for `connect` (`host:port[,host:port…][/chroot]`) with the core's
/// defaults: 10 s session and 15 s connect timeouts, no credentials, nodes
/// created world-readable and writable, plaintext, no SASL.
///
/// # Safety
/// `connect` must be valid for `connect_len` bytes; `out_options` for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_new(
    connect: *const u8,
    connect_len: u32,
    out_options: *mut *mut ZlSessionOptions,
) -> i32 {
    guard(|| {
        let connect = args::text(connect, connect_len, "connect")?;
        let pending = Pending { options: SessionOptions::new(connect), acl_given: false };
        castable::give(ZlSessionOptions { options: Mutex::new(pending) }, out_options, "out_options")
    })
}

/// Frees the options (a session connected with them keeps its own copy). Null is ignored.
///
/// # Safety
/// `options` must come from `zl_session_options_new`, freed once, with no call on it in flight.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_free(options: *mut ZlSessionOptions) {
    guard_void(|| castable::free(options))
}

/// The session timeout asked of the server, in milliseconds (at least 1).
///
/// # Safety
/// `options` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_session_timeout(options: *const ZlSessionOptions, ms: u32) -> i32 {
    change(options, |p| {
        p.options.session_timeout = Duration::from_millis(ms.into());
        Ok(())
    })
}

/// Resumes the session with this id and password (kazoo's `client_id=`,
/// as `zl_session_client_id` gave them, maybe in another process) instead of
/// opening a new one. If the server no longer has it or the password is
/// wrong, the connect fails with `ZL_SESSION_EXPIRED`.
///
/// # Safety
/// `options` must be a live handle; `password` valid for `password_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_resume(
    options: *const ZlSessionOptions,
    session_id: i64,
    password: *const u8,
    password_len: u32,
) -> i32 {
    change(options, |p| {
        let password = args::bytes(password, password_len, "password")?;
        p.options.resume = Some(ClientId::new(session_id, password));
        Ok(())
    })
}

/// The least connect a call's limit allows, in milliseconds (the core's
/// `HEALTHY_CONNECT`): a binding that bounds a connect by an acquire's
/// timeout gives it at least this, so that a single try still connects.
pub const ZL_HEALTHY_CONNECT_MS: u32 = 1000;

const _: () = assert!(
    zoolock::HEALTHY_CONNECT.as_millis() == ZL_HEALTHY_CONNECT_MS as u128,
    "ZL_HEALTHY_CONNECT_MS is the core's HEALTHY_CONNECT"
);

/// How long the connect tries before `ZL_CONNECT_TIMEOUT`, in milliseconds (at least 1).
///
/// # Safety
/// `options` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_connect_timeout(options: *const ZlSessionOptions, ms: u32) -> i32 {
    change(options, |p| {
        p.options.connect_timeout = Duration::from_millis(ms.into());
        Ok(())
    })
}

/// Adds credentials sent when the session connects (`addauth`): scheme
/// `digest` with `user:password`, as kazoo's `auth_data` and DistributedLock's `AddAuthInfo`.
///
/// # Safety
/// Each pointer must be valid for its length.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_add_auth(
    options: *const ZlSessionOptions,
    scheme: *const u8,
    scheme_len: u32,
    credentials: *const u8,
    credentials_len: u32,
) -> i32 {
    change(options, |p| {
        let scheme = args::text(scheme, scheme_len, "scheme")?;
        let credentials = args::bytes(credentials, credentials_len, "credentials")?;
        p.options.auth.push((scheme.to_owned(), credentials.to_vec()));
        Ok(())
    })
}

/// Adds an entry to the ACL of every node the session creates: ZooKeeper's
/// permission bits (read 1, write 2, create 4, delete 8, admin 16) for
/// `scheme:id` (`world:anyone`, `digest:user:hash`, `auth:`). The first
/// entry replaces the default (world:anyone, all).
///
/// # Safety
/// Each pointer must be valid for its length.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_add_acl(
    options: *const ZlSessionOptions,
    permissions: u32,
    scheme: *const u8,
    scheme_len: u32,
    id: *const u8,
    id_len: u32,
) -> i32 {
    change(options, |p| {
        let acl = Acl::new(
            permission(permissions)?,
            AuthId::new(args::text(scheme, scheme_len, "scheme")?, args::text(id, id_len, "id")?),
        );
        if !p.acl_given {
            p.options.acls.clear();
            p.acl_given = true;
        }
        p.options.acls.push(acl);
        Ok(())
    })
}

/// ZooKeeper's permission bits as the core's `Permission`.
pub(crate) fn permission(bits: u32) -> FfiResult<Permission> {
    if bits == 0 || bits > 31 {
        return Err(Failure::invalid(format!("ACL permissions {bits} are not a combination of 1, 2, 4, 8 and 16")));
    }
    Ok(zoolock::permission_from_bits(bits)?)
}

/// Turns TLS on (non-zero) or off. Any `tls_*` setter turns it on too; on
/// alone verifies the servers against the system's CAs. Off keeps what the
/// `tls_*` setters set, and the connect refuses it (`ZL_INVALID_ARGUMENT`)
/// rather than drop it and connect in plaintext.
///
/// # Safety
/// `options` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_tls(options: *const ZlSessionOptions, enabled: i32) -> i32 {
    change(options, |p| {
        if enabled != 0 {
            tls(p);
        } else if let Some(tls) = p.options.tls.as_mut() {
            tls.enabled = false;
        }
        Ok(())
    })
}

/// Which TLS PEM a `zl_session_options_set_tls_pem` call sets.
pub const ZL_PEM_CA: i32 = 0;
/// The client's certificate chain (`certfile`).
pub const ZL_PEM_CERTFILE: i32 = 1;
/// The client's private key (`keyfile`).
pub const ZL_PEM_KEYFILE: i32 = 2;

/// Sets a TLS PEM (`ZL_PEM_CA`, `ZL_PEM_CERTFILE`, `ZL_PEM_KEYFILE`) and turns
/// TLS on: a file name, or the PEM itself if it holds a `-----BEGIN ` line.
///
/// # Safety
/// `pem` must be valid for `pem_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_tls_pem(
    options: *const ZlSessionOptions,
    which: i32,
    pem: *const u8,
    pem_len: u32,
) -> i32 {
    change(options, |p| {
        let pem = zoolock::Pem::from(args::text(pem, pem_len, "pem")?);
        let tls = tls(p);
        match which {
            ZL_PEM_CA => tls.ca = Some(pem),
            ZL_PEM_CERTFILE => tls.certfile = Some(pem),
            ZL_PEM_KEYFILE => tls.keyfile = Some(pem),
            other => return Err(Failure::invalid(format!("unknown TLS PEM {other}"))),
        }
        Ok(())
    })
}

/// The password of an encrypted PKCS#8 `keyfile`; turns TLS on.
///
/// # Safety
/// `password` must be valid for `password_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_tls_keyfile_password(
    options: *const ZlSessionOptions,
    password: *const u8,
    password_len: u32,
) -> i32 {
    change(options, |p| {
        let password = args::text(password, password_len, "keyfile_password")?;
        tls(p).keyfile_password = Some(password.into());
        Ok(())
    })
}

/// `verify_certs` and `check_hostname` (each non-zero for on; both on by
/// default); turns TLS on. `verify_certs` off fails the connect with `ZL_TLS`.
///
/// # Safety
/// `options` must be a live handle.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_tls_checks(
    options: *const ZlSessionOptions,
    verify_certs: i32,
    check_hostname: i32,
) -> i32 {
    change(options, |p| {
        let tls = tls(p);
        tls.verify_certs = verify_certs != 0;
        tls.check_hostname = check_hostname != 0;
        Ok(())
    })
}

/// SASL on every connection: `mechanism` ("DIGEST-MD5"; another is
/// `ZL_INVALID_ARGUMENT` here), `username` and `password`.
///
/// # Safety
/// Each pointer must be valid for its length.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_set_sasl(
    options: *const ZlSessionOptions,
    mechanism: *const u8,
    mechanism_len: u32,
    username: *const u8,
    username_len: u32,
    password: *const u8,
    password_len: u32,
) -> i32 {
    change(options, |p| {
        let mechanism = SaslMechanism::from_name(args::text(mechanism, mechanism_len, "mechanism")?)?;
        let username = args::text(username, username_len, "username")?;
        let password = args::text(password, password_len, "password")?;
        let sasl = match mechanism {
            SaslMechanism::DigestMd5 => SaslOptions::digest_md5(username, password),
            other => return Err(Failure::invalid(format!("SASL {} is not supported here", other.name()))),
        };
        p.options.sasl = Some(sasl);
        Ok(())
    })
}

/// Connects with `options` (which stay the caller's), blocking until the
/// session is up, or fails within the connect timeout: `ZL_CONNECT_TIMEOUT`,
/// `ZL_TLS` (the message says why), `ZL_AUTH_FAILED` (SASL refused).
///
/// # Safety
/// `options` must be a live handle; `out_session` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_connect_with(
    options: *const ZlSessionOptions,
    out_session: *mut *mut ZlSession,
) -> i32 {
    guard(|| {
        let options = castable::borrow(options)?.options.lock().unwrap().options.clone();
        args::need(out_session, "out_session")?;
        let session = Session::connect_blocking(options)?;
        castable::give(ZlSession { session, listener: Listener::default() }, out_session, "out_session")
    })
}

/// Called once when `zl_session_connect_async` ends: `status` `ZL_OK` with
/// the session (the caller's to free with `zl_session_free`), else an error
/// code with its UTF-8 message, valid only during the call. Runs on
/// zoolock's callback thread.
pub type ZlConnectCallback =
    extern "C" fn(user_data: *mut c_void, status: i32, session: *mut ZlSession, message: *const u8, message_len: u32);

/// `zl_session_connect_with`, completed by `callback`: returns at once; the
/// callback is called exactly once, if and only if this returns `ZL_OK`.
/// `cancel` (may be null) abandons the connect (`ZL_CANCELLED`): a session
/// it opens after that is closed at once. The options may be freed when
/// this returns; `cancel` must stay alive until the callback has run.
///
/// # Safety
/// `options` must be a live handle; `cancel` null or live; `user_data` must
/// stay valid until the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_session_connect_async(
    options: *const ZlSessionOptions,
    cancel: *const ZlCancel,
    callback: ZlConnectCallback,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let options = castable::borrow(options)?.options.lock().unwrap().options.clone();
        let cancel = Stops::new(cancel.as_ref());
        // In a forked child the runtime's threads are gone: a spawned task would never run.
        runtime::check_process()?;
        let what = format!("the connect to {}", options.connect);
        // Dropped when cancelled: the core's connect goes on in its own task and drops what it opens.
        let work = cancellable(Session::connect(options), cancel, move || Some(Failure::cancelled(what)));
        let user_data = UserData(user_data);
        dispatch::complete_later(work, move |outcome| {
            let data = user_data.get();
            match outcome {
                Ok(session) => {
                    let session = Box::into_raw(Box::new(ZlSession { session, listener: Listener::default() }));
                    callback(data, ZL_OK, session, std::ptr::null(), 0)
                }
                Err(failure) => {
                    let message = failure.message.as_bytes();
                    callback(data, failure.code, std::ptr::null_mut(), message.as_ptr(), message.len() as u32)
                }
            }
        });
        Ok(())
    })
}

/// The options as text for logs, with every secret (passwords, credentials,
/// inline PEM) redacted. Freed with `zl_bytes_free`.
///
/// # Safety
/// `options` must be a live handle; out-pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn zl_session_options_describe(
    options: *const ZlSessionOptions,
    out_ptr: *mut *mut u8,
    out_len: *mut u32,
) -> i32 {
    guard(|| {
        let shown = format!("{:?}", castable::borrow(options)?.options.lock().unwrap().options);
        args::give(shown.into_bytes(), out_ptr, out_len, "out")
    })
}

#[cfg(test)]
mod tests {
    use std::ptr::{null, null_mut};

    use super::*;
    use crate::status::ZL_OK;
    use zoolock::ErrorKind;

    const INVALID_ARGUMENT: i32 = ErrorKind::InvalidArgument.code();

    fn new_options(connect: &str) -> *mut ZlSessionOptions {
        let mut options = null_mut();
        assert_eq!(unsafe { zl_session_options_new(connect.as_ptr(), connect.len() as u32, &mut options) }, ZL_OK);
        options
    }

    fn described(options: *const ZlSessionOptions) -> String {
        let (mut ptr, mut len) = (null_mut(), 0u32);
        assert_eq!(unsafe { zl_session_options_describe(options, &mut ptr, &mut len) }, ZL_OK);
        let shown = String::from_utf8(unsafe { std::slice::from_raw_parts(ptr, len as usize) }.to_vec()).unwrap();
        unsafe { crate::zl_bytes_free(ptr, len) };
        shown
    }

    #[test]
    fn setters_reach_the_core_options_and_secrets_stay_hidden() {
        let options = new_options("127.0.0.1:1");
        let text = |s: &'static str| (s.as_ptr(), s.len() as u32);
        unsafe {
            let ((scheme, sl), (cred, cl)) = (text("digest"), text("locker:hunter2"));
            assert_eq!(zl_session_options_add_auth(options, scheme, sl, cred, cl), ZL_OK);
            let (id, il) = text("locker:hash");
            assert_eq!(zl_session_options_add_acl(options, 31, scheme, sl, id, il), ZL_OK);
            assert_eq!(zl_session_options_add_acl(options, 32, scheme, sl, id, il), INVALID_ARGUMENT);
            let (pw, pl) = text("kp-1234");
            assert_eq!(zl_session_options_set_tls_keyfile_password(options, pw, pl), ZL_OK);
            let (key, kl) = text("-----BEGIN PRIVATE KEY-----\nS3CRETKEY\n-----END PRIVATE KEY-----\n");
            assert_eq!(zl_session_options_set_tls_pem(options, ZL_PEM_KEYFILE, key, kl), ZL_OK);
            assert_eq!(zl_session_options_set_tls_pem(options, 7, key, kl), INVALID_ARGUMENT);
            let ((m, ml), (u, ul), (p, pl)) = (text("DIGEST-MD5"), text("locker"), text("sasl-pw-99"));
            assert_eq!(zl_session_options_set_sasl(options, m, ml, u, ul, p, pl), ZL_OK);
            let (gss, gl) = text("GSSAPI");
            assert_eq!(zl_session_options_set_sasl(options, gss, gl, u, ul, p, pl), INVALID_ARGUMENT);
        }
        let pending = unsafe { &*options }.options.lock().unwrap();
        assert_eq!(pending.options.acls.len(), 1, "the first ACL replaces the default");
        assert_eq!(pending.options.auth, vec![("digest".to_string(), b"locker:hunter2".to_vec())]);
        assert!(pending.options.tls.as_ref().unwrap().keyfile_password.is_some());
        drop(pending);
        let shown = described(options);
        for secret in ["hunter2", "kp-1234", "S3CRETKEY", "sasl-pw-99"] {
            assert!(!shown.contains(secret), "{secret} in {shown}");
        }
        unsafe { zl_session_options_free(options) };
    }

    /// TLS turned off after a PEM was set must not drop the PEM and connect
    /// in plaintext: refused, as Python and C# refuse it, by the core.
    #[test]
    fn tls_options_with_tls_turned_off_are_refused() {
        let options = new_options("127.0.0.1:1");
        let ca = "/etc/zk/ca.pem";
        let mut session = null_mut();
        unsafe {
            assert_eq!(zl_session_options_set_connect_timeout(options, 500), ZL_OK);
            assert_eq!(zl_session_options_set_tls_pem(options, ZL_PEM_CA, ca.as_ptr(), ca.len() as u32), ZL_OK);
            assert_eq!(zl_session_options_set_tls(options, 0), ZL_OK);
            let status = zl_session_connect_with(options, &mut session);
            let message = crate::tests::last_error();
            assert_eq!(status, INVALID_ARGUMENT, "{message}");
            assert!(message.contains("ca needs TLS on"), "{message}");
            assert!(session.is_null());
            zl_session_options_free(options);
        }
    }

    #[test]
    fn verify_certs_off_fails_the_connect_with_zl_tls() {
        let options = new_options("127.0.0.1:1");
        let mut session = null_mut();
        unsafe {
            assert_eq!(zl_session_options_set_tls_checks(options, 0, 0), ZL_OK);
            assert_eq!(zl_session_connect_with(options, &mut session), ErrorKind::Tls.code());
            assert!(session.is_null());
            assert_eq!(zl_session_connect_with(null(), &mut session), INVALID_ARGUMENT);
            zl_session_options_free(options);
            zl_session_options_free(null_mut());
        }
    }
}

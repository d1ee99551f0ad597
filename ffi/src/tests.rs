//! The boundary's own checks, without a server: status codes and messages
//! for bad arguments, and panics turned into `ZL_PANIC`.

use std::ptr::{null, null_mut};

use zoolock::{Error, ErrorKind, Kind, Scheme};

use crate::*;

const INVALID_ARGUMENT: i32 = ErrorKind::InvalidArgument.code();

pub(crate) fn last_error() -> String {
    let (mut ptr, mut len) = (null(), 0u32);
    assert_eq!(unsafe { zl_last_error(&mut ptr, &mut len) }, ZL_OK);
    let bytes = unsafe { std::slice::from_raw_parts(ptr, len as usize) };
    String::from_utf8(bytes.to_vec()).unwrap()
}

#[test]
fn bad_arguments_get_their_codes_and_messages() {
    let mut session = null_mut();
    let bad = b"host:99999";
    assert_eq!(
        unsafe { zl_session_connect(bad.as_ptr(), bad.len() as u32, 0, 0, &mut session) },
        ErrorKind::InvalidConnectString.code()
    );
    assert!(last_error().contains("host:99999"), "{}", last_error());
    assert!(session.is_null());

    let not_utf8 = [0xff, 0xfe];
    assert_eq!(unsafe { zl_session_connect(not_utf8.as_ptr(), 2, 0, 0, &mut session) }, INVALID_ARGUMENT);
    assert!(last_error().contains("UTF-8"));
    assert_eq!(unsafe { zl_session_connect(null(), 3, 0, 0, &mut session) }, INVALID_ARGUMENT);

    let path = b"/a";
    let mut lock = null_mut();
    assert_eq!(
        unsafe {
            zl_lock_new(null(), path.as_ptr(), 2, Kind::Mutex.code(), Scheme::Kazoo.code(), null(), 0, 0, &mut lock)
        },
        INVALID_ARGUMENT
    );
    assert!(last_error().contains("session handle is null"));
    let unknown = ZL_LOCK_LISTING << 1;
    assert_eq!(
        unsafe {
            zl_lock_new(
                null(),
                path.as_ptr(),
                2,
                Kind::Mutex.code(),
                Scheme::Kazoo.code(),
                null(),
                0,
                unknown,
                &mut lock,
            )
        },
        INVALID_ARGUMENT
    );
    assert!(last_error().contains("unknown lock options 0x4"), "{}", last_error());
    let mut acquired = 0u8;
    assert_eq!(unsafe { zl_holder_acquire(null(), -1, -1, 0, null(), &mut acquired) }, INVALID_ARGUMENT);
    assert_eq!(unsafe { zl_holder_release(null(), 0, null_mut()) }, INVALID_ARGUMENT);
    // Freeing null is allowed.
    unsafe {
        zl_holder_free(null_mut());
        zl_session_free(null_mut());
        zl_cancel_free(null_mut());
        zl_bytes_free(null_mut(), 0);
    }
}

#[test]
fn znode_transaction_and_election_calls_check_their_arguments() {
    let path = b"/a";
    let (mut found, mut stat) = (0u8, ZlStat::default());
    assert_eq!(unsafe { zl_session_exists(null(), path.as_ptr(), 2, &mut found, &mut stat) }, INVALID_ARGUMENT);
    assert!(last_error().contains("session handle is null"));
    assert_eq!(znode::create_options(8).unwrap_err().code, INVALID_ARGUMENT);
    let options = znode::create_options(ZL_CREATE_EPHEMERAL | ZL_CREATE_SEQUENCE | ZL_CREATE_MAKEPATH).unwrap();
    assert!(options.ephemeral && options.sequence && options.makepath);
    assert_eq!(unsafe { zl_transaction_check(null(), path.as_ptr(), 2, -1) }, INVALID_ARGUMENT);
    assert!(last_error().contains("transaction handle is null"));
    let mut transaction = null_mut();
    assert_eq!(unsafe { zl_holder_fenced(null(), &mut transaction) }, INVALID_ARGUMENT);
    let mut leadership = null_mut();
    assert_eq!(unsafe { zl_election_lead(null(), -1, null(), &mut leadership) }, INVALID_ARGUMENT);
    assert!(last_error().contains("election handle is null"));
    assert_eq!(unsafe { zl_leadership_resign(null(), null_mut()) }, INVALID_ARGUMENT);
    unsafe {
        zl_transaction_free(null_mut());
        zl_election_free(null_mut());
        zl_leadership_free(null_mut());
    }
}

#[test]
fn null_data_is_a_null_pointer_with_length_zl_null_data_in_and_out() {
    let byte = [7u8];
    assert_eq!(unsafe { args::data(null(), ZL_NULL_DATA, "data") }.unwrap(), None);
    assert_eq!(unsafe { args::data(null(), 0, "data") }.unwrap(), Some(&[][..]));
    assert_eq!(unsafe { args::data(byte.as_ptr(), 0, "data") }.unwrap(), Some(&[][..]));
    assert_eq!(unsafe { args::data(byte.as_ptr(), 1, "data") }.unwrap(), Some(&byte[..]));
    let refused = unsafe { args::data(byte.as_ptr(), ZL_NULL_DATA, "data") }.unwrap_err();
    assert_eq!(refused.code, INVALID_ARGUMENT);
    assert!(refused.message.contains("ZL_NULL_DATA"), "{}", refused.message);

    let (mut ptr, mut len) = (null_mut(), 0u32);
    unsafe { args::give_data(None, &mut ptr, &mut len, "data") }.unwrap();
    assert_eq!((ptr.is_null(), len), (true, ZL_NULL_DATA));
    unsafe { zl_bytes_free(ptr, len) };
    unsafe { args::give_data(Some(Vec::new()), &mut ptr, &mut len, "data") }.unwrap();
    assert_eq!((ptr.is_null(), len), (false, 0));
    unsafe { zl_bytes_free(ptr, len) };
}

#[test]
fn timeouts_and_leases_are_checked() {
    assert!(holder::options(-1, -1, 0).is_ok());
    assert!(holder::options(0, 5, 0).is_ok());
    assert_eq!(holder::options(-2, -1, 0).unwrap_err().code, INVALID_ARGUMENT);
    assert_eq!(holder::options(10, 0, 0).unwrap_err().code, INVALID_ARGUMENT);
}

#[test]
fn a_panic_is_a_status_not_an_abort() {
    extern "C" fn ignore(_: *mut std::ffi::c_void, _: i32, _: u8, _: *const u8, _: u32) {}
    assert_eq!(unsafe { zl_selftest_panic(0, ignore, null_mut()) }, ZL_PANIC);
    assert!(last_error().contains("as asked"));
}

#[test]
fn cancel_tokens_and_buffers_round_trip() {
    let mut cancel = null_mut();
    assert_eq!(unsafe { zl_cancel_new(&mut cancel) }, ZL_OK);
    assert_eq!(unsafe { zl_cancel_fire(cancel) }, ZL_OK);
    unsafe { zl_cancel_free(cancel) };

    let list = args::encode_list(&["a".into(), "".into(), "ü".into()]);
    assert_eq!(list, [1, 0, 0, 0, b'a', 0, 0, 0, 0, 2, 0, 0, 0, 0xc3, 0xbc]);
    let (mut ptr, mut len) = (null_mut(), 0u32);
    unsafe { args::give(list, &mut ptr, &mut len, "list") }.unwrap();
    assert_eq!(len, 15);
    unsafe { zl_bytes_free(ptr, len) };
}

#[test]
fn a_failure_carries_its_kinds_code_and_the_cores_message() {
    for kind in ErrorKind::ALL {
        let error = Error::example(kind);
        let failure = Failure::from(error.clone());
        assert_eq!((failure.code, failure.message), (kind.code(), error.to_string()), "{kind:?}");
    }
    let failure = Failure::from(Error::NoNode { action: "create", path: "/locks/x".to_owned() });
    assert_eq!((failure.code, failure.message.as_str()), (16, "could not create /locks/x: no such node"));
}

#[test]
fn metrics_and_inspect_refuse_a_null_session_or_out_pointer() {
    let (mut ptr, mut len) = (null_mut(), 0u32);
    assert_eq!(unsafe { zl_session_metrics(null(), &mut ptr, &mut len) }, INVALID_ARGUMENT);
    assert!(last_error().contains("session handle is null"));
    let path = b"/a";
    assert_eq!(unsafe { zl_inspect(null(), path.as_ptr(), 2, &mut ptr, &mut len) }, INVALID_ARGUMENT);
    assert!(ptr.is_null() && len == 0);
    let mut id = 0i64;
    assert_eq!(unsafe { zl_session_client_id(null(), &mut id, &mut ptr, &mut len) }, INVALID_ARGUMENT);
    assert!(ptr.is_null() && len == 0);
}

/// A client id to resume that cannot name a session is refused at the connect, before any network call.
#[test]
fn a_resume_that_names_no_session_is_an_invalid_argument() {
    let connect = b"127.0.0.1:1";
    let mut options = null_mut();
    assert_eq!(unsafe { zl_session_options_new(connect.as_ptr(), connect.len() as u32, &mut options) }, 0);
    let password = [7u8; 15];
    assert_eq!(unsafe { zl_session_options_set_resume(options, 42, password.as_ptr(), 15) }, 0);
    let mut session = null_mut();
    assert_eq!(unsafe { zl_session_connect_with(options, &mut session) }, INVALID_ARGUMENT);
    assert!(last_error().contains("password is 16 bytes, got 15"), "{}", last_error());
    assert_eq!(unsafe { zl_session_options_set_resume(options, 42, null(), 1) }, INVALID_ARGUMENT);
    unsafe { zl_session_options_free(options) };
}

#[test]
fn log_events_reach_the_callback_up_to_its_level_and_stop_when_removed() {
    use std::sync::mpsc::{sync_channel, SyncSender};
    extern "C" fn sink(
        user_data: *mut std::ffi::c_void,
        level: i32,
        target: *const u8,
        target_len: u32,
        message: *const u8,
        message_len: u32,
    ) {
        let text = |p, n| String::from_utf8(unsafe { std::slice::from_raw_parts(p, n as usize) }.to_vec()).unwrap();
        let events = unsafe { &*(user_data as *const SyncSender<(i32, String, String)>) };
        let _ = events.try_send((level, text(target, target_len), text(message, message_len)));
    }
    let (events, seen) = sync_channel::<(i32, String, String)>(64);
    let user_data = &events as *const _ as *mut std::ffi::c_void;
    assert_eq!(unsafe { zl_set_log_callback(9, Some(sink), user_data) }, INVALID_ARGUMENT);
    assert!(last_error().contains("unknown log level 9"));
    assert_eq!(unsafe { zl_set_log_callback(ZL_LOG_INFO, Some(sink), user_data) }, ZL_OK);
    tracing::debug!(target: "zoolock::tests", "below the level");
    tracing::info!(target: "other_crate", "another crate's info");
    tracing::warn!(target: "zoolock::tests", node = "/locks/a/x", "a warning");
    let wait = std::time::Duration::from_secs(10);
    // Other tests of this binary run alongside and log too (zoolock::session…): only this test's target counts.
    let ours = |(_, target, _): &(i32, String, String)| target == "zoolock::tests";
    let (level, _, message) = std::iter::from_fn(|| seen.recv_timeout(wait).ok()).find(ours).expect("the warning");
    assert_eq!(level, ZL_LOG_WARN);
    assert!(message.contains("a warning") && message.contains("/locks/a/x"), "{message}");
    assert_eq!(unsafe { zl_set_log_callback(ZL_LOG_OFF, None, null_mut()) }, ZL_OK);
    tracing::error!(target: "zoolock::tests", "after removal");
    // Delivered in order on the callback thread: a marker posted after the error proves it was dropped.
    let (done, finished) = sync_channel(1);
    dispatch::post(Box::new(move || {
        let _ = done.send(());
    }));
    finished.recv_timeout(wait).unwrap();
    assert!(!seen.try_iter().any(|event| ours(&event)), "only the warning came through");
}

/// A connect to a server that never answers, abandoned by its cancel
/// token: the callback gets `ZL_CANCELLED` long before the connect timeout.
#[test]
fn a_callback_completed_connect_ends_when_its_token_fires() {
    use std::sync::mpsc::{sync_channel, SyncSender};
    extern "C" fn connected(
        user_data: *mut std::ffi::c_void,
        status: i32,
        session: *mut ZlSession,
        _: *const u8,
        _: u32,
    ) {
        unsafe { zl_session_free(session) };
        // The sender is the callback's own (called exactly once): borrowed
        // from the test's frame, it could be dropped by the returning test
        // while `try_send` still touches it.
        let outcome = unsafe { Box::from_raw(user_data as *mut SyncSender<i32>) };
        let _ = outcome.try_send(status);
    }
    // Accepts (the kernel does) but never speaks ZooKeeper.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let connect = silent.local_addr().unwrap().to_string();
    let mut options = null_mut();
    assert_eq!(unsafe { zl_session_options_new(connect.as_ptr(), connect.len() as u32, &mut options) }, ZL_OK);
    assert_eq!(unsafe { zl_session_options_set_connect_timeout(options, 600_000) }, ZL_OK);
    let mut cancel = null_mut();
    assert_eq!(unsafe { zl_cancel_new(&mut cancel) }, ZL_OK);
    let (outcome, ended) = sync_channel::<i32>(1);
    let user_data = Box::into_raw(Box::new(outcome)) as *mut std::ffi::c_void;
    assert_eq!(unsafe { zl_session_connect_async(options, cancel, connected, user_data) }, ZL_OK);
    unsafe { zl_session_options_free(options) };
    assert!(ended.try_recv().is_err(), "nothing answered, nothing ended");
    assert_eq!(unsafe { zl_cancel_fire(cancel) }, ZL_OK);
    let status = ended.recv_timeout(std::time::Duration::from_secs(60)).expect("the callback");
    assert_eq!(status, ErrorKind::Cancelled.code());
    unsafe { zl_cancel_free(cancel) };
}

#[test]
fn a_list_argument_is_checked_item_by_item() {
    let list = crate::args::encode_list(&["/a".to_owned(), "/é".to_owned(), String::new()]);
    assert_eq!(crate::args::decode_list(&list, "paths").unwrap(), ["/a", "/é", ""]);
    assert_eq!(crate::args::decode_list(&[], "paths").unwrap(), Vec::<&str>::new());
    let cut = crate::args::decode_list(&list[..list.len() - 5], "paths").unwrap_err();
    assert!(cut.message.contains("paths: a list cut short"), "{}", cut.message);
    let header_cut = crate::args::decode_list(&[1, 0], "paths").unwrap_err();
    assert!(header_cut.message.contains("cut short"), "{}", header_cut.message);
    let not_utf8 = crate::args::decode_list(&[1, 0, 0, 0, 0xff], "paths").unwrap_err();
    assert!(not_utf8.message.contains("not UTF-8"), "{}", not_utf8.message);
    let values = crate::args::decode_byte_list(&[1, 0, 0, 0, 0xff, 0, 0, 0, 0], "values").unwrap();
    assert_eq!(values, [&[0xff][..], &[][..]], "any bytes, empty ones too");
    assert!(crate::args::decode_byte_list(&[2, 0, 0, 0, 0xff], "values").unwrap_err().message.contains("cut short"));
}

#[test]
fn barrier_queue_and_party_calls_check_their_handles() {
    extern "C" fn never(
        _: *mut std::ffi::c_void,
        _: i32,
        _: *const u8,
        _: u32,
        _: *const ZlStat,
        _: *const u8,
        _: u32,
    ) {
        panic!("a call that did not start must not call back");
    }
    let mut barrier = null_mut();
    assert_eq!(unsafe { zl_barrier_new(null(), b"/a".as_ptr(), 2, &mut barrier) }, INVALID_ARGUMENT);
    assert!(last_error().contains("session handle is null"));
    assert_eq!(unsafe { zl_barrier_wait_async(null(), -1, null(), never, null_mut()) }, INVALID_ARGUMENT);
    assert!(last_error().contains("barrier handle is null"));
    let mut participating = 0u8;
    assert_eq!(unsafe { zl_double_barrier_participating(null(), &mut participating) }, INVALID_ARGUMENT);
    assert!(last_error().contains("double barrier handle is null"));
    assert_eq!(unsafe { zl_double_barrier_enter_async(null(), null(), never, null_mut()) }, INVALID_ARGUMENT);
    let mut len = 0u32;
    assert_eq!(unsafe { zl_queue_len(null(), &mut len) }, INVALID_ARGUMENT);
    assert!(last_error().contains("queue handle is null"));
    assert_eq!(unsafe { zl_locking_queue_get_async(null(), -2, null(), never, null_mut()) }, INVALID_ARGUMENT);
    assert!(last_error().contains("locking queue handle is null"));
    assert_eq!(
        unsafe { zl_locking_queue_put_all_async(null(), null(), 0, 100, null(), never, null_mut()) },
        INVALID_ARGUMENT
    );
    assert!(last_error().contains("locking queue handle is null"));
    assert_eq!(
        unsafe { zl_session_get_acls_async(null(), b"/a".as_ptr(), 2, null(), never, null_mut()) },
        INVALID_ARGUMENT
    );
    assert!(last_error().contains("session handle is null"));
    let acls = null();
    assert_eq!(
        unsafe { zl_session_set_acls_async(null(), b"/a".as_ptr(), 2, acls, 0, -1, null(), never, null_mut()) },
        INVALID_ARGUMENT
    );
    let scheme = b"digest".as_ptr();
    assert_eq!(
        unsafe { zl_session_add_auth_async(null(), scheme, 6, null(), 0, null(), never, null_mut()) },
        INVALID_ARGUMENT
    );
    let mut party = null_mut();
    assert_eq!(unsafe { zl_party_new(null(), b"/a".as_ptr(), 2, null(), 0, 1, &mut party) }, INVALID_ARGUMENT);
    assert_eq!(unsafe { zl_party_members_async(null(), null(), never, null_mut()) }, INVALID_ARGUMENT);
    assert!(last_error().contains("party handle is null"));
    unsafe {
        zl_party_free(null_mut());
        zl_barrier_free(null_mut());
        zl_double_barrier_free(null_mut());
        zl_queue_free(null_mut());
        zl_locking_queue_free(null_mut());
    }
}

/// The callback thread ends once idle, since Mono waits at exit for every
/// thread that called into it (aborting a background one first, which a
/// thread waiting in native code never notices); the next callback starts
/// another, and callbacks keep their order.
#[test]
fn the_callback_thread_ends_when_idle() {
    use std::cell::RefCell;
    use std::sync::mpsc::{channel, Sender};
    struct OnExit(Sender<()>);
    impl Drop for OnExit {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }
    thread_local! { static GUARD: RefCell<Option<OnExit>> = const { RefCell::new(None) }; }
    let wait = std::time::Duration::from_secs(30);
    let (seen, order) = channel();
    let (exited, ended) = channel();
    for i in 0..100 {
        let (seen, exited) = (seen.clone(), exited.clone());
        dispatch::post(Box::new(move || {
            GUARD.with(|guard| {
                guard.borrow_mut().get_or_insert_with(|| OnExit(exited));
            });
            let _ = seen.send((i, std::thread::current().id()));
        }));
    }
    let first: Vec<_> = (0..100).map(|_| order.recv_timeout(wait).unwrap()).collect();
    assert!(first.iter().map(|(i, _)| *i).eq(0..100), "callbacks out of order");
    ended.recv_timeout(wait).expect("the idle callback thread ended");
    dispatch::post(Box::new(move || {
        let _ = seen.send((100, std::thread::current().id()));
    }));
    let (_, thread) = order.recv_timeout(wait).unwrap();
    assert_ne!(thread, first[99].1, "a callback after the thread ended runs on a new one");
}

#[test]
fn a_call_without_a_result_gives_its_callback_empty_data() {
    type Seen = std::sync::mpsc::Sender<(i32, bool, u32)>;
    extern "C" fn record(
        user_data: *mut std::ffi::c_void,
        status: i32,
        data: *const u8,
        len: u32,
        _: *const ZlStat,
        _: *const u8,
        _: u32,
    ) {
        // The callback's own sender (called exactly once): one borrowed from
        // the test's frame was dropped by the returning test while `send`
        // still woke the receiver (a use after free, seen as SIGSEGV in CI).
        let seen = unsafe { Box::from_raw(user_data as *mut Seen) };
        let _ = seen.send((status, data.is_null(), len));
    }
    let (sender, seen): (Seen, _) = std::sync::mpsc::channel();
    let user_data = args::UserData(Box::into_raw(Box::new(sender)) as *mut std::ffi::c_void);
    let work = async { zoolock::Result::Ok(()) };
    znode::reply_later(work, "nothing".into(), crate::cancel::Stops::new(None), record, user_data, |()| {
        znode::Reply::empty()
    })
    .unwrap();
    // As the header says of delete, add_auth and the recipes' calls: empty data, not null data.
    assert_eq!(seen.recv_timeout(std::time::Duration::from_secs(10)).unwrap(), (ZL_OK, false, 0));
}

//! The core's log events, to a callback the caller registers: without one
//! they are dropped, as cheaply as a disabled `tracing` event.
//!
//! The core logs with `tracing`; once a callback is set,
//! `zoolock::logging` hands its events, not its spans, to the `log` facade
//! (unless the process set a `tracing` subscriber). This crate's `log` logger
//! formats each event on the thread that logged it and posts it to the
//! callback thread (`dispatch.rs`), so the caller's code never runs on an
//! I/O thread nor under any lock of zoolock's.

use std::ffi::c_void;
use std::sync::{Condvar, Mutex, Once};
use std::thread::ThreadId;

use log::{Level, LevelFilter, Log, Metadata, Record};

use crate::args::UserData;
use crate::dispatch;
use crate::status::{guard, Failure};

/// No events.
pub const ZL_LOG_OFF: i32 = 0;
/// Failures zoolock could not recover from by itself (a node it could not delete).
pub const ZL_LOG_ERROR: i32 = 1;
/// Events an operator should see: a session ended, a persistent hold outlived its session.
pub const ZL_LOG_WARN: i32 = 2;
/// Session state changes.
pub const ZL_LOG_INFO: i32 = 3;
/// What zoolock does, step by step.
pub const ZL_LOG_DEBUG: i32 = 4;
/// Everything.
pub const ZL_LOG_TRACE: i32 = 5;

/// `zl_set_log_callback`'s callback (its parameters named there).
type ZlLogCallback = extern "C" fn(*mut c_void, i32, *const u8, u32, *const u8, u32);

struct Slot {
    target: Option<(ZlLogCallback, UserData)>,
    calling: Option<ThreadId>,
}

static SLOT: Mutex<Slot> = Mutex::new(Slot { target: None, calling: None });
static DONE: Condvar = Condvar::new();

fn level_code(level: Level) -> i32 {
    match level {
        Level::Error => ZL_LOG_ERROR,
        Level::Warn => ZL_LOG_WARN,
        Level::Info => ZL_LOG_INFO,
        Level::Debug => ZL_LOG_DEBUG,
        Level::Trace => ZL_LOG_TRACE,
    }
}

struct Forward;

impl Log for Forward {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // zoolock's own events up to the level asked for (log's max level);
        // its client library's (per-connection chatter) from warn up, as in Python.
        metadata.level() <= log::max_level()
            && (metadata.target().starts_with("zoolock") || metadata.level() <= Level::Warn)
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let (level, target, message) =
            (level_code(record.level()), record.target().to_owned(), record.args().to_string());
        dispatch::post(Box::new(move || deliver(level, &target, &message)));
    }

    fn flush(&self) {}
}

fn deliver(level: i32, target: &str, message: &str) {
    let callback = {
        let mut slot = SLOT.lock().unwrap();
        let Some(callback) = slot.target else { return };
        slot.calling = Some(std::thread::current().id());
        callback
    };
    // Called with no lock held: the callback may set another callback.
    (callback.0)(callback.1.get(), level, target.as_ptr(), target.len() as u32, message.as_ptr(), message.len() as u32);
    SLOT.lock().unwrap().calling = None;
    DONE.notify_all();
}

/// Sets the callback told of zoolock's log events up to `level` (`ZL_LOG_*`:
/// `ZL_LOG_WARN` gives errors and warnings), replacing any earlier one. It is
/// called with each event's level (`ZL_LOG_*`), its target (the Rust module,
/// e.g. `zoolock::session`) and its message, both UTF-8 and valid only during
/// the call, on zoolock's callback thread, after the callbacks posted before
/// it (one at a time; the thread ends when idle, so a later call may come on
/// another). A null callback or `ZL_LOG_OFF` removes it, and events are then
/// dropped at the cost of one comparison. When this returns, the earlier
/// callback is not running and will not run again. Events of zoolock's client library come
/// from warnings up, whatever the level. If the process already has another
/// Rust `log` logger (a Rust program linking this crate), events go to that one.
///
/// # Safety
/// `user_data` must stay valid for the callback.
#[no_mangle]
pub unsafe extern "C" fn zl_set_log_callback(
    level: i32,
    callback: Option<
        extern "C" fn(
            user_data: *mut c_void,
            level: i32,
            target: *const u8,
            target_len: u32,
            message: *const u8,
            message_len: u32,
        ),
    >,
    user_data: *mut c_void,
) -> i32 {
    guard(|| {
        let filter = match level {
            ZL_LOG_OFF => LevelFilter::Off,
            ZL_LOG_ERROR => LevelFilter::Error,
            ZL_LOG_WARN => LevelFilter::Warn,
            ZL_LOG_INFO => LevelFilter::Info,
            ZL_LOG_DEBUG => LevelFilter::Debug,
            ZL_LOG_TRACE => LevelFilter::Trace,
            other => return Err(Failure::invalid(format!("unknown log level {other}"))),
        };
        static INSTALL: Once = Once::new();
        INSTALL.call_once(|| {
            let _ = log::set_logger(&Forward);
            zoolock::logging::events_to_log();
        });
        let mut slot = SLOT.lock().unwrap();
        let me = std::thread::current().id();
        while slot.calling.is_some_and(|t| t != me) {
            slot = DONE.wait(slot).unwrap();
        }
        slot.target = callback.filter(|_| filter != LevelFilter::Off).map(|c| (c, UserData(user_data)));
        log::set_max_level(if slot.target.is_some() { filter } else { LevelFilter::Off });
        Ok(())
    })
}

//! Hands the core's log events to Python's `logging` (logger "zoolock").
//!
//! The core logs with `tracing`, whose "log" feature passes events to the
//! `log` facade; this logger queues them to one thread that takes the GIL,
//! so an I/O thread never waits for Python to log.

use std::sync::mpsc::Receiver;

use log::{Level, LevelFilter, Log, Metadata, Record};
use pyo3::prelude::*;

use crate::wait::{attach_from_thread, ProcessThread};

struct Forward {
    thread: ProcessThread<(u8, String)>,
}

impl Log for Forward {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // zoolock's own events at debug and above; its client library's
        // (zookeeper_client: per-connection chatter) from warn up.
        let ours = metadata.target().starts_with("zoolock");
        metadata.level() <= if ours { Level::Debug } else { Level::Warn }
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) {
            return;
        }
        let level = match record.level() {
            Level::Error => 40,
            Level::Warn => 30,
            Level::Info => 20,
            Level::Debug => 10,
            Level::Trace => 5,
        };
        let message = format!("{} [{}]", record.args(), record.target());
        self.thread.send((level, message), start);
    }

    fn flush(&self) {}
}

fn start(receiver: Receiver<(u8, String)>) {
    let _ = std::thread::Builder::new().name("zoolock-log".into()).spawn(move || {
        let mut logger: Option<Py<PyAny>> = None;
        for (level, message) in receiver {
            let delivered = attach_from_thread(|py| {
                let logger = match &logger {
                    Some(logger) => logger.bind(py).clone(),
                    None => match py.import("logging").and_then(|l| l.call_method1("getLogger", ("zoolock",))) {
                        Ok(found) => logger.insert(found.unbind()).bind(py).clone(),
                        Err(_) => return,
                    },
                };
                if let Err(err) = logger.call_method1("log", (level, "%s", message)) {
                    err.write_unraisable(py, Some(&logger));
                }
            });
            if delivered.is_none() {
                return; // the interpreter is shutting down
            }
        }
    });
}

/// Installs the forwarding logger, unless another `log` logger is already
/// installed in this process. Its thread starts with the first event.
pub fn install() {
    if log::set_boxed_logger(Box::new(Forward { thread: ProcessThread::new() })).is_ok() {
        log::set_max_level(LevelFilter::Debug);
    }
}

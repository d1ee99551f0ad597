//! Hands the core's log events to Python's `logging` (logger "zoolock"),
//! the session's state changes in kazoo's words (one line each, with the
//! session id), zookeeper-client's per-attempt lines only if errors.
//!
//! The core logs with `tracing`; `zoolock::logging` passes its events, not
//! its spans, to the `log` facade; this logger queues them to one thread
//! that takes the GIL, so an I/O thread never waits for Python to log.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use log::{Level, LevelFilter, Log, Metadata, Record};
use pyo3::prelude::*;

use crate::wait::{attach_from_thread, ProcessThread};

struct Forward {
    thread: ProcessThread<(u8, String)>,
}

impl Log for Forward {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        // zoolock's own events at debug and above; its client library's
        // (zookeeper_client: a line per connection attempt) only errors:
        // the session's state lines say what they mean, once.
        let ours = metadata.target().starts_with("zoolock");
        metadata.level() <= if ours { Level::Debug } else { Level::Error }
    }

    fn log(&self, record: &Record<'_>) {
        if !self.enabled(record.metadata()) || below_python_level(record.level()) {
            return;
        }
        let text = record.args().to_string();
        let said = match kazoo_words(&text) {
            Some(said) => said,
            None => {
                let level = match record.level() {
                    // A new session's failed attempts: the state lines tell the outage.
                    _ if text.starts_with("zoolock could not open a new session") => 10,
                    Level::Error => 40,
                    Level::Warn => 30,
                    Level::Info => 20,
                    Level::Debug => 10,
                    Level::Trace => 5,
                };
                (level, format!("{text} [{}]", record.target()))
            }
        };
        self.thread.send(said, start);
    }

    fn flush(&self) {}
}

/// The "zoolock" logger's effective level as last read (0: not yet) in the
/// top byte, and when (ms since `epoch()`) below: one word, read whole.
static PYTHON_LEVEL: AtomicU64 = AtomicU64::new(0);

/// How stale the level may be: a `setLevel` takes effect within this.
const LEVEL_FRESH: Duration = Duration::from_millis(250);

fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// A debug or trace event the "zoolock" logger would drop anyway (its level,
/// read when the current call began or at most 250 ms ago, is above it):
/// dropped here, unformatted and without the GIL — a lock's every step logs
/// at debug, and Python's logger is at WARNING unless asked. Once the level
/// is stale, one event goes through, and the log thread reads it again. Info and up always go
/// through: kazoo's words may raise their level.
fn below_python_level(level: Level) -> bool {
    let read = PYTHON_LEVEL.load(Ordering::Relaxed);
    let (python, at) = (read >> 56, read & ((1 << 56) - 1));
    let fresh = now_ms().saturating_sub(at) < LEVEL_FRESH.as_millis() as u64;
    level >= Level::Debug && python > 10 && fresh
}

fn now_ms() -> u64 {
    epoch().elapsed().as_millis() as u64
}

/// Reads the "zoolock" logger's effective level into the cache.
fn read_level(logger: &Bound<'_, PyAny>) {
    if let Ok(effective) = logger.call_method0("getEffectiveLevel").and_then(|l| l.extract::<u64>()) {
        PYTHON_LEVEL.store(effective.clamp(1, 255) << 56 | now_ms(), Ordering::Relaxed);
    }
}

/// Called as a blocking call begins (the GIL held): a level lowered just
/// before the call holds for its debug lines, as `setLevel` does in Python.
/// Costs a read only while the cache drops debug lines.
pub fn refresh_level(py: Python<'_>) {
    if PYTHON_LEVEL.load(Ordering::Relaxed) >> 56 <= 10 {
        return;
    }
    static LOGGER: OnceLock<Py<PyAny>> = OnceLock::new();
    let logger = match LOGGER.get() {
        Some(logger) => logger,
        None => match py.import("logging").and_then(|l| l.call_method1("getLogger", ("zoolock",))) {
            Ok(found) => LOGGER.get_or_init(|| found.unbind()),
            Err(_) => return,
        },
    };
    read_level(logger.bind(py));
}

/// The core's session line (`zoolock session state=… session_id=…`) as
/// kazoo logs the same change; the core's "session ended" line goes to
/// debug (the LOST line that follows says it).
fn kazoo_words(text: &str) -> Option<(u8, String)> {
    if text.starts_with("zoolock session ended") {
        return Some((10, text.to_owned()));
    }
    let fields = text.strip_prefix("zoolock session ")?;
    let field = |name: &str| {
        fields.split(' ').find_map(|f| f.strip_prefix(name)?.strip_prefix('=')).map(|v| v.trim_matches('"'))
    };
    let id = field("session_id")?;
    Some(match field("state")? {
        "Connected" => (20, format!("Zookeeper connection established, state: CONNECTED, session {id}")),
        "Suspended" => (30, format!("Connection dropped, state: CONNECTING, session {id}")),
        "Lost" => (20, format!("Zookeeper session closed, state: EXPIRED_SESSION, session {id}")),
        "Closed" => (20, format!("Zookeeper session closed, state: CLOSED, session {id}")),
        _ => return None,
    })
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
                read_level(&logger);
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
    zoolock::logging::events_to_log();
}

#[cfg(test)]
mod tests {
    use super::kazoo_words;

    #[test]
    fn the_core_s_session_lines_in_kazoo_s_words() {
        let first = r#"zoolock session state=Connected generation=1 session_id="0x1a" hosts="h:1""#;
        assert_eq!(
            kazoo_words(first).unwrap(),
            (20, "Zookeeper connection established, state: CONNECTED, session 0x1a".into())
        );
        let lost = "zoolock session state=Lost generation=1 session_id=0x1a";
        assert_eq!(kazoo_words(lost).unwrap().1, "Zookeeper session closed, state: EXPIRED_SESSION, session 0x1a");
        assert_eq!(kazoo_words("zoolock session ended; opening a new one state=Expired").unwrap().0, 10);
        assert_eq!(kazoo_words("lock lost"), None);
    }
}

//! The core's `tracing` events for the `log` facade, without its spans: what
//! the bindings forward (to Python's `logging`, to a C callback).
//!
//! tracing's "log" feature passes events to `log` when no subscriber is
//! set, but every span's opening too (`acquire; path=…`, `hold; …`,
//! `release; …`: three INFO records per lock cycle, each formatted and, in
//! Python, handed to `logging` under the GIL). Spans are context for a Rust
//! subscriber, not events: [`events_to_log`] sets a subscriber that never
//! enables a span and writes each event as the feature would.

use std::fmt;

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::subscriber::Interest;
use tracing::{Event, Level, Metadata, Subscriber};

/// Makes the core's events reach the `log` logger and its spans nothing,
/// for the whole process (`tracing`'s global subscriber). False if a
/// subscriber was already set: a Rust program's own stays in charge.
pub fn events_to_log() -> bool {
    tracing::subscriber::set_global_default(EventsToLog).is_ok()
}

struct EventsToLog;

fn log_level(level: Level) -> log::Level {
    match level {
        Level::ERROR => log::Level::Error,
        Level::WARN => log::Level::Warn,
        Level::INFO => log::Level::Info,
        Level::DEBUG => log::Level::Debug,
        Level::TRACE => log::Level::Trace,
    }
}

fn log_metadata<'a>(metadata: &'a Metadata<'_>) -> log::Metadata<'a> {
    log::Metadata::builder().level(log_level(*metadata.level())).target(metadata.target()).build()
}

impl Subscriber for EventsToLog {
    fn register_callsite(&self, metadata: &'static Metadata<'static>) -> Interest {
        // Asked again at each event: the logger's level may change.
        if metadata.is_span() {
            Interest::never()
        } else {
            Interest::sometimes()
        }
    }

    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.is_event()
            && log_level(*metadata.level()) <= log::max_level()
            && log::logger().enabled(&log_metadata(metadata))
    }

    fn new_span(&self, _: &Attributes<'_>) -> Id {
        Id::from_u64(1) // never enabled: no span is made
    }

    fn record(&self, _: &Id, _: &Record<'_>) {}

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let metadata = event.metadata();
        log::logger().log(
            &log::Record::builder()
                .metadata(log_metadata(metadata))
                .module_path(metadata.module_path())
                .file(metadata.file())
                .line(metadata.line())
                .args(format_args!("{}", Fields(event)))
                .build(),
        );
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

/// An event's fields as tracing's "log" feature writes them: the message,
/// then ` name=value` for each other field (values as `Debug`).
struct Fields<'a>(&'a Event<'a>);

impl fmt::Display for Fields<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut writer = Writer { f, first: true, result: Ok(()) };
        self.0.record(&mut writer);
        writer.result
    }
}

struct Writer<'a, 'b> {
    f: &'a mut fmt::Formatter<'b>,
    first: bool,
    result: fmt::Result,
}

impl Visit for Writer<'_, '_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        let separator = if std::mem::take(&mut self.first) { "" } else { " " };
        let written = if field.name() == "message" && separator.is_empty() {
            write!(self.f, "{value:?}")
        } else {
            write!(self.f, "{separator}{}={value:?}", field.name())
        };
        self.result = self.result.and(written);
    }

    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.record_debug(field, &format_args!("{value}"))
        } else {
            self.record_debug(field, &value)
        }
    }
}

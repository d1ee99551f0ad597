//! What zoolock counts, for operators: acquire waits, hold times, handoffs,
//! acquires that timed out, suspensions, losses, cleanup retries and
//! session state changes.
//!
//! Each event goes two ways under one name. Through the `metrics`
//! facade to whatever recorder the program installed (for all sessions of
//! the process; with the `prometheus` feature, `install_prometheus` sets
//! up one that renders Prometheus text). And into the session's own
//! counters, which [`Session::metrics`](crate::Session::metrics) returns
//! whatever recorder is installed, so the bindings need none.
//!
//! Histograms appear in a snapshot as `<name>_count` and `<name>_sum`
//! (seconds), labelled counters as `<name>{label="value"}`: the names of
//! Prometheus' text format.
//!
//! A lock's own metrics — [`ACQUIRE_WAIT`], [`HOLD_TIME`], [`HANDOFFS`] and
//! [`ACQUIRE_TIMEOUTS`] — carry the lock path as the label [`PATH`] in the
//! facade (a semaphore's pool node; a multi-lock's paths, as
//! `[/a, /b]`): one series per path a process locks, so paths are the
//! operator's few names, not one per job or request. A session's snapshot
//! sums them over its paths, unlabelled.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::Mutex;
use std::time::Duration;

use crate::state::{LostReason, SessionState};

/// Time from an acquire's call to its hold (acquisitions that got the lock or a lease).
pub const ACQUIRE_WAIT: &str = "zoolock_acquire_wait_seconds";
/// Time from a hold's start to its release or loss.
pub const HOLD_TIME: &str = "zoolock_hold_seconds";
/// Holds taken over from another holder: the acquire waited for one to go.
pub const HANDOFFS: &str = "zoolock_handoffs_total";
/// Acquires whose timeout ran out before they held (not a single try that
/// found the lock taken, nor one cancelled).
pub const ACQUIRE_TIMEOUTS: &str = "zoolock_acquire_timeouts_total";
/// The label of a lock's own metrics in the facade: the lock path.
pub const PATH: &str = "path";
/// Holds suspended by a dropped connection (stop using the resource).
pub const SUSPENSIONS: &str = "zoolock_suspensions_total";
/// Holds lost, by `reason`: `session_expired`, `session_closed`, `lease_expired`, `node_deleted`.
pub const LOSSES: &str = "zoolock_losses_total";
/// Node deletions tried again after a connection loss or on a new session.
pub const CLEANUP_RETRIES: &str = "zoolock_cleanup_retries_total";
/// Session state changes, by `state`: `connected`, `suspended`, `lost`, `closed`.
pub const SESSION_STATE_CHANGES: &str = "zoolock_session_state_changes_total";

#[derive(Default)]
struct Histogram {
    count: AtomicU64,
    nanos: AtomicU64,
}

impl Histogram {
    fn record(&self, took: Duration) {
        self.count.fetch_add(1, Relaxed);
        self.nanos.fetch_add(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX), Relaxed);
    }

    fn snapshot(&self, name: &str, into: &mut BTreeMap<String, f64>) {
        into.insert(format!("{name}_count"), self.count.load(Relaxed) as f64);
        into.insert(format!("{name}_sum"), self.nanos.load(Relaxed) as f64 / 1e9);
    }
}

/// One session's counters; every record also goes to the facade.
#[derive(Default)]
pub(crate) struct Meter {
    acquire_wait: Histogram,
    hold_time: Histogram,
    handoffs: AtomicU64,
    acquire_timeouts: AtomicU64,
    suspensions: AtomicU64,
    losses: [AtomicU64; LostReason::ALL.len()],
    cleanup_retries: AtomicU64,
    session_states: [AtomicU64; SessionState::ALL.len()],
}

/// One handle's series in the facade, labelled with its lock path.
/// Registered at its first acquisition and kept: a registration builds the
/// key (the label's copy of the path and its list), two allocations per
/// metric, which an acquisition would otherwise pay twice per cycle.
#[derive(Default)]
pub(crate) struct PathSeries(Mutex<Option<Box<Registered>>>);

struct Registered {
    /// The recorder they were registered with. Assumes one recorder is one
    /// address: true of the global one (leaked, never freed); a program that
    /// installs a recorder later (or a thread's local one) gets its handles
    /// registered again with it.
    recorder: usize,
    acquire_wait: ::metrics::Histogram,
    hold_time: ::metrics::Histogram,
    handoffs: ::metrics::Counter,
}

impl PathSeries {
    fn with(&self, path: &str, record: impl FnOnce(&Registered)) {
        let recorder = ::metrics::with_recorder(|r| r as *const dyn ::metrics::Recorder as *const () as usize);
        let mut registered = self.0.lock().unwrap();
        let current = match registered.as_deref() {
            Some(r) if r.recorder == recorder => r,
            _ => registered.insert(Box::new(Registered {
                recorder,
                acquire_wait: ::metrics::histogram!(ACQUIRE_WAIT, PATH => path.to_owned()),
                hold_time: ::metrics::histogram!(HOLD_TIME, PATH => path.to_owned()),
                handoffs: ::metrics::counter!(HANDOFFS, PATH => path.to_owned()),
            })),
        };
        record(current)
    }
}

impl Meter {
    pub fn acquired(&self, series: &PathSeries, path: &str, waited: Duration, handoff: bool) {
        self.acquire_wait.record(waited);
        if handoff {
            self.handoffs.fetch_add(1, Relaxed);
        }
        series.with(path, |r| {
            r.acquire_wait.record(waited.as_secs_f64());
            if handoff {
                r.handoffs.increment(1);
            }
        });
    }

    pub fn timed_out(&self, path: &str) {
        self.acquire_timeouts.fetch_add(1, Relaxed);
        ::metrics::counter!(ACQUIRE_TIMEOUTS, PATH => path.to_owned()).increment(1);
    }

    pub fn hold_ended(&self, series: &PathSeries, path: &str, held: Duration) {
        self.hold_time.record(held);
        series.with(path, |r| r.hold_time.record(held.as_secs_f64()));
    }

    pub fn suspended(&self) {
        self.suspensions.fetch_add(1, Relaxed);
        ::metrics::counter!(SUSPENSIONS).increment(1);
    }

    pub fn lost(&self, reason: LostReason) {
        let i = LostReason::ALL.iter().position(|r| *r == reason).expect("ALL lists every reason");
        self.losses[i].fetch_add(1, Relaxed);
        ::metrics::counter!(LOSSES, "reason" => reason.name()).increment(1);
    }

    pub fn cleanup_retry(&self) {
        self.cleanup_retries.fetch_add(1, Relaxed);
        ::metrics::counter!(CLEANUP_RETRIES).increment(1);
    }

    pub fn session_state(&self, state: SessionState) {
        let i = SessionState::ALL.iter().position(|s| *s == state).expect("ALL lists every state");
        self.session_states[i].fetch_add(1, Relaxed);
        ::metrics::counter!(SESSION_STATE_CHANGES, "state" => state.name()).increment(1);
    }

    pub fn snapshot(&self) -> BTreeMap<String, f64> {
        let mut out = BTreeMap::new();
        self.acquire_wait.snapshot(ACQUIRE_WAIT, &mut out);
        self.hold_time.snapshot(HOLD_TIME, &mut out);
        out.insert(HANDOFFS.to_owned(), self.handoffs.load(Relaxed) as f64);
        out.insert(ACQUIRE_TIMEOUTS.to_owned(), self.acquire_timeouts.load(Relaxed) as f64);
        out.insert(SUSPENSIONS.to_owned(), self.suspensions.load(Relaxed) as f64);
        for (reason, n) in LostReason::ALL.iter().zip(&self.losses) {
            out.insert(format!("{LOSSES}{{reason=\"{}\"}}", reason.name()), n.load(Relaxed) as f64);
        }
        out.insert(CLEANUP_RETRIES.to_owned(), self.cleanup_retries.load(Relaxed) as f64);
        for (state, n) in SessionState::ALL.iter().zip(&self.session_states) {
            out.insert(format!("{SESSION_STATE_CHANGES}{{state=\"{}\"}}", state.name()), n.load(Relaxed) as f64);
        }
        out
    }
}

/// Describes zoolock's metrics to the installed recorder (help text and units).
pub fn describe() {
    use ::metrics::{describe_counter, describe_histogram, Unit};
    describe_histogram!(ACQUIRE_WAIT, Unit::Seconds, "time from an acquire's call to its hold, by lock path");
    describe_histogram!(HOLD_TIME, Unit::Seconds, "time from a hold's start to its release or loss, by lock path");
    describe_counter!(HANDOFFS, "holds taken over from another holder, by lock path");
    describe_counter!(ACQUIRE_TIMEOUTS, "acquires whose timeout ran out, by lock path");
    describe_counter!(SUSPENSIONS, "holds suspended by a dropped connection");
    describe_counter!(LOSSES, "holds lost, by reason");
    describe_counter!(CLEANUP_RETRIES, "node deletions tried again");
    describe_counter!(SESSION_STATE_CHANGES, "session state changes, by state");
}

/// Installs a Prometheus recorder as the process's global one, with buckets
/// for zoolock's waits and holds, and describes zoolock's metrics. Serve
/// `handle.render()` (Prometheus' text format) from your HTTP endpoint.
/// Fails if the process has a recorder already.
#[cfg(feature = "prometheus")]
pub fn install_prometheus(
) -> std::result::Result<metrics_exporter_prometheus::PrometheusHandle, metrics_exporter_prometheus::BuildError> {
    use metrics_exporter_prometheus::{Matcher, PrometheusBuilder};
    const BUCKETS: [f64; 12] = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1.0, 5.0, 10.0, 60.0, 300.0, 3600.0];
    let handle = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Full(ACQUIRE_WAIT.into()), &BUCKETS)?
        .set_buckets_for_metric(Matcher::Full(HOLD_TIME.into()), &BUCKETS)?
        .install_recorder()?;
    describe();
    Ok(handle)
}

#[cfg(all(test, feature = "prometheus"))]
mod tests {
    use super::*;

    /// A handle's series are kept from its first acquisition: a recorder
    /// installed after it (here a thread's own) must still get them.
    #[test]
    fn a_recorder_installed_after_a_handle_acquired_gets_its_series() {
        let (meter, series) = (Meter::default(), PathSeries::default());
        // No recorder yet: the facade's no-op one.
        meter.acquired(&series, "/late", Duration::from_millis(5), true);
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        ::metrics::with_local_recorder(&recorder, || {
            meter.acquired(&series, "/late", Duration::from_millis(5), true);
            meter.hold_ended(&series, "/late", Duration::from_millis(7));
        });
        let text = handle.render();
        for line in [
            "zoolock_acquire_wait_seconds_count{path=\"/late\"} 1",
            "zoolock_hold_seconds_count{path=\"/late\"} 1",
            "zoolock_handoffs_total{path=\"/late\"} 1",
        ] {
            assert!(text.lines().any(|l| l == line), "no {line} in\n{text}");
        }
        assert_eq!(meter.snapshot()[HANDOFFS], 2.0);
    }
}

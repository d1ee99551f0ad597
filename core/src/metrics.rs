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
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

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

/// One handle's series in the facade, labelled with its lock path, kept
/// between records: registering one builds its key (a copy of the path and
/// a label list), which every acquisition would otherwise pay for each.
#[derive(Default)]
pub(crate) struct PathSeries(Mutex<Option<Box<Kept>>>);

#[derive(Default)]
struct Kept {
    acquire_wait: Option<KeptHandle<::metrics::Histogram>>,
    hold_time: Option<KeptHandle<::metrics::Histogram>>,
    handoffs: Option<KeptHandle<::metrics::Counter>>,
}

/// A registered handle, the recorder it was registered with, and when it last recorded.
struct KeptHandle<H> {
    handle: H,
    recorder: RecorderId,
    last: Instant,
}

/// A recorder, by address and type (its vtable): only compared, never dereferenced.
#[derive(Clone, Copy)]
struct RecorderId(*const dyn ::metrics::Recorder);

// Safety: the pointer is never dereferenced.
unsafe impl Send for RecorderId {}
unsafe impl Sync for RecorderId {}

impl RecorderId {
    fn current() -> RecorderId {
        ::metrics::with_recorder(|r| {
            let pointer: *const (dyn ::metrics::Recorder + '_) = r;
            // Safety: only the lifetime changes, and the pointer is never dereferenced.
            RecorderId(unsafe {
                std::mem::transmute::<*const (dyn ::metrics::Recorder + '_), *const dyn ::metrics::Recorder>(pointer)
            })
        })
    }

    fn is(self, other: RecorderId) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

/// A kept handle is used again only if it is the current recorder's and
/// recorded less than this long ago. An exporter may drop a series idle for
/// longer (the Prometheus exporter's `idle_timeout`), and a kept handle
/// would then record into nothing: registered again, it is back. Assumes no
/// exporter drops a series idle for less than this.
const REUSE_WITHIN: Duration = Duration::from_millis(100);

fn kept<H>(slot: &mut Option<KeptHandle<H>>, recorder: RecorderId, now: Instant, register: impl FnOnce() -> H) -> &H {
    let reusable =
        slot.as_ref().is_some_and(|k| k.recorder.is(recorder) && now.saturating_duration_since(k.last) < REUSE_WITHIN);
    if !reusable {
        *slot = Some(KeptHandle { handle: register(), recorder, last: now });
    }
    let kept = slot.as_mut().expect("kept just above");
    kept.last = now;
    &kept.handle
}

impl PathSeries {
    fn with(&self, record: impl FnOnce(&mut Kept, RecorderId, Instant)) {
        let (recorder, now) = (RecorderId::current(), Instant::now());
        // A recorder that panicked once leaves the handles as good as they were.
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        record(kept.get_or_insert_with(Box::default), recorder, now)
    }
}

impl Meter {
    pub fn acquired(&self, series: &PathSeries, path: &str, waited: Duration, handoff: bool) {
        self.acquire_wait.record(waited);
        if handoff {
            self.handoffs.fetch_add(1, Relaxed);
        }
        series.with(|kept_series, recorder, now| {
            let label = || path.to_owned();
            kept(&mut kept_series.acquire_wait, recorder, now, || ::metrics::histogram!(ACQUIRE_WAIT, PATH => label()))
                .record(waited.as_secs_f64());
            if handoff {
                kept(&mut kept_series.handoffs, recorder, now, || ::metrics::counter!(HANDOFFS, PATH => label()))
                    .increment(1);
            }
        });
    }

    pub fn timed_out(&self, path: &str) {
        self.acquire_timeouts.fetch_add(1, Relaxed);
        ::metrics::counter!(ACQUIRE_TIMEOUTS, PATH => path.to_owned()).increment(1);
    }

    pub fn hold_ended(&self, series: &PathSeries, path: &str, held: Duration) {
        self.hold_time.record(held);
        series.with(|kept_series, recorder, now| {
            kept(
                &mut kept_series.hold_time,
                recorder,
                now,
                || ::metrics::histogram!(HOLD_TIME, PATH => path.to_owned()),
            )
            .record(held.as_secs_f64())
        });
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

    /// An exporter may drop a series idle for a while (metrics-rs #314): a
    /// handle that records after that must bring it back, not record into
    /// the dropped one.
    #[test]
    fn a_series_dropped_as_idle_comes_back_at_the_next_record() {
        let idle = Duration::from_millis(300);
        let recorder = metrics_exporter_prometheus::PrometheusBuilder::new()
            .idle_timeout(metrics_util::MetricKindMask::ALL, Some(idle))
            .build_recorder();
        let handle = recorder.handle();
        let (meter, series) = (Meter::default(), PathSeries::default());
        let line = "zoolock_hold_seconds_count{path=\"/idle\"} 1";
        ::metrics::with_local_recorder(&recorder, || meter.hold_ended(&series, "/idle", Duration::from_millis(7)));
        assert!(handle.render().lines().any(|l| l == line), "{}", handle.render());
        // What is measured is idleness itself: no event marks it.
        std::thread::sleep(idle * 2);
        assert!(!handle.render().contains("/idle"), "dropped as idle:\n{}", handle.render());
        ::metrics::with_local_recorder(&recorder, || meter.hold_ended(&series, "/idle", Duration::from_millis(7)));
        assert!(handle.render().lines().any(|l| l == line), "back:\n{}", handle.render());
    }
}

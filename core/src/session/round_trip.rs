//! A session's round trip to its server, as the adaptive design weighs it
//! (`LockConfig::adaptive`): the least of the last [`WINDOW`] answered
//! reads of its locks. The least, because a server busy with other work
//! makes a read wait in its queue, which no design saves; the network's
//! part is in every read. So on one host a loaded server reads as well
//! under a millisecond while a 0.5 ms link each way reads above one
//! (docs/benchmarks.md, "The round trip").

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering::Relaxed};
use std::time::Duration;

use super::confirm::boot_now;

/// How many reads the least is taken over: no estimate before that many.
pub const WINDOW: usize = 8;

#[derive(Default)]
pub(crate) struct RoundTrip {
    /// Microseconds, 0 for none yet; written in turn.
    reads: [AtomicU32; WINDOW],
    next: AtomicU32,
    /// Set by the first caller of [`RoundTrip::start_measuring`].
    measuring: AtomicBool,
}

impl RoundTrip {
    /// A read sent at `sent` ([`boot_now`], a number where a waiter's
    /// future keeps it: half an `Instant`) was answered now.
    pub fn record(&self, sent: u64) {
        let micros = (boot_now().saturating_sub(sent) / 1_000).clamp(1, u32::MAX.into()) as u32;
        let at = self.next.fetch_add(1, Relaxed) as usize % WINDOW;
        self.reads[at].store(micros, Relaxed);
    }

    /// True once, for a caller to measure the round trip by reads of its
    /// own, unless it is known already.
    pub fn start_measuring(&self) -> bool {
        self.least().is_none() && !self.measuring.swap(true, Relaxed)
    }

    /// A measure ended before it gave the round trip.
    pub fn stop_measuring(&self) {
        self.measuring.store(false, Relaxed);
    }

    /// The least of the last [`WINDOW`] reads; `None` until there were as many.
    pub fn least(&self) -> Option<Duration> {
        let mut least = u32::MAX;
        for read in &self.reads {
            match read.load(Relaxed) {
                0 => return None,
                micros => least = least.min(micros),
            }
        }
        Some(Duration::from_micros(least.into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_least_of_the_last_reads_once_there_were_enough() {
        let trip = RoundTrip::default();
        let ago = |micros: u64| boot_now().saturating_sub(micros * 1_000);
        for _ in 1..WINDOW {
            trip.record(ago(5_000));
        }
        assert_eq!(trip.least(), None, "no estimate from fewer reads than the window");
        trip.record(ago(3_000));
        let least = trip.least().unwrap();
        assert!(least >= Duration::from_millis(3) && least < Duration::from_millis(4), "{least:?}");
        // Newer reads take the oldest places: the 3 ms read goes last.
        for _ in 0..WINDOW - 1 {
            trip.record(ago(9_000));
        }
        assert!(trip.least().unwrap() < Duration::from_millis(4));
        trip.record(ago(9_000));
        assert!(trip.least().unwrap() >= Duration::from_millis(9));
    }
}

//! The zoolock workers' own metrics (`Session::metrics`, Python's
//! `zk.metrics()`, C#'s `GetMetrics()`), summed over their sessions for the
//! summary. Each zoolock worker prints one line when its loop ends:
//! `metrics <name>=<value> …` (kazoo and Curator workers have none).

use std::collections::BTreeMap;

const WAITS: &str = "zoolock_acquire_wait_seconds";
const HOLDS: &str = "zoolock_hold_seconds";

/// The sum of every reporting worker's metrics.
#[derive(Default)]
pub struct Metrics {
    /// The workers that reported, by name.
    pub workers: Vec<String>,
    pub totals: BTreeMap<String, f64>,
}

/// The metrics on a worker's `metrics …` line; `None` for any other line.
pub fn parse(line: &str) -> Option<BTreeMap<String, f64>> {
    let rest = line.strip_prefix("metrics ")?;
    // A name may hold `=` in its labels (`{reason="node_deleted"}`); a value never does.
    rest.split_whitespace()
        .map(|pair| pair.rsplit_once('=').and_then(|(name, value)| Some((name.to_owned(), value.parse().ok()?))))
        .collect()
}

/// The worker's line for `metrics`.
pub fn line(metrics: &BTreeMap<String, f64>) -> String {
    let pairs: Vec<String> = metrics.iter().map(|(name, value)| format!("{name}={value}")).collect();
    format!("metrics {}", pairs.join(" "))
}

impl Metrics {
    /// Adds one worker's metrics; workers stay sorted by name, whatever
    /// order they ended in.
    pub fn add(&mut self, worker: &str, metrics: BTreeMap<String, f64>) {
        let at = self.workers.partition_point(|known| known.as_str() < worker);
        self.workers.insert(at, worker.to_owned());
        for (name, value) in metrics {
            *self.totals.entry(name).or_default() += value;
        }
    }

    fn get(&self, name: &str) -> f64 {
        self.totals.get(name).copied().unwrap_or(0.0)
    }

    /// The mean of a histogram, in seconds (0 when it counted nothing).
    fn mean(&self, histogram: &str) -> f64 {
        let count = self.get(&format!("{histogram}_count"));
        if count == 0.0 {
            0.0
        } else {
            self.get(&format!("{histogram}_sum")) / count
        }
    }

    /// Counters with a label, as `label value` pairs of those not zero.
    fn labelled(&self, name: &str) -> Vec<(String, f64)> {
        let prefix = format!("{name}{{");
        self.totals
            .iter()
            .filter_map(|(k, v)| {
                let label = k.strip_prefix(&prefix)?.trim_end_matches('}');
                let value = label.split_once('=').map_or(label, |(_, v)| v).trim_matches('"');
                Some((value.to_owned(), *v))
            })
            .collect()
    }

    /// The summary's lines (for people).
    pub fn print(&self) {
        if self.workers.is_empty() {
            say!("  zoolock metrics: no zoolock worker reported");
            return;
        }
        say!("  zoolock metrics, summed over {} workers' sessions ({}):", self.workers.len(), self.workers.join(", "));
        say!(
            "    acquisitions {}  handoffs {}  acquire wait mean {:.2} ms  hold mean {:.2} ms",
            self.get(&format!("{WAITS}_count")),
            self.get("zoolock_handoffs_total"),
            self.mean(WAITS) * 1e3,
            self.mean(HOLDS) * 1e3
        );
        say!(
            "    suspensions {}  losses {}  cleanup retries {}",
            self.get("zoolock_suspensions_total"),
            self.by_label("zoolock_losses_total"),
            self.get("zoolock_cleanup_retries_total")
        );
        say!("    session state changes {}", self.by_label("zoolock_session_state_changes_total"));
    }

    /// A labelled counter's total, with its labels that are not zero: `2 (node_deleted 2)`.
    fn by_label(&self, name: &str) -> String {
        let counted = self.labelled(name);
        let total = counted.iter().fold(0.0, |sum, (_, n)| sum + n);
        let parts: Vec<String> =
            counted.iter().filter(|(_, n)| *n != 0.0).map(|(label, n)| format!("{label} {n}")).collect();
        if parts.is_empty() {
            format!("{total}")
        } else {
            format!("{total} ({})", parts.join(", "))
        }
    }

    /// The same for machines: the workers and the summed metrics by name, with the means.
    pub fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "workers": self.workers,
            "totals": self.totals,
            "acquire_wait_mean_seconds": self.mean(WAITS),
            "hold_mean_seconds": self.mean(HOLDS),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_round_trips_and_sums() {
        let mut one = BTreeMap::new();
        one.insert("zoolock_handoffs_total".to_owned(), 3.0);
        one.insert("zoolock_losses_total{reason=\"node_deleted\"}".to_owned(), 1.0);
        one.insert(format!("{WAITS}_count"), 4.0);
        one.insert(format!("{WAITS}_sum"), 0.002);
        assert_eq!(parse(&line(&one)), Some(one.clone()));
        assert_eq!(parse("session 42"), None);
        assert_eq!(parse("metrics a=notanumber"), None);
        let mut sum = Metrics::default();
        sum.add("rust-0", one.clone());
        sum.add("python-1", one);
        // By name, not in the order the workers ended (the JSON summary's list).
        assert_eq!(sum.workers, ["python-1", "rust-0"]);
        assert_eq!(sum.get("zoolock_handoffs_total"), 6.0);
        assert_eq!(sum.mean(WAITS), 0.0005);
        assert_eq!(sum.labelled("zoolock_losses_total"), vec![("node_deleted".to_owned(), 2.0)]);
        assert_eq!(sum.by_label("zoolock_losses_total"), "2 (node_deleted 2)");
        assert_eq!(sum.by_label("zoolock_session_state_changes_total"), "0");
    }
}

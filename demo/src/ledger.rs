//! Verification and summary of what the resource accepted.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::resource::{Ledger, Record};

pub struct Report {
    records: Vec<Record>,
    pub refused: usize,
    /// Accepted critical sections that overlapped another accepted one.
    pub overlaps: usize,
    pub token_regressions: usize,
}

pub fn verify(ledger: &Ledger) -> Report {
    let mut records = ledger.records.clone();
    records.sort_by_key(|r| r.start);
    let overlaps = ledger.overlaps.max(records.windows(2).filter(|w| w[1].start < w[0].end).count());
    let token_regressions = records.windows(2).filter(|w| w[1].token <= w[0].token).count();
    Report { records, refused: ledger.refused, overlaps, token_regressions }
}

impl Report {
    pub fn total(&self) -> usize {
        self.records.len()
    }

    /// Pairs of accepted critical sections that overlapped, earlier first.
    pub fn overlapping(&self) -> Vec<(&Record, &Record)> {
        self.records.windows(2).filter(|w| w[1].start < w[0].end).map(|w| (&w[0], &w[1])).collect()
    }

    /// Tokens that failed to increase between two accepted writes that did
    /// not overlap: the resource accepts no lower token, so only overlapping
    /// writes can arrive in another order than they began.
    pub fn token_regressions_outside_overlaps(&self) -> usize {
        self.records.windows(2).filter(|w| w[1].token <= w[0].token && w[1].start >= w[0].end).count()
    }

    pub fn is_clean(&self) -> bool {
        self.overlaps == 0 && self.token_regressions == 0
    }

    /// The languages asked for whose workers had no write accepted.
    pub fn idle_languages<'a>(&self, languages: &[&'a str]) -> Vec<&'a str> {
        languages.iter().copied().filter(|l| !self.records.iter().any(|r| r.language == *l)).collect()
    }

    /// Accepted writes per (language, worker), and per language: every
    /// language asked for is there, even at 0.
    fn counts<'a>(&'a self, languages: &[&'a str]) -> (BTreeMap<(&'a str, &'a str), usize>, BTreeMap<&'a str, usize>) {
        let mut per_worker: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        let mut per_language: BTreeMap<&str, usize> = languages.iter().map(|l| (*l, 0)).collect();
        for r in &self.records {
            *per_worker.entry((r.language.as_str(), r.worker.as_str())).or_default() += 1;
            *per_language.entry(r.language.as_str()).or_default() += 1;
        }
        (per_worker, per_language)
    }

    /// The waits' p50, p90, p99 and max.
    fn waits(&self) -> [Duration; 4] {
        let mut waits: Vec<Duration> = self.records.iter().map(|r| r.wait).collect();
        waits.sort();
        let pct = |p: f64| waits.get(((waits.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or_default();
        [pct(0.5), pct(0.9), pct(0.99), pct(1.0)]
    }

    /// The summary; every language asked for has its line, even at 0.
    pub fn print(&self, elapsed: Duration, languages: &[&str]) {
        let (per_worker, per_language) = self.counts(languages);
        let rate = self.total() as f64 / elapsed.as_secs_f64();
        say!("\n== summary: {} acquisitions in {:.1} s ({rate:.0}/s)", self.total(), elapsed.as_secs_f64());
        for ((language, worker), n) in &per_worker {
            say!("  {language:<8} {worker:<14} {n:>7}");
        }
        for (language, n) in &per_language {
            say!("  all {language:<8}            {n:>7}");
        }
        let [p50, p90, p99, max] = self.waits();
        say!("  wait p50 {p50:?}  p90 {p90:?}  p99 {p99:?}  max {max:?}");
        say!("  overlapping critical sections:  {}", self.overlaps);
        say!("  fencing tokens not increasing:  {}", self.token_regressions);
        say!("  stale writes refused by fencing: {}", self.refused);
    }

    /// The same summary for machines (`--json`).
    pub fn json(&self, elapsed: Duration, languages: &[&str]) -> serde_json::Value {
        let (per_worker, per_language) = self.counts(languages);
        let workers: BTreeMap<&str, usize> = per_worker.iter().map(|((_, worker), n)| (*worker, *n)).collect();
        let [p50, p90, p99, max] = self.waits().map(|d| d.as_secs_f64());
        serde_json::json!({
            "acquisitions": self.total(),
            "elapsed_seconds": elapsed.as_secs_f64(),
            "per_worker": workers,
            "per_language": per_language,
            "wait_seconds": { "p50": p50, "p90": p90, "p99": p99, "max": max },
            "overlaps": self.overlaps,
            "token_regressions": self.token_regressions,
            "refused": self.refused,
        })
    }
}

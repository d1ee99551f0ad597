//! The shared resource: an append-only file of critical sections, one line
//! each, written with O_APPEND while holding the lock; and its verification.

use std::collections::BTreeMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub fn now_ns() -> u128 {
    SystemTime::now().duration_since(UNIX_EPOCH).expect("clock after 1970").as_nanos()
}

/// One critical section: `worker language token start_ns end_ns wait_us`.
pub struct Record {
    pub worker: String,
    pub language: String,
    pub token: i64,
    pub start: u128,
    pub end: u128,
    pub wait: Duration,
}

impl Record {
    pub fn append(&self, ledger: &str) -> std::io::Result<()> {
        let line = format!(
            "{}\t{}\t{}\t{}\t{}\t{}\n",
            self.worker,
            self.language,
            self.token,
            self.start,
            self.end,
            self.wait.as_micros()
        );
        // One write of one line: appends from several processes never interleave.
        OpenOptions::new().append(true).open(ledger)?.write_all(line.as_bytes())
    }

    fn parse(line: &str) -> Option<Record> {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 6 {
            return None;
        }
        Some(Record {
            worker: f[0].to_owned(),
            language: f[1].to_owned(),
            token: f[2].parse().ok()?,
            start: f[3].parse().ok()?,
            end: f[4].parse().ok()?,
            wait: Duration::from_micros(f[5].parse().ok()?),
        })
    }
}

pub fn count(ledger: &Path) -> usize {
    std::fs::read_to_string(ledger).map(|s| s.lines().count()).unwrap_or(0)
}

pub struct Report {
    records: Vec<Record>,
    malformed: usize,
    overlaps: usize,
    token_regressions: usize,
}

pub fn verify(ledger: &Path) -> std::io::Result<Report> {
    let text = std::fs::read_to_string(ledger)?;
    let mut malformed = 0;
    let mut records: Vec<Record> = text
        .lines()
        .filter_map(|l| {
            let r = Record::parse(l);
            malformed += usize::from(r.is_none());
            r
        })
        .collect();
    records.sort_by_key(|r| r.start);
    let overlaps = records.windows(2).filter(|w| w[1].start < w[0].end).count();
    let token_regressions = records.windows(2).filter(|w| w[1].token <= w[0].token).count();
    Ok(Report { records, malformed, overlaps, token_regressions })
}

impl Report {
    pub fn total(&self) -> usize {
        self.records.len()
    }

    pub fn is_clean(&self) -> bool {
        self.malformed == 0 && self.overlaps == 0 && self.token_regressions == 0
    }

    pub fn print(&self, elapsed: Duration) {
        let mut per_worker: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        let mut per_language: BTreeMap<&str, usize> = BTreeMap::new();
        for r in &self.records {
            *per_worker.entry((r.language.as_str(), r.worker.as_str())).or_default() += 1;
            *per_language.entry(r.language.as_str()).or_default() += 1;
        }
        println!("\n== summary: {} acquisitions in {:.1} s ({:.0}/s)", self.total(), elapsed.as_secs_f64(), self.total() as f64 / elapsed.as_secs_f64());
        for ((language, worker), n) in &per_worker {
            println!("  {language:<8} {worker:<12} {n:>6}");
        }
        for (language, n) in &per_language {
            println!("  all {language:<8}          {n:>6}");
        }
        let mut waits: Vec<Duration> = self.records.iter().map(|r| r.wait).collect();
        waits.sort();
        let pct = |p: f64| waits.get(((waits.len() as f64 - 1.0) * p).round() as usize).copied().unwrap_or_default();
        println!("  wait p50 {:?}  p90 {:?}  p99 {:?}  max {:?}", pct(0.5), pct(0.9), pct(0.99), pct(1.0));
        println!("  overlapping critical sections: {}", self.overlaps);
        println!("  fencing tokens not increasing:  {}", self.token_regressions);
        println!("  malformed ledger lines:         {}", self.malformed);
    }
}

//! Heap bytes per queued waiter, by allocation size: a counting allocator
//! around 2,000 waiters queued behind a holder on one session (issue 16).
//! Also the peak while they queue: the process's resident memory follows
//! the peak (freed chunks between live ones stay resident), not what stays.
//! `cargo run --release -p zoolock --example waiter_bytes -- [N] [listing|mirror]`
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use zoolock::{Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

const MAXS: usize = 16384;
static LIVE: [AtomicI64; MAXS + 1] = [const { AtomicI64::new(0) }; MAXS + 1];
static BYTES: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);
static DONE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
struct Count;
fn record(size: usize, by: i64) {
    LIVE[size.min(MAXS)].fetch_add(by, Ordering::Relaxed);
    let now = BYTES.fetch_add(by * size as i64, Ordering::Relaxed) + by * size as i64;
    PEAK.fetch_max(now, Ordering::Relaxed);
}
unsafe impl GlobalAlloc for Count {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        record(l.size(), 1);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        record(l.size(), -1);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        record(l.size(), -1);
        record(n, 1);
        System.realloc(p, l, n)
    }
}
fn resident() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib = status.lines().find_map(|l| l.strip_prefix("VmRSS:")).unwrap().trim().trim_end_matches("kB").trim();
    kib.parse::<i64>().unwrap() * 1024
}
#[global_allocator]
static A: Count = Count;
fn snap() -> Vec<i64> {
    LIVE.iter().map(|a| a.load(Ordering::Relaxed)).collect()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    // `listing`; `mirror` (the mirror whatever the queue); else the adaptive default.
    let design = std::env::args().nth(2).unwrap_or_default();
    let mirror = design != "listing";
    let adaptive = if design == "mirror" { None } else { LockConfig::default().adaptive };
    let connect = zk_harness::shared().connect_string();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let session =
            Session::connect(SessionOptions::new(&connect).session_timeout(Duration::from_secs(30))).await.unwrap();
        let path = format!("/waiter-bytes-{}", std::process::id());
        let config = LockConfig { mirror, adaptive, ..LockConfig::default() };
        let holder = Lock::new(&session, &path, Kind::Mutex, config.clone()).unwrap();
        holder.acquire(Acquire::default()).await.unwrap();
        // A long timeout: listing thousands of children keeps a loaded server busy.
        let observer = zookeeper_client::Client::connector()
            .with_session_timeout(Duration::from_secs(30))
            .connect(&connect)
            .await
            .unwrap();
        let before = snap();
        let (bytes_before, rss_before) = (BYTES.load(Ordering::Relaxed), resident());
        PEAK.store(bytes_before, Ordering::Relaxed);
        // The allocations by size at the highest total seen, sampled every 5 ms.
        let sampler = tokio::spawn(async move {
            let mut highest = (0, snap());
            loop {
                tokio::time::sleep(Duration::from_millis(5)).await;
                let bytes = BYTES.load(Ordering::Relaxed);
                if bytes > highest.0 {
                    highest = (bytes, snap());
                }
                if DONE.load(Ordering::Relaxed) {
                    return highest.1;
                }
            }
        });
        let mut tasks = Vec::new();
        for _ in 0..n {
            let lock = Lock::new(&session, &path, Kind::Mutex, config.clone()).unwrap();
            tasks.push(tokio::spawn(async move {
                lock.acquire(Acquire::default()).await.unwrap();
                lock.release().await.unwrap();
            }));
        }
        loop {
            let (c, w) = observer.list_and_watch_children(&path).await.unwrap();
            if c.len() > n {
                break;
            }
            w.changed().await;
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        DONE.store(true, Ordering::Relaxed);
        let at_peak = sampler.await.unwrap();
        let after = snap();
        let (peak, rss) = (PEAK.load(Ordering::Relaxed) - bytes_before, resident() - rss_before);
        let mut rows: Vec<(usize, i64)> =
            (0..=MAXS).map(|s| (s, after[s] - before[s])).filter(|(_, d)| *d != 0).collect();
        let total: i64 = rows.iter().map(|(s, d)| *s as i64 * d).sum();
        let count: i64 = rows.iter().map(|(_, d)| d).sum();
        rows.sort_by_key(|(s, d)| -(*s as i64 * d));
        println!(
            "{design} n={n}: {:.0} B/waiter in {:.1} allocations/waiter",
            total as f64 / n as f64,
            count as f64 / n as f64
        );
        println!(
            "  peak while queueing {:.0} B/waiter; resident {:.0} B/waiter; mirror dismissed/restored {:?}",
            peak as f64 / n as f64,
            rss as f64 / n as f64,
            zoolock::adaptive_switches()
        );
        for (s, d) in rows.iter().take(25) {
            println!(
                "  size {s:>6} x {:>6.2}/waiter = {:>7.0} B/waiter",
                *d as f64 / n as f64,
                (*s as i64 * d) as f64 / n as f64
            );
        }
        let mut rows: Vec<(usize, i64)> =
            (0..=MAXS).map(|s| (s, at_peak[s] - after[s])).filter(|(_, d)| *d != 0).collect();
        rows.sort_by_key(|(s, d)| -(*s as i64 * d));
        println!("  at the highest sample, besides what stays:");
        for (s, d) in rows.iter().take(15) {
            println!(
                "  size {s:>6} x {:>6.2}/waiter = {:>7.0} B/waiter",
                *d as f64 / n as f64,
                (*s as i64 * d) as f64 / n as f64
            );
        }
        holder.release().await.unwrap();
        for t in tasks {
            t.await.unwrap();
        }
        session.close().await;
    });
}

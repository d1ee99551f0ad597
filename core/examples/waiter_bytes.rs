//! Heap bytes per queued waiter, by allocation size: a counting allocator
//! around 2,000 waiters queued behind a holder on one session (issue 16).
//! `cargo run --release -p zoolock --example waiter_bytes -- [N] [listing]`
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;
use zoolock::{Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

const MAXS: usize = 16384;
static LIVE: [AtomicI64; MAXS + 1] = [const { AtomicI64::new(0) }; MAXS + 1];
struct Count;
unsafe impl GlobalAlloc for Count {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE[l.size().min(MAXS)].fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE[l.size().min(MAXS)].fetch_sub(1, Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        LIVE[l.size().min(MAXS)].fetch_sub(1, Ordering::Relaxed);
        LIVE[n.min(MAXS)].fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}
#[global_allocator]
static A: Count = Count;
fn snap() -> Vec<i64> {
    LIVE.iter().map(|a| a.load(Ordering::Relaxed)).collect()
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let mirror = std::env::args().nth(2).as_deref() != Some("listing");
    let connect = zk_harness::shared().connect_string();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let session =
            Session::connect(SessionOptions::new(&connect).session_timeout(Duration::from_secs(10))).await.unwrap();
        let path = format!("/waiter-bytes-{}", std::process::id());
        let config = LockConfig { mirror, ..LockConfig::default() };
        let holder = Lock::new(&session, &path, Kind::Mutex, config.clone()).unwrap();
        holder.acquire(Acquire::default()).await.unwrap();
        let observer = zookeeper_client::Client::connect(&connect).await.unwrap();
        let before = snap();
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
        let after = snap();
        let mut rows: Vec<(usize, i64)> =
            (0..=MAXS).map(|s| (s, after[s] - before[s])).filter(|(_, d)| *d != 0).collect();
        let total: i64 = rows.iter().map(|(s, d)| *s as i64 * d).sum();
        let count: i64 = rows.iter().map(|(_, d)| d).sum();
        rows.sort_by_key(|(s, d)| -(*s as i64 * d));
        println!(
            "mirror={mirror} n={n}: {:.0} B/waiter in {:.1} allocations/waiter",
            total as f64 / n as f64,
            count as f64 / n as f64
        );
        for (s, d) in rows.iter().take(25) {
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

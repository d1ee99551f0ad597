//! Heap kept per lock path by a session that locks path after path (a lock
//! per job): bytes and allocations still live after N paths were each
//! locked and released in turn, and how many paths the session's records
//! keep. `cargo run --release -p zoolock --example path_bytes -- [N]`
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use zoolock::{Acquire, Lock, Session, SessionOptions};

static BYTES: AtomicI64 = AtomicI64::new(0);
static COUNT: AtomicI64 = AtomicI64::new(0);

struct Count;

unsafe impl GlobalAlloc for Count {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        BYTES.fetch_add(l.size() as i64, Ordering::Relaxed);
        COUNT.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        BYTES.fetch_sub(l.size() as i64, Ordering::Relaxed);
        COUNT.fetch_sub(1, Ordering::Relaxed);
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        BYTES.fetch_add(n as i64 - l.size() as i64, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static A: Count = Count;

async fn lock_each(session: &Session, paths: impl Iterator<Item = String>) {
    for path in paths {
        let lock = Lock::mutex(session, &path).unwrap();
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        assert!(lock.release().await.unwrap());
    }
}

fn main() {
    let n: usize = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(3000);
    let connect = zk_harness::shared().connect_string();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let options = SessionOptions::new(&connect).session_timeout(Duration::from_secs(30));
        let session = Session::connect(options).await.unwrap();
        let base = format!("/path-bytes-{}", std::process::id());
        // Warmed: the session's first-use state is not counted.
        lock_each(&session, (0..200).map(|i| format!("{base}/warm-{i}"))).await;
        let (bytes, count) = (BYTES.load(Ordering::Relaxed), COUNT.load(Ordering::Relaxed));
        lock_each(&session, (0..n).map(|i| format!("{base}/job-{i}"))).await;
        // Background removals and sweeps done.
        tokio::time::sleep(Duration::from_millis(300)).await;
        let per_path = |now: &AtomicI64, then: i64| (now.load(Ordering::Relaxed) - then) as f64 / n as f64;
        println!(
            "n={n}: {:.1} B in {:.2} allocations kept per path; the session's lines keep {} paths, its holds' order {}",
            per_path(&BYTES, bytes),
            per_path(&COUNT, count),
            session.lock_lines_kept(),
            session.hold_orders_kept()
        );
        session.close().await;
    });
}

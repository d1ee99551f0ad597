//! Heap allocations per acquisition: N sessions in one process each cycle
//! acquire+release of one lock (the bench's B(N)), counted by a counting
//! allocator after a warm-up (issue 37; the bench's DHAT figure without valgrind).
//! `cargo run --release -p zoolock --example acquire_allocs -- [N] [cycles] [adaptive|listing|mirror|zookeeper-client]`
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};
use zookeeper_client as zk;
use zoolock::{Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

static CALLS: AtomicU64 = AtomicU64::new(0);
static BYTES: AtomicU64 = AtomicU64::new(0);
struct Count;
unsafe impl GlobalAlloc for Count {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(l.size() as u64, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        CALLS.fetch_add(1, Ordering::Relaxed);
        BYTES.fetch_add(n as u64, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}
#[global_allocator]
static A: Count = Count;

enum Contender {
    Zoolock(Lock),
    Client(zk::Client, String),
}

impl Contender {
    async fn cycle(&self) {
        match self {
            Contender::Zoolock(lock) => {
                assert!(lock.acquire(Acquire::default()).await.unwrap());
                assert!(lock.release().await.unwrap());
            }
            Contender::Client(client, path) => {
                let prefix = zk::LockPrefix::new_curator(path, "lock-").unwrap();
                let held = client.lock(prefix, b"", zk::LockOptions::new(zk::Acls::anyone_all())).await.unwrap();
                let node = held.lock_path().to_owned();
                std::mem::forget(held);
                client.delete(&node, None).await.unwrap();
            }
        }
    }
}

/// This process's CPU time and voluntary context switches (every thread's):
/// a wake-up that crosses threads costs a switch.
struct Usage {
    cpu_us: i64,
    switches: i64,
}

impl Usage {
    fn now() -> Usage {
        // SAFETY: getrusage fills the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) };
        let us = |t: libc::timeval| t.tv_sec * 1_000_000 + t.tv_usec;
        Usage { cpu_us: us(u.ru_utime) + us(u.ru_stime), switches: u.ru_nvcsw }
    }

    fn since(&self, before: &Usage) -> Usage {
        Usage { cpu_us: self.cpu_us - before.cpu_us, switches: self.switches - before.switches }
    }
}

fn main() {
    let arg = |i: usize| std::env::args().nth(i);
    let sessions: usize = arg(1).and_then(|a| a.parse().ok()).unwrap_or(2);
    let cycles: u64 = arg(2).and_then(|a| a.parse().ok()).unwrap_or(2000);
    let design = arg(3).unwrap_or_else(|| "adaptive".into());
    let config = match design.as_str() {
        "listing" => Some(LockConfig { mirror: false, ..LockConfig::default() }),
        "mirror" => Some(LockConfig { adaptive: None, ..LockConfig::default() }),
        "adaptive" => Some(LockConfig::default()),
        _ => None,
    };
    // Direct: the harness's fault proxy would count its own allocations and CPU here.
    let connect = zk_harness::shared().direct_connect_string();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async move {
        let path = format!("/acquire-allocs-{}", std::process::id());
        let mut contenders = Vec::new();
        let mut sessions_kept = Vec::new();
        for _ in 0..sessions {
            contenders.push(std::sync::Arc::new(match &config {
                Some(config) => {
                    let options = SessionOptions::new(&connect).session_timeout(Duration::from_secs(10));
                    let session = Session::connect(options).await.unwrap();
                    let lock = Lock::new(&session, &path, Kind::Mutex, config.clone()).unwrap();
                    sessions_kept.push(session);
                    Contender::Zoolock(lock)
                }
                None => {
                    let connector = zk::Client::connector().with_session_timeout(Duration::from_secs(10));
                    let client = connector.connect(&connect).await.unwrap();
                    let mode = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
                    let _ = client.mkdir(&path, &mode).await;
                    Contender::Client(client, path.clone())
                }
            }));
        }
        // Each contender cycles; the count starts once every one has warmed up.
        let warm = 50;
        let run = |each: u64| {
            let tasks: Vec<_> = contenders
                .iter()
                .map(|c| {
                    let c = c.clone();
                    tokio::spawn(async move {
                        for _ in 0..each {
                            c.cycle().await;
                        }
                    })
                })
                .collect();
            async move {
                for t in tasks {
                    t.await.unwrap();
                }
            }
        };
        run(warm).await;
        let each = cycles / sessions as u64;
        let (calls, bytes, started) = (CALLS.load(Ordering::Relaxed), BYTES.load(Ordering::Relaxed), Instant::now());
        let usage = Usage::now();
        run(each).await;
        let elapsed = started.elapsed();
        let used = Usage::now().since(&usage);
        let acquisitions = (each * sessions as u64) as f64;
        println!(
            "{design} B({sessions}): {:.1} allocations/acquisition, {:.0} B allocated/acquisition, {:.0} acquisitions/s, \
             {:.0} µs of CPU and {:.1} context switches (voluntary) per acquisition",
            (CALLS.load(Ordering::Relaxed) - calls) as f64 / acquisitions,
            (BYTES.load(Ordering::Relaxed) - bytes) as f64 / acquisitions,
            acquisitions / elapsed.as_secs_f64(),
            used.cpu_us as f64 / acquisitions,
            used.switches as f64 / acquisitions,
        );
        for session in sessions_kept {
            session.close().await;
        }
    });
}

//! A Rust process on zoolock's core, driven by the .NET tests and benchmark
//! to show that a C# holder and a Rust waiter exclude each other on one path,
//! and to time the core beside C#.
//!
//! `peer hold --connect C --path P [--name N]`: acquires (waiting as long as
//! needed), prints `held <fencing token>`, waits for a line on stdin,
//! releases, prints `released`, exits.
//!
//! `peer bench --connect C --path P --millis M [--style blocking|async]`:
//! warms up, then runs uncontended acquire+release cycles for M ms and
//! prints `<cycles> <seconds>`; one line per round, as many rounds as
//! lines read on stdin (it stops at end of input).

use std::io::{BufRead, Write};
use std::time::{Duration, Instant};

use zoolock::{runtime, Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let (Some(mode), Some(connect), Some(path)) = (args.get(1).cloned(), flag("--connect"), flag("--path")) else {
        eprintln!("usage: peer hold|bench --connect HOSTS --path PATH [--name N] [--millis M] [--style blocking|async]");
        std::process::exit(2);
    };
    let session = Session::connect_blocking(SessionOptions::new(connect)).expect("connect");
    let name = flag("--name").unwrap_or_else(|| "rust-peer".into());
    let config = LockConfig { identifier: name.into_bytes(), ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, config).expect("lock");
    let mut out = std::io::stdout().lock();
    let mut lines = std::io::stdin().lock().lines();
    match mode.as_str() {
        "hold" => {
            assert!(lock.acquire_blocking(Acquire::default()).expect("acquire"));
            writeln!(out, "held {}", lock.fencing_token().expect("held")).unwrap();
            out.flush().unwrap();
            let _ = lines.next();
            lock.release_blocking().expect("release");
            writeln!(out, "released").unwrap();
        }
        "bench" => {
            let millis = flag("--millis").and_then(|m| m.parse().ok()).unwrap_or(2000);
            let blocking = flag("--style").as_deref() != Some("async");
            cycles(&lock, Duration::from_millis(millis / 2), blocking);
            while lines.next().is_some_and(|line| line.is_ok()) {
                let started = Instant::now();
                let done = cycles(&lock, Duration::from_millis(millis), blocking);
                writeln!(out, "{done} {}", started.elapsed().as_secs_f64()).unwrap();
                out.flush().unwrap();
            }
        }
        other => panic!("unknown mode {other}"),
    }
    out.flush().unwrap();
    session.close_blocking();
}

/// Acquire+release cycles for `length`: from this thread through the
/// blocking API, or as one task on zoolock's runtime through the async API.
fn cycles(lock: &Lock, length: Duration, blocking: bool) -> u64 {
    let until = Instant::now() + length;
    if blocking {
        let mut done = 0;
        while Instant::now() < until {
            assert!(lock.acquire_blocking(Acquire::default()).unwrap());
            assert!(lock.release_blocking().unwrap());
            done += 1;
        }
        return done;
    }
    let lock = lock.clone();
    runtime::block_on(runtime::spawn(async move {
        let mut done = 0;
        while Instant::now() < until {
            assert!(lock.acquire(Acquire::default()).await.unwrap());
            assert!(lock.release().await.unwrap());
            done += 1;
        }
        done
    }))
    .unwrap()
}

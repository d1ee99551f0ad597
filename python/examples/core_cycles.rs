//! The Rust core's figures for tests/python/bench.py, on the bench's server:
//! `core_cycles <connect> uncontended <seconds>` prints cycles/s of one
//! lock; `core_cycles <connect> many <locks> <seconds>` prints cycles/s of
//! that many locks used at once from one process.

use std::time::{Duration, Instant};

use zoolock::{Acquire, Lock, Session, SessionOptions};

async fn cycles(lock: Lock, until: Instant) -> u64 {
    let mut done = 0;
    while Instant::now() < until {
        assert!(lock.acquire(Acquire::default()).await.expect("acquire"));
        assert!(lock.release().await.expect("release"));
        done += 1;
    }
    done
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: core_cycles <connect> uncontended <seconds> | many <locks> <seconds>";
    let (connect, mode) = (args.get(1).expect(usage), args.get(2).expect(usage));
    let (locks, seconds): (usize, f64) = match mode.as_str() {
        "uncontended" => (1, args[3].parse().expect(usage)),
        "many" => (args[3].parse().expect(usage), args[4].parse().expect(usage)),
        _ => panic!("{usage}"),
    };
    let session = Session::connect(SessionOptions::new(connect))
        .await
        .expect("connect");
    let base = format!("/bench/core-{}", std::process::id());
    let handles: Vec<Lock> = (0..locks)
        .map(|i| Lock::mutex(&session, &format!("{base}/{i}")).unwrap())
        .collect();
    // Warm up: create the paths and the server's JIT.
    for lock in &handles {
        cycles(lock.clone(), Instant::now() + Duration::from_millis(20)).await;
    }
    let started = Instant::now();
    let until = started + Duration::from_secs_f64(seconds);
    let tasks: Vec<_> = handles
        .into_iter()
        .map(|lock| zoolock::runtime::spawn(cycles(lock, until)))
        .collect();
    let mut total = 0;
    for task in tasks {
        total += task.await.expect("cycle task");
    }
    println!("{:.1}", total as f64 / started.elapsed().as_secs_f64());
    session.close().await;
}

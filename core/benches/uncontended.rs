//! Uncontended acquire+release cycles per second: zoolock's lock against the
//! raw floor any sequential-node lock pays (create EPHEMERAL_SEQUENTIAL, then
//! delete) on the same private server, in interleaved rounds of one run so
//! that noise on the host hits every contestant alike.
//!
//! `cargo bench -p zoolock --bench uncontended [-- --rounds N --seconds S]`

use std::time::{Duration, Instant};

use zk_harness::{Ensemble, Options};
use zookeeper_client as zk;
use zoolock::{Acquire, Lock, Session, SessionOptions};

const PATH: &str = "/bench/uncontended";

async fn raw_floor(client: &zk::Client, until: Instant) -> u64 {
    let options = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
    let prefix = format!("{PATH}/raw-");
    let mut cycles = 0;
    while Instant::now() < until {
        let (_, sequence) = client.create(&prefix, b"", &options).await.unwrap();
        client.delete(&format!("{prefix}{sequence}"), None).await.unwrap();
        cycles += 1;
    }
    cycles
}

async fn zoolock_lock(lock: &Lock, until: Instant) -> u64 {
    let mut cycles = 0;
    while Instant::now() < until {
        assert!(lock.acquire(Acquire::default()).await.unwrap());
        assert!(lock.release().await.unwrap());
        cycles += 1;
    }
    cycles
}

async fn zookeeper_client_lock(client: &zk::Client, until: Instant) -> u64 {
    let options = zk::LockOptions::new(zk::Acls::anyone_all());
    let mut cycles = 0;
    while Instant::now() < until {
        let prefix = zk::LockPrefix::new_curator(PATH, "lock-").unwrap();
        let held = client.lock(prefix, b"", options.clone()).await.unwrap();
        let node = held.lock_path().to_owned();
        client.delete(&node, None).await.unwrap();
        // Its drop would delete the node again in the background.
        std::mem::forget(held);
        cycles += 1;
    }
    cycles
}

fn median(mut rates: Vec<f64>) -> f64 {
    rates.sort_by(|a, b| a.partial_cmp(b).unwrap());
    rates[rates.len() / 2]
}

fn arg(name: &str, default: u64) -> u64 {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

async fn run(force_sync: bool, rounds: u64, round: Duration) -> Vec<(&'static str, f64)> {
    let options = Options { force_sync, ..Options::benchmark() };
    let ensemble = tokio::task::spawn_blocking(move || Ensemble::start(1, options).unwrap()).await.unwrap();
    let connect = ensemble.direct_connect_string();
    let raw = zk::Client::connect(&connect).await.unwrap();
    raw.mkdir(PATH, &zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all())).await.unwrap();
    let session = Session::connect(SessionOptions::new(&connect)).await.unwrap();
    let lock = Lock::mutex(&session, PATH).unwrap();
    let mut rates: Vec<(&'static str, Vec<f64>)> =
        vec![("raw floor (create+delete)", vec![]), ("zoolock Lock", vec![]), ("zookeeper-client lock", vec![])];
    // Warm up connections and the JIT of the server.
    zoolock_lock(&lock, Instant::now() + round / 2).await;
    for _ in 0..rounds {
        for (name, samples) in rates.iter_mut() {
            let until = Instant::now() + round;
            let started = Instant::now();
            let cycles = match *name {
                "raw floor (create+delete)" => raw_floor(&raw, until).await,
                "zoolock Lock" => zoolock_lock(&lock, until).await,
                _ => zookeeper_client_lock(&raw, until).await,
            };
            samples.push(cycles as f64 / started.elapsed().as_secs_f64());
        }
    }
    session.close().await;
    rates.into_iter().map(|(name, samples)| (name, median(samples))).collect()
}

#[tokio::main]
async fn main() {
    let rounds = arg("--rounds", 5);
    let round = Duration::from_millis(arg("--seconds", 2) * 1000);
    println!("uncontended acquire+release, one client, one local server; median of {rounds} interleaved rounds of {round:?}");
    for force_sync in [true, false] {
        let results = run(force_sync, rounds, round).await;
        let floor = results[0].1;
        println!("\nforceSync={}", if force_sync { "yes" } else { "no" });
        println!("| contestant | cycles/s | × raw floor |");
        println!("|---|---:|---:|");
        for (name, rate) in &results {
            println!("| {name} | {rate:.0} | {:.2} |", rate / floor);
        }
    }
}

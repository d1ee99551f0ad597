//! One worker process: acquires the lock `--count` times and, while
//! holding it, appends one record to the ledger.

use std::process::ExitCode;
use std::time::Instant;

use crate::ledger::{now_ns, Record};
use zoolock::{Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

pub fn main(mut args: impl Iterator<Item = String>) -> ExitCode {
    let (mut connect, mut path, mut ledger, mut name, mut count) = (None, None, None, None, 1usize);
    while let Some(flag) = args.next() {
        let value = args.next();
        match flag.as_str() {
            "--connect" => connect = value,
            "--path" => path = value,
            "--ledger" => ledger = value,
            "--name" => name = value,
            "--count" => count = value.and_then(|v| v.parse().ok()).unwrap_or(1),
            _ => {}
        }
    }
    let (Some(connect), Some(path), Some(ledger), Some(name)) = (connect, path, ledger, name) else {
        eprintln!("worker: --connect, --path, --ledger and --name are required");
        return ExitCode::from(2);
    };
    match run(&connect, &path, &ledger, &name, count) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("worker {name}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(connect: &str, path: &str, ledger: &str, name: &str, count: usize) -> zoolock::Result<()> {
    let session = Session::connect_blocking(SessionOptions::new(connect))?;
    let config = LockConfig { identifier: name.as_bytes().to_vec(), ..LockConfig::default() };
    let lock = Lock::new(&session, path, Kind::Mutex, config)?;
    for _ in 0..count {
        let asked = Instant::now();
        lock.acquire_blocking(Acquire::default())?;
        let wait = asked.elapsed();
        let start = now_ns();
        let token = lock.fencing_token().expect("held");
        let record = Record { worker: name.to_owned(), language: "rust".into(), token, start, end: now_ns(), wait };
        record.append(ledger).expect("append to the ledger");
        lock.release_blocking()?;
    }
    session.close_blocking();
    Ok(())
}

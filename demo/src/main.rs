//! zoolock's main job. Starts a local ZooKeeper (or uses `--connect`), runs
//! worker processes that contend for one lock guarding an append-only
//! ledger, shows progress, then verifies the ledger: no two critical
//! sections overlap and fencing tokens strictly increase.
//!
//! `zoolock-demo [--workers N] [--acquisitions K] [--connect HOSTS] [--path P]`

mod ledger;
mod worker;

use std::path::PathBuf;
use std::process::{Child, Command, ExitCode};
use std::time::{Duration, Instant};

use zoolock::{Kind, Lock, LockConfig, Session, SessionOptions};

struct Args {
    workers: usize,
    acquisitions: usize,
    connect: Option<String>,
    path: String,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args { workers: 4, acquisitions: 250, connect: None, path: "/zoolock-demo/ledger".into() };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--workers" => parsed.workers = value()?.parse().map_err(|e| format!("--workers: {e}"))?,
            "--acquisitions" => parsed.acquisitions = value()?.parse().map_err(|e| format!("--acquisitions: {e}"))?,
            "--connect" => parsed.connect = Some(value()?),
            "--path" => parsed.path = value()?,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.workers == 0 || parsed.acquisitions == 0 {
        return Err("--workers and --acquisitions must be at least 1".into());
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("worker") {
        return worker::main(args.skip(1));
    }
    let args = match parse_args(args) {
        Ok(args) => args,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("zoolock-demo: {message}");
            }
            eprintln!("usage: zoolock-demo [--workers N] [--acquisitions K] [--connect HOSTS] [--path P]");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("zoolock-demo: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the workers and verifies the ledger; `Ok(false)` on a violation.
fn run(args: &Args) -> Result<bool, String> {
    // The embedded server lives as long as this function; it dies with us.
    let embedded = match &args.connect {
        Some(_) => None,
        None => {
            println!("starting a local ZooKeeper…");
            Some(zk_harness::Ensemble::start(1, zk_harness::Options::default()).map_err(|e| e.to_string())?)
        }
    };
    let connect = args.connect.clone().unwrap_or_else(|| embedded.as_ref().unwrap().direct_connect_string());
    let ledger_path = std::env::temp_dir().join(format!("zoolock-ledger-{}.tsv", std::process::id()));
    std::fs::write(&ledger_path, "").map_err(|e| format!("cannot create the ledger: {e}"))?;
    println!("ZooKeeper at {connect}; lock {}; ledger {}", args.path, ledger_path.display());

    let mut children = spawn_workers(args, &connect, &ledger_path)?;
    let observer = Session::connect_blocking(SessionOptions::new(&connect)).map_err(|e| e.to_string())?;
    let lock = Lock::new(&observer, &args.path, Kind::Mutex, LockConfig::default()).map_err(|e| e.to_string())?;
    let expected = args.workers * args.acquisitions;
    let started = Instant::now();
    let mut failed_workers = 0;
    while !children.is_empty() {
        std::thread::sleep(Duration::from_millis(500));
        let done = ledger::count(&ledger_path);
        let holder = lock.contenders_blocking().ok().and_then(|c| c.into_iter().next()).unwrap_or_else(|| "-".into());
        println!("  {done:>6}/{expected} acquisitions, holder now: {holder}");
        children.retain_mut(|child| match child.try_wait() {
            Ok(Some(status)) => {
                failed_workers += usize::from(!status.success());
                false
            }
            _ => true,
        });
    }
    observer.close_blocking();
    let elapsed = started.elapsed();
    let report = ledger::verify(&ledger_path).map_err(|e| format!("cannot read the ledger: {e}"))?;
    report.print(elapsed);
    let ok = report.is_clean() && failed_workers == 0 && report.total() == expected;
    if failed_workers > 0 {
        println!("{failed_workers} worker(s) failed");
    }
    println!("{}", if ok { "VERIFIED: mutual exclusion held and fencing tokens increased" } else { "VIOLATION" });
    Ok(ok)
}

fn spawn_workers(args: &Args, connect: &str, ledger: &PathBuf) -> Result<Vec<Child>, String> {
    let me = std::env::current_exe().map_err(|e| e.to_string())?;
    (0..args.workers)
        .map(|i| {
            Command::new(&me)
                .arg("worker")
                .args(["--connect", connect, "--path", &args.path])
                .args(["--ledger", &ledger.to_string_lossy()])
                .args(["--name", &format!("rust-{i}"), "--count", &args.acquisitions.to_string()])
                .spawn()
                .map_err(|e| format!("cannot start worker {i}: {e}"))
        })
        .collect()
}

//! zoolock's main job. Starts a local ZooKeeper (or uses `--connect`), runs
//! worker processes that contend for one lock guarding a shared resource
//! (an append-only ledger that enforces fencing), shows progress, then
//! verifies what the resource accepted: no two critical sections overlap
//! and fencing tokens strictly increase. With `--faults` the same workers
//! run against a 3-node ensemble while faults are injected.
//!
//! `zoolock-demo [--workers N] [--acquisitions K] [--connect HOSTS] [--path P]`
//! `zoolock-demo --faults [--duration SECS] [--workers N]`

mod faults;
mod languages;
mod ledger;
mod resource;
mod worker;

use std::io::{BufRead, BufReader};
use std::process::{Child, ExitCode, Stdio};
use std::time::{Duration, Instant};

use languages::Language;
use resource::Resource;
use zoolock::{Lock, Scheme, Session, SessionOptions};

pub struct Args {
    pub workers: usize,
    pub acquisitions: usize,
    pub connect: Option<String>,
    pub path: String,
    pub faults: bool,
    pub duration: Duration,
    /// Worker i is written in `languages[i % len]`.
    pub languages: Vec<Language>,
    /// How the workers name their nodes: kazoo's way, or Curator's (to share with Curator).
    pub scheme: Scheme,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut parsed = Args {
        workers: 4,
        acquisitions: 250,
        connect: None,
        path: "/zoolock-demo/ledger".into(),
        faults: false,
        duration: Duration::from_secs(60),
        languages: Vec::new(),
        scheme: Scheme::Kazoo,
    };
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value"));
        match flag.as_str() {
            "--workers" => parsed.workers = value()?.parse().map_err(|e| format!("--workers: {e}"))?,
            "--acquisitions" => parsed.acquisitions = value()?.parse().map_err(|e| format!("--acquisitions: {e}"))?,
            "--connect" => parsed.connect = Some(value()?),
            "--path" => parsed.path = value()?,
            "--faults" => parsed.faults = true,
            "--duration" => {
                let secs: f64 = value()?.parse().map_err(|e| format!("--duration: {e}"))?;
                parsed.duration = Duration::try_from_secs_f64(secs).map_err(|e| format!("--duration: {e}"))?;
            }
            "--languages" => {
                for name in value()?.split(',') {
                    let language = Language::parse(name).ok_or_else(|| format!("--languages: no worker in {name}"))?;
                    parsed.languages.push(language);
                }
            }
            "--scheme" => {
                parsed.scheme = match value()?.as_str() {
                    "kazoo" => Scheme::Kazoo,
                    "curator" => Scheme::Curator,
                    other => return Err(format!("--scheme: kazoo or curator, not {other}")),
                }
            }
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.workers == 0 || parsed.acquisitions == 0 {
        return Err("--workers and --acquisitions must be at least 1".into());
    }
    if parsed.languages.is_empty() {
        // Every language this machine has built that can share the path, Rust at least.
        parsed.languages =
            languages::ALL.into_iter().filter(|l| l.speaks(parsed.scheme) && l.available()).collect();
    } else if let Some(missing) = parsed.languages.iter().find(|l| !l.available()) {
        return Err(format!("no {} worker is built here: run scripts/demo.sh once", missing.name()));
    } else if let Some(foreign) = parsed.languages.iter().find(|l| !l.speaks(parsed.scheme)) {
        return Err(format!("{} workers cannot share a path whose nodes are named by {:?}", foreign.name(), parsed.scheme));
    }
    parsed.workers = parsed.workers.max(parsed.languages.len());
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
            eprintln!("                    [--languages rust,python,kazoo,csharp,curator] [--scheme kazoo|curator]");
            eprintln!("       zoolock-demo --faults [--duration SECS] [--workers N]");
            return ExitCode::from(2);
        }
    };
    let outcome = if args.faults { faults::run(&args) } else { run(&args) };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("zoolock-demo: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the workers to completion and verifies the ledger; `Ok(false)` on a violation.
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
    let resource = Resource::start().map_err(|e| format!("cannot start the resource: {e}"))?;
    println!("ZooKeeper at {connect}; lock {}; resource at {}", args.path, resource.address);

    let names: Vec<&str> = args.languages.iter().map(|l| l.name()).collect();
    println!("workers: {} in {}", args.workers, names.join(", "));
    let mut children: Vec<Child> = (0..args.workers)
        .map(|i| spawn_worker(&connect, args, &resource, i, Some(args.acquisitions), Stdio::null()).map(|(_, c)| c))
        .collect::<Result<_, _>>()?;
    let observer = Session::connect_blocking(SessionOptions::new(&connect)).map_err(|e| e.to_string())?;
    let lock = Lock::mutex(&observer, &args.path).map_err(|e| e.to_string())?;
    let expected = args.workers * args.acquisitions;
    let started = Instant::now();
    let mut failed_workers = 0;
    while !children.is_empty() {
        std::thread::sleep(Duration::from_millis(500)); // the progress line's pace
        let holder = lock.contenders_blocking().ok().and_then(|c| c.into_iter().next()).unwrap_or_else(|| "-".into());
        println!("  {:>6}/{expected} acquisitions, holder now: {holder}", resource.count());
        children.retain_mut(|child| match child.try_wait() {
            Ok(Some(status)) => {
                failed_workers += usize::from(!status.success());
                false
            }
            _ => true,
        });
    }
    observer.close_blocking();
    let report = ledger::verify(&resource.ledger.lock().unwrap());
    report.print(started.elapsed());
    let ok = report.is_clean() && failed_workers == 0 && report.total() == expected && report.refused == 0;
    if failed_workers > 0 {
        println!("{failed_workers} worker(s) failed");
    }
    println!("{}", if ok { "VERIFIED: mutual exclusion held and fencing tokens increased" } else { "VIOLATION" });
    Ok(ok)
}

/// Starts worker number `i`, in the language its number picks; its name is `<language>-<i>`.
pub fn spawn_worker(
    connect: &str,
    args: &Args,
    resource: &Resource,
    i: usize,
    count: Option<usize>,
    stdout: Stdio,
) -> Result<(String, Child), String> {
    let language = args.languages[i % args.languages.len()];
    let name = format!("{}-{i}", language.name());
    let mut command = language.command();
    command.args(["--connect", connect, "--path", &args.path, "--resource", &resource.address]);
    command.args(["--name", &name]);
    if args.scheme == Scheme::Curator && language != Language::Curator {
        command.args(["--scheme", "curator"]);
    }
    if let Some(count) = count {
        command.args(["--count", &count.to_string()]);
    } else {
        command.args(["--session-timeout", &faults::SESSION_TIMEOUT.as_secs_f64().to_string()]);
        command.args(["--hold-ms", &faults::HOLD.as_millis().to_string()]);
        command.stdin(Stdio::piped());
    }
    let child = command.stdout(stdout).spawn().map_err(|e| format!("cannot start worker {name}: {e}"))?;
    Ok((name, child))
}

/// Lines a worker prints, for the driver to follow.
pub fn worker_lines(child: &mut Child) -> impl Iterator<Item = String> {
    BufReader::new(child.stdout.take().expect("piped stdout")).lines().map_while(Result::ok)
}

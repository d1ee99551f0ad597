//! zoolock's main job. Starts a local ZooKeeper (or uses `--connect`), runs
//! worker processes that contend for one lock guarding a shared resource
//! (an append-only ledger that enforces fencing), shows progress, then
//! verifies what the resource accepted: no two critical sections overlap
//! and fencing tokens strictly increase. With `--faults` the same workers
//! run against a 3-node ensemble while faults are injected.
//!
//! Every language asked for (all that can share the path, by default) must
//! take part: one that is not built, or whose workers fail to start, fails
//! the run by name. The workers' client log lines go to a log file (see
//! `logs.rs`); the terminal shows progress and the summary.
//!
//! The summary is for people; `--json` prints it as one JSON object on
//! stdout instead (with the zoolock workers' summed metrics), the lines for
//! people going to stderr.
//!
//! `zoolock-demo [--workers N] [--acquisitions K] [--connect HOSTS] [--path P] [--verbose] [--tls] [--json]`
//! `zoolock-demo --faults [--duration SECS] [--workers N] [--json]`

use std::sync::atomic::{AtomicBool, Ordering};

/// Set by `--json`: stdout carries only the JSON summary.
static JSON: AtomicBool = AtomicBool::new(false);

fn json() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// A line for people: on stdout, or on stderr under `--json`.
macro_rules! say {
    ($($arg:tt)*) => {
        if crate::json() { eprintln!($($arg)*) } else { println!($($arg)*) }
    };
}

mod faults;
mod languages;
mod ledger;
mod logs;
mod metrics;
mod operator;
mod resource;
mod worker;

use std::io::{BufRead, BufReader};
use std::process::{Child, ExitCode, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use languages::Language;
use logs::Log;
use resource::Resource;
use zoolock::{Lock, Scheme, Session, SessionOptions, TlsOptions};

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
    /// Workers' log lines on the terminal too, not only in the log file.
    pub verbose: bool,
    /// Over TLS: the local server's `secureClientPort`, client certificates required.
    pub tls: bool,
    /// The summary as one JSON object on stdout.
    pub json: bool,
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
        verbose: false,
        tls: false,
        json: false,
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
            "--verbose" => parsed.verbose = true,
            "--tls" => parsed.tls = true,
            "--json" => parsed.json = true,
            "-h" | "--help" => return Err(String::new()),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if parsed.workers == 0 || parsed.acquisitions == 0 {
        return Err("--workers and --acquisitions must be at least 1".into());
    }
    if parsed.tls && (parsed.faults || parsed.connect.is_some()) {
        return Err(
            "--tls runs against its own TLS server, without --faults (whose proxies sit on plain ports) or --connect"
                .into(),
        );
    }
    if parsed.languages.is_empty() {
        // Every language that can share the path (over TLS if asked): none is left out silently.
        parsed.languages =
            languages::ALL.into_iter().filter(|l| l.speaks(parsed.scheme) && (!parsed.tls || l.tls())).collect();
    } else if let Some(foreign) = parsed.languages.iter().find(|l| !l.speaks(parsed.scheme)) {
        return Err(format!(
            "{} workers cannot share a path whose nodes are named by {:?}",
            foreign.name(),
            parsed.scheme
        ));
    } else if let Some(plain) = parsed.languages.iter().find(|l| parsed.tls && !l.tls()) {
        return Err(format!(
            "{} workers cannot connect over TLS (--tls takes rust, python, kazoo and csharp)",
            plain.name()
        ));
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
            eprintln!("                    [--languages rust,python,kazoo,csharp,curator] [--scheme kazoo|curator] [--verbose] [--tls] [--json]");
            eprintln!("       zoolock-demo --faults [--duration SECS] [--workers N] [--json]");
            return ExitCode::from(2);
        }
    };
    JSON.store(args.json, Ordering::Relaxed);
    if let Err(message) = check_languages(&args.languages) {
        eprintln!("{message}");
        return ExitCode::FAILURE;
    }
    let log = match Log::create(&languages::root(), args.verbose) {
        Ok(log) => log,
        Err(e) => {
            eprintln!("zoolock-demo: cannot create the log file: {e}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = if args.faults { faults::run(&args, &log) } else { run(&args, &log) };
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(message) => {
            eprintln!("zoolock-demo: {message}");
            eprintln!("client logs: {}", log.path.display());
            ExitCode::FAILURE
        }
    }
}

/// Fails, naming each language asked for that cannot run here and why.
fn check_languages(languages: &[Language]) -> Result<(), String> {
    let missing: Vec<String> = languages
        .iter()
        .filter_map(|l| l.ready().err().map(|why| format!("zoolock-demo: {} workers cannot run: {why}", l.name())))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let others: Vec<&str> = languages.iter().filter(|l| l.ready().is_ok()).map(|l| l.name()).collect();
    Err(format!(
        "{}\nscripts/demo.sh builds every language it is asked for; to leave one out: --languages {}",
        missing.join("\n"),
        others.join(",")
    ))
}

/// Runs the workers to completion and verifies the ledger; `Ok(false)` on a violation.
fn run(args: &Args, log: &Arc<Log>) -> Result<bool, String> {
    // The embedded server lives as long as this function; it dies with us.
    let embedded = match &args.connect {
        Some(_) => None,
        None => {
            say!("starting a local ZooKeeper{}…", if args.tls { " (TLS, client certificates required)" } else { "" });
            let tls = args.tls.then_some(zk_harness::Tls { client_auth: true, self_signed: false });
            let options = zk_harness::Options { tls, ..zk_harness::Options::default() };
            Some(zk_harness::Ensemble::start(1, options).map_err(|e| e.to_string())?)
        }
    };
    let tls = embedded.as_ref().and_then(|zk| zk.tls_files());
    let connect = match (&args.connect, &embedded) {
        (Some(connect), _) => connect.clone(),
        // The server's certificate names localhost: the clients check it.
        (None, Some(zk)) if args.tls => zk.secure_connect_string("localhost").expect("a TLS server"),
        (None, zk) => zk.as_ref().unwrap().direct_connect_string(),
    };
    let resource = Resource::start().map_err(|e| format!("cannot start the resource: {e}"))?;
    say!("ZooKeeper at {connect}; lock {}; resource at {}", args.path, resource.address);

    let names: Vec<&str> = args.languages.iter().map(|l| l.name()).collect();
    say!("workers: {} in {}", args.workers, names.join(", "));
    let mut spawned = Vec::new();
    for i in 0..args.workers {
        spawned.push(spawn_worker(&connect, tls, args, &resource, i, Some(args.acquisitions), log)?);
    }
    let deadline = Instant::now() + START_LIMIT;
    for i in 0..spawned.len() {
        if let Err(message) = spawned[i].started(deadline) {
            stop_all(spawned);
            return Err(message);
        }
    }
    // Of their later lines, only the zoolock workers' last, `metrics …`: the resource counts their work.
    let mut children: Vec<(String, Child, Receiver<String>)> =
        spawned.into_iter().map(|s| (s.name, s.child, s.lines)).collect();
    let mut metrics = metrics::Metrics::default();
    let mut options = SessionOptions::new(&connect);
    if let Some(files) = tls {
        options = options.tls(
            TlsOptions::new()
                .ca(files.ca.as_path())
                .certfile(files.client_cert.as_path())
                .keyfile(files.client_key.as_path()),
        );
    }
    let observer = Session::connect_blocking(options).map_err(|e| e.to_string())?;
    let lock = Lock::mutex(&observer, &args.path).map_err(|e| e.to_string())?;
    let expected = args.workers * args.acquisitions;
    let started = Instant::now();
    // Each failed worker's name and exit status: a worker that fails silently is named.
    let mut failed: Vec<String> = Vec::new();
    while !children.is_empty() {
        std::thread::sleep(Duration::from_millis(500)); // the progress line's pace
        let holder = lock.queue_blocking().ok().and_then(|c| c.into_iter().next()).unwrap_or_else(|| "-".into());
        say!("  {:>6}/{expected} acquisitions, holder now: {holder}", resource.count());
        children.retain_mut(|(name, child, lines)| match child.try_wait() {
            Ok(Some(status)) => {
                if !status.success() {
                    failed.push(format!("{name} ({status})"));
                }
                // Its stdout is read to the end by then, or soon: the reader stops at EOF.
                while let Ok(line) = lines.recv_timeout(Duration::from_secs(5)) {
                    if let Some(reported) = metrics::parse(&line) {
                        metrics.add(name, reported);
                    }
                }
                false
            }
            _ => true,
        });
    }
    observer.close_blocking();
    let report = ledger::verify(&resource.ledger.lock().unwrap());
    report.print(started.elapsed(), &names);
    metrics.print();
    let failed_workers = failed.len();
    let ok = report.is_clean() && failed_workers == 0 && report.total() == expected && report.refused == 0;
    if failed_workers > 0 {
        say!("{failed_workers} worker(s) failed: {}", failed.join(", "));
    }
    say!("client logs: {}", log.path.display());
    say!("{}", if ok { "VERIFIED: mutual exclusion held and fencing tokens increased" } else { "VIOLATION" });
    if args.json {
        let mut summary = report.json(started.elapsed(), &names);
        summary["mode"] = "main".into();
        summary["ok"] = ok.into();
        summary["expected"] = expected.into();
        summary["failed_workers"] = failed_workers.into();
        summary["metrics"] = metrics.json();
        summary["log"] = log.path.display().to_string().into();
        println!("{summary}");
    }
    Ok(ok)
}

/// How long a worker may take to start and connect.
const START_LIMIT: Duration = Duration::from_secs(60);

/// A worker process just started.
pub struct Spawned {
    pub name: String,
    pub language: Language,
    pub child: Child,
    /// Its stdout lines, read on a thread of their own.
    pub lines: Receiver<String>,
    /// The thread copying its stderr into the log; returns its last lines.
    pub stderr: Option<JoinHandle<Vec<String>>>,
}

impl Spawned {
    /// Waits until the worker says its first line (`session <id>`: it has
    /// connected) and returns that line. A worker that exits first, or says
    /// nothing by `deadline`, failed to start: the error names its language
    /// and quotes its last log lines.
    pub fn started(&mut self, deadline: Instant) -> Result<String, String> {
        let why = match self.lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok(line) => return Ok(line),
            Err(RecvTimeoutError::Timeout) => {
                let _ = self.child.kill();
                format!("was not connected within {START_LIMIT:?}")
            }
            Err(RecvTimeoutError::Disconnected) => "exited".to_string(),
        };
        let status = self.child.wait().map_or_else(|e| e.to_string(), |s| s.to_string());
        let said = self.stderr.take().and_then(|t| t.join().ok()).unwrap_or_default();
        Err(format!(
            "the {} workers failed to start: {} {why} ({status}); its last lines:\n  {}",
            self.language.name(),
            self.name,
            if said.is_empty() { "(none)".to_string() } else { said.join("\n  ") }
        ))
    }
}

/// Kills workers that will not be needed (another failed to start).
pub fn stop_all(spawned: Vec<Spawned>) {
    for mut s in spawned {
        let _ = s.child.kill();
        let _ = s.child.wait();
    }
}

/// Starts worker number `i`, in the language its number picks; its name is
/// `<language>-<i>`. Its stdout is read into `Spawned::lines`, its stderr
/// copied into the log.
pub fn spawn_worker(
    connect: &str,
    tls: Option<&zk_harness::tls::TlsFiles>,
    args: &Args,
    resource: &Resource,
    i: usize,
    count: Option<usize>,
    log: &Arc<Log>,
) -> Result<Spawned, String> {
    let language = args.languages[i % args.languages.len()];
    let name = format!("{}-{i}", language.name());
    let mut command = language.command();
    command.args(["--connect", connect, "--path", &args.path, "--resource", &resource.address]);
    command.args(["--name", &name]);
    if let Some(files) = tls {
        command.arg("--tls-ca").arg(&files.ca).arg("--tls-cert").arg(&files.client_cert);
        command.arg("--tls-key").arg(&files.client_key);
    }
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
    let mut child = command.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().map_err(|e| {
        let program = command.get_program().to_string_lossy().into_owned();
        format!("the {} workers failed to start: cannot run {program}: {e}", language.name())
    })?;
    let stderr = log.follow(name.clone(), child.stderr.take().expect("piped stderr"));
    let (tx, lines) = channel();
    let stdout = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        // Read to the end even when nobody listens: a worker must never block on a full pipe.
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    Ok(Spawned { name, language, child, lines, stderr: Some(stderr) })
}

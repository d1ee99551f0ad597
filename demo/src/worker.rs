//! One worker process. Acquires the lock again and again and, while holding
//! it, writes one record to the resource with its fencing token. It stops
//! writing whenever it is told its lock is suspended or lost.
//!
//! `worker --connect HOSTS --path P --resource ADDR --name N [--count K]
//! [--session-timeout SECS] [--hold-ms MS] [--scheme curator] [--tls-ca CA --tls-cert CERT --tls-key KEY]`. Without `--count` it runs until a `stop` line
//! on stdin, prints `idle` with its lock released and its session still
//! open (so that orphan nodes can be counted), and exits at end of stdin.
//! Stdout also carries `session <id>`, `told <name> <state> <ns>` and
//! `connected <name> <ns>` (the session is connected again) lines,
//! and at the end of its loop `metrics <name>=<value> …` (its session's):
//! the session's `Suspended` or `Lost`, or a hold lost, by its reason
//! (`NodeDeleted`, `SessionExpired`, …).

use std::io::{BufRead, BufReader, Write};
use std::net::TcpStream;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::resource::now_ns;
use zoolock::{
    Acquire, Error, Kind, Lock, LockConfig, LockState, Scheme, Session, SessionOptions, SessionState, TlsOptions,
};

struct Args {
    connect: String,
    path: String,
    resource: String,
    name: String,
    count: Option<usize>,
    session_timeout: Duration,
    /// How long to keep the lock after writing: the work of the critical section.
    hold: Duration,
    scheme: Scheme,
    /// CA, client certificate and key (PEM files): connect over TLS.
    tls: Option<(String, String, String)>,
}

fn parse(mut args: impl Iterator<Item = String>) -> Option<Args> {
    let (mut connect, mut path, mut resource, mut name, mut count) = (None, None, None, None, None);
    let (mut timeout, mut hold_ms, mut scheme) = (10.0, 0, Scheme::Kazoo);
    let (mut ca, mut cert, mut key) = (None, None, None);
    while let Some(flag) = args.next() {
        let value = args.next();
        match flag.as_str() {
            "--connect" => connect = value,
            "--path" => path = value,
            "--resource" => resource = value,
            "--name" => name = value,
            "--count" => count = value.and_then(|v| v.parse().ok()),
            "--session-timeout" => timeout = value.and_then(|v| v.parse().ok()).unwrap_or(10.0),
            "--hold-ms" => hold_ms = value.and_then(|v| v.parse().ok()).unwrap_or(0),
            "--scheme" if value.as_deref() == Some("curator") => scheme = Scheme::Curator,
            "--tls-ca" => ca = value,
            "--tls-cert" => cert = value,
            "--tls-key" => key = value,
            _ => {}
        }
    }
    Some(Args {
        connect: connect?,
        path: path?,
        resource: resource?,
        name: name?,
        count,
        session_timeout: Duration::from_secs_f64(timeout),
        hold: Duration::from_millis(hold_ms),
        scheme,
        tls: ca.map(|ca| (ca, cert.unwrap_or_default(), key.unwrap_or_default())),
    })
}

pub fn main(args: impl Iterator<Item = String>) -> ExitCode {
    // zookeeper-client's log lines (lost connections, retries) to stderr,
    // which the driver copies into the run's log file.
    tracing_subscriber::fmt()
        .with_max_level(tracing_subscriber::filter::LevelFilter::INFO)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let Some(args) = parse(args) else {
        eprintln!("worker: --connect, --path, --resource and --name are required");
        return ExitCode::from(2);
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("worker {}: {e}", args.name);
            ExitCode::FAILURE
        }
    }
}

fn say(line: String) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn run(args: &Args) -> Result<(), Box<dyn std::error::Error>> {
    let mut options = SessionOptions::new(&args.connect).session_timeout(args.session_timeout);
    if let Some((ca, cert, key)) = &args.tls {
        options = options.tls(TlsOptions::new().ca(ca.as_str()).certfile(cert.as_str()).keyfile(key.as_str()));
    }
    let session = Session::connect_blocking(options)?;
    say(format!("session {}", session.status().session_id));
    let (reporter, me) = (session.clone(), args.name.clone());
    session.add_listener(move |state| match state {
        SessionState::Connected => {
            say(format!("session {}", reporter.status().session_id));
            say(format!("connected {me} {}", now_ns()));
        }
        // What tells a holder to stop touching the resource.
        SessionState::Suspended | SessionState::Lost => say(format!("told {me} {state:?} {}", now_ns())),
        SessionState::Closed => {}
    });
    let config = LockConfig { identifier: args.name.as_bytes().to_vec(), scheme: args.scheme, ..LockConfig::default() };
    let lock = Lock::new(&session, &args.path, Kind::Mutex, config)?;
    let me = args.name.clone();
    lock.add_listener(Box::new(move |state| {
        // A hold's end other than our release, by its reason: `NodeDeleted` when someone deleted our node.
        if let LockState::Lost(reason) = state {
            say(format!("told {me} {reason:?} {}", now_ns()));
        }
    }));

    let stop = Arc::new(AtomicBool::new(false));
    if args.count.is_none() {
        let stop = stop.clone();
        std::thread::spawn(move || {
            for line in std::io::stdin().lock().lines() {
                if line.map_or(true, |l| l.trim() == "stop") {
                    break;
                }
            }
            stop.store(true, Ordering::SeqCst);
        });
    }
    let mut resource = Resource::connect(&args.resource)?;
    let mut done = 0;
    while !stop.load(Ordering::SeqCst) && args.count.map_or(true, |c| done < c) {
        let asked = Instant::now();
        match lock.acquire_blocking(Acquire::timeout(Duration::from_secs(5))) {
            Ok(true) => {}
            Ok(false) => continue,
            Err(Error::Closed) => break,
            Err(e) => {
                eprintln!("worker {}: acquire: {e}", args.name);
                continue;
            }
        }
        let (start, wait) = (now_ns(), asked.elapsed());
        // Told suspended or lost: the resource must not be touched.
        if lock.state() == LockState::Held {
            let token = lock.fencing_token().unwrap_or(i64::MIN);
            resource.write(&args.name, token, wait, start)?;
            done += 1;
            std::thread::sleep(args.hold);
        }
        if let Err(e) = lock.release_blocking() {
            eprintln!("worker {}: release: {e}", args.name);
        }
    }
    // The session's metrics for the driver's summary, before `idle`, which the driver waits for.
    say(crate::metrics::line(&session.metrics()));
    if args.count.is_none() {
        say("idle".into());
        // Hold the session open until the driver has counted the nodes left.
        for _ in std::io::stdin().lock().lines() {}
    }
    session.close_blocking();
    Ok(())
}

struct Resource {
    out: TcpStream,
    replies: BufReader<TcpStream>,
}

impl Resource {
    fn connect(address: &str) -> std::io::Result<Resource> {
        let out = TcpStream::connect(address)?;
        out.set_nodelay(true)?;
        Ok(Resource { replies: BufReader::new(out.try_clone()?), out })
    }

    fn write(&mut self, worker: &str, token: i64, wait: Duration, start: u128) -> std::io::Result<()> {
        writeln!(self.out, "write {worker} rust {token} {} {start}", wait.as_micros())?;
        let mut reply = String::new();
        self.replies.read_line(&mut reply)?;
        Ok(())
    }
}

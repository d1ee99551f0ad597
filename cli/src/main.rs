//! `zoolock`: run a command while holding a ZooKeeper lock (`exec`), and
//! show who holds or waits on a lock path (`status`, `watch`). The lock
//! logic and the inspection live in the `zoolock` crate; this only parses
//! and prints.

mod credentials;
mod duration;

use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Args, Parser, Subcommand};
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::time::{sleep_until, Instant};
use zoolock::{
    Acquire, Error, Holder, Inspector, Kind, Lock, LockConfig, LockState, Outcome, Participant, ParticipantKind,
    Scheme, Semaphore, Session, SessionOptions,
};

/// Exit codes of `zoolock` itself; otherwise `exec` exits with CMD's own
/// status (128 + N when a signal N ended it, as shells report).
mod exit {
    /// Bad flags, path, identifier or connect string (sysexits' EX_USAGE).
    pub const BAD_INPUT: u8 = 64;
    /// `status` or `watch` of a path that does not exist (EX_NOINPUT).
    pub const NO_PATH: u8 = 66;
    /// No server answered within the connect timeout, or authentication failed (EX_UNAVAILABLE).
    pub const CONNECT: u8 = 69;
    /// Any other ZooKeeper error (EX_SOFTWARE).
    pub const ERROR: u8 = 70;
    /// The hold was lost, or suspended past the grace period: CMD was stopped (EX_IOERR).
    pub const LOST: u8 = 74;
    /// The lock (or a lease) was not acquired within --timeout (EX_TEMPFAIL).
    pub const TIMEOUT: u8 = 75;
    /// CMD could not be run: not executable (as shells report).
    pub const NOT_EXECUTABLE: u8 = 126;
    /// CMD was not found (as shells report).
    pub const NOT_FOUND: u8 = 127;
}

#[derive(Parser)]
#[command(name = "zoolock", version, about = "Run commands under a ZooKeeper lock; show who holds and who waits")]
struct Cli {
    #[command(flatten)]
    connection: Connection,
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Connection {
    /// ZooKeeper servers and chroot: host:port[,host:port…][/chroot]
    #[arg(long, env = "ZOOLOCK_CONNECT", default_value = "127.0.0.1:2181", global = true)]
    connect: String,
    /// Session timeout: how long a crashed holder keeps the lock
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, global = true)]
    session_timeout: Option<Duration>,
    /// How long to wait for a server to answer the first connect
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, global = true)]
    connect_timeout: Option<Duration>,
    #[command(flatten)]
    credentials: credentials::Credentials,
}

#[derive(Subcommand)]
enum Command {
    /// Run CMD while holding the lock at PATH; stop it if the hold is lost
    Exec(ExecArgs),
    /// Show the holders, then the waiters, of PATH in queue order
    Status(ShowArgs),
    /// Show the holders and waiters of PATH again at every change, until interrupted
    Watch(ShowArgs),
}

#[derive(Args)]
struct ExecArgs {
    /// The lock path (a semaphore's path with --semaphore)
    path: String,
    /// Give up after DURATION without the lock (exit 75); 0 tries once
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    timeout: Option<Duration>,
    /// Take a read lock: shared with other readers
    #[arg(long, conflicts_with_all = ["write", "semaphore"])]
    read: bool,
    /// Take a write lock: excludes readers and writers
    #[arg(long, conflicts_with = "semaphore")]
    write: bool,
    /// Take one of N leases of a kazoo semaphore instead of a lock
    #[arg(long, value_name = "N")]
    semaphore: Option<u32>,
    /// Let go of the hold by itself DURATION after acquiring it (CMD is stopped then)
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    lease: Option<Duration>,
    /// The node's data, shown by `status` [default: HOST:PID]
    #[arg(long, value_name = "ID")]
    identifier: Option<String>,
    /// How long a suspended hold (connection down) may last before CMD is stopped
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, default_value = "0")]
    grace: Duration,
    /// Time between SIGTERM and SIGKILL when stopping CMD
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, default_value = "5s")]
    kill_after: Duration,
    /// The command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

#[derive(Args)]
struct ShowArgs {
    /// The lock or semaphore path
    path: String,
    /// One JSON object per answer instead of a table
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => {
            let code = if err.use_stderr() { exit::BAD_INPUT } else { 0 };
            let _ = err.print();
            return ExitCode::from(code);
        }
    };
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a tokio runtime");
    let code = runtime.block_on(async {
        match run(cli).await {
            Ok(code) => code,
            Err(err) => {
                eprintln!("zoolock: {err}");
                error_code(&err)
            }
        }
    });
    ExitCode::from(code)
}

fn error_code(err: &Error) -> u8 {
    match err {
        Error::InvalidPath { .. }
        | Error::InvalidConnectString { .. }
        | Error::InvalidArgument(_)
        | Error::InconsistentLeases { .. }
        | Error::NoChroot(_) => exit::BAD_INPUT,
        Error::ConnectTimeout { .. } | Error::AuthFailed => exit::CONNECT,
        _ => exit::ERROR,
    }
}

async fn run(cli: Cli) -> zoolock::Result<u8> {
    // Bad paths fail before connecting.
    let path = match &cli.command {
        Command::Exec(args) => &args.path,
        Command::Status(args) | Command::Watch(args) => &args.path,
    };
    zoolock::validate_path(path)?;
    let mut options = SessionOptions::new(&cli.connection.connect);
    if let Some(timeout) = cli.connection.session_timeout {
        options = options.session_timeout(timeout);
    }
    if let Some(timeout) = cli.connection.connect_timeout {
        options = options.connect_timeout(timeout);
    }
    let options = cli.connection.credentials.apply(options).map_err(Error::InvalidArgument)?;
    let session = Session::connect(options).await?;
    let code = match cli.command {
        Command::Exec(args) => exec(&session, args).await,
        Command::Status(args) => status(&session, &args).await,
        Command::Watch(args) => watch_path(&session, &args).await,
    };
    session.close().await;
    code
}

fn default_identifier() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}:{}", host.trim(), std::process::id())
}

/// The signals `exec` passes on to CMD.
struct Forwarded {
    int: Signal,
    term: Signal,
    hup: Signal,
}

impl Forwarded {
    fn new() -> Forwarded {
        let on = |kind| signal(kind).expect("a signal handler");
        Forwarded { int: on(SignalKind::interrupt()), term: on(SignalKind::terminate()), hup: on(SignalKind::hangup()) }
    }

    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
        }
    }
}

async fn exec(session: &Session, args: ExecArgs) -> zoolock::Result<u8> {
    let identifier = args.identifier.unwrap_or_else(default_identifier);
    // A lock or a semaphore lease: `exec` needs only what every holder does.
    let hold: Box<dyn Holder> = match args.semaphore {
        Some(leases) => Box::new(Semaphore::new(session, &args.path, identifier, leases)?),
        None => {
            let kind = if args.read {
                Kind::Read
            } else if args.write {
                Kind::Write
            } else {
                Kind::Mutex
            };
            let config =
                LockConfig { identifier: identifier.into_bytes(), scheme: Scheme::Kazoo, ..LockConfig::default() };
            Box::new(Lock::new(session, &args.path, kind, config)?)
        }
    };
    let mut signals = Forwarded::new();
    let options = Acquire { timeout: args.timeout, lease: args.lease, ..Acquire::default() };
    // A signal while waiting ends the wait; the acquire, dropped, removes its node.
    let outcome = tokio::select! {
        outcome = hold.acquire_outcome(options) => outcome?,
        signal = signals.next() => return Ok(128 + signal as u8),
    };
    if outcome != Outcome::Acquired {
        let within = args.timeout.map_or_else(|| "the timeout".to_owned(), duration::show);
        eprintln!("zoolock: {} not acquired within {within}", args.path);
        return Ok(exit::TIMEOUT);
    }
    // Subscribed before CMD starts: a change from now on is seen.
    let mut states = hold.subscribe();
    if let LockState::Lost(reason) = *states.borrow_and_update() {
        eprintln!("zoolock: the hold on {} was lost ({reason:?}) before {} started", args.path, args.command[0]);
        return Ok(exit::LOST);
    }
    let (node, token) = (hold.node(), hold.fencing_token());
    let mut command = tokio::process::Command::new(&args.command[0]);
    command.args(&args.command[1..]);
    command.env("ZOOLOCK_NODE", node.unwrap_or_default());
    command.env("ZOOLOCK_FENCING_TOKEN", token.map(|t| t.to_string()).unwrap_or_default());
    // Its own process group: signals reach CMD and everything it started,
    // once each (a terminal's Ctrl-C reaches zoolock, which passes it on).
    command.process_group(0);
    let mut child = match command.spawn() {
        Ok(child) => child,
        Err(err) => {
            eprintln!("zoolock: cannot run {}: {err}", args.command[0]);
            let _ = hold.release().await;
            let missing = err.kind() == std::io::ErrorKind::NotFound;
            return Ok(if missing { exit::NOT_FOUND } else { exit::NOT_EXECUTABLE });
        }
    };
    let group = child.id().expect("a running child has an id") as i32;
    let suspended_at = |now: Instant| now + args.grace;
    let mut stop_at = (*states.borrow() == LockState::Suspended).then(|| suspended_at(Instant::now()));
    let why = loop {
        tokio::select! {
            status = child.wait() => {
                let _ = hold.release().await;
                let status = status.expect("waiting for CMD");
                return Ok(exit_status(status));
            }
            signal = signals.next() => send(group, signal),
            _ = sleep_until_some(stop_at) => break format!("suspended for longer than the grace period ({})", duration::show(args.grace)),
            changed = states.changed() => {
                if changed.is_err() {
                    break "its handle is gone".to_owned();
                }
                let state = *states.borrow_and_update();
                match state {
                    LockState::Held => stop_at = None,
                    LockState::Suspended => {
                        stop_at.get_or_insert_with(|| suspended_at(Instant::now()));
                    }
                    LockState::Lost(reason) => break format!("lost ({reason:?})"),
                    LockState::Released => break "released".to_owned(),
                }
            }
        }
    };
    eprintln!("zoolock: the hold on {} was {why}: stopping {}", args.path, args.command[0]);
    send(group, libc::SIGTERM);
    tokio::select! {
        _ = child.wait() => {}
        _ = tokio::time::sleep(args.kill_after) => {
            send(group, libc::SIGKILL);
            let _ = child.wait().await;
        }
    }
    let _ = hold.release().await;
    Ok(exit::LOST)
}

fn send(group: i32, signal: i32) {
    // SAFETY: killpg only sends a signal; the group is CMD's, which we started.
    unsafe {
        libc::killpg(group, signal);
    }
}

fn exit_status(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => code as u8,
        (None, Some(signal)) => 128u8.wrapping_add(signal as u8),
        (None, None) => exit::ERROR,
    }
}

async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

async fn status(session: &Session, args: &ShowArgs) -> zoolock::Result<u8> {
    let mut inspector = Inspector::new(session, &args.path)?;
    let bound = session.options().session_timeout;
    let participants =
        tokio::time::timeout(bound, inspector.next()).await.unwrap_or(Err(zoolock::Error::ConnectionLoss(bound)))?;
    if !inspector.exists() {
        return Ok(missing(&args.path));
    }
    print(&args.path, &participants, args.json);
    Ok(0)
}

async fn watch_path(session: &Session, args: &ShowArgs) -> zoolock::Result<u8> {
    let mut inspector = Inspector::new(session, &args.path)?;
    let mut signals = Forwarded::new();
    let mut first = true;
    loop {
        tokio::select! {
            participants = inspector.next() => {
                let participants = participants?;
                if first && !inspector.exists() {
                    return Ok(missing(&args.path));
                }
                first = false;
                print(&args.path, &participants, args.json);
            }
            _ = signals.next() => return Ok(0),
        }
    }
}

fn missing(path: &str) -> u8 {
    eprintln!("zoolock: {path}: no such node");
    exit::NO_PATH
}

fn kind_name(kind: ParticipantKind) -> &'static str {
    match kind {
        ParticipantKind::Lock => "lock",
        ParticipantKind::Read => "read",
        ParticipantKind::Write => "write",
        ParticipantKind::Lease => "lease",
    }
}

fn scheme_name(scheme: Option<Scheme>) -> &'static str {
    match scheme {
        Some(Scheme::Kazoo) => "kazoo",
        Some(Scheme::Curator) => "curator",
        None => "other",
    }
}

fn age(p: &Participant) -> Duration {
    SystemTime::now().duration_since(p.created).unwrap_or_default()
}

fn print(path: &str, participants: &[Participant], json: bool) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if json {
        let list: Vec<_> = participants
            .iter()
            .map(|p| {
                serde_json::json!({
                    "node": p.node,
                    "state": if p.holds { "holds" } else { "waits" },
                    "kind": kind_name(p.kind),
                    "identifier": p.identifier,
                    "session_id": format!("{:#x}", p.session_id),
                    "scheme": scheme_name(p.scheme),
                    "created_ms": p.created.duration_since(SystemTime::UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64),
                    "age_seconds": age(p).as_secs_f64(),
                    "fencing_token": p.fencing_token,
                })
            })
            .collect();
        let _ = writeln!(out, "{}", serde_json::json!({ "path": path, "participants": list }));
    } else if participants.is_empty() {
        let _ = writeln!(out, "{path}: no holders, no waiters");
    } else {
        let rows: Vec<[String; 8]> = participants
            .iter()
            .map(|p| {
                [
                    if p.holds { "holds" } else { "waits" }.to_owned(),
                    kind_name(p.kind).to_owned(),
                    p.identifier.clone(),
                    format!("{:#x}", p.session_id),
                    scheme_name(p.scheme).to_owned(),
                    format!("{:.1}s", age(p).as_secs_f64()),
                    p.fencing_token.to_string(),
                    p.node[p.node.rfind('/').map_or(0, |i| i + 1)..].to_owned(),
                ]
            })
            .collect();
        let header = ["STATE", "KIND", "IDENTIFIER", "SESSION", "SCHEME", "AGE", "TOKEN", "NODE"].map(String::from);
        let widths: Vec<usize> =
            (0..8).map(|i| rows.iter().chain([&header]).map(|r| r[i].chars().count()).max().unwrap_or(0)).collect();
        let _ = writeln!(out, "{path}");
        for row in std::iter::once(&header).chain(&rows) {
            let cells: Vec<String> = row.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
            let _ = writeln!(out, "{}", cells.join("  ").trim_end());
        }
    }
    let _ = out.flush();
}

//! `zoolock`: run a command while holding a ZooKeeper lock (`exec`), and
//! show who holds or waits on a lock path (`status`, `watch`). The lock
//! logic and the inspection live in the `zoolock` crate; this parses,
//! prints, and keeps CMD inside the hold ([`supervisor`]).

mod credentials;
mod duration;
mod exec;
mod show;
mod supervisor;

use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use zoolock::{Error, Kind, Session, SessionOptions};

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
    /// The hold was lost, or the server did not answer for --grace: CMD was stopped (EX_IOERR).
    pub const LOST: u8 = 74;
    /// The lock (or a lease) was not acquired within --timeout (EX_TEMPFAIL).
    pub const TIMEOUT: u8 = 75;
    /// CMD could not be run: not executable (as shells report).
    pub const NOT_EXECUTABLE: u8 = 126;
    /// CMD was not found (as shells report).
    pub const NOT_FOUND: u8 = 127;
}

/// The session timeout zoolock asks for unless told otherwise.
const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);

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
    /// How long the server keeps the session (and the lock) of a zoolock it
    /// no longer hears from [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, global = true)]
    session_timeout: Option<Duration>,
    /// How long to wait for a server to answer the first connect [default: 15s]
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
#[command(after_help = EXEC_SAFETY)]
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
    /// Stop CMD DURATION after acquiring, then let go of the hold
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    lease: Option<Duration>,
    /// The node's data, shown by `status` [default: HOST:PID]
    #[arg(long, value_name = "ID")]
    identifier: Option<String>,
    /// How long CMD goes on while the server does not answer zoolock (a
    /// restart shorter than that does not stop it) [default: half the session timeout]
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    grace: Option<Duration>,
    /// Time between SIGTERM and SIGKILL when stopping CMD
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, default_value = "5s")]
    kill_after: Duration,
    /// The command and its arguments, after `--`
    #[arg(last = true, required = true, value_name = "CMD")]
    command: Vec<String>,
}

const EXEC_SAFETY: &str = "\
CMD never outlives the hold. CMD runs in a process group of its own under a
supervisor process. With T the session timeout and t the time zoolock last
sent a request the server answered, CMD's group (and anything it left behind)
gets SIGTERM at t + GRACE and SIGKILL --kill-after later, and SIGKILL at
t + 3T/4 in any case, even if zoolock itself was killed or stopped. The
server cannot expire the session before t + T, so no other client holds the
lock while CMD runs. Hence GRACE is at most 3T/4 (at least T/5: two
renewals). Lost hold, --lease or released: SIGTERM, then SIGKILL after
--kill-after. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are passed
on to CMD; in a terminal, CMD gets the terminal (Ctrl-C, Ctrl-Z reach it).";

#[derive(Args)]
struct ShowArgs {
    /// The lock or semaphore path
    path: String,
    /// One JSON object per answer instead of a table
    #[arg(long)]
    json: bool,
}

fn main() -> ExitCode {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == supervisor::ARG) {
        return match supervisor::Plan::parse(&args[2..]) {
            Some(plan) => ExitCode::from(supervisor::run(plan)),
            None => ExitCode::from(exit::BAD_INPUT),
        };
    }
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

/// Checks what needs no server: the path, the flags, the credentials.
fn options(cli: &Cli) -> zoolock::Result<SessionOptions> {
    let path = match &cli.command {
        Command::Exec(args) => &args.path,
        Command::Status(args) | Command::Watch(args) => &args.path,
    };
    zoolock::validate_path(path)?;
    let session_timeout = cli.connection.session_timeout.unwrap_or(DEFAULT_SESSION_TIMEOUT);
    if let Command::Exec(ExecArgs { grace: Some(grace), .. }) = &cli.command {
        let most = supervisor::hard_limit(session_timeout);
        if *grace > most {
            return Err(Error::InvalidArgument(format!(
                "--grace {} is longer than 3/4 of the session timeout ({}): CMD is killed by then anyway, \
                 before the server may expire the session",
                duration::show(*grace),
                duration::show(most)
            )));
        }
    }
    let mut options = SessionOptions::new(&cli.connection.connect).session_timeout(session_timeout);
    if let Some(timeout) = cli.connection.connect_timeout {
        options = options.connect_timeout(timeout);
    }
    cli.connection.credentials.apply(options).map_err(Error::InvalidArgument)
}

async fn run(cli: Cli) -> zoolock::Result<u8> {
    let options = options(&cli)?;
    let session = Session::connect(options).await?;
    let code = match cli.command {
        Command::Exec(args) => {
            let kind = if args.read {
                Kind::Read
            } else if args.write {
                Kind::Write
            } else {
                Kind::Mutex
            };
            let exec = exec::Exec {
                path: args.path,
                timeout: args.timeout,
                kind,
                semaphore: args.semaphore,
                lease: args.lease,
                identifier: args.identifier,
                grace: args.grace,
                kill_after: args.kill_after,
                command: args.command,
            };
            exec::exec(&session, exec).await
        }
        Command::Status(args) => show::status(&session, &show::Show { path: args.path, json: args.json }).await,
        Command::Watch(args) => {
            show::watch(&session, &show::Show { path: args.path, json: args.json }, Box::pin(interrupted())).await
        }
    };
    session.close().await;
    code
}

/// Completes at the first SIGINT, SIGTERM or SIGHUP.
async fn interrupted() {
    use tokio::signal::unix::{signal, SignalKind};
    let on = |kind| signal(kind).expect("a signal handler");
    let (mut int, mut term, mut hup) =
        (on(SignalKind::interrupt()), on(SignalKind::terminate()), on(SignalKind::hangup()));
    tokio::select! {
        _ = int.recv() => {}
        _ = term.recv() => {}
        _ = hup.recv() => {}
    }
}

//! The command line: flags, help, and the exit codes, from one set of
//! annotated structs that also make the man page and the completions.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Parser, Subcommand, ValueEnum};
use zoolock::Scheme;

use crate::{credentials, duration};

/// Exit codes of `zoolock` itself; otherwise `exec` exits with CMD's own
/// status (128 + N when a signal N ended it, as shells report).
pub mod exit {
    /// Bad flags, path, identifier or connect string (sysexits' EX_USAGE).
    pub const BAD_INPUT: u8 = 64;
    /// `status` or `watch` of a path that does not exist (EX_NOINPUT).
    pub const NO_PATH: u8 = 66;
    /// No server answered within the connect timeout, or authentication failed (EX_UNAVAILABLE).
    pub const CONNECT: u8 = 69;
    /// Any other ZooKeeper error (EX_SOFTWARE).
    pub const ERROR: u8 = 70;
    /// The hold was lost, or the quorum did not confirm the session for --grace: CMD was stopped (EX_IOERR).
    pub const LOST: u8 = 74;
    /// The lock (or a lease) was not acquired within --timeout (EX_TEMPFAIL); -E changes it.
    pub const TIMEOUT: u8 = 75;
    /// CMD could not be run: not executable (as shells report).
    pub const NOT_EXECUTABLE: u8 = 126;
    /// CMD was not found (as shells report).
    pub const NOT_FOUND: u8 = 127;

    /// Every code with what it means, for `--help` and the man page.
    pub const TABLE: [(u8, &str); 8] = [
        (BAD_INPUT, "bad input: flags, path, identifier, connect string, config, a credential file others can read"),
        (NO_PATH, "status of a path that does not exist (watch waits for it)"),
        (CONNECT, "no server answered within the connect timeout, or authentication failed"),
        (ERROR, "any other ZooKeeper error"),
        (LOST, "the hold was lost, released, ran out (--lease) or unconfirmed for --grace: CMD was stopped"),
        (TIMEOUT, "not acquired within --timeout, or at once with -n (-E sets another code)"),
        (NOT_EXECUTABLE, "CMD could not be run"),
        (NOT_FOUND, "CMD was not found"),
    ];
}

/// The exit codes as `--help` lists them.
pub fn exit_codes() -> String {
    let mut text = String::from("Exit codes:\n  0-255  exec: CMD's own status (128 + N if signal N ended it)\n");
    for (code, meaning) in exit::TABLE {
        text.push_str(&format!("  {code:<5}  {meaning}\n"));
    }
    text
}

fn exec_help() -> String {
    format!("{EXEC_SAFETY}\n\n{}", exit_codes())
}

const EXEC_SAFETY: &str = "\
CMD never outlives the hold. CMD runs in a process group of its own under a
supervisor process. zoolock's session knows a time D before which no server
can have expired it, renewed through the ZooKeeper leader every T/7 (T: the
session timeout). With t the time of the latest renewal, CMD's group (and
anything it left behind) gets SIGTERM at t + GRACE and SIGKILL --kill-after
later, and SIGKILL at D in any case, even if zoolock itself was killed or
stopped, or its server cut off from the others. So no other client holds
the lock while CMD runs. GRACE is at least 2T/7 (two renewals), at most
3T/4. Lost hold, --lease or released: SIGTERM, then SIGKILL after
--kill-after. SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1 and SIGUSR2 are passed
on to CMD; in a terminal, CMD gets the terminal (Ctrl-C, Ctrl-Z reach it).";

#[derive(Parser)]
#[command(
    name = "zoolock",
    version,
    about = "Run commands under a ZooKeeper lock; show who holds and who waits",
    after_help = exit_codes(),
    args_override_self = true
)]
pub struct Cli {
    #[command(flatten)]
    pub connection: Connection,
    /// Progress on stderr: connecting, waiting behind whom, held with which token, suspended
    #[arg(short, long, global = true)]
    pub verbose: bool,
    /// Writes the man page or a shell's completions to stdout (for packages)
    #[arg(long, value_enum, value_name = "WHAT", hide = true)]
    pub generate: Option<Generate>,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Generate {
    Man,
    Bash,
    Zsh,
    Fish,
}

#[derive(Args)]
#[command(next_help_heading = "Connection")]
pub struct Connection {
    /// ZooKeeper servers and chroot: host:port[,host:port…][/chroot]
    #[arg(long, env = "ZOOLOCK_CONNECT", default_value = "127.0.0.1:2181", global = true)]
    pub connect: String,
    /// How long the server keeps the session (and the lock) of a zoolock it
    /// no longer hears from [default: 10s]
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, global = true)]
    pub session_timeout: Option<Duration>,
    /// How long to wait for a server to answer the first connect [default: 15s]
    #[arg(long, value_name = "DURATION", value_parser = duration::parse, global = true)]
    pub connect_timeout: Option<Duration>,
    /// A file of `key = value` lines for the connection and credentials (the
    /// long flags' names) [default: ~/.config/zoolock/zoolock.conf, then /etc/zoolock/zoolock.conf]
    #[arg(long, env = crate::config::CONFIG_VAR, value_name = "FILE", global = true)]
    pub config: Option<PathBuf>,
    #[command(flatten)]
    pub credentials: credentials::Credentials,
}

#[derive(Subcommand)]
pub enum Command {
    /// Run CMD while holding the lock at PATH; stop it if the hold is lost
    Exec(ExecArgs),
    /// Hold the lock at PATH until interrupted; print the fencing token
    Hold(HoldCommand),
    /// Show the holders, then the waiters, of PATH in queue order
    Status(ShowArgs),
    /// Show the holders and waiters of PATH again at every change, until interrupted
    Watch(ShowArgs),
}

/// What to hold and how long to wait for it: `exec` and `hold` share them.
#[derive(Args)]
pub struct HoldArgs {
    /// The lock path (a semaphore's path with --semaphore)
    pub path: String,
    /// Give up after DURATION without the lock (exit 75, or -E's code); 0 tries once
    #[arg(short = 'w', long, visible_alias = "wait", value_name = "DURATION", value_parser = duration::parse)]
    pub timeout: Option<Duration>,
    /// Fail at once if the lock is held (as --timeout 0)
    #[arg(short = 'n', long, visible_alias = "nb", conflicts_with = "timeout")]
    pub nonblock: bool,
    /// Say nothing when the lock is not acquired (-n, -w): cron mails what a job prints
    #[arg(short = 'q', long)]
    pub quiet: bool,
    /// The exit code when the lock is not acquired (-n, -w)
    #[arg(short = 'E', long, value_name = "CODE", default_value_t = exit::TIMEOUT)]
    pub conflict_exit_code: u8,
    /// Take a read lock: shared with other readers
    #[arg(short = 's', long, visible_alias = "shared", conflicts_with_all = ["write", "semaphore"])]
    pub read: bool,
    /// Take a write lock: excludes readers and writers
    #[arg(short = 'x', visible_short_alias = 'e', long, visible_alias = "exclusive", conflicts_with = "semaphore")]
    pub write: bool,
    /// Take one of N leases of a kazoo semaphore instead of a lock
    #[arg(short = 'S', long, value_name = "N")]
    pub semaphore: Option<u32>,
    /// The node's data, shown by `status` [default: HOST:PID]
    #[arg(short = 'i', long, value_name = "ID")]
    pub identifier: Option<String>,
    /// Name the lock's nodes as kazoo, curator or distributedlock (.NET's; mutexes only) do
    #[arg(long, value_name = "NAME", default_value = "kazoo", value_parser = scheme, conflicts_with = "semaphore")]
    pub scheme: Scheme,
}

fn scheme(text: &str) -> Result<Scheme, String> {
    let names = || Scheme::ALL.map(Scheme::name).join(", ");
    Scheme::ALL.into_iter().find(|s| s.name() == text).ok_or_else(|| format!("one of {}", names()))
}

#[derive(Args)]
pub struct HoldCommand {
    #[command(flatten)]
    pub hold: HoldArgs,
    /// Also let go when standard input closes: a coprocess of a shell
    /// script holds the lock for the rest of the script (flock's fd form)
    #[arg(long)]
    pub until_eof: bool,
}

#[derive(Args)]
#[command(after_help = exec_help())]
pub struct ExecArgs {
    #[command(flatten)]
    pub hold: HoldArgs,
    /// Stop CMD DURATION after acquiring, then let go of the hold
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    pub lease: Option<Duration>,
    /// How long CMD goes on while the quorum does not confirm zoolock's
    /// session (a restart shorter than that does not stop it) [default: a
    /// third of the session timeout]
    #[arg(long, value_name = "DURATION", value_parser = duration::parse)]
    pub grace: Option<Duration>,
    /// Time between SIGTERM and SIGKILL when stopping CMD
    #[arg(short = 'k', long, value_name = "DURATION", value_parser = duration::parse, default_value = "5s")]
    pub kill_after: Duration,
    /// Run this command with `sh -c` instead of CMD
    #[arg(short = 'c', long = "command", id = "shell", value_name = "COMMAND", required_unless_present = "command")]
    pub shell: Option<String>,
    /// The command and its arguments, after `--`
    #[arg(last = true, value_name = "CMD", conflicts_with = "shell")]
    pub command: Vec<String>,
}

#[derive(Args)]
pub struct ShowArgs {
    /// The lock or semaphore path
    pub path: String,
    /// One JSON object per answer instead of a table
    #[arg(short = 'j', long)]
    pub json: bool,
}

impl Command {
    pub fn path(&self) -> &str {
        match self {
            Command::Exec(args) => &args.hold.path,
            Command::Hold(args) => &args.hold.path,
            Command::Status(args) | Command::Watch(args) => &args.path,
        }
    }
}

impl HoldArgs {
    /// --timeout, or 0 with -n.
    pub fn wait(&self) -> Option<Duration> {
        if self.nonblock {
            Some(Duration::ZERO)
        } else {
            self.timeout
        }
    }
}

impl ExecArgs {
    /// CMD's argv: `sh -c COMMAND`, or the words after `--`.
    pub fn argv(&self) -> Vec<String> {
        match &self.shell {
            Some(shell) => vec!["sh".into(), "-c".into(), shell.clone()],
            None => self.command.clone(),
        }
    }
}

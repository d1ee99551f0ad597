//! `zoolock`: run a command while holding a ZooKeeper lock (`exec`), hold
//! one until interrupted (`hold`), and show who holds or waits on a lock
//! path (`status`, `watch`). The lock logic and the inspection live in the
//! `zoolock` crate; this parses, prints, and keeps CMD inside the hold
//! ([`supervisor`]).

mod args;
mod config;
mod credentials;
mod duration;
mod exec;
mod progress;
mod show;
mod supervisor;

use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

use args::{exit, Cli, Command, Generate};
use clap::{CommandFactory, Parser};
use progress::Progress;
use zoolock::{Error, Kind, Session, SessionOptions};

/// The session timeout zoolock asks for unless told otherwise.
const DEFAULT_SESSION_TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let argv: Vec<OsString> = std::env::args_os().collect();
    if argv.get(1).is_some_and(|arg| arg == supervisor::ARG) {
        return match supervisor::Plan::parse(&argv[2..]) {
            Some(plan) => ExitCode::from(supervisor::run(plan)),
            None => ExitCode::from(exit::BAD_INPUT),
        };
    }
    let cli = match parse(argv) {
        Ok(cli) => cli,
        Err(code) => return ExitCode::from(code),
    };
    if let Some(what) = cli.generate {
        generate(what);
        return ExitCode::SUCCESS;
    }
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

/// The command line, with the config file's settings before it (so that
/// flags override them); an exit code once help, the version or an error
/// has been printed.
fn parse(argv: Vec<OsString>) -> Result<Cli, u8> {
    let printed = |err: clap::Error| {
        let _ = err.print();
        if err.use_stderr() {
            exit::BAD_INPUT
        } else {
            0
        }
    };
    let mut first = Cli::try_parse_from(&argv).map_err(printed)?;
    let auth_on_command_line = !first.connection.credentials.auth.is_empty();
    first.connection.credentials.auth_on_command_line = auth_on_command_line;
    let Some(file) = config::find(first.connection.config.as_deref()) else { return Ok(first) };
    let settings = config::flags(&file).map_err(|err| {
        eprintln!("zoolock: {err}");
        exit::BAD_INPUT
    })?;
    let argv = argv[..1].iter().cloned().chain(settings).chain(argv[1..].iter().cloned());
    let mut cli = Cli::try_parse_from(argv).map_err(printed)?;
    cli.connection.credentials.auth_on_command_line = auth_on_command_line;
    Ok(cli)
}

fn generate(what: Generate) {
    use clap_complete::Shell;
    let mut command = Cli::command();
    let mut out = std::io::stdout().lock();
    let shell = match what {
        Generate::Man => return man(command, &mut out).expect("stdout"),
        Generate::Bash => Shell::Bash,
        Generate::Zsh => Shell::Zsh,
        Generate::Fish => Shell::Fish,
    };
    clap_complete::generate(shell, &mut command, "zoolock", &mut out);
}

/// One page: zoolock's, then each command's synopsis, options and notes
/// (the connection and credential flags once, in zoolock's part).
fn man(mut command: clap::Command, out: &mut dyn std::io::Write) -> std::io::Result<()> {
    command.build();
    let mut text = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut text)?;
    let mut page = String::from_utf8_lossy(&text).replace(".SH EXTRA", ".SH \"EXIT STATUS\"");
    let shared: Vec<String> = command
        .get_arguments()
        .filter_map(|arg| arg.get_help_heading())
        .map(|heading| format!(".SH {}", roff_heading(heading)))
        .collect();
    for sub in command.get_subcommands().filter(|sub| !sub.is_hide_set() && sub.get_name() != "help") {
        let part = clap_mangen::Man::new(sub.clone());
        let mut text = Vec::new();
        part.render_synopsis_section(&mut text)?;
        part.render_options_section(&mut text)?;
        if sub.get_after_help().is_some() {
            part.render_extra_section(&mut text)?;
        }
        let text = String::from_utf8_lossy(&text).into_owned();
        let about = sub.get_about().map(|about| about.to_string()).unwrap_or_default();
        page.push_str(&format!(".SH \"ZOOLOCK {}\"\n{about}\n", sub.get_name().to_uppercase()));
        for section in text.split_inclusive('\n').fold(Vec::<String>::new(), |mut sections, line| {
            if line.starts_with(".SH") || sections.is_empty() {
                sections.push(String::new());
            }
            sections.last_mut().expect("one").push_str(line);
            sections
        }) {
            if !shared.iter().any(|heading| section.starts_with(&format!("{heading}\n"))) {
                let section = section.replacen(".SH SYNOPSIS", ".SS Synopsis", 1);
                let section = section.replacen(".SH OPTIONS", ".SS Options", 1).replacen(".SH EXTRA", ".SS Notes", 1);
                page.push_str(&section);
            }
        }
    }
    // One page is shipped: its commands are sections of it, not pages of their own.
    for sub in command.get_subcommands() {
        let name = sub.get_name();
        let shown = format!("\\fBzoolock {name}\\fR (below)");
        page = page.replace(&format!("zoolock\\-{name}(1)"), &shown);
    }
    page.push_str(&MAN_SECTIONS.replace("{CONFIG}", config::CONFIG_VAR));
    out.write_all(roff_ascii(&page).as_bytes())
}

/// What the parser's definitions do not say: the environment (zoolock's and
/// CMD's), the files, examples.
const MAN_SECTIONS: &str = r#".SH ENVIRONMENT
.TP
\fBZOOLOCK_CONNECT\fR
The servers and chroot, as \fB\-\-connect\fR.
.TP
\fB{CONFIG}\fR
The config file, as \fB\-\-config\fR.
.TP
\fBZOOLOCK_AUTH\fR
Credentials, one SCHEME:CREDENTIAL per line (not in the process list, as \fB\-\-auth\fR is).
.TP
\fBZOOLOCK_KEYFILE_PASSWORD\fR, \fBZOOLOCK_SASL_PASSWORD\fR
The password of an encrypted \fB\-\-keyfile\fR; the SASL password.
.PP
CMD (\fBexec\fR) also gets:
.TP
\fBZOOLOCK_NODE\fR
The lock node it holds with (its full path).
.TP
\fBZOOLOCK_FENCING_TOKEN\fR
The hold's fencing token: a number that grows with each holder; a resource that keeps the largest token it has seen refuses a stale holder's writes.
.SH FILES
.TP
\fI~/.config/zoolock/zoolock.conf\fR, \fI/etc/zoolock/zoolock.conf\fR
The config file read when \fB\-\-config\fR and \fB{CONFIG}\fR name none (the first that exists): \fBkey = value\fR lines, the keys being the long flags' names; credentials in it need mode 600.
.SH EXAMPLES
Run a job on one machine at a time, from cron, quietly skipping a run while another holds:
.PP
.nf
.RS
*/5 * * * * zoolock exec \-q \-n /locks/report \-\- /usr/local/bin/report
.RE
.fi
.PP
Wait up to a minute, then run a shell command under the lock:
.PP
.nf
.RS
zoolock exec \-w 1m /locks/migrate \-c 'migrate && notify'
.RE
.fi
.PP
Show who holds and who waits, then follow it:
.PP
.nf
.RS
zoolock status /locks/migrate
zoolock watch /locks/migrate \-\-json
.RE
.fi
"#;

/// roff wants ASCII: every other character as its code point's escape (`…` is `\[u2026]`).
fn roff_ascii(page: &str) -> String {
    page.chars().map(|c| if c.is_ascii() { c.to_string() } else { format!("\\[u{:04X}]", c as u32) }).collect()
}

/// A section heading as clap_mangen writes it: upper case, quoted if it has spaces.
fn roff_heading(heading: &str) -> String {
    let upper = heading.to_uppercase();
    if upper.contains(' ') {
        format!("\"{upper}\"")
    } else {
        upper
    }
}

/// The exit code of each kind: every kind named, so that a new one fails
/// to compile here until it is given one (sysexits, as flock's).
fn error_code(err: &Error) -> u8 {
    use zoolock::ErrorKind as Kind;
    match err.kind() {
        Kind::InvalidPath
        | Kind::InvalidConnectString
        | Kind::InvalidArgument
        | Kind::InconsistentLeases
        | Kind::MixedSchemes
        | Kind::NoChroot => exit::BAD_INPUT,
        Kind::ConnectTimeout | Kind::AuthFailed => exit::CONNECT,
        Kind::Tls
        | Kind::ConnectionLoss
        | Kind::OutcomeUnknown
        | Kind::Cancelled
        | Kind::Closed
        | Kind::Forked
        | Kind::NoAuth
        | Kind::ZooKeeper
        | Kind::NotOwner
        | Kind::NoNode
        | Kind::NodeExists
        | Kind::BadVersion
        | Kind::NotEmpty
        | Kind::SessionExpired
        | Kind::NotHeld
        | Kind::NoChildrenForEphemerals
        | Kind::InvalidAcl
        | Kind::RuntimeGone
        | Kind::BadData
        | Kind::BadArguments => exit::ERROR,
    }
}

/// Checks what needs no server: the path, the flags, the credentials.
fn options(connection: &args::Connection, command: &Command) -> zoolock::Result<SessionOptions> {
    zoolock::validate_path(command.path())?;
    let session_timeout = connection.session_timeout.unwrap_or(DEFAULT_SESSION_TIMEOUT);
    if let Command::Exec(args::ExecArgs { grace: Some(grace), .. }) = command {
        let most = supervisor::most_grace(session_timeout);
        if *grace > most {
            return Err(Error::InvalidArgument(format!(
                "--grace {} is longer than 3/4 of the session timeout ({}): CMD is killed by then anyway, \
                 before a server may expire the session",
                duration::show(*grace),
                duration::show(most)
            )));
        }
    }
    let mut options = SessionOptions::new(&connection.connect).session_timeout(session_timeout);
    if let Some(timeout) = connection.connect_timeout {
        options = options.connect_timeout(timeout);
    }
    connection.credentials.apply(options).map_err(Error::InvalidArgument)
}

async fn run(cli: Cli) -> zoolock::Result<u8> {
    let Some(command) = cli.command else {
        eprintln!("zoolock: a command is needed: exec, hold, status or watch (see --help)");
        return Ok(exit::BAD_INPUT);
    };
    let mut options = options(&cli.connection, &command)?;
    // -w and -n count the connect too: a lock that cannot be had in time
    // because no server answers is not had in time (issue 35).
    let started = std::time::Instant::now();
    let wait = match &command {
        Command::Exec(args) => args.hold.wait(),
        Command::Hold(args) => args.hold.wait(),
        Command::Status(_) | Command::Watch(_) => None,
    };
    if let Some(wait) = wait {
        options = options.connect_within(wait);
    }
    let left = |mut hold: exec::Hold| {
        hold.connecting = started.elapsed();
        hold
    };
    let progress = Progress::new(cli.verbose);
    progress.say(format_args!("connecting to {}", options.connect));
    let session = Session::connect(options).await?;
    progress.say(format_args!("connected: session {:#x}", session.status().session_id));
    let code = match command {
        Command::Exec(args) => {
            let argv = args.argv();
            let exec = exec::Exec {
                hold: left(hold_of(args.hold)),
                lease: args.lease,
                grace: args.grace,
                kill_after: args.kill_after,
                command: argv,
            };
            exec::exec(&session, exec, &progress).await
        }
        Command::Hold(args) => exec::hold(&session, left(hold_of(args.hold)), args.until_eof, &progress).await,
        Command::Status(args) => show::status(&session, &show::Show { path: args.path, json: args.json }).await,
        Command::Watch(args) => {
            show::watch(&session, &show::Show { path: args.path, json: args.json }, Box::pin(interrupted())).await
        }
    };
    session.close().await;
    code
}

fn hold_of(args: args::HoldArgs) -> exec::Hold {
    let kind = if args.read {
        Kind::Read
    } else if args.write {
        Kind::Write
    } else {
        Kind::Mutex
    };
    exec::Hold {
        timeout: args.wait(),
        connecting: Duration::ZERO,
        conflict_exit_code: args.conflict_exit_code,
        quiet: args.quiet,
        path: args.path,
        kind,
        semaphore: args.semaphore,
        identifier: args.identifier,
        scheme: args.scheme,
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::FromArgMatches;

    #[test]
    fn the_definitions_are_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn config_settings_come_before_the_command_line() {
        let argv = ["zoolock", "--session-timeout", "5s", "--session-timeout", "7s", "status", "/a"];
        let cli = Cli::from_arg_matches(&Cli::command().get_matches_from(argv)).unwrap();
        assert_eq!(cli.connection.session_timeout, Some(Duration::from_secs(7)));
    }
}

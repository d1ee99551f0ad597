//! `zoolock exec`, zoolock's side (the *keeper*): take the hold, pass each
//! confirmation of the session by the quorum on to the supervisor, pass
//! signals on, and order CMD stopped when the hold ends. CMD itself runs under the
//! supervisor (see [`crate::supervisor`] for the lease and its timing).
//! `zoolock hold` takes the hold the same way and keeps it until interrupted.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::unix::pipe;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::watch;
use tokio::time::{sleep_until, Instant};
use zoolock::{
    boot_clock, Acquire, Confirmed, Holder, Kind, Lock, LockConfig, LockState, Outcome, Scheme, Semaphore, Session,
};

use crate::args::exit;
use crate::duration::show;
use crate::progress::Progress;
use crate::supervisor::{self, End, Order, Plan, Report};

/// What to hold, and how long to wait for it.
pub struct Hold {
    pub path: String,
    /// `Some(0)`: try once.
    pub timeout: Option<Duration>,
    /// Spent connecting: the acquire waits what is left of `timeout`.
    pub connecting: Duration,
    /// The exit code when not acquired in time.
    pub conflict_exit_code: u8,
    /// Nothing said when not acquired in time.
    pub quiet: bool,
    pub kind: Kind,
    pub semaphore: Option<u32>,
    pub identifier: Option<String>,
    pub scheme: Scheme,
}

/// What `exec` was asked to do.
pub struct Exec {
    pub hold: Hold,
    pub lease: Option<Duration>,
    /// `None`: a third of the session timeout.
    pub grace: Option<Duration>,
    pub kill_after: Duration,
    pub command: Vec<String>,
}

/// The signals zoolock passes on to CMD's group; SIGCONT continues CMD
/// after a job-control stop.
struct Forwarded {
    int: Signal,
    term: Signal,
    hup: Signal,
    quit: Signal,
    usr1: Signal,
    usr2: Signal,
    cont: Signal,
}

impl Forwarded {
    fn new() -> Forwarded {
        let on = |kind| signal(kind).expect("a signal handler");
        Forwarded {
            int: on(SignalKind::interrupt()),
            term: on(SignalKind::terminate()),
            hup: on(SignalKind::hangup()),
            quit: on(SignalKind::quit()),
            usr1: on(SignalKind::user_defined1()),
            usr2: on(SignalKind::user_defined2()),
            cont: on(SignalKind::from_raw(libc::SIGCONT)),
        }
    }

    async fn next(&mut self) -> i32 {
        tokio::select! {
            _ = self.int.recv() => libc::SIGINT,
            _ = self.term.recv() => libc::SIGTERM,
            _ = self.hup.recv() => libc::SIGHUP,
            _ = self.quit.recv() => libc::SIGQUIT,
            _ = self.usr1.recv() => libc::SIGUSR1,
            _ = self.usr2.recv() => libc::SIGUSR2,
            _ = self.cont.recv() => libc::SIGCONT,
        }
    }
}

fn default_identifier() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    format!("{}:{}", host.trim(), std::process::id())
}

/// The session's confirmation, if it holds now.
fn confirmed(session: &Session) -> Option<Confirmed> {
    Some(session.confirmed_until()).filter(|c| c.until > boot_clock())
}

/// Passes each new confirmation of the session on to the supervisor while
/// the hold is held; never ends. Looks twice per renewal of the session's.
async fn renew(session: Session, states: watch::Receiver<LockState>, first: Confirmed, orders: Arc<Orders>) {
    let every = session.options().session_timeout / 14;
    let mut passed = first;
    loop {
        tokio::time::sleep(every).await;
        match confirmed(&session) {
            Some(now) if now != passed && *states.borrow() == LockState::Held => {
                orders.send(Order::Renewed { last: now.last, until: now.until });
                passed = now;
            }
            _ => {}
        }
    }
}

/// The write end of the orders pipe. Never blocks: a supervisor that does
/// not read (stopped) loses renewals, which only makes it stop CMD sooner.
struct Orders(pipe::Sender);

impl Orders {
    fn send(&self, order: Order) {
        let _ = self.0.try_write(&order.encode());
    }
}

/// A pipe whose both ends are close-on-exec; the child's end is passed on explicitly.
fn pipe_pair() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two new descriptors, which we own from here on.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    use std::os::fd::FromRawFd;
    // SAFETY: just opened, owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

/// The first of stdin, stdout and stderr that is zoolock's controlling
/// terminal (tcgetpgrp answers only for that): the terminal CMD is given
/// whenever zoolock's job is in its foreground.
fn job_terminal() -> Option<RawFd> {
    // SAFETY: isatty/tcgetpgrp only read.
    (0..3).find(|&fd| unsafe { libc::isatty(fd) == 1 && libc::tcgetpgrp(fd) > 0 })
}

/// Whether zoolock's job is in its terminal's foreground now.
fn in_foreground() -> bool {
    // SAFETY: tcgetpgrp/getpgrp only read.
    job_terminal().is_some_and(|fd| unsafe { libc::tcgetpgrp(fd) == libc::getpgrp() })
}

/// Whether zoolock's process group is orphaned: no parent in the same
/// session (a shell) that could continue it after a stop.
fn orphaned() -> bool {
    // SAFETY: getppid/getsid/getpgid/getpgrp only read.
    unsafe {
        let parent = libc::getppid();
        libc::getsid(parent) != libc::getsid(0) || libc::getpgid(parent) == libc::getpgrp()
    }
}

/// Takes the hold: the holder, or the exit code to end with (not acquired
/// in time, or a signal while waiting).
async fn acquire(
    session: &Session,
    args: &Hold,
    signals: &mut Forwarded,
    progress: &Progress,
) -> zoolock::Result<Result<Box<dyn Holder>, u8>> {
    let identifier = args.identifier.clone().unwrap_or_else(default_identifier);
    // A lock or a semaphore lease: `exec` needs only what every holder does.
    let hold: Box<dyn Holder> = match args.semaphore {
        Some(leases) => Box::new(Semaphore::new(session, &args.path, identifier, leases)?),
        None => {
            let config =
                LockConfig { identifier: identifier.into_bytes(), scheme: args.scheme, ..LockConfig::default() };
            Box::new(Lock::new(session, &args.path, args.kind, config)?)
        }
    };
    let left = args.timeout.map(|wait| wait.saturating_sub(args.connecting));
    let options = Acquire { timeout: left, ..Acquire::default() };
    // A signal while waiting ends the wait; the acquire, dropped, removes its node.
    let outcome = tokio::select! {
        outcome = hold.acquire_outcome(options) => outcome?,
        signal = signals.next() => return Ok(Err(128 + signal as u8)),
        () = progress.queue(session, &args.path) => unreachable!("never completes"),
    };
    if outcome != Outcome::Acquired {
        let within = match args.timeout {
            Some(Duration::ZERO) => "at once".to_owned(),
            Some(timeout) => format!("within {}", show(timeout)),
            None => "within the timeout".to_owned(),
        };
        if !args.quiet {
            eprintln!("zoolock: {} not acquired {within}", args.path);
        }
        return Ok(Err(args.conflict_exit_code));
    }
    let token = hold.fencing_token().map_or_else(String::new, |t| t.to_string());
    progress.say(format_args!("acquired {}: token {token}, node {}", args.path, hold.node().unwrap_or_default()));
    Ok(Ok(hold))
}

/// `zoolock hold`: holds until SIGINT, SIGTERM or SIGHUP (exit 0) or until
/// the hold is lost (exit 74); prints the fencing token once held.
pub async fn hold(session: &Session, args: Hold, until_eof: bool, progress: &Progress) -> zoolock::Result<u8> {
    let mut signals = Forwarded::new();
    let mut stdin_closed = if until_eof { Some(stdin_closed()) } else { None };
    let hold = match acquire(session, &args, &mut signals, progress).await? {
        Ok(hold) => hold,
        Err(code) => return Ok(code),
    };
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}", hold.fencing_token().unwrap_or_default());
        let _ = out.flush();
    }
    let mut states = hold.subscribe();
    let code = loop {
        tokio::select! {
            signal = signals.next() => match signal {
                libc::SIGINT | libc::SIGTERM | libc::SIGHUP => break 0,
                _ => {}
            },
            changed = states.changed() => match changed.map(|()| *states.borrow_and_update()) {
                Ok(LockState::Lost(reason)) => {
                    eprintln!("zoolock: the hold on {} was lost ({reason:?})", args.path);
                    break exit::LOST;
                }
                Ok(state) => say_state(progress, &args.path, state),
                Err(_) => break exit::LOST,
            },
            _ = async { stdin_closed.as_mut().expect("only with --until-eof").await }, if stdin_closed.is_some() => break 0,
        }
    };
    let _ = hold.release().await;
    progress.say(format_args!("released {}", args.path));
    Ok(code)
}

/// Completes when standard input reaches its end (or fails). A thread of
/// its own: a blocking read cannot be cancelled, and the process's exit ends it.
fn stdin_closed() -> tokio::sync::oneshot::Receiver<()> {
    let (closed, heard) = tokio::sync::oneshot::channel();
    std::thread::spawn(move || {
        use std::io::Read;
        let mut stdin = std::io::stdin().lock();
        let mut buffer = [0u8; 512];
        while matches!(stdin.read(&mut buffer), Ok(read) if read > 0) {}
        let _ = closed.send(());
    });
    heard
}

fn say_state(progress: &Progress, path: &str, state: LockState) {
    match state {
        LockState::Suspended => progress.say(format_args!("the connection is down: the hold on {path} is suspended")),
        LockState::Held => progress.say(format_args!("reconnected: holding {path} again")),
        _ => {}
    }
}

pub async fn exec(session: &Session, args: Exec, progress: &Progress) -> zoolock::Result<u8> {
    let mut signals = Forwarded::new();
    let hold = match acquire(session, &args.hold, &mut signals, progress).await? {
        Ok(hold) => hold,
        Err(code) => return Ok(code),
    };
    // --lease is kept here, not by the hold: CMD is stopped first, then released.
    let lease_end = args.lease.map(|lease| Instant::now() + lease);
    let mut states = hold.subscribe();
    let node = hold.node().unwrap_or_default();
    // The quorum's confirmation of the session, before CMD starts.
    let mut status = session.subscribe();
    let first = loop {
        if let Some(first) = confirmed(session).filter(|_| *states.borrow() == LockState::Held) {
            break first;
        }
        tokio::select! {
            _ = states.changed() => {}
            _ = status.changed() => {}
            signal = signals.next() => {
                let _ = hold.release().await;
                return Ok(128 + signal as u8);
            }
        }
        match *states.borrow() {
            LockState::Lost(reason) => {
                eprintln!(
                    "zoolock: the hold on {} was lost ({reason:?}) before {} started",
                    args.hold.path, args.command[0]
                );
                return Ok(exit::LOST);
            }
            LockState::Released => return Ok(exit::LOST),
            _ => {}
        }
    };
    let session_timeout = session.options().session_timeout;
    let grace = args.grace.unwrap_or(supervisor::default_grace(session_timeout));
    let grace = grace.max(supervisor::least_grace(session_timeout));
    let terminal = job_terminal();
    let plan = |orders, reports| Plan {
        orders,
        reports,
        last: first.last,
        until: first.until,
        grace: grace.as_nanos() as u64,
        kill_after: args.kill_after.as_nanos() as u64,
        terminal,
        command: args.command.iter().map(Into::into).collect(),
    };
    let token = hold.fencing_token().map(|t| t.to_string()).unwrap_or_default();
    // Whatever CMD leaves behind comes to us if the supervisor dies, so that
    // it can be killed before the release.
    // SAFETY: prctl on this process.
    unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) };
    let (mut supervisor, orders, mut reports) = match supervise(plan, &node, &token) {
        Ok(supervision) => supervision,
        Err(err) => {
            eprintln!("zoolock: cannot start the supervisor of {}: {err}", args.command[0]);
            let _ = hold.release().await;
            return Ok(exit::ERROR);
        }
    };
    let renewal = tokio::spawn(renew(session.clone(), states.clone(), first, orders.clone()));

    let (mut group, mut suspended, mut why) = (None, false, None::<String>);
    // How long the job was stopped (Ctrl-Z), the longest time: past --grace,
    // that, not the quorum, is why CMD was stopped.
    let (mut stopped_at, mut longest_stop) = (None::<std::time::Instant>, Duration::ZERO);
    let stop = |why: &mut Option<String>, reason: String| {
        if why.is_none() {
            eprintln!("zoolock: the hold on {} {reason}: stopping {}", args.hold.path, args.command[0]);
            orders.send(Order::Stop);
            *why = Some(reason);
        }
    };
    let end = loop {
        tokio::select! {
            report = reports.recv() => match report {
                Some(Report::Started(pid)) => {
                    progress.say(format_args!("started {} as process {pid}", args.command[0]));
                    group = Some(pid);
                }
                // A read or write of the terminal while zoolock's job is in the
                // foreground (a background job brought back by `fg` before CMD
                // read): the terminal is CMD's, handed over with the continue.
                Some(Report::Suspended(libc::SIGTTIN | libc::SIGTTOU)) if in_foreground() => {
                    orders.send(Order::Continue);
                }
                // Stopped as a job: as the shell expects of a job whose command stopped.
                Some(Report::Suspended(signal)) if !orphaned() => {
                    suspended = true;
                    stopped_at = Some(std::time::Instant::now());
                    // The shell says "Stopped (tty input)" for SIGTTIN, as for flock's job.
                    let signal = if matches!(signal, libc::SIGTTIN | libc::SIGTTOU) { signal } else { libc::SIGTSTP };
                    // SAFETY: raise only sends a signal to this process.
                    unsafe { libc::raise(signal) };
                }
                // A read or write of the terminal from an orphaned job: continued, it
                // would only stop again, and stopped it would hold the lock for good.
                Some(Report::Suspended(libc::SIGTTIN | libc::SIGTTOU)) => {
                    stop(&mut why, "cannot be continued: its command stopped on the terminal, and no shell can continue it".into());
                }
                // No shell could continue us: the kernel would drop SIGTSTP, so CMD goes on.
                Some(Report::Suspended(_)) => orders.send(Order::Continue),
                Some(Report::Ended(end)) => break Some(end),
                None => break None,
            },
            signal = signals.next() => match signal {
                libc::SIGCONT if suspended => {
                    suspended = false;
                    longest_stop = longest_stop.max(stopped_at.take().map_or(Duration::ZERO, |at| at.elapsed()));
                    orders.send(Order::Continue);
                }
                libc::SIGCONT => {}
                signal => orders.send(Order::Signal(signal)),
            },
            _ = sleep_until_some(lease_end), if why.is_none() => {
                stop(&mut why, format!("reached its --lease of {}", show(args.lease.unwrap_or_default())));
            }
            changed = states.changed(), if why.is_none() => match changed.map(|()| *states.borrow_and_update()) {
                Ok(LockState::Lost(reason)) => stop(&mut why, format!("was lost ({reason:?})")),
                Ok(LockState::Released) => stop(&mut why, "was released".into()),
                Ok(state) => say_state(progress, &args.hold.path, state),
                Err(_) => stop(&mut why, "handle is gone".into()),
            },
        }
    };
    renewal.abort();
    let _ = supervisor.wait().await;
    // The stop may be going on still: the report can come before the SIGCONT.
    let stopped_for = longest_stop.max(stopped_at.map_or(Duration::ZERO, |at| at.elapsed()));
    let code = match end {
        Some(End::Exited(status)) => status,
        Some(End::Stopped) => exit::LOST,
        Some(End::Unrenewed) if stopped_for >= grace => {
            eprintln!(
                "zoolock: its job was stopped for {}, longer than --grace ({}): nothing renewed the hold, so {} was stopped",
                show(stopped_for),
                show(grace),
                args.command[0]
            );
            exit::LOST
        }
        Some(End::Unrenewed) => {
            eprintln!(
                "zoolock: the quorum did not confirm the session for {} (--grace): {} was stopped",
                show(grace),
                args.command[0]
            );
            exit::LOST
        }
        Some(End::NotStarted { missing }) => {
            if missing {
                exit::NOT_FOUND
            } else {
                exit::NOT_EXECUTABLE
            }
        }
        None => {
            // The supervisor died (killed?): CMD's first process died with it
            // (PR_SET_PDEATHSIG); the rest of its group goes now, and what
            // left the group came to us (a child subreaper): all of it is
            // gone before the release.
            supervisor::kill_all(group.unwrap_or(0));
            eprintln!("zoolock: the supervisor of {} died: every process it left was killed", args.command[0]);
            exit::LOST
        }
    };
    let _ = hold.release().await;
    progress.say(format_args!("released {}", args.hold.path));
    Ok(code)
}

type Supervision = (tokio::process::Child, Arc<Orders>, tokio::sync::mpsc::UnboundedReceiver<Report>);

/// Starts `zoolock __supervise …` in a process group of its own, with the
/// read end of the orders pipe and the write end of the reports pipe.
fn supervise(plan: impl FnOnce(RawFd, RawFd) -> Plan, node: &str, token: &str) -> std::io::Result<Supervision> {
    let (orders_read, orders_write) = pipe_pair()?;
    let (reports_read, reports_write) = pipe_pair()?;
    let passed = [orders_read.as_raw_fd(), reports_write.as_raw_fd()];
    let mut command = tokio::process::Command::new("/proc/self/exe");
    command.arg0("zoolock").args(plan(passed[0], passed[1]).args()).process_group(0);
    command.env("ZOOLOCK_NODE", node).env("ZOOLOCK_FENCING_TOKEN", token);
    // SAFETY: only fcntl between fork and exec: the supervisor's two pipe ends survive the exec.
    unsafe {
        command.pre_exec(move || {
            for fd in passed {
                if libc::fcntl(fd, libc::F_SETFD, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
            }
            Ok(())
        });
    }
    let child = command.spawn()?;
    // Our copies closed: EOF on the reports means the supervisor is gone.
    drop((orders_read, reports_write));
    // Written to while CMD has the terminal: never stop for that.
    // SAFETY: sets this process's disposition of SIGTTOU.
    unsafe { libc::signal(libc::SIGTTOU, libc::SIG_IGN) };
    let orders = Arc::new(Orders(pipe::Sender::from_owned_fd(orders_write)?));
    Ok((child, orders, read_reports(pipe::Receiver::from_owned_fd(reports_read)?)))
}

/// The supervisor's reports, read by a task of their own (a read cut short
/// by `select!` would lose part of a record); the channel ends at EOF.
fn read_reports(mut pipe: pipe::Receiver) -> tokio::sync::mpsc::UnboundedReceiver<Report> {
    use tokio::io::AsyncReadExt;
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut record = [0u8; Report::SIZE];
        while pipe.read_exact(&mut record).await.is_ok() {
            match Report::decode(&record) {
                Some(report) if tx.send(report).is_ok() => {}
                _ => return,
            }
        }
    });
    rx
}

async fn sleep_until_some(deadline: Option<Instant>) {
    match deadline {
        Some(deadline) => sleep_until(deadline).await,
        None => std::future::pending().await,
    }
}

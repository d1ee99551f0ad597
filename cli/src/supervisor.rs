//! The supervisor: a small process between zoolock and CMD that keeps CMD
//! inside the hold whatever happens to zoolock itself (flock(1) gets this
//! for free: CMD inherits the locked descriptor; a ZooKeeper hold lives in
//! zoolock's session, in another process).
//!
//! zoolock (the *keeper*: it holds the session and the lock) starts the
//! supervisor as `zoolock __supervise …` in a process group of its own, and
//! the supervisor starts CMD in another. The supervisor is single-threaded,
//! synchronous and small: it waits in `poll(2)` on three descriptors only.
//!
//! - **Orders pipe** (keeper → supervisor). EOF means the keeper died
//!   (SIGKILL, a panic, any exit): CMD's processes get SIGKILL at once. A
//!   pipe rather than `PR_SET_PDEATHSIG`: its EOF comes when the keeper
//!   *process* is gone, whichever of its threads started us, and never
//!   while it lives.
//! - **A timer on `CLOCK_BOOTTIME`** for the lease below (boot time keeps
//!   counting while the machine sleeps, as the server's clock does).
//! - **SIGCHLD** (a signalfd). The supervisor is a child subreaper
//!   (`PR_SET_CHILD_SUBREAPER`): a process CMD leaves behind — even one that
//!   left CMD's group with `setsid` — becomes its child when its parent dies,
//!   so every descendant is either in CMD's group or a child of ours, and
//!   "no child left" means "nothing of CMD left".
//!
//! ## Why CMD is stopped before the session can expire
//!
//! The keeper's session knows until when the quorum has confirmed it: no
//! server can have expired the session before that time (`Session::
//! confirmed_until`, renewed by a `sync` through the leader every T/7;
//! docs/guarantees.md states the bound and what it rests on). A follower's
//! answer proves nothing there: one cut off from the leader answers its
//! clients while the leader expires their sessions. Each time the
//! confirmation moves, the keeper passes it on: the time it arrived (`last`)
//! and the deadline (`until`), both on the boot clock.
//!
//! The supervisor keeps the latest and:
//! - sends CMD's group SIGTERM at `last + grace` (default T/3: a renewal
//!   late by up to 0.19 T does not disturb CMD), and SIGKILL
//!   `--kill-after` later, but
//! - sends SIGKILL, whatever else happened, at `until`.
//!
//! It takes a renewal only before its current `until`: once it has started
//! killing it goes on. So CMD's processes are dead before another client
//! can hold the lock: the window is zero, provided the supervisor runs — it
//! is what a SIGSTOP of zoolock does not reach (its own process group; see
//! docs/cli.md for what is out of reach: both processes stopped, CMD
//! escaping by ptrace…).
//!
//! ## The terminal
//!
//! When zoolock runs in the terminal's foreground, CMD's group is given the
//! terminal (`tcsetpgrp`), as a shell gives it to a job: CMD reads it, and
//! Ctrl-C and Ctrl-\ reach CMD's group only. Ctrl-Z stops CMD's group; the
//! supervisor then stops all of it (SIGSTOP, for a process that catches
//! SIGTSTP), gives the terminal back and has zoolock stop itself, so the
//! shell shows the job stopped. `fg` continues zoolock, which tells the
//! supervisor to hand the terminal back to CMD and continue it — unless the
//! lease ran out meanwhile, in which case CMD was killed.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// The hidden first argument that makes `zoolock` a supervisor.
pub const ARG: &str = "__supervise";

/// `--grace` unless given: past the usual gap between two confirmations (T/7).
pub fn default_grace(session_timeout: Duration) -> Duration {
    session_timeout / 3
}

/// The least `--grace`: two confirmations' gap.
pub fn least_grace(session_timeout: Duration) -> Duration {
    session_timeout * 2 / 7
}

/// The most `--grace` accepted: past it CMD is killed by the deadline anyway.
pub fn most_grace(session_timeout: Duration) -> Duration {
    session_timeout * 3 / 4
}

/// Nanoseconds on the boot clock (`CLOCK_BOOTTIME`), the clock of every time here.
pub fn now() -> u64 {
    zoolock::boot_clock()
}

/// What the keeper tells the supervisor, one 24-byte record each (a pipe
/// write of at most PIPE_BUF bytes is never split).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Order {
    /// The quorum confirmed the holding session at `last`: no server can
    /// have expired it before `until` (boot clock, ns).
    Renewed { last: u64, until: u64 },
    /// Stop CMD: SIGTERM now, SIGKILL after --kill-after.
    Stop,
    /// Pass this signal on to CMD's group.
    Signal(i32),
    /// zoolock was continued after a job-control stop: continue CMD.
    Continue,
}

/// What the supervisor tells the keeper, in the same record size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Report {
    /// CMD runs as this pid, the id of its process group.
    Started(i32),
    /// CMD was stopped from the terminal (by this signal: SIGTSTP for
    /// Ctrl-Z, SIGTTIN or SIGTTOU for a background read or write): zoolock
    /// should stop too, by the same signal, so the shell says why.
    Suspended(i32),
    /// CMD and everything it started are gone.
    Ended(End),
}

/// Why CMD ended, and its status as a shell reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// CMD exited by itself with this status (its leftovers were stopped).
    Exited(u8),
    /// Stopped on the keeper's order.
    Stopped,
    /// Stopped because no renewal came in time (grace or hard limit).
    Unrenewed,
    /// CMD could not be started: not found (true) or not executable.
    NotStarted { missing: bool },
}

const RECORD: usize = 24;

fn record(tag: u8, a: u64, b: u64) -> [u8; RECORD] {
    let mut out = [0u8; RECORD];
    out[0] = tag;
    out[8..16].copy_from_slice(&a.to_le_bytes());
    out[16..24].copy_from_slice(&b.to_le_bytes());
    out
}

fn fields(bytes: &[u8]) -> (u8, u64, u64) {
    let word = |i: usize| u64::from_le_bytes(bytes[i..i + 8].try_into().expect("8 bytes"));
    (bytes[0], word(8), word(16))
}

impl Order {
    pub fn encode(self) -> [u8; RECORD] {
        match self {
            Order::Renewed { last, until } => record(b'R', last, until),
            Order::Stop => record(b'S', 0, 0),
            Order::Signal(signal) => record(b'K', signal as u64, 0),
            Order::Continue => record(b'C', 0, 0),
        }
    }

    fn decode(bytes: &[u8]) -> Option<Order> {
        match fields(bytes) {
            (b'R', last, until) => Some(Order::Renewed { last, until }),
            (b'S', _, _) => Some(Order::Stop),
            (b'K', signal, _) => Some(Order::Signal(signal as i32)),
            (b'C', _, _) => Some(Order::Continue),
            _ => None,
        }
    }
}

impl Report {
    fn encode(self) -> [u8; RECORD] {
        match self {
            Report::Started(pid) => record(b'P', pid as u64, 0),
            Report::Suspended(signal) => record(b'Z', signal as u64, 0),
            Report::Ended(End::Exited(status)) => record(b'E', 0, status as u64),
            Report::Ended(End::Stopped) => record(b'E', 1, 0),
            Report::Ended(End::Unrenewed) => record(b'E', 2, 0),
            Report::Ended(End::NotStarted { missing }) => record(b'E', 3, missing as u64),
        }
    }

    pub fn decode(bytes: &[u8]) -> Option<Report> {
        match fields(bytes) {
            (b'P', pid, _) => Some(Report::Started(pid as i32)),
            (b'Z', signal, _) => Some(Report::Suspended(signal as i32)),
            (b'E', 0, status) => Some(Report::Ended(End::Exited(status as u8))),
            (b'E', 1, _) => Some(Report::Ended(End::Stopped)),
            (b'E', 2, _) => Some(Report::Ended(End::Unrenewed)),
            (b'E', 3, missing) => Some(Report::Ended(End::NotStarted { missing: missing != 0 })),
            _ => None,
        }
    }

    pub const SIZE: usize = RECORD;
}

/// What the keeper passes on the supervisor's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub orders: RawFd,
    pub reports: RawFd,
    /// The first confirmation: when it came and its deadline, in ns.
    pub last: u64,
    pub until: u64,
    pub grace: u64,
    pub kill_after: u64,
    /// The descriptor of zoolock's controlling terminal, if it has one.
    pub terminal: Option<RawFd>,
    pub command: Vec<OsString>,
}

impl Plan {
    pub fn args(&self) -> Vec<OsString> {
        let numbers = [
            self.orders as u64,
            self.reports as u64,
            self.last,
            self.until,
            self.grace,
            self.kill_after,
            self.terminal.map_or(0, |fd| fd as u64 + 1),
        ];
        let mut args: Vec<OsString> = vec![ARG.into()];
        args.extend(numbers.iter().map(|n| n.to_string().into()));
        args.push("--".into());
        args.extend(self.command.iter().cloned());
        args
    }

    /// The plan from `zoolock __supervise …`'s arguments (after `__supervise`).
    pub fn parse(args: &[OsString]) -> Option<Plan> {
        let separator = args.iter().position(|a| a == "--")?;
        let numbers: Vec<u64> = args[..separator].iter().map(|a| a.to_str()?.parse().ok()).collect::<Option<_>>()?;
        let [orders, reports, last, until, grace, kill_after, terminal] = numbers[..] else { return None };
        let command = args[separator + 1..].to_vec();
        if command.is_empty() {
            return None;
        }
        Some(Plan {
            orders: orders as RawFd,
            reports: reports as RawFd,
            last,
            until,
            grace,
            kill_after,
            terminal: terminal.checked_sub(1).map(|fd| fd as RawFd),
            command,
        })
    }
}

/// Runs the supervisor until CMD and everything it started are gone.
pub fn run(plan: Plan) -> u8 {
    match Supervisor::start(plan) {
        Ok(mut supervisor) => {
            supervisor.serve();
            0
        }
        Err(err) => {
            eprintln!("zoolock: the supervisor cannot start: {err}");
            70
        }
    }
}

fn check(result: libc::c_int) -> std::io::Result<libc::c_int> {
    if result < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// Where the stop of CMD stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stopping {
    /// CMD runs.
    No,
    /// SIGTERM sent; SIGKILL at this time.
    Terminated { kill_at: u64 },
    /// SIGKILL sent: killing every process of CMD's as it shows up.
    Killing,
}

struct Supervisor {
    orders: std::fs::File,
    reports: std::fs::File,
    timer: std::fs::File,
    children: std::fs::File,
    /// CMD's first process, and the id of its group.
    group: i32,
    /// CMD's status once its first process was reaped.
    status: Option<u8>,
    /// Why CMD ends, once that is decided.
    why: Option<End>,
    grace: u64,
    kill_after: u64,
    /// SIGTERM at this time unless renewed (last + grace).
    term_at: u64,
    /// SIGKILL at this time for sure (until).
    kill_at: u64,
    stopping: Stopping,
    /// The terminal CMD was given, while it is shared with zoolock.
    terminal: Option<Terminal>,
    /// CMD was stopped from the terminal and not continued yet.
    suspended: bool,
    keeper_gone: bool,
}

impl Supervisor {
    fn start(plan: Plan) -> std::io::Result<Supervisor> {
        // SAFETY: the keeper passed these descriptors to us; nothing else owns them.
        let (orders, reports) =
            unsafe { (std::fs::File::from_raw_fd(plan.orders), std::fs::File::from_raw_fd(plan.reports)) };
        for fd in [orders.as_raw_fd(), reports.as_raw_fd()] {
            // SAFETY: fcntl on descriptors we own. CMD must not inherit them:
            // an orders pipe held open by CMD would never report EOF.
            check(unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) })?;
        }
        // SAFETY: plain prctl/sigprocmask/signalfd/timerfd calls on this process.
        let (children, timer, mask, ttou_ignored) = unsafe {
            check(libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))?;
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGCHLD);
            // A unit's stop (systemd: SIGTERM to every process of the
            // cgroup) must not end the supervisor before CMD: CMD gets the
            // signal itself, and the keeper passes it on; the supervisor
            // stays to see CMD finish its cleanup. Blocked, not ignored: CMD
            // gets the mask zoolock had, and no ignored disposition.
            let mut blocked = set;
            for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP, libc::SIGQUIT] {
                libc::sigaddset(&mut blocked, signal);
            }
            let mut mask: libc::sigset_t = std::mem::zeroed();
            check(libc::sigprocmask(libc::SIG_BLOCK, &blocked, &mut mask))?;
            let flags = libc::SFD_CLOEXEC | libc::SFD_NONBLOCK;
            let children = std::fs::File::from(OwnedFd::from_raw_fd(check(libc::signalfd(-1, &set, flags))?));
            let flags = libc::TFD_CLOEXEC | libc::TFD_NONBLOCK;
            let timer =
                std::fs::File::from(OwnedFd::from_raw_fd(check(libc::timerfd_create(libc::CLOCK_BOOTTIME, flags))?));
            // Handing the terminal over from a background group needs SIGTTOU ignored.
            let before = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
            (children, timer, mask, before == libc::SIG_IGN)
        };
        // SAFETY: getppid/getpgid/isatty/tcgetpgrp only read.
        let keeper_group = unsafe { libc::getpgid(libc::getppid()) };
        // In the foreground or not: a job started in the background and
        // brought to the foreground later (`fg`) gives CMD the terminal then.
        let terminal = plan.terminal.map(|fd| Terminal { fd, keeper_group });
        let grace = plan.grace;
        let kill_at = plan.until;
        let mut supervisor = Supervisor {
            orders,
            reports,
            timer,
            children,
            group: 0,
            status: None,
            why: None,
            grace,
            kill_after: plan.kill_after,
            term_at: plan.last.saturating_add(grace),
            kill_at,
            stopping: Stopping::No,
            terminal,
            suspended: false,
            keeper_gone: false,
        };
        let mut command = Command::new(&plan.command[0]);
        command.args(&plan.command[1..]).process_group(0);
        let me = std::process::id() as i32;

        // SAFETY: only async-signal-safe calls between fork and exec.
        unsafe {
            command.pre_exec(move || {
                // If we die, CMD's first process dies too; the getppid check
                // closes the race with a death before the prctl.
                check(libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0))?;
                if libc::getppid() != me {
                    libc::_exit(70);
                }
                if let Some(terminal) = terminal {
                    terminal.hand(terminal.keeper_group, libc::getpid());
                }
                // CMD gets the signal mask and SIGTTOU as zoolock got them.
                if !ttou_ignored {
                    libc::signal(libc::SIGTTOU, libc::SIG_DFL);
                }
                libc::sigprocmask(libc::SIG_SETMASK, &mask, std::ptr::null_mut());
                Ok(())
            });
        }
        match command.spawn() {
            Ok(child) => {
                supervisor.group = child.id() as i32;
                // Also here, as shells do: whichever of the two runs first.
                if let Some(terminal) = terminal {
                    terminal.hand(terminal.keeper_group, supervisor.group);
                }
                supervisor.report(Report::Started(supervisor.group));
            }
            Err(err) => {
                let missing = err.kind() == std::io::ErrorKind::NotFound;
                let shown = plan.command[0].to_string_lossy();
                eprintln!("zoolock: cannot run {shown}: {err}");
                supervisor.why = Some(End::NotStarted { missing });
            }
        }
        Ok(supervisor)
    }

    fn report(&mut self, report: Report) {
        // The keeper may be gone: nobody to tell then.
        let _ = self.reports.write_all(&report.encode());
    }

    /// Waits on the orders, the timer and the children until nothing of CMD is left.
    fn serve(&mut self) {
        if self.group == 0 {
            self.finish();
            return;
        }
        loop {
            self.arm_timer();
            let mut fds = [
                libc::pollfd { fd: self.orders.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: self.timer.as_raw_fd(), events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: self.children.as_raw_fd(), events: libc::POLLIN, revents: 0 },
            ];
            if self.keeper_gone {
                fds[0].fd = -1;
            }
            // SAFETY: poll reads and writes the array it is given.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, -1) };
            if ready < 0 {
                continue; // EINTR
            }
            if fds[0].revents != 0 {
                self.read_orders();
            }
            if fds[1].revents != 0 {
                let _ = (&self.timer).read(&mut [0u8; 8]);
            }
            if fds[2].revents != 0 {
                let _ = (&self.children).read(&mut [0u8; std::mem::size_of::<libc::signalfd_siginfo>()]);
            }
            self.on_time();
            if self.reap() {
                self.finish();
                return;
            }
        }
    }

    fn read_orders(&mut self) {
        let mut buffer = [0u8; RECORD * 64];
        match self.orders.read(&mut buffer) {
            Ok(0) | Err(_) => {
                // The keeper is gone: nobody renews, nobody will release.
                self.keeper_gone = true;
                self.why.get_or_insert(End::Stopped);
                self.kill();
            }
            Ok(n) => {
                for chunk in buffer[..n].chunks_exact(RECORD) {
                    if let Some(order) = Order::decode(chunk) {
                        self.obey(order);
                    }
                }
            }
        }
    }

    fn obey(&mut self, order: Order) {
        let now = now();
        match order {
            // A renewal counts only while the deadline has not passed.
            Order::Renewed { last, until } if now < self.kill_at && self.stopping == Stopping::No => {
                self.kill_at = self.kill_at.max(until);
                self.term_at = self.term_at.max(last.saturating_add(self.grace));
            }
            Order::Renewed { .. } => {}
            Order::Stop => self.terminate(End::Stopped),
            Order::Signal(signal) if self.status.is_none() => send(-self.group, signal),
            Order::Signal(_) => {}
            Order::Continue if self.suspended && now < self.kill_at && self.stopping == Stopping::No => {
                self.suspended = false;
                // After `fg` zoolock has the terminal again; after `bg` it does not.
                if let Some(terminal) = self.terminal {
                    terminal.hand(terminal.keeper_group, self.group);
                }
                send(-self.group, libc::SIGCONT);
            }
            Order::Continue => {}
        }
    }

    /// SIGTERM to everything of CMD's, then SIGKILL after --kill-after (at the hard limit at the latest).
    fn terminate(&mut self, why: End) {
        self.why.get_or_insert(why);
        if self.stopping != Stopping::No {
            return;
        }
        self.signal_all(libc::SIGTERM);
        // A stopped process acts on SIGTERM only once continued.
        self.signal_all(libc::SIGCONT);
        let kill_at = now().saturating_add(self.kill_after).min(self.kill_at);
        self.stopping = Stopping::Terminated { kill_at };
    }

    fn kill(&mut self) {
        self.stopping = Stopping::Killing;
        self.signal_all(libc::SIGKILL);
    }

    fn on_time(&mut self) {
        let now = now();
        if now >= self.kill_at {
            self.why.get_or_insert(End::Unrenewed);
            self.kill();
            return;
        }
        match self.stopping {
            Stopping::No if now >= self.term_at => self.terminate(End::Unrenewed),
            Stopping::Terminated { kill_at } if now >= kill_at => self.kill(),
            // New orphans show up without an event: kill them as they come.
            Stopping::Killing => self.kill(),
            _ => {}
        }
    }

    /// The next time something is due; while killing, soon again.
    fn arm_timer(&self) {
        let due = match self.stopping {
            Stopping::No => self.term_at.min(self.kill_at),
            Stopping::Terminated { kill_at } => kill_at,
            Stopping::Killing => now() + 20_000_000,
        };
        let at = libc::timespec { tv_sec: (due / 1_000_000_000) as i64, tv_nsec: (due % 1_000_000_000) as i64 };
        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: at };
        // SAFETY: timerfd_settime reads the spec it is given.
        unsafe { libc::timerfd_settime(self.timer.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) };
    }

    /// Reaps every child that changed; true once CMD's first process was
    /// reaped and no child is left.
    fn reap(&mut self) -> bool {
        loop {
            let mut status = 0;
            // SAFETY: waitpid writes the status it is given.
            let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG | libc::WUNTRACED) };
            if pid < 0 {
                return self.status.is_some() || self.group == 0;
            }
            if pid == 0 {
                return false;
            }
            if pid != self.group {
                continue;
            }
            if libc::WIFSTOPPED(status) {
                self.suspend(libc::WSTOPSIG(status));
            } else if libc::WIFEXITED(status) || libc::WIFSIGNALED(status) {
                let code = if libc::WIFEXITED(status) {
                    libc::WEXITSTATUS(status) as u8
                } else {
                    128u8.wrapping_add(libc::WTERMSIG(status) as u8)
                };
                self.status = Some(code);
                self.give_terminal_back();
                // What CMD left behind goes too, before the lock is released.
                self.terminate(End::Exited(code));
            }
        }
    }

    /// CMD's first process was stopped by `signal`: from the terminal
    /// (Ctrl-Z, or a read or write in the background) the whole job stops,
    /// zoolock included.
    fn suspend(&mut self, signal: i32) {
        if self.terminal.is_none() || self.stopping != Stopping::No {
            return;
        }
        send(-self.group, libc::SIGSTOP);
        self.suspended = true;
        self.give_terminal_back();
        self.report(Report::Suspended(signal));
    }

    fn give_terminal_back(&self) {
        if let Some(terminal) = self.terminal {
            terminal.hand(self.group, terminal.keeper_group);
        }
    }

    /// CMD's group, and every child of ours (orphans CMD left behind).
    fn signal_all(&self, signal: i32) {
        if self.group != 0 {
            send(-self.group, signal);
        }
        for child in children() {
            send(child, signal);
        }
    }

    fn finish(&mut self) {
        let why = match (self.why, self.status) {
            (Some(End::Exited(_)) | None, Some(status)) => End::Exited(status),
            (Some(why), _) => why,
            (None, None) => End::Stopped,
        };
        self.report(Report::Ended(why));
    }
}

/// The terminal zoolock runs in the foreground of, and zoolock's group.
#[derive(Debug, Clone, Copy)]
struct Terminal {
    fd: RawFd,
    keeper_group: i32,
}

impl Terminal {
    /// Makes `to` the foreground group if `from` is (async-signal-safe:
    /// CMD's side runs it between fork and exec).
    fn hand(&self, from: i32, to: i32) {
        // SAFETY: tcgetpgrp/tcsetpgrp on the terminal; SIGTTOU is ignored.
        unsafe {
            if libc::tcgetpgrp(self.fd) == from {
                libc::tcsetpgrp(self.fd, to);
            }
        }
    }
}

fn send(target: i32, signal: i32) {
    // SAFETY: kill only sends a signal, to CMD's group or a child of ours.
    unsafe { libc::kill(target, signal) };
}

/// This process's children, from every thread's list (an orphan is handed
/// to one thread of its new parent).
pub fn children() -> Vec<i32> {
    let me = std::process::id();
    let tasks = std::fs::read_dir(format!("/proc/{me}/task"));
    let listed: Option<Vec<String>> = tasks
        .ok()
        .map(|tasks| tasks.flatten().map(|task| std::fs::read_to_string(task.path().join("children"))).collect())
        .and_then(|lists: Vec<std::io::Result<String>>| lists.into_iter().collect::<std::io::Result<_>>().ok());
    match listed {
        Some(lists) => {
            lists.iter().flat_map(|text| text.split_whitespace().filter_map(|pid| pid.parse().ok())).collect()
        }
        // A kernel without CONFIG_PROC_CHILDREN: every process's parent, from /proc.
        None => std::fs::read_dir("/proc")
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|entry| {
                let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
                let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
                let parent: u32 = stat[stat.rfind(')')? + 1..].split_whitespace().nth(1)?.parse().ok()?;
                (parent == me).then_some(pid)
            })
            .collect(),
    }
}

/// Kills CMD's process group and every child of this process (the
/// orphans a child subreaper inherits), and reaps them, until none is left
/// (10 s at most: a group member whose parent outlives it is not ours to reap).
pub fn kill_all(group: i32) {
    let give_up = now() + 10_000_000_000;
    while now() < give_up {
        if group != 0 {
            send(-group, libc::SIGKILL);
        }
        let children = children();
        for &child in &children {
            send(child, libc::SIGKILL);
        }
        for &child in &children {
            // SAFETY: waitpid on a child of ours; it was just killed.
            unsafe { libc::waitpid(child, std::ptr::null_mut(), 0) };
        }
        // SAFETY: kill with signal 0 only asks whether the group has members.
        let group_left = group != 0 && unsafe { libc::kill(-group, 0) } == 0;
        if children.is_empty() && !group_left {
            return;
        }
        if children.is_empty() {
            // Members whose parents (in the group, killed) have yet to reap them.
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        for order in [
            Order::Renewed { last: 123_456_789_012, until: 133_456_789_012 },
            Order::Stop,
            Order::Signal(libc::SIGHUP),
            Order::Continue,
        ] {
            assert_eq!(Order::decode(&order.encode()), Some(order));
        }
        for report in [
            Report::Started(4242),
            Report::Suspended(libc::SIGTTIN),
            Report::Ended(End::Exited(130)),
            Report::Ended(End::Stopped),
            Report::Ended(End::Unrenewed),
            Report::Ended(End::NotStarted { missing: true }),
            Report::Ended(End::NotStarted { missing: false }),
        ] {
            assert_eq!(Report::decode(&report.encode()), Some(report));
        }
    }

    #[test]
    fn plans_round_trip() {
        let plan = Plan {
            orders: 5,
            reports: 6,
            last: 99,
            until: 109,
            grace: 5,
            kill_after: 2,
            terminal: Some(2),
            command: vec!["sh".into(), "-c".into(), "--".into()],
        };
        assert_eq!(Plan::parse(&plan.args()[1..]), Some(plan));
        assert_eq!(Plan::parse(&["1".into(), "--".into(), "x".into()]), None);
    }
}

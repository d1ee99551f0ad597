//! The ensemble fault bed. Starts a 3- or 5-server ensemble, each server on
//! a host of its own (network namespaces of the bed's, see
//! `zk_harness::net`), and contenders in Rust, Python, C# and the CLI, each
//! on a host of its own, on shared lock paths. Then runs seeded fault
//! schedules — servers cut from each other (a follower from the leader, the
//! leader from the majority, a minority from a majority, a bridge, one
//! way), clients cut from servers, servers and clients stopped and killed,
//! rolling restarts — and checks the history (`history.rs`): no two
//! believed holds of a path overlap, the fencing resource never accepted a
//! write out of token order, no orphan node is left, nothing hangs.
//!
//! `zoolock-bed [--schedules N] [--first I] [--seed S] [--servers 3|5]
//!  [--languages rust,python,csharp,cli] [--session-timeout-ms T] [--mirror yes|no]
//!  [--python PY] [--csharp EXE] [--zoolock BIN]`
//!
//! Runs itself again under `unshare --net` (root): nothing it makes is seen
//! outside, and all of it goes when it exits.

mod contend;
mod contenders;
mod history;
mod resource;
mod schedule;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use contenders::{Contender, Heard, Language, Programs, Setting};
use history::{mono_now, History, Ns, Said};
use resource::Resource;
use schedule::{Fault, Schedule, Server};
use zk_harness::{Ensemble, Net, Options};

struct Args {
    schedules: u64,
    first: u64,
    seed: u64,
    servers: usize,
    languages: Vec<Language>,
    timeout_ms: u64,
    /// `no`: the Rust, Python and C# contenders list (`mirror: false`), so
    /// their waiters behind a writer hold on its release marker; four
    /// sessions on a path would mirror by default.
    mirror: bool,
    programs: Programs,
}

fn parse(args: &[String]) -> Result<Args, String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut parsed = Args {
        schedules: 12,
        first: 0,
        seed: 1,
        servers: 3,
        languages: vec![Language::Rust, Language::Python, Language::Csharp, Language::Cli],
        timeout_ms: 2000,
        mirror: true,
        programs: Programs {
            bed: std::env::current_exe().map_err(|e| e.to_string())?,
            python: root.join(".venv/bin/python"),
            contender_py: root.join("bed/contenders/contender.py"),
            cmd_py: root.join("bed/contenders/cmd.py"),
            csharp: root.join("target/bed/dotnet/ZooLockBedContender.exe"),
            zoolock: root.join("target/debug/zoolock"),
        },
    };
    let mut args = args.iter();
    while let Some(flag) = args.next() {
        let value = args.next().ok_or(format!("{flag} needs a value"))?;
        let number = || value.parse::<u64>().map_err(|_| format!("{flag}: not a number: {value}"));
        match flag.as_str() {
            "--schedules" => parsed.schedules = number()?,
            "--first" => parsed.first = number()?,
            "--seed" => parsed.seed = number()?,
            "--servers" => parsed.servers = number()? as usize,
            "--session-timeout-ms" => parsed.timeout_ms = number()?,
            "--mirror" => {
                parsed.mirror = match value.as_str() {
                    "yes" => true,
                    "no" => false,
                    _ => return Err(format!("--mirror is yes or no, not {value}")),
                }
            }
            "--languages" => {
                parsed.languages = value
                    .split(',')
                    .map(|l| Language::parse(l).ok_or(format!("no such language: {l}")))
                    .collect::<Result<_, _>>()?
            }
            "--python" => parsed.programs.python = value.into(),
            "--csharp" => parsed.programs.csharp = value.into(),
            "--zoolock" => parsed.programs.zoolock = value.into(),
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if !matches!(parsed.servers, 3 | 5) {
        return Err("--servers is 3 or 5".into());
    }
    Ok(parsed)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("contend") {
        return match contend::run(&args[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("contender: {err}");
                ExitCode::FAILURE
            }
        };
    }
    let args = match parse(&args) {
        Ok(args) => args,
        Err(err) => {
            eprintln!("zoolock-bed: {err}");
            return ExitCode::from(64);
        }
    };
    if std::env::var_os(ISOLATED).is_none() {
        let status = std::process::Command::new("unshare")
            .arg("--net")
            .arg("--")
            .arg(&args.programs.bed)
            .args(std::env::args().skip(1))
            .env(ISOLATED, "1")
            .status();
        return match status {
            Ok(status) => ExitCode::from(status.code().unwrap_or(1) as u8),
            Err(err) => {
                eprintln!("zoolock-bed: cannot run unshare --net (root and util-linux needed): {err}");
                ExitCode::FAILURE
            }
        };
    }
    match run(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("zoolock-bed: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Set in the bed's own run under `unshare --net`.
const ISOLATED: &str = "ZOOLOCK_BED_NETNS";

/// The bed's state while it runs.
struct Bed {
    zk: Ensemble,
    net: Arc<Net>,
    contenders: Vec<Contender>,
    setting: Setting,
    heard: Receiver<Heard>,
    history: History,
    resource: Resource,
    /// Which contenders are stopped by a fault (not expected to speak).
    paused: Vec<bool>,
    hangs: Vec<String>,
    log: std::fs::File,
    start: Ns,
}

fn run(args: Args) -> Result<bool, String> {
    let net = Arc::new(Net::new().map_err(|e| e.to_string())?);
    let began = Instant::now();
    let options = Options { net: Some(net.clone()), sync_limit: 15, ..Options::default() };
    let zk = Ensemble::start(args.servers, options).map_err(|e| e.to_string())?;
    println!(
        "bed: {} servers on hosts of their own (tickTime 200 ms, syncLimit 15: a cut-off follower keeps its clients 3 s), ready in {:.1} s",
        args.servers,
        began.elapsed().as_secs_f64()
    );
    let resource = Resource::default();
    let resource_port = resource.start().map_err(|e| format!("the resource: {e}"))?;
    let (tx, heard) = channel();
    let paths = vec!["/bed/a".to_owned(), "/bed/b".to_owned()];
    let setting = Setting {
        paths: paths.clone(),
        resource_port,
        timeout_ms: args.timeout_ms,
        mirror: args.mirror,
        programs: args.programs.clone(),
        heard: tx,
    };
    let servers: Vec<String> = (0..zk.len()).map(|i| zk.client_addr(i).unwrap().to_string()).collect();
    let mut rng = schedule::Rng::new(args.seed);
    let mut contenders = Vec::new();
    for (index, &language) in args.languages.iter().enumerate() {
        let host = net.add_host().map_err(|e| e.to_string())?;
        // Most on one server (a follower's clients are what a cut-off follower misleads), some on all.
        let connect =
            if rng.chance(75) { servers[rng.below(servers.len() as u64) as usize].clone() } else { servers.join(",") };
        contenders.push(Contender::new(index, language, host, connect));
    }
    let log_path = std::env::temp_dir().join(format!("zoolock-bed-{}-seed{}.log", std::process::id(), args.seed));
    let log = std::fs::File::create(&log_path).map_err(|e| e.to_string())?;
    let paused = vec![false; contenders.len()];
    let mut bed = Bed {
        zk,
        net,
        contenders,
        setting,
        heard,
        history: History::default(),
        resource,
        paused,
        hangs: Vec::new(),
        log,
        start: mono_now(),
    };
    for i in 0..bed.contenders.len() {
        let seed = args.seed.wrapping_mul(31).wrapping_add(i as u64);
        bed.contenders[i].start(&bed.setting, seed).map_err(|e| format!("{}: {e}", bed.contenders[i].name))?;
        println!("bed: {} on {} ({})", bed.contenders[i].name, bed.contenders[i].host.addr, bed.contenders[i].connect);
    }
    bed.wait_ready()?;
    let cli: Vec<usize> = bed.contenders.iter().filter(|c| c.language == Language::Cli).map(|c| c.index).collect();
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    for index in args.first..args.first + args.schedules {
        let schedule = schedule::schedule(args.seed, index, bed.contenders.len(), &cli, args.timeout_ms);
        bed.note(&format!("{schedule}"));
        *kinds.entry(schedule.fault.kind()).or_default() += 1;
        bed.apply(&schedule, args.seed)?;
        bed.progress(&format!("after {schedule}"))?;
        let found = bed.history.check();
        if !found.is_empty() {
            println!("bed: {schedule} broke the lock (replay: --seed {} --first {index} --schedules 1):", args.seed);
            for violation in &found {
                println!("  {violation}");
            }
            break;
        }
    }
    bed.finish(&paths, args.timeout_ms)?;
    let found = bed.history.check();
    let summary = bed.summary(&kinds, args.schedules, began.elapsed());
    println!("{summary}");
    println!("bed: the history is in {}", log_path.display());
    for violation in found.iter().chain(&bed.hangs) {
        println!("bed: FAILED: {violation}");
    }
    Ok(found.is_empty() && bed.hangs.is_empty())
}

impl Bed {
    fn note(&mut self, text: &str) {
        use std::io::Write;
        let at = (mono_now() - self.start) as f64 / 1e9;
        println!("bed [{at:8.3}] {text}");
        let _ = writeln!(self.log, "{} # {text}", mono_now());
    }

    /// Takes what the contenders said until `until`.
    fn drain_until(&mut self, until: Instant) {
        loop {
            let left = until.saturating_duration_since(Instant::now());
            match self.heard.recv_timeout(left) {
                Ok(heard) => self.take(heard),
                Err(RecvTimeoutError::Timeout | RecvTimeoutError::Disconnected) => break,
            }
        }
        for write in self.resource.take() {
            self.history.wrote(write);
        }
        self.check_hangs();
    }

    /// Records what a contender said in the history and the log.
    fn take(&mut self, heard: Heard) {
        use std::io::Write;
        match heard {
            Heard::Line { contender, line, at } => {
                let name = self.contenders[contender].name.clone();
                let _ = writeln!(self.log, "{at} {name} {line}");
                if let Some(said) = Said::parse(&line) {
                    self.history.said(&name, said);
                }
            }
            Heard::RunEnded { contender, code } => {
                let name = self.contenders[contender].name.clone();
                let _ = writeln!(self.log, "{} {name} exec ended {code:?}", mono_now());
                self.history.silent(&name);
            }
        }
    }

    /// A contender that runs and has said nothing for 30 s hangs; one whose
    /// process ended by itself failed. Each said once.
    fn check_hangs(&mut self) {
        let now = mono_now();
        for i in 0..self.contenders.len() {
            let name = self.contenders[i].name.clone();
            if let Some(status) = self.contenders[i].exited() {
                let ended = format!("{name} ended by itself ({status})");
                if !self.hangs.contains(&ended) {
                    self.hangs.push(ended);
                }
                continue;
            }
            let silent = now.saturating_sub(*self.contenders[i].last_heard.lock().unwrap());
            let hang = format!("{name} said nothing for 30 s");
            if !self.paused[i] && self.contenders[i].is_up() && silent > 30_000_000_000 && !self.hangs.contains(&hang) {
                self.hangs.push(hang);
            }
        }
    }

    fn wait_ready(&mut self) -> Result<(), String> {
        let deadline = Instant::now() + Duration::from_secs(90);
        let mut ready = vec![false; self.contenders.len()];
        while ready.iter().any(|r| !r) {
            if Instant::now() > deadline {
                return Err("the contenders did not start within 90 s".into());
            }
            if let Ok(heard) = self.heard.recv_timeout(Duration::from_secs(1)) {
                if let Heard::Line { contender, .. } = &heard {
                    ready[*contender] = true;
                }
                self.take(heard);
            }
            for c in &self.contenders {
                if c.language == Language::Cli {
                    ready[c.index] = true;
                }
            }
        }
        Ok(())
    }

    fn server(&self, server: Server) -> Option<usize> {
        let leader = self.zk.leader()?;
        Some(match server {
            Server::Leader => leader,
            Server::Follower(n) => {
                let followers: Vec<usize> = (0..self.zk.len()).filter(|&i| i != leader).collect();
                followers[n % followers.len()]
            }
        })
    }

    fn addr(&self, i: usize) -> std::net::Ipv4Addr {
        self.zk.host(i).expect("servers on hosts").addr
    }

    /// Applies `schedule`'s fault, holds it, undoes it, and waits until the servers serve again.
    fn apply(&mut self, schedule: &Schedule, seed: u64) -> Result<(), String> {
        self.zk.wait_ready(Duration::from_secs(90)).map_err(|e| e.to_string())?;
        let hold = Duration::from_millis(schedule.hold_ms);
        let net = self.net.clone();
        let err = |e: zk_harness::Error| e.to_string();
        let all: Vec<_> = (0..self.zk.len()).map(|i| self.addr(i)).collect();
        let leader = self.server(Server::Leader).ok_or("no leader")?;
        match &schedule.fault {
            Fault::FollowerFromLeader(f) => {
                let f = self.server(*f).ok_or("no leader")?;
                net.cut(self.addr(f), self.addr(leader)).map_err(err)?;
                self.hold_then_heal(hold)?;
            }
            Fault::Isolated(s) => {
                let s = self.server(*s).ok_or("no leader")?;
                let others: Vec<_> = all.iter().copied().filter(|&a| a != self.addr(s)).collect();
                net.split(&[self.addr(s)], &others).map_err(err)?;
                self.hold_then_heal(hold)?;
            }
            Fault::Split { leader_in_minority } => {
                let size = self.zk.len() / 2;
                let followers: Vec<usize> = (0..self.zk.len()).filter(|&i| i != leader).collect();
                let minority: Vec<usize> = if *leader_in_minority {
                    std::iter::once(leader).chain(followers.iter().copied()).take(size).collect()
                } else {
                    followers.iter().copied().take(size).collect()
                };
                let (side, rest): (Vec<_>, Vec<_>) = (0..self.zk.len()).partition(|i| minority.contains(i));
                net.split(
                    &side.iter().map(|&i| self.addr(i)).collect::<Vec<_>>(),
                    &rest.iter().map(|&i| self.addr(i)).collect::<Vec<_>>(),
                )
                .map_err(err)?;
                self.hold_then_heal(hold)?;
            }
            Fault::Bridge => {
                if self.zk.len() == 5 {
                    net.split(&[all[0], all[1]], &[all[3], all[4]]).map_err(err)?;
                } else {
                    let followers: Vec<usize> = (0..3).filter(|&i| i != leader).collect();
                    net.cut(self.addr(followers[0]), self.addr(followers[1])).map_err(err)?;
                }
                self.hold_then_heal(hold)?;
            }
            Fault::OneWay { to_follower, follower } => {
                let f = self.server(Server::Follower(*follower)).ok_or("no leader")?;
                let (from, to) = if *to_follower { (leader, f) } else { (f, leader) };
                net.cut_one_way(self.addr(from), self.addr(to)).map_err(err)?;
                self.hold_then_heal(hold)?;
            }
            Fault::ClientCut(c) => {
                net.split(&[self.contenders[*c].host.addr], &all).map_err(err)?;
                self.hold_then_heal(hold)?;
            }
            Fault::ServerPaused(s) => {
                let s = self.server(*s).ok_or("no leader")?;
                let pid = self.zk.pid(s).ok_or("server not running")? as i32;
                // SAFETY: signals to a server the harness started.
                unsafe { libc::kill(pid, libc::SIGSTOP) };
                self.drain_until(Instant::now() + hold);
                unsafe { libc::kill(pid, libc::SIGCONT) };
            }
            Fault::ServerKilled(s) => {
                let s = self.server(*s).ok_or("no leader")?;
                self.zk.kill(s).map_err(err)?;
                self.drain_until(Instant::now() + hold);
                self.zk.restart(s).map_err(err)?;
            }
            Fault::RollingRestart => {
                let order: Vec<usize> = (0..self.zk.len()).filter(|&i| i != leader).chain([leader]).collect();
                for i in order {
                    self.zk.restart(i).map_err(err)?;
                    self.drain_until(Instant::now());
                }
            }
            Fault::ClientPaused(c) => {
                if self.contenders[*c].signal(libc::SIGSTOP) {
                    self.paused[*c] = true;
                    self.drain_until(Instant::now() + hold);
                    self.contenders[*c].signal(libc::SIGCONT);
                    self.paused[*c] = false;
                    *self.contenders[*c].last_heard.lock().unwrap() = mono_now();
                } else {
                    self.note("  (missed: the contender was between runs)");
                }
            }
            Fault::ClientKilled(c) => {
                let name = self.contenders[*c].name.clone();
                let killed = self.contenders[*c].kill();
                let dead = mono_now();
                if self.contenders[*c].language != Language::Cli {
                    // What it said before it died first; a hold still open
                    // ends at its death (the CLI's CMD says its own last word).
                    self.drain_until(Instant::now());
                    self.history.killed(&name, dead);
                }
                if !killed {
                    self.note("  (missed: the contender was between runs)");
                }
                self.drain_until(Instant::now() + hold);
                if !self.contenders[*c].is_up() {
                    let restart = seed.wrapping_add(schedule.index).wrapping_mul(0x9e37);
                    self.contenders[*c].start(&self.setting, restart).map_err(|e| e.to_string())?;
                }
            }
            Fault::SupervisorKilled(c) => {
                let keeper = *self.contenders[*c].pid.lock().unwrap();
                match keeper.and_then(supervisor_of) {
                    // SAFETY: a signal to a process the bed's zoolock started.
                    Some(pid) => unsafe {
                        libc::kill(pid, libc::SIGKILL);
                    },
                    None => self.note("  (missed: no supervisor running)"),
                }
                self.drain_until(Instant::now() + hold);
            }
        }
        self.zk.wait_ready(Duration::from_secs(90)).map_err(|e| e.to_string())?;
        Ok(())
    }

    fn hold_then_heal(&mut self, hold: Duration) -> Result<(), String> {
        self.drain_until(Instant::now() + hold);
        self.net.heal_all().map_err(|e| e.to_string())
    }

    /// Waits until every path was held again after a fault (the lock recovers).
    fn progress(&mut self, after: &str) -> Result<(), String> {
        let before = self.history.acquisitions;
        let paths = self.setting.paths.clone();
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            self.drain_until(Instant::now() + Duration::from_millis(200));
            let held: std::collections::BTreeSet<&str> = self
                .history
                .holds
                .iter()
                .rev()
                .take(self.history.acquisitions - before)
                .map(|h| h.path.as_str())
                .collect();
            if paths.iter().all(|p| held.contains(p.as_str())) {
                return Ok(());
            }
            if Instant::now() > deadline {
                self.hangs.push(format!("no path was held again within 60 s {after} (held: {held:?})"));
                return Ok(());
            }
        }
    }

    /// Stops every contender cleanly, waits out the sessions of the killed
    /// ones, and counts the nodes left on the lock paths.
    fn finish(&mut self, paths: &[String], timeout_ms: u64) -> Result<(), String> {
        for contender in &mut self.contenders {
            contender.stop();
        }
        self.drain_until(Instant::now() + Duration::from_millis(200));
        self.history.finish();
        let connect =
            (0..self.zk.len()).map(|i| self.zk.client_addr(i).unwrap().to_string()).collect::<Vec<_>>().join(",");
        let session =
            zoolock::Session::connect_blocking(zoolock::SessionOptions::new(connect)).map_err(|e| e.to_string())?;
        // A killed contender's session, and its node, last its timeout.
        let deadline = Instant::now() + Duration::from_millis(timeout_ms * 3 + 5000);
        let mut left = Vec::new();
        loop {
            left.clear();
            for path in paths {
                match session.children_blocking(path) {
                    Ok(children) => left.extend(children.into_iter().map(|c| format!("{path}/{c}"))),
                    Err(zoolock::Error::NoNode { .. }) => {}
                    Err(err) => return Err(err.to_string()),
                }
            }
            if left.is_empty() || Instant::now() > deadline {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        session.close_blocking();
        if !left.is_empty() {
            self.hangs.push(format!("orphan nodes: {left:?}"));
        }
        Ok(())
    }

    fn summary(&self, kinds: &BTreeMap<&str, usize>, schedules: u64, took: Duration) -> String {
        let history = &self.history;
        let leads = history.leads();
        let ms = |ns: i64| ns as f64 / 1e6;
        let accepted = history.writes.iter().filter(|w| w.accepted).count();
        let by_language: BTreeMap<&str, usize> = self.contenders.iter().fold(BTreeMap::new(), |mut m, c| {
            *m.entry(c.language.name()).or_default() += history.holds.iter().filter(|h| h.contender == c.name).count();
            m
        });
        let endings: BTreeMap<String, usize> = history.holds.iter().fold(BTreeMap::new(), |mut m, h| {
            let ending = match &h.ending {
                history::Ending::Read { state, .. } => state.clone(),
                other => format!("{other:?}").to_lowercase(),
            };
            *m.entry(ending).or_default() += 1;
            m
        });
        let mut text = format!(
            "bed: {schedules} schedules in {:.0} s: {} believed holds ({by_language:?}), {} acquire timeouts, errors {:?}\n",
            took.as_secs_f64(),
            history.holds.len(),
            history.timeouts,
            history.errors
        );
        text += &format!("bed: faults by kind: {kinds:?}\n");
        text += &format!("bed: holds ended by: {endings:?}\n");
        text += &format!(
            "bed: writes: {accepted} accepted, {} refused (stale tokens turned away)\n",
            history.writes.len() - accepted
        );
        for (how, leads) in &leads {
            text += &format!(
                "bed: holds that ended without a release ({how}: {}) were over before the next holder began by: least {:.1} ms, median {:.1} ms, most {:.1} ms\n",
                leads.len(),
                ms(leads[0]),
                ms(leads[leads.len() / 2]),
                ms(leads[leads.len() - 1]),
            );
        }
        text
    }
}

/// The pid of `keeper`'s child that runs `zoolock __supervise`.
fn supervisor_of(keeper: u32) -> Option<i32> {
    let tasks = std::fs::read_dir(format!("/proc/{keeper}/task")).ok()?;
    tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|listed| listed.split_whitespace().filter_map(|pid| pid.parse::<i32>().ok()).collect::<Vec<_>>())
        .find(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|line| line.windows(11).any(|w| w == b"__supervise"))
        })
}

//! One measurement: start a contestant's processes, wait until all are ready,
//! read the server's packet counter, say `go`, gather their results.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;
use zk_harness::{cpu_seconds, DelayRelay, Ensemble};

use crate::contestants::Contestant;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Scenario {
    /// One client, one lock.
    A,
    /// This many processes contending for one lock.
    B(usize),
    /// One process, 64 locks concurrently.
    C,
    /// One process with this many sessions contending for one lock: packets per acquisition.
    Herd(usize),
    /// 10,000 waiters queued on one lock in one process.
    Scale,
}

impl Scenario {
    pub fn key(self) -> String {
        match self {
            Scenario::A => "A".into(),
            Scenario::B(n) => format!("B{n}"),
            Scenario::C => "C".into(),
            Scenario::Herd(n) => format!("herd{n}"),
            Scenario::Scale => "scale".into(),
        }
    }

    fn protocol_args(self) -> Vec<String> {
        let (scenario, sessions) = match self {
            Scenario::A => ("a", 1),
            Scenario::B(_) => ("b", 1),
            Scenario::C => ("c", 1),
            Scenario::Herd(n) => ("b", n),
            Scenario::Scale => ("scale", 1),
        };
        vec!["--scenario".into(), scenario.into(), "--sessions".into(), sessions.to_string()]
    }

    fn processes(self) -> usize {
        match self {
            Scenario::B(n) => n,
            _ => 1,
        }
    }
}

#[derive(Clone, Debug)]
pub enum Outcome {
    /// Cycles (or acquisitions) in a timed window, with per-op samples in µs.
    /// `packets`: requests the server received in the window (its
    /// `zk_packets_received`, pings included: one per session per third of
    /// its 10 s timeout at most); `server_cpu`: the server JVM's user+system
    /// CPU seconds over the same window (/proc/<pid>/stat); `client_cpu`:
    /// the contestant processes' own, from `go` to their results;
    /// `queued`: zoolock's acquisitions that waited on a mirror and by
    /// listing (Rust contestants; zero for the others); `relay_cpu`: the
    /// delay relay's CPU seconds over the same window (`--delay`).
    Ran {
        ops: u64,
        seconds: f64,
        samples: Vec<u64>,
        packets: u64,
        server_cpu: f64,
        client_cpu: f64,
        queued: (u64, u64),
        relay_cpu: Option<f64>,
    },
    Scale {
        bytes_per_waiter: u64,
        served: u64,
        waiters: u64,
        in_order: bool,
        seconds: f64,
    },
    Unsupported(String),
    Failed(String),
}

/// How contestants reach the server: its connect string, and the delay
/// relay on the way (`--delay`), whose CPU time is measured with theirs.
#[derive(Clone, Copy)]
pub struct Route<'a> {
    pub connect: &'a str,
    pub relay: Option<&'a DelayRelay>,
}

const READY_WITHIN: Duration = Duration::from_secs(180);

pub fn measure(
    server: &Ensemble,
    route: Route,
    contestant: Contestant,
    scenario: Scenario,
    path: &str,
    seconds: f64,
    log: &Path,
) -> Outcome {
    let Some(mut command) = contestant.command() else {
        return Outcome::Unsupported("not built here".into());
    };
    command
        .args(["--connect", route.connect, "--path", path, "--seconds", &seconds.to_string()])
        .args(scenario.protocol_args())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped());
    let (lines, received) = mpsc::channel::<(usize, Option<String>)>();
    let mut children: Vec<Child> = Vec::new();
    for i in 0..scenario.processes() {
        let stderr = match File::options().create(true).append(true).open(log) {
            Ok(file) => file,
            Err(e) => return Outcome::Failed(format!("{}: {e}", log.display())),
        };
        let mut child = match command.stderr(stderr).spawn() {
            Ok(child) => child,
            Err(e) => {
                stop(&mut children);
                return Outcome::Failed(format!("spawn: {e}"));
            }
        };
        let stdout = BufReader::new(child.stdout.take().expect("piped"));
        let lines = lines.clone();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let _ = lines.send((i, Some(line)));
            }
            let _ = lines.send((i, None));
        });
        children.push(child);
    }
    let outcome = drive(server, route.relay, &mut children, &received, seconds);
    stop(&mut children);
    outcome
}

fn drive(
    server: &Ensemble,
    relay: Option<&DelayRelay>,
    children: &mut [Child],
    lines: &mpsc::Receiver<(usize, Option<String>)>,
    seconds: f64,
) -> Outcome {
    let n = children.len();
    let mut results: Vec<Option<Value>> = vec![None; n];
    let mut ready = 0;
    let deadline = Instant::now() + READY_WITHIN;
    while ready < n {
        match next_line(lines, deadline) {
            Ok((_, line)) if line == "ready" => ready += 1,
            Ok((i, line)) => match parse(&line) {
                Some(value) if value.get("unsupported").is_some() => {
                    return Outcome::Unsupported(value["unsupported"].as_str().unwrap_or("").to_owned())
                }
                _ => return Outcome::Failed(format!("process {i} before ready: {line}")),
            },
            Err(e) => return Outcome::Failed(format!("{e} before ready")),
        }
    }
    let before = packets_received(server);
    let cpu_before = server_cpu_seconds(server);
    let client_before = client_cpu_seconds(children);
    let relay_before = relay.map(DelayRelay::cpu_time);
    for child in children.iter_mut() {
        let stdin = child.stdin.as_mut().expect("piped");
        if let Err(e) = stdin.write_all(b"go\n").and_then(|_| stdin.flush()) {
            return Outcome::Failed(format!("go: {e}"));
        }
    }
    let deadline = Instant::now() + Duration::from_secs_f64(seconds) + READY_WITHIN;
    while results.iter().any(Option::is_none) {
        match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
            Ok((i, Some(line))) => match parse(&line) {
                Some(value) => results[i] = Some(value),
                None => return Outcome::Failed(format!("process {i}: not a result: {line}")),
            },
            // A process that gave its result may exit before the others.
            Ok((i, None)) if results[i].is_some() => {}
            Ok((i, None)) => return Outcome::Failed(format!("process {i} ended without a result (see its log)")),
            Err(_) => return Outcome::Failed("timed out while running".into()),
        }
    }
    let packets = packets_received(server).saturating_sub(before);
    let server_cpu = server_cpu_seconds(server) - cpu_before;
    let client_cpu = client_cpu_seconds(children) - client_before;
    // None if the relay's thread ended meanwhile (its time reads as zero then).
    let relay_cpu = relay.zip(relay_before).and_then(|(relay, before)| relay.cpu_time().checked_sub(before));
    let relay_cpu = relay_cpu.map(|cpu| cpu.as_secs_f64());
    combine(results.into_iter().flatten().collect(), packets, server_cpu, client_cpu, relay_cpu)
}

/// User+system CPU seconds of the contestant processes so far (NaN if one
/// cannot be read). One that gave its result and exited is a zombie until
/// `stop` reaps it: its stat still counts its time.
fn client_cpu_seconds(children: &[Child]) -> f64 {
    children.iter().map(|child| cpu_seconds(&format!("/proc/{}/stat", child.id())).unwrap_or(f64::NAN)).sum()
}

fn next_line(lines: &mpsc::Receiver<(usize, Option<String>)>, deadline: Instant) -> Result<(usize, String), String> {
    match lines.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
        Ok((i, Some(line))) => Ok((i, line)),
        Ok((i, None)) => Err(format!("process {i} ended (see its log)")),
        Err(_) => Err("timed out".into()),
    }
}

fn parse(line: &str) -> Option<Value> {
    serde_json::from_str::<Value>(line).ok().filter(Value::is_object)
}

fn combine(results: Vec<Value>, packets: u64, server_cpu: f64, client_cpu: f64, relay_cpu: Option<f64>) -> Outcome {
    if let Some(why) = results.iter().find_map(|r| r.get("unsupported")) {
        return Outcome::Unsupported(why.as_str().unwrap_or("").to_owned());
    }
    let number = |r: &Value, key: &str| r.get(key).and_then(Value::as_f64);
    if let [r] = results.as_slice() {
        if r.get("waiters").is_some() {
            return Outcome::Scale {
                bytes_per_waiter: number(r, "bytes_per_waiter").unwrap_or(f64::NAN) as u64,
                served: number(r, "served").unwrap_or(0.0) as u64,
                waiters: number(r, "waiters").unwrap_or(0.0) as u64,
                in_order: r.get("in_order").and_then(Value::as_bool).unwrap_or(false),
                seconds: number(r, "seconds").unwrap_or(f64::NAN),
            };
        }
    }
    let (mut ops, mut seconds, mut samples, mut queued) = (0, 0.0, Vec::new(), (0, 0));
    for r in &results {
        queued.0 += number(r, "queued_mirror").unwrap_or(0.0) as u64;
        queued.1 += number(r, "queued_listing").unwrap_or(0.0) as u64;
        let (Some(n), Some(s)) = (number(r, "ops"), number(r, "seconds")) else {
            return Outcome::Failed(format!("result without ops/seconds: {r}"));
        };
        ops += n as u64;
        seconds += s / results.len() as f64;
        if let Some(list) = r.get("samples_us").and_then(Value::as_array) {
            samples.extend(list.iter().filter_map(Value::as_u64));
        }
    }
    Outcome::Ran { ops, seconds, samples, packets, server_cpu, client_cpu, queued, relay_cpu }
}

fn packets_received(server: &Ensemble) -> u64 {
    server.mntr(0).ok().and_then(|m| m.get("zk_packets_received").and_then(|v| v.parse().ok())).unwrap_or(0)
}

/// User+system CPU seconds of the server's JVM so far, but for its JIT
/// compiler threads (clock ticks of 10 ms; NaN if it cannot be read, which
/// leaves the row unmeasured). The compilers run on whichever contestant's
/// time a code path is first hot: in a profile of a B(8) run 12 s after the
/// warm-up, they took 31 % of the server's CPU, and no request pays for them
/// on a warm server. The process's total keeps the time of threads that
/// ended; the compilers' is subtracted thread by thread, so they must not
/// end (`-XX:-UseDynamicNumberOfCompilerThreads`, main.rs).
pub(crate) fn server_cpu_seconds(server: &Ensemble) -> f64 {
    let read = || {
        let proc = format!("/proc/{}", server.pid(0)?);
        let mut total = cpu_seconds(&format!("{proc}/stat"))?;
        for task in std::fs::read_dir(format!("{proc}/task")).ok()?.flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            if comm.contains("CompilerThre") {
                total -= cpu_seconds(&task.path().join("stat").to_string_lossy())?;
            }
        }
        Some(total)
    };
    read().unwrap_or(f64::NAN)
}

/// Lets every process exit by itself (it closes its sessions), killing any that hang.
fn stop(children: &mut [Child]) {
    for child in children.iter_mut() {
        drop(child.stdin.take());
    }
    let deadline = Instant::now() + Duration::from_secs(30);
    for child in children.iter_mut() {
        while child.try_wait().ok().flatten().is_none() && Instant::now() < deadline {
            // No portable wait-with-timeout for a child: poll, bounded.
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

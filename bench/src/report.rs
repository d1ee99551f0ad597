//! Figures from the measurements: the markdown table, the targets of the issue
//! checked against ratios of the same run, and JSON for the chart.

use serde_json::{json, Value};

use crate::contestants::{Contestant, ALL};
use crate::measure::{Outcome, Scenario};

pub struct Measured {
    pub force_sync: bool,
    pub contestant: Contestant,
    pub scenario: Scenario,
    pub outcome: Outcome,
}

/// The figures of one contestant in one scenario, over its rounds.
#[derive(Default)]
struct Cell {
    rate: Option<f64>,
    /// The least and the greatest rate of the rounds, when there were several.
    spread: Option<(f64, f64)>,
    p50_us: Option<u64>,
    p99_us: Option<u64>,
    packets_per_op: Option<f64>,
    /// The server's CPU per op, in µs.
    server_cpu_us: Option<f64>,
    /// The contestant processes' CPU per op, in µs.
    client_cpu_us: Option<f64>,
    /// The delay relay's CPU per op, in µs (`--delay`).
    relay_cpu_us: Option<f64>,
    /// The share of zoolock's acquisitions that waited on the mirror (Rust contestants).
    mirrored: Option<f64>,
    scale: Option<(u64, bool, u64, f64)>,
    note: Option<String>,
}

fn cell(measured: &[Measured], force_sync: bool, contestant: Contestant, scenario: Scenario) -> Cell {
    let outcomes: Vec<&Outcome> = measured
        .iter()
        .filter(|m| m.force_sync == force_sync && m.contestant == contestant && m.scenario == scenario)
        .map(|m| &m.outcome)
        .collect();
    let mut cell = Cell::default();
    let (mut rates, mut samples, mut packets, mut ops, mut cpu) = (Vec::new(), Vec::new(), 0, 0, 0.0);
    let (mut client, mut queued, mut relay) = (0.0, (0, 0), None);
    for outcome in outcomes {
        match outcome {
            Outcome::Ran { ops: n, seconds, samples: s, packets: p, server_cpu, client_cpu, queued: q, relay_cpu } => {
                queued = (queued.0 + q.0, queued.1 + q.1);
                relay = relay_cpu.map(|cpu| relay.unwrap_or(0.0) + cpu);
                rates.push(*n as f64 / seconds);
                samples.extend_from_slice(s);
                packets += p;
                cpu += server_cpu;
                client += client_cpu;
                ops += n;
            }
            Outcome::Scale { bytes_per_waiter, served, waiters, in_order, seconds } => {
                cell.scale = Some((*bytes_per_waiter, *in_order && served == waiters, *served, *seconds));
            }
            Outcome::Unsupported(why) => cell.note = Some(format!("— ({why})")),
            Outcome::Failed(why) => cell.note = Some(format!("FAILED: {why}")),
        }
    }
    if !rates.is_empty() {
        rates.sort_by(f64::total_cmp);
        let middle = rates.len() / 2;
        cell.rate = Some(if rates.len() % 2 == 0 { (rates[middle - 1] + rates[middle]) / 2.0 } else { rates[middle] });
        cell.spread = (rates.len() > 1).then(|| (rates[0], rates[rates.len() - 1]));
        samples.sort_unstable();
        let at = |q: f64| samples.get(((samples.len() as f64 - 1.0) * q).round() as usize).copied();
        (cell.p50_us, cell.p99_us) = (at(0.50), at(0.99));
        cell.packets_per_op = (ops > 0).then(|| packets as f64 / ops as f64);
        cell.server_cpu_us = (ops > 0).then(|| cpu * 1e6 / ops as f64).filter(|c| c.is_finite());
        cell.client_cpu_us = (ops > 0).then(|| client * 1e6 / ops as f64).filter(|c| c.is_finite());
        cell.relay_cpu_us = relay.filter(|_| ops > 0).map(|r| r * 1e6 / ops as f64);
        let all = queued.0 + queued.1;
        cell.mirrored = (all > 0).then(|| queued.0 as f64 / all as f64);
    }
    cell
}

pub fn brief(outcome: &Outcome) -> String {
    match outcome {
        Outcome::Ran { ops, seconds, packets, server_cpu, client_cpu, relay_cpu, .. } => {
            let per_op = |x: f64| x / (*ops).max(1) as f64;
            let relay = relay_cpu.map_or(String::new(), |cpu| format!(", relay {:.0} µs/op", per_op(cpu * 1e6)));
            format!(
                "{:>8.0}/s  ({ops} ops, {:.1} packets/op, server {:.0} µs/op, client {:.0} µs/op{relay})",
                *ops as f64 / seconds,
                per_op(*packets as f64),
                per_op(server_cpu * 1e6),
                per_op(client_cpu * 1e6)
            )
        }
        Outcome::Scale { bytes_per_waiter, served, waiters, in_order, seconds } => {
            format!("{bytes_per_waiter} B/waiter, served {served}/{waiters} in order: {in_order}, {seconds:.2} s")
        }
        Outcome::Unsupported(why) => format!("unsupported: {why}"),
        Outcome::Failed(why) => format!("FAILED: {why}"),
    }
}

fn ms(us: Option<u64>) -> String {
    us.map_or("–".into(), |us| format!("{:.2}", us as f64 / 1000.0))
}

fn rate_and_latency(c: &Cell) -> String {
    match (c.rate, &c.note) {
        (Some(rate), _) => {
            let spread = c.spread.map_or(String::new(), |(least, most)| format!(" [{least:.0}–{most:.0}]"));
            let design = c.mirrored.map_or(String::new(), |share| format!(" mirror {:.0} %", share * 100.0));
            format!("{rate:.0}{spread} ({} / {}){design}", ms(c.p50_us), ms(c.p99_us))
        }
        (None, Some(note)) if note.starts_with("FAILED") => "FAILED".into(),
        _ => "—".into(),
    }
}

pub fn markdown(measured: &[Measured], seconds: f64, rounds: usize) -> String {
    let mut out = format!(
        "# zoolock bench\n\nOne private ZooKeeper 3.8 on loopback; every contestant in turn against it, \
         {seconds} s per measurement, median of {rounds} interleaved round(s) [least–greatest of the rounds]. \
         Rates are cycles (A, C) or acquisitions (B) per second, with p50 / p99 in ms (A, C: a whole acquire+release; B: the wait to hold). \
         Herd: requests per acquisition (ZooKeeper's `zk_packets_received`, pings included) and the \
         server JVM's CPU per acquisition (user+system of every thread but the JIT compilers', /proc/<pid>/task, 10 ms ticks) with N sessions \
         contending in one process. Client CPU: the contestant processes' user+system from `go` to their results, per op \
         (a binding's own cost shows here first: a log record per step cost Python's C 60 % more). \
         zoolock's Rust rows end with the share of acquisitions that waited on the mirror (the rest listed): \
         the design the adaptive default chose. \
         Scale: 10,000 waiters queued on one lock in one process.\n"
    );
    let syncs: Vec<bool> = [true, false].into_iter().filter(|s| measured.iter().any(|m| m.force_sync == *s)).collect();
    for &sync in &syncs {
        let get = |c: Contestant, s: Scenario| cell(measured, sync, c, s);
        out += &format!("\n## forceSync={}\n\n", if sync { "yes" } else { "no" });
        out += "| contestant | A | B(1) | B(2) | B(4) | B(8) | B(16) | B(32) | C (64 locks) |\n";
        out += "|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
        for c in ALL {
            let scenarios = [1, 2, 4, 8, 16, 32].map(Scenario::B);
            let scenarios = [&[Scenario::A][..], &scenarios, &[Scenario::C]].concat();
            let cells: Vec<String> = scenarios.into_iter().map(|s| rate_and_latency(&get(c, s))).collect();
            out += &format!("| {} | {} |\n", c.name(), cells.join(" | "));
        }
        out += "\n| contestant | requests/acq N=2 | N=8 | N=32 | server CPU µs/acq N=8 | N=32 | scale: bytes/waiter | served once, in order | serve time |\n";
        out += "|---|---:|---:|---:|---:|---:|---:|---|---:|\n";
        for c in ALL {
            let herd: Vec<String> = [2, 8, 32]
                .into_iter()
                .map(|n| get(c, Scenario::Herd(n)).packets_per_op.map_or("—".into(), |p| format!("{p:.1}")))
                .chain(
                    [8, 32]
                        .into_iter()
                        .map(|n| get(c, Scenario::Herd(n)).server_cpu_us.map_or("—".into(), |u| format!("{u:.0}"))),
                )
                .collect();
            let scale = match get(c, Scenario::Scale).scale {
                Some((bytes, ok, served, secs)) => {
                    format!("{bytes} | {} ({served}) | {secs:.2} s", if ok { "yes" } else { "NO" })
                }
                None => "— | — | —".into(),
            };
            out += &format!("| {} | {} | {scale} |\n", c.name(), herd.join(" | "));
        }
        out += "\n| contestant | client CPU µs/cycle A | µs/acq B(8) | µs/cycle C |\n|---|---:|---:|---:|\n";
        for c in ALL {
            let cpu: Vec<String> = [Scenario::A, Scenario::B(8), Scenario::C]
                .into_iter()
                .map(|s| get(c, s).client_cpu_us.map_or("—".into(), |u| format!("{u:.0}")))
                .collect();
            out += &format!("| {} | {} |\n", c.name(), cpu.join(" | "));
        }
        if measured.iter().any(|m| matches!(m.outcome, Outcome::Ran { relay_cpu: Some(_), .. })) {
            out += "\n| contestant | relay CPU µs/op A | B(2) | B(8) | B(16) | B(32) | C |\n|---|---:|---:|---:|---:|---:|---:|\n";
            for c in ALL {
                let scenarios =
                    [Scenario::A, Scenario::B(2), Scenario::B(8), Scenario::B(16), Scenario::B(32), Scenario::C];
                let cpu: Vec<String> =
                    scenarios.map(|s| get(c, s).relay_cpu_us.map_or("—".into(), |u| format!("{u:.0}"))).to_vec();
                out += &format!("| {} | {} |\n", c.name(), cpu.join(" | "));
            }
        }
        out += &targets(&get);
    }
    out
}

/// Issue 26's targets, as ratios of this run, for zoolock's default design in
/// each language (Python and C# use the library default, as users do). "The
/// listing design" is the Rust listing contestant of the same run.
fn targets(get: &dyn Fn(Contestant, Scenario) -> Cell) -> String {
    use Contestant::*;
    let rate = |c, s| get(c, s).rate;
    let mut lines = vec![];
    let mut check = |what: String, value: Option<f64>, goal: f64, higher_is_better: bool| {
        let verdict = match value {
            Some(v) if v.is_finite() && (if higher_is_better { v >= goal } else { v <= goal }) => "met",
            Some(v) if v.is_finite() => "NOT met",
            _ => "not measured",
        };
        let value = value.map_or("–".into(), |v| format!("{v:.2}"));
        let sign = if higher_is_better { "≥" } else { "≤" };
        lines.push(format!("| {what} | {value} | {sign} {goal} | {verdict} |"));
    };
    let ratio = |a: Option<f64>, b: Option<f64>| a.zip(b).map(|(a, b)| a / b);
    let defaults = [ZoolockAdaptive, ZoolockPython, ZoolockCSharp];
    for n in [2, 4, 8, 32] {
        let b = Scenario::B(n);
        for c in defaults {
            check(
                format!("B({n}): {} / zookeeper-client lock", c.name()),
                ratio(rate(c, b), rate(ZookeeperClient, b)),
                1.0,
                true,
            );
            check(format!("B({n}): {} / listing design", c.name()), ratio(rate(c, b), rate(ZoolockRust, b)), 1.0, true);
        }
    }
    let cpu = |c, n| get(c, Scenario::Herd(n)).server_cpu_us;
    for n in [8, 32] {
        let least_peer = [ZookeeperClient, Kazoo, Curator].into_iter().filter_map(|p| cpu(p, n)).reduce(f64::min);
        for c in defaults {
            check(
                format!("server CPU/acq N={n}: {} / least peer's", c.name()),
                ratio(cpu(c, n), least_peer),
                1.0,
                false,
            );
        }
    }
    // To the table's precision: a few session pings are no herd.
    let packets = |c, n| get(c, Scenario::Herd(n)).packets_per_op.map(|p| (p * 10.0).round() / 10.0);
    for n in [2, 8, 32] {
        for c in defaults {
            check(format!("requests/acq N={n}: {}", c.name()), packets(c, n), 3.0, false);
        }
    }
    for (scenario, goal) in [(Scenario::A, 0.95), (Scenario::C, 0.85)] {
        let floor = rate(RawFloor, scenario);
        for c in defaults {
            check(format!("{}: {} / raw floor", scenario.key(), c.name()), ratio(rate(c, scenario), floor), goal, true);
        }
    }
    for (c, goal) in [(ZoolockAdaptive, 2.0), (ZoolockPython, 4.0), (ZoolockCSharp, 4.0)] {
        let kib = get(c, Scenario::Scale).scale.map(|(bytes, ..)| bytes as f64 / 1024.0);
        check(format!("scale: {} KiB per waiter", c.name()), kib, goal, false);
    }
    // The two designs side by side: no goal, what the default chooses between.
    let mut designs = vec![];
    for n in [2, 4, 8, 16, 32] {
        let b = Scenario::B(n);
        designs.push((format!("B({n}) rate"), ratio(rate(ZoolockMirror, b), rate(ZoolockRust, b))));
    }
    for n in [8, 32] {
        designs.push((format!("server CPU/acq N={n}"), ratio(cpu(ZoolockMirror, n), cpu(ZoolockRust, n))));
    }
    let designs: Vec<String> = designs
        .into_iter()
        .map(|(what, r)| format!("| {what} | {} |", r.map_or("–".into(), |r| format!("{r:.2}"))))
        .collect();
    format!(
        "\n| issue 26 target | measured | goal | |\n|---|---:|---:|---|\n{}\n\n\
         | mirror ÷ listing (diagnostic) | |\n|---|---:|\n{}\n",
        lines.join("\n"),
        designs.join("\n")
    )
}

/// One row per contestant, scenario and forceSync setting, for the chart.
pub fn json(measured: &[Measured]) -> Value {
    let mut rows = Vec::new();
    let mut seen = Vec::new();
    for m in measured {
        let key = (m.force_sync, m.contestant, m.scenario);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let c = cell(measured, m.force_sync, m.contestant, m.scenario);
        rows.push(json!({
            "force_sync": m.force_sync,
            "contestant": m.contestant.name(),
            "scenario": m.scenario.key(),
            "rate": c.rate,
            "rate_spread": c.spread.map(|(least, most)| [least, most]),
            "p50_us": c.p50_us,
            "p99_us": c.p99_us,
            "packets_per_op": c.packets_per_op,
            "client_cpu_us": c.client_cpu_us,
            "relay_cpu_us": c.relay_cpu_us,
            "mirrored": c.mirrored,
            "bytes_per_waiter": c.scale.map(|s| s.0),
            "note": c.note,
        }));
    }
    Value::Array(rows)
}

//! The bench command: every contestant in every scenario against one private
//! ZooKeeper, once with forceSync=yes and once with forceSync=no; writes a
//! markdown table and the figures for the chart (bench/chart.py).
//!
//! `zoolock-bench [--seconds S] [--rounds R] [--only raw,rust,…] [--scenarios A,B4,…]
//!                [--force-sync yes|no|both] [--delay MS] [--out DIR] [--quick]`
//! (`--quick`: B(8) and C, 1 s each, 3 rounds, forceSync=no, every
//! contestant, in about four minutes, into quick.md: a check while developing)
//! (`--delay`: contestants reach the server through a relay that adds MS
//! milliseconds each way, a real network's round trip; zk_harness::DelayRelay)
//! `zoolock-bench contestant raw|zoolock|zookeeper-client <protocol args>` (one Rust contestant)
//! `zoolock-bench confirmation [--sessions N] [--seconds S]` (what the quorum's confirmation costs)

mod args;
mod confirmation;
mod contestant;
mod contestants;
mod measure;
mod report;

use std::path::PathBuf;

use contestants::{Contestant, ALL};
use measure::{measure, Outcome, Route, Scenario};
use zk_harness::{DelayRelay, Ensemble, Options};

const SCENARIOS: [Scenario; 12] = [
    Scenario::A,
    Scenario::B(1),
    Scenario::B(2),
    Scenario::B(4),
    Scenario::B(8),
    Scenario::B(16),
    Scenario::B(32),
    Scenario::C,
    Scenario::Herd(2),
    Scenario::Herd(8),
    Scenario::Herd(32),
    Scenario::Scale,
];

/// `--quick`'s scenarios: the hand-over (B(8)) and a process's cost per
/// acquisition (C, many locks in one process: where Python's regression shows).
const QUICK: [Scenario; 2] = [Scenario::B(8), Scenario::C];

struct Plan {
    /// The results' file name: latest, or quick.
    name: &'static str,
    seconds: f64,
    rounds: usize,
    contestants: Vec<Contestant>,
    scenarios: Vec<Scenario>,
    force_sync: Vec<bool>,
    /// Added each way between contestants and server (`--delay`).
    delay: Option<std::time::Duration>,
    out: PathBuf,
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let outcome = match args.first().map(String::as_str) {
        Some("contestant") => contestant::main(&args[1..]),
        Some("confirmation") => confirmation::main(&args[1..]),
        _ => plan(&args).and_then(|plan| run(&plan)),
    };
    if let Err(e) = outcome {
        eprintln!("zoolock-bench: {e}");
        std::process::exit(1);
    }
}

fn plan(args: &[String]) -> Result<Plan, String> {
    let mut plan = Plan {
        name: "latest",
        seconds: 3.0,
        rounds: 1,
        contestants: ALL.to_vec(),
        scenarios: SCENARIOS.to_vec(),
        force_sync: vec![true, false],
        delay: None,
        out: PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("results"),
    };
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        if flag == "--quick" {
            (plan.name, plan.seconds, plan.rounds) = ("quick", 1.0, 3);
            (plan.scenarios, plan.force_sync) = (QUICK.to_vec(), vec![false]);
            continue;
        }
        let value = rest.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let list = || value.split(',').map(str::trim);
        match flag.as_str() {
            "--seconds" => plan.seconds = value.parse().map_err(|_| format!("--seconds {value}"))?,
            "--rounds" => plan.rounds = value.parse().map_err(|_| format!("--rounds {value}"))?,
            "--out" => plan.out = PathBuf::from(value),
            "--delay" => {
                let ms: f64 = value.parse().map_err(|_| format!("--delay {value}"))?;
                plan.delay =
                    Some(std::time::Duration::try_from_secs_f64(ms / 1000.0).map_err(|e| format!("--delay: {e}"))?);
            }
            "--only" => {
                plan.contestants = list()
                    .map(|k| ALL.into_iter().find(|c| c.key() == k).ok_or(format!("no contestant {k}")))
                    .collect::<Result<_, _>>()?
            }
            "--scenarios" => {
                // Any process count (`B3`) or herd size (`herd16`) for a closer
                // look; the table shows those of SCENARIOS.
                let sized = |k: &str, prefix: &str| k.strip_prefix(prefix)?.parse().ok().filter(|n| *n > 0);
                plan.scenarios = list()
                    .map(|k| {
                        SCENARIOS
                            .into_iter()
                            .find(|s| s.key() == k)
                            .or_else(|| sized(k, "B").map(Scenario::B))
                            .or_else(|| sized(k, "herd").map(Scenario::Herd))
                            .ok_or(format!("no scenario {k}"))
                    })
                    .collect::<Result<_, _>>()?
            }
            "--force-sync" => {
                plan.force_sync = match value.as_str() {
                    "yes" => vec![true],
                    "no" => vec![false],
                    "both" => vec![true, false],
                    _ => return Err(format!("--force-sync yes|no|both, not {value}")),
                }
            }
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    if plan.rounds == 0 || plan.seconds.is_nan() || plan.seconds <= 0.0 {
        return Err("--rounds and --seconds must be positive".into());
    }
    Ok(plan)
}

fn run(plan: &Plan) -> Result<(), String> {
    let load_before = load_average();
    std::fs::create_dir_all(plan.out.join("logs")).map_err(|e| format!("{}: {e}", plan.out.display()))?;
    let mut measured = Vec::new();
    let mut relay_cost = Vec::new();
    for &force_sync in &plan.force_sync {
        // Compiler threads that never end: measure.rs subtracts their time from the server's.
        let jvm_args = vec!["-XX:-UseDynamicNumberOfCompilerThreads".to_owned()];
        let options = Options { force_sync, jvm_args, ..Options::benchmark() };
        let server = Ensemble::start(1, options).map_err(|e| e.to_string())?;
        let sync = if force_sync { "yes" } else { "no" };
        eprintln!("forceSync={sync}: server at {}", server.direct_connect_string());
        // The server's JIT compiles for tens of seconds after it starts (in a
        // profile of an early B(4) run, its compiler threads took 40% of the
        // CPU): that is not to happen on a contestant's time. Every kind of
        // request the contestants make, for a while, first.
        let warm_up = plan.out.join("logs").join(format!("warm-up-sync-{sync}.log"));
        for (contestant, scenario) in [
            (Contestant::RawFloor, Scenario::A),
            (Contestant::ZookeeperClient, Scenario::B(4)),
            (Contestant::RawFloor, Scenario::C),
        ] {
            let path = format!("/bench/warm-up/{}", scenario.key());
            let direct = server.direct_connect_string();
            let outcome =
                measure(&server, Route { connect: &direct, relay: None }, contestant, scenario, &path, 5.0, &warm_up);
            eprintln!("  warm-up {:>6}: {}", scenario.key(), report::brief(&outcome));
        }
        let upstream = server.direct_connect_string();
        let start_relay = |delay| {
            let upstream = upstream.parse().map_err(|e| format!("{upstream}: {e}"))?;
            DelayRelay::start(upstream, delay).map_err(|e| format!("relay: {e}"))
        };
        // Kept for the measurements: a relay dropped takes no new connection.
        let mut delayed = None;
        let connect = match plan.delay {
            None => upstream.clone(),
            Some(delay) => {
                // The relay's own cost: the raw floor's A through it with no delay, and direct.
                let undelayed = start_relay(std::time::Duration::ZERO)?;
                let through = undelayed.connect_string();
                for (how, connect, relay) in
                    [("direct", &upstream, None), ("through the relay, no delay", &through, Some(&undelayed))]
                {
                    let path = format!("/bench/relay-cost/{}", how.len());
                    let outcome = measure(
                        &server,
                        Route { connect, relay },
                        Contestant::RawFloor,
                        Scenario::A,
                        &path,
                        3.0,
                        &warm_up,
                    );
                    let line = format!("raw floor A {how}: {}", report::brief(&outcome));
                    eprintln!("  {line}");
                    relay_cost.push(line);
                }
                delayed.insert(start_relay(delay)?).connect_string()
            }
        };
        // Interleaved rounds: noise on the host hits every contestant alike.
        for round in 0..plan.rounds {
            for &scenario in &plan.scenarios {
                // Scale is not a rate: once is enough.
                if scenario == Scenario::Scale && round > 0 {
                    continue;
                }
                for &contestant in &plan.contestants {
                    let key = scenario.key();
                    let path = format!("/bench/{round}/{key}/{}", contestant.key());
                    let log = plan.out.join("logs").join(format!("{}-{key}-sync-{sync}.log", contestant.key()));
                    let relay = delayed.as_ref();
                    let outcome = measure(
                        &server,
                        Route { connect: &connect, relay },
                        contestant,
                        scenario,
                        &path,
                        plan.seconds,
                        &log,
                    );
                    eprintln!("  round {round} {key:>6} {:<28} {}", contestant.name(), report::brief(&outcome));
                    measured.push(report::Measured { force_sync, contestant, scenario, outcome });
                }
            }
        }
        drop(server);
    }
    let mut table = report::markdown(&measured, plan.seconds, plan.rounds);
    if let Some(delay) = plan.delay {
        table += &format!(
            "\nContestants reached the server through the bench's relay, {} ms added each way (zk_harness::DelayRelay, harness/src/relay.rs); its own cost: {}.\n",
            delay.as_secs_f64() * 1000.0,
            relay_cost.join("; ")
        );
    }
    // Other work on the host moves every figure: say how much there was.
    table +=
        &format!("\nHost load average (1, 5, 15 min): {load_before} at the start, {} at the end.\n", load_average());
    let write = |name: &str, text: String| {
        let path = plan.out.join(name);
        std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))
    };
    write(&format!("{}.md", plan.name), table.clone())?;
    write(&format!("{}.json", plan.name), report::json(&measured).to_string())?;
    println!("{table}");
    if measured.iter().any(|m| matches!(m.outcome, Outcome::Failed(_))) {
        return Err(format!("some measurements failed (logs in {})", plan.out.join("logs").display()));
    }
    Ok(())
}

fn load_average() -> String {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let fields: Vec<&str> = text.split_whitespace().take(3).collect();
    if fields.len() == 3 {
        fields.join(" ")
    } else {
        "unknown".into()
    }
}

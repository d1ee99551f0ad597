//! What the quorum's confirmation of a session costs (docs/guarantees.md):
//! idle sessions on one private server, first zookeeper-client's own (pings
//! only), then zoolock's (a request through the leader every T/7, every
//! second one a write); per session, the requests the server receives, the
//! transactions it commits and its CPU.
//!
//! `zoolock-bench confirmation [--sessions N] [--seconds S] [--session-timeout-ms T]`

use std::time::{Duration, Instant};

use zk_harness::{Ensemble, Options};
use zookeeper_client as zk;

struct Figures {
    packets: f64,
    txns: f64,
    cpu: f64,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let (mut sessions, mut seconds, mut timeout_ms) = (200usize, 30.0f64, 10_000u64);
    let mut rest = args.iter();
    while let Some(flag) = rest.next() {
        let value = rest.next().ok_or(format!("{flag} needs a value"))?;
        let bad = || format!("{flag}: not a number: {value}");
        match flag.as_str() {
            "--sessions" => sessions = value.parse().map_err(|_| bad())?,
            "--seconds" => seconds = value.parse().map_err(|_| bad())?,
            "--session-timeout-ms" => timeout_ms = value.parse().map_err(|_| bad())?,
            _ => return Err(format!("unknown flag {flag}")),
        }
    }
    let jvm_args = vec!["-XX:-UseDynamicNumberOfCompilerThreads".to_owned()];
    let server =
        Ensemble::start(1, Options { jvm_args, tick_ms: 2000, ..Options::default() }).map_err(|e| e.to_string())?;
    let connect = server.direct_connect_string();
    let timeout = Duration::from_millis(timeout_ms);
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    let window = Duration::from_secs_f64(seconds);
    let plain = runtime.block_on(async {
        let mut clients = Vec::new();
        for _ in 0..sessions {
            clients.push(
                zk::Client::connector()
                    .with_session_timeout(timeout)
                    .connect(&connect)
                    .await
                    .map_err(|e| e.to_string())?,
            );
        }
        Ok::<_, String>(measure(&server, &connect, window, clients).await)
    })?;
    let confirmed = runtime.block_on(async {
        let mut held = Vec::new();
        for _ in 0..sessions {
            let options = zoolock::SessionOptions::new(&connect).session_timeout(timeout);
            held.push(zoolock::Session::connect(options).await.map_err(|e| e.to_string())?);
        }
        let figures = measure(&server, &connect, window, ()).await;
        for session in held {
            session.close().await;
        }
        Ok::<_, String>(figures)
    })?;
    let per = |total: f64| total / sessions as f64 / seconds;
    println!("| idle sessions (T = {} s, tickTime 2 s, forceSync=yes) | requests/s per session | transactions/s per session | server CPU ms/s per session |", timeout_ms / 1000);
    println!("|---|---|---|---|");
    for (name, f) in [("zookeeper-client (pings)", plain), ("zoolock (confirmed)", confirmed)] {
        println!("| {name} | {:.3} | {:.3} | {:.3} |", per(f.packets), per(f.txns), per(f.cpu) * 1000.0);
    }
    println!("({sessions} sessions, {seconds} s, one private server)");
    Ok(())
}

/// The server's counters over `window`, once the sessions in `_kept` settled.
async fn measure<T>(server: &Ensemble, connect: &str, window: Duration, _kept: T) -> Figures {
    tokio::time::sleep(Duration::from_secs(2)).await;
    let probe = zk::Client::connect(connect).await.expect("a probe client");
    let zxid = || async {
        probe.sync("/").await.expect("sync");
        probe.last_zxid()
    };
    let packets =
        || server.mntr(0).ok().and_then(|m| m.get("zk_packets_received")?.parse::<f64>().ok()).unwrap_or(f64::NAN);
    let (p0, z0, c0, started) = (packets(), zxid().await, crate::measure::server_cpu_seconds(server), Instant::now());
    tokio::time::sleep(window).await;
    let (p1, z1, c1) = (packets(), zxid().await, crate::measure::server_cpu_seconds(server));
    let scale = window.as_secs_f64() / started.elapsed().as_secs_f64();
    Figures { packets: (p1 - p0) * scale, txns: (z1 - z0) as f64 * scale, cpu: (c1 - c0) * scale }
}

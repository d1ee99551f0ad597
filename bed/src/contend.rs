//! The Rust contender: `zoolock-bed contend CONNECT PATHS RESOURCE TIMEOUT_MS SEED NAME`.
//! Acquires a random one of PATHS (comma-separated) again and again; while
//! its reads say `Held`, writes to the resource with its fencing token
//! every few milliseconds, for a random while; then releases. Says what it
//! does on stdout (see `history::Said`); ends when stdin closes.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zoolock::{Acquire, Kind, Lock, LockConfig, LockState, Session, SessionOptions};

use crate::history::mono_now;
use crate::schedule::Rng;

pub fn run(args: &[String]) -> Result<(), String> {
    let [connect, paths, resource, timeout_ms, seed, name] = args else {
        return Err("contend CONNECT PATHS RESOURCE TIMEOUT_MS SEED NAME".into());
    };
    let timeout = Duration::from_millis(timeout_ms.parse().map_err(|_| "TIMEOUT_MS")?);
    let mut rng = Rng::new(seed.parse().map_err(|_| "SEED")?);
    let options =
        SessionOptions::new(connect.as_str()).session_timeout(timeout).connect_timeout(Duration::from_secs(60));
    let session = Session::connect_blocking(options).map_err(|e| e.to_string())?;
    let config =
        LockConfig { mirror: std::env::var("ZOOLOCK_BED_MIRROR").as_deref() != Ok("no"), ..Default::default() };
    let locks: Vec<Lock> = paths
        .split(',')
        .map(|p| Lock::new(&session, p, Kind::Mutex, config.clone()))
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut resource = TcpStream::connect(resource.as_str()).map_err(|e| e.to_string())?;
    resource.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut replies = BufReader::new(resource.try_clone().map_err(|e| e.to_string())?);
    let stop = Arc::new(AtomicBool::new(false));
    let stopping = stop.clone();
    std::thread::spawn(move || {
        let _ = std::io::stdin().read_to_end(&mut Vec::new());
        stopping.store(true, Ordering::Relaxed);
    });
    let say = |line: String| {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    };
    say("ready".into());
    while !stop.load(Ordering::Relaxed) {
        let lock = &locks[rng.below(locks.len() as u64) as usize];
        let path = lock.path().to_owned();
        let wait = Duration::from_millis(500 + rng.below(2500));
        match lock.acquire_blocking(Acquire::timeout(wait)) {
            Ok(true) => {}
            Ok(false) => {
                say(format!("timeout {path} {}", mono_now()));
                continue;
            }
            Err(err) => {
                say(format!("error {:?}", err.kind()));
                std::thread::sleep(Duration::from_millis(50));
                continue;
            }
        }
        let start = mono_now();
        let token = lock.fencing_token().unwrap_or_default();
        let hold_for = 20_000_000 + rng.below(1_500_000_000);
        let (state, read_at) = (lock.state(), mono_now());
        if state != LockState::Held {
            say(format!("end {path} {token} {start} {read_at} {}", name_of(state)));
            let _ = lock.release_blocking();
            continue;
        }
        say(format!("begin {path} {token} {start}"));
        let mut last = read_at;
        let ended = loop {
            let before = mono_now();
            let state = lock.state();
            if state != LockState::Held {
                break format!("{before} {}", name_of(state));
            }
            last = mono_now();
            if writeln!(resource, "w {name} {path} {token}").is_err() || replies.read_line(&mut String::new()).is_err()
            {
                return Err("the resource went away".into());
            }
            if mono_now() - start > hold_for || stop.load(Ordering::Relaxed) {
                break format!("{} released", mono_now());
            }
            std::thread::sleep(Duration::from_millis(3));
        };
        let _ = lock.release_blocking();
        say(format!("end {path} {token} {last} {ended}"));
    }
    session.close_blocking();
    say("closed".into());
    Ok(())
}

fn name_of(state: LockState) -> &'static str {
    match state {
        LockState::Released => "RELEASED",
        LockState::Held => "HELD",
        LockState::Suspended => "SUSPENDED",
        LockState::Lost(_) => "LOST",
    }
}

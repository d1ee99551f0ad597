//! The Rust contestants (`zoolock-bench contestant raw|zoolock|zookeeper-client …`),
//! speaking bench/contestants/PROTOCOL.md like the other languages' programs.

use std::io::{BufRead, Write};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use zookeeper_client as zk;
use zoolock::{Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

use crate::args::Args;

#[derive(Clone, Copy, PartialEq)]
enum Library {
    /// No lock: create EPHEMERAL_SEQUENTIAL then delete, the floor of any sequential-node lock.
    Raw,
    /// zoolock listing (`LockConfig::mirror` off).
    Zoolock,
    /// zoolock on the mirror whatever the queue (`LockConfig::adaptive` off).
    ZoolockMirror,
    /// zoolock's default: the adaptive design.
    ZoolockAdaptive,
    /// As `ZoolockMirror`, the session on zoolock's runtime rather than this one.
    ZoolockOwnRuntime,
    ZookeeperClient,
}

pub fn main(args: &[String]) -> Result<(), String> {
    let library = match args.first().map(String::as_str) {
        Some("raw") => Library::Raw,
        Some("zoolock") => Library::Zoolock,
        Some("zoolock-mirror") => Library::ZoolockMirror,
        Some("zoolock-adaptive") => Library::ZoolockAdaptive,
        Some("zoolock-own-runtime") => Library::ZoolockOwnRuntime,
        Some("zookeeper-client") => Library::ZookeeperClient,
        other => return Err(format!("contestant: unknown library {other:?}")),
    };
    let args = Args::parse(&args[1..])?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(|e| e.to_string())?;
    let result = runtime.block_on(run(library, &args))?;
    println!("{result}");
    Ok(())
}

/// The design each zoolock contestant waits by.
fn lock_config(library: Library) -> LockConfig {
    match library {
        Library::Zoolock => LockConfig { mirror: false, ..LockConfig::default() },
        Library::ZoolockMirror => LockConfig { adaptive: None, ..LockConfig::default() },
        _ => LockConfig::default(),
    }
}

fn ready_then_go() -> Result<(), String> {
    println!("ready");
    std::io::stdout().flush().map_err(|e| e.to_string())?;
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line).map_err(|e| e.to_string())?;
    match line.trim() {
        "go" => Ok(()),
        other => Err(format!("expected go, got {other:?}")),
    }
}

/// One contender: a session and what it needs to take one lock again and again.
enum Contender {
    Raw { client: zk::Client, prefix: String },
    Zoolock { lock: Lock },
    ZookeeperClient { client: zk::Client, path: String },
}

/// The one session that every contender of scenarios a and c shares.
enum Shared {
    Session(Session),
    Client(zk::Client),
}

impl Shared {
    async fn connect(library: Library, connect: &str) -> Result<Shared, String> {
        Ok(match library {
            Library::Zoolock | Library::ZoolockMirror | Library::ZoolockAdaptive => {
                Shared::Session(zoolock_session(connect).await?)
            }
            Library::ZoolockOwnRuntime => Shared::Session(zoolock_session_on_own_runtime(connect).await?),
            Library::Raw | Library::ZookeeperClient => {
                Shared::Client(zk::Client::connect(connect).await.map_err(|e| e.to_string())?)
            }
        })
    }
}

impl Contender {
    /// On `shared`, or on a session of its own.
    async fn new(library: Library, connect: &str, shared: Option<&Shared>, path: &str) -> Result<Contender, String> {
        let own = match shared {
            Some(_) => None,
            None => Some(Shared::connect(library, connect).await?),
        };
        let err = |e: &dyn std::fmt::Display| format!("{path}: {e}");
        Ok(match (own.as_ref().or(shared).expect("one of them"), library) {
            (Shared::Session(session), _) => {
                let config = lock_config(library);
                Contender::Zoolock { lock: Lock::new(session, path, Kind::Mutex, config).map_err(|e| err(&e))? }
            }
            (Shared::Client(client), Library::Raw) => {
                mkdir(client, path).await?;
                Contender::Raw { client: client.clone(), prefix: format!("{path}/raw-") }
            }
            (Shared::Client(client), _) => {
                mkdir(client, path).await?;
                Contender::ZookeeperClient { client: client.clone(), path: path.to_owned() }
            }
        })
    }

    async fn acquire(&self) -> Result<Option<String>, String> {
        let err = |e: &dyn std::fmt::Display| e.to_string();
        match self {
            Contender::Raw { client, prefix } => {
                let mode = zk::CreateMode::EphemeralSequential.with_acls(zk::Acls::anyone_all());
                let (_, sequence) = client.create(prefix, b"", &mode).await.map_err(|e| err(&e))?;
                Ok(Some(format!("{prefix}{sequence}")))
            }
            Contender::Zoolock { lock } => match lock.acquire(Acquire::default()).await {
                Ok(true) => Ok(None),
                Ok(false) => Err("acquire without timeout returned false".into()),
                Err(e) => Err(err(&e)),
            },
            Contender::ZookeeperClient { client, path } => {
                let prefix = zk::LockPrefix::new_curator(path, "lock-").map_err(|e| err(&e))?;
                let options = zk::LockOptions::new(zk::Acls::anyone_all());
                let held = client.lock(prefix, b"", options).await.map_err(|e| err(&e))?;
                let node = held.lock_path().to_owned();
                // Released by our own delete below: its drop would delete again in the background.
                std::mem::forget(held);
                Ok(Some(node))
            }
        }
    }

    async fn release(&self, node: Option<String>) -> Result<(), String> {
        match (self, node) {
            (Contender::Zoolock { lock }, _) => match lock.release().await {
                Ok(true) => Ok(()),
                Ok(false) => Err("release found nothing held".into()),
                Err(e) => Err(e.to_string()),
            },
            (Contender::Raw { client, .. } | Contender::ZookeeperClient { client, .. }, Some(node)) => {
                client.delete(&node, None).await.map_err(|e| e.to_string())
            }
            _ => Err("no node to release".into()),
        }
    }

    /// One acquire+release cycle; returns the time it waited to hold.
    async fn cycle(&self) -> Result<Duration, String> {
        let started = Instant::now();
        let node = self.acquire().await?;
        let waited = started.elapsed();
        self.release(node).await?;
        Ok(waited)
    }
}

async fn zoolock_session(connect: &str) -> Result<Session, String> {
    Session::connect(SessionOptions::new(connect).session_timeout(Duration::from_secs(10)))
        .await
        .map_err(|e| e.to_string())
}

/// `connect_blocking` runs the connect, and so the session, on zoolock's runtime.
async fn zoolock_session_on_own_runtime(connect: &str) -> Result<Session, String> {
    let options = SessionOptions::new(connect).session_timeout(Duration::from_secs(10));
    tokio::task::spawn_blocking(move || Session::connect_blocking(options))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| e.to_string())
}

async fn mkdir(client: &zk::Client, path: &str) -> Result<(), String> {
    let mode = zk::CreateMode::Persistent.with_acls(zk::Acls::anyone_all());
    match client.mkdir(path, &mode).await {
        Ok(()) | Err(zk::Error::NodeExists) => Ok(()),
        Err(e) => Err(format!("mkdir {path}: {e}")),
    }
}

/// Loops cycles until `until`; samples are the cycle's or the wait's microseconds.
async fn cycles(contender: Arc<Contender>, until: Instant, wait_only: bool) -> Result<Vec<u64>, String> {
    let mut samples = Vec::with_capacity(16 * 1024);
    while Instant::now() < until {
        let started = Instant::now();
        let waited = contender.cycle().await?;
        let sample = if wait_only { waited } else { started.elapsed() };
        samples.push(sample.as_micros() as u64);
    }
    Ok(samples)
}

async fn run(library: Library, args: &Args) -> Result<serde_json::Value, String> {
    if args.scenario == "scale" {
        return match library {
            Library::Zoolock | Library::ZoolockMirror | Library::ZoolockAdaptive | Library::ZoolockOwnRuntime => {
                scale(args, library).await
            }
            _ => Ok(json!({"unsupported": "no lock to queue on"})),
        };
    }
    if library == Library::Raw && args.scenario == "b" {
        return Ok(json!({"unsupported": "the raw floor has no lock to contend for"}));
    }
    // Contenders: one per session (b) or all on one session (a, c).
    let shared = match args.scenario.as_str() {
        "a" | "c" => Some(Shared::connect(library, &args.connect).await?),
        _ => None,
    };
    let paths: Vec<String> = match args.scenario.as_str() {
        "a" => vec![args.path.clone()],
        "b" => vec![args.path.clone(); args.sessions],
        "c" => (0..args.locks).map(|i| format!("{}/lock-{i}", args.path)).collect(),
        other => return Err(format!("unknown scenario {other:?}")),
    };
    let mut contenders = Vec::new();
    for path in &paths {
        let contender = Contender::new(library, &args.connect, shared.as_ref(), path).await?;
        contender.cycle().await?; // warm-up
        contenders.push(Arc::new(contender));
    }
    ready_then_go()?;
    let cpu_before = zk_harness::cpu_seconds("/proc/self/stat");
    let queued_before = zoolock::designs_queued();
    let started = Instant::now();
    let until = started + args.seconds;
    let wait_only = args.scenario == "b";
    let tasks: Vec<_> = contenders.iter().map(|c| tokio::spawn(cycles(c.clone(), until, wait_only))).collect();
    let mut samples = Vec::new();
    for task in tasks {
        samples.extend(task.await.map_err(|e| e.to_string())??);
    }
    let seconds = started.elapsed().as_secs_f64();
    let queued = zoolock::designs_queued();
    if let (Some(after), Some(before)) = (zk_harness::cpu_seconds("/proc/self/stat"), cpu_before) {
        eprintln!("client CPU {:.0} µs/op", (after - before) * 1e6 / samples.len().max(1) as f64);
    }
    // zookeeper-client closes its session when the last clone of its client is gone.
    for contender in contenders {
        if let Contender::Zoolock { lock } = &*contender {
            lock.session().close().await;
        }
    }
    Ok(json!({
        "ops": samples.len(),
        "seconds": seconds,
        "samples_us": samples,
        // The design zoolock's acquisitions waited by (the adaptive default's choice).
        "queued_mirror": queued.0 - queued_before.0,
        "queued_listing": queued.1 - queued_before.1,
    }))
}

/// 10,000 waiters queued behind a holder on one session, then served.
async fn scale(args: &Args, library: Library) -> Result<serde_json::Value, String> {
    let session = match library {
        Library::ZoolockOwnRuntime => zoolock_session_on_own_runtime(&args.connect).await?,
        _ => zoolock_session(&args.connect).await?,
    };
    // Watches the queue fill (zoolock has no child watch of its own).
    let observer = zk::Client::connect(&args.connect).await.map_err(|e| e.to_string())?;
    let config = lock_config(library);
    let holder = Lock::new(&session, &args.path, Kind::Mutex, config.clone()).map_err(|e| e.to_string())?;
    holder.acquire(Acquire::default()).await.map_err(|e| e.to_string())?;
    let before = resident_bytes()?;
    let served = Arc::new(Mutex::new(Vec::with_capacity(args.waiters)));
    let mut tasks = Vec::with_capacity(args.waiters);
    for _ in 0..args.waiters {
        let lock = Lock::new(&session, &args.path, Kind::Mutex, config.clone()).map_err(|e| e.to_string())?;
        let served = served.clone();
        tasks.push(tokio::spawn(async move {
            lock.acquire(Acquire::default()).await.map_err(|e| e.to_string())?;
            let token = lock.fencing_token().ok_or("held without a token")?;
            served.lock().unwrap().push(token);
            lock.release().await.map_err(|e| e.to_string())?;
            Ok::<_, String>(())
        }));
    }
    let queued = async {
        loop {
            let (children, watcher) = observer.list_and_watch_children(&args.path).await.map_err(|e| e.to_string())?;
            if children.len() > args.waiters {
                return Ok::<_, String>(());
            }
            watcher.changed().await;
        }
    };
    tokio::time::timeout(Duration::from_secs(120), queued)
        .await
        .map_err(|_| "waiters not queued within 120 s".to_string())??;
    drop(observer);
    let queued = resident_bytes()?;
    ready_then_go()?;
    let started = Instant::now();
    holder.release().await.map_err(|e| e.to_string())?;
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let seconds = started.elapsed().as_secs_f64();
    let served = served.lock().unwrap().clone();
    let in_order = served.windows(2).all(|w| w[0] < w[1]);
    session.close().await;
    Ok(json!({
        "waiters": args.waiters,
        "bytes_per_waiter": queued.saturating_sub(before) / args.waiters as u64,
        "served": served.len(),
        "in_order": in_order,
        "seconds": seconds,
    }))
}

fn resident_bytes() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status").map_err(|e| e.to_string())?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| "no VmRSS in /proc/self/status".into())
}

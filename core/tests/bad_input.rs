//! The catalogue of bad inputs and misuses (tests/bad_inputs.txt), run
//! through the Rust API: each entry ends in its typed error or documented
//! outcome, within its bound, without a panic, and leaves no ephemeral node
//! below its paths. The cases themselves are in bad_input/cases.rs.

#[path = "bad_input/cases.rs"]
mod cases;
mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use zookeeper_client as zk;
use zoolock::{Acquire, Error, Lock, Result, Semaphore, Session, SessionOptions};

const LANGUAGE: &str = "rust";

/// One line of the catalogue.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: String,
    pub expect: String,
    pub within: Duration,
    /// Languages the entry does not apply to, with the reason.
    pub not_for: BTreeMap<String, String>,
}

fn catalogue() -> Vec<Entry> {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/../tests/bad_inputs.txt");
    let text = std::fs::read_to_string(file).expect("read tests/bad_inputs.txt");
    let mut entries = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let fields: Vec<&str> = line.split('|').map(str::trim).collect();
        assert!((4..=5).contains(&fields.len()), "bad_inputs.txt:{}: expected 4 or 5 fields: {line}", n + 1);
        let within =
            fields[2].parse::<f64>().unwrap_or_else(|_| panic!("bad_inputs.txt:{}: bound {:?}", n + 1, fields[2]));
        let mut not_for = BTreeMap::new();
        for skip in fields.get(4).into_iter().flat_map(|f| f.split(';')) {
            let (lang, reason) = skip.split_once(':').unwrap_or_else(|| panic!("bad_inputs.txt:{}: {skip:?}", n + 1));
            assert!(!reason.trim().is_empty(), "bad_inputs.txt:{}: no reason for {lang}", n + 1);
            not_for.insert(lang.trim().to_owned(), reason.trim().to_owned());
        }
        entries.push(Entry {
            id: fields[0].to_owned(),
            expect: fields[1].to_owned(),
            within: Duration::from_secs_f64(within),
            not_for,
        });
    }
    entries
}

/// What a case is handed: its entry, fresh sessions, paths of its own, and
/// `check` for each bad call's result.
pub struct Ctx {
    pub entry: Entry,
    pub connect: String,
    /// Every path of the entry lies below this one.
    pub base: String,
    sessions: Mutex<Vec<Session>>,
    checks: AtomicUsize,
}

/// What a successful call returned, as far as outcomes go.
pub trait Seen {
    fn flag(&self) -> Option<bool> {
        None
    }
}
impl Seen for bool {
    fn flag(&self) -> Option<bool> {
        Some(*self)
    }
}
impl Seen for () {}
impl Seen for Lock {}
impl Seen for Semaphore {}
impl Seen for Session {}
impl Seen for Vec<String> {}
impl Seen for Option<Duration> {}

/// The name of an error's variant, as the catalogue writes it.
fn variant(err: &Error) -> String {
    format!("{err:?}").chars().take_while(|c| c.is_ascii_alphanumeric()).collect()
}

impl Ctx {
    /// A new session on the test server, closed after the entry.
    pub async fn session(&self) -> Session {
        let session = session(&self.connect).await;
        self.sessions.lock().unwrap().push(session.clone());
        session
    }

    /// Connects with `options`; a session that opens is closed after the entry.
    pub async fn connect(&self, options: SessionOptions) -> Result<Session> {
        let connected = Session::connect(options).await;
        if let Ok(session) = &connected {
            self.sessions.lock().unwrap().push(session.clone());
        }
        connected
    }

    pub fn path(&self, name: &str) -> String {
        format!("{}/{name}", self.base)
    }

    /// Checks one call's result against the entry's expected outcome.
    pub fn check<T: Seen>(&self, what: &str, result: Result<T>) {
        self.checks.fetch_add(1, Ordering::Relaxed);
        let expect = self.entry.expect.as_str();
        let got = match &result {
            Err(err) => format!("{err:?}"),
            Ok(seen) => format!("Ok({:?})", seen.flag()),
        };
        let fits = match (expect, &result) {
            (_, Err(err)) => variant(err) == expect,
            ("acquired", Ok(seen)) => seen.flag() == Some(true),
            ("not-acquired" | "timed-out" | "released-nothing", Ok(seen)) => seen.flag() == Some(false),
            ("ok", Ok(_)) => true,
            _ => false,
        };
        assert!(fits, "{what}: expected {expect}, got {got}");
    }

    async fn close_sessions(&self) {
        let sessions = std::mem::take(&mut *self.sessions.lock().unwrap());
        for session in sessions {
            session.close().await;
        }
    }
}

/// Ephemeral nodes below `base`: what an entry must not leave behind.
async fn ephemeral_below(raw: &zk::Client, base: &str) -> Vec<String> {
    let (mut pending, mut found) = (vec![base.to_owned()], Vec::new());
    while let Some(path) = pending.pop() {
        for child in children(raw, &path).await {
            let child = format!("{path}/{child}");
            if let Ok(Some(stat)) = raw.check_stat(&child).await {
                if stat.ephemeral_owner != 0 {
                    found.push(child.clone());
                }
                pending.push(child);
            }
        }
    }
    found
}

#[tokio::test(flavor = "multi_thread")]
async fn every_catalogue_entry_ends_as_documented() {
    let entries = catalogue();
    let cases = cases::all();
    let connect = shared_server();
    let raw = raw(&connect).await;
    let mut failures = Vec::new();
    let known: Vec<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    for (id, _) in &cases {
        if !known.contains(id) {
            failures.push(format!("{id}: implemented here but not in the catalogue"));
        }
    }
    for entry in entries {
        let id = entry.id.clone();
        let case = cases.iter().find(|(case_id, _)| *case_id == id).map(|(_, case)| *case);
        if let Some(reason) = entry.not_for.get(LANGUAGE) {
            println!("n/a  {id}: {reason}");
            if case.is_some() {
                failures.push(format!("{id}: implemented, though the catalogue says it does not apply"));
            }
            continue;
        }
        let Some(case) = case else {
            failures.push(format!("{id}: in the catalogue but not implemented for {LANGUAGE}"));
            continue;
        };
        let ctx = Arc::new(Ctx {
            base: unique_path(&format!("bad-input/{id}")),
            entry,
            connect: connect.clone(),
            sessions: Mutex::default(),
            checks: AtomicUsize::new(0),
        });
        // A server of its own (TLS, SASL) starts before the entry's clock runs.
        tokio::task::spawn_blocking(move || cases::prepare(&id)).await.unwrap();
        let id = ctx.entry.id.clone();
        let started = Instant::now();
        let mut run = tokio::spawn(case(ctx.clone()));
        let outcome = match tokio::time::timeout(ctx.entry.within, &mut run).await {
            Err(_) => {
                run.abort();
                Err(format!("did not return within {:?}", ctx.entry.within))
            }
            Ok(Err(join)) => Err(panic_message(join)),
            Ok(Ok(())) if ctx.checks.load(Ordering::Relaxed) == 0 => Err("checked nothing".to_owned()),
            Ok(Ok(())) => Ok(()),
        };
        let elapsed = started.elapsed();
        let orphans = ephemeral_below(&raw, &ctx.base).await;
        ctx.close_sessions().await;
        match outcome {
            Err(why) => failures.push(format!("{id}: {why}")),
            Ok(()) if !orphans.is_empty() => failures.push(format!("{id}: left {orphans:?}")),
            Ok(()) => println!("ok   {id} ({} in {elapsed:.1?})", ctx.entry.expect),
        }
    }
    assert!(failures.is_empty(), "{} failure(s):\n{}", failures.len(), failures.join("\n"));
}

fn panic_message(join: tokio::task::JoinError) -> String {
    match join.try_into_panic() {
        Ok(payload) => payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panicked".into()),
        Err(join) => join.to_string(),
    }
}

/// Not a bad input of the catalogue, but of Rust alone: a held lock dropped
/// by a thread without a tokio runtime is released, without a panic.
#[test]
fn dropping_a_held_lock_outside_any_runtime_does_not_panic() {
    let session =
        Session::connect_blocking(SessionOptions::new(shared_server()).session_timeout(SESSION_TIMEOUT)).unwrap();
    let path = unique_path("drop-outside");
    let lock = Lock::mutex(&session, &path).unwrap();
    assert!(lock.acquire_blocking(Acquire::default()).unwrap());
    drop(lock);
    let other = Lock::mutex(&session, &path).unwrap();
    assert!(other.acquire_blocking(Acquire::timeout(Duration::from_secs(5))).unwrap(), "the drop released the lock");
    other.release_blocking().unwrap();
}

//! The kazoo peer of the invariant test: `tests/peers/kazoo_peer.py`, run
//! with the worktree's `.venv/bin/python` (made by `scripts/lib/setup-python.sh`),
//! speaking JSON lines. It connects straight to the server, not through the
//! proxies: kazoo's own behaviour under faults is not what is tested, only
//! that zoolock keeps exclusion with it on one path.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::oneshot;
use tokio::time::{timeout, Instant};

use super::Shared;

/// kazoo's `WriteLock`, `ReadLock` and `Semaphore`, by index.
pub const HANDLES: [&str; 3] = ["write", "read", "sem"];
/// The data of the kazoo semaphore's lease node.
pub const SEM_IDENTIFIER: &str = "kazoo.sem";

#[derive(Default)]
struct State {
    /// The node each handle holds, once kazoo said so.
    holds: [Option<String>; 3],
    pending: [bool; 3],
    waiters: HashMap<u64, oneshot::Sender<Value>>,
}

pub struct Peer {
    _child: Child,
    stdin: ChildStdin,
    state: Arc<Mutex<State>>,
    session_id: Option<i64>,
    next_id: u64,
    shared: Arc<Shared>,
}

impl Peer {
    /// Starts the peer, or says why not and returns `None`.
    pub async fn start(
        connect: &str,
        lock_path: &str,
        sem_path: &str,
        max_leases: u32,
        shared: Arc<Shared>,
    ) -> Option<Peer> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        let python = root.join(".venv/bin/python");
        let skip = |why: String| {
            let text = format!("kazoo peer skipped: {why} (scripts/lib/setup-python.sh makes .venv with kazoo)");
            eprintln!("{text}");
            shared.note(text);
            None
        };
        if !python.exists() {
            return skip(format!("no {}", python.display()));
        }
        let spawned = Command::new(&python)
            .arg(root.join("tests/peers/kazoo_peer.py"))
            .args([connect, lock_path, sem_path, &max_leases.to_string()])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => return skip(format!("{}: {e}", python.display())),
        };
        let stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let ready = match timeout(Duration::from_secs(60), lines.next_line()).await {
            Ok(Ok(Some(line))) => serde_json::from_str::<Value>(&line).unwrap_or(Value::Null),
            other => return skip(format!("no answer from the peer: {other:?}")),
        };
        if ready["ready"] != json!(true) {
            return skip(format!("{}", ready["error"]));
        }
        let session_id = ready["session"].as_str().and_then(|s| s.parse().ok());
        shared.note(format!("kazoo peer: session {:#x}", session_id.unwrap_or(0)));
        if let Some(id) = session_id {
            shared.owners.lock().unwrap().insert(id, "kazoo".into());
        }
        let state = Arc::new(Mutex::new(State::default()));
        let (reader_state, reader_shared) = (state.clone(), shared.clone());
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let Ok(reply) = serde_json::from_str::<Value>(&line) else { continue };
                answered(&reader_shared, &reader_state, reply);
            }
        });
        Some(Peer { _child: child, stdin, state, session_id, next_id: 0, shared })
    }

    pub fn session_id(&self) -> Option<i64> {
        self.session_id
    }

    async fn send(&mut self, mut command: Value) -> oneshot::Receiver<Value> {
        self.next_id += 1;
        command["id"] = json!(self.next_id);
        let (tx, rx) = oneshot::channel();
        self.state.lock().unwrap().waiters.insert(self.next_id, tx);
        let line = command.to_string() + "\n";
        self.stdin.write_all(line.as_bytes()).await.expect("the kazoo peer died");
        rx
    }

    pub fn pending(&self, k: usize) -> bool {
        self.state.lock().unwrap().pending[k]
    }

    pub fn holds(&self) -> Vec<(usize, String)> {
        let state = self.state.lock().unwrap();
        state.holds.iter().enumerate().filter_map(|(k, h)| h.clone().map(|n| (k, n))).collect()
    }

    /// Starts an acquire; its answer is handled when it comes.
    pub async fn acquire(&mut self, k: usize, wait: Duration) {
        {
            let mut state = self.state.lock().unwrap();
            if state.pending[k] || state.holds[k].is_some() {
                drop(state);
                return self.shared.note(format!("  kazoo.{}: skipped (pending or held)", HANDLES[k]));
            }
            state.pending[k] = true;
        }
        // Nobody waits on the receiver: `answered` records the outcome.
        drop(self.send(json!({"cmd": "acquire", "handle": k, "timeout": wait.as_secs_f64()})).await);
    }

    pub async fn release(&mut self, k: usize) {
        if self.state.lock().unwrap().holds[k].is_none() {
            return self.shared.note(format!("  kazoo.{}: release skipped, not held", HANDLES[k]));
        }
        let rx = self.send(json!({"cmd": "release", "handle": k})).await;
        match timeout(Duration::from_secs(20), rx).await {
            Ok(Ok(_)) => {}
            _ => self.shared.note(format!("  kazoo.{}: no answer to release within 20 s", HANDLES[k])),
        }
    }

    /// Waits until no acquire of the peer is pending, at most `bound`.
    pub async fn settle(&mut self, bound: Duration) {
        let deadline = Instant::now() + bound;
        let mut tick = self.shared.tick.subscribe();
        while self.state.lock().unwrap().pending.iter().any(|p| *p) {
            if tokio::time::timeout_at(deadline, tick.changed()).await.is_err() {
                self.shared.note("kazoo peer: acquires still pending at quiescence");
                return;
            }
        }
    }
}

fn answered(shared: &Shared, state: &Mutex<State>, reply: Value) {
    let k = reply["handle"].as_u64().unwrap_or(0) as usize;
    let who = format!("kazoo.{}", HANDLES.get(k).unwrap_or(&"?"));
    let waiter = {
        let mut state = state.lock().unwrap();
        match reply["op"].as_str() {
            Some("acquire") => {
                state.pending[k] = false;
                if reply["held"] == json!(true) {
                    state.holds[k] = reply["node"].as_str().map(String::from);
                }
            }
            Some("release") => state.holds[k] = None,
            _ => {}
        }
        reply["id"].as_u64().and_then(|id| state.waiters.remove(&id))
    };
    match reply["op"].as_str() {
        Some("acquire") if reply["held"] == json!(true) => {
            shared.count(format!("acquired kazoo.{}", HANDLES[k]));
            let token = reply["token"].as_i64();
            shared.note(format!("{who}: acquire → held: {}, token {token:x?}", reply["node"]));
            if let (Some(token), true) = (token, k != 2) {
                shared.fence(&who, reply["node"].as_str().unwrap_or_default(), k == 0, token);
            }
        }
        Some("acquire") if reply["ok"] == json!(true) => shared.note(format!("{who}: acquire → false")),
        _ if reply["ok"] != json!(true) => {
            shared.count(format!("kazoo error ({})", reply["op"].as_str().unwrap_or("?")));
            shared.note(format!("{who}: {} → error {}", reply["op"], reply["error"]));
        }
        _ => shared.note(format!("{who}: {} → {}", reply["op"], reply)),
    }
    if let Some(waiter) = waiter {
        let _ = waiter.send(reply);
    }
}

//! The `zkh` binary's JSON-lines protocol, end to end.

mod common;

use common::{connect, PERSISTENT};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};
use zookeeper_client as zk;

struct Zkh {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Zkh {
    fn spawn() -> Zkh {
        let mut child =
            Command::new(env!("CARGO_BIN_EXE_zkh")).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Zkh { child, stdin, stdout }
    }

    fn call(&mut self, req: Value) -> Value {
        writeln!(self.stdin.as_mut().unwrap(), "{req}").unwrap();
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad reply {line:?}: {e}"))
    }

    /// Waits (bounded) for zkh to exit; returns whether it exited cleanly.
    fn wait_exit(&mut self) -> bool {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.success();
            }
            assert!(Instant::now() < deadline, "zkh did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Zkh {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Waits (bounded) until process `pid` is gone (or a zombie nobody reaped yet).
fn pid_gone(pid: u64) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat) if stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')) => return true,
            Ok(_) if Instant::now() > deadline => return false,
            Ok(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

#[test]
fn round_trip() {
    let mut zkh = Zkh::spawn();
    assert_eq!(zkh.call(json!({"cmd": "leader"}))["ok"], false, "nothing started yet");
    let started = zkh.call(json!({"cmd": "start", "servers": 1, "tick_ms": 200, "force_sync": false, "id": 7}));
    assert_eq!(started["ok"], true, "{started}");
    assert_eq!(started["id"], 7);
    assert!(started["connect"].as_str().unwrap().starts_with("127.0.0.1:"));
    assert_ne!(started["connect"], started["direct"]);

    let mntr = zkh.call(json!({"cmd": "mntr", "server": 0}));
    assert_eq!(mntr["mntr"]["zk_server_state"], "standalone", "{mntr}");
    assert_eq!(zkh.call(json!({"cmd": "leader"}))["leader"], 0);
    assert_eq!(zkh.call(json!({"cmd": "sessions"}))["sessions"], json!([]));
    let unknown = zkh.call(json!({"cmd": "expire", "session": "0x1234"}));
    assert_eq!(unknown["ok"], false);
    assert!(unknown["error"].as_str().unwrap().contains("0x1234"), "{unknown}");
    assert_eq!(zkh.call(json!({"cmd": "frobnicate"}))["ok"], false);
    assert_eq!(zkh.call(json!({"cmd": "start"}))["ok"], false, "one ensemble at a time");

    let info = zkh.call(json!({"cmd": "info"}));
    let pid = info["servers"][0]["pid"].as_u64().unwrap();
    assert_eq!(zkh.call(json!({"cmd": "shutdown"}))["ok"], true);
    assert!(zkh.wait_exit());
    assert!(pid_gone(pid), "shutdown stops the server");
}

#[test]
fn closing_stdin_stops_everything() {
    let mut zkh = Zkh::spawn();
    assert_eq!(zkh.call(json!({"cmd": "start"}))["ok"], true);
    let pid = zkh.call(json!({"cmd": "info"}))["servers"][0]["pid"].as_u64().unwrap();
    zkh.stdin = None; // EOF
    assert!(zkh.wait_exit());
    assert!(pid_gone(pid));
}

#[test]
fn servers_die_with_a_killed_zkh() {
    let mut zkh = Zkh::spawn();
    assert_eq!(zkh.call(json!({"cmd": "start"}))["ok"], true);
    let pid = zkh.call(json!({"cmd": "info"}))["servers"][0]["pid"].as_u64().unwrap();
    zkh.child.kill().unwrap(); // SIGKILL: no cleanup code runs, PR_SET_PDEATHSIG does the job
    zkh.child.wait().unwrap();
    assert!(pid_gone(pid), "the JVM outlived zkh");
}

/// A zkh with a standalone server, and a client connected through its proxy.
async fn zkh_and_client() -> (Zkh, zk::Client, String) {
    let mut zkh = Zkh::spawn();
    let started = zkh.call(json!({"cmd": "start"}));
    assert_eq!(started["ok"], true, "{started}");
    let client = connect(started["connect"].as_str().unwrap(), Duration::from_secs(6)).await;
    let session = client.session_id().0.to_string();
    (zkh, client, session)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drop_reply_fault_and_wait_fault() {
    let (mut zkh, client, session) = zkh_and_client().await;
    let bad = zkh.call(json!({"cmd": "drop_reply", "session": session, "op": "crate"}));
    assert!(bad["error"].as_str().unwrap().contains("create2"), "{bad}");
    let armed = zkh.call(json!({"cmd": "drop_reply", "session": session, "op": "create2", "path": "/dropped"}));
    let fault = armed["fault"].as_u64().unwrap_or_else(|| panic!("{armed}"));
    let report = zkh.call(json!({"cmd": "fault", "fault": fault}));
    assert_eq!((report["state"].as_str(), report["kind"].as_str()), (Some("armed"), Some("drop_reply")));

    let lost = client.create("/dropped", b"", &PERSISTENT).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    let report = zkh.call(json!({"cmd": "wait_fault", "fault": fault, "timeout_ms": 10000}));
    assert_eq!(report["state"], "fired", "{report}");
    assert_eq!((report["op"].as_str(), report["path"].as_str()), (Some("create2"), Some("/dropped")));
    assert_eq!(report["reply_err"], 0);
    assert!(client.check_stat("/dropped").await.unwrap().is_some());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disarm() {
    let (mut zkh, client, session) = zkh_and_client().await;
    let armed = zkh.call(json!({"cmd": "drop_reply", "session": session, "op": ["create", "create2"], "nth": 1}));
    let fault = armed["fault"].as_u64().unwrap_or_else(|| panic!("{armed}"));
    let report = zkh.call(json!({"cmd": "disarm", "fault": fault}));
    assert_eq!(report["state"], "disarmed", "{report}");
    client.create("/kept", b"", &PERSISTENT).await.unwrap();
    let waited = zkh.call(json!({"cmd": "wait_fault", "fault": fault, "timeout_ms": 100}));
    assert_eq!(waited["ok"], false, "{waited}");
    assert_eq!(zkh.call(json!({"cmd": "fault", "fault": fault + 1}))["ok"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn land_late() {
    let (mut zkh, client, session) = zkh_and_client().await;
    client.create("/late", b"", &PERSISTENT).await.unwrap();
    let armed = zkh.call(json!({
        "cmd": "land_late", "session": session, "op": "create2", "path": "/late/",
        "land": "before", "land_op": "getChildren", "land_nth": 2,
    }));
    let fault = armed["fault"].as_u64().unwrap_or_else(|| panic!("{armed}"));
    let lost = client.create("/late/x", b"", &PERSISTENT).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    let held = zkh.call(json!({"cmd": "wait_fault", "fault": fault, "until": "held"}));
    assert_eq!((held["state"].as_str(), held["kind"].as_str()), (Some("held"), Some("land_late")), "{held}");
    assert!(client.list_children("/late").await.unwrap().is_empty());
    // Lands just before the second listing.
    assert_eq!(client.list_children("/late").await.unwrap(), ["x"]);
    let fired = zkh.call(json!({"cmd": "wait_fault", "fault": fault}));
    assert_eq!((fired["state"].as_str(), fired["reply_err"].as_i64()), (Some("fired"), Some(0)), "{fired}");
    let bad = zkh.call(json!({"cmd": "land_late", "session": session, "land": "later"}));
    assert_eq!(bad["ok"], false, "{bad}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reset_before_reply() {
    let (mut zkh, client, session) = zkh_and_client().await;
    client.create("/gone", b"", &PERSISTENT).await.unwrap();
    let armed = zkh.call(json!({"cmd": "reset_before_reply", "session": session, "op": "delete"}));
    let fault = armed["fault"].as_u64().unwrap_or_else(|| panic!("{armed}"));
    let lost = client.delete("/gone", None).await;
    assert_eq!(lost.unwrap_err(), zk::Error::ConnectionLoss);
    let fired = zkh.call(json!({"cmd": "wait_fault", "fault": fault}));
    assert_eq!((fired["kind"].as_str(), fired["op"].as_str()), (Some("reset_before_reply"), Some("delete")), "{fired}");
    assert_eq!(fired["reply_err"], 0, "{fired}");
    // The proxy held the reconnect until the server answered the delete.
    assert_eq!(client.check_stat("/gone").await.unwrap(), None);
}

/// `start` with `tls` and `sasl`: a secureClientPort that takes a client
/// certificate signed by the ensemble's CA, and SASL DIGEST-MD5 required.
#[tokio::test(flavor = "multi_thread")]
async fn start_with_tls_and_sasl() {
    let mut zkh = Zkh::spawn();
    let bad = zkh.call(json!({"cmd": "start", "tls": {"client_auth": "yes"}}));
    assert!(bad["error"].as_str().unwrap().contains("tls.client_auth"), "{bad}");
    let started = zkh.call(json!({
        "cmd": "start", "tls": {"client_auth": true},
        "sasl": {"users": {"locker": "pw-1"}, "required": true},
    }));
    assert_eq!(started["ok"], true, "{started}");
    let secure = started["secure"].as_str().unwrap();
    assert!(secure.starts_with("localhost:"), "{started}");
    assert!(started["secure_by_ip"].as_str().unwrap().starts_with("127.0.0.1:"));
    let file = |name: &str| std::fs::read_to_string(started["tls_files"][name].as_str().unwrap()).unwrap();
    let tls = zk::TlsOptions::new()
        .with_pem_ca(&file("ca"))
        .unwrap()
        .with_pem_identity(&file("client_cert"), &file("client_key"))
        .unwrap();
    let sasl = zk::SaslOptions::digest_md5("locker", "pw-1");
    let connector = zk::Client::connector().with_session_timeout(Duration::from_secs(4)).with_tls(tls).with_sasl(sasl);
    let client = tokio::time::timeout(Duration::from_secs(20), connector.secure_connect(secure))
        .await
        .expect("TLS connect timed out")
        .expect("TLS and SASL connect");
    client.create("/zkh-secure", b"", &PERSISTENT).await.unwrap();
    // Without SASL the server closes the session.
    let plain = zk::Client::connector()
        .with_session_timeout(Duration::from_secs(4))
        .connect(started["direct"].as_str().unwrap())
        .await;
    assert!(matches!(plain, Err(zk::Error::AuthFailed)), "{plain:?}");
}

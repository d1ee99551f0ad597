//! The main job end to end: the demo binary, its workers and a real
//! ZooKeeper, with and without faults. Both runs must end verified. These
//! run Rust workers only (the other languages need scripts/demo.sh's builds;
//! scripts/test.sh runs the main job with all of them).

use std::path::PathBuf;
use std::process::Command;

struct Run {
    ok: bool,
    stdout: String,
    stderr: String,
}

impl Run {
    fn text(&self) -> String {
        format!("{}{}", self.stdout, self.stderr)
    }
}

fn demo_in(root: Option<&PathBuf>, args: &[&str]) -> Run {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zoolock-demo"));
    if let Some(root) = root {
        command.env("ZOOLOCK_ROOT", root);
    }
    let output = command.args(args).output().expect("run the demo");
    Run {
        ok: output.status.success(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

fn demo(args: &[&str]) -> Run {
    demo_in(None, args)
}

/// An empty folder of this test's own, to stand for a repository where nothing was built.
fn empty_root(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zoolock-demo-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn workers_share_the_ledger_without_overlap() {
    let run = demo(&["--workers", "3", "--acquisitions", "40", "--languages", "rust", "--path", "/demo-test/plain"]);
    let out = run.text();
    assert!(run.ok && out.contains("VERIFIED") && out.contains("120 acquisitions"), "{out}");
    // The workers' own metrics: one acquisition counted per accepted write.
    assert!(
        out.contains("zoolock metrics, summed over 3 workers' sessions") && out.contains("acquisitions 120  handoffs"),
        "{out}"
    );
}

#[test]
fn the_summary_for_machines_is_one_json_object_with_the_workers_metrics() {
    let run =
        demo(&["--workers", "2", "--acquisitions", "15", "--languages", "rust", "--path", "/demo-test/json", "--json"]);
    assert!(run.ok, "{}", run.text());
    let summary: serde_json::Value =
        serde_json::from_str(run.stdout.trim()).unwrap_or_else(|e| panic!("{e}: {}", run.stdout));
    assert_eq!(summary["mode"], "main");
    assert_eq!(summary["ok"], true);
    assert_eq!(summary["acquisitions"], 30);
    assert_eq!(summary["per_worker"]["rust-1"], 15);
    assert_eq!(summary["overlaps"], 0);
    let metrics = &summary["metrics"];
    assert_eq!(metrics["workers"], serde_json::json!(["rust-0", "rust-1"]));
    assert_eq!(metrics["totals"]["zoolock_acquire_wait_seconds_count"], 30.0);
    assert_eq!(metrics["totals"]["zoolock_hold_seconds_count"], 30.0);
    assert!(metrics["acquire_wait_mean_seconds"].as_f64().unwrap() > 0.0, "{metrics}");
    // The lines for people went to stderr.
    assert!(run.stderr.contains("VERIFIED"), "{}", run.stderr);
}

/// `--tls`: the workers and the observer connect to the server's
/// secureClientPort with client certificates; the run must end verified.
#[test]
fn the_main_job_over_tls() {
    let run =
        demo(&["--tls", "--workers", "2", "--acquisitions", "30", "--languages", "rust", "--path", "/demo-test/tls"]);
    let out = run.text();
    assert!(run.ok && out.contains("VERIFIED") && out.contains("60 acquisitions"), "{out}");
    assert!(out.contains("TLS, client certificates required") && out.contains("ZooKeeper at localhost:"), "{out}");
    // A worker with no TLS options (Curator's) is refused by name, not run in plaintext.
    let run = demo(&["--tls", "--scheme", "curator", "--languages", "rust,curator", "--path", "/demo-test/tls"]);
    assert!(!run.ok && run.stderr.contains("curator workers cannot connect over TLS"), "{}", run.text());
}

#[test]
fn a_short_fault_run_stays_verified() {
    let run = demo(&["--faults", "--duration", "30", "--languages", "rust", "--path", "/demo-test/faults"]);
    let out = run.text();
    assert!(run.ok && out.contains("VERIFIED under faults"), "{out}");
    assert!(out.contains("orphan lock nodes left: 0"), "{out}");
    for kind in ["expire holder", "long partition", "kill server", "kill holder", "delete path", "delete holder node"] {
        assert!(out.contains(&format!("faults injected: {kind}")), "no {kind} in {out}");
    }
    // Every request-level kind was armed, and at least one fired.
    for kind in ["drop create reply", "land create late", "reset delete reply"] {
        assert!(out.contains(&format!("request-level {kind}")), "no {kind} in {out}");
    }
    assert!(
        out.lines().any(|l| l.starts_with("  request-level") && l.contains(" fired ")),
        "no request-level fault fired: {out}"
    );
    // A zoolock holder whose node was deleted was told so.
    assert!(out.contains("deleted: told after"), "no holder told of its node's deletion: {out}");
    // The workers' client logs (zookeeper-client warns of every lost
    // connection) are in the log file the run names, not on the terminal.
    assert!(run.stderr.is_empty(), "the terminal got log lines: {}", run.stderr);
    let log = run
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("client logs: "))
        .unwrap_or_else(|| panic!("no log path in {out}"));
    let logged = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{log}: {e}"));
    assert!(logged.lines().any(|l| l.starts_with("rust-")), "no worker's lines in {log}: {logged}");
}

#[test]
fn a_language_that_is_not_built_fails_the_run_by_name() {
    // Asked for every language (the default) where only Rust can run.
    let root = empty_root("unbuilt");
    let run = demo_in(Some(&root), &["--acquisitions", "1", "--path", "/demo-test/unbuilt"]);
    let out = run.text();
    assert!(!run.ok && !out.contains("VERIFIED"), "{out}");
    for language in ["python", "kazoo", "csharp"] {
        assert!(run.stderr.contains(&format!("{language} workers cannot run")), "{language} not named in {out}");
    }
    assert!(run.stderr.contains("--languages"), "no hint how to leave one out: {out}");
    let _ = std::fs::remove_dir_all(root);
}

#[test]
fn a_worker_that_fails_to_start_fails_the_run_with_its_reason() {
    // A real Python without zoolock: the worker starts, then fails on its import.
    let root = empty_root("no-module");
    let venv = Command::new("python3").args(["-m", "venv", "--without-pip"]).arg(root.join(".venv")).status();
    assert!(venv.is_ok_and(|s| s.success()), "python3 -m venv failed");
    let workers = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("workers");
    std::fs::create_dir_all(root.join("demo")).unwrap();
    std::os::unix::fs::symlink(workers, root.join("demo/workers")).unwrap();
    let run =
        demo_in(Some(&root), &["--languages", "rust,python", "--acquisitions", "1", "--path", "/demo-test/no-module"]);
    let out = run.text();
    assert!(!run.ok && !out.contains("VERIFIED"), "{out}");
    assert!(out.contains("python workers failed to start") && out.contains("No module named 'zoolock'"), "{out}");
    let _ = std::fs::remove_dir_all(root);
}

//! The main job end to end: the demo binary, its workers and a real
//! ZooKeeper, with and without faults. Both runs must end verified.

use std::process::Command;

fn demo(args: &[&str]) -> (bool, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_zoolock-demo")).args(args).output().expect("run the demo");
    let text = String::from_utf8_lossy(&output.stdout).into_owned() + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

#[test]
fn workers_share_the_ledger_without_overlap() {
    let (ok, out) = demo(&["--workers", "3", "--acquisitions", "40", "--path", "/demo-test/plain"]);
    assert!(ok && out.contains("VERIFIED") && out.contains("120 acquisitions"), "{out}");
}

#[test]
fn a_short_fault_run_stays_verified() {
    let (ok, out) = demo(&["--faults", "--duration", "20", "--path", "/demo-test/faults"]);
    assert!(ok && out.contains("VERIFIED under faults"), "{out}");
    assert!(out.contains("orphan lock nodes left: 0"), "{out}");
    for kind in ["expire holder", "long partition", "kill server", "kill holder"] {
        assert!(out.contains(&format!("faults injected: {kind}")), "no {kind} in {out}");
    }
}

//! The CLI's fault run, like the main job's ledger: workers loop on
//! `zoolock exec`, each CMD writing to the fencing resource (the demo's)
//! for a while, some ignoring SIGTERM, some behind a wrapper shell that
//! exits on it; meanwhile the holder's zoolock is SIGKILLed, SIGSTOPped or
//! partitioned from the server, in turn. Stated window: none — CMD's
//! processes are gone before the session can expire — so any overlap of
//! two CMDs, any stale write the resource refused, fails the run.

mod common;

#[path = "../../demo/src/resource.rs"]
#[allow(dead_code)]
mod resource;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::*;
use zoolock::Inspector;

/// Session timeout of the workers: the expiry that hands a faulted hold over.
const SESSION: &str = "4s";
const WORKERS: usize = 4;
const FAULTING: Duration = Duration::from_secs(70);

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    Kill,
    Stop,
    Partition,
}

/// CMD: writes to the resource with its fencing token for `hold_ms`, as
/// `kind` says: plainly, ignoring SIGTERM, or behind a wrapper shell that
/// exits on SIGTERM while its worker ignores it.
fn script(kind: usize, port: u16, worker: usize, hold_ms: u64, pids: &str) -> Vec<String> {
    let writer = format!(
        "echo $$ >> {pids}; exec 3<>/dev/tcp/127.0.0.1/{port}; \
         end=$(( ${{EPOCHREALTIME/./}} + {hold_ms}000 )); \
         while :; do now=${{EPOCHREALTIME/./}}; [ $now -ge $end ] && break; \
         echo \"write w{worker} cli $ZOOLOCK_FENCING_TOKEN 0 ${{now}}000\" >&3; read -r reply <&3 || break; done"
    );
    match kind {
        0 => vec!["bash".into(), "-c".into(), writer],
        1 => vec!["bash".into(), "-c".into(), format!("trap '' TERM; {writer}")],
        _ => vec![
            "bash".into(),
            "-c".into(),
            format!("echo $$ >> {pids}; trap 'exit 0' TERM; bash -c \"$0\" & wait"),
            format!("trap '' TERM; {writer}"),
        ],
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn no_two_commands_overlap_while_zoolock_is_killed_stopped_and_partitioned() {
    let lock = path("faults");
    let dir = scratch("faults");
    let pids = dir.join("pids").display().to_string();
    let ledger = resource::Resource::start().unwrap();
    let port: u16 = ledger.address.rsplit(':').next().unwrap().parse().unwrap();
    let deadline = Instant::now() + FAULTING;
    let runs = Arc::new(AtomicUsize::new(0));
    let mut workers = Vec::new();
    for worker in 0..WORKERS {
        let (lock, pids, runs) = (lock.clone(), pids.clone(), runs.clone());
        workers.push(tokio::spawn(async move {
            let mut codes = BTreeMap::<String, usize>::new();
            let mut round = 0u64;
            while Instant::now() < deadline {
                round += 1;
                let hold_ms = 5000 + (round * 7919 + worker as u64 * 104_729) % 3000;
                let kind = (round as usize + worker) % 3;
                let mut args = vec!["--session-timeout", SESSION, "exec", &lock, "--kill-after", "1s", "--"];
                let command = script(kind, port, worker, hold_ms, &pids);
                args.extend(command.iter().map(String::as_str));
                let status = zoolock(&args).status().await.unwrap();
                runs.fetch_add(1, Ordering::Relaxed);
                let code = status.code().map_or_else(|| format!("{status}"), |c| c.to_string());
                *codes.entry(code).or_default() += 1;
            }
            codes
        }));
    }

    let zk = zk_harness::shared();
    let observer = session().await;
    let mut inspector = Inspector::new(&observer, &lock).unwrap();
    let mut faults = BTreeMap::<Fault, usize>::new();
    let kinds = [Fault::Kill, Fault::Stop, Fault::Partition];
    let mut last_victim = None;
    while Instant::now() < deadline {
        // The next holder, unless the run ends first.
        let holder = tokio::time::timeout_at(deadline.into(), async {
            loop {
                let seen = inspector.next().await.unwrap();
                if let Some(p) = seen.into_iter().find(|p| p.holds && Some(&p.node) != last_victim.as_ref()) {
                    return p;
                }
            }
        });
        let Ok(victim) = holder.await else { break };
        last_victim = Some(victim.node.clone());
        // Into CMD's run, most of the time.
        tokio::time::sleep(Duration::from_millis(100 + (victim.fencing_token as u64 % 5) * 60)).await;
        let fault = kinds[faults.values().sum::<usize>() % kinds.len()];
        let keeper = pid_of(&victim);
        match fault {
            // SAFETY (all three): signals to a zoolock this test started.
            Fault::Kill => unsafe {
                libc::kill(keeper, libc::SIGKILL);
            },
            Fault::Stop => unsafe {
                libc::kill(keeper, libc::SIGSTOP);
            },
            Fault::Partition => zk.partition(victim.session_id).unwrap(),
        }
        *faults.entry(fault).or_default() += 1;
        // The fault ends once the victim's node is gone (its session expired).
        until_participants(&mut inspector, |seen| seen.iter().all(|p| p.node != victim.node)).await;
        match fault {
            Fault::Kill => {}
            Fault::Stop => unsafe {
                libc::kill(keeper, libc::SIGCONT);
            },
            Fault::Partition => zk.heal(victim.session_id).unwrap(),
        }
    }
    let mut codes = BTreeMap::<String, usize>::new();
    for worker in workers {
        for (code, n) in worker.await.unwrap() {
            *codes.entry(code).or_default() += n;
        }
    }

    let ledger = ledger.ledger.lock().unwrap();
    // Each CMD's run, as [first write sent, last write answered], by token.
    let mut runs_by_token = BTreeMap::<i64, (u128, u128)>::new();
    for r in &ledger.records {
        let run = runs_by_token.entry(r.token).or_insert((r.start, r.end));
        run.0 = run.0.min(r.start);
        run.1 = run.1.max(r.end);
    }
    let sections: Vec<_> = runs_by_token.values().collect();
    let overlapping = sections.windows(2).filter(|w| w[1].0 < w[0].1).count();
    let survivors: Vec<i32> = std::fs::read_to_string(&pids)
        .unwrap_or_default()
        .lines()
        .filter_map(|pid| pid.parse().ok())
        // SAFETY: signal 0 only asks whether the process exists.
        .filter(|&pid| unsafe { libc::kill(pid, 0) } == 0)
        .collect();
    eprintln!(
        "CLI fault run: {} zoolock runs (exit codes {codes:?}), {} acquisitions with writes, {} writes; \
         faults {faults:?}; overlapping runs {overlapping}, concurrent writes {}, stale writes refused {}",
        runs.load(Ordering::Relaxed),
        runs_by_token.len(),
        ledger.records.len(),
        ledger.overlaps,
        ledger.refused,
    );
    assert_eq!((overlapping, ledger.overlaps, ledger.refused), (0, 0, 0), "two CMDs ran at once");
    assert!(survivors.is_empty(), "CMD processes outlived their zoolock: {survivors:?}");
    for kind in kinds {
        assert!(faults.get(&kind).copied().unwrap_or(0) >= 1, "no fault of a kind: {faults:?}");
    }
}

//! Runs the checker on one configuration given on the command line, e.g.
//! `explore new 0W2,0W1,1R1 1,0,0,0,1,0` (rules: old, new, mirror, mirror-noresync,
//! mirror-listfirst, mirror-trust, mirror-trust-wake, adaptive-nowake,
//! mirror-handover-first, released, released-unchecked, mirror-released; clients as session+role+acquisitions;
//! faults as conn_loss,late,expire,delete_node,delete_all,reap[,deafen,data_watch,dismiss,delete_all_descending]). PATHS=1 prints the paths.
use std::time::Instant;

use stateright::{Checker, Model};
use zoolock_model::zk::Role;
use zoolock_model::*;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let rules = match args[1].as_str() {
        "old" => Rules::OLD,
        "mirror" => Rules::MIRROR,
        "mirror-noresync" => Rules { mirror_resync: false, ..Rules::MIRROR },
        "mirror-listfirst" => Rules { mirror_watch_first: false, ..Rules::MIRROR },
        "mirror-trust" => Rules { mirror_missing_reads: false, ..Rules::MIRROR },
        "mirror-trust-wake" => Rules { mirror_wake_reads_own: false, ..Rules::MIRROR },
        "adaptive-nowake" => Rules { adaptive_wakes: false, ..Rules::MIRROR },
        "mirror-handover-first" => Rules { hand_over_deletes_last: false, ..Rules::MIRROR },
        "released" => Rules::RELEASED,
        "released-unchecked" => Rules { released_checks_own: false, ..Rules::RELEASED },
        "mirror-released" => Rules { release_marker: true, ..Rules::MIRROR },
        _ => Rules::NEW,
    };
    let clients: Vec<ClientSpec> = args[2]
        .split(',')
        .map(|c| {
            let b = c.as_bytes();
            let role = if b[1] == b'R' { Role::Reader } else { Role::Writer };
            ClientSpec { session: b[0] - b'0', role, acquisitions: b[2] - b'0' }
        })
        .collect();
    let f: Vec<u8> = args[3].split(',').map(|x| x.parse().unwrap()).collect();
    let extra = |i: usize| f.get(i).copied().unwrap_or(0);
    let (deafen, data_watch, dismiss, delete_all_descending) = (extra(6), extra(7), extra(8), extra(9));
    let faults = Faults {
        conn_loss: f[0],
        late: f[1],
        expire: f[2],
        delete_node: f[3],
        delete_all: f[4],
        reap: f[5],
        deafen,
        data_watch,
        dismiss,
        delete_all_descending,
    };
    let sessions = clients.iter().map(|c| c.session).max().unwrap() + 1;
    let model = Recipe { clients, sessions, rules, faults };
    let t = Instant::now();
    let checker = model.clone().checker().threads(2).spawn_bfs().join();
    println!(
        "states {} unique {} depth {} in {:?}",
        checker.state_count(),
        checker.unique_state_count(),
        checker.max_depth(),
        t.elapsed()
    );
    for (name, path) in checker.discoveries() {
        println!("== {name} ({} steps)", path.clone().into_actions().len());
        if std::env::var("PATHS").is_ok() {
            println!("{}", model.explain(&path));
        }
    }
}

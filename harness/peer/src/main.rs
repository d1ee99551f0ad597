//! A Rust process on zoolock's core, driven by the .NET tests to show that a
//! C# holder and a Rust waiter exclude each other on one path.
//!
//! `peer hold --connect C --path P [--name N]`: acquires (waiting as long as
//! needed), prints `held <fencing token>`, waits for a line on stdin,
//! releases, prints `released`, exits.
//!
//! `peer delete --connect C --path NODE`: deletes the node as an operator
//! would (a plain client, no lock), prints `deleted`, exits.
//!
//! Built by `cargo build --release -p zk-harness-peer` (scripts/test-dotnet.sh).

use std::io::{BufRead, Write};

use zoolock::{runtime, Acquire, Kind, Lock, LockConfig, Session, SessionOptions};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let (Some(mode), Some(connect), Some(path)) = (args.get(1).cloned(), flag("--connect"), flag("--path")) else {
        eprintln!("usage: peer hold|delete --connect HOSTS --path PATH [--name N]");
        std::process::exit(2);
    };
    let session = Session::connect_blocking(SessionOptions::new(connect.as_str())).expect("connect");
    let name = flag("--name").unwrap_or_else(|| "rust-peer".into());
    let config = LockConfig { identifier: name.into_bytes(), ..LockConfig::default() };
    let lock = Lock::new(&session, &path, Kind::Mutex, config).expect("lock");
    let mut out = std::io::stdout().lock();
    let mut lines = std::io::stdin().lock().lines();
    match mode.as_str() {
        "hold" => {
            assert!(lock.acquire_blocking(Acquire::default()).expect("acquire"));
            writeln!(out, "held {}", lock.fencing_token().expect("held")).unwrap();
            out.flush().unwrap();
            let _ = lines.next();
            lock.release_blocking().expect("release");
            writeln!(out, "released").unwrap();
        }
        "delete" => {
            let raw = runtime::block_on(async {
                let client = zookeeper_client::Client::connect(&connect).await.expect("raw connect");
                client.delete(&path, None).await
            });
            raw.expect("delete");
            writeln!(out, "deleted").unwrap();
        }
        other => panic!("unknown mode {other}"),
    }
    out.flush().unwrap();
    session.close_blocking();
}

//! Who runs: each contestant is a program speaking bench/contestants/PROTOCOL.md.

use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Contestant {
    RawFloor,
    ZoolockRust,
    /// zoolock from Rust on the mirror whatever the queue (`LockConfig::adaptive`
    /// off); `ZoolockRust` lists (`LockConfig::mirror` off).
    ZoolockMirror,
    /// zoolock from Rust with the default, adaptive design.
    ZoolockAdaptive,
    /// As `ZoolockAdaptive`, with the session on zoolock's own runtime (as
    /// `connect_blocking` places it): every request crosses threads and back.
    ZoolockOwnRuntime,
    ZoolockPython,
    ZoolockCSharp,
    ZookeeperClient,
    Kazoo,
    Curator,
}

pub const ALL: [Contestant; 10] = [
    Contestant::RawFloor,
    Contestant::ZoolockRust,
    Contestant::ZoolockMirror,
    Contestant::ZoolockAdaptive,
    Contestant::ZoolockOwnRuntime,
    Contestant::ZoolockPython,
    Contestant::ZoolockCSharp,
    Contestant::ZookeeperClient,
    Contestant::Kazoo,
    Contestant::Curator,
];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

impl Contestant {
    pub fn name(self) -> &'static str {
        match self {
            Contestant::RawFloor => "raw floor (create+delete)",
            Contestant::ZoolockRust => "zoolock Rust (listing)",
            Contestant::ZoolockMirror => "zoolock Rust (mirror)",
            Contestant::ZoolockAdaptive => "zoolock Rust (adaptive, default)",
            Contestant::ZoolockOwnRuntime => "zoolock Rust (adaptive, on zoolock's runtime)",
            Contestant::ZoolockPython => "zoolock Python",
            Contestant::ZoolockCSharp => "zoolock C#",
            Contestant::ZookeeperClient => "zookeeper-client lock",
            Contestant::Kazoo => "kazoo Lock",
            Contestant::Curator => "Curator InterProcessMutex",
        }
    }

    /// Short name for flags (`--only`) and log files.
    pub fn key(self) -> &'static str {
        match self {
            Contestant::RawFloor => "raw",
            Contestant::ZoolockRust => "rust",
            Contestant::ZoolockMirror => "rust-mirror",
            Contestant::ZoolockAdaptive => "rust-adaptive",
            Contestant::ZoolockOwnRuntime => "rust-own-runtime",
            Contestant::ZoolockPython => "python",
            Contestant::ZoolockCSharp => "csharp",
            Contestant::ZookeeperClient => "zookeeper-client",
            Contestant::Kazoo => "kazoo",
            Contestant::Curator => "curator",
        }
    }

    /// The program, without protocol arguments; `None` when it is not built here.
    pub fn command(self) -> Option<Command> {
        let root = root();
        let own = |library: &str| {
            let mut c = Command::new(std::env::current_exe().expect("own path"));
            c.args(["contestant", library]);
            Some(c)
        };
        let python = |client: &str| {
            let interpreter = root.join(".venv/bin/python");
            exists(&interpreter)?;
            let mut c = Command::new(interpreter);
            c.arg(root.join("bench/contestants/python_contestant.py")).args(["--client", client]);
            Some(c)
        };
        match self {
            Contestant::RawFloor => own("raw"),
            Contestant::ZoolockRust => own("zoolock"),
            Contestant::ZoolockMirror => own("zoolock-mirror"),
            Contestant::ZoolockAdaptive => own("zoolock-adaptive"),
            Contestant::ZoolockOwnRuntime => own("zoolock-own-runtime"),
            Contestant::ZookeeperClient => own("zookeeper-client"),
            Contestant::ZoolockPython => python("zoolock"),
            Contestant::Kazoo => python("kazoo"),
            Contestant::ZoolockCSharp => {
                let dir = root.join("target/bench/dotnet");
                exists(&dir.join("ZooLockBenchContestant.exe"))?;
                let mut c = Command::new("mono");
                c.arg(dir.join("ZooLockBenchContestant.exe")).env("LD_LIBRARY_PATH", &dir);
                Some(c)
            }
            Contestant::Curator => {
                let run = root.join("target/bench/curator/run");
                exists(&run)?;
                Some(Command::new(run))
            }
        }
    }
}

fn exists(path: &Path) -> Option<()> {
    path.exists().then_some(())
}

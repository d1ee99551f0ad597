//! The languages a worker can be written in, and how to start each one.
//! Every worker speaks the same protocol (see `worker.rs`).

use std::path::PathBuf;
use std::process::Command;

use zoolock::Scheme;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    /// zoolock's Python module.
    Python,
    /// kazoo itself, as a peer on the same path (the same Python program).
    Kazoo,
    /// zoolock's .NET library, under Mono.
    CSharp,
    /// Curator's InterProcessMutex, as a peer: it shares a path only with
    /// nodes named Curator's way (`--scheme curator`).
    Curator,
}

pub const ALL: [Language; 5] = [Language::Rust, Language::Python, Language::Kazoo, Language::CSharp, Language::Curator];

/// The repository, where the Python venv and the built C# worker live.
pub fn root() -> PathBuf {
    let root = std::env::var_os("ZOOLOCK_ROOT")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".."));
    root.canonicalize().unwrap_or(root)
}

impl Language {
    pub fn parse(name: &str) -> Option<Language> {
        ALL.into_iter().find(|l| l.name() == name)
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::Kazoo => "kazoo",
            Language::CSharp => "csharp",
            Language::Curator => "curator",
        }
    }

    /// Whether this worker can name its nodes with `scheme`.
    pub fn speaks(self, scheme: Scheme) -> bool {
        match self {
            Language::Rust | Language::Python => true,
            Language::Kazoo | Language::CSharp => scheme == Scheme::Kazoo,
            Language::Curator => scheme == Scheme::Curator,
        }
    }

    /// Whether its workers can connect over TLS (`--tls-ca`, `--tls-cert`,
    /// `--tls-key`): zoolock's in every language, and kazoo; the Curator
    /// worker has no TLS options.
    pub fn tls(self) -> bool {
        !matches!(self, Language::Curator)
    }

    /// The command that starts a worker, without its protocol arguments.
    pub fn command(self) -> Command {
        let root = root();
        match self {
            Language::Rust => {
                let mut c = Command::new(std::env::current_exe().expect("own path"));
                c.arg("worker");
                c
            }
            Language::Python | Language::Kazoo => {
                let mut c = Command::new(root.join(".venv/bin/python"));
                c.arg(root.join("demo/workers/python_worker.py"));
                c.args(["--client", if self == Language::Kazoo { "kazoo" } else { "zoolock" }]);
                c
            }
            Language::CSharp => {
                let dir = root.join("target/demo/dotnet");
                let mut c = Command::new("mono");
                c.arg(dir.join("ZooLockDemoWorker.exe")).env("LD_LIBRARY_PATH", &dir);
                c
            }
            Language::Curator => {
                let mut c = Command::new(root.join("target/demo/curator/run"));
                // Curator's and ZooKeeper's warnings too go to the log file.
                if std::env::var_os("CURATOR_WORKER_LOG").is_none() {
                    c.env("CURATOR_WORKER_LOG", "warn");
                }
                c
            }
        }
    }

    /// Whether this machine has what such a worker needs, or what is
    /// missing. Whether it really runs is seen when it starts
    /// (`Spawned::started`).
    pub fn ready(self) -> Result<(), String> {
        let root = root();
        let needed = match self {
            Language::Rust => return Ok(()),
            Language::Python | Language::Kazoo => root.join(".venv/bin/python"),
            Language::CSharp => root.join("target/demo/dotnet/ZooLockDemoWorker.exe"),
            Language::Curator => root.join("target/demo/curator/run"),
        };
        if needed.exists() {
            Ok(())
        } else {
            Err(format!("{} is missing (scripts/demo.sh builds it)", needed.display()))
        }
    }
}

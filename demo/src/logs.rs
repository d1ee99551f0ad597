//! Where the workers' own log lines go. ZooKeeper clients log every lost
//! connection and retry (zookeeper-client, kazoo, Curator's ZooKeeper client,
//! zoolock's .NET library): useful after a run, noise during one. Each
//! worker's stderr is copied, line by line and prefixed with its name, into
//! one file per run, whose path the run prints at the end; with `--verbose`
//! onto the terminal's stderr as well. The last lines of each worker are kept
//! to say why it failed.

use std::collections::VecDeque;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Lines kept per worker for a failure message.
const TAIL: usize = 5;

pub struct Log {
    pub path: PathBuf,
    file: Mutex<File>,
    verbose: bool,
}

impl Log {
    /// Creates `target/demo/logs/demo-<unix seconds>-<pid>.log` under `root`.
    pub fn create(root: &std::path::Path, verbose: bool) -> std::io::Result<Arc<Log>> {
        let dir = root.join("target/demo/logs");
        std::fs::create_dir_all(&dir)?;
        let secs = crate::resource::now_ns() / 1_000_000_000;
        let path = dir.join(format!("demo-{secs}-{}.log", std::process::id()));
        let file = File::create(&path)?;
        let path = path.canonicalize().unwrap_or(path);
        Ok(Arc::new(Log { path, file: Mutex::new(file), verbose }))
    }

    /// Copies one worker's stream into the log on a thread of its own, until
    /// the stream ends; the thread returns the worker's last lines.
    pub fn follow(self: &Arc<Self>, worker: String, stream: impl Read + Send + 'static) -> JoinHandle<Vec<String>> {
        let log = self.clone();
        std::thread::spawn(move || {
            let mut tail = VecDeque::with_capacity(TAIL);
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                let line = format!("{worker}: {line}");
                if let Ok(mut file) = log.file.lock() {
                    let _ = writeln!(file, "{line}");
                }
                if log.verbose {
                    eprintln!("{line}");
                }
                if tail.len() == TAIL {
                    tail.pop_front();
                }
                tail.push_back(line);
            }
            tail.into()
        })
    }
}

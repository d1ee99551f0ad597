//! The contenders: processes in each language, each on a host of its own,
//! whose lines reach the bed through one channel.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex};

use zk_harness::net::Host;

use crate::history::{mono_now, Ns};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Language {
    Rust,
    Python,
    Csharp,
    Cli,
}

impl Language {
    pub fn parse(name: &str) -> Option<Language> {
        Some(match name {
            "rust" => Language::Rust,
            "python" => Language::Python,
            "csharp" => Language::Csharp,
            "cli" => Language::Cli,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Language::Rust => "rust",
            Language::Python => "python",
            Language::Csharp => "csharp",
            Language::Cli => "cli",
        }
    }
}

/// Where each language's program is.
#[derive(Debug, Clone)]
pub struct Programs {
    pub bed: PathBuf,
    pub python: PathBuf,
    pub contender_py: PathBuf,
    pub cmd_py: PathBuf,
    pub csharp: PathBuf,
    pub zoolock: PathBuf,
}

/// A line a contender said, or its process's end.
pub enum Heard {
    Line {
        contender: usize,
        line: String,
        at: Ns,
    },
    /// A CLI contender's `zoolock exec` ended: its CMD said its last word.
    RunEnded {
        contender: usize,
        code: Option<i32>,
    },
}

/// One contender and its process.
pub struct Contender {
    pub index: usize,
    pub name: String,
    pub language: Language,
    pub host: Host,
    pub connect: String,
    /// The process to stop or kill: the contender, or a CLI contender's current `zoolock exec`.
    pub pid: Arc<Mutex<Option<u32>>>,
    child: Option<Child>,
    /// Forwards the child's lines; ends at its stdout's end.
    reader: Option<std::thread::JoinHandle<()>>,
    stop: Arc<AtomicBool>,
    driver: Option<std::thread::JoinHandle<()>>,
    pub last_heard: Arc<Mutex<Ns>>,
}

/// What every contender is given.
#[derive(Clone)]
pub struct Setting {
    pub paths: Vec<String>,
    pub resource_port: u16,
    pub timeout_ms: u64,
    /// Told to the contenders as `ZOOLOCK_BED_MIRROR` (`no`: they list).
    pub mirror: bool,
    pub programs: Programs,
    pub heard: Sender<Heard>,
}

impl Contender {
    pub fn new(index: usize, language: Language, host: Host, connect: String) -> Contender {
        Contender {
            index,
            name: format!("{}-{index}", language.name()),
            language,
            host,
            connect,
            pid: Arc::default(),
            child: None,
            reader: None,
            stop: Arc::default(),
            driver: None,
            last_heard: Arc::new(Mutex::new(mono_now())),
        }
    }

    fn resource(&self, setting: &Setting) -> String {
        format!("{}:{}", self.host.router, setting.resource_port)
    }

    /// Starts it (again, after a kill); `seed` varies its choices.
    pub fn start(&mut self, setting: &Setting, seed: u64) -> std::io::Result<()> {
        *self.last_heard.lock().unwrap() = mono_now();
        if self.language == Language::Cli {
            return self.start_cli(setting, seed);
        }
        let programs = &setting.programs;
        let mut command = match self.language {
            Language::Rust => {
                let mut command = self.host.command(&programs.bed);
                command.arg("contend");
                command
            }
            Language::Python => {
                let mut command = self.host.command(&programs.python);
                command.arg(&programs.contender_py);
                command
            }
            Language::Csharp => {
                let mut command = self.host.command("mono");
                command.arg(&programs.csharp);
                command
            }
            Language::Cli => unreachable!("started above"),
        };
        command
            .args([&self.connect, &setting.paths.join(","), &self.resource(setting)])
            .arg(setting.timeout_ms.to_string())
            .arg(seed.to_string())
            .arg(&self.name)
            .env("ZOOLOCK_BED_MIRROR", if setting.mirror { "yes" } else { "no" })
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut child = command.spawn()?;
        *self.pid.lock().unwrap() = Some(child.id());
        let stdout = child.stdout.take().expect("piped");
        let (heard, index, last) = (setting.heard.clone(), self.index, self.last_heard.clone());
        self.reader = Some(std::thread::spawn(move || forward(stdout, index, &heard, &last)));
        self.child = Some(child);
        Ok(())
    }

    /// A CLI contender: `zoolock exec` again and again, each CMD a Python
    /// program that writes to the resource and says so.
    fn start_cli(&mut self, setting: &Setting, seed: u64) -> std::io::Result<()> {
        let (setting, host, connect, name) =
            (setting.clone(), self.host.clone(), self.connect.clone(), self.name.clone());
        let (stop, pid, index, last) = (self.stop.clone(), self.pid.clone(), self.index, self.last_heard.clone());
        let resource = self.resource(&setting);
        self.stop.store(false, Ordering::Relaxed);
        self.driver = Some(std::thread::spawn(move || {
            let mut rng = crate::schedule::Rng::new(seed);
            while !stop.load(Ordering::Relaxed) {
                let path = &setting.paths[rng.below(setting.paths.len() as u64) as usize];
                let wait = format!("{}ms", 500 + rng.below(2500));
                let hold_ms = (20 + rng.below(1500)).to_string();
                let mut command = host.command(&setting.programs.zoolock);
                command
                    .env("ZOOLOCK_CONNECT", &connect)
                    .env("ZOOLOCK_CONFIG", "/dev/null")
                    .args(["--session-timeout", &format!("{}ms", setting.timeout_ms), "exec", "-w", &wait, path])
                    .args(["--kill-after", "100ms", "--"])
                    .arg(&setting.programs.python)
                    .arg(&setting.programs.cmd_py)
                    .args([path.as_str(), &resource, &name, &hold_ms])
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::inherit());
                let Ok(mut child) = command.spawn() else { return };
                *pid.lock().unwrap() = Some(child.id());
                let stdout = child.stdout.take().expect("piped");
                forward(stdout, index, &setting.heard, &last);
                let code = child.wait().ok().and_then(|status| status.code());
                *pid.lock().unwrap() = None;
                if code == Some(75) {
                    let _ =
                        setting.heard.send(Heard::Line { contender: index, line: "timeout".into(), at: mono_now() });
                }
                let _ = setting.heard.send(Heard::RunEnded { contender: index, code });
            }
        }));
        Ok(())
    }

    /// Sends `signal` to its process (a CLI contender's current zoolock);
    /// whether there was one.
    pub fn signal(&self, signal: i32) -> bool {
        match *self.pid.lock().unwrap() {
            // SAFETY: kill only sends a signal to a process the bed started.
            Some(pid) => unsafe { libc::kill(pid as i32, signal) == 0 },
            None => false,
        }
    }

    /// Kills it; a Rust, Python or C# contender stays down until started
    /// again. Returns once all it said before dying is in the channel.
    pub fn kill(&mut self) -> bool {
        let killed = self.signal(libc::SIGKILL);
        if let Some(mut child) = self.child.take() {
            let _ = child.wait();
            *self.pid.lock().unwrap() = None;
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        killed
    }

    /// Ends it cleanly: its stdin closes, it releases, closes its session and exits.
    pub fn stop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(mut child) = self.child.take() {
            drop(child.stdin.take());
            let _ = child.wait();
        }
        if let Some(reader) = self.reader.take() {
            let _ = reader.join();
        }
        if let Some(driver) = self.driver.take() {
            let _ = driver.join();
        }
    }

    pub fn is_up(&self) -> bool {
        self.language == Language::Cli || self.child.is_some()
    }

    /// How its process ended, if it ended by itself (a contender ends only when stopped).
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.as_mut()?.try_wait().ok().flatten()
    }
}

fn forward(stdout: impl std::io::Read, contender: usize, heard: &Sender<Heard>, last: &Mutex<Ns>) {
    for line in BufReader::new(stdout).lines() {
        let Ok(line) = line else { return };
        let at = mono_now();
        *last.lock().unwrap() = at;
        if heard.send(Heard::Line { contender, line, at }).is_err() {
            return;
        }
    }
}

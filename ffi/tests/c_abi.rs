//! The C ABI from a C program's side, natively and on Windows under Wine.
//! `tests/c_abi.c` includes `include/zoolock.h` (C99, every warning an
//! error) and checks the boundary's own answers; `tests/c_lock.c` locks on a
//! real ZooKeeper: a try, a timeout and a cancel that leave no node, a
//! hand-over between processes with a growing fencing token, a hold that
//! is suspended while its server restarts and lost when its session
//! expires, `zl_shutdown`. A header that is not valid C, or that declares
//! what the library does not export, fails here too.
//!
//! The Windows run (ignored by a plain `cargo test`) takes the DLL named by
//! `ZOOLOCK_WINDOWS_DLL`: scripts/test-packages.sh runs it (`cargo test
//! --workspace --test c_abi -- --ignored`) on the NuGet package's
//! win-x64 library, with mingw-w64 and Wine from Debian.

use std::fs::{self, File};
use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

use zk_harness::Ensemble;

/// Where the programs are built and how they run.
struct Platform {
    /// The folder the programs are built into (on Windows, with the DLLs beside them).
    dir: PathBuf,
    /// The program's name suffix: ".exe" on Windows.
    suffix: &'static str,
    /// Wine's private prefix, for a Windows run.
    wine: Option<PathBuf>,
    /// Where the native library is, for the dynamic loader.
    lib_dir: PathBuf,
}

const WINE: &str = "/usr/lib/wine/wine64";
const WINESERVER: &str = "/usr/lib/wine/wineserver64";

impl Platform {
    fn native() -> Platform {
        // The test binary is target/<profile>/deps/c_abi-…; the cdylib is in target/<profile>.
        let exe = std::env::current_exe().unwrap();
        let lib_dir = exe.parent().and_then(|deps| deps.parent()).unwrap().to_path_buf();
        // `cargo test` builds the library as an rlib only: build the cdylib (a link, when the rlib is fresh).
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["build", "--quiet", "-p", "zoolock-ffi", "--lib", "--target-dir"]).arg(lib_dir.parent().unwrap());
        if lib_dir.ends_with("release") {
            cargo.arg("--release");
        }
        assert!(cargo.status().expect("cargo").success(), "cargo could not build the cdylib");
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("native");
        std::fs::create_dir_all(&dir).unwrap();
        let platform = Platform { dir, suffix: "", wine: None, lib_dir };
        for program in ["c_abi", "c_lock"] {
            let mut cc = Command::new("cc");
            cc.args(["-std=c99", "-D_GNU_SOURCE", "-D_POSIX_C_SOURCE=200809L"]);
            platform.compile(
                cc,
                program,
                &["-L".as_ref(), platform.lib_dir.as_os_str(), "-lzoolock_ffi".as_ref(), "-lpthread".as_ref()],
            );
        }
        platform
    }

    fn windows() -> Platform {
        let dll = PathBuf::from(
            std::env::var_os("ZOOLOCK_WINDOWS_DLL")
                .expect("ZOOLOCK_WINDOWS_DLL names the zoolock_ffi.dll to test (scripts/test-packages.sh sets it)"),
        );
        assert!(dll.is_file(), "no DLL at {}", dll.display());
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("windows");
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(&dll, dir.join("zoolock_ffi.dll")).unwrap();
        let prefix = dir.join("prefix");
        let platform = Platform { dir: dir.clone(), suffix: ".exe", wine: Some(prefix), lib_dir: dir.clone() };
        let mingw = || Command::new("x86_64-w64-mingw32-gcc");
        let shim = crate_dir().join("tests/wine/bcryptprimitives.c");
        let built = mingw()
            .args(["-shared", "-O2", "-o"])
            .arg(dir.join("bcryptprimitives.dll"))
            .arg(shim)
            .arg("-ladvapi32")
            .status()
            .expect("mingw-w64 (x86_64-w64-mingw32-gcc)");
        assert!(built.success(), "mingw-w64 failed on tests/wine/bcryptprimitives.c");
        for program in ["c_abi", "c_lock"] {
            platform.compile(mingw(), program, &[dir.join("zoolock_ffi.dll").as_os_str()]);
        }
        platform
    }

    fn compile(&self, mut cc: Command, program: &str, link: &[&std::ffi::OsStr]) {
        let built = cc
            .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
            .arg(crate_dir().join("include"))
            .arg(crate_dir().join(format!("tests/{program}.c")))
            .arg("-o")
            .arg(self.program(program))
            .args(link)
            .status()
            .expect("a C compiler");
        assert!(built.success(), "the C compiler failed on tests/{program}.c");
    }

    fn program(&self, name: &str) -> PathBuf {
        self.dir.join(format!("{name}{}", self.suffix))
    }

    fn command(&self, program: &str, args: &[&str]) -> Command {
        let mut command = match &self.wine {
            Some(prefix) => {
                let mut wine = Command::new(WINE);
                wine.arg(self.program(program))
                    .env("WINEPREFIX", prefix)
                    .env("WINEDEBUG", "-all")
                    .env("WINEDLLOVERRIDES", "mscoree,mshtml=");
                wine
            }
            None => {
                let mut native = Command::new(self.program(program));
                native.env("LD_LIBRARY_PATH", &self.lib_dir);
                native
            }
        };
        command.args(args);
        command
    }

    /// Runs a program to its end: its stdout's lines. Its output goes to
    /// files, not pipes: Wine's services, started by the program that first
    /// needs them, inherit its stderr and keep it open while they live, so
    /// a pipe's reader would wait for its end forever.
    fn run(&self, program: &str, args: &[&str]) -> Vec<String> {
        static RUNS: AtomicUsize = AtomicUsize::new(0);
        let n = RUNS.fetch_add(1, Ordering::Relaxed);
        let file = |stream: &str| {
            PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("c_abi-{}-{n}.{stream}", std::process::id()))
        };
        let (out, err) = (file("out"), file("err"));
        let status = self
            .command(program, args)
            .stdout(File::create(&out).unwrap())
            .stderr(File::create(&err).unwrap())
            .status()
            .unwrap();
        let (stdout, stderr) = (fs::read_to_string(&out).unwrap(), fs::read_to_string(&err).unwrap());
        let _ = (fs::remove_file(&out), fs::remove_file(&err));
        assert!(status.success(), "{program} {args:?} failed:\n{stdout}\n{stderr}");
        stdout.lines().map(|line| line.trim_end().to_string()).collect()
    }

    /// Starts a program whose stdout lines arrive as events.
    fn start(&self, program: &str, args: &[&str]) -> Running {
        let mut child = self.command(program, args).stdin(Stdio::piped()).stdout(Stdio::piped()).spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if send.send(line.trim_end().to_string()).is_err() {
                    break;
                }
            }
        });
        Running { stdin: child.stdin.take(), child, lines }
    }
}

impl Drop for Platform {
    fn drop(&mut self) {
        if let Some(prefix) = &self.wine {
            // Wine's server outlives the programs by a few seconds: end it now.
            let _ = Command::new(WINESERVER).arg("-k").env("WINEPREFIX", prefix).status();
        }
    }
}

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A program started by [`Platform::start`].
struct Running {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
}

/// Generous: a Wine process can take seconds to start.
const LINE_WAIT: Duration = Duration::from_secs(60);

impl Running {
    /// The next line, which must start with `prefix`.
    fn expect(&mut self, prefix: &str) -> String {
        match self.lines.recv_timeout(LINE_WAIT) {
            Ok(line) if line.starts_with(prefix) => line,
            Ok(line) => panic!("expected a line starting {prefix:?}, got {line:?}"),
            Err(e) => panic!("expected a line starting {prefix:?}: {e} (exit: {:?})", self.child.try_wait()),
        }
    }

    /// The line `wanted`, after any number of lines in `passing`.
    fn expect_after(&mut self, passing: &[&str], wanted: &str) {
        loop {
            let line = self.expect("");
            if line == wanted {
                return;
            }
            assert!(passing.contains(&line.as_str()), "expected {wanted:?} after {passing:?}, got {line:?}");
        }
    }

    fn say(&mut self, line: &str) {
        writeln!(self.stdin.as_mut().unwrap(), "{line}").unwrap();
    }

    /// Closes stdin (the program's end) and waits for it to exit.
    fn finish(mut self) {
        drop(self.stdin.take());
        self.expect("shutdown 0");
        assert!(self.child.wait().unwrap().success());
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The number after `word` in `line`.
fn number(line: &str, word: &str) -> i64 {
    let mut words = line.split_whitespace();
    words.find(|w| *w == word);
    words.next().and_then(|n| n.trim_end_matches(',').parse().ok()).unwrap_or_else(|| panic!("no {word} N in {line:?}"))
}

fn every_scenario(platform: &Platform) {
    assert_eq!(platform.run("c_abi", &[]), ["ok"]);

    let ensemble = Ensemble::standalone().unwrap();
    let connect = ensemble.connect_string();
    let connect = connect.as_str();

    // One process, two holders: a try and a timeout while held, a cancel, the hand-over.
    let lines = platform.run("c_lock", &[connect, "single", "/c/single"]);
    assert_eq!(lines.len(), 5, "{lines:?}");
    assert_eq!(lines[1], "timeout, queue 1", "the timed-out wait left its node");
    assert_eq!(lines[2], "cancelled, queue 1", "the cancelled wait left its node");
    assert!(number(&lines[3], "held") > number(&lines[0], "held"), "{lines:?}");
    assert_eq!(lines[4], "shutdown 0");

    // Two processes: one holds, the other times out, then gets it when released.
    let mut holder = platform.start("c_lock", &[connect, "hold", "/c/two"]);
    let held = holder.expect("held ");
    assert_eq!(platform.run("c_lock", &[connect, "wait", "/c/two", "300"]), ["timeout, queue 1", "shutdown 0"]);
    let mut waiter = platform.start("c_lock", &[connect, "wait", "/c/two", "60000"]);
    holder.say("release");
    holder.expect("state 0");
    let next = waiter.expect("held ");
    assert!(number(&next, "held") > number(&held, "held"), "{held} then {next}");
    waiter.expect("shutdown 0");
    holder.finish();

    // A hold across a server restart (suspended, held again), then lost when its session expires.
    let mut holder = platform.start("c_lock", &[connect, "hold", "/c/restart"]);
    let held = holder.expect("held ");
    ensemble.restart(0).unwrap();
    holder.expect("state 2");
    holder.expect("state 1");
    assert_eq!(platform.run("c_lock", &[connect, "wait", "/c/restart", "0"]), ["timeout, queue 1", "shutdown 0"]);
    // The harness holds the session's connection back while it ends the session: suspended first.
    ensemble.expire(number(&held, "session")).unwrap();
    holder.expect_after(&["state 2"], "state 3");
    let lines = platform.run("c_lock", &[connect, "wait", "/c/restart", "60000"]);
    assert!(number(&lines[0], "held") > number(&held, "held"), "{held} then {lines:?}");
    holder.finish();
}

#[test]
fn a_c_program_compiles_against_the_header_and_locks() {
    every_scenario(&Platform::native());
}

#[test]
#[ignore = "needs the Windows DLL, mingw-w64 and Wine: scripts/test-packages.sh"]
fn the_windows_dll_does_the_same_under_wine() {
    let platform = Platform::windows();
    every_scenario(&platform);
}

//! `zoolock exec` keeps CMD inside the hold: whatever happens to zoolock's
//! main process, CMD's processes are gone before the session can expire.

mod common;

use std::time::Duration;

use common::*;
use zoolock::Inspector;

/// A killed or stopped zoolock: CMD's processes must be gone while the
/// holder's node still exists (before the session can expire).
async fn cmd_dies_before_the_session_can_expire(name: &str, fault: i32) {
    let lock = path(name);
    let probe = Probe::listen().await;
    let script = format!("{}; while :; do sleep 0.1; done", probe.prelude());
    let mut child = zoolock(&["--session-timeout", "4", "exec", &lock, "--", "bash", "-c", &script]).spawn().unwrap();
    let mut cmd = probe.accept().await;
    let observer = session().await;
    let mut inspector = Inspector::new(&observer, &lock).unwrap();
    let holder = until_participants(&mut inspector, |seen| seen.len() == 1).await.remove(0);
    let keeper = child.id().unwrap() as i32;
    assert_eq!(pid_of(&holder), keeper);
    signal(keeper, fault);
    assert!(cmd.gone_within(Duration::from_secs(30)).await, "CMD outlived zoolock's signal {fault} by 30 s");
    let node = observer.exists(&holder.node).await.unwrap();
    assert!(node.is_some(), "CMD ran until the session expired (its node is gone)");
    if fault == libc::SIGSTOP {
        signal(keeper, libc::SIGCONT);
        assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, EXIT_LOST);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_killed_zoolock_takes_its_command_with_it() {
    cmd_dies_before_the_session_can_expire("exec-sigkill", libc::SIGKILL).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stopped_zoolock_stops_its_command_before_the_session_can_expire() {
    cmd_dies_before_the_session_can_expire("exec-sigstop", libc::SIGSTOP).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_wrapper_that_exits_on_sigterm_does_not_leave_the_group_running() {
    let lock = path("exec-wrapper");
    let probe = Probe::listen().await;
    // The wrapper exits on SIGTERM; the worker it started ignores it (and so do its sleeps).
    let worker = format!("trap '' TERM; {}; while :; do sleep 0.1; done", probe.prelude());
    let wrapper = "trap 'exit 0' TERM; bash -c \"$0\" & wait";
    let mut child =
        zoolock(&["exec", &lock, "--lease", "1", "--kill-after", "1", "--", "bash", "-c", wrapper, &worker])
            .spawn()
            .unwrap();
    let mut cmd = probe.accept().await;
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, EXIT_LOST);
    assert!(cmd.gone_within(Duration::from_secs(10)).await, "the worker still ran 10 s after zoolock exited");
}

/// The pid of `parent`'s child that runs `zoolock __supervise`.
fn supervisor_of(parent: i32) -> i32 {
    let tasks = std::fs::read_dir(format!("/proc/{parent}/task")).unwrap();
    let children: Vec<i32> = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|listed| listed.split_whitespace().filter_map(|pid| pid.parse().ok()).collect::<Vec<_>>())
        .collect();
    let supervises = |pid: &&i32| {
        std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|line| line.windows(11).any(|w| w == b"__supervise"))
    };
    *children.iter().find(supervises).expect("zoolock's supervisor")
}

/// Whether process `pid` runs (exists and is no zombie).
fn runs(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .is_ok_and(|stat| stat.rsplit_once(')').is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')))
}

/// Issue 32: the supervisor alone SIGKILLed. CMD's first process dies with
/// it, but a descendant that left CMD's process group (`setsid`, as a
/// daemon does) must be gone too before zoolock releases the lock.
#[tokio::test(flavor = "multi_thread")]
async fn a_killed_supervisor_leaves_no_descendant_of_the_command_running_past_the_release() {
    let lock = path("exec-supervisor-killed");
    let probe = Probe::listen().await;
    // The daemon says its pid, then lets go of the probe (util-linux's setsid may fork).
    let daemon = "setsid bash -c 'echo $$ >&9; exec 9>&-; while :; do sleep 0.1; done' &";
    let script = format!("{}; {daemon} wait", probe.prelude());
    let mut child = zoolock(&["exec", &lock, "--", "bash", "-c", &script]).spawn().unwrap();
    let mut cmd = probe.accept().await;
    let daemon: i32 = cmd.line().await.trim().parse().unwrap();
    assert!(runs(daemon));
    let keeper = child.id().unwrap() as i32;
    signal(supervisor_of(keeper), libc::SIGKILL);
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, EXIT_LOST);
    // zoolock released on its way out: nothing of CMD may run any more.
    let left = runs(daemon);
    if left {
        signal(daemon, libc::SIGKILL);
    }
    assert!(!left, "CMD's setsid descendant outlived the release");
}

/// A pseudo-terminal zoolock runs in, as a session leader in its
/// foreground (as a shell's job would be); the test types on the master side.
struct Terminal {
    master: std::fs::File,
    seen: std::sync::mpsc::Receiver<u8>,
    text: String,
}

impl Terminal {
    /// Spawns `command` with the terminal as its controlling terminal and stdio.
    fn spawn(command: &mut tokio::process::Command) -> (Terminal, tokio::process::Child) {
        use std::os::fd::FromRawFd;
        let (mut master, mut slave) = (0, 0);
        // SAFETY: openpty writes the two descriptors it opens.
        let opened =
            unsafe { libc::openpty(&mut master, &mut slave, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
        assert_eq!(opened, 0, "openpty");
        // SAFETY: both descriptors were just opened and are ours.
        let (master, slave) = unsafe { (std::fs::File::from_raw_fd(master), std::fs::File::from_raw_fd(slave)) };
        command.stdin(slave.try_clone().unwrap()).stdout(slave.try_clone().unwrap()).stderr(slave.try_clone().unwrap());
        // SAFETY: setsid and ioctl between fork and exec.
        unsafe {
            command.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let child = command.spawn().unwrap();
        drop(slave);
        let reader = master.try_clone().unwrap();
        let (tx, seen) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            use std::io::Read;
            let mut byte = [0u8];
            while let Ok(1) = (&reader).read(&mut byte) {
                if tx.send(byte[0]).is_err() {
                    return;
                }
            }
        });
        (Terminal { master, seen, text: String::new() }, child)
    }

    fn type_in(&mut self, keys: &str) {
        use std::io::Write;
        self.master.write_all(keys.as_bytes()).unwrap();
    }

    /// Waits until the terminal showed `text` (after what was waited for before).
    async fn shows(&mut self, text: &str) {
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while !self.text.contains(text) {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            let byte = tokio::task::block_in_place(|| self.seen.recv_timeout(left));
            match byte {
                Ok(byte) => self.text.push(byte as char),
                Err(_) => panic!("the terminal never showed {text:?}; it showed:\n{}", self.text),
            }
        }
        let end = self.text.find(text).unwrap() + text.len();
        self.text.drain(..end);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_reads_the_terminal_and_ctrl_c_reaches_it() {
    let lock = path("exec-tty");
    let script = "echo ready; read line; echo \"got $line\"; while :; do sleep 0.1; done";
    let (mut terminal, mut child) = Terminal::spawn(&mut zoolock(&["exec", &lock, "--", "sh", "-c", script]));
    terminal.shows("ready").await;
    terminal.type_in("hello\n");
    terminal.shows("got hello").await;
    terminal.type_in("\x03");
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 128 + libc::SIGINT);
}

#[tokio::test(flavor = "multi_thread")]
async fn ctrl_z_stops_the_job_and_fg_gives_the_terminal_back_to_the_command() {
    let lock = path("exec-ctrl-z");
    let script = "echo ready; read a; echo \"got $a\"; read b; echo \"then $b\"";
    // A shell with job control runs zoolock as its foreground job; once the
    // job stops, it waits for a line, then brings the job back with `fg`.
    let shell = "\"$0\" exec \"$1\" -- sh -c \"$2\"; read _; fg; echo \"zoolock exited $?\"";
    let mut command = tokio::process::Command::new("bash");
    command.args(["-m", "-c", shell, env!("CARGO_BIN_EXE_zoolock"), &lock, script]).env("ZOOLOCK_CONNECT", connect());
    let (mut terminal, mut child) = Terminal::spawn(command.kill_on_drop(true));
    terminal.shows("ready").await;
    terminal.type_in("one\n");
    terminal.shows("got one").await;
    terminal.type_in("\x1a");
    terminal.shows("Stopped").await;
    terminal.type_in("\n");
    terminal.type_in("two\n");
    terminal.shows("then two").await;
    terminal.shows("zoolock exited 0").await;
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
}

/// Ctrl-Z held past --grace: the supervisor stops CMD (a stopped zoolock
/// renews nothing), and zoolock, brought back, says that the stop was the
/// cause, not the quorum (issue 36: it blamed the servers).
#[tokio::test(flavor = "multi_thread")]
async fn a_job_stopped_past_its_grace_says_so() {
    let lock = path("exec-ctrl-z-long");
    let script = "echo ready; read a; echo \"got $a\"";
    // The user leaves the job stopped for 3 s, past the 1.7 s grace of a 5 s session.
    let shell =
        "\"$0\" --session-timeout 5s exec \"$1\" -- sh -c \"$2\"; read _; sleep 3; fg; echo \"zoolock exited $?\"";
    let mut command = tokio::process::Command::new("bash");
    command.args(["-m", "-c", shell, env!("CARGO_BIN_EXE_zoolock"), &lock, script]).env("ZOOLOCK_CONNECT", connect());
    let (mut terminal, mut child) = Terminal::spawn(command.kill_on_drop(true));
    terminal.shows("ready").await;
    terminal.type_in("\x1a");
    terminal.shows("Stopped").await;
    terminal.type_in("\n");
    terminal.shows("its job was stopped for").await;
    terminal.shows("zoolock exited 74").await;
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
}

/// A job started in the background and brought to the foreground at once
/// (`&` then `fg`), whose command reads the terminal whenever it comes to
/// it: before `fg` (it stops, and `fg` continues it) or after (zoolock's job
/// has the terminal: zoolock hands it to the command).
#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_brought_to_the_foreground_reads_the_terminal() {
    let lock = path("exec-fg-tty");
    let script = "read a; echo \"got $a\"";
    let shell = "\"$0\" exec \"$1\" -- sh -c \"$2\" & fg; echo \"zoolock exited $?\"";
    let mut command = tokio::process::Command::new("bash");
    command.args(["-m", "-c", shell, env!("CARGO_BIN_EXE_zoolock"), &lock, script]).env("ZOOLOCK_CONNECT", connect());
    let (mut terminal, mut child) = Terminal::spawn(command.kill_on_drop(true));
    terminal.type_in("four\n");
    terminal.shows("got four").await;
    terminal.shows("zoolock exited 0").await;
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
}

/// A job started in the background whose command reads the terminal: the
/// command stops (SIGTTIN), and so does the job, as the shell shows it; `fg`
/// gives the command the terminal and it reads (issue 36: it stayed stopped
/// for good, and the lock held, while the job looked alive).
#[tokio::test(flavor = "multi_thread")]
async fn a_background_job_that_reads_the_terminal_stops_and_fg_brings_it_back() {
    let lock = path("exec-background-tty");
    let script = "read a; echo \"got $a\"";
    // `jobs` is polled: bash's `wait` does not return when a job stops.
    let shell = "\"$0\" exec \"$1\" -- sh -c \"$2\" & \
                 until jobs -l | grep -q Stopped; do sleep 0.05; done; echo \"job stopped\"; \
                 fg; echo \"zoolock exited $?\"";
    let mut command = tokio::process::Command::new("bash");
    command.args(["-m", "-c", shell, env!("CARGO_BIN_EXE_zoolock"), &lock, script]).env("ZOOLOCK_CONNECT", connect());
    let (mut terminal, mut child) = Terminal::spawn(command.kill_on_drop(true));
    terminal.shows("job stopped").await;
    terminal.type_in("three\n");
    terminal.shows("got three").await;
    terminal.shows("zoolock exited 0").await;
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_restart_the_session_survives_does_not_stop_the_command() {
    let zk = tokio::task::spawn_blocking(|| zk_harness::Ensemble::start(1, zk_harness::Options::default()))
        .await
        .unwrap()
        .unwrap();
    let lock = path("exec-restart");
    let probe = Probe::listen().await;
    // Told `finish` on the probe, CMD ends well; SIGTERM would say so first.
    let script = format!("{}; trap 'echo term >&9; exit 143' TERM; read word <&9; echo \"$word\" >&9", probe.prelude());
    let mut child =
        zoolock_on(&zk.connect_string(), &["--session-timeout", "20", "exec", &lock, "--", "bash", "-c", &script])
            .spawn()
            .unwrap();
    let mut cmd = probe.accept().await;
    let zk = tokio::task::spawn_blocking(move || zk.restart(0).map(|()| zk)).await.unwrap().unwrap();
    let _ = cmd.write("finish\n").await;
    assert_eq!(cmd.line().await, "finish\n", "CMD was stopped by the restart");
    assert_eq!(wait_exit(&mut child, Duration::from_secs(60)).await, 0);
    drop(zk);
}

/// Every process below `root`, from /proc's parent links.
fn descendants(root: i32) -> Vec<i32> {
    let parents: Vec<(i32, i32)> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|entry| {
            let pid: i32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            // The parent is the second field after the command's closing parenthesis.
            let ppid = stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, ppid))
        })
        .collect();
    let mut found = vec![root];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parents.iter().filter(|(_, ppid)| *ppid == parent).map(|(pid, _)| *pid));
        i += 1;
    }
    found.remove(0);
    found
}

/// systemd's stop (KillMode=control-group): SIGTERM to every process of
/// the unit at once. CMD's TERM handler runs to its end and zoolock exits
/// with CMD's status (the supervisor died of the TERM: CMD was SIGKILLed
/// in its cleanup, and zoolock exited 74; issue 36).
#[tokio::test(flavor = "multi_thread")]
async fn a_units_stop_lets_cmd_clean_up_and_exits_with_its_status() {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let lock = path("unit-stop");
    let cleaned = scratch("unit-stop").join("cleaned");
    let script = format!(
        "trap 'sleep 0.5; echo done > {}; exit 143' TERM; echo ready; while :; do sleep 0.05; done",
        cleaned.display()
    );
    let mut child =
        zoolock(&["exec", &lock, "-c", &script]).stdout(std::process::Stdio::piped()).process_group(0).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(Duration::from_secs(30), lines.next_line()).await.unwrap().unwrap();
    assert_eq!(ready.as_deref(), Some("ready"));
    let zoolock = child.id().unwrap() as i32;
    for pid in std::iter::once(zoolock).chain(descendants(zoolock)) {
        // SAFETY: kill only sends a signal; a short-lived `sleep` may be gone already.
        unsafe { libc::kill(pid, libc::SIGTERM) };
    }
    assert_eq!(wait_exit(&mut child, Duration::from_secs(30)).await, 143);
    assert_eq!(std::fs::read_to_string(&cleaned).unwrap(), "done\n", "CMD's cleanup ran to its end");
}

/// A CMD that runs longer than --grace right after zoolock connected goes
/// on: the renewals the quorum answers count, though the first proof of a
/// later touch takes about T/2 (CMD was stopped at T/3 after every fresh
/// connect: the CLI contenders of the ensemble bed lost half their holds).
#[tokio::test(flavor = "multi_thread")]
async fn a_cmd_longer_than_the_grace_after_a_fresh_connect_goes_on() {
    let lock = path("fresh-connect");
    // T = 3 s: --grace 1 s; the command runs 2 s, within D (0.9 T) of the connect.
    let args = ["--session-timeout", "3s", "exec", &lock, "-c", "sleep 2"];
    assert_eq!(wait_exit(&mut zoolock(&args).spawn().unwrap(), Duration::from_secs(30)).await, 0);
}

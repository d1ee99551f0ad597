//! Spawns every child process from one dedicated, never-ending thread.
//!
//! Children get `prctl(PR_SET_PDEATHSIG, SIGKILL)`, so they die with the
//! harness process. Linux fires the death signal when the *thread* that forked
//! the child exits, not the process; spawning from a test thread would kill a
//! shared server as soon as that test finished. The spawner thread lives as
//! long as the process (its channel's sender sits in a static).

use std::io;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::mpsc;
use std::sync::OnceLock;

struct Request {
    cmd: Command,
    reply: mpsc::Sender<io::Result<Child>>,
}

fn spawner() -> &'static mpsc::Sender<Request> {
    static TX: OnceLock<mpsc::Sender<Request>> = OnceLock::new();
    TX.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Request>();
        std::thread::Builder::new()
            .name("zkh-spawner".into())
            .spawn(move || {
                for mut req in rx {
                    let _ = req.reply.send(spawn_here(&mut req.cmd));
                }
            })
            .expect("cannot start the zkh-spawner thread");
        tx
    })
}

fn spawn_here(cmd: &mut Command) -> io::Result<Child> {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure only calls async-signal-safe functions.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong, 0, 0, 0) != 0 {
                return Err(io::Error::last_os_error());
            }
            // The parent may have died before prctl took effect.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
    cmd.spawn()
}

/// Spawns `cmd` from the spawner thread; the child is killed if this process dies.
pub(crate) fn spawn(cmd: Command) -> io::Result<Child> {
    let (reply, rx) = mpsc::channel();
    let gone = || io::Error::other("the zkh-spawner thread is gone");
    spawner().send(Request { cmd, reply }).map_err(|_| gone())?;
    rx.recv().map_err(|_| gone())?
}

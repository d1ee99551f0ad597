//! What the CLI's test binaries share: running `zoolock`, waiting on its
//! exit and on the tree, and telling when every process of a CMD is gone.

#![allow(dead_code)]

use std::path::PathBuf;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};
use tokio::time::timeout;
use zoolock::{Inspector, Participant, Session, SessionOptions};

pub const EXIT_BAD_INPUT: i32 = 64;
pub const EXIT_NO_PATH: i32 = 66;
pub const EXIT_CONNECT: i32 = 69;
pub const EXIT_ERROR: i32 = 70;
pub const EXIT_LOST: i32 = 74;
pub const EXIT_TIMEOUT: i32 = 75;
pub const EXIT_NOT_FOUND: i32 = 127;

pub fn connect() -> String {
    zk_harness::shared().connect_string()
}

pub fn path(name: &str) -> String {
    format!("/zoolock-cli-tests{}", zk_harness::unique_path(name))
}

/// `zoolock ARGS` on the shared server, killed if the test drops it.
pub fn zoolock(args: &[&str]) -> Command {
    zoolock_on(&connect(), args)
}

pub fn zoolock_on(connect: &str, args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_zoolock"));
    // No config file of the machine's (~/.config/zoolock, /etc/zoolock) may feed the tests.
    command.env("ZOOLOCK_CONNECT", connect).env("ZOOLOCK_CONFIG", "/dev/null").args(args).kill_on_drop(true);
    command
}

pub async fn exit_code(mut command: Command) -> i32 {
    let status = timeout(Duration::from_secs(60), command.status()).await.expect("zoolock did not exit").unwrap();
    status.code().expect("an exit code")
}

pub async fn wait_exit(child: &mut Child, limit: Duration) -> i32 {
    timeout(limit, child.wait()).await.expect("zoolock did not exit in time").unwrap().code().expect("an exit code")
}

pub fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("zoolock-cli-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn session() -> Session {
    session_on(&connect()).await
}

pub async fn session_on(connect: &str) -> Session {
    Session::connect(SessionOptions::new(connect).session_timeout(Duration::from_secs(10))).await.unwrap()
}

/// Waits, on watches, until the path's participants satisfy `condition`.
pub async fn until_participants(
    inspector: &mut Inspector,
    condition: impl Fn(&[Participant]) -> bool,
) -> Vec<Participant> {
    timeout(Duration::from_secs(60), async {
        loop {
            let seen = inspector.next().await.unwrap();
            if condition(&seen) {
                return seen;
            }
        }
    })
    .await
    .expect("the participants never matched")
}

/// The pid in a default identifier (`host:pid`).
pub fn pid_of(participant: &Participant) -> i32 {
    participant.identifier.rsplit(':').next().unwrap().parse().expect("a host:pid identifier")
}

pub fn signal(pid: i32, signal: i32) {
    // SAFETY: a signal to a process the test started.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0, "kill({pid}, {signal})");
}

/// A loopback socket every process of a CMD keeps open: CMD's script starts
/// with [`Probe::prelude`] (bash opens it as fd 9, and every process it
/// starts inherits it), so EOF on the test's end means all of them exited.
pub struct Probe {
    listener: TcpListener,
    port: u16,
}

/// The test's end of a [`Probe`], once CMD said it is ready.
pub struct Probed {
    reader: BufReader<TcpStream>,
}

impl Probe {
    pub async fn listen() -> Probe {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        Probe { listener, port }
    }

    /// Bash that connects, says `ready`, and keeps fd 9 open.
    pub fn prelude(&self) -> String {
        format!("exec 9<>/dev/tcp/127.0.0.1/{}; echo ready >&9", self.port)
    }

    /// The connection of the CMD that started, once it said `ready`.
    pub async fn accept(&self) -> Probed {
        let (stream, _) =
            timeout(Duration::from_secs(60), self.listener.accept()).await.expect("CMD never started").unwrap();
        let mut reader = BufReader::new(stream);
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        assert_eq!(line, "ready\n");
        Probed { reader }
    }
}

impl Probed {
    /// Waits until every process holding the connection is gone; false after `limit`.
    pub async fn gone_within(&mut self, limit: Duration) -> bool {
        let mut rest = Vec::new();
        timeout(limit, self.reader.read_to_end(&mut rest)).await.is_ok()
    }

    /// Writes to CMD's fd 9.
    pub async fn write(&mut self, text: &str) -> std::io::Result<()> {
        use tokio::io::AsyncWriteExt;
        self.reader.get_mut().write_all(text.as_bytes()).await
    }

    /// A line CMD wrote to fd 9 ("" at EOF).
    pub async fn line(&mut self) -> String {
        let mut line = String::new();
        timeout(Duration::from_secs(60), self.reader.read_line(&mut line)).await.expect("no line from CMD").unwrap();
        line
    }
}

//! Server settings and where Debian's ZooKeeper package lives.

use crate::error::{Error, Result};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Settings for [`crate::Ensemble::start`]. `Options::default()` suits tests:
/// a 200 ms tick (so ~2 s session timeouts work) and `forceSync=yes`.
#[derive(Debug, Clone)]
pub struct Options {
    /// `tickTime` in milliseconds.
    pub tick_ms: u64,
    /// `forceSync`: fsync the transaction log on every write. Benchmarks use `false`.
    pub force_sync: bool,
    /// `initLimit`, in ticks.
    pub init_limit: u32,
    /// `syncLimit`, in ticks.
    pub sync_limit: u32,
    /// `minSessionTimeout` in ms; `None` means 2 ticks.
    pub min_session_timeout_ms: Option<u64>,
    /// `maxSessionTimeout` in ms.
    pub max_session_timeout_ms: u64,
    /// How long to wait for the servers to serve requests.
    pub start_timeout: Duration,
    /// Extra JVM arguments, placed before the fixed ones. By default
    /// `-XX:TieredStopAtLevel=1`: a test's server lives for one test binary
    /// or suite, where C2's compilations cost more CPU than they save (a
    /// third of the CPU of core's invariant test, on 2 cores). A benchmark
    /// measures steady state: it sets its own, without it.
    pub jvm_args: Vec<String>,
    /// TLS on a `secureClientPort` beside the plain `clientPort` (Netty),
    /// with certificates made at start ([`crate::Ensemble::tls_files`]).
    pub tls: Option<Tls>,
    /// SASL DIGEST-MD5 users through a JAAS file.
    pub sasl: Option<Sasl>,
    /// `reconfigEnabled=true` and a digest superuser `super` with password
    /// `test`, the user kazoo's reconfig tests authenticate as.
    pub reconfig: bool,
    /// Each server on a host of its own in this [`Net`](crate::Net), where
    /// partitions between servers are made in the kernel; `None`: every
    /// server on this machine's loopback.
    pub net: Option<std::sync::Arc<crate::Net>>,
}

/// TLS mode: which clients the `secureClientPort` takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tls {
    /// `ssl.clientAuth=need` (only clients with a certificate signed by the
    /// ensemble's CA) or `none`.
    pub client_auth: bool,
    /// The servers present [`TlsFiles::self_signed`](crate::TlsFiles::self_signed),
    /// a self-signed certificate marked CA:TRUE (what `openssl req -x509`
    /// makes), instead of one signed by the ensemble's CA.
    pub self_signed: bool,
}

/// SASL mode: `authProvider.sasl` with a JAAS `Server` section of
/// DigestLoginModule users.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sasl {
    /// `(user, password)` pairs the server accepts.
    pub users: Vec<(String, String)>,
    /// `enforce.auth.enabled=true`, `enforce.auth.schemes=sasl`: sessions
    /// that did not authenticate with SASL are closed.
    pub required: bool,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            tick_ms: 200,
            force_sync: true,
            init_limit: 50,
            sync_limit: 10,
            min_session_timeout_ms: None,
            max_session_timeout_ms: 60_000,
            start_timeout: Duration::from_secs(60),
            jvm_args: vec!["-XX:TieredStopAtLevel=1".to_owned()],
            reconfig: false,
            tls: None,
            sasl: None,
            net: None,
        }
    }
}

impl Options {
    /// Settings for benchmarks: `forceSync=no`, the JIT's every tier.
    pub fn benchmark() -> Options {
        Options { force_sync: false, jvm_args: Vec::new(), ..Options::default() }
    }

    pub(crate) fn min_session_timeout(&self) -> u64 {
        self.min_session_timeout_ms.unwrap_or(2 * self.tick_ms)
    }
}

const JAVA_DIR: &str = "/usr/share/java";
/// The jars the server needs (FACTS.md); `slf4j-simple` is added when present
/// so the server's log reaches its log file.
const JARS: &[&str] = &[
    "zookeeper",
    "zookeeper-jute",
    "netty-buffer",
    "netty-codec",
    "netty-common",
    "netty-handler",
    "netty-resolver",
    "netty-transport",
    "netty-transport-native-epoll",
    "netty-transport-native-unix-common",
    "slf4j-api",
];

/// A usable `java` and the server classpath.
#[derive(Debug, Clone)]
pub(crate) struct Install {
    pub java: PathBuf,
    pub classpath: String,
}

impl Install {
    /// Finds Debian's ZooKeeper and a `java`; installs nothing.
    pub fn find() -> Result<Install> {
        let mut jars = Vec::new();
        for name in JARS {
            let jar = Path::new(JAVA_DIR).join(format!("{name}.jar"));
            if !jar.is_file() {
                return Err(Error::new(format!(
                    "Debian's ZooKeeper server is not installed ({} is missing): run `apt-get install zookeeper`",
                    jar.display()
                )));
            }
            jars.push(jar.display().to_string());
        }
        let simple = Path::new(JAVA_DIR).join("slf4j-simple.jar");
        if simple.is_file() {
            jars.push(simple.display().to_string());
        }
        let java = find_java().ok_or_else(|| {
            Error::new("no `java` on PATH (nor $JAVA_HOME/bin/java): run `apt-get install zookeeper`, which pulls in a Java runtime")
        })?;
        Ok(Install { java, classpath: jars.join(":") })
    }
}

fn find_java() -> Option<PathBuf> {
    if let Some(home) = std::env::var_os("JAVA_HOME") {
        let java = Path::new(&home).join("bin/java");
        if java.is_file() {
            return Some(java);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|dir| dir.join("java")).find(|p| p.is_file())
}

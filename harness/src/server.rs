//! One ZooKeeper server process: its directory, config, ports and JVM.

use crate::error::{Error, Result};
use crate::fourlw;
use crate::net::Host;
use crate::options::{Install, Options};
use crate::spawner;
use std::fs::{self, OpenOptions};
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The loopback ports one server listens on. `quorum`/`election` are unused
/// by a standalone server.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ports {
    pub client: u16,
    /// The `secureClientPort`, used in TLS mode only.
    pub secure: u16,
    pub quorum: u16,
    pub election: u16,
}

/// What a server looks like from outside right now.
#[derive(Debug)]
pub(crate) enum Probe {
    /// The process is gone.
    Exited(ExitStatus),
    /// Not running because the harness stopped it (or never started it).
    Stopped,
    /// Running but `mntr` gets no answer or "not currently serving requests".
    NotServing,
    /// Serving; `zk_server_state` (standalone, leader, follower, observer).
    Serving(String),
}

pub(crate) struct Server {
    /// 0-based; the server's `myid` is `index + 1`.
    pub index: usize,
    pub dir: PathBuf,
    pub ports: Ports,
    /// The host (network namespace) it runs in; `None`: this one's loopback.
    pub host: Option<Host>,
    child: Mutex<Option<Child>>,
}

impl Server {
    pub fn new(index: usize, dir: PathBuf, ports: Ports, host: Option<Host>) -> Server {
        Server { index, dir, ports, host, child: Mutex::new(None) }
    }

    /// The address it listens on: its host's, or 127.0.0.1.
    pub fn addr(&self) -> Ipv4Addr {
        self.host.as_ref().map_or(Ipv4Addr::LOCALHOST, |h| h.addr)
    }

    /// Where clients reach it.
    pub fn client_addr(&self) -> SocketAddr {
        SocketAddr::from((self.addr(), self.ports.client))
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join("zookeeper.log")
    }

    fn cfg_path(&self) -> PathBuf {
        self.dir.join("zoo.cfg")
    }

    /// Writes `zoo.cfg` (and `myid` for an ensemble member). `peers` lists
    /// every member's address and ports; empty for a standalone server.
    pub fn write_config(&self, opts: &Options, peers: &[(Ipv4Addr, Ports)]) -> Result<()> {
        fs::create_dir_all(&self.dir)?;
        let mut cfg = format!(
            "tickTime={}\ninitLimit={}\nsyncLimit={}\ndataDir={}\nclientPort={}\nclientPortAddress={}\n\
             minSessionTimeout={}\nmaxSessionTimeout={}\nforceSync={}\nmaxClientCnxns=0\n\
             4lw.commands.whitelist=*\nadmin.enableServer=false\n",
            opts.tick_ms,
            opts.init_limit,
            opts.sync_limit,
            self.dir.display(),
            self.ports.client,
            self.addr(),
            opts.min_session_timeout(),
            opts.max_session_timeout_ms.max(opts.min_session_timeout()),
            if opts.force_sync { "yes" } else { "no" },
        );
        // The ensemble's certificates and JAAS file live beside the servers' directories.
        let shared = self.dir.parent().unwrap_or(&self.dir);
        if let Some(tls) = opts.tls {
            let store = shared.join(if tls.self_signed { "tls/self-signed-server.pem" } else { "tls/server.pem" });
            let ca = shared.join("tls/ca.pem");
            cfg.push_str(&format!(
                "secureClientPort={}\nsecureClientPortAddress={}\n\
                 serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n\
                 ssl.keyStore.location={}\nssl.keyStore.type=PEM\n\
                 ssl.trustStore.location={}\nssl.trustStore.type=PEM\nssl.clientAuth={}\n",
                self.ports.secure,
                self.addr(),
                store.display(),
                ca.display(),
                if tls.client_auth { "need" } else { "none" },
            ));
        }
        if let Some(sasl) = &opts.sasl {
            cfg.push_str("authProvider.sasl=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n");
            if sasl.required {
                cfg.push_str("enforce.auth.enabled=true\nenforce.auth.schemes=sasl\n");
            }
        }
        if opts.reconfig {
            cfg.push_str("reconfigEnabled=true\n");
        }
        for (i, (addr, p)) in peers.iter().enumerate() {
            cfg.push_str(&format!("server.{}={addr}:{}:{}\n", i + 1, p.quorum, p.election));
        }
        fs::write(self.cfg_path(), cfg)?;
        if !peers.is_empty() {
            fs::write(self.dir.join("myid"), format!("{}\n", self.index + 1))?;
        }
        Ok(())
    }

    /// Starts the JVM; its stdout and stderr go to the log file. Does not wait.
    pub fn spawn(&self, install: &Install, opts: &Options, quorum: bool) -> Result<()> {
        let mut child = self.child.lock().unwrap();
        if let Some(c) = child.as_mut() {
            if c.try_wait()?.is_none() {
                return Err(Error::new(format!("server {} is already running", self.index)));
            }
        }
        let mut log = OpenOptions::new().create(true).append(true).open(self.log_path())?;
        writeln!(log, "----- zk-harness: starting server {} -----", self.index)?;
        let main = if quorum {
            "org.apache.zookeeper.server.quorum.QuorumPeerMain"
        } else {
            "org.apache.zookeeper.server.ZooKeeperServerMain"
        };
        let mut cmd = Command::new(&install.java);
        if opts.sasl.is_some() {
            let jaas = self.dir.with_file_name("jaas.conf");
            cmd.arg(format!("-Djava.security.auth.login.config={}", jaas.display()));
        }
        if opts.reconfig {
            // base64(sha1("super:test")), as kazoo's harness sets it.
            cmd.arg("-Dzookeeper.DigestAuthenticationProvider.superDigest=super:D/InIHSb7yEEbrWz8b9l71RjZJU=");
        }
        cmd.args(&opts.jvm_args)
            .args(["-Xmx256m", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Djava.net.preferIPv4Stack=true"])
            .arg(format!("-Dzookeeper.forceSync={}", if opts.force_sync { "yes" } else { "no" }))
            .arg("-Dorg.slf4j.simpleLogger.showDateTime=true")
            .arg("-cp")
            .arg(&install.classpath)
            .arg(main)
            .arg(self.cfg_path())
            .current_dir(&self.dir)
            .stdin(Stdio::null())
            .stdout(log.try_clone()?)
            .stderr(log);
        if let Some(host) = &self.host {
            host.enter(&mut cmd);
        }
        let c = spawner::spawn(cmd).map_err(|e| Error::new(format!("cannot run {}: {e}", install.java.display())))?;
        tracing::debug!(server = self.index, pid = c.id(), port = self.ports.client, "started ZooKeeper");
        *child = Some(c);
        Ok(())
    }

    pub fn is_running(&self) -> bool {
        match self.child.lock().unwrap().as_mut() {
            Some(c) => matches!(c.try_wait(), Ok(None)),
            None => false,
        }
    }

    pub fn pid(&self) -> Option<u32> {
        let mut child = self.child.lock().unwrap();
        let c = child.as_mut()?;
        matches!(c.try_wait(), Ok(None)).then(|| c.id())
    }

    pub fn probe(&self) -> Probe {
        match self.child.lock().unwrap().as_mut() {
            None => return Probe::Stopped,
            Some(c) => {
                if let Ok(Some(status)) = c.try_wait() {
                    return Probe::Exited(status);
                }
            }
        }
        match fourlw::four_letter(self.client_addr(), "mntr") {
            Ok(text) => match fourlw::parse_mntr(&text).remove("zk_server_state") {
                Some(state) => Probe::Serving(state),
                None => Probe::NotServing,
            },
            Err(_) => Probe::NotServing,
        }
    }

    /// Sends `signal` and waits for the process to exit; after `grace`, SIGKILL.
    /// A server that is not running is left alone.
    pub fn signal_and_wait(&self, signal: libc::c_int, grace: Duration) -> Result<()> {
        let mut guard = self.child.lock().unwrap();
        let Some(child) = guard.as_mut() else {
            return Ok(());
        };
        if child.try_wait()?.is_none() {
            // SAFETY: plain kill(2) on our own, not yet reaped, child.
            unsafe { libc::kill(child.id() as libc::pid_t, signal) };
            let deadline = Instant::now() + grace;
            while child.try_wait()?.is_none() {
                if Instant::now() >= deadline {
                    tracing::warn!(server = self.index, "server ignored signal {signal}; killing it");
                    let _ = child.kill();
                    child.wait()?;
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        *guard = None;
        Ok(())
    }

    /// Whether the log shows a port already taken (another process won the
    /// race for a port the harness picked).
    pub fn log_shows_port_clash(&self) -> bool {
        fs::read_to_string(self.log_path())
            .map(|log| log.contains("Address already in use") || log.contains("BindException"))
            .unwrap_or(false)
    }

    /// The last lines of the log, for error messages.
    pub fn log_tail(&self, lines: usize) -> String {
        let log = fs::read_to_string(self.log_path()).unwrap_or_default();
        let all: Vec<&str> = log.lines().collect();
        all[all.len().saturating_sub(lines)..].join("\n")
    }
}

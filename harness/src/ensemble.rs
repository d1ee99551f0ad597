//! A standalone server or an n-server ensemble, each server behind a proxy.

use crate::error::{Error, Result};
use crate::expire::{self, Outcome};
use crate::fault::{FaultId, FaultKind, FaultReport, FaultState, Landing, Select};
use crate::fourlw;
use crate::options::{Install, Options};
use crate::proxy::Proxy;
use crate::registry::Registry;
use crate::server::Server;
use crate::startup::{start_servers, wait_serving, StartError};
use crate::tempdir;
use crate::tls::{self, TlsFiles};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const STOP_GRACE: Duration = Duration::from_secs(10);

/// Running ZooKeeper servers from Debian's package, each behind a proxy
/// that can partition, reset or expire a single session.
///
/// Servers are numbered from 0 (their `myid` is `i + 1`). Dropping the
/// ensemble kills every server and removes its directories.
pub struct Ensemble {
    opts: Options,
    install: Install,
    root: PathBuf,
    servers: Vec<Server>,
    proxies: Vec<Proxy>,
    registry: Arc<Registry>,
    tls_files: Option<TlsFiles>,
}

impl Ensemble {
    /// Starts a standalone server (`n == 1`) or an `n`-server ensemble and
    /// waits until every server serves requests (within `opts.start_timeout`).
    pub fn start(n: usize, opts: Options) -> Result<Ensemble> {
        if n == 0 {
            return Err(Error::new("an ensemble needs at least one server"));
        }
        let install = Install::find()?;
        let root = tempdir::create()?;
        let tls_files = match write_security_files(&root, &opts) {
            Ok(files) => files,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&root);
                return Err(e);
            }
        };
        let servers = match start_servers(&root, n, &opts, &install) {
            Ok(servers) => servers,
            Err(e) => {
                let _ = std::fs::remove_dir_all(&root);
                return Err(e);
            }
        };
        let registry = Registry::new();
        let mut ensemble = Ensemble { opts, install, root, servers, proxies: Vec::new(), registry, tls_files };
        for (i, s) in ensemble.servers.iter().enumerate() {
            let proxy = Proxy::start(i, s.client_addr(), ensemble.registry.clone())?;
            ensemble.proxies.push(proxy);
        }
        Ok(ensemble)
    }

    /// One standalone server with the default [`Options`].
    pub fn standalone() -> Result<Ensemble> {
        Ensemble::start(1, Options::default())
    }

    /// Number of servers.
    pub fn len(&self) -> usize {
        self.servers.len()
    }

    /// Always false: an ensemble has at least one server.
    pub fn is_empty(&self) -> bool {
        self.servers.is_empty()
    }

    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// `127.0.0.1:port,...` through the proxies: use this for clients under test.
    pub fn connect_string(&self) -> String {
        join_ports(self.proxies.iter().map(|p| p.port))
    }

    /// `127.0.0.1:port,...` straight to the servers (no fault injection; benchmarks).
    pub fn direct_connect_string(&self) -> String {
        self.servers.iter().map(|s| s.client_addr().to_string()).collect::<Vec<_>>().join(",")
    }

    /// Where clients reach server `i` straight (its host's address in a [`crate::Net`]).
    pub fn client_addr(&self, i: usize) -> Result<std::net::SocketAddr> {
        Ok(self.server(i)?.client_addr())
    }

    /// The host server `i` runs in, when the ensemble runs in a [`crate::Net`].
    pub fn host(&self, i: usize) -> Option<&crate::net::Host> {
        self.servers.get(i)?.host.as_ref()
    }

    /// Server `i`'s client port.
    pub fn client_port(&self, i: usize) -> Result<u16> {
        Ok(self.server(i)?.ports.client)
    }

    /// The certificates of a TLS ensemble ([`Options::tls`]).
    pub fn tls_files(&self) -> Option<&TlsFiles> {
        self.tls_files.as_ref()
    }

    /// `host:port,…` of the servers' `secureClientPort`s, straight (no
    /// proxy); `host` is what a client checks the certificate against
    /// ([`crate::tls::SERVER_NAMES`] lists the names it carries). `None`
    /// unless the ensemble runs TLS.
    pub fn secure_connect_string(&self, host: &str) -> Option<String> {
        self.tls_files.as_ref()?;
        let host = |s: &Server| if s.host.is_some() { s.addr().to_string() } else { host.to_owned() };
        Some(self.servers.iter().map(|s| format!("{}:{}", host(s), s.ports.secure)).collect::<Vec<_>>().join(","))
    }

    /// The port of the proxy in front of server `i`.
    pub fn proxy_port(&self, i: usize) -> Result<u16> {
        self.server(i)?;
        Ok(self.proxies[i].port)
    }

    /// Server `i`'s directory: `zoo.cfg`, `myid`, data, and `zookeeper.log`.
    pub fn data_dir(&self, i: usize) -> Result<&Path> {
        Ok(&self.server(i)?.dir)
    }

    /// Server `i`'s log file (the JVM's stdout and stderr).
    pub fn log_path(&self, i: usize) -> Result<PathBuf> {
        Ok(self.server(i)?.log_path())
    }

    pub fn is_running(&self, i: usize) -> bool {
        self.servers.get(i).is_some_and(Server::is_running)
    }

    pub fn pid(&self, i: usize) -> Option<u32> {
        self.servers.get(i)?.pid()
    }

    /// Stops server `i` with SIGTERM and waits for it to exit.
    pub fn stop(&self, i: usize) -> Result<()> {
        self.server(i)?.signal_and_wait(libc::SIGTERM, STOP_GRACE)
    }

    /// Kills server `i` with SIGKILL and waits for it to exit.
    pub fn kill(&self, i: usize) -> Result<()> {
        self.server(i)?.signal_and_wait(libc::SIGKILL, STOP_GRACE)
    }

    /// Starts server `i` again (stopping it first if it runs) with the same
    /// ports and data, and waits until it serves requests.
    pub fn restart(&self, i: usize) -> Result<()> {
        let server = self.server(i)?;
        server.signal_and_wait(libc::SIGTERM, STOP_GRACE)?;
        server.spawn(&self.install, &self.opts, self.is_quorum())?;
        let deadline = Instant::now() + self.opts.start_timeout;
        match wait_serving(&self.servers, &[i], self.is_quorum(), deadline) {
            Ok(()) => Ok(()),
            Err(StartError::Failed(e)) => Err(e),
            Err(StartError::PortClash) => Err(Error::new(format!(
                "server {i} cannot bind its ports again (taken by another process); log: {}",
                server.log_path().display()
            ))),
        }
    }

    /// Waits until every running server serves requests (as leader or
    /// follower in an ensemble), e.g. after a kill, until a new leader is elected.
    pub fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let running: Vec<usize> = (0..self.len()).filter(|&i| self.is_running(i)).collect();
        match wait_serving(&self.servers, &running, self.is_quorum(), Instant::now() + timeout) {
            Ok(()) => Ok(()),
            Err(StartError::Failed(e)) => Err(e),
            Err(StartError::PortClash) => Err(Error::new("a server lost a port to another process")),
        }
    }

    /// The server that takes writes: the leader, or the standalone server;
    /// `None` while there is none (e.g. during an election).
    pub fn leader(&self) -> Option<usize> {
        (0..self.len()).filter(|&i| self.is_running(i)).find(|&i| {
            self.mntr(i).is_ok_and(|m| m.get("zk_server_state").is_some_and(|s| s == "leader" || s == "standalone"))
        })
    }

    /// Server `i`'s `mntr` output (`zk_server_state`, `zk_packets_received`, ...).
    /// An error if the server does not answer or does not serve requests.
    pub fn mntr(&self, i: usize) -> Result<BTreeMap<String, String>> {
        let text = fourlw::four_letter(self.server(i)?.client_addr(), "mntr")
            .map_err(|e| Error::new(format!("mntr on server {i}: {e}")))?;
        let map = fourlw::parse_mntr(&text);
        if map.is_empty() {
            return Err(Error::new(format!("mntr on server {i}: {}", text.trim())));
        }
        Ok(map)
    }

    /// Session ids seen by the proxies (with a recorded password), ascending.
    pub fn sessions(&self) -> Vec<i64> {
        self.registry.sessions()
    }

    /// The servers `session` is connected to through the proxies now
    /// (usually one; none while it reconnects).
    pub fn servers_of(&self, session: i64) -> Result<Vec<usize>> {
        self.registry.proxies_of(session)
    }

    /// Black-holes `session`: none of its bytes are forwarded, either way, on
    /// its current connections or any it opens later through any proxy.
    /// Sockets stay open.
    pub fn partition(&self, session: i64) -> Result<()> {
        self.registry.partition(session)
    }

    /// Undoes [`Ensemble::partition`]; held bytes flow again.
    pub fn heal(&self, session: i64) -> Result<()> {
        self.registry.heal(session)
    }

    /// Resets (TCP RST) the current connections of `session` once; the
    /// client may reconnect. Returns how many connections were reset.
    pub fn drop_connections(&self, session: i64) -> Result<usize> {
        self.registry.reset_session(session)
    }

    /// Black-holes every connection through server `i`'s proxy.
    pub fn partition_all(&self, i: usize) -> Result<()> {
        self.server(i)?;
        self.registry.partition_proxy(i);
        Ok(())
    }

    /// Undoes [`Ensemble::partition_all`].
    pub fn heal_all(&self, i: usize) -> Result<()> {
        self.server(i)?;
        self.registry.heal_proxy(i);
        Ok(())
    }

    /// Lets the server apply the request `target` picks, then drops its
    /// reply and resets the connection: the client sees a connection loss
    /// for a request that took effect. Replies to requests pipelined behind
    /// it are lost with the connection. Fires once.
    pub fn drop_reply(&self, target: Select) -> Result<FaultId> {
        self.registry.arm(FaultKind::DropReply, target, None)
    }

    /// Holds back the request `target` picks and resets the connection
    /// (the client sees a connection loss; the server has not seen the
    /// request). The client reconnects, same session, and sends more; the
    /// held request goes to the server on that new connection at `landing`,
    /// and the proxy swallows its reply (the client never sent it there).
    /// So a create whose reply was lost lands after the client's own later
    /// requests, as when a request forwarded to the leader by the old
    /// follower commits after the client's read on another. The landed
    /// request carries an xid of its own (very negative), not the client's.
    pub fn land_late(&self, target: Select, landing: Landing) -> Result<FaultId> {
        self.registry.arm(FaultKind::LandLate, target, Some(landing))
    }

    /// Forwards the request `target` picks and resets the client's side of
    /// the connection at once: the client sees a connection loss before the
    /// server has answered (or even read) the request. The server's side
    /// stays open until the reply (kept in the report, dropped), and the
    /// session's new connections through any proxy are held until then: the
    /// server closes a session's old connection when it reconnects, dropping
    /// a request it has not read yet. So the request is applied before the
    /// session's next request reaches a server. Fires on the reply; missed
    /// if the server closes the connection first or does not answer in 10 s.
    pub fn reset_before_reply(&self, target: Select) -> Result<FaultId> {
        self.registry.arm(FaultKind::ResetBeforeReply, target, None)
    }

    /// What fault `id` did so far.
    pub fn fault(&self, id: FaultId) -> Result<FaultReport> {
        self.registry.fault(id)
    }

    /// Waits until fault `id` reaches stage `until` or a later one (usually
    /// [`FaultState::Fired`]). An error after `timeout`, or if the fault
    /// was missed or disarmed.
    pub fn wait_fault(&self, id: FaultId, until: FaultState, timeout: Duration) -> Result<FaultReport> {
        self.registry.wait_fault(id, until, timeout)
    }

    /// Disarms fault `id` unless a request matched it already (then it
    /// goes on). Returns where it is.
    pub fn disarm(&self, id: FaultId) -> Result<FaultReport> {
        self.registry.disarm(id)
    }

    /// Ends `session` on the servers: with the password the proxy recorded,
    /// connects straight to a live server as that session and closes it.
    /// The client then sees its session expire when it next talks to a
    /// server. Succeeds if the session had expired already.
    pub fn expire(&self, session: i64) -> Result<()> {
        let passwd = self.registry.password(session)?;
        // The server drops the client's connection when we take its session
        // over, and the client reconnects at once: hold its reconnects back
        // until the session is closed, or it may take the session back first.
        let was_partitioned = self.registry.is_partitioned(session);
        self.registry.partition(session)?;
        let closed = self.close_session(session, &passwd);
        if !was_partitioned {
            self.registry.heal(session)?;
        }
        closed
    }

    fn close_session(&self, session: i64, passwd: &[u8]) -> Result<()> {
        let timeout = self.opts.min_session_timeout().max(2000) as i32;
        let leader = self.leader();
        let order = leader.into_iter().chain((0..self.len()).filter(|&i| self.is_running(i) && Some(i) != leader));
        let mut last = Error::new("no server is running");
        for i in order {
            match expire::close_session(self.servers[i].client_addr(), session, passwd, timeout) {
                Ok(outcome) => {
                    if outcome == Outcome::AlreadyExpired {
                        tracing::debug!("session {session:#x} had expired already");
                    }
                    return Ok(());
                }
                Err(e) => last = Error::new(format!("expiring {session:#x} through server {i}: {e}")),
            }
        }
        Err(last)
    }

    fn is_quorum(&self) -> bool {
        self.servers.len() > 1
    }

    fn server(&self, i: usize) -> Result<&Server> {
        self.servers.get(i).ok_or_else(|| Error::new(format!("no server {i}: the ensemble has {}", self.len())))
    }
}

impl Drop for Ensemble {
    fn drop(&mut self) {
        self.registry.close();
        self.proxies.clear();
        for s in &self.servers {
            let _ = s.signal_and_wait(libc::SIGKILL, STOP_GRACE);
        }
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// The CA and certificates of TLS mode, and the JAAS file of SASL mode, in `root`.
fn write_security_files(root: &Path, opts: &Options) -> Result<Option<TlsFiles>> {
    if let Some(sasl) = &opts.sasl {
        let users: String =
            sasl.users.iter().map(|(user, password)| format!("\n    user_{user}=\"{password}\"")).collect();
        let jaas = format!("Server {{\n    org.apache.zookeeper.server.auth.DigestLoginModule required{users};\n}};\n");
        std::fs::write(root.join("jaas.conf"), jaas)?;
    }
    opts.tls.map(|_| tls::make(&root.join("tls"))).transpose()
}

fn join_ports(ports: impl Iterator<Item = u16>) -> String {
    ports.map(|p| format!("127.0.0.1:{p}")).collect::<Vec<_>>().join(",")
}

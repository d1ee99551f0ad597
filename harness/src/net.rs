//! Hosts in network namespaces of the test's own, linked through the test's
//! namespace, and partitions between them made by netfilter in the kernel.
//!
//! The test process first moves into a network namespace of its own
//! ([`isolated`]: it runs itself again under `unshare --net`), so that
//! nothing it makes touches the machine's network. There, [`Net`] makes
//! *hosts*: each a namespace kept open by a small `sleep` process (which
//! dies with the test, and the namespace with it), linked to the test's
//! namespace by a veth pair:
//!
//! ```text
//!  host i: eth0 10.77.i.2/24 ──veth── zkv<i> 10.77.i.1/24 : the test's namespace (a router)
//! ```
//!
//! Hosts reach each other through the test's namespace, which forwards;
//! the test's own clients reach host i from 10.77.i.1. A cut is a netfilter
//! drop rule there (`nft`, one table of the test's own): packets from one
//! address to another vanish, both ways or one, as on a broken link — no
//! reset, no ICMP. Established TCP connections stay open and retransmit;
//! they flow again on [`Net::heal`].

use crate::error::{Error, Result};
use crate::spawner;
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Write;
use std::net::Ipv4Addr;
use std::os::fd::{AsRawFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};

/// The environment variable that tells a test it runs in its own namespace.
const ISOLATED: &str = "ZKH_ISOLATED_NETNS";

/// Runs the test named `test` (its name as libtest prints it) again, alone,
/// in a new network namespace, and fails if it fails there; true when called
/// in that run, where the test's body goes on. Needs root (`unshare --net`).
///
/// ```no_run
/// #[test]
/// fn cut_off() {
///     if !zk_harness::net::isolated("cut_off") {
///         return; // it ran in its own namespace, and passed
///     }
///     let net = zk_harness::Net::new().unwrap();
///     // …
/// }
/// ```
pub fn isolated(test: &str) -> bool {
    if std::env::var_os(ISOLATED).is_some() {
        return true;
    }
    let exe = std::env::current_exe().expect("the test binary's path");
    let output = Command::new("unshare")
        .arg("--net")
        .arg("--")
        .arg(exe)
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(ISOLATED, "1")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("cannot run unshare (util-linux): {e}"));
    // Shown through the test's own output, which libtest captures.
    print!("{}", String::from_utf8_lossy(&output.stdout));
    eprint!("{}", String::from_utf8_lossy(&output.stderr));
    let ran = String::from_utf8_lossy(&output.stdout).contains("1 passed");
    assert!(output.status.success() && ran, "{test} failed in its own network namespace ({})", output.status);
    false
}

/// One host: a network namespace with one address, linked to the test's.
#[derive(Debug, Clone)]
pub struct Host {
    /// Numbered from 1 in the order made.
    pub index: u8,
    /// Its address.
    pub addr: Ipv4Addr,
    /// The test's address on the link to it (where the test's own clients come from).
    pub router: Ipv4Addr,
    ns: Arc<File>,
}

impl Host {
    /// A command that runs in this host's namespace (and dies with the test).
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>) -> Command {
        let mut command = Command::new(program);
        self.enter(&mut command);
        command
    }

    /// Makes `command` run in this host's namespace.
    pub fn enter(&self, command: &mut Command) {
        let fd: RawFd = self.ns.as_raw_fd();
        let ns = self.ns.clone();
        // SAFETY: setns is async-signal-safe; `ns` keeps the descriptor open
        // until the command is dropped.
        unsafe {
            command.pre_exec(move || {
                let _keep = &ns;
                if libc::setns(fd, libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
}

/// The hosts and cuts of one test (see the module's doc).
pub struct Net {
    hosts: Mutex<Vec<(Host, Child)>>,
    cuts: Mutex<BTreeSet<(Ipv4Addr, Ipv4Addr)>>,
}

impl std::fmt::Debug for Net {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Net").field("cuts", &*self.cuts.lock().unwrap()).finish()
    }
}

const TABLE: &str = "zkbed";

impl Net {
    /// Sets up the test's namespace as the hosts' router. Fails in the
    /// machine's own namespace: call [`isolated`] first.
    pub fn new() -> Result<Net> {
        let own = std::fs::read_link("/proc/self/ns/net")?;
        if std::fs::read_link("/proc/1/ns/net").is_ok_and(|init| init == own) {
            return Err(Error::new(
                "zk_harness::Net runs only in a network namespace of the test's own (net::isolated)",
            ));
        }
        run(Command::new("ip").args(["link", "set", "lo", "up"]))?;
        std::fs::write("/proc/sys/net/ipv4/ip_forward", "1")?;
        let table = format!(
            "table inet {TABLE} {{\n\
               chain forward {{ type filter hook forward priority 0; }}\n\
               chain input {{ type filter hook input priority 0; }}\n\
               chain output {{ type filter hook output priority 0; }}\n\
             }}\n"
        );
        nft(&table)?;
        Ok(Net { hosts: Mutex::new(Vec::new()), cuts: Mutex::new(BTreeSet::new()) })
    }

    /// Makes a new host.
    pub fn add_host(&self) -> Result<Host> {
        let mut hosts = self.hosts.lock().unwrap();
        let index = u8::try_from(hosts.len() + 1).ok().filter(|&i| i < 250).ok_or(Error::new("too many hosts"))?;
        let mut keeper = Command::new("sleep");
        keeper.arg("infinity").stdin(Stdio::null()).stdout(Stdio::null());
        // SAFETY: unshare is async-signal-safe.
        unsafe {
            keeper.pre_exec(|| {
                if libc::unshare(libc::CLONE_NEWNET) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let keeper = spawner::spawn(keeper).map_err(|e| Error::new(format!("cannot start a host's namespace: {e}")))?;
        let pid = keeper.id();
        let ns = Arc::new(File::open(format!("/proc/{pid}/ns/net"))?);
        let host = Host { index, addr: Ipv4Addr::new(10, 77, index, 2), router: Ipv4Addr::new(10, 77, index, 1), ns };
        let link = format!("zkv{index}");
        run(Command::new("ip")
            .args(["link", "add", &link, "type", "veth", "peer", "name", "eth0", "netns"])
            .arg(pid.to_string()))?;
        run(Command::new("ip").args(["addr", "add", &format!("{}/24", host.router), "dev", &link]))?;
        run(Command::new("ip").args(["link", "set", &link, "up"]))?;
        run(host.command("ip").args(["link", "set", "lo", "up"]))?;
        run(host.command("ip").args(["addr", "add", &format!("{}/24", host.addr), "dev", "eth0"]))?;
        run(host.command("ip").args(["link", "set", "eth0", "up"]))?;
        run(host.command("ip").args(["route", "add", "default", "via"]).arg(host.router.to_string()))?;
        hosts.push((host.clone(), keeper));
        Ok(host)
    }

    /// Drops every packet from `from` to `to` (one direction).
    pub fn cut_one_way(&self, from: Ipv4Addr, to: Ipv4Addr) -> Result<()> {
        self.cuts.lock().unwrap().insert((from, to));
        self.apply()
    }

    /// Drops every packet between `a` and `b`, both ways.
    pub fn cut(&self, a: Ipv4Addr, b: Ipv4Addr) -> Result<()> {
        {
            let mut cuts = self.cuts.lock().unwrap();
            cuts.insert((a, b));
            cuts.insert((b, a));
        }
        self.apply()
    }

    /// Cuts each of `side` from each of `other`, both ways.
    pub fn split(&self, side: &[Ipv4Addr], other: &[Ipv4Addr]) -> Result<()> {
        {
            let mut cuts = self.cuts.lock().unwrap();
            for &a in side {
                for &b in other {
                    cuts.insert((a, b));
                    cuts.insert((b, a));
                }
            }
        }
        self.apply()
    }

    /// Lets packets between `a` and `b` through again, both ways.
    pub fn heal(&self, a: Ipv4Addr, b: Ipv4Addr) -> Result<()> {
        {
            let mut cuts = self.cuts.lock().unwrap();
            cuts.remove(&(a, b));
            cuts.remove(&(b, a));
        }
        self.apply()
    }

    /// Removes every cut.
    pub fn heal_all(&self) -> Result<()> {
        self.cuts.lock().unwrap().clear();
        self.apply()
    }

    /// The cuts now, as (from, to) pairs.
    pub fn cuts(&self) -> Vec<(Ipv4Addr, Ipv4Addr)> {
        self.cuts.lock().unwrap().iter().copied().collect()
    }

    /// Replaces the table's rules with the cuts, in one transaction.
    fn apply(&self) -> Result<()> {
        let cuts = self.cuts.lock().unwrap();
        let mut script = String::new();
        for chain in ["forward", "input", "output"] {
            script.push_str(&format!("flush chain inet {TABLE} {chain}\n"));
            for (from, to) in cuts.iter() {
                script.push_str(&format!("add rule inet {TABLE} {chain} ip saddr {from} ip daddr {to} drop\n"));
            }
        }
        nft(&script)
    }
}

impl Drop for Net {
    fn drop(&mut self) {
        for (_, mut keeper) in self.hosts.lock().unwrap().drain(..) {
            let _ = keeper.kill();
            let _ = keeper.wait();
        }
    }
}

fn run(command: &mut Command) -> Result<()> {
    let shown = format!("{command:?}");
    let output = command.stdin(Stdio::null()).output().map_err(|e| Error::new(format!("{shown}: {e}")))?;
    if !output.status.success() {
        return Err(Error::new(format!("{shown}: {}", String::from_utf8_lossy(&output.stderr).trim())));
    }
    Ok(())
}

fn nft(script: &str) -> Result<()> {
    let mut child = Command::new("nft")
        .args(["-f", "-"])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Error::new(format!("cannot run nft (Debian's nftables): {e}")))?;
    child.stdin.take().expect("piped").write_all(script.as_bytes())?;
    let output = child.wait_with_output()?;
    if !output.status.success() {
        return Err(Error::new(format!("nft: {}", String::from_utf8_lossy(&output.stderr).trim())));
    }
    Ok(())
}
